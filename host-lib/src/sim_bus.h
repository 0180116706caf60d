/* The simulator backend of the host library: the host link to one rnic-sim process. */
#ifndef RNIC_SIM_BUS_H
#define RNIC_SIM_BUS_H

#include <pthread.h>
#include <stdint.h>

#include "rnic_core.h"

struct sim_range {
	uint64_t start, end; /* virtual addresses the NIC may reach */
	int scattered;       /* registered memory at scattered bus pages (RNIC_SIM_SCATTER) */
};

struct sim_bus {
	int fd;
	int irq_fd;                 /* eventfd: counts MSI-X messages of the context's vector */
	uint32_t ctx;
	int alive;
	pthread_t thread;
	pthread_mutex_t send_lock;
	pthread_mutex_t rd_lock;    /* one MMIO read at a time */
	pthread_mutex_t lock;       /* everything below */
	pthread_cond_t cond;
	uint32_t rd_tag;
	uint32_t resp_tag;
	uint32_t resp_value;
	int resp_ready;
	struct sim_range *ranges;
	uint32_t nranges, cap;
	uint64_t refused;           /* DMA outside mapped memory, refused */
	int scatter;                /* RNIC_SIM_SCATTER=1: registered memory as a card's host has it */
	uint64_t irqs;
	uint8_t *ring;              /* struct LINK_RING, shared with the simulator: posted MMIO writes */
	uint32_t dma_seq;           /* DMA writes into memory so far (a futex: pollers sleep on it) */
	uint32_t idlers;            /* ... and how many sleep */
	uint32_t clk_khz;           /* the NIC clock, for timeouts in simulated time */
	uint64_t clk_us, clk_wall;  /* last reading: simulated us, at this wall-clock us */
};

extern const struct rnic_bus_ops sim_bus_ops;

/* A posted write (ops->mmio_write) is a few stores into the ring the simulator drains, as a
 * CPU's store into a BAR: claim a slot, wait while the ring is full, fill the slot. Inline for
 * the data path's doorbells. */
#define SIM_RING_MASK ((1u << RNIC_LINK_RING_LOG) - 1)

static inline uint32_t sim_ring_claim(uint8_t *ring)
{
	return __atomic_fetch_add((uint32_t *)(ring + RNIC_LINK_RING_TAIL_OFF), 1, __ATOMIC_RELAXED);
}

static inline int sim_ring_full(const uint8_t *ring, uint32_t slot)
{
	return slot - __atomic_load_n((const uint32_t *)(ring + RNIC_LINK_RING_HEAD_OFF), __ATOMIC_ACQUIRE) >
	       SIM_RING_MASK;
}

void sim_ring_wait(struct sim_bus *b, uint32_t slot);

/* a slot's ADDR and VALUE as one 64-bit word */
_Static_assert(RNIC_LINK_RING_ENTRY_VALUE_OFF == RNIC_LINK_RING_ENTRY_ADDR_OFF + 4, "ADDR, VALUE");
static inline uint64_t sim_ring_link(uint32_t off, uint32_t val)
{
	return off | (uint64_t)val << 32;
}

static inline uint8_t *sim_ring_entry(uint8_t *ring, uint32_t slot)
{
	return ring + RNIC_LINK_RING_ENTRIES_OFF + (size_t)(slot & SIM_RING_MASK) * RNIC_LINK_RING_ENTRY_SIZE;
}

/* the entry e of slot, filled: the simulator's from now on */
static inline void sim_ring_publish(uint8_t *e, uint32_t slot)
{
	__atomic_store_n((uint32_t *)(e + RNIC_LINK_RING_ENTRY_SEQ_OFF), slot + 1, __ATOMIC_RELEASE);
}

static inline void sim_ring_fill(uint8_t *ring, uint32_t slot, uint64_t link)
{
	uint8_t *e = sim_ring_entry(ring, slot);

	rnic_wr_le(e + RNIC_LINK_RING_ENTRY_ADDR_OFF, 8, link);
	RNIC_LINK_RING_ENTRY_LEN_SET(e, 0);
	sim_ring_publish(e, slot);
}

static inline void sim_ring_write(struct sim_bus *b, uint32_t off, uint32_t val)
{
	uint32_t slot = sim_ring_claim(b->ring);

	if (__builtin_expect(sim_ring_full(b->ring, slot), 0))
		sim_ring_wait(b, slot);
	sim_ring_fill(b->ring, slot, sim_ring_link(off, val));
}

/* connect to the simulator socket; 0 or -errno */
int sim_bus_open(struct sim_bus *b, const char *path);
void sim_bus_close(struct sim_bus *b);

#endif
