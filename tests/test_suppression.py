"""Suppression comments as a user writes them: `# noqa`, `# syncscan: ignore[...]`, on the
finding's line (first or last line of a multi-line one), and `# syncscan: skip-file`; and as
ruff users expect them: unused or unknown `SYN` codes are findings (SYN901, ruff's RUF100) with
a fix that removes them, and `--add-noqa` writes a directive on every line with a finding, so
that a large codebase can adopt the linter and fix its syncs over time."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from syncscan.cli import main

LOOP = textwrap.dedent("""\
    import torch

    def train(model, loader, opt):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
            idx = torch.nonzero(y).item(){comment}
    """)  # line 8: SYN301 (torch.nonzero) and SYN101 (.item()), both hot


def codes(capsys, tmp_path, source: str) -> list[str]:
    (tmp_path / "m.py").write_text(source)
    rc = main(["lint", "--format", "json", "--no-cache", "--all", str(tmp_path / "m.py")])
    out, err = capsys.readouterr()
    assert not err
    data = json.loads(out)
    assert rc == (1 if data else 0)
    return sorted(f["code"] for f in data)


@pytest.mark.parametrize("comment,left", [
    ("", ["SYN101", "SYN301"]),
    ("  # noqa", []),
    ("  # NOQA", []),
    ("  # noqa: SYN301", ["SYN101"]),
    ("  # noqa:SYN101", ["SYN301"]),
    ("  # noqa: SYN101, SYN301", []),
    ("  # noqa: SYN3", ["SYN101"]),  # a prefix
    ("  # noqa: E501", ["SYN101", "SYN301"]),  # another tool's code suppresses nothing of ours
    ("  # syncscan: ignore", []),
    ("  # syncscan: ignore[SYN301]", ["SYN101"]),
    ("  # syncscan: ignore[SYN101,SYN301]", []),
    ("  # syncscan: ignore[SYN101, SYN301]", []),
    ("  # type: ignore  # syncscan: ignore[SYN101]", ["SYN301"]),
])
def test_line_comments(capsys, tmp_path, comment, left):
    assert codes(capsys, tmp_path, LOOP.format(comment=comment)) == left


def test_comment_on_another_line_does_not_suppress(capsys, tmp_path):
    src = LOOP.format(comment="").replace("            opt.step()\n", "            opt.step()  # noqa\n")
    assert codes(capsys, tmp_path, src) == ["SYN101", "SYN301"]


def test_multi_line_finding_suppressed_on_its_last_line(capsys, tmp_path):
    src = textwrap.dedent("""\
        import torch

        def forward(self, x):
            return torch.nonzero(
                x
            )  # syncscan: ignore[SYN301]
        """)
    assert codes(capsys, tmp_path, src) == []
    assert codes(capsys, tmp_path, src.replace("  # syncscan: ignore[SYN301]", "")) == ["SYN301"]


def test_skip_file(capsys, tmp_path):
    src = "# syncscan: skip-file\n" + LOOP.format(comment="")
    assert codes(capsys, tmp_path, src) == []
    # anywhere in the file, on a line of its own
    assert codes(capsys, tmp_path, LOOP.format(comment="") + "# syncscan: skip-file\n") == []
    # not when it is part of a string or follows code
    assert codes(capsys, tmp_path, LOOP.format(comment="  # syncscan: skip-file")) == ["SYN101", "SYN301"]


# -- SYN901 and --add-noqa ------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def lint(capsys, *argv):
    rc = main(["lint", "--no-cache", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err, err
    return rc, out, err


def findings(capsys, *argv):
    rc, out, err = lint(capsys, "--format", "json", *argv)
    return rc, [(f["line"], f["code"], f["message"]) for f in json.loads(out)], err


# -- SYN901 --------------------------------------------------------------------------------------

@pytest.mark.parametrize("comment,expected", [
    ("  # noqa: SYN101, SYN301", []),
    ("  # noqa: SYN101, SYN301, SYN503", ["unused: `SYN503`"]),
    ("  # noqa: SYN1, SYN3, SYN5", ["unused: `SYN5`"]),  # prefixes
    ("  # noqa: E501, SYN101, SYN301, SYN031", ["no such rule: `SYN031`"]),
    ("  # syncscan: ignore[SYN101, SYN301, SYN999]", ["no such rule: `SYN999`"]),
    ("  # noqa: E501, SYN101, SYN301, SYN901", []),  # the directive may silence SYN901 itself
])
def test_unused_and_unknown_codes(capsys, comment, expected):
    Path("m.py").write_text(LOOP.format(comment=comment))
    rc, got, _ = findings(capsys, "m.py")
    assert [m.split("(", 1)[1].rstrip(")") for _, c, m in got if c == "SYN901"] == expected
    assert rc == (1 if expected else 0)


def test_unused_noqa_is_shown_in_cold_code_and_in_a_file_without_torch(capsys):
    Path("setup.py").write_text("VERSION = '1'  # noqa: SYN101\n")
    rc, got, _ = findings(capsys, "setup.py")
    assert rc == 1 and [(ln, c) for ln, c, _ in got] == [(1, "SYN901")]


def test_noqa_inside_a_string_is_not_judged(capsys):
    Path("m.py").write_text('import torch\n\nDOC = "write  # noqa: SYN101  on the line"\n')
    assert findings(capsys, "m.py")[:2] == (0, [])


def test_fix_removes_unused_codes_and_keeps_the_rest(capsys):
    Path("m.py").write_text(LOOP.format(comment="  # noqa: E501, SYN101, SYN503, SYN301  # why"))
    rc, out, _ = lint(capsys, "--fix", "m.py")
    assert rc == 0 and "Fixed 1 sync in 1 file." in out
    assert Path("m.py").read_text() == LOOP.format(comment="  # noqa: E501, SYN101, SYN301  # why")
    Path("m.py").write_text("import torch\nx = 1  # noqa: SYN503\ny = 2  # syncscan: ignore[SYN101]\n")
    rc, out, _ = lint(capsys, "--fix", "m.py")
    assert rc == 0 and Path("m.py").read_text() == "import torch\nx = 1\ny = 2\n"


def test_selecting_other_rules_hides_it(capsys):
    Path("m.py").write_text("x = 1  # noqa: SYN101\n")
    assert findings(capsys, "--ignore", "SYN9", "m.py")[:2] == (0, [])


# -- --add-noqa ----------------------------------------------------------------------------------

def test_add_noqa_silences_every_shown_finding(capsys):
    Path("a.py").write_text(LOOP.format(comment="  # noqa: E501"))
    Path("b.py").write_text(LOOP.format(comment=""))
    Path("cold.py").write_text("import torch\n\ndef setup(t):\n    return torch.nonzero(t)\n")
    rc, out, err = lint(capsys, "--add-noqa", ".")
    assert rc == 0 and not err and out == "Added 2 noqa directives.\n"
    assert Path("a.py").read_text() == LOOP.format(comment="  # noqa: E501, SYN101, SYN301")
    assert Path("b.py").read_text() == LOOP.format(comment="  # noqa: SYN101, SYN301")
    assert "noqa" not in Path("cold.py").read_text()  # cold: not shown, not touched (--all would)
    assert lint(capsys, ".")[0] == 0  # nothing left, and no SYN901: every code is used
    assert lint(capsys, "--add-noqa", ".")[1] == "Added 0 noqa directives.\n"


def test_add_noqa_puts_the_comment_where_it_can_go(capsys):
    source = textwrap.dedent('''\
        import torch

        def forward(self, x):
            print(f"""{
                x}""")
            y = torch.nonzero(x) \\
                .sum()
            return y
        ''')
    Path("m.py").write_text(source)
    rc, out, _ = lint(capsys, "--add-noqa", "m.py")
    assert rc == 0 and out == "Added 2 noqa directives.\n"
    new = Path("m.py").read_text()
    assert '        x}""")  # noqa: SYN105\n' in new  # not inside the string: on the finding's last line
    assert "        .sum()  # noqa: SYN301\n" in new  # not after the backslash: where it ends
    assert lint(capsys, "m.py")[0] == 0


def test_add_noqa_in_a_notebook(capsys):
    cells = [{"cell_type": "code", "execution_count": None, "id": "a", "metadata": {}, "outputs": [],
              "source": ["%matplotlib inline\n", "import torch\n"]},
             {"cell_type": "code", "execution_count": None, "id": "b", "metadata": {}, "outputs": [],
              "source": ["def forward(self, x):\n", "    return torch.nonzero(x)\n"]}]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    Path("nb.ipynb").write_text(json.dumps(nb, indent=1))
    rc, out, _ = lint(capsys, "--add-noqa", "nb.ipynb")
    assert rc == 0 and out == "Added 1 noqa directive.\n"
    after = json.loads(Path("nb.ipynb").read_text())
    assert after["cells"][1]["source"] == ["def forward(self, x):\n", "    return torch.nonzero(x)  # noqa: SYN301\n"]
    assert after["cells"][0] == cells[0]
    assert lint(capsys, "nb.ipynb")[0] == 0


@pytest.mark.parametrize("argv,message", [
    (["--add-noqa", "--fix", "."], "--add-noqa cannot be combined with --fix or --diff"),
    (["--add-noqa", "-"], "--add-noqa writes files: it cannot take - (stdin)"),
])
def test_add_noqa_usage_errors(capsys, argv, message):
    rc, _, err = lint(capsys, *argv)
    assert rc == 2 and err == f"syncscan: error: {message}\n"
