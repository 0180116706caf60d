/* CQ kernel, stage 2: the CQs. Owns the CQ contexts and each CQ's producer and consumer index and
 * arm; takes the configuration writes, the doorbells and the completions, one a clock, and tells
 * the writer each CQE's slot and each event. */
#ifndef RNIC_CQ_RING_H
#define RNIC_CQ_RING_H

#include "cq_msg.h"

typedef struct {
	uint16_t pi;     /* next CQE slot, modulo 2^16 (a CQ holds at most 2^MAX_CQE_LOG) */
	uint16_t ci;     /* consumer index from the last doorbell */
	uint16_t lim;    /* ci + the ring's size: full when pi reaches it */
	uint8_t armed;   /* 1: next completion, 2: next solicited */
} cq_run_t;

/* one bit each: the op decoded when taken */
enum { CQ_OP_NONE, CQ_OP_DB = 1, CQ_OP_CPL = 2, CQ_OP_EVT = 4, CQ_OP_SIZE = 8 };

typedef struct {
	uint32_t cqc[RNIC_MAX_CQ][RNIC_CQC_WORDS]; /* block RAM: read by the op, written by a commit */
	cq_run_t cq[RNIC_MAX_CQ];                  /* block RAM: read and written back by the op */
	uint32_t stage[RNIC_CQC_WORDS];  /* words 1.. of the CQC entry being written, applied with word 0 */
	uint16_t sweep;                  /* after a reset: the next CQ to clear; RNIC_MAX_CQ when done */
	uint8_t rr;                      /* the next of doorbells, TX and RX completions to serve */
	uint8_t op;                      /* the op whose entries the memories give this clock */
	uint16_t n;                      /* its CQ: the memories' address, a register */
	cq_db_t db;
	rnic_cpl_t cpl;
	uint8_t fwd;                     /* the op's run state is wb, not the block RAM's */
	cq_run_t wb;                     /* the run state written back last clock */
	uint32_t stat_cqes, stat_overflow;
} cq_ring_t;

void cq_ring(cq_ring_t *st, const rnic_cq_in_t *in, rnic_cq_cfgq_t *cfgq, rnic_cq_dbq_t *dbq,
	     rnic_cq_cplq_t *txq, rnic_cq_cplq_t *rxq, rnic_cq_wrq_t *wrq, rnic_cq_out_t *out);

#endif
