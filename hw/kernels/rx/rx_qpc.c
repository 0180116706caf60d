/* RX kernel: the QPC cache in front of context memory (docs/ARCHITECTURE.md "Context memory").
 *
 * 4,096 lines of one QP context each (92 bytes), direct-mapped: the line of QPN q is q mod 4,096,
 * its tag q and a valid bit. The frame at the head of the queue reads its QP's context when it is
 * dispatched (a tag and a line). A frame's QP is looked up as soon as the frame is in whole with
 * a good ICRC: a miss then joins a queue and is read from ICM while the frames before it are
 * processed, so that by the time it reaches the head its context is there; one that still misses
 * waits at the head for its read (B_QPC). A QP whose read is on its way or queued is not read
 * again. Lines are never written by the datapath (the per-packet responder state is in qp[]): a
 * line taken by another QP is simply overwritten, and the firmware's commits write theirs whole.
 *
 * Memories: qc_line (4,096 x 736 bits, URAM: a dispatch's read, a fill's and a commit's write);
 * the tag in two copies, a reader each: qc_tag (the dispatch's read; a fill's and a commit's
 * write, in clocks with no dispatch but a commit's), qc_tagp (the arrival's look-up, at the start
 * of a clock; a commit's write, else a fill's: a fill in a commit's clock leaves it old, which
 * costs at most a needless read). The queue of misses (64 QPNs), the reads on their way (the RX
 * kernel's read FIFO, 64 entries), the stage and a fill's first beat are registers. II 1. */
#include "rx_int.h"

_Static_assert(RNIC_MAX_QP <= 0x8000, "a tag holds the QPN in 15 bits");

/* A beat of a frame being received: its QP, if the frame looks like RoCEv2 for us (IPv4: all in
 * the first beat; IPv6: the BTH's QPN in the second) */
void rx_qc_note(rnic_rx_state_t *st, const uint8_t *d)
{
	uint32_t i, me6 = 1;

	if (st->cur_beats == 0) {
		for (i = 0; i < 4; i++)
			me6 &= rnic_be32(d + 38 + 4 * i) == st->t.port[RNIC_PORTC_IPV6_0 / 4 + i];
		st->qc_pf = st->cur_v6 ? d[20] == RNIC_IPPROTO_UDP && rnic_be16(d + 56) == RNIC_ROCE_UDP_PORT && me6 :
			    rnic_be16(d + 12) == RNIC_ETHERTYPE_IPV4 && d[14] == 0x45 && d[23] == RNIC_IPPROTO_UDP &&
			    rnic_be16(d + 36) == RNIC_ROCE_UDP_PORT && rnic_be32(d + 30) == st->t.port[RNIC_PORTC_IPV4 / 4];
		st->qc_pf_qpn = rnic_be24(d + RNIC_BTH_OFF + 5);
	} else if (st->cur_beats == 1 && st->cur_v6) {
		st->qc_pf_qpn = rnic_be24(d + RNIC_BTH_OFF + RNIC_IP6_EXTRA + 5 - RNIC_BEAT);
	}
	st->qc_pf &= st->qc_pf_qpn < RNIC_MAX_QP && st->qc_pf_qpn != RNIC_GSI_QPN;
}

/* QP q's context is on its way from ICM (a read of the FIFO's, not made stale by a commit), or
 * queued to be read: a bounded compare over registers */
static int qc_coming(const rnic_rx_state_t *st, uint32_t q)
{
	uint32_t i, n = 0;

	for (i = 0; i < RX_RD_FIFO; i++)
		n |= st->rd_kind[i] == RD_QPC && st->rd_qpn[i] == q &&
		     (uint32_t)(i - st->rd_head) % RX_RD_FIFO < st->rd_tail - st->rd_head;
	for (i = 0; i < RX_QC_Q; i++)
		n |= st->qc_q[i] == q && (uint32_t)(i - st->qf_head) % RX_QC_Q < st->qf_tail - st->qf_head;
	return (int)n;
}

/* A clock after a frame came in whole (qc_cand): its QP's tag; not there, nor coming, the QP
 * joins the queue of misses (a full queue forgets it: the frame reads it at the head) */
void rx_qc_check(rnic_rx_state_t *st)
{
	uint32_t q = st->qc_pf_qpn, tag;

	if (!st->qc_cand)
		return;
	st->qc_cand = 0;
	tag = st->qc_tagp[q % RX_QC_LINES];
	if (tag == (RX_QC_VALID | q) || st->qf_tail - st->qf_head >= RX_QC_Q || qc_coming(st, q))
		return;
	st->qc_q[st->qf_tail++ % RX_QC_Q] = (uint16_t)q;
}

/* Read QP qpn's context from ICM (the caller checked the read channel has room) */
static void qc_read(rnic_rx_state_t *st, uint32_t qpn)
{
	st->rd_t0[st->rd_tail % RX_RD_FIFO] = (uint32_t)st->now;
	rx_read_req(st, rnic_icm_bus(st->icm, RNIC_ICM_QPC_OFF + qpn * RNIC_ICM_QPC_STRIDE), RNIC_QPC_WORDS * 4,
		    RD_QPC, qpn);
	st->o.stat_qpc_misses++;
}

/* The frame at the head waits for its QP's context (B_QPC), not coming yet: read it */
void rx_qc_issue(rnic_rx_state_t *st)
{
	qc_read(st, st->qc_qpn);
	st->rd_issue = 0;
}

/* The queue of misses: the oldest read from ICM, when the channel has room and no fence waits
 * for the reads to drain */
void rx_qc_prefetch(rnic_rx_state_t *st)
{
	if (st->qf_head == st->qf_tail || !rx_rd_room(st) || st->fence_pending ||
	    !rnic_icm_bus(st->icm, RNIC_ICM_QPC_OFF))
		return;
	qc_read(st, st->qc_q[st->qf_head++ % RX_QC_Q]);
}

/* The QPC cache's line for the frame at the head: 1 if it holds QP qpn's context; else the frame
 * waits for it (B_QPC: read now, or coming) and 0. Without context memory there is nothing to
 * read: the frame is dropped as one for an unknown QP. */
int rx_qc_lookup(rnic_rx_state_t *st, uint32_t qpn)
{
	if (st->qc_tag[qpn % RX_QC_LINES] == (RX_QC_VALID | qpn)) {
		if (!st->redo)
			st->o.stat_qpc_hits++;
		return 1;
	}
	if (!rnic_icm_bus(st->icm, RNIC_ICM_QPC_OFF + qpn * RNIC_ICM_QPC_STRIDE)) {
		st->o.stat_drop_qpn++;
		rx_finish_frame(st);
		return 0;
	}
	st->qc_qpn = (uint16_t)qpn;
	st->qc_wait0 = st->now;
	st->busy = B_QPC;
	st->rd_issue = !qc_coming(st, qpn);
	return 0;
}

/* A beat of a context read from ICM (QP qpn's; kind RD_QPC, or RD_QPC_OLD: its QP was committed
 * since, the commit's line is newer): the first waits in registers, the second writes the line
 * whole and its tag, unless a commit writes the same line in this clock. The frame waiting for it,
 * if any, is dispatched again. */
void rx_qc_fill(rnic_rx_state_t *st, const rnic_rx_in_t *in, uint32_t qpn, uint32_t kind)
{
	uint32_t line = qpn % RX_QC_LINES, k;

	if (!in->rd_last) {
		for (k = 0; k < RNIC_BEAT / 4; k++)
			st->qc_fill[k] = (uint32_t)rnic_rd_le(in->rd_data + 4 * k, 4);
		return;
	}
	if (kind == RD_QPC && !(st->commit_valid && st->commit_qpn % RX_QC_LINES == line)) {
		if (!st->commit_valid && st->qc_tag[line] & RX_QC_VALID && (st->qc_tag[line] & ~RX_QC_VALID) != qpn)
			st->o.stat_qpc_evictions++;
		for (k = 0; k < RNIC_QPC_WORDS; k++)
			st->qc_line[line][k] = k < RNIC_BEAT / 4 ? st->qc_fill[k] :
					       (uint32_t)rnic_rd_le(in->rd_data + 4 * (k - RNIC_BEAT / 4), 4);
		st->qc_tag[line] = (uint16_t)(RX_QC_VALID | qpn);
		if (!st->commit_valid)
			st->qc_tagp[line] = (uint16_t)(RX_QC_VALID | qpn);
	}
	st->o.stat_qpc_miss_cycles += (uint32_t)in->cycle - st->rd_t0[(st->rd_head - 1) % RX_RD_FIFO]; /* taken */
	if (st->busy == B_QPC && st->qc_qpn == qpn) {
		st->o.stat_qpc_wait_cycles += (uint32_t)(in->cycle - st->qc_wait0);
		st->busy = B_IDLE;
		st->rd_issue = 0;
		st->redo = 1;
	}
}

/* A QP context word from the firmware, into the stage. Word 0 (written last) commits the entry:
 * to its line of the QPC cache, whole (a read of the QP's context on its way is stale), and the
 * fields any QP's doorbell, receive WQE or completion reads. */
void rx_qpc_cfg(rnic_rx_state_t *st, uint32_t addr, uint32_t data)
{
	uint32_t idx, line, k, srqn, state = RNIC_GET(RNIC_QPC_CTRL_STATE, data);
	const uint32_t *e = st->qc_stage;
	int w = rnic_qpc_word(addr, &idx);

	if (w < 0)
		return;
	st->qc_stage[w] = data;
	if (w)
		return;
	st->commit_valid = 1;
	st->commit_qpn = (uint16_t)idx;
	line = idx % RX_QC_LINES;
	for (k = 0; k < RNIC_QPC_WORDS; k++)
		st->qc_line[line][k] = e[k];
	st->qc_tag[line] = st->qc_tagp[line] = (uint16_t)(RX_QC_VALID | idx);
	for (k = 0; k < RX_RD_FIFO; k++)
		if (st->rd_kind[k] == RD_QPC && st->rd_qpn[k] == idx)
			st->rd_kind[k] = RD_QPC_OLD;
	st->rq_ctl[idx] = RNIC_GET(RNIC_QPC_CTRL_CTX, data) | (RNIC_GET(RNIC_QPC_RING_LOG_RQ, e[RNIC_QPC_RING_LOG / 4]) & 0x1f) << 8 |
			  (RNIC_GET(RNIC_QPC_CTRL_VALID, data) && state != RNIC_QPS_RESET ? RQ_LIVE : 0) |
			  RNIC_GET(RNIC_QPC_CQN_RECV, e[RNIC_QPC_CQN / 4]) << 16;
	srqn = RNIC_GET(RNIC_QPC_SRQ_SRQN, e[RNIC_QPC_SRQ / 4]);
	st->rq_srq[idx] = (uint16_t)(RNIC_GET(RNIC_QPC_SRQ_USE, e[RNIC_QPC_SRQ / 4]) ? RQ_SRQ | (srqn < RQ_SRQ ? srqn : RQ_SRQ - 1) : 0);
	st->rq_base[idx] = (uint64_t)e[RNIC_QPC_RQ_BASE_HI / 4] << 32 | e[RNIC_QPC_RQ_BASE_LO / 4];
	st->qp_pdn[idx] = e[RNIC_QPC_PDN / 4];
	st->dest_qpn[idx] = RNIC_GET(RNIC_QPC_DEST_QPN_QPN, e[RNIC_QPC_DEST_QPN / 4]);
}
