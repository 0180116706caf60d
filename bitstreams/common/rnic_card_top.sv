// The card image's top level: the board's pins, the vendor IP (vivado.tcl creates it under the
// module names below, their ports in vendor_ip.toml) and the NIC's part of the card (rnic_card).
//   PCIe Gen3 x16: XDMA in AXI bridge mode; BAR0 (1 MiB) through its AXI4 master into rnic_card,
//     which passes the flash controller's window on; the NIC's DMA into its AXI4 slave; 16 user
//     interrupts = 16 MSI-X vectors, whose table the XDMA keeps in BAR 2 (spec MSIX_*).
//   QSFP0: CMAC 100G with its GTs and RS-FEC, user interface in gt_txusrclk2 (322.265625 MHz), also
//     its rx_clk; brought up without AXI4-Lite as PG203 says: RX enabled and remote fault sent
//     until stat_rx_aligned, then TX enabled.
//   The board's free-running clock: an MMCM makes the CMAC's init_clk and drp_clk (125 MHz, running
//     before any GT locks) and the flash controller's SPI clock (50 MHz: 25 MHz on the flash).
//   The configuration flash: AXI Quad SPI through STARTUPE3, for xbflash.qspi from the running
//     image (BAR0_QSPI_BASE).
// Never built with Vivado: docs/ARCHITECTURE.md, "On a card".
`default_nettype none

module rnic_card_top #(
    parameter FW_HEX = "",
    parameter logic [31:0] BUILD_ID = 32'h0,
    parameter logic [31:0] BUILD_TIME = 32'h0,
    parameter logic [47:0] MAC = 48'h02_00_00_00_00_01,   // locally administered
    parameter logic [31:0] IPV4 = 32'h0a_00_00_01,
    parameter int SYSCLK_MHZ = 100     // the board's free-running clock: 300 (U250) or 100 (U280, U55C)
) (
    input  wire         pcie_refclk_p,    // 100 MHz from the slot
    input  wire         pcie_refclk_n,
    input  wire         pcie_perst_n,
    input  wire  [15:0] pci_exp_rxp,
    input  wire  [15:0] pci_exp_rxn,
    output wire  [15:0] pci_exp_txp,
    output wire  [15:0] pci_exp_txn,
    input  wire         qsfp_refclk_p,    // QSFP0's GT reference clock (GT_REF_CLK_FREQ)
    input  wire         qsfp_refclk_n,
    input  wire  [3:0]  qsfp_rxp,
    input  wire  [3:0]  qsfp_rxn,
    output wire  [3:0]  qsfp_txp,
    output wire  [3:0]  qsfp_txn,
    input  wire         sysclk_p,
    input  wire         sysclk_n
`ifdef RNIC_HBM_CATTRIP
    ,
    // U280, U55C: the HBM's catastrophic-temperature flag to the card's controller, which cuts
    // the power when it is high or floats; no HBM is used, so it is held low
    output wire         hbm_cattrip
`endif
);
    // ---------------------------------------------------------------- clocks
    wire pcie_refclk_gt, pcie_refclk_div2, pcie_refclk;
    IBUFDS_GTE4 pcie_refclk_ibuf (.I(pcie_refclk_p), .IB(pcie_refclk_n), .CEB(1'b0), .O(pcie_refclk_gt),
                                  .ODIV2(pcie_refclk_div2));
    BUFG_GT pcie_refclk_bufg (.I(pcie_refclk_div2), .CE(1'b1), .CEMASK(1'b0), .CLR(1'b0), .CLRMASK(1'b0),
                              .DIV(3'd0), .O(pcie_refclk));

    wire sysclk, mmcm_fb, mmcm_locked, clk125_mmcm, clk50_mmcm, clk125, clk50;
    IBUFDS sysclk_ibuf (.I(sysclk_p), .IB(sysclk_n), .O(sysclk));
    // VCO 1250 MHz from 100 MHz (or 300 MHz / 3): CLKOUT0 125 MHz, CLKOUT1 50 MHz
    MMCME4_BASE #(
        .CLKIN1_PERIOD(1000.0 / SYSCLK_MHZ), .DIVCLK_DIVIDE(SYSCLK_MHZ / 100), .CLKFBOUT_MULT_F(12.5),
        .CLKOUT0_DIVIDE_F(10.0), .CLKOUT1_DIVIDE(25)
    ) mmcm (
        .CLKIN1(sysclk), .CLKFBIN(mmcm_fb), .RST(1'b0), .PWRDWN(1'b0), .CLKFBOUT(mmcm_fb), .CLKFBOUTB(),
        .CLKOUT0(clk125_mmcm), .CLKOUT0B(), .CLKOUT1(clk50_mmcm), .CLKOUT1B(), .CLKOUT2(), .CLKOUT2B(),
        .CLKOUT3(), .CLKOUT3B(), .CLKOUT4(), .CLKOUT5(), .CLKOUT6(), .LOCKED(mmcm_locked));
    BUFG clk125_bufg (.I(clk125_mmcm), .O(clk125));
    BUFG clk50_bufg (.I(clk50_mmcm), .O(clk50));

    // the CMAC's sys_reset: held until the MMCM has locked and then 1024 cycles of init_clk
    logic [10:0] cmac_rst_cnt;
    (* ASYNC_REG = "TRUE" *) logic [1:0] locked_sync;
    always_ff @(posedge clk125) begin
        locked_sync <= {locked_sync[0], mmcm_locked};
        if (!locked_sync[1])
            cmac_rst_cnt <= '0;
        else if (!cmac_rst_cnt[10])
            cmac_rst_cnt <= cmac_rst_cnt + 1'b1;
    end

    // ---------------------------------------------------------------- PCIe
    wire axi_aclk, axi_aresetn;
    wire [15:0] usr_irq_req, usr_irq_ack;
    wire [3:0] bar_awid, bar_bid, bar_arid, bar_rid;
    wire [63:0] bar_awaddr, bar_araddr, bar_wstrb;
    wire [7:0] bar_awlen, bar_arlen;
    wire [2:0] bar_awsize, bar_arsize;
    wire [511:0] bar_wdata, bar_rdata;
    wire [1:0] bar_bresp, bar_rresp;
    wire bar_awvalid, bar_awready, bar_wlast, bar_wvalid, bar_wready, bar_bvalid, bar_bready;
    wire bar_arvalid, bar_arready, bar_rlast, bar_rvalid, bar_rready;
    wire [63:0] dma_awaddr, dma_araddr, dma_wstrb;
    wire [7:0] dma_awlen, dma_arlen;
    wire [2:0] dma_awsize, dma_arsize;
    wire [1:0] dma_awburst, dma_arburst, dma_bresp, dma_rresp;
    wire [511:0] dma_wdata, dma_rdata;
    wire dma_awvalid, dma_awready, dma_wlast, dma_wvalid, dma_wready, dma_bvalid, dma_bready;
    wire dma_arvalid, dma_arready, dma_rlast, dma_rvalid, dma_rready;

    rnic_xdma xdma (
        .sys_clk(pcie_refclk), .sys_clk_gt(pcie_refclk_gt), .sys_rst_n(pcie_perst_n),
        .pci_exp_rxp, .pci_exp_rxn, .pci_exp_txp, .pci_exp_txn, .user_lnk_up(),
        .axi_aclk, .axi_aresetn, .usr_irq_req, .usr_irq_ack, .msix_enable(),
        .m_axib_awid(bar_awid), .m_axib_awaddr(bar_awaddr), .m_axib_awlen(bar_awlen),
        .m_axib_awsize(bar_awsize), .m_axib_awburst(), .m_axib_awprot(), .m_axib_awlock(),
        .m_axib_awcache(), .m_axib_awvalid(bar_awvalid), .m_axib_awready(bar_awready),
        .m_axib_wdata(bar_wdata), .m_axib_wstrb(bar_wstrb), .m_axib_wlast(bar_wlast),
        .m_axib_wvalid(bar_wvalid), .m_axib_wready(bar_wready), .m_axib_bid(bar_bid),
        .m_axib_bresp(bar_bresp), .m_axib_bvalid(bar_bvalid), .m_axib_bready(bar_bready),
        .m_axib_arid(bar_arid), .m_axib_araddr(bar_araddr), .m_axib_arlen(bar_arlen),
        .m_axib_arsize(bar_arsize), .m_axib_arburst(), .m_axib_arprot(), .m_axib_arlock(),
        .m_axib_arcache(), .m_axib_arvalid(bar_arvalid), .m_axib_arready(bar_arready),
        .m_axib_rid(bar_rid), .m_axib_rdata(bar_rdata), .m_axib_rresp(bar_rresp),
        .m_axib_rlast(bar_rlast), .m_axib_rvalid(bar_rvalid), .m_axib_rready(bar_rready),
        .s_axib_awid(4'd0), .s_axib_awaddr(dma_awaddr), .s_axib_awregion(4'd0), .s_axib_awlen(dma_awlen),
        .s_axib_awsize(dma_awsize), .s_axib_awburst(dma_awburst), .s_axib_awvalid(dma_awvalid),
        .s_axib_awready(dma_awready), .s_axib_wdata(dma_wdata), .s_axib_wstrb(dma_wstrb),
        .s_axib_wlast(dma_wlast), .s_axib_wvalid(dma_wvalid), .s_axib_wready(dma_wready),
        .s_axib_bid(), .s_axib_bresp(dma_bresp), .s_axib_bvalid(dma_bvalid), .s_axib_bready(dma_bready),
        .s_axib_arid(4'd0), .s_axib_araddr(dma_araddr), .s_axib_arregion(4'd0), .s_axib_arlen(dma_arlen),
        .s_axib_arsize(dma_arsize), .s_axib_arburst(dma_arburst), .s_axib_arvalid(dma_arvalid),
        .s_axib_arready(dma_arready), .s_axib_rid(), .s_axib_rdata(dma_rdata), .s_axib_rresp(dma_rresp),
        .s_axib_rlast(dma_rlast), .s_axib_rvalid(dma_rvalid), .s_axib_rready(dma_rready));

    // ---------------------------------------------------------------- the flash controller
    wire [15:0] qspi_awaddr, qspi_araddr;
    wire [31:0] qspi_wdata, qspi_rdata;
    wire [3:0] qspi_wstrb;
    wire [1:0] qspi_bresp, qspi_rresp;
    wire qspi_awvalid, qspi_awready, qspi_wvalid, qspi_wready, qspi_bvalid, qspi_bready;
    wire qspi_arvalid, qspi_arready, qspi_rvalid, qspi_rready;
    wire unused_qspi = &{1'b0, qspi_awaddr[15:7], qspi_araddr[15:7]};  // its registers end at 0x78

    rnic_qspi qspi (
        .ext_spi_clk(clk50), .s_axi_aclk(axi_aclk), .s_axi_aresetn(axi_aresetn),
        .s_axi_awaddr(qspi_awaddr[6:0]), .s_axi_awvalid(qspi_awvalid), .s_axi_awready(qspi_awready),
        .s_axi_wdata(qspi_wdata), .s_axi_wstrb(qspi_wstrb), .s_axi_wvalid(qspi_wvalid),
        .s_axi_wready(qspi_wready), .s_axi_bresp(qspi_bresp), .s_axi_bvalid(qspi_bvalid),
        .s_axi_bready(qspi_bready), .s_axi_araddr(qspi_araddr[6:0]), .s_axi_arvalid(qspi_arvalid),
        .s_axi_arready(qspi_arready), .s_axi_rdata(qspi_rdata), .s_axi_rresp(qspi_rresp),
        .s_axi_rvalid(qspi_rvalid), .s_axi_rready(qspi_rready),
        .cfgclk(), .cfgmclk(), .eos(), .preq(), .ip2intc_irpt(),
        // STARTUPE3's other inputs as PG153 gives them when only the flash pins are wanted
        .gsr(1'b0), .gts(1'b0), .keyclearb(1'b1), .usrcclkts(1'b0), .usrdoneo(1'b1), .usrdonets(1'b1));

    // ---------------------------------------------------------------- Ethernet
    wire cmac_clk, cmac_tx_rst, cmac_rx_rst, rx_aligned;
    wire tx_tready, tx_tvalid, tx_tlast, tx_tuser, rx_tvalid, rx_tlast, rx_tuser;
    wire [511:0] tx_tdata, rx_tdata;
    wire [63:0] tx_tkeep, rx_tkeep;
    logic aligned_reg;

    always_ff @(posedge cmac_clk)   // stat_rx_aligned is in rx_clk, which is this clock
        aligned_reg <= rx_aligned;

    rnic_cmac cmac (
        .gt_ref_clk_p(qsfp_refclk_p), .gt_ref_clk_n(qsfp_refclk_n),
        .gt_rxp_in(qsfp_rxp), .gt_rxn_in(qsfp_rxn), .gt_txp_out(qsfp_txp), .gt_txn_out(qsfp_txn),
        .gt_txusrclk2(cmac_clk), .gt_loopback_in(12'd0), .gt_rxrecclkout(), .gt_powergoodout(),
        .gt_ref_clk_out(), .gtwiz_reset_tx_datapath(1'b0), .gtwiz_reset_rx_datapath(1'b0),
        .sys_reset(!cmac_rst_cnt[10]), .init_clk(clk125), .drp_clk(clk125),
        .drp_addr(10'd0), .drp_di(16'd0), .drp_en(1'b0), .drp_we(1'b0), .drp_do(), .drp_rdy(),
        .core_drp_reset(1'b0), .rx_clk(cmac_clk), .core_rx_reset(1'b0), .core_tx_reset(1'b0),
        .usr_rx_reset(cmac_rx_rst), .usr_tx_reset(cmac_tx_rst),
        .rx_axis_tvalid(rx_tvalid), .rx_axis_tdata(rx_tdata), .rx_axis_tlast(rx_tlast),
        .rx_axis_tkeep(rx_tkeep), .rx_axis_tuser(rx_tuser), .rx_preambleout(),
        .tx_axis_tready(tx_tready), .tx_axis_tvalid(tx_tvalid), .tx_axis_tdata(tx_tdata),
        .tx_axis_tlast(tx_tlast), .tx_axis_tkeep(tx_tkeep), .tx_axis_tuser(tx_tuser),
        .tx_preamblein(56'd0), .tx_ovfout(), .tx_unfout(), .stat_rx_aligned(rx_aligned),
        .ctl_rx_enable(1'b1), .ctl_rx_force_resync(1'b0), .ctl_rx_test_pattern(1'b0),
        .ctl_tx_enable(aligned_reg), .ctl_tx_send_idle(1'b0), .ctl_tx_send_rfi(!aligned_reg),
        .ctl_tx_send_lfi(1'b0), .ctl_tx_test_pattern(1'b0),
        .ctl_rsfec_ieee_error_indication_mode(1'b0), .ctl_rx_rsfec_enable(1'b1),
        .ctl_rx_rsfec_enable_correction(1'b1), .ctl_rx_rsfec_enable_indication(1'b1),
        .ctl_tx_rsfec_enable(1'b1));

    // ---------------------------------------------------------------- the NIC
    rnic_card #(.FW_HEX(FW_HEX), .BUILD_ID(BUILD_ID), .BUILD_TIME(BUILD_TIME)) nic (
        .clk(axi_aclk), .rst_n(axi_aresetn), .strap_mac(MAC), .strap_ipv4(IPV4),
        // no secret strap on the card: the firmware keys its memory keys from the clock count at
        // the driver's first command; the kernel driver alone hands the NIC bus addresses
        .strap_dma_window(6'd0),
        .s_bar_awid(bar_awid), .s_bar_awaddr(bar_awaddr), .s_bar_awlen(bar_awlen), .s_bar_awsize(bar_awsize),
        .s_bar_awvalid(bar_awvalid), .s_bar_awready(bar_awready), .s_bar_wdata(bar_wdata),
        .s_bar_wstrb(bar_wstrb), .s_bar_wlast(bar_wlast), .s_bar_wvalid(bar_wvalid),
        .s_bar_wready(bar_wready), .s_bar_bid(bar_bid), .s_bar_bresp(bar_bresp),
        .s_bar_bvalid(bar_bvalid), .s_bar_bready(bar_bready), .s_bar_arid(bar_arid),
        .s_bar_araddr(bar_araddr), .s_bar_arlen(bar_arlen), .s_bar_arsize(bar_arsize),
        .s_bar_arvalid(bar_arvalid), .s_bar_arready(bar_arready), .s_bar_rid(bar_rid),
        .s_bar_rdata(bar_rdata), .s_bar_rresp(bar_rresp), .s_bar_rlast(bar_rlast),
        .s_bar_rvalid(bar_rvalid), .s_bar_rready(bar_rready),
        .m_axil_qspi_awaddr(qspi_awaddr), .m_axil_qspi_awvalid(qspi_awvalid),
        .m_axil_qspi_awready(qspi_awready), .m_axil_qspi_wdata(qspi_wdata), .m_axil_qspi_wstrb(qspi_wstrb),
        .m_axil_qspi_wvalid(qspi_wvalid), .m_axil_qspi_wready(qspi_wready), .m_axil_qspi_bresp(qspi_bresp),
        .m_axil_qspi_bvalid(qspi_bvalid), .m_axil_qspi_bready(qspi_bready),
        .m_axil_qspi_araddr(qspi_araddr), .m_axil_qspi_arvalid(qspi_arvalid),
        .m_axil_qspi_arready(qspi_arready), .m_axil_qspi_rdata(qspi_rdata), .m_axil_qspi_rresp(qspi_rresp),
        .m_axil_qspi_rvalid(qspi_rvalid), .m_axil_qspi_rready(qspi_rready),
        .m_axi_araddr(dma_araddr), .m_axi_arlen(dma_arlen), .m_axi_arsize(dma_arsize),
        .m_axi_arburst(dma_arburst), .m_axi_arvalid(dma_arvalid), .m_axi_arready(dma_arready),
        .m_axi_rdata(dma_rdata), .m_axi_rresp(dma_rresp), .m_axi_rlast(dma_rlast), .m_axi_rvalid(dma_rvalid),
        .m_axi_rready(dma_rready), .m_axi_awaddr(dma_awaddr), .m_axi_awlen(dma_awlen),
        .m_axi_awsize(dma_awsize), .m_axi_awburst(dma_awburst), .m_axi_awvalid(dma_awvalid),
        .m_axi_awready(dma_awready), .m_axi_wdata(dma_wdata), .m_axi_wstrb(dma_wstrb), .m_axi_wlast(dma_wlast),
        .m_axi_wvalid(dma_wvalid), .m_axi_wready(dma_wready), .m_axi_bresp(dma_bresp), .m_axi_bvalid(dma_bvalid),
        .m_axi_bready(dma_bready),
        .usr_irq_req, .usr_irq_ack,
        .eth_tx_clk(cmac_clk), .eth_tx_rst(cmac_tx_rst), .tx_axis_tready(tx_tready),
        .tx_axis_tvalid(tx_tvalid), .tx_axis_tdata(tx_tdata), .tx_axis_tkeep(tx_tkeep),
        .tx_axis_tlast(tx_tlast), .tx_axis_tuser(tx_tuser),
        .eth_rx_clk(cmac_clk), .eth_rx_rst(cmac_rx_rst), .rx_axis_tvalid(rx_tvalid),
        .rx_axis_tdata(rx_tdata), .rx_axis_tkeep(rx_tkeep), .rx_axis_tlast(rx_tlast),
        .rx_axis_tuser(rx_tuser), .stat_rx_aligned(rx_aligned),
        .fw_console_valid(), .fw_console_char());   // an ILA's, if wanted

`ifdef RNIC_HBM_CATTRIP
    assign hbm_cattrip = 1'b0;
`endif
endmodule

`default_nettype wire
