/* RX kernel, stages 2 to 5: the ICRC check of every frame (rx_icrc.c). */
#ifndef RX_ICRC_H
#define RX_ICRC_H

#include "rx_msg.h"

typedef struct {
	uint8_t prev[3];         /* the last bytes of the beat before: an ICRC may begin there */
	uint32_t crc;            /* the frame's CRC up to the beat before the one held */
	uint32_t hd;             /* the beat held (not yet known to be free of ICRC bytes): its CRC */
	uint8_t hm[RNIC_BEAT];   /* ... and its masked bytes */
} rx_icrc_fold_t;

void rx_icrc_fold(rx_icrc_fold_t *st, rnic_rx_macq_t *in, rnic_rx_foldq_t *out);
void rx_icrc_shift(rnic_rx_foldq_t *in, rnic_rx_shiftq_t *out);
void rx_icrc_sum(rnic_rx_shiftq_t *in, rnic_rx_sumq_t *out);
void rx_icrc_check(rnic_rx_sumq_t *in, rnic_rx_beatq_t *out);

#endif
