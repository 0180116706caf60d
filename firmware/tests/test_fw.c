/* Unit tests of the firmware logic, built for the host on a fake HAL (fake_hal.h).
 *
 *     test_fw                  the unit tests
 *     test_fw --fuzz N [SEED]  N mutated commands from four contexts under rnic-sim's address
 *                              windows (make fuzz builds it with ASan and UBSan): every address
 *                              the firmware reads or hands the datapath must be the issuing
 *                              context's, and a context reset must leave nothing of it behind
 *     test_fw --fuzz-cm N [SEED]  N steps of the CM fuzzer (fuzz_cm.c)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw.h"
#include "hal.h"
#include "prf.h"
#include "fake_hal.h"
#include "fuzz_cm.h"

static int failures, checks;
#define CHECK(c)                                                                      \
	do {                                                                          \
		checks++;                                                             \
		if (!(c)) {                                                           \
			failures++;                                                   \
			printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);           \
		}                                                                     \
	} while (0)

/* ---- helpers */
static uint8_t cmd[RNIC_CMD_BYTES], out[RNIC_CMDC_OUT_LEN];

static uint32_t run(uint32_t ctx, uint32_t op)
{
	RNIC_CMD_OPCODE_SET(cmd, op);
	memset(out, 0, sizeof(out));
	return fw_cmd(ctx, cmd, out);
}

static uint8_t *in(void)
{
	memset(cmd, 0, sizeof(cmd));
	return cmd + RNIC_CMD_PAYLOAD_OFF;
}

static uint32_t handle(void)
{
	return RNIC_CMDO_HANDLE_HANDLE_GET(out);
}

static uint32_t modify(uint32_t ctx, uint32_t qpn, uint32_t state, uint32_t mask, uint32_t dip)
{
	uint8_t *p = in();

	RNIC_CMDI_MODIFY_QP_QPN_SET(p, qpn);
	RNIC_CMDI_MODIFY_QP_ATTR_MASK_SET(p, mask | RNIC_QP_ATTR_STATE);
	RNIC_CMDI_MODIFY_QP_NEW_STATE_SET(p, state);
	RNIC_CMDI_MODIFY_QP_PORT_SET(p, 1);
	RNIC_CMDI_MODIFY_QP_PATH_MTU_SET(p, RNIC_MTU_4096);
	RNIC_CMDI_MODIFY_QP_DEST_QPN_SET(p, 0x55);
	RNIC_CMDI_MODIFY_QP_RQ_PSN_SET(p, 100);
	RNIC_CMDI_MODIFY_QP_SQ_PSN_SET(p, 200);
	RNIC_CMDI_MODIFY_QP_IS_GLOBAL_SET(p, 1);
	p[RNIC_CMDI_MODIFY_QP_DGID_OFF + 10] = 0xff;
	p[RNIC_CMDI_MODIFY_QP_DGID_OFF + 11] = 0xff;
	p[RNIC_CMDI_MODIFY_QP_DGID_OFF + 12] = (uint8_t)(dip >> 24);
	p[RNIC_CMDI_MODIFY_QP_DGID_OFF + 13] = (uint8_t)(dip >> 16);
	p[RNIC_CMDI_MODIFY_QP_DGID_OFF + 14] = (uint8_t)(dip >> 8);
	p[RNIC_CMDI_MODIFY_QP_DGID_OFF + 15] = (uint8_t)dip;
	return run(ctx, RNIC_CMD_MODIFY_QP);
}

#define INIT_MASK (RNIC_QP_ATTR_PKEY_INDEX | RNIC_QP_ATTR_PORT | RNIC_QP_ATTR_ACCESS_FLAGS)
#define RTR_MASK (RNIC_QP_ATTR_AV | RNIC_QP_ATTR_PATH_MTU | RNIC_QP_ATTR_DEST_QPN | RNIC_QP_ATTR_RQ_PSN | \
		  RNIC_QP_ATTR_MAX_DEST_RD_ATOMIC | RNIC_QP_ATTR_MIN_RNR_TIMER)
#define RTS_MASK (RNIC_QP_ATTR_SQ_PSN | RNIC_QP_ATTR_TIMEOUT | RNIC_QP_ATTR_RETRY_CNT | RNIC_QP_ATTR_RNR_RETRY | \
		  RNIC_QP_ATTR_MAX_QP_RD_ATOMIC)

static uint32_t make_qp(uint32_t ctx, uint32_t *pd_out)
{
	uint32_t pd, cq;
	uint8_t *p;

	CHECK(run(ctx, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK);
	pd = handle();
	p = in();
	RNIC_CMDI_CREATE_CQ_BASE_SET(p, 0x1000);
	RNIC_CMDI_CREATE_CQ_LOG_SIZE_SET(p, 4);
	CHECK(run(ctx, RNIC_CMD_CREATE_CQ) == RNIC_CMD_ST_OK);
	cq = handle();
	p = in();
	RNIC_CMDI_CREATE_QP_PDN_SET(p, pd);
	RNIC_CMDI_CREATE_QP_TYPE_SET(p, RNIC_QPT_RC);
	RNIC_CMDI_CREATE_QP_SQ_LOG_SET(p, 4);
	RNIC_CMDI_CREATE_QP_SEND_CQN_SET(p, cq);
	RNIC_CMDI_CREATE_QP_RECV_CQN_SET(p, cq);
	CHECK(run(ctx, RNIC_CMD_CREATE_QP) == RNIC_CMD_ST_OK);
	if (pd_out)
		*pd_out = pd;
	return handle();
}

/* ---- tests */

/* Context memory: chunks of the fake host's memory, listed in reverse order (the firmware
 * translates through its list, not by adding offsets to the first). */
static uint32_t give_icm(uint64_t list, uint32_t n)
{
	icm_list = list;
	icm_n = n;
	icm_pending = 1;
	icm_answer = 0xff;
	fw_icm_poll();
	return icm_answer;
}

static void icm_list_write(void)
{
	for (uint32_t i = 0; i < RNIC_ICM_CHUNKS; i++)
		rnic_wr_le(drv + (ICM_LIST_AT - DRV_AT) + 8 * i, 8, ICM_AT + (RNIC_ICM_CHUNKS - 1 - i) * (1u << RNIC_ICM_CHUNK_LOG));
}

/* The fuzzer's and the replays' NIC: context memory given as the driver gives it */
static int icm_given(void)
{
	icm_list_write();
	return give_icm(ICM_LIST_AT, RNIC_ICM_CHUNKS) == RNIC_ICM_ST_TAKEN;
}

static void test_icm_take(void)
{
	uint32_t i, pd;

	icm_list_write();
	seed_valid = 0; /* nothing secret can be made yet: no context memory either */
	CHECK(give_icm(ICM_LIST_AT, RNIC_ICM_CHUNKS) == RNIC_ICM_ST_REFUSED && !fw_prf_keyed());
	seed_valid = 1;
	CHECK(give_icm(ICM_LIST_AT, RNIC_ICM_CHUNKS - 1) == RNIC_ICM_ST_REFUSED); /* too few */
	rnic_wr_le(drv + (ICM_LIST_AT - DRV_AT), 8, ICM_AT + 0x1000);
	CHECK(give_icm(ICM_LIST_AT, RNIC_ICM_CHUNKS) == RNIC_ICM_ST_REFUSED);     /* not aligned */
	rnic_wr_le(drv + (ICM_LIST_AT - DRV_AT), 8, ICM_AT + (RNIC_ICM_CHUNKS - 1) * (1u << RNIC_ICM_CHUNK_LOG));
	CHECK(give_icm(0xfffff000ull, RNIC_ICM_CHUNKS) == RNIC_ICM_ST_REFUSED);  /* unreadable */
	CHECK(run(3, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK);
	pd = handle();
	CHECK(give_icm(ICM_LIST_AT, RNIC_ICM_CHUNKS) == RNIC_ICM_ST_REFUSED); /* a PD lives */
	RNIC_CMDI_HANDLE_HANDLE_SET(in(), pd);
	CHECK(run(3, RNIC_CMD_DEALLOC_PD) == RNIC_CMD_ST_OK);
	CHECK(give_icm(ICM_LIST_AT, RNIC_ICM_CHUNKS) == RNIC_ICM_ST_TAKEN);
	for (i = 0; i < RNIC_ICM_CHUNKS; i++) /* the kernels have the list too */
		CHECK(cfg_icm[i] == ICM_AT + (RNIC_ICM_CHUNKS - 1 - i) * (1u << RNIC_ICM_CHUNK_LOG));
	CHECK(give_icm(ICM_LIST_AT, RNIC_ICM_CHUNKS) == RNIC_ICM_ST_REFUSED); /* given already */
	CHECK(fw.icm_n == RNIC_ICM_CHUNKS);
}

/* After every other test ran with context memory: each table's image there is what the kernels
 * were given, entry for entry; taking it back is refused while objects live. */
static uint32_t icm_word(uint32_t off)
{
	uint32_t c = RNIC_ICM_CHUNKS - 1 - (off >> RNIC_ICM_CHUNK_LOG);

	return (uint32_t)rnic_rd_le(drv + (ICM_AT - DRV_AT) + c * (1u << RNIC_ICM_CHUNK_LOG) + (off & ((1u << RNIC_ICM_CHUNK_LOG) - 1)), 4);
}

static void test_icm_images(void)
{
	uint32_t i, w, bad = 0, live = 0;

	for (i = 0; i < RNIC_MAX_QP; i++) {
		live += cfg_qpc[i][0] & 1;
		for (w = 0; w < RNIC_QPC_WORDS; w++)
			bad += icm_word(RNIC_ICM_QPC_OFF + i * RNIC_ICM_QPC_STRIDE + 4 * w) != cfg_qpc[i][w];
	}
	for (i = 0; i < RNIC_MAX_MPT; i++)
		for (w = 0; w < RNIC_MPT_WORDS; w++)
			bad += icm_word(RNIC_ICM_MPT_OFF + i * RNIC_ICM_MPT_STRIDE + 4 * w) != cfg_mpt[i][w];
	for (i = 0; i < RNIC_MAX_MTT; i++)
		bad += icm_word(RNIC_ICM_MTT_OFF + i * 8) != (uint32_t)cfg_mtt[i] ||
		       icm_word(RNIC_ICM_MTT_OFF + i * 8 + 4) != (uint32_t)(cfg_mtt[i] >> 32);
	for (i = 0; i < RNIC_MAX_CQ; i++)
		for (w = 0; w < RNIC_CQC_WORDS; w++)
			bad += icm_word(RNIC_ICM_CQC_OFF + i * RNIC_ICM_CQC_STRIDE + 4 * w) != cfg_cqc[i][w];
	for (i = 0; i < RNIC_MAX_SRQ; i++)
		for (w = 0; w < RNIC_SRQC_WORDS; w++)
			bad += icm_word(RNIC_ICM_SRQC_OFF + i * RNIC_ICM_SRQC_STRIDE + 4 * w) != cfg_srqc[i][w];
	for (i = 0; i < RNIC_NUM_CTX; i++)
		for (w = 0; w < RNIC_EQC_WORDS; w++)
			bad += icm_word(RNIC_ICM_EQC_OFF + i * RNIC_ICM_EQC_STRIDE + 4 * w) != cfg_eqc[i][w];
	CHECK(bad == 0);
	CHECK(live > 0 && fw.icm_writes > 100);
	CHECK(give_icm(0, 0) == RNIC_ICM_ST_REFUSED && fw.icm_n == RNIC_ICM_CHUNKS);
	/* every context gone: taken back, and the kernels' list with it */
	for (i = 0; i < RNIC_NUM_CTX; i++)
		fw_ctx_reset(i);
	CHECK(give_icm(0, 0) == RNIC_ICM_ST_NONE && fw.icm_n == 0);
	for (i = 0; i < RNIC_ICM_CHUNKS; i++)
		CHECK(cfg_icm[i] == 0);
}
/* Next fit: numbers freed are not handed out again at once, and the search does not start over
 * from the first slot (a create after thousands of QPs is a step, not a pass). Every entry of the
 * table is a QP's, the first two too; a QP's number is QPN_BASE | its index, and its index alone
 * (or the GSI QP's number) names none. */
static void test_next_fit(void)
{
	uint32_t a = make_qp(10, 0), b, low;

	CHECK((a & RNIC_QPN_BASE) && rnic_qp_index(a) < RNIC_MAX_QP);
	RNIC_CMDI_HANDLE_HANDLE_SET(in(), rnic_qp_index(a));
	CHECK(run(10, RNIC_CMD_DESTROY_QP) == RNIC_CMD_ST_BAD_HANDLE);
	RNIC_CMDI_HANDLE_HANDLE_SET(in(), RNIC_GSI_QPN);
	CHECK(run(10, RNIC_CMD_QUERY_QP) == RNIC_CMD_ST_BAD_HANDLE);
	RNIC_CMDI_HANDLE_HANDLE_SET(in(), a);
	CHECK(run(10, RNIC_CMD_DESTROY_QP) == RNIC_CMD_ST_OK);
	b = make_qp(10, 0);
	CHECK(b == a + 1 && fw.next_slot[FW_OWN_QP] == rnic_qp_index(b) + 1);
	fw.next_slot[FW_OWN_QP] = RNIC_MAX_QP - 1; /* the end wraps to the first free entry there is */
	CHECK(make_qp(10, 0) == rnic_qpn(RNIC_MAX_QP - 1));
	for (low = 0; fw.qp_own[low] & FW_OWN_USED; low++)
		;
	CHECK(make_qp(10, 0) == rnic_qpn(low));
	fw_ctx_reset(10);
}

/* PDs and SRQs to the limit: the next refused, a PD that SRQs use kept (BUSY), every one freed,
 * the context's counts back to zero */
static void test_pd_srq_limits(void)
{
	static uint32_t h[RNIC_MAX_PD];
	uint32_t used = 0, n, i, pd;
	uint8_t *p;

	for (i = 0; i < RNIC_MAX_PD; i++)
		used += (fw.pd[i].own & FW_OWN_USED) != 0;
	for (n = 0; n < RNIC_MAX_PD && run(7, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK; n++)
		h[n] = handle();
	CHECK(n == RNIC_MAX_PD - 1 - used && fw.owned[7][FW_OWN_PD] == n); /* PD 0 is nobody's */
	CHECK(run(7, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_NO_RESOURCES);
	for (i = 0; i < n; i++) {
		RNIC_CMDI_HANDLE_HANDLE_SET(in(), h[i]);
		CHECK(run(7, RNIC_CMD_DEALLOC_PD) == RNIC_CMD_ST_OK);
	}
	CHECK(fw.owned[7][FW_OWN_PD] == 0 && run(7, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK);
	pd = handle();
	for (i = used = 0; i < RNIC_MAX_SRQ; i++)
		used += (fw.srq[i].own & FW_OWN_USED) != 0;
	for (n = 0;; n++) {
		p = in();
		RNIC_CMDI_CREATE_SRQ_PDN_SET(p, pd);
		RNIC_CMDI_CREATE_SRQ_BASE_SET(p, 0x1000);
		RNIC_CMDI_CREATE_SRQ_LOG_SIZE_SET(p, 4);
		if (n == RNIC_MAX_SRQ || run(7, RNIC_CMD_CREATE_SRQ) != RNIC_CMD_ST_OK)
			break;
		h[n] = handle();
	}
	CHECK(n == RNIC_MAX_SRQ - used && fw.pd[pd].refs == n && fw.owned[7][FW_OWN_SRQ] == n);
	CHECK(run(7, RNIC_CMD_CREATE_SRQ) == RNIC_CMD_ST_NO_RESOURCES);
	RNIC_CMDI_HANDLE_HANDLE_SET(in(), pd);
	CHECK(run(7, RNIC_CMD_DEALLOC_PD) == RNIC_CMD_ST_BUSY);
	p = in();
	RNIC_CMDI_MODIFY_SRQ_SRQN_SET(p, h[n - 1]);
	RNIC_CMDI_MODIFY_SRQ_LIMIT_SET(p, 17); /* more than its 16 WQEs */
	CHECK(run(7, RNIC_CMD_MODIFY_SRQ) == RNIC_CMD_ST_BAD_PARAM);
	RNIC_CMDI_MODIFY_SRQ_LIMIT_SET(p, 16);
	CHECK(run(7, RNIC_CMD_MODIFY_SRQ) == RNIC_CMD_ST_OK && cfg_srqc[h[n - 1]][RNIC_SRQC_LIMIT / 4] == 16);
	for (i = 0; i < n; i++) {
		RNIC_CMDI_HANDLE_HANDLE_SET(in(), h[i]);
		CHECK(run(7, RNIC_CMD_DESTROY_SRQ) == RNIC_CMD_ST_OK && !cfg_srqc[h[i]][RNIC_SRQC_CTRL / 4]);
	}
	RNIC_CMDI_HANDLE_HANDLE_SET(in(), pd);
	CHECK(fw.pd[pd].refs == 0 && run(7, RNIC_CMD_DEALLOC_PD) == RNIC_CMD_ST_OK);
	CHECK(fw.owned[7][FW_OWN_PD] == 0 && fw.owned[7][FW_OWN_SRQ] == 0);
}

static void test_state_table(void)
{
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_RESET, RNIC_QPS_INIT, RNIC_QP_ATTR_STATE | INIT_MASK) == 0);
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_RESET, RNIC_QPS_INIT, RNIC_QP_ATTR_STATE) == RNIC_CMD_ST_BAD_PARAM);
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_RESET, RNIC_QPS_RTR, RNIC_QP_ATTR_STATE | RTR_MASK) == RNIC_CMD_ST_BAD_STATE);
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_INIT, RNIC_QPS_RTR, RNIC_QP_ATTR_STATE | RTR_MASK) == 0);
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_INIT, RNIC_QPS_RTR, RNIC_QP_ATTR_STATE | RTR_MASK | RNIC_QP_ATTR_SQ_PSN) ==
	      RNIC_CMD_ST_BAD_PARAM);
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_RTR, RNIC_QPS_RTS, RNIC_QP_ATTR_STATE | RTS_MASK) == 0);
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_RTR, RNIC_QPS_RTS, RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_SQ_PSN) ==
	      RNIC_CMD_ST_BAD_PARAM);
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_RTS, RNIC_QPS_RTS, RNIC_QP_ATTR_STATE | RNIC_QP_ATTR_MIN_RNR_TIMER) == 0);
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_RTS, RNIC_QPS_ERR, RNIC_QP_ATTR_STATE) == 0);
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_ERR, RNIC_QPS_RESET, RNIC_QP_ATTR_STATE) == 0);
	CHECK(fw_qp_transition_ok(RNIC_QPT_RC, RNIC_QPS_ERR, RNIC_QPS_RTS, RNIC_QP_ATTR_STATE) == RNIC_CMD_ST_BAD_STATE);
}


/* REG_MR in context 0 of 8 KiB at 0x7000100 (three pages, their list at 0x8000) */
static uint32_t reg_three_pages(uint32_t pd)
{
	uint8_t *p = in();

	RNIC_CMDI_REG_MR_PDN_SET(p, pd);
	RNIC_CMDI_REG_MR_ACCESS_SET(p, RNIC_ACCESS_LOCAL_WRITE);
	RNIC_CMDI_REG_MR_VA_SET(p, 0x7000100);
	RNIC_CMDI_REG_MR_LENGTH_SET(p, 0x2000);
	RNIC_CMDI_REG_MR_PAGELIST_SET(p, 0x8000);
	RNIC_CMDI_REG_MR_NPAGES_SET(p, 3);
	RNIC_CMDI_REG_MR_PAGE_SHIFT_SET(p, 12);
	return run(0, RNIC_CMD_REG_MR);
}
static void test_commands(void)
{
	uint32_t pd, pd2, key, key2, i;
	uint8_t *p;

	CHECK(run(0, 99) == RNIC_CMD_ST_BAD_OPCODE);
	CHECK(run(0, RNIC_CMD_QUERY_DEVICE) == RNIC_CMD_ST_OK);
	CHECK(RNIC_CMDO_QUERY_DEVICE_MAX_SGE_GET(out) == RNIC_MAX_SGE);
	CHECK(RNIC_CMDO_QUERY_DEVICE_IPV4_GET(out) == 0x0a000001);
	CHECK(run(0, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK);
	pd = handle();
	CHECK(run(1, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK);
	pd2 = handle();
	CHECK(pd != pd2);
	RNIC_CMDI_HANDLE_HANDLE_SET(in(), pd);
	CHECK(run(1, RNIC_CMD_DEALLOC_PD) == RNIC_CMD_ST_BAD_HANDLE); /* not ctx 1's */
	p = in();
	RNIC_CMDI_CREATE_CQ_LOG_SIZE_SET(p, 0);
	CHECK(run(0, RNIC_CMD_CREATE_CQ) == RNIC_CMD_ST_BAD_PARAM);

	/* memory registration: page list in host memory, MTT entries, keys with tags */
	for (i = 0; i < 3; i++)
		rnic_wr_le(host + 0x8000 + 8 * i, 8, 0x100000000ull + 0x1000 * (i + 7));
	p = in();
	RNIC_CMDI_REG_MR_PDN_SET(p, pd);
	RNIC_CMDI_REG_MR_ACCESS_SET(p, RNIC_ACCESS_REMOTE_WRITE);
	RNIC_CMDI_REG_MR_VA_SET(p, 0x7000100);
	RNIC_CMDI_REG_MR_LENGTH_SET(p, 0x2000);
	RNIC_CMDI_REG_MR_PAGELIST_SET(p, 0x8000);
	RNIC_CMDI_REG_MR_NPAGES_SET(p, 3);
	RNIC_CMDI_REG_MR_PAGE_SHIFT_SET(p, 12);
	CHECK(run(0, RNIC_CMD_REG_MR) == RNIC_CMD_ST_BAD_PARAM); /* remote write needs local write */
	RNIC_CMDI_REG_MR_ACCESS_SET(p, RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_LOCAL_WRITE);
	RNIC_CMDI_REG_MR_NPAGES_SET(p, 2);
	CHECK(run(0, RNIC_CMD_REG_MR) == RNIC_CMD_ST_BAD_PARAM); /* 0x7000100 + 8 KiB spans 3 pages */
	RNIC_CMDI_REG_MR_NPAGES_SET(p, 3);
	CHECK(run(0, RNIC_CMD_REG_MR) == RNIC_CMD_ST_OK);
	key = handle();
	CHECK(key >> RNIC_KEY_TAG_BITS != 0);
	i = cfg_mpt[key >> RNIC_KEY_TAG_BITS][RNIC_MPT_MTT_BASE / 4];
	CHECK(cfg_mtt[i] == 0x100007000ull && cfg_mtt[i + 2] == 0x100009000ull);
	CHECK(RNIC_GET(RNIC_MPT_CTRL_VALID, cfg_mpt[key >> RNIC_KEY_TAG_BITS][0]) == 1);
	RNIC_CMDI_HANDLE_HANDLE_SET(in(), pd);
	CHECK(run(0, RNIC_CMD_DEALLOC_PD) == RNIC_CMD_ST_BUSY); /* the MR uses it */
	RNIC_CMDI_HANDLE_HANDLE_SET(in(), key);
	CHECK(run(1, RNIC_CMD_DEREG_MR) == RNIC_CMD_ST_BAD_HANDLE);
	CHECK(run(0, RNIC_CMD_DEREG_MR) == RNIC_CMD_ST_OK);
	CHECK(RNIC_GET(RNIC_MPT_CTRL_VALID, cfg_mpt[key >> RNIC_KEY_TAG_BITS][0]) == 0);
	CHECK(run(0, RNIC_CMD_DEREG_MR) == RNIC_CMD_ST_BAD_HANDLE); /* stale key */
	CHECK(reg_three_pages(pd) == RNIC_CMD_ST_OK);
	key2 = handle();
	CHECK(key2 >> RNIC_KEY_TAG_BITS != key >> RNIC_KEY_TAG_BITS); /* next fit: not the entry just freed */
	RNIC_CMDI_HANDLE_HANDLE_SET(in(), key2);
	CHECK(run(0, RNIC_CMD_DEREG_MR) == RNIC_CMD_ST_OK);
	fw.next_slot[FW_OWN_MR] = key >> RNIC_KEY_TAG_BITS; /* the first entry again */
	CHECK(reg_three_pages(pd) == RNIC_CMD_ST_OK);
	key2 = handle();
	CHECK(key2 >> RNIC_KEY_TAG_BITS == key >> RNIC_KEY_TAG_BITS && key2 != key); /* same entry, new tag */
}

static uint32_t reg_page(uint32_t ctx, uint32_t pd, uint64_t list)
{
	uint8_t *p = in();

	RNIC_CMDI_REG_MR_PDN_SET(p, pd);
	RNIC_CMDI_REG_MR_ACCESS_SET(p, RNIC_ACCESS_LOCAL_WRITE);
	RNIC_CMDI_REG_MR_VA_SET(p, 0x7000000);
	RNIC_CMDI_REG_MR_LENGTH_SET(p, 0x1000);
	RNIC_CMDI_REG_MR_PAGELIST_SET(p, list);
	RNIC_CMDI_REG_MR_NPAGES_SET(p, 1);
	RNIC_CMDI_REG_MR_PAGE_SHIFT_SET(p, 12);
	return run(ctx, RNIC_CMD_REG_MR);
}

/* Keys: a slot reused 5000 times never gives a key twice, and its tags are not a counter. */
static void test_keys(void)
{
	static uint32_t seen[5000];
	uint32_t pd, i, j, dup = 0, steps = 0;

	CHECK(run(9, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK);
	pd = handle();
	host[0x9000] = 0;
	for (i = 0; i < 5000; i++) {
		if (i)
			fw.next_slot[FW_OWN_MR] = seen[0] >> RNIC_KEY_TAG_BITS; /* the same entry each time */
		CHECK(reg_page(9, pd, 0x9000) == RNIC_CMD_ST_OK);
		seen[i] = handle();
		RNIC_CMDI_HANDLE_HANDLE_SET(in(), seen[i]);
		CHECK(run(9, RNIC_CMD_DEREG_MR) == RNIC_CMD_ST_OK);
		RNIC_CMDI_HANDLE_HANDLE_SET(in(), seen[i]);
		CHECK(run(9, RNIC_CMD_DEREG_MR) == RNIC_CMD_ST_BAD_HANDLE); /* gone for good */
	}
	for (i = 0; i < 5000; i++) {
		CHECK(seen[i] >> RNIC_KEY_TAG_BITS == seen[0] >> RNIC_KEY_TAG_BITS);
		for (j = 0; j < i; j++)
			dup += seen[i] == seen[j];
		steps += i && seen[i] - seen[i - 1] == seen[1] - seen[0];
	}
	CHECK(dup == 0);
	CHECK(steps < 10);
}

/* The PRF (prf.c): SipHash-2-4's published vector (key 00..0f, message 00..07: bytes 62 24 93 9a
 * 79 f5 f5 93, read little-endian as Linux's siphash_kunit reads them); the tag of each slot a
 * permutation of its own of the 2^18 registration counts (every tag once; two slots' tag
 * sequences unrelated); the uses' outputs unrelated. */
static void test_prf(void)
{
	static uint8_t hit[1u << 18];
	uint32_t x, missing = 0, same = 0;

	CHECK(fw_prf_siphash(0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull, 0x0706050403020100ull) ==
	      0x93f5f5799a932462ull);
	CHECK(fw_prf_keyed());
	for (x = 0; x < 1u << 18; x++)
		hit[fw_prf_perm18(7, x)] = 1;
	for (x = 0; x < 1u << 18; x++)
		missing += !hit[x];
	CHECK(missing == 0);
	for (x = 0; x < 4096; x++)
		same += fw_prf_perm18(7, x) == fw_prf_perm18(8, x);
	CHECK(same < 4);
	CHECK(fw_prf(PRF_PSN, 1) != fw_prf(PRF_CM_ID, 1) && fw_prf(PRF_CM_ID, 1) != fw_prf(PRF_CM_TID, 1));
}

/* rnic-sim's windows: a context names only bus addresses of its own window, for its rings and
 * its MRs' pages alike (else one process could point the NIC at another's memory). */
static void test_dma_window(void)
{
	uint64_t mine = 2ull << RNIC_LINK_BUS_CTX_SHIFT, other = 3ull << RNIC_LINK_BUS_CTX_SHIFT;
	uint32_t pd, bad = fw.bad_addr;
	uint8_t *p;

	fw.dma_window = RNIC_LINK_BUS_CTX_SHIFT;
	CHECK(run(1, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK);
	pd = handle();
	p = in();
	RNIC_CMDI_CREATE_CQ_BASE_SET(p, other | 0x1000);
	RNIC_CMDI_CREATE_CQ_LOG_SIZE_SET(p, 4);
	CHECK(run(1, RNIC_CMD_CREATE_CQ) == RNIC_CMD_ST_BAD_PARAM);
	p = in();
	RNIC_CMDI_CREATE_EQ_BASE_SET(p, other | 0x1000);
	RNIC_CMDI_CREATE_EQ_LOG_SIZE_SET(p, 4);
	CHECK(run(1, RNIC_CMD_CREATE_EQ) == RNIC_CMD_ST_BAD_PARAM);
	p = in();
	RNIC_CMDI_CREATE_CQ_BASE_SET(p, mine | 0xffffffffffff00ull); /* runs off the window's end */
	RNIC_CMDI_CREATE_CQ_LOG_SIZE_SET(p, 4);
	CHECK(run(1, RNIC_CMD_CREATE_CQ) == RNIC_CMD_ST_BAD_PARAM);
	memset(host + 0xa000, 0, 8);
	host[0xa007] = 3; /* the page list names a page of context 2 */
	CHECK(reg_page(1, pd, mine | 0xa000) == RNIC_CMD_ST_BAD_PARAM);
	CHECK(reg_page(1, pd, other | 0xa000) == RNIC_CMD_ST_BAD_PARAM); /* the list itself */
	host[0xa007] = 2;
	CHECK(reg_page(1, pd, mine | 0xa000) == RNIC_CMD_ST_OK);
	CHECK(fw.bad_addr == bad + 5);
	fw_ctx_reset(1);
	fw.dma_window = 0;
}

/* A region whose end wraps past 2^64 is refused whatever its page list says. */
static void test_wrapping_region(void)
{
	uint8_t *p;
	uint32_t pd;

	CHECK(run(1, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK);
	pd = handle();
	memset(host + 0x9000, 0, 16);
	p = in();
	RNIC_CMDI_REG_MR_PDN_SET(p, pd);
	RNIC_CMDI_REG_MR_ACCESS_SET(p, RNIC_ACCESS_LOCAL_WRITE);
	RNIC_CMDI_REG_MR_VA_SET(p, 0xfffffffffffff000ull);
	RNIC_CMDI_REG_MR_LENGTH_SET(p, 0x2000);
	RNIC_CMDI_REG_MR_PAGELIST_SET(p, 0x9000);
	RNIC_CMDI_REG_MR_NPAGES_SET(p, 2);
	RNIC_CMDI_REG_MR_PAGE_SHIFT_SET(p, 12);
	CHECK(run(1, RNIC_CMD_REG_MR) == RNIC_CMD_ST_BAD_PARAM);
	RNIC_CMDI_REG_MR_NPAGES_SET(p, 0); /* what the wrapped arithmetic would count */
	CHECK(run(1, RNIC_CMD_REG_MR) == RNIC_CMD_ST_BAD_PARAM);
	fw_ctx_reset(1);
}

/* A read the host refuses (FW.DMA_STATUS.ERR): REG_MR fails with DMA_ERROR and keeps no MTT
 * entry; a command that cannot be fetched is answered DMA_ERROR with cookie 0. */
static void test_dma_error(void)
{
	uint8_t *cpl = host + 0x31000;
	uint32_t pd, base;
	int32_t probe;

	CHECK(run(1, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK);
	pd = handle();
	probe = fw_mtt_alloc(1);
	CHECK(probe >= 0);
	base = (uint32_t)probe;
	fw_mtt_free(base, 1);
	CHECK(reg_page(1, pd, sizeof(host)) == RNIC_CMD_ST_DMA_ERROR);
	probe = fw_mtt_alloc(1);
	CHECK(probe == (int32_t)base); /* the entry the failed REG_MR took is free again */
	fw_mtt_free(base, 1);
	fw_ctx_reset(1);

	memset(cpl, 0xff, RNIC_CMDC_BYTES);
	ctxregs[7][RNIC_CTX_CMDQ_BASE_LO / 4] = sizeof(host);
	ctxregs[7][RNIC_CTX_CMDC_BASE_LO / 4] = 0x31000;
	ctxregs[7][RNIC_CTX_CMDQ_CTRL / 4] = RNIC_CTX_CMDQ_CTRL_ENABLE_MASK | 0;
	ctxregs[7][RNIC_CTX_CMDQ_PI / 4] = 1;
	fw_poll_cmdq(7);
	CHECK(cpl[RNIC_CMDC_STATUS_OFF] == RNIC_CMD_ST_DMA_ERROR);
	CHECK(RNIC_CMDC_COOKIE_GET(cpl) == 0 && cpl[RNIC_CMDC_OWNER_OFF] == 1);
	CHECK(ctxregs[7][RNIC_CTX_CMDQ_CI / 4] == 1);
	ctxregs[7][RNIC_CTX_CMDQ_CTRL / 4] = 0;
	fw_ctx_reset(7);
}

/* An ARP reply nobody asked for is not learnt (it would redirect a peer's traffic). */
static void test_unsolicited_arp_reply(void)
{
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 0x77};
	uint8_t f[42], got[6];

	fw_arp_build(f, 2, fw.mac, fw.ip);
	memcpy(f + 6, mac, 6);
	memcpy(f + 22, mac, 6);
	f[28] = 10, f[29] = 0, f[30] = 0, f[31] = 0x77;
	fw_arp_input(f, sizeof(f));
	CHECK(fw_arp_lookup(0x0a000077, got) != 0);
}

/* A privileged Q_Key is refused (EPERM on the host). */
static void test_privileged_qkey(void)
{
	uint32_t qpn = make_qp(7, NULL);
	uint8_t *p = in();

	RNIC_CMDI_MODIFY_QP_QPN_SET(p, qpn);
	RNIC_CMDI_MODIFY_QP_ATTR_MASK_SET(p, RNIC_QP_ATTR_QKEY);
	RNIC_CMDI_MODIFY_QP_QKEY_SET(p, 0x80010000u);
	CHECK(run(7, RNIC_CMD_MODIFY_QP) == RNIC_CMD_ST_DENIED);
	fw_ctx_reset(7);
}

static void test_mtt_allocator(void)
{
	int32_t a = fw_mtt_alloc(10), b = fw_mtt_alloc(5), c;

	CHECK(a >= 0 && b >= 0 && (b >= a + 10 || b + 5 <= a));
	fw_mtt_free((uint32_t)a, 10);
	c = fw_mtt_alloc(8);
	CHECK(c == a); /* first fit reuses the hole */
	CHECK(fw_mtt_alloc(RNIC_MAX_MTT) < 0);
	CHECK(fw_mtt_alloc(0) < 0);
	fw_mtt_free((uint32_t)b, 5);
	fw_mtt_free((uint32_t)c, 8);
}

/* The allocator against a grain-by-grain first fit, with frees between: runs that start and end
 * inside words and across them, whole words taken and free, lengths that fill their last grain
 * or not */
static void test_mtt_allocator_first_fit(void)
{
	enum { G = RNIC_MTT_GRAIN, NG = RNIC_MAX_MTT / RNIC_MTT_GRAIN };
	static int32_t base[600];
	static uint32_t len[600];
	static uint8_t used[NG];
	uint32_t seed = 12345, k, i, run;

	for (i = 0; i < NG; i++) /* what earlier tests hold */
		used[i] = (fw.mtt_used[i / 32] >> (i % 32)) & 1;
	for (k = 0; k < 600; k++) {
		int32_t want = -1;

		seed = seed * 1103515245u + 12345u;
		len[k] = 1 + (seed >> 8) % (k % 7 == 0 ? 2400 : 320);
		if (k % 3 == 2 && base[k / 2] >= 0) { /* free an earlier one: holes of every size */
			fw_mtt_free((uint32_t)base[k / 2], len[k / 2]);
			memset(used + base[k / 2] / G, 0, (len[k / 2] + G - 1) / G);
			base[k / 2] = -1;
		}
		for (i = 0, run = 0; i < NG && want < 0; i++) {
			run = used[i] ? 0 : run + 1;
			if (run == (len[k] + G - 1) / G)
				want = (int32_t)((i + 1 - run) * G);
		}
		base[k] = fw_mtt_alloc(len[k]);
		CHECK(base[k] == want);
		if (want >= 0)
			memset(used + want / G, 1, (len[k] + G - 1) / G);
	}
	for (k = 0; k < 600; k++)
		if (base[k] >= 0)
			fw_mtt_free((uint32_t)base[k], len[k]);
}

static void test_qp_and_arp(void)
{
	uint32_t qp = make_qp(2, NULL), sent;
	uint8_t mac[6];

	CHECK(modify(2, qp, RNIC_QPS_RTR, RTR_MASK, 0x0a000009) == RNIC_CMD_ST_BAD_STATE); /* RESET->RTR */
	CHECK(modify(2, qp, RNIC_QPS_INIT, INIT_MASK, 0) == RNIC_CMD_ST_OK);
	CHECK(RNIC_GET(RNIC_QPC_CTRL_STATE, cfg_qpc[rnic_qp_index(qp)][0]) == RNIC_QPS_INIT);
	CHECK(modify(3, qp, RNIC_QPS_RTR, RTR_MASK, 0x0a000009) == RNIC_CMD_ST_BAD_HANDLE); /* other ctx */
	/* nobody answers: three ARP requests, then UNREACHABLE; the QP stays in INIT */
	sent = tx_count;
	CHECK(modify(2, qp, RNIC_QPS_RTR, RTR_MASK, 0x0a000009) == RNIC_CMD_ST_UNREACHABLE);
	CHECK(tx_count - sent == FW_ARP_TRIES && tx_last_len == 42 && txbuf[21] == 1);
	CHECK(RNIC_GET(RNIC_QPC_CTRL_STATE, cfg_qpc[rnic_qp_index(qp)][0]) == RNIC_QPS_INIT);
	/* a peer that answers */
	arp_replies_to_send = 0x0a000009;
	CHECK(modify(2, qp, RNIC_QPS_RTR, RTR_MASK, 0x0a000009) == RNIC_CMD_ST_OK);
	CHECK(fw_arp_lookup(0x0a000009, mac) == 0 && mac[5] == 9);
	CHECK(cfg_qpc[rnic_qp_index(qp)][RNIC_QPC_DIP / 4] == 0x0a000009 && cfg_qpc[rnic_qp_index(qp)][RNIC_QPC_DMAC_LO / 4] == 9);
	CHECK(RNIC_GET(RNIC_QPC_NET_SPORT, cfg_qpc[rnic_qp_index(qp)][RNIC_QPC_NET / 4]) == (0xc000 | rnic_qp_index(qp)));
	CHECK(modify(2, qp, RNIC_QPS_RTS, RTS_MASK, 0) == RNIC_CMD_ST_OK);
	CHECK(cfg_qpc[rnic_qp_index(qp)][RNIC_QPC_SQ_PSN / 4] == 200 && RNIC_GET(RNIC_QPC_CTRL_VALID, cfg_qpc[rnic_qp_index(qp)][0]));

	/* an ARP request for our address is answered */
	memset(rxbuf, 0, sizeof(rxbuf));
	sent = tx_count;
	rx_len = fw_arp_build(rxbuf, 1, NULL, 0x0a000001); /* (our own request shape, our IP) */
	rxbuf[28] = 10, rxbuf[29] = 0, rxbuf[30] = 0, rxbuf[31] = 7; /* sender 10.0.0.7 */
	fw_poll_frames();
	CHECK(tx_count == sent + 1 && txbuf[21] == 2 && rnic_rd_le(txbuf + 38, 4) == 0x0700000a);
	CHECK(fw_arp_lookup(0x0a000007, mac) == 0);
	/* a malformed ARP frame is dropped and counted */
	rx_len = 30;
	fw_poll_frames();
	CHECK(fw.drops == 1);
}

/* IPv6 neighbour discovery: a solicitation for our link-local address is answered with a valid
 * advertisement; an advertisement teaches the neighbour's MAC; a bad checksum is dropped. */
static void test_neighbour_discovery(void)
{
	uint8_t peer[16] = {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 0, 0, 7};
	uint32_t sent = tx_count, drops = fw.drops;

	/* a solicitation as the peer would send it: our builder, addresses swapped afterwards */
	memset(rxbuf, 0, sizeof(rxbuf));
	rx_len = fw_nd_build(rxbuf, 135, fw.ip6, NULL, NULL);
	CHECK(rx_len == 86 && rxbuf[0] == 0x33 && rxbuf[2] == 0xff && rxbuf[54] == 135);
	memcpy(rxbuf + 22, peer, 16);
	rxbuf[86 - 1] = 7;                   /* source link-layer address ..:07 */
	rxbuf[56] = rxbuf[57] = 0;
	{
		/* recompute the checksum over the changed source address */
		uint32_t sum = 32 + 58, i;

		for (i = 0; i < 32; i += 2)
			sum += ((uint32_t)rxbuf[22 + i] << 8) | rxbuf[23 + i];
		for (i = 0; i < 32; i += 2)
			sum += ((uint32_t)rxbuf[54 + i] << 8) | rxbuf[55 + i];
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		rxbuf[56] = (uint8_t)(~sum >> 8);
		rxbuf[57] = (uint8_t)~sum;
	}
	fw_poll_frames();
	CHECK(tx_count == sent + 1 && txbuf[54] == 136 && !memcmp(txbuf + 38, peer, 16) && !memcmp(txbuf + 62, fw.ip6, 16));
	CHECK(txbuf[12] == 0x86 && txbuf[13] == 0xdd && txbuf[21] == 255 && txbuf[78] == 2);
	/* the advertisement we sent, fed back, is valid (checksum) and teaches our own MAC for ip6 */
	memcpy(rxbuf, txbuf, 86);
	rx_len = 86;
	fw_poll_frames();
	CHECK(fw.drops == drops);
	rxbuf[60] ^= 1; /* corrupted */
	rx_len = 86;
	fw_poll_frames();
	CHECK(fw.drops == drops + 1);
}

static void test_cmdq_and_reset(void)
{
	uint32_t pd;
	uint8_t *c = host + 0x20000, *cpl = host + 0x30000;

	/* ctx 5: a 4-entry command ring at 0x20000, completions at 0x30000 */
	ctxregs[5][RNIC_CTX_CMDQ_BASE_LO / 4] = 0x20000;
	ctxregs[5][RNIC_CTX_CMDC_BASE_LO / 4] = 0x30000;
	ctxregs[5][RNIC_CTX_CMDQ_CTRL / 4] = RNIC_CTX_CMDQ_CTRL_ENABLE_MASK | 2;
	for (uint32_t k = 0; k < 5; k++) {
		uint8_t *e = c + (k & 3) * RNIC_CMD_BYTES;

		memset(e, 0, RNIC_CMD_BYTES);
		RNIC_CMD_OPCODE_SET(e, RNIC_CMD_ALLOC_PD);
		RNIC_CMD_COOKIE_SET(e, 0x100 + k);
		ctxregs[5][RNIC_CTX_CMDQ_PI / 4] = k + 1;
		fw_poll_cmdq(5);
		CHECK(RNIC_CMDC_COOKIE_GET(cpl + (k & 3) * RNIC_CMDC_BYTES) == 0x100 + k);
		/* owner = pass parity: 1 on the first pass, 0 on the second */
		CHECK(cpl[(k & 3) * RNIC_CMDC_BYTES + RNIC_CMDC_OWNER_OFF] == (k < 4 ? 1 : 0));
		CHECK(ctxregs[5][RNIC_CTX_CMDQ_CI / 4] == k + 1);
	}
	fw_poll_cmdq(5); /* nothing new: nothing done */
	CHECK(ctxregs[5][RNIC_CTX_CMDQ_CI / 4] == 5);

	make_qp(6, &pd);
	CHECK(run(6, RNIC_CMD_ALLOC_PD) == RNIC_CMD_ST_OK);
	fw_ctx_reset(5);
	for (uint32_t i = 0; i < RNIC_MAX_PD; i++)
		CHECK(fw.pd[i].own != (FW_OWN_USED | 5));
	CHECK(fw.pd[pd].own == (FW_OWN_USED | 6)); /* ctx 6 untouched */
	fw_ctx_reset(6);
	for (uint32_t i = 0; i < RNIC_MAX_QP; i++)
		CHECK(!fw_qp_owned(i, 6));
	CHECK(ctxregs[5][RNIC_CTX_CMDQ_CI / 4] == 0);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	return xorshift64(&rng);
}

/* An address for context ctx: mostly its own window, sometimes another's or anything. */
static uint64_t fuzz_addr(uint32_t ctx)
{
	uint32_t r = (uint32_t)(rnd() % 16);
	uint64_t off = (rnd() % (sizeof(host) / 4096)) * 4096 + (rnd() % 4 ? 0 : rnd() % 4096);

	if (r < 11)
		return ((ctx + 1ull) << RNIC_LINK_BUS_CTX_SHIFT) | off;
	if (r < 14)
		return ((1 + rnd() % 4) << RNIC_LINK_BUS_CTX_SHIFT) | off;
	return rnd();
}

/* Mutated commands: random payload bytes with handles seen before, small numbers and addresses
 * put at random aligned offsets; a context reset now and then must leave it owning nothing. */
static int fuzz(uint64_t n)
{
	static uint32_t handles[64];
	uint64_t i, ok = 0;
	uint32_t k, c, nh = 0;

	if (!icm_given())
		return 1;
	fw.dma_window = RNIC_LINK_BUS_CTX_SHIFT;
	for (k = 0; k < sizeof(host) / 8; k++) /* page lists: pages of the four contexts, and junk */
		rnic_wr_le(host + 8 * k, 8, rnd() % 8 ? ((1 + rnd() % 4) << RNIC_LINK_BUS_CTX_SHIFT) | (rnd() & ~0xfffull) : rnd());
	for (i = 0; i < n; i++) {
		uint32_t ctx = (uint32_t)(rnd() % 4), op = (uint32_t)(rnd() % (RNIC_CMD_COUNT + 1));
		uint8_t *p = in();

		for (k = 0; k < RNIC_CMD_BYTES - RNIC_CMD_PAYLOAD_OFF; k++)
			p[k] = rnd() % 4 ? 0 : (uint8_t)rnd();
		for (k = (uint32_t)(rnd() % 8); k; k--) {
			uint32_t at = (uint32_t)(rnd() % ((RNIC_CMD_BYTES - RNIC_CMD_PAYLOAD_OFF) / 4)) * 4;
			uint32_t r = (uint32_t)(rnd() % 4);

			if (r == 0 && nh)
				rnic_wr_le(p + at, 4, handles[rnd() % nh]);
			else if (r == 1)
				rnic_wr_le(p + at, 4, rnd() % 16);
			else if (at + 8 <= RNIC_CMD_BYTES - RNIC_CMD_PAYLOAD_OFF)
				rnic_wr_le(p + (at & ~7u), 8, fuzz_addr(ctx));
		}
		fuzz_ctx = (int)ctx;
		if (run(ctx, op) == RNIC_CMD_ST_OK) {
			ok++;
			handles[nh++ % 64] = handle();
			nh = nh > 64 ? 64 : nh;
		}
		if (rnd() % 256 == 0) {
			fw_ctx_reset(ctx);
			for (k = 0; k < FW_OWN_KINDS; k++)
				if (fw.owned[ctx][k] && fuzz_findings++ < 10)
					printf("FINDING: ctx %u still owns %u objects of kind %u after its reset\n", ctx,
					       fw.owned[ctx][k], k);
			for (c = 0; c < RNIC_MAX_MPT; c++)
				if (fw.mr_own[c] == (FW_OWN_USED | ctx) && fuzz_findings++ < 10)
					printf("FINDING: ctx %u: key slot %u left after its reset\n", ctx, c);
			for (c = 0; c < FW_CM_IDS; c++)
				if (fw.cm[c].used && fw.cm[c].ctx == ctx && fuzz_findings++ < 10)
					printf("FINDING: ctx %u: CM ID %u left after its reset\n", ctx, c);
		}
		fuzz_ctx = -1;
	}
	printf("fuzz_fw: %llu commands, %llu succeeded: %llu findings\n", (unsigned long long)n,
	       (unsigned long long)ok, (unsigned long long)fuzz_findings);
	return fuzz_findings != 0;
}

/* --frames MAC IP [SEED]: the firmware as a NIC of that address (and of that host's seed, 32 hex
 * digits, FW.SEED_0 first), driven by stdin lines:
 *   <hex>                      a frame the RX kernel hands over
 *   CMD <ctx> <opcode> <hex>   a command (payload in hex): prints "CMDC <status> <output hex>"
 *   ARP <a.b.c.d> <mac hex>    from now on a peer of that MAC answers ARP for that address
 *   WAIT <clocks>              time passes
 *   HOST <eth_mtu> <ctx_priv>  what the host set (ADMIN.ETH_MTU, ADMIN.CTX_PRIV in hex)
 * Frames it sends print as "TX <hex>", its DMA writes as "DMA <addr> <hex>" (CM events), and at
 * the end QP1's counters and the CM IDs in use (tests/test_cm.py replays rxe's CM traffic). */
static uint32_t parse_ip(const char *s)
{
	unsigned a, b, c, d;

	return sscanf(s, "%u.%u.%u.%u", &a, &b, &c, &d) == 4 ? a << 24 | b << 16 | c << 8 | d : 0;
}

static uint32_t unhex(const char *s, uint8_t *b, uint32_t max)
{
	uint32_t n = 0;

	while (n < max && sscanf(s + 2 * n, "%2hhx", &b[n]) == 1)
		n++;
	return n;
}

static int frames(const char *mac, const char *ip, const char *key)
{
	static char line[8192];
	uint32_t i, used = 0;

	my_mac = strtoull(mac, NULL, 16);
	my_ip = parse_ip(ip);
	for (i = 0; key && i < 4; i++)
		sscanf(key + 8 * i, "%8x", &seed[i]);
	fw_init();
	if (!icm_given())
		return 1;
	print_tx = 1;
	while (fgets(line, sizeof(line), stdin)) {
		unsigned c, op, st;
		char hex[1024] = "";

		if (sscanf(line, "CMD %u %u %1023s", &c, &op, hex) >= 2) {
			memset(cmd, 0, sizeof(cmd));
			unhex(hex, cmd + RNIC_CMD_PAYLOAD_OFF, RNIC_CMD_PAYLOAD_LEN);
			st = run(c, op);
			printf("CMDC %u ", st);
			for (i = 0; i < 32; i++)
				printf("%02x", out[i]);
			printf("\n");
		} else if (!strncmp(line, "ARP ", 4)) {
			arp_replies_to_send = parse_ip(line + 4);
			if (strchr(line + 4, ' '))
				unhex(strchr(line + 4, ' ') + 1, arp_peer, 6);
		} else if (!strncmp(line, "WAIT ", 5)) {
			now += strtoull(line + 5, NULL, 0);
		} else if (!strncmp(line, "HOST ", 5)) {
			sscanf(line + 5, "%u %x", &eth_mtu, &ctx_priv);
		} else {
			rx_len = unhex(line, rxbuf, sizeof(rxbuf));
			fw_poll_frames();
		}
		fw_cm_poll();
	}
	for (i = 0; i < FW_CM_IDS; i++)
		used += fw.cm[i].used;
	printf("GSI rx %u tx %u drop_malformed %u drop_class %u drop_unknown %u dup %u drop_busy %u rate_limited %u "
	       "cm_ids %u\n", fw.gsi.rx, fw.gsi.tx, fw.gsi.drop_malformed, fw.gsi.drop_class, fw.gsi.drop_unknown,
	       fw.gsi.dup, fw.gsi.drop_busy, fw.gsi.rate_limited, used);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 3 && !strcmp(argv[1], "--frames"))
		return frames(argv[2], argv[3], argc > 4 ? argv[4] : NULL);
	fw_init();
	if (argc > 2 && !strcmp(argv[1], "--fuzz-cm"))
		return icm_given() ? fuzz_cm(strtoull(argv[2], NULL, 0), argc > 3 ? strtoull(argv[3], NULL, 0) : 1) : 1;
	if (argc > 2 && !strcmp(argv[1], "--fuzz")) {
		if (argc > 3)
			rng = strtoull(argv[3], NULL, 0) | 1;
		return fuzz(strtoull(argv[2], NULL, 0));
	}
	test_state_table();
	test_icm_take();
	test_commands();
	test_mtt_allocator();
	test_mtt_allocator_first_fit();
	test_qp_and_arp();
	test_neighbour_discovery();
	test_cmdq_and_reset();
	test_keys();
	test_prf();
	test_dma_window();
	test_dma_error();
	test_wrapping_region();
	test_privileged_qkey();
	test_unsolicited_arp_reply();
	test_next_fit();
	test_pd_srq_limits();
	test_icm_images();
	printf("%d passed, %d failed\n", checks - failures, failures);
	return failures != 0;
}
