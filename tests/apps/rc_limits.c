/* rc_ops limits: every kind of object created up to the limit ibv_query_device reports, the next
 * one refused with ENOMEM (what rdma-core's providers return when the device is out of them),
 * all freed and created to the limit again (the firmware freed every one). On the full QP table
 * of both NICs, each QP pair connected and one WRITE moved on it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rnic/rnicdv.h>

#include "rc_common.h"

#define MAXOBJ 32768 /* above any limit the device reports today */

struct kind {
	const char *name;
	void *(*make)(struct side *s);
	int (*drop)(void *o);
};

static void *make_cq(struct side *s)
{
	return ibv_create_cq(s->ctx, 16, NULL, NULL, 0);
}

static int drop_cq(void *o)
{
	return ibv_destroy_cq(o);
}

static void *make_pd(struct side *s)
{
	return ibv_alloc_pd(s->ctx);
}

static int drop_pd(void *o)
{
	return ibv_dealloc_pd(o);
}

static void *make_mr(struct side *s)
{
	return ibv_reg_mr(s->pd, s->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
}

static int drop_mr(void *o)
{
	return ibv_dereg_mr(o);
}

static void *make_srq(struct side *s)
{
	struct ibv_srq_init_attr a = {.attr = {.max_wr = 16, .max_sge = 1}};

	return ibv_create_srq(s->pd, &a);
}

static int drop_srq(void *o)
{
	return ibv_destroy_srq(o);
}

static void *make_rc_qp(struct side *s)
{
	return try_qp(s, 4, 1, 0);
}

static int drop_qp(void *o)
{
	return ibv_destroy_qp(o);
}

/* objects of kind k on s until one is refused: the count, which must be `limit`, and the refusal
 * ENOMEM; -1 otherwise */
static int fill_up(struct side *s, const struct kind *k, int limit, void **objs)
{
	uint64_t t0 = rnicdv_read_clock(s->ctx);
	int n;

	for (n = 0; n < MAXOBJ; n++) {
		errno = 0;
		if (!(objs[n] = k->make(s)))
			break;
	}
	if (n == MAXOBJ || errno != ENOMEM || n != limit) {
		printf("FAIL limits: %s: %d created, the device's limit leaves %d, then %s (ENOMEM expected)\n", k->name,
		       n, limit, n == MAXOBJ ? "no refusal" : strerror(errno));
		return -1;
	}
	printf("limits: %d %ss in %llu NIC cycles\n", n, k->name, (unsigned long long)(rnicdv_read_clock(s->ctx) - t0));
	return n;
}

static int free_all(const struct kind *k, void **objs, int n)
{
	int i, ret;

	for (i = 0; i < n; i++)
		if ((ret = k->drop(objs[i]))) {
			printf("FAIL limits: freeing %s %d: %s\n", k->name, i, strerror(ret));
			return -1;
		}
	return 0;
}

#define OUTSTANDING 512 /* WRITEs in flight while pairs connect: A's CQ holds more */

/* WRITE completions from A's CQ until at most `left` are outstanding: each a success, each WR
 * once (seen) */
static int reap(int *out, int left, uint8_t *seen, int n)
{
	struct ibv_wc wc = {0};

	while (*out > left) {
		if (!poll1(&A, &wc, 120) || wc.status != IBV_WC_SUCCESS || wc.wr_id >= (uint64_t)n || seen[wc.wr_id]) {
			printf("FAIL limits: a WRITE of %d: %s, wr_id %llu\n", n,
			       wc.status == IBV_WC_SUCCESS ? "no completion, or not once" : ibv_wc_status_str(wc.status),
			       (unsigned long long)wc.wr_id);
			return -1;
		}
		seen[wc.wr_id] = 1;
		--*out;
	}
	return 0;
}

/* Every QP pair of the full tables connected, a WRITE of 64 bytes each as it is, all landed */
static int move_data(struct ibv_qp **qa, struct ibv_qp **qb, int n)
{
	static uint8_t seen[MAXOBJ];
	int i, out = 0;

	fill(A.buf, (uint32_t)n * 64, 77);
	memset(B.buf, 0, (size_t)n * 64);
	memset(seen, 0, sizeof(seen));
	uint64_t t0 = rnicdv_read_clock(A.ctx);

	for (i = 0; i < n; i++) {
		struct ibv_sge s = sge(&A, (uint32_t)i * 64, 64);

		connect_qp(qa[i], &B, qb[i], 7, ALL_ACCESS);
		connect_qp(qb[i], &A, qa[i], 7, ALL_ACCESS);
		if (post(qa[i], IBV_WR_RDMA_WRITE, (uint64_t)i, &s, 1, (uintptr_t)B.buf + (uint32_t)i * 64, B.mr->rkey, 0)) {
			printf("FAIL limits: post on QP %d of %d\n", i, n);
			return -1;
		}
		if (++out == OUTSTANDING && reap(&out, OUTSTANDING / 2, seen, n))
			return -1;
	}
	if (reap(&out, 0, seen, n))
		return -1;
	printf("limits: %d QP pairs connected, a WRITE each, in %llu NIC cycles\n", n,
	       (unsigned long long)(rnicdv_read_clock(A.ctx) - t0));
	if (!settle(A.buf, B.buf, (uint32_t)n * 64)) {
		printf("FAIL limits: the WRITEs' data did not all land\n");
		return -1;
	}
	return 0;
}

int limits(void)
{
	static void *objs[MAXOBJ], *objs_b[MAXOBJ];
	const struct kind qp = {"QP", make_rc_qp, drop_qp};
	struct ibv_device_attr da;
	int round, n;

	if (ibv_query_device(A.ctx, &da))
		die("ibv_query_device", errno);
	printf("limits: max_qp %d max_cq %d max_mr %d max_pd %d max_srq %d\n", da.max_qp, da.max_cq, da.max_mr,
	       da.max_pd, da.max_srq);
	for (round = 0; round < 2; round++) {
		/* open_side holds a CQ, a PD and an MR of each side */
		const struct {
			struct kind k;
			int limit;
		} kinds[] = {{{"CQ", make_cq, drop_cq}, da.max_cq - 1}, {{"PD", make_pd, drop_pd}, da.max_pd - 1},
			     {{"MR", make_mr, drop_mr}, da.max_mr - 1}, {{"SRQ", make_srq, drop_srq}, da.max_srq}};

		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if ((n = fill_up(&A, &kinds[k].k, kinds[k].limit, objs)) < 0 || free_all(&kinds[k].k, objs, n))
				return -1;
		if ((n = fill_up(&A, &qp, da.max_qp, objs)) < 0 || fill_up(&B, &qp, da.max_qp, objs_b) < 0)
			return -1;
		if (round == 0 && move_data((struct ibv_qp **)objs, (struct ibv_qp **)objs_b, n))
			return -1;
		if (free_all(&qp, objs, n) || free_all(&qp, objs_b, n))
			return -1;
		printf("limits: round %d: every kind created to its limit, the next refused (ENOMEM), all freed%s\n",
		       round, round ? "" : "; a WRITE on each connected QP pair");
	}
	return 0;
}
