"""Independent RoCEv2 frame checks for captures: a pcap reader, an ICRC checker built on zlib's
CRC-32 (it shares no code with the datapath kernels) and a tshark decoder.

    python tests/roce_check.py FILE.pcap    prints a summary, exits 1 on a bad frame
"""
import pathlib
import struct
import subprocess
import sys
import zlib

ROCE_PORT = 4791
# RoCEv2 traffic recorded between two Linux rdma_rxe peers (data/rxe/README.md): conformance vectors
RXE_DIR = pathlib.Path(__file__).resolve().parent / "data" / "rxe"
RXE_TRACES = ("ib_atomic_lat_cswap", "ib_atomic_lat_fadd", "ib_read_bw_64k", "ib_read_lat", "ib_send_bw_8k",
              "ib_send_lat", "ib_send_lat_rdma_cm", "ib_write_bw_64k", "ib_write_bw_64k_loss", "ib_write_lat",
              "ibv_rc_pingpong", "ibv_ud_pingpong", "rping")


def read_pcap(path):
    """Frames of a classic pcap file (microsecond or nanosecond magic) as (time_ns, bytes)."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack_from("<I", data, 0)[0]
    if magic == 0xA1B2C3D4:
        scale = 1000
    elif magic == 0xA1B23C4D:
        scale = 1
    else:
        raise ValueError(f"{path}: not a little-endian pcap file (magic {magic:#x})")
    linktype = struct.unpack_from("<I", data, 20)[0]
    if linktype != 1:
        raise ValueError(f"{path}: link type {linktype}, expected Ethernet")
    off, frames = 24, []
    while off + 16 <= len(data):
        sec, sub, incl, _orig = struct.unpack_from("<IIII", data, off)
        off += 16
        frames.append((sec * 1_000_000_000 + sub * scale, data[off:off + incl]))
        off += incl
    return frames


def write_pcap(path, frames):
    """A classic microsecond pcap of Ethernet frames (times: 1 us apart)."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            f.write(struct.pack("<IIII", i // 1_000_000, i % 1_000_000, len(fr), len(fr)) + fr)


def is_roce_v4(frame):
    return (len(frame) >= 14 + 20 + 8 + 12 + 4 and frame[12:14] == b"\x08\x00"
            and frame[23] == 17 and struct.unpack_from(">H", frame, 36)[0] == ROCE_PORT)


def is_roce_v6(frame):
    return (len(frame) >= 14 + 40 + 8 + 12 + 4 and frame[12:14] == b"\x86\xdd"
            and frame[20] == 17 and struct.unpack_from(">H", frame, 56)[0] == ROCE_PORT)


def is_roce(frame):
    """RoCEv2 over IPv4 or IPv6."""
    return is_roce_v4(frame) or is_roce_v6(frame)


def unpad(frame):
    """The frame without its Ethernet padding: a sender pads a frame shorter than 60 bytes with
    zeros (IEEE 802.3), so the IP header's length says where the packet ends."""
    if frame[12:14] == b"\x86\xdd":
        end = 14 + 40 + int.from_bytes(frame[18:20], "big")
    elif frame[12:14] == b"\x08\x00":
        end = 14 + int.from_bytes(frame[16:18], "big")
    else:
        return frame
    if end >= len(frame) or len(frame) != 60 or any(frame[end:]):
        return frame  # not padding: a damaged length, which the ICRC check reports
    return frame[:end]


def roce_frames(path, v6=True):
    """The RoCEv2 frames of a capture (over IPv4, and IPv6 unless v6 is False), padding removed."""
    return [unpad(f) for _, f in read_pcap(path) if (is_roce(f) if v6 else is_roce_v4(f))]


def _ip_len(frame):
    return 40 if frame[12:14] == b"\x86\xdd" else (frame[14] & 0x0F) * 4


def icrc(frame):
    """ICRC of a RoCEv2 frame per the RoCEv2 annex (A17.3.3): CRC-32 over 8 bytes of ones (in
    place of the LRH), then the IP header with the fields routers change as ones (IPv4: TOS, TTL,
    checksum; IPv6: traffic class, flow label, hop limit), the UDP header with the checksum as ones,
    the BTH with resv8a as ones, and the rest up to the ICRC."""
    ihl = _ip_len(frame)
    ip = bytearray(frame[14:14 + ihl])
    if ihl == 40:
        ip[0] |= 0x0F
        ip[1:4] = b"\xff\xff\xff"
        ip[7] = 0xFF
    else:
        ip[1] = 0xFF
        ip[8] = 0xFF
        ip[10:12] = b"\xff\xff"
    udp = bytearray(frame[14 + ihl:14 + ihl + 8])
    udp[6:8] = b"\xff\xff"
    rest = bytearray(frame[14 + ihl + 8:-4])
    rest[4] = 0xFF
    return zlib.crc32(b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(rest)) & 0xFFFFFFFF


def icrc_ok(frame):
    ihl = _ip_len(frame)
    if ihl < 20 or len(frame) < 14 + ihl + 8 + 12 + 4:
        return False  # a damaged header: no ICRC to check
    return icrc(frame) == struct.unpack_from("<I", frame, len(frame) - 4)[0]


def bth(frame):
    """(opcode, dest QPN, PSN, AckReq) of a RoCEv2 frame."""
    b = 14 + _ip_len(frame) + 8
    return (frame[b], int.from_bytes(frame[b + 5:b + 8], "big"),
            int.from_bytes(frame[b + 9:b + 12], "big"), bool(frame[b + 8] & 0x80))


def with_dest_qpn(frame, qpn):
    """The frame sent to another QP: its BTH dest QPN replaced, its ICRC computed again (still
    wrong if it was)."""
    b = 14 + _ip_len(frame) + 8
    f = bytearray(frame)
    f[b + 5:b + 8] = qpn.to_bytes(3, "big")
    struct.pack_into("<I", f, len(f) - 4, icrc(bytes(f)) ^ (0 if icrc_ok(frame) else 1))
    return bytes(f)


def tshark_fields(path, fields, display_filter="udp.dstport == 4791"):
    """Rows of tshark's decode of the capture (RoCEv2 on 4791), one list of strings per frame."""
    cmd = ["tshark", "-r", str(path), "-o", "infiniband.rroce.port:4791", "-Y", display_filter,
           "-T", "fields", "-E", "separator=\t"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def main(path):
    frames = read_pcap(path)
    roce = roce_frames(path)
    bad = [i for i, f in enumerate(roce) if not icrc_ok(f)]
    print(f"{path}: {len(frames)} frames, {len(roce)} RoCEv2, {len(bad)} with a bad ICRC")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
