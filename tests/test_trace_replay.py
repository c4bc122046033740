"""The replay (syncscan.trace.replay) and the estimate built on it (syncscan.trace.estimate).

Synthetic traces first, where each expected step time is worked out by hand in the comments;
then the recorded H100 traces of benchmarks/estimate.py (tests/data/estimate), whose
predictions are checked against the A/B savings measured in the same GPU run.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from test_trace_synthetic import TraceBuilder

from syncscan.trace import analyze, load_trace
from syncscan.trace.attribution import Attributor
from syncscan.trace.estimate import estimate
from syncscan.trace.graft import graft
from syncscan.trace.replay import Replacement, Timeline, calibrate
from syncscan.trace.steps import windows
from syncscan.trace.syncs import attribute, cost, find_syncs, place_in_windows

ESTIMATE_DATA = Path(__file__).parent / "data" / "estimate"


def step_with_a_sync(b: TraceBuilder, n: int, s: float, kernel: float = 100.0, length: float = 300.0):
    """One step at time s: add (a kernel), nonzero (a 2 µs copy to the host + a stream sync),
    mul (a 20 µs kernel), then host work to the end of the step. Launch latency 5 µs."""
    c = 10 * n
    b.step(n, s, length)
    b.op("aten::add", s, 20)
    b.call("cudaLaunchKernel", s + 10, 4, corr=c + 1)
    b.kernel(s + 15, kernel, corr=c + 1)
    k_end = s + 15 + kernel
    nz = b.op("aten::nonzero", s + 40, k_end + 35 - (s + 40))
    b.call("cudaMemcpyAsync", s + 50, 5, corr=c + 2, ext=nz)
    b.memcpy("DtoH (Device -> Pinned)", k_end, 2, corr=c + 2)
    b.call("cudaStreamSynchronize", s + 60, k_end + 5 - (s + 60), corr=c + 3, ext=nz)  # returns 3 µs after
    b.op("aten::mul", k_end + 55, 20)
    b.call("cudaLaunchKernel", k_end + 65, 4, corr=c + 4)
    b.kernel(k_end + 70, 20, corr=c + 4)


def timeline(path) -> tuple:
    tr = load_trace(path)
    wins = windows(tr)
    att = Attributor(tr)
    events, _ = place_in_windows(tr, find_syncs(tr), wins, att)
    attribute(events, att)
    cost(tr, events, wins)
    return tr, wins, events, Timeline.build(tr, wins, events)


@pytest.fixture
def host_bound(tmp_path):
    b = TraceBuilder()
    for n in range(3):
        step_with_a_sync(b, n, 300.0 * n)
    return timeline(b.write(tmp_path / "host.json"))


@pytest.fixture
def gpu_bound(tmp_path):
    b = TraceBuilder()
    for n in range(3):
        step_with_a_sync(b, n, 1200.0 * n, kernel=1000.0, length=1200.0)
    return timeline(b.write(tmp_path / "gpu.json"))


def test_the_replay_reproduces_the_recorded_step(host_bound, gpu_bound):
    for _, _, events, tl in (host_bound, gpu_bound):
        assert len(events) == 3 and tl.launch_latency == pytest.approx(5.0)
    assert host_bound[3].step_time() == pytest.approx(300.0)
    assert gpu_bound[3].step_time() == pytest.approx(1200.0)


def test_without_the_sync_the_host_sets_the_pace(host_bound):
    tr, wins, events, tl = host_bound
    # host work per step: 10 + 40 before the copy, 60 from the sync's return to mul's launch,
    # 120 of tail = 230; the 70 µs in the copy and the sync are gone, and the GPU (122 µs of
    # work) keeps up
    assert tl.step_time(skip=frozenset(range(len(tl)))) == pytest.approx(230.0)


def test_without_the_sync_the_gpu_sets_the_pace(gpu_bound):
    tr, wins, events, tl = gpu_bound
    # the GPU's own work per step: 1000 + 2 + 20 µs, now back to back
    assert tl.step_time(skip=frozenset(range(len(tl)))) == pytest.approx(1022.0)


def test_the_rewrite_replaces_the_op_by_its_footprint(host_bound):
    tr, wins, events, tl = host_bound
    # op cost: the median of the single-launch forward ops (add and mul, 20 µs each)
    assert tl.op_cost == pytest.approx(20.0)
    reps = tuple(Replacement(ev.tid, ev.att and tr.ops[ev.tid].starts[ev.att.outer_index],
                             tr.ops[ev.tid].ends[ev.att.outer_index], host_cost=20.0) for ev in events)
    # 10 before add's launch + 30 up to nonzero + 20 for the rewrite + 30 after nonzero + 120 of tail
    assert tl.step_time(replace=reps) == pytest.approx(210.0)
    # keeping its GPU work changes nothing here: the 2 µs copy fits in the host's time
    keep = tuple(Replacement(r.tid, r.start, r.end, r.host_cost, keep_gpu=True) for r in reps)
    assert tl.step_time(replace=keep) == pytest.approx(210.0)


def test_a_replacement_can_launch_other_gpu_work(gpu_bound):
    tr, wins, events, tl = gpu_bound
    add = [i for i in range(len(tr.ops[1])) if tr.names[tr.ops[1].names[i]] == "aten::add"]
    # the 1000 µs kernel of each add replaced by 400 µs of other work: the step follows the GPU
    reps = tuple(Replacement(1, tr.ops[1].starts[i], tr.ops[1].ends[i], host_cost=20.0, gpu_cost=400.0)
                 for i in add)
    assert tl.step_time(skip=frozenset(range(len(tl))), replace=reps) == pytest.approx(422.0)
    assert tl.gpu_time(1, 0.0, 1200.0) == pytest.approx(1022.0)


def test_calibration_finds_the_host_speed(host_bound, gpu_bound):
    tl = host_bound[3]
    scale, exact = calibrate(tl, 150.0)
    assert exact and tl.step_time(scale) == pytest.approx(150.0, rel=2e-3)
    # the sync returns 10x + 5 + 100 + 2 + 3 after the step starts, then 180x of host work
    # follow: 110 + 190x = 150
    assert scale == pytest.approx(40 / 190, rel=2e-3)
    # no host speed brings a GPU-bound step under its GPU work: the nearest bound, not exact
    scale, exact = calibrate(gpu_bound[3], 500.0)
    assert not exact and scale == pytest.approx(0.05)


def test_estimate_and_report(host_bound, tmp_path):
    tr, wins, events, tl = host_bound
    est = estimate(tr, wins, events, [events], target_ms=0.3)
    assert est["calibrated"] and est["host_scale"] == pytest.approx(1.0, abs=2e-3)
    assert est["saving_syncs_ms"] == pytest.approx(0.070, abs=1e-3)
    assert est["saving_rewrites_ms"] == pytest.approx(0.090, abs=1e-3)  # SYN301: one op instead of nonzero
    assert est["sites"][0]["saving_rewrite_ms"] == pytest.approx(0.090, abs=1e-3)
    assert est["fit_error"] == pytest.approx(0.0, abs=1e-6) and not est["notes"]
    # analyze puts the totals in `replay` and the per-site figures in each site
    r = analyze(tr, step_ms=0.3).report
    assert r["replay"]["saving_rewrites_ms"] == pytest.approx(0.090, abs=1e-3)
    (site,) = r["syncs"]
    assert site["rule"] == "SYN301" and site["saving_syncs_ms"] == pytest.approx(0.070, abs=1e-3)
    # without a bare step time, at the trace's own speed
    assert analyze(tr).report["replay"]["host_scale"] == 1.0


def test_no_replay_without_syncs_or_gpu(tmp_path):
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.op("aten::add", 0, 20)
    b.call("cudaLaunchKernel", 10, 4, corr=1)
    b.kernel(15, 10, corr=1)
    assert analyze(load_trace(b.write(tmp_path / "t.json"))).report["replay"] is None
    b = TraceBuilder()
    b.step(1, 0, 100)
    b.op("aten::nonzero", 0, 20)
    assert analyze(load_trace(b.write(tmp_path / "cpu.json"))).report["replay"] is None


# ------------------------------------------------------------------------ recorded on an H100

def _cases() -> dict[str, list[dict]]:
    """The exported runs, by case (benchmarks/estimate.py --repeat N --export-tests)."""
    path = ESTIMATE_DATA / "measured.json"
    by_case: dict[str, list[dict]] = {}
    for c in json.loads(path.read_text())["cases"] if path.is_file() else []:
        by_case.setdefault(c["case"], []).append(c)
    return by_case


@pytest.mark.parametrize("case", sorted(_cases()))
def test_recorded_prediction_against_the_measured_saving(case):
    """The light traces of benchmarks/estimate.py's H100 runs (2 sessions, 2 runs each), each
    replayed at the host speed of the A/B timing's naive step, against the saving that timing
    measured (naive and fixed scripts interleaved in one process, no profiler; the fixed time is
    not used). Every replay must fit its trace within 3%; the median prediction over the runs
    must be within the issue's +-25% of the median measured saving (single host-bound runs wander
    by more than that). The A/B's naive step time rather than the profile's own bare pass: the
    host ran up to 17% faster or slower from one process to the next on that machine, which
    moves a mixed-regime saving; docs/profile-gpu.md gives the figures at both speeds."""
    predicted, measured = [], []
    for run in _cases()[case]:
        trace = load_trace(ESTIMATE_DATA / run["trace"])
        if run.get("ops_trace"):  # a light trace of CUDA activity only: its detailed pass's ops
            graft(trace, load_trace(ESTIMATE_DATA / run["ops_trace"]))
        rp = analyze(trace, step_ms=run["bare_ms_per_step"]).report["replay"]
        assert abs(rp["fit_error"]) < 0.03, run["name"]
        assert rp["calibrated"] and rp["step_ms"] == pytest.approx(run["bare_ms_per_step"], rel=0.01)
        assert rp["saving_syncs_ms"] < rp["saving_rewrites_ms"]  # the rewrites drop the syncing ops' work too
        at_ab = analyze(trace, step_ms=run["naive_ms"]).report["replay"]
        assert at_ab["calibrated"]
        predicted.append(at_ab["saving_rewrites_ms"])
        measured.append(run["measured_saving_ms"])
    assert statistics.median(predicted) == pytest.approx(statistics.median(measured), rel=0.25)
