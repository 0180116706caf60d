/* TX kernel: the emitter (tx_emit.c). */
#ifndef TX_EMIT_H
#define TX_EMIT_H

#include "rnic_icrc.h"
#include "tx_msg.h"

#define TX_RING 256       /* the packer's bytes: a beat going out, a beat landing, a beat packed
			   * and the part of one a header or a short read leaves */

typedef struct {
	/* the packet at pkq's head going into the packer: its header (hdr_beat beats of it in),
	 * payload bytes still to come, its QP's message cut (e_bad) or its payload poisoned */
	uint8_t e_state;             /* enum in tx_emit.c */
	uint8_t hdr_beat;
	uint16_t pay_left;
	uint8_t e_bad, e_poison;
	tx_pay_t ph;                 /* the payload beat next in (payq's head, taken into a register */
	uint8_t ph_on;               /* a clock ahead) */
	/* payload the host refused to read: the frame leaves with a bad ICRC, and so do the later
	 * packets of its message (e_cut: that QP's requests or responses, until a message's first
	 * packet); tx_core is told (fltq) and stops the message */
	uint8_t e_cut, e_cut_rsp;
	uint16_t e_cut_q;
	/* the packer: a ring of bytes of one frame or two (the end of one, the start of the next),
	 * packed up to wp, in up to wq, read from rp (positions mod 256). What was packed lands a
	 * clock later: w_n bytes w_b at w_at, a frame's end (w_end) with its flags. */
	uint8_t ring[TX_RING];
	uint8_t wp, wq, rp;
	uint8_t w_b[RNIC_BEAT];
	uint8_t w_on, w_n, w_at, w_end, w_bad, w_v6;
	uint8_t frame_end;           /* the ring holds the end of a frame (its ICRC's 4 bytes as
				      * zeros, for tx_icrc_put to fill): at end_p, whether it leaves */
	uint8_t end_p, end_bad, end_v6; /* with a bad ICRC, and is IPv6 */
	uint8_t e_v6;                /* the frame being pushed is IPv6 */
	uint8_t e_no;                /* the number of the packer's next beat in its frame (saturated
				      * at 2: what the ICRC's mask needs) */
	uint32_t stat_frames, stat_bytes, stat_poisoned;
} tx_emit_t;

void tx_emit(tx_emit_t *st, const rnic_tx_in_t *in, rnic_tx_pkq_t *pkts, rnic_tx_payq_t *pay, rnic_icrc_inq_t *eth,
	     rnic_tx_retq_t *rets, rnic_tx_fltq_t *flts);
/* its counts on the kernel's outputs (wiring, after the clock's stages) */
void tx_emit_out(const tx_emit_t *st, rnic_tx_out_t *out);

#endif
