/* CQ kernel, stage 1 (cq_take.h). II=1, latency 1 (the FIFO's register); no memory. Recurrence:
 * a ready from its FIFO's count (a few LUTs). A configuration write has no ready (the firmware
 * does not wait): the ring takes them first, and a firmware command writes a handful. */
#include "cq_take.h"

/* room at the next edge, given this clock's push and no pop (the consumer's is not seen) */
#define ROOM_AFTER(room, pushed) ((room) > (uint32_t)(pushed))

void cq_take(cq_take_t *st, const rnic_cq_in_t *in, rnic_cq_cfgq_t *cfgq, rnic_cq_dbq_t *dbq,
	     rnic_cq_cplq_t *txq, rnic_cq_cplq_t *rxq, rnic_cq_out_t *out)
{
#pragma HLS PIPELINE II = 1
	int db = in->db_valid && st->db_ready, tx = in->txc_valid && st->txc_ready;
	int rx = in->rxc_valid && st->rxc_ready;

	if (in->rst) {
		*st = (cq_take_t){0};
	} else {
		if (in->cfg_valid) {
			cq_cfg_t c = {in->cfg_addr, in->cfg_data};

			rnic_cq_cfgq_push(cfgq, &c);
		}
		if (db) {
			cq_db_t d = {in->db_cqn, in->db_ci, in->db_ctx, in->db_arm};

			rnic_cq_dbq_push(dbq, &d);
		}
		if (tx)
			rnic_cq_cplq_push(txq, &in->txc);
		if (rx)
			rnic_cq_cplq_push(rxq, &in->rxc);
		st->db_ready = ROOM_AFTER(rnic_cq_dbq_room(dbq), db);
		st->txc_ready = ROOM_AFTER(rnic_cq_cplq_room(txq), tx);
		st->rxc_ready = ROOM_AFTER(rnic_cq_cplq_room(rxq), rx);
	}
	out->db_ready = st->db_ready;
	out->txc_ready = st->txc_ready;
	out->rxc_ready = st->rxc_ready;
}
