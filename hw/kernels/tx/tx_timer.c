/* TX kernel: the timers of the QPs (ACK timeout, RNR wait, a QP in error to flush) in a timer
 * wheel (tx.h), checked by the completion side in the clocks it has nothing else to do. */
#include "tx_int.h"

_Static_assert(RNIC_MAX_QP <= TW_NIL, "a timer wheel's link holds a QPN, and an end");

/* The cycle a tick (tx_tick) after now's starts at */
static uint64_t tick_cycle(const tx_core_t *st, uint32_t tick)
{
	return ((st->now >> TW_SHIFT) + (uint32_t)(tick - tx_tick(st->now))) << TW_SHIFT;
}

/* The tick at which a timer due at cycle `due` is looked at: within the wheel's reach, and
 * never the current slot (the cursor holds its list). */
static uint64_t tw_slot_tick(const tx_core_t *st, uint64_t due)
{
	uint64_t t = (due + (1u << TW_SHIFT) - 1) >> TW_SHIFT, lo = st->tw_tick + 1, hi = st->tw_tick + TW_SLOTS - 1;

	return t < lo ? lo : t > hi ? hi : t;
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

/* The completion side's spare clock: the QP the send side found in error, else the next QP of
 * the wheel's current slot (none while a reinsert still waits for tw_nxt's write port). */
void tx_check_timer(tx_core_t *st)
{
	uint32_t q, w;
	uint64_t due;

	if (st->fl_valid) {
		st->fl_valid = 0;
		check_qp(st, st->fl_q);
		return;
	}
	if (st->tw_re || st->tw_cur == TW_NIL)
		return;
	q = st->tw_cur;
	w = st->tw_nxt[q];
	st->tw_cur = (uint16_t)(w & TW_NIL);
	due = check_qp(st, q);
	if (due == UINT64_MAX) {
		st->tw_drop = 1;
		st->tw_drop_q = (uint16_t)q;
		st->tw_drop_tok = (uint16_t)(w >> TW_TOK);
	} else {
		st->tw_re = 1;
		st->tw_re_q = (uint16_t)q;
		st->tw_re_w = (uint16_t)(w & (1u << TW_TOK));
		st->tw_re_tick = tw_slot_tick(st, due);
	}
}

/* QP q (its token in `tok`, bit TW_TOK) at the head of the list of tick `tick`'s slot */
static void tw_link(tx_core_t *st, uint32_t q, uint64_t tick, uint32_t tok)
{
	uint32_t s = (uint32_t)(tick % TW_SLOTS);

	st->tw_nxt[q] = (uint16_t)(st->tw_head[s] | tok);
	st->tw_head[s] = (uint16_t)q;
}

/* The wheel at the clock's end: a drop's token lands; the send side's add (a QP whose first WQE
 * went out, unless it is in the wheel: the drop of this clock forwarded) takes tw_nxt's write
 * port, else a reinsert does; in a clock with neither, the cursor moves to the next slot once
 * the current one is empty and its tick has passed (at once to now when the wheel is empty). */
void tx_tw_end(tx_core_t *st)
{
	uint32_t q = st->tw_add_q, clr, s, added = 0;
	uint64_t now_tick = st->now >> TW_SHIFT;

	if (st->tw_add) {
		clr = st->tw_drop && st->tw_drop_q == q ? st->tw_drop_tok : st->tw_clr[q];
		if (st->tw_set[q] == clr) {
			tw_link(st, q, st->tw_tick + 1, !clr << TW_TOK);
			st->tw_set[q] = (uint8_t)!clr;
			st->tw_n++;
			added = 1;
		}
	}
	if (st->tw_drop) {
		st->tw_clr[st->tw_drop_q] = (uint8_t)st->tw_drop_tok;
		st->tw_n--;
	}
	if (st->tw_re && !added) {
		tw_link(st, st->tw_re_q, st->tw_re_tick, st->tw_re_w);
		st->tw_re = 0;
		added = 1;
	}
	st->tw_add = st->tw_drop = 0;
	if (!st->tw_n)
		st->tw_tick = now_tick;
	else if (!added && st->tw_cur == TW_NIL && st->tw_tick < now_tick) {
		s = ++st->tw_tick % TW_SLOTS;
		st->tw_cur = st->tw_head[s];
		st->tw_head[s] = TW_NIL;
	}
}
