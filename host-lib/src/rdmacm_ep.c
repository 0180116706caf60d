/* librdmacm.so.1: the QPs, SRQs and CQs an ID owns, endpoints (rdma_create_ep and the synchronous
 * calls of rdma_verbs.h), rdma_getaddrinfo, options, and what the NIC does not offer: multicast
 * (ENOSYS) and rsockets (ENOSYS). */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <rdma/rsocket.h>

#include "rdmacm.h"

static void destroy_cqs(struct rdma_cm_id *id)
{
	if (!to_cma(id)->own_cqs)
		return;
	if (id->recv_cq)
		ibv_destroy_cq(id->recv_cq);
	if (id->send_cq && id->send_cq != id->recv_cq)
		ibv_destroy_cq(id->send_cq);
	if (id->recv_cq_channel)
		ibv_destroy_comp_channel(id->recv_cq_channel);
	if (id->send_cq_channel && id->send_cq_channel != id->recv_cq_channel)
		ibv_destroy_comp_channel(id->send_cq_channel);
	id->recv_cq = id->send_cq = NULL;
	id->recv_cq_channel = id->send_cq_channel = NULL;
	to_cma(id)->own_cqs = 0;
}

/* as rdma-core's ucma_create_cqs: a CQ with its own completion channel for each side the
 * application left without one (rdma_get_send_comp / rdma_get_recv_comp wait on them) */
static int create_cqs(struct rdma_cm_id *id, uint32_t send_size, uint32_t recv_size)
{
	to_cma(id)->own_cqs = 1;
	if (recv_size) {
		id->recv_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->recv_cq_channel)
			goto err;
		id->recv_cq = ibv_create_cq(id->verbs, (int)recv_size, id, id->recv_cq_channel, 0);
		if (!id->recv_cq)
			goto err;
	}
	if (send_size) {
		id->send_cq_channel = ibv_create_comp_channel(id->verbs);
		if (!id->send_cq_channel)
			goto err;
		id->send_cq = ibv_create_cq(id->verbs, (int)send_size, id, id->send_cq_channel, 0);
		if (!id->send_cq)
			goto err;
	}
	return 0;
err:
	destroy_cqs(id);
	return -1;
}

/* rdma_cm leaves a connected QP in INIT (the firmware takes it on), a UD QP in RTS */
static int init_qp(struct rdma_cm_id *id, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};

	if (qp->qp_type != IBV_QPT_UD)
		return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	a.qkey = id->ps == RDMA_PS_UDP ? CMA_UDP_QKEY : 0;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp *qp;
	int e;

	if (!id->verbs || id->qp)
		return cma_err(EINVAL);
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		attr->pd = id->pd;
		attr->comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (!attr->pd || attr->pd->context != id->verbs)
		return cma_err(EINVAL);
	if ((!attr->send_cq || !attr->recv_cq) &&
	    create_cqs(id, attr->send_cq ? 0 : attr->cap.max_send_wr, attr->recv_cq || attr->srq ? 0 : attr->cap.max_recv_wr))
		return -1;
	if (!attr->send_cq)
		attr->send_cq = id->send_cq;
	if (!attr->recv_cq)
		attr->recv_cq = attr->srq ? attr->send_cq : id->recv_cq;
	if (!attr->srq && id->srq)
		attr->srq = id->srq;
	qp = ibv_create_qp_ex(id->verbs, attr);
	if (!qp)
		goto err;
	if (init_qp(id, qp)) {
		e = errno;
		ibv_destroy_qp(qp);
		errno = e;
		goto err;
	}
	id->qp = qp;
	id->pd = attr->pd;
	id->qp_type = qp->qp_type;
	return 0;
err:
	e = errno;
	destroy_cqs(id);
	return cma_err(e);
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;
	int ret;

	memset(&a, 0, sizeof(a));
	memcpy(&a, qp_init_attr, sizeof(*qp_init_attr));
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = pd;
	ret = rdma_create_qp_ex(id, &a);
	if (!ret) {
		qp_init_attr->cap = a.cap;
		qp_init_attr->send_cq = a.send_cq;
		qp_init_attr->recv_cq = a.recv_cq;
	}
	return ret;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id->qp)
		ibv_destroy_qp(id->qp);
	id->qp = NULL;
	if (!id->srq)
		destroy_cqs(id);
}

int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct ibv_srq_init_attr a = {.srq_context = attr->srq_context, .attr = attr->attr};
	struct ibv_pd *pd;

	if (!id->verbs || id->srq)
		return cma_err(EINVAL);
	if (attr->comp_mask & ~(unsigned)(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TYPE) ||
	    ((attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && attr->srq_type != IBV_SRQT_BASIC))
		return cma_err(EOPNOTSUPP); /* XRC SRQs: no XRC */
	pd = attr->comp_mask & IBV_SRQ_INIT_ATTR_PD && attr->pd ? attr->pd : id->pd;
	if (!pd)
		return cma_err(EINVAL);
	id->srq = ibv_create_srq(pd, &a);
	if (!id->srq)
		return -1;
	id->pd = pd;
	attr->attr = a.attr;
	return 0;
}

int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	a.comp_mask = IBV_SRQ_INIT_ATTR_PD;
	a.pd = pd;
	ret = rdma_create_srq_ex(id, &a);
	if (!ret)
		attr->attr = a.attr;
	return ret;
}

void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id->srq)
		ibv_destroy_srq(id->srq);
	id->srq = NULL;
	if (!id->qp)
		destroy_cqs(id);
}

/* ---- endpoints: synchronous IDs with their QP (rdma_server, rdma_client, pyverbs' CMID) */
int rdma_create_ep(struct rdma_cm_id **id, struct rdma_addrinfo *res, struct ibv_pd *pd,
		   struct ibv_qp_init_attr *qp_init_attr)
{
	struct rdma_cm_id *cm;
	int e;

	if (!id || !res)
		return cma_err(EINVAL);
	if (rdma_create_id(NULL, &cm, NULL, (enum rdma_port_space)res->ai_port_space))
		return -1;
	cm->qp_type = (enum ibv_qp_type)res->ai_qp_type;
	if (res->ai_flags & RAI_PASSIVE) {
		if (rdma_bind_addr(cm, res->ai_src_addr))
			goto err;
		if (qp_init_attr) {
			struct cma_id *p = to_cma(cm);

			p->ep_qp = malloc(sizeof(*p->ep_qp));
			if (!p->ep_qp) {
				errno = ENOMEM;
				goto err;
			}
			*p->ep_qp = *qp_init_attr;
			p->ep_qp->qp_type = (enum ibv_qp_type)res->ai_qp_type;
		}
		cm->pd = pd;
		*id = cm;
		return 0;
	}
	if (rdma_resolve_addr(cm, res->ai_src_addr, res->ai_dst_addr, 2000) || rdma_resolve_route(cm, 2000))
		goto err;
	if (pd)
		cm->pd = pd;
	if (qp_init_attr) {
		qp_init_attr->qp_type = (enum ibv_qp_type)res->ai_qp_type; /* as rdma-core */
		if (rdma_create_qp(cm, pd, qp_init_attr))
			goto err;
	}
	*id = cm;
	return 0;
err:
	e = errno;
	rdma_destroy_ep(cm);
	return cma_err(e);
}

void rdma_destroy_ep(struct rdma_cm_id *id)
{
	if (id->qp)
		rdma_destroy_qp(id);
	if (id->srq)
		rdma_destroy_srq(id);
	rdma_destroy_id(id);
}

/* ---- rdma_getaddrinfo: IPv4 and IPv6 through getaddrinfo(3); AF_IB is not offered */
static struct sockaddr *copy_sa(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *c = malloc(len);

	if (c)
		memcpy(c, sa, len);
	return c;
}

int rdma_getaddrinfo(const char *node, const char *service, const struct rdma_addrinfo *hints,
		     struct rdma_addrinfo **res)
{
	struct addrinfo h = {.ai_socktype = SOCK_STREAM}, *ai;
	struct rdma_addrinfo *r;
	int ret;

	if (!res || (!node && !service))
		return cma_err(EINVAL);
	if (hints) {
		if (hints->ai_family == AF_IB)
			return cma_err(ENOSYS);
		h.ai_family = hints->ai_family;
		h.ai_flags = (hints->ai_flags & RAI_PASSIVE ? AI_PASSIVE : 0) |
			     (hints->ai_flags & RAI_NUMERICHOST ? AI_NUMERICHOST : 0);
	}
	ret = getaddrinfo(node, service, &h, &ai);
	if (ret)
		return ret; /* as rdma-core: getaddrinfo's code */
	r = calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	r->ai_flags = hints ? hints->ai_flags : 0;
	r->ai_family = ai->ai_family;
	r->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type : IBV_QPT_RC;
	r->ai_port_space = hints && hints->ai_port_space ? hints->ai_port_space :
			   r->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP;
	if (r->ai_flags & RAI_PASSIVE) {
		r->ai_src_addr = copy_sa(ai->ai_addr, ai->ai_addrlen);
		r->ai_src_len = ai->ai_addrlen;
		if (!r->ai_src_addr)
			goto nomem;
	} else {
		r->ai_dst_addr = copy_sa(ai->ai_addr, ai->ai_addrlen);
		r->ai_dst_len = ai->ai_addrlen;
		if (!r->ai_dst_addr)
			goto nomem;
		if (hints && hints->ai_src_addr && hints->ai_src_len) {
			r->ai_src_addr = copy_sa(hints->ai_src_addr, hints->ai_src_len);
			r->ai_src_len = hints->ai_src_len;
			if (!r->ai_src_addr)
				goto nomem;
		}
	}
	freeaddrinfo(ai);
	*res = r;
	return 0;
nomem:
	freeaddrinfo(ai);
	rdma_freeaddrinfo(r);
	return cma_err(ENOMEM);
}

void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	while (res) {
		struct rdma_addrinfo *n = res->ai_next;

		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
		res = n;
	}
}

/* ---- options, as the kernel's ucma takes them (ENOSYS for what it does not know) */
int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	struct cma_id *p = to_cma(id);

	if (!optval)
		return cma_err(EINVAL);
	if (level != RDMA_OPTION_ID)
		return cma_err(ENOSYS); /* RDMA_OPTION_IB_PATH: routes come from the GID table */
	switch (optname) {
	case RDMA_OPTION_ID_TOS:
		if (optlen != sizeof(uint8_t))
			return cma_err(EINVAL);
		p->tos = *(uint8_t *)optval;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
	case RDMA_OPTION_ID_AFONLY:
		if (optlen != sizeof(int))
			return cma_err(EINVAL);
		if (p->state != CMA_IDLE)
			return cma_err(EINVAL);
		*(optname == RDMA_OPTION_ID_REUSEADDR ? &p->reuse : &p->afonly) = *(int *)optval ? 1 : 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		if (optlen != sizeof(uint8_t))
			return cma_err(EINVAL);
		p->ack_timeout = *(uint8_t *)optval > 31 ? 31 : *(uint8_t *)optval;
		p->ack_set = 1;
		return 0;
	default:
		return cma_err(ENOSYS);
	}
}

int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct cma_id *p = to_cma(id);

	if (!qp_attr || !qp_attr_mask || !id->verbs)
		return cma_err(EINVAL);
	if (qp_attr->qp_state == IBV_QPS_INIT) {
		memset(qp_attr, 0, sizeof(*qp_attr));
		qp_attr->qp_state = IBV_QPS_INIT;
		qp_attr->port_num = 1;
		*qp_attr_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (id->qp_type == IBV_QPT_UD) {
			qp_attr->qkey = id->ps == RDMA_PS_UDP ? CMA_UDP_QKEY : 0;
			*qp_attr_mask |= IBV_QP_QKEY;
		} else {
			qp_attr->qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				(p->resp_res ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
			*qp_attr_mask |= IBV_QP_ACCESS_FLAGS;
		}
		return 0;
	}
	/* RTR and RTS of a QP the application moves (CONNECT_REQUEST or CONNECT_RESPONSE had the
	 * connection's attributes), as Linux's ib_cm_init_qp_attr gives them */
	if (qp_attr->qp_state != IBV_QPS_RTR && qp_attr->qp_state != IBV_QPS_RTS)
		return cma_err(EINVAL);
	if (p->state != CMA_REQ_RCVD && p->state != CMA_RESPONDED && p->state != CMA_CONNECTED)
		return cma_err(EINVAL);
	if (qp_attr->qp_state == IBV_QPS_RTR) {
		const union ibv_gid *g = &id->route.addr.addr.ibaddr.dgid;

		memset(qp_attr, 0, sizeof(*qp_attr));
		qp_attr->qp_state = IBV_QPS_RTR;
		qp_attr->path_mtu = (enum ibv_mtu)(p->mtu < p->dev->mtu ? p->mtu : p->dev->mtu);
		qp_attr->dest_qp_num = p->remote_qpn;
		qp_attr->rq_psn = p->local_psn; /* ours: where the peer sends from (cm_qp_rts) */
		qp_attr->max_dest_rd_atomic = p->resp_res;
		qp_attr->min_rnr_timer = RNIC_CM_MIN_RNR_TIMER;
		qp_attr->ah_attr.is_global = 1;
		qp_attr->ah_attr.grh.dgid = *g;
		qp_attr->ah_attr.grh.sgid_index = g->raw[10] == 0xff && g->raw[11] == 0xff && !g->raw[0] ? 0 : 1;
		qp_attr->ah_attr.grh.hop_limit = 64;
		qp_attr->ah_attr.grh.traffic_class = p->tos;
		qp_attr->ah_attr.port_num = 1;
		*qp_attr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		return 0;
	}
	memset(qp_attr, 0, sizeof(*qp_attr));
	qp_attr->qp_state = IBV_QPS_RTS;
	qp_attr->sq_psn = p->remote_psn;
	qp_attr->timeout = p->ack_set ? p->ack_timeout : p->conn_timeout;
	qp_attr->retry_cnt = p->retry_cnt;
	qp_attr->rnr_retry = p->rnr_retry;
	qp_attr->max_rd_atomic = p->init_depth;
	*qp_attr_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	return 0;
}

__be16 rdma_get_src_port(struct rdma_cm_id *id)
{
	return htons(cma_port(&id->route.addr.src_addr));
}

__be16 rdma_get_dst_port(struct rdma_cm_id *id)
{
	return htons(cma_port(&id->route.addr.dst_addr));
}

/* ---- ECE (IBTA 1.5 enhanced connection establishment): kept and handed back, not negotiated */
int rdma_set_local_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (!id || id->qp_type != IBV_QPT_RC || !ece)
		return cma_err(EINVAL);
	to_cma(id)->ece_local = *ece;
	return 0;
}

int rdma_get_remote_ece(struct rdma_cm_id *id, struct ibv_ece *ece)
{
	if (!id || id->qp_type != IBV_QPT_RC || !ece)
		return cma_err(EINVAL);
	*ece = to_cma(id)->ece_remote;
	return 0;
}

/* ---- multicast: the NIC joins no group */
int rdma_join_multicast(struct rdma_cm_id *id, struct sockaddr *addr, void *context)
{
	(void)id, (void)addr, (void)context;
	return cma_err(ENOSYS);
}

int rdma_join_multicast_ex(struct rdma_cm_id *id, struct rdma_cm_join_mc_attr_ex *mc_join_attr, void *context)
{
	(void)id, (void)mc_join_attr, (void)context;
	return cma_err(ENOSYS);
}

int rdma_leave_multicast(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)id, (void)addr;
	return cma_err(EADDRNOTAVAIL); /* never joined */
}

/* ---- rsockets: not offered (each call fails with ENOSYS, as on a system without them) */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define RS_NONE(decl) decl { return cma_err(ENOSYS); }
RS_NONE(int rsocket(int domain, int type, int protocol))
RS_NONE(int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen))
RS_NONE(int rlisten(int socket, int backlog))
RS_NONE(int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen))
RS_NONE(int rconnect(int socket, const struct sockaddr *addr, socklen_t addrlen))
RS_NONE(int rshutdown(int socket, int how))
RS_NONE(int rclose(int socket))
RS_NONE(ssize_t rrecv(int socket, void *buf, size_t len, int flags))
RS_NONE(ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags, struct sockaddr *src_addr,
			  socklen_t *addrlen))
RS_NONE(ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags))
RS_NONE(ssize_t rsend(int socket, const void *buf, size_t len, int flags))
RS_NONE(ssize_t rsendto(int socket, const void *buf, size_t len, int flags, const struct sockaddr *dest_addr,
			socklen_t addrlen))
RS_NONE(ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags))
RS_NONE(ssize_t rread(int socket, void *buf, size_t count))
RS_NONE(ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt))
RS_NONE(ssize_t rwrite(int socket, const void *buf, size_t count))
RS_NONE(ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt))
RS_NONE(int rpoll(struct pollfd *fds, nfds_t nfds, int timeout))
RS_NONE(int rselect(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout))
RS_NONE(int rgetpeername(int socket, struct sockaddr *addr, socklen_t *addrlen))
RS_NONE(int rgetsockname(int socket, struct sockaddr *addr, socklen_t *addrlen))
RS_NONE(int rsetsockopt(int socket, int level, int optname, const void *optval, socklen_t optlen))
RS_NONE(int rgetsockopt(int socket, int level, int optname, void *optval, socklen_t *optlen))
RS_NONE(int rfcntl(int socket, int cmd, ... /* arg */))
RS_NONE(int riounmap(int socket, void *buf, size_t len))
RS_NONE(size_t riowrite(int socket, const void *buf, size_t count, off_t offset, int flags))

off_t riomap(int socket, void *buf, size_t len, int prot, int flags, off_t offset)
{
	(void)socket, (void)buf, (void)len, (void)prot, (void)flags, (void)offset;
	errno = ENOSYS;
	return -1;
}
