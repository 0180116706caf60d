/* RX kernel, the QPC cache in front of context memory (rx_ctx.h; docs/ARCHITECTURE.md "Context
 * memory"): takes each frame come in whole from the store (arriveq) and hands it on in order,
 * numbered, with the fields of its QP's context that its frames are checked and placed with
 * (rx_qcl_t): a response to one of our requests to rx_rdq (frameq), any other frame to rx_core
 * (passq).
 *
 * 4,096 lines of one context each, direct-mapped: the line of QPN q is q mod 4,096, its tag q and
 * a valid bit. Lines change in the order frames reach the head, so what a line will hold when a
 * frame gets there is known as the frame comes in: tagf is the tag each line will have once the
 * frames before are through. A frame's QP is looked up there as it comes (c1, c2). Found, its
 * context will be in the line (a hit at the head). Not found, this QP is the line's next owner:
 * its context is read from ICM into the frame's own slot (stg) while the frames before it go,
 * and at the head the frame takes it from there and writes it into the line. So a context read
 * ahead is never put out by another QP's before its frame uses it. A frame that finds its line
 * not as foretold (a commit took it, a frame before it went without its context) reads it at
 * the head. The reads go out on the read channel, rx_rdport (ctxreqq) and their beats come back
 * (ctxrspq) in the order asked.
 *
 * Commits: the firmware writes a context word by word, word 0 last; at word 0 the line of its QP
 * takes it whole, and the commit generation (gen) counts on. A read asked for before a commit is
 * stale when it comes back (dropped: the frame reads again at the head), and so is a context read
 * ahead before one (the frame takes the line, or reads again). A frame handed over with a context
 * from before a commit of its QP is dispatched after it: rx_core checks the QP's state it keeps
 * itself (commit_qp), so a frame never revives a QP reset or destroyed.
 *
 * II=1, latency 2: a frame's line, tag, slot and entry are read in the clock after it comes (e),
 * with registered addresses (block RAM gives its data a clock later), and it is handed over in the
 * next (d) with the context it found; a frame every two clocks. A frame that waits (its read on
 * its way, a commit since its reads, frameq full) reads again every other clock.
 * Memories: line (4,096 x 272 bits, URAM: the head's read, or its write of a slot's context; a
 * commit's write), tag (the head's read or write; a commit's or the sweep's write), tagf (c1's
 * read; c2's or the sweep's write), stg (128 x 272 bits: a fill's write, the head's read), frames
 * (128 entries: the arrival's write, the head's read), fl (the reads on their way: the request's
 * write, the first beat's read). The slots' flags and QPNs, the queue of reads to ask for (pq)
 * and the chunks of context memory are registers. Recurrence: the head's state (its frame number
 * and the decision over its flags). Feed-forward: a fill's 23 words into a line's fields. */
#include "rx_ctx.h"

_Static_assert(RNIC_MAX_QP <= 0x8000, "a tag holds the QPN in 15 bits");
_Static_assert(RX_QC_LINES <= RNIC_MAX_QP, "the sweep is over before rx_core's: a fence finds both done");
_Static_assert(RX_MAX_FRAMES == 128, "frame numbers compare in 8 bits: the store holds at most 128");

/* frame fr (8 bits of its number) is in [a, b) of the queue (b - a <= RX_MAX_FRAMES) */
static inline uint32_t among(uint32_t fr, uint32_t a, uint32_t b)
{
	return (uint8_t)(fr - a) < (uint8_t)(b - a);
}

/* where QP qpn's context is in context memory (0: not given) */
static inline uint64_t ctx_bus(const rx_ctx_t *st, uint32_t qpn)
{
	uint32_t off = RNIC_ICM_QPC_OFF + qpn * RNIC_ICM_QPC_STRIDE;
	uint64_t c = st->chunk[(off >> RNIC_ICM_CHUNK_LOG) % RX_QC_CHUNKS];

	return c ? c | (off & ((1u << RNIC_ICM_CHUNK_LOG) - 1)) : 0; /* chunks are aligned to their size */
}

/* A configuration write: a context word (word 0 commits it: into its line next clock), or a
 * chunk of context memory */
static void configure(rx_ctx_t *st, uint32_t addr, uint32_t data)
{
	uint32_t idx;
	int w = rnic_qpc_word(addr, &idx);

	if (rnic_icm_chunks(st->chunk, RX_QC_CHUNKS, addr, data) || w < 0)
		return;
	rx_qcl_cfg(&st->stage, (uint32_t)w, data);
	if (w)
		return;
	st->cm_on = 1;
	st->cm_qpn = (uint16_t)idx;
}

/* A beat of a context read: the first waits in registers; the last writes the slot of its frame,
 * if the frame still waits for it and no commit came since it was asked for. */
static void fill(rx_ctx_t *st, const rnic_rx_in_t *in, const rx_ctxrsp_t *r, uint8_t gen0, uint8_t pend,
		 uint32_t head0)
{
	uint32_t k, s = st->fl_cur.fr % RX_MAX_FRAMES;
	rx_qcl_t l = st->fill;

	if (!r->last) {
		for (k = 0; k < RNIC_BEAT / 4; k++)
			rx_qcl_cfg(&st->fill, k, (uint32_t)rnic_rd_le(r->data + 4 * k, 4));
		st->fill_err = r->err;
		return;
	}
	st->fl_head++;
	st->stat_miss_cycles += (uint32_t)in->cycle - st->fl_cur.t0;
	if (!among(st->fl_cur.fr, head0, st->tail) || !pend)
		return; /* its frame is gone (another read of it came first) */
	st->s_pend[s] = 0;
	if (st->fl_cur.gen != gen0)
		return; /* a commit came since it was asked for: the frame reads again at the head */
	if (st->fill_err || r->err) {
		st->s_bad[s] = 1; /* refused by the host: its frame is dropped (a retry reads again) */
		return;
	}
	for (k = RNIC_BEAT / 4; k < RNIC_QPC_WORDS; k++)
		rx_qcl_cfg(&l, k, (uint32_t)rnic_rd_le(r->data + 4 * (k - RNIC_BEAT / 4), 4));
	st->stg[s] = l;
	st->s_ready[s] = 1;
	st->s_sgen[s] = gen0;
}

/* The head's data (d): hand the frame over with its context, or wait for it (read again next
 * clock but one). 1 if it was handed over. */
static uint32_t decide(rx_ctx_t *st, const rnic_rx_in_t *in, rnic_rx_frameq_t *fq, rnic_rx_passq_t *pq, uint8_t gen0,
		       uint8_t h0)
{
	uint32_t line = st->d_qpn % RX_QC_LINES, ctx = RX_CTX_NONE, stg = 0, rdq = rx_to_rdq(&st->d_f);
	rx_ctxf_t *o;

	if (st->d_cand && st->d_gen != gen0)
		return 0; /* a commit since its reads: read again */
	if (!st->d_cand) {
		ctx = RX_CTX_NONE;
	} else if (st->d_bad) {
		ctx = RX_CTX_GONE;
	} else if (st->d_sok) {
		ctx = RX_CTX_OK;
		stg = 1;
	} else if (st->d_tag == (RX_QC_VALID | st->d_qpn)) {
		ctx = RX_CTX_OK;
	} else if (st->d_pend || !st->d_known || h0) {
		if (!st->d_wait)
			st->d_wait0 = (uint32_t)in->cycle;
		st->d_wait = 1;
		return 0; /* its read is on its way, or to be asked for */
	} else if (!st->d_mapped) {
		ctx = RX_CTX_GONE; /* no context memory: nothing to read */
	} else {
		st->h_on = 1;
		st->h_fr = st->d_fr;
		st->h_qpn = st->d_qpn;
		st->s_pend[st->d_fr % RX_MAX_FRAMES] = 1;
		if (!st->d_wait)
			st->d_wait0 = (uint32_t)in->cycle;
		st->d_wait = 1;
		return 0;
	}
	if (rdq ? !rnic_rx_frameq_room(fq) : !rnic_rx_passq_room(pq))
		return 0;
	o = rdq ? rnic_rx_frameq_slot(fq) : rnic_rx_passq_slot(pq);
	o->f = st->d_f;
	o->ctx = (uint8_t)ctx;
	o->seq = st->seq++;
	o->l = stg ? st->d_stg : st->d_line;
	if (rdq)
		rnic_rx_frameq_push(fq, NULL);
	else
		rnic_rx_passq_push(pq, NULL);
	if (stg && !(st->cm_on && st->cm_qpn % RX_QC_LINES == line)) { /* else the commit's write wins */
		st->line[line] = st->d_stg;
		st->tag[line] = (uint16_t)(RX_QC_VALID | st->d_qpn);
	}
	st->stat_hits += ctx == RX_CTX_OK && !stg && !st->d_wait;
	if (st->d_wait)
		st->stat_wait_cycles += (uint32_t)in->cycle - st->d_wait0;
	st->d_wait = 0;
	st->head++;
	return 1;
}

/* c2: what the line of the frame's QP will hold when the frame is at the head. Its QP: a hit
 * foretold. Another: this QP takes the line, its context is to be read into the frame's slot. */
static void look_ahead(rx_ctx_t *st)
{
	uint32_t q = st->c2_qpn, line = q % RX_QC_LINES;
	uint16_t tag = st->cw_on && st->cw_line == line ? st->cw_tag : st->c2_tag;

	st->cw_on = 0;
	st->known++;
	if (!st->c2_cand || tag == (RX_QC_VALID | q))
		return;
	st->stat_evictions += (tag & RX_QC_VALID) != 0;
	st->tagf[line] = (uint16_t)(RX_QC_VALID | q);
	st->cw_on = 1;
	st->cw_line = (uint16_t)line;
	st->cw_tag = (uint16_t)(RX_QC_VALID | q);
	if (st->pq_tail - st->pq_head >= RX_MAX_FRAMES)
		return; /* frames gone before their reads were asked for still queued: read at the head */
	st->s_pend[st->c2_fr % RX_MAX_FRAMES] = 1;
	st->pq[st->pq_tail % RX_MAX_FRAMES] = (rx_ctxpf_t){st->c2_fr, (uint16_t)q};
	st->pq_tail++;
}

/* One context read asked of rx_core: the head's first, else the next read ahead (p), if its frame
 * still waits for it */
static void ask(rx_ctx_t *st, const rnic_rx_in_t *in, rnic_rx_ctxreqq_t *reqs, uint8_t gen0, uint8_t p_pend)
{
	uint32_t fr, qpn;

	if (!rnic_rx_ctxreqq_room(reqs) || st->fl_tail - st->fl_head >= RX_QC_READS)
		return;
	if (st->h_on) {
		fr = st->h_fr;
		qpn = st->h_qpn;
		st->h_on = 0;
	} else if (st->p_on) {
		st->p_on = 0;
		if (!among(st->p.fr, st->head, st->tail) || !p_pend)
			return;
		if (!ctx_bus(st, st->p.qpn)) {
			st->s_pend[st->p.fr % RX_MAX_FRAMES] = 0; /* nothing to read: dropped at the head */
			return;
		}
		fr = st->p.fr;
		qpn = st->p.qpn;
	} else {
		return;
	}
	rnic_rx_ctxreqq_slot(reqs)->bus = ctx_bus(st, qpn);
	rnic_rx_ctxreqq_push(reqs, NULL);
	st->fl[st->fl_tail % RX_QC_READS] = (rx_ctxrd_t){(uint8_t)fr, gen0, (uint32_t)in->cycle};
	st->fl_tail++;
	st->stat_misses++;
}

/* A frame come in whole: into its slot, its QP's line looked up next clock (c1) if it is RoCEv2
 * for one of our QPs with a good ICRC (the GSI QP's number is no entry's), its request's key to
 * rx_core's look-ahead */
static void arrive(rx_ctx_t *st, const rx_arrival_t *a, rnic_rx_hintq_t *hints)
{
	const rx_verdict_t *v = &a->f.v;
	uint32_t s = st->tail % RX_MAX_FRAMES;
	uint32_t cand = st->sweep >= RX_QC_LINES && a->f.icrc_ok && v->cls == RX_ROCE && v->qpn < RNIC_MAX_QP;

	st->frames[s] = a->f;
	st->s_qpn[s] = (uint16_t)(v->qpn % RNIC_MAX_QP);
	st->s_cand[s] = (uint8_t)cand;
	st->s_pend[s] = st->s_ready[s] = st->s_bad[s] = 0;
	st->c1_on = 1;
	st->c1_cand = (uint8_t)cand;
	st->c1_fr = (uint8_t)st->tail;
	st->c1_qpn = (uint16_t)(v->qpn % RNIC_MAX_QP);
	if (!st->e_on && !st->d_on && st->head == st->tail) {
		st->e_on = 1; /* the head, idle: its reads next clock */
		st->e_fr = st->c1_fr;
		st->e_qpn = st->c1_qpn;
		st->e_cand = (uint8_t)cand;
	}
	if (cand && a->req && a->f.beats > 1 && rnic_rx_hintq_room(hints)) {
		rx_hint_t *h = rnic_rx_hintq_slot(hints);

		h->key = a->key;
		h->va = a->va;
		h->xl = v->op != RNIC_BTH_OP_READ_REQ;
		rnic_rx_hintq_push(hints, NULL);
	}
	st->tail++;
}

static void reset(rx_ctx_t *st)
{
	uint32_t k;

	st->head = st->tail = st->known = st->seq = 0;
	st->c1_on = st->c2_on = st->cw_on = st->p_on = st->h_on = st->e_on = st->d_on = st->d_wait = st->cm_on = 0;
	st->pq_head = st->pq_tail = st->fl_head = st->fl_tail = 0;
	for (k = 0; k < RX_QC_CHUNKS; k++)
		st->chunk[k] = 0; /* no context memory read before the firmware gives it again */
	st->sweep = 0;
	st->stat_hits = st->stat_misses = st->stat_evictions = st->stat_miss_cycles = st->stat_wait_cycles = 0;
}

void rx_ctx(rx_ctx_t *st, const rnic_rx_in_t *in, rnic_rx_arriveq_t *arrivals, rnic_rx_frameq_t *fq,
	    rnic_rx_passq_t *pq, rnic_rx_hintq_t *hints, rnic_rx_ctxreqq_t *reqs, rnic_rx_ctxrspq_t *rsps)
{
#pragma HLS PIPELINE II = 1
	uint32_t next, es = st->e_fr % RX_MAX_FRAMES, eline = st->e_qpn % RX_QC_LINES, fwd = 0;
	uint8_t gen0 = st->gen, fpend = st->s_pend[st->fl_cur.fr % RX_MAX_FRAMES];
	uint8_t ppend = st->s_pend[st->p.fr % RX_MAX_FRAMES];
	uint8_t e_sok = st->s_ready[es] && st->s_sgen[es] == gen0, e_bad = st->s_bad[es], e_pend = st->s_pend[es];
	uint8_t h0 = st->h_on;
	uint32_t fh = st->fl_head, head0 = st->head;
	uint16_t c_tag;

	if (in->rst) {
		reset(st);
		return;
	}
	/* block RAM is read before this clock's writes: it answers with what it held */
	c_tag = st->tagf[st->c1_qpn % RX_QC_LINES];
	ask(st, in, reqs, gen0, ppend); /* what was to be asked for as the clock began */
	/* the head: decided (d), its reads made (e -> d), the next frame's to make (e) */
	if (st->d_on)
		fwd = decide(st, in, fq, pq, gen0, h0);
	if (st->d_on && !fwd) {
		st->e_on = 1; /* read again */
		st->e_fr = st->d_fr;
		st->e_qpn = st->d_qpn;
		st->e_cand = st->d_cand;
		st->d_on = 0;
	} else if (st->e_on) {
		/* at addresses registered last clock, into registers */
		st->d_tag = st->tag[eline];
		st->d_line = st->line[eline];
		st->d_stg = st->stg[es];
		st->d_f = st->frames[es];
		st->d_sok = e_sok;
		st->d_bad = e_bad;
		st->d_pend = e_pend;
		st->d_on = 1;
		st->d_fr = st->e_fr;
		st->d_qpn = st->e_qpn;
		st->d_cand = st->e_cand;
		st->d_gen = gen0;
		st->d_known = among(st->e_fr, st->known - RX_MAX_FRAMES, st->known);
		st->d_mapped = ctx_bus(st, st->e_qpn) != 0;
		st->e_on = 0;
	} else {
		st->d_on = 0;
		next = st->head;
		if (next != st->tail) {
			st->e_on = 1;
			st->e_fr = (uint8_t)next;
			st->e_qpn = st->s_qpn[next % RX_MAX_FRAMES];
			st->e_cand = st->s_cand[next % RX_MAX_FRAMES];
		}
	}
	if (rnic_rx_ctxrspq_count(rsps)) {
		fill(st, in, rnic_rx_ctxrspq_head(rsps), gen0, fpend, head0);
		if (!rnic_rx_ctxrspq_head(rsps)->last)
			st->fl_cur = st->fl[fh % RX_QC_READS]; /* its read, for the last beat */
		rnic_rx_ctxrspq_pop(rsps);
	}
	if (st->cm_on) {
		/* a commit: its line takes the context whole; what was read before is stale (gen) */
		st->line[st->cm_qpn % RX_QC_LINES] = st->stage;
		st->tag[st->cm_qpn % RX_QC_LINES] = (uint16_t)(RX_QC_VALID | st->cm_qpn);
		st->gen++;
	}
	st->cm_on = 0;
	if (st->sweep < RX_QC_LINES) {
		st->tag[st->sweep % RX_QC_LINES] = st->tagf[st->sweep % RX_QC_LINES] = 0;
		st->sweep++;
	} else if (in->cfg_valid) {
		configure(st, in->cfg_addr, in->cfg_data);
	}
	/* the look-ahead: decided (c2), its tag read (c1 -> c2) */
	if (st->c2_on)
		look_ahead(st);
	else
		st->cw_on = 0;
	st->c2_on = st->c1_on;
	st->c2_cand = st->c1_cand;
	st->c2_fr = st->c1_fr;
	st->c2_qpn = st->c1_qpn;
	st->c2_tag = c_tag;
	st->c1_on = 0;
	if (!st->p_on && st->pq_head != st->pq_tail) {
		st->p = st->pq[st->pq_head % RX_MAX_FRAMES];
		st->pq_head++;
		st->p_on = 1;
	}
	/* taken in every clock (the store cannot wait) */
	if (rnic_rx_arriveq_count(arrivals)) {
		arrive(st, rnic_rx_arriveq_head(arrivals), hints);
		rnic_rx_arriveq_pop(arrivals);
	}
}

void rx_ctx_out(const rx_ctx_t *st, rnic_rx_out_t *out)
{
	out->stat_qpc_hits = st->stat_hits;
	out->stat_qpc_misses = st->stat_misses;
	out->stat_qpc_evictions = st->stat_evictions;
	out->stat_qpc_miss_cycles = st->stat_miss_cycles;
	out->stat_qpc_wait_cycles = st->stat_wait_cycles;
}
