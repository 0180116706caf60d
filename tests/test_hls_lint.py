"""The HLS C kernels stay in the subset Vitis HLS synthesizes (tests/hls_lint.py), and the lint
itself catches each thing it looks for."""
import pathlib
import shutil
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import hls_lint  # noqa: E402


def test_kernels_are_synthesizable_c():
    assert hls_lint.lint() == []


BAD = {
    "heap": "p = malloc(4);",
    "recursion": "if (x) rnic_bad_step(st, x - 1);",
    "unbounded loop": "while (x) x--;",
    "variable bound": "for (i = 0; i < x; i++) st[0] = 0;",
    "a trip count is no bound": "for (i = 0; i < x; i++) {\n#pragma HLS LOOP_TRIPCOUNT max = 4\n\t\tst[0] = 0;\n\t}",
    "function pointer": "void (*fp)(int) = 0; (void)fp;",
    "static state": "static int count; count++;",
    "variable-size array": "int v[x]; v[0] = 0; (void)v;",
    "variable divide": "st[0] = st[1] / x;",
    "variable modulo": "st[0] = st[1] % (uint32_t)x;",
}


def test_lint_catches_each_violation(tmp_path):
    common = tmp_path / "common"
    shutil.copytree(hls_lint.KDIR / "common", common)
    for name, stmt in BAD.items():
        d = tmp_path / "bad"
        d.mkdir(exist_ok=True)
        (d / "bad.c").write_text(
            "#include <stdlib.h>\n#include <stdint.h>\n"
            "void rnic_bad_step(int *st, int x)\n{\n#pragma HLS PIPELINE II = 1\n"
            f"\tint i; void *p = 0; (void)p; (void)i;\n\t{stmt}\n}}\n")
        found = hls_lint.lint(tmp_path, {"bad/bad.c": "rnic_bad_step"})
        assert found, name
    (d / "bad.c").write_text("#define RNIC_BEAT 64\nvoid rnic_bad_step(int *st, int x)\n{\n#pragma HLS PIPELINE II = 1\n"
                             "\tst[0] = st[1] / RNIC_BEAT + st[2] % 8 + x / sizeof(int);\n}\n")
    assert hls_lint.lint(tmp_path, {"bad/bad.c": "rnic_bad_step"}) == [], "divides by constants are fine"
    (d / "bad.c").write_text("void rnic_bad_step(int *st, int x)\n{\n\tst[0] = x;\n}\n")
    assert any("II=1" in f for f in hls_lint.lint(tmp_path, {"bad/bad.c": "rnic_bad_step"}))
