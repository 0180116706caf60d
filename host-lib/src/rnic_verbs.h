/* The verbs library's objects: each starts with the rdma-core struct it stands for, so a pointer
 * to one is a pointer to the other. Shared by the library's source files only. */
#ifndef RNIC_VERBS_H
#define RNIC_VERBS_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>

#include "pci_bus.h"
#include "rnic_core.h"
#include "sim_bus.h"

struct rnic_device {
	struct ibv_device ibv;
	char path[512];            /* the simulator's socket, or the card's /dev/rnicN */
	int card;
	int index;
};

struct rnic_qp;
struct rnic_srq;

#define ASYNC_Q 64 /* asynchronous events held between ibv_get_async_event calls */

struct rnic_context {
	struct verbs_context vctx; /* ends with struct ibv_context */
	int card;                  /* pci, not sim, is the backend */
	struct sim_bus bus;
	struct pci_bus pci;
	struct rnic_dev dev;       /* its ops and bus are the backend's */
	int irq_fd;                /* read(): 8 bytes, MSI-X messages of the context's vector */
	pthread_mutex_t cmd_lock;  /* one firmware command at a time */
	pthread_mutex_t eq_lock;   /* the event queue and what it feeds (below) */
	struct rnic_qp *qps[RNIC_MAX_QP];         /* by index: rnic_qp_get() */
	struct rnic_srq *srqs[RNIC_MAX_SRQ];
	struct rnic_cq *cqs[RNIC_MAX_CQ];
	struct ibv_async_event async[ASYNC_Q]; /* events read from the EQ, not yet handed out */
	unsigned async_head, async_tail;
	int async_wfd;             /* async_fd's other end: one byte per event */
	uint32_t comp_events;      /* completion events since rnicdv_poll_events */
	pthread_t event_thread;    /* serves the context's MSI-X vector */
	int stopping;
	uint8_t *cm_ring;          /* CM events (cm_dv.c), made on the first CM command */
	uint64_t cm_bus;
	uint32_t cm_ci;
	uint32_t cm_qpn[RNIC_MAX_CM_ID]; /* the QP of each CM ID's connection */
	int cm_fd[2];              /* rnicdv_cm_event_fd: a byte per interrupt once the ring exists */
};

/* The context's QP numbered qpn (QPN_BASE | its index), or NULL */
static inline struct rnic_qp *rnic_qp_get(const struct rnic_context *c, uint32_t qpn)
{
	uint32_t i = rnic_qp_index(qpn);

	return __builtin_expect(i < RNIC_MAX_QP, 1) ? c->qps[i] : NULL;
}

/* The QP, CQ and SRQ locks: test-and-set spinlocks, inline on the data path (an uncontended
 * lock is one atomic bit test-and-set, an unlock one store: no call), taken by ibv_post_send and
 * ibv_poll_cq and by the ibv_wr_* and ibv_start_poll paths alike. */
typedef struct {
	unsigned int taken;
} rnic_lock_t;

/* Take the lock if it is free; whether it was busy. Bit 0 fetched-and-set and tested alone:
 * x86's lock bts, nothing to load or test (a negated result would make it a compare-exchange
 * loop). */
static inline int rnic_lock_busy(rnic_lock_t *l)
{
	return __atomic_fetch_or(&l->taken, 1u, __ATOMIC_ACQUIRE) & 1u;
}

static inline void rnic_lock(rnic_lock_t *l)
{
	while (rnic_lock_busy(l))
		while (__atomic_load_n(&l->taken, __ATOMIC_RELAXED))
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#else
			;
#endif
}

static inline void rnic_unlock(rnic_lock_t *l)
{
	__atomic_store_n(&l->taken, 0, __ATOMIC_RELEASE);
}

struct rnic_cq {
	struct ibv_cq_ex ex;       /* starts with struct ibv_cq */
	uint8_t *ring;
	uint64_t bus;
	uint32_t log, cqn, ci;     /* log, ci: set with rnic_cq_at, with the four below */
	uint32_t mask;             /* 2^log - 1 */
	uint32_t db_mask;          /* mask / 2: the CQ doorbell is rung when ci & db_mask is 0 */
	uint32_t db_left;          /* CQEs to consume until then (a count down: one decrement) */
	uint32_t pass;             /* (ci >> log) & 1: the parity of ci's pass through the ring */
	uint64_t ts_start, ts_end; /* the last CQE's, in this order (copied as one) */
	const uint8_t *cur;        /* the CQE between ibv_start_poll and ibv_next_poll */
	uint32_t empty;            /* polls in a row that found nothing (bus idle op after POLL_IDLE) */
	uint64_t wc_flags;         /* ibv_create_cq_ex: the fields the application reads */
	uint32_t events;           /* completion events handed to its channel */
	rnic_lock_t lock;
};

struct rnic_srq {
	struct ibv_srq ibv;
	uint8_t *ring;
	uint64_t bus;
	uint32_t log, srqn, limit;
	uint16_t pi, ci;           /* posted / completed (the NIC fetches in ring order) */
	rnic_lock_t lock;
};

struct rnic_ah {
	struct ibv_ah ibv;
	uint8_t mac[6];
	uint32_t ip;
	uint8_t ipv6, ip6[16];
};

struct rnic_qp {
	struct ibv_qp_ex ex;       /* starts with struct ibv_qp */
	int has_ex;                /* created with send_ops_flags: ibv_qp_to_qp_ex returns ex */
	uint8_t *sq, *rq;
	uint64_t sq_bus, rq_bus;
	uint32_t sq_log, rq_log;
	uint16_t sq_pi;
	uint16_t sq_end;           /* the SQ is full at this sq_pi: max_send_wr past the first WQE not
				    * completed (CQE WQE_INDEX + 1), one compare for ibv_post_send */
	uint16_t sq_ahead;         /* max_send_wr + 1: sq_end is this past a completed WQE_INDEX */
	uint16_t rq_pi, rq_ci;     /* receive WQEs posted / completed (they complete in order) */
	struct ibv_qp_cap cap;
	struct ibv_qp_attr attr;   /* what was last set, for ibv_query_qp */
	int sig_all;               /* sq_sig_all: every WQE completes */
	uint32_t wqe_ctl;          /* rnic_wqe_ctl: its WQEs' constant OPCODE, FLAGS, NUM_SGE word */
	uint32_t send_ops;         /* bit i: the QP's type takes enum ibv_wr_opcode i */
	uint32_t fast_end;         /* ibv_post_send's fast path builds the opcodes below this one */
	uint32_t fast_end_inline;  /* and those below this one with IBV_SEND_INLINE (no READ) */
	uint32_t sq_mask;          /* 2^sq_log - 1 */
	struct rnic_dev *dev;      /* its context's */
	uint32_t sq_db;            /* the SQ doorbell's QPN field */
	uint8_t *db_ring;          /* simulator: the ring its doorbells are written to (no ops call) */
	uint64_t sq_db_link;       /* and the SQ doorbell's entry there (ADDR, VALUE with PI 0) */
	uint32_t push_addr;        /* and the BAR0 offset of its context's WQE push window */
	volatile uint32_t *db_reg; /* card: the SQ doorbell in the mapped doorbell page */
	struct rnic_srq *srq;      /* receive WQEs come from it */
	rnic_lock_t lock;
	/* ibv_wr_* between ibv_wr_start and ibv_wr_complete: the request being built */
	struct ibv_send_wr wr;
	struct ibv_sge sge[RNIC_MAX_SGE];
	int wr_open, wr_err;
	uint16_t wr_start_pi;
};

static inline struct rnic_context *to_ctx(struct ibv_context *c)
{
	return (struct rnic_context *)((char *)c - offsetof(struct verbs_context, context));
}

static inline struct ibv_cq *cq_ibv(struct rnic_cq *cq)
{
	return ibv_cq_ex_to_cq(&cq->ex);
}

/* CQE i of a ring of 2^log entries is valid when its owner bit is the parity of i's pass, plus 1 */
static inline int rnic_cqe_valid(const uint8_t *ring, uint32_t log, uint32_t i)
{
	const uint8_t *e = ring + (size_t)(i & ((1u << log) - 1)) * RNIC_CQE_BYTES;

	return (__atomic_load_n(&e[RNIC_CQE_OWNER_OFF], __ATOMIC_ACQUIRE) & 1) == (((i >> log) & 1) ^ 1);
}

/* A CQ of 2^log entries at consumer index ci. Under cq->lock. */
static inline void rnic_cq_at(struct rnic_cq *cq, uint32_t log, uint32_t ci)
{
	cq->log = log;
	cq->mask = (1u << log) - 1;
	cq->db_mask = cq->mask >> 1;
	cq->db_left = cq->db_mask + 1 - (ci & cq->db_mask);
	cq->ci = ci;
	cq->pass = (ci >> log) & 1;
}

/* datapath.c */
uint32_t rnic_send_ops(enum ibv_qp_type type);
uint32_t rnic_fast_end(enum ibv_qp_type type);
uint32_t rnic_wqe_ctl(int sig_all);
int rnic_sq_write(struct rnic_qp *qp, const struct ibv_send_wr *wr);
void rnic_sq_doorbell(struct rnic_qp *qp);
int rnic_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int rnic_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
int rnic_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
const uint8_t *rnic_cq_peek(struct rnic_cq *cq);
void rnic_cq_consume(struct rnic_cq *cq, const uint8_t *e);
uint64_t rnic_err_wr_id(const struct rnic_cq *cq, const uint8_t *e) __attribute__((cold, noinline));

/* A CQE's work request. A WQE that failed may be one the NIC could not read (the host refused
 * its DMA): its WR_ID is not known there, the queue's copy names it (rnic_err_wr_id). */
static inline __attribute__((always_inline)) uint64_t rnic_cqe_wr_id(const struct rnic_cq *cq, const uint8_t *e)
{
	if (__builtin_expect(RNIC_CQE_STATUS_GET(e) != IBV_WC_SUCCESS, 0))
		return rnic_err_wr_id(cq, e);
	return RNIC_CQE_WR_ID_GET(e);
}
int rnic_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int rnic_req_notify_cq(struct ibv_cq *ibcq, int solicited);
void rnic_cq_clean(struct ibv_cq *ibcq, uint32_t qpn, struct rnic_srq *srq);

/* verbs.c */
struct ibv_cq *rnic_cq_create(struct ibv_context *context, int cqe, void *cq_context,
			      struct ibv_comp_channel *channel, int comp_vector, uint64_t wc_flags);
struct ibv_qp *rnic_qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *a);
uint32_t rnic_clock_khz(struct rnic_context *c);

/* device.c */
int rnic_query_device_attr(struct ibv_context *context, struct ibv_device_attr *a);
int rnic_query_port(struct ibv_context *context, uint8_t port, struct ibv_port_attr *a, size_t len);
int rnic_gid(struct ibv_context *context, uint32_t index, union ibv_gid *gid);

/* verbs_ex.c: the extended context ops and the ibv_qp_ex / ibv_cq_ex function tables */
void rnic_ex_init(struct rnic_context *c);
void rnic_qp_ex_init(struct rnic_qp *qp, uint64_t send_ops);
void rnic_cq_ex_init(struct rnic_cq *cq);

/* events.c: the MSI-X vector, completion channels and asynchronous events */
int rnic_events_start(struct rnic_context *c);
void rnic_events_stop(struct rnic_context *c);
int rnic_events_poll(struct rnic_context *c);
void rnic_channel_forget(struct rnic_cq *cq);

/* compat.c: sysfs attributes of a simulated device (board_id, fw_ver ...) */
int rnic_device_file(const char *dir, const char *file, char *buf, size_t size);

#endif
