/* RX kernel: RoCEv2 receive path, RC responder, and the requester's response placement. Stages
 * joined by FIFOs (rx_msg.h): rx_mac (the MAC's stream), four of the ICRC check (rx_icrc.c), three
 * of the headers (rx_parse.c), the frame store and its ports (rx_store.c), the QPC cache
 * (rx_ctx.c), the requester's READs and atomics awaiting their responses (rx_rdq.c), the DMA read
 * port (rx_rdport.c), and rx_core
 * (the rest: the responder, the MPT and MTT caches, what each frame writes and produces; not yet
 * split). */
#ifndef RNIC_RX_H
#define RNIC_RX_H

#include "rx_icrc.h"
#include "rx_mac.h"
#include "rx_parse.h"
#include "rx_store.h"
#include "rx_ctx.h"
#include "rx_rdq.h"
#include "rx_rdport.h"

#define RX_PF_HINTS 32    /* QPs waiting for their receive WQEs to be fetched ahead */
#define RX_RWQE 8         /* receive WQEs held per QP (fetched ahead): a SEND every 72 clocks on
                          * each of 16 QPs finds its WQE there across a 600 ns PCIe read */
#define RX_RWC 64         /* chunks of RX_RWQE of them, shared by all QPs: a QP holds one while it
                          * has receive WQEs fetched or on their way */
#define RX_RW_RESERVE 2   /* chunks only a frame waiting for its receive WQE may take: fetching
                          * ahead stops below, so idle QPs holding WQEs never starve a SEND */
#define RX_ATOMIC_REPLAY RNIC_MAX_RD_ATOM /* atomic results kept per QP for duplicates (9.7.5.1.2):
					    as many as the requester may have outstanding; values and
					    PSNs in context memory (ICM_ATOMIC), which slots hold one here */

typedef struct {
	uint64_t id;
	uint32_t len;       /* bytes its scatter list holds */
	uint8_t nsge, err;  /* err: a bad SGE (key, PD, bounds) or too many */
	rx_sge_t sge[RNIC_MAX_RECV_SGE];
} rx_rwqe_t;

/* Per-QP responder state (IBTA 9.7.5: expected PSN, MSN, the message in progress; 9.7.5.1.2: atomic
 * results for duplicates): a block RAM read and written by the frame being processed only (a QPC
 * commit takes a clock of its own). */
typedef struct {
	uint32_t epsn;
	uint32_t msn;
	uint8_t in_msg;     /* the multi-packet message in progress: 0, 1 WRITE, 2 SEND */
	uint8_t nak_sent;   /* a sequence-error or RNR NAK is outstanding (9.7.5.1.3) */
	uint8_t fatal;      /* a fatal NAK was sent: requests are dropped until the QP is reset */
	uint32_t remaining; /* WRITE: bytes still to come */
	uint32_t msg_len;   /* WRITE: its length; SEND: bytes so far */
	uint32_t ts_first;  /* cycle the message's first packet arrived, low 32 bits (the CQ kernel
	                     * widens it) */
	rx_sge_t wr;                /* where the WRITE in progress lands (a SEND: its receive WQE's
	                             * scatter list, in its slot until it completes) ... */
	uint8_t c_sge;              /* ... and how far the message got */
	uint32_t c_off;
	uint8_t at_valid;   /* bit i: slot i of its atomic results in ICM_ATOMIC holds one */
	uint8_t at_next;
	uint16_t oos_psn;   /* nak_sent: the PSN of the packet NAKed (its low 16 bits: a pass is
	                     * shorter than 32,768 packets) */
} rx_qp_t;

typedef struct {
	uint16_t pi, ci;    /* posted (doorbell) and fetched receive WQEs */
} rx_srq_t;

typedef struct {
	rnic_tables_t t;
	/* The keys of the frame at the head, in the MPT cache before it is dispatched (keys_cached):
	 * a request's key, its entry kept (kg_e) for the operation's check; the receive WQE a
	 * message starts with, an entry a clock (rg_k checked of the WQE rg_used of QP rg_qpn for
	 * the frame at rg_frame; rg_err: one failed). */
	uint32_t kg_e[RNIC_MPT_WORDS];
	/* the last key the lookup found (se_key), its entry: the payload writes and an atomic's
	 * operand translate from it, the MPT cache's port then the head's; a write of the MPT, or
	 * an access it does not admit, drops it (se_valid) */
	uint8_t se_valid;
	uint32_t se_key;
	uint32_t se_e[RNIC_MPT_WORDS];
	uint32_t rg_frame;
	uint16_t rg_qpn, rg_used;
	uint8_t rg_k, rg_err;
	/* the request key (RETH, AtomicETH) of a frame come in whole (rx_ctx's hint: mk_cand, its key
	 * mk_cand_key, its address mk_cand_va; mk_cand_xl: it writes there, a WRITE or an atomic),
	 * looked up in the MPT cache's tags from the clock after, and its entry read ahead (mk_want)
	 * when neither there nor on its way (rx_mpt_ahead) */
	uint8_t mk_cand, mk_want, mk_cand_xl, mk_want_xl;
	uint32_t mk_cand_key, mk_want_key;
	uint64_t mk_cand_va, mk_want_va;
	uint64_t now;
	/* the fields of every QP's context that a doorbell, a receive WQE's fetch, check or
	 * completion read (for any QP, not only the head frame's), written at its commit: */
	uint64_t rq_base[RNIC_MAX_QP];  /* its receive ring */
	uint32_t rq_ctl[RNIC_MAX_QP];   /* CTX | RQ ring log << 8 | RQ_LIVE (valid, not in RESET) |
	                                 * CQN.RECV << 16 (rx_int.h) */
	uint16_t rq_srq[RNIC_MAX_QP];   /* SRQ.SRQN | RQ_SRQ: its receive WQEs come from that SRQ */
	uint16_t qp_pdn[RNIC_MAX_QP];
	uint32_t dest_qpn[RNIC_MAX_QP]; /* its completions' source QP */
	uint32_t qpc_stage[RNIC_QPC_WORDS]; /* the entry the firmware is writing (word 0 commits it) */
	uint8_t commit_valid;        /* a QPC committed last clock, to act on */
	uint16_t commit_qpn;
	rx_qp_t qp[RNIC_MAX_QP];
	/* receive WQEs fetched, in the chunk rw_chunk[q] of QP q while rw_has[q], slot = count %
	 * RX_RWQE (a chunk is taken by the first read and given back once the QP holds none and
	 * has none on its way); free chunks: never used (from rw_fresh up) or in the ring rwf */
	rx_rwqe_t rwc[RX_RWC][RX_RWQE];
	uint8_t rw_chunk[RNIC_MAX_QP], rw_has[RNIC_MAX_QP];
	uint8_t rwf[RX_RWC];
	uint32_t rw_fresh, rwf_head, rwf_tail;
	uint8_t rw_nfree;       /* free chunks as the clock began */
	/* a block RAM each, one writer each (IBTA 9.7.4: the receive queue): the committed state,
	 * receive WQEs posted (doorbell), requested (read_rwqe), arrived (got_rwqe; for a QP's own
	 * ring also its consumer index) and used (rx_completion). Fetched ahead: got - used; in
	 * flight: req - got. A doorbell's write lands at the clock's end (db_pend: its QP's entry
	 * may be read in that clock), and its prefetch hint with it. */
	uint8_t qstate[RNIC_MAX_QP];
	uint16_t rq_pi[RNIC_MAX_QP], rw_req[RNIC_MAX_QP], rw_got[RNIC_MAX_QP], rw_used[RNIC_MAX_QP];
	/* receive WQE reads on their way when the QP was reset: their beats, the QP's next ones to
	 * come back, are dropped */
	uint8_t rw_void[RNIC_MAX_QP];
	uint8_t db_pend;
	uint16_t db_q, db_pi;
	uint32_t srqc[RNIC_MAX_SRQ][RNIC_SRQC_WORDS];
	uint64_t icm[RNIC_ICM_MAX_CHUNKS]; /* context memory's chunks (CFG_TBL_ICM) */
	rx_srq_t srq[RNIC_MAX_SRQ];

	/* the frame being processed (rx_ctx's, with its QP's context: cur_on), and the frames done,
	 * counted */
	rx_ctxf_t cur;
	uint8_t cur_on;
	uint8_t cur_judged;         /* a response to one of ours, judged by rx_rdq (its verdict cur_a) */
	uint8_t seq;                /* the next frame's number (rx_ctx's order: passq or judgedq) */
	rx_rdans_t cur_a;
	uint32_t fr_head;
	/* this clock's command to the store (rx_msg.h): one a clock, pushed at the clock's end */
	rx_cmd_t cmd;
	uint8_t cmd_on;
	uint32_t wr_out;            /* DMA writes given to the store whose last beat is not yet taken */

	/* processing side: the frame at fr_head */
	uint8_t busy;               /* enum in rx.c */
	uint8_t redo;               /* dispatching the same frame again (after a receive WQE fetch) */
	uint8_t fin;                /* this clock's processing ends the frame, or posts (FIN_*) */
	uint8_t flush;              /* the receive WQE fetch is for a flush completion */
	/* this clock's read for the read channel (rx_rdport), pushed at the clock's end: one a
	 * clock, into the room rdreqq had as the clock began (rq_room) */
	rx_rdreq_t rq;
	uint8_t rq_on, rq_room;
	uint8_t rd_issue;           /* B_RWQE, B_ATOMIC, B_REPLAY: the read waited for is still to be
	                             * requested */
	uint16_t pf_q[RX_PF_HINTS]; /* QPs whose next receive WQEs to fetch ahead (a doorbell gave */
	uint32_t pf_head, pf_tail;  /* them some, or they used one); a full queue forgets a hint */
	uint8_t hint_cpl;           /* a completion's hint (hint_cpl_q), queued at the next clock's end */
	uint16_t hint_cpl_q;
	/* what a clock's lookup found missing, read as the next clock begins (rx_tlb_issue,
	 * rx_mpt_issue), before that clock's lookup: a line (tl_kind, of entry tl_mi), an MPT entry
	 * (mm_key) */
	uint8_t tl_on, tl_kind, mm_on;
	uint32_t tl_mi, mm_key;
	uint32_t src;               /* the next segment's first payload byte: the GRH's first, then the
	                             * frame's from pay_off */
	uint32_t pay_off, gh;       /* payload offset in the frame; GRH bytes before it (UD) */
	uint8_t grh[RNIC_GRH_LEN];
	uint8_t uc;                 /* the frame is UC: errors drop it silently, nothing is answered */
	uint32_t l3;                /* RNIC_IP6_EXTRA for a frame over IPv6, else 0 */
	uint32_t pay_left;          /* payload bytes left in the frame */
	uint8_t seg_on;             /* the message goes on after this frame (its pages in order: read ahead) */
	uint32_t qpn;
	uint8_t back;               /* the cursor goes back to the QP's message state */
	uint8_t kind;               /* what the frame being placed is (enum in rx.c): how a cut ends */
	uint32_t psn;               /* its PSN */
	rx_sge_t wsge[RNIC_MAX_SGE];/* placement cursor of the frame */
	uint8_t wnsge, wc_sge;
	uint32_t wc_off;
	uint32_t at_psn;            /* the atomic being executed, or answered again */
	uint64_t at_cmp, at_swap, at_addr;
	uint8_t at_op;
	uint8_t at_write;           /* B_ATREC: its compare matched (the target is written) */
	uint64_t at_rec;            /* B_ATREC: where its result goes in ICM (0: none given) */
	uint8_t at_vmask;           /* B_REPLAY: the QP's slots that hold a result (at_valid) ... */
	uint8_t at_found;           /* ... and whether one read back so far is the duplicate's: */
	uint64_t at_val;            /* its result */
	uint32_t ovr_off;           /* bytes [ovr_off, + ovr_n) of the frame being placed are ovr_val's */
	uint64_t ovr_val;           /* (little-endian): an atomic's value, in place of the frame's */
	uint8_t ovr_n;
	uint32_t flush_q;

	rx_posts_t posts;           /* what the frame produces once its payload is placed */
	/* a response: its notice's syndrome, an atomic's original value, and where its payload
	 * starts in the frame */
	uint8_t rs_syn, rs_atomic;
	uint64_t rs_val;
	uint32_t rs_src;            /* (and pay_left its payload bytes) */

	/* a fence: to pass between two frames (pending, its token), then through the read channel
	 * behind the reads before it (fence_wait: on its way; no frame is started meanwhile) */
	uint8_t fence_pending, fence_token, fence_wait;

	uint32_t sweep;             /* after a reset: the next entry of the tables to clear; RNIC_SWEPT when done */
	rnic_rx_out_t o;            /* outputs presented during the current cycle */
} rx_core_t;

void rx_core(rx_core_t *st, const rnic_rx_in_t *in, rnic_rx_passq_t *pass, rnic_rx_judgedq_t *frames, rnic_rx_hintq_t *hints,
	     rnic_rx_rdreqq_t *reqs, rnic_rx_rdbeatq_t *beats, rnic_rx_cmdq_t *cmds, rnic_rx_doneq_t *dones,
	     rnic_rx_rdntcq_t *ntcs, rnic_rx_out_t *out);

#define RNIC_RX_STAGES 13u

typedef struct {
	rx_mac_t mac;
	rnic_icrc_fold_t fold;
	rx_hdr_t hdr;
	rx_classify_t classify;
	rx_store_t store;
	rx_ctx_t ctx;
	rx_rdq_t rdq;
	rx_rdport_t rdport;
	rx_core_t core;
	rnic_icrc_inq_t macq;
	rnic_rx_hdrq_t hdrq;
	rnic_rx_factq_t factq;
	rnic_rx_headq_t headq;
	rnic_rx_descq_t descq;
	rnic_icrc_foldq_t foldq;
	rnic_icrc_shiftq_t shiftq;
	rnic_icrc_sumq_t sumq;
	rnic_rx_beatq_t beatq;
	rnic_rx_arriveq_t arriveq;
	rnic_rx_cmdq_t cmdq;
	rnic_rx_doneq_t doneq;
	rnic_rx_frameq_t frameq;
	rnic_rx_hintq_t hintq;
	rnic_rx_ctxreqq_t ctxreqq;
	rnic_rx_ctxrspq_t ctxrspq;
	rnic_rx_judgedq_t judgedq;
	rnic_rx_passq_t passq;
	rnic_rx_rdntcq_t rdntcq;
	rnic_rx_rdreqq_t rdreqq;
	rnic_rx_rdbeatq_t rdbeatq;
} rnic_rx_state_t;

void rnic_rx_step(rnic_rx_state_t *st, const rnic_rx_in_t *in, rnic_rx_out_t *out);
/* the same clock with the stages called in the order given (a permutation of 0..12): the result
 * must not depend on it (the simulator's check, RNIC_STAGE_ORDER) */
void rnic_rx_step_order(rnic_rx_state_t *st, const rnic_rx_in_t *in, rnic_rx_out_t *out, const uint8_t *order);

#endif
