/* TX kernel, the read channel (tx_rdport.c): the stage that owns the kernel's DMA read port. */
#ifndef TX_RDPORT_H
#define TX_RDPORT_H

#include <assert.h>
#include "tx_msg.h"

#define TX_RD_FIFO 64     /* reads in flight (and zeros and fences waiting behind them) */

typedef struct {
	/* the reads on their way, in request order (their data returns so): what each brings back
	 * and its length; [head, tail) */
	uint8_t kind[TX_RD_FIFO];
	uint16_t len[TX_RD_FIFO];
	uint8_t head, tail; /* mod 256: a multiple of TX_RD_FIFO, more than it */
	uint16_t left;      /* bytes of the read at the head not taken yet (0: none begun) */
	uint8_t cur;        /* ... its kind */
	/* the port's registers: the request presented, and whether a beat may come next clock */
	uint8_t req_valid, ready;
	uint64_t req_addr;
	uint16_t req_len;
} tx_rdport_t;

void tx_rdport(tx_rdport_t *st, const rnic_tx_in_t *in, rnic_tx_rdreqq_t *reqs, rnic_tx_wqreqq_t *wqs, rnic_tx_rdbeatq_t *beats,
	       rnic_tx_payq_t *pay, rnic_tx_crdq_t *crds);
/* its request and ready on the kernel's outputs (wiring, after the clock's stages) */
void tx_rdport_out(const tx_rdport_t *st, rnic_tx_out_t *out);

#endif
