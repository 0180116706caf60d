/* The table of CM IDs (fw.cm): who may have one more (each context keeps a reserve), the IDs
 * and PSN a new one gets (the PRF's: unguessable), the connection a message names and whether it
 * came from that connection's peer, the listener of a service ID and the requests it holds. */
#include "cm.h"
#include "fw.h"
#include "prf.h"
#include "rnic_frame.h"

struct fw_cm *cm_id_get(uint32_t ctx, uint32_t id)
{
	return id < FW_CM_IDS && fw.cm[id].used && fw.cm[id].ctx == ctx ? &fw.cm[id] : 0;
}

/* Whether ctx may have one more CM ID: each context keeps RNIC_CM_ID_RESERVED of its own, and
 * beyond them the contexts share what is left, first come (the requests a listener takes count
 * against its context): neither a flood of requests nor another context can take them all. */
static int cm_room(uint32_t ctx)
{
	uint32_t n[RNIC_NUM_CTX] = {0}, i, shared = 0;

	for (i = 0; i < FW_CM_IDS; i++)
		if (fw.cm[i].used)
			n[fw.cm[i].ctx]++;
	for (i = 0; i < RNIC_NUM_CTX; i++)
		shared += n[i] > RNIC_CM_ID_RESERVED ? n[i] - RNIC_CM_ID_RESERVED : 0;
	return n[ctx] < RNIC_CM_ID_RESERVED || shared < FW_CM_IDS - RNIC_NUM_CTX * RNIC_CM_ID_RESERVED;
}

/* A new CM ID of ctx, or -1. Its communication ID: the slot in the low byte (a MAD finds it at
 * once), above it 24 bits of the PRF of the count of IDs made (not guessable, slow to recur);
 * its starting PSN and transaction ID come from the same count through PRFs of their own. */
int32_t cm_id_alloc(uint32_t ctx)
{
	uint32_t i;

	if (!fw_prf_keyed() || !cm_room(ctx))
		return -1;
	for (i = 0; i < FW_CM_IDS; i++) {
		struct fw_cm *c = &fw.cm[i];

		if (c->used)
			continue;
		memset(c, 0, sizeof(*c));
		c->used = 1;
		c->ctx = (uint8_t)ctx;
		c->gen = ++fw.cm_gen;
		c->local_id = ((uint32_t)fw_prf(PRF_CM_ID, c->gen) & ~0xffu) | i;
		return (int32_t)i;
	}
	return -1;
}

/* A starting PSN nobody outside can guess */
uint32_t cm_id_psn(const struct fw_cm *c)
{
	return (uint32_t)fw_prf(PRF_PSN, c->gen) & 0xffffff;
}

/* The message's sender is the connection's peer: its address (the MAC is not compared: on a
 * routed path it is the last router's) */
int cm_id_from_peer(const struct fw_cm *c, const struct cm_peer *p)
{
	return c->v6 == p->v6 && (p->v6 ? !memcmp(c->gid, p->ip6, 16) : c->ip == p->ip);
}

/* The connection a message from p names by our communication ID, in one of the states given. */
struct fw_cm *cm_id_find(const struct cm_peer *p, const uint8_t *mad, uint32_t off, uint32_t states)
{
	uint32_t id = rnic_be32(mad + off);
	struct fw_cm *c;

	if ((id & 0xff) >= FW_CM_IDS)
		return 0;
	c = &fw.cm[id & 0xff];
	return c->used && c->local_id == id && (states >> c->state & 1) && cm_id_from_peer(c, p) ? c : 0;
}

/* The passive side's IDs whose handshake is not done, by the listener they came to: each
 * listener holds at most CM_BACKLOG of them */
#define CM_PENDING (1u << CM_ST_REQ_RCVD | 1u << CM_ST_SIDR_RCVD | 1u << CM_ST_REP_SENT)

/* The listener of service ID sid (FW_CM_IDS: none), and how many requests it holds; or the ID a
 * request from p with the peer's communication ID rid already made (*dup), in one of `states` */
uint32_t cm_id_listener(uint64_t sid, const struct cm_peer *p, uint32_t rid, uint32_t states, uint32_t *pending,
			    struct fw_cm **dup)
{
	uint32_t i, l = FW_CM_IDS, held[FW_CM_IDS] = {0};

	*dup = 0;
	for (i = 0; i < FW_CM_IDS; i++) {
		struct fw_cm *c = &fw.cm[i];

		if (!c->used)
			continue;
		if (1u << c->state & CM_PENDING)
			held[c->listen]++;
		if ((1u << c->state & states) && c->remote_id == rid && cm_id_from_peer(c, p))
			*dup = c;
		if (c->state == CM_ST_LISTEN && c->service_id == sid)
			l = i;
	}
	*pending = l < FW_CM_IDS ? held[l] : 0;
	return l;
}

uint32_t fw_cm_ctx_reset(uint32_t ctx)
{
	uint32_t i, n = 0;

	for (i = 0; i < FW_CM_IDS; i++)
		if (fw.cm[i].used && fw.cm[i].ctx == ctx) {
			fw.cm[i].used = 0;
			n++;
		}
	memset(&fw.cm_evq[ctx], 0, sizeof(fw.cm_evq[ctx]));
	return n;
}
