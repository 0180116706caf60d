/* RX kernel: RoCEv2 receive path and RC responder.
 *
 * Per clock (contract: docs/ARCHITECTURE.md): the reception side stores one Ethernet beat in the
 * frame store (16 KiB ring) and folds it into the frame's ICRC; nothing of a frame is acted on
 * before its last beat, so a frame with a bad ICRC never writes a byte. The processing side works
 * on the oldest complete frame, one output beat per clock: a DMA write beat of WRITE payload
 * (realigned behind the headers, split at 4 KiB pages), a beat of a frame for the firmware, an
 * ACK/NAK frame, or an ACK/NAK notice for the TX kernel. Reception never stalls (the MAC cannot
 * be stalled); when the store is full the incoming frame is dropped and counted.
 *
 * Responder rules: IBTA Vol. 1 9.7.5 (PSN checks, duplicates, NAKs), 9.7.4.1.3/9.5 (RETH, WRITE
 * length rules), 10.6.3 (rkey, PD, access, bounds); RoCEv2 annex A17.3.3 (ICRC).
 */
#include "rx.h"

#define FRAME_BEAT(st, f, i) ((st)->buf[((f)->start + (i)) % RX_BUF_BEATS])

static uint32_t keep_bytes(uint64_t keep)
{
	uint32_t n = 0;
	int i;

	for (i = 0; i < RNIC_BEAT; i++) {
#pragma HLS UNROLL
		if ((keep >> i) & 1)
			n = i + 1;
	}
	return n;
}

static uint64_t keep_mask(uint32_t n)
{
	return n >= 64 ? ~0ull : (1ull << n) - 1;
}

/* 64 bytes of frame f starting at byte off (a read of two adjacent beats of the store). */
static void frame_bytes(const rnic_rx_state_t *st, const rx_frame_t *f, uint32_t off, uint8_t *out)
{
	int i;

	for (i = 0; i < RNIC_BEAT; i++) {
#pragma HLS UNROLL
		uint32_t o = off + i;

		out[i] = FRAME_BEAT(st, f, o / RNIC_BEAT)[o % RNIC_BEAT];
	}
}

/* Reception: store the beat, keep the ICRC running one beat behind so that the ICRC bytes at the
 * end (which may straddle two beats) are excluded. */
static void receive(rnic_rx_state_t *st, const rnic_rx_in_t *in)
{
	uint32_t n = keep_bytes(in->eth_keep);
	uint32_t icrc = 0;
	int i;

	if (!st->in_frame) {
		st->in_frame = 1;
		st->cur_start = st->wr_beat;
		st->cur_beats = 0;
		st->cur_len = 0;
		st->cur_drop = 0;
		st->crc = 0xffffffffu;
	}
	if (!st->cur_drop) {
		if (st->wr_beat - st->rd_beat >= RX_BUF_BEATS) {
			st->cur_drop = 1;
		} else {
			for (i = 0; i < RNIC_BEAT; i++)
				st->buf[st->wr_beat % RX_BUF_BEATS][i] = in->eth_data[i];
			st->wr_beat++;
		}
	}
	if (!in->eth_last) {
		if (st->cur_beats)
			st->crc = rnic_icrc_beat(st->crc, st->held, st->cur_beats - 1, RNIC_BEAT);
		for (i = 0; i < RNIC_BEAT; i++)
			st->held[i] = in->eth_data[i];
	} else if (n >= RNIC_ICRC_LEN) {
		if (st->cur_beats)
			st->crc = rnic_icrc_beat(st->crc, st->held, st->cur_beats - 1, RNIC_BEAT);
		st->crc = rnic_icrc_beat(st->crc, in->eth_data, st->cur_beats, n - RNIC_ICRC_LEN);
		icrc = (uint32_t)rnic_rd_le(in->eth_data + n - RNIC_ICRC_LEN, 4);
	} else if (st->cur_beats) {
		uint8_t tail[RNIC_ICRC_LEN];
		uint32_t k = RNIC_ICRC_LEN - n;

		st->crc = rnic_icrc_beat(st->crc, st->held, st->cur_beats - 1, RNIC_BEAT - k);
		for (i = 0; i < RNIC_ICRC_LEN; i++)
			tail[i] = (uint32_t)i < k ? st->held[RNIC_BEAT - k + i] : in->eth_data[i - k];
		icrc = (uint32_t)rnic_rd_le(tail, 4);
	}
	st->cur_beats++;
	st->cur_len += n;
	st->o.stat_frames += in->eth_last;
	if (!in->eth_last)
		return;
	st->in_frame = 0;
	if (st->cur_drop || st->fr_tail - st->fr_head >= RX_MAX_FRAMES) {
		st->wr_beat = st->cur_start; /* give the beats back */
		st->o.stat_drop_overflow++;
		return;
	}
	st->frames[st->fr_tail % RX_MAX_FRAMES] = (rx_frame_t){
		.start = (uint16_t)(st->cur_start % RX_BUF_BEATS),
		.beats = (uint16_t)st->cur_beats,
		.len = (uint16_t)st->cur_len,
		.icrc_ok = st->cur_len > RNIC_XTH_OFF && ~st->crc == icrc,
	};
	st->fr_tail++;
}

/* ACK/NAK toward the requester of QP qpn (IBTA 9.7.5.2: BTH + AETH, PSN of the acknowledged or
 * expected request, MSN). */
static void build_ack(rnic_rx_state_t *st, uint32_t qpn, uint32_t psn, uint32_t syndrome)
{
	uint8_t *h = st->ack_frame;
	uint32_t crc, i;

	for (i = 0; i < RNIC_BEAT; i++)
		h[i] = 0;
	rnic_build_headers(&st->t, qpn, h, RNIC_BTH_OP_ACK, 0, 0, psn, RNIC_AETH_LEN + RNIC_ICRC_LEN);
	h[RNIC_XTH_OFF] = (uint8_t)syndrome;
	rnic_put_be24(h + RNIC_XTH_OFF + 1, st->qp[qpn].msn);
	crc = rnic_icrc_beat(0, h, 0, RNIC_XTH_OFF + RNIC_AETH_LEN);
	rnic_wr_le(h + RNIC_XTH_OFF + RNIC_AETH_LEN, 4, ~crc);
	st->ack_len = RNIC_XTH_OFF + RNIC_AETH_LEN + RNIC_ICRC_LEN;
	st->send_ack = 1;
}

static void finish_frame(rnic_rx_state_t *st)
{
	const rx_frame_t *f = &st->frames[st->fr_head % RX_MAX_FRAMES];

	st->rd_beat += f->beats;
	st->fr_head++;
	st->busy = st->send_ack ? 3 : 0;
}

static void start_segment(rnic_rx_state_t *st)
{
	rx_qp_t *q = &st->qp[st->qpn];
	uint32_t room = RNIC_PAGE_SIZE_BYTES - (uint32_t)(q->va & (RNIC_PAGE_SIZE_BYTES - 1));

	st->seg_len = st->pay_left < room ? st->pay_left : room;
	st->seg_left = st->seg_len;
	st->seg_addr = rnic_translate(&st->t, q->mpt, q->va);
	q->va += st->seg_len;
	st->pay_left -= st->seg_len;
}

static int is_write(uint32_t op)
{
	return op >= RNIC_BTH_OP_WRITE_FIRST && op <= RNIC_BTH_OP_WRITE_ONLY_IMM;
}

/* Responder checks of an RDMA WRITE packet of QP qpn; returns the AETH syndrome of a NAK, 0 to
 * execute, or 1 to drop silently. */
static uint32_t check_write(rnic_rx_state_t *st, uint32_t qpn, const uint8_t *h, uint32_t op, uint32_t plen)
{
	rx_qp_t *q = &st->qp[qpn];
	uint32_t mtu = rnic_mtu_bytes(QPC_F(&st->t, qpn, CTRL, PMTU));
	int first = op == RNIC_BTH_OP_WRITE_FIRST || op == RNIC_BTH_OP_WRITE_ONLY;
	int last = op == RNIC_BTH_OP_WRITE_LAST || op == RNIC_BTH_OP_WRITE_ONLY;

	/* WRITE with immediate consumes a receive WQE: not served yet */
	if (op == RNIC_BTH_OP_WRITE_LAST_IMM || op == RNIC_BTH_OP_WRITE_ONLY_IMM)
		return RNIC_AETH_NAK_INV_REQ;
	if (first == q->in_write)
		return RNIC_AETH_NAK_INV_REQ; /* opcode sequence error, 9.7.5.1.4 */
	if (first) {
		uint64_t va = rnic_be64(h + RNIC_XTH_OFF);
		uint32_t rkey = rnic_be32(h + RNIC_XTH_OFF + 8);
		uint32_t dlen = rnic_be32(h + RNIC_XTH_OFF + 12);

		if (!(QPC_W(&st->t, qpn, ACCESS) & RNIC_ACCESS_REMOTE_WRITE))
			return RNIC_AETH_NAK_REM_ACCESS;
		if (dlen && rnic_key_check(&st->t, rkey, QPC_W(&st->t, qpn, PDN), RNIC_ACCESS_REMOTE_WRITE,
					   va, dlen, &q->mpt))
			return RNIC_AETH_NAK_REM_ACCESS;
		if (last ? dlen != plen || plen > mtu : plen != mtu || dlen <= mtu)
			return RNIC_AETH_NAK_INV_REQ;
		q->va = va;
		q->remaining = dlen;
		return 0;
	}
	if (last ? plen != q->remaining || plen > mtu : plen != mtu || plen >= q->remaining)
		return RNIC_AETH_NAK_INV_REQ;
	return 0;
}

/* Decide what to do with the frame at the head of the queue. */
static void dispatch(rnic_rx_state_t *st, const rnic_rx_in_t *in)
{
	const rx_frame_t *f = &st->frames[st->fr_head % RX_MAX_FRAMES];
	uint8_t h[2 * RNIC_BEAT];
	uint8_t mac[6];
	uint32_t op, qpn, psn, pad, plen, xth, syn, ctrl, state;
	int bcast, ours, i;
	int32_t d;
	rx_qp_t *q;

	frame_bytes(st, f, 0, h);
	frame_bytes(st, f, RNIC_BEAT, h + RNIC_BEAT);
	rnic_port_mac(&st->t, mac);
	bcast = 1;
	ours = 1;
	for (i = 0; i < 6; i++) {
		bcast &= h[i] == 0xff;
		ours &= h[i] == mac[i];
	}
	if (!(f->len >= RNIC_XTH_OFF + RNIC_ICRC_LEN && ours && rnic_be16(h + 12) == RNIC_ETHERTYPE_IPV4 &&
	      h[23] == RNIC_IPPROTO_UDP && rnic_be16(h + 36) == RNIC_ROCE_UDP_PORT &&
	      rnic_be32(h + 30) == st->t.port[RNIC_PORTC_IPV4 / 4])) {
		if (ours || bcast) {
			if (in->fw_ready) {
				st->busy = 2;
				st->fw_beat = 0;
				st->o.stat_to_fw++;
			} else {
				st->o.stat_fw_drop++;
				finish_frame(st);
			}
		} else {
			st->o.stat_drop_malformed++;
			finish_frame(st);
		}
		return;
	}
	st->o.stat_roce++;
	if (!f->icrc_ok) {
		st->o.stat_drop_icrc++;
		finish_frame(st);
		return;
	}
	op = h[RNIC_BTH_OFF];
	pad = (h[RNIC_BTH_OFF + 1] >> RNIC_BTH_PAD_SHIFT) & 3;
	qpn = rnic_be24(h + RNIC_BTH_OFF + 5);
	psn = rnic_be24(h + RNIC_BTH_OFF + 9);
	xth = op == RNIC_BTH_OP_ACK ? RNIC_AETH_LEN :
	      op == RNIC_BTH_OP_WRITE_FIRST || op == RNIC_BTH_OP_WRITE_ONLY ? RNIC_RETH_LEN :
	      op == RNIC_BTH_OP_WRITE_ONLY_IMM ? RNIC_RETH_LEN + RNIC_IMM_LEN :
	      op == RNIC_BTH_OP_WRITE_LAST_IMM ? RNIC_IMM_LEN : 0;
	if (h[14] != 0x45 || rnic_ipv4_csum(h + RNIC_IP_OFF) != rnic_be16(h + 24) ||
	    rnic_be16(h + 16) != f->len - RNIC_ETH_HLEN + 0u || rnic_be16(h + 38) != f->len - RNIC_UDP_OFF + 0u ||
	    (h[RNIC_BTH_OFF + 1] & 0xf) != 0 || rnic_be16(h + RNIC_BTH_OFF + 2) != 0xffff ||
	    f->len < RNIC_XTH_OFF + xth + pad + RNIC_ICRC_LEN) {
		st->o.stat_drop_malformed++;
		finish_frame(st);
		return;
	}
	plen = f->len - RNIC_XTH_OFF - xth - pad - RNIC_ICRC_LEN;
	ctrl = qpn < RNIC_MAX_QP ? QPC_W(&st->t, qpn, CTRL) : 0;
	state = RNIC_GET(RNIC_QPC_CTRL_STATE, ctrl);
	if (!RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl) || RNIC_GET(RNIC_QPC_CTRL_TYPE, ctrl) != RNIC_QPT_RC ||
	    state < RNIC_QPS_RTR || state > RNIC_QPS_SQE) {
		st->o.stat_drop_qpn++; /* 9.6.1.2: invalid destination QP: silently dropped */
		finish_frame(st);
		return;
	}
	q = &st->qp[qpn];
	st->qpn = qpn;
	if (op == RNIC_BTH_OP_ACK) {
		/* for the requester: the TX kernel judges PSN and syndrome */
		st->o.ack_valid = 1;
		st->o.ack_qpn = qpn;
		st->o.ack_psn = psn;
		st->o.ack_syndrome = h[RNIC_XTH_OFF];
		st->o.ack_msn = rnic_be24(h + RNIC_XTH_OFF + 1);
		finish_frame(st);
		return;
	}
	if (!is_write(op)) {
		st->o.stat_nak_inv++; /* other RC requests are not served yet */
		build_ack(st, qpn, q->epsn, RNIC_AETH_NAK_INV_REQ);
		finish_frame(st);
		return;
	}
	d = rnic_psn_diff(psn, q->epsn);
	if (d < 0) {
		/* duplicate (9.7.5.1.2): no second write; a duplicate asking for an ACK gets one
		 * for what has been done */
		st->o.stat_dup++;
		if (h[RNIC_BTH_OFF + 8] & RNIC_BTH_ACKREQ)
			build_ack(st, qpn, (q->epsn - 1) & RNIC_PSN_MASK, RNIC_AETH_ACK_NO_CREDIT);
		finish_frame(st);
		return;
	}
	if (d > 0) {
		/* sequence error (9.7.5.1.3): one NAK, later out-of-order packets dropped */
		if (!q->nak_sent) {
			q->nak_sent = 1;
			st->o.stat_nak_psn++;
			build_ack(st, qpn, q->epsn, RNIC_AETH_NAK_PSN_SEQ);
		}
		finish_frame(st);
		return;
	}
	q->nak_sent = 0;
	syn = check_write(st, qpn, h, op, plen);
	if (syn) {
		if (syn == RNIC_AETH_NAK_REM_ACCESS)
			st->o.stat_nak_access++;
		else
			st->o.stat_nak_inv++;
		q->in_write = 0;
		build_ack(st, qpn, psn, syn);
		finish_frame(st);
		return;
	}
	q->epsn = (q->epsn + 1) & RNIC_PSN_MASK;
	q->in_write = op == RNIC_BTH_OP_WRITE_FIRST || op == RNIC_BTH_OP_WRITE_MIDDLE;
	q->remaining -= plen;
	if (!q->in_write)
		q->msn = (q->msn + 1) & RNIC_PSN_MASK;
	if (h[RNIC_BTH_OFF + 8] & RNIC_BTH_ACKREQ)
		build_ack(st, qpn, psn, RNIC_AETH_ACK_NO_CREDIT);
	st->o.stat_write_bytes += plen;
	st->pay_left = plen;
	st->src = RNIC_XTH_OFF + xth;
	if (!plen) {
		finish_frame(st);
		return;
	}
	start_segment(st);
	st->busy = 1;
}

static void process(rnic_rx_state_t *st, const rnic_rx_in_t *in)
{
	const rx_frame_t *f = &st->frames[st->fr_head % RX_MAX_FRAMES];
	uint32_t n, i;

	switch (st->busy) {
	case 0:
		if (st->fr_head != st->fr_tail && !st->o.ack_valid)
			dispatch(st, in);
		break;
	case 1: /* payload -> DMA write beats */
		if (st->o.wr_valid)
			break;
		n = st->seg_left < RNIC_BEAT ? st->seg_left : RNIC_BEAT;
		frame_bytes(st, f, st->src, st->o.wr_data);
		st->o.wr_valid = 1;
		st->o.wr_addr = st->seg_addr;
		st->o.wr_len = (uint16_t)st->seg_len;
		st->o.wr_last = st->seg_left <= RNIC_BEAT;
		st->src += n;
		st->seg_left -= n;
		if (!st->seg_left) {
			if (st->pay_left)
				start_segment(st);
			else
				finish_frame(st);
		}
		break;
	case 2: /* whole frame -> firmware */
		if (st->o.fw_valid)
			break;
		for (i = 0; i < RNIC_BEAT; i++)
			st->o.fw_data[i] = FRAME_BEAT(st, f, st->fw_beat)[i];
		st->fw_beat++;
		st->o.fw_valid = 1;
		st->o.fw_last = st->fw_beat == f->beats;
		st->o.fw_keep = st->o.fw_last ? keep_mask(f->len - (f->beats - 1) * RNIC_BEAT) : ~0ull;
		if (st->o.fw_last)
			finish_frame(st);
		break;
	case 3: /* ACK/NAK frame */
		if (st->o.eth_valid)
			break;
		for (i = 0; i < RNIC_BEAT; i++)
			st->o.eth_data[i] = st->ack_frame[i];
		st->o.eth_valid = 1;
		st->o.eth_keep = keep_mask(st->ack_len);
		st->o.eth_last = 1;
		st->o.stat_acks++;
		st->send_ack = 0;
		st->busy = 0;
		break;
	}
}

void rnic_rx_step(rnic_rx_state_t *st, const rnic_rx_in_t *in, rnic_rx_out_t *out)
{
#pragma HLS PIPELINE II = 1
	uint32_t idx;

	if (in->rst) {
		uint32_t q;

		for (q = 0; q < RNIC_MAX_QP; q++)
			st->qp[q] = (rx_qp_t){0};
		st->fr_head = st->fr_tail = st->wr_beat = st->rd_beat = 0;
		st->in_frame = 0;
		st->busy = 0;
		st->send_ack = 0;
		st->o = (rnic_rx_out_t){0};
		*out = st->o;
		return;
	}
	/* handshakes of the outputs presented during this cycle */
	if (st->o.wr_valid && in->wr_ready)
		st->o.wr_valid = 0;
	if (st->o.ack_valid && in->ack_ready)
		st->o.ack_valid = 0;
	if (st->o.eth_valid && in->eth_ready)
		st->o.eth_valid = 0;
	if (st->o.fw_valid && in->fw_ready)
		st->o.fw_valid = 0;

	if (in->cfg_valid && rnic_tables_cfg(&st->t, in->cfg_addr, in->cfg_data, &idx) == RNIC_CFG_TBL_QPC)
		st->qp[idx] = (rx_qp_t){ .epsn = QPC_F(&st->t, idx, RQ_PSN, PSN) };

	if (st->busy || st->fr_head != st->fr_tail)
		process(st, in);
	if (in->eth_valid)
		receive(st, in);
	*out = st->o;
}
