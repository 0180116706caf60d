"""The project's libibverbs.so.1 and librdmacm.so.1 stand in for Debian's (rdma-core 44): the same
version nodes and symbol-to-node maps, every Debian verbs binary loads against it, and the unmodified tools run
between two simulated NICs (the make-test subset of sim/interop.py; make interop-tools runs all)."""
import collections
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
OURS = ROOT / "build" / "host-lib" / "libibverbs.so.1"
DEBIAN = pathlib.Path("/usr/lib/x86_64-linux-gnu/libibverbs.so.1")
RDMACM = OURS.parent / "librdmacm.so.1"
DEBIAN_RDMACM = pathlib.Path("/usr/lib/x86_64-linux-gnu/librdmacm.so.1")
CM_TOOLS = ["rping", "ucmatose", "udaddy", "rdma_server", "rdma_client", "cmtime", "mckey", "rstream"]
sys.path.insert(0, str(ROOT / "sim"))
import interop  # noqa: E402

TOOLS = ["ibv_devices", "ibv_devinfo", "ibv_rc_pingpong", "ibv_uc_pingpong", "ibv_ud_pingpong",
         "ibv_srq_pingpong", "ibv_xsrq_pingpong", "ibv_asyncwatch"] + \
        [f"ib_{t}_{k}" for t in ("write", "read", "send", "atomic") for k in ("bw", "lat")]


def exports(lib):
    """{node: {symbol}} of the default-version definitions, and {node: parent}."""
    syms = collections.defaultdict(set)
    out = subprocess.run(["readelf", "--dyn-syms", "-W", str(lib)], capture_output=True, text=True,
                         check=True).stdout
    for ln in out.splitlines():
        f = ln.split()
        if len(f) >= 8 and f[6] != "UND" and "@@" in f[7]:
            name, node = f[7].split("@@")
            syms[node].add(name)
    parents, node = {}, None
    for ln in subprocess.run(["readelf", "-V", "-W", str(lib)], capture_output=True, text=True,
                             check=True).stdout.splitlines():
        m = re.search(r"Index: \d+\s+Cnt: \d+\s+Name: (\S+)", ln)
        if m:
            node = m.group(1)
            parents[node] = None
        m = re.search(r"Parent 1: (\S+)", ln)
        if m and node:
            parents[node] = m.group(1)
        if "Version needs" in ln:
            break
    return syms, parents


def test_exports_and_version_nodes_match_debian():
    ours, our_parents = exports(OURS)
    theirs, their_parents = exports(DEBIAN)
    assert ours.pop("RNICDV_1.0") == {"rnicdv_clock_hz", "rnicdv_cq_last_ts", "rnicdv_poll_events",
                                      "rnicdv_read_clock"}
    assert ours.pop("RNICDV_1.1") == {"rnicdv_cm_cmd", "rnicdv_cm_event_fd", "rnicdv_cm_get_event"}
    assert ours.pop("RNICDV_1.2") == {"rnicdv_query_stats"}
    our_parents.pop("RNICDV_1.0")
    assert our_parents.pop("RNICDV_1.1") == "RNICDV_1.0"
    assert our_parents.pop("RNICDV_1.2") == "RNICDV_1.1"
    assert ours == theirs
    assert sum(len(v) for v in ours.values()) == 146 and len(ours) == 13
    assert {k: v for k, v in our_parents.items() if k != "libibverbs.so.1"} == \
        {k: v for k, v in their_parents.items() if k != "libibverbs.so.1"}


def test_librdmacm_exports_and_version_nodes_match_debian():
    ours, our_parents = exports(RDMACM)
    theirs, their_parents = exports(DEBIAN_RDMACM)
    assert ours == theirs and sum(len(v) for v in ours.values()) == 68
    assert our_parents == their_parents
    out = subprocess.run(["readelf", "-d", str(RDMACM)], capture_output=True, text=True, check=True).stdout
    assert "Library soname: [librdmacm.so.1]" in out


@pytest.mark.parametrize("tool", CM_TOOLS)
def test_debian_cm_binary_loads_against_ours(tool):
    """rdmacm-utils' imports resolve in the project's librdmacm.so.1 and libibverbs.so.1."""
    r = subprocess.run(["ldd", "-r", f"/usr/bin/{tool}"], env=dict(os.environ, LD_LIBRARY_PATH=str(OURS.parent)),
                       capture_output=True, text=True, timeout=60)
    text = r.stdout + r.stderr
    assert r.returncode == 0 and "undefined symbol" not in text and "not found" not in text, text
    assert re.search(r"librdmacm\.so\.1 => " + re.escape(str(RDMACM)), text), text


def test_soname_is_libibverbs_so_1():
    out = subprocess.run(["readelf", "-d", str(OURS)], capture_output=True, text=True, check=True).stdout
    assert "Library soname: [libibverbs.so.1]" in out


@pytest.mark.parametrize("tool", TOOLS)
def test_debian_binary_loads_against_it(tool):
    """Every import (BIND_NOW) of the tool and of the libraries it loads (librdmacm, libmlx5,
    libefa) resolves in this library, version nodes included."""
    r = subprocess.run(["ldd", "-r", f"/usr/bin/{tool}"], env=dict(os.environ, LD_LIBRARY_PATH=str(OURS.parent)),
                       capture_output=True, text=True, timeout=60)
    text = r.stdout + r.stderr
    assert r.returncode == 0 and "undefined symbol" not in text and "not found" not in text, text
    assert re.search(r"libibverbs\.so\.1 => " + re.escape(str(OURS)), text), text


def test_no_nic_running_means_no_device(tmp_path):
    env = dict(os.environ, LD_LIBRARY_PATH=str(OURS.parent), RNIC_SIM_DIR=str(tmp_path))
    r = subprocess.run(["ibv_devinfo"], env=env, capture_output=True, text=True, timeout=30)
    assert "No IB devices found" in r.stdout + r.stderr
    r = subprocess.run(["ibv_devices"], env=env, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and len(r.stdout.strip().splitlines()) == 2  # the header only


QUICK = [(i, c) for i, c in enumerate(interop.CASES) if c[4]]


@pytest.mark.parametrize("i,case", QUICK, ids=[c[0] for _, c in QUICK])
def test_debian_tool_between_two_simulated_nics(i, case, tmp_path):
    ok, fig, sim, wall, text = interop.run_case(i, case, tmp_path, timeout=300)
    assert ok, text
    if case[0].startswith("ibv_devinfo"):
        # the truth about the device: this project's IDs, the firmware's version, real limits
        assert "vendor_id:\t\t\t0x10ee" in text and "vendor_part_id:\t\t\t36920" in text
        assert re.search(r"fw_ver:\s+\d+\.\d+\.\d+", text) and "link_layer:\t\tEthernet" in text
        assert "GID[  0]:\t\t::ffff:10.0.0.1, RoCE v2" in text
        assert re.search(r"max_qp_rd_atom:\s+8\b", text) and "PORT_ACTIVE" in text
        assert re.search(r"max_qp:\s+16384\b", text)  # every entry of the QP tables is a QP's
    if case[3] in ("bw", "lat"):
        assert fig and sim, text  # the tool's figure, and the traffic seen in the capture


def test_pyverbs_opens_and_queries_the_device(tmp_path):
    ok, text = interop.run_pyverbs(tmp_path)
    assert ok, text
    assert "0x10ee" in text and "36920" in text
