// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * RNIC: the ioctls of /dev/rnicN. Every argument is copied in, checked, and only then used: a
 * firmware command (its ring handles resolved to the rings this file allocated, registered
 * memory pinned and listed here), ring allocation, the device query and the clock.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "rnic_drv.h"

/* a ring handle in a CREATE_* payload becomes the ring's bus address (a free ring, `need` long) */
static int ring_use(struct rnic_ctx *c, u8 *field, u64 need, struct rnic_ring **out)
{
	struct rnic_ring *r = rnic_ring_get(c, rnic_rd_le(field, 8), NULL);

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
	mr->writable = rnic_writable(access);
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
	    !((flags & RNIC_REREG_ACCESS) && rnic_writable(access) && !mr->writable))
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
	nm->writable = flags & RNIC_REREG_ACCESS ? rnic_writable(access) : mr->writable;
	c->cur_mr = nm;
	ret = rnic_rereg_mr(&c->dev, mr->key, flags | RNIC_REREG_TRANSLATION, pdn, access,
			    (void *)(uintptr_t)va, len);
	c->cur_mr = NULL;
	if (ret) {
		mr_failed(c, nm);
		return ret;
	}
	rnic_mr_unpin(c, mr, mr->npages);
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
	if (rnic_charge(r->mm, r->size >> PAGE_SHIFT)) {
		kfree(r);
		return -ENOMEM;
	}
	r->cpu = dma_alloc_coherent(&c->rp->pdev->dev, r->size, &r->bus, GFP_KERNEL);
	if (!r->cpu) {
		rnic_uncharge(r->mm, r->size >> PAGE_SHIFT);
		kfree(r);
		return -ENOMEM;
	}
	c->rings[i] = r;
	a.offset = (u64)(i + 1) * RNIC_UAPI_RING_STRIDE;
	if (copy_to_user(arg, &a, sizeof(a))) {
		rnic_ring_free(c, i);
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
	r = rnic_ring_get(c, a.offset, &slot);
	if (!r)
		return -EINVAL;
	if (r->freed_by || atomic_read(&r->maps))
		return -EBUSY;
	rnic_ring_free(c, slot);
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

static long ioctl_stats(struct rnic_ctx *c, void __user *arg)
{
	struct rnic_pci *rp = c->rp;
	struct rnic_uapi_stats *a;
	long ret;

	BUILD_BUG_ON(ARRAY_SIZE(a->counter) != RNIC_UAPI_MAX_STATS);
	a = kzalloc(sizeof(*a), GFP_KERNEL);
	if (!a)
		return -ENOMEM;
	spin_lock(&rp->stats_lock);
	rnic_stats_update(rp);
	a->count = rp->stats_n;
	memcpy(a->counter, rp->stats, rp->stats_n * sizeof(a->counter[0]));
	spin_unlock(&rp->stats_lock);
	ret = copy_to_user(arg, a, sizeof(*a)) ? -EFAULT : 0;
	kfree(a);
	return ret;
}

long rnic_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
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
	if (c->dev.dead && cmd != RNIC_IOCTL_QUERY && cmd != RNIC_IOCTL_CLOCK &&
	    cmd != RNIC_IOCTL_STATS) {
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
	case RNIC_IOCTL_STATS:
		ret = ioctl_stats(c, u);
		break;
	default:
		ret = -ENOTTY;
	}
out:
	mutex_unlock(&c->lock);
	return ret;
}
