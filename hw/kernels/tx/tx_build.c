/* TX kernel: the packet builder: request messages cut into packets, responder frames, and the DMA reads of their payload. */
#include "tx_int.h"

/* The scatter entry the head WQE's check is at (its first after a new head or an MPT write), or
 * none: inline, too many (load_sges fails it), or all checked in earlier clocks */
const uint8_t *tx_sge_left(const tx_core_t *st)
{
	const uint8_t *w = st->pf_wqe[st->pf_head % TX_PF];
	uint32_t n = RNIC_WQE_NUM_SGE_GET(w), k = st->chk_head != st->pf_head || st->t.cfg_mpt ? 0 : st->chk_k;

	if ((RNIC_WQE_FLAGS_GET(w) & RNIC_WQE_FLAG_INLINE) || n > RNIC_MAX_SGE || k >= n)
		return 0;
	return w + RNIC_WQE_SGE_OFF + k % RNIC_MAX_SGE * RNIC_SGE_SIZE;
}

/* The scatter list of the WQE at the head, checked an entry a clock against the MPT cache (key,
 * PD, access, bounds: IBTA 10.6.3), the one tx_sge_left names with this clock's lookup; the WQE
 * may start once none is left (from the next clock on). A miss asks for the entry's read (the
 * read slot's, build) and waits; an MPT write starts it over, so what the WQE starts with is what
 * the MPT holds once all its entries are checked. */
_Static_assert(RNIC_MAX_SGE <= 8, "chk_k counts a WQE's scatter entries");
_Static_assert(RNIC_MPT_WORDS <= MPT_HAVE_BITS && RNIC_MAX_MPT <= 1u << (32 - MPT_HAVE_BITS),
	       "an MPT line's tag (rnic_kernel.h): the key index and a bit a word");
void tx_sge_check(tx_core_t *st, const tx_look_t *lk)
{
	const uint8_t *w = st->pf_wqe[st->pf_head % TX_PF], *s = tx_sge_left(st);
	uint32_t key = RNIC_SGE_LKEY_GET(s);

	if (st->chk_head != st->pf_head || st->t.cfg_mpt) {
		st->chk_head = st->pf_head;
		st->chk_k = st->chk_bad = st->chk_pd_any = 0;
	}
	if (RNIC_SGE_LEN_GET(s)) {
		if (!lk->chk || lk->hit <= 0) /* the lookup was the issuer's, or the entry is not there */
			return;
		if (!rnic_mpt_live(lk->e, key, tx_is_rd(RNIC_WQE_OPCODE_GET(w)) ? RNIC_ACCESS_LOCAL_WRITE : 0,
				   RNIC_SGE_ADDR_GET(s), RNIC_SGE_LEN_GET(s)) ||
		    (st->chk_pd_any && lk->e[RNIC_MPT_PDN / 4] != st->chk_pdn))
			st->chk_bad = 1;
		st->chk_pdn = lk->e[RNIC_MPT_PDN / 4]; /* the QP's, load_sges checks */
		st->chk_pd_any = 1;
	}
	st->chk_k++;
}

/* This clock's lookups, made once, before the consumers take their answers, as the clock begins,
 * from its registers (a head that a go-back-N drops in this clock wastes its lookup). When the
 * issuer may read (the read slot and the credit free, no refused packet to see to) and its key's
 * entry is in ie_e, it translates its read in the TLB; the MPT cache's port is then the scatter
 * check's (tx_sge_check: the entry the head WQE is checked at, when there is a head), else the
 * issuer's key's, whose entry goes to ie_e for the next clock. */
void tx_lookup(tx_core_t *st, tx_look_t *lk, uint32_t refused)
{
	const tx_pf_t *f = &st->pf[st->pf_head % TX_PF];
	const tx_sge_t *g = &st->sge[st->iss_sge];
	const uint8_t *s = tx_sge_left(st);
	uint32_t room, ikey = st->iss_rsp ? st->iss_key : g->key, on, iss, fill, k;

	lk->la = st->la_slot - st->pf_head > st->la_fill - st->pf_head ? st->pf_head : st->la_slot;
	lk->la_key = st->la_key[lk->la % TX_PF];
	lk->la_addr = st->la_addr[lk->la % TX_PF];
	lk->la_ok = st->la_ok[lk->la % TX_PF];
	lk->x = -1;
	lk->live = 0;
	if (st->t.cfg_mpt)
		st->ie_valid = 0; /* the MPT is written: looked up again */
	iss = st->iss_left && !tx_rd_busy(st) && !tx_rd_full(st) && st->credit + RNIC_DMA_MAX_LEN <= TX_CREDIT &&
	      !refused;
	lk->iss = (uint8_t)(iss && st->ie_valid && st->ie_key == ikey);
	lk->mine = (uint8_t)(iss && !lk->iss);
	lk->chk = (uint8_t)(!lk->mine && st->pf_head != st->pf_tail && f->ready && !f->discard && s &&
			    RNIC_SGE_LEN_GET(s));
	lk->key = lk->mine ? ikey : lk->chk ? RNIC_SGE_LKEY_GET(s) : 0;
	/* the TLB's port: the issuer's read, translated */
	lk->addr = st->iss_rsp ? st->iss_va : g->addr + st->iss_sge_off;
	lk->n = st->iss_rsp ? st->iss_left : g->len - st->iss_sge_off;
	room = RNIC_PAGE_SIZE_BYTES - (uint32_t)(lk->addr & (RNIC_PAGE_SIZE_BYTES - 1));
	if (lk->n > room)
		lk->n = room;
	if (lk->n > st->iss_left)
		lk->n = st->iss_left;
	if (lk->iss) {
		lk->live = (uint8_t)rnic_mpt_live(st->ie_e, ikey, st->iss_rsp ? RNIC_ACCESS_REMOTE_READ : 0, lk->addr,
						  lk->n);
		on = st->iss_left > lk->n || (st->iss_rsp ? st->rj_open : g->len - st->iss_sge_off > lk->n);
		lk->mi = rnic_mtt_index(st->ie_e, lk->addr, &lk->off);
		if (lk->live)
			lk->x = (int8_t)rnic_tlb_get(&st->t, lk->mi, &lk->bus, on);
		st->t.mpt_hits++; /* the key's entry on chip, as a lookup that hits */
	}
	/* the MPT cache's port (after the translation, which reads ie_e as the clock began) */
	lk->hit = (int8_t)(lk->mine || lk->chk ? rnic_mpt_get(&st->t, st->icm, lk->key, lk->e) : -1);
	/* the issuer's key's entry: its reads translate from it from the next clock on (the zeros of
	 * no key too: its read poisons the packet and drops it); written as selects */
	fill = lk->mine && lk->hit > 0;
	st->ie_valid |= (uint8_t)fill;
	st->ie_key = fill ? lk->key : st->ie_key;
	for (k = 0; k < RNIC_MPT_WORDS; k++)
		st->ie_e[k] = fill ? lk->e[k] : st->ie_e[k];
}

/* The SGEs of the WQE, checked already at the head of the prefetch ring (tx_sge_check: key,
 * access and bounds on each MR, and one PD for all, here the QP's). */
_Static_assert(RNIC_MAX_PD <= 0x10000, "the kernels keep a QP's PD number in 16 bits");
static uint32_t load_sges(tx_core_t *st, const uint8_t *w, uint32_t pdn)
{
	uint32_t status = RNIC_WC_STATUS_SUCCESS, k;

	if (RNIC_WQE_NUM_SGE_GET(w) > RNIC_MAX_SGE)
		return RNIC_WC_STATUS_LOC_LEN_ERR;
	if (st->chk_mine && (st->chk_bad || (st->chk_pd_any && st->chk_pdn != pdn)))
		status = RNIC_WC_STATUS_LOC_PROT_ERR;
	for (k = 0; k < RNIC_MAX_SGE; k++) {
		const uint8_t *s = w + RNIC_WQE_SGE_OFF + k * RNIC_SGE_SIZE;
		tx_sge_t *g = &st->sge[st->nsge];

		if (k >= RNIC_WQE_NUM_SGE_GET(w))
			break;
		g->addr = RNIC_SGE_ADDR_GET(s);
		g->len = RNIC_SGE_LEN_GET(s);
		if (!g->len)
			continue;
		g->key = RNIC_SGE_LKEY_GET(s);
		if (st->msg_len + (uint64_t)g->len > 0x80000000u)
			status = RNIC_WC_STATUS_LOC_LEN_ERR;
		st->msg_len += g->len;
		st->nsge++;
	}
	return status;
}

/* The WQE being started waits: it and those behind it are fetched again, from its index */
static void refetch_later(tx_core_t *st)
{
	tx_unfetch(st, st->qpn, 1, 1, st->wqe_index, 0);
}

/* The WQE being started fails here: it completes with `status` (signaled or not) and a local
 * error moves its QP to error, once the WQEs before it have completed (a send queue completes in
 * order, IBTA Vol. 1 10.8): until then it waits, fetched again. */
static void local_error(tx_core_t *st, uint32_t cqn, uint64_t wr_id, uint32_t op, uint32_t status)
{
	if (tx_ob_n_s(st, st->qpn)) {
		refetch_later(st);
		return;
	}
	tx_cpl_push(st, CS_FAIL, st->qpn, cqn, wr_id, op, 0, status, st->ts_db[st->qpn], st->wqe_index);
	if (status != RNIC_WC_STATUS_WR_FLUSH_ERR)
		tx_qp_fatal(st, st->qpn, 1);
}

/* Tell the RX kernel where the responses of this READ/atomic go. */
static void post_rdx(tx_core_t *st, const tx_ob_t *ob)
{
	rnic_rdx_t *x = &st->o.rdx;
	uint32_t k;

	*x = (rnic_rdx_t){0};
	x->qpn = st->qpn;
	x->first_psn = ob->first_psn;
	x->npkts = ((ob->last_psn - ob->first_psn) & RNIC_PSN_MASK) + 1;
	x->kind = st->op;
	x->nsge = (uint8_t)st->nsge;
	for (k = 0; k < RNIC_MAX_SGE; k++) {
		rnic_wr_le(x->sge + k * 16, 8, st->sge[k].addr);
		rnic_wr_le(x->sge + k * 16 + 8, 4, st->sge[k].len);
		rnic_wr_le(x->sge + k * 16 + 12, 4, st->sge[k].key);
	}
	st->o.rdx_valid = 1;
}

/* The outstanding entry of the WQE starting on QP q, from the pool (start_ready saw one free),
 * at the end of q's list; appended to an empty list, it is where the completion side finds the
 * head (ob_first), until the completion side has moved past it. */
static void ob_append(tx_core_t *st, uint32_t q, const tx_ob_t *ob)
{
	uint32_t e = st->ob_fresh < TX_OBP ? st->ob_fresh++ : st->obf[st->obf_head++ % TX_OBP];

	st->obp[e] = *ob;
	if (!tx_ob_n_s(st, q)) {
		st->tw_add = 1; /* its ACK timer starts: into the wheel, unless it is there */
		st->tw_add_q = (uint16_t)q;
		st->ob_first[q] = (uint16_t)e;
		st->ob_fpos[q] = st->ob_tail[q];
		st->ob_fv[q] = 1;
	} else {
		tx_obn_write(st, st->ob_le[q], e);
		if (tx_head_s(st, q) != st->ob_fpos[q])
			st->ob_fv[q] = 0;
	}
	st->ob_le[q] = (uint16_t)e;
	st->ob_cur = (uint16_t)e;
	tx_set_ob_tail(st, q, st->ob_tail[q] + 1u);
}

/* WQE arrived: check it and set the message up (or complete it in error, or put it back). */
void tx_start_message(tx_core_t *st)
{
	tx_qs_t *p = &st->qs[st->qpn];
	uint32_t cqn = st->qsf[st->qpn].cqn, rd_out = tx_rd_out(st, st->qpn);
	const uint8_t *w = st->wqe;
	uint32_t op = RNIC_WQE_OPCODE_GET(w), flags = RNIC_WQE_FLAGS_GET(w);
	uint32_t pdn = st->qsf[st->qpn].pdn;
	uint32_t status = RNIC_WC_STATUS_SUCCESS, limit, npsn;
	tx_ob_t ob;

	tx_wake(st, WK_START, st->qpn); /* a slot of its window is taken; the QP may fetch further */
	if (!QSF_CTRL(st, st->qpn, VALID))
		return; /* the QP was destroyed or reset meanwhile: its WQE is not ours any more */
	if (tx_err_s(st, st->qpn)) {
		local_error(st, cqn, RNIC_WQE_WR_ID_GET(w), op, RNIC_WC_STATUS_WR_FLUSH_ERR);
		return;
	}
	if (st->wqe_bad) {
		/* the host refused the WQE's read: what it asks is not known (the host library names
		 * the work request by the WQE's index); fetched again while it waits, it may come */
		local_error(st, cqn, 0, RNIC_WQE_OP_SEND, RNIC_WC_STATUS_LOC_QP_OP_ERR);
		return;
	}
	limit = st->qsf[st->qpn].rd_atom;
	if ((tx_is_rd(op) && rd_out >= (limit ? limit : 1)) || ((flags & RNIC_WQE_FLAG_FENCE) && rd_out)) {
		/* max_rd_atomic reached, or a fence behind READs/atomics: wait (IBTA 9.4.4, 10.8.3.3) */
		refetch_later(st);
		st->rd_wait[st->qpn] = 1;
		st->rd_mark[st->qpn] = st->rd_retired[st->qpn];
		return;
	}
	st->op = (uint8_t)op;
	st->type = (uint8_t)QSF_CTRL(st, st->qpn, TYPE);
	st->inline_data = (flags & RNIC_WQE_FLAG_INLINE) != 0;
	st->msg_len = 0;
	st->nsge = 0;
	if (op > RNIC_WQE_OP_ATOMIC_FA || (st->type == RNIC_QPT_UC && op > RNIC_WQE_OP_SEND_IMM) ||
	    (st->type == RNIC_QPT_UD && op != RNIC_WQE_OP_SEND && op != RNIC_WQE_OP_SEND_IMM)) {
		/* UC: SEND and WRITE; UD: SEND (IBTA Table 38) */
		status = RNIC_WC_STATUS_LOC_QP_OP_ERR;
	} else if (st->inline_data) {
		st->msg_len = RNIC_WQE_TOTAL_LEN_GET(w);
		if (tx_is_rd(op))
			status = RNIC_WC_STATUS_LOC_QP_OP_ERR;
		else if (st->msg_len > RNIC_MAX_INLINE)
			status = RNIC_WC_STATUS_LOC_LEN_ERR;
	} else {
		status = load_sges(st, w, pdn);
		if (!status && op >= RNIC_WQE_OP_ATOMIC_CS && st->msg_len != 8)
			status = RNIC_WC_STATUS_LOC_LEN_ERR;
	}
	st->mtu = rnic_mtu_bytes(QSF_CTRL(st, st->qpn, PMTU));
	if (!status && st->type == RNIC_QPT_UD && st->msg_len > st->mtu)
		status = RNIC_WC_STATUS_LOC_LEN_ERR; /* a datagram is one packet */
	if (status != RNIC_WC_STATUS_SUCCESS) {
		local_error(st, cqn, RNIC_WQE_WR_ID_GET(w), op, status);
		return;
	}
	st->o.stat_wqes++;
	npsn = rnic_npkts(st->msg_len, QSF_CTRL(st, st->qpn, PMTU));
	st->npkts = op == RNIC_WQE_OP_RDMA_READ || op >= RNIC_WQE_OP_ATOMIC_CS ? 1 : npsn;
	if (op >= RNIC_WQE_OP_ATOMIC_CS)
		npsn = 1;
	/* the outstanding WQE's entry, built in registers and written whole */
	ob = (tx_ob_t){0};
	ob.wr_id = RNIC_WQE_WR_ID_GET(w);
	ob.ts = st->ts_db[st->qpn];
	ob.len = st->msg_len;
	ob.op = (uint8_t)op;
	ob.first_psn = p->psn;
	ob.last_psn = (p->psn + npsn - 1) & RNIC_PSN_MASK;
	ob.signaled = (flags & RNIC_WQE_FLAG_SIGNALED) != 0;
	ob.index = st->wqe_index;
	ob_append(st, st->qpn, &ob);
	st->first_psn = p->psn;
	p->psn = (p->psn + npsn) & RNIC_PSN_MASK;
	st->pkt = 0;
	st->rd_skip = 0;
	st->iss_sge = st->iss_sge_off = 0;
	if (p->restart && ob.index == p->restart_index) {
		/* go-back-N into the middle of a message: skip the packets before the PSN (a WRITE or
		 * SEND MIDDLE/LAST continues the responder's context, a READ is requested again from
		 * there, IBTA 9.7.5.1.3, 9.7.6.1.3) */
		int32_t k = rnic_psn_diff(p->restart_psn, ob.first_psn);

		p->restart = 0;
		if (k > 0 && (uint32_t)k < npsn && !st->inline_data) {
			if (op == RNIC_WQE_OP_RDMA_READ) {
				st->first_psn = (ob.first_psn + (uint32_t)k) & RNIC_PSN_MASK;
				st->rd_skip = (uint32_t)k * st->mtu;
			}
			else
				st->pkt = (uint32_t)k;
		}
	}
	if (tx_is_rd(op)) {
		st->rd_started[st->qpn]++;
		post_rdx(st, &ob);
	}
	st->phase = 1;
}

/* Position the issuer's SGE cursor at byte `off` of the message. */
static void seek_sge(tx_core_t *st, uint32_t off)
{
	uint32_t g;

	st->iss_sge = 0;
	for (g = 0; g < RNIC_MAX_SGE; g++) {
		if (st->iss_sge >= st->nsge || off < st->sge[st->iss_sge].len)
			break;
		off -= st->sge[st->iss_sge].len;
		st->iss_sge++;
	}
	st->iss_sge_off = off;
}

/* The packet built into the emitter's FIFO (whole, from registers), its header's beats counted */
static void pkt_push(tx_pkt_t *k, rnic_tx_pkq_t *pkq)
{
	k->hdr_last = (uint8_t)((k->hdr_len - 1u) / RNIC_BEAT);
	k->hdr_tail = (uint8_t)(k->hdr_len - k->hdr_last * RNIC_BEAT);
	rnic_tx_pkq_push(pkq, k);
}

/* What a packet's Ethernet, IP, UDP and BTH headers are made of (rnic_build_headers, in one place
 * for requests and responses: build) */
typedef struct {
	const rnic_path_t *q;
	const uint8_t *av;    /* UD: the WQE's address vector */
	uint32_t op, ackreq, psn, len;
} tx_bth_t;

/* One packet of the request message, into k (its headers but the extension headers in h). */
static void build_request(tx_core_t *st, tx_pkt_t *k, tx_bth_t *h)
{
	const uint8_t *w = st->wqe;
	const uint8_t *av = st->type == RNIC_QPT_UD ? w + RNIC_WQE_UD_AV_OFF : 0;
	const rnic_path_t *q = &st->hq[st->qpn];
	uint32_t v6 = av ? RNIC_UD_AV_IPV6_GET(av) : RNIC_PATH_V6(q);
	uint32_t xoff = RNIC_XTH_OFF + (v6 ? RNIC_IP6_EXTRA : 0);
	uint8_t *x = k->hdr + xoff;
	uint32_t first = st->pkt == 0, last = st->pkt == st->npkts - 1;
	uint32_t pay = last ? st->msg_len - st->pkt * st->mtu : st->mtu;
	uint32_t imm = st->op == RNIC_WQE_OP_RDMA_WRITE_IMM || st->op == RNIC_WQE_OP_SEND_IMM;
	uint32_t xth = 0, op, i, ackreq = last; /* on LAST/ONLY, READ and atomics, as rxe does */
	uint64_t ra = RNIC_WQE_REMOTE_ADDR_GET(w);

	switch (st->op) {
	case RNIC_WQE_OP_RDMA_WRITE:
	case RNIC_WQE_OP_RDMA_WRITE_IMM:
		op = st->npkts == 1 ? (imm ? RNIC_BTH_OP_WRITE_ONLY_IMM : RNIC_BTH_OP_WRITE_ONLY) :
		     first ? RNIC_BTH_OP_WRITE_FIRST :
		     last ? (imm ? RNIC_BTH_OP_WRITE_LAST_IMM : RNIC_BTH_OP_WRITE_LAST) : RNIC_BTH_OP_WRITE_MIDDLE;
		if (first) {
			rnic_put_be64(x, ra);
			rnic_put_be32(x + 8, RNIC_WQE_RKEY_GET(w));
			rnic_put_be32(x + 12, st->msg_len);
			xth = RNIC_RETH_LEN;
		}
		break;
	case RNIC_WQE_OP_SEND:
	case RNIC_WQE_OP_SEND_IMM:
		op = st->npkts == 1 ? (imm ? RNIC_BTH_OP_SEND_ONLY_IMM : RNIC_BTH_OP_SEND_ONLY) :
		     first ? RNIC_BTH_OP_SEND_FIRST :
		     last ? (imm ? RNIC_BTH_OP_SEND_LAST_IMM : RNIC_BTH_OP_SEND_LAST) : RNIC_BTH_OP_SEND_MIDDLE;
		break;
	case RNIC_WQE_OP_RDMA_READ: {
		/* one request for the whole (remaining) message; its responses take the PSNs */
		uint32_t skip = st->rd_skip;

		op = RNIC_BTH_OP_READ_REQ;
		rnic_put_be64(x, ra + skip);
		rnic_put_be32(x + 8, RNIC_WQE_RKEY_GET(w));
		rnic_put_be32(x + 12, st->msg_len - skip);
		xth = RNIC_RETH_LEN;
		pay = 0;
		break;
	}
	default: /* atomics: AtomicETH (IBTA 9.3.3.3) */
		op = st->op == RNIC_WQE_OP_ATOMIC_CS ? RNIC_BTH_OP_CMP_SWAP : RNIC_BTH_OP_FETCH_ADD;
		rnic_put_be64(x, ra);
		rnic_put_be32(x + 8, RNIC_WQE_RKEY_GET(w));
		rnic_put_be64(x + 12, st->op == RNIC_WQE_OP_ATOMIC_CS ? RNIC_WQE_SWAP_GET(w) : RNIC_WQE_COMPARE_ADD_GET(w));
		rnic_put_be64(x + 20, RNIC_WQE_COMPARE_ADD_GET(w));
		xth = 28;
		pay = 0;
		break;
	}
	if (st->type == RNIC_QPT_UD) {
		/* DETH (IBTA 9.3.2): Q_Key (the QP's own if the WR's has its high bit set), source QP */
		uint32_t qkey = RNIC_UD_AV_QKEY_GET(w + RNIC_WQE_UD_AV_OFF);

		op = imm ? RNIC_BTH_OP_UD_SEND_ONLY_IMM : RNIC_BTH_OP_UD_SEND_ONLY;
		rnic_put_be32(x, qkey & 0x80000000u ? q->qkey : qkey);
		rnic_put_be32(x + 4, rnic_qpn(st->qpn));
		xth = RNIC_DETH_LEN;
	}
	if (st->type != RNIC_QPT_RC) {
		ackreq = 0; /* nothing acknowledges UC or UD */
		if (st->type == RNIC_QPT_UC)
			op |= RNIC_BTH_UC_BIT;
	}
	if (imm && last) {
		rnic_wr_le(x + xth, 4, RNIC_WQE_IMM_GET(w)); /* kept in network order by the host */
		xth += RNIC_IMM_LEN;
	}
	k->pad = (uint8_t)((4 - (pay & 3)) & 3);
	/* UD: to the address handle's destination, from the WQE */
	*h = (tx_bth_t){q, av, op, ackreq, st->first_psn + st->pkt, xth + pay + k->pad + RNIC_ICRC_LEN};
	k->v6 = (uint8_t)v6;
	/* the ACK timer counts silence after the last packet sent: a long message is not late */
	st->ts_pending = 1;
	st->ts_qpn = (uint16_t)st->qpn;
	k->retire = st->type != RNIC_QPT_RC && last;
	k->first = (uint8_t)first;
	k->ob = st->type == RNIC_QPT_RC ? st->ob_cur : TX_OBP;
	k->qpn = (uint16_t)st->qpn;
	k->hdr_len = (uint16_t)(xoff + xth);
	k->pay_len = (uint16_t)pay;
	if (st->inline_data) {
		for (i = 0; i < RNIC_MAX_INLINE; i++)
			if (i < pay)
				k->hdr[k->hdr_len + i] = w[RNIC_WQE_SGE_OFF + i];
		k->hdr_len += (uint16_t)pay;
		k->pay_len = 0;
	}
	st->iss_rsp = 0;
	st->iss_left = k->pay_len;
	if (k->pay_len)
		seek_sge(st, st->pkt * st->mtu);
	if (++st->pkt == st->npkts)
		st->phase = 0;
}

/* One responder packet cut by tx_rsq: an ACK/NAK, an ATOMIC ACK, or a READ response's (IBTA
 * 9.4.3, 9.5), its payload read next, into k as build_request: 1. One of a response stopped
 * (rj_drop), or of a QP gone, is dropped: 0. */
static int build_response(tx_core_t *st, const tx_rjob_t *j, tx_pkt_t *k, tx_bth_t *h)
{
	const rnic_path_t *q = &st->hq[j->qpn % RNIC_MAX_QP];
	uint32_t xth = j->op == RNIC_BTH_OP_READ_RESP_MIDDLE ? 0 : RNIC_AETH_LEN;
	uint8_t *x;

	if (st->rj_drop && j->rid == st->rj_drop_rid)
		return 0;
	st->rj_drop = 0;
	if (!RNIC_PATH_VALID(q))
		return 0;
	k->qpn = j->qpn;
	k->rsp = 1;
	k->first = j->first;
	k->v6 = (uint8_t)RNIC_PATH_V6(q);
	k->pad = (uint8_t)((4 - (j->pay & 3)) & 3);
	x = k->hdr + RNIC_XTH_OFF + (k->v6 ? RNIC_IP6_EXTRA : 0);
	if (j->kind == RNIC_RSP_KIND_ATOMIC) {
		rnic_put_be64(x + RNIC_AETH_LEN, j->atomic);
		xth += 8;
	}
	*h = (tx_bth_t){q, 0, j->op, 0, j->psn, xth + j->pay + k->pad + RNIC_ICRC_LEN};
	if (j->kind == RNIC_RSP_KIND_READ) {
		st->iss_rsp = 1;
		st->iss_left = j->pay;
		st->iss_va = j->va;
		st->iss_key = j->key;
		st->rj_open = !j->last;
		st->rj_rid = j->rid;
		st->rj_qpn = j->qpn;
	} else {
		st->o.stat_acks++;
	}
	if (xth) {
		x[0] = j->syndrome;
		rnic_put_be24(x + 1, j->msn);
	}
	k->hdr_len = (uint16_t)(x - k->hdr + xth);
	k->pay_len = j->pay;
	return 1;
}

/* The READ response whose packet was built last stops: tx_rsq cuts no more of it (rjcq, at the
 * clock's end), and its packets already cut are dropped. */
static void rsp_stop(tx_core_t *st)
{
	if (!st->rj_open)
		return;
	st->rj_open = 0;
	st->rj_drop = 1;
	st->rj_drop_rid = st->rj_rid;
	st->rj_stop = 1;
}

/* QP q's message in progress stops at its next packet, and the WQEs fetched ahead for it are
 * dropped (first: fetched again from the first of them). */
void tx_stop_fetch(tx_core_t *st, uint32_t q, uint32_t first)
{
	if (st->phase && st->qpn == q)
		st->cancel = 1;
	tx_unfetch(st, q, 0, 0, 0, first);
}

/* QP q goes to error on the send side (poison, tx_refused): its message stops, and the WQEs
 * fetched ahead for it are dropped and fetched again from the first of them, to be flushed in
 * order behind those outstanding. Once in error, what it fetches is to be flushed: only its
 * message stops. */
static void stop_in_error(tx_core_t *st, uint32_t q)
{
	if (tx_err_s(st, q)) {
		if (st->phase && st->qpn == q)
			st->cancel = 1;
		return;
	}
	tx_qp_fatal(st, q, 1);
	tx_stop_fetch(st, q, 1);
}

/* The region the payload of the packet being read comes from went away after its message
 * started (deregistered, re-registered, shrunk): nothing more is read from it. The packet still
 * leaves, zeros in place of the payload not read, with a bad ICRC so that no receiver takes it
 * (a frame cannot be taken back once its header is out); its message stops: a READ response
 * stream ends (the requester asks again and gets the NAK its key now earns), a request's WQE
 * completes with a protection error and its QP goes to error. */
static int poison(tx_core_t *st, uint32_t left)
{
	uint32_t q = st->qpn;

	if (!st->iss_rsp && (tx_cpl_full(st) || st->qs_port))
		return -1; /* no room for the QP-fatal event yet, or the send side's port is taken */
	tx_read_req(st, 0, left, REQ_ZERO); /* its beats poison the packet (tx_emit) */
	st->credit += left;
	st->iss_left = 0;
	if (st->iss_rsp) {
		rsp_stop(st);
		return 0;
	}
	st->qs_port = 1;
	st->obp[st->ob_cur].err = RNIC_WC_STATUS_LOC_PROT_ERR;
	stop_in_error(st, q);
	return 0;
}

/* The key of the read the issuer is at (or of the scatter entry the head WQE is checked at, or
 * of a WQE further on, tx_mpt_ahead) is not in the MPT cache: its entry is read from context
 * memory, in this clock's request slot; xl: the read starts at va, whose MTT line is looked for
 * as the entry lands. */
static void mpt_miss(tx_core_t *st, uint32_t key, uint64_t va, uint32_t xl)
{
	uint64_t bus = rnic_mpt_read(&st->t, st->icm, key, va, xl, (uint32_t)st->now);

	if (bus)
		tx_read_req(st, bus, RNIC_ICM_MPT_STRIDE, REQ_MPT);
}

/* A lookup missed in an earlier clock (mm_key): 1 when its entry is to be read now (mpt_miss). It
 * waits while RNIC_MPT_RQ reads are on their way or the MPT's ports are taken, and is forgotten
 * once its read is on its way (asked since by another). */
static int mm_read(tx_core_t *st)
{
	if (!st->mm_on)
		return 0;
	if (rnic_mpt_coming(&st->t, st->mm_key >> RNIC_KEY_TAG_BITS)) {
		st->mm_on = 0;
		return 0;
	}
	if (tx_rd_full(st) || !rnic_mpt_wanted(&st->t, st->mm_key) || !rnic_mpt_can_read(&st->t, st->mm_key))
		return 0;
	st->mm_on = 0;
	return 1;
}

/* The WQEs fetched behind the head, a slot a clock: the first scatter entry's key not in the MPT
 * cache (nor on its way) is read now, so the WQE finds it there, and so is the MTT line of the
 * entry's first page (the line asked for now, or when the key's entry lands: rnic_tlb_hint).
 * 1: the entry is to be read now (mpt_miss), in the slot. */
static int tx_mpt_ahead(tx_core_t *st, const tx_look_t *lk)
{
	int r;

	st->la_slot = lk->la;
	if (lk->la == st->la_fill || tx_rd_full(st))
		return 0;
	r = lk->la_ok ? rnic_mpt_ahead(&st->t, lk->la_key, lk->la_addr, 1) : 0;
	if (r < 0)
		return 0; /* again next clock */
	st->la_slot = lk->la + 1;
	return r && rnic_icm_bus(st->icm, RNIC_ICM_MPT_OFF);
}

/* The emitter found a payload beat of a packet refused by the host (fltq: the packet left
 * with a bad ICRC): as for a region gone (poison), a request's WQE completes with a protection
 * error and its QP goes to error, a READ response stream ends (the requester asks again). */
static void tx_refused(tx_core_t *st, rnic_tx_fltq_t *fltq)
{
	const tx_flt_t *f = rnic_tx_fltq_head(fltq);

	if (f->rsp) {
		if (st->rj_qpn == f->qpn)
			rsp_stop(st);
		rnic_tx_fltq_pop(fltq);
		return;
	}
	if (tx_cpl_full(st) || st->qs_port)
		return;
	st->qs_port = 1;
	if (f->ob < TX_OBP) /* an RC request's: completes once the QP is in error */
		st->obp[f->ob].err = RNIC_WC_STATUS_LOC_PROT_ERR;
	stop_in_error(st, f->qpn);
	rnic_tx_fltq_pop(fltq);
}

/* What the read slot does in a clock (build): one read, of one kind, made in one place */
enum { RD_NONE, RD_PAY, RD_POISON, RD_MPT, RD_MTT };

/* What the issuer asks of the read slot, with this clock's translation (its key's entry in ie_e):
 * its payload's read or its page's line's (a miss), or the packet poisoned (the region gone, no
 * key, its line refused, or no context memory to read the line from); RD_NONE while the line is
 * on its way (the slot is another's then). */
static uint32_t issue_kind(const tx_core_t *st, const tx_look_t *lk)
{
	if (lk->live && lk->x < 0)
		return RD_NONE;
	if (!lk->live || (lk->x && lk->bus == RNIC_BUS_FAULT) || (!lk->x && !rnic_icm_bus(st->icm, RNIC_ICM_MTT_OFF)))
		return RD_POISON;
	return lk->x ? RD_PAY : RD_MTT;
}

/* The issuer's payload read */
static void issue(tx_core_t *st, const tx_look_t *lk, const tx_iss_t *c)
{
	uint32_t end = !st->iss_rsp && c->sge_off + lk->n == st->sge[c->sge].len; /* of its SGE */

	tx_read_req(st, lk->bus + lk->off, lk->n, REQ_PAYLOAD);
	st->credit += lk->n;
	st->iss_left = c->left - lk->n;
	st->iss_va = c->va + lk->n;
	st->iss_sge = c->sge + end;
	st->iss_sge_off = end ? 0 : c->sge_off + lk->n;
}

/* Packet builder and read issuer, in a clock: the next header, once the packet built before has
 * all its reads made as the clock begins, and one DMA read: the issuer's payload read first, then
 * the reads ahead (an MPT entry a lookup missed, the keys and lines of WQEs further on, the lines
 * ahead of the pages being read). The two never meet on a register (the issuer reads while a
 * packet has reads left, the header is built when it has none): each takes what it reads as the
 * clock began, the header first. */
static void build(tx_core_t *st, const tx_look_t *lk, rnic_tx_pkq_t *pkq, rnic_tx_fltq_t *fltq, rnic_tx_rjq_t *rjq)
{
	uint64_t bus, va = lk->addr;
	uint32_t n, made = 0, rd = RD_NONE, key = lk->key, xl = 1, tk = RNIC_TLB_MISS;
	uint32_t mtt = !tx_rd_full(st) && rnic_icm_bus(st->icm, RNIC_ICM_MTT_OFF) &&
		       st->t.tq_tail - st->t.tq_head < RNIC_TLB_RQ; /* a line's read can be made */
	tx_iss_t c = {st->iss_left, st->iss_sge, st->iss_sge_off, st->iss_va};
	tx_bth_t h;
	/* the packet to build, in registers: nothing of the one built before may leak into it (a
	 * responder frame inheriting a UD packet's `retire` would retire a WQE of that QP) */
	tx_pkt_t k = {.ob = TX_OBP};

	if (rnic_tx_fltq_count(fltq))
		tx_refused(st, fltq);
	if (!c.left && rnic_tx_pkq_room(pkq)) {
		if (rnic_tx_rjq_count(rjq)) {
			made = build_response(st, rnic_tx_rjq_head(rjq), &k, &h);
			rnic_tx_rjq_pop(rjq);
		} else if (st->phase && st->cancel && st->wake_ok) {
			st->phase = 0;
			st->cancel = 0;
			tx_wake(st, WK_CANCEL, st->qpn);
		} else if (st->phase) {
			build_request(st, &k, &h);
			made = 1;
		}
		if (made) {
			rnic_build_headers(h.q, st->t.port, k.hdr, h.op, k.pad, h.ackreq, h.psn, h.len, h.av);
			pkt_push(&k, pkq);
		}
	}
	if (tx_rd_busy(st))
		return; /* one read a clock */
	if (lk->iss)
		rd = issue_kind(st, lk);
	if (rd == RD_NONE && mm_read(st)) {
		rd = RD_MPT;
		key = st->mm_key;
		va = st->mm_va;
		xl = st->mm_xl;
	} else if (rd == RD_NONE && !st->mm_on && tx_mpt_ahead(st, lk)) {
		rd = RD_MPT;
		key = lk->la_key;
		va = lk->la_addr;
	} else if (rd == RD_NONE && st->t.tw && mtt) {
		rd = RD_MTT;
		tk = RNIC_TLB_HINT;
	} else if (rd == RD_NONE && c.left && st->t.ahead && mtt) {
		/* the issuer waits (the credit, the read list, a line or entry on its way): the lines
		 * ahead of the pages being read */
		rd = RD_MTT;
		tk = RNIC_TLB_NEXT;
	}
	if (rd == RD_PAY) {
		issue(st, lk, &c);
	} else if (rd == RD_POISON) {
		poison(st, c.left);
		st->ie_valid = 0; /* looked up again (a key refused once is read again) */
	} else if (rd == RD_MPT) {
		mpt_miss(st, key, va, xl);
	} else if (rd == RD_MTT && (bus = rnic_tlb_read(&st->t, st->icm, lk->mi, tk, (uint32_t)st->now, &n))) {
		tx_read_req(st, bus, n, REQ_MTT); /* none when the line was asked for since */
	}
}

/* The builder's clock, with what tx_rsq says and is told of the READ responses it cuts. */
void tx_build(tx_core_t *st, const tx_look_t *lk, rnic_tx_pkq_t *pkq, rnic_tx_fltq_t *fltq, rnic_tx_rjq_t *rjq, rnic_tx_rjxq_t *rjxq,
	      rnic_tx_rjcq_t *rjcq)
{
	uint32_t want;

	if (rnic_tx_rjxq_count(rjxq)) {
		/* a READ response asked for again: its packets still to come are dropped */
		st->rj_drop = 1;
		st->rj_drop_rid = *rnic_tx_rjxq_head(rjxq);
		st->rj_open &= st->rj_rid != st->rj_drop_rid;
		rnic_tx_rjxq_pop(rjxq);
	}
	/* this clock's lookup's miss, to be read from the next clock on (as the reads on their way
	 * were when the clock began; written as selects: nothing of this clock waits on it) */
	want = (lk->chk || lk->mine) && lk->hit <= 0 && rnic_mpt_wanted(&st->t, lk->key);
	build(st, lk, pkq, fltq, rjq);
	st->mm_key = want ? lk->key : st->mm_key;
	st->mm_va = want ? (lk->mine ? lk->addr : 0) : st->mm_va;
	st->mm_xl = (uint8_t)(want ? lk->mine : st->mm_xl);
	st->mm_on |= (uint8_t)want;
	if (st->rj_stop) {
		/* tx_rsq takes one every clock: there is room */
		assert(rnic_tx_rjcq_room(rjcq));
		rnic_tx_rjcq_push(rjcq, &st->rj_rid);
		st->rj_stop = 0;
	}
}
