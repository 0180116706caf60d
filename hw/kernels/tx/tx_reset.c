/* TX kernel: what a reset does. The reset itself empties the queues and registers in its clock; a
 * reset leaves block RAM as it was, so the sweep that follows clears the tables, an entry of each
 * a clock (docs/ARCHITECTURE.md, "Reset sweeps"). */
#include "tx_int.h"

_Static_assert((RNIC_SWEPT & (RNIC_SWEPT - 1)) == 0, "the sweep's done bit");
_Static_assert(RNIC_TLB_LINES <= RNIC_SWEPT && RNIC_MPT_LINES <= RNIC_SWEPT &&
	       RNIC_ICM_MAX_CHUNKS <= RNIC_SWEPT,
	       "one sweep clears every table");

/* The reset: every queue empty; the tables are cleared by the sweep that follows (a reset leaves
 * a block RAM as it was). */
void tx_reset(tx_core_t *st)
{
	st->sweep = 0;
	st->tw_add = 0;
	st->rw_valid = st->tm_valid = 0;
	st->ob_fresh = st->obf_head = st->obf_tail = st->g_n = 0;
	st->obn_fw = 0;
	st->phase = 0;
	st->cancel = 0;
	st->pf_head = st->pf_fill = st->pf_tail = st->pf_beats = st->la_slot = st->la_fill = 0;
	st->chk_head = ~0u; /* no head's scatter list checked */
	st->iss_left = 0;
	st->ie_valid = st->mm_on = 0;
	st->rj_open = st->rj_drop = st->rj_stop = 0;
	st->credit = st->rd_used = 0;
	st->cpl_head = st->cpl_tail = 0;
	st->ack_busy = 0;
	st->fence_pending = 0;
	rnic_caches_reset(&st->t);
	st->push_half = 0;
	st->commit_valid = 0;
	st->ts_pending = 0;
	st->pop_valid = st->sf_n = 0;
	st->fl_pend = st->fl_valid = 0;
	st->uf = (tx_uf_t){0};
	st->cw_head.valid = st->cw_tail.valid = st->cw_err_s.valid = st->cw_err_c.valid = 0;
	st->wake_head = st->wake_tail = st->act_head = st->act_tail = 0;
	st->wake_ok = 1;
	st->wk_v = 0;
	st->cs_v = 0;
	st->o = (rnic_tx_out_t){0};
}

/* After a reset, entry i of every table a clock, RNIC_MAX_QP clocks: the kernel takes nothing
 * meanwhile but a fence, answered once the sweep is over, so the firmware's first fence after
 * its boot waits for it. */
void tx_sweep(tx_core_t *st, const rnic_tx_in_t *in)
{
	uint32_t i = st->sweep % RNIC_MAX_QP;

	st->qs[i] = (tx_qs_t){0};
	st->qc[i] = (tx_qc_t){0};
	st->sq_pi[i] = st->sq_ci[i] = 0;
	st->ob_head[i] = st->ob_head_s[i] = st->ob_head_k[i] = 0;
	st->ob_tail[i] = st->ob_tail_c[i] = st->ob_tail_k[i] = 0;
	st->err_s[i] = st->err_s_c[i] = st->err_s_k[i] = 0;
	st->err_c[i] = st->err_c_s[i] = st->err_c_k[i] = 0;
	st->ob_fv[i] = 0;
	st->rd_started[i] = st->rd_retired[i] = 0;
	st->held[i] = st->qstate[i] = st->rd_wait[i] = 0;
	st->pf_fetched[i] = st->pf_started[i] = 0;
	st->act_set[i] = st->act_clr[i] = 0;
	if (i < RNIC_ICM_MAX_CHUNKS) /* no context memory read before the firmware gives it again */
		st->icm[i % RNIC_ICM_MAX_CHUNKS] = 0;
	rnic_tables_sweep(&st->t, i);
	if (rnic_cfg_fence(in->cfg_valid, in->cfg_addr, in->cfg_data, &st->fence_token))
		st->fence_pending = 1;
	st->sweep++;
}
