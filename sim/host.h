// PCIe side of rnic-sim: the host link (a Unix stream socket per simulator, one connection per
// host process = one NIC context; or one connection, the card's host: --card-host). Messages:
// struct LINK_HDR of spec/rnic.toml.
#ifndef RNIC_SIM_HOST_H
#define RNIC_SIM_HOST_H

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

struct MmioOp {
	int ctx;          // -1: the simulator itself (privileged)
	bool write;
	uint32_t addr, value, tag;
	std::vector<uint8_t> push; // a WQE pushed to the CTX_SQ_PUSH window at addr (else empty)
};

class HostLink {
public:
	// slots: connections at once (NUM_CTX host processes, or 1: the card's host); processes: each
	// connection a process whose driver the simulator is (ADMIN.CTX_PRIV), not the card's host
	HostLink(const std::string &path, size_t slots, bool processes);
	~HostLink();

	// accept clients and read their messages; MMIO requests are queued in `mmio`
	void poll();
	// DMA read toward the context's process; the data arrives later (see dma_data)
	uint32_t dma_read(int ctx, uint64_t addr, uint32_t len);
	// the bytes of read `id`, blocking until they arrive; false: failed (zeros returned)
	bool dma_data(uint32_t id, std::vector<uint8_t> &out);
	// posted write; writes reach memory in the order issued, whichever process they are for
	void dma_write(int ctx, uint64_t addr, const uint8_t *p, uint32_t len);
	void irq(int ctx, uint32_t vector);
	void mmio_response(int ctx, uint32_t tag, uint32_t value);
	// the NIC was reset: no read or fence of before is waited for
	void forget();
	// deliver the messages queued for the processes (poll does, every 32 cycles)
	void flush();
	bool alive(int ctx) const;

	std::deque<MmioOp> mmio;
	std::vector<int> gone;  // contexts whose process disconnected (to reset)
	// contexts the firmware is still freeing: not handed to a new process until it is done
	std::vector<bool> resetting;
	// DMA to a context whose process is gone: while its reset is under way it is dropped and
	// counted as teardown (the kernel driver keeps a dead process's pages pinned until the card
	// has reset the context: the NIC may still finish what it had started); otherwise an error
	uint64_t dma_errors = 0, dma_teardown = 0;
	uint64_t forged = 0; // answers to reads (or fences) the sending process was not asked for
	double waited = 0;   // wall seconds simulated time stood still for a host process

private:
	struct Client {
		int fd = -1;
		std::vector<uint8_t> in, out;  // read and not yet taken; queued by send()
		int fd_in = -1;            // a descriptor that came with its messages (MMIO_RING's)
		uint8_t *ring = nullptr;   // struct LINK_RING: the process's posted MMIO writes
		uint32_t ring_head = 0;    // ours: the process may scribble on the ring's HEAD
	};
	void drain(int ctx, bool all);
	void map_ring(int ctx);
	void handle(int ctx, const uint8_t *hdr, const uint8_t *payload);
	bool read_client(int ctx, bool block);
	void drop(int ctx);
	void fence(int ctx);
	void lost(int ctx);
	static bool may_bind_low_ports(int fd);
	void set_priv(int ctx, bool on);
	void send(int ctx, uint32_t type, uint64_t addr, uint64_t value, uint32_t tag, uint32_t status,
		  const uint8_t *p, uint32_t len);

	std::string path_;
	bool processes_;
	uint32_t priv_ = 0;                               // ADMIN.CTX_PRIV as we wrote it
	int listen_fd_ = -1;
	std::vector<Client> clients_;
	std::map<uint32_t, std::vector<uint8_t>> done_;   // read id -> data
	std::map<uint32_t, int> pending_;                 // read or fence id -> ctx
	std::vector<bool> unfenced_;                      // written since its last fence
	uint32_t next_id_ = 1;
};

#endif
