"""A fleet's schedule: hosts sharing a kernel never run at once, other kernels run side by
side (proved by a barrier they can only pass together, not by timing), at most
``parallel`` groups at a time, and a stop leaves the hosts not started alone."""

from __future__ import annotations

import threading

import pytest

from analysis.campaign.schedule import dispatch, kernel_groups

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def test_hosts_are_grouped_by_their_kernel_largest_group_first():
    groups = kernel_groups({"a": "k1", "b": "k2", "c": "k1", "d": None, "e": "k1", "f": None})
    assert groups == [["a", "c", "e"], ["d", "f"], ["b"]]


class _Watch:
    """Counts the hosts running at once, per kernel and in all."""

    def __init__(self, kernels):
        self.kernels, self.lock = kernels, threading.Lock()
        self.now: dict = {}
        self.peak: dict = {}
        self.total = self.peak_total = 0
        self.order: list = []

    def enter(self, host):
        k = self.kernels[host]
        with self.lock:
            self.now[k] = self.now.get(k, 0) + 1
            self.peak[k] = max(self.peak.get(k, 0), self.now[k])
            self.total += 1
            self.peak_total = max(self.peak_total, self.total)
            self.order.append(host)

    def leave(self, host):
        with self.lock:
            self.now[self.kernels[host]] -= 1
            self.total -= 1


def test_one_kernel_at_a_time_and_other_kernels_together():
    kernels = {"lab1": "k", "lab2": "k", "lab3": "k", "vm": "v", "other": "o"}
    watch = _Watch(kernels)
    together = threading.Barrier(3, timeout=10)  # passed only if three kernels run at once

    def work(host):
        watch.enter(host)
        if host in ("lab1", "vm", "other"):  # the first of each kernel's hosts
            together.wait()
        watch.leave(host)

    dispatch(kernel_groups(kernels), work, parallel=3)
    assert watch.peak["k"] == 1 and watch.peak_total == 3
    assert [h for h in watch.order if kernels[h] == "k"] == ["lab1", "lab2", "lab3"]


def test_at_most_parallel_groups_run_at_once():
    kernels = {f"h{i}": f"k{i}" for i in range(8)}
    watch = _Watch(kernels)
    pair = threading.Barrier(2, timeout=10)

    def work(host):
        watch.enter(host)
        pair.wait()  # two at a time pass; a third at once would break nothing but the peak
        watch.leave(host)

    dispatch(kernel_groups(kernels), work, parallel=2)
    assert watch.peak_total == 2 and sorted(watch.order) == sorted(kernels)


def test_a_stop_starts_no_further_host_and_an_error_is_raised():
    ran = []

    def work(host):
        ran.append(host)
        if host == "a":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        dispatch([["a", "b", "c"]], work, parallel=1)
    assert ran == ["a"]
    stop = threading.Event()
    stop.set()
    dispatch([["x"]], ran.append, parallel=1, stop=stop)
    assert ran == ["a"]
    with pytest.raises(ValueError):
        dispatch([["x"]], ran.append, parallel=0)
