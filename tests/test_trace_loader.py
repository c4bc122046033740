"""The input pipeline in the trace analysis (syncscan.trace.loader) and in the replay
(syncscan.trace.estimate): DataLoader fetches and copies to the GPU read off a recorded H100
trace, and, on synthetic traces, a sync whose saving the loader absorbs."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_trace_synthetic import TraceBuilder

from syncscan.present.analyze_text import render_text
from syncscan.trace import analyze, load_trace
from syncscan.trace.loader import LoaderModel
from syncscan.trace.replay import Replacement, Timeline
from syncscan.trace.steps import windows

CLASSIC = Path(__file__).parent / "data" / "estimate" / "classic_loop_32x32_batch_256_2026-11-25a_2.trace.json.gz"
FETCH = "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"


def test_the_classic_loops_loader_and_copies_on_an_h100():
    """classic_loop_naive.py: 4 workers without pin_memory, `.to(device)` of images and labels."""
    report = analyze(load_trace(CLASSIC), step_ms=5.133).report
    loading = report["data_loading"]
    lo, h2d = loading["loader"], loading["h2d"]
    assert lo["kind"] == "multiprocess" and lo["fetches"] == 8 and len(lo["fetch_ms"]) == 8
    assert 1.0 < lo["fetch_ms_per_step"] < 1.3     # unpickling a 3 MB batch each step
    assert lo["receive_ms"] == pytest.approx(min(lo["fetch_ms"]), abs=1e-3)
    assert h2d["copies_per_step"] == 2.0 and h2d["blocking_per_step"] == 2.0  # pageable: both block
    assert h2d["pinned_share"] == 0.0 and not h2d["own_stream"]
    assert h2d["mb_per_step"] == pytest.approx(3.148, abs=0.01)  # 256 x 3 x 32 x 32 floats + labels
    rp = report["replay"]
    # its waits are no tenth of the step: the replay is as without a loader model
    assert rp["loader_source"] is None and not rp["input_bound"]
    # the pageable copies made pinned: the SYN204/SYN205 rewrite, replayed on its own
    assert 0 < rp["saving_pin_memory_ms"] <= rp["saving_rewrites_ms"]
    assert "DataLoader (multiprocess): 8 batches" in render_text(report)


def step_after_a_fetch(b: TraceBuilder, n: int, s: float, fetch: float) -> float:
    """A step at s: the DataLoader's __next__ for `fetch` µs, then (as test_trace_replay's host-
    bound step) add (a 100 µs kernel), nonzero (a copy and a stream sync waiting for the kernel),
    mul; 300 µs of host work after the fetch. Returns the step's end."""
    c = 10 * n
    b.step(n, s, fetch + 300)
    b.scope(FETCH, s, fetch)
    t = s + fetch
    b.op("aten::add", t, 20)
    b.call("cudaLaunchKernel", t + 10, 4, corr=c + 1)
    b.kernel(t + 15, 100, corr=c + 1)
    k_end = t + 115
    nz = b.op("aten::nonzero", t + 40, k_end + 35 - (t + 40))
    b.call("cudaMemcpyAsync", t + 50, 5, corr=c + 2, ext=nz)
    b.memcpy("DtoH (Device -> Pinned)", k_end, 2, corr=c + 2)
    b.call("cudaStreamSynchronize", t + 60, k_end + 5 - (t + 60), corr=c + 3, ext=nz)
    b.op("aten::mul", k_end + 55, 20)
    b.call("cudaLaunchKernel", k_end + 65, 4, corr=c + 4)
    b.kernel(k_end + 70, 20, corr=c + 4)
    return s + fetch + 300


@pytest.fixture
def data_bound(tmp_path):
    """Four steps; the loader is behind: every other step waits 3 ms for its batch (two workers
    deliver their batches together), the others take a ready batch in 2 µs."""
    b, s = TraceBuilder(), 0.0
    for n, fetch in enumerate((2.0, 3000.0, 2.0, 3000.0, 2.0, 3000.0)):
        s = step_after_a_fetch(b, n, s, fetch)
    return load_trace(b.write(tmp_path / "data_bound.json"))


def test_a_trace_that_waits_for_data_does_not_promise_the_syncs_saving(data_bound):
    report = analyze(data_bound).report
    lo = report["data_loading"]["loader"]
    assert lo["receive_ms"] == pytest.approx(0.002)
    assert lo["wait_ms_per_step"] == pytest.approx(1.499)   # (0 + 2.998) / 2 per step
    rp = report["replay"]
    assert rp["loader_source"] == "trace" and rp["input_bound"]
    assert rp["loader_period_ms"] == pytest.approx(rp["step_ms"])
    assert rp["compute_ms"] == pytest.approx(0.302, abs=0.01)  # host and GPU with data at hand
    # the sync costs host time, but the step waits for data anyway: nothing to gain
    assert rp["unbounded_saving_syncs_ms"] > 0.02
    assert rp["saving_syncs_ms"] == 0.0 and rp["saving_rewrites_ms"] == 0.0
    assert all(s["saving_syncs_ms"] == 0.0 for s in report["syncs"])
    assert any("input pipeline sets the pace" in n for n in report["notes"])


def test_with_the_waits_measured_as_none_the_saving_is_the_syncs(data_bound):
    """Told (as syncscan profile's bare pass would) that the step did not wait for data, the
    replay prices the sync as without a loader."""
    rp = analyze(data_bound, loader=LoaderModel(wait_ms=0.0, source="bare pass")).report["replay"]
    assert not rp["input_bound"] and rp["loader_period_ms"] is None
    assert rp["saving_syncs_ms"] == pytest.approx(rp["unbounded_saving_syncs_ms"])
    assert rp["saving_syncs_ms"] > 0.02


def test_a_saving_is_bounded_by_the_loaders_capacity(data_bound):
    """Not waiting, but the workers could deliver no faster than 0.29 ms a batch: a step of
    0.302 ms can only lose 0.012 ms."""
    loader = LoaderModel(wait_ms=0.0, capacity_ms=0.29, source="bare pass")
    rp = analyze(data_bound, loader=loader).report["replay"]
    assert not rp["input_bound"] and rp["loader_period_ms"] == pytest.approx(0.29)
    assert rp["saving_syncs_ms"] == pytest.approx(rp["compute_ms"] - 0.29, abs=1e-3)
    assert rp["unbounded_saving_syncs_ms"] > rp["saving_syncs_ms"]


def test_the_wait_is_held_not_scaled_by_the_host_speed(data_bound):
    """A hold is the time the host waits for something outside the model: calibrating the host's
    speed must not stretch it."""
    wins = windows(data_bound)
    tl = Timeline.build(data_bound, wins, [])
    plain = tl.step_time(1.0)
    held = (Replacement(None, wins[0].start, wins[0].start, 0.0, True, hold=600.0),)
    for scale in (0.5, 1.0, 2.0):
        assert tl.step_time(scale, replace=held) - tl.step_time(scale) == pytest.approx(600.0 / len(wins))
    assert tl.step_time(1.0, replace=()) == plain


def test_what_the_run_measured_each_traced_fetch_waiting_is_not_host_work(data_bound):
    """syncscan profile tells the replay what each traced fetch waited (the workers' logs): the
    rest of the fetch is receiving the batch, host work that stays in the step."""
    waited = LoaderModel(wait_ms=0.0, source="bare pass", trace_waits_ms=(0.0, 2.998) * 3)
    received = LoaderModel(wait_ms=0.0, source="bare pass", trace_waits_ms=(0.0,) * 6)
    assert analyze(data_bound, loader=waited).report["replay"]["compute_ms"] == pytest.approx(0.302, abs=0.01)
    # the same fetches, all of them receiving: 3 ms of unpickling every other step stays
    assert analyze(data_bound, loader=received).report["replay"]["compute_ms"] == pytest.approx(1.801, abs=0.01)
