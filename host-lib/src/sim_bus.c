/* Simulator backend: MMIO over the host link, and a service thread that plays the host side of
 * PCIe — it answers the NIC's DMA reads and applies its DMA writes, but only inside memory this
 * process mapped (rings and registered MRs), like an IOMMU: nothing else is ever touched. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sim_bus.h"

#define BUS_VA_MASK ((1ull << RNIC_LINK_BUS_CTX_SHIFT) - 1)
/* RNIC_SIM_SCATTER=1: a card's host pins registered memory in pages scattered over physical
 * memory, and its MR then takes an MTT entry per 4 KiB page. The simulated host gives such
 * memory bus addresses of their own (this bit) with each pair of 4 KiB pages swapped, so no two
 * pages are adjacent on the bus and every page's translation is used and checked. */
#define BUS_SCATTER (1ull << 52)
#define SCATTER_SWAP 4096ull

static int write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n) {
		ssize_t w = send(fd, b, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	uint8_t *b = p;

	while (n) {
		ssize_t r = read(fd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static void msg(struct sim_bus *b, uint32_t type, uint64_t addr, uint64_t value, uint32_t tag, uint32_t status,
		const void *payload, uint32_t len)
{
	uint8_t h[RNIC_LINK_HDR_SIZE] = {0};

	RNIC_LINK_HDR_TYPE_SET(h, type);
	RNIC_LINK_HDR_LEN_SET(h, len);
	RNIC_LINK_HDR_ADDR_SET(h, addr);
	RNIC_LINK_HDR_VALUE_SET(h, value);
	RNIC_LINK_HDR_TAG_SET(h, tag);
	RNIC_LINK_HDR_STATUS_SET(h, status);
	pthread_mutex_lock(&b->send_lock);
	if (write_all(b->fd, h, sizeof(h)) || (len && write_all(b->fd, payload, len)))
		b->alive = 0;
	pthread_mutex_unlock(&b->send_lock);
}

/* the host virtual address of a DMA, if [bus, bus + len) lies inside one mapped range; a read
 * (line 64) may take the rest of the 64-byte lines at a range's ends, as a card's DMA reads whole
 * beats of pages the IOMMU maps whole (rnic-card-sim), a write never */
static uint8_t *dma_target(struct sim_bus *b, uint64_t bus, uint32_t len, uint64_t line)
{
	int scattered = !!(bus & BUS_SCATTER);
	uint64_t va = bus & BUS_VA_MASK & ~BUS_SCATTER;
	uint8_t *p = NULL;
	uint32_t i;

	if ((bus >> RNIC_LINK_BUS_CTX_SHIFT) != b->ctx + 1ull)
		return NULL;
	if (scattered) { /* one page: the next bus page is not the next virtual one */
		va ^= SCATTER_SWAP;
		if ((va & 4095) + len > 4096)
			va = 0;
	}
	pthread_mutex_lock(&b->lock);
	for (i = 0; i < b->nranges; i++)
		if (b->ranges[i].scattered == scattered && va >= (b->ranges[i].start & ~(line - 1)) &&
		    va + len <= ((b->ranges[i].end + line - 1) & ~(line - 1)) && va + len >= va)
			p = (uint8_t *)(uintptr_t)va;
	if (!p)
		b->refused++;
	pthread_mutex_unlock(&b->lock);
	return p;
}

/* an MSI-X message: wake whoever serves the vector (eventfd counter) */
static void irq(struct sim_bus *b)
{
	uint64_t one = 1;

	if (write(b->irq_fd, &one, sizeof(one)) != sizeof(one))
		return; /* the counter is saturated: a wake-up is already pending */
}

static void *service(void *arg)
{
	struct sim_bus *b = arg;
	uint8_t h[RNIC_LINK_HDR_SIZE];
	static __thread uint8_t buf[RNIC_LINK_MAX_PAYLOAD];
	uint8_t *p;

	for (;;) {
		uint32_t type, len, tag;
		uint64_t addr, value;

		if (read_all(b->fd, h, sizeof(h)))
			break;
		type = RNIC_LINK_HDR_TYPE_GET(h);
		len = RNIC_LINK_HDR_LEN_GET(h);
		addr = RNIC_LINK_HDR_ADDR_GET(h);
		value = RNIC_LINK_HDR_VALUE_GET(h);
		tag = RNIC_LINK_HDR_TAG_GET(h);
		if (len > RNIC_LINK_MAX_PAYLOAD || (len && read_all(b->fd, buf, len)))
			break;
		switch (type) {
		case RNIC_LINK_MSG_DMA_RD:
			if (value > RNIC_LINK_MAX_PAYLOAD || !(p = dma_target(b, addr, (uint32_t)value, 64)))
				msg(b, RNIC_LINK_MSG_DMA_RD_RESP, addr, 0, tag, 1, NULL, 0);
			else
				msg(b, RNIC_LINK_MSG_DMA_RD_RESP, addr, 0, tag, 0, p, (uint32_t)value);
			break;
		case RNIC_LINK_MSG_DMA_WR:
			p = dma_target(b, addr, len, 1);
			if (!p)
				break;
			/* in increasing address order, the last 8 bytes (owner bytes) last */
			if (len > 8)
				memcpy(p, buf, len - 8);
			__atomic_thread_fence(__ATOMIC_RELEASE);
			memcpy(p + (len > 8 ? len - 8 : 0), buf + (len > 8 ? len - 8 : 0), len > 8 ? 8 : len);
			__atomic_add_fetch(&b->dma_seq, 1, __ATOMIC_SEQ_CST);
			if (__atomic_load_n(&b->idlers, __ATOMIC_SEQ_CST))
				syscall(SYS_futex, &b->dma_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
			break;
		case RNIC_LINK_MSG_MMIO_RD_RESP:
			pthread_mutex_lock(&b->lock);
			b->resp_tag = tag;
			b->resp_value = (uint32_t)value;
			b->resp_ready = 1;
			pthread_cond_broadcast(&b->cond);
			pthread_mutex_unlock(&b->lock);
			break;
		case RNIC_LINK_MSG_FENCE: /* every earlier write is in memory */
			msg(b, RNIC_LINK_MSG_FENCE_ACK, 0, 0, tag, 0, NULL, 0);
			break;
		case RNIC_LINK_MSG_IRQ:
			__atomic_add_fetch(&b->irqs, 1, __ATOMIC_RELAXED);
			irq(b);
			break;
		default:
			break;
		}
	}
	pthread_mutex_lock(&b->lock);
	b->alive = 0;
	pthread_cond_broadcast(&b->cond);
	pthread_mutex_unlock(&b->lock);
	irq(b);
	return NULL;
}

static uint32_t sim_mmio_read(void *bus, uint32_t off)
{
	struct sim_bus *b = bus;
	uint32_t tag, v = 0xffffffff; /* what a vanished PCIe device reads as */

	pthread_mutex_lock(&b->rd_lock); /* one read in flight */
	pthread_mutex_lock(&b->lock);
	tag = ++b->rd_tag;
	b->resp_ready = 0;
	pthread_mutex_unlock(&b->lock);
	msg(b, RNIC_LINK_MSG_MMIO_RD, off, 0, tag, 0, NULL, 0);
	pthread_mutex_lock(&b->lock);
	while (b->alive && !(b->resp_ready && b->resp_tag == tag))
		pthread_cond_wait(&b->cond, &b->lock);
	if (b->resp_ready && b->resp_tag == tag)
		v = b->resp_value;
	pthread_mutex_unlock(&b->lock);
	pthread_mutex_unlock(&b->rd_lock);
	return v;
}

/* the ring is full: the simulator takes some every few clocks */
__attribute__((noinline, cold)) void sim_ring_wait(struct sim_bus *b, uint32_t slot)
{
	while (sim_ring_full(b->ring, slot) && __atomic_load_n(&b->alive, __ATOMIC_RELAXED))
		sched_yield();
}

static void sim_mmio_write(void *bus, uint32_t off, uint32_t val)
{
	sim_ring_write(bus, off, val);
}

/* Make the posted-write ring and hand it to the simulator (its memfd over the socket) */
static int ring_open(struct sim_bus *b)
{
	uint8_t h[RNIC_LINK_HDR_SIZE] = {0};
	char cbuf[CMSG_SPACE(sizeof(int))] = {0};
	struct iovec iov = {h, sizeof(h)};
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	int fd = memfd_create("rnic-mmio-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING), ret = 0;

	if (fd < 0)
		return -errno;
	/* sealed at its size: the simulator maps only a ring that cannot shrink under it */
	if (ftruncate(fd, RNIC_LINK_RING_SIZE) || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) ||
	    (b->ring = mmap(NULL, RNIC_LINK_RING_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		ret = -errno;
		b->ring = NULL;
		close(fd);
		return ret;
	}
	RNIC_LINK_HDR_TYPE_SET(h, RNIC_LINK_MSG_MMIO_RING);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	if (sendmsg(b->fd, &m, MSG_NOSIGNAL) != sizeof(h))
		ret = -ENODEV;
	close(fd);
	return ret;
}

static int add_range(struct sim_bus *b, uint64_t start, uint64_t end, int scattered)
{
	int ret = 0;

	pthread_mutex_lock(&b->lock);
	if (b->nranges == b->cap) {
		uint32_t cap = b->cap ? 2 * b->cap : 16;
		struct sim_range *r = realloc(b->ranges, cap * sizeof(*r));

		if (!r) {
			ret = -ENOMEM;
			goto out;
		}
		b->ranges = r;
		b->cap = cap;
	}
	b->ranges[b->nranges++] = (struct sim_range){start, end, scattered};
out:
	pthread_mutex_unlock(&b->lock);
	return ret;
}

static void del_range(struct sim_bus *b, uint64_t start, uint64_t end, int scattered)
{
	uint32_t i;

	pthread_mutex_lock(&b->lock);
	for (i = 0; i < b->nranges; i++) {
		if (b->ranges[i].start == start && b->ranges[i].end == end && b->ranges[i].scattered == scattered) {
			b->ranges[i] = b->ranges[--b->nranges];
			break;
		}
	}
	pthread_mutex_unlock(&b->lock);
}

static uint64_t bus_addr(struct sim_bus *b, uint64_t va)
{
	return ((uint64_t)(b->ctx + 1) << RNIC_LINK_BUS_CTX_SHIFT) | va;
}

static void *sim_dma_alloc(void *bus, size_t size, uint64_t *bus_addr_out)
{
	struct sim_bus *b = bus;
	void *p;

	size = (size + 4095) & ~(size_t)4095;
	if (posix_memalign(&p, 4096, size))
		return NULL;
	memset(p, 0, size);
	if (add_range(b, (uintptr_t)p, (uintptr_t)p + size, 0)) {
		free(p);
		return NULL;
	}
	*bus_addr_out = bus_addr(b, (uintptr_t)p);
	return p;
}

static void sim_dma_free(void *bus, void *cpu, size_t size)
{
	size = (size + 4095) & ~(size_t)4095;
	del_range(bus, (uintptr_t)cpu, (uintptr_t)cpu + size, 0);
	free(cpu);
}

static int sim_dma_map(void *bus, void *va, size_t len, uint64_t *pages, uint32_t npages)
{
	struct sim_bus *b = bus;
	uint64_t first = (uintptr_t)va & ~4095ull;
	uint32_t i;

	for (i = 0; i < npages; i++)
		pages[i] = b->scatter ? bus_addr(b, (first + 4096ull * i) ^ SCATTER_SWAP) | BUS_SCATTER
				      : bus_addr(b, first + 4096ull * i);
	return add_range(b, (uintptr_t)va, (uintptr_t)va + len, b->scatter);
}

static void sim_dma_unmap(void *bus, void *va, size_t len)
{
	del_range(bus, (uintptr_t)va, (uintptr_t)va + len, ((struct sim_bus *)bus)->scatter);
}

static uint64_t wall_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

/* The driver core's timeouts count the NIC's own time: a simulated NIC runs hundreds of times
 * slower than the card, and a wall-clock timeout would declare a busy firmware dead. The clock
 * register is read at most once per millisecond of wall time; a lost link times out at once. */
static uint64_t sim_now_us(void *bus)
{
	struct sim_bus *b = bus;
	uint64_t now = wall_us();

	if (!__atomic_load_n(&b->alive, __ATOMIC_ACQUIRE))
		return UINT64_MAX / 2;
	if (!b->clk_khz)
		b->clk_khz = sim_mmio_read(b, RNIC_CLOCK_FREQ_KHZ);
	if (b->clk_khz && (!b->clk_wall || now - b->clk_wall >= 1000)) {
		uint32_t hi = sim_mmio_read(b, RNIC_CLOCK_CYCLES_HI), lo = sim_mmio_read(b, RNIC_CLOCK_CYCLES_LO);

		if (sim_mmio_read(b, RNIC_CLOCK_CYCLES_HI) != hi)
			lo = 0; /* the low word wrapped in between: the start of the new high word */
		b->clk_us = (((uint64_t)hi << 32) | lo) * 1000 / b->clk_khz;
		b->clk_wall = now;
	}
	return b->clk_khz ? b->clk_us : now;
}

static void sim_relax(void *bus)
{
	(void)bus;
	usleep(20);
}

/* An empty CQ polled again and again: sleep until the NIC writes host memory next (a CQE, or
 * anything else), at most 100 us. The simulators get the core the poller would spin on. */
static void sim_idle(void *bus)
{
	struct sim_bus *b = bus;
	uint32_t seq = __atomic_load_n(&b->dma_seq, __ATOMIC_SEQ_CST);
	struct timespec t = {0, 100000};

	__atomic_add_fetch(&b->idlers, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &b->dma_seq, FUTEX_WAIT_PRIVATE, seq, &t, NULL, 0);
	__atomic_sub_fetch(&b->idlers, 1, __ATOMIC_SEQ_CST);
}

const struct rnic_bus_ops sim_bus_ops = {
	.mmio_read = sim_mmio_read,
	.mmio_write = sim_mmio_write,
	.dma_alloc = sim_dma_alloc,
	.dma_free = sim_dma_free,
	.dma_map = sim_dma_map,
	.dma_unmap = sim_dma_unmap,
	.now_us = sim_now_us,
	.relax = sim_relax,
	.idle = sim_idle,
};

int sim_bus_open(struct sim_bus *b, const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	uint8_t h[RNIC_LINK_HDR_SIZE];
	const char *scatter;
	int tries, ret;

	memset(b, 0, sizeof(*b));
	scatter = getenv("RNIC_SIM_SCATTER");
	b->scatter = scatter && !strcmp(scatter, "1");
	if (strlen(path) >= sizeof(a.sun_path))
		return -ENAMETOOLONG;
	strcpy(a.sun_path, path);
	b->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (b->fd < 0)
		return -errno;
	/* a simulator that has just started may be bound and not yet listening: refused for a
	 * moment (as is a full backlog) */
	for (tries = 0; connect(b->fd, (struct sockaddr *)&a, sizeof(a)); tries++) {
		if ((errno != ECONNREFUSED && errno != EAGAIN) || tries == 100) {
			close(b->fd);
			return -ENODEV;
		}
		usleep(10000);
	}
	b->irq_fd = eventfd(0, EFD_CLOEXEC);
	if (b->irq_fd < 0) {
		close(b->fd);
		return -errno;
	}
	b->alive = 1;
	pthread_mutex_init(&b->send_lock, NULL);
	pthread_mutex_init(&b->lock, NULL);
	pthread_mutex_init(&b->rd_lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	msg(b, RNIC_LINK_MSG_HELLO, 0, RNIC_LINK_VERSION, 0, 0, NULL, 0);
	if (read_all(b->fd, h, sizeof(h)) || RNIC_LINK_HDR_TYPE_GET(h) != RNIC_LINK_MSG_HELLO_ACK ||
	    RNIC_LINK_HDR_STATUS_GET(h) || ring_open(b)) {
		/* nobody there, a simulator of another link version, or no shared memory */
		ret = -ENODEV;
		goto fail;
	}
	b->ctx = (uint32_t)RNIC_LINK_HDR_VALUE_GET(h);
	if (pthread_create(&b->thread, NULL, service, b)) {
		ret = -EAGAIN;
		goto fail;
	}
	return 0;
fail:
	if (b->ring)
		munmap(b->ring, RNIC_LINK_RING_SIZE);
	close(b->fd);
	close(b->irq_fd);
	return ret;
}

void sim_bus_close(struct sim_bus *b)
{
	msg(b, RNIC_LINK_MSG_BYE, 0, 0, 0, 0, NULL, 0);
	shutdown(b->fd, SHUT_RDWR);
	pthread_join(b->thread, NULL);
	close(b->fd);
	close(b->irq_fd);
	munmap(b->ring, RNIC_LINK_RING_SIZE);
	free(b->ranges);
}
