// BAR0: AXI4-Lite slave with the self-describing register blocks (ID, CLOCK, STATS, PORT, ADMIN,
// CTXBLK, chained by NEXT) and one doorbell page per context. SQ and CQ doorbells leave as
// streams; the firmware reads the context registers through a side port and writes CMDQ_CI.
// One AXI transaction at a time; a read answers one cycle after the address.
// Package names are qualified: Yosys 0.23 reads no `import` (make synth).
`default_nettype none

module rnic_bar0 #(
    parameter logic [31:0] BUILD_ID = 32'h0,   // git commit of the image
    parameter logic [31:0] BUILD_TIME = 32'h0  // build time, seconds since 1970
) (
    input  wire         clk,
    input  wire         rst,
    input  wire  [63:0] cycle,
    input  wire  [47:0] strap_mac,
    input  wire  [31:0] strap_ipv4,
    input  wire         port_up,

    input  wire  [19:0] s_axil_awaddr,
    input  wire         s_axil_awvalid,
    output logic        s_axil_awready,
    input  wire  [31:0] s_axil_wdata,
    input  wire  [3:0]  s_axil_wstrb,
    input  wire         s_axil_wvalid,
    output logic        s_axil_wready,
    output logic [1:0]  s_axil_bresp,
    output logic        s_axil_bvalid,
    input  wire         s_axil_bready,
    input  wire  [19:0] s_axil_araddr,
    input  wire         s_axil_arvalid,
    output logic        s_axil_arready,
    output logic [31:0] s_axil_rdata,
    output logic [1:0]  s_axil_rresp,
    output logic        s_axil_rvalid,
    input  wire         s_axil_rready,

    // firmware state shown in the ID block
    input  wire  [31:0] fw_version,
    input  wire  [31:0] fw_status,
    input  wire  [31:0] ctx_reset_pending,
    output logic        ctx_reset_valid,     // ADMIN.CTX_RESET written
    output logic [7:0]  ctx_reset_ctx,
    // context memory: the chunk list as the driver gave it, a pulse when ICM_LIST_N is written,
    // and the firmware's answer
    output logic [63:0] icm_list_addr,
    output logic [31:0] icm_list_n,
    output logic        icm_list_valid,
    input  wire  [7:0]  icm_status,
    // what the host sets for the firmware (ADMIN.SEED_*, ETH_MTU, CTX_PRIV), and what the
    // hardware refused the soft core (ADMIN.FW_FAULT)
    output logic [127:0] host_seed,
    output logic        host_seed_valid,
    output logic [13:0] host_eth_mtu,
    output logic [15:0] host_ctx_priv,
    input  wire  [31:0] fw_fault,
    input  wire  [rnic_spec_pkg::RNIC_STAT_COUNT*32-1:0] stats,             // counter i at [i*32 +: 32]

    // firmware side of the context registers
    input  wire  [3:0]  fw_ctx,
    input  wire  [3:0]  fw_word,
    output logic [31:0] fw_ctx_rdata,
    output logic        cmdq_db_valid,       // a context's CMDQ_PI was written
    output logic [3:0]  cmdq_db_ctx,
    input  wire         fw_ci_we,
    input  wire  [3:0]  fw_ci_ctx,
    input  wire  [15:0] fw_ci,

    // doorbells
    output logic [39:0] sq_db_data,          // {ctx[7:0], the SQ_DB register as written}
    output logic        sq_db_valid,
    input  wire         sq_db_ready,
    output logic [39:0] cq_db_data,          // {ctx[7:0], the CQ_DB register}
    output logic        cq_db_valid,
    input  wire         cq_db_ready,
    output logic [40:0] rq_db_data,          // {srq, ctx[7:0], the RQ_DB or SRQ_DB register}
    output logic        rq_db_valid,
    input  wire         rq_db_ready
);
    localparam int NCTX = 32'(rnic_spec_pkg::RNIC_NUM_CTX);
    localparam int CTX_WORDS = 8;            // CMDQ_BASE_LO .. CMDQ_CI

    logic [31:0] ctx_regs [NCTX][CTX_WORDS];
    logic [31:0] cycles_hi_reg;

    // ---- write path: address and data together
    logic wr_go, sq_room, cq_room, rq_room, is_sq_db, is_cq_db, is_rq_db, is_srq_db;
    logic [19:0] wr_addr;
    // a doorbell waits (AXI backpressure) while its FIFO is full: none is lost
    assign wr_go = s_axil_awvalid && s_axil_wvalid && !s_axil_bvalid &&
                   !(is_sq_db && !sq_room) && !(is_cq_db && !cq_room) && !((is_rq_db || is_srq_db) && !rq_room);
    assign s_axil_awready = wr_go;
    assign s_axil_wready = wr_go;
    assign s_axil_bresp = 2'b00;
    assign wr_addr = s_axil_awaddr;

    // a context's doorbell page (a process may map it) and its command-queue page (the driver's):
    // the registers that point the firmware at memory are only in the second
    logic in_ctx, in_cmdq;
    logic [3:0] wr_ctx;
    logic [11:0] wr_off;
    assign in_ctx = wr_addr >= 20'(rnic_spec_pkg::RNIC_BAR0_CTX_BASE) &&
                    wr_addr < 20'(rnic_spec_pkg::RNIC_BAR0_CTX_BASE +
                                  NCTX * rnic_spec_pkg::RNIC_BAR0_CTX_STRIDE);
    assign in_cmdq = wr_addr >= 20'(rnic_spec_pkg::RNIC_BAR0_CMDQ_BASE) &&
                     wr_addr < 20'(rnic_spec_pkg::RNIC_BAR0_CMDQ_BASE +
                                   NCTX * rnic_spec_pkg::RNIC_BAR0_CTX_STRIDE);
    assign wr_ctx = 4'(wr_addr[15:12]);  // both regions are 16 pages from a 64 KiB boundary
    assign wr_off = wr_addr[11:0];

    logic sq_push, cq_push, rq_push;
    logic [39:0] db_in;   // a doorbell: {ctx, the register}; rnic_top takes its fields from the spec
    assign is_sq_db = in_ctx && wr_off == 12'(rnic_spec_pkg::RNIC_CTX_SQ_DB);
    assign is_cq_db = in_ctx && wr_off == 12'(rnic_spec_pkg::RNIC_CTX_CQ_DB);
    assign is_rq_db = in_ctx && wr_off == 12'(rnic_spec_pkg::RNIC_CTX_RQ_DB);
    assign sq_push = wr_go && is_sq_db;
    assign is_srq_db = in_ctx && wr_off == 12'(rnic_spec_pkg::RNIC_CTX_SRQ_DB);
    assign rq_push = wr_go && (is_rq_db || is_srq_db);
    assign cq_push = wr_go && is_cq_db;
    assign db_in = {4'b0, wr_ctx, s_axil_wdata};

    rnic_fifo #(.WIDTH(40), .DEPTH(64)) sq_fifo (
        .clk, .rst, .s_data(db_in), .s_valid(sq_push), .s_ready(sq_room),
        .m_data(sq_db_data), .m_valid(sq_db_valid), .m_ready(sq_db_ready));
    rnic_fifo #(.WIDTH(41), .DEPTH(64)) rq_fifo (
        .clk, .rst, .s_data({is_srq_db, db_in}), .s_valid(rq_push), .s_ready(rq_room),
        .m_data(rq_db_data), .m_valid(rq_db_valid), .m_ready(rq_db_ready));
    rnic_fifo #(.WIDTH(40), .DEPTH(64)) cq_fifo (
        .clk, .rst, .s_data(db_in), .s_valid(cq_push), .s_ready(cq_room),
        .m_data(cq_db_data), .m_valid(cq_db_valid), .m_ready(cq_db_ready));

    always_ff @(posedge clk) begin
        ctx_reset_valid <= 1'b0;
        icm_list_valid <= 1'b0;
        cmdq_db_valid <= 1'b0;
        cmdq_db_ctx <= wr_ctx;
        if (rst) begin
            s_axil_bvalid <= 1'b0;
            icm_list_addr <= '0;
            icm_list_n <= '0;
            host_seed <= '0;
            host_seed_valid <= 1'b0;
            host_eth_mtu <= 14'd1500;
            host_ctx_priv <= '0;
            for (int c = 0; c < NCTX; c++)
                for (int w = 0; w < CTX_WORDS; w++)
                    ctx_regs[c][w] <= '0;
        end else begin
            if (s_axil_bvalid && s_axil_bready)
                s_axil_bvalid <= 1'b0;
            if (wr_go) begin
                s_axil_bvalid <= 1'b1;
                // CMDQ_CI (word 6) belongs to the firmware
                if (in_cmdq && wr_off < 12'(rnic_spec_pkg::RNIC_CTX_CMDQ_CI))
                    ctx_regs[wr_ctx][wr_off[4:2]] <= s_axil_wdata;
                cmdq_db_valid <= in_cmdq && wr_off == 12'(rnic_spec_pkg::RNIC_CTX_CMDQ_PI);
                if (wr_addr == 20'(rnic_spec_pkg::RNIC_ADMIN_ICM_LIST_LO))
                    icm_list_addr[31:0] <= s_axil_wdata;
                if (wr_addr == 20'(rnic_spec_pkg::RNIC_ADMIN_ICM_LIST_HI))
                    icm_list_addr[63:32] <= s_axil_wdata;
                for (int w = 0; w < 4; w++)
                    if (wr_addr == 20'(rnic_spec_pkg::RNIC_ADMIN_SEED_0 + 4 * w))
                        host_seed[w * 32 +: 32] <= s_axil_wdata;
                if (wr_addr == 20'(rnic_spec_pkg::RNIC_ADMIN_SEED_3))
                    host_seed_valid <= 1'b1;
                if (wr_addr == 20'(rnic_spec_pkg::RNIC_ADMIN_ETH_MTU))
                    host_eth_mtu <= s_axil_wdata[13:0];
                if (wr_addr == 20'(rnic_spec_pkg::RNIC_ADMIN_CTX_PRIV))
                    host_ctx_priv <= s_axil_wdata[15:0];
                if (wr_addr == 20'(rnic_spec_pkg::RNIC_ADMIN_ICM_LIST_N)) begin
                    icm_list_n <= s_axil_wdata;
                    icm_list_valid <= 1'b1;
                end
                if (wr_addr == 20'(rnic_spec_pkg::RNIC_ADMIN_CTX_RESET)) begin
                    ctx_reset_valid <= 1'b1;
                    ctx_reset_ctx <= s_axil_wdata[7:0];
                    // the owner is gone: the queue it pointed the firmware at is disabled at
                    // once, so nothing it left in the ring is served after the reset
                    if (s_axil_wdata[7:0] < 8'(NCTX))
                        for (int w = 0; w < CTX_WORDS; w++)
                            if (w != rnic_spec_pkg::RNIC_CTX_CMDQ_CI / 4)
                                ctx_regs[s_axil_wdata[3:0]][w] <= '0;
                end
            end
            if (fw_ci_we)
                ctx_regs[fw_ci_ctx][rnic_spec_pkg::RNIC_CTX_CMDQ_CI / 4] <= {16'b0, fw_ci};
        end
    end

    assign fw_ctx_rdata = fw_word < 4'(CTX_WORDS) ? ctx_regs[fw_ctx][fw_word[2:0]] : 32'b0;

    // ---- read path
    function automatic logic [31:0] blk_hdr(input logic [7:0] off, input logic [31:0] typ,
                                            input logic [31:0] next, input logic [31:0] size);
        case (off)  // no `return`: Yosys 0.23 lacks it
            8'h00: blk_hdr = typ;
            8'h04: blk_hdr = 32'd1;
            8'h08: blk_hdr = next;
            8'h0c: blk_hdr = size;
            default: blk_hdr = 32'h0;
        endcase
    endfunction

    // a register's value, computed only when a read is taken (as the read data register's input
    // mux; the simulator then evaluates it once a read, not every clock)
    function automatic logic [31:0] rd_data(input logic [19:0] ra);
        rd_data = 32'h0;
        // the block headers, a block each 0x100 from 0 to the STATS block (the last, 0x200 long)
        if (ra < 20'(rnic_spec_pkg::RNIC_STATS_BASE + 'h100) && ra[7:0] < 8'h10) begin
            case (ra[11:8])
                4'h0: rd_data = blk_hdr(ra[7:0], 32'(rnic_spec_pkg::RNIC_BLOCK_TYPE_ID),
                                        32'(rnic_spec_pkg::RNIC_CLOCK_BASE), 32'h100);
                4'h1: rd_data = blk_hdr(ra[7:0], 32'(rnic_spec_pkg::RNIC_BLOCK_TYPE_CLOCK),
                                        32'(rnic_spec_pkg::RNIC_PORT_BASE), 32'h100);
                4'h3: rd_data = blk_hdr(ra[7:0], 32'(rnic_spec_pkg::RNIC_BLOCK_TYPE_PORT),
                                        32'(rnic_spec_pkg::RNIC_ADMIN_BASE), 32'h100);
                4'h4: rd_data = blk_hdr(ra[7:0], 32'(rnic_spec_pkg::RNIC_BLOCK_TYPE_ADMIN),
                                        32'(rnic_spec_pkg::RNIC_CTXBLK_BASE), 32'h100);
                4'h5: rd_data = blk_hdr(ra[7:0], 32'(rnic_spec_pkg::RNIC_BLOCK_TYPE_CTX),
                                        32'(rnic_spec_pkg::RNIC_STATS_BASE), 32'h100);
                4'h6: rd_data = blk_hdr(ra[7:0], 32'(rnic_spec_pkg::RNIC_BLOCK_TYPE_STATS), 32'h0,
                                        32'(rnic_spec_pkg::RNIC_STATS_SIZE));
                default: rd_data = 32'h0;
            endcase
        end else if (ra >= 20'(rnic_spec_pkg::RNIC_STATS_COUNTER0) &&
                     ra < 20'(rnic_spec_pkg::RNIC_STATS_COUNTER0 + rnic_spec_pkg::RNIC_STAT_COUNT * 4)) begin
            rd_data = stats[{6'((ra - 20'(rnic_spec_pkg::RNIC_STATS_COUNTER0)) >> 2), 5'b0} +: 32];
        end else if (ra >= 20'(rnic_spec_pkg::RNIC_BAR0_CMDQ_BASE) &&
                     ra < 20'(rnic_spec_pkg::RNIC_BAR0_CMDQ_BASE +
                              NCTX * rnic_spec_pkg::RNIC_BAR0_CTX_STRIDE)) begin
            if (ra[11:0] < 12'(CTX_WORDS * 4))
                rd_data = ctx_regs[ra[15:12]][ra[4:2]];
        end else begin
            case (ra)
                20'(rnic_spec_pkg::RNIC_ID_VENDOR_DEVICE):
                    rd_data = {16'(rnic_spec_pkg::RNIC_DEVICE_ID), 16'(rnic_spec_pkg::RNIC_VENDOR_ID)};
                20'(rnic_spec_pkg::RNIC_ID_IF_VERSION): rd_data = 32'(rnic_spec_pkg::RNIC_IF_VERSION);
                20'(rnic_spec_pkg::RNIC_ID_BUILD_ID): rd_data = BUILD_ID;
                20'(rnic_spec_pkg::RNIC_ID_BUILD_TIME): rd_data = BUILD_TIME;
                20'(rnic_spec_pkg::RNIC_ID_FW_VERSION): rd_data = fw_version;
                20'(rnic_spec_pkg::RNIC_ID_FW_STATUS): rd_data = fw_status;
                20'(rnic_spec_pkg::RNIC_ID_NUM_CTX): rd_data = 32'(NCTX);
                20'(rnic_spec_pkg::RNIC_ID_CTX_BASE): rd_data = 32'(rnic_spec_pkg::RNIC_BAR0_CTX_BASE);
                20'(rnic_spec_pkg::RNIC_ID_CTX_STRIDE):
                    rd_data = 32'(rnic_spec_pkg::RNIC_BAR0_CTX_STRIDE);
                20'(rnic_spec_pkg::RNIC_ID_CMDQ_BASE): rd_data = 32'(rnic_spec_pkg::RNIC_BAR0_CMDQ_BASE);
                20'(rnic_spec_pkg::RNIC_CLOCK_CYCLES_LO): rd_data = cycle[31:0];
                20'(rnic_spec_pkg::RNIC_CLOCK_CYCLES_HI): rd_data = cycles_hi_reg;
                20'(rnic_spec_pkg::RNIC_CLOCK_FREQ_KHZ):
                    rd_data = 32'(rnic_spec_pkg::RNIC_CLOCK_MHZ * 1000);
                20'(rnic_spec_pkg::RNIC_STATS_COUNT): rd_data = 32'(rnic_spec_pkg::RNIC_STAT_COUNT);
                20'(rnic_spec_pkg::RNIC_PORT_MAC_LO): rd_data = strap_mac[31:0];
                20'(rnic_spec_pkg::RNIC_PORT_MAC_HI): rd_data = {16'b0, strap_mac[47:32]};
                20'(rnic_spec_pkg::RNIC_PORT_IPV4): rd_data = strap_ipv4;
                20'(rnic_spec_pkg::RNIC_PORT_LINK): rd_data = {31'b0, port_up};
                20'(rnic_spec_pkg::RNIC_PORT_SPEED_GBPS): rd_data = 32'd100;
                20'(rnic_spec_pkg::RNIC_ADMIN_CTX_RESET_PENDING): rd_data = ctx_reset_pending;
                20'(rnic_spec_pkg::RNIC_ADMIN_ICM_CHUNKS): rd_data = 32'(rnic_spec_pkg::RNIC_ICM_CHUNKS);
                20'(rnic_spec_pkg::RNIC_ADMIN_ICM_LIST_LO): rd_data = icm_list_addr[31:0];
                20'(rnic_spec_pkg::RNIC_ADMIN_ICM_LIST_HI): rd_data = icm_list_addr[63:32];
                20'(rnic_spec_pkg::RNIC_ADMIN_ICM_STATUS): rd_data = {24'b0, icm_status};
                20'(rnic_spec_pkg::RNIC_ADMIN_ETH_MTU): rd_data = {18'b0, host_eth_mtu};
                20'(rnic_spec_pkg::RNIC_ADMIN_CTX_PRIV): rd_data = {16'b0, host_ctx_priv};
                20'(rnic_spec_pkg::RNIC_ADMIN_FW_FAULT): rd_data = fw_fault;
                20'(rnic_spec_pkg::RNIC_CTXBLK_COUNT): rd_data = 32'(NCTX);
                default: rd_data = 32'h0;
            endcase
        end
    endfunction

    assign s_axil_arready = !s_axil_rvalid;
    assign s_axil_rresp = 2'b00;

    always_ff @(posedge clk) begin
        if (rst) begin
            s_axil_rvalid <= 1'b0;
        end else begin
            if (s_axil_rvalid && s_axil_rready)
                s_axil_rvalid <= 1'b0;
            if (s_axil_arvalid && s_axil_arready) begin
                s_axil_rvalid <= 1'b1;
                s_axil_rdata <= rd_data(s_axil_araddr);
                if (s_axil_araddr == 20'(rnic_spec_pkg::RNIC_CLOCK_CYCLES_LO))
                    cycles_hi_reg <= cycle[63:32];
            end
        end
    end

    logic unused;
    assign unused = &{1'b0, s_axil_wstrb};
endmodule

`default_nettype wire
