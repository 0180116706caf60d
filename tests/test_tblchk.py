"""The kernels' memories as block RAMs see them (make tblchk-kernels, tests/tblchk/tblchk.c): over the
kernels' cycle tests, how many words of each memory one clock reads or writes, and whether a clock
reads a word it wrote. No memory may do worse than tests/data/tblchk_limits.txt says; that list is
what remains to bring to a block RAM's two ports and one clock of read latency."""
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
LIMITS = ROOT / "tests" / "data" / "tblchk_limits.txt"
ROW = re.compile(r"^(tx|rx|cq)\s+(\S+)\s+(\d+)\s+(\d+)\s+(\d+)$")


def test_memories_keep_to_their_limits():
    r = subprocess.run(["make", "-s", "tblchk-kernels"], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    report = (ROOT / "build" / "tblchk" / "report.txt").read_text()
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
    assert not worse, "\n".join(worse) + "\n" + report
