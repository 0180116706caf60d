"""The timing model of the HLS C kernels (tests/hls_timing.py): calibrated against Yosys on the
reference functions of tests/timing/, and checked on the structures it must price right."""
import pathlib
import re
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import hls_timing  # noqa: E402
from timing.ir import build_ir  # noqa: E402

REF = pathlib.Path(__file__).resolve().parent / "timing"
REFS = ["ref_add_cmp", "ref_mux8", "ref_prio64", "ref_crc32_beat", "ref_fsm16"]


def yosys_levels(tmp_path):
    """{top: logic levels} of ref.sv mapped to UltraScale+ cells (LUT6, CARRY4; no MUXF7/8 so
    that a wide mux is LUTs, as the model prices it), by ltp: the longest path in cells"""
    script = [f"read_verilog -sv {REF / 'ref.sv'}", "design -save refs"]
    for top in REFS:
        script += ["design -load refs", f"synth_xilinx -family xcup -flatten -noiopad -nowidelut -top {top}",
                   f"tee -o {tmp_path / top}.ltp ltp -noff"]
    subprocess.run(["yosys", "-q", "-p", "; ".join(script)], check=True, cwd=tmp_path)
    out = {}
    for top in REFS:
        m = re.search(r"Longest topological path in \S+ \(length=(\d+)\)", (tmp_path / f"{top}.ltp").read_text())
        out[top] = int(m.group(1))
    return out


def test_model_is_within_a_level_of_yosys(tmp_path):
    text = build_ir([REF / "ref.c"])
    ys = yosys_levels(tmp_path)
    model = {top: hls_timing.analyze(text, top).dep_lv for top in REFS}
    print({top: (model[top], ys[top]) for top in REFS})
    for top in REFS:
        assert abs(model[top] - ys[top]) <= 1, (top, model[top], ys[top])


def model_of(tmp_path, src, top="f"):
    c = tmp_path / "f.c"
    c.write_text("#include <stdint.h>\n" + src)
    return hls_timing.analyze(build_ir([c]), top)


def test_wiring_costs_nothing(tmp_path):
    """bytes packed into a word by shifts and ORs, a field cut out by a mask: wires"""
    r = model_of(tmp_path, """
struct in { uint8_t b[4]; uint32_t w; };
uint32_t f(const struct in *in)
{
	return ((uint32_t)in->b[0] | (uint32_t)in->b[1] << 8 | (uint32_t)in->b[2] << 16 |
		(uint32_t)in->b[3] << 24) ^ (in->w >> 8 & 0xff);
}""")
    assert r.dep_lv == 1  # the XOR: one LUT


def test_equality_is_a_tree_and_a_sum_a_carry_chain(tmp_path):
    r = model_of(tmp_path, "uint32_t f(uint32_t a, uint32_t b) { return a == b; }")
    assert r.dep_lv == 3  # 64 inputs: 11 LUTs, 2, 1
    r = model_of(tmp_path, "uint32_t f(uint32_t a, uint32_t b) { return a + b; }")
    assert r.dep_lv == 1 + 8  # a LUT, then 8 CARRY4


def test_recurrence_is_the_state_path_only(tmp_path):
    """a counter's increment is its recurrence; logic on the inputs before it is not"""
    r = model_of(tmp_path, """
struct st { uint32_t n; };
void f(struct st *st, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
	if (a * b == c + d)
		st->n++;
}""")
    assert r.rec_lv < r.dep_lv
    assert r.dep_ns * 1000 >= 2500  # the multiply
    assert r.rec_ns <= hls_timing.BUDGET_NS


def test_a_write_is_seen_on_the_paths_after_it_only(tmp_path):
    """a register written in one arm of an if is read as it was in the other arm (what the tool
    builds: each register's value is SSA), and as written after the arms join"""
    src = """
struct st { uint32_t a, b, c; uint32_t m[64]; };
void f(struct st *st, uint32_t x)
{
	if (x & 1) {
		st->a = st->c * st->c;
		st->m[x & 63] = st->c * st->c;
	} else {
		st->b = st->a + 1 + st->m[(x >> 8) & 63];
	}
	%s
}"""
    apart = model_of(tmp_path, src % "")
    joined = model_of(tmp_path, src % "st->c = st->a + 1 + st->m[(x >> 8) & 63];")
    mul = model_of(tmp_path, src.replace("st->b = st->a + 1 + st->m[(x >> 8) & 63];", "") % "")
    assert apart.rec_ns == mul.rec_ns  # the other arm's read is the register's
    assert joined.rec_ns > mul.rec_ns  # after the join: the multiply, then the add

def test_block_ram_and_loops_that_are_not_one_clock(tmp_path):
    """a block RAM read at an address computed this clock, and a loop too long to unroll"""
    r = model_of(tmp_path, """
struct st { uint32_t addr; uint32_t tbl[4096]; uint32_t out; };
void f(struct st *st, uint32_t a)
{
	st->out = st->tbl[st->addr & 4095];   /* registered address: the RAM's data after T_RCKO */
	st->addr = st->tbl[(a + 1) & 4095];   /* computed address: not a block RAM read */
}""")
    assert r.bram_comb == 1
    r = model_of(tmp_path, """
struct st { uint32_t tbl[4096]; };
void f(struct st *st, uint32_t a)
{
	uint32_t i;

	if (a)
		for (i = 0; i < 4096; i++)
			st->tbl[i] = 0;
}""")
    assert len(r.loops) == 1


def test_stages_fit_the_clock():
    """the gate: every stage of the kernels fits one 250 MHz clock (recurrence and every path
    between registers), with its latency stated; and every pipelined function of the kernels'
    sources is one the table reports (a stage, or what is not yet split: UNSTAGED)"""
    for k, (srcs, stages) in hls_timing.KERNELS.items():
        piped = set()
        for s in srcs:
            text = (hls_timing.ROOT / "hw" / "kernels" / s).read_text()
            piped |= set(re.findall(r"^\w[^\n(]*\b(\w+)\([^{]*\{\n#pragma HLS PIPELINE", text, re.M))
        assert piped - {f"rnic_{k}_step"} == set(stages) - {f"rnic_{k}_step"}, (k, piped)
        for r in hls_timing.analyze_kernel(k, gated=True):
            assert r.declared, (r.name, "no stated latency")
            assert not hls_timing.over(r), (r.name, hls_timing.over(r))
