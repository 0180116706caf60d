/* rc_ops faults: RDMA WRITEs (and with mixed ops, SENDs and FETCH_ADDs too) from A to B, each
 * under one of up to three registrations of each side's buffer, while the hosts refuse some of their NICs' DMA reads (rnic-sim --dma-rd-fail): each completes, in order,
 * with success and its data in place, or with the error that names the refusal (A's: LOC_PROT_ERR
 * for a payload, key or translation, LOC_QP_OP_ERR for the WQE; B's: REM_ACCESS_ERR for a key or
 * translation, REM_OP_ERR for a receive WQE or an atomic operand, which fails B's receive with
 * LOC_PROT_ERR) or a flush; no byte at B is anything but the source's or untouched, and each
 * QP's atomic counter at B is the sum of the adds that succeeded. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rc_common.h"

#define UNTOUCHED 0xee
#define MAX_LEN (12u << 10)
#define DATA_END (REGION - 4096) /* then B's counter a QP, A's fetched values a WR slot: 8 bytes each */

int fault_mix;

struct flane {
	uint64_t posted, done;           /* A's requests */
	uint64_t rposted, rdone;         /* B's receives, one a SEND */
	uint32_t off[DEPTH], len[DEPTH]; /* outstanding, by sequence number % DEPTH */
	uint32_t roff[DEPTH], rlen[DEPTH];
	uint64_t add[DEPTH];             /* FETCH_ADD's add, or 0 */
	uint32_t next_off, area;
	uint64_t counter;                /* B's counter as the successful adds left it */
	int counter_known, in_error, real_error, b_flushing;
};

/* the buffers' registrations (--mix-keys): each request names one of them at random, on each side */
static struct ibv_mr *keyed[2][3];
static int nkeys = 1;

static struct ibv_sge sge_k(struct side *s, uint32_t off, uint32_t len, int k)
{
	struct ibv_sge g = sge(s, off, len);

	g.lkey = keyed[s == &B][k]->lkey;
	return g;
}

static uint64_t n_ok, n_prot, n_qpop, n_rem, n_remop, n_flush, n_recv_ok, n_recv_prot, n_add_ok;

static uint64_t *counter_at(int q)
{
	return (uint64_t *)(B.buf + DATA_END + 8 * (uint32_t)q);
}

/* where FETCH_ADD k of lane q leaves the value it fetched */
static uint32_t fetched_off(int q, uint64_t k)
{
	return DATA_END + 8 * ((uint32_t)q * DEPTH + (uint32_t)(k % DEPTH));
}

static int check_wc(struct flane *l, int q, const struct ibv_wc *wc)
{
	uint64_t k = l->done, add = l->add[k % DEPTH];
	uint32_t off = l->off[k % DEPTH], len = l->len[k % DEPTH];

	if (wc->wr_id != ((uint64_t)q << 32 | k)) {
		printf("FAIL lane %d: completion %llu has wr_id %#llx (status %s)\n", q, (unsigned long long)k,
		       (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status));
		return -1;
	}
	if (wc->status != IBV_WC_SUCCESS && add)
		l->counter_known = 0; /* it may have been added at B */
	switch (wc->status) {
	case IBV_WC_SUCCESS:
		if (l->in_error) {
			printf("FAIL lane %d: WR %llu succeeded after an error\n", q, (unsigned long long)k);
			return -1;
		}
		if (add) {
			uint64_t was;

			memcpy(&was, A.buf + fetched_off(q, k), 8);

			if (l->counter_known && was != l->counter) {
				printf("FAIL lane %d: FETCH_ADD %llu (+%llu) fetched %#llx, the counter was %#llx\n", q,
				       (unsigned long long)k, (unsigned long long)add, (unsigned long long)was,
				       (unsigned long long)l->counter);
				return -1;
			}
			l->counter = was + add;
			l->counter_known = 1;
			n_add_ok++;
		} else if (!settle(B.buf + off, A.buf + off, len)) {
			printf("FAIL lane %d: WR %llu (%u bytes at %#x) succeeded, its data did not land\n", q,
			       (unsigned long long)k, len, off);
			return -1;
		}
		n_ok++;
		return 0;
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_REM_ACCESS_ERR:
	case IBV_WC_REM_OP_ERR:
		if (l->real_error) {
			printf("FAIL lane %d: a second error (%s) before the QP was reset\n", q,
			       ibv_wc_status_str(wc->status));
			return -1;
		}
		l->real_error = 1;
		*(wc->status == IBV_WC_LOC_PROT_ERR ? &n_prot : wc->status == IBV_WC_LOC_QP_OP_ERR ? &n_qpop :
		  wc->status == IBV_WC_REM_ACCESS_ERR ? &n_rem : &n_remop) += 1;
		break;
	case IBV_WC_WR_FLUSH_ERR:
		n_flush++;
		break;
	default:
		printf("FAIL lane %d: WR %llu: %s\n", q, (unsigned long long)k, ibv_wc_status_str(wc->status));
		return -1;
	}
	l->in_error = 1;
	return 0;
}

/* B's receive of a SEND: its bytes in place, refused (LOC_PROT_ERR) or flushed */
static int check_recv(struct flane *l, int q, const struct ibv_wc *wc)
{
	uint64_t k = l->rdone;
	uint32_t off = l->roff[k % DEPTH], len = l->rlen[k % DEPTH];

	if (wc->wr_id != ((uint64_t)q << 32 | k)) {
		printf("FAIL lane %d: receive %llu has wr_id %#llx (status %s)\n", q, (unsigned long long)k,
		       (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status));
		return -1;
	}
	if (wc->status == IBV_WC_SUCCESS) {
		if (wc->byte_len != len || memcmp(B.buf + off, A.buf + off, len)) {
			printf("FAIL lane %d: receive %llu (%u bytes at %#x) has %u bytes or not the source's\n", q,
			       (unsigned long long)k, len, off, wc->byte_len);
			return -1;
		}
		n_recv_ok++;
	} else if (wc->status == IBV_WC_LOC_PROT_ERR) {
		n_recv_prot++;
	} else if (wc->status != IBV_WC_WR_FLUSH_ERR) {
		printf("FAIL lane %d: receive %llu: %s\n", q, (unsigned long long)k, ibv_wc_status_str(wc->status));
		return -1;
	}
	l->rdone++;
	return 0;
}

/* every byte of B's data: untouched, or the source's at the same offset */
static int check_memory(void)
{
	uint32_t i;

	for (i = 0; i < DATA_END; i++)
		if (B.buf[i] != UNTOUCHED && B.buf[i] != A.buf[i]) {
			printf("FAIL B's byte at %#x is %#x: neither the source's (%#x) nor untouched\n", i, B.buf[i],
			       A.buf[i]);
			return -1;
		}
	return 0;
}

/* the next request of lane q: a WRITE, or with fault_mix a SEND (B's receive posted first) or a
 * FETCH_ADD on the lane's counter */
static void post_next(struct flane *l, int q)
{
	uint32_t len = 1 + (rng = rng * 1103515245u + 12345u) % MAX_LEN, off, kind = fault_mix ? (rng >> 16) % 10 : 0;
	uint64_t id = (uint64_t)q << 32 | l->posted;
	int ka = (int)(rng >> 4) % nkeys, kb = (int)(rng >> 12) % nkeys;
	struct ibv_sge s;

	l->add[l->posted % DEPTH] = 0;
	if (kind >= 8) {
		struct ibv_send_wr wr = {0}, *bad;

		s = sge_k(&A, fetched_off(q, l->posted), 8, ka);
		wr.wr_id = id;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.sg_list = &s;
		wr.num_sge = 1;
		wr.send_flags = IBV_SEND_SIGNALED;
		wr.wr.atomic.remote_addr = (uintptr_t)counter_at(q);
		wr.wr.atomic.rkey = keyed[1][kb]->rkey;
		wr.wr.atomic.compare_add = l->add[l->posted % DEPTH] = 1 + (rng >> 8) % 1000;
		if (ibv_post_send(A.qp[q], &wr, &bad))
			die("ibv_post_send", EIO);
		l->posted++;
		return;
	}
	if (l->next_off + len > l->area)
		l->next_off = 0;
	off = (uint32_t)q * l->area + l->next_off;
	l->next_off += len;
	l->off[l->posted % DEPTH] = off;
	l->len[l->posted % DEPTH] = len;
	s = sge_k(&A, off, len, ka);
	if (kind >= 5) {
		struct ibv_sge r = sge_k(&B, off, len, kb);

		l->roff[l->rposted % DEPTH] = off;
		l->rlen[l->rposted % DEPTH] = len;
		if (post_recv(B.qp[q], (uint64_t)q << 32 | l->rposted, &r, 1))
			die("ibv_post_recv", EIO);
		l->rposted++;
		if (post(A.qp[q], IBV_WR_SEND, id, &s, 1, 0, 0, 0))
			die("ibv_post_send", EIO);
	} else if (post(A.qp[q], IBV_WR_RDMA_WRITE, id, &s, 1, (uintptr_t)(B.buf + off), keyed[1][kb]->rkey, 0)) {
		die("ibv_post_send", EIO);
	}
	l->posted++;
}

/* a lane whose requests are all in after an error: B's receives flushed (B's QP to error), then
 * both QPs back to RTS */
static int restart(struct flane *l, int q)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};

	if (!l->real_error) {
		printf("FAIL lane %d: flushed with no error to say why\n", q);
		return -1;
	}
	if (!l->b_flushing) {
		if (ibv_modify_qp(B.qp[q], &attr, IBV_QP_STATE))
			die("ibv_modify_qp ERR", EIO);
		l->b_flushing = 1;
	}
	if (l->rdone < l->rposted)
		return 0;
	connect_pair(q, 7);
	l->in_error = l->real_error = l->b_flushing = 0;
	return 0;
}

/* the next completion of either side, within 60 s (an empty poll sleeps in the library) */
static int next_wc(struct side **s, struct ibv_wc *wc)
{
	time_t start = time(NULL);

	while (time(NULL) - start <= 60) {
		if (ibv_poll_cq(B.cq, 1, wc) == 1) {
			*s = &B;
			return 1;
		}
		if (ibv_poll_cq(A.cq, 1, wc) == 1) {
			*s = &A;
			return 1;
		}
	}
	return 0;
}

int faults(uint64_t per_lane, int nq, int depth, int keys)
{
	static struct flane lanes[16];
	uint32_t area = DATA_END / (uint32_t)nq;
	int q, busy = nq, k;
	struct ibv_wc wc;
	struct side *s;

	nkeys = keys;
	keyed[0][0] = A.mr;
	keyed[1][0] = B.mr;
	for (k = 1; k < keys; k++) {
		keyed[0][k] = ibv_reg_mr(A.pd, A.buf, REGION, IBV_ACCESS_LOCAL_WRITE | ALL_ACCESS);
		keyed[1][k] = ibv_reg_mr(B.pd, B.buf, REGION, IBV_ACCESS_LOCAL_WRITE | ALL_ACCESS);
		if (!keyed[0][k] || !keyed[1][k])
			die("ibv_reg_mr", errno);
	}

	fill(A.buf, REGION, 7);
	memset(B.buf, UNTOUCHED, REGION);
	for (q = 0; q < nq; q++) {
		new_pair(q);
		lanes[q].area = area;
		*counter_at(q) = 0;
		lanes[q].counter_known = 1;
	}
	while (busy) {
		busy = 0;
		for (q = 0; q < nq; q++) {
			struct flane *l = &lanes[q];

			if (l->in_error && l->done == l->posted && restart(l, q))
				return -1;
			while (!l->in_error && l->posted < per_lane && l->posted - l->done < (uint64_t)depth)
				post_next(l, q);
			busy |= l->done < per_lane || l->rdone < l->rposted;
		}
		if (!busy)
			break;
		if (!next_wc(&s, &wc)) {
			printf("FAIL no completion in 60 s\n");
			return -1;
		}
		for (q = 0; q < nq && s->qp[q]->qp_num != wc.qp_num; q++)
			;
		if (q == nq || (s == &A ? lanes[q].done == lanes[q].posted : lanes[q].rdone == lanes[q].rposted)) {
			printf("FAIL a completion for %s's QP %#x, none outstanding there\n", s == &A ? "A" : "B", wc.qp_num);
			return -1;
		}
		if (s == &B) {
			if (check_recv(&lanes[q], q, &wc))
				return -1;
			continue;
		}
		if (check_wc(&lanes[q], q, &wc))
			return -1;
		lanes[q].done++;
	}
	for (q = 0; q < nq; q++)
		if (lanes[q].counter_known && *counter_at(q) != lanes[q].counter) {
			printf("FAIL lane %d: B's counter is %#llx, the adds that succeeded make %#llx\n", q,
			       (unsigned long long)*counter_at(q), (unsigned long long)lanes[q].counter);
			return -1;
		}
	printf("faults: %llu requests succeeded, %llu LOC_PROT_ERR, %llu LOC_QP_OP_ERR, %llu REM_ACCESS_ERR, %llu flushed\n",
	       (unsigned long long)n_ok, (unsigned long long)n_prot, (unsigned long long)n_qpop,
	       (unsigned long long)n_rem, (unsigned long long)n_flush);
	if (fault_mix)
		printf("faults mixed: %llu REM_OP_ERR, %llu FETCH_ADDs succeeded, B's receives %llu succeeded, %llu LOC_PROT_ERR\n",
		       (unsigned long long)n_remop, (unsigned long long)n_add_ok, (unsigned long long)n_recv_ok,
		       (unsigned long long)n_recv_prot);
	return check_memory();
}
