"""Targets: what a benchmark runs on and how it is reached. :mod:`.target` turns a
``target`` parameter into a :class:`Target` and its connection (:class:`ConnectOptions`: the
connection settings as one value; :mod:`.transport`: local;
:mod:`.ssh`, :mod:`.ssh_transfer`: SSH; :mod:`.vm`: QEMU guests); :mod:`.locks` keeps one
campaign per target; :mod:`.deploy` puts the remote scripts and workloads there;
:mod:`.preflight` asks what it can do, :mod:`.foreign` which tracers are already on it,
:mod:`.needs` says what a benchmark may need of it (the benchmarks declare theirs),
:mod:`.bootstrap` installs what it lacks; :mod:`.loopback` starts sshd test targets on
``127.0.0.0/8``."""

from __future__ import annotations

from analysis.targets.target import LOCAL, ConnectOptions, Target, check_target, connect

__all__ = ["LOCAL", "ConnectOptions", "Target", "check_target", "connect"]
