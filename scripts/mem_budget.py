#!/usr/bin/env python3
"""On-chip memory budget of the datapath kernels: the state structs of TX, RX and CQ, sized by the
compiler (gcc -g, the DWARF read back with gdb's `ptype /o`), mapped to FPGA RAM primitives and
checked against the Alveo U250, U280 and U55C. Exit 0 when every board fits, else 1.

Rules:
- A memory is an array member of 1 KiB or more (its sizeof), at any depth of plain struct members
  (tx.t.mtt is rnic_tables_t t's mtt). Arrays inside one array entry belong to that entry's word
  (rx.qp[].rwqe[]). Smaller arrays are registers/LUTRAM: their bytes are totalled apart.
- Address and word: a word is one struct, or one row of the last dimension of a scalar array;
  every other dimension is address. So buf[2048][64] of bytes is 2048 words of 512 bits, qpc[256][23]
  256 words of 736 bits, rwqe[256][8] of structs 2048 words of one struct, mtt[32768] 32768 words
  of 64 bits: the way the kernels index them, one entry per access.
- A word's width is its data bits, without C's alignment padding: a struct kept whole (as
  `#pragma HLS AGGREGATE` keeps it) packs its fields. Split per field, the counts would differ.
- BRAM36: each in the aspect ratio that needs the fewest, as Vivado maps an inferred RAM (UG573:
  32K x 1, 16K x 2, 8K x 4, 4K x 9, 2K x 18, 1K x 36, 512 x 72 with both ports): min over them of
  ceil(width/w) * ceil(depth/d). A table of 128 KiB or more may take URAM288 (4096 x 72, its only
  shape) instead, ceil(width/72) * ceil(depth/4096), and does when that is a smaller share of the
  device on every board than its BRAM36 (URAM_WORTH below).
"""
import math
import pathlib
import re
import subprocess
import sys
import tempfile
from collections import namedtuple

ROOT = pathlib.Path(__file__).resolve().parent.parent
KDIR = ROOT / "hw" / "kernels"
INCLUDES = [KDIR / "common", KDIR / "tx", KDIR / "rx", KDIR / "cq", ROOT / "spec" / "gen"]
KERNELS = [("tx", "tx.h", "rnic_tx_state_t"), ("rx", "rx.h", "rnic_rx_state_t"),
           ("cq", "cq.h", "rnic_cq_state_t")]

MEMORY_MIN = 1024            # bytes: below this an array is registers or LUTRAM
URAM_MIN = 128 * 1024        # bytes: only tables this big are worth a URAM's 288 Kb blocks
BRAM_SHAPES = ((32768, 1), (16384, 2), (8192, 4), (4096, 9), (2048, 18), (1024, 36), (512, 72))
URAM_DEPTH, URAM_WIDTH = 4096, 72

# Device resources (36 Kb block RAMs, 288 Kb UltraRAMs) of each card's FPGA, from AMD's Alveo data
# sheets DS962 (U200/U250), DS963 (U280) and DS978 (U55C); cross-checked with the device tables
# public Vivado/HLS tools carry (xcu250-figd2104: RAMB36 2688, URAM 1280; xcu280-fsvh2892 and
# xcu55c-fsvh2892, both of the VU37P class: 2016 and 960).
BOARDS = {"U250": ("XCU250", 2688, 1280), "U280": ("XCU280", 2016, 960), "U55C": ("XCU55C", 2016, 960)}
# The kernels may take at most half of each: the rest of the card needs the other half (the XDMA
# PCIe bridge, the CMAC and its FIFOs, the RISC-V soft core's memory, clock-crossing FIFOs), and
# placement and routing get hard well before a resource is full.
BUDGET = 0.50
# One URAM is this many BRAM36 of device share on the board where URAM is dearest: a table goes to
# URAM only when URAM is the cheaper share on every board.
URAM_WORTH = max(bram / uram for _, bram, uram in BOARDS.values())

Member = namedtuple("Member", "name type dims size offset")  # type None: a pointer
Table = namedtuple("Table", "name depth width size offset dims", defaults=((),))  # one array member; bytes

LINE = re.compile(r"/\*\s*(\d+)(?::\s*\d+)?\s*\|\s*(\d+)\s*\*/\s*(.*)")
DECL = re.compile(r"(.+?)\s+(\**)(\w+)((?:\[\d+\])*);")


def read_types(obj, roots):
    """{type: [Member] for a struct, None for a scalar} over every type reachable from roots."""
    types, todo = {}, set(roots)
    while todo:
        cmd = ["gdb", "-batch", "-nx", "-ex", "set max-value-size unlimited", "-ex", "set width 0"]
        for t in sorted(todo):
            cmd += ["-ex", f"echo @@{t}\\n", "-ex", f"ptype /o {t}"]
        r = subprocess.run(cmd + [str(obj)], capture_output=True, text=True, check=True)
        for chunk in r.stdout.split("@@")[1:]:
            name, _, body = chunk.partition("\n")
            if not body.startswith("type = "):
                sys.exit(f"mem_budget: gdb knows no type {name}: {r.stderr.strip()}")
            types[name] = parse(name, body) if body.startswith("type = struct {") else None
        todo = {m.type for ms in types.values() if ms for m in ms if m.type} - types.keys()
    return types


def parse(name, body):
    """The members of one struct from its `ptype /o` text (holes and padding lines skipped)."""
    members = []
    for line in body.splitlines()[1:]:
        m = LINE.match(line.strip())
        if not m:
            continue
        d = DECL.fullmatch(m.group(3))
        if not d:   # a bit-field or an inline struct/union: not sized by these rules
            sys.exit(f"mem_budget: {name}: cannot read member `{m.group(3)}`")
        dims = tuple(int(x) for x in re.findall(r"\d+", d.group(4)))
        members.append(Member(d.group(3), None if d.group(2) else d.group(1), dims, int(m.group(2)),
                              int(m.group(1))))
    return members


def bits(types, t, size):
    """Data bits of one `t` of `size` bytes: its fields', without C's padding."""
    if not types.get(t):
        return size * 8
    return sum(math.prod(m.dims) * bits(types, m.type, m.size // math.prod(m.dims)) for m in types[t])


def tables(types, t, prefix="", base=0):
    """Every array member of struct t and of its plain struct members, with Table's shape and its
    offset in t; scalars as Table(name, 0, 0, size, offset)."""
    for m in types[t]:
        if not m.dims and types.get(m.type):
            yield from tables(types, m.type, f"{prefix}{m.name}.", base + m.offset)
            continue
        if not m.dims:
            yield Table(prefix + m.name, 0, 0, m.size, base + m.offset)
            continue
        n = math.prod(m.dims)
        row = 1 if types.get(m.type) or len(m.dims) == 1 else m.dims[-1]
        yield Table(prefix + m.name, n // row, row * bits(types, m.type, m.size // n), m.size, base + m.offset,
                    m.dims)


def spec_const(name):
    """A constant of spec/rnic.toml, as spec/gen/rnic_spec.h has it."""
    m = re.search(rf"#define RNIC_{name} (\w+)u", (ROOT / "spec" / "gen" / "rnic_spec.h").read_text())
    return int(m.group(1), 0)


def c_map(defines=()):
    """The memories of every kernel as C (for tests/tblchk): kernel, name, offset in its state
    struct, bytes per word (one access), words. With defines (-DNAME=V, a test build's sizes), the
    memories are those of the default build, where they are laid out as the defines have them: a
    cache cut to a few lines is still checked as the block RAM it is on a card."""
    headers, roots = [h for _, h, _ in KERNELS], [s for _, _, s in KERNELS]
    types = read_layout(headers, roots, INCLUDES)
    mems = {(k, t.name) for k, _, root in KERNELS for t in tables(types, root) if t.depth and t.size >= MEMORY_MIN}
    if defines:
        types = read_layout(headers, roots, INCLUDES, defines)
    print("/* Generated by scripts/mem_budget.py --c-map: the kernels' memories. */")
    print("static const struct tblchk_mem TBLCHK_MEMS[] = {")
    for kernel, _, root in KERNELS:
        for t in tables(types, root):
            if (kernel, t.name) in mems:
                print(f'\t{{"{kernel}", "{t.name}", {t.offset}, {t.size // t.depth}, {t.depth}}},')
    print("};")


def cost(t):
    """(BRAM36, URAM) of one memory."""
    bram = min(-(-t.width // w) * -(-t.depth // d) for d, w in BRAM_SHAPES)
    if t.size >= URAM_MIN:
        uram = -(-t.width // URAM_WIDTH) * -(-t.depth // URAM_DEPTH)
        if uram * URAM_WORTH < bram:
            return 0, uram
    return bram, 0


def read_layout(headers, roots, includes=(), defines=()):
    """Compile a file including `headers` with -g (and `defines`); the types reachable from `roots`."""
    with tempfile.TemporaryDirectory() as d:
        src, obj = pathlib.Path(d, "layout.c"), pathlib.Path(d, "layout.o")
        # a pointer per root is enough for gcc to emit the struct and every type it contains
        src.write_text("".join(f'#include "{h}"\n' for h in headers) +
                       "".join(f"{r} *mem_budget_{i};\n" for i, r in enumerate(roots)))
        subprocess.run(["gcc", "-g", "-c", *defines, *(f"-I{i}" for i in includes), str(src), "-o", str(obj)],
                       check=True)
        return read_types(obj, roots)


# the caches in front of context memory (kernel, array): lines, tags and the slots a context read
# ahead waits in, shared by all QPs
CACHES = {("rx", "ctx.line"), ("rx", "ctx.tag"), ("rx", "ctx.tagf"), ("rx", "ctx.stg")}


def main():
    types = read_layout([h for _, h, _ in KERNELS], [s for _, _, s in KERNELS], INCLUDES)
    print("On-chip memory of the datapath kernels: arrays of 1 KiB or more; BRAM36 in its best aspect ratio (32Kx1 .. 512x72), URAM 4096x72")
    total_b = total_u = total_bytes = 0
    costs = {}
    for kernel, _, root in KERNELS:
        rows = list(tables(types, root))
        mems = [t for t in rows if t.depth and t.size >= MEMORY_MIN]
        small = [t for t in rows if t.depth and t.size < MEMORY_MIN]
        print(f"\n{kernel} ({root})\n  {'table':20s} {'depth x width':>16s} {'bytes':>10s} {'BRAM36':>7s} {'URAM':>5s}")
        kb = ku = 0
        for t in sorted(mems, key=cost, reverse=True):
            b, u = costs[kernel, t.name] = cost(t)
            kb, ku = kb + b, ku + u
            print(f"  {t.name:20s} {t.depth:>7d} x {t.width:<6d} {t.size:>10,d} {b or '-':>7} {u or '-':>5}")
        kbytes = sum(t.size for t in mems)
        print(f"  {'total':20s} {'':16s} {kbytes:>10,d} {kb:>7d} {ku:>5d}")
        print(f"  registers/LUTRAM: {len(small)} arrays under 1 KiB, {sum(t.size for t in small):,d} bytes;"
              f" scalar fields {sum(t.size for t in rows if not t.depth):,d} bytes")
        total_b, total_u, total_bytes = total_b + kb, total_u + ku, total_bytes + kbytes

    # A struct held by several kernels is a copy per reader (rnic_tables_t: one BRAM port each),
    # so every copy was counted above.
    held = {}

    def walk(kernel, ty, path):
        for m in types[ty]:
            if not m.dims and types.get(m.type):
                held.setdefault(m.type, []).append((kernel, path + m.name))
                walk(kernel, m.type, path + m.name + ".")

    for kernel, _, root in KERNELS:
        walk(kernel, root, "")
    for t, where in held.items():
        kernel, member = where[0]
        copy = [c for (k, name), c in costs.items() if k == kernel and name.startswith(member + ".")]
        b, u = sum(c[0] for c in copy), sum(c[1] for c in copy)
        if len(where) > 1 and b + u:
            print(f"\nduplicated: {t} as {' and '.join(f'{k}.{n}' for k, n in where)} (a copy per reader):"
                  f" {b} BRAM36 + {u} URAM per copy, all {len(where)} counted")

    print(f"\nall kernels: {total_b} BRAM36, {total_u} URAM ({total_bytes:,d} bytes of tables)")
    # What each QP (CQ) costs wherever it is kept: every array indexed by its number (block RAM,
    # LUT RAM or registers; data bits, without padding)
    per = {}
    for kernel, _, root in KERNELS:
        unit = "CQ" if kernel == "cq" else "QP"
        count = spec_const("MAX_CQ" if unit == "CQ" else "MAX_QP")
        per[kernel, unit] = sum(t.depth * t.width // 8 // count for t in tables(types, root)
                                if t.dims and t.dims[0] == count)
    print("per object, in every array indexed by its number: " +
          ", ".join(f"{k} {n:,d} bytes a {u}" for (k, u), n in per.items()) +
          f"; {sum(n for (_, u), n in per.items() if u == 'QP'):,d} bytes a QP in all")
    # The caches in front of context memory are shared by every QP: a QP's share at MAX_QP
    cached = [(k, t) for k, _, root in KERNELS for t in tables(types, root) if (k, t.name) in CACHES]
    assert len(cached) == len(CACHES), f"caches not found: {CACHES - {(k, t.name) for k, t in cached}}"
    share = sum(t.size for _, t in cached) / spec_const("MAX_QP")
    qp = sum(n for (_, u), n in per.items() if u == 'QP') + share
    print(f"caches in front of context memory ({', '.join(f'{k} {t.name}' for k, t in cached)}):"
          f" {sum(t.size for _, t in cached):,d} bytes, {share:.0f} bytes a QP at {spec_const('MAX_QP'):,d} QPs;"
          f" {qp:.0f} bytes a QP with its cache share")
    print(f"budget: {BUDGET:.0%} of each board's BRAM36 and URAM (the rest is for XDMA, CMAC, the"
          " RISC-V core's memory and FIFOs)")
    over = []
    for board, (dev, bram, uram) in BOARDS.items():
        use = (("BRAM36", total_b, bram), ("URAM", total_u, uram))
        bad = [f"{kind} {n} > {BUDGET * cap:.0f}" for kind, n, cap in use if n > BUDGET * cap]
        shares = ", ".join(f"{kind} {n}/{cap} {100 * n / cap:.1f}% (budget {BUDGET * cap:.0f})" for kind, n, cap in use)
        print(f"{board} ({dev}): {shares}: {'DOES NOT FIT' if bad else 'fits'}")
        over += [f"{board} ({', '.join(bad)})"] if bad else []
    if over:
        sys.exit(f"mem_budget: the kernels' memories exceed {BUDGET:.0%} of the board on {'; '.join(over)}")


if __name__ == "__main__":
    c_map(sys.argv[2:]) if sys.argv[1:2] == ["--c-map"] else main()
