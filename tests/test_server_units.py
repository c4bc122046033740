"""The language server's pure parts, without a client: LSP text positions, the incremental
re-lint (checked against whole-file lints), hot / epoch / cold from the project (checked against
`syncscan lint`'s), settings, measured costs and staleness, code action edits, the session's steps, and
the worker process."""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import FIXTURES

from syncscan.lint.config import Config, load
from syncscan.server import adapter, costs, incremental
from syncscan.server.settings import Settings
from syncscan.server.text import UTF8, UTF16, UTF32, Pos, apply_change, common_lines, lines_with_ends, to_lsp

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "lsp"
sys.path.insert(0, str(REPO / "benchmarks"))
from lsp_synthetic import big_module  # noqa: E402 - the benchmark's synthetic code, from its folder

# ---------------------------------------------------------------------------------- text

def test_lines_end_where_python_and_lsp_end_them():
    text = "a\fb\u2028c\r\nd\re\nf"
    assert lines_with_ends(text) == ["a\fb\u2028c\r\n", "d\r", "e\n", "f"]
    assert lines_with_ends("x\n") == ["x\n"]


@pytest.mark.parametrize("encoding, y_column, emoji", [(UTF16, 11, (6, 8)), (UTF8, 14, (7, 11)), (UTF32, 10, (6, 7))])
def test_columns_and_changes_in_each_encoding(encoding, y_column, emoji):
    """`y` comes after `x = "é😀"; `: 10 code points, 11 UTF-16 units (the emoji is two), 14 UTF-8
    bytes (é two, the emoji four)."""
    text = 'x = "é😀"; y\n'
    lines = lines_with_ends(text)
    assert to_lsp(lines, 1, 11, encoding) == Pos(0, y_column)  # `y` is character 11, 1-based
    assert apply_change(text, Pos(0, emoji[0]), Pos(0, emoji[1]), "!", encoding) == 'x = "é!"; y\n'


def test_change_at_the_end_and_across_lines():
    text = "ab\ncd\n"
    assert apply_change(text, Pos(2, 0), Pos(2, 0), "ef\n", UTF16) == "ab\ncd\nef\n"
    assert apply_change(text, Pos(0, 1), Pos(1, 1), "", UTF16) == "ad\n"
    assert common_lines(["a\n", "b\n", "c\n"], ["a\n", "x\n", "c\n"]) == (1, 1)
    assert common_lines(["a\n"], ["a\n", "a\n"]) == (1, 0)


# --------------------------------------------------------------------------- incremental

def _key(findings):
    return sorted((f.line, f.column, f.end_line, f.end_column, f.code, f.message, f.local, f.confidence, f.function,
                   f.fix.to_json() if f.fix else None) for f in findings)


def _edit(text: str, rng: random.Random) -> str | None:
    """An edit inside a function body: a line duplicated, deleted, commented, or a sync added."""
    blocks = [b for b in incremental.blocks_of(adapter.parse(text)) if b.is_def and b.end > b.start + 2]
    lines = text.splitlines(True)
    b = rng.choice(blocks)
    j = rng.randint(b.start + 1, b.end - 1)
    line = lines[j - 1]
    if not line.strip():
        return None
    kind = rng.choice(("dup", "del", "comment", "sync"))
    if kind == "dup":
        lines.insert(j, line)
    elif kind == "del":
        del lines[j - 1]
    elif kind == "comment":
        lines[j - 1] = line.rstrip("\n") + "  # edited\n"
    else:
        indent = line[:len(line) - len(line.lstrip())]
        lines.insert(j, f"{indent}_v = x.sum().item()\n")
    out = "".join(lines)
    return None if isinstance(adapter.parse(out), str) else out


# rules that look past the definition they flag: the reduced text can lack their evidence (a
# DataLoader without pin_memory is flagged when the file copies to the GPU somewhere else), and the
# server's whole-file lint, which follows every pause in typing, puts it right
FILE_WIDE = {"SYN205"}


@pytest.mark.parametrize("source", ["masked_loss_naive.py", "classic_loop_naive.py", "augment_gpu_stream.py",
                                    "encdec_piped.py", "synthetic"])
def test_fast_relint_equals_a_whole_file_lint(source):
    """Edit after edit, the fast result (changed definitions re-linted in a reduced text, the rest
    moved) equals linting the whole file: findings, fixes, call graph."""
    text = big_module(600) if source == "synthetic" else (FIXTURES / source).read_text()
    path = str(REPO / "fixtures" / "x.py")
    cfg = Config()
    old = adapter.lint_text(path, text, cfg)
    old_lines, old_blocks = lines_with_ends(text), incremental.blocks_of(adapter.parse(text))
    rng = random.Random(source)
    checked = 0
    for _ in range(30):
        new_text = _edit(text, rng)
        if new_text is None:
            continue
        new_lines = lines_with_ends(new_text)
        plan = incremental.plan(old_lines, old_blocks, new_lines)
        whole = adapter.lint_text(path, new_text, cfg)
        assert plan is not None
        fast = incremental.merge(plan, path, old, adapter.lint_text(path, plan.reduced, cfg))
        assert _key(f for f in fast.findings if f.code not in FILE_WIDE) == \
            _key(f for f in whole.findings if f.code not in FILE_WIDE)
        assert fast.functions == whole.functions
        old, old_lines, old_blocks = whole, new_lines, incremental.blocks_of(adapter.parse(new_text))
        text = new_text
        checked += 1
    assert checked >= 10


def test_the_reduced_text_keeps_every_position_and_drops_unrelated_definitions():
    text = big_module(400)
    lines = lines_with_ends(text)
    blocks = incremental.blocks_of(adapter.parse(text))
    b = next(b for b in blocks if b.is_def and "evaluate_" in next(iter(b.names)))
    new = list(lines)
    new.insert(b.start + 1, "    pass\n")  # after `@torch.no_grad()` and the def line
    plan = incremental.plan(lines, blocks, new)
    red = lines_with_ends(plan.reduced)
    assert len(red) == len(new)
    assert plan.context < len(blocks) // 2  # an evaluation loop needs little of the module
    kept = [i for i, line in enumerate(red) if line.strip()]
    assert all(red[i] == new[i] for i in kept)


def test_module_level_edits_and_broken_spans_lint_the_whole_file():
    text = "import torch\n\n\ndef f(x):\n    return x.item()\n"
    lines = lines_with_ends(text)
    blocks = incremental.blocks_of(adapter.parse(text))
    assert incremental.plan(lines, blocks, lines_with_ends("import torch\nimport math\n\n\ndef f(x):\n"
                                                           "    return x.item()\n")) is None
    assert incremental.plan(lines, blocks, lines_with_ends(text.replace("return x.item()", "return (x"))) is None
    plan = incremental.plan(lines, blocks, lines_with_ends(text.replace("x.item()", "x.sum().item()")))
    assert plan is not None and [sorted(b.names) for b in plan.relint] == [["f"]]


def test_a_renamed_function_relints_its_callers():
    text = ("import torch\n\n\ndef helper(t):\n    return t.cpu()\n\n\n"
            "def loss_fn(pred):\n    v = helper(pred)\n    return v.sum().item()\n\n\ndef other(x):\n    return x\n")
    lines = lines_with_ends(text)
    blocks = incremental.blocks_of(adapter.parse(text))
    new = lines_with_ends(text.replace("def helper(t)", "def helper2(t)"))
    plan = incremental.plan(lines, blocks, new)
    assert sorted(n for b in plan.relint for n in b.names) == ["helper2", "loss_fn"]


# --------------------------------------------------------------------------- settings

def test_settings_from_vs_code_and_flat_options():
    s, problems = Settings.parse({"syncscan": {"docsUrl": "https://x/r.md", "unsafeFixes": True,
                                               "severity": {"cold": "OFF"}, "debounceMs": 0}})
    assert (s.docs_url, s.unsafe_fixes, s.debounce_ms, s.severity["cold"], s.severity["hot"]) == \
        ("https://x/r.md", True, 0, "off", "warning") and problems == []
    s2, problems = Settings.parse({"unsafeFixes": "yes", "bogus": 1, "severity": {"hot": "loud"},
                                   "fullLintDelayMs": -1}, s)
    assert s2 == s
    assert problems == ["setting 'unsafeFixes': must be true or false", "unknown setting 'bogus'",
                        ("setting 'severity': must map hot, epoch, cold, measured to one of error, warning, "
                         "information, hint, off"),
                        "setting 'fullLintDelayMs': must be milliseconds (0 to 60000)"]
    assert Settings.parse({"syncscan": {"path": "/x/syncscan", "args": ["server"]}}) == (Settings(), [])
    assert Settings.parse(None) == (Settings(), [])
    assert Settings.parse([1]) == (Settings(), ["settings must be an object"])


def test_profile_report_in_the_config(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.syncscan]\nprofile-report = "runs/a/report.json"\n')
    assert load(None, str(tmp_path)).profile_report == str(tmp_path.resolve() / "runs/a/report.json")
    (tmp_path / "pyproject.toml").write_text('[tool.syncscan]\nprofile-report = 3\n')
    with pytest.raises(Exception, match="profile-report must be a string"):
        load(None, str(tmp_path))


# --------------------------------------------------------------------------- costs

def _report(tmp_path: Path, name="run1") -> Path:
    d = tmp_path / "syncscan-runs" / name
    d.mkdir(parents=True)
    shutil.copyfile(DATA / "masked_loss_report.json", d / "report.json")
    return d / "report.json"


def test_the_measured_costs_test_data_fits_the_schema_and_the_fixture():
    from syncscan.schema import check

    sys.path.insert(0, str(DATA))
    from regenerate import site_lines

    report = json.loads((DATA / "masked_loss_report.json").read_text())
    check(report)  # raises when it does not fit docs/report.schema.json
    want = set(site_lines((FIXTURES / "masked_loss_naive.py").read_text()))
    assert {s["line"] for s in report["syncs"]} == want, \
        "fixtures/masked_loss_naive.py moved: run python tests/data/lsp/regenerate.py"


def test_the_newest_run_folder_report_is_found_and_reloaded_when_it_changes(tmp_path):
    old, new = _report(tmp_path, "a"), _report(tmp_path, "b")
    os.utime(old, (1_700_000_000, 1_700_000_000))
    reports = costs.Reports()
    assert reports.find(str(tmp_path), None) == str(new)
    assert reports.find(str(tmp_path), "x/report.json") == str(tmp_path / "x/report.json")
    rep = reports.load(str(new))
    assert rep.files == ["fixtures/masked_loss_naive.py"] and reports.load(str(new)) is rep
    new.write_text("{}")
    os.utime(new, (1_800_000_000, 1_800_000_000))
    assert reports.load(str(new)) is None and "not a syncscan profile/analyze JSON report" in reports.errors[str(new)]
    assert reports.load(str(tmp_path / "missing.json")) is None


def test_staleness_by_unsaved_edits_and_file_time(tmp_path):
    path = tmp_path / "masked_loss_naive.py"
    text = (FIXTURES / "masked_loss_naive.py").read_text()
    path.write_text(text)
    rep = costs.Reports().load(str(_report(tmp_path)))
    rep.ran_at = path.stat().st_mtime + 10
    assert costs.staleness(rep, str(path), text, text) is None
    assert costs.staleness(rep, str(path), text + "#\n", text) == "unsaved changes since the profile"
    rep.ran_at = path.stat().st_mtime - 10
    assert "masked_loss_naive.py changed since the profile of" in costs.staleness(rep, str(path), text, text)


def test_line_map_follows_unsaved_edits():
    disk = "a\nb\nc\nd\n"
    buffer = "new\na\nb\nchanged\nd\n"
    assert costs.line_map(buffer, disk) == {2: 1, 3: 2, 5: 4}


def _settled(path: Path) -> list:
    """The file's findings, their context settled as the server settles them."""
    from syncscan.server.session import Doc, Session

    doc = Doc(path.as_uri(), str(path), 1, path.read_text())
    return [x.finding.replace(context=x.context) for x in Session().fast(doc)]


def test_notes_say_measured_would_sync_and_did_not_sync(tmp_path):
    path = tmp_path / "masked_loss_naive.py"
    shutil.copyfile(FIXTURES / "masked_loss_naive.py", path)
    findings = _settled(path)
    rep = costs.Reports().load(str(_report(tmp_path)))
    notes = costs.notes(findings, rep, None)
    by_code = {f.code: notes[id(f)] for f in findings if id(f) in notes}
    assert by_code["SYN301"].text.startswith("measured: 0.030 ms/step GPU idle, rewrite saves 0.171 ms/step")
    assert by_code["SYN305"].text.endswith("rewrite costs 0.603 ms/step more")
    assert all(n.confirmed for n in by_code.values())
    # the same run on a machine without a GPU: ops that would sync, counted
    cpu = dict(rep.data, gpu_activity=False, would_sync=[dict(s, count=8) for s in rep.data["syncs"]])
    rep.data = cpu
    findings = _settled(path)
    notes = costs.notes(findings, rep, None)
    assert any(n.text.startswith("profiled without a GPU: would sync") for n in notes.values())


# --------------------------------------------------------------------------- actions

def _finding(code="SYN101", line=1, end_line=1):
    return adapter.Finding("a.py", line, 5, end_line, 10, code, "item", "m")


def test_noqa_is_added_or_extended_and_never_put_in_a_string():
    from syncscan.server.actions import noqa_text

    assert noqa_text("x = t.item()\n", _finding()) == ("x = t.item()  # noqa: SYN101\n", 0)
    assert noqa_text("x = t.item()  # noqa: SYN201\n", _finding())[0] == "x = t.item()  # noqa: SYN201, SYN101\n"
    assert noqa_text("x = t.item()  # noqa\n", _finding()) is None
    # the first line ends inside a triple-quoted string: the comment goes on the last line
    text = 'x = f(t.item(), """\nabc""")\n'
    assert noqa_text(text, _finding(end_line=2)) == ('x = f(t.item(), """\nabc""")  # noqa: SYN101\n', 1)
    # after a line continuation no comment fits: the last line takes it
    text = "x = t.item() + \\\n    1\n"
    assert noqa_text(text, _finding(end_line=2)) == ("x = t.item() + \\\n    1  # noqa: SYN101\n", 1)
    # a string that starts on the finding's only line and goes on: no line of it can take one
    text = 'x = f(t.item(), """a\nb""")\n'
    assert noqa_text(text, _finding(line=1, end_line=1)) is None


@pytest.mark.parametrize("old, new", [("a\nb\nc\n", "a\nB\nc\nd\n"), ("a\nb", "a\nb\nc"), ("x\ny\nz", "y"),
                                      ("", "a\n"), ("same\n", "same\n")])
def test_text_edits_turn_the_old_text_into_the_new(old, new):
    from syncscan.server.actions import text_edits

    edits = text_edits(old, new, UTF16)
    lines = old.splitlines(True)

    def off(p):
        return sum(len(x) for x in lines[:p.line]) + p.character

    out = old
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        out = out[:off(e.range.start)] + e.new_text + out[off(e.range.end):]
    assert out == new
    assert (edits == []) == (old == new)


def test_fix_all_applies_the_safe_fixes_only(tmp_path):
    text = (FIXTURES / "masked_loss_naive.py").read_text()
    new, n, error = adapter.fix_all(str(tmp_path / "m.py"), text, Config(), False, lambda f: True)
    assert error is None and n == 1 and "masked_fill_" in new and "torch.unique(" in new


# --------------------------------------------------------------------------- the session

def test_a_buffer_that_does_not_parse_keeps_its_findings_moved(tmp_path):
    from syncscan.server.session import Doc, Session

    path = tmp_path / "m.py"
    text = "import torch\n\n\ndef loss_fn(x):\n    return x.item()\n\n\ndef g(x):\n    return x.cpu()\n"
    path.write_text(text)
    s = Session()
    doc = Doc(path.as_uri(), str(path), 1, text)
    first = [(x.finding.code, x.finding.line) for x in s.fast(doc)]
    assert first == [("SYN101", 5), ("SYN201", 9)]
    doc.text = text.replace("def loss_fn(x):\n", "def loss_fn(x):\n    y = (\n\n")  # unfinished: two lines added
    assert [(x.finding.code, x.finding.line) for x in s.fast(doc)] == [("SYN101", 7), ("SYN201", 11)]
    doc.text = doc.text.replace("x.item()", "x.item(")  # the edit is on the finding's line: it goes
    assert [(x.finding.code, x.finding.line) for x in s.fast(doc)] == [("SYN201", 11)]
    doc.text = doc.text.replace("    y = (\n\n", "    y = 1\n\n").replace("x.item(", "x.item()")
    assert [(x.finding.code, x.finding.line) for x in s.fast(doc)] == [("SYN101", 7), ("SYN201", 11)]


def _helper_project(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.syncscan]\n")
    (tmp_path / "helpers.py").write_text("def scaled(loss):\n    return loss.item() * 2.0\n")
    (tmp_path / "train.py").write_text(textwrap.dedent("""\
        from helpers import scaled

        def train(model, loader, opt):
            for x in loader:
                loss = model(x)
                loss.backward()
                opt.step()
                print(scaled(loss))
        """))
    return tmp_path / "helpers.py"


def test_hot_context_comes_from_the_indexed_repository(tmp_path):
    from syncscan.server.session import Doc, Session

    path = _helper_project(tmp_path)
    s = Session(roots=[str(tmp_path)])
    doc = Doc(path.as_uri(), str(path), 1, path.read_text())
    assert [x.context for x in s.fast(doc)] == ["cold"]  # not indexed yet: the file alone
    assert s.index(str(tmp_path)) == os.path.realpath(tmp_path)
    assert [x.context for x in s.refresh(doc)] == ["hot"]
    # the background whole-file lint (the project looked at again) agrees
    whole = adapter.lint_text(str(path), doc.text, Config())
    assert [x.context for x in s.apply_full(doc, doc.text, whole)] == ["hot"]
    # an unsaved edit of the buffer counts: a helper that now loops over a loader runs its own steps
    doc.text = doc.text.replace("def scaled(loss):\n", "def scaled(loss):\n    del loss\n\n\ndef unused(v):\n")
    assert [x.context for x in s.fast(doc)] == ["cold"]  # `unused` is called by nothing


def test_a_save_and_a_change_on_disk_reach_the_other_open_files(tmp_path):
    """The training loop stops calling the helper, saved (another buffer): the helper turns cold;
    then a file written by another program calls it from a loop again: hot."""
    from syncscan.server.session import Doc, Session

    path = _helper_project(tmp_path)
    s = Session()
    s.index(str(path))
    helper = Doc(path.as_uri(), str(path), 1, path.read_text())
    assert [x.context for x in s.fast(helper)] == ["hot"]
    train = tmp_path / "train.py"
    train.write_text(train.read_text().replace("print(scaled(loss))", "print(loss)"))
    tdoc = Doc(train.as_uri(), str(train), 1, train.read_text())
    s.fast(tdoc)
    assert s.saved(tdoc)  # (the project's frequencies changed)
    assert [x.context for x in s.refresh(helper)] == ["cold"]
    (tmp_path / "loop.py").write_text("from helpers import scaled\n\ndef fit(model, loader, opt):\n"
                                      "    for x in loader:\n        loss = model(x)\n        loss.backward()\n"
                                      "        opt.step()\n        scaled(loss)\n")
    assert s.rescan([str(tmp_path / "loop.py")])
    assert [x.context for x in s.refresh(helper)] == ["hot"]
    assert not s.rescan([str(tmp_path / "loop.py")])  # nothing changed since


def test_the_editor_settles_as_syncscan_lint_does(tmp_path):
    """Each file of a project opened in the editor (unsaved: the buffer is the file's text) gets
    the contexts `syncscan lint --all` gives it, epoch and cold included."""
    from syncscan.lint.config import Settings as LintSettings
    from syncscan.lint.runner import lint_paths
    from syncscan.server.session import Doc, Session

    proj = tmp_path / "p"
    shutil.copytree(FIXTURES, proj / "fixtures")
    (proj / "pyproject.toml").write_text("[tool.syncscan]\n")
    _helper_project(proj)
    (proj / "stats.py").write_text("def log_stats(loss):\n    return loss.item()\n")  # called once per epoch
    (proj / "fit.py").write_text("from stats import log_stats\n\ndef fit(model, loader, opt, epochs):\n"
                                 "    for epoch in range(epochs):\n        for x in loader:\n"
                                 "            loss = model(x)\n            loss.backward()\n            opt.step()\n"
                                 "        log_stats(loss)\n")
    run = lint_paths([str(proj)], LintSettings(), use_cache=False, jobs=1)
    want = {(os.path.realpath(f.path), f.line, f.code): f.context for f in run.findings}
    assert set(want.values()) == {"hot", "epoch", "cold"}
    s = Session()
    s.index(str(proj))
    got = {}
    for path in sorted({p for p, _, _ in want}):
        doc = Doc(Path(path).as_uri(), path, 1, Path(path).read_text())
        got.update({(path, x.finding.line, x.finding.code): x.context for x in s.fast(doc)})
    assert got == want


def test_low_confidence_findings_are_shown_as_cold_ones(tmp_path):
    """`syncscan lint` hides findings of low confidence (here: a test file's) as it hides cold ones;
    the editor shows them with the "cold" severity (a hint), saying so, and hides them with cold."""
    from syncscan.server.diagnostics import diagnostics
    from syncscan.server.session import Doc, Session

    text = textwrap.dedent("""\
        import torch

        def test_fit(model, loader, opt):
            for x in loader:
                loss = model(x)
                loss.backward()
                opt.step()
                print(loss.item())
        """)
    path = tmp_path / "test_fit.py"
    path.write_text(text)
    doc = Doc(path.as_uri(), str(path), 1, text)
    shown = Session().fast(doc)
    assert [(x.finding.code, x.context, x.finding.confidence) for x in shown] == [("SYN101", "hot", "low")]
    (d,) = diagnostics(shown, doc.shown_lines, UTF16, Settings())
    assert d["severity"] == 4 and d["message"].startswith("[hot, low confidence] ")
    hot_loud, _ = Settings.parse({"severity": {"hot": "error"}})
    assert diagnostics(shown, doc.shown_lines, UTF16, hot_loud)[0]["severity"] == 4
    assert diagnostics(shown, doc.shown_lines, UTF16, Settings.parse({"severity": {"cold": "off"}})[0]) == []


# --------------------------------------------------------------------------- the worker

def test_worker_lints_reports_errors_and_exits_with_its_stdin(tmp_path):
    from syncscan.server.worker import Worker, WorkerError

    w = Worker()
    try:
        path = tmp_path / "a.py"
        got = w.call("lint_text", str(path), "import torch\n\ndef loss_fn(x):\n    return x.item()\n", None)
        assert [f.code for f in got.findings] == ["SYN101"]
        with pytest.raises(WorkerError, match="KeyError"):
            w.call("nope")
        proc = w._proc  # the task failed, the process lives on
        assert w.call("ping") == proc.pid
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        w.stop()


def test_benchmark_smoke(tmp_path):
    """benchmarks/lsp_latency.py at tiny sizes: it drives a real server and writes its figures."""
    import subprocess

    out = tmp_path / "lat.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "lsp_latency.py"), "--smoke", "--json", str(out),
                        "--workdir", str(tmp_path / "w")], capture_output=True, text=True, timeout=600, check=False)
    assert p.returncode == 0, p.stderr
    r = json.loads(out.read_text())
    assert r["changes"] == 4 and len(r["fast_ms"]) == 4 and r["fast_ms_median"] > 0
    assert r["whole_file_differed"] == 0
    assert "diagnostics after a change" in p.stdout and r["new_calls_ms"] >= 0


def test_a_broken_config_is_one_line_naming_it_and_linting_goes_on(tmp_path):
    from syncscan.server.session import Doc, Session

    (tmp_path / "pyproject.toml").write_text("[tool.syncscan]\nselect = 3\n")
    path = tmp_path / "m.py"
    path.write_text("import torch\n\n\ndef loss_fn(x):\n    return x.item()\n")
    said = []
    s = Session(log=lambda message, level="info": said.append((level, message)))
    doc = Doc(path.as_uri(), str(path), 1, path.read_text())
    assert [x.finding.code for x in s.fast(doc)] == ["SYN101"]
    s.fast(doc)
    (level, message), = said  # said once, not per lint
    assert level == "error" and "\n" not in message and message.startswith("syncscan: ")
    assert "select must be a list of rule codes" in message and message.endswith("(using the default settings)")


def test_a_quick_fix_takes_its_whole_fix_group(tmp_path):
    """Two accumulators of one loop are fixed together or not at all (`lint --fix`'s rule): the
    quick fix on either `.item()` applies both, and says so."""
    from syncscan.server.actions import fix_action
    from syncscan.server.session import Doc, Session

    text = textwrap.dedent("""\
        import torch
        def train(model, loader, opt):
            total = 0.0
            correct = 0
            for x, y in loader:
                out = model(x)
                loss = out.mean()
                loss.backward()
                opt.step()
                total += loss.item()
                correct += (out.argmax(1) == y).sum().item()
            return total, correct
        """)
    path = tmp_path / "t.py"
    path.write_text(text)
    doc = Doc(path.as_uri(), str(path), 1, text)
    shown = [s for s in Session().fast(doc) if s.finding.code == "SYN101"]
    assert len(shown) == 2 and shown[0].finding.fix.group == shown[1].finding.fix.group != ""
    for s in shown:
        a = fix_action(doc.uri, str(path), text, s, doc.summary.findings, None, True, None, UTF16)
        assert a.title.startswith("Fix SYN101 (and 1 more of its group)")
        new = text  # (the edits replace whole lines)
        for e in sorted(a.edit.changes[doc.uri], key=lambda e: e.range.start.line, reverse=True):
            lines = new.splitlines(True)
            new = "".join(lines[:e.range.start.line]) + e.new_text + "".join(lines[e.range.end.line:])
        assert "total += loss.detach().double()" in new and "correct += (out.argmax(1) == y).sum()\n" in new
        assert "return float(total), int(correct)" in new
