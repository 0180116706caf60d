/* TX kernel, shared by its sources: enums, macros, and the functions of one source the other calls. */
#ifndef TX_INT_H
#define TX_INT_H

#include <assert.h>
#include "tx.h"

#define CYCLES_10US (RNIC_CLOCK_MHZ * 10)

/* A cycle as the QPs' timers keep it: the timer wheel's tick (2^TW_SHIFT cycles, 4.096 us), in
 * 32 bits. They wrap after 4.9 hours, twice the longest ACK timeout (4.096 us * 2^31): times
 * are compared by their difference. */
static inline uint32_t tx_tick(uint64_t cycle)
{
	return (uint32_t)(cycle >> TW_SHIFT);
}

/* a field of QP q's QPC CTRL, as the send side reads it */
#define QSF_CTRL(st, q, f) RNIC_GET(RNIC_QPC_CTRL_##f, (st)->qsf[q].ctrl)

/* A copy's word for QP q: its write of this clock, not landed yet, forwarded (a register) */
static inline uint32_t tx_fwd(const tx_copy_w_t *w, uint32_t q, uint32_t mem)
{
	return w->valid && w->q == q ? w->v : mem;
}

/* QP q is in error (found by either side), as the send side and the completion side see it */
static inline int tx_err_s(const tx_core_t *st, uint32_t q)
{
	return st->err_s[q] | tx_fwd(&st->cw_err_c, q, st->err_c_s[q]);
}

static inline int tx_err_c(const tx_core_t *st, uint32_t q)
{
	return tx_fwd(&st->cw_err_s, q, st->err_s_c[q]) | st->err_c[q];
}

/* Bits set in the low n of m (a slot mask: an adder tree) */
static inline uint32_t tx_bits_below(uint32_t m, uint32_t n)
{
	uint32_t i, c = 0;

	for (i = 0; i < 16; i++)
		c += i < n && ((m >> i) & 1);
	return c;
}

/* The oldest outstanding WQE's position, as the send side sees it */
static inline uint32_t tx_head_s(const tx_core_t *st, uint32_t q)
{
	return tx_fwd(&st->cw_head, q, st->ob_head_s[q]);
}

/* WQEs of QP q outstanding, as the send side and the completion side see them */
static inline uint32_t tx_ob_n_s(const tx_core_t *st, uint32_t q)
{
	return (uint8_t)(st->ob_tail[q] - tx_head_s(st, q));
}

static inline uint32_t tx_ob_n_c(const tx_core_t *st, uint32_t q)
{
	return (uint8_t)(tx_fwd(&st->cw_tail, q, st->ob_tail_c[q]) - st->ob_head[q]);
}

/* Writes of the window ends and error flags: to the owner's memory now, to its readers' copies
 * at the clock's end (copies_land: a copy may be read in this clock, and a read of it then gets
 * the new word from the write's register, tx_fwd; one write a clock each) */
#define TX_COPY_WRITE(st, w, q, v)                                                               \
	do {                                                                                     \
		assert(!(st)->w.valid);                                                          \
		(st)->w = (tx_copy_w_t){1, (uint16_t)(q), (uint16_t)(v)};                       \
	} while (0)

static inline void tx_set_ob_head(tx_core_t *st, uint32_t q, uint32_t v)
{
	st->ob_head[q] = (uint8_t)v;
	TX_COPY_WRITE(st, cw_head, q, (uint8_t)v);
}

static inline void tx_set_ob_tail(tx_core_t *st, uint32_t q, uint32_t v)
{
	st->ob_tail[q] = (uint8_t)v;
	TX_COPY_WRITE(st, cw_tail, q, (uint8_t)v);
}

static inline void tx_set_err_s(tx_core_t *st, uint32_t q, uint32_t v)
{
	st->err_s[q] = (uint8_t)v;
	TX_COPY_WRITE(st, cw_err_s, q, v);
}

static inline void tx_set_err_c(tx_core_t *st, uint32_t q, uint32_t v)
{
	st->err_c[q] = (uint8_t)v;
	TX_COPY_WRITE(st, cw_err_c, q, v);
}

/* READ/atomic WQEs of QP q outstanding */
static inline uint32_t tx_rd_out(const tx_core_t *st, uint32_t q)
{
	return (uint8_t)(st->rd_started[q] - st->rd_retired[q]);
}

/* No room in the completion FIFO, as the clock began, for what a send-side and a completion-side
 * event may push in one clock (an error completion and the QP-fatal event each) */
static inline int tx_cpl_full(const tx_core_t *st)
{
	return !st->cpl_ok;
}

/* The pool entry of QP q's oldest outstanding WQE (there is one; completion side) */
static inline uint32_t tx_ob_head(const tx_core_t *st, uint32_t q)
{
	return st->ob_fv[q] && st->ob_fpos[q] == st->ob_head[q] ? st->ob_first[q] : st->ob_he[q];
}

/* obn[e], or the word the send side wrote there this clock */
static inline uint32_t tx_obn(const tx_core_t *st, uint32_t e)
{
	return st->obn_fw && st->obn_fw_e == e ? st->obn_fw_d : st->obn[e];
}

static inline void tx_obn_write(tx_core_t *st, uint32_t e, uint32_t next)
{
	st->obn[e] = (uint16_t)next;
	st->obn_fw = 1;
	st->obn_fw_e = (uint16_t)e;
	st->obn_fw_d = (uint16_t)next;
}

/* Free entries in the pool */
static inline uint32_t tx_ob_free(const tx_core_t *st)
{
	return TX_OBP - st->ob_fresh + (st->obf_tail - st->obf_head);
}

/* This clock's lookup of the MPT cache and the TLB (tx_lookup, tx_build.c) */
typedef struct {
	uint8_t iss;          /* the issuer's read translated, from its key's entry in ie_e */
	uint8_t live;         /* the issuer's: the entry admits the read (rnic_mpt_live); then */
	int8_t x;             /* the issuer's translation: rnic_tlb_get's answer, the page in bus */
	uint8_t mine;         /* the MPT lookup is the issuer's (its key's entry not in ie_e), or */
	uint8_t chk;          /* the head WQE's scatter entry's */
	int8_t hit;           /* rnic_mpt_get's answer (-1 also when none was made), the entry in e */
	uint32_t e[RNIC_MPT_WORDS];
	uint32_t key, n, mi;  /* the MPT lookup's key; the issuer's read: its length, MTT entry, */
	uint64_t addr, off, bus; /* address, and offset in its page */
	/* the WQE further on whose key tx_mpt_ahead looks at (slot la), read as the clock begins */
	uint32_t la, la_key;
	uint64_t la_addr;
	uint8_t la_ok;
} tx_look_t;

/* The read issuer's place in the packet being read (iss_*), as the clock began */
typedef struct {
	uint32_t left, sge, sge_off;
	uint64_t va;
} tx_iss_t;

int tx_is_rd(uint32_t op);
void tx_cpl_push(tx_core_t *st, uint32_t slot, uint32_t qpn, uint32_t cqn, uint64_t wr_id, uint32_t op, uint32_t len,
		 uint32_t status, uint32_t ts, uint32_t index);
void tx_qp_fatal(tx_core_t *st, uint32_t q, int send_side);
int tx_rd_busy(const tx_core_t *st);
int tx_rd_full(const tx_core_t *st);
void tx_read_req(tx_core_t *st, uint64_t addr, uint32_t len, uint32_t kind);
void tx_unfetch(tx_core_t *st, uint32_t q, uint32_t at_start, uint32_t ci_on, uint32_t ci, uint32_t first);
void tx_start_message(tx_core_t *st);
const uint8_t *tx_sge_left(const tx_core_t *st);
void tx_sge_check(tx_core_t *st, const tx_look_t *lk);
void tx_lookup(tx_core_t *st, tx_look_t *lk, uint32_t refused);
int tx_may_send(const tx_core_t *st, uint32_t q, uint32_t ob_n);
void tx_wakes_land(tx_core_t *st);
void tx_join(tx_core_t *st);
void tx_schedule(tx_core_t *st, const rnic_tx_in_t *in, rnic_tx_wqreqq_t *wqs, uint32_t tmr);
void tx_fetch_land(tx_core_t *st);
void tx_stop_fetch(tx_core_t *st, uint32_t q, uint32_t first);
void tx_build(tx_core_t *st, const tx_look_t *lk, rnic_tx_pkq_t *pkq, rnic_tx_fltq_t *fltq, rnic_tx_rjq_t *rjq, rnic_tx_rjxq_t *rjxq,
	      rnic_tx_rjcq_t *rjcq);
/* QP q may be able to fetch: it is woken, in this clock's slot of the place that wakes it, into
 * `wake` as the next clock begins (wakes_land). Places that can wait do while wake_ok is 0. */
static inline void tx_wake(tx_core_t *st, uint32_t slot, uint32_t q)
{
	assert(!((st->wk_v >> slot) & 1));
	st->wk_v |= (uint16_t)(1u << slot);
	st->wk_q[slot] = (uint16_t)q;
}

/* tx_reset.c */
void tx_reset(tx_core_t *st);
void tx_sweep(tx_core_t *st, const rnic_tx_in_t *in);

#endif
