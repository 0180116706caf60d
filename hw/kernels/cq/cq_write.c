/* CQ kernel, stage 3 (cq_write.h). II=1, latency 2: a message taken in one clock (its event
 * queue's slot counted) is a beat presented the next, and both clocks move on as the beat before
 * is taken, so a beat a clock. No block RAM: the event queues' contexts are 16 entries
 * (registers). Recurrences: an event queue's producer index and its increment (clock 1); the
 * beat's valid against its ready (clock 2). The CQE's timestamps are the clock its beat is
 * formatted in; its start's high bits come back from that clock. */
#include "cq_write.h"

/* Clock 1: a message into the job register; an EQE gets its event queue's next slot here. */
static void prepare(cq_write_t *st, const cq_wr_t *m)
{
	uint32_t ctx = m->ctx % RNIC_NUM_CTX, word = m->where & 3, ectx = (m->where >> 8) % RNIC_NUM_CTX;
	const uint32_t *q = st->eqc[ctx];
	uint32_t log = RNIC_GET(RNIC_EQC_CTRL_LOG_SIZE, q[0]);

	st->m = *m;
	switch (m->kind) {
	case CQ_WR_CQE:
		st->job = CQ_JOB_CQE;
		break;
	case CQ_WR_EQE:
		/* only the MSI-X message where the event queue is not set up */
		st->job = RNIC_GET(RNIC_EQC_CTRL_VALID, q[0]) ? CQ_JOB_EQE : CQ_JOB_IRQ;
		st->eq_base = ((uint64_t)q[RNIC_EQC_BASE_HI / 4] << 32) | q[RNIC_EQC_BASE_LO / 4];
		st->eq_slot = (uint16_t)(st->eq_pi[ctx] & ((1u << log) - 1));
		st->eq_owner = ((st->eq_pi[ctx] >> log) & 1) ^ 1;
		if (st->job == CQ_JOB_EQE)
			st->eq_pi[ctx]++;
		break;
	case CQ_WR_EQC:
		st->job = 0;
		if (word < RNIC_EQC_WORDS)
			st->eqc[ectx][word] = m->data;
		if (!word)
			st->eq_pi[ectx] = 0;
		break;
	default:
		st->job = CQ_JOB_FENCE;
		break;
	}
}

/* the EQE owed after an armed CQ's CQE, as a message */
static cq_wr_t pending_eqe(const cq_write_t *st)
{
	cq_wr_t m = {0};

	m.kind = CQ_WR_EQE;
	m.eqe_type = RNIC_EQE_TYPE_COMP;
	m.data = st->eqe_data;
	m.ctx = st->eqe_ctx;
	m.vector = st->eqe_vec;
	return m;
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
	st->wr_addr = m->addr;
	st->wr_len = RNIC_CQE_BYTES;
}

static void write_eqe(cq_write_t *st)
{
	uint8_t *e = st->wr_data;
	uint32_t i;

	for (i = 0; i < RNIC_BEAT; i++)
		e[i] = 0;
	RNIC_EQE_TYPE_SET(e, st->m.eqe_type);
	RNIC_EQE_DATA_SET(e, st->m.data);
	RNIC_EQE_OWNER_SET(e, st->eq_owner);
	st->wr_addr = st->eq_base + (uint64_t)st->eq_slot * RNIC_EQE_BYTES;
	st->wr_len = RNIC_EQE_BYTES;
	/* MSI-X only once the EQE beat is taken: a posted write behind it, as on PCIe, so the host
	 * never looks for an EQE that has not arrived */
	st->irq_due = 1;
	st->irq_vector = st->m.vector;
}

/* Clock 2: the job onto the ports, when they are free. Returns whether it went. */
static uint32_t present(cq_write_t *st, uint64_t cycle)
{
	uint32_t job = st->job, irq_busy = st->irq_valid || st->irq_due;

	if (st->wr_valid || (job & (CQ_JOB_EQE | CQ_JOB_IRQ) && irq_busy))
		return 0;
	if (job & CQ_JOB_CQE) {
		write_cqe(st, &st->m, cycle);
		st->wr_valid = 1;
	} else if (job & CQ_JOB_EQE) {
		write_eqe(st);
		st->wr_valid = 1;
	} else if (job & CQ_JOB_IRQ) {
		st->irq_valid = 1;
		st->irq_vector = st->m.vector;
	} else {
		/* everything before it has been written */
		st->fence = (uint8_t)st->m.data;
	}
	st->wr_last = 1;
	return 1;
}

void cq_write(cq_write_t *st, const rnic_cq_in_t *in, rnic_cq_wrq_t *wrq, rnic_cq_out_t *out)
{
#pragma HLS PIPELINE II = 1
	uint32_t i;

	if (in->rst) {
		st->eqe_pending = st->job = st->irq_due = st->wr_valid = st->irq_valid = st->fence = 0;
		for (i = 0; i < RNIC_NUM_CTX; i++) { /* registers */
			st->eqc[i][RNIC_EQC_CTRL / 4] = 0;
			st->eq_pi[i] = 0;
		}
	} else {
		uint32_t free = !st->job;

		if (st->irq_valid && in->irq_ready)
			st->irq_valid = 0;
		if (st->wr_valid && in->wr_ready) {
			st->wr_valid = 0;
			st->irq_valid = st->irq_due;
			st->irq_due = 0;
		}
		if (st->job && present(st, in->cycle)) {
			st->job = 0;
			free = 1;
		}
		if (free && st->eqe_pending) {
			cq_wr_t m = pending_eqe(st);

			prepare(st, &m);
			st->eqe_pending = 0;
		} else if (free && rnic_cq_wrq_count(wrq)) {
			const cq_wr_t *m = rnic_cq_wrq_head(wrq);

			prepare(st, m);
			if (m->kind == CQ_WR_CQE && m->eqe) {
				st->eqe_pending = 1;
				st->eqe_data = m->cpl.cqn;
				st->eqe_ctx = m->ctx;
				st->eqe_vec = m->vector;
			}
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
