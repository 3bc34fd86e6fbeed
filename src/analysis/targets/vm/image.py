"""Building a disposable VM image: a Debian root file system from Debian's packages.

``mmdebstrap`` makes the root file system (as root: into a directory, then
``mkfs.ext4 -d`` makes the disk image; not root: its unshare mode, writing an
ext2 image with ``genext2fs``). Everything put into the image is done by
mmdebstrap hooks, the same in both modes: the client key's public half in
root's ``authorized_keys``, a DHCP network, ``/etc/fstab``; the kernel, its
initrd and the guest's SSH host keys are copied out, so the first connection
to a booted guest is verified against keys captured at build time (no trust on
first use). The image is rebuilt only when asked or when its recipe (package
list, suite, kernel flavour) changes: :func:`recipe` hashes it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from analysis.errors import ParameterError, VMError
from analysis.storage import atomic_write, mkdirs
from analysis.targets import dtrace_install

RECIPE_VERSION = 1
SUITE = "bookworm"
MIRROR = "http://deb.debian.org/debian"
#: what every image holds: an init, sshd, the tracers and workloads the benchmarks need
PACKAGES = ("systemd-sysv", "udev", "kmod", "iproute2", "e2fsprogs", "procps", "openssh-server",
            "bpftrace", "hyperfine", "rt-tests", "lttng-tools", "liblttng-ust-dev", "babeltrace2",
            "gcc", "libc6-dev", "systemtap-sdt-dev", "make", "binutils", "busybox")
KERNELS = {"standard": "linux-image-amd64", "rt": "linux-image-rt-amd64"}
#: LTTng kernel modules are built for the guest kernel by DKMS (minutes): only when asked
LTTNG_MODULES = ("lttng-modules-dkms", "linux-headers-rt-amd64", "linux-headers-amd64")
HOST_KEY_TYPES = ("ed25519", "ecdsa", "rsa")
#: systemd units that would wake up during a campaign and add noise
MASKED = ("apt-daily.timer", "apt-daily-upgrade.timer", "man-db.timer", "e2scrub_all.timer",
          "e2scrub_reap.service", "getty-static.service",
          "fstrim.timer", "lttng-sessiond.service")
#: host tools and the Debian package that has each
HOST_TOOLS = {"mmdebstrap": "mmdebstrap", "mkfs.ext4": "e2fsprogs",
              "qemu-system-x86_64": "qemu-system-x86"}
#: the host tools ``python -m analysis bootstrap local --tests`` installs (a test keeps this
#: equal to :data:`analysis.targets.bootstrap.TESTS_APT`'s; not imported: bootstrap imports us)
BOOTSTRAP_INSTALLS = frozenset({"mmdebstrap", "mkfs.ext4", "qemu-system-x86_64"})


def packages(kernel: str, lttng_modules: bool, dtrace: bool = False) -> list[str]:
    if kernel not in KERNELS:
        raise ParameterError("kernel", kernel, f"the kernel must be one of {sorted(KERNELS)}")
    extra = []
    if lttng_modules:
        headers = "linux-headers-rt-amd64" if kernel == "rt" else "linux-headers-amd64"
        extra = ["lttng-modules-dkms", headers]
    if dtrace:  # what building DTrace for Linux takes: the guest has no network to fetch it
        extra += list(dtrace_install.BUILD_APT)
    return sorted({KERNELS[kernel], *PACKAGES, *extra})


def recipe(kernel: str, lttng_modules: bool = False, dtrace: bool = False) -> dict:
    """What an image is made from; its ``hash`` decides whether a cached image is current
    (``dtrace``: DTrace's build packages too; recorded only when asked, so the hash of an
    image without them is unchanged)."""
    r = {"recipe_version": RECIPE_VERSION, "suite": SUITE, "mirror": MIRROR, "kernel": kernel,
         "packages": packages(kernel, lttng_modules, dtrace), "lttng_modules": lttng_modules,
         "masked": list(MASKED)}
    if dtrace:
        r["dtrace"] = True
    r["hash"] = hashlib.sha256(json.dumps(r, sort_keys=True).encode()).hexdigest()[:16]
    return r


def need_host_tool(tool: str, name: str) -> str:
    """The path of a tool the VM tooling runs on this machine; a missing one is a
    :class:`VMError` naming what installs it: ``python -m analysis bootstrap local --tests``
    where bootstrap has it (:data:`BOOTSTRAP_INSTALLS`: mmdebstrap, mkfs.ext4, QEMU), else
    its Debian package."""
    path = shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")
    if path is None:
        package = HOST_TOOLS.get(tool, tool)
        how = (f"`python -m analysis bootstrap local --tests` installs it (package {package}, "
               "with the rest of what the tests need), or apt-get install " + package) \
            if tool in BOOTSTRAP_INSTALLS else f"apt-get install {package}"
        raise VMError(name, f"{tool} is not installed on this machine: {how}")
    return path


def client_key(folder: Path, comment: str) -> str:
    """A new ed25519 key pair (``id_ed25519`` 0600, ``id_ed25519.pub``); its public line."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH).decode()
    path = folder / "id_ed25519"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(private)
    line = f"{public} {comment}\n"
    (folder / "id_ed25519.pub").write_text(line)
    return line


def _guest_files(folder: Path, name: str) -> Path:
    """The files the hooks upload into the guest, in ``folder/guest``."""
    g = mkdirs(folder / "guest")
    (g / "hostname").write_text(f"vm-{name}\n")
    (g / "hosts").write_text(f"127.0.0.1 localhost\n127.0.1.1 vm-{name}\n")
    (g / "fstab").write_text("/dev/vda / auto rw,errors=remount-ro 0 1\n")
    (g / "network").write_text("[Match]\nName=en* eth*\n\n[Network]\nDHCP=yes\n")
    (g / "sshd").write_text("PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
                            "PermitRootLogin prohibit-password\nUseDNS no\n")
    shutil.copy(folder / "id_ed25519.pub", g / "authorized_keys")
    return g


def _hooks(folder: Path, guest: Path) -> list[str]:
    """mmdebstrap customize hooks: the same in root and unshare mode."""
    up = [("hostname", "/etc/hostname"), ("hosts", "/etc/hosts"), ("fstab", "/etc/fstab"),
          ("network", "/etc/systemd/network/10-tracelab.network"),
          ("sshd", "/etc/ssh/sshd_config.d/tracelab.conf"),
          ("authorized_keys", "/root/.ssh/authorized_keys")]
    hooks = ['mkdir -p "$1/root/.ssh" "$1/etc/systemd/network" "$1/etc/ssh/sshd_config.d"']
    hooks += [f"upload {guest / src} {dst}" for src, dst in up]
    hooks += ['chmod 700 "$1/root/.ssh"', 'chmod 600 "$1/root/.ssh/authorized_keys"',
              'chroot "$1" systemctl enable systemd-networkd',
              'chroot "$1" systemctl mask ' + " ".join(MASKED),
              # kernel and initrd for QEMU's -kernel/-initrd (no boot loader in the image)
              f'cp "$1"/boot/vmlinuz-* {folder}/vmlinuz',
              f'cp "$1"/boot/initrd.img-* {folder}/initrd.img',
              f'ls "$1"/lib/modules > {folder}/kernel-release',
              f'chroot "$1" dpkg-query -W > {folder}/guest-packages.txt']
    hooks += [f'cp "$1"/etc/ssh/ssh_host_{t}_key.pub {folder}/host_{t}_key.pub'
              for t in HOST_KEY_TYPES]
    hooks += [f'(chroot "$1" dkms status 2>&1 || true) > {folder}/dkms-status.txt']
    return hooks


def mmdebstrap_argv(r: dict, folder: Path, target: Path, guest: Path, root: bool) -> list[str]:
    argv = [need_host_tool("mmdebstrap", folder.name), "--variant=minbase",
            "--mode=" + ("root" if root else "unshare"),
            "--aptopt=APT::Install-Recommends \"false\"",
            "--include=" + ",".join(r["packages"])]
    if not root:
        argv.append("--format=ext2")
    argv += [f"--customize-hook={h}" for h in _hooks(folder, guest)]
    return argv + [r["suite"], str(target), r["mirror"]]


def _run_logged(argv: list[str], log: Path, name: str, say: Callable[[str], None]) -> None:
    """Run ``argv``, its output appended to ``log``; mmdebstrap's ``I:`` phases are said."""
    with open(log, "ab") as fh:
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        assert proc.stderr is not None
        try:
            for raw in proc.stderr:
                fh.write(raw)
                line = raw.decode("utf-8", "replace").strip()
                if line.startswith("I: ") and "..." in line:
                    say(line[3:])
            rc = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    if rc != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise VMError(name, f"{Path(argv[0]).name} failed (exit {rc}); the end of {log}:\n"
                            + "\n".join(tail))


def build_into(folder: Path, name: str, r: dict, say: Callable[[str], None],
               disk_headroom_mb: int = 2048) -> dict:
    """Build the image of recipe ``r`` into the empty ``folder``; its ``image.json``."""
    root = os.geteuid() == 0
    started = time.monotonic()
    client_key(folder, f"tracelab-vm-{name}")
    guest = _guest_files(folder, name)
    log = folder / "build.log"
    disk = folder / "rootfs.img"
    if root:
        tree = Path(tempfile.mkdtemp(prefix="rootfs-", dir=folder))
        try:
            _run_logged(mmdebstrap_argv(r, folder, tree, guest, True), log, name, say)
            say("making the ext4 disk image")
            size_mb = _tree_mb(tree) + disk_headroom_mb
            _run_logged([need_host_tool("mkfs.ext4", name), "-q", "-F", "-L", "tracelab",
                         "-d", str(tree), str(disk), f"{size_mb}M"], log, name, say)
        finally:
            shutil.rmtree(tree, ignore_errors=True)
    else:
        need_host_tool("genext2fs", name)
        _run_logged(mmdebstrap_argv(r, folder, disk, guest, False), log, name, say)
    shutil.rmtree(guest)
    host_keys = [(folder / f"host_{t}_key.pub").read_text().split()[:2] for t in HOST_KEY_TYPES
                 if (folder / f"host_{t}_key.pub").is_file()]
    if not host_keys:
        raise VMError(name, "the image has no SSH host key (openssh-server did not install?)")
    versions = dict(line.split("\t", 1) for line in
                    (folder / "guest-packages.txt").read_text().splitlines() if "\t" in line)
    info = {**r, "name": name, "built": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "build_s": round(time.monotonic() - started, 1),
            "kernel_release": (folder / "kernel-release").read_text().split()[-1],
            "disk_bytes": disk.stat().st_size, "host_keys": [" ".join(k) for k in host_keys],
            "versions": {p: versions.get(p) for p in ("bpftrace", "hyperfine", "rt-tests",
                                                        "lttng-tools", "openssh-server")},
            "lttng_modules_built": _dkms_ok(folder)}
    atomic_write(folder / "image.json", json.dumps(info, indent=2) + "\n")
    return info


def _dkms_ok(folder: Path) -> bool:
    status = folder / "dkms-status.txt"
    return status.is_file() and "lttng" in status.read_text() and \
        "installed" in status.read_text()


def _tree_mb(tree: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(tree):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return int(total * 1.15 / 2**20) + 256  # inodes, directories, journal
