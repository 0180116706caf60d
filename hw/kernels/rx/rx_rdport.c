/* RX kernel, the read channel (rx_rdport.h): II=1, latency 1. The one DMA read port of the
 * kernel, shared by rx_ctx (a QP context it misses: ctxreqq) and rx_core (receive WQEs, atomic
 * operands and results, MPT and MTT lines: rdreqq). One request a clock is presented, the two
 * sources taking turns when both wait; each read's kind is kept in request order, and each beat
 * that comes back goes to its reader's FIFO (ctxrspq, rdbeatq), a clock later. A beat is taken
 * only with room for it in both, counted as the clock began less the beat pushed in it (rx_ctx
 * takes one every clock; rx_core waits only for its caches' lines to land).
 *
 * A fence from rx_core (RD_FENCE in rdreqq) waits at its head, holding rx_ctx's reads back too,
 * until the reads before it are back; it then goes to rx_core on rdbeatq behind their beats, so
 * rx_core answers it after it has taken them all (no read of the host's memory outlives the
 * fence: what the firmware frees after its answer is not read again).
 *
 * State: the kinds and QPs of up to RX_RD_FIFO reads (192 bytes, registers), the port's request
 * register. Critical path: the count of reads on their way (the head as the clock began) to the
 * request taken and the tail's increment. */
#include "rx_rdport.h"

static void issue(rx_rdport_t *st, uint64_t bus, uint32_t len, uint32_t kind, uint32_t qpn)
{
	uint32_t k = st->tail++ % RX_RD_FIFO;

	st->req_valid = 1;
	st->req_addr = bus;
	st->req_len = (uint16_t)len;
	st->kind[k] = (uint8_t)kind;
	st->qpn[k] = (uint16_t)qpn;
}

void rx_rdport(rx_rdport_t *st, const rnic_rx_in_t *in, rnic_rx_rdreqq_t *reqs, rnic_rx_ctxreqq_t *ctxreqs,
	       rnic_rx_rdbeatq_t *beats, rnic_rx_ctxrspq_t *ctxrsps)
{
#pragma HLS PIPELINE II = 1
	uint32_t pushed = 0, cpushed = 0, k;
	uint8_t head0 = st->head;
	const rx_rdreq_t *r = rnic_rx_rdreqq_head(reqs);
	int core = rnic_rx_rdreqq_count(reqs) != 0, ctx = rnic_rx_ctxreqq_count(ctxreqs) != 0;

	if (in->rst) {
		st->head = st->tail = 0;
		st->req_valid = st->ready = st->turn = 0;
		return;
	}
	/* handshake of the request presented during the last clock */
	if (st->req_valid && in->rdreq_ready)
		st->req_valid = 0;
	if (in->rd_valid && st->ready) {
		k = st->head % RX_RD_FIFO;
		if (st->kind[k] == RD_QPC) {
			rx_ctxrsp_t *c = rnic_rx_ctxrspq_slot(ctxrsps);

			memcpy(c->data, in->rd_data, RNIC_BEAT);
			c->last = (uint8_t)in->rd_last;
			c->err = (uint8_t)in->rd_err;
			rnic_rx_ctxrspq_push(ctxrsps, NULL);
			cpushed = 1;
		} else {
			rx_rdbeat_t *b = rnic_rx_rdbeatq_slot(beats);

			memcpy(b->data, in->rd_data, RNIC_BEAT);
			b->kind = st->kind[k];
			b->qpn = st->qpn[k];
			b->last = (uint8_t)in->rd_last;
			b->err = (uint8_t)in->rd_err;
			rnic_rx_rdbeatq_push(beats, NULL);
			pushed = 1;
		}
		st->head = (uint8_t)(st->head + in->rd_last);
	}
	if (core && r->kind == RD_FENCE) {
		/* the reads before it are back and their beats handed on: it passes (and rx_ctx waits) */
		if (head0 == st->tail && rnic_rx_rdbeatq_room(beats)) {
			rx_rdbeat_t *b = rnic_rx_rdbeatq_slot(beats);

			b->kind = RD_FENCE;
			b->qpn = r->qpn;
			rnic_rx_rdbeatq_push(beats, NULL);
			rnic_rx_rdreqq_pop(reqs);
			pushed = 1;
		}
	} else if (!st->req_valid && (uint8_t)(st->tail - head0) < RX_RD_FIFO && (core || ctx)) {
		/* the one that waited goes first next time both do */
		if (core && (st->turn || !ctx)) {
			issue(st, r->bus, r->len, r->kind, r->qpn);
			rnic_rx_rdreqq_pop(reqs);
			st->turn = 0;
		} else {
			issue(st, rnic_rx_ctxreqq_head(ctxreqs)->bus, RNIC_QPC_WORDS * 4, RD_QPC, 0);
			rnic_rx_ctxreqq_pop(ctxreqs);
			st->turn = 1;
		}
	}
	/* room for the next beat whichever reader it is for (held with none on its way: no beat comes
	 * but for a read asked for) */
	st->ready = rnic_rx_ctxrspq_room(ctxrsps) > cpushed && rnic_rx_rdbeatq_room(beats) > pushed;
}

void rx_rdport_out(const rx_rdport_t *st, rnic_rx_out_t *out)
{
	out->rdreq_valid = st->req_valid;
	out->rdreq_addr = st->req_addr;
	out->rdreq_len = st->req_len;
	out->rd_ready = st->ready;
}
