/* RX kernel, the requester's table of READs and atomics awaiting their responses (rx_rdq.c): the
 * stage between rx_ctx and rx_core that judges each response to one of ours, and says where its
 * data goes. */
#ifndef RX_RDQ_H
#define RX_RDQ_H

#include "rx_msg.h"

#define RX_RDX RNIC_MAX_RD_ATOM /* READ/atomic requests of ours awaiting their responses, per QP */
#define RX_RDP 512        /* entries for them (where the responses go), shared by all QPs */

/* a block of slots: each one's request's first PSN and its entry in the pool */
typedef struct {
	uint32_t psn[RX_RDX];
	uint16_t e[RX_RDX];
} rx_rdb_t;

/* where a request's responses go (the TX kernel's expect, rnic_rdx_t) */
typedef struct {
	uint32_t first_psn, npkts, len;
	uint8_t kind;   /* enum WQE_OP: RDMA_READ or an atomic */
	uint8_t nsge;
	rx_sge_t sge[RNIC_MAX_SGE];
} rx_rdx_t;

/* A QP's row: responses expected, in PSN order, in the slots of its block. Slots [rd_head,
 * rd_head + rd_n) hold an entry, [rd_head, rd_tail) of them expected: a request sent again
 * (go-back-N) reuses the slot and entry it had. A QP holds a block while it holds an entry. */
typedef struct {
	uint16_t blk;       /* its block of slots, while rd_n */
	uint16_t pe;        /* the head slot's entry, while rd_head != rd_tail */
	uint8_t rd_head, rd_tail, rd_n;
	uint32_t rd_off;    /* response packets of the head entry placed */
	uint32_t rd_done;   /* the last PSN of the newest request fully answered (RD_DONE_OK: there is
	                     * one), and RD_NAK while a gap is reported to the TX kernel */
} rx_rdrow_t;
#define RD_DONE_OK 0x01000000u
#define RD_NAK 0x02000000u

/* Two lanes, each one thing at a time, a step a clock. The response lane (q_step): a frame that
 * is not a response to judge goes on as it begins; a response has its QP's row read, then its
 * head entry and its block (the next head's entry when this one is answered), and is judged
 * (Q_JUDGE). The other lane (e_op,
 * e_step): an expect, a reset, a reclaim. */
enum { Q_BEGIN, Q_ROW, Q_ENTRY, Q_JUDGE };
enum { RDQ_EXPECT, RDQ_RESET_QP, RDQ_RECLAIM };
enum {
	RDQ_BEGIN,
	RDQ_ROW,                               /* its QP's row */
	RDQ_BLOCK, RDQ_FIND, RDQ_PUT,          /* an expect: the block; its slot; its entry */
	RDQ_RESET,                             /* a reset */
	RDQ_SLOT, RDQ_LAST, RDQ_GIVE,          /* a reclaim: its last slot's entry, given back */
};

/* The stage's registers.
 * The response lane: what of the frame held (q_f) is judged (its QP, PSN, payload, whether
 * an ATOMIC ACKNOWLEDGE, the MTU's shift); its QP's row, head entry and block; the
 * sums the verdict takes (j_*: the PSN expected and the distance of the frame's from it, the
 * packets after the expected one, its offset in the request's bytes and what is left of them
 * there), made from the row as it is read (q_pr: the PSN less the packets placed; q_rd1, q_rd2:
 * those plus one and two; q_off, q_offn: the offset and the next; q_po: the payload's end) and
 * the entry (q_miss), or kept from the last response of the QP (c_on: its row, entry and sums
 * are still in the registers; the responses of one READ need no reads).
 * The other lane: its QP's row (and rcl_in), an expect's block, slot (reuse: it keeps the entry
 * it has), free entry and block read ahead of their use, whether its request was answered
 * before (x_done; x_last: its last PSN) and the entry it writes (x_e); a reclaim's slot (give:
 * one to give back). The free entries: never used (from rd_fresh up) or in the ring rdf; the
 * free blocks likewise (rb_fresh, rbf); the reclaim's queue (rcl). A QP reset by its context's
 * commit, to do (rs_on); the expect taken from the TX kernel, to do and held until its entry is
 * made (x_on); the QP of the next of them (e_nqpn); rdx_ready: one is taken next clock. */
typedef struct {
	uint8_t q_step, q_atomic, q_sh, q_miss, c_on;
	uint16_t q_qpn, q_plen;
	uint32_t q_psn;
	rx_rdrow_t q_r;
	rx_rdx_t q_e;
	rx_rdb_t q_b;
	uint32_t q_pr, q_rd1, q_rd2, q_off, q_offn, q_po;
	uint32_t j_exp, j_left, j_off, j_rem;
	int32_t j_d;
	uint8_t e_op, e_step;
	uint16_t e_qpn, e_nqpn;
	rx_rdrow_t e_r;
	uint8_t e_r_in;
	rx_rdb_t e_b;
	uint8_t e_slot, e_reuse, e_give, x_done;
	uint16_t f_pe, f_blk;
	uint32_t x_last;
	rx_rdx_t x_e;
	uint32_t rd_fresh, rdf_head, rdf_tail, rb_fresh, rbf_head, rbf_tail, rcl_head, rcl_tail;
	uint8_t rs_on, x_on, rdx_ready;
	uint16_t rs_qpn;
} rx_rdreg_t;

typedef struct {
	/* memories: the rows (a QP each); the blocks of RX_RDX slots; the pool's entries; the rings
	 * of free entries and blocks; the reclaim's queue of QPs reset with entries still in their
	 * slots, and whether a QP is in it */
	rx_rdrow_t row[RNIC_MAX_QP];
	rx_rdb_t rdb[RX_RDP];
	rx_rdx_t rdp[RX_RDP];
	uint16_t rdf[RX_RDP], rbf[RX_RDP];
	uint16_t rcl[RNIC_MAX_QP];
	uint8_t rcl_in[RNIC_MAX_QP];
	rx_rdreg_t g;       /* registers: each clock reads them as it began and writes their next value */
	rx_ctxf_t q_f;      /* ... but the frame held and the expect taken, written and read in */
	rnic_rdx_t x;       /* different clocks (as it comes; once held) */
	uint32_t sweep;     /* after a reset: the next row to clear; RNIC_MAX_QP when done */
} rx_rdq_t;

void rx_rdq(rx_rdq_t *st, const rnic_rx_in_t *in, rnic_rx_frameq_t *frames, rnic_rx_judgedq_t *out,
	    rnic_rx_rdntcq_t *ntcs);
/* its ready for the TX kernel's expects on the kernel's outputs (wiring, after the clock's stages) */
void rx_rdq_out(const rx_rdq_t *st, rnic_rx_out_t *out);

#endif
