/* RX kernel: the requests of RC/UC/UD QPs (responder), and the responses to ours (requester). */
#include "rx_int.h"

/* RDMA WRITE checks (IBTA 9.4.2, 9.7.4.1.3, 10.6.3); returns a NAK syndrome or 0. */
static uint32_t check_write(rx_core_t *st, uint32_t qpn, const uint8_t *h, uint32_t op, uint32_t plen,
			    uint32_t xoff)
{
	rx_qp_t *q = &st->qp[qpn];
	uint32_t mtu = rnic_mtu_bytes(QCL_CTRL(st, PMTU));
	int first = op == RNIC_BTH_OP_WRITE_FIRST || op == RNIC_BTH_OP_WRITE_ONLY || op == RNIC_BTH_OP_WRITE_ONLY_IMM;
	int last = op != RNIC_BTH_OP_WRITE_FIRST && op != RNIC_BTH_OP_WRITE_MIDDLE;

	if (first != (q->in_msg == MSG_NONE) || (!first && q->in_msg != MSG_WRITE))
		return RNIC_AETH_NAK_INV_REQ; /* opcode sequence error, 9.7.5.1.4 */
	if (first) {
		uint64_t va = rnic_be64(h + xoff);
		uint32_t rkey = rnic_be32(h + xoff + 8);
		uint32_t dlen = rnic_be32(h + xoff + 12);

		if (!(st->cur.l.access & RNIC_ACCESS_REMOTE_WRITE))
			return RNIC_AETH_NAK_REM_ACCESS;
		if (dlen && rnic_mpt_check(st->kg_e, rkey, st->cur.l.pdn, RNIC_ACCESS_REMOTE_WRITE, va, dlen))
			return RNIC_AETH_NAK_REM_ACCESS;
		if (last ? dlen != plen || plen > mtu : plen != mtu || dlen <= mtu)
			return RNIC_AETH_NAK_INV_REQ;
		q->wr.addr = va;
		q->wr.len = dlen;
		q->wr.key = rkey;
		q->wr.access = RNIC_ACCESS_REMOTE_WRITE;
		q->c_sge = 0;
		q->c_off = 0;
		q->remaining = dlen;
		q->msg_len = dlen;
		return 0;
	}
	if (last ? plen != q->remaining || plen > mtu : plen != mtu || plen >= q->remaining)
		return RNIC_AETH_NAK_INV_REQ;
	return 0;
}

/* rx_rdq's verdict on the response: dropped, or placed where it says */
static void placed(rx_core_t *st, const rx_rdans_t *a)
{
	if (a->verdict != RX_RDA_OK) {
		if (a->verdict == RX_RDA_GAP)
			rx_notice(st, a->exp, RNIC_AETH_NAK_PSN_SEQ, 0);
		if (a->verdict == RX_RDA_MALFORMED)
			st->o.stat_drop_malformed++;
		else
			st->o.stat_drop_rsp++;
		rx_finish_frame(st);
		return;
	}
	st->kind = K_RESP;
	/* each response placed is progress: it holds off the requester's ACK timer; the last
	 * tells that the request was answered */
	rx_notice(st, st->psn, a->last ? st->rs_syn : RNIC_AETH_ACK_NO_CREDIT, a->last);
	rx_seek(st, a->sge, a->nsge, a->off);
	if (st->rs_atomic) {
		/* the original value, in host byte order, into the local buffer */
		rx_frame_value(st, RNIC_XTH_OFF + 4, st->rs_val, 8);
		rx_place(st, RNIC_XTH_OFF + 4, 8);
		return;
	}
	st->o.stat_rd_rsp_bytes += st->pay_left;
	st->seg_on = !a->last;
	rx_place(st, st->rs_src, st->pay_left);
}

/* Responses to our READs and atomics: rx_rdq judged them on their way (IBTA 9.7.5.1.6 on the
 * requester side: in PSN order; a gap is reported to the TX kernel, which asks again from the
 * missing PSN). rx_rdq judges every response a QP takes (rx_qp_live, rx_from_peer); one it did
 * not (a commit came since) is dropped. */
static void response(rx_core_t *st, const uint8_t *h, uint32_t op, uint32_t psn, uint32_t plen, uint32_t xth)
{
	static const rx_rdans_t drop = {0};

	st->psn = psn;
	st->rs_atomic = op == RNIC_BTH_OP_ATOMIC_ACK;
	st->rs_syn = (uint8_t)(xth ? h[RNIC_XTH_OFF] : RNIC_AETH_ACK_NO_CREDIT);
	st->rs_val = rnic_be64(h + RNIC_XTH_OFF + 4);
	st->rs_src = RNIC_XTH_OFF + xth;
	st->pay_left = plen;
	placed(st, st->cur_judged ? &st->cur_a : &drop);
}

/* RDMA READ request checks (IBTA 9.4.3, 10.6.3): the QP allows remote reads, the length is at
 * most 2^31, the key covers it. The same for a first request and a duplicate executed again. */
static int read_ok(const rx_core_t *st, const uint8_t *h)
{
	uint32_t len = rnic_be32(h + RNIC_XTH_OFF + 12);

	return (st->cur.l.access & RNIC_ACCESS_REMOTE_READ) && len <= 0x80000000u &&
	       (!len || !rnic_mpt_check(st->kg_e, rnic_be32(h + RNIC_XTH_OFF + 8), st->cur.l.pdn,
					RNIC_ACCESS_REMOTE_READ, rnic_be64(h + RNIC_XTH_OFF), len));
}

static void read_response(rx_core_t *st, const uint8_t *h, uint32_t kind, uint32_t psn)
{
	rx_respond(st, kind, psn, RNIC_AETH_ACK_NO_CREDIT);
	st->posts.rsp.va = rnic_be64(h + RNIC_XTH_OFF);
	st->posts.rsp.key = rnic_be32(h + RNIC_XTH_OFF + 8);
	st->posts.rsp.len = rnic_be32(h + RNIC_XTH_OFF + 12);
}

_Static_assert(RNIC_BEAT % RNIC_ICM_ATOMIC_SLOT == 0 && RNIC_ICM_ATOMIC_STRIDE == 2 * RNIC_BEAT &&
	       RX_ATOMIC_REPLAY * RNIC_ICM_ATOMIC_SLOT <= RNIC_ICM_ATOMIC_STRIDE,
	       "a QP's atomic results are two beats of whole slots (rx_replay_done)");
#define AT_PER_BEAT (RNIC_BEAT / RNIC_ICM_ATOMIC_SLOT)

/* Where slot i of QP qpn's atomic results is in context memory (0: none given) */
static uint64_t atomic_slot(const rx_core_t *st, uint32_t qpn, uint32_t i)
{
	return rnic_icm_bus(st->icm, RNIC_ICM_ATOMIC_OFF + qpn * RNIC_ICM_ATOMIC_STRIDE + RNIC_ICM_ATOMIC_SLOT * i);
}

/* Duplicate request (IBTA 9.7.5.1.2): READ executed again (if it passes every check a new one
 * would: else it is dropped, as the original was NAKed), atomic answered with its result read
 * back from context memory (B_REPLAY: the QP's slots read whole, the one of its PSN taken;
 * dropped if none is), SEND/WRITE acknowledged without being placed again. */
static void duplicate(rx_core_t *st, const uint8_t *h, uint32_t op, uint32_t psn)
{
	rx_qp_t *q = &st->qp[st->qpn];

	st->o.stat_dup++;
	if (op == RNIC_BTH_OP_READ_REQ) {
		if (read_ok(st, h))
			read_response(st, h, RNIC_RSP_KIND_READ_AGAIN, psn);
	} else if (op == RNIC_BTH_OP_CMP_SWAP || op == RNIC_BTH_OP_FETCH_ADD) {
		st->at_addr = atomic_slot(st, st->qpn, 0);
		if (q->at_valid && st->at_addr) {
			st->at_psn = psn;
			st->at_vmask = q->at_valid;
			st->at_found = 0;
			st->busy = B_REPLAY;
			st->rd_issue = 1;
			return;
		}
	} else if (h[RNIC_BTH_OFF + 8] & RNIC_BTH_ACKREQ) {
		rx_respond(st, RNIC_RSP_KIND_ACK, q->epsn - 1, RNIC_AETH_ACK_NO_CREDIT);
	}
	rx_finish_frame(st);
}

/* UD SEND (IBTA 9.8, RoCEv2 A17.4.5.1): Q_Key checked, one receive WQE per datagram, which
 * starts with the 40-byte GRH area: for RoCEv2 over IPv4, 20 zero bytes and the IPv4 header. */
static void datagram(rx_core_t *st, const uint8_t *h, uint32_t op, uint32_t plen, uint32_t xth,
		     uint64_t cycle)
{
	rx_rwqe_t r;

	if (rnic_be32(h + RNIC_XTH_OFF) != st->cur.l.qkey) {
		st->o.stat_drop_qpn++; /* Q_Key violation: silently dropped (10.2.5) */
		rx_finish_frame(st);
		return;
	}
	if (!RW_N(st, st->qpn)) {
		if (rx_rq_avail(st, st->qpn)) {
			rx_fetch_rwqe(st, st->qpn);
			return;
		}
		st->o.stat_drop_norecv++;
		rx_finish_frame(st);
		return;
	}
	r = *CUR_RWQE(st, st->qpn);
	r.err |= st->rg_err; /* its entries checked again (keys_cached) */
	if (r.err || plen + RNIC_GRH_LEN > r.len) {
		rx_completion(st, r.id, RNIC_WC_OP_RECV, r.err ? RNIC_WC_STATUS_LOC_PROT_ERR : RNIC_WC_STATUS_LOC_LEN_ERR, 0);
		st->posts.cpl.ts_start = (uint32_t)cycle;
		rx_finish_frame(st);
		return;
	}
	rx_completion(st, r.id, RNIC_WC_OP_RECV, RNIC_WC_STATUS_SUCCESS, plen + RNIC_GRH_LEN);
	/* one packet, arrived now: its start is this clock's, not the QP row's (not written here) */
	st->posts.cpl.ts_start = (uint32_t)cycle;
	st->posts.cpl.src_qp = rnic_be24(h + RNIC_XTH_OFF + 5);
	st->posts.cpl.wc_flags = RNIC_WC_FLAG_GRH;
	if (op == RNIC_BTH_OP_UD_SEND_ONLY_IMM) {
		st->posts.cpl.imm = (uint32_t)rnic_rd_le(h + RNIC_XTH_OFF + RNIC_DETH_LEN, 4);
		st->posts.cpl.wc_flags |= RNIC_WC_FLAG_WITH_IMM;
	}
	st->o.stat_recv_bytes += plen;
	rx_seek(st, r.sge, r.nsge, 0);
	st->src = 0;
	st->pay_off = RNIC_XTH_OFF + st->l3 + xth;
	st->gh = RNIC_GRH_LEN;
	st->pay_left = plen + RNIC_GRH_LEN;
	st->kind = K_UD;
	st->busy = B_SEG;
}

/* The whole frame to the firmware (ARP, neighbour discovery, QP1's MADs), or dropped and counted
 * while the firmware's receive ring is full. */
static void to_fw(rx_core_t *st, const rnic_rx_in_t *in)
{
	const rx_frame_t *f = &st->cur.f;
	rx_cmd_t *c;

	if (in->fw_ready) {
		c = rx_cmd(st);
		c->kind = RX_CMD_FW;
		c->start = f->start;
		c->beats = f->beats;
		c->len = f->len;
		st->o.stat_to_fw++;
	} else {
		st->o.stat_fw_drop++;
	}
	rx_finish_frame(st);
}

/* The headers of the frame at the head of the queue, checked */
typedef struct {
	uint8_t raw[2 * RNIC_BEAT]; /* its first two beats */
	uint8_t h[2 * RNIC_BEAT];   /* the same as over IPv4: BTH at RNIC_BTH_OFF */
	uint32_t op, qpn, psn, plen, xth, ackreq, v6;
} rx_head_t;

/* The frame's headers, judged as it came in (rx_judge), up to its QP: 1 if it goes on to the
 * QP, else it was handed to the firmware or dropped (counted). */
static int parse(rx_core_t *st, const rnic_rx_in_t *in, rx_head_t *x)
{
	const rx_frame_t *f = &st->cur.f;
	const rx_verdict_t *d = &f->v;
	uint32_t l3 = d->v6 ? RNIC_IP6_EXTRA : 0, i;

	if (d->cls == RX_FW || d->cls == RX_JUNK) {
		if (d->cls == RX_FW) {
			to_fw(st, in);
		} else {
			st->o.stat_drop_malformed++;
			rx_finish_frame(st);
		}
		return 0;
	}
	if (!st->redo)
		st->o.stat_roce++;
	if (!f->icrc_ok) {
		st->o.stat_drop_icrc++;
		rx_finish_frame(st);
		return 0;
	}
	if (d->cls == RX_MALFORMED) {
		st->o.stat_drop_malformed++;
		rx_finish_frame(st);
		return 0;
	}
	if (d->cls == RX_GSI) {
		to_fw(st, in);
		return 0;
	}
	memcpy(x->raw, f->raw, sizeof(x->raw));
	for (i = 0; i < 2 * RNIC_BEAT; i++)
		x->h[i] = i < RNIC_IP_OFF ? x->raw[i] : i + l3 < 2 * RNIC_BEAT ? x->raw[i + l3] : 0;
	st->l3 = l3;
	st->uc = d->uc;
	x->op = d->op;
	x->qpn = d->qpn;
	x->psn = d->psn;
	x->ackreq = d->ackreq;
	x->v6 = d->v6;
	x->xth = d->xth;
	x->plen = d->plen;
	/* its QP's context (rx_ctx), from before a commit of the QP if that came since: the QP's
	 * state as it is now is checked too (qstate), so no frame revives a QP reset */
	if (!rx_qp_live(&st->cur) || st->qstate[x->qpn % RNIC_MAX_QP] < RNIC_QPS_RTR ||
	    st->qstate[x->qpn % RNIC_MAX_QP] > RNIC_QPS_SQE) {
		st->o.stat_drop_qpn++; /* 9.6.1.2: invalid destination QP: silently dropped */
		rx_finish_frame(st);
		return 0;
	}
	if (x->op < RNIC_BTH_OP_UD_SEND_ONLY && !rx_from_peer(&st->cur.l, x->raw, x->v6)) {
		st->o.stat_drop_src++;
		rx_finish_frame(st);
		return 0;
	}
	return 1;
}

/* SEND (9.4.1): into the receive WQE's scatter list */
static void req_send(rx_core_t *st, const rx_head_t *x)
{
	rx_qp_t *q = &st->qp[x->qpn];
	rx_rwqe_t r = *CUR_RWQE(st, x->qpn);
	uint32_t op = x->op, psn = x->psn, plen = x->plen;
	uint32_t mtu = rnic_mtu_bytes(QCL_CTRL(st, PMTU));
	int first = op == RNIC_BTH_OP_SEND_FIRST || op >= RNIC_BTH_OP_SEND_ONLY;
	int last = op != RNIC_BTH_OP_SEND_FIRST && op != RNIC_BTH_OP_SEND_MIDDLE;

	if (first != (q->in_msg == MSG_NONE) || (!first && q->in_msg != MSG_SEND) ||
	    (last ? plen > mtu : plen != mtu)) {
		q->in_msg = MSG_NONE;
		rx_nak(st, psn, RNIC_AETH_NAK_INV_REQ);
		rx_finish_frame(st);
		return;
	}
	if (first) {
		r.err |= st->rg_err; /* its entries checked again (keys_cached) */
		q->msg_len = 0;
		q->c_sge = 0;
		q->c_off = 0;
	}
	if (r.err || q->msg_len + plen > r.len) {
		/* the receive buffer is bad or too small: the message fails on both sides */
		uint32_t bad = r.err;

		rx_completion(st, r.id, RNIC_WC_OP_RECV, bad ? RNIC_WC_STATUS_LOC_PROT_ERR : RNIC_WC_STATUS_LOC_LEN_ERR, 0);
		q->in_msg = MSG_NONE;
		rx_nak(st, psn, bad ? RNIC_AETH_NAK_REM_OP : RNIC_AETH_NAK_INV_REQ);
		rx_finish_frame(st);
		return;
	}
	q->epsn = (q->epsn + 1) & RNIC_PSN_MASK;
	q->in_msg = last ? MSG_NONE : MSG_SEND;
	rx_seek(st, r.sge, r.nsge, 0);
	st->wc_sge = q->c_sge;
	st->wc_off = q->c_off;
	st->back = 1;
	q->msg_len += plen;
	st->o.stat_recv_bytes += plen;
	if (last) {
		q->msn = (q->msn + 1) & RNIC_PSN_MASK;
		rx_completion(st, r.id, RNIC_WC_OP_RECV, RNIC_WC_STATUS_SUCCESS, q->msg_len);
		if (op == RNIC_BTH_OP_SEND_LAST_IMM || op == RNIC_BTH_OP_SEND_ONLY_IMM) {
			st->posts.cpl.imm = (uint32_t)rnic_rd_le(x->h + RNIC_XTH_OFF, 4);
			st->posts.cpl.wc_flags = RNIC_WC_FLAG_WITH_IMM;
		}
	}
	if (x->ackreq)
		rx_respond(st, RNIC_RSP_KIND_ACK, psn, RNIC_AETH_ACK_NO_CREDIT);
	st->kind = K_SEND;
	st->psn = psn;
	st->seg_on = !last;
	rx_place(st, RNIC_XTH_OFF + x->xth, plen);
}

/* RDMA WRITE (9.4.2), with immediate: completes a receive WQE at its end */
static void req_write(rx_core_t *st, const rx_head_t *x)
{
	rx_qp_t *q = &st->qp[x->qpn];
	uint32_t op = x->op, psn = x->psn, plen = x->plen;
	int imm = op == RNIC_BTH_OP_WRITE_LAST_IMM || op == RNIC_BTH_OP_WRITE_ONLY_IMM;
	uint32_t syn = check_write(st, x->qpn, x->h, op, plen, RNIC_XTH_OFF);

	if (syn) {
		q->in_msg = MSG_NONE;
		rx_nak(st, psn, syn);
		rx_finish_frame(st);
		return;
	}
	q->epsn = (q->epsn + 1) & RNIC_PSN_MASK;
	q->in_msg = op == RNIC_BTH_OP_WRITE_FIRST || op == RNIC_BTH_OP_WRITE_MIDDLE ? MSG_WRITE : MSG_NONE;
	q->remaining -= plen;
	if (q->in_msg == MSG_NONE) {
		q->msn = (q->msn + 1) & RNIC_PSN_MASK;
		if (imm) {
			rx_completion(st, CUR_RWQE(st, x->qpn)->id, RNIC_WC_OP_RECV_RDMA_IMM, RNIC_WC_STATUS_SUCCESS,
				      q->msg_len);
			st->posts.cpl.imm = (uint32_t)rnic_rd_le(x->h + RNIC_XTH_OFF + x->xth - RNIC_IMM_LEN, 4);
			st->posts.cpl.wc_flags = RNIC_WC_FLAG_WITH_IMM;
		}
	}
	if (x->ackreq)
		rx_respond(st, RNIC_RSP_KIND_ACK, psn, RNIC_AETH_ACK_NO_CREDIT);
	st->o.stat_write_bytes += plen;
	rx_seek(st, &q->wr, 1, 0);
	st->wc_sge = q->c_sge;
	st->wc_off = q->c_off;
	st->back = 1;
	st->kind = K_WRITE;
	st->psn = psn;
	st->seg_on = q->in_msg != MSG_NONE;
	rx_place(st, RNIC_XTH_OFF + x->xth, plen);
}

/* RDMA READ (9.4.3): the TX kernel sends the responses, which take len / MTU PSNs */
static void req_read(rx_core_t *st, const rx_head_t *x)
{
	rx_qp_t *q = &st->qp[x->qpn];

	if (!read_ok(st, x->h)) {
		rx_nak(st, x->psn, RNIC_AETH_NAK_REM_ACCESS);
		rx_finish_frame(st);
		return;
	}
	st->o.stat_read_reqs++;
	q->epsn = (q->epsn + rnic_npkts(rnic_be32(x->h + RNIC_XTH_OFF + 12), QCL_CTRL(st, PMTU))) &
		  RNIC_PSN_MASK;
	q->msn = (q->msn + 1) & RNIC_PSN_MASK;
	read_response(st, x->h, RNIC_RSP_KIND_READ, x->psn);
	rx_finish_frame(st);
}

/* Atomics (9.4.5): 8 aligned bytes, read, modified and written back, original returned. The
 * operand is read by DMA; atomic_done finishes. */
static void req_atomic(rx_core_t *st, const rx_head_t *x)
{
	const uint8_t *h = x->h;
	uint64_t va = rnic_be64(h + RNIC_XTH_OFF);
	uint32_t rkey = rnic_be32(h + RNIC_XTH_OFF + 8);

	if ((va & 7) != 0) {
		rx_nak(st, x->psn, RNIC_AETH_NAK_INV_REQ);
		rx_finish_frame(st);
		return;
	}
	if (!(st->cur.l.access & RNIC_ACCESS_REMOTE_ATOMIC) ||
	    rnic_mpt_check(st->kg_e, rkey, st->cur.l.pdn, RNIC_ACCESS_REMOTE_ATOMIC, va, 8)) {
		rx_nak(st, x->psn, RNIC_AETH_NAK_REM_ACCESS);
		rx_finish_frame(st);
		return;
	}
	st->o.stat_atomics++;
	st->at_psn = x->psn;
	st->at_op = (uint8_t)x->op;
	st->at_swap = rnic_be64(h + RNIC_XTH_OFF + 12);
	st->at_cmp = rnic_be64(h + RNIC_XTH_OFF + 20);
	st->wnsge = 1;
	st->wsge[0] = (rx_sge_t){ .addr = va, .len = 8, .key = rkey, .access = RNIC_ACCESS_REMOTE_ATOMIC };
	st->wc_sge = 0;
	st->wc_off = 0;
	st->kind = K_ATOMIC;
	st->psn = x->psn;
	st->busy = B_ATX; /* its operand's address from the next clock on */
}

/* The atomic's operand address (B_ATX until its key's MPT entry and its MTT line are there,
 * looked up in lk): its read goes out next (B_ATOMIC); without context memory to read the line
 * from, NAKed as an address it cannot reach. */
void rx_atomic_xlate(rx_core_t *st, const rx_look_t *lk)
{
	int x = lk->hit <= 0 ? 0 : lk->live ? lk->x : -1;

	if (x < 0) {
		rx_nak(st, st->psn, RNIC_AETH_NAK_REM_ACCESS);
		rx_finish_frame(st);
		return;
	}
	if (x)
		st->at_addr = lk->bus;
	st->busy = x ? B_ATOMIC : B_ATX;
	st->rd_issue = (uint8_t)x;
}

/* A request of an RC or UC QP: its PSN against the expected one (duplicates, sequence errors),
 * a receive WQE where it needs one, then the operation. */
static void request(rx_core_t *st, const rnic_rx_in_t *in, const rx_head_t *x)
{
	rx_qp_t *q = &st->qp[x->qpn];
	uint32_t op = x->op, psn = x->psn, qpn = x->qpn;
	int starts = op == RNIC_BTH_OP_SEND_FIRST || op == RNIC_BTH_OP_SEND_ONLY || op == RNIC_BTH_OP_SEND_ONLY_IMM ||
		     op == RNIC_BTH_OP_WRITE_FIRST || op == RNIC_BTH_OP_WRITE_ONLY || op == RNIC_BTH_OP_WRITE_ONLY_IMM;
	int32_t d;

	if (st->uc) {
		/* UC (IBTA 9.7.7): no duplicates, no NAKs; a PSN out of sequence drops the message in
		 * progress, and a FIRST/ONLY starts a new one at its PSN */
		if (psn != q->epsn) {
			q->in_msg = MSG_NONE;
			if (!starts) {
				st->o.stat_drop_malformed++;
				rx_finish_frame(st);
				return;
			}
			q->epsn = psn;
		}
		if (rx_need_rwqe(op) && !RW_N(st, qpn) && !rx_rq_avail(st, qpn)) {
			st->o.stat_drop_norecv++;
			q->epsn = (q->epsn + 1) & RNIC_PSN_MASK;
			rx_finish_frame(st);
			return;
		}
	}
	if (q->fatal) {
		st->o.stat_drop_qpn++;
		rx_finish_frame(st);
		return;
	}
	d = rnic_psn_diff(psn, q->epsn);
	if (d < 0) {
		duplicate(st, x->h, op, psn);
		return;
	}
	if (d > 0) {
		/* sequence error (9.7.5.1.3): one NAK, later out-of-order packets dropped; but one
		 * not past the packet NAKed is the requester's next pass, sent after our NAK with the
		 * expected PSN lost again: NAKed once more, or it would wait for its timer (a packet
		 * duplicated or reordered in the same pass is past it, but for that one's own copy) */
		if (!q->nak_sent || (int16_t)(uint16_t)(psn - q->oos_psn) <= 0) {
			q->nak_sent = 1;
			q->oos_psn = (uint16_t)psn;
			st->o.stat_nak_psn++;
			rx_nak(st, q->epsn, RNIC_AETH_NAK_PSN_SEQ);
		}
		rx_finish_frame(st);
		return;
	}
	if (rx_need_rwqe(op) && !RW_N(st, qpn)) {
		if (rx_rq_avail(st, qpn)) {
			rx_fetch_rwqe(st, qpn);
			return;
		}
		/* no receive WQE: RNR NAK (9.7.5.2.8), again for every retry; the message's later
		 * packets are dropped until the requester comes back to this PSN */
		q->nak_sent = 1;
		q->oos_psn = (uint16_t)psn;
		st->o.stat_nak_rnr++;
		rx_nak(st, psn, RNIC_AETH_RNR | st->cur.l.min_rnr);
		rx_finish_frame(st);
		return;
	}
	q->nak_sent = 0;
	if (starts)
		q->ts_first = (uint32_t)in->cycle;
	if (op <= RNIC_BTH_OP_SEND_ONLY_IMM) {
		req_send(st, x);
	} else if (op <= RNIC_BTH_OP_WRITE_ONLY_IMM) {
		req_write(st, x);
	} else if (q->in_msg != MSG_NONE || x->plen) {
		q->in_msg = MSG_NONE;
		rx_nak(st, psn, RNIC_AETH_NAK_INV_REQ);
		rx_finish_frame(st);
	} else if (op == RNIC_BTH_OP_READ_REQ) {
		req_read(st, x);
	} else {
		req_atomic(st, x);
	}
}

/* The MPT entry of key into e: 1; 0: a miss, its read asked for as the next clock begins
 * (rx_mpt_issue; rx_mpt_get again then); -1: wait (rnic_mpt_get). A miss not on its way waits
 * for no other read: while the reads on their way are as many as can be, it is asked for too,
 * and the look-ahead makes none. */
int rx_mpt_get(rx_core_t *st, uint32_t key, uint32_t e[RNIC_MPT_WORDS])
{
	int hit = rnic_mpt_get(&st->t, st->icm, key, e);

	if (hit <= 0 && rnic_mpt_wanted(&st->t, key)) {
		st->mm_on = 1;
		st->mm_key = key;
	}
	return hit;
}

/* The MPT cache's look-ahead, from the clock after a request came in whole (before this clock's
 * tag writes): its key's entry to be read (mk_want) if it is neither there nor on its way, in the
 * first clock the read channel is free; a WRITE's or an atomic's first page's MTT line is looked
 * for too (rnic_mpt_ahead: now, or as the entry lands). A hint only: the next request to come in
 * takes the place of one not yet looked up, and a look-up waits while a read waits for the
 * channel. No read goes out while a fence waits to be sent. */
void rx_mpt_ahead(rx_core_t *st)
{
	int r;

	if (!st->mk_cand || st->mk_want)
		return;
	r = rnic_mpt_ahead(&st->t, st->mk_cand_key, st->mk_cand_va, st->mk_cand_xl);
	st->mk_cand = r < 0;
	st->mk_want = r > 0;
	st->mk_want_key = st->mk_cand_key;
	st->mk_want_va = st->mk_cand_va;
	st->mk_want_xl = st->mk_cand_xl;
}

/* The MPT entry read of this clock, before its lookup: the last clock's miss (mm_key, asked again
 * by the lookup while it misses; it does not wait for a fence, which may wait for the frame that
 * needs it), else, none asked, the look-ahead's. */
void rx_mpt_issue(rx_core_t *st)
{
	uint64_t bus;

	if (st->mm_on) {
		st->mm_on = 0;
		if (rx_rd_room(st) && rnic_mpt_can_read(&st->t, st->mm_key) &&
		    (bus = rnic_mpt_read(&st->t, st->icm, st->mm_key, 0, 0, (uint32_t)st->now)))
			rx_read_req(st, bus, RNIC_ICM_MPT_STRIDE, RD_MPT, 0);
		return;
	}
	if (!st->mk_want || !rx_rd_room(st) || st->fence_pending)
		return;
	st->mk_want = 0;
	if (rnic_mpt_can_read(&st->t, st->mk_want_key) &&
	    (bus = rnic_mpt_read(&st->t, st->icm, st->mk_want_key, st->mk_want_va, st->mk_want_xl, (uint32_t)st->now)))
		rx_read_req(st, bus, RNIC_ICM_MPT_STRIDE, RD_MPT, 0);
}

/* The TLB's read of this clock, one place for all, before its lookup: the line the last clock's
 * translation missed, or the lines after the one it hit (xlate), else the line the look-ahead
 * found missing (rnic_tlb_hint), which waits while a fence waits to be sent. */
void rx_tlb_issue(rx_core_t *st)
{
	uint32_t kind = st->tl_on ? st->tl_kind : RNIC_TLB_HINT, len;
	uint64_t bus;

	if ((st->tl_on || (st->t.tw && !st->fence_pending)) && rx_rd_room(st) &&
	    (bus = rnic_tlb_read(&st->t, st->icm, st->tl_mi, kind, (uint32_t)st->now, &len)))
		rx_read_req(st, bus, len, RD_MTT, 0);
	st->tl_on = 0;
}

/* The key a frame of opcode op is checked with before it is dispatched: KEY_REQ its request's
 * (RETH, AtomicETH), KEY_RWQE those of the receive WQE a message starts with, if it holds one */
enum { KEY_NONE, KEY_REQ, KEY_RWQE };

static uint32_t key_kind(const rx_core_t *st, uint32_t qpn, uint32_t op)
{
	if (qpn >= RNIC_MAX_QP)
		return KEY_NONE;
	if (op == RNIC_BTH_OP_WRITE_FIRST || op == RNIC_BTH_OP_WRITE_ONLY || op == RNIC_BTH_OP_WRITE_ONLY_IMM ||
	    op == RNIC_BTH_OP_READ_REQ || op == RNIC_BTH_OP_CMP_SWAP || op == RNIC_BTH_OP_FETCH_ADD)
		return KEY_REQ;
	if ((op == RNIC_BTH_OP_SEND_FIRST || op == RNIC_BTH_OP_SEND_ONLY || op == RNIC_BTH_OP_SEND_ONLY_IMM ||
	     op >= RNIC_BTH_OP_UD_SEND_ONLY) && RW_N(st, qpn))
		return KEY_RWQE;
	return KEY_NONE;
}

/* The key to look up (lookup(), rx.c) for the frame at the head, from its verdict and headers
 * before it is parsed: 1 and *key, or 0 for none (nor for a frame that goes to the firmware or
 * is dropped as malformed). */
int rx_head_key(rx_core_t *st, uint32_t *key)
{
	const rx_frame_t *f = &st->cur.f;
	const rx_sge_t *g;
	uint32_t k;

	if (f->v.cls != RX_ROCE || !f->icrc_ok)
		return 0;
	k = key_kind(st, f->v.qpn, f->v.op);
	if (k == KEY_REQ) {
		*key = rnic_be32(f->raw + RNIC_XTH_OFF + 8 + (f->v.v6 ? RNIC_IP6_EXTRA : 0));
		return 1;
	}
	g = k == KEY_RWQE ? rx_rwqe_next(st, f->v.qpn) : NULL;
	if (g)
		*key = g->key;
	return g != NULL;
}

/* The keys the frame at the head is checked with, in the MPT cache before it is dispatched
 * (looked up in lk): a request's key, its entry kept in kg_e for the operation's check
 * (rx_req.c), or the receive WQE a message starts with (rx_rwqe_checked, rx.c). 0: not yet, the
 * frame waits. */
static int keys_cached(rx_core_t *st, uint32_t qpn, uint32_t op, const rx_look_t *lk)
{
	uint32_t k = key_kind(st, qpn, op), i;

	if (k == KEY_REQ && lk->hit > 0)
		for (i = 0; i < RNIC_MPT_WORDS; i++)
			st->kg_e[i] = lk->e[i];
	return k == KEY_REQ ? lk->hit > 0 : k == KEY_RWQE ? rx_rwqe_checked(st, qpn, lk) : 1;
}

/* Decide what to do with the frame at the head of the queue. */
void rx_dispatch(rx_core_t *st, const rnic_rx_in_t *in, const rx_look_t *lk)
{
	rx_head_t x;
	uint32_t i;

	if (!parse(st, in, &x))
		return;
	st->qpn = x.qpn;
	if (!keys_cached(st, x.qpn, x.op, lk)) {
		st->redo = 1; /* its keys' MPT entries are read: the frame waits at the head */
		return;
	}
	if (x.op == RNIC_BTH_OP_ACK) {
		/* for the requester: the TX kernel judges PSN and syndrome */
		rx_notice(st, x.psn, x.h[RNIC_XTH_OFF], 0);
		rx_finish_frame(st);
	} else if (x.op >= RNIC_BTH_OP_READ_RESP_FIRST && x.op <= RNIC_BTH_OP_ATOMIC_ACK) {
		response(st, x.h, x.op, x.psn, x.plen, x.xth);
	} else if (x.op >= RNIC_BTH_OP_UD_SEND_ONLY) {
		/* the GRH area: the IPv6 header, or 20 zero bytes and the IPv4 header */
		for (i = 0; i < RNIC_GRH_LEN; i++)
			st->grh[i] = x.v6 ? x.raw[RNIC_IP_OFF + i] :
				     i < RNIC_GRH_LEN - RNIC_IP_HLEN ? 0 : x.raw[RNIC_IP_OFF + i - (RNIC_GRH_LEN - RNIC_IP_HLEN)];
		datagram(st, x.h, x.op, x.plen, x.xth, in->cycle);
	} else {
		request(st, in, &x);
	}
}

/* The atomic's operand arrived: compute, keep the result for a duplicate (B_ATREC writes it to
 * its slot in ICM, then the new value to the target), answer. One the host refused to read (err)
 * is not an operand: nothing is written, the requester gets a remote operational error NAK. */
void rx_atomic_done(rx_core_t *st, const uint8_t *rd, uint32_t err)
{
	rx_qp_t *q = &st->qp[st->qpn];
	uint64_t orig = rnic_rd_le(rd, 8), v;
	uint32_t i, write = 1;

	if (err) {
		rx_nak(st, st->at_psn, RNIC_AETH_NAK_REM_OP);
		st->busy = B_FIN;
		return;
	}
	i = q->at_next++ % RX_ATOMIC_REPLAY;

	if (st->at_op == RNIC_BTH_OP_CMP_SWAP) {
		v = st->at_swap;
		write = orig == st->at_cmp;
	} else {
		v = orig + st->at_swap;
	}
	q->epsn = (q->epsn + 1) & RNIC_PSN_MASK;
	q->msn = (q->msn + 1) & RNIC_PSN_MASK;
	st->at_rec = atomic_slot(st, st->qpn, i);
	q->at_valid = (uint8_t)((q->at_valid & ~(1u << i)) | (st->at_rec != 0) << i);
	rx_respond(st, RNIC_RSP_KIND_ATOMIC, st->at_psn, RNIC_AETH_ACK_NO_CREDIT);
	st->posts.rsp.atomic = orig;
	rx_frame_value(st, RNIC_XTH_OFF + 12, v, 8);
	st->at_write = (uint8_t)write;
	st->busy = B_ATREC;
}

/* B_ATREC: the result and its PSN to its slot (a write of the store's), the new value's
 * placement next clock (B_ATPL) */
void rx_atomic_record(rx_core_t *st)
{
	rx_cmd_t *c;
	uint32_t k;

	if (!st->at_rec) {
		rx_place(st, RNIC_XTH_OFF + 12, st->at_write ? 8 : 0);
		return;
	}
	c = rx_cmd(st);
	c->kind = RX_CMD_DATA;
	c->addr = st->at_rec;
	c->len = 12;
	for (k = 0; k < 12; k++)
		c->data[k] = k < 8 ? (uint8_t)(st->posts.rsp.atomic >> 8 * k) : (uint8_t)(st->at_psn >> 8 * (k - 8));
	st->busy = B_ATPL;
}

/* The read an atomic waits for: its operand (B_ATOMIC), or its QP's results (B_REPLAY) */
void rx_atomic_read(rx_core_t *st)
{
	if (st->busy == B_REPLAY)
		rx_read_req(st, st->at_addr, RNIC_ICM_ATOMIC_STRIDE, RD_REPLAY, st->qpn);
	else
		rx_read_req(st, st->at_addr, 8, RD_ATOMIC, st->qpn);
}

/* B_REPLAY: a beat of the QP's atomic results read back from ICM (the first, or the last). The
 * slot that holds the duplicate's PSN answers it as the first was answered; none (or a beat the
 * host refused, err): dropped, the requester asks again. */
void rx_replay_done(rx_core_t *st, const uint8_t *rd, uint32_t last, uint32_t err)
{
	uint32_t i;

	for (i = 0; i < AT_PER_BEAT; i++) {
		const uint8_t *r = rd + i * RNIC_ICM_ATOMIC_SLOT;

		if (!err && (st->at_vmask >> (last * AT_PER_BEAT + i)) & 1 && rnic_rd_le(r + 8, 4) == st->at_psn) {
			st->at_found = 1;
			st->at_val = rnic_rd_le(r, 8);
		}
	}
	if (!last)
		return;
	if (st->at_found) {
		rx_respond(st, RNIC_RSP_KIND_ATOMIC, st->at_psn, RNIC_AETH_ACK_NO_CREDIT);
		st->posts.rsp.atomic = st->at_val;
	}
	st->busy = B_FIN;
}

