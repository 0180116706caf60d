"""Firmware logic unit tests (firmware/tests/test_fw.c, built for the host with a fake HAL)."""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "spec" / "gen"))
import rnic_spec as S  # noqa: E402


def test_firmware_logic():
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    r = subprocess.run([str(ROOT / "build" / "fw" / "test_fw")], capture_output=True, text=True, timeout=120)
    m = re.search(r"(\d+) passed, (\d+) failed", r.stdout)
    assert m and int(m.group(2)) == 0 and int(m.group(1)) > 50 and r.returncode == 0, r.stdout


def test_firmware_image_fits():
    """Code and data fit the RAM (the spec's FW_RAM_SIZE) with at least 8 KiB left for the stack above
    them."""
    elf = ROOT / "build" / "fw" / "rnic-fw.bin"
    assert elf.stat().st_size < 64 * 1024
    nm = subprocess.run(["riscv64-unknown-elf-nm", str(ROOT / "build" / "fw" / "rnic-fw.elf")], capture_output=True,
                        text=True, check=True).stdout
    bss_end = int(next(ln.split()[0] for ln in nm.splitlines() if ln.endswith(" __bss_end")), 16)
    assert S.FW_RAM_SIZE - bss_end >= 8 * 1024, bss_end


def test_mutated_commands_stay_in_their_context():
    """The command fuzzer (make fuzz runs 10^6), with ASan and UBSan: mutated commands from four
    contexts under rnic-sim's address windows; no address of another context reaches the firmware's
    DMA or the datapath's tables, and a context reset leaves nothing of it behind."""
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    r = subprocess.run([str(ROOT / "build" / "fw" / "test_fw_asan"), "--fuzz", "100000", "3"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and ": 0 findings" in r.stdout, r.stdout + r.stderr


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
