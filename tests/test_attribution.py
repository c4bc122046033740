"""Every sync at its own call site: syncs of one kind from two lines stay two sites (carried from
the detailed pass to the light one by their position in the step), syncs inside torch's own
Python (GradScaler) go to the user's line that called it with the call chain beside it, and a
line is called stale only when the file changed."""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES
from test_join import _line

from syncscan.join import join
from syncscan.lint.config import Config
from syncscan.lint.runner import lint_paths
from syncscan.trace import analyze, load_trace
from syncscan.trace.carry import SourcePattern

NAIVE = FIXTURES / "masked_loss_naive.py"


def _trace(traces_dir, run):
    return load_trace(next((traces_dir / run).glob("*.pt.trace.json.gz")))


def test_two_lines_of_one_kind_stay_two_sites_in_the_light_pass(traces_dir):
    """The recorded naive loss reads two boolean masks per step (aten::index, scope loss). Give
    them two lines in the detailed pass: the light pass (no stacks) gets the same two sites, one
    sync per step each, instead of one site with two."""
    first, second = _line(NAIVE, "pred[mask]"), _line(NAIVE, "mask = target !=")
    lines = [_line(NAIVE, "torch.nonzero("), _line(NAIVE, "target[inds] ="), _line(NAIVE, "torch.unique("),
             first, second, _line(NAIVE, "loss.backward()")]
    sites = [{"op": None, "file": str(NAIVE), "line": ln, "function": "f", "step": step, "order": i}
             for step in (2, 3, 4) for i, ln in enumerate(lines)]
    detail = analyze(_trace(traces_dir, "masked_loss_v0_b16_64px"), source_sites=sites)
    pattern = detail.source_pattern()
    assert pattern
    without = analyze(_trace(traces_dir, "masked_loss_v0_b16_64px_light")).report
    light = analyze(_trace(traces_dir, "masked_loss_v0_b16_64px_light"), sources=pattern).report
    n = len(light["steps"])

    def index_sites(report):
        return sorted((s["line"], s["count"] / n) for s in report["syncs"]
                      if s["outer_op"] == "aten::index" and s["phase"] == "forward")

    assert index_sites(without) == [(None, 2.0)]  # before: one site, two syncs per step
    assert index_sites(light) == [(second, 1.0), (first, 1.0)] if second < first else [(first, 1.0), (second, 1.0)]
    assert all(s["attributed_by"] == "detail" and s["line_kind"] == "call" for s in light["syncs"])
    assert light["total_syncs"] == without["total_syncs"]


SCALER_LOOP = """
import torch
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cpu")
total = 0.0
for step in range(40):
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    scaler.scale(loss).backward()
    total += loss.item()
    scaler.step(opt)
    scaler.update()
"""


def test_gradscaler_sync_is_reported_at_the_scalers_call_site(tmp_path, capsys):
    """GradScaler.step reads found_inf (.item()) inside torch's own Python, two lines after the
    loop's loss.item(): two sites, each at its own line, the scaler's with its call chain."""
    pytest.importorskip("torch")
    from syncscan.cli import main

    script = tmp_path / "train_amp.py"
    script.write_text(SCALER_LOOP)
    rc = main(["profile", "--wait", "0", "--warmup", "1", "--steps", "3", "--logdir", str(tmp_path / "run"),
               "--no-fail-on-sync", str(script)])
    assert rc == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    sites = {s["line"]: s for s in report["would_sync"] if s["outer_op"] == "aten::item"}
    item_line, scaler_line = _line(script, "loss.item()"), _line(script, "scaler.step(opt)")
    assert set(sites) == {item_line, scaler_line}
    n = len(report["steps"])
    assert [sites[ln]["count"] / n for ln in (item_line, scaler_line)] == [1.0, 1.0]
    assert all(s["line_kind"] == "call" for s in sites.values())
    chain = sites[scaler_line]["frames"]
    assert chain[0]["file"].endswith("train_amp.py") and chain[0]["line"] == scaler_line
    assert not chain[0]["library"] and chain[-1]["library"]
    assert any(fr["file"].endswith("grad_scaler.py") and fr["function"].endswith("step") for fr in chain)
    # the join: loss.item() confirmed at its statement, nothing stale
    j = report["join"]
    assert j["stale"] == []
    assert [c["line"] for c in j["confirmed"] if c["lint_codes"] == ["SYN101"]] == [item_line]


@pytest.fixture
def src(tmp_path):
    from test_cli_lint import HOT  # a training loop that reads loss.item() after opt.step()

    path = tmp_path / "train.py"
    path.write_text(HOT)
    return path


def _findings(path):
    return lint_paths([str(path)], Config(), use_cache=False, jobs=1).findings


def test_a_frame_running_when_the_profiler_started_is_not_stale(src):
    """A CPU trace records, for a frame already running when the profiler started, the line it
    was at then (here `opt.step()`, where a step boundary started the profiler), not its def line.
    The site is matched in that function, not called stale; a function of another name is."""
    at_start = {"file": src.name, "line": _line(src, "opt.step()"), "line_kind": "def", "function": "train",
                "op": "aten::_local_scalar_dense", "outer_op": "aten::item", "rule": "SYN101", "count": 2,
                "phase": "forward"}
    report = {"gpu_activity": False, "steps": [{}, {}], "syncs": [], "would_sync": [at_start]}
    j = join(report, _findings(src), profiled_files=[str(src)])
    assert j.stale == [] and [c["match"] for c in j.confirmed] == ["function"]
    moved = {**at_start, "function": "evaluate"}  # the file changed: another function is there now
    j = join({**report, "would_sync": [moved]}, _findings(src), profiled_files=[str(src)])
    assert len(j.stale) == 1 and j.confirmed == []


def test_call_chain_runs_from_the_users_line_to_the_op(tmp_path):
    """User code calls a wrapper library, which runs the op: the chain holds both, outermost
    first, and stops at the user's frame."""
    from syncscan.runtime.sitehook import _library_dirs, call_chain

    lib_file = tmp_path / "site-packages" / "wrapper.py"
    lib_file.parent.mkdir()
    ns: dict = {}
    exec(compile("import sys\ndef step():\n    return sys._getframe()\n", str(lib_file), "exec"), ns)
    exec(compile("def train(step):\n    return step()\n", str(tmp_path / "train.py"), "exec"), ns)
    chain = call_chain(ns["train"](ns["step"]), _library_dirs())
    assert [(fr["file"].rsplit("/", 1)[-1], fr["line"], fr["library"]) for fr in chain] == [
        ("train.py", 2, False), ("wrapper.py", 3, True)]


def test_source_pattern_positions_and_fallback():
    class Att:
        op = outer_op = "aten::item"
        forward_op = scope = None
        phase = "forward"

    class Item:
        def __init__(self, window):
            self.att, self.rule, self.window, self.site = Att(), "SYN101", window, None

    sites = [{"file": "a.py", "line": 1}, {"file": "a.py", "line": 2}]
    learnt = [Item(0), Item(0), Item(1), Item(1)]
    pattern = SourcePattern.learn(learnt, [0, 1, 0, 1], sites)
    items = [Item(5), Item(5), Item(5)]
    assert pattern.apply(items) == 3
    assert [it.site["line"] for it in items] == [1, 2, 1]  # the third: the kind's most frequent source
    assert all(it.site["carried"] for it in items)
