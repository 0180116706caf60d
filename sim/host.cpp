// Host link of rnic-sim (docs/ARCHITECTURE.md "Host link").
#include "host.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <stdexcept>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/capability.h>
#include <unistd.h>

#include "rnic_spec.h"
#include "wait_timer.h"

namespace {
bool write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = static_cast<const uint8_t *>(p);
	while (n) {
		ssize_t w = ::send(fd, b, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		b += w;
		n -= static_cast<size_t>(w);
	}
	return true;
}
} // namespace

HostLink::HostLink(const std::string &path, size_t slots, bool processes)
	: resetting(slots), path_(path), processes_(processes), clients_(slots), unfenced_(slots)
{
	sockaddr_un a{};
	a.sun_family = AF_UNIX;
	if (path.size() >= sizeof(a.sun_path))
		throw std::runtime_error("socket path too long: " + path);
	std::strcpy(a.sun_path, path.c_str());
	::unlink(path.c_str());
	listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
	if (::bind(listen_fd_, reinterpret_cast<sockaddr *>(&a), sizeof(a)) || ::listen(listen_fd_, 16))
		throw std::runtime_error("cannot listen on " + path + ": " + std::strerror(errno));
	::fcntl(listen_fd_, F_SETFL, O_NONBLOCK);
}

HostLink::~HostLink()
{
	for (size_t ctx = 0; ctx < clients_.size(); ctx++)
		if (clients_[ctx].fd >= 0)
			drop(static_cast<int>(ctx));
	::close(listen_fd_);
	::unlink(path_.c_str());
}

bool HostLink::alive(int ctx) const
{
	return ctx >= 0 && ctx < static_cast<int>(clients_.size()) && clients_[ctx].fd >= 0;
}

void HostLink::send(int ctx, uint32_t type, uint64_t addr, uint64_t value, uint32_t tag, uint32_t status,
		    const uint8_t *p, uint32_t len)
{
	uint8_t h[RNIC_LINK_HDR_SIZE] = {};

	if (!alive(ctx))
		return;
	RNIC_LINK_HDR_TYPE_SET(h, type);
	RNIC_LINK_HDR_LEN_SET(h, len);
	RNIC_LINK_HDR_ADDR_SET(h, addr);
	RNIC_LINK_HDR_VALUE_SET(h, value);
	RNIC_LINK_HDR_TAG_SET(h, tag);
	RNIC_LINK_HDR_STATUS_SET(h, status);
	std::vector<uint8_t> &out = clients_[ctx].out;
	out.insert(out.end(), h, h + sizeof(h));
	out.insert(out.end(), p, p + len);
	if (type == RNIC_LINK_MSG_MMIO_RD_RESP || type == RNIC_LINK_MSG_HELLO_ACK)
		flush(); /* a thread waits for it (behind the writes queued before: PCIe keeps the order) */
}

/* What send() queued, a write a process: every poll (32 cycles), before time stands still for a
 * process's answer, and with an answer a process waits for */
void HostLink::flush()
{
	for (size_t ctx = 0; ctx < clients_.size(); ctx++) {
		Client &c = clients_[ctx];

		if (c.fd >= 0 && !c.out.empty() && !write_all(c.fd, c.out.data(), c.out.size()))
			drop(static_cast<int>(ctx));
		c.out.clear();
	}
}

/* Whether the process at the other end of the socket has CAP_NET_BIND_SERVICE (CapEff of its
 * /proc status): what Linux asks of an rdma_cm listener on a port below 1024 */
bool HostLink::may_bind_low_ports(int fd)
{
	struct ucred cr{};
	socklen_t n = sizeof(cr);
	char path[64], line[256];
	bool yes = false;

	if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &n))
		return false;
	std::snprintf(path, sizeof(path), "/proc/%d/status", static_cast<int>(cr.pid));
	FILE *f = std::fopen(path, "r");
	if (!f)
		return false;
	while (std::fgets(line, sizeof(line), f))
		if (!std::strncmp(line, "CapEff:", 7))
			yes = std::strtoull(line + 7, nullptr, 16) >> CAP_NET_BIND_SERVICE & 1;
	std::fclose(f);
	return yes;
}

/* ADMIN.CTX_PRIV: the simulator is the driver of its host processes */
void HostLink::set_priv(int ctx, bool on)
{
	priv_ = on ? priv_ | 1u << ctx : priv_ & ~(1u << ctx);
	mmio.push_back({-1, true, RNIC_ADMIN_CTX_PRIV, priv_, 0});
}

void HostLink::drop(int ctx)
{
	Client &c = clients_[ctx];

	::close(c.fd);
	c.fd = -1;
	c.in.clear();
	c.out.clear();
	if (c.fd_in >= 0)
		::close(c.fd_in);
	c.fd_in = -1;
	if (c.ring)
		::munmap(c.ring, RNIC_LINK_RING_SIZE);
	c.ring = nullptr;
	c.ring_head = 0;
	gone.push_back(ctx);
	resetting[ctx] = true;
	if (processes_ && priv_ >> ctx & 1)
		set_priv(ctx, false);
	for (auto &p : pending_)
		if (p.second == ctx)
			p.second = -1;
}

void HostLink::handle(int ctx, const uint8_t *h, const uint8_t *payload)
{
	uint32_t type = RNIC_LINK_HDR_TYPE_GET(h), len = RNIC_LINK_HDR_LEN_GET(h), tag = RNIC_LINK_HDR_TAG_GET(h);

	switch (type) {
	case RNIC_LINK_MSG_HELLO:
		if (RNIC_LINK_HDR_VALUE_GET(h) != RNIC_LINK_VERSION) {
			send(ctx, RNIC_LINK_MSG_HELLO_ACK, 0, 0, tag, 1, nullptr, 0);
			drop(ctx);
			break;
		}
		send(ctx, RNIC_LINK_MSG_HELLO_ACK, 0, static_cast<uint64_t>(ctx), tag, 0, nullptr, 0);
		if (processes_)
			set_priv(ctx, may_bind_low_ports(clients_[ctx].fd));
		break;
	case RNIC_LINK_MSG_MMIO_RING:
		map_ring(ctx);
		break;
	case RNIC_LINK_MSG_MMIO_WR:
		drain(ctx, true);
		mmio.push_back({ctx, true, static_cast<uint32_t>(RNIC_LINK_HDR_ADDR_GET(h)),
				static_cast<uint32_t>(RNIC_LINK_HDR_VALUE_GET(h)), tag});
		break;
	case RNIC_LINK_MSG_MMIO_RD:
		drain(ctx, true); /* a read does not pass the writes posted before it (PCIe ordering) */
		mmio.push_back({ctx, false, static_cast<uint32_t>(RNIC_LINK_HDR_ADDR_GET(h)), 0, tag});
		break;
	case RNIC_LINK_MSG_DMA_RD_RESP: {
		/* only the process that was asked answers a read */
		auto it = pending_.find(tag);
		if (it == pending_.end() || it->second != ctx) {
			forged++;
			break;
		}
		pending_.erase(it);
		if (RNIC_LINK_HDR_STATUS_GET(h)) {
			dma_errors++; /* the process refused it: outside what it mapped */
			done_[tag] = {};
		} else {
			done_[tag] = std::vector<uint8_t>(payload, payload + len);
		}
		break;
	}
	case RNIC_LINK_MSG_FENCE_ACK: {
		auto it = pending_.find(tag);
		if (it != pending_.end() && it->second == ctx)
			pending_.erase(it);
		break;
	}
	case RNIC_LINK_MSG_BYE:
		drop(ctx);
		break;
	default:
		break;
	}
}

/* The ring a process sent (its memfd came with the message), mapped once per connection */
void HostLink::map_ring(int ctx)
{
	Client &c = clients_[ctx];
	struct stat st{};
	void *m = MAP_FAILED;

	/* a memfd that can no longer shrink: one the process could truncate under our mapping would
	 * make our next access to it a SIGBUS */
	if (c.fd_in >= 0 && !c.ring && !::fstat(c.fd_in, &st) && st.st_size >= RNIC_LINK_RING_SIZE &&
	    (::fcntl(c.fd_in, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_SEAL)) == (F_SEAL_SHRINK | F_SEAL_SEAL))
		m = ::mmap(nullptr, RNIC_LINK_RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, c.fd_in, 0);
	if (c.fd_in >= 0)
		::close(c.fd_in);
	c.fd_in = -1;
	if (m == MAP_FAILED) {
		drop(ctx); /* a process that cannot post writes cannot use the NIC */
		return;
	}
	c.ring = static_cast<uint8_t *>(m);
	c.ring_head = 0;
}

/* Move the process's posted writes, in slot order, to the MMIO queue. all: also wait for slots
 * claimed but not yet published (a thread between its claim and its SEQ store), as before a read. */
void HostLink::drain(int ctx, bool all)
{
	Client &c = clients_[ctx];
	const uint32_t mask = (1u << RNIC_LINK_RING_LOG) - 1;

	if (!c.ring)
		return;
	uint32_t tail = __atomic_load_n(reinterpret_cast<uint32_t *>(c.ring + RNIC_LINK_RING_TAIL_OFF), __ATOMIC_ACQUIRE);
	for (uint32_t n = 0, spins = 0; n <= mask;) {
		const uint8_t *e = c.ring + RNIC_LINK_RING_ENTRIES_OFF + (c.ring_head & mask) * RNIC_LINK_RING_ENTRY_SIZE;
		uint32_t seq = __atomic_load_n(reinterpret_cast<const uint32_t *>(e + RNIC_LINK_RING_ENTRY_SEQ_OFF),
					       __ATOMIC_ACQUIRE);
		if (seq != c.ring_head + 1) {
			/* a producer that never publishes (it died mid-store) is waited on for a while only */
			if (!all || c.ring_head == tail || tail - c.ring_head > mask + 1 || ++spins > 100000)
				break;
			sched_yield();
			continue;
		}
		uint32_t len = RNIC_LINK_RING_ENTRY_LEN_GET(e);
		MmioOp op{ctx, true, RNIC_LINK_RING_ENTRY_ADDR_GET(e), RNIC_LINK_RING_ENTRY_VALUE_GET(e), 0, {}};
		bool push = len >= RNIC_BEAT_BYTES && len <= RNIC_WQE_BYTES && len % 16 == 0;
		if (push) {
			op.push.assign(e + RNIC_LINK_RING_ENTRY_DATA_OFF, e + RNIC_LINK_RING_ENTRY_DATA_OFF + len);
			op.push.resize(RNIC_WQE_BYTES); /* the rest of the WQE: zeros */
		}
		if (len == 0 || push)
			mmio.push_back(std::move(op));
		else
			forged++; /* no write of that size */
		c.ring_head++;
		n++;
		__atomic_store_n(reinterpret_cast<uint32_t *>(c.ring + RNIC_LINK_RING_HEAD_OFF), c.ring_head,
				 __ATOMIC_RELEASE);
	}
}

bool HostLink::read_client(int ctx, bool block)
{
	uint8_t buf[65536];
	alignas(cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
	Client &c = clients_[ctx];
	pollfd p{c.fd, POLLIN, 0};
	iovec iov{buf, sizeof(buf)};
	msghdr m{};

	if (::poll(&p, 1, block ? 30000 : 0) <= 0)
		return false;
	m.msg_iov = &iov;
	m.msg_iovlen = 1;
	m.msg_control = cbuf;
	m.msg_controllen = sizeof(cbuf);
	ssize_t n = ::recvmsg(c.fd, &m, MSG_CMSG_CLOEXEC);
	if (n <= 0) {
		drop(ctx);
		return false;
	}
	for (cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
		if (h->cmsg_level != SOL_SOCKET || h->cmsg_type != SCM_RIGHTS)
			continue;
		int fd;
		std::memcpy(&fd, CMSG_DATA(h), sizeof(fd));
		if (c.fd_in >= 0)
			::close(c.fd_in); /* one ring per process: a second descriptor replaces an unused one */
		c.fd_in = fd;
	}
	c.in.insert(c.in.end(), buf, buf + n);
	size_t off = 0;
	while (c.fd >= 0 && c.in.size() - off >= RNIC_LINK_HDR_SIZE) {
		uint32_t len = RNIC_LINK_HDR_LEN_GET(c.in.data() + off);
		if (len > RNIC_LINK_MAX_PAYLOAD) {
			drop(ctx);
			return false;
		}
		if (c.in.size() - off < RNIC_LINK_HDR_SIZE + len)
			break;
		handle(ctx, c.in.data() + off, c.in.data() + off + RNIC_LINK_HDR_SIZE);
		off += RNIC_LINK_HDR_SIZE + len;
	}
	if (c.fd >= 0)
		c.in.erase(c.in.begin(), c.in.begin() + static_cast<long>(off));
	return true;
}

void HostLink::poll()
{
	/* one system call tells which sockets have something: new processes, messages */
	pollfd p[1 + RNIC_NUM_CTX];
	int ctx_of[1 + RNIC_NUM_CTX];
	nfds_t n = 1;

	flush();
	p[0] = {listen_fd_, POLLIN, 0};
	for (size_t ctx = 0; ctx < clients_.size() && n < 1 + RNIC_NUM_CTX; ctx++) {
		if (clients_[ctx].fd >= 0) {
			p[n] = {clients_[ctx].fd, POLLIN, 0};
			ctx_of[n++] = static_cast<int>(ctx);
		}
	}
	if (::poll(p, n, 0) < 0)
		n = 1, p[0].revents = 0;
	for (size_t ctx = 0; ctx < clients_.size(); ctx++)
		drain(static_cast<int>(ctx), false);
	for (nfds_t i = 1; i < n; i++)
		if (p[i].revents)
			while (clients_[ctx_of[i]].fd >= 0 && read_client(ctx_of[i], false))
				;
	for (; p[0].revents;) {
		size_t ctx = 0, live = 0;
		while (ctx < clients_.size() && (clients_[ctx].fd >= 0 || resetting[ctx]))
			ctx++;
		for (const Client &c : clients_)
			live += c.fd >= 0;
		/* a context whose process just left is being reset (the card's host: power-cycled): the
		 * next process waits in the backlog until it is free, rather than being turned away */
		if (ctx == clients_.size() && live < clients_.size())
			break;
		int fd = ::accept(listen_fd_, nullptr, nullptr);
		if (fd < 0)
			break;
		if (ctx == clients_.size()) {
			::close(fd); // every context is taken
			continue;
		}
		clients_[ctx].fd = fd;
	}
}

uint32_t HostLink::dma_read(int ctx, uint64_t addr, uint32_t len)
{
	uint32_t id = next_id_++;

	if (!alive(ctx)) {
		lost(ctx);
		done_[id] = {};
		return id;
	}
	pending_[id] = ctx;
	send(ctx, RNIC_LINK_MSG_DMA_RD, addr, len, id, 0, nullptr, 0);
	return id;
}

bool HostLink::dma_data(uint32_t id, std::vector<uint8_t> &out)
{
	for (;;) {
		auto d = done_.find(id);
		if (d != done_.end()) {
			out = std::move(d->second);
			done_.erase(d);
			return !out.empty();
		}
		auto p = pending_.find(id);
		if (p == pending_.end() || p->second < 0 || !alive(p->second)) {
			/* its process died with the read outstanding: a teardown */
			if (p != pending_.end())
				pending_.erase(p);
			dma_teardown++;
			out.clear();
			return false;
		}
		// simulated time stands still until the host process answers
		flush();
		bool got;
		{
			WaitTimer w(waited);
			got = read_client(p->second, true);
		}
		if (!got && alive(p->second))
			continue;
	}
}

void HostLink::forget()
{
	pending_.clear();
	done_.clear();
}

void HostLink::lost(int ctx)
{
	if (ctx >= 0 && ctx < static_cast<int>(resetting.size()) && resetting[ctx])
		dma_teardown++;
	else
		dma_errors++;
}

/* Simulated time stands still until ctx's process has applied every write sent to it. */
void HostLink::fence(int ctx)
{
	uint32_t id = next_id_++;

	unfenced_[ctx] = false;
	if (!alive(ctx))
		return;
	pending_[id] = ctx;
	send(ctx, RNIC_LINK_MSG_FENCE, 0, 0, id, 0, nullptr, 0);
	flush();
	{
		WaitTimer w(waited);
		while (pending_.count(id) && alive(ctx))
			read_client(ctx, true);
	}
	pending_.erase(id);
}

/* Each process applies its own writes in order; PCIe orders them across processes too: a CQE in
 * one process's memory may vouch for data written into another's (a loopback WRITE between two
 * contexts). So a write waits until the processes written before have applied theirs. */
void HostLink::dma_write(int ctx, uint64_t addr, const uint8_t *p, uint32_t len)
{
	if (!alive(ctx)) {
		lost(ctx);
		return;
	}
	for (int c = 0; c < static_cast<int>(unfenced_.size()); c++)
		if (unfenced_[c] && c != ctx)
			fence(c);
	unfenced_[ctx] = true;
	send(ctx, RNIC_LINK_MSG_DMA_WR, addr, 0, 0, 0, p, len);
}

void HostLink::irq(int ctx, uint32_t vector)
{
	send(ctx, RNIC_LINK_MSG_IRQ, 0, vector, 0, 0, nullptr, 0);
}

void HostLink::mmio_response(int ctx, uint32_t tag, uint32_t value)
{
	send(ctx, RNIC_LINK_MSG_MMIO_RD_RESP, 0, value, tag, 0, nullptr, 0);
}
