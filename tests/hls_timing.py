"""Timing estimate of the HLS C kernels, run where no Vitis is: how deep the logic of one clock is.

Each function is compiled as Vitis HLS would see it (Debian's clang-14, every call inlined, every
constant loop unrolled, __SYNTHESIS__ and NDEBUG defined) and its LLVM IR is walked as a netlist:
an SSA value is a set of bit ranges, each a cone of logic over leaves (registers, inputs, or the
output of logic already closed), and a cone is priced when something needs it whole (a carry
chain, a memory address, a register's D input) as the shallowest tree of 6-input LUTs over its
leaves. So `(a << 8) | b` is wires, `x == y` over 32 bits is a tree of 64 inputs, an if-converted
branch adds its condition to the cones of what it writes, and a register's D input carries every
condition under which it is written; a read sees the writes on a path before it (not those of an
if's other arm: the register's SSA value, as the tool builds it). Delays are those of UltraScale+
speed grade -2 (DELAYS below, with where each comes from). tests/timing/ holds the Yosys
calibration: the same small functions in C and SystemVerilog, whose levels this model must match
within one (test_hls_timing.py).

Per function it reports
  - the recurrence: the longest path from a read of the state (arguments named `st`, the stage's
    own registers and memories) to a write of that state in the same clock. It must fit one clock;
  - the depth: the longest path from any register or input to any register or output, and the
    clocks of latency that depth needs at BUDGET_NS a clock;
  - block RAM reads whose data is used in the clock their address was computed (a block RAM gives
    its data the clock after), and loops that were not unrolled (not one clock's work).

    python tests/hls_timing.py               the table of the kernels' step functions
    python tests/hls_timing.py --paths       ... with each critical path's source lines
    python tests/hls_timing.py --each tx     every function of a kernel that takes its state
    python tests/hls_timing.py --ends tx     the 20 deepest writes of each function's state, one a
                                             source line, each with the functions on its path
"""
import math
import pathlib
import re
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from timing.ir import DebugInfo, Function, Types, build_ir  # noqa: E402
from timing.netlist import BUDGET_NS, CLOCK_NS, DELAYS, Model  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent


class Report:
    """a function's recurrence, depth (ns and levels), latency and what is not hardware"""

    def __init__(self, name, model):
        self.name = name
        ep = model.endpoints
        st = [e for e in ep if e[0] == "state" and e[1] == 1]
        al = [e for e in ep if e[1] == 0]
        self.rec = max(st, key=lambda e: e[2], default=None)
        self.dep = max(al, key=lambda e: e[2], default=None)
        self.rec_ns = self.rec[2] / 1000 if self.rec else 0.0
        self.rec_lv = self.rec[3] if self.rec else 0
        self.dep_ns = self.dep[2] / 1000 if self.dep else 0.0
        self.dep_lv = self.dep[3] if self.dep else 0
        self.latency = max(1, math.ceil(self.dep_ns / BUDGET_NS))
        self.loops = [model.di.where(d) for d in model.loops]
        self.state_bytes = model.state_bytes
        self.memories = len(model.brams)
        self.bram_comb = len(model.bram_comb)
        self.calls = [model.di.where(e[5]) for e in ep if e[0] in ("call", "divide")]
        self.model = model

    def chain(self, leaf, m):
        """the source lines a path passes, from its end back, each with when it gets there (ns)"""
        L, di = self.model.L, self.model.di
        out, last = [], None
        while leaf is not None and len(out) < 400:
            w = di.where(L.dbg[leaf]) if L.dbg[leaf] else None
            if w and w != last:
                out.append((w, L.ns[m][leaf] / 1000))
                last = w
            leaf = L.par[m][leaf]
        return out

    def ends(self, n=20):
        """the n deepest writes of the state, one a source line: (ns, line, the functions its path
        goes through with the time it reaches each)"""
        di = self.model.di
        best = {}
        for e in self.model.endpoints:
            if e[0] == "state" and e[1] == 1:
                w = di.where(e[5])
                if e[2] > best.get(w, (0,))[0]:
                    best[w] = (e[2], e[4])
        out = []
        for w, (ps, leaf) in sorted(best.items(), key=lambda kv: -kv[1][0])[:n]:
            fns = []
            for at, t in self.chain(leaf, 1):
                f = at.split()[-1]
                if fns and fns[-1][0] == f:
                    fns[-1] = (f, t)
                else:
                    fns.append((f, t))
            out.append((ps / 1000, w, " > ".join(f"{f} {t:.1f}" for f, t in fns[::-1])))
        return out

    def path(self, which):
        e = self.rec if which == "rec" else self.dep
        if e is None:
            return []
        m = 1 if which == "rec" else 0
        out = [f"{w} ({t:.2f} ns)" for w, t in self.chain(e[4], m)]
        return out[::-1] + [self.model.di.where(e[5])]


def analyze(text, top, state_args=("%st",)):
    types = Types(text)
    fn = Function(text, top)
    model = Model(text, types, fn, DebugInfo(text), set(state_args))
    model.run()
    return Report(top, model)


# kernel: (sources under hw/kernels, the functions the table reports): each stage (a pipeline of
# its own, II=1), and what is not yet split into stages as one function (UNSTAGED).
KERNELS = {
    "tx": (["tx/tx.c", "tx/tx_build.c", "tx/tx_sched.c", "tx/tx_reset.c", "tx/tx_egress.c", "tx/tx_emit.c", "tx/tx_rsq.c", "tx/tx_rdport.c",
            "tx/tx_wheel.c", "common/rnic_icrc.c", "common/rnic_crc.c"],
           ["tx_core", "tx_emit", "rnic_icrc_fold", "rnic_icrc_shift", "rnic_icrc_sum", "tx_icrc_put", "tx_wheel", "tx_rsq", "tx_rdport"]),
    "rx": (["rx/rx_mac.c", "rx/rx_icrc.c", "rx/rx_parse.c", "rx/rx_store.c", "rx/rx_ctx.c", "rx/rx.c", "rx/rx_req.c",
            "rx/rx_rdq.c", "rx/rx_rdport.c", "rx/rx_reset.c", "common/rnic_icrc.c", "common/rnic_crc.c"],
           ["rx_mac", "rnic_icrc_fold", "rnic_icrc_shift", "rnic_icrc_sum", "rx_icrc_check", "rx_hdr",
            "rx_classify", "rx_judge", "rx_store", "rx_ctx", "rx_rdq", "rx_rdport", "rx_core"]),
    "cq": (["cq/cq.c", "cq/cq_take.c", "cq/cq_ring.c", "cq/cq_write.c"], ["cq_take", "cq_ring", "cq_write"]),
}
# not yet stages: reported, not gated. Every other function of the table must fit the clock (the
# gate, test_hls_timing.py)
UNSTAGED = ("tx_core", "rx_core")


def kernel_includes():
    k = ROOT / "hw" / "kernels"
    gen = ROOT / "build" / "kernels" / "gen"
    return [k / "common", ROOT / "spec" / "gen", gen]


def declared_latency(name, srcs):
    """a stage's latency in clocks, as its source's header states it ("II=1, latency N")"""
    for s in srcs:
        text = (ROOT / "hw" / "kernels" / s).read_text()
        if re.search(rf"^\w[^\n(]*\b{name}\(", text, re.M):
            m = re.search(r"II=1, latency (\d+)", text)
            return int(m.group(1)) if m else None
    return None


def analyze_kernel(name, each=False, gated=False):
    """the kernel's stages and what is not yet split into stages; with gated, the stages only;
    with each, every function of it that takes the state, as compiled on its own (where in a
    step the depth is)"""
    srcs, tops = KERNELS[name]
    if gated:
        tops = [n for n in tops if n not in UNSTAGED]
        if not tops:
            return []
    k = ROOT / "hw" / "kernels"
    text = build_ir([k / s for s in srcs], includes=kernel_includes())
    names = re.findall(r"^define [^\n]*@(\w+)\([^\n]*%st\b", text, re.M) if each else tops
    out = []
    for n in names:
        r = analyze(text, n)
        r.kernel, r.declared = name, declared_latency(n, srcs) if n not in UNSTAGED else None
        out.append(r)
    return out


def over(r):
    """what keeps a stage from being a one-clock pipeline stage (empty: it fits)"""
    bad = []
    if r.rec_ns > BUDGET_NS:
        bad.append(f"recurrence over {BUDGET_NS} ns")
    if r.dep_ns > BUDGET_NS:
        bad.append(f"a path over {BUDGET_NS} ns between registers")
    if r.bram_comb:
        bad.append(f"{r.bram_comb} block RAM reads used in the clock of their address")
    if r.loops:
        bad.append(f"{len(r.loops)} loop(s) not unrolled: " + ", ".join(r.loops))
    if r.calls:
        bad.append("calls/divides: " + ", ".join(r.calls))
    return bad


def table(reports):
    lines = [f"{'kernel':<6} {'function':<20} {'state':>9} {'BRAM':>4} {'recurrence':>14} {'depth':>14} "
             f"{'clocks':>6} {'latency':>7}  notes",
             f"{'':<6} {'':<20} {'bytes':>9} {'':>4} {'ns (levels)':>14} {'ns (levels)':>14} "
             f"{'needed':>6} {'stated':>7}"]
    for r in reports:
        lat = "-" if r.declared is None else str(r.declared)
        lines.append(f"{r.kernel:<6} {r.name:<20} {r.state_bytes:>9} {r.memories:>4} {r.rec_ns:>7.2f} ({r.rec_lv:>4}) "
                     f"{r.dep_ns:>7.2f} ({r.dep_lv:>4}) {r.latency:>6} {lat:>7}  {'; '.join(over(r))}")
    return "\n".join(lines)


def main(argv):
    paths, each, ends = "--paths" in argv, "--each" in argv, "--ends" in argv
    names = [a for a in argv if not a.startswith("-")] or list(KERNELS)
    t0 = time.monotonic()
    reports = [r for n in names for r in analyze_kernel(n, each)]
    print(f"Logic depth per clock at {CLOCK_NS:.0f} ns ({1000 / CLOCK_NS:.0f} MHz), budget {BUDGET_NS} ns "
          f"after Vitis's 27% clock uncertainty; UltraScale+ -2, a LUT level {DELAYS['lut']} ns")
    print(table(reports))
    print(f"clocks needed: the depth at {BUDGET_NS} ns a clock; a stage's latency is its pipeline's clocks from "
          f"input to output, stated in its source. Every stage must fit one clock; not yet stages: {', '.join(UNSTAGED)}.")
    print(f"(analysed in {time.monotonic() - t0:.0f} s of wall time)")
    if ends:
        for r in reports:
            print(f"\n{r.name}: its deepest writes")
            for ns, w, fns in r.ends():
                print(f"  {ns:6.2f} {w}\n         {fns}")
    if paths:
        for r in reports:
            for which in ("rec", "dep"):
                print(f"\n{r.name} {which}:")
                for p in r.path(which):
                    print("   ", p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
