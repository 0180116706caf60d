"""The soft core is held to what its firmware needs, whatever code it runs (hw/rtl/rnic_soc.sv):
rnic_soc alone under Verilator (tests/soc_tb/tb_soc.cpp, strapped as rnic-sim is: DMA windows of
2^56 bytes) runs an attack firmware (tests/soc_tb/attack.c) booted by the NIC firmware's own start.S
and link.ld, one scenario a fresh run. A DMA outside the window of the context it names is refused
and counted, and the core goes on; a store into code, an instruction fetched from data and an access
to the stack's guard band are refused and halt the core before anything lands, whatever the
firmware writes to CODE_END and STACK_GUARD after the boot code did."""
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "soc_tb"
sys.path.insert(0, str(ROOT / "spec" / "gen"))
import rnic_spec as S  # noqa: E402

SCENARIOS = ["dma", "code", "exec", "raise", "lower", "stack", "guard", "trap"]  # attack.c's, from 1
FAULT = {f: 1 << S.ADMIN["FW_FAULT"][1][f][0] for f in ("CODE_WRITE", "EXEC", "STACK", "TRAP")}
DENIED = sum(1 << S.FW["DMA_STATUS"][1][f][0] for f in ("ERR", "DENIED"))
FAILED = 1 << S.ID["FW_STATUS"][1]["FAILED"][0]


def window(ctx):
    return (ctx + 1) << S.LINK_BUS_CTX_SHIFT


@pytest.fixture(scope="module")
def tb():
    r = subprocess.run(["make", "-s", "-C", str(ROOT), "soc-tb"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    nm = subprocess.run(["riscv64-unknown-elf-nm", str(OUT / "attack.elf")], capture_output=True, text=True,
                        check=True).stdout
    syms = {f[2]: int(f[0], 16) for f in (ln.split() for ln in nm.splitlines()) if len(f) == 3}
    return syms, [int(w, 16) for w in (OUT / "attack.hex").read_text().split()]  # the RAM's image


def run(scenario, ranges=()):
    """console lines, DMAs that left [(dir, addr, len)], FW_FAULT, FW_STATUS, {address: RAM word}"""
    r = subprocess.run([str(OUT / "tb_soc"), str(SCENARIOS.index(scenario) + 1),
                        *(f"{a:x}:{n:x}" for a, n in ranges)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    console = re.findall(r"^console (.*)$", out, re.M)
    assert console[0] == f"attack 0x{SCENARIOS.index(scenario) + 1:016x}", out
    dmas = [(d, int(a, 16), int(n)) for d, a, n in re.findall(r"^dma (read|write) (0x\w+) (\d+)$", out, re.M)]
    ram = {int(a, 16): int(v, 16) for a, v in re.findall(r"^ram (0x\w+) (0x\w+)$", out, re.M)}
    fault, status = (int(re.search(rf"^{k} (0x\w+)$", out, re.M).group(1), 16) for k in ("fw_fault", "fw_status"))
    return console, dmas, fault, status, ram


def test_dma_stays_in_the_window_it_names(tb):
    """Context 3 to context 4's window, to the driver's (top byte 0), or running out of its own;
    the driver to a context's window: refused with ERR and DENIED, nothing leaves, each counted in
    FW_FAULT.DMA_DENIED, and the core goes on. Context 3 in its window and the driver in its own:
    they leave as asked."""
    console, dmas, fault, status, _ = run("dma")
    said = [tuple(int(x, 16) for x in re.findall(r"0x(\w+)", ln)) + (ln.split()[1],)
            for ln in console if ln.startswith("dma ")]
    want = [(3, window(4) + 0x1000, 64, "read", DENIED), (3, 0x1000, 64, "write", DENIED),
            (3, window(4) - 32, 64, "read", DENIED), (3, window(3) + 0x2000, 128, "read", 0),
            (3, window(3) + 0x2000, 128, "write", 0), (S.DMA_CTX_DRIVER, 0x3000, 64, "read", 0),
            (S.DMA_CTX_DRIVER, window(3), 64, "write", DENIED)]
    assert said == [(c, a, n, st, d) for c, a, n, d, st in want], console
    assert dmas == [(d, a, n) for _, a, n, d, st in want if not st]
    assert fault == sum(1 for *_, st in want if st) and console[-1] == "done"
    assert not status & FAILED


def halted(fault, status, why):
    assert fault & sum(FAULT.values()) == FAULT[why], hex(fault)
    assert status & FAILED


@pytest.mark.parametrize("scenario", ["code", "lower"])
def test_store_into_code_halts_the_core(tb, scenario):
    """A store into code (after a second write of CODE_END, to 0, in "lower") is refused: the word
    keeps what the image has, FW_FAULT says CODE_WRITE, FW_STATUS FAILED, and nothing after it
    runs (the function it would have changed prints if called)."""
    syms, image = tb
    console, _, fault, status, ram = run(scenario, [(syms["victim"], 1)])
    halted(fault, status, "CODE_WRITE")
    assert console[-1] == "store into code", console
    assert ram[syms["victim"]] == image[syms["victim"] // 4] != 0x00100073


@pytest.mark.parametrize("scenario", ["exec", "raise"])
def test_data_does_not_run(tb, scenario):
    """Instructions written into .bss land there (stores above CODE_END are the firmware's own),
    but the jump to them is refused at the fetch (after a second write of CODE_END, over all of the
    RAM, in "raise"): FW_FAULT says EXEC, and the console never gets their 'X'."""
    syms, _ = tb
    console, _, fault, status, ram = run(scenario, [(syms["data_code"], 4)])
    halted(fault, status, "EXEC")
    assert console[-1] == "jump to data" and not any("X" in ln for ln in console[1:]), console
    assert [ram[syms["data_code"] + 4 * i] for i in range(4)] == [0x100002b7, 0x05800313, 0x0062a023, 0x00008067]
    assert syms["data_code"] >= syms["__code_end"]


@pytest.mark.parametrize("scenario", ["stack", "guard"])
def test_stack_overflow_halts_at_the_guard_band(tb, scenario):
    """A recursion of 256-byte frames runs the stack down into the guard band (after a second write
    of STACK_GUARD, moving the band off the RAM, in "guard"): the first access to the band is refused
    and halts the core, FW_FAULT says STACK, no write lands in the band nor below it (the words the
    firmware put just below the band, the end of .bss, are intact) and the recursion never returns."""
    syms, _ = tb
    guard = syms["__stack_guard"]
    console, _, fault, status, ram = run(scenario, [(guard - 32, 8 + S.STACK_GUARD_BYTES // 4)])
    halted(fault, status, "STACK")
    assert console[-1] == "dive", console
    assert [ram[guard - 32 + 4 * i] for i in range(8)] == [0xc0ffee00 + i for i in range(8)]
    assert all(ram[a] == 0 for a in range(guard, guard + S.STACK_GUARD_BYTES, 4))
    assert syms["__bss_end"] == guard and syms["__stack_bottom"] == guard + S.STACK_GUARD_BYTES


def test_trap_halts_the_core(tb):
    """A PicoRV32 trap (ebreak) halts the core too: FW_FAULT says TRAP, FW_STATUS FAILED."""
    console, _, fault, status, _ = run("trap")
    halted(fault, status, "TRAP")
    assert console[-1] == "ebreak"
