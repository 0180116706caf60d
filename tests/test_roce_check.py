"""The independent packet checker itself: it accepts every frame Linux rxe put on the wire and
rejects a frame with one flipped bit."""

import pytest

import roce_check as R


@pytest.mark.parametrize("name", R.RXE_TRACES)
def test_rxe_trace_icrc(name):
    path = R.RXE_DIR / f"{name}.pcap"
    roce = R.roce_frames(path, v6=False)
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
