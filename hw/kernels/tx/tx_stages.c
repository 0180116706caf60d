/* TX kernel (tx.h): a clock is each stage once, then the FIFOs' edge. */
#include "tx.h"

static void stage(rnic_tx_state_t *st, const rnic_tx_in_t *in, rnic_tx_out_t *out, uint32_t k)
{
	switch (k) {
	case 0: tx_core(&st->core, in, &st->pkq, &st->rdreqq, &st->wqreqq, &st->rdbeatq, &st->crdq, &st->retq, &st->fltq, &st->twaddq, &st->twdueq, &st->twretq,
			&st->rjq, &st->rjxq, &st->rjcq, out); break;
	case 1: tx_emit(&st->emit, in, &st->pkq, &st->payq, &st->ethq, &st->retq, &st->fltq); break;
	case 2: rnic_icrc_fold(&st->fold, &st->ethq, &st->foldq); break;
	case 3: rnic_icrc_shift(&st->foldq, &st->shiftq); break;
	case 4: rnic_icrc_sum(&st->shiftq, &st->sumq); break;
	case 5: tx_icrc_put(&st->put, in, &st->sumq); break;
	case 6: tx_wheel(&st->wheel, in, &st->twaddq, &st->twretq, &st->twdueq); break;
	case 7: tx_rsq(&st->rsq, in, &st->rjq, &st->rjxq, &st->rjcq); break;
	default: tx_rdport(&st->rdport, in, &st->rdreqq, &st->wqreqq, &st->rdbeatq, &st->payq, &st->crdq); break;
	}
}

void rnic_tx_step_order(rnic_tx_state_t *st, const rnic_tx_in_t *in, rnic_tx_out_t *out, const uint8_t *order)
{
	uint32_t k;

	for (k = 0; k < RNIC_TX_STAGES; k++)
		stage(st, in, out, order[k]);
	rnic_tx_pkq_edge(&st->pkq, in->rst);
	rnic_tx_rdreqq_edge(&st->rdreqq, in->rst);
	rnic_tx_wqreqq_edge(&st->wqreqq, in->rst);
	rnic_tx_rdbeatq_edge(&st->rdbeatq, in->rst);
	rnic_tx_crdq_edge(&st->crdq, in->rst);
	rnic_tx_payq_edge(&st->payq, in->rst);
	rnic_tx_retq_edge(&st->retq, in->rst);
	rnic_tx_fltq_edge(&st->fltq, in->rst);
	rnic_icrc_inq_edge(&st->ethq, in->rst);
	rnic_icrc_foldq_edge(&st->foldq, in->rst);
	rnic_icrc_shiftq_edge(&st->shiftq, in->rst);
	rnic_icrc_sumq_edge(&st->sumq, in->rst);
	rnic_tx_twaddq_edge(&st->twaddq, in->rst);
	rnic_tx_twdueq_edge(&st->twdueq, in->rst);
	rnic_tx_twretq_edge(&st->twretq, in->rst);
	rnic_tx_rjq_edge(&st->rjq, in->rst);
	rnic_tx_rjxq_edge(&st->rjxq, in->rst);
	rnic_tx_rjcq_edge(&st->rjcq, in->rst);
	tx_icrc_put_out(&st->put, out);
	tx_emit_out(&st->emit, out);
	tx_rsq_out(&st->rsq, out);
	tx_rdport_out(&st->rdport, out);
}

void rnic_tx_step(rnic_tx_state_t *st, const rnic_tx_in_t *in, rnic_tx_out_t *out)
{
#pragma HLS PIPELINE II = 1
	static const uint8_t order[RNIC_TX_STAGES] = {0, 1, 2, 3, 4, 5, 6, 7, 8};

	rnic_tx_step_order(st, in, out, order);
}
