"""What a benchmark's own commands share (:meth:`Benchmark.add_commands`)."""

from __future__ import annotations


def connection_options(p, *, figures: bool = True) -> None:
    p.add_argument("--data-dir", default=None, help="the folder holding raw/ (default data/)")
    if figures:
        p.add_argument("--figures-dir", default=None, help="write here instead of figures/")
    p.add_argument("--ssh-config", default=None, help="ssh_config file (default ~/.ssh/config)")
    p.add_argument("--trust-new-host-keys", action="store_true",
                   help="accept and record an unknown host key (default: refuse it)")
