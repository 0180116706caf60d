"""The verbs library: device discovery without a NIC, and errors as rdma-core returns them
(errno values, NULL, bad_wr, completion statuses) through the whole simulated system."""
import os
import pathlib
import re
import socket
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIB = ROOT / "build" / "host-lib" / "libibverbs.so.1"
sys.path.insert(0, str(ROOT / "sim"))
import run_demo  # noqa: E402


def test_no_nic_means_an_empty_device_list(tmp_path):
    code = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); n = ctypes.c_int(-1); "
            "lib.ibv_get_device_list.restype = ctypes.c_void_p; "
            "l = lib.ibv_get_device_list(ctypes.byref(n)); print(n.value, l is not None)")
    for d in (tmp_path, tmp_path / "missing"):
        r = subprocess.run([sys.executable, "-c", code, str(LIB)], env=dict(os.environ, RNIC_SIM_DIR=str(d)),
                           capture_output=True, text=True, timeout=30)
        assert r.stdout.split() == ["0", "True"], r.stderr


def test_stale_socket_is_not_a_device(tmp_path):
    """A simulator that died leaves its socket file: nobody listens there, so no device."""
    sock = tmp_path / "ghost.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    s.close()
    code = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); n = ctypes.c_int(-1); "
            "lib.ibv_get_device_list.restype = ctypes.c_void_p; lib.ibv_get_device_list(ctypes.byref(n)); "
            "print(n.value)")
    r = subprocess.run([sys.executable, "-c", code, str(LIB)], env=dict(os.environ, RNIC_SIM_DIR=str(tmp_path)),
                       capture_output=True, text=True, timeout=30)
    assert r.stdout.split() == ["0"], r.stderr


def test_socket_in_a_directory_others_can_write_is_not_a_device(tmp_path):
    """A live socket is a device only where nobody else could have put it."""
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(tmp_path / "nic.sock"))
    s.listen(4)
    code = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1]); n = ctypes.c_int(-1); "
            "lib.ibv_get_device_list.restype = ctypes.c_void_p; lib.ibv_get_device_list(ctypes.byref(n)); "
            "print(n.value)")
    seen = []
    for mode in (0o700, 0o777, 0o720):
        tmp_path.chmod(mode)
        r = subprocess.run([sys.executable, "-c", code, str(LIB)], env=dict(os.environ, RNIC_SIM_DIR=str(tmp_path)),
                           capture_output=True, text=True, timeout=30)
        seen.append(r.stdout.split())
    tmp_path.chmod(0o700)
    s.close()
    assert seen == [["1"], ["0"], ["0"]]


def test_card_device_is_listed_and_fails_cleanly(tmp_path):
    """A /dev/rnicN (the kernel module's node) is listed as rnic_pciN before any simulator; opening
    one that does not answer the module's ioctls (here a node of /dev/null's driver) fails with
    the ioctl's errno instead of crashing. Needs root for mknod (the machines here have it)."""
    if os.geteuid():
        import pytest
        pytest.skip("mknod needs root")
    node = pathlib.Path("/dev/rnic97")
    assert not node.exists()
    os.mknod(node, 0o600 | 0o020000, os.makedev(1, 3))
    try:
        env = dict(os.environ, LD_LIBRARY_PATH=str(LIB.parent), RNIC_SIM_DIR=str(tmp_path))
        r = subprocess.run(["ibv_devices"], env=env, capture_output=True, text=True, timeout=30)
        assert r.returncode == 0 and re.search(r"^\s+rnic_pci97\s+0000000000000000$", r.stdout, re.M), r.stdout
        r = subprocess.run(["ibv_devinfo", "-d", "rnic_pci97"], env=env, capture_output=True, text=True,
                           timeout=30)
        assert r.returncode != 0 and "Failed to open device" in r.stderr, (r.stdout, r.stderr)
        code = ("import ctypes, sys; lib = ctypes.CDLL(sys.argv[1], use_errno=True); n = ctypes.c_int(0); "
                "lib.ibv_get_device_list.restype = ctypes.POINTER(ctypes.c_void_p); "
                "lib.ibv_open_device.restype = ctypes.c_void_p; "
                "l = lib.ibv_get_device_list(ctypes.byref(n)); c = lib.ibv_open_device(ctypes.c_void_p(l[0])); "
                "print(n.value, c, ctypes.get_errno())")
        r = subprocess.run([sys.executable, "-c", code, str(LIB)], env=env, capture_output=True, text=True,
                           timeout=30)
        assert r.stdout.split() == ["1", "None", str(25)], (r.stdout, r.stderr)  # ENOTTY
    finally:
        node.unlink()


def test_verb_errors_end_to_end(tmp_path):
    procs = run_demo.start_sims(tmp_path)
    try:
        r = subprocess.run([str(ROOT / "build" / "tests" / "verbs_errors"), "rnic0", "rnic1"],
                           env=dict(os.environ, RNIC_SIM_DIR=str(tmp_path / "sock")),
                           capture_output=True, text=True, timeout=600)
    finally:
        run_demo.stop_sims(procs)
    m = re.search(r"(\d+) passed, (\d+) failed", r.stdout)
    assert m and m.group(2) == "0" and r.returncode == 0, r.stdout + r.stderr


def test_stats_tool_reads_the_counters(tmp_path, monkeypatch):
    """rnic-stat (rnicdv_query_stats) prints every datapath counter by its spec name, with the values
    the NIC's STATS block holds, and the QPC cache's figures derived from them. The demo's one QP
    never misses (its commit writes its context into its line): four QPs over the cache cut to two
    lines (build/qc2) then take each other's lines."""
    sys.path.insert(0, str(ROOT / "tests"))
    from link_client import LinkClient
    monkeypatch.setattr(run_demo, "SIM", ROOT / "build" / "qc2" / "sim" / "rnic-sim")
    procs = run_demo.start_sims(tmp_path)
    try:
        env = dict(os.environ, RNIC_SIM_DIR=str(tmp_path / "sock"))
        demo = subprocess.run([str(run_demo.DEMO), "rnic0", "rnic1"], env=env, capture_output=True, text=True,
                              timeout=600)
        assert demo.returncode == 0, demo.stdout + demo.stderr
        ops = subprocess.run([str(ROOT / "build" / "tests" / "rc_ops"), "--qps", "4", "rate", "write", "64", "400",
                              "sge", "rnic0", "rnic1"], env=env, capture_output=True, text=True, timeout=600)
        assert ops.returncode == 0, ops.stdout + ops.stderr
        r = subprocess.run([str(LIB.parent / "rnic-stat"), "-d", "rnic1"], env=env, capture_output=True,
                           text=True, timeout=60)
        link = LinkClient(tmp_path / "sock" / "rnic1.sock")
        truth = link.counters()
        link.close()
        bad = subprocess.run([str(LIB.parent / "rnic-stat"), "-d", "rnic7"], env=env, capture_output=True,
                             text=True, timeout=60)
    finally:
        run_demo.stop_sims(procs)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[0] == f"rnic1: {len(truth)} counters, NIC clock 250 MHz"
    got = dict(re.findall(r"^([A-Z_0-9]+): (\d+)$", r.stdout, re.M))
    assert {k: int(v) for k, v in got.items()} == truth  # every counter, by name, as the NIC has it
    assert truth["RX_ROCE"] > 0 and truth["RX_QPC_HITS"] > 0 and truth["RX_QPC_MISSES"] > 0
    h, m = truth["RX_QPC_HITS"], truth["RX_QPC_MISSES"]
    line = re.search(r"^cache QPC \(RX kernel\): (\d+) hits, (\d+) misses, hit rate ([\d.]+)%, (\d+) evictions, "
                     r"0 write-backs .*mean miss latency ([\d.]+) cycles \((\d+) ns\)$", r.stdout, re.M)
    assert line, r.stdout
    assert (int(line[1]), int(line[2]), int(line[4])) == (h, m, truth["RX_QPC_EVICTIONS"])
    assert float(line[3]) == round(100 * h / (h + m), 1)
    assert float(line[5]) == round(truth["RX_QPC_MISS_CYCLES"] / m, 1) and 50 < float(line[5]) < 1000
    # the MTT and MPT caches (rnic1 places the WRITEs: its RX translates them and checks their keys)
    for table, prefix in (("MTT", "TLB"), ("MPT", "MPT")):
        for k in ("TX", "RX"):
            h, m, e = (truth[f"{k}_{prefix}_{f}"] for f in ("HITS", "MISSES", "EVICTIONS"))
            assert re.search(rf"^cache {table} \({k} kernel\): {h} hits, {m} misses, hit rate [\d.]+%, {e} evictions, "
                             "0 write-backs", r.stdout, re.M), r.stdout
    assert truth["RX_TLB_HITS"] > 1000 and truth["RX_MPT_HITS"] > 1000, truth
    assert bad.returncode == 1 and bad.stderr.startswith("rnic-stat: rnic7: "), bad.stderr
