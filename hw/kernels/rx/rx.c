/* RX kernel: RoCEv2 receive path, RC responder, and placement of the responses to our requests.
 * Here rx_core, the stage after the QPC cache (rx_ctx.c) and the requester's table (rx_rdq.c): the
 * processing loop over the frames handed on with their QPs' contexts (and a response's verdict),
 * receive WQE fetches and the MPT and MTT caches (their reads through the read channel,
 * rx_rdport.c), and what each frame writes and produces, as commands to the store; the frames'
 * headers and what each opcode does in rx_req.c. Not yet split into stages: one clock is one
 * call (rx.h).
 *
 * Per clock (contract: docs/ARCHITECTURE.md): the processing side works on the oldest frame
 * come in whole (its ICRC good: nothing of a frame with a bad one is acted on), one command to
 * the store or read per clock: a payload segment to write (split at 4 KiB pages and scatter
 * entries), the frame to the firmware, a receive WQE or atomic operand read, the frame's end
 * with what it produces: a completion, an ACK notice for the TX kernel (our requests) or a
 * responder frame for the TX kernel to send (ACK/NAK, ATOMIC ACK, READ responses: one queue, so
 * they leave in PSN order).
 *
 * Responder rules: IBTA Vol. 1 9.7.5 (PSN checks, duplicates, NAKs), 9.7.4.1 (receive WQEs,
 * RNR), 9.4 (SEND, WRITE, READ, atomics and their length rules), 10.6.3 (rkey, PD, access,
 * bounds).
 */
#include "rx_int.h"

/* This clock's command to the store (rx_msg.h), begun empty by the first that adds to it: one a
 * clock (rx_core starts nothing that would add a second) */
rx_cmd_t *rx_cmd(rx_core_t *st)
{
	if (!st->cmd_on) {
		st->cmd = (rx_cmd_t){0};
		st->cmd_on = 1;
	}
	return &st->cmd;
}

/* The QP's receive WQEs come from a shared receive queue: its number, else -1. */
static int qp_srq(const rx_core_t *st, uint32_t qpn)
{
	uint32_t n = st->rq_srq[qpn] & ~RQ_SRQ;

	return st->rq_srq[qpn] & RQ_SRQ && n < RNIC_MAX_SRQ && SRQC_F(st, n, CTRL, VALID) ? (int)n : -1;
}

/* A receive WQE is posted and not yet fetched for QP qpn (its own ring or its SRQ's). */
int rx_rq_avail(const rx_core_t *st, uint32_t qpn)
{
	int n = qp_srq(st, qpn);

	if (st->rq_srq[qpn] & RQ_SRQ)
		return n >= 0 && st->srq[n].pi != st->srq[n].ci;
	return st->rq_pi[qpn] != st->rw_got[qpn];
}

/* An asynchronous event for the host (EQE through the CQ kernel). */
static void raise_event(rx_core_t *st, uint32_t type, uint32_t data, uint32_t ctx)
{
	st->posts.evt = (rnic_cpl_t){0};
	st->posts.evt.evt = (uint8_t)type;
	st->posts.evt.qpn = data;
	st->posts.evt.ctx = (uint8_t)ctx;
	st->posts.left |= RX_P_EVT;
}

int rx_need_rwqe(uint32_t op)
{
	return op == RNIC_BTH_OP_SEND_FIRST || op == RNIC_BTH_OP_SEND_ONLY || op == RNIC_BTH_OP_SEND_ONLY_IMM ||
	       op == RNIC_BTH_OP_WRITE_LAST_IMM || op == RNIC_BTH_OP_WRITE_ONLY_IMM;
}

/* The end of this clock's processing (rx_finish_frame), in one place: the frame finished, and
 * what it (or a flush) produced to the store, which sends it once the writes before it are taken */
static void frame_end(rx_core_t *st)
{
	const rx_frame_t *f = &st->cur.f;
	rx_qp_t *q = &st->qp[st->qpn];
	uint32_t i;

	if (st->fin == FIN_FRAME) {
		st->ovr_n = 0;
		st->seg_on = 0;
		rx_rw_release(st, st->qpn);
		if (st->back) {
			/* the message's cursor moves on */
			q->c_sge = st->wc_sge;
			q->c_off = st->wc_off;
			st->back = 0;
		}
		for (i = 0; i < RNIC_MAX_SGE; i++)
			st->wsge[i] = (rx_sge_t){0};
		rx_cmd(st)->release = f->beats;
		st->cur_on = 0;
		st->fr_head++;
		st->redo = 0;
	}
	st->fin = FIN_NONE;
	st->busy = B_IDLE;
	if (!st->posts.left)
		return;
	st->posts.n_qpn = st->qpn;
	rx_cmd(st)->p = st->posts;
	st->posts.left = 0;
}

/* A responder frame for the TX kernel, sent after this frame's payload is placed. */
void rx_respond(rx_core_t *st, uint32_t kind, uint32_t psn, uint32_t syndrome)
{
	if (st->uc)
		return; /* UC: nothing is acknowledged, errors drop the message silently */
	st->posts.rsp = (rnic_rsp_t){0};
	st->posts.rsp.kind = (uint8_t)kind;
	st->posts.rsp.qpn = st->qpn;
	st->posts.rsp.psn = psn & RNIC_PSN_MASK;
	st->posts.rsp.syndrome = (uint8_t)syndrome;
	st->posts.rsp.msn = st->qp[st->qpn].msn;
	st->posts.left |= RX_P_RSP;
}

void rx_nak(rx_core_t *st, uint32_t psn, uint32_t syndrome)
{
	if (syndrome == RNIC_AETH_NAK_REM_ACCESS)
		st->o.stat_nak_access++;
	else if (syndrome != RNIC_AETH_NAK_PSN_SEQ && (syndrome & RNIC_AETH_TYPE_MASK) == RNIC_AETH_TYPE_NAK)
		st->o.stat_nak_inv++;
	/* invalid request, remote access and remote operational errors end the connection on the
	 * responder's side too (IBTA 9.9.3.1.2): nothing after the NAKed request executes */
	if (syndrome != RNIC_AETH_NAK_PSN_SEQ && (syndrome & RNIC_AETH_TYPE_MASK) == RNIC_AETH_TYPE_NAK && !st->uc &&
	    !st->qp[st->qpn].fatal) {
		st->qp[st->qpn].fatal = 1;
		raise_event(st, RNIC_EQE_TYPE_QP_FATAL, rnic_qpn(st->qpn), RQ_CTX(st->rq_ctl[st->qpn]));
	}
	rx_respond(st, RNIC_RSP_KIND_ACK, psn, syndrome);
}

/* A notice for the TX kernel about our own requests (ACK/NAK, or a READ/atomic response placed). */
void rx_notice(rx_core_t *st, uint32_t psn, uint32_t syndrome, uint32_t rd)
{
	st->posts.n_psn = psn;
	st->posts.n_syn = (uint8_t)syndrome;
	st->posts.n_rd = (uint8_t)rd;
	st->posts.left |= RX_P_NTC;
}

/* QP qpn may take receive WQEs fetched ahead */
static void prefetch_hint(rx_core_t *st, uint32_t qpn)
{
	if (st->pf_tail - st->pf_head < RX_PF_HINTS)
		st->pf_q[st->pf_tail++ % RX_PF_HINTS] = (uint16_t)qpn;
}

/* the receive WQE wr_id (the QP's current one) completes */
void rx_completion(rx_core_t *st, uint64_t wr_id, uint32_t opcode, uint32_t status, uint32_t len)
{
	rx_qp_t *q = &st->qp[st->qpn];

	st->posts.cpl = (rnic_cpl_t){0};
	st->posts.cpl.cqn = (uint16_t)RQ_CQN(st->rq_ctl[st->qpn]);
	st->posts.cpl.qpn = rnic_qpn(st->qpn);
	st->posts.cpl.src_qp = st->dest_qpn[st->qpn];
	st->posts.cpl.wr_id = wr_id;
	st->posts.cpl.byte_len = status ? 0 : len;
	st->posts.cpl.opcode = (uint8_t)opcode;
	st->posts.cpl.status = (uint8_t)status;
	st->posts.cpl.ts_start = q->ts_first;
	st->posts.left |= RX_P_CPL;
	if (RW_N(st, st->qpn))
		st->rw_used[st->qpn]++;
	st->hint_cpl = 1; /* its QP's prefetch hint, at the next clock's end */
	st->hint_cpl_q = (uint16_t)st->qpn;
}

/* The bus address of va in the MR whose MPT entry is e (admitted by rnic_mpt_live): 1 and *bus
 * (the lines after it read ahead); 0: its MTT line is on its way, or is asked for as the next clock begins
 * (rx_tlb_issue), try again; -1: without context memory the line cannot be read. */
static int xlate(rx_core_t *st, const uint32_t e[RNIC_MPT_WORDS], uint64_t va, uint64_t *bus, uint32_t on)
{
	uint64_t off;
	uint32_t mi = rnic_mtt_index(e, va, &off);
	int hit = rnic_tlb_get(&st->t, mi, bus, on);

	if (hit > 0 && *bus == RNIC_BUS_FAULT)
		return -1; /* its line's read was refused: as without context memory */
	if (!hit && !rnic_icm_bus(st->icm, RNIC_ICM_MTT_OFF))
		return -1;
	/* its line missing and not on its way (its read goes before the look-ahead's, even while the
	 * reads on their way are as many as can be), or the lines after it to read ahead */
	st->tl_on = (hit <= 0 && rnic_tlb_wanted(&st->t, mi)) || (hit > 0 && st->t.ahead);
	st->tl_kind = hit > 0 ? RNIC_TLB_NEXT : RNIC_TLB_MISS;
	st->tl_mi = mi;
	if (hit > 0)
		*bus += off;
	return hit > 0;
}

/* The cursor's next segment of the frame's payload: its scatter entry, address and length (cut
 * at the entry's end, the 4 KiB page and the payload's end) */
static const rx_sge_t *seg_next(const rx_core_t *st, uint64_t *addr, uint32_t *n)
{
	const rx_sge_t *g = &st->wsge[st->wc_sge % RNIC_MAX_SGE];
	uint32_t room;

	*addr = g->addr + st->wc_off;
	*n = g->len - st->wc_off;
	room = RNIC_PAGE_SIZE_BYTES - (uint32_t)(*addr & (RNIC_PAGE_SIZE_BYTES - 1));
	if (*n > room)
		*n = room;
	if (*n > st->pay_left)
		*n = st->pay_left;
	return g;
}

/* This clock's lookups, one of the MPT cache and one of the TLB (a port each), for what the
 * processing side does in it: B_SEG the cursor's segment, B_ATX the atomic's operand, each
 * checked against its region (rnic_mpt_live) and translated from its key's entry in se_e; the
 * MPT cache's port is that key's when se_e holds another's (the write waits a clock: lk->hit 0),
 * else the key the frame at the head is checked with before it is dispatched (head: it is this
 * clock; rx_head_key). The entry a lookup finds goes to se_e for the next clock (written as
 * selects: nothing of this clock waits on it). */
static void lookup(rx_core_t *st, rx_look_t *lk, uint32_t head)
{
	const rx_sge_t *g = &st->wsge[0];
	uint64_t addr = g->addr;
	uint32_t key = 0, n = 8, on = 0, seg = st->busy == B_SEG || st->busy == B_ATX, mine, fill, i;
	uint32_t e[RNIC_MPT_WORDS];
	int hit = -1;

	lk->hit = -1;
	lk->live = 0;
	lk->x = 0;
	if (st->t.cfg_mpt)
		st->se_valid = 0; /* the MPT is written: looked up again */
	if (st->busy == B_SEG) {
		g = seg_next(st, &addr, &n);
		on = st->pay_left > n || st->seg_on;
	}
	mine = seg && !(st->se_valid && st->se_key == g->key);
	if (seg && !mine) {
		lk->hit = 1;
		lk->live = (uint8_t)rnic_mpt_live(st->se_e, g->key, g->access, addr, n);
		if (lk->live)
			lk->x = xlate(st, st->se_e, addr, &lk->bus, on);
		st->se_valid = lk->live; /* an entry that refuses is read again (a key refused once) */
		st->t.mpt_hits++; /* the key's entry on chip, as a lookup that hits */
	}
	if (mine) {
		key = g->key;
		lk->hit = 0;
	}
	if (mine || (!seg && st->busy == B_IDLE && head && rx_head_key(st, &key))) {
		hit = rx_mpt_get(st, key, e);
		if (!mine) {
			lk->hit = hit;
			for (i = 0; i < RNIC_MPT_WORDS; i++)
				lk->e[i] = e[i];
		}
	}
	fill = hit > 0;
	st->se_valid |= (uint8_t)fill;
	st->se_key = fill ? key : st->se_key;
	for (i = 0; i < RNIC_MPT_WORDS; i++)
		st->se_e[i] = fill ? e[i] : st->se_e[i];
}

/* Next DMA write segment of the frame's payload, to the store: cut at scatter entries and 4 KiB
 * pages. -1: the region is no longer what the message was admitted to (rnic_mpt_live), nothing
 * is written; 1: its key's MPT entry or its page's translation is not there yet, nothing changed. */
static int start_segment(rx_core_t *st, const rx_look_t *lk)
{
	const rx_frame_t *f = &st->cur.f;
	rx_cmd_t *c;
	uint32_t i, n;
	uint64_t addr;
	const rx_sge_t *g = seg_next(st, &addr, &n);

	if (lk->hit <= 0)
		return 1;
	if (!lk->live || lk->x < 0)
		return -1;
	if (!lk->x)
		return 1;
	c = rx_cmd(st);
	c->kind = RX_CMD_SEG;
	c->start = f->start;
	c->addr = lk->bus;
	c->len = (uint16_t)n;
	/* the payload's byte src is the frame's pay_off + src - gh (pay_off >= gh: the GRH area is
	 * shorter than the headers before any payload); its GRH area's bytes from src on */
	c->from = st->pay_off + st->src - st->gh;
	c->gh = (uint8_t)(st->src < st->gh ? st->gh - st->src : 0);
	for (i = 0; i < RNIC_GRH_LEN; i++)
		c->grh[i] = i < c->gh ? st->grh[(st->src + i) % RNIC_GRH_LEN] : 0;
	c->ovr_at = (int32_t)(st->ovr_off - c->from);
	c->ovr_val = st->ovr_val;
	c->ovr_n = st->ovr_n;
	st->src += n;
	st->wc_off += n;
	if (st->wc_off == g->len) {
		st->wc_sge++;
		st->wc_off = 0;
	}
	st->pay_left -= n;
	return 0;
}

/* The frame's next payload segment, to the store (the frame finished with its last), or, its
 * page's translation still to come, tried again next clock (B_SEG), or the frame cut. */
static void next_segment(rx_core_t *st, const rx_look_t *lk)
{
	int r = start_segment(st, lk);

	if (r < 0)
		rx_cut(st);
	else if (!r && !st->pay_left)
		rx_finish_frame(st);
	else
		st->busy = B_SEG;
}

/* A region the frame lands in was deregistered, re-registered or shrunk after its message
 * started: nothing more of the frame is placed and the message fails, as if its key had been
 * bad from the start (IBTA 10.6.3 checks every packet). What the frame was to produce once placed
 * becomes the error: a NAK and the QP-fatal event for a request, an error completion for a
 * datagram, an error for our own READ/atomic whose response could not be placed. */
void rx_cut(rx_core_t *st)
{
	rx_qp_t *q = &st->qp[st->qpn];

	st->o.stat_cut++;
	st->pay_left = 0;
	if (st->kind == K_RESP) {
		rx_notice(st, st->psn, RNIC_AETH_LOCAL_PROT, 1);
	} else if (st->kind == K_UD) {
		st->posts.cpl.status = RNIC_WC_STATUS_LOC_PROT_ERR;
		st->posts.cpl.byte_len = 0;
	} else {
		if (st->kind == K_SEND) {
			rx_completion(st, CUR_RWQE(st, st->qpn)->id, RNIC_WC_OP_RECV, RNIC_WC_STATUS_LOC_PROT_ERR, 0);
		} else if (st->posts.left & RX_P_CPL) {
			/* a WRITE with immediate: its receive WQE is flushed with the QP instead */
			st->posts.left &= (uint8_t)~RX_P_CPL;
			st->rw_used[st->qpn]--;
		}
		q->in_msg = MSG_NONE;
		rx_nak(st, st->psn, st->kind == K_SEND ? RNIC_AETH_NAK_REM_OP : RNIC_AETH_NAK_REM_ACCESS);
	}
	rx_finish_frame(st);
}

/* Place `len` bytes of the frame from byte `src` at the cursor, then finish the frame: its
 * segments from the next clock on (B_SEG), so that one lookup of each cache serves a clock. */
void rx_place(rx_core_t *st, uint32_t src, uint32_t len)
{
	st->src = 0;
	st->pay_off = src + st->l3;
	st->gh = 0;
	st->pay_left = len;
	if (!len)
		rx_finish_frame(st);
	else
		st->busy = B_SEG;
}

/* Cursor at byte `off` of a scatter list. */
void rx_seek(rx_core_t *st, const rx_sge_t *sge, uint32_t nsge, uint32_t off)
{
	uint32_t i;

	st->wnsge = (uint8_t)nsge;
	st->wc_sge = 0;
	for (i = 0; i < RNIC_MAX_SGE; i++) {
		st->wsge[i] = i < nsge ? sge[i] : (rx_sge_t){0};
		if (st->wc_sge == i && i < nsge && off >= sge[i].len) {
			off -= sge[i].len;
			st->wc_sge++;
		}
	}
	st->wc_off = off;
}

/* `n` bytes of v, little-endian, stand for bytes [off, off + n) of the frame being placed (an
 * atomic's original value or result goes out through the normal payload path): a register the
 * payload path takes them from, not a write into the frame store. */
void rx_frame_value(rx_core_t *st, uint32_t off, uint64_t v, uint32_t n)
{
	st->ovr_off = off + st->l3;
	st->ovr_val = v;
	st->ovr_n = (uint8_t)n; /* n <= 8 */
}

/* A read for the read channel (the caller checked rx_rd_room): its beats come back on rdbeatq */
void rx_read_req(rx_core_t *st, uint64_t addr, uint32_t len, uint8_t kind, uint32_t qpn)
{
	st->rq = (rx_rdreq_t){.bus = addr, .len = (uint16_t)len, .qpn = (uint16_t)qpn, .kind = kind};
	st->rq_on = 1;
}

int rx_rd_room(const rx_core_t *st)
{
	return !st->rq_on && st->rq_room;
}

/* Free chunks of receive WQEs (a chunk given back is taken from the next clock on: rw_nfree,
 * counted as the clock begins) */
static uint32_t rw_free(const rx_core_t *st)
{
	return RX_RWC - st->rw_fresh + (st->rwf_tail - st->rwf_head);
}

/* QP qpn gives its chunk back once it holds no receive WQE and has none on its way: after the
 * frame that used its last one is finished (a cut can still hand a WQE back until then), after a
 * flush completion, at a reset (its reads on the way are void). */
static void rw_give_back(rx_core_t *st, uint32_t qpn)
{
	if (st->rw_has[qpn]) {
		st->rw_has[qpn] = 0;
		st->rwf[st->rwf_tail++ % RX_RWC] = st->rw_chunk[qpn];
	}
}

void rx_rw_release(rx_core_t *st, uint32_t qpn)
{
	if (st->rw_req[qpn] == st->rw_used[qpn])
		rw_give_back(st, qpn);
}

/* Request the next receive WQE of QP qpn (the caller checked rd_room, and that the QP has a
 * chunk or one is free). */
static void read_rwqe(rx_core_t *st, uint32_t qpn)
{
	int n = qp_srq(st, qpn);
	/* its own ring: behind the ones requested */
	uint32_t mask = (1u << RQ_LOG(st->rq_ctl[qpn])) - 1, ci = st->rw_req[qpn];
	uint64_t base = st->rq_base[qpn];

	if (n >= 0) {
		mask = (1u << SRQC_F(st, n, CTRL, LOG_SIZE)) - 1;
		base = ((uint64_t)SRQC_W(st, n, BASE_HI) << 32) | SRQC_W(st, n, BASE_LO);
		ci = st->srq[n].ci;
	}
	rx_read_req(st, base + (uint64_t)(ci & mask) * RNIC_RWQE_BYTES, RNIC_RWQE_BYTES, RD_RWQE, qpn);
	st->rw_req[qpn]++;
	if (!st->rw_has[qpn]) {
		st->rw_has[qpn] = 1;
		st->rw_chunk[qpn] = (uint8_t)(st->rw_fresh < RX_RWC ? st->rw_fresh++ : st->rwf[st->rwf_head++ % RX_RWC]);
	}
}

/* The frame (or flush) needs QP qpn's next receive WQE: wait for it, fetched ahead or now. */
void rx_fetch_rwqe(rx_core_t *st, uint32_t qpn)
{
	st->qpn = qpn;
	st->busy = B_RWQE;
	st->rd_issue = !RW_PEND(st, qpn);
}

/* The receive WQE the frame (or flush) waits for will not come: its QP was reset. The frame is
 * dispatched again, and dropped. */
static void rwqe_gone(rx_core_t *st)
{
	st->rd_issue = 0;
	st->flush = 0;
	st->busy = B_IDLE;
	st->redo = 1;
}

/* The read the frame waits for (B_RWQE, B_ATOMIC, B_REPLAY), once the read channel has
 * room; an atomic's (its operand, or the results it replays) once the DMA writes before it were
 * taken: it reads what they may have written */
static void issue_wait(rx_core_t *st)
{
	if (!st->rd_issue || !rx_rd_room(st) || (st->busy == B_RWQE && !st->rw_has[st->qpn] && !st->rw_nfree) ||
	    ((st->busy == B_ATOMIC || st->busy == B_REPLAY) && st->wr_out))
		return;
	if (st->busy == B_RWQE)
		read_rwqe(st, st->qpn);
	else
		rx_atomic_read(st);
	st->rd_issue = 0;
}

/* Fetch ahead, one read per clock, the next receive WQEs of the QP at the head of the hints
 * until it holds RX_RWQE (its own receive queue only: a WQE taken early from a shared one would
 * be withheld from the other QPs). A SEND then finds its WQE there instead of waiting a PCIe
 * round trip. */
static void prefetch_rwqe(rx_core_t *st)
{
	uint32_t qpn = st->pf_q[st->pf_head % RX_PF_HINTS];
	uint32_t state = st->qstate[qpn];

	if (st->pf_head == st->pf_tail || !rx_rd_room(st) || st->fence_pending)
		return;
	if ((state == RNIC_QPS_RTR || state == RNIC_QPS_RTS) && (uint16_t)(st->rw_req[qpn] - st->rw_used[qpn]) < RX_RWQE &&
	    st->rq_pi[qpn] != st->rw_req[qpn] && !(st->rq_srq[qpn] & RQ_SRQ) && st->rw_nfree >= RX_RW_RESERVE)
		read_rwqe(st, qpn);
	else
		st->pf_head++;
}

/* The receive WQE of QP qpn a message is about to use, checked again (it may have been fetched
 * ahead, before its region or the QP's PD changed: 10.6.3, the keys are checked when the WQE is
 * used), an entry a clock while its frame waits at the head (rx_rwqe_next: the entry, its MPT
 * entry looked up in lk): 1 once all are, the result in st->rg_err (a failure fails the message
 * and takes the WQE with it). */
const rx_sge_t *rx_rwqe_next(rx_core_t *st, uint32_t qpn)
{
	const rx_rwqe_t *r = CUR_RWQE(st, qpn);

	if (st->rg_frame != st->fr_head || st->rg_qpn != qpn || st->rg_used != st->rw_used[qpn] || st->t.cfg_mpt) {
		st->rg_frame = st->fr_head;
		st->rg_qpn = (uint16_t)qpn;
		st->rg_used = st->rw_used[qpn];
		st->rg_k = st->rg_err = 0;
	}
	return st->rg_k < r->nsge ? &r->sge[st->rg_k % RNIC_MAX_RECV_SGE] : NULL;
}

int rx_rwqe_checked(rx_core_t *st, uint32_t qpn, const rx_look_t *lk)
{
	const rx_sge_t *g = rx_rwqe_next(st, qpn);
	int s = qp_srq(st, qpn);
	uint32_t pdn = s >= 0 ? SRQC_W(st, s, PDN) : st->qp_pdn[qpn];

	if (!g)
		return 1;
	if (lk->hit <= 0)
		return 0;
	if (rnic_mpt_check(lk->e, g->key, pdn, g->access, g->addr, g->len))
		st->rg_err = 1;
	return ++st->rg_k >= CUR_RWQE(st, qpn)->nsge;
}

/* A receive WQE of QP qpn arrived; the frame waiting for it is dispatched again. Its keys are
 * checked when a message uses it (rx_rwqe_checked), not here. One the host refused to read (err)
 * fails the message that takes it, as a bad receive buffer does (LOC_PROT_ERR here, a remote
 * operational error NAK to the requester). */
static void got_rwqe(rx_core_t *st, uint32_t qpn, const uint8_t *w, uint32_t err)
{
	uint32_t k, n = RNIC_RWQE_NUM_SGE_GET(w);
	int s = qp_srq(st, qpn);
	rx_rwqe_t e = {0}; /* built here, written whole */

	if (s >= 0) {
		/* from the shared queue: below its limit, the armed event fires once (11.2.3) */
		rx_srq_t *r = &st->srq[s];
		uint32_t limit = SRQC_W(st, s, LIMIT);

		r->ci++;
		if (limit && (uint16_t)(r->pi - r->ci) < limit) {
			SRQC_W(st, s, LIMIT) = 0;
			raise_event(st, RNIC_EQE_TYPE_SRQ_LIMIT, (uint32_t)s, SRQC_F(st, s, CTRL, CTX));
		}
	}
	e.id = RNIC_RWQE_WR_ID_GET(w);
	e.err = n > RNIC_MAX_RECV_SGE || err;
	for (k = 0; k < RNIC_MAX_RECV_SGE; k++) {
		const uint8_t *s = w + RNIC_RWQE_SGE_OFF + k * RNIC_SGE_SIZE;
		rx_sge_t *g = &e.sge[e.nsge];

		if (k >= n)
			break;
		g->addr = RNIC_SGE_ADDR_GET(s);
		g->len = RNIC_SGE_LEN_GET(s);
		if (!g->len)
			continue;
		g->key = RNIC_SGE_LKEY_GET(s);
		g->access = RNIC_ACCESS_LOCAL_WRITE;
		e.len += g->len;
		e.nsge++;
	}
	st->rwc[st->rw_chunk[qpn]][st->rw_got[qpn] % RX_RWQE] = e;
	st->rw_got[qpn]++;
	if (st->busy != B_RWQE || st->qpn != qpn)
		return; /* fetched ahead */
	if (st->flush) {
		st->flush = 0;
		rx_completion(st, e.id, RNIC_WC_OP_RECV, RNIC_WC_STATUS_WR_FLUSH_ERR, 0);
		rx_rw_release(st, qpn);
		st->busy = B_POST;
	} else {
		st->busy = B_IDLE; /* dispatch the frame again, with its receive WQE */
		st->redo = 1;
	}
}

/* Receive WQEs of QPs in error complete with WR_FLUSH_ERR (IBTA 10.8.3.4), one QP per idle clock. */
static void flush_scan(rx_core_t *st)
{
	uint32_t qpn = st->flush_q++ % RNIC_MAX_QP;

	if (st->qstate[qpn] != RNIC_QPS_ERR)
		return;
	st->qpn = qpn;
	if (RW_N(st, qpn)) {
		rx_completion(st, CUR_RWQE(st, qpn)->id, RNIC_WC_OP_RECV, RNIC_WC_STATUS_WR_FLUSH_ERR, 0);
		rx_rw_release(st, qpn);
		st->fin = FIN_POST;
	} else if (rx_rq_avail(st, qpn) && !(st->rq_srq[qpn] & RQ_SRQ)) {
		st->flush = 1;
		rx_fetch_rwqe(st, qpn);
	}
}

static void process(rx_core_t *st, const rnic_rx_in_t *in, rnic_rx_rdntcq_t *ntcs)
{
	rx_cmd_t *c;
	rx_look_t lk;
	uint32_t ntc = rnic_rx_rdntcq_count(ntcs) != 0;

	lookup(st, &lk, !ntc && st->cur_on);
	switch (st->busy) {
	case B_IDLE:
		if (ntc) {
			/* a READ/atomic sent again was answered before: TX is told again (rx_rdq) */
			const rx_rdntc_t *n = rnic_rx_rdntcq_head(ntcs);

			c = rx_cmd(st);
			c->p.left = RX_P_NTC;
			c->p.n_qpn = n->qpn;
			c->p.n_psn = n->psn;
			c->p.n_syn = RNIC_AETH_ACK_NO_CREDIT;
			c->p.n_rd = 1;
			rnic_rx_rdntcq_pop(ntcs);
		} else if (st->cur_on) {
			rx_dispatch(st, in, &lk);
		} else {
			flush_scan(st);
		}
		break;
	case B_SEG:
		next_segment(st, &lk);
		break;
	case B_ATX:
		rx_atomic_xlate(st, &lk);
		break;
	case B_ATREC:
		rx_atomic_record(st);
		break;
	case B_ATPL:
		rx_place(st, RNIC_XTH_OFF + 12, st->at_write ? 8 : 0);
		break;
	case B_FIN:
		rx_finish_frame(st);
		break;
	case B_POST:
		st->fin = FIN_POST;
		break;
	default: /* B_RWQE, B_ATOMIC, B_REPLAY: waiting for the DMA read */
		break;
	}
	if (st->fin)
		frame_end(st);
}

/* Receive doorbell: the host posted receive WQEs of the SRQ or QP up to PI. */
static void doorbell(rx_core_t *st, const rnic_rx_in_t *in)
{
	uint32_t q = in->db_qpn, c;

	if (in->db_srq) {
		if (q >= RNIC_MAX_SRQ || !SRQC_F(st, q, CTRL, VALID) || SRQC_F(st, q, CTRL, CTX) != in->db_ctx ||
		    (uint16_t)(in->db_pi - st->srq[q].ci) > (1u << SRQC_F(st, q, CTRL, LOG_SIZE))) {
			st->o.stat_drop_db++;
			return;
		}
		st->srq[q].pi = in->db_pi;
		return;
	}

	q = rnic_qp_index(q);
	c = q < RNIC_MAX_QP ? st->rq_ctl[q] : 0;
	if (!(c & RQ_LIVE) || RQ_CTX(c) != in->db_ctx || (uint16_t)(in->db_pi - st->rw_got[q]) > (1u << RQ_LOG(c))) {
		st->o.stat_drop_db++;
		return;
	}
	/* its write lands at the clock's end (the QP's entry may be read in this clock) */
	st->db_pend = 1;
	st->db_q = (uint16_t)q;
	st->db_pi = (uint16_t)in->db_pi;
}

/* SRQ context writes: word 0 with VALID newly set starts the ring over. */
static void srq_cfg(rx_core_t *st, uint32_t addr, uint32_t data)
{
	uint32_t idx = RNIC_CFG_IDX(addr), word = RNIC_CFG_WORD(addr);

	if (RNIC_CFG_TBL(addr) != RNIC_CFG_TBL_SRQC || idx >= RNIC_MAX_SRQ || word >= RNIC_SRQC_WORDS)
		return;
	if (!word && RNIC_GET(RNIC_SRQC_CTRL_VALID, data) && !SRQC_F(st, idx, CTRL, VALID))
		st->srq[idx] = (rx_srq_t){0};
	st->srqc[idx][word] = data;
}

/* A QP context word from the firmware, gathered until word 0 (written last) commits the entry:
 * the fields any QP's doorbell, receive WQE or completion reads (for any QP, not only a frame's:
 * rx_ctx keeps its own copy of those the frames are checked with), and the QP's responder state
 * next clock (commit_qp). */
static void qpc_cfg(rx_core_t *st, uint32_t addr, uint32_t data)
{
	uint32_t idx, srqn, state = RNIC_GET(RNIC_QPC_CTRL_STATE, data);
	const uint32_t *e = st->qpc_stage;
	int w = rnic_qpc_word(addr, &idx);

	if (w < 0)
		return;
	st->qpc_stage[w] = data;
	if (w)
		return;
	st->commit_valid = 1;
	st->commit_qpn = (uint16_t)idx;
	st->rq_ctl[idx] = RNIC_GET(RNIC_QPC_CTRL_CTX, data) | (RNIC_GET(RNIC_QPC_RING_LOG_RQ, e[RNIC_QPC_RING_LOG / 4]) & 0x1f) << 8 |
			  (RNIC_GET(RNIC_QPC_CTRL_VALID, data) && state != RNIC_QPS_RESET ? RQ_LIVE : 0) |
			  RNIC_GET(RNIC_QPC_CQN_RECV, e[RNIC_QPC_CQN / 4]) << 16;
	srqn = RNIC_GET(RNIC_QPC_SRQ_SRQN, e[RNIC_QPC_SRQ / 4]);
	st->rq_srq[idx] = (uint16_t)(RNIC_GET(RNIC_QPC_SRQ_USE, e[RNIC_QPC_SRQ / 4]) ? RQ_SRQ | (srqn < RQ_SRQ ? srqn : RQ_SRQ - 1) : 0);
	st->rq_base[idx] = (uint64_t)e[RNIC_QPC_RQ_BASE_HI / 4] << 32 | e[RNIC_QPC_RQ_BASE_LO / 4];
	st->qp_pdn[idx] = (uint16_t)e[RNIC_QPC_PDN / 4];
	st->dest_qpn[idx] = RNIC_GET(RNIC_QPC_DEST_QPN_QPN, e[RNIC_QPC_DEST_QPN / 4]);
}

/* A QPC committed: a clock of its own, no other event takes a QP's memories in it (the readies
 * were down, the processing side waits) */
static void commit_qp(rx_core_t *st, uint32_t idx)
{
	rx_qp_t *q = &st->qp[idx];
	uint32_t ctrl = st->qpc_stage[RNIC_QPC_CTRL / 4];
	uint32_t state = RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl) ? RNIC_GET(RNIC_QPC_CTRL_STATE, ctrl) : RNIC_QPS_RESET;

	if (state == RNIC_QPS_RESET) {
		/* the receive WQEs still on their way belong to nobody now: the QP's next beats */
		st->rw_void[idx] = (uint8_t)(st->rw_void[idx] + RW_PEND(st, idx));
		if (st->busy == B_RWQE && st->qpn == idx && st->rd_issue)
			rwqe_gone(st);
		*q = (rx_qp_t){0};
		rw_give_back(st, idx);
		st->rq_pi[idx] = st->rw_req[idx] = st->rw_got[idx] = st->rw_used[idx] = 0;
	} else if (state >= RNIC_QPS_RTR && state != RNIC_QPS_ERR && st->qstate[idx] < RNIC_QPS_RTR) {
		q->epsn = RNIC_GET(RNIC_QPC_RQ_PSN_PSN, st->qpc_stage[RNIC_QPC_RQ_PSN / 4]);
		q->msn = 0;
	}
	st->qstate[idx] = (uint8_t)state;
}

/* A beat of one of our reads (rdbeatq), taken when its reader can: 1, or 0 to wait (a cache's
 * beat until the last has landed; a fence until the store takes a command). A beat taken takes
 * the clock: the processing side waits. */
static int take_beat(rx_core_t *st, const rx_rdbeat_t *b, uint32_t room)
{
	rx_cmd_t *c;

	if (b->kind == RD_RWQE) {
		if (!st->rw_void[b->qpn])
			got_rwqe(st, b->qpn, b->data, b->err);
		else if (st->rw_void[b->qpn]--, st->busy == B_RWQE && st->qpn == b->qpn)
			rwqe_gone(st);
	} else if (b->kind == RD_ATOMIC) {
		rx_atomic_done(st, b->data, b->err);
	} else if (b->kind == RD_REPLAY) {
		rx_replay_done(st, b->data, b->last, b->err);
	} else if (b->kind == RD_MTT) {
		if (st->t.fill_land)
			return 0;
		rnic_tlb_filled(&st->t, b->data, b->err, (uint32_t)st->now);
	} else if (b->kind == RD_MPT) {
		if (st->t.mf_land)
			return 0;
		rnic_mpt_filled(&st->t, b->data, b->err, (uint32_t)st->now);
	} else {
		/* RD_FENCE: the reads before it are back, and no frame was started since it was sent:
		 * it passes to the store, behind the writes before it (the store answers it once they
		 * are taken); frames for QPs invalidated before it are dropped when dispatched */
		if (!room)
			return 0;
		c = rx_cmd(st);
		c->p.left = RX_P_FENCE;
		c->p.token = (uint8_t)b->qpn;
		st->fence_wait--;
	}
	return 1;
}

/* The next frame in the order rx_ctx handed them on (seq), at the head of passq or of judgedq,
 * into cur: 1, or 0 when it is not there yet (a response still on its way through rx_rdq). */
static int take_frame(rx_core_t *st, rnic_rx_passq_t *pass, rnic_rx_judgedq_t *frames)
{
	if (rnic_rx_passq_count(pass) && rnic_rx_passq_head(pass)->seq == st->seq) {
		st->cur = *rnic_rx_passq_head(pass);
		st->cur_judged = 0;
		rnic_rx_passq_pop(pass);
	} else if (rnic_rx_judgedq_count(frames) && rnic_rx_judgedq_head(frames)->f.seq == st->seq) {
		const rx_judged_t *j = rnic_rx_judgedq_head(frames);

		st->cur = j->f;
		st->cur_judged = j->judged;
		st->cur_a = j->a;
		rnic_rx_judgedq_pop(frames);
	} else {
		return 0;
	}
	st->seq++;
	return 1;
}

void rx_core(rx_core_t *st, const rnic_rx_in_t *in, rnic_rx_passq_t *pass, rnic_rx_judgedq_t *frames, rnic_rx_hintq_t *hints,
	     rnic_rx_rdreqq_t *reqs, rnic_rx_rdbeatq_t *beats, rnic_rx_cmdq_t *cmds, rnic_rx_doneq_t *dones,
	     rnic_rx_rdntcq_t *ntcs, rnic_rx_out_t *out)
{
#pragma HLS PIPELINE II = 1
	uint32_t commit, go, hint, hint_q, room = rnic_rx_cmdq_room(cmds);

	if (in->rst) {
		rx_reset(st);
		*out = st->o;
		return;
	}
	st->cmd_on = 0;
	st->rq_on = 0;
	st->rw_nfree = (uint8_t)rw_free(st);
	st->rq_room = rnic_rx_rdreqq_room(reqs) != 0;
	if (rnic_rx_doneq_count(dones)) {
		rnic_rx_doneq_pop(dones);
		st->wr_out--;
	}
	if (!(st->sweep & RNIC_SWEPT)) {
		rx_sweep(st, in);
		/* a frame that comes meanwhile is dropped: its beats given back */
		if (room && take_frame(st, pass, frames)) {
			rx_cmd(st)->release = st->cur.f.beats;
			rnic_rx_cmdq_push(cmds, &st->cmd);
		}
		*out = st->o;
		return;
	}
	st->now = in->cycle;
	hint = st->hint_cpl;
	hint_q = st->hint_cpl_q;
	st->hint_cpl = 0;
	rnic_caches_clock(&st->t, in->cfg_valid, in->cfg_addr);
	rnic_tlb_hint(&st->t);
	rx_mpt_ahead(st);
	if (rnic_rx_hintq_count(hints)) {
		/* a request come in: its key looked for ahead (a hint only: the next one takes its place) */
		const rx_hint_t *h = rnic_rx_hintq_head(hints);

		st->mk_cand = 1;
		st->mk_cand_key = h->key;
		st->mk_cand_va = h->va;
		st->mk_cand_xl = h->xl;
		rnic_rx_hintq_pop(hints);
	}
	/* the next frame, with its QP's context */
	if (!st->cur_on && take_frame(st, pass, frames))
		st->cur_on = 1;
	/* a QPC committed (its word 0 written) last clock: read back now, a clock after the write */
	commit = st->commit_valid;
	if (commit)
		commit_qp(st, st->commit_qpn);
	st->commit_valid = 0;
	if (in->cfg_valid) {
		rnic_tables_cfg(&st->t, in->cfg_addr, in->cfg_data);
		qpc_cfg(st, in->cfg_addr, in->cfg_data);
		srq_cfg(st, in->cfg_addr, in->cfg_data);
		rnic_icm_cfg(st->icm, in->cfg_addr, in->cfg_data);
	}
	if (rnic_cfg_fence(in->cfg_valid, in->cfg_addr, in->cfg_data, &st->fence_token))
		st->fence_pending = 1;
	if (in->db_valid && st->o.db_ready)
		doorbell(st, in);
	go = !commit;
	if (go && rnic_rx_rdbeatq_count(beats) && take_beat(st, rnic_rx_rdbeatq_head(beats), room)) {
		rnic_rx_rdbeatq_pop(beats);
		go = 0;
	}
	/* a fence passes between two frames: into the read channel, behind the reads before it */
	if (st->fence_pending && st->busy == B_IDLE && rx_rd_room(st)) {
		rx_read_req(st, 0, 0, RD_FENCE, st->fence_token);
		st->fence_pending = 0;
		st->fence_wait++;
	}
	/* the reads the last clock's processing asked for, before this clock's: a line or entry its
	 * lookup found missing, the receive WQE or operand its frame waits for */
	if (!commit) {
		rx_tlb_issue(st);
		rx_mpt_issue(st);
		issue_wait(st);
	}
	if (go && room && !st->cmd_on && !st->fence_wait)
		process(st, in, ntcs);
	if (!commit)
		prefetch_rwqe(st);
	if (st->rq_on)
		rnic_rx_rdreqq_push(reqs, &st->rq);
	if (st->cmd_on) {
		rnic_rx_cmdq_push(cmds, &st->cmd);
		st->wr_out += st->cmd.kind == RX_CMD_SEG || st->cmd.kind == RX_CMD_DATA;
	}
	/* the clock's prefetch hints: the last clock's completion's QP, then this clock's doorbell's */
	if (hint)
		prefetch_hint(st, hint_q);
	if (st->db_pend) {
		st->rq_pi[st->db_q] = st->db_pi;
		prefetch_hint(st, st->db_q);
		st->db_pend = 0;
	}
	rnic_tlb_land(&st->t);
	rnic_mpt_land(&st->t);
	RNIC_CACHES_STATS_OUT(&st->o, &st->t);
	st->o.db_ready = !st->commit_valid;
	*out = st->o;
}
