"""Pieces of `syncscan profile` on their own: the schedule, step boundaries, the sync-site hook,
the merge of the passes' reports, the TensorBoard conversion, and the `syncscan.profile()` API."""

from __future__ import annotations

import functools
import json
import os
import sys
import warnings

import pytest

from syncscan.errors import UserError
from syncscan.runtime import sitehook
from syncscan.runtime.report import merge_sites, prediction as _prediction
from syncscan.runtime.runner import _exit_status
from syncscan.runtime.schedule import make_plan, parse_passes
from syncscan.runtime.tbcompat import convert

# ------------------------------------------------------------------------ schedule


def test_plan_windows_follow_each_other():
    plan = make_plan(1, 2, 8, ("bare", "light", "detail"))
    w = {x.name: (x.warmup_start, x.start, x.end) for x in plan.windows}
    assert w == {"bare": (1, 3, 11), "light": (11, 13, 21), "detail": (21, 23, 31)}
    assert plan.total == 31


def test_two_profilers_are_kept_one_step_apart_without_warmup():
    plan = make_plan(0, 0, 2, ("bare", "light", "detail"))
    w = {x.name: (x.warmup_start, x.start, x.end) for x in plan.windows}
    assert w == {"bare": (0, 0, 2), "light": (2, 2, 4), "detail": (4, 5, 7)}


def test_parse_passes():
    assert parse_passes("detail,bare") == ("bare", "detail")
    assert parse_passes("bare") == ("bare",)  # times the steps only (what --compare runs)
    with pytest.raises(UserError):
        parse_passes(" , ")
    with pytest.raises(UserError):
        parse_passes("light,fast")


@pytest.mark.parametrize("code, status", [(None, (0, None)), (3, (3, None)), (True, (1, None)),
                                          (-1, (255, None)), ("stop", (1, "stop"))])
def test_exit_status_as_the_interpreter_maps_it(code, status):
    assert _exit_status(code) == status


# ------------------------------------------------------------------------ sync sites


def _sync_warning():
    warnings.warn("called a synchronizing CUDA operation", UserWarning)


def test_site_recorder_finds_the_callers_line_and_restores_warnings():
    before = warnings.showwarning
    rec = sitehook.SiteRecorder(lambda: 7)
    rec.install()
    try:
        _sync_warning()
        _sync_warning()
        with warnings.catch_warnings(record=True) as other:
            warnings.simplefilter("always")
            warnings.warn("something else")
    finally:
        rec.uninstall()
    assert warnings.showwarning is before
    assert len(rec.sites) == 2
    first, second = rec.sites
    # this test file is outside torch and syncscan: the first frame outside them is the helper
    assert first["file"].endswith("test_profile_units.py") and first["function"] == "_sync_warning"
    assert (first["step"], first["order"], second["order"]) == (7, 0, 1)
    assert first["time_ns"] > 0 and first["op"] is None
    assert len(other) == 1  # other warnings are left alone


def test_user_frame_skips_internal_files():
    def inner():
        return sys._getframe()

    frame = inner()
    this_file = frame.f_code.co_filename
    # with this file counted as internal, the walk goes past its frames to pytest's
    found = sitehook.user_frame(frame, internal=(this_file,))
    assert found is not None and found.f_code.co_filename != this_file
    assert sitehook.user_frame(frame, internal=("/nonexistent/",)) is frame


_MSG = "called a synchronizing CUDA operation"


class _SyncsInC:
    """Each use runs warnings.warn straight from C, as torch's ops warn: no Python frame of its
    own, so the innermost frame is the caller, paused at the instruction that "synced"."""

    __getitem__ = warnings.warn                                # t[_MSG]
    __setitem__ = warnings.warn                                # t[_MSG] = UserWarning
    __bool__ = __float__ = functools.partial(warnings.warn, _MSG)  # then TypeError: not a bool

    def __init__(self):
        self.item = self.nonzero = self.frobnicate = functools.partial(warnings.warn, _MSG)


def _record(fn) -> list[dict]:
    rec = sitehook.SiteRecorder(lambda: 0)
    rec.install()
    try:
        fn()
    finally:
        rec.uninstall()
    return rec.sites


def test_site_op_is_read_off_the_instruction_that_synced():
    t = _SyncsInC()

    def user_code():
        t[_MSG]
        t[_MSG] = UserWarning
        t.item()
        t.nonzero()
        t.frobnicate()                     # a call the hook cannot name
        for f in (lambda: float(t), lambda: 1 if t else 0):
            try:
                f()
            except TypeError:
                pass

    sites = _record(user_code)
    assert [s["op"] for s in sites] == ["aten::index", "aten::index_put_", "aten::item", "aten::nonzero",
                                        None, "aten::item", "aten::is_nonzero"]
    assert [s["code"] for s in sites[:3]] == ["t[_MSG]", "t[_MSG] = UserWarning", "t.item()"]


def test_site_op_inside_torchs_python_code(monkeypatch):
    """f"{t:.3f}" runs Tensor.__format__, Python code of torch's that calls t.item(): the op is
    aten::item, read in torch's frame, and the line is the user's."""
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.Tensor, "item", functools.partial(warnings.warn, _MSG))
    t = torch.tensor(1.5)

    def user_code():
        with pytest.raises(TypeError):  # the stand-in returns None, which has no .3f format
            f"{t:.3f}"

    (site,) = _record(user_code)
    assert site["op"] == "aten::item"
    assert site["file"].endswith("test_profile_units.py") and site["code"] == 'f"{t:.3f}"'


def test_sites_never_point_into_syncscan(tmp_path):
    own = os.path.dirname(os.path.abspath(sitehook.__file__))  # syncscan/runtime
    # no frame outside torch and syncscan: the warning's own location is kept unless it is ours
    rec = sitehook.SiteRecorder(lambda: 0)
    rec.install()
    rec._internal = ("/",)
    try:
        rec._showwarning(_MSG, UserWarning, os.path.join(own, "session.py"), 90)
        rec._showwarning(_MSG, UserWarning, "/x/site-packages/torch/nn/functional.py", 12)
    finally:
        rec.uninstall()
    torch_file = "/x/site-packages/torch/nn/functional.py"
    assert [(s["file"], s["line"]) for s in rec.sites] == [(None, None), (torch_file, 12)]
    # a frame of syncscan reached through a symbolic link is still syncscan's
    link = tmp_path / "link"
    link.symlink_to(own, target_is_directory=True)
    code = compile("import sys\ndef here(f):\n    return f(sys._getframe())\n", str(link / "x.py"), "exec")
    ns: dict = {}
    exec(code, ns)
    outer = sys._getframe()
    found = ns["here"](lambda f: sitehook.user_frame(f))
    assert found is outer


# ------------------------------------------------------------------------ step boundaries


def test_optimizer_boundary_counts_the_lead_optimizer_only_and_restores_step():
    torch = pytest.importorskip("torch")
    from syncscan.runtime.steps import OptimizerBoundary

    seen = []
    b = OptimizerBoundary(seen.append)
    p1, p2 = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(2))
    g, d = torch.optim.SGD([p1], lr=0.1), torch.optim.SGD([p2], lr=0.1)
    b.install()
    try:
        for _ in range(3):
            for p, opt in ((p1, g), (p2, d)):  # a GAN-like loop: two optimizers per iteration
                p.grad = torch.ones(2)
                opt.step()
        assert seen == ["optimizer"] * 3
        assert "step" in g.__dict__  # the wrapper that ends the step outside torch's scope
    finally:
        b.remove()
    assert "step" not in g.__dict__
    g.step()
    assert len(seen) == 3


def test_function_boundary_patches_an_imported_module(tmp_path, monkeypatch):
    from syncscan.runtime.steps import FunctionBoundary

    (tmp_path / "stepmod_xyz.py").write_text("def one_step(x):\n    return x + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import stepmod_xyz

    seen = []
    b = FunctionBoundary("stepmod_xyz.one_step", None, seen.append)
    b.install()
    try:
        assert stepmod_xyz.one_step(1) == 2
        assert stepmod_xyz.one_step.__name__ == "one_step"
        assert b.patched_at == "stepmod_xyz.one_step"
    finally:
        b.remove()
    stepmod_xyz.one_step(1)
    assert seen == ["step-on"]
    assert sys.getprofile() is None
    sys.modules.pop("stepmod_xyz", None)


# ------------------------------------------------------------------------ merging the passes


def _site(op, outer, scope, count, **kw):
    return {"rule": "SYN302", "op": op, "outer_op": outer, "forward_op": None, "phase": "forward",
            "scope": scope, "count": count, "per_step": [count // 2, count - count // 2],
            "file": None, "line": None, "function": None, **kw}


def test_merge_takes_costs_from_light_and_lines_from_detail():
    light = [_site("aten::nonzero", "aten::index", "loss", 4, gpu_idle_ms=0.2)]
    detail = [_site("aten::nonzero", "aten::index", "loss", 2, gpu_idle_ms=0.9, file="t.py", line=12,
                    function="f", line_kind="call"),
              _site("aten::nonzero", "aten::index", "loss", 2, gpu_idle_ms=0.9, file="t.py", line=30,
                    function="g", line_kind="call"),
              _site("aten::_unique2", "aten::_unique2", "loss", 2, file="t.py", line=14, function="f")]
    merged = merge_sites(light, detail)
    first = merged[0]
    assert first["gpu_idle_ms"] == 0.2 and first["count"] == 4  # the light pass's figures
    assert (first["file"], first["line"], first["line_kind"]) == ("t.py", 12, "call")
    assert [s["line"] for s in first["sources"]] == [12, 30]
    assert merged[1]["only_in"] == "detail" and merged[1]["op"] == "aten::_unique2"


def test_prediction_takes_the_replay_calibrated_to_the_bare_pass():
    steps = [{"gpu_idle_from_syncs_ms": 0.1, "cpu_blocked_in_syncs_ms": 0.3}] * 2
    pert = {"bare_ms_per_step": 5.0, "light_ms_per_step": 10.0}
    syncs = [{"rule": "SYN301", "op": "aten::nonzero", "file": "t.py", "line": 3, "saving_syncs_ms": 0.05,
              "saving_rewrite_ms": 0.4, "outer_op_host_ms": 1.0},
             {"rule": "SYN101", "op": "aten::item", "file": "t.py", "line": 9, "saving_syncs_ms": 0.2,
              "saving_rewrite_ms": 0.25, "outer_op_host_ms": 1.2},
             {"rule": "SYN305", "only_in": "detail"}]  # seen by the detailed pass only: not per light step
    replay = {"saving_syncs_ms": 0.22, "saving_rewrites_ms": 0.61, "step_ms": 5.0, "host_scale": 0.5,
              "calibrated": True}
    p = _prediction({"gpu_activity": True, "gpu_bound": False, "steps": steps, "syncs": syncs,
                     "replay": replay}, pert)
    assert p["method"] == "replay" and p["regime"] == "host-bound" and p["calibrated"]
    assert p["saving_ms_per_step"] == 0.61 and p["saving_syncs_ms_per_step"] == 0.22
    assert p["saving_ms_per_step_range"] == [0.22, 0.61]
    assert p["speedup"] == pytest.approx(5.0 / 4.39, abs=1e-3)
    assert [s["line"] for s in p["per_site"]] == [3, 9]
    assert p["per_site"][0]["saving_rewrite_ms"] == 0.4
    assert p["host_ms_in_syncing_ops_per_step"] == pytest.approx(1.1)  # the ops' own time, kept
    assert "bare pass" in p["basis"]
    assert _prediction({"gpu_activity": False, "steps": steps}, pert) is None


def test_prediction_without_a_replay_is_the_gpu_idle():
    steps = [{"gpu_idle_from_syncs_ms": 0.1, "cpu_blocked_in_syncs_ms": 3.0}] * 2
    p = _prediction({"gpu_activity": True, "gpu_bound": True, "steps": steps, "syncs": [],
                     "replay": {"method": "replay", "skipped": "too many"}}, {})
    assert p["method"] == "gpu idle" and p["saving_ms_per_step"] == pytest.approx(0.1)
    assert "too many" in p["basis"]


# a bare pass faster than the trace: twice as fast where the host sets the pace; where the GPU
# does, the profiler slows little (and no host speed makes GPU work faster)
@pytest.mark.parametrize("run, speed", [("masked_loss_v0_b16_64px", 0.5), ("masked_loss_v0_b32_256px", 0.98)])
def test_prediction_from_a_recorded_trace(run, speed):
    """End to end on a recorded H100 trace: the replay calibrated to a bare step time feeds the
    prediction, per site and in all."""
    from conftest import TRACES
    from syncscan.trace import analyze, load_trace
    from syncscan.trace import resolve_traces as resolve

    if TRACES is None:
        pytest.skip("recorded traces (shared/traces) not found")
    trace = load_trace(resolve(str(TRACES / run))[0])
    light = analyze(trace).report
    n = len(light["steps"])
    traced = sum(s["duration_ms"] for s in light["steps"]) / n
    r = analyze(trace, step_ms=traced * speed).report
    p = _prediction(r, {"bare_ms_per_step": traced * speed, "light_ms_per_step": traced})
    assert p["method"] == "replay" and p["calibrated"]
    assert p["step_ms"] == pytest.approx(traced * speed, rel=0.01)
    low, high = p["saving_ms_per_step_range"]
    assert 0 < low < high == p["saving_ms_per_step"]
    assert len(p["per_site"]) == len(r["syncs"])
    assert all(s["saving_rewrite_ms"] is not None for s in p["per_site"])


# ------------------------------------------------------------------------ TensorBoard copy


def test_convert_renames_what_the_plugin_misreads():
    trace = {"traceEvents": [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "args": {"External id": 5}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "args": {}},
        {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel"},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#3"},
        {"ph": "s", "cat": "fwdbwd", "id": 1},
        {"ph": "X", "cat": "kernel", "name": "k"},
    ]}
    changes = convert(trace)
    cats = [e["cat"] for e in trace["traceEvents"]]
    assert cats == ["runtime", "runtime", "runtime", "gpu_annotation", "fwdbwd", "kernel"]
    assert trace["traceEvents"][0]["args"]["External id"] == 5
    assert trace["traceEvents"][1]["args"]["External id"] == 0
    assert trace["traceEvents"][2]["args"]["External id"] == 0
    assert changes["external_id_set"] == 2


# ------------------------------------------------------------------------ the API


def test_profile_api_in_a_script(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    import syncscan

    model = torch.nn.Linear(8, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with syncscan.profile(steps=2, warmup=1, wait=0, passes="light,detail", logdir=tmp_path / "run",
                          name="unit") as p:
        for _ in range(10):  # more than the 7 steps the schedule needs: the rest run unprofiled
            y = model(torch.randn(16, 8))
            loss = y[y > 0].sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    assert p.steps_done == 10
    report = p.report
    assert report["outcome"]["status"] == "finished" and report["outcome"]["complete"]
    assert report["passes"]["light"]["state"] == "complete"
    assert any(s["op"] == "aten::nonzero" for s in report["would_sync"])
    assert json.loads((tmp_path / "run" / "report.json").read_text())["outcome"] == report["outcome"]
    assert "the block finished after 10 steps" in capsys.readouterr().out
    syncscan.step()  # no session any more: does nothing


def test_profile_api_with_explicit_steps_and_an_error(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    import syncscan

    with pytest.raises(ZeroDivisionError):
        with syncscan.profile(steps=1, warmup=0, wait=0, passes="light", logdir=tmp_path / "run",
                              print_report=False) as p:
            x = torch.arange(6.0)
            for i in range(3):
                torch.nonzero(x > i)
                syncscan.step()
            1 / 0
    assert p.report["outcome"]["status"] == "exception"
    assert p.steps_done == 3
    assert capsys.readouterr().out == ""
