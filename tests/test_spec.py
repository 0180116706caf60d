"""The interface spec is the one source: generated files must match it, and its layouts must be
self-consistent (no overlapping fields, sizes as declared)."""
import pathlib
import shutil
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "spec" / "gen"))
import rnic_spec as S  # noqa: E402

STRUCTS = [n for n in dir(S) if n.isupper() and isinstance(getattr(S, n), tuple)
           and len(getattr(S, n)) == 2 and isinstance(getattr(S, n)[1], dict)]


def test_generated_files_are_fresh():
    r = subprocess.run([sys.executable, "spec/gen.py", "--check"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_check_detects_stale_copy(tmp_path):
    tree = tmp_path / "t"
    shutil.copytree(ROOT / "spec", tree / "spec")
    (tree / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "INTERFACE.md", tree / "docs")
    hdr = tree / "spec" / "gen" / "rnic_spec.h"
    hdr.write_text(hdr.read_text().replace("#define RNIC_CQE_BYTES 0x40u", "#define RNIC_CQE_BYTES 0x20u"))
    r = subprocess.run([sys.executable, "spec/gen.py", "--check"], cwd=tree, capture_output=True, text=True)
    assert r.returncode == 1 and "rnic_spec.h" in r.stderr


@pytest.mark.parametrize("name", STRUCTS)
def test_struct_fields_fit_and_do_not_overlap(name):
    size, fields = getattr(S, name)
    used = [False] * size
    for fname, (off, _t, n) in fields.items():
        assert off + n <= size, f"{name}.{fname} ends past {size}"
        for i in range(off, off + n):
            assert not used[i], f"{name}.{fname} overlaps at byte {i}"
            used[i] = True


def test_ring_strides_match_structs():
    assert S.CQE[0] == S.CQE_BYTES and S.WQE[0] == S.WQE_BYTES and S.RWQE[0] == S.RWQE_BYTES
    assert S.CMD[0] == S.CMD_BYTES and S.CMDC[0] == S.CMDC_BYTES and S.EQE[0] == S.EQE_BYTES
    # owner bytes are last so that in-order DMA writes make them visible last
    assert S.CQE[1]["OWNER"][0] == S.CQE_BYTES - 1 and S.CMDC[1]["OWNER"][0] == S.CMDC_BYTES - 1
    assert S.EQE[1]["OWNER"][0] == S.EQE_BYTES - 1


def test_register_fields_fit_in_32_bits():
    for blk in ("ID", "CTX", "FW", "QPC", "MPT", "CQC", "EQC"):
        regs = getattr(S, blk)
        offs = [off for k, (off, _f) in regs.items() if k != "_BASE"]
        assert len(offs) == len(set(offs)), f"{blk}: two registers share an offset"
        for name, (off, fields) in regs.items():
            assert off % 4 == 0, f"{blk}.{name} unaligned"
            bits = 0
            for fname, (lsb, width) in fields.items():
                mask = ((1 << width) - 1) << lsb
                assert lsb + width <= 32 and not bits & mask, f"{blk}.{name}.{fname}"
                bits |= mask


def test_rq_and_srq_doorbells_share_a_layout():
    """rnic_top takes both receive doorbells' fields with RQ_DB's (one FIFO carries them)."""
    rq, srq = S.CTX["RQ_DB"][1], S.CTX["SRQ_DB"][1]
    assert rq["PI"] == srq["PI"] and rq["QPN"] == srq["SRQN"]


def test_bar0_blocks_do_not_overlap_context_pages():
    """The blocks in address order, apart, each holding its registers (the STATS block: every
    counter of enum STAT; a 57th counter once read the next block's header), before the pages."""
    sizes = {b["name"]: b.get("size", 0x100)
             for b in tomllib.loads((ROOT / "spec" / "rnic.toml").read_text())["regblock"]}
    names = ("ID", "CLOCK", "PORT", "ADMIN", "CTXBLK", "STATS")
    blocks = [getattr(S, b)["_BASE"][0] for b in names]
    assert blocks == sorted(blocks)
    for i, blk in enumerate(names):
        end = blocks[i] + sizes[blk]
        assert end <= (blocks[i + 1] if i + 1 < len(names) else S.BAR0_CTX_BASE), f"{blk} overlaps what follows"
        regs = [off + 4 for name, (off, _f) in getattr(S, blk).items() if name != "_BASE"]
        if blk == "STATS":
            regs.append(S.STATS["COUNTER0"][0] + 4 * len(S.STAT))
        assert max(regs) <= end, f"{blk}'s registers end at {max(regs):#x}, past the block"
    assert S.BAR0_CTX_BASE + S.NUM_CTX * S.BAR0_CTX_STRIDE <= S.BAR0_SIZE
    # doorbell pages, then command-queue pages: apart, each region 64 KiB-aligned (BAR0 takes the
    # context from address bits 15:12) and inside BAR0
    for base in (S.BAR0_CTX_BASE, S.BAR0_CMDQ_BASE):
        assert base % 0x10000 == 0 and S.NUM_CTX * S.BAR0_CTX_STRIDE <= 0x10000
    assert S.BAR0_CTX_BASE + S.NUM_CTX * S.BAR0_CTX_STRIDE <= S.BAR0_CMDQ_BASE
    assert S.BAR0_CMDQ_BASE + S.NUM_CTX * S.BAR0_CTX_STRIDE <= S.BAR0_SIZE


def test_c_header_compiles_for_host_and_soft_core(tmp_path):
    src = tmp_path / "t.c"
    src.write_text('#include "rnic_spec.h"\n'
                   '_Static_assert(RNIC_CQE_SIZE == RNIC_CQE_BYTES, "cqe");\n'
                   'int f(unsigned char *b) { RNIC_CQE_BYTE_LEN_SET(b, 7); return RNIC_CQE_BYTE_LEN_GET(b); }\n')
    for cc in (["gcc"], ["riscv64-unknown-elf-gcc", "-march=rv32im", "-mabi=ilp32", "-ffreestanding"]):
        r = subprocess.run(cc + ["-Wall", "-Wextra", "-Werror", "-c", "-I", str(ROOT / "spec" / "gen"),
                                 str(src), "-o", str(tmp_path / "t.o")], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr


def test_block_registers_leave_the_common_header_alone():
    for blk in ("ID", "CLOCK", "STATS", "PORT", "ADMIN", "CTXBLK"):
        base = getattr(S, blk)["_BASE"][0]
        for name, (off, _f) in getattr(S, blk).items():
            assert name == "_BASE" or off - base >= 0x10, f"{blk}.{name} overlaps the block header"
