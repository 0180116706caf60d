/* TX kernel: every frame the NIC sends on RoCE: RC requests, and the responder's frames (ACK/NAK,
 * ATOMIC ACK, RDMA READ responses) handed over by the RX kernel. Stages joined by FIFOs (tx_msg.h):
 * the responder's queue (tx_rsq.h) holds those frames and cuts them into packets; tx_core (the
 * scheduler, the builder, the completion side, not yet split) builds the packets and asks for
 * their payload, the read channel (tx_rdport.h) presents its DMA reads and hands the payload
 * beats to the emitter (tx_emit.h) packs them into the frames'
 * beats, the ICRC's three stages (rnic_icrc.h) take its sums, tx_icrc_put writes it into the
 * frame (tx_egress.h); the timer wheel (tx_wheel.h) holds the QPs whose timers run. */
#ifndef RNIC_TX_H
#define RNIC_TX_H

#include "tx_egress.h"
#include "tx_emit.h"
#include "tx_wheel.h"
#include "tx_rsq.h"
#include "tx_rdport.h"

#define TX_OB 64          /* outstanding (sent, unacknowledged) WQEs a QP may have */
#define TX_OBP 2048       /* entries for them, shared by all QPs (one per WQE in flight, whatever
			   * its QP: 64 B WRITEs at line rate keep about 200 out) */
#define TX_CREDIT 32768   /* payload bytes requested and not yet taken: covers 600 ns at 13 GB/s
			   * four times */
#define TX_CPL_FIFO 16
#define TX_PF 64          /* WQEs fetched ahead (8 KiB of BRAM): a PCIe round trip of 64-byte messages */
#define TX_PF_BATCH 8     /* WQEs of one QP in one DMA read (1 KiB, never across a 4 KiB page) */
#define ACT_TOK 15        /* the bit of an active-list entry above its QPN */
#define TX_WAKE 32        /* QPs woken (registers), waiting to join the active list */
/* The places that may wake a QP in one clock (tx_wake), a slot each: a retirement (ACK or UC/UD),
 * a go-back-N, a message started, two doorbells (rung, pushed), a QPC commit, a message
 * cancelled, the scheduler's own, an RNR wait over (the timer). Joined in this order. */
enum { WK_RETIRE, WK_GOBACK, WK_START, WK_DB, WK_PUSH, WK_COMMIT, WK_CANCEL, WK_SCHED, WK_TIMER, TX_WAKE_CLK };
/* What each side may push to the completion FIFO in one clock, a slot each: the completion side's
 * retirement and QP-fatal event, the send side's failed WQE and QP-fatal event. Pushed in this
 * order (the completion side's are of older WQEs). */
enum { CS_RETIRE, CS_FATAL_C, CS_FAIL, CS_FATAL_S, TX_CPL_CLK };


/* a slot of the prefetch ring: its tags (registers: tx_unfetch looks at every slot at once);
 * the WQE itself is in pf_wqe, a block RAM */
typedef struct {
	uint16_t qpn;
	uint16_t index;      /* SQ index of the WQE */
	uint8_t ready;       /* its data has arrived */
	uint8_t discard;     /* its QP went back or away meanwhile: dropped when it reaches the head */
	uint8_t bad;         /* the host refused a beat of its read: the WQE is not known */
} tx_pf_t;

typedef struct {
	uint64_t wr_id;
	uint32_t ts;         /* its doorbell's cycle, low 32 bits (ts_db) */
	uint32_t first_psn, last_psn;
	uint32_t len;
	uint16_t index;      /* SQ index of the WQE */
	uint8_t signaled;
	uint8_t op;          /* enum WQE_OP */
	uint8_t err;         /* its completion status if the QP fails with it outstanding (else flush) */
} tx_ob_t;

/* A QP's send side (its block RAM entry): what the doorbell, the scheduler and the WQE start need */
typedef struct {
	uint32_t psn;       /* next PSN to send */
	uint8_t restart;    /* the WQE at restart_index resumes at restart_psn */
	uint16_t restart_index;
	uint32_t restart_psn;
} tx_qs_t;

/* A QP's completion side (its block RAM entry): what ACK notices and the ACK timer need. Its
 * times are ticks of the timer wheel (tx_tick). */
typedef struct {
	uint32_t hold_until;/* RNR NAK: nothing is sent before this tick */
	uint8_t retries;    /* go-back-N rounds since the last progress */
	uint8_t rnr_retries;
	uint32_t rd_next;   /* the first READ response PSN not placed yet (RX's notices) */
	uint32_t back_psn;  /* the PSN the last go-back-N resumed at */
	uint32_t t_prog;    /* last progress (an ACK, a go-back-N): with t_sent, the ACK timer's start */
} tx_qc_t;

/* The QPC fields the send side reads (a block RAM kept from the configuration writes, read with
 * qs): the hot part of the context; the rest of it is in context memory only */
typedef struct {
	uint32_t ctrl;      /* QPC CTRL: valid, state, type, context, PMTU */
	uint16_t pdn;       /* < MAX_PD */
	uint32_t sq_psn;    /* QPC SQ_PSN */
	uint16_t cqn;       /* send CQ */
	uint8_t rd_atom;    /* RETRY.MAX_RD_ATOMIC */
} tx_qsf_t;

/* Apply the firmware's write of QPC word `word` to a QP's send-side fields. */
static inline void tx_qsf_cfg(tx_qsf_t *f, uint32_t word, uint32_t v)
{
	if (word == RNIC_QPC_CTRL / 4)
		f->ctrl = v;
	else if (word == RNIC_QPC_PDN / 4)
		f->pdn = (uint16_t)v;
	else if (word == RNIC_QPC_SQ_PSN / 4)
		f->sq_psn = RNIC_GET(RNIC_QPC_SQ_PSN_PSN, v);
	else if (word == RNIC_QPC_CQN / 4)
		f->cqn = (uint16_t)RNIC_GET(RNIC_QPC_CQN_SEND, v);
	else if (word == RNIC_QPC_RETRY / 4)
		f->rd_atom = (uint8_t)RNIC_GET(RNIC_QPC_RETRY_MAX_RD_ATOMIC, v);
}

/* The QPC fields the completion side reads (a block RAM kept from the configuration writes) */
typedef struct {
	uint16_t retry;     /* QPC RETRY's low half: TIMEOUT, RETRY_CNT, RNR_RETRY */
	uint16_t cqn;       /* send CQ */
	uint8_t ctx, type;
} tx_qcf_t;

/* a write of a copy, landing at the clock's end */
typedef struct {
	uint8_t valid;
	uint16_t q, v;
} tx_copy_w_t;

/* QP q's WQEs fetched ahead and not started are dropped (when they reach the head of the prefetch
 * ring) and fetched again: from its WQE started (at_start: it waits), from ci (ci_on), from the
 * first of them (first: the QP went to error), or from where it stands (a commit) */
typedef struct {
	uint8_t valid, at_start, ci_on, first;
	uint16_t q, ci;
} tx_uf_t;

typedef struct {
	uint64_t addr;
	uint32_t len;
	uint32_t key;        /* checked again (rnic_mpt_live) before each DMA read from it */
} tx_sge_t;


typedef struct {
	/* Each QP's state is in two block RAMs, each a port of events: one event a clock reads and
	 * writes one QP's entry (read on one port, written back on the other, a forwarding register
	 * between back-to-back events of one QP).
	 * - send side, qs (and the QPC fields qsf, read with it): a commit or a pushed WQE (the
	 *   readies let in one of them a clock), a go-back-N of a QP (rw_*), a WQE started, a
	 *   message poisoned, in this priority (qs_port);
	 * - completion side, qc (and the QPC fields qcf): a commit, an ACK notice, a UC/UD WQE
	 *   retired as its last packet leaves, the ACK timer (qc_port). A go-back-N is decided here
	 *   (retry counts, RNR wait) and done on the send side next (ACK notices wait for it).
	 * What one side writes and the other reads is in memories of their own, one writer each
	 * (outstanding window ends, READ/atomic counts, error flags, RNR hold, state): at 16K QPs
	 * block RAMs too, each kept to two accesses a clock (make tblchk), with a copy per reader
	 * where three parts read one (the window ends and error flags). */
	rnic_tables_t t;
	uint64_t icm[RNIC_ICM_MAX_CHUNKS]; /* context memory's chunks: where a cache miss reads its line */
	tx_qsf_t qsf[RNIC_MAX_QP];
	/* the scatter list of the WQE at the head of the prefetch ring (slot chk_head), checked an
	 * entry a clock before it starts (chk_k entries; chk_bad: one failed; their regions' PD,
	 * chk_pdn, once one is checked, chk_pd_any); an MPT miss of it in this clock's lookup takes
	 * the read slot for the entry's read in this clock (build) */
	uint32_t chk_head, chk_pdn;
	uint8_t chk_k, chk_bad, chk_pd_any;
	uint8_t chk_mine;            /* they are the starting WQE's (else it has no scatter entry) */
	uint8_t commit_valid;        /* a QPC committed last clock, to act on */
	uint16_t commit_qpn;
	tx_qs_t qs[RNIC_MAX_QP];
	tx_qc_t qc[RNIC_MAX_QP];
	tx_qcf_t qcf[RNIC_MAX_QP];
	uint8_t ob_head[RNIC_MAX_QP];    /* outstanding WQEs [ob_head, ob_tail): completion side */
	uint8_t ob_tail[RNIC_MAX_QP];    /* ... send side (positions mod 256: TX_OB fewer) */
	/* copies of what one side writes for the other side's reads (_s send, _c completion) and
	 * the scheduler's (_k): a block RAM has two ports, and three parts read these. Written at
	 * the clock's end (cw_*); a read in that clock takes the word from the write's register. */
	uint8_t ob_head_s[RNIC_MAX_QP], ob_head_k[RNIC_MAX_QP], ob_tail_c[RNIC_MAX_QP], ob_tail_k[RNIC_MAX_QP];
	tx_copy_w_t cw_head, cw_tail, cw_err_s, cw_err_c;
	/* where they are in the shared pool (obp): a list per QP, linked through obn. The
	 * completion side keeps the entry at its head (ob_he); the send side the last one
	 * (ob_le), and the one it appended to an empty list (ob_first, at position ob_fpos,
	 * valid while ob_fv): the head is that one while ob_head is at that position. */
	uint16_t ob_he[RNIC_MAX_QP], ob_le[RNIC_MAX_QP], ob_first[RNIC_MAX_QP];
	uint8_t ob_fpos[RNIC_MAX_QP];
	uint8_t ob_fv[RNIC_MAX_QP];
	uint8_t rd_started[RNIC_MAX_QP]; /* READ/atomic WQEs started (send side) and retired */
	uint8_t rd_retired[RNIC_MAX_QP]; /* (completion side): outstanding, the difference */
	uint8_t err_s[RNIC_MAX_QP];      /* in error (WQEs complete with WR_FLUSH_ERR), found by */
	uint8_t err_c[RNIC_MAX_QP];      /* the send or the completion side */
	uint8_t err_s_c[RNIC_MAX_QP], err_s_k[RNIC_MAX_QP], err_c_s[RNIC_MAX_QP], err_c_k[RNIC_MAX_QP];
	uint8_t held[RNIC_MAX_QP];       /* waiting out an RNR NAK (completion side) */
	uint8_t rd_wait[RNIC_MAX_QP];    /* the next WQE waits for a READ/atomic to complete (limit */
	uint8_t rd_mark[RNIC_MAX_QP];    /* or fence): for rd_retired to move from rd_mark */
	uint8_t qstate[RNIC_MAX_QP];     /* state of the last committed QPC (commits) */
	uint8_t qs_port, qc_port;
	uint8_t rw_valid;                /* a go-back-N for the send side: QP, the WQE and PSN to */
	uint16_t rw_qpn, rw_index;       /* go back to, the PSN to resume at */
	uint32_t rw_psn, rw_restart;
	uint8_t tm_valid;                /* an ACK timeout found by the timer scan: the QP and the */
	uint16_t tm_q;                   /* PSN it goes back to (rewind_qp, the completion side's */
	uint32_t tm_psn;                 /* next event) */
	/* the tick each QP last sent a packet in: with qc's t_prog, where the ACK timer runs from (a
	 * memory of its own: the packet builder writes it, landing at the clock's end, ts_pending;
	 * the ACK timer reads it) */
	uint32_t t_sent[RNIC_MAX_QP];
	uint8_t ts_pending;
	uint16_t ts_qpn;
	/* the packet builder's QPC fields, each QP's path (a block RAM of its own, written by the
	 * same configuration writes) */
	rnic_path_t hq[RNIC_MAX_QP];
	/* the doorbell's side, which takes no QP port: each QP's SQ producer index (doorbell) and
	 * next WQE to fetch, and what a doorbell is checked against (QPC CTRL's low half, the SQ's
	 * log size, kept from the configuration writes): one writer a clock each (a doorbell,
	 * or the QP event; the readies keep them apart where both would write). The cycle of each
	 * QP's last doorbell: a block RAM, written by the doorbell, read by the WQE started. */
	uint16_t sq_pi[RNIC_MAX_QP], sq_ci[RNIC_MAX_QP];
	/* WQEs fetched ahead dropped (tx_unfetch): asked in one clock (one a clock: each asker takes
	 * the send side's port), done as the next begins (unfetch_land, uf_now), a clock in which no
	 * WQE starts nor is pushed, no doorbell is taken and the scheduler waits */
	tx_uf_t uf;
	uint8_t uf_now;
	uint16_t db_ctrl[RNIC_MAX_QP];
	uint8_t sq_log[RNIC_MAX_QP];
	uint32_t ts_db[RNIC_MAX_QP];  /* low 32 bits: a completion's start (the CQ kernel widens it) */
	/* the scheduler's side, which takes no QP port either: each QP's WQEs fetched ahead and
	 * started (the prefetch ring holds the difference; the scheduler and a pushed WQE
	 * write the one, a WQE started the other; in a clock where a drop or a pushed WQE moves
	 * sq_ci or pf_fetched, the scheduler waits), the SQ's base (a block RAM kept from the
	 * configuration writes). */
	uint8_t pf_fetched[RNIC_MAX_QP], pf_started[RNIC_MAX_QP];
	uint64_t sq_base[RNIC_MAX_QP];
	/* The pool of outstanding-WQE entries: each in obp, its QP's next in obn (a block RAM each:
	 * the send side writes one entry a clock, the completion side reads one). Free entries:
	 * never used yet (from ob_fresh up), or in the ring obf (the send side takes one, the
	 * completion side gives one back). A QP that goes back or is reset hands its whole list
	 * over at once to the garbage list (g_*), which the completion side frees one entry a clock
	 * when it has nothing else to do. obn_fw forwards an obn word written this clock. */
	tx_ob_t obp[TX_OBP];
	uint16_t obn[TX_OBP], obf[TX_OBP];
	uint32_t ob_fresh, obf_head, obf_tail;
	uint8_t ob_room;             /* an entry was free at the clock's start (a WQE may start) */
	uint16_t g_head, g_tail;
	uint32_t g_n;
	uint8_t obn_fw;
	uint16_t obn_fw_e, obn_fw_d;
	uint16_t ob_cur;             /* the entry of the message in progress */
	/* the scheduler's active list: QPs that may have WQEs to fetch, served round-robin. An
	 * event that may let a QP fetch (doorbell, retirement, go-back, RNR wait over, commit)
	 * wakes it into `wake` (registers) unless it is there; one wake per clock joins `act`
	 * unless the QP is in it: act_set[q] != act_clr[q], a block RAM each with one writer (the
	 * join, the scheduler's pop: the token, bit ACT_TOK of an entry of act, and pop_*, its
	 * write landing at the clock's end). */
	uint16_t wake[TX_WAKE];
	uint32_t wake_head, wake_tail;
	uint16_t wk_q[TX_WAKE_CLK];  /* this clock's wakes (tx_wake), a slot each, valid in wk_v */
	uint16_t wk_v;
	uint8_t wake_ok;             /* room for last clock's wakes and this one's: producers that can wait do */
	uint16_t act[RNIC_MAX_QP];
	uint32_t act_head, act_tail;
	uint8_t act_set[RNIC_MAX_QP], act_clr[RNIC_MAX_QP];
	uint8_t pop_valid, pop_tok;
	uint16_t pop_q;
	/* the scheduler's fetch of this clock, its ring slots taken at the clock's end (fetch_land) */
	uint16_t sf_q, sf_ci;
	uint8_t sf_n;

	/* WQEs fetched ahead in batches, in the order requested: slots [pf_head, pf_tail) are
	 * taken, data fills them from pf_fill on (DMA reads return in request order) */
	tx_pf_t pf[TX_PF];
	uint8_t pf_wqe[TX_PF][RNIC_WQE_BYTES];
	uint32_t pf_head, pf_fill, pf_tail;
	uint32_t pf_beats;           /* beats of slot pf_fill received */
	/* the first scatter entry's key and address of each WQE fetched (la_key, la_addr, la_ok: one
	 * to look up; LUT RAM, written as its beat comes), looked at ahead of the head, a slot a clock
	 * from la_slot, so its MPT entry and the MTT line of its first page are read before the WQE
	 * needs them (tx_mpt_ahead), up to la_fill, pf_fill as the clock started (a slot is read a
	 * clock after it is written); pf_la_ok: the first beat's part of la_ok */
	uint32_t la_key[TX_PF];
	uint64_t la_addr[TX_PF];
	uint8_t la_ok[TX_PF];
	uint32_t la_slot, la_fill;
	uint8_t pf_la_ok;

	/* the timer wheel's add of this clock (tx_wheel.h): a QP's first outstanding WQE started */
	uint8_t tw_add;
	uint16_t tw_add_q;
	uint8_t fl_pend, fl_valid;   /* a QP the send side found in error, looked at before the */
	uint16_t fl_q;               /* wheel's next (its WQEs outstanding complete) */

	uint8_t push_beat[RNIC_BEAT];/* the first half of a WQE being pushed */
	uint8_t push_half;

	/* fence (CFG_TBL_FENCE): waiting for the packet whose reads are being issued to have them
	 * all out, then for the read channel's slot */
	uint8_t fence_pending, fence_token;
	uint64_t now;

	/* the request message being cut into packets */
	uint8_t phase;               /* 0 idle, 1 building packets */
	uint8_t cancel;              /* go-back-N: stop at the next packet boundary */
	uint8_t wqe_bad;             /* the WQE in wqe came refused by the host */
	uint32_t qpn;
	uint16_t wqe_index;          /* SQ index of its WQE */
	uint8_t wqe[RNIC_WQE_BYTES];
	uint8_t op, type;            /* enum WQE_OP, enum QPT */
	tx_sge_t sge[RNIC_MAX_SGE];
	uint32_t nsge;
	uint32_t msg_len, mtu, npkts, pkt, first_psn;
	uint32_t rd_skip;            /* a READ requested again from inside: bytes already placed */
	uint8_t inline_data;

	/* the READ response whose packet was built last (tx_rsq's number rj_rid, its QP rj_qpn),
	 * while packets of it are still to come (rj_open); the packets of one stopped (rj_drop_rid,
	 * while rj_drop) dropped as they come */
	uint8_t rj_open, rj_rid, rj_drop, rj_drop_rid;
	uint16_t rj_qpn;
	uint8_t rj_stop;             /* tx_rsq is told to stop rj_rid (rjcq, at tx_build's end) */

	/* read issuer: DMA reads of the payload of the packet built last, cut at pages and SGEs */
	uint8_t iss_rsp;             /* the payload is a READ response's (else the message's) */
	uint32_t iss_left;           /* bytes of the packet still to request */
	uint32_t iss_sge, iss_sge_off;
	uint64_t iss_va;
	uint32_t iss_key;
	/* the MPT entry of the issuer's key (ie_key), looked up in an earlier clock: its reads
	 * translate from this register, and the lookup's port is the scatter check's meanwhile; a
	 * write of the MPT drops it (ie_valid) */
	uint8_t ie_valid;
	uint32_t ie_key;
	uint32_t ie_e[RNIC_MPT_WORDS];
	/* the key whose entry the issuer's or the scatter check's lookup missed, to be read from the
	 * next clock on (before the reads ahead, which wait for it; xl: the issuer's, at va) */
	uint8_t mm_on, mm_xl;
	uint32_t mm_key;
	uint64_t mm_va;
	uint32_t credit;             /* payload bytes requested and not yet taken into payq (crdq) */
	/* the read of this clock for the read channel, pushed at its end (rq_on), into the room
	 * rdreqq had as the clock began (rq_room) */
	tx_rdreq_t rq;
	uint8_t rq_on, rq_room;
	uint8_t wq_on;               /* the scheduler's WQE read of this clock (wqreqq) */
	uint8_t rd_used;             /* the read channel's list places taken (asked, not freed: crdq);
				      * the scheduler leaves the last one to the builder's reads */

	/* acknowledgements and completions */
	uint8_t ack_busy, ack_rd;
	uint32_t ack_qpn, ack_psn, ack_syn;
	rnic_cpl_t cpl[TX_CPL_FIFO];
	uint32_t cpl_head, cpl_tail;
	rnic_cpl_t cs[TX_CPL_CLK];   /* this clock's, a slot each (valid in cs_v), pushed as the next begins */
	uint8_t cs_v;
	uint8_t cpl_ok;              /* room for last clock's pushes and this one's, as the clock began
				      * (tx_cpl_full) */

	uint32_t sweep;              /* after a reset: the next entry of the tables to clear; RNIC_SWEPT when done */
	rnic_tx_out_t o;             /* outputs presented during the current cycle (but eth_*:
				      * tx_icrc_put's, and the emitter's counts) */
} tx_core_t;

void tx_core(tx_core_t *st, const rnic_tx_in_t *in, rnic_tx_pkq_t *pkq, rnic_tx_rdreqq_t *reqs, rnic_tx_wqreqq_t *wqs,
	     rnic_tx_rdbeatq_t *beats, rnic_tx_crdq_t *crd, rnic_tx_retq_t *retq, rnic_tx_fltq_t *fltq, rnic_tx_twaddq_t *twadd, rnic_tx_twdueq_t *twdue,
	     rnic_tx_twretq_t *twret, rnic_tx_rjq_t *rjq, rnic_tx_rjxq_t *rjxq, rnic_tx_rjcq_t *rjcq,
	     rnic_tx_out_t *out);

#define RNIC_TX_STAGES 9u

typedef struct {
	tx_core_t core;
	rnic_icrc_fold_t fold;
	tx_icrc_put_t put;
	tx_wheel_t wheel;
	tx_emit_t emit;
	tx_rsq_t rsq;
	tx_rdport_t rdport;
	rnic_tx_pkq_t pkq;
	rnic_tx_rdreqq_t rdreqq;
	rnic_tx_wqreqq_t wqreqq;
	rnic_tx_rdbeatq_t rdbeatq;
	rnic_tx_crdq_t crdq;
	rnic_tx_payq_t payq;
	rnic_tx_retq_t retq;
	rnic_tx_fltq_t fltq;
	rnic_icrc_inq_t ethq;
	rnic_icrc_foldq_t foldq;
	rnic_icrc_shiftq_t shiftq;
	rnic_icrc_sumq_t sumq;
	rnic_tx_twaddq_t twaddq;
	rnic_tx_twdueq_t twdueq;
	rnic_tx_twretq_t twretq;
	rnic_tx_rjq_t rjq;
	rnic_tx_rjxq_t rjxq;
	rnic_tx_rjcq_t rjcq;
} rnic_tx_state_t;

void rnic_tx_step(rnic_tx_state_t *st, const rnic_tx_in_t *in, rnic_tx_out_t *out);
/* the same clock with the stages called in the order given (a permutation of 0..8): the result
 * must not depend on it (the simulator's check, RNIC_STAGE_ORDER) */
void rnic_tx_step_order(rnic_tx_state_t *st, const rnic_tx_in_t *in, rnic_tx_out_t *out, const uint8_t *order);

#endif
