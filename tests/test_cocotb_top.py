"""Runs the cocotb testbench of rnic_top (tests/cocotb) under Verilator and checks its results."""
import os
import sys
import pathlib
import subprocess
import xml.etree.ElementTree as ET

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"


def test_cocotb_rnic_top():
    srcs = subprocess.run(["make", "-s", "--no-print-directory", "-f", "-", "print"], cwd=ROOT, text=True,
                          capture_output=True, check=True,
                          input="include Makefile\nprint:\n\t@echo $(RTL_SRCS)\n").stdout.strip()
    env = dict(os.environ, ROOT=str(ROOT), BUILD=str(BUILD), FW_HEX=str(BUILD / "fw" / "rnic-fw.hex"),
               KERNEL_LIB=str(BUILD / "kernels" / "libkernels.a"), VERILOG_SOURCES=srcs,
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
               COCOTB_RESULTS_FILE=str(BUILD / "cocotb" / "results.xml"))
    (BUILD / "cocotb").mkdir(parents=True, exist_ok=True)
    results = BUILD / "cocotb" / "results.xml"
    results.unlink(missing_ok=True)
    r = subprocess.run(["make", "-s", f"-j{os.cpu_count()}", "-C", str(ROOT / "tests" / "cocotb")], env=env, capture_output=True,
                       text=True, timeout=1800)
    assert results.exists(), r.stdout[-3000:] + r.stderr[-3000:]
    cases = ET.parse(results).getroot().iter("testcase")
    names, failed = [], []
    for c in cases:
        names.append(c.get("name"))
        if c.find("failure") is not None or c.find("error") is not None:
            failed.append(c.get("name"))
    assert set(names) == {"bar0_blocks", "ethernet_arp_and_bad_icrc"}, r.stdout[-3000:]
    assert not failed, r.stdout[-5000:]
