// Synchronous FIFO with valid/ready on both sides (first-word fall-through).
`default_nettype none

module rnic_fifo #(
    parameter int WIDTH = 32,  // bits per entry
    parameter int DEPTH = 16   // entries, a power of two
) (
    input  wire              clk,
    input  wire              rst,
    input  wire [WIDTH-1:0]  s_data,
    input  wire              s_valid,
    output logic             s_ready,
    output logic [WIDTH-1:0] m_data,
    output logic             m_valid,
    input  wire              m_ready
);
    localparam int AW = $clog2(DEPTH);

    logic [WIDTH-1:0] mem [DEPTH];
    logic [AW:0] wr_ptr_reg, rd_ptr_reg;

    assign s_ready = (wr_ptr_reg - rd_ptr_reg) != DEPTH[AW:0];
    assign m_valid = wr_ptr_reg != rd_ptr_reg;
    assign m_data = mem[rd_ptr_reg[AW-1:0]];

    always_ff @(posedge clk) begin
        if (rst) begin
            wr_ptr_reg <= '0;
            rd_ptr_reg <= '0;
        end else begin
            if (s_valid && s_ready) begin
                mem[wr_ptr_reg[AW-1:0]] <= s_data;
                wr_ptr_reg <= wr_ptr_reg + 1'b1;
            end
            if (m_valid && m_ready)
                rd_ptr_reg <= rd_ptr_reg + 1'b1;
        end
    end
endmodule

`default_nettype wire
