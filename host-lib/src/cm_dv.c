/* The firmware's connection manager for programs (rnic/rnicdv.h): its commands, and the
 * context's ring of CM events (docs/ARCHITECTURE.md, "QP1 and the CM"). The firmware moves a
 * connection's QP through RTR and RTS (and to error on a disconnect) itself, so what the library
 * caches of that QP is read back from the firmware whenever the connection changes. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "rnic/rnicdv.h"
#include "rnic_verbs.h"

#define CM_EVQ_LOG 6 /* 64 events may wait */

/* under cmd_lock */
static void qp_refresh(struct rnic_context *c, uint32_t qpn)
{
	uint8_t out[RNIC_CMDO_QUERY_QP_SIZE];
	struct rnic_qp *qp = rnic_qp_get(c, qpn);

	if (!qp || rnic_query_qp(&c->dev, qpn, out))
		return;
	qp->ex.qp_base.state = RNIC_CMDO_QUERY_QP_STATE_GET(out);
	qp->attr.qp_state = qp->ex.qp_base.state;
	qp->attr.path_mtu = RNIC_CMDO_QUERY_QP_PATH_MTU_GET(out);
	qp->attr.dest_qp_num = RNIC_CMDO_QUERY_QP_DEST_QPN_GET(out);
	qp->attr.rq_psn = RNIC_CMDO_QUERY_QP_RQ_PSN_GET(out);
	qp->attr.sq_psn = RNIC_CMDO_QUERY_QP_SQ_PSN_GET(out);
	qp->attr.timeout = RNIC_CMDO_QUERY_QP_TIMEOUT_GET(out);
	qp->attr.retry_cnt = RNIC_CMDO_QUERY_QP_RETRY_CNT_GET(out);
	qp->attr.rnr_retry = RNIC_CMDO_QUERY_QP_RNR_RETRY_GET(out);
	qp->attr.min_rnr_timer = RNIC_CMDO_QUERY_QP_MIN_RNR_TIMER_GET(out);
	qp->attr.max_rd_atomic = RNIC_CMDO_QUERY_QP_MAX_RD_ATOMIC_GET(out);
	qp->attr.max_dest_rd_atomic = RNIC_CMDO_QUERY_QP_MAX_DEST_RD_ATOMIC_GET(out);
}

/* under cmd_lock: the context's CM event ring, made on first use */
static int evq_open(struct rnic_context *c)
{
	uint8_t in[RNIC_CMDI_CM_CREATE_EVQ_SIZE] = {0};
	size_t size = (size_t)RNIC_CM_EVENT_BYTES << CM_EVQ_LOG;
	int ret;

	if (c->cm_ring)
		return 0;
	c->cm_ring = c->dev.ops->dma_alloc(c->dev.bus, size, &c->cm_bus);
	if (!c->cm_ring)
		return -ENOMEM;
	RNIC_CMDI_CM_CREATE_EVQ_BASE_SET(in, c->cm_bus);
	RNIC_CMDI_CM_CREATE_EVQ_LOG_SIZE_SET(in, CM_EVQ_LOG);
	ret = rnic_cmd_exec(&c->dev, RNIC_CMD_CM_CREATE_EVQ, in, sizeof(in), NULL, 0);
	if (ret) {
		c->dev.ops->dma_free(c->dev.bus, c->cm_ring, size);
		c->cm_ring = NULL;
	}
	return ret;
}

int rnicdv_cm_cmd(struct ibv_context *context, uint32_t opcode, const void *in, size_t inlen, void *out,
		  size_t outlen)
{
	struct rnic_context *c = to_ctx(context);
	int ret;

	if (opcode < RNIC_CMD_CM_CREATE_ID || opcode > RNIC_CMD_CM_ESTABLISH)
		return EINVAL; /* the CM's commands only */
	pthread_mutex_lock(&c->cmd_lock);
	ret = evq_open(c);
	if (!ret)
		ret = rnic_cmd_exec(&c->dev, opcode, in, inlen, out, outlen);
	if (!ret && (opcode == RNIC_CMD_CM_ACCEPT || opcode == RNIC_CMD_CM_CONNECT) && inlen >= RNIC_CMDI_CM_ACCEPT_SIZE) {
		/* both start with the CM ID and the QPN */
		uint32_t id = RNIC_CMDI_CM_ACCEPT_ID_GET((const uint8_t *)in);

		if (id < RNIC_MAX_CM_ID)
			c->cm_qpn[id] = RNIC_CMDI_CM_ACCEPT_QPN_GET((const uint8_t *)in);
		qp_refresh(c, RNIC_CMDI_CM_ACCEPT_QPN_GET((const uint8_t *)in));
	}
	if (!ret && opcode == RNIC_CMD_CM_DISCONNECT && inlen >= RNIC_CMDI_HANDLE_SIZE) {
		uint32_t id = RNIC_CMDI_HANDLE_HANDLE_GET((const uint8_t *)in);

		if (id < RNIC_MAX_CM_ID)
			qp_refresh(c, c->cm_qpn[id]);
	}
	pthread_mutex_unlock(&c->cmd_lock);
	return -ret;
}

int rnicdv_cm_get_event(struct ibv_context *context, void *event)
{
	struct rnic_context *c = to_ctx(context);
	const uint8_t *e;
	uint32_t type, id;
	int ret = EAGAIN;

	pthread_mutex_lock(&c->cmd_lock);
	if (!c->cm_ring)
		goto out;
	e = c->cm_ring + (size_t)(c->cm_ci & ((1u << CM_EVQ_LOG) - 1)) * RNIC_CM_EVENT_BYTES;
	if (__atomic_load_n(&e[RNIC_CM_EVENT_OWNER_OFF], __ATOMIC_ACQUIRE) != (((c->cm_ci >> CM_EVQ_LOG) & 1) ^ 1))
		goto out;
	memcpy(event, e, RNIC_CM_EVENT_BYTES);
	c->cm_ci++;
	type = RNIC_CM_EVENT_TYPE_GET(e);
	id = RNIC_CM_EVENT_ID_GET(e);
	if (id < RNIC_MAX_CM_ID)
		c->cm_qpn[id] = RNIC_CM_EVENT_QPN_GET(e);
	if (type != RNIC_CM_EV_CONNECT_REQUEST)
		qp_refresh(c, RNIC_CM_EVENT_QPN_GET(e));
	ret = 0;
out:
	pthread_mutex_unlock(&c->cmd_lock);
	return ret;
}

int rnicdv_cm_event_fd(struct ibv_context *context)
{
	struct rnic_context *c = to_ctx(context);
	int ret = 0, p[2];

	pthread_mutex_lock(&c->cmd_lock);
	if (c->cm_fd[0] < 0) {
		ret = evq_open(c);
		if (!ret && pipe2(p, O_CLOEXEC | O_NONBLOCK))
			ret = errno;
		if (!ret) {
			c->cm_fd[0] = p[0];
			__atomic_store_n(&c->cm_fd[1], p[1], __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret) {
		errno = ret < 0 ? -ret : ret;
		return -1;
	}
	return c->cm_fd[0];
}
