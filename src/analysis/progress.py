"""A progress bar that is one line everywhere, and a campaign's progress in words.

In a terminal: tqdm on stderr. In a Jupyter kernel (JupyterLab, papermill):
one text output updated in place through a display handle, so JupyterLab shows
one live line and an executed notebook (and its HTML export) keeps one line
with the final state, not a widget that needs ipywidgets nor a hundred
carriage-return lines.

A campaign's progress (:class:`CampaignProgress`) is one such bar for the whole
campaign, every phase and added round included, whose text says the round, the
precision rule's state (how many experiments within the target, the widest) and
the time used of the budget. papermill does not pass display updates on to its
terminal, so a notebook run by papermill shows nothing of it there; with
``TRACELAB_PROGRESS=stderr`` in the environment (``make demo`` sets it) the same
text is also written as plain lines to the process's own standard error, which in
a Jupyter kernel is the terminal that started papermill, never the notebook: a
line when a round starts, when the rule decides, and at least every
:data:`EVERY_S` seconds in between. Outside a kernel the lines replace the bar (a
log or CI keeps them whole).
"""

from __future__ import annotations

import os
import sys
import threading
import time

from tqdm.std import tqdm

from analysis.errors import ParameterError

#: the environment variable that asks for progress lines (its one value: ``stderr``)
ENV = "TRACELAB_PROGRESS"
#: at most this long between two progress lines while runs finish
EVERY_S = 15.0


class _DisplayLine:
    """A file-like object for tqdm that shows the bar's latest text in one output."""

    def __init__(self):
        from IPython.display import display

        self._handle = display({"text/plain": ""}, raw=True, display_id=True)
        self._text = ""

    def write(self, text: str) -> None:
        line = text.replace("\r", "").strip()
        if line and line != self._text:
            self._text = line
            self._handle.update({"text/plain": line}, raw=True)

    def flush(self) -> None:
        pass


def in_kernel() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None or "ipykernel" not in sys.modules:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and getattr(ip, "kernel", None) is not None


#: a campaign's line in a notebook: its words whole (a bar graphic would cut them at 100)
_WORDS = "{desc}: {n_fmt}/{total_fmt} runs [{elapsed}<{remaining}]{postfix}"


def progress_bar(*, total: int, desc: str, unit: str = "run", disable: bool = False,
                 words: bool = False) -> tqdm:
    """A tqdm bar: on stderr in a terminal, one updated text line in a notebook (there,
    with ``words``, the text without a bar graphic, so that a long postfix stays whole)."""
    if not disable and in_kernel():
        return tqdm(total=total, desc=desc, unit=unit, file=_DisplayLine(), mininterval=0.5,
                    ascii=True, leave=True, dynamic_ncols=False, ncols=None if words else 100,
                    bar_format=_WORDS if words else None)
    return tqdm(total=total, desc=desc, unit=unit, disable=disable, leave=True)


def terminal_fd() -> int | None:
    """The file descriptor progress lines go to when ``TRACELAB_PROGRESS=stderr``, else None.

    The process's own standard error: in a Jupyter kernel ipykernel hands out, as
    ``sys.stderr.fileno()``, a copy of the stderr the kernel was started with (papermill's:
    the terminal), whose writes do not reach the notebook; where ``sys.stderr`` has no
    file descriptor (a kernel that does not capture file descriptors, a test's capture)
    the interpreter's original one. A value other than ``stderr`` raises
    :class:`~analysis.errors.ParameterError` before anything runs."""
    value = os.environ.get(ENV, "").strip()
    if not value:
        return None
    if value != "stderr":
        raise ParameterError(ENV, value, "expected 'stderr' (progress lines on this "
                             "process's standard error: the terminal that started papermill, "
                             f"as make demo sets it) or {ENV} unset")
    for stream in (sys.stderr, sys.__stderr__):
        try:
            return stream.fileno()
        except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
            continue
    return None


def _mmss(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60:02d}:{rest % 60:02d}"


def _share(value: float, digits: int = 1) -> str:
    """A relative half-width as ``+-4.4 %`` (a target: ``+-5 %``, its digits as given)."""
    text = f"{value * 100:.{digits}f}" if digits else f"{value * 100:.3g}"
    return f"+-{text} %"


class CampaignProgress:
    """One campaign's progress on one line: a bar (:func:`progress_bar`) whose text says the
    round, the precision rule's state and the budget, and with ``TRACELAB_PROGRESS=stderr``
    plain lines of the same text on the process's stderr (:func:`terminal_fd`).

    ``title``: what the line starts with (``dd demo-...``); ``target`` and ``budget_s``:
    the precision rule's, known before its first decision; ``rounds``: the planned rounds
    (with a target or a budget, the rule's minimum: it decides only after them). The
    campaign's runner calls :meth:`expect` with the runs it adds, :meth:`tick` per run
    (with the run's duration: the time the budget counts), :meth:`decided` with the
    rule's state (:meth:`analysis.stats.precision.Decision.state`) after each decision, and
    :meth:`close` at the end. Thread-safe (targets tick from their own threads)."""

    def __init__(self, title: str, *, target: float | None = None,
                 budget_s: float | None = None, rounds: int | None = None,
                 disable: bool = False, clock=time.monotonic):
        self.title, self.target, self.budget_s = title, target, budget_s
        self.rounds = rounds
        self.fd = None if disable else terminal_fd()
        lines_only = self.fd is not None and not in_kernel()  # a terminal: lines, no bar
        self.bar = progress_bar(total=0, desc=title, disable=disable or lines_only,
                                words=True)
        self.total = self.finished = self.failed = 0
        self.round: int | None = None
        self.rule: dict | None = None
        self.spent_s = 0.0
        self._clock, self._lock = clock, threading.Lock()
        self._started = clock()
        self._last: float | None = None
        self._closed = self._decided = False
        self._said: set[str] = set()

    # ------------------------------------------------------------ fed by the runner
    def expect(self, runs: int) -> None:
        """``runs`` more runs are planned."""
        with self._lock:
            self.total += runs
            self.bar.total = self.total
            self.bar.refresh()
            if self._last is None:
                goal = "" if self.target is None else f", {_share(self.target, 0)} target"
                budget = "" if self.budget_s is None else \
                    f", budget {_mmss(self.budget_s)}"
                self._write(f"{self.title}: {self.total} runs planned{goal}{budget}")

    def tick(self, target: str, run, status: str, seconds: float | None = None) -> None:
        """A run finished (``done``, ``FAILED``) or was kept from before (``kept``), in
        ``seconds`` (its recorded duration)."""
        with self._lock:
            self.finished += 1
            self.failed += status == "FAILED"
            self.spent_s += float(seconds or 0.0)
            r = _round(run)
            new_round = r is not None and (self.round is None or r > self.round)
            # a line as a round starts (unless the rule's decision has just said where it
            # stands, or the round was run before: a resume), for a failed run, and at
            # least every EVERY_S seconds
            announce = new_round and not self._decided and status != "kept"
            if new_round:
                self.round, self._decided = r, False
            text = self._text()
            self.bar.set_postfix_str(f"{self._state()}; {target}: {run.run_id} {status}",
                                     refresh=False)
            self.bar.update(1)
            now = self._clock()
            if announce or status == "FAILED" or now - (self._last or 0.0) >= EVERY_S:
                self._write(text + (f" ({run.run_id} FAILED)" if status == "FAILED" else ""))

    def decided(self, state: dict | None) -> None:
        """The precision rule decided (``state``: :meth:`~analysis.stats.precision.Decision.state`,
        as recorded in the campaign's manifest); its count of the time spent is the one the
        budget is held to."""
        if not state:
            return
        with self._lock:
            if state == self.rule:
                return
            self.rule = dict(state)
            self.spent_s = max(self.spent_s, float(state.get("spent_s") or 0.0))
            if state.get("target") is not None:
                self.target = state["target"]
            if state.get("budget_s") is not None:
                self.budget_s = state["budget_s"]
            self._decided = True
            self.bar.set_postfix_str(self._state(), refresh=True)
            self._write(self._text())

    def say(self, lines, budget_s: float | None = None) -> None:
        """Lines the campaign has to say (a prediction), each once; ``budget_s``: the
        budget they set (a prediction that extended it), held to from now on."""
        with self._lock:
            if budget_s is not None and self.budget_s is not None:
                self.budget_s = float(budget_s)
            for line in lines:
                if line not in self._said:
                    self._said.add(line)
                    self._write(f"{self.title}: {line}")

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self.bar.close()
            if self._last is not None:
                self._write(self._text(self._end()))

    # ------------------------------------------------------------ the words
    def _state(self) -> str:
        """The round and the rule's state, without the title (the bar's description)."""
        goal = f" ({_share(self.target, 0)} target)" if self.target is not None else ""
        rule = self.rule
        where = "before the first round" if self.round is None else f"round {self.round + 1}"
        if rule is None:
            if self.round is not None and self.rounds:
                adaptive = self.target is not None or self.budget_s is not None
                where += f" of {'at least ' if adaptive else ''}{self.rounds}"
            return where + goal
        if self._decided:  # the rule has just decided, after this round
            where = f"after round {self.round + 1}" if self.round is not None else where
        return f"{where}: {_rule_words(rule)}"

    def _budget(self) -> str:
        used = _mmss(self.spent_s)
        if self.budget_s is None:
            return f"{used} measured"
        left = max(0.0, self.budget_s - self.spent_s)
        return f"{used} of {_mmss(self.budget_s)} used, {_mmss(left)} left in the budget"

    def _text(self, what: str | None = None) -> str:
        runs = f"run {self.finished} of {self.total}" + (
            f" ({self.failed} failed)" if self.failed else "")
        head = f"{self.title} [{_mmss(self._clock() - self._started)}]"
        return f"{head}: {what or self._state()}, {runs}, {self._budget()}"

    def _end(self) -> str:
        rule = self.rule or {}
        if rule.get("next_round") is None and rule.get("stop"):
            return (f"stopped ({rule['stop']}) after {rule['rounds_done']} rounds: "
                    + _rule_words(rule))
        rounds = "" if self.round is None else f" after {self.round + 1} rounds"
        return f"finished{rounds}"

    def _write(self, line: str) -> None:
        self._last = self._clock()
        if self.fd is None:
            return
        try:
            os.write(self.fd, (line + "\n").encode("utf-8", "replace"))
        except OSError:
            self.fd = None  # the terminal went away: the campaign goes on without lines


def _rule_words(rule: dict) -> str:
    """``12 of 17 within +-2 %, widest 06-uprobe +-5.1 %`` from a rule's state."""
    name, width = rule.get("widest"), rule.get("widest_precision")
    widest = "" if name is None else f"widest {name} " + (
        _share(width) if width is not None else "(no CI yet)")
    if rule.get("target") is None:
        return widest or "no experiment"
    within = f"{rule['met']} of {rule['experiments']} within {_share(rule['target'], 0)}"
    return f"{within}, {widest}" if widest else within


def _round(run) -> int | None:
    """The round a run belongs to (a USDT or cyclictest invocation counts as one)."""
    params = getattr(run, "params", None) or {}
    value = params.get("round", params.get("invocation"))
    try:
        return None if value is None or isinstance(value, bool) else int(value)
    except (TypeError, ValueError):
        return None


