"""Benchmarks from outside: another installed package declares its benchmarks as entry points
of the group ``analysis.benchmarks`` (in its ``pyproject.toml``,
``[project.entry-points."analysis.benchmarks"]``, ``sleeper = "tracelab_sleeper:Sleeper"``),
and the registry loads them after the lab's own, once per process. An entry point names a
subclass of :class:`~analysis.benchmarks.Benchmark` (registered under its ``name``) or a
module that registers its benchmarks with :func:`~analysis.benchmarks.register` when imported.

What is borrowed: as pluggy does for pytest's ``pytest11`` plugins, every entry point of the
group is loaded and the distribution it came from is kept with what it registered (pytest
names it in its header; ``python -m analysis benchmarks`` does here); as papermill's
``papermill.engine`` and ``papermill.translators`` entry points, the entry point names the
object to register and its own name is a label. What is not: papermill lets a later
registration replace an earlier one and pytest stops on a plugin that does not import. Here
a name the lab (or an earlier plug-in) already has is refused, and a plug-in that does not
load is one warning line naming its distribution and entry point: the lab's own benchmarks,
and the other plug-ins, stay. This module imports nothing of the registry's: it is handed
the registry and the base class (:mod:`.base` imports it).
"""

from __future__ import annotations

import importlib.metadata
import re
import types
import warnings

#: the entry-point group in which an installed package declares its benchmarks
GROUP = "analysis.benchmarks"
#: a benchmark's name ends up in campaign names and paths
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def load(registry: dict, kind: type) -> list[str]:
    """Every entry point of :data:`GROUP` (in the order of ``sys.path``, as imports go)
    loaded into ``registry`` (name -> benchmark; ``kind``: the base class); the names
    registered."""
    names = []
    for ep in importlib.metadata.entry_points(group=GROUP):
        names += load_one(ep, registry, kind)
    return names


def origin(ep: importlib.metadata.EntryPoint) -> str:
    """The distribution an entry point comes from: ``tracelab-sleeper 0.1.0``."""
    dist = getattr(ep, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "an unnamed distribution"


def load_one(ep: importlib.metadata.EntryPoint, registry: dict, kind: type) -> list[str]:
    """One entry point's benchmarks added to ``registry`` (their ``origin`` set to
    :func:`origin`); the names added. What it cannot add is a warning, one line naming the
    distribution and the entry point, and leaves ``registry`` as it was."""
    where = f"benchmark plug-in {origin(ep)} (entry point {ep.name} = {ep.value})"
    before = dict(registry)
    try:
        found = _registered(ep, registry, kind)
    except Exception as exc:  # the plug-in's defect: said, and the lab goes on without it
        _warn(f"{where}: not loaded: {type(exc).__name__}: {exc}")
        return []
    finally:
        registry.clear()
        registry.update(before)
    added = []
    for name, bench in found.items():
        if name in registry:
            had = getattr(registry[name], "origin", None)
            _warn(f"{where}: benchmark {name!r} refused: "
                  f"{'plug-in ' + had if had else 'this package'} has a benchmark of that name")
            continue
        bench.origin = origin(ep)
        registry[name] = bench
        added.append(name)
    return added


def _registered(ep: importlib.metadata.EntryPoint, registry: dict, kind: type) -> dict:
    """What loading ``ep`` registers (name -> benchmark; possibly over a name ``registry``
    had, which the caller refuses): a module's ``register`` decorations, or the class it names."""
    before = dict(registry)
    obj = ep.load()
    if isinstance(obj, type) and issubclass(obj, kind):
        if not any(type(b) is obj for b in registry.values()):  # not registered by its decorator
            bench = obj()
            registry[bench.name] = bench
        homes = (obj,)
    elif isinstance(obj, types.ModuleType):
        homes = tuple(type(b) for b in registry.values()  # imported before: registered then
                      if f"{type(b).__module__}.".startswith(f"{obj.__name__}."))
    else:
        raise TypeError(f"{ep.value} is {type(obj).__name__}, neither a subclass of "
                        f"{kind.__name__} nor a module that registers one")
    found = {n: b for n, b in registry.items() if before.get(n) is not b}
    if not found and not homes:
        raise LookupError(f"{ep.value} registers no benchmark")
    for name, bench in found.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ValueError(f"benchmark name {name!r}: use letters, digits, '.', '_' and '-'")
        if not isinstance(getattr(bench, "description", None), str):
            raise AttributeError(f"{type(bench).__name__} has no description")
        for method in ("plan", "execute", "report"):
            if getattr(type(bench), method) is getattr(kind, method):
                raise AttributeError(f"{type(bench).__name__} defines no {method}()")
    return found


def _warn(text: str) -> None:
    warnings.warn(" ".join(text.split()), stacklevel=4)
