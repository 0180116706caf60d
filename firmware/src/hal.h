/* Hardware access of the firmware. hal_rv.c implements it on the NIC's soft core; the unit
 * tests implement it on the host (firmware/tests/hal_fake.c). */
#ifndef FW_HAL_H
#define FW_HAL_H

#include <stdint.h>

uint32_t hal_mac_hi(void);
uint32_t hal_mac_lo(void);
uint32_t hal_ipv4(void);
/* word i of the host's seed (FW.SEED_i); what else the host set (FW.HOST_CFG) */
uint32_t hal_seed(uint32_t i);
uint32_t hal_host_cfg(void);
uint32_t hal_dma_window(void);
uint64_t hal_cycles(void);
/* park until a frame, a context reset or a command-queue doorbell is pending, or `cycles` passed */
void hal_wait(uint32_t cycles);
void hal_putc(char c);
void hal_set_version(uint32_t v);
void hal_set_status(uint32_t v);
void hal_irq(uint32_t vector);

/* context registers: word index of regblock CTX */
uint32_t hal_ctx_rd(uint32_t ctx, uint32_t off);
void hal_ctx_set_ci(uint32_t ctx, uint32_t ci);
uint32_t hal_reset_pending(void);
/* bitmap of contexts whose command queue was rung since hal_cmdq_ack cleared their bits */
uint32_t hal_cmdq_pending(void);
void hal_cmdq_ack(uint32_t mask);
void hal_reset_clear(uint32_t mask);
/* the driver's context-memory list (FW.ICM_*): status with PENDING, the list, the answer */
uint32_t hal_icm_status(void);
uint64_t hal_icm_list(void);
uint32_t hal_icm_list_n(void);
void hal_icm_answer(uint32_t st);

/* datapath table write (CFG_ADDR/CFG_DATA); the fence tokens the kernels have passed (FW.FENCE) */
void hal_cfg(uint32_t addr, uint32_t data);
/* n words to addr, addr + 4, ...: the address written once (CFG_DATA steps it) */
void hal_cfg_words(uint32_t addr, const uint32_t *w, uint32_t n);
uint32_t hal_fence(void);

/* DMA between host bus address and the DMA buffer, for `whose` memory (a context, or
 * RNIC_DMA_CTX_DRIVER: the hardware refuses an address outside its window): 0 when done, -1 when
 * the host or the hardware refused it (a read's data are then not memory) */
uint8_t *hal_dmabuf(void);
int hal_dma(uint32_t whose, uint64_t host, uint32_t local, uint32_t len, int write);

/* frames: transmit buffer, receive buffer (length 0: nothing received) */
uint8_t *hal_pkt_tx_buf(void);
void hal_pkt_send(uint32_t len);
uint32_t hal_pkt_rx(const uint8_t **frame);
void hal_pkt_rx_pop(void);

#endif
