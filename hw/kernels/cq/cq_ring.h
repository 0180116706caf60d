/* CQ kernel, stage 2: the CQs. Owns the CQ contexts and each CQ's producer and consumer index and
 * arm; takes the configuration writes, the doorbells and the completions, one a clock, and tells
 * the writer each CQE's slot and each event. */
#ifndef RNIC_CQ_RING_H
#define RNIC_CQ_RING_H

#include "cq_msg.h"

typedef struct {
	uint32_t pi;     /* next CQE slot (free running) */
	uint32_t ci;     /* consumer index from the doorbell */
	uint8_t armed;   /* 1: next completion, 2: next solicited */
} cq_run_t;

enum { CQ_OP_NONE, CQ_OP_DB, CQ_OP_CPL };

typedef struct {
	uint32_t cqc[RNIC_MAX_CQ][RNIC_CQC_WORDS]; /* block RAM: read by the op, written by a commit */
	cq_run_t cq[RNIC_MAX_CQ];                  /* block RAM: read and written back by the op */
	uint32_t stage[RNIC_CQC_WORDS];  /* words 1.. of the CQC entry being written, applied with word 0 */
	uint32_t sweep;                  /* after a reset: the next entry of cq[] to clear */
	uint8_t rr;                      /* the next of doorbells, TX and RX completions to serve */
	uint8_t op;                      /* the op whose entries the memories give this clock */
	uint16_t n;                      /* its CQ: the memories' address, a register */
	cq_db_t db;
	rnic_cpl_t cpl;
	uint8_t wb_valid;                /* the entry of cq[] written back last clock */
	uint16_t wb_n;
	cq_run_t wb;
	uint32_t stat_cqes, stat_overflow;
} cq_ring_t;

void cq_ring(cq_ring_t *st, const rnic_cq_in_t *in, rnic_cq_cfgq_t *cfgq, rnic_cq_dbq_t *dbq,
	     rnic_cq_cplq_t *txq, rnic_cq_cplq_t *rxq, rnic_cq_wrq_t *wrq, rnic_cq_out_t *out);

#endif
