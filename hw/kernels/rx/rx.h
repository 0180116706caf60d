/* RX kernel: RoCEv2 receive path and RC responder (RDMA WRITE). */
#ifndef RNIC_RX_H
#define RNIC_RX_H

#include "rnic_kernel.h"

#define RX_BUF_BEATS 256 /* frame store: 16 KiB, three maximum-size frames */
#define RX_MAX_FRAMES 16

typedef struct {
	uint16_t start; /* first beat in the frame store */
	uint16_t beats;
	uint16_t len;   /* bytes */
	uint8_t icrc_ok;
} rx_frame_t;

/* Per-QP responder state (IBTA 9.7.5: expected PSN, MSN, the WRITE in progress). */
typedef struct {
	uint32_t epsn;
	uint32_t msn;
	uint64_t va;        /* next byte of the WRITE in progress */
	uint32_t remaining; /* bytes of it still to come */
	uint32_t mpt;
	uint8_t in_write;
	uint8_t nak_sent;   /* a sequence-error NAK is outstanding (9.7.5.1.3) */
} rx_qp_t;

typedef struct {
	rnic_tables_t t;
	rx_qp_t qp[RNIC_MAX_QP];

	/* reception side */
	uint8_t buf[RX_BUF_BEATS][RNIC_BEAT];
	rx_frame_t frames[RX_MAX_FRAMES];
	uint32_t fr_head, fr_tail;  /* frame queue (free running) */
	uint32_t wr_beat;           /* next free beat (free running) */
	uint32_t rd_beat;           /* oldest beat in use (free running) */
	uint32_t cur_start, cur_beats, cur_len, crc;
	uint8_t cur_drop, in_frame;
	uint8_t held[RNIC_BEAT];    /* previous beat: its CRC waits until we know the frame length */
	uint32_t held_n;

	/* processing side: the frame at fr_head */
	uint8_t busy;               /* 0 idle, 1 DMA write, 2 to firmware, 3 ACK pending */
	uint32_t src;               /* byte offset in the frame of the next payload byte */
	uint32_t seg_left;          /* bytes left in the current DMA write */
	uint32_t pay_left;          /* payload bytes left in the frame */
	uint64_t seg_addr;
	uint32_t seg_len;
	uint32_t fw_beat;
	uint32_t qpn;
	uint8_t ack_frame[RNIC_BEAT];
	uint8_t ack_len;
	uint8_t send_ack;

	rnic_rx_out_t o;            /* outputs presented during the current cycle */
} rnic_rx_state_t;

void rnic_rx_step(rnic_rx_state_t *st, const rnic_rx_in_t *in, rnic_rx_out_t *out);

#endif
