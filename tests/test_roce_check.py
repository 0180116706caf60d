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


def test_flipped_bit_is_caught():
    roce = [f for _, f in R.read_pcap(TRACES[0]) if R.is_roce_v4(f)]
    f = bytearray(roce[0])
    f[60] ^= 0x04
    assert not R.icrc_ok(bytes(f))
    # variant fields are outside the ICRC: changing the TTL keeps it valid
    g = bytearray(roce[0])
    g[22] = 3
    assert R.icrc_ok(bytes(g))
