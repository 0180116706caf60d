// Ethernet backends of rnic-sim.
//
// Direct link: the two simulators exchange, over a Unix stream socket (messages: struct
// ETH_LINK_HDR of spec/rnic.toml, after a HELLO each way that carries the link's version), the
// frames each transmitted with their arrival cycle, and a SYNC message at the end of every
// quantum (= the link latency). A simulator enters quantum k+1 only after the peer's SYNC for quantum k, so a
// frame always arrives in the receiver's future: both run in simulated-time lock-step. A frame
// sent in a quantum arrives after its end, so a quantum's frames go with its SYNC in one write.
// UDP: one Ethernet frame (without FCS) per datagram, as QEMU's -netdev dgram; no time sync.
#include "eth.h"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rnic_spec.h"
#include "wait_timer.h"

namespace {
constexpr size_t HDR = RNIC_ETH_LINK_HDR_SIZE;

void write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = static_cast<const uint8_t *>(p);
	while (n) {
		ssize_t w = ::write(fd, b, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			throw std::runtime_error("link write failed");
		b += w;
		n -= static_cast<size_t>(w);
	}
}

sockaddr_un unix_addr(const std::string &path)
{
	sockaddr_un a{};
	a.sun_family = AF_UNIX;
	if (path.size() >= sizeof(a.sun_path))
		throw std::runtime_error("socket path too long: " + path);
	std::strcpy(a.sun_path, path.c_str());
	return a;
}
} // namespace

EthPort::EthPort(Mode mode, const std::string &arg, uint32_t latency_cycles, double line_bytes_per_cycle,
		 const FaultOpts &f, const std::string &pcap, uint32_t snaplen)
	: mode_(mode), path_(arg), latency_(latency_cycles), line_bytes_per_cycle_(line_bytes_per_cycle),
	  faults_(f), rng_(f.seed), snaplen_(snaplen)
{
	if (!pcap.empty()) {
		pcap_ = std::fopen(pcap.c_str(), "wb");
		if (!pcap_)
			throw std::runtime_error("cannot write " + pcap);
		// nanosecond pcap, LINKTYPE_ETHERNET
		const uint32_t hdr[6] = {0xa1b23c4d, 0x00040002, 0, 0, snaplen, 1};
		std::fwrite(hdr, sizeof(hdr), 1, pcap_);
	}
	if (mode == LISTEN) {
		sockaddr_un a = unix_addr(arg);
		listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
		::unlink(arg.c_str());
		if (::bind(listen_fd_, reinterpret_cast<sockaddr *>(&a), sizeof(a)) || ::listen(listen_fd_, 1))
			throw std::runtime_error("cannot listen on " + arg + ": " + std::strerror(errno));
		fd_ = ::accept(listen_fd_, nullptr, nullptr);
		if (fd_ < 0)
			throw std::runtime_error("link accept failed");
		peer_alive_ = true;
	} else if (mode == CONNECT) {
		sockaddr_un a = unix_addr(arg);
		for (int i = 0; i < 200 && fd_ < 0; i++) {
			int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
			if (::connect(s, reinterpret_cast<sockaddr *>(&a), sizeof(a)) == 0) {
				fd_ = s;
				break;
			}
			::close(s);
			::usleep(50000);
		}
		if (fd_ < 0)
			throw std::runtime_error("no rnic-sim listening on " + arg);
		peer_alive_ = true;
	}
	if (mode == LISTEN || mode == CONNECT) {
		hello();
	} else if (mode == UDP) {
		// LPORT:RHOST:RPORT
		size_t c1 = arg.find(':'), c2 = arg.rfind(':');
		if (c1 == std::string::npos || c1 == c2)
			throw std::runtime_error("--eth-udp wants LPORT:RHOST:RPORT");
		sockaddr_in local{}, remote{};
		local.sin_family = remote.sin_family = AF_INET;
		local.sin_port = htons(static_cast<uint16_t>(std::stoi(arg.substr(0, c1))));
		local.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		remote.sin_port = htons(static_cast<uint16_t>(std::stoi(arg.substr(c2 + 1))));
		if (::inet_pton(AF_INET, arg.substr(c1 + 1, c2 - c1 - 1).c_str(), &remote.sin_addr) != 1)
			throw std::runtime_error("--eth-udp: bad remote address");
		fd_ = ::socket(AF_INET, SOCK_DGRAM, 0);
		// a burst waits in the socket until the simulated wire has carried it (net.core.rmem_max
		// caps this)
		int rcvbuf = 4 << 20;
		::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
		if (::bind(fd_, reinterpret_cast<sockaddr *>(&local), sizeof(local)) ||
		    ::connect(fd_, reinterpret_cast<sockaddr *>(&remote), sizeof(remote)))
			throw std::runtime_error("--eth-udp: " + std::string(std::strerror(errno)));
	}
	next_sync_ = latency_;
}

EthPort::~EthPort()
{
	close();
}

void EthPort::close()
{
	if (fd_ >= 0)
		::close(fd_);
	if (listen_fd_ >= 0) {
		::close(listen_fd_);
		::unlink(path_.c_str());
	}
	fd_ = listen_fd_ = -1;
	peer_alive_ = false;
	if (pcap_)
		std::fclose(pcap_);
	pcap_ = nullptr;
}

size_t EthPort::wire_bytes(size_t len) const
{
	/* preamble + SFD 8, FCS 4, inter-frame gap 12; at least 64 bytes with FCS */
	return (len + 4 < 64 ? 64 : len + 4) + 8 + 12;
}

void EthPort::capture(uint64_t cycle, const std::vector<uint8_t> &f)
{
	if (!pcap_)
		return;
	uint64_t ns = cycle * 4;
	uint32_t cap = static_cast<uint32_t>(std::min<size_t>(f.size(), snaplen_));
	uint32_t rec[4] = {static_cast<uint32_t>(ns / 1000000000u), static_cast<uint32_t>(ns % 1000000000u), cap,
			   static_cast<uint32_t>(f.size())};
	std::fwrite(rec, sizeof(rec), 1, pcap_);
	std::fwrite(f.data(), cap, 1, pcap_);
}

/* Both ends say which version of the link they speak; a peer that speaks another is refused. */
void EthPort::hello()
{
	uint8_t h[HDR];
	size_t got = 0;

	send_msg(RNIC_ETH_LINK_MSG_HELLO, RNIC_ETH_LINK_VERSION, nullptr, 0);
	flush();
	while (got < HDR) {
		pollfd p{fd_, POLLIN, 0};
		ssize_t n = ::poll(&p, 1, 30000) == 1 ? ::read(fd_, h + got, HDR - got) : 0;
		if (n <= 0)
			throw std::runtime_error("the peer on " + path_ + " sent no HELLO");
		got += static_cast<size_t>(n);
	}
	if (RNIC_ETH_LINK_HDR_TYPE_GET(h) != RNIC_ETH_LINK_MSG_HELLO || RNIC_ETH_LINK_HDR_LEN_GET(h) ||
	    RNIC_ETH_LINK_HDR_CYCLE_GET(h) != RNIC_ETH_LINK_VERSION)
		throw std::runtime_error("the peer on " + path_ + " speaks another link (version " +
					 std::to_string(RNIC_ETH_LINK_HDR_CYCLE_GET(h)) + ", this simulator " +
					 std::to_string(RNIC_ETH_LINK_VERSION) + ")");
}

void EthPort::send_msg(uint32_t type, uint64_t cycle, const uint8_t *p, uint32_t len)
{
	uint8_t h[HDR];

	if (!peer_alive_)
		return;
	RNIC_ETH_LINK_HDR_TYPE_SET(h, type);
	RNIC_ETH_LINK_HDR_LEN_SET(h, len);
	RNIC_ETH_LINK_HDR_CYCLE_SET(h, cycle);
	outbuf_.insert(outbuf_.end(), h, h + HDR);
	outbuf_.insert(outbuf_.end(), p, p + len);
}

void EthPort::flush()
{
	if (peer_alive_ && !outbuf_.empty()) {
		try {
			write_all(fd_, outbuf_.data(), outbuf_.size());
		} catch (const std::exception &) {
			peer_alive_ = false;
		}
	}
	outbuf_.clear();
}

void EthPort::wire_out(uint64_t arrival, std::vector<uint8_t> frame)
{
	capture(arrival - latency_, frame);
	tx_frames++;
	if (mode_ == UDP) {
		if (::send(fd_, frame.data(), frame.size(), 0) < 0 && errno != ECONNREFUSED)
			std::perror("rnic-sim: udp send");
	} else if (mode_ == LISTEN || mode_ == CONNECT) {
		send_msg(RNIC_ETH_LINK_MSG_FRAME, arrival, frame.data(), static_cast<uint32_t>(frame.size()));
	}
}

void EthPort::transmit(uint64_t done, std::vector<uint8_t> frame)
{
	std::uniform_real_distribution<double> u(0, 1);
	uint64_t arrival = done + latency_;

	if (faults_.delay_cycles) {
		uint64_t extra = rng_() % (faults_.delay_cycles + 1);
		arrival += extra;
		delayed += extra != 0;
	}

	if (faults_.drop > 0 && u(rng_) < faults_.drop) {
		dropped++;
		return;
	}
	if (faults_.corrupt > 0 && u(rng_) < faults_.corrupt && frame.size() > 14) {
		size_t bit = 14 * 8 + rng_() % ((frame.size() - 14) * 8);
		frame[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
		corrupted++;
	}
	if (held_valid_) {
		// the held frame goes out after this one: a reordering
		wire_out(arrival, frame);
		wire_out(arrival, held_.data);
		held_valid_ = false;
		return;
	}
	if (faults_.reorder > 0 && u(rng_) < faults_.reorder) {
		held_ = {arrival, frame};
		held_valid_ = true;
		reordered++;
		return;
	}
	if (faults_.dup > 0 && u(rng_) < faults_.dup) {
		wire_out(arrival, frame);
		duplicated++;
	}
	wire_out(arrival, std::move(frame));
}

bool EthPort::read_msgs(bool block)
{
	uint8_t buf[65536];
	pollfd p{fd_, POLLIN, 0};

	if (!peer_alive_)
		return false;
	if (::poll(&p, 1, block ? 30000 : 0) <= 0)
		return !block;
	ssize_t n = ::read(fd_, buf, sizeof(buf));
	if (n <= 0) {
		peer_alive_ = false;
		return false;
	}
	inbuf_.insert(inbuf_.end(), buf, buf + n);
	size_t off = 0;
	while (inbuf_.size() - off >= HDR) {
		const uint8_t *h = inbuf_.data() + off;
		uint32_t len = RNIC_ETH_LINK_HDR_LEN_GET(h);
		if (inbuf_.size() - off < HDR + len)
			break;
		if (RNIC_ETH_LINK_HDR_TYPE_GET(h) == RNIC_ETH_LINK_MSG_FRAME)
			rxq_.push_back({RNIC_ETH_LINK_HDR_CYCLE_GET(h), std::vector<uint8_t>(h + HDR, h + HDR + len)});
		else if (RNIC_ETH_LINK_HDR_TYPE_GET(h) == RNIC_ETH_LINK_MSG_SYNC)
			peer_time_ = RNIC_ETH_LINK_HDR_CYCLE_GET(h);
		off += HDR + len;
	}
	inbuf_.erase(inbuf_.begin(), inbuf_.begin() + static_cast<long>(off));
	return true;
}

void EthPort::tick(uint64_t now)
{
	if (mode_ == UDP) {
		if (now % 64)
			return;
		uint8_t buf[16384];
		for (;;) {
			ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
			if (n <= 0)
				break;
			// a burst of datagrams arrives as a real link would deliver it: one frame after
			// the other at the line rate, not faster than the wire could have carried them
			double t = std::max(udp_next_, static_cast<double>(now + 1));
			udp_next_ = t + wire_bytes(static_cast<size_t>(n)) / line_bytes_per_cycle_;
			rxq_.push_back({static_cast<uint64_t>(udp_next_), std::vector<uint8_t>(buf, buf + n)});
		}
		return;
	}
	if ((mode_ != LISTEN && mode_ != CONNECT) || now + 1 < next_sync_)
		return;
	// end of a quantum: tell the peer, then wait until it has finished the same quantum
	if (held_valid_) {
		wire_out(held_.cycle, held_.data);
		held_valid_ = false;
	}
	send_msg(RNIC_ETH_LINK_MSG_SYNC, next_sync_, nullptr, 0);
	flush();
	{
		WaitTimer w(waited);
		while (peer_alive_ && peer_time_ < next_sync_)
			read_msgs(true);
	}
	next_sync_ += latency_;
}

bool EthPort::receive(uint64_t now, EthFrame &f)
{
	if (rxq_.empty() || rxq_.front().cycle > now)
		return false;
	f = std::move(rxq_.front());
	rxq_.pop_front();
	capture(now, f.data);
	rx_frames++;
	return true;
}
