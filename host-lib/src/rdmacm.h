/* librdmacm.so.1's internals, shared by rdmacm.c (IDs, events, connections) and rdmacm_ep.c
 * (QPs, endpoints, addresses, options). */
#ifndef RDMACM_H
#define RDMACM_H

#include <pthread.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rnic_spec.h"

#define CMA_MAX_DEV 16
#define CMA_HDR_LEN 36      /* rdma_cm's header at the head of a REQ's private data */
#define CMA_REQ_PDATA 92    /* IBTA 12.6.5 */
#define CMA_REP_PDATA 196
#define CMA_REJ_PDATA 148
#define CMA_SIDR_REQ_PDATA 216
#define CMA_SIDR_REP_PDATA 136
#define CMA_UDP_QKEY 0x01234567 /* RDMA_UDP_QKEY */
#define CMA_ACK_TIMEOUT 19  /* the QP's local ACK timeout Linux's CM asks for on RoCE */

struct cma_dev {
	struct ibv_context *verbs;
	struct ibv_pd *pd;          /* every ID's id->pd until it makes a QP on another (cma_attach) */
	uint8_t gid[2][16];         /* GID 0: the IPv4 address (mapped), GID 1: the IPv6 one */
	enum ibv_mtu mtu;
	uint8_t max_resp_res, max_init_depth;
	int refs;                   /* CM IDs on the device: the last one takes pd with it */
	int fd;                     /* rnicdv_cm_event_fd, -1 until a CM ID lives on the device */
	struct cma_id *ids[RNIC_MAX_CM_ID]; /* by the firmware's CM ID */
};

enum cma_state {
	CMA_IDLE, CMA_BOUND, CMA_ADDR_RESOLVED, CMA_ROUTE_RESOLVED, CMA_LISTEN, CMA_CONNECTING,
	CMA_REQ_RCVD, CMA_ACCEPTING, CMA_RESPONDED, CMA_CONNECTED, CMA_DISCONNECTING, CMA_DISCONNECTED, CMA_DEAD
};

struct cma_id {
	struct rdma_cm_id id;       /* what the application sees */
	enum cma_state state;
	int sync;                   /* made without a channel: the library waits for each event */
	int disc_seen;              /* DISCONNECTED handed out */
	int unacked;                /* events handed out, not yet acked: destroy and migrate wait */
	struct cma_dev *dev;        /* NULL until bound to an address or resolved */
	int32_t fw;                 /* the firmware's CM ID on dev, -1 */
	int32_t fw_listen[CMA_MAX_DEV]; /* listening on every device (bound to no address) */
	uint8_t resp_res, init_depth; /* offered by the peer's REQ, or asked by rdma_connect */
	/* the connection as the firmware made it: what rdma_init_qp_attr gives a QP the host moves */
	uint32_t remote_qpn, remote_psn, local_psn;
	uint8_t mtu, conn_timeout, retry_cnt, rnr_retry;
	uint8_t tos, ack_timeout, ack_set; /* RDMA_OPTION_ID_ACK_TIMEOUT given */
	int reuse, afonly;
	struct ibv_qp_init_attr *ep_qp; /* rdma_create_ep (passive): the QP of each request */
	int own_cqs;                /* rdma_create_qp made the CQs and their channels */
	struct ibv_sa_path_rec path;
	struct ibv_ece ece_local, ece_remote;
};

struct cma_event {
	struct rdma_cm_event ev;
	struct cma_event *next;
	struct cma_id *owner;
	struct cma_id *acct;        /* handed out on its count: the listener's for CONNECT_REQUEST */
	uint8_t pdata[RNIC_CM_EVENT_PDATA_LEN];
};

struct cma_channel {
	struct rdma_event_channel ch; /* fd: an eventfd counting the events queued */
	struct cma_event *head, **tail;
	int readers, dead;          /* threads in rdma_get_cm_event; destroyed under them */
};

extern pthread_mutex_t cma_lock;
extern pthread_cond_t cma_acked; /* an event acked */
extern struct cma_dev cma_devs[CMA_MAX_DEV];
extern int cma_ndev;

static inline struct cma_id *to_cma(struct rdma_cm_id *id)
{
	return (struct cma_id *)id;
}

int cma_init(void);                                   /* 0 or -1, errno */
struct cma_dev *cma_dev_of_addr(const struct sockaddr *sa); /* the device that has this address */
int cma_addr_gid(const struct sockaddr *sa, uint8_t gid[16]); /* 0, or -1 EAFNOSUPPORT */
int cma_is_any(const struct sockaddr *sa);
uint16_t cma_port(const struct sockaddr *sa);         /* host order */
void cma_set_port(struct sockaddr *sa, uint16_t port);
size_t cma_addr_len(const struct sockaddr *sa);
int cma_err(int e);                                   /* -1 with errno = e */
void cma_qp_access(struct cma_id *p, int read);       /* INIT -> INIT with rdma_cm's access flags */
void cma_attach(struct cma_id *p, struct cma_dev *d); /* under cma_lock */
void cma_gid_to_addr(const uint8_t *gid, uint16_t port, struct sockaddr_storage *ss);
struct cma_id *cma_id_alloc(struct rdma_event_channel *channel, void *context, enum rdma_port_space ps,
			    enum ibv_qp_type qp_type);

/* the firmware's CM commands (under cma_lock): 0, or -1 and errno */
int cma_fw_cmd(struct cma_dev *d, uint32_t op, const void *in, size_t inlen, uint32_t *handle);
int cma_fw_id_cmd(struct cma_dev *d, uint32_t op, uint32_t id);
int cma_fw_pdata(struct cma_dev *d, uint32_t id, const uint8_t *data, uint32_t len);
int32_t cma_fw_create(struct cma_dev *d, struct cma_id *owner); /* a CM ID whose events reach owner */
void cma_fw_destroy(struct cma_dev *d, int32_t *h);

/* events (under cma_lock, but cma_complete) */
void cma_queue_event(struct cma_event *e);
void cma_unqueue(struct rdma_event_channel *ch, int (*drop)(struct cma_event *, void *), void *arg);
int cma_local_event(struct cma_id *p, enum rdma_cm_event_type type, int status);
int cma_complete(struct cma_id *p); /* a synchronous ID waits for its call's event */
void cma_wait_acked(struct cma_id *p); /* under cma_lock: until its events are acked */
void cma_conn_of(struct cma_id *p, const uint8_t *ev); /* keep the connection's attributes */

#endif
