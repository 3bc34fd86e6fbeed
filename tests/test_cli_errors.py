"""The command line: every user error is one line on stderr and exit 2 (no traceback); any
other exception is a bug, and its traceback shows."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

import analysis.__main__ as cli
from analysis.benchmarks import registry
from analysis.errors import ParameterError
from conftest import ROOT, cli_in_process


def _cli(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    """The command in this process (conftest.cli_in_process); the tests that need the
    entry point itself, ``python -m analysis`` as a process, use :func:`_process`."""
    return cli_in_process(*args, cwd=cwd)


def _process(*args, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def test_the_entry_point_prints_one_line_and_exits_2():
    r = _process("preflight", "user@host:99999")
    assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert r.stderr.startswith("error: parameter target='user@host:99999': invalid port "
                               "'99999': a port is a number from 1 to 65535"), r.stderr


@pytest.mark.parametrize("args,words", [
    (["preflight", "user@host:99999"], "invalid port '99999'"),
    (["preflight", "root@host:0"], "invalid port '0'"),
    (["preflight", "root@bad host;rm"], "invalid"),
    (["preflight", "local", "--ssh-config", "/nonexistent"], "/nonexistent: no such file"),
    (["run", "dd", "--param", "runs=0"], "parameter runs=0"),
    (["run", "nosuch"], "parameter benchmark='nosuch'"),
    (["run", "dd", "--param", "data_dir=/tmp/x"], "parameter data_dir='/tmp/x': not a --param: "
                                                  "give it as --data-dir /tmp/x"),
    (["run", "dd", "--param", "campaign=c1"], "give it as --campaign c1"),
    (["run", "dd", "--param", "runs"], "parameter --param='runs': expected NAME=VALUE"),
    (["report", "no-such-campaign"], "no campaign 'no-such-campaign'"),
    (["verify", "no-such-campaign"], "no campaign 'no-such-campaign'"),
    (["preflight", "ssh://root@localhost:2222"], "a URL; a target is written without ssh://, "
                                                 "e.g. 'root@localhost:2222'"),
    (["run", "dd", "--inventory", "tests/fixtures/inventories/broken.yml"],
     "broken.yml': line 6: YAML parsing failed"),
    (["run", "dd", "--inventory", "tests/fixtures/inventories/lab.yml", "--limit", "nowhere"],
     "parameter limit='nowhere': matches no host of"),
    (["run", "dd", "--inventory", "tests/fixtures/inventories/wrong-type.ini"],
     "parameter lab1: ansible_port='22x'"),
    (["run", "dd", "--inventory", "tests/fixtures/inventories/lab.yml", "--target", "local"],
     "give --target or --inventory, not both"),
    (["run", "dd", "--limit", "lab"], "give --inventory too"),
    (["run", "dd", "--inventory", "tests/fixtures/inventories/lab.yml", "--parallel", "0"],
     "parameter parallel=0"),
])
def test_user_errors_are_one_line(args, words):
    r = _cli(*args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], r.stderr
    assert "Traceback" not in r.stderr


FIXTURES = ROOT / "tests" / "fixtures"


def _campaign(raw, name, source, change=None) -> None:
    """A copy of a fixture campaign as ``raw/name``, its manifest changed by ``change``."""
    import json
    import shutil

    shutil.copytree(source, raw / name)
    manifest = json.loads((raw / name / "manifest.json").read_text())
    manifest["campaign"] = name
    if change:
        change(manifest, raw / name)
    (raw / name / "manifest.json").write_text(json.dumps(manifest))


def _no_runs(m, folder):
    import shutil

    m["runs"] = {}
    shutil.rmtree(folder / "local")


def _undone(m, folder):
    for runs in m["runs"].values():
        for entry in runs.values():
            entry["status"] = "failed"


#: another benchmark than the fixture campaign's, and one whose campaigns cannot be compared
OTHER = next(n for n in registry() if n != "dd")
PLAIN = next(n for n, b in registry().items() if not b.comparable)


@pytest.fixture(scope="module")
def user_data(tmp_path_factory):
    """A data folder with the dd fixture campaign and copies a user may get wrong."""
    data = tmp_path_factory.mktemp("data")
    raw = data / "raw"
    dd = FIXTURES / "dd-campaign-v1" / "raw" / "dd-fixture"
    _campaign(raw, "dd-fixture", dd)
    _campaign(raw, "other-c", dd, lambda m, f: m.update(benchmark=OTHER))
    _campaign(raw, "plain-c", dd, lambda m, f: m.update(benchmark=PLAIN))
    _campaign(raw, "no-runs", dd, _no_runs)
    _campaign(raw, "undone", dd, _undone)
    _campaign(raw, "no-plan", dd, lambda m, f: m["parameters"].pop("plan"))
    _campaign(raw, "ab-undone", FIXTURES / "ab" / "data" / "raw" / "ab-fixture", _undone)
    _campaign(data / "elsewhere", "dd-fixture", dd)
    return data


@pytest.mark.parametrize("args,words", [
    (["report", "a/b"], "parameter campaign name='a/b': invalid campaign name"),
    (["verify", "a/b"], "parameter campaign name='a/b': invalid campaign name"),
    (["run", "dd", "--campaign", "a/c"], "parameter campaign name='a/c': invalid campaign name"),
    (["verify", "nosuch"], "no campaign 'nosuch' in "),
    (["verify-bundle", "{d}/nosuch.zip"], "{d}/nosuch.zip: no such bundle"),
    (["bundle", "--out", "{d}/x.txt", "dd-fixture"],
     "parameter out='{d}/x.txt': a bundle is a .zip file"),
    (["compare", "x"], "parameter campaigns=['x']: compare takes two campaigns, A and B (got 1)"),
    (["compare", "dd-fixture", "dd-fixture", "--margin", "bad"],
     "parameter margin='bad': expected a number of ns"),
    (["compare", "dd-fixture", "dd-fixture", "--margin=-3%"],
     "parameter margin='-3%': must be positive"),
    (["compare", "{d}/nodir", "dd-fixture"], "no campaign 'nodir' in {d} (no manifest.json)"),
    (["compare", "{d}/elsewhere/dd-fixture", "dd-fixture"],
     "parameter campaign='{d}/elsewhere/dd-fixture': a campaign folder lives in <data>/raw/"),
    (["compare", "dd-fixture", "other-c"], f"dd-fixture is a dd campaign and other-c a {OTHER} "
                                           "one: only campaigns of one benchmark compare"),
    (["compare", "plain-c", "plain-c"], f"parameter campaign='plain-c': comparing {PLAIN} "
                                        "campaigns is not supported yet"),
    (["compare", "dd-fixture", "no-runs"], "campaign no-runs has no runs"),
    (["bootstrap", "local", "--benchmark", "nosuch", "--dry-run"],
     "parameter benchmark='nosuch': unknown benchmark 'nosuch'; expected one of"),
    (["report", "no-runs"], "campaign no-runs has no runs"),
    (["report", "undone"], "campaign undone has no finished timed runs on local"),
    (["report", "no-plan"], "no-plan/manifest.json: field 'parameters.plan': campaign no-plan "
                            "has no benchmark-1 plan"),
    (["report", "ab-undone"], "campaign ab-undone has no finished blocks"),
])
def test_user_mistakes_are_one_line_naming_the_value(user_data, args, words):
    takes_data = args[0] not in ("verify-bundle", "bootstrap")
    argv = [a.format(d=user_data) for a in args]
    if takes_data:
        argv += ["--data-dir", str(user_data)]
    if args[0] in ("report", "compare"):
        argv += ["--figures-dir", str(user_data / "fig")]
    r = _cli(*argv)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert words.format(d=user_data) in lines[0], r.stderr


def test_no_project_folder_is_one_line(monkeypatch, capsys, tmp_path):
    from analysis import paths

    monkeypatch.delenv(paths.ENV_VAR, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(paths, "_is_root", lambda folder: False)
    assert cli.main(["report", "x"]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: cannot find the {paths.PROJECT_NAME} project folder from {tmp_path}; "
                   f"run from inside the project or set {paths.ENV_VAR}\n")


@pytest.mark.parametrize("target,problem", [
    ("user@host:99999", "invalid port '99999': a port is a number from 1 to 65535"),
    ("ro ot@host", "invalid user name 'ro ot'"),
    ("https://lab", "a URL; a target is written without https://, e.g. 'lab'"),
])
def test_a_bad_target_is_one_clear_line_naming_it(target, problem):
    r = _cli("preflight", target)
    assert r.returncode == 2 and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert r.stderr.startswith(f"error: parameter target={target!r}: {problem}"), r.stderr


def test_an_error_raised_on_purpose_is_caught_in_process(monkeypatch, capsys):
    def fails(args):
        raise ParameterError("name", "x", "no such\n  benchmark")

    monkeypatch.setattr(cli, "_benchmarks", fails)
    assert cli.main(["benchmarks"]) == 2
    assert capsys.readouterr().err == "error: parameter name='x': no such benchmark\n"
    with pytest.raises(ParameterError):  # --debug: the traceback
        cli.main(["benchmarks", "--debug"])


@pytest.mark.parametrize("exc", [RuntimeError("a bug"), ValueError("a bug"),
                                 FileNotFoundError("a bug")])
def test_an_unexpected_exception_is_a_bug_and_is_not_caught(monkeypatch, exc):
    def fails(args):
        raise exc

    monkeypatch.setattr(cli, "_benchmarks", fails)
    with pytest.raises(type(exc), match="a bug"):
        cli.main(["benchmarks"])


def test_an_unexpected_exception_shows_its_traceback():
    code = textwrap.dedent("""
        import sys
        import analysis.__main__ as cli
        def fails(args):
            raise RuntimeError("a bug in a command")
        cli._benchmarks = fails
        sys.exit(cli.main(["benchmarks"]))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       timeout=120)
    assert r.returncode == 1
    assert "Traceback (most recent call last)" in r.stderr
    assert r.stderr.strip().splitlines()[-1] == "RuntimeError: a bug in a command"
    assert "error: " not in r.stderr


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback(where):
    args = ["preflight", "user@host:99999"]
    r = _process(*(["--debug", *args] if where == "before" else [*args, "--debug"]))
    assert r.returncode != 0 and "Traceback" in r.stderr


def test_an_unknown_campaign_lists_the_existing_ones_closest_first(tmp_path):
    for name in ("demo-20261124-021904", "demo-20261124-031500", "ci-full", "thesis-a"):
        (tmp_path / "raw" / name).mkdir(parents=True)
        (tmp_path / "raw" / name / "manifest.json").write_text("{}")
    (tmp_path / "raw" / "not-a-campaign").mkdir()
    r = _cli("report", "demo-20261124-0219", "--data-dir", str(tmp_path))
    assert r.returncode == 2
    listed = r.stderr.split("closest first: ", 1)[1].strip().split(", ")
    assert listed[0] == "demo-20261124-021904" and set(listed) == {
        "demo-20261124-021904", "demo-20261124-031500", "ci-full", "thesis-a"}
    r = _cli("report", "x", "--data-dir", str(tmp_path / "empty"))
    assert "it holds no campaign" in r.stderr


def test_the_benchmarks_listing_is_aligned():
    r = _cli("benchmarks")
    lines = r.stdout.splitlines()
    assert len(lines) >= 9 and len({line.index(" notebooks/") for line in lines}) == 1
    assert len({line.index("needs: ") for line in lines}) == 1


def test_an_unknown_alias_says_it_is_not_in_the_config(tmp_path):
    config = tmp_path / "ssh_config"
    config.write_text("Host other\n    HostName 127.0.0.1\n")
    r = _cli("preflight", "nosuchalias-tracelab", "--ssh-config", str(config))
    assert r.returncode == 2
    assert f"'nosuchalias-tracelab' is not a Host alias in the ssh_config read ({config})" in r.stderr


def test_a_key_the_target_does_not_accept_names_the_keys_and_the_fix(sshd, tmp_path):
    key = tmp_path / "stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True)
    config = tmp_path / "ssh_config"
    config.write_text(f"""Host lab
    HostName 127.0.0.1
    Port {sshd.port}
    User root
    IdentityFile {key}
    UserKnownHostsFile {sshd.known_hosts}
""")
    r = subprocess.run([sys.executable, "-m", "analysis", "preflight", "lab", "--ssh-config",
                        str(config)], capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})  # no agent
    assert r.returncode == 2
    line = r.stderr.strip()
    assert "authentication failed for root@127.0.0.1" in line and str(key) in line
    assert "ssh-copy-id" in line and "IdentityFile" in line and "(no SSH agent)" in line
