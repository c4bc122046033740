"""Lint knows what torch.compile traces: findings in compiled code carry `compile` (the effect,
why, the compile-specific options, what keeps CUDA graphs off), null elsewhere."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from syncscan.lint.config import Config
from syncscan.lint.runner import lint_paths

MODEL = """
import torch
import torch.nn as nn


class Head(nn.Module):
    def forward(self, x):
        idx = torch.nonzero(x > 0)
        return x.sum() + idx.shape[0]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.head = Head()

    def forward(self, x):
        y = self.lin(x)
        scale = y.abs().max().item()
        return self.head(y / scale)


def helper(x):
    n = x.sum().item()
    return torch.nonzero(x > n)
"""

TRAIN = """
import torch
from model import Net, helper

model = Net()
cmodel = torch.compile(model, mode="reduce-overhead")
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    loss = cmodel(torch.randn(16, 8))
    loss.backward()
    opt.step()
print(helper(torch.randn(4)))
"""


def lint_tree(tmp_path: Path, files: dict[str, str], use_cache: bool = False) -> list:
    for name, text in files.items():
        path, text = tmp_path / name, textwrap.dedent(text).lstrip("\n")
        if not path.exists() or path.read_text() != text:  # (a rewrite is a change to the files that import it)
            path.write_text(text)
    run = lint_paths([str(tmp_path)], Config(root=tmp_path), use_cache=use_cache, jobs=1)
    assert not run.errors, run.errors
    return sorted(run.findings, key=lambda f: (Path(f.path).name, f.line))


def by_line(findings, name: str) -> dict[int, object]:
    return {f.line: f for f in findings if Path(f.path).name == name}


def test_compiled_forward_is_marked_and_the_helper_is_not(tmp_path):
    found = by_line(lint_tree(tmp_path, {"model.py": MODEL, "train.py": TRAIN}), "model.py")
    item, nonzero = found[19], found[7]  # Net.forward's .item(), Head.forward's nonzero (called from it)
    assert (item.code, nonzero.code) == ("SYN101", "SYN301")
    assert item.compile["effect"] == "graph-break" and item.compile["graph_break"] is True
    assert any("capture_scalar_outputs" in o for o in item.compile["options"])
    assert any("torch._check" in o for o in item.compile["options"])
    assert nonzero.compile["effect"] == "dynamic-shape" and nonzero.compile["graph_break"] is True
    assert any("nonzero_static" in o for o in nonzero.compile["options"])
    assert item.compile["compiled_by"].endswith('train.py:5 torch.compile(model, mode="reduce-overhead")')
    helper = [f for f in found.values() if f.function.endswith("::helper")]
    assert {f.code for f in helper} == {"SYN101", "SYN301"} and all(f.compile is None for f in helper)


def test_without_torch_compile_nothing_is_marked(tmp_path):
    found = lint_tree(tmp_path, {"model.py": MODEL, "train.py": TRAIN.replace("torch.compile(model, "
                                                                                  'mode="reduce-overhead")', "model")})
    assert found and all(f.compile is None for f in found)


def test_decorators_methods_and_disable(tmp_path):
    found = by_line(lint_tree(tmp_path, {"m.py": """
        import torch

        @torch.compile
        def a(x):
            return x[x > 0].sum()

        @torch.compile(fullgraph=False)
        def b(x: torch.Tensor):
            if x.sum() > 0:
                return x
            return -x

        @torch.compiler.disable
        def c(x):
            return torch.unique(x)

        @torch.compile
        def d(x):
            return c(x) + x.max().item()

        def plain(x):
            return torch.unique(x)

        class Trainer:
            def __init__(self):
                self.step_fn = torch.compile(self._step)

            def _step(self, x):
                return torch.unique(x)
    """}), "m.py")
    assert found[5].compile["effect"] == "dynamic-shape"  # x[x > 0] in @torch.compile
    assert found[9].compile["effect"] == "graph-break"  # if on a tensor in @torch.compile(...)
    assert found[15].compile is None  # torch.compiler.disable: not traced, even when called from d
    assert found[19].compile["effect"] == "graph-break"
    assert found[22].compile is None  # never compiled
    assert found[29].compile["compiled_by"].endswith(":26 torch.compile(self._step)")


def test_closure_over_module_objects_and_input_writes(tmp_path):
    """The fixture's pattern: a local function calling a model and a loss object, compiled."""
    found = by_line(lint_tree(tmp_path, {"m.py": """
        import torch
        import torch.nn as nn

        class Loss(nn.Module):
            def forward(self, pred, target):
                inds = torch.nonzero(target == 9, as_tuple=True)
                target[inds] = -1
                return pred.sum()

        def make_step():
            loss_fn = Loss()

            def model_and_loss(pred, target):
                return loss_fn(pred, target)

            return torch.compile(model_and_loss)
    """}), "m.py")
    assert found[6].compile["effect"] == "dynamic-shape"
    write = found[7]  # target[inds] = -1: writes into the input `target`
    assert write.code == "SYN207" and write.compile["effect"] == "cudagraph-skip"
    assert "`target`" in write.compile["cudagraphs"] and "mutated inputs" in write.compile["cudagraphs"]
    assert write.compile["graph_break"] is False


def test_aliases_of_module_objects(tmp_path):
    """The fixtures' --compile: `net, criterion = model, loss_fn`, a closure over the aliases compiled."""
    found = by_line(lint_tree(tmp_path, {"m.py": """
        import torch
        import torch.nn as nn

        class Loss(nn.Module):
            def forward(self, pred, target):
                return pred[target > 0].sum()

        def make_step(compile_kw=None):
            loss_fn = Loss()

            def step(pred, target):
                return loss_fn(pred, target)

            if compile_kw is not None:
                criterion = loss_fn
                net, crit = nn.Identity(), criterion

                def model_and_loss(pred, target):
                    return crit(net(pred), target)

                loss_fn = torch.compile(model_and_loss, **compile_kw)
            return step
    """}), "m.py")
    assert found[6].compile["compiled_by"].endswith(":21 torch.compile(model_and_loss, **compile_kw)")


def test_model_compile_method_and_module_lists(tmp_path):
    found = by_line(lint_tree(tmp_path, {"m.py": """
        import re
        import torch
        import torch.nn as nn

        class Block(nn.Module):
            def forward(self, x):
                return x * x.sum().item()

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([Block() for _ in range(2)])

            def forward(self, x):
                for b in self.blocks:
                    x = b(x)
                return x

        class Other(nn.Module):
            def forward(self, x):
                return x * x.sum().item()

        pattern = re.compile("x")
        net = Net().to("cpu")
        net.compile()
        print(Other()(torch.ones(2)))
    """}), "m.py")
    assert found[7].compile is not None and found[7].compile["compiled_by"].endswith(":25 net.compile()")
    assert found[21].compile is None  # Other is never compiled, and re.compile is not torch's


def test_json_and_text_output(tmp_path, capsys, monkeypatch):
    from syncscan.cli import main

    (tmp_path / "model.py").write_text(MODEL.lstrip("\n"))
    (tmp_path / "train.py").write_text(TRAIN.lstrip("\n"))
    monkeypatch.chdir(tmp_path)
    assert main(["lint", "--no-cache", "--all", "--format", "json", "."]) == 1
    data = json.loads(capsys.readouterr().out)
    assert {f["line"] for f in data if f["compile"]} == {7, 19}
    assert all("compile" in f for f in data)
    assert main(["lint", "--no-cache", "model.py", "train.py"]) == 1
    out = capsys.readouterr().out
    assert "SYN101 [hot, compiled]" in out
    assert "torch.compile (train.py:5" in out and "graph break: a host read" in out
    assert "compile option: `torch._dynamo.config.capture_scalar_outputs = True`" in out
    assert main(["lint", "--no-cache", "--format", "github", "model.py", "train.py"]) == 1
    assert "Under torch.compile: graph break." in capsys.readouterr().out
    assert main(["lint", "--no-cache", "--format", "gitlab", "model.py", "train.py"]) == 1
    assert "Under torch.compile: data-dependent shape" in capsys.readouterr().out


@pytest.mark.parametrize("use_cache", [False, True])
def test_cached_results_keep_what_is_compiled(tmp_path, use_cache):
    files = {"model.py": MODEL, "train.py": TRAIN}
    first = lint_tree(tmp_path, files, use_cache=use_cache)
    again = lint_tree(tmp_path, files, use_cache=use_cache)  # from the cache when use_cache
    assert [f.compile for f in first] == [f.compile for f in again]
    assert sum(f.compile is not None for f in again) == 2


def test_a_warm_run_reads_the_call_graphs_from_the_cache_instead_of_walking_again(tmp_path, monkeypatch):
    from syncscan.lint import runner

    files = {"model.py": MODEL, "train.py": TRAIN}
    first = lint_tree(tmp_path, files, use_cache=True)
    walks = []
    real = runner.lint_source
    monkeypatch.setattr(runner, "lint_source", lambda *a, **k: walks.append(a[0]) or real(*a, **k))
    again = lint_tree(tmp_path, files, use_cache=True)
    assert walks == []  # every file's whole graph came from its cache entry
    assert [f.compile for f in again] == [f.compile for f in first] and sum(f.compile is not None for f in again) == 2


def test_a_run_without_the_cache_walks_each_file_once(tmp_path, monkeypatch):
    from syncscan.lint import runner

    files = {"model.py": MODEL, "train.py": TRAIN, "other.py": "import torch\n\ndef f(t):\n    return t.item()\n"}
    cached = lint_tree(tmp_path, files, use_cache=True)
    walks = []
    real = runner.lint_source
    monkeypatch.setattr(runner, "lint_source", lambda *a, **k: walks.append(a[0]) or real(*a, **k))
    cold = lint_tree(tmp_path, files, use_cache=False)
    # each file's whole graph comes back with its findings: none is walked again for torch.compile's reach
    assert sorted(Path(p).name for p in walks) == sorted(files)
    assert [f.compile for f in cold] == [f.compile for f in cached] and sum(f.compile is not None for f in cold) == 2


def test_an_unchanged_warm_run_reuses_what_the_last_run_settled(tmp_path, monkeypatch):
    from syncscan.lint import compiled

    files = {"model.py": MODEL, "train.py": TRAIN}
    first = lint_tree(tmp_path, files, use_cache=True)
    settled = []
    real = compiled.settle
    monkeypatch.setattr(compiled, "settle", lambda graphs: settled.append(1) or real(graphs))
    again = lint_tree(tmp_path, files, use_cache=True)
    assert settled == [] and [f.compile for f in again] == [f.compile for f in first]
    changed = lint_tree(tmp_path, {"train.py": TRAIN + "x = 1\n"}, use_cache=True)  # a file changed: settled again
    assert settled == [1] and [f.compile for f in changed] == [f.compile for f in first]
