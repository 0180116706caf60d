/* DPI-C entry points of the CQ kernel: the SystemVerilog wrapper (and the Python tests, through
 * ctypes) call rnic_cq_dpi_step() once per clock with the packed port vectors. */
#include <stdlib.h>
#include <svdpi.h>
#include "cq.h"

void *rnic_cq_dpi_new(void);
void rnic_cq_dpi_step(void *h, const svBitVecVal *in, svBitVecVal *out);

void *rnic_cq_dpi_new(void)
{
	return calloc(1, sizeof(rnic_cq_state_t));
}

void rnic_cq_dpi_step(void *h, const svBitVecVal *in, svBitVecVal *out)
{
	rnic_cq_in_t i;
	rnic_cq_out_t o;

	rnic_cq_in_unpack(in, &i);
	rnic_cq_step(h, &i, &o);
	rnic_cq_out_pack(&o, out);
}
