"""The kernels' on-chip memories fit the budget of every board and a QP costs at most 256 bytes of
them (scripts/mem_budget.py), and the script reads struct layouts from the compiler right: a
header of known sizes checks its parser."""
import importlib.util
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = "scripts/mem_budget.py"
_spec = importlib.util.spec_from_file_location("mem_budget", ROOT / SCRIPT)
mem_budget = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mem_budget)


def test_kernels_fit_every_board():
    r = subprocess.run([sys.executable, SCRIPT], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    for board in ("U250", "U280", "U55C"):
        assert re.search(rf"^{board} \(XC{board}\): BRAM36 \d+/\d+ .* URAM \d+/\d+ .*: fits$", r.stdout, re.M), board
    # the datapath's tables are held by TX and by RX, and both copies count
    assert re.search(r"^duplicated: rnic_tables_t as tx\.core\.t and rx\.core\.t .* all 2 counted$", r.stdout, re.M)
    # issue 16: at most 256 bytes of on-chip memory a QP, its share of the caches included
    per_qp = re.search(r"; (\d+) bytes a QP with its cache share$", r.stdout, re.M)
    assert per_qp and int(per_qp.group(1)) <= 256, r.stdout


SYNTH = """#include <stdint.h>
typedef struct { uint64_t a; uint8_t b; } leaf_t;      /* 72 data bits, sizeof 16 */
typedef struct { uint32_t x; leaf_t l[4]; } ent_t;    /* 32 + 4 * 72 = 320 data bits, sizeof 72 */
typedef struct { uint64_t big[4096]; uint8_t flag; } sub_t;
typedef struct {
	uint8_t n;
	ent_t e[512];               /* an array of structs holding an array of structs */
	uint16_t m[1024][8];        /* 2-D scalars: the last dimension is the word */
	uint8_t small[100];         /* under 1 KiB: registers */
	sub_t s;                    /* a plain struct member: its arrays are memories of their own */
	uint64_t huge[32768];       /* 256 KiB: 64 BRAM36 or 8 URAM */
	uint8_t cube[4][1024][64];  /* 3-D scalars: 4096 words of 512 bits */
	ent_t grid[2][600];         /* 2-D structs: every dimension is address */
} synth_t;
"""


def test_layout_of_a_known_header(tmp_path):
    (tmp_path / "synth.h").write_text(SYNTH)
    types = mem_budget.read_layout(["synth.h"], ["synth_t"], [tmp_path])
    rows = {t.name: t for t in mem_budget.tables(types, "synth_t")}
    # the C dimensions, as declared (what a QP costs is read from them)
    assert rows["cube"].dims == (4, 1024, 64) and rows["grid"].dims == (2, 600) and rows["n"].dims == ()
    rows = {n: t._replace(dims=()) for n, t in rows.items()}
    T = mem_budget.Table
    assert rows == {   # offsets as gcc's offsetof gives them (make tblchk maps accesses by them)
        "n": T("n", 0, 0, 1, 0),
        "e": T("e", 512, 320, 512 * 72, 8),
        "m": T("m", 1024, 128, 16384, 36872),
        "small": T("small", 100, 8, 100, 53256),
        "s.big": T("s.big", 4096, 64, 32768, 53360),
        "s.flag": T("s.flag", 0, 0, 1, 86128),
        "huge": T("huge", 32768, 64, 262144, 86136),
        "cube": T("cube", 4096, 512, 262144, 348280),
        "grid": T("grid", 1200, 320, 1200 * 72, 610424),
    }
    cost = {n: mem_budget.cost(t) for n, t in rows.items() if t.depth and t.size >= mem_budget.MEMORY_MIN}
    assert cost == {
        "e": (5, 0),        # ceil(320/72) = 5 columns, 512 deep
        "m": (4, 0),        # 2 columns x 2 BRAMs deep
        "s.big": (8, 0),    # 32 KiB: too small for URAM
        "huge": (0, 8),     # 8 URAM (16.8 BRAM36 of device share) beat 64 BRAM36
        "cube": (0, 8),     # 8 URAM beat 8 x 8 BRAM36
        "grid": (15, 0),    # 5 columns x 3 BRAMs deep
    }
