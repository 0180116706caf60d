"""The real kernel driver in the full-system simulation (issue 17): Linux VMs (QEMU, Debian's 6.1
kernel) whose PCIe card is a simulated NIC (sim/qemu). rnic.ko probes it, the host library's pci
backend and Debian's tools use it, VM to VM over two simulated NICs on one link. Every guest
runs with slab and page poisoning and panics on a warning; any splat on a console fails."""
import pathlib
import re
import sys

import pytest

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


def test_module_probes_the_card_and_ibv_devinfo_lists_it(tmp_path):
    """insmod probes the card (ICM handed over, context 0's command queue); Debian's ibv_devinfo,
    through the project's libibverbs.so.1 and its pci backend, lists rnic_pci0 with the NIC's
    limits; rmmod takes the context memory back."""
    card = V.Card(tmp_path, "rnic0", 5)
    vm = V.Vm("vm0", tmp_path, V.guest_setup(1) + "ibv_devinfo -v\nrmmod rnic\necho removed\n", card)
    assert vm.wait(600) is not None, "the guest did not power off"
    log = card.stop()
    console = vm.console()
    clean(console)
    assert re.search(r"rnic 0000:01:00.0: RNIC build \w+, interface \d+, 15 contexts", console), console
    assert re.search(r"hca_id:\s+rnic_pci0", console) and re.search(r"max_qp:\s+16384\b", console), console
    assert re.search(r"GID\[  0\]:\s+::ffff:10.0.0.5, RoCE v2", console), console
    assert "removed" in console
    assert "dma errors 0," in log and "the card's host left: power cycle" in log, log


def test_rc_pingpong_vm_to_vm(tmp_path):
    """Debian's ibv_rc_pingpong between two VMs, each through rnic.ko and its own simulated NIC."""
    server = V.guest_setup(1) + "ibv_rc_pingpong -d rnic_pci0 -g 0 -n 50\n"
    client = V.guest_setup(2) + V.until_connected(f"ibv_rc_pingpong -d rnic_pci0 -g 0 -n 50 {V.GUEST_NET}1")
    cards, vms = V.pair(tmp_path, [server, client])
    consoles, logs = V.finish(cards, vms, 900)
    for c in consoles:
        clean(c)
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
    in use, each refused with its errno; another user is refused the 0600 node, and once it is
    opened to all (the documented udev rule) is held to its RLIMIT_MEMLOCK."""
    card = V.Card(tmp_path, "rnic0", 5)
    vm = V.Vm("vm0", tmp_path, V.guest_setup(1) + "rnic-kmod-ioctls\n", card)
    assert vm.wait(600) is not None, "the guest did not power off"
    log = card.stop()
    console = vm.console()
    clean(console)
    assert "PASS: 0 failed" in console and "FAIL" not in console, console[-4000:]
    assert len(re.findall(r"^ok ", console, flags=re.M)) >= 25, console[-4000:]
    assert "dma errors 0," in log, log


def test_processes_killed_mid_transfer_free_their_contexts(tmp_path):
    """ib_write_bw server and client on one card (two contexts, the NIC's loopback), both killed
    with SIGKILL mid-transfer: their contexts are reset and freed (all 15 open again at once, a
    16th is refused), no warning, and the module unloads."""
    script = V.guest_setup(1) + (
        "ib_write_bw -d rnic_pci0 -x 0 -F -n 100000 -s 65536 > /tmp/s.log 2>&1 &\n"
        "sleep 3\n"
        "ib_write_bw -d rnic_pci0 -x 0 -F -n 100000 -s 65536 127.0.0.1 > /tmp/c.log 2>&1 &\n"
        "sleep 30\n"
        "kill -9 $(pidof ib_write_bw)\n"
        "wait || true\n"
        "rnic-stat | grep TX_WQES\n"
        "rnic-kmod-ioctls contexts\n"
        "rmmod rnic\n"
        "echo rnic-test: module removed\n")
    card = V.Card(tmp_path, "rnic0", 5)
    vm = V.Vm("vm0", tmp_path, script, card)
    assert vm.wait(600) is not None, "the guest did not power off"
    log = card.stop()
    console = vm.console()
    clean(console)
    assert "ok   contexts opened at once: 15 of 15" in console and "rnic-test: module removed" in console, console[-4000:]
    assert "reset not confirmed" not in console
    wqes = int(re.search(r"^TX_WQES: (\d+)", console, flags=re.M).group(1))
    assert wqes > 1000, console[-4000:]  # the WRITEs were under way when the processes died
    assert "dma errors 0," in log, log
