/* RX kernel, the frame store (rx_store.h): every beat of the MAC's stream, its ICRC checked, is
 * written into a 128 KiB ring; a frame come in whole goes to rx_core (arriveq) with its first
 * two beats and its headers' verdict. Nothing of a frame is acted on before its last beat, so a
 * frame with a bad ICRC never writes a byte. The MAC cannot be stalled: a frame that finds the
 * store (or the queue of frames) full is dropped and counted.
 *
 * rx_core answers each frame with commands (cmdq), done here in order: the payload's DMA writes
 * (a segment's beats, realigned from two adjacent beats of the store behind the headers), the
 * frame to the firmware, the frame's beats given back, then what it produces, each on its port
 * once the last write beat before it was taken, so that a completion, a notice that retires a
 * READ or atomic, or an ACK never overtakes the data it vouches for on its way to host memory.
 *
 * II=1, latency 3: a beat's address is worked out in one clock, it is read in the next (into
 * registers: block RAM answers a clock after its address) and merged onto its port in the third;
 * a beat a clock while the port takes them.
 * Memories: buf_even, buf_odd (1,024 x 512 bits each, block RAM: the arrival's write of one of
 * them and the read clock's read of each). Recurrence: a command's progress (done + 64 against
 * its length). Feed-forward: the byte shift of two beats (a 64:1 mux a byte) and the GRH's and
 * an atomic value's byte selects. */
#include "rx_store.h"

/* beat i of the store: even beats in one block RAM, odd in the other */
#define STORE_BEAT(st, i) \
	(((i) & 1) ? (st)->buf_odd[((i) % RX_BUF_BEATS) >> 1] : (st)->buf_even[((i) % RX_BUF_BEATS) >> 1])

/* A beat of the MAC's stream into the store; at a frame's last, the frame to rx_core */
static void receive(rx_store_t *st, const rx_checked_t *c, const rx_desc_t *d, rnic_rx_arriveq_t *arrivals)
{
	const rnic_ebeat_t *b = &c->b;
	rx_arrival_t *a;

	if (b->no == 0) {
		st->in_frame = 1;
		st->cur_start = st->wr_beat;
		st->cur_beats = 0;
		st->cur_len = 0;
		st->cur_drop = 0;
		memcpy(st->head, b->data, RNIC_BEAT);
		memset(st->head + RNIC_BEAT, 0, RNIC_BEAT);
	} else if (!st->in_frame) {
		return; /* the rest of a frame that began before a reset */
	} else if (b->no == 1) {
		memcpy(st->head + RNIC_BEAT, b->data, RNIC_BEAT);
	}
	if (!st->cur_drop) {
		if (st->wr_beat - st->rd_beat >= RX_BUF_BEATS) {
			st->cur_drop = 1;
		} else {
			memcpy(STORE_BEAT(st, st->wr_beat), b->data, RNIC_BEAT);
			st->wr_beat++;
		}
	}
	st->cur_beats++;
	st->cur_len += b->n;
	st->stat_frames += b->last;
	if (!b->last)
		return;
	st->in_frame = 0;
	if (st->cur_drop || st->held >= RX_MAX_FRAMES - 1 || !rnic_rx_arriveq_room(arrivals)) { /* came: not in held yet */
		st->wr_beat = st->cur_start; /* give the beats back */
		st->stat_drop_overflow++;
		return;
	}
	a = rnic_rx_arriveq_slot(arrivals);
	a->f.start = (uint16_t)(st->cur_start % RX_BUF_BEATS);
	a->f.beats = (uint16_t)st->cur_beats;
	a->f.len = (uint16_t)st->cur_len;
	a->f.icrc_ok = st->cur_len > RNIC_XTH_OFF && c->crc_ok;
	a->f.v = d->v;
	memcpy(a->f.raw, st->head, 2 * RNIC_BEAT);
	a->req = d->req;
	a->key = d->key;
	a->va = d->va;
	rnic_rx_arriveq_push(arrivals, NULL);
	st->arrived = 1;
}

/* Address clock: the command's next beat (a SEG's: the frame's bytes from + done on, its GRH
 * area's bytes in its first beat), and what merges onto it. 1 once its last beat is on its way. */
static int address(rx_store_t *st, const rx_cmd_t *c)
{
	uint32_t o = c->from + st->done, b;
	rx_job_t *j = &st->a;

	st->a_valid = 1;
	st->addressed++;
	j->fw = c->kind == RX_CMD_FW;
	j->dat = c->kind == RX_CMD_DATA;
	j->gh = j->on = j->sh = 0;
	if (j->fw) {
		b = c->start + st->done;
		j->last = st->done + 1 == c->beats;
		/* the last beat keeps the frame's bytes in it: 1 to 64 of them */
		j->keep = j->last ? ~0ull >> (RNIC_BEAT - 1 - ((c->len - 1u) & (RNIC_BEAT - 1))) : ~0ull;
		st->done++;
	} else {
		b = c->start + o / RNIC_BEAT;
		if (c->kind == RX_CMD_SEG) {
			j->sh = (uint8_t)(o % RNIC_BEAT);
			j->gh = st->done ? 0 : c->gh; /* gh < RNIC_BEAT: only a first beat has any */
			memcpy(j->grh, c->grh, RNIC_GRH_LEN);
			j->at = c->ovr_at - (int32_t)st->done;
			j->on = c->ovr_n;
			j->val = c->ovr_val;
		} else {
			memcpy(j->data, c->data, sizeof(c->data));
		}
		j->addr = c->addr;
		j->len = c->len;
		j->last = c->len - st->done <= RNIC_BEAT;
		st->done += RNIC_BEAT;
	}
	j->ev = (uint16_t)(((b + 1) >> 1) % (RX_BUF_BEATS / 2));
	j->od = (uint16_t)((b >> 1) % (RX_BUF_BEATS / 2));
	j->swap = b & 1;
	return j->last;
}

/* Read clock: the beat's two beats of the store (one of each bank), at the addresses the clock
 * before worked out, into registers in their order */
static void read(rx_store_t *st)
{
	const rx_job_t *j = &st->a;
	uint32_t i;

	if (!st->a_valid || st->r_valid)
		return;
	st->a_valid = 0;
	st->r_valid = 1;
	st->reads++;
	st->r = *j;
	for (i = 0; i < RNIC_BEAT; i++) {
#pragma HLS UNROLL
		uint8_t e = st->buf_even[j->ev][i], o = st->buf_odd[j->od][i];

		st->r_two[i] = j->dat ? (i < sizeof(j->data) ? j->data[i % sizeof(j->data)] : 0) : j->swap ? o : e;
		st->r_two[RNIC_BEAT + i] = j->dat ? 0 : j->swap ? e : o;
	}
}

/* Merge clock: the beat onto its port (free: its last beat taken), each byte from the two beats
 * shifted, the GRH area, the atomic's value or the DATA command's bytes */
static void merge(rx_store_t *st)
{
	const rx_job_t *j = &st->r;
	uint32_t i;

	if (!st->r_valid || (j->fw ? st->fw_valid : st->wr_valid))
		return;
	st->r_valid = 0;
	if (j->fw) {
		memcpy(st->fw_data, st->r_two, RNIC_BEAT);
		st->fw_valid = 1;
		st->fw_last = j->last;
		st->fw_keep = j->keep;
		return;
	}
	for (i = 0; i < RNIC_BEAT; i++) {
#pragma HLS UNROLL
		int32_t d = (int32_t)i - j->at;
		uint8_t v = st->r_two[(j->sh + i) % (2 * RNIC_BEAT)];

		if (i < j->gh)
			v = j->grh[i < RNIC_GRH_LEN ? i : 0];
		if (d >= 0 && d < j->on)
			v = (uint8_t)(j->val >> 8 * (d & 7));
		st->wr_data[i] = v;
	}
	st->wr_valid = 1;
	st->wr_addr = j->addr;
	st->wr_len = j->len;
	st->wr_last = j->last;
}

/* The next post, on its port once that is free and the beats addressed before it were taken
 * (all: behind by lag as the clock began, then h taken in it; two ports, so the count may pass
 * need): a completion takes its ACK along when nothing is between them (separate ports). */
static void post(rx_store_t *st, int32_t lag, uint32_t h)
{
	rx_posts_t *p = &st->p;

	if (!p->left || !(lag >= 0 || (lag == -1 && h >= 1) || (lag == -2 && h == 2)))
		return;
	if (p->left & RX_P_CPL) {
		if (st->cpl_valid)
			return;
		st->cpl = p->cpl;
		st->cpl_valid = 1;
		p->left &= (uint8_t)~RX_P_CPL;
		if ((p->left & (RX_P_EVT | RX_P_NTC | RX_P_RSP)) == RX_P_RSP && !st->rsp_valid) {
			st->rsp = p->rsp;
			st->rsp_valid = 1;
			p->left &= (uint8_t)~RX_P_RSP;
		}
	} else if (p->left & RX_P_EVT) {
		if (st->cpl_valid)
			return;
		st->cpl = p->evt;
		st->cpl_valid = 1;
		p->left &= (uint8_t)~RX_P_EVT;
	} else if (p->left & RX_P_NTC) {
		if (st->ack_valid)
			return;
		st->ack_valid = 1;
		st->ack_qpn = p->n_qpn;
		st->ack_psn = p->n_psn;
		st->ack_syndrome = p->n_syn;
		st->ack_rd = p->n_rd;
		p->left &= (uint8_t)~RX_P_NTC;
	} else if (p->left & RX_P_RSP) {
		if (st->rsp_valid)
			return;
		st->rsp = p->rsp;
		st->rsp_valid = 1;
		p->left &= (uint8_t)~RX_P_RSP;
	} else {
		st->fence = p->token;
		p->left = 0;
	}
}

/* The command at the head of cmdq: its write's beats addressed, then its beats given back and
 * its posts set to go (once the last command's are gone as the clock began: slot_free): 1 when
 * it is popped */
static int serve(rx_store_t *st, const rx_cmd_t *c, uint32_t slot_free)
{
	if (!st->past) {
		if (c->kind != RX_CMD_NONE && (st->a_valid || !address(st, c)))
			return 0;
		st->past = 1;
	}
	if ((c->p.left && !slot_free) || (c->release && st->rel))
		return 0;
	if (c->p.left) {
		st->p = c->p;
		st->p_need = st->addressed;
	}
	if (c->release) {
		st->rel = c->release;
		st->rel_need = st->addressed;
	}
	st->past = 0;
	st->done = 0;
	return 1;
}

void rx_store(rx_store_t *st, const rnic_rx_in_t *in, rnic_rx_beatq_t *beats, rnic_rx_descq_t *descs,
	      rnic_rx_arriveq_t *arrivals, rnic_rx_cmdq_t *cmds, rnic_rx_doneq_t *dones)
{
#pragma HLS PIPELINE II = 1
	/* as the clock begins: the posts' slot is free, the beats to give back were read */
	uint32_t slot_free = !st->p.left, free_now = st->rel && (int8_t)(st->reads - st->rel_need) >= 0;
	uint32_t h = (st->wr_valid && in->wr_ready) + (st->fw_valid && in->fw_ready);
	int32_t lag = (int8_t)(st->taken - st->p_need);

	if (in->rst) {
		st->wr_beat = st->rd_beat = st->held = 0;
		st->arrived = st->came = 0;
		st->rel = st->freed = 0;
		st->reads = 0;
		st->in_frame = st->past = st->a_valid = st->r_valid = 0;
		st->addressed = st->taken = st->p.left = 0;
		st->done = 0;
		st->wr_valid = st->fw_valid = st->cpl_valid = st->ack_valid = st->rsp_valid = 0;
		st->fence = 0;
		st->stat_frames = st->stat_drop_overflow = 0;
		return;
	}
	/* handshakes of the beats presented during the last clock: a write's last taken is told (a
	 * write a clock at most, rx_core takes each in the clock after) */
	st->taken += h;
	if (st->wr_valid && in->wr_ready) {
		st->wr_valid = 0;
		if (st->wr_last)
			rnic_rx_doneq_push(dones, &st->wr_last);
	}
	if (st->fw_valid && in->fw_ready)
		st->fw_valid = 0;
	if (st->cpl_valid && in->cpl_ready)
		st->cpl_valid = 0;
	if (st->ack_valid && in->ack_ready)
		st->ack_valid = 0;
	if (st->rsp_valid && in->rsp_ready)
		st->rsp_valid = 0;
	/* taken in every clock (the MAC cannot wait), a last beat with its frame's headers' verdict
	 * (there three clocks before it: rx_msg.h); before the head command gives beats back */
	if (rnic_rx_beatq_count(beats)) {
		const rx_checked_t *c = rnic_rx_beatq_head(beats);

		rnic_rx_beatq_pop(beats);
		if (c->b.last)
			rnic_rx_descq_pop(descs);
		receive(st, c, rnic_rx_descq_head(descs), arrivals);
	}
	/* a beat's three clocks, the last first: each frees the registers the one before fills */
	merge(st);
	read(st);
	post(st, lag, h);
	if (rnic_rx_cmdq_count(cmds) && serve(st, rnic_rx_cmdq_head(cmds), slot_free))
		rnic_rx_cmdq_pop(cmds);
	/* a frame handed over counts a clock later, and a frame's beats are given back a clock after
	 * the last beat addressed before its release was read (the arrival of this clock checked the
	 * room before): registers between the decisions and the counts */
	st->held += (uint32_t)st->came - (st->freed != 0);
	st->rd_beat += st->freed;
	st->came = st->arrived;
	st->arrived = 0;
	st->freed = free_now ? st->rel : 0;
	if (free_now)
		st->rel = 0;
}

void rx_store_out(const rx_store_t *st, rnic_rx_out_t *out)
{
	out->wr_valid = st->wr_valid;
	out->wr_addr = st->wr_addr;
	out->wr_len = st->wr_len;
	memcpy(out->wr_data, st->wr_data, RNIC_BEAT);
	out->wr_last = st->wr_last;
	out->fw_valid = st->fw_valid;
	memcpy(out->fw_data, st->fw_data, RNIC_BEAT);
	out->fw_keep = st->fw_keep;
	out->fw_last = st->fw_last;
	out->cpl_valid = st->cpl_valid;
	out->cpl = st->cpl;
	out->ack_valid = st->ack_valid;
	out->ack_qpn = st->ack_qpn;
	out->ack_psn = st->ack_psn;
	out->ack_syndrome = st->ack_syndrome;
	out->ack_msn = 0;
	out->ack_rd = st->ack_rd;
	out->rsp_valid = st->rsp_valid;
	out->rsp = st->rsp;
	out->fence = st->fence;
	out->stat_frames = st->stat_frames;
	out->stat_drop_overflow = st->stat_drop_overflow;
}
