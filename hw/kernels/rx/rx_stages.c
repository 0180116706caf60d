/* RX kernel (rx.h): a clock is each stage once, then the FIFOs' edge. */
#include "rx.h"

static void stage(rnic_rx_state_t *st, const rnic_rx_in_t *in, rnic_rx_out_t *out, uint32_t k)
{
	switch (k) {
	case 0: rx_mac(&st->mac, in, &st->macq, &st->hdrq); break;
	case 1: rnic_icrc_fold(&st->fold, &st->macq, &st->foldq); break;
	case 2: rnic_icrc_shift(&st->foldq, &st->shiftq); break;
	case 3: rnic_icrc_sum(&st->shiftq, &st->sumq); break;
	case 4: rx_icrc_check(&st->sumq, &st->beatq); break;
	case 5: rx_hdr(&st->hdr, in, &st->hdrq, &st->factq); break;
	case 6: rx_classify(&st->classify, &st->factq, &st->headq); break;
	case 7: rx_judge(&st->headq, &st->descq); break;
	case 8: rx_store(&st->store, in, &st->beatq, &st->descq, &st->arriveq, &st->cmdq, &st->doneq); break;
	case 9: rx_ctx(&st->ctx, in, &st->arriveq, &st->frameq, &st->passq, &st->hintq, &st->ctxreqq, &st->ctxrspq); break;
	case 10: rx_rdq(&st->rdq, in, &st->frameq, &st->judgedq, &st->rdntcq); break;
	case 11: rx_rdport(&st->rdport, in, &st->rdreqq, &st->ctxreqq, &st->rdbeatq, &st->ctxrspq); break;
	default:
		rx_core(&st->core, in, &st->passq, &st->judgedq, &st->hintq, &st->rdreqq, &st->rdbeatq, &st->cmdq, &st->doneq,
			&st->rdntcq, out);
		break;
	}
}

void rnic_rx_step_order(rnic_rx_state_t *st, const rnic_rx_in_t *in, rnic_rx_out_t *out, const uint8_t *order)
{
	uint32_t k;

	for (k = 0; k < RNIC_RX_STAGES; k++)
		stage(st, in, out, order[k]);
	rnic_icrc_inq_edge(&st->macq, in->rst);
	rnic_icrc_foldq_edge(&st->foldq, in->rst);
	rnic_icrc_shiftq_edge(&st->shiftq, in->rst);
	rnic_icrc_sumq_edge(&st->sumq, in->rst);
	rnic_rx_beatq_edge(&st->beatq, in->rst);
	rnic_rx_hdrq_edge(&st->hdrq, in->rst);
	rnic_rx_factq_edge(&st->factq, in->rst);
	rnic_rx_headq_edge(&st->headq, in->rst);
	rnic_rx_descq_edge(&st->descq, in->rst);
	rnic_rx_arriveq_edge(&st->arriveq, in->rst);
	rnic_rx_cmdq_edge(&st->cmdq, in->rst);
	rnic_rx_doneq_edge(&st->doneq, in->rst);
	rnic_rx_frameq_edge(&st->frameq, in->rst);
	rnic_rx_hintq_edge(&st->hintq, in->rst);
	rnic_rx_ctxreqq_edge(&st->ctxreqq, in->rst);
	rnic_rx_ctxrspq_edge(&st->ctxrspq, in->rst);
	rnic_rx_judgedq_edge(&st->judgedq, in->rst);
	rnic_rx_passq_edge(&st->passq, in->rst);
	rnic_rx_rdntcq_edge(&st->rdntcq, in->rst);
	rnic_rx_rdreqq_edge(&st->rdreqq, in->rst);
	rnic_rx_rdbeatq_edge(&st->rdbeatq, in->rst);
	rx_store_out(&st->store, out);
	rx_ctx_out(&st->ctx, out);
	rx_rdq_out(&st->rdq, out);
	rx_rdport_out(&st->rdport, out);
}

void rnic_rx_step(rnic_rx_state_t *st, const rnic_rx_in_t *in, rnic_rx_out_t *out)
{
#pragma HLS PIPELINE II = 1
	static const uint8_t order[RNIC_RX_STAGES] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

	rnic_rx_step_order(st, in, out, order);
}
