/* TX kernel: the timer wheel (tx_wheel.c). */
#ifndef TX_WHEEL_H
#define TX_WHEEL_H

#include "tx_msg.h"

#define TW_OUT 4 /* QPs out of the wheel being looked at by tx_core, at most */

/* Every QP with WQEs outstanding or an RNR wait to sit out is in it once, in the slot of the tick
 * its timer falls due in, up to TW_SLOTS - 1 ticks ahead (further: that slot, and looked at
 * again then). A slot is a list: its head in head (LUT RAM: one write a clock, an insert's or
 * the cursor's, which empties the slot into the register cur), each QP's next in nxt (a block
 * RAM: the pop's read, an insert's write). in[q]: q is in the wheel or out being looked at (a
 * block RAM: an add's read, and its write or a drop's). */
typedef struct {
	uint16_t nxt[RNIC_MAX_QP];
	uint8_t in[RNIC_MAX_QP];
	uint16_t head[TW_SLOTS];
	uint16_t cur;            /* the current slot's QPs not yet popped (list head) */
	uint32_t tick;           /* the current slot's tick: now >> TW_SHIFT (modulo 2^32), or behind */
	uint32_t n;              /* QPs in it (out ones too) */
	/* the QPs out, in the order they went (tx_core answers in that order): each one's QPN and
	 * whether an add came for it meanwhile (its timers started again: it stays, whatever the
	 * answer) */
	uint16_t out_q[TW_OUT];
	uint8_t out_add[TW_OUT];
	uint8_t out_head, out_n;
	/* the add or answer taken last clock, done this clock with `in` read (enum in tx_wheel.c) */
	uint8_t op, op_drop;
	uint16_t op_q;
	uint8_t op_slot;         /* an answer's: the slot of the tick its timer falls due in */
	uint32_t sweep;          /* after a reset: the next entry to clear; RNIC_SWEPT when done */
} tx_wheel_t;

void tx_wheel(tx_wheel_t *st, const rnic_tx_in_t *in, rnic_tx_twaddq_t *add, rnic_tx_twretq_t *ret,
	      rnic_tx_twdueq_t *due);

#endif
