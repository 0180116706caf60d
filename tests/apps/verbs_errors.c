/* Bad verb arguments get the errno rdma-core returns, and bad keys in work requests complete
 * with the matching status, through the whole system (host library, firmware, kernels).
 *
 *   verbs_errors DEV_A DEV_B     (two NICs on one link)
 *
 * Prints "N passed, N failed"; exits non-zero on a failure. */
#include <errno.h>
#include <poll.h>
#include <infiniband/verbs.h>
#include <rnic/rnicdv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed, failed;

#define CHECK(c)                                                               \
	do {                                                                   \
		if (c) {                                                       \
			passed++;                                              \
		} else {                                                       \
			failed++;                                              \
			printf("FAIL line %d: %s (errno %d)\n", __LINE__, #c, errno); \
		}                                                              \
	} while (0)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
	union ibv_gid gid;
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
	if (!c) {
		printf("cannot open %s\n", name);
		exit(1);
	}
	return c;
}

static struct ibv_qp *make_qp(struct side *s, enum ibv_qp_type type, uint32_t sge, uint32_t inl)
{
	struct ibv_qp_init_attr a = {0};

	a.send_cq = a.recv_cq = s->cq;
	a.qp_type = type;
	a.cap.max_send_wr = 16;
	a.cap.max_recv_wr = 1;
	a.cap.max_send_sge = sge;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = inl;
	return ibv_create_qp(s->pd, &a);
}

static int to_rts(struct side *s, struct side *peer)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int post_write(struct side *s, uint32_t lkey, uint32_t rkey, uint64_t raddr, uint64_t wr_id)
{
	struct ibv_sge sge = {(uintptr_t)s->buf, 64, lkey};
	struct ibv_send_wr wr = {0}, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

static int wait_wc(struct side *s, struct ibv_wc *wc)
{
	int i;

	for (i = 0; i < 200000; i++) {
		if (ibv_poll_cq(s->cq, 1, wc) == 1)
			return 0;
		usleep(50);
	}
	return -1;
}

static void setup(struct side *s, const char *name)
{
	s->ctx = open_dev(name);
	s->pd = ibv_alloc_pd(s->ctx);
	s->buf = calloc(1, 8192);
	s->mr = ibv_reg_mr(s->pd, s->buf, 8192, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	s->cq = ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
	s->qp = make_qp(s, IBV_QPT_RC, 1, 0);
	ibv_query_gid(s->ctx, 1, 0, &s->gid);
	if (!s->pd || !s->mr || !s->cq || !s->qp) {
		printf("set-up failed: %s\n", strerror(errno));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct side a, b;
	struct ibv_send_wr wr = {0}, *bad = NULL;
	struct ibv_qp_attr attr;
	struct ibv_wc wc;
	struct ibv_qp *qp;
	char big[128] = {0};
	struct ibv_sge sge = {(uintptr_t)big, sizeof(big), 0};

	if (argc != 3)
		return 2;
	setup(&a, argv[1]);
	setup(&b, argv[2]);

	/* what rdma-core reports: the extended port count, a UD QP's Q_Key, a usable command fd */
	{
		struct ibv_device_attr_ex dx;
		struct ibv_qp_init_attr ia;
		struct ibv_qp *ud = make_qp(&a, IBV_QPT_UD, 1, 0);
		struct ibv_qp_attr q = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1234567};
		int fd = dup(a.ctx->cmd_fd);

		CHECK(ibv_query_device_ex(a.ctx, NULL, &dx) == 0 &&
		      dx.phys_port_cnt_ex == dx.orig_attr.phys_port_cnt && dx.phys_port_cnt_ex == 1);
		CHECK(ud && ibv_modify_qp(ud, &q, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY) == 0);
		memset(&q, 0, sizeof(q));
		CHECK(ud && ibv_query_qp(ud, &q, IBV_QP_QKEY, &ia) == 0 && q.qkey == 0x1234567);
		CHECK(ud && ibv_destroy_qp(ud) == 0);
		CHECK(fd >= 0 && close(fd) == 0);
	}

	/* constructors: NULL and errno */
	errno = 0;
	CHECK(!ibv_reg_mr(a.pd, a.buf, 0, IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_reg_mr(a.pd, a.buf, 64, IBV_ACCESS_MW_BIND) && errno == EOPNOTSUPP); /* no memory windows */
	CHECK(ibv_dereg_mr(ibv_reg_mr(a.pd, a.buf, 64, IBV_ACCESS_RELAXED_ORDERING)) == 0); /* optional: ignored */
	errno = 0;
	CHECK(!ibv_reg_mr(a.pd, a.buf, 64, IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_create_cq(a.ctx, 0, NULL, NULL, 0) && errno == EINVAL);
	errno = 0;
	CHECK(!ibv_create_cq(a.ctx, 1 << 20, NULL, NULL, 0) && errno == EINVAL);
	errno = 0;
	CHECK(!make_qp(&a, IBV_QPT_RC, 5, 0) && errno == EINVAL);
	errno = 0;
	CHECK(!make_qp(&a, IBV_QPT_RC, 1, 65) && errno == EINVAL);

	/* modify_qp: the IBTA state table, positive errno */
	qp = make_qp(&a, IBV_QPT_RC, 1, 0);
	CHECK(qp != NULL);
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	CHECK(ibv_modify_qp(qp, &attr, IBV_QP_STATE) == EINVAL);
	attr.qp_state = IBV_QPS_INIT;
	CHECK(ibv_modify_qp(qp, &attr, IBV_QP_STATE) == EINVAL); /* INIT needs port, pkey, access */
	attr.port_num = 2;
	CHECK(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
	      EINVAL);

	/* post_send: bad work requests come back with bad_wr */
	sge.lkey = a.mr->lkey;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	CHECK(ibv_post_send(qp, &wr, &bad) == EINVAL && bad == &wr); /* QP not in RTS */
	CHECK(ibv_destroy_qp(qp) == 0);

	/* resources in use */
	CHECK(ibv_dealloc_pd(a.pd) == EBUSY);
	CHECK(ibv_destroy_cq(a.cq) == EBUSY);

	CHECK(to_rts(&a, &b) == 0 && to_rts(&b, &a) == 0);
	bad = NULL;
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	CHECK(ibv_post_send(a.qp, &wr, &bad) == EINVAL && bad == &wr);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_INLINE;
	CHECK(ibv_post_send(a.qp, &wr, &bad) == EINVAL); /* 128 > max_inline_data */
	{
		/* SGE lengths whose 32-bit sum wraps below max_inline_data */
		struct ibv_sge two[2] = {{(uintptr_t)a.buf, 0xffffffffu, a.mr->lkey}, {(uintptr_t)a.buf, 2, a.mr->lkey}};
		struct ibv_send_wr w2 = wr;
		struct side t = a;

		t.qp = make_qp(&a, IBV_QPT_RC, 2, 64);
		CHECK(t.qp && to_rts(&t, &b) == 0);
		w2.sg_list = two;
		w2.num_sge = 2;
		CHECK(ibv_post_send(t.qp, &w2, &bad) == EINVAL && bad == &w2);
		CHECK(ibv_destroy_qp(t.qp) == 0);
	}

	/* an armed CQ raises one completion event */
	CHECK(ibv_req_notify_cq(a.cq, 0) == 0);
	CHECK(post_write(&a, a.mr->lkey, b.mr->rkey, (uintptr_t)b.buf, 0) == 0);
	CHECK(wait_wc(&a, &wc) == 0 && wc.status == IBV_WC_SUCCESS);
	usleep(100000);
	CHECK(rnicdv_poll_events(a.ctx) == 1);
	CHECK(rnicdv_poll_events(a.ctx) == 0);

	/* completion channels: one in use cannot go, a CQ cannot join another context's channel, an
	 * armed CQ with nothing completed raises no event (events themselves: ibv_rc_pingpong -e) */
	{
		struct ibv_comp_channel *ch = ibv_create_comp_channel(b.ctx), *other = ibv_create_comp_channel(a.ctx);
		struct ibv_cq *ecq;

		CHECK(ch && other && ch->fd >= 0);
		CHECK(!ibv_create_cq(a.ctx, 4, NULL, ch, 0) && errno == EINVAL);
		ecq = ibv_create_cq(b.ctx, 4, &b, ch, 0);
		CHECK(ecq != NULL);
		CHECK(ibv_destroy_comp_channel(ch) == EBUSY);
		CHECK(ibv_req_notify_cq(ecq, 0) == 0);
		/* nothing completes on ecq: no event (the read end is not ready) */
		{
			struct pollfd pfd = {.fd = ch->fd, .events = POLLIN};

			CHECK(poll(&pfd, 1, 200) == 0);
		}
		CHECK(ibv_destroy_cq(ecq) == 0);
		CHECK(ibv_destroy_comp_channel(ch) == 0 && ibv_destroy_comp_channel(other) == 0);
	}

	/* a good WRITE, then a bad rkey: REM_ACCESS_ERR, nothing written; the QP is then in error
	 * and the next WRITE is flushed */
	memset(a.buf, 0x77, 64);
	CHECK(post_write(&a, a.mr->lkey, b.mr->rkey, (uintptr_t)b.buf, 1) == 0);
	CHECK(wait_wc(&a, &wc) == 0 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 1);
	memset(a.buf, 0x33, 64);
	CHECK(post_write(&a, a.mr->lkey, b.mr->rkey ^ 0x100, (uintptr_t)b.buf, 2) == 0);
	CHECK(wait_wc(&a, &wc) == 0 && wc.status == IBV_WC_REM_ACCESS_ERR && wc.wr_id == 2);
	CHECK(post_write(&a, a.mr->lkey, b.mr->rkey, (uintptr_t)b.buf, 3) == 0);
	CHECK(wait_wc(&a, &wc) == 0 && wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 3);
	usleep(100000);
	CHECK(b.buf[0] == 0x77 && b.buf[63] == 0x77);

	/* a bad lkey is a local protection error on a fresh QP of host B */
	{
		struct ibv_qp_attr r = {.qp_state = IBV_QPS_RESET};

		CHECK(ibv_modify_qp(b.qp, &r, IBV_QP_STATE) == 0 && to_rts(&b, &a) == 0);
		CHECK(post_write(&b, b.mr->lkey + 0x100, a.mr->rkey, (uintptr_t)a.buf, 4) == 0);
		CHECK(wait_wc(&b, &wc) == 0 && wc.status == IBV_WC_LOC_PROT_ERR && wc.wr_id == 4);
	}

	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
