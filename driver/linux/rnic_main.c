// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * RNIC: PCIe driver of the open RoCEv2 NIC for Alveo cards.
 *
 * Probe maps BAR0 and brings the card up through the portable driver core (the same C the
 * simulation's host library runs): register-block walk, interface version check, firmware ready,
 * command queue of context 0 (the driver's own). Each open file of /dev/rnicN is one of the other
 * hardware contexts: its command queue, its doorbell page (mmap) and its MSI-X vector, whose
 * interrupts poll()/read() report as a count. Closing the file (or the process dying) makes the
 * firmware free everything the context owned.
 *
 * Commands are polled (the driver core sleeps between polls); a timeout marks the device dead.
 * Not yet: user memory registration, rings and commands through ioctls (uapi version 1 has
 * QUERY only). Nothing here has run on a card.
 */
#include <linux/bitmap.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "rnic_core.h"
#include "rnic_uapi.h"

#define DRV_NAME "rnic"
#define MAX_DMA 8 /* coherent buffers per context: command queue, completions, event queue */

struct rnic_pci;

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
	bool live;                 /* cleared when the card goes away under an open file */
	struct list_head node;     /* in rp->files */
	struct rnic_dma dma[MAX_DMA];
	u64 irqs_seen;
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
	struct address_space *mapping; /* of the device node: where doorbell pages are mapped */
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

static int k_dma_map(void *bus, void *va, size_t len, u64 *pages, u32 npages)
{
	return -EOPNOTSUPP; /* user memory registration: not in uapi version 1 */
}

static void k_dma_unmap(void *bus, void *va, size_t len)
{
}

static u64 k_now_us(void *bus)
{
	return ktime_get_ns() / NSEC_PER_USEC;
}

static void k_relax(void *bus)
{
	usleep_range(10, 20);
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
	c->irqs_seen = atomic64_read(&rp->irqs[ctx]);
	ret = rnic_dev_init(&c->dev, &rnic_kbus_ops, c, ctx);
	c->live = !ret;
	return ret;
}

/* the firmware frees what the context owned (as when a process dies), then its memory goes */
static void ctx_stop(struct rnic_pci *rp, struct rnic_ctx *c)
{
	if (!c->live)
		return;
	c->live = false;
	rnic_dev_fini(&c->dev);
	iowrite32(c->ctx, rp->bar + RNIC_ADMIN_CTX_RESET);
}

static void rnic_free(struct kref *ref)
{
	kfree(container_of(ref, struct rnic_pci, ref));
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
	struct rnic_ctx *c;
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
	rp->mapping = file->f_mapping;
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
	clear_bit(c->ctx, rp->ctx_used);
	list_del(&c->node);
	mutex_unlock(&rp->lock);
	kfree(c);
	kref_put(&rp->ref, rnic_free);
	return 0;
}

static long rnic_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct rnic_ctx *c = file->private_data;
	struct rnic_uapi_query q;

	if (!READ_ONCE(c->live))
		return -ENODEV;
	switch (cmd) {
	case RNIC_IOCTL_QUERY:
		memset(&q, 0, sizeof(q));
		q.uapi_version = RNIC_UAPI_VERSION;
		q.ctx = c->ctx;
		q.build_id = c->dev.build_id;
		q.if_version = RNIC_IF_VERSION;
		q.db_offset = 0;
		q.db_size = PAGE_SIZE;
		BUILD_BUG_ON(sizeof(q.device) != sizeof(c->dev.info));
		memcpy(q.device, c->dev.info, sizeof(q.device));
		if (copy_to_user((void __user *)arg, &q, sizeof(q)))
			return -EFAULT;
		return 0;
	default:
		return -ENOTTY;
	}
}

/* offset 0, one page: the context's doorbell page of BAR0, uncached; nothing else maps */
static int rnic_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct rnic_ctx *c = file->private_data;
	resource_size_t pa = c->rp->bar_start + c->dev.page;

	if (!READ_ONCE(c->live))
		return -ENODEV;
	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != PAGE_SIZE ||
	    c->dev.page + PAGE_SIZE > c->rp->bar_len)
		return -EINVAL;
	vma->vm_page_prot = pgprot_noncached(vma->vm_page_prot);
	return io_remap_pfn_range(vma, vma->vm_start, pa >> PAGE_SHIFT, PAGE_SIZE,
				  vma->vm_page_prot);
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
	rp->pdev = pdev;
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
	/* files still open lose their contexts now (hot reset after flashing, unplug) */
	mutex_lock(&rp->lock);
	rp->gone = true;
	list_for_each_entry(c, &rp->files, node)
		ctx_stop(rp, c);
	if (rp->mapping)
		unmap_mapping_range(rp->mapping, 0, 0, 1); /* their doorbell pages too */
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
