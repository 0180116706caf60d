"""The card's top in simulation: rnic-card-sim runs the card's own RTL around the NIC
(bitstreams/common/rnic_card.sv: the AXI4 DMA master, the bridge's user interrupts, the frame FIFOs
across to the MAC's clock) with models of the vendor IP written from their guides: the XDMA
bridge's AXI ports at 250 MHz and the CMAC's AXI4-Stream ports at 322.265625 MHz, a non-integer
ratio (sim/card_models.h). The model fails a transmitted frame whose tvalid drops before tlast, a
tkeep with holes and a frame under 60 bytes, and counts them in its log. The same programs as the
system simulation drive it: Debian's ibv_rc_pingpong, rc_ops' goodput run, frames from scapy."""
import os
import pathlib
import re
import socket
import subprocess
import sys
import time

import pytest
from scapy.compat import raw
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

import roce_check as R
from link_client import LinkClient, S
from roce_layers import RETH

ROOT = pathlib.Path(__file__).resolve().parent.parent
CARD_SIM = ROOT / "build" / "sim" / "card" / "rnic-card-sim"
sys.path.insert(0, str(ROOT / "sim"))
import interop  # noqa: E402
import run_demo  # noqa: E402
import transport  # noqa: E402

NIC_MAC, NIC_IP = "02:00:00:00:00:41", "10.0.0.41"
PEER_MAC, PEER_IP = "02:00:00:00:00:99", "10.0.0.99"
CMAC_CLEAN = re.compile(r"cmac \d+ clocks \(322.27 MHz\), tx underflows 0, bad tkeep 0, short frames 0;")


@pytest.fixture
def card_env(monkeypatch):
    """run_demo's simulators are the card's; the card's host library rings doorbells only"""
    assert CARD_SIM.exists(), "build/sim/card/rnic-card-sim is not built (make all)"
    monkeypatch.setattr(run_demo, "SIM", CARD_SIM)
    monkeypatch.setenv("RNIC_PUSH", "0")


def cmac_clean(out):
    for name, _, _ in run_demo.NICS:
        log = (out / f"{name}.log").read_text()
        assert CMAC_CLEAN.search(log) and "dma errors 0," in log, log[-2000:]


def test_rc_pingpong_through_the_card_rtl(tmp_path, card_env):
    procs = run_demo.start_sims(tmp_path)
    env = dict(os.environ, RNIC_SIM_DIR=str(tmp_path / "sock"), LD_LIBRARY_PATH=str(ROOT / "build" / "host-lib"))
    port = str(free_port(socket.SOCK_STREAM))
    srv = None
    try:
        srv = subprocess.Popen(["ibv_rc_pingpong", "-d", "rnic0", "-g", "0", "-n", "100", "-p", port], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        interop.wait_listening(int(port), srv, 120)  # the client connects once, on a loaded host too
        cli = subprocess.run(["ibv_rc_pingpong", "-d", "rnic1", "-g", "0", "-n", "100", "-p", port, "localhost"],
                             env=env, capture_output=True, text=True, timeout=300)
        out, _ = srv.communicate(timeout=60)
    finally:
        if srv and srv.poll() is None:
            srv.kill()
        run_demo.stop_sims(procs)
    assert cli.returncode == 0 and srv.returncode == 0, cli.stdout + cli.stderr + out
    assert "100 iters in" in cli.stdout and "100 iters in" in out
    cmac_clean(tmp_path)


def test_line_rate_both_ways_across_the_clock_crossing(tmp_path, card_env):
    """1 MiB WRITEs (data from rnic0 to rnic1) and READs (data back) at MTU 4096, goodput in
    simulated time: the link's limit is 97.66 Gb/s, and the frame FIFOs must not cost any of it"""
    rc, out, stats, _ = transport.session(tmp_path, ["--mtu", "4096", "bench"])
    assert rc == 0, out
    rates = {m.group(1): float(m.group(2)) for m in re.finditer(r"^\s*(write|read|send)\s+1048576\s+4096\s+([\d.]+)",
                                                                 out, re.M)}
    assert set(rates) == {"write", "read", "send"}, out
    assert all(r >= 97.0 for r in rates.values()), rates
    for name, c in stats.items():
        assert c["PORT_RX_DROP_FULL"] == 0 and c["PORT_RX_DROP_BAD"] == 0 and c["TX_RETRANSMITS"] == 0, (name, c)
    cmac_clean(tmp_path)


def roce_frame(i):
    """a WRITE ONLY of 4 KiB to a QP that does not exist: the NIC takes it whole and drops it by QPN"""
    pkt = (Ether(src=PEER_MAC, dst=NIC_MAC) / IP(src=PEER_IP, dst=NIC_IP, flags="DF", ttl=64) /
           UDP(sport=0xC000 + i % 256, dport=4791, chksum=0) /
           BTH(opcode=0x0A, dqpn=0x77, psn=i, ackreq=1, pkey=0xFFFF) /
           RETH(va=0x1000, rkey=0x1234, dlen=4096) / (bytes([i % 251]) * 4096))
    frame = raw(pkt)
    assert R.icrc_ok(frame)
    return frame


def free_port(kind):
    """a free port on loopback, of kind socket.SOCK_STREAM or socket.SOCK_DGRAM"""
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.mark.parametrize("gbps", [100, 400])
def test_receive_fifo_drops_whole_frames_and_counts_them(tmp_path, gbps):
    """Bursts of 4 KiB RoCE frames from a peer on the UDP backend. At 100 Gb/s the CMAC delivers
    each frame's beats back to back at 322 MHz, faster than the NIC's 250 MHz takes them, and the
    receive FIFO absorbs it: every frame arrives. At 400 Gb/s (more than the NIC's datapath, 128
    Gb/s) the FIFO fills: frames are dropped whole and counted, and each one that got in is whole
    (none malformed, none with a bad ICRC). An ARP request is answered with a 42-byte reply that
    leaves the card padded to 60 bytes."""
    assert CARD_SIM.exists(), "build/sim/card/rnic-card-sim is not built (make all)"
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer.bind(("127.0.0.1", 0))
    peer.settimeout(60)
    nic_port = free_port(socket.SOCK_DGRAM)
    sim = subprocess.Popen([str(CARD_SIM), "--name", "rnic9", "--mac", NIC_MAC, "--ip", NIC_IP, "--sock-dir",
                            str(tmp_path), "--link-gbps", str(gbps),
                            "--eth-udp", f"{nic_port}:127.0.0.1:{peer.getsockname()[1]}"],
                           stdout=open(tmp_path / "sim.log", "w"), stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 60
        while not (tmp_path / "rnic9.sock").exists():
            assert sim.poll() is None and time.time() < deadline, (tmp_path / "sim.log").read_text()
            time.sleep(0.05)
        link = LinkClient(tmp_path / "rnic9.sock")
        while not link.read32(S.ID["FW_STATUS"][0]) & 1:  # READY: its port known to the datapath
            assert time.time() < deadline, "firmware not ready"
            time.sleep(0.05)
        frames = [roce_frame(i) for i in range(64)]
        sent = 0
        for _ in range(4):
            for f in frames:
                peer.sendto(f, ("127.0.0.1", nic_port))
            sent += len(frames)
            deadline = time.time() + 120
            while link.stat("RX_FRAMES") + link.stat("PORT_RX_DROP_FULL") < sent:
                assert time.time() < deadline, link.counters()
                time.sleep(0.2)
        c = link.counters()
        link.close()
        arp = Ether(dst="ff:ff:ff:ff:ff:ff", src=PEER_MAC) / ARP(op=1, hwsrc=PEER_MAC, psrc=PEER_IP, pdst=NIC_IP)
        peer.sendto(raw(arp), ("127.0.0.1", nic_port))
        while True:
            reply = peer.recv(65536)
            if ARP in Ether(reply):
                break
    finally:
        sim.terminate()
        sim.wait(timeout=30)
    log = (tmp_path / "sim.log").read_text()
    assert c["RX_FRAMES"] + c["PORT_RX_DROP_FULL"] == sent, c
    assert c["RX_DROP_QPN"] == c["RX_FRAMES"] and c["RX_DROP_MALFORMED"] == 0 and c["RX_DROP_ICRC"] == 0, c
    assert c["PORT_RX_DROP_BAD"] == 0, c
    if gbps == 100:
        assert c["PORT_RX_DROP_FULL"] == 0, c
    else:
        assert 0 < c["PORT_RX_DROP_FULL"] < sent, c
    a = Ether(reply)
    assert a[ARP].op == 2 and a[ARP].psrc == NIC_IP and a[ARP].pdst == PEER_IP, a.show(dump=True)
    assert len(reply) == 60 and reply[42:] == bytes(18), reply.hex()
    assert CMAC_CLEAN.search(log), log
