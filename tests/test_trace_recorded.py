"""The analysis on the real H100 traces in shared/traces (figures from shared/traces/README.md)."""

import gzip
import json
from functools import lru_cache
from pathlib import Path

import pytest

from syncscan.trace import analyze, analyze_path, load_trace

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
pytestmark = pytest.mark.skipif(not TRACES.is_dir(), reason=f"recorded traces not found at {TRACES}")

NAIVE = ["masked_loss_v0_b16_64px", "masked_loss_v0_b32_256px", "masked_loss_v0_b16_64px_light"]
PLAIN = ["aug_gpu_b32.json.gz", "aug_piped_b32.json.gz"]


def trace_file(run: str) -> Path:
    if run in PLAIN:
        return TRACES / "plain" / run
    (f,) = (TRACES / run).glob("*.pt.trace.json.gz")
    return f


@lru_cache(maxsize=None)
def report(run: str) -> dict:
    return analyze(load_trace(trace_file(run))).report


@lru_cache(maxsize=None)
def raw_events(run: str) -> list:
    with gzip.open(trace_file(run), "rt") as f:
        return json.load(f)["traceEvents"]


EXPECTED_SITES = {  # outer op -> (syncs per step, rule): the README's 6 per step
    "aten::nonzero_numpy": (1, "SYN301"),
    "aten::_unique2": (1, "SYN305"),
    "aten::index": (2, "SYN302"),
    "aten::index_put_": (1, "SYN303"),
    "IndexBackward0": (1, "SYN302"),
}


@pytest.mark.parametrize("run", NAIVE)
def test_naive_masked_loss_has_six_syncs_per_step(run):
    r = report(run)
    assert [s["name"] for s in r["steps"]] == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    assert [s["syncs"] for s in r["steps"]] == [6, 6, 6]
    got = {s["outer_op"]: (s["per_step"], s["rule"]) for s in r["syncs"]}
    assert got == {op: ([n] * 3, rule) for op, (n, rule) in EXPECTED_SITES.items()}
    assert all(s["scope"] == "loss" for s in r["syncs"])
    (bw,) = [s for s in r["syncs"] if s["phase"] == "backward"]
    assert (bw["outer_op"], bw["forward_op"], bw["op"]) == ("IndexBackward0", "aten::index", "aten::nonzero")
    # the profiler's own cudaDeviceSynchronize after the last step is not counted
    assert r["ignored_syncs"] == 1
    assert not any("cudaDeviceSynchronize" in s["calls"] for s in r["syncs"])
    # in torch 2.11 each sync is a short pinned copy plus a stream sync: one event, not two
    assert {s["calls"] for s in r["syncs"]} == {"cudaMemcpyAsync + cudaStreamSynchronize"}


def test_python_sources_with_and_without_stacks():
    with_stack = report("masked_loss_v0_b16_64px")
    assert with_stack["with_stack"] is True
    funcs = {s["outer_op"]: s["function"] for s in with_stack["syncs"]}
    assert funcs["aten::nonzero_numpy"] == "ignore_background"
    assert funcs["aten::index"] == funcs["IndexBackward0"] == "cross_entropy"
    assert all(s["file"] == "seed_masked_loss.py" and s["line_kind"] == "def" for s in with_stack["syncs"])
    light = report("masked_loss_v0_b16_64px_light")
    assert light["with_stack"] is False and light["cuda_sync_events"] is False
    assert all(s["file"] is None and s["function"] is None for s in light["syncs"])


def test_fixed_loss_has_no_syncs():
    r = report("masked_loss_v3_b16_64px")
    assert r["syncs"] == [] and [s["syncs"] for s in r["steps"]] == [0, 0, 0]
    assert r["total_gpu_idle_from_syncs_ms"] == 0


def _kernel_union_ms(run, stream):
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in raw_events(run)
                   if e.get("cat") == "kernel" and e["args"]["stream"] == stream)
    total, cur = 0.0, None
    for s, e in spans:
        if cur is None or s > cur[1]:
            if cur:
                total += cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    return (total + (cur[1] - cur[0] if cur else 0)) / 1000


def test_encdec_serial_one_stream_vs_piped_two_streams():
    serial = report("encdec_serial_b16")
    assert [s["stream"] for s in serial["streams"] if s["kernels"]] == [7]
    assert serial["overlap"] == []
    piped = report("encdec_piped_b16")
    busy = {s["stream"]: s["busy_ms"] for s in piped["streams"] if s["kernels"]}
    assert len(busy) == 2
    # the README's figures, and the same union recomputed from the raw events
    assert sorted(busy.values()) == [pytest.approx(4.1, abs=0.05), pytest.approx(12.2, abs=0.05)]
    for stream, ms in busy.items():
        assert ms == pytest.approx(_kernel_union_ms("encdec_piped_b16", stream), rel=1e-6)
    (ov,) = piped["overlap"]
    assert ov["overlap_ms"] > 0
    assert 0 < ov["share_of_less_busy"] < 1
    assert ov["overlap_ms"] == pytest.approx(ov["share_of_less_busy"] * min(busy.values()))
    assert piped["total_syncs"] == 0


@pytest.mark.parametrize("run", PLAIN)
def test_plain_augmentation_runs(run):
    r = report(run)
    assert r["windows"] == "whole trace" and len(r["steps"]) == 1
    (pageable,) = [c for c in r["memcpy"] if (c["direction"], c["memory"]) == ("HtoD", "Pageable")]
    assert pageable["count"] == 264 and pageable["ops"] == {"aten::to": 264}
    assert pageable["host_syncs"] == 264
    copy_syncs = [s for s in r["syncs"] if s["copy"] == "HtoD (Pageable -> Device)"]
    assert sum(s["count"] for s in copy_syncs) == 264
    assert {s["outer_op"] for s in copy_syncs} == {"aten::to"}
    assert {s["rule"] for s in copy_syncs} == {"SYN204"}
    # two cudaDeviceSynchronize in the trace: the user's counts, the profiler's stop does not
    (user_sync,) = [s for s in r["syncs"] if s["calls"] == "cudaDeviceSynchronize"]
    assert user_sync["function"] == "profiled" and user_sync["rule"] == "SYN501"
    assert r["ignored_syncs"] == 1 and r["total_syncs"] == 265


def test_plain_piped_has_two_compute_streams():
    r = report("aug_piped_b32.json.gz")
    assert len([s for s in r["streams"] if s["kernels"]]) == 2
    assert len(r["overlap"]) == 1 and r["overlap"][0]["overlap_ms"] > 0


def test_launch_bound_run_idle_is_positive_and_below_blocked():
    r = report("masked_loss_v0_b16_64px")
    assert r["gpu_bound"] is False and r["gpu_utilization"] < 0.5
    for s in r["syncs"]:
        assert 0 < s["gpu_idle_ms"] < s["cpu_blocked_ms"], s
    # launch-bound: the GPU is not busy draining queued work during the syncs
    assert all(s["gpu_busy_during_sync_ms"] < 0.2 * s["cpu_blocked_ms"] for s in r["syncs"])


def test_gpu_bound_run_is_flagged_and_blocked_time_is_queued_work():
    r = report("masked_loss_v0_b32_256px")
    assert r["gpu_bound"] is True and r["gpu_utilization"] >= 0.8
    assert any("GPU-bound" in n for n in r["notes"])
    # blocked time is mostly the queue draining: the GPU is busy for most of it
    total_busy_during = sum(s["gpu_busy_during_sync_ms"] for s in r["syncs"])
    assert total_busy_during > 0.9 * r["total_cpu_blocked_ms"]
    assert r["total_gpu_idle_from_syncs_ms"] < 0.05 * r["total_cpu_blocked_ms"]
    # the first sync of the loss waits for the whole forward pass
    first = next(s for s in r["syncs"] if s["outer_op"] == "aten::nonzero_numpy")
    assert first["cpu_blocked_ms"] > 10 * first["gpu_idle_ms"] > 0


@pytest.mark.parametrize("run", NAIVE + ["masked_loss_v3_b16_64px", "encdec_piped_b16"] + PLAIN)
def test_invariants(run):
    r = report(run)
    for st in r["steps"]:
        assert 0 <= st["gpu_utilization"] <= 1
        # idle caused by syncs is part of the step's idle GPU time
        assert st["gpu_idle_from_syncs_ms"] <= st["duration_ms"] - st["gpu_busy_ms"] + 1e-6
        assert st["syncs"] == sum(s["per_step"][r["steps"].index(st)] for s in r["syncs"])
    for s in r["syncs"]:
        assert s["count"] == sum(s["per_step"])
        assert s["gpu_idle_ms"] <= s["cpu_blocked_ms"] + 1e-9
    assert r["total_syncs"] == sum(s["count"] for s in r["syncs"])
    json.dumps(r)  # JSON-serialisable as is


def test_readme_sync_count_from_raw_events():
    """Cross-check against the README's method: stream/device syncs inside the step windows."""
    for run in NAIVE:
        ev = raw_events(run)
        steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev
                 if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
        n = sum(1 for e in ev if e.get("cat") == "cuda_runtime"
                and e["name"] in ("cudaStreamSynchronize", "cudaDeviceSynchronize")
                and any(a <= e["ts"] < b for a, b in steps))
        assert report(run)["total_syncs"] == n == 18


def test_analyze_path_takes_a_run_folder():
    r = analyze_path(TRACES / "masked_loss_v3_b16_64px").report
    assert r["trace"].endswith(".pt.trace.json.gz") and r["total_syncs"] == 0


@pytest.mark.parametrize("chunk,margin", [(997, 0), (4096, 1500)])
def test_small_chunks_parse_the_same(monkeypatch, chunk, margin):
    """Values cut at every chunk boundary: the streaming reader must reassemble them."""
    from syncscan.trace import load

    monkeypatch.setattr(load, "CHUNK_CHARS", chunk)
    monkeypatch.setattr(load, "_MARGIN", margin)
    r = analyze(load_trace(trace_file("masked_loss_v0_b16_64px_light"))).report
    assert r == report("masked_loss_v0_b16_64px_light")


def _union_us(spans):
    total, cur = 0.0, None
    for s, e in sorted(spans):
        if cur is None or s > cur[1]:
            if cur:
                total += cur[1] - cur[0]
            cur = [s, e]
        else:
            cur[1] = max(cur[1], e)
    return total + (cur[1] - cur[0] if cur else 0.0)


def _syncing_ops_from_raw_events(run):
    """The README's method, extended: each cudaStreamSynchronize in a step belongs to the
    outermost cpu_op on its thread around it (autograd's evaluate_function wrapper left out);
    per op name, the host time of those op instances (each once) and the union of the GPU
    activity whose correlation id is that of a runtime call made inside them."""
    ev = raw_events(run)
    steps = [(e["ts"], e["ts"] + e["dur"]) for e in ev
             if e.get("cat") == "user_annotation" and e["name"].startswith("ProfilerStep#")]
    ops = [e for e in ev if e.get("cat") == "cpu_op"
           and not e["name"].startswith("autograd::engine::evaluate_function")]
    runtime = [e for e in ev if e.get("cat") == "cuda_runtime"]
    gpu = {}
    for e in ev:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            gpu.setdefault(e["args"]["correlation"], []).append((e["ts"], e["ts"] + e["dur"]))
    instances = {}
    for c in runtime:
        if c["name"] != "cudaStreamSynchronize" or not any(a <= c["ts"] < b for a, b in steps):
            continue
        around = [o for o in ops if o["tid"] == c["tid"] and o["ts"] <= c["ts"] < o["ts"] + o["dur"]]
        outer = min(around, key=lambda o: (o["ts"], -o["dur"]))
        instances.setdefault(outer["name"], {})[(outer["tid"], outer["ts"])] = outer
    out = {}
    for name, insts in instances.items():
        host = sum(o["dur"] for o in insts.values())
        spans = [span for o in insts.values() for c in runtime
                 if c["tid"] == o["tid"] and o["ts"] <= c["ts"] < o["ts"] + o["dur"]
                 for span in gpu.get(c["args"].get("correlation"), [])]
        out[name] = (host / 1000, _union_us(spans) / 1000, len(insts))
    return out


@pytest.mark.parametrize("run", ["masked_loss_v0_b16_64px", "masked_loss_v0_b32_256px"])
def test_host_and_gpu_time_of_the_syncing_ops(run):
    expected = _syncing_ops_from_raw_events(run)
    r = report(run)
    got = {s["outer_op"]: (s["outer_op_host_ms"], s["outer_op_gpu_ms"]) for s in r["syncs"]}
    assert set(got) == set(expected) == set(EXPECTED_SITES)
    for name, (host, gpu, n) in expected.items():
        assert n == 3 * EXPECTED_SITES[name][0]  # one instance per sync: aten::index runs twice a step
        assert got[name][0] == pytest.approx(host, abs=2e-6), name  # ms rounded to ns
        assert got[name][1] == pytest.approx(gpu, abs=2e-6), name
        assert got[name][1] > 0
    # what the figures must be bigger than: the waits inside the ops, and the copies they read back
    for s in r["syncs"]:
        assert s["outer_op_host_ms"] > s["cpu_blocked_ms"]


def test_syncing_ops_gpu_time_dominates_a_gpu_bound_step():
    """256x256 (GPU-bound): the mask's backward (sort + accumulating index_put) launches far more
    GPU work than the idle the syncs cause; at 64x64 the host time of the ops dominates."""
    big = report("masked_loss_v0_b32_256px")
    bw = next(s for s in big["syncs"] if s["outer_op"] == "IndexBackward0")
    assert bw["outer_op_gpu_ms"] > 10 * big["total_gpu_idle_from_syncs_ms"]
    small = report("masked_loss_v0_b16_64px")
    assert sum(s["outer_op_host_ms"] for s in small["syncs"]) > 10 * small["total_gpu_idle_from_syncs_ms"]
