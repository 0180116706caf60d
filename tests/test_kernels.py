"""The HLS C kernels called cycle by cycle (through their DPI-C entry points): a requester
(TX + RX + CQ of NIC A) and a responder (RX + TX of NIC B: B's RX hands its ACK/NAK frames to
B's TX) joined back to back, with host memory models answering DMA. Frames are checked with
scapy / the independent ICRC checker."""
import struct

import pytest
from scapy.contrib.roce import BTH
from scapy.layers.l2 import Ether

import roce_check as R
from kernel_tb import Kernel, S

MAC_A, MAC_B = 0x020000000001, 0x020000000002
IP_A, IP_B = 0x0A000001, 0x0A000002
IDX_A, IDX_B = 2, 3  # QP table entries; their numbers (doorbells, the wire) QPN_BASE | entry
QPN_A, QPN_B = S.QPN_BASE | IDX_A, S.QPN_BASE | IDX_B
PD = 1
SQ_BASE, CQ_BASE, BUF_BASE = 0x1000_0000, 0x2000_0000, 0x4000_0000
RD_LATENCY = 150


class Memory:
    """Host memory behind a DMA port: reads answered in order after a latency, one beat per clock."""

    def __init__(self):
        self.mem = {}
        self.reads = []  # [due_cycle, addr, len, beats_sent]

    def write(self, addr, data):
        for i, b in enumerate(data):
            self.mem[addr + i] = b

    def read(self, addr, n):
        return bytes(self.mem.get(addr + i, 0) for i in range(n))

    def request(self, cycle, addr, n):
        self.reads.append([cycle + RD_LATENCY, addr, n, 0])

    def beat(self, cycle):
        """(data, last) of the next read beat due, or None."""
        if not self.reads or self.reads[0][0] > cycle:
            return None
        r = self.reads[0]
        data = self.read(r[1] + 64 * r[3], 64)
        r[3] += 1
        last = 64 * r[3] >= r[2]
        if last:
            self.reads.pop(0)
        return data, last


def qpc_words(dmac, dip, dest_qpn, sq_psn, rq_psn, pmtu=S.MTU["1024"], state=S.QPS["RTS"], timeout=14):
    w = [0] * 18
    f = S.QPC
    w[0] = 1 | (state << 1) | (S.QPT["RC"] << 4) | (0 << 8) | (pmtu << 16)
    w[f["PDN"][0] // 4] = PD
    w[f["SQ_BASE_LO"][0] // 4] = SQ_BASE
    w[f["RING_LOG"][0] // 4] = 6 | (6 << 8)
    w[f["CQN"][0] // 4] = 5
    w[f["DEST_QPN"][0] // 4] = dest_qpn
    w[f["SQ_PSN"][0] // 4] = sq_psn
    w[f["RQ_PSN"][0] // 4] = rq_psn
    w[f["DMAC_LO"][0] // 4] = dmac & 0xFFFFFFFF
    w[f["DMAC_HI"][0] // 4] = dmac >> 32
    w[f["DIP"][0] // 4] = dip
    w[f["ACCESS"][0] // 4] = S.ACCESS["REMOTE_WRITE"] | S.ACCESS["REMOTE_READ"]
    w[f["NET"][0] // 4] = 0xC000 | (64 << 24)
    w[f["RETRY"][0] // 4] = timeout | (7 << 8) | (7 << 12) | (1 << 24) | (1 << 28)  # retry_cnt 7, rnr_retry 7, one READ
    return w


def program(k, mac, ip, key_index, length):
    k.cfg_entry(S.CFG_TBL_PORT, 0, [mac & 0xFFFFFFFF, mac >> 32, ip])
    pages = (length + 4095) // 4096
    for p in range(pages):
        k.cfg_entry(S.CFG_TBL_MTT, p, [(BUF_BASE + 4096 * p) & 0xFFFFFFFF, (BUF_BASE + 4096 * p) >> 32])
    access = S.ACCESS["LOCAL_WRITE"] | S.ACCESS["REMOTE_WRITE"] | S.ACCESS["REMOTE_READ"]
    k.cfg_entry(S.CFG_TBL_MPT, key_index, [1 | (access << 4) | (TAG << 8), PD, BUF_BASE, 0, length, 0, 0, 12])


TAG = 0x2A3C1


def key(index):
    return (index << S.KEY_TAG_BITS) | TAG


def new_pair():
    ka = {n: Kernel(n) for n in ("tx", "rx", "cq")}
    kb = {n: Kernel(n) for n in ("tx", "rx")}
    for k in list(ka.values()) + list(kb.values()):
        k.reset()
    return ka, kb


@pytest.fixture
def pair():
    return new_pair()


def serve_reads(k, mem, cycle):
    """Kernel k's DMA read port this clock: its request to mem, mem's next beat due if k is ready."""
    o = k.out
    if o.get("rdreq_valid"):
        mem.request(cycle, o.get("rdreq_addr"), o.get("rdreq_len"))
    beat = mem.beat(cycle) if o.get("rd_ready") else None
    k.inp.set("rd_valid", 1 if beat else 0)
    if beat:
        k.inp.set("rd_data", beat[0])
        k.inp.set("rd_last", int(beat[1]))


def run_write(pair, size, pmtu=S.MTU["1024"], rkey=None, max_cycles=400000, drop=(), push=False, reads=None,
              timeout=14, sent=None, op="RDMA_WRITE", psn=100, eth_ready=None):
    """Post one signaled WRITE of `size` bytes from A to B (a doorbell, or with `push` the WQE
    pushed through the window); returns (frames A->B, frames B->A, memory B, CQE bytes, cycles).
    `reads` collects A's DMA read requests (address, length); `sent` the cycle each frame A->B
    ended. A's local ACK timeout is `timeout` (4.096 us * 2^timeout); its first PSN `psn`. With
    op "RDMA_READ", A reads the same bytes from B instead: the memory returned is A's, where they land.
    With `eth_ready` (a random.Random), A's MAC takes a beat in 70% of the clocks. `drop`: the
    indices of the frames A->B lost on the way, or a function of (index, PSN) that says so."""
    ka, kb = pair
    rxb, txb = kb["rx"], kb["tx"]
    length = 1 << 20
    for k in (ka["tx"], ka["rx"]):
        program(k, MAC_A, IP_A, 1, length)
        k.cfg_entry(S.CFG_TBL_QPC, IDX_A, qpc_words(MAC_B, IP_B, QPN_B, psn, 200, pmtu, timeout=timeout))
    for k in (rxb, txb):
        program(k, MAC_B, IP_B, 1, length)
        k.cfg_entry(S.CFG_TBL_QPC, IDX_B, qpc_words(MAC_A, IP_A, QPN_A, 200, psn, pmtu))
    ka["cq"].cfg_entry(S.CFG_TBL_CQC, 5, [1 | (4 << 4), CQ_BASE, 0, 0])
    mem_a, mem_b, placed, placed_n = Memory(), Memory(), Memory(), 0
    payload = bytes((i * 7 + 3) & 0xFF for i in range(size))
    if op == "RDMA_READ":
        mem_b.write(BUF_BASE + 50, payload)
    else:
        mem_a.write(BUF_BASE + 100, payload)
    wqe = bytearray(128)
    struct.pack_into("<QBBB", wqe, 0, 0xABCD, S.WQE_OP[op], S.WQE_FLAG["SIGNALED"], 1)
    struct.pack_into("<QII", wqe, 16, BUF_BASE + 50, key(1) if rkey is None else rkey, size)
    struct.pack_into("<QII", wqe, 64, BUF_BASE + 100, size, key(1))
    struct.pack_into("<HH", wqe, S.WQE[1]["PUSH_QPN"][0], QPN_A, 0)
    mem_a.write(SQ_BASE, wqe)
    tx, rxa, cq = ka["tx"], ka["rx"], ka["cq"]
    if push:
        tx.inp.set("push_valid", 1)
        tx.inp.set("push_data", bytes(wqe[:64]))
    else:
        tx.inp.set("db_valid", 1)
        tx.inp.set("db_qpn", QPN_A)
        tx.inp.set("db_pi", 1)
    for k in (tx, txb):
        k.inp.set("rdreq_ready", 1)
        k.inp.set("eth_ready", 1)
        k.inp.set("cpl_ready", 1)
        k.inp.set("rdx_ready", 1)
    for k in (rxa, rxb):
        k.inp.set("wr_ready", 1)
        k.inp.set("rsp_ready", 1)
        k.inp.set("fw_ready", 1)
        k.inp.set("ack_ready", 1)
        k.inp.set("cpl_ready", 1)
    cq.inp.set("wr_ready", 1)
    cq.inp.set("irq_ready", 1)
    a2b, b2a, cur_ab, cur_ba = [], [], b"", b""
    dropping = False
    cqe = None
    pending = "push1" if push else "db"
    for cycle in range(max_cycles):
        o = tx.out
        taken = eth_ready is None or eth_ready.random() < 0.7
        tx.inp.set("eth_ready", int(taken))
        # A.tx -> memory A, wire -> B.rx
        if o.get("rdreq_valid"):
            mem_a.request(cycle, o.get("rdreq_addr"), o.get("rdreq_len"))
            if reads is not None:
                reads.append((o.get("rdreq_addr"), o.get("rdreq_len")))
        beat = mem_a.beat(cycle) if o.get("rd_ready") else None
        tx.inp.set("rd_valid", 1 if beat else 0)
        if beat:
            tx.inp.set("rd_data", beat[0])
            tx.inp.set("rd_last", int(beat[1]))
        if o.get("eth_valid") and not cur_ab:  # a frame's first beat: lost on the way or not
            dropping = drop(len(a2b), R.bth(o.get("eth_data"))[2]) if callable(drop) else len(a2b) in drop
        rxb.inp.set("eth_valid", o.get("eth_valid") and taken and not dropping)
        if o.get("eth_valid") and taken:
            n = bin(o.get("eth_keep")).count("1")
            rxb.inp.set("eth_data", o.get("eth_data"))
            rxb.inp.set("eth_keep", o.get("eth_keep"))
            rxb.inp.set("eth_last", o.get("eth_last"))
            cur_ab += o.get("eth_data")[:n]
            if o.get("eth_last"):
                a2b.append(cur_ab)
                cur_ab = b""
                if sent is not None:
                    sent.append(cycle)
        # B.rx -> memory B, ACKs -> A.rx
        ob = rxb.out
        if ob.get("wr_valid"):
            off = ob.get("wr_addr")
            mem_b.writes = getattr(mem_b, "writes", {})
            key_ = (off, ob.get("wr_len"))
            done = mem_b.writes.get(key_, 0)
            n = min(64, ob.get("wr_len") - done)
            mem_b.write(off + done, ob.get("wr_data")[:n])
            mem_b.writes[key_] = done + n if not ob.get("wr_last") else 0
        rxb.inp.set("rsp_ready", txb.out.get("rsp_ready"))
        txb.inp.set("rsp_valid", ob.get("rsp_valid"))
        txb.inp.set("rsp", ob.get("rsp"))
        ob = txb.out
        serve_reads(txb, mem_b, cycle)  # B.tx reads READ responses' payload from memory B
        rxa.inp.set("eth_valid", ob.get("eth_valid"))
        if ob.get("eth_valid"):
            n = bin(ob.get("eth_keep")).count("1")
            rxa.inp.set("eth_data", ob.get("eth_data"))
            rxa.inp.set("eth_keep", ob.get("eth_keep"))
            rxa.inp.set("eth_last", ob.get("eth_last"))
            cur_ba += ob.get("eth_data")[:n]
            if ob.get("eth_last"):
                b2a.append(cur_ba)
                cur_ba = b""
        # A.rx ack -> A.tx, A.tx cpl -> A.cq; READ responses placed into memory A
        oa = rxa.out
        if oa.get("wr_valid"):
            placed.write(oa.get("wr_addr") + placed_n, oa.get("wr_data")[:min(64, oa.get("wr_len") - placed_n)])
            placed_n = 0 if oa.get("wr_last") else placed_n + 64
        tx.inp.set("ack_valid", oa.get("ack_valid"))
        for f in ("qpn", "psn", "syndrome", "msn", "rd"):
            tx.inp.set("ack_" + f, oa.get("ack_" + f))
        rxa.inp.set("rdx_valid", o.get("rdx_valid"))
        rxa.inp.set("rdx", o.get("rdx"))
        cq.inp.set("txc_valid", o.get("cpl_valid"))
        cq.inp.set("txc", o.get("cpl"))
        if cq.out.get("wr_valid"):
            cqe = cq.out.get("wr_data")
            break
        # the doorbell, or the pushed WQE's two beats, are taken at a clock whose ready was up
        db_taken, push_taken = o.get("db_ready"), o.get("push_ready")
        for k in (tx, rxb, txb, rxa, cq):
            k.step()
        if pending == "db" and db_taken:
            tx.inp.set("db_valid", 0)
            pending = None
        elif pending == "push1" and push_taken:
            tx.inp.set("push_data", bytes(wqe[64:]))
            tx.inp.set("push_last", 1)
            pending = "push2"
        elif pending == "push2" and push_taken:
            tx.inp.set("push_valid", 0)
            pending = None
    return a2b, b2a, placed if op == "RDMA_READ" else mem_b, cqe, cycle, payload


@pytest.mark.parametrize("size,pmtu", [(1, 3), (1000, 3), (4096, 3), (10000, 3), (9000, 5)])
def test_write_loopback(pair, size, pmtu):
    a2b, b2a, mem_b, cqe, cycles, payload = run_write(pair, size, pmtu)
    assert cqe is not None, f"no completion after {cycles} cycles"
    assert mem_b.read(BUF_BASE + 50, size) == payload
    mtu = 128 << pmtu
    npk = max(1, -(-size // mtu))
    assert len(a2b) == npk
    for i, f in enumerate(a2b):
        assert R.is_roce_v4(f) and R.icrc_ok(f)
        op, qpn, psn, ackreq = R.bth(f)
        assert qpn == QPN_B and psn == 100 + i
        assert op == (0x0A if npk == 1 else 0x06 if i == 0 else 0x08 if i == npk - 1 else 0x07)
        assert ackreq == (i == npk - 1)
        pkt = Ether(f)
        assert pkt[BTH].opcode == op and pkt.chksum is not None
    assert len(b2a) == 1 and R.icrc_ok(b2a[0]) and R.bth(b2a[0])[:3] == (0x11, QPN_A, 100 + npk - 1)
    assert len(b2a[0]) == 62
    assert struct.unpack_from("<Q", cqe, 0)[0] == 0xABCD
    assert cqe[S.CQE[1]["STATUS"][0]] == S.WC_STATUS["SUCCESS"]
    assert cqe[S.CQE[1]["OPCODE"][0]] == S.WC_OP["RDMA_WRITE"]
    assert struct.unpack_from("<I", cqe, 8)[0] == size
    assert cqe[63] == 1


def test_pushed_wqe_is_not_read_again(pair):
    """A WQE pushed through the window is its doorbell and its data: the WRITE goes out with one
    DMA read (its payload), a PCIe read round trip sooner than after a doorbell."""
    reads = []
    a2b, b2a, mem_b, cqe, cycles, payload = run_write(pair, 64, push=True, reads=reads)
    assert cqe is not None and cqe[S.CQE[1]["STATUS"][0]] == S.WC_STATUS["SUCCESS"]
    assert mem_b.read(BUF_BASE + 50, 64) == payload
    assert reads == [(BUF_BASE + 100, 64)]
    assert pair[0]["tx"].out.get("stat_pushed") == 1
    _, _, _, cqe, rung, _ = run_write(new_pair(), 64)
    assert cqe is not None and rung - cycles >= RD_LATENCY


def test_bad_rkey_nak_error_cqe(pair):
    a2b, b2a, mem_b, cqe, cycles, payload = run_write(pair, 64, rkey=key(1) ^ 0x100)
    assert cqe is not None
    assert cqe[S.CQE[1]["STATUS"][0]] == S.WC_STATUS["REM_ACCESS_ERR"]
    assert len(b2a) == 1 and R.bth(b2a[0])[0] == 0x11 and b2a[0][54] == 0x62
    assert not getattr(mem_b, "mem", {})


@pytest.mark.parametrize("drop", [(2,), (0, 5), (9,), (3, 4, 8)])
def test_go_back_n_after_lost_packets(pair, drop):
    """Packets lost on the way: the responder NAKs the PSN it expects (sequence error), the
    requester goes back to it, the data lands once and the WQE completes successfully."""
    a2b, b2a, mem_b, cqe, cycles, payload = run_write(pair, 10 * 1024 + 100, drop=drop)
    assert cqe is not None, f"no completion after {cycles} cycles"
    assert cqe[S.CQE[1]["STATUS"][0]] == S.WC_STATUS["SUCCESS"]
    assert mem_b.read(BUF_BASE + 50, len(payload)) == payload
    naks = [f for f in b2a if f[54] == 0x60]
    assert naks and R.bth(naks[0])[2] == 100 + min(drop)
    # the requester goes back to the NAKed PSN, not to the start of the message
    psns = [R.bth(f)[2] for f in a2b]
    assert psns.count(100 + min(drop)) >= 2
    if min(drop):
        assert psns.count(100) == 1


def test_go_back_lost_again_is_naked_again(pair):
    """The NAKed PSN is lost again on the requester's next pass: the packets after it, not past
    the last one dropped before, show the responder that pass, and it NAKs again at once, so the
    requester goes back once more without waiting for its ACK timer (67 ms here)."""
    lost = []

    def drop(n, psn):
        if psn == 105 and len(lost) < 2:
            lost.append(n)
            return True
        return False

    a2b, b2a, mem_b, cqe, cycles, payload = run_write(pair, 30 * 1024, drop=drop)
    assert cqe is not None, f"no completion after {cycles} cycles"
    assert cqe[S.CQE[1]["STATUS"][0]] == S.WC_STATUS["SUCCESS"]
    assert mem_b.read(BUF_BASE + 50, len(payload)) == payload
    assert len(lost) == 2
    assert [R.bth(f)[2] for f in b2a if f[54] == 0x60] == [105, 105]
    assert [R.bth(f)[2] for f in a2b].count(105) == 3


def test_ack_timeout_fires_on_time(pair):
    """The last packet of a message is lost: nothing follows it for the responder to NAK, so the
    requester's ACK timer (timeout 1: 4.096 us * 2, 2,048 cycles) sends it again. The timer wheel
    looks at a QP in the tick (1,024 cycles) its timer falls due in, whatever the QP count (a
    scan of 16,384 QPs, one a clock, could be 16,384 cycles late)."""
    sent = []
    a2b, b2a, mem_b, cqe, cycles, payload = run_write(pair, 3 * 1024, drop=(2,), timeout=1, sent=sent)
    assert cqe is not None and cqe[S.CQE[1]["STATUS"][0]] == S.WC_STATUS["SUCCESS"]
    assert mem_b.read(BUF_BASE + 50, len(payload)) == payload
    assert [R.bth(f)[2] for f in a2b] == [100, 101, 102, 100, 101, 102]
    # due 2,048 cycles after the last packet went out; then a tick at most, the WQE's and the
    # payload's reads (a round trip each) and the frame (16 beats) before it is on the wire again
    late = sent[3] - sent[2] - 2048
    assert 0 < late <= 1024 + 2 * RD_LATENCY + 64, f"sent again {late} cycles after the timeout"


def test_read_asked_again_across_the_psn_wrap(pair):
    """A READ of three packets from PSN 0xFFFFFE (its responses FFFFFE, FFFFFF, 0) whose request
    is lost: the ACK timer asks again from its first PSN. The place to resume a READ partly
    answered must not be a stale one that the READ's PSN range holds across the wrap (it was 0,
    the QP's initial value: the request went again from PSN 0, which the responder drops as out
    of sequence, and a lost NAK then left the QP to exhaust its retries)."""
    a2b, b2a, mem_a, cqe, cycles, payload = run_write(pair, 3 * 1024, drop=(0,), timeout=1, op="RDMA_READ",
                                                      psn=0xFFFFFE)
    assert cqe is not None and cqe[S.CQE[1]["STATUS"][0]] == S.WC_STATUS["SUCCESS"]
    assert [R.bth(f)[:3:2] for f in a2b] == [(0x0C, 0xFFFFFE)] * 2
    assert [R.bth(f)[2] for f in b2a] == [0xFFFFFE, 0xFFFFFF, 0]
    assert mem_a.read(BUF_BASE + 100, len(payload)) == payload


PATTERN = bytes((i * 13 + 5) & 0xFF for i in range(40 * 1024))


def responder_frames(rsps, max_dest_rd=4, cycles=3000):
    """B's TX kernel alone, handed the responder frames `rsps` (RX's rsp port, the next as soon as
    it is ready) with max_dest_rd_atomic `max_dest_rd`, its payload reads answered from memory
    holding a pattern: the (opcode, PSN, syndrome, payload) of each frame it sends."""
    import roce_check as R
    tx = Kernel("tx")
    tx.reset()
    program(tx, MAC_B, IP_B, 1, 1 << 20)
    w = qpc_words(MAC_A, IP_A, QPN_A, 200, 100)
    w[S.QPC["RETRY"][0] // 4] = (w[S.QPC["RETRY"][0] // 4] & 0x0FFFFFFF) | max_dest_rd << 28
    tx.cfg_entry(S.CFG_TBL_QPC, IDX_B, w)
    mem = Memory()
    mem.write(BUF_BASE, PATTERN)
    for k in ("rdreq_ready", "eth_ready", "cpl_ready", "rdx_ready"):
        tx.inp.set(k, 1)
    frames, cur, todo = [], b"", list(rsps)
    for cycle in range(cycles):
        o = tx.out
        serve_reads(tx, mem, cycle)
        if o.get("eth_valid"):
            cur += o.get("eth_data")[:bin(o.get("eth_keep")).count("1")]
            if o.get("eth_last"):
                assert R.icrc_ok(cur)
                op, _, psn = R.bth(cur)[:3]
                bth = 14 + 20 + 8
                hdr = bth + 12 + (4 if op != 0x0E else 0)  # an AETH but on a MIDDLE
                pad = (cur[bth + 1] >> 4) & 3
                frames.append((op, psn, cur[hdr - 4] if op != 0x0E else None, cur[hdr:len(cur) - 4 - pad]))
                cur = b""
        taken = bool(todo) and o.get("rsp_ready")
        tx.inp.set("rsp_valid", int(bool(todo)))
        if todo:
            tx.inp.set("rsp", todo[0])
        tx.step()
        if taken:
            todo.pop(0)
    assert not todo
    return frames


def rsp(kind, psn, length=0, off=0, syndrome=0):
    return {"kind": S.RSP_KIND[kind], "qpn": IDX_B, "psn": psn, "syndrome": syndrome, "msn": 1,
            "va": BUF_BASE + off, "key": key(1), "len": length, "atomic": 0}


def test_read_asked_again_drops_the_responses_queued():
    """A READ of 32 packets (PSN 10-41) being sent, a READ behind it (42), then the first asked for
    again from its third packet (IBTA 9.7.5.1.6): what was not yet sent of the first, and all of
    the second, is dropped; the READ asked again is answered from PSN 12 with the bytes from its
    address. An ACK behind them all comes last."""
    frames = responder_frames([rsp("READ", 10, 32 * 1024), rsp("READ", 42, 1024),
                               rsp("READ_AGAIN", 12, 30 * 1024, 2048), rsp("ACK", 43)], cycles=4000)
    psns = [f[1] for f in frames]
    again = len(psns) - 1 - psns[::-1].index(12)
    assert 2 <= again < 32 and psns[:again] == list(range(10, 10 + again)), psns
    assert psns[again:] == list(range(12, 42)) + [43], psns
    assert [f[0] for f in frames[again:again + 2]] == [0x0D, 0x0E] and [f[0] for f in frames[-2:]] == [0x0F, 0x11]
    assert b"".join(f[3] for f in frames[again:-1]) == PATTERN[2048:2048 + 30 * 1024]


def test_reads_beyond_max_dest_rd_atomic_are_naked():
    """max_dest_rd_atomic 2: a third READ queued behind two still being sent is answered with an
    Invalid Request NAK (IBTA 9.7.5.2.4, C9-112), not with its data; with 3 it is answered."""
    reads = [rsp("READ", 10, 16 * 1024), rsp("READ", 26, 16 * 1024), rsp("READ", 42, 64)]
    frames = responder_frames(reads, max_dest_rd=2)
    assert [f[1] for f in frames] == list(range(10, 43))
    assert frames[-1][0] == 0x11 and frames[-1][2] == S.AETH["NAK_INV_REQ"]
    frames = responder_frames(reads, max_dest_rd=3)
    assert frames[-1][:2] == (0x10, 42) and frames[-1][3] == PATTERN[:64]


def test_parallel_crc_matches_zlib():
    """rnic_crc32_beat, the CRC of a whole beat, is CRC-32, chained across beats."""
    import ctypes
    import random
    import zlib

    from kernel_tb import lib

    f = lib().rnic_crc32_beat
    f.restype, f.argtypes = ctypes.c_uint32, [ctypes.c_uint32, ctypes.c_char_p]
    rng = random.Random(7)
    stream, crc = rng.randbytes(64 * 40), 0xFFFFFFFF
    for off in range(0, len(stream), 64):
        crc = f(crc, stream[off:off + 64])
        assert ~crc & 0xFFFFFFFF == zlib.crc32(stream[:off + 64]), off


def test_simulator_crc_is_the_parallel_form(tmp_path):
    """The simulator's carry-less-multiply CRC of a whole beat (rnic_crc_clmul.h) and the XOR
    tree synthesis takes (rnic_crc.c without PCLMUL) agree on every state and beat tried."""
    import ctypes
    import pathlib
    import random
    import subprocess

    root = pathlib.Path(__file__).resolve().parent.parent
    inc = [f"-I{root / d}" for d in ("hw/kernels/common", "spec/gen", "build/kernels/gen")]
    fns = []
    for name, isa in (("clmul", ["-mpclmul", "-msse4.1"]), ("tree", ["-mno-pclmul"])):
        so = tmp_path / f"crc_{name}.so"
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", *isa, *inc, str(root / "hw/kernels/common/rnic_crc.c"),
                        "-o", str(so)], check=True)
        f = ctypes.CDLL(str(so)).rnic_crc32_beat
        f.restype, f.argtypes = ctypes.c_uint32, [ctypes.c_uint32, ctypes.c_char_p]
        fns.append(f)
    rng = random.Random(3)
    for _ in range(5000):
        beat, crc = rng.randbytes(64), rng.getrandbits(32)
        assert fns[0](crc, beat) == fns[1](crc, beat)
