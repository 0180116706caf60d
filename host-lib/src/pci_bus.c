/* Card backend: the kernel module's character device (driver/linux, uapi in
 * driver/include/uapi/rnic/rnic_uapi.h). Never run on a card: see docs/ARCHITECTURE.md. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "pci_bus.h"
#include "rnic/rnic_uapi.h"

static uint32_t pci_mmio_read(void *bus, uint32_t off)
{
	volatile uint32_t *r = pci_bus_reg(bus, off);

	return r ? *r : ~0u; /* only the context's own page is mapped */
}

static void pci_mmio_write(void *bus, uint32_t off, uint32_t val)
{
	volatile uint32_t *r = pci_bus_reg(bus, off);

	if (r)
		*r = val;
}

/* a ring: coherent memory of the module, mapped here; its "bus address" is the mmap offset,
 * which the module turns into the real one when a CREATE_* command names it */
static void *pci_dma_alloc(void *bus, size_t size, uint64_t *bus_addr)
{
	struct pci_bus *b = bus;
	long pg = sysconf(_SC_PAGESIZE);
	struct rnic_uapi_alloc_ring a = {.size = (size + (size_t)pg - 1) / (size_t)pg * (size_t)pg};
	struct rnic_uapi_free_ring f;
	struct pci_ring *r;
	void *cpu;

	r = realloc(b->rings, (b->nrings + 1) * sizeof(*r));
	if (!r)
		return NULL;
	b->rings = r;
	if (ioctl(b->fd, RNIC_IOCTL_ALLOC_RING, &a))
		return NULL;
	cpu = mmap(NULL, a.size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, (off_t)a.offset);
	if (cpu == MAP_FAILED) {
		f.offset = a.offset;
		ioctl(b->fd, RNIC_IOCTL_FREE_RING, &f);
		return NULL;
	}
	r[b->nrings++] = (struct pci_ring){cpu, a.size, a.offset};
	*bus_addr = a.offset;
	return cpu;
}

static void pci_dma_free(void *bus, void *cpu, size_t size)
{
	struct pci_bus *b = bus;
	struct rnic_uapi_free_ring f;
	uint32_t i;

	(void)size;
	for (i = 0; i < b->nrings; i++) {
		if (b->rings[i].cpu != cpu)
			continue;
		munmap(cpu, b->rings[i].size);
		f.offset = b->rings[i].offset;
		ioctl(b->fd, RNIC_IOCTL_FREE_RING, &f); /* after destroy: the ring is free and unmapped */
		b->rings[i] = b->rings[--b->nrings];
		return;
	}
}

/* registered memory is pinned and mapped by the module (REG_MR through pci_cmd) */
static int pci_dma_map(void *bus, void *va, size_t len, uint64_t *pages, uint32_t npages)
{
	(void)bus, (void)va, (void)len, (void)pages, (void)npages;
	return -EOPNOTSUPP;
}

static void pci_dma_unmap(void *bus, void *va, size_t len)
{
	(void)bus, (void)va, (void)len;
}

static uint64_t pci_now_us(void *bus)
{
	struct timespec t;

	(void)bus;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void pci_relax(void *bus)
{
	(void)bus;
	usleep(10);
}

static int pci_cmd(void *bus, uint32_t opcode, const void *in, size_t inlen, void *out, size_t outlen)
{
	struct pci_bus *b = bus;
	struct rnic_uapi_cmd a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.opcode = opcode;
	if (inlen > sizeof(a.in) || outlen > sizeof(a.out))
		return -EINVAL;
	if (inlen)
		memcpy(a.in, in, inlen);
	ret = ioctl(b->fd, RNIC_IOCTL_CMD, &a) ? -errno : 0;
	if (outlen)
		memcpy(out, a.out, outlen);
	return ret;
}

const struct rnic_bus_ops pci_bus_ops = {
	.mmio_read = pci_mmio_read,
	.mmio_write = pci_mmio_write,
	.dma_alloc = pci_dma_alloc,
	.dma_free = pci_dma_free,
	.dma_map = pci_dma_map,
	.dma_unmap = pci_dma_unmap,
	.now_us = pci_now_us,
	.relax = pci_relax,
	.cmd = pci_cmd,
};

int pci_bus_open(struct pci_bus *b, const char *path, struct rnic_dev *d)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct rnic_uapi_query q;
	int ret;

	memset(b, 0, sizeof(*b));
	b->fd = open(path, O_RDWR | O_CLOEXEC);
	if (b->fd < 0)
		return -errno;
	memset(&q, 0, sizeof(q));
	if (ioctl(b->fd, RNIC_IOCTL_QUERY, &q)) {
		ret = -errno;
		goto err;
	}
	if (q.uapi_version != RNIC_UAPI_VERSION || q.if_version != RNIC_IF_VERSION || q.eq_log != RNIC_EQ_LOG) {
		ret = -EPROTO; /* module or card image of another version than this library */
		goto err;
	}
	b->page = q.db_page;
	b->db_size = q.db_size;
	b->db = mmap(NULL, b->db_size, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, (off_t)q.db_offset);
	if (b->db == MAP_FAILED) {
		b->db = NULL;
		ret = -errno;
		goto err;
	}
	b->eq_size = ((RNIC_EQE_BYTES << q.eq_log) + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	b->eq = mmap(NULL, b->eq_size, PROT_READ, MAP_SHARED, b->fd, (off_t)q.eq_offset);
	if (b->eq == MAP_FAILED) {
		b->eq = NULL;
		ret = -errno;
		goto err;
	}
	memset(d, 0, sizeof(*d));
	d->ops = &pci_bus_ops;
	d->bus = b;
	d->ctx = q.ctx;
	d->page = q.db_page;
	d->build_id = q.build_id;
	d->eq = b->eq;
	memcpy(d->info, q.device, sizeof(d->info));
	return 0;
err:
	pci_bus_close(b);
	return ret;
}

void pci_bus_close(struct pci_bus *b)
{
	if (b->eq)
		munmap(b->eq, b->eq_size);
	if (b->db)
		munmap((void *)b->db, b->db_size);
	free(b->rings);
	if (b->fd >= 0)
		close(b->fd); /* the module frees what the context still owned */
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}

/* The driver's 64-bit totals of the datapath counters: up to max of them; *count, the NIC's */
int pci_bus_stats(struct pci_bus *b, uint64_t *counters, uint32_t max, uint32_t *count)
{
	struct rnic_uapi_stats a;
	uint32_t i;

	memset(&a, 0, sizeof(a));
	if (ioctl(b->fd, RNIC_IOCTL_STATS, &a))
		return errno;
	for (i = 0; i < a.count && i < max && i < RNIC_UAPI_MAX_STATS; i++)
		counters[i] = a.counter[i];
	*count = a.count;
	return 0;
}

int pci_bus_clock(struct pci_bus *b, uint64_t *cycles, uint32_t *khz)
{
	struct rnic_uapi_clock a;

	memset(&a, 0, sizeof(a));
	if (ioctl(b->fd, RNIC_IOCTL_CLOCK, &a))
		return -errno;
	*cycles = a.cycles;
	*khz = a.freq_khz;
	return 0;
}
