/* TX kernel, the last stage (tx_egress.h): each frame's beats from the ICRC's sums (rnic_icrc.c)
 * to the MAC, its ICRC written into its last 4 bytes, which tx_core leaves zero.
 *
 * The ICRC is ~(T(lo) ^ hi) from the last beat's sums (its complement for a frame that must
 * arrive broken: payload the host refused, or a region gone). A frame whose last beat holds fewer
 * than 4 of its bytes has its ICRC begin in the beat before: tx_core marks that beat (hold) and it
 * waits here for the last one, the only clock this stage presents nothing while it has input
 * (frames whose length is 1 to 3 mod 64).
 * The MAC may hold a beat (its ready low): the beat stays presented, and the stages before wait
 * as their FIFOs fill (rnic_icrc.c).
 * II=1, latency 1 (the beat presented is a register; a held beat: until its frame's last comes);
 * no memory. Feed-forward: T(lo) ^ hi, then a 4:1 byte mux per byte of the last two beats. */
#include "tx_egress.h"

static void present(tx_icrc_put_t *st, const rnic_ebeat_t *b)
{
	memcpy(st->data, b->data, RNIC_BEAT);
	st->keep = b->n >= RNIC_BEAT ? ~0ull : (1ull << b->n) - 1;
	st->last = b->last;
	st->valid = 1;
}

/* the ICRC v into the frame's last 4 bytes: [n - 4, n) of the last beat b, the first 4 - n of them
 * at the end of the beat before (w) when n < 4 */
static void put_icrc(rnic_ebeat_t *w, rnic_ebeat_t *b, uint32_t v)
{
	uint32_t j, k;

	for (j = 0; j < RNIC_BEAT; j++) {
#pragma HLS UNROLL
		for (k = 0; k < RNIC_ICRC_LEN; k++) {
#pragma HLS UNROLL
			if (j + RNIC_ICRC_LEN == b->n + k)
				b->data[j] = (uint8_t)(v >> 8 * k);
			if (j + RNIC_ICRC_LEN == b->n + RNIC_BEAT + k)
				w->data[j] = (uint8_t)(v >> 8 * k);
		}
	}
}

void tx_icrc_put(tx_icrc_put_t *st, const rnic_tx_in_t *in, rnic_icrc_sumq_t *sums)
{
#pragma HLS PIPELINE II = 1
	const rnic_icrc_sums_t *s = rnic_icrc_sumq_head(sums);
	rnic_ebeat_t b;

	if (in->rst) {
		*st = (tx_icrc_put_t){0};
		return;
	}
	if (st->valid && in->eth_ready)
		st->valid = 0;
	if (st->valid)
		return;
	if (st->pend) {
		present(st, &st->next);
		st->pend = 0;
		return;
	}
	if (!rnic_icrc_sumq_count(sums))
		return;
	b = s->b;
	rnic_icrc_sumq_pop(sums);
	if (b.hold) {
		st->wait = b;
		st->waiting = 1;
		return;
	}
	if (b.last)
		put_icrc(&st->wait, &b, b.bad ? ~rnic_icrc_of(s) : rnic_icrc_of(s));
	if (st->waiting) {
		present(st, &st->wait);
		st->next = b;
		st->pend = 1;
		st->waiting = 0;
	} else {
		present(st, &b);
	}
}

void tx_icrc_put_out(const tx_icrc_put_t *st, rnic_tx_out_t *out)
{
	out->eth_valid = st->valid;
	memcpy(out->eth_data, st->data, RNIC_BEAT);
	out->eth_keep = st->keep;
	out->eth_last = st->last;
}
