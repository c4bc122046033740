"""Static and runtime together (syncscan.join): runtime sync sites matched to lint findings.

End to end on a recorded H100 trace whose syncs are given the lines of fixtures/masked_loss_naive.py
(the same loss as the recorded run, in the order the sync-debug hook would record them), and as
units on small reports whose sites point at a temporary source file."""

from __future__ import annotations

import json
import textwrap

import pytest

from syncscan.cli import main
from syncscan.join import join
from syncscan.present.join_text import render_join
from syncscan.sources import lint_and_join, resolve_source, source_files
from syncscan.lint.config import Config
from syncscan.lint.runner import lint_paths

from conftest import FIXTURES

NAIVE = FIXTURES / "masked_loss_naive.py"


def _line(path, text: str) -> int:
    """1-based number of the first line of `path` holding `text` (so the tests follow edits)."""
    for i, line in enumerate(path.read_text().splitlines(), start=1):
        if text in line:
            return i
    raise AssertionError(f"{text!r} not in {path}")


def naive_sites(tmp_path):
    """The sites the sync-debug hook records for the naive loss, per step, in host order: nonzero,
    the index assignment, unique, the two masks, and the masks' backward (on `loss.backward()`)."""
    lines = [_line(NAIVE, "torch.nonzero("), _line(NAIVE, "target[inds] ="), _line(NAIVE, "torch.unique("),
             _line(NAIVE, "pred[mask]"), _line(NAIVE, "pred[mask]"), _line(NAIVE, "loss.backward()")]
    sites = [{"op": None, "file": str(NAIVE), "line": ln, "function": "f", "step": step, "order": i}
             for step in (2, 3, 4) for i, ln in enumerate(lines)]
    path = tmp_path / "sites.json"
    path.write_text(json.dumps(sites))
    return path


def analyze_json(traces_dir, tmp_path, *extra):
    trace = next((traces_dir / "masked_loss_v0_b16_64px").glob("*.pt.trace.json.gz"))
    out = tmp_path / "an.json"
    assert main(["analyze", str(trace), "--format", "json", "-o", str(out), *map(str, extra)]) == 0
    return json.loads(out.read_text())


def test_recorded_trace_every_sync_confirmed_by_lint(traces_dir, tmp_path):
    report = analyze_json(traces_dir, tmp_path, "--source-sites", naive_sites(tmp_path))
    j = report["join"]
    assert j["measured"] is True
    assert [NAIVE.samefile(p) for p in j["linted"]] == [True]
    # the fixture has no runtime sync lint misses, and every hot finding synced
    assert j["missed_by_lint"] == [] and j["not_observed"] == []
    assert len(j["confirmed"]) == len(report["syncs"]) == 5
    by_op = {(c["op"], c["outer_op"]): c for c in j["confirmed"]}
    codes = {k: c["lint_codes"] for k, c in by_op.items()}
    assert codes == {("aten::nonzero", "aten::nonzero_numpy"): ["SYN301"],
                     ("aten::copy_", "aten::index_put_"): ["SYN207"],
                     ("aten::_local_scalar_dense", "aten::_unique2"): ["SYN305"],
                     ("aten::nonzero", "aten::index"): ["SYN306"],
                     ("aten::nonzero", "IndexBackward0"): ["SYN306"]}
    # the backward sync sits on `loss.backward()`: it is matched through its forward op
    back = by_op[("aten::nonzero", "IndexBackward0")]
    assert back["line"] == _line(NAIVE, "loss.backward()") and back["match"] == "forward"
    assert {c["match"] for c in j["confirmed"] if c is not back} == {"statement"}
    # the cost is the site's measured GPU idle per profiled step; the rewrite is lint's
    n = len(report["steps"])
    for c, site in zip(j["confirmed"], report["syncs"]):
        assert c["cost"]["gpu_idle_ms_per_step"] == pytest.approx(site["gpu_idle_ms"] / n, abs=1e-4)
        assert c["rewrite"] == c["findings"][0]["suggestion"] and c["rewrite"]


def test_recorded_trace_text_has_the_join_section(traces_dir, tmp_path, capsys):
    trace = next((traces_dir / "masked_loss_v0_b16_64px").glob("*.pt.trace.json.gz"))
    assert main(["analyze", str(trace), "--source-sites", str(naive_sites(tmp_path))]) == 0
    out = capsys.readouterr().out
    section = out[out.index("Lint and runtime together"):]
    assert "confirmed by lint: 5" in section and "missed by lint: none" in section
    assert "not observed: none" in section
    assert f"masked_loss_naive.py:{_line(NAIVE, 'torch.nonzero(')} SYN301 nonzero" in section
    assert "rewrite: `target.masked_fill_(" in section


def test_no_join_when_the_trace_points_at_files_that_are_not_here(traces_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    report = analyze_json(traces_dir, tmp_path)  # its sites name seed_masked_loss.py, not here
    assert "join" not in report
    (tmp_path / "seed_masked_loss.py").write_text(NAIVE.read_text())
    # now a file of that name is here (found relative to the current folder), but no function of
    # it starts at the trace's def lines: another version of the file, so nothing is claimed
    report = analyze_json(traces_dir, tmp_path)
    j = report["join"]
    assert j["linted"] and len(j["stale"]) == len(report["syncs"])
    assert j["confirmed"] == j["missed_by_lint"] == j["not_observed"] == []
    assert "join" not in analyze_json(traces_dir, tmp_path, "--no-lint")


# ------------------------------------------------------------------------ units

SOURCE = """
import torch

def loss_fn(pred, target, mask):
    idx = torch.nonzero(mask)
    total = pred[mask].sum()
    n = idx.shape[0]
    return total / n

def train_step(model, x, y, opt):
    out = model(x)
    loss = loss_fn(out, y, y > 0)
    loss.backward()
    opt.step()
    if loss.item() > 10:
        print("big")
    return loss
"""


@pytest.fixture
def src(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(SOURCE).lstrip("\n"))
    return path


def _findings(path):
    return lint_paths([str(path)], Config(), use_cache=False, jobs=1).findings


def _site(path, text, *, op, rule, idle=0.3, count=2, **kw):
    return {"file": path.name, "line": _line(path, text), "op": op, "outer_op": kw.pop("outer_op", op),
            "rule": rule, "count": count, "per_step": [count // 2] * 2, "gpu_idle_ms": idle,
            "cpu_blocked_ms": idle * 2, "line_kind": "call", "phase": "forward", "scope": None, **kw}


def test_statement_match_missed_and_not_observed(src):
    findings = _findings(src)
    assert {f.code for f in findings} >= {"SYN301", "SYN302", "SYN101"}
    report = {"gpu_activity": True, "steps": [{}, {}], "syncs": [
        _site(src, "pred[mask]", op="aten::nonzero", outer_op="aten::index", rule="SYN302", idle=0.4),
        _site(src, "n = idx.shape[0]", op="aten::_local_scalar_dense", rule="SYN101", idle=0.1),
        {"op": "aten::item", "rule": "SYN101", "count": 2, "gpu_idle_ms": 0.2},  # no source line
    ]}
    j = join(report, findings)
    assert [(c["site"]["line"], [f.code for f in c["findings"]]) for c in j.confirmed] == [
        (_line(src, "pred[mask]"), ["SYN302"])]
    assert j.confirmed[0]["cost"]["gpu_idle_ms_per_step"] == pytest.approx(0.2)
    assert [m["site"]["line"] for m in j.missed] == [_line(src, "n = idx.shape[0]")]
    assert len(j.unattributed) == 1
    # hot findings of the profiled file that no site matched
    assert sorted(f.code for f in j.not_observed) == sorted(
        f.code for f in findings if f.context == "hot" and f.code != "SYN302")
    text = "\n".join(render_join(j.to_json()))
    assert "confirmed by lint: 1" in text and "missed by lint: 1" in text
    assert "0.200 ms/step GPU idle" in text and "1 runtime site(s) without a source line" in text


def test_text_ranks_confirmed_sites_by_the_predicted_saving(src):
    """With the replay's savings in the report, the text lists first what saves most to fix."""
    report = {"gpu_activity": True, "steps": [{}, {}], "syncs": [  # ranked by GPU idle, as analyze does
        _site(src, "torch.nonzero(mask)", op="aten::nonzero", outer_op="aten::nonzero_numpy", rule="SYN301",
              idle=0.4, saving_syncs_ms=0.1, saving_rewrite_ms=0.15),
        _site(src, "pred[mask]", op="aten::nonzero", outer_op="aten::index", rule="SYN302",
              idle=0.2, saving_syncs_ms=0.05, saving_rewrite_ms=1.2),
        _site(src, "loss.item()", op="aten::_local_scalar_dense", outer_op="aten::item", rule="SYN101",
              idle=0.3, saving_syncs_ms=0.2, saving_rewrite_ms=-0.05),
    ]}
    text = render_join(join(report, _findings(src)).to_json())
    assert "confirmed by lint: 3 (ranked by what the rewrite saves)" in text[1]
    rows = [line for line in text if "<-" in line]
    assert ["SYN302" in rows[0], "SYN301" in rows[1], "SYN101" in rows[2]] == [True] * 3
    assert "rewrite saves 1.200 ms" in rows[0] and "rewrite costs 0.050 ms more" in rows[2]


def test_def_line_sites_match_a_finding_of_their_rule_in_that_function(src):
    """A CPU run: no sync-debug hook, so a trace's stack gives only the function's def line."""
    findings = _findings(src)
    loss_def = _line(src, "def loss_fn")
    would = [
        {"file": src.name, "line": loss_def, "line_kind": "def", "op": "aten::nonzero",
         "outer_op": "aten::index", "rule": "SYN302", "count": 2, "phase": "forward"},
        # a unique in this function would be SYN305: lint has no such finding there
        {"file": src.name, "line": loss_def, "line_kind": "def", "op": "aten::_unique2",
         "outer_op": "aten::_unique2", "rule": "SYN305", "count": 2, "phase": "forward"},
    ]
    j = join({"gpu_activity": False, "steps": [{}, {}], "syncs": [], "would_sync": would}, findings)
    assert j.measured is False
    assert [(c["match"], [f.code for f in c["findings"]]) for c in j.confirmed] == [("function", ["SYN302"])]
    assert j.confirmed[0]["cost"]["gpu_idle_ms_per_step"] is None
    assert j.confirmed[0]["cost"]["syncs_per_step"] == 1
    assert [m["site"]["op"] for m in j.missed] == ["aten::_unique2"]
    text = "\n".join(render_join(j.to_json()))
    assert "would sync 1/step" in text and "(def line)" in text


def test_backward_site_without_its_forward_site_matches_through_its_stack(src):
    findings = _findings(src)
    site = _site(src, "loss.backward()", op="aten::nonzero", outer_op="IndexBackward0", rule="SYN302",
                 phase="backward", forward_op="aten::index",
                 stack=[f"{src.name}:{_line(src, 'def train_step')} in train_step",
                        f"{src.name}:{_line(src, 'def loss_fn')} in loss_fn"])
    j = join({"gpu_activity": True, "steps": [{}], "syncs": [site]}, findings)
    assert [(c["match"], c["findings"][0].line) for c in j.confirmed] == [("forward", _line(src, "pred[mask]"))]


def test_sources_are_found_under_the_roots_and_libraries_are_left_out(src, tmp_path):
    assert resolve_source("train.py", [str(tmp_path)]) == str(tmp_path / "train.py")
    assert resolve_source("train.py", [str(tmp_path / "elsewhere")]) is None
    lib = tmp_path / "venv" / "lib" / "site-packages" / "pkg"
    lib.mkdir(parents=True)
    (lib / "mod.py").write_text("import torch\nx = torch.ones(1).item()\n")
    assert resolve_source(str(lib / "mod.py"), []) is None
    report = {"syncs": [{"file": "train.py", "line": 1}, {"file": str(lib / "mod.py"), "line": 2},
                        {"file": "<string>", "line": 1}]}
    assert source_files(report, [str(tmp_path)]) == [str(tmp_path / "train.py")]
    j = lint_and_join({**report, "steps": [{}]}, [str(tmp_path)])
    assert j["linted"] == [str(tmp_path / "train.py")]
    assert lint_and_join({"syncs": [{"file": "nowhere.py", "line": 3}]}, [str(tmp_path)]) is None


def test_sites_that_do_not_fit_the_file_are_not_claimed(src):
    """The file was edited after the run: a call line past its end, a def line no function starts
    at. Neither is called missed by lint, and the file's findings are not called unobserved."""
    findings = _findings(src)
    n_lines = len(src.read_text().splitlines())
    report = {"gpu_activity": True, "steps": [{}], "syncs": [
        {"file": src.name, "line": n_lines + 5, "line_kind": "call", "op": "aten::item", "rule": "SYN101",
         "count": 1, "gpu_idle_ms": 0.1},
        {"file": src.name, "line": _line(src, "total = pred[mask]"), "line_kind": "def", "op": "aten::nonzero",
         "rule": "SYN302", "count": 1, "gpu_idle_ms": 0.1}]}
    j = join(report, findings, profiled_files=[str(src)]).to_json()
    assert len(j["stale"]) == 2 and j["confirmed"] == j["missed_by_lint"] == j["not_observed"] == []
    assert "2 runtime site(s) point at lines that do not fit" in "\n".join(render_join(j))


def test_a_site_split_over_several_lines_matches_each(src):
    """The detailed pass saw one light-pass site come from two lines (`sources`)."""
    findings = _findings(src)
    site = _site(src, "pred[mask]", op="aten::nonzero", outer_op="aten::nonzero", rule="SYN301",
                 sources=[{"file": src.name, "line": _line(src, "pred[mask]")},
                          {"file": src.name, "line": _line(src, "torch.nonzero(")}])
    j = join({"gpu_activity": True, "steps": [{}], "syncs": [site]}, findings)
    assert sorted(f.code for f in j.confirmed[0]["findings"]) == ["SYN301", "SYN302"]
    assert "SYN301" not in {f.code for f in j.not_observed}
