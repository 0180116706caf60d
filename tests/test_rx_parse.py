"""The RX kernel's header stages (rx_hdr, rx_classify, rx_judge: hw/kernels/rx/rx_parse.c) judge
every frame as it comes in: each kind of frame a RoCEv2 receiver must drop, hand to the firmware
or take, over IPv4 and IPv6, counted where rdma_rxe and the IBTA would have it."""
import struct

from scapy.compat import raw
from scapy.contrib.roce import BTH
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw

import roce_check as R
from kernel_tb import S
from roce_layers import RETH
from test_isolation import KEY, MR_VA, NIC_IP, NIC_MAC, PEER_IP, PEER_MAC, QPN, Rx

NIC_IP6, PEER_IP6 = "fd00::31", "fd00::99"
MACS = dict(src=PEER_MAC.to_bytes(6, "big").hex(":"), dst=NIC_MAC.to_bytes(6, "big").hex(":"))


def roce(op=0x0A, psn=100, payload=b"x" * 32, v6=False, ip=None, udp=None, bth=None, eth=None, reth=True):
    """a WRITE ONLY (by default) to our QP, its fields overridden where given; ICRC made good"""
    l3 = IPv6(src=PEER_IP6, dst=NIC_IP6, **(ip or {})) if v6 else IP(src=PEER_IP, dst=NIC_IP, flags="DF", **(ip or {}))
    pkt = Ether(**(eth or MACS)) / l3 / UDP(sport=0xC000, dport=4791, chksum=0, **(udp or {}))
    pkt = pkt / BTH(**dict(dict(opcode=op, dqpn=QPN, psn=psn, ackreq=1, pkey=0xFFFF), **(bth or {})))
    if reth:
        pkt = pkt / RETH(va=MR_VA, rkey=KEY, dlen=len(payload))
    f = bytearray(raw(pkt / Raw(payload)))
    f[-4:] = struct.pack("<I", R.icrc(bytes(f)))
    return bytes(f)


def rx_v6():
    rx = Rx()
    ip6 = bytes.fromhex("fd000000000000000000000000000031")
    for i in range(4):
        rx.k.cfg(S.CFG_TBL_PORT, 0, S.PORTC["IPV6_0"][0] // 4 + i, int.from_bytes(ip6[4 * i:4 * i + 4], "big"))
    return rx


def test_each_kind_of_frame_is_judged():
    rx = rx_v6()
    cases = [
        (roce(), "roce"),                                             # lands: stat_write_bytes
        (roce(psn=101, ip={"chksum": 0x1234}), "drop_malformed"),     # IPv4 header checksum
        (roce(psn=101, ip={"ihl": 6, "options": [b"\0" * 4]}), "to_fw"),  # options: not RoCEv2 as we take it
        (roce(psn=101, udp={"len": 99}), "drop_malformed"),           # UDP length
        (roce(psn=101, bth={"version": 1}), "drop_malformed"),           # BTH TVer
        (roce(psn=101, bth={"pkey": 0x7FFF}), "drop_malformed"),      # P_Key
        (roce(psn=101, op=0x1F), "drop_malformed"),                   # no such opcode
        (roce(psn=101, op=0x0A, reth=False, payload=b""), "drop_malformed"),  # shorter than its RETH
        (roce(psn=101, eth=dict(src=MACS["src"], dst="02:00:00:00:00:77")), "drop_malformed"),  # not our MAC
        (raw(Ether(src=MACS["src"], dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=NIC_IP)), "to_fw"),
        (roce(psn=101, bth={"dqpn": 1}, op=0x64, reth=False), "to_fw"),  # a UD SEND to QP 1: the CM's
        (roce(psn=101, v6=True), "drop_src"),                         # IPv6 to our IPv4 QP: its peer is not
        (roce(psn=101, v6=True, ip={"plen": 50}), "drop_malformed"),  # IPv6 payload length
        (roce(psn=101), "roce"),
    ]
    names = ("roce", "drop_malformed", "to_fw", "drop_src", "drop_icrc", "drop_qpn")
    for f, counter in cases:
        before = {n: rx.stat(n) for n in names}
        rx.send(f)
        moved = {n for n in names if rx.stat(n) != before[n]}
        assert counter in moved, (counter, moved, f.hex())
    assert rx.stat("write_bytes") == 64 and rx.stat("drop_icrc") == 0
