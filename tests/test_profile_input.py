"""`syncscan profile` on the CPU with deliberately slow datasets: the report names the input
pipeline as what sets the pace, with the step's wait and the loader's numbers, does not let a
host saving (a sync's) show while the loader sets the pace, and the bare pass waits for the
batches the workers prefetched to be used up before it measures."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

torch = pytest.importorskip("torch")

from syncscan.cli import main  # noqa: E402
from syncscan.runtime import loader_worker  # noqa: E402

FAST = ["--steps", "2", "--warmup", "1", "--wait", "0"]

# A loader far slower than the step: each sample sleeps (not CPU work, so a busy machine does not
# change the verdict), 4 samples a batch. `.item()` each step: a sync on a GPU.
SLOW = """
import sys, time
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

class Slow(Dataset):
    def __init__(self, seconds):
        self.seconds = seconds
        self.transform = torch.neg
    def __len__(self):
        return 100_000
    def __getitem__(self, i):
        time.sleep(self.seconds)
        return self.transform(torch.randn(8)), i % 4

workers, seconds = int(sys.argv[1]), float(sys.argv[2])
first_step_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
loader = DataLoader(Slow(seconds), batch_size=4, num_workers=workers,
                    prefetch_factor=4 if workers else None, persistent_workers=workers > 0)
model = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step, (x, y) in enumerate(loader):
    if step == 0:
        time.sleep(first_step_s)  # a slow start (CUDA, compilation): the workers fill their queue
    loss = F.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    value = loss.item()
"""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def profile(tmp_path, *args, capsys=None):
    out = tmp_path / "out.json"
    rc = main(["profile", "--output", str(out), "--logdir", str(tmp_path / "run"), "--no-lint", *args])
    report = json.loads(out.read_text()) if out.exists() else None
    text = capsys.readouterr().out if capsys else ""
    return rc, report, text


def script(tmp_path) -> str:
    path = tmp_path / "slow.py"
    path.write_text(textwrap.dedent(SLOW))
    return str(path)


def test_a_slow_loader_sets_the_pace(tmp_path, capsys):
    """One worker, 0.4 s a batch; the step itself needs a few ms."""
    html = tmp_path / "report.html"
    rc, report, text = profile(tmp_path, *FAST, "--html", str(html), script(tmp_path), "1", "0.1", capsys=capsys)
    assert rc == 0
    rec = report["input_pipeline"]
    lo = rec["loaders"][rec["main"]]
    assert (lo["kind"], lo["workers"], lo["prefetch_factor"], lo["batch_size"], lo["persistent_workers"]) == \
        ("multiprocess", 1, 4, 4, True)
    assert lo["dataset"] == "Slow" and lo["batches_taken"] >= 9
    pace = rec["pace"]
    assert pace["resource"] == "input pipeline"
    assert pace["wait_ms"] >= 0.5 * pace["step_ms"]
    assert pace["loader_period_ms"] == pace["step_ms"]
    assert pace["saving_bound_ms"] == 0.0  # a sync's saving would be absorbed
    workers = rec["workers"]
    assert workers["where"] == "workers" and workers["batch_ms"] >= 400  # 4 samples x 0.1 s
    assert workers["transform_ms"] is not None and workers["transform_ms"] < 0.2 * workers["batch_ms"]
    assert rec["steady_state"]["status"] == "steady"
    assert {r["remedy"] for r in rec["remedies"]} >= {"num_workers", "prefetch_factor"}
    # the sync it would have on a GPU is listed; nothing predicts what removing it saves
    assert any(s["rule"] == "SYN101" for s in report["would_sync"])
    assert report["prediction"] is None
    assert "the input pipeline sets the pace: the step waits" in text
    assert "a saving in host or GPU time (syncs included) takes at most 0.00 ms off the step" in text
    assert "Input pipeline (1 worker" in html.read_text()


def test_loading_in_the_main_process(tmp_path):
    rc, report, _ = profile(tmp_path, *FAST, "--passes", "bare", script(tmp_path), "0", "0.05")
    assert rc == 0
    rec = report["input_pipeline"]
    assert rec["loaders"][0]["kind"] == "single process"
    assert rec["pace"]["resource"] == "input pipeline" and rec["pace"]["load_ms"] >= 200
    assert rec["workers"]["where"] == "main process" and rec["workers"]["batch_ms"] >= 200
    workers = {r["remedy"]: r for r in rec["remedies"]}.get("num_workers")
    assert workers is not None and workers["saving_ms"] > 0


def test_the_bare_pass_waits_for_the_prefetched_batches_to_be_used_up(tmp_path):
    """Two workers, 0.4 s a batch, 4 batches each queued while the first step sleeps 3 s: the
    steps after it take ready batches at first. The bare pass is lengthened until they wait."""
    rc, report, _ = profile(tmp_path, *FAST, "--passes", "bare", script(tmp_path), "2", "0.1", "3")
    assert rc == 0
    st = report["input_pipeline"]["steady_state"]
    assert st["status"] == "drained" and st["drain_steps"] > 0 and st["limit"] == 64
    assert report["schedule"]["drain_steps"] == st["drain_steps"]
    bare = report["passes"]["bare"]
    assert bare["steps"] == 2 and bare["last"] - bare["first"] == 1
    assert bare["first"] == 1 + st["drain_steps"]  # the measured steps are the last ones
    assert report["input_pipeline"]["pace"]["resource"] == "input pipeline"


def test_drain_steps_0_measures_the_prefetched_batches_and_says_so(tmp_path):
    rc, report, _ = profile(tmp_path, *FAST, "--passes", "bare", "--drain-steps", "0", script(tmp_path),
                            "2", "0.1", "3")
    assert rc == 0
    st = report["input_pipeline"]["steady_state"]
    assert st["status"] == "not reached" and st["drain_steps"] == 0 and st["limit"] == 0
    assert "--drain-steps" in st["reason"]
    # the steps took batches that were ready: they did not wait, so the loader looks fast
    assert report["input_pipeline"]["wait_ms_per_step"] < 50


def test_drain_steps_must_not_be_negative(tmp_path, capsys):
    rc = main(["profile", "--drain-steps", "-1", script(tmp_path), "1", "0.1"])
    assert rc == 2 and "--drain-steps must not be negative" in capsys.readouterr().err


def test_no_loader_no_record_and_the_hooks_are_gone(tmp_path):
    from torch.utils.data import dataloader
    from torch.utils.data._utils import fetch, worker

    path = tmp_path / "plain.py"
    path.write_text(textwrap.dedent("""
        import torch
        model = torch.nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(100):
            model(torch.randn(3, 4)).sum().backward()
            opt.step()
    """))
    before = (dataloader._BaseDataLoaderIter.__next__, worker._worker_loop, fetch._MapDatasetFetcher.fetch)
    rc, report, _ = profile(tmp_path, *FAST, str(path))
    assert rc == 0 and report["input_pipeline"] is None
    assert (dataloader._BaseDataLoaderIter.__next__, worker._worker_loop, fetch._MapDatasetFetcher.fetch) == before
    assert loader_worker.LOG_ENV not in os.environ
    assert loader_worker._sink is None


def test_compare_times_the_steady_state_too(tmp_path, monkeypatch):
    """--compare's bare passes get the same bound on lengthening them (they drain the same way)."""
    from syncscan.runtime import compare

    seen = {}

    def measure(original, rewritten, schedule, runs):
        seen["schedule"] = schedule
        return {"original_ms_per_step": 2.0, "rewritten_ms_per_step": 1.0, "measured_saving_ms_per_step": 1.0,
                "runs": runs, "spread_ms": 0.1, "resolved": True, "original_runs_ms": [2.0],
                "rewritten_runs_ms": [1.0]}

    monkeypatch.setattr(compare, "measure", measure)
    plain = tmp_path / "plain.py"
    plain.write_text("import torch\nm = torch.nn.Linear(2, 1)\no = torch.optim.SGD(m.parameters(), lr=0.1)\n"
                     "for _ in range(50):\n    m(torch.ones(1, 2)).sum().backward()\n    o.step()\n")
    rc, report, _ = profile(tmp_path, *FAST, "--passes", "bare", "--drain-steps", "5", "--compare", str(plain),
                            str(plain))
    assert rc == 0 and report["comparison"]["measured_saving_ms_per_step"] == 1.0
    assert seen["schedule"][-2:] == ["--drain-steps", "5"]
