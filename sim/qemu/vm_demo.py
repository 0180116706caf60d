"""make vm-demo: two Linux VMs, each with a simulated RNIC card as its PCIe device (rnic.ko, the
project's libibverbs.so.1 and its pci backend), the cards on one simulated 100 GbE link; Debian's
ibv_rc_pingpong and perftest run VM to VM and their results are printed.

Figures are the tools' own, in the guests' time: the guests run at the host's speed while the
NICs are simulated about a thousand times slower than a card, so bandwidth and latency here say
that the path works, not how fast a card is (make bench gives those, in simulated time)."""
import pathlib
import re
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import vm as V  # noqa: E402

# (name, server command, client command (+ the server's address), what to print of the client)
RUNS = [
    ("ibv_rc_pingpong", "ibv_rc_pingpong -d rnic_pci0 -g 0 -n 100", "ibv_rc_pingpong -d rnic_pci0 -g 0 -n 100",
     r"\d+ bytes in .*|\d+ iters in .*"),
    ("ib_write_bw", "ib_write_bw -d rnic_pci0 -x 0 -F -n 200 -s 65536 --report_gbits",
     "ib_write_bw -d rnic_pci0 -x 0 -F -n 200 -s 65536 --report_gbits", r"^\s*65536\s+200\s.*"),
    ("ib_read_lat", "ib_read_lat -d rnic_pci0 -x 0 -F -n 100 -s 64", "ib_read_lat -d rnic_pci0 -x 0 -F -n 100 -s 64",
     r"^\s*64\s+100\s.*"),
    ("ib_atomic_bw", "ib_atomic_bw -d rnic_pci0 -x 0 -F -n 200", "ib_atomic_bw -d rnic_pci0 -x 0 -F -n 200",
     r"^\s*8\s+200\s.*"),
]


def scripts():
    server, client = V.guest_setup(1), V.guest_setup(2)
    for name, s, c, _ in RUNS:
        server += f"echo '== {name}'\n{s}\n"
        client += f"echo '== {name}'\n" + V.until_connected(f"{c} {V.GUEST_NET}1")
    return server, client


def main():
    out = V.ROOT / "build" / "vm-demo"
    t0 = time.time()
    print(f"two VMs (QEMU {V.accel()}, Debian's kernel, rnic.ko), each on a simulated RNIC; the NICs on one link")
    cards, vms = V.pair(out, scripts())
    consoles, logs = V.finish(cards, vms, 1800)
    rc = 0
    for v, c in zip(vms, consoles):
        if "rnic-guest: exit 0" not in c or V.splats(c):
            print(f"{v.name}: FAILED (console {v.console_file})")
            print("\n".join(V.splats(c)[:20]) or c[-3000:])
            rc = 1
    parts = re.split(r"^== (\S+)$", consoles[1], flags=re.M)
    found = dict(zip(parts[1::2], parts[2::2]))
    for name, _, cmd, pat in RUNS:
        lines = re.findall(pat, found.get(name, ""), flags=re.M)
        print(f"-- {name} (client: {cmd} {V.GUEST_NET}1)")
        print("\n".join("   " + ln.strip() for ln in lines) if lines else "   no result")
        rc |= not lines
    for log in logs:
        print("   " + next(ln for ln in log.splitlines() if "dma errors" in ln))
    print(f"wall time {time.time() - t0:.0f} s; consoles and logs in {out}; {'PASS' if rc == 0 else 'FAIL'}")
    return rc


if __name__ == "__main__":
    try:
        sys.exit(main())
    finally:
        V.cleanup()
