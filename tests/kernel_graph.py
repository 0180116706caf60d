"""The files of each kernel as a graph: which file calls a function another defines (from GCC's
call graph, as hls_lint.py takes it) and which header each includes. Issue 43's structure: a stage
is a file (or a file and its header) of its own; it calls nothing of another stage's, includes
only its own header (which includes the kernel's messages and the common headers), and no two
files of a kernel call each other round a circle. What is not yet split into stages (a kernel's
core: the files that include its `*_int.h`) is where the circles still are; this reports them.

    python tests/kernel_graph.py        each kernel's files, the circles, and any broken rule
"""
import pathlib
import re
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import hls_lint  # noqa: E402

KDIR = hls_lint.KDIR
KERNELS = ("tx", "rx", "cq")


def sources(k):
    return sorted(p for p in (KDIR / k).glob("*.c") if not p.name.endswith("_dpi.c"))


def includes(path):
    return re.findall(r'^#include "([^"]+)"', path.read_text(), re.M)


def defined(path):
    """functions with external linkage a source defines"""
    src = hls_lint.strip_comments(path.read_text())
    return {m.group(2) for m in re.finditer(r"^(\w[^\n;(]*?)\b(\w+)\(([^;{)]*)\)\s*\{", src, re.M)
            if not m.group(1).startswith(("static", "#"))}


def graph():
    """{kernel: (files, {file: set of files it calls into}, core files, top file)}; files by name,
    common/ as "common/<name>" """
    common = {f"common/{p.name}": defined(p) for p in (KDIR / "common").glob("*.c")}
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k in KERNELS:
            files = {p.name: p for p in sources(k)}
            owner = {fn: name for name, p in files.items() for fn in defined(p)}
            owner.update({fn: name for name, fns in common.items() for fn in fns})
            calls = {}
            for name, p in files.items():
                g, err = hls_lint.callgraph(p, tmp, KDIR)
                assert g is not None, err
                calls[name] = {owner[c] for cs in g.values() for c in cs if c in owner and owner[c] != name}
            core = {n for n, p in files.items() if f"{k}_int.h" in includes(p)}
            top = f"{k}_stages.c" if f"{k}_stages.c" in files else f"{k}.c"
            out[k] = (sorted(files), calls, core, top)
    return out


def circles(calls):
    """the strongly connected sets of more than one file (Tarjan)"""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in calls.get(v, ()):
            if w not in calls:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(calls):
        if v not in index:
            visit(v)
    return found


def findings(g=None):
    """the rules broken: a circle outside a kernel's core; a stage calling into another file of
    its kernel; a stage's source including more than its own header, or its header more than the
    kernel's messages and the common headers"""
    g = graph() if g is None else g
    out = []
    common = {p.name for p in (KDIR / "common").glob("*.h")}
    for k, (files, calls, core, top) in g.items():
        for c in circles(calls):
            if not set(c) <= core:
                out.append(f"{k}: a circle outside the core: {' <-> '.join(c)}")
        for f in files:
            if f in core or f == top:
                continue
            into = {c for c in calls[f] if not c.startswith("common/")}
            if into:
                out.append(f"{k}/{f}: a stage calls into {', '.join(sorted(into))}")
            own = f"{f[:-2]}.h"
            if not (KDIR / k / f).exists():
                continue
            inc = includes(KDIR / k / f)
            if inc != [own]:
                out.append(f"{k}/{f}: includes {inc}, not its own header {own} alone")
            elif (KDIR / k / own).exists():
                bad = [h for h in includes(KDIR / k / own) if h not in common and not h.endswith("_msg.h")]
                if bad:
                    out.append(f"{k}/{own}: includes {bad}, not the messages and common headers alone")
    return out


def main():
    g = graph()
    for k, (files, calls, core, top) in g.items():
        stages = [f for f in files if f not in core and f != top]
        print(f"{k}: top {top}; stages {', '.join(stages) or '-'}; core (not yet split) {', '.join(sorted(core)) or '-'}")
        for c in circles(calls):
            print(f"   circle: {' <-> '.join(c)}")
    bad = findings(g)
    for f in bad:
        print("BROKEN", f)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
