/* RX kernel, three stages beside the ICRC check: the headers of every frame (rx_parse.c). */
#ifndef RX_PARSE_H
#define RX_PARSE_H

#include "rx_msg.h"

typedef struct {
	uint32_t port[RNIC_PORTC_WORDS]; /* our MAC and addresses (CFG_TBL_PORT), a copy of its own */
} rx_hdr_t;

typedef struct {
	rx_facts_t f0, f1; /* what the frame's first and second beats said */
	uint16_t len;      /* its bytes so far */
} rx_classify_t;

void rx_hdr(rx_hdr_t *st, const rnic_rx_in_t *in, rnic_rx_hdrq_t *hq, rnic_rx_factq_t *out);
void rx_classify(rx_classify_t *st, rnic_rx_factq_t *in, rnic_rx_headq_t *out);
void rx_judge(rnic_rx_headq_t *in, rnic_rx_descq_t *out);

#endif
