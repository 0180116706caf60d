"""rdma-core's own test suite (v44, from Debian's python3-pyverbs; `make` unpacks it into
build/rdma-core/tests) on a simulated NIC, unedited: run_tests.py with --dev rnic0 --gid 0, one
module at a time, each bounded in time. Every pair of QPs it makes lives on rnic0, so all of its
traffic goes through the NIC's internal loopback. Then the whole suite once more in one process on
the same NICs: nothing one test leaves behind may break a later one, and the simulator must count
no DMA outside what the host mapped.

A test may skip only for a capability the device lacks, reported the way rdma-core expects
(EOPNOTSUPP or a zero capability) or for one this machine lacks (a GPU); SKIPS lists each reason,
README.md lists them too."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUITE = ROOT / "build" / "rdma-core" / "tests"
OUT = ROOT / "build" / "test-rdma-core"
SOCK = OUT / "sock"
# rdma-core's own modules for the verbs every provider offers. Out of scope: other vendors' modules
# (mlx5, efa, cuda). test_rdmacm runs on its own (test_rdmacm_module).
MODULES = ("test_addr", "test_atomic", "test_cq", "test_cq_events", "test_cqex", "test_device", "test_flow",
           "test_fork", "test_mr", "test_odp", "test_parent_domain", "test_pd", "test_qp", "test_qpex",
           "test_relaxed_ordering", "test_rss_traffic", "test_shared_pd", "test_tag_matching")
OUT_OF_SCOPE = re.compile(r"test_(mlx5_|efa|cuda_)")
CM_MODULE = "test_rdmacm"
MODULE_TIMEOUT = 300
# reason the suite prints -> why it applies
SKIPS = {
    r"Reg MR with MW access is not supported": "no memory windows (ARCHITECTURE.md: Memory windows)",
    r"Create memory window of type \d is not supported": "no memory windows",
    r"Create custom mr with additional access flags \d+ is not supported": "MW bind access: no memory windows",
    r"Device memory is not supported": "no device memory (max_dm_size 0)",
    r"ODP is not supported - No ODP caps": "no on-demand paging (odp_caps 0)",
    r"Parent Domain is not supported on this device": "no parent domains",
    r"Create XRCD is not supported": "no XRC",
    r"Create QP type 8 is not supported": "no raw packet QPs",
    r"Create Raw Packet QP (with|without)( extended)? attrs is not supported": "no raw packet QPs",
    r"Extended CQ is not supported": "tag matching's CQ fields: no tag matching",
    r"Extended QP is not supported on this device": "RDMA ATOMIC WRITE (IBTA 1.5): not offered",
    r"Importing a device is not supported": "ibv_import_device needs a shared kernel context",
    r"All gid indices populated, cannot check bad flow": "the GID table's two entries are both in use",
    r"(Device|Lack of permission to access|Allocating dmabuf is not supported by) /dev/dri/renderD\d+"
    r"( is not present)?": "this machine has no GPU to export a dma-buf",
    r"Reg dma-buf MR is not supported by the RDMA driver": "no dma-buf MRs",
    r"Multicast is not supported on this device": "no multicast groups (max_mcast_grp 0)",
    r"Huge pages of size 2M is not supported in this platform|There are no huge pages of size 2M allocated":
        "the host has no 2 MiB huge pages (the tests need ODP or parent domains anyway)",
}
REPORT = []  # (module, run, passed, failed, errors, skipped): printed by conftest after the run


def run_suite(modules, log):
    env = dict(os.environ, RNIC_SIM_DIR=str(SOCK), LD_LIBRARY_PATH=str(ROOT / "build" / "host-lib"))
    cmd = ["/usr/bin/python3", "tests/run_tests.py", "--dev", "rnic0", "--gid", "0", "-v",
           *(f"tests.{m}" for m in modules)]
    try:
        p = subprocess.run(cmd, cwd=SUITE.parent, env=env, capture_output=True, text=True,
                           timeout=MODULE_TIMEOUT * len(modules))
        text, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        text, rc = f"{e.stdout or ''}{e.stderr or ''}\nTIMEOUT after {e.timeout} s", -1
    log.write_text(text)
    return rc, text


def counts(text):
    """(run, failed, errors, skipped, skip reasons) from unittest's verbose output."""
    ran = re.search(r"^Ran (\d+) tests? in", text, re.M)
    end = re.search(r"^(OK|FAILED)(?: \((.*)\))?$", text, re.M)
    assert ran and end, f"no unittest summary:\n{text[-3000:]}"
    n = dict(failures=0, errors=0, skipped=0, expected_failures=0, unexpected_successes=0)
    for item in filter(None, (end.group(2) or "").split(", ")):
        k, v = item.split("=")
        n[k] = int(v)
    reasons = re.findall(r"\.\.\. skipped '(.*)'$", text, re.M)
    assert len(reasons) == n["skipped"]
    return int(ran.group(1)), n["failures"] + n["unexpected_successes"], n["errors"], n["skipped"], reasons


@pytest.fixture(scope="module")
def nics():
    """rnic0 and rnic1 (sim/nics.py), stopped at the end; yields their logs' directory."""
    assert (SUITE / "run_tests.py").exists(), f"{SUITE} missing: make unpacks rdma-core's suite there"
    OUT.mkdir(parents=True, exist_ok=True)
    nics_py = [sys.executable, str(ROOT / "sim" / "nics.py")]
    subprocess.run([*nics_py, "up", "--dir", str(SOCK)], check=True, capture_output=True, timeout=120)
    try:
        yield SOCK
    finally:
        subprocess.run([*nics_py, "down", "--dir", str(SOCK)], capture_output=True, timeout=60)


def test_suite_modules_are_the_ones_run():
    """The unpacked suite has exactly the modules above besides the out-of-scope ones."""
    found = {p.stem for p in SUITE.glob("test_*.py")}
    assert found, f"{SUITE} missing: make unpacks rdma-core's suite there"
    assert {m for m in found if not OUT_OF_SCOPE.match(m)} == set(MODULES) | {CM_MODULE}


@pytest.mark.parametrize("module", MODULES)
def test_module(nics, module):
    rc, text = run_suite([module], OUT / f"{module}.log")
    run, failed, errors, skipped, reasons = counts(text)
    REPORT.append((module, run, run - failed - errors - skipped, failed, errors, skipped))
    assert rc == 0 and failed == 0 and errors == 0, text[-6000:]
    unknown = {r for r in reasons if not any(re.fullmatch(k, r) for k in SKIPS)}
    assert not unknown, f"skipped for a reason the device does not have: {unknown}"


def test_whole_suite_again_in_one_process(nics):
    """The same NICs after every module ran: all of it again in one process, nothing left over."""
    rc, text = run_suite(MODULES, OUT / "all.log")
    run, failed, errors, skipped, _ = counts(text)
    REPORT.append(("all, again, one process", run, run - failed - errors - skipped, failed, errors, skipped))
    assert rc == 0 and failed == 0 and errors == 0, text[-6000:]
    subprocess.run([sys.executable, str(ROOT / "sim" / "nics.py"), "down", "--dir", str(nics)],
                   capture_output=True, timeout=60)
    for name in ("rnic0", "rnic1"):
        log = (nics / f"{name}.log").read_text()
        m = re.search(r"dma errors (\d+)", log)
        assert m and m.group(1) == "0", f"{name}: {log[-2000:]}"
        # the context memory holds the image of every table entry the firmware gave the kernels
        m = re.search(r"icm (\d+) writes, (\d+) entries checked against the kernels' tables, (\d+) differ", log)
        assert m and int(m.group(1)) > 0 and m.group(3) == "0", f"{name}: {log[-2000:]}"


def test_rdmacm_module(tmp_path):
    """rdma-core's test_rdmacm, unedited, through the project's librdmacm.so.1: a passive and an
    active process on rnic0 (the NIC's internal loopback). Its tests take the device's IP address
    from the network interface behind /sys/class/infiniband/<dev>/device/net, which a simulated
    NIC does not have: they run in mount and network namespaces of their own (unshare), where that
    directory names the namespace's loopback interface and the interface holds rnic0's address.
    The simulated NICs run there too: the library finds a simulator's socket in /proc/net/unix,
    which lists the sockets of its own network namespace only."""
    assert (SUITE / "run_tests.py").exists(), f"{SUITE} missing: make unpacks rdma-core's suite there"
    sock = tmp_path / "sock"
    nics = f"{sys.executable} {ROOT / 'sim' / 'nics.py'}"
    script = (f"mount -t tmpfs none /sys/class && mkdir -p /sys/class/infiniband/rnic0/device/net/lo && "
              f"ip addr add 10.0.0.1/32 dev lo && {nics} up --dir {sock} && cd {SUITE.parent} && "
              f"RNIC_SIM_DIR={sock} LD_LIBRARY_PATH={ROOT / 'build' / 'host-lib'} /usr/bin/python3 "
              f"tests/run_tests.py --dev rnic0 --gid 0 -v tests.{CM_MODULE}; rc=$?; {nics} down --dir {sock}; exit $rc")
    try:
        p = subprocess.run(["unshare", "--mount", "--net", "sh", "-c", script], capture_output=True, text=True,
                           timeout=MODULE_TIMEOUT)
        text, rc = p.stdout + p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        text, rc = f"{e.stdout or ''}{e.stderr or ''}\nTIMEOUT after {e.timeout} s", -1
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / f"{CM_MODULE}.log").write_text(text)
    run, failed, errors, skipped, reasons = counts(text)
    REPORT.append((CM_MODULE, run, run - failed - errors - skipped, failed, errors, skipped))
    assert rc == 0 and failed == 0 and errors == 0 and run >= 10, text[-6000:]
    unknown = {r for r in reasons if not any(re.fullmatch(k, r) for k in SKIPS)}
    assert not unknown, f"skipped for a reason the device does not have: {unknown}"
