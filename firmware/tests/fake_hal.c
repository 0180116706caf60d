/* The fake HAL of the firmware's unit tests (fake_hal.h). */
#include <stdio.h>
#include <string.h>

#include "fw.h"
#include "hal.h"
#include "fake_hal.h"

uint8_t host[2 << 20];        /* host memory: bus address = offset */
uint8_t drv[(RNIC_ICM_CHUNKS << RNIC_ICM_CHUNK_LOG) + 4096];
static uint8_t dmabuf[RNIC_FW_DMABUF_SIZE] __attribute__((aligned(64)));
uint8_t txbuf[2048], rxbuf[2048];
uint32_t rx_len, tx_count, tx_last_len;
static uint32_t irq_count;
uint64_t now;
uint32_t ctxregs[RNIC_NUM_CTX][16];
uint32_t cfg_qpc[RNIC_MAX_QP][32], cfg_mpt[RNIC_MAX_MPT][8];
uint32_t cfg_cqc[RNIC_MAX_CQ][RNIC_CQC_WORDS], cfg_srqc[RNIC_MAX_SRQ][RNIC_SRQC_WORDS];
uint32_t cfg_eqc[RNIC_NUM_CTX][RNIC_EQC_WORDS];
uint64_t icm_list;             /* the driver's context-memory list (FW.ICM_*) */
uint32_t icm_n, icm_pending, icm_answer;
uint64_t cfg_mtt[RNIC_MAX_MTT];
uint64_t cfg_icm[RNIC_ICM_MAX_CHUNKS]; /* the kernels' copy of the ICM chunk list */
uint32_t arp_replies_to_send; /* answer the next ARP request from this IP */
uint8_t arp_peer[6] = {2, 0, 0, 0, 0, 9}; /* with this MAC */
int fuzz_ctx = -1;             /* fuzzing: the context whose command runs */
uint64_t fuzz_findings;

static int drv_addr(uint64_t addr, uint32_t len)
{
	return addr >= DRV_AT && addr - DRV_AT + len <= sizeof(drv);
}

static void fuzz_check(const char *what, uint64_t addr)
{
	if (fuzz_ctx >= 0 && addr >> RNIC_LINK_BUS_CTX_SHIFT != (uint64_t)fuzz_ctx + 1 && !drv_addr(addr, 0) &&
	    fuzz_findings++ < 10)
		printf("FINDING: ctx %d: %s 0x%llx\n", fuzz_ctx, what, (unsigned long long)addr);
}

uint64_t my_mac = 0x020000000001ull;
uint32_t my_ip = 0x0a000001;
int print_tx;                  /* --frames: every frame sent, in hex on stdout */
uint32_t hal_mac_hi(void) { return (uint32_t)(my_mac >> 32); }
uint32_t hal_mac_lo(void) { return (uint32_t)my_mac; }
uint32_t hal_ipv4(void) { return my_ip; }
uint32_t seed[4] = {0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c};
uint32_t seed_valid = 1, eth_mtu = 1500, ctx_priv = 0xffff;
uint32_t dma_denied;
uint32_t hal_seed(uint32_t i) { return seed[i & 3]; }
uint32_t hal_host_cfg(void)
{
	return RNIC_SET(RNIC_FW_HOST_CFG_ETH_MTU, eth_mtu) | RNIC_SET(RNIC_FW_HOST_CFG_SEED_VALID, seed_valid) |
	       RNIC_SET(RNIC_FW_HOST_CFG_CTX_PRIV, ctx_priv);
}
uint32_t hal_dma_window(void) { return 0; }
uint64_t hal_cycles(void) { return now += 100; }
void hal_putc(char c) { (void)c; }
void hal_set_version(uint32_t v) { (void)v; }
void hal_set_status(uint32_t v) { (void)v; }
void hal_wait(uint32_t cycles) { (void)cycles; }
void hal_irq(uint32_t vector) { (void)vector; irq_count++; }
uint32_t hal_ctx_rd(uint32_t ctx, uint32_t off) { return ctxregs[ctx][off / 4]; }
void hal_ctx_set_ci(uint32_t ctx, uint32_t ci) { ctxregs[ctx][RNIC_CTX_CMDQ_CI / 4] = ci; }
uint32_t hal_reset_pending(void) { return 0; }
void hal_reset_clear(uint32_t mask) { (void)mask; }
uint32_t hal_cmdq_pending(void) { return 0; }
static uint32_t fence_token;
uint32_t hal_fence(void) { return fence_token * 0x010101u; }
void hal_cmdq_ack(uint32_t mask) { (void)mask; }
uint32_t hal_icm_status(void) { return icm_pending ? RNIC_FW_ICM_STATUS_PENDING_MASK : 0; }
uint64_t hal_icm_list(void) { return icm_list; }
uint32_t hal_icm_list_n(void) { return icm_n; }
void hal_icm_answer(uint32_t st) { icm_answer = st, icm_pending = 0; }
uint8_t *hal_dmabuf(void) { return dmabuf; }
uint8_t *hal_pkt_tx_buf(void) { return txbuf; }

void hal_cfg(uint32_t addr, uint32_t data)
{
	uint32_t t = addr >> RNIC_CFG_TABLE_SHIFT, i = (addr >> RNIC_CFG_INDEX_SHIFT) & ((1u << (RNIC_CFG_TABLE_SHIFT - RNIC_CFG_INDEX_SHIFT)) - 1);
	uint32_t w = (addr >> RNIC_CFG_WORD_SHIFT) & 0x3f;

	if (t == RNIC_CFG_TBL_FENCE)
		fence_token = data & 0xff;
	else if (t == RNIC_CFG_TBL_QPC)
		cfg_qpc[i][w] = data;
	else if (t == RNIC_CFG_TBL_MPT)
		cfg_mpt[i][w] = data;
	else if (t == RNIC_CFG_TBL_CQC)
		cfg_cqc[i][w] = data;
	else if (t == RNIC_CFG_TBL_SRQC)
		cfg_srqc[i][w] = data;
	else if (t == RNIC_CFG_TBL_EQC)
		cfg_eqc[i][w] = data;
	else if (t == RNIC_CFG_TBL_ICM)
		cfg_icm[i] = w ? (cfg_icm[i] & 0xffffffffull) | ((uint64_t)data << 32) : (cfg_icm[i] & ~0xffffffffull) | data;
	else if (t == RNIC_CFG_TBL_MTT)
		cfg_mtt[i] = w ? (cfg_mtt[i] & 0xffffffffull) | ((uint64_t)data << 32) : (cfg_mtt[i] & ~0xffffffffull) | data;
	if (t == RNIC_CFG_TBL_MTT && w == 1)
		fuzz_check("MTT entry", cfg_mtt[i]);
	if (((t == RNIC_CFG_TBL_CQC && w == RNIC_CQC_BASE_HI / 4) || (t == RNIC_CFG_TBL_EQC && w == RNIC_EQC_BASE_HI / 4) ||
	     (t == RNIC_CFG_TBL_SRQC && w == RNIC_SRQC_BASE_HI / 4)) && data)
		fuzz_check("ring base (high word)", (uint64_t)data << 32);
	if (t == RNIC_CFG_TBL_QPC && w == 0 && (data & 1)) {
		fuzz_check("SQ base", ((uint64_t)cfg_qpc[i][RNIC_QPC_SQ_BASE_HI / 4] << 32) | cfg_qpc[i][RNIC_QPC_SQ_BASE_LO / 4]);
		if (!RNIC_GET(RNIC_QPC_SRQ_USE, cfg_qpc[i][RNIC_QPC_SRQ / 4]))
			fuzz_check("RQ base",
				   ((uint64_t)cfg_qpc[i][RNIC_QPC_RQ_BASE_HI / 4] << 32) | cfg_qpc[i][RNIC_QPC_RQ_BASE_LO / 4]);
	}
}

void hal_cfg_words(uint32_t addr, const uint32_t *w, uint32_t n)
{
	for (; n; n--, addr += 4)
		hal_cfg(addr, *w++);
}

/* The hardware's guard (rnic_soc) where windows are strapped: a DMA for a context inside its
 * window only, one for the driver inside the driver's memory */
static int dma_allowed(uint32_t whose, uint64_t addr, uint32_t len)
{
	uint32_t w = fw.dma_window;
	uint64_t end = addr + len - 1;

	if (!w)
		return 1;
	if (whose == RNIC_DMA_CTX_DRIVER)
		return addr >> w == 0 && end >> w == 0;
	return addr >> w == whose + 1ull && end >> w == whose + 1ull;
}

int hal_dma(uint32_t whose, uint64_t addr, uint32_t local, uint32_t len, int write)
{
	fuzz_check("firmware DMA", addr);
	if (!dma_allowed(whose, addr, len)) {
		dma_denied++;
		return -1;
	}
	if (print_tx && write && !drv_addr(addr, len)) { /* what reaches processes' memory */
		printf("DMA %llx ", (unsigned long long)addr);
		for (uint32_t i = 0; i < len; i++)
			printf("%02x", dmabuf[local + i]);
		printf("\n");
	}
	uint8_t *mem = host;

	if (drv_addr(addr, len)) {
		mem = drv;
		addr -= DRV_AT;
	} else {
		addr &= (1ull << RNIC_LINK_BUS_CTX_SHIFT) - 1; /* a window's context bits (test_dma_window) */
		if (addr + len > sizeof(host))
			return write ? 0 : -1; /* a read the host refuses; a write it drops */
	}
	if (write)
		memcpy(mem + addr, dmabuf + local, len);
	else
		memcpy(dmabuf + local, mem + addr, len);
	return 0;
}

void hal_pkt_send(uint32_t len)
{
	tx_count++;
	tx_last_len = len;
	if (print_tx) {
		printf("TX ");
		for (uint32_t i = 0; i < len; i++)
			printf("%02x", txbuf[i]);
		printf("\n");
	}
	/* a peer that answers ARP requests for arp_replies_to_send */
	if (arp_replies_to_send && txbuf[21] == 1 && rnic_rd_le(txbuf + 38, 4) ==
	    __builtin_bswap32(arp_replies_to_send)) {
		const uint8_t *peer = arp_peer;
		uint8_t *f = rxbuf;

		memcpy(f, txbuf + 6, 6);
		memcpy(f + 6, peer, 6);
		memcpy(f + 12, txbuf + 12, 8);
		f[20] = 0;
		f[21] = 2;
		memcpy(f + 22, peer, 6);
		memcpy(f + 28, txbuf + 38, 4);
		memcpy(f + 32, txbuf + 22, 10);
		rx_len = 42;
	}
}

uint32_t hal_pkt_rx(const uint8_t **frame)
{
	*frame = rxbuf;
	return rx_len;
}

void hal_pkt_rx_pop(void)
{
	rx_len = 0;
}
