"""Firmware logic unit tests (firmware/tests/test_fw.c, built for the host with a fake HAL); the
image's size and its stack's, measured from gcc's call graph."""
import collections
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FW = ROOT / "build" / "fw"
sys.path.insert(0, str(ROOT / "spec" / "gen"))
import rnic_spec as S  # noqa: E402


def test_firmware_logic():
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    r = subprocess.run([str(ROOT / "build" / "fw" / "test_fw")], capture_output=True, text=True, timeout=120)
    m = re.search(r"(\d+) passed, (\d+) failed", r.stdout)
    assert m and int(m.group(2)) == 0 and int(m.group(1)) > 50 and r.returncode == 0, r.stdout


def test_firmware_image_fits():
    """Code and data fit the RAM (the spec's FW_RAM_SIZE) with at least 8 KiB left for the stack above
    them and the guard band."""
    assert (FW / "rnic-fw.bin").stat().st_size < 64 * 1024
    assert fw_symbol("__stack_guard") == fw_symbol("__bss_end")
    assert fw_symbol("__stack_bottom") - fw_symbol("__stack_guard") == S.STACK_GUARD_BYTES
    assert S.FW_RAM_SIZE - fw_symbol("__stack_bottom") >= 8 * 1024


def test_mutated_commands_stay_in_their_context():
    """The command fuzzer (make fuzz runs 10^6), with ASan and UBSan: mutated commands from four
    contexts under rnic-sim's address windows; no address of another context reaches the firmware's
    DMA or the datapath's tables, and a context reset leaves nothing of it behind."""
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    r = subprocess.run([str(ROOT / "build" / "fw" / "test_fw_asan"), "--fuzz", "100000", "3"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and ": 0 findings" in r.stdout, r.stdout + r.stderr


def fw_symbols():
    """[(name, address, nm's type, size or None)] of the image's symbols"""
    nm = subprocess.run(["riscv64-unknown-elf-nm", "-S", str(FW / "rnic-fw.elf")], capture_output=True, text=True,
                        check=True).stdout
    return [(f[-1], int(f[0], 16), f[-2], int(f[1], 16) if len(f) == 4 else None)
            for f in (ln.split() for ln in nm.splitlines()) if len(f) >= 3]


def fw_symbol(name):
    return next(a for n, a, _, _ in fw_symbols() if n == name)


def elf_calls():
    """{function: (calls, frame)} from the image's code: its calls that link ra (to a symbol; None
    through a register) and the bytes its first `addi sp,sp,-N` takes. A function ends where its
    symbol's size says (the read-only data after the last one are not code)."""
    funcs = {a: (n, size) for n, a, t, size in fw_symbols() if t in "tT"}
    dis = subprocess.run(["riscv64-unknown-elf-objdump", "-d", "--no-show-raw-insn", str(FW / "rnic-fw.elf")],
                         capture_output=True, text=True, check=True).stdout
    out, cur, end = {}, None, 0
    for ln in dis.splitlines():
        if m := re.match(r"([0-9a-f]+) <(\S+)>:$", ln):
            cur, size = funcs.get(int(m.group(1), 16), (None, None))
            end = int(m.group(1), 16) + size if size else 1 << 32
            if cur:
                out[cur] = (set(), 0)
        elif cur and (m := re.match(r"\s+([0-9a-f]+):\s+(\S+)\s*(.*)", ln)) and int(m.group(1), 16) < end:
            _, op, args = m.groups()
            calls, frame = out[cur]
            sym = s.group(1) if (s := re.search(r"<([^>+]+)>", args)) else None
            if (op == "jal" and "," not in args) or (op == "jalr" and (re.fullmatch(r"\w+", args) or
                                                                      args.startswith("ra,"))):
                calls.add(sym)
            elif op == "add" and (s := re.fullmatch(r"sp,sp,-(\d+)", args)) and not frame:
                out[cur] = (calls, int(s.group(1)))
    return out


def call_graph():
    """({function: frame bytes}, {function: callees}) of the firmware, from gcc's -fcallgraph-info
    and -fstack-usage (firmware.mk; a TU's own functions are named "file:name"), with the calls gcc
    adds after it draws the graph (__stack_chk_fail) and libgcc's routines taken from the image."""
    frames, edges = {}, collections.defaultdict(set)
    for ci in sorted(FW.glob("rnic-fw.elf-*.ci")):
        text = ci.read_text()
        for title, label in re.findall(r'node: \{ title: "([^"]+)" label: "([^"]*)"', text):
            if m := re.search(r"(\d+) bytes \((\w+)\)", label):
                assert m.group(2) == "static", f"{title}: a frame of {m.group(2)} size"
                frames[title] = int(m.group(1))
        for src, dst in re.findall(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', text):
            edges[src].add(dst)
    assert len(frames) > 100, "no call graph in build/fw (firmware.mk: -fcallgraph-info=su)"
    named = collections.defaultdict(list)  # the image's symbol name -> graph node
    for f in frames:
        named[f.rsplit(":", 1)[-1]].append(f)
    for fn, (calls, frame) in elf_calls().items():
        if fn not in named:  # not compiled C: libgcc's, start.S's
            named[fn], frames[fn] = [fn], frame
        for node in named[fn]:
            edges[node] |= {c if c is None else named.get(c, [c])[0] for c in calls}
    return frames, edges


def deepest_chains(frames, edges):
    """{function: (bytes, chain)}: the deepest call chain from each function; fails on recursion"""
    deepest, open_ = {}, set()

    def depth(f):
        assert f not in open_, f"recursion through {f}"
        assert f in frames, f"{f}: no frame size"
        if f not in deepest:
            open_.add(f)
            below = max((depth(c) for c in edges[f]), default=(0, []))
            deepest[f] = (frames[f] + below[0], [f] + below[1])
            open_.remove(f)
        return deepest[f]

    for f in frames:
        depth(f)
    return deepest


def test_stack_measure_finds_recursion():
    edges = collections.defaultdict(set, {"main": {"a", "b"}, "a": {"b"}})
    assert deepest_chains({"main": 16, "a": 32, "b": 48}, edges)["main"] == (96, ["main", "a", "b"])
    edges["b"].add("main")
    with pytest.raises(AssertionError, match="recursion"):
        deepest_chains({"main": 16, "a": 32, "b": 48}, edges)


def test_firmware_stack_fits():
    """The deepest call chain from main (start.S takes no stack) fits the stack link.ld leaves above
    the guard band, and no frame is as large as the band (an overflow cannot step over it). The sum
    of the chain's frames is the bound, with no margin: the core takes no interrupts, no frame is
    dynamic (alloca, arrays of variable length), and there is no recursion (a past finding: frame
    handling recursed without bound) and no call through a pointer (gcc names its callee
    __indirect_call, the image has a jalr through a register). Any of these fails the test, rather
    than a margin guessing what they would add."""
    frames, edges = call_graph()
    stack = S.FW_RAM_SIZE - fw_symbol("__stack_bottom")
    callers_of = {f: sorted(n for n, cs in edges.items() if f in cs) for f in (None, "__indirect_call")}
    assert not any(callers_of.values()), f"calls through a pointer: {callers_of}"
    big = {f: n for f, n in frames.items() if n >= S.STACK_GUARD_BYTES}
    assert not big, f"frames as large as the guard band: {big}"
    used, chain = deepest_chains(frames, edges)["main"]
    print(f"firmware stack: deepest chain {used} bytes ({' > '.join(chain)}), largest frame "
          f"{max(frames.values())} bytes, stack {stack} bytes above a guard band of {S.STACK_GUARD_BYTES}")
    assert used <= stack, (used, stack, chain)


def test_cm_fuzzer_with_time():
    """The CM fuzzer (make fuzz runs 10^7 steps), with ASan and UBSan: mutated MADs from five
    peers, CM commands of three contexts with private data of every length in every state, ARP
    floods and time passing, so that retransmissions and timeouts run; no memory error, and
    after every step each context keeps its reserved CM IDs, no listener holds more than its
    backlog and no request waits past its give-up time."""
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    for seed in ("1", "2"):
        r = subprocess.run([str(ROOT / "build" / "fw" / "test_fw_asan"), "--fuzz-cm", "200000", seed],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0 and ": 0 findings" in r.stdout, r.stdout + r.stderr[-3000:]
