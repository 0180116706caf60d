/* The firmware's secrets: SipHash-2-4 (Aumasson and Bernstein, 2012) keyed by subkeys drawn from
 * the host's 128-bit seed (ADMIN.SEED: the driver's get_random_bytes, rnic-sim's getrandom), one
 * subkey per use. What one use shows (a communication ID, a starting PSN, a memory key) tells
 * nothing of another's key, nor of the seed. */
#include "prf.h"
#include "hal.h"
#include "rnic_spec.h"

static struct {
	uint64_t k[PRF_USES][2];
	uint8_t keyed;
} prf;

static uint64_t rotl(uint64_t x, uint32_t b)
{
	return x << b | x >> (64 - b);
}

#define SIPROUND                                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = rotl(v1, 13) ^ v0;                                                            \
		v0 = rotl(v0, 32);                                                                 \
		v2 += v3;                                                                          \
		v3 = rotl(v3, 16) ^ v2;                                                            \
		v0 += v3;                                                                          \
		v3 = rotl(v3, 21) ^ v0;                                                            \
		v2 += v1;                                                                          \
		v1 = rotl(v1, 17) ^ v2;                                                            \
		v2 = rotl(v2, 32);                                                                 \
	} while (0)

/* SipHash-2-4 of one 8-byte message m under key (k0, k1) */
static uint64_t siphash(uint64_t k0, uint64_t k1, uint64_t m)
{
	uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
	const uint64_t b = 8ull << 56; /* the length byte of an 8-byte message */

	v3 ^= m;
	SIPROUND;
	SIPROUND;
	v0 ^= m;
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t fw_prf_siphash(uint64_t k0, uint64_t k1, uint64_t m)
{
	return siphash(k0, k1, m);
}

int fw_prf_keyed(void)
{
	uint64_t k0, k1;
	uint32_t u;

	if (prf.keyed)
		return 1;
	if (!(hal_host_cfg() & RNIC_FW_HOST_CFG_SEED_VALID_MASK))
		return 0;
	k0 = (uint64_t)hal_seed(1) << 32 | hal_seed(0);
	k1 = (uint64_t)hal_seed(3) << 32 | hal_seed(2);
	for (u = 0; u < PRF_USES; u++) {
		prf.k[u][0] = siphash(k0, k1, (uint64_t)u << 1);
		prf.k[u][1] = siphash(k0, k1, (uint64_t)u << 1 | 1);
	}
	prf.keyed = 1;
	return 1;
}

uint64_t fw_prf(uint32_t use, uint64_t m)
{
	return siphash(prf.k[use][0], prf.k[use][1], m);
}

/* A keyed permutation of [0, 2^18): four Feistel rounds on two 9-bit halves, each round's
 * function the PRF of (slot, round, half). */
uint32_t fw_prf_perm18(uint32_t slot, uint32_t x)
{
	uint32_t l = x >> 9 & 0x1ff, r = x & 0x1ff, i, t;

	for (i = 0; i < 4; i++) {
		t = l ^ ((uint32_t)fw_prf(PRF_KEY_TAG, (uint64_t)slot << 16 | i << 12 | r) & 0x1ff);
		l = r;
		r = t;
	}
	return l << 9 | r;
}
