// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * RNIC: PCIe driver of the open RoCEv2 NIC for Alveo cards.
 *
 * Probe maps BAR0 and brings the card up through the portable driver core (the same C the
 * simulation's host library runs): register-block walk, interface version check, firmware ready,
 * command queue of context 0 (the driver's own). Each open file of /dev/rnicN is one of the other
 * hardware contexts: its command queue (run here, through RNIC_IOCTL_CMD), its doorbell page and
 * event queue (mmap), its rings (ALLOC_RING, mmap), its registered memory (REG_MR: pinned and
 * DMA-mapped here) and its MSI-X vector, whose interrupts poll()/read() report as a count.
 * Closing the file (or the process dying) makes the firmware free everything the context owned;
 * only then are its rings freed and its pages unpinned. Rings and pinned pages count against the
 * opener's RLIMIT_MEMLOCK; one user holds at most ctx_per_user contexts.
 *
 * The vectors are up before the first command: a command's completion interrupt wakes its waiter,
 * and a 10 ms poll stays as a safety net (firmware start-up raises none). A timeout marks the
 * device dead.
 * Nothing here has run on a card.
 */
#include <linux/bitmap.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/poll.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "rnic_core.h"
#include "rnic_uapi.h"

#define DRV_NAME "rnic"
/* coherent buffers per context: command queue, completions, event queue, MTT page list */
#define MAX_DMA 8
#define RESET_TIMEOUT_MS 1000

/* One user cannot hold every context of the card (CAP_SYS_ADMIN can). */
static unsigned int ctx_per_user = 4;
module_param(ctx_per_user, uint, 0644);
MODULE_PARM_DESC(ctx_per_user, "Open files of one user per card (default 4)");

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
	struct address_space *mapping; /* of the file's inode: where its mmaps are */
	struct list_head node;     /* in rp->files */
	struct rnic_dma dma[MAX_DMA];
	u64 irqs_seen;
	u64 relax_seen;            /* interrupt count at the last wait */
	struct mutex lock;         /* dev (the core is not reentrant), rings, mrs */
	struct rnic_ring *rings[RNIC_UAPI_MAX_RINGS];
	struct list_head mrs;
	struct rnic_mr *cur_mr;    /* the MR the core maps or unmaps now */
	bool leak;                 /* the card did not confirm the reset: keep its memory */
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
	struct list_head files;
	bool gone;         /* removed: open files only get -ENODEV */
	int nvec;
	struct rnic_vec vec[RNIC_NUM_CTX];
	atomic64_t irqs[RNIC_NUM_CTX];
	wait_queue_head_t wq[RNIC_NUM_CTX];
	struct rnic_ctx admin;
};

static DEFINE_IDA(rnic_ida);

/* ---- the driver core's bus: BAR0 and coherent DMA memory of this function */
static u32 k_mmio_read(void *bus, u32 off)
{
	struct rnic_ctx *c = bus;

	return ioread32(c->rp->bar + off);
}

static void k_mmio_write(void *bus, u32 off, u32 val)
{
	struct rnic_ctx *c = bus;

	iowrite32(val, c->rp->bar + off);
}

static void *k_dma_alloc(void *bus, size_t size, u64 *bus_addr)
{
	struct rnic_ctx *c = bus;
	int i;

	for (i = 0; i < MAX_DMA; i++) {
		struct rnic_dma *d = &c->dma[i];

		if (d->cpu)
			continue;
		d->cpu = dma_alloc_coherent(&c->rp->pdev->dev, size, &d->bus, GFP_KERNEL);
		if (!d->cpu)
			return NULL;
		d->size = size;
		*bus_addr = d->bus;
		return d->cpu;
	}
	return NULL;
}

static void k_dma_free(void *bus, void *cpu, size_t size)
{
	struct rnic_ctx *c = bus;
	int i;

	for (i = 0; i < MAX_DMA; i++) {
		struct rnic_dma *d = &c->dma[i];

		if (d->cpu != cpu)
			continue;
		dma_free_coherent(&c->rp->pdev->dev, d->size, d->cpu, d->bus);
		d->cpu = NULL;
		return;
	}
	WARN_ONCE(1, "rnic: freeing %zu bytes the context never allocated\n", size);
}

/*
 * Memory the card may write for a process (pinned pages, rings) counts against its
 * RLIMIT_MEMLOCK, as uverbs counts ib_umem: pinned_vm of its mm, held until the memory goes.
 */
static int charge(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(npages, &mm->pinned_vm) > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	mmgrab(mm);
	return 0;
}

static void uncharge(struct mm_struct *mm, unsigned long npages)
{
	atomic64_sub(npages, &mm->pinned_vm);
	mmdrop(mm);
}

static void mr_free_lists(struct rnic_mr *mr)
{
	kvfree(mr->pages);
	kvfree(mr->dma);
	mr->pages = NULL;
	mr->dma = NULL;
}

static void mr_unpin(struct rnic_ctx *c, struct rnic_mr *mr, unsigned long n)
{
	struct device *dev = &c->rp->pdev->dev;
	unsigned long i;

	for (i = 0; i < n; i++)
		if (mr->dma[i])
			dma_unmap_page(dev, mr->dma[i], PAGE_SIZE, DMA_BIDIRECTIONAL);
	unpin_user_pages_dirty_lock(mr->pages, n, mr->writable);
	uncharge(mr->mm, mr->npages);
	mr_free_lists(mr);
}

/*
 * REG_MR of a user context: pin [va, va + len) of the calling process, DMA-map each page, hand
 * the core their bus addresses.
 */
static int k_dma_map(void *bus, void *va, size_t len, u64 *pages, u32 npages)
{
	struct rnic_ctx *c = bus;
	struct rnic_mr *mr = c->cur_mr;
	unsigned long start = (unsigned long)va & PAGE_MASK;
	struct device *dev = &c->rp->pdev->dev;
	unsigned int gup = FOLL_LONGTERM | (mr && mr->writable ? FOLL_WRITE : 0);
	long pinned;
	int ret = -ENOMEM;
	u32 i;

	if (!mr)
		return -EOPNOTSUPP; /* the driver's own context registers no memory */
	if (!access_ok((void __user *)start, (unsigned long)npages << PAGE_SHIFT))
		return -EFAULT;
	mr->pages = kvcalloc(npages, sizeof(*mr->pages), GFP_KERNEL);
	mr->dma = kvcalloc(npages, sizeof(*mr->dma), GFP_KERNEL);
	if (!mr->pages || !mr->dma)
		goto err_free;
	mr->npages = npages;
	mr->mm = current->mm;
	ret = charge(mr->mm, npages);
	if (ret)
		goto err_free;
	pinned = pin_user_pages_fast(start, npages, gup, mr->pages);
	if (pinned != npages) {
		if (pinned > 0)
			unpin_user_pages(mr->pages, pinned);
		ret = pinned < 0 ? pinned : -EFAULT;
		goto err_account;
	}
	for (i = 0; i < npages; i++) {
		dma_addr_t a = dma_map_page(dev, mr->pages[i], 0, PAGE_SIZE, DMA_BIDIRECTIONAL);

		if (dma_mapping_error(dev, a)) {
			mr_unpin(c, mr, npages);
			return -ENOMEM;
		}
		mr->dma[i] = a;
		pages[i] = a;
	}
	return 0;

err_account:
	uncharge(mr->mm, npages);
err_free:
	mr_free_lists(mr);
	return ret;
}

/* a failed REG_MR or a done DEREG_MR: the MR in hand loses its pages */
static void k_dma_unmap(void *bus, void *va, size_t len)
{
	struct rnic_ctx *c = bus;

	if (c->cur_mr && c->cur_mr->pages)
		mr_unpin(c, c->cur_mr, c->cur_mr->npages);
}

static u64 k_now_us(void *bus)
{
	return ktime_get_ns() / NSEC_PER_USEC;
}

/*
 * Wait for the next interrupt of the context's vector: the firmware raises one per command
 * completion. The timeout covers a lost one.
 */
static void k_relax(void *bus)
{
	struct rnic_ctx *c = bus;
	atomic64_t *n = &c->rp->irqs[c->ctx];

	wait_event_timeout(c->rp->wq[c->ctx], atomic64_read(n) != c->relax_seen,
			   msecs_to_jiffies(10));
	c->relax_seen = atomic64_read(n);
}

static const struct rnic_bus_ops rnic_kbus_ops = {
	.mmio_read = k_mmio_read,
	.mmio_write = k_mmio_write,
	.dma_alloc = k_dma_alloc,
	.dma_free = k_dma_free,
	.dma_map = k_dma_map,
	.dma_unmap = k_dma_unmap,
	.now_us = k_now_us,
	.relax = k_relax,
};

static int ctx_start(struct rnic_pci *rp, struct rnic_ctx *c, u32 ctx)
{
	int ret;

	c->rp = rp;
	c->ctx = ctx;
	mutex_init(&c->lock);
	INIT_LIST_HEAD(&c->mrs);
	c->irqs_seen = atomic64_read(&rp->irqs[ctx]);
	c->relax_seen = c->irqs_seen;
	ret = rnic_dev_init(&c->dev, &rnic_kbus_ops, c, ctx);
	c->live = !ret;
	return ret;
}

static void ring_free(struct rnic_ctx *c, unsigned int slot)
{
	struct rnic_ring *r = c->rings[slot];

	dma_free_coherent(&c->rp->pdev->dev, r->size, r->cpu, r->bus);
	uncharge(r->mm, r->size >> PAGE_SHIFT);
	kfree(r);
	c->rings[slot] = NULL;
}

/* rings still mapped (the card was removed under the process) wait for the last close */
static void rings_free(struct rnic_ctx *c, bool mapped_too)
{
	int i;

	for (i = 0; i < RNIC_UAPI_MAX_RINGS; i++)
		if (c->rings[i] && (mapped_too || !atomic_read(&c->rings[i]->maps)))
			ring_free(c, i);
}

/*
 * The firmware frees what the context owned (as when a process dies) and stops its DMA; only
 * then do its queues, rings and pinned pages go. If the card does not confirm, they stay
 * allocated (leaked) rather than be reused under a device that may still write to them.
 */
static void ctx_stop(struct rnic_pci *rp, struct rnic_ctx *c)
{
	unsigned long end = jiffies + msecs_to_jiffies(RESET_TIMEOUT_MS);
	struct rnic_mr *mr, *tmp;

	mutex_lock(&c->lock);
	if (!c->live)
		goto out;
	c->live = false;
	iowrite32(c->ctx, rp->bar + RNIC_ADMIN_CTX_RESET);
	while (ioread32(rp->bar + RNIC_ADMIN_CTX_RESET_PENDING) & BIT(c->ctx)) {
		if (time_after(jiffies, end) || c->dev.dead) {
			dev_err(&rp->pdev->dev, "context %u: reset not confirmed, its memory is kept\n",
				c->ctx);
			c->leak = true;
			goto out;
		}
		usleep_range(100, 200);
	}
	c->dev.dead = 1; /* the queue is gone: no command, no register write to it any more */
	rnic_dev_fini(&c->dev);
	rings_free(c, false);
	list_for_each_entry_safe(mr, tmp, &c->mrs, node) {
		mr_unpin(c, mr, mr->npages);
		list_del(&mr->node);
		kfree(mr);
	}
out:
	mutex_unlock(&c->lock);
}

static void rnic_free(struct kref *ref)
{
	struct rnic_pci *rp = container_of(ref, struct rnic_pci, ref);

	pci_dev_put(rp->pdev);
	kfree(rp);
}

/* ---- interrupts: one MSI-X vector per context; user space sees a count (poll, read) */
static irqreturn_t rnic_irq(int irq, void *arg)
{
	struct rnic_vec *v = arg;

	atomic64_inc(&v->rp->irqs[v->n]);
	wake_up_interruptible(&v->rp->wq[v->n]);
	return IRQ_HANDLED;
}

/* ---- the character device */
static int rnic_open(struct inode *inode, struct file *file)
{
	struct rnic_pci *rp = container_of(file->private_data, struct rnic_pci, misc);
	unsigned int mine = 0;
	struct rnic_ctx *c, *o;
	unsigned long ctx;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	mutex_lock(&rp->lock);
	if (rp->gone) {
		ret = -ENODEV;
		goto out;
	}
	c->uid = current_euid();
	list_for_each_entry(o, &rp->files, node)
		mine += uid_eq(o->uid, c->uid);
	if (mine >= ctx_per_user && !capable(CAP_SYS_ADMIN)) {
		ret = -EUSERS;
		goto out;
	}
	ctx = find_first_zero_bit(rp->ctx_used, min_t(int, RNIC_NUM_CTX, rp->nvec));
	if (ctx >= min_t(int, RNIC_NUM_CTX, rp->nvec)) {
		ret = -EBUSY; /* every context is in use */
		goto out;
	}
	ret = ctx_start(rp, c, ctx);
	if (ret)
		goto out;
	set_bit(ctx, rp->ctx_used);
	list_add(&c->node, &rp->files);
	c->mapping = file->f_mapping;
	kref_get(&rp->ref);
	file->private_data = c;
out:
	mutex_unlock(&rp->lock);
	if (ret)
		kfree(c);
	return ret;
}

static int rnic_release(struct inode *inode, struct file *file)
{
	struct rnic_ctx *c = file->private_data;
	struct rnic_pci *rp = c->rp;

	mutex_lock(&rp->lock);
	ctx_stop(rp, c);
	list_del(&c->node);
	if (!c->leak) {
		rings_free(c, true); /* no mapping is left: each held the file */
		clear_bit(c->ctx, rp->ctx_used);
	}
	mutex_unlock(&rp->lock);
	/* a context whose reset was not confirmed stays taken, its memory with it */
	if (!c->leak)
		kfree(c);
	kref_put(&rp->ref, rnic_free);
	return 0;
}

/* ---- ioctls: every argument is copied in, checked, and only then used */
static struct rnic_ring *ring_get(struct rnic_ctx *c, u64 offset, unsigned int *slot)
{
	u64 n = div64_u64(offset, RNIC_UAPI_RING_STRIDE);

	if (offset % RNIC_UAPI_RING_STRIDE || n < 1 || n > RNIC_UAPI_MAX_RINGS)
		return NULL;
	if (slot)
		*slot = n - 1;
	return c->rings[n - 1];
}

/* a ring handle in a CREATE_* payload becomes the ring's bus address (a free ring, `need` long) */
static int ring_use(struct rnic_ctx *c, u8 *field, u64 need, struct rnic_ring **out)
{
	struct rnic_ring *r = ring_get(c, rnic_rd_le(field, 8), NULL);

	if (!r || r->freed_by || r->size < need)
		return -EINVAL;
	rnic_wr_le(field, 8, r->bus);
	*out = r;
	return 0;
}

static void rings_release(struct rnic_ctx *c, u32 destroy_op, u32 handle)
{
	int i;

	for (i = 0; i < RNIC_UAPI_MAX_RINGS; i++) {
		struct rnic_ring *r = c->rings[i];

		if (r && r->freed_by == destroy_op && r->user == handle)
			r->freed_by = 0;
	}
}

/* the NIC may write the pages of a region with these access flags */
static bool writable(u32 access)
{
	return access & (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |
			 RNIC_ACCESS_REMOTE_ATOMIC);
}

static struct rnic_mr *mr_find(struct rnic_ctx *c, u32 key)
{
	struct rnic_mr *mr;

	list_for_each_entry(mr, &c->mrs, node)
		if (mr->key == key)
			return mr;
	return NULL;
}

/* After a timeout the card may still use an MR's pages: they stay pinned with the context. */
static void mr_failed(struct rnic_ctx *c, struct rnic_mr *mr)
{
	if (c->dev.dead && mr->pages)
		list_add(&mr->node, &c->mrs);
	else
		kfree(mr);
}

static int cmd_reg_mr(struct rnic_ctx *c, struct rnic_uapi_cmd *a)
{
	u32 access = RNIC_CMDI_REG_MR_ACCESS_GET(a->in), key;
	u64 va = RNIC_CMDI_REG_MR_VA_GET(a->in), len = RNIC_CMDI_REG_MR_LENGTH_GET(a->in);
	struct rnic_mr *mr;
	int ret;

	/* the page list is the driver's to make */
	if (RNIC_CMDI_REG_MR_PAGELIST_GET(a->in) || RNIC_CMDI_REG_MR_NPAGES_GET(a->in) ||
	    RNIC_CMDI_REG_MR_PAGE_SHIFT_GET(a->in) || !len || va + len < va)
		return -EINVAL;
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return -ENOMEM;
	mr->writable = writable(access);
	c->cur_mr = mr;
	ret = rnic_reg_mr(&c->dev, RNIC_CMDI_REG_MR_PDN_GET(a->in), access,
			  (void *)(uintptr_t)va, len, &key);
	c->cur_mr = NULL;
	if (ret) {
		mr_failed(c, mr);
		return ret;
	}
	mr->key = key;
	mr->va = va;
	mr->len = len;
	list_add(&mr->node, &c->mrs);
	memset(a->out, 0, sizeof(a->out));
	RNIC_CMDO_HANDLE_HANDLE_SET(a->out, key);
	return 0;
}

static int cmd_dereg_mr(struct rnic_ctx *c, struct rnic_uapi_cmd *a)
{
	struct rnic_mr *mr = mr_find(c, RNIC_CMDI_HANDLE_HANDLE_GET(a->in));
	int ret;

	if (!mr)
		return -EINVAL;
	c->cur_mr = mr;
	ret = rnic_dereg_mr(&c->dev, mr->key, NULL, 0);
	c->cur_mr = NULL;
	if (!ret) {
		list_del(&mr->node);
		kfree(mr);
	}
	return ret;
}

/*
 * REREG_MR: a new translation (or the same range again when the region becomes writable: its
 * pages were pinned read-only) is pinned into a new MR record; once the firmware has switched,
 * the old pages are unpinned.
 */
static int cmd_rereg_mr(struct rnic_ctx *c, struct rnic_uapi_cmd *a)
{
	u32 flags = RNIC_CMDI_REREG_MR_FLAGS_GET(a->in);
	u32 access = RNIC_CMDI_REREG_MR_ACCESS_GET(a->in);
	u32 pdn = RNIC_CMDI_REREG_MR_PDN_GET(a->in);
	struct rnic_mr *mr = mr_find(c, RNIC_CMDI_REREG_MR_KEY_GET(a->in)), *nm;
	u64 va, len;
	int ret;

	if (RNIC_CMDI_REREG_MR_PAGELIST_GET(a->in) || RNIC_CMDI_REREG_MR_NPAGES_GET(a->in) ||
	    RNIC_CMDI_REREG_MR_PAGE_SHIFT_GET(a->in) || !mr)
		return -EINVAL;
	if (!(flags & RNIC_REREG_TRANSLATION) &&
	    !((flags & RNIC_REREG_ACCESS) && writable(access) && !mr->writable))
		return rnic_rereg_mr(&c->dev, mr->key, flags, pdn, access, NULL, 0);
	va = flags & RNIC_REREG_TRANSLATION ? RNIC_CMDI_REREG_MR_VA_GET(a->in) : mr->va;
	len = flags & RNIC_REREG_TRANSLATION ? RNIC_CMDI_REREG_MR_LENGTH_GET(a->in) : mr->len;
	if (!len || va + len < va)
		return -EINVAL;
	nm = kzalloc(sizeof(*nm), GFP_KERNEL);
	if (!nm)
		return -ENOMEM;
	nm->key = mr->key;
	nm->va = va;
	nm->len = len;
	nm->writable = flags & RNIC_REREG_ACCESS ? writable(access) : mr->writable;
	c->cur_mr = nm;
	ret = rnic_rereg_mr(&c->dev, mr->key, flags | RNIC_REREG_TRANSLATION, pdn, access,
			    (void *)(uintptr_t)va, len);
	c->cur_mr = NULL;
	if (ret) {
		mr_failed(c, nm);
		return ret;
	}
	mr_unpin(c, mr, mr->npages);
	list_replace(&mr->node, &nm->node);
	kfree(mr);
	return 0;
}

static int cmd_run(struct rnic_ctx *c, struct rnic_uapi_cmd *a)
{
	struct rnic_ring *r1 = NULL, *r2 = NULL;
	u32 op = a->opcode, destroy_op = 0, handle, log;
	u8 *in = a->in;
	int ret;

	switch (op) {
	case RNIC_CMD_DESTROY_CQ:
	case RNIC_CMD_DESTROY_QP:
	case RNIC_CMD_DESTROY_SRQ:
		ret = rnic_cmd_exec(&c->dev, op, in, sizeof(a->in), a->out, sizeof(a->out));
		if (!ret) /* the object's rings are free again */
			rings_release(c, op, RNIC_CMDI_HANDLE_HANDLE_GET(in));
		return ret;
	case RNIC_CMD_QUERY_DEVICE:
	case RNIC_CMD_ALLOC_PD:
	case RNIC_CMD_DEALLOC_PD:
	case RNIC_CMD_MODIFY_QP:
	case RNIC_CMD_QUERY_QP:
	case RNIC_CMD_MODIFY_SRQ:
	case RNIC_CMD_CREATE_AH:
	case RNIC_CMD_CM_CREATE_ID:
	case RNIC_CMD_CM_DESTROY_ID:
	case RNIC_CMD_CM_LISTEN:
	case RNIC_CMD_CM_PDATA:
	case RNIC_CMD_CM_ACCEPT:
	case RNIC_CMD_CM_REJECT:
	case RNIC_CMD_CM_CONNECT:
	case RNIC_CMD_CM_DISCONNECT:
	case RNIC_CMD_CM_ESTABLISH:
		break;
	case RNIC_CMD_CM_CREATE_EVQ:
		/* the ring stays the firmware's until the context ends */
		log = RNIC_CMDI_CM_CREATE_EVQ_LOG_SIZE_GET(in);
		if (!log || log > 12)
			return -EINVAL;
		ret = ring_use(c, in + RNIC_CMDI_CM_CREATE_EVQ_BASE_OFF,
			       (u64)RNIC_CM_EVENT_BYTES << log, &r1);
		if (ret)
			return ret;
		ret = rnic_cmd_exec(&c->dev, op, in, sizeof(a->in), a->out, sizeof(a->out));
		if (!ret)
			r1->freed_by = RNIC_CMD_CM_CREATE_EVQ;
		return ret;
	case RNIC_CMD_CREATE_CQ:
		if (RNIC_CMDI_CREATE_CQ_LOG_SIZE_GET(in) > RNIC_MAX_CQE_LOG)
			return -EINVAL;
		ret = ring_use(c, in + RNIC_CMDI_CREATE_CQ_BASE_OFF,
			       (u64)RNIC_CQE_BYTES << RNIC_CMDI_CREATE_CQ_LOG_SIZE_GET(in), &r1);
		if (ret)
			return ret;
		destroy_op = RNIC_CMD_DESTROY_CQ;
		break;
	case RNIC_CMD_CREATE_QP:
		if (RNIC_CMDI_CREATE_QP_SQ_LOG_GET(in) > RNIC_MAX_QP_WR_LOG ||
		    RNIC_CMDI_CREATE_QP_RQ_LOG_GET(in) > RNIC_MAX_QP_WR_LOG)
			return -EINVAL;
		ret = ring_use(c, in + RNIC_CMDI_CREATE_QP_SQ_BASE_OFF,
			       (u64)RNIC_WQE_BYTES << RNIC_CMDI_CREATE_QP_SQ_LOG_GET(in), &r1);
		if (ret)
			return ret;
		ret = ring_use(c, in + RNIC_CMDI_CREATE_QP_RQ_BASE_OFF,
			       (u64)RNIC_RWQE_BYTES << RNIC_CMDI_CREATE_QP_RQ_LOG_GET(in), &r2);
		if (ret || r1 == r2)
			return -EINVAL;
		destroy_op = RNIC_CMD_DESTROY_QP;
		break;
	case RNIC_CMD_CREATE_SRQ:
		if (RNIC_CMDI_CREATE_SRQ_LOG_SIZE_GET(in) > RNIC_MAX_QP_WR_LOG)
			return -EINVAL;
		ret = ring_use(c, in + RNIC_CMDI_CREATE_SRQ_BASE_OFF,
			       (u64)RNIC_RWQE_BYTES << RNIC_CMDI_CREATE_SRQ_LOG_SIZE_GET(in), &r1);
		if (ret)
			return ret;
		destroy_op = RNIC_CMD_DESTROY_SRQ;
		break;
	case RNIC_CMD_RESIZE_CQ:
		if (RNIC_CMDI_RESIZE_CQ_LOG_SIZE_GET(in) > RNIC_MAX_CQE_LOG)
			return -EINVAL;
		ret = ring_use(c, in + RNIC_CMDI_RESIZE_CQ_BASE_OFF,
			       (u64)RNIC_CQE_BYTES << RNIC_CMDI_RESIZE_CQ_LOG_SIZE_GET(in), &r1);
		if (ret)
			return ret;
		ret = rnic_cmd_exec(&c->dev, op, in, sizeof(a->in), a->out, sizeof(a->out));
		if (ret)
			return ret;
		/* the CQ's old ring is free, the new one is the CQ's */
		handle = RNIC_CMDI_RESIZE_CQ_CQN_GET(in);
		rings_release(c, RNIC_CMD_DESTROY_CQ, handle);
		r1->freed_by = RNIC_CMD_DESTROY_CQ;
		r1->user = handle;
		return 0;
	case RNIC_CMD_REG_MR:
		return cmd_reg_mr(c, a);
	case RNIC_CMD_REREG_MR:
		return cmd_rereg_mr(c, a);
	case RNIC_CMD_DEREG_MR:
		return cmd_dereg_mr(c, a);
	default:
		return -EINVAL; /* CREATE_EQ and the rest are the driver's */
	}
	ret = rnic_cmd_exec(&c->dev, op, in, sizeof(a->in), a->out, sizeof(a->out));
	if (ret || !destroy_op)
		return ret;
	handle = RNIC_CMDO_HANDLE_HANDLE_GET(a->out);
	if (r1) {
		r1->freed_by = destroy_op;
		r1->user = handle;
	}
	if (r2) {
		r2->freed_by = destroy_op;
		r2->user = handle;
	}
	return 0;
}

static long ioctl_cmd(struct rnic_ctx *c, void __user *arg)
{
	struct rnic_uapi_cmd *a;
	long ret;

	a = kmalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	ret = -EFAULT;
	if (copy_from_user(a, arg, sizeof(*a)))
		goto out;
	ret = -EINVAL;
	if (a->status || a->reserved[0] || a->reserved[1])
		goto out;
	memset(a->out, 0, sizeof(a->out));
	c->dev.status = RNIC_CMD_ST_OK; /* what status says when the firmware was not asked */
	ret = cmd_run(c, a);
	a->status = c->dev.status;
	/* the firmware's status and output go back with its error too */
	if (copy_to_user(arg, a, sizeof(*a)))
		ret = -EFAULT;
out:
	kfree(a);
	return ret;
}

static long ioctl_alloc_ring(struct rnic_ctx *c, void __user *arg)
{
	struct rnic_uapi_alloc_ring a;
	struct rnic_ring *r;
	unsigned int i;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	if (!a.size || a.size > RNIC_UAPI_RING_STRIDE || !PAGE_ALIGNED(a.size) || a.offset)
		return -EINVAL;
	for (i = 0; i < RNIC_UAPI_MAX_RINGS && c->rings[i]; i++)
		;
	if (i == RNIC_UAPI_MAX_RINGS)
		return -ENOMEM;
	r = kzalloc(sizeof(*r), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->size = a.size;
	r->mm = current->mm;
	if (charge(r->mm, r->size >> PAGE_SHIFT)) {
		kfree(r);
		return -ENOMEM;
	}
	r->cpu = dma_alloc_coherent(&c->rp->pdev->dev, r->size, &r->bus, GFP_KERNEL);
	if (!r->cpu) {
		uncharge(r->mm, r->size >> PAGE_SHIFT);
		kfree(r);
		return -ENOMEM;
	}
	c->rings[i] = r;
	a.offset = (u64)(i + 1) * RNIC_UAPI_RING_STRIDE;
	if (copy_to_user(arg, &a, sizeof(a))) {
		ring_free(c, i);
		return -EFAULT;
	}
	return 0;
}

static long ioctl_free_ring(struct rnic_ctx *c, void __user *arg)
{
	struct rnic_uapi_free_ring a;
	struct rnic_ring *r;
	unsigned int slot;

	if (copy_from_user(&a, arg, sizeof(a)))
		return -EFAULT;
	r = ring_get(c, a.offset, &slot);
	if (!r)
		return -EINVAL;
	if (r->freed_by || atomic_read(&r->maps))
		return -EBUSY;
	ring_free(c, slot);
	return 0;
}

static long ioctl_query(struct rnic_ctx *c, void __user *arg)
{
	struct rnic_uapi_query q;

	memset(&q, 0, sizeof(q));
	q.uapi_version = RNIC_UAPI_VERSION;
	q.ctx = c->ctx;
	q.build_id = c->dev.build_id;
	q.if_version = RNIC_IF_VERSION;
	q.db_offset = RNIC_UAPI_DB_OFFSET;
	q.db_size = PAGE_SIZE;
	q.db_page = c->dev.page;
	q.eq_log = RNIC_EQ_LOG;
	q.eq_offset = RNIC_UAPI_EQ_OFFSET;
	BUILD_BUG_ON(sizeof(q.device) != sizeof(c->dev.info));
	memcpy(q.device, c->dev.info, sizeof(q.device));
	return copy_to_user(arg, &q, sizeof(q)) ? -EFAULT : 0;
}

static long ioctl_clock(struct rnic_ctx *c, void __user *arg)
{
	void __iomem *bar = c->rp->bar;
	struct rnic_uapi_clock a;
	u32 hi, lo;

	memset(&a, 0, sizeof(a));
	do { /* the high word must not move under the low one */
		hi = ioread32(bar + RNIC_CLOCK_CYCLES_HI);
		lo = ioread32(bar + RNIC_CLOCK_CYCLES_LO);
	} while (ioread32(bar + RNIC_CLOCK_CYCLES_HI) != hi);
	a.cycles = (u64)hi << 32 | lo;
	a.freq_khz = ioread32(bar + RNIC_CLOCK_FREQ_KHZ);
	return copy_to_user(arg, &a, sizeof(a)) ? -EFAULT : 0;
}

static long rnic_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct rnic_ctx *c = file->private_data;
	void __user *u = (void __user *)arg;
	long ret;

	mutex_lock(&c->lock);
	if (!c->live || c->revoked) {
		ret = -ENODEV;
		goto out;
	}
	/* after a command timeout the firmware may still use what it was given: nothing is freed */
	if (c->dev.dead && cmd != RNIC_IOCTL_QUERY && cmd != RNIC_IOCTL_CLOCK) {
		ret = -EIO;
		goto out;
	}
	switch (cmd) {
	case RNIC_IOCTL_QUERY:
		ret = ioctl_query(c, u);
		break;
	case RNIC_IOCTL_CMD:
		ret = ioctl_cmd(c, u);
		break;
	case RNIC_IOCTL_ALLOC_RING:
		ret = ioctl_alloc_ring(c, u);
		break;
	case RNIC_IOCTL_FREE_RING:
		ret = ioctl_free_ring(c, u);
		break;
	case RNIC_IOCTL_CLOCK:
		ret = ioctl_clock(c, u);
		break;
	default:
		ret = -ENOTTY;
	}
out:
	mutex_unlock(&c->lock);
	return ret;
}

/* ---- mmap: the doorbell page (uncached), the event queue (read-only), the rings */
static void ring_vm_open(struct vm_area_struct *vma)
{
	struct rnic_ring *r = vma->vm_private_data;

	atomic_inc(&r->maps);
}

static void ring_vm_close(struct vm_area_struct *vma)
{
	struct rnic_ring *r = vma->vm_private_data;

	atomic_dec(&r->maps);
}

static const struct vm_operations_struct ring_vm_ops = {
	.open = ring_vm_open,
	.close = ring_vm_close,
};

static int mmap_coherent(struct rnic_ctx *c, struct vm_area_struct *vma, void *cpu, dma_addr_t bus,
			 size_t size)
{
	if (vma->vm_end - vma->vm_start != PAGE_ALIGN(size))
		return -EINVAL;
	vma->vm_pgoff = 0;
	return dma_mmap_coherent(&c->rp->pdev->dev, vma, cpu, bus, size);
}

static int mmap_eq(struct rnic_ctx *c, struct vm_area_struct *vma)
{
	int i;

	if (vma->vm_flags & VM_WRITE)
		return -EPERM; /* an mprotect later could only garble the process's own events */
	for (i = 0; i < MAX_DMA; i++)
		if (c->dma[i].cpu && c->dma[i].cpu == c->dev.eq)
			return mmap_coherent(c, vma, c->dma[i].cpu, c->dma[i].bus, c->dma[i].size);
	return -EINVAL;
}

static int rnic_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct rnic_ctx *c = file->private_data;
	u64 off = (u64)vma->vm_pgoff << PAGE_SHIFT;
	struct rnic_ring *r;
	int ret = -EINVAL;

	mutex_lock(&c->lock);
	if (!c->live || c->revoked) {
		ret = -ENODEV;
		goto out;
	}
	if (off == RNIC_UAPI_DB_OFFSET) {
		if (vma->vm_end - vma->vm_start != PAGE_SIZE ||
		    c->dev.page + PAGE_SIZE > c->rp->bar_len)
			goto out;
		vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
		ret = io_remap_pfn_range(vma, vma->vm_start,
					 (c->rp->bar_start + c->dev.page) >> PAGE_SHIFT, PAGE_SIZE,
					 vma->vm_page_prot);
	} else if (off == RNIC_UAPI_EQ_OFFSET) {
		ret = mmap_eq(c, vma);
	} else {
		r = ring_get(c, off, NULL);
		if (!r)
			goto out;
		ret = mmap_coherent(c, vma, r->cpu, r->bus, r->size);
		if (!ret) {
			vma->vm_private_data = r;
			vma->vm_ops = &ring_vm_ops;
			ring_vm_open(vma);
		}
	}
out:
	mutex_unlock(&c->lock);
	return ret;
}

static __poll_t rnic_poll(struct file *file, poll_table *wait)
{
	struct rnic_ctx *c = file->private_data;

	poll_wait(file, &c->rp->wq[c->ctx], wait);
	return atomic64_read(&c->rp->irqs[c->ctx]) != c->irqs_seen ? EPOLLIN | EPOLLRDNORM : 0;
}

/* read: 8 bytes, the number of interrupts since the last read (blocks until there is one) */
static ssize_t rnic_read(struct file *file, char __user *buf, size_t len, loff_t *off)
{
	struct rnic_ctx *c = file->private_data;
	atomic64_t *n = &c->rp->irqs[c->ctx];
	u64 now, count;
	int ret;

	if (len < sizeof(u64))
		return -EINVAL;
	if (file->f_flags & O_NONBLOCK) {
		if (atomic64_read(n) == c->irqs_seen)
			return -EAGAIN;
	} else {
		ret = wait_event_interruptible(c->rp->wq[c->ctx], atomic64_read(n) != c->irqs_seen);
		if (ret)
			return ret;
	}
	now = atomic64_read(n);
	count = now - c->irqs_seen;
	c->irqs_seen = now;
	if (copy_to_user(buf, &count, sizeof(count)))
		return -EFAULT;
	return sizeof(count);
}

static const struct file_operations rnic_fops = {
	.owner = THIS_MODULE,
	.open = rnic_open,
	.release = rnic_release,
	.unlocked_ioctl = rnic_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = rnic_mmap,
	.poll = rnic_poll,
	.read = rnic_read,
	.llseek = noop_llseek,
};

/* ---- sysfs of /dev/rnicN: what the verbs library reports as the device's board and build */
static ssize_t build_id_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	struct rnic_pci *rp = container_of(dev_get_drvdata(dev), struct rnic_pci, misc);

	return sysfs_emit(buf, "%08x\n", rp->admin.dev.build_id);
}
static DEVICE_ATTR_RO(build_id);

static ssize_t board_id_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "RNIC-PCI\n");
}
static DEVICE_ATTR_RO(board_id);

static struct attribute *rnic_attrs[] = {
	&dev_attr_build_id.attr,
	&dev_attr_board_id.attr,
	NULL,
};
ATTRIBUTE_GROUPS(rnic);

/* ---- probe and remove */
static void rnic_free_irqs(struct rnic_pci *rp, int n)
{
	while (n--)
		free_irq(pci_irq_vector(rp->pdev, n), &rp->vec[n]);
	pci_free_irq_vectors(rp->pdev);
}

static int rnic_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct rnic_pci *rp;
	int ret, i, idx;

	rp = kzalloc(sizeof(*rp), GFP_KERNEL);
	if (!rp)
		return -ENOMEM;
	rp->pdev = pci_dev_get(pdev); /* rings of open files are freed after remove */
	kref_init(&rp->ref);
	mutex_init(&rp->lock);
	INIT_LIST_HEAD(&rp->files);
	for (i = 0; i < RNIC_NUM_CTX; i++)
		init_waitqueue_head(&rp->wq[i]);
	pci_set_drvdata(pdev, rp);

	ret = pci_enable_device_mem(pdev);
	if (ret)
		goto err_free;
	ret = pci_request_regions(pdev, DRV_NAME);
	if (ret)
		goto err_disable;
	pci_set_master(pdev);
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_regions;
	rp->bar_start = pci_resource_start(pdev, 0);
	rp->bar_len = pci_resource_len(pdev, 0);
	rp->bar = pci_iomap(pdev, 0, 0);
	if (!rp->bar) {
		ret = -ENOMEM;
		goto err_regions;
	}

	/* one vector per context; fewer vectors means fewer contexts */
	rp->nvec = pci_alloc_irq_vectors(pdev, 2, RNIC_NUM_CTX, PCI_IRQ_MSIX);
	if (rp->nvec < 0) {
		ret = rp->nvec;
		goto err_unmap;
	}
	for (i = 0; i < rp->nvec; i++) {
		rp->vec[i].rp = rp;
		rp->vec[i].n = i;
		ret = request_irq(pci_irq_vector(pdev, i), rnic_irq, 0, DRV_NAME, &rp->vec[i]);
		if (ret) {
			rnic_free_irqs(rp, i);
			goto err_unmap;
		}
	}

	/* the card itself: blocks, interface version, firmware ready, context 0 for the driver */
	ret = ctx_start(rp, &rp->admin, 0);
	if (ret) {
		dev_err(&pdev->dev, "bring-up failed (%d): not an RNIC image of interface %u?\n",
			ret, RNIC_IF_VERSION);
		goto err_irqs;
	}
	set_bit(0, rp->ctx_used);
	dev_info(&pdev->dev, "RNIC build %08x, interface %u, %d contexts\n", rp->admin.dev.build_id,
		 RNIC_IF_VERSION, rp->nvec - 1);

	idx = ida_alloc(&rnic_ida, GFP_KERNEL);
	if (idx < 0) {
		ret = idx;
		goto err_admin;
	}
	snprintf(rp->name, sizeof(rp->name), "rnic%d", idx);
	rp->misc.minor = MISC_DYNAMIC_MINOR;
	rp->misc.name = rp->name;
	rp->misc.fops = &rnic_fops;
	rp->misc.groups = rnic_groups;
	rp->misc.parent = &pdev->dev;
	ret = misc_register(&rp->misc);
	if (ret)
		goto err_ida;
	return 0;

err_ida:
	ida_free(&rnic_ida, idx);
err_admin:
	ctx_stop(rp, &rp->admin);
err_irqs:
	rnic_free_irqs(rp, rp->nvec);
err_unmap:
	pci_iounmap(pdev, rp->bar);
err_regions:
	pci_release_regions(pdev);
err_disable:
	pci_disable_device(pdev);
err_free:
	kref_put(&rp->ref, rnic_free);
	return ret;
}

static void rnic_remove(struct pci_dev *pdev)
{
	struct rnic_pci *rp = pci_get_drvdata(pdev);
	int idx;

	struct rnic_ctx *c;

	misc_deregister(&rp->misc);
	if (sscanf(rp->name, "rnic%d", &idx) == 1)
		ida_free(&rnic_ida, idx);
	/*
	 * Files still open lose their contexts now (hot reset after flashing, unplug). Each file's
	 * mappings go first (a later access gets SIGBUS; an mmap racing with this sees `revoked`
	 * under the context's lock), so nothing is mapped when ctx_stop frees the event queue.
	 */
	mutex_lock(&rp->lock);
	rp->gone = true;
	list_for_each_entry(c, &rp->files, node) {
		mutex_lock(&c->lock);
		c->revoked = true;
		mutex_unlock(&c->lock);
		unmap_mapping_range(c->mapping, 0, 0, 1);
	}
	list_for_each_entry(c, &rp->files, node)
		ctx_stop(rp, c);
	ctx_stop(rp, &rp->admin);
	mutex_unlock(&rp->lock);
	rnic_free_irqs(rp, rp->nvec);
	pci_iounmap(pdev, rp->bar);
	pci_release_regions(pdev);
	pci_disable_device(pdev);
	kref_put(&rp->ref, rnic_free);
}

static const struct pci_device_id rnic_ids[] = {
	{ PCI_DEVICE(RNIC_VENDOR_ID, RNIC_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, rnic_ids);

static struct pci_driver rnic_driver = {
	.name = DRV_NAME,
	.id_table = rnic_ids,
	.probe = rnic_probe,
	.remove = rnic_remove,
};
module_pci_driver(rnic_driver);

MODULE_DESCRIPTION("RNIC: open RoCEv2 NIC for Alveo cards");
MODULE_LICENSE("Dual MIT/GPL");
