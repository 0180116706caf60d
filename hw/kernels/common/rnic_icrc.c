/* The ICRC's stages (rnic_icrc.h; RoCEv2 annex A17.3.3), a beat a clock, the frame's two sums on
 * its last beat three clocks after it comes.
 *
 * The CRC is linear: from state c, a 64-byte beat p gives T(c) ^ D(p), T a 32 x 32 bit map and
 * D(p) the beat's CRC from state 0 (rnic_crc.c's XOR tree). So D is taken the clock a beat comes,
 * into a register, and what feeds back is T(c) ^ D: a few levels. A beat is folded in once the
 * next one is known not to end the frame within 3 bytes (until then its last bytes may be the
 * ICRC's). The frame's last beat is all feed-forward: what the ICRC covers of the held beat and
 * this one (60 + n bytes, n this beat's) is moved to the end of a 128-byte window with zeros in
 * front (from state 0 a zero byte changes nothing), the CRC state before it XORed into its first
 * 4 bytes (as the table form takes a state in), so no chain of partial steps is needed.
 * Their state needs no reset: a frame's first beat starts it over (a reset empties the FIFOs).
 * Each passes a beat on when its output FIFO has room: on RX always (the MAC cannot be stalled,
 * rx_msg.h), on TX as the MAC takes the frame.
 *
 * All three: II=1, latency 1 each (the FIFO's register), no memory (the CRC's ROM is LUTs).
 *   rnic_icrc_fold   the mask, D of the beat into a register; recurrence: c = T(c) ^ D(held),
 *                    or the seed at a frame's first beat; the ICRC's 4 bytes from the beat (and
 *                    the 3 before), and on the last beat the window
 *   rnic_icrc_shift  the window moved right by 68 - n bytes (four 4:1 byte mux levels)
 *   rnic_icrc_sum    D of the window's two halves */
#include "rnic_icrc.h"
#include "rnic_icrc_seed.h"

static const uint8_t zeros[RNIC_BEAT];

/* D(p): p's CRC from state 0 */
static uint32_t crc_d(const uint8_t *p)
{
	return rnic_crc32_beat(0, p);
}

/* T(c): state c after 64 zero bytes */
static uint32_t crc_t(uint32_t c)
{
	return rnic_crc32_beat(c, zeros);
}

void rnic_icrc_fold(rnic_icrc_fold_t *st, rnic_icrc_inq_t *in, rnic_icrc_foldq_t *out)
{
#pragma HLS PIPELINE II = 1
	const rnic_ebeat_t *b = rnic_icrc_inq_head(in);
	rnic_icrc_window_t *w = rnic_icrc_foldq_slot(out);
	uint8_t m[RNIC_BEAT], t[RNIC_BEAT + 3];
	uint32_t k;

	if (!rnic_icrc_inq_count(in) || !rnic_icrc_foldq_room(out))
		return;
	rnic_icrc_mask(m, b->data, b->no, b->v6);
	w->b = *b;
	w->s = (uint8_t)(2 * RNIC_BEAT - (RNIC_BEAT - RNIC_ICRC_LEN) - b->n);
	/* the last 4 of the frame's bytes: [n - 1, n + 3) of the 3 bytes before and this beat */
	memcpy(t, st->prev, 3);
	memcpy(t + 3, b->data, RNIC_BEAT);
	w->icrc = 0;
	for (k = 0; k < RNIC_BEAT; k++) {
#pragma HLS UNROLL
		if (k + 1 == b->n)
			w->icrc = (uint32_t)rnic_rd_le(t + k, 4);
	}
	memcpy(st->prev, b->data + RNIC_BEAT - 3, 3);
	if (b->last) {
		uint32_t single = b->no == 0, c = single ? RNIC_ICRC_SEED : st->crc;
		uint32_t at = single ? RNIC_BEAT : 0;

		memcpy(w->w, single ? zeros : st->hm, RNIC_BEAT);
		memcpy(w->w + RNIC_BEAT, m, RNIC_BEAT);
		for (k = 0; k < 4; k++) {
#pragma HLS UNROLL
			w->w[at + k] ^= (uint8_t)(c >> 8 * k);
		}
	} else {
		/* D of this beat goes into a register: the fold next beat takes it from there */
		st->crc = b->no == 0 ? RNIC_ICRC_SEED : crc_t(st->crc) ^ st->hd;
		st->hd = crc_d(m);
		memcpy(st->hm, m, RNIC_BEAT);
	}
	rnic_icrc_inq_pop(in);
	rnic_icrc_foldq_push(out, NULL);
}

/* one level of the shifter: a[j - d * unit] (0 before the start), d in 0..3 */
static void shift_level(uint8_t *o, const uint8_t *a, uint32_t d, uint32_t unit)
{
	int j, k;

	for (j = 0; j < 2 * RNIC_BEAT; j++) {
#pragma HLS UNROLL
		uint8_t v[4];

		for (k = 0; k < 4; k++) {
#pragma HLS UNROLL
			v[k] = j >= k * (int)unit ? a[j - k * (int)unit] : 0;
		}
		o[j] = v[d & 3];
	}
}

void rnic_icrc_shift(rnic_icrc_foldq_t *in, rnic_icrc_shiftq_t *out)
{
#pragma HLS PIPELINE II = 1
	const rnic_icrc_window_t *w = rnic_icrc_foldq_head(in);
	rnic_icrc_shifted_t *z = rnic_icrc_shiftq_slot(out);
	uint8_t a[2 * RNIC_BEAT], b[2 * RNIC_BEAT], c[2 * RNIC_BEAT];

	if (!rnic_icrc_foldq_count(in) || !rnic_icrc_shiftq_room(out))
		return;
	z->b = w->b;
	z->icrc = w->icrc;
	if (w->b.last) {
		shift_level(a, w->w, w->s, 1);
		shift_level(b, a, w->s >> 2, 4);
		shift_level(c, b, w->s >> 4, 16);
		shift_level(z->z, c, w->s >> 6, 64);
	}
	rnic_icrc_foldq_pop(in);
	rnic_icrc_shiftq_push(out, NULL);
}

void rnic_icrc_sum(rnic_icrc_shiftq_t *in, rnic_icrc_sumq_t *out)
{
#pragma HLS PIPELINE II = 1
	const rnic_icrc_shifted_t *z = rnic_icrc_shiftq_head(in);
	rnic_icrc_sums_t *s = rnic_icrc_sumq_slot(out);

	if (!rnic_icrc_shiftq_count(in) || !rnic_icrc_sumq_room(out))
		return;
	s->b = z->b;
	s->icrc = z->icrc;
	s->lo = s->hi = 0;
	if (z->b.last) {
		s->lo = crc_d(z->z);
		s->hi = crc_d(z->z + RNIC_BEAT);
	}
	rnic_icrc_shiftq_pop(in);
	rnic_icrc_sumq_push(out, NULL);
}

uint32_t rnic_icrc_of(const rnic_icrc_sums_t *s)
{
	return ~(crc_t(s->lo) ^ s->hi);
}
