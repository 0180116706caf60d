/* rc_ops bench, big and rate: figures in simulated time (NIC timestamps). */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rnic/rnicdv.h"

#include "rc_common.h"

/* ---- goodput: bursts of `n` back-to-back signaled 1 MiB operations, NIC timestamps from the
 * first WQE's doorbell to the last CQE */
int bench(void)
{
	static const enum ibv_wr_opcode ops[] = {IBV_WR_RDMA_WRITE, IBV_WR_RDMA_READ, IBV_WR_SEND};
	static const char *const names[] = {"write", "read", "send"};
	const uint32_t size = 1u << 20, n = 8;
	double hz;
	unsigned k;

	new_pair(0);
	hz = (double)rnicdv_clock_hz(A.ctx);
	printf("%6s %8s %5s %12s\n", "op", "size", "mtu", "goodput_gbps");
	for (k = 0; k < 3; k++) {
		struct ibv_sge s = sge(&A, 0, size), r = sge(&B, 0, size);
		uint64_t first = 0, start, end = 0;
		struct ibv_wc wc;
		uint32_t i;

		for (i = 0; i < n && ops[k] == IBV_WR_SEND; i++)
			if (post_recv(B.qp[0], i, &r, 1))
				return -1;
		for (i = 0; i < n; i++)
			if (post(A.qp[0], ops[k], i, &s, 1, (uintptr_t)B.buf, B.mr->rkey, 0))
				return -1;
		for (i = 0; i < n; i++) {
			if (!poll1(&A, &wc, 300) || wc.status != IBV_WC_SUCCESS || wc.byte_len != size) {
				printf("FAIL bench %s: %s\n", names[k], ibv_wc_status_str(wc.status));
				return -1;
			}
			rnicdv_cq_last_ts(A.cq, &start, &end);
			if (!i)
				first = start;
		}
		for (i = 0; i < n && ops[k] == IBV_WR_SEND; i++)
			if (!poll1(&B, &wc, 300) || wc.status != IBV_WC_SUCCESS)
				return -1;
		printf("%6s %8u %5u %12.2f\n", names[k], size, 128u << mtu, 8.0 * size * n / ((double)(end - first) / hz) / 1e9);
	}
	return 0;
}

/* ---- one message of `size` bytes (up to 2 GiB): WRITE A->B, then READ it back into A */
int big(uint64_t size)
{
	uint64_t *a = malloc(size), *b = malloc(size), i, n = size / 8;
	struct ibv_mr *ma, *mb;
	struct ibv_sge s;
	struct ibv_wc wc;
	uint64_t t0, t1;
	double hz;

	if (!a || !b || size % 8)
		die("malloc", ENOMEM);
	for (i = 0; i < n; i++)
		a[i] = i * 0x9e3779b97f4a7c15ull;
	memset(b, 0, size);
	ma = ibv_reg_mr(A.pd, a, size, IBV_ACCESS_LOCAL_WRITE);
	mb = ibv_reg_mr(B.pd, b, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!ma || !mb)
		die("ibv_reg_mr (large)", errno);
	new_pair(0);
	hz = (double)rnicdv_clock_hz(A.ctx);
	s = (struct ibv_sge){(uintptr_t)a, (uint32_t)size, ma->lkey};
	if (post(A.qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1, (uintptr_t)b, mb->rkey, 0) || !poll1(&A, &wc, 3600) ||
	    wc.status != IBV_WC_SUCCESS || wc.byte_len != size) {
		printf("FAIL big WRITE of %llu bytes: %s\n", (unsigned long long)size, ibv_wc_status_str(wc.status));
		return -1;
	}
	rnicdv_cq_last_ts(A.cq, &t0, &t1);
	if (!settle((const uint8_t *)b, (const uint8_t *)a, (uint32_t)size)) {
		printf("FAIL big WRITE: data\n");
		return -1;
	}
	printf("write %llu bytes: %.2f Gb/s\n", (unsigned long long)size, 8.0 * size / ((t1 - t0) / hz) / 1e9);
	memset(a, 0, size);
	if (post(A.qp[0], IBV_WR_RDMA_READ, 2, &s, 1, (uintptr_t)b, mb->rkey, 0) || !poll1(&A, &wc, 3600) ||
	    wc.status != IBV_WC_SUCCESS || wc.byte_len != size) {
		printf("FAIL big READ of %llu bytes: %s\n", (unsigned long long)size, ibv_wc_status_str(wc.status));
		return -1;
	}
	rnicdv_cq_last_ts(A.cq, &t0, &t1);
	for (i = 0; i < n; i++)
		if (a[i] != i * 0x9e3779b97f4a7c15ull) {
			printf("FAIL big READ: data at %llu\n", (unsigned long long)(8 * i));
			return -1;
		}
	printf("read %llu bytes: %.2f Gb/s\n", (unsigned long long)size, 8.0 * size / ((t1 - t0) / hz) / 1e9);
	return 0;
}

/* ---- message rate: n messages of `size` bytes (WRITE or SEND), round-robin over nq QPs (or to a
 * QP drawn at random for each) with up to RATE_DEPTH in flight on each (fewer with many QPs, at
 * least one: the CQ holds RATE_CQ, and no more are in flight in all), every one signaled; QP q's
 * messages at q * size in the region (wrapping round beyond it): n - 1 messages between the first and the last completion
 * (NIC timestamps of the CQE writes), the steady state. The host posts far faster than simulated
 * time passes, so the NIC is the limit. Checked as it goes: each QP's WRs complete once each, in
 * the order posted; at the end the bytes that landed in B are A's, in every QP's region. */
#define RATE_DEPTH 64
#define RATE_CQ 2048
#define RATE_KEYS 16384

/* --keys N: N registrations of each side's messages' span, a message under a pair of them drawn
 * at random (its lkey on A, its rkey on B): N beyond the MPT caches' lines makes keys miss */
int rate_keys = 1;
static struct ibv_mr *key_mr[2][RATE_KEYS];

static int register_keys(uint32_t span)
{
	int j, k;

	for (j = 0; j < rate_keys && !key_mr[0][j]; j++)
		for (k = 0; k < 2; k++) {
			struct side *s = k ? &B : &A;

			key_mr[k][j] = ibv_reg_mr(s->pd, s->buf, span, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
							   IBV_ACCESS_REMOTE_READ);
			if (!key_mr[k][j]) {
				printf("FAIL rate: registering key %d: %s\n", j, strerror(errno));
				return -1;
			}
		}
	return 0;
}

/* --span BYTES: a region of BYTES a side (one registration each), every message at an offset
 * drawn at random in it, the same on both sides: with BYTES beyond what the TLBs map, pages miss */
uint64_t rate_span;
static struct span {
	uint8_t *buf;
	struct ibv_mr *mr;
} span_of[2];
static uint64_t *span_off; /* each message's offset, for the check at the end */

static int register_span(uint32_t n)
{
	int k;

	span_off = realloc(span_off, n * sizeof(*span_off));
	for (k = 0; k < 2 && !span_of[k].buf; k++) {
		struct side *s = k ? &B : &A;

		span_of[k].buf = malloc(rate_span);
		if (!span_of[k].buf || !span_off)
			die("malloc (span)", ENOMEM);
		if (!k)
			fill(span_of[k].buf, (uint32_t)rate_span, 77);
		else
			memset(span_of[k].buf, 0, rate_span);
		span_of[k].mr = ibv_reg_mr(s->pd, span_of[k].buf, rate_span,
					   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
		if (!span_of[k].mr) {
			printf("FAIL rate: registering the span: %s\n", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static int qp_of(const struct side *s, uint32_t qpn, int nq)
{
	int q;

	for (q = 0; q < nq && s->qp[q]->qp_num != qpn; q++)
		;
	return q < nq ? q : -1;
}

/* B takes a SEND's completion and gives its QP the receive back */
static int rate_recv(int nq, uint32_t size, uint32_t *got)
{
	struct ibv_sge r;
	struct ibv_wc wc;
	int q;

	while (ibv_poll_cq(B.cq, 1, &wc) == 1) {
		q = qp_of(&B, wc.qp_num, nq);
		if (wc.status != IBV_WC_SUCCESS || wc.byte_len != size || q < 0) {
			printf("FAIL rate: receive completion %s, %u bytes\n", ibv_wc_status_str(wc.status), wc.byte_len);
			return -1;
		}
		r = sge(&B, (uint32_t)q * size % REGION, size);
		if (post_recv(B.qp[q], wc.wr_id, &r, 1))
			return -1;
		(*got)++;
	}
	return 0;
}

static uint32_t draw(uint32_t n)
{
	rng = rng * 1103515245u + 12345u;
	return (rng >> 8) % n;
}

int rate(enum ibv_wr_opcode op, uint32_t size, int nq, uint32_t n, int inl, int random_order)
{
	static uint64_t low[MAXQ]; /* the lowest wr_id QP q may complete next */
	uint32_t posted = 0, done = 0, got = 0, out[MAXQ] = {0}, i, k;
	uint32_t span = (uint64_t)nq * size < REGION ? (uint32_t)nq * size : REGION;
	uint32_t depth = RATE_CQ / (uint32_t)nq < RATE_DEPTH ? RATE_CQ / (uint32_t)nq : RATE_DEPTH;
	uint32_t off, next = 0, rkey = B.mr->rkey; /* round robin: the QP after the last one offered a message */
	uint64_t first = UINT64_MAX, last = 0, start, end, dst;
	time_t t0;
	struct timespec w0, w1;
	struct ibv_wc wc;
	char keys[32];
	int q;

	depth = depth ? depth : 1;
	if (rate_keys > RATE_KEYS || (rate_keys > 1 && register_keys(span)) ||
	    (rate_span && (op != IBV_WR_RDMA_WRITE || rate_span < size || register_span(n))))
		return -1;
	memset(low, 0, sizeof(low));
	/* what moves: A's to B (a READ: B's to A) */
	fill(op == IBV_WR_RDMA_READ ? B.buf : A.buf, span, size + (uint32_t)nq);
	memset(op == IBV_WR_RDMA_READ ? A.buf : B.buf, 0, span);
	for (q = 0; q < nq && A.qp[q]; q++)
		; /* connected by an earlier run (curve) */
	new_pairs(q, nq);
	for (; op == IBV_WR_SEND && q < nq; q++) {
		for (i = 0; i < depth; i++) {
			struct ibv_sge r = sge(&B, (uint32_t)q * size % REGION, size);

			if (post_recv(B.qp[q], i, &r, 1))
				return -1;
		}
	}
	t0 = time(NULL); /* the 600 s allowed are the messages', not the connections' */
	clock_gettime(CLOCK_MONOTONIC, &w0);
	while (done < n) {
		for (k = 0; k < (uint32_t)nq && posted < n && posted - done < RATE_CQ; k++) {
			struct ibv_sge s;

			q = random_order ? (int)draw((uint32_t)nq) : (int)(next++ % (uint32_t)nq);
			off = (uint32_t)q * size % REGION;
			s = sge(&A, off, size);
			if (out[q] == depth)
				continue;
			if (rate_keys > 1) {
				int j = (int)draw((uint32_t)rate_keys);

				s.lkey = key_mr[0][j]->lkey;
				rkey = key_mr[1][j]->rkey;
			}
			dst = (uintptr_t)B.buf + off;
			if (rate_span) {
				span_off[posted] = (uint64_t)draw((uint32_t)(rate_span / size)) * size;
				s = (struct ibv_sge){(uintptr_t)span_of[0].buf + span_off[posted], size, span_of[0].mr->lkey};
				dst = (uintptr_t)span_of[1].buf + span_off[posted];
				rkey = span_of[1].mr->rkey;
			}
			if (post(A.qp[q], op, posted, &s, 1, dst, rkey, inl ? IBV_SEND_INLINE : 0))
				return -1;
			out[q]++;
			posted++;
		}
		if (ibv_poll_cq(A.cq, 1, &wc) == 1) {
			q = qp_of(&A, wc.qp_num, nq);
			if (wc.status != IBV_WC_SUCCESS || wc.byte_len != size || q < 0 || !out[q] ||
			    wc.wr_id < low[q]) {
				printf("FAIL rate: completion %s, %u bytes, wr_id %llu\n", ibv_wc_status_str(wc.status),
				       wc.byte_len, (unsigned long long)wc.wr_id);
				return -1;
			}
			low[q] = wc.wr_id + 1;
			rnicdv_cq_last_ts(A.cq, &start, &end);
			first = end < first ? end : first;
			last = end > last ? end : last;
			out[q]--;
			done++;
		}
		if (op == IBV_WR_SEND && rate_recv(nq, size, &got))
			return -1;
		if (time(NULL) - t0 > 600) {
			printf("FAIL rate: %u of %u completions\n", done, n);
			return -1;
		}
	}
	while (op == IBV_WR_SEND && got < n && time(NULL) - t0 < 600)
		if (rate_recv(nq, size, &got))
			return -1;
	clock_gettime(CLOCK_MONOTONIC, &w1);
	/* the region of every QP that completed a message (at random, some may have none) */
	for (q = 0; q < nq; q++) {
		off = (uint32_t)q * size % REGION;
		if (!rate_span && low[q] && op == IBV_WR_RDMA_READ && !settle(A.buf + off, B.buf + off, size)) {
			printf("FAIL rate: the data read into A is not B's (QP %d)\n", q);
			return -1;
		}
		if (!rate_span && low[q] && op != IBV_WR_RDMA_READ && !settle(B.buf + off, A.buf + off, size)) {
			printf("FAIL rate: the data in B is not A's (QP %d)\n", q);
			return -1;
		}
	}
	for (i = 0; rate_span && i < n; i++)
		if (!settle(span_of[1].buf + span_off[i], span_of[0].buf + span_off[i], size)) {
			printf("FAIL rate: the data in B is not A's (message %u)\n", i);
			return -1;
		}
	/* the wall time of the run says how fast the simulators went while the link was busy */
	if (rate_span)
		snprintf(keys, sizeof(keys), ", %llu MiB at random", (unsigned long long)(rate_span >> 20));
	else
		snprintf(keys, sizeof(keys), ", %d keys a side", rate_keys);
	printf("rate %s %u B %s, %d QPs%s, %u messages%s: %llu cycles, %.3f M messages/s, %.3f s wall\n",
	       op == IBV_WR_SEND ? "send" : op == IBV_WR_RDMA_READ ? "read" : "write", size, inl ? "inline" : "sge", nq, random_order ? " random" : "", n,
	       rate_keys > 1 || rate_span ? keys : "",
	       (unsigned long long)(last - first), (n - 1) / ((double)(last - first) / (double)rnicdv_clock_hz(A.ctx)) / 1e6,
	       (double)(w1.tv_sec - w0.tv_sec) + (w1.tv_nsec - w0.tv_nsec) / 1e9);
	return 0;
}

#define LAT_RECV_AHEAD 8

/* ---- latency: n signaled 8-byte WRITEs, SENDs or READs on one QP, one at a time; NIC timestamps
 * from each doorbell (or pushed WQE) to its CQE: the host's reaction between two is not counted */
int lat(enum ibv_wr_opcode op, uint32_t n, int inl)
{
	uint64_t sum = 0, best = UINT64_MAX, start, end;
	struct ibv_sge s = sge(&A, 0, 8), r = sge(&B, 0, 8);
	struct ibv_wc wc, wb;
	const char *name = op == IBV_WR_SEND ? "send" : op == IBV_WR_RDMA_READ ? "read" : "write";
	uint32_t i;
	double hz;

	new_pair(0);
	hz = (double)rnicdv_clock_hz(A.ctx);
	/* receives posted ahead, as perftest does: a SEND finds its receive WQE fetched */
	for (i = 0; op == IBV_WR_SEND && i < LAT_RECV_AHEAD; i++)
		if (post_recv(B.qp[0], i, &r, 1))
			return -1;
	for (i = 0; i < n; i++) {
		if ((op == IBV_WR_SEND && i && post_recv(B.qp[0], i + LAT_RECV_AHEAD - 1, &r, 1)) ||
		    post(A.qp[0], op, i, &s, 1, (uintptr_t)B.buf, B.mr->rkey, inl ? IBV_SEND_INLINE : 0) ||
		    !poll1(&A, &wc, 60) || wc.status != IBV_WC_SUCCESS ||
		    (op == IBV_WR_SEND && (!poll1(&B, &wb, 60) || wb.status != IBV_WC_SUCCESS || wb.byte_len != 8))) {
			printf("FAIL lat: %s %u\n", name, i);
			return -1;
		}
		rnicdv_cq_last_ts(A.cq, &start, &end);
		sum += end - start;
		best = end - start < best ? end - start : best;
	}
	printf("lat %s 8 B %s, %u messages: doorbell to CQE %.0f ns mean, %.0f ns best\n", name, inl ? "inline" : "sge",
	       n, sum / (double)n / hz * 1e9, best / hz * 1e9);
	return 0;
}
