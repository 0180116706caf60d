/* The communication manager's wire protocol on the GSI QP (gsi.c carries its MADs): IBTA Vol. 1
 * chapter 12, passive and active side, SIDR. Every answer goes back the way its request came (the
 * request's source MAC, address and QP), as Linux answers from the received work completion.
 * What is not a MAD of the CM class, version 2, is dropped and counted. Answers to peers with no
 * connection, and requests that wait for their listener, are cm_answer.c's. */
#include "cm.h"
#include "fw.h"
#include "hal.h"
#include "prf.h"
#include "rnic_frame.h"

#define CMD_IN(p, S, F) RNIC_CMDI_##S##_##F##_GET(p)

/* ---- CM IDs: listeners and connections (IBTA 12.9 state machine, passive side) */
#define CM_EV_BUF 8192 /* where an event is built in the firmware's DMA buffer */

/* Clocks to wait for an answer: 4.096 us << t (IBTA 12.7.1), at 250 MHz, but at least 1 ms */
static uint64_t cm_wait(uint32_t t)
{
	return 1024ull << (t > 31 ? 31 : t < CM_MIN_TIMEOUT ? CM_MIN_TIMEOUT : t);
}

/* The earliest deadline of the running timers and of the requests waiting for a listener, or
 * earlier (a timer stopped since leaves it; 0 at boot): the main loop's passes look through the
 * IDs only once it has come. */
static uint64_t cm_due;

/* The next retry of c no later than its give-up time; cm_due kept no later than it */
static void cm_timer_set(struct fw_cm *c, uint64_t now)
{
	c->deadline = now + cm_wait(c->resp_timeout);
	if (c->deadline > c->give_up)
		c->deadline = c->give_up;
	if (c->deadline < cm_due)
		cm_due = c->deadline;
}

/* The first sending of a message that waits for an answer: its retries' timer */
static void cm_timer_start(struct fw_cm *c)
{
	uint64_t now = hal_cycles();

	c->tries = 1;
	c->give_up = now + CM_GIVE_UP_CYCLES;
	cm_timer_set(c, now);
}

/* m waits for its listener (cm_answer.c), cm_due no later than its deadline; 0: no room */
static int hold(const struct cm_peer *p, const uint8_t *m)
{
	uint64_t until = cm_hold_for_listener(p, m);

	if (until && until < cm_due)
		cm_due = until;
	return until != 0;
}

/* Tell the owner: the event into its ring, then an interrupt of its vector. A context with no
 * ring loses the event (it asked for none). */
static void cm_event(const struct fw_cm *c, uint32_t type, uint32_t listen, const uint8_t *pdata, uint32_t plen)
{
	struct fw_cm_evq *q = &fw.cm_evq[c->ctx];
	uint8_t *e = hal_dmabuf() + CM_EV_BUF;

	if (!q->log)
		return;
	memset(e, 0, RNIC_CM_EVENT_BYTES);
	RNIC_CM_EVENT_TYPE_SET(e, type);
	RNIC_CM_EVENT_ID_SET(e, (uint32_t)(c - fw.cm));
	RNIC_CM_EVENT_LISTEN_ID_SET(e, listen);
	RNIC_CM_EVENT_REMOTE_QPN_SET(e, c->remote_qpn);
	RNIC_CM_EVENT_QPN_SET(e, c->qpn);
	RNIC_CM_EVENT_RESP_RES_SET(e, c->resp_res);
	RNIC_CM_EVENT_INIT_DEPTH_SET(e, c->init_depth);
	RNIC_CM_EVENT_RNR_RETRY_SET(e, c->rnr_retry);
	RNIC_CM_EVENT_SRQ_SET(e, c->srq);
	RNIC_CM_EVENT_REASON_SET(e, c->reason);
	RNIC_CM_EVENT_SERVICE_ID_SET(e, c->service_id);
	RNIC_CM_EVENT_UD_SET(e, c->ud);
	RNIC_CM_EVENT_QKEY_SET(e, c->qkey);
	RNIC_CM_EVENT_REMOTE_PSN_SET(e, c->remote_psn);
	RNIC_CM_EVENT_LOCAL_PSN_SET(e, c->psn);
	RNIC_CM_EVENT_PATH_MTU_SET(e, c->mtu);
	RNIC_CM_EVENT_ACK_TIMEOUT_SET(e, c->ack_timeout);
	RNIC_CM_EVENT_RETRY_CNT_SET(e, c->retry_cnt);
	memcpy(e + RNIC_CM_EVENT_PEER_GID_OFF, c->gid, 16);
	RNIC_CM_EVENT_PDATA_LEN_SET(e, plen);
	if (plen)
		memcpy(e + RNIC_CM_EVENT_PDATA_OFF, pdata, plen);
	e[RNIC_CM_EVENT_OWNER_OFF] = (uint8_t)(((q->pi >> q->log) & 1) ^ 1);
	hal_dma(c->ctx, q->base + (q->pi & ((1u << q->log) - 1)) * RNIC_CM_EVENT_BYTES, CM_EV_BUF, RNIC_CM_EVENT_BYTES, 1);
	q->pi++;
	hal_irq(c->ctx);
}

static void cm_peer_of(const struct fw_cm *c, struct cm_peer *p)
{
	memset(p, 0, sizeof(*p));
	p->v6 = c->v6;
	p->tclass = c->tclass;
	memcpy(p->mac, c->mac, 6);
	memcpy(p->ip6, c->gid, 16);
	p->ip = c->ip;
	p->qpn = RNIC_GSI_QPN;
}

/* A message of the connection: its transaction, our communication ID and the peer's (REP, RTU,
 * REJ, DREQ, DREP all start so; a REQ has no remote one yet), then cm_send. */
static void cm_msg(const struct fw_cm *c, uint8_t *out, uint32_t attr)
{
	cm_mad_header(out, CM_METHOD_SEND, c->tid, attr);
	rnic_put_be32(out + CM_MAD_DATA, c->local_id);
	if (attr != CM_ATTR_REQ)
		rnic_put_be32(out + CM_MAD_DATA + 4, c->remote_id);
}

static void cm_send(const struct fw_cm *c, const uint8_t *out)
{
	struct cm_peer p;

	cm_peer_of(c, &p);
	fw_gsi_send(&p, out);
}

/* REP (12.6.8), sent again as it was on each retry. */
static void send_rep(const struct fw_cm *c)
{
	uint8_t out[CM_MAD_LEN];

	cm_msg(c, out, CM_ATTR_REP);
	rnic_put_be24(out + CM_REP_LOCAL_QPN, c->qpn);
	rnic_put_be24(out + CM_REP_START_PSN, c->psn);
	out[CM_REP_RESP_RES] = c->resp_res;
	out[CM_REP_INIT_DEPTH] = c->init_depth;
	out[CM_REP_ACK_DELAY] = CM_ACK_DELAY << 3;
	out[CM_REP_RNR_RETRY] = (uint8_t)(c->rnr_retry << 5 | c->srq << 4);
	memcpy(out + CM_REP_CA_GUID, fw.ip6 + 8, 8); /* node GUID: the MAC's EUI-64 */
	memcpy(out + CM_REP_PDATA, c->pdata, c->pdata_len < CM_REP_PDATA_LEN ? c->pdata_len : CM_REP_PDATA_LEN);
	cm_send(c, out);
}

/* The new CM ID of a REQ or SIDR_REQ to listener l: where the requester is, its transaction */
static struct fw_cm *cm_requested(int32_t n, uint32_t state, uint32_t l, const struct cm_peer *p, const uint8_t *m,
				  uint64_t sid, uint32_t rid)
{
	struct fw_cm *c = &fw.cm[n];

	c->state = (uint8_t)state;
	c->listen = (uint8_t)l;
	c->v6 = p->v6;
	c->tclass = p->tclass;
	memcpy(c->mac, p->mac, 6);
	c->ip = p->ip;
	if (p->v6) {
		memcpy(c->gid, p->ip6, 16);
	} else {
		c->gid[10] = c->gid[11] = 0xff;
		rnic_put_be32(c->gid + 12, p->ip);
	}
	memcpy(c->tid, m + CM_MAD_TID, 8);
	c->service_id = sid;
	c->remote_id = rid;
	return c;
}

/* A REQ (12.6.5): to the listener of its service ID as a new CM ID and a CONNECT_REQUEST event;
 * nobody listening: REJ. A REQ seen before is counted and dropped, as Linux's cm_dup_req_handler
 * does: an unanswered REP goes again on its own timer. */
static void cm_req(const struct cm_peer *p, const uint8_t *m)
{
	uint64_t sid = rnic_be64(m + CM_REQ_SERVICE_ID);
	uint32_t rid = rnic_be32(m + CM_REQ_LOCAL_COMM_ID), l, waiting;
	struct fw_cm *c;
	int32_t n;

	l = cm_id_listener(sid, p, rid, 1u << CM_ST_REQ_RCVD | 1u << CM_ST_REP_SENT | 1u << CM_ST_ESTABLISHED, &waiting, &c);
	if (c) {
		fw.gsi.dup++;
		return;
	}
	if (l == FW_CM_IDS) {
		if (!hold(p, m))
			cm_reject_req(p, m, CM_REJ_INVALID_SERVICE_ID);
		return;
	}
	if ((m[CM_REQ_RESP_TIMEOUT] >> 1 & 3) != 0) { /* transport service type: RC only */
		cm_reject_req(p, m, CM_REJ_INVALID_TRANSPORT_TYPE);
		return;
	}
	if (fw.cm[l].qp_type == RNIC_QPT_UD) { /* rdma_cm: cma_ib_check_req_qp_type fails, the ID is destroyed */
		cm_reject_req(p, m, CM_REJ_CONSUMER);
		return;
	}
	/* a peer cannot fill the NIC's CM IDs with requests a listener has not answered */
	n = waiting < CM_BACKLOG ? cm_id_alloc(fw.cm[l].ctx) : -1;
	if (n < 0) {
		cm_reject_req(p, m, CM_REJ_NO_RESOURCES);
		return;
	}
	c = cm_requested(n, CM_ST_REQ_RCVD, l, p, m, sid, rid);
	c->remote_qpn = rnic_be24(m + CM_REQ_LOCAL_QPN);
	/* the requester's responder resources are what we may initiate, and the other way round */
	c->init_depth = m[CM_REQ_LOCAL_QPN + 3];
	c->resp_res = m[CM_REQ_INIT_DEPTH];
	c->remote_psn = rnic_be24(m + CM_REQ_START_PSN);
	c->resp_timeout = m[CM_REQ_START_PSN + 3] >> 3; /* how long the requester takes to answer */
	c->retry_cnt = m[CM_REQ_START_PSN + 3] & 7;
	/* the path MTU offered, no larger than our port's (Ethernet MTU) */
	c->mtu = m[CM_REQ_MTU] >> 4;
	if (c->mtu > fw_active_mtu())
		c->mtu = (uint8_t)fw_active_mtu();
	c->rnr_retry = m[CM_REQ_MTU] & 7;
	c->max_tries = (uint8_t)((m[CM_REQ_MAX_RETRIES] >> 4) + 1);
	c->srq = m[CM_REQ_MAX_RETRIES] >> 3 & 1;
	c->ack_timeout = m[CM_REQ_ACK_TIMEOUT] >> 3;
	c->psn = cm_id_psn(c);
	cm_event(c, RNIC_CM_EV_CONNECT_REQUEST, l, m + CM_REQ_PDATA, CM_REQ_PDATA_LEN);
}

/* Move the QP to RTR and RTS on the connection's path and PSNs (what rdma_accept does on the
 * passive side and rdma_cm on a REP on the active side). A CM message's starting PSN is where its
 * sender's receive queue starts, where the peer sends from: so Linux reads it (its active side's
 * send PSN is the REP's, cm_rep_handler), and so rxe's rping.pcap shows it. */
static uint32_t cm_qp_rts(const struct fw_cm *c)
{
	uint8_t m[RNIC_CMDI_MODIFY_QP_SIZE];
	uint32_t st, mtu = c->mtu < RNIC_MTU_256 ? RNIC_MTU_256 : c->mtu > RNIC_MTU_4096 ? RNIC_MTU_4096 : c->mtu;

	memset(m, 0, sizeof(m));
	RNIC_CMDI_MODIFY_QP_QPN_SET(m, c->qpn);
	RNIC_CMDI_MODIFY_QP_ATTR_MASK_SET(m, RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_AV | RNIC_QP_ATTR_PATH_MTU |
					  RNIC_QP_ATTR_DEST_QPN | RNIC_QP_ATTR_RQ_PSN |
					  RNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | RNIC_QP_ATTR_MIN_RNR_TIMER);
	RNIC_CMDI_MODIFY_QP_NEW_STATE_SET(m, RNIC_QPS_RTR);
	RNIC_CMDI_MODIFY_QP_PATH_MTU_SET(m, mtu);
	RNIC_CMDI_MODIFY_QP_DEST_QPN_SET(m, c->remote_qpn);
	RNIC_CMDI_MODIFY_QP_RQ_PSN_SET(m, c->psn);
	RNIC_CMDI_MODIFY_QP_MAX_DEST_RD_ATOMIC_SET(m, c->resp_res);
	RNIC_CMDI_MODIFY_QP_MIN_RNR_TIMER_SET(m, c->min_rnr);
	RNIC_CMDI_MODIFY_QP_IS_GLOBAL_SET(m, 1);
	RNIC_CMDI_MODIFY_QP_HOP_LIMIT_SET(m, CM_HOP_LIMIT);
	RNIC_CMDI_MODIFY_QP_TRAFFIC_CLASS_SET(m, c->tclass);
	memcpy(m + RNIC_CMDI_MODIFY_QP_DGID_OFF, c->gid, 16);
	st = fw_modify_qp_to(c->ctx, m, c->mac);
	if (st)
		return st;
	memset(m, 0, sizeof(m));
	RNIC_CMDI_MODIFY_QP_QPN_SET(m, c->qpn);
	RNIC_CMDI_MODIFY_QP_ATTR_MASK_SET(m, RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_SQ_PSN | RNIC_QP_ATTR_TIMEOUT |
					  RNIC_QP_ATTR_RETRY_CNT | RNIC_QP_ATTR_RNR_RETRY |
					  RNIC_QP_ATTR_MAX_QP_RD_ATOMIC);
	RNIC_CMDI_MODIFY_QP_NEW_STATE_SET(m, RNIC_QPS_RTS);
	RNIC_CMDI_MODIFY_QP_SQ_PSN_SET(m, c->remote_psn);
	RNIC_CMDI_MODIFY_QP_TIMEOUT_SET(m, c->ack_timeout);
	RNIC_CMDI_MODIFY_QP_RETRY_CNT_SET(m, c->retry_cnt);
	RNIC_CMDI_MODIFY_QP_RNR_RETRY_SET(m, c->rnr_retry);
	RNIC_CMDI_MODIFY_QP_MAX_RD_ATOMIC_SET(m, c->init_depth);
	return fw_modify_qp(c->ctx, m);
}


static void cm_qp_error(const struct fw_cm *c)
{
	uint8_t m[RNIC_CMDI_MODIFY_QP_SIZE];

	memset(m, 0, sizeof(m));
	RNIC_CMDI_MODIFY_QP_QPN_SET(m, c->qpn);
	RNIC_CMDI_MODIFY_QP_ATTR_MASK_SET(m, RNIC_QP_ATTR_STATE);
	RNIC_CMDI_MODIFY_QP_NEW_STATE_SET(m, RNIC_QPS_ERR);
	fw_modify_qp(c->ctx, m);
}

/* ---- SIDR (12.11): a UD QP's service ID resolved to the peer's QPN and Q_Key. The passive side
 * answers once and keeps no state on the wire; the active side retries as a REQ does. */
static void send_sidr_req(const struct fw_cm *c)
{
	uint8_t out[CM_MAD_LEN];

	cm_mad_header(out, CM_METHOD_SEND, c->tid, CM_ATTR_SIDR_REQ);
	rnic_put_be32(out + CM_SIDR_REQ_ID, c->local_id);
	rnic_put_be16(out + CM_SIDR_REQ_PKEY, 0xffff);
	rnic_put_be32(out + CM_SIDR_REQ_SERVICE_ID, (uint32_t)(c->service_id >> 32));
	rnic_put_be32(out + CM_SIDR_REQ_SERVICE_ID + 4, (uint32_t)c->service_id);
	memcpy(out + CM_SIDR_REQ_PDATA, c->pdata, c->pdata_len);
	cm_send(c, out);
}
_Static_assert(CM_PDATA_MAX == CM_SIDR_REQ_PDATA_LEN, "send_sidr_req: any private data fits");

/* the answer to a SIDR_REQ c holds: its status, and on success our QPN, Q_Key and private data */
static void sidr_rep(const struct fw_cm *c, uint32_t status)
{
	uint8_t out[CM_MAD_LEN];
	struct cm_peer p;

	cm_sidr_rep_header(out, c->tid, c->remote_id, c->service_id, status);
	if (!status) {
		rnic_put_be24(out + CM_SIDR_REP_QPN, c->qpn);
		rnic_put_be32(out + CM_SIDR_REP_QKEY, c->qkey);
	}
	memcpy(out + CM_SIDR_REP_PDATA, c->pdata, c->pdata_len < CM_SIDR_REP_PDATA_LEN ? c->pdata_len : CM_SIDR_REP_PDATA_LEN);
	cm_peer_of(c, &p);
	fw_gsi_send(&p, out);
}

/* A SIDR_REQ: to the listener of its service ID as a new CM ID and a CONNECT_REQUEST (as Linux's
 * cm_sidr_req_handler: one seen before and not yet answered is dropped; nobody listening gets
 * status "service ID not supported"). */
static void cm_sidr_req(const struct cm_peer *p, const uint8_t *m)
{
	uint64_t sid = rnic_be64(m + CM_SIDR_REQ_SERVICE_ID);
	uint32_t rid = rnic_be32(m + CM_SIDR_REQ_ID), l, waiting;
	struct fw_cm *c;
	int32_t n;

	l = cm_id_listener(sid, p, rid, 1u << CM_ST_SIDR_RCVD, &waiting, &c);
	if (c) {
		fw.gsi.dup++;
		return;
	}
	if (l == FW_CM_IDS) {
		if (!hold(p, m))
			cm_refuse_sidr(p, m, CM_SIDR_UNSUPPORTED);
		return;
	}
	if (fw.cm[l].qp_type == RNIC_QPT_RC) { /* an RC listener takes no SIDR_REQ (cma_ib_check_req_qp_type) */
		cm_refuse_sidr(p, m, CM_SIDR_REJECT);
		return;
	}
	n = waiting < CM_BACKLOG ? cm_id_alloc(fw.cm[l].ctx) : -1;
	if (n < 0) {
		cm_refuse_sidr(p, m, CM_SIDR_REJECT);
		return;
	}
	c = cm_requested(n, CM_ST_SIDR_RCVD, l, p, m, sid, rid);
	c->ud = 1;
	cm_event(c, RNIC_CM_EV_CONNECT_REQUEST, l, m + CM_SIDR_REQ_PDATA, CM_SIDR_REQ_PDATA_LEN);
}

/* rdma_accept of a SIDR_REQ: the SIDR_REP names a UD QP of the context and its Q_Key */
static uint32_t sidr_accept(struct fw_cm *c, const uint8_t *in)
{
	uint32_t qpn = CMD_IN(in, CM_ACCEPT, QPN);
	const struct fw_qp *q;

	if (!fw_qp_owned(qpn, c->ctx))
		return RNIC_CMD_ST_BAD_HANDLE;
	q = fw_qp_load(qpn);
	if (!q)
		return RNIC_CMD_ST_DMA_ERROR;
	if (q->type != RNIC_QPT_UD || c->pdata_len > CM_SIDR_REP_PDATA_LEN)
		return RNIC_CMD_ST_BAD_PARAM;
	c->qpn = qpn;
	c->qkey = CMD_IN(in, CM_ACCEPT, QKEY);
	sidr_rep(c, 0);
	c->state = CM_ST_IDLE;
	return RNIC_CMD_ST_OK;
}

/* The answer to our SIDR_REQ: ESTABLISHED with the peer's QPN and Q_Key, or UNREACHABLE with its
 * status (rdma_cm's cma_sidr_rep_handler). */
static void cm_sidr_rep(const struct cm_peer *p, const uint8_t *m)
{
	struct fw_cm *c = cm_id_find(p, m, CM_SIDR_REP_ID, 1u << CM_ST_SIDR_SENT);

	if (!c) {
		fw.gsi.drop_unknown++;
		return;
	}
	c->state = CM_ST_IDLE;
	c->reason = m[CM_SIDR_REP_STATUS];
	if (c->reason) {
		cm_event(c, RNIC_CM_EV_UNREACHABLE, 0, 0, 0);
		return;
	}
	c->remote_qpn = rnic_be24(m + CM_SIDR_REP_QPN);
	c->qkey = rnic_be32(m + CM_SIDR_REP_QKEY);
	cm_event(c, RNIC_CM_EV_ESTABLISHED, 0, m + CM_SIDR_REP_PDATA, CM_SIDR_REP_PDATA_LEN);
}

static uint32_t cm_accept(struct fw_cm *c, const uint8_t *in)
{
	uint32_t qpn = CMD_IN(in, CM_ACCEPT, QPN), st, ext;
	const struct fw_qp *q;

	if (c->state == CM_ST_SIDR_RCVD)
		return sidr_accept(c, in);
	if (c->state != CM_ST_REQ_RCVD)
		return RNIC_CMD_ST_BAD_STATE;
	if (!fw_qp_owned(qpn, c->ctx))
		return RNIC_CMD_ST_BAD_HANDLE;
	q = fw_qp_load(qpn);
	if (!q)
		return RNIC_CMD_ST_DMA_ERROR;
	/* a QP in RTR or RTS was moved by the host (rdma_init_qp_attr): it is left so */
	ext = q->state == RNIC_QPS_RTR || q->state == RNIC_QPS_RTS;
	if (q->type != RNIC_QPT_RC || (q->state != RNIC_QPS_INIT && !ext) || c->pdata_len > CM_REP_PDATA_LEN ||
	    CMD_IN(in, CM_ACCEPT, RESP_RES) > c->resp_res || CMD_IN(in, CM_ACCEPT, INIT_DEPTH) > c->init_depth ||
	    CMD_IN(in, CM_ACCEPT, RNR_RETRY) > 7)
		return RNIC_CMD_ST_BAD_PARAM;
	c->qpn = qpn;
	c->resp_res = (uint8_t)CMD_IN(in, CM_ACCEPT, RESP_RES);
	c->init_depth = (uint8_t)CMD_IN(in, CM_ACCEPT, INIT_DEPTH);
	c->min_rnr = (uint8_t)CMD_IN(in, CM_ACCEPT, MIN_RNR_TIMER);
	if (CMD_IN(in, CM_ACCEPT, ACK_TIMEOUT))
		c->ack_timeout = (uint8_t)((CMD_IN(in, CM_ACCEPT, ACK_TIMEOUT) - 1) & 31);
	c->psn = ext ? q->rq_psn : cm_id_psn(c);
	st = ext ? RNIC_CMD_ST_OK : cm_qp_rts(c);
	if (st)
		return st;
	/* the REP carries the RNR retry count we want the requester to use */
	c->rnr_retry = (uint8_t)CMD_IN(in, CM_ACCEPT, RNR_RETRY);
	c->state = CM_ST_REP_SENT;
	cm_timer_start(c);
	send_rep(c);
	return RNIC_CMD_ST_OK;
}

/* ---- the active side */
/* REQ (12.6.5) of an idle CM ID, sent again as it was on each retry. */
static void send_req(const struct fw_cm *c)
{
	uint8_t out[CM_MAD_LEN];

	cm_msg(c, out, CM_ATTR_REQ);
	rnic_put_be32(out + CM_REQ_SERVICE_ID, (uint32_t)(c->service_id >> 32));
	rnic_put_be32(out + CM_REQ_SERVICE_ID + 4, (uint32_t)c->service_id);
	memcpy(out + CM_REQ_CA_GUID, fw.ip6 + 8, 8);
	rnic_put_be24(out + CM_REQ_LOCAL_QPN, c->qpn);
	out[CM_REQ_LOCAL_QPN + 3] = c->resp_res;
	out[CM_REQ_INIT_DEPTH] = c->init_depth;
	out[CM_REQ_RESP_TIMEOUT] = (uint8_t)(c->resp_timeout << 3); /* RC, no end-to-end credits */
	rnic_put_be24(out + CM_REQ_START_PSN, c->psn);
	out[CM_REQ_START_PSN + 3] = (uint8_t)(c->resp_timeout << 3 | c->retry_cnt);
	rnic_put_be16(out + CM_REQ_PKEY, 0xffff);
	out[CM_REQ_MTU] = (uint8_t)(c->mtu << 4 | c->rnr_retry);
	out[CM_REQ_MAX_RETRIES] = (uint8_t)((c->max_tries - 1) << 4);
	rnic_put_be32(out + CM_REQ_LIDS, 0xffffffffu); /* no LIDs on Ethernet: the permissive LID, as rxe */
	if (c->v6) {
		memcpy(out + CM_REQ_LOCAL_GID, fw.ip6, 16);
	} else {
		out[CM_REQ_LOCAL_GID + 10] = out[CM_REQ_LOCAL_GID + 11] = 0xff;
		rnic_put_be32(out + CM_REQ_LOCAL_GID + 12, fw.ip);
	}
	memcpy(out + CM_REQ_REMOTE_GID, c->gid, 16);
	out[CM_REQ_TCLASS] = c->tclass;
	out[CM_REQ_HOP_LIMIT] = CM_HOP_LIMIT;
	out[CM_REQ_ACK_TIMEOUT] = (uint8_t)(c->ack_timeout << 3);
	memcpy(out + CM_REQ_PDATA, c->pdata, c->pdata_len < CM_REQ_PDATA_LEN ? c->pdata_len : CM_REQ_PDATA_LEN);
	cm_send(c, out);
}

static void send_rtu(const struct fw_cm *c)
{
	uint8_t out[CM_MAD_LEN];

	cm_msg(c, out, CM_ATTR_RTU);
	cm_send(c, out);
}

static uint32_t cm_connect(struct fw_cm *c, const uint8_t *in)
{
	uint32_t qpn = CMD_IN(in, CM_CONNECT, QPN), st;
	const struct fw_qp *q;
	const uint8_t *dgid = in + RNIC_CMDI_CM_CONNECT_DGID_OFF;

	if (c->state != CM_ST_IDLE)
		return RNIC_CMD_ST_BAD_STATE;
	if (!fw_qp_owned(qpn, c->ctx))
		return RNIC_CMD_ST_BAD_HANDLE;
	q = fw_qp_load(qpn);
	if (!q)
		return RNIC_CMD_ST_DMA_ERROR;
	c->ud = q->type == RNIC_QPT_UD;
	c->external = CMD_IN(in, CM_CONNECT, EXTERNAL) != 0;
	if ((!c->ud && (q->type != RNIC_QPT_RC || c->pdata_len > CM_REQ_PDATA_LEN ||
			(q->state != RNIC_QPS_INIT && !(c->external && q->state == RNIC_QPS_RESET)))) ||
	    CMD_IN(in, CM_CONNECT, RETRY_CNT) > 7 || CMD_IN(in, CM_CONNECT, RNR_RETRY) > 7 ||
	    CMD_IN(in, CM_CONNECT, RESP_TIMEOUT) > 31 || CMD_IN(in, CM_CONNECT, MAX_RETRIES) > 15 ||
	    CMD_IN(in, CM_CONNECT, ACK_TIMEOUT) > 31 || CMD_IN(in, CM_CONNECT, PATH_MTU) < RNIC_MTU_256 ||
	    CMD_IN(in, CM_CONNECT, PATH_MTU) > RNIC_MTU_4096 || CMD_IN(in, CM_CONNECT, RESP_RES) > RNIC_MAX_RD_ATOM ||
	    CMD_IN(in, CM_CONNECT, INIT_DEPTH) > RNIC_MAX_RD_ATOM)
		return RNIC_CMD_ST_BAD_PARAM;
	st = fw_gid_resolve(dgid, c->mac);
	if (st)
		return st;
	memcpy(c->gid, dgid, 16);
	c->v6 = fw_gid_ipv4(dgid, &c->ip) != 0;
	c->qpn = qpn;
	c->service_id = CMD_IN(in, CM_CONNECT, SERVICE_ID);
	c->resp_res = (uint8_t)CMD_IN(in, CM_CONNECT, RESP_RES);
	c->init_depth = (uint8_t)CMD_IN(in, CM_CONNECT, INIT_DEPTH);
	c->retry_cnt = (uint8_t)CMD_IN(in, CM_CONNECT, RETRY_CNT);
	c->rnr_retry = (uint8_t)CMD_IN(in, CM_CONNECT, RNR_RETRY);
	c->resp_timeout = (uint8_t)CMD_IN(in, CM_CONNECT, RESP_TIMEOUT);
	c->max_tries = (uint8_t)(CMD_IN(in, CM_CONNECT, MAX_RETRIES) + 1);
	c->ack_timeout = (uint8_t)CMD_IN(in, CM_CONNECT, ACK_TIMEOUT);
	c->min_rnr = RNIC_CM_MIN_RNR_TIMER;
	c->tclass = (uint8_t)CMD_IN(in, CM_CONNECT, TCLASS);
	c->mtu = (uint8_t)CMD_IN(in, CM_CONNECT, PATH_MTU);
	c->psn = cm_id_psn(c);
	rnic_put_be64(c->tid, fw_prf(PRF_CM_TID, c->gen));
	c->state = c->ud ? CM_ST_SIDR_SENT : CM_ST_REQ_SENT;
	cm_timer_start(c);
	if (c->ud)
		send_sidr_req(c);
	else
		send_req(c);
	return RNIC_CMD_ST_OK;
}

/* A REP for our REQ: the QP to RTR and RTS on the REP's QPN and PSN, the RTU, ESTABLISHED. A REP
 * seen again (our RTU was lost) gets the RTU again. */
static void cm_rep(const struct cm_peer *p, const uint8_t *m)
{
	struct fw_cm *c = cm_id_find(p, m, CM_REP_REMOTE_COMM_ID,
				  1u << CM_ST_REQ_SENT | 1u << CM_ST_ESTABLISHED | 1u << CM_ST_REP_RCVD);

	if (!c || (c->state != CM_ST_REQ_SENT && rnic_be32(m + CM_REP_LOCAL_COMM_ID) != c->remote_id)) {
		fw.gsi.drop_unknown++;
		return;
	}
	if (c->state == CM_ST_REP_RCVD) {
		fw.gsi.dup++; /* the host has yet to ask for the RTU */
		return;
	}
	if (c->state == CM_ST_ESTABLISHED) {
		fw.gsi.dup++;
		send_rtu(c);
		return;
	}
	c->remote_id = rnic_be32(m + CM_REP_LOCAL_COMM_ID);
	c->remote_qpn = rnic_be24(m + CM_REP_LOCAL_QPN);
	c->remote_psn = rnic_be24(m + CM_REP_START_PSN);
	/* we read at most as deep as the peer answers, and answer what it will read */
	if (m[CM_REP_RESP_RES] < c->init_depth)
		c->init_depth = m[CM_REP_RESP_RES];
	c->rnr_retry = m[CM_REP_RNR_RETRY] >> 5;
	c->srq = m[CM_REP_RNR_RETRY] >> 4 & 1;
	if (c->external) {
		/* the host moves its QP and then asks for the RTU (rdma_establish) */
		c->state = CM_ST_REP_RCVD;
		cm_event(c, RNIC_CM_EV_CONNECT_RESPONSE, 0, m + CM_REP_PDATA, CM_REP_PDATA_LEN);
		return;
	}
	if (cm_qp_rts(c)) {
		cm_qp_error(c);
		c->state = CM_ST_IDLE;
		cm_event(c, RNIC_CM_EV_UNREACHABLE, 0, 0, 0);
		return;
	}
	send_rtu(c);
	c->state = CM_ST_ESTABLISHED;
	cm_event(c, RNIC_CM_EV_ESTABLISHED, 0, m + CM_REP_PDATA, CM_REP_PDATA_LEN);
}

/* A REJ of our REQ, or of our REP: REJECTED with its reason and private data. */
static void cm_rej(const struct cm_peer *p, const uint8_t *m)
{
	struct fw_cm *c = cm_id_find(p, m, CM_REJ_REMOTE_COMM_ID, 1u << CM_ST_REQ_SENT | 1u << CM_ST_REP_SENT);

	if (!c) {
		fw.gsi.drop_unknown++;
		return;
	}
	if (c->state == CM_ST_REP_SENT)
		cm_qp_error(c);
	c->state = CM_ST_IDLE;
	c->reason = (uint16_t)rnic_be16(m + CM_REJ_REASON);
	cm_event(c, RNIC_CM_EV_REJECTED, 0, m + CM_REJ_PDATA, CM_REJ_PDATA_LEN);
}

/* ---- disconnection (12.9.8.4) */
static void send_dreq(const struct fw_cm *c)
{
	uint8_t out[CM_MAD_LEN];

	cm_msg(c, out, CM_ATTR_DREQ);
	rnic_put_be24(out + CM_DREQ_REMOTE_QPN, c->remote_qpn);
	cm_send(c, out);
}

/* rdma_disconnect: the QP to error (its work flushes), then a DREQ, answered by DREP or given up
 * after the retries (DISCONNECTED either way). After the peer's DREQ only the QP is left to do. */
static uint32_t cm_disconnect(struct fw_cm *c)
{
	if (c->state != CM_ST_ESTABLISHED && c->state != CM_ST_REP_SENT && !(c->state == CM_ST_IDLE && c->qpn))
		return RNIC_CMD_ST_BAD_STATE;
	cm_qp_error(c);
	if (c->state == CM_ST_IDLE)
		return RNIC_CMD_ST_OK;
	c->state = CM_ST_DREQ_SENT;
	cm_timer_start(c);
	send_dreq(c);
	return RNIC_CMD_ST_OK;
}

/* The private data the next message of c can carry: CM_PDATA gives no more (0: no message of
 * its state carries any). Idle: a REQ (92; CM_CONNECT refuses more for RC) or a SIDR_REQ (216);
 * a request received: the REP (196; a REJ takes 148 of it) or the SIDR_REP (136). */
static uint32_t pdata_room(const struct fw_cm *c)
{
	switch (c->state) {
	case CM_ST_IDLE:
		return CM_SIDR_REQ_PDATA_LEN;
	case CM_ST_REQ_RCVD:
		return CM_REP_PDATA_LEN;
	case CM_ST_SIDR_RCVD:
		return CM_SIDR_REP_PDATA_LEN;
	default:
		return 0;
	}
}

/* rdma_cm's service IDs of a port below 1024 (RDMA_PS_IPOIB, TCP, UDP, IB << 16 | port), which
 * only a context with CAP_NET_BIND_SERVICE listens on, as Linux's cma_use_port requires */
static int privileged_port(uint64_t sid)
{
	uint32_t ps = (uint32_t)(sid >> 16), port = (uint32_t)sid & 0xffff;

	return sid >> 32 == 0 && (ps == 0x0002 || ps == 0x0106 || ps == 0x0111 || ps == 0x013f) && port && port < 1024;
}

/* A listener of sid came: the requests waiting for it go to it now, as though they came now */
static void cm_unhold(uint64_t sid)
{
	struct cm_peer p;
	uint8_t m[CM_MAD_LEN];

	while (cm_held_take(sid, &p, m)) {
		if (rnic_be16(m + CM_MAD_ATTR_ID) == CM_ATTR_REQ)
			cm_req(&p, m);
		else
			cm_sidr_req(&p, m);
	}
}

uint32_t fw_cm_cmd(uint32_t ctx, uint32_t opcode, const uint8_t *in, uint8_t *out)
{
	struct fw_cm *c = cm_id_get(ctx, rnic_rd_le(in, 4));
	uint32_t i, off, len, max;
	int32_t n;

	if (opcode == RNIC_CMD_CM_CREATE_ID) {
		n = cm_id_alloc(ctx);
		if (n < 0)
			return RNIC_CMD_ST_NO_RESOURCES;
		RNIC_CMDO_HANDLE_HANDLE_SET(out, (uint32_t)n);
		return RNIC_CMD_ST_OK;
	}
	if (!c)
		return RNIC_CMD_ST_BAD_HANDLE;
	switch (opcode) {
	case RNIC_CMD_CM_DESTROY_ID:
		/* as Linux's cm_destroy_id: a request left unanswered is rejected (timeout), a live
		 * connection gets a DREQ; the peer is not left to its retries */
		if (c->state == CM_ST_SIDR_RCVD) {
			sidr_rep(c, CM_SIDR_REJECT);
		} else if (c->state == CM_ST_REQ_RCVD || c->state == CM_ST_REP_SENT) {
			uint8_t m[CM_MAD_LEN];

			cm_msg(c, m, CM_ATTR_REJ);
			m[CM_REJ_MSG_REJECTED] = (uint8_t)((c->state == CM_ST_REQ_RCVD ? CM_MSG_REQ : CM_MSG_REP) << 6);
			rnic_put_be16(m + CM_REJ_REASON, CM_REJ_TIMEOUT);
			cm_send(c, m);
		} else if (c->state == CM_ST_ESTABLISHED) {
			send_dreq(c);
		}
		c->used = 0;
		return RNIC_CMD_ST_OK;
	case RNIC_CMD_CM_LISTEN:
		if (c->state != CM_ST_IDLE)
			return RNIC_CMD_ST_BAD_STATE;
		i = CMD_IN(in, CM_LISTEN, QP_TYPE);
		if (i && i != RNIC_QPT_RC && i != RNIC_QPT_UD)
			return RNIC_CMD_ST_BAD_PARAM;
		if (privileged_port(CMD_IN(in, CM_LISTEN, SERVICE_ID)) &&
		    !(RNIC_GET(RNIC_FW_HOST_CFG_CTX_PRIV, hal_host_cfg()) >> ctx & 1))
			return RNIC_CMD_ST_DENIED;
		c->qp_type = (uint8_t)i;
		for (i = 0; i < FW_CM_IDS; i++)
			if (fw.cm[i].used && fw.cm[i].state == CM_ST_LISTEN &&
			    fw.cm[i].service_id == CMD_IN(in, CM_LISTEN, SERVICE_ID))
				return RNIC_CMD_ST_BUSY; /* one listener per service ID of the NIC */
		c->service_id = CMD_IN(in, CM_LISTEN, SERVICE_ID);
		c->state = CM_ST_LISTEN;
		fw_printf("cm %u ctx %u: listens on service %x\n", (uint32_t)(c - fw.cm), ctx, (uint32_t)c->service_id);
		cm_unhold(c->service_id);
		return RNIC_CMD_ST_OK;
	case RNIC_CMD_CM_PDATA:
		off = CMD_IN(in, CM_PDATA, OFFSET);
		len = CMD_IN(in, CM_PDATA, LEN);
		max = pdata_room(c);
		if (!max)
			return RNIC_CMD_ST_BAD_STATE;
		if (len > RNIC_CMDI_CM_PDATA_DATA_LEN || off + len > max || CMD_IN(in, CM_PDATA, TOTAL) > max)
			return RNIC_CMD_ST_BAD_PARAM;
		memcpy(c->pdata + off, in + RNIC_CMDI_CM_PDATA_DATA_OFF, len);
		c->pdata_len = (uint8_t)CMD_IN(in, CM_PDATA, TOTAL);
		return RNIC_CMD_ST_OK;
	case RNIC_CMD_CM_ACCEPT:
		return cm_accept(c, in);
	case RNIC_CMD_CM_CONNECT:
		return cm_connect(c, in);
	case RNIC_CMD_CM_DISCONNECT:
		return cm_disconnect(c);
	case RNIC_CMD_CM_ESTABLISH:
		if (c->state != CM_ST_REP_RCVD)
			return RNIC_CMD_ST_BAD_STATE;
		send_rtu(c);
		c->state = CM_ST_ESTABLISHED;
		return RNIC_CMD_ST_OK;
	case RNIC_CMD_CM_REJECT: {
		uint8_t m[CM_MAD_LEN];

		if (c->state == CM_ST_SIDR_RCVD) {
			sidr_rep(c, CM_SIDR_REJECT);
			c->state = CM_ST_IDLE;
			return RNIC_CMD_ST_OK;
		}
		if (c->state != CM_ST_REQ_RCVD)
			return RNIC_CMD_ST_BAD_STATE;
		cm_msg(c, m, CM_ATTR_REJ);
		m[CM_REJ_MSG_REJECTED] = CM_MSG_REQ << 6;
		rnic_put_be16(m + CM_REJ_REASON, CMD_IN(in, CM_REJECT, REASON));
		memcpy(m + CM_REJ_PDATA, c->pdata, c->pdata_len < CM_REJ_PDATA_LEN ? c->pdata_len : CM_REJ_PDATA_LEN);
		cm_send(c, m);
		c->state = CM_ST_IDLE;
		return RNIC_CMD_ST_OK;
	}
	default:
		return RNIC_CMD_ST_BAD_OPCODE;
	}
}

/* an id waiting for an answer, with a retransmission due at its deadline */
static int cm_timed(const struct fw_cm *c)
{
	return c->used && (1u << c->state & (1u << CM_ST_REP_SENT | 1u << CM_ST_REQ_SENT |
					     1u << CM_ST_DREQ_SENT | 1u << CM_ST_SIDR_SENT));
}

/* Cycles until the first retransmission is due, at most `max`: how long the main loop may park. */
uint32_t fw_cm_idle(uint32_t max)
{
	uint64_t now = hal_cycles();

	if (cm_due <= now)
		return 0;
	return cm_due - now < max ? (uint32_t)(cm_due - now) : max;
}

/* Timers: a request that waited its hold for a listener in vain is refused. A REP not answered
 * by an RTU goes again, up to the REQ's Max CM Retries; then the connection is given up (the QP
 * to error, UNREACHABLE, as rdma_cm reports a REP timeout). */
void fw_cm_poll(void)
{
	uint64_t now = hal_cycles();
	uint32_t i;

	if (now < cm_due)
		return;
	cm_due = cm_held_expire(now);
	for (i = 0; i < FW_CM_IDS; i++) {
		struct fw_cm *c = &fw.cm[i];

		if (!cm_timed(c))
			continue;
		if (now < c->deadline) {
			if (c->deadline < cm_due)
				cm_due = c->deadline;
			continue;
		}
		if (c->tries < c->max_tries && now < c->give_up) {
			c->tries++;
			cm_timer_set(c, now);
			if (c->state == CM_ST_REP_SENT) {
				if (cm_may_answer()) /* the requester has yet to show it is there */
					send_rep(c);
			} else if (c->state == CM_ST_REQ_SENT) {
				send_req(c);
			} else if (c->state == CM_ST_SIDR_SENT) {
				send_sidr_req(c);
			} else {
				send_dreq(c);
			}
			continue;
		}
		if (c->state == CM_ST_DREQ_SENT) {
			c->state = CM_ST_IDLE;
			cm_event(c, RNIC_CM_EV_DISCONNECTED, 0, 0, 0);
			continue;
		}
		if (c->state == CM_ST_REP_SENT)
			cm_qp_error(c);
		c->state = CM_ST_IDLE;
		cm_event(c, RNIC_CM_EV_UNREACHABLE, 0, 0, 0);
	}
}

/* A QP destroyed: a connection that used it stops (no timer acts on a QPN that may be reused). */
void fw_cm_qp_gone(uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < FW_CM_IDS; i++) {
		struct fw_cm *c = &fw.cm[i];

		if (c->used && c->qpn == qpn && c->state != CM_ST_LISTEN) {
			c->qpn = 0;
			c->state = CM_ST_IDLE;
		}
	}
}

/* One MAD from the peer. */
void fw_cm_input(const struct cm_peer *p, const uint8_t *mad)
{
	uint32_t method = mad[CM_MAD_METHOD], attr = rnic_be16(mad + CM_MAD_ATTR_ID);

	if (mad[CM_MAD_BASE_VERSION] != 1 || mad[CM_MAD_CLASS] != CM_CLASS ||
	    mad[CM_MAD_CLASS_VERSION] != CM_CLASS_VERSION) {
		fw.gsi.drop_class++;
		return;
	}
	fw.gsi.rx++;
	if (method == CM_METHOD_GET || method == CM_METHOD_SET) {
		cm_get_or_set(p, mad, attr);
		return;
	}
	if (method != CM_METHOD_SEND) {
		fw.gsi.drop_unknown++;
		return;
	}
	switch (attr) {
	case CM_ATTR_REQ:
		cm_req(p, mad);
		break;
	case CM_ATTR_REP:
		cm_rep(p, mad);
		break;
	case CM_ATTR_REJ:
		cm_rej(p, mad);
		break;
	case CM_ATTR_SIDR_REQ:
		cm_sidr_req(p, mad);
		break;
	case CM_ATTR_SIDR_REP:
		cm_sidr_rep(p, mad);
		break;
	case CM_ATTR_RTU: {
		struct fw_cm *c = cm_id_find(p, mad, CM_RTU_REMOTE_COMM_ID, 1u << CM_ST_REP_SENT);

		if (!c) {
			fw.gsi.drop_unknown++;
			break;
		}
		c->state = CM_ST_ESTABLISHED;
		cm_event(c, RNIC_CM_EV_ESTABLISHED, 0, mad + CM_MAD_DATA + 8, 0);
		break;
	}
	case CM_ATTR_DREP: {
		struct fw_cm *c = cm_id_find(p, mad, CM_DREP_REMOTE_COMM_ID, 1u << CM_ST_DREQ_SENT);

		if (!c) {
			fw.gsi.drop_unknown++;
			break;
		}
		c->state = CM_ST_IDLE;
		cm_event(c, RNIC_CM_EV_DISCONNECTED, 0, 0, 0);
		break;
	}
	case CM_ATTR_DREQ: {
		struct fw_cm *c = cm_id_find(p, mad, CM_DREQ_REMOTE_COMM_ID,
					  1u << CM_ST_ESTABLISHED | 1u << CM_ST_REP_SENT | 1u << CM_ST_DREQ_SENT);

		if (c && rnic_be32(mad + CM_DREQ_LOCAL_COMM_ID) != c->remote_id)
			c = 0; /* both IDs must be the connection's (Linux: cm_acquire_id) */
		cm_answer_dreq(p, mad);
		if (c) {
			c->state = CM_ST_IDLE;
			cm_event(c, RNIC_CM_EV_DISCONNECTED, 0, 0, 0);
		}
		break;
	}
	default:
		/* MRA, LAP, APR: not offered */
		fw.gsi.drop_unknown++;
	}
}
