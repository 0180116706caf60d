// rnic-card-sim's model of the CMAC (PG203, the 100G MAC of UltraScale+) as the card's RTL sees it:
// its AXI4-Stream user ports in their own clock, gt_txusrclk2 at 322.265625 MHz (the same clock
// drives rx_clk: rnic_card_top.sv). Transmit: tready paces the line rate, and the checks the MAC's
// guide states: once a frame's first beat is taken, tvalid stays high until tlast (else the MAC
// underflows and sends the frame corrupted), tkeep all ones but on the last beat, and no frame
// shorter than 60 bytes (the NIC pads). Receive: a frame's beats on consecutive clocks, never
// waiting (rx_axis has no tready), frames at the times the link delivers them.
#ifndef RNIC_SIM_CARD_MODELS_H
#define RNIC_SIM_CARD_MODELS_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "Vrnic_card.h"
#include "eth.h"
#include "rnic_spec.h"

class Cmac {
public:
	static constexpr double MHZ = 322.265625;

	Cmac(const std::string &name, Vrnic_card &top, EthPort &eth, double gbps)
		: name_(name), top_(top), eth_(eth), line_bytes_per_clock_(gbps / 8.0 * 1000.0 / MHZ)
	{
	}

	// the MAC's clock edges up to the NIC's edge at `cycle` (RNIC_CLOCK_MHZ)
	void run_to(uint64_t cycle, bool reset)
	{
		for (; t_ns_ <= static_cast<double>(cycle) * (1000.0 / RNIC_CLOCK_MHZ); t_ns_ += 1000.0 / MHZ)
			edge(cycle, reset);
	}

	// the MAC was reset with the card: what was under way is gone
	void reset()
	{
		frame_.clear();
		in_frame_ = rx_busy_ = false;
	}

	uint64_t underflows = 0, bad_keep = 0, short_frames = 0, clocks = 0;

private:
	void edge(uint64_t cycle, bool reset)
	{
		clocks++;
		top_.eth_tx_rst = top_.eth_rx_rst = reset;
		credit_ = std::min(credit_ + line_bytes_per_clock_, 128.0);
		top_.tx_axis_tready = !reset && credit_ >= 64;
		if (!rx_busy_ && !reset && eth_.receive(cycle, rx_)) {
			rx_busy_ = true;
			rx_off_ = 0;
		}
		top_.rx_axis_tvalid = rx_busy_;
		top_.rx_axis_tuser = 0;
		if (rx_busy_) {
			uint8_t beat[64] = {};
			size_t n = std::min<size_t>(64, rx_.data.size() - rx_off_);
			std::memcpy(beat, rx_.data.data() + rx_off_, n);
			std::memcpy(top_.rx_axis_tdata.data(), beat, 64);
			top_.rx_axis_tkeep = n == 64 ? ~0ull : (1ull << n) - 1;
			top_.rx_axis_tlast = rx_off_ + n >= rx_.data.size();
		}
		top_.eth_tx_clk = top_.eth_rx_clk = 0;
		top_.eval();
		transmit(cycle);
		if (rx_busy_) {
			rx_off_ += 64;
			rx_busy_ = rx_off_ < rx_.data.size();
		}
		top_.eth_tx_clk = top_.eth_rx_clk = 1;
		top_.eval();
	}

	void transmit(uint64_t cycle)
	{
		if (in_frame_ && !top_.tx_axis_tvalid && underflows++ < 4)
			std::fprintf(stderr, "rnic-sim %s: CMAC underflow: tx_axis_tvalid dropped inside a frame\n",
				     name_.c_str());
		if (!top_.tx_axis_tvalid || !top_.tx_axis_tready)
			return;
		const uint8_t *d = reinterpret_cast<const uint8_t *>(top_.tx_axis_tdata.data());
		uint64_t keep = top_.tx_axis_tkeep;
		bool last = top_.tx_axis_tlast;
		if ((last ? (keep & (keep + 1)) != 0 || !keep : keep != ~0ull) && bad_keep++ < 4)
			std::fprintf(stderr, "rnic-sim %s: CMAC: tx_axis_tkeep %016llx on a %s beat\n", name_.c_str(),
				     static_cast<unsigned long long>(keep), last ? "last" : "middle");
		frame_.insert(frame_.end(), d, d + __builtin_popcountll(keep));
		credit_ -= 64;
		in_frame_ = !last;
		if (last) {
			if (frame_.size() < 60 && short_frames++ < 4)
				std::fprintf(stderr, "rnic-sim %s: CMAC: a %zu-byte frame (60 at least)\n", name_.c_str(),
					     frame_.size());
			credit_ -= eth_.wire_bytes(frame_.size()) - 64.0 * ((frame_.size() + 63) / 64);
			eth_.transmit(cycle, std::move(frame_));
			frame_.clear();
		}
	}

	const std::string name_;
	Vrnic_card &top_;
	EthPort &eth_;
	const double line_bytes_per_clock_;
	double t_ns_ = 0, credit_ = 0;
	std::vector<uint8_t> frame_;
	bool in_frame_ = false, rx_busy_ = false;
	EthFrame rx_;
	size_t rx_off_ = 0;
};

#endif
