// RNIC top level, as it sits on an Alveo card: BAR0 (AXI4-Lite from XDMA/QDMA), a DMA master
// toward host memory (descriptor + data streams: the XDMA/QDMA boundary), MSI-X, a 512-bit
// AXI-Stream Ethernet port (the CMAC boundary), the soft-core subsystem and the datapath kernels.
// Ports and data flow: docs/ARCHITECTURE.md. The RTL keeps to what Yosys 0.23 reads (make synth):
// no `import` (package names qualified), no string-typed parameters, no array ports.
`default_nettype none

module rnic_top #(
    parameter FW_HEX = "",                     // firmware image ($readmemh)
    parameter logic [31:0] BUILD_ID = 32'h0,   // git commit of the image
    parameter logic [31:0] BUILD_TIME = 32'h0  // seconds since 1970
) (
    input  wire          clk,
    input  wire          rst,
    input  wire  [47:0]  strap_mac,
    input  wire  [31:0]  strap_ipv4,
    input  wire  [5:0]   strap_dma_window,  // FW.DMA_WINDOW: 0 on a card
    input  wire          port_up,           // the MAC's receive side is aligned (PORT.LINK)
    input  wire  [31:0]  stat_port_rx_drop_full,  // frames the card's receive FIFO dropped (STAT)
    input  wire  [31:0]  stat_port_rx_drop_bad,

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

    output logic         m_dma_rd_req_valid,
    input  wire          m_dma_rd_req_ready,
    output logic [63:0]  m_dma_rd_req_addr,
    output logic [15:0]  m_dma_rd_req_len,
    output logic [7:0]   m_dma_rd_req_tag,
    input  wire          s_dma_rd_valid,
    output logic         s_dma_rd_ready,
    input  wire  [511:0] s_dma_rd_data,
    input  wire  [7:0]   s_dma_rd_tag,
    input  wire          s_dma_rd_last,
    input  wire          s_dma_rd_err,    // the host refused the read (unmapped, completion error)
    // WQEs pushed through a context's CTX_SQ_PUSH window, two beats each (on a card the window
    // sits behind an AXI4 bridge that takes the write-combined burst; ctx from the page written)
    input  wire          s_push_valid,
    output logic         s_push_ready,
    input  wire  [7:0]   s_push_ctx,
    input  wire  [511:0] s_push_data,
    input  wire          s_push_last,

    output logic         m_dma_wr_valid,
    input  wire          m_dma_wr_ready,
    output logic [63:0]  m_dma_wr_addr,
    output logic [15:0]  m_dma_wr_len,
    output logic [511:0] m_dma_wr_data,
    output logic         m_dma_wr_last,

    output logic         irq_valid,
    input  wire          irq_ready,
    output logic [7:0]   irq_vector,

    output logic [511:0] m_axis_eth_tx_tdata,
    output logic [63:0]  m_axis_eth_tx_tkeep,
    output logic         m_axis_eth_tx_tvalid,
    input  wire          m_axis_eth_tx_tready,
    output logic         m_axis_eth_tx_tlast,
    input  wire  [511:0] s_axis_eth_rx_tdata,
    input  wire  [63:0]  s_axis_eth_rx_tkeep,
    input  wire          s_axis_eth_rx_tvalid,
    input  wire          s_axis_eth_rx_tlast,

    output logic         fw_console_valid,
    output logic [7:0]   fw_console_char
`ifdef RNIC_KERNELS_OUTSIDE
    // rnic-sim steps the kernels' C functions itself, with the contract of their wrappers
    // (spec/gen/rnic_*_kernel.sv): from the inputs before a rising edge, the outputs (*_out_d)
    // registered at it. It spares the simulator packing the ports into DPI-C vectors every clock.
    ,
    output rnic_spec_pkg::rnic_tx_in_t tx_in,
    output rnic_spec_pkg::rnic_rx_in_t rx_in,
    output rnic_spec_pkg::rnic_cq_in_t cq_in,
    input  rnic_spec_pkg::rnic_tx_out_t tx_out_d,
    input  rnic_spec_pkg::rnic_rx_out_t rx_out_d,
    input  rnic_spec_pkg::rnic_cq_out_t cq_out_d
`endif
);
    logic [63:0] cycle_reg;
    always_ff @(posedge clk)
        cycle_reg <= rst ? 64'd0 : cycle_reg + 64'd1;

    // the kernels' read beats the host refused
    logic [31:0] stat_dma_rd_err;
    always_ff @(posedge clk)
        if (rst)
            stat_dma_rd_err <= '0;
        else if (s_dma_rd_valid && s_dma_rd_ready && s_dma_rd_err && s_dma_rd_tag != 8'(rnic_spec_pkg::RNIC_DMA_TAG_FW))
            stat_dma_rd_err <= stat_dma_rd_err + 32'd1;

    // kernel ports: the DPI vectors keep every field in whole 32-bit words, so the padding bits
    // of the output structs are never read
`ifndef RNIC_KERNELS_OUTSIDE
    rnic_spec_pkg::rnic_tx_in_t tx_in;
    rnic_spec_pkg::rnic_rx_in_t rx_in;
    rnic_spec_pkg::rnic_cq_in_t cq_in;
`endif
    /* verilator lint_off UNUSEDSIGNAL */
    rnic_spec_pkg::rnic_tx_out_t tx_out;
    rnic_spec_pkg::rnic_rx_out_t rx_out;
    rnic_spec_pkg::rnic_cq_out_t cq_out;
    /* verilator lint_on UNUSEDSIGNAL */

    // ---- BAR0 and the soft core
    logic [31:0] fw_version, fw_status, ctx_reset_pending, ctx_rdata, stats [rnic_spec_pkg::RNIC_STAT_COUNT];
    logic [127:0] host_seed;       // ADMIN.SEED_*, ETH_MTU, CTX_PRIV: the host's, for the firmware
    logic         host_seed_valid;
    logic [13:0]  host_eth_mtu;
    logic [15:0]  host_ctx_priv;
    logic [31:0]  fw_fault;        // what the hardware refused the soft core (ADMIN.FW_FAULT)
    logic [rnic_spec_pkg::RNIC_STAT_COUNT*32-1:0] stats_vec;   // stats for BAR0, counter i at [i*32 +: 32]
    logic        ctx_reset_valid, ci_we, cmdq_db_valid;
    logic [3:0]  cmdq_db_ctx;
    logic [7:0]  ctx_reset_ctx, icm_status;
    logic [63:0] icm_list_addr;
    logic [31:0] icm_list_n;
    logic        icm_list_valid;
    logic [3:0]  ctx_sel, ctx_word, ci_ctx;
    logic [15:0] ci_val;
    logic [39:0] sq_db;
    logic [40:0] rq_db;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [39:0] cq_db;   // the bits CQ_DB leaves reserved are not read
    /* verilator lint_on UNUSEDSIGNAL */
    logic        sq_db_valid, cq_db_valid, rq_db_valid;
    logic        cfg_valid;
    logic [31:0] cfg_addr, cfg_data;

    rnic_bar0 #(.BUILD_ID(BUILD_ID), .BUILD_TIME(BUILD_TIME)) bar0 (
        .clk, .rst, .cycle(cycle_reg), .strap_mac, .strap_ipv4, .port_up,
        .s_axil_awaddr, .s_axil_awvalid, .s_axil_awready, .s_axil_wdata, .s_axil_wstrb,
        .s_axil_wvalid, .s_axil_wready, .s_axil_bresp, .s_axil_bvalid, .s_axil_bready,
        .s_axil_araddr, .s_axil_arvalid, .s_axil_arready, .s_axil_rdata, .s_axil_rresp,
        .s_axil_rvalid, .s_axil_rready,
        .fw_version, .fw_status, .ctx_reset_pending, .ctx_reset_valid, .ctx_reset_ctx,
        .icm_list_addr, .icm_list_n, .icm_list_valid, .icm_status,
        .host_seed, .host_seed_valid, .host_eth_mtu, .host_ctx_priv, .fw_fault,
        .stats(stats_vec),
        .cmdq_db_valid, .cmdq_db_ctx,
        .fw_ctx(ctx_sel), .fw_word(ctx_word), .fw_ctx_rdata(ctx_rdata), .fw_ci_we(ci_we), .fw_ci_ctx(ci_ctx), .fw_ci(ci_val),
        .sq_db_data(sq_db), .sq_db_valid, .sq_db_ready(tx_out.db_ready),
        .cq_db_data(cq_db), .cq_db_valid, .cq_db_ready(cq_out.db_ready),
        .rq_db_data(rq_db), .rq_db_valid, .rq_db_ready(rx_out.db_ready));

    logic         fw_rdreq_valid, fw_rdreq_ready, fw_rd_ready, fw_wr_valid, fw_wr_ready, fw_wr_last;
    logic [63:0]  fw_rdreq_addr, fw_wr_addr;
    logic [15:0]  fw_rdreq_len, fw_wr_len;
    logic [511:0] fw_wr_data, fw_tx_data;
    logic [63:0]  fw_tx_keep;
    logic         fw_tx_valid, fw_tx_last, fw_tx_ready, fw_rx_ready;
    logic         fw_irq_valid, fw_irq_ready;
    logic [7:0]   fw_irq_vector;

    rnic_soc #(.FW_HEX(FW_HEX)) soc (
        .clk, .rst, .cycle(cycle_reg), .strap_mac, .strap_ipv4, .strap_dma_window,
        .host_seed, .host_seed_valid, .host_eth_mtu, .host_ctx_priv, .fw_fault,
        .fw_version, .fw_status, .console_valid(fw_console_valid), .console_char(fw_console_char),
        .ctx_sel, .ctx_word, .ctx_rdata, .ci_we, .ci_ctx, .ci_val, .cmdq_db_valid, .cmdq_db_ctx, .ctx_reset_valid, .ctx_reset_ctx,
        .ctx_reset_pending, .icm_list_addr, .icm_list_n, .icm_list_valid, .icm_status, .fence({cq_out.fence, rx_out.fence, tx_out.fence}), .cfg_valid, .cfg_addr, .cfg_data,
        .irq_valid(fw_irq_valid), .irq_vector(fw_irq_vector), .irq_ready(fw_irq_ready),
        .rdreq_valid(fw_rdreq_valid), .rdreq_ready(fw_rdreq_ready), .rdreq_addr(fw_rdreq_addr),
        .rdreq_len(fw_rdreq_len), .rd_valid(s_dma_rd_valid && s_dma_rd_tag == 8'(rnic_spec_pkg::RNIC_DMA_TAG_FW)),
        .rd_ready(fw_rd_ready), .rd_data(s_dma_rd_data), .rd_last(s_dma_rd_last),
        .rd_err(s_dma_rd_err),
        .wr_valid(fw_wr_valid), .wr_ready(fw_wr_ready), .wr_addr(fw_wr_addr), .wr_len(fw_wr_len),
        .wr_data(fw_wr_data), .wr_last(fw_wr_last),
        .tx_data(fw_tx_data), .tx_keep(fw_tx_keep), .tx_valid(fw_tx_valid), .tx_last(fw_tx_last),
        .tx_ready(fw_tx_ready),
        .rx_data(rx_out.fw_data), .rx_keep(rx_out.fw_keep), .rx_valid(rx_out.fw_valid),
        .rx_last(rx_out.fw_last), .rx_ready(fw_rx_ready));

    // The arbiters' inputs are listed from the highest index down (input 0 is the rightmost).

    // ---- DMA reads: TX kernel, firmware, RX kernel (enum DMA_TAG); data routed back by tag
    logic [2:0] rdq_ready;
    logic       rdq_m_last;
    assign fw_rdreq_ready = rdq_ready[1];
    rnic_pkt_arb #(.N(3), .WIDTH(88)) rd_arb (
        .clk, .rst,
        .s_data({8'(rnic_spec_pkg::RNIC_DMA_TAG_RX), rx_out.rdreq_addr, rx_out.rdreq_len, 8'(rnic_spec_pkg::RNIC_DMA_TAG_FW), fw_rdreq_addr, fw_rdreq_len,
                 8'(rnic_spec_pkg::RNIC_DMA_TAG_TX), tx_out.rdreq_addr, tx_out.rdreq_len}),
        .s_valid({rx_out.rdreq_valid, fw_rdreq_valid, tx_out.rdreq_valid}), .s_last(3'b111),
        .s_ready(rdq_ready),
        .m_data({m_dma_rd_req_tag, m_dma_rd_req_addr, m_dma_rd_req_len}), .m_valid(m_dma_rd_req_valid),
        .m_last(rdq_m_last), .m_ready(m_dma_rd_req_ready));
    assign s_push_ready = tx_out.push_ready;
    assign s_dma_rd_ready = s_dma_rd_tag == 8'(rnic_spec_pkg::RNIC_DMA_TAG_TX) ? tx_out.rd_ready :
                            s_dma_rd_tag == 8'(rnic_spec_pkg::RNIC_DMA_TAG_RX) ? rx_out.rd_ready : fw_rd_ready;

    // ---- DMA writes: RX payload, CQ kernel, firmware
    logic [2:0] wrq_ready;
    assign fw_wr_ready = wrq_ready[2];
    rnic_pkt_arb #(.N(3), .WIDTH(592)) wr_arb (
        .clk, .rst,
        .s_data({fw_wr_addr, fw_wr_len, fw_wr_data, cq_out.wr_addr, cq_out.wr_len, cq_out.wr_data,
                 rx_out.wr_addr, rx_out.wr_len, rx_out.wr_data}),
        .s_valid({fw_wr_valid, cq_out.wr_valid, rx_out.wr_valid}),
        .s_last({fw_wr_last, cq_out.wr_last, rx_out.wr_last}), .s_ready(wrq_ready),
        .m_data({m_dma_wr_addr, m_dma_wr_len, m_dma_wr_data}), .m_valid(m_dma_wr_valid),
        .m_last(m_dma_wr_last), .m_ready(m_dma_wr_ready));

    // ---- Ethernet transmit: RoCE (TX kernel: requests and responses), firmware frames (ARP);
    // the port pads short frames and loops frames for our own MAC back to the RX kernel
    logic [1:0] ethq_ready;
    logic [511:0] eth_data, eth_rx_data;
    logic [63:0] eth_keep, eth_rx_keep;
    logic eth_valid, eth_last, eth_ready, eth_rx_valid, eth_rx_last;
    logic [31:0] stat_loopback;
    assign fw_tx_ready = ethq_ready[1];
    rnic_pkt_arb #(.N(2), .WIDTH(576)) eth_arb (
        .clk, .rst, .s_data({fw_tx_keep, fw_tx_data, tx_out.eth_keep, tx_out.eth_data}),
        .s_valid({fw_tx_valid, tx_out.eth_valid}), .s_last({fw_tx_last, tx_out.eth_last}),
        .s_ready(ethq_ready),
        .m_data({eth_keep, eth_data}), .m_valid(eth_valid), .m_last(eth_last), .m_ready(eth_ready));
    rnic_eth_port port (
        .clk, .rst, .mac(strap_mac),
        .s_tx_data(eth_data), .s_tx_keep(eth_keep), .s_tx_valid(eth_valid), .s_tx_last(eth_last),
        .s_tx_ready(eth_ready),
        .m_axis_tx_tdata(m_axis_eth_tx_tdata), .m_axis_tx_tkeep(m_axis_eth_tx_tkeep),
        .m_axis_tx_tvalid(m_axis_eth_tx_tvalid), .m_axis_tx_tready(m_axis_eth_tx_tready),
        .m_axis_tx_tlast(m_axis_eth_tx_tlast),
        .s_axis_rx_tdata(s_axis_eth_rx_tdata), .s_axis_rx_tkeep(s_axis_eth_rx_tkeep),
        .s_axis_rx_tvalid(s_axis_eth_rx_tvalid), .s_axis_rx_tlast(s_axis_eth_rx_tlast),
        .rx_data(eth_rx_data), .rx_keep(eth_rx_keep), .rx_valid(eth_rx_valid), .rx_last(eth_rx_last),
        .stat_loopback);

    // ---- MSI-X: CQ kernel and firmware
    logic [1:0] irqq_ready;
    logic       irq_m_last;
    assign fw_irq_ready = irqq_ready[1];
    rnic_pkt_arb #(.N(2), .WIDTH(8)) irq_arb (
        .clk, .rst, .s_data({fw_irq_vector, cq_out.irq_vector}),
        .s_valid({fw_irq_valid, cq_out.irq_valid}), .s_last(2'b11), .s_ready(irqq_ready),
        .m_data(irq_vector), .m_valid(irq_valid), .m_last(irq_m_last), .m_ready(irq_ready));

    // ---- kernels
    always_comb begin
        tx_in = '0;
        tx_in.rst = rst;
        tx_in.cycle = cycle_reg;
        tx_in.cfg_valid = cfg_valid;
        tx_in.cfg_addr = cfg_addr;
        tx_in.cfg_data = cfg_data;
        tx_in.db_valid = sq_db_valid;
        // doorbells: {ctx, the register as written}, its fields from the spec
        tx_in.db_ctx = sq_db[39:32];
        tx_in.db_pi = sq_db[rnic_spec_pkg::RNIC_CTX_SQ_DB_PI_SHIFT +: rnic_spec_pkg::RNIC_CTX_SQ_DB_PI_WIDTH];
        tx_in.db_qpn = sq_db[rnic_spec_pkg::RNIC_CTX_SQ_DB_QPN_SHIFT +: rnic_spec_pkg::RNIC_CTX_SQ_DB_QPN_WIDTH];
        tx_in.push_valid = s_push_valid;
        tx_in.push_ctx = s_push_ctx;
        tx_in.push_data = s_push_data;
        tx_in.push_last = s_push_last;
        tx_in.rd_valid = s_dma_rd_valid && s_dma_rd_tag == 8'(rnic_spec_pkg::RNIC_DMA_TAG_TX);
        tx_in.rd_data = s_dma_rd_err ? '0 : s_dma_rd_data; // an error's data are not memory
        tx_in.rd_last = s_dma_rd_last;
        tx_in.rd_err = s_dma_rd_err;
        tx_in.ack_valid = rx_out.ack_valid;
        tx_in.ack_qpn = rx_out.ack_qpn;
        tx_in.ack_psn = rx_out.ack_psn;
        tx_in.ack_syndrome = rx_out.ack_syndrome;
        tx_in.ack_msn = rx_out.ack_msn;
        tx_in.ack_rd = rx_out.ack_rd;
        tx_in.rsp_valid = rx_out.rsp_valid;
        tx_in.rsp = rx_out.rsp;
        tx_in.rdx_ready = rx_out.rdx_ready;
        tx_in.rdreq_ready = rdq_ready[0];
        tx_in.eth_ready = ethq_ready[0];
        tx_in.cpl_ready = cq_out.txc_ready;

        rx_in = '0;
        rx_in.rst = rst;
        rx_in.cycle = cycle_reg;
        rx_in.cfg_valid = cfg_valid;
        rx_in.cfg_addr = cfg_addr;
        rx_in.cfg_data = cfg_data;
        rx_in.eth_valid = eth_rx_valid;
        rx_in.eth_data = eth_rx_data;
        rx_in.eth_keep = eth_rx_keep;
        rx_in.eth_last = eth_rx_last;
        rx_in.db_valid = rq_db_valid;
        rx_in.db_ctx = rq_db[39:32];  // RQ_DB and SRQ_DB share a layout (test_spec.py)
        rx_in.db_pi = rq_db[rnic_spec_pkg::RNIC_CTX_RQ_DB_PI_SHIFT +: rnic_spec_pkg::RNIC_CTX_RQ_DB_PI_WIDTH];
        rx_in.db_qpn = rq_db[rnic_spec_pkg::RNIC_CTX_RQ_DB_QPN_SHIFT +: rnic_spec_pkg::RNIC_CTX_RQ_DB_QPN_WIDTH];
        rx_in.db_srq = rq_db[40];
        rx_in.rd_valid = s_dma_rd_valid && s_dma_rd_tag == 8'(rnic_spec_pkg::RNIC_DMA_TAG_RX);
        rx_in.rd_data = s_dma_rd_err ? '0 : s_dma_rd_data;
        rx_in.rd_last = s_dma_rd_last;
        rx_in.rd_err = s_dma_rd_err;
        rx_in.rdx_valid = tx_out.rdx_valid;
        rx_in.rdx = tx_out.rdx;
        rx_in.rdreq_ready = rdq_ready[2];
        rx_in.wr_ready = wrq_ready[0];
        rx_in.ack_ready = tx_out.ack_ready;
        rx_in.rsp_ready = tx_out.rsp_ready;
        rx_in.fw_ready = fw_rx_ready;
        rx_in.cpl_ready = cq_out.rxc_ready;

        cq_in = '0;
        cq_in.rst = rst;
        cq_in.cycle = cycle_reg;
        cq_in.cfg_valid = cfg_valid;
        cq_in.cfg_addr = cfg_addr;
        cq_in.cfg_data = cfg_data;
        cq_in.txc_valid = tx_out.cpl_valid;
        cq_in.txc = tx_out.cpl;
        cq_in.rxc_valid = rx_out.cpl_valid;
        cq_in.rxc = rx_out.cpl;
        cq_in.db_valid = cq_db_valid;
        cq_in.db_ctx = cq_db[39:32];
        cq_in.db_arm = 8'(cq_db[rnic_spec_pkg::RNIC_CTX_CQ_DB_ARM_SHIFT +: rnic_spec_pkg::RNIC_CTX_CQ_DB_ARM_WIDTH]);
        cq_in.db_ci = cq_db[rnic_spec_pkg::RNIC_CTX_CQ_DB_CI_SHIFT +: rnic_spec_pkg::RNIC_CTX_CQ_DB_CI_WIDTH];
        cq_in.db_cqn = 16'(cq_db[rnic_spec_pkg::RNIC_CTX_CQ_DB_CQN_SHIFT +: rnic_spec_pkg::RNIC_CTX_CQ_DB_CQN_WIDTH]);
        cq_in.wr_ready = wrq_ready[1];
        cq_in.irq_ready = irqq_ready[0];
    end

`ifdef RNIC_KERNELS_OUTSIDE
    always_ff @(posedge clk) begin
        tx_out <= tx_out_d;
        rx_out <= rx_out_d;
        cq_out <= cq_out_d;
    end
`else
    rnic_tx_kernel tx_k (.clk, .rst, .k_in(tx_in), .k_out(tx_out));
    rnic_rx_kernel rx_k (.clk, .rst, .k_in(rx_in), .k_out(rx_out));
    rnic_cq_kernel cq_k (.clk, .rst, .k_in(cq_in), .k_out(cq_out));
`endif

    // ---- counters (enum STAT order)
    always_comb begin
        for (int i = 0; i < rnic_spec_pkg::RNIC_STAT_COUNT; i++)
            stats[i] = 32'h0;
        stats[rnic_spec_pkg::RNIC_STAT_RX_FRAMES] = rx_out.stat_frames;
        stats[rnic_spec_pkg::RNIC_STAT_RX_ROCE] = rx_out.stat_roce;
        stats[rnic_spec_pkg::RNIC_STAT_RX_TO_FW] = rx_out.stat_to_fw;
        stats[rnic_spec_pkg::RNIC_STAT_RX_DROP_ICRC] = rx_out.stat_drop_icrc;
        stats[rnic_spec_pkg::RNIC_STAT_RX_DROP_MALFORMED] = rx_out.stat_drop_malformed;
        stats[rnic_spec_pkg::RNIC_STAT_RX_DROP_QPN] = rx_out.stat_drop_qpn;
        stats[rnic_spec_pkg::RNIC_STAT_RX_NAK_PSN] = rx_out.stat_nak_psn;
        stats[rnic_spec_pkg::RNIC_STAT_RX_DUP] = rx_out.stat_dup;
        stats[rnic_spec_pkg::RNIC_STAT_RX_NAK_ACCESS] = rx_out.stat_nak_access;
        stats[rnic_spec_pkg::RNIC_STAT_RX_NAK_INV] = rx_out.stat_nak_inv;
        stats[rnic_spec_pkg::RNIC_STAT_RX_DROP_OVERFLOW] = rx_out.stat_drop_overflow;
        stats[rnic_spec_pkg::RNIC_STAT_RX_WRITE_BYTES] = rx_out.stat_write_bytes;
        stats[rnic_spec_pkg::RNIC_STAT_TX_FRAMES] = tx_out.stat_frames;
        stats[rnic_spec_pkg::RNIC_STAT_TX_ACKS] = tx_out.stat_acks;
        stats[rnic_spec_pkg::RNIC_STAT_TX_WQES] = tx_out.stat_wqes;
        stats[rnic_spec_pkg::RNIC_STAT_TX_BYTES] = tx_out.stat_bytes;
        stats[rnic_spec_pkg::RNIC_STAT_TX_RETRANSMITS] = tx_out.stat_retransmits;
        stats[rnic_spec_pkg::RNIC_STAT_TX_NAKS_RCVD] = tx_out.stat_naks;
        stats[rnic_spec_pkg::RNIC_STAT_CQ_CQES] = cq_out.stat_cqes;
        stats[rnic_spec_pkg::RNIC_STAT_CQ_OVERFLOW] = cq_out.stat_overflow;
        stats[rnic_spec_pkg::RNIC_STAT_TX_DROP_DB] = tx_out.stat_drop_db;
        stats[rnic_spec_pkg::RNIC_STAT_RX_FW_DROP] = rx_out.stat_fw_drop;
        stats[rnic_spec_pkg::RNIC_STAT_RX_NAK_RNR] = rx_out.stat_nak_rnr;
        stats[rnic_spec_pkg::RNIC_STAT_TX_RNR_RCVD] = tx_out.stat_rnr;
        stats[rnic_spec_pkg::RNIC_STAT_RX_READ_REQS] = rx_out.stat_read_reqs;
        stats[rnic_spec_pkg::RNIC_STAT_RX_ATOMICS] = rx_out.stat_atomics;
        stats[rnic_spec_pkg::RNIC_STAT_RX_RECV_BYTES] = rx_out.stat_recv_bytes;
        stats[rnic_spec_pkg::RNIC_STAT_RX_RD_RSP_BYTES] = rx_out.stat_rd_rsp_bytes;
        stats[rnic_spec_pkg::RNIC_STAT_RX_DROP_RSP] = rx_out.stat_drop_rsp;
        stats[rnic_spec_pkg::RNIC_STAT_RX_DROP_DB] = rx_out.stat_drop_db;
        stats[rnic_spec_pkg::RNIC_STAT_RX_DROP_NORECV] = rx_out.stat_drop_norecv;
        stats[rnic_spec_pkg::RNIC_STAT_LOOPBACK] = stat_loopback;
        stats[rnic_spec_pkg::RNIC_STAT_RX_DROP_SRC] = rx_out.stat_drop_src;
        stats[rnic_spec_pkg::RNIC_STAT_RX_CUT] = rx_out.stat_cut;
        stats[rnic_spec_pkg::RNIC_STAT_TX_POISONED] = tx_out.stat_poisoned;
        stats[rnic_spec_pkg::RNIC_STAT_TX_PUSHED] = tx_out.stat_pushed;
        stats[rnic_spec_pkg::RNIC_STAT_RX_QPC_HITS] = rx_out.stat_qpc_hits;
        stats[rnic_spec_pkg::RNIC_STAT_RX_QPC_MISSES] = rx_out.stat_qpc_misses;
        stats[rnic_spec_pkg::RNIC_STAT_RX_QPC_EVICTIONS] = rx_out.stat_qpc_evictions;
        stats[rnic_spec_pkg::RNIC_STAT_RX_QPC_MISS_CYCLES] = rx_out.stat_qpc_miss_cycles;
        stats[rnic_spec_pkg::RNIC_STAT_RX_QPC_WAIT_CYCLES] = rx_out.stat_qpc_wait_cycles;
        stats[rnic_spec_pkg::RNIC_STAT_TX_TLB_HITS] = tx_out.stat_tlb_hits;
        stats[rnic_spec_pkg::RNIC_STAT_TX_TLB_MISSES] = tx_out.stat_tlb_misses;
        stats[rnic_spec_pkg::RNIC_STAT_TX_TLB_EVICTIONS] = tx_out.stat_tlb_evictions;
        stats[rnic_spec_pkg::RNIC_STAT_TX_TLB_MISS_CYCLES] = tx_out.stat_tlb_miss_cycles;
        stats[rnic_spec_pkg::RNIC_STAT_RX_TLB_HITS] = rx_out.stat_tlb_hits;
        stats[rnic_spec_pkg::RNIC_STAT_RX_TLB_MISSES] = rx_out.stat_tlb_misses;
        stats[rnic_spec_pkg::RNIC_STAT_RX_TLB_EVICTIONS] = rx_out.stat_tlb_evictions;
        stats[rnic_spec_pkg::RNIC_STAT_RX_TLB_MISS_CYCLES] = rx_out.stat_tlb_miss_cycles;
        stats[rnic_spec_pkg::RNIC_STAT_TX_MPT_HITS] = tx_out.stat_mpt_hits;
        stats[rnic_spec_pkg::RNIC_STAT_TX_MPT_MISSES] = tx_out.stat_mpt_misses;
        stats[rnic_spec_pkg::RNIC_STAT_TX_MPT_EVICTIONS] = tx_out.stat_mpt_evictions;
        stats[rnic_spec_pkg::RNIC_STAT_TX_MPT_MISS_CYCLES] = tx_out.stat_mpt_miss_cycles;
        stats[rnic_spec_pkg::RNIC_STAT_RX_MPT_HITS] = rx_out.stat_mpt_hits;
        stats[rnic_spec_pkg::RNIC_STAT_RX_MPT_MISSES] = rx_out.stat_mpt_misses;
        stats[rnic_spec_pkg::RNIC_STAT_RX_MPT_EVICTIONS] = rx_out.stat_mpt_evictions;
        stats[rnic_spec_pkg::RNIC_STAT_RX_MPT_MISS_CYCLES] = rx_out.stat_mpt_miss_cycles;
        stats[rnic_spec_pkg::RNIC_STAT_PORT_RX_DROP_FULL] = stat_port_rx_drop_full;
        stats[rnic_spec_pkg::RNIC_STAT_PORT_RX_DROP_BAD] = stat_port_rx_drop_bad;
        stats[rnic_spec_pkg::RNIC_STAT_DMA_RD_ERR] = stat_dma_rd_err;
    end
    always_comb
        for (int i = 0; i < rnic_spec_pkg::RNIC_STAT_COUNT; i++)
            stats_vec[i * 32 +: 32] = stats[i];

    logic unused;
    assign unused = &{1'b0, rdq_m_last, irq_m_last, rdq_ready[0], tx_out.rdreq_valid};
endmodule

`default_nettype wire
