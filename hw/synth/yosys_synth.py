"""Synthesizability check of the RTL: Yosys `synth_xilinx -family xcup` (UltraScale+, the Alveo
cards' family) over the given sources, `check -assert` on the netlist, and a resource table.

    yosys_synth.py --top rnic_card_top --blackboxes bitstreams/common/vendor_ip.toml --out build/synth SOURCE...
                                                                  (make synth)

Fails (exit 1, with Yosys's words) when Yosys rejects a source or when `check -assert` finds a
problem in the netlist: a net with several drivers, a used net without one, or a combinational
loop; each would be a bug on the card, none is a matter of style. No I/O buffers are inserted: the
card's top instantiates the buffers it needs. The datapath kernels' wrappers are black boxes
under SYNTHESIS (Vitis HLS builds the kernels from their C), and so are the vendor IP and device
primitives that --blackboxes lists (their ports as vendor_ip.toml gives them), so the table lists
them without resources. Logs, the Yosys script and the figures (resources.json) go to --out.
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import time
import tomllib

# LUTs taken by each LUT RAM and shift register primitive (UltraScale+ CLB guide, UG574)
LUTMEM = {"RAM32X1S": 1, "RAM64X1S": 1, "RAM128X1S": 2, "RAM256X1S": 4, "RAM512X1S": 8,
          "RAM32X1D": 2, "RAM64X1D": 2, "RAM128X1D": 4, "RAM256X1D": 8, "RAM32M": 4, "RAM64M": 4,
          "RAM32M16": 8, "RAM64M8": 8, "SRL16E": 1, "SRLC32E": 1}
# CARRY counts Yosys 0.23's CARRY4 cells (Vivado retargets them to UltraScale's CARRY8);
# BRAM36 counts 36 Kb blocks (a RAMB18E2 is half of one)
COLUMNS = ("LUT", "LUTRAM", "FF", "CARRY", "BRAM36", "URAM", "DSP")


def resources(cells):
    """COLUMNS of a {cell type: count} map."""
    n = dict.fromkeys(COLUMNS, 0)
    for typ, k in cells.items():
        if re.fullmatch(r"LUT[1-6]|INV", typ):
            n["LUT"] += k
        elif typ in LUTMEM:
            n["LUTRAM"] += LUTMEM[typ] * k
        elif re.fullmatch(r"FD[RSCP]E|LD[CP]E", typ):
            n["FF"] += k
        elif typ in ("CARRY4", "CARRY8"):
            n["CARRY"] += k
        elif typ in ("RAMB36E2", "RAMB18E2"):
            n["BRAM36"] += k if typ == "RAMB36E2" else k / 2
        elif typ == "URAM288":
            n["URAM"] += k
        elif typ == "DSP48E2":
            n["DSP"] += k
    return n


def base_name(module):
    """rnic_fifo for Yosys's `$paramod$<hash>\\rnic_fifo`, rnic_soc for `$paramod\\rnic_soc\\FW_HEX=..`."""
    return module.split("\\")[1] if module.startswith("$paramod") else module


def module_rows(stat, top, blackboxes):
    """{Verilog module: instances, blackbox, COLUMNS}: the cells of all its instances (of every
    parameter set), without those of the modules below it."""
    mods = {name.lstrip("\\"): m["num_cells_by_type"] for name, m in stat["modules"].items()}
    count = {top: 1}

    def walk(mod, k):
        for typ, c in mods[mod].items():
            if typ in mods or typ in blackboxes:
                count[typ] = count.get(typ, 0) + c * k
                if typ in mods:
                    walk(typ, c * k)
    walk(top, 1)
    rows = {}
    for mod, k in count.items():
        row = rows.setdefault(base_name(mod), {"instances": 0, "blackbox": mod in blackboxes,
                                               **dict.fromkeys(COLUMNS, 0)})
        row["instances"] += k
        for col, v in resources(mods.get(mod, {})).items():
            row[col] += v * k
    return rows


def print_table(rows, total):
    w = max(len(n) for n in rows) + 2
    print(f"{'module':<{w}}{'inst':>5}" + "".join(f"{c:>9}" for c in COLUMNS))
    for name, r in rows.items():
        figures = "    black box" if r["blackbox"] else "".join(f"{r[c]:>9g}" for c in COLUMNS)
        print(f"{name:<{w}}{r['instances']:>5}{figures}")
    print(f"{'total':<{w}}{'':>5}" + "".join(f"{total[c]:>9g}" for c in COLUMNS))
    print("(LUT includes inverters; LUTRAM counts the LUTs of LUT RAMs and shift registers; BRAM36 "
          "counts 36 Kb block RAMs)")
    boxes = [n for n, r in rows.items() if r["blackbox"]]
    if boxes:
        print(f"black boxes, not in the figures: {', '.join(boxes)} (the HLS kernels: Vitis HLS builds "
              "them from their C, bitstreams/common/hls.tcl; the vendor IP and device primitives: Vivado)")


def stubs(toml):
    """Verilog black boxes of the modules a vendor_ip.toml lists."""
    out = []
    for ip in tomllib.loads(toml.read_text())["ip"]:
        ports = [f"    {'input' if d == 'in' else 'output'} wire {f'[{w - 1}:0] ' if w > 1 else ''}{n}"
                 for n, d, w, _ in ip["ports"]]
        params = ", ".join(f"parameter {p} = 0" for p in ip.get("params", ()))
        out.append(f"(* blackbox *)\nmodule {ip['module']} {f'#({params}) ' if params else ''}(\n" +
                   ",\n".join(ports) + "\n);\nendmodule\n")
    return "\n".join(out)


def failure(log):
    """Yosys's error lines, with the problems `check -assert` listed when it was the one."""
    lines = log.splitlines()
    errors = [ln for ln in lines if "ERROR:" in ln]   # a parse error starts with file:line
    if any("check -assert" in e for e in errors):
        start = max(i for i, ln in enumerate(lines) if "Executing CHECK pass" in ln)
        errors = [ln for ln in lines[start:] if ln.startswith(("Warning:", "    "))] + errors
    return errors or lines[-20:]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", required=True, help="top module")
    ap.add_argument("--out", required=True, type=pathlib.Path, help="directory for logs and figures")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds Yosys may take")
    ap.add_argument("--blackboxes", type=pathlib.Path, help="vendor_ip.toml: modules to stand in as black boxes")
    ap.add_argument("sources", nargs="+", type=pathlib.Path)
    args = ap.parse_args()
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    for name in ("stat.json", "blackboxes.txt", "resources.json"):
        (out / name).unlink(missing_ok=True)
    sources = [src.resolve() for src in args.sources]
    if args.blackboxes:
        (out / "vendor_ip_stubs.v").write_text(stubs(args.blackboxes))
        sources.insert(0, out / "vendor_ip_stubs.v")
    script = out / "synth.ys"
    script.write_text("\n".join(
        [f"read_verilog -sv {src}" for src in sources] +
        [f"hierarchy -check -top {args.top}",
         # the black boxes the design itself has (synth_xilinx then adds the FPGA's cell library)
         f"tee -q -o {out / 'blackboxes.txt'} select -list =A:blackbox",
         f"synth_xilinx -family xcup -top {args.top} -noiopad -noclkbuf",
         # per module only: 0.23 writes the hierarchy of a top (-top or the `top` attribute) as
         # text into the JSON; the script sums the hierarchy itself
         "setattr -mod -unset top",
         f"tee -q -o {out / 'stat.json'} stat -json",
         "check -assert", ""]))
    logfile = out / "yosys.log"
    t0 = time.monotonic()
    try:
        r = subprocess.run(["yosys", "-q", "-l", str(logfile), "-s", str(script)],
                           capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"synth: FAILED: Yosys took more than {args.timeout} s (log: {logfile})", file=sys.stderr)
        return 1
    seconds = time.monotonic() - t0
    log = logfile.read_text(errors="replace") if logfile.exists() else r.stdout + r.stderr
    if r.returncode:
        print("synth: FAILED:\n" + "\n".join(failure(log)) + f"\n(log: {logfile})", file=sys.stderr)
        return 1

    version = re.search(r"Yosys \S+ \(git sha1 \w+\)", log).group(0)
    blackboxes = {ln.strip() for ln in (out / "blackboxes.txt").read_text().splitlines() if "/" not in ln}
    # 0.23 ends the JSON without a top with a stray comma
    stat = json.loads(re.sub(r",\s*}\s*$", "}", (out / "stat.json").read_text()))
    rows = module_rows(stat, args.top, blackboxes)
    total = {c: sum(r[c] for r in rows.values()) for c in COLUMNS}
    warnings = sorted({ln for ln in log.splitlines() if ln.startswith("Warning:")})
    (out / "resources.json").write_text(json.dumps(
        {"yosys": version, "top": args.top, "seconds": round(seconds, 1),
         "modules": rows, "total": total, "warnings": warnings}, indent=1) + "\n")
    print(f"synth: {version}, synth_xilinx -family xcup, top {args.top}: "
          f"{seconds:.0f} s, check -assert clean, {len(warnings)} distinct warnings (log: {logfile})")
    print_table(rows, total)
    return 0


if __name__ == "__main__":
    sys.exit(main())
