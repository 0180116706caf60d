"""Firmware logic unit tests (firmware/tests/test_fw.c, built for the host with a fake HAL)."""
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_firmware_logic():
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    r = subprocess.run([str(ROOT / "build" / "fw" / "test_fw")], capture_output=True, text=True, timeout=120)
    m = re.search(r"(\d+) passed, (\d+) failed", r.stdout)
    assert m and int(m.group(2)) == 0 and int(m.group(1)) > 50 and r.returncode == 0, r.stdout


def test_firmware_image_fits():
    elf = ROOT / "build" / "fw" / "rnic-fw.bin"
    assert elf.stat().st_size < 64 * 1024


def test_mutated_commands_stay_in_their_context():
    """The command fuzzer (make fuzz runs 10^6), with ASan and UBSan: mutated commands from four
    contexts under rnic-sim's address windows; no address of another context reaches the firmware's
    DMA or the datapath's tables, and a context reset leaves nothing of it behind."""
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    r = subprocess.run([str(ROOT / "build" / "fw" / "test_fw_asan"), "--fuzz", "100000", "3"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and ": 0 findings" in r.stdout, r.stdout + r.stderr
