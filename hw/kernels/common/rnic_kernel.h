/* Shared by the datapath kernels: the tables' layout and the headers they build (frame layout,
 * CRC-32/ICRC and IPv4 checksum: rnic_frame.h).
 *
 * Everything here is Vitis-HLS-synthesizable C: fixed-size data, bounded loops, no heap.
 * The per-clock contract every kernel follows is described in docs/ARCHITECTURE.md
 * ("Kernel contract"): one call of <kernel>_step() per clock, all outputs registered.
 */
#ifndef RNIC_KERNEL_H
#define RNIC_KERNEL_H

#include <stdint.h>
#include "rnic_spec.h"
#include "rnic_ports.h"
#include "rnic_frame.h"

/* The MTT cache (TLB) each kernel that translates keeps in front of context memory's MTT: 4,096
 * lines of 8 entries (one 64-byte beat of ICM each; URAM), direct-mapped by MTT index / 8, a tag
 * word a line (block RAM): the line's index, and which of its entries it holds. */
#ifndef RNIC_TLB_LOG
#define RNIC_TLB_LOG 12 /* a test build cuts it (tests/tests.mk, build/qc2) */
#endif
#define RNIC_TLB_LINES (1u << RNIC_TLB_LOG)
#define RNIC_TLB_ENTRIES RNIC_MTT_GRAIN /* 8 entries of 8 bytes: a beat */
#define TLB_MASK_BITS 8 /* tag word: line index << 8 | entries held */

typedef struct {
	uint32_t w[2 * RNIC_TLB_ENTRIES]; /* entry k: words 2k (low), 2k + 1: as configured, no read-modify-write */
} rnic_tlb_line_t;

/* The MPT cache each kernel keeps in front of context memory's MPT: 1,024 lines of one key's
 * entry (a block RAM row of 36 bytes), direct-mapped by key index, the line's tag in its row:
 * the key index, and which of the entry's words it holds. */
#ifndef RNIC_MPT_LOG
#define RNIC_MPT_LOG 10 /* a test build cuts it (tests/tests.mk, build/qc2) */
#endif
#define RNIC_MPT_LINES (1u << RNIC_MPT_LOG)
#define MPT_HAVE_BITS 8 /* tag: key index << 8 | words held */
#define MPT_HAVE_ALL ((1u << RNIC_MPT_WORDS) - 1)
#define RNIC_MPT_RQ 32 /* MPT entry reads on their way at once (misses and reads ahead) */
#define RNIC_TLB_RQ 32 /* MTT line reads on their way at once (misses and reads ahead) */

/* A row of the MPT cache's tag copy (mpt_tagc): the line's tag, and the words of its entry that
 * place a page in the MTT (VA, MTT_BASE, PAGE), for the look-ahead of the TLB */
typedef struct {
	uint32_t tag, va_lo, va_hi, mtt_base, page;
} rnic_mpt_tagc_t;

typedef struct {
	uint32_t w[RNIC_MPT_WORDS];
	uint32_t tag;
} rnic_mpt_line_t;

/* The datapath's copy of the firmware-owned tables (each kernel that needs them holds its own
 * copy, written by the same configuration writes: a BRAM per reader instead of a shared port).
 * QP contexts are not here: the TX kernel keeps a table of them (rnic_qpc_cfg), the RX kernel a
 * cache in front of context memory (rx.h).
 *
 * The MTT is a cache (tlb): a configuration write of an entry writes it into its line (the line
 * taken for it if another held it), so a registration's entries are there when its key becomes
 * valid; a lookup that misses reads the line from ICM (rnic_tlb_read), and the beat fills the
 * line at the clock's end (rnic_tlb_land). Up to RNIC_TLB_RQ line reads are on their way at once:
 * a lookup that misses waits only for its own line's, and each kernel reads ahead the line of
 * the first page of work still queued (rnic_tlb_hint), so a miss is fetched while the work
 * before it goes on. The firmware writes an entry into ICM before the configuration write, so a
 * line read from ICM is never older than what was written into the cache before the read;
 * entries written while it is on its way are kept over the read's (tq_keep). Live entries never
 * change (a registration's run is new, and freed only after the fence that ends its use), so
 * nothing is written back.
 *
 * The MPT is a cache too (mpt), kept the same way word by word: a configuration write of a word
 * of a key's entry writes it into the key's line (taking the line, all its other words not held,
 * if another key held it); a lookup hits when the line holds the key's whole entry, else the
 * entry is read from ICM (rnic_mpt_read) and lands at the clock's end. Up to RNIC_MPT_RQ reads
 * are on their way at once: a lookup that misses waits only for its own key's, and each kernel
 * reads ahead the keys of work still queued (rnic_mpt_ahead), so a miss is fetched while the
 * work before it goes on. A read whose key is written while it is on its way is dropped when it
 * comes (the write is newer; a lookup then reads again). The firmware writes an entry's words
 * into ICM before it writes them here, and invalidates an entry (word 0, last) before it changes
 * it, so a line is never older than ICM, nor valid with another key's words. */
typedef struct {
	rnic_mpt_line_t mpt[RNIC_MPT_LINES];
	rnic_tlb_line_t tlb[RNIC_TLB_LINES];
	uint32_t tlb_tag[RNIC_TLB_LINES];
	uint32_t port[8];
	/* MTT line reads on their way (registers), answered in order: tq_n lines from tq_line,
	 * issued at tq_t0, entries written since (tq_keep, kept over the read's); tq_got lines of the
	 * oldest come. The line come (fill, line fill_line) lands this clock (fill_land), but for the
	 * entries written since (fill_keep). */
	uint32_t tq_line[RNIC_TLB_RQ], tq_t0[RNIC_TLB_RQ];
	uint16_t tq_keep[RNIC_TLB_RQ];
	uint8_t tq_n[RNIC_TLB_RQ];
	uint32_t tq_head, tq_tail;
	uint8_t tq_got, fill_land, fill_keep;
	uint8_t tq_bad;              /* the host refused a read of line tq_bad_line: it did not land,
				      * and the next lookup that misses in it fails (rnic_tlb_get) */
	uint32_t tq_bad_line;
	uint32_t fill_line;
	rnic_tlb_line_t fill;
	uint8_t cfg_mtt;             /* a configuration write of the MTT this clock: no lookup */
	uint8_t ahead;               /* a line to read ahead (rnic_tlb_get) */
	uint32_t ahead_line, ahead_next; /* ... and the line after the last ones read */
	/* the TLB's tags again (tlb_tagc, block RAM), for the look-ahead (rnic_tlb_hint): lines
	 * asked for by work queued, a register each (th_a: from the MPT cache's look-ahead, th_b: from
	 * an MPT entry read ahead as it lands), and the one to read (tw_line) */
	uint32_t tlb_tagc[RNIC_TLB_LINES];
	uint8_t th_a, th_b, tw;
	uint32_t th_a_line, th_b_line, tw_line;
	uint32_t stat_hits, stat_misses, stat_evictions, stat_miss_cycles;
	/* the MPT cache's tags again (mpt_tagc, block RAM), for the look-ahead (rnic_mpt_ahead): the
	 * lookups take both ports of mpt's */
	rnic_mpt_tagc_t mpt_tagc[RNIC_MPT_LINES];
	/* MPT entry reads on their way (registers), answered in order: key index mq_idx, issued at
	 * mq_t0, written since (mq_stale: its data is dropped), the address the work that asked
	 * for it starts at (mq_va, mq_xl: one), whose MTT line is looked for as the entry lands; the
	 * entry come (mf, key index mf_idx, address mf_va) lands this clock (mf_land), unless written
	 * since (mf_drop) */
	uint32_t mq_idx[RNIC_MPT_RQ], mq_t0[RNIC_MPT_RQ];
	uint64_t mq_va[RNIC_MPT_RQ];
	uint32_t mq_head, mq_tail;
	uint8_t mq_stale[RNIC_MPT_RQ], mq_xl[RNIC_MPT_RQ];
	uint8_t mf_land, mf_drop, mf_xl, cfg_mpt;
	uint8_t mq_bad;              /* the same for the entry of key index mq_bad_idx (rnic_mpt_get) */
	uint32_t mq_bad_idx;
	uint32_t mf_idx;
	uint64_t mf_va;
	uint32_t mf[RNIC_MPT_WORDS];
	uint32_t mpt_hits, mpt_misses, mpt_evictions, mpt_miss_cycles;
} rnic_tables_t;

/* A configuration write's address: table, entry index, 32-bit word of the entry */
#define RNIC_CFG_TBL(addr) ((addr) >> RNIC_CFG_TABLE_SHIFT)
#define RNIC_CFG_IDX(addr) (((addr) >> RNIC_CFG_INDEX_SHIFT) & ((1u << (RNIC_CFG_TABLE_SHIFT - RNIC_CFG_INDEX_SHIFT)) - 1))
#define RNIC_CFG_WORD(addr) (((addr) >> RNIC_CFG_WORD_SHIFT) & 0x3f)

/* A configuration write of a QP context word: the entry and word it writes, or -1 for none */
static inline int rnic_qpc_word(uint32_t addr, uint32_t *index)
{
	uint32_t idx = RNIC_CFG_IDX(addr), word = RNIC_CFG_WORD(addr);

	*index = idx;
	return RNIC_CFG_TBL(addr) == RNIC_CFG_TBL_QPC && idx < RNIC_MAX_QP && word < RNIC_QPC_WORDS ? (int)word : -1;
}

/* A configuration write of word `word` (0 low, 1 high) of MTT entry idx. */
static inline void rnic_tlb_cfg(rnic_tables_t *t, uint32_t idx, uint32_t word, uint32_t data)
{
	uint32_t line = idx / RNIC_TLB_ENTRIES, k = idx % RNIC_TLB_ENTRIES, l = line % RNIC_TLB_LINES, q;
	uint32_t tag = t->tlb_tag[l];

	if (idx >= RNIC_MAX_MTT)
		return;
	if (tag >> TLB_MASK_BITS != line) /* the line is taken for this entry */
		tag = line << TLB_MASK_BITS;
	t->tlb_tag[l] = t->tlb_tagc[l] = tag | 1u << k;
	t->tlb[l].w[2 * k + word] = data;
	for (q = 0; q < RNIC_TLB_RQ; q++) /* reads on their way of this line: kept over theirs */
		if ((q - t->tq_head) % RNIC_TLB_RQ < t->tq_tail - t->tq_head && line - t->tq_line[q] < t->tq_n[q])
			t->tq_keep[q] |= (uint16_t)(1u << ((line - t->tq_line[q]) * RNIC_TLB_ENTRIES + k));
	if (t->fill_land && t->fill_line == line)
		t->fill_keep |= (uint8_t)(1u << k);
}

/* A configuration write of word `word` of key index idx's MPT entry. */
static inline void rnic_mpt_cfg(rnic_tables_t *t, uint32_t idx, uint32_t word, uint32_t data)
{
	rnic_mpt_line_t *l = &t->mpt[idx % RNIC_MPT_LINES];
	rnic_mpt_tagc_t *c = &t->mpt_tagc[idx % RNIC_MPT_LINES];
	uint32_t tag = l->tag, k;

	if (idx >= RNIC_MAX_MPT || word >= RNIC_MPT_WORDS)
		return;
	if (tag >> MPT_HAVE_BITS != idx) { /* the line is taken for this key */
		if (tag & MPT_HAVE_ALL)
			t->mpt_evictions++;
		tag = idx << MPT_HAVE_BITS;
	}
	l->tag = tag | 1u << word;
	c->tag = tag | 1u << word;
	if (word == RNIC_MPT_VA_LO / 4)
		c->va_lo = data;
	else if (word == RNIC_MPT_VA_HI / 4)
		c->va_hi = data;
	else if (word == RNIC_MPT_MTT_BASE / 4)
		c->mtt_base = data;
	else if (word == RNIC_MPT_PAGE / 4)
		c->page = data;
	l->w[word] = data;
	for (k = 0; k < RNIC_MPT_RQ; k++) /* reads on their way of this key: newer than theirs */
		t->mq_stale[k] |= t->mq_idx[k] == idx;
	t->mf_drop |= t->mf_land && t->mf_idx == idx;
}

/* Apply one configuration write to the MPT, MTT or port addresses. */
static inline void rnic_tables_cfg(rnic_tables_t *t, uint32_t addr, uint32_t data)
{
	uint32_t tbl = RNIC_CFG_TBL(addr), idx = RNIC_CFG_IDX(addr), word = RNIC_CFG_WORD(addr);

	if (tbl == RNIC_CFG_TBL_MPT)
		rnic_mpt_cfg(t, idx, word, data);
	else if (tbl == RNIC_CFG_TBL_MTT && word < 2)
		rnic_tlb_cfg(t, idx, word, data);
	else if (tbl == RNIC_CFG_TBL_PORT && idx == 0 && word < 8)
		t->port[word] = data;
}

/* a field of one QPC entry (a row read once, or a copy of the table) */
#define QPC_RW(row, reg) ((row)[RNIC_QPC_##reg / 4])
#define QPC_RF(row, reg, f) RNIC_GET(RNIC_QPC_##reg##_##f, QPC_RW(row, reg))

/* The MPT entry e (RNIC_MPT_WORDS words) for `key` (index << KEY_TAG_BITS | generation tag):
 * valid, of this generation, granting `access`, covering [va, va + len). */
static inline int rnic_mpt_live(const uint32_t *e, uint32_t key, uint32_t access, uint64_t va, uint64_t len)
{
	uint32_t ctrl = e[RNIC_MPT_CTRL / 4];
	uint64_t base = ((uint64_t)e[RNIC_MPT_VA_HI / 4] << 32) | e[RNIC_MPT_VA_LO / 4];
	uint64_t size = ((uint64_t)e[RNIC_MPT_LEN_HI / 4] << 32) | e[RNIC_MPT_LEN_LO / 4];

	return RNIC_GET(RNIC_MPT_CTRL_VALID, ctrl) &&
	       RNIC_GET(RNIC_MPT_CTRL_TAG, ctrl) == (key & ((1u << RNIC_KEY_TAG_BITS) - 1)) &&
	       (RNIC_GET(RNIC_MPT_CTRL_ACCESS, ctrl) & access) == access && va >= base && len <= size &&
	       va - base <= size - len;
}

/* The same, and of protection domain pdn (a message's start, IBTA 10.6): 0, or -1. */
static inline int rnic_mpt_check(const uint32_t *e, uint32_t key, uint32_t pdn, uint32_t access, uint64_t va,
				 uint64_t len)
{
	return rnic_mpt_live(e, key, access, va, len) && e[RNIC_MPT_PDN / 4] == pdn ? 0 : -1;
}

/* Context memory (ICM) as a kernel reaches it: the chunk list the firmware copies in
 * (CFG_TBL_ICM), and the bus address of offset `off` there, 0 when no memory was given.
 * rnic_icm_chunks: a write of the list into chunks[0, n) (a stage may keep only the chunks it
 * reads); whether it was one. */
static inline int rnic_icm_chunks(uint64_t *chunks, uint32_t n, uint32_t addr, uint32_t data)
{
	uint32_t idx = RNIC_CFG_IDX(addr), word = RNIC_CFG_WORD(addr);

	if (RNIC_CFG_TBL(addr) != RNIC_CFG_TBL_ICM || idx >= n || word > 1)
		return 0;
	chunks[idx] = word ? (chunks[idx] & 0xffffffffull) | ((uint64_t)data << 32) :
			     (chunks[idx] & ~0xffffffffull) | data;
	return 1;
}

static inline void rnic_icm_cfg(uint64_t icm[RNIC_ICM_MAX_CHUNKS], uint32_t addr, uint32_t data)
{
	rnic_icm_chunks(icm, RNIC_ICM_MAX_CHUNKS, addr, data);
}

static inline uint64_t rnic_icm_bus(const uint64_t icm[RNIC_ICM_MAX_CHUNKS], uint32_t off)
{
	uint64_t c = icm[(off >> RNIC_ICM_CHUNK_LOG) % RNIC_ICM_MAX_CHUNKS];

	return c ? c + (off & ((1u << RNIC_ICM_CHUNK_LOG) - 1)) : 0;
}

/* The MTT index of virtual address va in a region of pages of 2^PAGE.SHIFT bytes from `base`,
 * its first page's entry mtt_base (DMA requests never cross 4 KiB, so one translation serves a
 * whole request), and va's offset in its page */
static inline uint32_t rnic_mtt_of(uint64_t base, uint32_t mtt_base, uint32_t page, uint64_t va, uint64_t *off)
{
	uint32_t sh = RNIC_GET(RNIC_MPT_PAGE_SHIFT, page);

	*off = va & ((1ull << sh) - 1);
	return (mtt_base + (uint32_t)((va >> sh) - (base >> sh))) & (RNIC_MAX_MTT - 1);
}

/* ... inside the MR whose MPT entry is e. Only called for an address rnic_mpt_live() admitted:
 * the page lies inside the MR's own MTT entries. */
static inline uint32_t rnic_mtt_index(const uint32_t e[RNIC_MPT_WORDS], uint64_t va, uint64_t *off)
{
	return rnic_mtt_of(((uint64_t)e[RNIC_MPT_VA_HI / 4] << 32) | e[RNIC_MPT_VA_LO / 4], e[RNIC_MPT_MTT_BASE / 4],
			   e[RNIC_MPT_PAGE / 4], va, off);
}

/* Whether an MPT read of key index i is on its way (a comparison with each, in parallel: a bit
 * each, then one test of them all, a tree rather than a chain of ORs) */
#if RNIC_MPT_RQ > 32 || RNIC_TLB_RQ > 32
#error "the reads on their way are a 32-bit mask"
#endif
static inline int rnic_mpt_coming(const rnic_tables_t *t, uint32_t i)
{
	uint32_t k, on = 0;

	for (k = 0; k < RNIC_MPT_RQ; k++)
		on |= (uint32_t)((k - t->mq_head) % RNIC_MPT_RQ < t->mq_tail - t->mq_head && t->mq_idx[k] == i) << k;
	return on != 0;
}

/* Whether key's entry may be read now: fewer than RNIC_MPT_RQ reads on their way, none of it */
static inline int rnic_mpt_can_read(const rnic_tables_t *t, uint32_t key)
{
	return t->mq_tail - t->mq_head < RNIC_MPT_RQ && !rnic_mpt_coming(t, key >> RNIC_KEY_TAG_BITS);
}

/* The MPT entry of `key` from the cache into e (a row read into registers): 1; a key index past
 * the table, or a miss without context memory to read the entry from: 1 and an entry of zeros
 * (no key); 0: a miss, to be read now (rnic_mpt_read); -1: wait (its read is on its way, or
 * RNIC_MPT_RQ are, or an entry lands this clock, or the firmware writes the MPT in it: the ports
 * are theirs). */
static inline int rnic_mpt_get(rnic_tables_t *t, const uint64_t icm[RNIC_ICM_MAX_CHUNKS], uint32_t key,
			       uint32_t e[RNIC_MPT_WORDS])
{
	uint32_t i = key >> RNIC_KEY_TAG_BITS, k;
	const rnic_mpt_line_t *l = &t->mpt[i % RNIC_MPT_LINES];
	int hit;

	if (i < RNIC_MAX_MPT && (t->cfg_mpt || t->mf_land))
		return -1;
	hit = i < RNIC_MAX_MPT && l->tag == (i << MPT_HAVE_BITS | MPT_HAVE_ALL);
	if (!hit && t->mq_bad && t->mq_bad_idx == i)
		t->mq_bad = 0; /* its read was refused: no entry, this once */
	else if (!hit && i < RNIC_MAX_MPT && rnic_icm_bus(icm, RNIC_ICM_MPT_OFF))
		return rnic_mpt_can_read(t, key) ? 0 : -1;
	for (k = 0; k < RNIC_MPT_WORDS; k++)
		e[k] = hit ? l->w[k] : 0;
	t->mpt_hits += (uint32_t)hit;
	return 1;
}

/* After a lookup of key that did not find its entry (rnic_mpt_get 0 or -1): whether its read is
 * still to be made, now or once fewer than RNIC_MPT_RQ reads are on their way (not on its way,
 * the ports not the firmware's or a landing's) */
static inline int rnic_mpt_wanted(const rnic_tables_t *t, uint32_t key)
{
	uint32_t i = key >> RNIC_KEY_TAG_BITS;

	return i < RNIC_MAX_MPT && !t->cfg_mpt && !t->mf_land && !rnic_mpt_coming(t, i);
}

/* Whether to read key's entry ahead of its use (looked up in mpt_tagc, a read of its own): 1 when
 * the line holds no whole entry of it and no read of it is on its way (rnic_mpt_read then, which
 * makes none without context memory); 0 when it needs none; -1: ask again, it cannot be known or
 * read this clock (the tags are written in it, or RNIC_MPT_RQ reads are on their way, or a line
 * asked for before is not yet looked at). xl: the work starts at va under the key, and its MTT
 * line is asked for (th_a) when the entry is there. */
static inline int rnic_mpt_ahead(rnic_tables_t *t, uint32_t key, uint64_t va, uint32_t xl)
{
	uint32_t i = key >> RNIC_KEY_TAG_BITS;
	const rnic_mpt_tagc_t *c = &t->mpt_tagc[i % RNIC_MPT_LINES];
	uint64_t off;

	if (i >= RNIC_MAX_MPT)
		return 0;
	if (t->cfg_mpt || t->mf_land || (xl && t->th_a))
		return -1;
	if (c->tag == (i << MPT_HAVE_BITS | MPT_HAVE_ALL)) {
		if (xl) { /* only work that translates asks for a line; one waiting in th_a stays */
			t->th_a = 1;
			t->th_a_line = rnic_mtt_of((uint64_t)c->va_hi << 32 | c->va_lo, c->mtt_base, c->page, va, &off) /
				       RNIC_TLB_ENTRIES;
		}
		return 0;
	}
	if (rnic_mpt_coming(t, i))
		return 0;
	return rnic_mpt_can_read(t, key) ? 1 : -1;
}

/* The read of key's MPT entry (after a miss, or ahead of work at va, xl): its bus address
 * (RNIC_ICM_MPT_STRIDE bytes, the first half of a beat), its beat to rnic_mpt_filled; 0, and
 * no read, without context memory. */
static inline uint64_t rnic_mpt_read(rnic_tables_t *t, const uint64_t icm[RNIC_ICM_MAX_CHUNKS], uint32_t key,
				     uint64_t va, uint32_t xl, uint32_t now)
{
	uint32_t q = t->mq_tail % RNIC_MPT_RQ, i = key >> RNIC_KEY_TAG_BITS;
	uint64_t bus = rnic_icm_bus(icm, RNIC_ICM_MPT_OFF + i * RNIC_ICM_MPT_STRIDE);

	if (!bus)
		return 0;
	t->mq_tail++;
	t->mq_idx[q] = i;
	t->mq_t0[q] = now;
	t->mq_stale[q] = 0;
	t->mq_va[q] = va;
	t->mq_xl[q] = (uint8_t)xl;
	t->mpt_misses++;
	return bus;
}

/* The oldest read's beat came: its entry lands at the clock's end, unless written meanwhile. A
 * beat the host refused (err) does not land: the next lookup of the key that misses finds no
 * entry (the work that waited for it fails its check), the one after reads it again. */
static inline void rnic_mpt_filled(rnic_tables_t *t, const uint8_t *beat, uint32_t err, uint32_t now)
{
	uint32_t k, q = t->mq_head++ % RNIC_MPT_RQ;

	for (k = 0; k < RNIC_MPT_WORDS; k++)
		t->mf[k] = (uint32_t)rnic_rd_le(beat + 4 * k, 4);
	t->mpt_miss_cycles += now - t->mq_t0[q];
	t->mf_idx = t->mq_idx[q];
	t->mf_drop = t->mq_stale[q] | (uint8_t)err;
	t->mq_bad = (uint8_t)err;
	t->mq_bad_idx = t->mq_idx[q];
	t->mf_va = t->mq_va[q];
	t->mf_xl = t->mq_xl[q];
	t->mf_land = 1;
}

/* The clock's end: an entry read lands whole (a clock later when the firmware writes the MPT in
 * this one: its write takes the port). The next beat is taken once it has. */
static inline void rnic_mpt_land(rnic_tables_t *t)
{
	rnic_mpt_line_t *l = &t->mpt[t->mf_idx % RNIC_MPT_LINES];
	uint64_t off;
	uint32_t k;

	if (!t->mf_land || t->cfg_mpt)
		return;
	t->mf_land = 0;
	if (t->mf_drop)
		return;
	if ((l->tag & MPT_HAVE_ALL) && l->tag >> MPT_HAVE_BITS != t->mf_idx)
		t->mpt_evictions++;
	for (k = 0; k < RNIC_MPT_WORDS; k++)
		l->w[k] = t->mf[k];
	l->tag = t->mf_idx << MPT_HAVE_BITS | MPT_HAVE_ALL;
	t->mpt_tagc[t->mf_idx % RNIC_MPT_LINES] = (rnic_mpt_tagc_t){l->tag, t->mf[RNIC_MPT_VA_LO / 4],
		t->mf[RNIC_MPT_VA_HI / 4], t->mf[RNIC_MPT_MTT_BASE / 4], t->mf[RNIC_MPT_PAGE / 4]};
	if (t->mf_xl) { /* the work that asked for it: its first page's line */
		t->th_b = 1;
		t->th_b_line = rnic_mtt_index(t->mf, t->mf_va, &off) / RNIC_TLB_ENTRIES;
	}
}

/* Whether a read of MTT line `line` is on its way (a comparison with each, in parallel, as
 * rnic_mpt_coming) */
static inline int rnic_tlb_coming(const rnic_tables_t *t, uint32_t line)
{
	uint32_t q, on = 0;

	for (q = 0; q < RNIC_TLB_RQ; q++)
		on |= (uint32_t)((q - t->tq_head) % RNIC_TLB_RQ < t->tq_tail - t->tq_head && line - t->tq_line[q] < t->tq_n[q]) << q;
	return on != 0;
}

/* what a translation whose read the host refused gives (rnic_tlb_filled): no page's address */
#define RNIC_BUS_FAULT (~0ull)

/* MTT entry mi from the TLB: 1 and the page's bus address in *bus (RNIC_BUS_FAULT, once, when
 * the host refused its line's read); 0: a miss, to be read now
 * (rnic_tlb_read); -1: wait (its line's read is on its way, or RNIC_TLB_RQ are, or a line lands
 * this clock, or the firmware writes the MTT in it: the tag's ports are theirs). `on`: the access
 * goes on past this page (a message's pages in order): a hit then looks at one more tag (the
 * second port), the next line's, or once lines were read ahead the one after them, and, that line
 * absent, marks it to be read ahead (rnic_tlb_read). Reads take two lines where they can: a
 * region read or written in order is read one to two lines ahead of its use, 1,024 clocks of
 * 4 KiB pages at line rate, more than the TX kernel's read takes to come back behind the
 * payload it asked for before it (TX_CREDIT, 512 clocks, and the round trip). */
static inline int rnic_tlb_get(rnic_tables_t *t, uint32_t mi, uint64_t *bus, uint32_t on)
{
	uint32_t line = mi / RNIC_TLB_ENTRIES, k = mi % RNIC_TLB_ENTRIES, l = line % RNIC_TLB_LINES, tag;
	uint32_t next = t->ahead_next - line - 1 < 2 ? t->ahead_next : line + 1;

	if (t->cfg_mtt || t->fill_land)
		return -1;
	tag = t->tlb_tag[l];
	if (tag >> TLB_MASK_BITS == line && ((tag >> k) & 1)) {
		*bus = (uint64_t)t->tlb[l].w[2 * k + 1] << 32 | t->tlb[l].w[2 * k];
		t->stat_hits++;
		next %= RNIC_MAX_MTT / RNIC_TLB_ENTRIES;
		if (on && !t->ahead && t->tlb_tag[next % RNIC_TLB_LINES] >> TLB_MASK_BITS != next &&
		    !rnic_tlb_coming(t, next)) {
			t->ahead = 1;
			t->ahead_line = next;
		}
		return 1;
	}
	if (t->tq_bad && t->tq_bad_line == line && !rnic_tlb_coming(t, line)) {
		t->tq_bad = 0; /* its read was refused */
		*bus = RNIC_BUS_FAULT;
		return 1;
	}
	return rnic_tlb_coming(t, line) || t->tq_tail - t->tq_head >= RNIC_TLB_RQ ? -1 : 0;
}

/* ... and of MTT entry mi after rnic_tlb_get 0 or -1 (as rnic_mpt_wanted) */
static inline int rnic_tlb_wanted(const rnic_tables_t *t, uint32_t mi)
{
	return !t->cfg_mtt && !t->fill_land && !rnic_tlb_coming(t, mi / RNIC_TLB_ENTRIES);
}

/* The look-ahead, at the clock's start (before this clock's tag writes): a line asked for by work
 * queued (th_b before th_a), looked up in tlb_tagc, to be read (tw, rnic_tlb_read) when neither
 * there nor on its way. It waits while the tags are written (a configuration write, or a line
 * landing), while RNIC_TLB_RQ reads are on their way, and while the last one found is not read. */
static inline void rnic_tlb_hint(rnic_tables_t *t)
{
	uint32_t line = t->th_b ? t->th_b_line : t->th_a_line, tag;

	if ((!t->th_a && !t->th_b) || t->tw || t->cfg_mtt || t->fill_land || t->tq_tail - t->tq_head >= RNIC_TLB_RQ)
		return;
	if (t->th_b)
		t->th_b = 0;
	else
		t->th_a = 0;
	tag = t->tlb_tagc[line % RNIC_TLB_LINES];
	if ((tag >> TLB_MASK_BITS == line && (tag & ((1u << RNIC_TLB_ENTRIES) - 1))) || rnic_tlb_coming(t, line))
		return;
	t->tw = 1;
	t->tw_line = line;
}

/* The read a kernel makes for its TLB, in a free read slot of its own: the line of MTT entry mi
 * after a miss (kind RNIC_TLB_MISS), the line marked to be read ahead (RNIC_TLB_NEXT) or the one
 * the look-ahead found (RNIC_TLB_HINT). Its bus address, and its length in *len (lines of 8
 * entries, a beat each: two after a miss or ahead when the next line is in the same 4 KiB of
 * ICM); 0: no read (none marked, or marked and since on its way, or RNIC_TLB_RQ on their way,
 * or no context memory). Each beat goes to rnic_tlb_filled. */
#define RNIC_TLB_MISS 0
#define RNIC_TLB_NEXT 1
#define RNIC_TLB_HINT 2
static inline uint64_t rnic_tlb_read(rnic_tables_t *t, const uint64_t icm[RNIC_ICM_MAX_CHUNKS], uint32_t mi,
				     uint32_t kind, uint32_t now, uint32_t *len)
{
	uint32_t line = kind == RNIC_TLB_MISS ? mi / RNIC_TLB_ENTRIES : kind == RNIC_TLB_NEXT ? t->ahead_line : t->tw_line;
	uint32_t q = t->tq_tail % RNIC_TLB_RQ, n;

	if (!rnic_icm_bus(icm, RNIC_ICM_MTT_OFF) || t->tq_tail - t->tq_head >= RNIC_TLB_RQ ||
	    (kind == RNIC_TLB_NEXT && !t->ahead) || (kind == RNIC_TLB_HINT && !t->tw))
		return 0;
	if (kind == RNIC_TLB_HINT)
		t->tw = 0;
	else
		t->ahead = 0;
	if (kind != RNIC_TLB_MISS && rnic_tlb_coming(t, line)) /* asked for since */
		return 0;
	n = kind != RNIC_TLB_HINT && line % (4096 / RNIC_BEAT) != 4096 / RNIC_BEAT - 1 &&
	    line + 1 < RNIC_MAX_MTT / RNIC_TLB_ENTRIES ? 2 : 1;
	if (kind != RNIC_TLB_HINT)
		t->ahead_next = line + n;
	t->tq_tail++;
	t->tq_line[q] = line;
	t->tq_n[q] = (uint8_t)n;
	t->tq_t0[q] = now;
	t->tq_keep[q] = 0;
	t->stat_misses++;
	*len = RNIC_BEAT * n;
	return rnic_icm_bus(icm, RNIC_ICM_MTT_OFF + line * RNIC_TLB_ENTRIES * RNIC_ICM_MTT_STRIDE);
}

/* A beat of the oldest read came: its line, but for the entries written since the read was
 * issued, lands at the clock's end (the next beat is taken once it has). Of a beat the host
 * refused (err) no entry lands: the next lookup that misses in its line gets RNIC_BUS_FAULT (the
 * work that waited for it fails as for its region gone), the one after reads it again. */
static inline void rnic_tlb_filled(rnic_tables_t *t, const uint8_t *beat, uint32_t err, uint32_t now)
{
	uint32_t k, q = t->tq_head % RNIC_TLB_RQ;

	for (k = 0; k < 2 * RNIC_TLB_ENTRIES; k++)
		t->fill.w[k] = (uint32_t)rnic_rd_le(beat + 4 * k, 4);
	if (!t->tq_got)
		t->stat_miss_cycles += now - t->tq_t0[q];
	t->fill_line = t->tq_line[q] + t->tq_got;
	t->fill_keep = err ? (1u << RNIC_TLB_ENTRIES) - 1 : (uint8_t)(t->tq_keep[q] >> (t->tq_got * RNIC_TLB_ENTRIES));
	t->fill_land = 1;
	t->tq_bad = (uint8_t)err;
	t->tq_bad_line = t->fill_line;
	if (++t->tq_got == t->tq_n[q]) {
		t->tq_got = 0;
		t->tq_head++;
	}
}

/* The clock's end: a line filled goes in (a clock later when the firmware writes the MTT in this
 * one: its write takes the tag's ports), each entry written since its read was issued kept as
 * the cache holds it, or, its line put out meanwhile, left out (read again when used). */
static inline void rnic_tlb_land(rnic_tables_t *t)
{
	uint32_t line = t->fill_line, l = line % RNIC_TLB_LINES, old, k, all = (1u << RNIC_TLB_ENTRIES) - 1;

	if (!t->fill_land || t->cfg_mtt)
		return;
	old = t->tlb_tag[l];
	if ((old & all) && old >> TLB_MASK_BITS != line)
		t->stat_evictions++;
	for (k = 0; k < RNIC_TLB_ENTRIES; k++) /* an entry's write enable */
		if (!((t->fill_keep >> k) & 1)) {
			t->tlb[l].w[2 * k] = t->fill.w[2 * k];
			t->tlb[l].w[2 * k + 1] = t->fill.w[2 * k + 1];
		}
	t->tlb_tag[l] = t->tlb_tagc[l] = line << TLB_MASK_BITS | (all & ~t->fill_keep) |
					 (old >> TLB_MASK_BITS == line ? old & t->fill_keep : 0);
	t->fill_land = 0;
}

/* The TLB's and the MPT cache's counters into a kernel's outputs (TX and RX name them alike) */
#define RNIC_CACHES_STATS_OUT(o, t)                                                                       \
	((o)->stat_tlb_hits = (t)->stat_hits, (o)->stat_tlb_misses = (t)->stat_misses,                    \
	 (o)->stat_tlb_evictions = (t)->stat_evictions, (o)->stat_tlb_miss_cycles = (t)->stat_miss_cycles, \
	 (o)->stat_mpt_hits = (t)->mpt_hits, (o)->stat_mpt_misses = (t)->mpt_misses,                       \
	 (o)->stat_mpt_evictions = (t)->mpt_evictions, (o)->stat_mpt_miss_cycles = (t)->mpt_miss_cycles)

/* The clock's start: whether the firmware writes the MTT or the MPT in it (their lookups and
 * landings wait). */
static inline void rnic_caches_clock(rnic_tables_t *t, uint32_t cfg_valid, uint32_t cfg_addr)
{
	t->cfg_mtt = cfg_valid && RNIC_CFG_TBL(cfg_addr) == RNIC_CFG_TBL_MTT;
	t->cfg_mpt = cfg_valid && RNIC_CFG_TBL(cfg_addr) == RNIC_CFG_TBL_MPT;
}

/* The reset: nothing on its way, counters at zero (the lines stay: the firmware's writes keep
 * them true) */
/* A configuration write of the fence table: its token, which the kernel echoes (FENCE) once the
 * work it took before is done. Returns whether it was one. */
static inline int rnic_cfg_fence(uint32_t valid, uint32_t addr, uint32_t data, uint8_t *token)
{
	if (!valid || RNIC_CFG_TBL(addr) != RNIC_CFG_TBL_FENCE)
		return 0;
	*token = (uint8_t)data;
	return 1;
}

/* After a reset a kernel clears its tables by a sweep, one entry of each a clock for RNIC_MAX_QP
 * clocks, the longest table: its counter reaches RNIC_SWEPT when it is done. */
#define RNIC_SWEPT RNIC_MAX_QP

/* line i of the caches (the sweep): no line valid, nothing held */
static inline void rnic_tables_sweep(rnic_tables_t *t, uint32_t i)
{
	if (i < RNIC_TLB_LINES)
		t->tlb_tag[i % RNIC_TLB_LINES] = t->tlb_tagc[i % RNIC_TLB_LINES] = 0;
	if (i < RNIC_MPT_LINES) {
		t->mpt[i % RNIC_MPT_LINES].tag = 0;
		t->mpt_tagc[i % RNIC_MPT_LINES].tag = 0;
	}
}

static inline void rnic_caches_reset(rnic_tables_t *t)
{
	t->tq_head = t->tq_tail = t->tq_got = t->fill_land = t->ahead = t->th_a = t->th_b = t->tw = 0;
	t->mq_head = t->mq_tail = t->mf_land = t->mq_bad = t->tq_bad = 0;
	t->stat_hits = t->stat_misses = t->stat_evictions = t->stat_miss_cycles = 0;
	t->mpt_hits = t->mpt_misses = t->mpt_evictions = t->mpt_miss_cycles = 0;
}

/* Path MTU from the QPC's enum ibv_mtu value: 1 << rnic_mtu_shift bytes */
static inline uint32_t rnic_mtu_shift(uint32_t pmtu)
{
	return pmtu >= 1 && pmtu <= 5 ? 7 + pmtu : 10;
}

static inline uint32_t rnic_mtu_bytes(uint32_t pmtu)
{
	return 1u << rnic_mtu_shift(pmtu);
}

/* Packets of a message of len bytes at path MTU pmtu (enum ibv_mtu): a shift, the MTU being a
 * power of two. */
static inline uint32_t rnic_npkts(uint32_t len, uint32_t pmtu)
{
	return len ? ((len - 1) >> rnic_mtu_shift(pmtu)) + 1 : 1;
}

/* Our MAC (bytes 0..5 at p) and IPv4 address from the PORT table. */
static inline void rnic_port_mac(const uint32_t *port, uint8_t *p)
{
	rnic_put_be16(p, port[RNIC_PORTC_MAC_HI / 4]);
	rnic_put_be32(p + 2, port[RNIC_PORTC_MAC_LO / 4]);
}

/* A connected QP's peer: its IPv4 address (QPC DIP), or its IPv6 address (DIP6_0..3, CTRL.IPV6) */
typedef struct {
	uint32_t dip, dip6[4];
} rnic_peer_t;

/* Apply the firmware's write of QPC word `word` to a peer's address, if it is one of its words */
static inline void rnic_peer_cfg(rnic_peer_t *p, uint32_t word, uint32_t v)
{
	if (word == RNIC_QPC_DIP / 4)
		p->dip = v;
	else if (word >= RNIC_QPC_DIP6_0 / 4 && word <= RNIC_QPC_DIP6_3 / 4)
		p->dip6[word - RNIC_QPC_DIP6_0 / 4] = v;
}

/* A QP's path: the QPC fields its packets' headers carry (DMAC, DIP or DIP6, NET, DEST_QPN, and
 * the QKEY a UD send may take), with the CTRL bits the packet builder reads. The packet builder
 * keeps one a QP (the hot part of the QPC it needs per packet), set by rnic_path_cfg. */
typedef struct {
	uint8_t ctl;        /* CTRL's VALID (bit 0), IPV6 (bit 1), PMTU (bits 2..4) */
	uint16_t dmac_hi;
	uint32_t dmac_lo, net, dest_qpn, qkey;
	rnic_peer_t peer;
} rnic_path_t;

#define RNIC_PATH_VALID(p) ((p)->ctl & 1u)
#define RNIC_PATH_V6(p) (((p)->ctl >> 1) & 1u)
#define RNIC_PATH_PMTU(p) ((uint32_t)(p)->ctl >> 2)

/* Apply the firmware's write of QPC word `word` to a QP's path. */
static inline void rnic_path_cfg(rnic_path_t *p, uint32_t word, uint32_t v)
{
	switch (word) {
	case RNIC_QPC_CTRL / 4:
		p->ctl = (uint8_t)(RNIC_GET(RNIC_QPC_CTRL_VALID, v) | RNIC_GET(RNIC_QPC_CTRL_IPV6, v) << 1 |
				   RNIC_GET(RNIC_QPC_CTRL_PMTU, v) << 2);
		break;
	case RNIC_QPC_DMAC_HI / 4: p->dmac_hi = (uint16_t)v; break;
	case RNIC_QPC_DMAC_LO / 4: p->dmac_lo = v; break;
	case RNIC_QPC_NET / 4: p->net = v; break;
	case RNIC_QPC_DEST_QPN / 4: p->dest_qpn = RNIC_GET(RNIC_QPC_DEST_QPN_QPN, v); break;
	case RNIC_QPC_QKEY / 4: p->qkey = v; break;
	default: rnic_peer_cfg(&p->peer, word, v); break;
	}
}

/* Build Ethernet + IPv4 or IPv6 + UDP + BTH for a RoCEv2 packet of `payload_len` bytes after the
 * BTH (extension headers + payload + pad + ICRC) toward the peer on the QP's path `q`, or, for a
 * UD send, toward the address vector `av` (struct UD_AV); `port`: the PORT table.
 * Returns the offset of the first extension header. */
static inline uint32_t rnic_build_headers(const rnic_path_t *q, const uint32_t *port, uint8_t *h, uint32_t opcode,
					  uint32_t pad, uint32_t ackreq, uint32_t psn, uint32_t payload_len,
					  const uint8_t *av)
{
	uint32_t net = q->net;
	uint32_t v6 = av ? RNIC_UD_AV_IPV6_GET(av) : RNIC_PATH_V6(q);
	uint32_t udp = RNIC_UDP_OFF + (v6 ? RNIC_IP6_EXTRA : 0), bth = udp + RNIC_UDP_HLEN;
	uint32_t ulen = RNIC_UDP_HLEN + RNIC_BTH_LEN + payload_len;
	uint32_t i;

	if (av) {
		for (i = 0; i < 6; i++)
			h[i] = av[RNIC_UD_AV_DMAC_OFF + i];
	} else {
		rnic_put_be16(h, q->dmac_hi);
		rnic_put_be32(h + 2, q->dmac_lo);
	}
	rnic_port_mac(port, h + 6);
	if (v6) {
		/* IPv6 (RoCEv2 A17.4.5.2): traffic class from the QP, flow label 0 */
		uint32_t tc = RNIC_GET(RNIC_QPC_NET_TOS, net);

		rnic_put_be16(h + 12, RNIC_ETHERTYPE_IPV6);
		h[14] = (uint8_t)(0x60 | tc >> 4);
		h[15] = (uint8_t)(tc << 4);
		h[16] = 0;
		h[17] = 0;
		rnic_put_be16(h + 18, ulen);
		h[20] = RNIC_IPPROTO_UDP;
		h[21] = (uint8_t)RNIC_GET(RNIC_QPC_NET_TTL, net);
		for (i = 0; i < 4; i++) {
			rnic_put_be32(h + 22 + 4 * i, port[RNIC_PORTC_IPV6_0 / 4 + i]);
			if (av)
				rnic_put_be32(h + 38 + 4 * i, rnic_be32(av + RNIC_UD_AV_DIP6_OFF + 4 * i));
			else
				rnic_put_be32(h + 38 + 4 * i, q->peer.dip6[i]);
		}
	} else {
		rnic_put_be16(h + 12, RNIC_ETHERTYPE_IPV4);
		h[14] = 0x45;
		h[15] = (uint8_t)RNIC_GET(RNIC_QPC_NET_TOS, net);
		rnic_put_be16(h + 16, RNIC_IP_HLEN + ulen);
		rnic_put_be16(h + 18, 0);
		rnic_put_be16(h + 20, 0x4000); /* DF */
		h[22] = (uint8_t)RNIC_GET(RNIC_QPC_NET_TTL, net);
		h[23] = RNIC_IPPROTO_UDP;
		rnic_put_be32(h + 26, port[RNIC_PORTC_IPV4 / 4]);
		rnic_put_be32(h + 30, av ? RNIC_UD_AV_DIP_GET(av) : q->peer.dip);
		rnic_put_be16(h + 24, 0);
		rnic_put_be16(h + 24, rnic_ipv4_csum(h + 14));
	}
	rnic_put_be16(h + udp, RNIC_GET(RNIC_QPC_NET_SPORT, net));
	rnic_put_be16(h + udp + 2, RNIC_ROCE_UDP_PORT);
	rnic_put_be16(h + udp + 4, ulen);
	rnic_put_be16(h + udp + 6, 0);
	h[bth] = (uint8_t)opcode;
	h[bth + 1] = (uint8_t)(pad << RNIC_BTH_PAD_SHIFT);
	rnic_put_be16(h + bth + 2, 0xffff);
	h[bth + 4] = 0;
	rnic_put_be24(h + bth + 5, av ? RNIC_UD_AV_QPN_GET(av) : q->dest_qpn);
	h[bth + 8] = ackreq ? RNIC_BTH_ACKREQ : 0;
	rnic_put_be24(h + bth + 9, psn & RNIC_PSN_MASK);
	return bth + RNIC_BTH_LEN;
}

#endif
