"""The real kernel driver in the full-system simulation (issue 17): Linux VMs (QEMU, Debian's 6.1
kernel) whose PCIe card is a simulated NIC (sim/qemu). rnic.ko probes it, the host library's pci
backend and Debian's tools use it, VM to VM over two simulated NICs on one link. Every guest
runs with slab and page poisoning and panics on a warning; any splat on a console fails."""
import os
import pathlib
import re
import socket
import subprocess
import sys
import time

import pytest

import roce_check as R
from link_client import S

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sim" / "qemu"))
import vm as V  # noqa: E402


@pytest.fixture(autouse=True)
def _cleanup():
    yield
    V.cleanup()


def clean(console):
    assert "rnic-guest: exit 0" in console, console[-3000:]
    assert not V.splats(console), V.splats(console)


def one_vm(tmp_path, script):
    """A VM on one card running script after guest_setup; its console (checked clean) and the
    card's log (no DMA error)."""
    card = V.Card(tmp_path, "rnic0", 5)
    vm = V.Vm("vm0", tmp_path, V.guest_setup(1) + script, card)
    assert vm.wait(600) is not None, "the guest did not power off"
    log = card.stop()
    console = vm.console()
    clean(console)
    assert "dma errors 0," in log, log
    return console, log


def test_module_probes_the_card_and_ibv_devinfo_lists_it(tmp_path):
    """insmod probes the card (ICM handed over, context 0's command queue); Debian's ibv_devinfo,
    through the project's libibverbs.so.1 and its pci backend, lists rnic_pci0 with the NIC's
    limits; rmmod takes the context memory back."""
    console, log = one_vm(tmp_path, "ibv_devinfo -v\nrmmod rnic\necho removed\n")
    assert re.search(r"rnic 0000:01:00.0: RNIC build \w+, interface \d+, 15 contexts", console), console
    assert re.search(r"hca_id:\s+rnic_pci0", console) and re.search(r"max_qp:\s+16384\b", console), console
    assert re.search(r"GID\[  0\]:\s+::ffff:10.0.0.5, RoCE v2", console), console
    assert "removed" in console
    assert "the card's host left: power cycle" in log, log


@pytest.mark.parametrize("iommu", [False, True], ids=["", "iommu"])
def test_rc_pingpong_vm_to_vm(tmp_path, iommu):
    """Debian's ibv_rc_pingpong between two VMs, each through rnic.ko and its own simulated NIC;
    and again with each guest's IOMMU on (Intel VT-d, intel_iommu=on): the card's DMA to IOVAs."""
    server = V.guest_setup(1) + "ibv_rc_pingpong -d rnic_pci0 -g 0 -n 50\n"
    client = V.guest_setup(2) + V.until_connected(f"ibv_rc_pingpong -d rnic_pci0 -g 0 -n 50 {V.GUEST_NET}1")
    cards, vms = V.pair(tmp_path, [server, client], iommu=iommu)
    consoles, logs = V.finish(cards, vms, 900)
    for c in consoles:
        clean(c)
        assert not iommu or re.search(r"DMAR: IOMMU enabled|DMAR: Intel\(R\) Virtualization Technology", c), c[-3000:]
        assert re.search(r"409600 bytes in [\d.]+ seconds", c), c[-3000:]
        assert "50 iters in" in c
    for log in logs:
        assert "dma errors 0," in log, log


def test_device_removed_under_traffic(tmp_path):
    """QEMU's device_del of the card while ib_write_bw writes through it (the guest's ACPI hotplug
    unbinds rnic.ko with a file open and its rings mapped): the tool fails instead of hanging (its
    next touch of the card's pages gets SIGBUS, a verb EIO), the kernel neither warns nor oopses,
    the module unloads, and the card sees its host leave."""
    server = V.guest_setup(1) + "ib_write_bw -d rnic_pci0 -x 0 -F -n 100000 -s 65536 || true\n"
    client = V.guest_setup(2) + (
        "cat > /tmp/client <<'EOF'\n" +
        V.until_connected(f"ib_write_bw -d rnic_pci0 -x 0 -F -n 100000 -s 65536 {V.GUEST_NET}1") +
        "EOF\n"
        "sh -e /tmp/client > /tmp/bw.log 2>&1 &\n"
        "pid=$!\n"
        "sleep 30\n"  # connected and writing (its output is buffered until it ends)
        "echo rnic-test: traffic\n"
        "st=0; wait $pid || st=$?\n"
        "cat /tmp/bw.log\n"
        "echo rnic-test: client exit $st\n"
        "[ $st != 0 ] && [ ! -e /dev/rnic0 ]\n"
        "rmmod rnic\n"
        "echo rnic-test: module removed\n")
    cards, vms = V.pair(tmp_path, [server, client])
    assert vms[1].wait_for("rnic-test: traffic", 600), vms[1].console()[-3000:]
    r = vms[1].qmp("device_del", id="rnic")
    assert "return" in r, r
    assert vms[1].wait(600) is not None, vms[1].console()[-3000:]
    vms[0].kill()  # its server waits for a peer that is gone
    consoles, logs = V.finish(cards, vms, 60)
    clean(consoles[1])
    assert "rnic-test: module removed" in consoles[1]
    assert not V.splats(consoles[0]), V.splats(consoles[0])
    assert "the card's host left: power cycle" in logs[1], logs[1]


def test_bad_ioctls_other_users_and_memlock(tmp_path):
    """tests/apps/kmod_ioctls.c in a VM: bad sizes, pointers, opcodes and ring handles (one of
    another process's), a REG_MR whose length wraps or names unmapped memory, a ring freed while
    in use, each refused with its errno; another user is refused the 0600 node, and once Debian's
    udevd has applied the documented rule (0666) opens it and is held to its RLIMIT_MEMLOCK. Last,
    the card is unbound under a process's mappings (doorbell page, event queue, a ring split in
    two, their copies in a fork child): each access after that gets SIGBUS, and the module
    unloads."""
    console, _ = one_vm(tmp_path, "rnic-kmod-ioctls\n"
                                  "mkdir -p /run/udev\n/lib/systemd/systemd-udevd --daemon\n"
                                  "udevadm trigger --action=add --subsystem-match=misc\nudevadm settle\n"
                                  "ls -l /dev/rnic0\nrnic-kmod-ioctls user\n"
                                  "rnic-kmod-ioctls removed\n[ ! -e /dev/rnic0 ]\nrmmod rnic\n")
    assert "PASS: 0 failed" in console and "FAIL" not in console, console[-4000:]
    assert len(re.findall(r"^ok ", console, flags=re.M)) >= 40, console[-4000:]
    for what in ("doorbell page written", "event queue read", "ring's second page read"):
        assert f"ok   {what} after the card's removal: SIGBUS" in console, console[-4000:]
    assert "ok   doorbell page written by a fork child after the card's removal: SIGBUS" in console
    assert re.search(r"^crw-rw-rw- .* /dev/rnic0$", console, flags=re.M), console[-4000:]


def test_processes_killed_mid_transfer_free_their_contexts(tmp_path):
    """ib_write_bw server and client on one card (two contexts, the NIC's loopback), both killed
    with SIGKILL mid-transfer: their contexts are reset and freed (all 15 open again at once, a
    16th is refused), no warning, and the module unloads."""
    console, _ = one_vm(tmp_path, (
        "ib_write_bw -d rnic_pci0 -x 0 -F -n 100000 -s 65536 > /tmp/s.log 2>&1 &\n"
        "sleep 3\n"
        "ib_write_bw -d rnic_pci0 -x 0 -F -n 100000 -s 65536 127.0.0.1 > /tmp/c.log 2>&1 &\n"
        "sleep 30\n"
        "kill -9 $(pidof ib_write_bw)\n"
        "wait || true\n"
        "rnic-stat | grep TX_WQES\n"
        "rnic-kmod-ioctls contexts\n"
        "rmmod rnic\n"
        "echo rnic-test: module removed\n"))
    assert "ok   contexts opened at once: 15 of 15" in console, console[-4000:]
    assert "rnic-test: module removed" in console
    assert "reset not confirmed" not in console
    wqes = int(re.search(r"^TX_WQES: (\d+)", console, flags=re.M).group(1))
    assert wqes > 1000, console[-4000:]  # the WRITEs were under way when the processes died


# (name, the tool and its arguments but device, GID index and peer): Linux rxe in a guest against
# this NIC, each run once with rxe serving and once with this NIC serving. READs and atomics
# outstanding: this NIC's max_qp_rd_atom (perftest would ask each side for the other's, and rxe's
# 128 is more than this NIC takes: EINVAL, as mlx5 answers)
RXE_RUNS = [("ibv_rc_pingpong", "ibv_rc_pingpong -m 1024 -n 20", "-g")] + [
    (f"ib_{op}_{kind}", f"ib_{op}_{kind} -F -m 1024 -n {20 if kind == 'lat' else 50}"
     + ("" if op == "atomic" else " -s 4096") + (f" -o {S.MAX_RD_ATOM}" if op in ("read", "atomic") else ""),
     "-x")
    for op in ("write", "read", "send", "atomic") for kind in ("bw", "lat")]
# what the tools print when their TCP handshake found no server yet (QEMU's port forward takes a
# connection before the guest's server listens, then drops it)
HANDSHAKE_FAILED = r"Couldn't connect|Unable to read from socket|Couldn't read/write remote address"
RXE_GID = ("gid=$(for i in $(seq 0 15); do case $(cat /sys/class/infiniband/rxe0/ports/1/gids/$i)/"
           "$(cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/$i 2>/dev/null) in "
           "0000:0000:0000:0000:0000:ffff:*/'RoCE v2') echo $i; break;; esac; done)\n")


def test_linux_rxe_peer_both_directions(tmp_path):
    """Linux's own RoCE as the peer: a guest's rdma_rxe on a virtio NIC whose frames reach this
    NIC's Ethernet port, Debian's pingpong and perftest (write, read, send, atomic; bw and lat)
    between rxe and a host process on this NIC (the project's libibverbs.so.1), each with rxe
    serving and with this NIC serving; every frame of the capture has a good ICRC, and both
    sides' frames are there."""
    nic_port, guest_port, fwd, host_port = (V.free_port() for _ in range(4))
    card = V.Card(tmp_path, "rnic0", 1, ["--eth-udp", f"{nic_port}:127.0.0.1:{guest_port}",
                                         "--pcap", str(tmp_path / "rnic0.pcap")], card_host=False)
    script = RXE_GID
    for name, tool, g in RXE_RUNS:
        script += (f"echo '== {name} rxe-serves'\n{tool} -d rxe0 {g} $gid -p 18515\n"
                   f"echo '== {name} rnic-serves'\n" +
                   V.until_connected(f"{tool} -d rxe0 {g} $gid -p {host_port} 10.0.2.2", card=False))
    vm = V.rxe_vm(tmp_path, script, nic_port, guest_port, fwd)
    env = {**os.environ, "LD_LIBRARY_PATH": str(ROOT / "build" / "host-lib"),
           "RNIC_SIM_DIR": str(tmp_path)}
    for name, tool, g in RXE_RUNS:
        ours = f"{tool} -d rnic0 {g} 0".split()
        assert vm.wait_for(f"== {name} rxe-serves", 300), vm.console()[-3000:]
        for _ in range(60):  # until rxe's server listens (QEMU's port forward takes the connection at once)
            r = subprocess.run([*ours, "-p", str(fwd), "127.0.0.1"], env=env, capture_output=True, text=True,
                               timeout=600)
            if r.returncode == 0 or not re.search(HANDSHAKE_FAILED, r.stdout + r.stderr):
                break
            time.sleep(1)
        assert r.returncode == 0, (name, "rxe serves", r.stdout[-2000:], r.stderr[-2000:], vm.console()[-2000:])
        assert vm.wait_for(f"== {name} rnic-serves", 300), vm.console()[-3000:]
        r = subprocess.run([*ours, "-p", str(host_port)], env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, (name, "this NIC serves", r.stdout[-2000:], r.stderr[-2000:],
                                   vm.console()[-2000:])
    assert vm.wait(300) is not None, vm.console()[-3000:]
    log = card.stop()
    console = vm.console()
    clean(console)
    frames = R.roce_frames(tmp_path / "rnic0.pcap")
    assert frames and all(R.icrc_ok(f) for f in frames), "a frame with a bad ICRC"
    macs = {bytes(f[6:12]) for f in frames}
    assert bytes.fromhex(V.RXE_MAC.replace(":", "")) in macs and bytes.fromhex("020000000001") in macs
    assert "dma errors 0," in log, log


# Debian's rdma_cm tools and perftest over rdma_cm, each side serving in turn: (name, server,
# client: {address} is the server's), one over IPv6 (link-local, the guest's with its interface)
RNIC6, RXE6 = "fe80::ff:fe00:1", "fe80::ff:fe00:9"
CM_RUNS = [(f"rping {n}", f"rping -s -a {{address}} -v -C 3 -S {n}", f"rping -c -a {{address}} -v -C 3 -S {n}")
           for n in (64, 4000, 60000)] + [
    ("rping IPv6", "rping -s -a {address} -v -C 3 -S 64", "rping -c -a {address} -v -C 3 -S 64"),
    ("ucmatose", "ucmatose -b {address} -p 7471", "ucmatose -s {address} -p 7471"),
    ("udaddy", "udaddy -b {address}", "udaddy -s {address}"),
    ("ib_send_lat -R", "ib_send_lat -R -F -n 20 {dev}", "ib_send_lat -R -F -n 20 {dev} {address}"),
    ("ib_write_bw -R", "ib_write_bw -R -F -s 4096 -n 50 {dev}", "ib_write_bw -R -F -s 4096 -n 50 {dev} {address}")]
# a client that found no server yet (the other side still starting it)
NOT_YET = r"REJECTED|UNREACHABLE|ADDR_ERROR|Unable to perform rdma_client|Failed to connect|connect error|rdma_connect"


def cm_ok(name, out):
    """What each tool prints when it did its work."""
    if name.startswith("rping"):
        return len(re.findall(r"ping data: rdma-ping-\d", out)) == 3
    if name in ("ucmatose", "udaddy"):
        return "return status 0" in out
    return "#bytes" in out


def test_linux_rxe_peer_connection_manager(tmp_path):
    """The connection manager against Linux's (rdma_cm over rxe in a guest, on the simulator's
    UDP wire): Debian's rping at 64, 4,000 and 60,000 bytes and over IPv6, ucmatose, udaddy (SIDR)
    and perftest's ib_send_lat and ib_write_bw over rdma_cm (-R), each with rxe serving and with
    this NIC serving (the project's librdmacm.so.1). Every CM MAD of the capture has a good ICRC,
    and each REQ carries rdma_cm's header where Linux reads it (tshark: IP version, both
    addresses), with the path MTU a 1500-byte network allows (1024)."""
    nic_port, guest_port, fwd, go = (V.free_port() for _ in range(4))
    card = V.Card(tmp_path, "rnic0", 1, ["--eth-udp", f"{nic_port}:127.0.0.1:{guest_port}",
                                         "--pcap", str(tmp_path / "rnic0.pcap")], card_host=False)
    script = "while ! ip -6 addr show dev $roce | grep -q 'fe80.*scope link' || " \
             "ip -6 addr show dev $roce | grep -q tentative; do sleep 1; done\n"
    guest = lambda cmd, addr: cmd.format(address=addr, dev="-d rxe0")  # noqa: E731
    for name, server, client in CM_RUNS:
        v6 = "IPv6" in name
        script += f"echo '== {name} rxe-serves'\n{guest(server, (RXE6 + '%$roce') if v6 else V.RXE_IP)}\n"
        script += (f"echo '== {name} rnic-serves'\nuntil nc 10.0.2.2 {go} </dev/null; do sleep 0.2; done\n" +
                   V.until_connected(f"timeout -s KILL 60 {guest(client, (RNIC6 + '%$roce') if v6 else '10.0.0.1')}",
                                     tries=8, card=False))
    vm = V.rxe_vm(tmp_path, script, nic_port, guest_port, fwd)
    env = {**os.environ, "LD_LIBRARY_PATH": str(ROOT / "build" / "host-lib"), "RNIC_SIM_DIR": str(tmp_path)}
    ours = lambda cmd, addr: cmd.format(address=addr, dev="-d rnic0").split()  # noqa: E731
    for name, server, client in CM_RUNS:
        v6 = "IPv6" in name
        assert vm.wait_for(f"== {name} rxe-serves", 600), vm.console()[-3000:]
        for _ in range(30):
            r = subprocess.run(ours(client, RXE6 if v6 else V.RXE_IP), env=env, capture_output=True, text=True,
                               timeout=600)
            if r.returncode == 0 or not re.search(NOT_YET, r.stdout + r.stderr):
                break
            time.sleep(1)
        assert r.returncode == 0 and cm_ok(name, r.stdout), (name, "rxe serves", r.stdout[-2000:],
                                                            r.stderr[-2000:], vm.console()[-2000:])
        assert vm.wait_for(f"== {name} rnic-serves", 600), vm.console()[-3000:]
        listening = card.log.read_text().count("listens on service")
        srv = subprocess.Popen(ours(server, RNIC6 if v6 else "10.0.0.1"), env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while card.log.read_text().count("listens on service") == listening and srv.poll() is None \
                and time.time() < deadline:
            time.sleep(0.05)
        # only now the guest's client starts: Debian's perftest crashes on a REJ for a port nobody
        # listens on yet (its tries each bounded in time, should one still come too early)
        with socket.create_server(("127.0.0.1", go)) as s:
            s.settimeout(60)
            s.accept()[0].close()
        out, err = srv.communicate(timeout=600)
        assert srv.returncode == 0 and cm_ok(name, out), (name, "this NIC serves", out[-2000:], err[-2000:],
                                                          vm.console()[-2000:])
    assert vm.wait(300) is not None, vm.console()[-3000:]
    log = card.stop()
    clean(vm.console())
    assert "dma errors 0," in log, log
    pcap = tmp_path / "rnic0.pcap"
    mads = [f for f in R.roce_frames(pcap) if R.bth(f)[1] == 1]
    assert mads and all(R.icrc_ok(f) for f in mads)
    reqs = R.tshark_fields(pcap, ["eth.src", "infiniband.cm.req.pppmtu", "infiniband.cm.req.ip_cm.ipv",
                                  "infiniband.cm.req.ip_cm.sip4", "infiniband.cm.req.ip_cm.dip4",
                                  "infiniband.cm.req.ip_cm.sip6", "infiniband.cm.req.ip_cm.dip6"],
                           "infiniband.mad.attributeid == 0x0010")
    senders = {row[0] for row in reqs}
    assert senders == {V.RXE_MAC, "02:00:00:00:00:01"}, senders
    for row in reqs:
        assert int(row[1], 0) == 3, row
        assert (int(row[2], 0), set(row[3:5])) == (4, {"10.0.0.1", V.RXE_IP}) or \
            (int(row[2], 0), set(row[5:7])) == (6, {RNIC6, RXE6}), row

