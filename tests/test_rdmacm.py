"""The project's librdmacm.so.1: rdma-core 44's connection manager over the NIC's firmware CM.
Debian's unmodified rdmacm-utils and perftest -R connect through it between two simulated NICs
(each process sees one NIC, as two hosts would) and between two processes on one NIC (its
internal loopback): the make-test subset of sim/interop.py's CM rows (make interop-tools runs
all). Connections made and broken in one process (16 between two NICs, 6 on one; make soak
sets RNIC_CM_ROUNDS) leave nothing behind in the firmware; a port has one listener per NIC across
processes; a REQ to a closed port is rejected (after 1 ms: cm.h, CM_HOLD_CYCLES), not left to
the client's retries."""
import os
import pathlib
import re
import subprocess
import sys
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sim"))
import interop  # noqa: E402
import run_demo  # noqa: E402

CYCLES = ROOT / "build" / "tests" / "cm_cycles"
QUICK = [(i, c) for i, c in enumerate(interop.CM_CASES) if c[4]]


@pytest.mark.parametrize("i,case", QUICK, ids=[c[0] for _, c in QUICK])
def test_debian_cm_tool(i, case, tmp_path):
    ok, fig, sim, wall, text = interop.run_cm_case(i, case, tmp_path, timeout=300)
    assert ok, text
    cli, srv = text.split("\n-- server --\n")
    if case[0].startswith("rping"):
        # -v: the client prints each ping it verified, 5 of them (-C 5)
        assert len(re.findall(r"^ping data: rdma-ping-\d+: ", cli, re.M)) == 5, text
    elif case[0].startswith(("ucmatose", "udaddy")):
        assert "return status 0" in cli and "return status 0" in srv and "data transfers complete" in srv, text
    elif case[0].startswith("rdma_server"):
        assert "rdma_client: end 0" in cli and "rdma_server: end 0" in srv, text
    else:
        assert "Data ex. method : rdma_cm" in cli and fig, text  # perftest connected through the CM and measured
        if case[5] == "two":
            assert sim, text  # and its traffic crossed the link


def sims(tmp_path):
    procs = run_demo.start_sims(tmp_path)
    return procs, dict(os.environ, RNIC_SIM_DIR=str(tmp_path / "sock"),
                       LD_LIBRARY_PATH=str(ROOT / "build" / "host-lib"))


def resets(log):
    """What each context's reset found left behind (the firmware's object counts, CM IDs included)."""
    return [int(n) for n in re.findall(r"ctx \d+ reset: (\d+) resources freed", log)]


ROUNDS = int(os.environ.get("RNIC_CM_ROUNDS", "0"))


@pytest.mark.parametrize("rounds,server,client", [(ROUNDS or 16, "10.0.0.1", "10.0.0.2"),
                                                  (ROUNDS or 6, "10.0.0.1", "10.0.0.1")], ids=["two NICs", "one NIC"])
def test_connections_made_and_broken_leave_nothing(rounds, server, client, tmp_path):
    assert CYCLES.exists(), "make testapps builds it"
    procs, env = sims(tmp_path)
    logs = [tmp_path / f"{nic}.log" for nic in ("rnic0", "rnic1")]
    try:
        r = subprocess.run([str(CYCLES), str(rounds), server, client, "7400"], env=env, capture_output=True,
                           text=True, timeout=max(900, 10 * rounds))
        # the process had a context on each NIC (librdmacm opens every device): each is reset
        # once the NIC sees the process gone
        deadline = time.time() + 60
        while not all(resets(p.read_text()) for p in logs) and time.time() < deadline:
            time.sleep(0.1)
    finally:
        run_demo.stop_sims(procs)
    assert r.returncode == 0 and f"cm_cycles: {rounds} rounds ok" in r.stdout, r.stdout + r.stderr
    for p in logs:
        log = p.read_text()
        # ... with nothing left to free: no QP, CQ, MR, PD or CM ID of the connections
        assert resets(log) and all(n == 0 for n in resets(log)), log[-2000:]


def test_port_has_one_listener_and_a_closed_port_rejects(tmp_path):
    procs, env = sims(tmp_path)
    only0 = tmp_path / "only_rnic0"
    only0.mkdir(mode=0o755)
    (only0 / "rnic0.sock").symlink_to(tmp_path / "sock" / "rnic0.sock")
    env0 = dict(env, RNIC_SIM_DIR=str(only0))
    first = subprocess.Popen(["ucmatose", "-p", "7500"], env=env0, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    try:
        deadline = time.time() + 120
        while "listens on service 1061d4c" not in (tmp_path / "rnic0.log").read_text():
            assert time.time() < deadline and first.poll() is None, "the first server never listened"
            time.sleep(0.05)
        # another process on the same NIC and port
        r = subprocess.run(["ucmatose", "-p", "7500"], env=env0, capture_output=True, text=True, timeout=120)
        assert r.returncode != 0 and "Address already in use" in r.stdout + r.stderr, r.stdout + r.stderr
        # a client of a port nobody listens on is told so by a REJ, not left to its retries
        t0 = time.time()
        r = subprocess.run(["rping", "-c", "-a", "10.0.0.1", "-p", "7501", "-C", "1"], env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode != 0 and "RDMA_CM_EVENT_REJECTED, error 8" in r.stdout + r.stderr, r.stdout + r.stderr
        assert time.time() - t0 < 60
    finally:
        first.kill()
        first.wait()
        run_demo.stop_sims(procs)
