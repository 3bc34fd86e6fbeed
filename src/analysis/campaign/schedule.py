"""Which hosts of a fleet run at the same time: never two that share a kernel.

Hosts whose kernels have the same boot (Linux's ``boot_id``) are one machine seen several
ways (containers, network namespaces, loopback aliases): each would see the other's tracer
as a foreign one and slow the other down. :func:`kernel_groups` puts them in one group, run
one after the other; :func:`dispatch` runs the groups side by side, at most ``parallel`` at
once, each in a thread of its own. A host whose kernel could not be told goes with the
others that could not: together, one at a time, never beside one another.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

UNKNOWN = "unknown"


def kernel_groups(kernels: Mapping[str, str | None]) -> list[list[str]]:
    """host -> its kernel's boot id (None: unknown) as groups of hosts that share a
    kernel, the largest group first (it takes longest), hosts in the order given."""
    groups: dict[str, list[str]] = {}
    for host, boot in kernels.items():
        groups.setdefault(boot or UNKNOWN, []).append(host)
    return sorted(groups.values(), key=len, reverse=True)


def dispatch(groups: Sequence[Sequence[str]], work: Callable[[str], object], *,
             parallel: int, stop: threading.Event | None = None) -> None:
    """``work(host)`` for every host: the hosts of a group one after the other, up to
    ``parallel`` groups at once. ``stop`` set (Ctrl-C in the caller's thread, which sets it
    and re-raises): no host starts after it. What ``work`` raises stops the rest the same
    way and is raised here."""
    stop = stop or threading.Event()
    if parallel < 1:
        raise ValueError("parallel must be 1 or more")

    def one_group(hosts: Sequence[str]) -> None:
        for host in hosts:
            if stop.is_set():
                return
            try:
                work(host)
            except BaseException:
                stop.set()
                raise

    if not groups:
        return
    with ThreadPoolExecutor(max_workers=min(parallel, len(groups)),
                            thread_name_prefix="fleet") as pool:
        futures = [pool.submit(one_group, g) for g in groups]
        try:
            for f in futures:
                f.result()
        except BaseException:
            stop.set()
            raise
