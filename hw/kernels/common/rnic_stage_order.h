/* The simulator's check that a kernel's stages do not depend on the order they are called in a
 * clock: RNIC_STAGE_ORDER=shuffle:SEED in the environment of rnic_<k>_dpi_new() calls that
 * instance's stages in a random order each clock (seeded); the result must be the same
 * (test_stages.py). Not for synthesis. */
#ifndef RNIC_STAGE_ORDER_H
#define RNIC_STAGE_ORDER_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* the seed RNIC_STAGE_ORDER asks for, 0 for the stages in order */
static inline uint32_t rnic_stage_seed(void)
{
	const char *o = getenv("RNIC_STAGE_ORDER");

	return o && !strncmp(o, "shuffle:", 8) ? (uint32_t)strtoul(o + 8, NULL, 0) | 1 : 0;
}

/* order[0, n): 0..n-1 shuffled by the next values of the seed's xorshift */
static inline void rnic_stage_order(uint8_t *order, uint32_t n, uint32_t *seed)
{
	uint32_t i, j;

	for (i = 0; i < n; i++)
		order[i] = (uint8_t)i;
	for (i = n; i > 1; i--) {
		uint8_t t;

		*seed ^= *seed << 13;
		*seed ^= *seed >> 17;
		*seed ^= *seed << 5;
		j = *seed % i;
		t = order[i - 1];
		order[i - 1] = order[j];
		order[j] = t;
	}
}

#endif
