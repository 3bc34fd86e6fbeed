"""DTrace for Linux's install: the pinned source is checked before anything happens, the plan
says what will be built from what, and a benchmark that needs DTrace where it is missing refuses
in one line naming the bootstrap's command."""

from __future__ import annotations

import hashlib
import lzma

import pytest

from analysis.errors import ParameterError
from analysis.targets import dtrace_install
from analysis.targets.preflight import Preflight

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_a_source_archive_with_another_checksum_is_refused_before_anything(tmp_path,
                                                                           monkeypatch):
    fake = tmp_path / dtrace_install.PINNED.archive_name
    fake.write_bytes(lzma.compress(b"not dtrace-utils"))
    with pytest.raises(ParameterError) as exc:
        dtrace_install.source_archive(fake)
    said = str(exc.value)
    assert "dtrace_source" in said and "sha256" in said and "refused" in said
    # a folder is searched for the pinned archive's name; the environment is read too
    monkeypatch.setenv(dtrace_install.ENV, str(tmp_path))
    with pytest.raises(ParameterError, match=dtrace_install.ENV):
        dtrace_install.source_archive()
    with pytest.raises(ParameterError, match="no such file"):
        dtrace_install.source_archive(tmp_path / "nothing-here.tar.xz")
    monkeypatch.delenv(dtrace_install.ENV)
    assert dtrace_install.source_archive() is None


def test_the_pinned_archive_is_accepted_by_its_checksum(tmp_path, monkeypatch):
    """The check is the file's sha256 against the pinned one, computed independently here."""
    payload = b"a stand-in archive"
    fake = tmp_path / "x.tar.xz"
    fake.write_bytes(payload)
    monkeypatch.setattr(dtrace_install, "PINNED", dtrace_install.Source(
        "9.9", "0" * 40, hashlib.sha256(payload).hexdigest(), "https://example.invalid/x"))
    assert dtrace_install.source_archive(fake) == fake


def test_the_prefix_is_the_projects_own_and_names_the_version_and_commit():
    src = dtrace_install.PINNED
    assert src.prefix == f"/opt/tracelab/dtrace-{src.version}-{src.commit[:12]}"
    assert not src.prefix.startswith(("/usr/sbin", "/usr/bin"))  # SystemTap's dtrace is there
    assert dtrace_install.HOME == "/opt/tracelab/dtrace"


def _pf(os_name: str, **caps) -> Preflight:
    lines = [f"os={os_name}", "cpus=2", "tool.hyperfine.path=/usr/bin/hyperfine",
             "tool.cc.path=/usr/bin/cc"] + [f"cap.{k}={int(v)}" for k, v in caps.items()]
    return Preflight.from_lines("box", "\n".join(lines))


@pytest.mark.parametrize("os_name", ["Linux", "FreeBSD"])
def test_dd_with_dtrace_missing_refuses_naming_how_to_get_it(os_name):
    from analysis.benchmarks import get
    from analysis.benchmarks.core.tools import lacking

    dd = get("dd")
    p = dd.parse({"tracer": "dtrace"})
    error = lacking(dd, p, "box", ["box"], transport=None, pf=_pf(os_name, dtrace=0))
    said = str(error)
    assert "DTrace" in error.missing and "nothing was run" in said
    if os_name == "Linux":
        assert error.command == "python -m analysis bootstrap box --dtrace"
    else:
        assert error.command is None and "kldload dtraceall" in said
    assert lacking(dd, p, "box", ["box"], transport=None,
                   pf=_pf(os_name, dtrace=1)) is None
