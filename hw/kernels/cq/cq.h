/* CQ kernel: writes CQEs and EQEs, raises MSI-X. Three stages joined by FIFOs (rnic_fifo.h):
 * cq_take (the input ports), cq_ring (the CQs' contexts and indexes), cq_write (the event queues
 * and the DMA write and MSI-X ports). */
#ifndef RNIC_CQ_H
#define RNIC_CQ_H

#include "cq_ring.h"
#include "cq_take.h"
#include "cq_write.h"

#define RNIC_CQ_STAGES 3u

typedef struct {
	cq_take_t take;
	cq_ring_t ring;
	cq_write_t write;
	rnic_cq_cfgq_t cfgq;
	rnic_cq_dbq_t dbq;
	rnic_cq_cplq_t txq, rxq;
	rnic_cq_wrq_t wrq;
} rnic_cq_state_t;

void rnic_cq_step(rnic_cq_state_t *st, const rnic_cq_in_t *in, rnic_cq_out_t *out);
/* the same clock with the stages called in the order given (a permutation of 0..2): the result
 * must not depend on it (the simulator's check, RNIC_STAGE_ORDER) */
void rnic_cq_step_order(rnic_cq_state_t *st, const rnic_cq_in_t *in, rnic_cq_out_t *out, const uint8_t *order);

#endif
