// Whole Ethernet frames across two clocks (the NIC's 250 MHz and the CMAC's 322.27 MHz user clock):
// an asynchronous FIFO in a dual-clock block RAM. What crosses to the reading side is the count of
// whole frames written (Gray-coded: it steps by one), not the write pointer, which leaps back when a
// frame is dropped. The reader therefore starts a frame only once all of it is stored, and never
// waits inside one: a LUT RAM beside the block RAM tells it, as it reads a beat, whether the beat
// ends a frame. The CMAC's transmit side needs that: once tx_axis_tvalid is asserted for a packet
// it must stay asserted until tlast, else the packet underflows and is sent corrupted (PG203).
//   DROP = 0 (transmit): the writer waits while the FIFO is full; a frame must fit (DEPTH beats).
//   DROP = 1 (receive): the CMAC's receive side cannot wait (rx_axis has no tready). A frame that
//     finds the FIFO full, or whose last beat is flagged bad (rx_axis_tuser: FCS or length error),
//     is discarded whole: the write pointer returns to the frame's start. Each kind is counted,
//     and the counts cross to the reading side Gray-coded.
// Either side's reset resets both (each is synchronised into the other's clock).
// The read pointer crosses back Gray-coded (it steps by one). Latency: about 4 reading-side clocks
// after a frame's last beat is written.
`default_nettype none

module rnic_frame_cdc #(
    parameter int DEPTH = 128,  // beats, a power of two; the largest frame (4 KiB MTU) is 66
    parameter logic DROP = 1'b0
) (
    input  wire          s_clk,
    input  wire          s_rst,
    input  wire  [511:0] s_data,
    input  wire  [63:0]  s_keep,
    input  wire          s_valid,
    input  wire          s_last,
    input  wire          s_bad,      // with the last beat: discard the frame (DROP = 1)
    output logic         s_ready,    // DROP = 1: always 1

    input  wire          m_clk,
    input  wire          m_rst,
    output logic [511:0] m_data,
    output logic [63:0]  m_keep,
    output logic         m_valid,
    output logic         m_last,
    input  wire          m_ready,
    output logic [31:0]  m_drops_full,  // frames discarded for want of room (m_clk domain)
    output logic [31:0]  m_drops_bad    // frames discarded as flagged bad (m_clk domain)
);
    localparam int AW = $clog2(DEPTH);
    localparam int W = 512 + 64 + 1;

    // Yosys 0.23 reads no `return`: each function assigns its name
    function automatic logic [AW:0] gray(input logic [AW:0] b);
        gray = b ^ (b >> 1);
    endfunction
    function automatic logic [AW:0] ungray(input logic [AW:0] g);
        for (int i = 0; i <= AW; i++)
            ungray[i] = ^(g >> i);
    endfunction
    function automatic logic [31:0] gray32(input logic [31:0] b);
        gray32 = b ^ (b >> 1);
    endfunction

    // ---- resets: either side's reset holds both
    (* ASYNC_REG = "TRUE" *) logic [1:0] s_rst_from_m, m_rst_from_s;
    logic s_reset, m_reset;
    always_ff @(posedge s_clk)
        s_rst_from_m <= {s_rst_from_m[0], m_rst};
    always_ff @(posedge m_clk)
        m_rst_from_s <= {m_rst_from_s[0], s_rst};
    assign s_reset = s_rst || s_rst_from_m[1];
    assign m_reset = m_rst || m_rst_from_s[1];

    (* ram_style = "block" *) logic [W-1:0] mem [DEPTH];

    // ---- writing side
    logic [AW:0] wr_ptr, wr_commit, rd_ptr_s;
    logic [AW:0] frames_gray;                           // registered: crosses to m_clk
    logic [AW:0] frames;                                // whole frames written (mod 2^(AW+1))
    (* ASYNC_REG = "TRUE" *) logic [AW:0] rd_gray_s1, rd_gray_s2;
    logic full, dropping, wr_en;
    logic [31:0] drops_full, drops_bad;
    logic [31:0] drops_full_gray, drops_bad_gray;      // registered: cross to m_clk

    always_ff @(posedge s_clk) begin
        rd_gray_s1 <= rd_gray;
        rd_gray_s2 <= rd_gray_s1;
    end
    assign rd_ptr_s = ungray(rd_gray_s2);
    assign full = (wr_ptr - rd_ptr_s) == DEPTH[AW:0];
    assign s_ready = DROP ? 1'b1 : !full;
    assign wr_en = s_valid && !full && !dropping;

    (* ram_style = "distributed" *) logic last_mem [DEPTH];

    always_ff @(posedge s_clk)
        if (wr_en) begin
            mem[wr_ptr[AW-1:0]] <= {s_last, s_keep, s_data};
            last_mem[wr_ptr[AW-1:0]] <= s_last;
        end

    always_ff @(posedge s_clk) begin
        if (s_reset) begin
            wr_ptr <= '0;
            wr_commit <= '0;
            frames <= '0;
            frames_gray <= '0;
            dropping <= 1'b0;
            drops_full <= '0;
            drops_bad <= '0;
            drops_full_gray <= '0;
            drops_bad_gray <= '0;
        end else begin
            if (s_valid && s_last) begin
                if (DROP && (dropping || full || s_bad)) begin
                    wr_ptr <= wr_commit;        // the frame goes, whole
                    if (dropping || full)
                        drops_full <= drops_full + 1'b1;
                    else
                        drops_bad <= drops_bad + 1'b1;
                end else if (wr_en) begin
                    wr_ptr <= wr_ptr + 1'b1;
                    wr_commit <= wr_ptr + 1'b1;
                    frames <= frames + 1'b1;
                    frames_gray <= gray(frames + 1'b1);
                end
                dropping <= 1'b0;
            end else if (wr_en) begin
                wr_ptr <= wr_ptr + 1'b1;
            end else if (DROP && s_valid) begin
                dropping <= 1'b1;               // full in mid-frame: the rest goes too
            end
            drops_full_gray <= gray32(drops_full);
            drops_bad_gray <= gray32(drops_bad);
        end
    end

    // ---- reading side: an output register refilled from the RAM (registered read)
    logic [AW:0] rd_ptr, rd_gray, frames_m, frames_rd;
    (* ASYNC_REG = "TRUE" *) logic [AW:0] frames_m1, frames_m2;
    (* ASYNC_REG = "TRUE" *) logic [31:0] full_m1, full_m2, bad_m1, bad_m2;
    logic rd_en;

    always_ff @(posedge m_clk) begin
        frames_m1 <= frames_gray;
        frames_m2 <= frames_m1;
        full_m1 <= drops_full_gray;
        full_m2 <= full_m1;
        bad_m1 <= drops_bad_gray;
        bad_m2 <= bad_m1;
    end
    assign frames_m = ungray(frames_m2);
    // frames_rd: frames whose last beat has been read from the RAM
    assign rd_en = frames_m != frames_rd && (!m_valid || m_ready);

    always_ff @(posedge m_clk)
        if (rd_en)
            {m_last, m_keep, m_data} <= mem[rd_ptr[AW-1:0]];

    always_ff @(posedge m_clk) begin
        if (m_reset) begin
            rd_ptr <= '0;
            rd_gray <= '0;
            frames_rd <= '0;
            m_valid <= 1'b0;
            m_drops_full <= '0;
            m_drops_bad <= '0;
        end else begin
            if (rd_en) begin
                rd_ptr <= rd_ptr + 1'b1;
                rd_gray <= gray(rd_ptr + 1'b1);
                if (last_mem[rd_ptr[AW-1:0]])
                    frames_rd <= frames_rd + 1'b1;
                m_valid <= 1'b1;
            end else if (m_ready) begin
                m_valid <= 1'b0;
            end
            // Gray to binary a bit at a time would be a 32-deep chain: the counts are for
            // software, one register late is fine
            for (int i = 0; i < 32; i++) begin
                m_drops_full[i] <= ^(full_m2 >> i);
                m_drops_bad[i] <= ^(bad_m2 >> i);
            end
        end
    end
endmodule

`default_nettype wire
