// Soft-core subsystem: PicoRV32 (RV32IM, from the PyPI package pythondata-cpu-picorv32) with
// its RAM (loaded from FW_HEX), the FW register block, the firmware DMA engine with its 16 KiB
// buffer, the frame buffers for ARP and the configuration port into the datapath tables.
// Address map and registers: spec constants "fwmap", regblock FW. A RAM access takes one clock
// (its word is read a clock ahead, at PicoRV32's look-ahead address); every other takes two.
// The soft core is held to what its firmware needs, whatever code it runs: its code is read-only
// and the only code (FW.CODE_END), its stack has a guard band (FW.STACK_GUARD), and each of its
// DMAs stays in the window of the context it names (FW.DMA_CTX). A refused access halts it.
// Package names are qualified: Yosys 0.23 reads no `import` (make synth).
`default_nettype none

module rnic_soc #(
    parameter FW_HEX = ""  // firmware image, one 32-bit word per line
) (
    input  wire          clk,
    input  wire          rst,
    input  wire  [63:0]  cycle,
    input  wire  [47:0]  strap_mac,
    input  wire  [31:0]  strap_ipv4,
    input  wire  [5:0]   strap_dma_window,
    input  wire  [127:0] host_seed,
    input  wire          host_seed_valid,
    input  wire  [13:0]  host_eth_mtu,
    input  wire  [15:0]  host_ctx_priv,
    output logic [31:0]  fw_fault,

    output logic [31:0]  fw_version,
    output logic [31:0]  fw_status,      // as the firmware wrote it, FAILED once the core is halted
    output logic         console_valid,
    output logic [7:0]   console_char,

    // context registers (in rnic_bar0) and context resets
    output logic [3:0]   ctx_sel,
    output logic [3:0]   ctx_word,
    input  wire  [31:0]  ctx_rdata,
    output logic         ci_we,
    output logic [3:0]   ci_ctx,
    output logic [15:0]  ci_val,
    input  wire          cmdq_db_valid,
    input  wire  [3:0]   cmdq_db_ctx,
    input  wire          ctx_reset_valid,
    input  wire  [7:0]   ctx_reset_ctx,
    output logic [31:0]  ctx_reset_pending,
    // the context memory's chunk list (ADMIN.ICM_*) and the firmware's answer
    input  wire  [63:0]  icm_list_addr,
    input  wire  [31:0]  icm_list_n,
    input  wire          icm_list_valid,
    output logic [7:0]   icm_status,

    // configuration writes into the kernels' tables, and the fence tokens they have passed
    input  wire  [23:0]  fence,             // {CQ, RX, TX}
    output logic         cfg_valid,
    output logic [31:0]  cfg_addr,
    output logic [31:0]  cfg_data,

    // MSI-X requests
    output logic         irq_valid,
    output logic [7:0]   irq_vector,
    input  wire          irq_ready,

    // firmware DMA
    output logic         rdreq_valid,
    input  wire          rdreq_ready,
    output logic [63:0]  rdreq_addr,
    output logic [15:0]  rdreq_len,
    input  wire          rd_valid,
    output logic         rd_ready,
    input  wire  [511:0] rd_data,
    input  wire          rd_last,
    input  wire          rd_err,         // the host refused the read (the data are not memory)
    output logic         wr_valid,
    input  wire          wr_ready,
    output logic [63:0]  wr_addr,
    output logic [15:0]  wr_len,
    output logic [511:0] wr_data,
    output logic         wr_last,

    // frames to and from the Ethernet port
    output logic [511:0] tx_data,
    output logic [63:0]  tx_keep,
    output logic         tx_valid,
    output logic         tx_last,
    input  wire          tx_ready,
    input  wire  [511:0] rx_data,
    input  wire  [63:0]  rx_keep,
    input  wire          rx_valid,
    input  wire          rx_last,
    output logic         rx_ready
);
    localparam int RAM_WORDS = 32'(rnic_spec_pkg::RNIC_FW_RAM_SIZE / 4);
    localparam int RAM_AW = $clog2(RAM_WORDS);

    // ---- CPU
    logic        mem_valid, mem_instr, mem_ready;
    logic [31:0] mem_addr, mem_wdata, mem_rdata;
    /* verilator lint_off UNUSEDSIGNAL */
    logic [31:0] mem_la_addr;   // the next access's address, a clock ahead: the RAM's word of it
    /* verilator lint_on UNUSEDSIGNAL */
    logic [3:0]  mem_wstrb;
    logic        trap;

    // The core's clock stops while it is parked on FW.WAIT: a simulator then skips PicoRV32. On
    // the card the core runs on clk: parked, it changes nothing, and a gate would spend a global
    // clock buffer.
    logic cpu_clk, wait_reg;
`ifdef SYNTHESIS
    assign cpu_clk = clk;
`else
    logic cpu_en;   // taken while clk is low, as a clock-gating cell does: no glitch
    always_ff @(negedge clk)
        cpu_en <= !wait_reg;
    assign cpu_clk = clk & cpu_en;
`endif

    picorv32 #(
        .ENABLE_COUNTERS(1),
        .ENABLE_MUL(1),
        .ENABLE_DIV(1),
        .BARREL_SHIFTER(1),
        .COMPRESSED_ISA(0),
        .PROGADDR_RESET(32'h0),
        .STACKADDR(32'(rnic_spec_pkg::RNIC_FW_RAM_SIZE))
    ) cpu (
        .clk(cpu_clk), .resetn(!rst), .trap,
        .mem_valid, .mem_instr, .mem_ready, .mem_addr, .mem_wdata, .mem_wstrb, .mem_rdata,
        .mem_la_addr,
        .pcpi_wr(1'b0), .pcpi_rd(32'b0), .pcpi_wait(1'b0), .pcpi_ready(1'b0), .irq(32'b0)
    );

    // ---- memories
    // block RAMs said explicitly: Yosys 0.23 would pick UltraScale LUT RAM, which it cannot map
    // (read by simulators, a Verilator comment: rnic-sim's stack high-water mark, the words the
    // soft-core testbench's attacks must leave as they were)
    (* ram_style = "block" *) logic [31:0]  ram [RAM_WORDS] /*verilator public_flat_rd*/;
    logic [511:0] ptx [32];     // frame to send, 2 KiB
    localparam int PRX_SLOTS = 4;  // received frames held for the firmware, 2 KiB each: a burst
                                   // (ARP and neighbour discovery at once) is not dropped while it
                                   // serves a command
    logic [511:0] prx [PRX_SLOTS * 32];
    initial if (FW_HEX != "") $readmemh(FW_HEX, ram);

    // ---- FW registers
    logic [31:0] cycles_hi_reg, cfg_addr_reg, ctx_reset_reg, cmdq_pending_reg;
    logic [63:0] dma_host_reg;
    logic [7:0]  dma_local_reg;   // 64-byte line of the buffer
    logic [15:0] dma_len_reg;
    logic        dma_busy_reg, dma_write_reg, dma_err_reg, dma_denied_reg, icm_pending_reg;
    logic [7:0]  dma_ctx_reg;     // whose window the next DMA must stay in (FW.DMA_CTX)
    logic [7:0]  dma_beat_reg;
    logic [10:0] ptx_len_reg, prx_fill_len;
    logic [10:0] prx_len [PRX_SLOTS];
    logic [5:0]  ptx_beat_reg, prx_beat_reg;
    logic        ptx_busy_reg;
    logic [1:0]  prx_wr, prx_rd;  // slot being filled, slot the firmware reads
    logic [2:0]  prx_cnt;         // frames held

    assign ctx_reset_pending = ctx_reset_reg;

    // word lane helpers for the 512-bit frame buffers (the functions assign their names: Yosys 0.23
    // has no `return`)
    function automatic logic [511:0] merge(input logic [511:0] line, input logic [3:0] word,
                                           input logic [31:0] data, input logic [3:0] strb);
        merge = line;
        for (int b = 0; b < 4; b++)
            if (strb[b])
                merge[{word, 5'b0} + 9'(b * 8) +: 8] = data[b * 8 +: 8];
    endfunction

    logic [31:0] a;
    logic [3:0]  wsel;
    logic [7:0]  reg_off;
    assign a = mem_addr;
    assign wsel = a[5:2];
    assign reg_off = a[7:0];
    assign ctx_sel = a[11:8];
    assign ctx_word = a[5:2];

    logic [31:0] reg_rdata;
    always_comb begin
        case (reg_off)
            8'(rnic_spec_pkg::RNIC_FW_CYCLES_LO): reg_rdata = cycle[31:0];
            8'(rnic_spec_pkg::RNIC_FW_CYCLES_HI): reg_rdata = cycles_hi_reg;
            8'(rnic_spec_pkg::RNIC_FW_MAC_LO): reg_rdata = strap_mac[31:0];
            8'(rnic_spec_pkg::RNIC_FW_MAC_HI): reg_rdata = {16'b0, strap_mac[47:32]};
            8'(rnic_spec_pkg::RNIC_FW_IPV4): reg_rdata = strap_ipv4;
            8'(rnic_spec_pkg::RNIC_FW_SEED_0): reg_rdata = host_seed[31:0];
            8'(rnic_spec_pkg::RNIC_FW_SEED_1): reg_rdata = host_seed[63:32];
            8'(rnic_spec_pkg::RNIC_FW_SEED_2): reg_rdata = host_seed[95:64];
            8'(rnic_spec_pkg::RNIC_FW_SEED_3): reg_rdata = host_seed[127:96];
            8'(rnic_spec_pkg::RNIC_FW_HOST_CFG): reg_rdata = {host_ctx_priv, host_seed_valid, 1'b0, host_eth_mtu};
            8'(rnic_spec_pkg::RNIC_FW_DMA_CTX): reg_rdata = {24'b0, dma_ctx_reg};
            8'(rnic_spec_pkg::RNIC_FW_DMA_WINDOW): reg_rdata = {26'b0, strap_dma_window};
            8'(rnic_spec_pkg::RNIC_FW_CTX_RESET): reg_rdata = ctx_reset_reg;
            8'(rnic_spec_pkg::RNIC_FW_CMDQ_PENDING): reg_rdata = cmdq_pending_reg;
            8'(rnic_spec_pkg::RNIC_FW_FENCE): reg_rdata = {8'b0, fence};
            8'(rnic_spec_pkg::RNIC_FW_ICM_LIST_LO): reg_rdata = icm_list_addr[31:0];
            8'(rnic_spec_pkg::RNIC_FW_ICM_LIST_HI): reg_rdata = icm_list_addr[63:32];
            8'(rnic_spec_pkg::RNIC_FW_ICM_LIST_N): reg_rdata = icm_list_n;
            8'(rnic_spec_pkg::RNIC_FW_ICM_STATUS): reg_rdata = {icm_pending_reg, 23'b0, icm_status};
            8'(rnic_spec_pkg::RNIC_FW_CFG_ADDR): reg_rdata = cfg_addr_reg;
            8'(rnic_spec_pkg::RNIC_FW_DMA_STATUS): reg_rdata = {29'b0, dma_denied_reg, dma_err_reg, dma_busy_reg};
            8'(rnic_spec_pkg::RNIC_FW_PKT_TX_STATUS): reg_rdata = {31'b0, ptx_busy_reg};
            8'(rnic_spec_pkg::RNIC_FW_PKT_RX_STATUS): reg_rdata = {31'b0, prx_cnt != 3'd0};
            8'(rnic_spec_pkg::RNIC_FW_PKT_RX_LEN): reg_rdata = {21'b0, prx_len[prx_rd]};
            default: reg_rdata = 32'b0;
        endcase
    end

    logic is_reg, is_ctx, is_dbuf, is_ptx, is_prx, is_ram, wr;
    assign is_ram = a < 32'(rnic_spec_pkg::RNIC_FW_RAM_SIZE);
    assign is_reg = a[31:8] == 24'(rnic_spec_pkg::RNIC_FW_REG_BASE >> 8);
    assign is_ctx = a[31:16] == 16'(rnic_spec_pkg::RNIC_FW_CTXREG_BASE >> 16);
    assign is_dbuf = a[31:16] == 16'(rnic_spec_pkg::RNIC_FW_DMABUF_BASE >> 16) && a[15:14] == 2'b0;
    assign is_ptx = a[31:16] == 16'(rnic_spec_pkg::RNIC_FW_PKTTX_BASE >> 16) && a[15:11] == 5'b0;
    assign is_prx = a[31:16] == 16'(rnic_spec_pkg::RNIC_FW_PKTRX_BASE >> 16) && a[15:11] == 5'b0;
    assign wr = |mem_wstrb;

    // ---- what the core may do. CODE_END and STACK_GUARD are taken once after reset (the boot
    // code writes them first); from then on a store below CODE_END, a fetch at or above it, or
    // any access to the guard band is refused: the access is never answered, so the core stops
    // there, and ADMIN.FW_FAULT says why (ID.FW_STATUS: FAILED). So is a PicoRV32 trap.
    localparam int GUARD = 32'(rnic_spec_pkg::RNIC_STACK_GUARD_BYTES);
    logic [31:0] code_end_reg;
    logic [31:0] guard_reg /*verilator public_flat_rd*/;   // rnic-sim: where the stack ends
    logic        code_set_reg, guard_set_reg, halted_reg;
    logic        fault_code_reg, fault_exec_reg, fault_stack_reg;
    logic [15:0] dma_denied_cnt;
    logic        f_code, f_exec, f_stack, deny, acc, acc_ram, ready_reg;
    logic [31:0] fw_status_reg;
    assign f_code = code_set_reg && wr && a < code_end_reg;
    assign f_exec = code_set_reg && mem_instr && a >= code_end_reg;
    assign f_stack = guard_set_reg && a >= guard_reg && a < guard_reg + 32'(GUARD);
    assign deny = mem_valid && !ready_reg && (f_code || f_exec || f_stack);
    assign acc_ram = mem_valid && is_ram && !deny && !halted_reg;   // a RAM access, served in this clock
    assign acc = mem_valid && !is_ram && !ready_reg && !deny && !halted_reg; // any other, starting now
    assign mem_ready = acc_ram || ready_reg;
    assign fw_fault = {12'b0, trap, fault_stack_reg, fault_exec_reg, fault_code_reg, dma_denied_cnt};
    assign fw_status = fw_status_reg | (halted_reg || trap ? 32'(1) << rnic_spec_pkg::RNIC_ID_FW_STATUS_FAILED_SHIFT : 32'b0);

    always_ff @(posedge clk) begin
        if (rst) begin
            code_set_reg <= 1'b0;
            guard_set_reg <= 1'b0;
            halted_reg <= 1'b0;
            fault_code_reg <= 1'b0;
            fault_exec_reg <= 1'b0;
            fault_stack_reg <= 1'b0;
        end else begin
            if (acc && wr && is_reg && reg_off == 8'(rnic_spec_pkg::RNIC_FW_CODE_END) && !code_set_reg) begin
                code_set_reg <= 1'b1;
                code_end_reg <= mem_wdata;
            end
            if (acc && wr && is_reg && reg_off == 8'(rnic_spec_pkg::RNIC_FW_STACK_GUARD) && !guard_set_reg) begin
                guard_set_reg <= 1'b1;
                guard_reg <= mem_wdata;
            end
            if (deny) begin
                halted_reg <= 1'b1;
                fault_code_reg <= fault_code_reg || f_code;
                fault_exec_reg <= fault_exec_reg || f_exec;
                fault_stack_reg <= fault_stack_reg || f_stack;
            end
        end
    end

    // The CPU's ports of the block RAMs (dbuf's other port is the DMA engine's): each is read
    // through a register of its own and written by byte lanes, as a block RAM is. Read into the
    // shared rdata_reg, or written back whole, they would become LUTs or flip-flops. The RAM is
    // addressed by the look-ahead address while no access is on (the clock before one starts, the
    // core says where), so that the word read is there when mem_valid rises and the access ends
    // in that clock; a write lands at that clock's edge.
    logic [31:0]  ram_rdata, rdata_reg;
    logic [511:0] dbuf_line, dbuf_dma;
    logic [RAM_AW - 1:0] ram_addr;
    logic         dbuf_rd_reg;               // the access being answered reads dbuf
    logic [3:0]   lane_we;                   // bytes written by the access starting now
    assign lane_we = !rst && (acc || acc_ram) ? mem_wstrb : 4'b0;
    assign ram_addr = mem_valid ? a[RAM_AW + 1:2] : mem_la_addr[RAM_AW + 1:2];
    assign mem_rdata = is_ram ? ram_rdata : dbuf_rd_reg ? dbuf_line[{wsel, 5'b0} +: 32] : rdata_reg;

    always_ff @(posedge clk) begin
        // (the lane loops only under a write: a simulator would otherwise run them every clock)
        if (|lane_we && is_ram)
            for (int b = 0; b < 4; b++)
                if (lane_we[b])
                    ram[ram_addr][b * 8 +: 8] <= mem_wdata[b * 8 +: 8];
        ram_rdata <= ram[ram_addr];
    end

    // an IRQ write waits while the previous one is pending; a WAIT write until there is work
    logic [63:0] wait_until_reg;
    logic        wake, stall;
    assign wake = prx_cnt != 3'd0 || ctx_reset_reg != 32'b0 || cmdq_pending_reg != 32'b0 || icm_pending_reg ||
                  (wait_reg && $signed(cycle - wait_until_reg) >= 0);
    assign stall = wr && is_reg && ((reg_off == 8'(rnic_spec_pkg::RNIC_FW_IRQ) && irq_valid) ||
                                    (reg_off == 8'(rnic_spec_pkg::RNIC_FW_WAIT) && !wake));

    // the bits the firmware clears in a write-1-to-clear register at `off` this cycle
    function automatic logic [31:0] w1c(input logic [7:0] off);
        w1c = acc && !stall && wr && is_reg && reg_off == off ? mem_wdata : 32'b0;
    endfunction
    logic [31:0] reset_set, db_set;
    assign reset_set = ctx_reset_valid && ctx_reset_ctx < 8'(rnic_spec_pkg::RNIC_NUM_CTX) ?
                       32'(1) << ctx_reset_ctx[4:0] : 32'b0;
    assign db_set = cmdq_db_valid ? 32'(1) << cmdq_db_ctx : 32'b0;

    always_ff @(posedge clk) begin
        wait_reg <= !rst && acc && stall && reg_off == 8'(rnic_spec_pkg::RNIC_FW_WAIT);
        if (!wait_reg)
            wait_until_reg <= cycle + 64'(mem_wdata);
        ready_reg <= 1'b0;
        console_valid <= 1'b0;
        cfg_valid <= 1'b0;
        ci_we <= 1'b0;
        if (rst) begin
            fw_version <= '0;
            fw_status_reg <= '0;
            cfg_addr_reg <= '0;
            ctx_reset_reg <= '0;
            cmdq_pending_reg <= '0;
            icm_pending_reg <= 1'b0;
            icm_status <= '0;
            irq_valid <= 1'b0;
        end else begin
            if (irq_valid && irq_ready)
                irq_valid <= 1'b0;
            // write-1-to-clear bitmaps: a bit set in the cycle of the firmware's clear is kept
            ctx_reset_reg <= (ctx_reset_reg & ~w1c(8'(rnic_spec_pkg::RNIC_FW_CTX_RESET))) | reset_set;
            cmdq_pending_reg <= (cmdq_pending_reg & ~w1c(8'(rnic_spec_pkg::RNIC_FW_CMDQ_PENDING))) | db_set;
            // the firmware's answer clears the request; a list given in the same cycle stays
            if (icm_list_valid)
                icm_pending_reg <= 1'b1;
            else if (acc && !stall && wr && is_reg && reg_off == 8'(rnic_spec_pkg::RNIC_FW_ICM_STATUS))
                icm_pending_reg <= 1'b0;
            if (acc && !stall) begin
                ready_reg <= 1'b1;
                dbuf_rd_reg <= is_dbuf;
                rdata_reg <= 32'b0;
                if (is_ptx) begin
                    rdata_reg <= ptx[a[10:6]][{wsel, 5'b0} +: 32];
                    if (wr)
                        ptx[a[10:6]] <= merge(ptx[a[10:6]], wsel, mem_wdata, mem_wstrb);
                end else if (is_prx) begin
                    rdata_reg <= prx[{prx_rd, a[10:6]}][{wsel, 5'b0} +: 32];
                end else if (is_ctx) begin
                    rdata_reg <= ctx_rdata;
                    if (wr && ctx_word == 4'(rnic_spec_pkg::RNIC_CTX_CMDQ_CI / 4)) begin
                        ci_we <= 1'b1;
                        ci_ctx <= ctx_sel;
                        ci_val <= mem_wdata[15:0];
                    end
                end else if (is_reg) begin
                    rdata_reg <= reg_rdata;
                    if (!wr && reg_off == 8'(rnic_spec_pkg::RNIC_FW_CYCLES_LO))
                        cycles_hi_reg <= cycle[63:32];
                    if (wr) begin
                        case (reg_off)
                            8'(rnic_spec_pkg::RNIC_FW_CONSOLE): begin
                                console_valid <= 1'b1;
                                console_char <= mem_wdata[7:0];
                            end
                            8'(rnic_spec_pkg::RNIC_FW_FW_VERSION): fw_version <= mem_wdata;
                            8'(rnic_spec_pkg::RNIC_FW_FW_STATUS): fw_status_reg <= mem_wdata;
                            8'(rnic_spec_pkg::RNIC_FW_IRQ): begin
                                irq_valid <= 1'b1;
                                irq_vector <= mem_wdata[7:0];
                            end
                            8'(rnic_spec_pkg::RNIC_FW_CFG_ADDR): cfg_addr_reg <= mem_wdata;
                            8'(rnic_spec_pkg::RNIC_FW_ICM_STATUS): icm_status <= mem_wdata[7:0];
                            8'(rnic_spec_pkg::RNIC_FW_CFG_DATA): begin
                                cfg_valid <= 1'b1;
                                cfg_addr <= cfg_addr_reg;
                                cfg_data <= mem_wdata;
                                cfg_addr_reg <= cfg_addr_reg + 32'd4;
                            end
                            default: ;
                        endcase
                    end
                end
            end
        end
    end

    // ---- FW DMA engine: one request at a time between host memory and dbuf, inside the window of
    // DMA_CTX where windows are strapped (a context's bus addresses have bits 63:N = context + 1,
    // the driver's 0). The check is made each clock from the registers, a clock before it is
    // used: DMA_CTRL is written at least two clocks after DMA_CTX, DMA_HOST_* and DMA_LEN.
    logic dma_go, dma_ok_reg;
    logic [63:0] win_mask, win_want, dma_end;
    assign win_mask = ~64'b0 << strap_dma_window;
    assign win_want = dma_ctx_reg == 8'(rnic_spec_pkg::RNIC_DMA_CTX_DRIVER) ? 64'b0 :
                      (64'(dma_ctx_reg) + 64'd1) << strap_dma_window;
    assign dma_end = dma_host_reg + 64'(dma_len_reg) - 64'd1;
    assign dma_go = acc && wr && is_reg &&
                    reg_off == 8'(rnic_spec_pkg::RNIC_FW_DMA_CTRL) && mem_wdata[0] && !dma_busy_reg;
    assign rd_ready = dma_busy_reg && !dma_write_reg;
    assign wr_addr = dma_host_reg;
    assign wr_len = dma_len_reg;
    assign rdreq_addr = dma_host_reg;
    assign rdreq_len = dma_len_reg;
    assign wr_last = {dma_beat_reg, 6'b0} + 14'd64 >= 14'(dma_len_reg);

    // The FW DMA buffer, 16 KiB: a block RAM per 32-bit word of its 64-byte lines, each with the
    // CPU's port (byte lanes, its word of the line) and the engine's (whole lines). When sending,
    // the engine reads a line ahead so that wr_data holds line dma_beat_reg.
    logic [7:0] dma_line;
    assign dma_line = dma_local_reg + (dma_go ? 8'd0 : dma_beat_reg + 8'(wr_valid && wr_ready));
    assign wr_data = dbuf_dma;
    for (genvar w = 0; w < 16; w++) begin : dbuf
        (* ram_style = "block" *) logic [31:0] mem [256];
        always_ff @(posedge clk) begin
            if (|lane_we && is_dbuf && wsel == 4'(w))
                for (int b = 0; b < 4; b++)
                    if (lane_we[b])
                        mem[a[13:6]][b * 8 +: 8] <= mem_wdata[b * 8 +: 8];
            dbuf_line[w * 32 +: 32] <= mem[a[13:6]];
        end
        always_ff @(posedge clk) begin
            if (!rst && rd_valid && rd_ready)
                mem[dma_line] <= rd_data[w * 32 +: 32];
            dbuf_dma[w * 32 +: 32] <= mem[dma_line];
        end
    end

    always_ff @(posedge clk) begin
        dma_ok_reg <= strap_dma_window == 6'd0 ||
                      ((dma_host_reg & win_mask) == win_want && (dma_end & win_mask) == win_want);
        if (rst) begin
            dma_busy_reg <= 1'b0;
            dma_err_reg <= 1'b0;
            dma_denied_reg <= 1'b0;
            dma_denied_cnt <= '0;
            dma_ctx_reg <= '0;
            rdreq_valid <= 1'b0;
            wr_valid <= 1'b0;
        end else begin
            if (acc && wr && is_reg) begin
                case (reg_off)
                    8'(rnic_spec_pkg::RNIC_FW_DMA_HOST_LO): dma_host_reg[31:0] <= mem_wdata;
                    8'(rnic_spec_pkg::RNIC_FW_DMA_HOST_HI): dma_host_reg[63:32] <= mem_wdata;
                    8'(rnic_spec_pkg::RNIC_FW_DMA_LOCAL): dma_local_reg <= mem_wdata[13:6];
                    8'(rnic_spec_pkg::RNIC_FW_DMA_LEN): dma_len_reg <= mem_wdata[15:0];
                    8'(rnic_spec_pkg::RNIC_FW_DMA_CTX): dma_ctx_reg <= mem_wdata[7:0];
                    default: ;
                endcase
            end
            if (dma_go && dma_ok_reg) begin
                dma_busy_reg <= 1'b1;
                dma_write_reg <= mem_wdata[1];
                dma_beat_reg <= '0;
                dma_err_reg <= 1'b0;
                dma_denied_reg <= 1'b0;
                rdreq_valid <= !mem_wdata[1];
                wr_valid <= mem_wdata[1];
            end else if (dma_go) begin   // refused: nothing leaves, the firmware sees an error
                dma_err_reg <= 1'b1;
                dma_denied_reg <= 1'b1;
                if (dma_denied_cnt != 16'hffff)
                    dma_denied_cnt <= dma_denied_cnt + 16'd1;
            end
            if (rdreq_valid && rdreq_ready)
                rdreq_valid <= 1'b0;
            if (rd_valid && rd_ready) begin
                dma_beat_reg <= dma_beat_reg + 1'b1;
                if (rd_err)
                    dma_err_reg <= 1'b1;
                if (rd_last)
                    dma_busy_reg <= 1'b0;
            end
            if (wr_valid && wr_ready) begin
                dma_beat_reg <= dma_beat_reg + 1'b1;
                if (wr_last) begin
                    wr_valid <= 1'b0;
                    dma_busy_reg <= 1'b0;
                end
            end
        end
    end

    // ---- frame out (PKT_TX_LEN) and frames in (a ring of PRX_SLOTS; rx_ready low while full)
    assign tx_data = ptx[ptx_beat_reg[4:0]];
    assign tx_last = {ptx_beat_reg, 6'b0} + 12'd64 >= {1'b0, ptx_len_reg};
    assign tx_keep = tx_last ? ~(64'hffff_ffff_ffff_ffff << ptx_len_reg[5:0]) | {64{ptx_len_reg[5:0] == 6'd0}}
                             : 64'hffff_ffff_ffff_ffff;
    assign tx_valid = ptx_busy_reg;
    assign rx_ready = prx_cnt != 3'(PRX_SLOTS);
    logic prx_in_last, prx_pop;
    assign prx_in_last = rx_valid && rx_ready && rx_last;
    assign prx_pop = acc && wr && is_reg && reg_off == 8'(rnic_spec_pkg::RNIC_FW_PKT_RX_POP) &&
                     prx_cnt != 3'd0;

    function automatic logic [6:0] keep_count(input logic [63:0] k);
        keep_count = 0;
        for (int i = 0; i < 64; i++)
            keep_count = keep_count + 7'(k[i]);
    endfunction

    always_ff @(posedge clk) begin
        if (rst) begin
            ptx_busy_reg <= 1'b0;
            prx_beat_reg <= '0;
            prx_fill_len <= '0;
            prx_wr <= '0;
            prx_rd <= '0;
            prx_cnt <= '0;
        end else begin
            if (acc && wr && is_reg &&
                reg_off == 8'(rnic_spec_pkg::RNIC_FW_PKT_TX_LEN) && !ptx_busy_reg &&
                mem_wdata[10:0] != 11'd0) begin
                ptx_busy_reg <= 1'b1;
                ptx_len_reg <= mem_wdata[10:0];
                ptx_beat_reg <= '0;
            end
            if (tx_valid && tx_ready) begin
                ptx_beat_reg <= ptx_beat_reg + 1'b1;
                if (tx_last)
                    ptx_busy_reg <= 1'b0;
            end
            if (rx_valid && rx_ready) begin
                if (prx_beat_reg < 6'd32)
                    prx[{prx_wr, prx_beat_reg[4:0]}] <= rx_data;
                prx_beat_reg <= rx_last ? 6'd0 : prx_beat_reg + 1'b1;
                prx_fill_len <= rx_last ? 11'd0 : prx_fill_len + 11'(keep_count(rx_keep));
                if (rx_last) begin
                    prx_len[prx_wr] <= prx_fill_len + 11'(keep_count(rx_keep));
                    prx_wr <= prx_wr + 1'b1;
                end
            end
            if (prx_pop)
                prx_rd <= prx_rd + 1'b1;
            prx_cnt <= prx_cnt + 3'(prx_in_last) - 3'(prx_pop);
        end
    end

    logic unused;
    assign unused = &{1'b0, a[31:17] == 15'b0};
endmodule

`default_nettype wire
