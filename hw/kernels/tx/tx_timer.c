/* TX kernel: the timers of the QPs (ACK timeout, RNR wait, a QP in error to flush), looked at by
 * the completion side in the clocks it has nothing else to do, as the timer wheel (tx_wheel.c)
 * hands them over. */
#include "tx_int.h"

/* The cycle a tick (tx_tick) after now's starts at */
static uint64_t tick_cycle(const tx_core_t *st, uint32_t tick)
{
	return ((st->now >> TW_SHIFT) + (uint32_t)(tick - tx_tick(st->now))) << TW_SHIFT;
}

/* The timers of QP q (from the wheel, or the send side's hint of a QP in error): an RNR wait
 * over, WQEs outstanding in error to flush, the ACK timer (4.096 us * 2^timeout without progress;
 * 0: none). Returns when to look at q again, or UINT64_MAX when it has nothing to time. The QP
 * whose message is being built is not late (its packets are going out). */
static uint64_t check_qp(tx_core_t *st, uint32_t q)
{
	tx_qc_t *p = &st->qc[q];
	uint32_t t = RNIC_GET(RNIC_QPC_RETRY_TIMEOUT, st->qcf[q].retry), held = st->held[q];
	uint32_t now = tx_tick(st->now), from;
	uint64_t soon = st->now + (1u << TW_SHIFT), due = UINT64_MAX;

	if (held && (int32_t)(now - p->hold_until) >= 0) {
		st->held[q] = 0; /* the RNR wait is over */
		held = 0;
		tx_wake(st, q);
	}
	if (held)
		due = tick_cycle(st, p->hold_until);
	if (!tx_ob_n_c(st, q))
		return due;
	if (tx_err_c(st, q)) {
		/* in error with WQEs outstanding that no ACK will retire any more: flush them */
		if (!st->ack_busy) {
			st->ack_busy = 1;
			st->ack_qpn = q;
		}
		return soon;
	}
	if (!t || st->qcf[q].type != RNIC_QPT_RC)
		return held ? due : st->now + ((uint64_t)TW_SLOTS << TW_SHIFT); /* kept: a modify may set one */
	if (held || st->ack_busy || tx_cpl_full(st) || (st->phase && st->qpn == q))
		return due < soon ? due : soon;
	/* late: more than 2^t ticks since, so never before the timeout (IBTA 9.7.6.1.3) and less
	 * than two ticks after it */
	from = (int32_t)(st->t_sent[q] - p->t_prog) > 0 ? st->t_sent[q] : p->t_prog;
	if (now - from > (1u << t)) {
		/* a READ partly answered is asked again from its first response missing, with the
		 * address and length moved on (IBTA 9.7.5.1.6; a responder may ignore it otherwise) */
		const tx_ob_t *ob = &st->obp[tx_ob_head(st, q)];
		int resume = ob->op == RNIC_WQE_OP_RDMA_READ && rnic_psn_diff(p->rd_next, ob->first_psn) > 0 &&
			     rnic_psn_diff(p->rd_next, ob->last_psn) <= 0;

		tx_rewind_qp(st, q, resume ? p->rd_next : ob->first_psn, 0);
		return soon;
	}
	return tick_cycle(st, from + (1u << t) + 1);
}

/* The completion side's spare clock: the QP the send side found in error, else the wheel's next
 * QP, answered with when to look at it again (or that it has nothing to time). */
void tx_check_timer(tx_core_t *st, rnic_tx_twdueq_t *due, rnic_tx_twretq_t *ret)
{
	tx_twret_t *r = rnic_tx_twretq_slot(ret);
	uint64_t d;

	if (st->fl_valid) {
		st->fl_valid = 0;
		check_qp(st, st->fl_q);
		return;
	}
	if (!rnic_tx_twdueq_count(due) || !rnic_tx_twretq_room(ret))
		return;
	r->q = *rnic_tx_twdueq_head(due);
	rnic_tx_twdueq_pop(due);
	d = check_qp(st, r->q);
	r->drop = d == UINT64_MAX;
	r->tick = (uint32_t)((d + (1u << TW_SHIFT) - 1) >> TW_SHIFT);
	rnic_tx_twretq_push(ret, NULL);
}
