/* Where objects and translation entries go: a free slot of each kind of object (next fit), runs
 * of MTT entries for a registration (first fit). */
#include "fw.h"

static int slot_used(uint32_t kind, uint32_t i)
{
	switch (kind) {
	case FW_OWN_PD:
		return (fw.pd[i].own & FW_OWN_USED) != 0;
	case FW_OWN_CQ:
		return (fw.cq[i].own & FW_OWN_USED) != 0;
	case FW_OWN_SRQ:
		return (fw.srq[i].own & FW_OWN_USED) != 0;
	case FW_OWN_QP:
		return (fw.qp_own[i] & FW_OWN_USED) != 0;
	default:
		return (fw.mr_own[i] & FW_OWN_USED) != 0;
	}
}

/* A free slot of a kind in [first, max), or max. Next fit: the search starts behind the slot
 * found last, so making objects one after another costs a step each instead of a pass over all
 * made before (thousands of QPs), and a number freed is not handed out again at once (a late
 * packet or command for the old object finds nothing). */
uint32_t fw_free_slot(uint32_t kind, uint32_t first, uint32_t max)
{
	uint32_t i = fw.next_slot[kind], n;

	for (n = first; n < max; n++, i++) {
		if (i < first || i >= max)
			i = first;
		if (!slot_used(kind, i)) {
			fw.next_slot[kind] = i + 1;
			return i;
		}
	}
	return max;
}

#define GRAINS (RNIC_MAX_MTT / RNIC_MTT_GRAIN)

static int mtt_busy(uint32_t g)
{
	return (fw.mtt_used[g / 32] >> (g % 32)) & 1;
}

/* First fit: the lowest run of free grains (MTT_GRAIN entries each: a run starts a TLB line of
 * its own) that holds n entries. Whole words of the bitmap are passed over where they are all
 * taken, or all free and the run needs more than they hold: a region registered after a
 * thousand others costs a few hundred steps of the core, not 32 for every grain before it. */
int32_t fw_mtt_alloc(uint32_t n)
{
	uint32_t start = 0, i = 0, need = (n + RNIC_MTT_GRAIN - 1) / RNIC_MTT_GRAIN;

	if (!n || n > RNIC_MAX_MTT)
		return -1;
	while (i < GRAINS) {
		uint32_t w = fw.mtt_used[i / 32];

		if (i % 32 == 0 && w == ~0u) {
			i += 32;
			start = i;
		} else if (i % 32 == 0 && !w && i + 32 - start < need) {
			i += 32;
		} else if (mtt_busy(i)) {
			start = ++i;
		} else if (++i - start == need) {
			for (i = start; i < start + need; i++)
				fw.mtt_used[i / 32] |= 1u << (i % 32);
			return (int32_t)(start * RNIC_MTT_GRAIN);
		}
	}
	return -1;
}

void fw_mtt_free(uint32_t base, uint32_t n)
{
	uint32_t i;

	for (i = base / RNIC_MTT_GRAIN; i < (base + n + RNIC_MTT_GRAIN - 1) / RNIC_MTT_GRAIN && i < GRAINS; i++)
		fw.mtt_used[i / 32] &= ~(1u << (i % 32));
}
