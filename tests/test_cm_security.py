"""The connection manager against a hostile host process or peer: one regression test for each
finding of the audit of a028e5f (issue 42), its trigger replayed through the real firmware in its
harness (build/fw/test_fw --frames; test_fw_asan where memory safety is the point) or through
rnic-sim. Each failed, or crashed the firmware, at a028e5f."""
import fcntl
import os
import socket
import struct
import subprocess

import pytest

import roce_check as R
from link_client import HDR, MSG, LinkClient, S
from test_cm import (CLIENT, FW, OUR_QPN, ROOT, SERVER, SID, Run, accept, client_setup, cmd, connect, field,
                     mad_off, rping_cm, server_setup, with_remote_id)

ASAN = FW.with_name("test_fw_asan")
EV = S.ENUM["CM_EV"]


def attr(frame):
    return struct.unpack_from(">H", frame, mad_off(frame) + 16)[0]


def of(run, a):
    return [f for f in run.mads if attr(f) == a]


def asan_run(lines, nic=SERVER):
    """The replay under ASan and UBSan: it must end cleanly (no overflow, no runaway stack)."""
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    r = subprocess.run([str(ASAN), "--frames", *nic], input="".join(ln + "\n" for ln in lines),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ERROR" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]
    return [bytes.fromhex(ln[3:]) for ln in r.stdout.splitlines() if ln.startswith("TX ")], r.stdout


def reqs_from(n, first=0x1000, base=None):
    """n copies of rping's REQ with communication IDs of their own: n requesters"""
    base = base or rping_cm()[0]
    out = []
    for k in range(n):
        f = bytearray(base)
        struct.pack_into(">I", f, mad_off(f) + 24, first + k)
        struct.pack_into("<I", f, len(f) - 4, R.icrc(bytes(f)))
        out.append(bytes(f).hex())
    return out


def from_ip(frame, ip):
    """The same MAD from another IPv4 address (IP checksum and ICRC made good)."""
    f = bytearray(frame)
    f[26:30] = bytes(ip)
    f[24:26] = b"\0\0"
    c = sum(struct.unpack(">10H", bytes(f[14:34])))
    while c >> 16:
        c = (c & 0xFFFF) + (c >> 16)
    struct.pack_into(">H", f, 24, ~c & 0xFFFF)
    struct.pack_into("<I", f, len(f) - 4, R.icrc(bytes(f)))
    return bytes(f)


def arp_request(sender_ip, target_ip, mac_last):
    mac = bytes([2, 0, 0, 0, 1, mac_last])
    return (b"\xff" * 6 + mac + b"\x08\x06" + struct.pack(">HHBBH", 1, 0x0800, 6, 4, 1) + mac + bytes(sender_ip) +
            bytes(6) + bytes(target_ip))


def pdata(n, ident=0):
    return cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=ident, OFFSET=0, LEN=min(n, 112), TOTAL=n,
               DATA=bytes(range(min(n, 112))) + bytes(112 - min(n, 112)))


def sidr_req():
    """rxe's REQ frame made a SIDR_REQ (attribute 0x17) for service SID, request ID 0x2000"""
    sidr = bytearray(rping_cm()[0])
    m = mad_off(sidr)
    struct.pack_into(">H", sidr, m + 16, 0x17)
    body = bytearray(232)
    struct.pack_into(">IH2xQ", body, 0, 0x2000, 0xFFFF, SID)
    sidr[m + 24:m + 256] = body
    struct.pack_into("<I", sidr, len(sidr) - 4, R.icrc(bytes(sidr)))
    return bytes(sidr)


# ---- finding 1: private data staged after the first send overflowed the MAD being rebuilt
def test_private_data_after_connect_or_accept_is_refused_and_resends_stay_in_bounds():
    """CM_PDATA of 216 bytes after CM_CONNECT (92 at most) or CM_ACCEPT (196): refused (the ID's
    state carries no more private data), and the REQ's retransmission and the REP's rebuild the
    same MADs as the first (at a028e5f both ran 120 bytes past a 256-byte stack buffer)."""
    wait = 1024 << 20
    sent, out = asan_run(client_setup() + [connect(), pdata(216), f"WAIT {wait + 1000}"], nic=CLIENT)
    statuses = [int(ln.split()[1]) for ln in out.splitlines() if ln.startswith("CMDC ")]
    assert statuses[-2:] == [0, S.CMD_ST["BAD_STATE"]]
    reqs = [f for f in sent if R.is_roce(f) and attr(f) == 0x10]
    assert len(reqs) == 2 and reqs[0][mad_off(reqs[0]):-4] == reqs[1][mad_off(reqs[1]):-4]
    req = rping_cm()[0]
    sent, out = asan_run(server_setup() + [req.hex(), pdata(196, 1), accept(), pdata(216, 1), req.hex(),
                                           f"WAIT {wait + 1000}"])
    statuses = [int(ln.split()[1]) for ln in out.splitlines() if ln.startswith("CMDC ")]
    assert statuses[-2:] == [0, S.CMD_ST["BAD_STATE"]]
    reps = [f for f in sent if R.is_roce(f) and attr(f) == 0x13]
    assert len(reps) == 2 and reps[0][mad_off(reps[0]):-4] == reps[1][mad_off(reps[1]):-4]


# ---- finding 2: a REP whose peer had been evicted from the ARP cache recursed without bound
def test_rep_after_the_peer_was_evicted_from_the_neighbour_cache():
    """16 ARP requests from other hosts evict the server from the client's ARP cache between its
    REQ and the server's REP. The REP still connects: the QP gets the MAC the REP came from (no
    resolution inside frame handling), the RTU goes there. At a028e5f the nested poll handled the
    same REP again and again until the stack ran into .bss."""
    req_linux, rep, _, _, _ = rping_cm()
    first = Run(client_setup() + [connect()], nic=CLIENT)
    local_id = struct.unpack_from(">I", first.mads[-1], mad_off(first.mads[-1]) + 24)[0]
    flood = [arp_request([10, 99, 0, 100 + k], [10, 99, 0, 2], k).hex() for k in range(16)]
    sent, out = asan_run(client_setup() + [connect()] + flood + ["ARP 0.0.0.0", with_remote_id(rep, 4, local_id).hex(),
                                                                  cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN)],
                         nic=CLIENT)
    rtus = [f for f in sent if R.is_roce(f) and attr(f) == 0x14]
    assert len(rtus) == 1 and rtus[0][:6] == rep[6:12]
    q = bytes.fromhex([ln for ln in out.splitlines() if ln.startswith("CMDC ")][-1].split()[2])
    assert field(S.CMDO_QUERY_QP, q, "STATE") == S.QPS["RTS"]
    assert field(S.CMDO_QUERY_QP, q, "DMAC") == rep[6:12]


# ---- finding 3: CM IDs ran out NIC-wide; answers reflected
def test_every_pending_request_counts_against_the_backlog():
    """A listener of either kind holds 8 requests whose handshake is not done, whatever they are:
    REQs, SIDR_REQs, or REQs accepted whose RTU has not come (at a028e5f SIDR_REQs and accepted
    REQs were not counted: 16 and more)."""
    sidr = sidr_req()
    r = Run(server_setup() + reqs_from(4) + reqs_from(8, 0x2000, sidr))
    requests = [e for e in r.events if field(S.CM_EVENT, e, "TYPE") == EV["CONNECT_REQUEST"]]
    assert len(requests) == 8 and r.counters["cm_ids"] == 9
    sidr_reps = of(r, 0x18)
    assert len(sidr_reps) == 4 and all(s[mad_off(s) + 28] == 2 for s in sidr_reps)  # status REJECT
    accepted = Run(server_setup() + reqs_from(8) + [accept()] + reqs_from(1, 0x3000))
    assert len(accepted.events) == 8 and attr(accepted.mads[-1]) == 0x12  # the 9th: REJ no resources
    assert struct.unpack_from(">H", accepted.mads[-1], mad_off(accepted.mads[-1]) + 34)[0] == 3


def test_a_flood_of_requests_leaves_every_context_its_reserve():
    """Context 1 listens on four ports and a flood of REQs fills its backlogs: it gets the shared
    CM IDs and no more (REJ "no resources" after), and contexts 2 and 3 can still make their
    reserved IDs. At a028e5f the flood took all 32 IDs of the NIC: any other context got
    NO_RESOURCES from CM_CREATE_ID."""
    base = rping_cm()[0]
    lines = server_setup()[:2] + [cmd("CM_CREATE_ID"), cmd("CM_CREATE_ID"), cmd("CM_CREATE_ID")]
    lines += [cmd("CM_LISTEN", S.CMDI_CM_LISTEN, ID=i, SERVICE_ID=SID + i) for i in range(4)]
    for i in range(4):
        f = bytearray(base)
        struct.pack_into(">Q", f, mad_off(f) + 24 + 8, SID + i)
        struct.pack_into("<I", f, len(f) - 4, R.icrc(bytes(f)))
        lines += reqs_from(9, 0x1000 + 0x100 * i, bytes(f))
    reserved, shared = S.CM_ID_RESERVED, S.MAX_CM_ID - S.NUM_CTX * S.CM_ID_RESERVED
    lines += [cmd("CM_CREATE_ID", ctx=c) for c in (2, 2, 3, 1)]
    r = Run(lines)
    assert len(r.events) == reserved + shared - 4  # the requests context 1 took beyond its listeners
    rejs = of(r, 0x12)
    assert len(rejs) == 36 - len(r.events)
    assert [c[0] for c in r.cmds[-4:]] == [0, 0, 0, S.CMD_ST["NO_RESOURCES"]]


def test_response_timeouts_are_clamped_as_linux_clamps_them():
    """A requester asking for the longest timeout (31: 2.4 hours a try, 16 tries) gives up its
    CM ID 70 s after our REP (Linux's total MAD deadline); one asking for none (0: 4 us) gets the
    REP again once a millisecond at the most (Linux's cm_convert_to_ms), not 16 times in 64 us."""
    slow = bytearray(rping_cm()[0])
    m = mad_off(slow)
    slow[m + 24 + 47] = 31 << 3 | 7  # local CM response timeout, retry count
    slow[m + 24 + 51] = 15 << 4  # max CM retries
    struct.pack_into("<I", slow, len(slow) - 4, R.icrc(bytes(slow)))
    r = Run(server_setup() + [bytes(slow).hex(), accept(), f"WAIT {70 * 250_000_000 + 1000}"])
    assert field(S.CM_EVENT, r.events[-1], "TYPE") == EV["UNREACHABLE"] and len(of(r, 0x13)) == 1
    fast = bytearray(slow)
    fast[m + 24 + 47] = 0 << 3 | 7
    struct.pack_into("<I", fast, len(fast) - 4, R.icrc(bytes(fast)))
    r = Run(server_setup() + [bytes(fast).hex(), accept()] + ["WAIT 4096"] * 16)
    assert len(of(r, 0x13)) == 1 and len(r.events) == 1


def test_answers_to_strangers_are_rate_limited():
    """100 REQs from spoofed requesters for a port nobody listens on: 4 wait for a listener (cm.h:
    CM_HELD), 32 REJs go at once (the burst), the other 64 are counted and not sent. A millisecond
    later ten tokens are back: the 4 that waited are refused, then of 20 more REQs 4 wait and 6
    are refused, 10 not. At a028e5f every one was answered."""
    r = Run(reqs_from(100) + ["WAIT 250000"] + reqs_from(20, 0x5000))
    assert len(of(r, 0x12)) == 32 + 4 + 6
    assert r.counters["rate_limited"] == 64 + 10


# ---- finding 4: one secret predicted everything; messages were matched by ID alone
def test_messages_from_another_address_do_not_touch_a_connection():
    """An established connection's IDs, learnt by an off-path host: its DREQ (and a REJ, an RTU)
    from an address that is not the peer's is not the connection's. The connection stays up (at
    a028e5f the DREQ tore it down)."""
    req, _, rtu, dreq, _ = rping_cm()
    first = Run(server_setup() + [req.hex(), accept()])
    local_id = struct.unpack_from(">I", first.mads[-1], mad_off(first.mads[-1]) + 24)[0]
    rogue = [from_ip(with_remote_id(dreq, 4, local_id), [10, 99, 0, 66]).hex()]
    r = Run(server_setup() + [req.hex(), accept(), from_ip(with_remote_id(rtu, 4, local_id), [10, 99, 0, 66]).hex()]
            + [with_remote_id(rtu, 4, local_id).hex()] + rogue + [cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN)])
    kinds = [field(S.CM_EVENT, e, "TYPE") for e in r.events]
    assert kinds == [EV["CONNECT_REQUEST"], EV["ESTABLISHED"]]
    assert field(S.CMDO_QUERY_QP, r.cmds[-1][1], "STATE") == S.QPS["RTS"]
    assert r.counters["drop_unknown"] == 1  # the rogue RTU; the DREQ is answered, as any DREQ is


def ids_and_psn(key):
    """Two connections' communication IDs and starting PSNs on a client NIC of this seed"""
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    lines = client_setup() + [connect(), cmd("CM_CREATE_ID"), cmd("CREATE_QP", S.CMDI_CREATE_QP, PDN=1,
                                                                     TYPE=S.QPT["RC"], SQ_LOG=4, RQ_LOG=4,
                                                                     SQ_BASE=0x30000, RQ_BASE=0x40000, SEND_CQN=1,
                                                                     RECV_CQN=1)]
    lines += [cmd("MODIFY_QP", S.CMDI_MODIFY_QP, QPN=OUR_QPN + 1, ATTR_MASK=S.QP_ATTR["STATE"] |
                  S.QP_ATTR["PKEY_INDEX"] | S.QP_ATTR["PORT"] | S.QP_ATTR["ACCESS_FLAGS"], NEW_STATE=S.QPS["INIT"],
                  PORT=1), connect(ID=1, QPN=OUR_QPN + 1)]
    out = subprocess.run([str(FW), "--frames", *CLIENT, key], input="\n".join(lines) + "\n", capture_output=True,
                         text=True, timeout=60, check=True).stdout
    reqs = [bytes.fromhex(ln[3:]) for ln in out.splitlines() if ln.startswith("TX ") and len(ln) > 400]
    reqs = [f for f in reqs if attr(f) == 0x10]
    assert len(reqs) == 2
    return [(struct.unpack_from(">I", f, mad_off(f) + 24)[0], struct.unpack_from(">I", f, mad_off(f) + 68)[0] >> 8,
             f[mad_off(f) + 8:mad_off(f) + 16]) for f in reqs]


def test_ids_psns_and_transactions_come_from_the_host_seed_through_a_prf():
    """Under two host seeds, the IDs, PSNs and transaction IDs of the same connections differ,
    and nothing fixed links them: at a028e5f the XOR of two consecutive communication IDs, and a
    PSN XOR a fixed function of its ID, were the same under every secret (one REQ gave away the
    secret), and a transaction ID was the communication ID and a counter."""
    a = ids_and_psn("00" * 16)
    b = ids_and_psn("0123456789abcdef" * 2)
    assert a[0][0] != b[0][0] and a[0][1] != b[0][1]
    assert a[0][0] ^ a[1][0] != b[0][0] ^ b[1][0]
    mix = lambda i, p: (p ^ i * 0x9E3779B9) & 0xFFFFFF  # noqa: E731 (a028e5f's PSN: secret bits ^ this)
    assert mix(*a[0][:2]) != mix(*a[1][:2])
    assert all(tid[:4] != struct.pack(">I", ident) for ident, _, tid in a + b)


# ---- findings 5: the low ones
def test_a_listener_takes_only_the_requests_of_its_kind():
    """A SIDR_REQ to an RC listener gets a SIDR_REP "rejected" (2), a REQ to a UD listener a REJ
    28, as Linux's cma_ib_check_req_qp_type has them refused; a listener of RDMA_PS_IB takes both.
    At a028e5f both were delivered."""
    req = rping_cm()[0]
    sidr = sidr_req()
    listen = lambda t: cmd("CM_LISTEN", S.CMDI_CM_LISTEN, ID=0, SERVICE_ID=SID, QP_TYPE=t)  # noqa: E731
    setup = server_setup()
    rc = Run(setup[:2] + [listen(S.QPT["RC"])] + setup[3:] + [sidr.hex()])
    assert rc.events == [] and of(rc, 0x18)[0][mad_off(rc.mads[0]) + 28] == 2
    ud = Run(setup[:2] + [listen(S.QPT["UD"])] + setup[3:] + [req.hex()])
    rej = of(ud, 0x12)[0]
    assert ud.events == [] and struct.unpack_from(">H", rej, mad_off(rej) + 34)[0] == 28
    both = Run(setup[:2] + [listen(0)] + setup[3:] + [req.hex(), sidr.hex()])
    assert len(both.events) == 2


def test_privileged_ports_need_the_capability():
    """CM_LISTEN on an rdma_cm port below 1024 from a context without CAP_NET_BIND_SERVICE
    (ADMIN.CTX_PRIV): DENIED (EACCES from rdma_listen, as Linux's cma_use_port); with it, or on
    port 1024 and up, it listens. At a028e5f anyone could."""
    ports = [cmd("CM_LISTEN", S.CMDI_CM_LISTEN, ID=0, SERVICE_ID=0x01060000 | p) for p in (80, 1023, 1024)]
    plain = Run(["HOST 1500 0"] + server_setup()[:2] + ports)
    assert [c[0] for c in plain.cmds[-3:]] == [S.CMD_ST["DENIED"]] * 2 + [0]
    root = Run(["HOST 1500 2"] + server_setup()[:2] + ports[:1])
    assert root.cmds[-1][0] == 0


@pytest.fixture
def sim(tmp_path):
    import sys
    sys.path.insert(0, str(ROOT / "sim"))
    import run_demo
    procs = run_demo.start_sims(tmp_path)
    yield tmp_path
    run_demo.stop_sims(procs)


def test_a_ring_the_process_could_shrink_is_refused(sim):
    """A process's posted-write ring (MMIO_RING) must be a memfd sealed against shrinking: one
    that is not is refused (the link closed), and a sealed one cannot be truncated. At a028e5f a
    process that truncated its ring after handing it over killed rnic-sim with SIGBUS."""
    sock = sim / "sock" / "rnic0.sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(30)
    s.connect(str(sock))
    s.sendall(HDR.pack(MSG["HELLO"], 0, 0, S.LINK_VERSION, 0, 0))
    assert len(s.recv(HDR.size)) == HDR.size
    fd = os.memfd_create("unsealed", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, S.LINK_RING[0])
    socket.send_fds(s, [HDR.pack(MSG["MMIO_RING"], 0, 0, 0, 0, 0)], [fd])
    assert s.recv(64) == b""  # closed
    os.ftruncate(fd, 0)
    c = LinkClient(sock, ring=True)  # the library's way: sealed
    with pytest.raises(PermissionError):
        os.ftruncate(c.ring_fd, 0)
    assert fcntl.fcntl(c.ring_fd, fcntl.F_GET_SEALS) & fcntl.F_SEAL_SHRINK
    assert c.read32(S.ID["IF_VERSION"][0]) == S.IF_VERSION  # the simulator is alive
    c.close()
