// Verilator testbench of rnic_bar_bridge: BAR0 as the XDMA bridge's AXI4 master issues it, random
// host accesses (1, 2, 4 and 8 bytes, at any offset that keeps them in one 8-byte word, bursts,
// addresses in neither window), against two AXI4-Lite register files (the NIC's window and the
// flash controller's) that stall at random. Every write lands in its window's registers with its
// strobes and nowhere else, every read returns them on its lanes, a burst is answered SLVERR and
// an address outside both windows DECERR, neither touching a register.
// Usage: tb_bar [SEED]; exits non-zero at the first mismatch.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "Vrnic_bar_bridge.h"
#include "rnic_spec.h"
#include "tb_check.h"
#include "verilated.h"

struct Slave { // an AXI4-Lite register file, stalling at random
	std::vector<uint8_t> mem;
	bool aw = false, w = false, b = false, r = false;
	uint32_t awaddr = 0, wdata = 0, rdata = 0, wstrb = 0, araddr = 0;
	uint64_t accesses = 0;
};

// one clock: the slaves' side, sample, rising edge
static void step(Vrnic_bar_bridge *t, Slave *sl, std::mt19937_64 &rng, uint64_t &clocks)
{
	auto coin = [&](double p) { return std::uniform_real_distribution<>(0, 1)(rng) < p; };
	for (int i = 0; i < 2; i++) {
		Slave &s = sl[i];
		bool awr = !s.aw && coin(0.7), wr = !s.w && coin(0.7), arr = !s.r && coin(0.7);
		t->m_axil_awready = (t->m_axil_awready & ~(1u << i)) | (awr << i);
		t->m_axil_wready = (t->m_axil_wready & ~(1u << i)) | (wr << i);
		t->m_axil_arready = (t->m_axil_arready & ~(1u << i)) | (arr << i);
		bool bv = s.b && coin(0.6), rv = s.r && coin(0.6);
		t->m_axil_bvalid = (t->m_axil_bvalid & ~(1u << i)) | (bv << i);
		t->m_axil_rvalid = (t->m_axil_rvalid & ~(1u << i)) | (rv << i);
		if (rv)
			t->m_axil_rdata = (t->m_axil_rdata & ~(0xffffffffull << (32 * i))) |
					  (uint64_t)s.rdata << (32 * i);
	}
	t->m_axil_bresp = 0;
	t->m_axil_rresp = 0;
	t->clk = 0;
	t->eval();
	for (int i = 0; i < 2; i++) {
		Slave &s = sl[i];
		if ((t->m_axil_awvalid >> i & 1) && (t->m_axil_awready >> i & 1))
			s.aw = true, s.awaddr = t->m_axil_awaddr;
		if ((t->m_axil_wvalid >> i & 1) && (t->m_axil_wready >> i & 1))
			s.w = true, s.wdata = t->m_axil_wdata, s.wstrb = t->m_axil_wstrb;
		if (s.aw && s.w && !s.b) {
			uint32_t a = i ? s.awaddr & 0xfffc : s.awaddr & ~3u; /* the QSPI's offset in its window */
			CHECK(a + 4 <= s.mem.size(), "write to %#x outside window %d", s.awaddr, i);
			for (int k = 0; k < 4; k++)
				if (s.wstrb >> k & 1)
					s.mem[a + k] = (uint8_t)(s.wdata >> (8 * k));
			s.b = true;
			s.accesses++;
		}
		if ((t->m_axil_bvalid >> i & 1) && (t->m_axil_bready >> i & 1))
			s.aw = s.w = s.b = false;
		if ((t->m_axil_arvalid >> i & 1) && (t->m_axil_arready >> i & 1)) {
			uint32_t a = i ? t->m_axil_araddr & 0xfffc : t->m_axil_araddr & ~3u;
			CHECK(a + 4 <= s.mem.size(), "read of %#x outside window %d", t->m_axil_araddr, i);
			memcpy(&s.rdata, &s.mem[a], 4);
			s.r = true;
			s.accesses++;
		} else if ((t->m_axil_rvalid >> i & 1) && (t->m_axil_rready >> i & 1)) {
			s.r = false;
		}
	}
	t->clk = 1;
	t->eval();
	clocks++;
	CHECK(clocks < 10000000, "stuck");
}

int main(int argc, char **argv)
{
	Verilated::commandArgs(argc, argv);
	std::mt19937_64 rng(argc > 1 ? strtoull(argv[1], nullptr, 0) : 1);
	auto coin = [&](double p) { return std::uniform_real_distribution<>(0, 1)(rng) < p; };
	Vrnic_bar_bridge *t = new Vrnic_bar_bridge;
	Slave sl[2];
	sl[0].mem.resize(RNIC_BAR0_NIC_SIZE);
	sl[1].mem.resize(RNIC_BAR0_QSPI_SIZE);
	std::vector<uint8_t> model[2] = {sl[0].mem, sl[1].mem};
	uint64_t clocks = 0;

	auto clock = [&]() { step(t, sl, rng, clocks); };

	t->rst = 1;
	for (int i = 0; i < 4; i++)
		clock();
	t->rst = 0;
	unsigned n_ok = 0, n_slv = 0, n_dec = 0;
	for (int op = 0; op < 20000; op++) {
		int where = rng() % 20;
		uint64_t addr;
		int win = -1;
		if (where < 14)
			addr = rng() % RNIC_BAR0_NIC_SIZE, win = 0;
		else if (where < 18)
			addr = RNIC_BAR0_QSPI_BASE + rng() % RNIC_BAR0_QSPI_SIZE, win = 1;
		else
			addr = RNIC_BAR0_QSPI_BASE + RNIC_BAR0_QSPI_SIZE + rng() % (RNIC_BAR0_SIZE - RNIC_BAR0_QSPI_BASE -
										    RNIC_BAR0_QSPI_SIZE);
		unsigned size = rng() % 4; // 1, 2, 4, 8 bytes
		addr &= ~((1ull << size) - 1);
		unsigned len = coin(0.05) ? 1 + rng() % 3 : 0;
		bool write = coin(0.5);
		uint8_t bytes[64] = {};
		for (auto &b : bytes)
			b = (uint8_t)rng();
		unsigned off = addr % 64, n = 1u << size;
		int expect = win < 0 ? 3 : len ? 2 : 0;
		if (write) {
			t->s_axi_awaddr = addr, t->s_axi_awlen = len, t->s_axi_awsize = size, t->s_axi_awid = op & 15;
			t->s_axi_awvalid = 1;
			t->eval();
			while (!t->s_axi_awready) {
				clock();
				t->eval();
			}
			clock();
			t->s_axi_awvalid = 0;
			for (unsigned beat = 0; beat <= len; beat++) {
				memcpy(t->s_axi_wdata.data(), bytes, 64);
				t->s_axi_wstrb = (n == 64 ? ~0ull : ((1ull << n) - 1)) << off;
				t->s_axi_wlast = beat == len;
				t->s_axi_wvalid = 1;
				t->eval();
				while (!t->s_axi_wready) {
					clock();
					t->eval();
				}
				clock();
			}
			t->s_axi_wvalid = 0;
			t->s_axi_bready = 1;
			t->eval();
			while (!t->s_axi_bvalid) {
				clock();
				t->eval();
			}
			CHECK(t->s_axi_bresp == (unsigned)expect && t->s_axi_bid == (op & 15u), "write %#llx size %u len %u: "
			      "bresp %u, want %d", (unsigned long long)addr, n, len, t->s_axi_bresp, expect);
			clock();
			t->s_axi_bready = 0;
			if (expect == 0) {
				uint64_t base = win ? addr - RNIC_BAR0_QSPI_BASE : addr;
				memcpy(&model[win][base], bytes + off, n);
			}
		} else {
			t->s_axi_araddr = addr, t->s_axi_arlen = len, t->s_axi_arsize = size, t->s_axi_arid = op & 15;
			t->s_axi_arvalid = 1;
			t->eval();
			while (!t->s_axi_arready) {
				clock();
				t->eval();
			}
			clock();
			t->s_axi_arvalid = 0;
			t->s_axi_rready = 1;
			t->eval();
			while (!t->s_axi_rvalid) {
				clock();
				t->eval();
			}
			CHECK(t->s_axi_rresp == (unsigned)expect && t->s_axi_rlast && t->s_axi_rid == (op & 15u),
			      "read %#llx size %u len %u: rresp %u, want %d", (unsigned long long)addr, n, len, t->s_axi_rresp,
			      expect);
			if (expect == 0) {
				uint8_t got[64];
				memcpy(got, t->s_axi_rdata.data(), 64);
				uint64_t base = win ? addr - RNIC_BAR0_QSPI_BASE : addr;
				CHECK(!memcmp(got + off, &model[win][base], n), "read %#llx size %u: wrong data",
				      (unsigned long long)addr, n);
			}
			clock();
			t->s_axi_rready = 0;
		}
		(expect == 0 ? n_ok : expect == 2 ? n_slv : n_dec)++;
	}
	CHECK(sl[0].mem == model[0] && sl[1].mem == model[1], "registers differ from the model");
	printf("bar: %u accesses done, %u bursts SLVERR, %u outside DECERR, %llu + %llu register accesses, %llu clocks\n",
	       n_ok, n_slv, n_dec, (unsigned long long)sl[0].accesses, (unsigned long long)sl[1].accesses,
	       (unsigned long long)clocks);
	delete t;
	return 0;
}
