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
