"""The kernels' stages (docs/ARCHITECTURE.md, "Kernels"): called in any order within a clock they
give the same outputs, clock by clock (the FIFOs between them are registers)."""
import os
import pathlib
import random
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from kernel_tb import Kernel, S  # noqa: E402

CQ_BASE, EQ_BASE = 0x10000000, 0x20000000


def cq_pair():
    """the CQ kernel twice: its stages in order, and shuffled each clock"""
    plain = Kernel("cq")
    os.environ["RNIC_STAGE_ORDER"] = "shuffle:12345"
    try:
        shuffled = Kernel("cq")
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
    ks = cq_pair()
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
