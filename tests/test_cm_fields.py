"""Every kind of CM message this NIC sends (REQ, REP, RTU, REJ, DREQ, DREP, SIDR_REQ, SIDR_REP; it
sends no MRA, LAP or APR), decoded by tshark's InfiniBand dissector, each field against what the
commands asked for, rdma_cm's private-data header (its "IP CM" decode) included: the firmware's
offsets (firmware/src/cm.h) checked by a decoder that is not ours. tshark has no SIDR dissector:
a SIDR message's MAD header is tshark's, its body is read at the offsets of IBTA 12.11.1 and
12.11.2, written out here. The firmware runs in its harness (build/fw/test_fw --frames)."""
import ipaddress
import struct
import subprocess

import roce_check as R
from link_client import S
from test_cm import (CLIENT, HOLD, OUR_QPN, SERVER, SID, Run, cmd, field, mad_off, server_setup)

CLIENT_GUID = 0x525400FFFE990002 ^ (2 << 56)  # the MAC's EUI-64 (GID 1's interface ID)
SERVER_GUID = 0x525400FFFE990003 ^ (2 << 56)
SERVER6 = bytes.fromhex("fe80000000000000505400fffe990003")
CLIENT6 = bytes.fromhex("fe80000000000000505400fffe990002")
FIELDS = [ln.split("\t")[2] for ln in subprocess.run(["tshark", "-G", "fields"], capture_output=True, text=True,
                                                         check=True).stdout.splitlines()
          if ln.count("\t") >= 2 and ln.split("\t")[2].startswith(("infiniband.cm.", "infiniband.mad."))]


def decode(tmp_path, frame):
    """Every InfiniBand CM and MAD field tshark finds in the frame: {name: value}."""
    path = tmp_path / "m.pcap"
    R.write_pcap(path, [frame])
    rows = R.tshark_fields(path, FIELDS)
    assert len(rows) == 1
    return {f: v for f, v in zip(FIELDS, rows[0]) if v}


def num(v):
    return int(v, 0)


def attr(frame):
    return struct.unpack_from(">H", frame, mad_off(frame) + 16)[0]


def mads(run, a):
    return [f for f in run.mads if attr(f) == a]


def cma_header(src, dst, sport, private):
    """rdma_cm's private-data header (struct cma_hdr): version 0, IP version << 4, the active
    side's port, source and destination address (IPv4 in the last 4 bytes of each 16)."""
    v = 6 if len(src) == 16 else 4
    pad = lambda a: a if len(a) == 16 else bytes(12) + a  # noqa: E731
    return bytes([0, v << 4]) + struct.pack(">H", sport) + pad(src) + pad(dst) + private


PRIVATE = bytes(range(0x41, 0x41 + 20))
HDR4 = cma_header(bytes([10, 99, 0, 2]), bytes([10, 99, 0, 3]), 0xAD6F, PRIVATE)


def client(pdata=HDR4, **connect):
    """Context 1 of the client's NIC: an RC QP in INIT, private data staged, CM_CONNECT."""
    args = dict(ID=0, QPN=OUR_QPN, SERVICE_ID=SID, DGID=bytes(10) + b"\xff\xff" + bytes([10, 99, 0, 3]),
                RESP_RES=3, INIT_DEPTH=2, RETRY_CNT=6, RNR_RETRY=5, RESP_TIMEOUT=18, MAX_RETRIES=9,
                ACK_TIMEOUT=17, TCLASS=0x20, PATH_MTU=3)
    args.update(connect)
    return server_setup()[:1] + [cmd("CM_CREATE_ID")] + server_setup()[3:7] + [
        cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=0, OFFSET=0, LEN=len(pdata), TOTAL=len(pdata),
            DATA=pdata + bytes(112 - len(pdata))),
        "ARP 10.99.0.3 525400990003", solicitation().hex(),
        cmd("CM_CONNECT", S.CMDI_CM_CONNECT, **args)]


def solicitation():
    """The server's neighbour solicitation for the client's link-local address (RFC 4861): the
    client's firmware answers it and learns the server's MAC, as the peer of an IPv6 REQ."""
    mac = bytes.fromhex(SERVER[0])
    icmp = bytearray(struct.pack(">BBHI", 135, 0, 0, 0) + CLIENT6 + bytes([1, 1]) + mac)
    pseudo = SERVER6 + CLIENT6 + struct.pack(">I3xB", len(icmp), 58)
    words = pseudo + bytes(icmp)
    c = sum(struct.unpack(f">{len(words) // 2}H", words))
    while c >> 16:
        c = (c & 0xFFFF) + (c >> 16)
    struct.pack_into(">H", icmp, 2, ~c & 0xFFFF)
    ip6 = struct.pack(">IHBB", 6 << 28, len(icmp), 58, 255) + SERVER6 + CLIENT6
    return bytes.fromhex(CLIENT[0]) + mac + b"\x86\xdd" + ip6 + bytes(icmp)


def test_req_fields(tmp_path):
    """Our REQ: every field tshark decodes is what CM_CONNECT asked (or what RoCE fixes: LIDs
    0xFFFF, P_Key 0xFFFF, hop limit 64, SL 0, no flow label, rate 0 = the port's), the
    alternate path all zeros, and rdma_cm's header where it belongs (byte 140 of the MAD's data):
    version 0, IPv4, the source port, both addresses, then the application's bytes."""
    r = Run(client(), nic=CLIENT)
    assert [c[0] for c in r.cmds] == [0] * 8, r.out
    req = mads(r, 0x10)[0]
    d = decode(tmp_path, req)
    local_id = struct.unpack_from(">I", req, mad_off(req) + 24)[0]
    want = {
        "infiniband.mad.method": 3, "infiniband.mad.attributeid": 0x10, "infiniband.mad.classversion": 2,
        "infiniband.mad.mgmtclass": 7, "infiniband.mad.baseversion": 1,
        "infiniband.cm.req": local_id, "infiniband.cm.req.serviceid": SID,
        "infiniband.cm.req.localcaguid": CLIENT_GUID, "infiniband.cm.req.localqkey": 0,
        "infiniband.cm.req.localqpn": OUR_QPN, "infiniband.cm.req.responderres": 3,
        "infiniband.cm.req.localeecn": 0, "infiniband.cm.req.initdepth": 2, "infiniband.cm.req.remoteeecn": 0,
        "infiniband.cm.req.remoteresptout": 18, "infiniband.cm.req.transpsvctype": 0,
        "infiniband.cm.req.e2eflowctrl": 0, "infiniband.cm.req.localresptout": 18,
        "infiniband.cm.req.retrcount": 6, "infiniband.cm.req.pkey": 0xFFFF, "infiniband.cm.req.pppmtu": 3,
        "infiniband.cm.req.rdcexist": 0, "infiniband.cm.req.rnrretrcount": 5, "infiniband.cm.req.maxcmretr": 9,
        "infiniband.cm.req.srq": 0, "infiniband.cm.req.ext_transport": 0,
        "infiniband.cm.req.prim_locallid": 0xFFFF, "infiniband.cm.req.prim_remotelid": 0xFFFF,
        "infiniband.cm.req.prim_flowlabel": 0, "infiniband.cm.req.prim_pktrate": 0,
        "infiniband.cm.req.prim_tfcclass": 0x20, "infiniband.cm.req.prim_hoplim": 64,
        "infiniband.cm.req.prim_sl": 0, "infiniband.cm.req.prim_subnetlocal": 0,
        "infiniband.cm.req.prim_localacktout": 17,
        "infiniband.cm.req.alt_locallid": 0, "infiniband.cm.req.alt_remotelid": 0,
        "infiniband.cm.req.alt_flowlabel": 0, "infiniband.cm.req.alt_pktrate": 0,
        "infiniband.cm.req.alt_tfcclass": 0, "infiniband.cm.req.alt_hoplim": 0, "infiniband.cm.req.alt_sl": 0,
        "infiniband.cm.req.alt_subnetlocal": 0, "infiniband.cm.req.alt_localacktout": 0,
        "infiniband.cm.req.ip_cm.majv": 0, "infiniband.cm.req.ip_cm.minv": 0, "infiniband.cm.req.ip_cm.ipv": 4,
        "infiniband.cm.req.ip_cm.sport": 0xAD6F,
    }
    assert {k: num(d[k]) for k in want} == want
    assert d["infiniband.cm.req.prim_localgid_ipv4"] == "10.99.0.2"
    assert d["infiniband.cm.req.prim_remotegid_ipv4"] == "10.99.0.3"
    assert d["infiniband.cm.req.alt_localgid"] == d["infiniband.cm.req.alt_remotegid"] == "00" * 16
    assert (d["infiniband.cm.req.ip_cm.sip4"], d["infiniband.cm.req.ip_cm.dip4"]) == ("10.99.0.2", "10.99.0.3")
    assert d["infiniband.cm.req.ip_cm.private"] == (PRIVATE + bytes(56 - len(PRIVATE))).hex()
    assert num(d["infiniband.cm.req.startpsn"]) < 1 << 24


def test_req_over_ipv6_fields(tmp_path):
    """The same over IPv6: the GIDs are the link-local addresses, rdma_cm's header says IPv6."""
    hdr = cma_header(CLIENT6, SERVER6, 0x1234, PRIVATE)
    r = Run(client(hdr, DGID=SERVER6), nic=CLIENT)
    req = mads(r, 0x10)[0]
    assert req[12:14] == b"\x86\xdd"
    d = decode(tmp_path, req)
    ip6 = lambda b: str(ipaddress.IPv6Address(b))  # noqa: E731
    assert (d["infiniband.cm.req.prim_localgid"], d["infiniband.cm.req.prim_remotegid"]) == (ip6(CLIENT6), ip6(SERVER6))
    assert num(d["infiniband.cm.req.ip_cm.ipv"]) == 6 and num(d["infiniband.cm.req.ip_cm.sport"]) == 0x1234
    assert (d["infiniband.cm.req.ip_cm.sip6"], d["infiniband.cm.req.ip_cm.dip6"]) == (ip6(CLIENT6), ip6(SERVER6))
    assert d["infiniband.cm.req.ip_cm.private"].startswith(PRIVATE.hex())


def accepted(req, mtu=None, pdata=b"REP private data", **accept):
    """The server's NIC: our REQ to its listener, accepted with these parameters."""
    args = dict(ID=1, QPN=OUR_QPN, RESP_RES=2, INIT_DEPTH=3, RNR_RETRY=4, MIN_RNR_TIMER=12)
    args.update(accept)
    host = [f"HOST {mtu} ffff"] if mtu else []
    return Run(host + server_setup() + [
        req.hex(),
        cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=1, OFFSET=0, LEN=len(pdata), TOTAL=len(pdata),
            DATA=pdata + bytes(112 - len(pdata))),
        cmd("CM_ACCEPT", S.CMDI_CM_ACCEPT, **args),
        cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN)])


def our_req(**connect):
    return mads(Run(client(**connect), nic=CLIENT), 0x10)[0]


def test_rep_rtu_dreq_drep_fields(tmp_path):
    """Our REP (to our own REQ), our RTU (to that REP), our DREQ and DREP: comm IDs paired, the
    QPNs and PSNs the QPs got, what CM_ACCEPT asked, target ACK delay 0 (this NIC's
    local_ca_ack_delay), the private data given (REP) or none."""
    req = our_req()
    req_id = struct.unpack_from(">I", req, mad_off(req) + 24)[0]
    srv = accepted(req)
    assert [c[0] for c in srv.cmds] == [0] * 10, srv.out
    rep = mads(srv, 0x13)[0]
    d = decode(tmp_path, rep)
    rep_id = struct.unpack_from(">I", rep, mad_off(rep) + 24)[0]
    q = srv.cmds[-1][1]
    want = {"infiniband.mad.method": 3, "infiniband.mad.attributeid": 0x13,
            "infiniband.cm.rep": rep_id, "infiniband.cm.rep.remotecommid": req_id,
            "infiniband.cm.rep.localqkey": 0, "infiniband.cm.rep.localqpn": OUR_QPN,
            "infiniband.cm.rep.localeecn": 0, "infiniband.cm.rep.startpsn": field(S.CMDO_QUERY_QP, q, "RQ_PSN"),
            "infiniband.cm.rep.respres": 2, "infiniband.cm.rep.initdepth": 3, "infiniband.cm.rep.tgtackdelay": 0,
            "infiniband.cm.rep.failoveracc": 0, "infiniband.cm.rep.e2eflowctrl": 0,
            "infiniband.cm.rep.rnrretrcount": 4, "infiniband.cm.rep.srq": 0,
            "infiniband.cm.rep.localcaguid": SERVER_GUID}
    assert {k: num(d[k]) for k in want} == want
    assert d["infiniband.cm.rep.private"] == (b"REP private data" + bytes(180)).hex()
    assert d["infiniband.mad.transactionid"] == decode(tmp_path, req)["infiniband.mad.transactionid"]
    # the client takes the REP: RTU
    cli = Run(client() + [rep.hex(), cmd("QUERY_QP", S.CMDI_HANDLE, HANDLE=OUR_QPN),
                          cmd("CM_DISCONNECT", S.CMDI_HANDLE, HANDLE=0)], nic=CLIENT)
    rtu, dreq = mads(cli, 0x14)[0], mads(cli, 0x15)[0]
    d = decode(tmp_path, rtu)
    assert (num(d["infiniband.cm.rtu.localcommid"]), num(d["infiniband.cm.rtu.remotecommid"])) == (req_id, rep_id)
    assert d["infiniband.cm.rtu.private"] == "00" * 224
    q = cli.cmds[-2][1]  # a starting PSN is where its sender receives from: the client sends from the REP's
    assert field(S.CMDO_QUERY_QP, q, "SQ_PSN") == want["infiniband.cm.rep.startpsn"]
    assert field(S.CMDO_QUERY_QP, q, "RQ_PSN") == num(decode(tmp_path, req)["infiniband.cm.req.startpsn"])
    d = decode(tmp_path, dreq)
    assert (num(d["infiniband.cm.dreq.localcommid"]), num(d["infiniband.cm.dreq.remotecommid"]),
            num(d["infiniband.cm.req.remoteqpneecn"])) == (req_id, rep_id, OUR_QPN)
    assert d["infiniband.cm.dreq.private"] == "00" * 220
    # the server takes the RTU, then the DREQ: DREP
    srv = Run(server_setup() + [req.hex(), cmd("CM_ACCEPT", S.CMDI_CM_ACCEPT, ID=1, QPN=OUR_QPN, RESP_RES=2,
                                                INIT_DEPTH=3, RNR_RETRY=4, MIN_RNR_TIMER=12),
                                rtu.hex(), dreq.hex()])
    drep = mads(srv, 0x16)[0]
    d = decode(tmp_path, drep)
    assert (num(d["infiniband.cm.drsp.localcommid"]), num(d["infiniband.cm.drsp.remotecommid"])) == (rep_id, req_id)
    assert d["infiniband.cm.drsp.private"] == "00" * 224
    assert d["infiniband.mad.transactionid"] == decode(tmp_path, dreq)["infiniband.mad.transactionid"]


def test_rej_fields(tmp_path):
    """rdma_reject's REJ: our ID and the requester's, the REQ rejected, reason 28, no ARI, the
    private data (148 bytes at the most); nobody listening: REJ 8 with no local ID of ours."""
    req = our_req()
    req_id = struct.unpack_from(">I", req, mad_off(req) + 24)[0]
    pdata = bytes(range(100))
    srv = Run(server_setup() + [req.hex(),
                                cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=1, OFFSET=0, LEN=100, TOTAL=160,
                                    DATA=pdata + bytes(12)),
                                cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=1, OFFSET=100, LEN=60, TOTAL=160,
                                    DATA=bytes(range(100, 160)) + bytes(52)),
                                cmd("CM_REJECT", S.CMDI_CM_REJECT, ID=1, REASON=28)])
    rej = mads(srv, 0x12)[0]
    d = decode(tmp_path, rej)
    want = {"infiniband.cm.rej.localcommid": struct.unpack_from(">I", rej, mad_off(rej) + 24)[0],
            "infiniband.cm.rej.remotecommid": req_id, "infiniband.cm.rej.msgrej": 0,
            "infiniband.cm.rej.rejinfolen": 0, "infiniband.cm.rej.reason": 28}
    assert {k: num(d[k]) for k in want} == want and want["infiniband.cm.rej.localcommid"] != 0
    assert d["infiniband.cm.rej.private"] == bytes(range(148)).hex()
    nobody = Run([req.hex(), HOLD])
    d = decode(tmp_path, nobody.mads[0])
    assert [num(d[k]) for k in ("infiniband.cm.rej.localcommid", "infiniband.cm.rej.remotecommid",
                                "infiniband.cm.rej.msgrej", "infiniband.cm.rej.reason")] == [0, req_id, 0, 8]


UDP_SID = 0x01110000 | 7174  # RDMA_PS_UDP


def test_sidr_fields(tmp_path):
    """SIDR_REQ (12.11.1) and SIDR_REP (12.11.2): the MAD header by tshark, the body at IBTA's
    offsets: request ID, P_Key, service ID, private data; status, QPN, Q_Key, the answer's
    private data, nothing in the class port info."""
    ud = dict(TYPE=S.QPT["UD"])
    cli = Run(server_setup()[:1] + [cmd("CM_CREATE_ID")] + server_setup()[3:5] + [
        cmd("CREATE_QP", S.CMDI_CREATE_QP, PDN=1, SQ_LOG=4, RQ_LOG=4, SQ_BASE=0x30000, RQ_BASE=0x40000,
            SEND_CQN=1, RECV_CQN=1, **ud),
        cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=0, OFFSET=0, LEN=100, TOTAL=200, DATA=bytes(range(100)) + bytes(12)),
        cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=0, OFFSET=100, LEN=100, TOTAL=200,
            DATA=bytes(range(100, 200)) + bytes(12)),
        "ARP 10.99.0.3 525400990003",
        cmd("CM_CONNECT", S.CMDI_CM_CONNECT, ID=0, QPN=OUR_QPN, SERVICE_ID=UDP_SID,
            DGID=bytes(10) + b"\xff\xff" + bytes([10, 99, 0, 3]), RESP_TIMEOUT=18, MAX_RETRIES=3, PATH_MTU=3)],
              nic=CLIENT)
    assert [c[0] for c in cli.cmds] == [0] * 8, cli.out
    sreq = mads(cli, 0x17)[0]
    d = decode(tmp_path, sreq)
    assert [num(d[k]) for k in ("infiniband.mad.baseversion", "infiniband.mad.mgmtclass",
                                "infiniband.mad.classversion", "infiniband.mad.method",
                                "infiniband.mad.attributeid")] == [1, 7, 2, 3, 0x17]
    body = sreq[mad_off(sreq) + 24:][:232]
    req_id, pkey, sid = struct.unpack_from(">IH2xQ", body, 0)
    assert (pkey, sid) == (0xFFFF, UDP_SID) and body[16:232] == bytes(range(200)) + bytes(16)
    srv = Run(server_setup()[:2] + [
        cmd("CM_LISTEN", S.CMDI_CM_LISTEN, ID=0, SERVICE_ID=UDP_SID, QP_TYPE=S.QPT["UD"])] + server_setup()[3:5] + [
        cmd("CREATE_QP", S.CMDI_CREATE_QP, PDN=1, SQ_LOG=4, RQ_LOG=4, SQ_BASE=0x30000, RQ_BASE=0x40000,
            SEND_CQN=1, RECV_CQN=1, **ud),
        sreq.hex(),
        cmd("CM_PDATA", S.CMDI_CM_PDATA, ID=1, OFFSET=0, LEN=12, TOTAL=12, DATA=b"SIDR answer!" + bytes(100)),
        cmd("CM_ACCEPT", S.CMDI_CM_ACCEPT, ID=1, QPN=OUR_QPN, QKEY=0x01234567)])
    assert [c[0] for c in srv.cmds] == [0] * 8, srv.out
    ev = srv.events[0]
    assert field(S.CM_EVENT, ev, "PDATA")[:216] == bytes(range(200)) + bytes(16)
    srep = mads(srv, 0x18)[0]
    d = decode(tmp_path, srep)
    assert [num(d[k]) for k in ("infiniband.mad.method", "infiniband.mad.attributeid")] == [3, 0x18]
    assert d["infiniband.mad.transactionid"] == decode(tmp_path, sreq)["infiniband.mad.transactionid"]
    body = srep[mad_off(srep) + 24:][:232]
    rid, status, qpn, sid, qkey = struct.unpack_from(">IB3xIQI", body, 0)
    assert (rid, status, qpn >> 8, sid, qkey) == (req_id, 0, OUR_QPN, UDP_SID, 0x01234567)
    assert body[24:96] == bytes(72) and body[96:232] == b"SIDR answer!" + bytes(124)
