// rnic_top's MSI-X requests (one vector per clock) as the XDMA/QDMA bridge's user interrupts:
// usr_irq_req[v] held high until usr_irq_ack[v]. Requests for a vector already requested merge
// (one message makes the context read its whole event queue), but one that comes while the
// message may already be on its way (between request and ack) asks again after the ack: its
// event queue entry may have been written after the message was sent.
`default_nettype none

module rnic_irq_usr #(
    parameter int N = 16            // vectors (one per context)
) (
    input  wire          clk,
    input  wire          rst,
    input  wire          irq_valid,
    output logic         irq_ready,
    input  wire  [7:0]   irq_vector,
    output logic [N-1:0] usr_irq_req,
    input  wire  [N-1:0] usr_irq_ack
);
    logic [N-1:0] req_new, again;

    assign irq_ready = 1'b1;
    assign req_new = irq_valid && 32'(irq_vector) < N ? N'(1) << irq_vector : '0;

    always_ff @(posedge clk) begin
        if (rst) begin
            usr_irq_req <= '0;
            again <= '0;
        end else begin
            usr_irq_req <= (usr_irq_req & ~usr_irq_ack) | (again & usr_irq_ack) | req_new;
            again <= (again & ~usr_irq_ack) | (req_new & usr_irq_req & ~usr_irq_ack);
        end
    end
endmodule

`default_nettype wire
