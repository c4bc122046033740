"""The results cache (cache.py): sharded per file and keyed by the resolved path; a corrupt or
wrongly shaped cache file is ignored with one warning and rewritten; concurrent runs leave it
valid; what no run needs any more is evicted."""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from syncscan.cli import main
from syncscan.lint import cache as cache_mod
from syncscan.lint import runner

CODE = """\
import torch


def forward(x):
    return x.sum().item()
"""


@pytest.fixture
def tree(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(CODE)
    (tmp_path / "b.py").write_text(CODE.replace("forward", "loss_fn"))
    return tmp_path


@pytest.fixture
def linted(monkeypatch):
    calls = []
    real = runner.lint_source
    monkeypatch.setattr(runner, "lint_source", lambda path, *a, **k: calls.append(path) or real(path, *a, **k))
    return calls


def lint(capsys, *argv):
    rc = main(["lint", "--format", "json", *argv])
    out = capsys.readouterr()
    return rc, json.loads(out.out) if out.out.strip() else None, out.err


def shards(root: Path) -> list[Path]:
    return sorted(root.glob(f".syncscan_cache/{cache_mod.FORMAT}-*/files/*/*{cache_mod.SUFFIX}"))


def read_back(f: Path):
    return marshal.loads(f.read_bytes())


OTHER_PATH = {"path": "x", "config": "c", "hash": None, "stat": None, "summary": [{}], "result": None}


def test_relative_absolute_and_symlinked_paths_share_one_shard(capsys, tree, linted):
    lint(capsys, "a.py")
    os.symlink("a.py", "link.py")
    lint(capsys, str(tree / "a.py"))
    lint(capsys, "./a.py")
    lint(capsys, "link.py")
    assert linted == ["a.py"] and len(shards(tree)) == 1
    data = read_back(shards(tree)[0])
    assert data["path"] == os.path.realpath(tree / "a.py")


@pytest.mark.parametrize("garbage", [b"", b"\x00\xff garbage", b"[]", b'{"path": 1}',  # (the last two: json)
                                     marshal.dumps([]), marshal.dumps({"path": 1}), marshal.dumps({"a.py": 1}),
                                     marshal.dumps({**OTHER_PATH, "stat": [1, 2]}),
                                     marshal.dumps(OTHER_PATH)[:-3],  # truncated
                                     marshal.dumps(OTHER_PATH)])
def test_a_corrupt_or_misshapen_shard_is_ignored_once_and_rewritten(capsys, tree, linted, garbage):
    rc, first, _ = lint(capsys, "a.py")
    (shard,) = shards(tree)
    shard.write_bytes(garbage)
    linted.clear()
    rc2, again, err = lint(capsys, "a.py")
    assert (rc2, again) == (rc, first) and linted == ["a.py"]
    if garbage == marshal.dumps(OTHER_PATH):  # a valid shard of another path: simply not this one's
        assert err == ""
    else:
        assert err.count("\n") == 1 and err.startswith("syncscan: warning: ignored a corrupt cache file")
    assert read_back(shard)["path"] == os.path.realpath("a.py")  # rewritten, valid
    linted.clear()
    assert lint(capsys, "a.py") == (rc, first, "") and linted == []


def test_a_corrupt_project_index_or_graph_is_rebuilt(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helper.py").write_text("def helper(x):\n    return x.sum().item()\n")
    (tmp_path / "train.py").write_text("def train(loader, opt):\n    for x in loader:\n        helper(x)\n"
                                       "        opt.step()\n")
    rc, first, _ = lint(capsys, "--all", "helper.py")
    assert [f["context"] for f in first] == ["hot"]
    index = sorted(tmp_path.glob(f".syncscan_cache/{cache_mod.FORMAT}-*/projects/*{cache_mod.SUFFIX}"))
    assert len(index) == 2  # the index and its graph
    graph = next(f for f in index if f.name.endswith(".graph" + cache_mod.SUFFIX))
    (main_index,) = set(index) - {graph}
    good = read_back(main_index)
    assert good["reached"] and set(good["reached"].values()) <= {"step", "epoch"}
    for bad in (b"{", marshal.dumps([1, 2]), marshal.dumps({"root": 3}),
                marshal.dumps({**good, "reached": {g: "often" for g in good["reached"]}}),  # no such frequency
                marshal.dumps({**good, "files": {r: e[:4] for r, e in good["files"].items()}})):
        for f in index:
            f.write_bytes(bad)
        assert lint(capsys, "--all", "helper.py")[:2] == (rc, first)
        for f in index:
            assert isinstance(read_back(f), dict)
    # the graph alone, of another shape or from another run: the index's token no longer matches
    graph.write_bytes(marshal.dumps({"token": "x", "graph": {"edges": {}, "roots": {}}}))
    (tmp_path / "helper.py").write_text("def helper(x):\n    return x.max().item()\n")
    assert [f["context"] for f in lint(capsys, "--all", "helper.py")[1]] == ["hot"]


def test_old_format_and_other_engines_are_swept(tree, capsys):
    cache = tree / ".syncscan_cache"
    cache.mkdir()
    (cache / "lint-0123456789abcdef.json").write_text("{}")
    old_format = cache / "v2-0000000000000000"  # (json)
    other_engine = cache / f"{cache_mod.FORMAT}-0000000000000000"
    long_ago = time.time() - 7200
    for old in (old_format, other_engine):
        (old / "files" / "aa").mkdir(parents=True)
        (old / "files" / "aa" / "x.json").write_text("{}")
        for p in (old, old / "files", old / "files" / "aa"):
            os.utime(p, (long_ago, long_ago))
    lint(capsys, "a.py")
    assert not (cache / "lint-0123456789abcdef.json").exists() and not old_format.exists()
    assert not other_engine.exists()
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")


def test_unused_shards_are_evicted_and_indexed_ones_kept(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("")
    for n in ("kept", "gone", "old"):  # (a helper: its context comes from the project)
        (tmp_path / f"{n}.py").write_text(CODE.replace("forward", "helper"))
    lint(capsys, "kept.py")  # the project index lists all three; each has a shard
    assert len(shards(tmp_path)) == 3
    # a file the project no longer has: its shard goes with it at the next run that sees it gone
    (tmp_path / "gone.py").unlink()
    lint(capsys, "kept.py")
    assert len(shards(tmp_path)) == 2
    # a shard no index lists, unused for longer than MAX_AGE_DAYS: swept
    outside = tmp_path.parent / f"{tmp_path.name}-outside.py"
    outside.write_text(CODE)
    lint(capsys, str(outside))
    store = runner.open_store(runner.Config(), "kept.py")
    stale = Path(store.shard_file(os.path.realpath(outside)))
    assert stale.exists()
    long_ago = time.time() - (cache_mod.MAX_AGE_DAYS + 1) * 86400
    for f in shards(tmp_path):
        os.utime(f, (long_ago, long_ago))
    store.sweep()
    assert not stale.exists() and len(shards(tmp_path)) == 2  # the indexed ones stay


def test_concurrent_runs_leave_a_valid_cache(tmp_path):
    """Several runs at once on the same tree (an editor and pre-commit): every cache file stays whole
    and a later warm run reports what a cold one does."""
    (tmp_path / "pyproject.toml").write_text("")
    for i in range(30):
        (tmp_path / f"m{i}.py").write_text(CODE.replace("forward", f"forward_{i}") + f"\n\ndef g{i}(t):\n"
                                                                                       f"    return t.cpu()\n")
    cmd = [sys.executable, "-m", "syncscan", "lint", "--all", "--format", "json", "-q", "-j", "2"]
    procs = [subprocess.Popen(cmd + (["."] if i % 2 else [f"m{i}.py", f"m{i + 1}.py"]), cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for i in range(6)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 1, err
        assert b"warning" not in err
    written = list(tmp_path.glob(f".syncscan_cache/**/*{cache_mod.SUFFIX}"))
    assert len(written) >= 32  # 30 shards, the index and its graph
    for f in written:
        assert isinstance(read_back(f), dict)
    assert not list(tmp_path.glob(".syncscan_cache/**/.tmp-*"))
    warm = subprocess.run(cmd + ["."], cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    cold = subprocess.run(cmd + ["--no-cache", "."], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          check=False)
    assert warm.stdout == cold.stdout and json.loads(warm.stdout)


def test_a_folder_named_uses_its_own_projects_cache(tmp_path, monkeypatch, capsys, linted):
    """`lint .` in a project nested in another (a monorepo's package, a checkout inside a folder with
    its own pyproject.toml or .git) keeps its cache where `lint FILE` there looks: the folder's
    project, not its parent's (it went to the outer project, and every one-file lint after a
    whole-project one started cold)."""
    (tmp_path / "pyproject.toml").write_text("")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "pyproject.toml").write_text("")
    (inner / "a.py").write_text(CODE.replace("forward", "helper"))
    (inner / "b.py").write_text("from a import helper\n\n\ndef train(loader, opt):\n    for x in loader:\n"
                                "        helper(x)\n        opt.step()\n")
    monkeypatch.chdir(inner)
    rc, whole, _ = lint(capsys, ".")
    assert [f["context"] for f in whole] == ["hot"] and sorted(linted) == ["a.py", "b.py"]
    linted.clear()
    assert lint(capsys, "a.py")[:2] == (rc, whole) and linted == []  # nothing linted again
    assert (inner / ".syncscan_cache").is_dir() and not (tmp_path / ".syncscan_cache").exists()
