// The NIC's part of an Alveo card: rnic_top with BAR0 from the XDMA bridge's AXI4 master, split
// into the NIC's window and the flash controller's (rnic_bar_bridge, by the windows spec/rnic.toml
// declares), its DMA streams on an AXI4 master (rnic_dma_axi, for the bridge's AXI slave port
// toward host memory), its MSI-X requests as the bridge's user interrupts (rnic_irq_usr), and its
// Ethernet port across to the CMAC's clock: whole frames in asynchronous FIFOs each way
// (rnic_frame_cdc), a transmit FIFO that starts a frame only when all of it is there (the CMAC
// fails a frame whose tvalid drops) and a receive FIFO that drops whole frames when full or
// flagged bad (the CMAC cannot wait), counted in STATS. The card's top (rnic_card_top.sv) wires
// it to the vendor IP; rnic-card-sim runs it under Verilator with models of that IP. Ports and
// clocks: docs/ARCHITECTURE.md, "On a card".
`default_nettype none

module rnic_card #(
    parameter FW_HEX = "",
    parameter logic [31:0] BUILD_ID = 32'h0,
    parameter logic [31:0] BUILD_TIME = 32'h0
) (
    input  wire          clk,            // the bridge's axi_aclk (250 MHz)
    input  wire          rst_n,          // its axi_aresetn
    input  wire  [47:0]  strap_mac,      // rnic_top's straps: constants on a card
    input  wire  [31:0]  strap_ipv4,
    input  wire  [5:0]   strap_dma_window,

    // BAR0 from the bridge's AXI4 master (M_AXI_B, AXI address = BAR0 offset): the NIC's
    // registers, and the flash controller's window passed on (rnic_bar_bridge)
    input  wire  [3:0]   s_bar_awid,
    input  wire  [63:0]  s_bar_awaddr,
    input  wire  [7:0]   s_bar_awlen,
    input  wire  [2:0]   s_bar_awsize,
    input  wire          s_bar_awvalid,
    output logic         s_bar_awready,
    input  wire  [511:0] s_bar_wdata,
    input  wire  [63:0]  s_bar_wstrb,
    input  wire          s_bar_wlast,
    input  wire          s_bar_wvalid,
    output logic         s_bar_wready,
    output logic [3:0]   s_bar_bid,
    output logic [1:0]   s_bar_bresp,
    output logic         s_bar_bvalid,
    input  wire          s_bar_bready,
    input  wire  [3:0]   s_bar_arid,
    input  wire  [63:0]  s_bar_araddr,
    input  wire  [7:0]   s_bar_arlen,
    input  wire  [2:0]   s_bar_arsize,
    input  wire          s_bar_arvalid,
    output logic         s_bar_arready,
    output logic [3:0]   s_bar_rid,
    output logic [511:0] s_bar_rdata,
    output logic [1:0]   s_bar_rresp,
    output logic         s_bar_rlast,
    output logic         s_bar_rvalid,
    input  wire          s_bar_rready,
    // the flash controller (AXI Quad SPI) at BAR0_QSPI_BASE, AXI4-Lite, its offset in the window
    output logic [15:0]  m_axil_qspi_awaddr,
    output logic         m_axil_qspi_awvalid,
    input  wire          m_axil_qspi_awready,
    output logic [31:0]  m_axil_qspi_wdata,
    output logic [3:0]   m_axil_qspi_wstrb,
    output logic         m_axil_qspi_wvalid,
    input  wire          m_axil_qspi_wready,
    input  wire  [1:0]   m_axil_qspi_bresp,
    input  wire          m_axil_qspi_bvalid,
    output logic         m_axil_qspi_bready,
    output logic [15:0]  m_axil_qspi_araddr,
    output logic         m_axil_qspi_arvalid,
    input  wire          m_axil_qspi_arready,
    input  wire  [31:0]  m_axil_qspi_rdata,
    input  wire  [1:0]   m_axil_qspi_rresp,
    input  wire          m_axil_qspi_rvalid,
    output logic         m_axil_qspi_rready,

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

    // the CMAC's AXI4-Stream user interface (PG203), in its clocks: gt_txusrclk2 (322.27 MHz) for
    // transmit, rx_clk for receive; usr_tx_reset / usr_rx_reset; stat_rx_aligned in rx_clk
    input  wire          eth_tx_clk,
    input  wire          eth_tx_rst,
    input  wire          tx_axis_tready,
    output logic         tx_axis_tvalid,
    output logic [511:0] tx_axis_tdata,
    output logic [63:0]  tx_axis_tkeep,
    output logic         tx_axis_tlast,
    output logic         tx_axis_tuser,
    input  wire          eth_rx_clk,
    input  wire          eth_rx_rst,
    input  wire          rx_axis_tvalid,
    input  wire  [511:0] rx_axis_tdata,
    input  wire  [63:0]  rx_axis_tkeep,
    input  wire          rx_axis_tlast,
    input  wire          rx_axis_tuser,
    input  wire          stat_rx_aligned,

    output logic         fw_console_valid,   // the firmware's console (simulation; an ILA on a card)
    output logic [7:0]   fw_console_char
`ifdef RNIC_KERNELS_OUTSIDE
    ,
    output rnic_spec_pkg::rnic_tx_in_t tx_in,   // rnic_top's kernel ports (rnic-card-sim steps them)
    output rnic_spec_pkg::rnic_rx_in_t rx_in,
    output rnic_spec_pkg::rnic_cq_in_t cq_in,
    input  rnic_spec_pkg::rnic_tx_out_t tx_out_d,
    input  rnic_spec_pkg::rnic_rx_out_t rx_out_d,
    input  rnic_spec_pkg::rnic_cq_out_t cq_out_d
`endif
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
    logic [511:0] tx_data, rx_data;
    logic [63:0] tx_keep, rx_keep;
    logic tx_valid, tx_ready, tx_last, rx_valid, rx_last;
    logic [31:0] rx_drops_full, rx_drops_bad;
    (* ASYNC_REG = "TRUE" *) logic [1:0] aligned_sync;
    // no register shows these yet on the card: probe them with an ILA
    /* verilator lint_off UNUSEDSIGNAL */
    logic [31:0] dma_errors, tx_drops_full, tx_drops_bad;
    logic rx_always_ready;  // the receive FIFO drops instead
    logic push_ready; // no push window yet (below)
    /* verilator lint_on UNUSEDSIGNAL */

    // BAR0: window 0 the NIC, window 1 the flash controller
    logic [19:0] bar_awaddr, bar_araddr;
    logic [1:0] bar_awvalid, bar_awready, bar_wvalid, bar_wready, bar_bvalid, bar_bready;
    logic [1:0] bar_arvalid, bar_arready, bar_rvalid, bar_rready;
    logic [3:0] bar_bresp, bar_rresp, bar_wstrb;
    logic [31:0] bar_wdata, nic_rdata;
    logic [1:0] nic_bresp, nic_rresp;

    rnic_bar_bridge bar (
        .clk, .rst,
        .s_axi_awid(s_bar_awid), .s_axi_awaddr(s_bar_awaddr), .s_axi_awlen(s_bar_awlen),
        .s_axi_awsize(s_bar_awsize), .s_axi_awvalid(s_bar_awvalid), .s_axi_awready(s_bar_awready),
        .s_axi_wdata(s_bar_wdata), .s_axi_wstrb(s_bar_wstrb), .s_axi_wlast(s_bar_wlast),
        .s_axi_wvalid(s_bar_wvalid), .s_axi_wready(s_bar_wready), .s_axi_bid(s_bar_bid),
        .s_axi_bresp(s_bar_bresp), .s_axi_bvalid(s_bar_bvalid), .s_axi_bready(s_bar_bready),
        .s_axi_arid(s_bar_arid), .s_axi_araddr(s_bar_araddr), .s_axi_arlen(s_bar_arlen),
        .s_axi_arsize(s_bar_arsize), .s_axi_arvalid(s_bar_arvalid), .s_axi_arready(s_bar_arready),
        .s_axi_rid(s_bar_rid), .s_axi_rdata(s_bar_rdata), .s_axi_rresp(s_bar_rresp),
        .s_axi_rlast(s_bar_rlast), .s_axi_rvalid(s_bar_rvalid), .s_axi_rready(s_bar_rready),
        .m_axil_awaddr(bar_awaddr), .m_axil_awvalid(bar_awvalid), .m_axil_awready(bar_awready),
        .m_axil_wdata(bar_wdata), .m_axil_wstrb(bar_wstrb), .m_axil_wvalid(bar_wvalid),
        .m_axil_wready(bar_wready), .m_axil_bresp(bar_bresp), .m_axil_bvalid(bar_bvalid),
        .m_axil_bready(bar_bready), .m_axil_araddr(bar_araddr), .m_axil_arvalid(bar_arvalid),
        .m_axil_arready(bar_arready), .m_axil_rdata({m_axil_qspi_rdata, nic_rdata}),
        .m_axil_rresp(bar_rresp), .m_axil_rvalid(bar_rvalid), .m_axil_rready(bar_rready));
    assign m_axil_qspi_awaddr = bar_awaddr[15:0];
    assign m_axil_qspi_awvalid = bar_awvalid[1];
    assign m_axil_qspi_wdata = bar_wdata;
    assign m_axil_qspi_wstrb = bar_wstrb;
    assign m_axil_qspi_wvalid = bar_wvalid[1];
    assign m_axil_qspi_bready = bar_bready[1];
    assign m_axil_qspi_araddr = bar_araddr[15:0];
    assign m_axil_qspi_arvalid = bar_arvalid[1];
    assign m_axil_qspi_rready = bar_rready[1];
    assign {bar_awready[1], bar_wready[1], bar_bvalid[1], bar_arready[1], bar_rvalid[1]} =
        {m_axil_qspi_awready, m_axil_qspi_wready, m_axil_qspi_bvalid, m_axil_qspi_arready, m_axil_qspi_rvalid};
    assign bar_bresp = {m_axil_qspi_bresp, nic_bresp};
    assign bar_rresp = {m_axil_qspi_rresp, nic_rresp};

    always_ff @(posedge clk) begin
        rst <= !rst_n;
        aligned_sync <= {aligned_sync[0], stat_rx_aligned};
    end

    rnic_top #(.FW_HEX(FW_HEX), .BUILD_ID(BUILD_ID), .BUILD_TIME(BUILD_TIME)) nic (
        .clk, .rst, .strap_mac, .strap_ipv4, .strap_dma_window, .port_up(aligned_sync[1]),
        .stat_port_rx_drop_full(rx_drops_full), .stat_port_rx_drop_bad(rx_drops_bad),
        .s_axil_awaddr(bar_awaddr), .s_axil_awvalid(bar_awvalid[0]), .s_axil_awready(bar_awready[0]),
        .s_axil_wdata(bar_wdata), .s_axil_wstrb(bar_wstrb), .s_axil_wvalid(bar_wvalid[0]),
        .s_axil_wready(bar_wready[0]), .s_axil_bresp(nic_bresp), .s_axil_bvalid(bar_bvalid[0]),
        .s_axil_bready(bar_bready[0]), .s_axil_araddr(bar_araddr), .s_axil_arvalid(bar_arvalid[0]),
        .s_axil_arready(bar_arready[0]), .s_axil_rdata(nic_rdata), .s_axil_rresp(nic_rresp),
        .s_axil_rvalid(bar_rvalid[0]), .s_axil_rready(bar_rready[0]),
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
        .m_axis_eth_tx_tdata(tx_data), .m_axis_eth_tx_tkeep(tx_keep), .m_axis_eth_tx_tvalid(tx_valid),
        .m_axis_eth_tx_tready(tx_ready), .m_axis_eth_tx_tlast(tx_last), .s_axis_eth_rx_tdata(rx_data),
        .s_axis_eth_rx_tkeep(rx_keep), .s_axis_eth_rx_tvalid(rx_valid), .s_axis_eth_rx_tlast(rx_last),
        .fw_console_valid, .fw_console_char
`ifdef RNIC_KERNELS_OUTSIDE
        , .tx_in, .rx_in, .cq_in, .tx_out_d, .rx_out_d, .cq_out_d
`endif
        );

    // 250 MHz -> the CMAC: whole frames only (the NIC pads short ones to 60 bytes: rnic_eth_port)
    rnic_frame_cdc #(.DEPTH(128), .DROP(1'b0)) tx_cdc (
        .s_clk(clk), .s_rst(rst), .s_data(tx_data), .s_keep(tx_keep), .s_valid(tx_valid),
        .s_last(tx_last), .s_bad(1'b0), .s_ready(tx_ready),
        .m_clk(eth_tx_clk), .m_rst(eth_tx_rst), .m_data(tx_axis_tdata), .m_keep(tx_axis_tkeep),
        .m_valid(tx_axis_tvalid), .m_last(tx_axis_tlast), .m_ready(tx_axis_tready),
        .m_drops_full(tx_drops_full), .m_drops_bad(tx_drops_bad));
    assign tx_axis_tuser = 1'b0;

    // the CMAC -> 250 MHz: it cannot wait, so a frame that finds no room goes whole, counted
    rnic_frame_cdc #(.DEPTH(256), .DROP(1'b1)) rx_cdc (
        .s_clk(eth_rx_clk), .s_rst(eth_rx_rst), .s_data(rx_axis_tdata), .s_keep(rx_axis_tkeep),
        .s_valid(rx_axis_tvalid), .s_last(rx_axis_tlast), .s_bad(rx_axis_tuser), .s_ready(rx_always_ready),
        .m_clk(clk), .m_rst(rst), .m_data(rx_data), .m_keep(rx_keep), .m_valid(rx_valid),
        .m_last(rx_last), .m_ready(1'b1), .m_drops_full(rx_drops_full), .m_drops_bad(rx_drops_bad));

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
