/* DPI-C entry points of the CQ kernel: the SystemVerilog wrapper (and the Python tests, through
 * ctypes) call rnic_cq_dpi_step() once per clock with the packed port vectors.
 * RNIC_STAGE_ORDER=shuffle:SEED in the environment of rnic_cq_dpi_new() calls that instance's
 * stages in a random order each clock (seeded): the result must be the same (test_stages.py). */
#include <stdlib.h>
#include <string.h>
#include <svdpi.h>
#include "cq.h"

typedef struct {
	rnic_cq_state_t st; /* first: the handle is the kernel's state */
	int shuffle;
	uint32_t seed;
} cq_dpi_t;

void *rnic_cq_dpi_new(void);
void rnic_cq_dpi_step(void *h, const svBitVecVal *in, svBitVecVal *out);

void *rnic_cq_dpi_new(void)
{
	cq_dpi_t *k = calloc(1, sizeof(*k));
	const char *o = getenv("RNIC_STAGE_ORDER");

	if (k && o && !strncmp(o, "shuffle:", 8)) {
		k->shuffle = 1;
		k->seed = (uint32_t)strtoul(o + 8, NULL, 0) | 1;
	}
	return k;
}

void rnic_cq_dpi_step(void *h, const svBitVecVal *in, svBitVecVal *out)
{
	cq_dpi_t *k = h;
	rnic_cq_in_t i;
	rnic_cq_out_t o;

	rnic_cq_in_unpack(in, &i);
	if (k->shuffle) {
		uint8_t order[RNIC_CQ_STAGES];
		uint32_t n, j;

		for (n = 0; n < RNIC_CQ_STAGES; n++)
			order[n] = (uint8_t)n;
		for (n = RNIC_CQ_STAGES; n > 1; n--) {
			uint8_t t;

			k->seed ^= k->seed << 13;
			k->seed ^= k->seed >> 17;
			k->seed ^= k->seed << 5;
			j = k->seed % n;
			t = order[n - 1];
			order[n - 1] = order[j];
			order[j] = t;
		}
		rnic_cq_step_order(&k->st, &i, &o, order);
	} else {
		rnic_cq_step(&k->st, &i, &o);
	}
	rnic_cq_out_pack(&o, out);
}
