/* RX kernel, the requester's table of READs and atomics awaiting their responses (rx_rdq.c): the
 * stage rx_core asks what a response to one of ours answers, and where its data goes. */
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
	uint8_t rd_head, rd_tail, rd_n;
	uint32_t rd_off;    /* response packets of the head entry placed */
	uint8_t rd_nak;     /* a gap was reported to the TX kernel */
	uint8_t rd_done_ok; /* rd_done holds the last PSN of the newest request fully answered */
	uint32_t rd_done;
} rx_rdrow_t;

/* the operation in progress, and the step it takes next (RDQ_BEGIN: none, one begins) */
enum { RDQ_ASK, RDQ_EXPECT, RDQ_RESET_QP, RDQ_RECLAIM };
enum {
	RDQ_BEGIN,
	RDQ_ROW,                               /* any: the QP's row */
	RDQ_HEAD, RDQ_ENTRY, RDQ_J1, RDQ_J2,   /* a question: the head slot's entry; it; the verdict */
	RDQ_BLOCK, RDQ_FIND, RDQ_PUT,          /* an expect: the block; its slot; its entry */
	RDQ_RESET,                             /* a reset */
	RDQ_SLOT, RDQ_LAST, RDQ_GIVE,          /* a reclaim: its last slot's entry, given back */
};

/* The stage's registers: the operation in progress, its next step, its QP, and what its steps
 * read and found: the row (and its rcl_in); a slot's entry number (pe) and the entry; an
 * expect's block, slot (reuse: it keeps the entry it has) and free entry and block, read ahead
 * of their use; a question's verdict in the making (j_*). After a question, r and e stay
 * the QP's row and head entry (c_on): the next question of that QP needs no reads. The free
 * entries: never used (from rd_fresh up) or in the ring rdf; the free blocks likewise (rb_fresh,
 * rbf); the reclaim's queue (rcl). A QP reset by its context's commit, to do (rs_on); the
 * expect taken from the TX kernel, to do and held until done (x_on); rdx_ready: one is taken
 * next clock. */
typedef struct {
	uint8_t op, step, c_on;
	uint16_t qpn;
	rx_rdask_t ask;
	rx_rdrow_t r;
	uint8_t r_in;
	uint16_t pe;
	rx_rdx_t e;
	rx_rdb_t b;
	uint8_t slot, reuse, give;
	uint8_t x_done;     /* the expect's request was answered before (x_last: its last PSN) */
	uint32_t x_last;
	uint16_t f_pe, f_blk;
	uint32_t j_exp, j_off, j_rem;
	int32_t j_d;
	uint8_t j_last;
	uint32_t rd_fresh, rdf_head, rdf_tail, rb_fresh, rbf_head, rbf_tail, rcl_head, rcl_tail;
	uint8_t rs_on, x_on, rdx_ready;
	uint16_t rs_qpn;
	rnic_rdx_t x;
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
	uint32_t sweep;     /* after a reset: the next row to clear; RNIC_MAX_QP when done */
} rx_rdq_t;

void rx_rdq(rx_rdq_t *st, const rnic_rx_in_t *in, rnic_rx_rdaskq_t *asks, rnic_rx_rdansq_t *ans,
	    rnic_rx_rdntcq_t *ntcs);
/* its ready for the TX kernel's expects on the kernel's outputs (wiring, after the clock's stages) */
void rx_rdq_out(const rx_rdq_t *st, rnic_rx_out_t *out);

#endif
