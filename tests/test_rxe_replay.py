"""Conformance against Linux rxe: the request frames of tests/data/rxe/ (recorded between two
rdma_rxe peers) are replayed into our responder (the RX, TX and CQ kernels of one NIC, called
cycle by cycle, set up with the trace's MACs, IPs, QPN, PSN, rkey and buffer address), and what it
answers must be what rxe answered: the same opcodes, PSNs, AETH syndromes and MSNs, frame lengths
and payloads (READ data and atomic results, our memory being loaded with what rxe returned)."""
import struct

import pytest

import roce_check as R
from kernel_tb import Kernel, S

TRACES = R.RXE_DIR
MAC_A, MAC_B = 0x525400990002, 0x525400990003
IP_A, IP_B = 0x0A630002, 0x0A630003
PD = 1
RING, CQ_RING, RECV_BUF = 0x1000_0000, 0x2000_0000, 0x3000_0000
MR_BUS = 0x4000_0000
MR_PAGES = 256
RD_LATENCY = 150
REQUESTS = set(range(0x00, 0x0D)) | {0x13, 0x14}
RESPONSES = {0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12}
# trace, one-line description
CASES = ["ib_write_bw_64k", "ib_write_bw_64k_loss", "ib_write_lat", "ib_read_bw_64k", "ib_read_lat",
         "ib_send_bw_8k", "ib_send_lat", "ibv_rc_pingpong", "ib_atomic_lat_fadd", "ib_atomic_lat_cswap"]


class DmaReads:
    """In-order DMA reads of one kernel, answered after a latency, one beat per clock."""

    def __init__(self, mem):
        self.mem, self.q = mem, []

    def request(self, cycle, addr, n):
        self.q.append([cycle + RD_LATENCY, addr, n, 0])

    def beat(self, cycle):
        if not self.q or self.q[0][0] > cycle:
            return None
        r = self.q[0]
        data = bytes(self.mem.get(r[1] + 64 * r[3] + i, 0) for i in range(64))
        r[3] += 1
        if 64 * r[3] >= r[2]:
            self.q.pop(0)
        return data


class Responder:
    """NIC B's kernels with host memory: frames in, frames out."""

    def __init__(self, qpn, rq_psn, rkey, va, pmtu=S.MTU["1024"], qpt=S.QPT["RC"], qkey=0):
        self.k = {n: Kernel(n) for n in ("tx", "rx", "cq")}
        for k in self.k.values():
            k.reset()
        self.mem = {}
        self.reads = {"tx": DmaReads(self.mem), "rx": DmaReads(self.mem)}
        self.writes = {}
        self.out, self.cur = [], b""
        self.base = va & ~0xFFF
        w = [0] * 18
        f = S.QPC
        w[0] = 1 | (S.QPS["RTS"] << 1) | (qpt << 4) | (pmtu << 16)
        w[f["QKEY"][0] // 4] = qkey
        w[f["PDN"][0] // 4] = PD
        w[f["SQ_BASE_LO"][0] // 4] = RING
        w[f["RQ_BASE_LO"][0] // 4] = RING + 0x10000
        w[f["RING_LOG"][0] // 4] = 6 | (6 << 8)
        w[f["CQN"][0] // 4] = 5 | (5 << 16)
        w[f["DEST_QPN"][0] // 4] = qpn  # both peers of every trace use the same QPN
        w[f["SQ_PSN"][0] // 4] = 0
        w[f["RQ_PSN"][0] // 4] = rq_psn
        w[f["DMAC_LO"][0] // 4] = MAC_A & 0xFFFFFFFF
        w[f["DMAC_HI"][0] // 4] = MAC_A >> 32
        w[f["DIP"][0] // 4] = IP_A
        w[f["ACCESS"][0] // 4] = S.ACCESS["REMOTE_WRITE"] | S.ACCESS["REMOTE_READ"] | S.ACCESS["REMOTE_ATOMIC"]
        w[f["NET"][0] // 4] = 0xC000 | (64 << 24)
        w[f["RETRY"][0] // 4] = 14 | (7 << 8) | (7 << 12) | (1 << 16) | (8 << 24) | (8 << 28)
        access = 0xF
        for k in self.k.values():
            k.cfg_entry(S.CFG_TBL_PORT, 0, [MAC_B & 0xFFFFFFFF, MAC_B >> 32, IP_B])
            for p in range(MR_PAGES):
                k.cfg_entry(S.CFG_TBL_MTT, p, [(MR_BUS + 4096 * p) & 0xFFFFFFFF, 0])
            k.cfg_entry(S.CFG_TBL_MPT, rkey >> S.KEY_TAG_BITS, [1 | (access << 4) | ((rkey & ((1 << S.KEY_TAG_BITS) - 1)) << 8), PD,
                                                   self.base & 0xFFFFFFFF, self.base >> 32, MR_PAGES * 4096, 0, 0, 12])
            # receive buffers: key index 1
            k.cfg_entry(S.CFG_TBL_MPT, 1, [1 | (access << 4) | (0x22 << 8), PD, RECV_BUF, 0, 1 << 16, 0, 200, 12])
            for p in range(16):
                k.cfg_entry(S.CFG_TBL_MTT, 200 + p, [RECV_BUF + 4096 * p, 0])
            k.cfg_entry(S.CFG_TBL_QPC, qpn, w)
        self.k["cq"].cfg_entry(S.CFG_TBL_CQC, 5, [1 | (10 << 4), CQ_RING, 0, 0])
        # rxe numbered both peers' QPs alike; ours, at that entry, is numbered QPN_BASE | entry:
        # the requests go to it (inject)
        self.qpn = S.QPN_BASE | qpn
        for name, ready in (("tx", ("rdreq_ready", "eth_ready", "cpl_ready", "rdx_ready")),
                            ("rx", ("wr_ready", "fw_ready", "ack_ready", "cpl_ready", "rdreq_ready")),
                            ("cq", ("wr_ready", "irq_ready"))):
            for r in ready:
                self.k[name].inp.set(r, 1)
        self.cycle = 0

    def mr_write(self, va, data):
        for i, b in enumerate(data):
            self.mem[MR_BUS + va - self.base + i] = b

    def post_recvs(self, n):
        for i in range(n):
            rwqe = struct.pack("<QB7x", i, 1) + struct.pack("<QII", RECV_BUF, 1 << 16, (1 << S.KEY_TAG_BITS) | 0x22)
            for j, b in enumerate(rwqe.ljust(64, b"\0")):
                self.mem[RING + 0x10000 + 64 * i + j] = b
        rx = self.k["rx"]
        while not rx.out.get("db_ready"):  # down in the clock a QPC commit takes
            self.step()
        rx.inp.set("db_valid", 1)
        rx.inp.set("db_qpn", self.qpn)
        rx.inp.set("db_pi", n)
        self.step()
        rx.inp.set("db_valid", 0)

    def step(self, beat=None):
        tx, rx, cq = self.k["tx"], self.k["rx"], self.k["cq"]
        c = self.cycle
        rx.inp.set("eth_valid", 1 if beat else 0)
        if beat:
            rx.inp.set("eth_data", beat[0])
            rx.inp.set("eth_keep", beat[1])
            rx.inp.set("eth_last", beat[2])
        for name in ("tx", "rx"):
            k, r = self.k[name], self.reads[name]
            if k.out.get("rdreq_valid"):
                r.request(c, k.out.get("rdreq_addr"), k.out.get("rdreq_len"))
            d = r.beat(c) if k.out.get("rd_ready") else None
            k.inp.set("rd_valid", 1 if d else 0)
            if d:
                k.inp.set("rd_data", d)
        for k in (rx, cq):
            o = k.out
            if o.get("wr_valid"):
                key = (id(k), o.get("wr_addr"), o.get("wr_len"))
                done = self.writes.get(key, 0)
                n = min(64, o.get("wr_len") - done)
                for i, b in enumerate(o.get("wr_data")[:n]):
                    self.mem[o.get("wr_addr") + done + i] = b
                self.writes[key] = 0 if o.get("wr_last") else done + n
        o = tx.out
        if o.get("eth_valid"):
            n = bin(o.get("eth_keep")).count("1")
            self.cur += o.get("eth_data")[:n]
            if o.get("eth_last"):
                self.out.append(self.cur)
                self.cur = b""
        tx.inp.set("rsp_valid", rx.out.get("rsp_valid"))
        tx.inp.set("rsp", rx.out.get("rsp"))
        rx.inp.set("rsp_ready", tx.out.get("rsp_ready"))
        tx.inp.set("ack_valid", rx.out.get("ack_valid"))
        rx.inp.set("rdx_valid", tx.out.get("rdx_valid"))
        cq.inp.set("txc_valid", tx.out.get("cpl_valid"))
        cq.inp.set("txc", tx.out.get("cpl"))
        cq.inp.set("rxc_valid", rx.out.get("cpl_valid"))
        cq.inp.set("rxc", rx.out.get("cpl"))
        tx.inp.set("cpl_ready", cq.out.get("txc_ready"))
        rx.inp.set("cpl_ready", cq.out.get("rxc_ready"))
        for k in (tx, rx, cq):
            k.cycle = c
            k.step()
        self.cycle += 1

    def inject(self, frame, gap=60):
        frame = R.with_dest_qpn(frame, self.qpn)
        for i in range(0, len(frame), 64):
            chunk = frame[i:i + 64]
            self.step((chunk.ljust(64, b"\0"), (1 << len(chunk)) - 1, int(i + 64 >= len(frame))))
        for _ in range(gap):
            self.step()

    def settle(self, quiet=3000):
        n, idle = len(self.out), 0
        while idle < quiet:
            self.step()
            idle = 0 if len(self.out) != n or self.cur else idle + 1
            n = len(self.out)


def shape(f):
    """What a responder frame must agree on: opcode, dest QPN, PSN, AETH (syndrome, MSN), length,
    and the payload (READ data, atomic original value)."""
    op, qpn, psn, _ = R.bth(f)
    aeth = f[54:58].hex() if op in (0x0D, 0x0F, 0x10, 0x11, 0x12) else ""
    return (hex(op), qpn, psn, aeth, len(f), f[58 if aeth else 54:-4].hex())


@pytest.mark.parametrize("name", CASES)
def test_responder_answers_as_rxe(name):
    path = TRACES / f"{name}.pcap"
    frames = R.roce_frames(path, v6=False)
    reqs = [f for f in frames if f[26:30] == IP_A.to_bytes(4, "big") and R.bth(f)[0] in REQUESTS]
    rxe = [f for f in frames if f[26:30] == IP_B.to_bytes(4, "big") and R.bth(f)[0] in RESPONSES]
    first = reqs[0]
    op, qpn, psn, _ = R.bth(first)
    reth = [f for f in reqs if R.bth(f)[0] in (0x06, 0x0A, 0x0B, 0x0C, 0x13, 0x14)]
    va, rkey = (struct.unpack_from(">QI", reth[0], 54) if reth else (0x10000, 0x100))
    nic = Responder(qpn, psn, rkey, va)
    if any(R.bth(f)[0] <= 0x05 for f in reqs):
        nic.post_recvs(64)
    # our memory holds what rxe's memory held: the data its READ responses returned, the value
    # its first atomic returned
    rd = [f for f in rxe if R.bth(f)[0] in (0x0D, 0x0E, 0x0F, 0x10)]
    if rd:
        data, psn0 = b"", R.bth(rd[0])[2]
        for f in rd:
            if R.bth(f)[0] in (0x0D, 0x10) and data:
                break
            data += f[58 if R.bth(f)[0] != 0x0E else 54:-4 - ((f[43] >> 4) & 3)]
        nic.mr_write(va, data)
    at = [f for f in rxe if R.bth(f)[0] == 0x12]
    if at:
        nic.mr_write(va, struct.unpack_from(">Q", at[0], 58)[0].to_bytes(8, "little"))
    for f in reqs:
        nic.inject(f)
    nic.settle()
    ours = [shape(f) for f in nic.out]
    theirs = [shape(f) for f in rxe]
    assert all(R.icrc_ok(f) for f in nic.out)
    # trimmed traces end before rxe answered the last requests: compare what rxe answered
    assert ours[:len(theirs)] == theirs
    assert len(ours) >= len(theirs)


def cqes(nic, n):
    """The first n CQEs the NIC wrote (owner bit set on the first pass)."""
    out = []
    for i in range(n):
        e = bytes(nic.mem.get(CQ_RING + 64 * i + j, 0) for j in range(64))
        if e[63] != 1:
            break
        out.append(e)
    return out


def test_ud_datagrams_from_rxe_are_received():
    """ibv_ud_pingpong's datagrams (DETH Q_Key 0x11111111, 1024-byte payload): each lands in a
    receive WQE behind the 40-byte GRH area and completes with the sender's QPN."""
    path = TRACES / "ibv_ud_pingpong.pcap"
    frames = [f for f in R.roce_frames(path, v6=False) if f[26:30] == IP_A.to_bytes(4, "big")]
    assert frames and all(R.bth(f)[0] == 0x64 for f in frames)
    qpn = R.bth(frames[0])[1]
    nic = Responder(qpn, 0, 0x100, 0x10000, pmtu=S.MTU["4096"], qpt=S.QPT["UD"], qkey=0x11111111)
    nic.post_recvs(len(frames))
    for f in frames:
        nic.inject(f)
    nic.settle()
    got = cqes(nic, len(frames))
    assert len(got) == len(frames) and nic.out == []  # UD: nothing answered
    last = frames[-1]
    for e in got:
        assert e[S.CQE[1]["STATUS"][0]] == S.WC_STATUS["SUCCESS"]
        assert e[S.CQE[1]["OPCODE"][0]] == S.WC_OP["RECV"]
        assert struct.unpack_from("<I", e, 8)[0] == 1024 + 40
        assert struct.unpack_from("<I", e, 20)[0] == struct.unpack_from(">I", last, 58)[0] & 0xFFFFFF
        assert e[S.CQE[1]["WC_FLAGS"][0]] & S.WC_FLAG["GRH"]
    # every datagram went to the same buffer: the last one is there, behind its GRH area
    buf = bytes(nic.mem.get(RECV_BUF + i, 0) for i in range(40 + 1024))
    assert buf[:20] == bytes(20) and buf[20:40] == last[14:34]
    assert buf[40:] == last[62:62 + 1024]
