"""The linter's recall on syncs that really happened in real model code (benchmarks/accuracy.py).

The reference is benchmarks/data/sync_sites.json, recorded on an H100 by
benchmarks/accuracy_collect.py. The recall asserted here is the figure reached when the
measurement was written (docs/accuracy.md) minus a small margin: a regression guard, not the
target (the target is 95%; docs/accuracy.md states the gap).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# the target of the issue (97.0% reached on 2026-11-24: docs/accuracy.md)
MIN_RECALL_DIRECT = 0.95
MIN_RECALL_WITH_REWRITE = 0.95


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def accuracy():
    return _load("syncscan_bench_accuracy", ROOT / "benchmarks" / "accuracy.py")


@pytest.fixture(scope="module")
def data(accuracy):
    return json.loads(accuracy.DATA.read_text())


@pytest.fixture(scope="module")
def measured(accuracy, data):
    try:
        roots = accuracy.ensure_sources(data["meta"], quiet=True)
    except (RuntimeError, OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"cannot fetch the measured package sources with pip (no index reachable?): {e}")
    return accuracy.measure(data, roots, false_flags=False)


def test_reference_data_is_complete(data):
    meta = data["meta"]
    assert meta["device"].startswith("NVIDIA") and meta["versions"]["torch"].startswith("2.")
    assert all(r["status"] == "ok" for r in data["runs"]), [r for r in data["runs"] if r["status"] != "ok"]
    models = {r["model"] for r in data["runs"]}
    for needed in ("hf.mask2former", "hf.deformable_detr", "hf.conditional_detr", "hf.switch_transformers",
                   "hf.whisper", "hf.clip", "tv.fasterrcnn_resnet50_fpn", "tv.deeplabv3_resnet50", "tv.r3d_18",
                   "ta.wav2vec2_base", "fixtures.masked_loss_naive"):
        assert needed in models
    assert {"train", "infer", "generate"} <= {r["mode"] for r in data["runs"]}
    for s in data["sites"]:
        assert s["count"] >= 1 and s["models"] and s["source"]


def test_recorded_lines_match_the_sources(measured):
    # every site's recorded source text is the line in the fetched wheel / the repo
    assert not measured["stale"], [(s["path"], s["line"]) for s in measured["stale"]]
    assert not measured["unresolved"], [(s["path"], s["line"]) for s in measured["unresolved"]]


def test_recall_does_not_regress(accuracy, measured):
    fig = accuracy.recall_figures(measured["rows"])
    assert fig["sites"] >= 200
    assert fig["recall"] >= MIN_RECALL_DIRECT, accuracy.report(measured, json.loads(accuracy.DATA.read_text()))
    assert fig["recall_with_rewrite"] >= MIN_RECALL_WITH_REWRITE


def test_fixture_sites_are_all_found(measured):
    """The seed workloads' naive loss: every line that synced on the GPU is flagged, with a rewrite."""
    rows = [r for r in measured["rows"] if r["site"]["path"] == "fixtures/masked_loss_naive.py"
            and r["category"] == "direct"]
    assert {r["site"]["line"] for r in rows} >= {58, 59, 61, 65}
    assert all(r["found"] and r["with_rewrite"] for r in rows), [r["site"]["source"] for r in rows if not r["found"]]


def test_expected_rule_uses_the_recorded_arguments(accuracy):
    def site(op, source="x"):
        return {"ops": {op: 1}, "source": source}
    assert accuracy.expected_rule(site("Tensor.__getitem__ [index: bool cuda tensor]")) == "SYN302"
    assert accuracy.expected_rule(site("Tensor.__getitem__ [index: int cpu tensor, int cpu tensor]")) == "SYN206"
    assert accuracy.expected_rule(site("Tensor.__setitem__ [index: int cuda tensor; value: int]")) == "SYN207"
    assert accuracy.expected_rule(site("torch.tensor [data: list of int]")) == "SYN202"
    assert accuracy.expected_rule(site("Tensor.to [from float cpu tensor]")) == "SYN204"
    assert accuracy.expected_rule(site("Tensor.__bool__", "x_0 = max(box[0], 0)")) == "SYN106"
    assert accuracy.expected_rule(site("Tensor.__bool__", "if labels.max() >= n:")) == "SYN104"
    assert accuracy.expected_rule(site("Tensor.view")) == "SYN108"
    # a line that also synced where the op recorder was not active (autograd's device thread): the named op
    assert accuracy.expected_rule({"ops": {"?": 77, "Tensor.to [from float cpu tensor]": 13}, "source": "x"}) == "SYN204"


def test_merge_round_trips_executed_lines(accuracy, tmp_path):
    raw = {"meta": {"versions": {"torch": "2.11.0", "python": "3.12.3"}, "date": "2026-11-22", "device": "x"},
           "models": [{"model": "m", "mode": "train", "status": "ok"}],
           "sites": [{"package": "repo", "path": "fixtures/a.py", "line": 3, "function": "f", "source": "x",
                      "torch_frames": [], "callers": [], "backward": False, "count": 2,
                      "models": {"m/train": 2}, "modes": ["train"], "ops": {"Tensor.item": 2}, "kinds": ["d"]}],
           "executed": {"fixtures/a.py": [1, 2, 3, 7, 9, 10]}, "unattributed": 0}
    p = tmp_path / "raw.json"
    p.write_text(json.dumps(raw))
    merged = accuracy.merge([str(p), str(p)], tmp_path / "out.json")
    assert merged["executed"]["fixtures/a.py"] == [[1, 3], [7, 7], [9, 10]]
    assert accuracy._unranges(merged["executed"]["fixtures/a.py"]) == {1, 2, 3, 7, 9, 10}
    assert merged["sites"][0]["count"] == 4 and merged["sites"][0]["models"] == {"m/train": 4}
    assert len(merged["runs"]) == 1


def test_collector_records_the_line_that_synced(tmp_path):
    """The recording path without a GPU: on a CPU the collector warns for a few ops as the debug mode
    would, and must attribute each to the fixture line that called it, with the op's name."""
    pytest.importorskip("torch")
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "accuracy_collect.py"), "--device", "cpu",
                        "--only", "fixtures.masked_loss_naive", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr[-2000:]
    raw = json.loads((tmp_path / "sync_raw.json").read_text())
    by_line = {(s["path"], s["line"]): s for s in raw["sites"]}
    nz = by_line[("fixtures/masked_loss_naive.py", 58)]
    assert set(nz["ops"]) == {"torch.nonzero"} and nz["source"].startswith("inds = torch.nonzero(")
    assert set(by_line[("fixtures/masked_loss_naive.py", 61)]["ops"]) == {"torch.unique"}
    executed = set(raw["executed"]["fixtures/masked_loss_naive.py"])
    assert {58, 59, 61, 65} <= executed


def test_sealed_aggregates_count_misses_without_naming_code():
    agg = _load("syncscan_bench_sealed", ROOT / "benchmarks" / "sealed_aggregates.py")

    def row(expected, found, ops, frames=(), category="direct"):
        return {"category": category, "found": found, "expected": expected,
                "site": {"ops": dict.fromkeys(ops, 1), "torch_frames": list(frames),
                         "path": "secret/lib.py", "line": 7, "source": "x[idx]"}}

    rows = [row("SYN206", False, ["Tensor.__getitem__ [index: tuple of int]"]),
            row("SYN206", False, ["Tensor.__getitem__ [index: tuple of int]"]),
            row("SYN206", True, ["Tensor.__getitem__ [index: list of int]"]),
            row("no rule (?)", False, ["?"]),
            row("no rule (?)", False, ["?"], ["torch/serialization.py:1004:save", "torch/serialization.py:1311:_save"]),
            row("SYN101", False, ["Tensor.item"], category="module")]
    got = agg.aggregates(rows)
    assert got["rule"] == {"SYN206": 2, "no rule (?)": 2}
    assert got["op"][("SYN206", "Tensor.__getitem__ [index: tuple of int]")] == 2
    assert got["unnamed op, nearest torch frames"] == {"(none)": 1, "save < _save": 1}
    printed = repr(got)
    assert "secret" not in printed and "x[idx]" not in printed  # counts only: no path, no source


def test_sealed_structure_abstracts_every_name(tmp_path):
    st = _load("syncscan_bench_structure", ROOT / "benchmarks" / "sealed_structure.py")
    src = ("import torch\n"
           "def secret_step(policy_net, obs):\n"
           "    dist = policy_net(obs)\n"
           "    act = dist.rsample()\n"
           "    if dist.log_prob(act).sum() > obs.secret_threshold:\n"
           "        return 'secret message'\n")
    path = tmp_path / "secret_lib.py"
    path.write_text(src)
    tree = __import__("ast").parse(src)
    probe = st._Kinds({5})
    from syncscan.lint.engine import lint_source
    lint_source(str(path), src, [probe], cross_file=True)
    got = st.structure(path, 5, probe.kinds, tree)
    assert got.startswith("If ") and ".log_prob(<L:Call:rsample|" in got and "<L:Call:|" in got and "<P|" in got
    assert "secret" not in got and "policy" not in got and "dist" not in got  # no identifier of the code
    assert st.structure(path, 6, probe.kinds, tree) == "return 's'"  # strings blanked
