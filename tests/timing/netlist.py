"""The netlist model of one function's IR: each SSA value is a set of bit ranges, each a cone of
logic over leaves (registers, inputs, or logic already priced), priced when something needs it
whole as the shallowest tree of 6-input LUTs over its leaves (tests/hls_timing.py says more).
Arrivals are integer picoseconds and levels (the cells Yosys's ltp counts), in two metrics: from
any source, and from the state only (the recurrence)."""
import re

from .ir import split_top, typed_operand

# Vitis HLS schedules against the period less its default clock uncertainty, 27% (UG1399,
# "Specifying the Clock Frequency"): at 250 MHz, 4 ns * 0.73.
CLOCK_NS = 4.0
BUDGET_NS = round(CLOCK_NS * 0.73, 2)

# Delays on UltraScale+ -2 (ns), and the cells Yosys's ltp counts for each (levels).
DELAYS = {
    # a LUT6 and the route into the next one: the unit of logic depth. UltraScale+ CLB LUTs
    # (UG574) have a logic delay near 0.1 ns; the route between two LUTs of a placed design
    # commonly takes 0.3-0.4 ns on -2 parts in Vivado's timing reports. 0.45 is that sum,
    # rounded up: the model's main assumption, which a Vitis/Vivado run must confirm.
    "lut": 0.45,
    # one CARRY4 of a carry chain (Yosys maps to CARRY4 cells, Vivado to CARRY8: UG574 puts 8
    # bits of carry in one CLB's dedicated chain, a few tens of ps a CLB).
    "carry4": 0.03,
    # MUXF7/MUXF8 of a ROM or wide mux in one CLB (UG574).
    "muxf": 0.08,
    # block RAM clock to data out without the output register (T_RCKO_DO; DS958 gives 0.901 ns
    # for Versal -2; DS923's UltraScale+ figure is of that order) and address setup (T_RCCK_ADDR).
    "bram_out": 0.90,
    "bram_setup": 0.35,
    # a DSP48E2 27x18 multiply used combinationally (no internal registers), UG579.
    "dsp": 2.50,
}
BRAM_MIN_BYTES = 1024  # scripts/mem_budget.py: state arrays of 1 KiB or more are block RAM
MAX_UNROLL_BYTES = 512 # the longest memset/memcpy taken as wires (a 64-byte beat is 64)
MAX_STORE = 16         # the widest store (bytes): memset and memcpy are stored 8 bytes at a time
CONE_CAP = 512         # leaves a cone may gather before it is priced and becomes a leaf itself
BIAS = 1024            # offset masks: bit BIAS + k is "the leaf's bit (out bit + k)"
PS = {k: round(v * 1000) for k, v in DELAYS.items()}  # the model counts integer picoseconds


class Leaves:
    """Each leaf: a register, an input, or a cone already priced. Two metrics: arrival from any
    source ('all'), and from the state only ('st': the recurrence). Each arrival is (ns, levels)
    or None, with the leaf it came through (for the critical path)."""

    def __init__(self):
        self.ns = [[], []]
        self.lv = [[], []]
        self.par = [[], []]
        self.width = []
        self.dbg = []
        self.carry = []  # CARRY4 cells of the chain that made the leaf (0: not a carry chain)

    def new(self, width, arr_all, arr_st, par=(None, None), dbg=None, carry=0):
        for m, a in ((0, arr_all), (1, arr_st)):
            self.ns[m].append(a[0] if a else None)
            self.lv[m].append(a[1] if a else None)
            self.par[m].append(par[m])
        self.width.append(max(1, width))
        self.dbg.append(dbg)
        self.carry.append(carry)
        return len(self.width) - 1


def cone_union(*cones):
    """cones are never changed once made: a union may return one of its operands"""
    cones = [c for c in cones if c]
    if not cones:
        return {}
    if len(cones) == 1:
        return cones[0]
    cones.sort(key=len, reverse=True)
    out = dict(cones[0])
    get = out.get
    for c in cones[1:]:
        for leaf, mask in c.items():
            o = get(leaf)
            out[leaf] = mask if o is None else o | mask
    return out


def cone_shift(c, k):
    """bit i of the result is bit i+k of the operand"""
    if k >= 0:
        return {leaf: mask << k for leaf, mask in c.items()}
    return {leaf: mask >> -k for leaf, mask in c.items()}


def cone_spread(c, w):
    """each result bit depends on w consecutive bits of the operand (a reduction over w bits)"""
    out = {}
    for leaf, mask in c.items():
        m, span = mask, 1
        while span < w:
            step = min(span, w - span)
            m |= m << step
            span += step
        out[leaf] = m
    return out


class Val:
    """segments [(lo, width, cone)], lo ascending, covering the value's bits"""
    __slots__ = ("w", "segs")

    def __init__(self, w, segs):
        self.w, self.segs = w, segs

    @staticmethod
    def const(w):
        return Val(w, [(0, w, {})])

    @staticmethod
    def leaf(w, leaf):
        return Val(w, [(0, w, {leaf: 1 << BIAS})])

    def cone(self):
        return cone_union(*(c for _, _, c in self.segs))

    def split(self, cuts):
        segs = []
        for lo, w, c in self.segs:
            inner = sorted(x for x in cuts if lo < x < lo + w)
            start = lo
            for x in inner + [lo + w]:
                segs.append((start, x - start, c))
                start = x
        return segs

    def shift(self, k, w=None):
        """value >> k (k < 0: << -k) as a w-bit value, vacated bits constant"""
        w = self.w if w is None else w
        segs = []
        for lo, sw, c in self.segs:
            nlo, nhi = lo - k, lo - k + sw
            a, b = max(nlo, 0), min(nhi, w)
            if a < b:
                segs.append((a, b - a, cone_shift(c, k)))
        return Val(w, fill(w, segs))


def fill(w, segs):
    """add constant segments where segs leave gaps"""
    out, at = [], 0
    for lo, sw, c in sorted(segs, key=lambda s: s[0]):
        if lo > at:
            out.append((at, lo - at, {}))
        out.append((lo, sw, c))
        at = lo + sw
    if at < w:
        out.append((at, w - at, {}))
    return out


def bitwise(a, b, mask_b=None, op="and"):
    """a OP b, bit by bit; a constant b is given as mask_b (its value)"""
    if mask_b is not None:
        segs = []
        for lo, w, c in a.segs:
            for sub_lo, sub_w, bit in runs(mask_b, lo, w):
                if op == "and" and not bit or op == "or" and bit:
                    segs.append((sub_lo, sub_w, {}))
                else:
                    segs.append((sub_lo, sub_w, c))
        return Val(a.w, segs)
    cuts = {lo for lo, _, _ in a.segs} | {lo for lo, _, _ in b.segs}
    sa, sb = a.split(cuts), b.split(cuts)
    return Val(a.w, [(lo, w, cone_union(ca, cb)) for (lo, w, ca), (_, _, cb) in zip(sa, sb)])


def runs(value, lo, w):
    """(lo, width, bit) runs of equal bits of value over [lo, lo + w)"""
    out, start = [], lo
    bit = (value >> lo) & 1
    for i in range(lo + 1, lo + w):
        b = (value >> i) & 1
        if b != bit:
            out.append((start, i - start, bit))
            start, bit = i, b
    out.append((start, lo + w - start, bit))
    return out


def control_dependence(rpo, succs):
    """{block: the blocks whose branch decides whether it runs} on an acyclic CFG (Ferrante,
    Ottenstein and Warren: b depends on a's branch when b post-dominates a successor of a but not
    a itself), post-dominators by Cooper, Harvey and Kennedy's iteration"""
    exit_ = "<exit>"
    index = {b: i for i, b in enumerate(rpo + [exit_])}  # a post-dominator comes later
    out = {b: (succs[b] or [exit_]) for b in rpo}
    ipdom = {exit_: exit_}

    def meet(a, b):
        while a != b:
            while index[a] < index[b]:
                a = ipdom[a]
            while index[b] < index[a]:
                b = ipdom[b]
        return a

    changed = True
    while changed:
        changed = False
        for b in rpo[::-1]:
            known = [s for s in out[b] if s in ipdom]
            new = known[0]
            for s in known[1:]:
                new = meet(new, s)
            if b not in ipdom or ipdom[b] != new:
                ipdom[b] = new
                changed = True
    ctrl = {}
    for a in rpo:
        if len(out[a]) < 2:
            continue
        for s in set(out[a]):
            r = s
            while r != ipdom[a] and r != exit_:
                ctrl.setdefault(r, set()).add(a)
                r = ipdom[r]
    return ctrl


class Model:
    """walks one function's IR"""

    def __init__(self, text, types, fn, dbginfo, state_args):
        self.types, self.fn, self.di = types, fn, dbginfo
        self.L = Leaves()
        self.vals, self.ptrs = {}, {}
        self.psel = {}         # pointer -> the cone that chose among its alternatives
        self.gep_sel = {}
        self.preds, self.edges = {}, {}
        self.branch = {}       # block -> the cone of its branch and of what it runs under
        self.mem = {}          # (obj, off, size) -> leaf of the register's initial value
        self.stores = {}       # obj -> {offset: [(size, Val, pred cone, block)] in program order}
        self.vstores = {}      # obj -> {(lo, hi): {block: cone of its writes at a computed address}}
        self.block = None      # the block being walked, and each block's successors (a bit each)
        self.reach = {}
        self.objsize = {}
        self.state_args = state_args
        for m in re.finditer(r"^(@[\w.]+) = [^\n]*?(constant|global) (.*)$", text, re.M):
            self.objsize[m.group(1)] = types.size(types.parse(m.group(3))[0])
        self.endpoints = []    # (kind, ns/lv per metric, leaf parents, dbg)
        self.loops = []
        self.bram_comb = []
        self.brams = set()     # (lo, hi) of the state's arrays used as block RAM
        self.params = {}
        self.state_bytes = 0
        for p in split_top(fn.params):
            t, v = typed_operand(types, p)
            self.params[v] = t
            if v in state_args:
                self.state_bytes += types.size(types.parse(p.split("*")[0])[0])

    # ----- pricing
    def price(self, cone, metric):
        """arrival (ps, levels, parent leaf) of the tree of LUT6 over a cone: its leaves by arrival,
        the earliest grouped six to a LUT first (what fits under a later leaf costs nothing)"""
        ns_m, lv_m, width = self.L.ns[metric], self.L.lv[metric], self.L.width
        groups = {}
        best_par, best = None, -1
        n_total = 0
        for leaf, mask in cone.items():
            t = ns_m[leaf]
            if t is None:
                continue
            n = mask.bit_count()
            if n > width[leaf]:
                n = width[leaf]
            g = groups.get(t)
            lv = lv_m[leaf]
            if g is None:
                groups[t] = [n, lv]
            else:
                g[0] += n
                if lv > g[1]:
                    g[1] = lv
            n_total += n
            if t > best:
                best, best_par = t, leaf
        if not groups:
            return None
        if n_total == 1:
            return best, groups[best][1], best_par
        t_lut = PS["lut"]
        times = sorted(groups)
        while True:
            t = times[0]
            n, lv = groups.pop(t)
            del times[0]
            if not times:
                if n <= 6:
                    return t + t_lut, lv + 1, best_par
                groups[t + t_lut] = [-(-n // 6), lv + 1]
                times = [t + t_lut]
                continue
            nxt = times[0]
            if n < 6:
                groups[nxt][0] += n
                groups[nxt][1] = max(groups[nxt][1], lv)
                continue
            k, r = divmod(n, 6)
            key = t + t_lut
            g = groups.get(key)
            if g is None:
                groups[key] = [k + (1 if r else 0), lv + 1]
                times.append(key)
                times.sort()
            else:
                g[0] += k + (1 if r else 0)
                g[1] = max(g[1], lv + 1)

    def close(self, cone, width=1, extra=(0, 0), dbg=None, carry=0):
        """a new leaf: the priced cone plus extra (ns, levels) of fixed logic after it, then a
        carry chain of `carry` CARRY4 cells. A chain fed by a chain overlaps it: the last bits
        of the first enter the second near its end (ltp's path: the longer chain, then one cell)."""
        arr = []
        par = []
        for m in (0, 1):
            p = self.price(cone, m)
            if p is None:
                arr.append(None)
                par.append(None)
            else:
                cells = carry
                k_in = self.L.carry[p[2]] if carry and p[2] is not None else 0
                if k_in:
                    cells = max(1, carry - k_in)
                arr.append((p[0] + extra[0] + cells * PS["carry4"], p[1] + extra[1] + cells))
                par.append(p[2])
        if arr[0] is None and arr[1] is None and extra == (0, 0):
            return None
        if arr[0] is None and extra != (0, 0) and not cone:
            return None
        return self.L.new(width, arr[0], arr[1], tuple(par), dbg, carry)

    def closed_val(self, w, cone, extra=(0, 0), dbg=None, carry=0):
        leaf = self.close(cone, w, extra, dbg, carry)
        return Val.const(w) if leaf is None else Val.leaf(w, leaf)

    def cap(self, v, dbg):
        segs = []
        for lo, w, c in v.segs:
            if len(c) > CONE_CAP:
                leaf = self.close(c, w, dbg=dbg)
                c = {} if leaf is None else {leaf: 1 << BIAS}
            segs.append((lo, w, c))
        return Val(v.w, segs)

    def endpoint(self, kind, cone, extra, dbg):
        for m in (0, 1):
            p = self.price(cone, m)
            if p is not None:
                self.endpoints.append((kind, m, p[0] + extra[0], p[1] + extra[1], p[2], dbg))

    # ----- values
    def width_of(self, t):
        t = self.types.resolve(t)
        return t[1] if t[0] == "int" else 64

    def val(self, t, s):
        s = s.strip()
        w = self.width_of(t)
        if s in self.vals:
            return self.vals[s]
        if s in self.params:
            leaf = self.L.new(w, (0, 0), None)
            self.vals[s] = Val.leaf(w, leaf)
            return self.vals[s]
        return Val.const(w)

    def const_int(self, s):
        s = s.strip()
        if re.fullmatch(r"-?\d+", s):
            return int(s)
        if s == "true":
            return 1
        if s in ("false", "null", "zeroinitializer"):
            return 0
        return None

    def ptr(self, t, s):
        """pointer: list of alternatives (obj, const offset, index cone or None, region)"""
        s = s.strip()
        if s in self.ptrs:
            return self.ptrs[s]
        if s in self.params:
            return [(s, 0, None, None)]
        if s.startswith("@"):
            return [(s, 0, None, None)]
        m = re.match(r"(getelementptr(?: inbounds)?|bitcast) \((.*)\)$", s)
        if m:
            if m.group(1) == "bitcast":
                inner = m.group(2).rsplit(" to ", 1)[0]
                pt, pv = typed_operand(self.types, inner)
                return self.ptr(pt, pv)
            return self.gep(m.group(2))
        return [("?", 0, None, None)]

    def gep(self, body):
        parts = split_top(body)
        src_t, _ = self.types.parse(parts[0])
        pt, pv = typed_operand(self.types, parts[1])
        alts = self.ptr(pt, pv)
        self.gep_sel = self.psel.get(pv.strip(), {})
        off, idx_cone, region = 0, None, None
        t = src_t
        for k, p in enumerate(parts[2:]):
            it, iv = typed_operand(self.types, p)
            c = self.const_int(iv)
            if k == 0:
                size = self.types.size(t)
                if c is not None:
                    off += c * size
                else:
                    idx_cone = cone_union(idx_cone or {}, self.val(it, iv).cone())
                continue
            rt = self.types.resolve(t)
            if rt[0] == "struct":
                o, t = self.types.field_offset(rt, c)
                off += o
            else:
                et = rt[2]
                size = self.types.size(et)
                if c is not None:
                    off += c * size
                else:
                    if region is None:
                        region = (off, off + size * rt[1])
                    idx_cone = cone_union(idx_cone or {}, self.val(it, iv).cone())
                t = et
        out = []
        for obj, o, ic, rg in alts:
            if ic is not None or idx_cone is not None:
                reg = rg if rg is not None else ((o + region[0], o + region[1]) if region else None)
                out.append((obj, o + off, cone_union(ic or {}, idx_cone or {}), reg))
            else:
                out.append((obj, o + off, None, None))
        return out

    # ----- memory
    def obj_kind(self, obj):
        if obj in self.state_args:
            return "state"
        if obj in self.params:
            return "port"
        if obj.startswith("@"):
            return "rom"
        if obj.startswith("alloca:"):
            return "local"
        return "unknown"

    def region_of(self, obj, reg):
        if reg is not None:
            return reg
        return (0, self.objsize.get(obj, 1 << 30))

    def load(self, obj, off, ic, reg, size, w, pred, dbg):
        kind = self.obj_kind(obj)
        if ic is None:
            key = (obj, off, size)
            if kind == "rom":
                v = Val.const(w)
            elif kind == "local":
                v = Val.const(w)
            else:
                leaf = self.mem.get(key)
                if leaf is None:
                    leaf = self.L.new(w, (0, 0), (0, 0) if kind == "state" else None, dbg=dbg)
                    self.mem[key] = leaf
                v = Val.leaf(w, leaf)
            extra = {}
            stores = self.stores.get(obj, {})
            for s_off in range(off - MAX_STORE + 1, off + size):
                for s_size, s_val, s_pred, s_blk in stores.get(s_off, ()):
                    if not self.reaches(s_blk):
                        continue
                    if s_off == off and s_size == size:
                        v = Val(w, [(lo, sw, cone_union(c, s_pred)) for lo, sw, c in
                                    bitwise(v, s_val if s_val.w == w else self.resize(s_val, w)).segs])
                    elif s_off + s_size > off:
                        extra = cone_union(extra, s_val.cone(), s_pred)
            for (lo, hi), c in self.vstores.get(obj, {}).items():
                if lo < off + size and off < hi:
                    extra = cone_union(extra, self.reaching(c))
            if extra:
                v = Val(w, [(lo, sw, cone_union(c, extra)) for lo, sw, c in v.segs])
            return self.cap(v, dbg)
        lo, hi = self.region_of(obj, reg)
        nent = max(1, (hi - lo) // max(1, size))
        abits = max(1, (nent - 1).bit_length())
        if kind == "rom":
            leaf = self.close(ic, w, self.rom_extra(abits), dbg)
            return Val.const(w) if leaf is None else Val.leaf(w, leaf)
        if kind == "state" and hi - lo >= BRAM_MIN_BYTES:
            self.brams.add((lo, hi))
            addr = self.close(ic, abits, dbg=dbg)
            if addr is not None and self.L.ns[0][addr] and self.L.ns[0][addr] > 0:
                self.bram_comb.append(dbg)
            arr = []
            for m in (0, 1):
                a = self.L.ns[m][addr] if addr is not None else None
                if a is not None and a > 0:
                    arr.append((a + PS["bram_setup"] + PS["bram_out"], self.L.lv[m][addr] + 1))
                else:
                    arr.append((PS["bram_out"], 1))
            leaf = self.L.new(w, arr[0], arr[1], (addr, addr), dbg)
            return Val.leaf(w, leaf)
        # registers or LUT RAM: a mux of the entries by the index
        leaf0 = self.mem.get((obj, "region", lo, hi))
        if leaf0 is None:
            leaf0 = self.L.new(w, (0, 0), (0, 0) if kind == "state" else None, dbg=dbg)
            self.mem[(obj, "region", lo, hi)] = leaf0
        entries = {leaf0: ((1 << min(nent, w * 8)) - 1) << BIAS}
        c = cone_union(entries, cone_spread(ic, abits))
        stores = self.stores.get(obj, {})
        for s_off in range(lo, hi) if len(stores) > hi - lo else [o for o in stores if lo <= o < hi]:
            for _, s_val, s_pred, s_blk in stores.get(s_off, ()):
                if self.reaches(s_blk):
                    c = cone_union(c, s_val.cone(), s_pred)
        for (vlo, vhi), vc in self.vstores.get(obj, {}).items():
            if vlo < hi and lo < vhi:
                c = cone_union(c, self.reaching(vc))
        return self.cap(Val(w, [(0, w, c)]), dbg)

    def rom_extra(self, abits):
        """a ROM of 2^abits entries after its index: LUT6, then MUXF7/F8, then more LUT levels"""
        if abits <= 6:
            return (PS["lut"], 1)
        if abits <= 8:
            return (PS["lut"] + (abits - 6) * PS["muxf"], 1 + abits - 6)
        more = -(-(abits - 8) // 2)
        return (PS["lut"] * (1 + more) + 2 * PS["muxf"], 3 + more)

    def resize(self, v, w):
        if v.w == w:
            return v
        if v.w > w:
            return Val(w, fill(w, [(lo, min(sw, w - lo), c) for lo, sw, c in v.segs if lo < w]))
        return Val(w, fill(w, list(v.segs)))

    def store(self, obj, off, ic, reg, size, v, pred, dbg):
        kind = self.obj_kind(obj)
        if ic is None:
            self.stores.setdefault(obj, {}).setdefault(off, []).append((size, v, pred, self.block))
            if kind in ("state", "port"):
                self.endpoint(kind, cone_union(v.cone(), pred), (0, 0), dbg)
            return
        lo, hi = self.region_of(obj, reg)
        nent = max(1, (hi - lo) // max(1, size))
        abits = max(1, (nent - 1).bit_length())
        c = cone_union(v.cone(), pred, cone_spread(ic, abits))
        blocks = self.vstores.setdefault(obj, {}).setdefault((lo, hi), {})
        merged = cone_union(blocks.get(self.block, {}), c)
        if len(merged) > CONE_CAP:
            leaf = self.close(merged, 1, dbg=dbg)
            merged = {} if leaf is None else {leaf: 1 << BIAS}
        blocks[self.block] = merged
        if kind == "state" and hi - lo >= BRAM_MIN_BYTES:
            self.brams.add((lo, hi))
            self.endpoint("state", c, (PS["bram_setup"], 0), dbg)
        elif kind in ("state", "port"):
            self.endpoint(kind, c, (0, 0), dbg)

    # ----- the walk
    def run(self):
        fn = self.fn
        order = fn.order
        succs = {}
        for b in order:
            term = fn.blocks[b][-1]
            succs[b] = re.findall(r"label (%[\w.\-]+|%\"[^\"]+\")", term.text)
        # reverse post-order, back edges ignored (a loop's body is walked once and reported)
        seen, post, back = set(), [], set()
        stack = [(order[0], iter(succs[order[0]]))]
        onstack = {order[0]}
        seen.add(order[0])
        while stack:
            b, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                stack.pop()
                onstack.discard(b)
                post.append(b)
                continue
            if nxt in onstack:
                back.add((b, nxt))
                continue
            if nxt not in seen:
                seen.add(nxt)
                onstack.add(nxt)
                stack.append((nxt, iter(succs[nxt])))
        rpo = post[::-1]
        for src, dst in back:
            self.loops.append(fn.blocks[src][-1].dbg)
        fwd = {b: [s for s in succs[b] if (b, s) not in back] for b in rpo}
        self.ctrl = control_dependence(rpo, fwd)
        bit = {b: 1 << i for i, b in enumerate(rpo)}
        for b in post:
            r = 0
            for n in fwd[b]:
                r |= bit[n] | self.reach[n]
            self.reach[b] = r
        self.bit = bit
        self.preds = {order[0]: {}}
        for b in rpo:
            if b not in self.preds:
                self.preds[b] = self.merge_pred(b)
            pred = self.preds[b]
            self.block = b
            for inst in fn.blocks[b]:
                self.step(inst, pred, back)

    def reaches(self, b):
        """whether a write in block b may be what the block being walked reads: b is it (the
        write came first) or comes before it on a path (a write in a branch the reader is not on,
        as an if's other arm, is not seen: each register's value is SSA, as the tool builds it)"""
        return b == self.block or bool(self.reach[b] & self.bit[self.block])

    def reaching(self, blocks):
        """the cone of the writes at computed addresses, of the blocks that reach this one"""
        return cone_union(*(c for b, c in blocks.items() if self.reaches(b)))

    def merge_pred(self, b):
        """the condition under which block b runs: the branches it is control dependent on (a
        block after an if/else's join does not depend on the if's condition)"""
        return cone_union(*(self.branch[a] for a in self.ctrl.get(b, ()) if a in self.branch))

    def add_edge(self, src, dst, cone, back):
        self.branch[src] = cone
        if (src, dst) in back:
            return
        self.edges.setdefault(dst, []).append((src, cone))

    def step(self, inst, pred, back):
        op, text, res, dbg = inst.op, inst.text, inst.res, inst.dbg
        T = self.types
        if op == "br":
            m = re.match(r"br i1 (.+?), label (\S+), label (\S+)$", text)
            if m:
                c = self.val(("int", 1), m.group(1)).cone()
                self.add_edge(inst.block, m.group(2), cone_union(pred, c), back)
                self.add_edge(inst.block, m.group(3), cone_union(pred, c), back)
            else:
                self.add_edge(inst.block, text.split()[-1], pred, back)
            return
        if op == "switch":
            m = re.match(r"switch (\S+) (\S+), label (\S+) \[(.*)\]", text)
            v = self.val(T.parse(m.group(1))[0], m.group(2))
            c = cone_union(pred, cone_spread(v.cone(), v.w))
            self.add_edge(inst.block, m.group(3), c, back)
            for lab in re.findall(r"label (\S+)", m.group(4)):
                self.add_edge(inst.block, lab, c, back)
            return
        if op == "ret":
            rest = text[4:].strip()
            if rest != "void":
                t, v = typed_operand(T, rest)
                self.endpoint("port", cone_union(self.val(t, v).cone(), pred), (0, 0), dbg)
            return
        if op in ("unreachable",):
            return
        if op == "phi":
            m = re.match(r"phi (?:\w+ )*?((?:i\d+|ptr|%[\w.]+)\**) (.*)$", text)
            t = T.parse(m.group(1))[0]
            incoming = re.findall(r"\[ (.+?), (%[\w.\-]+|%\"[^\"]+\") \]", m.group(2))
            edges = dict(self.edges_into(inst.block))
            if T.resolve(t)[0] == "ptr":
                alts, sel = [], {}
                for v, b in incoming:
                    if (b, inst.block) in back:
                        continue
                    alts += self.ptr(t, v)
                    sel = cone_union(sel, edges.get(b, {}))
                self.ptrs[res] = alts
                self.psel[res] = cone_union(sel, *(self.psel.get(v.strip(), {}) for v, _ in incoming))
                return
            w = self.width_of(t)
            vs, sel = [], {}
            for v, b in incoming:
                if (b, inst.block) in back:
                    continue
                vs.append(self.val(t, v))
                sel = cone_union(sel, edges.get(b, {}))
            if len(vs) == 1:
                self.vals[res] = vs[0]
                return
            out = vs[0]
            for v in vs[1:]:
                out = bitwise(out, v)
            self.vals[res] = self.cap(Val(w, [(lo, sw, cone_union(c, sel)) for lo, sw, c in out.segs]), dbg)
            return
        if op in ("alloca",):
            t, _ = T.parse(text[7:])
            self.ptrs[res] = [("alloca:" + res, 0, None, None)]
            self.objsize["alloca:" + res] = T.size(t)
            return
        if op == "getelementptr":
            body = text[len("getelementptr"):].strip()
            if body.startswith("inbounds"):
                body = body[8:].strip()
            self.ptrs[res] = self.gep(body)
            if self.gep_sel:
                self.psel[res] = self.gep_sel
            return
        if op in ("bitcast", "addrspacecast", "inttoptr", "ptrtoint"):
            m = re.match(r"\w+ (.*) to (.*)$", text)
            st, sv = typed_operand(T, m.group(1))
            dt = T.parse(m.group(2))[0]
            if T.resolve(st)[0] == "ptr" and T.resolve(dt)[0] == "ptr":
                self.ptrs[res] = self.ptr(st, sv)
                if sv.strip() in self.psel:
                    self.psel[res] = self.psel[sv.strip()]
            elif T.resolve(dt)[0] == "ptr":
                self.ptrs[res] = [("?", 0, None, None)]
            else:
                self.vals[res] = self.val(st, sv) if T.resolve(st)[0] != "ptr" else Val.const(64)
            return
        if op == "load":
            m = re.match(r"load (?:volatile )?(.+?), (.+?)(, align \d+)?$", text)
            t = T.parse(m.group(1))[0]
            pt, pv = typed_operand(T, m.group(2))
            size = T.size(t)
            w = self.width_of(t)
            if T.resolve(t)[0] == "ptr":
                self.ptrs[res] = [("?", 0, None, None)]
                return
            alts = self.ptr(pt, pv)
            outs = [self.load(o, off, ic, rg, size, w, pred, dbg) for o, off, ic, rg in alts]
            v = outs[0]
            for o in outs[1:]:
                v = bitwise(v, o)
            sel = self.psel.get(pv.strip())
            if sel:
                # a load through a chosen pointer: each place read, then a mux
                v = self.cap(Val(v.w, [(lo, sw, cone_union(c, sel)) for lo, sw, c in v.segs]), dbg)
            self.vals[res] = v
            return
        if op == "store":
            m = re.match(r"store (?:volatile )?(.+?), (.+?)(, align \d+)?$", text)
            parts = split_top(m.group(1) + ", " + m.group(2))
            vt, vv = typed_operand(T, parts[0])
            pt, pv = typed_operand(T, parts[1])
            size = T.size(vt)
            v = self.val(vt, vv) if T.resolve(vt)[0] != "ptr" else Val.const(64)
            wpred = cone_union(pred, self.psel.get(pv.strip(), {}))
            for o, off, ic, rg in self.ptr(pt, pv):
                self.store(o, off, ic, rg, size, v, wpred, dbg)
            return
        if op == "call":
            self.call(inst, pred)
            return
        if op == "freeze":
            t, v = typed_operand(T, text[7:])
            self.vals[res] = self.val(t, v)
            return
        if op in ("extractvalue", "insertvalue", "extractelement", "insertelement", "shufflevector"):
            args = split_top(text[len(op):].strip())
            cone = {}
            for a in args:
                try:
                    t, v = typed_operand(T, a)
                    cone = cone_union(cone, self.val(t, v).cone())
                except (ValueError, AttributeError):
                    pass
            self.vals[res] = self.closed_val(64, cone, dbg=dbg)
            return
        self.arith(inst)

    def edges_into(self, b):
        return [(src, c) for src, c in self.edges.get(b, [])]

    def call(self, inst, pred):
        text, res, dbg = inst.text, inst.res, inst.dbg
        T = self.types
        m = re.match(r"call (?:\w+ )*?(\S+) (?:\([^)]*\) )?(@[\w.]+)\((.*)\)(?: #\d+)?$", text)
        if not m:
            return
        name, args = m.group(2), split_top(m.group(3))
        if name.startswith(("@llvm.dbg", "@llvm.lifetime", "@llvm.assume", "@llvm.experimental.noalias",
                            "@__assert_fail", "@llvm.trap")):
            return
        typed = [typed_operand(T, a) for a in args if a != "..."]
        if name.startswith(("@llvm.memset", "@llvm.memcpy", "@llvm.memmove")):
            dst = self.ptr(*typed[0])
            n = self.const_int(typed[2][1])
            if n is not None and n > MAX_UNROLL_BYTES:
                # a loop the compiler turned into a call: not one clock's work
                self.loops.append(dbg)
                src_cone = self.val(*typed[1]).cone() if name.startswith("@llvm.memset") else {}
                for o, off, ic, rg in dst:
                    self.store(o, off, ic or {}, rg or (off, off + n), 8, Val(64, [(0, 64, src_cone)]), pred, dbg)
                return
            if name.startswith("@llvm.memset"):
                src_val = self.val(*typed[1])
                chunks = self.chunks(n)
                for o, off, ic, rg in dst:
                    for c_off, c_size in chunks:
                        v = Val(8 * c_size, [(0, 8 * c_size, src_val.cone())])
                        self.store(o, off + c_off, ic, rg, c_size, v, pred, dbg)
                return
            src = self.ptr(*typed[1])
            if n is None:
                cone = cone_union(pred, self.val(*typed[2]).cone())
                for o, off, ic, rg in src:
                    lo, hi = self.region_of(o, rg)
                    v = self.load(o, off, cone, (lo, hi), 8, 64, pred, dbg)
                    cone = cone_union(cone, v.cone())
                for o, off, ic, rg in dst:
                    lo, hi = self.region_of(o, rg)
                    self.store(o, off, cone, (off, hi), 8, Val(64, [(0, 64, cone)]), pred, dbg)
                return
            for c_off, c_size in self.chunks(n):
                vals = [self.load(o, off + c_off, ic, rg, c_size, 8 * c_size, pred, dbg) for o, off, ic, rg in src]
                v = vals[0]
                for x in vals[1:]:
                    v = bitwise(v, x)
                for o, off, ic, rg in dst:
                    self.store(o, off + c_off, ic, rg, c_size, v, pred, dbg)
            return
        ops = [self.val(t, v) for t, v in typed if T.resolve(t)[0] == "int"]
        rt = T.parse(m.group(1))[0]
        w = self.width_of(rt) if T.resolve(rt)[0] == "int" else 64
        base = name.split(".")[1] if name.startswith("@llvm.") else None
        cone = cone_union(*(o.cone() for o in ops)) if ops else {}
        if base in ("bswap", "bitreverse"):
            self.vals[res] = self.closed_val(w, ops[0].cone())
        elif base in ("fshl", "fshr") and self.const_int(typed[2][1]) is not None:
            k = self.const_int(typed[2][1]) % w
            a, b = ops[0], ops[1]
            hi = a.shift(-k) if base == "fshl" else a.shift(-(w - k))
            lo = b.shift(w - k) if base == "fshl" else b.shift(k)
            self.vals[res] = bitwise(hi, lo)
        elif base in ("umin", "umax", "smin", "smax", "usub", "uadd", "ssub", "sadd", "abs"):
            self.vals[res] = self.closed_val(w, cone, (PS["lut"], 1), dbg, self.cells(w))
        elif base in ("ctlz", "cttz", "ctpop"):
            self.vals[res] = self.closed_val(w, cone_spread(ops[0].cone(), ops[0].w), (PS["lut"], 1), dbg)
        elif base in ("umul", "smul"):
            self.vals[res] = self.closed_val(w, cone, (PS["dsp"], 1), dbg)
        else:
            self.vals[res] = self.closed_val(w, cone_spread(cone, w), (0, 0), dbg)
            if not name.startswith("@llvm."):
                self.endpoints.append(("call", 0, 0, 0, None, dbg))

    @staticmethod
    def chunks(n):
        out, off = [], 0
        while off < n:
            c = 8 if n - off >= 8 else 1 << ((n - off).bit_length() - 1)
            out.append((off, c))
            off += c
        return out

    @staticmethod
    def cells(w):
        return -(-w // 4)

    def arith(self, inst):
        text, res, dbg, op = inst.text, inst.res, inst.dbg, inst.op
        T = self.types
        if op in ("zext", "sext", "trunc"):
            m = re.match(r"\w+ (.*) to (.*)$", text)
            st, sv = typed_operand(T, m.group(1))
            w = self.width_of(T.parse(m.group(2))[0])
            v = self.val(st, sv)
            if op == "sext" and w > v.w:
                top = [c for lo, sw, c in v.segs if lo + sw == v.w][0]
                self.vals[res] = Val(w, list(v.segs) + [(v.w, w - v.w, cone_union(cone_shift(top, 0)))])
            else:
                self.vals[res] = self.resize(v, w)
            return
        if op == "icmp":
            m = re.match(r"icmp (\w+) (.+)$", text)
            cond = m.group(1)
            a_s, b_s = split_top(m.group(2))
            t, av = typed_operand(T, a_s)
            w = self.width_of(t)
            if T.resolve(t)[0] == "ptr":
                self.vals[res] = Val.const(1)
                return
            a, b = self.val(t, av), self.val(t, b_s)
            bc = self.const_int(b_s)
            if cond in ("eq", "ne"):
                x = bitwise(a, b) if bc is None else a
                cone = {}
                for lo, sw, c in x.segs:
                    cone = cone_union(cone, cone_spread(c, sw))
                self.vals[res] = self.cap(Val(1, [(0, 1, cone)]), dbg)
                return
            # magnitude: a carry chain over the bits that are not constant
            x = bitwise(a, b) if bc is None else a
            top = max((lo + sw for lo, sw, c in x.segs if c), default=0)
            per_bit = x.cone()
            if bc is not None:
                # against a constant: Yosys and Vivado build a LUT tree (or a short carry chain)
                cone = cone_spread(per_bit, top)
                self.vals[res] = self.cap(Val(1, [(0, 1, cone)]), dbg)
                return
            self.vals[res] = self.closed_val(1, per_bit, dbg=dbg, carry=self.cells(top))
            return
        if op == "select":
            parts = split_top(text[7:])
            ct, cv = typed_operand(T, parts[0])
            at, av = typed_operand(T, parts[1])
            bt, bv = typed_operand(T, parts[2])
            if T.resolve(at)[0] == "ptr":
                c = self.val(ct, cv).cone()
                self.ptrs[res] = self.ptr(at, av) + self.ptr(bt, bv)
                self.psel[res] = cone_union(c, self.psel.get(av.strip(), {}), self.psel.get(bv.strip(), {}))
                return
            c = self.val(ct, cv).cone()
            v = bitwise(self.val(at, av), self.val(bt, bv))
            self.vals[res] = self.cap(Val(v.w, [(lo, sw, cone_union(cc, c)) for lo, sw, cc in v.segs]), dbg)
            return
        m = re.match(r"(\w+) (?:(?:nuw|nsw|exact|disjoint) )*(.+)$", text)
        if not m:
            raise ValueError(f"cannot read {text!r}")
        a_s, b_s = split_top(m.group(2))[:2]
        t, av = typed_operand(T, a_s)
        w = self.width_of(t)
        a, b = self.val(t, av), self.val(t, b_s)
        bc, ac = self.const_int(b_s), self.const_int(av)
        if op in ("and", "or", "xor"):
            if bc is not None:
                self.vals[res] = bitwise(a, None, bc & ((1 << w) - 1), op)
            elif ac is not None:
                self.vals[res] = bitwise(b, None, ac & ((1 << w) - 1), op)
            else:
                self.vals[res] = self.cap(bitwise(a, b), dbg)
            return
        if op in ("shl", "lshr", "ashr"):
            if bc is not None:
                k = bc if op != "shl" else -bc
                v = a.shift(k)
                if op == "ashr":
                    top = [c for lo, sw, c in a.segs if lo + sw == w][0]
                    segs = [(lo, min(sw, w - bc - lo), c) for lo, sw, c in v.segs if lo < w - bc]
                    v = Val(w, segs + [(w - bc, bc, top)]) if bc else v
                self.vals[res] = v
                return
            # a barrel shifter: each output bit a mux of the data by the amount (a LUT6 is a 4:1
            # mux, so a tree over data and amount bits prices it); a constant shifted is a
            # decoder of the amount alone
            lg = (w - 1).bit_length()  # a shift by w or more is undefined: the amount's low bits
            sel = [cone_spread(c, min(lo + sw, lg) - lo) for lo, sw, c in b.segs if c and lo < lg]
            kb = sum(min(lo + sw, lg) - lo for lo, sw, c in b.segs if c and lo < lg)
            data = [] if ac is not None else [cone_spread(c, min(sw, 1 << kb)) for lo, sw, c in a.segs if c]
            self.vals[res] = self.closed_val(w, cone_union(*sel, *data), dbg=dbg)
            return
        if op in ("add", "sub"):
            if bc is not None and op == "add" and bc & ((1 << w) - 1) == 0:
                self.vals[res] = a
                return
            x = bitwise(a, b) if (bc is None and ac is None) else (a if bc is not None else b)
            live = [(lo, sw) for lo, sw, c in x.segs if c]
            lo_bit = min((lo for lo, _ in live), default=0)
            top = max((lo + sw for lo, sw in live), default=1)
            # a sum's carry reaches one bit past its operands; a difference borrows to the top
            span = (min(w, top + 1) if op == "add" else w) - lo_bit
            self.vals[res] = self.closed_val(w, x.cone(), dbg=dbg, carry=self.cells(span))
            return
        if op == "mul":
            if bc is not None and bc > 0 and bc & (bc - 1) == 0:
                self.vals[res] = a.shift(-(bc.bit_length() - 1))
                return
            self.vals[res] = self.closed_val(w, cone_union(a.cone(), b.cone()), (PS["dsp"], 1), dbg)
            return
        if op in ("udiv", "sdiv", "urem", "srem"):
            if bc is not None and bc > 0 and bc & (bc - 1) == 0:
                k = bc.bit_length() - 1
                self.vals[res] = a.shift(k) if op[1:] == "div" else bitwise(a, None, bc - 1, "and")
                return
            if bc is not None and bc > 0:
                # by a constant: a function of the dividend's live bits, a ROM of them at most
                live = max((lo + sw for lo, sw, c in a.segs if c), default=1)
                self.vals[res] = self.closed_val(w, a.cone(), self.rom_extra(live), dbg)
                return
            self.vals[res] = self.closed_val(w, cone_union(a.cone(), b.cone()), (10 * PS["dsp"], 99), dbg)
            self.endpoints.append(("divide", 0, 0, 0, None, dbg))
            return
        raise ValueError(f"operation {op!r} not modelled: {text!r}")


# ---------------------------------------------------------------------------------------------
