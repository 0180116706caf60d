"""The card image's RTL synthesizes for UltraScale+ with Yosys (hw/synth/yosys_synth.py, `make synth`):
its top with every module down to PicoRV32, the HLS kernels and the vendor IP and device
primitives (bitstreams/common/vendor_ip.toml) as black boxes, a clean `check -assert` on the netlist.
And the check fails, saying why, on a source Yosys rejects or on a net with two drivers."""
import json
import pathlib
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "hw" / "synth" / "yosys_synth.py"
KERNELS = {"rnic_tx_kernel", "rnic_rx_kernel", "rnic_cq_kernel"}
VENDOR = {ip["module"] for ip in tomllib.loads((ROOT / "bitstreams" / "common" / "vendor_ip.toml").read_text())["ip"]}


@pytest.fixture(scope="module")
def synth():
    """(table printed, resources.json) of `make synth`, which holds the source list (hw/rtl/rtl.mk)."""
    r = subprocess.run(["make", "-s", "synth"], cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    return r.stdout, json.loads((ROOT / "build" / "synth" / "resources.json").read_text())


def test_synthesis_succeeds(synth):
    table, res = synth
    assert "check -assert clean" in table and "\ntotal " in table
    assert res["yosys"].startswith("Yosys 0.23") and res["top"] == "rnic_card_top"


def test_top_has_logic(synth):
    total = synth[1]["total"]
    assert total["LUT"] > 0 and total["FF"] > 0
    mods = synth[1]["modules"]
    # the NIC and the card's adapters
    for m in ("rnic_top", "rnic_dma_axi", "rnic_irq_usr", "rnic_bar_bridge", "rnic_card"):
        assert mods[m]["instances"] == 1 and mods[m]["LUT"] > 0 and mods[m]["FF"] > 0, m


def test_kernels_are_black_boxes(synth):
    table, res = synth
    mods = res["modules"]
    for k in KERNELS:
        assert mods[k]["blackbox"] and mods[k]["instances"] == 1
        assert all(mods[k][c] == 0 for c in ("LUT", "FF", "BRAM36"))
    assert {m for m, r in mods.items() if r["blackbox"]} == KERNELS | VENDOR
    assert mods["rnic_frame_cdc"]["instances"] == 2 and mods["rnic_frame_cdc"]["BRAM36"] > 0
    assert "black box" in table and "hls.tcl" in table


def test_picorv32_and_memories_synthesized(synth):
    mods = synth[1]["modules"]
    assert not mods["picorv32"]["blackbox"] and mods["picorv32"]["LUT"] > 500 and mods["picorv32"]["FF"] > 500
    # the firmware RAM (128 KiB) and the DMA buffer (16 KiB) are block RAMs, not flip-flops
    assert mods["rnic_soc"]["BRAM36"] >= 32 + 4
    assert mods["rnic_soc"]["FF"] < 20000


BROKEN = {
    "a net with two drivers": ("module broken (input wire a, input wire b, output wire y);\n"
                               "    assign y = a;\n    assign y = b;\nendmodule\n",
                               "multiple conflicting drivers"),
    "a cast Yosys 0.23 rejects": ("module broken (input wire [3:0] a, output wire [7:0] y);\n"
                                  "    assign y = int'(a);\nendmodule\n",
                                  "broken.sv:2: ERROR: syntax error"),
}


@pytest.mark.parametrize("name", BROKEN)
def test_broken_module_fails_with_reason(tmp_path, name):
    src, reason = BROKEN[name]
    (tmp_path / "broken.sv").write_text(src)
    r = subprocess.run([sys.executable, str(SCRIPT), "--top", "broken", "--out", str(tmp_path / "out"),
                        str(tmp_path / "broken.sv")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "synth: FAILED" in r.stderr and reason in r.stderr, r.stderr
    assert not (tmp_path / "out" / "resources.json").exists()
