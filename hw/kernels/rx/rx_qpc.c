/* RX kernel: the QPC cache in front of context memory (docs/ARCHITECTURE.md "Context memory").
 *
 * 4,096 lines of one QP context each (92 bytes), direct-mapped: the line of QPN q is q mod 4,096,
 * its tag (qc_tag) q and a valid bit. The frame at the head of the queue looks its QP up when it
 * is dispatched (one tag read, one line read, a clock later in hardware, as the frame's headers
 * are); a miss reads the context from ICM (two beats) while the frame waits, then dispatches it
 * again. Lines are never written by the datapath (the per-packet responder state is in qp[]):
 * a line taken by another QP is simply overwritten, and the firmware's commits write theirs whole.
 * Memories: qc_line (4,096 x 736 bits, URAM: one read or fill/commit write per port), qc_tag
 * (4,096 x 16, block RAM), stage and first fill beat in registers. */
#include "rx_int.h"

/* The QPC cache's line for the frame at the head: 1 if it holds QP qpn's context; else the
 * frame waits for it (B_QPC, read from ICM: a miss) and 0. A miss's line goes to the QP whose
 * context it held before (an eviction: nothing to write back). Without context memory there is
 * nothing to read: the frame is dropped as one for an unknown QP. */
int rx_qc_lookup(rnic_rx_state_t *st, uint32_t qpn, uint64_t cycle)
{
	uint32_t tag = st->qc_tag[qpn % RX_QC_LINES];

	if (tag == (RX_QC_VALID | qpn)) {
		if (!st->redo)
			st->o.stat_qpc_hits++;
		return 1;
	}
	if (!rnic_icm_bus(st->icm, RNIC_ICM_QPC_OFF + qpn * RNIC_ICM_QPC_STRIDE)) {
		st->o.stat_drop_qpn++;
		rx_finish_frame(st);
		return 0;
	}
	st->o.stat_qpc_misses++;
	if (tag & RX_QC_VALID)
		st->o.stat_qpc_evictions++;
	st->qc_qpn = (uint16_t)qpn;
	st->qc_stale = 0;
	st->qc_t0 = cycle;
	st->busy = B_QPC;
	st->rd_issue = 1;
	return 0;
}

/* A beat of the context a miss reads: the first waits in registers, the second writes the line
 * whole, unless the QP was committed meanwhile (the commit's line is newer) or a commit takes
 * the line in this clock. The frame is dispatched again. */
void rx_qc_fill(rnic_rx_state_t *st, const rnic_rx_in_t *in)
{
	uint32_t line = st->qc_qpn % RX_QC_LINES, k;

	if (!in->rd_last) {
		for (k = 0; k < RNIC_BEAT / 4; k++)
			st->qc_fill[k] = (uint32_t)rnic_rd_le(in->rd_data + 4 * k, 4);
		return;
	}
	if (!st->qc_stale && !(st->qc_wrote && st->qc_wline == line)) {
		for (k = 0; k < RNIC_QPC_WORDS; k++)
			st->qc_line[line][k] = k < RNIC_BEAT / 4 ? st->qc_fill[k] :
					       (uint32_t)rnic_rd_le(in->rd_data + 4 * (k - RNIC_BEAT / 4), 4);
		st->qc_tag[line] = (uint16_t)(RX_QC_VALID | st->qc_qpn);
	}
	st->o.stat_qpc_miss_cycles += (uint32_t)(in->cycle - st->qc_t0);
	st->busy = B_IDLE;
	st->redo = 1;
}

/* A QP context word from the firmware, into the stage. Word 0 (written last) commits the entry:
 * to its line of the QPC cache, whole, and the fields any QP's doorbell or receive WQE reads. */
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
	st->qc_tag[line] = (uint16_t)(RX_QC_VALID | idx);
	st->qc_wrote = 1;
	st->qc_wline = line;
	if (st->busy == B_QPC && st->qc_qpn == idx)
		st->qc_stale = 1;
	st->rq_ctl[idx] = RNIC_GET(RNIC_QPC_CTRL_CTX, data) | (RNIC_GET(RNIC_QPC_RING_LOG_RQ, e[RNIC_QPC_RING_LOG / 4]) & 0x1f) << 8 |
			  (RNIC_GET(RNIC_QPC_CTRL_VALID, data) && state != RNIC_QPS_RESET ? RQ_LIVE : 0) |
			  RNIC_GET(RNIC_QPC_CQN_RECV, e[RNIC_QPC_CQN / 4]) << 16;
	srqn = RNIC_GET(RNIC_QPC_SRQ_SRQN, e[RNIC_QPC_SRQ / 4]);
	st->rq_srq[idx] = (uint16_t)(RNIC_GET(RNIC_QPC_SRQ_USE, e[RNIC_QPC_SRQ / 4]) ? RQ_SRQ | (srqn < RQ_SRQ ? srqn : RQ_SRQ - 1) : 0);
	st->rq_base[idx] = (uint64_t)e[RNIC_QPC_RQ_BASE_HI / 4] << 32 | e[RNIC_QPC_RQ_BASE_LO / 4];
	st->qp_pdn[idx] = e[RNIC_QPC_PDN / 4];
	st->dest_qpn[idx] = RNIC_GET(RNIC_QPC_DEST_QPN_QPN, e[RNIC_QPC_DEST_QPN / 4]);
}
