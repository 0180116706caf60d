/* Firmware logic: command queues, resource tables, the IBTA QP state machine (neighbours: neigh.c). */
#include "fw.h"
#include "hal.h"
#include "prf.h"
#include "rnic_frame.h"

struct fw fw;

#define CMD_IN(p, S, F) RNIC_CMDI_##S##_##F##_GET(p)
#define QPA(x) RNIC_QP_ATTR_##x

static const char *const state_name[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};

/* Write a table entry: its image into context memory first (a kernel's cache that misses on it
 * from then on reads the new entry), then into the kernels: words 1..n-1, then word 0, which
 * commits it. */
static void cfg_entry(uint32_t table, uint32_t index, const uint32_t *w, uint32_t n)
{
	fw_icm_entry(table, index, 0, w, n);
	hal_cfg_words(fw_cfg_addr(table, index, 1), w + 1, n - 1);
	hal_cfg(fw_cfg_addr(table, index, 0), w[0]);
}

/* Wait until no kernel can touch host memory any more for what was invalidated before the call:
 * the DMA each had started then is over (CFG_TBL_FENCE). 0, or -1 if a kernel never got there:
 * the host must then keep the memory, as if the NIC still used it. */
static int fence(void)
{
	uint32_t i;

	fw.fence = (uint8_t)(fw.fence + 1);
	hal_cfg(fw_cfg_addr(RNIC_CFG_TBL_FENCE, 0, 0), fw.fence);
	for (i = 0; i < FW_FENCE_POLLS; i++)
		if ((hal_fence() & 0xffffff) == fw.fence * 0x010101u)
			return 0;
	fw_printf("fence %u not passed: %x\n", fw.fence, hal_fence());
	return -1;
}

static uint32_t mac_hi(const uint8_t *m)
{
	return ((uint32_t)m[0] << 8) | m[1];
}

static uint32_t mac_lo(const uint8_t *m)
{
	return ((uint32_t)m[2] << 24) | ((uint32_t)m[3] << 16) | ((uint32_t)m[4] << 8) | m[5];
}

void fw_init(void)
{
	uint32_t port[7], hi = hal_mac_hi(), lo = hal_mac_lo(), i;

	/* fw is in .bss, zeroed by start.S. The kernels clear their tables after a reset (a warm one
	 * leaves block RAM as it was) and pass a fence only once that is done: nothing is configured
	 * before, and the host sees READY after. */
	if (fence()) {
		hal_set_status(RNIC_ID_FW_STATUS_FAILED_MASK);
		for (;;)
			hal_wait(UINT32_MAX);
	}
	fw.mac[0] = (uint8_t)(hi >> 8);
	fw.mac[1] = (uint8_t)hi;
	fw.mac[2] = (uint8_t)(lo >> 24);
	fw.mac[3] = (uint8_t)(lo >> 16);
	fw.mac[4] = (uint8_t)(lo >> 8);
	fw.mac[5] = (uint8_t)lo;
	fw.ip = hal_ipv4();
	fw.cm_tokens = CM_ANSWER_BURST;
	fw.cm_tokens_at = hal_cycles();
	fw.dma_window = (uint8_t)hal_dma_window();
	port[RNIC_PORTC_MAC_LO / 4] = lo;
	port[RNIC_PORTC_MAC_HI / 4] = hi;
	port[RNIC_PORTC_IPV4 / 4] = fw.ip;
	/* fe80::/64 with the modified EUI-64 of the MAC (RFC 4291 2.5.1) */
	fw.ip6[0] = 0xfe;
	fw.ip6[1] = 0x80;
	fw.ip6[8] = fw.mac[0] ^ 2;
	fw.ip6[9] = fw.mac[1];
	fw.ip6[10] = fw.mac[2];
	fw.ip6[11] = 0xff;
	fw.ip6[12] = 0xfe;
	fw.ip6[13] = fw.mac[3];
	fw.ip6[14] = fw.mac[4];
	fw.ip6[15] = fw.mac[5];
	for (i = 0; i < 4; i++)
		port[RNIC_PORTC_IPV6_0 / 4 + i] = rnic_be32(fw.ip6 + 4 * i);
	cfg_entry(RNIC_CFG_TBL_PORT, 0, port, 7);
}

/* ---- QP context toward the kernels */
static void qpc_write(uint32_t qpn, const struct fw_qp *q)
{
	uint32_t *w = (uint32_t *)(void *)(hal_dmabuf() + FW_STAGE_ENTRY), i, idx = rnic_qp_index(qpn);
	uint32_t own = fw.qp_own[idx];

	memset(w, 0, RNIC_QPC_WORDS * 4);
	w[RNIC_QPC_CTRL / 4] = RNIC_SET(RNIC_QPC_CTRL_VALID, (own & FW_OWN_USED) && q->state != RNIC_QPS_RESET) |
			       RNIC_SET(RNIC_QPC_CTRL_STATE, q->state) | RNIC_SET(RNIC_QPC_CTRL_TYPE, q->type) |
			       RNIC_SET(RNIC_QPC_CTRL_CTX, FW_OWN_CTX(own)) | RNIC_SET(RNIC_QPC_CTRL_PMTU, q->pmtu) |
			       RNIC_SET(RNIC_QPC_CTRL_IPV6, q->ipv6);
	w[RNIC_QPC_PDN / 4] = q->pdn;
	w[RNIC_QPC_SQ_BASE_LO / 4] = (uint32_t)q->sq_base;
	w[RNIC_QPC_SQ_BASE_HI / 4] = (uint32_t)(q->sq_base >> 32);
	w[RNIC_QPC_RING_LOG / 4] = RNIC_SET(RNIC_QPC_RING_LOG_SQ, q->sq_log) | RNIC_SET(RNIC_QPC_RING_LOG_RQ, q->rq_log);
	w[RNIC_QPC_RQ_BASE_LO / 4] = (uint32_t)q->rq_base;
	w[RNIC_QPC_RQ_BASE_HI / 4] = (uint32_t)(q->rq_base >> 32);
	w[RNIC_QPC_CQN / 4] = RNIC_SET(RNIC_QPC_CQN_SEND, q->send_cqn) | RNIC_SET(RNIC_QPC_CQN_RECV, q->recv_cqn);
	w[RNIC_QPC_DEST_QPN / 4] = q->dest_qpn;
	w[RNIC_QPC_SQ_PSN / 4] = q->sq_psn;
	w[RNIC_QPC_RQ_PSN / 4] = q->rq_psn;
	w[RNIC_QPC_DMAC_LO / 4] = mac_lo(q->dmac);
	w[RNIC_QPC_DMAC_HI / 4] = mac_hi(q->dmac);
	w[RNIC_QPC_DIP / 4] = q->dip;
	w[RNIC_QPC_ACCESS / 4] = q->access;
	/* RoCEv2 A17.3.4: the UDP source port carries per-QP entropy for ECMP */
	w[RNIC_QPC_NET / 4] = RNIC_SET(RNIC_QPC_NET_SPORT, 0xc000 | (idx & 0x3fff)) |
			      RNIC_SET(RNIC_QPC_NET_TOS, q->tclass) |
			      RNIC_SET(RNIC_QPC_NET_TTL, q->hop_limit ? q->hop_limit : 64);
	w[RNIC_QPC_RETRY / 4] = RNIC_SET(RNIC_QPC_RETRY_TIMEOUT, q->timeout) |
				RNIC_SET(RNIC_QPC_RETRY_RETRY_CNT, q->retry_cnt) |
				RNIC_SET(RNIC_QPC_RETRY_RNR_RETRY, q->rnr_retry) |
				RNIC_SET(RNIC_QPC_RETRY_MIN_RNR, q->min_rnr) |
				RNIC_SET(RNIC_QPC_RETRY_MAX_RD_ATOMIC, q->max_rd) |
				RNIC_SET(RNIC_QPC_RETRY_MAX_DEST_RD_ATOMIC, q->max_dest_rd);
	w[RNIC_QPC_QKEY / 4] = q->qkey;
	w[RNIC_QPC_SRQ / 4] = RNIC_SET(RNIC_QPC_SRQ_SRQN, q->srqn) | RNIC_SET(RNIC_QPC_SRQ_USE, q->use_srq);
	for (i = 0; i < 4; i++)
		w[RNIC_QPC_DIP6_0 / 4 + i] = rnic_be32(q->dip6 + 4 * i);
	cfg_entry(RNIC_CFG_TBL_QPC, idx, w, RNIC_QPC_WORDS);
}

/* ---- IBTA Vol. 1 10.3.1 / 11.2.5 (as Linux ib_modify_qp_is_ok for RC): required and optional
 * attributes of each allowed transition. */
struct qp_rule {
	uint8_t types; /* bit per enum QPT */
	uint8_t cur, next;
	uint32_t req, opt;
};

#define T_RC (1u << RNIC_QPT_RC)
#define T_UC (1u << RNIC_QPT_UC)
#define T_UD (1u << RNIC_QPT_UD)

static const struct qp_rule qp_rules[] = {
	{T_RC | T_UC, RNIC_QPS_RESET, RNIC_QPS_INIT, QPA(PKEY_INDEX) | QPA(PORT) | QPA(ACCESS_FLAGS), 0},
	{T_UD, RNIC_QPS_RESET, RNIC_QPS_INIT, QPA(PKEY_INDEX) | QPA(PORT) | QPA(QKEY), 0},
	{T_RC | T_UC, RNIC_QPS_INIT, RNIC_QPS_INIT, 0, QPA(PKEY_INDEX) | QPA(PORT) | QPA(ACCESS_FLAGS)},
	{T_UD, RNIC_QPS_INIT, RNIC_QPS_INIT, 0, QPA(PKEY_INDEX) | QPA(PORT) | QPA(QKEY)},
	{T_RC, RNIC_QPS_INIT, RNIC_QPS_RTR,
	 QPA(AV) | QPA(PATH_MTU) | QPA(DEST_QPN) | QPA(RQ_PSN) | QPA(MAX_DEST_RD_ATOMIC) | QPA(MIN_RNR_TIMER),
	 QPA(ACCESS_FLAGS) | QPA(PKEY_INDEX)},
	{T_UC, RNIC_QPS_INIT, RNIC_QPS_RTR, QPA(AV) | QPA(PATH_MTU) | QPA(DEST_QPN) | QPA(RQ_PSN),
	 QPA(ACCESS_FLAGS) | QPA(PKEY_INDEX)},
	{T_UD, RNIC_QPS_INIT, RNIC_QPS_RTR, 0, QPA(PKEY_INDEX) | QPA(QKEY)},
	{T_RC, RNIC_QPS_RTR, RNIC_QPS_RTS,
	 QPA(SQ_PSN) | QPA(TIMEOUT) | QPA(RETRY_CNT) | QPA(RNR_RETRY) | QPA(MAX_QP_RD_ATOMIC),
	 QPA(ACCESS_FLAGS) | QPA(MIN_RNR_TIMER)},
	{T_UC, RNIC_QPS_RTR, RNIC_QPS_RTS, QPA(SQ_PSN), QPA(ACCESS_FLAGS)},
	{T_UD, RNIC_QPS_RTR, RNIC_QPS_RTS, QPA(SQ_PSN), QPA(QKEY)},
	{T_RC, RNIC_QPS_RTS, RNIC_QPS_RTS, 0, QPA(ACCESS_FLAGS) | QPA(MIN_RNR_TIMER)},
	{T_UC, RNIC_QPS_RTS, RNIC_QPS_RTS, 0, QPA(ACCESS_FLAGS)},
	{T_UD, RNIC_QPS_RTS, RNIC_QPS_RTS, 0, QPA(QKEY)},
	{T_RC, RNIC_QPS_SQE, RNIC_QPS_RTS, 0, QPA(ACCESS_FLAGS) | QPA(MIN_RNR_TIMER)},
	{T_UC, RNIC_QPS_SQE, RNIC_QPS_RTS, 0, QPA(ACCESS_FLAGS)},
	{T_UD, RNIC_QPS_SQE, RNIC_QPS_RTS, 0, QPA(QKEY)},
};

uint32_t fw_qp_transition_ok(uint32_t type, uint32_t cur, uint32_t next, uint32_t mask)
{
	uint32_t i, extra = mask & ~(QPA(STATE) | QPA(CUR_STATE));

	if (next == RNIC_QPS_RESET || next == RNIC_QPS_ERR)
		return extra ? RNIC_CMD_ST_BAD_PARAM : RNIC_CMD_ST_OK;
	for (i = 0; i < sizeof(qp_rules) / sizeof(qp_rules[0]); i++) {
		if (!(qp_rules[i].types & (1u << type)) || qp_rules[i].cur != cur || qp_rules[i].next != next)
			continue;
		if ((extra & qp_rules[i].req) != qp_rules[i].req || (extra & ~(qp_rules[i].req | qp_rules[i].opt)))
			return RNIC_CMD_ST_BAD_PARAM;
		return RNIC_CMD_ST_OK;
	}
	return RNIC_CMD_ST_BAD_STATE;
}

/* ---- commands */
static uint32_t get_handle(const uint8_t *in)
{
	return RNIC_CMDI_HANDLE_HANDLE_GET(in);
}

static int owned(const struct fw_owner *o, uint32_t n, uint32_t max, uint32_t ctx)
{
	return n < max && o[n].own == (FW_OWN_USED | ctx);
}

static uint32_t alloc_owner(struct fw_owner *o, uint32_t max, uint32_t first, uint32_t ctx, uint32_t kind,
			    uint8_t *out)
{
	uint32_t i = fw_free_slot(kind, first, max);

	if (i == max)
		return RNIC_CMD_ST_NO_RESOURCES;
	o[i].own = (uint8_t)(FW_OWN_USED | ctx);
	fw.owned[ctx][kind]++;
	o[i].refs = 0;
	RNIC_CMDO_HANDLE_HANDLE_SET(out, i);
	return RNIC_CMD_ST_OK;
}

static void query_device(uint8_t *out)
{
	RNIC_CMDO_QUERY_DEVICE_FW_VERSION_SET(out, FW_VERSION_CODE);
	RNIC_CMDO_QUERY_DEVICE_MAX_QP_SET(out, RNIC_MAX_QP);
	RNIC_CMDO_QUERY_DEVICE_MAX_CQ_SET(out, RNIC_MAX_CQ - 1);
	RNIC_CMDO_QUERY_DEVICE_MAX_MR_SET(out, RNIC_MAX_MPT - 1);
	RNIC_CMDO_QUERY_DEVICE_MAX_PD_SET(out, RNIC_MAX_PD - 1);
	RNIC_CMDO_QUERY_DEVICE_MAX_QP_WR_SET(out, 1u << RNIC_MAX_QP_WR_LOG);
	RNIC_CMDO_QUERY_DEVICE_MAX_CQE_SET(out, (1u << RNIC_MAX_CQE_LOG) - 1);
	RNIC_CMDO_QUERY_DEVICE_MAX_SGE_SET(out, RNIC_MAX_SGE);
	RNIC_CMDO_QUERY_DEVICE_MAX_INLINE_SET(out, RNIC_MAX_INLINE);
	RNIC_CMDO_QUERY_DEVICE_MAX_QP_RD_ATOM_SET(out, RNIC_MAX_RD_ATOM);
	RNIC_CMDO_QUERY_DEVICE_MAX_QP_INIT_RD_ATOM_SET(out, RNIC_MAX_RD_ATOM);
	/* MR translation pages: every power of two from 4 KiB to 1 GiB (MPT.PAGE) */
	RNIC_CMDO_QUERY_DEVICE_PAGE_SIZE_CAP_SET(out, (1u << 31) - (1u << RNIC_PAGE_SHIFT));
	RNIC_CMDO_QUERY_DEVICE_MAX_MR_SIZE_SET(out, 1ull << 32);
	memcpy(out + RNIC_CMDO_QUERY_DEVICE_MAC_OFF, fw.mac, 6);
	RNIC_CMDO_QUERY_DEVICE_IPV4_SET(out, fw.ip);
	memcpy(out + RNIC_CMDO_QUERY_DEVICE_IPV6_OFF, fw.ip6, 16);
	RNIC_CMDO_QUERY_DEVICE_LINK_UP_SET(out, 1);
	RNIC_CMDO_QUERY_DEVICE_MAX_MTU_SET(out, RNIC_MTU_4096);
	RNIC_CMDO_QUERY_DEVICE_ACTIVE_MTU_SET(out, fw_active_mtu());
	RNIC_CMDO_QUERY_DEVICE_ETH_MTU_SET(out, RNIC_GET(RNIC_FW_HOST_CFG_ETH_MTU, hal_host_cfg()));
	RNIC_CMDO_QUERY_DEVICE_SPEED_GBPS_SET(out, 100);
	RNIC_CMDO_QUERY_DEVICE_NUM_CTX_SET(out, RNIC_NUM_CTX);
}

/* The port's active MTU: the largest IB MTU whose RoCEv2 packet, with the largest headers (GRH
 * 40, UDP 8, BTH 12, XRC 4, AtomicETH 28, ICRC 4), fits the Ethernet MTU the host set, as Linux's
 * iboe_get_mtu counts; 256 at the least, as rxe. */
uint32_t fw_active_mtu(void)
{
	uint32_t eth = RNIC_GET(RNIC_FW_HOST_CFG_ETH_MTU, hal_host_cfg()), mtu = RNIC_MTU_4096;

	while (mtu > RNIC_MTU_256 && (128u << mtu) + 96 > eth)
		mtu--;
	return mtu;
}

/* Bus addresses context ctx may hand the NIC: any on a card, where only the kernel driver hands
 * the NIC addresses (of pages it pinned); under rnic-sim only those of its own window
 * (FW.DMA_WINDOW), so that one host process cannot point the NIC at another's memory. Every
 * address the datapath uses comes from one checked here: ring bases, MTT entries. */
static int bus_ok(uint32_t ctx, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len - 1;

	if (!len || end < addr)
		return 0;
	if (fw.dma_window && ((addr >> fw.dma_window) != ctx + 1ull || (end >> fw.dma_window) != ctx + 1ull)) {
		fw.bad_addr++;
		return 0;
	}
	return 1;
}

static uint32_t create_cq(uint32_t ctx, const uint8_t *in, uint8_t *out)
{
	uint64_t base = CMD_IN(in, CREATE_CQ, BASE);
	uint32_t log = CMD_IN(in, CREATE_CQ, LOG_SIZE), st, cqn, w[RNIC_CQC_WORDS];

	if (!log || log > RNIC_MAX_CQE_LOG || (base & (RNIC_CQE_BYTES - 1)) ||
	    !bus_ok(ctx, base, (uint64_t)RNIC_CQE_BYTES << log))
		return RNIC_CMD_ST_BAD_PARAM;
	st = alloc_owner(fw.cq, RNIC_MAX_CQ, 1, ctx, FW_OWN_CQ, out);
	if (st)
		return st;
	cqn = RNIC_CMDO_HANDLE_HANDLE_GET(out);
	w[RNIC_CQC_CTRL / 4] = RNIC_SET(RNIC_CQC_CTRL_VALID, 1) | RNIC_SET(RNIC_CQC_CTRL_LOG_SIZE, log) |
			       RNIC_SET(RNIC_CQC_CTRL_CTX, ctx);
	w[RNIC_CQC_BASE_LO / 4] = (uint32_t)base;
	w[RNIC_CQC_BASE_HI / 4] = (uint32_t)(base >> 32);
	w[RNIC_CQC_VECTOR / 4] = ctx;
	cfg_entry(RNIC_CFG_TBL_CQC, cqn, w, RNIC_CQC_WORDS);
	return RNIC_CMD_ST_OK;
}

/* A new ring for a live CQ (KEEP: its indices and arm carry on); the completions written to the
 * old ring before are in host memory once the fence is passed, and the host moves those it has
 * not polled. */
static uint32_t resize_cq(uint32_t ctx, const uint8_t *in)
{
	uint64_t base = CMD_IN(in, RESIZE_CQ, BASE);
	uint32_t cqn = CMD_IN(in, RESIZE_CQ, CQN), log = CMD_IN(in, RESIZE_CQ, LOG_SIZE), w[RNIC_CQC_WORDS];

	if (!owned(fw.cq, cqn, RNIC_MAX_CQ, ctx))
		return RNIC_CMD_ST_BAD_HANDLE;
	if (!log || log > RNIC_MAX_CQE_LOG || (base & (RNIC_CQE_BYTES - 1)) ||
	    !bus_ok(ctx, base, (uint64_t)RNIC_CQE_BYTES << log))
		return RNIC_CMD_ST_BAD_PARAM;
	w[RNIC_CQC_CTRL / 4] = RNIC_SET(RNIC_CQC_CTRL_VALID, 1) | RNIC_SET(RNIC_CQC_CTRL_KEEP, 1) |
			       RNIC_SET(RNIC_CQC_CTRL_LOG_SIZE, log) | RNIC_SET(RNIC_CQC_CTRL_CTX, ctx);
	w[RNIC_CQC_BASE_LO / 4] = (uint32_t)base;
	w[RNIC_CQC_BASE_HI / 4] = (uint32_t)(base >> 32);
	w[RNIC_CQC_VECTOR / 4] = ctx;
	cfg_entry(RNIC_CFG_TBL_CQC, cqn, w, RNIC_CQC_WORDS);
	return fence() ? RNIC_CMD_ST_INTERNAL : RNIC_CMD_ST_OK;
}

static void destroy_cq(uint32_t cqn)
{
	uint32_t w[RNIC_CQC_WORDS] = {0};

	cfg_entry(RNIC_CFG_TBL_CQC, cqn, w, RNIC_CQC_WORDS);
	fw.owned[FW_OWN_CTX(fw.cq[cqn].own)][FW_OWN_CQ]--;
	fw.cq[cqn].own = 0;
}

static uint32_t create_eq(uint32_t ctx, const uint8_t *in)
{
	uint64_t base = CMD_IN(in, CREATE_EQ, BASE);
	uint32_t log = CMD_IN(in, CREATE_EQ, LOG_SIZE), w[RNIC_EQC_WORDS];

	if (!log || log > 12 || (base & (RNIC_EQE_BYTES - 1)) || !bus_ok(ctx, base, (uint64_t)RNIC_EQE_BYTES << log))
		return RNIC_CMD_ST_BAD_PARAM;
	w[RNIC_EQC_CTRL / 4] = RNIC_SET(RNIC_EQC_CTRL_VALID, 1) | RNIC_SET(RNIC_EQC_CTRL_LOG_SIZE, log);
	w[RNIC_EQC_BASE_LO / 4] = (uint32_t)base;
	w[RNIC_EQC_BASE_HI / 4] = (uint32_t)(base >> 32);
	cfg_entry(RNIC_CFG_TBL_EQC, ctx, w, RNIC_EQC_WORDS);
	return RNIC_CMD_ST_OK;
}

/* no event of the context is written any more: its queue is in memory of the owner that left */
static void destroy_eq(uint32_t ctx)
{
	uint32_t w[RNIC_EQC_WORDS] = {0};

	cfg_entry(RNIC_CFG_TBL_EQC, ctx, w, RNIC_EQC_WORDS);
}

/* The context's ring of CM events (CM_EVENT); zero LOG_SIZE: none. */
static uint32_t create_cm_evq(uint32_t ctx, const uint8_t *in)
{
	uint64_t base = CMD_IN(in, CM_CREATE_EVQ, BASE);
	uint32_t log = CMD_IN(in, CM_CREATE_EVQ, LOG_SIZE);

	if (log > 12 || (log && (base & (RNIC_CM_EVENT_BYTES - 1))) ||
	    (log && !bus_ok(ctx, base, (uint64_t)RNIC_CM_EVENT_BYTES << log)))
		return RNIC_CMD_ST_BAD_PARAM;
	fw.cm_evq[ctx].base = log ? base : 0;
	fw.cm_evq[ctx].log = (uint8_t)log;
	fw.cm_evq[ctx].pi = 0;
	return RNIC_CMD_ST_OK;
}

/* ---- shared receive queues (IBTA 10.2.9) */
static uint32_t create_srq(uint32_t ctx, const uint8_t *in, uint8_t *out)
{
	uint64_t base = CMD_IN(in, CREATE_SRQ, BASE);
	uint32_t log = CMD_IN(in, CREATE_SRQ, LOG_SIZE), pdn = CMD_IN(in, CREATE_SRQ, PDN), st, n;
	uint32_t w[RNIC_SRQC_WORDS] = {0};

	if (!owned(fw.pd, pdn, RNIC_MAX_PD, ctx))
		return RNIC_CMD_ST_BAD_HANDLE;
	if (log > RNIC_MAX_QP_WR_LOG || (base & (RNIC_RWQE_BYTES - 1)) || CMD_IN(in, CREATE_SRQ, LIMIT) > (1u << log) ||
	    !bus_ok(ctx, base, (uint64_t)RNIC_RWQE_BYTES << log))
		return RNIC_CMD_ST_BAD_PARAM;
	st = alloc_owner(fw.srq, RNIC_MAX_SRQ, 0, ctx, FW_OWN_SRQ, out);
	if (st)
		return st;
	n = RNIC_CMDO_HANDLE_HANDLE_GET(out);
	fw.pd[pdn].refs++;
	fw.srq_pdn[n] = (uint16_t)pdn; /* both checked above */
	fw.srq_log[n] = (uint8_t)log;
	w[RNIC_SRQC_CTRL / 4] = RNIC_SET(RNIC_SRQC_CTRL_VALID, 1) | RNIC_SET(RNIC_SRQC_CTRL_LOG_SIZE, log) |
				RNIC_SET(RNIC_SRQC_CTRL_CTX, ctx);
	w[RNIC_SRQC_BASE_LO / 4] = (uint32_t)base;
	w[RNIC_SRQC_BASE_HI / 4] = (uint32_t)(base >> 32);
	w[RNIC_SRQC_PDN / 4] = pdn;
	w[RNIC_SRQC_LIMIT / 4] = CMD_IN(in, CREATE_SRQ, LIMIT);
	cfg_entry(RNIC_CFG_TBL_SRQC, n, w, RNIC_SRQC_WORDS);
	return RNIC_CMD_ST_OK;
}

static void destroy_srq(uint32_t n)
{
	uint32_t w[RNIC_SRQC_WORDS] = {0};

	fw.pd[fw.srq_pdn[n]].refs--;
	cfg_entry(RNIC_CFG_TBL_SRQC, n, w, RNIC_SRQC_WORDS);
	fw.owned[FW_OWN_CTX(fw.srq[n].own)][FW_OWN_SRQ]--;
	fw.srq[n].own = 0;
}

/* Arm the limit event: only the LIMIT word is written, the ring runs on. */
static uint32_t modify_srq(uint32_t ctx, const uint8_t *in)
{
	uint32_t n = CMD_IN(in, MODIFY_SRQ, SRQN), limit = CMD_IN(in, MODIFY_SRQ, LIMIT);

	if (!owned(fw.srq, n, RNIC_MAX_SRQ, ctx))
		return RNIC_CMD_ST_BAD_HANDLE;
	if (limit > (1u << fw.srq_log[n]))
		return RNIC_CMD_ST_BAD_PARAM;
	hal_cfg(fw_cfg_addr(RNIC_CFG_TBL_SRQC, n, RNIC_SRQC_LIMIT / 4), limit);
	fw_icm_entry(RNIC_CFG_TBL_SRQC, n, RNIC_SRQC_LIMIT / 4, &limit, 1);
	return RNIC_CMD_ST_OK;
}

static uint32_t create_qp(uint32_t ctx, const uint8_t *in, uint8_t *out)
{
	uint32_t pdn = CMD_IN(in, CREATE_QP, PDN), scq = CMD_IN(in, CREATE_QP, SEND_CQN);
	uint32_t rcq = CMD_IN(in, CREATE_QP, RECV_CQN), type = CMD_IN(in, CREATE_QP, TYPE);
	uint32_t sq_log = CMD_IN(in, CREATE_QP, SQ_LOG), rq_log = CMD_IN(in, CREATE_QP, RQ_LOG), i;
	struct fw_qp n, *q = &n;

	if (!owned(fw.pd, pdn, RNIC_MAX_PD, ctx) || !owned(fw.cq, scq, RNIC_MAX_CQ, ctx) ||
	    !owned(fw.cq, rcq, RNIC_MAX_CQ, ctx) ||
	    (CMD_IN(in, CREATE_QP, USE_SRQ) && !owned(fw.srq, CMD_IN(in, CREATE_QP, SRQN), RNIC_MAX_SRQ, ctx)))
		return RNIC_CMD_ST_BAD_HANDLE;
	if (type != RNIC_QPT_RC && type != RNIC_QPT_UC && type != RNIC_QPT_UD)
		return RNIC_CMD_ST_BAD_PARAM;
	if (sq_log > RNIC_MAX_QP_WR_LOG || rq_log > RNIC_MAX_QP_WR_LOG ||
	    !bus_ok(ctx, CMD_IN(in, CREATE_QP, SQ_BASE), (uint64_t)RNIC_WQE_BYTES << sq_log) ||
	    (!CMD_IN(in, CREATE_QP, USE_SRQ) && !bus_ok(ctx, CMD_IN(in, CREATE_QP, RQ_BASE), (uint64_t)RNIC_RWQE_BYTES << rq_log)))
		return RNIC_CMD_ST_BAD_PARAM;
	i = fw_free_slot(FW_OWN_QP, 0, RNIC_MAX_QP);
	if (i == RNIC_MAX_QP || !fw.icm_n) /* its record lives in context memory */
		return RNIC_CMD_ST_NO_RESOURCES;
	memset(q, 0, sizeof(*q));
	fw.qp_own[i] = (uint8_t)(FW_OWN_USED | ctx);
	fw.owned[ctx][FW_OWN_QP]++;
	q->type = (uint8_t)type;
	q->state = RNIC_QPS_RESET;
	q->pdn = pdn;
	q->send_cqn = scq;
	q->recv_cqn = rcq;
	q->sq_log = (uint8_t)sq_log;
	q->rq_log = (uint8_t)rq_log;
	q->sq_base = CMD_IN(in, CREATE_QP, SQ_BASE);
	q->rq_base = CMD_IN(in, CREATE_QP, RQ_BASE);
	q->use_srq = CMD_IN(in, CREATE_QP, USE_SRQ) != 0;
	q->srqn = q->use_srq ? CMD_IN(in, CREATE_QP, SRQN) : 0;
	fw.srq[q->srqn].refs += q->use_srq;
	q->pmtu = type == RNIC_QPT_UD ? RNIC_MTU_4096 : RNIC_MTU_1024; /* UD: one packet of up to the port MTU */
	fw.pd[pdn].refs++;
	fw.cq[scq].refs++;
	fw.cq[rcq].refs++;
	fw_qp_store(rnic_qpn(i), q);
	qpc_write(rnic_qpn(i), q);
	RNIC_CMDO_HANDLE_HANDLE_SET(out, rnic_qpn(i));
	return RNIC_CMD_ST_OK;
}

/* A record that cannot be read (the driver broke its context memory) leaves the references it
 * held: its PD and CQs stay busy, and say so; the QP itself is gone from the kernels all the same. */
static void destroy_qp(uint32_t qpn)
{
	static const struct fw_qp none;
	const struct fw_qp *q = fw_qp_load(qpn);

	if (q) {
		fw.pd[q->pdn].refs--;
		fw.cq[q->send_cqn].refs--;
		fw.cq[q->recv_cqn].refs--;
		fw.srq[q->srqn].refs -= q->use_srq;
	} else {
		fw_printf("qp %u: record unreadable, its PD and CQs stay referenced\n", qpn);
		q = &none;
	}
	fw.owned[FW_OWN_CTX(fw.qp_own[rnic_qp_index(qpn)])][FW_OWN_QP]--;
	fw.qp_own[rnic_qp_index(qpn)] = 0;
	qpc_write(qpn, q);
	fw_cm_qp_gone(qpn);
}

/* An address handle's destination MAC (UD sends carry it in the WQE). */
static uint32_t create_ah(const uint8_t *in, uint8_t *out)
{
	return fw_gid_resolve(in + RNIC_CMDI_CREATE_AH_DGID_OFF, out + RNIC_CMDO_CREATE_AH_MAC_OFF);
}

uint32_t fw_modify_qp(uint32_t ctx, const uint8_t *in)
{
	return fw_modify_qp_to(ctx, in, 0);
}

uint32_t fw_modify_qp_to(uint32_t ctx, const uint8_t *in, const uint8_t *dmac)
{
	uint32_t qpn = CMD_IN(in, MODIFY_QP, QPN), mask = CMD_IN(in, MODIFY_QP, ATTR_MASK);
	uint32_t next = CMD_IN(in, MODIFY_QP, NEW_STATE), st, ip;
	const uint8_t *dgid = in + RNIC_CMDI_MODIFY_QP_DGID_OFF;
	struct fw_qp *q, n;

	if (!fw_qp_owned(qpn, ctx))
		return RNIC_CMD_ST_BAD_HANDLE;
	/* a privileged Q_Key (high bit, IBTA 10.2.5) is the firmware's own (QP1); Linux refuses it
	 * to processes without CAP_NET_RAW, before any other check, with EPERM */
	if ((mask & QPA(QKEY)) && (CMD_IN(in, MODIFY_QP, QKEY) & 0x80000000u))
		return RNIC_CMD_ST_DENIED;
	q = fw_qp_load(qpn);
	if (!q)
		return RNIC_CMD_ST_DMA_ERROR;
	if (!(mask & QPA(STATE)))
		next = q->state; /* attribute change without a transition */
	if ((mask & QPA(CUR_STATE)) && CMD_IN(in, MODIFY_QP, CUR_STATE) != q->state)
		return RNIC_CMD_ST_BAD_STATE;
	if (next > RNIC_QPS_ERR)
		return RNIC_CMD_ST_BAD_PARAM;
	st = fw_qp_transition_ok(q->type, q->state, next, mask);
	if (st)
		return st;
	n = *q;
	if (mask & QPA(PORT) && CMD_IN(in, MODIFY_QP, PORT) != 1)
		return RNIC_CMD_ST_BAD_PARAM;
	if (mask & QPA(PKEY_INDEX) && CMD_IN(in, MODIFY_QP, PKEY_INDEX) != 0)
		return RNIC_CMD_ST_BAD_PARAM;
	if (mask & QPA(ACCESS_FLAGS)) {
		n.access = CMD_IN(in, MODIFY_QP, ACCESS);
		if (n.access & ~(RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ |
				 RNIC_ACCESS_REMOTE_ATOMIC))
			return RNIC_CMD_ST_BAD_PARAM;
	}
	if (mask & QPA(PATH_MTU)) {
		n.pmtu = CMD_IN(in, MODIFY_QP, PATH_MTU);
		if (n.pmtu < RNIC_MTU_256 || n.pmtu > RNIC_MTU_4096)
			return RNIC_CMD_ST_BAD_PARAM;
	}
	if (mask & QPA(DEST_QPN))
		n.dest_qpn = CMD_IN(in, MODIFY_QP, DEST_QPN);
	if (mask & QPA(RQ_PSN))
		n.rq_psn = CMD_IN(in, MODIFY_QP, RQ_PSN);
	if (mask & QPA(SQ_PSN))
		n.sq_psn = CMD_IN(in, MODIFY_QP, SQ_PSN);
	if ((n.dest_qpn | n.rq_psn | n.sq_psn) > 0xffffff)
		return RNIC_CMD_ST_BAD_PARAM;
	if (mask & QPA(QKEY))
		n.qkey = CMD_IN(in, MODIFY_QP, QKEY);
	if (mask & QPA(TIMEOUT))
		n.timeout = CMD_IN(in, MODIFY_QP, TIMEOUT);
	if (mask & QPA(RETRY_CNT))
		n.retry_cnt = CMD_IN(in, MODIFY_QP, RETRY_CNT);
	if (mask & QPA(RNR_RETRY))
		n.rnr_retry = CMD_IN(in, MODIFY_QP, RNR_RETRY);
	if (mask & QPA(MIN_RNR_TIMER))
		n.min_rnr = CMD_IN(in, MODIFY_QP, MIN_RNR_TIMER);
	if (mask & QPA(MAX_QP_RD_ATOMIC))
		n.max_rd = CMD_IN(in, MODIFY_QP, MAX_RD_ATOMIC);
	if (mask & QPA(MAX_DEST_RD_ATOMIC))
		n.max_dest_rd = CMD_IN(in, MODIFY_QP, MAX_DEST_RD_ATOMIC);
	if (n.timeout > 31 || n.retry_cnt > 7 || n.rnr_retry > 7 || n.min_rnr > 31 || n.max_rd > RNIC_MAX_RD_ATOM ||
	    n.max_dest_rd > RNIC_MAX_RD_ATOM)
		return RNIC_CMD_ST_BAD_PARAM;
	if (mask & QPA(AV)) {
		if (!CMD_IN(in, MODIFY_QP, IS_GLOBAL))
			return RNIC_CMD_ST_BAD_PARAM;
		if (dmac)
			memcpy(n.dmac, dmac, 6);
		else if ((st = fw_gid_resolve(dgid, n.dmac)) != 0)
			return st;
		n.ipv6 = fw_gid_ipv4(dgid, &ip) != 0;
		n.dip = n.ipv6 ? 0 : ip;
		memcpy(n.dip6, dgid, 16);
		n.tclass = CMD_IN(in, MODIFY_QP, TRAFFIC_CLASS);
		n.hop_limit = CMD_IN(in, MODIFY_QP, HOP_LIMIT);
	}
	if (next == RNIC_QPS_RESET) {
		/* back to the state of a new QP: attributes are forgotten */
		memset(&n, 0, sizeof(n));
		n.type = q->type;
		n.pdn = q->pdn;
		n.send_cqn = q->send_cqn;
		n.recv_cqn = q->recv_cqn;
		n.sq_log = q->sq_log;
		n.rq_log = q->rq_log;
		n.sq_base = q->sq_base;
		n.rq_base = q->rq_base;
		n.use_srq = q->use_srq;
		n.srqn = q->srqn;
		n.pmtu = q->type == RNIC_QPT_UD ? RNIC_MTU_4096 : RNIC_MTU_1024;
	}
	/* the log names a connection's peer once; other transitions, thousands a second at
	 * connection time, would cost the soft core more than the command itself */
	if (next != q->state && next == RNIC_QPS_RTR && n.ipv6)
		fw_printf("qp %u ctx %u: %s->RTR peer %x%x::%x%x (IPv6) qp %u mtu %u\n", qpn, ctx, state_name[q->state],
			  n.dip6[0], n.dip6[1], n.dip6[14], n.dip6[15], n.dest_qpn, 128u << n.pmtu);
	else if (next != q->state && next == RNIC_QPS_RTR)
		fw_printf("qp %u ctx %u: %s->RTR peer %I qp %u mtu %u\n", qpn, ctx, state_name[q->state], n.dip,
			  n.dest_qpn, 128u << n.pmtu);
	n.state = (uint8_t)next;
	fw_qp_store(qpn, &n);
	qpc_write(qpn, &n);
	/* a reset QP's last CQE and data have landed when the command completes: the host may
	 * clean its CQs of it and start its rings over */
	if (next == RNIC_QPS_RESET)
		return fence() ? RNIC_CMD_ST_INTERNAL : RNIC_CMD_ST_OK;
	return RNIC_CMD_ST_OK;
}

static uint32_t query_qp(uint32_t qpn, uint8_t *out)
{
	const struct fw_qp *q = fw_qp_load(qpn);

	if (!q)
		return RNIC_CMD_ST_DMA_ERROR;
	RNIC_CMDO_QUERY_QP_STATE_SET(out, q->state);
	RNIC_CMDO_QUERY_QP_PATH_MTU_SET(out, q->pmtu);
	RNIC_CMDO_QUERY_QP_DEST_QPN_SET(out, q->dest_qpn);
	RNIC_CMDO_QUERY_QP_RQ_PSN_SET(out, q->rq_psn);
	RNIC_CMDO_QUERY_QP_SQ_PSN_SET(out, q->sq_psn);
	RNIC_CMDO_QUERY_QP_ACCESS_SET(out, q->access);
	memcpy(out + RNIC_CMDO_QUERY_QP_DMAC_OFF, q->dmac, 6);
	RNIC_CMDO_QUERY_QP_TIMEOUT_SET(out, q->timeout);
	RNIC_CMDO_QUERY_QP_RETRY_CNT_SET(out, q->retry_cnt);
	RNIC_CMDO_QUERY_QP_RNR_RETRY_SET(out, q->rnr_retry);
	RNIC_CMDO_QUERY_QP_MIN_RNR_TIMER_SET(out, q->min_rnr);
	RNIC_CMDO_QUERY_QP_MAX_RD_ATOMIC_SET(out, q->max_rd);
	RNIC_CMDO_QUERY_QP_MAX_DEST_RD_ATOMIC_SET(out, q->max_dest_rd);
	return RNIC_CMD_ST_OK;
}

/* Key index i's MPT entry from its record m, valid or not */
static void mpt_write(uint32_t i, const struct fw_mr *m, uint32_t valid)
{
	uint32_t w[RNIC_MPT_WORDS];

	w[RNIC_MPT_CTRL / 4] = RNIC_SET(RNIC_MPT_CTRL_VALID, valid) | RNIC_SET(RNIC_MPT_CTRL_ACCESS, m->access) |
			       RNIC_SET(RNIC_MPT_CTRL_TAG, m->tag);
	w[RNIC_MPT_PDN / 4] = m->pdn;
	w[RNIC_MPT_VA_LO / 4] = (uint32_t)m->va;
	w[RNIC_MPT_VA_HI / 4] = (uint32_t)(m->va >> 32);
	w[RNIC_MPT_LEN_LO / 4] = (uint32_t)m->len;
	w[RNIC_MPT_LEN_HI / 4] = (uint32_t)(m->len >> 32);
	w[RNIC_MPT_MTT_BASE / 4] = m->mtt_base;
	w[RNIC_MPT_PAGE / 4] = RNIC_SET(RNIC_MPT_PAGE_SHIFT, m->page_shift);
	cfg_entry(RNIC_CFG_TBL_MPT, i, w, RNIC_MPT_WORDS);
}

/* The record of key, if it is a live key of context ctx; else NULL */
static struct fw_mr *mr_owned(uint32_t key, uint32_t ctx)
{
	uint32_t i = key >> RNIC_KEY_TAG_BITS;
	struct fw_mr *m;

	if (i >= RNIC_MAX_MPT || !(fw.mr_own[i] & FW_OWN_USED) || FW_OWN_CTX(fw.mr_own[i]) != ctx)
		return NULL;
	m = fw_mr_load(i);
	return m && m->tag == (key & ((1u << RNIC_KEY_TAG_BITS) - 1)) ? m : NULL;
}

/* The tag of slot i's key at its gen-th registration: gen put through the PRF's keyed
 * permutation of the tag space, one of its own for each slot. A slot's tags do not recur before
 * 2^KEY_TAG_BITS registrations, and without the key the next tag of a slot cannot be told from the
 * ones seen, nor another slot's (keys are a peer's only proof of access). */
_Static_assert(RNIC_KEY_TAG_BITS == 18, "key_tag: the PRF's permutation is of 18 bits");
static uint32_t key_tag(uint32_t i, uint32_t gen)
{
	return fw_prf_perm18(i, gen & ((1u << RNIC_KEY_TAG_BITS) - 1));
}

/* IBTA 10.6.3.1: known flags only; remote write or atomic access needs local write */
static uint32_t access_ok(uint32_t access)
{
	if ((access & ~(RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_READ |
			RNIC_ACCESS_REMOTE_ATOMIC)) ||
	    ((access & (RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_ATOMIC)) && !(access & RNIC_ACCESS_LOCAL_WRITE)))
		return RNIC_CMD_ST_BAD_PARAM;
	return RNIC_CMD_ST_OK;
}

/* The translation of [va, va + len) into MTT entries from the host's page list (npages pages of
 * 2^shift bytes, 4 KiB up to 1 GiB: a large region takes one entry per large page): m gets it. */
static uint32_t mtt_load(uint32_t ctx, struct fw_mr *m, uint64_t va, uint64_t len, uint64_t list, uint32_t npages,
			 uint32_t shift)
{
	uint8_t *buf = hal_dmabuf() + RNIC_DMA_MAX_LEN;
	uint32_t done, chunk, k;
	int32_t base;

	if (!len || len > (1ull << 32) || va + len - 1 < va || shift < RNIC_PAGE_SHIFT || shift > 30 ||
	    npages != (uint32_t)(((va + len - 1) >> shift) - (va >> shift) + 1) || !bus_ok(ctx, list, npages * 8ull))
		return RNIC_CMD_ST_BAD_PARAM;
	base = fw_mtt_alloc(npages);
	if (base < 0)
		return RNIC_CMD_ST_NO_RESOURCES;
	for (done = 0; done < npages; done += chunk) {
		chunk = npages - done < RNIC_DMA_MAX_LEN / 8 ? npages - done : RNIC_DMA_MAX_LEN / 8;
		if (hal_dma(ctx, list + done * 8ull, RNIC_DMA_MAX_LEN, chunk * 8, 0)) {
			fw_mtt_free((uint32_t)base, npages);
			return RNIC_CMD_ST_DMA_ERROR;
		}
		for (k = 0; k < chunk; k++) {
			if (!bus_ok(ctx, rnic_rd_le(buf + 8 * k, 8), 1ull << shift)) {
				fw_mtt_free((uint32_t)base, npages);
				return RNIC_CMD_ST_BAD_PARAM;
			}
		}
		/* the entries are the page list's 8-byte addresses as they are; into ICM first: a TLB
		 * line read from there is then never older than the kernels' entries */
		fw_icm_write(RNIC_ICM_MTT_OFF + ((uint32_t)base + done) * RNIC_ICM_MTT_STRIDE, buf, chunk * 8);
		for (k = 0; k < chunk; k++) {
			uint64_t a = rnic_rd_le(buf + 8 * k, 8);

			hal_cfg(fw_cfg_addr(RNIC_CFG_TBL_MTT, (uint32_t)base + done + k, 0), (uint32_t)a);
			hal_cfg(fw_cfg_addr(RNIC_CFG_TBL_MTT, (uint32_t)base + done + k, 1), (uint32_t)(a >> 32));
		}
	}
	m->va = va;
	m->len = len;
	m->mtt_base = (uint32_t)base;
	m->npages = npages;
	m->page_shift = (uint8_t)shift;
	return RNIC_CMD_ST_OK;
}

static uint32_t reg_mr(uint32_t ctx, const uint8_t *in, uint8_t *out)
{
	uint32_t pdn = CMD_IN(in, REG_MR, PDN), access = CMD_IN(in, REG_MR, ACCESS), i, st;
	const struct fw_mr *m;
	struct fw_mr n;

	if (!owned(fw.pd, pdn, RNIC_MAX_PD, ctx))
		return RNIC_CMD_ST_BAD_HANDLE;
	st = access_ok(access);
	if (st)
		return st;
	i = fw_free_slot(FW_OWN_MR, 1, RNIC_MAX_MPT);
	if (i == RNIC_MAX_MPT)
		return RNIC_CMD_ST_NO_RESOURCES;
	m = fw_mr_load(i); /* the slot's registrations so far (gen) */
	if (!m)
		return RNIC_CMD_ST_NO_RESOURCES; /* no context memory */
	n = *m;
	st = mtt_load(ctx, &n, CMD_IN(in, REG_MR, VA), CMD_IN(in, REG_MR, LENGTH), CMD_IN(in, REG_MR, PAGELIST),
		      CMD_IN(in, REG_MR, NPAGES), CMD_IN(in, REG_MR, PAGE_SHIFT));
	if (st)
		return st;
	fw.mr_own[i] = (uint8_t)(FW_OWN_USED | ctx);
	fw.owned[ctx][FW_OWN_MR]++;
	n.tag = key_tag(i, n.gen++);
	n.pdn = (uint16_t)pdn; /* both checked above */
	n.access = (uint16_t)access;
	fw.pd[pdn].refs++;
	fw_mr_store(i, &n);
	mpt_write(i, &n, 1);
	RNIC_CMDO_HANDLE_HANDLE_SET(out, (i << RNIC_KEY_TAG_BITS) | n.tag);
	return RNIC_CMD_ST_OK;
}

/* ibv_rereg_mr in place: same key, new translation, PD and/or access. The region is invalid
 * while it changes; the old translation is freed once no kernel can be using it (fence). */
static uint32_t rereg_mr(uint32_t ctx, const uint8_t *in)
{
	uint32_t key = CMD_IN(in, REREG_MR, KEY), flags = CMD_IN(in, REREG_MR, FLAGS), i = key >> RNIC_KEY_TAG_BITS;
	uint32_t st;
	struct fw_mr *m = mr_owned(key, ctx), n;

	if (!m)
		return RNIC_CMD_ST_BAD_HANDLE;
	if (!flags || (flags & ~(RNIC_REREG_TRANSLATION | RNIC_REREG_PD | RNIC_REREG_ACCESS)))
		return RNIC_CMD_ST_BAD_PARAM;
	n = *m;
	if (flags & RNIC_REREG_PD) {
		uint32_t pdn = CMD_IN(in, REREG_MR, PDN);

		if (!owned(fw.pd, pdn, RNIC_MAX_PD, ctx))
			return RNIC_CMD_ST_BAD_HANDLE;
		n.pdn = (uint16_t)pdn;
	}
	if (flags & RNIC_REREG_ACCESS) {
		uint32_t access = CMD_IN(in, REREG_MR, ACCESS);

		st = access_ok(access);
		if (st)
			return st;
		n.access = (uint16_t)access;
	}
	if (flags & RNIC_REREG_TRANSLATION) {
		st = mtt_load(ctx, &n, CMD_IN(in, REREG_MR, VA), CMD_IN(in, REREG_MR, LENGTH),
			      CMD_IN(in, REREG_MR, PAGELIST), CMD_IN(in, REREG_MR, NPAGES),
			      CMD_IN(in, REREG_MR, PAGE_SHIFT));
		if (st)
			return st;
	}
	mpt_write(i, m, 0);
	if (fence())
		return RNIC_CMD_ST_INTERNAL; /* left invalid, both translations kept */
	if (flags & RNIC_REREG_TRANSLATION)
		fw_mtt_free(m->mtt_base, m->npages);
	fw.pd[m->pdn].refs--;
	fw.pd[n.pdn].refs++;
	fw_mr_store(i, &n);
	mpt_write(i, &n, 1);
	return RNIC_CMD_ST_OK;
}

/* Key index i, a live key with record m, goes away */
static void dereg_mr(uint32_t i, const struct fw_mr *m)
{
	fw.owned[FW_OWN_CTX(fw.mr_own[i])][FW_OWN_MR]--;
	fw.mr_own[i] = 0;
	mpt_write(i, m, 0);
	fw_mtt_free(m->mtt_base, m->npages); /* taken again only by a later command, after the fence */
	fw.pd[m->pdn].refs--;
}

uint32_t fw_cmd(uint32_t ctx, const uint8_t *cmd, uint8_t *out)
{
	const uint8_t *in = cmd + RNIC_CMD_PAYLOAD_OFF;
	uint32_t h = get_handle(in);

	switch (RNIC_CMD_OPCODE_GET(cmd)) {
	case RNIC_CMD_NOP:
		return RNIC_CMD_ST_OK;
	case RNIC_CMD_QUERY_DEVICE:
		query_device(out);
		return RNIC_CMD_ST_OK;
	case RNIC_CMD_ALLOC_PD:
		return alloc_owner(fw.pd, RNIC_MAX_PD, 1, ctx, FW_OWN_PD, out);
	case RNIC_CMD_DEALLOC_PD:
		if (!owned(fw.pd, h, RNIC_MAX_PD, ctx))
			return RNIC_CMD_ST_BAD_HANDLE;
		if (fw.pd[h].refs)
			return RNIC_CMD_ST_BUSY;
		fw.pd[h].own = 0;
		fw.owned[ctx][FW_OWN_PD]--;
		return RNIC_CMD_ST_OK;
	case RNIC_CMD_CREATE_CQ:
		return create_cq(ctx, in, out);
	case RNIC_CMD_DESTROY_CQ:
		if (!owned(fw.cq, h, RNIC_MAX_CQ, ctx))
			return RNIC_CMD_ST_BAD_HANDLE;
		if (fw.cq[h].refs)
			return RNIC_CMD_ST_BUSY;
		destroy_cq(h);
		return fence() ? RNIC_CMD_ST_INTERNAL : RNIC_CMD_ST_OK;
	case RNIC_CMD_RESIZE_CQ:
		return resize_cq(ctx, in);
	case RNIC_CMD_CREATE_EQ:
		return create_eq(ctx, in);
	case RNIC_CMD_CREATE_AH:
		return create_ah(in, out);
	case RNIC_CMD_CREATE_SRQ:
		return create_srq(ctx, in, out);
	case RNIC_CMD_MODIFY_SRQ:
		return modify_srq(ctx, in);
	case RNIC_CMD_DESTROY_SRQ:
		if (!owned(fw.srq, h, RNIC_MAX_SRQ, ctx))
			return RNIC_CMD_ST_BAD_HANDLE;
		if (fw.srq[h].refs)
			return RNIC_CMD_ST_BUSY;
		destroy_srq(h);
		return fence() ? RNIC_CMD_ST_INTERNAL : RNIC_CMD_ST_OK;
	case RNIC_CMD_CREATE_QP:
		return create_qp(ctx, in, out);
	case RNIC_CMD_DESTROY_QP:
		if (!fw_qp_owned(h, ctx))
			return RNIC_CMD_ST_BAD_HANDLE;
		destroy_qp(h);
		return fence() ? RNIC_CMD_ST_INTERNAL : RNIC_CMD_ST_OK;
	case RNIC_CMD_MODIFY_QP:
		return fw_modify_qp(ctx, in);
	case RNIC_CMD_QUERY_QP:
		if (!fw_qp_owned(h, ctx))
			return RNIC_CMD_ST_BAD_HANDLE;
		return query_qp(h, out);
	case RNIC_CMD_REG_MR:
		return reg_mr(ctx, in, out);
	case RNIC_CMD_DEREG_MR: {
		const struct fw_mr *m = mr_owned(h, ctx);

		if (!m)
			return RNIC_CMD_ST_BAD_HANDLE;
		dereg_mr(h >> RNIC_KEY_TAG_BITS, m);
		return fence() ? RNIC_CMD_ST_INTERNAL : RNIC_CMD_ST_OK;
	}
	case RNIC_CMD_REREG_MR:
		return rereg_mr(ctx, in);
	case RNIC_CMD_CM_CREATE_EVQ:
		return create_cm_evq(ctx, in);
	case RNIC_CMD_CM_CREATE_ID:
	case RNIC_CMD_CM_DESTROY_ID:
	case RNIC_CMD_CM_LISTEN:
	case RNIC_CMD_CM_PDATA:
	case RNIC_CMD_CM_ACCEPT:
	case RNIC_CMD_CM_REJECT:
	case RNIC_CMD_CM_CONNECT:
	case RNIC_CMD_CM_DISCONNECT:
	case RNIC_CMD_CM_ESTABLISH:
		return fw_cm_cmd(ctx, RNIC_CMD_OPCODE_GET(cmd), in, out);
	default:
		return RNIC_CMD_ST_BAD_OPCODE;
	}
}

/* The owner of context ctx is gone: free everything it had, QPs first (they hold PDs, CQs). The
 * tables are scanned only when it owned something: a scan of all of them takes tens of thousands
 * of clocks, during which no command is served. 0 once no kernel touches its memory any more. */
int fw_ctx_reset(uint32_t ctx)
{
	uint16_t *own = fw.owned[ctx];
	uint32_t i, n = own[FW_OWN_PD] + own[FW_OWN_CQ] + own[FW_OWN_SRQ] + own[FW_OWN_QP] + own[FW_OWN_MR];

	for (i = 0; own[FW_OWN_QP] && i < RNIC_MAX_QP; i++)
		if (fw_qp_owned(rnic_qpn(i), ctx))
			destroy_qp(rnic_qpn(i));
	for (i = 0; own[FW_OWN_MR] && i < RNIC_MAX_MPT; i++) {
		const struct fw_mr *m = fw.mr_own[i] == (FW_OWN_USED | ctx) ? fw_mr_load(i) : NULL;

		if (m)
			dereg_mr(i, m);
	}
	for (i = 0; own[FW_OWN_SRQ] && i < RNIC_MAX_SRQ; i++)
		if (fw.srq[i].own == (FW_OWN_USED | ctx))
			destroy_srq(i);
	for (i = 0; own[FW_OWN_CQ] && i < RNIC_MAX_CQ; i++)
		if (fw.cq[i].own == (FW_OWN_USED | ctx))
			destroy_cq(i);
	for (i = 0; own[FW_OWN_PD] && i < RNIC_MAX_PD; i++)
		if (fw.pd[i].own == (FW_OWN_USED | ctx))
			fw.pd[i].own = 0, own[FW_OWN_PD]--;
	destroy_eq(ctx);
	n += fw_cm_ctx_reset(ctx);
	fw.ci[ctx] = 0;
	hal_ctx_set_ci(ctx, 0);
	fw_printf("ctx %u reset: %u resources freed\n", ctx, n);
	return fence();
}

/* Serve one command of context ctx if its producer index moved; 1 if more are waiting. */
int fw_poll_cmdq(uint32_t ctx)
{
	uint32_t ctrl = hal_ctx_rd(ctx, RNIC_CTX_CMDQ_CTRL), pi, mask, st;
	uint64_t cmdq, cmdc;
	uint8_t *buf = hal_dmabuf(), *c = buf + RNIC_CMD_BYTES;

	if (!(ctrl & RNIC_CTX_CMDQ_CTRL_ENABLE_MASK))
		return 0;
	pi = hal_ctx_rd(ctx, RNIC_CTX_CMDQ_PI) & 0xffff;
	if (pi == fw.ci[ctx])
		return 0;
	mask = (1u << RNIC_GET(RNIC_CTX_CMDQ_CTRL_LOG_SIZE, ctrl)) - 1;
	cmdq = ((uint64_t)hal_ctx_rd(ctx, RNIC_CTX_CMDQ_BASE_HI) << 32) | hal_ctx_rd(ctx, RNIC_CTX_CMDQ_BASE_LO);
	cmdc = ((uint64_t)hal_ctx_rd(ctx, RNIC_CTX_CMDC_BASE_HI) << 32) | hal_ctx_rd(ctx, RNIC_CTX_CMDC_BASE_LO);
	if (!bus_ok(ctx, cmdq, (mask + 1ull) * RNIC_CMD_BYTES) || !bus_ok(ctx, cmdc, (mask + 1ull) * RNIC_CMDC_BYTES)) {
		/* rings outside the context's memory: nothing is read or answered there */
		fw_printf("ctx %u: command rings outside its window\n", ctx);
		fw.ci[ctx] = (uint16_t)pi;
		hal_ctx_set_ci(ctx, fw.ci[ctx]);
		return 0;
	}
	memset(c, 0, RNIC_CMDC_BYTES);
	if (hal_dma(ctx, cmdq + (fw.ci[ctx] & mask) * RNIC_CMD_BYTES, 0, RNIC_CMD_BYTES, 0)) {
		/* the host refused the read: what came back is not a command (nor its cookie) */
		memset(buf, 0, RNIC_CMD_BYTES);
		st = RNIC_CMD_ST_DMA_ERROR;
	} else {
		st = fw_cmd(ctx, buf, c + RNIC_CMDC_OUT_OFF);
	}
	if (hal_reset_pending() & (1u << ctx))
		return 0; /* its owner left meanwhile: nobody reads the completion, the reset follows */
	if (st)
		fw_printf("ctx %u cmd %u: status %u\n", ctx, RNIC_CMD_OPCODE_GET(buf), st);
	RNIC_CMDC_COOKIE_SET(c, RNIC_CMD_COOKIE_GET(buf));
	RNIC_CMDC_STATUS_SET(c, st);
	RNIC_CMDC_OPCODE_SET(c, RNIC_CMD_OPCODE_GET(buf));
	RNIC_CMDC_OWNER_SET(c, ((fw.ci[ctx] >> RNIC_GET(RNIC_CTX_CMDQ_CTRL_LOG_SIZE, ctrl)) & 1) ^ 1);
	hal_dma(ctx, cmdc + (fw.ci[ctx] & mask) * RNIC_CMDC_BYTES, RNIC_CMD_BYTES, RNIC_CMDC_BYTES, 1);
	fw.ci[ctx] = (uint16_t)(fw.ci[ctx] + 1);
	hal_ctx_set_ci(ctx, fw.ci[ctx]);
	hal_irq(ctx);
	return fw.ci[ctx] != pi;
}
