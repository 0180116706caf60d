"""Debian's unmodified verbs tools (ibverbs-utils, perftest, python3-pyverbs, and rdmacm-utils
and perftest -R through the project's librdmacm.so.1) between two simulated NICs, through the
project's libibverbs.so.1: each case starts a fresh pair of rnic-sim
processes, runs the server and the client as separate processes (their out-of-band exchange is
TCP on loopback) and prints a pass/fail table with the tool's own figure (measured by the tool in
wall-clock time: the simulation runs far slower than the card) and the same traffic measured in
simulated time at the NIC's port (250 MHz clock, 100 Gb/s link) from the capture.

    python sim/interop.py            the full table (make interop-tools)
    python sim/interop.py --quick    the subset that make test runs
"""
import argparse
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sim"))
import run_demo  # noqa: E402

LIB_DIR = ROOT / "build" / "host-lib"
SNAPLEN = 64  # headers are enough for the figures
LINEBUF = ["stdbuf", "-oL", "-eL"]  # what a tool printed survives its being killed on a timeout
# jumbo frames, as RoCE fabrics are set up: the tools take the port's active MTU, 4096 here (1024
# on a network of 1500-byte frames, rnic-sim's default), so the table's figures are at MTU 4096
JUMBO = ("--eth-mtu", "9000")

# (name, server argv or None for a one-process tool, client argv, figure kind, in --quick)
# the client gets "-d rnic1 -p PORT localhost", the server "-d rnic0 -p PORT"
PP = ["-g", "0"]  # pingpong tools: RoCE needs the GID (index 0: ::ffff:10.0.0.x, RoCEv2)
CASES = [
    ("ibv_devices", None, ["ibv_devices"], None, True),
    ("ibv_devinfo -v", None, ["ibv_devinfo", "-v"], None, True),
    ("ibv_rc_pingpong", ["ibv_rc_pingpong", *PP], ["ibv_rc_pingpong", *PP], "pp", False),
    ("ibv_rc_pingpong -n 100", ["ibv_rc_pingpong", *PP, "-n", "100"], ["ibv_rc_pingpong", *PP, "-n", "100"], "pp", True),
    ("ibv_rc_pingpong -e", ["ibv_rc_pingpong", *PP, "-e", "-n", "200"], ["ibv_rc_pingpong", *PP, "-e", "-n", "200"],
     "pp", True),
    ("ibv_rc_pingpong -N", ["ibv_rc_pingpong", *PP, "-N", "-n", "200"], ["ibv_rc_pingpong", *PP, "-N", "-n", "200"],
     "pp", True),
    ("ibv_uc_pingpong", ["ibv_uc_pingpong", *PP, "-n", "200"], ["ibv_uc_pingpong", *PP, "-n", "200"], "pp", False),
    ("ibv_ud_pingpong", ["ibv_ud_pingpong", *PP, "-n", "200"], ["ibv_ud_pingpong", *PP, "-n", "200"], "pp", True),
    ("ibv_srq_pingpong", ["ibv_srq_pingpong", *PP, "-n", "200"], ["ibv_srq_pingpong", *PP, "-n", "200"], "pp", True),
]
PERF = {
    "write_bw": [[], ["-s", "1048576", "-n", "200"], ["-q", "4", "-n", "500"], ["-a", "-n", "20"],
                 ["--use_old_post_send", "-n", "500"]],
    "read_bw": [[], ["-s", "1048576", "-n", "200"], ["-q", "4", "-n", "500"], ["-a", "-n", "20"]],
    "send_bw": [[], ["-s", "1048576", "-n", "200"], ["-q", "4", "-n", "500"], ["-a", "-n", "20"]],
    "atomic_bw": [[], ["-q", "4", "-n", "2000"], ["-A", "CMP_AND_SWAP", "-n", "2000"]],
    "write_lat": [[], ["-s", "4096", "-n", "500"], ["-a", "-n", "20"]],
    "read_lat": [[], ["-s", "4096", "-n", "500"], ["-a", "-n", "20"]],
    "send_lat": [[], ["-s", "4096", "-n", "500"], ["-a", "-n", "20"]],
    "atomic_lat": [[], ["-A", "CMP_AND_SWAP", "-n", "500"]],
}
QUICK_PERF = {("write_bw", ("-n", "200")), ("read_lat", ("-n", "200")), ("send_bw", ("-n", "200")),
              ("atomic_lat", ("-n", "200")), ("send_lat", ("-n", "200"))}
for test, variants in PERF.items():
    kind = "bw" if test.endswith("bw") else "lat"
    for v in variants:
        name = " ".join([f"ib_{test}", *v]) if v else f"ib_{test}"
        CASES.append((name, [f"ib_{test}", *v], [f"ib_{test}", *v], kind, False))
for test, v in sorted(QUICK_PERF):
    CASES.append((" ".join([f"ib_{test}", *v]), [f"ib_{test}", *v], [f"ib_{test}", *v],
                  "bw" if test.endswith("bw") else "lat", True))
# Connections made by the connection manager (rdmacm-utils and perftest -R, through the project's
# librdmacm.so.1): (name, server argv, client argv, kind, in --quick, NICs). NICs "two": the
# server's process sees rnic0 only, the client's rnic1 only, as two hosts would; "loop": both see
# rnic0 (two processes on one NIC: its internal loopback). {port} is the case's CM port.
RPING = ["rping", "-v", "-C", "5", "-p", "{port}"]
CM_CASES = []
for nics in ("two", "loop"):
    for size in ("64", "4000", "20000"):
        CM_CASES.append((f"rping -S {size} ({nics})", [*RPING, "-s", "-a", "10.0.0.1", "-S", size],
                         [*RPING, "-c", "-a", "10.0.0.1", "-S", size], None, size != "64" or nics == "two", nics))
    CM_CASES += [
        (f"rping IPv6 -S 1000 ({nics})", [*RPING, "-s", "-a", "fe80::ff:fe00:1", "-S", "1000"],  # rnic0's GID 1
         [*RPING, "-c", "-a", "fe80::ff:fe00:1", "-S", "1000"], None, nics == "two", nics),
        (f"ucmatose -c 2 ({nics})", ["ucmatose", "-p", "{port}", "-c", "2"],
         ["ucmatose", "-s", "10.0.0.1", "-p", "{port}", "-c", "2", "-C", "10"], None, True, nics),
        (f"rdma_server/rdma_client ({nics})", ["rdma_server", "-p", "{port}"],
         ["rdma_client", "-s", "10.0.0.1", "-p", "{port}"], None, True, nics),
        # UD through SIDR, on udaddy's fixed port 7174 of RDMA_PS_UDP
        (f"udaddy ({nics})", ["udaddy"], ["udaddy", "-s", "10.0.0.1"], None, True, nics),
    ]
    # -R: the tests' QPs connected by the CM; -z: perftest's own exchange over a CM connection
    for test, how in (("write_bw", "-R"), ("send_lat", "-R"), ("read_bw", "-R"), ("send_bw", "-R"),
                      ("write_lat", "-R"), ("read_lat", "-R"), ("send_lat", "-z"), ("write_bw", "-z")):
        argv = [f"ib_{test}", how, "-n", "200", "-p", "{port}"]
        CM_CASES.append((f"ib_{test} {how} ({nics})", [*argv, "-d", "rnic0"],
                         [*argv, "-d", "rnic1" if nics == "two" else "rnic0", "10.0.0.1"],
                         "bw" if test.endswith("bw") else "lat",
                         (test, how) in (("write_bw", "-R"), ("send_lat", "-R"), ("read_bw", "-R"), ("send_lat", "-z")),
                         nics))
PYVERBS = ("import pyverbs.device as d\n"
           "names = [x.name.decode() for x in d.get_device_list()]\n"
           "ctx = d.Context(name=names[0])\n"
           "a = ctx.query_device(); p = ctx.query_port(1); g = ctx.query_gid(1, 0)\n"
           "print('pyverbs', names, hex(a.vendor_id), a.vendor_part_id, a.fw_version, p.link_layer, p.state, g)\n")


def env(sock_dir):
    return dict(os.environ, LD_LIBRARY_PATH=str(LIB_DIR), RNIC_SIM_DIR=str(sock_dir))


# ---- simulated-time figures from the capture at the client's port (rnic1: the requester of
# READs and atomics, so their round trips are seen whole)
# extension header bytes after the BTH, by RC opcode, and which opcodes carry payload
EXT = {0x03: 4, 0x05: 4, 0x06: 16, 0x09: 4, 0x0a: 16, 0x0b: 20, 0x0c: 16, 0x0d: 4, 0x0f: 4, 0x10: 4,
       0x11: 4, 0x12: 12, 0x13: 28, 0x14: 28}
DATA = set(range(0x00, 0x0c)) | {0x0d, 0x0e, 0x0f, 0x10}
REQUEST = set(range(0x00, 0x0d)) | {0x13, 0x14}


def roce_frames(path):
    """(time_ns, sent by this port?, opcode, payload bytes) of each RoCEv2-over-IPv4 frame."""
    data = path.read_bytes()
    off, out = 24, []
    while off + 16 <= len(data):
        sec, ns, incl, orig = struct.unpack_from("<IIII", data, off)
        f = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 17 or f[36:38] != b"\x12\xb7":
            continue
        op = f[42]
        pad = (f[43] >> 4) & 3
        pay = orig - 14 - 20 - 8 - 12 - EXT.get(op, 0) - 4 - pad if op in DATA else 0
        out.append((sec * 1_000_000_000 + ns, f[6:12] == bytes.fromhex("020000000002"), op, pay))
    return out


def sim_figure(kind, test, frames):
    if kind == "bw" and "atomic" in test:
        req = [f for f in frames if f[2] in (0x13, 0x14)]
        if len(req) < 2:
            return ""
        return f"{(len(req) - 1) / ((req[-1][0] - req[0][0]) / 1e3):.2f} Mops/s"
    if kind == "bw":
        best = ""
        for side in (True, False):
            d = [f for f in frames if f[1] == side and f[3] > 0]
            if len(d) > 1 and d[-1][0] > d[0][0]:
                gbps = sum(f[3] for f in d[1:]) * 8 / (d[-1][0] - d[0][0])
                best = max(best, f"{gbps:6.2f} Gb/s", key=lambda s: float(s.split()[0]) if s else 0)
        return best.strip()
    if kind == "lat":
        req = [f for f in frames if f[2] in REQUEST]
        if "read" in test or "atomic" in test:
            # a round trip per operation: request out, response (READ response / atomic ACK) back
            rtt, t0, side = [], None, None
            for t, mine, op, _ in frames:
                if op in (0x0c, 0x13, 0x14):
                    t0, side = t, mine
                elif t0 is not None and mine != side and op in (0x0d, 0x0f, 0x10, 0x12):
                    rtt.append(t - t0)
                    t0 = None
            return f"{sum(rtt) / len(rtt) / 1e3:.2f} us RTT" if rtt else ""
        # ping-pong: each request answers the peer's last one; the mean gap is half a round trip
        gaps = [b[0] - a[0] for a, b in zip(req, req[1:]) if a[1] != b[1]]
        return f"{sum(gaps) / len(gaps) / 1e3:.2f} us" if gaps else ""
    return ""


def tool_figure(kind, out):
    lines = [ln.split() for ln in out.splitlines()]
    nums = [ln for ln in lines if ln and ln[0].isdigit() and all(c.replace(".", "").isdigit() for c in ln[:3])]
    if kind == "bw" and nums and "Atomic" in out:
        b = nums[-1]
        return f"{b[0]} B: {float(b[4]):.4f} Mops/s wall"
    if kind == "bw" and nums:
        b = nums[-1]
        return f"{b[0]} B: {float(b[3]) * 8 / 1000:.3f} Gb/s wall"
    if kind == "lat" and nums:
        b = nums[-1]
        return f"{b[0]} B: {b[4]} us wall"
    if kind == "pp":
        for ln in out.splitlines():
            if "iters in" in ln:
                return ln.split("=")[-1].strip() + " wall"
    return ""


def wait_listening(port, srv, timeout):
    """Until the server listens on its TCP port (a connection attempt would be its one client)."""
    deadline = time.time() + timeout
    want = f":{port:04X} "
    while time.time() < deadline and srv.poll() is None:
        for f in ("/proc/net/tcp", "/proc/net/tcp6"):
            with open(f) as fh:
                if any(want in ln.split(None, 2)[1] + " " and ln.split()[3] == "0A" for ln in fh.readlines()[1:]):
                    return
        time.sleep(0.05)
    if srv.poll() is None:
        raise subprocess.TimeoutExpired("server", timeout)


def run_case(i, case, out, timeout):
    name, server, client, kind, _ = case
    d = out / f"case{i:02d}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    procs = run_demo.start_sims(d, JUMBO, snaplen=SNAPLEN)
    e = env(d / "sock")
    port = str(18515 + i)
    t0 = time.time()
    try:
        if server is None:
            r = subprocess.run([*LINEBUF, *client], env=e, capture_output=True, text=True, timeout=timeout)
            ok, text = r.returncode == 0, r.stdout + r.stderr
        else:
            srv = subprocess.Popen([*LINEBUF, *server, "-d", "rnic0", "-p", port], env=e, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
            cli = None
            try:
                wait_listening(int(port), srv, timeout)
                cli = subprocess.run([*LINEBUF, *client, "-d", "rnic1", "-p", port, "localhost"], env=e,
                                     capture_output=True, text=True, timeout=timeout)
                stext, _ = srv.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                srv.kill()
                stext = srv.communicate()[0] + "\n(timed out)"
            text = (cli.stdout + cli.stderr if cli else "client timed out\n") + "\n-- server --\n" + stext
            ok = cli is not None and cli.returncode == 0 and srv.returncode == 0
    except subprocess.TimeoutExpired:
        ok, text = False, "timed out\n"
    finally:
        wall = time.time() - t0
        run_demo.stop_sims(procs)
    (d / "output.txt").write_text(text)
    fig = tool_figure(kind, text)
    sim = sim_figure(kind, name, roce_frames(d / "rnic1.pcap")) if kind in ("bw", "lat") else ""
    return ok, fig, sim, wall, text


def run_cm_case(i, case, out, timeout):
    """One CM case: the server until the NIC's firmware says it listens, then the client."""
    name, server, client, kind, _, nics = case
    d = out / f"cm{i:02d}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    procs = run_demo.start_sims(d, JUMBO, snaplen=SNAPLEN)
    port = 7000 + i
    views = {}
    for nic in ("rnic0", "rnic1"):
        v = d / f"only_{nic}"
        v.mkdir(mode=0o755)
        (v / f"{nic}.sock").symlink_to(d / "sock" / f"{nic}.sock")
        views[nic] = str(v)
    srv_env = dict(env(d / "sock"), RNIC_SIM_DIR=views["rnic0"])
    cli_env = dict(env(d / "sock"), RNIC_SIM_DIR=views["rnic1" if nics == "two" else "rnic0"])
    fill = lambda argv: [a.format(port=port) for a in argv]  # noqa: E731
    listening = "listens on service " + ("1111c06" if server[0] == "udaddy" else f"{0x1060000 + port:x}")
    t0 = time.time()
    # the server writes to a file: a verbose one would fill a pipe nobody reads until the end
    with open(d / "server.txt", "w") as sout:
        srv = subprocess.Popen([*LINEBUF, *fill(server)], env=srv_env, stdout=sout, stderr=subprocess.STDOUT)
    cli, late = None, ""
    try:
        while listening not in (d / "rnic0.log").read_text():
            if srv.poll() is not None or time.time() - t0 > timeout:
                raise subprocess.TimeoutExpired("server", timeout)
            time.sleep(0.05)
        cli = subprocess.run([*LINEBUF, *fill(client)], env=cli_env, capture_output=True, text=True, timeout=timeout)
        srv.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        srv.kill()
        srv.wait()
        late = "\n(timed out or never listened)"
    finally:
        wall = time.time() - t0
        run_demo.stop_sims(procs)
    stext = (d / "server.txt").read_text() + late
    text = (cli.stdout + cli.stderr if cli else "client not run\n") + "\n-- server --\n" + stext
    ok = cli is not None and cli.returncode == 0 and srv.returncode == 0
    if not ok:  # a signal leaves no line of its own
        text += f"\n(exit status: client {cli.returncode if cli else '-'}, server {srv.returncode})"
    (d / "output.txt").write_text(text)
    fig = tool_figure(kind, text) if kind else ""
    sim = sim_figure(kind, name, roce_frames(d / "rnic1.pcap")) if kind and nics == "two" else ""
    return ok, fig, sim, wall, text


def run_pyverbs(out):
    d = out / "pyverbs"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    procs = run_demo.start_sims(d, JUMBO, snaplen=SNAPLEN)
    try:
        r = subprocess.run(["/usr/bin/python3", "-c", PYVERBS], env=env(d / "sock"), capture_output=True,
                           text=True, timeout=60)
    finally:
        run_demo.stop_sims(procs)
    return r.returncode == 0 and "pyverbs ['rnic0', 'rnic1']" in r.stdout, r.stdout + r.stderr


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the subset make test runs")
    ap.add_argument("--out", default=str(ROOT / "build" / "interop"))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    a = ap.parse_args(argv)
    out = pathlib.Path(a.out)
    rows, failed = [], 0
    print(f"{'case':44} {'result':6} {'tool figure (wall clock)':30} {'NIC, simulated time':22} wall")
    for i, case in enumerate(CASES):
        if (a.quick and not case[4]) or a.k not in case[0]:
            continue
        ok, fig, sim, wall, text = run_case(i, case, out, a.timeout)
        failed += not ok
        rows.append((case[0], ok))
        print(f"{case[0]:44} {'PASS' if ok else 'FAIL':6} {fig:30} {sim:22} {wall:5.1f} s", flush=True)
        if not ok:
            print("    " + "\n    ".join(text.strip().splitlines()[-15:]))
    for i, case in enumerate(CM_CASES):
        if (a.quick and not case[4]) or a.k not in case[0]:
            continue
        ok, fig, sim, wall, text = run_cm_case(i, case, out, a.timeout)
        failed += not ok
        rows.append((case[0], ok))
        print(f"{case[0]:44} {'PASS' if ok else 'FAIL':6} {fig:30} {sim:22} {wall:5.1f} s", flush=True)
        if not ok:
            print("    " + "\n    ".join(text.strip().splitlines()[-15:]))
    if a.k in "pyverbs":
        ok, text = run_pyverbs(out)
        failed += not ok
        print(f"{'pyverbs: open, query_device/port/gid':44} {'PASS' if ok else 'FAIL':6} {text.strip()[:80]}")
    passed = len(rows) + (a.k in "pyverbs") - failed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
