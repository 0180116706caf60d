/* The CM fuzzer (test_fw --fuzz-cm N [SEED]; make fuzz runs 10^7 MADs, make test 2 x 10^5, both
 * built with ASan and UBSan): MADs made to be nearly right (the IDs, service IDs and QPNs the
 * firmware has, fields in and just out of range) then mutated, from five peers (one over IPv6),
 * interleaved with CM commands from three contexts (private data of every length in every state),
 * ARP floods that evict the neighbour cache, and time passing in steps from microseconds to
 * minutes, so that every retransmission and timeout runs. After each step the invariants of the
 * CM's security hold: each context can still make its reserved IDs, no listener holds more than
 * its backlog, no request waits past the 70 s give-up, no ID is of a context never seen. */
#include <stdio.h>
#include <string.h>

#include "cm.h"
#include "fw.h"
#include "hal.h"
#include "rnic_frame.h"
#include "fake_hal.h"
#include "fuzz_cm.h"

static uint64_t rng;

static uint64_t rnd(void)
{
	return xorshift64(&rng);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

static uint64_t findings;
#define FINDING(...)                                                                                \
	do {                                                                                       \
		if (findings++ < 10)                                                               \
			printf("FINDING: " __VA_ARGS__);                                           \
	} while (0)

/* the peers: four on the link, one over IPv6 */
static struct cm_peer peers[5];

static void peers_make(void)
{
	for (uint32_t i = 0; i < 5; i++) {
		struct cm_peer *p = &peers[i];

		memset(p, 0, sizeof(*p));
		p->mac[0] = 2;
		p->mac[5] = (uint8_t)(0x10 + i);
		p->ip = 0x0a630010 + i;
		p->qpn = RNIC_GSI_QPN;
		if (i == 4) {
			p->v6 = 1;
			p->ip6[0] = 0xfe;
			p->ip6[1] = 0x80;
			p->ip6[15] = 0x14;
		}
	}
}

static const uint64_t sids[] = {0x01061c06, 0x01061c07, 0x01111c06, 0x013f0005, 0x01060050};

/* a value for a 32-bit ID field: a live CM ID's, a near miss, or anything */
static uint32_t some_id(void)
{
	const struct fw_cm *c = &fw.cm[below(FW_CM_IDS)];

	switch (below(4)) {
	case 0:
	case 1:
		return c->local_id;
	case 2:
		return c->remote_id;
	default:
		return (uint32_t)rnd();
	}
}

/* A MAD of the CM class: a REQ, REP, RTU, REJ, DREQ, DREP, SIDR_REQ, SIDR_REP, MRA, or a Get,
 * its fields nearly right, then a few bytes changed */
static void mad_make(uint8_t *m)
{
	static const uint16_t attrs[] = {CM_ATTR_REQ, CM_ATTR_REP, CM_ATTR_RTU, CM_ATTR_REJ, CM_ATTR_DREQ,
					 CM_ATTR_DREP, CM_ATTR_SIDR_REQ, CM_ATTR_SIDR_REP, CM_ATTR_MRA,
					 CM_ATTR_CLASS_PORT_INFO};
	uint16_t attr = attrs[below(sizeof(attrs) / sizeof(attrs[0]))];
	uint32_t i;

	for (i = 0; i < CM_MAD_LEN; i += 8)
		rnic_wr_le(m + i, 8, below(4) ? 0 : rnd());
	m[CM_MAD_BASE_VERSION] = 1;
	m[CM_MAD_CLASS] = CM_CLASS;
	m[CM_MAD_CLASS_VERSION] = CM_CLASS_VERSION;
	m[CM_MAD_METHOD] = attr == CM_ATTR_CLASS_PORT_INFO ? CM_METHOD_GET : CM_METHOD_SEND;
	rnic_put_be16(m + CM_MAD_ATTR_ID, attr);
	rnic_put_be32(m + CM_MAD_DATA, some_id());
	rnic_put_be32(m + CM_MAD_DATA + 4, some_id());
	if (attr == CM_ATTR_REQ || attr == CM_ATTR_SIDR_REQ) {
		uint64_t sid = sids[below(5)];

		rnic_put_be32(m + CM_REQ_SERVICE_ID, (uint32_t)(sid >> 32));
		rnic_put_be32(m + CM_REQ_SERVICE_ID + 4, (uint32_t)sid);
		if (attr == CM_ATTR_REQ) {
			m[CM_REQ_RESP_TIMEOUT] = (uint8_t)(below(32) << 3 | (below(8) ? 0 : below(8)));
			m[CM_REQ_START_PSN + 3] = (uint8_t)rnd();
			m[CM_REQ_MTU] = (uint8_t)(below(7) << 4 | below(8));
			m[CM_REQ_MAX_RETRIES] = (uint8_t)(below(16) << 4);
		} else {
			memmove(m + CM_SIDR_REQ_SERVICE_ID, m + CM_REQ_SERVICE_ID, 8);
		}
	}
	for (i = below(4); i; i--)
		m[below(CM_MAD_LEN)] = (uint8_t)rnd();
}

static uint8_t cmd[RNIC_CMD_BYTES], out[RNIC_CMDC_OUT_LEN];

static uint32_t run(uint32_t ctx, uint32_t op)
{
	RNIC_CMD_OPCODE_SET(cmd, op);
	return fw_cmd(ctx, cmd, out);
}

static uint8_t *in(void)
{
	memset(cmd, 0, sizeof(cmd));
	return cmd + RNIC_CMD_PAYLOAD_OFF;
}

/* QPs the contexts made: an RC and a UD one each, moved to INIT, and again after the CM used it */
static uint32_t qpn_of[4][2];

static void qp_init(uint32_t ctx, uint32_t t)
{
	uint8_t *p;
	uint32_t s;

	for (s = 0; s < 2; s++) {
		p = in();
		RNIC_CMDI_MODIFY_QP_QPN_SET(p, qpn_of[ctx][t]);
		RNIC_CMDI_MODIFY_QP_ATTR_MASK_SET(p, RNIC_QP_ATTR_STATE | (s ? RNIC_QP_ATTR_PKEY_INDEX | RNIC_QP_ATTR_PORT |
									 (t ? RNIC_QP_ATTR_QKEY : RNIC_QP_ATTR_ACCESS_FLAGS) : 0));
		RNIC_CMDI_MODIFY_QP_NEW_STATE_SET(p, s ? RNIC_QPS_INIT : RNIC_QPS_RESET);
		RNIC_CMDI_MODIFY_QP_PORT_SET(p, 1);
		run(ctx, RNIC_CMD_MODIFY_QP);
	}
}

static void contexts_make(void)
{
	for (uint32_t ctx = 1; ctx <= 3; ctx++) {
		uint32_t pd, cq, t;
		uint8_t *p = in();

		RNIC_CMDI_CM_CREATE_EVQ_BASE_SET(p, ((ctx + 1ull) << RNIC_LINK_BUS_CTX_SHIFT) | 0x10000);
		RNIC_CMDI_CM_CREATE_EVQ_LOG_SIZE_SET(p, 4);
		run(ctx, RNIC_CMD_CM_CREATE_EVQ);
		run(ctx, RNIC_CMD_ALLOC_PD);
		pd = RNIC_CMDO_HANDLE_HANDLE_GET(out);
		p = in();
		RNIC_CMDI_CREATE_CQ_BASE_SET(p, ((ctx + 1ull) << RNIC_LINK_BUS_CTX_SHIFT) | 0x20000);
		RNIC_CMDI_CREATE_CQ_LOG_SIZE_SET(p, 4);
		run(ctx, RNIC_CMD_CREATE_CQ);
		cq = RNIC_CMDO_HANDLE_HANDLE_GET(out);
		for (t = 0; t < 2; t++) {
			p = in();
			RNIC_CMDI_CREATE_QP_PDN_SET(p, pd);
			RNIC_CMDI_CREATE_QP_TYPE_SET(p, t ? RNIC_QPT_UD : RNIC_QPT_RC);
			RNIC_CMDI_CREATE_QP_SQ_LOG_SET(p, 4);
			RNIC_CMDI_CREATE_QP_RQ_LOG_SET(p, 4);
			RNIC_CMDI_CREATE_QP_SQ_BASE_SET(p, ((ctx + 1ull) << RNIC_LINK_BUS_CTX_SHIFT) | 0x30000);
			RNIC_CMDI_CREATE_QP_RQ_BASE_SET(p, ((ctx + 1ull) << RNIC_LINK_BUS_CTX_SHIFT) | 0x40000);
			RNIC_CMDI_CREATE_QP_SEND_CQN_SET(p, cq);
			RNIC_CMDI_CREATE_QP_RECV_CQN_SET(p, cq);
			run(ctx, RNIC_CMD_CREATE_QP);
			qpn_of[ctx][t] = RNIC_CMDO_HANDLE_HANDLE_GET(out);
			qp_init(ctx, t);
		}
	}
}

/* a CM ID of ctx, most often one it has */
static uint32_t id_of(uint32_t ctx)
{
	uint32_t i, n = 0, mine[FW_CM_IDS];

	for (i = 0; i < FW_CM_IDS; i++)
		if (fw.cm[i].used && fw.cm[i].ctx == ctx)
			mine[n++] = i;
	return n && below(8) ? mine[below(n)] : below(FW_CM_IDS + 2);
}

/* One CM command of a context, its arguments nearly right */
static void command(void)
{
	static const uint32_t ops[] = {RNIC_CMD_CM_CREATE_ID, RNIC_CMD_CM_DESTROY_ID, RNIC_CMD_CM_LISTEN,
				       RNIC_CMD_CM_PDATA, RNIC_CMD_CM_ACCEPT, RNIC_CMD_CM_REJECT,
				       RNIC_CMD_CM_CONNECT, RNIC_CMD_CM_DISCONNECT, RNIC_CMD_CM_ESTABLISH};
	uint32_t ctx = 1 + below(3), op = ops[below(sizeof(ops) / sizeof(ops[0]))], k;
	uint8_t *p;
	const struct cm_peer *peer = &peers[below(5)];

	if (!below(10)) {
		qp_init(ctx, below(2));
		return;
	}
	p = in();
	rnic_wr_le(p, 4, id_of(ctx));
	switch (op) {
	case RNIC_CMD_CM_LISTEN:
		RNIC_CMDI_CM_LISTEN_SERVICE_ID_SET(p, sids[below(5)]);
		RNIC_CMDI_CM_LISTEN_QP_TYPE_SET(p, below(3) == 0 ? 0 : below(2) ? RNIC_QPT_RC : RNIC_QPT_UD);
		break;
	case RNIC_CMD_CM_PDATA:
		RNIC_CMDI_CM_PDATA_OFFSET_SET(p, below(2) ? 0 : below(256));
		RNIC_CMDI_CM_PDATA_LEN_SET(p, below(RNIC_CMDI_CM_PDATA_DATA_LEN + 2));
		RNIC_CMDI_CM_PDATA_TOTAL_SET(p, below(256));
		for (k = 0; k < RNIC_CMDI_CM_PDATA_DATA_LEN; k++)
			p[RNIC_CMDI_CM_PDATA_DATA_OFF + k] = (uint8_t)rnd();
		break;
	case RNIC_CMD_CM_ACCEPT:
	case RNIC_CMD_CM_CONNECT:
		/* the peer answers ARP (the fake HAL's), or not (IPv6: nobody answers) */
		arp_replies_to_send = peer->v6 ? 0 : peer->ip;
		memcpy(arp_peer, peer->mac, 6);
		RNIC_CMDI_CM_ACCEPT_QPN_SET(p, below(8) ? qpn_of[ctx][below(2)] : (uint32_t)rnd());
		if (op == RNIC_CMD_CM_ACCEPT) {
			RNIC_CMDI_CM_ACCEPT_RESP_RES_SET(p, below(3));
			RNIC_CMDI_CM_ACCEPT_INIT_DEPTH_SET(p, below(3));
			RNIC_CMDI_CM_ACCEPT_RNR_RETRY_SET(p, below(9));
			break;
		}
		RNIC_CMDI_CM_CONNECT_SERVICE_ID_SET(p, sids[below(5)]);
		if (peer->v6) {
			memcpy(p + RNIC_CMDI_CM_CONNECT_DGID_OFF, peer->ip6, 16);
		} else {
			p[RNIC_CMDI_CM_CONNECT_DGID_OFF + 10] = p[RNIC_CMDI_CM_CONNECT_DGID_OFF + 11] = 0xff;
			rnic_put_be32(p + RNIC_CMDI_CM_CONNECT_DGID_OFF + 12, peer->ip);
		}
		RNIC_CMDI_CM_CONNECT_RESP_TIMEOUT_SET(p, below(33));
		RNIC_CMDI_CM_CONNECT_MAX_RETRIES_SET(p, below(17));
		RNIC_CMDI_CM_CONNECT_PATH_MTU_SET(p, below(7));
		RNIC_CMDI_CM_CONNECT_RETRY_CNT_SET(p, below(8));
		RNIC_CMDI_CM_CONNECT_EXTERNAL_SET(p, !below(4));
		break;
	case RNIC_CMD_CM_REJECT:
		RNIC_CMDI_CM_REJECT_REASON_SET(p, 28);
		break;
	default:
		break;
	}
	run(ctx, op);
}

/* An ARP request for our address from a host of the link: the neighbour cache learns it, and 16
 * of them evict every peer the firmware had resolved */
static void arp_from(uint32_t ip)
{
	uint8_t f[42] = {0};

	memset(f, 0xff, 6);
	f[6] = 2;
	f[11] = (uint8_t)ip;
	f[12] = 0x08;
	f[13] = 0x06;
	f[15] = 1;
	f[16] = 8;
	f[18] = 6;
	f[19] = 4;
	f[21] = 1;
	memcpy(f + 22, f + 6, 6);
	rnic_put_be32(f + 28, ip);
	rnic_put_be32(f + 38, fw.ip);
	fw_arp_input(f, sizeof(f));
}

/* what must hold after every step */
static void invariants(void)
{
	uint32_t i, n[RNIC_NUM_CTX] = {0}, held[FW_CM_IDS] = {0};

	for (i = 0; i < FW_CM_IDS; i++) {
		const struct fw_cm *c = &fw.cm[i];

		if (!c->used)
			continue;
		n[c->ctx]++;
		if (c->ctx < 1 || c->ctx > 3)
			FINDING("CM ID %u of context %u, which never asked for one\n", i, c->ctx);
		if ((c->state == CM_ST_REQ_RCVD || c->state == CM_ST_SIDR_RCVD || c->state == CM_ST_REP_SENT) &&
		    c->listen < FW_CM_IDS)
			held[c->listen]++;
		if ((c->state == CM_ST_REP_SENT || c->state == CM_ST_REQ_SENT || c->state == CM_ST_SIDR_SENT ||
		     c->state == CM_ST_DREQ_SENT) && (int64_t)(now - c->give_up) > 0)
			FINDING("CM ID %u still waits for an answer %llu clocks past its give-up time\n", i,
				(unsigned long long)(now - c->give_up));
		if (c->pdata_len > CM_PDATA_MAX)
			FINDING("CM ID %u holds %u bytes of private data\n", i, c->pdata_len);
	}
	for (i = 0; i < FW_CM_IDS; i++)
		if (held[i] > CM_BACKLOG && fw.cm[i].used && fw.cm[i].state == CM_ST_LISTEN)
			FINDING("listener %u holds %u requests\n", i, held[i]);
	/* context 4 makes none: its reserve must be there whatever the others did */
	if (cm_id_alloc(4) < 0) {
		FINDING("context 4 cannot make a CM ID (%u, %u, %u of the others)\n", n[1], n[2], n[3]);
	} else {
		for (i = 0; i < FW_CM_IDS; i++)
			if (fw.cm[i].used && fw.cm[i].ctx == 4)
				fw.cm[i].used = 0;
	}
}

int fuzz_cm(uint64_t n, uint64_t seed)
{
	uint8_t m[CM_MAD_LEN];
	uint64_t i, waited = 0;

	rng = seed | 1;
	fw.dma_window = RNIC_LINK_BUS_CTX_SHIFT;
	peers_make();
	contexts_make();
	for (i = 0; i < n; i++) {
		uint32_t r = below(100);

		if (r < 80) {
			mad_make(m);
			fw_cm_input(&peers[below(5)], m);
		} else if (r < 95) {
			command();
		} else if (r < 97) {
			for (uint32_t k = 0; k < 16; k++)
				arp_from(0x0a630100 + below(200));
		} else {
			/* time: a few microseconds, a CM response timeout, or past every give-up */
			uint64_t t = below(4) ? below(5000) : below(8) ? 1024ull << below(24) : CM_GIVE_UP_CYCLES;

			now += t;
			waited += t;
		}
		fw_cm_poll();
		if (i % 64 == 0)
			invariants();
	}
	invariants();
	printf("fuzz_cm: %llu steps, %.1f s of simulated time; QP1 rx %u tx %u dup %u rate_limited %u: "
	       "%llu findings\n", (unsigned long long)n, (double)waited / (RNIC_CLOCK_MHZ * 1e6), fw.gsi.rx, fw.gsi.tx,
	       fw.gsi.dup, fw.gsi.rate_limited, (unsigned long long)findings);
	return findings != 0;
}
