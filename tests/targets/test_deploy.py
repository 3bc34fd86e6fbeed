"""A folder of files other than the lab's ``remote/`` (a plug-in benchmark's own) is deployed
beside the lab's runner, by its content's hash, once per connection and content, and never
stands in for the runner that cleans up after traced runs."""

from __future__ import annotations

import pytest

from analysis.targets.deploy import deploy, deployed, tree_hash
from analysis.targets.transport import LocalTransport


@pytest.fixture
def transport():
    """This machine; the folders a test deploys (listed in ``made``) removed afterwards."""
    local = LocalTransport()
    local.made = []
    yield local
    for path in local.made:
        LocalTransport().run(["rm", "-rf", path], timeout=30)


def test_a_folder_of_its_own_goes_beside_the_lab_s_runner(tmp_path, transport, monkeypatch):
    folder = tmp_path / "remote"
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "hello.sh").write_text('printf "hello from %s\\n" "$1"\n')
    lab = deploy(transport)
    theirs = deploy(transport, folder)
    transport.made.append(theirs)
    assert theirs != lab and theirs.endswith(f"/remote-{tree_hash(folder)[:16]}")
    said = transport.run(["sh", f"{theirs}/bin/hello.sh", "a plug-in"], timeout=30)
    assert said.stdout == "hello from a plug-in\n"
    assert deployed(transport) == lab  # what cleans up after a run is the lab's runner
    commands, real = [], transport.run
    monkeypatch.setattr(transport, "run", lambda argv, **kw: commands.append(argv) or
                        real(argv, **kw))
    assert deploy(transport, folder) == theirs and deploy(transport) == lab
    assert commands == []  # both remembered by this connection: nothing asked again
    (folder / "bin" / "hello.sh").write_text('printf "hi %s\\n" "$1"\n')
    changed = deploy(transport, folder)  # new content: a folder of its own, copied
    transport.made.append(changed)
    assert changed != theirs and commands
    assert real(["sh", f"{changed}/bin/hello.sh", "x"], timeout=30).stdout == "hi x\n"
    assert deployed(transport) == lab


def test_the_work_folder_follows_the_targets_environment(tmp_path, monkeypatch):
    """TRACELAB_WORK_BASE on the target moves the work folder; a value clean could not
    empty safely (not absolute, not named tracelab-NAME) is one line naming the variable."""
    from analysis.errors import TargetError
    from analysis.targets.deploy import work_base

    monkeypatch.setenv("TRACELAB_WORK_BASE", str(tmp_path / "tracelab-mine"))
    assert work_base(LocalTransport(), create=False) == str(tmp_path / "tracelab-mine")
    for bad in ("relative/tracelab-x", str(tmp_path / "mine"), "/tmp/tracelab-x/../etc",
                "/tmp/../tracelab-x"):
        monkeypatch.setenv("TRACELAB_WORK_BASE", bad)
        with pytest.raises(TargetError, match=r"^local: TRACELAB_WORK_BASE="):
            work_base(LocalTransport(), create=False)
    monkeypatch.delenv("TRACELAB_WORK_BASE")
    assert work_base(LocalTransport(), create=False).startswith("/var/tmp/tracelab-")
