/* Vitis HLS tops of the three kernels: the same step functions the simulator calls through
 * DPI-C, with their state held inside the IP (a static: HLS keeps it in registers and RAMs) and
 * their inputs and outputs as plain wires sampled once per clock (ap_none, no handshake): the
 * kernel contract of docs/ARCHITECTURE.md: latency 0 (the state updates at the clock edge, the
 * outputs follow the inputs), and the card's wrapper (spec/gen/rnic_*_kernel.sv built with
 * RNIC_HLS_KERNELS) registers the outputs, as the simulator's DPI-C wrapper does. AGGREGATE
 * compact=bit packs each struct in field order from bit 0, each field as wide as its C type. */
#include "cq.h"
#include "rx.h"
#include "tx.h"

void rnic_tx_top(const rnic_tx_in_t *k_in, rnic_tx_out_t *k_out)
{
#pragma HLS INTERFACE mode = ap_ctrl_none port = return
#pragma HLS INTERFACE mode = ap_none port = k_in
#pragma HLS INTERFACE mode = ap_none port = k_out
#pragma HLS AGGREGATE variable = k_in compact = bit
#pragma HLS AGGREGATE variable = k_out compact = bit
#pragma HLS PIPELINE II = 1
#pragma HLS LATENCY max = 0
	static rnic_tx_state_t st;

	rnic_tx_step(&st, k_in, k_out);
}

void rnic_rx_top(const rnic_rx_in_t *k_in, rnic_rx_out_t *k_out)
{
#pragma HLS INTERFACE mode = ap_ctrl_none port = return
#pragma HLS INTERFACE mode = ap_none port = k_in
#pragma HLS INTERFACE mode = ap_none port = k_out
#pragma HLS AGGREGATE variable = k_in compact = bit
#pragma HLS AGGREGATE variable = k_out compact = bit
#pragma HLS PIPELINE II = 1
#pragma HLS LATENCY max = 0
	static rnic_rx_state_t st;

	rnic_rx_step(&st, k_in, k_out);
}

void rnic_cq_top(const rnic_cq_in_t *k_in, rnic_cq_out_t *k_out)
{
#pragma HLS INTERFACE mode = ap_ctrl_none port = return
#pragma HLS INTERFACE mode = ap_none port = k_in
#pragma HLS INTERFACE mode = ap_none port = k_out
#pragma HLS AGGREGATE variable = k_in compact = bit
#pragma HLS AGGREGATE variable = k_out compact = bit
#pragma HLS PIPELINE II = 1
#pragma HLS LATENCY max = 0
	static rnic_cq_state_t st;

	rnic_cq_step(&st, k_in, k_out);
}
