/* TX kernel: RC requester, and the sending half of the RC responder.
 *
 * Per clock (contract: docs/ARCHITECTURE.md) the kernel can take one doorbell, one DMA read
 * beat, one ACK notice and one responder frame request, issue one DMA read request and emit one
 * Ethernet beat and one completion. Frames flow through three decoupled stages:
 *   - the packet builder cuts work into packets, one header per clock at a packet boundary:
 *     responder frames first (ACK/NAK, ATOMIC ACK, READ RESPONSE FIRST/MIDDLE/LAST/ONLY, in the
 *     PSN order the RX kernel handed them over, IBTA 9.7.5), then the request message of the
 *     WQE in progress (IBTA 9.2-9.4: SEND, RDMA WRITE (with immediate), READ request, atomics);
 *     it then issues the packet's payload DMA reads, cut at 4 KiB pages and SGEs, up to
 *     TX_CREDIT bytes ahead of the emitter so that the PCIe read latency is covered;
 *   - the scheduler fetches the next WQE (round-robin over ready QPs) as soon as the message
 *     in progress has all its packets built, checks its SGEs (lkey, PD, bounds, IBTA 10.6.3.1)
 *     and reserves an outstanding-WQE slot;
 *   - the emitter sends each built packet: header, payload realigned behind it in a three-beat
 *     byte packer, pad and ICRC (RoCEv2 A17.3.3).
 * DMA read data returns in request order; each read is tagged as WQE or payload so the beat
 * goes to the right stage.
 * ACK notices from the RX kernel retire outstanding WQEs whose last PSN they cover (coalesced
 * ACKs, IBTA 9.7.5.1); a READ or atomic retires when the RX kernel has placed its response. A
 * PSN-sequence NAK or an expired ACK timer (4.096 us * 2^timeout, 9.7.6.1.3) sends the QP's
 * unacknowledged WQEs again from the oldest (go-back-N), resuming inside a message at the PSN the
 * responder expects; an RNR NAK does the same after the RNR timer it carries (9.7.5.2.8).
 * retry_cnt (rnr_retry) rounds without progress complete the oldest WQE with RETRY_EXC_ERR
 * (RNR_RETRY_EXC_ERR); that and any other NAK move the QP to error and flush it (10.8).
 */
#include "tx.h"

/* RNR timer (IBTA Vol. 1 Table 45) in units of 10 us */
static const uint32_t rnr_units[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};
#define CYCLES_10US (RNIC_CLOCK_MHZ * 10)
#define RSP_SKIP 0xff /* a queued READ response made useless by a later request for it */

/* What a DMA read request brings back: payload, a WQE for the prefetch buffer, or (no read
 * issued) zero beats in place of payload that may not be read any more. */
enum { REQ_PAYLOAD, REQ_WQE, REQ_ZERO };

static uint64_t keep_mask(uint32_t n)
{
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

/* one slot stays free for the QP-fatal event that may follow an error completion */
static int cpl_full(const rnic_tx_state_t *st)
{
	return st->cpl_tail - st->cpl_head >= TX_CPL_FIFO - 1;
}

static int is_rd(uint32_t op)
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

static void cpl_push(rnic_tx_state_t *st, uint32_t qpn, uint64_t wr_id, uint32_t op, uint32_t len,
		     uint32_t status, uint64_t ts, uint32_t index)
{
	rnic_cpl_t *c = &st->cpl[st->cpl_tail % TX_CPL_FIFO];

	*c = (rnic_cpl_t){0};
	c->cqn = (uint16_t)QPC_F(&st->t, qpn, CQN, SEND);
	c->qpn = qpn;
	c->wr_id = wr_id;
	c->byte_len = len;
	c->opcode = (uint8_t)wc_opcode(op);
	c->status = (uint8_t)status;
	c->ts_start = ts;
	c->wqe_index = (uint16_t)index;
	st->cpl_tail++;
}

/* An error the host did not ask for moves the QP to error: its WQEs are flushed and the host
 * gets the QP-fatal event (IBTA 11.6.3.1). */
static void qp_fatal(rnic_tx_state_t *st, uint32_t q)
{
	rnic_cpl_t *c = &st->cpl[st->cpl_tail % TX_CPL_FIFO];

	if (st->qp[q].err)
		return;
	st->qp[q].err = 1;
	*c = (rnic_cpl_t){0};
	c->evt = RNIC_EQE_TYPE_QP_FATAL;
	c->qpn = q;
	c->ctx = (uint8_t)QPC_F(&st->t, q, CTRL, CTX);
	st->cpl_tail++;
}

static void ob_cpl(rnic_tx_state_t *st, uint32_t q, const tx_ob_t *ob, uint32_t status)
{
	uint32_t len = status ? 0 : ob->op == RNIC_WQE_OP_ATOMIC_CS || ob->op == RNIC_WQE_OP_ATOMIC_FA ? 8 : ob->len;

	if (ob->signaled || status)
		cpl_push(st, q, ob->wr_id, ob->op, len, status, ob->ts, ob->index);
}

/* Retire the oldest outstanding WQE of QP q. */
static void ob_retire(rnic_tx_state_t *st, uint32_t q, uint32_t status)
{
	tx_qp_t *p = &st->qp[q];
	tx_ob_t *ob = &st->ob[q][p->ob_head % TX_OB];

	ob_cpl(st, q, ob, status);
	if (is_rd(ob->op) && p->rd_out) {
		p->rd_out--;
		p->rd_wait = 0;
	}
	p->ob_head++;
	st->sched_hint = 1;
}

static void push(rnic_tx_state_t *st, const uint8_t *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < RNIC_BEAT; i++) /* n <= RNIC_BEAT */
		if (i < n)
			st->acc[st->acc_n + i] = p[i];
	st->acc_n += n;
}

/* One Ethernet beat out of the packer when a full beat, or the end of the frame, is there. */
static void emit_beat(rnic_tx_state_t *st)
{
	uint32_t n, i;

	/* the oldest frame's end, once pushed, ends its last beat; bytes of the next may follow it */
	n = st->frame_end ? st->end_n : st->acc_n;
	if (st->o.eth_valid || !(n >= RNIC_BEAT || (st->frame_end && n)))
		return;
	n = n < RNIC_BEAT ? n : RNIC_BEAT;
	for (i = 0; i < RNIC_BEAT; i++)
		st->o.eth_data[i] = i < n ? st->acc[i] : 0;
	st->o.eth_valid = 1;
	st->o.eth_keep = keep_mask(n);
	st->o.eth_last = st->frame_end && st->end_n <= RNIC_BEAT;
	for (i = 0; i + n < TX_ACC; i++)
		st->acc[i] = st->acc[i + n];
	st->acc_n -= n;
	if (st->frame_end)
		st->end_n -= n;
	if (st->o.eth_last) {
		st->frame_end = 0;
		st->o.stat_frames++;
	}
}

static int qp_ready(const rnic_tx_state_t *st, uint32_t q)
{
	const tx_qp_t *p = &st->qp[q];

	if (p->pi == p->ci)
		return 0;
	if (p->err)
		return 1;
	return p->state == RNIC_QPS_RTS && (uint16_t)(p->ob_tail - p->ob_head) + p->pf_n < TX_OB && !p->rd_wait &&
	       !p->hold_until;
}

static int req_full(const rnic_tx_state_t *st)
{
	return st->req_tail - st->req_head >= TX_REQ_FIFO;
}

static void read_req(rnic_tx_state_t *st, uint64_t addr, uint32_t len, uint32_t kind)
{
	st->o.rdreq_valid = kind != REQ_ZERO;
	st->o.rdreq_addr = addr;
	st->o.rdreq_len = (uint16_t)len;
	st->req_len[st->req_tail % TX_REQ_FIFO] = (uint16_t)len;
	st->req_kind[st->req_tail % TX_REQ_FIFO] = (uint8_t)kind;
	st->req_tail++;
}

/* WQEs of QP q fetched ahead and not started are dropped (when they reach the head of the
 * prefetch ring) and fetched again from p->ci: the QP went back (go-back-N, a READ limit or
 * fence), went to error, or away. A bounded pass over TX_PF slots (flags in registers). */
static void unfetch(rnic_tx_state_t *st, uint32_t q)
{
	uint32_t i;

	for (i = 0; i < TX_PF; i++)
		if (st->pf[i].qpn == q && (uint32_t)(i - st->pf_head) % TX_PF < st->pf_tail - st->pf_head)
			st->pf[i].discard = 1;
	st->qp[q].pf_n = 0;
}

/* Scheduler: fetch the next WQEs of the next ready QP (round-robin), up to a batch in one DMA
 * read, while the message in progress is still being built. */
static void schedule(rnic_tx_state_t *st)
{
	uint32_t i, q, mask, n, room, k;
	uint64_t base, addr;
	tx_qp_t *p;

	if (st->pf_tail - st->pf_head >= TX_PF || st->o.rdreq_valid || req_full(st) || cpl_full(st) ||
	    !st->sched_hint)
		return;
	for (i = 1; i <= RNIC_MAX_QP; i++) {
		q = (st->rr + i) % RNIC_MAX_QP;
		if (!qp_ready(st, q))
			continue;
		p = &st->qp[q];
		st->rr = q;
		mask = (1u << QPC_F(&st->t, q, RING_LOG, SQ)) - 1;
		base = ((uint64_t)QPC_W(&st->t, q, SQ_BASE_HI) << 32) | QPC_W(&st->t, q, SQ_BASE_LO);
		addr = base + (uint64_t)(p->ci & mask) * RNIC_WQE_BYTES;
		/* as many as are posted, fit the ring ahead, the outstanding-WQE window, the ring's
		 * end and the 4 KiB page (a DMA read never crosses one) */
		n = (uint16_t)(p->pi - p->ci);
		room = TX_PF - (st->pf_tail - st->pf_head);
		n = n < room ? n : room;
		if (!p->err) { /* qp_ready: at least one */
			room = TX_OB - (uint16_t)(p->ob_tail - p->ob_head) - p->pf_n;
			n = n < room ? n : room;
		}
		room = mask + 1 - (p->ci & mask);
		n = n < room ? n : room;
		room = (4096 - (uint32_t)(addr & 4095)) / RNIC_WQE_BYTES;
		n = n < room ? n : room;
		n = n < TX_PF_BATCH ? n : TX_PF_BATCH;
		read_req(st, addr, n * RNIC_WQE_BYTES, REQ_WQE);
		for (k = 0; k < TX_PF_BATCH; k++) {
			tx_pf_t *f = &st->pf[(st->pf_tail + k) % TX_PF];

			if (k < n) {
				f->qpn = (uint16_t)q;
				f->index = (uint16_t)(p->ci + k);
				f->ready = 0;
				f->discard = 0;
			}
		}
		st->pf_tail += n;
		p->ci = (uint16_t)(p->ci + n);
		p->pf_n = (uint8_t)(p->pf_n + n);
		return;
	}
	st->sched_hint = 0; /* nothing ready: rescan after the next event */
}

/* Check the SGEs of the WQE (local key, PD, bounds; `access` needed on each MR). */
static uint32_t load_sges(rnic_tx_state_t *st, const uint8_t *w, uint32_t pdn, uint32_t access)
{
	uint32_t status = RNIC_WC_STATUS_SUCCESS, k;

	if (RNIC_WQE_NUM_SGE_GET(w) > RNIC_MAX_SGE)
		return RNIC_WC_STATUS_LOC_LEN_ERR;
	for (k = 0; k < RNIC_MAX_SGE; k++) {
		const uint8_t *s = w + RNIC_WQE_SGE_OFF + k * RNIC_SGE_SIZE;
		tx_sge_t *g = &st->sge[st->nsge];

		if (k >= RNIC_WQE_NUM_SGE_GET(w))
			break;
		g->addr = RNIC_SGE_ADDR_GET(s);
		g->len = RNIC_SGE_LEN_GET(s);
		if (!g->len)
			continue;
		g->key = RNIC_SGE_LKEY_GET(s);
		if (rnic_key_check(&st->t, g->key, pdn, access, g->addr, g->len))
			status = RNIC_WC_STATUS_LOC_PROT_ERR;
		if (st->msg_len + (uint64_t)g->len > 0x80000000u)
			status = RNIC_WC_STATUS_LOC_LEN_ERR;
		st->msg_len += g->len;
		st->nsge++;
	}
	return status;
}

/* Tell the RX kernel where the responses of this READ/atomic go. */
static void post_rdx(rnic_tx_state_t *st, const tx_ob_t *ob)
{
	rnic_rdx_t *x = &st->o.rdx;
	uint32_t k;

	*x = (rnic_rdx_t){0};
	x->qpn = st->qpn;
	x->first_psn = ob->first_psn;
	x->npkts = ((ob->last_psn - ob->first_psn) & RNIC_PSN_MASK) + 1;
	x->kind = st->op;
	x->nsge = (uint8_t)st->nsge;
	for (k = 0; k < RNIC_MAX_SGE; k++) {
		rnic_wr_le(x->sge + k * 16, 8, st->sge[k].addr);
		rnic_wr_le(x->sge + k * 16 + 8, 4, st->sge[k].len);
		rnic_wr_le(x->sge + k * 16 + 12, 4, st->sge[k].key);
	}
	st->o.rdx_valid = 1;
}

/* WQE arrived: check it and set the message up (or complete it in error, or put it back). */
static void start_message(rnic_tx_state_t *st)
{
	tx_qp_t *p = &st->qp[st->qpn];
	const uint8_t *w = st->wqe;
	uint32_t op = RNIC_WQE_OPCODE_GET(w), flags = RNIC_WQE_FLAGS_GET(w);
	uint32_t pdn = QPC_W(&st->t, st->qpn, PDN);
	uint32_t status = RNIC_WC_STATUS_SUCCESS, limit, npsn;
	tx_ob_t *ob;

	st->sched_hint = 1;
	if (!QPC_F(&st->t, st->qpn, CTRL, VALID))
		return; /* the QP was destroyed or reset meanwhile: its WQE is not ours any more */
	if (p->err) {
		cpl_push(st, st->qpn, RNIC_WQE_WR_ID_GET(w), op, 0, RNIC_WC_STATUS_WR_FLUSH_ERR, p->ts_db,
			 st->wqe_index);
		return;
	}
	limit = QPC_F(&st->t, st->qpn, RETRY, MAX_RD_ATOMIC);
	if ((is_rd(op) && p->rd_out >= (limit ? limit : 1)) || ((flags & RNIC_WQE_FLAG_FENCE) && p->rd_out)) {
		/* max_rd_atomic reached, or a fence behind READs/atomics: wait (IBTA 9.4.4, 10.8.3.3),
		 * and fetch it and the WQEs behind it again then */
		p->ci = st->wqe_index;
		p->rd_wait = 1;
		unfetch(st, st->qpn);
		return;
	}
	st->o.stat_wqes++;
	st->op = (uint8_t)op;
	st->type = (uint8_t)QPC_F(&st->t, st->qpn, CTRL, TYPE);
	st->inline_data = (flags & RNIC_WQE_FLAG_INLINE) != 0;
	st->msg_len = 0;
	st->nsge = 0;
	if (op > RNIC_WQE_OP_ATOMIC_FA || (st->type == RNIC_QPT_UC && op > RNIC_WQE_OP_SEND_IMM) ||
	    (st->type == RNIC_QPT_UD && op != RNIC_WQE_OP_SEND && op != RNIC_WQE_OP_SEND_IMM)) {
		/* UC: SEND and WRITE; UD: SEND (IBTA Table 38) */
		status = RNIC_WC_STATUS_LOC_QP_OP_ERR;
	} else if (st->inline_data) {
		st->msg_len = RNIC_WQE_TOTAL_LEN_GET(w);
		if (is_rd(op))
			status = RNIC_WC_STATUS_LOC_QP_OP_ERR;
		else if (st->msg_len > RNIC_MAX_INLINE)
			status = RNIC_WC_STATUS_LOC_LEN_ERR;
	} else {
		status = load_sges(st, w, pdn, is_rd(op) ? RNIC_ACCESS_LOCAL_WRITE : 0);
		if (!status && op >= RNIC_WQE_OP_ATOMIC_CS && st->msg_len != 8)
			status = RNIC_WC_STATUS_LOC_LEN_ERR;
	}
	if (status != RNIC_WC_STATUS_SUCCESS) {
		/* a local error completes the WQE (signaled or not) and moves the QP to error */
		cpl_push(st, st->qpn, RNIC_WQE_WR_ID_GET(w), op, 0, status, p->ts_db, st->wqe_index);
		qp_fatal(st, st->qpn);
		return;
	}
	st->mtu = rnic_mtu_bytes(QPC_F(&st->t, st->qpn, CTRL, PMTU));
	if (st->type == RNIC_QPT_UD && st->msg_len > st->mtu) {
		/* a datagram is one packet */
		cpl_push(st, st->qpn, RNIC_WQE_WR_ID_GET(w), op, 0, RNIC_WC_STATUS_LOC_LEN_ERR, p->ts_db,
			 st->wqe_index);
		qp_fatal(st, st->qpn);
		return;
	}
	npsn = rnic_npkts(st->msg_len, QPC_F(&st->t, st->qpn, CTRL, PMTU));
	st->npkts = op == RNIC_WQE_OP_RDMA_READ || op >= RNIC_WQE_OP_ATOMIC_CS ? 1 : npsn;
	if (op >= RNIC_WQE_OP_ATOMIC_CS)
		npsn = 1;
	ob = &st->ob[st->qpn][p->ob_tail % TX_OB];
	ob->wr_id = RNIC_WQE_WR_ID_GET(w);
	ob->ts = p->ts_db;
	ob->len = st->msg_len;
	ob->op = (uint8_t)op;
	ob->err = 0;
	ob->first_psn = p->psn;
	ob->last_psn = (p->psn + npsn - 1) & RNIC_PSN_MASK;
	if (p->ob_head == p->ob_tail)
		p->t_sent = st->now;
	ob->signaled = (flags & RNIC_WQE_FLAG_SIGNALED) != 0;
	ob->index = st->wqe_index;
	p->ob_tail++;
	st->first_psn = p->psn;
	p->psn = (p->psn + npsn) & RNIC_PSN_MASK;
	st->pkt = 0;
	st->rd_skip = 0;
	st->iss_sge = st->iss_sge_off = 0;
	if (p->restart && ob->index == p->restart_index) {
		/* go-back-N into the middle of a message: skip the packets before the PSN (a WRITE or
		 * SEND MIDDLE/LAST continues the responder's context, a READ is requested again from
		 * there, IBTA 9.7.5.1.3, 9.7.6.1.3) */
		int32_t k = rnic_psn_diff(p->restart_psn, ob->first_psn);

		p->restart = 0;
		if (k > 0 && (uint32_t)k < npsn && !st->inline_data) {
			if (op == RNIC_WQE_OP_RDMA_READ) {
				st->first_psn = (ob->first_psn + (uint32_t)k) & RNIC_PSN_MASK;
				st->rd_skip = (uint32_t)k * st->mtu;
			}
			else
				st->pkt = (uint32_t)k;
		}
	}
	if (is_rd(op)) {
		p->rd_out++;
		post_rdx(st, ob);
	}
	st->phase = 1;
}

/* Position the issuer's SGE cursor at byte `off` of the message. */
static void seek_sge(rnic_tx_state_t *st, uint32_t off)
{
	uint32_t g;

	st->iss_sge = 0;
	for (g = 0; g < RNIC_MAX_SGE; g++) {
		if (st->iss_sge >= st->nsge || off < st->sge[st->iss_sge].len)
			break;
		off -= st->sge[st->iss_sge].len;
		st->iss_sge++;
	}
	st->iss_sge_off = off;
}

/* The next packet slot, cleared: nothing of the packet that used it before may leak into this one
 * (a responder frame inheriting a UD packet's `retire` would retire a WQE of that QP). */
static tx_pkt_t *pkt_slot(rnic_tx_state_t *st)
{
	tx_pkt_t *k = &st->pk[st->pk_tail % TX_PKT_FIFO];
	uint32_t i;

	for (i = 0; i < TX_HDR; i++)
		k->hdr[i] = 0;
	k->hdr_len = k->pay_len = 0;
	k->pad = k->retire = k->v6 = k->poison = 0;
	k->qpn = 0;
	return k;
}

/* One packet of the request message. */
static void build_request(rnic_tx_state_t *st)
{
	tx_pkt_t *k = pkt_slot(st);
	const uint8_t *w = st->wqe;
	const uint8_t *av = st->type == RNIC_QPT_UD ? w + RNIC_WQE_UD_AV_OFF : 0;
	uint32_t v6 = av ? RNIC_UD_AV_IPV6_GET(av) : QPC_F(&st->t, st->qpn, CTRL, IPV6);
	uint32_t xoff = RNIC_XTH_OFF + (v6 ? RNIC_IP6_EXTRA : 0);
	uint8_t *x = k->hdr + xoff;
	uint32_t first = st->pkt == 0, last = st->pkt == st->npkts - 1;
	uint32_t pay = last ? st->msg_len - st->pkt * st->mtu : st->mtu;
	uint32_t imm = st->op == RNIC_WQE_OP_RDMA_WRITE_IMM || st->op == RNIC_WQE_OP_SEND_IMM;
	uint32_t xth = 0, op, i, ackreq = last; /* on LAST/ONLY, READ and atomics, as rxe does */
	uint64_t ra = RNIC_WQE_REMOTE_ADDR_GET(w);

	switch (st->op) {
	case RNIC_WQE_OP_RDMA_WRITE:
	case RNIC_WQE_OP_RDMA_WRITE_IMM:
		op = st->npkts == 1 ? (imm ? RNIC_BTH_OP_WRITE_ONLY_IMM : RNIC_BTH_OP_WRITE_ONLY) :
		     first ? RNIC_BTH_OP_WRITE_FIRST :
		     last ? (imm ? RNIC_BTH_OP_WRITE_LAST_IMM : RNIC_BTH_OP_WRITE_LAST) : RNIC_BTH_OP_WRITE_MIDDLE;
		if (first) {
			rnic_put_be64(x, ra);
			rnic_put_be32(x + 8, RNIC_WQE_RKEY_GET(w));
			rnic_put_be32(x + 12, st->msg_len);
			xth = RNIC_RETH_LEN;
		}
		break;
	case RNIC_WQE_OP_SEND:
	case RNIC_WQE_OP_SEND_IMM:
		op = st->npkts == 1 ? (imm ? RNIC_BTH_OP_SEND_ONLY_IMM : RNIC_BTH_OP_SEND_ONLY) :
		     first ? RNIC_BTH_OP_SEND_FIRST :
		     last ? (imm ? RNIC_BTH_OP_SEND_LAST_IMM : RNIC_BTH_OP_SEND_LAST) : RNIC_BTH_OP_SEND_MIDDLE;
		break;
	case RNIC_WQE_OP_RDMA_READ: {
		/* one request for the whole (remaining) message; its responses take the PSNs */
		uint32_t skip = st->rd_skip;

		op = RNIC_BTH_OP_READ_REQ;
		rnic_put_be64(x, ra + skip);
		rnic_put_be32(x + 8, RNIC_WQE_RKEY_GET(w));
		rnic_put_be32(x + 12, st->msg_len - skip);
		xth = RNIC_RETH_LEN;
		pay = 0;
		break;
	}
	default: /* atomics: AtomicETH (IBTA 9.3.3.3) */
		op = st->op == RNIC_WQE_OP_ATOMIC_CS ? RNIC_BTH_OP_CMP_SWAP : RNIC_BTH_OP_FETCH_ADD;
		rnic_put_be64(x, ra);
		rnic_put_be32(x + 8, RNIC_WQE_RKEY_GET(w));
		rnic_put_be64(x + 12, st->op == RNIC_WQE_OP_ATOMIC_CS ? RNIC_WQE_SWAP_GET(w) : RNIC_WQE_COMPARE_ADD_GET(w));
		rnic_put_be64(x + 20, RNIC_WQE_COMPARE_ADD_GET(w));
		xth = 28;
		pay = 0;
		break;
	}
	if (st->type == RNIC_QPT_UD) {
		/* DETH (IBTA 9.3.2): Q_Key (the QP's own if the WR's has its high bit set), source QP */
		uint32_t qkey = RNIC_UD_AV_QKEY_GET(w + RNIC_WQE_UD_AV_OFF);

		op = imm ? RNIC_BTH_OP_UD_SEND_ONLY_IMM : RNIC_BTH_OP_UD_SEND_ONLY;
		rnic_put_be32(x, qkey & 0x80000000u ? QPC_W(&st->t, st->qpn, QKEY) : qkey);
		rnic_put_be32(x + 4, st->qpn);
		xth = RNIC_DETH_LEN;
	}
	if (st->type != RNIC_QPT_RC) {
		ackreq = 0; /* nothing acknowledges UC or UD */
		if (st->type == RNIC_QPT_UC)
			op |= RNIC_BTH_UC_BIT;
	}
	if (imm && last) {
		rnic_wr_le(x + xth, 4, RNIC_WQE_IMM_GET(w)); /* kept in network order by the host */
		xth += RNIC_IMM_LEN;
	}
	k->pad = (uint8_t)((4 - (pay & 3)) & 3);
	/* UD: to the address handle's destination, from the WQE */
	rnic_build_headers(&st->t, st->qpn, k->hdr, op, k->pad, ackreq, st->first_psn + st->pkt,
			   xth + pay + k->pad + RNIC_ICRC_LEN, av);
	k->v6 = (uint8_t)v6;
	/* the ACK timer counts silence after the last packet sent: a long message is not late */
	st->qp[st->qpn].t_sent = st->now;
	k->retire = st->type != RNIC_QPT_RC && last;
	k->qpn = (uint16_t)st->qpn;
	k->hdr_len = (uint16_t)(xoff + xth);
	k->pay_len = (uint16_t)pay;
	if (st->inline_data) {
		for (i = 0; i < RNIC_MAX_INLINE; i++)
			if (i < pay)
				k->hdr[k->hdr_len + i] = w[RNIC_WQE_SGE_OFF + i];
		k->hdr_len += (uint16_t)pay;
		k->pay_len = 0;
	}
	st->pk_tail++;
	st->iss_rsp = 0;
	st->iss_left = k->pay_len;
	if (k->pay_len)
		seek_sge(st, st->pkt * st->mtu);
	if (++st->pkt == st->npkts)
		st->phase = 0;
}

/* A responder frame from the RX kernel. A READ asked for again means the requester lost part of
 * the responses and goes back to that PSN (IBTA 9.7.5.1.6): the READ responses of that QP still
 * queued, and the rest of the one being sent, are dropped instead of sent (the requester would
 * discard them as out of sequence and asks for all of them again). */
static void take_response(rnic_tx_state_t *st, const rnic_rsp_t *r)
{
	uint32_t i;

	if (r->kind == RNIC_RSP_KIND_READ_AGAIN) {
		for (i = 0; i < TX_RSP_FIFO; i++) {
			rnic_rsp_t *q = &st->rsp[(st->rsp_head + i) % TX_RSP_FIFO];

			uint32_t last = q->psn + rnic_npkts(q->len, QPC_F(&st->t, q->qpn, CTRL, PMTU)) - 1;

			/* responses from the PSN asked for on: those before it were received */
			if (i < st->rsp_tail - st->rsp_head && q->qpn == r->qpn && q->kind == RNIC_RSP_KIND_READ &&
			    rnic_psn_diff(last, r->psn) >= 0) {
				if (i == 0 && st->rj_active)
					st->rj_cancel = 1;
				else
					q->kind = RSP_SKIP;
			}
		}
	}
	st->rsp[st->rsp_tail % TX_RSP_FIFO] = *r;
	if (r->kind == RNIC_RSP_KIND_READ_AGAIN)
		st->rsp[st->rsp_tail % TX_RSP_FIFO].kind = RNIC_RSP_KIND_READ;
	if (r->kind == RNIC_RSP_KIND_READ) {
		/* more READs than max_dest_rd_atomic still to answer: the requester broke the limit it
		 * agreed to; Invalid Request NAK instead of the responses (IBTA 9.7.5.2.4, C9-112) */
		uint32_t n = 0, limit = QPC_F(&st->t, r->qpn, RETRY, MAX_DEST_RD_ATOMIC);

		for (i = 0; i < TX_RSP_FIFO; i++) {
			const rnic_rsp_t *q = &st->rsp[(st->rsp_head + i) % TX_RSP_FIFO];

			n += i < st->rsp_tail - st->rsp_head && q->qpn == r->qpn && q->kind == RNIC_RSP_KIND_READ;
		}
		if (n >= (limit ? limit : 1)) {
			st->rsp[st->rsp_tail % TX_RSP_FIFO].kind = RNIC_RSP_KIND_ACK;
			st->rsp[st->rsp_tail % TX_RSP_FIFO].syndrome = RNIC_AETH_NAK_INV_REQ;
		}
	}
	st->rsp_tail++;
}

/* One responder frame: ACK/NAK, ATOMIC ACK, or the next READ response packet (IBTA 9.4.3, 9.5). */
static void build_response(rnic_tx_state_t *st)
{
	const rnic_rsp_t *r = &st->rsp[st->rsp_head % TX_RSP_FIFO];
	tx_pkt_t *k;
	uint8_t *x;
	uint32_t op, xth = RNIC_AETH_LEN, pay = 0;

	st->iss_left = 0;
	/* skipped: made useless by a later request, or its QP is gone (nothing is read for it) */
	if (r->kind == RSP_SKIP || st->rj_cancel || !QPC_F(&st->t, r->qpn, CTRL, VALID)) {
		st->rj_active = 0;
		st->rj_cancel = 0;
		st->rsp_head++;
		return;
	}
	k = pkt_slot(st);
	k->qpn = (uint16_t)r->qpn;
	k->v6 = (uint8_t)QPC_F(&st->t, r->qpn, CTRL, IPV6);
	x = k->hdr + RNIC_XTH_OFF + (k->v6 ? RNIC_IP6_EXTRA : 0);
	if (r->kind == RNIC_RSP_KIND_READ) {
		uint32_t first, last;

		if (!st->rj_active) {
			st->rj_active = 1;
			st->rj_pkt = 0;
			st->rj_mtu = rnic_mtu_bytes(QPC_F(&st->t, r->qpn, CTRL, PMTU));
			st->rj_npkts = rnic_npkts(r->len, QPC_F(&st->t, r->qpn, CTRL, PMTU));
		}
		first = st->rj_pkt == 0;
		last = st->rj_pkt == st->rj_npkts - 1;
		pay = last ? r->len - st->rj_pkt * st->rj_mtu : st->rj_mtu;
		op = st->rj_npkts == 1 ? RNIC_BTH_OP_READ_RESP_ONLY :
		     first ? RNIC_BTH_OP_READ_RESP_FIRST :
		     last ? RNIC_BTH_OP_READ_RESP_LAST : RNIC_BTH_OP_READ_RESP_MIDDLE;
		if (op == RNIC_BTH_OP_READ_RESP_MIDDLE)
			xth = 0;
		k->pad = (uint8_t)((4 - (pay & 3)) & 3);
		rnic_build_headers(&st->t, r->qpn, k->hdr, op, k->pad, 0, r->psn + st->rj_pkt,
				   xth + pay + k->pad + RNIC_ICRC_LEN, 0);
		st->iss_rsp = 1;
		st->iss_left = pay;
		st->iss_va = r->va + (uint64_t)st->rj_pkt * st->rj_mtu;
		st->iss_key = r->key;
		if (++st->rj_pkt == st->rj_npkts) {
			st->rj_active = 0;
			st->rsp_head++;
		}
	} else {
		op = r->kind == RNIC_RSP_KIND_ATOMIC ? RNIC_BTH_OP_ATOMIC_ACK : RNIC_BTH_OP_ACK;
		k->pad = 0;
		if (r->kind == RNIC_RSP_KIND_ATOMIC) {
			rnic_put_be64(x + RNIC_AETH_LEN, r->atomic);
			xth += 8;
		}
		rnic_build_headers(&st->t, r->qpn, k->hdr, op, 0, 0, r->psn, xth + RNIC_ICRC_LEN, 0);
		st->o.stat_acks++;
		st->rsp_head++;
	}
	if (xth) {
		x[0] = (uint8_t)r->syndrome;
		rnic_put_be24(x + 1, r->msn);
	}
	k->hdr_len = (uint16_t)(x - k->hdr + xth);
	k->pay_len = (uint16_t)pay;
	st->pk_tail++;
}

/* QP q's message in progress stops at its next packet, and the WQEs fetched ahead for it are
 * dropped. */
static void stop_fetch(rnic_tx_state_t *st, uint32_t q)
{
	if (st->phase && st->qpn == q)
		st->cancel = 1;
	unfetch(st, q);
}

/* The region the payload of the packet being read comes from went away after its message
 * started (deregistered, re-registered, shrunk): nothing more is read from it. The packet still
 * leaves, zeros in place of the payload not read, with a bad ICRC so that no receiver takes it
 * (a frame cannot be taken back once its header is out); its message stops: a READ response
 * stream ends (the requester asks again and gets the NAK its key now earns), a request's WQE
 * completes with a protection error and its QP goes to error. */
static int poison(rnic_tx_state_t *st)
{
	uint32_t q = st->qpn;

	if (!st->iss_rsp && st->cpl_tail - st->cpl_head >= TX_CPL_FIFO)
		return -1; /* no room for the QP-fatal event yet */
	st->pk[(st->pk_tail - 1) % TX_PKT_FIFO].poison = 1;
	read_req(st, 0, st->iss_left, REQ_ZERO);
	st->credit += st->iss_left;
	st->iss_left = 0;
	st->o.stat_poisoned++;
	if (st->iss_rsp) {
		st->rj_cancel = st->rj_active;
		return 0;
	}
	st->ob[q][(st->qp[q].ob_tail - 1) % TX_OB].err = RNIC_WC_STATUS_LOC_PROT_ERR;
	qp_fatal(st, q);
	stop_fetch(st, q);
	return 0;
}

/* Packet builder and read issuer: one DMA read request, or one packet header, per clock. */
static void build(rnic_tx_state_t *st)
{
	uint64_t addr;
	uint32_t n, room, key;

	if (st->o.rdreq_valid)
		return;
	if (st->iss_left) {
		if (req_full(st) || st->credit + RNIC_DMA_MAX_LEN > TX_CREDIT)
			return;
		if (st->iss_rsp) {
			addr = st->iss_va;
			n = st->iss_left;
			key = st->iss_key;
		} else {
			const tx_sge_t *g = &st->sge[st->iss_sge];

			addr = g->addr + st->iss_sge_off;
			n = g->len - st->iss_sge_off;
			key = g->key;
		}
		room = RNIC_PAGE_SIZE_BYTES - (uint32_t)(addr & (RNIC_PAGE_SIZE_BYTES - 1));
		if (n > room)
			n = room;
		if (n > st->iss_left)
			n = st->iss_left;
		if (!rnic_key_live(&st->t, key, st->iss_rsp ? RNIC_ACCESS_REMOTE_READ : 0, addr, n)) {
			poison(st);
			return;
		}
		read_req(st, rnic_translate(&st->t, key, addr), n, REQ_PAYLOAD);
		st->credit += n;
		st->iss_left -= n;
		st->iss_va += n;
		st->iss_sge_off += n;
		if (!st->iss_rsp && st->iss_sge_off == st->sge[st->iss_sge].len) {
			st->iss_sge++;
			st->iss_sge_off = 0;
		}
		return;
	}
	if (st->pk_tail - st->pk_head >= TX_PKT_FIFO)
		return;
	if (st->rj_active || st->rsp_head != st->rsp_tail) {
		build_response(st);
		return;
	}
	if (st->phase && st->cancel) {
		st->phase = 0;
		st->cancel = 0;
		st->sched_hint = 1;
		return;
	}
	if (st->phase)
		build_request(st);
}

/* Go back N on QP q: its unacknowledged WQEs are fetched and sent again from the oldest, with
 * their original PSNs, resuming at `psn` (IBTA 9.7.5.1.3, 9.7.6.1.3). `rnr` != 0: after an RNR
 * NAK carrying that timer code + 1. */
static void rewind_qp(rnic_tx_state_t *st, uint32_t q, uint32_t psn, uint32_t rnr)
{
	tx_qp_t *p = &st->qp[q];
	tx_ob_t *ob = &st->ob[q][p->ob_head % TX_OB];
	uint32_t limit;

	if (p->ob_head == p->ob_tail)
		return;
	if (rnr) {
		limit = QPC_F(&st->t, q, RETRY, RNR_RETRY);
		if (limit != 7 && p->rnr_retries >= limit) {
			ob_retire(st, q, RNIC_WC_STATUS_RNR_RETRY_EXC_ERR);
			qp_fatal(st, q);
			st->ack_busy = 1;
			st->ack_qpn = q;
			return;
		}
		p->rnr_retries++;
		p->hold_until = st->now + (uint64_t)rnr_units[(rnr - 1) & 31] * CYCLES_10US; /* never 0 */
		st->o.stat_rnr++;
	} else {
		/* a go-back point later than the previous one is progress too */
		if (p->retries && rnic_psn_diff(psn, p->restart_psn) > 0)
			p->retries = 0;
		if (p->retries >= QPC_F(&st->t, q, RETRY, RETRY_CNT)) {
			/* retries exhausted: the oldest WQE fails, the QP goes to error, the rest is flushed */
			ob_retire(st, q, RNIC_WC_STATUS_RETRY_EXC_ERR);
			qp_fatal(st, q);
			st->ack_busy = 1;
			st->ack_qpn = q;
			return;
		}
		p->retries++;
		st->o.stat_retransmits++;
	}
	p->ci = ob->index;
	p->psn = ob->first_psn;
	p->restart = 1;
	p->restart_index = ob->index;
	p->restart_psn = psn;
	p->ob_tail = p->ob_head;
	p->rd_out = 0;
	p->rd_wait = 0;
	p->t_sent = st->now;
	stop_fetch(st, q);
	st->sched_hint = 1;
}

/* ACK timers, one QP per clock: 4.096 us * 2^timeout without progress (0: no timer). */
static void check_timer(rnic_tx_state_t *st)
{
	uint32_t q = st->timer_q++ % RNIC_MAX_QP;
	tx_qp_t *p = &st->qp[q];
	uint32_t t = QPC_F(&st->t, q, RETRY, TIMEOUT);

	if (p->hold_until && (int64_t)(st->now - p->hold_until) >= 0) {
		p->hold_until = 0; /* the RNR wait is over: the scheduler looks again */
		st->sched_hint = 1;
	}
	if (p->err && p->ob_head != p->ob_tail && !st->ack_busy) {
		/* in error with WQEs outstanding that no ACK will retire any more: flush them */
		st->ack_busy = 1;
		st->ack_qpn = q;
		return;
	}
	if (p->ob_head == p->ob_tail || p->err || !t || st->ack_busy || cpl_full(st) || p->hold_until ||
	    QPC_F(&st->t, q, CTRL, TYPE) != RNIC_QPT_RC)
		return;
	if (st->now - p->t_sent > (1024ull << t)) {
		/* a READ partly answered is asked again from its first response missing, with the
		 * address and length moved on (IBTA 9.7.5.1.6; a responder may ignore it otherwise) */
		const tx_ob_t *ob = &st->ob[q][p->ob_head % TX_OB];
		int resume = ob->op == RNIC_WQE_OP_RDMA_READ && rnic_psn_diff(p->rd_next, ob->first_psn) > 0 &&
			     rnic_psn_diff(p->rd_next, ob->last_psn) <= 0;

		rewind_qp(st, q, resume ? p->rd_next : ob->first_psn, 0);
	}
}

/* Emitter: header, payload, pad + ICRC of the oldest built packet into the packer. `rd` is the
 * DMA read beat taken this clock for it, or NULL. */
static void emit(rnic_tx_state_t *st, const uint8_t *rd)
{
	static const uint8_t zero[4];
	const tx_pkt_t *k = &st->pk[st->pk_head % TX_PKT_FIFO];
	uint8_t icrc[4];
	uint32_t n;

	switch (st->e_state) {
	case 0: /* the next frame goes in behind the end of the one draining */
		if (st->pk_head == st->pk_tail)
			return;
		st->hdr_pos = 0;
		st->pay_left = k->pay_len;
		st->e_state = 4;
		/* fall through */
	case 4:
		if (st->acc_n + RNIC_BEAT > TX_ACC)
			return;
		n = k->hdr_len - st->hdr_pos < RNIC_BEAT ? k->hdr_len - st->hdr_pos : RNIC_BEAT;
		st->crc = st->hdr_pos < 2 * RNIC_BEAT ?
			  rnic_icrc_beat(st->crc, k->hdr + st->hdr_pos, (int)(st->hdr_pos / RNIC_BEAT), (int)n, k->v6) :
			  rnic_crc32(st->crc, k->hdr + st->hdr_pos, n);
		push(st, k->hdr + st->hdr_pos, n);
		st->hdr_pos += n;
		if (st->hdr_pos < k->hdr_len)
			return;
		st->e_state = st->pay_left ? 1 : 2;
		return;
	case 1: /* payload beats from the DMA reads */
		if (!rd)
			return;
		n = st->req_left < RNIC_BEAT ? st->req_left : RNIC_BEAT;
		st->crc = rnic_crc32(st->crc, rd, n);
		push(st, rd, n);
		st->req_left -= n;
		st->credit -= n;
		st->pay_left -= n;
		st->o.stat_bytes += n;
		if (!st->pay_left)
			st->e_state = 2;
		return;
	case 2: /* pad and ICRC */
		if (st->acc_n + 8 > TX_ACC || st->frame_end || (k->retire && cpl_full(st)))
			return; /* one frame end in the packer at a time */
		if (k->retire)
			ob_retire(st, k->qpn, k->poison ? RNIC_WC_STATUS_LOC_PROT_ERR : RNIC_WC_STATUS_SUCCESS);
		st->crc = rnic_crc32(st->crc, zero, k->pad);
		push(st, zero, k->pad);
		rnic_wr_le(icrc, 4, k->poison ? st->crc : ~st->crc);
		push(st, icrc, 4);
		st->frame_end = 1;
		st->end_n = st->acc_n;
		st->pk_head++;
		st->e_state = 0;
		return;
	}
}

/* ACK/NAK notices: retire (one WQE per clock), or complete in error and flush. */
static void acknowledge(rnic_tx_state_t *st)
{
	uint32_t q = st->ack_qpn;
	tx_qp_t *p = &st->qp[q];
	tx_ob_t *ob = &st->ob[q][p->ob_head % TX_OB];
	uint32_t type = st->ack_syn & RNIC_AETH_TYPE_MASK;
	int32_t d = rnic_psn_diff(st->ack_psn, ob->last_psn);
	uint32_t rd;

	if (cpl_full(st))
		return;
	if (p->ob_head == p->ob_tail) {
		st->ack_busy = 0;
		return;
	}
	if (p->err) {
		ob_retire(st, q, ob->err ? ob->err : RNIC_WC_STATUS_WR_FLUSH_ERR);
		return;
	}
	rd = is_rd(ob->op);
	if (type == RNIC_AETH_TYPE_ACK && d >= 0 && (!rd || st->ack_rd)) {
		/* acknowledged (a READ/atomic: its response is placed) */
		ob_retire(st, q, RNIC_WC_STATUS_SUCCESS);
		p->t_sent = st->now;
		p->retries = 0;
		p->rnr_retries = 0;
		return;
	}
	if (type == RNIC_AETH_TYPE_ACK && rd && rnic_psn_diff(st->ack_psn, ob->first_psn) >= 0) {
		/* responses of the READ at the head are arriving: progress, and where to ask again */
		p->t_sent = st->now;
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
		p->t_sent = st->now;
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
	qp_fatal(st, q);
	st->ack_busy = 1;
}

static void commit_qp(rnic_tx_state_t *st, uint32_t q)
{
	tx_qp_t *p = &st->qp[q];
	uint32_t ctrl = QPC_W(&st->t, q, CTRL);
	uint32_t state = RNIC_GET(RNIC_QPC_CTRL_STATE, ctrl);

	/* destroyed or reset: nothing more is read from its rings or memory */
	if (!RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl))
		stop_fetch(st, q);
	if (!RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl) || state <= RNIC_QPS_RTR) {
		unfetch(st, q);
		*p = (tx_qp_t){0};
		p->psn = QPC_F(&st->t, q, SQ_PSN, PSN);
	} else if (state == RNIC_QPS_RTS && p->state != RNIC_QPS_RTS) {
		p->psn = QPC_F(&st->t, q, SQ_PSN, PSN);
	} else if (state == RNIC_QPS_ERR) {
		p->err = 1;
	}
	p->state = (uint8_t)state;
	st->sched_hint = 1;
}

static void doorbell(rnic_tx_state_t *st, const rnic_tx_in_t *in)
{
	uint32_t q = in->db_qpn, ctrl, state;

	ctrl = q < RNIC_MAX_QP ? QPC_W(&st->t, q, CTRL) : 0;
	state = RNIC_GET(RNIC_QPC_CTRL_STATE, ctrl);
	if (!RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl) || RNIC_GET(RNIC_QPC_CTRL_CTX, ctrl) != in->db_ctx ||
	    (state != RNIC_QPS_RTS && state != RNIC_QPS_ERR) ||
	    (uint16_t)(in->db_pi - st->qp[q].ci) > (1u << QPC_F(&st->t, q, RING_LOG, SQ))) {
		st->o.stat_drop_db++;
		return;
	}
	st->qp[q].pi = in->db_pi;
	st->sched_hint = 1;
	st->qp[q].ts_db = in->cycle;
}

/* A fence is passed once the packet being read has all its reads out and every read issued up to
 * then has returned its data: the QPs invalidated before the fence are read no more. */
static void fence(rnic_tx_state_t *st)
{
	if (st->fence_state == 1 && !st->iss_left) {
		st->fence_mark = st->req_tail;
		st->fence_state = 2;
	}
	if (st->fence_state == 2 && (int32_t)(st->req_head - (st->req_left ? 1u : 0u) - st->fence_mark) >= 0) {
		st->o.fence = st->fence_token;
		st->fence_state = 0;
	}
}

/* What the next DMA read beat is for (enum REQ_*). */
static uint32_t next_kind(const rnic_tx_state_t *st)
{
	return st->req_left ? st->cur_kind : st->req_kind[st->req_head % TX_REQ_FIFO];
}

void rnic_tx_step(rnic_tx_state_t *st, const rnic_tx_in_t *in, rnic_tx_out_t *out)
{
#pragma HLS PIPELINE II = 1
	static const uint8_t zero_beat[RNIC_BEAT];
	const uint8_t *rd = 0;
	uint32_t idx, i;

	if (in->rst) {
		for (i = 0; i < RNIC_MAX_QP; i++)
			st->qp[i] = (tx_qp_t){0};
		st->phase = 0;
		st->cancel = 0;
		st->pf_head = st->pf_fill = st->pf_tail = st->pf_beats = 0;
		st->acc_n = 0;
		st->frame_end = 0;
		st->e_state = 0;
		st->iss_left = 0;
		st->rj_active = 0;
		st->rsp_head = st->rsp_tail = 0;
		st->pk_head = st->pk_tail = 0;
		st->req_head = st->req_tail = st->req_left = st->credit = 0;
		st->cpl_head = st->cpl_tail = 0;
		st->ack_busy = 0;
		st->fence_state = 0;
		st->o = (rnic_tx_out_t){0};
		*out = st->o;
		return;
	}
	st->now = in->cycle;
	/* transfers at this edge */
	if (st->o.eth_valid && in->eth_ready)
		st->o.eth_valid = 0;
	if (st->o.rdreq_valid && in->rdreq_ready)
		st->o.rdreq_valid = 0;
	if (st->o.cpl_valid && in->cpl_ready)
		st->o.cpl_valid = 0;
	if (st->o.rdx_valid && in->rdx_ready)
		st->o.rdx_valid = 0;
	if (in->rd_valid && st->o.rd_ready)
		rd = in->rd_data;
	else if ((st->req_left || st->req_head != st->req_tail) && next_kind(st) == REQ_ZERO && st->e_state == 1 &&
		 st->acc_n + RNIC_BEAT <= TX_ACC)
		rd = zero_beat;
	if (in->db_valid && st->o.db_ready)
		doorbell(st, in);
	if (in->ack_valid && st->o.ack_ready) {
		st->ack_busy = 1;
		st->ack_qpn = in->ack_qpn % RNIC_MAX_QP;
		st->ack_psn = in->ack_psn;
		st->ack_syn = in->ack_syndrome;
		st->ack_rd = in->ack_rd;
	}
	if (in->rsp_valid && st->o.rsp_ready)
		take_response(st, &in->rsp);
	if (in->cfg_valid && rnic_tables_cfg(&st->t, in->cfg_addr, in->cfg_data, &idx) == RNIC_CFG_TBL_QPC)
		commit_qp(st, idx);
	if (in->cfg_valid && in->cfg_addr >> RNIC_CFG_TABLE_SHIFT == RNIC_CFG_TBL_FENCE) {
		st->fence_token = (uint8_t)in->cfg_data;
		st->fence_state = 1;
	}

	emit_beat(st);
	if (rd) {
		if (!st->req_left) {
			st->req_left = st->req_len[st->req_head % TX_REQ_FIFO];
			st->cur_kind = st->req_kind[st->req_head % TX_REQ_FIFO];
			st->req_head++;
		}
		if (st->cur_kind == REQ_WQE) {
			/* a WQE beat for the prefetch ring */
			tx_pf_t *f = &st->pf[st->pf_fill % TX_PF];

			for (i = 0; i < RNIC_BEAT; i++)
				f->wqe[st->pf_beats * RNIC_BEAT + i] = rd[i];
			if (++st->pf_beats == RNIC_WQE_BYTES / RNIC_BEAT) {
				f->ready = 1;
				st->pf_fill++;
				st->pf_beats = 0;
			}
			st->req_left = st->req_left > RNIC_BEAT ? st->req_left - RNIC_BEAT : 0;
			rd = 0;
		}
	}
	emit(st, rd);
	if (st->pf_head != st->pf_tail && st->pf[st->pf_head % TX_PF].ready && st->pf[st->pf_head % TX_PF].discard) {
		st->pf_head++; /* dropped: its QP fetches it again */
	} else if (!st->phase && st->pf_head != st->pf_tail && st->pf[st->pf_head % TX_PF].ready &&
		   !st->o.rdx_valid && !(st->iss_left && !st->iss_rsp)) {
		const tx_pf_t *f = &st->pf[st->pf_head % TX_PF];

		for (i = 0; i < RNIC_WQE_BYTES; i++)
			st->wqe[i] = f->wqe[i];
		st->qpn = f->qpn;
		st->wqe_index = f->index;
		st->qp[f->qpn].pf_n--;
		st->pf_head++;
		start_message(st);
	}
	build(st);
	schedule(st);
	if (st->ack_busy) {
		acknowledge(st);
		st->sched_hint = 1;
	} else {
		check_timer(st);
	}
	if (!st->o.cpl_valid && st->cpl_head != st->cpl_tail) {
		st->o.cpl = st->cpl[st->cpl_head++ % TX_CPL_FIFO];
		st->o.cpl_valid = 1;
	}
	fence(st);

	/* readies for the next clock: only what can surely be taken then */
	st->o.db_ready = 1;
	st->o.ack_ready = !st->ack_busy;
	st->o.rsp_ready = st->rsp_tail - st->rsp_head < TX_RSP_FIFO - 1;
	st->o.rd_ready = (st->req_left || st->req_head != st->req_tail) && next_kind(st) != REQ_ZERO &&
			 (next_kind(st) == REQ_WQE || (st->e_state == 1 && st->acc_n + RNIC_BEAT <= TX_ACC));
	*out = st->o;
}
