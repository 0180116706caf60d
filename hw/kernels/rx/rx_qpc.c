/* RX kernel: the QPC cache in front of context memory (docs/ARCHITECTURE.md "Context memory").
 *
 * 4,096 lines of one QP context each (the 34 bytes of it that frames are checked and placed with,
 * rx_qcl_t), direct-mapped: the line of QPN q is q mod 4,096, its tag q and a valid bit. Lines
 * change in the order frames reach the head, so that what a line will hold when a frame gets
 * there is known as the frame comes in: qc_tagf is the tag each line will have once the frames
 * in the store are through. A frame's QP is looked up there as
 * soon as the frame is in whole with a good ICRC. Found, its context will be in the line (a hit
 * at the head). Not found, the line's next owner is this QP: its context is read from ICM into
 * the frame's own slot (qc_stg, one per frame of the store) while the frames before it are
 * processed, and when it reaches the head the frame takes it from there and writes it into the
 * line. So a context read ahead is never put out by another QP's before its frame uses it, and
 * the head waits only for a read that is slower than the frames before it (B_QPC). A frame that
 * finds the line not as foretold (a commit took it, a frame before it was dropped unprocessed)
 * reads its context at the head. Lines are never written by the datapath (the per-packet
 * responder state is in qp[]): a line taken by another QP is simply overwritten, and the
 * firmware's commits write theirs whole.
 *
 * Memories: qc_line (4,096 x 272 bits, URAM: the head's read or its write of a slot's context;
 * a commit's write: a head's write of the same line in that clock is left out), qc_tag (the
 * head's read or write; a commit's write), qc_tagf (the arrival's read and write, a clock after
 * the frame's last beat), qc_stg (128 x 272 bits: a fill's write, the head's read). The slots'
 * QPNs and flags, the queue of slots to read (128), the reads on their way (the RX kernel's read
 * FIFO, 64 entries), the stage and a fill's first beat are registers. II 1. */
#include "rx_int.h"

_Static_assert(RNIC_MAX_QP <= 0x8000, "a tag holds the QPN in 15 bits");
_Static_assert(RNIC_MAX_PD <= 0x10000, "the kernels keep a QP's PD number in 16 bits");

/* A frame came in whole into slot `slot` of the queue, its headers judged: nothing read for it
 * yet; looked up next clock if it is RoCEv2 for one of our QPs with a good ICRC */
void rx_qc_arrived(rx_core_t *st, uint32_t slot, const rx_arrival_t *a)
{
	const rx_verdict_t *v = &a->f.v;
	uint32_t cand = a->f.icrc_ok && v->cls == RX_ROCE && v->qpn < RNIC_MAX_QP; /* the GSI QP's number is no entry's */

	st->qc_cand = (uint8_t)cand;
	st->qc_pf_qpn = v->qpn;
	if (cand && a->req && a->f.beats > 1) { /* over one not yet looked up */
		st->mk_cand = 1;
		st->mk_cand_key = a->key;
		st->mk_cand_va = a->va;
		st->mk_cand_xl = v->op != RNIC_BTH_OP_READ_REQ;
	}
	st->qc_cand_slot = (uint8_t)slot;
	st->qs_pend[slot] = st->qs_ready[slot] = st->qs_bad[slot] = 0;
}

/* A clock after a frame came in whole (qc_cand): what its QP's line will hold when the frame is
 * at the head. Its QP: a hit foretold. Another: the frame's QP takes the line, its context is
 * to be read into the frame's slot. */
void rx_qc_check(rx_core_t *st)
{
	uint32_t q = st->qc_pf_qpn, s = st->qc_cand_slot, tag;

	if (!st->qc_cand)
		return;
	st->qc_cand = 0;
	tag = st->qc_tagf[q % RX_QC_LINES];
	st->qs_qpn[s] = (uint16_t)q;
	if (tag == (RX_QC_VALID | q))
		return;
	if (tag & RX_QC_VALID)
		st->o.stat_qpc_evictions++;
	st->qc_tagf[q % RX_QC_LINES] = (uint16_t)(RX_QC_VALID | q);
	if (st->qf_tail - st->qf_head >= RX_MAX_FRAMES)
		return; /* slots of frames gone unprocessed still queued: read at the head */
	st->qs_pend[s] = 1;
	st->qc_q[st->qf_tail++ % RX_MAX_FRAMES] = (uint8_t)s;
}

/* Read QP qpn's context from ICM into slot s (the caller checked the read channel has room) */
static void qc_read(rx_core_t *st, uint32_t qpn, uint32_t s)
{
	st->rd_t0[st->rd_tail % RX_RD_FIFO] = (uint32_t)st->now;
	st->rd_slot[st->rd_tail % RX_RD_FIFO] = (uint8_t)s;
	rx_read_req(st, rnic_icm_bus(st->icm, RNIC_ICM_QPC_OFF + qpn * RNIC_ICM_QPC_STRIDE), RNIC_QPC_WORDS * 4,
		    RD_QPC, qpn);
	st->o.stat_qpc_misses++;
}

/* The frame at the head waits for its QP's context (B_QPC), not asked for yet: read it */
void rx_qc_issue(rx_core_t *st)
{
	qc_read(st, st->qc_qpn, st->fr_head % RX_MAX_FRAMES);
	st->rd_issue = 0;
}

/* The slots to read: the oldest read from ICM, when the channel has room and no fence waits for
 * the reads to drain (unless the frame at the head waits for one: it goes first in the queue).
 * A slot whose frame went without it is passed over. */
void rx_qc_prefetch(rx_core_t *st)
{
	uint32_t s = st->qc_q[st->qf_head % RX_MAX_FRAMES];

	if (st->qf_head == st->qf_tail || !rx_rd_room(st) || (st->fence_pending && st->busy != B_QPC))
		return;
	st->qf_head++;
	if (!st->qs_pend[s])
		return;
	if (!rnic_icm_bus(st->icm, RNIC_ICM_QPC_OFF)) {
		st->qs_pend[s] = 0; /* nothing to read: the frame is dropped at the head */
		return;
	}
	qc_read(st, st->qs_qpn[s], s);
}

/* The context of QP qpn for the frame at the head: 1 if it is in the frame's slot (which then
 * goes into the line, unless a commit writes the line in this clock) or in the line; else the
 * frame waits for it (B_QPC: read now, or on its way) and 0. Without context memory there is
 * nothing to read: the frame is dropped as one for an unknown QP. */
int rx_qc_lookup(rx_core_t *st, uint32_t qpn)
{
	uint32_t s = st->fr_head % RX_MAX_FRAMES, line = qpn % RX_QC_LINES;

	st->qc_staged = 0;
	if (st->qs_bad[s] && st->qs_qpn[s] == qpn) {
		st->qs_bad[s] = 0; /* its read was refused: dropped as for no context (a retry reads again) */
		st->o.stat_drop_qpn++;
		rx_finish_frame(st);
		return 0;
	}
	if (st->qs_ready[s] && st->qs_qpn[s] == qpn) {
		st->qs_ready[s] = 0;
		st->qc_staged = 1;
		st->qc_slot = (uint8_t)s;
		if (!(st->commit_valid && st->commit_qpn % RX_QC_LINES == line)) {
			st->qc_line[line] = st->qc_stg[s];
			st->qc_tag[line] = (uint16_t)(RX_QC_VALID | qpn);
		}
		return 1;
	}
	if (st->qc_tag[line] == (RX_QC_VALID | qpn)) {
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
	st->rd_issue = !(st->qs_pend[s] && st->qs_qpn[s] == qpn);
	st->qs_qpn[s] = (uint16_t)qpn;
	st->qs_pend[s] = 1;
	return 0;
}

/* A beat of a context read from ICM (QP qpn's, for slot s; kind RD_QPC, or RD_QPC_OLD: its QP was
 * committed since, the commit's line is newer): the first waits in registers, the second writes
 * the slot whole, if the slot still waits for QP qpn's. 1 when that is the slot of the frame at
 * the head: it is dispatched (again, if it waited) next clock, when the slot can be read. */
int rx_qc_fill(rx_core_t *st, const rnic_rx_in_t *in, uint32_t qpn, uint32_t s, uint32_t kind)
{
	uint32_t k, mine = st->qs_pend[s] && st->qs_qpn[s] == qpn;

	if (!in->rd_last) {
		for (k = 0; k < RNIC_BEAT / 4; k++)
			rx_qcl_cfg(&st->qc_fill, k, (uint32_t)rnic_rd_le(in->rd_data + 4 * k, 4));
		st->qc_fill_err = (uint8_t)in->rd_err;
		return 0;
	}
	if (mine && kind == RD_QPC && (st->qc_fill_err || in->rd_err)) {
		st->qs_bad[s] = 1; /* refused by the host: its frame is dropped at the head */
	} else if (mine && kind == RD_QPC) {
		rx_qcl_t l = st->qc_fill;

		for (k = RNIC_BEAT / 4; k < RNIC_QPC_WORDS; k++)
			rx_qcl_cfg(&l, k, (uint32_t)rnic_rd_le(in->rd_data + 4 * (k - RNIC_BEAT / 4), 4));
		st->qc_stg[s] = l;
		st->qs_ready[s] = 1;
	}
	if (mine)
		st->qs_pend[s] = 0;
	st->o.stat_qpc_miss_cycles += (uint32_t)in->cycle - st->rd_t0[(st->rd_head - 1) % RX_RD_FIFO]; /* taken */
	if (!mine || st->fr_head % RX_MAX_FRAMES != s)
		return 0;
	if (st->busy == B_QPC) {
		st->o.stat_qpc_wait_cycles += (uint32_t)(in->cycle - st->qc_wait0);
		st->busy = B_IDLE;
		st->rd_issue = 0;
		st->redo = 1;
	}
	return 1;
}

/* A QP context word from the firmware, into the stage. Word 0 (written last) commits the entry:
 * to its line of the QPC cache, whole (a read of the QP's context on its way is stale), and the
 * fields any QP's doorbell, receive WQE or completion reads. */
void rx_qpc_cfg(rx_core_t *st, uint32_t addr, uint32_t data)
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
		rx_qcl_cfg(&st->qc_line[line], k, e[k]);
	st->qc_tag[line] = (uint16_t)(RX_QC_VALID | idx);
	for (k = 0; k < RX_RD_FIFO; k++)
		if (st->rd_kind[k] == RD_QPC && st->rd_qpn[k] == idx)
			st->rd_kind[k] = RD_QPC_OLD;
	for (k = 0; k < RX_MAX_FRAMES; k++)
		if (st->qs_qpn[k] == idx)
			st->qs_ready[k] = 0;
	st->rq_ctl[idx] = RNIC_GET(RNIC_QPC_CTRL_CTX, data) | (RNIC_GET(RNIC_QPC_RING_LOG_RQ, e[RNIC_QPC_RING_LOG / 4]) & 0x1f) << 8 |
			  (RNIC_GET(RNIC_QPC_CTRL_VALID, data) && state != RNIC_QPS_RESET ? RQ_LIVE : 0) |
			  RNIC_GET(RNIC_QPC_CQN_RECV, e[RNIC_QPC_CQN / 4]) << 16;
	srqn = RNIC_GET(RNIC_QPC_SRQ_SRQN, e[RNIC_QPC_SRQ / 4]);
	st->rq_srq[idx] = (uint16_t)(RNIC_GET(RNIC_QPC_SRQ_USE, e[RNIC_QPC_SRQ / 4]) ? RQ_SRQ | (srqn < RQ_SRQ ? srqn : RQ_SRQ - 1) : 0);
	st->rq_base[idx] = (uint64_t)e[RNIC_QPC_RQ_BASE_HI / 4] << 32 | e[RNIC_QPC_RQ_BASE_LO / 4];
	st->qp_pdn[idx] = (uint16_t)e[RNIC_QPC_PDN / 4];
	st->dest_qpn[idx] = RNIC_GET(RNIC_QPC_DEST_QPN_QPN, e[RNIC_QPC_DEST_QPN / 4]);
}

/* Reset: every line empty, nothing foretold, read or queued */
void rx_qc_reset(rx_core_t *st)
{
	uint32_t i;

	for (i = 0; i < RX_MAX_FRAMES; i++)
		st->qs_pend[i] = st->qs_ready[i] = st->qs_bad[i] = 0;
	st->qf_head = st->qf_tail = st->qc_cand = 0;
	st->mk_cand = st->mk_want = 0;
}

/* line q of the cache's tags, after a reset (the sweep) */
void rx_qc_sweep(rx_core_t *st, uint32_t q)
{
	if (q < RX_QC_LINES)
		st->qc_tag[q % RX_QC_LINES] = st->qc_tagf[q % RX_QC_LINES] = 0;
}
