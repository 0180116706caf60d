/* RX kernel, stage 5: the ICRC check (rx_icrc.c), behind the ICRC's three stages (rnic_icrc.h). */
#ifndef RX_ICRC_H
#define RX_ICRC_H

#include "rx_msg.h"

void rx_icrc_check(rnic_icrc_sumq_t *in, rnic_rx_beatq_t *out);

#endif
