/* Firmware state and logic: resources of each context, command execution, ARP. */
#ifndef FW_FW_H
#define FW_FW_H

#include <stddef.h>
#include <stdint.h>
#include "rnic_spec.h"
#include "cm.h"

#define FW_VERSION_CODE ((0u << 16) | (1u << 8) | 0u) /* 0.1.0 */
#define FW_ARP_ENTRIES 16
#define FW_ARP_TRIES 8 /* a lossy link still resolves: 8 tries of 50 us */
#define FW_ARP_WAIT_CYCLES 12500 /* 50 us at 250 MHz */
#define FW_FENCE_POLLS 1000000 /* about 30M clocks: a fence is a few hundred */

enum { FW_OWN_PD, FW_OWN_CQ, FW_OWN_SRQ, FW_OWN_QP, FW_OWN_MR, FW_OWN_KINDS };

/* A PD's, CQ's or SRQ's owner (FW_OWN_USED | its context) and users (QPs, MRs or SRQs that use
 * this PD / QPs that use this CQ or SRQ); packed: 3 bytes, for 36,864 of them in the RAM */
struct __attribute__((packed)) fw_owner {
	uint8_t own;
	uint16_t refs;
};

/* A QP's attributes as the firmware keeps them: in context memory (ICM region FWQP), read and
 * written through fw_qp_load/fw_qp_store; on chip only its owner byte (fw.qp_own). */
struct fw_qp {
	uint8_t state, type;
	uint8_t sq_log, rq_log, pmtu, timeout, retry_cnt, rnr_retry, min_rnr, max_rd, max_dest_rd;
	uint8_t tclass, hop_limit, ipv6;
	uint8_t dip6[16];
	uint8_t dmac[6];
	uint8_t use_srq;
	uint32_t pdn, send_cqn, recv_cqn, srqn, access, dest_qpn, rq_psn, sq_psn, qkey, dip;
	uint64_t sq_base, rq_base;
};

/* A memory key's registration as the firmware keeps it: in context memory (ICM region FWMR), read
 * and written through fw_mr_load/fw_mr_store; on chip only its owner byte (fw.mr_own). */
struct fw_mr {
	uint64_t va, len;
	uint32_t gen, tag; /* registrations of this slot; the current key's tag */
	uint32_t mtt_base, npages;
	uint16_t pdn, access; /* both checked before they are stored (MAX_PD, enum ACCESS) */
	uint8_t page_shift;
};

/* Places in the DMA buffer (past the command and its completion) where the DMA engine reads and
 * writes in place what the soft core would otherwise copy, a few clocks a byte */
#define FW_STAGE_REC 2048    /* the QP record fw_qp_load read or fw_qp_store wrote last */
#define FW_STAGE_ENTRY 2176  /* a QPC entry, as the kernels and ICM are given it */
#define FW_STAGE_MR 2304     /* the MR record fw_mr_load read or fw_mr_store wrote last */

/* an owner byte (a QP's, a key's, struct fw_owner's): in use, and by which context */
#define FW_OWN_USED 0x80u
#define FW_OWN_CTX(own) ((own) & 0x7fu)
_Static_assert(RNIC_NUM_CTX <= 0x80, "an owner byte holds its context");
_Static_assert(RNIC_MAX_PD <= 0x10000, "a PD number is kept in 16 bits");
_Static_assert(RNIC_MAX_QP + RNIC_MAX_MPT + RNIC_MAX_SRQ <= 0xffff && 2 * RNIC_MAX_QP <= 0xffff,
	       "a PD's and a CQ's users count in fw_owner.refs");
_Static_assert(sizeof(struct fw_qp) <= RNIC_ICM_FWQP_STRIDE, "struct fw_qp fits its ICM stride");

struct fw_arp {
	uint32_t ip;
	uint8_t mac[6];
	uint8_t valid;
};

struct fw_nd {
	uint8_t ip[16];
	uint8_t mac[6];
	uint8_t valid;
};

struct fw {
	uint32_t ip;
	uint8_t mac[6];
	uint16_t ci[RNIC_NUM_CTX];
	uint16_t owned[RNIC_NUM_CTX][FW_OWN_KINDS]; /* objects of each context, by kind */
	uint32_t next_slot[FW_OWN_KINDS];  /* where the search for a free one starts (free_slot) */
	struct fw_owner pd[RNIC_MAX_PD];
	struct fw_owner cq[RNIC_MAX_CQ];
	struct fw_owner srq[RNIC_MAX_SRQ];
	uint16_t srq_pdn[RNIC_MAX_SRQ];   /* of each SRQ, for its destroy (the PD's refs) */
	uint8_t srq_log[RNIC_MAX_SRQ];    /* its ring's size, for MODIFY_SRQ's limit */
	uint8_t qp_own[RNIC_MAX_QP];      /* FW_OWN_USED | the owning context, by QP index */
	uint32_t qp_rec_qpn;              /* the record in the DMA buffer is this QP's, or 0 (no QPN) */
	uint8_t mr_own[RNIC_MAX_MPT];     /* FW_OWN_USED | the owning context, by key index (the same bits as a QP's) */
	uint32_t mr_rec;                  /* the record in the DMA buffer is key index mr_rec - 1's, or 0 */
	uint32_t mtt_used[RNIC_MAX_MTT / RNIC_MTT_GRAIN / 32]; /* a bit a grain of MTT entries */
	struct fw_arp arp[FW_ARP_ENTRIES];
	uint32_t arp_next;
	uint8_t ip6[16];                  /* link-local, from the MAC (GID 1) */
	struct fw_nd nd[FW_ARP_ENTRIES];  /* IPv6 neighbours */
	uint32_t nd_next;
	uint32_t arp_wanted;              /* the address being resolved: only its reply is learnt */
	uint8_t nd_wanted[16];
	uint32_t drops;
	uint8_t fence;                    /* the last fence token */
	uint8_t dma_window;               /* FW.DMA_WINDOW */
	uint32_t bad_addr;                /* commands refused for naming memory outside the context's window */
	struct fw_gsi_counters gsi;       /* QP1 */
	uint32_t gsi_psn;                 /* QP1's next send PSN */
	struct fw_cm cm[FW_CM_IDS];
	struct fw_cm_evq cm_evq[RNIC_NUM_CTX];
	struct fw_cm_held cm_held[CM_HELD]; /* requests that came before their listener */
	uint32_t cm_gen;                  /* CM IDs made: what the PRF makes each one's IDs and PSN of */
	uint32_t cm_tokens;               /* answers QP1 may still send to peers with no connection */
	uint64_t cm_tokens_at;            /* when the tokens were last counted */
	uint64_t icm[RNIC_ICM_MAX_CHUNKS];/* context memory: the chunks' bus addresses (icm.c) */
	uint32_t icm_n;                   /* chunks taken, 0: none */
	uint32_t icm_writes;              /* DMA writes into it */
};

extern struct fw fw;

/* A configuration write's address (CFG_ADDR): table, entry, 32-bit word */
static inline uint32_t fw_cfg_addr(uint32_t table, uint32_t index, uint32_t word)
{
	return (table << RNIC_CFG_TABLE_SHIFT) | (index << RNIC_CFG_INDEX_SHIFT) | (word << RNIC_CFG_WORD_SHIFT);
}

void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
void fw_printf(const char *fmt, ...);

void fw_init(void);
uint32_t fw_cmd(uint32_t ctx, const uint8_t *cmd, uint8_t *out);
int fw_ctx_reset(uint32_t ctx);
int fw_poll_cmdq(uint32_t ctx);
void fw_poll_frames(void);

/* the IBTA modify-QP table: 0 if the transition and its attribute mask are allowed */
uint32_t fw_modify_qp(uint32_t ctx, const uint8_t *in);
/* the same, the peer's MAC given (the CM has it from the peer's own frames): nothing is resolved */
uint32_t fw_modify_qp_to(uint32_t ctx, const uint8_t *in, const uint8_t *dmac);
uint32_t fw_active_mtu(void); /* enum MTU */
int fw_gid_ipv4(const uint8_t *gid, uint32_t *ip);
uint32_t fw_gid_resolve(const uint8_t *gid, uint8_t *mac); /* ARP or neighbour discovery */
uint32_t fw_qp_transition_ok(uint32_t type, uint32_t cur, uint32_t next, uint32_t mask);

/* ARP (RFC 826) */
uint32_t fw_arp_build(uint8_t *f, uint32_t op, const uint8_t *tha, uint32_t tpa);
void fw_arp_input(const uint8_t *f, uint32_t len);
uint32_t fw_nd_build(uint8_t *f, uint32_t type, const uint8_t *target, const uint8_t *dst, const uint8_t *dmac);
void fw_nd_input(const uint8_t *f, uint32_t len);
int fw_arp_lookup(uint32_t ip, uint8_t *mac);

/* context memory (icm.c): the driver's chunk list; the images of what the kernels are given */
void fw_icm_poll(void);
void fw_icm_write(uint32_t off, const void *src, uint32_t len);
void fw_icm_entry(uint32_t table, uint32_t index, uint32_t w, const uint32_t *words, uint32_t n);
/* QP qpn's record (NULL if context memory cannot be read): valid until the next load of another */
struct fw_qp *fw_qp_load(uint32_t qpn);
void fw_qp_store(uint32_t qpn, const struct fw_qp *q);
/* Key index i's record, the same way */
struct fw_mr *fw_mr_load(uint32_t i);
void fw_mr_store(uint32_t i, const struct fw_mr *m);
/* QP qpn exists and belongs to ctx */
int fw_qp_owned(uint32_t qpn, uint32_t ctx);

/* a free slot of kind FW_OWN_* in [first, max), or max (alloc.c: next fit) */
uint32_t fw_free_slot(uint32_t kind, uint32_t first, uint32_t max);
/* MTT allocation: first fit; returns the base or -1 */
int32_t fw_mtt_alloc(uint32_t n);
void fw_mtt_free(uint32_t base, uint32_t n);

#endif
