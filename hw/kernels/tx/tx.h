/* TX kernel: every frame the NIC sends on RoCE: RC requests, and the responder's frames (ACK/NAK,
 * ATOMIC ACK, RDMA READ responses) handed over by the RX kernel. */
#ifndef RNIC_TX_H
#define RNIC_TX_H

#include "rnic_kernel.h"

#define TX_OB 64          /* outstanding (sent, unacknowledged) WQEs per QP */
#define TX_REQ_FIFO 64    /* DMA reads in flight */
#define TX_CREDIT 32768   /* payload bytes in flight: covers 600 ns at 13 GB/s four times */
#define TX_CPL_FIFO 16
#define TX_ACC 192        /* byte packer: three beats */
#define TX_PKT_FIFO 64    /* packets built (headers, reads issued) and not yet emitted: their payload
                          * reads cover the PCIe round trip for 64-byte messages too */
#define TX_RSP_FIFO 16    /* responder frames waiting */
#define TX_HDR 160        /* header bytes of one packet, inline payload included */
#define TX_PF 64          /* WQEs fetched ahead (8 KiB of BRAM): a PCIe round trip of 64-byte messages */
#define TX_PF_BATCH 8     /* WQEs of one QP in one DMA read (1 KiB, never across a 4 KiB page) */
#define TX_WAKE 32        /* QPs woken (registers), waiting to join the active list */
#define TX_WAKE_CLK 9     /* wakes one clock can make: two doorbells (rung, pushed), an ACK or a
			   * timer (2), a UC/UD retirement, a QPC commit, a message started, one
			   * cancelled, the scheduler's own */

/* a slot of the prefetch ring: its tags (registers: tx_unfetch looks at every slot at once);
 * the WQE itself is in pf_wqe, a block RAM */
typedef struct {
	uint16_t qpn;
	uint16_t index;      /* SQ index of the WQE */
	uint8_t ready;       /* its data has arrived */
	uint8_t discard;     /* its QP went back or away meanwhile: dropped when it reaches the head */
} tx_pf_t;

typedef struct {
	uint64_t wr_id;
	uint64_t ts;
	uint32_t first_psn, last_psn;
	uint32_t len;
	uint16_t index;      /* SQ index of the WQE */
	uint8_t signaled;
	uint8_t op;          /* enum WQE_OP */
	uint8_t err;         /* its completion status if the QP fails with it outstanding (else flush) */
} tx_ob_t;

typedef struct {
	uint64_t hold_until;/* RNR NAK: nothing is sent before this cycle */
	uint8_t retries;    /* go-back-N rounds since the last progress */
	uint8_t rnr_retries;
	uint8_t restart;    /* the WQE at restart_index resumes at restart_psn */
	uint16_t restart_index;
	uint32_t restart_psn;
	uint32_t psn;       /* next PSN to send */
	uint32_t rd_next;   /* the first READ response PSN not placed yet (RX's notices) */
	uint8_t pf_n;       /* WQEs fetched ahead (in the prefetch ring), not started yet */
	uint16_t ob_head, ob_tail;
	uint8_t rd_out;     /* READ/atomic WQEs outstanding */
	uint8_t rd_wait;    /* the next WQE waits for a READ/atomic to complete (limit or fence) */
	uint8_t state;      /* state of the last committed QPC */
	uint8_t err;        /* error: WQEs complete with WR_FLUSH_ERR */
} tx_qp_t;

typedef struct {
	uint64_t addr;
	uint32_t len;
	uint32_t key;        /* checked again (rnic_key_live) before each DMA read from it */
} tx_sge_t;

typedef struct {
	uint8_t hdr[TX_HDR];
	uint16_t hdr_len;    /* bytes of hdr sent (headers and inline payload) */
	uint16_t pay_len;    /* payload bytes from DMA reads */
	uint8_t pad;
	uint8_t retire;      /* UC/UD: the message's last packet, its WQE completes once sent */
	uint8_t v6;          /* RoCEv2 over IPv6 */
	uint8_t poison;      /* its payload's region went away: sent with a bad ICRC, nobody takes it */
	uint16_t qpn;
} tx_pkt_t;

typedef struct {
	/* The QP events' memories: qp (each QP's entry) and the QPC table t. An event reads and
	 * writes one QP's entry and reads its QPC entry: a commit, a pushed WQE, an ACK notice, a
	 * WQE started, a UC/UD WQE retired as its last packet leaves, a message poisoned, the
	 * scheduler's fetch; the ACK timer takes a clock none of them takes (qp_port). */
	rnic_tables_t t;
	uint8_t commit_valid;        /* a QPC committed last clock, to act on */
	uint16_t commit_qpn;
	tx_qp_t qp[RNIC_MAX_QP];
	uint8_t qp_port;
	/* last progress of each QP: the ACK timer runs from here. Its own memory: the packet builder
	 * writes it at each packet (landing at the clock's end: ts_pending), the events read it */
	uint64_t t_sent[RNIC_MAX_QP];
	uint8_t ts_pending;
	uint16_t ts_qpn;
	/* the packet builder's copy of the QPC table (a block RAM of its own, written by the same
	 * configuration writes), and the two fields responder requests are checked with on arrival
	 * (LUT RAM) */
	uint32_t hq[RNIC_MAX_QP][RNIC_QPC_WORDS];
	uint8_t rsp_pmtu[RNIC_MAX_QP], rsp_limit[RNIC_MAX_QP];
	/* the doorbell's side, which takes no QP port: each QP's SQ producer index (doorbell) and
	 * next WQE to fetch, and what a doorbell is checked against (QPC CTRL's low half, the SQ's
	 * log size, kept from the configuration writes): LUT RAM, one writer a clock (a doorbell,
	 * or the QP event; the readies keep them apart where both would write). The cycle of each
	 * QP's last doorbell: a block RAM, written by the doorbell, read by the WQE started. */
	uint16_t sq_pi[RNIC_MAX_QP], sq_ci[RNIC_MAX_QP];
	uint16_t db_ctrl[RNIC_MAX_QP];
	uint8_t sq_log[RNIC_MAX_QP];
	uint64_t ts_db[RNIC_MAX_QP];
	tx_ob_t ob[RNIC_MAX_QP][TX_OB];
	/* the scheduler's active list: QPs that may have WQEs to fetch, served round-robin. An
	 * event that may let a QP fetch (doorbell, retirement, go-back, RNR wait over, commit)
	 * wakes it into `wake` unless act_in says it is there or in `act`; one wake per clock
	 * joins `act`. */
	uint16_t wake[TX_WAKE];
	uint32_t wake_head, wake_tail, wake_clk;
	uint8_t wake_ok;             /* room for a clock's wakes: producers that can wait do */
	uint16_t act[RNIC_MAX_QP];
	uint32_t act_head, act_tail;
	uint8_t act_in[RNIC_MAX_QP];

	/* WQEs fetched ahead in batches, in the order requested: slots [pf_head, pf_tail) are
	 * taken, data fills them from pf_fill on (DMA reads return in request order) */
	tx_pf_t pf[TX_PF];
	uint8_t pf_wqe[TX_PF][RNIC_WQE_BYTES];
	uint32_t pf_head, pf_fill, pf_tail;
	uint32_t pf_beats;           /* beats of slot pf_fill received */

	uint32_t timer_q;            /* ACK timers are checked one QP per clock */

	uint8_t push_beat[RNIC_BEAT];/* the first half of a WQE being pushed */
	uint8_t push_half;

	/* fence (CFG_TBL_FENCE): 1 until the packet whose reads are being issued has them all
	 * out, 2 until every read issued before (fence_mark) has returned its data */
	uint8_t fence_state, fence_token;
	uint32_t fence_mark;
	uint64_t now;

	/* the request message being cut into packets */
	uint8_t phase;               /* 0 idle, 1 building packets */
	uint8_t cancel;              /* go-back-N: stop at the next packet boundary */
	uint32_t qpn;
	uint16_t wqe_index;          /* SQ index of its WQE */
	uint8_t wqe[RNIC_WQE_BYTES];
	uint8_t op, type;            /* enum WQE_OP, enum QPT */
	tx_sge_t sge[RNIC_MAX_SGE];
	uint32_t nsge;
	uint32_t msg_len, mtu, npkts, pkt, first_psn;
	uint32_t rd_skip;            /* a READ requested again from inside: bytes already placed */
	uint8_t inline_data;

	/* responder frames from the RX kernel; the READ response being cut into packets */
	rnic_rsp_t rsp[TX_RSP_FIFO];
	uint32_t rsp_head, rsp_tail;
	uint8_t rj_active, rj_cancel;
	uint32_t rj_pkt, rj_npkts, rj_mtu;

	/* read issuer: DMA reads of the payload of the packet built last, cut at pages and SGEs */
	uint8_t iss_rsp;             /* the payload is a READ response's (else the message's) */
	uint32_t iss_left;           /* bytes of the packet still to request */
	uint32_t iss_sge, iss_sge_off;
	uint64_t iss_va;
	uint32_t iss_key;
	uint32_t credit;             /* payload bytes requested and not yet emitted */
	uint16_t req_len[TX_REQ_FIFO];
	uint8_t req_kind[TX_REQ_FIFO];/* enum in tx.c: payload, a WQE, or zeros that stand in for
				       * payload not read (its region went away) */
	uint32_t req_head, req_tail;
	uint32_t req_left;           /* bytes of the request being taken not yet taken */
	uint8_t cur_kind;            /* ... and its kind */

	/* packets built and not yet emitted; the one being built */
	tx_pkt_t pk[TX_PKT_FIFO];
	tx_pkt_t pb;
	uint32_t pk_head, pk_tail;

	/* packet emitter */
	uint8_t e_state;             /* 0 next packet, 4 header, 1 payload, 2 tail */
	uint32_t hdr_pos, pay_left;
	uint32_t crc;
	uint8_t acc[TX_ACC];
	uint32_t acc_n;
	uint8_t frame_end;           /* the packer holds the end of a frame ... */
	uint32_t end_n;              /* ... its bytes up to there */

	/* acknowledgements and completions */
	uint8_t ack_busy, ack_rd;
	uint32_t ack_qpn, ack_psn, ack_syn;
	rnic_cpl_t cpl[TX_CPL_FIFO];
	uint32_t cpl_head, cpl_tail;

	rnic_tx_out_t o;             /* outputs presented during the current cycle */
} rnic_tx_state_t;

void rnic_tx_step(rnic_tx_state_t *st, const rnic_tx_in_t *in, rnic_tx_out_t *out);

#endif
