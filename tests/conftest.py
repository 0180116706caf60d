import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))


def pytest_terminal_summary(terminalreporter):
    """rdma-core's suite, module by module (tests/test_rdma_core.py)."""
    mod = sys.modules.get("test_rdma_core")
    if mod and mod.REPORT:
        w = terminalreporter.write_line
        w("rdma-core v44 tests on rnic0")
        w(f"  {'module':24s}" + "".join(f"{h:>8s}" for h in ("run", "passed", "failed", "errors", "skipped")))
        for name, *n in mod.REPORT:
            w(f"  {name:24s}" + "".join(f"{v:8d}" for v in n))
