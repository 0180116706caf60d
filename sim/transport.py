"""Benchmarks and the soak test of the RC transport, between two rnic-sim processes through the
verbs API (tests/apps/rc_ops.c).

    python sim/transport.py bench        the host's instructions per message (post + poll of an
                                         8 B WRITE, inline and not, callgrind); messages/s and
                                         goodput of small and large WRITEs and SENDs on 1 and 16
                                         QPs beside the link's limit; the same against the QP
                                         count, 1 to max_qp, round robin and at random (a PNG);
                                         256 MiB of scattered pages through the MTT TLBs (twice
                                         what they hold), with their counters; goodput of 1 MiB WRITE /
                                         READ / SEND at MTU 4096, clean and at 1% frame loss
                                         (simulated time at 250 MHz); how many cycles a second
                                         two simulated NICs run with their link busy
    python sim/transport.py soak [N]     N (default 100000) mixed operations on 4 QPs over a link
                                         dropping, duplicating, reordering and corrupting 2% of
                                         frames each; prints operations, retransmissions, NAKs by
                                         syndrome and duplicates dropped; then one 2 GiB WRITE
                                         and its READ back; 100,000 64 B WRITEs to 8,192 QPs at
                                         random over the same link; every object to its limit
"""
import os
import pathlib
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sim"))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "spec" / "gen"))
import run_demo  # noqa: E402
from link_client import LinkClient  # noqa: E402
import rnic_spec as S  # noqa: E402

RC_OPS = ROOT / "build" / "tests" / "rc_ops"
HOSTPATH = ROOT / "build" / "tests" / "hostpath"


def session(out, args, sim_args=()):
    """Run rc_ops between two fresh simulators; returns (exit code, output, {nic: counters}, wall s)."""
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    procs = run_demo.start_sims(out, sim_args)
    try:
        env = dict(os.environ, RNIC_SIM_DIR=str(out / "sock"))
        p = subprocess.run([str(RC_OPS), *args, "rnic0", "rnic1"], env=env, capture_output=True, text=True)
        stats = {}
        for name, _, _ in run_demo.NICS:
            c = LinkClient(str(out / "sock" / f"{name}.sock"))
            stats[name] = c.counters()
            c.close()
    finally:
        run_demo.stop_sims(procs)
    return p.returncode, p.stdout + p.stderr, stats, time.time() - t0


def host_path(out, rounds=200):
    """Instructions the host spends per message (x86-64, counted by callgrind): ibv_post_send of
    one signaled 8-byte RDMA WRITE, inline and through an SGE, and the ibv_poll_cq that takes its
    completion; with the WQE pushed (the default) and with doorbells only (RNIC_PUSH=0)."""
    procs = run_demo.start_sims(out)
    t0 = time.time()
    counts = {}
    try:
        for push in ("1", "0"):
            env = dict(os.environ, RNIC_SIM_DIR=str(out / "sock"), RNIC_PUSH=push)
            for mode in ("inline", "sge"):
                for fn in ("post_one", "poll_one"):
                    cg = out / f"callgrind.{push}.{mode}.{fn}"
                    p = subprocess.run(["valgrind", "--tool=callgrind", f"--toggle-collect={fn}",
                                        f"--callgrind-out-file={cg}", str(HOSTPATH), str(rounds), "rnic0", mode],
                                       env=env, capture_output=True, text=True, timeout=600)
                    if p.returncode or f"hostpath: {rounds} writes ok" not in p.stdout:
                        print(p.stdout + p.stderr)
                        return 1
                    totals = [ln for ln in cg.read_text().splitlines() if ln.startswith("totals:")]
                    counts[push, mode, fn] = int(totals[0].split()[1]) / rounds
    finally:
        run_demo.stop_sims(procs)
    print(f"-- host fast path, 8 B RDMA WRITE, {rounds} messages each, wall {time.time() - t0:.1f} s"
          " (target <= 150, as mlx5's provider)")
    for push, how in (("1", "WQE pushed"), ("0", "doorbell (RNIC_PUSH=0)")):
        for mode in ("inline", "sge"):
            post, poll = counts[push, mode, "post_one"], counts[push, mode, "poll_one"]
            print(f"instructions per message, {mode:6} {how:23}: ibv_post_send {post:.0f} + ibv_poll_cq {poll:.0f}"
                  f" = {post + poll:.0f}")
    return 0


# headers of a RoCEv2 (IPv4) request on the wire: preamble 8, Ethernet 14, IPv4 20, UDP 8, BTH 12,
# ICRC 4, FCS 4, inter-frame gap 12; a WRITE's first packet adds the RETH (16)
WIRE_OVERHEAD = 8 + 14 + 20 + 8 + 12 + 4 + 4 + 12
RETH = 16
AETH = 4
LINK_GBPS = 100


def wire_ns(op, size, mtu=4096):
    """Nanoseconds the 100 GbE link needs for one message: the floor of its rate."""
    npkts = max(1, -(-size // mtu))
    # a WRITE's first packet has a RETH; a READ's responses, an AETH on the first and the last
    wire = size + npkts * WIRE_OVERHEAD + (RETH if op == "write" else AETH * min(npkts, 2) if op == "read" else 0)
    return wire * 8 / LINK_GBPS


# (figure, rc_ops arguments, unit, issue 15's target)
RATES = [
    ("64 B WRITE, 16 QPs", ["--qps", "16", "rate", "write", "64", "4000", "sge"], "M/s", ">= 50 M/s"),
    ("64 B WRITE, 1 QP", ["--qps", "1", "rate", "write", "64", "2000", "sge"], "M/s", ">= 20 M/s"),
    ("64 B WRITE inline, 16 QPs", ["--qps", "16", "rate", "write", "64", "4000", "inline"], "M/s", ""),
    ("64 B SEND, 16 QPs", ["--qps", "16", "rate", "send", "64", "4000", "sge"], "M/s", ">= 40 M/s"),
    ("4 KiB WRITE, 1 QP", ["--mtu", "4096", "--qps", "1", "rate", "write", "4096", "1000", "sge"], "Gb/s", ">= 93 Gb/s"),
    ("64 KiB WRITE, 16 QPs", ["--mtu", "4096", "--qps", "16", "rate", "write", "65536", "400", "sge"], "Gb/s",
     ">= 97 Gb/s"),
    ("64 B READ, 16 QPs", ["--qps", "16", "rate", "read", "64", "4000", "sge"], "M/s", ""),
    ("64 KiB READ, 16 QPs", ["--mtu", "4096", "--qps", "16", "rate", "read", "65536", "400", "sge"], "Gb/s", ""),
]


RATE_LINE = re.compile(r": (\d+) cycles, ([\d.]+) M messages/s, ([\d.]+) s wall")


def sim_speed(out):
    """How fast two simulated NICs run while their link is busy: 64 KiB WRITEs on 16 QPs, the
    simulated cycles of the transfer over the wall time it took (rc_ops measures both)."""
    code, text, _, wall = session(out, ["--mtu", "4096", "--qps", "16", "rate", "write", "65536", "2000", "sge"])
    m = RATE_LINE.search(text)
    if code or not m:
        print(text)
        return 1
    print(f"-- simulation speed, two NICs, 64 KiB WRITEs on 16 QPs at line rate: {int(m.group(1))} cycles in "
          f"{float(m.group(3)):.2f} s wall = {int(m.group(1)) / float(m.group(3)) / 1e6:.2f} M cycles/s "
          f"(target (issue 15) >= 1 M; {os.cpu_count()} cores), session wall {wall:.0f} s")
    # what a cycle cost each simulator in processor time over its whole run (setup included)
    for nic, _, _ in run_demo.NICS:
        cost = re.search(r"([\d.]+) us a cycle", (out / f"{nic}.log").read_text())
        print(f"   {nic}: {float(cost.group(1)):.3f} us of processor a cycle (1 M cycles/s needs <= 1)")
    return 0


def message_rates(out):
    """Messages per second (or goodput) in simulated time at 250 MHz, each beside the 100 GbE limit."""
    rc = 0
    print(f"-- message rate and goodput (simulated time, 250 MHz, {LINK_GBPS} GbE, MTU 1024 for 64 B, 4096 above)")
    print(f"{'figure':28} {'measured':>12} {'link limit':>12}   target (issue 15)   wall")
    for name, args, unit, target in RATES:
        code, text, _, wall = session(out / name.split(",")[0].replace(" ", "_"), args)
        line = [ln for ln in text.splitlines() if ln.startswith("rate ")]
        if code or not line:
            print(text)
            rc = 1
            continue
        mps = float(RATE_LINE.search(line[0]).group(2))
        op, size = args[args.index("rate") + 1], int(args[args.index("rate") + 2])
        limit = 1e3 / wire_ns(op, size, 4096 if size > 64 else 1024)
        if unit == "M/s":
            print(f"{name:28} {mps:9.2f} M/s {limit:9.2f} M/s   {target:18}  {wall:4.0f} s")
        else:
            print(f"{name:28} {mps * size * 8 / 1e3:8.2f} Gb/s {limit * size * 8 / 1e3:8.2f} Gb/s   {target:18}"
                  f"  {wall:4.0f} s")
    return rc


LINK_NS, PCIE_RD_NS = 500, 600  # rnic-sim's defaults: one-way link latency, PCIe read round trip


# (operation, inline, what its floor holds beyond two link crossings): with the WQE pushed, no
# PCIe read of it; a payload from an SGE costs the requester's read, a READ the responder's
LATENCIES = [("write", "inline", 0), ("write", "sge", 1), ("send", "inline", 0), ("read", "sge", 1)]


def latency(out):
    """Doorbell-to-CQE time of 8 B WRITE, SEND and READ (NIC timestamps: the host's reaction is not
    in it), beside its floor: two link crossings and the PCIe reads on its path. The WQE is pushed
    with its doorbell (CTX_SQ_PUSH): no read of it."""
    rc = 0
    print("-- latency of one 8 B message, pushed WQE to CQE (simulated time)")
    for op, mode, reads in LATENCIES:
        code, text, _, wall = session(out / f"{op}-{mode}", ["lat", op, "50", mode])
        line = [ln for ln in text.splitlines() if ln.startswith("lat ")]
        if code or not line:
            print(text)
            rc = 1
            continue
        floor = 2 * LINK_NS + reads * PCIE_RD_NS
        print(f"{op:5} {mode:6}: {line[0].split(': ', 1)[1]}   floor {floor} ns (2 x {LINK_NS} ns link + "
              f"{reads} x {PCIE_RD_NS} ns PCIe read), wall {wall:.0f} s")
    return rc


def memory_per_qp():
    """The kernels' on-chip memory a QP costs (scripts/mem_budget.py), beside issue 16's target."""
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "mem_budget.py")], capture_output=True, text=True)
    m = re.search(r"per object, in every array indexed by its number: (.*); ([\d,]+) bytes a QP in all", r.stdout)
    c = re.search(r"caches in front of context memory \((.*)\): ([\d,]+) bytes, (\d+) bytes a QP .*; (\d+) bytes a QP "
                  r"with its cache share", r.stdout)
    if r.returncode or not m or not c:
        print(r.stdout + r.stderr)
        return 1
    print(f"-- on-chip memory a QP costs (datapath kernels): {c.group(4)} bytes, target (issue 16) <= 256 bytes:"
          f" {int(m.group(2).replace(',', '')):,d} in every array indexed by QP number ({m.group(1)}) and"
          f" {c.group(3)} of the caches ({c.group(1)}: {c.group(2)} bytes) at {S.MAX_QP} QPs")
    return 0


# QPs (a pair each, one per NIC) of the curve, up to what a NIC gives a process (max_qp)
CURVE_QPS = sorted({n for n in (1, 4, 16, 64, 256, 1024, 4096, 16384) if n <= S.MAX_QP} | {S.MAX_QP})
CURVE = [("64 B WRITE, round robin", 64, "M/s"), ("64 B WRITE, random QP", 64, "M/s"),
         ("4 KiB WRITE, random QP", 4096, "Gb/s"), ("64 KiB WRITE, round robin", 65536, "Gb/s")]  # rc_ops curve


def qpc_cache_line(c):
    """The RX kernel's QPC cache counters of one NIC, one line."""
    hits, misses, evicted, lat, wait = (c["RX_QPC_" + k] for k in ("HITS", "MISSES", "EVICTIONS", "MISS_CYCLES",
                                                                   "WAIT_CYCLES"))
    return (f"{'':28} QPC cache (receiver's RX): {hits} frames hit, {misses} contexts read"
            f" ({100 * misses / max(1, hits + misses):.2f}%), {evicted} evictions, no write-backs (clean lines),"
            f" {lat / max(1, misses):.0f} cycles a read, {wait} cycles waited at the head")


def tlb_line(tx, rx):
    """The TX kernel's MTT cache (TLB) counters of one NIC and the RX kernel's of one (the sender's
    and the receiver's), one line."""
    parts = []
    for k, c in (("TX", tx), ("RX", rx)):
        hits, reads, evicted, lat = (c[f"{k}_TLB_{f}"] for f in ("HITS", "MISSES", "EVICTIONS", "MISS_CYCLES"))
        parts.append(f"{k} {hits} hits, {reads} line reads (misses and ahead), {evicted} lines replaced,"
                     f" {lat / max(1, reads):.0f} cycles a read")
    return f"{'':28} MTT TLBs: " + "; ".join(parts) + "; no write-backs (clean lines)"


def tlb_bench(out):
    """Regions of scattered 4 KiB pages, as a card's host pins memory (RNIC_SIM_SCATTER=1): 256 MiB
    (twice the MTT entries a TLB holds) written and read back in one message each way; then 64 B
    and 4 KiB WRITEs on 16 QPs, each at an offset drawn at random in 512 MiB a side (4 times what a
    TLB maps: 3 pages in 4 missing). Each beside the link's limit, with the TLBs' counters (issue
    16's MTT cache; 15 minutes)."""
    old = os.environ.get("RNIC_SIM_SCATTER")
    os.environ["RNIC_SIM_SCATTER"] = "1"
    try:
        code, text, stats, wall = session(out / "big", ["--mtu", "4096", "big", str(256 << 20)])
        rand = [(size, *session(out / f"random-{size}", ["--mtu", "4096", "--qps", "16", "--span", str(512 << 20),
                                                         "rate", "write", str(size), str(n), "sge"]))
                for size, n in ((64, 8000), (4096, 4000))]
    finally:
        if old is None:
            del os.environ["RNIC_SIM_SCATTER"]
        else:
            os.environ["RNIC_SIM_SCATTER"] = old
    size = 256 << 20
    print(f"-- MTT TLB: 256 MiB of scattered 4 KiB pages (65,536 MTT entries, the TLB holds 32,768), wall {wall:.0f} s")
    for line in text.splitlines():
        if "Gb/s" in line:
            print(f"   {line.strip()} (link limit {size * 8 / wire_ns('write', size):.2f} Gb/s at MTU 4096)")
    print(tlb_line(stats["rnic0"], stats["rnic0"]))
    print("-- MTT TLB: WRITEs on 16 QPs, each at random in 512 MiB of scattered 4 KiB pages a side (131,072 MTT"
          " entries, 4 times a TLB)")
    for size, c, text, stats, wall in rand:
        m = RATE_LINE.search(text)
        if c or not m:
            print(text)
            code = 1
            continue
        mps, limit = float(m.group(2)), 1e3 / wire_ns("write", size, 4096 if size > 64 else 1024)
        v, lim, unit = (mps, limit, "M/s") if size == 64 else (mps * size * 8 / 1e3, limit * size * 8 / 1e3, "Gb/s")
        print(f"{f'{size} B at random':28} {v:9.2f} {unit:4} {lim:9.2f} {unit:4}   wall {wall:.0f} s")
        print(tlb_line(stats["rnic0"], stats["rnic1"]))
    return code


# lines of each kernel's MPT cache, as the kernels are built for a card
RNIC_MPT_LINES = 1 << int(re.search(r"#define RNIC_MPT_LOG (\d+)",
                                    (ROOT / "hw" / "kernels" / "common" / "rnic_kernel.h").read_text()).group(1))


def mpt_line(c, k):
    """One kernel's MPT cache counters of one NIC."""
    hits, reads, evicted, lat = (c[f"{k}_MPT_{f}"] for f in ("HITS", "MISSES", "EVICTIONS", "MISS_CYCLES"))
    return (f"{k} {hits} lookups hit, {reads} entries read ({100 * reads / max(1, hits + reads):.2f}%), {evicted} lines"
            f" taken, {lat / max(1, reads):.0f} cycles a read")


def mpt_bench(out):
    """64 B WRITEs on 16 QPs, each under a pair of keys (lkey, rkey) drawn at random from K
    registrations a side: K = 1, then 4 times the keys an MPT cache holds (every key's entry read
    from context memory again and again), beside the link's limit, with the MPT caches' counters
    (the sender's TX checks lkeys, the receiver's RX rkeys; issue 16's MPT cache)."""
    rc = 0
    limit = 1e3 / wire_ns("write", 64, 1024)
    print(f"-- MPT caches ({RNIC_MPT_LINES:,d} lines a kernel): 64 B WRITE, 16 QPs, keys drawn at random")
    for keys in (1, 4 * RNIC_MPT_LINES):
        code, text, stats, wall = session(out / f"keys-{keys}", ["--keys", str(keys), "--qps", "16", "rate", "write",
                                                                 "64", "8000", "sge"])
        m = RATE_LINE.search(text)
        if code or not m:
            print(text)
            rc = 1
            continue
        print(f"{f'{keys:,d} keys a side':28} {float(m.group(2)):9.2f} M/s {limit:9.2f} M/s   wall {wall:.0f} s")
        print(f"{'':28} {mpt_line(stats['rnic0'], 'TX')}; {mpt_line(stats['rnic1'], 'RX')}")
    return rc


def qp_curve(out):
    """Message rate and goodput against the number of QPs sending at once, 1 up to the most a NIC
    gives, each figure beside the link's limit, with the receiver's QPC cache counters; the curve as
    a PNG (build/bench/curve/qp_curve.png). The RX kernel's QPC cache holds 4,096 contexts: up to
    4,096 QPs nothing misses once each QP was seen, beyond it is where the misses show (issue 16)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    print(f"-- against the QP count (simulated time, 250 MHz, {LINK_GBPS} GbE; a QP pair each, up to max_qp "
          f"{S.MAX_QP})")
    print(f"{'figure':28} {'QPs':>6} {'measured':>12} {'link limit':>12}   wall")
    rc, points = 0, {}
    for nq in CURVE_QPS:
        code, text, stats, wall = session(out / f"qps-{nq}", ["--mtu", "4096", "--qps", str(nq), "curve"])
        lines = [ln for ln in text.splitlines() if ln.startswith("rate ")]
        if code or len(lines) != len(CURVE):
            print(text)
            rc = 1
            continue
        for (name, size, unit), line in zip(CURVE, lines):
            mps = float(RATE_LINE.search(line).group(2))
            limit = 1e3 / wire_ns("write", size, 4096 if size > 64 else 1024)
            v, lim = (mps, limit) if unit == "M/s" else (mps * size * 8 / 1e3, limit * size * 8 / 1e3)
            points.setdefault(name, []).append((nq, v / lim))
            print(f"{name:28} {nq:6d} {v:8.2f} {unit:4} {lim:8.2f} {unit:4}  {wall:4.0f} s (the four)")
        print(qpc_cache_line(stats["rnic1"]))
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, pts in points.items():
        ax.plot([n for n, _ in pts], [100 * f for _, f in pts], marker="o", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xticks(CURVE_QPS, [str(n) for n in CURVE_QPS])
    ax.minorticks_off()
    ax.set_ylim(0, 105)
    ax.set_xlabel("QPs sending at once (a pair each)")
    ax.set_ylabel("% of the 100 GbE link's limit")
    ax.set_title("rnic-sim, 250 MHz: RX QP contexts behind a 4,096-line cache")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "qp_curve.png", dpi=100)
    print(f"curve: {out / 'qp_curve.png'}")
    return rc


def bench():
    out = ROOT / "build" / "bench"
    rc = memory_per_qp()
    rc |= host_path(out / "host-path")
    rc |= message_rates(out / "rate")
    rc |= qp_curve(out / "curve")
    rc |= tlb_bench(out / "tlb")
    rc |= mpt_bench(out / "mpt")
    rc |= latency(out / "lat")
    rc |= sim_speed(out / "speed")
    for label, sim_args, args in [("clean link", [], []),
                                  ("1% frame loss", ["--drop", "0.01", "--seed", "11"], ["--ack-timeout", "6"])]:
        code, text, _, wall = session(out / label.split()[0], [*args, "--mtu", "4096", "bench"], sim_args)
        print(f"-- {label} (local ACK timeout {args[1] if args else 14}), wall {wall:.1f} s")
        print(text, end="")
        rc |= code
    return rc


def soak(n):
    out = ROOT / "build" / "soak"
    faults = ["--drop", "0.02", "--dup", "0.02", "--reorder", "0.02", "--corrupt", "0.02", "--seed", "29"]
    code, text, stats, wall = session(out, ["--ack-timeout", "6", "--seed", "5", "mix", str(n)], faults)
    print(text, end="")
    a, b = stats["rnic0"], stats["rnic1"]
    faults_seen = run_demo_faults(out)
    print(f"link faults injected: {faults_seen}")
    print(f"requester (rnic0): {a['TX_WQES']} WQEs started, {a['TX_RETRANSMITS']} go-back-N retransmissions, "
          f"{a['TX_NAKS_RCVD']} NAKs received ({a['TX_RNR_RCVD']} RNR), {a['RX_DROP_RSP']} duplicate or "
          f"out-of-order responses dropped, {a['RX_DROP_ICRC']} frames with a bad ICRC dropped")
    print(f"responder (rnic1): NAKs sent: PSN sequence {b['RX_NAK_PSN']}, RNR {b['RX_NAK_RNR']}, "
          f"remote access {b['RX_NAK_ACCESS']}, invalid request {b['RX_NAK_INV']}; "
          f"{b['RX_DUP']} duplicate requests (not executed twice), {b['RX_DROP_ICRC']} bad ICRC dropped, "
          f"{b['RX_DROP_MALFORMED']} malformed dropped")
    print(f"wall time {wall:.0f} s; {'PASS' if code == 0 else 'FAIL'}")
    # the largest message: 2 GiB, WRITE and READ back
    big, text, _, wall = session(out / "big", ["--mtu", "4096", "big", str(2 << 30)])
    print(text, end="")
    print(f"2 GiB message: wall time {wall:.0f} s; {'PASS' if big == 0 else 'FAIL'}")
    # thousands of QPs, twice the QPC cache's lines, 64 B WRITEs at random over the lossy link
    # (each QP's WRs complete once and in order, the data is checked; 16 minutes connecting)
    many, text, stats, wall = session(out / "many", ["--ack-timeout", "6", "--qps", "8192", "--order", "random",
                                                     "rate", "write", "64", "100000", "sge"], faults)
    print(text, end="")
    print(qpc_cache_line(stats["rnic1"]))
    print(f"8,192 QPs: wall time {wall:.0f} s; {'PASS' if many == 0 else 'FAIL'}")
    # every kind of object to the device's limit, the next refused, freed, again; data on the full
    # QP table (7 min: too long for make test)
    lim, text, _, wall = session(out / "limits", ["limits"])
    print(text, end="")
    print(f"limits: wall time {wall:.0f} s; {'PASS' if lim == 0 else 'FAIL'}")
    return code | big | many | lim


def tblchk(n=2000, runs=("mix", "checks", "rate")):
    """make tblchk: two simulators built with the table check (RNIC_SIM) under n mixed operations on
    4 QPs (scatter lists naming up to three memory regions) over a link that drops, duplicates and
    reorders 1% of its frames, then rc_ops' checks (every opcode, the error cases, RNR, flushes,
    UD, UC, a shared receive queue), then 2n 64 B WRITEs on 16 QPs; each prints how its kernels
    used their memories (tests/tblchk/tblchk.c), also kept in build/tblchk/run/<run>-<nic>.txt."""
    out = ROOT / "build" / "tblchk" / "run"
    faults = ["--drop", "0.01", "--dup", "0.01", "--reorder", "0.01", "--seed", "3"]
    rc = 0
    for name, args, sim_args in [("mix", ["--ack-timeout", "6", "--mix-keys", "3", "mix", str(n)], faults),
                                 ("checks", ["checks"], []),
                                 ("rate", ["--qps", "16", "rate", "write", "64", str(2 * n), "sge"], [])]:
        if name not in runs:
            continue
        code, text, _, wall = session(out / name, args, sim_args)
        rc |= code
        print(f"-- {name} ({' '.join(args)}; link {' '.join(sim_args) or 'clean'}), wall {wall:.0f} s")
        for nic, _, _ in run_demo.NICS:
            log = (out / name / f"{nic}.log").read_text()
            report = log[log.find("tblchk:"):]   # printed last, at exit
            (out / f"{name}-{nic}.txt").write_text(report)
            print(f"{nic}: {report}", end="")
    return rc


def run_demo_faults(out):
    total = {}
    for name, _, _ in run_demo.NICS:
        for line in (out / f"{name}.log").read_text().splitlines():
            if "dropped" in line and "duplicated" in line:
                words = line.replace(";", "").split()
                for k in ("dropped", "duplicated", "reordered", "corrupted"):
                    total[k] = total.get(k, 0) + int(words[words.index(k) + 1])
    return total


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "bench":
        sys.exit(bench())
    if len(sys.argv) >= 2 and sys.argv[1] == "tblchk":
        sys.exit(tblchk(int(sys.argv[2]) if len(sys.argv) > 2 else 2000, sys.argv[3:] or ("mix", "checks", "rate")))
    if len(sys.argv) >= 2 and sys.argv[1] == "soak":
        sys.exit(soak(int(sys.argv[2]) if len(sys.argv) > 2 else 100000))
    print(__doc__)
    sys.exit(2)
