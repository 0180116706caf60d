/* CQ kernel, stage 3 (cq_write.h). II=1, latency 1: a message taken is a beat presented the same
 * clock, and a beat taken makes room for the next at once (one beat a clock). No block RAM: the
 * event queues' contexts are 16 entries (registers). Recurrence: the beat's valid against its
 * ready, and an event queue's producer index and its increment. The CQE's timestamps are the
 * clock its beat is formatted in; its start's high bits come back from that clock. */
#include "cq_write.h"

static void present(cq_write_t *st, uint64_t addr, uint16_t len)
{
	st->wr_valid = 1;
	st->wr_addr = addr;
	st->wr_len = len;
	st->wr_last = 1;
}

static void write_cqe(cq_write_t *st, const cq_wr_t *m, uint64_t cycle)
{
	const rnic_cpl_t *c = &m->cpl;
	uint8_t *e = st->wr_data;
	uint32_t i;

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
	RNIC_CQE_OWNER_SET(e, m->owner);
	present(st, m->addr, RNIC_CQE_BYTES);
	if (m->eqe) {
		st->eqe_pending = 1;
		st->eqe_type = RNIC_EQE_TYPE_COMP;
		st->eqe_data = c->cqn;
		st->eqe_ctx = m->ctx;
		st->eqe_vec = m->vector;
	}
}

/* The pending EQE, then its MSI-X message (only the message where the EQ is not set up). */
static void write_eqe(cq_write_t *st)
{
	uint32_t ctx = st->eqe_ctx % RNIC_NUM_CTX;
	uint32_t log = RNIC_GET(RNIC_EQC_CTRL_LOG_SIZE, st->eqc[ctx][0]);
	uint64_t base = ((uint64_t)st->eqc[ctx][RNIC_EQC_BASE_HI / 4] << 32) | st->eqc[ctx][RNIC_EQC_BASE_LO / 4];
	uint8_t *e = st->wr_data;
	uint32_t i;

	if (st->irq_valid || st->irq_due)
		return;
	st->eqe_pending = 0;
	st->irq_vector = st->eqe_vec;
	if (!RNIC_GET(RNIC_EQC_CTRL_VALID, st->eqc[ctx][0])) {
		st->irq_valid = 1;
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
	present(st, base + (uint64_t)(st->eq_pi[ctx] & ((1u << log) - 1)) * RNIC_EQE_BYTES, RNIC_EQE_BYTES);
	st->eq_pi[ctx]++;
}

static void take(cq_write_t *st, const cq_wr_t *m, uint64_t cycle)
{
	uint32_t ctx = (m->where >> 8) % RNIC_NUM_CTX, word = (m->where & 0xff) % RNIC_EQC_WORDS;

	switch (m->kind) {
	case CQ_WR_CQE:
		write_cqe(st, m, cycle);
		break;
	case CQ_WR_EQE:
		st->eqe_pending = 1;
		st->eqe_type = m->eqe_type;
		st->eqe_data = m->data;
		st->eqe_ctx = m->ctx;
		st->eqe_vec = m->vector;
		write_eqe(st);
		break;
	case CQ_WR_EQC:
		st->eqc[ctx][word] = m->data;
		if (!word)
			st->eq_pi[ctx] = 0;
		break;
	default:
		/* everything before it has been written */
		st->fence = (uint8_t)m->data;
		break;
	}
}

void cq_write(cq_write_t *st, const rnic_cq_in_t *in, rnic_cq_wrq_t *wrq, rnic_cq_out_t *out)
{
#pragma HLS PIPELINE II = 1
	uint32_t i;

	if (in->rst) {
		st->eqe_pending = st->irq_due = st->wr_valid = st->irq_valid = st->fence = 0;
	} else {
		if (st->irq_valid && in->irq_ready)
			st->irq_valid = 0;
		if (st->wr_valid && in->wr_ready) {
			st->wr_valid = 0;
			st->irq_valid = st->irq_due;
			st->irq_due = 0;
		}
		if (!st->wr_valid && st->eqe_pending)
			write_eqe(st);
		else if (!st->wr_valid && rnic_cq_wrq_count(wrq)) {
			take(st, rnic_cq_wrq_head(wrq), in->cycle);
			rnic_cq_wrq_pop(wrq);
		}
	}
	out->wr_valid = st->wr_valid;
	out->wr_addr = st->wr_addr;
	out->wr_len = st->wr_len;
	out->wr_last = st->wr_last;
	for (i = 0; i < RNIC_BEAT; i++)
		out->wr_data[i] = st->wr_data[i];
	out->irq_valid = st->irq_valid;
	out->irq_vector = st->irq_vector;
	out->fence = st->fence;
}
