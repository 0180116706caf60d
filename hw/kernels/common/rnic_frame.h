/* RoCEv2 frames as the datapath and the firmware build and check them: layout, byte order,
 * PSN arithmetic, CRC-32/ICRC and the IPv4 checksum. HLS-synthesizable C, and freestanding (the
 * firmware's QP1 builds its MAD frames with it). */
#ifndef RNIC_FRAME_H
#define RNIC_FRAME_H

#include <stdint.h>
#include "rnic_spec.h"

#define RNIC_BEAT 64

/* RoCEv2 over IPv4 frame layout (byte offsets from the start of the Ethernet frame); over IPv6
 * everything from UDP on sits RNIC_IP6_EXTRA bytes later. */
#define RNIC_ETH_HLEN 14
#define RNIC_ETHERTYPE_IPV4 0x0800
#define RNIC_ETHERTYPE_ARP 0x0806
#define RNIC_ETHERTYPE_IPV6 0x86dd
#define RNIC_IP6_HLEN 40
#define RNIC_IP6_EXTRA (RNIC_IP6_HLEN - RNIC_IP_HLEN) /* IPv6 moves UDP and BTH on by this */
#define RNIC_IP_OFF 14
#define RNIC_IP_HLEN 20
#define RNIC_UDP_OFF 34
#define RNIC_UDP_HLEN 8
#define RNIC_BTH_OFF 42
#define RNIC_BTH_LEN 12
#define RNIC_XTH_OFF 54 /* first extended transport header (RETH, AETH, ImmDt ...) */
#define RNIC_RETH_LEN 16
#define RNIC_AETH_LEN 4
#define RNIC_IMM_LEN 4
#define RNIC_ICRC_LEN 4
#define RNIC_IPPROTO_UDP 17
#define RNIC_PAGE_SIZE_BYTES (1u << RNIC_PAGE_SHIFT)

/* BTH byte 2 flag bits (IBTA Vol. 1 9.2): SE, MigReq, pad count, TVer; byte 8 bit 7: AckReq. */
#define RNIC_BTH_SE 0x80
#define RNIC_BTH_MIG 0x40
#define RNIC_BTH_PAD_SHIFT 4
#define RNIC_BTH_ACKREQ 0x80

static inline uint32_t rnic_be16(const uint8_t *p)
{
	return ((uint32_t)p[0] << 8) | p[1];
}

static inline uint32_t rnic_be24(const uint8_t *p)
{
	return ((uint32_t)p[0] << 16) | ((uint32_t)p[1] << 8) | p[2];
}

static inline uint32_t rnic_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline uint64_t rnic_be64(const uint8_t *p)
{
	return ((uint64_t)rnic_be32(p) << 32) | rnic_be32(p + 4);
}

static inline void rnic_put_be16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void rnic_put_be24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void rnic_put_be32(uint8_t *p, uint32_t v)
{
	rnic_put_be16(p, v >> 16);
	rnic_put_be16(p + 2, v);
}

static inline void rnic_put_be64(uint8_t *p, uint64_t v)
{
	rnic_put_be32(p, (uint32_t)(v >> 32));
	rnic_put_be32(p + 4, (uint32_t)v);
}

/* 24-bit PSN arithmetic (IBTA 9.7.1: PSNs compare within half the 2^24 space). */
#define RNIC_PSN_MASK 0xffffffu
static inline int32_t rnic_psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(((a - b) & RNIC_PSN_MASK) << 8) >> 8;
}

/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320): the ICRC polynomial (IBTA 7.8.1).
 * State form: start with 0xffffffff, finish with ~state. The state after the RNIC_BEAT bytes of
 * p, in parallel form (rnic_crc.c). */
uint32_t rnic_crc32_beat(uint32_t crc, const uint8_t *p);

/* The bytes of a RoCEv2 frame's beat as the ICRC covers them (RoCEv2 annex A17.3.3): the fields
 * routers change are taken as all ones: IPv4 TOS, TTL and header checksum, or IPv6 traffic class,
 * flow label and hop limit; the UDP checksum and BTH resv8a. The Ethernet header is not covered:
 * its bytes become zeros, which the ICRC's seed accounts for (RNIC_ICRC_SEED, icrc_seed.py). `beat_no` 0 is
 * the beat holding the headers (with IPv6, BTH resv8a is in beat 1). */
static inline void rnic_icrc_mask(uint8_t b[RNIC_BEAT], const uint8_t beat[RNIC_BEAT], int beat_no, int v6)
{
	int i;

	for (i = 0; i < RNIC_BEAT; i++) {
#pragma HLS UNROLL
		b[i] = beat_no == 0 && i < RNIC_ETH_HLEN ? 0 : beat[i];
	}
	if (beat_no == 0 && v6) {
		b[RNIC_IP_OFF] |= 0x0f;     /* traffic class, flow label */
		b[RNIC_IP_OFF + 1] = 0xff;
		b[RNIC_IP_OFF + 2] = 0xff;
		b[RNIC_IP_OFF + 3] = 0xff;
		b[RNIC_IP_OFF + 7] = 0xff;  /* hop limit */
		b[RNIC_UDP_OFF + RNIC_IP6_EXTRA + 6] = 0xff;
		b[RNIC_UDP_OFF + RNIC_IP6_EXTRA + 7] = 0xff;
	} else if (beat_no == 0) {
		b[RNIC_IP_OFF + 1] = 0xff;  /* TOS (DSCP/ECN) */
		b[RNIC_IP_OFF + 8] = 0xff;  /* TTL */
		b[RNIC_IP_OFF + 10] = 0xff; /* header checksum */
		b[RNIC_IP_OFF + 11] = 0xff;
		b[RNIC_UDP_OFF + 6] = 0xff; /* UDP checksum */
		b[RNIC_UDP_OFF + 7] = 0xff;
		b[RNIC_BTH_OFF + 4] = 0xff; /* resv8a (FECN/BECN) */
	} else if (beat_no == 1 && v6) {
		b[RNIC_BTH_OFF + RNIC_IP6_EXTRA + 4 - RNIC_BEAT] = 0xff; /* resv8a */
	}
}

/* IPv4 header checksum (RFC 791) of the 20-byte header at p, checksum field taken as zero. */
static inline uint32_t rnic_ipv4_csum(const uint8_t *p)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < RNIC_IP_HLEN; i += 2) {
#pragma HLS UNROLL
		if (i != 10)
			sum += rnic_be16(p + i);
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

#endif
