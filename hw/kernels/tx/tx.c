/* TX kernel: RC requester, and the sending half of the RC responder.
 *
 * Here tx_core, TX's stage before the emitter (tx_emit.c). Per clock (contract:
 * docs/ARCHITECTURE.md) it can take one doorbell, one beat of its WQE and table reads, one ACK
 * notice and one responder frame request, ask the read channel (tx_rdport.c) for one DMA read,
 * hand one packet on and give one completion. Frames flow through decoupled parts:
 *   - the packet builder cuts work into packets, one header per clock at a packet boundary:
 *     responder frames first (ACK/NAK, ATOMIC ACK, READ RESPONSE FIRST/MIDDLE/LAST/ONLY, in the
 *     PSN order the RX kernel handed them over, IBTA 9.7.5), then the request message of the
 *     WQE in progress (IBTA 9.2-9.4: SEND, RDMA WRITE (with immediate), READ request, atomics);
 *     it then issues the packet's payload DMA reads, cut at 4 KiB pages and SGEs, up to
 *     TX_CREDIT bytes ahead of their beats so that the PCIe read latency is covered;
 *   - the scheduler fetches the next WQEs of the QP at the head of its active list (fed by
 *     doorbells and the other events that may let a QP fetch; round-robin, no scan over QPs),
 *     up to TX_PF_BATCH in one DMA read; a fetched WQE starts as soon as the message in
 *     progress has all its packets built: its SGEs are checked (lkey, PD, bounds, IBTA
 *     10.6.3.1) and an outstanding-WQE slot reserved;
 *   - the packets built go to the emitter (tx_emit.c), their payload beats as they come from
 *     the read channel.
 * The packet builder is tx_build.c, the scheduler tx_sched.c; the acknowledgements and the timers
 * are here.
 * Each QP's state is split between a send side (WQE start, go-back-N, pushed WQEs) and a
 * completion side (ACK notices, the ACK timer), a block RAM each with one event a clock, and
 * memories of their own for what one side writes and the other reads (tx.h); the doorbell and
 * the scheduler take neither port.
 * DMA read data returns in request order; the read channel keeps each read's kind, so the beat
 * goes to the right stage.
 * ACK notices from the RX kernel retire outstanding WQEs whose last PSN they cover (coalesced
 * ACKs, IBTA 9.7.5.1); a READ or atomic retires when the RX kernel has placed its response. A
 * PSN-sequence NAK or an expired ACK timer (4.096 us * 2^timeout, 9.7.6.1.3) sends the QP's
 * unacknowledged WQEs again from the oldest (go-back-N), resuming inside a message at the PSN the
 * responder expects; an RNR NAK does the same after the RNR timer it carries (9.7.5.2.8).
 * retry_cnt (rnr_retry) rounds without progress complete the oldest WQE with RETRY_EXC_ERR
 * (RNR_RETRY_EXC_ERR); that and any other NAK move the QP to error and flush it (10.8).
 */
#include "tx_int.h"

_Static_assert(RNIC_MAX_QP <= 1u << ACT_TOK, "an active-list entry holds a QPN and its token");
_Static_assert(RNIC_WQE_SGE_OFF % RNIC_BEAT + RNIC_SGE_SIZE <= RNIC_BEAT, "a WQE's first scatter entry is in one beat");
_Static_assert(TX_OB < 256, "outstanding WQEs are counted by positions mod 256");
_Static_assert((RNIC_QPC_RETRY_TIMEOUT_MASK | RNIC_QPC_RETRY_RETRY_CNT_MASK | RNIC_QPC_RETRY_RNR_RETRY_MASK) <= 0xffffu,
	       "the completion side keeps RETRY's low half");

/* RNR timer (IBTA Vol. 1 Table 45) in units of 10 us */
static const uint32_t rnr_units[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

int tx_is_rd(uint32_t op)
{
	return op == RNIC_WQE_OP_RDMA_READ || op == RNIC_WQE_OP_ATOMIC_CS || op == RNIC_WQE_OP_ATOMIC_FA;
}

static uint32_t wc_opcode(uint32_t op)
{
	switch (op) {
	case RNIC_WQE_OP_SEND:
	case RNIC_WQE_OP_SEND_IMM:
		return RNIC_WC_OP_SEND;
	case RNIC_WQE_OP_RDMA_READ:
		return RNIC_WC_OP_RDMA_READ;
	case RNIC_WQE_OP_ATOMIC_CS:
		return RNIC_WC_OP_COMP_SWAP;
	case RNIC_WQE_OP_ATOMIC_FA:
		return RNIC_WC_OP_FETCH_ADD;
	default:
		return RNIC_WC_OP_RDMA_WRITE;
	}
}

/* This clock's completion slot of the place that makes one, cleared and marked taken (cpls_land
 * pushes it as the next clock begins) */
static rnic_cpl_t *cpl_slot(tx_core_t *st, uint32_t slot)
{
	assert(!((st->cs_v >> slot) & 1));
	st->cs_v |= (uint8_t)(1u << slot);
	st->cs[slot] = (rnic_cpl_t){0};
	return &st->cs[slot];
}

void tx_cpl_push(tx_core_t *st, uint32_t slot, uint32_t qpn, uint32_t cqn, uint64_t wr_id, uint32_t op, uint32_t len,
		 uint32_t status, uint32_t ts, uint32_t index)
{
	rnic_cpl_t *c = cpl_slot(st, slot);

	c->cqn = (uint16_t)cqn;
	c->qpn = rnic_qpn(qpn);
	c->wr_id = wr_id;
	c->byte_len = len;
	c->opcode = (uint8_t)wc_opcode(op);
	c->status = (uint8_t)status;
	c->ts_start = ts;
	c->wqe_index = (uint16_t)index;
}

/* An error the host did not ask for moves the QP to error: its WQEs are flushed and the host
 * gets the QP-fatal event (IBTA 11.6.3.1). Found by the send side or the completion side. */
void tx_qp_fatal(tx_core_t *st, uint32_t q, int send_side)
{
	rnic_cpl_t *c;

	if (send_side ? tx_err_s(st, q) : tx_err_c(st, q))
		return;
	if (send_side)
		tx_set_err_s(st, q, 1);
	else
		tx_set_err_c(st, q, 1);
	if (send_side && !st->fl_pend && !st->fl_valid) {
		/* the completion side looks at it next, not in its turn of the timer scan: its
		 * outstanding WQEs complete now (a hint: a second one waits for the scan) */
		st->fl_pend = 1;
		st->fl_q = (uint16_t)q;
	}
	c = cpl_slot(st, send_side ? CS_FATAL_S : CS_FATAL_C);
	c->evt = RNIC_EQE_TYPE_QP_FATAL;
	c->qpn = rnic_qpn(q);
	c->ctx = (uint8_t)(send_side ? QSF_CTRL(st, q, CTX) : st->qcf[q].ctx);
}

static void ob_cpl(tx_core_t *st, uint32_t q, const tx_ob_t *ob, uint32_t status)
{
	uint32_t len = status ? 0 : ob->op == RNIC_WQE_OP_ATOMIC_CS || ob->op == RNIC_WQE_OP_ATOMIC_FA ? 8 : ob->len;

	if (ob->signaled || status)
		tx_cpl_push(st, CS_RETIRE, q, st->qcf[q].cqn, ob->wr_id, ob->op, len, status, ob->ts, ob->index);
}

/* Retire the oldest outstanding WQE of QP q (completion side): its pool entry is free again. */
static void ob_retire(tx_core_t *st, uint32_t q, uint32_t status)
{
	uint32_t e = tx_ob_head(st, q);
	const tx_ob_t *ob = &st->obp[e];

	ob_cpl(st, q, ob, status);
	/* no response of the next WQE is placed yet: a READ's resume point is never a stale one
	 * that its PSN range happens to hold across the wrap */
	st->qc[q].rd_next = (ob->last_psn + 1) & RNIC_PSN_MASK;
	if (tx_is_rd(ob->op) && tx_rd_out(st, q))
		st->rd_retired[q]++; /* a WQE waiting for it (rd_wait) may go */
	st->ob_he[q] = (uint16_t)tx_obn(st, e);
	st->obf[st->obf_tail++ % TX_OBP] = (uint16_t)e;
	tx_set_ob_head(st, q, st->ob_head[q] + 1u);
	tx_wake(st, WK_RETIRE, q);
}

/* QP q's outstanding WQEs are dropped (go-back-N, reset): its list goes to the garbage list whole,
 * one obn write (a clock that has both sides' ports: a go-back-N's or a commit's). */
static void ob_discard(tx_core_t *st, uint32_t q)
{
	uint32_t n = tx_ob_n_c(st, q), h;

	if (!n)
		return;
	h = tx_ob_head(st, q);
	if (st->g_n)
		tx_obn_write(st, st->g_tail, h);
	else
		st->g_head = (uint16_t)h;
	st->g_tail = st->ob_le[q];
	st->g_n += n;
}

/* One entry of the garbage list back to the free ring (completion side, a clock it is idle). */
static void ob_collect(tx_core_t *st)
{
	uint32_t e = st->g_head;

	st->obf[st->obf_tail++ % TX_OBP] = (uint16_t)e;
	st->g_head = (uint16_t)tx_obn(st, e);
	st->g_n--;
}

/* The read channel's slot is taken this clock: a read asked already, or rdreqq full as the clock
 * began */
int tx_rd_busy(const tx_core_t *st)
{
	return st->rq_on || !st->rq_room;
}

/* The read channel's list of reads on their way is full: nothing more may be asked */
int tx_rd_full(const tx_core_t *st)
{
	return st->rd_used >= TX_RD_FIFO;
}

/* A read for the read channel (the caller checked tx_rd_busy and tx_rd_full), pushed at the
 * clock's end */
void tx_read_req(tx_core_t *st, uint64_t addr, uint32_t len, uint32_t kind)
{
	st->rq = (tx_rdreq_t){.bus = addr, .len = (uint16_t)len, .kind = (uint8_t)kind};
	st->rq_on = 1;
}

/* Ask that QP q's WQEs fetched ahead be dropped and fetched again (tx_uf_t): the QP went back
 * (go-back-N, a READ limit or fence), went to error, or away. */
void tx_unfetch(tx_core_t *st, uint32_t q, uint32_t at_start, uint32_t ci_on, uint32_t ci, uint32_t first)
{
	assert(!st->uf.valid || st->uf.q == q);
	st->uf.ci_on |= (uint8_t)ci_on;
	st->uf.first |= (uint8_t)first;
	st->uf.at_start |= (uint8_t)at_start;
	if (ci_on)
		st->uf.ci = (uint16_t)ci;
	st->uf.q = (uint16_t)q;
	st->uf.valid = 1;
}

/* The drop asked last clock, from its registers: the QP's slots in the ring marked (flags in
 * registers, a bounded pass over TX_PF), its count of WQEs fetched ahead and its next WQE to fetch
 * moved back. The scheduler, a WQE's start, a pushed WQE and a doorbell wait this clock (sq_ci's
 * ports and its write; the marks). */
static void unfetch_land(tx_core_t *st)
{
	uint32_t i, s, q = st->uf.q, found = 0, idx = st->uf.ci;

	for (i = 0; i < TX_PF; i++) {
		s = (st->pf_head + i) % TX_PF;
		if (st->uf.first && !found && i < st->pf_tail - st->pf_head && st->pf[s].qpn == q && !st->pf[s].discard) {
			found = 1;
			idx = st->pf[s].index; /* the first of them, to be flushed in order */
		}
	}
	for (i = 0; i < TX_PF; i++)
		if (st->pf[i].qpn == q && (uint32_t)(i - st->pf_head) % TX_PF < st->pf_tail - st->pf_head)
			st->pf[i].discard = 1;
	if (st->uf.at_start)
		st->pf_started[q] = st->pf_fetched[q];
	else
		st->pf_fetched[q] = st->pf_started[q];
	if (st->uf.ci_on || found)
		st->sq_ci[q] = (uint16_t)idx;
	st->uf = (tx_uf_t){0};
}

/* Last clock's completions and events into the FIFO as this one begins, from their registers, in
 * slot order (tx_cpl_full kept room) */
static void cpls_land(tx_core_t *st)
{
	uint32_t i;

	for (i = 0; i < TX_CPL_CLK; i++)
		if ((st->cs_v >> i) & 1)
			st->cpl[(st->cpl_tail + tx_bits_below(st->cs_v, i)) % TX_CPL_FIFO] = st->cs[i];
	st->cpl_tail += tx_bits_below(st->cs_v, TX_CPL_CLK);
	st->cs_v = 0;
}

/* Go back N on QP q: its unacknowledged WQEs are fetched and sent again from the oldest, with
 * their original PSNs, resuming at `psn` (IBTA 9.7.5.1.3, 9.7.6.1.3). `rnr` != 0: after an RNR
 * NAK carrying that timer code + 1. Decided here, on the completion side (retries, the RNR
 * wait), done on the send side the next clock (go_back). */
static void rewind_qp(tx_core_t *st, uint32_t q, uint32_t psn, uint32_t rnr)
{
	tx_qc_t *p = &st->qc[q];
	const tx_ob_t *ob = &st->obp[tx_ob_head(st, q)];
	uint32_t limit;

	if (!tx_ob_n_c(st, q))
		return;
	if (rnr) {
		limit = RNIC_GET(RNIC_QPC_RETRY_RNR_RETRY, st->qcf[q].retry);
		if (limit != 7 && p->rnr_retries >= limit) {
			ob_retire(st, q, RNIC_WC_STATUS_RNR_RETRY_EXC_ERR);
			tx_qp_fatal(st, q, 0);
			st->ack_busy = 1;
			st->ack_qpn = q;
			return;
		}
		p->rnr_retries++;
		/* the tick the wait is over in, rounded up */
		p->hold_until = tx_tick(st->now + (uint64_t)rnr_units[(rnr - 1) & 31] * CYCLES_10US + (1u << TW_SHIFT) - 1);
		st->held[q] = 1;
		st->o.stat_rnr++;
	} else {
		/* a go-back point later than the previous one is progress too */
		if (p->retries && rnic_psn_diff(psn, p->back_psn) > 0)
			p->retries = 0;
		if (p->retries >= RNIC_GET(RNIC_QPC_RETRY_RETRY_CNT, st->qcf[q].retry)) {
			/* retries exhausted: the oldest WQE fails, the QP goes to error, the rest is flushed */
			ob_retire(st, q, RNIC_WC_STATUS_RETRY_EXC_ERR);
			tx_qp_fatal(st, q, 0);
			st->ack_busy = 1;
			st->ack_qpn = q;
			return;
		}
		p->retries++;
		st->o.stat_retransmits++;
	}
	p->back_psn = psn;
	p->t_prog = tx_tick(st->now);
	st->rw_valid = 1;
	st->rw_qpn = (uint16_t)q;
	st->rw_index = ob->index;
	st->rw_psn = ob->first_psn;
	st->rw_restart = psn;
}

/* The send side of a go-back-N decided last clock: fetch again from the oldest outstanding WQE,
 * send from its first PSN, resume inside it at rw_restart. */
static void go_back(tx_core_t *st)
{
	uint32_t q = st->rw_qpn;
	tx_qs_t *p = &st->qs[q];

	st->qs_port = 1;
	st->qc_port = 1; /* it reads the completion side's list of the QP (ob_discard) */
	st->rw_valid = 0;
	p->psn = st->rw_psn;
	p->restart = 1;
	p->restart_index = st->rw_index;
	p->restart_psn = st->rw_restart;
	st->rd_wait[q] = 0;
	ob_discard(st, q);
	tx_set_ob_tail(st, q, st->ob_head[q]);
	st->rd_started[q] = st->rd_retired[q];
	tx_stop_fetch(st, q, 0);
	tx_unfetch(st, q, 0, 1, st->rw_index, 0);
	tx_wake(st, WK_GOBACK, q);
}

/* ACK/NAK notices: retire (one WQE per clock), or complete in error and flush. */
static void acknowledge(tx_core_t *st)
{
	uint32_t q = st->ack_qpn;
	tx_qc_t *p = &st->qc[q];
	const tx_ob_t *ob = &st->obp[tx_ob_head(st, q)];
	uint32_t type = st->ack_syn & RNIC_AETH_TYPE_MASK;
	int32_t d = rnic_psn_diff(st->ack_psn, ob->last_psn);
	uint32_t rd;

	if (tx_cpl_full(st))
		return;
	if (!tx_ob_n_c(st, q)) {
		st->ack_busy = 0;
		return;
	}
	if (tx_err_c(st, q)) {
		ob_retire(st, q, ob->err ? ob->err : RNIC_WC_STATUS_WR_FLUSH_ERR);
		return;
	}
	rd = tx_is_rd(ob->op);
	if (type == RNIC_AETH_TYPE_ACK && d >= 0 && (!rd || st->ack_rd)) {
		/* acknowledged (a READ/atomic: its response is placed) */
		ob_retire(st, q, RNIC_WC_STATUS_SUCCESS);
		p->t_prog = tx_tick(st->now);
		p->retries = 0;
		p->rnr_retries = 0;
		return;
	}
	if (type == RNIC_AETH_TYPE_ACK && rd && rnic_psn_diff(st->ack_psn, ob->first_psn) >= 0) {
		/* responses of the READ at the head are arriving: progress, and where to ask again */
		p->t_prog = tx_tick(st->now);
		p->retries = 0;
		p->rd_next = (st->ack_psn + 1) & RNIC_PSN_MASK;
		st->ack_busy = 0;
		return;
	}
	if (type != RNIC_AETH_TYPE_ACK && d > 0) {
		/* a NAK acknowledges the WQEs before the PSN it names (9.7.5.1.3, 9.7.5.1.5); a READ's
		 * data is acknowledged only by its responses: wait for them (or the timer) */
		if (rd) {
			st->ack_busy = 0;
			return;
		}
		ob_retire(st, q, RNIC_WC_STATUS_SUCCESS);
		p->t_prog = tx_tick(st->now);
		return;
	}
	st->ack_busy = 0;
	if (type == RNIC_AETH_TYPE_ACK)
		return;
	st->o.stat_naks++;
	if (st->ack_syn == RNIC_AETH_NAK_PSN_SEQ || type == RNIC_AETH_TYPE_RNR) {
		rewind_qp(st, q, st->ack_psn, type == RNIC_AETH_TYPE_RNR ? (st->ack_syn & 0x1f) + 1 : 0);
		return;
	}
	ob_retire(st, q, st->ack_syn == RNIC_AETH_NAK_REM_ACCESS ? RNIC_WC_STATUS_REM_ACCESS_ERR :
			 st->ack_syn == RNIC_AETH_NAK_REM_OP ? RNIC_WC_STATUS_REM_OP_ERR :
			 st->ack_syn == RNIC_AETH_LOCAL_PROT ? RNIC_WC_STATUS_LOC_PROT_ERR :
			 RNIC_WC_STATUS_REM_INV_REQ_ERR);
	tx_qp_fatal(st, q, 0);
	st->ack_busy = 1;
}

/* A QPC committed: both sides' entries of QP q (a commit takes both ports). */
static void commit_qp(tx_core_t *st, uint32_t q)
{
	tx_qs_t *p = &st->qs[q];
	uint32_t ctrl = st->qsf[q].ctrl;
	uint32_t state = RNIC_GET(RNIC_QPC_CTRL_STATE, ctrl);

	/* destroyed or reset: nothing more is read from its rings or memory */
	if (!RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl))
		tx_stop_fetch(st, q, 0);
	if (!RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl) || state <= RNIC_QPS_RTR) {
		tx_unfetch(st, q, 0, 1, 0, 0);
		*p = (tx_qs_t){0};
		st->qc[q] = (tx_qc_t){0};
		st->sq_pi[q] = 0;
		ob_discard(st, q);
		tx_set_ob_head(st, q, 0);
		tx_set_ob_tail(st, q, 0);
		st->ob_fv[q] = 0;
		st->rd_started[q] = st->rd_retired[q] = 0;
		tx_set_err_s(st, q, 0);
		tx_set_err_c(st, q, 0);
		st->held[q] = st->rd_wait[q] = 0;
		if (st->rw_valid && st->rw_qpn == q)
			st->rw_valid = 0;
		p->psn = st->qsf[q].sq_psn;
		st->qc[q].rd_next = p->psn;
	} else if (state == RNIC_QPS_RTS && st->qstate[q] != RNIC_QPS_RTS) {
		p->psn = st->qsf[q].sq_psn;
		st->qc[q].rd_next = p->psn;
	} else if (state == RNIC_QPS_ERR) {
		tx_set_err_s(st, q, 1);
	}
	st->qstate[q] = (uint8_t)state;
	tx_wake(st, WK_COMMIT, q);
}

/* The doorbell of QP entry q (rnic_qp_index of the QPN written) from context ctx: its SQ holds
 * WQEs up to pi. A doorbell behind the one the QP has (a pushed WQE may overtake a doorbell
 * written before it) changes nothing. 0: none of our QPs, not the context's, or not in a state to
 * send (dropped, counted). */
static int ring(tx_core_t *st, uint32_t slot, uint32_t q, uint32_t ctx, uint32_t pi, uint64_t cycle)
{
	uint32_t ctrl = q < RNIC_MAX_QP ? st->db_ctrl[q] : 0;
	uint32_t state = RNIC_GET(RNIC_QPC_CTRL_STATE, ctrl), size = 1u << st->sq_log[q % RNIC_MAX_QP];

	q %= RNIC_MAX_QP;
	if (!RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl) || RNIC_GET(RNIC_QPC_CTRL_CTX, ctrl) != ctx ||
	    (state != RNIC_QPS_RTS && state != RNIC_QPS_ERR) || (uint16_t)(pi - st->sq_ci[q]) > size) {
		st->o.stat_drop_db++;
		return 0;
	}
	if ((uint16_t)(pi - st->sq_pi[q]) <= size)
		st->sq_pi[q] = (uint16_t)pi;
	tx_wake(st, slot, q);
	st->ts_db[q] = (uint32_t)cycle;
	return 1;
}

/* A WQE's first beat: whether it has a scatter list whose first entry's key is to be looked at
 * ahead (la_note, with the beat that holds the entry) */
static uint32_t la_first(const uint8_t *b)
{
	return RNIC_WQE_NUM_SGE_GET(b) && !(RNIC_WQE_FLAGS_GET(b) & RNIC_WQE_FLAG_INLINE);
}

static void la_note(tx_core_t *st, uint32_t slot, uint32_t first, const uint8_t *b)
{
	st->la_key[slot % TX_PF] = RNIC_SGE_LKEY_GET(b + RNIC_WQE_SGE_OFF % RNIC_BEAT);
	st->la_addr[slot % TX_PF] = RNIC_SGE_ADDR_GET(b + RNIC_WQE_SGE_OFF % RNIC_BEAT);
	st->la_ok[slot % TX_PF] = (uint8_t)(first && RNIC_SGE_LEN_GET(b + RNIC_WQE_SGE_OFF % RNIC_BEAT) != 0);
}

/* A WQE pushed through the CTX_SQ_PUSH window, in two beats. It is its QP's doorbell too; when the
 * QP has nothing before it still to fetch and no WQE read is in flight, it goes into the prefetch
 * ring ready, and the NIC does not read it from host memory (else it is fetched as any other:
 * it is in the ring too, where a retransmission reads it again). */
static void pushed(tx_core_t *st, const rnic_tx_in_t *in)
{
	const uint8_t *w = st->push_beat;
	uint32_t qe, q, idx, i, take;
	tx_pf_t *f;

	if (!in->push_last) {
		for (i = 0; i < RNIC_BEAT; i++)
			st->push_beat[i] = in->push_data[i];
		st->push_half = 1;
		return;
	}
	if (!st->push_half) {
		st->o.stat_drop_db++; /* a second half without its first */
		return;
	}
	st->push_half = 0;
	qe = rnic_qp_index(RNIC_WQE_PUSH_QPN_GET(w)); /* ring() checks it is one of ours */
	q = qe % RNIC_MAX_QP;
	idx = RNIC_WQE_PUSH_INDEX_GET(w);
	take = st->sq_pi[q] == st->sq_ci[q] && st->sq_ci[q] == idx && st->pf_fill == st->pf_tail &&
	       st->pf_tail - st->pf_head < TX_PF && !tx_err_s(st, q) && !st->rw_valid && tx_may_send(st, q, tx_ob_n_s(st, q));
	if (!ring(st, WK_PUSH, qe, in->push_ctx, idx + 1, in->cycle) || !take)
		return;
	f = &st->pf[st->pf_tail % TX_PF];
	for (i = 0; i < RNIC_BEAT; i++) {
		st->pf_wqe[st->pf_tail % TX_PF][i] = w[i];
		st->pf_wqe[st->pf_tail % TX_PF][RNIC_BEAT + i] = in->push_data[i];
	}
	la_note(st, st->pf_tail, la_first(w), RNIC_WQE_SGE_OFF / RNIC_BEAT ? in->push_data : w);
	f->qpn = (uint16_t)q;
	f->index = (uint16_t)idx;
	f->ready = 1;
	f->discard = 0;
	st->pf_tail++;
	st->pf_fill++;
	st->sq_ci[q] = (uint16_t)(st->sq_ci[q] + 1);
	st->pf_fetched[q]++;
	st->o.stat_pushed++;
}

/* A fence goes to the read channel once the packet being read has all its reads out and the
 * scheduler's WQE reads are in the channel's list (wqreqq empty, none asked now): it comes back
 * (rdbeatq) when every read issued before it has returned its data, and the QPs invalidated
 * before it are read no more. */
static void fence(tx_core_t *st, const rnic_tx_wqreqq_t *wqs)
{
	if (st->fence_pending && !st->iss_left && !tx_rd_busy(st) && !tx_rd_full(st) && !st->wq_on &&
	    !rnic_tx_wqreqq_count(wqs)) {
		tx_read_req(st, 0, 0, REQ_FENCE);
		st->rq.token = st->fence_token;
		st->fence_pending = 0;
	}
}

/* The WQE at the head of the prefetch ring can start this clock, as the builder's clock begins:
 * no message in progress nor its reads, the send side's port free (and not to be taken by a
 * refused packet's error: a region gone, poison, needs the issuer at a request's reads) */
static int start_ready(const tx_core_t *st, const rnic_tx_fltq_t *fltq)
{
	const tx_pf_t *f = &st->pf[st->pf_head % TX_PF];

	return st->pf_head != st->pf_tail && f->ready && !f->discard && !st->phase && !st->o.rdx_valid &&
	       !(st->iss_left && !st->iss_rsp) && st->wake_ok && !st->qs_port && !st->rw_valid && st->ob_room &&
	       !st->uf_now && !(rnic_tx_fltq_count(fltq) && !rnic_tx_fltq_head(fltq)->rsp);
}

/* The WQE at the head of the prefetch ring, ready since an earlier clock (its block RAM answers
 * a clock after it is written), is dropped or becomes the message in progress once its scatter
 * list is checked. */
static void start_next(tx_core_t *st, const tx_look_t *lk, uint32_t ready)
{
	const tx_pf_t *f = &st->pf[st->pf_head % TX_PF];
	uint32_t i;

	if (st->pf_head == st->pf_tail || !f->ready)
		return;
	if (f->discard) {
		st->pf_head++; /* dropped: its QP fetches it again */
	} else if (tx_sge_left(st)) {
		tx_sge_check(st, lk); /* its scatter list, an entry a clock */
	} else if (ready) {
		/* every entry checked in an earlier clock (the check's registers, chk_*, are this
		 * head's if chk_head says so) */
		st->chk_mine = st->chk_head == st->pf_head && !st->t.cfg_mpt;
		st->qs_port = 1;
		for (i = 0; i < RNIC_WQE_BYTES; i++)
			st->wqe[i] = st->pf_wqe[st->pf_head % TX_PF][i];
		st->qpn = f->qpn;
		st->wqe_index = f->index;
		st->wqe_bad = f->bad;
		st->pf_started[f->qpn]++;
		st->pf_head++;
		tx_start_message(st);
	}
}

/* The copies' writes of this clock land (tx.h) */
static void copies_land(tx_core_t *st)
{
	if (st->cw_head.valid)
		st->ob_head_s[st->cw_head.q] = st->ob_head_k[st->cw_head.q] = st->cw_head.v;
	if (st->cw_tail.valid)
		st->ob_tail_c[st->cw_tail.q] = st->ob_tail_k[st->cw_tail.q] = st->cw_tail.v;
	if (st->cw_err_s.valid)
		st->err_s_c[st->cw_err_s.q] = st->err_s_k[st->cw_err_s.q] = (uint8_t)st->cw_err_s.v;
	if (st->cw_err_c.valid)
		st->err_c_s[st->cw_err_c.q] = st->err_c_k[st->cw_err_c.q] = (uint8_t)st->cw_err_c.v;
	st->cw_head.valid = st->cw_tail.valid = st->cw_err_s.valid = st->cw_err_c.valid = 0;
	st->fl_valid |= st->fl_pend; /* its error flag's copy is written now */
	st->fl_pend = 0;
}

/* A configuration write from the firmware: the tables (the QPC fields the send side, the packet
 * builder, the completion side and the doorbell read: no kernel keeps a whole QPC), a commit to
 * act on next clock, a fence. */
static void configure(tx_core_t *st, const rnic_tx_in_t *in)
{
	uint32_t idx;
	int word = in->cfg_valid ? rnic_qpc_word(in->cfg_addr, &idx) : -1;

	st->commit_valid = word == 0;
	st->commit_qpn = (uint16_t)(st->commit_valid ? idx : 0);
	if (!in->cfg_valid)
		return;
	rnic_tables_cfg(&st->t, in->cfg_addr, in->cfg_data);
	rnic_icm_cfg(st->icm, in->cfg_addr, in->cfg_data);
	if (word >= 0) {
		tx_qsf_cfg(&st->qsf[idx], (uint32_t)word, in->cfg_data);
		rnic_path_cfg(&st->hq[idx], (uint32_t)word, in->cfg_data);
		if (word == RNIC_QPC_CTRL / 4) {
			st->db_ctrl[idx] = (uint16_t)in->cfg_data;
			st->qcf[idx].ctx = (uint8_t)RNIC_GET(RNIC_QPC_CTRL_CTX, in->cfg_data);
			st->qcf[idx].type = (uint8_t)RNIC_GET(RNIC_QPC_CTRL_TYPE, in->cfg_data);
		}
		if (word == RNIC_QPC_CQN / 4)
			st->qcf[idx].cqn = (uint16_t)RNIC_GET(RNIC_QPC_CQN_SEND, in->cfg_data);
		if (word == RNIC_QPC_SQ_BASE_LO / 4)
			st->sq_base[idx] = (st->sq_base[idx] & ~0xffffffffull) | in->cfg_data;
		if (word == RNIC_QPC_SQ_BASE_HI / 4)
			st->sq_base[idx] = (st->sq_base[idx] & 0xffffffffull) | (uint64_t)in->cfg_data << 32;
		if (word == RNIC_QPC_RING_LOG / 4)
			st->sq_log[idx] = (uint8_t)RNIC_GET(RNIC_QPC_RING_LOG_SQ, in->cfg_data);
		if (word == RNIC_QPC_RETRY / 4)
			st->qcf[idx].retry = (uint16_t)in->cfg_data;
	}
	if (rnic_cfg_fence(in->cfg_valid, in->cfg_addr, in->cfg_data, &st->fence_token))
		st->fence_pending = 1;
}

/* The timers of the QPs (ACK timeout, RNR wait, a QP in error to flush), looked at by the
 * completion side in the clocks it has nothing else to do, as the timer wheel (tx_wheel.c) hands
 * them over. */

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
		tx_wake(st, WK_TIMER, q);
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

		st->tm_valid = 1;
		st->tm_q = (uint16_t)q;
		st->tm_psn = resume ? p->rd_next : ob->first_psn;
		return soon;
	}
	return tick_cycle(st, from + (1u << t) + 1);
}

/* A QP's timers to look at: the one the send side found in error, or the wheel's next */
static int timer_due(const tx_core_t *st, const rnic_tx_twdueq_t *due, const rnic_tx_twretq_t *ret)
{
	return st->fl_valid || (rnic_tx_twdueq_count(due) && rnic_tx_twretq_room(ret));
}

/* The completion side's spare clock: the QP the send side found in error, else the wheel's next
 * QP, answered with when to look at it again (or that it has nothing to time). */
static void check_timer(tx_core_t *st, rnic_tx_twdueq_t *due, rnic_tx_twretq_t *ret)
{
	tx_twret_t *r = rnic_tx_twretq_slot(ret);
	uint32_t fl = st->fl_valid, q;
	uint64_t d;

	if (!timer_due(st, due, ret))
		return;
	q = fl ? st->fl_q : *rnic_tx_twdueq_head(due);
	d = check_qp(st, q); /* one call: one QP's timers a clock, whichever asks */
	if (fl) {
		st->fl_valid = 0;
		return;
	}
	rnic_tx_twdueq_pop(due);
	r->q = (uint16_t)q;
	r->drop = d == UINT64_MAX;
	r->tick = (uint32_t)((d + (1u << TW_SHIFT) - 1) >> TW_SHIFT);
	rnic_tx_twretq_push(ret, NULL);
}

/* A WQE's beat from the read channel into the prefetch ring */
static void wqe_beat(tx_core_t *st, const tx_rdbeat_t *b)
{
	tx_pf_t *f = &st->pf[st->pf_fill % TX_PF];
	uint32_t i;

	for (i = 0; i < RNIC_BEAT; i++)
		st->pf_wqe[st->pf_fill % TX_PF][st->pf_beats * RNIC_BEAT + i] = b->data[i];
	f->bad = (st->pf_beats ? f->bad : 0) | b->err;
	if (st->pf_beats == 0)
		st->pf_la_ok = la_first(b->data);
	if (st->pf_beats == RNIC_WQE_SGE_OFF / RNIC_BEAT)
		la_note(st, st->pf_fill, st->pf_la_ok, b->data);
	if (++st->pf_beats == RNIC_WQE_BYTES / RNIC_BEAT) {
		f->ready = 1;
		st->pf_fill++;
		st->pf_beats = 0;
	}
}

/* What the completion side takes this clock, from the registers as it begins: the go-back-N of an
 * ACK timeout found last clock, else an ACK notice (the RX kernel holds the next one until this
 * one is taken), else a UC/UD message whose last packet left (the emitter), else garbage to free
 * or the ACK timer (idle); none while a go-back-N waits for the send side, nor in a commit's
 * clock (it takes both sides' ports) */
enum { CP_NONE, CP_TIMEOUT, CP_ACK, CP_RETIRE, CP_IDLE };
static uint32_t cpl_pick(const tx_core_t *st, const rnic_tx_retq_t *retq)
{
	if (!st->wake_ok || st->qc_port)
		return CP_NONE;
	if (st->tm_valid)
		return st->rw_valid ? CP_NONE : CP_TIMEOUT;
	if (st->ack_busy && !st->rw_valid)
		return CP_ACK;
	if (rnic_tx_retq_count(retq) && !tx_cpl_full(st) && !(st->rw_valid && !st->qs_port))
		return CP_RETIRE;
	return st->ack_busy || st->rw_valid ? CP_NONE : CP_IDLE;
}

void tx_core(tx_core_t *st, const rnic_tx_in_t *in, rnic_tx_pkq_t *pkq, rnic_tx_rdreqq_t *reqs, rnic_tx_wqreqq_t *wqs,
	     rnic_tx_rdbeatq_t *beats, rnic_tx_crdq_t *crd, rnic_tx_retq_t *retq, rnic_tx_fltq_t *fltq, rnic_tx_twaddq_t *twadd, rnic_tx_twdueq_t *twdue,
	     rnic_tx_twretq_t *twret, rnic_tx_rjq_t *rjq, rnic_tx_rjxq_t *rjxq, rnic_tx_rjcq_t *rjcq,
	     rnic_tx_out_t *out)
{
#pragma HLS PIPELINE II = 1
	const tx_rdbeat_t *b = rnic_tx_rdbeatq_head(beats);
	uint32_t kind = rnic_tx_rdbeatq_count(beats) ? b->kind : REQ_PAYLOAD; /* none: no kind it brings */
	tx_look_t lk;
	uint32_t rw, start, pick;

	if (in->rst || !(st->sweep & RNIC_SWEPT)) {
		if (in->rst)
			tx_reset(st);
		else
			tx_sweep(st, in);
		*out = st->o;
		return;
	}
	st->now = in->cycle;
	tx_wakes_land(st);
	rnic_caches_clock(&st->t, in->cfg_valid, in->cfg_addr);
	rnic_tlb_hint(&st->t);
	st->obn_fw = 0;
	st->ob_room = tx_ob_free(st) != 0;
	/* room for last clock's slots, still to land, and this clock's */
	st->cpl_ok = st->cpl_tail - st->cpl_head < TX_CPL_FIFO - 2 * TX_CPL_CLK;
	cpls_land(st);
	/* a commit takes both sides' ports this clock, a pushed WQE the send side's */
	st->qs_port = st->commit_valid || (in->push_valid && st->o.push_ready && in->push_last);
	st->qc_port = st->commit_valid;
	st->uf_now = st->uf.valid;
	if (st->uf_now)
		unfetch_land(st);
	st->rq_on = st->wq_on = 0;
	st->rq_room = rnic_tx_rdreqq_room(reqs) != 0;
	if (rnic_tx_crdq_count(crd)) {
		st->credit -= rnic_tx_crdq_head(crd)->n;
		st->rd_used = (uint8_t)(st->rd_used - rnic_tx_crdq_head(crd)->done);
		rnic_tx_crdq_pop(crd);
	}
	/* transfers at this edge */
	if (st->o.cpl_valid && in->cpl_ready)
		st->o.cpl_valid = 0;
	if (st->o.rdx_valid && in->rdx_ready)
		st->o.rdx_valid = 0;
	if (in->ack_valid && st->o.ack_ready) {
		st->ack_busy = 1;
		st->ack_qpn = in->ack_qpn % RNIC_MAX_QP;
		st->ack_psn = in->ack_psn;
		st->ack_syn = in->ack_syndrome;
		st->ack_rd = in->ack_rd;
	}
	/* decided from the registers as the clock begins, before anything of this clock is: the
	 * completion side's event, a go-back-N's send side (go_back), the WQE start (the message in
	 * progress all built, its reads all made: a start is built from the next clock on) and the
	 * scheduler's fetch */
	pick = cpl_pick(st, retq);
	rw = st->rw_valid && !st->qs_port;
	start = start_ready(st, fltq);
	tx_schedule(st, in, wqs, pick == CP_IDLE && !st->g_n && timer_due(st, twdue, twret));
	/* an MTT line's or an MPT entry's beat before this clock's lookup (tx_lookup), once the
	 * last has landed: its landing at the clock's end takes the cache's ports, the lookups of this
	 * clock wait for it */
	if (kind == REQ_MTT && !st->t.fill_land) {
		rnic_tlb_filled(&st->t, b->data, b->err, (uint32_t)st->now);
		rnic_tx_rdbeatq_pop(beats);
	} else if (kind == REQ_MPT && !st->t.mf_land) {
		rnic_mpt_filled(&st->t, b->data, b->err, (uint32_t)st->now);
		rnic_tx_rdbeatq_pop(beats);
	}
	tx_lookup(st, &lk, rnic_tx_fltq_count(fltq));
	/* the completion side (it sees the outstanding WQEs as they were at the clock's start; a
	 * go-back-N it decides is done by the send side from the next clock on, go_back) */
	if (pick == CP_TIMEOUT) {
		st->qc_port = 1;
		st->tm_valid = 0;
		rewind_qp(st, st->tm_q, st->tm_psn, 0);
	} else if (pick == CP_ACK) {
		st->qc_port = 1;
		acknowledge(st);
	} else if (pick == CP_RETIRE) {
		st->qc_port = 1;
		ob_retire(st, rnic_tx_retq_head(retq)->qpn, rnic_tx_retq_head(retq)->status);
		rnic_tx_retq_pop(retq);
	} else if (pick == CP_IDLE) {
		st->qc_port = 1;
		if (st->g_n)
			ob_collect(st);
		else
			check_timer(st, twdue, twret);
	}
	if (rw)
		go_back(st);
	/* a QPC committed (its word 0 written) last clock: read back now, a clock after the write */
	if (st->commit_valid)
		commit_qp(st, st->commit_qpn);
	/* the builder's clock, then the WQE start's */
	tx_build(st, &lk, pkq, fltq, rjq, rjxq, rjcq);
	start_next(st, &lk, start);
	if (in->db_valid && st->o.db_ready)
		ring(st, WK_DB, rnic_qp_index(in->db_qpn), in->db_ctx, in->db_pi, in->cycle);
	if (in->push_valid && st->o.push_ready)
		pushed(st, in);

	if (kind == REQ_WQE) {
		wqe_beat(st, b);
		rnic_tx_rdbeatq_pop(beats);
	} else if (kind == REQ_FENCE) {
		/* the reads before the fence have returned their data */
		st->o.fence = b->token;
		rnic_tx_rdbeatq_pop(beats);
	}
	st->la_fill = st->pf_fill;
	if (!st->o.cpl_valid && st->cpl_head != st->cpl_tail) {
		st->o.cpl = st->cpl[st->cpl_head++ % TX_CPL_FIFO];
		st->o.cpl_valid = 1;
	}
	fence(st, wqs);
	if (st->rq_on)
		rnic_tx_rdreqq_push(reqs, &st->rq);
	st->rd_used = (uint8_t)(st->rd_used + st->rq_on + st->wq_on);
	tx_join(st);
	/* writes that land at the clock's edge, after this clock's reads */
	if (st->ts_pending)
		st->t_sent[st->ts_qpn] = tx_tick(st->now);
	st->ts_pending = 0;
	tx_fetch_land(st);
	if (st->pop_valid)
		st->act_clr[st->pop_q] = st->pop_tok;
	st->pop_valid = 0;
	if (st->tw_add) {
		/* the wheel takes an add in every clock it has one: there is room */
		assert(rnic_tx_twaddq_room(twadd));
		rnic_tx_twaddq_push(twadd, &st->tw_add_q);
		st->tw_add = 0;
	}
	copies_land(st);
	rnic_tlb_land(&st->t);
	rnic_mpt_land(&st->t);
	configure(st, in);
	RNIC_CACHES_STATS_OUT(&st->o, &st->t);

	/* readies for the next clock: only what can surely be taken then */
	st->wake_ok = TX_WAKE - (st->wake_tail - st->wake_head) >= 2 * TX_WAKE_CLK;
	st->o.db_ready = st->wake_ok && !st->commit_valid && !st->push_half && !st->uf.valid;
	st->o.push_ready = st->wake_ok && !(st->commit_valid && st->push_half) && !st->uf.valid;
	st->o.ack_ready = !st->ack_busy && !st->tm_valid; /* a timeout's go-back-N may take ack_* (rewind_qp) */
	*out = st->o;
}
