/* Vitis HLS tops of the three kernels: the same step functions the simulator calls through
 * DPI-C, with their state held inside the IP (a static: HLS keeps it in registers and RAMs) and
 * their inputs and outputs as plain wires sampled once per clock (ap_none, no handshake): the
 * kernel contract of docs/ARCHITECTURE.md. The generated RTL replaces spec/gen/rnic_*_kernel.sv
 * (the DPI-C wrappers) in the card image; the port structs are the same packed records. */
#include "cq.h"
#include "rx.h"
#include "tx.h"

void rnic_tx_top(const rnic_tx_in_t *in, rnic_tx_out_t *out)
{
#pragma HLS INTERFACE mode = ap_ctrl_none port = return
#pragma HLS INTERFACE mode = ap_none port = in
#pragma HLS INTERFACE mode = ap_none port = out
#pragma HLS AGGREGATE variable = in compact = bit
#pragma HLS AGGREGATE variable = out compact = bit
#pragma HLS PIPELINE II = 1
	static rnic_tx_state_t st;

	rnic_tx_step(&st, in, out);
}

void rnic_rx_top(const rnic_rx_in_t *in, rnic_rx_out_t *out)
{
#pragma HLS INTERFACE mode = ap_ctrl_none port = return
#pragma HLS INTERFACE mode = ap_none port = in
#pragma HLS INTERFACE mode = ap_none port = out
#pragma HLS AGGREGATE variable = in compact = bit
#pragma HLS AGGREGATE variable = out compact = bit
#pragma HLS PIPELINE II = 1
	static rnic_rx_state_t st;

	rnic_rx_step(&st, in, out);
}

void rnic_cq_top(const rnic_cq_in_t *in, rnic_cq_out_t *out)
{
#pragma HLS INTERFACE mode = ap_ctrl_none port = return
#pragma HLS INTERFACE mode = ap_none port = in
#pragma HLS INTERFACE mode = ap_none port = out
#pragma HLS AGGREGATE variable = in compact = bit
#pragma HLS AGGREGATE variable = out compact = bit
#pragma HLS PIPELINE II = 1
	static rnic_cq_state_t st;

	rnic_cq_step(&st, in, out);
}
