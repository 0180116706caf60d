"""The kernels' stages (docs/ARCHITECTURE.md, "Kernels"): called in any order within a clock they
give the same outputs, clock by clock (the FIFOs between them are registers)."""
import os
import pathlib
import random
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from kernel_tb import Kernel, S  # noqa: E402

CQ_BASE, EQ_BASE = 0x10000000, 0x20000000


def pair(k, seed):
    """kernel k twice: its stages in order, and shuffled each clock"""
    plain = Kernel(k)
    os.environ["RNIC_STAGE_ORDER"] = f"shuffle:{seed}"
    try:
        shuffled = Kernel(k)
    finally:
        del os.environ["RNIC_STAGE_ORDER"]
    return plain, shuffled


def cpl(rng, cqn):
    return {"cqn": cqn, "qpn": rng.randrange(1 << 24), "wr_id": rng.getrandbits(64),
            "byte_len": rng.randrange(1 << 20), "opcode": rng.randrange(8), "status": rng.choice([0, 0, 0, 5]),
            "ts_start": rng.getrandbits(32), "wqe_index": rng.randrange(1 << 16),
            "evt": rng.choice([0] * 15 + [S.EQE_TYPE["QP_FATAL"]]), "ctx": rng.randrange(S.NUM_CTX)}


def test_cq_stage_order_changes_nothing():
    rng = random.Random(7)
    ks = pair("cq", 12345)
    for k in ks:
        k.reset()
    # 8 CQs of 8 to 64 entries in context n % 4, the contexts' event queues
    script = []
    for ctx in range(4):
        script.append((S.CFG_TBL_EQC, ctx, [1 | (3 << 4), EQ_BASE + ctx * 0x1000, 0]))
    for n in range(8):
        script.append((S.CFG_TBL_CQC, n, [1 | ((3 + n % 4) << 4) | ((n % 4) << 16), CQ_BASE + n * 0x1000, 0, n % 4]))
    for table, index, words in script:
        for k in ks:
            k.cfg_entry(table, index, words)
    beats = irqs = 0
    seen = [0] * 8  # CQEs written to each CQ: the host consumes them all, now and then
    for clock in range(20000):
        inp = {"txc_valid": rng.random() < 0.5, "rxc_valid": rng.random() < 0.5, "db_valid": rng.random() < 0.2,
               "wr_ready": rng.random() < 0.8, "irq_ready": rng.random() < 0.7,
               "db_cqn": rng.randrange(8), "db_arm": rng.choice([0, 1, 1, 2])}
        inp["db_ci"] = seen[inp["db_cqn"]] & 0xffff
        inp["db_ctx"] = inp["db_cqn"] % 4
        txc, rxc = cpl(rng, rng.randrange(9)), cpl(rng, rng.randrange(9))
        fence = rng.random() < 0.01
        for k in ks:
            for f, v in inp.items():
                k.inp.set(f, int(v))
            k.inp.set("txc", txc)
            k.inp.set("rxc", rxc)
            k.inp.set("cfg_valid", int(fence))
            k.inp.set("cfg_addr", S.CFG_TBL_FENCE << S.CFG_TABLE_SHIFT)
            k.inp.set("cfg_data", clock & 0xff)
            k.step()
        a, b = (bytes(memoryview(k.out.w).cast("B")) for k in ks)
        assert a == b, f"clock {clock}"
        if ks[0].out.get("wr_valid") and inp["wr_ready"]:
            beats += 1
            n = (ks[0].out.get("wr_addr") - CQ_BASE) >> 12
            if 0 <= n < 8:
                seen[n] += 1
        irqs += ks[0].out.get("irq_valid") and inp["irq_ready"]
    # CQEs, events and MSI-X, and overflows (between two doorbells of a CQ): every path
    assert beats > 5000 and irqs > 500
    assert ks[0].out.get("stat_cqes") > 4000 and ks[0].out.get("stat_overflow") > 100


def test_rx_stage_order_changes_nothing():
    """RX's stages (the MAC's stream, the five of the ICRC check, the core) called in order and
    shuffled each clock: WRITEs of every last-beat length, back to back or apart, some with a
    payload or ICRC byte broken (dropped on their ICRC) or short (the MAC's keep), under random readies"""
    from test_isolation import KEY, MR_VA, program, frame

    ks = plain, _ = pair("rx", 777)
    for k in ks:
        k.reset()
        program(k)
    rng = random.Random(11)
    beats, psn, clock, broken, landed = [], 100, 0, 0, 0
    for _ in range(300):
        n = rng.choice([rng.randrange(0, 64), rng.randrange(64, 1024)])
        f = bytearray(frame(0x0A, psn, rng.randbytes(n) if n else b"", (MR_VA + rng.randrange(4096), KEY, n)))
        if rng.random() < 0.15:
            f[rng.randrange(len(f) - 4 - n, len(f))] ^= 1 << rng.randrange(8)  # payload or ICRC
            broken += 1
        else:
            psn += 1
            landed += n
        for off in range(0, len(f), 64):
            beats.append((bytes(f[off:off + 64]), off + 64 >= len(f)))
        beats += [None] * rng.choice([0, 0, 1, 3])
    writes = 0
    for b in beats + [None] * 3000:
        ready = {r: int(rng.random() < 0.8) for r in ("wr_ready", "rsp_ready", "fw_ready", "ack_ready", "cpl_ready",
                                                     "rdreq_ready")}
        for k in ks:
            for r, v in ready.items():
                k.inp.set(r, v)
            k.inp.set("eth_valid", int(b is not None))
            if b is not None:
                k.inp.set("eth_data", b[0])
                k.inp.set("eth_keep", (1 << len(b[0])) - 1)
                k.inp.set("eth_last", int(b[1]))
            k.step()
        a, c = (bytes(memoryview(k.out.w).cast("B")) for k in ks)
        assert a == c, f"clock {clock}"
        writes += plain.out.get("wr_valid") and ready["wr_ready"]
        clock += 1
    assert plain.out.get("stat_frames") == 300
    assert plain.out.get("stat_drop_icrc") == broken > 20
    assert plain.out.get("stat_write_bytes") == landed > 60000 and writes > 1000


def test_tx_stage_order_changes_nothing():
    """TX's stages (tx_core, tx_emit, the ICRC's three, tx_icrc_put, tx_wheel, tx_rsq) called in
    order and shuffled each clock, on both sides (B's sends the ACKs and READ responses), A's MAC
    taking a beat in 70% of the clocks: the same frames in the same clocks, each with the ICRC the
    independent checker computes. The WRITEs' sizes give last beats of every kind: one beat, 2
    bytes (130-byte frames: the ICRC begins in the beat before), full; the READs' responses are one
    packet and five."""
    import roce_check as R
    from test_kernels import BUF_BASE, run_write

    held = 0
    for op, size in [("RDMA_WRITE", n) for n in (1, 56, 120, 1000, 5000)] + [("RDMA_READ", 56), ("RDMA_READ", 5000)]:
        runs = []
        for seed in (0, 4242):
            plain, shuffled = pair("tx", seed or 1)
            plain_b, shuffled_b = pair("tx", seed + 7)
            ka = {"tx": shuffled if seed else plain, "rx": Kernel("rx"), "cq": Kernel("cq")}
            kb = {"tx": shuffled_b if seed else plain_b, "rx": Kernel("rx")}
            for k in list(ka.values()) + list(kb.values()):
                k.reset()
            sent = []
            a2b, b2a, mem, cqe, cycle, payload = run_write((ka, kb), size, sent=sent, eth_ready=random.Random(size),
                                                           op=op)
            assert cqe is not None and cqe[S.CQE[1]["STATUS"][0]] == S.WC_STATUS["SUCCESS"], size
            assert mem.read(BUF_BASE + (100 if op == "RDMA_READ" else 50), size) == payload
            assert a2b and b2a and all(R.icrc_ok(f) for f in a2b + b2a), size
            held += sum(len(f) % 64 in (1, 2, 3) for f in a2b)
            runs.append((a2b, b2a, sent, cycle, cqe))
        assert runs[0] == runs[1], (op, size)
    assert held >= 2
