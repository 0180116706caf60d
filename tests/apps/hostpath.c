/* The host's fast path, for counting its instructions (make bench runs this under callgrind): an
 * RC QP connected to a second QP of the same NIC (its internal loopback), then ROUNDS times one
 * signaled 8-byte RDMA WRITE (its data inline in the WQE, or named by an SGE) posted by
 * post_one() and its completion taken by poll_one(). The wait for the completion (a completion
 * event) is outside both, so each counts exactly one call.
 *
 *   hostpath ROUNDS DEV inline|sge
 * Prints "hostpath: N writes ok" and exits 0, or names what failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#define CHECK(c)                                                             \
	do {                                                                 \
		if (!(c)) {                                                  \
			fprintf(stderr, "hostpath: %s:%d: %s\n", __FILE__, __LINE__, #c); \
			exit(1);                                             \
		}                                                            \
	} while (0)

static struct ibv_qp *new_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
				     .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	CHECK(qp);
	CHECK(!ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	return qp;
}

static void connect_qp(struct ibv_qp *qp, uint32_t dest, const union ibv_gid *gid)
{
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dest,
				.max_dest_rd_atomic = 1, .min_rnr_timer = 12,
				.ah_attr = {.is_global = 1, .port_num = 1, .grh = {.dgid = *gid, .hop_limit = 64}}};

	CHECK(!ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER));
	m.qp_state = IBV_QPS_RTS;
	m.timeout = 14;
	m.retry_cnt = m.rnr_retry = 7;
	m.max_rd_atomic = 1;
	CHECK(!ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC));
}

/* the two measured calls: kept out of line so that callgrind can count each alone */
__attribute__((noinline)) int post_one(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, wr, &bad);
}

__attribute__((noinline)) int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return ibv_poll_cq(cq, 1, wc);
}

int main(int argc, char **argv)
{
	struct ibv_device **l;
	struct ibv_context *ctx = NULL;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	struct ibv_mr *mr;
	union ibv_gid gid;
	uint64_t *buf = calloc(2, 64);
	int rounds, i, inl;

	if (argc != 4 || (strcmp(argv[3], "inline") && strcmp(argv[3], "sge"))) {
		fprintf(stderr, "usage: hostpath ROUNDS DEV inline|sge\n");
		return 2;
	}
	inl = !strcmp(argv[3], "inline");
	rounds = atoi(argv[1]);
	l = ibv_get_device_list(NULL);
	for (i = 0; l && l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), argv[2]))
			ctx = ibv_open_device(l[i]);
	CHECK(ctx && buf);
	ch = ibv_create_comp_channel(ctx);
	pd = ibv_alloc_pd(ctx);
	CHECK(ch && pd);
	cq = ibv_create_cq(ctx, 64, NULL, ch, 0);
	mr = ibv_reg_mr(pd, buf, 128, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(cq && mr && !ibv_query_gid(ctx, 1, 0, &gid));
	a = new_qp(pd, cq);
	b = new_qp(pd, cq);
	connect_qp(a, b->qp_num, &gid);
	connect_qp(b, a->qp_num, &gid);
	for (i = 0; i < rounds; i++) {
		struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 8, .lkey = mr->lkey};
		struct ibv_send_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
					 .wr = {.rdma = {.remote_addr = (uintptr_t)(buf + 8), .rkey = mr->rkey}}};
		struct ibv_cq *ev_cq;
		struct ibv_wc wc;
		void *ev_ctx;

		buf[0] = (uint64_t)i;
		CHECK(!ibv_req_notify_cq(cq, 0));
		CHECK(!post_one(a, &wr));
		CHECK(!ibv_get_cq_event(ch, &ev_cq, &ev_ctx)); /* the CQE is there: poll_one takes it */
		ibv_ack_cq_events(cq, 1);
		CHECK(poll_one(cq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == (uint64_t)i);
		CHECK(buf[8] == (uint64_t)i); /* the WRITE landed (remote_addr: buf + 8 words) */
	}
	printf("hostpath: %d writes ok\n", rounds);
	return 0;
}
