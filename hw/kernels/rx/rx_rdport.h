/* RX kernel, the read channel (rx_rdport.c): the stage that owns the kernel's DMA read port. */
#ifndef RX_RDPORT_H
#define RX_RDPORT_H

#include "rx_msg.h"

#define RX_RD_FIFO 64     /* DMA reads in flight (receive WQEs fetched ahead, contexts, cache lines,
                          * an atomic operand): 600 ns of receive WQEs for 64-byte SENDs at line
                          * rate */

typedef struct {
	/* the reads on their way, in request order (their data returns so): what each brings back
	 * and for which QP; [head, tail) */
	uint8_t kind[RX_RD_FIFO];
	uint16_t qpn[RX_RD_FIFO];
	uint8_t head, tail; /* mod 256: a multiple of RX_RD_FIFO, more than it */
	uint8_t turn;       /* when both wait, rx_core's read goes first (else rx_ctx's) */
	/* the port's registers: the request presented, and whether a beat may come next clock */
	uint8_t req_valid, ready;
	uint64_t req_addr;
	uint16_t req_len;
} rx_rdport_t;

void rx_rdport(rx_rdport_t *st, const rnic_rx_in_t *in, rnic_rx_rdreqq_t *reqs, rnic_rx_ctxreqq_t *ctxreqs,
	       rnic_rx_rdbeatq_t *beats, rnic_rx_ctxrspq_t *ctxrsps);
/* its request and ready on the kernel's outputs (wiring, after the clock's stages) */
void rx_rdport_out(const rx_rdport_t *st, rnic_rx_out_t *out);

#endif
