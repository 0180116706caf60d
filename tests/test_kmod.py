"""The Linux kernel module builds, warning-free, against every Debian kernel's headers installed
(the set-up installs Debian 12's 6.1 and its newest 6.12): kbuild with W=1 and sparse (C=2). Its
uapi header is generated from the spec and stands alone in user space."""
import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
UAPI = ROOT / "driver" / "include" / "uapi" / "rnic" / "rnic_uapi.h"


def test_module_builds_clean_against_each_kernel():
    (ROOT / "build" / "kmod" / "build.stamp").unlink(missing_ok=True)  # build now, to see its output
    r = subprocess.run(["make", "-s", "kmod"], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    kernels = re.findall(r"^kmod: (\S+)$", out, re.M)
    assert len(kernels) >= 2 and any(k.startswith("6.1.") for k in kernels) and \
        any(k.startswith("6.12.") for k in kernels), kernels
    noise = [ln for ln in out.splitlines() if re.search(r"warning|error|sparse:", ln, re.I)]
    assert noise == [], "\n".join(noise)
    for k in kernels:
        ko = ROOT / "build" / "kmod" / k / "rnic.ko"
        info = subprocess.run(["/sbin/modinfo", str(ko)], capture_output=True, text=True, check=True).stdout
        assert "alias:          pci:v000010EEd00009038" in info and f"vermagic:       {k} " in info


def test_uapi_header_stands_alone(tmp_path):
    src = tmp_path / "u.c"
    src.write_text('#include "rnic/rnic_uapi.h"\n#include <stddef.h>\n'
                   "_Static_assert(sizeof(struct rnic_uapi_query) % 8 == 0, \"padding\");\n"
                   "_Static_assert(offsetof(struct rnic_uapi_query, db_offset) == 16, \"layout\");\n"
                   "int main(void) { return RNIC_IOCTL_QUERY == 0; }\n")
    subprocess.run(["gcc", "-Wall", "-Wextra", "-Werror", "-Wpadded", f"-I{UAPI.parent.parent}", str(src),
                    "-o", str(tmp_path / "u")], check=True)


def test_checkpatch_clean():
    """The kernel-only code passes checkpatch --strict (the driver core is shared with user space
    and keeps the project's style)."""
    cp = ROOT / ".venv" / "share" / "checkpatch" / "checkpatch.pl"
    for name in ("rnic_main.c", "rnic_ioctl.c", "rnic_drv.h"):
        r = subprocess.run(["perl", str(cp), "--no-tree", "--strict", "-f", str(ROOT / "driver" / "linux" / name)],
                           capture_output=True, text=True, timeout=120)
        assert "total: 0 errors, 0 warnings, 0 checks" in r.stdout, name + ": " + r.stdout
