/* rc_ops faults: RDMA WRITEs from A to B while the hosts refuse some of their NICs' DMA reads
 * (rnic-sim --dma-rd-fail): each completes, in order, with success and its data in place, or
 * with the error that names the refusal (A's: LOC_PROT_ERR for a payload, key or translation,
 * LOC_QP_OP_ERR for the WQE; B's: REM_ACCESS_ERR for a key or translation) or a flush; no byte
 * at B is anything but the source's or untouched. */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rc_common.h"

#define UNTOUCHED 0xee
#define MAX_LEN (12u << 10)

struct flane {
	uint64_t posted, done;
	uint32_t off[DEPTH], len[DEPTH]; /* outstanding, by sequence number % DEPTH */
	uint32_t next_off, area;
	int in_error, real_error;
};

static uint64_t n_ok, n_prot, n_qpop, n_rem, n_flush;

static int check_wc(struct flane *l, int q, const struct ibv_wc *wc)
{
	uint64_t k = l->done;
	uint32_t off = l->off[k % DEPTH], len = l->len[k % DEPTH];

	if (wc->wr_id != ((uint64_t)q << 32 | k)) {
		printf("FAIL lane %d: completion %llu has wr_id %#llx (status %s)\n", q, (unsigned long long)k,
		       (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status));
		return -1;
	}
	switch (wc->status) {
	case IBV_WC_SUCCESS:
		if (l->in_error) {
			printf("FAIL lane %d: WR %llu succeeded after an error\n", q, (unsigned long long)k);
			return -1;
		}
		if (memcmp(B.buf + off, A.buf + off, len)) {
			printf("FAIL lane %d: WR %llu (%u bytes at %#x) succeeded, its data did not land\n", q,
			       (unsigned long long)k, len, off);
			return -1;
		}
		n_ok++;
		return 0;
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_REM_ACCESS_ERR:
		if (l->real_error) {
			printf("FAIL lane %d: a second error (%s) before the QP was reset\n", q,
			       ibv_wc_status_str(wc->status));
			return -1;
		}
		l->real_error = 1;
		*(wc->status == IBV_WC_LOC_PROT_ERR ? &n_prot : wc->status == IBV_WC_LOC_QP_OP_ERR ? &n_qpop : &n_rem) += 1;
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

/* every byte of B's region: untouched, or the source's at the same offset */
static int check_memory(uint32_t size)
{
	uint32_t i;

	for (i = 0; i < size; i++)
		if (B.buf[i] != UNTOUCHED && B.buf[i] != A.buf[i]) {
			printf("FAIL B's byte at %#x is %#x: neither the source's (%#x) nor untouched\n", i, B.buf[i],
			       A.buf[i]);
			return -1;
		}
	return 0;
}

int faults(uint64_t per_lane, int nq, int depth)
{
	static struct flane lanes[16];
	uint32_t area = REGION / (uint32_t)nq, i;
	int q, busy = nq;
	struct ibv_wc wc;

	fill(A.buf, REGION, 7);
	memset(B.buf, UNTOUCHED, REGION);
	for (q = 0; q < nq; q++) {
		new_pair(q);
		lanes[q].area = area;
	}
	while (busy) {
		busy = 0;
		for (q = 0; q < nq; q++) {
			struct flane *l = &lanes[q];

			if (l->in_error && l->done == l->posted) {
				/* all in: the QPs back to RTS, on with the rest */
				if (!l->real_error) {
					printf("FAIL lane %d: flushed with no error to say why\n", q);
					return -1;
				}
				connect_pair(q, 7);
				l->in_error = l->real_error = 0;
			}
			while (!l->in_error && l->posted < per_lane && l->posted - l->done < (uint64_t)depth) {
				uint32_t len = 1 + (rng = rng * 1103515245u + 12345u) % MAX_LEN, off;
				struct ibv_sge s;

				if (l->next_off + len > area)
					l->next_off = 0;
				off = (uint32_t)q * area + l->next_off;
				l->next_off += len;
				l->off[l->posted % DEPTH] = off;
				l->len[l->posted % DEPTH] = len;
				s = sge(&A, off, len);
				if (post(A.qp[q], IBV_WR_RDMA_WRITE, (uint64_t)q << 32 | l->posted, &s, 1,
					 (uintptr_t)(B.buf + off), B.mr->rkey, 0))
					die("ibv_post_send", EIO);
				l->posted++;
			}
			busy |= l->done < per_lane;
		}
		if (!busy)
			break;
		if (!poll1(&A, &wc, 60)) {
			printf("FAIL no completion in 60 s\n");
			return -1;
		}
		for (q = 0; q < nq && A.qp[q]->qp_num != wc.qp_num; q++)
			;
		if (q == nq || lanes[q].done == lanes[q].posted) {
			printf("FAIL a completion for QP %#x, none outstanding there\n", wc.qp_num);
			return -1;
		}
		if (check_wc(&lanes[q], q, &wc))
			return -1;
		lanes[q].done++;
	}
	i = check_memory(REGION);
	printf("faults: %llu WRITEs succeeded, %llu LOC_PROT_ERR, %llu LOC_QP_OP_ERR, %llu REM_ACCESS_ERR, %llu flushed\n",
	       (unsigned long long)n_ok, (unsigned long long)n_prot, (unsigned long long)n_qpop,
	       (unsigned long long)n_rem, (unsigned long long)n_flush);
	return i ? -1 : 0;
}
