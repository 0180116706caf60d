/* CQ kernel, stage 2 (cq_ring.h). II=1, latency 2: an op taken from its FIFO in one clock has
 * its CQC and run state the next (the block RAMs' read), when it is done and written back.
 * Memories: cqc (16,384 x 128 bits) and cq (16,384 x 50 bits), each a block RAM with two ports:
 * cqc read by the op and written by a commit; cq read by the op, written back by it or by a
 * commit's restart (never both in a clock: a configuration write waits for a clock without an
 * op, and no op is taken while one waits); both by the sweep that clears them after a reset.
 * Recurrence (2.7 ns, tests/hls_timing.py): the run state from the RAM or the register of the
 * last write-back (a select registered when the op was taken), the producer index against the
 * limit (16 bits) and the write-back's mux. The round robin's pointer is the other (a few LUTs). */
#include "cq_ring.h"

#define CQC_F(e, reg, f) RNIC_GET(RNIC_CQC_##reg##_##f, (e)[RNIC_CQC_##reg / 4])

_Static_assert(RNIC_MAX_CQE_LOG < 16, "a CQ's indexes are taken modulo 2^16");
_Static_assert((RNIC_MAX_CQ & (RNIC_MAX_CQ - 1)) == 0, "the sweep's done bit is RNIC_MAX_CQ");

/* the ring's size from a CQC's control word, modulo 2^16 */
static uint16_t ring_size(uint32_t ctrl)
{
	return (uint16_t)(1u << RNIC_GET(RNIC_CQC_CTRL_LOG_SIZE, ctrl));
}

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
		if (RNIC_GET(RNIC_CQC_CTRL_KEEP, c->data)) {
			/* a resize: the limit moves with the size, an op next clock (the run state's read) */
			st->op = CQ_OP_SIZE;
			st->n = (uint16_t)idx;
			st->fwd = 0;
		} else {
			st->cq[idx] = (cq_run_t){0, 0, ring_size(c->data), 0};
		}
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
	q->ci = d->ci;
	q->lim = (uint16_t)(d->ci + ring_size(e[RNIC_CQC_CTRL / 4]));
	if (d->arm && d->ci != q->pi) {
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
	if (q->pi == q->lim) {
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

/* The op whose entries the memories give: done, and its CQ's run state written back. Returns
 * whether it was. */
static uint32_t finish(cq_ring_t *st, rnic_cq_wrq_t *wrq)
{
	uint32_t op = st->op, n = st->n % RNIC_MAX_CQ;
	const uint32_t *e = st->cqc[n];
	cq_run_t q = st->fwd ? st->wb : st->cq[n];

	if (op & CQ_OP_EVT) {
		event(&st->cpl, wrq);
		return 0;
	}
	if (op & CQ_OP_DB)
		doorbell(&st->db, e, &q, wrq);
	else if (op & CQ_OP_CPL)
		completion(st, &st->cpl, e, &q, wrq);
	else
		q.lim = (uint16_t)(q.ci + ring_size(e[RNIC_CQC_CTRL / 4]));
	st->cq[n] = q;
	st->wb = q;
	return 1;
}

/* The next op, round robin between the doorbells (0), TX's (1) and RX's (2) completions: the
 * first with an entry from rr on, 3 for none. */
static uint32_t pick(uint32_t rr, uint32_t h0, uint32_t h1, uint32_t h2)
{
	if (rr == 1)
		return h1 ? 1 : h2 ? 2 : h0 ? 0 : 3;
	if (rr == 2)
		return h2 ? 2 : h0 ? 0 : h1 ? 1 : 3;
	return h0 ? 0 : h1 ? 1 : h2 ? 2 : 3;
}

/* Takes the next op and decodes it (a CQN out of range is none). wrote: this clock's op writes
 * its CQ's run state back, which the block RAM does not give to a read at the same edge: the
 * next op of that CQ takes it from wb instead (the select registered here, each FIFO's head
 * compared while the pick is made). */
static void take(cq_ring_t *st, uint32_t wrote, rnic_cq_dbq_t *dbq, rnic_cq_cplq_t *txq, rnic_cq_cplq_t *rxq)
{
	const cq_db_t *d = rnic_cq_dbq_head(dbq);
	const rnic_cpl_t *t = rnic_cq_cplq_head(txq), *r = rnic_cq_cplq_head(rxq);
	uint32_t same[3] = {d->cqn == st->n, t->cqn == st->n, r->cqn == st->n};
	uint32_t k = pick(st->rr & 3, rnic_cq_dbq_count(dbq) != 0, rnic_cq_cplq_count(txq) != 0,
			  rnic_cq_cplq_count(rxq) != 0);
	static const uint8_t next[4] = {1, 2, 0, 0};

	if (k == 3)
		return;
	st->rr = next[k];
	st->fwd = wrote && same[k];
	if (k == 0) {
		st->op = d->cqn < RNIC_MAX_CQ ? CQ_OP_DB : CQ_OP_NONE;
		st->db = *d;
		st->n = d->cqn;
		rnic_cq_dbq_pop(dbq);
	} else {
		st->cpl = k == 1 ? *t : *r;
		st->op = st->cpl.evt ? CQ_OP_EVT : st->cpl.cqn < RNIC_MAX_CQ ? CQ_OP_CPL : CQ_OP_NONE;
		st->n = st->cpl.cqn;
		if (k == 1)
			rnic_cq_cplq_pop(txq);
		else
			rnic_cq_cplq_pop(rxq);
	}
}

void cq_ring(cq_ring_t *st, const rnic_cq_in_t *in, rnic_cq_cfgq_t *cfgq, rnic_cq_dbq_t *dbq,
	     rnic_cq_cplq_t *txq, rnic_cq_cplq_t *rxq, rnic_cq_wrq_t *wrq, rnic_cq_out_t *out)
{
#pragma HLS PIPELINE II = 1
	uint8_t had = st->op, sweeping = !(st->sweep & RNIC_MAX_CQ);
	uint32_t wrote = 0;

	if (in->rst) {
		st->sweep = 0;
		st->op = st->rr = 0;
		st->stat_cqes = st->stat_overflow = 0;
	} else {
		if (had)
			wrote = finish(st, wrq);
		st->op = CQ_OP_NONE;
		if (!had && !sweeping && rnic_cq_cfgq_count(cfgq) && cfg(st, rnic_cq_cfgq_head(cfgq), wrq))
			rnic_cq_cfgq_pop(cfgq);
		/* an op taken now may write to the writer next clock, after this clock's message: room
		 * for two, whatever this clock does */
		if (!sweeping && !rnic_cq_cfgq_count(cfgq) && rnic_cq_wrq_room(wrq) >= 2)
			take(st, wrote, dbq, txq, rxq);
		if (sweeping) {
			/* after a reset, one entry a clock; configuration writes wait (a fence, the
			 * firmware's first after its boot, passes once the sweep is done) */
			st->cq[st->sweep % RNIC_MAX_CQ] = (cq_run_t){0};
			st->cqc[st->sweep % RNIC_MAX_CQ][RNIC_CQC_CTRL / 4] = 0;
			st->sweep++;
		}
	}
	out->stat_cqes = st->stat_cqes;
	out->stat_overflow = st->stat_overflow;
}
