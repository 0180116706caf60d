"""The card adapters (hw/rtl/rnic_dma_axi.sv, rnic_irq_usr.sv) under Verilator against an AXI4
memory with random stalls (tests/card_tb/tb_card.cpp): realigned in-order reads, byte-exact
writes (the memory holding WREADY until it has the AW), one beat per clock on aligned 4 KiB
bursts, user interrupts held until acknowledged. And BAR0's bridge (hw/rtl/rnic_bar_bridge.sv,
tests/card_tb/tb_bar.cpp): random host accesses of 1 to 8 bytes into the NIC's and the flash
controller's windows land byte-exact, bursts get SLVERR and addresses in neither window DECERR."""
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "card_tb"


@pytest.fixture(scope="module")
def tb():
    srcs = [ROOT / "hw" / "rtl" / f for f in ("rnic_fifo.sv", "rnic_dma_axi.sv", "rnic_irq_usr.sv")]
    srcs += [ROOT / "tests" / "card_tb" / "tb_card.sv", ROOT / "tests" / "card_tb" / "tb_card.cpp"]
    subprocess.run(["verilator", "--cc", "--exe", "--build", "-j", "2", "-O2", "--timescale", "1ns/1ps",
                    "-Wall", "--top-module", "tb_card", *map(str, srcs), "--Mdir", str(OUT), "-o", "tb_card"],
                   check=True, capture_output=True, timeout=600)
    return OUT / "tb_card"


@pytest.fixture(scope="module")
def tb_bar():
    out = OUT / "bar"
    out.mkdir(parents=True, exist_ok=True)  # Verilator makes one level of --Mdir, not two
    srcs = [ROOT / "spec" / "gen" / "rnic_spec_pkg.sv", ROOT / "hw" / "rtl" / "rnic_bar_bridge.sv",
            ROOT / "tests" / "card_tb" / "tb_bar.cpp"]
    subprocess.run(["verilator", "--cc", "--exe", "--build", "-j", "2", "-O2", "--timescale", "1ns/1ps", "-Wall",
                    "-Wno-UNUSEDPARAM", "--top-module", "rnic_bar_bridge", *map(str, srcs),
                    "-CFLAGS", f"-I{ROOT / 'spec' / 'gen'}", "--Mdir", str(out), "-o", "tb_bar"],
                   check=True, capture_output=True, timeout=600)
    return out / "tb_bar"


@pytest.mark.parametrize("seed", [1, 2])
def test_bar_bridge(tb_bar, seed):
    r = subprocess.run([str(tb_bar), str(seed)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "bursts SLVERR" in r.stdout, r.stderr


@pytest.mark.parametrize("test,seed", [("reads", 1), ("reads", 2), ("writes", 1), ("writes", 2),
                                       ("rate", 1), ("irq", 1)])
def test_card_adapter(tb, test, seed):
    r = subprocess.run([str(tb), test, str(seed)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr  # "rate": 16384 beats each way within 16 clocks of 16384
