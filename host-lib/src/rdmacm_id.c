/* librdmacm.so.1: CM IDs and the connection's life (rdma_bind_addr to rdma_disconnect) on the
 * firmware's CM commands; rdmacm.c has the devices, channels and events they use. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rnic/rnicdv.h"
#include "rdmacm.h"

#define CMA_RESP_TIMEOUT 20 /* as Linux's cma.c: 4.096 us << 20 for each REQ or REP, both ways */
#define CMA_MAX_RETRIES 15

/* the port an ID takes when it names none: a pseudo-random one of Linux's ephemeral range (a
 * listener's clash shows at rdma_listen, where the NIC owns the port space); under cma_lock */
static uint16_t ephemeral_port(void)
{
	static uint32_t next;

	if (!next)
		next = (uint32_t)getpid() * 2654435761u;
	next = next * 1103515245u + 12345u;
	return (uint16_t)(32768 + (next >> 8) % 28232);
}

/* ---- CM IDs */
struct cma_id *cma_id_alloc(struct rdma_event_channel *channel, void *context, enum rdma_port_space ps,
			    enum ibv_qp_type qp_type)
{
	struct cma_id *p = calloc(1, sizeof(*p));
	int i;

	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel) {
			free(p);
			return NULL;
		}
		p->sync = 1;
	}
	p->id.channel = channel;
	p->id.context = context;
	p->id.ps = ps;
	p->id.qp_type = qp_type;
	p->fw = -1;
	for (i = 0; i < CMA_MAX_DEV; i++)
		p->fw_listen[i] = -1;
	p->ack_timeout = CMA_ACK_TIMEOUT;
	return p;
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
		   enum rdma_port_space ps)
{
	enum ibv_qp_type type = ps == RDMA_PS_UDP || ps == RDMA_PS_IPOIB ? IBV_QPT_UD : IBV_QPT_RC;
	struct cma_id *p;

	if (!id)
		return cma_err(EINVAL);
	if (ps != RDMA_PS_TCP && ps != RDMA_PS_UDP && ps != RDMA_PS_IB && ps != RDMA_PS_IPOIB)
		return cma_err(EINVAL);
	if (cma_init())
		return -1;
	p = cma_id_alloc(channel, context, ps, type);
	if (!p)
		return -1;
	*id = &p->id;
	return 0;
}

static int drop_owned(struct cma_event *e, void *p)
{
	return e->owner == p;
}

/* under cma_lock: the firmware's IDs go (it answers the peer as Linux does), then the ID */
static void id_release(struct cma_id *p)
{
	int i;

	if (p->dev) {
		cma_fw_destroy(p->dev, &p->fw);
		/* as rdma-core's ucma_put_device: the PD made for QPs without one goes with the last ID */
		if (!--p->dev->refs && p->dev->pd && !ibv_dealloc_pd(p->dev->pd))
			p->dev->pd = NULL;
	}
	for (i = 0; i < cma_ndev; i++)
		cma_fw_destroy(&cma_devs[i], &p->fw_listen[i]);
	free(p->ep_qp);
	free(p);
}

static int drop_orphaned(struct cma_event *e, void *arg)
{
	(void)arg;
	return e->owner->state == CMA_DEAD && e->owner->fw == -2;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct cma_id *p = to_cma(id), *orphans[RNIC_MAX_CM_ID * CMA_MAX_DEV];
	struct rdma_event_channel *ch = id->channel;
	struct cma_channel *c = (struct cma_channel *)ch;
	struct cma_event *e;
	int sync = p->sync, n = 0, i;

	if (id->event)
		rdma_ack_cm_event(id->event);
	pthread_mutex_lock(&cma_lock);
	/* as rdma-core: the events handed out for the ID are acked first (by other threads) */
	cma_wait_acked(p);
	/* a listener's requests nobody took go with it, with every event queued for them */
	for (e = c->head; e && p->state == CMA_LISTEN; e = e->next)
		if (e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST && e->ev.listen_id == id &&
		    n < (int)(sizeof(orphans) / sizeof(orphans[0]))) {
			orphans[n] = e->owner;
			cma_fw_destroy(orphans[n]->dev, &orphans[n]->fw);
			orphans[n]->state = CMA_DEAD;
			orphans[n++]->fw = -2;
		}
	cma_unqueue(ch, drop_orphaned, NULL);
	for (i = 0; i < n; i++)
		id_release(orphans[i]);
	cma_unqueue(ch, drop_owned, p);
	id_release(p);
	pthread_mutex_unlock(&cma_lock);
	if (sync)
		rdma_destroy_event_channel(ch);
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	struct cma_id *p = to_cma(id);
	struct cma_dev *d = NULL;
	size_t len;

	if (!addr || !(len = cma_addr_len(addr)))
		return cma_err(addr && addr->sa_family == AF_IB ? ENOSYS : EINVAL);
	if (p->state != CMA_IDLE)
		return cma_err(EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (!cma_is_any(addr)) {
		d = cma_dev_of_addr(addr);
		if (!d) {
			pthread_mutex_unlock(&cma_lock);
			return cma_err(EADDRNOTAVAIL);
		}
	}
	memcpy(&id->route.addr.src_storage, addr, len);
	if (!cma_port(addr))
		cma_set_port(&id->route.addr.src_addr, ephemeral_port());
	if (d) {
		cma_attach(p, d);
		cma_addr_gid(addr, id->route.addr.addr.ibaddr.sgid.raw);
		id->route.addr.addr.ibaddr.pkey = 0xffff;
	}
	p->state = CMA_BOUND;
	pthread_mutex_unlock(&cma_lock);
	return 0;
}

static uint64_t service_id(const struct cma_id *p, uint16_t port)
{
	return (uint64_t)p->id.ps << 16 | port;
}

static int listen_on(struct cma_id *p, struct cma_dev *d, int32_t *h)
{
	uint8_t in[RNIC_CMDI_CM_LISTEN_SIZE] = {0};

	*h = cma_fw_create(d, p);
	if (*h < 0)
		return -1;
	RNIC_CMDI_CM_LISTEN_ID_SET(in, (uint32_t)*h);
	RNIC_CMDI_CM_LISTEN_SERVICE_ID_SET(in, service_id(p, cma_port(&p->id.route.addr.src_addr)));
	/* what the listener takes, as rdma_cm's qp_type of its port space (RDMA_PS_IB: either) */
	RNIC_CMDI_CM_LISTEN_QP_TYPE_SET(in, p->id.ps == RDMA_PS_IB ? 0 : p->id.qp_type == IBV_QPT_UD ? RNIC_QPT_UD
												: RNIC_QPT_RC);
	if (cma_fw_cmd(d, RNIC_CMD_CM_LISTEN, in, sizeof(in), NULL)) {
		int e = errno;

		cma_fw_destroy(d, h);
		/* a port below 1024 without CAP_NET_BIND_SERVICE: what Linux's cma_use_port says */
		return cma_err(e == EPERM ? EACCES : e);
	}
	return 0;
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	struct cma_id *p = to_cma(id);
	int i, ret = 0;

	(void)backlog; /* the firmware holds up to 8 unanswered requests per listener */
	if (p->state == CMA_IDLE) {
		struct sockaddr_in any = {.sin_family = AF_INET};

		if (rdma_bind_addr(id, (struct sockaddr *)&any))
			return -1;
	}
	if (p->state != CMA_BOUND)
		return cma_err(EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (p->dev) {
		ret = listen_on(p, p->dev, &p->fw);
	} else {
		for (i = 0; i < cma_ndev && !ret; i++)
			ret = listen_on(p, &cma_devs[i], &p->fw_listen[i]);
		if (ret) {
			int e = errno;

			while (i--)
				cma_fw_destroy(&cma_devs[i], &p->fw_listen[i]);
			errno = e;
		}
	}
	if (!ret)
		p->state = CMA_LISTEN;
	pthread_mutex_unlock(&cma_lock);
	return ret;
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src_addr, struct sockaddr *dst_addr, int timeout_ms)
{
	struct cma_id *p = to_cma(id);
	struct rdma_addr *a = &id->route.addr;
	struct cma_dev *d;
	int i, ret;

	(void)timeout_ms; /* the firmware resolves the neighbour when it sends the REQ */
	if (!dst_addr || !cma_addr_len(dst_addr))
		return cma_err(dst_addr && dst_addr->sa_family == AF_IB ? ENOSYS : EINVAL);
	if (p->state == CMA_IDLE) {
		struct sockaddr_storage any = {.ss_family = dst_addr->sa_family};

		if (rdma_bind_addr(id, src_addr ? src_addr : (struct sockaddr *)&any))
			return -1;
	}
	if (p->state != CMA_BOUND)
		return cma_err(EINVAL);
	pthread_mutex_lock(&cma_lock);
	d = p->dev;
	/* no source address: the device that owns the destination (internal loopback), else the
	 * first with an address of the destination's family */
	if (!d)
		d = cma_dev_of_addr(dst_addr);
	for (i = 0; !d && i < cma_ndev; i++) {
		uint8_t g[16];

		cma_addr_gid(dst_addr, g);
		if ((dst_addr->sa_family == AF_INET) == !memcmp(cma_devs[i].gid[0], g, 12))
			d = &cma_devs[i];
	}
	if (!d) {
		pthread_mutex_unlock(&cma_lock);
		return cma_err(ENODEV);
	}
	if (!p->dev) {
		uint16_t port = cma_port(&a->src_addr);

		cma_gid_to_addr(d->gid[dst_addr->sa_family == AF_INET ? 0 : 1], port, &a->src_storage);
		cma_attach(p, d);
	}
	memcpy(&a->dst_storage, dst_addr, cma_addr_len(dst_addr));
	cma_addr_gid(&a->src_addr, a->addr.ibaddr.sgid.raw);
	cma_addr_gid(dst_addr, a->addr.ibaddr.dgid.raw);
	a->addr.ibaddr.pkey = 0xffff;
	p->state = CMA_ADDR_RESOLVED;
	ret = cma_local_event(p, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	pthread_mutex_unlock(&cma_lock);
	return ret ? ret : cma_complete(p);
}

int rdma_resolve_route(struct rdma_cm_id *id, int timeout_ms)
{
	struct cma_id *p = to_cma(id);
	struct ibv_sa_path_rec *r = &p->path;
	int ret;

	(void)timeout_ms;
	if (p->state != CMA_ADDR_RESOLVED)
		return cma_err(EINVAL);
	pthread_mutex_lock(&cma_lock);
	/* RoCE's path: the GIDs, the port's MTU, the hop limit and class the QP will use */
	memset(r, 0, sizeof(*r));
	r->dgid = id->route.addr.addr.ibaddr.dgid;
	r->sgid = id->route.addr.addr.ibaddr.sgid;
	r->hop_limit = 64;
	r->traffic_class = p->tos;
	r->reversible = 1;
	r->numb_path = 1;
	r->pkey = htons(0xffff);
	r->mtu_selector = 2;
	r->mtu = (uint8_t)p->dev->mtu;
	r->rate_selector = 2;
	r->rate = 14; /* IBV_RATE_100_GBPS */
	r->packet_life_time_selector = 2;
	r->packet_life_time = CMA_ACK_TIMEOUT - 1;
	id->route.path_rec = r;
	id->route.num_paths = 1;
	p->state = CMA_ROUTE_RESOLVED;
	ret = cma_local_event(p, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	pthread_mutex_unlock(&cma_lock);
	return ret ? ret : cma_complete(p);
}

/* rdma_cm's header (Linux cma.c, struct cma_hdr): version 0, IP version, the source port, then
 * the source and destination addresses (IPv4 in the last 4 bytes of 16) */
static void cma_hdr(const struct cma_id *p, uint8_t *h)
{
	const struct rdma_addr *a = &p->id.route.addr;
	uint16_t port = cma_port(&a->src_addr);

	memset(h, 0, CMA_HDR_LEN);
	h[1] = a->src_addr.sa_family == AF_INET ? 4 << 4 : 6 << 4;
	h[2] = (uint8_t)(port >> 8);
	h[3] = (uint8_t)port;
	cma_addr_gid(&a->src_addr, h + 4);
	cma_addr_gid(&a->dst_addr, h + 20);
	if (a->src_addr.sa_family == AF_INET) {
		memset(h + 4, 0, 12);
		memset(h + 20, 0, 12);
	}
}

void cma_qp_access(struct cma_id *p, int read)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT};

	if (!p->id.qp || p->id.qp->qp_type == IBV_QPT_UD)
		return;
	/* as Linux's cm_init_qp_init_attr: remote writes, and reads and atomics once the connection
	 * grants responder resources */
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | (read ? IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : 0);
	ibv_modify_qp(p->id.qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
}

static uint8_t depth(uint8_t want, uint8_t max)
{
	return want == RDMA_MAX_RESP_RES || want > max ? max : want;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct cma_id *p = to_cma(id);
	uint8_t in[RNIC_CMDI_CM_CONNECT_SIZE] = {0}, pd[CMA_SIDR_REQ_PDATA] = {0};
	int ud = id->qp_type == IBV_QPT_UD; /* SIDR: the peer's QPN and Q_Key */
	uint8_t resp, init;
	uint32_t qpn;
	int ret = -1;

	if (p->state != CMA_ROUTE_RESOLVED)
		return cma_err(EINVAL);
	if (param && param->private_data_len > (ud ? CMA_SIDR_REQ_PDATA : CMA_REQ_PDATA) - CMA_HDR_LEN)
		return cma_err(EINVAL);
	qpn = id->qp ? id->qp->qp_num : param ? param->qp_num : 0;
	resp = ud ? 0 : depth(param ? param->responder_resources : RDMA_MAX_RESP_RES, p->dev->max_resp_res);
	init = ud ? 0 : depth(param ? param->initiator_depth : RDMA_MAX_INIT_DEPTH, p->dev->max_init_depth);
	cma_qp_access(p, resp > 0);
	pthread_mutex_lock(&cma_lock);
	if (p->fw < 0 && (p->fw = cma_fw_create(p->dev, p)) < 0)
		goto out;
	cma_hdr(p, pd);
	if (param && param->private_data_len)
		memcpy(pd + CMA_HDR_LEN, param->private_data, param->private_data_len);
	if (cma_fw_pdata(p->dev, (uint32_t)p->fw, pd, CMA_HDR_LEN + (param ? param->private_data_len : 0)))
		goto out;
	RNIC_CMDI_CM_CONNECT_ID_SET(in, (uint32_t)p->fw);
	RNIC_CMDI_CM_CONNECT_QPN_SET(in, qpn);
	RNIC_CMDI_CM_CONNECT_SERVICE_ID_SET(in, service_id(p, cma_port(&id->route.addr.dst_addr)));
	memcpy(in + RNIC_CMDI_CM_CONNECT_DGID_OFF, id->route.addr.addr.ibaddr.dgid.raw, 16);
	RNIC_CMDI_CM_CONNECT_RESP_RES_SET(in, resp);
	RNIC_CMDI_CM_CONNECT_INIT_DEPTH_SET(in, init);
	RNIC_CMDI_CM_CONNECT_RETRY_CNT_SET(in, param ? (param->retry_count > 7 ? 7 : param->retry_count) : 7);
	RNIC_CMDI_CM_CONNECT_RNR_RETRY_SET(in, param ? (param->rnr_retry_count > 7 ? 7 : param->rnr_retry_count) : 7);
	RNIC_CMDI_CM_CONNECT_RESP_TIMEOUT_SET(in, CMA_RESP_TIMEOUT);
	RNIC_CMDI_CM_CONNECT_MAX_RETRIES_SET(in, CMA_MAX_RETRIES);
	RNIC_CMDI_CM_CONNECT_ACK_TIMEOUT_SET(in, p->ack_timeout);
	RNIC_CMDI_CM_CONNECT_TCLASS_SET(in, p->tos);
	RNIC_CMDI_CM_CONNECT_PATH_MTU_SET(in, p->dev->mtu);
	RNIC_CMDI_CM_CONNECT_EXTERNAL_SET(in, !id->qp && !ud); /* the application moves its own QP */
	p->resp_res = resp;
	p->init_depth = init;
	ret = cma_fw_cmd(p->dev, RNIC_CMD_CM_CONNECT, in, sizeof(in), NULL);
	if (!ret)
		p->state = CMA_CONNECTING;
out:
	pthread_mutex_unlock(&cma_lock);
	return ret ? ret : cma_complete(p);
}

static int accept_ud(struct cma_id *p, struct rdma_conn_param *param)
{
	uint8_t in[RNIC_CMDI_CM_ACCEPT_SIZE] = {0};
	int ret;

	if (param && param->private_data_len > CMA_SIDR_REP_PDATA)
		return cma_err(EINVAL);
	pthread_mutex_lock(&cma_lock);
	ret = cma_fw_pdata(p->dev, (uint32_t)p->fw, param ? param->private_data : NULL, param ? param->private_data_len : 0);
	RNIC_CMDI_CM_ACCEPT_ID_SET(in, (uint32_t)p->fw);
	RNIC_CMDI_CM_ACCEPT_QPN_SET(in, p->id.qp ? p->id.qp->qp_num : param ? param->qp_num : 0);
	RNIC_CMDI_CM_ACCEPT_QKEY_SET(in, CMA_UDP_QKEY);
	if (!ret)
		ret = cma_fw_cmd(p->dev, RNIC_CMD_CM_ACCEPT, in, sizeof(in), NULL);
	if (!ret)
		p->state = CMA_CONNECTED; /* the SIDR_REP was the whole answer: no event follows */
	pthread_mutex_unlock(&cma_lock);
	if (!ret && p->sync && p->id.event) {
		rdma_ack_cm_event(p->id.event);
		p->id.event = NULL;
	}
	return ret;
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	struct cma_id *p = to_cma(id);
	uint8_t in[RNIC_CMDI_CM_ACCEPT_SIZE] = {0};
	uint8_t resp = p->resp_res, init = p->init_depth;
	uint32_t qpn;
	int ret;

	if (p->state != CMA_REQ_RCVD)
		return cma_err(EINVAL);
	if (id->qp_type == IBV_QPT_UD)
		return accept_ud(p, param);
	if (param) {
		/* as rdma-core's ucma_valid_param: no more than the device has */
		if ((param->responder_resources != RDMA_MAX_RESP_RES && param->responder_resources > p->dev->max_resp_res) ||
		    (param->initiator_depth != RDMA_MAX_INIT_DEPTH && param->initiator_depth > p->dev->max_init_depth) ||
		    param->private_data_len > CMA_REP_PDATA)
			return cma_err(EINVAL);
		if (param->responder_resources < resp)
			resp = param->responder_resources;
		if (param->initiator_depth < init)
			init = param->initiator_depth;
	}
	qpn = id->qp ? id->qp->qp_num : param ? param->qp_num : 0;
	cma_qp_access(p, resp > 0);
	pthread_mutex_lock(&cma_lock);
	ret = cma_fw_pdata(p->dev, (uint32_t)p->fw, param ? param->private_data : NULL, param ? param->private_data_len : 0);
	RNIC_CMDI_CM_ACCEPT_ID_SET(in, (uint32_t)p->fw);
	RNIC_CMDI_CM_ACCEPT_QPN_SET(in, qpn);
	RNIC_CMDI_CM_ACCEPT_RESP_RES_SET(in, resp);
	RNIC_CMDI_CM_ACCEPT_INIT_DEPTH_SET(in, init);
	RNIC_CMDI_CM_ACCEPT_RNR_RETRY_SET(in, param ? (param->rnr_retry_count > 7 ? 7 : param->rnr_retry_count) : 7);
	RNIC_CMDI_CM_ACCEPT_MIN_RNR_TIMER_SET(in, RNIC_CM_MIN_RNR_TIMER);
	if (p->ack_set)
		RNIC_CMDI_CM_ACCEPT_ACK_TIMEOUT_SET(in, p->ack_timeout + 1u);
	if (!ret)
		ret = cma_fw_cmd(p->dev, RNIC_CMD_CM_ACCEPT, in, sizeof(in), NULL);
	if (!ret)
		p->state = CMA_ACCEPTING;
	pthread_mutex_unlock(&cma_lock);
	return ret ? ret : cma_complete(p);
}

static int reject(struct rdma_cm_id *id, const void *pdata, uint8_t len, uint16_t reason)
{
	struct cma_id *p = to_cma(id);
	uint8_t in[RNIC_CMDI_CM_REJECT_SIZE] = {0};
	int ret;

	if (p->state != CMA_REQ_RCVD)
		return cma_err(EINVAL);
	if (len > CMA_REJ_PDATA)
		return cma_err(EINVAL);
	pthread_mutex_lock(&cma_lock);
	ret = cma_fw_pdata(p->dev, (uint32_t)p->fw, pdata, len);
	RNIC_CMDI_CM_REJECT_ID_SET(in, (uint32_t)p->fw);
	RNIC_CMDI_CM_REJECT_REASON_SET(in, reason);
	if (!ret)
		ret = cma_fw_cmd(p->dev, RNIC_CMD_CM_REJECT, in, sizeof(in), NULL);
	if (!ret)
		p->state = CMA_DEAD;
	pthread_mutex_unlock(&cma_lock);
	return ret;
}

int rdma_reject(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len, 28); /* IB_CM_REJ_CONSUMER_DEFINED */
}

int rdma_reject_ece(struct rdma_cm_id *id, const void *private_data, uint8_t private_data_len)
{
	return reject(id, private_data, private_data_len, 35); /* IB_CM_REJ_VENDOR_OPTION_NOT_SUPPORTED */
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	struct cma_id *p = to_cma(id);
	int ret = 0;

	if (id->qp_type == IBV_QPT_UD)
		return cma_err(EINVAL); /* a UD ID has no connection to end */
	if (id->qp) {
		struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};

		/* as rdma-core: the QP's work requests flush whoever hung up first */
		ibv_modify_qp(id->qp, &a, IBV_QP_STATE);
	}
	pthread_mutex_lock(&cma_lock);
	if (p->state == CMA_CONNECTED || p->state == CMA_ACCEPTING || p->state == CMA_CONNECTING ||
	    p->state == CMA_RESPONDED) {
		/* the firmware moves the QP to error and sends the DREQ; DISCONNECTED follows. EINVAL:
		 * the peer ended it first and its event is on the way (Linux answers such a call with
		 * a DREP and returns 0) */
		ret = cma_fw_id_cmd(p->dev, RNIC_CMD_CM_DISCONNECT, (uint32_t)p->fw);
		if (ret && errno == EINVAL)
			ret = 0;
		if (!ret)
			p->state = CMA_DISCONNECTING;
	} else if (p->state != CMA_DISCONNECTED && p->state != CMA_DISCONNECTING) {
		ret = cma_err(EINVAL);
	}
	pthread_mutex_unlock(&cma_lock);
	if (ret || p->disc_seen)
		return ret;
	return cma_complete(p);
}

int rdma_establish(struct rdma_cm_id *id)
{
	struct cma_id *p = to_cma(id);
	int ret;

	if (p->state != CMA_RESPONDED)
		return cma_err(EINVAL);
	pthread_mutex_lock(&cma_lock);
	ret = cma_fw_id_cmd(p->dev, RNIC_CMD_CM_ESTABLISH, (uint32_t)p->fw);
	if (!ret)
		p->state = CMA_CONNECTED;
	pthread_mutex_unlock(&cma_lock);
	return ret;
}

int rdma_notify(struct rdma_cm_id *id, enum ibv_event_type event)
{
	(void)event;
	return to_cma(id)->state == CMA_CONNECTED || to_cma(id)->state == CMA_ACCEPTING ? 0 : cma_err(EINVAL);
}

int rdma_migrate_id(struct rdma_cm_id *id, struct rdma_event_channel *channel)
{
	struct cma_id *p = to_cma(id);
	struct rdma_event_channel *old = id->channel;
	struct cma_channel *oc = (struct cma_channel *)old;
	struct cma_event **pp, *e;
	int sync = !channel, was_sync = p->sync;

	if (!channel) {
		channel = rdma_create_event_channel();
		if (!channel)
			return -1;
	}
	pthread_mutex_lock(&cma_lock);
	cma_wait_acked(p);
	/* the ID's queued events move with it */
	for (pp = &oc->head; (e = *pp);) {
		if (e->owner == p) {
			*pp = e->next;
			id->channel = channel;
			cma_queue_event(e);
		} else {
			pp = &e->next;
		}
	}
	oc->tail = pp;
	id->channel = channel;
	p->sync = sync;
	pthread_mutex_unlock(&cma_lock);
	if (was_sync)
		rdma_destroy_event_channel(old);
	return 0;
}

int rdma_get_request(struct rdma_cm_id *listen, struct rdma_cm_id **id)
{
	struct cma_id *l = to_cma(listen);
	struct rdma_cm_event *e;
	struct cma_id *c;

	if (!l->sync)
		return cma_err(EINVAL);
	if (rdma_get_cm_event(listen->channel, &e))
		return -1;
	if (e->status) {
		int s = e->status < 0 ? -e->status : e->status;

		rdma_ack_cm_event(e);
		return cma_err(s);
	}
	c = to_cma(e->id);
	if (l->ep_qp) {
		struct ibv_qp_init_attr a = *l->ep_qp;

		if (rdma_create_qp(e->id, listen->pd, &a)) {
			int s = errno;

			rdma_reject(e->id, NULL, 0);
			rdma_ack_cm_event(e);
			rdma_destroy_id(&c->id);
			return cma_err(s);
		}
	}
	*id = e->id;
	if (rdma_migrate_id(e->id, NULL))
		return -1;
	e->id->event = e;
	return 0;
}
