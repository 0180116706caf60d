"""A minimal host-link client (the PCIe side of rnic-sim) for tests: BAR0 reads and writes from
Python, with the message layout taken from the generated spec."""
import fcntl
import mmap
import os
import pathlib
import socket
import struct
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "spec" / "gen"))
import rnic_spec as S  # noqa: E402

HDR = struct.Struct("<IIQQII")
assert HDR.size == S.LINK_HDR[0]
MSG = S.LINK_MSG


class LinkClient:
    """`memory`: {bus address: bytearray} this process maps for the NIC (DMA reads of it are
    answered, writes into it applied); anything else is refused, as the host library does."""

    def __init__(self, sock_path, timeout=30, memory=None, ring=False):
        self.mem = memory if memory is not None else {}
        self.dma_reads = []  # bus addresses the NIC asked this process for
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        self.s.connect(str(sock_path))
        self.tag = 0
        self._send(MSG["HELLO"], value=S.LINK_VERSION)
        t, _, _, value, status, _ = self._recv_until(MSG["HELLO_ACK"])
        assert status == 0, status
        self.ctx = value
        self.ring = None
        if ring:  # posted writes through shared memory, as the host library makes them (sealed)
            fd = os.memfd_create("link-client-ring", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
            os.ftruncate(fd, S.LINK_RING[0])
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
            self.ring = mmap.mmap(fd, S.LINK_RING[0])
            socket.send_fds(self.s, [HDR.pack(MSG["MMIO_RING"], 0, 0, 0, 0, 0)], [fd])
            self.ring_fd = fd
            self.slot = 0

    def bus(self, offset):
        """Bus address of `offset` in this process's window."""
        return ((self.ctx + 1) << S.LINK_BUS_CTX_SHIFT) | offset

    def _region(self, addr, n):
        for base, buf in self.mem.items():
            if base <= addr and addr + n <= base + len(buf):
                return buf, addr - base
        return None, 0

    def _send(self, mtype, addr=0, value=0, tag=0, payload=b"", status=0):
        self.s.sendall(HDR.pack(mtype, len(payload), addr, value, tag, status) + payload)

    def _recvn(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("rnic-sim closed the link")
            buf += chunk
        return buf

    def _recv_until(self, mtype, tag=None):
        while True:
            t, ln, addr, value, rtag, status = HDR.unpack(self._recvn(HDR.size))
            payload = self._recvn(ln) if ln else b""
            if t == MSG["DMA_RD"]:
                self.dma_reads.append(addr)
                buf, off = self._region(addr, value)
                if buf is None:
                    self._send(MSG["DMA_RD_RESP"], addr=addr, tag=rtag, status=1)
                else:
                    self._send(MSG["DMA_RD_RESP"], addr=addr, tag=rtag, payload=bytes(buf[off:off + value]))
                continue
            if t == MSG["DMA_WR"]:
                buf, off = self._region(addr, ln)
                if buf is not None:
                    buf[off:off + ln] = payload
                continue
            if t == MSG["FENCE"]:
                self._send(MSG["FENCE_ACK"], tag=rtag)
                continue
            if t == mtype and (tag is None or rtag == tag):
                return t, ln, addr, value, status, payload

    def read32(self, off):
        self.tag += 1
        self._send(MSG["MMIO_RD"], addr=off, tag=self.tag)
        return self._recv_until(MSG["MMIO_RD_RESP"], self.tag)[3] & 0xFFFFFFFF

    def write32(self, off, value):
        """A posted write: into the shared ring if there is one, else a message."""
        if self.ring is None:
            self._send(MSG["MMIO_WR"], addr=off, value=value)
            return
        e = S.LINK_RING[1]["ENTRIES"][0] + (self.slot % (1 << S.LINK_RING_LOG)) * S.LINK_RING_ENTRY[0]
        f = S.LINK_RING_ENTRY[1]
        while self.slot - struct.unpack_from("<I", self.ring, S.LINK_RING[1]["HEAD"][0])[0] >= 1 << S.LINK_RING_LOG:
            pass  # full: the simulator drains it every few clocks
        struct.pack_into("<II", self.ring, e + f["ADDR"][0], off, value)
        struct.pack_into("<I", self.ring, e + f["SEQ"][0], self.slot + 1)  # last: publishes the entry
        self.slot += 1
        struct.pack_into("<I", self.ring, S.LINK_RING[1]["TAIL"][0], self.slot)

    def stat(self, name):
        return self.read32(S.STATS["COUNTER0"][0] + 4 * S.STAT[name])

    def counters(self):
        """Every datapath counter, by name (enum STAT)."""
        return {k: self.stat(k) for k in S.STAT}

    def close(self):
        try:
            self._send(MSG["BYE"])
        finally:
            self.s.close()
            if self.ring is not None:
                os.close(self.ring_fd)
