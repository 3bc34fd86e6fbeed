"""How DTrace would be run on FreeBSD. FreeBSD cannot run here, so a FAKE `dtrace`
(a shell script that records its arguments) stands in for it: what is tested is
the command line traced-run.sh builds and the lifecycle around it, not DTrace (DTrace for
Linux itself: tests/tracing/test_dtrace.py)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from analysis.tracing.lifecycle import parse_meta
from conftest import ROOT

FAKE_DTRACE = r"""#!/bin/sh
# FAKE dtrace for tests: records argv, lists two probes with -l, otherwise fires the
# BEGIN clause's printf (the readiness token) and runs until SIGINT.
printf '%s\n' "$@" > "$FAKE_LOG.$$"
for a in "$@"; do
    [ "$a" = -l ] && { printf ' ID PROVIDER MODULE FUNCTION NAME\n 1 fbt kernel dofileread entry\n'
                       printf ' 2 dtrace - - BEGIN\n'; exit 0; }
done
printf '__TRACELAB_ATTACHED__\n'
trap 'echo "stopped by INT" >&2; exit 0' INT
while :; do sleep 0.05; done
"""


def test_dtrace_command_line_and_lifecycle(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "dtrace"
    fake.write_text(FAKE_DTRACE)
    fake.chmod(0o755)
    script = tmp_path / "06-uprobe.d"
    script.write_text("#pragma D option destructive\n")
    out = tmp_path / "run"
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}",
           "FAKE_LOG": str(tmp_path / "argv"),
           "TRACELAB_DTRACE_HOME": str(tmp_path / "no-dtrace-for-linux")}
    done = subprocess.run(
        ["sh", str(ROOT / "remote" / "bin" / "traced-run.sh"), "--out", str(out),
         "--tracer", "dtrace", "--script", str(script), "--stop-timeout", "5", "--",
         "true"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    meta = parse_meta((out / "meta").read_text())
    assert meta["status"] == "ok" and meta["probes"] == "2" and meta["stop_killed"] == "0"
    calls = [p.read_text().splitlines() for p in sorted(tmp_path.glob("argv.*"))]
    listing = next(c for c in calls if "-l" in c)
    traced = next(c for c in calls if "-l" not in c)
    # the seed's invocation: dtrace -C -q -D DTRACE_SCRIPT="\"$script\"" -s "$script",
    # plus a BEGIN clause whose output tells us DTrace has attached
    assert traced == ["-C", "-q", "-D", f'DTRACE_SCRIPT="{script}"', "-s", str(script), "-n",
                      'dtrace:::BEGIN { printf("__TRACELAB_ATTACHED__\\n"); }']
    assert listing == ["-l", "-C", "-D", f'DTRACE_SCRIPT="{script}"', "-s", str(script)]
    assert "stopped by INT" in (out / "tracer.stderr").read_text()
    generated = (out / "tracer-command.sh").read_text()
    assert shlex.split(generated)[:2] == ["exec", "dtrace"]


def test_script_paths_with_quotes_are_refused(tmp_path):
    script = tmp_path / "it's.d"
    script.write_text("BEGIN {}\n")
    done = subprocess.run(
        ["sh", str(ROOT / "remote" / "bin" / "traced-run.sh"), "--out", str(tmp_path / "o"),
         "--tracer", "dtrace", "--script", str(script), "--", "true"],
        capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "single quote" in done.stderr
    assert not Path(tmp_path / "o" / "meta").exists()
