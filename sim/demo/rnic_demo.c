/* The demo: two hosts, each with its own (simulated) RNIC, 1 MiB of ordinary application memory
 * registered on each, RC RDMA WRITEs from host A to host B through the verbs API.
 *
 *   rnic-demo [--ack-timeout T] DEV_A DEV_B
 *
 * T is the QPs' local ACK timeout attribute (4.096 us * 2^T, default 14 as perftest uses); a
 * lossy link recovers from lost tail packets and ACKs only through it.
 *
 * For path MTU 1024 and 4096 and sizes 1 B .. 1 MiB it checks every byte at the destination and
 * that nothing outside the target range changed, and prints simulated latency (one WRITE, from
 * its doorbell reaching the NIC to its CQE being written, NIC timestamps) and goodput (a burst of
 * back-to-back signaled WRITEs: bytes over first doorbell .. last CQE). */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rnic/rnicdv.h"

#define REGION (1u << 20)
#define GUARD 4096u
#define BURST_BYTES (4u << 20)
#define MAX_BURST 64

struct host {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *mem;    /* GUARD | REGION (registered) | GUARD */
	union ibv_gid gid;
};

static int fail(const char *what, int err)
{
	printf("demo: FAIL %s: %s\n", what, strerror(err));
	exit(1);
}

static void open_host(struct host *h, const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr init = {0};
	int i;

	if (!list)
		fail("ibv_get_device_list", errno);
	for (i = 0; list[i] && strcmp(ibv_get_device_name(list[i]), name); i++)
		;
	if (!list[i]) {
		printf("demo: FAIL no device %s (is rnic-sim running? RNIC_SIM_DIR=%s)\n", name,
		       getenv("RNIC_SIM_DIR") ? getenv("RNIC_SIM_DIR") : "/tmp/rnic-sim");
		exit(1);
	}
	h->name = name;
	h->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!h->ctx)
		fail("ibv_open_device", errno);
	h->pd = ibv_alloc_pd(h->ctx);
	if (!h->pd)
		fail("ibv_alloc_pd", errno);
	h->mem = malloc(REGION + 2 * GUARD);
	if (!h->mem)
		fail("malloc", ENOMEM);
	h->mr = ibv_reg_mr(h->pd, h->mem + GUARD, REGION,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!h->mr)
		fail("ibv_reg_mr", errno);
	h->cq = ibv_create_cq(h->ctx, 256, NULL, NULL, 0);
	if (!h->cq)
		fail("ibv_create_cq", errno);
	init.send_cq = init.recv_cq = h->cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 128;
	init.cap.max_recv_wr = 1;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	h->qp = ibv_create_qp(h->pd, &init);
	if (!h->qp)
		fail("ibv_create_qp", errno);
	if (ibv_query_gid(h->ctx, 1, 0, &h->gid))
		fail("ibv_query_gid", EINVAL);
}

/* RESET -> INIT -> RTR -> RTS toward the peer, at path MTU mtu */
static unsigned ack_timeout = 14;

static void connect_qp(struct host *h, const struct host *peer, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	ret = ibv_modify_qp(h->qp, &a, IBV_QP_STATE);
	if (ret)
		fail("modify to RESET", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	ret = ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		fail("modify to INIT", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = 0x1000;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 64;
	ret = ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		fail("modify to RTR", ret);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x1000;
	a.timeout = (uint8_t)ack_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	ret = ibv_modify_qp(h->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		fail("modify to RTS", ret);
}

/* Poll one completion (on the simulator, the library puts a poller that keeps finding the CQ
 * empty to sleep until the NIC writes host memory: the simulators keep the processor) */
static void wait_cqe(struct host *h, struct ibv_wc *wc)
{
	time_t start = time(NULL);

	while (ibv_poll_cq(h->cq, 1, wc) == 0) {
		if (time(NULL) - start > 300) {
			printf("demo: FAIL no completion after 300 s\n");
			exit(1);
		}
	}
	if (wc->status != IBV_WC_SUCCESS) {
		printf("demo: FAIL WRITE completed with status %s (%d)\n", ibv_wc_status_str(wc->status), wc->status);
		exit(1);
	}
}

static void post_writes(struct host *a, const struct host *b, uint32_t size, uint32_t n)
{
	struct ibv_send_wr wr[MAX_BURST], *bad;
	struct ibv_sge sge = {(uintptr_t)a->mr->addr, size, a->mr->lkey};
	uint32_t i;
	int ret;

	for (i = 0; i < n; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = i;
		wr[i].sg_list = &sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].wr.rdma.remote_addr = (uintptr_t)b->mr->addr;
		wr[i].wr.rdma.rkey = b->mr->rkey;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	ret = ibv_post_send(a->qp, wr, &bad);
	if (ret)
		fail("ibv_post_send", ret);
}

/* destination = source over [0, size), untouched (0) after it and in both guards */
static int check(const struct host *a, const struct host *b, uint32_t size)
{
	const uint8_t *dst = b->mem + GUARD;
	uint32_t i;

	if (memcmp(dst, a->mem + GUARD, size))
		return 0;
	for (i = 0; i < GUARD; i++)
		if (b->mem[i] != 0x5a || b->mem[GUARD + REGION + i] != 0x5a)
			return 0;
	for (i = size; i < REGION; i++)
		if (dst[i])
			return 0;
	return 1;
}

/* The ACK that completed the WRITE at host A does not wait for host B's CPU to see the data
 * (PCIe writes are posted, and here host B's side of the link is another thread): look again
 * for a while before calling it a mismatch. */
static int verify(const struct host *a, const struct host *b, uint32_t size)
{
	int tries;

	for (tries = 0; tries < 5000; tries++) {
		if (check(a, b, size))
			return 1;
		usleep(1000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const uint32_t sizes[] = {1, 64, 4096, 65536, 1u << 20};
	static const enum ibv_mtu mtus[] = {IBV_MTU_1024, IBV_MTU_4096};
	struct host a = {0}, b = {0};
	struct ibv_wc wc;
	uint64_t hz, s0, e0, first, start, last;
	uint32_t m, k, i, n;
	struct timespec t0, t1;

	if (argc == 5 && !strcmp(argv[1], "--ack-timeout")) {
		ack_timeout = (unsigned)atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc != 3 || ack_timeout > 31) {
		fprintf(stderr, "usage: rnic-demo [--ack-timeout 0..31] DEV_A DEV_B\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	open_host(&a, argv[1]);
	open_host(&b, argv[2]);
	hz = rnicdv_clock_hz(a.ctx);
	printf("host A: %s, QP %u; host B: %s, QP %u; 1 MiB registered on each; NIC clock %.0f MHz, "
	       "512-bit datapath\n", argv[1], a.qp->qp_num, argv[2], b.qp->qp_num, hz / 1e6);
	printf("%8s %5s %12s %10s %6s\n", "size", "mtu", "goodput_gbps", "latency_ns", "writes");
	for (i = 0; i < REGION; i++)
		a.mem[GUARD + i] = (uint8_t)(i * 131 + (i >> 12) + 7);
	for (m = 0; m < 2; m++) {
		connect_qp(&a, &b, mtus[m]);
		connect_qp(&b, &a, mtus[m]);
		for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			uint32_t size = sizes[k];

			memset(b.mem, 0x5a, REGION + 2 * GUARD);
			memset(b.mem + GUARD, 0, REGION);
			post_writes(&a, &b, size, 1);
			wait_cqe(&a, &wc);
			rnicdv_cq_last_ts(a.cq, &s0, &e0);
			if (wc.byte_len != size || wc.opcode != IBV_WC_RDMA_WRITE || !verify(&a, &b, size)) {
				printf("demo: FAIL data or completion mismatch for %u bytes at MTU %u\n", size,
				       128u << mtus[m]);
				return 1;
			}
			n = BURST_BYTES / size < MAX_BURST ? BURST_BYTES / size : MAX_BURST;
			post_writes(&a, &b, size, n);
			for (i = 0; i < n; i++) {
				wait_cqe(&a, &wc);
				rnicdv_cq_last_ts(a.cq, i ? &start : &first, &last);
			}
			if (!verify(&a, &b, size)) {
				printf("demo: FAIL data mismatch after a burst of %u bytes\n", size);
				return 1;
			}
			printf("%8u %5u %12.2f %10.0f %6u\n", size, 128u << mtus[m],
			       (double)size * n * 8 * hz / (double)(last - first) / 1e9,
			       (double)(e0 - s0) * 1e9 / (double)hz, n + 1);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("demo: PASS (%.1f s wall for the demo program)\n",
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
