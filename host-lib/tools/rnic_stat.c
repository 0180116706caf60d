/* rnic-stat: a NIC's datapath counters by name (enum STAT of the spec), and what each cache in
 * front of context memory did: hits, misses, evictions, write-backs, mean miss latency. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <rnic/rnicdv.h>
#include "rnic_spec.h"

static const char *const names[] = RNIC_STAT_NAMES;

/* the caches, by the counters they keep */
static const struct {
	const char *table, *kernel;
	uint32_t hits, misses, evictions, miss_cycles;
} caches[] = {
	{"QPC", "RX", RNIC_STAT_RX_QPC_HITS, RNIC_STAT_RX_QPC_MISSES, RNIC_STAT_RX_QPC_EVICTIONS,
	 RNIC_STAT_RX_QPC_MISS_CYCLES},
	{"MTT", "TX", RNIC_STAT_TX_TLB_HITS, RNIC_STAT_TX_TLB_MISSES, RNIC_STAT_TX_TLB_EVICTIONS,
	 RNIC_STAT_TX_TLB_MISS_CYCLES},
	{"MTT", "RX", RNIC_STAT_RX_TLB_HITS, RNIC_STAT_RX_TLB_MISSES, RNIC_STAT_RX_TLB_EVICTIONS,
	 RNIC_STAT_RX_TLB_MISS_CYCLES},
	{"MPT", "TX", RNIC_STAT_TX_MPT_HITS, RNIC_STAT_TX_MPT_MISSES, RNIC_STAT_TX_MPT_EVICTIONS,
	 RNIC_STAT_TX_MPT_MISS_CYCLES},
	{"MPT", "RX", RNIC_STAT_RX_MPT_HITS, RNIC_STAT_RX_MPT_MISSES, RNIC_STAT_RX_MPT_EVICTIONS,
	 RNIC_STAT_RX_MPT_MISS_CYCLES},
};

static void print(const char *dev, const uint64_t *v, uint32_t count, uint64_t hz)
{
	uint32_t i;

	printf("%s: %u counters, NIC clock %.0f MHz\n", dev, count, hz / 1e6);
	for (i = 0; i < count && i < RNIC_STAT_COUNT; i++)
		printf("%s: %" PRIu64 "\n", names[i], v[i]);
	if (count > RNIC_STAT_COUNT)
		printf("(%u more counters this rnic-stat does not know: a newer NIC)\n", count - RNIC_STAT_COUNT);
	for (i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
		uint64_t h = v[caches[i].hits], m = v[caches[i].misses];
		double lat = m ? (double)v[caches[i].miss_cycles] / m : 0;

		printf("cache %s (%s kernel): %" PRIu64 " hits, %" PRIu64 " misses, hit rate %.1f%%, %" PRIu64
		       " evictions, 0 write-backs (its lines are never dirty), mean miss latency %.1f cycles (%.0f ns)\n",
		       caches[i].table, caches[i].kernel, h, m, h + m ? 100.0 * h / (h + m) : 0.0, v[caches[i].evictions],
		       lat, hz ? lat * 1e9 / hz : 0.0);
	}
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	const char *want = NULL;
	uint64_t v[RNIC_STAT_COUNT] = {0};
	uint32_t count = 0;
	int n = 0, i, err;

	if (argc == 3 && !strcmp(argv[1], "-d")) {
		want = argv[2];
	} else if (argc != 1) {
		fprintf(stderr, "usage: rnic-stat [-d DEVICE]   (default: the first RNIC)\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n && !ctx; i++)
		if (!want || !strcmp(ibv_get_device_name(list[i]), want))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "rnic-stat: %s: %s\n", want ? want : "no RNIC",
			errno ? strerror(errno) : "no such device");
		if (list)
			ibv_free_device_list(list);
		return 1;
	}
	err = rnicdv_query_stats(ctx, v, RNIC_STAT_COUNT, &count);
	if (err)
		fprintf(stderr, "rnic-stat: %s: %s\n", ibv_get_device_name(ctx->device), strerror(err));
	else
		print(ibv_get_device_name(ctx->device), v, count, rnicdv_clock_hz(ctx));
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return err ? 1 : 0;
}
