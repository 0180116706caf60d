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
#include <linux/math64.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "rnic_drv.h"

/* One user cannot hold every context of the card (CAP_SYS_ADMIN can). */
static unsigned int ctx_per_user = 4;
module_param(ctx_per_user, uint, 0644);
MODULE_PARM_DESC(ctx_per_user, "Open files of one user per card (default 4)");

/* The Ethernet MTU of the card's network: the port's active MTU follows (ADMIN.ETH_MTU) */
static unsigned int eth_mtu = 1500;
module_param(eth_mtu, uint, 0444);
MODULE_PARM_DESC(eth_mtu, "Ethernet MTU of the card's network, 576 to 9216 (default 1500: active MTU 1024)");

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
int rnic_charge(struct mm_struct *mm, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	if (atomic64_add_return(npages, &mm->pinned_vm) > limit && !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	mmgrab(mm);
	return 0;
}

void rnic_uncharge(struct mm_struct *mm, unsigned long npages)
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

void rnic_mr_unpin(struct rnic_ctx *c, struct rnic_mr *mr, unsigned long n)
{
	struct device *dev = &c->rp->pdev->dev;
	unsigned long i;

	for (i = 0; i < n; i++)
		if (mr->dma[i])
			dma_unmap_page(dev, mr->dma[i], PAGE_SIZE, DMA_BIDIRECTIONAL);
	unpin_user_pages_dirty_lock(mr->pages, n, mr->writable);
	rnic_uncharge(mr->mm, mr->npages);
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
	ret = rnic_charge(mr->mm, npages);
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
			rnic_mr_unpin(c, mr, npages);
			return -ENOMEM;
		}
		mr->dma[i] = a;
		pages[i] = a;
	}
	return 0;

err_account:
	rnic_uncharge(mr->mm, npages);
err_free:
	mr_free_lists(mr);
	return ret;
}

/* a failed REG_MR or a done DEREG_MR: the MR in hand loses its pages */
static void k_dma_unmap(void *bus, void *va, size_t len)
{
	struct rnic_ctx *c = bus;

	if (c->cur_mr && c->cur_mr->pages)
		rnic_mr_unpin(c, c->cur_mr, c->cur_mr->npages);
}

/*
 * The card's time (its free-running CLOCK counter) in microseconds: the driver's timeouts count
 * the NIC's time, so they hold where the NIC runs slower than the host (a simulated card under a
 * VM: a second of its time takes minutes); on a card the two run alike. The counter runs on the
 * clock that also answers BAR reads, so it cannot stand still while reads succeed; a card that is
 * gone reads all ones, and then the host's time counts from far ahead: every deadline has passed,
 * and one set meanwhile passes after its length of host time.
 */
static u64 card_us(struct rnic_pci *rp)
{
	u32 khz = ioread32(rp->bar + RNIC_CLOCK_FREQ_KHZ), hi, lo;

	if (!khz || khz == ~0u)
		return (1ull << 62) + ktime_get_ns() / NSEC_PER_USEC;
	hi = ioread32(rp->bar + RNIC_CLOCK_CYCLES_HI);
	lo = ioread32(rp->bar + RNIC_CLOCK_CYCLES_LO);
	if (ioread32(rp->bar + RNIC_CLOCK_CYCLES_HI) != hi)
		lo = 0; /* the low word wrapped in between: the start of the new high word */
	return div_u64((((u64)hi << 32) | lo) * 1000, khz);
}

static u64 k_now_us(void *bus)
{
	struct rnic_ctx *c = bus;

	return card_us(c->rp);
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
	mutex_init(&c->umap_lock);
	INIT_LIST_HEAD(&c->umaps);
	c->irqs_seen = atomic64_read(&rp->irqs[ctx]);
	c->relax_seen = c->irqs_seen;
	ret = rnic_dev_init(&c->dev, &rnic_kbus_ops, c, ctx);
	c->live = !ret;
	return ret;
}

void rnic_ring_free(struct rnic_ctx *c, unsigned int slot)
{
	struct rnic_ring *r = c->rings[slot];

	dma_free_coherent(&c->rp->pdev->dev, r->size, r->cpu, r->bus);
	rnic_uncharge(r->mm, r->size >> PAGE_SHIFT);
	kfree(r);
	c->rings[slot] = NULL;
}

/* rings still mapped (the card was removed under the process) wait for the last close */
static void rings_free(struct rnic_ctx *c, bool mapped_too)
{
	int i;

	for (i = 0; i < RNIC_UAPI_MAX_RINGS; i++)
		if (c->rings[i] && (mapped_too || !atomic_read(&c->rings[i]->maps)))
			rnic_ring_free(c, i);
}

/*
 * The firmware frees what the context owned (as when a process dies) and stops its DMA; only
 * then do its queues, rings and pinned pages go. If the card does not confirm, they stay
 * allocated (leaked) rather than be reused under a device that may still write to them.
 */
static void ctx_stop(struct rnic_pci *rp, struct rnic_ctx *c)
{
	struct rnic_mr *mr, *tmp;
	u64 end;

	mutex_lock(&c->lock);
	if (!c->live)
		goto out; /* stopped already; after removal the BAR is unmapped */
	c->live = false;
	end = card_us(rp) + RESET_TIMEOUT_MS * USEC_PER_MSEC;
	iowrite32(c->ctx, rp->bar + RNIC_ADMIN_CTX_RESET);
	while (ioread32(rp->bar + RNIC_ADMIN_CTX_RESET_PENDING) & BIT(c->ctx)) {
		if (card_us(rp) > end || c->dev.dead) {
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
		rnic_mr_unpin(c, mr, mr->npages);
		list_del(&mr->node);
		kfree(mr);
	}
out:
	mutex_unlock(&c->lock);
}

/*
 * Context memory: the chunks the NIC asks for (ADMIN.ICM_CHUNKS), zeroed, DMA-coherent, each
 * aligned to its size (dma_alloc_coherent aligns to the allocation's order), listed for the
 * firmware, which answers in ADMIN.ICM_STATUS.
 */
static int icm_wait(struct rnic_pci *rp, u32 want)
{
	u64 end = card_us(rp) + RESET_TIMEOUT_MS * USEC_PER_MSEC;
	u32 st;

	while ((st = ioread32(rp->bar + RNIC_ADMIN_ICM_STATUS)) != want) {
		if (st == RNIC_ICM_ST_REFUSED)
			return -EIO;
		if (card_us(rp) > end)
			return -ETIMEDOUT;
		usleep_range(100, 200);
	}
	return 0;
}

static void icm_free(struct rnic_pci *rp)
{
	unsigned int i;

	if (rp->icm_leak)
		return;
	for (i = 0; i < rp->icm_n; i++)
		dma_free_coherent(&rp->pdev->dev, 1u << RNIC_ICM_CHUNK_LOG, rp->icm_va[i],
				  rp->icm_bus[i]);
	if (rp->icm_list)
		dma_free_coherent(&rp->pdev->dev, PAGE_SIZE, rp->icm_list, rp->icm_list_bus);
	rp->icm_n = 0;
	rp->icm_list = NULL;
}

static int icm_give(struct rnic_pci *rp)
{
	u32 n = ioread32(rp->bar + RNIC_ADMIN_ICM_CHUNKS);
	unsigned int i;
	int ret;

	BUILD_BUG_ON(RNIC_ICM_MAX_CHUNKS * 8 > PAGE_SIZE);
	if (!n || n > RNIC_ICM_MAX_CHUNKS)
		return -EIO;
	rp->icm_list = dma_alloc_coherent(&rp->pdev->dev, PAGE_SIZE, &rp->icm_list_bus, GFP_KERNEL);
	if (!rp->icm_list)
		return -ENOMEM;
	for (rp->icm_n = 0; rp->icm_n < n; rp->icm_n++) {
		i = rp->icm_n;
		rp->icm_va[i] = dma_alloc_coherent(&rp->pdev->dev, 1u << RNIC_ICM_CHUNK_LOG,
						   &rp->icm_bus[i], GFP_KERNEL);
		if (!rp->icm_va[i]) {
			icm_free(rp);
			return -ENOMEM;
		}
		rp->icm_list[i] = cpu_to_le64(rp->icm_bus[i]);
	}
	iowrite32(lower_32_bits(rp->icm_list_bus), rp->bar + RNIC_ADMIN_ICM_LIST_LO);
	iowrite32(upper_32_bits(rp->icm_list_bus), rp->bar + RNIC_ADMIN_ICM_LIST_HI);
	iowrite32(n, rp->bar + RNIC_ADMIN_ICM_LIST_N);
	ret = icm_wait(rp, RNIC_ICM_ST_TAKEN);
	if (ret) {
		dev_err(&rp->pdev->dev, "the NIC did not take its context memory (%u chunks)\n", n);
		/* unanswered, it may take it yet: then it is never freed */
		rp->icm_leak = ret == -ETIMEDOUT;
		icm_free(rp);
	}
	return ret;
}

/* After every context is reset: the NIC gives the memory back, or keeps it (and we leak it). */
static void icm_take_back(struct rnic_pci *rp)
{
	if (!rp->icm_n)
		return;
	iowrite32(0, rp->bar + RNIC_ADMIN_ICM_LIST_N);
	if (icm_wait(rp, RNIC_ICM_ST_NONE)) {
		dev_err(&rp->pdev->dev, "the NIC kept its context memory: it is not freed\n");
		rp->icm_leak = true;
	}
	icm_free(rp);
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
	/* rdma_cm listeners on ports below 1024 are the privileged ones' (cma_use_port) */
	if (capable(CAP_NET_BIND_SERVICE)) {
		rp->ctx_priv |= BIT(ctx);
		iowrite32(rp->ctx_priv, rp->bar + RNIC_ADMIN_CTX_PRIV);
	}
	list_add(&c->node, &rp->files);
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
	if (rp->ctx_priv & BIT(c->ctx)) {
		rp->ctx_priv &= ~BIT(c->ctx);
		if (!rp->gone) /* the BAR is unmapped once the card is removed */
			iowrite32(rp->ctx_priv, rp->bar + RNIC_ADMIN_CTX_PRIV);
	}
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

/* the ring an mmap offset or a command's ring field names, if this file allocated it */
struct rnic_ring *rnic_ring_get(struct rnic_ctx *c, u64 offset, unsigned int *slot)
{
	u64 n = div64_u64(offset, RNIC_UAPI_RING_STRIDE);

	if (offset % RNIC_UAPI_RING_STRIDE || n < 1 || n > RNIC_UAPI_MAX_RINGS)
		return NULL;
	if (slot)
		*slot = n - 1;
	return c->rings[n - 1];
}

bool rnic_writable(u32 access)
{
	return access & (RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE |
			 RNIC_ACCESS_REMOTE_ATOMIC);
}

/*
 * ---- mmap: the doorbell page (uncached), the event queue (read-only), the rings. Each vma is on
 * its file's umaps from ->mmap on, so that removal finds it even before the kernel links it into
 * the inode's i_mmap (after ->mmap returns).
 */
static const struct vm_operations_struct rnic_vm_ops;

static void umap_init(struct rnic_umap *u, struct vm_area_struct *vma, struct rnic_ring *r)
{
	INIT_LIST_HEAD(&u->node);
	u->vma = vma;
	u->ring = r;
	if (r)
		atomic_inc(&r->maps);
	vma->vm_private_data = u;
	vma->vm_ops = &rnic_vm_ops;
}

/*
 * A copy (fork) or a part (split, mremap) of a mapping: listed as the original is, unless removal
 * has zapped that already (then neither has a page left). It cannot fail, and a vma left off the
 * list would keep its pages through removal.
 */
static void rnic_vm_open(struct vm_area_struct *vma)
{
	struct rnic_ctx *c = vma->vm_file->private_data;
	struct rnic_umap *old = vma->vm_private_data;
	struct rnic_umap *u = kzalloc(sizeof(*u), GFP_KERNEL | __GFP_NOFAIL);

	umap_init(u, vma, old->ring);
	mutex_lock(&c->umap_lock);
	if (!list_empty(&old->node))
		list_add(&u->node, &c->umaps);
	mutex_unlock(&c->umap_lock);
}

static void rnic_vm_close(struct vm_area_struct *vma)
{
	struct rnic_ctx *c = vma->vm_file->private_data;
	struct rnic_umap *u = vma->vm_private_data;

	mutex_lock(&c->umap_lock);
	list_del(&u->node);
	mutex_unlock(&c->umap_lock);
	if (u->ring)
		atomic_dec(&u->ring->maps);
	kfree(u);
}

/* every page is mapped by ->mmap: a fault is an access after removal zapped them */
static vm_fault_t rnic_vm_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static const struct vm_operations_struct rnic_vm_ops = {
	.open = rnic_vm_open,
	.close = rnic_vm_close,
	.fault = rnic_vm_fault,
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
	struct rnic_ring *r = NULL;
	struct rnic_umap *u;
	int ret = -EINVAL;

	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return -ENOMEM;
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
		r = rnic_ring_get(c, off, NULL);
		if (r)
			ret = mmap_coherent(c, vma, r->cpu, r->bus, r->size);
	}
	/* listed under c->lock: removal sets `revoked` under it, then zaps what is listed */
	if (!ret) {
		umap_init(u, vma, r);
		mutex_lock(&c->umap_lock);
		list_add(&u->node, &c->umaps);
		mutex_unlock(&c->umap_lock);
	}
out:
	mutex_unlock(&c->lock);
	if (ret)
		kfree(u);
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

/* ---- the datapath counters: each read adds what a counter moved since the last (mod 2^32) */
void rnic_stats_update(struct rnic_pci *rp)
{
	u32 i, v;

	lockdep_assert_held(&rp->stats_lock);
	for (i = 0; i < rp->stats_n; i++) {
		v = ioread32(rp->bar + RNIC_STATS_COUNTER0 + 4 * i);
		rp->stats[i] += (u32)(v - rp->stats_raw[i]);
		rp->stats_raw[i] = v;
	}
}

static void stats_tick(struct work_struct *w)
{
	struct rnic_pci *rp = container_of(to_delayed_work(w), struct rnic_pci, stats_work);

	spin_lock(&rp->stats_lock);
	rnic_stats_update(rp);
	spin_unlock(&rp->stats_lock);
	schedule_delayed_work(&rp->stats_work, msecs_to_jiffies(100));
}

/* counts start at zero when the driver binds: the NIC's values now are the base */
static void stats_init(struct rnic_pci *rp)
{
	u32 i;

	spin_lock_init(&rp->stats_lock);
	INIT_DELAYED_WORK(&rp->stats_work, stats_tick);
	rp->stats_n = min_t(u32, ioread32(rp->bar + RNIC_STATS_COUNT), RNIC_UAPI_MAX_STATS);
	for (i = 0; i < rp->stats_n; i++)
		rp->stats_raw[i] = ioread32(rp->bar + RNIC_STATS_COUNTER0 + 4 * i);
}

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
	/*
	 * the NIC's secret, from the kernel's RNG: its keys, communication IDs and PSNs (it takes
	 * no context memory without one); the network's MTU
	 */
	for (i = 0; i < 4; i++)
		iowrite32(get_random_u32(), rp->bar + RNIC_ADMIN_SEED_0 + 4 * i);
	iowrite32(clamp(eth_mtu, 576u, 9216u), rp->bar + RNIC_ADMIN_ETH_MTU);
	/* before any process can make an object: their images go there */
	ret = icm_give(rp);
	if (ret)
		goto err_admin;
	dev_info(&pdev->dev, "RNIC build %08x, interface %u, %d contexts\n", rp->admin.dev.build_id,
		 RNIC_IF_VERSION, rp->nvec - 1);

	idx = ida_alloc(&rnic_ida, GFP_KERNEL);
	if (idx < 0) {
		ret = idx;
		goto err_admin;
	}
	stats_init(rp);
	snprintf(rp->name, sizeof(rp->name), "rnic%d", idx);
	rp->misc.minor = MISC_DYNAMIC_MINOR;
	rp->misc.name = rp->name;
	rp->misc.fops = &rnic_fops;
	rp->misc.groups = rnic_groups;
	rp->misc.parent = &pdev->dev;
	ret = misc_register(&rp->misc);
	if (ret)
		goto err_ida;
	schedule_delayed_work(&rp->stats_work, msecs_to_jiffies(100));
	return 0;

err_ida:
	ida_free(&rnic_ida, idx);
	icm_take_back(rp);
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

/*
 * Zap every vma on the file's umaps, one mm at a time: its mmap_lock, taken without umap_lock
 * (which vm_ops take under it), waits for an mmap still linking its vma.
 */
static void umaps_zap(struct rnic_ctx *c)
{
	struct rnic_umap *u, *tmp;
	struct mm_struct *mm;

	for (;;) {
		mm = NULL;
		mutex_lock(&c->umap_lock);
		list_for_each_entry_safe(u, tmp, &c->umaps, node) {
			if (mmget_not_zero(u->vma->vm_mm)) {
				mm = u->vma->vm_mm;
				break;
			}
			/* its mm is exiting: no process reaches its pages, exit_mmap unmaps them */
			list_del_init(&u->node);
		}
		mutex_unlock(&c->umap_lock);
		if (!mm)
			return;
		mmap_read_lock(mm);
		mutex_lock(&c->umap_lock);
		list_for_each_entry_safe(u, tmp, &c->umaps, node) {
			if (u->vma->vm_mm != mm)
				continue;
			zap_vma_ptes(u->vma, u->vma->vm_start, u->vma->vm_end - u->vma->vm_start);
			list_del_init(&u->node);
		}
		mutex_unlock(&c->umap_lock);
		mmap_read_unlock(mm);
		mmput(mm);
	}
}

static void rnic_remove(struct pci_dev *pdev)
{
	struct rnic_pci *rp = pci_get_drvdata(pdev);
	int idx;

	struct rnic_ctx *c;

	misc_deregister(&rp->misc);
	cancel_delayed_work_sync(&rp->stats_work);
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
		umaps_zap(c);
	}
	list_for_each_entry(c, &rp->files, node)
		ctx_stop(rp, c);
	icm_take_back(rp);
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
