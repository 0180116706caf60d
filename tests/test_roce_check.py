"""The independent packet checker itself: it accepts every frame Linux rxe put on the wire and
rejects a frame with one flipped bit."""
import pathlib

import pytest

import roce_check as R

TRACES = sorted(pathlib.Path(__file__).resolve().parents[2].joinpath("shared", "traces", "rxe").glob("*.pcap"))


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_rxe_trace_icrc(path):
    roce = [f for _, f in R.read_pcap(path) if R.is_roce_v4(f)]
    assert roce and all(R.icrc_ok(f) for f in roce)


def scapy_frame():
    """A RoCEv2 WRITE ONLY built by scapy, which computes the ICRC on its own."""
    from scapy.compat import raw
    from scapy.contrib.roce import BTH
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether
    return raw(Ether() / IP(src="10.0.0.1", dst="10.0.0.2", tos=3, ttl=9) / UDP(sport=0xC001, dport=4791) /
               BTH(opcode=0x0A, dqpn=0x12, psn=7, ackreq=1) / bytes(range(80)))


def test_agrees_with_scapy():
    assert R.icrc_ok(scapy_frame())


def test_flipped_bit_is_caught():
    f = bytearray(scapy_frame())
    f[60] ^= 0x04
    assert not R.icrc_ok(bytes(f))
    # variant fields are outside the ICRC: changing the TTL keeps it valid
    g = bytearray(scapy_frame())
    g[22] = 3
    assert R.icrc_ok(bytes(g))
