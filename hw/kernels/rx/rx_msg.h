/* What the RX kernel's stages pass each other (docs/ARCHITECTURE.md, "Kernels"):
 *   rx_mac --macq--> rnic_icrc_fold --foldq--> rnic_icrc_shift --shiftq--> rnic_icrc_sum --sumq-->
 *   rx_icrc_check --beatq--> rx_store   (the ICRC's three stages: rnic_icrc.h)
 *   rx_mac --hdrq--> rx_hdr --factq--> rx_classify --headq--> rx_judge --descq--> rx_store
 *   rx_store --arriveq--> rx_ctx --frameq--> rx_rdq --judgedq--> rx_core --cmdq--> rx_store
 *                         rx_ctx --passq--> rx_core
 *   rx_store --doneq--> rx_core    rx_ctx --hintq--> rx_core    rx_rdq --rdntcq--> rx_core
 *   rx_ctx --ctxreqq--> rx_rdport --ctxrspq--> rx_ctx
 *   rx_core --rdreqq--> rx_rdport --rdbeatq--> rx_core
 * Every beat of the MAC's stream goes down both chains, one stage a clock, so a frame's last beat
 * reaches the frame store with its ICRC's verdict, and its headers' descriptor a clock before it.
 * The MAC cannot be stalled: each stage takes its input FIFO's head in every clock it has one,
 * so no FIFO but descq holds more than one entry and none is full (descq: the frames in the
 * ICRC chain, at most 5). The store hands the QPC cache (rx_ctx) each frame come in whole
 * (arriveq), which hands it on to rx_core in order with its QP's context (frameq) and its
 * request's key for the MPT cache's look-ahead (hintq). The read channel (rx_rdport) serves the
 * contexts rx_ctx misses (ctxreqq, their beats back on ctxrspq, taken every clock) and rx_core's
 * reads (rdreqq, their beats back on rdbeatq), in turn, and passes a fence once the reads before
 * it are back. rx_core
 * hands the store what the frame writes and produces, in order (cmdq); the store tells it when
 * each DMA write's last beat was taken (doneq), for the reads that must not pass one. Between
 * rx_ctx and rx_core, the requester's table of READs and atomics awaiting their responses
 * (rx_rdq) judges each response to one of ours and hands it on with its verdict (judgedq); the
 * other frames pass it by (passq), and rx_core takes the frames of both ways in order. */
#ifndef RX_MSG_H
#define RX_MSG_H

#include "rnic_kernel.h"
#include "rnic_icrc.h"

typedef struct {
	rnic_ebeat_t b;
	uint8_t crc_ok; /* last beat: the ICRC matches */
} rx_checked_t;

/* What a beat would say were it a frame's first or second (RoCEv2 A17: Ethernet, IPv4 or IPv6,
 * UDP, BTH, RETH; "4": as over IPv4, "6": as over IPv6, whose headers are 20 bytes longer).
 * Lengths are a frame's in bytes, as its headers would have it. */
typedef struct {
	uint8_t no, last, n;
	/* as the first beat */
	uint8_t ours, bcast, eth6;
	uint8_t roce4, roce6;         /* UDP to port 4791 at our address (IPv4: and its EtherType) */
	uint8_t ihl5, ver6;           /* IPv4: version 4, IHL 5; IPv6: version 6 */
	uint32_t sum[3];              /* the IPv4 header's ten words summed: in three parts (rx_hdr),
	                               * then whole in sum[0] (rx_classify) */
	uint16_t ip_end4, ip_end6;    /* where the IP header says the frame ends */
	uint16_t udp_end4, udp_end6;  /* ... the UDP header */
	uint16_t min4, min6;          /* the shortest frame its headers, pad and ICRC fit in */
	uint8_t op4, op6;             /* BTH opcode, the UC bit taken off */
	uint8_t uc4, uc6, bad4, bad6; /* bad: an opcode we do not serve, or a TVer or reserved bit */
	uint8_t xth4, xth6, req4, req6;
	uint8_t pkey4, ack4;
	uint32_t qpn4, psn4;
	uint64_t va4;
	uint16_t key4_hi;
	/* as the second */
	uint8_t pkey6, ack6;
	uint32_t qpn6, psn6, key6;
	uint64_t va6;
	uint16_t key4_lo;
} rx_facts_t;

/* a frame's first two beats' facts and its length, at its last beat */
typedef struct {
	rx_facts_t a, b;
	uint16_t len;
} rx_heads_t;

/* A frame's headers, judged (rx_judge) */
enum {
	RX_FW,        /* not RoCEv2 for us, but to our MAC or a broadcast: to the firmware */
	RX_JUNK,      /* neither: dropped as malformed */
	RX_MALFORMED, /* RoCEv2 for us whose headers do not hold together (IP, UDP, BTH, lengths) */
	RX_GSI,       /* a UD SEND to QP 1: to the firmware */
	RX_ROCE,      /* on to its QP */
};

/* what the dispatch takes of it (kept in the frame's entry of the store's queue) */
typedef struct {
	uint8_t cls;
	uint8_t op;       /* BTH opcode, the UC bit taken off (uc) */
	uint8_t uc, v6, xth, ackreq;
	uint16_t plen;    /* payload bytes */
	uint32_t qpn;     /* the BTH's destination QP, as a table index (MAX_QP or more: none of ours) */
	uint32_t psn;
} rx_verdict_t;

/* ... and what the arrival takes (the QPC cache's and the MPT cache's look-ahead) */
typedef struct {
	rx_verdict_t v;
	uint8_t req;      /* a request with a key (RETH, AtomicETH): WRITE FIRST/ONLY, READ, atomics */
	uint32_t key;     /* req: its key and address */
	uint64_t va;
} rx_desc_t;

#define RX_MAX_FRAMES 128 /* frames the store holds: a frame is released (cmdq) after rx_core is done */

/* A frame in the store, come in whole (rx_store to rx_core) */
typedef struct {
	uint16_t start; /* its first beat in the store */
	uint16_t beats;
	uint16_t len;   /* bytes */
	uint8_t icrc_ok;
	rx_verdict_t v; /* its headers, judged (rx_judge) */
	uint8_t raw[2 * RNIC_BEAT]; /* its first two beats (zeros past a one-beat frame) */
} rx_frame_t;

typedef struct {
	rx_frame_t f;
	uint8_t req;    /* rx_desc_t's: its request's key and address, for the caches' look-ahead */
	uint32_t key;
	uint64_t va;
} rx_arrival_t;

/* What rx_core asks of the store for a frame (or without one: a flush completion, a fence), done
 * in this order, each once what is before it is: a DMA write or the frame to the firmware (kind);
 * the frame's beats given back (release); what the frame produces, each on its port once the
 * write port took the last beat before it: a completion, an event (both to the CQ kernel), a
 * notice to the TX kernel (ack port), a responder frame for it (rsp port); a fence token. */
enum { RX_CMD_NONE, RX_CMD_SEG, RX_CMD_FW, RX_CMD_DATA };

/* What a command produces: the posts named by the bits of left, each on its port in this order */
enum { RX_P_CPL = 1, RX_P_EVT = 2, RX_P_NTC = 4, RX_P_RSP = 8, RX_P_FENCE = 16 };
typedef struct {
	uint8_t left;
	rnic_cpl_t cpl, evt;
	rnic_rsp_t rsp;
	uint32_t n_qpn, n_psn;       /* the notice */
	uint8_t n_syn, n_rd;
	uint8_t token;               /* the fence's */
} rx_posts_t;

typedef struct {
	uint8_t kind;
	uint16_t release;            /* the frame's beats (0: none given back) */
	uint16_t start, beats, len;  /* SEG/FW: the frame (its first beat; FW: its beats and bytes) */
	/* SEG: len bytes to addr, the frame's from byte `from` on, but for its first gh bytes, the
	 * GRH area's (grh), and ovr_n bytes from byte ovr_at of it (ovr_at < 0: before it), an
	 * atomic's value's (ovr_val, little-endian); DATA: len bytes of data to addr */
	uint64_t addr;
	uint32_t from;
	int32_t ovr_at;
	uint8_t gh, ovr_n;
	uint64_t ovr_val;
	uint8_t grh[RNIC_GRH_LEN];
	uint8_t data[16];
	rx_posts_t p;
} rx_cmd_t;

/* A line of the QPC cache: the fields of a QP's context that its frames are checked and placed
 * with (the rest of the context is read by nothing on the receive side) */
typedef struct {
	uint32_t ctrl;      /* QPC CTRL: valid, state, type, PMTU, IPv6 */
	uint16_t pdn;       /* < MAX_PD */
	uint32_t qkey;
	rnic_peer_t peer;   /* which a connected QP takes frames from */
	uint8_t access;     /* ACCESS (enum ACCESS) */
	uint8_t min_rnr;    /* RETRY.MIN_RNR */
} rx_qcl_t;

/* Apply QPC word `word` (a commit's, or one read from context memory) to a line's fields. */
static inline void rx_qcl_cfg(rx_qcl_t *l, uint32_t word, uint32_t v)
{
	switch (word) {
	case RNIC_QPC_CTRL / 4: l->ctrl = v; break;
	case RNIC_QPC_PDN / 4: l->pdn = (uint16_t)v; break;
	case RNIC_QPC_QKEY / 4: l->qkey = v; break;
	case RNIC_QPC_ACCESS / 4: l->access = (uint8_t)v; break;
	case RNIC_QPC_RETRY / 4: l->min_rnr = (uint8_t)RNIC_GET(RNIC_QPC_RETRY_MIN_RNR, v); break;
	default: rnic_peer_cfg(&l->peer, word, v); break;
	}
}

/* What rx_ctx hands on (a response to a request through rx_rdq, frameq; any other frame to
 * rx_core, passq): a frame come in whole, with its QP's context (ctx OK: l), or word that it has
 * none (GONE: its read was refused, or there is no context memory: dropped as for an unknown QP),
 * or neither (NONE: not RoCEv2 for one of our QPs, or bad); seq: its place in the order they came
 * (mod 256), which rx_core takes them in from the two ways */
enum { RX_CTX_NONE, RX_CTX_OK, RX_CTX_GONE };
typedef struct {
	rx_frame_t f;
	uint8_t ctx, seq;
	rx_qcl_t l;
} rx_ctxf_t;

/* a frame rx_rdq may judge: a READ response or an ATOMIC ACKNOWLEDGE (the others pass it by) */
static inline int rx_to_rdq(const rx_frame_t *f)
{
	return f->v.cls == RX_ROCE && ((f->v.op >= RNIC_BTH_OP_READ_RESP_FIRST && f->v.op <= RNIC_BTH_OP_READ_RESP_ONLY) ||
				       f->v.op == RNIC_BTH_OP_ATOMIC_ACK);
}

/* Where a message's bytes land: an entry of a scatter list */
typedef struct {
	uint64_t addr;
	uint32_t len;
	uint32_t key;   /* checked again (rnic_mpt_live) before each DMA write into it */
	uint8_t access; /* what the key must still grant */
} rx_sge_t;

enum {
	RX_RDA_DROP,      /* unexpected, a duplicate, or past a gap already told: dropped (counted) */
	RX_RDA_GAP,       /* past a gap: dropped, and the TX kernel told (a notice of PSN exp) */
	RX_RDA_MALFORMED, /* of the wrong length for its place in the request */
	RX_RDA_OK,        /* placed at byte off of the request's scatter list (last: its last) */
};
typedef struct {
	uint8_t verdict, last, nsge;
	uint32_t exp, off;
	rx_sge_t sge[RNIC_MAX_SGE];
} rx_rdans_t;

/* What rx_rdq hands rx_core (judgedq): rx_ctx's frame, and for a response to one of ours its
 * verdict (judged); and its word that a request sent again was answered before (rdntcq) */
typedef struct {
	rx_ctxf_t f;
	uint8_t judged;
	rx_rdans_t a;
} rx_judged_t;

typedef struct {
	uint16_t qpn;
	uint32_t psn;     /* the last PSN of the request sent again */
} rx_rdntc_t;

/* A frame of a connected QP is taken from its peer only: the source address (RoCEv2's source
 * GID) must be the one its path names (IBTA 9.6.1.5, the header checks of connected service). The
 * source MAC is not compared: on a routed path it is the last router's, not our next hop's. */
static inline int rx_from_peer(const rx_qcl_t *l, const uint8_t *raw, uint32_t v6)
{
	uint32_t ok = RNIC_GET(RNIC_QPC_CTRL_IPV6, l->ctrl) == v6, i;

	if (!v6)
		return ok && rnic_be32(raw + RNIC_IP_OFF + 12) == l->peer.dip;
	for (i = 0; i < 4; i++)
		ok &= rnic_be32(raw + RNIC_IP_OFF + 8 + 4 * i) == l->peer.dip6[i];
	return ok;
}

/* A RoCEv2 frame for one of our QPs goes on to it (9.6.1.2): its context, as rx_ctx handed it on,
 * is of a QP in RTR..SQE of the frame's service (UD, UC or RC). rx_core checks the QP's state
 * as it keeps it too (a commit may have come since). */
static inline int rx_qp_live(const rx_ctxf_t *f)
{
	const rx_verdict_t *d = &f->f.v;
	uint32_t ctrl = f->ctx == RX_CTX_OK ? f->l.ctrl : 0, state = RNIC_GET(RNIC_QPC_CTRL_STATE, ctrl);

	return RNIC_GET(RNIC_QPC_CTRL_VALID, ctrl) && state >= RNIC_QPS_RTR && state <= RNIC_QPS_SQE &&
	       RNIC_GET(RNIC_QPC_CTRL_TYPE, ctrl) == (d->op >= RNIC_BTH_OP_UD_SEND_ONLY ? RNIC_QPT_UD :
						      d->uc ? RNIC_QPT_UC : RNIC_QPT_RC);
}

/* A request's key and address (RETH, AtomicETH), for the MPT cache's look-ahead in rx_core (xl: it
 * writes there, a WRITE or an atomic) */
typedef struct {
	uint32_t key;
	uint64_t va;
	uint8_t xl;
} rx_hint_t;

/* A QP context read rx_ctx asks of the read channel (ctxreqq: RNIC_QPC_WORDS * 4 bytes at bus),
 * and its beats, handed back as they come (ctxrspq) */
typedef struct {
	uint64_t bus;
} rx_ctxreq_t;
typedef struct {
	uint8_t data[RNIC_BEAT];
	uint8_t last, err;
} rx_ctxrsp_t;

/* What a DMA read brings back, in request order (rx_rdport keeps the kind of each read on its
 * way). RD_FENCE: no read, a fence that passes once the reads asked for before it are back (its
 * token in qpn). */
enum { RD_RWQE, RD_ATOMIC, RD_REPLAY, RD_QPC, RD_MTT, RD_MPT, RD_FENCE };

/* A read rx_core asks of the read channel (rdreqq: len bytes at bus, for QP qpn), and each beat
 * of it, handed back as it comes (rdbeatq) */
typedef struct {
	uint64_t bus;
	uint16_t len, qpn;
	uint8_t kind;
} rx_rdreq_t;
typedef struct {
	uint8_t data[RNIC_BEAT];
	uint16_t qpn;
	uint8_t kind, last, err;
} rx_rdbeat_t;

RNIC_FIFO(rx_hdrq, rnic_ebeat_t, 1)
RNIC_FIFO(rx_factq, rx_facts_t, 1)
RNIC_FIFO(rx_headq, rx_heads_t, 1)
RNIC_FIFO(rx_descq, rx_desc_t, 3)
RNIC_FIFO(rx_beatq, rx_checked_t, 1)
RNIC_FIFO(rx_arriveq, rx_arrival_t, 1)
RNIC_FIFO(rx_cmdq, rx_cmd_t, 2)
RNIC_FIFO(rx_doneq, uint8_t, 1)
RNIC_FIFO(rx_frameq, rx_ctxf_t, 1)
RNIC_FIFO(rx_hintq, rx_hint_t, 1)
RNIC_FIFO(rx_ctxreqq, rx_ctxreq_t, 1)
RNIC_FIFO(rx_ctxrspq, rx_ctxrsp_t, 2)
RNIC_FIFO(rx_judgedq, rx_judged_t, 1)
RNIC_FIFO(rx_passq, rx_ctxf_t, 1)
RNIC_FIFO(rx_rdntcq, rx_rdntc_t, 1)
RNIC_FIFO(rx_rdreqq, rx_rdreq_t, 1)
RNIC_FIFO(rx_rdbeatq, rx_rdbeat_t, 2)

#endif
