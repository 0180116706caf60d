/* RX kernel, stage 1 (rx_mac.h): each beat of the MAC's stream, with how many of its bytes are the
 * frame's, its number in the frame and the frame's IP version, to the ICRC check and the headers'. The MAC cannot
 * be stalled: a beat is passed on in the clock it comes (rx_msg.h).
 * II=1, latency 1; no memory. Recurrence: the beat number and the frame flag (a few LUTs); the
 * byte count is feed-forward: the keep's edge, and for a one-beat frame its IP length (Ethernet
 * pads a frame to 60 bytes). */
#include "rx_mac.h"

/* Bytes in a beat: the MAC's keep is contiguous from byte 0 (CMAC, PG203: only a frame's last
 * beat has fewer than 64), so the count is where a kept byte is followed by one not kept: a
 * one-hot of that edge, then an OR per bit of the count (three levels, no chain) */
static uint32_t keep_bytes(uint64_t keep)
{
	uint32_t n = 0, i;

	for (i = 0; i < RNIC_BEAT; i++) {
#pragma HLS UNROLL
		if ((keep >> i & 1) && (i == RNIC_BEAT - 1 || !(keep >> (i + 1) & 1)))
			n |= i + 1;
	}
	return n;
}

/* Bytes of a one-beat frame that are its IP packet's: what follows is Ethernet's padding to 60
 * bytes (a zero-length SEND ONLY over IPv4 is 58 bytes), which the ICRC does not cover. */
static uint32_t unpadded(const uint8_t *d, uint32_t n)
{
	/* both IP versions' lengths and their checks side by side, then the EtherType picks */
	uint32_t len4 = RNIC_ETH_HLEN + rnic_be16(d + RNIC_IP_OFF + 2);
	uint32_t len6 = RNIC_ETH_HLEN + RNIC_IP6_HLEN + rnic_be16(d + RNIC_IP_OFF + 4);
	uint32_t cut4 = len4 < n && len4 > RNIC_ETH_HLEN, cut6 = len6 < n;
	uint32_t ethertype = rnic_be16(d + 12);

	if (ethertype == RNIC_ETHERTYPE_IPV4 && cut4)
		return len4;
	if (ethertype == RNIC_ETHERTYPE_IPV6 && cut6)
		return len6;
	return n;
}

void rx_mac(rx_mac_t *st, const rnic_rx_in_t *in, rnic_icrc_inq_t *out, rnic_rx_hdrq_t *hdr)
{
#pragma HLS PIPELINE II = 1
	rnic_ebeat_t *b = rnic_icrc_inq_slot(out);
	uint32_t n;

	if (in->rst) {
		*st = (rx_mac_t){0};
		return;
	}
	if (!in->eth_valid)
		return;
	n = keep_bytes(in->eth_keep);
	if (in->eth_last && !st->in_frame)
		n = unpadded(in->eth_data, n);
	memcpy(b->data, in->eth_data, RNIC_BEAT);
	b->n = (uint8_t)n;
	b->no = st->in_frame ? st->no : 0;
	b->v6 = st->in_frame ? st->v6 : rnic_be16(in->eth_data + 12) == RNIC_ETHERTYPE_IPV6;
	b->last = in->eth_last;
	b->bad = b->hold = 0;
	rnic_icrc_inq_push(out, NULL);
	rnic_rx_hdrq_push(hdr, b);
	st->in_frame = !in->eth_last;
	st->no = b->no < 2 ? b->no + 1 : 2;
	st->v6 = b->v6;
}
