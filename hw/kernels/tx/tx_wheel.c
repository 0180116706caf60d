/* TX kernel, a stage (tx_wheel.h): the QPs' timer wheel. tx_core adds a QP as its first
 * outstanding WQE starts (twaddq); the wheel hands it back to tx_core once the tick its timer
 * falls due in has come (twdueq), and tx_core answers (twretq) when to look at it again, or that
 * it has nothing to time. A timer is looked at within a tick of its time whatever the QP count,
 * and a QP costs the wheel a pop at most every 1 ms while its timer runs (docs/ARCHITECTURE.md,
 * "TX"). An add for a QP out being looked at is kept beside it: the QP stays whatever the answer.
 * Per clock: an add or an answer taken from its FIFO (adds first), done the next clock with its
 * QP's `in` read: one insert (a drop writes only `in`); in a clock with none, the cursor moving
 * to the next slot once the current one is empty and its tick has passed; and the pop of the
 * current slot's next QP.
 * II=1, latency 2 (an add or answer: taken, then done); memories: nxt, in (block RAM, a read and
 * a write each, at addresses from registers), head (LUT RAM). Recurrence: the cursor, the tick,
 * the count and the ring of QPs out. */
#include "tx_wheel.h"

enum { OP_NONE, OP_ADD, OP_ANSWER };

_Static_assert(RNIC_MAX_QP <= TW_NIL, "a list's link holds a QPN, and an end");
_Static_assert(TW_SLOTS <= RNIC_SWEPT, "one sweep clears every table");

/* q at the head of slot s's list */
static void link(tx_wheel_t *st, uint32_t q, uint32_t s)
{
	st->nxt[q] = st->head[s];
	st->head[s] = (uint16_t)q;
}

/* The slot a timer due in tick t is looked at in: within the wheel's reach, and never the
 * current slot (the cursor holds its list). Ticks wrap (2^32 of them: 4.9 hours), so they are
 * compared by their difference. Taken with the answer: the cursor may move to that slot in the
 * clock before the answer is done, which then takes the next. */
static uint32_t slot_of(uint32_t tick, uint32_t t)
{
	int32_t d = (int32_t)(t - tick);
	uint32_t c = d < 1 ? 1 : d > TW_SLOTS - 2 ? TW_SLOTS - 2 : (uint32_t)d;

	return (tick + c) % TW_SLOTS;
}

/* An add for QP q: into the slot after the current one, unless it is in (an add for a QP out
 * is kept beside it). tick: the current one's (the wheel empty as the clock began: now's, where
 * the cursor goes this clock). */
static void add_qp(tx_wheel_t *st, uint32_t q, uint32_t tick)
{
	uint32_t k;

	if (!st->in[q]) {
		link(st, q, (tick + 1) % TW_SLOTS);
		st->in[q] = 1;
		st->n++;
		return;
	}
	for (k = 0; k < TW_OUT; k++) {
#pragma HLS UNROLL
		if (k < st->out_n && st->out_q[(st->out_head + k) % TW_OUT] == q)
			st->out_add[(st->out_head + k) % TW_OUT] = 1;
	}
}

/* tx_core's answer for the oldest QP out: back into the wheel, or out of it */
static void answer(tx_wheel_t *st)
{
	uint32_t o = st->out_head, q = st->op_q;

	if (!st->op_drop)
		link(st, q, st->op_slot != st->tick % TW_SLOTS ? st->op_slot : (st->tick + 1) % TW_SLOTS);
	else if (st->out_add[o])
		link(st, q, (st->tick + 1) % TW_SLOTS);
	else {
		st->in[q] = 0;
		st->n--;
	}
	st->out_head = (uint8_t)((o + 1) % TW_OUT);
	st->out_n--;
}

void tx_wheel(tx_wheel_t *st, const rnic_tx_in_t *in, rnic_tx_twaddq_t *add, rnic_tx_twretq_t *ret,
	      rnic_tx_twdueq_t *due)
{
#pragma HLS PIPELINE II = 1
	/* the tick, the count and the QPs out as the clock began: what the cursor and the take go by */
	uint32_t now = (uint32_t)(in->cycle >> TW_SHIFT), n = st->n, tick = st->tick;
	uint32_t out_n = st->out_n, o = (st->out_head + st->out_n) % TW_OUT;
	uint32_t cur = st->cur, next;

	if (in->rst) {
		st->sweep = 0;
		st->cur = TW_NIL;
		st->tick = st->n = 0;
		st->out_head = st->out_n = 0;
		st->op = OP_NONE;
		return;
	}
	/* after a reset, as long as tx_core's sweep (which starts with it), so nothing comes before
	 * it is over */
	if (!(st->sweep & RNIC_SWEPT)) {
		uint32_t i = st->sweep % RNIC_MAX_QP;

		st->in[i] = 0;
		if (i < TW_SLOTS)
			st->head[i % TW_SLOTS] = TW_NIL;
		st->sweep++;
		return;
	}
	next = st->nxt[cur % RNIC_MAX_QP]; /* the pop's read, before this clock's insert (never of it) */
	/* the op taken last clock (the tick and the count as the clock began for the cursor) */
	if (st->op == OP_ADD)
		add_qp(st, st->op_q, n ? tick : now);
	else if (st->op == OP_ANSWER)
		answer(st);
	/* the cursor, in a clock with no insert (head's write port) */
	if (cur != TW_NIL && out_n < TW_OUT && rnic_tx_twdueq_room(due)) {
		rnic_tx_twdueq_push(due, &st->cur);
		st->out_q[o] = (uint16_t)cur;
		st->out_add[o] = 0;
		st->out_n++;
		st->cur = (uint16_t)next;
	} else if (!n) {
		st->tick = now;
	} else if (st->op == OP_NONE && cur == TW_NIL && (int32_t)(now - tick) > 0) {
		uint32_t s = (tick + 1) % TW_SLOTS;

		st->tick = tick + 1;
		st->cur = st->head[s];
		st->head[s] = TW_NIL;
	}
	/* the next one */
	st->op = OP_NONE;
	if (rnic_tx_twaddq_count(add)) {
		st->op = OP_ADD;
		st->op_q = *rnic_tx_twaddq_head(add);
		rnic_tx_twaddq_pop(add);
	} else if (rnic_tx_twretq_count(ret)) {
		const tx_twret_t *r = rnic_tx_twretq_head(ret);

		st->op = OP_ANSWER;
		st->op_q = r->q;
		st->op_drop = r->drop;
		st->op_slot = (uint8_t)slot_of(tick, r->tick);
		rnic_tx_twretq_pop(ret);
	}
}
