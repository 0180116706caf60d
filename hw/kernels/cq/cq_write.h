/* CQ kernel, stage 3: the writer. Owns the event queues' contexts and producer indexes and the
 * kernel's DMA write and MSI-X ports: a CQE or EQE beat a clock, an EQE after an armed CQ's CQE,
 * its MSI-X message once the EQE is written, a fence once what came before it is. */
#ifndef RNIC_CQ_WRITE_H
#define RNIC_CQ_WRITE_H

#include "cq_msg.h"

/* what the first clock hands the second (one bit each) */
enum { CQ_JOB_CQE = 1, CQ_JOB_EQE = 2, CQ_JOB_IRQ = 4, CQ_JOB_FENCE = 8 };

typedef struct {
	/* clock 1: the next message, and the event queue of an EQE */
	uint32_t eqc[RNIC_NUM_CTX][RNIC_EQC_WORDS];  /* registers: 16 entries */
	uint16_t eq_pi[RNIC_NUM_CTX];
	uint8_t eqe_pending; /* the EQE of the CQE just taken (an armed CQ's) comes next */
	uint8_t eqe_ctx, eqe_vec;
	uint32_t eqe_data;
	/* its result, a register between the clocks */
	uint8_t job;         /* CQ_JOB_*, 0 for none */
	cq_wr_t m;           /* the message (CQE: as the ring gave it; EQE: type, data, vector) */
	uint64_t eq_base;    /* EQE: its ring and slot */
	uint16_t eq_slot;
	uint8_t eq_owner;
	/* clock 2: the ports */
	uint8_t irq_due;     /* the MSI-X message follows the EQE write being presented */
	uint8_t wr_valid, wr_last, irq_valid, irq_vector, fence;
	uint16_t wr_len;
	uint64_t wr_addr;
	uint8_t wr_data[RNIC_BEAT];
} cq_write_t;

void cq_write(cq_write_t *st, const rnic_cq_in_t *in, rnic_cq_wrq_t *wrq, rnic_cq_out_t *out);

#endif
