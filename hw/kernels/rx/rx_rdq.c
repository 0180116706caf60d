/* RX kernel, the requester's READs and atomics awaiting their responses (rx_rdq.h): the stage
 * between the QPC cache (rx_ctx) and rx_core.
 *
 * The TX kernel tells it of each READ or atomic it sends (its expect: the first PSN, the packets,
 * where the data goes). Each frame rx_ctx hands on passes it to rx_core (judgedq), in order; a
 * response to one of ours that its QP takes is judged on its way (IBTA 9.7.5.1.6 on the
 * requester's side: responses come in PSN order, and a gap makes the requester ask again from
 * the missing PSN): dropped, dropped with a notice of the gap for the TX kernel, malformed, or
 * placed at an offset of the request's scatter list, which goes with it. An expect for a request
 * already answered (a go-back-N that crossed the notice that it was) is told again to the TX
 * kernel (rdntcq). A QP reset (its context's commit, watched here) expects nothing more, and the
 * entries its slots hold go back to the pool, one a clock (the reclaim).
 *
 * What a QP expects is kept in PSN order in the slots of a block (rdb): each slot the request's
 * first PSN and its entry in the pool rdp. Blocks are shared by all QPs: a QP takes one with its
 * first entry and gives it back with its last, so a QP with nothing outstanding holds only its
 * row. A QP holding a block holds an entry, and there are as many blocks as entries.
 *
 * Two lanes, each one thing at a time, a step a clock, each step's reads at registered addresses
 * (the registers as the clock began, c) and their data used in the next:
 *   - responses: a frame that is not one goes on as the lane takes it; a response has its QP's
 *     row read (with its head slot's entry number), then the entry and the block (and the sums
 *     the row gives), and is judged and goes on (4 clocks). One of the QP the last one was
 *     about finds the row, entry, block and sums in the registers still (c_on): 2 clocks, the
 *     responses of one READ;
 *   - the rest: an expect (its row; its block, the free entry and block; its slot; its writes:
 *     4 clocks, and the next is taken as soon as its entry is made), a reset (its row; its
 *     writes), a reclaim (its row; its last slot; its block; its writes). Expects go first (one
 *     is held at a time, and none taken while a reset waits, so one taken before a QP's reset is
 *     done before it), then a reset, then the reclaim.
 * The lanes never work on one QP at once: a response waits while the other lane begins on its QP
 * or is on it (or begins a reclaim, whose QP it does not know yet), and the other lane reads its row again while the responses' lane is on it (it goes
 * first in the clock, so that read is before the other's write). A reclaim gives its entry back
 * between two responses (both give to the rings). The lanes take one port each of row, rdb and
 * rdp.
 * II=1, latency 2: a frame that is not a response to judge goes on the clock after it came, a
 * response two clocks after, four when its QP's row and entry are read.
 * Memories: row (a QP each), rdb, rdp (RX_RDP each), the free rings rdf and rbf, the reclaim's
 * ring rcl and its flags rcl_in: a lane reads or writes one word of each a clock. Recurrence: an
 * expect's search of its block for its first PSN, and what it decides; a response's check of
 * its QP against the other lane's. */
#include "rx_rdq.h"

_Static_assert(RNIC_QPC_WORDS > 6, "a context's commits are further apart than an operation takes");
_Static_assert(!(RX_RDX & (RX_RDX - 1)) && !(RX_RDP & (RX_RDP - 1)), "slots and entries by a mask");

/* c: the registers as the clock began; st->g: their next values */

/* An entry of a QP's (row r) back to the pool: its last gives its block back too */
static void give(rx_rdq_t *st, const rx_rdreg_t *c, rx_rdrow_t *r, uint32_t pe)
{
	st->rdf[c->rdf_tail % RX_RDP] = (uint16_t)pe;
	st->g.rdf_tail = c->rdf_tail + 1;
	if (!--r->rd_n) {
		st->rbf[c->rbf_tail % RX_RDP] = r->blk;
		st->g.rbf_tail = c->rbf_tail + 1;
	}
}

/* ---- the response lane */

/* A frame rx_core will take as a response to one of ours: a READ response or ATOMIC ACKNOWLEDGE
 * of a QP that takes it (rx_core's own checks, but for the QP's state it keeps: a frame it drops
 * for that was judged for a QP reset or in error, which expects nothing it waits for) */
static int to_judge(const rx_ctxf_t *f)
{
	return f->f.icrc_ok && rx_to_rdq(&f->f) && f->f.v.qpn < RNIC_MAX_QP && rx_qp_live(f) &&
	       rx_from_peer(&f->l, f->f.raw, f->f.v.v6);
}

/* The verdict on the response held, from its sums (j_*, or made now from the entry just read:
 * q_miss), and its writes; it goes on to rx_core with it (rx_core checks again that its QP's
 * region is still what the entry says before each write) */
static void judge(rx_rdq_t *st, const rx_rdreg_t *c, rnic_rx_judgedq_t *out)
{
	rx_rdreg_t *n = &st->g;
	rx_judged_t *o = rnic_rx_judgedq_slot(out);
	rx_rdans_t *m = &o->a;
	rx_rdrow_t r = c->q_r;
	const rx_rdx_t *e = &c->q_e;
	uint32_t mtu = 1u << c->q_sh, k, last, len_ok;
	int32_t d;

	o->f = st->q_f;
	o->judged = 1;
	*m = (rx_rdans_t){0};
	rnic_rx_judgedq_push(out, NULL);
	n->q_step = Q_BEGIN;
	n->c_on = 1;
	if (c->q_miss) {
		/* the sums from the entry; the next response's, for when it comes */
		d = (int32_t)(((c->q_pr - e->first_psn) & RNIC_PSN_MASK) << 8) >> 8;
		last = e->npkts == c->q_rd1;
		len_ok = c->q_atomic ? !c->q_plen : last ? c->q_po == e->len : c->q_plen == mtu;
		n->j_exp = (e->first_psn + c->q_r.rd_off) & RNIC_PSN_MASK;
		n->j_left = e->npkts - c->q_rd1;
		n->j_off = c->q_off;
		n->j_rem = e->len - c->q_off;
	} else {
		d = c->j_d;
		last = !c->j_left;
		len_ok = c->q_atomic ? !c->q_plen : c->q_plen == (last ? c->j_rem : mtu);
	}
	if (r.rd_head == r.rd_tail || d < 0 || c->q_atomic != (e->kind != RNIC_WQE_OP_RDMA_READ)) {
		m->verdict = RX_RDA_DROP; /* unexpected or duplicate */
		return;
	}
	if (d > 0) {
		m->verdict = r.rd_done & RD_NAK ? RX_RDA_DROP : RX_RDA_GAP;
		m->exp = c->q_miss ? (e->first_psn + c->q_r.rd_off) & RNIC_PSN_MASK : c->j_exp;
		r.rd_done |= RD_NAK;
		n->q_r = r;
		st->row[c->q_qpn] = r;
		return;
	}
	if (!len_ok) {
		m->verdict = RX_RDA_MALFORMED;
		return;
	}
	m->verdict = RX_RDA_OK;
	m->last = (uint8_t)last;
	m->off = c->q_miss ? c->q_off : c->j_off;
	m->nsge = e->nsge;
	for (k = 0; k < RNIC_MAX_SGE; k++)
		m->sge[k] = e->sge[k];
	r.rd_done &= ~RD_NAK;
	if (last) {
		/* answered: its entry goes back to the pool, and the next is the head (its entry in
		 * the block read with this one's; the next response reads it) */
		give(st, c, &r, r.pe);
		r.pe = c->q_b.e[(uint8_t)(r.rd_head + 1) % RX_RDX];
		r.rd_head++;
		r.rd_off = 0;
		r.rd_done = (c->q_psn & RNIC_PSN_MASK) | RD_DONE_OK;
		n->c_on = 0;
	} else {
		/* each response placed is progress: a READ asked again resumes after it */
		r.rd_off++;
		n->j_exp = c->q_miss ? (e->first_psn + c->q_rd1) & RNIC_PSN_MASK : (c->j_exp + 1) & RNIC_PSN_MASK;
		n->j_left = c->q_miss ? e->npkts - c->q_rd2 : c->j_left - 1;
		n->j_off = c->q_miss ? c->q_offn : c->j_off + mtu;
		n->j_rem = c->q_miss ? e->len - c->q_offn : c->j_rem - mtu;
	}
	n->q_r = r;
	st->row[c->q_qpn] = r;
}

/* The frame at the head of frameq on to rx_core unjudged, when judgedq has room */
static void pass_on(rnic_rx_frameq_t *frames, rnic_rx_judgedq_t *out)
{
	rx_judged_t *o = rnic_rx_judgedq_slot(out);

	if (!rnic_rx_judgedq_room(out))
		return;
	o->f = *rnic_rx_frameq_head(frames);
	o->judged = 0;
	rnic_rx_judgedq_push(out, NULL);
	rnic_rx_frameq_pop(frames);
}

/* The frame at the head of frameq: on to rx_core, or held to be judged (not while the other lane
 * works on its QP or begins on it: it changes the QP's row). A response of the QP the last one was
 * about has its distance from the expected PSN made now, and is judged next clock. */
static void q_begin(rx_rdq_t *st, const rx_rdreg_t *c, rnic_rx_frameq_t *frames, rnic_rx_judgedq_t *out)
{
	rx_rdreg_t *n = &st->g;
	const rx_ctxf_t *f;
	uint32_t qpn;

	if (!rnic_rx_frameq_count(frames))
		return;
	f = rnic_rx_frameq_head(frames);
	qpn = f->f.v.qpn % RNIC_MAX_QP;
	if (!to_judge(f)) {
		pass_on(frames, out);
		return;
	}
	/* the other lane on this QP, or beginning on it (an expect or reset: e_nqpn), or on a QP
	 * not known yet (a reclaim's, read as it begins) */
	if (c->e_step != RDQ_BEGIN ? c->e_qpn == qpn :
	    ((c->x_on || c->rs_on) && c->e_nqpn == qpn) || (!c->x_on && !c->rs_on && c->rcl_head != c->rcl_tail))
		return;
	st->q_f = *f;
	n->q_qpn = (uint16_t)qpn;
	n->q_psn = f->f.v.psn;
	n->q_plen = f->f.v.plen;
	n->q_atomic = f->f.v.op == RNIC_BTH_OP_ATOMIC_ACK;
	n->q_sh = (uint8_t)rnic_mtu_shift(RNIC_GET(RNIC_QPC_CTRL_PMTU, f->l.ctrl));
	rnic_rx_frameq_pop(frames);
	if (c->c_on && c->q_qpn == qpn) {
		n->j_d = rnic_psn_diff(f->f.v.psn, c->j_exp);
		n->q_miss = 0;
		n->q_step = Q_JUDGE;
		return;
	}
	n->c_on = 0;
	n->q_miss = 1;
	n->q_step = Q_ROW;
}

static void q_step(rx_rdq_t *st, const rx_rdreg_t *c, rnic_rx_judgedq_t *out)
{
	rx_rdreg_t *n = &st->g;

	switch (c->q_step) {
	case Q_ROW:
		n->q_r = st->row[c->q_qpn];
		n->q_step = Q_ENTRY;
		break;
	case Q_ENTRY:
		/* nothing expected: judged (dropped) without its entry and block, which may be another
		 * QP's now */
		if (c->q_r.rd_head != c->q_r.rd_tail) {
			n->q_e = st->rdp[c->q_r.pe % RX_RDP];
			n->q_b = st->rdb[c->q_r.blk % RX_RDP];
		}
		n->q_pr = c->q_psn - c->q_r.rd_off;
		n->q_rd1 = c->q_r.rd_off + 1;
		n->q_rd2 = c->q_r.rd_off + 2;
		n->q_off = c->q_r.rd_off << c->q_sh;
		n->q_offn = (c->q_r.rd_off + 1) << c->q_sh;
		n->q_po = c->q_plen + (c->q_r.rd_off << c->q_sh);
		n->q_step = Q_JUDGE;
		break;
	default: /* Q_JUDGE */
		if (rnic_rx_judgedq_room(out))
			judge(st, c, out);
		break;
	}
}

/* ---- the other lane: expects, resets, reclaims */

/* An expect (x), once its row and block are read: a slot of its own, or the one it had when it is
 * sent again after a go-back-N (it replaces the entry there and everything after it) */
static void find(rx_rdq_t *st, const rx_rdreg_t *c, rnic_rx_rdntcq_t *ntcs)
{
	rx_rdreg_t *n = &st->g;
	rx_rdrow_t r = c->e_r;
	uint32_t i, found = 0, k = (uint8_t)(r.rd_tail - r.rd_head); /* k: its place after the head */

	for (i = 0; i < RX_RDX; i++) {
		if (!found && i < (uint8_t)(c->e_r.rd_tail - c->e_r.rd_head) &&
		    c->e_b.psn[(uint8_t)(r.rd_head + i) % RX_RDX] == c->x_e.first_psn) {
			k = i;
			found = 1;
		}
	}
	n->e_step = RDQ_BEGIN;
	/* sent again by a go-back-N that crossed our notice that it was answered: the notice is
	 * repeated (the first may have reached the TX kernel before the WQE was fetched again);
	 * expecting its response a second time could stall the QP */
	if (!found && c->x_done && rnic_rx_rdntcq_room(ntcs)) {
		rx_rdntc_t *m = rnic_rx_rdntcq_slot(ntcs);

		m->qpn = c->e_qpn;
		m->psn = c->x_last;
		rnic_rx_rdntcq_push(ntcs, NULL);
		return;
	}
	if (!k && !found) /* nothing expected: a new head */
		r.rd_off = 0;
	r.rd_tail = (uint8_t)(r.rd_head + k);
	n->e_r = r;
	if (k >= RX_RDX) {
		st->row[c->e_qpn] = r;
		return;
	}
	n->e_slot = (uint8_t)(r.rd_head + k) % RX_RDX;
	n->e_reuse = k < r.rd_n;
	n->e_step = RDQ_PUT;
}

/* ... and its writes: the slot's entry (the one it had, else one from the pool, which
 * rdx_ready said has one, and with the QP's first entry a block) */
static void put(rx_rdq_t *st, const rx_rdreg_t *c)
{
	rx_rdreg_t *n = &st->g;
	rx_rdrow_t r = c->e_r;
	rx_rdb_t b = c->e_b;
	uint32_t pe = b.e[c->e_slot % RX_RDX];

	if (!c->e_reuse) {
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
	b.psn[c->e_slot % RX_RDX] = c->x_e.first_psn;
	b.e[c->e_slot % RX_RDX] = (uint16_t)pe;
	if (c->e_slot == r.rd_head % RX_RDX) /* it is the head: the response lane reads it from the row */
		r.pe = (uint16_t)pe;
	st->rdb[r.blk % RX_RDP] = b;
	st->rdp[pe % RX_RDP] = c->x_e;
	r.rd_tail++;
	st->row[c->e_qpn] = r;
	n->e_step = RDQ_BEGIN;
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
	rx_rdrow_t r = c->e_r;

	r.rd_tail = r.rd_head;
	r.rd_off = r.rd_done = 0;
	if (r.rd_n && !c->e_r_in) {
		st->rcl_in[c->e_qpn] = 1;
		st->rcl[c->rcl_tail % RNIC_MAX_QP] = c->e_qpn;
		st->g.rcl_tail = c->rcl_tail + 1;
	}
	st->row[c->e_qpn] = r;
	st->g.e_step = RDQ_BEGIN;
}

/* One entry of the QP at the head of the reclaim queue back to the pool: those its slots hold
 * beyond what it expects (all of them after a reset; a reused QP keeps what it expects). */
static void reclaim(rx_rdq_t *st, const rx_rdreg_t *c)
{
	rx_rdrow_t r = c->e_r;

	if (c->e_give)
		give(st, c, &r, c->e_b.e[c->e_slot % RX_RDX]);
	if (r.rd_n == (uint8_t)(r.rd_tail - r.rd_head)) {
		st->rcl_in[c->e_qpn] = 0;
		st->g.rcl_head = c->rcl_head + 1;
	}
	st->row[c->e_qpn] = r;
	st->g.e_step = RDQ_BEGIN;
}

/* QP qpn's row read (before the response lane's write of this clock: this lane goes first),
 * and 1 if it may be used; a row that lane is working on is read again next clock, and one it
 * kept in its registers is forgotten there. */
static int e_row(rx_rdq_t *st, const rx_rdreg_t *c, uint32_t qpn)
{
	rx_rdreg_t *n = &st->g;

	n->e_r = st->row[qpn];
	n->e_r_in = st->rcl_in[qpn];
	if (c->q_step != Q_BEGIN && c->q_qpn == qpn)
		return 0;
	if (c->q_qpn == qpn)
		n->c_on = 0;
	return 1;
}

/* The next operation: an expect, a reset (their QP's row read now, and again next clock when the
 * response lane is on it), a reclaim (its row read next clock). */
static void e_begin(rx_rdq_t *st, const rx_rdreg_t *c)
{
	rx_rdreg_t *n = &st->g;
	uint32_t qpn = c->e_nqpn;

	if (c->x_on || c->rs_on) {
		n->e_op = c->x_on ? RDQ_EXPECT : RDQ_RESET_QP;
		n->e_qpn = (uint16_t)qpn;
		n->rs_on = c->x_on && c->rs_on;
		n->e_step = e_row(st, c, qpn) ? (c->x_on ? RDQ_BLOCK : RDQ_RESET) : RDQ_ROW;
		return;
	}
	if (c->rcl_head != c->rcl_tail) {
		n->e_op = RDQ_RECLAIM;
		n->e_qpn = st->rcl[c->rcl_head % RNIC_MAX_QP];
		n->e_step = RDQ_ROW;
	}
}

/* The steps after: each one's reads at registered addresses, their data used in the next. Its
 * row is read once the response lane is not on its QP, and makes that lane forget what it
 * kept of it; a reclaim gives back when that lane is between responses (both give to the rings). */
static void e_step(rx_rdq_t *st, const rx_rdreg_t *c, rnic_rx_rdntcq_t *ntcs)
{
	rx_rdreg_t *n = &st->g;

	switch (c->e_step) {
	case RDQ_ROW:
		if (e_row(st, c, c->e_qpn))
			n->e_step = c->e_op == RDQ_EXPECT ? RDQ_BLOCK : c->e_op == RDQ_RESET_QP ? RDQ_RESET : RDQ_SLOT;
		break;
	case RDQ_BLOCK:
		n->e_b = st->rdb[c->e_r.blk % RX_RDP];
		n->f_pe = (uint16_t)(c->rd_fresh < RX_RDP ? c->rd_fresh : st->rdf[c->rdf_head % RX_RDP]);
		n->f_blk = (uint16_t)(c->rb_fresh < RX_RDP ? c->rb_fresh : st->rbf[c->rbf_head % RX_RDP]);
		entry_of(&n->x_e, &st->x);
		n->x_last = (st->x.first_psn + st->x.npkts - 1) & RNIC_PSN_MASK;
		n->x_done = (c->e_r.rd_done & RD_DONE_OK) &&
			    rnic_psn_diff(st->x.first_psn + st->x.npkts - 1, c->e_r.rd_done & RNIC_PSN_MASK) <= 0;
		n->x_on = 0; /* what the expect writes is in x_e now: the next one may come */
		n->e_step = RDQ_FIND;
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
		n->e_give = c->e_r.rd_n > (uint8_t)(c->e_r.rd_tail - c->e_r.rd_head);
		n->e_slot = (uint8_t)(c->e_r.rd_head + c->e_r.rd_n - 1) % RX_RDX;
		n->e_step = RDQ_LAST;
		break;
	case RDQ_LAST:
		n->e_b = st->rdb[c->e_r.blk % RX_RDP];
		n->e_step = RDQ_GIVE;
		break;
	default: /* RDQ_GIVE */
		if (c->q_step == Q_BEGIN)
			reclaim(st, c);
		break;
	}
}

void rx_rdq(rx_rdq_t *st, const rnic_rx_in_t *in, rnic_rx_frameq_t *frames, rnic_rx_judgedq_t *out,
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
		n->q_step = Q_BEGIN;
		n->e_step = RDQ_BEGIN;
		return;
	}
	if (st->sweep < RNIC_MAX_QP) {
		/* after a reset, a row a clock (rx_core sweeps as long, and drops the frames that come
		 * meanwhile: they go on unjudged) */
		st->row[st->sweep % RNIC_MAX_QP] = (rx_rdrow_t){0};
		st->rcl_in[st->sweep % RNIC_MAX_QP] = 0;
		st->sweep++;
		n->rdx_ready = st->sweep == RNIC_MAX_QP;
		if (rnic_rx_frameq_count(frames))
			pass_on(frames, out);
		return;
	}
	if (c.e_step == RDQ_BEGIN)
		e_begin(st, &c);
	else
		e_step(st, &c, ntcs);
	if (c.q_step == Q_BEGIN)
		q_begin(st, &c, frames, out);
	else
		q_step(st, &c, out);
	/* a context's commit (word 0, written last) that resets its QP: to do */
	w = rnic_qpc_word(in->cfg_addr, &idx);
	if (in->cfg_valid && w == 0 &&
	    (!RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl) || RNIC_GET(RNIC_QPC_CTRL_STATE, ctrl) == RNIC_QPS_RESET)) {
		n->rs_on = 1;
		n->rs_qpn = (uint16_t)idx;
	}
	if (in->rdx_valid && c.rdx_ready) {
		st->x = in->rdx;
		n->x_on = 1;
	}
	/* the QP the next expect or reset is of, a register for its row's read */
	n->e_nqpn = (uint16_t)(n->x_on ? st->x.qpn % RNIC_MAX_QP : n->rs_qpn);
	/* one more expect when none is held nor a reset waits (the reset goes after it), and the pool
	 * had two free entries as the clock began (an expect ending in it may take one) */
	n->rdx_ready = !n->x_on && !n->rs_on && RX_RDP - c.rd_fresh + (c.rdf_tail - c.rdf_head) > 1;
}

void rx_rdq_out(const rx_rdq_t *st, rnic_rx_out_t *out)
{
	out->rdx_ready = st->g.rdx_ready;
}
