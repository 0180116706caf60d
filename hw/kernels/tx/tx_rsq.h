/* TX kernel: the responder's queue (tx_rsq.c). */
#ifndef TX_RSQ_H
#define TX_RSQ_H

#include "tx_msg.h"

#define TX_RSP_FIFO 16    /* responder frames waiting (registers: each is matched at once) */

/* A queued response: what RX gave (a READ asked again taken as a READ), its path MTU in bytes
 * and, a READ's, the PSN of its last packet. */
typedef struct {
	uint8_t kind, syndrome;
	uint16_t qpn;
	uint16_t mtu;
	uint32_t psn, msn, key, len;
	uint64_t va, atomic;
} tx_rse_t;

/* b: a response with its QP's fields read and matched against the queue: m, the slots of its QP;
 * ge, the slots whose last PSN is at or after its PSN */
typedef struct {
	tx_rse_t e;
	uint32_t last;
	uint8_t limit;
	uint16_t m, ge;
} tx_rsb_t;

/* c: b with the READs of its QP queued counted (n), as of rd */
typedef struct {
	tx_rsb_t b;
	uint8_t n;
	uint16_t rd;
} tx_rsc_t;

typedef struct {
	/* each QP's path MTU (its log2) and max_dest_rd_atomic (block RAMs: the configuration's
	 * write, the read of the response taken last clock) */
	uint8_t mtu_log[RNIC_MAX_QP], limit[RNIC_MAX_QP];
	/* the queue: head to tail (positions mod 256: a response's number, rid, is its position).
	 * Per slot, in registers: its QP and last PSN (rq_qpn, rq_last), and masks of READs that
	 * count against the limit (rd) and of responses dropped unsent (drop: a later request asked
	 * for them again) */
	tx_rse_t e[TX_RSP_FIFO];
	uint16_t rq_qpn[TX_RSP_FIFO];
	uint32_t rq_last[TX_RSP_FIFO];
	uint16_t rd, drop;
	uint8_t head, tail;
	/* the response taken (a), matched (b), counted (c) */
	uint8_t a_on, b_on, c_on;
	rnic_rsp_t a;
	uint32_t a_span;             /* its length less one (0 for none) */
	tx_rsb_t b;
	tx_rsc_t c;
	/* the READ response being cut into packets at the head: bytes left, PSN and address next */
	uint8_t k_on;
	uint32_t k_left, k_psn;
	uint64_t k_va;
	uint8_t ready;               /* rsp_ready presented in this clock */
	uint32_t sweep;              /* after a reset: the next entry to clear; RNIC_SWEPT when done */
} tx_rsq_t;

void tx_rsq(tx_rsq_t *st, const rnic_tx_in_t *in, rnic_tx_rjq_t *jobs, rnic_tx_rjxq_t *drops, rnic_tx_rjcq_t *cancels);
/* its ready on the kernel's outputs (wiring, after the clock's stages) */
void tx_rsq_out(const tx_rsq_t *st, rnic_tx_out_t *out);

#endif
