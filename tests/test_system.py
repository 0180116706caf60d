"""System tests: the demo between two rnic-sim processes, its capture checked by independent tools
(tshark decode, zlib ICRC), and its frames compared in shape with Linux rxe's."""
import pathlib
import re
import sys

import pytest

import roce_check as R

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sim"))
import run_demo  # noqa: E402

RXE = R.RXE_DIR
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)\s*$")
SIZES = [1, 64, 4096, 65536, 1048576]
REQ_OPS = {0x06, 0x07, 0x08, 0x0A}
ACK = 0x11


@pytest.fixture(scope="module")
def demo():
    out = ROOT / "build" / "test-demo"
    rc, text, rates, cap, wall = run_demo.run(out)
    return {"rc": rc, "text": text, "rates": rates, "cap": cap, "out": out}


def rows(text):
    return [tuple(float(x) for x in m.groups()) for m in map(ROW.match, text.splitlines()) if m]


def test_demo_passes(demo):
    assert demo["rc"] == 0 and "demo: PASS" in demo["text"], demo["text"][-3000:]


def test_demo_table_covers_every_size_and_mtu(demo):
    got = {(int(r[0]), int(r[1])) for r in rows(demo["text"])}
    assert got == {(s, m) for s in SIZES for m in (1024, 4096)}, demo["text"]


def test_goodput_1mib_mtu4096_reaches_90gbps(demo):
    r = [r for r in rows(demo["text"]) if r[0] == 1048576 and r[1] == 4096]
    assert r and r[0][2] >= 90.0, demo["text"]


def test_simulators_report_their_speed(demo):
    assert set(demo["rates"]) == {"rnic0", "rnic1"}
    assert all(cycles > 0 and rate > 0 for cycles, _, rate in demo["rates"].values())


def test_capture_icrc_independent(demo):
    cap = demo["cap"]
    assert cap["roce"] > 0 and cap["bad_icrc"] == 0


def capture_frames(demo):
    return R.roce_frames(demo["cap"]["path"], v6=False)


def test_capture_decodes_in_tshark(demo):
    fields = R.tshark_fields(demo["cap"]["path"], ["infiniband.bth.opcode", "infiniband.bth.destqp",
                                                   "infiniband.bth.psn", "infiniband.invariant.crc"])
    ours = capture_frames(demo)
    assert len(fields) == len(ours)
    for row, frame in zip(fields, ours):
        op, qpn, psn, _ = R.bth(frame)
        assert int(row[0]) == op and int(row[1], 0) == qpn and int(row[2]) == psn
        assert op in REQ_OPS | {ACK}


def test_capture_message_structure_and_psns(demo):
    """Requests: FIRST MIDDLE* LAST or ONLY, PSN +1 per packet (24-bit), AckReq on LAST/ONLY only
    (as rxe does); every ACK acknowledges a PSN the requester sent with AckReq."""
    reqs, acks = {}, {}
    for f in capture_frames(demo):
        op, qpn, psn, ackreq = R.bth(f)
        (reqs if op in REQ_OPS else acks).setdefault(qpn, []).append((op, psn, ackreq, len(f)))
    assert reqs and acks
    for qpn, pkts in reqs.items():
        inside = False
        for i, (op, psn, ackreq, _) in enumerate(pkts):
            assert ackreq == (op in (0x08, 0x0A))
            if op in (0x06, 0x0A):
                assert not inside
                inside = op == 0x06
            else:
                assert inside
                inside = op == 0x07
            if i and pkts[i - 1][0] != 0x0A and pkts[i - 1][0] != 0x08:
                assert psn == (pkts[i - 1][1] + 1) & 0xFFFFFF
    acked_psns = {psn for pkts in reqs.values() for _, psn, ackreq, _ in pkts if ackreq}
    for pkts in acks.values():
        for _, psn, _, length in pkts:
            assert length == 62 and psn in acked_psns


def test_capture_shape_matches_rxe(demo):
    """The same operation recorded between two Linux rxe peers has the same header shape: frame
    length = headers + payload for each opcode, ACK frames of 62 bytes."""
    trace = RXE / "ib_write_bw_64k.pcap"
    rxe = R.roce_frames(trace, v6=False)
    overhead = {}
    for f in rxe:
        op = R.bth(f)[0]
        if op in (0x06, 0x07):
            overhead[op] = len(f) - 1024  # rxe ran at MTU 1024
        elif op == ACK:
            overhead[op] = len(f)
    ours = capture_frames(demo)
    for f in ours:
        op = R.bth(f)[0]
        if op == ACK:
            assert len(f) == overhead[ACK]
        elif op in (0x06, 0x07):
            assert (len(f) - overhead[op]) in (1024, 4096)
