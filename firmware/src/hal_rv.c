/* HAL on the NIC: memory-mapped FW registers (regblock FW), context window, buffers. */
#include "hal.h"
#include "rnic_spec.h"

#define REG(off) (*(volatile uint32_t *)(RNIC_FW_REG_BASE + (off)))
#define CTXREG(ctx, off) (*(volatile uint32_t *)(RNIC_FW_CTXREG_BASE + (ctx) * RNIC_FW_CTXREG_STRIDE + (off)))

uint32_t hal_mac_hi(void) { return REG(RNIC_FW_MAC_HI); }
uint32_t hal_mac_lo(void) { return REG(RNIC_FW_MAC_LO); }
uint32_t hal_ipv4(void) { return REG(RNIC_FW_IPV4); }
uint32_t hal_seed(uint32_t i) { return REG(RNIC_FW_SEED_0 + 4 * (i & 3)); }
uint32_t hal_host_cfg(void) { return REG(RNIC_FW_HOST_CFG); }
uint32_t hal_dma_window(void) { return REG(RNIC_FW_DMA_WINDOW); }
void hal_putc(char c) { REG(RNIC_FW_CONSOLE) = (uint8_t)c; }
void hal_set_version(uint32_t v) { REG(RNIC_FW_FW_VERSION) = v; }
void hal_set_status(uint32_t v) { REG(RNIC_FW_FW_STATUS) = v; }
void hal_irq(uint32_t vector) { REG(RNIC_FW_IRQ) = vector; }
uint32_t hal_ctx_rd(uint32_t ctx, uint32_t off) { return CTXREG(ctx, off); }
void hal_ctx_set_ci(uint32_t ctx, uint32_t ci) { CTXREG(ctx, RNIC_CTX_CMDQ_CI) = ci; }
uint32_t hal_reset_pending(void) { return REG(RNIC_FW_CTX_RESET); }
void hal_reset_clear(uint32_t mask) { REG(RNIC_FW_CTX_RESET) = mask; }
uint32_t hal_cmdq_pending(void) { return REG(RNIC_FW_CMDQ_PENDING); }
uint32_t hal_icm_status(void) { return REG(RNIC_FW_ICM_STATUS); }
uint64_t hal_icm_list(void) { return ((uint64_t)REG(RNIC_FW_ICM_LIST_HI) << 32) | REG(RNIC_FW_ICM_LIST_LO); }
uint32_t hal_icm_list_n(void) { return REG(RNIC_FW_ICM_LIST_N); }
void hal_icm_answer(uint32_t st) { REG(RNIC_FW_ICM_STATUS) = st; }
uint32_t hal_fence(void) { return REG(RNIC_FW_FENCE); }
void hal_cmdq_ack(uint32_t mask) { REG(RNIC_FW_CMDQ_PENDING) = mask; }
uint8_t *hal_dmabuf(void) { return (uint8_t *)RNIC_FW_DMABUF_BASE; }
uint8_t *hal_pkt_tx_buf(void) { return (uint8_t *)RNIC_FW_PKTTX_BASE; }

uint64_t hal_cycles(void)
{
	uint32_t lo = REG(RNIC_FW_CYCLES_LO);

	return ((uint64_t)REG(RNIC_FW_CYCLES_HI) << 32) | lo;
}

void hal_wait(uint32_t cycles)
{
	REG(RNIC_FW_WAIT) = cycles; /* the store completes when there is work */
}

void hal_cfg(uint32_t addr, uint32_t data)
{
	REG(RNIC_FW_CFG_ADDR) = addr;
	REG(RNIC_FW_CFG_DATA) = data;
}

void hal_cfg_words(uint32_t addr, const uint32_t *w, uint32_t n)
{
	REG(RNIC_FW_CFG_ADDR) = addr;
	while (n--)
		REG(RNIC_FW_CFG_DATA) = *w++;
}

int hal_dma(uint32_t whose, uint64_t host, uint32_t local, uint32_t len, int write)
{
	uint32_t st;

	REG(RNIC_FW_DMA_CTX) = whose;
	REG(RNIC_FW_DMA_HOST_LO) = (uint32_t)host;
	REG(RNIC_FW_DMA_HOST_HI) = (uint32_t)(host >> 32);
	REG(RNIC_FW_DMA_LOCAL) = local;
	REG(RNIC_FW_DMA_LEN) = len;
	REG(RNIC_FW_DMA_CTRL) = RNIC_FW_DMA_CTRL_GO_MASK | (write ? RNIC_FW_DMA_CTRL_WRITE_MASK : 0);
	while ((st = REG(RNIC_FW_DMA_STATUS)) & RNIC_FW_DMA_STATUS_BUSY_MASK)
		;
	return st & RNIC_FW_DMA_STATUS_ERR_MASK ? -1 : 0;
}

void hal_pkt_send(uint32_t len)
{
	while (REG(RNIC_FW_PKT_TX_STATUS) & RNIC_FW_PKT_TX_STATUS_BUSY_MASK)
		;
	REG(RNIC_FW_PKT_TX_LEN) = len;
}

uint32_t hal_pkt_rx(const uint8_t **frame)
{
	if (!(REG(RNIC_FW_PKT_RX_STATUS) & RNIC_FW_PKT_RX_STATUS_VALID_MASK))
		return 0;
	*frame = (const uint8_t *)RNIC_FW_PKTRX_BASE;
	return REG(RNIC_FW_PKT_RX_LEN);
}

void hal_pkt_rx_pop(void)
{
	REG(RNIC_FW_PKT_RX_POP) = 1;
}
