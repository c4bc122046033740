"""docs/rules.md is generated from the rule files and must match them; `syncscan rules` lists
and explains the rules in ruff's layout."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from syncscan.cli import main
from syncscan.lint.docs import README_END, README_START, readme_table, render
from syncscan.lint.registry import all_rules

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "rules.md"


def run(capsys, *argv):
    rc = main(["rules", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_rules_md_is_up_to_date():
    expected = render(all_rules())
    assert DOCS.is_file(), "docs/rules.md is missing: syncscan rules --format markdown > docs/rules.md"
    assert DOCS.read_text(encoding="utf-8") == expected, \
        "docs/rules.md is out of date: run `syncscan rules --format markdown > docs/rules.md`"


def test_readme_rule_table_is_up_to_date():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start, end = text.index(README_START), text.index(README_END) + len(README_END)
    assert text[start:end] == readme_table(all_rules()), \
        "README's rule table is out of date: regenerate with `python -m syncscan.lint.docs`"


def test_markdown_command_prints_the_reference(capsys):
    rc, out, _ = run(capsys, "--format", "markdown")
    assert rc == 0 and out == render(all_rules())


def test_every_rule_has_a_section_and_a_table_row():
    text = render(all_rules())
    for r in all_rules():
        assert f"\n### {r.code}\n\n`{r.name}`\n" in text
        assert f"| [{r.code}](#{r.code.lower()}) | `{r.name}` | {r.fix_safety} |" in text


def test_list(capsys):
    rc, out, _ = run(capsys)
    assert rc == 0
    rows = [ln.split() for ln in out.splitlines() if ln.startswith("SYN")]
    assert [r[0] for r in rows] == [r.code for r in all_rules()]
    for row, r in zip(rows, all_rules()):
        mark = {"none": None, "safe": "[*]", "unsafe": "[~]"}[r.fix_safety]
        assert (row[1] == mark and row[2] == r.name) if mark else row[1] == r.name


def test_prefix_lists_a_group(capsys):
    group = all_rules()[0].code[:4]
    rc, out, _ = run(capsys, group)
    codes = [ln.split()[0] for ln in out.splitlines() if ln.startswith("SYN")]
    assert rc == 0 and codes == [r.code for r in all_rules() if r.code.startswith(group)]


@pytest.mark.parametrize("rule", all_rules(), ids=[r.code for r in all_rules()])
def test_explain_has_ruffs_sections(capsys, rule):
    rc, out, _ = run(capsys, rule.code.lower())
    assert rc == 0
    assert out.startswith(f"# {rule.code} ({rule.name})\n")
    headings = [ln for ln in out.splitlines() if ln.startswith("## ")]
    want = ["## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Fix safety",
            *(["## Under torch.compile"] if not rule.code.startswith("SYN9") else [])]  # SYN9: comments
    assert headings == want
    assert " ".join(rule.why.split()) in " ".join(out.split())
    assert textwrap.dedent(rule.bad[0].code).strip() in out or any(
        textwrap.dedent(b.code).strip() in out for b in rule.bad)
    if rule.fix_safety == "unsafe":
        assert "--unsafe-fixes" in out
    # by name too
    assert run(capsys, rule.name)[1] == out


def test_unknown_rule(capsys):
    rc, out, err = run(capsys, "SYN999")
    assert rc == 2 and "unknown rule 'SYN999'" in err


def test_json(capsys):
    rc, out, _ = run(capsys, "--format", "json")
    data = json.loads(out)
    assert [d["code"] for d in data] == [r.code for r in all_rules()]
    assert set(data[0]) == {"code", "name", "summary", "why", "rewrite", "fix_safety", "fix_assumption"}


def test_regenerate_rewrites_only_what_is_stale(tmp_path):
    import shutil

    from syncscan.lint.docs import regenerate

    (tmp_path / "docs").mkdir()
    for name in ("README.md", "docs/rules.md", "docs/compile.md"):
        shutil.copy(REPO / name, tmp_path / name)
    assert regenerate(tmp_path) == []
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("| `linalg-without-ex` |", "| `stale` |"),
                      encoding="utf-8")
    assert regenerate(tmp_path) == ["README.md"]
    assert readme.read_text(encoding="utf-8") == (REPO / "README.md").read_text(encoding="utf-8")
