// Wrapper of the TX HLS C kernel (hw/kernels/tx). Per-clock contract (docs/ARCHITECTURE.md):
// at every rising edge the kernel's C step function is called once through DPI-C with the inputs
// sampled at that edge; what it returns becomes the outputs for the next cycle (all registered).
// In the bitstream flow this module is replaced by the Vitis HLS core of the same C source.
`default_nettype none

module rnic_tx_kernel
    import rnic_spec_pkg::*;
(
    input  wire                 clk,
    input  wire                 rst,
    input  wire [63:0]          cycle,
    input  var  rnic_tx_in_t   k_in,   // rst and cycle fields are filled here
    output rnic_tx_out_t       k_out
);
    import "DPI-C" function chandle rnic_tx_dpi_new();
    import "DPI-C" function void rnic_tx_dpi_step(input chandle h,
        input bit [RNIC_TX_IN_WORDS*32-1:0] i, output bit [RNIC_TX_OUT_WORDS*32-1:0] o);

    chandle h;
    initial h = rnic_tx_dpi_new();

    always_ff @(posedge clk) begin : step
        rnic_tx_in_t i;
        bit [RNIC_TX_OUT_WORDS*32-1:0] o;
        i = k_in;
        i.rst = rst;
        i.cycle = cycle;
        rnic_tx_dpi_step(h, i, o);
        k_out <= o;
    end
endmodule

`default_nettype wire
