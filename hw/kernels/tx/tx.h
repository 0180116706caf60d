/* TX kernel: RC requester (RDMA WRITE) and its completion tracking. */
#ifndef RNIC_TX_H
#define RNIC_TX_H

#include "rnic_kernel.h"

#define TX_OB 64          /* outstanding (sent, unacknowledged) WQEs per QP */
#define TX_REQ_FIFO 64    /* DMA read requests in flight */
#define TX_CREDIT 32768   /* payload bytes in flight: covers 600 ns at 13 GB/s four times */
#define TX_CPL_FIFO 16
#define TX_ACC 192        /* byte packer: three beats */

typedef struct {
	uint64_t wr_id;
	uint64_t ts;
	uint32_t first_psn, last_psn;
	uint32_t len;
	uint16_t index;      /* SQ index of the WQE */
	uint8_t signaled;
} tx_ob_t;

typedef struct {
	uint64_t ts_db;     /* cycle of the last doorbell */
	uint64_t t_sent;    /* last progress: the ACK timer runs from here */
	uint8_t retries;    /* go-back-N rounds since the last progress */
	uint8_t restart;    /* the WQE at restart_index resumes at restart_psn */
	uint16_t restart_index;
	uint32_t restart_psn;
	uint32_t psn;       /* next PSN to send */
	uint16_t pi, ci;    /* SQ producer (doorbell) and next WQE to fetch */
	uint16_t ob_head, ob_tail;
	uint8_t state;      /* state of the last committed QPC */
	uint8_t err;        /* error: WQEs complete with WR_FLUSH_ERR */
} tx_qp_t;

typedef struct {
	uint64_t addr;
	uint32_t len;
	uint32_t mpt;
} tx_sge_t;

typedef struct {
	rnic_tables_t t;
	tx_qp_t qp[RNIC_MAX_QP];
	tx_ob_t ob[RNIC_MAX_QP][TX_OB];
	uint32_t rr;                 /* round-robin scheduler position */
	uint8_t sched_hint;          /* something may have become ready since the last scan */

	/* the next WQE, fetched while the current message finishes */
	uint8_t pf_state;            /* 0 none, 1 fetching, 2 ready */
	uint32_t pf_qpn, pf_beats;
	uint8_t pf_wqe[RNIC_WQE_BYTES];

	/* go-back-N: the message in progress stops at its next packet boundary (cancel), the
	 * payload reads it still has in flight are discarded (drain) */
	uint8_t cancel, drain, pf_discard;
	uint32_t timer_q;            /* ACK timers are checked one QP per clock */
	uint64_t now;

	/* the message in progress */
	uint8_t phase;               /* 0 idle, 1 sending */
	uint32_t qpn;
	uint8_t wqe[RNIC_WQE_BYTES];
	tx_sge_t sge[RNIC_MAX_SGE];
	uint32_t nsge;
	uint32_t msg_len, mtu, npkts;
	uint8_t inline_data;

	/* DMA read issuer: walks the message over its SGEs, cut at packets, pages and 4 KiB */
	uint32_t iss_off, iss_sge, iss_sge_off;
	uint32_t credit;             /* bytes issued and not yet consumed */
	uint16_t req_len[TX_REQ_FIFO];
	uint32_t req_head, req_tail;
	uint32_t req_left;           /* bytes of the head request not yet consumed */

	/* packet emitter */
	uint8_t e_state;             /* 0 header, 1 payload, 2 tail, 3 drain */
	uint32_t pkt, pkt_pay_left, hdr_len, hdr_pos;
	uint8_t hdr[2 * RNIC_BEAT];
	uint32_t crc;
	uint8_t acc[TX_ACC];
	uint32_t acc_n;
	uint8_t frame_end;           /* the packer holds the end of the frame */

	/* acknowledgements and completions */
	uint8_t ack_busy;
	uint32_t ack_qpn, ack_psn, ack_syn;
	rnic_cpl_t cpl[TX_CPL_FIFO];
	uint32_t cpl_head, cpl_tail;

	rnic_tx_out_t o;             /* outputs presented during the current cycle */
} rnic_tx_state_t;

void rnic_tx_step(rnic_tx_state_t *st, const rnic_tx_in_t *in, rnic_tx_out_t *out);

#endif
