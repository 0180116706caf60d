// Wrapper of the CQ HLS C kernel (hw/kernels/cq). Per-clock contract (docs/ARCHITECTURE.md):
// at every rising edge the kernel's C step function is called once through DPI-C with the inputs
// sampled at that edge; what it returns becomes the outputs for the next cycle (all registered).
// In the bitstream flow this module is replaced by the Vitis HLS core of the same C source.
`default_nettype none

module rnic_cq_kernel
    import rnic_spec_pkg::*;
(
    input  wire                 clk,
    input  wire                 rst,
    input  wire [63:0]          cycle,
    input  var  rnic_cq_in_t   k_in,   // rst and cycle fields are filled here
    output rnic_cq_out_t       k_out
);
    import "DPI-C" function chandle rnic_cq_dpi_new();
    import "DPI-C" function void rnic_cq_dpi_step(input chandle h,
        input bit [RNIC_CQ_IN_WORDS*32-1:0] i, output bit [RNIC_CQ_OUT_WORDS*32-1:0] o);

    chandle h;
    initial h = rnic_cq_dpi_new();

    always_ff @(posedge clk) begin : step
        rnic_cq_in_t i;
        bit [RNIC_CQ_OUT_WORDS*32-1:0] o;
        i = k_in;
        i.rst = rst;
        i.cycle = cycle;
        rnic_cq_dpi_step(h, i, o);
        k_out <= o;
    end
endmodule

`default_nettype wire
