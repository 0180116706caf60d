/* CQ kernel, stage 1: the input ports. Each stream's transfers go to a FIFO of their own; a
 * ready is presented while that FIFO will have room at the next edge. */
#ifndef RNIC_CQ_TAKE_H
#define RNIC_CQ_TAKE_H

#include "cq_msg.h"

typedef struct {
	uint8_t txc_ready, rxc_ready, db_ready; /* presented this clock */
} cq_take_t;

void cq_take(cq_take_t *st, const rnic_cq_in_t *in, rnic_cq_cfgq_t *cfgq, rnic_cq_dbq_t *dbq,
	     rnic_cq_cplq_t *txq, rnic_cq_cplq_t *rxq, rnic_cq_out_t *out);

#endif
