// Round-robin arbiter of N valid/ready streams that never interleaves two packets: a grant is
// held from the first beat to the beat with `last`. Combinational path from the chosen input to
// the output (no added latency), one beat per clock.
`default_nettype none

module rnic_pkt_arb #(
    parameter int N = 3,      // inputs
    parameter int WIDTH = 8   // bits per beat, excluding last
) (
    input  wire              clk,
    input  wire              rst,
    input  wire [WIDTH-1:0]  s_data [N],
    input  wire              s_valid [N],
    input  wire              s_last [N],
    output logic             s_ready [N],
    output logic [WIDTH-1:0] m_data,
    output logic             m_valid,
    output logic             m_last,
    input  wire              m_ready
);
    localparam int SW = $clog2(N);

    logic [SW-1:0] sel, last_sel_reg, grant_reg;
    logic locked_reg, found;

    // next requester after the last one served
    always_comb begin
        sel = grant_reg;
        found = 1'b0;
        if (!locked_reg) begin
            for (int i = 1; i <= N; i++) begin
                if (!found && s_valid[(int'(last_sel_reg) + i) % N]) begin
                    sel = SW'((int'(last_sel_reg) + i) % N);
                    found = 1'b1;
                end
            end
        end
    end

    assign m_data = s_data[sel];
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
