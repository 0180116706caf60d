/* CQ kernel, stage 3: the writer. Owns the event queues' contexts and producer indexes and the
 * kernel's DMA write and MSI-X ports: a CQE or EQE beat a clock, an EQE after an armed CQ's CQE,
 * its MSI-X message once the EQE is written, a fence once what came before it is. */
#ifndef RNIC_CQ_WRITE_H
#define RNIC_CQ_WRITE_H

#include "cq_msg.h"

typedef struct {
	uint32_t eqc[RNIC_NUM_CTX][RNIC_EQC_WORDS];
	uint32_t eq_pi[RNIC_NUM_CTX];
	uint8_t eqe_pending; /* an EQE (and MSI-X) to write: after an armed CQ's CQE, or an event */
	uint8_t eqe_type, eqe_ctx, eqe_vec;
	uint32_t eqe_data;
	uint8_t irq_due;     /* the MSI-X message follows the EQE write being presented */
	uint8_t wr_valid, wr_last, irq_valid, irq_vector, fence;
	uint16_t wr_len;
	uint64_t wr_addr;
	uint8_t wr_data[RNIC_BEAT];
} cq_write_t;

void cq_write(cq_write_t *st, const rnic_cq_in_t *in, rnic_cq_wrq_t *wrq, rnic_cq_out_t *out);

#endif
