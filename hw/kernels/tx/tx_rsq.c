/* TX kernel, a stage (tx_rsq.h): the responder's queue. The frames the RX kernel hands over for
 * the responder (port RSP: ACK/NAK, ATOMIC ACK, READ responses) wait here in order; the one at the
 * head is cut into packets, one a clock, each a job for tx_core (rjq), which builds its headers
 * and reads a READ response's payload.
 * A response is taken every other clock at most (a frame takes two beats or more: line rate),
 * into a; next clock its QP's path MTU and max_dest_rd_atomic are read, its last PSN worked out
 * and it is matched against every slot (b); the clock after, its QP's READs queued are counted
 * (c); then it is queued, with what that decides:
 *  - a READ asked for again (IBTA 9.7.5.1.6): the requester lost part of the responses and goes
 *    back to that PSN, so its QP's READ responses still queued whose last PSN is at or after it
 *    are dropped unsent, and so is the rest of the one being cut (tx_core is told, rjxq: it
 *    drops its packets already cut);
 *  - a READ beyond the max_dest_rd_atomic its QP agreed to: an Invalid Request NAK in its place
 *    (9.7.5.2.4, C9-112).
 * An ACK or ATOMIC ACK taken while nothing is on its way is queued in the clock it is taken, or
 * made a job at once when nothing is queued either; any other response that finds the queue
 * empty and nothing before it is queued as it is matched (nothing to count or drop). Each clock
 * the head's next packet is cut. tx_core stops a READ response whose payload failed (rjcq).
 * II=1, latency 4 from a response taken to its first packet cut (taken, matched, counted, queued;
 * cut from the clock after); 2 into an empty queue, 1 for an ACK queued at once, 0 for one made a
 * job at once.
 * Memories: mtu_log and limit (block RAM: the configuration's write, the read at a's QPN, a
 * register); the queue (registers: every slot matched at once). Recurrence: the cutter's bytes
 * left against the MTU moving the head and its masks. Feed-forward: a slot's QPN and PSN compares
 * into b; the count of a QP's READs (a popcount) into c. */
#include <assert.h>
#include "tx_rsq.h"

_Static_assert(TX_RSP_FIFO == 16, "the masks' 16 bits");

/* a slot's bit in the masks */
#define SLOT(p) ((uint16_t)(1u << ((p) % TX_RSP_FIFO)))

/* The bits set in m: an adder tree (2, 4, 8 and 16 bits at a time) */
static uint32_t count16(uint32_t m)
{
	uint32_t x = m - ((m >> 1) & 0x5555u);

	x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
	x = (x + (x >> 4)) & 0x0f0fu;
	return (x + (x >> 8)) & 0x1fu;
}

/* The response taken last clock (a), matched: its QP's fields, its last PSN, and its match
 * against the queue as it will be when it is counted and queued (the slot c fills in this clock,
 * t0's, matched against c). */
static void match(const tx_rsq_t *st, uint8_t t0, tx_rsb_t *nb)
{
	uint32_t q = st->a.qpn % RNIC_MAX_QP, sh = st->mtu_log[q], i, sq, last;
	uint16_t m = 0, ge = 0;

	for (i = 0; i < TX_RSP_FIFO; i++) {
		sq = st->rq_qpn[i];
		last = st->rq_last[i];
		if (st->c_on && i == t0 % TX_RSP_FIFO) {
			sq = st->c.b.e.qpn;
			last = st->c.b.last;
		}
		m |= (uint16_t)((sq == q) << i);
		ge |= (uint16_t)((rnic_psn_diff(last, st->a.psn) >= 0) << i);
	}
	nb->e = (tx_rse_t){.kind = st->a.kind, .syndrome = st->a.syndrome, .qpn = (uint16_t)q,
			   .mtu = (uint16_t)(1u << sh), .psn = st->a.psn, .msn = st->a.msn,
			   .key = st->a.key, .len = st->a.len, .va = st->a.va, .atomic = st->a.atomic};
	nb->last = (st->a.psn + (st->a_span >> sh)) & RNIC_PSN_MASK; /* its packets less one */
	nb->limit = st->limit[q];
	nb->m = m;
	nb->ge = ge;
}

/* e into the queue's tail (t0): a READ counted (rd set), an ACK with no READ. */
static void put(tx_rsq_t *st, uint8_t t0, const tx_rse_t *e, uint32_t last)
{
	uint32_t s = t0 % TX_RSP_FIFO;

	st->e[s] = *e;
	st->rq_qpn[s] = e->qpn;
	st->rq_last[s] = last;
	if (e->kind == RNIC_RSP_KIND_READ)
		st->rd |= SLOT(s);
	st->tail++;
}

/* c into the queue, given the queue as the clock began (rd0, h0): returns the READ responses a
 * READ asked for again makes useless; a READ over its QP's limit is NAKed instead (its count
 * less the one freed in the clock it was counted: its bit in c's copy of rd, not in rd0). */
static uint16_t queue(tx_rsq_t *st, uint8_t t0, uint16_t rd0, uint8_t h0, rnic_tx_rjxq_t *drops)
{
	const tx_rsc_t *c = &st->c;
	uint32_t limit = c->b.limit ? c->b.limit : 1u, freed = (c->b.m & c->rd & ~rd0) != 0;
	uint16_t gone = 0;
	tx_rse_t e = c->b.e;

	if (e.kind == RNIC_RSP_KIND_READ_AGAIN) {
		gone = c->b.m & rd0 & c->b.ge;
		if (gone & SLOT(h0)) {
			/* the head's: its packets already cut are dropped by tx_core, which takes one
			 * of these every clock */
			assert(rnic_tx_rjxq_room(drops));
			rnic_tx_rjxq_push(drops, &h0);
		}
		e.kind = RNIC_RSP_KIND_READ;
	} else if (e.kind == RNIC_RSP_KIND_READ && (freed ? c->n > limit : c->n >= limit)) {
		e.kind = RNIC_RSP_KIND_ACK;
		e.syndrome = RNIC_AETH_NAK_INV_REQ;
	}
	put(st, t0, &e, c->b.last);
	return gone;
}

/* Packet k of response e (rid: its number) as a job for tx_core: first (k_on: a READ's later
 * packets, from k_psn and k_va) and last (a READ's left bytes within its MTU) */
static void job(tx_rjob_t *j, const tx_rse_t *e, const tx_rsq_t *st, uint8_t rid, uint32_t left, uint32_t last)
{
	uint32_t read = e->kind == RNIC_RSP_KIND_READ, first = !(read && st->k_on);

	j->qpn = e->qpn;
	j->rid = rid;
	j->kind = e->kind;
	j->syndrome = e->syndrome;
	j->first = (uint8_t)first;
	j->last = (uint8_t)last;
	j->pay = (uint16_t)(!read ? 0 : last ? left : e->mtu);
	j->psn = first ? e->psn : st->k_psn;
	j->va = first ? e->va : st->k_va;
	j->msn = e->msn;
	j->key = e->key;
	j->atomic = e->atomic;
	j->op = e->kind == RNIC_RSP_KIND_ATOMIC ? RNIC_BTH_OP_ATOMIC_ACK :
		!read ? RNIC_BTH_OP_ACK :
		first && last ? RNIC_BTH_OP_READ_RESP_ONLY :
		first ? RNIC_BTH_OP_READ_RESP_FIRST :
		last ? RNIC_BTH_OP_READ_RESP_LAST : RNIC_BTH_OP_READ_RESP_MIDDLE;
}

/* The head's next packet, as a job for tx_core, or the head dropped: a READ asked for again (its
 * drop bit as the clock began, drop0) or stopped by tx_core (rjcq). Returns the head's slot bit
 * when it is done. */
static uint16_t cut(tx_rsq_t *st, uint8_t h0, uint8_t t0, uint16_t drop0, rnic_tx_rjq_t *jobs,
		    rnic_tx_rjcq_t *cancels)
{
	const tx_rse_t *e = &st->e[h0 % TX_RSP_FIFO];
	uint32_t read = e->kind == RNIC_RSP_KIND_READ, left = st->k_on ? st->k_left : e->len;
	uint32_t last = !read || left <= e->mtu, stop = (drop0 & SLOT(h0)) != 0;

	if (rnic_tx_rjcq_count(cancels)) {
		stop |= st->k_on && *rnic_tx_rjcq_head(cancels) == h0;
		rnic_tx_rjcq_pop(cancels);
	}
	if (h0 == t0)
		return 0;
	if (!stop) {
		if (!rnic_tx_rjq_room(jobs))
			return 0;
		job(rnic_tx_rjq_slot(jobs), e, st, h0, left, last);
		rnic_tx_rjq_push(jobs, NULL);
		if (!last) {
			st->k_psn = ((st->k_on ? st->k_psn : e->psn) + 1) & RNIC_PSN_MASK;
			st->k_va = (st->k_on ? st->k_va : e->va) + e->mtu;
			st->k_left = left - e->mtu;
			st->k_on = 1;
			return 0;
		}
	}
	st->k_on = 0;
	st->head++;
	return SLOT(h0);
}

void tx_rsq(tx_rsq_t *st, const rnic_tx_in_t *in, rnic_tx_rjq_t *jobs, rnic_tx_rjxq_t *drops, rnic_tx_rjcq_t *cancels)
{
#pragma HLS PIPELINE II = 1
	/* the queue as the clock began: what the cutter, the match, the count and the queuing go by */
	uint8_t h0 = st->head, t0 = st->tail;
	uint16_t rd0 = st->rd, drop0 = st->drop, gone = 0, freed, set = st->c_on ? SLOT(t0) : 0;
	uint32_t idx, taken = in->rsp_valid && st->ready, idle = !st->a_on && !st->b_on && !st->c_on;
	uint32_t now = taken && idle && (in->rsp.kind == RNIC_RSP_KIND_ACK || in->rsp.kind == RNIC_RSP_KIND_ATOMIC);
	uint32_t fast = st->a_on && !st->b_on && !st->c_on && h0 == t0;
	tx_rsb_t nb;
	int w;

	if (in->rst) {
		st->sweep = 0;
		st->rd = st->drop = 0;
		st->head = st->tail = 0;
		st->a_on = st->b_on = st->c_on = st->k_on = 0;
		st->ready = 0;
		return;
	}
	/* after a reset, as long as tx_core's sweep (which starts with it): nothing comes before it
	 * is over */
	if (!(st->sweep & RNIC_SWEPT)) {
		uint32_t i = st->sweep % RNIC_MAX_QP;

		st->mtu_log[i] = st->limit[i] = 0;
		st->sweep++;
		return;
	}
	freed = cut(st, h0, t0, drop0, jobs, cancels);
	/* taken a clock apart, no two of a, b, c are next to each other: c is queued in a clock
	 * nothing is counted, and b is counted in one nothing is queued */
	if (st->a_on)
		match(st, t0, &nb);
	if (fast) {
		/* matched into an empty queue with nothing behind it: no READ of its QP to count or
		 * drop, queued at once */
		if (nb.e.kind == RNIC_RSP_KIND_READ_AGAIN)
			nb.e.kind = RNIC_RSP_KIND_READ;
		put(st, t0, &nb.e, nb.last);
	}
	if (st->c_on)
		gone = queue(st, t0, rd0, h0, drops);
	if (st->b_on) {
		st->c.b = st->b;
		st->c.n = count16(st->b.m & rd0);
		st->c.rd = rd0;
	}
	if (now) {
		/* an ACK with nothing before it on its way: queued at once, or made a job at once
		 * when the queue is empty (its number taken all the same) */
		tx_rse_t e = {.kind = (uint8_t)in->rsp.kind, .syndrome = in->rsp.syndrome,
			      .qpn = (uint16_t)(in->rsp.qpn % RNIC_MAX_QP), .psn = in->rsp.psn, .msn = in->rsp.msn,
			      .atomic = in->rsp.atomic};

		if (h0 == t0 && rnic_tx_rjq_room(jobs)) {
			job(rnic_tx_rjq_slot(jobs), &e, st, t0, 0, 1);
			rnic_tx_rjq_push(jobs, NULL);
			st->head++;
			st->tail++;
		} else {
			put(st, t0, &e, 0);
		}
	}
	st->rd = (uint16_t)((st->rd & ~gone) & ~freed);
	st->drop = (uint16_t)(((drop0 | gone) & ~set) & ~freed);
	st->c_on = st->b_on;
	if (st->a_on)
		st->b = nb;
	st->b_on = st->a_on && !fast;
	st->a_on = (uint8_t)(taken && !now);
	if (taken) {
		st->a = in->rsp;
		st->a_span = in->rsp.len ? in->rsp.len - 1 : 0;
	}
	w = in->cfg_valid ? rnic_qpc_word(in->cfg_addr, &idx) : -1;
	if (w == RNIC_QPC_CTRL / 4)
		st->mtu_log[idx] = (uint8_t)rnic_mtu_shift(RNIC_GET(RNIC_QPC_CTRL_PMTU, in->cfg_data));
	if (w == RNIC_QPC_RETRY / 4)
		st->limit[idx] = (uint8_t)RNIC_GET(RNIC_QPC_RETRY_MAX_DEST_RD_ATOMIC, in->cfg_data);
	/* the next one a clock after this one, if the queue has room for it and for those on their
	 * way (from its count as the clock began: the frees of this clock not counted) */
	st->ready = !taken && (uint8_t)(t0 - h0) <= TX_RSP_FIFO - 3;
}

void tx_rsq_out(const tx_rsq_t *st, rnic_tx_out_t *out)
{
	out->rsp_ready = st->ready;
}
