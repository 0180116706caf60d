/* rc_ops mix: many operations of every kind over several QPs, each completion checked. */
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

enum { K_SEND, K_SEND_IMM, K_WRITE, K_WRITE_IMM, K_READ, K_CAS, K_FA, NKIND };
static const char *const kind_name[NKIND] = {"send", "send_imm", "write", "write_imm", "read", "cmp_swap",
					     "fetch_add"};

#define LANE (1u << 20)
#define SLOT (64u << 10)
#define RSLOT (32u << 10)
#define RD_AREA (768u << 10)
#define RD_LEN (LANE - 4096 - RD_AREA)

struct op {
	uint8_t kind;
	uint32_t len, roff, seed;
	uint64_t expect;       /* atomics: the value returned */
};

struct lane {
	struct op ops[DEPTH];  /* outstanding, by sequence number % DEPTH */
	uint64_t posted, done;
	struct op rq[64];      /* receive-consuming ops in order, for B */
	uint64_t rq_head, rq_tail;
	uint64_t b_done;
	uint64_t fa, cas;      /* atomics posted */
	uint8_t *shadow;       /* expected contents of B's write area */
};

static struct lane lanes[MAXQ];
static uint64_t counts[NKIND];

static uint32_t rnd(uint32_t n)
{
	rng = rng * 1103515245u + 12345u;
	return (rng >> 8) % n;
}

static uint32_t rnd_len(uint32_t max)
{
	switch (rnd(4)) {
	case 0:
		return rnd(65);
	case 1:
		return rnd(4097);
	default:
		return rnd(max + 1);
	}
}

/* More registrations of each side's buffer (--mix-keys): piece k of a scatter list is under key
 * k, so that one work request names up to three memory regions. Each takes the firmware a while
 * to map (1 M cycles), so only the table check asks for them. */
static struct ibv_mr *more_mr[2][2];
static int nkeys = 1;

/* s in n pieces (the same bytes; n <= 3), piece k under the (k % nkeys)-th of the buffer's keys */
static void split_sge(const struct ibv_sge *s, struct ibv_sge *sg, int n, struct ibv_mr *const *more)
{
	int k;

	for (k = 0; k < n; k++) {
		uint32_t from = s->length * (uint32_t)k / (uint32_t)n, to = s->length * (uint32_t)(k + 1) / (uint32_t)n;

		sg[k] = *s;
		sg[k].addr = s->addr + from;
		sg[k].length = to - from;
		if (k % nkeys)
			sg[k].lkey = more[k % nkeys - 1]->lkey;
	}
}

static int mix_post(int q)
{
	struct lane *l = &lanes[q];
	uint64_t seq = l->posted;
	struct op *o = &l->ops[seq % DEPTH];
	uint32_t base = (uint32_t)q * LANE, slot = (uint32_t)(seq % DEPTH);
	struct ibv_sge s, sg[3];
	enum ibv_wr_opcode op;
	uint64_t raddr = 0;
	int ret, nsge = 1;

	memset(o, 0, sizeof(*o));
	o->kind = (uint8_t)rnd(NKIND);
	o->seed = (uint32_t)(seq * 977 + (uint32_t)q);
	if ((o->kind == K_SEND || o->kind == K_SEND_IMM || o->kind == K_WRITE_IMM) && l->rq_tail - l->rq_head >= 64)
		o->kind = K_WRITE;
	switch (o->kind) {
	case K_SEND:
	case K_SEND_IMM:
		o->len = rnd_len(RSLOT);
		fill(A.buf + base + 512 * 1024 + slot * SLOT, o->len, o->seed);
		s = sge(&A, base + 512 * 1024 + slot * SLOT, o->len);
		op = o->kind == K_SEND ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM;
		l->rq[l->rq_tail++ % 64] = *o;
		break;
	case K_WRITE:
	case K_WRITE_IMM:
		o->len = rnd_len(SLOT);
		fill(A.buf + base + 512 * 1024 + slot * SLOT, o->len, o->seed);
		s = sge(&A, base + 512 * 1024 + slot * SLOT, o->len);
		raddr = (uintptr_t)(B.buf + base + slot * SLOT);
		memcpy(l->shadow + slot * SLOT, A.buf + base + 512 * 1024 + slot * SLOT, o->len);
		op = o->kind == K_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
		if (o->kind == K_WRITE_IMM)
			l->rq[l->rq_tail++ % 64] = *o;
		break;
	case K_READ:
		o->len = rnd_len(SLOT);
		o->roff = rnd(RD_LEN - o->len + 1);
		memset(A.buf + base + slot * SLOT, 0, o->len);
		s = sge(&A, base + slot * SLOT, o->len);
		raddr = (uintptr_t)(B.buf + base + RD_AREA + o->roff);
		op = IBV_WR_RDMA_READ;
		break;
	default:
		o->len = 8;
		s = sge(&A, base + slot * SLOT, 8);
		memset(A.buf + base + slot * SLOT, 0xee, 8);
		raddr = (uintptr_t)(B.buf + base + LANE - (o->kind == K_CAS ? 16 : 8));
		o->expect = o->kind == K_CAS ? l->cas++ : l->fa++;
		op = o->kind == K_CAS ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
		break;
	}
	if (o->kind != K_CAS && o->kind != K_FA)
		nsge = 1 + (int)(seq % 3);
	split_sge(&s, sg, nsge, more_mr[0]);
	{
		struct ibv_send_wr wr = {0}, *bad;

		wr.wr_id = seq;
		wr.opcode = op;
		wr.sg_list = sg;
		wr.num_sge = nsge;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.imm_data = htonl(o->seed);
		if (o->kind == K_CAS || o->kind == K_FA) {
			wr.wr.atomic.remote_addr = raddr;
			wr.wr.atomic.rkey = B.mr->rkey;
			wr.wr.atomic.compare_add = o->kind == K_CAS ? o->expect : 1;
			wr.wr.atomic.swap = o->expect + 1;
		} else {
			wr.wr.rdma.remote_addr = raddr;
			wr.wr.rdma.rkey = B.mr->rkey;
		}
		ret = ibv_post_send(A.qp[q], &wr, &bad);
	}
	if (ret) {
		printf("FAIL mix: post_send: %s\n", strerror(ret));
		return -1;
	}
	counts[o->kind]++;
	l->posted++;
	return 0;
}

static int qp_index(const struct side *s, uint32_t qpn, int nq)
{
	int i;

	for (i = 0; i < nq; i++)
		if (s->qp[i]->qp_num == qpn)
			return i;
	return -1;
}

static int mix_check_a(const struct ibv_wc *wc, int nq)
{
	static const enum ibv_wc_opcode wop[NKIND] = {IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
						      IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP, IBV_WC_FETCH_ADD};
	int q = qp_index(&A, wc->qp_num, nq);
	struct lane *l = &lanes[q < 0 ? 0 : q];
	struct op *o = &l->ops[l->done % DEPTH];
	uint32_t base = (uint32_t)q * LANE, slot = (uint32_t)(l->done % DEPTH);

	if (q < 0 || wc->status != IBV_WC_SUCCESS || wc->wr_id != l->done || wc->opcode != wop[o->kind] ||
	    wc->byte_len != o->len) {
		printf("FAIL mix: QP %d op %llu (%s): status %s wr_id %llu opcode %d len %u, want len %u\n", q,
		       (unsigned long long)l->done, kind_name[o->kind], ibv_wc_status_str(wc->status),
		       (unsigned long long)wc->wr_id, wc->opcode, wc->byte_len, o->len);
		return -1;
	}
	if (o->kind == K_READ && memcmp(A.buf + base + slot * SLOT, B.buf + base + RD_AREA + o->roff, o->len)) {
		printf("FAIL mix: QP %d op %llu: READ data\n", q, (unsigned long long)l->done);
		return -1;
	}
	if ((o->kind == K_CAS || o->kind == K_FA) && *(uint64_t *)(A.buf + base + slot * SLOT) != o->expect) {
		printf("FAIL mix: QP %d op %llu: %s returned %llu, want %llu\n", q, (unsigned long long)l->done,
		       kind_name[o->kind], (unsigned long long)*(uint64_t *)(A.buf + base + slot * SLOT),
		       (unsigned long long)o->expect);
		return -1;
	}
	l->done++;
	return 0;
}

static int b_post_recv(int q, uint64_t id)
{
	struct ibv_sge s = sge(&B, (uint32_t)q * LANE + 512 * 1024 + (uint32_t)(id % 8) * RSLOT, RSLOT), sg[3];
	int n = 1 + (int)(id % 3);

	split_sge(&s, sg, n, more_mr[1]);
	return post_recv(B.qp[q], id, sg, n);
}

static int mix_check_b(const struct ibv_wc *wc, int nq)
{
	int q = qp_index(&B, wc->qp_num, nq);
	struct lane *l = &lanes[q < 0 ? 0 : q];
	struct op *o = &l->rq[l->rq_head % 64];
	uint8_t want[RSLOT];
	int imm = o->kind != K_SEND;

	if (q < 0 || l->rq_head == l->rq_tail || wc->status != IBV_WC_SUCCESS || wc->wr_id != l->b_done ||
	    wc->opcode != (o->kind == K_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV) ||
	    wc->byte_len != o->len || !!(wc->wc_flags & IBV_WC_WITH_IMM) != imm ||
	    (imm && ntohl(wc->imm_data) != o->seed) || wc->src_qp != A.qp[q]->qp_num) {
		printf("FAIL mix: QP %d receive %llu: status %s wr_id %llu opcode %d len %u flags %x\n", q,
		       (unsigned long long)l->b_done, ibv_wc_status_str(wc->status), (unsigned long long)wc->wr_id,
		       wc->opcode, wc->byte_len, wc->wc_flags);
		return -1;
	}
	if (o->kind != K_WRITE_IMM) {
		fill(want, o->len, o->seed);
		if (memcmp(want, B.buf + (uint32_t)q * LANE + 512 * 1024 + (uint32_t)(wc->wr_id % 8) * RSLOT, o->len)) {
			printf("FAIL mix: QP %d receive %llu: data\n", q, (unsigned long long)l->b_done);
			return -1;
		}
	}
	l->rq_head++;
	l->b_done++;
	return b_post_recv(q, wc->wr_id + 8);
}

int mix(uint64_t n, int nq, int keys)
{
	struct ibv_wc wc[16];
	uint64_t total = 0, posted = 0, fa, cas, want[2];
	time_t last = time(NULL);
	int q, i, k;

	nkeys = keys;
	for (i = 0; i < 2 * (keys - 1); i++) {
		struct side *s = i & 1 ? &B : &A;

		more_mr[i & 1][i >> 1] = ibv_reg_mr(s->pd, s->buf, REGION, IBV_ACCESS_LOCAL_WRITE);
		if (!more_mr[i & 1][i >> 1])
			die("ibv_reg_mr", errno);
	}
	for (q = 0; q < nq; q++) {
		new_pair(q);
		lanes[q].shadow = calloc(1, 512 * 1024);
		fill(B.buf + (uint32_t)q * LANE + RD_AREA, RD_LEN, 1234 + (uint32_t)q);
		for (i = 0; i < 8; i++)
			if (b_post_recv(q, (uint64_t)i))
				return -1;
	}
	while (total < n) {
		for (q = 0; q < nq; q++)
			while (lanes[q].posted - lanes[q].done < DEPTH && posted < n) {
				if (mix_post(q))
					return -1;
				posted++;
			}
		k = ibv_poll_cq(A.cq, 16, wc);
		for (i = 0; i < k; i++)
			if (mix_check_a(&wc[i], nq))
				return -1;
		total += (uint64_t)(k > 0 ? k : 0);
		i = k;
		k = ibv_poll_cq(B.cq, 16, wc);
		for (int j = 0; j < k; j++)
			if (mix_check_b(&wc[j], nq))
				return -1;
		if (i > 0 || k > 0) {
			last = time(NULL);
		} else {
			if (time(NULL) - last > 300) {
				printf("FAIL mix: no completion for 300 s (%llu of %llu done)\n",
				       (unsigned long long)total, (unsigned long long)n);
				for (q = 0; q < nq; q++)
					printf("  QP %u: posted %llu, completed %llu, next op %s; receives completed %llu of %llu\n",
					       A.qp[q]->qp_num, (unsigned long long)lanes[q].posted,
					       (unsigned long long)lanes[q].done,
					       kind_name[lanes[q].ops[lanes[q].done % DEPTH].kind],
					       (unsigned long long)lanes[q].b_done, (unsigned long long)lanes[q].rq_tail);
				return -1;
			}
		}
	}
	/* the last receive completions, then the write areas */
	for (q = 0; q < nq; q++) {
		while (lanes[q].rq_head != lanes[q].rq_tail) {
			if (!poll1(&B, &wc[0], 120) || mix_check_b(&wc[0], nq)) {
				printf("FAIL mix: QP %d: receive completions missing\n", q);
				return -1;
			}
		}
		if (!settle(B.buf + (uint32_t)q * LANE, lanes[q].shadow, 512 * 1024)) {
			printf("FAIL mix: QP %d: WRITE data\n", q);
			return -1;
		}
		want[0] = lanes[q].cas;
		want[1] = lanes[q].fa;
		if (!settle(B.buf + (uint32_t)q * LANE + LANE - 16, (const uint8_t *)want, 16)) {
			memcpy(&cas, B.buf + (uint32_t)q * LANE + LANE - 16, 8);
			memcpy(&fa, B.buf + (uint32_t)q * LANE + LANE - 8, 8);
			printf("FAIL mix: QP %d: atomic targets: fetch-and-add %llu, want %llu; compare-and-swap %llu, want %llu\n",
			       q, (unsigned long long)fa, (unsigned long long)lanes[q].fa, (unsigned long long)cas,
			       (unsigned long long)lanes[q].cas);
			return -1;
		}
	}
	printf("mix: %llu operations on %d QPs completed exactly once, in order, data checked:",
	       (unsigned long long)total, nq);
	for (k = 0; k < NKIND; k++)
		printf(" %s=%llu", kind_name[k], (unsigned long long)counts[k]);
	printf("\n");
	return 0;
}

