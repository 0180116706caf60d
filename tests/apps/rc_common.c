/* The RC test programs' common part: see rc_common.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rnic/rnicdv.h"

#include "rc_common.h"

struct side A, B;
enum ibv_mtu mtu = IBV_MTU_1024;
unsigned ack_timeout = 14;
int gid_index;
int max_dest_rd = 8;
int failures;
uint32_t rng = 1;

void die(const char *what, int err)
{
	printf("FAIL %s: %s\n", what, strerror(err));
	exit(1);
}

void open_side(struct side *s, const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	if (!list)
		die("ibv_get_device_list", errno);
	for (i = 0; list[i] && strcmp(ibv_get_device_name(list[i]), name); i++)
		;
	if (!list[i])
		die(name, ENODEV);
	s->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!s->ctx)
		die("ibv_open_device", errno);
	s->pd = ibv_alloc_pd(s->ctx);
	s->mem = calloc(1, REGION + 2 * GUARD);
	if (!s->pd || !s->mem)
		die("alloc", ENOMEM);
	s->buf = s->mem + GUARD;
	s->mr = ibv_reg_mr(s->pd, s->buf, REGION, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	s->cq = ibv_create_cq(s->ctx, 4096, NULL, NULL, 0);
	if (!s->mr || !s->cq)
		die("reg_mr/create_cq", errno);
	if (ibv_query_gid(s->ctx, 1, gid_index, &s->gid))
		die("ibv_query_gid", EINVAL);
}

struct ibv_qp *try_qp(struct side *s, uint32_t wr, uint32_t nsge, uint32_t inl)
{
	struct ibv_qp_init_attr init = {0};

	init.send_cq = init.recv_cq = s->cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = init.cap.max_recv_wr = wr;
	init.cap.max_send_sge = init.cap.max_recv_sge = nsge;
	init.cap.max_inline_data = inl;
	return ibv_create_qp(s->pd, &init);
}

struct ibv_qp *make_qp(struct side *s)
{
	struct ibv_qp *qp = try_qp(s, 64, 3, 64);

	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

/* RESET -> INIT -> RTR -> RTS toward peer QP pq */
void connect_qp(struct ibv_qp *qp, const struct side *peer, const struct ibv_qp *pq, int rnr_retry,
		       int access)
{
	struct ibv_qp_attr a;
	int ret, rc;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	if ((ret = ibv_modify_qp(qp, &a, IBV_QP_STATE)))
		die("modify to RESET", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = access;
	if ((ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)))
		die("modify to INIT", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = pq->qp_num;
	a.rq_psn = (0xfffff0 + pq->qp_num) & 0xffffff; /* near the 24-bit wrap */
	a.max_dest_rd_atomic = (uint8_t)max_dest_rd;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.traffic_class = TCLASS;
	a.ah_attr.grh.sgid_index = (uint8_t)gid_index;
	rc = qp->qp_type == IBV_QPT_RC;
	if ((ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				 IBV_QP_RQ_PSN | (rc ? IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER : 0))))
		die("modify to RTR", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = (0xfffff0 + qp->qp_num) & 0xffffff;
	a.timeout = (uint8_t)ack_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = (uint8_t)rnr_retry;
	a.max_rd_atomic = 8;
	if ((ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				 (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0))))
		die("modify to RTS", ret);
}

void connect_pair(int i, int rnr_retry)
{
	connect_qp(A.qp[i], &B, B.qp[i], rnr_retry, ALL_ACCESS);
	connect_qp(B.qp[i], &A, A.qp[i], 7, ALL_ACCESS);
}


/* QPs [from, to) of both sides, each side's commands from a thread of its own: the two NICs'
 * firmware work at once, and a run of thousands of pairs takes half the time to set up. */
struct pairs_job {
	struct side *s, *peer;
	int from, to, connect;
};

static void *pairs_side(void *arg)
{
	struct pairs_job *j = arg;
	int i;

	for (i = j->from; i < j->to; i++) {
		if (j->connect)
			connect_qp(j->s->qp[i], j->peer, j->peer->qp[i], 7, ALL_ACCESS);
		else
			j->s->qp[i] = make_qp(j->s);
	}
	return NULL;
}

void new_pairs(int from, int to)
{
	struct pairs_job ja = {&A, &B, from, to, 0}, jb = {&B, &A, from, to, 0};
	pthread_t t;

	for (; ja.connect < 2; ja.connect++, jb.connect++) {
		if (pthread_create(&t, NULL, pairs_side, &ja))
			die("pthread_create", EAGAIN);
		pairs_side(&jb);
		pthread_join(t, NULL);
	}
}

/* QP i of A and of B, made and connected to each other */
void new_pair(int i)
{
	new_pairs(i, i + 1);
}

/* One completion from s's CQ */
int poll1(struct side *s, struct ibv_wc *wc, int secs)
{
	time_t start = time(NULL);

	/* an empty CQ polled again and again puts the poller to sleep in the library (on the
	 * simulator's bus, until the NIC next writes host memory): the simulators keep the processor */
	while (ibv_poll_cq(s->cq, 1, wc) == 0) {
		if (time(NULL) - start > secs)
			return 0;
	}
	return 1;
}

void fill(uint8_t *p, uint32_t n, uint32_t seed)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed * 2654435761u + i * 131 + (i >> 8));
}

struct ibv_sge sge(struct side *s, uint32_t off, uint32_t len)
{
	return (struct ibv_sge){(uintptr_t)(s->buf + off), len, s->mr->lkey};
}

int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, struct ibv_sge *sg, int nsge,
		uint64_t raddr, uint32_t rkey, int flags)
{
	struct ibv_send_wr wr = {0}, *bad;

	wr.wr_id = id;
	wr.opcode = op;
	wr.sg_list = sg;
	wr.num_sge = nsge;
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	wr.imm_data = htonl(0x1234abcd ^ (uint32_t)id);
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

int post_recv(struct ibv_qp *qp, uint64_t id, struct ibv_sge *sg, int nsge)
{
	struct ibv_recv_wr wr = {0}, *bad;

	wr.wr_id = id;
	wr.sg_list = sg;
	wr.num_sge = nsge;
	return ibv_post_recv(qp, &wr, &bad);
}

/* the data of a completed request reaches the peer's memory on its own path: look again briefly */
int settle(const uint8_t *a, const uint8_t *b, uint32_t n)
{
	int t;

	for (t = 0; t < 2000 && memcmp(a, b, n); t++)
		usleep(1000);
	return !memcmp(a, b, n);
}
