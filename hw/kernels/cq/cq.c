/* CQ kernel (cq.h): a clock is each stage once, then the FIFOs' edge.
 *
 * Per clock (contract: docs/ARCHITECTURE.md) it takes a completion request from the TX and the
 * RX kernel and a CQ doorbell into FIFOs of their own, and writes CQEs as one 64-byte DMA beat a
 * clock; the OWNER byte is the pass parity (1 on the first pass through the ring), so the host
 * sees a CQE as new when OWNER differs from the previous pass. A completion that would overwrite
 * an unconsumed CQE (consumer index from CQ doorbells) is dropped and counted. An armed CQ gets an
 * EQE in its context's event queue after the CQE and an MSI-X message (vector = CQC.VECTOR) after
 * the EQE's write. A fence waits for what was taken before it. */
#include "cq.h"

static void stage(rnic_cq_state_t *st, const rnic_cq_in_t *in, rnic_cq_out_t *out, uint32_t k)
{
	if (k == 0)
		cq_take(&st->take, in, &st->cfgq, &st->dbq, &st->txq, &st->rxq, out);
	else if (k == 1)
		cq_ring(&st->ring, in, &st->cfgq, &st->dbq, &st->txq, &st->rxq, &st->wrq, out);
	else
		cq_write(&st->write, in, &st->wrq, out);
}

void rnic_cq_step_order(rnic_cq_state_t *st, const rnic_cq_in_t *in, rnic_cq_out_t *out, const uint8_t *order)
{
	uint32_t k;

	for (k = 0; k < RNIC_CQ_STAGES; k++)
		stage(st, in, out, order[k]);
	rnic_cq_cfgq_edge(&st->cfgq, in->rst);
	rnic_cq_dbq_edge(&st->dbq, in->rst);
	rnic_cq_cplq_edge(&st->txq, in->rst);
	rnic_cq_cplq_edge(&st->rxq, in->rst);
	rnic_cq_wrq_edge(&st->wrq, in->rst);
}

void rnic_cq_step(rnic_cq_state_t *st, const rnic_cq_in_t *in, rnic_cq_out_t *out)
{
#pragma HLS PIPELINE II = 1
	static const uint8_t order[RNIC_CQ_STAGES] = {0, 1, 2};

	rnic_cq_step_order(st, in, out, order);
}
