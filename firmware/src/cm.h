/* The communication manager on QP1: MAD and CM message layouts of IBTA Vol. 1 (13.4.3 common
 * MAD header, 12.6 CM messages), offsets from the MAD's first byte. These are the standard's
 * formats, not the project's: the tests check them with tshark's and scapy's decoders. */
#ifndef FW_CM_H
#define FW_CM_H

#include <stdint.h>
#include "rnic_spec.h"

#define CM_GSI_SPORT (0xc000u | RNIC_GSI_QPN) /* the UDP source port the datapath gives QP n */
#define CM_MAD_LEN 256u
#define CM_HOP_LIMIT 64u
#define CM_RESPONSE_TIMEOUT 20u /* 4.096 us << 20, about 4.3 s: rdma_cm's CMA_CM_RESPONSE_TIMEOUT */
/* A message is sent again every response timeout of its peer's (4.096 us << t), but at most
 * once a millisecond (Linux's cm_convert_to_ms: 1 << max(t - 8, 0) ms), and given up 70 s after
 * its first sending however many tries are left (Linux's CM_MAD_TOTAL_TIMEOUT) */
#define CM_MIN_TIMEOUT 8u
#define CM_GIVE_UP_CYCLES (70ull * RNIC_CLOCK_MHZ * 1000000ull)
/* Answers to peers with no connection (REJ, DREP, GetResp, SIDR_REP of a refusal) and REPs sent
 * again to a requester that never answered: at most CM_ANSWER_BURST at once, then one each
 * CM_ANSWER_CYCLES (10,000 a second), so that spoofed requests reflect little */
#define CM_ANSWER_BURST 32u
#define CM_ANSWER_CYCLES (RNIC_CLOCK_MHZ * 100u)

/* common MAD header */
#define CM_MAD_BASE_VERSION 0
#define CM_MAD_CLASS 1
#define CM_MAD_CLASS_VERSION 2
#define CM_MAD_METHOD 3
#define CM_MAD_STATUS 4
#define CM_MAD_TID 8
#define CM_MAD_ATTR_ID 16
#define CM_MAD_ATTR_MOD 20
#define CM_MAD_DATA 24

#define CM_CLASS 0x07
#define CM_CLASS_VERSION 2
#define CM_METHOD_GET 0x01
#define CM_METHOD_SET 0x02
#define CM_METHOD_SEND 0x03
#define CM_METHOD_GET_RESP 0x81
#define CM_STATUS_UNSUPPORTED 0x000c /* unsupported method/attribute combination */

#define CM_ATTR_CLASS_PORT_INFO 0x0001
#define CM_ATTR_REQ 0x0010
#define CM_ATTR_MRA 0x0011
#define CM_ATTR_REJ 0x0012
#define CM_ATTR_REP 0x0013
#define CM_ATTR_RTU 0x0014
#define CM_ATTR_DREQ 0x0015
#define CM_ATTR_DREP 0x0016
#define CM_ATTR_SIDR_REQ 0x0017
#define CM_ATTR_SIDR_REP 0x0018

/* ClassPortInfo (13.4.8.1) */
#define CM_CPI_BASE_VERSION (CM_MAD_DATA + 0)
#define CM_CPI_CLASS_VERSION (CM_MAD_DATA + 1)
#define CM_CPI_RESP_TIME (CM_MAD_DATA + 4) /* CapabilityMask2:27, RespTimeValue:5 */

/* REQ (12.6.5) */
#define CM_REQ_LOCAL_COMM_ID (CM_MAD_DATA + 0)
#define CM_REQ_SERVICE_ID (CM_MAD_DATA + 8)

/* REJ (12.6.7) */
#define CM_REJ_LOCAL_COMM_ID (CM_MAD_DATA + 0)
#define CM_REJ_REMOTE_COMM_ID (CM_MAD_DATA + 4)
#define CM_REJ_MSG_REJECTED (CM_MAD_DATA + 8) /* bits 7:6 */
#define CM_REJ_REASON (CM_MAD_DATA + 10)
#define CM_MSG_REQ 0
#define CM_MSG_REP 1
#define CM_REJ_INVALID_SERVICE_ID 8

/* DREQ (12.6.10), DREP (12.6.11) */
#define CM_DREQ_LOCAL_COMM_ID (CM_MAD_DATA + 0)
#define CM_DREQ_REMOTE_COMM_ID (CM_MAD_DATA + 4)
#define CM_DREQ_REMOTE_QPN (CM_MAD_DATA + 8)
#define CM_DREP_LOCAL_COMM_ID (CM_MAD_DATA + 0)
#define CM_DREP_REMOTE_COMM_ID (CM_MAD_DATA + 4)

#define FW_CM_IDS RNIC_MAX_CM_ID
_Static_assert(FW_CM_IDS <= 256, "a communication ID holds its slot in its low byte");
_Static_assert(FW_CM_IDS > RNIC_NUM_CTX * RNIC_CM_ID_RESERVED, "contexts share what their reserves leave");
#define CM_PDATA_MAX 216 /* SIDR_REQ's private data, the largest a CM ID sends */

/* REQ fields (12.6.5) beyond the two above */
#define CM_REQ_LOCAL_QPN (CM_MAD_DATA + 32)     /* 24 bits, then responder resources */
#define CM_REQ_INIT_DEPTH (CM_MAD_DATA + 39)
#define CM_REQ_RESP_TIMEOUT (CM_MAD_DATA + 43)  /* remote CM response timeout:5, transport:2, e2e:1 */
#define CM_REQ_START_PSN (CM_MAD_DATA + 44)     /* 24 bits, then local CM response timeout:5, retry:3 */
#define CM_REQ_MTU (CM_MAD_DATA + 50)           /* path MTU:4, RDC:1, RNR retry:3 */
#define CM_REQ_MAX_RETRIES (CM_MAD_DATA + 51)   /* max CM retries:4, SRQ:1, extended transport:3 */
#define CM_REQ_ACK_TIMEOUT (CM_MAD_DATA + 95)   /* primary local ACK timeout:5 */
#define CM_REQ_PDATA (CM_MAD_DATA + 140) /* after the alternate path (96..139) */
#define CM_REQ_PDATA_LEN 92

#define CM_REQ_CA_GUID (CM_MAD_DATA + 16)
#define CM_REQ_PKEY (CM_MAD_DATA + 48)
#define CM_REQ_LIDS (CM_MAD_DATA + 52)
#define CM_REQ_LOCAL_GID (CM_MAD_DATA + 56)
#define CM_REQ_REMOTE_GID (CM_MAD_DATA + 72)
#define CM_REQ_TCLASS (CM_MAD_DATA + 92)
#define CM_REQ_HOP_LIMIT (CM_MAD_DATA + 93)

/* REP (12.6.8) */
#define CM_REP_LOCAL_COMM_ID (CM_MAD_DATA + 0)
#define CM_REP_REMOTE_COMM_ID (CM_MAD_DATA + 4)
#define CM_REP_LOCAL_QPN (CM_MAD_DATA + 12)
#define CM_REP_START_PSN (CM_MAD_DATA + 20)
#define CM_REP_RESP_RES (CM_MAD_DATA + 24)
#define CM_REP_INIT_DEPTH (CM_MAD_DATA + 25)
#define CM_REP_ACK_DELAY (CM_MAD_DATA + 26)     /* target ACK delay:5, failover:2, e2e:1 */
#define CM_REP_RNR_RETRY (CM_MAD_DATA + 27)     /* RNR retry:3, SRQ:1 */
#define CM_REP_CA_GUID (CM_MAD_DATA + 28)
#define CM_REP_PDATA (CM_MAD_DATA + 36)
#define CM_REP_PDATA_LEN 196

/* RTU (12.6.9) */
#define CM_RTU_REMOTE_COMM_ID (CM_MAD_DATA + 4)

#define CM_REJ_PDATA (CM_MAD_DATA + 84)
#define CM_REJ_PDATA_LEN 148
#define CM_REJ_NO_QP 1
#define CM_REJ_NO_RESOURCES 3
#define CM_REJ_TIMEOUT 4
#define CM_REJ_CONSUMER 28 /* what Linux's rdma_cm answers a REQ its listener cannot take */
#define CM_BACKLOG 8 /* requests a listener may have whose handshake is not done: the rest are refused */
#define CM_REJ_INVALID_TRANSPORT_TYPE 9 /* not RC */
#define CM_ACK_DELAY 0            /* REP's target ACK delay: the device's local_ca_ack_delay */

/* SIDR_REQ (12.11.1), SIDR_REP (12.11.2): service ID resolution, the UD "connection" */
#define CM_SIDR_REQ_ID (CM_MAD_DATA + 0)
#define CM_SIDR_REQ_PKEY (CM_MAD_DATA + 4)
#define CM_SIDR_REQ_SERVICE_ID (CM_MAD_DATA + 8)
#define CM_SIDR_REQ_PDATA (CM_MAD_DATA + 16)
#define CM_SIDR_REQ_PDATA_LEN 216
#define CM_SIDR_REP_ID (CM_MAD_DATA + 0)
#define CM_SIDR_REP_STATUS (CM_MAD_DATA + 4)
#define CM_SIDR_REP_QPN (CM_MAD_DATA + 8)        /* 24 bits */
#define CM_SIDR_REP_SERVICE_ID (CM_MAD_DATA + 12)
#define CM_SIDR_REP_QKEY (CM_MAD_DATA + 20)
#define CM_SIDR_REP_PDATA (CM_MAD_DATA + 96)
#define CM_SIDR_REP_PDATA_LEN 136
#define CM_SIDR_UNSUPPORTED 1                    /* status: no listener for the service ID */
#define CM_SIDR_REJECT 2
enum { CM_ST_IDLE, CM_ST_LISTEN, CM_ST_REQ_RCVD, CM_ST_REP_SENT, CM_ST_ESTABLISHED, CM_ST_REQ_SENT,
       CM_ST_DREQ_SENT, CM_ST_SIDR_RCVD, CM_ST_SIDR_SENT, CM_ST_REP_RCVD };

/* one connection being made or made, or a listener; owned by a context */
struct fw_cm {
	uint8_t used, ctx, state, v6, tclass;
	uint8_t resp_res, init_depth, rnr_retry, retry_cnt, srq, mtu, ack_timeout;
	uint8_t tries, max_tries, resp_timeout, pdata_len, min_rnr, ud;
	uint8_t external;                 /* the host moves the QP (CM_CONNECT's EXTERNAL) */
	uint8_t qp_type;                  /* a listener's: what it takes (CMDI_CM_LISTEN.QP_TYPE) */
	uint16_t reason;                  /* of the REJ that ended it */
	uint8_t listen;                   /* CONNECT_REQUEST: the listener it came to */
	uint8_t mac[6];
	uint8_t gid[16];                  /* the peer's (IPv4-mapped for IPv4) */
	uint32_t ip, local_id, remote_id, qpn, remote_qpn, remote_psn, psn, qkey;
	uint32_t gen;                     /* fw.cm_gen when it was made: its IDs and PSN are the PRF's of it */
	uint64_t service_id, deadline, give_up;
	uint8_t tid[8];
	uint8_t pdata[CM_PDATA_MAX];      /* for the next message, kept for its retransmissions */
};

struct fw_cm_evq {
	uint64_t base;
	uint32_t pi;
	uint8_t log;
};

/* the sender of a MAD, where its answer goes */
struct cm_peer {
	uint8_t v6, tclass;
	uint8_t mac[6];
	uint8_t ip6[16];
	uint32_t ip, qpn;
};

/* A REQ or SIDR_REQ for a service nobody listens on yet waits up to CM_HOLD_CYCLES (1 ms) for its
 * listener before it is refused: rdma_listen here is two firmware commands (CM_CREATE_ID and
 * CM_LISTEN, some 16,000 clocks), where Linux's takes microseconds, and a client such as perftest -R
 * connects as soon as it has told its server to listen. CM_HELD wait at once; past them a
 * request is refused at once, as Linux refuses it. */
#define CM_HELD 4u
#define CM_HOLD_CYCLES (RNIC_CLOCK_MHZ * 1000u)
struct fw_cm_held {
	uint64_t until;                   /* 0: a free slot */
	struct cm_peer peer;
	uint8_t mad[CM_MAD_LEN];
};

/* what QP1 took and sent, and what it dropped, by cause */
struct fw_gsi_counters {
	uint32_t rx, tx, drop_malformed, drop_class, drop_unknown, dup;
	uint32_t drop_busy;    /* no room left to set it aside (a resolution held the main loop) */
	uint32_t rate_limited; /* answers to peers with no connection not sent (CM_ANSWER_*) */
};

int fw_gsi_input(const uint8_t *f, uint32_t len);
void fw_gsi_poll(void);
int fw_gsi_parse(const uint8_t *f, uint32_t len, struct cm_peer *p);
void fw_gsi_send(const struct cm_peer *p, const uint8_t *mad);
void fw_cm_input(const struct cm_peer *p, const uint8_t *mad);
uint32_t fw_cm_cmd(uint32_t ctx, uint32_t opcode, const uint8_t *in, uint8_t *out);
void fw_cm_poll(void);
uint32_t fw_cm_idle(uint32_t max);
uint32_t fw_cm_ctx_reset(uint32_t ctx); /* the CM IDs it had */

/* answers to peers with no connection, and requests waiting for a listener (cm_answer.c) */
void cm_mad_header(uint8_t *out, uint32_t method, const uint8_t *tid, uint32_t attr);
int cm_may_answer(void); /* a token for one more answer to a stranger (counted if none) */
void cm_answer(const struct cm_peer *p, const uint8_t *out);
void cm_reject_req(const struct cm_peer *p, const uint8_t *req, uint32_t reason);
void cm_answer_dreq(const struct cm_peer *p, const uint8_t *dreq);
void cm_get_or_set(const struct cm_peer *p, const uint8_t *mad, uint32_t attr);
void cm_sidr_rep_header(uint8_t *out, const uint8_t *tid, uint32_t rid, uint64_t sid, uint32_t status);
void cm_refuse_sidr(const struct cm_peer *p, const uint8_t *m, uint32_t status);
uint64_t cm_hold_for_listener(const struct cm_peer *p, const uint8_t *m);
int cm_held_take(uint64_t sid, struct cm_peer *p, uint8_t *m);
uint64_t cm_held_expire(uint64_t now);

/* the table of CM IDs (cm_id.c) */
struct fw_cm *cm_id_get(uint32_t ctx, uint32_t id);  /* ctx's ID, or NULL */
int32_t cm_id_alloc(uint32_t ctx);                   /* a new ID of ctx, or -1 */
uint32_t cm_id_psn(const struct fw_cm *c);           /* its starting PSN */
int cm_id_from_peer(const struct fw_cm *c, const struct cm_peer *p);
/* the connection a message from p names by our communication ID at mad + off, in one of states */
struct fw_cm *cm_id_find(const struct cm_peer *p, const uint8_t *mad, uint32_t off, uint32_t states);
/* the listener of sid (FW_CM_IDS: none) and the requests it holds; *dup: the ID a request from p
 * with its communication ID rid already made, in one of states */
uint32_t cm_id_listener(uint64_t sid, const struct cm_peer *p, uint32_t rid, uint32_t states, uint32_t *pending,
			struct fw_cm **dup);
void fw_cm_qp_gone(uint32_t qpn);

#endif
