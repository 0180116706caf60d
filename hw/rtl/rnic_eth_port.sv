// The NIC's side of its Ethernet port, between the transmit arbiter / RX kernel and the MAC:
// - Transmit: a frame shorter than Ethernet's minimum (60 bytes before the FCS: ARP) is padded
//   with zeros to it.
// - Internal loopback: a frame addressed to the NIC's own MAC (a QP talking to a QP of the same
//   NIC: the firmware resolves the NIC's own addresses to its own MAC) never reaches the wire. It
//   is stored whole in the loopback FIFO and then handed to the RX kernel like a received frame,
//   one beat per clock, so it gets every check and counter a received frame gets.
// - Receive: the MAC cannot be stalled, so received beats pass through a cut-through FIFO: while
//   a looped frame goes to the RX kernel, what the MAC delivers waits there. A looped frame goes
//   in only between received frames and when none is waiting, so at most one looped frame (66
//   beats for a 4 KiB payload) is in the way of received ones: RX_DEPTH beats cannot fill, the
//   datapath (64 bytes per clock) being faster than the line.
`default_nettype none

module rnic_eth_port #(
    parameter int LB_DEPTH = 128,  // loopback FIFO beats: whole frames, the largest is 66 beats
    parameter int RX_DEPTH = 128   // receive FIFO beats
) (
    input  wire          clk,
    input  wire          rst,
    input  wire  [47:0]  mac,            // the NIC's MAC, byte 0 in bits 47:40

    // frames to send (from the transmit arbiter)
    input  wire  [511:0] s_tx_data,
    input  wire  [63:0]  s_tx_keep,
    input  wire          s_tx_valid,
    input  wire          s_tx_last,
    output logic         s_tx_ready,

    // the MAC
    output logic [511:0] m_axis_tx_tdata,
    output logic [63:0]  m_axis_tx_tkeep,
    output logic         m_axis_tx_tvalid,
    input  wire          m_axis_tx_tready,
    output logic         m_axis_tx_tlast,
    input  wire  [511:0] s_axis_rx_tdata,
    input  wire  [63:0]  s_axis_rx_tkeep,
    input  wire          s_axis_rx_tvalid,
    input  wire          s_axis_rx_tlast,

    // frames received (to the RX kernel: no ready)
    output logic [511:0] rx_data,
    output logic [63:0]  rx_keep,
    output logic         rx_valid,
    output logic         rx_last,

    output logic [31:0]  stat_loopback   // frames looped back
);
    localparam int W = 512 + 64 + 1;     // a beat in the FIFOs: {last, keep, data}

    // ---- transmit: padding and the loopback decision, taken at a frame's first beat
    logic first_reg, lb_reg, own, is_lb, pad, lb_ready;
    logic [511:0] tx_data;
    logic [63:0] tx_keep;

    always_comb begin
        own = 1'b1;
        for (int i = 0; i < 6; i++)
            if (s_tx_data[8 * i +: 8] != mac[47 - 8 * i -: 8])
                own = 1'b0;
    end
    assign is_lb = first_reg ? own : lb_reg;
    // only a frame of one beat can be short; its valid bytes are contiguous from byte 0
    assign pad = first_reg && s_tx_last && !s_tx_keep[59];
    // the padding is zeros (the lane loop only under pad: a simulator would otherwise run it
    // every clock)
    always_comb begin
        tx_data = s_tx_data;
        if (pad)
            for (int i = 0; i < 64; i++)
                if (!s_tx_keep[i])
                    tx_data[8 * i +: 8] = 8'h00;
    end
    assign tx_keep = pad ? s_tx_keep | 64'h0fff_ffff_ffff_ffff : s_tx_keep;

    assign m_axis_tx_tdata = tx_data;
    assign m_axis_tx_tkeep = tx_keep;
    assign m_axis_tx_tlast = s_tx_last;
    assign m_axis_tx_tvalid = s_tx_valid && !is_lb;
    assign s_tx_ready = is_lb ? lb_ready : m_axis_tx_tready;

    always_ff @(posedge clk) begin
        if (rst) begin
            first_reg <= 1'b1;
            lb_reg <= 1'b0;
        end else if (s_tx_valid && s_tx_ready) begin
            first_reg <= s_tx_last;
            lb_reg <= is_lb;
        end
    end

    // ---- the loopback FIFO; a frame goes on only once it is whole in it
    logic [W-1:0] lb_out;
    logic lb_valid, lb_take;
    logic [7:0] lb_in_frames, lb_out_frames;  // complete frames written / handed on (mod 256)

    rnic_bram_fifo #(.WIDTH(W), .DEPTH(LB_DEPTH)) lb_fifo (
        .clk, .rst, .s_data({s_tx_last, tx_keep, tx_data}), .s_valid(s_tx_valid && is_lb),
        .s_ready(lb_ready), .m_data(lb_out), .m_valid(lb_valid), .m_ready(lb_take));

    // ---- the receive FIFO (cut-through)
    logic [W-1:0] ext_out;
    logic ext_valid, ext_take, ext_room;

    rnic_bram_fifo #(.WIDTH(W), .DEPTH(RX_DEPTH)) rx_fifo (
        .clk, .rst, .s_data({s_axis_rx_tlast, s_axis_rx_tkeep, s_axis_rx_tdata}),
        .s_valid(s_axis_rx_tvalid), .s_ready(ext_room), .m_data(ext_out), .m_valid(ext_valid),
        .m_ready(ext_take));

    // ---- to the RX kernel, a whole frame at a time: received frames first
    typedef enum logic [1:0] { IDLE, EXT, LB } src_t;
    src_t src_reg;
    logic sel_ext, sel_lb;

    assign sel_ext = src_reg == EXT || (src_reg == IDLE && ext_valid);
    assign sel_lb = src_reg == LB || (src_reg == IDLE && !ext_valid && lb_in_frames != lb_out_frames);
    assign ext_take = sel_ext;
    assign lb_take = sel_lb;
    assign rx_valid = sel_ext ? ext_valid : sel_lb && lb_valid;
    assign {rx_last, rx_keep, rx_data} = sel_ext ? ext_out : lb_out;

    always_ff @(posedge clk) begin
        if (rst) begin
            src_reg <= IDLE;
            lb_in_frames <= '0;
            lb_out_frames <= '0;
            stat_loopback <= '0;
        end else begin
            if (s_tx_valid && is_lb && lb_ready && s_tx_last) begin
                lb_in_frames <= lb_in_frames + 1'b1;
                stat_loopback <= stat_loopback + 1'b1;
            end
            if (sel_ext && ext_valid)
                src_reg <= ext_out[W-1] ? IDLE : EXT;
            else if (sel_lb && lb_valid) begin
                src_reg <= lb_out[W-1] ? IDLE : LB;
                if (lb_out[W-1])
                    lb_out_frames <= lb_out_frames + 1'b1;
            end
        end
    end

    logic unused;
    assign unused = &{1'b0, ext_room};
endmodule

`default_nettype wire
