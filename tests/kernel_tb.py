"""Cycle-by-cycle driver for the HLS C kernels through their DPI-C entry points (ctypes).

The same `rnic_<k>_dpi_new` / `rnic_<k>_dpi_step` functions that the SystemVerilog wrappers call
once per clock are called here once per simulated clock, with the port vectors laid out by the
generated spec (spec/gen/rnic_spec.py, PORT_*)."""
import ctypes
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "spec" / "gen"))
import rnic_spec as S  # noqa: E402

# RNIC_KERNELS_LIB: another build of them (make tblchk's, which counts accesses to their memories)
LIB_PATH = pathlib.Path(os.environ.get("RNIC_KERNELS_LIB", ROOT / "build" / "kernels" / "libkernels.so"))
_lib = None


def lib():
    global _lib
    if _lib is None:
        subprocess.run(["make", "-s", "-C", str(ROOT), "kernels"], check=True)
        _lib = ctypes.CDLL(str(LIB_PATH))
    return _lib


def _layout(name):
    words, fields = getattr(S, "PORT_" + name)
    return words, {f[0]: f for f in fields}


class Port:
    """A port vector: get/set fields by name; nested ports (e.g. CPL) as dicts."""

    def __init__(self, name, words=None):
        self.name = name
        self.nwords, self.fields = _layout(name)
        self.w = words if words is not None else (ctypes.c_uint32 * self.nwords)()

    def _base(self, field):
        return self.fields[field][3]

    def set(self, field, value, base=0):
        fname, ftype, bits, word, nwords = self.fields[field]
        word += base
        if ftype == "bytes":
            data = bytes(value).ljust(bits // 8, b"\0")
            for i in range(nwords):
                self.w[word + i] = int.from_bytes(data[4 * i:4 * i + 4], "little")
        elif hasattr(S, "PORT_" + ftype):
            sub = Port(ftype, self.w)
            for k, v in value.items():
                sub.set(k, v, base=word)
        else:
            value &= (1 << bits) - 1
            for i in range(nwords):
                self.w[word + i] = (value >> (32 * i)) & 0xFFFFFFFF

    def get(self, field, base=0):
        fname, ftype, bits, word, nwords = self.fields[field]
        word += base
        if ftype == "bytes":
            return b"".join(self.w[word + i].to_bytes(4, "little") for i in range(nwords))[:bits // 8]
        if hasattr(S, "PORT_" + ftype):
            sub = Port(ftype, self.w)
            return {k: sub.get(k, base=word) for k in sub.fields}
        v = 0
        for i in range(nwords):
            v |= self.w[word + i] << (32 * i)
        return v & ((1 << bits) - 1)

    def clear(self):
        ctypes.memset(self.w, 0, 4 * self.nwords)


class Kernel:
    """One instance of kernel `k` ("tx", "rx", "cq"); step() = one clock edge."""

    def __init__(self, k):
        self.k = k
        L = lib()
        new = getattr(L, f"rnic_{k}_dpi_new")
        new.restype = ctypes.c_void_p
        self._step = getattr(L, f"rnic_{k}_dpi_step")
        self._step.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self.h = ctypes.c_void_p(new())
        self.inp = Port(k.upper() + "_IN")
        self.out = Port(k.upper() + "_OUT")
        self.cycle = 0

    def step(self):
        self.inp.set("cycle", self.cycle)
        self._step(self.h, self.inp.w, self.out.w)
        self.cycle += 1

    def reset(self, cycles=2):
        """rst for `cycles` clocks; then the clocks the kernel's reset sweep takes (it clears an
        entry of its tables a clock and takes nothing else meanwhile)"""
        self.inp.clear()
        self.inp.set("rst", 1)
        for _ in range(cycles):
            self.step()
        self.inp.set("rst", 0)
        for _ in range(S.MAX_CQ if self.k == "cq" else S.MAX_QP):
            self.step()

    def cfg(self, table, index, word, data):
        """One firmware configuration write (takes one clock)."""
        addr = (table << S.CFG_TABLE_SHIFT) | (index << S.CFG_INDEX_SHIFT) | (word << S.CFG_WORD_SHIFT)
        self.inp.set("cfg_valid", 1)
        self.inp.set("cfg_addr", addr)
        self.inp.set("cfg_data", data)
        self.step()
        self.inp.set("cfg_valid", 0)

    def cfg_entry(self, table, index, words):
        """Write a table entry: words 1..n first, word 0 last (word 0 commits)."""
        for i in list(range(1, len(words))) + [0]:
            self.cfg(table, index, i, words[i])
