"""A trace recorded here by torch.profiler on the CPU: what would sync on a GPU is still listed."""

import pytest

torch = pytest.importorskip("torch")

from syncscan.present.analyze_text import render_text  # noqa: E402
from syncscan.trace import analyze, load_trace  # noqa: E402


def _record(path):
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    x = torch.randn(64, 10, requires_grad=True)
    m = x[:, 0] > 0

    def step():
        with record_function("loss"):
            y = x[m]                       # boolean read: syncs on a GPU
            torch.nonzero(m)               # syncs
            torch.unique(m.long())         # syncs
            z = x.detach().clone()
            z[m] = torch.zeros(10)         # boolean assign of a tensor: syncs
            z[m] = 0.0                     # Python scalar: masked_fill, no sync
            torch.where(m, 1.0, 0.0)       # three-argument where: no sync
            torch.where(m)                 # one-argument where: syncs
            loss = y.sum()
            loss.item()                    # syncs
        loss.backward()                    # IndexBackward0: syncs

    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, with_stack=True,
                 schedule=schedule(wait=0, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(4):
            step()
            prof.step()


def test_cpu_only_trace_from_torch(tmp_path):
    path = tmp_path / "cpu.pt.trace.json"
    _record(path)
    r = analyze(load_trace(path)).report
    assert r["gpu_activity"] is False
    assert r["syncs"] == [] and len(r["steps"]) == 2
    got = {s["outer_op"]: (s["per_step"], s["rule"]) for s in r["would_sync"]}
    assert got == {
        "aten::index": ([1, 1], "SYN302"),
        "aten::nonzero": ([1, 1], "SYN301"),
        "aten::_unique2": ([1, 1], "SYN305"),
        "aten::index_put_": ([1, 1], "SYN303"),
        "aten::where": ([1, 1], "SYN301"),
        "aten::item": ([1, 1], "SYN101"),
        "IndexBackward0": ([1, 1], "SYN302"),
    }
    assert all(s["function"] == "step" and s["scope"] == "loss" for s in r["would_sync"])
    assert [s["would_sync"] for s in r["steps"]] == [7, 7]
    text = render_text(r)
    assert "No GPU activity was recorded" in text and "Would sync on a GPU" in text


def test_optimizer_step_counters_are_not_would_sync(tmp_path):
    """Adam-like optimizers call item() on their CPU step counters inside `Optimizer.step#...`:
    no sync on a GPU. The user's own loss.item() in the same step still counts."""
    from torch.profiler import ProfilerActivity, profile, schedule

    model = torch.nn.Linear(10, 2)
    opts = [torch.optim.Adam(model.parameters()), torch.optim.NAdam(model.parameters()),
            torch.optim.Adagrad(model.parameters())]
    x = torch.randn(8, 10)
    path = tmp_path / "opt.pt.trace.json"
    with profile(activities=[ProfilerActivity.CPU], with_stack=True,
                 schedule=schedule(wait=0, warmup=1, active=2, repeat=1),
                 on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(4):
            loss = model(x).sum()
            loss.backward()
            for opt in opts:
                opt.step()
            loss.item()
            prof.step()
    tr = load_trace(path)
    scopes = {tr.names[i] for iv in tr.scopes.values() for i in iv.names}
    assert any(s.startswith("Optimizer.step#Adam") for s in scopes)  # the scope the filter reads
    r = analyze(tr).report
    assert [(s["outer_op"], s["per_step"], s["scope"]) for s in r["would_sync"]] == [("aten::item", [1, 1], None)]
