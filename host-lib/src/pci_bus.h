/* The card backend of the host library: one open file of /dev/rnicN (the kernel module), which
 * is one hardware context. The module runs the context's firmware commands (ioctl), owns its
 * rings (mapped here) and pins registered memory; doorbells are written straight to the
 * context's BAR0 page, mapped here, and the event queue is read where the module maps it. */
#ifndef RNIC_PCI_BUS_H
#define RNIC_PCI_BUS_H

#include <stddef.h>
#include <stdint.h>

#include "rnic_core.h"

struct pci_ring {
	void *cpu;
	size_t size;
	uint64_t offset; /* mmap offset, and the ring's address in CREATE_* commands */
};

struct pci_bus {
	int fd;                 /* also the interrupt counter: read() returns 8 bytes, like an eventfd */
	volatile uint8_t *db;   /* the context's doorbell page */
	size_t db_size;
	uint32_t page;          /* its BAR0 offset */
	void *eq;
	size_t eq_size;
	struct pci_ring *rings;
	uint32_t nrings;
};

extern const struct rnic_bus_ops pci_bus_ops;

/* open the device file and describe its context in d (no command is run); 0 or -errno */
int pci_bus_open(struct pci_bus *b, const char *path, struct rnic_dev *d);
void pci_bus_close(struct pci_bus *b);
int pci_bus_clock(struct pci_bus *b, uint64_t *cycles, uint32_t *khz);
int pci_bus_stats(struct pci_bus *b, uint64_t *counters, uint32_t max, uint32_t *count);

/* the register at BAR0 offset off in the mapped doorbell page, or NULL if outside it */
static inline volatile uint32_t *pci_bus_reg(struct pci_bus *b, uint32_t off)
{
	if (!b->db || off < b->page || off - b->page >= b->db_size)
		return NULL;
	return (volatile uint32_t *)(b->db + (off - b->page));
}

#endif
