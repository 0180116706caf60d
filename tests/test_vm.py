"""The real kernel driver in the full-system simulation (issue 17): Linux VMs (QEMU, Debian's 6.1
kernel) whose PCIe card is a simulated NIC (sim/qemu). rnic.ko probes it, the host library's pci
backend and Debian's tools use it, VM to VM over two simulated NICs on one link. Every guest
runs with slab and page poisoning and panics on a warning; any splat on a console fails."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "sim" / "qemu"))
import vm as V  # noqa: E402


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
