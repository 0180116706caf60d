"""What of the card flow can be checked without Vivado or a card: the card is found with libpci
(its dump access method on crafted `lspci -x` dumps), flashing is scripted (--dry-run shows every
step), missing tools stop the flows at once with a message, the HLS tops are valid C over the
kernels, and every board folder says what the flows need of it."""
import os
import pathlib
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


@pytest.mark.parametrize("board", ["u250", "u280", "u55c"])
def test_board_folders(board):
    for key in ("part", "board_part", "pcie", "qsfp", "qsfp_clock", "flash", "flash_interface"):
        r = subprocess.run(["bash", ROOT / "bitstreams" / "common" / "board.sh", board, key], capture_output=True,
                           text=True)
        assert r.returncode == 0 and r.stdout.strip(), (key, r.stderr)
