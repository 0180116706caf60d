/* Every RC operation through the verbs API between two (simulated) NICs, checked byte for byte and
 * field by field.
 *
 *   rc_ops [--mtu 256..4096] [--ack-timeout T] [--gid 0|1] checks DEV_A DEV_B
 *       one case per operation and error path; prints "ok <case>" or "FAIL <case>: why"
 *   rc_ops [--mtu M] [--ack-timeout T] [--qps Q] [--seed S] mix N DEV_A DEV_B
 *       N operations (SEND, SEND with immediate, WRITE, WRITE with immediate, READ, both atomics)
 *       spread over Q QPs, up to 8 in flight per QP; every completion must arrive exactly once,
 *       in order, successful, with the right data; prints counts.
 *   rc_ops [--qps Q] [--depth D] [--seed S] [--fault-ops write|mix] [--mix-keys K] faults N DEV_A DEV_B
 *       N WRITEs (mix: half WRITEs, 3 in 10 SENDs, 2 in 10 FETCH_ADDs) on each of Q (up to 16)
 *       QPs, D (up to 8) in flight on each, each under one of K registrations a side, while the hosts refuse some of their NICs' reads
 *       (rnic-sim --dma-rd-fail): each completes in order, with success and its data in place, or
 *       with the error that names the refusal or a flush (the QPs are reset and go on); no byte
 *       at B is anything but the source's or untouched, B's counters hold the adds that
 *       succeeded.
 *   rc_ops [--mtu M] big BYTES DEV_A DEV_B
 *       one WRITE of BYTES (up to 2 GiB, a region that needs large MTT pages) and its READ back
 *   rc_ops [--mtu M] bench DEV_A DEV_B
 *       goodput of 1 MiB WRITE, READ and SEND (NIC timestamps, simulated time)
 *   rc_ops [--qps Q] [--keys K] [--span BYTES] rate write|send|read SIZE N inline|sge DEV_A DEV_B
 *       messages per second of N messages of SIZE bytes over Q (up to 16) QPs (simulated time),
 *       each under one of K keys a side drawn at random, or (WRITEs) each at an offset drawn at
 *       random in a region of BYTES a side
 *   rc_ops lat write|send|read N inline|sge DEV_A DEV_B
 *       doorbell-to-CQE time of N 8-byte WRITEs, SENDs or READs, one at a time (simulated time)
 * Exit status 0 only if everything matched. */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rnic/rnicdv.h"

#include "rc_common.h"

#define CHECK(cond, ...)                                                                                 \
	do {                                                                                             \
		if (!(cond)) {                                                                           \
			printf("FAIL %s: ", name);                                                       \
			printf(__VA_ARGS__);                                                             \
			printf("\n");                                                                    \
			failures++;                                                                      \
			return;                                                                          \
		}                                                                                        \
	} while (0)

static int wc_ok(const struct ibv_wc *wc, uint64_t id, enum ibv_wc_opcode op, uint32_t len, uint32_t qpn)
{
	return wc->status == IBV_WC_SUCCESS && wc->wr_id == id && wc->opcode == op && wc->byte_len == len &&
	       wc->qp_num == qpn;
}

/* Nothing outside [off, off + len) of B's region changed from `was` (a copy taken before). */
static int untouched(const struct side *s, const uint8_t *was, uint32_t off, uint32_t len)
{
	return !memcmp(s->mem, was, GUARD + off) &&
	       !memcmp(s->mem + GUARD + off + len, was + GUARD + off + len, REGION + GUARD - off - len);
}

static uint8_t *snap;

static void case_send(const char *name, uint32_t len, int imm, int inl)
{
	struct ibv_sge ss = sge(&A, 0, len), rs[3] = {sge(&B, 1000, len / 3), sge(&B, 300000, len / 3),
						       sge(&B, 700001, len - 2 * (len / 3) + 16)};
	struct ibv_wc wa, wb;
	uint32_t qa = A.qp[0]->qp_num, qb = B.qp[0]->qp_num;

	fill(A.buf, len, len + 1);
	memset(B.buf, 0, REGION);
	memcpy(snap, B.mem, REGION + 2 * GUARD);
	CHECK(!post_recv(B.qp[0], 77, rs, 3), "post_recv");
	CHECK(!post(A.qp[0], imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, 5, &ss, 1, 0, 0, inl ? IBV_SEND_INLINE : 0),
	      "post_send");
	CHECK(poll1(&A, &wa, 120) && poll1(&B, &wb, 120), "no completions");
	CHECK(wc_ok(&wa, 5, IBV_WC_SEND, len, qa), "send CQE status %d opcode %d len %u", wa.status, wa.opcode,
	      wa.byte_len);
	CHECK(wc_ok(&wb, 77, IBV_WC_RECV, len, qb), "recv CQE status %d opcode %d len %u", wb.status, wb.opcode,
	      wb.byte_len);
	CHECK(wb.src_qp == qa, "src_qp %u", wb.src_qp);
	CHECK(imm ? (wb.wc_flags & IBV_WC_WITH_IMM) && ntohl(wb.imm_data) == (0x1234abcd ^ 5u)
		  : !(wb.wc_flags & IBV_WC_WITH_IMM), "wc_flags %x imm %x", wb.wc_flags, ntohl(wb.imm_data));
	CHECK(!memcmp(B.buf + 1000, A.buf, len / 3) && !memcmp(B.buf + 300000, A.buf + len / 3, len / 3) &&
	      !memcmp(B.buf + 700001, A.buf + 2 * (len / 3), len - 2 * (len / 3)), "data");
	memcpy(snap + GUARD + 1000, A.buf, len / 3);
	memcpy(snap + GUARD + 300000, A.buf + len / 3, len / 3);
	memcpy(snap + GUARD + 700001, A.buf + 2 * (len / 3), len - 2 * (len / 3));
	CHECK(!memcmp(snap, B.mem, REGION + 2 * GUARD), "bytes outside the receive buffers changed");
	printf("ok %s\n", name);
}

static void case_write(const char *name, uint32_t len, int imm)
{
	struct ibv_sge ss[3] = {sge(&A, 0, len / 2), sge(&A, 2 << 20, len - len / 2)};
	struct ibv_sge rs = sge(&B, 0, 0);
	struct ibv_wc wa, wb;
	uint32_t qa = A.qp[0]->qp_num, qb = B.qp[0]->qp_num, off = 12345;

	fill(A.buf, len / 2, 3);
	fill(A.buf + (2 << 20), len - len / 2, 4);
	memset(B.buf, 0, REGION);
	memcpy(snap, B.mem, REGION + 2 * GUARD);
	if (imm)
		CHECK(!post_recv(B.qp[0], 78, &rs, 1), "post_recv");
	CHECK(!post(A.qp[0], imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE, 6, ss, 2,
		    (uintptr_t)(B.buf + off), B.mr->rkey, 0), "post_send");
	CHECK(poll1(&A, &wa, 120), "no completion");
	CHECK(wc_ok(&wa, 6, IBV_WC_RDMA_WRITE, len, qa), "CQE status %d opcode %d len %u", wa.status, wa.opcode,
	      wa.byte_len);
	if (imm) {
		CHECK(poll1(&B, &wb, 120), "no receive completion");
		CHECK(wc_ok(&wb, 78, IBV_WC_RECV_RDMA_WITH_IMM, len, qb), "recv CQE status %d opcode %d len %u",
		      wb.status, wb.opcode, wb.byte_len);
		CHECK((wb.wc_flags & IBV_WC_WITH_IMM) && ntohl(wb.imm_data) == (0x1234abcd ^ 6u) && wb.src_qp == qa,
		      "imm %x flags %x", ntohl(wb.imm_data), wb.wc_flags);
	}
	CHECK(settle(B.buf + off, A.buf, len / 2) && settle(B.buf + off + len / 2, A.buf + (2 << 20), len - len / 2),
	      "data");
	CHECK(untouched(&B, snap, off, len), "bytes outside the target changed");
	printf("ok %s\n", name);
}

static void case_read(const char *name, uint32_t len)
{
	struct ibv_sge ls[3] = {sge(&A, 100, len / 3), sge(&A, 1 << 20, len / 3), sge(&A, 3 << 20, len - 2 * (len / 3))};
	struct ibv_wc wa;
	uint32_t qa = A.qp[0]->qp_num, off = 4093;

	fill(B.buf + off, len, 9);
	memset(A.buf, 0, REGION);
	memcpy(snap, A.mem, REGION + 2 * GUARD);
	CHECK(!post(A.qp[0], IBV_WR_RDMA_READ, 7, ls, 3, (uintptr_t)(B.buf + off), B.mr->rkey, 0), "post_send");
	CHECK(poll1(&A, &wa, 120), "no completion");
	CHECK(wc_ok(&wa, 7, IBV_WC_RDMA_READ, len, qa), "CQE status %d opcode %d len %u", wa.status, wa.opcode,
	      wa.byte_len);
	CHECK(!memcmp(A.buf + 100, B.buf + off, len / 3) && !memcmp(A.buf + (1 << 20), B.buf + off + len / 3, len / 3) &&
	      !memcmp(A.buf + (3 << 20), B.buf + off + 2 * (len / 3), len - 2 * (len / 3)), "data");
	memcpy(snap + GUARD + 100, A.buf + 100, len / 3);
	memcpy(snap + GUARD + (1 << 20), A.buf + (1 << 20), len / 3);
	memcpy(snap + GUARD + (3 << 20), A.buf + (3 << 20), len - 2 * (len / 3));
	CHECK(!memcmp(snap, A.mem, REGION + 2 * GUARD), "bytes outside the local buffers changed");
	printf("ok %s\n", name);
}

static void case_atomics(const char *name)
{
	struct ibv_sge ls = sge(&A, 64, 8);
	struct ibv_send_wr wr = {0}, *bad;
	struct ibv_wc wa;
	uint64_t *remote = (uint64_t *)(B.buf + 4096 * 3 + 8), *local = (uint64_t *)(A.buf + 64);
	uint32_t qa = A.qp[0]->qp_num;
	int i;

	*remote = 1000;
	wr.sg_list = &ls;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = (uintptr_t)remote;
	wr.wr.atomic.rkey = B.mr->rkey;
	for (i = 0; i < 3; i++) {
		static const uint64_t cmp[3] = {1000, 1000, 0}, swp[3] = {77, 88, 5};

		/* CAS that swaps, CAS that fails, fetch-and-add */
		wr.wr_id = 100 + i;
		wr.opcode = i < 2 ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.compare_add = i < 2 ? cmp[i] : 0x100000000ull;
		wr.wr.atomic.swap = swp[i];
		*local = 0xdeadbeef;
		CHECK(!ibv_post_send(A.qp[0], &wr, &bad), "post_send");
		CHECK(poll1(&A, &wa, 120), "no completion");
		CHECK(wc_ok(&wa, 100 + i, i < 2 ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD, 8, qa),
		      "CQE %d status %d opcode %d len %u", i, wa.status, wa.opcode, wa.byte_len);
		CHECK(*local == (i == 0 ? 1000 : 77), "returned %llu (op %d)", (unsigned long long)*local, i);
	}
	CHECK(settle((const uint8_t *)remote, (const uint8_t *)&(uint64_t){77 + 0x100000000ull}, 8),
	      "remote value %llx", (unsigned long long)*remote);
	printf("ok %s\n", name);
}

/* The next asynchronous event of side s (60 s at most, then the alarm ends the program). */
static int async_event(struct side *s, enum ibv_event_type type, void *element)
{
	struct ibv_async_event e;
	int ok;

	alarm(60);
	if (ibv_get_async_event(s->ctx, &e))
		return 0;
	alarm(0);
	ok = e.event_type == type &&
	     (type == IBV_EVENT_SRQ_LIMIT_REACHED ? (void *)e.element.srq : (void *)e.element.qp) == element;
	if (!ok)
		printf("  event %d (%s) for %p, want %d for %p\n", e.event_type, ibv_event_type_str(e.event_type),
		       (void *)e.element.qp, type, element);
	ibv_ack_async_event(&e);
	return ok;
}

/* A request the responder must refuse: the WR fails with `want`, the next one is flushed, the
 * responder's memory is untouched, and the pair works again after reconnecting. */
static void case_remote_error(const char *name, enum ibv_wr_opcode op, uint64_t raddr, uint32_t rkey,
			      uint32_t len, enum ibv_wc_status want)
{
	struct ibv_sge ls = sge(&A, 0, len);
	struct ibv_wc wa;

	struct ibv_sge rs = sge(&B, 0, 100);

	memset(B.buf, 0x33, REGION);
	memcpy(snap, B.mem, REGION + 2 * GUARD);
	if (op == IBV_WR_SEND)
		CHECK(!post_recv(B.qp[0], 99, &rs, 1), "post_recv");
	CHECK(!post(A.qp[0], op, 8, &ls, 1, raddr, rkey, 0), "post_send");
	CHECK(!post(A.qp[0], IBV_WR_RDMA_WRITE, 9, &ls, 1, (uintptr_t)B.buf, B.mr->rkey, 0), "post_send 2");
	CHECK(poll1(&A, &wa, 120), "no completion");
	CHECK(wa.wr_id == 8 && wa.status == want, "status %s (%d), want %s", ibv_wc_status_str(wa.status), wa.status,
	      ibv_wc_status_str(want));
	CHECK(poll1(&A, &wa, 120), "no second completion");
	CHECK(wa.wr_id == 9 && wa.status == IBV_WC_WR_FLUSH_ERR, "second WR status %d", wa.status);
	if (op == IBV_WR_SEND)
		CHECK(poll1(&B, &wa, 120) && wa.wr_id == 99 && wa.status == IBV_WC_LOC_LEN_ERR,
		      "receive WQE %llu status %d", (unsigned long long)wa.wr_id, wa.status);
	usleep(20000);
	CHECK(!memcmp(snap, B.mem, REGION + 2 * GUARD), "responder memory changed");
	/* both ends of the connection are in error, and say so */
	CHECK(async_event(&A, IBV_EVENT_QP_FATAL, A.qp[0]), "requester: no QP fatal event");
	CHECK(async_event(&B, IBV_EVENT_QP_FATAL, B.qp[0]), "responder: no QP fatal event");
	connect_pair(0, 7);
	printf("ok %s\n", name);
}

/* A requester that sends more READs than the responder's max_dest_rd_atomic gets an Invalid
 * Request NAK (our requester keeps its own limit: here it is set higher than the peer's). */
static void case_rd_limit(const char *name)
{
	struct ibv_sge ls[4];
	struct ibv_wc wa;
	int i, bad = 0;

	max_dest_rd = 1;
	connect_qp(B.qp[0], &A, A.qp[0], 7, ALL_ACCESS);
	max_dest_rd = 8;
	connect_qp(A.qp[0], &B, B.qp[0], 7, ALL_ACCESS);
	for (i = 0; i < 4; i++) {
		ls[i] = sge(&A, (uint32_t)i << 20, 256 << 10);
		CHECK(!post(A.qp[0], IBV_WR_RDMA_READ, 700 + (unsigned)i, &ls[i], 1, (uintptr_t)B.buf, B.mr->rkey, 0),
		      "post READ");
	}
	for (i = 0; i < 4; i++) {
		CHECK(poll1(&A, &wa, 120), "no completion %d", i);
		bad += wa.status == IBV_WC_REM_INV_REQ_ERR;
		CHECK(wa.status == IBV_WC_SUCCESS || wa.status == IBV_WC_REM_INV_REQ_ERR || wa.status == IBV_WC_WR_FLUSH_ERR,
		      "status %s", ibv_wc_status_str(wa.status));
	}
	CHECK(bad == 1, "%d READs failed with an invalid request", bad);
	CHECK(async_event(&A, IBV_EVENT_QP_FATAL, A.qp[0]), "no QP fatal event");
	connect_pair(0, 7);
	printf("ok %s\n", name);
}

static void case_rnr(const char *name)
{
	struct ibv_sge ss = sge(&A, 0, 100), rs = sge(&B, 0, 100);
	struct ibv_wc wa, wb;
	int got_b = 0;

	/* rnr_retry 7 (for ever): the SEND waits until the receive is posted */
	CHECK(!post(A.qp[0], IBV_WR_SEND, 10, &ss, 1, 0, 0, 0), "post_send");
	usleep(200000);
	CHECK(ibv_poll_cq(A.cq, 1, &wa) == 0, "completed without a receive WQE");
	CHECK(!post_recv(B.qp[0], 11, &rs, 1), "post_recv");
	CHECK(poll1(&A, &wa, 120), "no completion after the receive was posted");
	if (wa.wr_id == 11) {
		wb = wa;
		got_b = 1;
		CHECK(poll1(&A, &wa, 120), "no send completion");
	}
	CHECK(wa.wr_id == 10 && wa.status == IBV_WC_SUCCESS, "send status %d", wa.status);
	if (!got_b)
		CHECK(poll1(&B, &wb, 120), "no recv completion");
	CHECK(wb.wr_id == 11 && wb.status == IBV_WC_SUCCESS, "recv status %d", wb.status);
	/* rnr_retry 0: the first RNR NAK fails the SEND */
	connect_pair(0, 0);
	CHECK(!post(A.qp[0], IBV_WR_SEND, 12, &ss, 1, 0, 0, 0), "post_send");
	CHECK(poll1(&A, &wa, 120), "no completion");
	CHECK(wa.wr_id == 12 && wa.status == IBV_WC_RNR_RETRY_EXC_ERR, "status %s", ibv_wc_status_str(wa.status));
	CHECK(async_event(&A, IBV_EVENT_QP_FATAL, A.qp[0]), "no QP fatal event");
	connect_pair(0, 7);
	printf("ok %s\n", name);
}

static void case_flush_recv(const char *name)
{
	struct ibv_sge rs = sge(&B, 0, 100);
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_ERR};
	struct ibv_wc wb;

	CHECK(!post_recv(B.qp[0], 13, &rs, 1) && !post_recv(B.qp[0], 14, &rs, 1), "post_recv");
	CHECK(!ibv_modify_qp(B.qp[0], &a, IBV_QP_STATE), "modify to ERR");
	CHECK(poll1(&B, &wb, 120) && wb.wr_id == 13 && wb.status == IBV_WC_WR_FLUSH_ERR, "first flush %llu %d", (unsigned long long)wb.wr_id,
	      wb.status);
	CHECK(poll1(&B, &wb, 120) && wb.wr_id == 14 && wb.status == IBV_WC_WR_FLUSH_ERR, "second flush");
	connect_pair(0, 7);
	printf("ok %s\n", name);
}


/* ---- UD and UC */
static struct ibv_qp *make_qp_type(struct side *s, enum ibv_qp_type t)
{
	struct ibv_qp_init_attr init = {0};
	struct ibv_qp *qp;

	init.send_cq = init.recv_cq = s->cq;
	init.qp_type = t;
	init.cap.max_send_wr = 16;
	init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = ibv_create_qp(s->pd, &init);
	if (!qp)
		die("ibv_create_qp (UC/UD)", errno);
	return qp;
}

static void ud_up(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = {0};

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		die("UD INIT", EINVAL);
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		die("UD RTR", EINVAL);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 77;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		die("UD RTS", EINVAL);
}

static int post_ud(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey, uint64_t id, struct ibv_sge *sg,
		   int imm)
{
	struct ibv_send_wr wr = {0}, *bad;

	wr.wr_id = id;
	wr.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.imm_data = htonl(0xabc00000u | (uint32_t)id);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = qpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(qp, &wr, &bad);
}

static void case_ud(const char *name)
{
	const uint32_t qkey = 0x11111111, len = 4096;
	struct ibv_qp *qa = make_qp_type(&A, IBV_QPT_UD), *qb = make_qp_type(&B, IBV_QPT_UD);
	struct ibv_ah_attr aa = {0};
	struct ibv_ah *ah, *back;
	struct ibv_sge ss = sge(&A, 0, len), rs = sge(&B, 8192, len + 40), ar = sge(&A, 16384, 100), bs = sge(&B, 0, 1);
	struct ibv_wc wa, wb;
	const uint8_t *ip;

	ud_up(qa, qkey);
	ud_up(qb, qkey);
	fill(A.buf, len, 21);
	memset(B.buf + 8192, 0, len + 40);
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.dgid = B.gid;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(A.pd, &aa);
	CHECK(ah, "ibv_create_ah: %s", strerror(errno));
	CHECK(!post_recv(qb, 31, &rs, 1), "post_recv");
	CHECK(!post_ud(qa, ah, qb->qp_num, qkey, 30, &ss, 1), "post_send");
	CHECK(poll1(&A, &wa, 120) && wa.status == IBV_WC_SUCCESS && wa.wr_id == 30 && wa.opcode == IBV_WC_SEND,
	      "send CQE status %d", wa.status);
	CHECK(poll1(&B, &wb, 120), "no receive completion");
	CHECK(wc_ok(&wb, 31, IBV_WC_RECV, len + 40, qb->qp_num) && wb.src_qp == qa->qp_num &&
	      (wb.wc_flags & IBV_WC_GRH) && (wb.wc_flags & IBV_WC_WITH_IMM) && ntohl(wb.imm_data) == 0xabc0001e,
	      "recv CQE status %d len %u src_qp %u flags %x", wb.status, wb.byte_len, wb.src_qp, wb.wc_flags);
	ip = B.buf + 8192;
	if (gid_index)
		CHECK(ip[0] >> 4 == 6 && !memcmp(ip + 8, A.gid.raw, 16) && !memcmp(ip + 24, B.gid.raw, 16),
		      "GRH area: no IPv6 header of the sender");
	else
		CHECK(ip[20] == 0x45 && !memcmp(ip + 32, &A.gid.raw[12], 4) && !memcmp(ip + 36, &B.gid.raw[12], 4),
		      "GRH area: no IPv4 header of the sender");
	CHECK(!memcmp(B.buf + 8192 + 40, A.buf, len), "data");
	/* answer the sender from the completion */
	back = ibv_create_ah_from_wc(B.pd, &wb, (struct ibv_grh *)(B.buf + 8192), 1);
	CHECK(back, "ibv_create_ah_from_wc: %s", strerror(errno));
	B.buf[0] = 0x5c;
	CHECK(!post_recv(qa, 32, &ar, 1), "post_recv A");
	CHECK(!post_ud(qb, back, wb.src_qp, qkey, 33, &bs, 0), "post_send B");
	CHECK(poll1(&B, &wb, 120) && wb.wr_id == 33 && wb.status == IBV_WC_SUCCESS, "reply send CQE");
	CHECK(poll1(&A, &wa, 120) && wc_ok(&wa, 32, IBV_WC_RECV, 41, qa->qp_num) && A.buf[16384 + 40] == 0x5c,
	      "reply receive");
	/* a wrong Q_Key is dropped: the receive WQE stays for the next good datagram */
	CHECK(!post_recv(qb, 34, &rs, 1), "post_recv");
	CHECK(!post_ud(qa, ah, qb->qp_num, qkey + 1, 35, &ss, 0), "post_send bad qkey");
	CHECK(poll1(&A, &wa, 120) && wa.wr_id == 35 && wa.status == IBV_WC_SUCCESS, "send CQE");
	usleep(100000);
	CHECK(ibv_poll_cq(B.cq, 1, &wb) == 0, "a datagram with a wrong Q_Key was received");
	CHECK(!post_ud(qa, ah, qb->qp_num, qkey, 36, &ss, 0), "post_send");
	CHECK(poll1(&A, &wa, 120) && wa.wr_id == 36, "send CQE");
	CHECK(poll1(&B, &wb, 120) && wc_ok(&wb, 34, IBV_WC_RECV, len + 40, qb->qp_num), "receive after a bad Q_Key");
	ibv_destroy_ah(ah);
	ibv_destroy_ah(back);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	printf("ok %s\n", name);
}

static void case_uc(const char *name)
{
	struct ibv_qp *qa = make_qp_type(&A, IBV_QPT_UC), *qb = make_qp_type(&B, IBV_QPT_UC);
	struct ibv_sge ss = sge(&A, 0, 10000), rs = sge(&B, 100000, 20000), z = sge(&B, 0, 0);
	struct ibv_wc wa, wb;

	connect_qp(qa, &B, qb, 0, IBV_ACCESS_REMOTE_WRITE);
	connect_qp(qb, &A, qa, 0, IBV_ACCESS_REMOTE_WRITE);
	fill(A.buf, 10000, 41);
	memset(B.buf, 0, REGION);
	CHECK(!post_recv(qb, 40, &rs, 1) && !post_recv(qb, 41, &z, 1), "post_recv");
	CHECK(!post(qa, IBV_WR_SEND, 42, &ss, 1, 0, 0, 0), "post SEND");
	CHECK(!post(qa, IBV_WR_RDMA_WRITE_WITH_IMM, 43, &ss, 1, (uintptr_t)(B.buf + 7), B.mr->rkey, 0), "post WRITE");
	CHECK(poll1(&A, &wa, 120) && wc_ok(&wa, 42, IBV_WC_SEND, 10000, qa->qp_num), "SEND CQE %d", wa.status);
	CHECK(poll1(&A, &wa, 120) && wc_ok(&wa, 43, IBV_WC_RDMA_WRITE, 10000, qa->qp_num), "WRITE CQE %d", wa.status);
	CHECK(poll1(&B, &wb, 120) && wc_ok(&wb, 40, IBV_WC_RECV, 10000, qb->qp_num) && wb.src_qp == qa->qp_num,
	      "recv CQE status %d len %u", wb.status, wb.byte_len);
	CHECK(poll1(&B, &wb, 120) && wc_ok(&wb, 41, IBV_WC_RECV_RDMA_WITH_IMM, 10000, qb->qp_num), "WRITE_IMM CQE");
	CHECK(!memcmp(B.buf + 100000, A.buf, 10000) && settle(B.buf + 7, A.buf, 10000), "data");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	printf("ok %s\n", name);
}

static void case_srq(const char *name)
{
	struct ibv_srq_init_attr sa = {0};
	struct ibv_srq_attr mod = {0};
	struct ibv_qp_init_attr init = {0};
	struct ibv_srq *srq;
	struct ibv_qp *qa[2], *qb[2];
	struct ibv_wc wc;
	int i, seen = 0;

	sa.attr.max_wr = 16;
	sa.attr.max_sge = 1;
	srq = ibv_create_srq(B.pd, &sa);
	CHECK(srq, "ibv_create_srq: %s", strerror(errno));
	init.send_cq = init.recv_cq = B.cq;
	init.qp_type = IBV_QPT_RC;
	init.srq = srq;
	init.cap.max_send_wr = 4;
	init.cap.max_send_sge = 1;
	for (i = 0; i < 2; i++) {
		qa[i] = make_qp(&A);
		qb[i] = ibv_create_qp(B.pd, &init);
		CHECK(qb[i], "ibv_create_qp with an SRQ: %s", strerror(errno));
		connect_qp(qa[i], &B, qb[i], 7, ALL_ACCESS);
		connect_qp(qb[i], &A, qa[i], 7, ALL_ACCESS);
	}
	for (i = 0; i < 8; i++) {
		struct ibv_sge r = sge(&B, 4096u * (unsigned)i, 4096);
		struct ibv_recv_wr wr = {0}, *bad;

		wr.wr_id = 500 + (unsigned)i;
		wr.sg_list = &r;
		wr.num_sge = 1;
		CHECK(!ibv_post_srq_recv(srq, &wr, &bad), "post_srq_recv");
	}
	/* below 3 WQEs left: the limit event */
	mod.srq_limit = 3;
	CHECK(!ibv_modify_srq(srq, &mod, IBV_SRQ_LIMIT), "ibv_modify_srq");
	memset(B.buf, 0, 8 * 4096);
	for (i = 0; i < 6; i++) {
		struct ibv_sge s1 = sge(&A, 4096u * (unsigned)i, 1000u + (unsigned)i);

		fill(A.buf + 4096 * i, 1000u + (unsigned)i, 60u + (unsigned)i);
		CHECK(!post(qa[i & 1], IBV_WR_SEND, 600 + (unsigned)i, &s1, 1, 0, 0, 0), "post_send");
	}
	for (i = 0; i < 6; i++)
		CHECK(poll1(&A, &wc, 120) && wc.status == IBV_WC_SUCCESS, "send %d status %d", i, wc.status);
	for (i = 0; i < 6; i++) {
		unsigned slot, k;

		CHECK(poll1(&B, &wc, 120) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
		      wc.wr_id >= 500 && wc.wr_id < 508, "recv %d: status %d wr_id %llu", i, wc.status,
		      (unsigned long long)wc.wr_id);
		slot = (unsigned)(wc.wr_id - 500);
		seen |= 1 << slot;
		k = wc.byte_len - 1000; /* which send it was */
		CHECK(k < 6 && (wc.qp_num == qb[k & 1]->qp_num) && !memcmp(B.buf + 4096 * slot, A.buf + 4096 * k, wc.byte_len),
		      "recv %d: data or QP", i);
	}
	CHECK(seen == 0x3f, "receive WQEs used out of order: %x", seen);
	CHECK(async_event(&B, IBV_EVENT_SRQ_LIMIT_REACHED, srq), "no SRQ limit event");
	CHECK(ibv_query_srq(srq, &mod) == 0 && mod.srq_limit == 0, "limit still armed");
	for (i = 0; i < 2; i++) {
		ibv_destroy_qp(qa[i]);
		ibv_destroy_qp(qb[i]);
	}
	CHECK(!ibv_destroy_srq(srq), "ibv_destroy_srq");
	printf("ok %s\n", name);
}

static void checks(void)
{
	static const uint32_t sizes[] = {0, 1, 4096, 65536 + 3};
	char name[64];
	unsigned i;

	new_pair(0);
	snap = malloc(REGION + 2 * GUARD);
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "send_%u", sizes[i]);
		case_send(name, sizes[i], 0, 0);
		snprintf(name, sizeof(name), "send_imm_%u", sizes[i]);
		case_send(name, sizes[i], 1, 0);
		snprintf(name, sizeof(name), "write_%u", sizes[i]);
		case_write(name, sizes[i], 0);
		snprintf(name, sizeof(name), "write_imm_%u", sizes[i]);
		case_write(name, sizes[i], 1);
		snprintf(name, sizeof(name), "read_%u", sizes[i]);
		case_read(name, sizes[i]);
	}
	case_send("send_inline_60", 60, 0, 1);
	case_read("read_1MiB", 1 << 20);
	case_atomics("atomics");
	case_remote_error("write_bad_rkey", IBV_WR_RDMA_WRITE, (uintptr_t)B.buf, B.mr->rkey ^ 0x100, 64,
			  IBV_WC_REM_ACCESS_ERR);
	case_remote_error("write_out_of_bounds", IBV_WR_RDMA_WRITE, (uintptr_t)B.buf + REGION - 10, B.mr->rkey, 64,
			  IBV_WC_REM_ACCESS_ERR);
	case_remote_error("read_out_of_bounds", IBV_WR_RDMA_READ, (uintptr_t)B.buf - 8, B.mr->rkey, 64,
			  IBV_WC_REM_ACCESS_ERR);
	{
		/* an rkey of another protection domain */
		struct ibv_pd *pd2 = ibv_alloc_pd(B.ctx);
		struct ibv_mr *mr2 = pd2 ? ibv_reg_mr(pd2, B.buf + (1 << 20), 4096, IBV_ACCESS_LOCAL_WRITE |
						     IBV_ACCESS_REMOTE_WRITE) : NULL;

		if (!mr2)
			die("second PD", errno);
		case_remote_error("write_other_pd", IBV_WR_RDMA_WRITE, (uintptr_t)B.buf + (1 << 20), mr2->rkey, 64,
				  IBV_WC_REM_ACCESS_ERR);
		ibv_dereg_mr(mr2);
		ibv_dealloc_pd(pd2);
	}
	case_remote_error("atomic_misaligned", IBV_WR_ATOMIC_FETCH_AND_ADD, (uintptr_t)B.buf + 4, B.mr->rkey, 8,
			  IBV_WC_REM_INV_REQ_ERR);
	case_remote_error("send_too_long", IBV_WR_SEND, 0, 0, 4096, IBV_WC_REM_INV_REQ_ERR);
	case_rd_limit("max_dest_rd_atomic");
	case_rnr("rnr");
	case_flush_recv("flush_recv");
	case_ud("ud");
	case_uc("uc");
	case_srq("srq");
}


/* ---- mixed workload */
int main(int argc, char **argv)
{
	int i = 1, nq = 4, keys = 1, random_order = 0, depth = DEPTH;

	setvbuf(stdout, NULL, _IOLBF, 0);

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "--mtu"))
			mtu = (enum ibv_mtu)(__builtin_ctz((unsigned)atoi(argv[i + 1])) - 7);
		else if (!strcmp(argv[i], "--ack-timeout"))
			ack_timeout = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--qps"))
			nq = atoi(argv[i + 1]) < 1 ? 1 : atoi(argv[i + 1]) > MAXQ ? MAXQ : atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--gid"))
			gid_index = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--depth"))
			depth = atoi(argv[i + 1]) < 1 ? 1 : atoi(argv[i + 1]) > DEPTH ? DEPTH : atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--seed"))
			rng = (uint32_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--order"))
			random_order = !strcmp(argv[i + 1], "random");
		else if (!strcmp(argv[i], "--keys"))
			rate_keys = atoi(argv[i + 1]) < 1 ? 1 : atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--span"))
			rate_span = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--fault-ops"))
			fault_mix = !strcmp(argv[i + 1], "mix");
		else if (!strcmp(argv[i], "--mix-keys"))
			keys = atoi(argv[i + 1]) < 1 ? 1 : atoi(argv[i + 1]) > 3 ? 3 : atoi(argv[i + 1]);
	}
	if (argc - i == 4 && !strcmp(argv[i], "mix")) {
		int ret;

		open_side(&A, argv[i + 2]);
		open_side(&B, argv[i + 3]);
		ret = mix(strtoull(argv[i + 1], NULL, 0), nq > 4 ? 4 : nq, keys);
		printf("%s\n", ret ? "FAIL" : "PASS");
		return ret != 0;
	}
	if (argc - i == 4 && !strcmp(argv[i], "faults")) {
		int ret;

		open_side(&A, argv[i + 2]);
		open_side(&B, argv[i + 3]);
		ret = faults(strtoull(argv[i + 1], NULL, 0), nq > 16 ? 16 : nq, depth, keys);
		printf("%s\n", ret ? "FAIL" : "PASS");
		return ret != 0;
	}
	if (argc - i == 4 && !strcmp(argv[i], "big")) {
		int ret;

		open_side(&A, argv[i + 2]);
		open_side(&B, argv[i + 3]);
		ret = big(strtoull(argv[i + 1], NULL, 0));
		printf("%s\n", ret ? "FAIL" : "PASS");
		return ret != 0;
	}
	if (argc - i == 3 && !strcmp(argv[i], "bench")) {
		open_side(&A, argv[i + 1]);
		open_side(&B, argv[i + 2]);
		return bench() != 0;
	}
	if (argc - i == 7 && !strcmp(argv[i], "rate")) {
		uint32_t size = (uint32_t)strtoul(argv[i + 2], NULL, 0);

		if (size > REGION || strtoul(argv[i + 3], NULL, 0) < 2)
			die("rate: SIZE or N", EINVAL);
		open_side(&A, argv[i + 5]);
		open_side(&B, argv[i + 6]);
		return rate(!strcmp(argv[i + 1], "send") ? IBV_WR_SEND : !strcmp(argv[i + 1], "read") ? IBV_WR_RDMA_READ :
			    IBV_WR_RDMA_WRITE, size, nq,
			    (uint32_t)strtoul(argv[i + 3], NULL, 0), !strcmp(argv[i + 4], "inline"), random_order) != 0;
	}
	if (argc - i == 3 && !strcmp(argv[i], "curve")) {
		/* the QP-count curve's figures on one set of nq pairs (connected once, MTU as given),
		 * with enough messages that every QP has some */
		uint32_t m = (uint32_t)nq;

		open_side(&A, argv[i + 1]);
		open_side(&B, argv[i + 2]);
		return rate(IBV_WR_RDMA_WRITE, 64, nq, m * 2 > 4000 ? m * 2 : 4000, 0, 0) ||
		       rate(IBV_WR_RDMA_WRITE, 64, nq, m * 2 > 4000 ? m * 2 : 4000, 0, 1) ||
		       rate(IBV_WR_RDMA_WRITE, 4096, nq, m > 1000 ? m : 1000, 0, 1) ||
		       rate(IBV_WR_RDMA_WRITE, 65536, nq, m > 300 ? m : 300, 0, 0);
	}
	if (argc - i == 6 && !strcmp(argv[i], "lat")) {
		enum ibv_wr_opcode op = !strcmp(argv[i + 1], "send") ? IBV_WR_SEND :
					!strcmp(argv[i + 1], "read") ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;

		open_side(&A, argv[i + 4]);
		open_side(&B, argv[i + 5]);
		return lat(op, (uint32_t)strtoul(argv[i + 2], NULL, 0), !strcmp(argv[i + 3], "inline")) != 0;
	}
	if (argc - i == 3 && !strcmp(argv[i], "limits")) {
		int ret;

		open_side(&A, argv[i + 1]);
		open_side(&B, argv[i + 2]);
		ret = limits();
		printf("%s\n", ret ? "FAIL" : "PASS");
		return ret != 0;
	}
	if (argc - i == 3 && !strcmp(argv[i], "checks")) {
		open_side(&A, argv[i + 1]);
		open_side(&B, argv[i + 2]);
		checks();
		printf("%s: %d failed\n", failures ? "FAIL" : "PASS", failures);
		return failures != 0;
	}
	fprintf(stderr, "usage: rc_ops [--mtu M] [--ack-timeout T] [--gid 0|1] [--qps Q] [--order rr|random] [--seed S] "
			"[--mix-keys 1-3] [--keys K] [--span BYTES] [--depth D] [--fault-ops write|mix] checks|limits|bench|big BYTES|mix N|faults N|"
			"rate OP SIZE N inline|sge|curve|"
			"lat OP N inline|sge DEV_A DEV_B\n");
	return 2;
}
