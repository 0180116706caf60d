/* The ICRC (RoCEv2 annex A17.3.3) of a stream of frames, a beat a clock: three stages that RX
 * (rx_icrc_check compares) and TX (tx_icrc_put writes it) each have an instance of
 * (rnic_icrc.c). A beat goes down the chain unchanged, one stage a clock; on a frame's last beat
 * the chain adds the two CRCs the frame's ICRC is made of. */
#ifndef RNIC_ICRC_H
#define RNIC_ICRC_H

#include "rnic_kernel.h"
#include "rnic_fifo.h"

/* A beat of an Ethernet frame; a frame starts at a beat's byte 0 */
typedef struct {
	uint8_t data[RNIC_BEAT];
	uint8_t n;    /* bytes of it that are the frame's (a one-beat frame's Ethernet padding off) */
	uint8_t no;   /* its number in the frame, saturated at 2 (what the ICRC's mask needs) */
	uint8_t v6;   /* the frame is IPv6 (its first beat's EtherType) */
	uint8_t last;
	/* TX (0 on RX): the frame leaves with a bad ICRC (its payload was refused or its region
	 * gone); the next beat is the frame's last and its ICRC begins in this one */
	uint8_t bad, hold;
} rnic_ebeat_t;

/* last beat: what the ICRC covers, w[0, 60 + n) (the beat before and this one, or zeros and this
 * one), with the CRC state before it in its first 4 bytes, to be moved right by s = 68 - n */
typedef struct {
	rnic_ebeat_t b;
	uint8_t w[2 * RNIC_BEAT];
	uint8_t s;
	uint32_t icrc; /* last beat: the frame's last 4 bytes (little-endian) */
} rnic_icrc_window_t;

/* last beat: the same, ending at byte 128: its CRC from state 0 is the frame's */
typedef struct {
	rnic_ebeat_t b;
	uint8_t z[2 * RNIC_BEAT];
	uint32_t icrc;
} rnic_icrc_shifted_t;

typedef struct {
	rnic_ebeat_t b;
	uint32_t lo, hi; /* last beat: CRCs from state 0 of z's two halves: the ICRC is
			  * ~(T(lo) ^ hi) (rnic_icrc_of) */
	uint32_t icrc;
} rnic_icrc_sums_t;

RNIC_FIFO(icrc_inq, rnic_ebeat_t, 1)
RNIC_FIFO(icrc_foldq, rnic_icrc_window_t, 1)
RNIC_FIFO(icrc_shiftq, rnic_icrc_shifted_t, 1)
RNIC_FIFO(icrc_sumq, rnic_icrc_sums_t, 1)

typedef struct {
	uint8_t prev[3];         /* the last bytes of the beat before: an ICRC may begin there */
	uint32_t crc;            /* the frame's CRC up to the beat before the one held */
	uint32_t hd;             /* the beat held (not yet known to be free of ICRC bytes): its CRC */
	uint8_t hm[RNIC_BEAT];   /* ... and its masked bytes */
} rnic_icrc_fold_t;

void rnic_icrc_fold(rnic_icrc_fold_t *st, rnic_icrc_inq_t *in, rnic_icrc_foldq_t *out);
void rnic_icrc_shift(rnic_icrc_foldq_t *in, rnic_icrc_shiftq_t *out);
void rnic_icrc_sum(rnic_icrc_shiftq_t *in, rnic_icrc_sumq_t *out);
/* the frame's ICRC from a last beat's sums */
uint32_t rnic_icrc_of(const rnic_icrc_sums_t *s);

#endif
