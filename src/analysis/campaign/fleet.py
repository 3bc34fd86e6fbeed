"""A fleet campaign: one benchmark over the hosts of an inventory, one campaign per host.

``data/raw/<fleet>/fleet.json`` records what the fleet is (the benchmark, its parameters,
the inventory and limit), each host's groups, its kernel (``boot_id``, machine id) and its
member campaign (``data/raw/<fleet>.<host>/``, an ordinary campaign with its own manifest,
checksums and lock), and what became of it (``complete``, ``incomplete``, ``unreachable``,
``failed``, with the reason and the times, to the microsecond, it started and ended) in
``data/raw/<fleet>/hosts/<host>.json``: a file per host, so that recording one host's state
costs the same in a fleet of ten or of a thousand. Each file is written atomically, by one
process at a time (``data/raw/<fleet>/.lock``); running the fleet again resumes it:
complete hosts are kept, the others' campaigns resume.
"""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from pathlib import Path

from analysis.campaign.folders import raw_root
from analysis.campaign.records import canonical, now
from analysis.errors import CampaignNotFound, DataFormatError, ParameterMismatch
from analysis.storage import FileLock, atomic_write, check_name

FLEET = "fleet.json"
SCHEMA = 1
#: what became of a host in a fleet campaign
STATUSES = ("waiting", "running", "complete", "incomplete", "unreachable", "failed")


def member_name(fleet: str, host: str) -> str:
    """The campaign of ``host`` in the fleet ``fleet``: ``<fleet>.<host>``."""
    return check_name(f"{fleet}.{host}", "campaign name of a fleet's host")


def stamp() -> str:
    """A time to the microsecond (UTC): what the no-overlap check of one kernel's hosts
    reads."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def fleets(data_dir=None) -> list[str]:
    """Names of the fleet campaigns in data/raw."""
    return [p.parent.name for p in sorted(raw_root(data_dir).glob(f"*/{FLEET}"))]


class Fleet:
    """The record of one fleet campaign (thread-safe; :meth:`locked` for writing)."""

    def __init__(self, name: str, *, data_dir=None):
        self.name = check_name(name, "campaign name")
        self.data_dir = data_dir
        self.folder = raw_root(data_dir) / self.name
        self.path = self.folder / FLEET
        self._flock = FileLock(self.folder / ".lock", "fleet campaign", self.name)
        self._lock = threading.RLock()
        self.record: dict = self._load() if self.path.is_file() else {}
        self.state: dict[str, dict] = self._states() if self.record else {}

    @classmethod
    def open(cls, name: str, *, data_dir=None) -> Fleet:
        """An existing fleet, for reading; :class:`CampaignNotFound` if there is none."""
        fleet = cls(name, data_dir=data_dir)
        if not fleet.record:
            raise CampaignNotFound(name, raw_root(data_dir))
        return fleet

    def _load(self) -> dict:
        try:
            record = json.loads(self.path.read_text())
        except (OSError, ValueError) as exc:
            raise DataFormatError(self.path, None, f"not a fleet record: {exc}") from None
        if not isinstance(record, dict) or not isinstance(record.get("hosts"), dict):
            raise DataFormatError(self.path, "hosts", "missing or not a mapping")
        return record

    def _states(self) -> dict[str, dict]:
        states = {}
        for host in self.record["hosts"]:
            path = self.folder / "hosts" / f"{host}.json"
            if path.is_file():
                try:
                    states[host] = json.loads(path.read_text())
                except (OSError, ValueError) as exc:
                    raise DataFormatError(path, None, f"not a host's state: {exc}") from None
        return states

    def locked(self) -> FileLock:
        """The fleet's lock (:class:`~analysis.errors.LockError` if another process holds
        it); its holder is the only writer of the record and of its hosts' campaigns."""
        return self._flock

    def start(self, benchmark: str, parameters: dict, inventory: dict) -> None:
        """Create the record, or check a resumed one was made with the same benchmark and
        parameters (:class:`~analysis.errors.ParameterMismatch`, naming what differs); the
        inventory's hosts are added to the ones it has."""
        with self._lock:
            rec = self.record
            params = canonical(parameters)
            if rec:
                diff = {k: (rec.get(k), v) for k, v in (("benchmark", benchmark),
                                                        ("parameters", params))
                        if rec.get(k) != v}
                if diff:
                    raise ParameterMismatch(self.name, diff)
            else:
                rec.update(schema=SCHEMA, fleet=self.name, benchmark=benchmark,
                           parameters=params, created=now(), hosts={})
            rec["inventory"] = {"path": inventory["path"], "limit": inventory["limit"]}
            for host, info in inventory["hosts"].items():
                rec["hosts"][host] = {"groups": info["groups"], "local": info["local"],
                                      "campaign": member_name(self.name, host)}
            atomic_write(self.path, json.dumps(rec, indent=1, sort_keys=True) + "\n")

    def update(self, host: str, **fields) -> None:
        """Record ``fields`` of ``host``'s state (atomically, in its own file; None removes
        a field)."""
        with self._lock:
            entry = self.state.setdefault(host, {})
            for k, v in fields.items():
                if v is None:
                    entry.pop(k, None)
                else:
                    entry[k] = canonical(v)
            atomic_write(self.folder / "hosts" / f"{host}.json",
                         json.dumps(entry, sort_keys=True) + "\n")

    @property
    def hosts(self) -> dict[str, dict]:
        """host -> what the inventory made of it (groups, campaign) and its state (status
        ``waiting`` until it has one)."""
        return {h: {"status": "waiting", **info, **self.state.get(h, {})}
                for h, info in self.record.get("hosts", {}).items()}

    @property
    def benchmark(self) -> str:
        return self.record.get("benchmark", "")

    def groups(self) -> dict[str, list[str]]:
        """group -> its hosts, as the inventory named them."""
        out: dict[str, list[str]] = {}
        for host, entry in self.hosts.items():
            for g in entry.get("groups", []):
                out.setdefault(g, []).append(host)
        return out

    def member_folder(self, host: str) -> Path:
        return raw_root(self.data_dir) / self.hosts[host]["campaign"]
