/* DPI-C entry points of the RX kernel: the SystemVerilog wrapper (and the Python tests, through
 * ctypes) call rnic_rx_dpi_step() once per clock with the packed port vectors. */
#include <stdlib.h>
#include <svdpi.h>
#include "rx.h"

void *rnic_rx_dpi_new(void);
void rnic_rx_dpi_step(void *h, const svBitVecVal *in, svBitVecVal *out);

void *rnic_rx_dpi_new(void)
{
	return calloc(1, sizeof(rnic_rx_state_t));
}

void rnic_rx_dpi_step(void *h, const svBitVecVal *in, svBitVecVal *out)
{
	rnic_rx_in_t i;
	rnic_rx_out_t o;

	rnic_rx_in_unpack(in, &i);
	rnic_rx_step(h, &i, &o);
	rnic_rx_out_pack(&o, out);
}
