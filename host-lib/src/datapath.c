/* The data path: send and receive WQEs into the rings, doorbells, completions out of the CQ.
 * The common cases are built with word stores from the spec's layout; everything rdma-core's
 * providers check before a WQE reaches the NIC is checked here, with their errors. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
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

/* the opcodes of the type that sq_write builds itself */
uint32_t rnic_fast_ops(enum ibv_qp_type type)
{
	return type == IBV_QPT_UD ? 0 : rnic_send_ops(type) & (OPS_UC | OP(RDMA_READ));
}

/* n <= 16 bytes in two overlapping loads and stores: an 8-byte inline WRITE should not call memcpy */
static inline void copy_small(uint8_t *d, const uint8_t *s, uint32_t n)
{
	uint64_t a, b;
	uint32_t x, y;

	if (n >= 8) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4) {
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else {
		while (n--)
			*d++ = *s++;
	}
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

/* The slot at the producer index with its header written, what the opcode does not use zero */
static inline __attribute__((always_inline)) uint8_t *wqe_header(struct rnic_qp *qp, const struct ibv_send_wr *wr,
								 uint32_t flags, uint64_t total)
{
	uint8_t *w = qp->sq + (size_t)(qp->sq_pi & qp->sq_mask) * RNIC_WQE_BYTES;
	uint32_t op = wr->opcode;

	memset(w, 0, RNIC_WQE_SGE_OFF);
	RNIC_WQE_WR_ID_SET(w, wr->wr_id);
	RNIC_WQE_OPCODE_SET(w, op); /* enum WQE_OP = enum ibv_wr_opcode */
	RNIC_WQE_FLAGS_SET(w, flags | qp->sig_flag); /* enum WQE_FLAG = enum ibv_send_flags */
	RNIC_WQE_NUM_SGE_SET(w, wr->num_sge);
	if ((1u << op) & OPS_IMM)
		RNIC_WQE_IMM_SET(w, wr->imm_data); /* stays in network byte order */
	RNIC_WQE_REMOTE_ADDR_SET(w, wr->wr.rdma.remote_addr);
	RNIC_WQE_RKEY_SET(w, wr->wr.rdma.rkey);
	RNIC_WQE_TOTAL_LEN_SET(w, total > UINT32_MAX ? UINT32_MAX : total);
	return w;
}

static inline void write_sge(uint8_t *s, const struct ibv_sge *sg)
{
	RNIC_SGE_ADDR_SET(s, sg->addr);
	RNIC_SGE_LEN_SET(s, sg->length);
	RNIC_SGE_LKEY_SET(s, sg->lkey);
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
	if ((uint16_t)(qp->sq_pi - __atomic_load_n(&qp->sq_ci, __ATOMIC_ACQUIRE)) >= qp->cap.max_send_wr)
		return ENOMEM;
	for (i = 0; i < nsge; i++)
		total += wr->sg_list[i].length;
	if ((flags & IBV_SEND_INLINE) && total > qp->cap.max_inline_data)
		return EINVAL;
	w = wqe_header(qp, wr, flags, total);
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

/* The common WQE (RC or UC; SEND, WRITE, READ; at most one SGE; inline up to 16 bytes) in a
 * few word stores, inlined into ibv_post_send; any other goes to sq_write_any. */
static inline __attribute__((always_inline)) int sq_write(struct rnic_qp *qp, const struct ibv_send_wr *wr)
{
	uint32_t op = wr->opcode, flags = wr->send_flags & SEND_FLAGS, len;
	uint8_t *w;

	if (__builtin_expect(op >= 32 || !((qp->fast_ops >> op) & 1) || (uint32_t)wr->num_sge != 1, 0))
		return sq_write_any(qp, wr);
	len = wr->sg_list[0].length;
	if (__builtin_expect((flags & IBV_SEND_INLINE) && (len > 16 || op == IBV_WR_RDMA_READ), 0))
		return sq_write_any(qp, wr);
	if (__builtin_expect(!((SEND_STATES >> qp->ex.qp_base.state) & 1), 0))
		return EINVAL;
	if (__builtin_expect((uint16_t)(qp->sq_pi - __atomic_load_n(&qp->sq_ci, __ATOMIC_ACQUIRE)) >=
			     qp->cap.max_send_wr, 0))
		return ENOMEM;
	w = wqe_header(qp, wr, flags, len);
	if (flags & IBV_SEND_INLINE)
		copy_small(w + RNIC_WQE_SGE_OFF, (const uint8_t *)(uintptr_t)wr->sg_list[0].addr, len);
	else
		write_sge(w + RNIC_WQE_SGE_OFF, wr->sg_list);
	qp->sq_pi++;
	return 0;
}

int rnic_sq_write(struct rnic_qp *qp, const struct ibv_send_wr *wr)
{
	return sq_write(qp, wr);
}

/* the WQEs written so far are the NIC's: a 32-bit store into the context's doorbell page */
void rnic_sq_doorbell(struct rnic_qp *qp)
{
	struct rnic_dev *d = qp->dev;

	__atomic_thread_fence(__ATOMIC_RELEASE);
	d->ops->mmio_write(d->bus, d->page + RNIC_CTX_SQ_DB, qp->sq_db | RNIC_SET(RNIC_CTX_SQ_DB_PI, qp->sq_pi));
}

int rnic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct rnic_qp *qp = (struct rnic_qp *)ibqp;
	int ret = 0, posted = 0;

	pthread_spin_lock(&qp->lock);
	for (; wr; wr = wr->next) {
		ret = sq_write(qp, wr);
		if (ret)
			break;
		posted = 1;
	}
	if (posted)
		rnic_sq_doorbell(qp);
	pthread_spin_unlock(&qp->lock);
	if (ret && bad)
		*bad = wr;
	return ret;
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

	pthread_spin_lock(&qp->lock);
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
	pthread_spin_unlock(&qp->lock);
	if (ret && bad)
		*bad = wr;
	return ret;
}

/* The CQE at the consumer index if the NIC has written it, else NULL: one test of its owner
 * bit (the pass parity, plus 1). Under cq->lock. */
static inline __attribute__((always_inline)) const uint8_t *cq_peek(struct rnic_cq *cq)
{
	uint32_t ci = cq->ci, log = cq->log;
	const uint8_t *e = cq->ring + (size_t)(ci & ((1u << log) - 1)) * RNIC_CQE_BYTES;

	if ((__atomic_load_n(&e[RNIC_CQE_OWNER_OFF], __ATOMIC_ACQUIRE) ^ (ci >> log)) & 1)
		return e;
	return NULL;
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
	pthread_spin_lock(&cq->lock);
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
		cq->ci += freed;
		rnic_ring_cq(&to_ctx(ibcq->context)->dev, cq->cqn, (uint16_t)cq->ci, 0);
	}
	pthread_spin_unlock(&cq->lock);
}

/* Done with CQE e (from rnic_cq_peek): free its work queue entry, advance. Under cq->lock. */
static inline __attribute__((always_inline)) void cq_consume(struct rnic_cq *cq, const uint8_t *e)
{
	struct rnic_context *c = to_ctx(cq->ex.context);
	uint32_t qpn = RNIC_CQE_QPN_GET(e), mask = (1u << cq->log) - 1;
	struct rnic_qp *qp = qpn < RNIC_MAX_QP ? c->qps[qpn] : NULL;

	cq->ts_start = RNIC_CQE_TS_START_GET(e);
	cq->ts_end = RNIC_CQE_TS_END_GET(e);
	if (qp && RNIC_CQE_OPCODE_GET(e) < IBV_WC_RECV)
		__atomic_store_n(&qp->sq_ci, (uint16_t)(RNIC_CQE_WQE_INDEX_GET(e) + 1), __ATOMIC_RELEASE);
	else if (qp && qp->srq)
		__atomic_fetch_add(&qp->srq->ci, 1, __ATOMIC_RELEASE);
	else if (qp)
		__atomic_store_n(&qp->rq_ci, (uint16_t)(qp->rq_ci + 1), __ATOMIC_RELEASE);
	cq->ci++;
	/* tell the NIC how far we are, well before the ring could fill */
	if (!(cq->ci & (mask >> 1)))
		rnic_ring_cq(&c->dev, cq->cqn, (uint16_t)cq->ci, 0);
}

void rnic_cq_consume(struct rnic_cq *cq, const uint8_t *e)
{
	cq_consume(cq, e);
}

int rnic_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct rnic_cq *cq = (struct rnic_cq *)ibcq;
	const uint8_t *e;
	int n;

	pthread_spin_lock(&cq->lock);
	for (n = 0; n < ne && (e = cq_peek(cq)); n++) {
		struct ibv_wc *w = &wc[n];

		w->wr_id = RNIC_CQE_WR_ID_GET(e);
		w->status = RNIC_CQE_STATUS_GET(e);
		w->opcode = RNIC_CQE_OPCODE_GET(e);
		w->vendor_err = RNIC_CQE_VENDOR_ERR_GET(e);
		w->byte_len = RNIC_CQE_BYTE_LEN_GET(e);
		w->imm_data = RNIC_CQE_IMM_GET(e);
		w->qp_num = RNIC_CQE_QPN_GET(e);
		w->src_qp = RNIC_CQE_SRC_QP_GET(e);
		w->wc_flags = RNIC_CQE_WC_FLAGS_GET(e);
		w->pkey_index = 0;
		w->slid = 0;
		w->sl = 0;
		w->dlid_path_bits = 0;
		cq_consume(cq, e);
	}
	pthread_spin_unlock(&cq->lock);
	return n;
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

	pthread_spin_lock(&srq->lock);
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
	pthread_spin_unlock(&srq->lock);
	if (ret && bad)
		*bad = wr;
	return ret;
}
