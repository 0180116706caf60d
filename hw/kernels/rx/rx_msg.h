/* What the RX kernel's stages pass each other (docs/ARCHITECTURE.md, "Kernels"):
 *   rx_mac --macq--> rx_icrc_mask --maskq--> rx_icrc_fold --foldq--> rx_icrc_shift --shiftq-->
 *   rx_icrc_sum --sumq--> rx_icrc_check --beatq--> rx_core
 * Every beat of the MAC's stream goes down the chain, one stage a clock, so a frame's last beat
 * reaches rx_core with its ICRC's verdict. The MAC cannot be stalled: each stage takes its input
 * FIFO's head in every clock it has one, so no FIFO holds more than one entry and none is full. */
#ifndef RX_MSG_H
#define RX_MSG_H

#include "rnic_kernel.h"
#include "rnic_fifo.h"

typedef struct {
	uint8_t data[RNIC_BEAT];
	uint8_t n;    /* bytes of it that are the frame's (a one-beat frame's Ethernet padding off) */
	uint8_t no;   /* its number in the frame, saturated at 2 (what the ICRC's mask needs) */
	uint8_t v6;   /* the frame is IPv6 (its first beat's EtherType) */
	uint8_t last;
} rx_beat_t;

typedef struct {
	rx_beat_t b;
	uint8_t m[RNIC_BEAT]; /* the beat with the fields the ICRC does not cover masked */
	uint32_t d;           /* the masked beat's CRC from state 0 */
	uint32_t icrc;        /* last beat: the frame's last 4 bytes (little-endian) */
} rx_masked_t;

/* last beat: what the ICRC covers, w[0, 60 + n) (the beat before and this one, or zeros and this
 * one), with the CRC state before it in its first 4 bytes, to be moved right by s = 68 - n */
typedef struct {
	rx_beat_t b;
	uint8_t w[2 * RNIC_BEAT];
	uint8_t s;
	uint32_t icrc;
} rx_window_t;

/* last beat: the same, ending at byte 128: its CRC from state 0 is the frame's */
typedef struct {
	rx_beat_t b;
	uint8_t z[2 * RNIC_BEAT];
	uint32_t icrc;
} rx_shifted_t;

typedef struct {
	rx_beat_t b;
	uint32_t lo, hi; /* last beat: CRCs from state 0 of z's two halves */
	uint32_t icrc;
} rx_sums_t;

typedef struct {
	rx_beat_t b;
	uint8_t crc_ok; /* last beat: the ICRC matches */
} rx_checked_t;

RNIC_FIFO(rx_macq, rx_beat_t, 1)
RNIC_FIFO(rx_maskq, rx_masked_t, 1)
RNIC_FIFO(rx_foldq, rx_window_t, 1)
RNIC_FIFO(rx_shiftq, rx_shifted_t, 1)
RNIC_FIFO(rx_sumq, rx_sums_t, 1)
RNIC_FIFO(rx_beatq, rx_checked_t, 1)

#endif
