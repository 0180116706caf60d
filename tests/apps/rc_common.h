/* What the RC test programs (rc_ops and its modes in rc_mix.c, rc_bench.c) share: two NICs
 * (sides) with a PD, one registered region between guard pages, a CQ, and connected RC QPs. */
#ifndef RC_COMMON_H
#define RC_COMMON_H

#include <infiniband/verbs.h>
#include <stdint.h>

#define REGION (4u << 20)
#define GUARD 4096u
#define MAXQ 16384 /* QPs of one run: a pair each (rate mode sweeps up to it) */
#define DEPTH 8
#define TCLASS 0x6a /* DSCP 26 (AF31), ECN ECT(0): what the connected QPs' frames must carry */
#define ALL_ACCESS (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *mem;         /* GUARD | REGION (registered) | GUARD */
	uint8_t *buf;         /* = mem + GUARD */
	union ibv_gid gid;
	struct ibv_qp *qp[MAXQ];
};

extern struct side A, B;
extern enum ibv_mtu mtu;
extern unsigned ack_timeout;
extern int gid_index; /* 0: RoCEv2 over IPv4, 1: over IPv6 */
extern int max_dest_rd;
extern int failures;
extern uint32_t rng;

void die(const char *what, int err);
void open_side(struct side *s, const char *name);
/* an RC QP on s's CQ with these caps: NULL and errno if refused (make_qp: exits) */
struct ibv_qp *try_qp(struct side *s, uint32_t wr, uint32_t nsge, uint32_t inl);
struct ibv_qp *make_qp(struct side *s);
void connect_qp(struct ibv_qp *qp, const struct side *peer, const struct ibv_qp *pq, int rnr_retry, int access);
void connect_pair(int i, int rnr_retry);
void new_pair(int i);
/* pairs from..to-1, both sides set up at once (a thread each) */
void new_pairs(int from, int to);
int poll1(struct side *s, struct ibv_wc *wc, int secs);
void fill(uint8_t *p, uint32_t n, uint32_t seed);
struct ibv_sge sge(struct side *s, uint32_t off, uint32_t len);
int post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t id, struct ibv_sge *sg, int nsge, uint64_t raddr,
	 uint32_t rkey, int flags);
int post_recv(struct ibv_qp *qp, uint64_t id, struct ibv_sge *sg, int nsge);
int settle(const uint8_t *a, const uint8_t *b, uint32_t n);

/* rc_mix.c, rc_bench.c */
int mix(uint64_t n, int nq, int keys);
int bench(void);
int big(uint64_t size);
extern int rate_keys;
extern uint64_t rate_span;
int rate(enum ibv_wr_opcode op, uint32_t size, int nq, uint32_t n, int inl, int random_order);
int lat(enum ibv_wr_opcode op, uint32_t n, int inl);
/* rc_limits.c */
int limits(void);
/* rc_faults.c: per_lane WRITEs (fault_mix: WRITEs, SENDs and FETCH_ADDs) on each of nq (<= 16)
 * QPs, depth (<= DEPTH) in flight on each, each under one of `keys` (<= 3) registrations a side,
 * while the hosts refuse some of the NICs' reads */
extern int fault_mix;
int faults(uint64_t per_lane, int nq, int depth, int keys);

#endif
