// Round-robin arbiter of N valid/ready streams that never interleaves two packets: a grant is
// held from the first beat to the beat with `last`. Combinational path from the chosen input to
// the output (no added latency), one beat per clock. Input i is s_data[i*WIDTH +: WIDTH] with bit i
// of s_valid, s_last and s_ready (flat vectors: Yosys 0.23 reads neither unpacked array ports nor
// multi-dimensional packed ones).
`default_nettype none

module rnic_pkt_arb #(
    parameter int N = 3,      // inputs
    parameter int WIDTH = 8   // bits per beat, excluding last
) (
    input  wire               clk,
    input  wire               rst,
    input  wire [N*WIDTH-1:0] s_data,
    input  wire [N-1:0]       s_valid,
    input  wire [N-1:0]       s_last,
    output logic [N-1:0]      s_ready,
    output logic [WIDTH-1:0]  m_data,
    output logic              m_valid,
    output logic              m_last,
    input  wire               m_ready
);
    localparam int SW = $clog2(N);
    localparam int IW = SW + 1;   // holds last_sel_reg + N

    logic [SW-1:0] sel, last_sel_reg, grant_reg;
    logic [IW-1:0] idx;
    logic locked_reg, found;

    // next requester after the last one served: input last_sel_reg + i mod N, the mod taken by a
    // compare (a 32-bit `%` would be synthesized as a divider)
    always_comb begin
        sel = grant_reg;
        found = 1'b0;
        idx = '0;
        if (!locked_reg) begin
            for (int i = 1; i <= N; i++) begin
                idx = {1'b0, last_sel_reg} + IW'(i);
                if (idx >= IW'(N))
                    idx = idx - IW'(N);
                if (!found && s_valid[idx[SW-1:0]]) begin
                    sel = idx[SW-1:0];
                    found = 1'b1;
                end
            end
        end
    end

    // a mux of constant part-selects: Yosys makes s_data[sel * WIDTH +: WIDTH] a wide shifter
    always_comb begin
        m_data = s_data[0 +: WIDTH];
        for (int i = 1; i < N; i++)
            if (sel == SW'(i))
                m_data = s_data[i * WIDTH +: WIDTH];
    end
    assign m_valid = (locked_reg || found) && s_valid[sel];
    assign m_last = s_last[sel];
    always_comb
        for (int i = 0; i < N; i++)
            s_ready[i] = m_ready && (locked_reg || found) && sel == SW'(i);

    always_ff @(posedge clk) begin
        if (rst) begin
            locked_reg <= 1'b0;
            last_sel_reg <= SW'(N - 1);
            grant_reg <= '0;
        end else if (m_valid && m_ready) begin
            locked_reg <= !m_last;
            grant_reg <= sel;
            if (m_last)
                last_sel_reg <= sel;
        end
    end
endmodule

`default_nettype wire
