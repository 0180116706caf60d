/* librdmacm.so.1, a drop-in for rdma-core 44's (host-lib/librdmacm.map), over the NIC's own
 * connection manager: the firmware speaks the IB CM on QP1 and moves each connection's QP through
 * RTR and RTS (docs/ARCHITECTURE.md, "QP1 and the CM"); this library keeps rdma_cm's IDs, event
 * channels and address rules on top of the rnicdv_cm_* commands. No kernel ucma is involved, so
 * the same code serves the simulator and the card. This file: devices, addresses, the firmware's
 * commands, event channels and the firmware's events; rdmacm_id.c: CM IDs and the connection's
 * life; rdmacm_ep.c: QPs, endpoints, rdma_getaddrinfo and options. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rnic/rnicdv.h"
#include "rdmacm.h"


pthread_mutex_t cma_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cma_acked = PTHREAD_COND_INITIALIZER;
struct cma_dev cma_devs[CMA_MAX_DEV];
int cma_ndev = -1;

int cma_err(int e)
{
	errno = e;
	return -1;
}

/* ---- devices: every NIC the verbs library sees, opened once for the process */
int cma_init(void)
{
	struct ibv_device **list;
	int n, i, ret = 0;

	pthread_mutex_lock(&cma_lock);
	if (cma_ndev >= 0)
		goto out;
	list = ibv_get_device_list(&n);
	if (!list) {
		ret = -1;
		goto out;
	}
	cma_ndev = 0;
	for (i = 0; i < n && cma_ndev < CMA_MAX_DEV; i++) {
		struct cma_dev *d = &cma_devs[cma_ndev];
		struct ibv_device_attr a;
		struct ibv_port_attr pa;
		union ibv_gid g;
		int k;

		d->verbs = ibv_open_device(list[i]);
		if (!d->verbs)
			continue;
		if (ibv_query_device(d->verbs, &a) || ibv_query_port(d->verbs, 1, &pa)) {
			ibv_close_device(d->verbs);
			continue;
		}
		for (k = 0; k < 2; k++)
			if (!ibv_query_gid(d->verbs, 1, k, &g))
				memcpy(d->gid[k], g.raw, 16);
		d->mtu = pa.active_mtu;
		d->max_resp_res = (uint8_t)(a.max_qp_rd_atom > 255 ? 255 : a.max_qp_rd_atom);
		d->max_init_depth = (uint8_t)(a.max_qp_init_rd_atom > 255 ? 255 : a.max_qp_init_rd_atom);
		d->fd = -1;
		cma_ndev++;
	}
	/* the list stays: each open context points at its device (ibv_get_device_name) */
	if (!cma_ndev) {
		ibv_free_device_list(list);
		cma_ndev = -1;
		errno = ENODEV;
		ret = -1;
	}
out:
	pthread_mutex_unlock(&cma_lock);
	return ret;
}

struct ibv_context **rdma_get_devices(int *num_devices)
{
	struct ibv_context **l;
	int i;

	if (cma_init()) {
		if (num_devices)
			*num_devices = 0;
		return calloc(1, sizeof(*l)); /* an empty list, as rdma-core's with no device */
	}
	l = calloc((size_t)cma_ndev + 1, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < cma_ndev; i++)
		l[i] = cma_devs[i].verbs;
	if (num_devices)
		*num_devices = cma_ndev;
	return l;
}

void rdma_free_devices(struct ibv_context **list)
{
	free(list);
}

/* ---- addresses: IPv4 and IPv6 (the NIC's two GIDs); AF_IB has no meaning on RoCE here */
int cma_addr_gid(const struct sockaddr *sa, uint8_t gid[16])
{
	if (sa && sa->sa_family == AF_INET) {
		memset(gid, 0, 10);
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
		return 0;
	}
	if (sa && sa->sa_family == AF_INET6) {
		memcpy(gid, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
		return 0;
	}
	return cma_err(EAFNOSUPPORT);
}

int cma_is_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return sa->sa_family == AF_INET6 && IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

uint16_t cma_port(const struct sockaddr *sa)
{
	return ntohs(sa->sa_family == AF_INET6 ? ((const struct sockaddr_in6 *)sa)->sin6_port
					       : ((const struct sockaddr_in *)sa)->sin_port);
}

void cma_set_port(struct sockaddr *sa, uint16_t port)
{
	if (sa->sa_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons(port);
}

size_t cma_addr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	       sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : 0;
}

struct cma_dev *cma_dev_of_addr(const struct sockaddr *sa)
{
	uint8_t g[16];
	int i;

	if (cma_addr_gid(sa, g))
		return NULL;
	for (i = 0; i < cma_ndev; i++)
		if (!memcmp(cma_devs[i].gid[0], g, 16) || !memcmp(cma_devs[i].gid[1], g, 16))
			return &cma_devs[i];
	return NULL;
}

void cma_gid_to_addr(const uint8_t *gid, uint16_t port, struct sockaddr_storage *ss)
{
	static const uint8_t v4[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	memset(ss, 0, sizeof(*ss));
	if (!memcmp(gid, v4, 12)) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		memcpy(&s->sin_addr, gid + 12, 4);
		s->sin_port = htons(port);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;

		s->sin6_family = AF_INET6;
		memcpy(&s->sin6_addr, gid, 16);
		s->sin6_port = htons(port);
	}
}

/* under cma_lock: the ID lives on the device. As rdma-core's ucma_get_device: it gets the
 * device's PD, made with the first ID, for QPs and memory of callers who bring none. */
void cma_attach(struct cma_id *p, struct cma_dev *d)
{
	p->dev = d;
	d->refs++;
	if (!d->pd)
		d->pd = ibv_alloc_pd(d->verbs);
	p->id.verbs = d->verbs;
	p->id.port_num = 1;
	p->id.pd = d->pd;
}

/* ---- firmware commands */
int cma_fw_cmd(struct cma_dev *d, uint32_t op, const void *in, size_t inlen, uint32_t *handle)
{
	uint8_t out[RNIC_CMDO_HANDLE_SIZE] = {0};
	int ret = rnicdv_cm_cmd(d->verbs, op, in, inlen, out, sizeof(out));

	if (ret)
		return cma_err(ret == EBUSY ? EADDRINUSE : ret == EHOSTUNREACH ? EHOSTUNREACH : ret);
	if (handle)
		*handle = RNIC_CMDO_HANDLE_HANDLE_GET(out);
	return 0;
}

int cma_fw_id_cmd(struct cma_dev *d, uint32_t op, uint32_t id)
{
	uint8_t in[RNIC_CMDI_HANDLE_SIZE] = {0};

	RNIC_CMDI_HANDLE_HANDLE_SET(in, id);
	return cma_fw_cmd(d, op, in, sizeof(in), NULL);
}

int cma_fw_pdata(struct cma_dev *d, uint32_t id, const uint8_t *data, uint32_t len)
{
	uint8_t in[RNIC_CMDI_CM_PDATA_SIZE];
	uint32_t off = 0;

	do {
		uint32_t n = len - off > RNIC_CMDI_CM_PDATA_DATA_LEN ? RNIC_CMDI_CM_PDATA_DATA_LEN : len - off;

		memset(in, 0, sizeof(in));
		RNIC_CMDI_CM_PDATA_ID_SET(in, id);
		RNIC_CMDI_CM_PDATA_OFFSET_SET(in, off);
		RNIC_CMDI_CM_PDATA_LEN_SET(in, n);
		RNIC_CMDI_CM_PDATA_TOTAL_SET(in, len);
		if (n)
			memcpy(in + RNIC_CMDI_CM_PDATA_DATA_OFF, data + off, n);
		if (cma_fw_cmd(d, RNIC_CMD_CM_PDATA, in, sizeof(in), NULL))
			return -1;
		off += n;
	} while (off < len);
	return 0;
}

static void *dev_thread(void *arg);

/* a firmware CM ID on the device, its events served by the device's thread (under cma_lock) */
int32_t cma_fw_create(struct cma_dev *d, struct cma_id *owner)
{
	uint32_t h = 0;

	if (d->fd < 0) {
		pthread_t t;

		d->fd = rnicdv_cm_event_fd(d->verbs);
		if (d->fd < 0)
			return -1;
		if (pthread_create(&t, NULL, dev_thread, d)) {
			d->fd = -1;
			return cma_err(EAGAIN);
		}
		pthread_detach(t);
	}
	if (cma_fw_cmd(d, RNIC_CMD_CM_CREATE_ID, NULL, 0, &h))
		return -1;
	if (h >= RNIC_MAX_CM_ID) {
		cma_fw_id_cmd(d, RNIC_CMD_CM_DESTROY_ID, h);
		return cma_err(EIO);
	}
	d->ids[h] = owner;
	return (int32_t)h;
}

void cma_fw_destroy(struct cma_dev *d, int32_t *h)
{
	if (*h < 0)
		return;
	cma_fw_id_cmd(d, RNIC_CMD_CM_DESTROY_ID, (uint32_t)*h);
	d->ids[*h] = NULL;
	*h = -1;
}

/* ---- event channels */
struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct cma_channel *c;

	if (cma_init())
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	/* a count of the events queued: a thread blocked in rdma_get_cm_event stays so when the
	 * channel is destroyed under it, as with the kernel's ucma file */
	c->ch.fd = eventfd(0, EFD_CLOEXEC | EFD_SEMAPHORE);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	c->tail = &c->head;
	return &c->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	struct cma_channel *c = (struct cma_channel *)channel;
	int readers;

	pthread_mutex_lock(&cma_lock);
	while (c->head) {
		struct cma_event *e = c->head;

		c->head = e->next;
		free(e);
	}
	c->tail = &c->head;
	readers = c->readers;
	c->dead = 1;
	pthread_mutex_unlock(&cma_lock);
	/* A thread still blocked in rdma_get_cm_event stays blocked, as on a closed ucma file
	 * (rping 44 destroys the channel under its CM thread and exits): the channel is kept for
	 * it, and the last reader that returns frees it. */
	if (readers)
		return;
	close(c->ch.fd);
	free(c);
}

/* under cma_lock */
void cma_queue_event(struct cma_event *e)
{
	struct cma_channel *c = (struct cma_channel *)e->owner->id.channel;
	uint64_t one = 1;

	e->next = NULL;
	*c->tail = e;
	c->tail = &e->next;
	if (write(c->ch.fd, &one, sizeof(one)) != sizeof(one))
		return; /* cannot happen short of 2^64 unread events */
}

/* under cma_lock: drop the queued events that satisfy drop(); their counts stay in the eventfd,
 * and rdma_get_cm_event reads past them */
void cma_unqueue(struct rdma_event_channel *ch, int (*drop)(struct cma_event *, void *), void *arg)
{
	struct cma_channel *c = (struct cma_channel *)ch;
	struct cma_event **pp = &c->head, *e;

	while ((e = *pp)) {
		if (drop(e, arg)) {
			*pp = e->next;
			free(e);
		} else {
			pp = &e->next;
		}
	}
	c->tail = pp;
}

static struct cma_event *new_event(struct cma_id *p, enum rdma_cm_event_type type, int status)
{
	struct cma_event *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->owner = p;
	e->ev.id = &p->id;
	e->ev.event = type;
	e->ev.status = status;
	return e;
}

/* an event the library itself makes (address and route resolution) */
int cma_local_event(struct cma_id *p, enum rdma_cm_event_type type, int status)
{
	struct cma_event *e = new_event(p, type, status);

	if (!e)
		return cma_err(ENOMEM);
	cma_queue_event(e);
	return 0;
}

/* under cma_lock: a reader leaves; it frees a channel destroyed under it */
static void reader_done(struct cma_channel *c)
{
	if (!--c->readers && c->dead) {
		close(c->ch.fd);
		free(c);
	}
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct cma_channel *c = (struct cma_channel *)channel;
	struct cma_event *e = NULL;
	uint64_t n;

	if (!event)
		return cma_err(EINVAL);
	pthread_mutex_lock(&cma_lock);
	c->readers++;
	while (!e) {
		ssize_t r;
		int err;

		pthread_mutex_unlock(&cma_lock);
		r = read(c->ch.fd, &n, sizeof(n));
		err = errno;
		pthread_mutex_lock(&cma_lock);
		if (r != sizeof(n)) {
			/* as rdma-core: O_NONBLOCK and nothing waiting gives EAGAIN */
			reader_done(c);
			pthread_mutex_unlock(&cma_lock);
			return cma_err(err);
		}
		/* a count whose event went with its ID (or channel) is read past */
		e = c->head;
	}
	c->head = e->next;
	if (!c->head)
		c->tail = &c->head;
	if (e->ev.event == RDMA_CM_EVENT_DISCONNECTED)
		e->owner->disc_seen = 1;
	/* as rdma-core's events_reported: destroying or migrating the ID waits for the ack */
	e->acct = e->ev.event == RDMA_CM_EVENT_CONNECT_REQUEST ? to_cma(e->ev.listen_id) : e->owner;
	e->acct->unacked++;
	reader_done(c);
	pthread_mutex_unlock(&cma_lock);
	*event = &e->ev;
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct cma_event *e = (struct cma_event *)event;

	if (!event)
		return cma_err(EINVAL);
	pthread_mutex_lock(&cma_lock);
	if (!--e->acct->unacked)
		pthread_cond_broadcast(&cma_acked);
	pthread_mutex_unlock(&cma_lock);
	free(e);
	return 0;
}

void cma_wait_acked(struct cma_id *p)
{
	while (p->unacked)
		pthread_cond_wait(&cma_acked, &cma_lock);
}

static const char *const event_names[] = {
	"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR", "RDMA_CM_EVENT_ROUTE_RESOLVED",
	"RDMA_CM_EVENT_ROUTE_ERROR", "RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
	"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE", "RDMA_CM_EVENT_REJECTED",
	"RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
	"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR", "RDMA_CM_EVENT_ADDR_CHANGE",
	"RDMA_CM_EVENT_TIMEWAIT_EXIT"};

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	if ((unsigned)event < sizeof(event_names) / sizeof(event_names[0]))
		return event_names[event];
	return "UNKNOWN EVENT";
}

/* A synchronous ID (made without a channel) waits for the event its call starts, as rdma-core's
 * ucma_complete: the event stays in id->event until the next call or destroy. */
int cma_complete(struct cma_id *p)
{
	struct rdma_cm_event *e;

	if (!p->sync)
		return 0;
	if (p->id.event) {
		rdma_ack_cm_event(p->id.event);
		p->id.event = NULL;
	}
	if (rdma_get_cm_event(p->id.channel, &e))
		return -1;
	p->id.event = e;
	if (!e->status)
		return 0;
	if (e->event == RDMA_CM_EVENT_REJECTED)
		return cma_err(ECONNREFUSED);
	return cma_err(e->status < 0 ? -e->status : e->status);
}

/* ---- the firmware's events, dispatched by one thread per device */
static struct cma_id *connect_request(struct cma_dev *d, const uint8_t *ev, struct cma_event **out)
{
	struct cma_id *l = d->ids[RNIC_CM_EVENT_LISTEN_ID_GET(ev) % RNIC_MAX_CM_ID], *c;
	uint32_t fw = RNIC_CM_EVENT_ID_GET(ev);
	const uint8_t *h = ev + RNIC_CM_EVENT_PDATA_OFF;
	struct cma_event *e;
	uint8_t in[RNIC_CMDI_CM_REJECT_SIZE] = {0};

	if (!l || l->state != CMA_LISTEN || h[0] != 0 || (h[1] >> 4 != 4 && h[1] >> 4 != 6) ||
	    RNIC_CM_EVENT_PDATA_LEN_GET(ev) < CMA_HDR_LEN)
		goto refuse;
	c = cma_id_alloc(l->id.channel, l->id.context, l->id.ps, l->id.qp_type);
	if (!c)
		goto refuse;
	e = new_event(c, RDMA_CM_EVENT_CONNECT_REQUEST, 0);
	if (!e) {
		free(c);
		goto refuse;
	}
	cma_attach(c, d);
	c->fw = (int32_t)fw;
	c->state = CMA_REQ_RCVD;
	c->tos = l->tos;
	d->ids[fw] = c;
	/* our address is the one the peer asked for, on the listener's port; the peer's from the header */
	{
		uint8_t g[16] = {[10] = 0xff, [11] = 0xff};
		struct rdma_addr *a = &c->id.route.addr;

		if (h[1] >> 4 == 4)
			memcpy(g + 12, h + 32, 4);
		else
			memcpy(g, h + 20, 16);
		cma_gid_to_addr(g, cma_port(&l->id.route.addr.src_addr), &a->src_storage);
		memcpy(a->addr.ibaddr.sgid.raw, g, 16);
		if (h[1] >> 4 == 4)
			memcpy(g + 12, h + 16, 4);
		else
			memcpy(g, h + 4, 16);
		cma_gid_to_addr(g, (uint16_t)(h[2] << 8 | h[3]), &a->dst_storage);
		memcpy(a->addr.ibaddr.dgid.raw, g, 16);
		a->addr.ibaddr.pkey = 0xffff;
	}
	c->resp_res = RNIC_CM_EVENT_INIT_DEPTH_GET(ev);
	c->init_depth = RNIC_CM_EVENT_RESP_RES_GET(ev);
	cma_conn_of(c, ev);
	e->ev.listen_id = &l->id;
	/* (param.ud starts as param.conn does) */
	e->ev.param.conn.private_data = e->pdata;
	e->ev.param.conn.private_data_len = RNIC_CM_EVENT_PDATA_LEN_GET(ev) - CMA_HDR_LEN;
	memcpy(e->pdata, h + CMA_HDR_LEN, e->ev.param.conn.private_data_len);
	*out = e;
	if (RNIC_CM_EVENT_UD_GET(ev))
		return c;
	e->ev.param.conn.responder_resources = c->resp_res;
	e->ev.param.conn.initiator_depth = c->init_depth;
	e->ev.param.conn.flow_control = 1;
	e->ev.param.conn.retry_count = 7;
	e->ev.param.conn.rnr_retry_count = RNIC_CM_EVENT_RNR_RETRY_GET(ev);
	e->ev.param.conn.srq = RNIC_CM_EVENT_SRQ_GET(ev);
	e->ev.param.conn.qp_num = RNIC_CM_EVENT_REMOTE_QPN_GET(ev);
	*out = e;
	return c;
refuse:
	/* as Linux when no rdma_cm listener takes it: REJ invalid service ID */
	RNIC_CMDI_CM_REJECT_ID_SET(in, fw);
	RNIC_CMDI_CM_REJECT_REASON_SET(in, 8);
	rnicdv_cm_cmd(d->verbs, RNIC_CMD_CM_REJECT, in, sizeof(in), NULL, 0);
	cma_fw_id_cmd(d, RNIC_CMD_CM_DESTROY_ID, fw);
	return NULL;
}

/* a SIDR_REP's answer: where to send (an address handle's attributes), the peer's QPN and Q_Key */
static void ud_established(struct cma_id *p, struct cma_event *e, const uint8_t *ev)
{
	struct rdma_ud_param *u = &e->ev.param.ud;
	const uint8_t *gid = ev + RNIC_CM_EVENT_PEER_GID_OFF;

	memcpy(e->pdata, ev + RNIC_CM_EVENT_PDATA_OFF, CMA_SIDR_REP_PDATA);
	u->private_data = e->pdata;
	u->private_data_len = CMA_SIDR_REP_PDATA;
	u->ah_attr.is_global = 1;
	memcpy(u->ah_attr.grh.dgid.raw, gid, 16);
	u->ah_attr.grh.sgid_index = gid[10] == 0xff && gid[11] == 0xff && !gid[0] ? 0 : 1;
	u->ah_attr.grh.hop_limit = 64;
	u->ah_attr.grh.traffic_class = p->tos;
	u->ah_attr.port_num = 1;
	u->qp_num = RNIC_CM_EVENT_REMOTE_QPN_GET(ev);
	u->qkey = RNIC_CM_EVENT_QKEY_GET(ev);
}

void cma_conn_of(struct cma_id *p, const uint8_t *ev)
{
	p->remote_qpn = RNIC_CM_EVENT_REMOTE_QPN_GET(ev);
	p->remote_psn = RNIC_CM_EVENT_REMOTE_PSN_GET(ev);
	p->local_psn = RNIC_CM_EVENT_LOCAL_PSN_GET(ev);
	p->mtu = RNIC_CM_EVENT_PATH_MTU_GET(ev);
	p->conn_timeout = RNIC_CM_EVENT_ACK_TIMEOUT_GET(ev);
	p->retry_cnt = RNIC_CM_EVENT_RETRY_CNT_GET(ev);
	p->rnr_retry = RNIC_CM_EVENT_RNR_RETRY_GET(ev);
}

/* ESTABLISHED or CONNECT_RESPONSE of the active side: the REP's private data, what the peer granted */
static void rep_event(struct cma_id *p, struct cma_event *e, const uint8_t *ev)
{
	memcpy(e->pdata, ev + RNIC_CM_EVENT_PDATA_OFF, CMA_REP_PDATA);
	e->ev.param.conn.private_data = e->pdata;
	e->ev.param.conn.private_data_len = CMA_REP_PDATA;
	e->ev.param.conn.responder_resources = RNIC_CM_EVENT_RESP_RES_GET(ev);
	e->ev.param.conn.initiator_depth = RNIC_CM_EVENT_INIT_DEPTH_GET(ev);
	e->ev.param.conn.rnr_retry_count = RNIC_CM_EVENT_RNR_RETRY_GET(ev);
	e->ev.param.conn.srq = RNIC_CM_EVENT_SRQ_GET(ev);
	e->ev.param.conn.qp_num = RNIC_CM_EVENT_REMOTE_QPN_GET(ev);
	e->ev.param.conn.flow_control = 1;
	cma_conn_of(p, ev);
	p->init_depth = RNIC_CM_EVENT_INIT_DEPTH_GET(ev);
}

static void dispatch(struct cma_dev *d, const uint8_t *ev)
{
	uint32_t type = RNIC_CM_EVENT_TYPE_GET(ev), fw = RNIC_CM_EVENT_ID_GET(ev);
	struct cma_event *e = NULL;
	struct cma_id *p;

	if (fw >= RNIC_MAX_CM_ID)
		return;
	if (type == RNIC_CM_EV_CONNECT_REQUEST) {
		if (connect_request(d, ev, &e))
			cma_queue_event(e);
		return;
	}
	p = d->ids[fw];
	if (!p)
		return; /* destroyed while the event was on its way */
	switch (type) {
	case RNIC_CM_EV_ESTABLISHED:
		e = new_event(p, RDMA_CM_EVENT_ESTABLISHED, 0);
		if (e && RNIC_CM_EVENT_UD_GET(ev)) {
			ud_established(p, e, ev);
		} else if (e && p->state == CMA_CONNECTING) {
			rep_event(p, e, ev);
		}
		if (p->state == CMA_CONNECTING || p->state == CMA_ACCEPTING)
			p->state = CMA_CONNECTED;
		break;
	case RNIC_CM_EV_CONNECT_RESPONSE:
		/* the REP for a QP the host moves itself; rdma_establish sends the RTU */
		e = new_event(p, RDMA_CM_EVENT_CONNECT_RESPONSE, 0);
		if (e)
			rep_event(p, e, ev);
		p->state = CMA_RESPONDED;
		break;
	case RNIC_CM_EV_REJECTED:
		e = new_event(p, RDMA_CM_EVENT_REJECTED, RNIC_CM_EVENT_REASON_GET(ev));
		if (e) {
			memcpy(e->pdata, ev + RNIC_CM_EVENT_PDATA_OFF, CMA_REJ_PDATA);
			e->ev.param.conn.private_data = e->pdata;
			e->ev.param.conn.private_data_len = CMA_REJ_PDATA;
		}
		p->state = CMA_DEAD;
		break;
	case RNIC_CM_EV_UNREACHABLE:
		/* silence, or a SIDR_REP's status (as rdma_cm's cma_sidr_rep_handler) */
		e = new_event(p, RDMA_CM_EVENT_UNREACHABLE,
			      RNIC_CM_EVENT_REASON_GET(ev) ? RNIC_CM_EVENT_REASON_GET(ev) : -ETIMEDOUT);
		p->state = CMA_DEAD;
		break;
	case RNIC_CM_EV_DISCONNECTED:
		e = new_event(p, RDMA_CM_EVENT_DISCONNECTED, 0);
		p->state = CMA_DISCONNECTED;
		break;
	default:
		return;
	}
	if (e)
		cma_queue_event(e);
}

static void *dev_thread(void *arg)
{
	struct cma_dev *d = arg;
	uint8_t ev[RNIC_CM_EVENT_BYTES], buf[64];
	struct pollfd pf = {.fd = d->fd, .events = POLLIN};

	for (;;) {
		if (poll(&pf, 1, -1) < 0 && errno != EINTR)
			return NULL;
		while (read(d->fd, buf, sizeof(buf)) > 0)
			;
		pthread_mutex_lock(&cma_lock);
		while (!rnicdv_cm_get_event(d->verbs, ev))
			dispatch(d, ev);
		pthread_mutex_unlock(&cma_lock);
	}
}
