/* RX kernel, stage 1: the MAC's stream (rx_mac.c). */
#ifndef RX_MAC_H
#define RX_MAC_H

#include "rx_msg.h"

typedef struct {
	uint8_t in_frame; /* a frame's first beat has come, its last not yet */
	uint8_t no, v6;   /* the next beat's number (saturated at 2); the frame is IPv6 */
} rx_mac_t;

void rx_mac(rx_mac_t *st, const rnic_rx_in_t *in, rnic_icrc_inq_t *out, rnic_rx_hdrq_t *hdr);

#endif
