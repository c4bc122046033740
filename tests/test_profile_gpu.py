"""`syncscan profile` on a CUDA GPU: syncs measured, exact source lines, CUDA-event timing.

Skipped without a GPU (CI). Recorded run of the same flow: docs/profile-gpu.md."""

from __future__ import annotations

import json
import textwrap

import pytest

from syncscan.cli import main
from syncscan.commands.profile import EXIT_SYNC_FOUND

SCRIPT = """
import torch
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(128, 64, device="cuda")
y = torch.randint(0, 10, (128,), device="cuda")
for _ in range(100):
    out = model(x)
    m = y > 4
    loss = torch.nn.functional.cross_entropy(out[m], y[m])
    opt.zero_grad()
    loss.backward()
    opt.step()
    if loss.item() > 100:
        print("diverged")
"""
MASK_LINE, BACKWARD_LINE, ITEM_LINE = 10, 12, 14


@pytest.mark.gpu
def test_profile_measures_syncs_and_names_their_lines(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    out = tmp_path / "report.json"
    rc = main(["profile", "--steps", "4", "--warmup", "1", "--output", str(out), "--logdir", "run",
               "--fail-on-sync", str(script)])
    report = json.loads(out.read_text())
    assert rc == EXIT_SYNC_FOUND
    assert report["gpu_activity"] is True
    assert report["perturbation"]["clock"] == "cuda_events"
    assert report["perturbation"]["bare_ms_per_step"] > 0
    # the light pass recorded CUDA activity only: its steps from syncscan's step marks, its ops
    # from the detailed pass, (nearly) every CUDA call paired with the detailed pass's
    assert report["perturbation"]["light_pass"] == "cuda" and report["perturbation"]["light_activities"] == ["CUDA"]
    ops = report["light_ops"]
    assert ops["steps"] == 4 and ops["calls"] > 0 and ops["anchored_calls"] >= 0.95 * ops["calls"]
    first = report["steps"][0]["number"]
    assert [s["number"] for s in report["steps"]] == [first, first + 1, first + 2, first + 3]
    assert not any(s.get("only_in") for s in report["syncs"])
    lines = {(s["op"], s["outer_op"]): s for s in report["syncs"]}
    assert lines[("aten::nonzero", "aten::index")]["line"] == MASK_LINE
    assert lines[("aten::nonzero", "IndexBackward0")]["line"] == BACKWARD_LINE
    assert lines[("aten::_local_scalar_dense", "aten::item")]["line"] == ITEM_LINE
    assert all(s["line_kind"] == "call" for s in report["syncs"])
    assert report["unmatched_source_sites"] == 0
    assert all(st["syncs"] == 4 for st in report["steps"])  # 2 masks, backward, .item()
    pred = report["prediction"]
    assert pred["method"] == "replay" and pred["calibrated"]  # the light trace replayed at bare speed
    assert pred["step_ms"] == pytest.approx(report["perturbation"]["bare_ms_per_step"], rel=0.02)
    assert pred["saving_ms_per_step"] >= pred["saving_syncs_ms_per_step"] > 0
    assert abs(report["replay"]["fit_error"]) < 0.1
    assert all(s["saving_rewrite_ms"] is not None for s in report["syncs"] if s.get("only_in") != "detail")


@pytest.mark.gpu
def test_the_cuda_light_pass_reports_the_sites_of_the_lean_one(tmp_path, monkeypatch):
    """The same script profiled with the light pass's cuda recipe (CUDA activity only, ops from the
    detailed pass) and its lean one (CPU ops of its own): the same sites, syncs per step and lines."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    sites = {}
    for recipe in ("cuda", "lean"):
        out = tmp_path / f"{recipe}.json"
        main(["profile", "--steps", "4", "--warmup", "1", "--light-pass", recipe, "--output", str(out),
              "--logdir", recipe, "--no-fail-on-sync", str(script)])
        report = json.loads(out.read_text())
        assert report["perturbation"]["light_pass"] == recipe
        sites[recipe] = sorted((s["op"], s["outer_op"], s["scope"], s["rule"], s["line"], s["count"])
                               for s in report["syncs"])
    assert sites["cuda"] == sites["lean"] and len(sites["cuda"]) == 3
