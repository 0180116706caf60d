// Ethernet side of rnic-sim: the 100G MAC model (pacing), the link backends (direct link to
// another rnic-sim in lock-step, or UDP datagrams), fault injection and pcap capture.
#ifndef RNIC_SIM_ETH_H
#define RNIC_SIM_ETH_H

#include <cstdint>
#include <cstdio>
#include <deque>
#include <random>
#include <string>
#include <vector>

struct EthFrame {
	uint64_t cycle; // arrival cycle at the receiving MAC
	std::vector<uint8_t> data;
};

struct FaultOpts {
	double drop = 0, dup = 0, reorder = 0, corrupt = 0;
	uint32_t delay_cycles = 0; /* extra latency, uniform in [0, delay_cycles] per frame */
	uint64_t seed = 1;
};

class EthPort {
public:
	enum Mode { NONE, LISTEN, CONNECT, UDP };

	EthPort(Mode mode, const std::string &arg, uint32_t latency_cycles, double line_bytes_per_cycle,
		const FaultOpts &f, const std::string &pcap, uint32_t snaplen);
	~EthPort();

	// a frame left the NIC at cycle `done` (its last byte on the wire)
	void transmit(uint64_t done, std::vector<uint8_t> frame);
	// bytes a frame of `len` bytes occupies on the wire
	size_t wire_bytes(size_t len) const;
	// end of cycle `now`: exchange with the peer (lock-step at quantum boundaries)
	void tick(uint64_t now);
	// the next received frame due at or before `now`, if any
	bool receive(uint64_t now, EthFrame &f);
	void close();

	uint64_t tx_frames = 0, rx_frames = 0, dropped = 0, duplicated = 0, reordered = 0, corrupted = 0, delayed = 0;
	double waited = 0; // wall seconds spent waiting for the peer at the ends of quanta

private:
	void hello();
	void send_msg(uint32_t type, uint64_t cycle, const uint8_t *p, uint32_t len); // queued
	void flush();  // what send_msg queued, in one write
	bool read_msgs(bool block);
	void capture(uint64_t cycle, const std::vector<uint8_t> &f);
	void wire_out(uint64_t arrival, std::vector<uint8_t> frame);

	Mode mode_;
	int fd_ = -1, listen_fd_ = -1;
	std::string path_;
	uint32_t latency_;
	double line_bytes_per_cycle_;
	double udp_next_ = 0;  // UDP: the cycle the wire is free for the next received frame
	FaultOpts faults_;
	std::mt19937_64 rng_;
	std::deque<EthFrame> rxq_;
	std::vector<uint8_t> inbuf_, outbuf_;
	uint64_t peer_time_ = 0, next_sync_ = 0;
	bool peer_alive_ = false;
	bool held_valid_ = false;
	EthFrame held_;
	FILE *pcap_ = nullptr;
	uint32_t snaplen_;   // bytes of each frame captured
};

#endif
