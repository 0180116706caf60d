/* RX kernel: what a reset does. The reset itself empties the queues and registers in its clock; a
 * reset leaves block RAM as it was, so the sweep that follows clears the tables, an entry of each
 * a clock (docs/ARCHITECTURE.md, "Reset sweeps"). */
#include "rx_int.h"

_Static_assert(RNIC_MAX_SRQ <= RNIC_SWEPT && RNIC_ICM_MAX_CHUNKS <= RNIC_SWEPT,
	       "one sweep clears every table");

/* The reset: every queue empty; the tables are cleared by the sweep that follows (a reset leaves
 * a block RAM as it was). */
void rx_reset(rx_core_t *st)
{
	st->sweep = 0;
	st->fr_head = st->cur_on = st->seq = 0;
	st->mk_cand = st->mk_want = 0;
	st->rg_frame = ~0u; /* no receive WQE checked */
	st->cmd_on = 0;
	st->wr_out = 0;
	st->busy = B_IDLE;
	st->redo = st->flush = st->back = st->rd_issue = st->fin = 0;
	st->rq_on = 0;
	st->pf_head = st->pf_tail = st->hint_cpl = st->tl_on = st->mm_on = st->se_valid = 0;
	st->posts.left = 0;
	st->fence_pending = st->fence_wait = 0;
	st->commit_valid = 0;
	st->db_pend = 0;
	st->ovr_n = 0;
	st->rw_fresh = st->rwf_head = st->rwf_tail = 0;
	rnic_caches_reset(&st->t);
	st->o = (rnic_rx_out_t){0};
}

/* After a reset, entry i of every table a clock, RNIC_MAX_QP clocks: frames that come meanwhile
 * are dropped, and a fence is answered once the sweep is over, so the firmware's first fence
 * after its boot waits for it. */
void rx_sweep(rx_core_t *st, const rnic_rx_in_t *in)
{
	uint32_t q = st->sweep % RNIC_MAX_QP;

	st->qp[q] = (rx_qp_t){0};
	st->rw_has[q] = 0;
	st->qstate[q] = 0;
	st->rq_pi[q] = st->rw_req[q] = st->rw_got[q] = st->rw_used[q] = 0;
	st->rw_void[q] = 0;
	st->rq_ctl[q] = 0;
	st->rq_srq[q] = 0;
	if (q < RNIC_MAX_SRQ)
		st->srq[q % RNIC_MAX_SRQ] = (rx_srq_t){0};
	if (q < RNIC_ICM_MAX_CHUNKS) /* no context memory read before the firmware gives it again */
		st->icm[q % RNIC_ICM_MAX_CHUNKS] = 0;
	rnic_tables_sweep(&st->t, q);
	if (rnic_cfg_fence(in->cfg_valid, in->cfg_addr, in->cfg_data, &st->fence_token))
		st->fence_pending = 1;
	st->sweep++;
}
