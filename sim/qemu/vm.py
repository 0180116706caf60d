"""Linux VMs whose PCIe card is a simulated NIC (issue 17): each VM a QEMU (sim/qemu/build.sh)
with the rnic-pci device, connected to an `rnic-sim --card-host`; the guest (sim/qemu/guest.py)
runs Debian's kernel, the project's rnic.ko and the script it is handed, then powers off. The
NICs share a simulated Ethernet link; the guests share a virtio-net segment of their own for the
tools' TCP handshakes. Used by tests/test_vm.py and `make vm-demo`."""
import json
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
BUILD = ROOT / "build" / "vm"
SIM = ROOT / "build" / "sim" / "rnic-sim"
# the checks Debian's 6.1 kernel has (no KASAN, no lockdep: docs/ARCHITECTURE.md "On a card"):
# slab red zones, poisoning and free checks, pages poisoned and cleared when freed; a warning or
# an oops panics the guest
CMDLINE = ("console=ttyS0 quiet panic=-1 oops=panic panic_on_warn=1 softlockup_panic=1 slub_debug=FZPU "
           "page_poison=1 init_on_free=1")
SPLAT = re.compile(r"\bBUG\b|WARNING:|Oops|Call Trace|Kernel panic|corruption|soft lockup|blocked for more than|"
                   r"rcu_sched detected stall|general protection|Poison overwritten|Redzone|Object padding")
GUEST_NET = "192.168.7."
STARTED = []  # every simulator and QEMU started, for cleanup()


def paths():
    """What `make all` built for the VMs: the QEMU binary, the guest's kernel and initramfs."""
    return json.loads((BUILD / "paths.json").read_text())


def accel():
    """kvm if a guest boots under it here within 20 s, else tcg (checked once per build tree:
    on some machines KVM hangs or aborts; nothing depends on it)."""
    f = BUILD / "accel"
    if f.exists():
        return f.read_text().strip()
    vm = Vm("kvm-probe", BUILD / "probe", "true\n", accel_="kvm")
    try:
        ok = vm.wait(20) is not None and "rnic-guest: exit 0" in vm.console()
    finally:
        vm.kill()
    f.write_text("kvm\n" if ok else "tcg\n")
    return f.read_text().strip()


class Card:
    """An rnic-sim whose host is a VM (card_host; else host processes, as make sim-up's): name.sock
    in d, the Ethernet link as given."""

    def __init__(self, d, name, n, eth=(), wait=True, card_host=True):
        self.d, self.name = pathlib.Path(d), name
        self.d.mkdir(parents=True, exist_ok=True)
        self.d.chmod(0o700)
        self.sock = self.d / f"{name}.sock"
        self.log = self.d / f"{name}.log"
        self.p = subprocess.Popen([str(SIM), "--name", name, "--mac", f"02:00:00:00:00:{n:02x}",
                                   "--ip", f"10.0.0.{n}", "--sock-dir", str(self.d),
                                   *(["--card-host"] if card_host else []), *eth],
                                  stdout=open(self.log, "w"), stderr=subprocess.STDOUT)
        STARTED.append(self.p)
        if wait:
            self.ready()

    def ready(self):
        """Wait for its host socket (a simulator listening for its link first waits for the peer)."""
        deadline = time.time() + 60
        while not self.sock.exists():
            if self.p.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"{name} did not start: {self.log.read_text()}")
            time.sleep(0.05)

    def stop(self):
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
            try:
                self.p.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        return self.log.read_text()


class Vm:
    """A QEMU running the guest with `script` (sh -e) on card `card` (None: no card)."""

    def __init__(self, name, d, script, card=None, net=None, mac=1, accel_=None, extra=(), iommu=False):
        p = paths()
        self.name, self.d = name, pathlib.Path(d)
        self.d.mkdir(parents=True, exist_ok=True)
        (self.d / f"{name}.sh").write_text(script)
        self.console_file = self.d / f"{name}.console"
        self.console_file.unlink(missing_ok=True)
        self.qmp_path = self.d / f"{name}.qmp"
        cmd = [p["qemu"], "-M", "q35", "-m", "1G", "-smp", "1", "-nodefaults", "-no-user-config", "-display", "none",
               "-L", "/usr/share/seabios", "-L", "/usr/share/qemu", "-kernel", p["kernel"], "-initrd", p["initrd"],
               "-append", CMDLINE + (" intel_iommu=on" if iommu else ""),
               "-serial", f"file:{self.console_file}", "-no-reboot",
               "-fw_cfg", f"name=opt/rnic/run,file={self.d / f'{name}.sh'}",
               "-qmp", f"unix:{self.qmp_path},server=on,wait=off", "-accel", accel_ or accel()]
        if (accel_ or accel()) == "tcg":
            cmd += ["-icount", "shift=auto"]
        if iommu:  # the card's DMA through IOVAs the guest's IOMMU maps (before any PCI device)
            cmd += ["-device", "intel-iommu,intremap=off"]
        if card is not None:
            cmd += ["-device", "pcie-root-port,id=rp0,chassis=1",
                    "-device", f"rnic-pci,id=rnic,bus=rp0,socket={card.sock}"]
        if net is not None:  # ("listen" | "connect", port): the guests' own segment
            cmd += ["-netdev", f"socket,id=n0,{net[0]}=127.0.0.1:{net[1]}",
                    "-device", f"virtio-net-pci,netdev=n0,mac=52:54:00:00:00:{mac:02x},romfile="]
        cmd += list(extra)
        self.p = subprocess.Popen(cmd, stdout=open(self.d / f"{name}.qemu.log", "w"), stderr=subprocess.STDOUT)
        STARTED.append(self.p)

    def console(self):
        return self.console_file.read_text(errors="replace") if self.console_file.exists() else ""

    def wait(self, timeout):
        """The exit status QEMU gave once the guest powered off; None if it still runs."""
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def wait_for(self, text, timeout):
        deadline = time.time() + timeout
        while text not in self.console():
            if self.p.poll() is not None or time.time() > deadline:
                return False
            time.sleep(0.2)
        return True

    def qmp(self, command, **arguments):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(str(self.qmp_path))
        f = s.makefile("rw")
        f.readline()  # greeting
        for c in ({"execute": "qmp_capabilities"}, {"execute": command, "arguments": arguments}):
            f.write(json.dumps(c) + "\n")
            f.flush()
            while True:
                r = json.loads(f.readline())
                if "return" in r or "error" in r:
                    break
        s.close()
        return r

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()


def cleanup():
    """Kill whatever is left of what was started (a test that failed half way)."""
    while STARTED:
        p = STARTED.pop()
        if p.poll() is None:
            p.kill()
            p.wait()


def splats(text):
    """Lines of a guest's console that show a kernel warning, oops or memory corruption."""
    return [ln for ln in text.splitlines() if SPLAT.search(ln)]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def guest_setup(n):
    """The start of every guest script: its network and the card's driver loaded."""
    return (f"ip addr add {GUEST_NET}{n}/24 dev eth0 2>/dev/null && ip link set eth0 up || true\n"
            "insmod /lib/modules/$(uname -r)/rnic.ko\n"
            "export LD_LIBRARY_PATH=/opt/rnic/lib\n")


def until_connected(client, tries=60, card=True):
    """A tool's client side, tried again each second until its server listens (the other guest may
    still be booting), while the card is there: the script fails if it never succeeds."""
    gone = "  [ -e /dev/rnic0 ] || break\n" if card else ""
    return (f"ok=0\nfor i in $(seq {tries}); do\n{gone}"
            f"  if {client}; then ok=1; break; fi\n  sleep 1\ndone\n[ $ok = 1 ]\n")


def pair(d, scripts, eth_faults=(), iommu=False):
    """Two cards on one link and a VM on each running scripts[0] and scripts[1]; returns
    (cards, vms). The first card listens for the link, the second connects."""
    d = pathlib.Path(d)
    if d.exists():
        shutil.rmtree(d)
    link = d / "eth.sock"
    a = Card(d, "rnic0", 1, ["--eth-listen", str(link), *eth_faults], wait=False)
    b = Card(d, "rnic1", 2, ["--eth-connect", str(link)])
    a.ready()
    port = free_port()
    va = Vm("vm0", d, scripts[0], a, ("listen", port), 1, iommu=iommu)
    time.sleep(0.5)  # the listening side of the guests' segment first
    vb = Vm("vm1", d, scripts[1], b, ("connect", port), 2, iommu=iommu)
    return [a, b], [va, vb]


def finish(cards, vms, timeout):
    """Wait for the guests (killed past timeout), stop the cards; their consoles and logs."""
    deadline = time.time() + timeout
    for v in vms:
        if v.wait(max(1, deadline - time.time())) is None:
            v.kill()
    logs = [c.stop() for c in cards]
    return [v.console() for v in vms], logs


RXE_MAC = "02:00:00:00:00:09"
RXE_IP = "10.0.0.9"


def rxe_vm(d, script, nic_port, guest_port, fwd_port):
    """A guest whose kernel runs Linux's RoCE (rdma_rxe, device rxe0) on a virtio NIC (RXE_MAC,
    RXE_IP) whose frames are datagrams to and from an rnic-sim's Ethernet port (--eth-udp
    nic_port:127.0.0.1:guest_port); a second NIC on QEMU's user network for the tools' TCP: the
    host is 10.0.2.2 to it, and the host's fwd_port reaches its port 18515. Debian's libibverbs
    and rxe provider."""
    setup = (f"roce=$(grep -l {RXE_MAC} /sys/class/net/*/address | cut -d/ -f5)\n"
             "tcp=$(grep -l 52:54:00:12:34:56 /sys/class/net/*/address | cut -d/ -f5)\n"
             f"ip addr add {RXE_IP}/24 dev $roce\nip link set $roce up\n"
             "ip addr add 10.0.2.15/24 dev $tcp\nip link set $tcp up\n"
             "rdma link add rxe0 type rxe netdev $roce\n")
    extra = ["-netdev", f"dgram,id=r,local.type=inet,local.host=127.0.0.1,local.port={guest_port},"
                        f"remote.type=inet,remote.host=127.0.0.1,remote.port={nic_port}",
             "-device", f"virtio-net-pci,netdev=r,mac={RXE_MAC},romfile=",
             "-netdev", f"user,id=u,net=10.0.2.0/24,hostfwd=tcp:127.0.0.1:{fwd_port}-:18515",
             "-device", "virtio-net-pci,netdev=u,mac=52:54:00:12:34:56,romfile="]
    return Vm("rxe", d, setup + script, extra=extra)
