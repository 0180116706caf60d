"""Two simulated NICs that stay up for your own verbs programs (make sim-up / make sim-down):
rnic0 (10.0.0.1) and rnic1 (10.0.0.2) on a direct 100G link, host sockets in DIR (default
$RNIC_SIM_DIR, else /tmp/rnic-sim), logs and captures beside them. Then run any verbs program
with scripts/rnic-run, which points it at the project's libibverbs.so.1 and at DIR.

    python sim/nics.py up [--dir DIR] [rnic-sim options ...]
    python sim/nics.py down [--dir DIR]
"""
import argparse
import os
import pathlib
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sim"))
import run_demo  # noqa: E402
from run_demo import NICS, SIM  # noqa: E402


def up(d, extra):
    d.mkdir(parents=True, exist_ok=True)
    if (d / "pids").exists():
        down(d)
    pids = []
    for i, (name, mac, ip) in enumerate(NICS):
        (d / f"{name}.sock").unlink(missing_ok=True)
        link = ["--eth-listen" if i == 0 else "--eth-connect", str(d / "link")]
        cmd = [str(SIM), "--name", name, "--mac", mac, "--ip", ip, "--sock-dir", str(d), *link, *extra]
        with open(d / f"{name}.log", "w") as log:
            p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        run_demo.pin(p.pid, i)
        pids.append(p.pid)
    (d / "pids").write_text(" ".join(map(str, pids)))
    deadline = time.time() + 60
    while not all((d / f"{n}.sock").exists() for n, _, _ in NICS):
        if time.time() > deadline:
            down(d)
            sys.exit(f"rnic-sim did not start; see {d}/*.log")
        time.sleep(0.05)
    print(f"rnic0 (10.0.0.1) and rnic1 (10.0.0.2) up; sockets in {d}")
    print(f"run:  RNIC_SIM_DIR={d} scripts/rnic-run ibv_devinfo -v")


def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as st:
            return st.read().rsplit(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def down(d):
    f = d / "pids"
    if not f.exists():
        print(f"no NICs running from {d}")
        return
    pids = list(map(int, f.read_text().split()))
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    # each prints its totals (frames, DMA errors) as it exits
    deadline = time.time() + 30
    while time.time() < deadline and any(map(running, pids)):
        time.sleep(0.05)
    f.unlink()
    print(f"stopped the NICs of {d}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("action", choices=["up", "down"])
    ap.add_argument("--dir", default=os.environ.get("RNIC_SIM_DIR", "/tmp/rnic-sim"))
    a, extra = ap.parse_known_args()
    d = pathlib.Path(a.dir).resolve()
    up(d, extra) if a.action == "up" else down(d)


if __name__ == "__main__":
    main()
