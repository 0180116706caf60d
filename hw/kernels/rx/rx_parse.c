/* RX kernel, rx_hdr, rx_classify and rx_judge (rx_parse.h): the headers of every frame, judged
 * from its first two beats and its length while the ICRC is checked, so that rx_core takes a
 * frame with what it is (rx_desc_t) and does not parse it again. Each beat is read both as a
 * frame's first and as its second, and as over IPv4 and over IPv6, side by side; the frame's
 * beats then pick.
 *
 * rx_hdr: II=1, latency 1; memory none (our addresses: 7 registers, written by CFG_TBL_PORT).
 *   Stateless but for them. Critical path: the IPv4 checksum's first two levels of adders.
 * rx_classify: II=1, latency 1; memory none. Recurrence: the frame's length (a 16-bit add). On a
 *   first beat the checksum's last two adds.
 * rx_judge: II=1, latency 1; no state. The checksum's check, the lengths the headers give
 *   against the frame's, the verdict.
 * Rules: RoCEv2 annex A17 (IPv4/IPv6 and UDP port 4791), IBTA 9.2 (BTH: pad, TVer, P_Key), the
 * lengths each opcode's extended headers take (9.4). */
#include "rx_parse.h"

/* bytes of extended transport headers an opcode takes (9.4), -1 for one we do not serve */
static int xth_len(uint32_t op)
{
	switch (op) {
	case RNIC_BTH_OP_SEND_FIRST: case RNIC_BTH_OP_SEND_MIDDLE: case RNIC_BTH_OP_SEND_LAST:
	case RNIC_BTH_OP_SEND_ONLY: case RNIC_BTH_OP_WRITE_MIDDLE: case RNIC_BTH_OP_WRITE_LAST:
	case RNIC_BTH_OP_READ_RESP_MIDDLE:
		return 0;
	case RNIC_BTH_OP_SEND_LAST_IMM: case RNIC_BTH_OP_SEND_ONLY_IMM: case RNIC_BTH_OP_WRITE_LAST_IMM:
	case RNIC_BTH_OP_READ_RESP_FIRST: case RNIC_BTH_OP_READ_RESP_LAST: case RNIC_BTH_OP_READ_RESP_ONLY:
	case RNIC_BTH_OP_ACK:
		return 4;
	case RNIC_BTH_OP_ATOMIC_ACK:
		return 12;
	case RNIC_BTH_OP_WRITE_FIRST: case RNIC_BTH_OP_WRITE_ONLY: case RNIC_BTH_OP_READ_REQ:
		return 16;
	case RNIC_BTH_OP_WRITE_ONLY_IMM:
		return 20;
	case RNIC_BTH_OP_CMP_SWAP: case RNIC_BTH_OP_FETCH_ADD:
		return 28;
	case RNIC_BTH_OP_UD_SEND_ONLY:
		return RNIC_DETH_LEN;
	case RNIC_BTH_OP_UD_SEND_ONLY_IMM:
		return RNIC_DETH_LEN + RNIC_IMM_LEN;
	default:
		return -1;
	}
}

/* a BTH at b (opcode, flags), l3 bytes behind IPv4's place: its opcode without the UC bit, and
 * what that opcode's headers take */
static void bth_facts(const uint8_t *b, uint32_t l3, uint8_t *op, uint8_t *uc, uint8_t *bad, uint8_t *xth,
		      uint8_t *req, uint16_t *min)
{
	uint32_t o = b[0], pad = (b[1] >> RNIC_BTH_PAD_SHIFT) & 3;
	int x;

	*req = o == RNIC_BTH_OP_WRITE_FIRST || o == RNIC_BTH_OP_WRITE_ONLY || o == RNIC_BTH_OP_WRITE_ONLY_IMM ||
	       o == RNIC_BTH_OP_READ_REQ || o == RNIC_BTH_OP_CMP_SWAP || o == RNIC_BTH_OP_FETCH_ADD;
	*uc = o >= RNIC_BTH_UC_BIT && o <= (RNIC_BTH_UC_BIT | RNIC_BTH_OP_WRITE_ONLY_IMM);
	if (*uc)
		o &= ~RNIC_BTH_UC_BIT;
	x = xth_len(o);
	*op = (uint8_t)o;
	*bad = x < 0 || (b[1] & 0xf) != 0;
	*xth = (uint8_t)(x < 0 ? 0 : x);
	*min = (uint16_t)(RNIC_XTH_OFF + l3 + *xth + pad + RNIC_ICRC_LEN);
}

void rx_hdr(rx_hdr_t *st, const rnic_rx_in_t *in, rnic_rx_hdrq_t *hq, rnic_rx_factq_t *out)
{
#pragma HLS PIPELINE II = 1
	const rnic_ebeat_t *b = rnic_rx_hdrq_head(hq);
	const uint8_t *d = b->data, *ip = d + RNIC_IP_OFF;
	rx_facts_t *f = rnic_rx_factq_slot(out);
	uint8_t mac[6];
	uint32_t i, me6 = 1;

	if (in->rst) {
		*st = (rx_hdr_t){0};
		return;
	}
	if (in->cfg_valid && RNIC_CFG_TBL(in->cfg_addr) == RNIC_CFG_TBL_PORT && RNIC_CFG_IDX(in->cfg_addr) == 0 &&
	    RNIC_CFG_WORD(in->cfg_addr) < RNIC_PORTC_WORDS)
		st->port[RNIC_CFG_WORD(in->cfg_addr) % RNIC_PORTC_WORDS] = in->cfg_data;
	if (!rnic_rx_hdrq_count(hq))
		return;
	f->no = b->no;
	f->last = b->last;
	f->n = b->n;
	rnic_rx_hdrq_pop(hq);
	rnic_rx_factq_push(out, NULL);
	if (b->no > 1)
		return; /* a beat after a frame's second says nothing of its headers */
	rnic_port_mac(st->port, mac);
	f->ours = 1;
	f->bcast = 1;
	for (i = 0; i < 6; i++) {
		f->ours &= d[i] == mac[i];
		f->bcast &= d[i] == 0xff;
	}
	f->bcast |= d[0] == 0x33 && d[1] == 0x33; /* IPv6 multicast: neighbour discovery */
	f->eth6 = rnic_be16(d + 12) == RNIC_ETHERTYPE_IPV6;
	for (i = 0; i < 4; i++)
		me6 &= rnic_be32(d + 38 + 4 * i) == st->port[RNIC_PORTC_IPV6_0 / 4 + i];
	f->roce4 = rnic_be16(d + 12) == RNIC_ETHERTYPE_IPV4 && d[23] == RNIC_IPPROTO_UDP &&
		  rnic_be16(d + 36) == RNIC_ROCE_UDP_PORT && rnic_be32(d + 30) == st->port[RNIC_PORTC_IPV4 / 4];
	f->roce6 = d[20] == RNIC_IPPROTO_UDP && rnic_be16(d + 56) == RNIC_ROCE_UDP_PORT && me6;
	f->ihl5 = ip[0] == 0x45;
	f->ver6 = ip[0] >> 4 == 6;
	/* the IPv4 header's ten words, checksum included, summed as a tree: its first two levels
	 * here, the last two in rx_classify, the check in rx_judge */
	f->sum[0] = (rnic_be16(ip) + rnic_be16(ip + 2)) + (rnic_be16(ip + 4) + rnic_be16(ip + 6));
	f->sum[1] = (rnic_be16(ip + 8) + rnic_be16(ip + 10)) + (rnic_be16(ip + 12) + rnic_be16(ip + 14));
	f->sum[2] = rnic_be16(ip + 16) + rnic_be16(ip + 18);
	f->ip_end4 = (uint16_t)(rnic_be16(ip + 2) + RNIC_ETH_HLEN);
	f->ip_end6 = (uint16_t)(rnic_be16(ip + 4) + RNIC_UDP_OFF + RNIC_IP6_EXTRA);
	f->udp_end4 = (uint16_t)(rnic_be16(d + RNIC_UDP_OFF + 4) + RNIC_UDP_OFF);
	f->udp_end6 = (uint16_t)(rnic_be16(d + RNIC_UDP_OFF + RNIC_IP6_EXTRA + 4) + RNIC_UDP_OFF + RNIC_IP6_EXTRA);
	bth_facts(d + RNIC_BTH_OFF, 0, &f->op4, &f->uc4, &f->bad4, &f->xth4, &f->req4, &f->min4);
	bth_facts(d + RNIC_BTH_OFF + RNIC_IP6_EXTRA, RNIC_IP6_EXTRA, &f->op6, &f->uc6, &f->bad6, &f->xth6, &f->req6, &f->min6);
	f->pkey4 = rnic_be16(d + RNIC_BTH_OFF + 2) == 0xffff;
	f->qpn4 = rnic_be24(d + RNIC_BTH_OFF + 5);
	f->ack4 = d[RNIC_BTH_OFF + 8] & RNIC_BTH_ACKREQ;
	f->psn4 = rnic_be24(d + RNIC_BTH_OFF + 9);
	f->va4 = rnic_be64(d + RNIC_XTH_OFF);
	f->key4_hi = (uint16_t)rnic_be16(d + RNIC_XTH_OFF + 8);
	/* as the second beat: the rest of IPv6's BTH and its RETH, the end of IPv4's RETH key */
	f->pkey6 = rnic_be16(d + RNIC_BTH_OFF + RNIC_IP6_EXTRA + 2 - RNIC_BEAT) == 0xffff;
	f->qpn6 = rnic_be24(d + RNIC_BTH_OFF + RNIC_IP6_EXTRA + 5 - RNIC_BEAT);
	f->ack6 = d[RNIC_BTH_OFF + RNIC_IP6_EXTRA + 8 - RNIC_BEAT] & RNIC_BTH_ACKREQ;
	f->psn6 = rnic_be24(d + RNIC_BTH_OFF + RNIC_IP6_EXTRA + 9 - RNIC_BEAT);
	f->va6 = rnic_be64(d + RNIC_XTH_OFF + RNIC_IP6_EXTRA - RNIC_BEAT);
	f->key6 = rnic_be32(d + RNIC_XTH_OFF + RNIC_IP6_EXTRA + 8 - RNIC_BEAT);
	f->key4_lo = (uint16_t)rnic_be16(d + RNIC_XTH_OFF + 10 - RNIC_BEAT);
}

_Static_assert(RNIC_BTH_OFF + RNIC_IP6_EXTRA + 2 == RNIC_BEAT && RNIC_XTH_OFF + 8 == RNIC_BEAT - 2 &&
		       RNIC_XTH_OFF + RNIC_IP6_EXTRA + 12 <= 2 * RNIC_BEAT,
	       "IPv6's BTH from its P_Key on, and both RETHs' ends, are in the second beat");

void rx_classify(rx_classify_t *st, rnic_rx_factq_t *in, rnic_rx_headq_t *out)
{
#pragma HLS PIPELINE II = 1
	const rx_facts_t *f = rnic_rx_factq_head(in);
	rx_facts_t g;
	uint32_t len;

	if (!rnic_rx_factq_count(in))
		return;
	g = *f;
	g.sum[0] = (f->sum[0] + f->sum[1]) + f->sum[2];
	len = f->no == 0 ? f->n : st->len + f->n;
	if (f->last) {
		rx_heads_t *h = rnic_rx_headq_slot(out);

		h->a = f->no == 0 ? g : st->f0;
		h->b = f->no == 1 ? g : st->f1;
		h->len = (uint16_t)len;
		rnic_rx_headq_push(out, NULL);
	}
	if (f->no == 0)
		st->f0 = g;
	if (f->no == 1)
		st->f1 = g;
	st->len = (uint16_t)len;
	rnic_rx_factq_pop(in);
}

void rx_judge(rnic_rx_headq_t *in, rnic_rx_descq_t *out)
{
#pragma HLS PIPELINE II = 1
	const rx_heads_t *h = rnic_rx_headq_head(in);
	const rx_facts_t *a = &h->a, *b = &h->b;
	uint32_t len = h->len, v6 = a->eth6, l3 = v6 ? RNIC_IP6_EXTRA : 0, min = v6 ? a->min6 : a->min4;
	uint32_t qpn = v6 ? b->qpn6 : a->qpn4;
	/* one's complement: the IPv4 header is good when its ten words sum to 0xffff once the
	 * carries are folded in: when the sum's low half is the complement of its high (under 16) */
	uint32_t ip4_ok = a->ihl5 && (a->sum[0] & 0xffff) == (~(a->sum[0] >> 16) & 0xffff);
	rx_desc_t x;

	if (!rnic_rx_headq_count(in))
		return;
	x.v.op = v6 ? a->op6 : a->op4;
	x.v.uc = v6 ? a->uc6 : a->uc4;
	x.req = v6 ? a->req6 : a->req4;
	x.v.v6 = (uint8_t)v6;
	x.v.xth = v6 ? a->xth6 : a->xth4;
	x.v.qpn = rnic_qp_index(qpn);
	x.v.psn = v6 ? b->psn6 : a->psn4;
	x.v.ackreq = v6 ? b->ack6 : a->ack4;
	x.key = v6 ? b->key6 : (uint32_t)a->key4_hi << 16 | b->key4_lo;
	x.va = v6 ? b->va6 : a->va4;
	x.v.plen = (uint16_t)(len - min);
	if (!(len >= RNIC_XTH_OFF + l3 + RNIC_ICRC_LEN && a->ours && (v6 ? a->roce6 : a->roce4)))
		x.v.cls = a->ours || a->bcast ? RX_FW : RX_JUNK;
	else if ((v6 ? a->bad6 || !a->ver6 || a->ip_end6 != len || a->udp_end6 != len || !b->pkey6 :
		       a->bad4 || !ip4_ok || a->ip_end4 != len || a->udp_end4 != len || !a->pkey4) || len < min)
		x.v.cls = RX_MALFORMED;
	else if (qpn == RNIC_GSI_QPN && x.v.op == RNIC_BTH_OP_UD_SEND_ONLY)
		x.v.cls = RX_GSI; /* the GSI QP is the firmware's: the CM's MADs */
	else
		x.v.cls = RX_ROCE;
	rnic_rx_headq_pop(in);
	rnic_rx_descq_push(out, &x);
}
