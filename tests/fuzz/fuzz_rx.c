/* Fuzzer of the RX kernel (make fuzz): RoCEv2 frames built from the opcodes the kernel serves,
 * with headers, keys, addresses, lengths and PSNs drawn from valid and invalid values, then often
 * mutated byte by byte; lengths, checksums and the ICRC are made right most of the time so that
 * the frames reach the transport logic. The kernel runs cycle by cycle (built with ASan and
 * UBSan); every DMA write and read it makes must lie inside memory the tables grant at that
 * moment: the pages of a valid memory region, or a receive ring. Regions are deregistered and
 * registered again with a new tag between frames, so stale keys and cut-off messages are tried.
 *
 *     fuzz_rx FRAMES [SEED]     prints frames/s and the findings; exit 1 on any
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rx.h"
#include "rnic_icrc_seed.h"

#define NMR 4
#define MR_PAGES 4
#define MR_BUS(i) (0x10000000ull * (uint64_t)(i))  /* MR i (1..NMR): its pages' bus addresses */
#define MR_VA(i) (0x100000ull * (uint64_t)(i))
#define RQ_BUS(q) (0x90000000ull + 0x10000ull * (uint64_t)(q))
#define RQ_LOG 4
#define NQP 6 /* QP entries 2..5 (their numbers rnic_qpn(entry)) */

static rnic_rx_state_t st;
static rnic_rx_in_t in;
static rnic_rx_out_t out;
static uint64_t rng = 0x9e3779b97f4a7c15ull, steps, findings;
static uint32_t tag[NMR + 1], valid[NMR + 1];
static const uint32_t mr_access[NMR + 1] = {
	0, 0xf, RNIC_ACCESS_LOCAL_WRITE, RNIC_ACCESS_REMOTE_READ,
	RNIC_ACCESS_LOCAL_WRITE | RNIC_ACCESS_REMOTE_WRITE | RNIC_ACCESS_REMOTE_ATOMIC,
};
static const uint8_t nic_mac[6] = {2, 0, 0, 0, 0, 0x31}, peer_mac[6] = {2, 0, 0, 0, 0, 0x99};
static const uint32_t nic_ip = 0x0a00001f, peer_ip = 0x0a000063;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static uint32_t pick(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

/* CRC-32 state after n bytes, bit by bit: the frames' ICRC, apart from the kernel's own */
static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, uint32_t n)
{
	uint32_t i, k;

	for (i = 0; i < n; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = crc >> 1 ^ (crc & 1 ? 0xEDB88320u : 0);
	}
	return crc;
}

static void step(void)
{
	in.cycle = steps++;
	rnic_rx_step(&st, &in, &out);
	in.cfg_valid = 0;
	in.db_valid = 0;
	in.rdx_valid = 0;
}

static void cfg(uint32_t table, uint32_t index, uint32_t word, uint32_t data)
{
	in.cfg_valid = 1;
	in.cfg_addr = (table << RNIC_CFG_TABLE_SHIFT) | (index << RNIC_CFG_INDEX_SHIFT) | (word << RNIC_CFG_WORD_SHIFT);
	in.cfg_data = data;
	step();
}

static uint32_t key(uint32_t i)
{
	return (i << RNIC_KEY_TAG_BITS) | tag[i];
}

/* MR i valid (with a new tag) or not; its pages are MTT entries 8*i .. */
static void mr_set(uint32_t i, uint32_t on)
{
	uint32_t w[RNIC_MPT_WORDS] = {0}, k;

	valid[i] = on;
	tag[i] = (tag[i] + 0x1234567u) & ((1u << RNIC_KEY_TAG_BITS) - 1);
	w[0] = on | (mr_access[i] << 4) | (tag[i] << 8);
	w[RNIC_MPT_PDN / 4] = 1;
	w[RNIC_MPT_VA_LO / 4] = (uint32_t)MR_VA(i);
	w[RNIC_MPT_LEN_LO / 4] = MR_PAGES * 4096;
	w[RNIC_MPT_MTT_BASE / 4] = 8 * i;
	w[RNIC_MPT_PAGE / 4] = 12;
	for (k = 1; k < RNIC_MPT_WORDS; k++)
		cfg(RNIC_CFG_TBL_MPT, i, k, w[k]);
	cfg(RNIC_CFG_TBL_MPT, i, 0, w[0]);
}

static void setup(void)
{
	uint32_t q, i, p, w[RNIC_QPC_WORDS];

	in.rst = 1;
	step();
	in.rst = 0;
	for (i = 0; i < RNIC_SWEPT; i++) /* the kernel clears its tables first */
		step();
	in.wr_ready = in.ack_ready = in.rsp_ready = in.fw_ready = in.cpl_ready = in.rdreq_ready = 1;
	cfg(RNIC_CFG_TBL_PORT, 0, RNIC_PORTC_MAC_LO / 4, rnic_be32(nic_mac + 2));
	cfg(RNIC_CFG_TBL_PORT, 0, RNIC_PORTC_MAC_HI / 4, rnic_be16(nic_mac));
	cfg(RNIC_CFG_TBL_PORT, 0, RNIC_PORTC_IPV4 / 4, nic_ip);
	for (i = 1; i <= NMR; i++) {
		for (p = 0; p < MR_PAGES; p++) {
			cfg(RNIC_CFG_TBL_MTT, 8 * i + p, 0, (uint32_t)(MR_BUS(i) + 4096 * p));
			cfg(RNIC_CFG_TBL_MTT, 8 * i + p, 1, (uint32_t)((MR_BUS(i) + 4096 * p) >> 32));
		}
		mr_set(i, 1);
	}
	/* QP 2 RC with every right, 3 UC, 4 UD, 5 RC with none */
	for (q = 2; q < NQP; q++) {
		uint32_t type = q == 3 ? RNIC_QPT_UC : q == 4 ? RNIC_QPT_UD : RNIC_QPT_RC;

		memset(w, 0, sizeof(w));
		w[0] = 1 | (RNIC_QPS_RTS << 1) | (type << 4) | (RNIC_MTU_1024 << 16);
		w[RNIC_QPC_PDN / 4] = 1;
		w[RNIC_QPC_RQ_BASE_LO / 4] = (uint32_t)RQ_BUS(q);
		w[RNIC_QPC_RQ_BASE_HI / 4] = (uint32_t)(RQ_BUS(q) >> 32);
		w[RNIC_QPC_RING_LOG / 4] = (RQ_LOG << 8) | RQ_LOG;
		w[RNIC_QPC_CQN / 4] = 1 | (1 << 16);
		w[RNIC_QPC_DEST_QPN / 4] = 0x77;
		w[RNIC_QPC_RQ_PSN / 4] = 100;
		w[RNIC_QPC_DIP / 4] = peer_ip;
		w[RNIC_QPC_ACCESS / 4] = q == 5 ? 0 : 0xe;
		w[RNIC_QPC_QKEY / 4] = 0x1111;
		w[RNIC_QPC_RETRY / 4] = (8u << 24) | (8u << 28);
		for (i = 1; i < RNIC_QPC_WORDS; i++)
			cfg(RNIC_CFG_TBL_QPC, q, i, w[i]);
		cfg(RNIC_CFG_TBL_QPC, q, 0, w[0]);
	}
}

static int in_mr(uint64_t a, uint32_t n)
{
	uint32_t i;

	for (i = 1; i <= NMR; i++)
		if (valid[i] && a >= MR_BUS(i) && a + n <= MR_BUS(i) + MR_PAGES * 4096)
			return 1;
	return 0;
}

static int in_rq(uint64_t a, uint32_t n)
{
	uint32_t q;

	for (q = 2; q < NQP; q++)
		if (a >= RQ_BUS(q) && a + n <= RQ_BUS(q) + (RNIC_RWQE_BYTES << RQ_LOG))
			return 1;
	return 0;
}

static void finding(const char *what, uint64_t a, uint32_t n)
{
	if (findings++ < 10)
		fprintf(stderr, "FINDING after %llu steps: %s at 0x%llx, %u bytes\n", (unsigned long long)steps, what,
			(unsigned long long)a, n);
}

/* A receive WQE, or an atomic operand: what host memory holds for a DMA read. */
static void answer_read(uint64_t a, uint8_t *d)
{
	uint32_t k, n = 1 + pick(3);

	for (k = 0; k < RNIC_BEAT; k++)
		d[k] = (uint8_t)rnd();
	if (!in_rq(a, 1))
		return;
	RNIC_RWQE_NUM_SGE_SET(d, pick(8) ? n : pick(16));
	for (k = 0; k < n && k < RNIC_MAX_RECV_SGE; k++) {
		uint8_t *s = d + RNIC_RWQE_SGE_OFF + k * RNIC_SGE_SIZE;
		uint32_t m = 1 + pick(NMR);

		RNIC_SGE_ADDR_SET(s, MR_VA(m) + pick(MR_PAGES * 4096));
		RNIC_SGE_LEN_SET(s, pick(4) ? pick(MR_PAGES * 4096) : (uint32_t)rnd());
		RNIC_SGE_LKEY_SET(s, pick(8) ? key(m) : (uint32_t)rnd());
	}
}

/* One clock with the checks: a DMA write beat or read request outside what is granted is a
 * finding; reads (up to RX_RD_FIFO in flight) are answered in order, one per clock. */
static uint64_t rd_addr[RX_RD_FIFO];
static uint32_t rd_head, rd_tail;

static void clock_checked(void)
{
	static uint8_t data[RNIC_BEAT];

	if (rd_head != rd_tail && out.rd_ready) {
		answer_read(rd_addr[rd_head++ % RX_RD_FIFO], data);
		memcpy(in.rd_data, data, RNIC_BEAT);
		in.rd_valid = 1;
		in.rd_last = 1;
	}
	step();
	in.rd_valid = 0;
	if (out.wr_valid && !in_mr(out.wr_addr, out.wr_len))
		finding("DMA write outside every valid region", out.wr_addr, out.wr_len);
	if (out.rdreq_valid) {
		if (!in_mr(out.rdreq_addr, out.rdreq_len) && !in_rq(out.rdreq_addr, out.rdreq_len))
			finding("DMA read outside every valid region and ring", out.rdreq_addr, out.rdreq_len);
		rd_addr[rd_tail++ % RX_RD_FIFO] = out.rdreq_addr;
	}
}

static const uint8_t opcodes[] = {
	RNIC_BTH_OP_SEND_FIRST, RNIC_BTH_OP_SEND_MIDDLE, RNIC_BTH_OP_SEND_LAST, RNIC_BTH_OP_SEND_LAST_IMM,
	RNIC_BTH_OP_SEND_ONLY, RNIC_BTH_OP_SEND_ONLY_IMM, RNIC_BTH_OP_WRITE_FIRST, RNIC_BTH_OP_WRITE_MIDDLE,
	RNIC_BTH_OP_WRITE_LAST, RNIC_BTH_OP_WRITE_LAST_IMM, RNIC_BTH_OP_WRITE_ONLY, RNIC_BTH_OP_WRITE_ONLY_IMM,
	RNIC_BTH_OP_READ_REQ, RNIC_BTH_OP_READ_RESP_FIRST, RNIC_BTH_OP_READ_RESP_MIDDLE, RNIC_BTH_OP_READ_RESP_LAST,
	RNIC_BTH_OP_READ_RESP_ONLY, RNIC_BTH_OP_ACK, RNIC_BTH_OP_ATOMIC_ACK, RNIC_BTH_OP_CMP_SWAP,
	RNIC_BTH_OP_FETCH_ADD, RNIC_BTH_OP_UD_SEND_ONLY, RNIC_BTH_OP_UD_SEND_ONLY_IMM,
};

static uint32_t build(uint8_t *f)
{
	uint32_t op = opcodes[pick(sizeof(opcodes))], q = 2 + pick(NQP - 2), m = 1 + pick(NMR);
	uint32_t pay = pick(4) ? pick(1100) & ~3u : pick(4200), len, x = RNIC_XTH_OFF, i, crc, b;
	static uint32_t psn = 100;

	if (!pick(16))
		q = pick(300);
	if (q == 3 && op <= RNIC_BTH_OP_WRITE_ONLY_IMM)
		op |= RNIC_BTH_UC_BIT;
	psn = pick(4) ? psn + 1 : (uint32_t)rnd();
	memcpy(f, nic_mac, 6);
	memcpy(f + 6, peer_mac, 6);
	rnic_put_be16(f + 12, RNIC_ETHERTYPE_IPV4);
	f[14] = 0x45;
	f[15] = 0;
	rnic_put_be32(f + 18, 0x4000);
	f[22] = 64;
	f[23] = RNIC_IPPROTO_UDP;
	rnic_put_be32(f + 26, pick(16) ? peer_ip : (uint32_t)rnd());
	rnic_put_be32(f + 30, nic_ip);
	rnic_put_be16(f + RNIC_UDP_OFF, 0xc000);
	rnic_put_be16(f + RNIC_UDP_OFF + 2, RNIC_ROCE_UDP_PORT);
	rnic_put_be16(f + RNIC_UDP_OFF + 6, 0);
	f[RNIC_BTH_OFF] = (uint8_t)op;
	f[RNIC_BTH_OFF + 1] = (uint8_t)(((4 - (pay & 3)) & 3) << RNIC_BTH_PAD_SHIFT);
	rnic_put_be16(f + RNIC_BTH_OFF + 2, 0xffff);
	f[RNIC_BTH_OFF + 4] = 0;
	rnic_put_be24(f + RNIC_BTH_OFF + 5, rnic_qpn(q));
	f[RNIC_BTH_OFF + 8] = RNIC_BTH_ACKREQ;
	rnic_put_be24(f + RNIC_BTH_OFF + 9, psn & RNIC_PSN_MASK);
	/* extension headers: RETH/AtomicETH with a key and address in or near a region */
	for (i = 0; i < 40; i++)
		f[x + i] = (uint8_t)rnd();
	rnic_put_be64(f + x, MR_VA(m) + (pick(4) ? pick(MR_PAGES * 4096) : rnd() & 0xffffff));
	rnic_put_be32(f + x + 8, pick(8) ? key(m) : (uint32_t)rnd());
	rnic_put_be32(f + x + 12, pick(4) ? pick(MR_PAGES * 4096 + 64) : (uint32_t)rnd());
	if (op >= RNIC_BTH_OP_UD_SEND_ONLY)
		rnic_put_be32(f + x, pick(8) ? 0x1111 : (uint32_t)rnd());
	x += pick(8) ? 16 : pick(29);
	for (i = 0; i < pay && x + i < 4200; i++)
		f[x + i] = (uint8_t)i;
	len = x + pay + ((4 - (pay & 3)) & 3) + RNIC_ICRC_LEN;
	if (len > 4200)
		len = 4200;
	rnic_put_be16(f + 16, len - RNIC_ETH_HLEN);
	rnic_put_be16(f + RNIC_UDP_OFF + 4, len - RNIC_UDP_OFF);
	rnic_put_be16(f + 24, 0);
	rnic_put_be16(f + 24, rnic_ipv4_csum(f + RNIC_IP_OFF));
	/* byte mutations: some before the ICRC (they reach the logic), a few after (dropped) */
	for (i = pick(3) ? 0 : 1 + pick(8); i; i--)
		f[pick(len)] = (uint8_t)rnd();
	for (b = 0, crc = RNIC_ICRC_SEED; b * RNIC_BEAT < len - RNIC_ICRC_LEN; b++) {
		uint32_t n = len - RNIC_ICRC_LEN - b * RNIC_BEAT;
		uint8_t m[RNIC_BEAT];

		rnic_icrc_mask(m, f + b * RNIC_BEAT, (int)b, 0);
		crc = crc_bytes(crc, m, n > RNIC_BEAT ? RNIC_BEAT : n);
	}
	rnic_wr_le(f + len - RNIC_ICRC_LEN, 4, ~crc);
	if (!pick(32))
		f[pick(len)] ^= (uint8_t)(1 + pick(255));
	if (!pick(32))
		len = RNIC_ETH_HLEN + pick(len - RNIC_ETH_HLEN);
	return len;
}

int main(int argc, char **argv)
{
	static uint8_t f[4200 + RNIC_BEAT];
	uint64_t frames = argc > 1 ? strtoull(argv[1], NULL, 0) : 100000, n;
	struct timespec t0, t1;
	double wall;
	uint32_t i, off, q;

	if (argc > 2)
		rng = strtoull(argv[2], NULL, 0) | 1;
	setup();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (n = 0; n < frames; n++) {
		uint32_t len = build(f);

		if (!pick(64)) {
			/* a region goes away or comes back between two frames (deregistration, reuse) */
			i = 1 + pick(NMR);
			mr_set(i, !valid[i] || !pick(2));
		}
		if (!pick(4)) {
			in.db_valid = 1;
			q = 2 + pick(NQP - 2);
			in.db_qpn = (uint16_t)rnic_qpn(q);
			in.db_pi = (uint16_t)(st.core.rw_got[q] + pick(1u << RQ_LOG));
			in.db_ctx = 0;
		}
		for (off = 0; off < len; off += RNIC_BEAT) {
			in.eth_valid = 1;
			memcpy(in.eth_data, f + off, RNIC_BEAT);
			in.eth_keep = len - off >= RNIC_BEAT ? ~0ull : (1ull << (len - off)) - 1;
			in.eth_last = off + RNIC_BEAT >= len;
			clock_checked();
		}
		in.eth_valid = 0;
		for (i = 0; i < 20000 && (st.core.busy || st.core.cur_on || st.ctx.head != st.ctx.tail || rnic_rx_frameq_count(&st.frameq) || i < 8 /* the ICRC check */ || rd_head != rd_tail || out.wr_valid); i++)
			clock_checked();
		if (i == 20000)
			finding("RX never idle again", 0, 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("fuzz_rx: %llu frames, %llu clocks in %.1f s (%.0f frames/s): %llu findings; RoCE %u, ICRC drops %u, "
	       "malformed %u, source drops %u, NAKs (access) %u, messages cut %u\n",
	       (unsigned long long)frames, (unsigned long long)steps, wall, (double)frames / wall,
	       (unsigned long long)findings, out.stat_roce, out.stat_drop_icrc, out.stat_drop_malformed,
	       out.stat_drop_src, out.stat_nak_access, out.stat_cut);
	return findings != 0;
}
