/* Portable driver core: bring-up, command queue client, resources. */
#include <errno.h>
#include <string.h>

#include "rnic_core.h"

#define PAGE 4096u
#define PAGE_SHIFT 12u

static uint32_t rd(struct rnic_dev *d, uint32_t off)
{
	return d->ops->mmio_read(d->bus, off);
}

static void wr(struct rnic_dev *d, uint32_t off, uint32_t v)
{
	d->ops->mmio_write(d->bus, off, v);
}

int rnic_status_errno(uint32_t status)
{
	switch (status) {
	case RNIC_CMD_ST_OK:
		return 0;
	case RNIC_CMD_ST_BAD_OPCODE:
		return -EOPNOTSUPP;
	case RNIC_CMD_ST_NO_RESOURCES:
		return -ENOMEM;
	case RNIC_CMD_ST_BUSY:
		return -EBUSY;
	case RNIC_CMD_ST_UNREACHABLE:
		return -EHOSTUNREACH;
	case RNIC_CMD_ST_DMA_ERROR:
		return -EFAULT;
	case RNIC_CMD_ST_DENIED:
		return -EPERM;
	case RNIC_CMD_ST_BAD_PARAM:
	case RNIC_CMD_ST_BAD_STATE:
	case RNIC_CMD_ST_BAD_HANDLE:
		return -EINVAL;
	default:
		return -EIO;
	}
}

/* Walk the self-describing blocks from offset 0; check identity and interface version. */
static int probe_blocks(struct rnic_dev *d)
{
	uint32_t off = 0, seen = 0, n;

	for (n = 0; n < 64; n++) {
		uint32_t type = rd(d, off + RNIC_BLK_TYPE), next = rd(d, off + RNIC_BLK_NEXT);

		if (type == RNIC_BLOCK_TYPE_ID) {
			if (rd(d, RNIC_ID_VENDOR_DEVICE) != (RNIC_VENDOR_ID | (RNIC_DEVICE_ID << 16)))
				return -ENODEV;
			if (rd(d, RNIC_ID_IF_VERSION) != RNIC_IF_VERSION)
				return -EPROTO;
			d->build_id = rd(d, RNIC_ID_BUILD_ID);
			d->page = rd(d, RNIC_ID_CTX_BASE) + d->ctx * rd(d, RNIC_ID_CTX_STRIDE);
			d->cmdq_page = rd(d, RNIC_ID_CMDQ_BASE) + d->ctx * rd(d, RNIC_ID_CTX_STRIDE);
			if (d->ctx >= rd(d, RNIC_ID_NUM_CTX))
				return -EINVAL;
			seen |= 1;
		} else if (type == RNIC_BLOCK_TYPE_CTX) {
			seen |= 2;
		}
		if (!next)
			return seen == 3 ? 0 : -ENODEV;
		if (next <= off || next >= RNIC_BAR0_CTX_BASE)
			return -ENODEV;
		off = next;
	}
	return -ENODEV;
}

int rnic_dev_init(struct rnic_dev *d, const struct rnic_bus_ops *ops, void *bus, uint32_t ctx)
{
	uint8_t in[RNIC_CMDI_CREATE_EQ_SIZE];
	uint64_t start;
	int ret;

	memset(d, 0, sizeof(*d));
	d->ops = ops;
	d->bus = bus;
	d->ctx = ctx;
	ret = probe_blocks(d);
	if (ret)
		return ret;
	start = ops->now_us(bus);
	while (!(rd(d, RNIC_ID_FW_STATUS) & RNIC_ID_FW_STATUS_READY_MASK)) {
		if (ops->now_us(bus) - start > RNIC_FW_READY_TIMEOUT_US)
			return -ETIMEDOUT;
		ops->relax(bus);
	}
	d->cmdq = ops->dma_alloc(bus, RNIC_CMD_BYTES << RNIC_CMD_LOG, &d->cmdq_bus);
	d->cmdc = ops->dma_alloc(bus, RNIC_CMDC_BYTES << RNIC_CMD_LOG, &d->cmdc_bus);
	d->eq = ops->dma_alloc(bus, RNIC_EQE_BYTES << RNIC_EQ_LOG, &d->eq_bus);
	if (!d->cmdq || !d->cmdc || !d->eq) {
		rnic_dev_fini(d);
		return -ENOMEM;
	}
	/* a new owner of the context starts from index 0 with the queue disabled */
	wr(d, d->cmdq_page + RNIC_CTX_CMDQ_CTRL, 0);
	wr(d, d->cmdq_page + RNIC_CTX_CMDQ_BASE_LO, (uint32_t)d->cmdq_bus);
	wr(d, d->cmdq_page + RNIC_CTX_CMDQ_BASE_HI, (uint32_t)(d->cmdq_bus >> 32));
	wr(d, d->cmdq_page + RNIC_CTX_CMDC_BASE_LO, (uint32_t)d->cmdc_bus);
	wr(d, d->cmdq_page + RNIC_CTX_CMDC_BASE_HI, (uint32_t)(d->cmdc_bus >> 32));
	wr(d, d->cmdq_page + RNIC_CTX_CMDQ_PI, 0);
	if (rd(d, d->cmdq_page + RNIC_CTX_CMDQ_CI) & 0xffff) {
		rnic_dev_fini(d);
		return -EBUSY; /* the firmware has not finished resetting this context */
	}
	wr(d, d->cmdq_page + RNIC_CTX_CMDQ_CTRL, RNIC_SET(RNIC_CTX_CMDQ_CTRL_LOG_SIZE, RNIC_CMD_LOG) |
	   RNIC_CTX_CMDQ_CTRL_ENABLE_MASK);
	ret = rnic_cmd_exec(d, RNIC_CMD_QUERY_DEVICE, NULL, 0, d->info, sizeof(d->info));
	if (!ret) {
		memset(in, 0, sizeof(in));
		RNIC_CMDI_CREATE_EQ_BASE_SET(in, d->eq_bus);
		RNIC_CMDI_CREATE_EQ_LOG_SIZE_SET(in, RNIC_EQ_LOG);
		ret = rnic_cmd_exec(d, RNIC_CMD_CREATE_EQ, in, sizeof(in), NULL, 0);
	}
	if (ret)
		rnic_dev_fini(d);
	return ret;
}

void rnic_dev_fini(struct rnic_dev *d)
{
	if (!d->dead && d->cmdq)
		wr(d, d->cmdq_page + RNIC_CTX_CMDQ_CTRL, 0);
	if (d->cmdq)
		d->ops->dma_free(d->bus, d->cmdq, RNIC_CMD_BYTES << RNIC_CMD_LOG);
	if (d->cmdc)
		d->ops->dma_free(d->bus, d->cmdc, RNIC_CMDC_BYTES << RNIC_CMD_LOG);
	if (d->eq)
		d->ops->dma_free(d->bus, d->eq, RNIC_EQE_BYTES << RNIC_EQ_LOG);
	d->cmdq = d->cmdc = d->eq = NULL;
}

/* One command at a time: post it, ring CMDQ_PI, poll the completion's owner byte. A timeout
 * marks the device dead instead of hanging (the firmware answers every command); so does the
 * queue found disabled under us, each millisecond of the NIC's time: a reset of the card (PCIe
 * hot reset) clears its registers and forgets the context, a card gone reads all ones. */
int rnic_cmd_exec(struct rnic_dev *d, uint32_t opcode, const void *in, size_t inlen, void *out, size_t outlen)
{
	uint32_t mask = (1u << RNIC_CMD_LOG) - 1, slot = d->cmd_pi & mask;
	uint8_t *cmd = d->cmdq + slot * RNIC_CMD_BYTES;
	volatile uint8_t *cpl = d->cmdc + slot * RNIC_CMDC_BYTES;
	uint8_t owner = ((d->cmd_pi >> RNIC_CMD_LOG) & 1) ^ 1;
	uint64_t start, checked;

	if (d->dead)
		return -EIO;
	if (inlen > RNIC_CMD_PAYLOAD_LEN || outlen > RNIC_CMDC_OUT_LEN)
		return -EINVAL;
	if (d->ops->cmd)
		return d->ops->cmd(d->bus, opcode, in, inlen, out, outlen);
	memset(cmd, 0, RNIC_CMD_BYTES);
	RNIC_CMD_OPCODE_SET(cmd, opcode);
	RNIC_CMD_COOKIE_SET(cmd, ++d->cookie);
	if (inlen)
		memcpy(cmd + RNIC_CMD_PAYLOAD_OFF, in, inlen);
	d->cmd_pi++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr(d, d->cmdq_page + RNIC_CTX_CMDQ_PI, d->cmd_pi);
	start = checked = d->ops->now_us(d->bus);
	while (__atomic_load_n(&cpl[RNIC_CMDC_OWNER_OFF], __ATOMIC_ACQUIRE) != owner) {
		uint64_t now = d->ops->now_us(d->bus);

		if (now - start > RNIC_CMD_TIMEOUT_US)
			break;
		if (now - checked >= 1000) {
			uint32_t ctrl = rd(d, d->cmdq_page + RNIC_CTX_CMDQ_CTRL);

			if (ctrl == 0xffffffff || !(ctrl & RNIC_CTX_CMDQ_CTRL_ENABLE_MASK))
				break;
			checked = now;
		}
		d->ops->relax(d->bus);
	}
	if (__atomic_load_n(&cpl[RNIC_CMDC_OWNER_OFF], __ATOMIC_ACQUIRE) != owner ||
	    RNIC_CMDC_COOKIE_GET((const uint8_t *)cpl) != d->cookie) {
		d->dead = 1;
		return -EIO;
	}
	if (outlen)
		memcpy(out, (const uint8_t *)cpl + RNIC_CMDC_OUT_OFF, outlen);
	d->status = cpl[RNIC_CMDC_STATUS_OFF];
	return rnic_status_errno(d->status);
}

static int cmd_handle(struct rnic_dev *d, uint32_t opcode, const uint8_t *in, size_t inlen, uint32_t *handle)
{
	uint8_t out[RNIC_CMDO_HANDLE_SIZE];
	int ret = rnic_cmd_exec(d, opcode, in, inlen, out, sizeof(out));

	if (!ret)
		*handle = RNIC_CMDO_HANDLE_HANDLE_GET(out);
	return ret;
}

int rnic_alloc_pd(struct rnic_dev *d, uint32_t *pdn)
{
	return cmd_handle(d, RNIC_CMD_ALLOC_PD, NULL, 0, pdn);
}

int rnic_destroy(struct rnic_dev *d, uint32_t opcode, uint32_t handle)
{
	uint8_t in[RNIC_CMDI_HANDLE_SIZE] = {0};

	RNIC_CMDI_HANDLE_HANDLE_SET(in, handle);
	return rnic_cmd_exec(d, opcode, in, sizeof(in), NULL, 0);
}

int rnic_create_cq(struct rnic_dev *d, uint64_t ring_bus, uint32_t log_size, uint32_t *cqn)
{
	uint8_t in[RNIC_CMDI_CREATE_CQ_SIZE] = {0};

	RNIC_CMDI_CREATE_CQ_BASE_SET(in, ring_bus);
	RNIC_CMDI_CREATE_CQ_LOG_SIZE_SET(in, log_size);
	RNIC_CMDI_CREATE_CQ_VECTOR_SET(in, d->ctx);
	return cmd_handle(d, RNIC_CMD_CREATE_CQ, in, sizeof(in), cqn);
}

int rnic_create_qp(struct rnic_dev *d, const struct rnic_qp_create *c, uint32_t *qpn)
{
	uint8_t in[RNIC_CMDI_CREATE_QP_SIZE] = {0};

	RNIC_CMDI_CREATE_QP_PDN_SET(in, c->pdn);
	RNIC_CMDI_CREATE_QP_TYPE_SET(in, c->type);
	RNIC_CMDI_CREATE_QP_SQ_LOG_SET(in, c->sq_log);
	RNIC_CMDI_CREATE_QP_RQ_LOG_SET(in, c->rq_log);
	RNIC_CMDI_CREATE_QP_SQ_BASE_SET(in, c->sq_bus);
	RNIC_CMDI_CREATE_QP_RQ_BASE_SET(in, c->rq_bus);
	RNIC_CMDI_CREATE_QP_SEND_CQN_SET(in, c->send_cqn);
	RNIC_CMDI_CREATE_QP_RECV_CQN_SET(in, c->recv_cqn);
	RNIC_CMDI_CREATE_QP_USE_SRQ_SET(in, c->use_srq);
	RNIC_CMDI_CREATE_QP_SRQN_SET(in, c->srqn);
	return cmd_handle(d, RNIC_CMD_CREATE_QP, in, sizeof(in), qpn);
}

int rnic_modify_qp(struct rnic_dev *d, const uint8_t *in)
{
	return rnic_cmd_exec(d, RNIC_CMD_MODIFY_QP, in, RNIC_CMDI_MODIFY_QP_SIZE, NULL, 0);
}

int rnic_query_qp(struct rnic_dev *d, uint32_t qpn, uint8_t *out)
{
	uint8_t in[RNIC_CMDI_HANDLE_SIZE] = {0};

	RNIC_CMDI_HANDLE_HANDLE_SET(in, qpn);
	return rnic_cmd_exec(d, RNIC_CMD_QUERY_QP, in, sizeof(in), out, RNIC_CMDO_QUERY_QP_SIZE);
}

/* Map the pages, hand their bus addresses to the firmware in a DMA page list, which it copies
 * into the MTT; the list is freed once the command has completed. */
/* The region's 4 KiB pages are contiguous on the bus within each page of 2^shift bytes. */
static int contiguous(const uint64_t *list, uint64_t va, uint64_t npages4k, uint32_t shift)
{
	uint64_t per = 1ull << (shift - PAGE_SHIFT), skip = (va >> PAGE_SHIFT) & (per - 1), i;

	for (i = 1; i < npages4k; i++)
		if ((i + skip) % per && list[i] != list[i - 1] + PAGE)
			return 0;
	return 1;
}

/* MTT page size for a region: 2 MiB for a large one (over 16 MiB) where the bus allows it, so the
 * firmware writes few entries; else the smallest size that needs at most a quarter of the MTT,
 * else any that fits. 0: the region cannot be mapped. */
static uint32_t mr_page_shift(const uint64_t *list, uint64_t va, uint64_t npages4k, uint64_t len)
{
	uint32_t shift, fit = 0;

	if (npages4k > 4096 && contiguous(list, va, npages4k, 21) &&
	    ((va + len - 1) >> 21) - (va >> 21) + 1 <= RNIC_MAX_MTT / 4)
		return 21;
	for (shift = PAGE_SHIFT; shift <= 30 && contiguous(list, va, npages4k, shift); shift++) {
		uint64_t n = ((va + len - 1) >> shift) - (va >> shift) + 1;

		if (n <= RNIC_MAX_MTT / 4)
			return shift;
		if (n <= RNIC_MAX_MTT && !fit)
			fit = shift;
	}
	return fit;
}

/* A region's translation for the firmware: [va, va + len) mapped, and a DMA page list of its
 * MTT entries (one per page of 2^shift bytes: the bus address of the page's start, the part
 * before va never used). The caller frees the list once the command has run. */
struct mr_pages {
	uint64_t *list, list_bus, n;
	size_t list_size;
	uint32_t shift;
};

static int mr_map(struct rnic_dev *d, void *va, uint64_t len, struct mr_pages *p)
{
	uint64_t v = (uint64_t)(uintptr_t)va, npages = ((v + len - 1) >> PAGE_SHIFT) - (v >> PAGE_SHIFT) + 1;
	uint64_t i, per;
	int ret;

	p->list_size = (npages * 8 + PAGE - 1) / PAGE * PAGE;
	p->list = d->ops->dma_alloc(d->bus, p->list_size, &p->list_bus);
	if (!p->list)
		return -ENOMEM;
	ret = d->ops->dma_map(d->bus, va, len, p->list, (uint32_t)npages);
	if (ret) {
		d->ops->dma_free(d->bus, p->list, p->list_size);
		return ret;
	}
	p->shift = mr_page_shift(p->list, v, npages, len);
	if (!p->shift) {
		/* too many scattered pages for the MTT: the device lacks the resources (ibv_reg_mr(3)) */
		d->ops->dma_free(d->bus, p->list, p->list_size);
		d->ops->dma_unmap(d->bus, va, len);
		return -ENOMEM;
	}
	per = 1ull << (p->shift - PAGE_SHIFT);
	p->n = ((v + len - 1) >> p->shift) - (v >> p->shift) + 1;
	for (i = 0; i < p->n; i++) {
		uint64_t first = i ? i * per - ((v >> PAGE_SHIFT) & (per - 1)) : 0;

		p->list[i] = p->list[first] - (i ? 0 : ((v >> PAGE_SHIFT) & (per - 1)) * PAGE);
	}
	return 0;
}

/* The command has run: its page list goes, and after a refusal the region's mapping (the NIC
 * never used it). After a timeout both stay: the firmware may still read the list and use the
 * pages (the device is dead; its owner keeps the memory). */
static void mr_unlist(struct rnic_dev *d, struct mr_pages *p, int ret, void *va, uint64_t len)
{
	if (d->dead)
		return;
	d->ops->dma_free(d->bus, p->list, p->list_size);
	if (ret)
		d->ops->dma_unmap(d->bus, va, len);
}

int rnic_reg_mr(struct rnic_dev *d, uint32_t pdn, uint32_t access, void *va, uint64_t len, uint32_t *key)
{
	uint8_t in[RNIC_CMDI_REG_MR_SIZE] = {0};
	struct mr_pages p;
	int ret;

	if (!len || len > (1ull << 32))
		return -EINVAL;
	RNIC_CMDI_REG_MR_PDN_SET(in, pdn);
	RNIC_CMDI_REG_MR_ACCESS_SET(in, access);
	RNIC_CMDI_REG_MR_VA_SET(in, (uintptr_t)va);
	RNIC_CMDI_REG_MR_LENGTH_SET(in, len);
	if (d->ops->cmd) /* the kernel driver pins, maps and lists the pages */
		return cmd_handle(d, RNIC_CMD_REG_MR, in, sizeof(in), key);
	ret = mr_map(d, va, len, &p);
	if (ret)
		return ret;
	RNIC_CMDI_REG_MR_PAGELIST_SET(in, p.list_bus);
	RNIC_CMDI_REG_MR_NPAGES_SET(in, p.n);
	RNIC_CMDI_REG_MR_PAGE_SHIFT_SET(in, p.shift);
	ret = cmd_handle(d, RNIC_CMD_REG_MR, in, sizeof(in), key);
	mr_unlist(d, &p, ret, va, len);
	return ret;
}

int rnic_rereg_mr(struct rnic_dev *d, uint32_t key, uint32_t flags, uint32_t pdn, uint32_t access, void *va,
		  uint64_t len)
{
	uint8_t in[RNIC_CMDI_REREG_MR_SIZE] = {0};
	struct mr_pages p;
	int ret;

	RNIC_CMDI_REREG_MR_KEY_SET(in, key);
	RNIC_CMDI_REREG_MR_FLAGS_SET(in, flags);
	RNIC_CMDI_REREG_MR_PDN_SET(in, pdn);
	RNIC_CMDI_REREG_MR_ACCESS_SET(in, access);
	if (!(flags & RNIC_REREG_TRANSLATION) || d->ops->cmd) {
		if (flags & RNIC_REREG_TRANSLATION) {
			if (!len || len > (1ull << 32))
				return -EINVAL;
			RNIC_CMDI_REREG_MR_VA_SET(in, (uintptr_t)va);
			RNIC_CMDI_REREG_MR_LENGTH_SET(in, len);
		}
		return rnic_cmd_exec(d, RNIC_CMD_REREG_MR, in, sizeof(in), NULL, 0);
	}
	if (!len || len > (1ull << 32))
		return -EINVAL;
	ret = mr_map(d, va, len, &p);
	if (ret)
		return ret;
	RNIC_CMDI_REREG_MR_VA_SET(in, (uintptr_t)va);
	RNIC_CMDI_REREG_MR_LENGTH_SET(in, len);
	RNIC_CMDI_REREG_MR_PAGELIST_SET(in, p.list_bus);
	RNIC_CMDI_REREG_MR_NPAGES_SET(in, p.n);
	RNIC_CMDI_REREG_MR_PAGE_SHIFT_SET(in, p.shift);
	ret = rnic_cmd_exec(d, RNIC_CMD_REREG_MR, in, sizeof(in), NULL, 0);
	mr_unlist(d, &p, ret, va, len);
	return ret;
}

int rnic_resize_cq(struct rnic_dev *d, uint32_t cqn, uint64_t ring_bus, uint32_t log_size)
{
	uint8_t in[RNIC_CMDI_RESIZE_CQ_SIZE] = {0};

	RNIC_CMDI_RESIZE_CQ_CQN_SET(in, cqn);
	RNIC_CMDI_RESIZE_CQ_LOG_SIZE_SET(in, log_size);
	RNIC_CMDI_RESIZE_CQ_BASE_SET(in, ring_bus);
	return rnic_cmd_exec(d, RNIC_CMD_RESIZE_CQ, in, sizeof(in), NULL, 0);
}

int rnic_dereg_mr(struct rnic_dev *d, uint32_t key, void *va, uint64_t len)
{
	int ret = rnic_destroy(d, RNIC_CMD_DEREG_MR, key);

	if (!ret)
		d->ops->dma_unmap(d->bus, va, len);
	return ret;
}

int rnic_eq_poll(struct rnic_dev *d, void (*fn)(void *arg, uint32_t type, uint32_t data), void *arg)
{
	uint32_t mask = (1u << RNIC_EQ_LOG) - 1;
	int n = 0;

	for (;;) {
		const uint8_t *e = d->eq + (d->eq_ci & mask) * RNIC_EQE_BYTES;
		uint8_t owner = ((d->eq_ci >> RNIC_EQ_LOG) & 1) ^ 1;

		if ((__atomic_load_n(&e[RNIC_EQE_OWNER_OFF], __ATOMIC_ACQUIRE) & 1) != owner)
			break;
		fn(arg, RNIC_EQE_TYPE_GET(e), RNIC_EQE_DATA_GET(e));
		d->eq_ci++;
		n++;
	}
	if (n)
		wr(d, d->page + RNIC_CTX_EQ_DB, RNIC_SET(RNIC_CTX_EQ_DB_CI, d->eq_ci));
	return n;
}

void rnic_ring_sq(struct rnic_dev *d, uint32_t qpn, uint16_t pi)
{
	wr(d, d->page + RNIC_CTX_SQ_DB, RNIC_SET(RNIC_CTX_SQ_DB_QPN, qpn) | RNIC_SET(RNIC_CTX_SQ_DB_PI, pi));
}

void rnic_ring_rq(struct rnic_dev *d, uint32_t qpn, uint16_t pi)
{
	wr(d, d->page + RNIC_CTX_RQ_DB, RNIC_SET(RNIC_CTX_RQ_DB_QPN, qpn) | RNIC_SET(RNIC_CTX_RQ_DB_PI, pi));
}

void rnic_ring_srq(struct rnic_dev *d, uint32_t srqn, uint16_t pi)
{
	wr(d, d->page + RNIC_CTX_SRQ_DB, RNIC_SET(RNIC_CTX_SRQ_DB_SRQN, srqn) | RNIC_SET(RNIC_CTX_SRQ_DB_PI, pi));
}

void rnic_ring_cq(struct rnic_dev *d, uint32_t cqn, uint16_t ci, uint32_t arm)
{
	wr(d, d->page + RNIC_CTX_CQ_DB, RNIC_SET(RNIC_CTX_CQ_DB_CQN, cqn) | RNIC_SET(RNIC_CTX_CQ_DB_ARM, arm) |
	   RNIC_SET(RNIC_CTX_CQ_DB_CI, ci));
}
