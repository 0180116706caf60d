/* TX kernel: the scheduler. Doorbells and the other events that may let a QP fetch (tx_wake) wake
 * it into an active list, a QP at most once; the QP at the head fetches its next WQEs into the
 * prefetch ring, up to a batch in one DMA read, and goes to the back of the list while it has
 * more to fetch (round-robin, no scan over QPs). */
#include "tx_int.h"

/* QP q may send a further WQE: ready to send, room in its window (ob_n outstanding, as the
 * caller's side sees them), no READ/atomic or RNR wait */
static uint32_t pf_n(const tx_core_t *st, uint32_t q)
{
	return (uint8_t)(st->pf_fetched[q] - st->pf_started[q]);
}

int tx_may_send(const tx_core_t *st, uint32_t q, uint32_t ob_n)
{
	return st->qstate[q] == RNIC_QPS_RTS && ob_n + pf_n(st, q) < TX_OB &&
	       !(st->rd_wait[q] && st->rd_retired[q] == st->rd_mark[q]) && !st->held[q];
}

/* Last clock's wakes, as this one begins: into `wake` in slot order, each unless its QP is there
 * already or in an earlier slot (the wakes are registers, all compared at once; each goes as far
 * along as the wakes kept before it). */
void tx_wakes_land(tx_core_t *st)
{
	uint32_t i, j, there, keep = 0;

	for (i = 0; i < TX_WAKE_CLK; i++) {
		there = 0;
		for (j = 0; j < TX_WAKE; j++)
			there |= st->wake[j] == st->wk_q[i] && (j - st->wake_head) % TX_WAKE < st->wake_tail - st->wake_head;
		for (j = 0; j < TX_WAKE_CLK; j++)
			there |= j < i && ((st->wk_v >> j) & 1) && st->wk_q[j] == st->wk_q[i];
		keep |= (uint32_t)(((st->wk_v >> i) & 1) && !there) << i;
	}
	for (i = 0; i < TX_WAKE_CLK; i++)
		if ((keep >> i) & 1)
			st->wake[(st->wake_tail + tx_bits_below(keep, i)) % TX_WAKE] = st->wk_q[i];
	st->wake_tail += tx_bits_below(keep, TX_WAKE_CLK);
	st->wk_v = 0;
}

/* One wake per clock joins the active list, unless its QP is in it already: act_set[q] !=
 * act_clr[q] (the scheduler's pop of this clock forwarded: its act_clr write lands at the clock's
 * end). The entry carries the act_set value, which the scheduler writes to act_clr as it pops it. */
void tx_join(tx_core_t *st)
{
	uint32_t q, clr;

	if (st->wake_head == st->wake_tail)
		return;
	q = st->wake[st->wake_head++ % TX_WAKE];
	clr = st->pop_valid && st->pop_q == q ? st->pop_tok : st->act_clr[q];
	if (st->act_set[q] != clr)
		return;
	st->act_set[q] = (uint8_t)!clr;
	st->act[st->act_tail++ % RNIC_MAX_QP] = (uint16_t)(q | !clr << ACT_TOK);
}

/* Scheduler: the QP at the head of the active list fetches its next WQEs, up to a batch in one DMA
 * read of its own (wqreqq), while the message in progress is still being built; with more to
 * fetch it goes to the back of the list, else it leaves it (until an event wakes it again). It
 * runs as the clock begins, before anything of this clock is decided, and reads what it reads
 * (the counters, the window's and the error flags' copies, the READ wait, the RNR hold, the state)
 * before this clock's writes of them: what another part decides now it sees from the next clock
 * on (a drop asked now lands then and drops what it fetched too). It waits in a clock whose
 * events, known from the registers as it begins, take a port of what it reads or writes (a block
 * RAM's two): a drop landing, a pushed WQE or a doorbell (sq_ci and the counters), a QPC
 * commit (the state), a go-back-N (the READ wait) or a QP's timers looked at (tmr: the RNR hold). */
void tx_schedule(tx_core_t *st, const rnic_tx_in_t *in, rnic_tx_wqreqq_t *wqs, uint32_t tmr)
{
	uint32_t a, q, mask, err, ob_n, posted, wroom, n, room;
	uint64_t addr;

	if (st->pf_tail - st->pf_head >= TX_PF || !rnic_tx_wqreqq_room(wqs) || st->rd_used + 1u >= TX_RD_FIFO ||
	    tx_cpl_full(st) || st->act_head == st->act_tail || !st->wake_ok || st->uf_now || tmr || st->rw_valid ||
	    st->commit_valid ||
	    (in->push_valid && st->o.push_ready && in->push_last) || (in->db_valid && st->o.db_ready))
		return;
	a = st->act[st->act_head++ % RNIC_MAX_QP];
	q = a & (RNIC_MAX_QP - 1);
	st->pop_valid = 1;
	st->pop_q = (uint16_t)q;
	st->pop_tok = (uint8_t)(a >> ACT_TOK);
	mask = (1u << st->sq_log[q]) - 1;
	err = st->err_s_k[q] | st->err_c_k[q];
	ob_n = (uint8_t)(st->ob_tail_k[q] - st->ob_head_k[q]);
	posted = (uint16_t)(st->sq_pi[q] - st->sq_ci[q]);
	wroom = TX_OB - ob_n - pf_n(st, q);
	/* WQEs to fetch: to send, or to flush once those outstanding are */
	if (!posted || (err ? ob_n : !tx_may_send(st, q, ob_n))) {
		if (err && posted)
			tx_wake(st, WK_SCHED, q); /* in error: it stays in the list until its outstanding WQEs are flushed */
		return;
	}
	addr = st->sq_base[q] + (uint64_t)(st->sq_ci[q] & mask) * RNIC_WQE_BYTES;
	/* as many as are posted, fit the ring ahead, the outstanding-WQE window, the ring's end and
	 * the 4 KiB page (a DMA read never crosses one) */
	n = posted;
	room = TX_PF - (st->pf_tail - st->pf_head);
	n = n < room ? n : room;
	if (!err)
		n = n < wroom ? n : wroom;
	room = mask + 1 - (st->sq_ci[q] & mask);
	n = n < room ? n : room;
	room = (4096 - (uint32_t)(addr & 4095)) / RNIC_WQE_BYTES;
	n = n < room ? n : room;
	n = n < TX_PF_BATCH ? n : TX_PF_BATCH;
	*rnic_tx_wqreqq_slot(wqs) = (tx_rdreq_t){.bus = addr, .len = (uint16_t)(n * RNIC_WQE_BYTES), .kind = REQ_WQE};
	rnic_tx_wqreqq_push(wqs, NULL);
	st->wq_on = 1;
	st->sf_q = (uint16_t)q;
	st->sf_ci = st->sq_ci[q];
	st->sf_n = (uint8_t)n;
	st->sq_ci[q] = (uint16_t)(st->sq_ci[q] + n);
	st->pf_fetched[q] = (uint8_t)(st->pf_fetched[q] + n);
	if (n < posted && (err || n < wroom)) /* more to fetch */
		tx_wake(st, WK_SCHED, q);
}

/* The scheduler's fetch takes its slots of the prefetch ring as the clock ends: what reads the
 * ring in the clock (the lookup, the WQE start) sees it as the clock began */
void tx_fetch_land(tx_core_t *st)
{
	uint32_t k;

	for (k = 0; k < TX_PF_BATCH; k++) {
		tx_pf_t *f = &st->pf[(st->pf_tail + k) % TX_PF];

		if (k < st->sf_n) {
			f->qpn = st->sf_q;
			f->index = (uint16_t)(st->sf_ci + k);
			f->ready = 0;
			f->discard = 0;
		}
	}
	st->pf_tail += st->sf_n;
	st->sf_n = 0;
}
