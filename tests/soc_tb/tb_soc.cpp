// Verilator testbench of rnic_soc alone, as rnic-sim straps it (DMA windows of 2^56 bytes, a host
// seed given), running the attack firmware (attack.c, loaded from FW_HEX) with the scenario its
// IPv4 strap names. It answers the soft core's DMAs and records every one that leaves the module,
// and stops once the core has halted on a fault, or said "done", or after a bound of clocks. On
// stdout, for tests/test_fw_guard.py: the console's lines, the DMAs that left, ADMIN.FW_FAULT, the
// firmware status and the RAM words asked for.
// Usage: tb_soc SCENARIO [ADDR:WORDS]...   (hexadecimal)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "Vrnic_soc.h"
#include "Vrnic_soc___024root.h"
#include "rnic_spec.h"
#include "tb_check.h"
#include "verilated.h"

static constexpr uint64_t MAX_CLOCKS = 4000000;   // the longest scenario (the stack's) takes 2.5 M
static constexpr uint64_t AFTER_FAULT = 20000;    // clocks run after a fault: nothing more may happen
static constexpr uint32_t HALTS = RNIC_ADMIN_FW_FAULT_CODE_WRITE_MASK | RNIC_ADMIN_FW_FAULT_EXEC_MASK |
				  RNIC_ADMIN_FW_FAULT_STACK_MASK | RNIC_ADMIN_FW_FAULT_TRAP_MASK;

struct Bench {
	Vrnic_soc t;
	uint64_t cycle = 0;
	uint32_t rd_beats = 0;  // beats of the read being answered still to give
	bool wr_first = true;   // the next write beat starts a request
	bool done = false;      // the firmware said "done"
	std::string line;

	// one clock: the DMA ports answered from what the core drives, then the rising edge
	void clock()
	{
		t.rd_valid = rd_beats > 0;
		t.rd_last = rd_beats == 1;
		t.clk = 0;
		t.eval();
		if (t.rdreq_valid && t.rdreq_ready) {
			std::printf("dma read 0x%llx %u\n", (unsigned long long)t.rdreq_addr, t.rdreq_len);
			CHECK(!rd_beats, "a read asked while one is answered");
			rd_beats = (t.rdreq_len + 63) / 64;
		}
		if (t.rd_valid && t.rd_ready)
			rd_beats--;
		if (t.wr_valid && t.wr_ready) {
			if (wr_first)
				std::printf("dma write 0x%llx %u\n", (unsigned long long)t.wr_addr, t.wr_len);
			wr_first = t.wr_last;
		}
		if (t.console_valid) {
			if (t.console_char == '\n') {
				std::printf("console %s\n", line.c_str());
				done |= line == "done";
				line.clear();
			} else {
				line += static_cast<char>(t.console_char);
			}
		}
		t.clk = 1;
		t.eval();
		t.cycle = ++cycle;
	}
};

int main(int argc, char **argv)
{
	Verilated::commandArgs(argc, argv);
	CHECK(argc >= 2, "usage: tb_soc SCENARIO [ADDR:WORDS]...");
	auto *b = new Bench;
	Vrnic_soc &t = b->t;

	t.strap_mac = 0x020000000001ull;
	t.strap_ipv4 = static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 0));
	t.strap_dma_window = RNIC_LINK_BUS_CTX_SHIFT;
	for (int i = 0; i < 4; i++)
		t.host_seed[i] = 0x5eed0000u + i;
	t.host_seed_valid = 1;
	t.host_eth_mtu = 1500;
	t.rdreq_ready = 1;
	t.wr_ready = 1;
	t.irq_ready = 1;
	t.tx_ready = 1;
	t.rst = 1;
	for (int i = 0; i < 8; i++)
		b->clock();
	t.rst = 0;
	uint64_t stop = MAX_CLOCKS;
	while (b->cycle < stop && !b->done) {
		b->clock();
		if ((t.fw_fault & HALTS) && stop == MAX_CLOCKS)
			stop = b->cycle + AFTER_FAULT;
	}
	if (!b->line.empty())
		std::printf("console %s\n", b->line.c_str());
	std::printf("fw_fault 0x%x\nfw_status 0x%x\nclocks %llu\n", t.fw_fault, t.fw_status,
		    (unsigned long long)b->cycle);
	for (int i = 2; i < argc; i++) {
		uint32_t addr, n;
		CHECK(std::sscanf(argv[i], "%x:%x", &addr, &n) == 2 && addr % 4 == 0 &&
		      addr + 4 * n <= RNIC_FW_RAM_SIZE, "bad range %s", argv[i]);
		for (uint32_t a = addr; a < addr + 4 * n; a += 4)
			std::printf("ram 0x%x 0x%x\n", a, t.rootp->rnic_soc__DOT__ram[a / 4]);
	}
	t.final();
	delete b;
	return 0;
}
