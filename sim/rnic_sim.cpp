// rnic-sim: one simulated RNIC. Runs the Verilated rnic_top (RTL, firmware on PicoRV32) with its
// HLS C kernels stepped at each clock edge, and models what surrounds it on a card: the PCIe link to host processes
// or to the card's host (host.cpp), the 100G Ethernet port and link (eth.cpp). One loop iteration = one 250 MHz cycle.
// Built with RNIC_CARD it is rnic-card-sim: the card's own RTL around rnic_top (bitstreams/common/rnic_card.sv: the
// AXI4 DMA master, the bridge's user interrupts, the frame FIFOs across to the MAC's clock) against models of the
// vendor IP (card_models.h): the XDMA bridge's AXI ports at 250 MHz and the CMAC's AXI4-Stream ports at 322.27 MHz.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <iostream>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <cerrno>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "eth.h"
#include "host.h"
#include "rnic_spec.h"
#include "verilated.h"
extern "C" {
#include "cq.h"
#include "rx.h"
#include "tx.h"
}
#ifdef RNIC_CARD
#include "Vrnic_card.h"
#include "Vrnic_card___024root.h"
#include "card_models.h"
using Top = Vrnic_card;
#define BAR(sig) s_bar_##sig /* BAR0 as the XDMA bridge's AXI4 master drives it */
#define SOC(sig) rootp->rnic_card__DOT__nic__DOT__soc__DOT__##sig
#else
#define BAR(sig) s_axil_##sig
#include "Vrnic_top.h"
#include "Vrnic_top___024root.h"
using Top = Vrnic_top;
/* what rnic_soc lets simulators read (its verilator public_flat_rd signals) */
#define SOC(sig) rootp->rnic_top__DOT__soc__DOT__##sig
#endif

namespace {
constexpr double NS_PER_CYCLE = 1000.0 / RNIC_CLOCK_MHZ;
/* The simulated host's own memory, as its kernel driver's would be: the NIC's context memory
 * (ICM) and the list of its chunks. Bus addresses with a top byte of 0, which no process's window
 * has; the chunks are listed in reverse order, as a driver's allocations may come. */
constexpr uint64_t DRV_BUS = 0x4000000000ull;
constexpr uint64_t ICM_CHUNK = 1ull << RNIC_ICM_CHUNK_LOG;

/* Where ICM offset `off` sits in the driver's memory: chunk i of the list is the (CHUNKS-1-i)th */
constexpr uint64_t icm_drv(uint32_t off)
{
	return (RNIC_ICM_CHUNKS - 1 - (off >> RNIC_ICM_CHUNK_LOG)) * ICM_CHUNK + (off & (ICM_CHUNK - 1));
}
/* a reset of a context with every object: the firmware takes about 4,700 cycles a QP (16,384 QPs:
 * 77 M cycles, 310 ms) */
constexpr uint64_t STOP_SETTLE_CYCLES = 6000ull * RNIC_MAX_QP;
volatile std::sig_atomic_t stop_requested;

void on_signal(int)
{
	stop_requested = 1;
}

volatile std::sig_atomic_t hot_reset_requested;

void on_hot_reset(int)
{
	hot_reset_requested = 1;
}

struct Opts {
	std::string name, sock_dir, pcap, eth_arg;
	EthPort::Mode eth_mode = EthPort::NONE;
	uint64_t mac = 0;
	uint32_t ip = 0;
	double link_gbps = 100, link_latency_ns = 500, pcie_gbytes = 13, pcie_rd_ns = 600;
	uint32_t snaplen = 65535;
	uint32_t eth_mtu = 1500; /* the network's (ADMIN.ETH_MTU): the port's active MTU follows */
	FaultOpts faults;
	double dma_rd_fail = 0; /* of the kernels' DMA reads, the share the host refuses */
	bool quiet = false;
	bool card_host = false; /* one host, the card's: its driver (docs/ARCHITECTURE.md "Host link") */
};

[[noreturn]] void usage(const std::string &err)
{
	std::cerr << "rnic-sim: " << err << "\n"
		  << "usage: rnic-sim --name NAME --mac XX:XX:XX:XX:XX:XX --ip A.B.C.D [--sock-dir DIR]\n"
		  << "  [--eth-listen PATH | --eth-connect PATH | --eth-udp LPORT:RHOST:RPORT] [--pcap FILE [--pcap-snaplen N]]\n"
		  << "  [--drop P] [--dup P] [--reorder P] [--corrupt P] [--delay-ns NS] [--seed N]\n"
		  << "  [--link-gbps G] [--link-latency-ns NS] [--pcie-gbytes GB] [--pcie-rd-ns NS] [--eth-mtu BYTES]\n"
		  << "  [--dma-rd-fail P]\n"
		  << "  [--card-host] [--quiet]\n";
	std::exit(2);
}

double prob(const std::string &s, const char *opt)
{
	char *end;
	double v = std::strtod(s.c_str(), &end);
	if (*end || v < 0 || v > 1)
		usage(std::string(opt) + " wants a probability between 0 and 1");
	return v;
}

double positive(const std::string &s, const char *opt)
{
	char *end;
	double v = std::strtod(s.c_str(), &end);
	if (*end || v <= 0)
		usage(std::string(opt) + " wants a positive number");
	return v;
}

Opts parse(int argc, char **argv)
{
	Opts o;
	const char *dir = std::getenv("RNIC_SIM_DIR");
	o.sock_dir = dir ? dir : "/tmp/rnic-sim";
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--quiet" || a == "--card-host") {
			(a == "--quiet" ? o.quiet : o.card_host) = true;
			continue;
		}
		if (a.rfind("+", 0) == 0)
			continue; // Verilator plusargs
		if (i + 1 >= argc)
			usage("missing value for " + a);
		std::string v = argv[++i];
		if (a == "--name") {
			o.name = v;
		} else if (a == "--mac") {
			unsigned b[6];
			if (std::sscanf(v.c_str(), "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6)
				usage("bad --mac " + v);
			for (unsigned x : b)
				o.mac = (o.mac << 8) | (x & 0xff);
		} else if (a == "--ip") {
			unsigned b[4];
			char extra;
			if (std::sscanf(v.c_str(), "%u.%u.%u.%u%c", &b[0], &b[1], &b[2], &b[3], &extra) != 4 ||
			    b[0] > 255 || b[1] > 255 || b[2] > 255 || b[3] > 255)
				usage("bad --ip " + v);
			o.ip = (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
		} else if (a == "--sock-dir") {
			o.sock_dir = v;
		} else if (a == "--eth-listen" || a == "--eth-connect" || a == "--eth-udp") {
			if (o.eth_mode != EthPort::NONE)
				usage("one Ethernet backend only");
			o.eth_mode = a == "--eth-listen" ? EthPort::LISTEN : a == "--eth-connect" ? EthPort::CONNECT
												  : EthPort::UDP;
			o.eth_arg = v;
		} else if (a == "--pcap") {
			o.pcap = v;
		} else if (a == "--pcap-snaplen") {
			o.snaplen = static_cast<uint32_t>(positive(v, "--pcap-snaplen"));
		} else if (a == "--drop") {
			o.faults.drop = prob(v, "--drop");
		} else if (a == "--dup") {
			o.faults.dup = prob(v, "--dup");
		} else if (a == "--reorder") {
			o.faults.reorder = prob(v, "--reorder");
		} else if (a == "--corrupt") {
			o.faults.corrupt = prob(v, "--corrupt");
		} else if (a == "--delay-ns") {
			o.faults.delay_cycles = static_cast<uint32_t>(positive(v, "--delay-ns") / NS_PER_CYCLE);
		} else if (a == "--dma-rd-fail") {
#ifdef RNIC_CARD
			usage("--dma-rd-fail: the card's AXI reads carry no kernel's tag; use rnic-sim");
#endif
			o.dma_rd_fail = prob(v, "--dma-rd-fail");
		} else if (a == "--seed") {
			o.faults.seed = std::strtoull(v.c_str(), nullptr, 0);
		} else if (a == "--link-gbps") {
			o.link_gbps = positive(v, "--link-gbps");
		} else if (a == "--link-latency-ns") {
			o.link_latency_ns = positive(v, "--link-latency-ns");
		} else if (a == "--pcie-gbytes") {
			o.pcie_gbytes = positive(v, "--pcie-gbytes");
		} else if (a == "--eth-mtu") {
			char *end;
			unsigned long m = std::strtoul(v.c_str(), &end, 10);
			if (*end || m < 576 || m > 9216)
				usage("--eth-mtu wants 576 to 9216 bytes");
			o.eth_mtu = static_cast<uint32_t>(m);
		} else if (a == "--pcie-rd-ns") {
			o.pcie_rd_ns = positive(v, "--pcie-rd-ns");
		} else {
			usage("unknown option " + a);
		}
	}
	if (o.name.empty() || !o.mac || !o.ip)
		usage("--name, --mac and --ip are required");
	return o;
}

struct DmaRead {
	uint32_t id, len, beat;
	uint8_t tag;
	uint64_t due;
	bool fetched, err; /* err: the process refused the read (or is gone): zeros, flagged */
	bool refuse;       /* refused whatever the process says (--dma-rd-fail) */
	std::vector<uint8_t> data;
};

/* The socket directory is where host processes find the NIC: another user must not be able to
 * have made it (and put a socket of theirs in it), nor write to it. */
void check_sock_dir(const std::string &dir)
{
	struct stat s{};

	if (::mkdir(dir.c_str(), 0700) && errno != EEXIST)
		throw std::runtime_error("cannot create " + dir + ": " + std::strerror(errno));
	if (::lstat(dir.c_str(), &s) || !S_ISDIR(s.st_mode))
		throw std::runtime_error(dir + " is not a directory");
	if (s.st_uid != ::geteuid() || (s.st_mode & 022))
		throw std::runtime_error(dir + " belongs to another user or is writable by others");
}

int ctx_of(uint64_t bus)
{
	return static_cast<int>(bus >> RNIC_LINK_BUS_CTX_SHIFT) - 1;
}

void put_wide(VlWide<16> &w, const uint8_t *p)
{
	std::memcpy(w.data(), p, 64);
}

/* What surrounds the NIC on a card, one clock at a time: BAR0 (AXI4-Lite, one transaction at a
 * time), the PCIe DMA engine (reads answered in order after the read latency, writes at the link's
 * bandwidth), the MAC (transmit paced at the line rate, receive one beat per clock), the
 * firmware's console, and the host processes coming and going. */
class Card {
public:
	Card(const Opts &o, Top &top, EthPort &eth, HostLink &host)
		: o_(o), top_(top), eth_(eth), host_(host), pcie_bytes_per_cycle_(o.pcie_gbytes * NS_PER_CYCLE),
		  line_bytes_per_cycle_(o.link_gbps / 8.0 * NS_PER_CYCLE),
		  rd_latency_(static_cast<uint64_t>(o.pcie_rd_ns / NS_PER_CYCLE)), reset_issued_(RNIC_NUM_CTX)
	{
		top.BAR(bready) = 1;
		top.BAR(rready) = 1;
#ifdef RNIC_CARD
		top.s_bar_awsize = top.s_bar_arsize = 2; /* 32-bit accesses, one beat */
		top.s_bar_wlast = 1;
		top.stat_rx_aligned = 1;
#else
		top.s_axil_wstrb = 0xf;
		top.m_dma_rd_req_ready = 1;
		top.irq_ready = 1;
		top.port_up = 1;
#endif
		if (!tx_ || !rx_ || !cq_)
			throw std::bad_alloc();
		bring_up();
	}

	/* as the driver does it (the card's driver, on a card: nothing to do here): the secret (fresh
	 * for every run, from the kernel's RNG), the network's MTU, then the context memory the NIC
	 * asks for (ADMIN.ICM_CHUNKS), handed over before any process can reach the NIC */
	void bring_up()
	{
		if (o_.card_host)
			return;
		uint32_t seed[4];
		if (::getrandom(seed, sizeof(seed), 0) != static_cast<ssize_t>(sizeof(seed)))
			throw std::runtime_error(std::string("no random seed: ") + std::strerror(errno));
		for (uint32_t i = 0; i < 4; i++)
			host_.mmio.push_back({-1, true, RNIC_ADMIN_SEED_0 + 4 * i, seed[i], 0});
		host_.mmio.push_back({-1, true, RNIC_ADMIN_ETH_MTU, o_.eth_mtu, 0});
		uint64_t list = DRV_BUS + RNIC_ICM_CHUNKS * ICM_CHUNK;
		for (uint32_t i = 0; i < RNIC_ICM_CHUNKS; i++) {
			uint64_t a = DRV_BUS + icm_drv(i << RNIC_ICM_CHUNK_LOG);
			std::memcpy(drv_.data() + (list - DRV_BUS) + 8 * i, &a, 8);
		}
		host_.mmio.push_back({-1, true, RNIC_ADMIN_ICM_LIST_LO, static_cast<uint32_t>(list), 0});
		host_.mmio.push_back({-1, true, RNIC_ADMIN_ICM_LIST_HI, static_cast<uint32_t>(list >> 32), 0});
		host_.mmio.push_back({-1, true, RNIC_ADMIN_ICM_LIST_N, RNIC_ICM_CHUNKS, 0});
	}

	~Card()
	{
		std::free(tx_);
		std::free(rx_);
		std::free(cq_);
	}
	Card(const Card &) = delete;
	Card &operator=(const Card &) = delete;

	void step(uint64_t cycle)
	{
		in_reset_ = cycle < reset_end_;
#ifdef RNIC_CARD
		cmac_.run_to(cycle, in_reset_);
		top_.rst_n = cycle + 2 >= reset_end_; /* rnic_card registers it: its reset ends with ours */
#else
		top_.rst = in_reset_;
#endif
		start_mmio();
		drive(cycle);
		top_.clk = 0;
		top_.eval();
		kernels();
		// transfers at this edge (valid signals drop after the edge that transfers them)
		bool aw_done = false, w_done = false, ar_done = false;
		axi(aw_done, w_done, ar_done);
		dma(cycle);
		ethernet(cycle);
		top_.clk = 1;
		top_.eval();
		if (aw_done)
			top_.BAR(awvalid) = 0;
		if (w_done)
			top_.BAR(wvalid) = 0;
		if (ar_done)
			top_.BAR(arvalid) = 0;
		eth_.tick(cycle);
		if ((cycle & 31) == 0)
			hosts(cycle);
	}

private:
	/* the BAR access under way: AXI4-Lite states, or a pushed WQE's beats */
	enum { AXI_IDLE, AXI_W, AXI_B, AXI_R, AXI_RD, PUSH };

	/* the kernels' step for the coming rising edge, from their inputs as rnic_top settled them;
	 * rnic_top registers the outputs at the edge (the contract of the kernels' SystemVerilog
	 * wrappers, without packing DPI-C vectors every clock) */
	void kernels()
	{
		rnic_tx_in_t ti;
		rnic_rx_in_t ri;
		rnic_cq_in_t ci;
		rnic_tx_out_t to;
		rnic_rx_out_t ro;
		rnic_cq_out_t co;

		rnic_tx_in_unpack(top_.tx_in.data(), &ti);
		rnic_rx_in_unpack(top_.rx_in.data(), &ri);
		rnic_cq_in_unpack(top_.cq_in.data(), &ci);
		rnic_tx_step(tx_, &ti, &to);
		rnic_rx_step(rx_, &ri, &ro);
		rnic_cq_step(cq_, &ci, &co);
		rnic_tx_out_pack(&to, top_.tx_out_d.data());
		rnic_rx_out_pack(&ro, top_.rx_out_d.data());
		rnic_cq_out_pack(&co, top_.cq_out_d.data());
	}

	/* BAR0: the next access of the queue */
	void start_mmio()
	{
		if (axi_ != AXI_IDLE || host_.mmio.empty() || in_reset_)
			return;
		op_ = host_.mmio.front();
		host_.mmio.pop_front();
		/* a host process has its context's two pages: in the simulation it is its own driver
		 * (on a card the kernel module keeps the command-queue page) */
		uint32_t off = static_cast<uint32_t>(op_.ctx) * RNIC_BAR0_CTX_STRIDE;
		auto in_page = [&](uint32_t base) {
			return op_.addr >= base + off && op_.addr < base + off + RNIC_BAR0_CTX_STRIDE;
		};
		bool own = o_.card_host || op_.ctx < 0 || in_page(RNIC_BAR0_CTX_BASE) || in_page(RNIC_BAR0_CMDQ_BASE);
		bool global = op_.addr < RNIC_BAR0_CTX_BASE; /* readable by all; ADMIN writes are ours */
		if (!op_.push.empty()) {
			/* a WQE for the push window of the process's own doorbell page, else nothing; a
			 * card has no push window (its host library rings doorbells only: RNIC_PUSH=0) */
			if (CARD && pushes_refused++ == 0)
				std::fprintf(stderr, "rnic-sim %s: a pushed WQE refused: the card has no push window "
					     "(RNIC_PUSH=0)\n", o_.name.c_str());
			if (!CARD && op_.ctx >= 0 && op_.addr == RNIC_BAR0_CTX_BASE + off + RNIC_CTX_SQ_PUSH) {
				axi_ = PUSH;
				push_beat_ = 0;
			}
		} else if (op_.write && own) {
			top_.BAR(awaddr) = op_.addr;
#ifdef RNIC_CARD
			std::memset(top_.s_bar_wdata.data(), 0, 64);
			top_.s_bar_wdata[(op_.addr >> 2) & 15] = op_.value;
			top_.s_bar_wstrb = 0xfull << (4 * ((op_.addr >> 2) & 15));
#else
			top_.s_axil_wdata = op_.value;
#endif
			top_.BAR(awvalid) = top_.BAR(wvalid) = 1;
			axi_ = AXI_W;
		} else if (!op_.write && (own || global)) {
			top_.BAR(araddr) = op_.addr;
			top_.BAR(arvalid) = 1;
			axi_ = AXI_R;
		} else if (!op_.write) {
			host_.mmio_response(op_.ctx, op_.tag, 0); // not this context's to read
		}
	}

	/* inputs for this clock: DMA read data (in request order, no earlier than due), the write
	 * budget, the MAC's transmit credit and the beat it receives */
	void drive(uint64_t cycle)
	{
#ifdef RNIC_CARD
		drive_axi(cycle);
#else
		top_.s_push_valid = axi_ == PUSH;
		if (axi_ == PUSH) {
			put_wide(top_.s_push_data, op_.push.data() + push_beat_ * 64);
			top_.s_push_ctx = static_cast<uint8_t>(op_.ctx);
			top_.s_push_last = push_beat_ == 1;
		}
		rd_drive_ = false;
		if (!reads_.empty() && reads_.front().due <= cycle) {
			DmaRead &r = reads_.front();
			if (!r.fetched) {
				r.err = !host_.dma_data(r.id, r.data) || r.refuse;
				r.data.resize(((r.len + 63) / 64) * 64);
				r.fetched = true;
			}
			put_wide(top_.s_dma_rd_data, r.data.data() + r.beat * 64);
			top_.s_dma_rd_tag = r.tag;
			top_.s_dma_rd_last = (r.beat + 1) * 64 >= r.len;
			top_.s_dma_rd_err = r.err;
			rd_drive_ = true;
		}
		top_.s_dma_rd_valid = rd_drive_;
		wr_budget_ = std::min(wr_budget_ + pcie_bytes_per_cycle_, 4096.0);
		top_.m_dma_wr_ready = wr_budget_ >= 64;
		mac_credit_ = std::min(mac_credit_ + line_bytes_per_cycle_, 128.0);
		top_.m_axis_eth_tx_tready = mac_credit_ >= 64;
		if (!rx_busy_ && eth_.receive(cycle, rx_frame_)) {
			rx_busy_ = true;
			rx_off_ = 0;
		}
		top_.s_axis_eth_rx_tvalid = rx_busy_;
		if (rx_busy_) {
			uint8_t beat[64] = {};
			size_t n = std::min<size_t>(64, rx_frame_.data.size() - rx_off_);
			std::memcpy(beat, rx_frame_.data.data() + rx_off_, n);
			put_wide(top_.s_axis_eth_rx_tdata, beat);
			top_.s_axis_eth_rx_tkeep = n == 64 ? ~0ull : (1ull << n) - 1;
			top_.s_axis_eth_rx_tlast = rx_off_ + n >= rx_frame_.data.size();
		}
#endif
	}

	/* the 32-bit register a read returned */
	uint32_t bar_rdata() const
	{
#ifdef RNIC_CARD
		return top_.s_bar_rdata[(op_.addr >> 2) & 15];
#else
		return top_.s_axil_rdata;
#endif
	}

	void axi(bool &aw_done, bool &w_done, bool &ar_done)
	{
		if (axi_ == AXI_W) {
			aw_done = top_.BAR(awvalid) && top_.BAR(awready);
			w_done = top_.BAR(wvalid) && top_.BAR(wready);
			if ((aw_done || !top_.BAR(awvalid)) && (w_done || !top_.BAR(wvalid)))
				axi_ = AXI_B;
		} else if (axi_ == AXI_B && top_.BAR(bvalid)) {
			axi_ = AXI_IDLE;
#ifndef RNIC_CARD
		} else if (axi_ == PUSH && top_.s_push_ready) {
			if (++push_beat_ == 2)
				axi_ = AXI_IDLE;
#endif
		} else if (axi_ == AXI_R && top_.BAR(arready)) {
			ar_done = true;
			axi_ = AXI_RD;
		} else if (axi_ == AXI_RD && top_.BAR(rvalid)) {
			if (op_.ctx >= 0) {
				host_.mmio_response(op_.ctx, op_.tag, bar_rdata());
			} else {
				/* our own poll of ADMIN.CTX_RESET_PENDING: the contexts whose reset was
				 * written before it (op.value) and is done are free again */
				for (int c = 0; c < RNIC_NUM_CTX; c++)
					if (((op_.value >> c) & 1) && !((bar_rdata() >> c) & 1))
						host_.resetting[c] = reset_issued_[c] = false;
			}
			axi_ = AXI_IDLE;
		}
	}

	/* the driver's memory at bus address a, len bytes: nullptr if it is not all there */
	uint8_t *drv(uint64_t a, uint32_t len)
	{
		return a >= DRV_BUS && a - DRV_BUS + len <= drv_.size() ? drv_.data() + (a - DRV_BUS) : nullptr;
	}

	/* a DMA read of len bytes at a, answered after the read latency and in order */
	void dma_read(uint64_t cycle, uint64_t a, uint32_t len, uint8_t tag)
	{
		double start = std::max(static_cast<double>(cycle + rd_latency_), rd_free_);
		rd_free_ = start + len / pcie_bytes_per_cycle_;
		if (!o_.card_host && ctx_of(a) < 0) {
			/* the driver's memory answers itself, after the same latency */
			const uint8_t *p = drv(a, len);
			std::vector<uint8_t> d(p ? p : drv_.data(), p ? p + len : drv_.data());
			reads_.push_back({0, len, 0, tag, static_cast<uint64_t>(start), true, !p, false, std::move(d)});
			reads_.back().data.resize(((len + 63) / 64) * 64);
		} else {
			reads_.push_back({host_.dma_read(host_of(a), a, len), len, 0, tag, static_cast<uint64_t>(start),
					  false, false, false, {}});
		}
		/* a PCIe completion error or an IOMMU fault, as --dma-rd-fail asks, on the kernels' reads */
		if (o_.dma_rd_fail > 0 && tag != RNIC_DMA_TAG_FW && rd_fail_(rd_rng_) < o_.dma_rd_fail) {
			reads_.back().refuse = true;
			reads_.back().err = true;
		}
	}

	/* a DMA write of the bytes in wr_buf_ at wr_addr_ */
	void dma_write()
	{
		uint32_t n = static_cast<uint32_t>(wr_buf_.size());
		if (o_.card_host || ctx_of(wr_addr_) >= 0)
			host_.dma_write(host_of(wr_addr_), wr_addr_, wr_buf_.data(), n);
		else if (uint8_t *p = drv(wr_addr_, n))
			std::memcpy(p, wr_buf_.data(), n), icm_writes_++;
		else
			host_.dma_errors++;
		wr_buf_.clear();
	}

#ifdef RNIC_CARD
	/* The XDMA bridge's side of rnic_card's AXI4 master and user interrupts (PG195, AXI Bridge
	 * mode): read bursts answered in order after the read latency (SLVERR where the host refused
	 * them), write bursts at the link's bandwidth with their strobes and one B response each; a
	 * user interrupt request becomes the vector's MSI-X message, acknowledged the next clock. */
	void drive_axi(uint64_t cycle)
	{
		rd_drive_ = !reads_.empty() && reads_.front().due <= cycle;
		if (rd_drive_) {
			DmaRead &r = reads_.front();
			if (!r.fetched) {
				r.err = !host_.dma_data(r.id, r.data);
				r.data.resize(r.len);
				r.fetched = true;
			}
			put_wide(top_.m_axi_rdata, r.data.data() + r.beat * 64);
			top_.m_axi_rlast = (r.beat + 1) * 64 >= r.len;
			top_.m_axi_rresp = r.err ? 2 : 0;
		}
		top_.m_axi_rvalid = rd_drive_;
		top_.m_axi_arready = reads_.size() < 64;
		top_.m_axi_awready = aw_.size() < 8;
		wr_budget_ = std::min(wr_budget_ + pcie_bytes_per_cycle_, 4096.0);
		top_.m_axi_wready = !aw_.empty() && wr_budget_ >= 64;
		top_.m_axi_bvalid = bresp_ > 0;
		top_.m_axi_bresp = 0;
		top_.usr_irq_ack = irq_ack_;
		/* the flash controller's window: every access answered OKAY, reads as zeros (there is no
		 * flash here) */
		top_.m_axil_qspi_awready = top_.m_axil_qspi_wready = top_.m_axil_qspi_arready = 1;
		top_.m_axil_qspi_bvalid = qspi_aw_ && qspi_w_;
		top_.m_axil_qspi_rvalid = qspi_r_;
		top_.m_axil_qspi_bresp = top_.m_axil_qspi_rresp = 0;
		top_.m_axil_qspi_rdata = 0;
	}

	void dma(uint64_t cycle)
	{
		if (top_.m_axi_arvalid && top_.m_axi_arready)
			dma_read(cycle, top_.m_axi_araddr, 64u * (top_.m_axi_arlen + 1u), 0);
		if (rd_drive_ && top_.m_axi_rready && ++reads_.front().beat * 64 >= reads_.front().len)
			reads_.pop_front();
		if (top_.m_axi_awvalid && top_.m_axi_awready)
			aw_.push_back({top_.m_axi_awaddr, top_.m_axi_awlen + 1u});
		if (top_.m_axi_wvalid && top_.m_axi_wready) {
			const uint8_t *d = reinterpret_cast<const uint8_t *>(top_.m_axi_wdata.data());
			uint64_t strb = top_.m_axi_wstrb;
			for (uint32_t i = 0; i < 64; i++) {
				if (!((strb >> i) & 1))
					continue;
				if (wr_buf_.empty())
					wr_addr_ = aw_.front().first + 64ull * w_beat_ + i;
				wr_buf_.push_back(d[i]);
			}
			wr_budget_ -= 64;
			if (++w_beat_ == aw_.front().second || top_.m_axi_wlast) {
				if (!wr_buf_.empty())
					dma_write();
				aw_.pop_front();
				w_beat_ = 0;
				bresp_++;
			}
		}
		if (top_.m_axi_bvalid && top_.m_axi_bready)
			bresp_--;
		if (top_.m_axil_qspi_bvalid && top_.m_axil_qspi_bready)
			qspi_aw_ = qspi_w_ = false;
		qspi_aw_ |= static_cast<bool>(top_.m_axil_qspi_awvalid);
		qspi_w_ |= static_cast<bool>(top_.m_axil_qspi_wvalid);
		if (top_.m_axil_qspi_rvalid && top_.m_axil_qspi_rready)
			qspi_r_ = false;
		qspi_r_ |= static_cast<bool>(top_.m_axil_qspi_arvalid);
		uint16_t req = static_cast<uint16_t>(top_.usr_irq_req & ~irq_ack_);
		for (int v = 0; v < RNIC_NUM_CTX; v++)
			if ((req >> v) & 1)
				host_.irq(o_.card_host ? 0 : v, static_cast<uint32_t>(v));
		irq_ack_ = req;
	}
#else
	void dma(uint64_t cycle)
	{
		if (top_.m_dma_rd_req_valid)
			dma_read(cycle, top_.m_dma_rd_req_addr, top_.m_dma_rd_req_len, static_cast<uint8_t>(top_.m_dma_rd_req_tag));
		if (rd_drive_ && top_.s_dma_rd_ready) {
			DmaRead &r = reads_.front();
			if (++r.beat * 64 >= r.len)
				reads_.pop_front();
		}
		if (top_.m_dma_wr_valid && top_.m_dma_wr_ready) {
			uint32_t len = top_.m_dma_wr_len;
			const uint8_t *d = reinterpret_cast<const uint8_t *>(top_.m_dma_wr_data.data());
			if (wr_buf_.empty())
				wr_addr_ = top_.m_dma_wr_addr;
			size_t n = std::min<size_t>(64, len - std::min<size_t>(len, wr_buf_.size()));
			wr_buf_.insert(wr_buf_.end(), d, d + n);
			wr_budget_ -= 64;
			if (top_.m_dma_wr_last)
				dma_write();
		}
		if (top_.irq_valid)
			host_.irq(o_.card_host ? 0 : top_.irq_vector, top_.irq_vector);
	}
#endif

	/* who a bus address belongs to: the card's host has them all; else the top byte says */
	int host_of(uint64_t a) const
	{
		return o_.card_host ? 0 : ctx_of(a);
	}

	/* The card's host went away (its machine stopped, the device was removed): the card is
	 * power-cycled, RTL held in reset, the kernels' memories as at power-up, the firmware booted
	 * again (it has no initialised data: link.ld), nothing of the old host's transfers kept. A
	 * hot reset (PCIe secondary bus reset, SIGUSR1 here) is the same but for the kernels'
	 * memories: a reset leaves block RAM as it was, and the kernels' sweeps clear it. */
	void power_cycle(uint64_t cycle, bool hot = false)
	{
		if (!hot) {
			std::memset(static_cast<void *>(tx_), 0, sizeof(*tx_));
			std::memset(static_cast<void *>(rx_), 0, sizeof(*rx_));
			std::memset(static_cast<void *>(cq_), 0, sizeof(*cq_));
		}
		reads_.clear();
		wr_buf_.clear();
		tx_frame_.clear();
		rx_busy_ = false;
#ifdef RNIC_CARD
		cmac_.reset();
		aw_.clear();
		bresp_ = w_beat_ = 0;
		irq_ack_ = 0;
		qspi_aw_ = qspi_w_ = qspi_r_ = false;
#endif
		axi_ = AXI_IDLE;
		top_.BAR(awvalid) = top_.BAR(wvalid) = top_.BAR(arvalid) = 0;
		host_.mmio.clear();
		host_.forget();
		reset_end_ = cycle + 8;
		host_.resetting[0] = false;
	}

public:
	void hot_reset(uint64_t cycle)
	{
		power_cycle(cycle, true);
		std::fill(drv_.begin(), drv_.end(), 0); /* the driver's context memory, fresh */
		bring_up();
	}

	/* a context whose process left is still being reset (its objects destroyed, its event queue
	 * closed): the firmware is between writes that belong together */
	bool resetting() const
	{
		for (bool r : host_.resetting)
			if (r)
				return true;
		return false;
	}

	/* Every table entry in ICM against the kernels' own: the firmware wrote both. The one word a
	 * kernel writes itself is an SRQ's LIMIT, set to 0 when its event fires (11.2.3). */
	void icm_report() const
	{
		uint64_t entries = 0, differ = 0;
		if (o_.card_host) {
			std::printf("rnic-sim %s: icm in the card host's memory, not checked\n", o_.name.c_str());
			return;
		}
		auto cmp = [&](const char *name, uint32_t off, uint32_t stride, const void *tbl, uint32_t n, uint32_t bytes,
			       int disarm_word) {
			for (uint32_t i = 0; i < n; i++, entries++) {
				uint8_t img[RNIC_ICM_QPC_STRIDE];
				const uint8_t *k = static_cast<const uint8_t *>(tbl) + i * bytes;

				std::memcpy(img, drv_.data() + icm_drv(off + i * stride), bytes);
				if (disarm_word >= 0 && !std::memcmp(k + 4 * disarm_word, "\0\0\0", 4))
					std::memset(img + 4 * disarm_word, 0, 4); /* the kernel's word is 0 */
				if (std::memcmp(img, k, bytes) && differ++ < 4)
					std::printf("rnic-sim %s: icm %s %u differs from the kernels' entry\n", o_.name.c_str(), name, i);
			}
		};
		static_assert(RNIC_ICM_QPC_STRIDE >= RNIC_ICM_MPT_STRIDE && RNIC_ICM_QPC_STRIDE >= RNIC_ICM_SRQC_STRIDE &&
			      RNIC_ICM_QPC_STRIDE >= RNIC_ICM_CQC_STRIDE, "icm_report: the QPC is the largest entry");
		/* the TX kernel keeps each QPC's fields, not its words: the fields of the ICM copy */
		for (uint32_t i = 0; i < RNIC_MAX_QP; i++, entries++) {
			uint32_t w[RNIC_QPC_WORDS];
			tx_qsf_t f;
			rnic_path_t p;

			std::memcpy(w, drv_.data() + icm_drv(RNIC_ICM_QPC_OFF + i * RNIC_ICM_QPC_STRIDE), sizeof(w));
			std::memset(&f, 0, sizeof(f)); /* the kernel's state started zeroed, padding too */
			std::memset(&p, 0, sizeof(p));
			for (uint32_t j = 0; j < RNIC_QPC_WORDS; j++) {
				tx_qsf_cfg(&f, j, w[j]);
				rnic_path_cfg(&p, j, w[j]);
			}
			if ((std::memcmp(&f, &tx_->core.qsf[i], sizeof(f)) || std::memcmp(&p, &tx_->core.hq[i], sizeof(p))) &&
			    differ++ < 4)
				std::printf("rnic-sim %s: icm QPC %u differs from the kernels' entry\n", o_.name.c_str(), i);
		}
		/* the MPT and the MTT: what each kernel's caches hold (the words or entries a line's tag marks) */
		for (const rnic_tables_t *t : {&tx_->core.t, &rx_->core.t}) {
			for (uint32_t l = 0; l < RNIC_MPT_LINES; l++) {
				uint32_t idx = t->mpt[l].tag >> MPT_HAVE_BITS, img[RNIC_MPT_WORDS];

				if (!(t->mpt[l].tag & MPT_HAVE_ALL))
					continue;
				entries++;
				std::memcpy(img, drv_.data() + icm_drv(RNIC_ICM_MPT_OFF + idx * RNIC_ICM_MPT_STRIDE), sizeof(img));
				for (uint32_t k = 0; k < RNIC_MPT_WORDS; k++)
					if (((t->mpt[l].tag >> k) & 1) && img[k] != t->mpt[l].w[k]) {
						if (differ++ < 4)
							std::printf("rnic-sim %s: icm MPT %u differs from an MPT cache's entry\n",
								    o_.name.c_str(), idx);
						break;
					}
			}
			for (uint32_t l = 0; l < RNIC_TLB_LINES; l++)
				for (uint32_t k = 0; k < RNIC_TLB_ENTRIES; k++) {
					uint32_t line = t->tlb_tag[l] >> TLB_MASK_BITS, img[2];

					if (!((t->tlb_tag[l] >> k) & 1))
						continue;
					entries++;
					std::memcpy(img, drv_.data() + icm_drv(RNIC_ICM_MTT_OFF + (line * RNIC_TLB_ENTRIES + k) *
											   RNIC_ICM_MTT_STRIDE), 8);
					if (std::memcmp(img, &t->tlb[l].w[2 * k], 8) && differ++ < 4)
						std::printf("rnic-sim %s: icm MTT %u differs from a TLB's entry\n", o_.name.c_str(),
							    line * RNIC_TLB_ENTRIES + k);
				}
		}
		cmp("CQC", RNIC_ICM_CQC_OFF, RNIC_ICM_CQC_STRIDE, cq_->ring.cqc, RNIC_MAX_CQ, RNIC_CQC_WORDS * 4, -1);
		cmp("EQC", RNIC_ICM_EQC_OFF, RNIC_ICM_EQC_STRIDE, cq_->write.eqc, RNIC_NUM_CTX, RNIC_EQC_WORDS * 4, -1);
		cmp("SRQC", RNIC_ICM_SRQC_OFF, RNIC_ICM_SRQC_STRIDE, rx_->core.srqc, RNIC_MAX_SRQ, RNIC_SRQC_WORDS * 4,
		    RNIC_SRQC_LIMIT / 4);
		std::printf("rnic-sim %s: icm %llu writes, %llu entries checked against the kernels' tables, %llu differ\n",
			    o_.name.c_str(), static_cast<unsigned long long>(icm_writes_),
			    static_cast<unsigned long long>(entries), static_cast<unsigned long long>(differ));
	}

private:
	/* the frame being sent, the beat received, the firmware's console */
	void ethernet(uint64_t cycle)
	{
#ifndef RNIC_CARD
		if (top_.m_axis_eth_tx_tvalid && top_.m_axis_eth_tx_tready) {
			const uint8_t *d = reinterpret_cast<const uint8_t *>(top_.m_axis_eth_tx_tdata.data());
			uint64_t keep = top_.m_axis_eth_tx_tkeep;
			if ((keep & (keep + 1)) == 0) { /* the bytes from 0 up, as the port sends them */
				tx_frame_.insert(tx_frame_.end(), d, d + __builtin_popcountll(keep));
			} else {
				for (int i = 0; i < 64; i++)
					if ((keep >> i) & 1)
						tx_frame_.push_back(d[i]);
			}
			mac_credit_ -= 64;
			if (top_.m_axis_eth_tx_tlast) {
				/* preamble, FCS, inter-frame gap and padding to the minimum frame */
				mac_credit_ -= eth_.wire_bytes(tx_frame_.size()) - 64.0 * ((tx_frame_.size() + 63) / 64);
				eth_.transmit(cycle + 1, std::move(tx_frame_));
				tx_frame_.clear();
			}
		}
		if (rx_busy_) {
			rx_off_ += 64;
			if (rx_off_ >= rx_frame_.data.size())
				rx_busy_ = false;
		}
#endif
		if (top_.fw_console_valid) {
			char c = static_cast<char>(top_.fw_console_char);
			if (c == '\n') {
				if (!o_.quiet)
					std::printf("[%s fw] %s\n", o_.name.c_str(), console_.c_str());
				std::fflush(stdout);
				console_.clear();
			} else {
				console_ += c;
			}
		}
	}

	/* host processes: messages in; a context whose process went away is reset, and free again
	 * once the NIC says so */
	void hosts(uint64_t cycle)
	{
		host_.poll();
		for (int ctx : host_.gone) {
			if (o_.card_host) {
				std::printf("[%s] the card's host left: power cycle\n", o_.name.c_str());
				power_cycle(cycle);
				continue;
			}
			std::printf("[%s] context %d closed\n", o_.name.c_str(), ctx);
			host_.mmio.push_back({-1, true, RNIC_ADMIN_CTX_RESET, static_cast<uint32_t>(ctx), 0});
			reset_issued_[ctx] = true;
		}
		host_.gone.clear();
		uint32_t issued = 0;
		for (int c = 0; c < RNIC_NUM_CTX; c++)
			issued |= static_cast<uint32_t>(reset_issued_[c]) << c;
		if ((cycle & 4095) == 0 && issued)
			host_.mmio.push_back({-1, false, RNIC_ADMIN_CTX_RESET_PENDING, issued, 0});
	}

	const Opts &o_;
	Top &top_;
	rnic_tx_state_t *tx_ = static_cast<rnic_tx_state_t *>(std::calloc(1, sizeof(rnic_tx_state_t)));
	rnic_rx_state_t *rx_ = static_cast<rnic_rx_state_t *>(std::calloc(1, sizeof(rnic_rx_state_t)));
	rnic_cq_state_t *cq_ = static_cast<rnic_cq_state_t *>(std::calloc(1, sizeof(rnic_cq_state_t)));
	EthPort &eth_;
	HostLink &host_;
	const double pcie_bytes_per_cycle_, line_bytes_per_cycle_;
	const uint64_t rd_latency_;
	std::deque<DmaRead> reads_;
	std::mt19937_64 rd_rng_{o_.faults.seed * 0x9e3779b97f4a7c15ull + 1};
	std::uniform_real_distribution<double> rd_fail_{0, 1};
	bool rd_drive_ = false;
	double rd_free_ = 0, wr_budget_ = 0;
	std::vector<uint8_t> wr_buf_, tx_frame_;
	uint64_t wr_addr_ = 0;
	double mac_credit_ = 0; /* bytes the wire can take: the MAC paces at the line rate */
	EthFrame rx_frame_;
	size_t rx_off_ = 0;
	bool rx_busy_ = false;
	int axi_ = AXI_IDLE;
	MmioOp op_{};
	int push_beat_ = 0;
	bool in_reset_ = true;
#ifdef RNIC_CARD
	static constexpr bool CARD = true;
	Cmac cmac_{o_.name, top_, eth_, o_.link_gbps};
	std::deque<std::pair<uint64_t, uint32_t>> aw_; /* write bursts: address, beats */
	uint32_t bresp_ = 0, w_beat_ = 0;
	uint16_t irq_ack_ = 0;
	bool qspi_aw_ = false, qspi_w_ = false, qspi_r_ = false;

public:
	const Cmac &cmac() const { return cmac_; }

private:
#else
	static constexpr bool CARD = false;
#endif
	std::string console_;
	std::vector<bool> reset_issued_;
	std::vector<uint8_t> drv_ = std::vector<uint8_t>(o_.card_host ? 0 : (RNIC_ICM_CHUNKS + 1) * ICM_CHUNK);
	uint64_t icm_writes_ = 0;

public:
	uint64_t pushes_refused = 0;

private:
	uint64_t reset_end_ = 8; /* RTL reset held until this cycle */
};
/* How deep the firmware's stack went: start.S painted it with STACK_PAINT from the guard band's end
 * (FW.STACK_GUARD + STACK_GUARD_BYTES) to the top of RAM; the lowest word no longer so is the mark. */
void stack_report(const Opts &o, const Top &top)
{
	uint32_t guard = top.SOC(guard_reg), bottom = guard + RNIC_STACK_GUARD_BYTES, a = bottom;

	if (!guard)
		return; /* the firmware never set its guard band */
	while (a < RNIC_FW_RAM_SIZE && top.SOC(ram)[a / 4] == RNIC_STACK_PAINT)
		a += 4;
	std::printf("rnic-sim %s: stack high-water %u of %u bytes\n", o.name.c_str(), RNIC_FW_RAM_SIZE - a,
		    RNIC_FW_RAM_SIZE - bottom);
}
} // namespace

int main(int argc, char **argv)
{
	Opts o = parse(argc, argv);
	Verilated::commandArgs(argc, argv);
	std::signal(SIGINT, on_signal);
	std::signal(SIGTERM, on_signal);
	std::signal(SIGUSR1, on_hot_reset);
	std::signal(SIGPIPE, SIG_IGN);

	std::unique_ptr<EthPort> eth;
	std::unique_ptr<HostLink> host;
	try {
		check_sock_dir(o.sock_dir);
		eth = std::make_unique<EthPort>(o.eth_mode, o.eth_arg,
						static_cast<uint32_t>(o.link_latency_ns / NS_PER_CYCLE),
						o.link_gbps / 8.0 * NS_PER_CYCLE, o.faults, o.pcap, o.snaplen);
		host = std::make_unique<HostLink>(o.sock_dir + "/" + o.name + ".sock", o.card_host ? 1 : RNIC_NUM_CTX,
						  !o.card_host);
	} catch (const std::exception &e) {
		std::cerr << "rnic-sim " << o.name << ": " << e.what() << "\n";
		return 1;
	}

	auto top = std::make_unique<Top>();
	top->strap_mac = o.mac;
	top->strap_ipv4 = o.ip;
	/* each host process DMAs in its own window of bus addresses (the firmware and the soft
	 * core's DMA guard admit no other: FW.DMA_WINDOW), a card's host anywhere */
	top->strap_dma_window = o.card_host ? 0 : RNIC_LINK_BUS_CTX_SHIFT;

	Card card(o, *top, *eth, *host);
	uint64_t cycle = 0;
	auto t0 = std::chrono::steady_clock::now();
	for (; !stop_requested; cycle++) {
		if (hot_reset_requested) {
			hot_reset_requested = 0;
			std::printf("[%s] hot reset\n", o.name.c_str());
			card.hot_reset(cycle);
		}
		card.step(cycle);
	}
	/* asked to stop: the resets of contexts already closed finish first, as on a card the driver
	 * waits for them before it unloads (a peer that stops meanwhile no longer holds the link) */
	for (uint64_t end = cycle + STOP_SETTLE_CYCLES; card.resetting() && cycle < end; cycle++)
		card.step(cycle);
	if (card.resetting())
		std::printf("rnic-sim %s: stopped with a context reset unfinished\n", o.name.c_str());

	double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	double cpu = static_cast<double>(std::clock()) / CLOCKS_PER_SEC;
	top->final();
	/* the processor time says what a cycle costs here, whatever else the machine ran */
	std::printf("rnic-sim %s: %llu cycles, %.2f s wall, %.3f Mcycles/s, %.2f s processor, %.3f us a cycle; "
		    "waited %.2f s for host processes, %.2f s for the link's peer\n",
		    o.name.c_str(), static_cast<unsigned long long>(cycle), wall, cycle / wall / 1e6, cpu,
		    cycle ? cpu * 1e6 / static_cast<double>(cycle) : 0.0, host->waited, eth->waited);
	std::printf("rnic-sim %s: eth tx %llu rx %llu dropped %llu duplicated %llu reordered %llu corrupted %llu "
		    "delayed %llu; dma errors %llu, dropped in teardown %llu, forged answers %llu\n",
		    o.name.c_str(), (unsigned long long)eth->tx_frames, (unsigned long long)eth->rx_frames,
		    (unsigned long long)eth->dropped, (unsigned long long)eth->duplicated,
		    (unsigned long long)eth->reordered, (unsigned long long)eth->corrupted,
		    (unsigned long long)eth->delayed, (unsigned long long)host->dma_errors,
		    (unsigned long long)host->dma_teardown, (unsigned long long)host->forged);
#ifdef RNIC_CARD
	std::printf("rnic-sim %s: cmac %llu clocks (322.27 MHz), tx underflows %llu, bad tkeep %llu, short frames %llu; "
		    "pushes refused %llu\n", o.name.c_str(), (unsigned long long)card.cmac().clocks,
		    (unsigned long long)card.cmac().underflows, (unsigned long long)card.cmac().bad_keep,
		    (unsigned long long)card.cmac().short_frames, (unsigned long long)card.pushes_refused);
#endif
	card.icm_report();
	stack_report(o, *top);
	eth->close();
	return 0;
}
