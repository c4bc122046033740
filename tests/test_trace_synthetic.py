"""The analysis on small traces built here, where every expected number is known by construction."""

import gzip
import json

import pytest

from syncscan.trace import analyze, load_trace
from syncscan.trace.model import HostIntervals


class TraceBuilder:
    """Writes Kineto-shaped events (same fields and categories as torch 2.11's)."""

    def __init__(self):
        self.events = []
        self._ext = 1000

    def _x(self, cat, name, ts, dur, pid, tid, args):
        self.events.append({"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid,
                            "ts": float(ts), "dur": float(dur), "args": args})

    def ext(self):
        self._ext += 1
        return self._ext

    def step(self, n, ts, dur, tid=1):
        self._x("user_annotation", f"ProfilerStep#{n}", ts, dur, 100, tid, {"External id": self.ext()})

    def scope(self, name, ts, dur, tid=1):
        self._x("user_annotation", name, ts, dur, 100, tid, {"External id": self.ext()})

    def op(self, name, ts, dur, tid=1, seq=None, ext=None, input_types=None):
        args = {"External id": ext if ext is not None else self.ext()}
        if seq is not None:
            args["Sequence number"] = seq
        if input_types is not None:
            args["Input type"] = input_types
        self._x("cpu_op", name, ts, dur, 100, tid, args)
        return args["External id"]

    def py(self, name, ts, dur, tid=1):
        self._x("python_function", name, ts, dur, 100, tid, {"Python id": self.ext()})

    def call(self, name, ts, dur, corr, ext=None, tid=1):
        args = {"cbid": 1, "correlation": corr}
        if ext is not None:
            args["External id"] = ext
        self._x("cuda_runtime", name, ts, dur, 100, tid, args)

    def kernel(self, ts, dur, corr=-1, stream=7, device=0):
        self._x("kernel", "k", ts, dur, device, stream,
                {"correlation": corr, "stream": stream, "device": device})

    def memcpy(self, kind, ts, dur, corr, nbytes=4, stream=7, device=0):
        self._x("gpu_memcpy", f"Memcpy {kind}", ts, dur, device, stream,
                {"correlation": corr, "stream": stream, "device": device, "bytes": nbytes})

    def cuda_sync(self, kind, ts, dur, corr, stream=7):
        self._x("cuda_sync", kind, ts, dur, 0, stream,
                {"correlation": corr, "cuda_sync_kind": kind, "stream": stream, "device": 0})

    def doc(self):
        return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "Test GPU"}],
                "traceEvents": self.events}

    def write(self, path, gz=False):
        data = json.dumps(self.doc())
        if gz:
            with gzip.open(path, "wt") as f:
                f.write(data)
        else:
            path.write_text(data)
        return path


def run(tmp_path, b, **kw):
    return analyze(load_trace(b.write(tmp_path / "t.json")), **kw).report


def test_idle_gap_from_drain_to_next_launch(tmp_path):
    """Queue drains during the sync (at 400); the next work launched after it starts at 500."""
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.kernel(100, 300, corr=1)                  # queued before the sync, ends at 400
    e = b.op("aten::my_op", 190, 240)
    b.call("cudaStreamSynchronize", 200, 220, corr=2, ext=e)   # blocked 200..420
    b.kernel(500, 100, corr=3)                  # first work launched after the sync
    r = run(tmp_path, b)
    (site,) = r["syncs"]
    assert site["cpu_blocked_ms"] == pytest.approx(0.220)
    assert site["gpu_idle_ms"] == pytest.approx(0.100)            # 400 -> 500
    assert site["gpu_busy_during_sync_ms"] == pytest.approx(0.200)  # draining 200..400
    assert r["steps"][0]["gpu_idle_from_syncs_ms"] == pytest.approx(0.100)


def test_idle_gap_excludes_work_from_other_threads(tmp_path):
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.kernel(100, 300, corr=1)
    b.call("cudaDeviceSynchronize", 200, 220, corr=2)
    b.kernel(430, 20, corr=3, stream=9)          # launched by another thread during the sync
    b.kernel(500, 100, corr=4)
    (site,) = run(tmp_path, b)["syncs"]
    assert site["gpu_idle_ms"] == pytest.approx(0.030)   # 400..430 only
    assert site["op"] is None and site["rule"] == "SYN501"


def test_idle_is_bounded_by_the_blocked_time_when_the_gpu_was_already_starved(tmp_path):
    """Launch-bound: the GPU drained before the sync; the sync adds only its own blocked time."""
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.kernel(100, 50, corr=1)                    # done at 150
    e = b.op("aten::my_op", 195, 20)
    b.call("cudaStreamSynchronize", 200, 10, corr=2, ext=e)
    b.kernel(400, 50, corr=3)
    (site,) = run(tmp_path, b)["syncs"]
    assert site["cpu_blocked_ms"] == pytest.approx(0.010)
    assert site["gpu_idle_ms"] == pytest.approx(0.010)


def test_two_syncs_in_a_row_share_one_gap(tmp_path):
    b = TraceBuilder()
    b.step(1, 0, 2000)
    b.kernel(0, 500, corr=1)
    b.call("cudaDeviceSynchronize", 100, 410, corr=2)     # drains at 500, returns 510
    b.call("cudaDeviceSynchronize", 600, 10, corr=3)      # GPU idle already
    b.kernel(1000, 10, corr=4)
    r = run(tmp_path, b)
    (site,) = r["syncs"]                                  # same site (no op, no stack)
    assert site["count"] == 2
    # first: 500..600 (the second takes over at 600); second: capped by its 10 us
    assert site["gpu_idle_ms"] == pytest.approx(0.100 + 0.010)
    assert r["total_gpu_idle_from_syncs_ms"] == pytest.approx(0.110)


def test_torch20_long_memcpy_is_one_sync(tmp_path):
    """torch 2.0: .item() is one long cudaMemcpyAsync into pageable memory, no stream sync."""
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.kernel(100, 380, corr=1)
    b.op("aten::item", 190, 320)
    e = b.op("aten::_local_scalar_dense", 195, 310)
    b.call("cudaMemcpyAsync", 200, 300, corr=2, ext=e)
    b.memcpy("DtoH (Device -> Pageable)", 480, 10, corr=2)
    b.kernel(520, 80, corr=3)
    r = run(tmp_path, b)
    (site,) = r["syncs"]
    assert r["steps"][0]["syncs"] == 1
    assert site["calls"] == "cudaMemcpyAsync"
    assert site["copy"] == "DtoH (Device -> Pageable)"
    assert (site["op"], site["outer_op"], site["rule"]) == ("aten::_local_scalar_dense", "aten::item", "SYN101")
    assert site["gpu_idle_ms"] == pytest.approx(0.030)    # copy done at 490, next kernel 520


def test_torch211_copy_plus_stream_sync_is_one_sync(tmp_path):
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op("aten::nonzero", 100, 200)
    b.call("cudaMemcpyAsync", 110, 20, corr=5, ext=1001)
    b.memcpy("DtoH (Device -> Pinned)", 135, 2, corr=5)
    b.call("cudaStreamSynchronize", 140, 30, corr=6, ext=1001)
    b.cuda_sync("Stream Sync", 141, 28, corr=6)
    b.kernel(400, 10, corr=7)
    r = run(tmp_path, b)
    (site,) = r["syncs"]
    assert site["count"] == 1
    assert site["calls"] == "cudaMemcpyAsync + cudaStreamSynchronize"
    assert site["rule"] == "SYN301"
    assert r["cuda_sync_events"] is True


def test_pinned_copies_without_a_wait_are_not_syncs(tmp_path):
    """`.to('cpu', non_blocking=True)` into pinned memory and pinned uploads never block."""
    b = TraceBuilder()
    b.step(1, 0, 1000)
    e1 = b.op("aten::copy_", 100, 50)
    b.call("cudaMemcpyAsync", 110, 10, corr=1, ext=e1)
    b.memcpy("DtoH (Device -> Pinned)", 130, 5, corr=1)
    e2 = b.op("aten::copy_", 200, 50)
    b.call("cudaMemcpyAsync", 210, 10, corr=2, ext=e2)
    b.memcpy("HtoD (Pinned -> Device)", 230, 5, corr=2)
    e3 = b.op("aten::copy_", 300, 50)
    b.call("cudaMemcpy", 310, 10, corr=3, ext=e3)           # synchronous API, but device to device
    b.memcpy("DtoD (Device -> Device)", 312, 5, corr=3)
    r = run(tmp_path, b)
    assert r["syncs"] == [] and r["steps"][0]["syncs"] == 0
    kinds = {(c["direction"], c["memory"]): c for c in r["memcpy"]}
    assert kinds[("DtoH", "Pinned")]["host_syncs"] == 0
    assert kinds[("HtoD", "Pinned")]["count"] == 1


def test_pageable_upload_is_a_sync_even_without_a_stream_sync(tmp_path):
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op("aten::to", 100, 100)
    e = b.op("aten::copy_", 105, 90)
    b.call("cudaMemcpyAsync", 110, 60, corr=1, ext=e)
    b.memcpy("HtoD (Pageable -> Device)", 160, 5, corr=1)
    (site,) = run(tmp_path, b)["syncs"]
    assert (site["outer_op"], site["rule"]) == ("aten::to", "SYN204")


def test_syncs_outside_steps_and_the_profilers_own_are_ignored(tmp_path):
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.call("cudaDeviceSynchronize", 1500, 10, corr=1)   # the profiler's stop, after the steps
    r = run(tmp_path, b)
    assert r["total_syncs"] == 0 and r["ignored_syncs"] == 1


def test_profiler_stop_sync_found_by_its_python_stack_without_steps(tmp_path):
    b = TraceBuilder()
    b.op("aten::add", 0, 10)
    b.kernel(5, 10, corr=1)
    b.py("train.py(3): main", 100, 10)
    b.call("cudaDeviceSynchronize", 102, 5, corr=2)            # user's torch.cuda.synchronize()
    b.py("torch/autograd/profiler.py(403): __exit__", 200, 10)
    b.call("cudaDeviceSynchronize", 202, 5, corr=3)            # the profiler's
    r = run(tmp_path, b)
    assert r["windows"] == "whole trace" and len(r["steps"]) == 1
    assert r["total_syncs"] == 1 and r["ignored_syncs"] == 1
    assert r["syncs"][0]["function"] == "main"


def test_profiler_stop_sync_without_steps_or_stacks_is_the_last_bare_device_sync(tmp_path):
    b = TraceBuilder()
    b.op("aten::add", 0, 10)
    b.kernel(5, 10, corr=1)
    b.call("cudaDeviceSynchronize", 100, 5, corr=2)
    b.op("aten::mul", 150, 10)
    b.kernel(155, 10, corr=3)
    b.call("cudaDeviceSynchronize", 200, 5, corr=4)
    r = run(tmp_path, b)
    assert r["total_syncs"] == 1 and r["ignored_syncs"] == 1


def _backward_trace():
    b = TraceBuilder()
    b.step(1, 0, 2000)
    b.scope("loss", 50, 300)
    b.py("train.py(10): loss_fn", 60, 280)
    b.op("aten::zeros", 70, 5, seq=5)                     # reads the same number, no node
    b.op("aten::index", 100, 100, seq=5)                  # creates IndexBackward0 (seq 5)
    b.op("aten::nonzero", 110, 50)
    b.op("autograd::engine::evaluate_function: IndexBackward0", 500, 100, tid=2, seq=5)
    b.op("IndexBackward0", 505, 90, tid=2, seq=5)
    b.op("aten::_index_put_impl_", 510, 80, tid=2)
    e = b.op("aten::nonzero", 520, 40, tid=2)
    b.call("cudaMemcpyAsync", 525, 5, corr=10, ext=e, tid=2)
    b.memcpy("DtoH (Device -> Pinned)", 531, 1, corr=10)
    b.call("cudaStreamSynchronize", 531, 10, corr=11, ext=e, tid=2)
    return b


def test_backward_sync_maps_to_its_forward_op_by_sequence_number(tmp_path):
    (site,) = run(tmp_path, _backward_trace())["syncs"]
    assert site["phase"] == "backward"
    assert site["outer_op"] == "IndexBackward0"
    assert site["op"] == "aten::nonzero"
    assert site["forward_op"] == "aten::index"
    assert site["scope"] == "loss"
    assert (site["file"], site["line"], site["function"]) == ("train.py", 10, "loss_fn")
    assert site["rule"] == "SYN302"


def test_source_sites_give_exact_lines_in_order(tmp_path):
    b = TraceBuilder()
    b.step(7, 0, 1000)
    b.py("train.py(5): step", 0, 900)
    for k, (outer, inner) in enumerate([("aten::nonzero", None), ("aten::item", "aten::_local_scalar_dense")]):
        t = 100 + 300 * k
        e = b.op(outer, t, 100)
        if inner:
            e = b.op(inner, t + 5, 90)
        b.call("cudaMemcpyAsync", t + 10, 5, corr=10 + 2 * k, ext=e)
        b.memcpy("DtoH (Device -> Pinned)", t + 16, 1, corr=10 + 2 * k)
        b.call("cudaStreamSynchronize", t + 17, 5, corr=11 + 2 * k, ext=e)
    b.call("cudaDeviceSynchronize", 350, 5, corr=30)          # the hook never sees this one
    sites = [
        {"op": "aten::item", "file": "train.py", "line": 22, "function": "step", "step": 7, "order": 2},
        {"op": "aten::nonzero", "file": "train.py", "line": 21, "function": "step", "step": 7, "order": 1},
        {"op": None, "file": "train.py", "line": 99, "function": "step", "step": 7, "order": 3},
        {"op": "aten::unique", "file": "train.py", "line": 30, "function": "step", "step": 7, "order": 4},
        {"op": "aten::nonzero", "file": "warm.py", "line": 1, "function": "f", "step": 3, "order": 0},
    ]
    r = run(tmp_path, b, source_sites=sites)
    by_op = {s["outer_op"]: s for s in r["syncs"]}
    assert (by_op["aten::nonzero"]["line"], by_op["aten::nonzero"]["line_kind"]) == (21, "call")
    assert by_op["aten::item"]["line"] == 22
    bare = by_op[None]
    assert (bare["line"], bare["line_kind"]) == (5, "def")    # skipped over, keeps the trace's frame
    # the op-less site finds no event issued by an op after item; unique: none; step 3: not recorded
    assert r["unmatched_source_sites"] == 3


def test_streams_overlap_and_hidden_copies(tmp_path):
    b = TraceBuilder()
    b.step(1, 0, 400)
    b.kernel(0, 100, corr=1, stream=7)
    b.kernel(150, 100, corr=2, stream=7)
    b.kernel(50, 150, corr=3, stream=8)
    b.call("cudaMemcpyAsync", 80, 5, corr=4)
    b.memcpy("HtoD (Pinned -> Device)", 90, 70, corr=4, nbytes=1 << 20, stream=9)
    b.memcpy("HtoD (Pinned -> Device)", 300, 20, corr=5, nbytes=1 << 20, stream=9)
    r = run(tmp_path, b)
    streams = {s["stream"]: s for s in r["streams"]}
    assert streams[7]["kernels"] == 2 and streams[7]["busy_ms"] == pytest.approx(0.200)
    assert streams[8]["busy_ms"] == pytest.approx(0.150)
    assert streams[9]["kernels"] == 0 and streams[9]["copies"] == 2
    (ov,) = r["overlap"]
    assert ov["streams"] == [7, 8]
    assert ov["overlap_ms"] == pytest.approx(0.100)
    assert ov["share_of_less_busy"] == pytest.approx(100 / 150)
    (cp,) = r["memcpy"]
    assert cp["count"] == 2 and cp["bytes"] == 2 << 20
    assert cp["hidden_ms"] == pytest.approx(0.070) and cp["hidden_share"] == pytest.approx(70 / 90)
    step = r["steps"][0]
    assert step["gpu_busy_ms"] == pytest.approx(0.250)         # union over streams, not a sum
    assert step["gpu_utilization"] == pytest.approx(250 / 400)


def test_cpu_only_trace_lists_what_would_sync(tmp_path):
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.scope("loss", 0, 900)
    b.op("aten::index", 10, 10, input_types=["float", "bool"])          # x[mask]
    b.op("aten::index", 30, 10, input_types=["float", "long int"])      # x[idx]: no sync
    b.op("aten::where", 50, 10, input_types=["bool"])                   # one-argument where
    b.op("aten::where", 70, 10, input_types=["bool", "float", "float"])  # three-argument: no sync
    b.op("aten::index_put_", 90, 20)                                     # x[m] = 0.: no sync
    b.op("aten::item", 92, 10)
    b.op("aten::_local_scalar_dense", 93, 5)
    b.op("aten::item", 150, 10)                                          # loss.item()
    b.op("aten::_local_scalar_dense", 151, 5)
    b.op("aten::_unique2", 200, 20)
    b.op("aten::nonzero", 205, 5)                                        # inside unique: same sync
    r = run(tmp_path, b)
    assert r["gpu_activity"] is False and r["syncs"] == []
    assert any("No GPU activity" in n for n in r["notes"])
    got = sorted((s["outer_op"], s["rule"]) for s in r["would_sync"])
    assert got == [("aten::_unique2", "SYN305"), ("aten::index", "SYN302"),
                   ("aten::item", "SYN101"), ("aten::where", "SYN301")]
    assert r["steps"][0]["would_sync"] == 4
    assert all(s["scope"] == "loss" for s in r["would_sync"])


def test_gz_and_plain_json_give_the_same_report(tmp_path):
    b = _backward_trace()
    a = analyze(load_trace(b.write(tmp_path / "a.json"))).report
    g = analyze(load_trace(b.write(tmp_path / "a.json.gz", gz=True))).report
    a.pop("trace"), g.pop("trace")
    assert a == g


def test_host_intervals_nest_with_equal_starts():
    iv = HostIntervals()
    for s, e in [(10, 12), (0, 100), (10, 50), (60, 70)]:
        iv.starts.append(s)
        iv.ends.append(e)
        iv.names.append(0)
    # sorted: (0,100) (10,50) (10,12) (60,70): the longer interval at a tie is the parent
    assert [(iv.starts[i], iv.ends[i]) for i in iv.chain(11)] == [(10, 12), (10, 50), (0, 100)]
    assert [(iv.starts[i], iv.ends[i]) for i in iv.chain(65)] == [(60, 70), (0, 100)]
    assert iv.chain(100) == []


def test_scalar_reads_inside_optimizer_step_are_not_would_sync(tmp_path):
    """Optimizers read their CPU step counters with item(): not a sync on a GPU. The same read
    outside the optimizer's scope, and a nonzero inside it, are still listed."""
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.scope("Optimizer.step#Adam.step", 100, 200)
    b.scope("_multi_tensor_adam", 110, 150)                      # a nested scope of its own
    b.op("aten::item", 120, 10)
    b.op("aten::_local_scalar_dense", 121, 5)
    b.op("aten::is_nonzero", 140, 10)
    b.op("aten::item", 141, 5)
    b.op("aten::_local_scalar_dense", 142, 2)
    b.op("aten::nonzero", 270, 10)                               # a real sync, even in there
    b.op("aten::item", 400, 10)                                  # loss.item()
    b.op("aten::_local_scalar_dense", 401, 5)
    r = run(tmp_path, b)
    got = sorted((s["outer_op"], s["scope"]) for s in r["would_sync"])
    assert got == [("aten::item", None), ("aten::nonzero", "Optimizer.step#Adam.step")]


def test_functional_index_put_with_a_mask_would_sync(tmp_path):
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.op("aten::index_put", 10, 50, input_types=["float", "bool", "float"])   # torch.index_put(x, (m,), v)
    b.op("aten::index_put_", 12, 40)
    b.op("aten::_index_put_impl_", 14, 30)
    b.op("aten::nonzero", 16, 5)
    b.op("aten::index_put", 100, 50, input_types=["float", "long int", "float"])  # integer index: no sync
    (site,) = run(tmp_path, b)["would_sync"]
    assert (site["outer_op"], site["op"], site["rule"]) == ("aten::index_put", "aten::nonzero", "SYN303")


def test_syncing_ops_host_and_gpu_time(tmp_path):
    """One op instance that syncs twice counts once; its GPU work is the union over streams of
    what the calls inside it launched (not work launched before it, nor by other threads)."""
    b = TraceBuilder()
    b.step(1, 0, 2000)
    b.kernel(0, 50, corr=1)                                   # launched before the op: not its
    b.call("cudaLaunchKernel", 5, 5, corr=1)
    outer = b.op("aten::unique_thing", 100, 400)
    b.call("cudaLaunchKernel", 110, 5, corr=2)
    b.kernel(120, 100, corr=2, stream=7)                      # 120..220
    b.call("cudaLaunchKernel", 130, 5, corr=3)
    b.kernel(150, 100, corr=3, stream=8)                      # 150..250, overlaps: union 130
    e = b.op("aten::nonzero", 260, 100)
    b.call("cudaMemcpyAsync", 270, 5, corr=4, ext=e)
    b.memcpy("DtoH (Device -> Pinned)", 276, 4, corr=4)       # 4 more
    b.call("cudaStreamSynchronize", 280, 20, corr=5, ext=e)
    e = b.op("aten::nonzero", 380, 100)                        # the same instance syncs again
    b.call("cudaMemcpyAsync", 390, 5, corr=6, ext=e)
    b.memcpy("DtoH (Device -> Pinned)", 396, 2, corr=6)       # 396..398: 2 more
    b.call("cudaStreamSynchronize", 400, 20, corr=9, ext=e)
    b.call("cudaLaunchKernel", 150, 5, corr=7, tid=2)         # another thread, during the op
    b.kernel(300, 10, corr=7)
    b.call("cudaDeviceSynchronize", 800, 30, corr=8)          # outside any op: its own span
    r = run(tmp_path, b)
    (site,) = [s for s in r["syncs"] if s["op"] == "aten::nonzero"]
    assert (site["outer_op"], site["count"]) == ("aten::unique_thing", 2)
    assert site["outer_op_host_ms"] == pytest.approx(0.400)    # not 0.800
    assert site["outer_op_gpu_ms"] == pytest.approx(0.136)     # 130 + 4 + 2, not 200 + 4 + 2
    (bare,) = [s for s in r["syncs"] if s["op"] is None]
    assert (bare["outer_op_host_ms"], bare["outer_op_gpu_ms"]) == (pytest.approx(0.030), 0.0)


def test_source_never_points_into_syncscan(tmp_path):
    """During `syncscan profile` the script runs under syncscan's runner (and, with --step-on,
    inside its wrapper): those frames are skipped like torch's, wherever syncscan is installed."""
    import os

    import syncscan

    here = os.path.dirname(os.path.abspath(syncscan.__file__))   # this copy, installed in place
    b = TraceBuilder()
    b.step(1, 0, 1000)
    b.py(f"{here}/runtime/runner.py(80): run_script", 0, 900)
    b.py("/srv/app/train.py(3): <module>", 10, 880)
    b.py("/opt/elsewhere/syncscan/runtime/steps.py(120): wrapper", 20, 800)   # another install
    b.py("/srv/app/train.py(10): train_step", 30, 700)
    b.py(f"{here}/cli.py(40): main", 40, 600)
    e = b.op("aten::item", 100, 100)
    b.call("cudaMemcpyAsync", 110, 5, corr=1, ext=e)
    b.memcpy("DtoH (Device -> Pinned)", 116, 1, corr=1)
    b.call("cudaStreamSynchronize", 117, 5, corr=2, ext=e)
    (site,) = run(tmp_path, b)["syncs"]
    assert (site["file"], site["line"], site["function"]) == ("/srv/app/train.py", 10, "train_step")
    assert site["stack"] == ["/srv/app/train.py:3 in <module>", "/srv/app/train.py:10 in train_step"]


def test_source_site_whose_op_the_trace_names_otherwise_still_matches(tmp_path):
    """`x[i]` with a CUDA scalar index: the hook says aten::index (a subscript), the trace shows
    an item() read. The site takes the next event by order, as a site without an op would."""
    b = TraceBuilder()
    b.step(3, 0, 1000)
    b.py("train.py(5): step", 0, 900)
    e = b.op("aten::item", 100, 100)
    e = b.op("aten::_local_scalar_dense", 105, 90)
    b.call("cudaMemcpyAsync", 110, 5, corr=1, ext=e)
    b.memcpy("DtoH (Device -> Pinned)", 116, 1, corr=1)
    b.call("cudaStreamSynchronize", 117, 5, corr=2, ext=e)
    sites = [{"op": "aten::index", "file": "train.py", "line": 8, "function": "step", "step": 3, "order": 0}]
    r = run(tmp_path, b, source_sites=sites)
    (site,) = r["syncs"]
    assert (site["line"], site["line_kind"]) == (8, "call") and r["unmatched_source_sites"] == 0


def test_text_report_lists_only_the_stream_pairs_that_overlap():
    """An LSTM's 11 cuDNN streams gave 55 lines of "overlap 0.000 ms": pairs that ran at the same
    time are listed (most first, ten at most), the rest counted; the JSON keeps every pair."""
    from syncscan.present.analyze_text import overlap_worth_showing, render_text

    pair = lambda a, b, ms: {"device": 0, "streams": [a, b], "overlap_ms": ms,  # noqa: E731
                             "share_of_less_busy": ms / 10}
    overlap = [pair(7, 7 + k, 0.0) for k in range(1, 55)] + [pair(20, 21, 0.25), pair(20, 22, 1.5)]
    shown, left_out = overlap_worth_showing(overlap)
    assert [o["streams"] for o in shown] == [[20, 22], [20, 21]] and left_out == 54
    streams = [{"device": 0, "stream": s, "kernels": 3, "busy_ms": 1.0, "copies": 0, "copy_ms": 0.0, "memsets": 0}
               for s in (7, 20)]
    text = render_text({"steps": [], "syncs": [], "streams": streams, "overlap": overlap, "memcpy": []})
    lines = [ln for ln in text.splitlines() if "overlap" in ln]
    assert lines == ["  overlap device 0 streams 20 & 22: 1.500 ms (15.0% of the less busy stream)",
                     "  overlap device 0 streams 20 & 21: 0.250 ms (2.5% of the less busy stream)",
                     "  overlap of the other 54 pairs of streams: less, or none (every pair is in the JSON report)"]
    text = render_text({"steps": [], "syncs": [], "streams": streams, "overlap": overlap[:54], "memcpy": []})
    assert [ln for ln in text.splitlines() if "overlap" in ln] == \
        ["  overlap: none (no two streams ran at the same time; 54 pairs)"]
    many = [pair(1, 100 + k, 1.0 + k) for k in range(15)]
    shown, left_out = overlap_worth_showing(many)
    assert len(shown) == 10 and left_out == 5 and shown[0]["overlap_ms"] == 15.0
