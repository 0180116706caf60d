"""QP1 and the communication manager in the firmware (firmware/src/cm.c), against Linux: the CM
MADs of tests/data/rxe/rping.pcap (two rdma_rxe peers) are replayed into the firmware's logic as
the server's NIC (build/fw/test_fw --frames), and its answers are decoded by tshark and compared
with what Linux sent or would send (drivers/infiniband/core/cm.c). The firmware has no listener
yet, so the client's REQ is refused as Linux refuses a REQ for a port nobody listens on."""
import re
import struct
import subprocess

import pytest

import roce_check as R
import test_firmware
from link_client import S

ROOT = R.RXE_DIR.parent.parent.parent
FW = ROOT / "build" / "fw" / "test_fw"
SERVER = ("525400990003", "10.99.0.3")
CLIENT = ("525400990002", "10.99.0.2")
OUR_QPN = S.QPN_BASE  # the first QP the firmware makes: QPN_BASE | entry 0
SERVER_IP6 = bytes.fromhex("fe80000000000000505400fffe990003")  # GID 0 of the server's NIC
# time past the firmware's hold of a request for a service nobody listens on yet (cm.h:
# CM_HOLD_CYCLES, 1 ms): only then is it refused
HOLD = f"WAIT {250 * 1000 + 1}"
CM_FIELDS = ["infiniband.mad.method", "infiniband.mad.attributeid", "infiniband.mad.transactionid"]


def mad_off(frame):
    return 14 + R._ip_len(frame) + 8 + 12 + 8


def rping_cm():
    """The trace's frames to QP1, in order: REQ, REP, RTU, DREQ, DREP."""
    frames = [f for f in R.roce_frames(R.RXE_DIR / "rping.pcap") if R.bth(f)[1] == 1]
    attrs = [struct.unpack_from(">H", f, mad_off(f) + 16)[0] for f in frames]
    assert attrs == [0x10, 0x13, 0x14, 0x15, 0x16]
    return frames


def replay(frames, nic=SERVER):
    """Frames into the firmware as the NIC (MAC, IP): (frames it sent, QP1's counters)."""
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    r = subprocess.run([str(FW), "--frames", *nic],
                       input="".join((f if isinstance(f, str) else f.hex()) + "\n" for f in frames),
                       capture_output=True, text=True, timeout=60, check=True)
    sent = [bytes.fromhex(ln[3:]) for ln in r.stdout.splitlines() if ln.startswith("TX ")]
    counters = r.stdout.splitlines()[-1].split()
    assert counters[0] == "GSI"
    return sent, dict(zip(counters[1::2], map(int, counters[2::2])))


def decode(tmp_path, frame, fields):
    path = tmp_path / "out.pcap"
    R.write_pcap(path, [frame])
    rows = R.tshark_fields(path, fields)
    assert len(rows) == 1
    return rows[0]


def to_ipv6(frame, src6, dst6):
    """The same RoCEv2 frame over IPv6 (new ICRC)."""
    ihl = R._ip_len(frame)
    udp = bytearray(frame[14 + ihl:-4])
    ip6 = struct.pack(">IHBB", 6 << 28, len(udp) + 4, 17, 64) + src6 + dst6
    f = bytearray(frame[:12] + b"\x86\xdd" + ip6 + bytes(udp) + b"\0\0\0\0")
    struct.pack_into("<I", f, len(f) - 4, R.icrc(bytes(f)))
    return bytes(f)


def check_answer(f, to, v6=False):
    """A MAD for QP1 of the peer, by the book: ICRC, UD SEND_ONLY, GSI Q_Key, from QP1."""
    assert R.icrc_ok(f)
    assert f[0:6] == to[6:12] and f[6:12] == to[0:6]
    assert (f[12:14] == b"\x86\xdd") == v6
    op, qpn, _, _ = R.bth(f)
    assert (op, qpn) == (0x64, 1)
    deth = mad_off(f) - 8
    assert struct.unpack_from(">II", f, deth) == (0x80010000, 1)
    assert len(f) == mad_off(f) + 256 + 4


def test_req_for_a_port_nobody_listens_on_is_rejected(tmp_path):
    """rping's REQ (service 0x01061c06: RDMA_PS_TCP, port 7174): REJ "invalid service ID" (8) for
    the REQ, to the client's communication ID, in the REQ's transaction, as cm_issue_rej sends it,
    once the REQ has waited 1 ms for a listener (not before)."""
    req = rping_cm()[0]
    sent, n = replay([req, "WAIT 240000"])
    assert not sent and n["rx"] == 1 and n["tx"] == 0
    sent, n = replay([req, HOLD])
    assert len(sent) == 1 and n["rx"] == 1 and n["tx"] == 1
    check_answer(sent[0], req)
    row = decode(tmp_path, sent[0], CM_FIELDS + ["infiniband.cm.rej.localcommid", "infiniband.cm.rej.remotecommid",
                                                 "infiniband.cm.rej.msgrej", "infiniband.cm.rej.reason",
                                                 "infiniband.cm.rej.rejinfolen"])
    tid = decode(tmp_path, req, ["infiniband.mad.transactionid"])[0]
    assert row[:3] == ["0x03", "0x0012", tid]
    local_id = struct.unpack_from(">I", req, mad_off(req) + 24)[0]
    assert int(row[3], 16) == 0 and int(row[4], 16) == local_id
    assert [int(x, 0) for x in row[5:]] == [0, 8, 0]


def test_dreq_is_answered_as_linux_answers_it():
    """The client's DREQ gets a DREP whose MAD is the trace's DREP byte for byte (Linux answers a
    DREQ for a connection it no longer has in the same way: cm_issue_drep)."""
    frames = rping_cm()
    dreq, drep = frames[3], frames[4]
    sent, n = replay([dreq])
    assert len(sent) == 1
    check_answer(sent[0], dreq)
    mine, linux = sent[0][mad_off(sent[0]):][:256], drep[mad_off(drep):][:256]
    assert mine == linux


def test_messages_of_no_connection_are_dropped_and_counted():
    """A REP (to the client) and an RTU (to the server) for a connection the firmware never had:
    no answer, counted."""
    frames = rping_cm()
    for frame, nic in ((frames[1], CLIENT), (frames[2], SERVER)):
        sent, n = replay([frame], nic)
        assert sent == [] and n["drop_unknown"] == 1 and n["rx"] == 1


@pytest.mark.parametrize("what,edit,counter", [
    ("Q_Key not the GSI's", lambda f, m: f.__setitem__(slice(m - 8, m - 4), b"\x11\x11\x11\x11"), "drop_malformed"),
    ("truncated", lambda f, m: f.__delitem__(slice(m + 200, m + 210)), "drop_malformed"),
    ("not the CM class", lambda f, m: f.__setitem__(m + 1, 0x04), "drop_class"),
    ("CM class version 1", lambda f, m: f.__setitem__(m + 2, 1), "drop_class"),
    ("MAD base version 2", lambda f, m: f.__setitem__(m, 2), "drop_class"),
    ("method not a request", lambda f, m: f.__setitem__(m + 3, 0x06), "drop_unknown"),
    ("LAP", lambda f, m: f.__setitem__(slice(m + 16, m + 18), b"\x00\x19"), "drop_unknown"),
])
def test_malformed_mads_are_dropped_and_counted(what, edit, counter):
    req = bytearray(rping_cm()[0])
    m = mad_off(req)
    edit(req, m)
    struct.pack_into("<I", req, len(req) - 4, R.icrc(bytes(req)))
    sent, n = replay([bytes(req)])
    assert sent == [] and n[counter] == 1, what


def test_class_port_info_and_unsupported_attributes(tmp_path):
    """Get(ClassPortInfo): GetResp with the CM's versions and response time; Get of another
    attribute: GetResp with status "unsupported method/attribute" (Linux's MAD layer)."""
    req = bytearray(rping_cm()[0])
    m = mad_off(req)
    req[m + 3] = 0x01
    req[m + 16:m + 18] = b"\x00\x01"
    req[m + 24:m + 256] = bytes(232)
    other = bytearray(req)
    other[m + 16:m + 18] = b"\x00\x10"
    for f in (req, other):
        struct.pack_into("<I", f, len(f) - 4, R.icrc(bytes(f)))
    sent, n = replay([bytes(req), bytes(other)])
    assert len(sent) == 2
    for f in sent:
        check_answer(f, req)
    row = decode(tmp_path, sent[0], CM_FIELDS + ["infiniband.mad.status"])
    assert row[0] == "0x81" and row[1] == "0x0001" and int(row[3], 0) == 0
    # ClassPortInfo (13.4.8.1; tshark decodes it for the SA class only): BaseVersion, ClassVersion,
    # RespTimeValue in the low 5 bits of its fourth byte; no redirection, no trap
    cpi = sent[0][mad_off(sent[0]) + 24:][:72]
    assert (cpi[0], cpi[1], cpi[7] & 0x1F) == (1, 2, 20) and not any(cpi[8:])
    row = decode(tmp_path, sent[1], CM_FIELDS + ["infiniband.mad.status"])
    assert row[0] == "0x81" and row[1] == "0x0010" and int(row[3], 0) == 0x000C


def test_req_over_ipv6(tmp_path):
    """The same REQ from an IPv6 GID: the REJ goes back over IPv6 to the sender's address."""
    client6 = bytes.fromhex("fe80000000000000505400fffe990002")
    req = to_ipv6(rping_cm()[0], client6, SERVER_IP6)
    sent, n = replay([req, HOLD])
    assert len(sent) == 1 and n["tx"] == 1
    check_answer(sent[0], req, v6=True)
    assert sent[0][22:38] == SERVER_IP6 and sent[0][38:54] == client6
    row = decode(tmp_path, sent[0], ["infiniband.mad.attributeid", "infiniband.cm.rej.reason"])
    assert row[0] == "0x0012" and int(row[1], 0) == 8


# ---- the passive side: listen, CONNECT_REQUEST, accept (the firmware moves the QP), RTU, DREQ
EVQ = 0x10000
SID = 0x01061C06  # rping's: RDMA_PS_TCP << 16 | 7174


def payload(struct_, **fields):
    size, layout = struct_
    b = bytearray(size)
    for name, value in fields.items():
        off, kind, n = layout[name]
        b[off:off + n] = value if kind == "bytes" else value.to_bytes(n, "little")
    return b.hex()


def field(struct_, data, name):
    off, kind, n = struct_[1][name]
    return data[off:off + n] if kind == "bytes" else int.from_bytes(data[off:off + n], "little")


class Run:
    """One replay: lines in, the firmware's frames, command answers and CM events out."""

    def __init__(self, lines, nic=SERVER):
        subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
        r = subprocess.run([str(FW), "--frames", *nic], input="".join(ln + "\n" for ln in lines),
                           capture_output=True, text=True, timeout=120, check=True)
        self.out = r.stdout.splitlines()
        self.tx = [bytes.fromhex(ln[3:]) for ln in self.out if ln.startswith("TX ")]
        self.mads = [f for f in self.tx if R.is_roce(f)]
        self.cmds = [(int(ln.split()[1]), bytes.fromhex(ln.split()[2])) for ln in self.out if ln.startswith("CMDC ")]
        self.events = [bytes.fromhex(ln.split()[2]) for ln in self.out if ln.startswith("DMA ")]
        c = self.out[-1].split()
        self.counters = dict(zip(c[1::2], map(int, c[2::2])))


def cmd(op, struct_=None, ctx=1, **fields):
    return f"CMD {ctx} {S.ENUM['CMD'][op]} " + (payload(struct_, **fields) if struct_ else "")


def with_remote_id(frame, off, local_id):
    """A trace message rewritten to name our communication ID (the trace's peer had another)."""
    f = bytearray(frame)
    m = mad_off(f)
    struct.pack_into(">I", f, m + 24 + off, local_id)
    struct.pack_into("<I", f, len(f) - 4, R.icrc(bytes(f)))
    return bytes(f)


def server_setup():
    """Context 1 of the server's NIC: a CM event ring, a listener on rping's service ID, an RC QP
    in INIT (what rdma_create_qp leaves)."""
    return [cmd("CM_CREATE_EVQ", S.CMDI_CM_CREATE_EVQ, BASE=EVQ, LOG_SIZE=4),
            cmd("CM_CREATE_ID"),
            cmd("CM_LISTEN", S.CMDI_CM_LISTEN, ID=0, SERVICE_ID=SID),
            cmd("ALLOC_PD"),
            cmd("CREATE_CQ", S.CMDI_CREATE_CQ, BASE=0x20000, LOG_SIZE=4),
            cmd("CREATE_QP", S.CMDI_CREATE_QP, PDN=1, TYPE=S.QPT["RC"], SQ_LOG=4, RQ_LOG=4, SQ_BASE=0x30000,
                RQ_BASE=0x40000, SEND_CQN=1, RECV_CQN=1),
            cmd("MODIFY_QP", S.CMDI_MODIFY_QP, QPN=OUR_QPN, ATTR_MASK=S.QP_ATTR["STATE"] | S.QP_ATTR["PKEY_INDEX"] |
                S.QP_ATTR["PORT"] | S.QP_ATTR["ACCESS_FLAGS"], NEW_STATE=S.QPS["INIT"], PORT=1,
                ACCESS=S.ACCESS["LOCAL_WRITE"] | S.ACCESS["REMOTE_WRITE"] | S.ACCESS["REMOTE_READ"]),
            "ARP 10.99.0.2 525400990002"]


def accept(qpn=OUR_QPN):
    return cmd("CM_ACCEPT", S.CMDI_CM_ACCEPT, ID=1, QPN=qpn, RESP_RES=1, INIT_DEPTH=1, RNR_RETRY=7,
               MIN_RNR_TIMER=12)


def test_passive_side_connects_as_linux_does(tmp_path):
    """rping's REQ reaches the listener as CONNECT_REQUEST (the requester's QPN, GID, private data
    with rdma_cm's IP header); CM_ACCEPT moves the QP to RTS on the REQ's path and PSN and sends a
    REP that matches Linux's field by field (but for its own IDs, QPN and PSN, and a target ACK
    delay of 0, this NIC's local_ca_ack_delay); the RTU makes it ESTABLISHED; the DREQ gets its
    DREP and DISCONNECTED; destroying the IDs leaves none."""
    req, rep_linux, rtu, dreq, _ = rping_cm()
    first = Run(server_setup() + [req.hex(), accept()])
    assert [c[0] for c in first.cmds] == [0] * 8, first.out
    ev = first.events[0]
    E = S.CM_EVENT
    assert field(E, ev, "TYPE") == S.ENUM["CM_EV"]["CONNECT_REQUEST"] and field(E, ev, "LISTEN_ID") == 0
    assert field(E, ev, "ID") == 1 and field(E, ev, "REMOTE_QPN") == 0x1A
    assert field(E, ev, "PEER_GID") == bytes(10) + b"\xff\xff" + bytes([10, 99, 0, 2])
    assert field(E, ev, "SERVICE_ID") == SID and field(E, ev, "PDATA_LEN") == 92
    m = mad_off(req)
    assert field(E, ev, "PDATA")[:92] == req[m + 24 + 140:m + 24 + 232]
    assert (field(E, ev, "RESP_RES"), field(E, ev, "INIT_DEPTH")) == (1, 1)
    assert field(E, ev, "OWNER") == 1  # first pass
    rep = first.mads[-1]
    check_answer(rep, req)
    fields = ["infiniband.mad.method", "infiniband.mad.attributeid", "infiniband.mad.transactionid",
              "infiniband.cm.rep.remotecommid", "infiniband.cm.rep.localqkey", "infiniband.cm.rep.respres",
              "infiniband.cm.rep.initdepth", "infiniband.cm.rep.failoveracc", "infiniband.cm.rep.e2eflowctrl",
              "infiniband.cm.rep.rnrretrcount", "infiniband.cm.rep.srq", "infiniband.cm.rep.localcaguid",
              "infiniband.cm.rep.private"]
    assert decode(tmp_path, rep, fields) == decode(tmp_path, rep_linux, fields)
    mine = decode(tmp_path, rep, ["infiniband.cm.rep.localqpn", "infiniband.cm.rep.startpsn",
                                  "infiniband.cm.rep.tgtackdelay"])
    assert int(mine[0], 16) == OUR_QPN and int(mine[2], 0) == 0
    local_id, psn = struct.unpack_from(">I", rep, mad_off(rep) + 24)[0], int(mine[1], 16)
    # the QP: RTS toward the requester's QP, sending from its starting PSN, receiving from ours (a
    # starting PSN is where its sender receives from, as Linux reads it: rping.pcap's own traffic)
    q = Run(server_setup() + [req.hex(), accept(), cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN)]).cmds[-1]
    assert q[0] == 0
    Q = S.CMDO_QUERY_QP
    assert (field(Q, q[1], "STATE"), field(Q, q[1], "DEST_QPN"), field(Q, q[1], "RQ_PSN"),
            field(Q, q[1], "SQ_PSN"), field(Q, q[1], "PATH_MTU")) == (S.QPS["RTS"], 0x1A, psn, 0x2E829F, 3)
    # RTU, then DREQ, named by our communication ID
    full = Run(server_setup() + [req.hex(), accept(), with_remote_id(rtu, 4, local_id).hex(),
                                 with_remote_id(dreq, 4, local_id).hex(),
                                 cmd("CM_DESTROY_ID", S.CMDI_HANDLE, HANDLE=1),
                                 cmd("CM_DESTROY_ID", S.CMDI_HANDLE, HANDLE=0)])
    kinds = [field(E, e, "TYPE") for e in full.events]
    assert kinds == [S.ENUM["CM_EV"][k] for k in ("CONNECT_REQUEST", "ESTABLISHED", "DISCONNECTED")]
    assert [field(E, e, "OWNER") for e in full.events] == [1, 1, 1]
    drep = full.mads[-1]
    assert struct.unpack_from(">HII", drep, mad_off(drep) + 16 + 0)[0] == 0x16
    assert drep[mad_off(drep) + 24:][:8] == struct.pack(">II", local_id, 0x390B5EA1)
    assert full.counters["cm_ids"] == 0 and full.counters["drop_unknown"] == 0


def test_lost_rtu_is_recovered_and_a_silent_peer_given_up():
    """The REQ again (the requester did not hear our REP): counted and dropped, no second request
    and no answer (Linux's cm_dup_req_handler: the REP goes again on its own timer). No RTU at
    all: the REP is sent again each CM response timeout of the REQ (2^20 x 4.096 us), up to its
    Max CM Retries (15) + 1 times, then the QP goes to error and the owner hears UNREACHABLE."""
    req = rping_cm()[0]
    dup = Run(server_setup() + [req.hex(), accept(), req.hex()])
    reps = [f for f in dup.mads if struct.unpack_from(">H", f, mad_off(f) + 16)[0] == 0x13]
    assert len(reps) == 1
    assert dup.counters["dup"] == 1
    assert len(dup.events) == 1
    wait = 1024 << 20
    lines = server_setup() + [req.hex(), accept()] + [f"WAIT {wait + 1000}"] * 16 + \
        [cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN)]
    silent = Run(lines)
    reps = [f for f in silent.mads if struct.unpack_from(">H", f, mad_off(f) + 16)[0] == 0x13]
    assert len(reps) == 16
    assert field(S.CM_EVENT, silent.events[-1], "TYPE") == S.ENUM["CM_EV"]["UNREACHABLE"]
    assert field(S.CMDO_QUERY_QP, silent.cmds[-1][1], "STATE") == S.QPS["ERR"]


def test_reject_and_one_listener_per_service():
    """rdma_reject: a REJ "consumer defined" (28) with the private data given; a second listener
    on the same service ID is refused (EBUSY), on another it is not."""
    req = rping_cm()[0]
    pdata = bytes(range(1, 21))
    r = Run(server_setup() + [req.hex(),
                              cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=1, OFFSET=0, LEN=20, TOTAL=20,
                                  DATA=pdata + bytes(92)),
                              cmd("CM_REJECT", S.CMDI_CM_REJECT, ID=1, REASON=28),
                              cmd("CM_CREATE_ID"), cmd("CM_LISTEN", S.CMDI_CM_LISTEN, ID=2, SERVICE_ID=SID),
                              cmd("CM_LISTEN", S.CMDI_CM_LISTEN, ID=2, SERVICE_ID=SID + 1)])
    rej = r.mads[-1]
    m = mad_off(rej)
    assert struct.unpack_from(">H", rej, m + 16)[0] == 0x12
    assert struct.unpack_from(">H", rej, m + 24 + 10)[0] == 28
    assert rej[m + 24 + 4:m + 24 + 8] == req[mad_off(req) + 24:mad_off(req) + 28]
    assert rej[m + 24 + 84:m + 24 + 104] == pdata
    assert [c[0] for c in r.cmds[-5:]] == [0, 0, 0, S.CMD_ST["BUSY"], 0]


# ---- the active side: connect (REQ), REP, RTU; REJ; a silent peer
def client_setup():
    """Context 1 of the client's NIC: a CM event ring, an idle CM ID, an RC QP in INIT, and
    rping's REQ private data staged (rdma_cm's IP header: port 0xad6f to 10.99.0.3:7174)."""
    req = rping_cm()[0]
    pdata = req[mad_off(req) + 24 + 140:][:92]
    return server_setup()[:1] + [cmd("CM_CREATE_ID")] + server_setup()[3:7] + [
        cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=0, OFFSET=0, LEN=92, TOTAL=92, DATA=pdata + bytes(20)),
        "ARP 10.99.0.3 525400990003"]


def connect(**over):
    args = dict(ID=0, QPN=OUR_QPN, SERVICE_ID=SID, DGID=bytes(10) + b"\xff\xff" + bytes([10, 99, 0, 3]), RESP_RES=1,
                INIT_DEPTH=1, RETRY_CNT=7, RNR_RETRY=7, RESP_TIMEOUT=20, MAX_RETRIES=15, ACK_TIMEOUT=19,
                TCLASS=0, PATH_MTU=3)
    args.update(over)
    return cmd("CM_CONNECT", S.CMDI_CM_CONNECT, **args)


REQ_FIELDS = ["infiniband.mad.method", "infiniband.mad.attributeid", "infiniband.cm.req.serviceid",
              "infiniband.cm.req.localcaguid", "infiniband.cm.req.localqkey", "infiniband.cm.req.responderres",
              "infiniband.cm.req.initdepth", "infiniband.cm.req.remoteresptout", "infiniband.cm.req.transpsvctype",
              "infiniband.cm.req.e2eflowctrl", "infiniband.cm.req.localresptout", "infiniband.cm.req.retrcount",
              "infiniband.cm.req.pkey", "infiniband.cm.req.pppmtu", "infiniband.cm.req.rdcexist",
              "infiniband.cm.req.rnrretrcount", "infiniband.cm.req.maxcmretr", "infiniband.cm.req.srq",
              "infiniband.cm.req.prim_locallid", "infiniband.cm.req.prim_remotelid",
              "infiniband.cm.req.prim_localgid_ipv4", "infiniband.cm.req.prim_remotegid_ipv4",
              "infiniband.cm.req.prim_tfcclass", "infiniband.cm.req.prim_hoplim", "infiniband.cm.req.prim_sl",
              "infiniband.cm.req.prim_localacktout"]


def test_active_side_connects_as_linux_does(tmp_path):
    """CM_CONNECT sends a REQ that matches rping's (Linux's) field by field but for its own IDs,
    QPN, PSN and flow label; the trace's REP, named by our communication ID, moves the QP to RTS
    toward the server's QP and PSN and brings an RTU equal to Linux's but for the IDs, and
    ESTABLISHED with the REP's private data; the REP again (our RTU lost) gets the RTU again."""
    req_linux, rep, rtu_linux, _, _ = rping_cm()
    first = Run(client_setup() + [connect()], nic=CLIENT)
    assert [c[0] for c in first.cmds] == [0] * 8, first.out
    req = first.mads[-1]
    check_answer(req, rep)  # the way the REP came back
    assert decode(tmp_path, req, REQ_FIELDS) == decode(tmp_path, req_linux, REQ_FIELDS)
    m, ml = mad_off(req), mad_off(req_linux)
    assert req[m + 24 + 140:m + 24 + 232] == req_linux[ml + 24 + 140:ml + 24 + 232]  # private data
    local_id = struct.unpack_from(">I", req, m + 24)[0]
    assert struct.unpack_from(">I", req, m + 24 + 32)[0] >> 8 == OUR_QPN
    psn = struct.unpack_from(">I", req, m + 24 + 44)[0] >> 8
    reply = with_remote_id(rep, 4, local_id)
    full = Run(client_setup() + [connect(), reply.hex(), cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN), reply.hex()],
               nic=CLIENT)
    rtus = [f for f in full.mads if struct.unpack_from(">H", f, mad_off(f) + 16)[0] == 0x14]
    assert len(rtus) == 2 and full.counters["dup"] == 1
    rtu = bytearray(rtus[0][mad_off(rtus[0]):][:256])
    assert rtu[24:32] == struct.pack(">II", local_id, 0xA19ED5FF)
    rtu[24:28] = rtu_linux[mad_off(rtu_linux) + 24:][:4]
    rtu[8:16] = rtu_linux[mad_off(rtu_linux) + 8:][:8]  # the transaction ID is the requester's own
    assert bytes(rtu) == rtu_linux[mad_off(rtu_linux):][:256]
    q = full.cmds[-1][1]
    Q = S.CMDO_QUERY_QP
    assert (field(Q, q, "STATE"), field(Q, q, "DEST_QPN"), field(Q, q, "RQ_PSN"), field(Q, q, "SQ_PSN"),
            field(Q, q, "PATH_MTU")) == (S.QPS["RTS"], 0x1A, psn, 0x4E4251, 3)
    ev = full.events[-1]
    E = S.CM_EVENT
    assert field(E, ev, "TYPE") == S.ENUM["CM_EV"]["ESTABLISHED"] and field(E, ev, "REMOTE_QPN") == 0x1A
    assert field(E, ev, "PDATA_LEN") == 196 and field(E, ev, "PDATA")[:196] == rep[mad_off(rep) + 24 + 36:][:196]


def test_a_request_before_its_listener_waits_for_it():
    """perftest -R's client connects as soon as it has told its server to listen, and our listen
    is two firmware commands: a REQ that comes first waits 1 ms for its listener. Its
    retransmission meanwhile is dropped; 4 wait at the most, a fifth is refused at once (REJ 8);
    the listener, when it comes, gets all 4 as CONNECT_REQUESTs, and nothing more is refused."""
    req = rping_cm()[0]
    others = [with_remote_id(req, 0, 0x1000 + k).hex() for k in range(4)]
    setup = server_setup()
    r = Run(setup[:2] + [req.hex(), req.hex()] + others + ["WAIT 100000"] + setup[2:3] + [HOLD])
    rej = [f for f in r.mads if struct.unpack_from(">H", f, mad_off(f) + 16)[0] == 0x12]
    assert len(r.mads) == 1 and len(rej) == 1, r.out
    assert struct.unpack_from(">I", rej[0], mad_off(rej[0]) + 28)[0] == 0x1003  # the fifth's ID
    types = [field(S.CM_EVENT, ev, "TYPE") for ev in r.events]
    assert types == [S.ENUM["CM_EV"]["CONNECT_REQUEST"]] * 4, r.out
    assert r.counters["dup"] == 1 and r.cmds[-1][0] == 0


def test_active_side_rejected_or_unanswered():
    """A REJ for our REQ (the server's port closed: reason 8) brings REJECTED with that reason; a
    server that never answers gets the REQ 1 + MAX_RETRIES times, one response timeout apart (1 ms
    at the least, as Linux's cm_convert_to_ms: a timeout of 5 waits as 8 does), then UNREACHABLE."""
    r = Run(client_setup() + [connect()], nic=CLIENT)
    req = r.mads[-1]
    sent, _ = replay([req, HOLD])  # the server's firmware, nobody listening
    rej = sent[0]
    rejected = Run(client_setup() + [connect(), rej.hex()], nic=CLIENT)
    ev = rejected.events[-1]
    assert field(S.CM_EVENT, ev, "TYPE") == S.ENUM["CM_EV"]["REJECTED"]
    assert field(S.CM_EVENT, ev, "REASON") == 8
    wait = 1024 << 8
    silent = Run(client_setup() + [connect(RESP_TIMEOUT=5, MAX_RETRIES=3)] + [f"WAIT {wait + 1000}"] * 5,
                 nic=CLIENT)
    reqs = [f for f in silent.mads if struct.unpack_from(">H", f, mad_off(f) + 16)[0] == 0x10]
    assert len(reqs) == 4 and len({f[mad_off(f):-4] for f in reqs}) == 1
    assert field(S.CM_EVENT, silent.events[-1], "TYPE") == S.ENUM["CM_EV"]["UNREACHABLE"]


def test_disconnect_both_ways(tmp_path):
    """rdma_disconnect on the connected client: the QP to error, a DREQ like Linux's (but for the
    IDs) naming the server's QP; the trace's DREP brings DISCONNECTED. A server that never answers
    the DREQ: DISCONNECTED after the retries all the same. The server's own DREQ to us: DREP and
    DISCONNECTED, and rdma_disconnect after it only moves the QP."""
    req_linux, rep, _, dreq_linux, drep = rping_cm()
    first = Run(client_setup() + [connect()], nic=CLIENT)
    local_id = struct.unpack_from(">I", first.mads[-1], mad_off(first.mads[-1]) + 24)[0]
    up = client_setup() + [connect(), with_remote_id(rep, 4, local_id).hex()]
    disc = cmd("CM_DISCONNECT", S.CMDI_HANDLE, HANDLE=0)
    r = Run(up + [disc, cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN), with_remote_id(drep, 4, local_id).hex()],
            nic=CLIENT)
    dreq = bytearray(r.mads[-1][mad_off(r.mads[-1]):][:256])
    ml = mad_off(dreq_linux)
    assert dreq[24:32] == struct.pack(">II", local_id, 0xA19ED5FF)
    dreq[24:28] = dreq_linux[ml + 24:ml + 28]
    dreq[8:16] = dreq_linux[ml + 8:ml + 16]
    assert bytes(dreq) == dreq_linux[ml:ml + 256]
    assert field(S.CMDO_QUERY_QP, r.cmds[-1][1], "STATE") == S.QPS["ERR"]
    assert field(S.CM_EVENT, r.events[-1], "TYPE") == S.ENUM["CM_EV"]["DISCONNECTED"]
    silent = Run(up + [disc] + [f"WAIT {(1024 << 20) + 1000}"] * 16, nic=CLIENT)
    dreqs = [f for f in silent.mads if struct.unpack_from(">H", f, mad_off(f) + 16)[0] == 0x15]
    assert len(dreqs) == 16
    assert field(S.CM_EVENT, silent.events[-1], "TYPE") == S.ENUM["CM_EV"]["DISCONNECTED"]
    # the server disconnects: its DREQ names our ID and our QP
    theirs = bytearray(dreq_linux)
    theirs[0:12] = theirs[6:12] + theirs[0:6]  # the other way: server to client
    theirs[26:34] = theirs[30:34] + theirs[26:30]
    m = mad_off(theirs)
    struct.pack_into(">II", theirs, m + 24, 0xA19ED5FF, local_id)
    struct.pack_into("<I", theirs, len(theirs) - 4, R.icrc(bytes(theirs)))
    passive = Run(up + [bytes(theirs).hex(), disc, cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN)],
                  nic=CLIENT)
    drep_mine = passive.mads[-1]
    assert struct.unpack_from(">HII", drep_mine, mad_off(drep_mine) + 16)[0] == 0x16
    assert field(S.CM_EVENT, passive.events[-1], "TYPE") == S.ENUM["CM_EV"]["DISCONNECTED"]
    assert passive.cmds[-2][0] == 0 and field(S.CMDO_QUERY_QP, passive.cmds[-1][1], "STATE") == S.QPS["ERR"]


def test_our_active_and_passive_sides_connect():
    """Our client's REQ to our server's listener, its REP back, the RTU: both QPs in RTS, each
    toward the other's QPN and PSN, both sides ESTABLISHED (runs are deterministic, so each side
    is replayed up to the message it answers)."""
    req = Run(client_setup() + [connect()], nic=CLIENT).mads[-1]
    server = server_setup() + [req.hex(), accept()]
    rep = Run(server).mads[-1]
    query = cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN)
    client = Run(client_setup() + [connect(), rep.hex(), query], nic=CLIENT)
    rtu = client.mads[-1]
    server = Run(server + [rtu.hex(), query])
    Q, E = S.CMDO_QUERY_QP, S.CM_EVENT
    for me, peer in ((client, server), (server, client)):
        q, p = me.cmds[-1][1], peer.cmds[-1][1]
        assert field(Q, q, "STATE") == S.QPS["RTS"] and field(Q, q, "DEST_QPN") == OUR_QPN
        assert field(Q, q, "RQ_PSN") == field(Q, p, "SQ_PSN")
        assert field(E, me.events[-1], "TYPE") == S.ENUM["CM_EV"]["ESTABLISHED"]


def test_mutated_mads_are_dropped_or_answered_never_crash():
    """3000 mutations of rping's CM messages (random bytes of the MAD changed, the ICRC made good)
    into the firmware built with ASan and UBSan, with a listener and a connection being made:
    every one is taken, answered or dropped and counted; nothing is read or written out of
    bounds, and the firmware answers a valid REQ afterwards."""
    import random
    rnd = random.Random(7)
    base = rping_cm()
    frames = []
    for _ in range(3000):
        f = bytearray(rnd.choice(base))
        m = mad_off(f)
        for _ in range(rnd.randint(1, 8)):
            at = m + rnd.choice([rnd.randrange(0, 24), rnd.randrange(24, 256)])
            f[at] = rnd.randrange(256)
        if rnd.random() < 0.3:
            f[m + 16:m + 18] = rnd.choice([b"\x00\x10", b"\x00\x13", b"\x00\x14", b"\x00\x15", b"\x00\x16"])
        struct.pack_into("<I", f, len(f) - 4, R.icrc(bytes(f)))
        frames.append(bytes(f).hex())
    lines = server_setup() + [base[0].hex(), accept()] + frames + [base[0].hex()]
    subprocess.run(["make", "-s", "-C", str(ROOT), "fw-test"], check=True)
    r = subprocess.run([str(FW.with_name("test_fw_asan")), "--frames", *SERVER], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "ERROR" not in r.stderr and "runtime error" not in r.stderr, r.stderr[-3000:]
    c = r.stdout.splitlines()[-1].split()
    n = dict(zip(c[1::2], map(int, c[2::2])))
    assert n["rx"] + n["drop_malformed"] + n["drop_class"] == 3002
    assert r.stdout.splitlines()[-2].startswith("TX ")  # the last valid REQ: answered


def test_connections_through_the_simulated_nics(tmp_path):
    """Through rnic-sim, RTL and firmware: 5 connections between two NICs on the link and 3
    between two contexts of one NIC (internal loopback), each made by the firmware's CM (REQ,
    REP, RTU over QP1), used for a 4 KiB RDMA WRITE to the address and rkey the server sent as
    private data, and taken down (DREQ, DREP), leaving no CM ID behind (the table holds 32: a
    leak would fail later rounds); then a REQ to a port nobody listens on is rejected (8). The
    link's CM MADs have good ICRCs and tshark decodes them. Each NIC's firmware used less of its
    stack than the deepest call chain gcc's call graph allows (test_firmware.py), which fits it."""
    import os
    import sys
    sys.path.insert(0, str(ROOT / "sim"))
    import run_demo
    app = ROOT / "build" / "tests" / "cm_pair"
    procs = run_demo.start_sims(tmp_path)
    try:
        env = dict(os.environ, RNIC_SIM_DIR=str(tmp_path / "sock"))
        for rounds, devs in ((5, ("rnic0", "rnic1")), (3, ("rnic1", "rnic1"))):
            p = subprocess.run([str(app), str(rounds), *devs], env=env, capture_output=True, text=True, timeout=900)
            assert p.returncode == 0 and f"{rounds} connections" in p.stdout, p.stdout + p.stderr
    finally:
        run_demo.stop_sims(procs)
    mads = [f for f in R.roce_frames(tmp_path / "rnic0.pcap") if R.bth(f)[1] == 1]
    assert mads and all(R.icrc_ok(f) for f in mads)
    attrs = [int(r[0], 16) for r in R.tshark_fields(tmp_path / "rnic0.pcap", ["infiniband.mad.attributeid"],
                                                     "infiniband.bth.destqp == 1")]
    for attr, n in ((0x10, 6), (0x13, 5), (0x14, 5), (0x15, 5), (0x16, 5), (0x12, 1)):
        assert attrs.count(attr) >= n, (hex(attr), attrs)
    bound = test_firmware.deepest_chains(*test_firmware.call_graph())["main"][0]
    for nic in ("rnic0", "rnic1"):
        m = re.search(r"stack high-water (\d+) of (\d+) bytes", (tmp_path / f"{nic}.log").read_text())
        assert m and 0 < int(m.group(1)) <= bound <= int(m.group(2)), (nic, m and m.group(0), bound)
        print(f"{nic}: {m.group(0)} (the call graph's bound: {bound})")


def test_unanswered_requests_are_bounded_and_destroying_answers_the_peer():
    """Requests a listener has not answered are at most 8: the 9th REQ (another communication ID)
    gets REJ "no resources" (3) and takes no CM ID, so a peer cannot fill the NIC's 32. Destroying
    an unanswered request sends REJ "timeout" (4) for the REQ, destroying an established
    connection sends a DREQ, as Linux's cm_destroy_id does: the peer does not wait out its
    retries."""
    req_linux, _, rtu, _, _ = rping_cm()
    reqs = []
    for k in range(9):
        f = bytearray(req_linux)
        struct.pack_into(">I", f, mad_off(f) + 24, 0x1000 + k)
        struct.pack_into("<I", f, len(f) - 4, R.icrc(bytes(f)))
        reqs.append(bytes(f).hex())
    r = Run(server_setup() + reqs)
    assert len(r.events) == 8 and r.counters["cm_ids"] == 9  # the listener and 8 requests
    rej = r.mads[-1]
    assert struct.unpack_from(">H", rej, mad_off(rej) + 16)[0] == 0x12
    assert struct.unpack_from(">IIBBH", rej, mad_off(rej) + 24)[1:] == (0x1008, 0, 0, 3)
    gone = Run(server_setup() + reqs[:1] + [cmd("CM_DESTROY_ID", S.CMDI_HANDLE, HANDLE=1)])
    rej = gone.mads[-1]
    assert struct.unpack_from(">IIBBH", rej, mad_off(rej) + 24)[1:] == (0x1000, 0, 0, 4)
    assert gone.counters["cm_ids"] == 1
    first = Run(server_setup() + [req_linux.hex(), accept()])
    local_id = struct.unpack_from(">I", first.mads[-1], mad_off(first.mads[-1]) + 24)[0]
    up = Run(server_setup() + [req_linux.hex(), accept(), with_remote_id(rtu, 4, local_id).hex(),
                               cmd("CM_DESTROY_ID", S.CMDI_HANDLE, HANDLE=1)])
    dreq = up.mads[-1]
    assert struct.unpack_from(">H", dreq, mad_off(dreq) + 16)[0] == 0x15
    assert struct.unpack_from(">II", dreq, mad_off(dreq) + 24) == (local_id, 0x390B5EA1)


# ---- SIDR (IBTA 12.11): the UD "connection" udaddy makes. Offsets of the standard's Tables 119
# and 120, from the MAD's data (tshark decodes only the MAD header of these).
UDP_SID = 0x01111C06  # udaddy's: RDMA_PS_UDP << 16 | 7174


def sidr_req(sid=UDP_SID):
    """rping's REQ made a SIDR_REQ as Linux sends one: request ID, P_Key, service ID, and 216 bytes
    of private data starting with rdma_cm's header."""
    f = bytearray(rping_cm()[0])
    m = mad_off(f)
    d = m + 24
    hdr = bytes(f[d + 136:d + 136 + 36])
    f[d:d + 232] = bytes(f[d:d + 4]) + b"\xff\xff\0\0" + sid.to_bytes(8, "big") + hdr + bytes(180)
    struct.pack_into(">H", f, m + 16, 0x17)
    struct.pack_into("<I", f, len(f) - 4, R.icrc(bytes(f)))
    return bytes(f), hdr


def ud_setup(listen=True):
    """Context 1: a CM event ring, a CM ID (listening on udaddy's service ID), a UD QP 2."""
    return [cmd("CM_CREATE_EVQ", S.CMDI_CM_CREATE_EVQ, BASE=EVQ, LOG_SIZE=4), cmd("CM_CREATE_ID")] + \
        ([cmd("CM_LISTEN", S.CMDI_CM_LISTEN, ID=0, SERVICE_ID=UDP_SID)] if listen else []) + [
        cmd("ALLOC_PD"),
        cmd("CREATE_CQ", S.CMDI_CREATE_CQ, BASE=0x20000, LOG_SIZE=4),
        cmd("CREATE_QP", S.CMDI_CREATE_QP, PDN=1, TYPE=S.QPT["UD"], SQ_LOG=4, RQ_LOG=4, SQ_BASE=0x30000,
            RQ_BASE=0x40000, SEND_CQN=1, RECV_CQN=1)]


def test_sidr_passive_side(tmp_path):
    """A SIDR_REQ for nobody gets status 1 (service ID not supported); for a listener it becomes a
    CONNECT_REQUEST (UD, the 216 bytes of private data) and CM_ACCEPT answers with the QPN and
    Q_Key given; a SIDR_REQ seen again before the answer is dropped; CM_REJECT answers status 2."""
    req, hdr = sidr_req()
    rid = req[mad_off(req) + 24:][:4]
    for run, status in ((Run(ud_setup(listen=False) + [req.hex(), HOLD]), 1),
                        (Run(ud_setup() + [req.hex(), req.hex(), cmd("CM_ACCEPT", S.CMDI_CM_ACCEPT, ID=1, QPN=OUR_QPN,
                                                                    QKEY=0x01234567)]), 0),
                        (Run(ud_setup() + [req.hex(), cmd("CM_REJECT", S.CMDI_CM_REJECT, ID=1, REASON=28)]), 2)):
        assert len(run.mads) == 1, run.out
        rep = run.mads[0]
        check_answer(rep, req)
        assert decode(tmp_path, rep, ["infiniband.mad.attributeid"])[0] == "0x0018"
        d = mad_off(rep) + 24
        assert rep[d:d + 4] == rid and rep[d + 4] == status
        assert int.from_bytes(rep[d + 12:d + 20], "big") == UDP_SID
        if status == 0:
            assert int.from_bytes(rep[d + 8:d + 11], "big") == OUR_QPN and rep[d + 20:d + 24] == bytes.fromhex("01234567")
            ev = run.events[0]
            E = S.CM_EVENT
            assert field(E, ev, "TYPE") == S.ENUM["CM_EV"]["CONNECT_REQUEST"] and field(E, ev, "UD") == 1
            assert field(E, ev, "PDATA_LEN") == 216 and field(E, ev, "PDATA")[:36] == hdr
            assert run.counters["dup"] == 1 and len(run.events) == 1
            assert run.cmds[-1][0] == 0


def test_sidr_active_side():
    """CM_CONNECT with a UD QP sends a SIDR_REQ with the staged private data; the SIDR_REP brings
    ESTABLISHED with the peer's QPN and Q_Key, a status brings UNREACHABLE with it."""
    pdata = bytes(range(40))
    lines = ud_setup(listen=False) + [
        cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=0, OFFSET=0, LEN=40, TOTAL=40, DATA=pdata + bytes(72)),
        "ARP 10.99.0.3 525400990003",
        connect(SERVICE_ID=UDP_SID, RESP_RES=0, INIT_DEPTH=0)]
    sent = Run(lines, nic=CLIENT).mads
    assert len(sent) == 1
    req = sent[0]
    d = mad_off(req) + 24
    assert struct.unpack_from(">H", req, mad_off(req) + 16)[0] == 0x17
    assert req[d + 4:d + 6] == b"\xff\xff" and int.from_bytes(req[d + 8:d + 16], "big") == UDP_SID
    assert req[d + 16:d + 56] == pdata and req[d + 56:d + 232] == bytes(176)
    for status in (0, 1):
        rep = bytearray(req)
        rep[0:6], rep[6:12] = req[6:12], req[0:6]
        rep[d + 4:d + 232] = bytes(228)
        rep[d + 4] = status
        rep[d + 8:d + 11] = (0x33).to_bytes(3, "big")
        rep[d + 20:d + 24] = bytes.fromhex("01234567")
        rep[d + 96:d + 100] = b"pong"
        struct.pack_into(">H", rep, mad_off(rep) + 16, 0x18)
        ihl = R._ip_len(rep)
        rep[14 + 12:14 + 16], rep[14 + 16:14 + 20] = req[14 + 16:14 + 20], req[14 + 12:14 + 16]
        struct.pack_into("<I", rep, len(rep) - 4, R.icrc(bytes(rep)))
        assert ihl == 20
        ev = Run(lines + [bytes(rep).hex()], nic=CLIENT).events[-1]
        E = S.CM_EVENT
        if status == 0:
            assert field(E, ev, "TYPE") == S.ENUM["CM_EV"]["ESTABLISHED"] and field(E, ev, "UD") == 1
            assert field(E, ev, "REMOTE_QPN") == 0x33 and field(E, ev, "QKEY") == 0x01234567
            assert field(E, ev, "PDATA")[:4] == b"pong"
        else:
            assert field(E, ev, "TYPE") == S.ENUM["CM_EV"]["UNREACHABLE"] and field(E, ev, "REASON") == 1


def test_a_qp_the_host_moves():
    """rdma_cm's external QP: with EXTERNAL the REP brings CONNECT_RESPONSE (the peer's QPN and
    PSN, ours) and moves nothing; CM_ESTABLISH sends the RTU. A passive QP already in RTS is left
    so, and the REP carries its receive PSN."""
    req = Run(client_setup() + [connect(EXTERNAL=1)], nic=CLIENT).mads[-1]
    rts = [cmd("MODIFY_QP", S.CMDI_MODIFY_QP, QPN=OUR_QPN, ATTR_MASK=S.QP_ATTR["STATE"] | S.QP_ATTR["AV"] |
               S.QP_ATTR["PATH_MTU"] | S.QP_ATTR["DEST_QPN"] | S.QP_ATTR["RQ_PSN"] | S.QP_ATTR["MAX_DEST_RD_ATOMIC"] |
               S.QP_ATTR["MIN_RNR_TIMER"], NEW_STATE=S.QPS["RTR"], PATH_MTU=3, DEST_QPN=OUR_QPN, RQ_PSN=0x123,
               MAX_DEST_RD_ATOMIC=1, MIN_RNR_TIMER=12, IS_GLOBAL=1, HOP_LIMIT=64,
               DGID=bytes(10) + b"\xff\xff" + bytes([10, 99, 0, 2])),
           cmd("MODIFY_QP", S.CMDI_MODIFY_QP, QPN=OUR_QPN, ATTR_MASK=S.QP_ATTR["STATE"] | S.QP_ATTR["SQ_PSN"] |
               S.QP_ATTR["TIMEOUT"] | S.QP_ATTR["RETRY_CNT"] | S.QP_ATTR["RNR_RETRY"] | S.QP_ATTR["MAX_QP_RD_ATOMIC"],
               NEW_STATE=S.QPS["RTS"], SQ_PSN=0xABCDE, TIMEOUT=14, RETRY_CNT=7, RNR_RETRY=7, MAX_RD_ATOMIC=1)]
    server = Run(server_setup() + [req.hex()] + rts + [accept()])
    rep = server.mads[-1]
    m = mad_off(rep) + 24
    assert struct.unpack_from(">H", rep, mad_off(rep) + 16)[0] == 0x13
    assert [st for st, _ in server.cmds[-3:]] == [0, 0, 0]
    assert int.from_bytes(rep[m + 20:m + 23], "big") == 0x123
    establish = cmd("CM_ESTABLISH", S.CMDI_HANDLE, HANDLE=0)
    query = cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN)
    client = Run(client_setup() + [connect(EXTERNAL=1), rep.hex(), query, establish], nic=CLIENT)
    E = S.CM_EVENT
    ev = client.events[-1]
    assert field(E, ev, "TYPE") == S.ENUM["CM_EV"]["CONNECT_RESPONSE"] and field(E, ev, "REMOTE_PSN") == 0x123
    assert field(E, ev, "LOCAL_PSN") == int.from_bytes(req[mad_off(req) + 24 + 44:][:3], "big")
    assert field(S.CMDO_QUERY_QP, client.cmds[-2][1], "STATE") == S.QPS["INIT"]  # not moved
    assert client.cmds[-1][0] == 0
    assert [struct.unpack_from(">H", f, mad_off(f) + 16)[0] for f in client.mads] == [0x10, 0x14]
