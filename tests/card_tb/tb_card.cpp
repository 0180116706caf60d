// Verilator testbench of the card adapters (rnic_dma_axi, rnic_irq_usr, in tb_card.sv) against an
// AXI4 memory with random stalls on every channel, standing in for the PCIe slave bridge:
//   reads  — random requests (1..4096 bytes, any alignment, never crossing 4 KiB), random
//            backpressure: data realigned, in order, tagged, beat counts and `last` right
//   writes — random writes: every byte lands, nothing else changes (strobes); the memory holds
//            WREADY until it has the burst's AW, as an AXI slave may (AWVALID must not wait for it)
//   rate   — back-to-back aligned 4 KiB reads and writes, no stalls: one beat per clock
//   irq    — requests held until acknowledged; one that came while a message was out asks again
// Usage: tb_card TEST [SEED]; prints what it checked, exits non-zero at the first mismatch.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "Vtb_card.h"
#include "tb_check.h"
#include "verilated.h"

static const uint64_t MEM = 1 << 16;

static void put512(VlWide<16> &w, const uint8_t *b)
{
	for (int i = 0; i < 16; i++)
		memcpy(&w[i], b + 4 * i, 4);
}

static void get512(const VlWide<16> &w, uint8_t *b)
{
	for (int i = 0; i < 16; i++)
		memcpy(b + 4 * i, &w[i], 4);
}

struct Tb {
	Vtb_card *t = new Vtb_card;
	std::mt19937_64 rng;
	double stall = 0;        // probability that the memory holds a channel this clock
	bool w_waits_aw = false; // WREADY only while an AW is held (AXI lets a slave wait for it)
	uint64_t bad_page = ~0ull; // reads of this 4 KiB page are answered SLVERR
	std::vector<uint8_t> mem = std::vector<uint8_t>(MEM);
	uint64_t clocks = 0;

	struct Burst {
		uint64_t addr;
		unsigned beats, done;
	};
	std::deque<Burst> ar, aw;
	std::deque<std::pair<std::vector<uint8_t>, uint64_t>> w; // data, strobes
	std::deque<bool> wlast;
	unsigned bpending = 0;

	explicit Tb(uint64_t seed) : rng(seed) {}
	bool go() { return std::uniform_real_distribution<>(0, 1)(rng) >= stall; }

	// the memory's side of the AXI channels for the coming edge
	void drive_mem()
	{
		t->m_axi_arready = go();
		t->m_axi_awready = go();
		t->m_axi_wready = go() && (!w_waits_aw || !aw.empty());
		t->m_axi_rvalid = !ar.empty() && go();
		t->m_axi_rresp = 0;
		if (t->m_axi_rvalid) {
			Burst &b = ar.front();
			put512(t->m_axi_rdata, &mem[(b.addr + 64 * b.done) % MEM]);
			t->m_axi_rlast = b.done + 1 == b.beats;
			t->m_axi_rresp = b.addr / 4096 == bad_page ? 2 : 0;
		}
		t->m_axi_bvalid = bpending > 0;
		t->m_axi_bresp = 0;
	}

	// one clock: sample the handshakes with the inputs settled, then the rising edge
	struct Fire {
		bool ar, r, aw, w, b;
	};
	Fire clock()
	{
		t->clk = 0;
		t->eval();
		Fire f = {t->m_axi_arvalid && t->m_axi_arready, t->m_axi_rvalid && t->m_axi_rready,
			  t->m_axi_awvalid && t->m_axi_awready, t->m_axi_wvalid && t->m_axi_wready,
			  t->m_axi_bvalid && t->m_axi_bready};
		if (f.ar) {
			CHECK(t->m_axi_arsize == 6 && t->m_axi_arburst == 1 && t->m_axi_araddr % 64 == 0,
			      "AR burst shape");
			CHECK(t->m_axi_araddr / 4096 == (t->m_axi_araddr + 64 * t->m_axi_arlen) / 4096,
			      "read burst crosses 4 KiB");
			ar.push_back({t->m_axi_araddr, t->m_axi_arlen + 1u, 0});
		}
		if (f.r && ++ar.front().done == ar.front().beats)
			ar.pop_front();
		if (f.aw) {
			CHECK(t->m_axi_awsize == 6 && t->m_axi_awburst == 1 && t->m_axi_awaddr % 64 == 0,
			      "AW burst shape");
			CHECK(t->m_axi_awaddr / 4096 == (t->m_axi_awaddr + 64 * t->m_axi_awlen) / 4096,
			      "write burst crosses 4 KiB");
			aw.push_back({t->m_axi_awaddr, t->m_axi_awlen + 1u, 0});
		}
		if (f.w) {
			std::vector<uint8_t> d(64);
			get512(t->m_axi_wdata, d.data());
			w.push_back({d, t->m_axi_wstrb});
			wlast.push_back(t->m_axi_wlast);
		}
		if (f.b)
			bpending--;
		// W beats may come before their AW (unless the memory waits for it): apply what has both
		while (!aw.empty() && !w.empty()) {
			Burst &b = aw.front();
			uint64_t a = (b.addr + 64 * b.done) % MEM;
			for (int i = 0; i < 64; i++)
				if (w.front().second >> i & 1)
					mem[a + i] = w.front().first[i];
			bool last = ++b.done == b.beats;
			CHECK(wlast.front() == last, "wlast on beat %u of %u", b.done, b.beats);
			w.pop_front();
			wlast.pop_front();
			if (last) {
				aw.pop_front();
				bpending++;
			}
		}
		t->clk = 1;
		t->eval();
		clocks++;
		return f;
	}

	void reset()
	{
		t->rst = 1;
		for (int i = 0; i < 4; i++)
			clock();
		t->rst = 0;
	}
};

// (addr, len) as the NIC issues them: 1..4096 bytes, never across a 4 KiB boundary
static std::pair<uint64_t, unsigned> range(std::mt19937_64 &rng)
{
	static const unsigned lens[] = {1, 2, 8, 63, 64, 65, 127, 128, 500, 4096};
	unsigned len = rng() % 2 ? lens[rng() % 10] : 1 + rng() % 4096;
	uint64_t off = rng() % (4096 - len + 1);
	return {(rng() % (MEM / 4096)) * 4096 + off, len};
}

struct Req {
	uint64_t addr;
	unsigned len, tag;
};

// issue reqs, take the responses; returns the clocks it took
static uint64_t run_reads(Tb &tb, const std::vector<Req> &reqs, double ready_p)
{
	size_t issued = 0, got = 0;
	std::vector<uint8_t> cur;
	unsigned beats = 0;
	uint64_t start = tb.clocks;

	while (got < reqs.size()) {
		CHECK(tb.clocks - start < 2000000, "reads stuck: %zu of %zu answered", got, reqs.size());
		tb.drive_mem();
		tb.t->rd_req_valid = issued < reqs.size();
		if (issued < reqs.size()) {
			tb.t->rd_req_addr = reqs[issued].addr;
			tb.t->rd_req_len = reqs[issued].len;
			tb.t->rd_req_tag = reqs[issued].tag;
		}
		tb.t->rd_ready = std::uniform_real_distribution<>(0, 1)(tb.rng) < ready_p;
		tb.t->clk = 0;
		tb.t->eval();
		bool req_fire = tb.t->rd_req_valid && tb.t->rd_req_ready;
		bool out_fire = tb.t->rd_valid && tb.t->rd_ready;
		if (out_fire) {
			const Req &q = reqs[got];
			uint8_t b[64];
			get512(tb.t->rd_data, b);
			cur.insert(cur.end(), b, b + 64);
			beats++;
			CHECK(tb.t->rd_tag == q.tag, "read %zu: tag %u, expected %u", got, tb.t->rd_tag, q.tag);
			bool last = beats == (q.len + 63) / 64;
			CHECK(tb.t->rd_last == last, "read %zu: last on beat %u of %u", got, beats, (q.len + 63) / 64);
			CHECK(tb.t->rd_err == (q.addr / 4096 == tb.bad_page), "read %zu: error flag %u", got,
			      tb.t->rd_err);
			if (last) {
				CHECK(!memcmp(cur.data(), &tb.mem[q.addr], q.len), "read %zu: data (addr %#lx len %u)",
				      got, (unsigned long)q.addr, q.len);
				cur.clear();
				beats = 0;
				got++;
			}
		}
		tb.clock();
		if (req_fire)
			issued++;
	}
	return tb.clocks - start;
}

static uint64_t run_writes(Tb &tb, const std::vector<Req> &reqs, std::vector<uint8_t> &model)
{
	size_t i = 0;
	unsigned k = 0;
	uint64_t start = tb.clocks;
	std::vector<uint8_t> data;

	for (i = 0; i < reqs.size(); i++) {
		data.resize(reqs[i].len);
		for (auto &c : data)
			c = (uint8_t)tb.rng();
		memcpy(&model[reqs[i].addr], data.data(), reqs[i].len);
		for (k = 0; k * 64 < reqs[i].len;) {
			uint8_t b[64];
			memset(b, 0xee, 64);
			memcpy(b, &data[k * 64], std::min(64u, reqs[i].len - k * 64));
			tb.drive_mem();
			tb.t->wr_valid = 1;
			tb.t->wr_addr = reqs[i].addr;
			tb.t->wr_len = reqs[i].len;
			put512(tb.t->wr_data, b);
			tb.t->wr_last = (k + 1) * 64 >= reqs[i].len;
			tb.t->clk = 0;
			tb.t->eval();
			bool fire = tb.t->wr_ready;
			tb.clock();
			if (fire)
				k++;
			CHECK(tb.clocks - start < 2000000, "writes stuck at %zu", i);
		}
	}
	tb.t->wr_valid = 0;
	for (int n = 0; n < 400; n++) {
		tb.drive_mem();
		tb.clock();
	}
	CHECK(tb.aw.empty() && tb.w.empty() && !tb.bpending, "writes left over");
	return tb.clocks - start;
}

int main(int argc, char **argv)
{
	Verilated::commandArgs(argc, argv);
	std::string test = argc > 1 ? argv[1] : "";
	Tb tb(argc > 2 ? strtoull(argv[2], nullptr, 0) : 1);

	for (auto &c : tb.mem)
		c = (uint8_t)tb.rng();
	tb.t->rd_ready = 1;
	tb.reset();
	if (test == "reads") {
		std::vector<Req> reqs;
		unsigned bad = 0;
		tb.stall = 0.3;
		tb.bad_page = 5;
		for (unsigned i = 0; i < 2000; i++) {
			auto r = range(tb.rng);
			reqs.push_back({r.first, r.second, i & 0xff});
			bad += r.first / 4096 == tb.bad_page;
		}
		run_reads(tb, reqs, 0.7);
		CHECK(bad > 0 && tb.t->err_count == bad, "%u error bursts counted, %u sent", tb.t->err_count, bad);
		printf("reads: %zu requests checked, %u answered SLVERR and flagged\n", reqs.size(), bad);
	} else if (test == "writes") {
		std::vector<Req> reqs;
		std::vector<uint8_t> model = tb.mem;
		tb.stall = 0.3;
		tb.w_waits_aw = true; // a master whose AWVALID waits for WREADY deadlocks here
		for (unsigned i = 0; i < 2000; i++) {
			auto r = range(tb.rng);
			reqs.push_back({r.first, r.second, 0});
		}
		run_writes(tb, reqs, model);
		CHECK(tb.mem == model, "memory differs from the model");
		CHECK(tb.t->err_count == 0, "errors counted");
		printf("writes: %zu writes checked, memory equal\n", reqs.size());
	} else if (test == "rate") {
		std::vector<Req> reqs;
		std::vector<uint8_t> model = tb.mem;
		for (unsigned i = 0; i < 256; i++)
			reqs.push_back({(i % 16) * 4096ull, 4096, i & 0xff});
		uint64_t rc = run_reads(tb, reqs, 1.0);
		uint64_t wc = run_writes(tb, reqs, model) - 400;
		printf("rate: %u beats read in %lu clocks, %u written in %lu clocks\n", 256 * 64,
		       (unsigned long)rc, 256 * 64, (unsigned long)wc);
		CHECK(rc <= 256 * 64 + 16 && wc <= 256 * 64 + 16, "not one beat per clock");
	} else if (test == "irq") {
		auto step = [&](int valid, int vec, unsigned ack) {
			tb.drive_mem();
			tb.t->irq_valid = valid;
			tb.t->irq_vector = vec;
			tb.t->usr_irq_ack = ack;
			tb.clock();
			tb.t->irq_valid = 0;
			tb.t->usr_irq_ack = 0;
		};
		step(1, 3, 0);
		step(1, 5, 0);
		CHECK(tb.t->usr_irq_req == 0x28, "two requests: %#x", tb.t->usr_irq_req);
		for (int i = 0; i < 10; i++)
			step(0, 0, 0);
		CHECK(tb.t->usr_irq_req == 0x28, "held: %#x", tb.t->usr_irq_req);
		step(0, 0, 1 << 5);
		CHECK(tb.t->usr_irq_req == 0x08, "acked 5: %#x", tb.t->usr_irq_req);
		step(1, 3, 0); // while vector 3's message may be out
		step(0, 0, 1 << 3);
		CHECK(tb.t->usr_irq_req == 0x08, "asks again: %#x", tb.t->usr_irq_req);
		step(0, 0, 1 << 3);
		CHECK(tb.t->usr_irq_req == 0, "acked: %#x", tb.t->usr_irq_req);
		step(1, 40, 0);
		CHECK(tb.t->usr_irq_req == 0, "no such vector: %#x", tb.t->usr_irq_req);
		printf("irq: checked\n");
	} else {
		fprintf(stderr, "usage: tb_card reads|writes|rate|irq [seed]\n");
		return 2;
	}
	delete tb.t;
	return 0;
}
