/* The simulator backend of the host library: the host link to one rnic-sim process. */
#ifndef RNIC_SIM_BUS_H
#define RNIC_SIM_BUS_H

#include <pthread.h>
#include <stdint.h>

#include "rnic_core.h"

struct sim_range {
	uint64_t start, end; /* virtual addresses the NIC may reach */
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
	uint64_t irqs;
	uint8_t *ring;              /* struct LINK_RING, shared with the simulator: posted MMIO writes */
	uint32_t clk_khz;           /* the NIC clock, for timeouts in simulated time */
	uint64_t clk_us, clk_wall;  /* last reading: simulated us, at this wall-clock us */
};

extern const struct rnic_bus_ops sim_bus_ops;

/* connect to the simulator socket; 0 or -errno */
int sim_bus_open(struct sim_bus *b, const char *path);
void sim_bus_close(struct sim_bus *b);

#endif
