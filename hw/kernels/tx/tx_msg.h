/* What TX's stages pass each other besides a frame's beats (rnic_icrc.h): tx_core, the read
 * channel (tx_rdport.h), the emitter (tx_emit.h), the timer wheel (tx_wheel.h) and the
 * responder's queue (tx_rsq.h):
 *   tx_core --rdreqq--> tx_rdport   a DMA read (payload, an MTT line, an MPT entry), zeros in
 *                                   place of payload not read, or a fence
 *   tx_core --wqreqq--> tx_rdport   the scheduler's DMA read of WQEs
 *   tx_rdport --rdbeatq--> tx_core  a beat of a WQE, MTT or MPT read, or the fence passed
 *   tx_rdport --payq--> tx_emit     a payload beat from the DMA reads (or zeros in place of one)
 *   tx_rdport --crdq--> tx_core     a payload beat's bytes, an entry of the channel's: the
 *                                   credits they held are free
 *   tx_core --pkq--> tx_emit        a packet built: its headers, and how much payload follows
 *   tx_emit --retq--> tx_core       a UC/UD WQE's last packet left: it completes
 *   tx_emit --fltq--> tx_core       a payload beat came refused by the host: its message stops
 *   tx_core --twaddq--> tx_wheel    a QP's first outstanding WQE started: its timers run
 *   tx_wheel --twdueq--> tx_core    a QP whose tick has come: look at its timers
 *   tx_core --twretq--> tx_wheel    ... looked at: when to look again, or nothing to time
 *   tx_rsq --rjq--> tx_core         a responder packet to build (an ACK, an ATOMIC ACK, a READ
 *                                   response's next packet)
 *   tx_rsq --rjxq--> tx_core        a READ response asked for again: its packets still queued are
 *                                   dropped
 *   tx_core --rjcq--> tx_rsq        a READ response whose payload failed: its cutting stops */
#ifndef TX_MSG_H
#define TX_MSG_H

#include "rnic_kernel.h"
#include "rnic_fifo.h"

#define TW_SHIFT 10       /* the timer wheel's tick: 1,024 cycles (4.096 us, the unit of the ACK
			   * timeout, IBTA 9.7.6.1.3) */
#define TW_SLOTS 256      /* ticks ahead it holds (1 ms); a timer further out is looked at then */
#define TW_NIL 0x7fffu    /* no QP: the end of a slot's list */

#define TX_HDR 160        /* header bytes of one packet, inline payload included */

/* A packet built: its headers (and inline payload), then pay_len bytes of payload beats. */
typedef struct {
	uint8_t hdr[TX_HDR];
	uint16_t hdr_len;    /* bytes of hdr sent (headers and inline payload) ... */
	uint8_t hdr_last;    /* ... in beats 0 to hdr_last, the last one's hdr_tail bytes (the */
	uint8_t hdr_tail;    /* emitter's count, taken from hdr_len as the packet is pushed) */
	uint16_t pay_len;    /* payload bytes from DMA reads */
	uint8_t pad;
	uint8_t retire;      /* UC/UD: the message's last packet, its WQE completes once sent */
	uint8_t v6;          /* RoCEv2 over IPv6 */
	uint8_t first;       /* a message's (a response's) first packet */
	uint8_t rsp;         /* a responder's packet */
	uint16_t qpn;
	uint16_t ob;         /* an RC request's: its WQE's outstanding entry; TX_OBP otherwise */
} tx_pkt_t;

/* A payload beat taken from the DMA read stream, or zeros in place of one: its bytes, refused by
 * the host (err), or standing for payload not read because its region went away (poison: the
 * packet leaves with a bad ICRC, nobody takes it) */
typedef struct {
	uint8_t data[RNIC_BEAT];
	uint8_t n, err, poison;
} tx_pay_t;

/* What a read brings back (its kind): payload, WQEs for the prefetch ring, a TLB line, an MPT
 * entry; no read: zeros in place of payload that may not be read any more, or a fence, passed
 * back once every read before it has returned its data */
enum { REQ_PAYLOAD, REQ_WQE, REQ_ZERO, REQ_MTT, REQ_MPT, REQ_FENCE };

/* A read tx_core asks of the read channel: len bytes at bus (REQ_ZERO: len bytes of zeros;
 * REQ_FENCE: the fence's token) */
typedef struct {
	uint64_t bus;
	uint16_t len;
	uint8_t kind, token;
} tx_rdreq_t;

/* A beat of a WQE, MTT or MPT read, refused by the host (err); or a fence passed (its token) */
typedef struct {
	uint8_t data[RNIC_BEAT];
	uint8_t kind, err, token;
} tx_rdbeat_t;

/* Credits given back by the read channel: payload bytes taken into payq, and whether an entry of
 * its list was freed (a read's first beat taken, zeros begun, a fence passed) */
typedef struct {
	uint8_t n, done;
} tx_crd_t;

typedef struct {
	uint16_t qpn;
	uint8_t status;      /* its completion's: a packet of it poisoned or refused, else success */
} tx_ret_t;

typedef struct {
	uint16_t qpn, ob;    /* the refused beat's packet: its QP, its WQE's outstanding entry */
	uint8_t rsp;         /* ... a READ response's */
} tx_flt_t;

/* A responder packet, cut by tx_rsq: tx_core builds its headers and reads its payload. */
typedef struct {
	uint16_t qpn;
	uint8_t rid;         /* its response's number: a cancel names it */
	uint8_t kind;        /* RNIC_RSP_KIND_ACK, _ATOMIC or _READ */
	uint8_t op;          /* BTH opcode */
	uint8_t syndrome;
	uint8_t first, last; /* its response's first and last packet */
	uint16_t pay;        /* payload bytes (a READ response's) */
	uint32_t psn, msn, key;
	uint64_t va, atomic;
} tx_rjob_t;

typedef struct {
	uint16_t q;
	uint8_t drop;  /* nothing to time: out of the wheel (unless its timers started again since) */
	uint32_t tick; /* else: the tick to look at it again in (cycle >> TW_SHIFT, modulo 2^32) */
} tx_twret_t;

RNIC_FIFO(tx_pkq, tx_pkt_t, 6)   /* packets built (headers, reads issued) and not yet emitted:
				     their payload reads cover the PCIe round trip for 64-byte
				     messages too */
RNIC_FIFO(tx_payq, tx_pay_t, 3)  /* beats taken ahead of the emitter, so the WQE beats behind
				     them need not wait for it */
RNIC_FIFO(tx_rdreqq, tx_rdreq_t, 1)
RNIC_FIFO(tx_wqreqq, tx_rdreq_t, 1)
RNIC_FIFO(tx_rdbeatq, tx_rdbeat_t, 2)
RNIC_FIFO(tx_crdq, tx_crd_t, 2)
RNIC_FIFO(tx_retq, tx_ret_t, 2)
RNIC_FIFO(tx_fltq, tx_flt_t, 1)
RNIC_FIFO(tx_twaddq, uint16_t, 1)
RNIC_FIFO(tx_twdueq, uint16_t, 1)
RNIC_FIFO(tx_twretq, tx_twret_t, 1)
RNIC_FIFO(tx_rjq, tx_rjob_t, 1)
RNIC_FIFO(tx_rjxq, uint8_t, 1)
RNIC_FIFO(tx_rjcq, uint8_t, 1)

#endif
