/* Shared by the datapath kernels: frame layout, CRC-32/ICRC and IPv4 checksum.
 *
 * Everything here is Vitis-HLS-synthesizable C: fixed-size data, bounded loops, no heap.
 * The per-clock contract every kernel follows is described in docs/ARCHITECTURE.md
 * ("Kernel contract"): one call of <kernel>_step() per clock, all outputs registered.
 */
#ifndef RNIC_KERNEL_H
#define RNIC_KERNEL_H

#include <stdint.h>
#include "rnic_spec.h"
#include "rnic_ports.h"

#define RNIC_BEAT 64

/* RoCEv2 over IPv4 frame layout (byte offsets from the start of the Ethernet frame). */
#define RNIC_ETH_HLEN 14
#define RNIC_ETHERTYPE_IPV4 0x0800
#define RNIC_ETHERTYPE_ARP 0x0806
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
 * State form: start with 0xffffffff, finish with ~state. */
uint32_t rnic_crc32_byte(uint32_t crc, uint8_t b);

static inline uint32_t rnic_crc32(uint32_t crc, const uint8_t *p, int n)
{
	int i;

	for (i = 0; i < RNIC_BEAT; i++) {
#pragma HLS UNROLL
		if (i < n)
			crc = rnic_crc32_byte(crc, p[i]);
	}
	return crc;
}

/* ICRC over one beat of a RoCEv2/IPv4 frame (RoCEv2 annex A17.3.3): the Ethernet header is not
 * covered; 8 bytes of 0xff stand in for the LRH; IP TOS, TTL and header checksum, the UDP
 * checksum and BTH resv8a are taken as all ones.  `beat_no` 0 is the beat holding the headers;
 * `n` bytes of the beat are covered (the ICRC itself is excluded by the caller). */
static inline uint32_t rnic_icrc_beat(uint32_t crc, const uint8_t beat[RNIC_BEAT], int beat_no, int n)
{
	uint8_t b[RNIC_BEAT];
	int i;

	for (i = 0; i < RNIC_BEAT; i++) {
#pragma HLS UNROLL
		b[i] = beat[i];
	}
	if (beat_no == 0) {
		crc = 0xffffffffu;
		for (i = 0; i < 8; i++) {
#pragma HLS UNROLL
			crc = rnic_crc32_byte(crc, 0xff);
		}
		b[RNIC_IP_OFF + 1] = 0xff;  /* TOS (DSCP/ECN) */
		b[RNIC_IP_OFF + 8] = 0xff;  /* TTL */
		b[RNIC_IP_OFF + 10] = 0xff; /* header checksum */
		b[RNIC_IP_OFF + 11] = 0xff;
		b[RNIC_UDP_OFF + 6] = 0xff; /* UDP checksum */
		b[RNIC_UDP_OFF + 7] = 0xff;
		b[RNIC_BTH_OFF + 4] = 0xff; /* resv8a (FECN/BECN) */
		for (i = RNIC_ETH_HLEN; i < RNIC_BEAT; i++) {
#pragma HLS UNROLL
			if (i < n)
				crc = rnic_crc32_byte(crc, b[i]);
		}
		return crc;
	}
	return rnic_crc32(crc, b, n);
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
