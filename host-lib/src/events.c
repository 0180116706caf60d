/* Events: the context's MSI-X vector wakes a thread that reads the event queue; completion
 * events go to the CQ's completion channel (ibv_get_cq_event), asynchronous ones (IBTA 11.6.3) to
 * ibv_get_async_event. Both are file descriptors an application may poll(), as with rdma-core. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rnic/rnicdv.h"
#include "rnic_verbs.h"

#define CHANNEL_Q 1024 /* completion events not yet read from a channel */

struct rnic_channel {
	struct ibv_comp_channel ibv;
	int wfd;                  /* one byte per event; the events themselves are in q */
	pthread_mutex_t lock;
	struct rnic_cq *q[CHANNEL_Q];
	unsigned head, tail;
};

static void wake(int fd)
{
	char b = 0;

	/* a full pipe already holds more wake-ups than there are events to read */
	if (write(fd, &b, 1) < 0 && errno != EAGAIN)
		return;
}

static void comp_event(struct rnic_context *c, uint32_t cqn)
{
	struct rnic_cq *cq = cqn < RNIC_MAX_CQ ? c->cqs[cqn] : NULL;
	struct rnic_channel *ch;

	c->comp_events++;
	if (!cq || !cq->ex.channel)
		return;
	ch = (struct rnic_channel *)cq->ex.channel;
	pthread_mutex_lock(&ch->lock);
	if (ch->tail - ch->head < CHANNEL_Q) {
		ch->q[ch->tail++ % CHANNEL_Q] = cq;
		wake(ch->wfd);
	}
	pthread_mutex_unlock(&ch->lock);
}

static void async_event(struct rnic_context *c, uint32_t type, uint32_t data)
{
	struct rnic_qp *qp = type == RNIC_EQE_TYPE_QP_FATAL ? rnic_qp_get(c, data) : NULL;
	struct ibv_async_event *e;

	if (c->async_tail - c->async_head >= ASYNC_Q)
		return;
	e = &c->async[c->async_tail % ASYNC_Q];
	memset(e, 0, sizeof(*e));
	if (qp) {
		e->event_type = IBV_EVENT_QP_FATAL;
		e->element.qp = &qp->ex.qp_base;
		qp->ex.qp_base.state = IBV_QPS_ERR;
		qp->attr.qp_state = IBV_QPS_ERR;
	} else if (type == RNIC_EQE_TYPE_SRQ_LIMIT && data < RNIC_MAX_SRQ && c->srqs[data]) {
		e->event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
		e->element.srq = &c->srqs[data]->ibv;
		c->srqs[data]->limit = 0; /* the limit fires once: armed again by ibv_modify_srq */
	} else if (type == RNIC_EQE_TYPE_CQ_ERR && data < RNIC_MAX_CQ && c->cqs[data]) {
		e->event_type = IBV_EVENT_CQ_ERR;
		e->element.cq = cq_ibv(c->cqs[data]);
	} else if (type == RNIC_EQE_TYPE_PORT_ACTIVE) {
		e->event_type = IBV_EVENT_PORT_ACTIVE;
		e->element.port_num = 1;
	} else {
		return;
	}
	c->async_tail++;
	wake(c->async_wfd);
}

static void eq_event(void *arg, uint32_t type, uint32_t data)
{
	struct rnic_context *c = arg;

	if (type == RNIC_EQE_TYPE_COMP)
		comp_event(c, data);
	else
		async_event(c, type, data);
}

int rnic_events_poll(struct rnic_context *c)
{
	int n;

	pthread_mutex_lock(&c->eq_lock);
	n = rnic_eq_poll(&c->dev, eq_event, c);
	pthread_mutex_unlock(&c->eq_lock);
	return n;
}

/* the interrupt handler: one wake-up per MSI-X message of the context's vector */
static void *event_thread(void *arg)
{
	struct rnic_context *c = arg;
	uint64_t v;

	while (read(c->irq_fd, &v, sizeof(v)) == sizeof(v) && !__atomic_load_n(&c->stopping, __ATOMIC_ACQUIRE)) {
		int cm = __atomic_load_n(&c->cm_fd[1], __ATOMIC_ACQUIRE);

		rnic_events_poll(c);
		if (cm >= 0)
			wake(cm); /* the vector is shared: the CM's reader looks at its ring itself */
	}
	return NULL;
}

int rnic_events_start(struct rnic_context *c)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		return errno;
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	c->cm_fd[0] = c->cm_fd[1] = -1;
	c->vctx.context.async_fd = p[0];
	c->async_wfd = p[1];
	if (pthread_create(&c->event_thread, NULL, event_thread, c)) {
		close(p[0]);
		close(p[1]);
		return EAGAIN;
	}
	return 0;
}

void rnic_events_stop(struct rnic_context *c)
{
	uint64_t one = 1;

	__atomic_store_n(&c->stopping, 1, __ATOMIC_RELEASE);
	if (write(c->irq_fd, &one, sizeof(one)) != sizeof(one))
		pthread_cancel(c->event_thread);
	pthread_join(c->event_thread, NULL);
	close(c->vctx.context.async_fd);
	close(c->async_wfd);
	if (c->cm_fd[0] >= 0) {
		close(c->cm_fd[0]);
		close(c->cm_fd[1]);
	}
}

/* ---- asynchronous events */
int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
	struct rnic_context *c = to_ctx(context);
	char b;

	for (;;) {
		if (read(context->async_fd, &b, 1) != 1)
			return -1; /* as rdma-core: the read failed (O_NONBLOCK and nothing pending ...) */
		pthread_mutex_lock(&c->eq_lock);
		if (c->async_head != c->async_tail) {
			*event = c->async[c->async_head++ % ASYNC_Q];
			pthread_mutex_unlock(&c->eq_lock);
			return 0;
		}
		pthread_mutex_unlock(&c->eq_lock);
	}
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	(void)event; /* nothing waits for it: objects are not freed behind the application's back */
}

int rnicdv_poll_events(struct ibv_context *context)
{
	struct rnic_context *c = to_ctx(context);
	int n;

	rnic_events_poll(c);
	pthread_mutex_lock(&c->eq_lock);
	n = (int)c->comp_events;
	c->comp_events = 0;
	pthread_mutex_unlock(&c->eq_lock);
	return n;
}

/* ---- completion channels */
struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct rnic_channel *ch = calloc(1, sizeof(*ch));
	int p[2];

	if (!ch) {
		errno = ENOMEM;
		return NULL;
	}
	if (pipe2(p, O_CLOEXEC)) {
		free(ch);
		return NULL;
	}
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	ch->ibv.context = context;
	ch->ibv.fd = p[0];
	ch->wfd = p[1];
	pthread_mutex_init(&ch->lock, NULL);
	return &ch->ibv;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct rnic_channel *ch = (struct rnic_channel *)channel;

	if (__atomic_load_n(&channel->refcnt, __ATOMIC_ACQUIRE))
		return EBUSY; /* CQs still use it */
	close(ch->ibv.fd);
	close(ch->wfd);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
	return 0;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct rnic_channel *ch = (struct rnic_channel *)channel;
	char b;

	for (;;) {
		struct rnic_cq *e = NULL;

		if (read(channel->fd, &b, 1) != 1)
			return -1;
		pthread_mutex_lock(&ch->lock);
		while (!e && ch->head != ch->tail)
			e = ch->q[ch->head++ % CHANNEL_Q]; /* NULL: its CQ was destroyed */
		if (e) {
			pthread_mutex_lock(&e->ex.mutex);
			e->events++;
			pthread_mutex_unlock(&e->ex.mutex);
		}
		pthread_mutex_unlock(&ch->lock);
		if (e) {
			*cq = cq_ibv(e);
			*cq_context = e->ex.cq_context;
			return 0;
		}
	}
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_broadcast(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

/* A destroyed CQ's events still in its channel are dropped (as the kernel does). */
void rnic_channel_forget(struct rnic_cq *cq)
{
	struct rnic_channel *ch = (struct rnic_channel *)cq->ex.channel;
	unsigned i;

	pthread_mutex_lock(&ch->lock);
	for (i = ch->head; i != ch->tail; i++)
		if (ch->q[i % CHANNEL_Q] == cq)
			ch->q[i % CHANNEL_Q] = NULL;
	pthread_mutex_unlock(&ch->lock);
}
