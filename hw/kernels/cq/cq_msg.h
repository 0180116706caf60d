/* What the CQ kernel's stages pass each other (docs/ARCHITECTURE.md, "Kernels"):
 *   cq_take --cfgq, dbq, txq, rxq--> cq_ring --wrq--> cq_write */
#ifndef RNIC_CQ_MSG_H
#define RNIC_CQ_MSG_H

#include "rnic_kernel.h"
#include "rnic_fifo.h"

typedef struct {
	uint32_t addr, data;
} cq_cfg_t;

typedef struct {
	uint16_t cqn, ci;
	uint8_t ctx, arm;
} cq_db_t;

/* to the writer, in the order the ring decided them */
enum { CQ_WR_CQE = 1, CQ_WR_EQE, CQ_WR_EQC, CQ_WR_FENCE };

typedef struct {
	uint8_t kind;
	uint8_t eqe;          /* CQE: an EQE (COMP, this CQ) follows it */
	uint8_t owner;        /* CQE: OWNER */
	uint8_t eqe_type;     /* EQE */
	uint8_t ctx, vector;  /* EQE or a CQE's EQE: the event queue and MSI-X vector */
	uint32_t data;        /* EQE: DATA (CQN or QPN); EQC: the word's value; FENCE: the token */
	uint32_t where;       /* EQC: context << 8 | word */
	uint64_t addr;        /* CQE: its slot's bus address */
	rnic_cpl_t cpl;       /* CQE */
} cq_wr_t;

RNIC_FIFO(cq_cfgq, cq_cfg_t, 4)
RNIC_FIFO(cq_dbq, cq_db_t, 2)
RNIC_FIFO(cq_cplq, rnic_cpl_t, 2)
RNIC_FIFO(cq_wrq, cq_wr_t, 2)

#endif
