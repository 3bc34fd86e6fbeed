"""The .tsmp sample format and its summary, checked against numpy."""

from __future__ import annotations

import gzip
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from analysis import DataFormatError
from analysis.loaders import load_samples, summarize_samples
from analysis.loaders.samples import HEADER_SIZE, load_sample_ticks, summarize_ticks, write_samples

# make test runs this module beside the VM tests (tests/phased.py): it runs nothing on a
# target (conftest fails a test that does)
pytestmark = pytest.mark.beside_vm


def _numpy_summary(ns: np.ndarray) -> dict:
    return {
        "count": ns.size, "min_ns": ns.min(), "max_ns": ns.max(), "mean_ns": ns.mean(),
        "sd_ns": ns.std(ddof=1) if ns.size > 1 else np.nan,
        "median_ns": np.quantile(ns, 0.5, method="inverted_cdf"),
        "p99_ns": np.quantile(ns, 0.99, method="inverted_cdf"),
        "p999_ns": np.quantile(ns, 0.999, method="inverted_cdf"),
    }


def test_round_trip_and_header(tmp_path):
    rng = np.random.default_rng(1)
    ticks = rng.integers(30, 90, 10_000).astype(np.uint32)
    path = write_samples(tmp_path / "a.tsmp", ticks, ns_per_tick=0.4, clock="tsc")
    assert path.stat().st_size == HEADER_SIZE + 4 * ticks.size
    back, header = load_sample_ticks(path)
    np.testing.assert_array_equal(back, ticks)
    assert (header.count, header.bytes_per_sample, header.ns_per_tick, header.clock) == (
        10_000, 4, 0.4, "tsc")
    np.testing.assert_allclose(load_samples(path), ticks * 0.4)


def test_header_layout_is_the_documented_one(tmp_path):
    path = write_samples(tmp_path / "a.tsmp", np.array([1, 2, 3]), ns_per_tick=2.5,
                         clock="clock_monotonic_raw")
    raw = path.read_bytes()
    assert raw[:8] == b"TSMPv1\0\0"
    assert struct.unpack_from("<IIQdI", raw, 8) == (64, 4, 3, 2.5, 2)
    assert raw[36:64] == b"\0" * 28
    assert np.frombuffer(raw, "<u4", offset=64).tolist() == [1, 2, 3]


def test_wide_values_use_64_bit_samples(tmp_path):
    ticks = np.array([5, 2**33], dtype=np.uint64)
    back, header = load_sample_ticks(write_samples(tmp_path / "w.tsmp", ticks))
    assert header.bytes_per_sample == 8 and back.tolist() == [5, 2**33]


def test_summary_matches_numpy_with_outliers_far_beyond_the_dense_range(tmp_path):
    rng = np.random.default_rng(7)
    ticks = rng.gamma(4.0, 10.0, 200_000).astype(np.uint64) + 40
    ticks[::5000] = rng.integers(2**23, 2**30, ticks[::5000].size)  # 50 ms-class spikes
    path = write_samples(tmp_path / "s.tsmp", ticks, ns_per_tick=0.37)
    s = summarize_samples(path, bins=50)
    expected = _numpy_summary(ticks.astype(np.float64) * 0.37)
    for key, value in expected.items():
        assert getattr(s, key) == pytest.approx(value, rel=1e-9), key
    assert s.bin_counts.sum() + s.above_range == ticks.size
    assert s.bin_edges_ns[0] == s.min_ns and s.bin_edges_ns[-1] == pytest.approx(s.p999_ns)
    assert s.bin_counts.sum() == np.count_nonzero(ticks * 0.37 <= s.bin_edges_ns[-1])


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(np.uint32, st.integers(1, 400), elements=st.integers(0, 5000)))
def test_summary_equals_numpy_for_any_sample(ticks):
    s = summarize_ticks(ticks, 1.0, bins=10)
    expected = _numpy_summary(ticks.astype(np.float64))
    for key, value in expected.items():
        if key == "sd_ns" and ticks.size == 1:
            assert np.isnan(s.sd_ns)
            continue
        assert getattr(s, key) == pytest.approx(value, rel=1e-9, abs=1e-9), key


def test_gzip_compressed_files_load_the_same(tmp_path):
    ticks = np.arange(1000, dtype=np.uint32) % 97
    plain = write_samples(tmp_path / "p.tsmp", ticks)
    packed = write_samples(tmp_path / "p.tsmp.gz", ticks, compress=True)
    assert packed.read_bytes()[:2] == b"\x1f\x8b"
    np.testing.assert_array_equal(load_sample_ticks(packed)[0], load_sample_ticks(plain)[0])


def test_raw_data_is_never_overwritten(tmp_path):
    path = write_samples(tmp_path / "once.tsmp", np.array([1, 2]))
    with pytest.raises(FileExistsError):
        write_samples(path, np.array([3, 4]))
    assert load_sample_ticks(path)[0].tolist() == [1, 2]


@pytest.mark.parametrize(
    "mutate, field, message",
    [
        (lambda b: b"", None, "empty"),
        (lambda b: b[:30], "header", "truncated"),
        (lambda b: b[:-3], "samples", "truncated"),
        (lambda b: b + b"\0\0\0\0", "samples", "trailing"),
        (lambda b: b"NOTMAGIC" + b[8:], "magic", "not a .tsmp"),
        (lambda b: b"{}", "magic", "not a .tsmp"),
        (lambda b: b[:12] + struct.pack("<I", 3) + b[16:], "bytes_per_sample", "4 or 8"),
        (lambda b: b[:24] + struct.pack("<d", -1.0) + b[32:], "ns_per_tick", "positive"),
        (lambda b: b[:8] + struct.pack("<I", 80) + b[12:], "header_size", "header size"),
        (lambda b: gzip.compress(b)[:-10], None, "gzip"),
    ],
)
def test_bad_files_raise_data_format_error(tmp_path, mutate, field, message):
    good = write_samples(tmp_path / "g.tsmp", np.arange(100, dtype=np.uint32)).read_bytes()
    path = tmp_path / "bad.tsmp"
    path.write_bytes(mutate(good))
    with pytest.raises(DataFormatError, match=message) as exc:
        summarize_samples(path)
    assert exc.value.field == field
    assert str(path) in str(exc.value)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 500), pos=st.integers(0, 500), byte=st.integers(0, 255))
def test_fuzz_damaged_files(tmp_path, cut, pos, byte):
    raw = bytearray(write_samples(tmp_path / "f.tsmp", np.arange(100, dtype=np.uint32),
                                  overwrite=True).read_bytes())
    if pos < len(raw):
        raw[pos] = byte
    path = tmp_path / "fz.tsmp"
    path.write_bytes(bytes(raw[: cut or None]))
    try:
        s = summarize_samples(path)
    except DataFormatError:
        return
    assert s.count == 100


def test_box_statistics_match_matplotlib_on_the_same_data():
    import matplotlib.cbook

    rng = np.random.default_rng(11)
    ticks = (rng.gamma(2.0, 5.0, 5001) + 10).astype(np.uint32)
    s = summarize_ticks(ticks, 1.0)
    ref = matplotlib.cbook.boxplot_stats(ticks.astype(float))[0]
    assert s.q1_ns == np.quantile(ticks, 0.25, method="inverted_cdf")
    assert s.q3_ns == np.quantile(ticks, 0.75, method="inverted_cdf")
    # matplotlib interpolates its quartiles; whiskers are data points in both
    iqr = s.q3_ns - s.q1_ns
    inside = ticks[(ticks >= s.q1_ns - 1.5 * iqr) & (ticks <= s.q3_ns + 1.5 * iqr)]
    assert (s.whislo_ns, s.whishi_ns) == (inside.min(), inside.max())
    assert abs(s.whishi_ns - ref["whishi"]) <= 2 and s.box_stats("x")["label"] == "x"
