// Synchronous FIFO in a block RAM (registered read) with valid/ready on both sides: an output
// register is refilled from the RAM in the clock its entry is taken, so a full FIFO streams one
// entry per clock. An entry written at one edge can leave two edges later.
`default_nettype none

module rnic_bram_fifo #(
    parameter int WIDTH = 32,  // bits per entry
    parameter int DEPTH = 128  // entries in the RAM, a power of two (the output register holds one more)
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

    (* ram_style = "block" *) logic [WIDTH-1:0] mem [DEPTH];
    logic [AW:0] wr_ptr_reg, rd_ptr_reg;
    logic rd_en;

    assign s_ready = (wr_ptr_reg - rd_ptr_reg) != DEPTH[AW:0];
    assign rd_en = wr_ptr_reg != rd_ptr_reg && (!m_valid || m_ready);

    always_ff @(posedge clk) begin
        if (s_valid && s_ready)
            mem[wr_ptr_reg[AW-1:0]] <= s_data;
        if (rd_en)
            m_data <= mem[rd_ptr_reg[AW-1:0]];
    end

    always_ff @(posedge clk) begin
        if (rst) begin
            wr_ptr_reg <= '0;
            rd_ptr_reg <= '0;
            m_valid <= 1'b0;
        end else begin
            if (s_valid && s_ready)
                wr_ptr_reg <= wr_ptr_reg + 1'b1;
            if (rd_en)
                rd_ptr_reg <= rd_ptr_reg + 1'b1;
            if (rd_en)
                m_valid <= 1'b1;
            else if (m_ready)
                m_valid <= 1'b0;
        end
    end
endmodule

`default_nettype wire
