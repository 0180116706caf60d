"""Malformed frames injected into a simulated NIC's receive path through rnic-sim's UDP backend
(the QEMU `-netdev dgram` format). The test plays the remote peer with scapy: bad ICRC, bad QPN,
bad rkey, a key without remote write access, an out-of-bounds address and a PSN gap are dropped or
NAKed, counted, and write nothing; a valid WRITE in between lands."""
import os
import pathlib
import queue
import signal
import socket
import struct
import subprocess
import threading
import time

import pytest
from scapy.compat import raw
from scapy.contrib.roce import AETH, BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

import roce_check as R
from link_client import LinkClient, S
from roce_layers import RETH

ROOT = pathlib.Path(__file__).resolve().parent.parent
SIM = ROOT / "build" / "sim" / "rnic-sim"
TARGET = ROOT / "build" / "tests" / "inject_target"
NIC_MAC, NIC_IP = "02:00:00:00:00:31", "10.0.0.31"
PEER_MAC, PEER_IP, PEER_QPN = "02:00:00:00:00:99", "10.0.0.99", 0x123


class Peer:
    """The remote end of the wire: a UDP socket that answers ARP and collects RoCE frames."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.frames = queue.Queue()
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            pkt = Ether(data)
            if ARP in pkt and pkt[ARP].op == 1 and pkt[ARP].pdst == PEER_IP:
                reply = Ether(dst=pkt.src, src=PEER_MAC) / ARP(
                    op=2, hwsrc=PEER_MAC, psrc=PEER_IP, hwdst=pkt[ARP].hwsrc, pdst=pkt[ARP].psrc)
                self.send(raw(reply))
            elif R.is_roce_v4(data):
                self.frames.put(data)

    def send(self, frame):
        self.sock.sendto(frame, ("127.0.0.1", self.nic_port))

    def expect(self, timeout=20.0):
        try:
            return self.frames.get(timeout=timeout)
        except queue.Empty:
            return None

    def quiet(self, wait=3.0):
        """True if the NIC sends nothing for `wait` seconds."""
        return self.expect(timeout=wait) is None


def write_only(qpn, psn, va, rkey, payload, corrupt_icrc=False):
    pkt = (Ether(src=PEER_MAC, dst=NIC_MAC) / IP(src=PEER_IP, dst=NIC_IP, flags="DF", ttl=64) /
           UDP(sport=0xC123, dport=4791, chksum=0) /
           BTH(opcode=0x0A, dqpn=qpn, psn=psn, ackreq=1, pkey=0xFFFF) /
           RETH(va=va, rkey=rkey, dlen=len(payload)) / payload)
    frame = bytearray(raw(pkt))
    assert R.icrc_ok(bytes(frame))
    if corrupt_icrc:
        frame[-1] ^= 0x01
    return bytes(frame)


@pytest.fixture(scope="module")
def nic(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inject")
    peer = Peer()
    peer.nic_port = _free_udp_port()
    sim = subprocess.Popen([str(SIM), "--name", "rnic9", "--mac", NIC_MAC, "--ip", NIC_IP,
                            "--sock-dir", str(tmp), "--pcap", str(tmp / "inject.pcap"),
                            "--eth-udp", f"{peer.nic_port}:127.0.0.1:{peer.port}"],
                           stdout=open(tmp / "sim.log", "w"), stderr=subprocess.STDOUT)
    target = None
    try:
        deadline = time.time() + 60
        while not (tmp / "rnic9.sock").exists():
            assert sim.poll() is None and time.time() < deadline, (tmp / "sim.log").read_text()
            time.sleep(0.05)
        env = dict(os.environ, RNIC_SIM_DIR=str(tmp))
        target = subprocess.Popen([str(TARGET), "rnic9", PEER_IP, str(PEER_QPN)], env=env, text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ready = target.stdout.readline()
        assert ready.startswith("READY"), ready + (tmp / "sim.log").read_text()
        info = {k: int(v) for k, v in (kv.split("=") for kv in ready.split()[1:])}
        link = LinkClient(tmp / "rnic9.sock")
        yield {"peer": peer, "info": info, "target": target, "link": link, "tmp": tmp, "sim": sim}
        link.close()
        if target.poll() is None:
            target.stdin.write("quit\n")
            target.stdin.close()
            target.wait(timeout=30)
    finally:
        if target and target.poll() is None:
            target.kill()
        sim.send_signal(signal.SIGTERM)
        sim.wait(timeout=30)
        peer.stop = True


def _free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def changed(nic):
    t = nic["target"]
    t.stdin.write("check\n")
    t.stdin.flush()
    ranges = []
    for line in iter(t.stdout.readline, ""):
        if line.startswith("DONE"):
            return ranges
        _, a, b = line.split()
        ranges.append((int(a), int(b)))
    raise AssertionError("inject_target died")


def aeth_syndrome(frame):
    return raw(Ether(frame)[AETH])[0]


@pytest.fixture(scope="module")
def valid_write(nic):
    """A well-formed WRITE lands and is ACKed: proof that the set-up reaches the responder."""
    i, peer = nic["info"], nic["peer"]
    payload = bytes(range(64))
    peer.send(write_only(i["qpn"], i["rq_psn"], i["addr"] + 128, i["rkey"], payload))
    ack = peer.expect()
    assert ack is not None and R.icrc_ok(ack)
    op, qpn, psn, _ = R.bth(ack)
    assert (op, qpn, psn) == (0x11, PEER_QPN, i["rq_psn"]) and aeth_syndrome(ack) == 0x1F
    off = i["addr"] - i["buf"] + 128
    assert changed(nic) == [(off, off + 64)]
    return i["rq_psn"] + 1


CASES = {
    # name: (frame builder, expected NAK syndrome or None for a silent drop, counter)
    "bad_icrc": (lambda i, psn: write_only(i["qpn"], psn, i["addr"], i["rkey"], b"x" * 64, corrupt_icrc=True),
                 None, "RX_DROP_ICRC"),
    "bad_qpn": (lambda i, psn: write_only(0x77, psn, i["addr"], i["rkey"], b"x" * 64), None, "RX_DROP_QPN"),
    # the QP's table entry alone, without QPN_BASE, is no QP's number
    "qp_entry": (lambda i, psn: write_only(i["qpn"] ^ S.QPN_BASE, psn, i["addr"], i["rkey"], b"x" * 64), None,
                 "RX_DROP_QPN"),
    "bad_rkey": (lambda i, psn: write_only(i["qpn"], psn, i["addr"], i["rkey"] ^ 0x100, b"x" * 64),
                 0x62, "RX_NAK_ACCESS"),
    "no_remote_write": (lambda i, psn: write_only(i["qpn"], psn, i["addr_ro"], i["rkey_ro"], b"x" * 64),
                        0x62, "RX_NAK_ACCESS"),
    "out_of_bounds": (lambda i, psn: write_only(i["qpn"], psn, i["addr"] + i["len"] - 32, i["rkey"], b"x" * 64),
                      0x62, "RX_NAK_ACCESS"),
    "psn_gap": (lambda i, psn: write_only(i["qpn"], psn + 5, i["addr"], i["rkey"], b"x" * 64),
                0x60, "RX_NAK_PSN"),
}


def reconnect(nic):
    """The QP back through RESET to RTS: after a fatal NAK the responder accepts nothing more
    (IBTA 9.9.3.1.2), so every case starts from a fresh connection at the first RQ PSN."""
    t = nic["target"]
    t.stdin.write("reconnect\n")
    t.stdin.flush()
    assert t.stdout.readline().startswith("DONE")
    return nic["info"]["rq_psn"]


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_frame_writes_nothing(nic, valid_write, case):
    build, syndrome, counter = CASES[case]
    i, peer, link = nic["info"], nic["peer"], nic["link"]
    psn = reconnect(nic)
    before = link.stat(counter)
    expected_changes = changed(nic)
    peer.send(build(i, psn))
    if syndrome is None:
        assert peer.quiet()
    else:
        nak = peer.expect()
        assert nak is not None and R.icrc_ok(nak)
        assert R.bth(nak)[0] == 0x11 and aeth_syndrome(nak) == syndrome
        assert R.bth(nak)[2] == psn  # a NAK carries the expected PSN
    deadline = time.time() + 10
    while link.stat(counter) == before and time.time() < deadline:
        time.sleep(0.1)
    assert link.stat(counter) == before + 1
    assert changed(nic) == expected_changes


def test_burst_arrives_at_the_line_rate(nic, valid_write):
    """2500 back-to-back 1 KiB WRITEs waiting at once in the UDP backend's socket (sent while the
    simulator is stopped): it delivers them one after the other as a 100 GbE wire would, so none
    is lost to the receive store overflowing (delivered unpaced, a thousand were); all are placed
    and ACKed."""
    i, peer, link = nic["info"], nic["peer"], nic["link"]
    psn = reconnect(nic)
    stats = ("RX_DROP_OVERFLOW", "RX_ROCE", "RX_WRITE_BYTES", "TX_ACKS")
    before = {c: link.stat(c) for c in stats}
    n, size = 2500, 1024  # 2.7 MB: more than the receive store holds while PCIe writes it out
    frames = [write_only(i["qpn"], psn + k, i["addr"] + (k % 8) * 1024, i["rkey"], bytes([k % 256]) * size)
              for k in range(n)]
    nic["sim"].send_signal(signal.SIGSTOP)
    try:
        for f in frames:
            peer.send(f)
    finally:
        nic["sim"].send_signal(signal.SIGCONT)
    deadline = time.time() + 60
    while link.stat("TX_ACKS") < before["TX_ACKS"] + n and time.time() < deadline:
        time.sleep(0.2)
    after = {c: link.stat(c) - before[c] for c in stats}
    assert after == {"RX_DROP_OVERFLOW": 0, "RX_ROCE": n, "RX_WRITE_BYTES": n * size, "TX_ACKS": n}


def test_cm_request_reaches_the_firmware_and_is_rejected(nic):
    """A CM REQ to QP1 (rping's, addressed to this NIC): the RX kernel hands it to the firmware
    (counted RX_TO_FW), which answers on the wire with a REJ "invalid service ID" (nobody listens
    on port 7174), built with a good ICRC; a REQ to QP1 with a bad ICRC is dropped before."""
    peer, link = nic["peer"], nic["link"]
    req = next(f for f in R.roce_frames(R.RXE_DIR / "rping.pcap") if R.bth(f)[1] == 1)
    pkt = Ether(req)
    pkt[Ether].src, pkt[Ether].dst = PEER_MAC, NIC_MAC
    pkt[IP].src, pkt[IP].dst = PEER_IP, NIC_IP
    del pkt[IP].chksum
    frame = bytearray(raw(pkt))
    struct.pack_into("<I", frame, len(frame) - 4, R.icrc(bytes(frame)))
    before = link.stat("RX_TO_FW"), link.stat("RX_DROP_ICRC")
    bad = bytearray(frame)
    bad[-1] ^= 1
    peer.send(bytes(bad))
    peer.send(bytes(frame))
    rej = None
    deadline = time.time() + 20
    while rej is None and time.time() < deadline:
        f = peer.expect(timeout=1)
        if f is not None and R.bth(f)[:2] == (0x64, 1):
            rej = f
    assert rej is not None and R.icrc_ok(rej)
    m = 14 + 20 + 8 + 12 + 8
    assert rej[m + 16:m + 18] == b"\x00\x12" and rej[m + 8:m + 16] == frame[m + 8:m + 16]
    assert struct.unpack_from(">H", rej, m + 24 + 10)[0] == 8
    assert rej[m + 24 + 4:m + 24 + 8] == frame[m + 24:m + 24 + 4]  # to the REQ's communication ID
    assert (link.stat("RX_TO_FW"), link.stat("RX_DROP_ICRC")) == (before[0] + 1, before[1] + 1)
    assert peer.quiet(1.0)


def read_only(qpn, psn, va, rkey, length):
    pkt = (Ether(src=PEER_MAC, dst=NIC_MAC) / IP(src=PEER_IP, dst=NIC_IP, flags="DF", ttl=64) /
           UDP(sport=0xC123, dport=4791, chksum=0) /
           BTH(opcode=0x0C, dqpn=qpn, psn=psn, ackreq=1, pkey=0xFFFF) / RETH(va=va, rkey=rkey, dlen=length))
    return bytes(raw(pkt))


def test_hot_reset_forgets_the_old_qps_and_keys(nic, valid_write):
    """Last in this module: it takes the NIC's QP away. A hot reset (a PCIe secondary bus reset:
    SIGUSR1 to rnic-sim) of a NIC with a live QP leaves the kernels' block RAMs as they were; each
    kernel clears its tables by a sweep, and the firmware says READY only after its first fence,
    which the kernels pass once swept. Frames for the stale QPN and rkey then get nothing: a WRITE
    is not placed, a READ not answered, neither ACKed nor NAKed, both dropped and counted. The
    process that had the QP gets EIO from its next command."""
    i, peer, link = nic["info"], nic["peer"], nic["link"]
    fw_status = S.ID["_BASE"][0] + S.ID["FW_STATUS"][0]
    ready = 1 << S.ID["FW_STATUS"][1]["READY"][0]
    psn = reconnect(nic)
    expected_changes = changed(nic)
    nic["sim"].send_signal(signal.SIGUSR1)
    time.sleep(0.5)
    deadline = time.time() + 60
    while link.read32(fw_status) & ready == 0:
        assert time.time() < deadline, (nic["tmp"] / "sim.log").read_text()[-2000:]
        time.sleep(0.1)
    assert link.read32(fw_status) == ready and "hot reset" in (nic["tmp"] / "sim.log").read_text()
    before = {c: link.stat(c) for c in ("RX_ROCE", "RX_DROP_QPN", "TX_FRAMES")}
    peer.send(write_only(i["qpn"], psn, i["addr"] + 128, i["rkey"], b"y" * 64))
    peer.send(read_only(i["qpn"], psn + 1, i["addr"], i["rkey"], 256))
    f = peer.expect(3.0)
    assert f is None, R.bth(f)
    after = {c: link.stat(c) - before[c] for c in before}
    assert after == {"RX_ROCE": 2, "RX_DROP_QPN": 2, "TX_FRAMES": 0}
    assert changed(nic) == expected_changes
    # the target's context went with the reset: its next command fails with EIO, it does not
    # wait for an answer that cannot come
    t = nic["target"]
    t.stdin.write("reconnect\n")
    t.stdin.flush()
    assert t.wait(timeout=120) == 1
    assert "modify RESET: Input/output error" in t.stderr.read()
