"""The light pass's `cuda` recipe records CUDA activity only: its steps come from syncscan's own
step marks (syncscan.trace.marks) and its ops from the detailed pass (syncscan.trace.graft). These
check both on small traces built here, and on light traces recorded on an H100 with their CPU ops
stripped: the analysis must stay that of the trace as recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import load_benchmark
from test_trace_synthetic import TraceBuilder

from syncscan.runtime.report import analyze_passes, merge_passes
from syncscan.trace import analyze, load_trace
from syncscan.trace.graft import TimeMap, align, graft
from syncscan.trace.marks import META_KEY, StepMarks, locate

DATA = Path(__file__).parent / "data" / "estimate"
OFFSET = -5e9 + 0.25  # the marks' clock against the trace's: any value


def _marks(times, tid=1, first=5, jitter=0.0, hint=None):
    """Marks as the session writes them for event records at `times` (trace µs, 3 µs long)."""
    return {"version": 1, "tid": tid, "first_step": first, "realtime_minus_perf_us": hint,
            "before_us": [t - OFFSET - 1.5 + jitter for t in times],
            "after_us": [t + 3 - OFFSET + 1.0 + jitter for t in times]}


def _write(tmp_path, b, name="t.json", meta=None):
    doc = b.doc()
    if meta is not None:
        doc[META_KEY] = meta
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return path


# ------------------------------------------------------------------------------- step marks

def test_a_cuda_only_trace_gets_its_steps_from_the_marks(tmp_path):
    """No ProfilerStep#N (no CPU ops recorded): the windows run from one step-timing event record
    to the next, named as the profiler numbered the steps. The script's own event records (on
    the same thread, 40 µs after each boundary, and on another thread at the very same time) are
    not taken for marks."""
    b = TraceBuilder()
    times = [1000.0, 2000.0, 3100.0, 4000.0]
    corr = 1
    for t in times:
        b.call("cudaEventRecordWithFlags", t, 3, corr)
        b.call("cudaEventRecordWithFlags", t + 40, 3, corr + 1)          # the script's own
        b.call("cudaEventRecord", t, 3, corr + 2, tid=2)                 # another thread's
        b.kernel(t + 50, 100, corr=corr + 3)
        b.call("cudaLaunchKernel", t + 45, 4, corr + 3)
        corr += 4
    trace = load_trace(_write(tmp_path, b, meta=_marks(times, hint=OFFSET - 1790857026e6)))
    assert [(s.name, s.start, s.end) for s in trace.steps] == [
        ("ProfilerStep#5", 1003.0, 2003.0), ("ProfilerStep#6", 2003.0, 3103.0), ("ProfilerStep#7", 3103.0, 4003.0)]
    report = analyze(trace).report
    assert report["windows"] == "ProfilerStep" and [s["number"] for s in report["steps"]] == [5, 6, 7]


def test_the_clock_hint_settles_a_script_record_at_a_fixed_distance(tmp_path):
    """A record the script makes 30 µs after every boundary fits the marks as well at another
    clock offset; the offset the session wrote picks ours."""
    b = TraceBuilder()
    times = [1000.0, 2000.0, 3000.0]
    for k, t in enumerate(times):
        b.call("cudaEventRecordWithFlags", t, 3, 10 * k + 1)
        b.call("cudaEventRecordWithFlags", t + 30, 3, 10 * k + 2)
    trace = load_trace(_write(tmp_path, b))
    trace.meta["baseTimeNanoseconds"] = 0
    for hint, start in ((OFFSET, 1000.0), (OFFSET + 30, 1030.0)):
        found = locate(trace, StepMarks.from_meta(_marks(times, hint=hint)))
        assert [c.start for c in found] == [start, start + 1000, start + 2000]


def test_a_lost_record_drops_only_its_steps(tmp_path):
    b = TraceBuilder()
    times = [1000.0, 2000.0, 3000.0, 4000.0, 5000.0]
    for k, t in enumerate(times):
        if k != 2:
            b.call("cudaEventRecordWithFlags", t, 3, k + 1)
    trace = load_trace(_write(tmp_path, b, meta=_marks(times, jitter=7.0)))
    assert [s.name for s in trace.steps] == ["ProfilerStep#5", "ProfilerStep#8"]


@pytest.mark.parametrize("meta", [
    "marks", {"before_us": [1.0], "after_us": [1.0, 2.0]}, {"before_us": [1.0, "x"], "after_us": [1.0, 2.0]},
    {"before_us": [1.0, float("nan")], "after_us": [2.0, 3.0]}, {"after_us": [1.0]},
])
def test_malformed_marks_are_ignored(tmp_path, meta):
    b = TraceBuilder()
    b.call("cudaEventRecordWithFlags", 100, 3, 1)
    b.call("cudaEventRecordWithFlags", 900, 3, 2)
    assert StepMarks.from_meta(meta) is None
    trace = load_trace(_write(tmp_path, b, meta=meta))
    assert trace.steps == [] and analyze(trace).report["windows"] == "whole trace"


# ------------------------------------------------------------------------------- graft

def test_align_pairs_equal_calls_in_order():
    a = ["launch", "launch", "memcpy", "sync", "launch"]
    assert align(a, list(a)) == [(i, i) for i in range(5)]
    b = ["launch", "launch", "malloc", "memcpy", "sync", "launch"]  # one call more in the middle
    assert align(a, b) == [(0, 0), (1, 1), (2, 3), (3, 4), (4, 5)]
    assert align([], b) == [] and align(a, []) == []


def test_time_map_never_goes_back():
    """Times map monotonically (nesting kept): a point that would go back is dropped; in a gap
    shorter in the target, times near either anchor keep their distance to it (half-weighted)."""
    f = TimeMap([(0, 0), (100, 50), (110, 40), (200, 140)])  # (110, 40) would go back
    ts = [x * 0.5 for x in range(-20, 450)]
    ys = [f(t) for t in ts]
    assert all(b >= a for a, b in zip(ys, ys[1:]))
    assert f(-5) == 0 and f(300) == 140 and f(100) == 50
    assert f(10) == pytest.approx((5 + 10) / 2)  # proportion 5, distance from the left anchor 10
    assert TimeMap([(0, 0), (10, 30)])(5) == 15  # a longer target gap: proportion only


def _two_passes(tmp_path):
    """A detailed pass (slow host, ops, scopes, a backward op with its Sequence number) and a light
    pass of the same step (faster host: every host gap half as long; CUDA activity only)."""
    det, light = TraceBuilder(), TraceBuilder()
    det.step(3, 0, 1000)
    light.step(3, 5000, 500)  # the light trace's window (a ProfilerStep kept by the test's stripping)
    det.scope("loss", 100, 600)
    det.op("aten::nonzero", 120, 300, seq=7)
    det.op("aten::relu", 500, 100, seq=8)
    det.op("autograd::engine::evaluate_function: ReluBackward0", 700, 200, tid=2, seq=8)
    for b, t0, k in ((det, 0, 1.0), (light, 5000, 0.5)):
        b.call("cudaLaunchKernel", t0 + 140 * k, 10 * k, 1)
        b.kernel(t0 + 160 * k, 50, corr=1)
        b.call("cudaMemcpyAsync", t0 + 200 * k, 10 * k, 2)
        b.memcpy("DtoH (Device -> Pinned)", t0 + 215 * k, 5, corr=2)
        b.call("cudaStreamSynchronize", t0 + 220 * k, 150 * k, 3)
        b.call("cudaLaunchKernel", t0 + 550 * k, 10 * k, 4)
        b.kernel(t0 + 600 * k, 50, corr=4)
        b.call("cudaLaunchKernel", t0 + 750 * k, 10 * k, 5, tid=2)
        b.kernel(t0 + 800 * k, 50, corr=5)
    return load_trace(_write(tmp_path, det, "det.json")), load_trace(_write(tmp_path, light, "light.json"))


def test_graft_puts_the_detailed_ops_around_the_same_calls(tmp_path):
    det, light = _two_passes(tmp_path)
    before = analyze(light).report["syncs"]
    assert [s["op"] for s in before] == [None]  # no ops: the sync is not attributed
    stats = graft(light, det)
    assert stats.as_dict() == {"steps": 1, "exact_steps": 1, "calls": 5, "anchored_calls": 5, "ops": 3, "scopes": 1}
    nonzero = light.ops[1]
    i = [light.names[n] for n in nonzero.names].index("aten::nonzero")
    # the op held the launch, the copy and the sync in the detailed pass: it holds them here
    assert nonzero.starts[i] < 5070 and nonzero.ends[i] > 5000 + 220 * 0.5 + 150 * 0.5
    (site,) = analyze(light).report["syncs"]
    assert (site["op"], site["scope"], site["rule"]) == ("aten::nonzero", "loss", "SYN301")
    assert site["gpu_idle_ms"] == before[0]["gpu_idle_ms"]
    backward = light.ops[2]
    assert list(backward.seq) == [8] and 5325 <= backward.starts[0] <= 5350 < 5380 < backward.ends[0] < 5500


def test_graft_leaves_a_trace_with_ops_alone(tmp_path):
    det, light = _two_passes(tmp_path)
    assert graft(det, light).steps == 0  # det has ops of its own
    assert graft(light, det).steps == 1 and graft(light, det).steps == 0  # and now light has


# ------------------------------------------------------------------------------- recorded on an H100

bench = load_benchmark("light_graft")


def _case(name):
    return next(c for c in json.loads((DATA / "measured.json").read_text())["cases"] if c["name"] == name)


@pytest.mark.parametrize("light_run, ops_run, tolerance", [
    ("masked_loss_64x64_batch_32_2026-11-25a_0", "masked_loss_64x64_batch_32_2026-11-25a_6", 0.05),  # host-bound
    ("classic_loop_32x32_batch_256_2026-11-25a_2", "classic_loop_32x32_batch_256_2026-11-25a_8", 0.05),
    ("masked_loss_256x256_batch_32_2026-11-25a_1", "masked_loss_256x256_batch_32_2026-11-25a_7", 0.01),  # GPU-bound
])
def test_a_stripped_light_trace_with_grafted_ops_analyses_as_recorded(tmp_path, light_run, ops_run, tolerance):
    """A light trace of syncscan profile with its CPU ops stripped (what the cuda recipe records)
    and the ops of another run of the same script grafted: the same sites, the same GPU idle per
    site, the same replay fit and saving without the syncs, and the saving with the rewrites (which
    reads op host intervals) within a few percent; the recorded runs' own predictions differ by
    16% (host-bound) from one run to the next."""
    x, y = _case(light_run), _case(ops_run)
    full = analyze(load_trace(DATA / x["trace"]), step_ms=x["bare_ms_per_step"]).report
    light = load_trace(bench.strip_cpu(DATA / x["trace"], tmp_path / "light.json"))
    assert not any(len(iv) for iv in light.ops.values()) and len(light.steps) == len(full["steps"])
    stats = graft(light, load_trace(bench.with_marks(DATA / y["trace"], tmp_path / "detail.json")))
    assert stats.steps == 8 and stats.anchored == stats.calls
    diff = bench.compare(full, analyze(light, step_ms=x["bare_ms_per_step"]).report)
    assert diff["same_sites"] and diff["max_idle_diff_ms"] < 1e-6
    assert abs(diff["fit_error"][1]) < 0.03
    assert abs(diff["rel_saving_syncs"]) < 0.02
    assert abs(diff["rel_saving_rewrites"]) < tolerance


def test_ops_from_a_detailed_trace_with_stacks(traces_dir, tmp_path):
    """The one recorded pair of a detailed trace (Python stacks, sync events: a slower host) and a
    light trace of the same fixture, from two processes."""
    diff = bench.with_stack_case(tmp_path)
    assert diff["exact_steps"] == diff["steps"] == 3 and diff["anchored_calls"] == diff["calls"]
    assert diff["same_sites"] and diff["max_idle_diff_ms"] < 1e-6
    assert abs(diff["rel_saving_syncs"]) < 0.01 and abs(diff["rel_saving_rewrites"]) < 0.05


class _Result:
    """Stands for syncscan.runtime.session.PassResult."""

    def __init__(self, name, trace=None, ms=None):
        self.name, self.trace, self.ms_per_step = name, trace, ms
        self.steps_measured = 8 if ms else 0
        self.analysis_error = None


def test_the_profile_report_takes_the_light_ops_from_the_detailed_pass(tmp_path):
    x, y = _case("masked_loss_64x64_batch_32_2026-11-25a_0"), _case("masked_loss_64x64_batch_32_2026-11-25a_6")
    light = str(bench.strip_cpu(DATA / x["trace"], tmp_path / "light.json"))
    detail = str(bench.with_marks(DATA / y["trace"], tmp_path / "detail.json"))
    passes = analyze_passes([_Result("bare", ms=x["bare_ms_per_step"]), _Result("light", light),
                             _Result("detail", detail)], sites=[])
    # two processes (other thread ids), paired by their calls; every step made the same calls
    assert passes.light_ops is not None and passes.light_ops["exact_steps"] == passes.light_ops["steps"] == 8
    assert passes.light_ops["anchored_calls"] == passes.light_ops["calls"]
    merged = merge_passes(passes)
    assert merged.light_ops == passes.light_ops and merged.timing_from == "light"
    assert all(s["op"] for s in merged.report["syncs"]) and merged.report["replay"]["calibrated"]
    assert not any("CUDA activity only" in n for n in merged.report["notes"])
    alone = merge_passes(analyze_passes([_Result("bare", ms=x["bare_ms_per_step"]), _Result("light", light)], []))
    assert alone.light_ops is None and not any(s["op"] for s in alone.report["syncs"])
    assert any("no detailed pass gave it ops" in n for n in alone.report["notes"])
