/* Context memory (ICM): host memory the driver gives the NIC at bring-up (ADMIN.ICM_*, spec
 * constants "icm"), as a list of chunks. The firmware owns its layout: every entry it writes into
 * a datapath table it writes at the same place of the table's region here, so that host memory
 * always holds the image of every context, key and translation the kernels were given. */
#include "fw.h"
#include "hal.h"
#include "prf.h"

#define ICM_CHUNK (1u << RNIC_ICM_CHUNK_LOG)
#define ICM_STAGE (3 * RNIC_DMA_MAX_LEN) /* where bytes bound for ICM are staged in the DMA buffer */

static uint32_t objects_live(void)
{
	uint32_t c, k, n = 0;

	for (c = 0; c < RNIC_NUM_CTX; c++)
		for (k = 0; k < FW_OWN_KINDS; k++)
			n += fw.owned[c][k];
	return n;
}

/* The kernels' copy of the chunk list (CFG_TBL_ICM: they write and read there themselves), or
 * zeros in its place */
static void kernels_list(int given)
{
	uint32_t i;

	for (i = 0; i < fw.icm_n; i++) {
		hal_cfg(fw_cfg_addr(RNIC_CFG_TBL_ICM, i, 0), given ? (uint32_t)fw.icm[i] : 0);
		hal_cfg(fw_cfg_addr(RNIC_CFG_TBL_ICM, i, 1), given ? (uint32_t)(fw.icm[i] >> 32) : 0);
	}
}

/* The driver's list of n chunks at bus address `list`: taken whole, or refused (enum ICM_ST).
 * n = 0 takes the memory back, which only an NIC without objects allows: their images are
 * there. Memory given while objects live would lack theirs, so it is refused too. So is memory
 * given before the host's seed (ADMIN.SEED): no key, ID or PSN is ever made without it. */
static uint32_t icm_take(uint64_t list, uint32_t n)
{
	uint8_t *buf = hal_dmabuf() + ICM_STAGE;
	uint32_t i, k, len;

	if (objects_live())
		return RNIC_ICM_ST_REFUSED;
	if (n && !fw_prf_keyed()) {
		fw_printf("icm: refused, the host gave no seed (ADMIN.SEED)\n");
		return RNIC_ICM_ST_REFUSED;
	}
	if (!n) {
		kernels_list(0);
		fw.icm_n = 0;
		return RNIC_ICM_ST_NONE;
	}
	if (fw.icm_n || n < RNIC_ICM_CHUNKS || n > RNIC_ICM_MAX_CHUNKS)
		return RNIC_ICM_ST_REFUSED;
	for (i = 0; i < n; i += len / 8) {
		/* a read never crosses a 4 KiB page of the list */
		len = 4096 - (uint32_t)((list + i * 8ull) & 4095);
		len = len < (n - i) * 8 ? len : (n - i) * 8;
		if (hal_dma(RNIC_DMA_CTX_DRIVER, list + i * 8ull, ICM_STAGE, len, 0))
			return RNIC_ICM_ST_REFUSED;
		for (k = 0; k < len / 8; k++) {
			fw.icm[i + k] = rnic_rd_le(buf + 8 * k, 8);
			if (!fw.icm[i + k] || (fw.icm[i + k] & (ICM_CHUNK - 1)))
				return RNIC_ICM_ST_REFUSED;
		}
	}
	fw.icm_n = n;
	fw.qp_rec_qpn = fw.mr_rec = 0; /* records are read from this memory from now on */
	kernels_list(1);
	fw_printf("icm: %u chunks of %u KiB, %u KiB used\n", n, ICM_CHUNK >> 10, RNIC_ICM_BYTES >> 10);
	return RNIC_ICM_ST_TAKEN;
}

/* A list (or a take-back) from the driver: answer it. */
void fw_icm_poll(void)
{
	if (hal_icm_status() & RNIC_FW_ICM_STATUS_PENDING_MASK)
		hal_icm_answer(icm_take(hal_icm_list(), hal_icm_list_n()));
}

/* The bus address of ICM offset off (the chunk list in the driver's order) */
static uint64_t icm_bus(uint32_t off)
{
	return fw.icm[off >> RNIC_ICM_CHUNK_LOG] + (off & (ICM_CHUNK - 1));
}

/* len bytes from src to offset off of ICM: one write per 4 KiB page of host memory (a chunk is a
 * whole number of them), from where the bytes are if they are in the DMA buffer at a line's start,
 * else staged there. Nothing without ICM. */
void fw_icm_write(uint32_t off, const void *src, uint32_t len)
{
	const uint8_t *s = src;
	uintptr_t at;
	uint32_t n;

	while (fw.icm_n && len) {
		n = 4096 - (off & 4095);
		n = n < len ? n : len;
		at = (uintptr_t)s - (uintptr_t)hal_dmabuf();
		if (at >= RNIC_FW_DMABUF_SIZE || (at & 63)) {
			memcpy(hal_dmabuf() + ICM_STAGE, s, n);
			at = ICM_STAGE;
		}
		hal_dma(RNIC_DMA_CTX_DRIVER, icm_bus(off), (uint32_t)at, n, 1);
		fw.icm_writes++;
		off += n;
		s += n;
		len -= n;
	}
}

/* Words [w, w + n) of entry `index` of datapath table `table`, as the kernels were given them. */
void fw_icm_entry(uint32_t table, uint32_t index, uint32_t w, const uint32_t *words, uint32_t n)
{
	uint32_t off, stride;

	switch (table) {
	case RNIC_CFG_TBL_QPC:
		off = RNIC_ICM_QPC_OFF, stride = RNIC_ICM_QPC_STRIDE;
		break;
	case RNIC_CFG_TBL_CQC:
		off = RNIC_ICM_CQC_OFF, stride = RNIC_ICM_CQC_STRIDE;
		break;
	case RNIC_CFG_TBL_SRQC:
		off = RNIC_ICM_SRQC_OFF, stride = RNIC_ICM_SRQC_STRIDE;
		break;
	case RNIC_CFG_TBL_EQC:
		off = RNIC_ICM_EQC_OFF, stride = RNIC_ICM_EQC_STRIDE;
		break;
	case RNIC_CFG_TBL_MPT:
		off = RNIC_ICM_MPT_OFF, stride = RNIC_ICM_MPT_STRIDE;
		break;
	case RNIC_CFG_TBL_MTT:
		off = RNIC_ICM_MTT_OFF, stride = RNIC_ICM_MTT_STRIDE;
		break;
	default:
		return; /* the port's addresses are not a context */
	}
	fw_icm_write(off + index * stride + 4 * w, words, 4 * n);
}

/* QP records: one kept on chip, the last one read or written, where the DMA engine reads and
 * writes it (a copy through the soft core costs a few clocks a byte); the rest are in ICM only. */
static uint32_t fwqp_off(uint32_t qpn)
{
	return RNIC_ICM_FWQP_OFF + rnic_qp_index(qpn) * RNIC_ICM_FWQP_STRIDE;
}

static struct fw_qp *rec(void)
{
	return (struct fw_qp *)(void *)(hal_dmabuf() + FW_STAGE_REC);
}

struct fw_qp *fw_qp_load(uint32_t qpn)
{
	if (fw.qp_rec_qpn == qpn)
		return rec();
	fw.qp_rec_qpn = 0;
	/* a record never crosses a page: its stride is a power of two below 4 KiB */
	if (!fw.icm_n || hal_dma(RNIC_DMA_CTX_DRIVER, icm_bus(fwqp_off(qpn)), FW_STAGE_REC, sizeof(struct fw_qp), 0))
		return NULL;
	fw.qp_rec_qpn = qpn;
	return rec();
}

void fw_qp_store(uint32_t qpn, const struct fw_qp *q)
{
	if (q != rec())
		memcpy(rec(), q, sizeof(*q));
	fw.qp_rec_qpn = qpn;
	fw_icm_write(fwqp_off(qpn), rec(), sizeof(*q));
}

/* MR records, the same way: the last one read or written stays in the DMA buffer. */
_Static_assert(sizeof(struct fw_mr) <= RNIC_ICM_FWMR_STRIDE && FW_STAGE_MR % 64 == 0 &&
	       FW_STAGE_MR >= FW_STAGE_ENTRY + RNIC_ICM_QPC_STRIDE && FW_STAGE_MR + RNIC_ICM_FWMR_STRIDE <= RNIC_DMA_MAX_LEN,
	       "an MR record in ICM and in the DMA buffer");

static struct fw_mr *mr_rec(void)
{
	return (struct fw_mr *)(void *)(hal_dmabuf() + FW_STAGE_MR);
}

struct fw_mr *fw_mr_load(uint32_t i)
{
	if (fw.mr_rec == i + 1)
		return mr_rec();
	fw.mr_rec = 0;
	if (!fw.icm_n || hal_dma(RNIC_DMA_CTX_DRIVER, icm_bus(RNIC_ICM_FWMR_OFF + i * RNIC_ICM_FWMR_STRIDE), FW_STAGE_MR,
				 sizeof(struct fw_mr), 0))
		return NULL;
	fw.mr_rec = i + 1;
	return mr_rec();
}

void fw_mr_store(uint32_t i, const struct fw_mr *m)
{
	if (m != mr_rec())
		memcpy(mr_rec(), m, sizeof(*m));
	fw.mr_rec = i + 1;
	fw_icm_write(RNIC_ICM_FWMR_OFF + i * RNIC_ICM_FWMR_STRIDE, mr_rec(), sizeof(*m));
}

int fw_qp_owned(uint32_t qpn, uint32_t ctx)
{
	uint32_t i = rnic_qp_index(qpn);

	return i < RNIC_MAX_QP && (fw.qp_own[i] & FW_OWN_USED) && FW_OWN_CTX(fw.qp_own[i]) == ctx;
}
