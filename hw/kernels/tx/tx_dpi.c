/* DPI-C entry points of the TX kernel: the SystemVerilog wrapper (and the Python tests, through
 * ctypes) call rnic_tx_dpi_step() once per clock with the packed port vectors. */
#include <stdlib.h>
#include <svdpi.h>
#include "tx.h"

void *rnic_tx_dpi_new(void);
void rnic_tx_dpi_step(void *h, const svBitVecVal *in, svBitVecVal *out);

void *rnic_tx_dpi_new(void)
{
	return calloc(1, sizeof(rnic_tx_state_t));
}

void rnic_tx_dpi_step(void *h, const svBitVecVal *in, svBitVecVal *out)
{
	rnic_tx_in_t i;
	rnic_tx_out_t o;

	rnic_tx_in_unpack(in, &i);
	rnic_tx_step(h, &i, &o);
	rnic_tx_out_pack(&o, out);
}
