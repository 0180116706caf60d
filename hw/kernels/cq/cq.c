/* CQ kernel: completion queues.
 *
 * Per clock (contract: docs/ARCHITECTURE.md) it takes at most one completion request (from the
 * TX or RX kernel, round-robin) and writes its CQE as one 64-byte DMA beat; the OWNER byte is the
 * pass parity (1 on the first pass through the ring), so the host sees a CQE as new when OWNER
 * differs from the previous pass. A completion that would overwrite an unconsumed CQE (consumer
 * index from CQ doorbells) is dropped and counted. An armed CQ gets an EQE in its context's event
 * queue after the CQE and an MSI-X message (vector = CQC.VECTOR) after the EQE's write. Arming a CQ that holds CQEs past
 * the doorbell's consumer index raises the event at once: the host polled before those CQEs
 * reached its memory, and no later CQE may come to wake it.
 */
#include "cq.h"

#define CQC_F(st, n, reg, f) RNIC_GET(RNIC_CQC_##reg##_##f, (st)->cqc[n][RNIC_CQC_##reg / 4])
#define CQC_BASE(st, n) (((uint64_t)(st)->cqc[n][RNIC_CQC_BASE_HI / 4] << 32) | (st)->cqc[n][RNIC_CQC_BASE_LO / 4])

/* Configuration writes. A CQC entry changes at once when its word 0 is written (the other words
 * wait in `stage`): a CQ resized while completions arrive never has a new base with an old size.
 * A fence waits for the CQE or EQE beat presented when it came. */
static void cfg(rnic_cq_state_t *st, uint32_t addr, uint32_t data)
{
	uint32_t tbl = RNIC_CFG_TBL(addr), idx = RNIC_CFG_IDX(addr), word = RNIC_CFG_WORD(addr), i;

	if (tbl == RNIC_CFG_TBL_CQC && idx < RNIC_MAX_CQ && word < RNIC_CQC_WORDS) {
		st->stage[word] = data;
		if (word)
			return;
		for (i = 0; i < RNIC_CQC_WORDS; i++)
			st->cqc[idx][i] = st->stage[i];
		if (!RNIC_GET(RNIC_CQC_CTRL_KEEP, data))
			st->cq[idx] = (cq_run_t){0};
	} else if (tbl == RNIC_CFG_TBL_FENCE) {
		st->fence_token = (uint8_t)data;
		st->fence_pending = 1;
		st->fence_hold = st->o.wr_valid;
	} else if (tbl == RNIC_CFG_TBL_EQC && idx < RNIC_NUM_CTX && word < RNIC_EQC_WORDS) {
		st->eqc[idx][word] = data;
		if (!word)
			st->eq_pi[idx] = 0;
	}
}

/* A completion event of CQ n (it was armed): its EQE, then MSI-X, once the EQE slot is free. */
static void comp_eqe(rnic_cq_state_t *st, uint32_t n)
{
	st->eqe_pending = 1;
	st->eqe_type = RNIC_EQE_TYPE_COMP;
	st->eqe_data = n;
	st->eqe_ctx = (uint8_t)(CQC_F(st, n, CTRL, CTX) % RNIC_NUM_CTX);
	st->eqe_vec = (uint8_t)st->cqc[n][RNIC_CQC_VECTOR / 4];
}

static void write_cqe(rnic_cq_state_t *st, const rnic_cpl_t *c, uint64_t cycle)
{
	uint32_t n = c->cqn, log, i;
	uint8_t *e = st->o.wr_data;
	cq_run_t *q;

	if (n >= RNIC_MAX_CQ || !CQC_F(st, n, CTRL, VALID))
		return;
	q = &st->cq[n];
	log = CQC_F(st, n, CTRL, LOG_SIZE);
	if (q->pi - q->ci >= (1u << log)) {
		st->o.stat_overflow++;
		return;
	}
	for (i = 0; i < RNIC_BEAT; i++)
		e[i] = 0;
	RNIC_CQE_WR_ID_SET(e, c->wr_id);
	RNIC_CQE_BYTE_LEN_SET(e, c->byte_len);
	RNIC_CQE_IMM_SET(e, c->imm);
	RNIC_CQE_QPN_SET(e, c->qpn);
	RNIC_CQE_SRC_QP_SET(e, c->src_qp);
	RNIC_CQE_OPCODE_SET(e, c->opcode);
	RNIC_CQE_STATUS_SET(e, c->status);
	RNIC_CQE_WC_FLAGS_SET(e, c->wc_flags);
	/* the start's low 32 bits, widened from the cycle now: exact for a completion within 2^32
	 * clocks (17 s at 250 MHz) of its doorbell or first packet */
	RNIC_CQE_TS_START_SET(e, cycle - (uint32_t)((uint32_t)cycle - c->ts_start));
	RNIC_CQE_TS_END_SET(e, cycle);
	RNIC_CQE_WQE_INDEX_SET(e, c->wqe_index);
	RNIC_CQE_OWNER_SET(e, ((q->pi >> log) & 1) ^ 1);
	st->o.wr_valid = 1;
	st->o.wr_addr = CQC_BASE(st, n) + (uint64_t)(q->pi & ((1u << log) - 1)) * RNIC_CQE_BYTES;
	st->o.wr_len = RNIC_CQE_BYTES;
	st->o.wr_last = 1;
	q->pi++;
	st->o.stat_cqes++;
	if (q->armed) {
		q->armed = 0;
		comp_eqe(st, n);
	}
}

/* An asynchronous event (IBTA 11.6.3): an EQE in the context's event queue, MSI-X vector = the
 * context number. */
static void event(rnic_cq_state_t *st, const rnic_cpl_t *c)
{
	st->eqe_pending = 1;
	st->eqe_type = c->evt;
	st->eqe_data = c->qpn;
	st->eqe_ctx = (uint8_t)(c->ctx % RNIC_NUM_CTX);
	st->eqe_vec = c->ctx;
}

/* The pending EQE, then its MSI-X message. */
static void write_eqe(rnic_cq_state_t *st)
{
	uint32_t ctx = st->eqe_ctx;
	uint32_t log = RNIC_GET(RNIC_EQC_CTRL_LOG_SIZE, st->eqc[ctx][0]);
	uint64_t base = ((uint64_t)st->eqc[ctx][RNIC_EQC_BASE_HI / 4] << 32) | st->eqc[ctx][RNIC_EQC_BASE_LO / 4];
	uint8_t *e = st->o.wr_data;
	uint32_t i;

	if (st->o.irq_valid || st->irq_due)
		return;
	st->eqe_pending = 0;
	st->o.irq_vector = st->eqe_vec;
	if (!RNIC_GET(RNIC_EQC_CTRL_VALID, st->eqc[ctx][0])) {
		st->o.irq_valid = 1;
		return;
	}
	/* MSI-X only once the EQE beat is taken: a posted write behind it, as on PCIe, so the host
	 * never looks for an EQE that has not arrived */
	st->irq_due = 1;
	for (i = 0; i < RNIC_BEAT; i++)
		e[i] = 0;
	RNIC_EQE_TYPE_SET(e, st->eqe_type);
	RNIC_EQE_DATA_SET(e, st->eqe_data);
	RNIC_EQE_OWNER_SET(e, ((st->eq_pi[ctx] >> log) & 1) ^ 1);
	st->o.wr_valid = 1;
	st->o.wr_addr = base + (uint64_t)(st->eq_pi[ctx] & ((1u << log) - 1)) * RNIC_EQE_BYTES;
	st->o.wr_len = RNIC_EQE_BYTES;
	st->o.wr_last = 1;
	st->eq_pi[ctx]++;
}

void rnic_cq_step(rnic_cq_state_t *st, const rnic_cq_in_t *in, rnic_cq_out_t *out)
{
#pragma HLS PIPELINE II = 1
	const rnic_cpl_t *c = 0;

	if (in->rst) {
		uint32_t i;

		for (i = 0; i < RNIC_MAX_CQ; i++)
			st->cq[i] = (cq_run_t){0};
		st->eqe_pending = 0;
		st->fire_valid = 0;
		st->irq_due = 0;
		st->fence_pending = st->fence_hold = 0;
		st->o = (rnic_cq_out_t){0};
		*out = st->o;
		return;
	}
	if (st->o.irq_valid && in->irq_ready)
		st->o.irq_valid = 0;
	if (st->o.wr_valid && in->wr_ready) {
		st->o.wr_valid = 0;
		st->fence_hold = 0;
		st->o.irq_valid = st->irq_due;
		st->irq_due = 0;
	}
	if (in->cfg_valid)
		cfg(st, in->cfg_addr, in->cfg_data);
	if (in->db_valid && st->o.db_ready && in->db_cqn < RNIC_MAX_CQ &&
	    CQC_F(st, in->db_cqn, CTRL, CTX) == in->db_ctx) {
		st->cq[in->db_cqn].ci = (st->cq[in->db_cqn].pi & ~0xffffu) | in->db_ci;
		if (st->cq[in->db_cqn].ci > st->cq[in->db_cqn].pi)
			st->cq[in->db_cqn].ci -= 0x10000;
		if (in->db_arm && st->cq[in->db_cqn].ci != st->cq[in->db_cqn].pi) {
			st->cq[in->db_cqn].armed = 0;
			st->fire_valid = 1;
			st->fire_cqn = in->db_cqn;
		} else if (in->db_arm) {
			st->cq[in->db_cqn].armed = in->db_arm;
		}
	}
	if (in->txc_valid && st->o.txc_ready)
		c = &in->txc;
	else if (in->rxc_valid && st->o.rxc_ready)
		c = &in->rxc;
	if (c && c->evt) {
		event(st, c);
		st->rr ^= 1;
	} else if (c) {
		write_cqe(st, c, in->cycle);
		st->rr ^= 1;
	} else if (st->eqe_pending && !st->o.wr_valid) {
		write_eqe(st);
	} else if (st->fire_valid) {
		st->fire_valid = 0;
		comp_eqe(st, st->fire_cqn);
	}
	/* take a completion next clock only if its CQE beat can be presented then; a doorbell
	 * only while no armed CQ's event waits (one at a time) */
	st->o.db_ready = !st->fire_valid;
	{
		/* one ready at a time (both may be valid): the side waiting, or the round-robin turn */
		int tx_wait = in->txc_valid && !(c == &in->txc), rx_wait = in->rxc_valid && !(c == &in->rxc);
		int free = !st->eqe_pending && !st->o.wr_valid && !st->fire_valid;
		int tx_turn = tx_wait && rx_wait ? st->rr == 0 : tx_wait ? 1 : rx_wait ? 0 : st->rr == 0;

		st->o.txc_ready = free && tx_turn;
		st->o.rxc_ready = free && !tx_turn;
	}
	if (st->fence_pending && !st->fence_hold) {
		st->o.fence = st->fence_token;
		st->fence_pending = 0;
	}
	*out = st->o;
}
