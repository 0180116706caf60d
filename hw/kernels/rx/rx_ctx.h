/* RX kernel, the QPC cache in front of context memory (rx_ctx.c): the stage between the frame
 * store and rx_core, which hands rx_core each frame with its QP's context. */
#ifndef RX_CTX_H
#define RX_CTX_H

#include "rx_msg.h"

#ifndef RX_QC_LOG
#define RX_QC_LOG 12       /* 4,096 lines, direct-mapped (line = QPN mod 4,096); a test build has two
                            * (tests/tests.mk) */
#endif
#define RX_QC_LINES (1u << RX_QC_LOG)
#define RX_QC_VALID 0x8000u /* a tag: the line holds the context of the QPN in the low bits */
#define RX_QC_CHUNKS ((RNIC_ICM_QPC_OFF + RNIC_MAX_QP * RNIC_ICM_QPC_STRIDE + (1u << RNIC_ICM_CHUNK_LOG) - 1) >> RNIC_ICM_CHUNK_LOG)
#define RX_QC_READS 128     /* context reads asked for and not back: more than the read channel
                             * holds (ctxreqq and its 64 reads in flight, rx_rdport.h) */

/* a context read on its way: for frame fr (its number, low 8 bits), asked for at commit
 * generation gen, in clock t0 */
typedef struct {
	uint8_t fr, gen;
	uint32_t t0;
} rx_ctxrd_t;

/* a frame whose context is to be read ahead (pq): its number and QP */
typedef struct {
	uint8_t fr;
	uint16_t qpn;
} rx_ctxpf_t;

typedef struct {
	/* lines and their tags; the tag each line will hold once the frames before are through
	 * (tagf); a context read for a frame, kept beside it until it is at the head (stg) */
	rx_qcl_t line[RX_QC_LINES];
	uint16_t tag[RX_QC_LINES], tagf[RX_QC_LINES];
	rx_qcl_t stg[RX_MAX_FRAMES];
	/* the frames come in, by number (free running: head forwarded, tail come), slot = number %
	 * RX_MAX_FRAMES; per slot its QP, whether it has one of ours (cand), its context to be read
	 * or on its way (pend), in stg (ready, read at generation sgen), refused (bad) */
	rx_frame_t frames[RX_MAX_FRAMES];
	uint32_t head, tail, known;    /* known: frames whose look-ahead (c2) is done */
	uint16_t s_qpn[RX_MAX_FRAMES];
	uint8_t s_cand[RX_MAX_FRAMES], s_pend[RX_MAX_FRAMES], s_ready[RX_MAX_FRAMES], s_bad[RX_MAX_FRAMES];
	uint8_t s_sgen[RX_MAX_FRAMES];
	/* the look-ahead, a clock after a frame came (c1: tagf read) and the next (c2: decided);
	 * c2's tag write, seen by the read c1 made in its clock (cw) */
	uint8_t c1_on, c1_cand, c2_on, c2_cand, cw_on;
	uint8_t c1_fr, c2_fr;
	uint16_t c1_qpn, c2_qpn, c2_tag, cw_line, cw_tag;
	/* reads to ask for ahead (pq), the one taken from it (p_on) */
	rx_ctxpf_t pq[RX_MAX_FRAMES];
	uint32_t pq_head, pq_tail;
	uint8_t p_on;
	rx_ctxpf_t p;
	/* the head's read (h_on: frame h_fr of QP h_qpn waits for it); reads on their way, in order */
	uint8_t h_on, h_fr;
	uint16_t h_qpn;
	rx_ctxrd_t fl[RX_QC_READS];
	uint32_t fl_head, fl_tail;
	rx_ctxrd_t fl_cur;             /* the read whose first beat came */
	rx_qcl_t fill;                 /* its fields from that beat, and whether the host refused it */
	uint8_t fill_err;
	/* the head: e (its reads next clock: frame e_fr, QP e_qpn), then d (their data, decided) */
	uint8_t e_on, e_fr, e_cand;
	uint16_t e_qpn;
	uint8_t d_on, d_fr, d_cand, d_gen, d_sok, d_bad, d_pend, d_known, d_mapped, d_wait;
	uint16_t d_qpn, d_tag;
	rx_qcl_t d_line, d_stg;
	rx_frame_t d_f;
	uint32_t d_wait0;              /* the clock the head began to wait for its read */
	uint8_t seq;                   /* the next frame's place in the order handed on (mod 256) */
	/* commits: a context gathered word by word until word 0 (stage), written into its line the
	 * clock after (cm_on: QP cm_qpn's), counted (gen) */
	rx_qcl_t stage;
	uint8_t gen, cm_on;
	uint16_t cm_qpn;
	uint64_t chunk[RX_QC_CHUNKS];  /* context memory's chunks that hold contexts (0: none given) */
	uint32_t sweep;                /* after a reset: the next line to clear; RX_QC_LINES when done */
	uint32_t stat_hits, stat_misses, stat_evictions, stat_miss_cycles, stat_wait_cycles;
} rx_ctx_t;

void rx_ctx(rx_ctx_t *st, const rnic_rx_in_t *in, rnic_rx_arriveq_t *arrivals, rnic_rx_frameq_t *fq,
	    rnic_rx_passq_t *pq, rnic_rx_hintq_t *hints, rnic_rx_ctxreqq_t *reqs, rnic_rx_ctxrspq_t *rsps);
/* its counters on the kernel's outputs (wiring, after the clock's stages) */
void rx_ctx_out(const rx_ctx_t *st, rnic_rx_out_t *out);

#endif
