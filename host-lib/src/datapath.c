/* The data path: send and receive WQEs into the rings, doorbells, completions out of the CQ.
 * The common cases are built with word stores from the spec's layout; everything rdma-core's
 * providers check before a WQE reaches the NIC is checked here, with their errors. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "abi_assert.h"
#include "rnic_verbs.h"

/* The WR opcodes each QP type takes (bit i: enum ibv_wr_opcode i) */
#define OP(o) (1u << IBV_WR_##o)
#define OPS_UD (OP(SEND) | OP(SEND_WITH_IMM))
#define OPS_UC (OPS_UD | OP(RDMA_WRITE) | OP(RDMA_WRITE_WITH_IMM))
#define OPS_ATOMIC (OP(ATOMIC_CMP_AND_SWP) | OP(ATOMIC_FETCH_AND_ADD))
#define OPS_RC (OPS_UC | OP(RDMA_READ) | OPS_ATOMIC)
#define OPS_IMM (OP(SEND_WITH_IMM) | OP(RDMA_WRITE_WITH_IMM))
#define SEND_STATES ((1u << IBV_QPS_RTS) | (1u << IBV_QPS_SQD) | (1u << IBV_QPS_ERR))
#define SEND_FLAGS (IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | IBV_SEND_INLINE)

uint32_t rnic_send_ops(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC ? OPS_RC : type == IBV_QPT_UC ? OPS_UC : OPS_UD;
}

/* The fast path (sq_put) builds the type's opcodes below this one: enum ibv_wr_opcode numbers
 * WRITE, WRITE_WITH_IMM, SEND, SEND_WITH_IMM, READ first, so one compare tells */
_Static_assert(OPS_UC == (1u << (IBV_WR_SEND_WITH_IMM + 1)) - 1 &&
		       (OPS_UC | OP(RDMA_READ)) == (1u << (IBV_WR_RDMA_READ + 1)) - 1,
	       "the fast opcodes come first");
uint32_t rnic_fast_end(enum ibv_qp_type type)
{
	return type == IBV_QPT_RC ? IBV_WR_RDMA_READ + 1 : type == IBV_QPT_UC ? IBV_WR_SEND_WITH_IMM + 1 : 0;
}

/* The common WQE's OPCODE, FLAGS, NUM_SGE as one 32-bit word (its IMM above) */
#define CTL_SHIFT(f) (8 * (RNIC_WQE_##f##_OFF - RNIC_WQE_OPCODE_OFF))
_Static_assert(((OPS_UC | OP(RDMA_READ)) & OPS_IMM) == ((OPS_UC | OP(RDMA_READ)) & 0xaaaaaaaau),
	       "of the fast opcodes, the odd ones carry immediate data");
_Static_assert(RNIC_WQE_OPCODE_OFF == 8 && RNIC_WQE_IMM_OFF == 12 && RNIC_WQE_REMOTE_ADDR_OFF == 16 &&
		       RNIC_WQE_RKEY_OFF == 24 && RNIC_WQE_TOTAL_LEN_OFF == 28 && RNIC_WQE_COMPARE_ADD_OFF == 32 &&
		       RNIC_WQE_PUSH_QPN_OFF == 48 && RNIC_WQE_SGE_OFF == 64 && RNIC_SGE_LEN_OFF == 8 &&
		       RNIC_SGE_LKEY_OFF == 12,
	       "the common WQE in 64-bit words");

/* its constant part for a QP: FLAGS.SIGNALED if every WQE completes, NUM_SGE 1. A WR's opcode and
 * send_flags are ORed in (enum WQE_OP and WQE_FLAG are enum ibv_wr_opcode and ibv_send_flags). */
uint32_t rnic_wqe_ctl(int sig_all)
{
	return (sig_all ? RNIC_WQE_FLAG_SIGNALED : 0) << CTL_SHIFT(FLAGS) | 1u << CTL_SHIFT(NUM_SGE);
}

/* the data of an inline WQE, in its SGE area */
static void copy_inline(uint8_t *p, const struct ibv_sge *sg, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		memcpy(p, (void *)(uintptr_t)sg[i].addr, sg[i].length);
		p += sg[i].length;
	}
}

static void write_ud_av(uint8_t *av, const struct ibv_send_wr *wr)
{
	const struct rnic_ah *ah = (const struct rnic_ah *)wr->wr.ud.ah;

	memcpy(av + RNIC_UD_AV_DMAC_OFF, ah->mac, 6);
	RNIC_UD_AV_DIP_SET(av, ah->ip);
	RNIC_UD_AV_IPV6_SET(av, ah->ipv6);
	memcpy(av + RNIC_UD_AV_DIP6_OFF, ah->ip6, 16);
	RNIC_UD_AV_QPN_SET(av, wr->wr.ud.remote_qpn);
	RNIC_UD_AV_QKEY_SET(av, wr->wr.ud.remote_qkey);
}

/* The header of a send WQE at w (every byte below SGE), what the opcode does not use zero: WR_ID;
 * OPCODE, FLAGS, NUM_SGE, IMM on zeroes; REMOTE_ADDR, RKEY, TOTAL_LEN whole; from COMPARE_ADD on,
 * zeroes. Fewer stores than zeroing it all first. */
_Static_assert(!RNIC_WQE_WR_ID_OFF && RNIC_WQE_WR_ID_OFF + 8 == RNIC_WQE_OPCODE_OFF &&
		       RNIC_WQE_IMM_OFF + 4 == RNIC_WQE_REMOTE_ADDR_OFF &&
		       RNIC_WQE_REMOTE_ADDR_OFF + 8 == RNIC_WQE_RKEY_OFF && RNIC_WQE_RKEY_OFF + 4 == RNIC_WQE_TOTAL_LEN_OFF &&
		       RNIC_WQE_TOTAL_LEN_OFF + 4 == RNIC_WQE_COMPARE_ADD_OFF,
	       "the WQE header's layout");
static inline __attribute__((always_inline)) void wqe_head(uint8_t *w, const struct ibv_send_wr *wr, uint32_t op,
							   uint32_t flags, uint32_t nsge, uint32_t total, int imm)
{
	memset(w + RNIC_WQE_OPCODE_OFF, 0, RNIC_WQE_REMOTE_ADDR_OFF - RNIC_WQE_OPCODE_OFF);
	memset(w + RNIC_WQE_COMPARE_ADD_OFF, 0, RNIC_WQE_SGE_OFF - RNIC_WQE_COMPARE_ADD_OFF);
	RNIC_WQE_WR_ID_SET(w, wr->wr_id);
	RNIC_WQE_OPCODE_SET(w, op); /* enum WQE_OP = enum ibv_wr_opcode */
	RNIC_WQE_FLAGS_SET(w, flags); /* enum WQE_FLAG = enum ibv_send_flags */
	RNIC_WQE_NUM_SGE_SET(w, nsge);
	if (imm)
		RNIC_WQE_IMM_SET(w, wr->imm_data); /* stays in network byte order */
	RNIC_WQE_REMOTE_ADDR_SET(w, wr->wr.rdma.remote_addr);
	RNIC_WQE_RKEY_SET(w, wr->wr.rdma.rkey);
	RNIC_WQE_TOTAL_LEN_SET(w, total);
}

static inline uint8_t *sq_slot(const struct rnic_qp *qp, uint32_t pi)
{
	return qp->sq + (size_t)(pi & qp->sq_mask) * RNIC_WQE_BYTES;
}

static inline void write_sge(uint8_t *s, const struct ibv_sge *sg)
{
	RNIC_SGE_ADDR_SET(s, sg->addr);
	RNIC_SGE_LEN_SET(s, sg->length);
	RNIC_SGE_LKEY_SET(s, sg->lkey);
}

/* max_send_wr WQEs posted and not completed (pi never passes sq_end) */
static inline __attribute__((always_inline)) int sq_full(struct rnic_qp *qp, uint32_t pi)
{
	return (uint16_t)pi == __atomic_load_n(&qp->sq_end, __ATOMIC_ACQUIRE);
}

/* Any send WQE: UD, atomics, several SGEs. As rdma-core's providers: EINVAL for what the QP
 * cannot take, ENOMEM when the ring is full. */
static __attribute__((noinline)) int sq_write_any(struct rnic_qp *qp, const struct ibv_send_wr *wr)
{
	uint32_t op = wr->opcode, nsge = (uint32_t)wr->num_sge, bit = op < 32 ? 1u << op : 0, i;
	uint32_t flags = wr->send_flags & SEND_FLAGS;
	uint64_t total = 0; /* 64 bits: lengths summed in 32 would wrap below max_inline_data */
	uint8_t *w;

	if (!((SEND_STATES >> qp->ex.qp_base.state) & 1) || !(bit & qp->send_ops) || nsge > qp->cap.max_send_sge ||
	    ((bit & (OP(RDMA_READ) | OPS_ATOMIC)) && (flags & IBV_SEND_INLINE)) ||
	    ((bit & OPS_ATOMIC) && (nsge != 1 || wr->sg_list[0].length != 8)) ||
	    (qp->ex.qp_base.qp_type == IBV_QPT_UD && !wr->wr.ud.ah))
		return EINVAL;
	if (sq_full(qp, qp->sq_pi))
		return ENOMEM;
	for (i = 0; i < nsge; i++)
		total += wr->sg_list[i].length;
	if ((flags & IBV_SEND_INLINE) && total > qp->cap.max_inline_data)
		return EINVAL;
	w = sq_slot(qp, qp->sq_pi);
	flags |= (uint8_t)(qp->wqe_ctl >> CTL_SHIFT(FLAGS)); /* SIGNALED if sq_sig_all */
	wqe_head(w, wr, op, flags, nsge, total > UINT32_MAX ? UINT32_MAX : (uint32_t)total, bit & OPS_IMM);
	if (qp->ex.qp_base.qp_type == IBV_QPT_UD) {
		/* the address vector takes the place of REMOTE_ADDR and RKEY */
		memset(w + RNIC_WQE_REMOTE_ADDR_OFF, 0, RNIC_WQE_TOTAL_LEN_OFF - RNIC_WQE_REMOTE_ADDR_OFF);
		write_ud_av(w + RNIC_WQE_UD_AV_OFF, wr);
	} else if (bit & OPS_ATOMIC) {
		RNIC_WQE_REMOTE_ADDR_SET(w, wr->wr.atomic.remote_addr);
		RNIC_WQE_RKEY_SET(w, wr->wr.atomic.rkey);
		RNIC_WQE_COMPARE_ADD_SET(w, wr->wr.atomic.compare_add);
		RNIC_WQE_SWAP_SET(w, wr->wr.atomic.swap);
	}
	if (flags & IBV_SEND_INLINE)
		copy_inline(w + RNIC_WQE_SGE_OFF, wr->sg_list, nsge);
	else
		for (i = 0; i < nsge; i++)
			write_sge(w + RNIC_WQE_SGE_OFF + i * RNIC_SGE_SIZE, &wr->sg_list[i]);
	qp->sq_pi++;
	return 0;
}

/* The common WQE (RC or UC; SEND, WRITE, READ; one SGE, its length *len; inline up to 16 bytes),
 * which sq_put builds in a few word stores; any other goes to sq_write_any. op and flags: wr's. */
static inline __attribute__((always_inline)) int sq_fast(const struct rnic_qp *qp, const struct ibv_send_wr *wr,
							 uint32_t op, uint32_t flags, uint32_t *len)
{
	if (wr->num_sge != 1)
		return 0;
	*len = wr->sg_list[0].length;
	if (flags & IBV_SEND_INLINE)
		return op < qp->fast_end_inline && *len <= 16;
	return op < qp->fast_end;
}

/* v as the 8 bytes the NIC reads (little-endian), for a plain 64-bit store */
static inline uint64_t le64(uint64_t v)
{
	uint64_t r;

	rnic_wr_le((uint8_t *)&r, 8, v);
	return r;
}

/* n bytes v at offset off of the WQE w and, unless e is NULL, of its pushed copy e: read once
 * (by the caller), stored into each */
static inline __attribute__((always_inline)) void put(uint8_t *w, uint8_t *e, size_t off, const void *v, size_t n)
{
	memcpy(w + off, v, n);
	if (e)
		memcpy(e + off, v, n);
}

static inline __attribute__((always_inline)) void put8(uint8_t *w, uint8_t *e, size_t off, uint64_t v)
{
	put(w, e, off, &v, 8);
}

/* a push's PUSH_QPN and PUSH_INDEX (the WQE at SQ index pi) as the 8 bytes from PUSH_QPN on */
static inline __attribute__((always_inline)) uint64_t push_word(const struct rnic_qp *qp, uint32_t pi)
{
	return le64(qp->ex.qp_base.qp_num | (uint64_t)pi << (8 * (RNIC_WQE_PUSH_INDEX_OFF - RNIC_WQE_PUSH_QPN_OFF)));
}

/* The common WQE (sq_fast said yes, len its first SGE's length) at SQ index pi into the ring at w
 * and, unless e is NULL, into the push e too: each word read from wr once, where it is stored,
 * and stored to both. Up to the end of the first SGE: WR_ID; OPCODE, FLAGS, NUM_SGE, IMM;
 * REMOTE_ADDR; RKEY, TOTAL_LEN; zeros from COMPARE_ADD on (PUSH_QPN, PUSH_INDEX in e); the SGE,
 * or the inline bytes: from 8 to 16 in two loads (overlapping below 16: no memcpy call), fewer one
 * by one. */
#ifdef RNIC_LE_WORDS
/* REMOTE_ADDR, RKEY are wr.rdma as it lies in memory, and the SGE is struct ibv_sge: 16-byte copies */
_Static_assert(sizeof(((struct ibv_send_wr *)0)->wr.rdma) == 16 &&
		       offsetof(struct ibv_send_wr, wr.rdma.rkey) == offsetof(struct ibv_send_wr, wr.rdma.remote_addr) + 8 &&
		       sizeof(struct ibv_sge) == RNIC_SGE_SIZE && offsetof(struct ibv_sge, length) == RNIC_SGE_LEN_OFF &&
		       offsetof(struct ibv_sge, lkey) == RNIC_SGE_LKEY_OFF,
	       "wr.rdma and ibv_sge as the WQE has them");
#endif
static inline __attribute__((always_inline)) void wqe_put(const struct rnic_qp *qp, uint8_t *w, uint8_t *e,
							  const struct ibv_send_wr *wr, uint32_t len, uint32_t pi,
							  int inl)
{
	const uint8_t *s;
	uint64_t ctl, a, b;
	uint32_t i;
#ifdef RNIC_LE_WORDS
	uint8_t x[16];
#endif

	/* In e, COMPARE_ADD, SWAP and the bytes after PUSH_INDEX are the link ring's zeros: nothing
	 * writes them there (and these opcodes do not read them). */
	if (e)
		put8(e, NULL, RNIC_WQE_PUSH_QPN_OFF, push_word(qp, pi));
	memset(w + RNIC_WQE_COMPARE_ADD_OFF, 0, RNIC_WQE_SGE_OFF - RNIC_WQE_COMPARE_ADD_OFF);
	put8(w, e, RNIC_WQE_WR_ID_OFF, le64(wr->wr_id));
	/* in 32 bits: ALU operations on wr's and qp's fields in place */
	ctl = (wr->send_flags & SEND_FLAGS) << CTL_SHIFT(FLAGS) | qp->wqe_ctl | wr->opcode;
	if (wr->opcode & 1) /* the fast opcodes that carry IMM are odd */
		ctl |= (uint64_t)wr->imm_data << CTL_SHIFT(IMM); /* stays in network byte order */
	put8(w, e, RNIC_WQE_OPCODE_OFF, le64(ctl));
#ifdef RNIC_LE_WORDS
	memcpy(x, &wr->wr.rdma, 16);
	put(w, e, RNIC_WQE_REMOTE_ADDR_OFF, x, 16);
	put(w, e, RNIC_WQE_TOTAL_LEN_OFF, &len, 4); /* over wr.rdma's padding */
#else
	put8(w, e, RNIC_WQE_REMOTE_ADDR_OFF, le64(wr->wr.rdma.remote_addr));
	put8(w, e, RNIC_WQE_RKEY_OFF, le64(wr->wr.rdma.rkey | (uint64_t)len << 32));
#endif
	if (!inl) {
#ifdef RNIC_LE_WORDS
		memcpy(x, wr->sg_list, 16);
		put(w, e, RNIC_WQE_SGE_OFF, x, 16);
#else
		put8(w, e, RNIC_WQE_SGE_OFF, le64(wr->sg_list->addr));
		put8(w, e, RNIC_WQE_SGE_OFF + 8, le64(len | (uint64_t)wr->sg_list->lkey << 32));
#endif
		return;
	}
	s = (const uint8_t *)(uintptr_t)wr->sg_list->addr;
	if (len >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + (size_t)len - 8, 8);
		put8(w, e, RNIC_WQE_SGE_OFF, a);
		put8(w, e, RNIC_WQE_SGE_OFF - 8 + (size_t)len, b);
	} else {
		for (a = 0, i = 0; i < len; i++)
			a |= (uint64_t)s[i] << 8 * i;
		put8(w, e, RNIC_WQE_SGE_OFF, le64(a));
	}
}

/* the common WQE wr at the producer index (sq_fast said yes, the ring has room) */
static void sq_put(struct rnic_qp *qp, const struct ibv_send_wr *wr, uint32_t len)
{
	uint16_t pi = qp->sq_pi;

	qp->sq_pi = (uint16_t)(pi + 1);
	wqe_put(qp, sq_slot(qp, pi), NULL, wr, len, pi, wr->send_flags & IBV_SEND_INLINE);
}

static inline __attribute__((always_inline)) int sq_write(struct rnic_qp *qp, const struct ibv_send_wr *wr)
{
	uint32_t len;

	if (__builtin_expect(!sq_fast(qp, wr, wr->opcode, wr->send_flags, &len), 0))
		return sq_write_any(qp, wr);
	if (__builtin_expect(!((SEND_STATES >> qp->ex.qp_base.state) & 1), 0))
		return EINVAL;
	if (__builtin_expect(sq_full(qp, qp->sq_pi), 0))
		return ENOMEM;
	sq_put(qp, wr, len);
	return 0;
}

int rnic_sq_write(struct rnic_qp *qp, const struct ibv_send_wr *wr)
{
	return sq_write(qp, wr);
}

/* The WQEs below producer index pi are the NIC's: a 32-bit store into the context's doorbell
 * page. The simulator's ring is written here, not through the bus ops' indirect call: the entry's
 * ADDR and VALUE in one store, sq_db_link with PI (VALUE's top bits) added. */
_Static_assert(RNIC_CTX_SQ_DB_PI_SHIFT + RNIC_CTX_SQ_DB_PI_WIDTH == 32, "PI is the top of the SQ doorbell");
static inline __attribute__((always_inline)) uint64_t sq_db_link(const struct rnic_qp *qp, uint16_t pi)
{
	return qp->sq_db_link | (uint64_t)pi << (32 + RNIC_CTX_SQ_DB_PI_SHIFT);
}

static inline __attribute__((always_inline)) void card_doorbell(const struct rnic_qp *qp, uint16_t pi)
{
	if (qp->db_reg)
		*qp->db_reg = qp->sq_db | RNIC_SET(RNIC_CTX_SQ_DB_PI, pi);
}

void rnic_sq_doorbell(struct rnic_qp *qp)
{
	uint8_t *ring = qp->db_ring;
	uint32_t slot;

	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (!ring) {
		card_doorbell(qp, qp->sq_pi);
		return;
	}
	slot = sim_ring_claim(ring);
	if (__builtin_expect(sim_ring_full(ring, slot), 0))
		sim_ring_wait(qp->dev->bus, slot);
	sim_ring_fill(ring, slot, sq_db_link(qp, qp->sq_pi));
}

/* ibv_post_send under the lock, which it drops: any list */
static __attribute__((noinline)) int post_locked(struct rnic_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	int ret = 0, posted = 0;

	for (; wr; wr = wr->next) {
		ret = sq_write(qp, wr);
		if (ret)
			break;
		posted = 1;
	}
	if (posted)
		rnic_sq_doorbell(qp);
	rnic_unlock(&qp->lock);
	if (ret && bad)
		*bad = wr;
	return ret;
}

/* contended: wait for the lock */
static __attribute__((noinline)) int post_wait(struct rnic_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	rnic_lock(&qp->lock);
	return post_locked(qp, wr, bad);
}

/* post_one found the simulator's ring full after claiming slot: the WQE into the SQ, then its
 * doorbell (not a push) once the slot is free. Out of line, so that the fast path makes no call. */
static __attribute__((noinline, cold)) int post_ring_full(struct rnic_qp *qp, const struct ibv_send_wr *wr,
							  uint32_t len, uint32_t slot)
{
	sq_put(qp, wr, len);
	sim_ring_wait(qp->dev->bus, slot);
	sim_ring_fill(qp->db_ring, slot, sq_db_link(qp, qp->sq_pi));
	rnic_unlock(&qp->lock);
	return 0;
}

/* rnic_post_send of one WR that sq_fast takes, its first SGE's length len, the SQ not full; inl:
 * it has IBV_SEND_INLINE (a constant). In the simulator (a push window is only its) the ring slot
 * is claimed first, so that each word of the WQE goes into the SQ and into the push at once: the
 * push is its doorbell, and the NIC need not read it. Else the WQE, then its doorbell (RNIC_PUSH=0,
 * or the card). sq_pi and what the WQE needs are read after the claim: fewer values live across
 * it, no register to save. */
static inline __attribute__((always_inline)) int post_one(struct rnic_qp *qp, const struct ibv_send_wr *wr,
							  uint32_t len, int inl)
{
	uint32_t push = qp->push_addr, slot, pi;
	uint8_t *ring, *e;

	if (push) { /* then the simulator's ring is there */
		ring = qp->db_ring;
		slot = sim_ring_claim(ring);
		if (__builtin_expect(sim_ring_full(ring, slot), 0))
			return post_ring_full(qp, wr, len, slot);
		e = sim_ring_entry(ring, slot);
		pi = qp->sq_pi;
		qp->sq_pi = (uint16_t)(pi + 1);
		RNIC_LINK_RING_ENTRY_ADDR_SET(e, push);
		RNIC_LINK_RING_ENTRY_LEN_SET(e, RNIC_WQE_SGE_OFF + RNIC_SGE_SIZE); /* what wqe_put writes */
		wqe_put(qp, sq_slot(qp, pi), e + RNIC_LINK_RING_ENTRY_DATA_OFF, wr, len, pi, inl);
	} else if ((ring = qp->db_ring)) {
		slot = sim_ring_claim(ring);
		if (__builtin_expect(sim_ring_full(ring, slot), 0))
			return post_ring_full(qp, wr, len, slot);
		e = sim_ring_entry(ring, slot);
		pi = qp->sq_pi;
		qp->sq_pi = (uint16_t)(pi + 1);
		rnic_wr_le(e + RNIC_LINK_RING_ENTRY_ADDR_OFF, 8, sq_db_link(qp, (uint16_t)(pi + 1)));
		RNIC_LINK_RING_ENTRY_LEN_SET(e, 0);
		wqe_put(qp, sq_slot(qp, pi), NULL, wr, len, pi, inl);
	} else {
		pi = qp->sq_pi;
		qp->sq_pi = (uint16_t)(pi + 1);
		wqe_put(qp, sq_slot(qp, pi), NULL, wr, len, pi, inl);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		card_doorbell(qp, (uint16_t)(pi + 1));
		rnic_unlock(&qp->lock);
		return 0;
	}
	sim_ring_publish(e, slot); /* a release: after the WQE */
	rnic_unlock(&qp->lock);
	return 0;
}

/* post_one of fewer than 8 inline bytes: they are copied one by one, out of line */
static __attribute__((noinline)) int post_short(struct rnic_qp *qp, const struct ibv_send_wr *wr, uint32_t len)
{
	return post_one(qp, wr, len, 1);
}

/* One WR of the common kind, the lock free, the QP in RTS with room (the usual case): no loop, no
 * call. Anything else goes to post_locked, which finds the error (bad WR, state, ring full) as
 * sq_write does. */
int rnic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct rnic_qp *qp = (struct rnic_qp *)ibqp;
	uint32_t op, flags, len;

	if (__builtin_expect(rnic_lock_busy(&qp->lock), 0))
		return post_wait(qp, wr, bad);
	if (__builtin_expect(ibqp->state != IBV_QPS_RTS || sq_full(qp, qp->sq_pi) || !wr || wr->next ||
			     wr->num_sge != 1, 0))
		return post_locked(qp, wr, bad);
	op = wr->opcode;
	flags = wr->send_flags;
	len = wr->sg_list->length;
	if (!(flags & IBV_SEND_INLINE)) {
		if (__builtin_expect(op >= qp->fast_end, 0))
			return post_locked(qp, wr, bad);
		return post_one(qp, wr, len, 0);
	}
	if (__builtin_expect(op >= qp->fast_end_inline, 0))
		return post_locked(qp, wr, bad);
	if (__builtin_expect(len - 8 > 8, 0)) /* not 8 to 16 bytes */
		return len < 8 ? post_short(qp, wr, len) : post_locked(qp, wr, bad);
	return post_one(qp, wr, len, 1);
}

/* A receive WQE (RQ or SRQ ring entry) from a verbs receive request. */
static void write_rwqe(uint8_t *w, const struct ibv_recv_wr *wr)
{
	uint32_t i;

	memset(w, 0, RNIC_RWQE_BYTES);
	RNIC_RWQE_WR_ID_SET(w, wr->wr_id);
	RNIC_RWQE_NUM_SGE_SET(w, wr->num_sge);
	for (i = 0; i < (uint32_t)wr->num_sge; i++) {
		uint8_t *s = w + RNIC_RWQE_SGE_OFF + i * RNIC_SGE_SIZE;

		RNIC_SGE_ADDR_SET(s, wr->sg_list[i].addr);
		RNIC_SGE_LEN_SET(s, wr->sg_list[i].length);
		RNIC_SGE_LKEY_SET(s, wr->sg_list[i].lkey);
	}
}

int rnic_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rnic_qp *qp = (struct rnic_qp *)ibqp;
	struct rnic_context *c = to_ctx(ibqp->context);
	uint32_t mask = (1u << qp->rq_log) - 1;
	int ret = 0, posted = 0;

	rnic_lock(&qp->lock);
	for (; wr; wr = wr->next) {
		uint8_t *w = qp->rq + (size_t)(qp->rq_pi & mask) * RNIC_RWQE_BYTES;

		if (ibqp->state == IBV_QPS_RESET || wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_recv_sge) {
			ret = EINVAL;
			break;
		}
		if ((uint16_t)(qp->rq_pi - __atomic_load_n(&qp->rq_ci, __ATOMIC_ACQUIRE)) >= qp->cap.max_recv_wr) {
			ret = ENOMEM;
			break;
		}
		write_rwqe(w, wr);
		qp->rq_pi++;
		posted++;
	}
	if (posted) {
		__atomic_thread_fence(__ATOMIC_RELEASE);
		rnic_ring_rq(&c->dev, ibqp->qp_num, qp->rq_pi);
	}
	rnic_unlock(&qp->lock);
	if (ret && bad)
		*bad = wr;
	return ret;
}

/* CQE ci, and whether the NIC has written it: one test of its owner bit (the pass parity, plus
 * 1) */
static inline __attribute__((always_inline)) const uint8_t *cqe_at(const struct rnic_cq *cq, uint32_t ci)
{
	return cq->ring + (size_t)(ci & cq->mask) * RNIC_CQE_BYTES;
}

static inline __attribute__((always_inline)) int cqe_ready(const struct rnic_cq *cq, const uint8_t *e)
{
	return (__atomic_load_n(&e[RNIC_CQE_OWNER_OFF], __ATOMIC_ACQUIRE) ^ cq->pass) & 1;
}

/* The CQE at the consumer index if the NIC has written it, else NULL. Under cq->lock. */
static inline __attribute__((always_inline)) const uint8_t *cq_peek(struct rnic_cq *cq)
{
	const uint8_t *e = cqe_at(cq, cq->ci);

	return cqe_ready(cq, e) ? e : NULL;
}

const uint8_t *rnic_cq_peek(struct rnic_cq *cq)
{
	return cq_peek(cq);
}

/* Drop the CQEs of QP qpn not polled yet, as mlx5 does when a QP is reset or destroyed (the
 * firmware has fenced it: none is still on its way). Later CQEs move up to close the gap; the
 * shared receive queue gets back the entries the dropped receive CQEs consumed. */
void rnic_cq_clean(struct ibv_cq *ibcq, uint32_t qpn, struct rnic_srq *srq)
{
	struct rnic_cq *cq = (struct rnic_cq *)ibcq;
	uint32_t mask, n = 0, i, freed = 0;

	if (!cq)
		return;
	rnic_lock(&cq->lock);
	mask = (1u << cq->log) - 1;
	while (n <= mask && rnic_cqe_valid(cq->ring, cq->log, cq->ci + n))
		n++;
	for (i = cq->ci + n; i != cq->ci;) {
		uint8_t *e = cq->ring + (size_t)(--i & mask) * RNIC_CQE_BYTES;

		if (RNIC_CQE_QPN_GET(e) == qpn) {
			freed++;
			if (srq && RNIC_CQE_OPCODE_GET(e) >= IBV_WC_RECV)
				__atomic_fetch_add(&srq->ci, 1, __ATOMIC_RELEASE);
		} else if (freed) {
			/* the slot it moves to holds a valid CQE of this pass: its owner bit stays */
			memcpy(cq->ring + (size_t)((i + freed) & mask) * RNIC_CQE_BYTES, e, RNIC_CQE_OWNER_OFF);
		}
	}
	if (freed) {
		rnic_cq_at(cq, cq->log, cq->ci + freed);
		rnic_ring_cq(&to_ctx(ibcq->context)->dev, cq->cqn, (uint16_t)cq->ci, 0);
	}
	rnic_unlock(&cq->lock);
}

/* Done with CQE e, at consumer index ci (from rnic_cq_peek): free its work queue entry, advance.
 * Returns whether the CQ doorbell is due (cq_consume rings it). Under cq->lock. */
static inline __attribute__((always_inline)) int cq_advance(struct rnic_cq *cq, const uint8_t *e, uint32_t ci)
{
	struct rnic_context *c = to_ctx(cq->ex.context);
	struct rnic_qp *qp = rnic_qp_get(c, RNIC_CQE_QPN_GET(e));

	_Static_assert(RNIC_CQE_TS_END_OFF == RNIC_CQE_TS_START_OFF + 8 &&
			       offsetof(struct rnic_cq, ts_end) == offsetof(struct rnic_cq, ts_start) + 8,
		       "TS_START, TS_END copied as one");
#ifdef RNIC_LE_WORDS
	memcpy((char *)cq + offsetof(struct rnic_cq, ts_start), e + RNIC_CQE_TS_START_OFF, 16);
#else
	cq->ts_start = RNIC_CQE_TS_START_GET(e);
	cq->ts_end = RNIC_CQE_TS_END_GET(e);
#endif
	/* the send completions first (no jump): a requester's hot path */
	if (__builtin_expect(qp && RNIC_CQE_OPCODE_GET(e) < IBV_WC_RECV, 1))
		__atomic_store_n(&qp->sq_end, (uint16_t)(RNIC_CQE_WQE_INDEX_GET(e) + qp->sq_ahead), __ATOMIC_RELEASE);
	else if (qp && qp->srq)
		__atomic_fetch_add(&qp->srq->ci, 1, __ATOMIC_RELEASE);
	else if (qp)
		__atomic_store_n(&qp->rq_ci, (uint16_t)(qp->rq_ci + 1), __ATOMIC_RELEASE);
	cq->ci = ++ci;
	/* tell the NIC how far we are when ci & db_mask is 0, well before the ring could fill; a pass
	 * begins at these too */
	if (__builtin_expect(--cq->db_left, 1))
		return 0;
	cq->db_left = cq->db_mask + 1;
	cq->pass = (ci >> cq->log) & 1;
	return 1;
}

static __attribute__((noinline)) void cq_doorbell(struct rnic_cq *cq)
{
	rnic_ring_cq(&to_ctx(cq->ex.context)->dev, cq->cqn, (uint16_t)cq->ci, 0);
}

static inline __attribute__((always_inline)) void cq_consume(struct rnic_cq *cq, const uint8_t *e)
{
	if (cq_advance(cq, e, cq->ci))
		cq_doorbell(cq);
}

void rnic_cq_consume(struct rnic_cq *cq, const uint8_t *e)
{
	cq_consume(cq, e);
}

/* The work request of a CQE that failed (rnic_cqe_wr_id), from the queue's own copy (a slot is not
 * reused before its CQE is polled): a send's at the CQE's WQE_INDEX; a receive's at rq_ci (a
 * receive queue completes in order). A shared receive queue's WQEs are taken in no order the
 * library knows: the CQE's. */
uint64_t rnic_err_wr_id(const struct rnic_cq *cq, const uint8_t *e)
{
	const struct rnic_qp *qp = rnic_qp_get(to_ctx(cq->ex.context), RNIC_CQE_QPN_GET(e));

	if (!qp || ((RNIC_CQE_OPCODE_GET(e) & IBV_WC_RECV) && qp->srq))
		return RNIC_CQE_WR_ID_GET(e);
	if (RNIC_CQE_OPCODE_GET(e) & IBV_WC_RECV)
		return RNIC_RWQE_WR_ID_GET(qp->rq + (size_t)(qp->rq_ci & ((1u << qp->rq_log) - 1)) * RNIC_RWQE_BYTES);
	return RNIC_WQE_WR_ID_GET(sq_slot(qp, RNIC_CQE_WQE_INDEX_GET(e)));
}

/* A CQE into a work completion, with the fields rdma-core's providers fill */
static inline __attribute__((always_inline)) void wc_fill(struct rnic_cq *cq, struct ibv_wc *w, const uint8_t *e)
{
	w->wr_id = rnic_cqe_wr_id(cq, e);
	w->status = RNIC_CQE_STATUS_GET(e);
	w->opcode = RNIC_CQE_OPCODE_GET(e);
	w->vendor_err = RNIC_CQE_VENDOR_ERR_GET(e);
#ifdef RNIC_LE_WORDS
	/* BYTE_LEN, IMM, QPN, SRC_QP are byte_len, imm_data, qp_num, src_qp in that order: one copy */
	_Static_assert(RNIC_CQE_IMM_OFF == RNIC_CQE_BYTE_LEN_OFF + 4 && RNIC_CQE_QPN_OFF == RNIC_CQE_BYTE_LEN_OFF + 8 &&
			       RNIC_CQE_SRC_QP_OFF == RNIC_CQE_BYTE_LEN_OFF + 12 &&
			       offsetof(struct ibv_wc, imm_data) == offsetof(struct ibv_wc, byte_len) + 4 &&
			       offsetof(struct ibv_wc, qp_num) == offsetof(struct ibv_wc, byte_len) + 8 &&
			       offsetof(struct ibv_wc, src_qp) == offsetof(struct ibv_wc, byte_len) + 12,
		       "CQE and ibv_wc agree from BYTE_LEN to SRC_QP");
	memcpy((char *)w + offsetof(struct ibv_wc, byte_len), e + RNIC_CQE_BYTE_LEN_OFF, 16);
#else
	w->byte_len = RNIC_CQE_BYTE_LEN_GET(e);
	w->imm_data = RNIC_CQE_IMM_GET(e);
	w->qp_num = RNIC_CQE_QPN_GET(e);
	w->src_qp = RNIC_CQE_SRC_QP_GET(e);
#endif
	w->wc_flags = RNIC_CQE_WC_FLAGS_GET(e);
	/* pkey_index, slid, sl, dlid_path_bits (RoCE) and the padding after them: 0 in one store */
	memset((char *)w + offsetof(struct ibv_wc, pkey_index), 0, sizeof(*w) - offsetof(struct ibv_wc, pkey_index));
}

static int poll_doorbell(struct rnic_cq *cq, int ne, struct ibv_wc *w, int n);

/* ibv_poll_cq from CQE n on, into w (wc + n), under cq->lock, which it drops. No call unless
 * the CQ doorbell is due. */
static __attribute__((noinline)) int poll_locked(struct rnic_cq *cq, int ne, struct ibv_wc *w, int n)
{
	for (; n < ne; n++, w++) {
		uint32_t ci = cq->ci;
		const uint8_t *e = cqe_at(cq, ci);

		if (!cqe_ready(cq, e))
			break;
		wc_fill(cq, w, e);
		if (__builtin_expect(cq_advance(cq, e, ci), 0))
			return poll_doorbell(cq, ne, w + 1, n + 1);
	}
	rnic_unlock(&cq->lock);
	return n;
}

/* the CQ doorbell is due before CQE n */
static __attribute__((noinline)) int poll_doorbell(struct rnic_cq *cq, int ne, struct ibv_wc *w, int n)
{
	cq_doorbell(cq);
	return poll_locked(cq, ne, w, n);
}

/* contended: wait for the lock */
static __attribute__((noinline)) int poll_wait(struct rnic_cq *cq, int ne, struct ibv_wc *wc)
{
	rnic_lock(&cq->lock);
	return poll_locked(cq, ne, wc, 0);
}

/* Polls in a row that find a CQ empty before the bus may make the poller sleep a little (in the
 * simulator: until the NIC writes host memory, see sim_bus.c) */
#define POLL_IDLE 16

/* the CQ is empty */
static __attribute__((noinline)) int poll_empty(struct rnic_cq *cq)
{
	const struct rnic_dev *dev = &to_ctx(cq->ex.context)->dev;
	int idle = dev->ops->idle && ++cq->empty >= POLL_IDLE;

	if (idle)
		cq->empty = 0;
	rnic_unlock(&cq->lock);
	if (idle)
		dev->ops->idle(dev->bus);
	return 0;
}

/* One CQE asked for and there (the usual case) here, without a loop or a call; any other number
 * in poll_locked (ne <= 0: none). What it reads of cq is read before the stores into wc, which
 * could alias it. */
int rnic_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct rnic_cq *cq = (struct rnic_cq *)ibcq;
	const uint8_t *e;
	uint32_t ci;

	if (__builtin_expect(rnic_lock_busy(&cq->lock), 0))
		return poll_wait(cq, ne, wc);
	ci = cq->ci;
	e = cqe_at(cq, ci);
	if (!cqe_ready(cq, e))
		return poll_empty(cq);
	if (__builtin_expect(ne != 1, 0))
		return poll_locked(cq, ne, wc, 0);
	wc_fill(cq, wc, e);
	if (__builtin_expect(cq_advance(cq, e, ci), 0))
		return poll_doorbell(cq, 1, wc + 1, 1);
	rnic_unlock(&cq->lock);
	return 1;
}

int rnic_req_notify_cq(struct ibv_cq *ibcq, int solicited)
{
	struct rnic_cq *cq = (struct rnic_cq *)ibcq;

	rnic_ring_cq(&to_ctx(ibcq->context)->dev, cq->cqn, (uint16_t)cq->ci, solicited ? 2 : 1);
	return 0;
}

int rnic_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct rnic_srq *srq = (struct rnic_srq *)ibsrq;
	uint32_t mask = (1u << srq->log) - 1;
	int ret = 0, posted = 0;

	rnic_lock(&srq->lock);
	for (; wr; wr = wr->next) {
		uint8_t *w = srq->ring + (size_t)(srq->pi & mask) * RNIC_RWQE_BYTES;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > RNIC_MAX_RECV_SGE) {
			ret = EINVAL;
			break;
		}
		if ((uint16_t)(srq->pi - __atomic_load_n(&srq->ci, __ATOMIC_ACQUIRE)) >= (1u << srq->log)) {
			ret = ENOMEM;
			break;
		}
		write_rwqe(w, wr);
		srq->pi++;
		posted++;
	}
	if (posted) {
		__atomic_thread_fence(__ATOMIC_RELEASE);
		rnic_ring_srq(&to_ctx(ibsrq->context)->dev, srq->srqn, srq->pi);
	}
	rnic_unlock(&srq->lock);
	if (ret && bad)
		*bad = wr;
	return ret;
}
