// The NIC's DMA streams (rnic_top's m_dma_rd_req/s_dma_rd and m_dma_wr) on an AXI4 master, 512-bit,
// as the AXI-MM slave bridge of XDMA/QDMA takes them (it turns AXI bursts into PCIe TLPs, cut at
// max payload / read request size). One ID each way: AXI keeps same-ID bursts in order, which is
// the order the stream contract promises (docs/ARCHITECTURE.md, "Kernel contract").
//
// Read: a request {addr, len} (never crossing 4 KiB) becomes one INCR burst of the 64-byte beats
// it touches; the returned beats are realigned so that byte 0 of the first beat is the byte at
// addr. Write: the beats are shifted to addr's offset in the beat, with strobes for the first and
// last beat. Per clock: one beat in and one beat out each way. A burst touching one beat more
// than it carries (unaligned, and the bytes spill into another beat) costs one clock of that
// stream at its end, nothing else. Up to RD_OUTSTANDING read bursts are in flight.
`default_nettype none

module rnic_dma_axi #(
    parameter int RD_OUTSTANDING = 32   // XDMA/QDMA slave bridge: 32 reads in flight
) (
    input  wire          clk,
    input  wire          rst,

    // from rnic_top
    input  wire          s_rd_req_valid,
    output logic         s_rd_req_ready,
    input  wire  [63:0]  s_rd_req_addr,
    input  wire  [15:0]  s_rd_req_len,
    input  wire  [7:0]   s_rd_req_tag,
    output logic         m_rd_valid,
    input  wire          m_rd_ready,
    output logic [511:0] m_rd_data,
    output logic [7:0]   m_rd_tag,
    output logic         m_rd_last,
    output logic         m_rd_err,       // the burst was answered SLVERR/DECERR (so far)

    input  wire          s_wr_valid,
    output logic         s_wr_ready,
    input  wire  [63:0]  s_wr_addr,
    input  wire  [15:0]  s_wr_len,
    input  wire  [511:0] s_wr_data,
    input  wire          s_wr_last,

    // AXI4 master
    output logic [63:0]  m_axi_araddr,
    output logic [7:0]   m_axi_arlen,
    output logic [2:0]   m_axi_arsize,
    output logic [1:0]   m_axi_arburst,
    output logic         m_axi_arvalid,
    input  wire          m_axi_arready,
    input  wire  [511:0] m_axi_rdata,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire  [1:0]   m_axi_rresp,    // bit 1: SLVERR/DECERR
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
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire          m_axi_bvalid,
    output logic         m_axi_bready,

    output logic [31:0]  err_count     // bursts answered SLVERR/DECERR (data passed on, flagged)
);
    // beats of 64 bytes touched by [addr, addr + len), len <= 4096
    function automatic logic [7:0] beats(input logic [5:0] off, input logic [15:0] len);
        beats = 8'((16'(off) + len + 16'd63) >> 6);
    endfunction

    // ---------------------------------------------------------------- reads
    // what the R side needs of each burst in flight: offset, beats out, beats in, tag
    localparam int MW = 6 + 7 + 8 + 8;
    logic [MW-1:0] rq_din, rq_dout;
    logic rq_room, rq_valid, rq_pop;
    logic [6:0] rd_nout_req;

    rnic_fifo #(.WIDTH(MW), .DEPTH(RD_OUTSTANDING)) rd_meta (
        .clk, .rst, .s_data(rq_din), .s_valid(m_axi_arvalid && m_axi_arready), .s_ready(rq_room),
        .m_data(rq_dout), .m_valid(rq_valid), .m_ready(rq_pop));

    // AR: the request passes straight through while the meta FIFO has room
    assign rd_nout_req = 7'((17'(s_rd_req_len) + 17'd63) >> 6);
    assign m_axi_araddr = {s_rd_req_addr[63:6], 6'b0};
    assign m_axi_arlen = beats(s_rd_req_addr[5:0], s_rd_req_len) - 8'd1;
    assign m_axi_arsize = 3'd6;
    assign m_axi_arburst = 2'b01;
    assign m_axi_arvalid = s_rd_req_valid && rq_room;
    assign s_rd_req_ready = m_axi_arready && rq_room;
    assign rq_din = {s_rd_req_addr[5:0], rd_nout_req, beats(s_rd_req_addr[5:0], s_rd_req_len), s_rd_req_tag};

    logic [5:0] r_off;
    logic [6:0] r_nout;
    logic [7:0] r_nin, r_tag;
    assign {r_off, r_nout, r_nin, r_tag} = rq_dout;

    logic [511:0] prev;
    logic prev_valid;
    logic [6:0] out_cnt;
    logic tail_only;      // the last beat out comes from `prev` alone: no beat in
    logic r_take, out_fire;
    logic r_err;          // a beat of this burst came back with an error

    assign tail_only = r_off != 6'd0 && prev_valid && 8'(out_cnt) + 8'd1 >= r_nin;
    // One funnel shifter: the beat out is the 64 bytes of {beat in, prev} from byte r_off, and an
    // aligned burst takes them from byte 64, the beat in itself
    assign m_rd_data = 512'({tail_only ? 512'b0 : m_axi_rdata, prev} >> {r_off == 6'd0, r_off, 3'b0});
    always_comb begin
        m_rd_tag = r_tag;
        m_rd_last = out_cnt + 7'd1 == r_nout;
        if (r_off == 6'd0) begin
            m_rd_valid = rq_valid && m_axi_rvalid;
            m_axi_rready = rq_valid && m_rd_ready;
        end else if (!prev_valid) begin
            m_rd_valid = 1'b0;
            m_axi_rready = rq_valid;
        end else if (tail_only) begin
            m_rd_valid = 1'b1;
            m_axi_rready = 1'b0;
        end else begin
            m_rd_valid = m_axi_rvalid;
            m_axi_rready = m_rd_ready;
        end
    end
    assign r_take = m_axi_rvalid && m_axi_rready;
    assign out_fire = m_rd_valid && m_rd_ready;
    assign rq_pop = out_fire && m_rd_last;
    assign m_rd_err = r_err || (!tail_only && m_axi_rvalid && m_axi_rresp[1]);

    always_ff @(posedge clk) begin
        if (rst) begin
            prev_valid <= 1'b0;
            out_cnt <= '0;
            r_err <= 1'b0;
        end else begin
            if (r_take)
                prev <= m_axi_rdata;
            if (rq_pop) begin
                prev_valid <= 1'b0;
                out_cnt <= '0;
                r_err <= 1'b0;
            end else begin
                if (r_take && m_axi_rresp[1])
                    r_err <= 1'b1;
                if (r_take)
                    prev_valid <= 1'b1;
                if (out_fire)
                    out_cnt <= out_cnt + 7'd1;
            end
        end
    end

    // ---------------------------------------------------------------- writes
    // Each packet's first beat, as it is offered, queues its AW; the W beats go on once it is
    // queued, shifted to the address's offset in the beat. AWVALID never waits for WREADY (AXI
    // A3.3.1: the XDMA bridge may hold WREADY until it has the AW)
    logic [5:0] off_r, w_off;
    logic [15:0] len_r, w_len;
    logic [7:0] w_cnt, w_nbeats;
    logic [511:0] w_prev;
    logic w_first, w_tail, aw_room, w_fire, aw_done, aw_push, aw_have;

    // addr and len hold on every beat of a packet, but the tail beat comes after its last one
    assign w_off = w_first ? s_wr_addr[5:0] : off_r;
    assign w_len = w_first ? s_wr_len : len_r;
    assign w_nbeats = beats(w_off, w_len);

    rnic_fifo #(.WIDTH(64 + 8), .DEPTH(4)) aw_q (
        .clk, .rst, .s_data({s_wr_addr[63:6], 6'b0, w_nbeats - 8'd1}), .s_valid(aw_push),
        .s_ready(aw_room), .m_data({m_axi_awaddr, m_axi_awlen}), .m_valid(m_axi_awvalid),
        .m_ready(m_axi_awready));
    assign m_axi_awsize = 3'd6;
    assign m_axi_awburst = 2'b01;

    // byte strobes of W beat k: bytes [off, off + len) of the burst's window
    function automatic logic [63:0] strobe(input logic [5:0] off, input logic [15:0] len,
                                           input logic [7:0] k, input logic [7:0] n);
        logic [5:0] end_in_last;
        end_in_last = 6'(17'(off) + 17'(len) - 17'd1);
        strobe = {64{1'b1}};
        if (k == 8'd0)
            strobe = strobe << off;
        if (k + 8'd1 == n)
            strobe = strobe & ({64{1'b1}} >> (6'd63 - end_in_last));
    endfunction

    assign m_axi_wlast = w_cnt + 8'd1 == w_nbeats;
    assign m_axi_wstrb = strobe(w_off, w_len, w_cnt, w_nbeats);
    assign aw_push = w_first && s_wr_valid && !aw_done && aw_room;
    assign aw_have = !w_first || aw_done || aw_push;
    assign m_axi_wvalid = w_tail || (s_wr_valid && aw_have);
    assign s_wr_ready = !w_tail && m_axi_wready && aw_have;
    // one funnel shifter, as for reads: the 64 bytes of {beat in, prev} from byte 64 - w_off
    assign m_axi_wdata = 512'({w_tail ? 512'b0 : s_wr_data, w_first ? 512'b0 : w_prev} >>
                              {7'd64 - 7'(w_off), 3'b0});
    assign w_fire = m_axi_wvalid && m_axi_wready;
    // w_tail: the input's last beat is in, one W beat is left (the bytes that spilled over)
    assign m_axi_bready = 1'b1;

    always_ff @(posedge clk) begin
        if (rst)
            aw_done <= 1'b0;
        else if (w_fire && m_axi_wlast)
            aw_done <= 1'b0;
        else if (aw_push)
            aw_done <= 1'b1;
        if (rst) begin
            w_first <= 1'b1;
            w_tail <= 1'b0;
            w_cnt <= '0;
        end else if (w_fire) begin
            w_tail <= !w_tail && s_wr_last && !m_axi_wlast;
            if (!w_tail)
                w_prev <= s_wr_data;
            if (w_first) begin
                off_r <= s_wr_addr[5:0];
                len_r <= s_wr_len;
            end
            w_first <= m_axi_wlast;
            w_cnt <= m_axi_wlast ? 8'd0 : w_cnt + 8'd1;
        end
    end

    // ---------------------------------------------------------------- errors
    always_ff @(posedge clk) begin
        if (rst)
            err_count <= '0;
        else
            err_count <= err_count + 32'(m_axi_bvalid && m_axi_bresp[1]) +
                         32'(r_take && m_axi_rlast && m_axi_rresp[1]);
    end
endmodule

`default_nettype wire
