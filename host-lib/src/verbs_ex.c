/* The extended verbs: the verbs_context ops (query_device_ex, create_cq_ex, create_qp_ex) and
 * the function tables of ibv_qp_ex (ibv_wr_*) and ibv_cq_ex (ibv_start_poll ...). Both tables
 * write and read the same rings as ibv_post_send and ibv_poll_cq. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rnic_verbs.h"

/* ---- device */
static int query_device_ex(struct ibv_context *context, const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;
	int ret;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(a.orig_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	ret = rnic_query_device_attr(context, &a.orig_attr);
	if (ret)
		return ret;
	/* the CQE timestamps count NIC clock cycles (ibv_wc_read_completion_ts) */
	a.completion_timestamp_mask = UINT64_MAX;
	a.hca_core_clock = rnic_clock_khz(to_ctx(context)); /* kHz */
	a.max_dm_size = 0;
	a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;
	memcpy(attr, &a, attr_size < sizeof(a) ? attr_size : sizeof(a));
	return 0;
}

/* ---- CQ */
static void cqe_load(struct rnic_cq *cq, const uint8_t *e)
{
	cq->cur = e;
	cq->ex.status = RNIC_CQE_STATUS_GET(e);
	cq->ex.wr_id = rnic_cqe_wr_id(cq, e);
}

static int start_poll(struct ibv_cq_ex *x, struct ibv_poll_cq_attr *attr)
{
	struct rnic_cq *cq = (struct rnic_cq *)x;
	const uint8_t *e;

	if (attr->comp_mask)
		return EINVAL;
	rnic_lock(&cq->lock);
	e = rnic_cq_peek(cq);
	if (!e) {
		rnic_unlock(&cq->lock); /* ENOENT: the application does not call end_poll */
		return ENOENT;
	}
	cqe_load(cq, e);
	return 0;
}

static int next_poll(struct ibv_cq_ex *x)
{
	struct rnic_cq *cq = (struct rnic_cq *)x;
	const uint8_t *e;

	rnic_cq_consume(cq, cq->cur);
	cq->cur = NULL;
	e = rnic_cq_peek(cq);
	if (!e)
		return ENOENT;
	cqe_load(cq, e);
	return 0;
}

static void end_poll(struct ibv_cq_ex *x)
{
	struct rnic_cq *cq = (struct rnic_cq *)x;

	if (cq->cur)
		rnic_cq_consume(cq, cq->cur);
	cq->cur = NULL;
	rnic_unlock(&cq->lock);
}

#define CUR(x) (((struct rnic_cq *)(x))->cur)
static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *x) { return RNIC_CQE_OPCODE_GET(CUR(x)); }
static uint32_t read_vendor_err(struct ibv_cq_ex *x) { return RNIC_CQE_VENDOR_ERR_GET(CUR(x)); }
static uint32_t read_byte_len(struct ibv_cq_ex *x) { return RNIC_CQE_BYTE_LEN_GET(CUR(x)); }
static __be32 read_imm_data(struct ibv_cq_ex *x) { return RNIC_CQE_IMM_GET(CUR(x)); }
static uint32_t read_qp_num(struct ibv_cq_ex *x) { return RNIC_CQE_QPN_GET(CUR(x)); }
static uint32_t read_src_qp(struct ibv_cq_ex *x) { return RNIC_CQE_SRC_QP_GET(CUR(x)); }
static unsigned int read_wc_flags(struct ibv_cq_ex *x) { return RNIC_CQE_WC_FLAGS_GET(CUR(x)); }
static uint32_t read_slid(struct ibv_cq_ex *x) { (void)x; return 0; }  /* RoCE: no LIDs */
static uint8_t read_sl(struct ibv_cq_ex *x) { (void)x; return 0; }
static uint8_t read_dlid_path_bits(struct ibv_cq_ex *x) { (void)x; return 0; }
static uint64_t read_completion_ts(struct ibv_cq_ex *x) { return RNIC_CQE_TS_END_GET(CUR(x)); }
#undef CUR

#define CQ_WC_FLAGS (IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)

void rnic_cq_ex_init(struct rnic_cq *cq)
{
	cq->ex.start_poll = start_poll;
	cq->ex.next_poll = next_poll;
	cq->ex.end_poll = end_poll;
	cq->ex.read_opcode = read_opcode;
	cq->ex.read_vendor_err = read_vendor_err;
	cq->ex.read_byte_len = read_byte_len;
	cq->ex.read_imm_data = read_imm_data;
	cq->ex.read_qp_num = read_qp_num;
	cq->ex.read_src_qp = read_src_qp;
	cq->ex.read_wc_flags = read_wc_flags;
	cq->ex.read_slid = read_slid;
	cq->ex.read_sl = read_sl;
	cq->ex.read_dlid_path_bits = read_dlid_path_bits;
	cq->ex.read_completion_ts = read_completion_ts;
}

static struct ibv_cq_ex *create_cq_ex(struct ibv_context *context, struct ibv_cq_init_attr_ex *a)
{
	struct ibv_cq *cq;

	if (a->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD) ||
	    (a->wc_flags & ~(uint64_t)CQ_WC_FLAGS) ||
	    ((a->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && (a->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (a->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = rnic_cq_create(context, (int)a->cqe, a->cq_context, a->channel, (int)a->comp_vector, a->wc_flags);
	return cq ? &((struct rnic_cq *)cq)->ex : NULL;
}

/* ---- QP: ibv_wr_* build one ibv_send_wr at a time, written to the ring when the next begins
 * or at ibv_wr_complete, which rings the doorbell once for all of them. */
static struct rnic_qp *xqp(struct ibv_qp_ex *x)
{
	return (struct rnic_qp *)x;
}

static void flush(struct rnic_qp *qp)
{
	if (qp->wr_open && !qp->wr_err)
		qp->wr_err = rnic_sq_write(qp, &qp->wr);
	qp->wr_open = 0;
}

static struct ibv_send_wr *begin(struct ibv_qp_ex *x, enum ibv_wr_opcode op)
{
	struct rnic_qp *qp = xqp(x);

	flush(qp);
	memset(&qp->wr, 0, sizeof(qp->wr));
	qp->wr.wr_id = x->wr_id;
	qp->wr.send_flags = x->wr_flags;
	qp->wr.opcode = op;
	qp->wr.sg_list = qp->sge;
	qp->wr_open = 1;
	return &qp->wr;
}

static void wr_start(struct ibv_qp_ex *x)
{
	struct rnic_qp *qp = xqp(x);

	rnic_lock(&qp->lock);
	qp->wr_open = 0;
	qp->wr_err = 0;
	qp->wr_start_pi = qp->sq_pi;
}

static int wr_complete(struct ibv_qp_ex *x)
{
	struct rnic_qp *qp = xqp(x);
	int ret;

	flush(qp);
	ret = qp->wr_err;
	if (ret)
		qp->sq_pi = qp->wr_start_pi; /* none of the batch is posted */
	else if (qp->sq_pi != qp->wr_start_pi)
		rnic_sq_doorbell(qp);
	rnic_unlock(&qp->lock);
	return ret;
}

static void wr_abort(struct ibv_qp_ex *x)
{
	struct rnic_qp *qp = xqp(x);

	qp->sq_pi = qp->wr_start_pi;
	qp->wr_open = 0;
	rnic_unlock(&qp->lock);
}

static void wr_send(struct ibv_qp_ex *x)
{
	begin(x, IBV_WR_SEND);
}

static void wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
	begin(x, IBV_WR_SEND_WITH_IMM)->imm_data = imm;
}

static struct ibv_send_wr *rdma(struct ibv_qp_ex *x, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr)
{
	struct ibv_send_wr *wr = begin(x, op);

	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = addr;
	return wr;
}

static struct ibv_send_wr *atomic(struct ibv_qp_ex *x, enum ibv_wr_opcode op, uint32_t rkey, uint64_t addr,
				  uint64_t compare_add)
{
	struct ibv_send_wr *wr = begin(x, op);

	wr->wr.atomic.rkey = rkey;
	wr->wr.atomic.remote_addr = addr;
	wr->wr.atomic.compare_add = compare_add;
	return wr;
}

static void wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr)
{
	rdma(x, IBV_WR_RDMA_WRITE, rkey, addr);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, __be32 imm)
{
	rdma(x, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, addr)->imm_data = imm;
}

static void wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr)
{
	rdma(x, IBV_WR_RDMA_READ, rkey, addr);
}

static void wr_atomic_cmp_swp(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, uint64_t compare, uint64_t swap)
{
	atomic(x, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, addr, compare)->wr.atomic.swap = swap;
}

static void wr_atomic_fetch_add(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr, uint64_t add)
{
	atomic(x, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, addr, add);
}

static void wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct rnic_qp *qp = xqp(x);

	qp->wr.wr.ud.ah = ah;
	qp->wr.wr.ud.remote_qpn = remote_qpn;
	qp->wr.wr.ud.remote_qkey = remote_qkey;
}

static void set_sges(struct rnic_qp *qp, size_t n, const struct ibv_sge *l)
{
	if (!qp->wr_open || n > RNIC_MAX_SGE) {
		qp->wr_err = qp->wr_err ? qp->wr_err : EINVAL;
		return;
	}
	memcpy(qp->sge, l, n * sizeof(*l));
	qp->wr.num_sge = (int)n;
}

static void wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length)
{
	struct ibv_sge s = {.addr = addr, .length = length, .lkey = lkey};

	set_sges(xqp(x), 1, &s);
}

static void wr_set_sge_list(struct ibv_qp_ex *x, size_t n, const struct ibv_sge *l)
{
	set_sges(xqp(x), n, l);
}

/* Inline data is copied into the WQE now: the caller may reuse its buffer when this returns. */
static void wr_set_inline_data_list(struct ibv_qp_ex *x, size_t n, const struct ibv_data_buf *l)
{
	struct rnic_qp *qp = xqp(x);
	size_t i;

	if (!qp->wr_open || n > RNIC_MAX_SGE) {
		qp->wr_err = qp->wr_err ? qp->wr_err : EINVAL;
		return;
	}
	for (i = 0; i < n; i++) {
		qp->sge[i].addr = (uintptr_t)l[i].addr;
		qp->sge[i].length = (uint32_t)l[i].length;
		qp->sge[i].lkey = 0;
	}
	qp->wr.num_sge = (int)n;
	qp->wr.send_flags |= IBV_SEND_INLINE;
	flush(qp);
}

static void wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
	struct ibv_data_buf b = {.addr = addr, .length = length};

	wr_set_inline_data_list(x, 1, &b);
}

#define QP_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE | \
		     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

void rnic_qp_ex_init(struct rnic_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *x = &qp->ex;

	qp->has_ex = 1;
	x->wr_start = wr_start;
	x->wr_complete = wr_complete;
	x->wr_abort = wr_abort;
	x->wr_send = ops & IBV_QP_EX_WITH_SEND ? wr_send : NULL;
	x->wr_send_imm = ops & IBV_QP_EX_WITH_SEND_WITH_IMM ? wr_send_imm : NULL;
	x->wr_rdma_write = ops & IBV_QP_EX_WITH_RDMA_WRITE ? wr_rdma_write : NULL;
	x->wr_rdma_write_imm = ops & IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM ? wr_rdma_write_imm : NULL;
	x->wr_rdma_read = ops & IBV_QP_EX_WITH_RDMA_READ ? wr_rdma_read : NULL;
	x->wr_atomic_cmp_swp = ops & IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP ? wr_atomic_cmp_swp : NULL;
	x->wr_atomic_fetch_add = ops & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD ? wr_atomic_fetch_add : NULL;
	x->wr_set_ud_addr = wr_set_ud_addr;
	x->wr_set_sge = wr_set_sge;
	x->wr_set_sge_list = wr_set_sge_list;
	x->wr_set_inline_data = wr_set_inline_data;
	x->wr_set_inline_data_list = wr_set_inline_data_list;
}

static struct ibv_qp *create_qp_ex(struct ibv_context *context, struct ibv_qp_init_attr_ex *a)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS;
	struct ibv_qp_init_attr init;
	struct ibv_qp *qp;

	if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd || a->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if ((a->comp_mask & ~known) || ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags) ||
	    ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && (a->send_ops_flags & ~(uint64_t)QP_SEND_OPS))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	memset(&init, 0, sizeof(init));
	init.qp_context = a->qp_context;
	init.send_cq = a->send_cq;
	init.recv_cq = a->recv_cq;
	init.srq = a->srq;
	init.cap = a->cap;
	init.qp_type = a->qp_type;
	init.sq_sig_all = a->sq_sig_all;
	qp = rnic_qp_create(a->pd, &init);
	if (!qp)
		return NULL;
	a->cap = init.cap;
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		rnic_qp_ex_init((struct rnic_qp *)qp, a->send_ops_flags);
	return qp;
}

struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct rnic_qp *q = (struct rnic_qp *)qp;

	return q->has_ex ? &q->ex : NULL;
}

void rnic_ex_init(struct rnic_context *c)
{
	c->vctx.query_device_ex = query_device_ex;
	c->vctx.create_cq_ex = create_cq_ex;
	c->vctx.create_qp_ex = create_qp_ex;
}
