"""The VMs' guest: Debian's stock kernel of the ABI rnic.ko is built for (linux-image-<ABI>,
downloaded, never installed) and an initramfs made from Debian packages and this build: busybox
(busybox-static), Debian's verbs tools and perftest with the libraries they load (as installed on
this machine by scripts/setup.sh), Debian's libibverbs and rxe provider (the rxe guest), the
project's libibverbs.so.1 and librdmacm.so.1 (the rnic guest), rnic-stat, the ioctl checks of
tests/apps/kmod_ioctls.c, Debian's udev with the documented rule, rnic.ko, the kernel modules of
virtio-net, rdma_rxe and fw_cfg, and sim/qemu/init.sh as /init. Prints the kernel's and the
initramfs's paths; both are kept in the cache (~/.cache/rnic/vm), the kernel per ABI, the
initramfs per hash of what went into it.

    .venv/bin/python sim/qemu/guest.py
"""
import glob
import hashlib
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
CACHE = pathlib.Path(os.environ.get("RNIC_CACHE") or pathlib.Path(os.environ.get("XDG_CACHE_HOME") or
                                                                  pathlib.Path.home() / ".cache") / "rnic") / "vm"
# Debian's tools the guests run (ibverbs-utils, perftest, rdmacm-utils, iproute2's rdma)
TOOLS = ["ibv_devinfo", "ibv_devices", "ibv_rc_pingpong", "ibv_ud_pingpong", "rping", "ucmatose", "udaddy", "rdma",
         *(f"ib_{op}_{kind}" for op in ("write", "read", "send", "atomic") for kind in ("bw", "lat"))]
# kernel modules (with what they depend on): the guests' network, Linux's own RoCE (and the crc32
# its ICRC asks the crypto API for) and its connection manager for librdmacm, fw_cfg (the harness
# hands each guest its script through it)
MODULES = ["virtio_pci", "virtio_net", "crc32_generic", "rdma_rxe", "rdma_ucm", "qemu_fw_cfg"]
MULTIARCH = "/usr/lib/x86_64-linux-gnu"
# the udev rule docs/ARCHITECTURE.md ("On a card") documents for unprivileged use; the guest's
# systemd-udevd (Debian's udev, as installed here) applies it
UDEV_RULE = 'KERNEL=="rnic[0-9]*", MODE="0666"\n'


def run(*cmd, cwd=None):
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def kernel_abi():
    """The 6.1 ABI whose headers the module is built against (build/kmod/<ABI>)."""
    heads = pathlib.Path("/usr/src").glob("linux-headers-6.1.*-amd64")
    abis = sorted(p.name.removeprefix("linux-headers-") for p in heads)
    if not abis:
        sys.exit("guest: no linux-headers-6.1.*-amd64 in /usr/src (scripts/setup.sh installs them)")
    return abis[-1]


def kernel(abi):
    """vmlinuz and the modules of linux-image-<abi>, unpacked once into the cache."""
    d = CACHE / f"kernel-{abi}"
    if (d / "vmlinuz").exists():
        return d
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        run("apt-get", "download", "-q", f"linux-image-{abi}", cwd=tmp)
        deb = glob.glob(f"{tmp}/linux-image-*.deb")[0]
        run("dpkg-deb", "-x", deb, f"{tmp}/root")
        part = pathlib.Path(tmp) / "kernel"
        (part / "lib" / "modules").mkdir(parents=True)
        shutil.copy(f"{tmp}/root/boot/vmlinuz-{abi}", part / "vmlinuz")
        shutil.copytree(f"{tmp}/root/lib/modules/{abi}", part / "lib" / "modules" / abi, symlinks=True)
        run("/sbin/depmod", "-b", str(part), abi)  # modules.dep: the package leaves it to its postinst
        if d.exists():
            shutil.rmtree(d)
        part.rename(d)
    return d


def module_files(kdir, abi):
    """The modules of MODULES and all they depend on, in load order (modules.dep)."""
    mdir = kdir / "lib" / "modules" / abi
    deps = {}
    for line in (mdir / "modules.dep").read_text().splitlines():
        mod, _, rest = line.partition(":")
        deps[mod] = rest.split()
    by_name = {re.sub(r"\.ko(\.\w+)?$", "", pathlib.Path(m).name).replace("-", "_"): m for m in deps}
    order = []

    def add(m):
        for d in deps[m]:
            add(d)
        if m not in order:
            order.append(m)

    for name in MODULES:
        add(by_name[name])
    return [mdir / m for m in order]


def package_file(pkg, path, tmp):
    """One file of a Debian package, downloaded (not installed)."""
    run("apt-get", "download", "-q", pkg, cwd=tmp)
    deb = glob.glob(f"{tmp}/{pkg}_*.deb")[0]
    run("dpkg-deb", "-x", deb, f"{tmp}/{pkg}")
    return pathlib.Path(tmp) / pkg / path.lstrip("/")


def libs_of(paths):
    """The shared libraries the programs load (ldd), with their dependencies."""
    found = set()
    for p in paths:
        out = subprocess.run(["ldd", str(p)], capture_output=True, text=True).stdout
        found.update(m.group(1) for m in re.finditer(r"(/\S+) \(0x", out))
    return sorted(found)


def initramfs(abi, kdir):
    tools = [shutil.which(t) for t in TOOLS + ["udevadm"]]
    missing = [t for t, p in zip(TOOLS + ["udevadm"], tools) if not p]
    if missing:
        sys.exit(f"guest: {', '.join(missing)} not installed (scripts/setup.sh installs them)")
    rxe = [f"{MULTIARCH}/libibverbs/librxe-rdmav34.so", "/etc/libibverbs.d/rxe.driver"]
    ko = ROOT / "build" / "kmod" / abi / "rnic.ko"
    ours = [ROOT / "build" / "host-lib" / n for n in ("libibverbs.so.1", "librdmacm.so.1")]
    ioctls = ROOT / "build" / "tests" / "kmod_ioctls"
    stat = ROOT / "build" / "host-lib" / "rnic-stat"
    init = ROOT / "sim" / "qemu" / "init.sh"
    for f in [ko, *ours, ioctls, stat]:
        if not f.exists():
            sys.exit(f"guest: {f} is missing (make all)")
    mods = module_files(kdir, abi)
    # glibc loads libgcc_s itself (pthread_cancel, unwinding at exit)
    libs = sorted(set(libs_of(tools + [rxe[0]])) | {f"{MULTIARCH}/libgcc_s.so.1"})
    h = hashlib.sha256()
    for f in [*tools, *rxe, *libs, ko, *ours, ioctls, stat, init, *mods, __file__]:
        h.update(str(f).encode() + pathlib.Path(f).read_bytes())
    h.update(UDEV_RULE.encode())
    h.update(subprocess.run(["dpkg-query", "-W", "busybox-static"], capture_output=True, text=True).stdout.encode())
    out = CACHE / f"initrd-{abi}-{h.hexdigest()[:16]}.img"
    if out.exists():
        return out
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        r = pathlib.Path(tmp) / "root"
        for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "etc/libibverbs.d",
                  f"lib/modules/{abi}", "opt/rnic/lib", "lib64", MULTIARCH.lstrip("/") + "/libibverbs"):
            (r / d).mkdir(parents=True, exist_ok=True)
        bb = package_file("busybox-static", "/bin/busybox", tmp)
        shutil.copy(bb, r / "bin" / "busybox")
        for t in tools + libs + rxe:
            dst = r / t.lstrip("/")
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(t, dst)
        for lib in ours:
            shutil.copy(lib, r / "opt" / "rnic" / "lib" / lib.name)
        shutil.copy(ko, r / "lib" / "modules" / abi / "rnic.ko")
        shutil.copy(ioctls, r / "usr" / "bin" / "rnic-kmod-ioctls")
        shutil.copy(stat, r / "usr" / "bin" / "rnic-stat")
        (r / "lib" / "modules" / abi / "load").write_text("".join(f"{m.name}\n" for m in mods))
        for m in mods:
            shutil.copy(m, r / "lib" / "modules" / abi / m.name)
        (r / "lib" / "systemd").mkdir(parents=True, exist_ok=True)
        os.symlink(shutil.which("udevadm"), r / "lib" / "systemd" / "systemd-udevd")
        (r / "etc" / "udev" / "rules.d").mkdir(parents=True)
        (r / "etc" / "udev" / "rules.d" / "70-rnic.rules").write_text(UDEV_RULE)
        shutil.copy(init, r / "init")
        os.chmod(r / "init", 0o755)
        with open(out.with_suffix(".tmp"), "wb") as f:
            files = subprocess.run(["find", "."], cwd=r, capture_output=True, check=True).stdout
            cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=r, input=files, capture_output=True,
                                  check=True).stdout
            f.write(subprocess.run(["gzip", "-1"], input=cpio, capture_output=True, check=True).stdout)
        out.with_suffix(".tmp").rename(out)
    return out


def build():
    CACHE.mkdir(parents=True, exist_ok=True)
    abi = kernel_abi()
    kdir = kernel(abi)
    return kdir / "vmlinuz", initramfs(abi, kdir)


if __name__ == "__main__":
    k, i = build()
    print(k)
    print(i)
