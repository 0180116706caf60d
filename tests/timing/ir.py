"""The LLVM IR of HLS C as Vitis HLS would schedule it, and a reader for it: types laid out as
clang laid them out (x86-64), the instructions of one function by block, and where each came
from in the source (its !dbg)."""
import os
import pathlib
import re
import subprocess
import tempfile

CLANG, LLVM_LINK, OPT = "clang-14", "llvm-link-14", "opt-14"


def build_ir(sources, defines=(), includes=()):
    """LLVM IR text of `sources` linked and optimized as one module, every function inlined."""
    with tempfile.TemporaryDirectory() as tmp:
        bcs = []
        for i, src in enumerate(sources):
            bc = os.path.join(tmp, f"{i}.bc")
            cmd = [CLANG, "-O2", "-gline-tables-only", "-std=gnu11", "-D__SYNTHESIS__", "-DNDEBUG",
                   "-fno-discard-value-names", "-Wno-unknown-pragmas", "-Xclang", "-disable-llvm-passes",
                   "-emit-llvm", "-c", str(src), "-o", bc]
            cmd += [f"-D{d}" for d in defines] + [f"-I{d}" for d in includes]
            subprocess.run(cmd, check=True)
            bcs.append(bc)
        raw = os.path.join(tmp, "all.ll")
        subprocess.run([LLVM_LINK, "-S", "-o", raw] + bcs, check=True)
        text = pathlib.Path(raw).read_text()
        # Vitis inlines what a pipelined top calls; here every definition is marked always_inline
        text = re.sub(r"^(define [^\n]*?\)[^\n{]*?)(#\d+)", r"\1alwaysinline \2", text, flags=re.M)
        text = re.sub(r"^(attributes #\d+ = \{[^}\n]*)\bnoinline\b", r"\1", text, flags=re.M)
        pathlib.Path(raw).write_text(text)
        out = os.path.join(tmp, "opt.ll")
        # loops of up to 512 trips unroll (a beat's 64 bytes, a table row); longer ones stay loops
        subprocess.run([OPT, "-O2", "-unroll-threshold=1000000", "-unroll-full-max-count=512",
                        "-vectorize-loops=false", "-vectorize-slp=false", "-S", "-o", out, raw], check=True)
        return pathlib.Path(out).read_text()


# ---------------------------------------------------------------------------------------------
# Types (x86-64 layout, as clang laid out the structs)

class Types:
    def __init__(self, text):
        self.parsed = {}
        self.named = {}
        for m in re.finditer(r"^(%[\w.\"]+) = type (.*)$", text, re.M):
            self.named[m.group(1)] = m.group(2).strip()
        self.cache = {}

    def parse(self, s, i=0):
        """(type, next index): type is ('int', bits) | ('ptr',) | ('arr', n, t) | ('struct', [t], packed)
        | ('named', name) | ('void',) | ('vec', n, t) | ('opaque',)"""
        while s[i] == " ":
            i += 1
        if s.startswith("void", i):
            t, i = ("void",), i + 4
        elif s[i] == "i":
            m = re.match(r"i(\d+)", s[i:])
            t, i = ("int", int(m.group(1))), i + len(m.group(0))
        elif s[i] == "[":
            m = re.match(r"\[(\d+) x ", s[i:])
            et, j = self.parse(s, i + len(m.group(0)))
            t, i = ("arr", int(m.group(1)), et), j + 1
        elif s[i] == "<" and s[i + 1] == "{" or s[i] == "{":
            packed = s[i] == "<"
            i += 2 if packed else 1
            fields = []
            while True:
                while s[i] == " ":
                    i += 1
                if s[i] == "}":
                    i += 1
                    break
                ft, i = self.parse(s, i)
                fields.append(ft)
                while s[i] in " ,":
                    i += 1
            if packed:
                i += 1
            t = ("struct", fields, packed)
        elif s[i] == "<":
            m = re.match(r"<(\d+) x ", s[i:])
            et, j = self.parse(s, i + len(m.group(0)))
            t, i = ("vec", int(m.group(1)), et), j + 1
        elif s[i] == "%":
            m = re.match(r"%[\w.]+|%\"[^\"]+\"", s[i:])
            t, i = ("named", m.group(0)), i + len(m.group(0))
        elif s.startswith("double", i) or s.startswith("float", i):
            w = 6 if s.startswith("double", i) else 5
            t, i = ("int", 64 if w == 6 else 32), i + w
        elif s.startswith("opaque", i):
            t, i = ("opaque",), i + 6
        elif s.startswith("ptr", i):
            t, i = ("ptr",), i + 3
        else:
            raise ValueError(f"type at {s[i:i + 40]!r}")
        while i < len(s) and s[i] == "*":
            t, i = ("ptr",), i + 1
        return t, i

    def resolve(self, t):
        while t[0] == "named":
            name = t[1]
            if name not in self.parsed:
                self.parsed[name] = self.parse(self.named[name])[0]
            t = self.parsed[name]
        return t

    def size_align(self, t):
        key = repr(t)
        if key in self.cache:
            return self.cache[key]
        t = self.resolve(t)
        if t[0] == "int":
            n = max(1, (t[1] + 7) // 8)
            a = 1 << (n - 1).bit_length()
            r = (a if n > 1 else 1, min(a, 16))
            r = (max(n, r[0]), r[1])
        elif t[0] == "ptr":
            r = (8, 8)
        elif t[0] in ("arr", "vec"):
            s, a = self.size_align(t[2])
            r = (s * t[1], a)
        elif t[0] == "struct":
            off, al = 0, 1
            for f in t[1]:
                s, a = self.size_align(f)
                if not t[2]:
                    off = (off + a - 1) // a * a
                    al = max(al, a)
                off += s
            if not t[2]:
                off = (off + al - 1) // al * al
            r = (off, 1 if t[2] else al)
        else:
            r = (0, 1)
        self.cache[key] = r
        return r

    def size(self, t):
        return self.size_align(t)[0]

    def field_offset(self, t, k):
        t = self.resolve(t)
        off = 0
        for idx, f in enumerate(t[1]):
            s, a = self.size_align(f)
            if not t[2]:
                off = (off + a - 1) // a * a
            if idx == k:
                return off, f
            off += s
        raise IndexError(k)

    def bits(self, t):
        t = self.resolve(t)
        return t[1] if t[0] == "int" else 8 * self.size(t)


# ---------------------------------------------------------------------------------------------
# Parsing helpers

def split_top(s, sep=","):
    """split s at top-level separators (outside (), [], {}, <>, quotes)"""
    out, depth, cur, q = [], 0, [], False
    for ch in s:
        if ch == '"':
            q = not q
        if not q:
            if ch in "([{<":
                depth += 1
            elif ch in ")]}>":
                depth -= 1
            elif ch == sep and depth == 0:
                out.append("".join(cur).strip())
                cur = []
                continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


ATTR_WORDS = {"noundef", "nonnull", "nocapture", "readonly", "writeonly", "zeroext", "signext",
              "immarg", "returned", "noalias", "inreg", "byval", "sret", "align", "dereferenceable",
              "dereferenceable_or_null", "nofree", "nosync"}


def typed_operand(types, s):
    """'i32 noundef %x' -> (type, value text)"""
    t, i = types.parse(s, 0)
    rest = s[i:].strip()
    while True:
        m = re.match(r"(\w+)(\(\d+\))?\s+", rest)
        if m and m.group(1) in ATTR_WORDS:
            rest = rest[m.end():]
            if m.group(1) == "align":
                rest = re.sub(r"^\d+\s*", "", rest)
            continue
        break
    return t, rest.strip()


class Inst:
    __slots__ = ("res", "op", "text", "dbg", "block")

    def __init__(self, res, op, text, dbg, block):
        self.res, self.op, self.text, self.dbg, self.block = res, op, text, dbg, block


class Function:
    def __init__(self, text, name):
        m = re.search(r"^define [^\n]*@" + re.escape(name) + r"\((.*?)\)[^\n]*\{\n(.*?)^\}", text, re.M | re.S)
        if not m:
            raise KeyError(name)
        self.params = m.group(1)
        self.blocks, self.order = {}, []
        cur, pending = None, None
        lines = m.group(2).split("\n")
        first = True
        for line in lines:
            line = line.split(";", 1)[0].rstrip() if not line.lstrip().startswith('"') else line
            if not line.strip():
                continue
            lm = re.match(r"^([\w.\-]+|\"[^\"]+\"):", line)
            if lm:
                cur = "%" + lm.group(1)
                self.blocks[cur] = []
                self.order.append(cur)
                first = False
                continue
            if first:
                cur = "%entry0"
                self.blocks[cur] = []
                self.order.append(cur)
                first = False
            if pending is not None:
                pending += " " + line.strip()
                if line.strip().startswith("]"):
                    self._add(cur, pending)
                    pending = None
                continue
            if re.match(r"\s*switch ", line) and not line.rstrip().endswith("]"):
                pending = line.strip()
                continue
            self._add(cur, line.strip())

    def _add(self, block, line):
        dbg = None
        dm = re.search(r", !dbg (!\d+)", line)
        if dm:
            dbg = dm.group(1)
        line = re.sub(r", !(dbg|tbaa|tbaa\.struct|llvm\.loop|range|noalias|alias\.scope|nonnull|prof|annotation)"
                      r"\b[^,]*", "", line)
        m = re.match(r"(%[\w.\-]+|%\"[^\"]+\") = (.*)$", line)
        res, body = (m.group(1), m.group(2)) if m else (None, line)
        for pre in ("tail ", "musttail ", "notail "):
            if body.startswith(pre):
                body = body[len(pre):]
        op = body.split(" ", 1)[0]
        self.blocks[block].append(Inst(res, op, body, dbg, block))


class DebugInfo:
    """source line and function of an instruction's !dbg"""

    def __init__(self, text):
        self.md = {}
        for m in re.finditer(r"^(!\d+) = (?:distinct )?!(\w+)\((.*)\)$", text, re.M):
            self.md[m.group(1)] = (m.group(2), m.group(3))

    def field(self, node, name):
        m = re.search(r"\b" + name + r": (\"[^\"]*\"|![\d]+|\d+)", self.md.get(node, ("", ""))[1])
        return m.group(1).strip('"') if m else None

    def where(self, dbg):
        if not dbg or dbg not in self.md:
            return "?"
        line = self.field(dbg, "line")
        scope = self.field(dbg, "scope")
        fn, fname = "?", "?"
        for _ in range(20):
            if scope is None or scope not in self.md:
                break
            kind = self.md[scope][0]
            if kind == "DISubprogram":
                fn = self.field(scope, "name")
                f = self.field(scope, "file")
                fname = os.path.basename(self.field(f, "filename") or "?") if f else "?"
                break
            scope = self.field(scope, "scope")
        return f"{fname}:{line} {fn}"


# ---------------------------------------------------------------------------------------------
