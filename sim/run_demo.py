#!/usr/bin/env python3
"""The demo: two simulated NICs (two rnic-sim processes on a direct 100G link) and rnic-demo,
which registers 1 MiB of application memory on each host and runs RDMA WRITEs through the verbs
API.  Prints the demo's table, wall time, simulated cycles per wall second and the capture file.

    run_demo.py [--out DIR] [--ack-timeout T] [--drop P ...extra rnic-sim options]
"""
import argparse
import os
import pathlib
import re
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
SIM = pathlib.Path(os.environ.get("RNIC_SIM", BUILD / "sim" / "rnic-sim"))  # RNIC_SIM: another build
DEMO = BUILD / "demo" / "rnic-demo"
sys.path.insert(0, str(ROOT / "tests"))
import roce_check  # noqa: E402

NICS = [("rnic0", "02:00:00:00:00:01", "10.0.0.1"), ("rnic1", "02:00:00:00:00:02", "10.0.0.2")]
FINAL = re.compile(r"rnic-sim (\S+): (\d+) cycles, ([\d.]+) s wall, ([\d.]+) Mcycles/s")


def pin(pid, i):
    """Simulator i on a core of its own (of those this process may use), when there are two: the
    scheduler would otherwise often put two simulators that wake each other every quantum on
    one core, taking turns instead of running side by side. And below the host processes: the
    thread that answers a simulator's DMA reads runs as soon as it is woken."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) >= 2:
        os.sched_setaffinity(pid, {cpus[i % len(cpus)]})
    os.setpriority(os.PRIO_PROCESS, pid, 10)


def start_sims(out, extra=(), snaplen=None, per_nic=None):
    """Start both NICs; returns the Popen objects (their logs are in `out`). With snaplen, the
    captures keep only that many bytes of each frame; per_nic: {name: more options for it}."""
    sock_dir = out / "sock"
    sock_dir.mkdir(parents=True, exist_ok=True)
    for p in sock_dir.glob("*"):
        p.unlink()
    procs = []
    for i, (name, mac, ip) in enumerate(NICS):
        link = ["--eth-listen" if i == 0 else "--eth-connect", str(sock_dir / "link")]
        cmd = [str(SIM), "--name", name, "--mac", mac, "--ip", ip, "--sock-dir", str(sock_dir),
               *link, "--pcap", str(out / f"{name}.pcap"), *extra, *(per_nic or {}).get(name, ())]
        if snaplen:
            cmd += ["--pcap-snaplen", str(snaplen)]
        log = open(out / f"{name}.log", "w")
        procs.append(subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT))
        pin(procs[-1].pid, i)
    deadline = time.time() + 60
    while not all((sock_dir / f"{n}.sock").exists() for n, _, _ in NICS):
        if time.time() > deadline or any(p.poll() is not None for p in procs):
            stop_sims(procs)
            raise RuntimeError("rnic-sim did not start; see " + str(out))
        time.sleep(0.05)
    return procs


def stop_sims(procs):
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def sim_rates(out):
    """{name: (cycles, wall_s, Mcycles_per_s)} from the rnic-sim logs."""
    rates = {}
    for name, _, _ in NICS:
        for line in (out / f"{name}.log").read_text().splitlines():
            m = FINAL.search(line)
            if m:
                rates[m.group(1)] = (int(m.group(2)), float(m.group(3)), float(m.group(4)))
    return rates


def run(out, extra=(), demo_args=()):
    """Run the whole demo; returns (demo exit code, demo stdout, rates, capture summary)."""
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    procs = start_sims(out, extra)
    try:
        env = dict(os.environ, RNIC_SIM_DIR=str(out / "sock"))
        demo = subprocess.run([str(DEMO), *demo_args, "rnic0", "rnic1"], env=env,
                              capture_output=True, text=True, timeout=1800)
    finally:
        stop_sims(procs)
    wall = time.time() - t0
    pcap = out / "rnic0.pcap"
    frames = roce_check.read_pcap(pcap)
    roce = [f for _, f in frames if roce_check.is_roce_v4(f)]
    capture = {"path": pcap, "frames": len(frames), "roce": len(roce),
               "bad_icrc": sum(not roce_check.icrc_ok(f) for f in roce)}
    return demo.returncode, demo.stdout + demo.stderr, sim_rates(out), capture, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(BUILD / "demo" / "run"), help="logs, sockets and captures")
    ap.add_argument("--ack-timeout", type=int, help="the QPs' local ACK timeout attribute (default 14)")
    args, extra = ap.parse_known_args()
    demo_args = ["--ack-timeout", str(args.ack_timeout)] if args.ack_timeout is not None else []
    rc, text, rates, cap, wall = run(pathlib.Path(args.out), extra, demo_args)
    print(text, end="")
    print(f"wall time: {wall:.1f} s (both simulators and the demo, including boot)")
    for name, (cycles, swall, rate) in sorted(rates.items()):
        print(f"{name}: {cycles} simulated cycles ({cycles / 250e3:.3f} ms at 250 MHz) in {swall:.1f} s wall"
              f" = {rate:.2f} Mcycles/s")
    print(f"capture: {cap['path']} ({cap['frames']} frames, {cap['roce']} RoCEv2, "
          f"{cap['bad_icrc']} with a bad ICRC); the peer's view: {cap['path'].with_name('rnic1.pcap')}")
    print(f"firmware and simulator logs: {args.out}/rnic0.log, {args.out}/rnic1.log")
    return rc if cap["bad_icrc"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
