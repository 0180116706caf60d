/* What TX's stages pass each other besides a frame's beats (rnic_icrc.h): tx_core and the timer
 * wheel (tx_wheel.h):
 *   tx_core --twaddq--> tx_wheel    a QP's first outstanding WQE started: its timers run
 *   tx_wheel --twdueq--> tx_core    a QP whose tick has come: look at its timers
 *   tx_core --twretq--> tx_wheel    ... looked at: when to look again, or nothing to time */
#ifndef TX_MSG_H
#define TX_MSG_H

#include "rnic_kernel.h"
#include "rnic_fifo.h"

#define TW_SHIFT 10       /* the timer wheel's tick: 1,024 cycles (4.096 us, the unit of the ACK
			   * timeout, IBTA 9.7.6.1.3) */
#define TW_SLOTS 256      /* ticks ahead it holds (1 ms); a timer further out is looked at then */
#define TW_NIL 0x7fffu    /* no QP: the end of a slot's list */

typedef struct {
	uint16_t q;
	uint8_t drop;  /* nothing to time: out of the wheel (unless its timers started again since) */
	uint32_t tick; /* else: the tick to look at it again in (cycle >> TW_SHIFT, modulo 2^32) */
} tx_twret_t;

RNIC_FIFO(tx_twaddq, uint16_t, 1)
RNIC_FIFO(tx_twdueq, uint16_t, 1)
RNIC_FIFO(tx_twretq, tx_twret_t, 1)

#endif
