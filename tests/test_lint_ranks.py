"""Rank-conditional code (syncscan.lint.ranks): findings under `if rank == 0:` and the like carry the
condition; the join matches them with the sites a multi-rank run measured on those ranks only."""

from __future__ import annotations

import json
import textwrap

import pytest

from syncscan.cli import main

LOOP = """
import os
import torch
import torch.distributed as dist

def train(model, loader, opt, rank, accelerator, trainer):
    for step, (x, y) in enumerate(loader):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        {body}
"""


def lint(tmp_path, capsys, body: str) -> list[dict]:
    path = tmp_path / "train.py"
    path.write_text(LOOP.format(body=textwrap.indent(textwrap.dedent(body), " " * 8).lstrip()))
    main(["lint", "--format", "json", "--no-cache", "--all", str(path)])
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("body,ranks,test", [
    ("if rank == 0:\n    print(loss.item())", "0", "rank == 0"),
    ("if 0 == rank:\n    print(loss.item())", "0", "0 == rank"),
    ("if dist.get_rank() == 0 and step % 10 == 0:\n    v = loss.item()", "0",
     "dist.get_rank() == 0 and step % 10 == 0"),
    ("if accelerator.is_main_process:\n    v = loss.item()", "0", "accelerator.is_main_process"),
    ("if trainer.is_global_zero:\n    v = loss.item()", "0", "trainer.is_global_zero"),
    ("if int(os.environ['RANK']) == 0:\n    v = loss.item()", "0", "int(os.environ['RANK']) == 0"),
    ("if os.environ.get('LOCAL_RANK') == 0:\n    v = loss.item()", "0", "os.environ.get('LOCAL_RANK') == 0"),
    ("if self_rank := rank:\n    v = loss.item()", "some", "self_rank := rank"),
    ("if rank != 0:\n    v = loss.item()", "not 0", "rank != 0"),
    ("if rank:\n    v = loss.item()", "not 0", "rank"),
    ("if rank == 0 or step == 5:\n    v = loss.item()", "some", "rank == 0 or step == 5"),
    ("if rank % 2:\n    v = loss.item()", "some", "rank % 2"),
    ("if accelerator.is_main_process:\n    pass\nelse:\n    v = loss.item()", "not 0",
     "not (accelerator.is_main_process)"),
    ("if not dist.get_rank() == 0:\n    pass\nelse:\n    v = loss.item()", "0", "dist.get_rank() == 0"),
    ("if not accelerator.is_main_process:\n    continue\nv = loss.item()", "0", "accelerator.is_main_process"),
    ("v = loss.item() if rank == 0 else None", "0", "rank == 0"),
    ("v = None if rank == 0 else loss.item()", "not 0", "not (rank == 0)"),
])
def test_a_finding_under_a_rank_condition_carries_it(tmp_path, capsys, body, ranks, test):
    (f,) = [f for f in lint(tmp_path, capsys, body) if f["code"] == "SYN101"]
    assert f["rank_condition"]["ranks"] == ranks
    assert f["rank_condition"]["test"] == test


@pytest.mark.parametrize("body", [
    "v = loss.item()",
    "if step % 10 == 0:\n    v = loss.item()",
    "if ranking == 0:\n    v = loss.item()",          # not a rank
    "if x.dim() == 0:\n    v = loss.item()",
])
def test_code_every_rank_runs_has_no_rank_condition(tmp_path, capsys, body):
    (f,) = [f for f in lint(tmp_path, capsys, body) if f["code"] == "SYN101"]
    assert "rank_condition" not in f


def test_the_innermost_condition_wins_and_the_text_output_says_it(tmp_path, capsys):
    path = tmp_path / "t.py"
    path.write_text(textwrap.dedent("""
        import torch
        from lightning.pytorch.utilities import rank_zero_only

        @rank_zero_only
        def log(loss):
            print(loss.item())

        def step(model, x, rank):
            loss = model(x).sum()
            loss.backward()
            if rank == 0:
                if rank != 0:
                    y = loss.item()
    """))
    main(["lint", "--format", "json", "--no-cache", "--all", str(path)])
    found = {f["line"]: f.get("rank_condition") for f in json.loads(capsys.readouterr().out)}
    assert found[7] == {"test": "@rank_zero_only", "ranks": "0", "line": 5}
    assert found[14]["ranks"] == "not 0" and found[14]["line"] == 13
    main(["lint", "--no-cache", "--all", str(path)])
    out = capsys.readouterr().out
    assert "SYN101 [cold, rank 0 only]" in out or "SYN101 [hot, rank 0 only]" in out
    assert "not on rank 0]" in out


def test_rank_conditions_split_the_source_once(monkeypatch):
    """ast.get_source_segment splits the whole file on every call: per rank condition that made a
    19 MB file quadratic (362 s). The text of each condition comes from lines split once."""
    import ast

    from syncscan.lint import ranks

    def whole_file_split(*a, **k):
        raise AssertionError("ast.get_source_segment called")

    monkeypatch.setattr(ast, "get_source_segment", whole_file_split)
    source = "import torch.distributed as dist\n" + "".join(
        f"def f{i}(x):\n    if dist.get_rank() == 0:\n        print(x.item())\n" for i in range(3))
    found = ranks.regions(ast.parse(source), source)
    assert [c.test for _, c in found] == ["dist.get_rank() == 0"] * 3
