"""Jupyter notebooks: code cells are linted as one module (magics and shell lines skipped),
findings are located by cell, and --fix rewrites only the changed cells' sources, leaving
outputs, metadata, the other cells and the file's formatting byte for byte as they were."""

from __future__ import annotations

import ast
import json
import re
import textwrap
from pathlib import Path

import pytest

from syncscan.cli import main
from syncscan.lint import command, registry, runner
from syncscan.lint.files import python_lines, read
from syncscan.lint.rule import Fix, Rule


def lines(text: str) -> list[str]:
    """A cell source as nbformat writes it: a list of lines, each but the last ending in \\n."""
    return textwrap.dedent(text).strip("\n").splitlines(True)


def code_cell(source, n=None, outputs=(), **meta):
    return {"cell_type": "code", "execution_count": n, "id": f"c{n}", "metadata": dict(meta),
            "outputs": list(outputs), "source": source}


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "id": "m1", "metadata": {},
         "source": lines("""
            # Training
            `torch.nonzero(x)` in markdown is not code; neither is `loss.item()`.
            """)},
        code_cell(lines("""
            !pip install torch torchvision
            %matplotlib inline
            import torch
            """), 1, outputs=[{"name": "stdout", "output_type": "stream", "text": ["Requirement satisfied\n"]}]),
        code_cell(lines("""
            %%time
            def train(model, loader, opt):
                for x, y in loader:
                    loss = model(x).sum()
                    loss.backward()
                    opt.step()
                    print(loss.item())
            """), 2, outputs=[{"name": "stdout", "output_type": "stream", "text": ["CPU times: 1 s\n"]}],
            tags=["train"]),
        code_cell(lines("""
            %%bash
            python -c "import torch; torch.nonzero(torch.ones(3)).item()"
            """), 3),
        code_cell(lines("""
            def forward(self, x):  # is this hot?
                doc = '''
            !not a shell line inside a string
            %neither is this
            '''
                train?
                return torch.nonzero(x)
            torch.nonzero?
            """), 4, outputs=[{"data": {"text/plain": ["tensor([[0]])"]}, "execution_count": 4,
                               "metadata": {}, "output_type": "execute_result"}]),
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                 "language_info": {"name": "python", "version": "3.11.7"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def nbformat_text(nb: dict) -> str:
    """What Jupyter (nbformat) writes: indent=1, sorted keys, UTF-8, a final newline."""
    return json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def lint(capsys, *argv):
    rc = main(["lint", "--no-cache", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


# -- linting ------------------------------------------------------------------------------------

PROBLEM_MATCHER = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>SYN\d+) (?P<message>.*)$")


def test_findings_are_located_by_cell(capsys):
    """`path:line:col` as problem matchers parse it, at the cell's line in the .ipynb file's own
    text; the message names the cell and the line in it."""
    text = nbformat_text(NOTEBOOK)
    Path("nb.ipynb").write_text(text)
    rc, out, err = lint(capsys, "nb.ipynb")
    assert rc == 1 and not err
    heads = [ln for ln in out.splitlines() if ln.startswith("nb.ipynb:")]
    assert len(heads) == 2  # nothing from the markdown cell, the %%bash cell or the string
    matched = [PROBLEM_MATCHER.match(h) for h in heads]
    assert all(matched), heads
    raw_lines = text.splitlines()
    for m, snippet, where in zip(matched, ("loss.item()", "torch.nonzero(x)"), ("cell 3, line 7:", "cell 5, line 7:")):
        line = raw_lines[int(m["line"]) - 1]
        assert line[int(m["col"]) - 1:].startswith(snippet)
        assert m["message"].startswith("[hot] " + where)
    assert "        print(loss.item())".strip() in out and "^^^^^^^^^^^" in out


def test_json_has_the_cell(capsys):
    Path("nb.ipynb").write_text(nbformat_text(NOTEBOOK))
    rc, out, _ = lint(capsys, "--format", "json", "nb.ipynb")
    data = json.loads(out)
    assert [(f["cell"], f["line"], f["column"], f["end_line"], f["code"]) for f in data] == \
        [(3, 7, 15, 7, "SYN101"), (5, 7, 12, 7, "SYN301")]
    assert set(data[0]) == {"path", "line", "column", "end_line", "end_column", "code", "name", "message",
                            "context", "confidence", "suggestion", "fix", "compile", "cell"}


def test_sarif_and_github_point_into_the_ipynb_file(capsys):
    text = nbformat_text(NOTEBOOK)
    Path("nb.ipynb").write_text(text)
    raw_lines = text.splitlines()
    _, out, _ = lint(capsys, "--format", "sarif", "nb.ipynb")
    results = json.loads(out)["runs"][0]["results"]
    for res in results:
        region = res["locations"][0]["physicalLocation"]["region"]
        line = raw_lines[region["startLine"] - 1]
        snippet = line[region["startColumn"] - 1:region["endColumn"] - 1]
        assert snippet in ("loss.item()", "torch.nonzero(x)")
        assert res["properties"]["cell"] in (3, 5) and res["message"]["text"].startswith("cell ")
    _, out, _ = lint(capsys, "--format", "github", "nb.ipynb")
    first = out.splitlines()[0]
    line_no = int(first.split(",line=")[1].split(",")[0])
    assert "print(loss.item())" in raw_lines[line_no - 1]


def test_folder_linting_includes_notebooks_and_skips_checkpoints(capsys):
    Path("pkg/.ipynb_checkpoints").mkdir(parents=True)
    Path("pkg/nb.ipynb").write_text(nbformat_text(NOTEBOOK))
    Path("pkg/.ipynb_checkpoints/nb-checkpoint.ipynb").write_text(nbformat_text(NOTEBOOK))
    Path("pkg/train.py").write_text("import torch\n\ndef forward(self, x):\n    return torch.nonzero(x)\n")
    rc, out, _ = lint(capsys, "--format", "json", ".")
    assert sorted({f["path"] for f in json.loads(out)}) == ["pkg/nb.ipynb", "pkg/train.py"]


def test_names_flow_between_cells(capsys):
    nb = {"cells": [code_cell(lines("""
            import torch
            crit = torch.nn.CrossEntropyLoss()
            """), 1),
                    code_cell(lines("""
            for x, y in loader:
                loss = crit(model(x), y)
                loss.backward()
                opt.step()
                total = loss.item()
            """), 2)],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    Path("nb.ipynb").write_text(nbformat_text(nb))
    rc, out, _ = lint(capsys, "--format", "json", "nb.ipynb")
    assert [(f["cell"], f["line"], f["code"], f["context"]) for f in json.loads(out)] == [(2, 5, "SYN101", "hot")]


def test_syntax_error_names_the_cell(capsys):
    nb = {"cells": [code_cell(["import torch\n", "x = 1"], 1), code_cell(["y = (\n", "z = 2"], 2)],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    Path("nb.ipynb").write_text(nbformat_text(nb))
    rc, out, err = lint(capsys, "nb.ipynb")
    assert rc == 2
    assert err.startswith("syncscan: error: nb.ipynb: syntax error at cell 2, line 1") and err.count("\n") == 1


def test_a_notebook_of_another_language_is_not_linted(capsys):
    nb = {"cells": [code_cell(["torch.nonzero(x)  # R has no torch"], 1)],
          "metadata": {"kernelspec": {"language": "R", "name": "ir"}}, "nbformat": 4, "nbformat_minor": 5}
    Path("nb.ipynb").write_text(nbformat_text(nb))
    assert lint(capsys, "--all", "nb.ipynb")[0] == 0


@pytest.mark.parametrize("cell,expected", [
    (["!pip install x", "import torch"], [("pass  # magic", False), ("import torch", True)]),
    (["  %time f()", "x = !ls", "files = %sx ls"], [("  pass  # magic", False), ("pass  # magic", False),
                                                    ("pass  # magic", False)]),
    (["obj?", "obj.attr??", "?obj", "x = 1  # really?"], [("pass  # magic", False)] * 3 + [("x = 1  # really?", True)]),
    (["s = '''", "%not magic", "!nor this", "'''"], [("s = '''", True), ("%not magic", True), ("!nor this", True),
                                                     ("'''", True)]),
    (["f(a,", "  !b)"], [("f(a,", True), ("  !b)", True)]),  # inside brackets: Python's problem, not a magic
    (["x = 1 + \\", "  %2"], [("x = 1 + \\", True), ("  %2", True)]),
    (["!apt-get install \\", "   foo", "y = 2"], [("pass  # magic", False), ("", False), ("y = 2", True)]),
    (["%%bash", "echo torch"], [("", False), ("", False)]),
    (["", "%%time", "x = 1"], [("", True), ("pass  # magic", False), ("x = 1", True)]),
    (["if x != 1:", "    pass"], [("if x != 1:", True), ("    pass", True)]),
])
def test_python_lines(cell, expected):
    assert python_lines(cell) == expected


def test_virtual_module_parses_for_every_cell_kind():
    Path("nb.ipynb").write_text(nbformat_text(NOTEBOOK))
    src = read("nb.ipynb")
    ast.parse(src.text)
    assert len(src.cells) == len(src.text.split("\n")) - 1
    # a verbatim line is the cell's line, character for character
    cells = NOTEBOOK["cells"]
    for vline, ((cell, line), same) in enumerate(zip(src.cells, src.verbatim), start=1):
        if same:
            assert src.text.split("\n")[vline - 1] == "".join(cells[cell - 1]["source"]).split("\n")[line - 1]


# -- fixing -------------------------------------------------------------------------------------

class SyncMe(Rule):
    """`sync_me(x)` (safe fix) and `maybe_sync(x)` (unsafe fix) become `torch.no_sync(x)`."""

    code = "SYN990"
    name = "sync-me"
    summary = "test rule"
    why = "test"
    rewrite = "`torch.no_sync(x)`"
    fix_safety = "unsafe"
    fix_assumption = "the test says so"

    def visit_Call(self, node, ctx):
        if isinstance(node.func, ast.Name) and node.func.id in ("sync_me", "maybe_sync"):
            safe = node.func.id == "sync_me"
            fix = Fix("safe" if safe else "unsafe", (ctx.edit(node.func, "torch.no_sync"),),
                      message="call `torch.no_sync`", assumption="" if safe else self.fix_assumption,
                      imports=("torch",))
            self.report(ctx, node, f"`{ctx.text(node)}` syncs", "torch.no_sync(...)", fix)


@pytest.fixture
def sync_me_rule(monkeypatch):
    rules = lambda: (SyncMe,)  # noqa: E731
    for mod in (runner, command, registry):
        monkeypatch.setattr(mod, "all_rules", rules, raising=mod is registry)  # (imported where used)


FIX_NB = {
    "cells": [
        {"cell_type": "markdown", "id": "m", "metadata": {"editable": False}, "source": ["# Café ☕\n", "notes"]},
        code_cell(["!pip install torch\n", "%load_ext autoreload\n", "x = 1"], 1,
                  outputs=[{"name": "stdout", "output_type": "stream", "text": ["ok é\n"]}], collapsed=True),
        code_cell(["%%time\n", "y = sync_me(x)  # é\n"], 2,
                  outputs=[{"name": "stdout", "output_type": "stream", "text": ["Wall time: 1 s\n"]}]),
        code_cell(["def forward(self, x):\n", "    z = maybe_sync(x)\n", "    return sync_me(z)\n", "forward?"], 3),
        code_cell("a = sync_me(1)\nb = 2", 4),
        code_cell([], 5),
    ],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


def _without_sources(nb: dict) -> dict:
    nb = json.loads(json.dumps(nb))
    for c in nb["cells"]:
        c.pop("source", None)
    return nb


def test_fix_rewrites_only_the_changed_sources(capsys, sync_me_rule):
    before = nbformat_text(FIX_NB)
    Path("nb.ipynb").write_text(before)
    rc, out, err = lint(capsys, "--fix", "--all", "nb.ipynb")
    assert not err and "Fixed 3 syncs in 1 file." in out and rc == 1  # the unsafe one is left
    after = Path("nb.ipynb").read_text()
    nb = json.loads(after)
    src = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in nb["cells"]]
    assert src[1] == "!pip install torch\n%load_ext autoreload\nimport torch\nx = 1"  # after the magics
    assert src[2] == "%%time\ny = torch.no_sync(x)  # é\n"
    assert src[3] == "def forward(self, x):\n    z = maybe_sync(x)\n    return torch.no_sync(z)\nforward?"
    assert src[4] == "a = torch.no_sync(1)\nb = 2" and isinstance(nb["cells"][4]["source"], str)
    assert nb["cells"][1]["source"] == ["!pip install torch\n", "%load_ext autoreload\n", "import torch\n", "x = 1"]
    assert _without_sources(nb) == _without_sources(FIX_NB)  # outputs, metadata, ids untouched
    # byte for byte what Jupyter would write with the new sources: nothing else moved
    expected = json.loads(json.dumps(FIX_NB))
    expected["cells"][1]["source"].insert(2, "import torch\n")
    expected["cells"][2]["source"][1] = "y = torch.no_sync(x)  # é\n"
    expected["cells"][3]["source"][2] = "    return torch.no_sync(z)\n"
    expected["cells"][4]["source"] = "a = torch.no_sync(1)\nb = 2"
    assert after == nbformat_text(expected)
    rc, out, _ = lint(capsys, "--fix", "--all", "--unsafe-fixes", "nb.ipynb")
    assert rc == 0 and "    z = torch.no_sync(x)\n" in json.loads(Path("nb.ipynb").read_text())["cells"][3]["source"]


def test_fix_keeps_another_json_layout(capsys, sync_me_rule):
    nb = {"nbformat": 4, "nbformat_minor": 2, "metadata": {},
          "cells": [code_cell(["import torch\n", "def forward(self, x):\n", "    return sync_me(x)"], 1)]}
    before = json.dumps(nb, indent=2, ensure_ascii=True)  # 2 spaces, unsorted keys, \u escapes, no final newline
    Path("nb.ipynb").write_text(before)
    lint(capsys, "--fix", "nb.ipynb")
    after = Path("nb.ipynb").read_text()
    assert after == before.replace("return sync_me(x)", "return torch.no_sync(x)")


def test_fix_of_an_empty_source_list(capsys, sync_me_rule):
    nb = {"cells": [code_cell([], 1), code_cell(["def forward(self, x):\n", "    return sync_me(x)"], 2)],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    Path("nb.ipynb").write_text(nbformat_text(nb))
    lint(capsys, "--fix", "nb.ipynb")
    after = json.loads(Path("nb.ipynb").read_text())
    assert after["cells"][0]["source"] == ["import torch"]
    assert after["cells"][1]["source"] == ["def forward(self, x):\n", "    return torch.no_sync(x)"]
    assert Path("nb.ipynb").read_text() == nbformat_text(after)


def test_diff_shows_cells_and_writes_nothing(capsys, sync_me_rule):
    before = nbformat_text(FIX_NB)
    Path("nb.ipynb").write_text(before)
    rc, out, err = lint(capsys, "--diff", "nb.ipynb")
    assert rc == 1 and Path("nb.ipynb").read_text() == before
    assert "--- a/nb.ipynb:cell 2\n+++ b/nb.ipynb:cell 2\n" in out and "+import torch\n" in out
    assert "-    return sync_me(z)\n+    return torch.no_sync(z)\n" in out
    assert "cell 5" not in out  # cold, not shown, not fixed without --all
    assert "Would fix 1 sync in 1 file." in err


def test_fix_leaves_a_broken_notebook_alone(capsys, sync_me_rule):
    nb = {"cells": [code_cell(["def forward(self, x):\n", "    return sync_me(x)\n"], 1), code_cell(["y = (\n"], 2)],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    before = nbformat_text(nb)
    Path("nb.ipynb").write_text(before)
    rc, out, err = lint(capsys, "--fix", "nb.ipynb")
    assert rc == 2 and Path("nb.ipynb").read_text() == before and "cell 2, line 1" in err


def test_fix_json_edits_are_in_cell_coordinates(capsys, sync_me_rule):
    Path("nb.ipynb").write_text(nbformat_text(FIX_NB))
    rc, out, _ = lint(capsys, "--format", "json", "nb.ipynb")
    (f,) = [f for f in json.loads(out) if f["cell"] == 4 and f["line"] == 3]
    assert f["fix"]["edits"] == [{"line": 3, "column": 12, "end_line": 3, "end_column": 19,
                                  "content": "torch.no_sync"}]



class DeleteTwoLines(Rule):
    """`drop_me()` with a fix deleting its line and the next: across a cell's end or onto a magic
    line, such an edit cannot be carried back into one cell's source."""

    code = "SYN991"
    name = "drop-me"
    summary = why = rewrite = "test"
    fix_safety = "safe"

    def visit_Call(self, node, ctx):
        if isinstance(node.func, ast.Name) and node.func.id == "drop_me":
            from syncscan.lint.rule import Edit

            edit = Edit(node.lineno, 1, node.lineno + 2, 1, "")
            self.report(ctx, node, "drop it", "", Fix("safe", (edit,), message="delete two lines"))


def test_edits_that_leave_a_cell_or_touch_a_magic_are_not_applied(capsys, monkeypatch):
    rules = lambda: (DeleteTwoLines,)  # noqa: E731
    for mod in (runner, command, registry):
        monkeypatch.setattr(mod, "all_rules", rules, raising=mod is registry)  # (imported where used)
    nb = {"cells": [code_cell(["import torch\n", "drop_me()"], 1), code_cell(["y = 2\n", "z = 3"], 2),
                    code_cell(["drop_me()\n", "%time y\n", "w = 4"], 3),
                    code_cell(["drop_me()\n", "a = 5\n", "b = 6"], 4)],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    Path("nb.ipynb").write_text(nbformat_text(nb))
    rc, out, err = lint(capsys, "--fix", "--all", "nb.ipynb")
    assert not err and "Fixed 1 sync in 1 file." in out and rc == 1
    cells = json.loads(Path("nb.ipynb").read_text())["cells"]
    assert [c["source"] for c in cells] == [["import torch\n", "drop_me()"], ["y = 2\n", "z = 3"],
                                            ["drop_me()\n", "%time y\n", "w = 4"], ["b = 6"]]
