/* RX kernel, shared by its sources: enums, macros, and the functions of one source the other calls. */
#ifndef RX_INT_H
#define RX_INT_H

#include "rx.h"

enum {
	B_IDLE,
	B_SEG,    /* the frame's next payload segment, to the store once its key's MPT entry and its
	           * page's MTT line are there (read from ICM) */
	B_RWQE, B_ATOMIC,
	B_ATREC,  /* an atomic's result to its replay slot in ICM, ... */
	B_ATPL,   /* ... then the target's write */
	B_REPLAY, /* a duplicate atomic waits for its result read back from ICM */
	B_FIN,    /* a read's data ended the frame: it is finished in the next clock the store has room
	           * (a read's data is taken whatever the store does: TX's may wait behind it) */
	B_POST,   /* the same for a flush completion */
	B_ATX,    /* an atomic's operand address waits for its key's MPT entry or its MTT line */
};

/* a field of the CTRL word of the context the frame being processed came with (rx_ctx) */
#define QCL_CTRL(st, f) RNIC_GET(RNIC_QPC_CTRL_##f, (st)->cur.l.ctrl)
/* rq_ctl and rq_srq (rx.h) */
#define RQ_CTX(c) ((c) & 0xffu)
#define RQ_LOG(c) (((c) >> 8) & 0x1fu)
#define RQ_LIVE 0x8000u
#define RQ_CQN(c) ((c) >> 16)
#define RQ_SRQ 0x8000u

#define SRQC_F(st, n, reg, f) RNIC_GET(RNIC_SRQC_##reg##_##f, (st)->srqc[n][RNIC_SRQC_##reg / 4])
#define SRQC_W(st, n, reg) ((st)->srqc[n][RNIC_SRQC_##reg / 4])

enum { MSG_NONE, MSG_WRITE, MSG_SEND };

/* What the frame being placed is: how it ends when a region it lands in is gone (cut()). */
enum { K_WRITE, K_SEND, K_ATOMIC, K_UD, K_RESP };

/* the receive WQE QP n's next (or current) message uses; WQEs fetched ahead; reads in flight */
#define CUR_RWQE(st, n) (&(st)->rwc[(st)->rw_chunk[n]][(st)->rw_used[n] % RX_RWQE])
#define RW_N(st, n) ((uint16_t)((st)->rw_got[n] - (st)->rw_used[n]))
#define RW_PEND(st, n) ((uint16_t)((st)->rw_req[n] - (st)->rw_got[n]))


/* This clock's lookups of the MPT cache and the TLB (lookup(), rx.c) */
typedef struct {
	int hit;              /* rx_mpt_get's answer: 1, the entry in e; else not there (yet) */
	uint32_t e[RNIC_MPT_WORDS];
	uint8_t live;         /* B_SEG, B_ATX: the entry admits the access (rnic_mpt_live); then */
	int x;                /* the translation's: 1, the bus address in bus; 0 wait; -1 fault */
	uint64_t bus;
} rx_look_t;

rx_cmd_t *rx_cmd(rx_core_t *st);
int rx_rq_avail(const rx_core_t *st, uint32_t qpn);
int rx_need_rwqe(uint32_t op);
/* What this clock's processing ends with, done once after it (frame_end, rx.c): the frame
 * finished (its beats released, what it produced posted), or only what a flush produced posted */
enum { FIN_NONE, FIN_FRAME, FIN_POST };

static inline void rx_finish_frame(rx_core_t *st)
{
	st->fin = FIN_FRAME;
}
void rx_respond(rx_core_t *st, uint32_t kind, uint32_t psn, uint32_t syndrome);
void rx_nak(rx_core_t *st, uint32_t psn, uint32_t syndrome);
void rx_notice(rx_core_t *st, uint32_t psn, uint32_t syndrome, uint32_t rd);
void rx_completion(rx_core_t *st, uint64_t wr_id, uint32_t opcode, uint32_t status, uint32_t len);
int rx_mpt_get(rx_core_t *st, uint32_t key, uint32_t e[RNIC_MPT_WORDS]);
void rx_mpt_ahead(rx_core_t *st);
void rx_mpt_issue(rx_core_t *st);
void rx_tlb_issue(rx_core_t *st);
const rx_sge_t *rx_rwqe_next(rx_core_t *st, uint32_t qpn);
int rx_rwqe_checked(rx_core_t *st, uint32_t qpn, const rx_look_t *lk);
int rx_head_key(rx_core_t *st, uint32_t *key);
void rx_atomic_xlate(rx_core_t *st, const rx_look_t *lk);
void rx_cut(rx_core_t *st);
void rx_place(rx_core_t *st, uint32_t src, uint32_t len);
void rx_seek(rx_core_t *st, const rx_sge_t *sge, uint32_t nsge, uint32_t off);
void rx_frame_value(rx_core_t *st, uint32_t off, uint64_t v, uint32_t n);
void rx_fetch_rwqe(rx_core_t *st, uint32_t qpn);
void rx_rw_release(rx_core_t *st, uint32_t qpn);
void rx_dispatch(rx_core_t *st, const rnic_rx_in_t *in, const rx_look_t *lk);
void rx_read_req(rx_core_t *st, uint64_t addr, uint32_t len, uint8_t kind, uint32_t qpn);
int rx_rd_room(const rx_core_t *st);
void rx_atomic_done(rx_core_t *st, const uint8_t *rd, uint32_t err);
void rx_atomic_record(rx_core_t *st);
void rx_atomic_read(rx_core_t *st);
void rx_replay_done(rx_core_t *st, const uint8_t *rd, uint32_t last, uint32_t err);

/* rx_reset.c */
void rx_reset(rx_core_t *st);
void rx_sweep(rx_core_t *st, const rnic_rx_in_t *in);

#endif
