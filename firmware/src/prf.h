/* The firmware's keyed pseudo-random function (prf.c): SipHash-2-4 under a subkey of its own for
 * each use, all drawn from the host's seed. */
#ifndef FW_PRF_H
#define FW_PRF_H

#include <stdint.h>

enum { PRF_CM_ID, PRF_CM_TID, PRF_PSN, PRF_KEY_TAG, PRF_CANARY, PRF_USES };

/* 1 once the host has given its seed (the subkeys are then drawn): nothing secret is made before */
int fw_prf_keyed(void);
uint64_t fw_prf(uint32_t use, uint64_t m);
/* a keyed bijection of [0, 2^18) for each slot (memory-key tags) */
uint32_t fw_prf_perm18(uint32_t slot, uint32_t x);
/* SipHash-2-4 itself (its test vector, in the unit tests) */
uint64_t fw_prf_siphash(uint64_t k0, uint64_t k1, uint64_t m);

#endif
