/* RNIC direct-verbs extensions (in the manner of mlx5dv): what the standard verbs do not say. */
#ifndef RNIC_RNICDV_H
#define RNIC_RNICDV_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* NIC clock cycles of the last CQE polled from cq: when the WQE's doorbell (requester) or first
 * packet (responder) arrived, and when the CQE was written. */
int rnicdv_cq_last_ts(struct ibv_cq *cq, uint64_t *start_cycle, uint64_t *end_cycle);
/* Dispatch the context's pending events; returns the number of completion events (one per
 * armed CQ that completed, ibv_req_notify_cq). */
int rnicdv_poll_events(struct ibv_context *context);
/* the NIC clock: frequency and current value */
uint64_t rnicdv_clock_hz(struct ibv_context *context);
uint64_t rnicdv_read_clock(struct ibv_context *context);
/* The NIC's datapath counters (enum STAT of the spec, names in RNIC_STAT_NAMES): up to max of
 * them into counters; *count is how many the NIC has. 0 or an errno. */
int rnicdv_query_stats(struct ibv_context *context, uint64_t *counters, uint32_t max, uint32_t *count);

/* The NIC's connection manager (docs/ARCHITECTURE.md, "QP1 and the CM"; librdmacm is built on
 * it): one CM_* command of the spec (payload CMDI_CM_*, output CMDO_HANDLE), 0 or an errno; the
 * next CM event (struct CM_EVENT, CM_EVENT_BYTES) of the context, 0 or EAGAIN. The QP a command or
 * an event changed is known to the library in its new state when they return. */
int rnicdv_cm_cmd(struct ibv_context *context, uint32_t opcode, const void *in, size_t inlen, void *out,
		  size_t outlen);
int rnicdv_cm_get_event(struct ibv_context *context, void *event);
/* A non-blocking file descriptor that becomes readable (a byte per interrupt of the context)
 * when CM events may be waiting: poll it, drain it, then rnicdv_cm_get_event until EAGAIN.
 * -1 and errno if the event ring cannot be made. */
int rnicdv_cm_event_fd(struct ibv_context *context);

#ifdef __cplusplus
}
#endif

#endif
