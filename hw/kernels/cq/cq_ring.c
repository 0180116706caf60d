/* CQ kernel, stage 2 (cq_ring.h). II=1, latency 2: an op taken from its FIFO in one clock has
 * its CQC and run state the next (the block RAMs' read), when it is done and written back.
 * Memories: cqc (16,384 x 128 bits) and cq (16,384 x 72 bits), each a block RAM with two ports:
 * cqc read by the op and written by a commit; cq read by the op, written back by it or by a
 * commit's restart (never both in a clock: a configuration write waits for a clock without an
 * op, and no op is taken while one waits) or by the sweep that clears it after a reset.
 * Recurrence: the run state written back and forwarded to an op of the same CQ the next clock
 * (a mux, then the producer index's increment and the overflow compare). */
#include "cq_ring.h"

#define CQC_F(e, reg, f) RNIC_GET(RNIC_CQC_##reg##_##f, (e)[RNIC_CQC_##reg / 4])

/* A configuration write, in a clock without an op. Returns 0 when it must wait for the writer. */
static int cfg(cq_ring_t *st, const cq_cfg_t *c, rnic_cq_wrq_t *wrq)
{
	uint32_t tbl = RNIC_CFG_TBL(c->addr), idx = RNIC_CFG_IDX(c->addr), word = RNIC_CFG_WORD(c->addr), i;
	cq_wr_t m = {0};

	if (tbl == RNIC_CFG_TBL_CQC && idx < RNIC_MAX_CQ && word < RNIC_CQC_WORDS) {
		st->stage[word] = c->data;
		if (word)
			return 1;
		/* word 0 commits: a CQ resized while completions arrive never has a new base with an
		 * old size */
		for (i = 0; i < RNIC_CQC_WORDS; i++)
			st->cqc[idx][i] = st->stage[i];
		if (!RNIC_GET(RNIC_CQC_CTRL_KEEP, c->data))
			st->cq[idx] = (cq_run_t){0};
		return 1;
	}
	if (tbl != RNIC_CFG_TBL_FENCE && (tbl != RNIC_CFG_TBL_EQC || idx >= RNIC_NUM_CTX || word >= RNIC_EQC_WORDS))
		return 1;
	if (!rnic_cq_wrq_room(wrq))
		return 0;
	m.kind = tbl == RNIC_CFG_TBL_FENCE ? CQ_WR_FENCE : CQ_WR_EQC;
	m.data = c->data;
	m.where = idx << 8 | word;
	rnic_cq_wrq_push(wrq, &m);
	return 1;
}

/* A doorbell: the consumer index, and the arm. Arming a CQ that holds CQEs past the doorbell's
 * consumer index raises the event at once: the host polled before those CQEs reached its memory,
 * and no later CQE may come to wake it. */
static void doorbell(const cq_db_t *d, const uint32_t *e, cq_run_t *q, rnic_cq_wrq_t *wrq)
{
	cq_wr_t m = {0};

	if (CQC_F(e, CTRL, CTX) != d->ctx)
		return;
	q->ci = (q->pi & ~0xffffu) | d->ci;
	if (q->ci > q->pi)
		q->ci -= 0x10000;
	if (d->arm && q->ci != q->pi) {
		q->armed = 0;
		m.kind = CQ_WR_EQE;
		m.eqe_type = RNIC_EQE_TYPE_COMP;
		m.data = d->cqn;
		m.ctx = (uint8_t)(CQC_F(e, CTRL, CTX) % RNIC_NUM_CTX);
		m.vector = (uint8_t)e[RNIC_CQC_VECTOR / 4];
		rnic_cq_wrq_push(wrq, &m);
	} else if (d->arm) {
		q->armed = d->arm;
	}
}

/* A completion: its CQE's slot, unless it would overwrite an unconsumed one (dropped and
 * counted); an armed CQ's event follows it. */
static void completion(cq_ring_t *st, const rnic_cpl_t *c, const uint32_t *e, cq_run_t *q, rnic_cq_wrq_t *wrq)
{
	uint32_t log = CQC_F(e, CTRL, LOG_SIZE);
	uint64_t base = ((uint64_t)e[RNIC_CQC_BASE_HI / 4] << 32) | e[RNIC_CQC_BASE_LO / 4];
	cq_wr_t m = {0};

	if (!CQC_F(e, CTRL, VALID))
		return;
	if (q->pi - q->ci >= (1u << log)) {
		st->stat_overflow++;
		return;
	}
	m.kind = CQ_WR_CQE;
	m.cpl = *c;
	m.addr = base + (uint64_t)(q->pi & ((1u << log) - 1)) * RNIC_CQE_BYTES;
	m.owner = ((q->pi >> log) & 1) ^ 1;
	m.eqe = q->armed != 0;
	m.ctx = (uint8_t)(CQC_F(e, CTRL, CTX) % RNIC_NUM_CTX);
	m.vector = (uint8_t)e[RNIC_CQC_VECTOR / 4];
	q->pi++;
	q->armed = 0;
	st->stat_cqes++;
	rnic_cq_wrq_push(wrq, &m);
}

/* An asynchronous event (IBTA 11.6.3): an EQE in the context's event queue, MSI-X vector = the
 * context number. */
static void event(const rnic_cpl_t *c, rnic_cq_wrq_t *wrq)
{
	cq_wr_t m = {0};

	m.kind = CQ_WR_EQE;
	m.eqe_type = c->evt;
	m.data = c->qpn;
	m.ctx = (uint8_t)(c->ctx % RNIC_NUM_CTX);
	m.vector = c->ctx;
	rnic_cq_wrq_push(wrq, &m);
}

/* The op whose entries arrived: done, and its run state written back. */
static void finish(cq_ring_t *st, rnic_cq_wrq_t *wrq)
{
	uint32_t n = st->n;
	const uint32_t *e;
	cq_run_t q;

	if (st->op == CQ_OP_CPL && st->cpl.evt) {
		event(&st->cpl, wrq);
		return;
	}
	if (n >= RNIC_MAX_CQ)
		return;
	e = st->cqc[n];
	/* the block RAM's read of an entry written back at the same edge gives the old one */
	q = st->wb_valid && st->wb_n == n ? st->wb : st->cq[n];
	if (st->op == CQ_OP_DB)
		doorbell(&st->db, e, &q, wrq);
	else
		completion(st, &st->cpl, e, &q, wrq);
	st->cq[n] = q;
	st->wb_valid = 1;
	st->wb_n = (uint16_t)n;
	st->wb = q;
}

/* The next op, round robin between the doorbells, TX's and RX's completions. */
static void take(cq_ring_t *st, rnic_cq_dbq_t *dbq, rnic_cq_cplq_t *txq, rnic_cq_cplq_t *rxq)
{
	int have[3] = {rnic_cq_dbq_count(dbq) != 0, rnic_cq_cplq_count(txq) != 0, rnic_cq_cplq_count(rxq) != 0};
	uint32_t k, pick = 3;

	for (k = 0; k < 3; k++) {
		uint32_t i = (st->rr + k) % 3;

		if (have[i] && pick == 3)
			pick = i;
	}
	if (pick == 3)
		return;
	st->rr = (uint8_t)((pick + 1) % 3);
	if (pick == 0) {
		st->op = CQ_OP_DB;
		st->db = *rnic_cq_dbq_head(dbq);
		st->n = st->db.cqn;
		rnic_cq_dbq_pop(dbq);
	} else {
		rnic_cq_cplq_t *q = pick == 1 ? txq : rxq;

		st->op = CQ_OP_CPL;
		st->cpl = *rnic_cq_cplq_head(q);
		st->n = st->cpl.cqn;
		rnic_cq_cplq_pop(q);
	}
}

void cq_ring(cq_ring_t *st, const rnic_cq_in_t *in, rnic_cq_cfgq_t *cfgq, rnic_cq_dbq_t *dbq,
	     rnic_cq_cplq_t *txq, rnic_cq_cplq_t *rxq, rnic_cq_wrq_t *wrq, rnic_cq_out_t *out)
{
#pragma HLS PIPELINE II = 1
	uint8_t had = st->op, sweeping = st->sweep < RNIC_MAX_CQ;

	if (in->rst) {
		st->sweep = 0;
		st->op = st->wb_valid = st->rr = 0;
		st->stat_cqes = st->stat_overflow = 0;
	} else {
		if (had)
			finish(st, wrq);
		else
			st->wb_valid = 0;
		st->op = CQ_OP_NONE;
		if (!had && rnic_cq_cfgq_count(cfgq) && cfg(st, rnic_cq_cfgq_head(cfgq), wrq))
			rnic_cq_cfgq_pop(cfgq);
		/* an op taken now may write to the writer next clock, after this clock's message: room
		 * for two, whatever this clock does */
		if (!sweeping && !rnic_cq_cfgq_count(cfgq) && rnic_cq_wrq_room(wrq) >= 2)
			take(st, dbq, txq, rxq);
		if (sweeping) {
			/* after a reset, one entry a clock (configuration writes meanwhile: the other port) */
			st->cq[st->sweep] = (cq_run_t){0};
			st->sweep++;
		}
	}
	out->stat_cqes = st->stat_cqes;
	out->stat_overflow = st->stat_overflow;
}
