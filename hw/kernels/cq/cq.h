/* CQ kernel: writes CQEs and EQEs, raises MSI-X. */
#ifndef RNIC_CQ_H
#define RNIC_CQ_H

#include "rnic_kernel.h"

typedef struct {
	uint32_t pi;     /* next CQE slot (free running) */
	uint32_t ci;     /* consumer index from the doorbell */
	uint8_t armed;   /* 1: next completion, 2: next solicited */
} cq_run_t;

typedef struct {
	uint32_t cqc[RNIC_MAX_CQ][RNIC_CQC_WORDS];
	uint32_t stage[RNIC_CQC_WORDS];  /* words 1.. of the CQC entry being written, applied with word 0 */
	uint32_t eqc[RNIC_NUM_CTX][RNIC_EQC_WORDS];
	cq_run_t cq[RNIC_MAX_CQ];
	uint32_t eq_pi[RNIC_NUM_CTX];
	uint8_t rr;          /* round-robin between the TX and RX completion inputs */
	uint8_t eqe_pending; /* an EQE (and MSI-X) follows: after an armed CQ's CQE, or an event */
	uint8_t eqe_type, eqe_ctx, eqe_vec;
	uint32_t eqe_data;
	uint8_t fire_valid;  /* a CQ was armed with CQEs the host had not consumed: its EQE is due */
	uint16_t fire_cqn;
	uint8_t irq_due;     /* the MSI-X message follows the EQE write being presented */
	uint8_t fence_token, fence_pending, fence_hold; /* fence_hold: the beat presented at the fence */
	rnic_cq_out_t o;     /* outputs presented during the current cycle */
} rnic_cq_state_t;

void rnic_cq_step(rnic_cq_state_t *st, const rnic_cq_in_t *in, rnic_cq_out_t *out);

#endif
