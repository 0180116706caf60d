/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/* RNIC PCIe driver: what rnic_main.c (probe, contexts, mmap, interrupts) and rnic_ioctl.c share. */
#ifndef RNIC_DRV_H
#define RNIC_DRV_H

#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "rnic_core.h"
#include "rnic_uapi.h"

#define DRV_NAME "rnic"
/* coherent buffers per context: command queue, completions, event queue, MTT page list */
#define MAX_DMA 8
#define RESET_TIMEOUT_MS 1000 /* of the card's time (card_us) */

#if PAGE_SHIFT != 12
#error "the driver core lists registered memory in 4 KiB pages"
#endif

struct rnic_pci;

/* a CQ, send, receive or SRQ ring of a user context, charged to its RLIMIT_MEMLOCK */
struct rnic_ring {
	void *cpu;
	dma_addr_t bus;
	size_t size;
	struct mm_struct *mm; /* whose locked_vm counts it */
	u32 freed_by;     /* DESTROY_* opcode of the object using it, 0 if none */
	u32 user;         /* its CQN/QPN/SRQN */
	atomic_t maps;    /* user mappings */
};

/* registered user memory: pinned pages and their DMA mappings */
struct rnic_mr {
	struct list_head node;
	u32 key;
	u64 va, len;
	bool writable;
	unsigned long npages;
	struct page **pages;
	dma_addr_t *dma;
	struct mm_struct *mm; /* whose pinned_vm counts the pages */
};

struct rnic_dma {
	void *cpu;
	dma_addr_t bus;
	size_t size;
};

/* one hardware context: the driver's own (0) or an open file's */
struct rnic_ctx {
	struct rnic_pci *rp;
	struct rnic_dev dev;
	u32 ctx;
	bool live;                 /* the context is up: cleared by ctx_stop */
	bool revoked;              /* the card is going away: no new mmap, no ioctl */
	kuid_t uid;
	struct list_head node;     /* in rp->files */
	struct rnic_dma dma[MAX_DMA];
	u64 irqs_seen;
	u64 relax_seen;            /* interrupt count at the last wait */
	struct mutex lock;         /* dev (the core is not reentrant), rings, mrs */
	struct rnic_ring *rings[RNIC_UAPI_MAX_RINGS];
	struct list_head mrs;
	struct rnic_mr *cur_mr;    /* the MR the core maps or unmaps now */
	bool leak;                 /* the card did not confirm the reset: keep its memory */
	struct mutex umap_lock;    /* umaps; taken under mmap_lock (vm_ops), never around it */
	struct list_head umaps;    /* the file's vmas that removal has still to zap */
};

/* a vma of a context's file (its vm_private_data) */
struct rnic_umap {
	struct list_head node;     /* in ctx->umaps, empty once zapped */
	struct vm_area_struct *vma;
	struct rnic_ring *ring;    /* the ring it maps, NULL for the doorbell page and the EQ */
};

struct rnic_vec {
	struct rnic_pci *rp;
	unsigned int n;
};

struct rnic_pci {
	struct pci_dev *pdev;
	void __iomem *bar;
	resource_size_t bar_start, bar_len;
	struct miscdevice misc;
	char name[16];
	struct kref ref;   /* the device and each open file */
	struct mutex lock; /* ctx_used, files, gone, context bring-up/teardown */
	DECLARE_BITMAP(ctx_used, RNIC_NUM_CTX);
	u32 ctx_priv;      /* ADMIN.CTX_PRIV: contexts opened with CAP_NET_BIND_SERVICE */
	struct list_head files;
	bool gone;         /* removed: open files only get -ENODEV */
	int nvec;
	struct rnic_vec vec[RNIC_NUM_CTX];
	atomic64_t irqs[RNIC_NUM_CTX];
	wait_queue_head_t wq[RNIC_NUM_CTX];
	struct rnic_ctx admin;
	/* the NIC's context memory (ADMIN.ICM_*): chunks and the list of their bus addresses */
	unsigned int icm_n;
	void *icm_va[RNIC_ICM_MAX_CHUNKS];
	dma_addr_t icm_bus[RNIC_ICM_MAX_CHUNKS];
	__le64 *icm_list;
	dma_addr_t icm_list_bus;
	bool icm_leak;     /* the NIC did not give it back: it may still write there */
	/*
	 * the datapath counters widened to 64 bits (RNIC_IOCTL_STATS): the NIC's are 32-bit and
	 * the fastest wraps in 0.34 s at line rate, so they are read every 100 ms
	 */
	struct delayed_work stats_work;
	spinlock_t stats_lock; /* stats_raw, stats: the tick and the ioctl */
	u32 stats_n;
	u32 stats_raw[RNIC_UAPI_MAX_STATS];
	u64 stats[RNIC_UAPI_MAX_STATS];
};

/* rnic_main.c */
void rnic_stats_update(struct rnic_pci *rp);
int rnic_charge(struct mm_struct *mm, unsigned long npages);
void rnic_uncharge(struct mm_struct *mm, unsigned long npages);
void rnic_mr_unpin(struct rnic_ctx *c, struct rnic_mr *mr, unsigned long n);
void rnic_ring_free(struct rnic_ctx *c, unsigned int slot);
struct rnic_ring *rnic_ring_get(struct rnic_ctx *c, u64 offset, unsigned int *slot);
bool rnic_writable(u32 access);

/* rnic_ioctl.c */
long rnic_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

#endif
