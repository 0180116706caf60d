/* Portable driver core: what a driver does with the card, independent of where it runs. The
 * host library (simulation) uses it now; the Linux kernel module will compile the same files.
 * No allocation, no libc beyond string functions, no locks: the caller serialises calls per
 * device and provides memory through the bus operations. Errors are negative errno values.
 * On a card the kernel module runs it for every context, and the host library only for its
 * doorbells and event queue (ops->cmd sends its commands to the module). */
#ifndef RNIC_CORE_H
#define RNIC_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "rnic_spec.h"

struct rnic_bus_ops {
	uint32_t (*mmio_read)(void *bus, uint32_t off);
	void (*mmio_write)(void *bus, uint32_t off, uint32_t val);
	/* zeroed, page-aligned memory the device can reach (rings, page lists) */
	void *(*dma_alloc)(void *bus, size_t size, uint64_t *bus_addr);
	void (*dma_free)(void *bus, void *cpu, size_t size);
	/* make [va, va + len) reachable; fill the bus address of each 4 KiB page */
	int (*dma_map)(void *bus, void *va, size_t len, uint64_t *pages, uint32_t npages);
	void (*dma_unmap)(void *bus, void *va, size_t len);
	uint64_t (*now_us)(void *bus);
	void (*relax)(void *bus);
	/* Optional: a poller keeps finding its CQ empty; may sleep a little (the simulator's NIC
	 * runs a thousand times slower than a card: a spinning poller would take its core). */
	void (*idle)(void *bus);
	/* Set when a kernel driver owns the command queue (the host library on a card): commands go
	 * to it whole, ring addresses are its ring handles, and it pins and maps REG_MR's memory.
	 * 0 or -errno; out is filled when the firmware answered OK. */
	int (*cmd)(void *bus, uint32_t opcode, const void *in, size_t inlen, void *out, size_t outlen);
};

struct rnic_dev {
	const struct rnic_bus_ops *ops;
	void *bus;
	uint32_t ctx;
	uint32_t page;           /* BAR0 offset of this context's doorbell page */
	uint32_t cmdq_page;      /* and of its command-queue page (never mapped to a process) */
	uint32_t build_id;
	int dead;                /* a command timed out: every later call fails */
	uint8_t status;          /* the last command's firmware status (enum CMD_ST) */
	uint8_t *cmdq, *cmdc;
	uint64_t cmdq_bus, cmdc_bus;
	uint16_t cmd_pi;
	uint32_t cookie;
	uint8_t *eq;
	uint64_t eq_bus;
	uint32_t eq_ci;
	uint8_t info[RNIC_CMDO_QUERY_DEVICE_SIZE]; /* QUERY_DEVICE output */
};

#define RNIC_CMD_LOG 4            /* 16 command slots */
#define RNIC_EQ_LOG 8
#define RNIC_CMD_TIMEOUT_US 5000000
#define RNIC_FW_READY_TIMEOUT_US 30000000

int rnic_dev_init(struct rnic_dev *d, const struct rnic_bus_ops *ops, void *bus, uint32_t ctx);
void rnic_dev_fini(struct rnic_dev *d);
int rnic_cmd_exec(struct rnic_dev *d, uint32_t opcode, const void *in, size_t inlen, void *out, size_t outlen);
int rnic_status_errno(uint32_t status);

int rnic_alloc_pd(struct rnic_dev *d, uint32_t *pdn);
int rnic_destroy(struct rnic_dev *d, uint32_t opcode, uint32_t handle);
int rnic_create_cq(struct rnic_dev *d, uint64_t ring_bus, uint32_t log_size, uint32_t *cqn);

struct rnic_qp_create {
	uint32_t pdn, type, send_cqn, recv_cqn, sq_log, rq_log, use_srq, srqn;
	uint64_t sq_bus, rq_bus;
};
int rnic_create_qp(struct rnic_dev *d, const struct rnic_qp_create *c, uint32_t *qpn);
/* `in` is a CMDI_MODIFY_QP payload */
int rnic_modify_qp(struct rnic_dev *d, const uint8_t *in);
int rnic_query_qp(struct rnic_dev *d, uint32_t qpn, uint8_t *out);
int rnic_reg_mr(struct rnic_dev *d, uint32_t pdn, uint32_t access, void *va, uint64_t len, uint32_t *key);
int rnic_dereg_mr(struct rnic_dev *d, uint32_t key, void *va, uint64_t len);
/* flags: enum REREG; va/len the new translation (TRANSLATION). Once it succeeded the firmware uses
 * the old translation no more: the caller unmaps it. */
int rnic_rereg_mr(struct rnic_dev *d, uint32_t key, uint32_t flags, uint32_t pdn, uint32_t access, void *va,
		  uint64_t len);
int rnic_resize_cq(struct rnic_dev *d, uint32_t cqn, uint64_t ring_bus, uint32_t log_size);

/* Interrupt dispatch: hand every new EQE to fn (type, data = CQN or QPN), acknowledge them with
 * the EQ doorbell; returns how many were handled. Called on MSI-X of the context's vector. */
int rnic_eq_poll(struct rnic_dev *d, void (*fn)(void *arg, uint32_t type, uint32_t data), void *arg);

void rnic_ring_sq(struct rnic_dev *d, uint32_t qpn, uint16_t pi);
void rnic_ring_rq(struct rnic_dev *d, uint32_t qpn, uint16_t pi);
void rnic_ring_srq(struct rnic_dev *d, uint32_t srqn, uint16_t pi);
void rnic_ring_cq(struct rnic_dev *d, uint32_t cqn, uint16_t ci, uint32_t arm);

#endif
