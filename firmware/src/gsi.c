/* The GSI QP (QP1): management datagrams (MADs, IBTA Vol. 1 13.4) in RoCEv2 UD SENDs to QP1
 * (Annex A17), handed over whole by the RX kernel and sent whole through the frame path. */
#include "cm.h"
#include "fw.h"
#include "hal.h"
#include "rnic_frame.h"

/* where a frame's transport headers start: IPv6 moves everything after IP on */
#define L3(v6) ((v6) ? RNIC_IP6_EXTRA : 0u)

/* CRC-32 byte step, table driven: the soft core's software form of the kernels' parallel CRC
 * (a 1 KiB table, where their 64 KiB ROM would not fit the core's memory) */
static const uint32_t crc_table[256] = {
#define C1(c) (((c) & 1) ? (0xedb88320u ^ ((c) >> 1)) : ((c) >> 1))
#define C8(c) C1(C1(C1(C1(C1(C1(C1(C1((uint32_t)(c)))))))))
#define R4(n) C8(n), C8(n + 1), C8(n + 2), C8(n + 3)
#define R16(n) R4(n), R4(n + 4), R4(n + 8), R4(n + 12)
#define R64(n) R16(n), R16(n + 16), R16(n + 32), R16(n + 48)
	R64(0), R64(64), R64(128), R64(192)
};

static uint32_t crc32(uint32_t crc, const uint8_t *p, uint32_t n)
{
	while (n--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static const uint8_t *mad_of(const struct cm_peer *p, const uint8_t *f)
{
	return f + RNIC_BTH_OFF + L3(p->v6) + RNIC_BTH_LEN + RNIC_DETH_LEN;
}

/* A RoCEv2 UD SEND_ONLY of one MAD to QP1 on our address, Q_Key the GSI's: its sender (MAC,
 * address, traffic class, QP) into p. 0, or -1 if the frame is not one. */
int fw_gsi_parse(const uint8_t *f, uint32_t len, struct cm_peer *p)
{
	uint32_t v6 = len >= RNIC_ETH_HLEN && rnic_be16(f + 12) == RNIC_ETHERTYPE_IPV6, l3 = L3(v6);
	uint32_t bth = RNIC_BTH_OFF + l3, i;

	if (len != bth + RNIC_BTH_LEN + RNIC_DETH_LEN + CM_MAD_LEN + RNIC_ICRC_LEN)
		return -1;
	if (v6) {
		if (f[RNIC_IP_OFF] >> 4 != 6 || f[RNIC_IP_OFF + 6] != RNIC_IPPROTO_UDP ||
		    memcmp(f + RNIC_IP_OFF + 24, fw.ip6, 16))
			return -1;
		memcpy(p->ip6, f + RNIC_IP_OFF + 8, 16);
		p->tclass = (uint8_t)(rnic_be16(f + RNIC_IP_OFF) >> 4);
	} else {
		if (rnic_be16(f + 12) != RNIC_ETHERTYPE_IPV4 || f[RNIC_IP_OFF] != 0x45 ||
		    f[RNIC_IP_OFF + 9] != RNIC_IPPROTO_UDP || rnic_be32(f + RNIC_IP_OFF + 16) != fw.ip)
			return -1;
		p->ip = rnic_be32(f + RNIC_IP_OFF + 12);
		p->tclass = f[RNIC_IP_OFF + 1];
	}
	if (rnic_be16(f + RNIC_UDP_OFF + l3 + 2) != RNIC_ROCE_UDP_PORT || f[bth] != RNIC_BTH_OP_UD_SEND_ONLY ||
	    (f[bth + 1] & 0x3f) || rnic_be16(f + bth + 2) != 0xffff || (rnic_be32(f + bth + 4) & 0xffffff) != RNIC_GSI_QPN ||
	    rnic_be32(f + bth + RNIC_BTH_LEN) != RNIC_GSI_QKEY)
		return -1;
	p->v6 = (uint8_t)v6;
	for (i = 0; i < 6; i++)
		p->mac[i] = f[6 + i];
	p->qpn = rnic_be32(f + bth + RNIC_BTH_LEN + 4) & 0xffffff;
	return 0;
}

/* Send a MAD to QP p->qpn of the peer: Ethernet, IP (TTL 64, DF, the peer's traffic class), UDP
 * from QP1's source port, BTH, DETH, the MAD and the ICRC. */
void fw_gsi_send(const struct cm_peer *p, const uint8_t *mad)
{
	uint8_t *f = hal_pkt_tx_buf();
	uint32_t l3 = L3(p->v6), udp = RNIC_UDP_OFF + l3, bth = RNIC_BTH_OFF + l3;
	uint32_t ulen = RNIC_UDP_HLEN + RNIC_BTH_LEN + RNIC_DETH_LEN + CM_MAD_LEN + RNIC_ICRC_LEN;
	uint32_t len = udp + ulen, crc, off, n;
	static const uint8_t lrh[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	memset(f, 0, bth + RNIC_BTH_LEN + RNIC_DETH_LEN);
	memcpy(f, p->mac, 6);
	memcpy(f + 6, fw.mac, 6);
	if (p->v6) {
		rnic_put_be16(f + 12, RNIC_ETHERTYPE_IPV6);
		rnic_put_be16(f + RNIC_IP_OFF, 0x6000 | (uint32_t)p->tclass << 4);
		rnic_put_be16(f + RNIC_IP_OFF + 4, ulen);
		f[RNIC_IP_OFF + 6] = RNIC_IPPROTO_UDP;
		f[RNIC_IP_OFF + 7] = CM_HOP_LIMIT;
		memcpy(f + RNIC_IP_OFF + 8, fw.ip6, 16);
		memcpy(f + RNIC_IP_OFF + 24, p->ip6, 16);
	} else {
		rnic_put_be16(f + 12, RNIC_ETHERTYPE_IPV4);
		f[RNIC_IP_OFF] = 0x45;
		f[RNIC_IP_OFF + 1] = p->tclass;
		rnic_put_be16(f + RNIC_IP_OFF + 2, RNIC_IP_HLEN + ulen);
		rnic_put_be16(f + RNIC_IP_OFF + 6, 0x4000); /* DF */
		f[RNIC_IP_OFF + 8] = CM_HOP_LIMIT;
		f[RNIC_IP_OFF + 9] = RNIC_IPPROTO_UDP;
		rnic_put_be32(f + RNIC_IP_OFF + 12, fw.ip);
		rnic_put_be32(f + RNIC_IP_OFF + 16, p->ip);
		rnic_put_be16(f + RNIC_IP_OFF + 10, rnic_ipv4_csum(f + RNIC_IP_OFF));
	}
	rnic_put_be16(f + udp, CM_GSI_SPORT);
	rnic_put_be16(f + udp + 2, RNIC_ROCE_UDP_PORT);
	rnic_put_be16(f + udp + 4, ulen);
	f[bth] = RNIC_BTH_OP_UD_SEND_ONLY;
	rnic_put_be16(f + bth + 2, 0xffff);
	rnic_put_be32(f + bth + 4, p->qpn & 0xffffff);
	rnic_put_be32(f + bth + 8, fw.gsi_psn++ & 0xffffff);
	rnic_put_be32(f + bth + RNIC_BTH_LEN, RNIC_GSI_QKEY);
	rnic_put_be32(f + bth + RNIC_BTH_LEN + 4, RNIC_GSI_QPN);
	memcpy(f + bth + RNIC_BTH_LEN + RNIC_DETH_LEN, mad, CM_MAD_LEN);
	/* the ICRC over the bytes the kernels' mask leaves, after 8 bytes of 0xff for the LRH */
	crc = crc32(0xffffffffu, lrh, sizeof(lrh));
	for (off = 0; off < len - RNIC_ICRC_LEN; off += RNIC_BEAT) {
		uint8_t b[RNIC_BEAT];
		uint32_t skip = off ? 0 : RNIC_ETH_HLEN;

		n = len - RNIC_ICRC_LEN - off < RNIC_BEAT ? len - RNIC_ICRC_LEN - off : RNIC_BEAT;
		rnic_icrc_mask(b, f + off, (int)(off / RNIC_BEAT), (int)p->v6);
		crc = crc32(crc, b + skip, n - skip);
	}
	crc = ~crc;
	for (n = 0; n < 4; n++)
		f[len - RNIC_ICRC_LEN + n] = (uint8_t)(crc >> (8 * n));
	fw.gsi.tx++;
	hal_pkt_send(len);
}

/* MADs taken out of the frame buffer (it must make room for the next frame, a resolution's answer
 * among them) for the main loop to hand to the CM (fw_gsi_poll): frame handling never runs the CM,
 * so nothing the CM does (a QP moved, a peer resolved) leads back into frame handling */
#define GSI_DEFERRED 4
static struct {
	struct cm_peer p;
	uint8_t mad[CM_MAD_LEN];
} deferred[GSI_DEFERRED];
static uint32_t deferred_head, deferred_n;

/* A frame the RX kernel handed over: a MAD for QP1, set aside for fw_gsi_poll, or not ours to
 * take (0) */
int fw_gsi_input(const uint8_t *f, uint32_t len)
{
	struct cm_peer p;
	uint32_t v6 = len >= RNIC_ETH_HLEN + RNIC_IP6_HLEN && rnic_be16(f + 12) == RNIC_ETHERTYPE_IPV6, k;

	/* RoCEv2 at all? (ARP and neighbour discovery are the others) */
	if (len < RNIC_BTH_OFF + L3(v6) || (v6 ? f[RNIC_IP_OFF + 6] : f[RNIC_IP_OFF + 9]) != RNIC_IPPROTO_UDP ||
	    rnic_be16(f + RNIC_UDP_OFF + L3(v6) + 2) != RNIC_ROCE_UDP_PORT)
		return 0;
	if (fw_gsi_parse(f, len, &p)) {
		fw.gsi.drop_malformed++;
		return 1;
	}
	if (deferred_n == GSI_DEFERRED) {
		fw.gsi.drop_busy++; /* the peer's CM sends it again */
		return 1;
	}
	k = (deferred_head + deferred_n++) % GSI_DEFERRED;
	deferred[k].p = p;
	memcpy(deferred[k].mad, mad_of(&p, f), CM_MAD_LEN);
	return 1;
}

void fw_gsi_poll(void)
{
	while (deferred_n) {
		uint32_t k = deferred_head;

		deferred_head = (deferred_head + 1) % GSI_DEFERRED;
		deferred_n--;
		fw_cm_input(&deferred[k].p, deferred[k].mad);
	}
}
