/* DPI-C entry points of the TX kernel: the SystemVerilog wrapper (and the Python tests, through
 * ctypes) call rnic_tx_dpi_step() once per clock with the packed port vectors; the stages in the
 * order RNIC_STAGE_ORDER asks for (rnic_stage_order.h). */
#include <svdpi.h>
#include "tx.h"
#include "rnic_stage_order.h"

typedef struct {
	rnic_tx_state_t st; /* first: the handle is the kernel's state */
	uint32_t seed;
} tx_dpi_t;

void *rnic_tx_dpi_new(void);
void rnic_tx_dpi_step(void *h, const svBitVecVal *in, svBitVecVal *out);

void *rnic_tx_dpi_new(void)
{
	tx_dpi_t *k = calloc(1, sizeof(*k));

	if (k)
		k->seed = rnic_stage_seed();
	return k;
}

void rnic_tx_dpi_step(void *h, const svBitVecVal *in, svBitVecVal *out)
{
	tx_dpi_t *k = h;
	uint8_t order[RNIC_TX_STAGES];
	rnic_tx_in_t i;
	rnic_tx_out_t o;

	rnic_tx_in_unpack(in, &i);
	if (k->seed) {
		rnic_stage_order(order, RNIC_TX_STAGES, &k->seed);
		rnic_tx_step_order(&k->st, &i, &o, order);
	} else {
		rnic_tx_step(&k->st, &i, &o); /* the clock the table check (tests/tblchk) marks */
	}
	rnic_tx_out_pack(&o, out);
}
