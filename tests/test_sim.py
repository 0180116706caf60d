"""rnic-sim as a component: argument checking, the host link (contexts, permissions), several
applications on one NIC with one of them dying, and the UDP Ethernet backend."""
import os
import pathlib
import re
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest
from scapy.compat import raw
from scapy.layers.inet6 import ICMPv6ND_RA, IPv6
from scapy.layers.l2 import ARP, Ether

import roce_check as R
import link_client
from link_client import LinkClient, S

ROOT = pathlib.Path(__file__).resolve().parent.parent
SIM = ROOT / "build" / "sim" / "rnic-sim"
DEMO = ROOT / "build" / "demo" / "rnic-demo"
TARGET = ROOT / "build" / "tests" / "inject_target"
sys.path.insert(0, str(ROOT / "sim"))
import run_demo  # noqa: E402


def start_sim(tmp, name="rnic0", extra=()):
    log = open(tmp / f"{name}.log", "w")
    p = subprocess.Popen([str(SIM), "--name", name, "--mac", "02:00:00:00:00:05", "--ip", "10.0.0.5",
                          "--sock-dir", str(tmp), *extra], stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while not (tmp / f"{name}.sock").exists():
        assert p.poll() is None and time.time() < deadline, (tmp / f"{name}.log").read_text()
        time.sleep(0.05)
    return p


def stop(p):
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=30)


@pytest.mark.parametrize("args,msg", [
    ([], "--name, --mac and --ip are required"),
    (["--name", "x", "--mac", "zz", "--ip", "10.0.0.1"], "bad --mac"),
    (["--name", "x", "--mac", "02:00:00:00:00:01", "--ip", "10.0.0.300"], "bad --ip"),
    (["--name", "x", "--mac", "02:00:00:00:00:01", "--ip", "10.0.0.1", "--drop", "2"], "probability"),
    (["--name", "x", "--mac", "02:00:00:00:00:01", "--ip", "10.0.0.1", "--bogus", "1"], "unknown option"),
])
def test_bad_arguments_are_refused(args, msg):
    r = subprocess.run([str(SIM), *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and msg in r.stderr


def test_socket_directory_writable_by_others_is_refused(tmp_path):
    """Another user could have made the directory, or could put a socket of theirs in it: the
    simulator does not listen there."""
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)
    r = subprocess.run([str(SIM), "--name", "x", "--mac", "02:00:00:00:00:01", "--ip", "10.0.0.1",
                        "--sock-dir", str(d)], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "writable by others" in r.stderr, r.stderr
    assert not (d / "x.sock").exists()


def test_host_link_contexts_and_permissions(tmp_path):
    sim = start_sim(tmp_path)
    try:
        a, b = LinkClient(tmp_path / "rnic0.sock"), LinkClient(tmp_path / "rnic0.sock")
        assert a.ctx != b.ctx
        page_a = S.BAR0_CMDQ_BASE + a.ctx * S.BAR0_CTX_STRIDE
        page_b = S.BAR0_CMDQ_BASE + b.ctx * S.BAR0_CTX_STRIDE
        a.write32(page_a + S.CTX["CMDQ_BASE_LO"][0], 0x1000)
        b.write32(page_a + S.CTX["CMDQ_BASE_LO"][0], 0x2000)  # not b's page: ignored
        assert a.read32(page_a + S.CTX["CMDQ_BASE_LO"][0]) == 0x1000
        assert b.read32(page_a + S.CTX["CMDQ_BASE_LO"][0]) == 0  # nor readable by b
        assert b.read32(page_b + S.CTX["CMDQ_BASE_LO"][0]) == 0
        assert a.read32(S.ID["VENDOR_DEVICE"][0]) == S.VENDOR_ID | (S.DEVICE_ID << 16)
        assert a.read32(S.STATS["COUNT"][0]) == len(S.STAT)  # every counter the spec names
        a.close()
        b.close()
    finally:
        stop(sim)


def test_host_link_version_is_checked(tmp_path):
    """A host process of another link version is refused at HELLO (STATUS 1, closed); one of this
    version still gets a context."""
    sim = start_sim(tmp_path)
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(str(tmp_path / "rnic0.sock"))
        s.sendall(link_client.HDR.pack(S.LINK_MSG["HELLO"], 0, 0, S.LINK_VERSION + 1, 0, 0))
        t, _, _, _, _, status = link_client.HDR.unpack(s.recv(link_client.HDR.size, socket.MSG_WAITALL))
        assert t == S.LINK_MSG["HELLO_ACK"] and status == 1
        assert s.recv(1) == b""
        s.close()
        LinkClient(tmp_path / "rnic0.sock").close()
    finally:
        stop(sim)


def test_ethernet_link_version_is_checked(tmp_path):
    """Two simulators on one link exchange HELLOs first (struct ETH_LINK_HDR): one that meets a
    peer of another link version stops, saying so."""
    hdr = struct.Struct("<IIQ")
    assert hdr.size == S.ETH_LINK_HDR[0]
    path = tmp_path / "link"
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(str(path))
    ls.listen(1)
    ls.settimeout(60)
    log = open(tmp_path / "sim.log", "w")
    p = subprocess.Popen([str(SIM), "--name", "rnic0", "--mac", "02:00:00:00:00:05", "--ip", "10.0.0.5",
                          "--sock-dir", str(tmp_path), "--eth-connect", str(path)], stdout=log,
                         stderr=subprocess.STDOUT)
    try:
        c, _ = ls.accept()
        c.settimeout(30)
        t, n, version = hdr.unpack(c.recv(hdr.size, socket.MSG_WAITALL))
        assert (t, n, version) == (S.ETH_LINK_MSG["HELLO"], 0, S.ETH_LINK_VERSION)
        c.sendall(hdr.pack(S.ETH_LINK_MSG["HELLO"], 0, S.ETH_LINK_VERSION + 1))
        assert p.wait(timeout=60) != 0
        assert "speaks another link" in (tmp_path / "sim.log").read_text()
    finally:
        if p.poll() is None:
            p.kill()
        ls.close()


def test_posted_writes_through_the_shared_ring(tmp_path):
    """MMIO writes posted through the shared-memory ring land in order, several passes round the
    ring, and neither a read nor a write sent as a message passes them (PCIe ordering)."""
    sim = start_sim(tmp_path)
    try:
        a = LinkClient(tmp_path / "rnic0.sock", ring=True)
        reg = S.BAR0_CMDQ_BASE + a.ctx * S.BAR0_CTX_STRIDE + S.CTX["CMDQ_BASE_LO"][0]
        n = 3 << S.LINK_RING_LOG
        for i in range(1, n + 1):
            a.write32(reg, i << 12)
            if i % 97 == 0:
                assert a.read32(reg) == i << 12
        assert a.read32(reg) == n << 12
        a.write32(reg, 0x5000)
        a._send(S.LINK_MSG["MMIO_WR"], addr=reg, value=0x6000)
        assert a.read32(reg) == 0x6000
        a.close()
    finally:
        stop(sim)


def test_host_fast_path_writes(tmp_path):
    """The program make bench counts instructions with: 8-byte WRITEs inline and through an SGE,
    each completion polled and its data checked; with their WQEs pushed (the NIC takes every one
    as pushed: one at a time, nothing is being fetched), then with doorbells only (RNIC_PUSH=0)."""
    procs = run_demo.start_sims(tmp_path)
    pushed = []
    try:
        for push in ("1", "0"):
            env = dict(os.environ, RNIC_SIM_DIR=str(tmp_path / "sock"), RNIC_PUSH=push)
            for mode in ("inline", "sge"):
                p = subprocess.run([str(ROOT / "build" / "tests" / "hostpath"), "50", "rnic0", mode], env=env,
                                   capture_output=True, text=True, timeout=300)
                assert p.returncode == 0 and "hostpath: 50 writes ok" in p.stdout, p.stdout + p.stderr
            c = LinkClient(tmp_path / "sock" / "rnic0.sock")
            pushed.append(c.stat("TX_PUSHED"))
            c.close()
    finally:
        run_demo.stop_sims(procs)
    assert pushed == [100, 100], pushed


def test_one_application_dying_leaves_the_others_running(tmp_path):
    """A process holding a PD, MRs, a CQ and a connected QP on rnic0 is killed while the demo
    runs on the same NIC: the firmware frees exactly that context's resources and the demo
    passes."""
    procs = run_demo.start_sims(tmp_path)
    env = dict(os.environ, RNIC_SIM_DIR=str(tmp_path / "sock"))
    try:
        holder = subprocess.Popen([str(TARGET), "rnic0", "10.0.0.2", "0x123"], env=env, text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert holder.stdout.readline().startswith("READY")
        demo = subprocess.Popen([str(DEMO), "rnic0", "rnic1"], env=env, text=True, stdout=subprocess.PIPE)
        time.sleep(1)
        holder.kill()
        holder.wait()
        out, _ = demo.communicate(timeout=600)
        assert demo.returncode == 0 and "demo: PASS" in out, out
    finally:
        run_demo.stop_sims(procs)
    log = (tmp_path / "rnic0.log").read_text()
    assert "ctx 0 reset: 5 resources freed" in log, log  # QP, 2 MRs, CQ, PD


def test_udp_backend_arp(tmp_path):
    """ARP over the UDP backend, answered with a frame padded to the Ethernet minimum."""
    peer = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    peer.bind(("127.0.0.1", 0))
    peer.settimeout(30)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    nic_port = s.getsockname()[1]
    s.close()
    sim = start_sim(tmp_path, extra=["--eth-udp", f"{nic_port}:127.0.0.1:{peer.getsockname()[1]}",
                                     "--pcap", str(tmp_path / "udp.pcap")])
    try:
        c = LinkClient(tmp_path / "rnic0.sock")
        while not c.read32(S.ID["FW_STATUS"][0]) & 1:
            time.sleep(0.1)
        c.close()
        req = Ether(dst="ff:ff:ff:ff:ff:ff", src="02:00:00:00:00:66") / ARP(
            op=1, hwsrc="02:00:00:00:00:66", psrc="10.0.0.66", pdst="10.0.0.5")
        # the request behind three IPv6 multicast frames, all waiting at once (the simulator is
        # stopped while they are sent): the firmware's receive ring holds them all
        junk = Ether(dst="33:33:00:00:00:01", src="02:00:00:00:00:66") / IPv6(dst="ff02::1") / ICMPv6ND_RA()
        sim.send_signal(signal.SIGSTOP)
        for frame in (junk, junk, junk, req):
            peer.sendto(raw(frame), ("127.0.0.1", nic_port))
        sim.send_signal(signal.SIGCONT)
        data = peer.recv(2048)
        reply = Ether(data)
        assert reply[ARP].op == 2 and reply[ARP].psrc == "10.0.0.5" and reply[ARP].hwsrc == "02:00:00:00:00:05"
        assert len(data) == 60 and not any(data[42:]), "an ARP reply is padded with zeros to 60 bytes"
    finally:
        stop(sim)
    out = subprocess.run(["tshark", "-r", str(tmp_path / "udp.pcap")], capture_output=True, text=True).stdout
    assert "Who has 10.0.0.5" in out and "10.0.0.5 is at 02:00:00:00:00:05" in out


def test_duplicates_and_delay_on_the_link(tmp_path):
    """Duplicated and delayed frames on both directions: duplicate WRITE packets are recognised by
    their PSN and not written twice, duplicate ACKs are harmless; the demo's data checks pass."""
    rc, text, rates, cap, _ = run_demo.run(tmp_path, extra=["--dup", "0.05", "--delay-ns", "300", "--seed", "7"])
    assert rc == 0 and "demo: PASS" in text, text
    logs = [(tmp_path / f"rnic{i}.log").read_text() for i in (0, 1)]
    dups = [int(re.search(r"duplicated (\d+)", log).group(1)) for log in logs]
    assert all(d > 0 for d in dups), logs
    assert cap["bad_icrc"] == 0


def test_lossy_link_go_back_n(tmp_path):
    """1% of the frames dropped in both directions: PSN-sequence NAKs and the ACK timer make the
    requester go back N; every byte still lands exactly once and every WRITE completes."""
    rc, text, rates, cap, _ = run_demo.run(tmp_path, extra=["--drop", "0.01", "--seed", "11"],
                                           demo_args=["--ack-timeout", "6"])
    assert rc == 0 and "demo: PASS" in text, text
    assert cap["bad_icrc"] == 0
    naks = [f for f in R.roce_frames(cap["path"], v6=False) if R.bth(f)[0] == 0x11 and f[54] == 0x60]
    assert naks, "no sequence NAK: nothing was lost?"


OPEN_CLOSE = ROOT / "build" / "tests" / "open_close"
RC_OPS = ROOT / "build" / "tests" / "rc_ops"
# make soak runs 10,000
OPEN_CLOSE_ROUNDS = int(os.environ.get("RNIC_OPEN_CLOSE_ROUNDS", "100"))


def test_open_close_while_traffic_runs(tmp_path):
    """ibv_open_device/ibv_close_device rounds on rnic0, half of them by processes that die with
    the device open, while RC traffic runs on the same NIC in other processes, the last of which
    is killed in the middle of its transfers: not one open fails (EBUSY was the symptom: a context
    whose previous owner died looked busy), all traffic before the kill completes, the NIC still
    works afterwards, and neither NIC made a DMA access outside what the host had mapped (the
    killed process's memory among it), and the context memory holds the image of every table entry."""
    procs = run_demo.start_sims(tmp_path)
    env = dict(os.environ, RNIC_SIM_DIR=str(tmp_path / "sock"))
    try:
        def traffic():
            return subprocess.Popen([str(RC_OPS), "--seed", str(len(runs) + 1), "mix", "300", "rnic0", "rnic1"],
                                    env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        runs = []
        half = OPEN_CLOSE_ROUNDS // 2
        opener = subprocess.Popen(f"{OPEN_CLOSE} rnic0 {half} && {OPEN_CLOSE} rnic0 {half} exit", shell=True,
                                  env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        while opener.poll() is None:
            t = traffic()
            out, _ = t.communicate(timeout=900)
            runs.append((t.returncode, out))
        opened = opener.stdout.read()
        # the victim is killed once its QPs are connected and its operations under way
        log0 = tmp_path / "rnic0.log"
        rtr = log0.read_text().count("INIT->RTR")
        victim = traffic()
        deadline = time.time() + 120
        while log0.read_text().count("INIT->RTR") < rtr + 4 and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        victim.kill()
        victim.wait()
        demo = subprocess.run([str(DEMO), "rnic0", "rnic1"], env=env, text=True, capture_output=True, timeout=600)
    finally:
        run_demo.stop_sims(procs)
    assert opener.returncode == 0 and opened.count(" 0 failed") == 2, opened
    assert runs and all(rc == 0 and "PASS" in out for rc, out in runs), runs
    assert demo.returncode == 0 and "demo: PASS" in demo.stdout, demo.stdout
    for name in ("rnic0", "rnic1"):
        log = (tmp_path / f"{name}.log").read_text()
        assert re.search(r"dma errors 0,", log), log[-3000:]
        assert re.search(r"icm \d+ writes, \d+ entries checked against the kernels' tables, 0 differ", log), log[-3000:]


def cmdq_setup(c, cmdq, cmdc, pi=1):
    page = S.BAR0_CMDQ_BASE + c.ctx * S.BAR0_CTX_STRIDE
    for reg, v in (("CMDQ_BASE_LO", cmdq & 0xFFFFFFFF), ("CMDQ_BASE_HI", cmdq >> 32),
                   ("CMDC_BASE_LO", cmdc & 0xFFFFFFFF), ("CMDC_BASE_HI", cmdc >> 32),
                   ("CMDQ_CTRL", (1 << 31) | 2), ("CMDQ_PI", pi)):
        c.write32(page + S.CTX[reg][0], v)
    return page


def test_a_process_cannot_point_the_nic_at_another_process_memory(tmp_path):
    """Client A points its command rings into client B's window: the firmware refuses the
    rings (FW.DMA_WINDOW), B's memory is never read, A's commands are skipped."""
    sim = start_sim(tmp_path)
    try:
        a, b = LinkClient(tmp_path / "rnic0.sock"), LinkClient(tmp_path / "rnic0.sock")
        page = cmdq_setup(a, b.bus(0x10000), b.bus(0x20000))
        deadline = time.time() + 20
        while a.read32(page + S.CTX["CMDQ_CI"][0]) != 1 and time.time() < deadline:
            time.sleep(0.05)
        assert a.read32(page + S.CTX["CMDQ_CI"][0]) == 1
        b.read32(S.ID["VENDOR_DEVICE"][0])  # serves anything the NIC asked B for meanwhile
        assert b.dma_reads == []
        a.close()
        b.close()
    finally:
        stop(sim)
    assert "command rings outside its window" in (tmp_path / "rnic0.log").read_text()


def test_a_refused_dma_read_fails_the_command(tmp_path):
    """REG_MR whose page list the process has not mapped: the process refuses the read (link
    STATUS), the NIC flags it (s_dma_rd_err, FW.DMA_STATUS.ERR) and the firmware answers
    DMA_ERROR (EFAULT) instead of filling the MTT from whatever came back."""
    sim = start_sim(tmp_path)
    try:
        cmdq, cmdc = bytearray(4 * S.CMD_BYTES), bytearray(4 * S.CMDC_BYTES)
        b = LinkClient(tmp_path / "rnic0.sock", memory={})
        b.mem[b.bus(0x10000)], b.mem[b.bus(0x20000)] = cmdq, cmdc
        owner = S.CMDC[1]["OWNER"][0]

        def run(slot):
            deadline = time.time() + 30
            while not cmdc[slot * S.CMDC_BYTES + owner] and time.time() < deadline:
                time.sleep(0.05)
                b.read32(S.ID["VENDOR_DEVICE"][0])  # serves the NIC's reads meanwhile
            return struct.unpack_from("<IBB", cmdc, slot * S.CMDC_BYTES)

        struct.pack_into("<BxxxI", cmdq, 0, S.ENUM["CMD"]["ALLOC_PD"], 1)
        page = cmdq_setup(b, b.bus(0x10000), b.bus(0x20000))
        assert run(0) == (1, S.CMD_ST["OK"], S.ENUM["CMD"]["ALLOC_PD"])
        pdn = struct.unpack_from("<I", cmdc, S.CMDC[1]["OUT"][0])[0]
        mr = S.CMD_BYTES + S.CMD[1]["PAYLOAD"][0]
        struct.pack_into("<BxxxI", cmdq, S.CMD_BYTES, S.ENUM["CMD"]["REG_MR"], 2)
        f = S.CMDI_REG_MR[1]
        struct.pack_into("<I", cmdq, mr + f["PDN"][0], pdn)
        struct.pack_into("<I", cmdq, mr + f["ACCESS"][0], S.ACCESS["LOCAL_WRITE"])
        struct.pack_into("<Q", cmdq, mr + f["VA"][0], 0x7000000)
        struct.pack_into("<Q", cmdq, mr + f["LENGTH"][0], 0x1000)
        struct.pack_into("<Q", cmdq, mr + f["PAGELIST"][0], b.bus(0x40000))  # not mapped
        struct.pack_into("<I", cmdq, mr + f["NPAGES"][0], 1)
        cmdq[mr + f["PAGE_SHIFT"][0]] = 12
        b.write32(page + S.CTX["CMDQ_PI"][0], 2)
        assert run(1) == (2, S.CMD_ST["DMA_ERROR"], S.ENUM["CMD"]["REG_MR"])
        b.close()
    finally:
        stop(sim)


def test_dma_answers_come_from_the_process_asked(tmp_path):
    """While B's command is being read from B's memory, A floods the link with answers to every
    read tag, carrying a command of its own: B's command (a NOP) is the one executed."""
    sim = start_sim(tmp_path)
    try:
        cmdq, cmdc = bytearray(4 * S.CMD_BYTES), bytearray(4 * S.CMDC_BYTES)
        a = LinkClient(tmp_path / "rnic0.sock")
        b = LinkClient(tmp_path / "rnic0.sock", memory={})
        b.mem[b.bus(0x10000)], b.mem[b.bus(0x20000)] = cmdq, cmdc
        struct.pack_into("<BxxxI", cmdq, 0, S.ENUM["CMD"]["NOP"], 0x1234)
        forged = bytearray(S.CMD_BYTES)
        struct.pack_into("<BxxxI", forged, 0, S.ENUM["CMD"]["ALLOC_PD"], 0x1234)
        stop_flood = threading.Event()

        def flood():
            msgs = b"".join(link_client.HDR.pack(S.LINK_MSG["DMA_RD_RESP"], len(forged), b.bus(0x10000), 0, tag, 0) +
                            bytes(forged) for tag in range(1, 16))
            while not stop_flood.is_set():
                a.s.sendall(msgs)

        t = threading.Thread(target=flood, daemon=True)
        t.start()
        cmdq_setup(b, b.bus(0x10000), b.bus(0x20000))
        deadline = time.time() + 30
        while not cmdc[S.CMDC[1]["OWNER"][0]] and time.time() < deadline:
            time.sleep(0.2)  # B answers only now and then: A's answers have every chance
            b.read32(S.ID["VENDOR_DEVICE"][0])
        stop_flood.set()
        t.join()
        assert cmdc[S.CMDC[1]["OWNER"][0]] == 1
        cookie, status, opcode = struct.unpack_from("<IBB", cmdc, 0)
        assert (cookie, status, opcode) == (0x1234, S.CMD_ST["OK"], S.ENUM["CMD"]["NOP"])
        a.close()
        b.close()
    finally:
        stop(sim)
    out = (tmp_path / "rnic0.log").read_text()
    assert "forged answers 0" not in out and "forged answers" in out


CARD_MEM = 0x2_0000_0000  # the card's host's memory: bus addresses as a machine's, top byte 0


def card_cmd(link, mem, slot, opcode, payload=b""):
    """Command `slot` (cookie slot + 1) on context 0's queue of card_bring_up; its status and output."""
    lst = S.ICM_CHUNKS << S.ICM_CHUNK_LOG
    cmd, cpl = lst + 0x1000 + slot * S.CMD_BYTES, lst + 0x2000 + slot * S.CMDC_BYTES
    struct.pack_into("<BxxxI", mem, cmd, S.ENUM["CMD"][opcode], slot + 1)
    mem[cmd + S.CMD[1]["PAYLOAD"][0]:cmd + S.CMD[1]["PAYLOAD"][0] + len(payload)] = payload
    if slot == 0:
        cmdq_setup(link, CARD_MEM + lst + 0x1000, CARD_MEM + lst + 0x2000)
    else:
        link.write32(S.BAR0_CMDQ_BASE + S.CTX["CMDQ_PI"][0], slot + 1)
    deadline = time.time() + 60
    while not mem[cpl + S.CMDC[1]["OWNER"][0]]:
        assert time.time() < deadline, f"{opcode} never completed"
        link.read32(S.ID["VENDOR_DEVICE"][0])  # serves the NIC's reads meanwhile
    cookie, status, op = struct.unpack_from("<IBB", mem, cpl)
    assert (cookie, op) == (slot + 1, S.ENUM["CMD"][opcode])
    return status, bytes(mem[cpl + S.CMDC[1]["OUT"][0]:cpl + S.CMDC_BYTES - 8])


def card_bring_up(link, mem):
    """What rnic.ko's probe does with the card (driver/linux/rnic_main.c), from Python: the
    firmware ready, its secret from the RNG, the context memory handed over (chunks listed in
    reverse order, as a driver's allocations may come), context 0's command queue, QUERY_DEVICE;
    its output."""
    deadline = time.time() + 120
    while not link.read32(S.ID["FW_STATUS"][0]) & 1:
        assert time.time() < deadline, "the firmware never became ready"
        time.sleep(0.05)
    for i, word in enumerate(struct.unpack("<4I", os.urandom(16))):
        link.write32(S.ADMIN["SEED_0"][0] + 4 * i, word)
    n, chunk = link.read32(S.ADMIN["ICM_CHUNKS"][0]), 1 << S.ICM_CHUNK_LOG
    assert n == S.ICM_CHUNKS
    lst = n * chunk
    for i in range(n):
        struct.pack_into("<Q", mem, lst + 8 * i, CARD_MEM + (n - 1 - i) * chunk)
    link.write32(S.ADMIN["ICM_LIST_LO"][0], (CARD_MEM + lst) & 0xFFFFFFFF)
    link.write32(S.ADMIN["ICM_LIST_HI"][0], (CARD_MEM + lst) >> 32)
    link.write32(S.ADMIN["ICM_LIST_N"][0], n)
    while (st := link.read32(S.ADMIN["ICM_STATUS"][0])) == S.ICM_ST["NONE"]:
        assert time.time() < deadline, "the firmware never took the context memory"
        time.sleep(0.05)
    assert st == S.ICM_ST["TAKEN"]
    mem[lst + 0x1000:lst + 0x3000] = bytes(0x2000)
    status, out = card_cmd(link, mem, 0, "QUERY_DEVICE")
    assert status == S.CMD_ST["OK"]
    return out


@pytest.mark.parametrize("eth_mtu,active", [(None, "1024 (3)"), ("1500", "1024 (3)"), ("4191", "2048 (4)"),
                                             ("4192", "4096 (5)"), ("9000", "4096 (5)")])
def test_active_mtu_follows_the_networks_ethernet_mtu(tmp_path, eth_mtu, active):
    """The port's active MTU (Debian's ibv_devinfo through the project's library) is the largest
    IB MTU whose RoCEv2 packet, with the largest headers, fits the Ethernet MTU the host set
    (rnic-sim --eth-mtu, the driver's eth_mtu=): Linux's iboe_get_mtu; 1500, the default, gives
    1024, as a ConnectX on a standard network reports; the largest is 4096."""
    sim = start_sim(tmp_path, extra=["--eth-mtu", eth_mtu] if eth_mtu else [])
    try:
        env = {**os.environ, "LD_LIBRARY_PATH": str(ROOT / "build" / "host-lib"), "RNIC_SIM_DIR": str(tmp_path)}
        r = subprocess.run(["ibv_devinfo", "-v"], env=env, capture_output=True, text=True, timeout=120)
    finally:
        stop(sim)
    assert re.search(r"max_mtu:\s+4096 \(5\)", r.stdout), r.stdout
    assert re.search(r"active_mtu:\s+" + re.escape(active), r.stdout), r.stdout


def test_card_host_is_the_driver(tmp_path):
    """--card-host: one connection, the card's host (a QEMU device's), with all of BAR0 and
    DMA at its own bus addresses; no second host is let in. It brings the NIC up as the kernel
    module does and creates a CQ, whose context lands in the chunk of its context memory the list
    named. When it leaves, the card is power-cycled: the next host finds the firmware booted again
    (its context memory not given yet) and brings it up anew."""
    sim = start_sim(tmp_path, extra=["--card-host"])
    chunk = 1 << S.ICM_CHUNK_LOG
    try:
        for _ in range(2):
            mem = bytearray((S.ICM_CHUNKS + 1) * chunk)
            link = LinkClient(tmp_path / "rnic0.sock", memory={CARD_MEM: mem})
            assert link.ctx == 0
            with pytest.raises(ConnectionError):
                LinkClient(tmp_path / "rnic0.sock")  # one host only
            out = card_bring_up(link, mem)
            assert struct.unpack_from("<I", out, S.CMDO_QUERY_DEVICE[1]["MAX_QP"][0])[0] == S.MAX_QP
            ring = (S.ICM_CHUNKS << S.ICM_CHUNK_LOG) + 0x4000
            status, out = card_cmd(link, mem, 1, "CREATE_CQ", struct.pack("<QBB", CARD_MEM + ring, 6, 0))
            assert status == S.CMD_ST["OK"]
            cqn = struct.unpack_from("<I", out)[0]
            off = S.ICM_CQC_OFF + cqn * S.ICM_CQC_STRIDE
            at = (S.ICM_CHUNKS - 1 - off // chunk) * chunk + off % chunk
            assert any(mem[at:at + S.ICM_CQC_STRIDE]), "the CQ's context is not where the chunk list says"
            assert link.dma_reads and all(CARD_MEM <= a < CARD_MEM + len(mem) for a in link.dma_reads)
            link.close()
    finally:
        stop(sim)
    log = (tmp_path / "rnic0.log").read_text()
    assert "the card's host left: power cycle" in log and log.count("rnic firmware") == 2, log
    assert "dma errors 0," in log and "forged answers 0" in log, log
