/* The firmware's neighbours: ARP (RFC 826) and IPv6 neighbour discovery (RFC 4861) for the NIC's
 * own addresses and for the peers it resolves, the frames the RX kernel hands over, and a
 * RoCEv2 GID's MAC. */
#include "fw.h"
#include "hal.h"
#include "rnic_frame.h"

/* ---- ARP */
uint32_t fw_arp_build(uint8_t *f, uint32_t op, const uint8_t *tha, uint32_t tpa)
{
	static const uint8_t hdr[8] = {0, 1, 8, 0, 6, 4, 0, 0};
	uint32_t i;

	for (i = 0; i < 6; i++) {
		f[i] = op == 1 ? 0xff : tha[i];
		f[6 + i] = fw.mac[i];
		f[22 + i] = fw.mac[i];
		f[32 + i] = op == 1 ? 0 : tha[i];
	}
	f[12] = 0x08;
	f[13] = 0x06;
	memcpy(f + 14, hdr, 8);
	f[21] = (uint8_t)op;
	for (i = 0; i < 4; i++) {
		f[28 + i] = (uint8_t)(fw.ip >> (24 - 8 * i));
		f[38 + i] = (uint8_t)(tpa >> (24 - 8 * i));
	}
	return 42;
}

static void arp_learn(uint32_t ip, const uint8_t *mac)
{
	uint32_t i, slot = fw.arp_next;

	for (i = 0; i < FW_ARP_ENTRIES; i++)
		if (fw.arp[i].valid && fw.arp[i].ip == ip)
			slot = i;
	if (slot == fw.arp_next)
		fw.arp_next = (fw.arp_next + 1) % FW_ARP_ENTRIES;
	fw.arp[slot].ip = ip;
	memcpy(fw.arp[slot].mac, mac, 6);
	fw.arp[slot].valid = 1;
}

int fw_arp_lookup(uint32_t ip, uint8_t *mac)
{
	uint32_t i;

	if (ip == fw.ip) {
		memcpy(mac, fw.mac, 6);
		return 0;
	}
	for (i = 0; i < FW_ARP_ENTRIES; i++) {
		if (fw.arp[i].valid && fw.arp[i].ip == ip) {
			memcpy(mac, fw.arp[i].mac, 6);
			return 0;
		}
	}
	return -1;
}

/* An Ethernet II ARP frame for IPv4: learn the sender of a request for our address, or of the
 * reply to the request we have out (an unsolicited reply would let anyone redirect a peer's
 * traffic); answer a request for our address. */
void fw_arp_input(const uint8_t *f, uint32_t len)
{
	uint32_t op, spa, tpa;

	if (len < 42 || f[12] != 0x08 || f[13] != 0x06 || f[14] != 0 || f[15] != 1 || f[16] != 8 ||
	    f[17] != 0 || f[18] != 6 || f[19] != 4) {
		fw.drops++;
		return;
	}
	op = ((uint32_t)f[20] << 8) | f[21];
	spa = rnic_be32(f + 28);
	tpa = rnic_be32(f + 38);
	if ((op == 2 && spa == fw.arp_wanted && spa) || (op == 1 && tpa == fw.ip))
		arp_learn(spa, f + 22);
	if (op == 1 && tpa == fw.ip)
		hal_pkt_send(fw_arp_build(hal_pkt_tx_buf(), 2, f + 22, spa));
}

/* ---- IPv6 neighbour discovery (RFC 4861): what ARP is to IPv4 */
#define ND_LEN (14 + 40 + 24 + 8) /* NS/NA with one link-layer address option */

static void nd_learn(const uint8_t *ip, const uint8_t *mac)
{
	uint32_t i, slot = fw.nd_next;

	for (i = 0; i < FW_ARP_ENTRIES; i++)
		if (fw.nd[i].valid && !memcmp(fw.nd[i].ip, ip, 16))
			slot = i;
	if (slot == fw.nd_next)
		fw.nd_next = (fw.nd_next + 1) % FW_ARP_ENTRIES;
	memcpy(fw.nd[slot].ip, ip, 16);
	memcpy(fw.nd[slot].mac, mac, 6);
	fw.nd[slot].valid = 1;
}

static int nd_lookup(const uint8_t *ip, uint8_t *mac)
{
	uint32_t i;

	if (!memcmp(ip, fw.ip6, 16)) {
		memcpy(mac, fw.mac, 6);
		return 0;
	}
	for (i = 0; i < FW_ARP_ENTRIES; i++) {
		if (fw.nd[i].valid && !memcmp(fw.nd[i].ip, ip, 16)) {
			memcpy(mac, fw.nd[i].mac, 6);
			return 0;
		}
	}
	return -1;
}

/* ICMPv6 checksum over the pseudo-header and the message at f + 54 (len bytes). */
static uint32_t icmp6_csum(const uint8_t *f, uint32_t len)
{
	uint32_t sum = len + 58, i;

	for (i = 0; i < 32; i += 2)
		sum += ((uint32_t)f[22 + i] << 8) | f[23 + i];
	for (i = 0; i < len; i += 2)
		sum += ((uint32_t)f[54 + i] << 8) | (i + 1 < len ? f[55 + i] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/* A neighbour solicitation for `target` (type 135, to its solicited-node multicast address), or
 * an advertisement of our address to `dst`/`dmac` (type 136, solicited and override). */
uint32_t fw_nd_build(uint8_t *f, uint32_t type, const uint8_t *target, const uint8_t *dst, const uint8_t *dmac)
{
	uint32_t i, c;

	memset(f, 0, ND_LEN);
	if (type == 135) {
		f[0] = 0x33;
		f[1] = 0x33;
		f[2] = 0xff;
		memcpy(f + 3, target + 13, 3);
		f[38] = 0xff;
		f[39] = 0x02;
		f[49] = 0x01;
		f[50] = 0xff;
		memcpy(f + 51, target + 13, 3);
	} else {
		memcpy(f, dmac, 6);
		memcpy(f + 38, dst, 16);
	}
	for (i = 0; i < 6; i++)
		f[6 + i] = fw.mac[i];
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[19] = 32;   /* payload length */
	f[20] = 58;   /* ICMPv6 */
	f[21] = 255;  /* hop limit, as ND requires */
	memcpy(f + 22, fw.ip6, 16);
	f[54] = (uint8_t)type;
	if (type == 136)
		f[58] = 0x60; /* solicited, override */
	memcpy(f + 62, type == 135 ? target : fw.ip6, 16);
	f[78] = type == 135 ? 1 : 2; /* source / target link-layer address */
	f[79] = 1;
	memcpy(f + 80, fw.mac, 6);
	c = icmp6_csum(f, 32);
	f[56] = (uint8_t)(c >> 8);
	f[57] = (uint8_t)c;
	return ND_LEN;
}

/* An IPv6 frame: neighbour solicitations for our address are answered (and their sender learnt),
 * the advertisement of the address being resolved is learnt, no other. */
void fw_nd_input(const uint8_t *f, uint32_t len)
{
	uint32_t plen;

	if (len < 14 + 40 + 24 || f[20] != 58 || f[21] != 255) {
		fw.drops++;
		return;
	}
	plen = ((uint32_t)f[18] << 8) | f[19];
	if (plen < 24 || 54 + plen > len || icmp6_csum(f, plen) != 0) {
		fw.drops++;
		return;
	}
	if (f[54] == 135 && !memcmp(f + 62, fw.ip6, 16)) {
		nd_learn(f + 22, f + 6);
		hal_pkt_send(fw_nd_build(hal_pkt_tx_buf(), 136, 0, f + 22, f + 6));
	} else if (f[54] == 136 && fw.nd_wanted[0] && !memcmp(f + 62, fw.nd_wanted, 16)) {
		nd_learn(f + 62, plen >= 32 && f[78] == 2 ? f + 80 : f + 6);
	}
}

/* The oldest frame held, if any. A MAD is set aside for the main loop (fw_gsi_input), so frame
 * handling never runs inside frame handling or inside a command, whose resolution serves frames
 * while it waits; and what the CM does with MADs never resolves (it has the peer's MAC from the
 * peer's own frames). There is no recursion (tests/test_firmware.py checks the call graph). */
static uint8_t busy; /* a frame is being handled, or a peer resolved: a resolution now fails */

static void poll_frame(void)
{
	const uint8_t *f;
	uint32_t len = hal_pkt_rx(&f);
	uint8_t outer = busy; /* the caller's: a resolution may be polling frames */

	if (!len)
		return;
	busy = 1;
	if (fw_gsi_input(f, len))
		;
	else if (len >= 14 && f[12] == 0x86 && f[13] == 0xdd)
		fw_nd_input(f, len);
	else
		fw_arp_input(f, len);
	busy = outer;
	hal_pkt_rx_pop();
}

/* the MADs set aside to the CM, oldest first */
static void gsi_poll(void)
{
	busy = 1;
	fw_gsi_poll();
	busy = 0;
}

void fw_poll_frames(void)
{
	gsi_poll(); /* those a command's resolution set aside came first (and leave room) */
	poll_frame();
	gsi_poll();
}

/* Resolve an IPv6 peer's MAC: cache, else up to FW_ARP_TRIES solicitations. */
static int nd_resolve(const uint8_t *ip, uint8_t *mac)
{
	uint32_t t;
	uint64_t start;

	if (!nd_lookup(ip, mac))
		return 0;
	if (busy)
		return -1;
	busy = 1;
	memcpy(fw.nd_wanted, ip, 16);
	for (t = 0; t < FW_ARP_TRIES; t++) {
		hal_pkt_send(fw_nd_build(hal_pkt_tx_buf(), 135, ip, 0, 0));
		start = hal_cycles();
		while (hal_cycles() - start < FW_ARP_WAIT_CYCLES) {
			poll_frame();
			if (!nd_lookup(ip, mac)) {
				memset(fw.nd_wanted, 0, 16);
				busy = 0;
				return 0;
			}
		}
	}
	memset(fw.nd_wanted, 0, 16);
	busy = 0;
	return -1;
}

/* Resolve an IPv4 peer's MAC: cache, else up to FW_ARP_TRIES requests, serving frames meanwhile. */
static int arp_resolve(uint32_t ip, uint8_t *mac)
{
	uint32_t t;
	uint64_t start;

	if (!fw_arp_lookup(ip, mac))
		return 0;
	if (busy)
		return -1;
	busy = 1;
	fw.arp_wanted = ip;
	for (t = 0; t < FW_ARP_TRIES; t++) {
		hal_pkt_send(fw_arp_build(hal_pkt_tx_buf(), 1, 0, ip));
		start = hal_cycles();
		while (hal_cycles() - start < FW_ARP_WAIT_CYCLES) {
			poll_frame();
			if (!fw_arp_lookup(ip, mac)) {
				fw.arp_wanted = 0;
				busy = 0;
				return 0;
			}
		}
	}
	fw.arp_wanted = 0;
	busy = 0;
	return -1;
}

/* RoCEv2 over IPv4: a GID is the IPv4-mapped IPv6 address; 0 and the address, or -1. */
int fw_gid_ipv4(const uint8_t *gid, uint32_t *ip)
{
	uint32_t i;

	for (i = 0; i < 10; i++)
		if (gid[i])
			return -1;
	if (gid[10] != 0xff || gid[11] != 0xff)
		return -1;
	*ip = rnic_be32(gid + 12);
	return 0;
}

/* The MAC behind a RoCEv2 GID: ARP for an IPv4-mapped one, neighbour discovery otherwise. */
uint32_t fw_gid_resolve(const uint8_t *gid, uint8_t *mac)
{
	uint32_t ip;

	if (!fw_gid_ipv4(gid, &ip)) {
		if (!arp_resolve(ip, mac))
			return RNIC_CMD_ST_OK;
		fw_printf("no ARP reply from %I\n", ip);
		return RNIC_CMD_ST_UNREACHABLE;
	}
	if (gid[0] == 0xff)
		return RNIC_CMD_ST_BAD_PARAM; /* multicast */
	if (!nd_resolve(gid, mac))
		return RNIC_CMD_ST_OK;
	fw_printf("no neighbour advertisement for %x%x::%x%x\n", gid[0], gid[1], gid[14], gid[15]);
	return RNIC_CMD_ST_UNREACHABLE;
}
