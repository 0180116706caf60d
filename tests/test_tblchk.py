"""The kernels' memories as block RAMs see them (tests/tblchk/tblchk.c): how many words of each memory
one clock reads or writes, and whether a clock reads a word it wrote, over the kernels' cycle tests
(make tblchk-kernels) and in two simulators under traffic (make tblchk, shortened). No memory may do
worse than tests/data/tblchk_limits.txt says."""
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIMITS = ROOT / "tests" / "data" / "tblchk_limits.txt"
ROW = re.compile(r"^(tx|rx|cq)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)$")


def judge(report):
    """What in one report does worse than the limits allow ('' if nothing)."""
    clocks = re.search(r"clocks tx (\d+) rx (\d+) cq (\d+); words not told apart (\d+)", report)
    assert clocks and all(int(clocks.group(i)) > 1000 for i in (1, 2, 3)), report
    assert clocks.group(4) == "0", report
    seen = {}
    for line in report.splitlines():
        m = ROW.match(line)
        if m:
            seen[m.group(1), m.group(2)] = (int(m.group(3)), int(m.group(5)))
    limits = {}
    for line in LIMITS.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            kernel, mem, most, raw = line.split()
            limits[kernel, mem] = (int(most), raw == "yes")
    assert seen.keys() == limits.keys(), "memories changed: update tests/data/tblchk_limits.txt"
    worse = [f"{k} {m}: {most} accesses in a clock (limit {limits[k, m][0]})"
             for (k, m), (most, _) in seen.items() if most > limits[k, m][0]]
    worse += [f"{k} {m}: reads a word written in the same clock" for (k, m), (_, raw) in seen.items()
              if raw and not limits[k, m][1]]
    return "\n".join(worse)


def test_memories_keep_to_their_limits():
    r = subprocess.run(["make", "-s", "tblchk-kernels"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    report = (ROOT / "build" / "tblchk" / "report.txt").read_text()
    worse = judge(report)
    assert not worse, worse + "\n" + report


def test_memories_keep_to_their_limits_under_traffic():
    """Two simulators with the table check's kernels: mixed operations (scatter lists naming up to
    three regions) on a link that loses, duplicates and reorders frames, then rc_ops' checks (the
    error cases, UD, UC, a shared receive queue); make tblchk adds 64 B WRITEs on 16 QPs."""
    sim = ROOT / "build" / "tblchk" / "sim" / "rnic-sim"
    r = subprocess.run(["make", "-s", str(sim)], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    r = subprocess.run([sys.executable, str(ROOT / "sim" / "transport.py"), "tblchk", "300", "mix", "checks"], cwd=ROOT,
                       env=dict(os.environ, RNIC_SIM=str(sim)), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for run in ("mix", "checks"):
        for nic in ("rnic0", "rnic1"):
            report = (ROOT / "build" / "tblchk" / "run" / f"{run}-{nic}.txt").read_text()
            worse = judge(report)
            assert not worse, f"{run} {nic}:\n{worse}\n{report}"
