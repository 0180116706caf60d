/* The fake HAL the firmware's unit tests run on (fake_hal.c): host memory for DMA, a record of
 * configuration writes, a frame queue, a peer that answers ARP, and a clock that advances on
 * every read; the tests set and read its state. */
#ifndef FW_TESTS_FAKE_HAL_H
#define FW_TESTS_FAKE_HAL_H

#include <stdint.h>

#include "rnic_spec.h"

/* The driver's own memory (context memory and its list), in no process's window: processes'
 * addresses, whatever their window bits, land in host[] only */
#define DRV_AT 0x10000000u
#define ICM_AT DRV_AT
#define ICM_LIST_AT (DRV_AT + (RNIC_ICM_CHUNKS << RNIC_ICM_CHUNK_LOG))

extern uint8_t host[2 << 20]; /* host memory: bus address = offset */
extern uint8_t drv[(RNIC_ICM_CHUNKS << RNIC_ICM_CHUNK_LOG) + 4096]; /* from DRV_AT */
extern uint8_t txbuf[2048], rxbuf[2048];
extern uint32_t rx_len, tx_count, tx_last_len;
extern uint64_t now;
extern uint32_t ctxregs[RNIC_NUM_CTX][16];
extern uint32_t cfg_qpc[RNIC_MAX_QP][32], cfg_mpt[RNIC_MAX_MPT][8];
extern uint32_t cfg_cqc[RNIC_MAX_CQ][RNIC_CQC_WORDS], cfg_srqc[RNIC_MAX_SRQ][RNIC_SRQC_WORDS];
extern uint32_t cfg_eqc[RNIC_NUM_CTX][RNIC_EQC_WORDS];
extern uint64_t icm_list; /* the driver's context-memory list (FW.ICM_*) */
extern uint32_t icm_n, icm_pending, icm_answer;
extern uint64_t cfg_mtt[RNIC_MAX_MTT];
extern uint64_t cfg_icm[RNIC_ICM_MAX_CHUNKS]; /* the kernels' copy of the ICM chunk list */
extern uint32_t arp_replies_to_send; /* answer the next ARP request from this IP */
extern uint8_t arp_peer[6]; /* with this MAC */
extern int fuzz_ctx; /* fuzzing: the context whose command runs */
extern uint64_t fuzz_findings;
extern uint64_t my_mac;
extern uint32_t my_ip;
extern int print_tx; /* --frames: every frame sent, in hex on stdout */
extern uint32_t seed[4];        /* the host's seed (FW.SEED_*) */
extern uint32_t seed_valid, eth_mtu, ctx_priv; /* FW.HOST_CFG */
extern uint32_t dma_denied;     /* DMAs the hardware's guard refused */

/* xorshift64: the fuzzers' numbers, the same again from the same seed */
static inline uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif
