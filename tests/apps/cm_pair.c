/* Connections made by the NIC's firmware (its CM on QP1) between two contexts, through the
 * direct-verbs CM commands (rnic/rnicdv.h): a server context listens, a client context connects
 * with private data, the server accepts with its buffer's address and rkey as private data, the
 * client RDMA WRITEs into it, disconnects; ROUNDS times, then a connect to a port nobody listens
 * on is rejected. The devices may be two NICs on a link or one NIC twice (internal loopback).
 *
 *   cm_pair ROUNDS SERVER_DEV CLIENT_DEV
 * Prints "cm_pair: N connections, ... ok" and exits 0, or names what failed. */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include "rnic/rnicdv.h"
#include "rnic_spec.h"

#define SID 0x01064e20ull /* RDMA_PS_TCP << 16 | port 20000 */
#define LEN 4096

#define CHECK(c)                                                                  \
	do {                                                                      \
		if (!(c)) {                                                       \
			fprintf(stderr, "cm_pair: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			exit(1);                                                  \
		}                                                                 \
	} while (0)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	uint8_t gid[16];
};

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = NULL;
	int i;

	for (i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			c = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	CHECK(c);
	return c;
}

/* an RC QP in INIT, as rdma_create_qp leaves it */
static void new_qp(struct side *s)
{
	struct ibv_qp_init_attr a = {0};
	struct ibv_qp_attr m = {0};

	a.send_cq = a.recv_cq = s->cq;
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = a.cap.max_recv_wr = 16;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	s->qp = ibv_create_qp(s->pd, &a);
	CHECK(s->qp);
	m.qp_state = IBV_QPS_INIT;
	m.port_num = 1;
	m.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
	CHECK(ibv_modify_qp(s->qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == 0);
}

static void setup(struct side *s, const char *dev)
{
	union ibv_gid g;

	s->ctx = open_dev(dev);
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	s->buf = calloc(1, LEN);
	CHECK(s->pd && s->cq && s->buf);
	s->mr = ibv_reg_mr(s->pd, s->buf, LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(s->mr);
	CHECK(ibv_query_gid(s->ctx, 1, 0, &g) == 0);
	memcpy(s->gid, g.raw, 16);
}

static uint32_t cm_cmd(struct side *s, uint32_t op, const uint8_t *in, size_t inlen)
{
	uint8_t out[RNIC_CMDO_HANDLE_SIZE] = {0};
	int ret = rnicdv_cm_cmd(s->ctx, op, in, inlen, out, sizeof(out));

	if (ret) {
		fprintf(stderr, "cm_pair: command %u: %s\n", op, strerror(ret));
		exit(1);
	}
	return RNIC_CMDO_HANDLE_HANDLE_GET(out);
}

static uint32_t create_id(struct side *s)
{
	return cm_cmd(s, RNIC_CMD_CM_CREATE_ID, NULL, 0);
}

static void id_cmd(struct side *s, uint32_t op, uint32_t id)
{
	uint8_t in[RNIC_CMDI_HANDLE_SIZE] = {0};

	RNIC_CMDI_HANDLE_HANDLE_SET(in, id);
	cm_cmd(s, op, in, sizeof(in));
}

static void pdata(struct side *s, uint32_t id, const void *d, uint32_t len)
{
	uint8_t in[RNIC_CMDI_CM_PDATA_SIZE] = {0};

	RNIC_CMDI_CM_PDATA_ID_SET(in, id);
	RNIC_CMDI_CM_PDATA_LEN_SET(in, len);
	RNIC_CMDI_CM_PDATA_TOTAL_SET(in, len);
	memcpy(in + RNIC_CMDI_CM_PDATA_DATA_OFF, d, len);
	cm_cmd(s, RNIC_CMD_CM_PDATA, in, sizeof(in));
}

/* the next CM event of the context, within 60 s */
static void next_event(struct side *s, uint8_t *ev, uint32_t type)
{
	int i;

	for (i = 0; i < 600000; i++) {
		if (rnicdv_cm_get_event(s->ctx, ev) == 0) {
			if (RNIC_CM_EVENT_TYPE_GET(ev) != type) {
				fprintf(stderr, "cm_pair: event %u, expected %u\n", RNIC_CM_EVENT_TYPE_GET(ev), type);
				exit(1);
			}
			return;
		}
		usleep(100);
	}
	fprintf(stderr, "cm_pair: no event %u\n", type);
	exit(1);
}

static void connect_to(struct side *cl, uint32_t id, const uint8_t *dgid, uint64_t sid)
{
	uint8_t in[RNIC_CMDI_CM_CONNECT_SIZE] = {0};

	RNIC_CMDI_CM_CONNECT_ID_SET(in, id);
	RNIC_CMDI_CM_CONNECT_QPN_SET(in, cl->qp->qp_num);
	RNIC_CMDI_CM_CONNECT_SERVICE_ID_SET(in, sid);
	memcpy(in + RNIC_CMDI_CM_CONNECT_DGID_OFF, dgid, 16);
	RNIC_CMDI_CM_CONNECT_RESP_RES_SET(in, 1);
	RNIC_CMDI_CM_CONNECT_INIT_DEPTH_SET(in, 1);
	RNIC_CMDI_CM_CONNECT_RETRY_CNT_SET(in, 7);
	RNIC_CMDI_CM_CONNECT_RNR_RETRY_SET(in, 7);
	RNIC_CMDI_CM_CONNECT_RESP_TIMEOUT_SET(in, 12); /* 17 ms of simulated time */
	RNIC_CMDI_CM_CONNECT_MAX_RETRIES_SET(in, 5);
	RNIC_CMDI_CM_CONNECT_ACK_TIMEOUT_SET(in, 14);
	RNIC_CMDI_CM_CONNECT_PATH_MTU_SET(in, IBV_MTU_1024);
	cm_cmd(cl, RNIC_CMD_CM_CONNECT, in, sizeof(in));
}

int main(int argc, char **argv)
{
	struct side sv, cl;
	uint8_t ev[RNIC_CM_EVENT_BYTES], in[RNIC_CMDI_CM_ACCEPT_SIZE];
	uint32_t listen_id, rounds, r;

	if (argc != 4) {
		fprintf(stderr, "usage: cm_pair ROUNDS SERVER_DEV CLIENT_DEV\n");
		return 2;
	}
	rounds = (uint32_t)atoi(argv[1]);
	setup(&sv, argv[2]);
	setup(&cl, argv[3]);
	listen_id = create_id(&sv);
	{
		uint8_t l[RNIC_CMDI_CM_LISTEN_SIZE] = {0};

		RNIC_CMDI_CM_LISTEN_ID_SET(l, listen_id);
		RNIC_CMDI_CM_LISTEN_SERVICE_ID_SET(l, SID);
		cm_cmd(&sv, RNIC_CMD_CM_LISTEN, l, sizeof(l));
		CHECK(rnicdv_cm_cmd(sv.ctx, RNIC_CMD_CM_LISTEN, l, sizeof(l), NULL, 0) == EINVAL); /* not idle */
	}
	for (r = 0; r < rounds; r++) {
		char hello[32];
		uint8_t reply[16];
		uint32_t cid, sid_new, rkey;
		uint64_t addr;
		struct ibv_sge sge;
		struct ibv_send_wr wr = {0}, *bad;
		struct ibv_wc wc;
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr qi;
		int i;

		new_qp(&sv);
		new_qp(&cl);
		cid = create_id(&cl);
		snprintf(hello, sizeof(hello), "hello %u", r);
		pdata(&cl, cid, hello, sizeof(hello));
		connect_to(&cl, cid, sv.gid, SID);
		next_event(&sv, ev, RNIC_CM_EV_CONNECT_REQUEST);
		CHECK(RNIC_CM_EVENT_LISTEN_ID_GET(ev) == listen_id && RNIC_CM_EVENT_REMOTE_QPN_GET(ev) == cl.qp->qp_num);
		CHECK(!memcmp(ev + RNIC_CM_EVENT_PDATA_OFF, hello, sizeof(hello)));
		CHECK(!memcmp(ev + RNIC_CM_EVENT_PEER_GID_OFF, cl.gid, 16));
		sid_new = RNIC_CM_EVENT_ID_GET(ev);
		/* the reply: where to write */
		addr = (uintptr_t)sv.buf;
		rkey = sv.mr->rkey;
		memcpy(reply, &addr, 8);
		memcpy(reply + 8, &rkey, 4);
		memset(reply + 12, 0, 4);
		pdata(&sv, sid_new, reply, sizeof(reply));
		memset(in, 0, sizeof(in));
		RNIC_CMDI_CM_ACCEPT_ID_SET(in, sid_new);
		RNIC_CMDI_CM_ACCEPT_QPN_SET(in, sv.qp->qp_num);
		RNIC_CMDI_CM_ACCEPT_RESP_RES_SET(in, 1);
		RNIC_CMDI_CM_ACCEPT_INIT_DEPTH_SET(in, 1);
		RNIC_CMDI_CM_ACCEPT_RNR_RETRY_SET(in, 7);
		cm_cmd(&sv, RNIC_CMD_CM_ACCEPT, in, sizeof(in));
		CHECK(sv.qp->state == IBV_QPS_RTS); /* the firmware moved it; the library knows */
		next_event(&cl, ev, RNIC_CM_EV_ESTABLISHED);
		CHECK(RNIC_CM_EVENT_REMOTE_QPN_GET(ev) == sv.qp->qp_num && cl.qp->state == IBV_QPS_RTS);
		memcpy(&addr, ev + RNIC_CM_EVENT_PDATA_OFF, 8);
		memcpy(&rkey, ev + RNIC_CM_EVENT_PDATA_OFF + 8, 4);
		CHECK(ibv_query_qp(cl.qp, &qa, IBV_QP_STATE | IBV_QP_DEST_QPN, &qi) == 0);
		CHECK(qa.qp_state == IBV_QPS_RTS && qa.dest_qp_num == sv.qp->qp_num);
		next_event(&sv, ev, RNIC_CM_EV_ESTABLISHED);
		/* data over the new connection */
		for (i = 0; i < LEN; i++)
			cl.buf[i] = (uint8_t)(i * 7 + r);
		sge.addr = (uintptr_t)cl.buf;
		sge.length = LEN;
		sge.lkey = cl.mr->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.rdma.remote_addr = addr;
		wr.wr.rdma.rkey = rkey;
		CHECK(ibv_post_send(cl.qp, &wr, &bad) == 0);
		for (i = 0; i < 600000 && ibv_poll_cq(cl.cq, 1, &wc) == 0; i++)
			usleep(100);
		CHECK(wc.status == IBV_WC_SUCCESS);
		/* the server process sees the data once its own connection to the NIC has carried the
		 * DMA writes: the client's completion does not wait for that */
		for (i = 0; i < 100000 && memcmp(sv.buf, cl.buf, LEN); i++)
			usleep(100);
		CHECK(!memcmp(sv.buf, cl.buf, LEN));
		/* the client hangs up */
		id_cmd(&cl, RNIC_CMD_CM_DISCONNECT, cid);
		CHECK(cl.qp->state == IBV_QPS_ERR);
		next_event(&sv, ev, RNIC_CM_EV_DISCONNECTED);
		next_event(&cl, ev, RNIC_CM_EV_DISCONNECTED);
		id_cmd(&sv, RNIC_CMD_CM_DISCONNECT, sid_new);
		CHECK(sv.qp->state == IBV_QPS_ERR);
		id_cmd(&cl, RNIC_CMD_CM_DESTROY_ID, cid);
		id_cmd(&sv, RNIC_CMD_CM_DESTROY_ID, sid_new);
		CHECK(ibv_destroy_qp(cl.qp) == 0 && ibv_destroy_qp(sv.qp) == 0);
		while (ibv_poll_cq(cl.cq, 1, &wc) > 0 || ibv_poll_cq(sv.cq, 1, &wc) > 0)
			; /* flushed work */
	}
	/* a port nobody listens on */
	{
		uint32_t cid = create_id(&cl);

		new_qp(&cl);
		connect_to(&cl, cid, sv.gid, SID + 1);
		next_event(&cl, ev, RNIC_CM_EV_REJECTED);
		CHECK(RNIC_CM_EVENT_REASON_GET(ev) == 8);
		id_cmd(&cl, RNIC_CMD_CM_DESTROY_ID, cid);
		CHECK(ibv_destroy_qp(cl.qp) == 0);
	}
	id_cmd(&sv, RNIC_CMD_CM_DESTROY_ID, listen_id);
	printf("cm_pair: %u connections, %u KiB written, 1 rejected: ok\n", rounds, rounds * LEN / 1024);
	return 0;
}
