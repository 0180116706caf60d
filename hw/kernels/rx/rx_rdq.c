/* RX kernel, the requester's READs and atomics awaiting their responses (rx_rdq.h): a stage of its
 * own beside rx_core.
 *
 * The TX kernel tells it of each READ or atomic it sends (its expect: the first PSN, the packets,
 * where the data goes); rx_core asks it about each response to one of ours (rdaskq) and is told
 * what to do with it (rdansq): drop it, drop it and tell the TX kernel of a gap (IBTA 9.7.5.1.6
 * on the requester's side: responses come in PSN order, and a gap makes the requester ask again
 * from the missing PSN), or place it at an offset of the request's scatter list. An expect for a
 * request already answered (a go-back-N that crossed the notice that it was) is told again to
 * the TX kernel (rdntcq). A QP reset (its context's commit, watched here) expects nothing more,
 * and the entries its slots hold go back to the pool, one a clock (the reclaim).
 *
 * What a QP expects is kept in PSN order in the slots of a block (rdb): each slot the request's
 * first PSN and its entry in the pool rdp. Blocks are shared by all QPs: a QP takes one with its
 * first entry and gives it back with its last, so a QP with nothing outstanding holds only its
 * row. A QP holding a block holds an entry, and there are as many blocks as entries.
 *
 * One operation at a time, a step a clock, each step's reads at registered addresses (the
 * registers as the clock began, c) and their data used in the next:
 *   - an expect: its row; its block, and the free entry and block; its slot; its writes (5 clocks
 *     with the one that begins it);
 *   - a question: its row; its slot's entry number; the entry; the verdict's sums; the verdict
 *     and the writes (6). A question of the QP the last one was about finds the row and head
 *     entry in the registers still (c_on): its sums are made in the clock it begins, and it is
 *     answered in the next (2);
 *   - a reset: its row; its writes (3);
 *   - a reclaim: its row; its last slot; its block; its writes (5).
 * The next begins the clock after the last's writes, so no step reads what another writes in its
 * clock. Expects go first (one is taken at a time, and none while a reset waits, so one taken
 * before a QP's reset is done before it), then a reset, then a question, then the reclaim.
 * II=1, latency 2: a question is answered two clocks after it is taken, six when its QP's row
 * and entry are read.
 * Memories: row (a QP each), rdb, rdp (RX_RDP each), the free rings rdf and rbf, the reclaim's
 * ring rcl and its flags rcl_in: a step reads or writes one word of each. Recurrence: an
 * expect's search of its block for its first PSN, and what it decides. */
#include "rx_rdq.h"

_Static_assert(RNIC_QPC_WORDS > 6, "a context's commits are further apart than an operation takes");
_Static_assert(!(RX_RDX & (RX_RDX - 1)) && !(RX_RDP & (RX_RDP - 1)), "slots and entries by a mask");

/* An entry of the QP's (row r) back to the pool: its last gives its block back too. c: the
 * registers as the clock began, n: their next values. */
static void give(rx_rdq_t *st, const rx_rdreg_t *c, rx_rdrow_t *r, uint32_t pe)
{
	rx_rdreg_t *n = &st->g;

	st->rdf[c->rdf_tail % RX_RDP] = (uint16_t)pe;
	n->rdf_tail = c->rdf_tail + 1;
	if (!--r->rd_n) {
		st->rbf[c->rbf_tail % RX_RDP] = r->blk;
		n->rbf_tail = c->rbf_tail + 1;
	}
}

/* A question's verdict, its arithmetic (from the registers c, or from a new question a of the
 * QP c is about): the PSN expected and how far a's is from it, whether it is the request's last
 * response, where it goes and what is left of the request there */
static void judge(rx_rdq_t *st, const rx_rdreg_t *c, const rx_rdask_t *a)
{
	rx_rdreg_t *n = &st->g;

	n->j_exp = (c->e.first_psn + c->r.rd_off) & RNIC_PSN_MASK;
	n->j_d = rnic_psn_diff(a->psn, c->e.first_psn + c->r.rd_off);
	n->j_last = c->r.rd_off + 1 == c->e.npkts;
	n->j_off = c->r.rd_off << a->mtu_sh;
	n->j_rem = c->e.len - (c->r.rd_off << a->mtu_sh);
}

/* ... and the verdict (rdansq): rx_core waits for it, so there is room */
static void answer(rx_rdq_t *st, const rx_rdreg_t *c, rnic_rx_rdansq_t *ans)
{
	rx_rdreg_t *n = &st->g;
	const rx_rdask_t *a = &c->ask;
	rx_rdrow_t r = c->r;
	rx_rdans_t *m = rnic_rx_rdansq_slot(ans);
	uint32_t k;

	*m = (rx_rdans_t){0};
	rnic_rx_rdansq_push(ans, NULL);
	n->step = RDQ_BEGIN;
	n->c_on = 1; /* r and e stay the QP's row and head entry */
	if (r.rd_head == r.rd_tail || c->j_d < 0 || a->atomic != (c->e.kind != RNIC_WQE_OP_RDMA_READ)) {
		m->verdict = RX_RDA_DROP; /* unexpected or duplicate */
		return;
	}
	if (c->j_d > 0) {
		m->verdict = r.rd_nak ? RX_RDA_DROP : RX_RDA_GAP;
		m->exp = c->j_exp;
		r.rd_nak = 1;
		n->r = r;
		st->row[c->qpn] = r;
		return;
	}
	if (a->atomic ? a->plen != 0 : c->j_last ? a->plen != c->j_rem : a->plen != 1u << a->mtu_sh) {
		m->verdict = RX_RDA_MALFORMED;
		return;
	}
	m->verdict = RX_RDA_OK;
	m->last = c->j_last;
	m->off = c->j_off;
	m->nsge = c->e.nsge;
	for (k = 0; k < RNIC_MAX_SGE; k++)
		m->sge[k] = c->e.sge[k];
	r.rd_nak = 0;
	if (c->j_last) {
		/* answered: its entry goes back to the pool, and the next is the head (not read yet) */
		give(st, c, &r, c->pe);
		r.rd_head++;
		r.rd_off = 0;
		r.rd_done = a->psn;
		r.rd_done_ok = 1;
		n->c_on = 0;
	} else {
		/* each response placed is progress: a READ asked again resumes after it */
		r.rd_off++;
	}
	n->r = r;
	st->row[c->qpn] = r;
}

/* An expect (x), once its row and block are read: a slot of its own, or the one it had when it is
 * sent again after a go-back-N (it replaces the entry there and everything after it) */
static void find(rx_rdq_t *st, const rx_rdreg_t *c, rnic_rx_rdntcq_t *ntcs)
{
	rx_rdreg_t *n = &st->g;
	rx_rdrow_t r = c->r;
	uint32_t i, found = 0, k = (uint8_t)(r.rd_tail - r.rd_head); /* k: its place after the head */

	for (i = 0; i < RX_RDX; i++) {
		if (!found && i < (uint8_t)(c->r.rd_tail - c->r.rd_head) &&
		    c->b.psn[(uint8_t)(r.rd_head + i) % RX_RDX] == c->x.first_psn) {
			k = i;
			found = 1;
		}
	}
	n->step = RDQ_BEGIN;
	/* sent again by a go-back-N that crossed our notice that it was answered: the notice is
	 * repeated (the first may have reached the TX kernel before the WQE was fetched again);
	 * expecting its response a second time could stall the QP */
	if (!found && c->x_done && rnic_rx_rdntcq_room(ntcs)) {
		rx_rdntc_t *m = rnic_rx_rdntcq_slot(ntcs);

		m->qpn = c->qpn;
		m->psn = c->x_last;
		rnic_rx_rdntcq_push(ntcs, NULL);
		n->x_on = 0;
		return;
	}
	if (!k && !found) /* nothing expected: a new head */
		r.rd_off = 0;
	r.rd_tail = (uint8_t)(r.rd_head + k);
	n->r = r;
	if (k >= RX_RDX) {
		st->row[c->qpn] = r;
		n->x_on = 0;
		return;
	}
	n->slot = (uint8_t)(r.rd_head + k) % RX_RDX;
	n->reuse = k < r.rd_n;
	n->step = RDQ_PUT;
}

/* ... and its writes: the slot's entry (the one it had, else one from the pool, which
 * rdx_ready said has one, and with the QP's first entry a block) */
static void put(rx_rdq_t *st, const rx_rdreg_t *c)
{
	rx_rdreg_t *n = &st->g;
	rx_rdrow_t r = c->r;
	rx_rdb_t b = c->b;
	uint32_t pe = b.e[c->slot % RX_RDX];

	if (!c->reuse) {
		if (!r.rd_n) {
			r.blk = c->f_blk;
			if (c->rb_fresh < RX_RDP)
				n->rb_fresh = c->rb_fresh + 1;
			else
				n->rbf_head = c->rbf_head + 1;
		}
		pe = c->f_pe;
		if (c->rd_fresh < RX_RDP)
			n->rd_fresh = c->rd_fresh + 1;
		else
			n->rdf_head = c->rdf_head + 1;
		r.rd_n++;
	}
	b.psn[c->slot % RX_RDX] = c->x.first_psn;
	b.e[c->slot % RX_RDX] = (uint16_t)pe;
	st->rdb[r.blk % RX_RDP] = b;
	st->rdp[pe % RX_RDP] = c->e;
	r.rd_tail++;
	st->row[c->qpn] = r;
	n->x_on = 0;
	n->step = RDQ_BEGIN;
}

/* the entry an expect writes, from the TX kernel's */
static void entry_of(rx_rdx_t *e, const rnic_rdx_t *x)
{
	uint32_t k, l[RNIC_MAX_SGE];

	_Static_assert(RNIC_MAX_SGE == 4, "the sum of the lengths below");
	*e = (rx_rdx_t){0};
	e->first_psn = x->first_psn;
	e->npkts = x->npkts;
	e->kind = x->kind;
	e->nsge = x->nsge;
	for (k = 0; k < RNIC_MAX_SGE; k++) {
		e->sge[k].addr = rnic_rd_le(x->sge + k * 16, 8);
		e->sge[k].len = (uint32_t)rnic_rd_le(x->sge + k * 16 + 8, 4);
		e->sge[k].key = (uint32_t)rnic_rd_le(x->sge + k * 16 + 12, 4);
		e->sge[k].access = RNIC_ACCESS_LOCAL_WRITE;
		l[k] = k < x->nsge ? e->sge[k].len : 0;
	}
	e->len = (l[0] + l[1]) + (l[2] + l[3]); /* a tree of adders */
}

/* A QP reset: nothing is expected any more; the entries its slots hold go back to the pool (the
 * reclaim, once it is in rcl) */
static void reset_qp(rx_rdq_t *st, const rx_rdreg_t *c)
{
	rx_rdrow_t r = c->r;

	r.rd_tail = r.rd_head;
	r.rd_off = r.rd_nak = r.rd_done_ok = 0;
	if (r.rd_n && !c->r_in) {
		st->rcl_in[c->qpn] = 1;
		st->rcl[c->rcl_tail % RNIC_MAX_QP] = c->qpn;
		st->g.rcl_tail = c->rcl_tail + 1;
	}
	st->row[c->qpn] = r;
	st->g.step = RDQ_BEGIN;
}

/* One entry of the QP at the head of the reclaim queue back to the pool: those its slots hold
 * beyond what it expects (all of them after a reset; a reused QP keeps what it expects). */
static void reclaim(rx_rdq_t *st, const rx_rdreg_t *c)
{
	rx_rdrow_t r = c->r;

	if (c->give)
		give(st, c, &r, c->b.e[c->slot % RX_RDX]);
	if (r.rd_n == (uint8_t)(r.rd_tail - r.rd_head)) {
		st->rcl_in[c->qpn] = 0;
		st->g.rcl_head = c->rcl_head + 1;
	}
	st->row[c->qpn] = r;
	st->g.step = RDQ_BEGIN;
}

/* The next operation: an expect, a reset, a question (of the QP the last one was about: judged
 * now, from the row and entry it left), a reclaim. Its QP's row is read next clock. */
static void begin(rx_rdq_t *st, const rx_rdreg_t *c, rnic_rx_rdaskq_t *asks)
{
	rx_rdreg_t *n = &st->g;

	if (c->x_on) {
		n->op = RDQ_EXPECT;
		n->qpn = (uint16_t)(c->x.qpn % RNIC_MAX_QP); /* x is held until it is done */
		n->c_on = 0;
	} else if (c->rs_on) {
		n->op = RDQ_RESET_QP;
		n->qpn = c->rs_qpn;
		n->rs_on = 0;
		n->c_on = 0;
	} else if (rnic_rx_rdaskq_count(asks)) {
		const rx_rdask_t *a = rnic_rx_rdaskq_head(asks);

		n->op = RDQ_ASK;
		n->ask = *a;
		rnic_rx_rdaskq_pop(asks);
		if (c->c_on && c->qpn == a->qpn) {
			judge(st, c, a);
			n->step = RDQ_J2;
			return;
		}
		n->qpn = (uint16_t)(a->qpn % RNIC_MAX_QP);
		n->c_on = 0;
	} else if (c->rcl_head != c->rcl_tail) {
		n->op = RDQ_RECLAIM;
		n->qpn = st->rcl[c->rcl_head % RNIC_MAX_QP];
		n->c_on = 0;
	} else {
		return;
	}
	n->step = RDQ_ROW;
}

/* The steps after the row: each one's reads at registered addresses, their data used the next */
static void step(rx_rdq_t *st, const rx_rdreg_t *c, rnic_rx_rdansq_t *ans, rnic_rx_rdntcq_t *ntcs)
{
	rx_rdreg_t *n = &st->g;

	switch (c->step) {
	case RDQ_ROW:
		n->r = st->row[c->qpn];
		n->r_in = st->rcl_in[c->qpn];
		n->step = c->op == RDQ_ASK ? RDQ_HEAD : c->op == RDQ_EXPECT ? RDQ_BLOCK :
			  c->op == RDQ_RESET_QP ? RDQ_RESET : RDQ_SLOT;
		break;
	case RDQ_HEAD:
		n->pe = st->rdb[c->r.blk % RX_RDP].e[c->r.rd_head % RX_RDX];
		n->step = RDQ_ENTRY;
		break;
	case RDQ_ENTRY:
		n->e = st->rdp[c->pe % RX_RDP];
		n->step = RDQ_J1;
		break;
	case RDQ_J1:
		judge(st, c, &c->ask);
		n->step = RDQ_J2;
		break;
	case RDQ_J2:
		answer(st, c, ans);
		break;
	case RDQ_BLOCK:
		n->b = st->rdb[c->r.blk % RX_RDP];
		n->f_pe = (uint16_t)(c->rd_fresh < RX_RDP ? c->rd_fresh : st->rdf[c->rdf_head % RX_RDP]);
		n->f_blk = (uint16_t)(c->rb_fresh < RX_RDP ? c->rb_fresh : st->rbf[c->rbf_head % RX_RDP]);
		entry_of(&n->e, &c->x);
		n->x_last = (c->x.first_psn + c->x.npkts - 1) & RNIC_PSN_MASK;
		n->x_done = c->r.rd_done_ok && rnic_psn_diff(c->x.first_psn + c->x.npkts - 1, c->r.rd_done) <= 0;
		n->step = RDQ_FIND;
		break;
	case RDQ_FIND:
		find(st, c, ntcs);
		break;
	case RDQ_PUT:
		put(st, c);
		break;
	case RDQ_RESET:
		reset_qp(st, c);
		break;
	case RDQ_SLOT:
		n->give = c->r.rd_n > (uint8_t)(c->r.rd_tail - c->r.rd_head);
		n->slot = (uint8_t)(c->r.rd_head + c->r.rd_n - 1) % RX_RDX;
		n->step = RDQ_LAST;
		break;
	case RDQ_LAST:
		n->b = st->rdb[c->r.blk % RX_RDP];
		n->step = RDQ_GIVE;
		break;
	default: /* RDQ_GIVE */
		reclaim(st, c);
		break;
	}
}

void rx_rdq(rx_rdq_t *st, const rnic_rx_in_t *in, rnic_rx_rdaskq_t *asks, rnic_rx_rdansq_t *ans,
	    rnic_rx_rdntcq_t *ntcs)
{
#pragma HLS PIPELINE II = 1
	const rx_rdreg_t c = st->g;
	rx_rdreg_t *n = &st->g;
	uint32_t idx, ctrl = in->cfg_data;
	int w;

	if (in->rst) {
		st->sweep = 0;
		n->rd_fresh = n->rdf_head = n->rdf_tail = n->rb_fresh = n->rbf_head = n->rbf_tail = 0;
		n->rcl_head = n->rcl_tail = 0;
		n->rs_on = n->x_on = n->rdx_ready = n->c_on = 0;
		n->step = RDQ_BEGIN;
		return;
	}
	if (st->sweep < RNIC_MAX_QP) {
		/* after a reset, a row a clock (rx_core sweeps as long: nothing asks meanwhile) */
		st->row[st->sweep % RNIC_MAX_QP] = (rx_rdrow_t){0};
		st->rcl_in[st->sweep % RNIC_MAX_QP] = 0;
		st->sweep++;
		n->rdx_ready = st->sweep == RNIC_MAX_QP;
		return;
	}
	if (c.step == RDQ_BEGIN)
		begin(st, &c, asks);
	else
		step(st, &c, ans, ntcs);
	/* a context's commit (word 0, written last) that resets its QP: to do */
	w = rnic_qpc_word(in->cfg_addr, &idx);
	if (in->cfg_valid && w == 0 &&
	    (!RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl) || RNIC_GET(RNIC_QPC_CTRL_STATE, ctrl) == RNIC_QPS_RESET)) {
		n->rs_on = 1;
		n->rs_qpn = (uint16_t)idx;
	}
	if (in->rdx_valid && c.rdx_ready) {
		n->x = in->rdx;
		n->x_on = 1;
	}
	/* one more expect when none is held nor a reset waits (the reset goes after it), and the pool
	 * had two free entries as the clock began (an expect ending in it may take one) */
	n->rdx_ready = !n->x_on && !n->rs_on && RX_RDP - c.rd_fresh + (c.rdf_tail - c.rdf_head) > 1;
}

void rx_rdq_out(const rx_rdq_t *st, rnic_rx_out_t *out)
{
	out->rdx_ready = st->g.rdx_ready;
}
