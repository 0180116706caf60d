// The NIC on an Alveo card: rnic_top with its DMA streams on an AXI4 master (rnic_dma_axi, for the
// XDMA bridge's AXI slave port toward host memory) and its MSI-X requests as the bridge's user
// interrupts (rnic_irq_usr). vivado.tcl drops it into a block design as a module reference;
// the port name prefixes (s_axil_, m_axi_, m_axis_eth_tx_, s_axis_eth_rx_) make Vivado infer
// the AXI interfaces. Never built with Vivado: docs/ARCHITECTURE.md, "On a card".
`default_nettype none

module rnic_card #(
    parameter FW_HEX = "",
    parameter logic [31:0] BUILD_ID = 32'h0,
    parameter logic [31:0] BUILD_TIME = 32'h0,
    parameter logic [47:0] MAC = 48'h02_00_00_00_00_01,   // locally administered
    parameter logic [31:0] IPV4 = 32'h0a_00_00_01
) (
    input  wire          clk,            // the bridge's axi_aclk (250 MHz)
    input  wire          rst_n,          // its axi_aresetn

    input  wire  [19:0]  s_axil_awaddr,
    input  wire          s_axil_awvalid,
    output logic         s_axil_awready,
    input  wire  [31:0]  s_axil_wdata,
    input  wire  [3:0]   s_axil_wstrb,
    input  wire          s_axil_wvalid,
    output logic         s_axil_wready,
    output logic [1:0]   s_axil_bresp,
    output logic         s_axil_bvalid,
    input  wire          s_axil_bready,
    input  wire  [19:0]  s_axil_araddr,
    input  wire          s_axil_arvalid,
    output logic         s_axil_arready,
    output logic [31:0]  s_axil_rdata,
    output logic [1:0]   s_axil_rresp,
    output logic         s_axil_rvalid,
    input  wire          s_axil_rready,

    output logic [63:0]  m_axi_araddr,
    output logic [7:0]   m_axi_arlen,
    output logic [2:0]   m_axi_arsize,
    output logic [1:0]   m_axi_arburst,
    output logic         m_axi_arvalid,
    input  wire          m_axi_arready,
    input  wire  [511:0] m_axi_rdata,
    input  wire  [1:0]   m_axi_rresp,
    input  wire          m_axi_rlast,
    input  wire          m_axi_rvalid,
    output logic         m_axi_rready,
    output logic [63:0]  m_axi_awaddr,
    output logic [7:0]   m_axi_awlen,
    output logic [2:0]   m_axi_awsize,
    output logic [1:0]   m_axi_awburst,
    output logic         m_axi_awvalid,
    input  wire          m_axi_awready,
    output logic [511:0] m_axi_wdata,
    output logic [63:0]  m_axi_wstrb,
    output logic         m_axi_wlast,
    output logic         m_axi_wvalid,
    input  wire          m_axi_wready,
    input  wire  [1:0]   m_axi_bresp,
    input  wire          m_axi_bvalid,
    output logic         m_axi_bready,

    output logic [15:0]  usr_irq_req,
    input  wire  [15:0]  usr_irq_ack,

    output logic [511:0] m_axis_eth_tx_tdata,
    output logic [63:0]  m_axis_eth_tx_tkeep,
    output logic         m_axis_eth_tx_tvalid,
    input  wire          m_axis_eth_tx_tready,
    output logic         m_axis_eth_tx_tlast,
    input  wire  [511:0] s_axis_eth_rx_tdata,
    input  wire  [63:0]  s_axis_eth_rx_tkeep,
    input  wire          s_axis_eth_rx_tvalid,
    input  wire          s_axis_eth_rx_tlast
);
    logic rst;
    logic rd_req_valid, rd_req_ready, rd_valid, rd_ready, rd_last, rd_err;
    logic [63:0] rd_req_addr;
    logic [15:0] rd_req_len;
    logic [7:0] rd_req_tag, rd_tag;
    logic [511:0] rd_data;
    logic wr_valid, wr_ready, wr_last;
    logic [63:0] wr_addr;
    logic [15:0] wr_len;
    logic [511:0] wr_data;
    logic irq_valid, irq_ready;
    logic [7:0] irq_vector;
    // no register shows these yet on the card: probe them with an ILA
    /* verilator lint_off UNUSEDSIGNAL */
    logic [31:0] dma_errors;
    logic fw_console_valid;
    logic [7:0] fw_console_char;
    logic push_ready; // no push window yet (below)
    /* verilator lint_on UNUSEDSIGNAL */

    always_ff @(posedge clk)
        rst <= !rst_n;

    rnic_top #(.FW_HEX(FW_HEX), .BUILD_ID(BUILD_ID), .BUILD_TIME(BUILD_TIME)) nic (
        .clk, .rst, .strap_mac(MAC), .strap_ipv4(IPV4),
        // no secret strap on the card: the firmware keys its memory keys from the clock count at
        // the driver's first command; the kernel driver alone hands the NIC bus addresses
        .strap_seed(64'h0), .strap_dma_window(6'd0),
        .s_axil_awaddr, .s_axil_awvalid, .s_axil_awready, .s_axil_wdata, .s_axil_wstrb,
        .s_axil_wvalid, .s_axil_wready, .s_axil_bresp, .s_axil_bvalid, .s_axil_bready,
        .s_axil_araddr, .s_axil_arvalid, .s_axil_arready, .s_axil_rdata, .s_axil_rresp,
        .s_axil_rvalid, .s_axil_rready,
        .m_dma_rd_req_valid(rd_req_valid), .m_dma_rd_req_ready(rd_req_ready),
        .m_dma_rd_req_addr(rd_req_addr), .m_dma_rd_req_len(rd_req_len), .m_dma_rd_req_tag(rd_req_tag),
        .s_dma_rd_valid(rd_valid), .s_dma_rd_ready(rd_ready), .s_dma_rd_data(rd_data),
        .s_dma_rd_tag(rd_tag), .s_dma_rd_last(rd_last), .s_dma_rd_err(rd_err),
        // the WQE push window wants an AXI4 (burst) BAR bridge the card does not have yet: the
        // host library's pci backend rings doorbells only
        .s_push_valid(1'b0), .s_push_ready(push_ready), .s_push_ctx(8'd0), .s_push_data(512'd0), .s_push_last(1'b0),
        .m_dma_wr_valid(wr_valid), .m_dma_wr_ready(wr_ready), .m_dma_wr_addr(wr_addr),
        .m_dma_wr_len(wr_len), .m_dma_wr_data(wr_data), .m_dma_wr_last(wr_last),
        .irq_valid, .irq_ready, .irq_vector,
        .m_axis_eth_tx_tdata, .m_axis_eth_tx_tkeep, .m_axis_eth_tx_tvalid, .m_axis_eth_tx_tready,
        .m_axis_eth_tx_tlast, .s_axis_eth_rx_tdata, .s_axis_eth_rx_tkeep, .s_axis_eth_rx_tvalid,
        .s_axis_eth_rx_tlast, .fw_console_valid, .fw_console_char);

    rnic_dma_axi dma (
        .clk, .rst,
        .s_rd_req_valid(rd_req_valid), .s_rd_req_ready(rd_req_ready), .s_rd_req_addr(rd_req_addr),
        .s_rd_req_len(rd_req_len), .s_rd_req_tag(rd_req_tag),
        .m_rd_valid(rd_valid), .m_rd_ready(rd_ready), .m_rd_data(rd_data), .m_rd_tag(rd_tag),
        .m_rd_last(rd_last), .m_rd_err(rd_err),
        .s_wr_valid(wr_valid), .s_wr_ready(wr_ready), .s_wr_addr(wr_addr), .s_wr_len(wr_len),
        .s_wr_data(wr_data), .s_wr_last(wr_last),
        .m_axi_araddr, .m_axi_arlen, .m_axi_arsize, .m_axi_arburst, .m_axi_arvalid, .m_axi_arready,
        .m_axi_rdata, .m_axi_rresp, .m_axi_rlast, .m_axi_rvalid, .m_axi_rready,
        .m_axi_awaddr, .m_axi_awlen, .m_axi_awsize, .m_axi_awburst, .m_axi_awvalid, .m_axi_awready,
        .m_axi_wdata, .m_axi_wstrb, .m_axi_wlast, .m_axi_wvalid, .m_axi_wready,
        .m_axi_bresp, .m_axi_bvalid, .m_axi_bready, .err_count(dma_errors));

    rnic_irq_usr #(.N(16)) irq (.clk, .rst, .irq_valid, .irq_ready, .irq_vector, .usr_irq_req,
                                .usr_irq_ack);
endmodule

`default_nettype wire
