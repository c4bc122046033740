"""The hand-label scorer (benchmarks/labels.py): joining findings to labels, precision and rewrite
figures, per-step recall, on a tiny fixture (no network)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import load_benchmark

ROOT = Path(__file__).resolve().parents[1]

TRAIN = """import torch


def train(model, loader, opt, device):
    for x in loader:
        x = x.to(device)
        loss = model(x).mean()
        loss.backward()
        opt.step()
        print(loss.item())
        print(loss.item())
"""


@pytest.fixture(scope="module")
def labels():
    return load_benchmark("labels")


def _f(path, line, code, source, context="hot", suggestion="s", repo="toy"):
    return {"repo": repo, "path": path, "line": line, "code": code, "source": source, "context": context,
            "suggestion": suggestion}


def _l(path, code, source, verdict=True, context="hot", occurrence=1, rewrite=None, suggestion="s", repo="toy"):
    x = {"repo": repo, "path": path, "code": code, "source": source, "occurrence": occurrence, "verdict": verdict,
         "reason": "r", "context": context, "suggestion": suggestion}
    if rewrite:
        x.update(rewrite=rewrite, rewrite_reason="rr")
    return x


def test_join_keys_on_text_and_occurrence_not_line(labels):
    # the same line text twice in a file: the first and second occurrence are told apart, and a finding
    # that moved to another line (an edit above it) keeps its label
    findings = [_f("a.py", 12, "SYN101", "print(loss.item())"), _f("a.py", 10, "SYN101", "print(loss.item())"),
                _f("a.py", 5, "SYN204", "x = x.to(device)"), _f("b.py", 1, "SYN105", "print(t)")]
    labs = [_l("a.py", "SYN101", "print(loss.item())", occurrence=1, context="hot"),
            _l("a.py", "SYN101", "print(loss.item())", occurrence=2, verdict=False, context="cold"),
            _l("a.py", "SYN204", "x = x.to(device)"),
            _l("c.py", "SYN101", "gone()")]
    j = labels.join(findings, labs)
    by_line = {f["line"]: x for f, x in j["pairs"]}
    assert by_line[10]["occurrence"] == 1 and by_line[12]["occurrence"] == 2 and by_line[5]["code"] == "SYN204"
    assert [f["path"] for f in j["unlabelled"]] == ["b.py"]
    assert [x["path"] for x in j["gone"]] == ["c.py"]


def test_score_precision_context_and_rewrites(labels):
    findings = [_f("a.py", 1, "SYN101", "a.item()"), _f("a.py", 2, "SYN101", "b.item()"),
                _f("a.py", 3, "SYN201", "c.cpu()", context="cold"), _f("a.py", 4, "SYN104", "if d:"),
                _f("a.py", 5, "SYN101", "e.item()", suggestion="new text")]
    labs = [_l("a.py", "SYN101", "a.item()", rewrite="right"),
            _l("a.py", "SYN101", "b.item()", context="epoch"),
            _l("a.py", "SYN201", "c.cpu()", verdict=False, context="cold"),
            _l("a.py", "SYN104", "if d:", rewrite="wrong"),
            _l("a.py", "SYN101", "e.item()", rewrite="right", suggestion="old text")]
    res = labels.score(labels.join(findings, labs))
    assert (res["precision_all"]["true"], res["precision_all"]["n"]) == (4, 5)
    assert (res["precision_hot"]["true"], res["precision_hot"]["n"]) == (4, 4)
    assert (res["precision_cold"]["true"], res["precision_cold"]["n"]) == (0, 1)
    assert res["hot_and_per_step"]["true"] == 3  # b.item() is true but runs once per epoch
    # the changed suggestion is not counted: it must be judged again
    assert (res["rewrite"]["true"], res["rewrite"]["n"], res["rewrite_changed"]) == (1, 2, 1)
    assert res["context"] == {"epoch->hot": 1, "hot->hot": 3}
    assert res["per_code"]["SYN201"] == {"all": 1, "true": 0, "hot": 0, "hot_true": 0}
    assert [f["line"] for f, _ in res["false"]] == [3]


def test_hot_findings_of_low_confidence_are_not_the_default_output(labels):
    low = {**_f("a.py", 2, "SYN104", "if n:"), "confidence": "low"}
    res = labels.score(labels.join([_f("a.py", 1, "SYN101", "a.item()"), low],
                                   [_l("a.py", "SYN101", "a.item()"), _l("a.py", "SYN104", "if n:", verdict=False)]))
    assert (res["precision_hot"]["true"], res["precision_hot"]["n"]) == (1, 1)
    assert (res["precision_hot_low"]["true"], res["precision_hot_low"]["n"]) == (0, 1)
    assert (res["precision_cold"]["true"], res["precision_cold"]["n"]) == (0, 1)


def test_recall_of_per_step_syncs(labels, tmp_path):
    (tmp_path / "toy").mkdir()
    (tmp_path / "toy" / "train.py").write_text(TRAIN)
    notes = [{"repo": "toy", "path": "train.py", "source": "x = x.to(device)", "frequency": "step", "reason": "r"},
             {"repo": "toy", "path": "train.py", "source": "print(loss.item())", "occurrence": 2,
              "frequency": "step", "reason": "r"},
             {"repo": "toy", "path": "train.py", "source": "opt.step()", "frequency": "step", "reason": "r"}]
    findings = [_f("train.py", 11, "SYN101", "print(loss.item())"),
                _f("train.py", 6, "SYN204", "x = x.to(device)", context="cold")]
    rec = labels.recall(findings, notes, {"toy": tmp_path / "toy"})
    assert [(r["line"], r["found"], r["found_hot"]) for r in rec["rows"]] == [(6, True, False), (11, True, True),
                                                                               (9, False, False)]
    assert rec["per"]["all"] == {"syncs": 3, "found_hot": 1, "found": 2}
    with pytest.raises(ValueError, match="stale"):
        labels.locate({"path": "train.py", "source": "print(loss.item())", "occurrence": 3}, tmp_path / "toy")


def test_report_without_recall_notes(labels):
    # a repository just added to the scope has findings but no per-step notes yet: the report lists them
    findings = [_f("a.py", 1, "SYN101", "a.item()")]
    joined = labels.join(findings, [])
    rec = labels.recall(findings, [], {})
    text = labels.report(labels.score(joined), rec, joined, {"toy": {}})
    assert "in the default output: 0/0" in text and "`toy/a.py:1` SYN101" in text


def test_findings_carry_relative_paths_and_line_text(labels, tmp_path):
    """The real linter on a tiny repository: findings are keyed the way the labels are."""
    root = tmp_path / "src" / "toy"
    root.mkdir(parents=True)
    (root / "train.py").write_text(TRAIN)
    found = labels.findings_of({"toy": {"files": ["train.py"]}}, {"toy": root})
    items = [(f["path"], f["line"], f["code"], f["source"]) for f in found if f["code"] == "SYN101"]
    assert items == [("train.py", 10, "SYN101", "print(loss.item())"), ("train.py", 11, "SYN101", "print(loss.item())")]


def test_malformed_label_file_names_the_line(labels, tmp_path):
    (tmp_path / "repos.json").write_text("{}")
    (tmp_path / "precision.jsonl").write_text('{"repo": "x"}\n{not json\n')
    (tmp_path / "recall.jsonl").write_text("")
    with pytest.raises(ValueError, match=r"precision.jsonl:2"):
        labels.load(tmp_path)
    assert labels.main(["--data", str(tmp_path)]) == 2


def test_committed_labels_are_complete():
    """Every label names a repository in scope, has a verdict, a reason and a context, and a rewrite
    verdict only with its reason; enough of them for the figures docs/accuracy.md quotes."""
    data = ROOT / "benchmarks" / "data" / "labels"
    repos = json.loads((data / "repos.json").read_text())
    labs = [json.loads(x) for x in (data / "precision.jsonl").read_text().splitlines() if x.strip()]
    notes = [json.loads(x) for x in (data / "recall.jsonl").read_text().splitlines() if x.strip()]
    assert len(repos) >= 8 and len(labs) >= 150
    assert sum(x["verdict"] and "rewrite" in x for x in labs) >= 50
    for x in labs:
        assert x["repo"] in repos and x["path"] in repos[x["repo"]]["files"], x
        assert isinstance(x["verdict"], bool) and x["reason"] and x["context"] in ("hot", "epoch", "cold"), x
        assert ("rewrite" not in x) or (x["rewrite"] in ("right", "wrong") and x["rewrite_reason"]), x
    keys = [(x["repo"], x["path"], x["code"], x["source"], x["occurrence"]) for x in labs]
    assert len(keys) == len(set(keys))
    assert all(n["repo"] in repos and n["path"] in repos[n["repo"]]["files"] for n in notes)
