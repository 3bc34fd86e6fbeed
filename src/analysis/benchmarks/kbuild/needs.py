"""What benchmark 2 needs of a target beyond the shared needs: the kernel's sources (Debian's
package puts its tarball at :data:`SOURCES`) and the tools that build them, with their
packages per package manager and the shell check that tells they are there."""

from __future__ import annotations

import shlex

from analysis.targets.needs import Need

#: what benchmark 2 builds by default (the ``sources`` parameter)
SOURCES = "/usr/src/linux-source-6.1.tar.xz"

#: the kernel sources and what building them needs (another ``sources`` is the benchmark's
#: ``unmet`` to check: bootstrap installs Debian's alone)
KERNEL_SOURCES = Need(
    "kernel-sources", f"the kernel sources ({SOURCES}) and flex, bison, bc",
    apt=("linux-source-6.1", "flex", "bison", "bc", "libelf-dev", "libssl-dev"),
    pkg=None,  # FreeBSD: /usr/src comes with the base system's source distribution
    check=f"test -r {shlex.quote(SOURCES)} && command -v flex && command -v bison "
          "&& command -v bc", linux_only=True)

#: every need of benchmark 2 (``KernelBuild.needs``)
NEEDS = ("bpftrace", "tracefs", "hyperfine", "cc", KERNEL_SOURCES)
