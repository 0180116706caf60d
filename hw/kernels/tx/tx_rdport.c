/* TX kernel, the read channel (tx_rdport.h): II=1, latency 1. The one DMA read port of the
 * kernel: tx_core's reads (the scheduler's WQE reads, wqreqq, first, then the builder's, rdreqq)
 * are presented one a clock and kept in request order, as their data returns. Each beat goes to
 * its reader a clock later: a payload beat to the emitter
 * (payq), a WQE's, an MTT line's or an MPT entry's to tx_core (rdbeatq). tx_core holds credits
 * for what is on its way, given back on crdq: a payload beat's bytes, and each entry of the list
 * as it is freed (tx_core asks only for reads the list has room for, so a read is decided when
 * a place for it is free, not queued ahead with what was known then). A beat is taken with room
 * for it whatever its kind: two places in payq and in rdbeatq as the clock began (one for a
 * beat pushed in it, one for the next).
 *
 * Two kinds of entry read nothing: zeros in place of payload that may not be read any more
 * (REQ_ZERO, a beat a clock into payq when they reach the head: the packet leaves poisoned), and
 * a fence (REQ_FENCE), handed back on rdbeatq when it reaches the head, so once every read
 * before it has returned its data (what the firmware frees after its answer is not read again);
 * the reads behind it go on meanwhile.
 *
 * State: the kinds and lengths of up to TX_RD_FIFO entries (192 bytes, registers), the head's
 * bytes left, the port's request register. Critical path: the head entry's kind (a 64-way mux of
 * the head as the clock began) to whether a beat is taken, to ready (1.92 ns). */
#include "tx_rdport.h"

void tx_rdport(tx_rdport_t *st, const rnic_tx_in_t *in, rnic_tx_rdreqq_t *reqs, rnic_tx_wqreqq_t *wqs, rnic_tx_rdbeatq_t *beats,
	       rnic_tx_payq_t *pay, rnic_tx_crdq_t *crds)
{
#pragma HLS PIPELINE II = 1
	/* the scheduler's WQE reads first (one a batch of WQEs), then the builder's */
	uint32_t wq = rnic_tx_wqreqq_count(wqs) != 0;
	const tx_rdreq_t *r = wq ? rnic_tx_wqreqq_head(wqs) : rnic_tx_rdreqq_head(reqs);
	uint8_t head0 = st->head, tail0 = st->tail, h1 = (uint8_t)(head0 + 1), nidx;
	uint16_t left0 = st->left;
	/* from the registers as the clock began: the entry being taken (or the next to begin), the
	 * one after it, and whether a beat taken now leaves more of it */
	uint32_t kind = left0 ? st->cur : st->kind[head0 % TX_RD_FIFO];
	uint32_t after = left0 ? st->kind[head0 % TX_RD_FIFO] : st->kind[h1 % TX_RD_FIFO];
	uint32_t len = left0 ? left0 : st->len[head0 % TX_RD_FIFO];
	uint32_t n, nk, took = 0, req;
	tx_crd_t crd = {0, 0};
	int have = left0 || head0 != tail0, more = len > RNIC_BEAT, nhave;

	if (in->rst) {
		st->head = st->tail = 0;
		st->left = 0;
		st->req_valid = st->ready = 0;
		return;
	}
	/* handshake of the request presented during the last clock */
	if (st->req_valid && in->rdreq_ready)
		st->req_valid = 0;
	/* the head entry: the fence passed, or a beat of it (a read's, come; zeros, with room) */
	if (have && kind == REQ_FENCE) {
		if (rnic_tx_rdbeatq_room(beats)) {
			tx_rdbeat_t *b = rnic_tx_rdbeatq_slot(beats);

			b->kind = REQ_FENCE;
			b->token = (uint8_t)len; /* a fence's entry holds its token */
			rnic_tx_rdbeatq_push(beats, NULL);
			crd.done = 1;
			took = 1;
			more = 0;
			st->head++;
		}
	} else if ((in->rd_valid && st->ready) || (have && kind == REQ_ZERO && rnic_tx_payq_room(pay))) {
		took = 1;
		crd.done = !left0;
		if (!left0) {
			st->cur = (uint8_t)kind;
			st->head++;
		}
		n = more ? RNIC_BEAT : len;
		st->left = (uint16_t)(len - n);
		if (kind == REQ_PAYLOAD || kind == REQ_ZERO) {
			tx_pay_t *p = rnic_tx_payq_slot(pay);

			if (kind == REQ_ZERO)
				memset(p->data, 0, RNIC_BEAT);
			else
				memcpy(p->data, in->rd_data, RNIC_BEAT);
			p->n = (uint8_t)n;
			p->err = (uint8_t)(kind == REQ_PAYLOAD && in->rd_err);
			p->poison = kind == REQ_ZERO;
			rnic_tx_payq_push(pay, NULL);
			crd.n = (uint8_t)n;
		} else {
			tx_rdbeat_t *b = rnic_tx_rdbeatq_slot(beats);

			memcpy(b->data, in->rd_data, RNIC_BEAT);
			b->kind = (uint8_t)kind;
			b->err = (uint8_t)in->rd_err;
			rnic_tx_rdbeatq_push(beats, NULL);
		}
	}
	if (crd.n || crd.done) {
		assert(rnic_tx_crdq_room(crds)); /* tx_core takes one every clock */
		rnic_tx_crdq_push(crds, &crd);
	}
	/* the next request: presented to the DMA, or (zeros, a fence) only kept in order */
	req = !st->req_valid && (wq || rnic_tx_rdreqq_count(reqs)) && (uint8_t)(tail0 - head0) < TX_RD_FIFO;
	if (req) {
		st->kind[tail0 % TX_RD_FIFO] = r->kind;
		st->len[tail0 % TX_RD_FIFO] = r->kind == REQ_FENCE ? r->token : r->len;
		if (r->kind != REQ_ZERO && r->kind != REQ_FENCE) {
			st->req_valid = 1;
			st->req_addr = r->bus;
			st->req_len = r->len;
		}
		st->tail++;
		if (wq)
			rnic_tx_wqreqq_pop(wqs);
		else
			rnic_tx_rdreqq_pop(reqs);
	}
	/* a beat may come next clock if the entry it would be for is a read, and its reader has room
	 * then: this entry (none taken, or more of it to take) or the one after it, which may be the
	 * request just taken */
	nk = took && !more ? after : kind;
	nidx = took && !more ? (left0 ? head0 : h1) : head0;
	nhave = took && !more ? nidx != tail0 : have;
	if (!nhave && req) {
		nk = r->kind;
		nhave = 1;
	}
	st->ready = nhave && nk != REQ_ZERO && nk != REQ_FENCE && rnic_tx_payq_room(pay) >= 2 &&
		    rnic_tx_rdbeatq_room(beats) >= 2;
}

void tx_rdport_out(const tx_rdport_t *st, rnic_tx_out_t *out)
{
	out->rdreq_valid = st->req_valid;
	out->rdreq_addr = st->req_addr;
	out->rdreq_len = st->req_len;
	out->rd_ready = st->ready;
}
