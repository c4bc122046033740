"""Scoring of the held-out set (benchmarks/accuracy.py --set heldout), on a tiny fixture: no network.

What the held-out set adds to the tuned set's scoring: only the held-out libraries and repositories
count (sites in a tuned library reached through them are listed apart, the harness is left out,
generated files are unresolved), repository sources are copied at the recorded commit, and a
baseline linter can be taken from a git revision.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import load_benchmark

ROOT = Path(__file__).resolve().parents[1]

MOD = """import torch


def step(x, helper):
    n = x.sum().item()
    y = helper(x)
    return n, y
"""


@pytest.fixture(scope="module")
def accuracy():
    return load_benchmark("accuracy")


def _site(pkg, path, line, source, op="Tensor.item", torch_frames=()):
    return {"package": pkg, "path": path, "line": line, "function": "step", "source": source, "count": 1,
            "models": {"toy.m/train": 1}, "modes": ["train"], "ops": {op: 1}, "kinds": ["debug_mode"],
            "torch_frames": list(torch_frames), "callers": [], "backward": False}


def test_heldout_counts_only_its_own_packages(accuracy, tmp_path):
    src = tmp_path / "src"
    (src / "toyrepo").mkdir(parents=True)
    (src / "toyrepo" / "mod.py").write_text(MOD)
    (src / "transformers").mkdir()
    (src / "transformers" / "lib.py").write_text("import torch\n\n\ndef f(x):\n    return x.sum().item()\n")
    data = {
        "meta": {"set": "heldout", "versions": {"torch": "2.11.0", "python": "3.12.3"}, "device": "NVIDIA H100",
                 "date": "2026-11-25", "repos": {"toyrepo": {"github": "me/toyrepo", "commit": "a" * 40}}},
        "runs": [{"model": "toy.m", "mode": "train", "status": "ok"}],
        "sites": [
            _site("toyrepo", "toyrepo/mod.py", 5, "n = x.sum().item()"),                      # found
            _site("toyrepo", "toyrepo/mod.py", 6, "y = helper(x)", op="Tensor.nonzero"),      # missed
            _site("transformers", "transformers/lib.py", 5, "return x.sum().item()"),         # apart
            _site("driver", "benchmarks/heldout_collect.py", 10, "loss.backward()"),          # the harness
            _site("other", "/tmp/torch_geometric_propagate_x.py", 3, "out = x[mask]"),        # generated
        ],
        "executed": {"toyrepo/mod.py": [[4, 7]], "transformers/lib.py": [[4, 5]]},
    }
    assert accuracy.counted_packages(data) >= {"toyrepo", "torchdiffeq", "kornia"}
    assert "transformers" not in accuracy.counted_packages(data)
    assert dict(accuracy.repo_files(data)) == {"toyrepo": {"mod.py"}}
    res = accuracy.measure(data, {"toyrepo": src, "transformers": src}, false_flags=True)
    fig = accuracy.recall_figures(res["rows"])
    assert (fig["sites"], fig["found"]) == (2, 1)
    assert [r["site"]["line"] for r in res["rows"] if not r["found"]] == [6]
    assert [s["package"] for s in res["apart"]] == ["transformers"]
    assert [s["path"] for s in res["unresolved"]] == ["/tmp/torch_geometric_propagate_x.py"]
    # false flags are judged in the counted packages' files only
    judged = res["false_flags"]["confirmed"] + res["false_flags"]["flags"] + res["false_flags"]["unexecuted"]
    assert judged and {Path(f["path"]).parent.name for f in judged} == {"toyrepo"}
    text = accuracy.report(res, data)
    assert "not counted): 1 (transformers 1)" in text and "repositories me/toyrepo@aaaaaaaaaa" in text
    # the tuned set counts every package, as before
    tuned = dict(data, meta={**data["meta"], "set": None})
    assert accuracy.counted_packages(tuned) is None


def test_copy_repo_takes_the_recorded_commit(accuracy, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()

    def git(*a):
        return subprocess.run(["git", *a], cwd=work, check=True, capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    git("config", "user.email", "t@t")
    git("config", "user.name", "t")
    (work / "train.py").write_text("old = 1\n")
    (work / "other.py").write_text("x = 1\n")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    first = git("rev-parse", "HEAD")
    (work / "train.py").write_text("new = 2\n")
    git("commit", "-q", "-am", "two")
    monkeypatch.setattr(accuracy, "_mirror", lambda owner_name: work / ".git")
    dest = accuracy.copy_repo("me/toy", first, ["train.py"], tmp_path / "out" / "toy")
    assert (dest / "train.py").read_text() == "old = 1\n" and not (dest / "other.py").exists()
    with pytest.raises(RuntimeError, match="cannot copy me/toy@"):
        accuracy.copy_repo("me/toy", "f" * 40, ["train.py"], tmp_path / "out2" / "toy")
    assert not (tmp_path / "out2" / "toy").exists()


def test_baseline_linter_from_a_revision(accuracy, tmp_path):
    """--linter REV lints with that revision's syncscan and rules, not the working tree's."""
    f = tmp_path / "loop.py"
    f.write_text("import torch\n\n\ndef train(model, loader, opt):\n    for x in loader:\n"
                 "        loss = model(x).mean()\n        loss.backward()\n        opt.step()\n"
                 "        print(loss.item())\n")
    try:
        linter = accuracy.linter_at("HEAD")
    except (RuntimeError, subprocess.CalledProcessError) as e:  # not a git checkout (an sdist)
        pytest.skip(f"no git history: {e}")
    assert (linter / "syncscan" / "cli.py").is_file()
    # the copy's own rules are the ones loaded (not the working tree's, through the installed package)
    r = subprocess.run([sys.executable, "-c", "from syncscan.lint.registry import rules_package as r; print(r().__file__)"],
                       cwd=linter, capture_output=True, text=True, check=False)
    assert r.returncode == 0 and Path(r.stdout.strip()).resolve().is_relative_to(linter.resolve()), r.stdout + r.stderr
    at_head = accuracy.lint([f], linter)
    assert [(x["line"], x["code"]) for x in at_head] == [(x["line"], x["code"]) for x in accuracy.lint([f])]
    assert any(x["code"] == "SYN101" for x in at_head)
    with pytest.raises(RuntimeError, match="not a commit"):
        accuracy.linter_at("no-such-revision-xyz")


HELDOUT_BASELINE = 0.70  # 71.0% (193/272) with the linter at 706269d, before any change for this set


def test_heldout_reference_data_is_complete(accuracy):
    data = json.loads(accuracy.HELDOUT_DATA.read_text())
    meta = data["meta"]
    assert meta["set"] == "heldout" and meta["device"].startswith("NVIDIA")
    assert all(r["status"] == "ok" for r in data["runs"]), [r for r in data["runs"] if r["status"] != "ok"]
    assert {r["model"].split(".")[0] for r in data["runs"]} >= {
        "torchdiffeq", "pyg", "gpytorch", "botorch", "torchmetrics", "lightning", "peft", "st", "kornia", "monai",
        "diffusers", "smp", "nanogpt", "examples", "yolox"}
    assert all(len(r["commit"]) == 40 for r in meta["repos"].values())
    # no package of the tuned set is counted
    assert not set(accuracy.PACKAGES) & accuracy.counted_packages(data)


@pytest.mark.slow
def test_heldout_recall_does_not_regress(accuracy):
    """Lints the held-out sites' files at their recorded versions (pip and the repositories' sources
    needed; skipped without them) and keeps the recall at or above the baseline published in
    docs/accuracy.md. Not the target (92%): a guard while the target is worked on."""
    data = json.loads(accuracy.HELDOUT_DATA.read_text())
    packages = accuracy.PACKAGES + accuracy.HELDOUT_PACKAGES
    try:
        roots = accuracy.ensure_sources(data["meta"], quiet=True, packages=packages,
                                        repo_files=accuracy.repo_files(data))
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"cannot fetch the held-out sources: {e}")
    res = accuracy.measure(data, roots, false_flags=False)
    assert not res["stale"], [(s["path"], s["line"]) for s in res["stale"]]
    fig = accuracy.recall_figures(res["rows"])
    assert fig["sites"] >= 250 and fig["recall"] >= HELDOUT_BASELINE, fig
