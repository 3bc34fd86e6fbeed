"""The registry and the base class of every benchmark, with its typed parameters.

A benchmark is a class that registers itself (the ``register`` class decorator) with its name,
notebook, typed parameters, what it needs from a target, how it plans runs
from the targets' preflights, how one run executes, and how its report is
rebuilt from raw files. :func:`run_benchmark` does the shared path once:
validate the parameters, connect and preflight each target once (the preflight
is handed down, never redone), plan, lock, run, write the manifest.
:func:`report` dispatches on the benchmark recorded in a campaign's manifest.
Notebooks, the command line (``python -m analysis run``) and ``make figures``
all go through here (:mod:`.run`, :mod:`.report`). Benchmarks are found by importing
the modules and folders of :mod:`analysis.benchmarks`, then the entry points other
installed packages declare in the group ``analysis.benchmarks`` (:mod:`.plugins`):
nothing keeps a list of them.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from analysis import _params
from analysis.benchmarks.core import plugins
from analysis.campaign import Campaign, Execute, RunSpec
from analysis.errors import DataFormatError, ParameterError
from analysis.targets import ConnectOptions
from analysis.targets.needs import Need, resolve

_REGISTRY: dict[str, Benchmark] = {}
#: the modules of this subpackage that hold no benchmark (the machinery); every other module
#: or folder holds one (the structure test checks it)
MACHINERY = ("core",)
_DISCOVERED = False


@dataclass(frozen=True)
class Param:
    """One parameter of a benchmark: its default, a one-line description, and a check
    that turns any accepted form (a papermill literal, a command-line string) into the
    canonical value or raises :class:`ParameterError`."""

    name: str
    default: Any
    description: str
    kind: str = "str"  # for listings: int, str, list, size, ...
    check: Callable[[Any], Any] | None = None

    def parse(self, value):
        if value is None and self.default is None:
            return None
        return self.check(value) if self.check else value

    @classmethod
    def integer(cls, name: str, default, description: str, minimum: int | None = None,
                maximum: int | None = None) -> Param:
        def check(v):
            return _params.optional_integer(name, v, minimum, maximum)
        return cls(name, default, description, "int", check)

    @classmethod
    def choice(cls, name: str, default, description: str, allowed: Sequence[str]) -> Param:
        return cls(name, default, description, "|".join(allowed),
                   lambda v: _params.choice(name, v, allowed))

    @classmethod
    def preset(cls, presets: dict[str, dict]) -> Param:
        """The ``preset`` parameter of a benchmark with named sizes (its first preset is
        the default, and its values are the other parameters' registered defaults)."""
        names = tuple(presets)
        sizes = "; ".join(f"{n}: " + ", ".join(f"{k}={v!r}" for k, v in values.items())
                          for n, values in presets.items())
        return cls.choice("preset", names[0], "a named size; it sets the parameters left at "
                          f"their defaults ({sizes})", names)

    @classmethod
    def names(cls, name: str, default, description: str,
              allowed: Sequence[str] | None = None) -> Param:
        return cls(name, default, description, "list",
                   lambda v: _params.names(name, v, allowed))


@dataclass
class Plan:
    """What a benchmark will run: the runs, the parameters that identify the campaign
    (recorded in the manifest; resuming with others is refused), what it cannot run and
    why, a table for people, and whatever its ``execute`` needs (``state``)."""

    runs: list[RunSpec]
    parameters: dict
    not_run: dict = field(default_factory=dict)
    table: Any = None
    state: dict = field(default_factory=dict)
    #: several targets: the order in which they take turns, as steps of (target -> its
    #: runs); each step's targets run in parallel, the steps one after the other (an A/B
    #: comparison alternates its two targets block by block). None: every target runs
    #: ``runs``, all targets in parallel.
    steps: list[dict[str, list[RunSpec]]] | None = None
    #: the tracer scripts the runs attach (tracer -> local paths under ``remote/``), which
    #: are compiled on every target before the campaign is created
    #: (:func:`analysis.tracing.compile.check_scripts`; DTrace's only)
    scripts: dict = field(default_factory=dict)



@dataclass(frozen=True)
class RunOptions:
    """How a campaign runs, beside its benchmark's parameters, as one value:
    :func:`~analysis.benchmarks.run_benchmark` builds it from its keywords and the run path
    passes it down. ``campaign``: its name (None: a new one); ``data_dir``; ``connection``:
    how its targets are reached (:class:`~analysis.targets.ConnectOptions`);
    ``allow_foreign_tracers``; ``progress``: its line shown; ``on_run(run, staging, info)``
    after each run; ``stop``: an event another thread sets to stop it as Ctrl-C does."""

    campaign: str | None = None
    data_dir: Any = None
    connection: ConnectOptions = field(default_factory=ConnectOptions)
    allow_foreign_tracers: bool = False
    progress: bool = True
    on_run: Callable | None = None
    stop: threading.Event | None = None


class Benchmark:
    """Base class of a benchmark. Subclasses set the class attributes and implement
    :meth:`plan`, :meth:`execute` and :meth:`report`, then register themselves with the
    ``register`` decorator."""

    name: ClassVar[str]
    description: ClassVar[str]
    #: its notebook's stem in ``notebooks/`` ("": none; a plug-in's are its own)
    notebook: ClassVar[str] = ""
    #: the distribution a plug-in benchmark came from (``tracelab-sleeper 0.1.0``), set
    #: when its entry point is loaded (:mod:`.plugins`); None: one of this package's own
    origin: str | None = None
    #: what bootstrap installs for it: names of :data:`analysis.targets.needs.CATALOGUE`
    #: (``bpftrace``, ``hyperfine``, ``cc``, ``tracefs``, ...) or a
    #: :class:`~analysis.targets.needs.Need` of its own (packages per package manager, a
    #: shell check of presence: benchmark 2's kernel sources)
    needs: ClassVar[tuple[str | Need, ...]] = ()
    #: what else it needs of a target that no package brings, in words (kernel features,
    #: root): said after its needs' own words (``python -m analysis benchmarks``, the docs)
    also_needs: ClassVar[tuple[str, ...]] = ()
    params: ClassVar[tuple[Param, ...]] = ()
    several_targets: ClassVar[bool] = False
    #: named sizes (``preset="quick"`` / ``"thesis"``), chosen by the ``preset`` parameter
    #: (:meth:`Param.preset`): each sets the parameters a caller left at their registered
    #: defaults; the first preset's values are those defaults (one source of defaults)
    presets: ClassVar[dict[str, dict]] = {}

    #: what of its :attr:`needs` (by name) the benchmark can run without: its plan
    #: substitutes or skips (with the reason) the experiments that need it
    optional: ClassVar[tuple[str, ...]] = ()

    #: the other benchmarks this one runs (through :func:`get` or ``run_benchmark``): a
    #: benchmark imports no other, so the dependency is declared here and the structure
    #: test checks that every one it names in code is declared
    uses: ClassVar[tuple[str, ...]] = ()

    def check(self, p: dict) -> dict:
        """Checks across parameters (after each one's own); returns them."""
        return p

    def target_needs(self) -> tuple[Need, ...]:
        """Its :attr:`needs` as :class:`~analysis.targets.needs.Need` objects (what bootstrap
        and provisioning receive for it)."""
        return resolve(self.needs, self.name)

    def needs_in_words(self) -> tuple[str, ...]:
        """What it needs of a target, for people: each need's words, then :attr:`also_needs`."""
        return tuple(n.words for n in self.target_needs()) + self.also_needs

    def requires(self, p: Params, target: str, targets: Sequence[str]) -> tuple[str, ...]:
        """What (names of its needs, or ``dtrace``) a campaign with the parameters ``p``
        cannot run without on ``target`` (one of ``targets``).
        :func:`~analysis.benchmarks.core.run.run_benchmark` checks it after the preflight, before
        the campaign is created, and refuses in one line naming bootstrap's command
        (:mod:`analysis.benchmarks.core.tools`). Default: its needs but its :attr:`optional` ones."""
        return tuple(n.name for n in self.target_needs() if n.name not in self.optional)

    def unmet(self, p: Params, transport) -> list[str]:
        """What else the target lacks for these parameters that bootstrap does not install
        (one phrase each, checked with :meth:`requires`; e.g. a kernel tarball given as a
        parameter that is not there). Default: nothing."""
        return []

    def add_commands(self, sub) -> None:
        """Add this benchmark's own commands to ``python -m analysis`` (``sub``: its
        argparse sub-parsers; each sets ``func(args) -> exit status``). Most have none: they
        run through ``run`` and ``report``."""

    def read_only(self, p: Params) -> bool:
        """Whether this campaign only reads its target (a production host): then it takes
        no target lock, copies nothing there (its preflight and scans are sent inline),
        pins no CPU and names the tracers it finds at work instead of refusing them
        (:mod:`analysis.benchmarks.core.readonly`). Its ``execute`` must copy nothing
        either. Most benchmarks measure, and never are."""
        return False

    def plan(self, preflights: dict, p: Params, campaign: str) -> Plan:
        raise NotImplementedError

    def execute(self, plan: Plan, p: Params, scratch: Path) -> Execute:
        raise NotImplementedError

    def report(self, camp: Campaign, **kwargs):
        """Build the :class:`~analysis.benchmarks.core.report.Report` of ``camp``, a campaign
        :func:`analysis.report` opened and verified (``kwargs``: this benchmark's report
        options, e.g. ``target``); it writes nothing. Call :func:`analysis.report`, the one
        door, rather than this: it opens, verifies, applies the caveat and writes."""
        raise NotImplementedError

    def costs(self, campaign, *, data_dir=None, target: str | None = None):
        """Per-event costs a finished campaign measured (for the rules of thumb and for
        pricing a probe): a DataFrame[experiment, probe_type, action, per_event_ns,
        per_event_ns_ci_low, per_event_ns_ci_high], and where measured the tracer's own CPU
        per event (``tracer_cpu_ns`` with ``_ci_low``/``_ci_high``); benchmarks without
        per-event costs raise NotImplementedError."""
        raise NotImplementedError(f"{self.name} measures no per-event costs")

    def cost_class(self, experiment: str) -> str | None:
        """What ``experiment``'s program does per event, in the classes a probe is priced
        by (``count``, ``map with key``, ``histogram``, ``stack``, ``printf``; ``none``: an
        empty program), for a benchmark that lends its scripts; None: not one of its own."""
        return None

    def probe_scripts(self, preflight, experiments, tracer: str = "bpftrace") -> list[dict]:
        """Its experiments' scripts under ``tracer`` as ``preflight``'s target would run
        them, for a benchmark that measures them in its own rounds (anatomy explains them):
        per experiment ``id``, ``script`` (a path), ``attach_point``, ``note``, ``skipped``
        (why not, or None), ``tracer`` and ``count_attach`` (bpftrace's attach point of the
        same event). A benchmark without such scripts keeps this one."""
        raise NotImplementedError(f"{self.name} has no probe scripts to lend")

    def mechanisms(self, campaign: Campaign, target: str):
        """Attach points this campaign measured with an empty program, a part of every
        script's cost there (:mod:`analysis.benchmarks.core.parts`): a
        DataFrame[attach_point, mechanism, per_event_ns, per_event_ns_ci_low,
        per_event_ns_ci_high]. A benchmark that measures none keeps this one."""
        raise NotImplementedError(f"{self.name} measures no mechanism")

    def measures(self, campaign: Campaign, target: str,
                 method: str | None = None) -> dict:
        """What ``compare`` compares of a finished campaign on ``target``: per row key a
        :class:`~analysis.stats.measures.Measure` (its runs by round, its unit, what
        identifies it); ``method`` picks one of the timing methods a campaign holds (None:
        its first). A benchmark that cannot be compared yet keeps this one, which says so."""
        can = ", ".join(n for n, b in registry().items() if b.comparable)
        raise ParameterError("campaign", campaign.name, f"comparing {self.name} campaigns "
                             f"is not supported yet (supported: {can})")

    def paired_measures(self, a: Campaign, ta: str, b: Campaign, tb: str) -> tuple:
        """Campaign A's and B's measures to pair row by row, and a sentence on what is
        compared ("" here; dd's says which of its timing methods)."""
        return self.measures(a, ta), self.measures(b, tb), ""

    def explain(self, table) -> list[str]:
        """Lines a comparison of two of its campaigns adds under its rows (``table``: one row
        per measure compared, with ``a``, ``b``, ``ratio``, ``verdict`` and ``moved``, the
        verdict B slower or B faster): what explains a move. Default: none."""
        return []

    @property
    def comparable(self) -> bool:
        """Whether ``compare`` can compare its campaigns (it has its own ``measures``)."""
        return type(self).measures is not Benchmark.measures

    def observer(self, target: str, p: Params):
        """What watches the runs as they finish when the caller gives no ``on_run`` (e.g. a
        figure that grows in the notebook): a callable ``(run, staging, info)``, or None."""
        return None

    def more(self, campaign: Campaign, plan: Plan, p: Params) -> list[RunSpec] | None:
        """Runs to add once the planned ones are done (adaptive benchmarks), decided from
        the campaign's finished runs alone so that a resume decides the same; None: done."""
        return None

    def finish(self, campaign: Campaign, p: Params, transports: dict) -> None:
        """At the campaign's end (however it ends; under its locks, target -> transport):
        release what its runs hold on the targets, or record what is kept and why (e.g.
        in :meth:`Campaign.record_target <analysis.campaign.Campaign.record_target>`, for
        its report). Default: nothing is held."""

    def parse(self, given: dict) -> Params:
        """Every parameter checked and in canonical form, defaults filled in: a frozen
        :class:`Params` (``p.count``), built once :meth:`check` has seen them as a dict."""
        known = {p.name: p for p in self.params}
        for name in given:
            if name not in known:
                raise ParameterError(name, given[name], f"not a parameter of {self.name}; "
                                     f"its parameters: {', '.join(known) or 'none'}")
        values = {n: p.parse(given.get(n, p.default)) for n, p in known.items()}
        for n, value in self.presets.get(values.get("preset"), {}).items():
            if values[n] == known[n].parse(known[n].default):  # left at its default
                values[n] = known[n].parse(value)
        return params(self.name, self.check(values))


class Params:
    """A benchmark's parsed parameters: frozen, one typed attribute per parameter (and per
    value :meth:`Benchmark.check` derived), made by :func:`params`. ``as_dict()`` gives them
    back as a dict (for a manifest)."""

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


@functools.cache
def _params_class(benchmark: str, names: tuple[str, ...]) -> type:
    cls_name = "".join(w.capitalize() for w in re.split(r"[-_]", benchmark)) + "Params"
    return dataclasses.make_dataclass(cls_name, [(n, Any) for n in names], bases=(Params,),
                                      frozen=True)


def params(benchmark: str, values: dict) -> Params:
    """``values`` (a benchmark's checked parameters) as a frozen :class:`Params`."""
    return _params_class(benchmark, tuple(values))(**values)


def register(cls: type[Benchmark]) -> type[Benchmark]:
    """Class decorator: make a benchmark known under its ``name``."""
    _REGISTRY[cls.name] = cls()
    return cls


def _discover() -> None:
    """Import every module and folder of :mod:`analysis.benchmarks` but this machinery (each
    registers its benchmark),
    then load the plug-ins' entry points (:func:`.plugins.load`: a name of the lab's own
    is refused, a plug-in that does not load is a warning)."""
    global _DISCOVERED
    if _DISCOVERED:
        return
    package = __name__.rsplit(".", 2)[0]  # analysis.benchmarks, above this core
    for mod in pkgutil.iter_modules(importlib.import_module(package).__path__):
        if not mod.name.startswith("_") and mod.name not in MACHINERY:
            importlib.import_module(f"{package}.{mod.name}")
    _DISCOVERED = True  # before the plug-ins: one that asks for the registry sees the lab's
    plugins.load(_REGISTRY, Benchmark)


def registry() -> dict[str, Benchmark]:
    """Every registered benchmark by name: this package's own and those of the installed
    packages that declare entry points in the group ``analysis.benchmarks``."""
    _discover()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Benchmark:
    known = registry()
    if name not in known:
        raise ParameterError("benchmark", name, f"expected one of {', '.join(known)}")
    return known[name]


def for_campaign(camp: Campaign) -> Benchmark:
    """The benchmark that made a campaign (from its manifest)."""
    name = camp.benchmark
    if name is None:  # manifests older than the registry name only their notebook
        name = next((b.name for b in registry().values() if b.notebook == camp.notebook),
                    None)
    if name is None:
        raise DataFormatError(camp.manifest_path, "benchmark",
                              "names no benchmark (and no notebook of a known one)")
    known = registry()
    if name not in known:  # e.g. a plug-in's, whose package is not installed here
        raise ParameterError("benchmark", name, f"campaign {camp.name} was made by it, and no "
                             "benchmark of that name is registered here (a plug-in's package "
                             f"not installed?); registered: {', '.join(known)}")
    return known[name]


def script_digest(camp: Campaign, target: str, experiment: str,
                  kinds: Sequence[str] | None = None) -> str | None:
    """The SHA-256 of the tracer script (``.bt``, ``.d``) of ``experiment``'s first finished
    run on ``target`` (of one of ``kinds``: e.g. its timed runs, not its counting run's):
    what a comparison checks two campaigns ran alike."""
    for entry in camp.run_records(target).values():
        if entry.get("experiment") == experiment and entry.get("status") == "done" and (
                kinds is None or entry.get("params", {}).get("kind") in kinds):
            for name, digest in sorted((entry.get("files") or {}).items()):
                if name.endswith((".bt", ".d")):
                    return digest
    return None
