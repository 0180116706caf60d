/* TX kernel, its last stage: the ICRC into each frame, and the frame to the MAC (tx_egress.c). */
#ifndef TX_EGRESS_H
#define TX_EGRESS_H

#include "rnic_icrc.h"

typedef struct {
	/* a beat the frame's ICRC begins in (hold), kept until its last beat brings the ICRC */
	rnic_ebeat_t wait;
	uint8_t waiting;
	/* the frame's last beat, its ICRC in, to go out after the beat presented */
	rnic_ebeat_t next;
	uint8_t pend;
	/* the beat presented to the MAC, held until it is taken */
	uint8_t valid, last;
	uint8_t data[RNIC_BEAT];
	uint64_t keep;
} tx_icrc_put_t;

void tx_icrc_put(tx_icrc_put_t *st, const rnic_tx_in_t *in, rnic_icrc_sumq_t *sums);
/* its beat on the kernel's MAC port (wiring, after the clock's stages) */
void tx_icrc_put_out(const tx_icrc_put_t *st, rnic_tx_out_t *out);

#endif
