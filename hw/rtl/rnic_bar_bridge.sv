// BAR0 on a card: the XDMA bridge's AXI4 master (M_AXI_B, 512-bit; PCIe memory reads and writes
// of BAR0, at AXI address = BAR0 offset) to two AXI4-Lite masters, by the windows the spec declares:
// the NIC's registers below BAR0_NIC_SIZE, the flash controller (AXI Quad SPI) at BAR0_QSPI_BASE.
// A host's MMIO is one beat of 1 to 8 bytes inside an 8-byte word (readl/writel, readq/writeq):
// it becomes one or two 32-bit AXI4-Lite accesses, one transaction at a time (MMIO is not a
// datapath); only that word of the 512-bit beat is kept, and a read returns it on every word. A burst, an
// access of more than 8 bytes or one outside both windows is answered without touching either
// (SLVERR, DECERR), its write data drained.
`default_nettype none

module rnic_bar_bridge #(
    parameter int ID = 4       // AXI ID bits of the bridge's master
) (
    input  wire           clk,
    input  wire           rst,

    input  wire  [ID-1:0] s_axi_awid,
    input  wire  [63:0]   s_axi_awaddr,
    input  wire  [7:0]    s_axi_awlen,
    input  wire  [2:0]    s_axi_awsize,
    input  wire           s_axi_awvalid,
    output logic          s_axi_awready,
    input  wire  [511:0]  s_axi_wdata,
    input  wire  [63:0]   s_axi_wstrb,
    input  wire           s_axi_wlast,
    input  wire           s_axi_wvalid,
    output logic          s_axi_wready,
    output logic [ID-1:0] s_axi_bid,
    output logic [1:0]    s_axi_bresp,
    output logic          s_axi_bvalid,
    input  wire           s_axi_bready,
    input  wire  [ID-1:0] s_axi_arid,
    input  wire  [63:0]   s_axi_araddr,
    input  wire  [7:0]    s_axi_arlen,
    input  wire  [2:0]    s_axi_arsize,
    input  wire           s_axi_arvalid,
    output logic          s_axi_arready,
    output logic [ID-1:0] s_axi_rid,
    output logic [511:0]  s_axi_rdata,
    output logic [1:0]    s_axi_rresp,
    output logic          s_axi_rlast,
    output logic          s_axi_rvalid,
    input  wire           s_axi_rready,

    // window 0: the NIC (rnic_card.s_axil), window 1: the flash controller; 20-bit BAR offsets
    output logic [19:0]   m_axil_awaddr,
    output logic [1:0]    m_axil_awvalid,   // one per window
    input  wire  [1:0]    m_axil_awready,
    output logic [31:0]   m_axil_wdata,
    output logic [3:0]    m_axil_wstrb,
    output logic [1:0]    m_axil_wvalid,
    input  wire  [1:0]    m_axil_wready,
    input  wire  [3:0]    m_axil_bresp,     // {window 1, window 0}
    input  wire  [1:0]    m_axil_bvalid,
    output logic [1:0]    m_axil_bready,
    output logic [19:0]   m_axil_araddr,
    output logic [1:0]    m_axil_arvalid,
    input  wire  [1:0]    m_axil_arready,
    input  wire  [63:0]   m_axil_rdata,     // {window 1, window 0}
    input  wire  [3:0]    m_axil_rresp,
    input  wire  [1:0]    m_axil_rvalid,
    output logic [1:0]    m_axil_rready
);
    typedef enum logic [2:0] { IDLE, WDATA, SUB, ANSWER_W, ANSWER_R, DRAIN } state_t;
    state_t state;
    logic is_write, win, aw_sent, w_sent, second;
    logic [ID-1:0] id;
    logic [19:3] addr;      // the BAR offset's 8-byte word
    logic [63:0] data;      // that word
    logic [7:0] strb;
    logic [1:0] resp;
    logic half;             // the 32-bit half of the word under way
    logic [1:0] nlanes;     // halves the access touches (1 or 2)

    // where an access may go: its window (or none), from its BAR offset
    function automatic logic [1:0] window(input logic [63:0] a);
        if (a < 64'(rnic_spec_pkg::RNIC_BAR0_NIC_SIZE))
            window = 2'b01;
        else if (a >= 64'(rnic_spec_pkg::RNIC_BAR0_QSPI_BASE) &&
                 a < 64'(rnic_spec_pkg::RNIC_BAR0_QSPI_BASE) + 64'(rnic_spec_pkg::RNIC_BAR0_QSPI_SIZE))
            window = 2'b10;
        else
            window = 2'b00;
    endfunction

    // an access of 1 to 8 bytes inside one 8-byte word touches one or two 32-bit lanes
    function automatic logic [1:0] lanes(input logic [63:0] a, input logic [2:0] size);
        if (size > 3'd3 || ((a & 64'h7) + (64'd1 << size)) > 64'd8)
            lanes = 2'd0;
        else if (size == 3'd3 || ((a[1:0] + (3'd1 << size)) > 3'd4))
            lanes = 2'd2;
        else
            lanes = 2'd1;
    endfunction

    logic [1:0] aw_win, ar_win, aw_lanes, ar_lanes;
    assign aw_win = window(s_axi_awaddr);
    assign ar_win = window(s_axi_araddr);
    assign aw_lanes = lanes(s_axi_awaddr, s_axi_awsize);
    assign ar_lanes = lanes(s_axi_araddr, s_axi_arsize);

    assign s_axi_awready = state == IDLE;
    assign s_axi_arready = state == IDLE && !s_axi_awvalid;   // writes first
    assign s_axi_wready = state == WDATA || state == DRAIN;
    assign s_axi_bvalid = state == ANSWER_W;
    assign s_axi_bid = id;
    assign s_axi_bresp = resp;
    assign s_axi_rvalid = state == ANSWER_R;
    assign s_axi_rid = id;
    assign s_axi_rresp = resp;
    assign s_axi_rlast = 1'b1;
    assign s_axi_rdata = {8{data}};

    // the AXI4-Lite side: one 32-bit access at a time, to the window held in `win`
    logic [1:0] sel;
    assign sel = win ? 2'b10 : 2'b01;
    assign m_axil_awaddr = {addr, half, 2'b00};
    assign m_axil_araddr = {addr, half, 2'b00};
    assign m_axil_wdata = half ? data[63:32] : data[31:0];
    assign m_axil_wstrb = half ? strb[7:4] : strb[3:0];
    assign m_axil_awvalid = state == SUB && is_write && !aw_sent ? sel : 2'b00;
    assign m_axil_wvalid = state == SUB && is_write && !w_sent ? sel : 2'b00;
    assign m_axil_bready = state == SUB && is_write ? sel : 2'b00;
    assign m_axil_arvalid = state == SUB && !is_write && !aw_sent ? sel : 2'b00;
    assign m_axil_rready = state == SUB && !is_write ? sel : 2'b00;

    logic sub_done;
    logic [1:0] sub_resp;
    logic [31:0] sub_rdata;
    assign sub_done = is_write ? m_axil_bvalid[win] : m_axil_rvalid[win];
    assign sub_resp = is_write ? m_axil_bresp[2 * win +: 2] : m_axil_rresp[2 * win +: 2];
    assign sub_rdata = m_axil_rdata[32 * win +: 32];

    always_ff @(posedge clk) begin
        if (rst) begin
            state <= IDLE;
            aw_sent <= 1'b0;
            w_sent <= 1'b0;
            second <= 1'b0;
        end else begin
            case (state)
                IDLE:
                    if (s_axi_awvalid) begin
                        is_write <= 1'b1;
                        id <= s_axi_awid;
                        addr <= s_axi_awaddr[19:3];
                        win <= aw_win[1];
                        half <= s_axi_awaddr[2];
                        nlanes <= aw_lanes;
                        resp <= aw_win == 2'b00 ? 2'b11 : 2'b10;   // DECERR, SLVERR (if not done)
                        state <= aw_win != 2'b00 && aw_lanes != 2'd0 && s_axi_awlen == 8'd0 ? WDATA : DRAIN;
                    end else if (s_axi_arvalid) begin
                        is_write <= 1'b0;
                        id <= s_axi_arid;
                        addr <= s_axi_araddr[19:3];
                        win <= ar_win[1];
                        half <= s_axi_araddr[2];
                        nlanes <= ar_lanes;
                        data <= '0;
                        resp <= ar_win == 2'b00 ? 2'b11 : 2'b10;
                        // a burst read gets one beat of error; the bridge splits nothing here
                        state <= ar_win != 2'b00 && ar_lanes != 2'd0 && s_axi_arlen == 8'd0 ? SUB : ANSWER_R;
                    end
                WDATA:
                    if (s_axi_wvalid) begin
                        data <= s_axi_wdata[64 * addr[5:3] +: 64];
                        strb <= s_axi_wstrb[8 * addr[5:3] +: 8];
                        state <= SUB;
                    end
                SUB: begin
                    if (is_write ? m_axil_awready[win] && m_axil_awvalid[win] :
                                   m_axil_arready[win] && m_axil_arvalid[win])
                        aw_sent <= 1'b1;
                    if (m_axil_wready[win] && m_axil_wvalid[win])
                        w_sent <= 1'b1;
                    if (sub_done) begin
                        aw_sent <= 1'b0;
                        w_sent <= 1'b0;
                        if (!is_write && half)
                            data[63:32] <= sub_rdata;
                        else if (!is_write)
                            data[31:0] <= sub_rdata;
                        if (sub_resp != 2'b00 || !second)
                            resp <= sub_resp;
                        second <= 1'b1;
                        if (nlanes == 2'd2 && !second) begin
                            half <= 1'b1;
                        end else begin
                            second <= 1'b0;
                            state <= is_write ? ANSWER_W : ANSWER_R;
                        end
                    end
                end
                DRAIN:
                    if (s_axi_wvalid && s_axi_wlast)
                        state <= ANSWER_W;
                ANSWER_W:
                    if (s_axi_bready)
                        state <= IDLE;
                ANSWER_R:
                    if (s_axi_rready)
                        state <= IDLE;
                default:
                    state <= IDLE;
            endcase
        end
    end
endmodule

`default_nettype wire
