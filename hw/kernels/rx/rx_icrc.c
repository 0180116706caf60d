/* RX kernel, stage 5 (rx_icrc.h): the ICRC check of every frame, after the three stages of its
 * sums (rnic_icrc.c): on a frame's last beat, four clocks after rx_mac.
 * II=1, latency 1; no memory. Feed-forward: T(lo) ^ hi (an XOR level or two) and a 32-bit compare. */
#include "rx_icrc.h"

void rx_icrc_check(rnic_icrc_sumq_t *in, rnic_rx_beatq_t *out)
{
#pragma HLS PIPELINE II = 1
	const rnic_icrc_sums_t *s = rnic_icrc_sumq_head(in);
	rx_checked_t *c = rnic_rx_beatq_slot(out);

	if (!rnic_icrc_sumq_count(in))
		return;
	c->b = s->b;
	c->crc_ok = rnic_icrc_of(s) == s->icrc;
	rnic_icrc_sumq_pop(in);
	rnic_rx_beatq_push(out, NULL);
}
