/* TX kernel, a stage (tx_emit.h): the emitter. Each packet tx_core built (pkq) goes into a byte
 * packer: its header, its payload beats as tx_core takes them from the DMA reads (payq) realigned
 * behind it, the pad and the ICRC's place (zeros: tx_icrc_put writes it, RoCEv2 A17.3.3); full
 * beats, and a frame's last, leave the packer to the ICRC's stages (eth).
 * Per clock: a beat out of the ring (from rp), the bytes packed last clock landing in it (at
 * w_at), and the next beat's worth packed: a header beat, a payload beat or a frame's tail. A
 * UC/UD message's last packet, once its tail is packed, completes its WQE (retq); a payload beat
 * the host refused marks its frame and the rest of its message bad and stops the message (fltq).
 * II=1, latency 2 (a beat packed in one clock lands in the next and leaves the clock after at the
 * earliest; a payload beat waits a clock in its register); memories: the packet FIFO (pkq, block
 * RAM: its head read a beat a clock at registered addresses), the ring (registers: written at a
 * rotation by w_at, read at one by rp). Recurrence: the ring's count (wp - rp) deciding what is
 * packed, and the pointer it moves (wp). Feed-forward: a payload beat's count from its register
 * into wp. */
#include "tx_emit.h"

/* where the packet at the head is: its header going in, its payload, its tail; NEXT: none taken */
enum { E_NEXT, E_HDR, E_PAY, E_TAIL };

_Static_assert(TX_RING == 256, "the ring's positions are its pointers' 8 bits");

/* The bytes packed last clock into the ring at their place (each byte's write enable from w_at
 * and w_n, its data the beat rotated by w_at: registers all), and a frame's end with them. */
static void land(tx_emit_t *st)
{
	uint32_t i;

	for (i = 0; i < RNIC_BEAT; i++)
		if (st->w_on && i < st->w_n)
			st->ring[(uint8_t)(st->w_at + i)] = st->w_b[i];
	if (st->w_on)
		st->wq = (uint8_t)(st->w_at + st->w_n);
	if (st->w_on && st->w_end) {
		st->frame_end = 1;
		st->end_p = (uint8_t)(st->w_at + st->w_n);
		st->end_bad = st->w_bad;
		st->end_v6 = st->w_v6;
	}
	st->w_on = st->w_end = 0;
}

/* One Ethernet beat out of the ring to the ICRC's stages when a full beat, or the end of the
 * frame, is there and they have room (the MAC may hold them up): the ring's bytes from rp. */
static void emit_beat(tx_emit_t *st, rnic_icrc_inq_t *eth)
{
	rnic_ebeat_t *b = rnic_icrc_inq_slot(eth);
	uint32_t left = (uint8_t)(st->end_p - st->rp), last = st->frame_end && left <= RNIC_BEAT;
	uint32_t n = last ? left : RNIC_BEAT, i;

	/* the oldest frame's end, once in, ends its last beat; bytes of the next may follow it */
	if (!rnic_icrc_inq_room(eth) || !(st->frame_end || (uint8_t)(st->wq - st->rp) >= RNIC_BEAT))
		return;
	for (i = 0; i < RNIC_BEAT; i++)
		b->data[i] = st->ring[(uint8_t)(st->rp + i)] & (uint8_t)-(i < n);
	b->n = (uint8_t)n;
	b->no = st->e_no;
	b->v6 = st->frame_end ? st->end_v6 : st->e_v6;
	b->last = (uint8_t)last;
	b->bad = st->end_bad;
	/* the frame's ICRC begins in this beat and ends in the next (tx_icrc_put) */
	b->hold = st->frame_end && left > RNIC_BEAT && left < RNIC_BEAT + RNIC_ICRC_LEN;
	rnic_icrc_inq_push(eth, NULL);
	st->rp = last ? st->end_p : (uint8_t)(st->rp + RNIC_BEAT);
	st->e_no = last ? 0 : st->e_no < 2 ? st->e_no + 1 : 2;
	if (last) {
		st->frame_end = 0;
		st->stat_frames++;
	}
}

/* A payload beat of packet k the host refused (SLVERR/DECERR): its frame, and the rest of its
 * message, leave with a bad ICRC, and tx_core stops the message (tx_refused) */
static void refused_beat(tx_emit_t *st, const tx_pkt_t *k, rnic_tx_fltq_t *flts)
{
	tx_flt_t *f = rnic_tx_fltq_slot(flts);

	st->e_bad = 1;
	st->e_cut = 1;
	st->e_cut_q = k->qpn;
	st->e_cut_rsp = k->rsp;
	f->qpn = k->qpn;
	f->rsp = k->rsp;
	f->ob = k->ob;
	rnic_tx_fltq_push(flts, NULL);
}

/* The packet at the head into the packer, a beat a clock: header, payload beats, then pad and
 * the ICRC's place: the bytes (b) and how many (returned) go into the ring next clock. used: the
 * ring's bytes as the clock began, those to land included (a beat taken out in this clock is
 * not counted: the room is known from registers); ends: a frame's end in it, or to land. */
static uint32_t pack(tx_emit_t *st, uint32_t used, uint32_t ends, rnic_tx_pkq_t *pkts, rnic_tx_retq_t *rets,
		     rnic_tx_fltq_t *flts, uint8_t *b)
{
	const tx_pkt_t *k = rnic_tx_pkq_head(pkts);
	const tx_pay_t *p = &st->ph;
	uint32_t n, i, cut, bad = st->e_poison || st->e_bad;

	switch (st->e_state) {
	case E_NEXT: /* the next frame goes in behind the end of the one draining */
		if (!rnic_tx_pkq_count(pkts))
			return 0;
		st->pay_left = k->pay_len;
		st->e_state = E_HDR;
		st->e_v6 = k->v6;
		st->e_poison = 0;
		cut = k->qpn == st->e_cut_q && k->rsp == st->e_cut_rsp; /* of the message cut */
		if (st->e_cut && cut)
			st->e_cut = !k->first;
		st->e_bad = st->e_cut && cut;
		/* fall through */
	case E_HDR: /* hdr_beat: 0 for its first beat since the last packet's tail */
		if (used + RNIC_BEAT >= TX_RING)
			return 0;
		for (i = 0; i < RNIC_BEAT; i++)
			b[i] = st->hdr_beat * RNIC_BEAT + i < TX_HDR ? k->hdr[(st->hdr_beat * RNIC_BEAT + i) % TX_HDR] : 0;
		if (st->hdr_beat++ < k->hdr_last)
			return RNIC_BEAT;
		st->e_state = st->pay_left ? E_PAY : E_TAIL;
		return k->hdr_tail;
	case E_PAY: /* payload beats from the DMA reads */
		if (!st->ph_on || !rnic_tx_fltq_room(flts) || used + RNIC_BEAT >= TX_RING)
			return 0;
		n = p->n;
		if (p->err)
			refused_beat(st, k, flts);
		st->e_poison |= p->poison;
		memcpy(b, p->data, RNIC_BEAT);
		st->ph_on = 0;
		st->pay_left -= n;
		st->stat_bytes += n;
		if (!st->pay_left)
			st->e_state = E_TAIL;
		return n;
	default: /* E_TAIL: pad and ICRC */
		if (used + 8 >= TX_RING || ends || (k->retire && !rnic_tx_retq_room(rets)))
			return 0; /* one frame end in the ring at a time */
		if (k->retire) {
			tx_ret_t *r = rnic_tx_retq_slot(rets);

			r->qpn = k->qpn;
			r->status = bad ? RNIC_WC_STATUS_LOC_PROT_ERR : RNIC_WC_STATUS_SUCCESS;
			rnic_tx_retq_push(rets, NULL);
		}
		st->stat_poisoned += bad;
		n = k->pad + RNIC_ICRC_LEN;
		for (i = 0; i < RNIC_BEAT; i++)
			b[i] = 0;
		st->w_end = 1;
		st->w_bad = (uint8_t)bad;
		st->w_v6 = k->v6;
		rnic_tx_pkq_pop(pkts);
		st->hdr_beat = 0;
		st->e_state = E_NEXT;
		return n;
	}
}

void tx_emit(tx_emit_t *st, const rnic_tx_in_t *in, rnic_tx_pkq_t *pkts, rnic_tx_payq_t *pay, rnic_icrc_inq_t *eth,
	     rnic_tx_retq_t *rets, rnic_tx_fltq_t *flts)
{
#pragma HLS PIPELINE II = 1
	uint32_t used = (uint8_t)(st->wp - st->rp), ends = st->frame_end || st->w_end, n;

	if (in->rst) {
		*st = (tx_emit_t){0};
		return;
	}
	emit_beat(st, eth);
	land(st);
	n = pack(st, used, ends, pkts, rets, flts, st->w_b);
	st->w_on = n != 0;
	st->w_n = (uint8_t)n;
	st->w_at = st->wp;
	st->wp = (uint8_t)(st->wp + n);
	if (!st->ph_on && rnic_tx_payq_count(pay)) {
		/* the next payload beat into its register as this one goes */
		st->ph = *rnic_tx_payq_head(pay);
		st->ph_on = 1;
		rnic_tx_payq_pop(pay);
	}
}

void tx_emit_out(const tx_emit_t *st, rnic_tx_out_t *out)
{
	out->stat_frames = st->stat_frames;
	out->stat_bytes = st->stat_bytes;
	out->stat_poisoned = st->stat_poisoned;
}
