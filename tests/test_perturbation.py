"""The light pass records less (syncscan.runtime.session.profiler_options): CUDA activity only
by default (`cuda`; tests/test_graft.py checks that its analysis is the recorded one's), CPU ops
without external correlation with `lean`; what it leaves out must not change the analysis, and
`--light-pass full` brings torch's defaults back."""

from __future__ import annotations

import gzip
import json

import pytest

from syncscan.runtime.session import LIGHT_PASSES, light_pass_for, profiler_options
from syncscan.trace import analyze, load_trace


class _FakeProfiler:
    """Stands for torch.profiler: records the experimental options it is given."""

    class ProfilerActivity:
        CPU, CUDA = "CPU", "CUDA"

    def __init__(self, known=("enable_cuda_sync_events", "disable_external_correlation")):
        known = set(known)

        class Config(dict):
            def __init__(self, **kw):
                unknown = set(kw) - known
                if unknown:
                    raise TypeError(f"unexpected {unknown}")
                super().__init__(**kw)

        self._ExperimentalConfig = Config


class _FakeTorch:
    def __init__(self, version="2.11.0+cu130", **kw):
        self.profiler = _FakeProfiler(**kw)
        self.__version__ = version


@pytest.fixture
def fake_torch(monkeypatch):
    import torch.profiler

    fake = _FakeTorch()
    monkeypatch.setattr(torch.profiler, "ProfilerActivity", _FakeProfiler.ProfilerActivity)
    return fake


def test_cuda_light_pass_records_cuda_activity_only_on_a_gpu(fake_torch):
    cuda = profiler_options(fake_torch, "light", cuda=True, light_pass="cuda")
    assert cuda["activities"] == ["CUDA"] and "experimental_config" not in cuda and not cuda["with_stack"]
    assert profiler_options(fake_torch, "light", cuda=True)["activities"] == ["CUDA"]  # the default
    # the detailed pass records the CPU ops the light pass's are taken from; without CUDA, CPU ops
    assert profiler_options(fake_torch, "detail", cuda=True, light_pass="cuda")["activities"] == ["CPU", "CUDA"]
    assert profiler_options(fake_torch, "light", cuda=False, light_pass="cuda")["activities"] == ["CPU"]


@pytest.mark.parametrize("version, cuda, requested, runs", [
    ("2.11.0+cu130", True, "cuda", "cuda"), ("2.2.0", True, "cuda", "cuda"),
    ("2.1.2+cu121", True, "cuda", "lean"),  # Kineto filtered cudaEventRecord out: no step marks
    ("2.1.2", False, "cuda", "cuda"), ("2.1.2", True, "full", "full"), ("garbage", True, "cuda", "lean"),
])
def test_the_cuda_recipe_needs_a_torch_that_shows_the_step_marks(version, cuda, requested, runs):
    assert light_pass_for(_FakeTorch(version), requested, cuda) == runs


def test_a_rank_of_a_multi_rank_job_records_cpu_ops_in_its_light_pass():
    """gloo's collectives are CPU ops only: a CUDA-only light trace has no collective to wait in."""
    assert light_pass_for(_FakeTorch("2.11.0+cu130"), "cuda", True, ranked=True) == "lean"
    assert light_pass_for(_FakeTorch("2.11.0+cu130"), "full", True, ranked=True) == "full"
    assert light_pass_for(_FakeTorch("2.11.0+cu130"), "cuda", True, ranked=False) == "cuda"


def test_lean_light_pass_drops_external_correlation_on_a_gpu(fake_torch):
    lean = profiler_options(fake_torch, "light", cuda=True, light_pass="lean")
    assert lean["experimental_config"] == {"disable_external_correlation": True}
    assert lean["activities"] == ["CPU", "CUDA"] and not lean["with_stack"] and not lean["record_shapes"]
    assert "experimental_config" not in profiler_options(fake_torch, "light", cuda=True, light_pass="full")
    assert "experimental_config" not in profiler_options(fake_torch, "light", cuda=False, light_pass="lean")
    detail = profiler_options(fake_torch, "detail", cuda=True, light_pass="lean")
    assert detail["with_stack"] and detail["experimental_config"] == {"enable_cuda_sync_events": True}
    assert set(LIGHT_PASSES) == {"cuda", "lean", "full"}


def test_a_torch_without_the_option_records_its_defaults(monkeypatch):
    import torch.profiler

    old = _FakeTorch(known=("enable_cuda_sync_events",))
    monkeypatch.setattr(torch.profiler, "ProfilerActivity", _FakeProfiler.ProfilerActivity)
    assert "experimental_config" not in profiler_options(old, "light", cuda=True)
    assert profiler_options(old, "detail", cuda=True)["experimental_config"] == {"enable_cuda_sync_events": True}


def test_the_analysis_does_not_need_external_ids(traces_dir, tmp_path):
    """A lean light trace has no External id on runtime calls and kernels: the same syncs, sites,
    costs and replay as the recorded (full) trace."""
    src = next((traces_dir / "masked_loss_v0_b16_64px_light").glob("*.pt.trace.json.gz"))
    data = json.load(gzip.open(src))
    stripped = 0
    linked = ("cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset")
    for ev in data["traceEvents"]:
        args = ev.get("args") or {}
        if ev.get("cat") in linked and "External id" in args:
            del args["External id"]
            stripped += 1
    assert stripped > 1000
    lean_path = tmp_path / "lean.json"
    lean_path.write_text(json.dumps(data))
    full, lean = analyze(load_trace(src)).report, analyze(load_trace(lean_path)).report
    keys = ("op", "outer_op", "count", "calls", "gpu_idle_ms", "cpu_blocked_ms", "outer_op_host_ms", "outer_op_gpu_ms",
            "saving_syncs_ms", "saving_rewrite_ms")
    assert [{k: s[k] for k in keys} for s in lean["syncs"]] == [{k: s[k] for k in keys} for s in full["syncs"]]
    assert lean["replay"]["saving_rewrites_ms"] == full["replay"]["saving_rewrites_ms"]
    assert lean["memcpy"] == full["memcpy"]


def test_the_text_report_says_when_the_light_pass_recorded_cuda_activity_only():
    from syncscan.present.profile_text import _render_perturbation

    passes = {n: {"state": "complete", "steps": 8} for n in ("bare", "light")}
    p = {"clock": "cuda_events", "light_pass": "cuda", "light_activities": ["CUDA"], "bare_ms_per_step": 4.0,
         "light_ms_per_step": 4.4, "light_vs_bare": 1.1}
    text = _render_perturbation({"perturbation": p, "passes": passes})
    assert text == ("step time by pass (CUDA events): bare 4.00 ms/step, "
                    "light 4.40 ms/step (1.10x bare; CUDA activity only)")
    p.update(light_pass="lean", light_activities=["CPU", "CUDA"])
    assert _render_perturbation({"perturbation": p, "passes": passes}).endswith("light 4.40 ms/step (1.10x bare)")
