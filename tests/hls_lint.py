"""Lint of the HLS C kernels for the subset Vitis HLS synthesizes, run where no Vitis is: no heap,
no recursion, no calls out of the kernel but memcpy/memset, no function pointers, no
variable-length arrays, no state hidden in static locals, every loop bounded by a constant (a
`#pragma HLS LOOP_TRIPCOUNT` is a report hint to Vitis, not a bound: it does not count), no divide
or modulo by a variable (a divider is a multi-cycle core: by constants only, which synthesize to
shifts and multiplies), and the top function pipelined at II=1.
Calls and stack come from GCC itself (-fcallgraph-info, -fstack-usage), not from parsing C.

    python tests/hls_lint.py        prints the findings, exits 1 if there are any
"""
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
KDIR = ROOT / "hw" / "kernels"
# synthesizable sources and the top function of each kernel (the *_dpi.c files are simulation glue)
SOURCES = {"common/rnic_crc.c": None, "common/rnic_icrc.c": None,
           "tx/tx_stages.c": "rnic_tx_step", "tx/tx.c": None, "tx/tx_build.c": None, "tx/tx_sched.c": None,
           "tx/tx_reset.c": None, "tx/tx_egress.c": None, "tx/tx_emit.c": None, "tx/tx_rsq.c": None, "tx/tx_rdport.c": None,
           "tx/tx_wheel.c": None,
           "rx/rx_stages.c": "rnic_rx_step", "rx/rx_mac.c": None, "rx/rx_icrc.c": None, "rx/rx_parse.c": None,
           "rx/rx_store.c": None, "rx/rx_ctx.c": None,
           "rx/rx.c": None,
           "rx/rx_req.c": None, "rx/rx_rdq.c": None, "rx/rx_rdport.c": None,
           "rx/rx_reset.c": None,
           "cq/cq.c": "rnic_cq_step", "cq/cq_take.c": None, "cq/cq_ring.c": None, "cq/cq_write.c": None}
# assert(): Vitis HLS checks it in C simulation and drops it from the hardware (UG1399)
ALLOWED_CALLS = {"memcpy", "memset", "__builtin_memcpy", "__builtin_memset", "__assert_fail"}
FORBIDDEN = re.compile(r"\b(malloc|calloc|realloc|free|alloca|printf|fprintf|puts|exit|abort|setjmp|longjmp|"
                       r"pthread_\w+)\s*\(")
FUNC_PTR = re.compile(r"\(\s*\*\s*\w+\s*\)\s*\(")
STATIC_LOCAL = re.compile(r"^\s+static\s+(?!const\b)")
CONST_BOUND = re.compile(r"^[A-Z0-9_\s*+\-/()]+$")  # macros, literals, arithmetic (casts removed)
# the right operand of / or %: a macro, a literal or sizeof is constant; anything else is a variable
DIVIDE = re.compile(r"[^/*]\s*[/%]=?\s*\(*\s*(?:\((?:u?int\d*_t|unsigned|int)\)\s*)?([A-Za-z_]\w*)")
CONST_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$|^sizeof$")


def strip_comments(src):
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)


def loops(src):
    """(line, kind, bound expression or None) of every loop in comment-free source."""
    out = []
    for m in re.finditer(r"\b(for|while|do)\b", src):
        line = src.count("\n", 0, m.start()) + 1
        if m.group(1) == "for":
            head = src[m.end():src.index("{", m.end()) if "{" in src[m.end():] else len(src)]
            parts = head.strip().lstrip("(").split(";")
            cond = parts[1].strip() if len(parts) > 2 else ""
            mm = re.match(r"[^<>!=]+(<=|<|!=)\s*(.+)$", cond)
            bound = re.sub(r"\((int|unsigned|uint\d+_t|int\d+_t)\)|\b\d+[uUlL]+\b", lambda x: x.group(0).rstrip("uUlL")
                           if x.group(0)[0].isdigit() else "", mm.group(2)).strip() if mm else None
            out.append((line, "for", bound))
        else:
            out.append((line, m.group(1), None))
    return out


def callgraph(path, tmp, kdir):
    """{function: {callee}} and the functions with dynamic stack, from GCC."""
    obj = pathlib.Path(tmp) / (path.stem + ".o")
    # -O0: the calls the source makes (no inlining, no library idioms the optimizer would add);
    # -Werror=vla: no variable-size arrays
    r = subprocess.run(["gcc", "-O0", "-std=gnu11", "-Wno-unknown-pragmas", "-Werror=vla", f"-I{kdir / 'common'}",
                        f"-I{ROOT / 'spec' / 'gen'}", f"-I{ROOT / 'build' / 'kernels' / 'gen'}", "-fcallgraph-info", "-c", str(path), "-o", str(obj)],
                       capture_output=True, text=True, cwd=tmp)
    if r.returncode:
        return None, r.stderr
    ci = obj.with_suffix(".ci").read_text()
    graph = {}
    for m in re.finditer(r'node: \{ title: "([^"]+)"', ci):
        graph.setdefault(m.group(1).split(":")[-1], set())
    for m in re.finditer(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"', ci):
        graph.setdefault(m.group(1).split(":")[-1], set()).add(m.group(2).split(":")[-1])
    return graph, ""


def cycles(graph):
    seen, stack, found = set(), [], []

    def visit(n):
        if n in stack:
            found.append(" -> ".join(stack[stack.index(n):] + [n]))
            return
        if n in seen:
            return
        seen.add(n)
        stack.append(n)
        for c in graph.get(n, ()):
            visit(c)
        stack.pop()

    for n in list(graph):
        visit(n)
    return found


def defined_functions(kdir):
    """Functions with a body in the kernel sources and headers (the kernels' own code)."""
    names = set()
    for f in list(kdir.glob("*/*.[ch]")) + [ROOT / "spec" / "gen" / "rnic_spec.h"]:
        if f.name.endswith("_dpi.c"):
            continue
        names |= set(re.findall(r"\b(\w+)\s*\([^;{)]*\)\s*\{", strip_comments(f.read_text())))
    # the functions of each FIFO type (common/rnic_fifo.h's RNIC_FIFO(name, ...))
    made = re.findall(r"rnic_##name##_(\w+)\(", (kdir / "common" / "rnic_fifo.h").read_text())
    for f in sorted(kdir.glob("*/*.[ch]")):
        for fifo in re.findall(r"^RNIC_FIFO\((\w+),", f.read_text(), re.M):
            names |= {f"rnic_{fifo}_{m}" for m in made}
    return names


def lint(kdir=KDIR, sources=None):
    """Findings (strings) over the kernel sources {path relative to kdir: top function or None}."""
    sources = SOURCES if sources is None else sources
    defined = defined_functions(kdir)
    findings = []
    with tempfile.TemporaryDirectory() as tmp:
        for rel, top in sources.items():
            path = kdir / rel
            raw = path.read_text()
            src = strip_comments(raw)
            lines = src.splitlines()
            for i, ln in enumerate(lines, 1):
                if FORBIDDEN.search(ln):
                    findings.append(f"{rel}:{i}: not synthesizable: {FORBIDDEN.search(ln).group(0)}")
                if FUNC_PTR.search(ln):
                    findings.append(f"{rel}:{i}: function pointer")
                if STATIC_LOCAL.match(ln) and "(" not in ln:
                    findings.append(f"{rel}:{i}: state in a static local (keep it in the state struct)")
                code = re.sub(r'"(\\.|[^"\\])*"', '""', ln) if not ln.lstrip().startswith("#") else ""
                for m in DIVIDE.finditer(code):
                    if not CONST_NAME.match(m.group(1)):
                        findings.append(f"{rel}:{i}: divide or modulo by a variable ({m.group(1)})")
            for line, kind, bound in loops(src):
                if kind != "for" or bound is None or not CONST_BOUND.match(bound):
                    findings.append(f"{rel}:{line}: {kind} loop without a constant bound")
            graph, err = callgraph(path, tmp, kdir)
            if graph is None:
                findings.append(f"{rel}: does not compile as the synthesizable subset: {err.strip()}")
                continue
            for caller, callees in graph.items():
                for name in callees:
                    if name not in defined and name not in ALLOWED_CALLS:
                        findings.append(f"{rel}: {caller} calls {name}, outside the kernels")
            for cyc in cycles(graph):
                findings.append(f"{rel}: recursion: {cyc}")
            if top:
                body = src[src.index(f"void {top}("):]
                if not re.search(r"#pragma HLS PIPELINE II\s*=\s*1", body[:body.index("\n}") + 2]):
                    findings.append(f"{rel}: {top} is not pipelined at II=1")
                if top not in graph:
                    findings.append(f"{rel}: no top function {top}")
    return findings


if __name__ == "__main__":
    f = lint()
    print("\n".join(f) if f else f"hls lint: {len(SOURCES)} kernel sources clean")
    sys.exit(1 if f else 0)
