/* QP1's answers to peers the NIC has no connection with: REJ for a REQ nobody takes, DREP for a
 * DREQ of no connection, GetResp, a SIDR_REP refusing, all under one rate limit; and the
 * requests that wait a while for their listener before they are refused (cm.h: CM_HOLD_CYCLES). */
#include "cm.h"
#include "fw.h"
#include "hal.h"
#include "rnic_frame.h"

/* The common MAD header of an answer: CM class version 2, method, the request's transaction ID. */
void cm_mad_header(uint8_t *out, uint32_t method, const uint8_t *tid, uint32_t attr)
{
	memset(out, 0, CM_MAD_LEN);
	out[CM_MAD_BASE_VERSION] = 1;
	out[CM_MAD_CLASS] = CM_CLASS;
	out[CM_MAD_CLASS_VERSION] = CM_CLASS_VERSION;
	out[CM_MAD_METHOD] = (uint8_t)method;
	memcpy(out + CM_MAD_TID, tid, 8);
	rnic_put_be16(out + CM_MAD_ATTR_ID, attr);
}

/* Whether an answer to a peer with no connection may go now (CM_ANSWER_*): each waits for a
 * token, and tokens come back one each CM_ANSWER_CYCLES, CM_ANSWER_BURST at the most. */
int cm_may_answer(void)
{
	uint64_t now = hal_cycles(), n = (now - fw.cm_tokens_at) / CM_ANSWER_CYCLES;

	if (n >= CM_ANSWER_BURST) {
		fw.cm_tokens = CM_ANSWER_BURST;
		fw.cm_tokens_at = now;
	} else if (n) {
		fw.cm_tokens = fw.cm_tokens + (uint32_t)n > CM_ANSWER_BURST ? CM_ANSWER_BURST : fw.cm_tokens + (uint32_t)n;
		fw.cm_tokens_at += n * CM_ANSWER_CYCLES;
	}
	if (!fw.cm_tokens) {
		fw.gsi.rate_limited++;
		return 0;
	}
	fw.cm_tokens--;
	return 1;
}

void cm_answer(const struct cm_peer *p, const uint8_t *out)
{
	if (cm_may_answer())
		fw_gsi_send(p, out);
}

/* A REQ nobody listens for: REJ "invalid service ID" for the REQ (Linux: cm_issue_rej), which
 * rdma_cm reports as RDMA_CM_EVENT_REJECTED, status 8. */
void cm_reject_req(const struct cm_peer *p, const uint8_t *req, uint32_t reason)
{
	uint8_t out[CM_MAD_LEN];

	cm_mad_header(out, CM_METHOD_SEND, req + CM_MAD_TID, CM_ATTR_REJ);
	memcpy(out + CM_REJ_REMOTE_COMM_ID, req + CM_REQ_LOCAL_COMM_ID, 4);
	out[CM_REJ_MSG_REJECTED] = CM_MSG_REQ << 6;
	rnic_put_be16(out + CM_REJ_REASON, reason);
	cm_answer(p, out);
}

/* A DREQ for no connection of ours (already gone, or never ours): DREP all the same, so that the
 * peer's disconnect completes at once (Linux: cm_issue_drep). */
void cm_answer_dreq(const struct cm_peer *p, const uint8_t *dreq)
{
	uint8_t out[CM_MAD_LEN];

	cm_mad_header(out, CM_METHOD_SEND, dreq + CM_MAD_TID, CM_ATTR_DREP);
	memcpy(out + CM_DREP_LOCAL_COMM_ID, dreq + CM_DREQ_REMOTE_COMM_ID, 4);
	memcpy(out + CM_DREP_REMOTE_COMM_ID, dreq + CM_DREQ_LOCAL_COMM_ID, 4);
	cm_answer(p, out);
}

/* Get(ClassPortInfo) (IBTA 13.4.8.1): base and class version, the response time value; no
 * redirection, no traps. Any other Get or Set: GetResp "unsupported method/attribute", as
 * Linux's MAD layer answers requests no agent takes. */
void cm_get_or_set(const struct cm_peer *p, const uint8_t *mad, uint32_t attr)
{
	uint8_t out[CM_MAD_LEN];

	cm_mad_header(out, CM_METHOD_GET_RESP, mad + CM_MAD_TID, attr);
	memcpy(out + CM_MAD_ATTR_MOD, mad + CM_MAD_ATTR_MOD, 4);
	if (mad[CM_MAD_METHOD] == CM_METHOD_GET && attr == CM_ATTR_CLASS_PORT_INFO) {
		out[CM_CPI_BASE_VERSION] = 1;
		out[CM_CPI_CLASS_VERSION] = CM_CLASS_VERSION;
		out[CM_CPI_RESP_TIME + 3] = CM_RESPONSE_TIMEOUT;
	} else {
		rnic_put_be16(out + CM_MAD_STATUS, CM_STATUS_UNSUPPORTED);
	}
	cm_answer(p, out);
}

/* A SIDR_REP's header: the request's transaction and ID, the status, the service ID */
void cm_sidr_rep_header(uint8_t *out, const uint8_t *tid, uint32_t rid, uint64_t sid, uint32_t status)
{
	cm_mad_header(out, CM_METHOD_SEND, tid, CM_ATTR_SIDR_REP);
	rnic_put_be32(out + CM_SIDR_REP_ID, rid);
	out[CM_SIDR_REP_STATUS] = (uint8_t)status;
	rnic_put_be32(out + CM_SIDR_REP_SERVICE_ID, (uint32_t)(sid >> 32));
	rnic_put_be32(out + CM_SIDR_REP_SERVICE_ID + 4, (uint32_t)sid);
}

/* SIDR_REQ m refused with status (CM_SIDR_UNSUPPORTED: nobody listens; CM_SIDR_REJECT) */
void cm_refuse_sidr(const struct cm_peer *p, const uint8_t *m, uint32_t status)
{
	uint8_t out[CM_MAD_LEN];

	cm_sidr_rep_header(out, m + CM_MAD_TID, rnic_be32(m + CM_SIDR_REQ_ID), rnic_be64(m + CM_SIDR_REQ_SERVICE_ID),
			   status);
	cm_answer(p, out);
}

/* ---- requests that came before their listener */
static int is_req(const uint8_t *m)
{
	return rnic_be16(m + CM_MAD_ATTR_ID) == CM_ATTR_REQ; /* else a SIDR_REQ */
}

static uint64_t req_sid(const uint8_t *m)
{
	return rnic_be64(m + (is_req(m) ? CM_REQ_SERVICE_ID : CM_SIDR_REQ_SERVICE_ID));
}

static uint32_t req_id(const uint8_t *m)
{
	return rnic_be32(m + (is_req(m) ? CM_REQ_LOCAL_COMM_ID : CM_SIDR_REQ_ID));
}

/* Request m set aside to wait for its listener: when it is refused (0: no room, refuse it now).
 * One from the same requester with the same ID already waits: a retransmission, dropped. */
uint64_t cm_hold_for_listener(const struct cm_peer *p, const uint8_t *m)
{
	struct fw_cm_held *h, *slot = 0;

	for (h = fw.cm_held; h < fw.cm_held + CM_HELD; h++) {
		if (!h->until) {
			slot = h;
		} else if (h->peer.v6 == p->v6 && (p->v6 ? !memcmp(h->peer.ip6, p->ip6, 16) : h->peer.ip == p->ip) &&
			   is_req(h->mad) == is_req(m) && req_id(h->mad) == req_id(m)) {
			fw.gsi.dup++;
			return h->until;
		}
	}
	if (!slot)
		return 0;
	slot->until = hal_cycles() + CM_HOLD_CYCLES;
	slot->peer = *p;
	memcpy(slot->mad, m, CM_MAD_LEN);
	return slot->until;
}

/* One request waiting for sid's listener, out of the waiting ones (0: none left) */
int cm_held_take(uint64_t sid, struct cm_peer *p, uint8_t *m)
{
	struct fw_cm_held *h;

	for (h = fw.cm_held; h < fw.cm_held + CM_HELD; h++) {
		if (h->until && req_sid(h->mad) == sid) {
			*p = h->peer;
			memcpy(m, h->mad, CM_MAD_LEN);
			h->until = 0;
			return 1;
		}
	}
	return 0;
}

/* The requests whose wait ended by `now` are refused, as they would have been at once (Linux:
 * cm_issue_rej); the others' earliest end (UINT64_MAX: none wait) */
uint64_t cm_held_expire(uint64_t now)
{
	struct fw_cm_held *h;
	uint64_t next = UINT64_MAX;

	for (h = fw.cm_held; h < fw.cm_held + CM_HELD; h++) {
		if (!h->until)
			continue;
		if (now < h->until) {
			next = h->until < next ? h->until : next;
			continue;
		}
		h->until = 0;
		if (is_req(h->mad))
			cm_reject_req(&h->peer, h->mad, CM_REJ_INVALID_SERVICE_ID);
		else
			cm_refuse_sidr(&h->peer, h->mad, CM_SIDR_UNSUPPORTED);
	}
	return next;
}
