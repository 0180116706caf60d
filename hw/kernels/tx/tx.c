/* TX kernel: RC requester.
 *
 * Per clock (contract: docs/ARCHITECTURE.md) the kernel can take one doorbell, one DMA read
 * beat, one ACK notice, issue one DMA read request and emit one Ethernet beat and one
 * completion. A message flows through three decoupled stages:
 *   - WQE fetch and checks: the scheduler picks a QP with posted WQEs (round-robin), reads the
 *     128-byte WQE, checks each SGE's lkey, PD and bounds (IBTA 10.6.3.1) and reserves an
 *     outstanding-WQE slot;
 *   - the read issuer walks the message over its SGEs and issues DMA reads cut at packet, page
 *     and SGE boundaries, up to TX_CREDIT bytes ahead of the emitter, so the PCIe read latency
 *     is covered at line rate;
 *   - the emitter builds one RoCEv2 packet per path MTU (IBTA 9.2-9.3: WRITE FIRST/MIDDLE/LAST/
 *     ONLY, RETH on FIRST/ONLY, AckReq on the last packet, as rxe does), realigns the payload
 *     behind the header in a three-beat byte packer and appends the ICRC (RoCEv2 A17.3.3).
 * ACK notices from the RX kernel retire outstanding WQEs whose last PSN they cover (coalesced
 * ACKs, IBTA 9.7.5.1); NAKs complete the WQE in error and flush the QP (IBTA 9.7.5.2, 10.8).
 * A PSN-sequence NAK or an expired ACK timer (4.096 us * 2^timeout, IBTA 9.7.6.1.3) sends the
 * QP's unacknowledged WQEs again from the oldest (go-back-N); the responder acknowledges the
 * packets it already has without writing them twice. retry_cnt rounds without progress complete
 * the oldest WQE with RETRY_EXC_ERR and flush the QP.
 */
#include "tx.h"

static uint64_t keep_mask(uint32_t n)
{
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

static int cpl_full(const rnic_tx_state_t *st)
{
	return st->cpl_tail - st->cpl_head >= TX_CPL_FIFO;
}

static void cpl_push(rnic_tx_state_t *st, uint32_t qpn, uint64_t wr_id, uint32_t len, uint32_t status,
		     uint64_t ts, uint32_t index)
{
	rnic_cpl_t *c = &st->cpl[st->cpl_tail % TX_CPL_FIFO];

	*c = (rnic_cpl_t){0};
	c->cqn = (uint16_t)QPC_F(&st->t, qpn, CQN, SEND);
	c->qpn = qpn;
	c->wr_id = wr_id;
	c->byte_len = len;
	c->opcode = RNIC_WC_OP_RDMA_WRITE;
	c->status = (uint8_t)status;
	c->ts_start = ts;
	c->wqe_index = (uint16_t)index;
	st->cpl_tail++;
}

static void push(rnic_tx_state_t *st, const uint8_t *p, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		st->acc[st->acc_n + i] = p[i];
	st->acc_n += n;
}

/* One Ethernet beat out of the packer when a full beat, or the end of the frame, is there. */
static void emit_beat(rnic_tx_state_t *st)
{
	uint32_t n, i;

	if (st->o.eth_valid || !(st->acc_n >= RNIC_BEAT || (st->frame_end && st->acc_n)))
		return;
	n = st->acc_n < RNIC_BEAT ? st->acc_n : RNIC_BEAT;
	for (i = 0; i < RNIC_BEAT; i++)
		st->o.eth_data[i] = i < n ? st->acc[i] : 0;
	st->o.eth_valid = 1;
	st->o.eth_keep = keep_mask(n);
	st->o.eth_last = st->frame_end && st->acc_n <= RNIC_BEAT;
	for (i = 0; i + n < TX_ACC; i++)
		st->acc[i] = st->acc[i + n];
	st->acc_n -= n;
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
	return p->err || (p->state == RNIC_QPS_RTS && (uint16_t)(p->ob_tail - p->ob_head) < TX_OB);
}

/* All DMA reads of the current message are issued: the next WQE may be fetched behind them. */
static int reads_issued(const rnic_tx_state_t *st)
{
	return st->phase == 1 && (st->inline_data || st->iss_off >= st->msg_len);
}

/* Payload beats requested and not yet taken: a read beat is payload while there are any (the DMA
 * returns data in request order and WQEs are fetched after their predecessor's payload). */
static int payload_pending(const rnic_tx_state_t *st)
{
	return st->req_head != st->req_tail || st->req_left;
}

/* Scheduler: fetch the next WQE of the next ready QP (round-robin) into the prefetch buffer,
 * while idle or as soon as the message being sent has issued all its reads, so that the WQE
 * fetch overlaps the end of the previous message. */
static void schedule(rnic_tx_state_t *st)
{
	uint32_t i, q, mask;
	uint64_t base;

	if (st->pf_state || st->o.rdreq_valid || cpl_full(st) || !st->sched_hint ||
	    !(st->phase == 0 || reads_issued(st)))
		return;
	for (i = 1; i <= RNIC_MAX_QP; i++) {
		q = (st->rr + i) % RNIC_MAX_QP;
		if (!qp_ready(st, q))
			continue;
		st->rr = q;
		st->pf_qpn = q;
		mask = (1u << QPC_F(&st->t, q, RING_LOG, SQ)) - 1;
		base = ((uint64_t)QPC_W(&st->t, q, SQ_BASE_HI) << 32) | QPC_W(&st->t, q, SQ_BASE_LO);
		st->o.rdreq_valid = 1;
		st->o.rdreq_addr = base + (uint64_t)(st->qp[q].ci & mask) * RNIC_WQE_BYTES;
		st->o.rdreq_len = RNIC_WQE_BYTES;
		st->pf_beats = 0;
		st->pf_state = 1;
		st->qp[q].ci++;
		return;
	}
	st->sched_hint = 0; /* nothing ready: rescan after the next event */
}

/* WQE arrived: check it and set the message up (or complete it in error). */
static void start_message(rnic_tx_state_t *st)
{
	tx_qp_t *p = &st->qp[st->qpn];
	const uint8_t *w = st->wqe;
	uint32_t op = RNIC_WQE_OPCODE_GET(w), flags = RNIC_WQE_FLAGS_GET(w);
	uint32_t pdn = QPC_W(&st->t, st->qpn, PDN);
	uint32_t status = RNIC_WC_STATUS_SUCCESS, k;
	tx_ob_t *ob;

	st->sched_hint = 1;
	if (p->err) {
		cpl_push(st, st->qpn, RNIC_WQE_WR_ID_GET(w), 0, RNIC_WC_STATUS_WR_FLUSH_ERR, p->ts_db,
			 (uint16_t)(p->ci - 1));
		st->phase = 0;
		return;
	}
	st->o.stat_wqes++;
	st->inline_data = (flags & RNIC_WQE_FLAG_INLINE) != 0;
	st->msg_len = 0;
	st->nsge = 0;
	if (op != RNIC_WQE_OP_RDMA_WRITE) {
		status = RNIC_WC_STATUS_LOC_QP_OP_ERR; /* other opcodes: not served yet */
	} else if (st->inline_data) {
		st->msg_len = RNIC_WQE_TOTAL_LEN_GET(w);
		if (st->msg_len > RNIC_MAX_INLINE)
			status = RNIC_WC_STATUS_LOC_LEN_ERR;
	} else if (RNIC_WQE_NUM_SGE_GET(w) > RNIC_MAX_SGE) {
		status = RNIC_WC_STATUS_LOC_LEN_ERR;
	} else {
		for (k = 0; k < RNIC_MAX_SGE; k++) {
			const uint8_t *s = w + RNIC_WQE_SGE_OFF + k * RNIC_SGE_SIZE;
			tx_sge_t *g = &st->sge[st->nsge];

			if (k >= RNIC_WQE_NUM_SGE_GET(w))
				break;
			g->addr = RNIC_SGE_ADDR_GET(s);
			g->len = RNIC_SGE_LEN_GET(s);
			if (!g->len)
				continue;
			if (rnic_key_check(&st->t, RNIC_SGE_LKEY_GET(s), pdn, 0, g->addr, g->len, &g->mpt))
				status = RNIC_WC_STATUS_LOC_PROT_ERR;
			st->msg_len += g->len;
			st->nsge++;
		}
	}
	if (status != RNIC_WC_STATUS_SUCCESS) {
		/* a local error completes the WQE (signaled or not) and moves the QP to error */
		cpl_push(st, st->qpn, RNIC_WQE_WR_ID_GET(w), 0, status, p->ts_db, (uint16_t)(p->ci - 1));
		p->err = 1;
		st->phase = 0;
		return;
	}
	st->mtu = rnic_mtu_bytes(QPC_F(&st->t, st->qpn, CTRL, PMTU));
	st->npkts = st->msg_len ? (st->msg_len + st->mtu - 1) / st->mtu : 1;
	ob = &st->ob[st->qpn][p->ob_tail % TX_OB];
	ob->wr_id = RNIC_WQE_WR_ID_GET(w);
	ob->ts = p->ts_db;
	ob->len = st->msg_len;
	ob->first_psn = p->psn;
	ob->last_psn = (p->psn + st->npkts - 1) & RNIC_PSN_MASK;
	if (p->ob_head == p->ob_tail)
		p->t_sent = st->now;
	ob->signaled = (flags & RNIC_WQE_FLAG_SIGNALED) != 0;
	ob->index = (uint16_t)(p->ci - 1);
	p->ob_tail++;
	st->iss_off = st->iss_sge = st->iss_sge_off = 0;
	st->pkt = 0;
	st->e_state = 0;
	if (p->restart && ob->index == p->restart_index) {
		/* go-back-N into the middle of a message: skip the packets before the PSN (a WRITE
		 * MIDDLE/LAST continues the responder's context, IBTA 9.7.5.1.3) */
		int32_t k = rnic_psn_diff(p->restart_psn, p->psn);

		p->restart = 0;
		if (k > 0 && (uint32_t)k < st->npkts && !st->inline_data) {
			uint32_t skip = (uint32_t)k * st->mtu, g;

			st->pkt = (uint32_t)k;
			st->iss_off = skip;
			for (g = 0; g < RNIC_MAX_SGE; g++) {
				if (st->iss_sge >= st->nsge || skip < st->sge[st->iss_sge].len)
					break;
				skip -= st->sge[st->iss_sge].len;
				st->iss_sge++;
			}
			st->iss_sge_off = skip;
		}
	}
	st->phase = 1;
}

/* Read issuer: one DMA read request per clock while credit lasts. */
static void issue(rnic_tx_state_t *st)
{
	const tx_sge_t *g;
	uint64_t addr;
	uint32_t n, room;

	if (st->phase != 1 || st->cancel || st->inline_data || st->o.rdreq_valid || st->iss_off >= st->msg_len ||
	    st->req_tail - st->req_head >= TX_REQ_FIFO || st->credit + RNIC_DMA_MAX_LEN > TX_CREDIT)
		return;
	g = &st->sge[st->iss_sge];
	addr = g->addr + st->iss_sge_off;
	n = g->len - st->iss_sge_off;
	room = RNIC_PAGE_SIZE_BYTES - (uint32_t)(addr & (RNIC_PAGE_SIZE_BYTES - 1));
	if (n > room)
		n = room;
	room = st->mtu - st->iss_off % st->mtu;
	if (n > room)
		n = room;
	st->o.rdreq_valid = 1;
	st->o.rdreq_addr = rnic_translate(&st->t, g->mpt, addr);
	st->o.rdreq_len = (uint16_t)n;
	st->req_len[st->req_tail % TX_REQ_FIFO] = (uint16_t)n;
	st->req_tail++;
	st->credit += n;
	st->iss_off += n;
	st->iss_sge_off += n;
	if (st->iss_sge_off == g->len) {
		st->iss_sge++;
		st->iss_sge_off = 0;
	}
}

/* Stop the cancelled message between packets; its reads still in flight are drained. */
static void abort_message(rnic_tx_state_t *st)
{
	st->cancel = 0;
	st->phase = 0;
	st->e_state = 0;
	st->drain = payload_pending(st);
	st->sched_hint = 1;
}

/* Go back N on QP q: its unacknowledged WQEs are fetched and sent again from the oldest, with
 * their original PSNs (IBTA 9.7.5.1.3, 9.7.6.1.3). */
static void rewind_qp(rnic_tx_state_t *st, uint32_t q, uint32_t psn)
{
	tx_qp_t *p = &st->qp[q];
	tx_ob_t *ob = &st->ob[q][p->ob_head % TX_OB];

	if (p->ob_head == p->ob_tail)
		return;
	/* a go-back point later than the previous one is progress too */
	if (p->retries && rnic_psn_diff(psn, p->restart_psn) > 0)
		p->retries = 0;
	if (p->retries >= QPC_F(&st->t, q, RETRY, RETRY_CNT)) {
		/* retries exhausted: the oldest WQE fails, the QP goes to error, the rest is flushed */
		cpl_push(st, q, ob->wr_id, 0, RNIC_WC_STATUS_RETRY_EXC_ERR, ob->ts, ob->index);
		p->ob_head++;
		p->err = 1;
		st->ack_busy = 1;
		st->ack_qpn = q;
		return;
	}
	p->retries++;
	p->ci = ob->index;
	p->psn = ob->first_psn;
	/* resume inside the oldest WQE at the PSN the responder expects */
	p->restart = 1;
	p->restart_index = ob->index;
	p->restart_psn = psn;
	p->ob_tail = p->ob_head;
	p->t_sent = st->now;
	st->o.stat_retransmits++;
	if (st->phase && st->qpn == q)
		st->cancel = 1;
	if (st->pf_state == 2 && st->pf_qpn == q)
		st->pf_state = 0;
	else if (st->pf_state == 1 && st->pf_qpn == q)
		st->pf_discard = 1;
	st->sched_hint = 1;
}

/* ACK timers, one QP per clock: 4.096 us * 2^timeout without progress (0: no timer). */
static void check_timer(rnic_tx_state_t *st)
{
	uint32_t q = st->timer_q++ % RNIC_MAX_QP;
	tx_qp_t *p = &st->qp[q];
	uint32_t t = QPC_F(&st->t, q, RETRY, TIMEOUT);

	if (p->ob_head == p->ob_tail || p->err || !t || st->ack_busy || cpl_full(st))
		return;
	if (st->now - p->t_sent > (1024ull << t))
		rewind_qp(st, q, st->ob[q][p->ob_head % TX_OB].first_psn);
}

static void build_header(rnic_tx_state_t *st)
{
	const uint8_t *w = st->wqe;
	uint32_t first = st->pkt == 0, last = st->pkt == st->npkts - 1;
	uint32_t pay = last ? st->msg_len - st->pkt * st->mtu : st->mtu;
	uint32_t pad = (4 - (pay & 3)) & 3;
	uint32_t xth = first ? RNIC_RETH_LEN : 0;
	uint32_t op = st->npkts == 1 ? RNIC_BTH_OP_WRITE_ONLY :
		      first ? RNIC_BTH_OP_WRITE_FIRST :
		      last ? RNIC_BTH_OP_WRITE_LAST : RNIC_BTH_OP_WRITE_MIDDLE;

	rnic_build_headers(&st->t, st->qpn, st->hdr, op, pad, last, st->qp[st->qpn].psn + st->pkt,
			   xth + pay + pad + RNIC_ICRC_LEN);
	if (first) {
		rnic_put_be64(st->hdr + RNIC_XTH_OFF, RNIC_WQE_REMOTE_ADDR_GET(w));
		rnic_put_be32(st->hdr + RNIC_XTH_OFF + 8, RNIC_WQE_RKEY_GET(w));
		rnic_put_be32(st->hdr + RNIC_XTH_OFF + 12, st->msg_len);
	}
	st->hdr_len = RNIC_XTH_OFF + xth;
	st->crc = rnic_icrc_beat(0, st->hdr, 0, st->hdr_len < RNIC_BEAT ? st->hdr_len : RNIC_BEAT);
	if (st->hdr_len > RNIC_BEAT)
		st->crc = rnic_crc32(st->crc, st->hdr + RNIC_BEAT, st->hdr_len - RNIC_BEAT);
	st->hdr_pos = 0;
	st->pkt_pay_left = pay;
}

/* Emitter: header, payload, pad + ICRC of the current packet into the packer. `rd` is the DMA
 * read beat taken this clock, or NULL. */
static void emit(rnic_tx_state_t *st, const uint8_t *rd)
{
	static const uint8_t zero[4];
	uint8_t icrc[4];
	uint32_t n, pad;

	switch (st->e_state) {
	case 0: /* header: one frame in the packer at a time */
		if (st->acc_n || st->frame_end)
			return;
		if (st->cancel) {
			abort_message(st);
			return;
		}
		build_header(st);
		st->e_state = 4;
		/* fall through */
	case 4:
		if (st->acc_n + RNIC_BEAT > TX_ACC)
			return;
		n = st->hdr_len - st->hdr_pos < RNIC_BEAT ? st->hdr_len - st->hdr_pos : RNIC_BEAT;
		push(st, st->hdr + st->hdr_pos, n);
		st->hdr_pos += n;
		if (st->hdr_pos < st->hdr_len)
			return;
		st->e_state = 1;
		if (st->inline_data && st->pkt_pay_left) {
			st->crc = rnic_crc32(st->crc, st->wqe + RNIC_WQE_SGE_OFF, st->pkt_pay_left);
			push(st, st->wqe + RNIC_WQE_SGE_OFF, st->pkt_pay_left);
			st->pkt_pay_left = 0;
		}
		if (st->pkt_pay_left)
			return;
		st->e_state = 2;
		return;
	case 1: /* payload beats from the DMA reads */
		if (!rd)
			return;
		if (!st->req_left)
			st->req_left = st->req_len[st->req_head++ % TX_REQ_FIFO];
		n = st->req_left < RNIC_BEAT ? st->req_left : RNIC_BEAT;
		st->crc = rnic_crc32(st->crc, rd, n);
		push(st, rd, n);
		st->req_left -= n;
		st->credit -= n;
		st->pkt_pay_left -= n;
		st->o.stat_bytes += n;
		if (!st->pkt_pay_left)
			st->e_state = 2;
		return;
	case 2: /* pad and ICRC */
		if (st->acc_n + 8 > TX_ACC)
			return;
		pad = (st->hdr[RNIC_BTH_OFF + 1] >> RNIC_BTH_PAD_SHIFT) & 3;
		st->crc = rnic_crc32(st->crc, zero, pad);
		push(st, zero, pad);
		rnic_wr_le(icrc, 4, ~st->crc);
		push(st, icrc, 4);
		st->frame_end = 1;
		st->e_state = 3;
		return;
	case 3: /* frame drained: next packet or done */
		if (st->acc_n || st->frame_end)
			return;
		if (st->cancel) {
			abort_message(st);
			return;
		}
		if (++st->pkt < st->npkts) {
			st->e_state = 0;
			return;
		}
		st->qp[st->qpn].psn = (st->qp[st->qpn].psn + st->npkts) & RNIC_PSN_MASK;
		st->phase = 0;
		st->sched_hint = 1;
		return;
	}
}

/* ACK/NAK notices: retire (one WQE per clock), or complete in error and flush. */
static void acknowledge(rnic_tx_state_t *st)
{
	tx_qp_t *p = &st->qp[st->ack_qpn];
	tx_ob_t *ob = &st->ob[st->ack_qpn][p->ob_head % TX_OB];
	uint32_t type = st->ack_syn & RNIC_AETH_TYPE_MASK;
	uint32_t status;

	if (cpl_full(st))
		return;
	if (p->ob_head == p->ob_tail) {
		st->ack_busy = 0;
		return;
	}
	if (p->err) {
		cpl_push(st, st->ack_qpn, ob->wr_id, 0, RNIC_WC_STATUS_WR_FLUSH_ERR, ob->ts, ob->index);
		p->ob_head++;
		return;
	}
	if ((type == RNIC_AETH_TYPE_ACK && rnic_psn_diff(st->ack_psn, ob->last_psn) >= 0) ||
	    (st->ack_syn == RNIC_AETH_NAK_PSN_SEQ && rnic_psn_diff(st->ack_psn, ob->last_psn) > 0)) {
		/* acknowledged; a sequence NAK acknowledges what comes before its PSN (9.7.5.1.3) */
		if (ob->signaled)
			cpl_push(st, st->ack_qpn, ob->wr_id, ob->len, RNIC_WC_STATUS_SUCCESS, ob->ts, ob->index);
		p->ob_head++;
		p->t_sent = st->now;
		p->retries = 0;
		return;
	}
	if (st->ack_syn == RNIC_AETH_NAK_PSN_SEQ) {
		st->o.stat_naks++;
		st->ack_busy = 0;
		rewind_qp(st, st->ack_qpn, st->ack_psn);
		return;
	}
	if (type == RNIC_AETH_TYPE_NAK && st->ack_syn != RNIC_AETH_NAK_PSN_SEQ) {
		/* a NAK implicitly acknowledges the WQEs before the one it names (9.7.5.1.5) */
		if (rnic_psn_diff(st->ack_psn, ob->last_psn) > 0) {
			if (ob->signaled)
				cpl_push(st, st->ack_qpn, ob->wr_id, ob->len, RNIC_WC_STATUS_SUCCESS, ob->ts, ob->index);
			p->ob_head++;
			return;
		}
		status = st->ack_syn == RNIC_AETH_NAK_REM_ACCESS ? RNIC_WC_STATUS_REM_ACCESS_ERR :
			 st->ack_syn == RNIC_AETH_NAK_REM_OP ? RNIC_WC_STATUS_REM_OP_ERR :
			 RNIC_WC_STATUS_REM_INV_REQ_ERR;
		cpl_push(st, st->ack_qpn, ob->wr_id, 0, status, ob->ts, ob->index);
		st->o.stat_naks++;
		p->ob_head++;
		p->err = 1;
		return;
	}
	st->ack_busy = 0;
}

static void commit_qp(rnic_tx_state_t *st, uint32_t q)
{
	tx_qp_t *p = &st->qp[q];
	uint32_t ctrl = QPC_W(&st->t, q, CTRL);
	uint32_t state = RNIC_GET(RNIC_QPC_CTRL_STATE, ctrl);

	if (!RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl) || state <= RNIC_QPS_RTR) {
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

void rnic_tx_step(rnic_tx_state_t *st, const rnic_tx_in_t *in, rnic_tx_out_t *out)
{
#pragma HLS PIPELINE II = 1
	const uint8_t *rd = 0;
	uint32_t idx, i;

	if (in->rst) {
		for (i = 0; i < RNIC_MAX_QP; i++)
			st->qp[i] = (tx_qp_t){0};
		st->phase = 0;
		st->acc_n = 0;
		st->frame_end = 0;
		st->req_head = st->req_tail = st->req_left = st->credit = 0;
		st->cpl_head = st->cpl_tail = 0;
		st->ack_busy = 0;
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
	if (in->rd_valid && st->o.rd_ready)
		rd = in->rd_data;
	if (in->db_valid && st->o.db_ready)
		doorbell(st, in);
	if (in->ack_valid && st->o.ack_ready) {
		st->ack_busy = 1;
		st->ack_qpn = in->ack_qpn % RNIC_MAX_QP;
		st->ack_psn = in->ack_psn;
		st->ack_syn = in->ack_syndrome;
	}
	if (in->cfg_valid && rnic_tables_cfg(&st->t, in->cfg_addr, in->cfg_data, &idx) == RNIC_CFG_TBL_QPC)
		commit_qp(st, idx);

	emit_beat(st);
	if (rd && st->drain) {
		/* payload of a cancelled message */
		if (!st->req_left)
			st->req_left = st->req_len[st->req_head++ % TX_REQ_FIFO];
		i = st->req_left < RNIC_BEAT ? st->req_left : RNIC_BEAT;
		st->req_left -= i;
		st->credit -= i;
		rd = 0;
	}
	if (st->drain && !payload_pending(st))
		st->drain = 0;
	if (rd && !payload_pending(st) && st->pf_state == 1) {
		for (i = 0; i < RNIC_BEAT; i++)
			st->pf_wqe[st->pf_beats * RNIC_BEAT + i] = rd[i];
		if (++st->pf_beats == RNIC_WQE_BYTES / RNIC_BEAT)
			st->pf_state = st->pf_discard ? 0 : 2;
		if (!st->pf_state)
			st->pf_discard = 0;
		rd = 0;
	}
	if (st->phase == 1)
		emit(st, rd);
	if (st->phase == 0 && st->pf_state == 2 && !st->drain) {
		for (i = 0; i < RNIC_WQE_BYTES; i++)
			st->wqe[i] = st->pf_wqe[i];
		st->qpn = st->pf_qpn;
		st->pf_state = 0;
		start_message(st);
	}
	issue(st);
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

	/* readies for the next clock: only what can surely be taken then */
	st->o.db_ready = 1;
	st->o.ack_ready = !st->ack_busy;
	st->o.rd_ready = (st->pf_state == 1 && !payload_pending(st)) || (st->drain && payload_pending(st)) ||
			 (st->phase == 1 && st->e_state == 1 && !st->inline_data && st->pkt_pay_left &&
			  st->acc_n + RNIC_BEAT <= TX_ACC);
	*out = st->o;
}
