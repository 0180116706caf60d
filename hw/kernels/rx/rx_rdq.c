/* RX kernel: the requester's READ/atomic requests awaiting their responses (rx.h rx_rdq_t).
 *
 * What a QP expects is kept in PSN order in slots of a block (rdb): each slot the request's first
 * PSN and its entry in the pool rdp, which holds where the responses go. Blocks are shared by
 * all QPs: a QP takes one with its first entry and gives it back with its last, so that a QP
 * with nothing outstanding holds only its row of rdq. A QP holding a block holds an entry, and
 * there are as many blocks as entries: a block is there whenever an entry is.
 *
 * Memories: rdq (a row a QP), rdb (RX_RDP blocks of RX_RDX slots) and rdp (RX_RDP entries): one
 * of an expect, a response's dispatch or a reclaim a clock reads and writes one row of each
 * (rdq_busy); rdf and rbf, the rings of free entries and blocks (one taken and one given back a
 * clock at most). II 1. */
#include "rx_int.h"

/* A QP's first entry takes a block (rx_rdp_free said an entry, so a block, is free) */
static void rdb_take(rx_core_t *st, rx_rdq_t *q)
{
	if (!q->rd_n)
		q->blk = (uint16_t)(st->rb_fresh < RX_RDP ? st->rb_fresh++ : st->rbf[st->rbf_head++ % RX_RDP]);
}

/* An entry of QP q's goes back to the pool: its last gives its block back too */
void rx_rdp_give(rx_core_t *st, rx_rdq_t *q, uint32_t pe)
{
	st->rdf[st->rdf_tail++ % RX_RDP] = (uint16_t)pe;
	if (!--q->rd_n)
		st->rbf[st->rbf_tail++ % RX_RDP] = q->blk;
}

/* The TX kernel sent a READ/atomic: remember where its responses go. Sent again after a
 * go-back-N, it replaces the entry it had and everything after it. */
void rx_expect(rx_core_t *st, const rnic_rdx_t *x)
{
	rx_rdq_t *q = &st->rdq[x->qpn % RNIC_MAX_QP];
	rx_rdb_t *b = &st->rdb[q->blk];
	rx_rdx_t e;
	uint32_t i, k, found = 0, n = (uint8_t)(q->rd_tail - q->rd_head), slot, pe;

	st->rdq_busy = 1;
	for (i = 0; i < RX_RDX; i++) {
		if (!found && i < n && b->psn[(uint8_t)(q->rd_head + i) % RX_RDX] == x->first_psn) {
			q->rd_tail = (uint8_t)(q->rd_head + i);
			found = 1;
		}
	}
	/* sent again by a go-back-N that crossed our notice that it was answered: the notice is
	 * repeated (the first may have reached the TX kernel before the WQE was fetched again);
	 * expecting its response a second time could stall the QP */
	if (!found && q->rd_done_ok && rnic_psn_diff(x->first_psn + x->npkts - 1, q->rd_done) <= 0 &&
	    !st->renotify) {
		st->renotify = 1;
		st->re_qpn = x->qpn % RNIC_MAX_QP;
		st->re_psn = (x->first_psn + x->npkts - 1) & RNIC_PSN_MASK;
		return;
	}
	if (q->rd_head == q->rd_tail && !found)
		q->rd_off = 0;
	if ((uint8_t)(q->rd_tail - q->rd_head) >= RX_RDX)
		return;
	/* the slot's entry if it still has one, else one from the pool (rdx_ready said one is free) */
	slot = q->rd_tail % RX_RDX;
	if ((uint8_t)(q->rd_tail - q->rd_head) < q->rd_n) {
		pe = b->e[slot];
	} else {
		rdb_take(st, q);
		b = &st->rdb[q->blk];
		pe = st->rd_fresh < RX_RDP ? st->rd_fresh++ : st->rdf[st->rdf_head++ % RX_RDP];
		b->e[slot] = (uint16_t)pe;
		q->rd_n++;
	}
	b->psn[slot] = x->first_psn;
	e = (rx_rdx_t){0};
	e.first_psn = x->first_psn;
	e.npkts = x->npkts;
	e.kind = x->kind;
	e.nsge = x->nsge;
	for (k = 0; k < RNIC_MAX_SGE; k++) {
		e.sge[k].addr = rnic_rd_le(x->sge + k * 16, 8);
		e.sge[k].len = (uint32_t)rnic_rd_le(x->sge + k * 16 + 8, 4);
		e.sge[k].key = (uint32_t)rnic_rd_le(x->sge + k * 16 + 12, 4);
		e.sge[k].access = RNIC_ACCESS_LOCAL_WRITE;
		if (k < x->nsge)
			e.len += e.sge[k].len;
	}
	st->rdp[pe] = e;
	q->rd_tail++;
}

/* Free entries of the READ/atomic pool */
uint32_t rx_rdp_free(const rx_core_t *st)
{
	return RX_RDP - st->rd_fresh + (st->rdf_tail - st->rdf_head);
}

/* One entry of the QP at the head of the reclaim queue back to the pool: those its slots hold
 * beyond what it expects (all of them after a reset; a reused QP keeps what it expects). */
void rx_reclaim(rx_core_t *st)
{
	uint32_t qpn = st->rcl[st->rcl_head % RNIC_MAX_QP];
	rx_rdq_t *q = &st->rdq[qpn];

	if (q->rd_n > (uint8_t)(q->rd_tail - q->rd_head))
		rx_rdp_give(st, q, st->rdb[q->blk].e[(uint8_t)(q->rd_head + q->rd_n - 1) % RX_RDX]);
	if (q->rd_n == (uint8_t)(q->rd_tail - q->rd_head)) {
		st->rcl_in[qpn] = 0;
		st->rcl_head++;
	}
}
