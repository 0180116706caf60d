/* The verbs API (rdma-core's <infiniband/verbs.h>, unchanged) over the RNIC: the control verbs
 * (contexts, PDs, MRs, CQs, QPs, SRQs) go through the driver core to the firmware; devices are in
 * device.c, the data path in datapath.c. Errors as rdma-core returns them: NULL and errno for
 * constructors, a positive errno for the others. */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rnic/rnicdv.h"
#include "abi_assert.h"
#include "rnic_verbs.h"

/* driver core errors are negative errno values; verbs return them positive */
static int cmd_errno(struct rnic_context *c, int ret)
{
	(void)c;
	return -ret;
}

static void close_backend(struct rnic_context *c)
{
	if (c->card) {
		pci_bus_close(&c->pci);
		return;
	}
	rnic_dev_fini(&c->dev);
	sim_bus_close(&c->bus);
}

struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct rnic_device *d = (struct rnic_device *)device;
	struct rnic_context *c = calloc(1, sizeof(*c));
	struct ibv_context *ic;
	int ret;

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->card = d->card;
	if (d->card) {
		ret = pci_bus_open(&c->pci, d->path, &c->dev);
		c->irq_fd = c->pci.fd;
	} else {
		ret = sim_bus_open(&c->bus, d->path);
		if (!ret) {
			ret = rnic_dev_init(&c->dev, &sim_bus_ops, &c->bus, c->bus.ctx);
			if (ret)
				sim_bus_close(&c->bus);
		}
		c->irq_fd = c->bus.irq_fd;
	}
	if (ret) {
		free(c);
		errno = -ret;
		return NULL;
	}
	pthread_mutex_init(&c->cmd_lock, NULL);
	pthread_mutex_init(&c->eq_lock, NULL);
	ic = &c->vctx.context;
	ic->device = device;
	/* the file that stands for the device (the card's /dev/rnicN or the simulator's socket), as
	 * uverbs's is; importing it into another context is not offered */
	ic->cmd_fd = d->card ? c->pci.fd : c->bus.fd;
	ic->async_fd = -1;
	ic->num_comp_vectors = 1;
	ic->ops.post_send = rnic_post_send;
	ic->ops.post_recv = rnic_post_recv;
	ic->ops.post_srq_recv = rnic_post_srq_recv;
	ic->ops.poll_cq = rnic_poll_cq;
	ic->ops.req_notify_cq = rnic_req_notify_cq;
	pthread_mutex_init(&ic->mutex, NULL);
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = rnic_query_port;
	ic->abi_compat = __VERBS_ABI_IS_EXTENDED;
	rnic_ex_init(c);
	ret = rnic_events_start(c);
	if (ret) {
		close_backend(c);
		free(c);
		errno = ret;
		return NULL;
	}
	return ic;
}

int ibv_close_device(struct ibv_context *context)
{
	struct rnic_context *c = to_ctx(context);

	rnic_events_stop(c);
	close_backend(c);
	free(c);
	return 0;
}

/* ---- PD and MR */
struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
	struct rnic_context *c = to_ctx(context);
	struct ibv_pd *pd = calloc(1, sizeof(*pd));
	uint32_t pdn;
	int ret;

	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_alloc_pd(&c->dev, &pdn);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret) {
		free(pd);
		errno = -ret;
		return NULL;
	}
	pd->context = context;
	pd->handle = pdn;
	return pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct rnic_context *c = to_ctx(pd->context);
	int ret;

	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_destroy(&c->dev, RNIC_CMD_DEALLOC_PD, pd->handle);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret)
		return cmd_errno(c, ret);
	free(pd);
	return 0;
}

/* The access flags of a region as the firmware takes them (enum ACCESS = the ibv_access_flags
 * bits it knows), or -errno: optional flags (relaxed ordering ...) may be ignored, as rdma-core
 * does, and HUGETLB is a hint; memory-window binding, on-demand paging and zero-based regions
 * are not offered. */
static int mr_access(unsigned int access)
{
	const unsigned int known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC;

	access &= ~(unsigned int)(IBV_ACCESS_OPTIONAL_RANGE | IBV_ACCESS_HUGETLB);
	return access & ~known ? -EOPNOTSUPP : (int)access;
}

struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
	struct rnic_context *c;
	struct ibv_mr *mr;
	uint32_t key;
	int ret, acc = mr_access(access);

	if (!pd || !length) {
		errno = EINVAL;
		return NULL;
	}
	if (acc < 0 || iova != (uintptr_t)addr) {
		errno = EOPNOTSUPP; /* an IOVA other than the address is not offered either */
		return NULL;
	}
	c = to_ctx(pd->context);
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_reg_mr(&c->dev, pd->handle, (uint32_t)acc, addr, length, &key);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret) {
		free(mr);
		errno = -ret;
		return NULL;
	}
	mr->context = pd->context;
	mr->pd = pd;
	mr->addr = addr;
	mr->length = length;
	mr->handle = key;
	mr->lkey = mr->rkey = key;
	return mr;
}

#undef ibv_reg_mr
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

/* In place, as mlx5 does: the keys stay. The flags are enum REREG's values. */
int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t length, int access)
{
	const int known = IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS;
	struct rnic_context *c = to_ctx(mr->context);
	int ret, acc = 0;

	if (!flags || (flags & ~known) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) ? !addr || !length : addr || length) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) && (!pd || pd->context != mr->context))) {
		errno = EINVAL;
		return IBV_REREG_MR_ERR_INPUT;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS) {
		acc = mr_access((unsigned int)access);
		if (acc < 0) {
			errno = -acc;
			return IBV_REREG_MR_ERR_INPUT;
		}
	}
	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_rereg_mr(&c->dev, mr->lkey, (uint32_t)flags, flags & IBV_REREG_MR_CHANGE_PD ? pd->handle : 0,
			    (uint32_t)acc, addr, length);
	if (!ret && (flags & IBV_REREG_MR_CHANGE_TRANSLATION))
		c->dev.ops->dma_unmap(c->dev.bus, mr->addr, mr->length); /* the NIC uses it no more */
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret) {
		errno = -ret;
		return IBV_REREG_MR_ERR_CMD;
	}
	if (flags & IBV_REREG_MR_CHANGE_PD)
		mr->pd = pd;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		mr->addr = addr;
		mr->length = length;
	}
	return 0;
}

int ibv_dereg_mr(struct ibv_mr *mr)
{
	struct rnic_context *c = to_ctx(mr->context);
	int ret;

	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_dereg_mr(&c->dev, mr->lkey, mr->addr, mr->length);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret)
		return cmd_errno(c, ret);
	free(mr);
	return 0;
}

/* ---- CQ */
static uint32_t log2_up(uint32_t n)
{
	uint32_t l = 0;

	while ((1u << l) < n)
		l++;
	return l;
}

struct ibv_cq *rnic_cq_create(struct ibv_context *context, int cqe, void *cq_context,
			      struct ibv_comp_channel *channel, int comp_vector, uint64_t wc_flags)
{
	struct rnic_context *c = to_ctx(context);
	uint32_t max = RNIC_CMDO_QUERY_DEVICE_MAX_CQE_GET(c->dev.info);
	struct rnic_cq *cq;
	int ret;

	if (cqe < 1 || (uint32_t)cqe > max || comp_vector < 0 || comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	if (channel && channel->context != context) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	rnic_cq_at(cq, log2_up((uint32_t)cqe + 1), 0);
	cq->ring = c->dev.ops->dma_alloc(c->dev.bus, (size_t)RNIC_CQE_BYTES << cq->log, &cq->bus);
	if (!cq->ring) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_create_cq(&c->dev, cq->bus, cq->log, &cq->cqn);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret) {
		c->dev.ops->dma_free(c->dev.bus, cq->ring, (size_t)RNIC_CQE_BYTES << cq->log);
		free(cq);
		errno = -ret;
		return NULL;
	}
	cq->lock = (rnic_lock_t){0};
	cq->ex.context = context;
	cq->ex.cq_context = cq_context;
	cq->ex.channel = channel;
	cq->ex.handle = cq->cqn;
	cq->wc_flags = wc_flags;
	cq->ex.cqe = (int)((1u << cq->log) - 1);
	pthread_mutex_init(&cq->ex.mutex, NULL);
	pthread_cond_init(&cq->ex.cond, NULL);
	rnic_cq_ex_init(cq);
	if (channel)
		__atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&c->eq_lock);
	c->cqs[cq->cqn] = cq;
	pthread_mutex_unlock(&c->eq_lock);
	return cq_ibv(cq);
}

struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	return rnic_cq_create(context, cqe, cq_context, channel, comp_vector, IBV_WC_STANDARD_FLAGS);
}

/* The completions this CQ still has to hold: the n written and not polled, plus the signaled
 * sends posted to its QPs whose CQEs are still to come (a slow link must not turn a resize that
 * would overflow into one that succeeds). Under cq->lock. */
static uint32_t cq_due(struct rnic_context *c, struct rnic_cq *cq, uint32_t n)
{
	uint32_t due = n, i, qpn;

	for (i = cq->ci; i != cq->ci + n; i++) {
		const uint8_t *e = cq->ring + (size_t)(i & ((1u << cq->log) - 1)) * RNIC_CQE_BYTES;
		struct rnic_qp *qp = rnic_qp_get(c, RNIC_CQE_QPN_GET(e));

		if (qp && qp->ex.qp_base.send_cq == (struct ibv_cq *)cq && RNIC_CQE_OPCODE_GET(e) < IBV_WC_RECV &&
		    !RNIC_CQE_STATUS_GET(e))
			due--; /* counted below, with its WQE */
	}
	for (qpn = 0; qpn < RNIC_MAX_QP; qpn++) {
		struct rnic_qp *qp = c->qps[qpn];
		uint16_t k;

		if (!qp || qp->ex.qp_base.send_cq != (struct ibv_cq *)cq)
			continue;
		rnic_lock(&qp->lock);
		for (k = (uint16_t)(qp->sq_end - qp->cap.max_send_wr); k != qp->sq_pi; k++)
			if (RNIC_WQE_FLAGS_GET(qp->sq + (size_t)(k & ((1u << qp->sq_log) - 1)) * RNIC_WQE_BYTES) &
			    RNIC_WQE_FLAG_SIGNALED)
				due++;
		rnic_unlock(&qp->lock);
	}
	return due;
}

/* A new ring (as mlx5 does it): the NIC goes on at its producer index in the new ring, and the
 * CQEs not polled yet move from the old ring to the same indices of the new one. */
int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct rnic_cq *cq = (struct rnic_cq *)ibcq;
	struct rnic_context *c = to_ctx(ibcq->context);
	uint32_t log, old_log = cq->log, n = 0, i;
	uint64_t bus;
	uint8_t *ring, *old = cq->ring;
	int ret;

	if (cqe < 1 || (uint32_t)cqe > RNIC_CMDO_QUERY_DEVICE_MAX_CQE_GET(c->dev.info))
		return EINVAL;
	log = log2_up((uint32_t)cqe + 1);
	rnic_lock(&cq->lock);
	while (n < (1u << old_log) && rnic_cqe_valid(old, old_log, cq->ci + n))
		n++;
	if (cq_due(c, cq, n) >= (1u << log)) {
		rnic_unlock(&cq->lock);
		return EINVAL; /* more completions wait than the new size holds */
	}
	if (log == old_log) {
		rnic_unlock(&cq->lock);
		return 0;
	}
	ring = c->dev.ops->dma_alloc(c->dev.bus, (size_t)RNIC_CQE_BYTES << log, &bus);
	if (!ring) {
		rnic_unlock(&cq->lock);
		return ENOMEM;
	}
	/* every slot invalid for the pass its next CQE will be on */
	for (i = cq->ci; i != cq->ci + (1u << log); i++)
		ring[(size_t)(i & ((1u << log) - 1)) * RNIC_CQE_BYTES + RNIC_CQE_OWNER_OFF] = (uint8_t)((i >> log) & 1);
	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_resize_cq(&c->dev, cq->cqn, bus, log);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret) {
		rnic_unlock(&cq->lock);
		c->dev.ops->dma_free(c->dev.bus, ring, (size_t)RNIC_CQE_BYTES << log);
		return -ret;
	}
	/* the old ring is complete now: what came after the first count is moved too */
	for (i = cq->ci; i != cq->ci + (1u << old_log) && rnic_cqe_valid(old, old_log, i); i++) {
		uint8_t *d = ring + (size_t)(i & ((1u << log) - 1)) * RNIC_CQE_BYTES;

		memcpy(d, old + (size_t)(i & ((1u << old_log) - 1)) * RNIC_CQE_BYTES, RNIC_CQE_OWNER_OFF);
		__atomic_store_n(&d[RNIC_CQE_OWNER_OFF], (uint8_t)(((i >> log) & 1) ^ 1), __ATOMIC_RELEASE);
	}
	cq->ring = ring;
	cq->bus = bus;
	rnic_cq_at(cq, log, cq->ci);
	cq->ex.cqe = (int)cq->mask;
	rnic_unlock(&cq->lock);
	c->dev.ops->dma_free(c->dev.bus, old, (size_t)RNIC_CQE_BYTES << old_log);
	return 0;
}

int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct rnic_cq *cq = (struct rnic_cq *)ibcq;
	struct rnic_context *c = to_ctx(ibcq->context);
	int ret;

	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_destroy(&c->dev, RNIC_CMD_DESTROY_CQ, cq->cqn);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret)
		return cmd_errno(c, ret);
	pthread_mutex_lock(&c->eq_lock);
	c->cqs[cq->cqn] = NULL;
	pthread_mutex_unlock(&c->eq_lock);
	if (cq->ex.channel) {
		rnic_channel_forget(cq);
		/* as rdma-core: wait until every event handed out has been acknowledged */
		pthread_mutex_lock(&cq->ex.mutex);
		while (cq->ex.comp_events_completed != cq->events)
			pthread_cond_wait(&cq->ex.cond, &cq->ex.mutex);
		pthread_mutex_unlock(&cq->ex.mutex);
		__atomic_sub_fetch(&cq->ex.channel->refcnt, 1, __ATOMIC_RELAXED);
	}
	c->dev.ops->dma_free(c->dev.bus, cq->ring, (size_t)RNIC_CQE_BYTES << cq->log);
	free(cq);
	return 0;
}

/* ---- QP */
struct ibv_qp *rnic_qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	struct rnic_context *c;
	struct rnic_qp_create q = {0};
	struct rnic_qp *qp;
	uint32_t qpn, max_wr;
	int ret;

	if (!pd || !a || !a->send_cq || !a->recv_cq) {
		errno = EINVAL;
		return NULL;
	}
	c = to_ctx(pd->context);
	max_wr = RNIC_CMDO_QUERY_DEVICE_MAX_QP_WR_GET(c->dev.info);
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC && a->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (a->send_cq->context != pd->context || a->recv_cq->context != pd->context ||
	    a->cap.max_send_wr > max_wr || a->cap.max_recv_wr > max_wr || a->cap.max_send_sge > RNIC_MAX_SGE ||
	    a->cap.max_recv_sge > RNIC_MAX_RECV_SGE || a->cap.max_inline_data > RNIC_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		errno = ENOMEM;
		return NULL;
	}
	qp->sq_log = log2_up(a->cap.max_send_wr ? a->cap.max_send_wr : 1);
	qp->rq_log = log2_up(a->cap.max_recv_wr ? a->cap.max_recv_wr : 1);
	qp->sq = c->dev.ops->dma_alloc(c->dev.bus, (size_t)RNIC_WQE_BYTES << qp->sq_log, &qp->sq_bus);
	qp->rq = c->dev.ops->dma_alloc(c->dev.bus, (size_t)RNIC_RWQE_BYTES << qp->rq_log, &qp->rq_bus);
	if (!qp->sq || !qp->rq) {
		errno = ENOMEM;
		goto fail;
	}
	q.pdn = pd->handle;
	q.type = a->qp_type; /* enum QPT = enum ibv_qp_type */
	q.send_cqn = ((struct rnic_cq *)a->send_cq)->cqn;
	q.recv_cqn = ((struct rnic_cq *)a->recv_cq)->cqn;
	q.sq_log = qp->sq_log;
	q.rq_log = qp->rq_log;
	q.sq_bus = qp->sq_bus;
	q.rq_bus = qp->rq_bus;
	if (a->srq) {
		qp->srq = (struct rnic_srq *)a->srq;
		q.use_srq = 1;
		q.srqn = qp->srq->srqn;
	}
	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_create_qp(&c->dev, &q, &qpn);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret) {
		errno = -ret;
		goto fail;
	}
	qp->cap.max_send_wr = 1u << qp->sq_log;
	qp->sq_end = (uint16_t)qp->cap.max_send_wr;
	qp->sq_ahead = (uint16_t)(qp->cap.max_send_wr + 1);
	qp->cap.max_recv_wr = 1u << qp->rq_log;
	qp->cap.max_send_sge = RNIC_MAX_SGE;
	qp->cap.max_recv_sge = RNIC_MAX_RECV_SGE;
	qp->cap.max_inline_data = RNIC_MAX_INLINE;
	a->cap = qp->cap;
	qp->lock = (rnic_lock_t){0};
	qp->ex.qp_base.context = pd->context;
	qp->ex.qp_base.qp_context = a->qp_context;
	qp->ex.qp_base.pd = pd;
	qp->ex.qp_base.send_cq = a->send_cq;
	qp->ex.qp_base.recv_cq = a->recv_cq;
	qp->ex.qp_base.handle = qpn;
	qp->ex.qp_base.qp_num = qpn;
	qp->ex.qp_base.state = IBV_QPS_RESET;
	qp->ex.qp_base.qp_type = a->qp_type;
	pthread_mutex_init(&qp->ex.qp_base.mutex, NULL);
	pthread_cond_init(&qp->ex.qp_base.cond, NULL);
	qp->sig_all = a->sq_sig_all != 0;
	qp->wqe_ctl = rnic_wqe_ctl(qp->sig_all);
	qp->send_ops = rnic_send_ops(a->qp_type);
	qp->fast_end = rnic_fast_end(a->qp_type);
	qp->fast_end_inline = qp->fast_end < IBV_WR_RDMA_READ ? qp->fast_end : IBV_WR_RDMA_READ;
	qp->sq_mask = (1u << qp->sq_log) - 1;
	qp->dev = &c->dev;
	qp->sq_db = RNIC_SET(RNIC_CTX_SQ_DB_QPN, qpn);
	if (c->card) {
		qp->db_reg = pci_bus_reg(&c->pci, c->dev.page + RNIC_CTX_SQ_DB);
	} else {
		qp->db_ring = c->bus.ring;
		qp->sq_db_link = sim_ring_link(c->dev.page + RNIC_CTX_SQ_DB, qp->sq_db);
		/* RNIC_PUSH=0: doorbells only (fewer host instructions per WQE, a PCIe read more
		 * of latency), as MLX5_SHUT_UP_BF does for mlx5's BlueFlame */
		const char *push = getenv("RNIC_PUSH");

		qp->push_addr = push && !strcmp(push, "0") ? 0 : c->dev.page + RNIC_CTX_SQ_PUSH;
	}
	c->qps[rnic_qp_index(qpn)] = qp;
	return &qp->ex.qp_base;
fail:
	if (qp->sq)
		c->dev.ops->dma_free(c->dev.bus, qp->sq, (size_t)RNIC_WQE_BYTES << qp->sq_log);
	if (qp->rq)
		c->dev.ops->dma_free(c->dev.bus, qp->rq, (size_t)RNIC_RWQE_BYTES << qp->rq_log);
	free(qp);
	return NULL;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
	return rnic_qp_create(pd, a);
}

/* ---- shared receive queues */
struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
	struct rnic_context *c;
	uint8_t in[RNIC_CMDI_CREATE_SRQ_SIZE] = {0}, out[RNIC_CMDO_HANDLE_SIZE];
	struct rnic_srq *srq;
	int ret;

	if (!pd || !a) {
		errno = EINVAL;
		return NULL;
	}
	c = to_ctx(pd->context);
	if (!a->attr.max_wr || a->attr.max_wr > RNIC_CMDO_QUERY_DEVICE_MAX_QP_WR_GET(c->dev.info) ||
	    a->attr.max_sge > RNIC_MAX_RECV_SGE || a->attr.srq_limit > a->attr.max_wr) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	srq->log = log2_up(a->attr.max_wr);
	srq->ring = c->dev.ops->dma_alloc(c->dev.bus, (size_t)RNIC_RWQE_BYTES << srq->log, &srq->bus);
	if (!srq->ring) {
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	RNIC_CMDI_CREATE_SRQ_PDN_SET(in, pd->handle);
	RNIC_CMDI_CREATE_SRQ_LOG_SIZE_SET(in, srq->log);
	RNIC_CMDI_CREATE_SRQ_BASE_SET(in, srq->bus);
	RNIC_CMDI_CREATE_SRQ_LIMIT_SET(in, a->attr.srq_limit);
	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_cmd_exec(&c->dev, RNIC_CMD_CREATE_SRQ, in, sizeof(in), out, sizeof(out));
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret) {
		c->dev.ops->dma_free(c->dev.bus, srq->ring, (size_t)RNIC_RWQE_BYTES << srq->log);
		free(srq);
		errno = cmd_errno(c, ret);
		return NULL;
	}
	srq->srqn = RNIC_CMDO_HANDLE_HANDLE_GET(out);
	srq->limit = a->attr.srq_limit;
	a->attr.max_wr = 1u << srq->log;
	a->attr.max_sge = RNIC_MAX_RECV_SGE;
	srq->lock = (rnic_lock_t){0};
	srq->ibv.context = pd->context;
	srq->ibv.srq_context = a->srq_context;
	srq->ibv.pd = pd;
	srq->ibv.handle = srq->srqn;
	pthread_mutex_init(&srq->ibv.mutex, NULL);
	pthread_cond_init(&srq->ibv.cond, NULL);
	c->srqs[srq->srqn] = srq;
	return &srq->ibv;
}

int ibv_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct rnic_srq *srq = (struct rnic_srq *)ibsrq;
	struct rnic_context *c = to_ctx(ibsrq->context);
	uint8_t in[RNIC_CMDI_MODIFY_SRQ_SIZE] = {0};
	int ret;

	if (mask & ~IBV_SRQ_LIMIT)
		return EINVAL; /* the ring is not resized */
	if (!(mask & IBV_SRQ_LIMIT))
		return 0;
	RNIC_CMDI_MODIFY_SRQ_SRQN_SET(in, srq->srqn);
	RNIC_CMDI_MODIFY_SRQ_LIMIT_SET(in, attr->srq_limit);
	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_cmd_exec(&c->dev, RNIC_CMD_MODIFY_SRQ, in, sizeof(in), NULL, 0);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret)
		return cmd_errno(c, ret);
	srq->limit = attr->srq_limit;
	return 0;
}

int ibv_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct rnic_srq *srq = (struct rnic_srq *)ibsrq;

	attr->max_wr = 1u << srq->log;
	attr->max_sge = RNIC_MAX_RECV_SGE;
	attr->srq_limit = srq->limit;
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *ibsrq)
{
	struct rnic_srq *srq = (struct rnic_srq *)ibsrq;
	struct rnic_context *c = to_ctx(ibsrq->context);
	int ret;

	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_destroy(&c->dev, RNIC_CMD_DESTROY_SRQ, srq->srqn);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret)
		return cmd_errno(c, ret);
	c->srqs[srq->srqn] = NULL;
	c->dev.ops->dma_free(c->dev.bus, srq->ring, (size_t)RNIC_RWQE_BYTES << srq->log);
	free(srq);
	return 0;
}

int ibv_destroy_qp(struct ibv_qp *ibqp)
{
	struct rnic_qp *qp = (struct rnic_qp *)ibqp;
	struct rnic_context *c = to_ctx(ibqp->context);
	int ret;

	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_destroy(&c->dev, RNIC_CMD_DESTROY_QP, ibqp->qp_num);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret)
		return cmd_errno(c, ret);
	rnic_cq_clean(ibqp->recv_cq, ibqp->qp_num, qp->srq);
	if (ibqp->send_cq != ibqp->recv_cq)
		rnic_cq_clean(ibqp->send_cq, ibqp->qp_num, NULL);
	c->qps[rnic_qp_index(ibqp->qp_num)] = NULL;
	c->dev.ops->dma_free(c->dev.bus, qp->sq, (size_t)RNIC_WQE_BYTES << qp->sq_log);
	c->dev.ops->dma_free(c->dev.bus, qp->rq, (size_t)RNIC_RWQE_BYTES << qp->rq_log);
	free(qp);
	return 0;
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask)
{
	struct rnic_qp *qp = (struct rnic_qp *)ibqp;
	struct rnic_context *c = to_ctx(ibqp->context);
	uint8_t in[RNIC_CMDI_MODIFY_QP_SIZE] = {0};
	int ret;

	RNIC_CMDI_MODIFY_QP_QPN_SET(in, ibqp->qp_num);
	RNIC_CMDI_MODIFY_QP_ATTR_MASK_SET(in, mask);
	RNIC_CMDI_MODIFY_QP_CUR_STATE_SET(in, a->cur_qp_state);
	RNIC_CMDI_MODIFY_QP_NEW_STATE_SET(in, a->qp_state);
	RNIC_CMDI_MODIFY_QP_PATH_MTU_SET(in, a->path_mtu);
	RNIC_CMDI_MODIFY_QP_TIMEOUT_SET(in, a->timeout);
	RNIC_CMDI_MODIFY_QP_RETRY_CNT_SET(in, a->retry_cnt);
	RNIC_CMDI_MODIFY_QP_RNR_RETRY_SET(in, a->rnr_retry);
	RNIC_CMDI_MODIFY_QP_MIN_RNR_TIMER_SET(in, a->min_rnr_timer);
	RNIC_CMDI_MODIFY_QP_MAX_RD_ATOMIC_SET(in, a->max_rd_atomic);
	RNIC_CMDI_MODIFY_QP_MAX_DEST_RD_ATOMIC_SET(in, a->max_dest_rd_atomic);
	RNIC_CMDI_MODIFY_QP_SGID_INDEX_SET(in, a->ah_attr.grh.sgid_index);
	RNIC_CMDI_MODIFY_QP_HOP_LIMIT_SET(in, a->ah_attr.grh.hop_limit);
	RNIC_CMDI_MODIFY_QP_TRAFFIC_CLASS_SET(in, a->ah_attr.grh.traffic_class);
	RNIC_CMDI_MODIFY_QP_DEST_QPN_SET(in, a->dest_qp_num);
	RNIC_CMDI_MODIFY_QP_RQ_PSN_SET(in, a->rq_psn);
	RNIC_CMDI_MODIFY_QP_SQ_PSN_SET(in, a->sq_psn);
	RNIC_CMDI_MODIFY_QP_ACCESS_SET(in, a->qp_access_flags);
	RNIC_CMDI_MODIFY_QP_QKEY_SET(in, a->qkey);
	memcpy(in + RNIC_CMDI_MODIFY_QP_DGID_OFF, a->ah_attr.grh.dgid.raw, 16);
	RNIC_CMDI_MODIFY_QP_PKEY_INDEX_SET(in, a->pkey_index);
	RNIC_CMDI_MODIFY_QP_PORT_SET(in, mask & IBV_QP_AV ? a->ah_attr.port_num : a->port_num);
	RNIC_CMDI_MODIFY_QP_IS_GLOBAL_SET(in, a->ah_attr.is_global);
	if ((mask & IBV_QP_AV) && (mask & IBV_QP_PORT) == 0)
		RNIC_CMDI_MODIFY_QP_PORT_SET(in, 1);
	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_modify_qp(&c->dev, in);
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret)
		return cmd_errno(c, ret);
	if (mask & IBV_QP_STATE) {
		ibqp->state = a->qp_state;
		if (a->qp_state == IBV_QPS_RESET) {
			/* a reset QP forgets its work and starts its rings over */
			rnic_cq_clean(ibqp->recv_cq, ibqp->qp_num, qp->srq);
			if (ibqp->send_cq != ibqp->recv_cq)
				rnic_cq_clean(ibqp->send_cq, ibqp->qp_num, NULL);
			qp->sq_pi = qp->rq_pi = qp->rq_ci = 0;
			qp->sq_end = (uint16_t)qp->cap.max_send_wr;
		}
	}
	qp->attr.qp_state = ibqp->state;
	if (mask & IBV_QP_PATH_MTU)
		qp->attr.path_mtu = a->path_mtu;
	if (mask & IBV_QP_DEST_QPN)
		qp->attr.dest_qp_num = a->dest_qp_num;
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->attr.qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_AV)
		qp->attr.ah_attr = a->ah_attr;
	if (mask & IBV_QP_RQ_PSN)
		qp->attr.rq_psn = a->rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		qp->attr.sq_psn = a->sq_psn;
	if (mask & IBV_QP_TIMEOUT)
		qp->attr.timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		qp->attr.retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		qp->attr.rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		qp->attr.min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		qp->attr.max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		qp->attr.max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_QKEY)
		qp->attr.qkey = a->qkey;
	if (mask & IBV_QP_PKEY_INDEX)
		qp->attr.pkey_index = a->pkey_index;
	return 0;
}

int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *init)
{
	struct rnic_qp *qp = (struct rnic_qp *)ibqp;

	(void)mask;
	*a = qp->attr;
	a->cap = qp->cap;
	a->port_num = 1;
	if (init) {
		memset(init, 0, sizeof(*init));
		init->qp_context = ibqp->qp_context;
		init->send_cq = ibqp->send_cq;
		init->recv_cq = ibqp->recv_cq;
		init->cap = qp->cap;
		init->qp_type = ibqp->qp_type;
		init->sq_sig_all = qp->sig_all;
	}
	return 0;
}

const char *ibv_event_type_str(enum ibv_event_type event)
{
	static const char *const str[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
	};

	if ((unsigned)event >= sizeof(str) / sizeof(str[0]) || !str[event])
		return "unknown";
	return str[event];
}

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const s[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
	};

	return (unsigned)status < sizeof(s) / sizeof(s[0]) && s[status] ? s[status] : "unknown";
}

/* ---- project extensions (rnic/rnicdv.h) */
int rnicdv_cq_last_ts(struct ibv_cq *ibcq, uint64_t *start_cycle, uint64_t *end_cycle)
{
	struct rnic_cq *cq = (struct rnic_cq *)ibcq;

	*start_cycle = cq->ts_start;
	*end_cycle = cq->ts_end;
	return 0;
}

/* the NIC's clock: global registers (simulator), or the module's CLOCK ioctl (card: a process
 * maps only its own doorbell page) */
uint32_t rnic_clock_khz(struct rnic_context *c)
{
	uint64_t cycles;
	uint32_t khz;

	if (c->card)
		return pci_bus_clock(&c->pci, &cycles, &khz) ? 0 : khz;
	return sim_bus_ops.mmio_read(&c->bus, RNIC_CLOCK_FREQ_KHZ);
}

uint64_t rnicdv_clock_hz(struct ibv_context *context)
{
	return 1000ull * rnic_clock_khz(to_ctx(context));
}

uint64_t rnicdv_read_clock(struct ibv_context *context)
{
	struct rnic_context *c = to_ctx(context);
	uint64_t cycles;
	uint32_t khz, lo;

	if (c->card)
		return pci_bus_clock(&c->pci, &cycles, &khz) ? 0 : cycles;
	lo = sim_bus_ops.mmio_read(&c->bus, RNIC_CLOCK_CYCLES_LO);
	return ((uint64_t)sim_bus_ops.mmio_read(&c->bus, RNIC_CLOCK_CYCLES_HI) << 32) | lo;
}

/* On a card the driver's 64-bit totals since it bound the device; in the simulator the NIC's
 * own 32-bit counters (a simulated run is well under the seconds they take to wrap). */
int rnicdv_query_stats(struct ibv_context *context, uint64_t *counters, uint32_t max, uint32_t *count)
{
	struct rnic_context *c = to_ctx(context);
	uint32_t i, n;

	if (c->card)
		return pci_bus_stats(&c->pci, counters, max, count);
	n = sim_bus_ops.mmio_read(&c->bus, RNIC_STATS_COUNT);
	if (n == 0xffffffff) /* what a vanished device reads as */
		return EIO;
	for (i = 0; i < n && i < max; i++)
		counters[i] = sim_bus_ops.mmio_read(&c->bus, RNIC_STATS_COUNTER0 + 4 * i);
	*count = n;
	return 0;
}
