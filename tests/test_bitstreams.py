"""What of the card flow can be checked without Vivado or a card: the card is found with libpci
(its dump access method on crafted `lspci -x` dumps), flashing is scripted (--dry-run shows every
step), missing tools stop the flows at once with a message, the HLS tops are valid C over the
kernels, and every board folder says what the flows need of it."""
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIND = ROOT / "build" / "bitstreams" / "rnic-pci-find"
FLASH = ROOT / "bitstreams" / "common" / "flash.sh"

HOST_BRIDGE = """00:00.0 Host bridge: Intel Corporation Device 0d57
00: 86 80 57 0d 00 00 00 00 00 00 00 06 00 00 00 00
10: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
20: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
30: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
"""


def card(bdf, device="38 90"):
    return f"""{bdf} Ethernet controller: Xilinx Corporation Device
00: ee 10 {device} 06 04 10 00 00 00 00 02 10 00 00 00
10: 0c 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
20: 00 00 00 00 00 00 00 00 00 00 00 00 ee 10 07 00
30: 00 00 00 00 40 00 00 00 00 00 00 00 ff 01 00 00
"""


def dump(tmp_path, *devs):
    p = tmp_path / "lspci.txt"
    p.write_text("\n".join([HOST_BRIDGE, *devs]))
    return ["-A", "dump", "-O", f"dump.name={p}"]


def test_finds_the_card_among_other_devices(tmp_path):
    r = subprocess.run([FIND, *dump(tmp_path, card("3b:00.0"), card("5e:00.0", "34 50"))],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout == "0000:3b:00.0 10ee:9038\n", r.stderr


def test_no_card_and_two_cards(tmp_path):
    r = subprocess.run([FIND, *dump(tmp_path)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and r.stdout == ""
    r = subprocess.run([FIND, *dump(tmp_path, card("3b:00.0"), card("d8:00.0"))], capture_output=True, text=True)
    assert r.returncode == 0 and sorted(r.stdout.splitlines()) == ["0000:3b:00.0 10ee:9038", "0000:d8:00.0 10ee:9038"]


def test_flash_dry_run_shows_every_step(tmp_path):
    r = subprocess.run(["bash", FLASH, "--dry-run", "--image", "rnic_u280.mcs", "--find", FIND, "--",
                        *dump(tmp_path, card("3b:00.0"))], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert "would run: xbflash.qspi --primary rnic_u280.mcs --card 0000:3b:00.0 --force" in r.stdout
    assert "/sys/bus/pci/devices/0000:3b:00.0/remove" in r.stdout and "/sys/bus/pci/rescan" in r.stdout


@pytest.mark.parametrize("devs,msg", [((), "no RNIC card found"),
                                      ((card("3b:00.0"), card("d8:00.0")), "2 RNIC cards found")])
def test_flash_refuses_without_exactly_one_card(tmp_path, devs, msg):
    r = subprocess.run(["bash", FLASH, "--dry-run", "--image", "x.mcs", "--find", FIND, "--",
                        *dump(tmp_path, *devs)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1 and msg in r.stderr


def test_flash_without_an_image_says_so():
    r = subprocess.run(["bash", FLASH, "--image", "/nonexistent/rnic_u280.mcs", "--find", FIND, "--bdf",
                        "0000:3b:00.0"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "no flash image" in r.stderr


def test_bitstream_needs_vivado_and_a_known_board():
    env = dict(os.environ, PATH="/usr/bin:/bin")  # no Vivado here
    r = subprocess.run(["make", "-s", "bitstream", "BOARD=u280"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode != 0 and "vivado is not on PATH" in r.stderr
    r = subprocess.run(["make", "-s", "bitstream", "BOARD=vu9p"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode != 0 and "BOARD must be one of: u250 u280 u55c" in r.stderr


def test_hls_tops_are_c_over_the_kernels():
    k = ROOT / "hw" / "kernels"
    subprocess.run(["gcc", "-fsyntax-only", "-std=gnu11", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas",
                    f"-I{k / 'common'}", f"-I{k / 'tx'}", f"-I{k / 'rx'}", f"-I{k / 'cq'}",
                    f"-I{ROOT / 'spec' / 'gen'}", str(ROOT / "bitstreams" / "common" / "hls_top.c")], check=True)


def test_hls_flows_take_every_kernel_source():
    """hls.tcl (Vitis HLS) and hls.cfg (v++) synthesize the sources the simulator builds the
    kernels from (the kernels' .mk files, the DPI glue aside), no more and no fewer"""
    k = ROOT / "hw" / "kernels"
    mk = "\n".join(f.read_text() for f in sorted(k.glob("**/*.mk")))
    want = set()
    for var in ("COMMON_SRCS", "TX_SRCS", "RX_SRCS", "CQ_SRCS"):
        m = re.search(rf"^{var} := (.*)$", mk, re.M)
        assert m, var
        want |= {f.removeprefix("hw/kernels/") for f in m.group(1).split()}
    assert len(want) > 20
    cfg = re.findall(r"^syn\.file=\.\./\.\./hw/kernels/(\S+)$", (ROOT / "bitstreams/common/hls.cfg").read_text(), re.M)
    tcl = re.search(r"^foreach f \{([^}]*)\}", (ROOT / "bitstreams/common/hls.tcl").read_text(), re.M).group(1).split()
    assert sorted(cfg) == sorted(want)
    assert sorted(tcl) == sorted(want)


@pytest.mark.parametrize("board", ["u250", "u280", "u55c"])
def test_board_folders(board):
    for key in ("part", "board_part", "pcie", "qsfp", "qsfp_clock", "qsfp_refclk_mhz", "cmac_core", "cmac_gt_group",
                "sysclk_mhz", "hbm_cattrip", "flash", "flash_interface", "flash_offset"):
        r = subprocess.run(["bash", ROOT / "bitstreams" / "common" / "board.sh", board, key], capture_output=True,
                           text=True)
        assert r.returncode == 0 and r.stdout.strip(), (key, r.stderr)


def test_card_kernel_wrappers_fit_the_hls_cores(tmp_path):
    """Built with RNIC_HLS_KERNELS (the card image), each generated kernel wrapper feeds its Vitis
    HLS core (stood in for by a module with the same ports: ap_clk, ap_rst, k_in, k_out) and
    registers its outputs; Verilator checks every width of the card's whole RTL."""
    import re
    stubs = []
    for k in ("tx", "rx", "cq"):
        text = (ROOT / "spec" / "gen" / f"rnic_{k}_kernel.sv").read_text()
        win, wout = (int(re.search(rf"wire \[(\d+):0\] hls_{d};", text).group(1)) + 1 for d in ("in", "out"))
        assert win % 8 == 0 and wout % 8 == 0  # whole C fields
        stubs.append(f"module rnic_{k}_top (input wire ap_clk, input wire ap_rst, input wire [{win - 1}:0] k_in,\n"
                     f"    output wire [{wout - 1}:0] k_out);\n    assign k_out = {{{wout}{{^k_in ^ ap_rst}}}};\n"
                     f"endmodule\n")
    (tmp_path / "hls_stubs.sv").write_text("\n".join(stubs))
    srcs = subprocess.run(["make", "-s", "--no-print-directory", "-f", "-", "print"], cwd=ROOT, text=True,
                          capture_output=True, check=True,
                          input="include Makefile\nprint:\n\t@echo $(CARD_SRCS)\n").stdout.split()
    r = subprocess.run(["verilator", "--lint-only", "-Wall", "-Wno-UNUSEDSIGNAL", "-Wno-DECLFILENAME", "--timescale", "1ns/1ps",
                        "+define+RNIC_HLS_KERNELS", str(ROOT / "hw" / "rtl" / "picorv32.vlt"), "--top-module",
                        "rnic_card", *srcs, str(tmp_path / "hls_stubs.sv")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]


@pytest.mark.parametrize("mac,ipv4,msg", [("02:00:00:00:00", "10.0.0.1", "is not aa:bb:cc:dd:ee:ff"),
                                          ("02:00:00:00:00:01", "10.0.0.300", "is not an IPv4 address")])
def test_card_addresses_are_checked_first(tmp_path, mac, ipv4, msg):
    """MAC and IPv4 address are the image's own: a bad one stops the build before any tool runs"""
    r = subprocess.run(["bash", ROOT / "bitstreams" / "common" / "build.sh", "u280", tmp_path, "12345678",
                        tmp_path / "fw.hex", "0", mac, ipv4], capture_output=True, text=True)
    assert r.returncode == 2 and msg in r.stderr, r.stderr
