"""`syncscan analyze` reads the TensorBoard-compatible copies (syncscan.runtime.tbcompat) as it
reads torch's own traces: `runtime`/`driver` are CUDA calls, `gpu_annotation` is ignored, and
the copy's `External id` 0 on calls outside any op means no op."""

import gzip
import json
from pathlib import Path

import pytest

from syncscan.runtime.tbcompat import convert, make_compatible
from syncscan.trace import analyze, load_trace

from conftest import TRACES
from test_trace_synthetic import TraceBuilder, run

needs_traces = pytest.mark.skipif(TRACES is None, reason="recorded traces (shared/traces) not found")


def _file(run: str) -> Path:
    return TRACES / run if run.endswith(".gz") else next((TRACES / run).glob("*.pt.trace.json.gz"))


def _categories(path: Path) -> set:
    with gzip.open(path, "rt") as f:
        return {e.get("cat") for e in json.load(f)["traceEvents"]}


@needs_traces
@pytest.mark.parametrize("run", ["masked_loss_v0_b16_64px", "masked_loss_v0_b32_256px",
                                 "masked_loss_v0_b16_64px_light", "plain/aug_gpu_b32.json.gz"])
def test_compatible_copy_gives_the_same_analysis(tmp_path, run):
    src = _file(run)
    dst = tmp_path / "h100.1.pt.trace.json.gz"
    changes = make_compatible(src, dst)
    cats = _categories(dst)
    assert "runtime" in cats and "cuda_runtime" not in cats and "gpu_user_annotation" not in cats
    assert changes["renamed"]
    original, copy = analyze(load_trace(src)).report, analyze(load_trace(dst)).report
    assert original["total_syncs"] > 0  # the comparison below is about something
    assert copy["steps"] == original["steps"]
    assert copy["syncs"] == original["syncs"]
    for key in ("total_syncs", "total_gpu_idle_from_syncs_ms", "total_cpu_blocked_ms", "estimated_saving",
                "ignored_syncs", "memcpy", "streams"):
        assert copy[key] == original[key], key
    original.pop("trace"), copy.pop("trace")
    assert copy == original


def test_external_id_zero_in_a_copy_is_no_op(tmp_path):
    """Without steps or stacks the profiler's stop sync is found as the last sync outside any
    op; the copy gives that call External id 0, which must still read as "outside any op"."""
    b = TraceBuilder()
    b.op("aten::add", 0, 10)
    b.kernel(5, 10, corr=1)
    b.call("cudaDeviceSynchronize", 100, 5, corr=2)
    b.op("aten::mul", 150, 10)
    b.kernel(155, 10, corr=3)
    b.call("cudaDeviceSynchronize", 200, 5, corr=4)
    doc = b.doc()
    changes = convert(doc)
    assert changes["external_id_set"] == 2
    path = tmp_path / "compat.json"
    path.write_text(json.dumps(doc))
    copy = analyze(load_trace(path)).report
    original = run(tmp_path, b)
    counts = [(r["total_syncs"], r["ignored_syncs"]) for r in (copy, original)]
    assert counts == [(1, 1), (1, 1)]


def test_driver_category_is_read_and_gpu_annotations_are_not_steps(tmp_path):
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.kernel(100, 300, corr=1)
    e = b.op("aten::my_op", 190, 240)
    b.call("cudaStreamSynchronize", 200, 220, corr=2, ext=e)
    b.kernel(500, 100, corr=3)
    b.events[-2]["cat"] = "driver"
    # a step projected on the GPU, as the copy names it: not a step, not a scope
    b.events.append({"ph": "X", "cat": "gpu_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7,
                     "ts": 90.0, "dur": 600.0, "args": {}})
    r = run(tmp_path, b)
    assert len(r["steps"]) == 1 and r["total_syncs"] == 1
    assert r["syncs"][0]["gpu_idle_ms"] == pytest.approx(0.100)
