"""`syncscan lint` as a user runs it: formats, filtering, exit codes, stdin, fixes, the cache.

Most tests run the CLI in-process (`syncscan.cli.main`) in a temporary folder; a few run the
console script and `python -m syncscan` as subprocesses. Fix tests use a rule defined here
(registered for the test only) so that they do not depend on which rules have landed; one test
runs a real rule's documented fix through the CLI.
"""

from __future__ import annotations

import ast
import io
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from syncscan.cli import main
from syncscan.lint import cache as cache_mod
from syncscan.lint import command, registry, runner
from syncscan.lint.report import JSON_KEYS
from syncscan.lint.rule import Fix, Rule

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "tests" / "data" / "sarif-schema-2.1.0.json"

HOT = textwrap.dedent("""\
    import torch

    def train(model, loader, opt):
        for x, y in loader:
            loss = model(x).sum()
            loss.backward()
            opt.step()
            print(loss.item())
    """)  # SYN101 at 8:19, hot
COLD = textwrap.dedent("""\
    import torch

    def setup(t):
        return torch.nonzero(t)
    """)  # SYN301 at 4:12, cold
CLEAN = "import torch\n\nx = torch.zeros(3)\n"


def lint(capsys, *argv, stdin: bytes | None = None, monkeypatch=None):
    if stdin is not None:
        class _Stdin:
            buffer = io.BytesIO(stdin)
        monkeypatch.setattr(sys, "stdin", _Stdin())
    try:
        rc = main(["lint", *argv])
    except SystemExit as e:  # argparse's usage errors
        rc = e.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return rc, out, err


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write(name: str, text: str) -> Path:
    p = Path(name)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


# -- a rule with fixes, for the fix machinery -------------------------------------------------

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
            self.report(ctx, node, f"`{ctx.text(node)}` syncs", f"torch.no_sync({ctx.text(node.args[0])})", fix)


@pytest.fixture
def sync_me_rule(monkeypatch):
    rules = lambda: (SyncMe,)  # noqa: E731
    for mod in (runner, command, registry):  # (runner and command import it where they use it)
        monkeypatch.setattr(mod, "all_rules", rules, raising=mod is registry)
    return SyncMe


FIXABLE = textwrap.dedent("""\
    def forward(self, x):
        a = sync_me(x)
        b = maybe_sync(x)
        return a + b


    def setup(x):
        return sync_me(x)
    """)  # hot: lines 2 (safe), 3 (unsafe); cold: line 8 (safe)


# -- text ---------------------------------------------------------------------------------------

def test_text_shows_location_code_context_source_carets_and_rewrite(capsys):
    write("a.py", HOT)
    rc, out, _ = lint(capsys, "a.py")
    assert rc == 1
    lines = out.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("a.py:8:"))
    assert lines[head].startswith("a.py:8:15: SYN101 [hot] ")
    assert "loss.item()" in lines[head] and "syncs" in lines[head]  # the op and why
    assert lines[head + 1].strip() == "print(loss.item())"
    assert lines[head + 2] == "    " + " " * len("print(") + "^" * len("loss.item()")
    assert lines[head + 3].startswith("  rewrite: ")
    assert "Found 1 sync (1 hot) in 1 file." in out


def test_summary_counts_the_files_with_findings(capsys):
    write("a.py", HOT)
    write("b.py", CLEAN)
    rc, out, _ = lint(capsys, "a.py", "b.py")
    assert rc == 1 and "Found 1 sync (1 hot) in 1 of 2 files." in out


def test_fixable_finding_says_fix_safety(capsys, sync_me_rule):
    write("m.py", FIXABLE)
    rc, out, _ = lint(capsys, "m.py")
    assert rc == 1
    assert "  rewrite: torch.no_sync(x)" in out
    assert "  fix (safe): call `torch.no_sync` [--fix]" in out
    assert "  fix (unsafe): call `torch.no_sync`; assumes the test says so [--fix --unsafe-fixes]" in out
    assert "1 fixable with --fix, 1 more with --fix --unsafe-fixes." in out


def test_default_shows_hot_only_and_all_adds_cold(capsys):
    write("a.py", HOT)
    write("b.py", COLD)
    rc, out, _ = lint(capsys, "a.py", "b.py")
    assert rc == 1 and "SYN101 [hot]" in out and "SYN301" not in out
    assert "1 more in cold code" in out and "--all" in out
    rc, out, _ = lint(capsys, "--all", "a.py", "b.py")
    assert rc == 1 and "b.py:4:12: SYN301 [cold]" in out


def test_only_cold_findings_exit_zero_without_all(capsys):
    write("b.py", COLD)
    rc, out, _ = lint(capsys, "b.py")
    assert rc == 0 and "SYN301" not in out.split("Found")[0]
    assert lint(capsys, "--all", "b.py")[0] == 1


def test_no_show_source_and_quiet(capsys):
    write("a.py", HOT)
    rc, out, _ = lint(capsys, "--no-show-source", "--quiet", "a.py")
    assert rc == 1
    assert "^" not in out and "Found" not in out
    assert out.splitlines()[0].startswith("a.py:8:15: SYN101")


def test_statistics(capsys):
    write("a.py", HOT)
    write("b.py", COLD + "\n\ndef other(t):\n    return torch.nonzero(t)\n")
    rc, out, _ = lint(capsys, "--statistics", "--all", "a.py", "b.py")
    assert rc == 1
    rows = [ln.split() for ln in out.splitlines() if ln.strip() and not ln.startswith("Found")]
    assert rows[0][:3] == ["2", "SYN301", "nonzero"] and rows[0][3:5] == ["(0", "hot)"]
    assert rows[1][:3] == ["1", "SYN101", "item"] and rows[1][3:5] == ["(1", "hot)"]
    assert "print(loss.item())" not in out  # counts, not the findings


# -- exit codes ---------------------------------------------------------------------------------

def test_exit_codes(capsys):
    write("clean.py", CLEAN)
    write("a.py", HOT)
    assert lint(capsys, "clean.py") == (0, "No syncs found in 1 file.\n", "")
    assert lint(capsys, "a.py")[0] == 1
    assert lint(capsys, "--exit-zero", "a.py")[0] == 0
    rc, out, err = lint(capsys, "a.py", "missing.py")
    assert rc == 2 and "SYN101" in out and "syncscan: error: missing.py: no such file or directory" in err


@pytest.mark.parametrize("argv", [["--select", "XYZ1"], ["--ignore", "SYN9999"], ["--format", "xml"],
                                  ["--unsafe-fixes"], ["--jobs", "0"], ["--bogus"], ["--stdin-filename", "x.py"]])
def test_usage_errors_exit_2_with_one_line(capsys, argv):
    write("a.py", HOT)
    rc, out, err = lint(capsys, *argv, "a.py")
    assert rc == 2
    assert "syncscan: error:" in err and len([ln for ln in err.splitlines() if "error" in ln]) == 1


# -- selection ----------------------------------------------------------------------------------

def test_select_and_ignore_by_code_and_prefix(capsys):
    write("a.py", HOT + "\n\ndef forward(self, x):\n    return torch.nonzero(x)\n")
    codes = lambda out: sorted({w for w in out.split() if w.startswith("SYN") and w[3:].isdigit()})  # noqa: E731
    assert codes(lint(capsys, "a.py")[1]) == ["SYN101", "SYN301"]
    assert codes(lint(capsys, "--select", "SYN3", "a.py")[1]) == ["SYN301"]
    assert codes(lint(capsys, "--select", "syn101", "a.py")[1]) == ["SYN101"]
    assert codes(lint(capsys, "--ignore", "SYN3", "a.py")[1]) == ["SYN101"]
    assert codes(lint(capsys, "--select", "SYN1,SYN3", "--ignore", "SYN301", "a.py")[1]) == ["SYN101"]
    # the most specific prefix wins (ruff's rule)
    assert codes(lint(capsys, "--select", "SYN301", "--ignore", "SYN3", "a.py")[1]) == ["SYN301"]
    rc, out, _ = lint(capsys, "--ignore", "SYN", "a.py")
    assert rc == 0 and codes(out) == []


# -- stdin --------------------------------------------------------------------------------------

def test_stdin(capsys, monkeypatch):
    rc, out, _ = lint(capsys, "-", stdin=HOT.encode(), monkeypatch=monkeypatch)
    assert rc == 1 and out.startswith("-:8:15: SYN101 [hot]")
    rc, out, _ = lint(capsys, "--stdin-filename", "pkg/train.py", "-", stdin=HOT.encode(), monkeypatch=monkeypatch)
    assert rc == 1 and out.startswith("pkg/train.py:8:15: SYN101 [hot]")
    assert "print(loss.item())" in out  # the source line is shown for stdin too
    rc, out, _ = lint(capsys, "--format", "json", "--stdin-filename", "t.py", "-", stdin=HOT.encode(),
                      monkeypatch=monkeypatch)
    assert [f["path"] for f in json.loads(out)] == ["t.py"]
    rc, out, _ = lint(capsys, "--stdin-filename", "t.py", stdin=HOT.encode(), monkeypatch=monkeypatch)
    assert rc == 1 and out.startswith("t.py:8:15: SYN101")  # a name and no path: stdin


def test_stdin_filename_gets_per_file_ignores(capsys, monkeypatch):
    write("pyproject.toml", '[tool.syncscan]\nper-file-ignores = { "scripts/*" = ["SYN101"] }\n')
    rc, out, _ = lint(capsys, "--stdin-filename", "scripts/t.py", "-", stdin=HOT.encode(), monkeypatch=monkeypatch)
    assert rc == 0 and "SYN101" not in out
    rc, out, _ = lint(capsys, "--stdin-filename", "src/t.py", "-", stdin=HOT.encode(), monkeypatch=monkeypatch)
    assert rc == 1


def test_stdin_binary_is_an_error(capsys, monkeypatch):
    rc, out, err = lint(capsys, "-", stdin=b"\x00\x01\x02", monkeypatch=monkeypatch)
    assert rc == 2 and "binary" in err


def test_stdin_fix_writes_fixed_code_to_stdout(capsys, monkeypatch, sync_me_rule):
    rc, out, _ = lint(capsys, "--fix", "-", stdin=FIXABLE.encode(), monkeypatch=monkeypatch)
    assert rc == 0
    assert out.startswith("import torch\n")
    assert out.split("\n", 1)[1].lstrip("\n") == FIXABLE.replace("a = sync_me(x)", "a = torch.no_sync(x)")


def test_stdin_fix_echoes_unparsable_input(capsys, monkeypatch, sync_me_rule):
    rc, out, err = lint(capsys, "--fix", "-", stdin=b"def f(:\n  sync_me(x)\n", monkeypatch=monkeypatch)
    assert rc == 2 and out == "def f(:\n  sync_me(x)\n" and "syntax error" in err


# -- json ---------------------------------------------------------------------------------------

def test_json_key_set_is_stable(capsys, sync_me_rule):
    write("m.py", FIXABLE)
    rc, out, _ = lint(capsys, "--format", "json", "m.py")
    data = json.loads(out)
    assert rc == 1 and isinstance(data, list) and len(data) == 2  # hot only, as in text
    for f in data:
        assert set(f) == set(JSON_KEYS)
    assert set(JSON_KEYS) == {"path", "line", "column", "end_line", "end_column", "code", "name", "message",
                              "context", "confidence", "suggestion", "fix", "compile"}
    assert all(f["compile"] is None for f in data)  # nothing here is compiled
    first = data[0]
    assert (first["path"], first["line"], first["column"], first["end_line"], first["end_column"]) == \
        ("m.py", 2, 9, 2, 19)
    assert first["code"] == "SYN990" and first["name"] == "sync-me" and first["context"] == "hot"
    assert first["suggestion"] == "torch.no_sync(x)"
    assert first["fix"]["applicability"] == "safe"
    assert first["fix"]["edits"] == [{"line": 2, "column": 9, "end_line": 2, "end_column": 16,
                                      "content": "torch.no_sync"}]
    assert data[1]["fix"]["applicability"] == "unsafe"


def test_json_follows_the_text_filter_and_all(capsys):
    write("a.py", HOT)
    write("b.py", COLD)
    data = json.loads(lint(capsys, "--format", "json", "a.py", "b.py")[1])
    assert [(f["code"], f["context"]) for f in data] == [("SYN101", "hot")]
    assert data[0]["fix"] is None
    data = json.loads(lint(capsys, "--format", "json", "--all", "a.py", "b.py")[1])
    assert sorted((f["code"], f["context"]) for f in data) == [("SYN101", "hot"), ("SYN301", "cold")]


def test_json_no_findings_is_an_empty_array(capsys):
    write("clean.py", CLEAN)
    assert lint(capsys, "--format", "json", "clean.py") == (0, "[]\n", "")


# -- sarif --------------------------------------------------------------------------------------

def _sarif(capsys, *argv):
    rc, out, _ = lint(capsys, "--format", "sarif", *argv)
    return rc, json.loads(out)


def test_sarif_validates_against_the_schema(capsys, sync_me_rule):
    jsonschema = pytest.importorskip("jsonschema")
    write("sub/m.py", FIXABLE)
    rc, doc = _sarif(capsys, "--all", "./sub/m.py")
    assert rc == 1
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft4Validator(schema).iter_errors(doc), key=str)
    assert not errors, errors[0]
    rc, doc = _sarif(capsys, "./sub/m.py")
    assert not list(jsonschema.Draft4Validator(schema).iter_errors(doc))


def test_sarif_has_what_github_code_scanning_reads(capsys):
    write("a.py", HOT)
    write("pkg/b.py", COLD)
    rc, doc = _sarif(capsys, "--all", "./a.py", os.path.abspath("pkg/b.py"))
    assert rc == 1
    assert doc["version"] == "2.1.0" and doc["$schema"].startswith("https://")
    (run,) = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "syncscan" and driver["version"]
    assert [r["id"] for r in driver["rules"]] == ["SYN101", "SYN301"]
    assert all(r["shortDescription"]["text"] and r["helpUri"] for r in driver["rules"])
    by_rule = {r["ruleId"]: r for r in run["results"]}
    assert set(by_rule) == {"SYN101", "SYN301"}
    for res in run["results"]:
        assert driver["rules"][res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["message"]["text"]
        (loc,) = res["locations"]
        assert loc["physicalLocation"]["region"]["startLine"] >= 1
    uri = lambda code: by_rule[code]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]  # noqa: E731
    assert uri("SYN101") == "a.py"  # relative, no leading ./
    assert uri("SYN301") == "pkg/b.py"  # an absolute path becomes relative too
    assert by_rule["SYN101"]["level"] == "error" and by_rule["SYN301"]["level"] == "warning"
    assert by_rule["SYN101"]["locations"][0]["physicalLocation"]["region"] == \
        {"startLine": 8, "startColumn": 15, "endLine": 8, "endColumn": 26}


def test_sarif_uris_are_relative_to_the_repository_root(capsys, tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    write("src/pkg/a.py", HOT)
    monkeypatch.chdir(tmp_path / "src")
    rc, doc = _sarif(capsys, "pkg/a.py")
    loc = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc["uri"] == "src/pkg/a.py"


def test_sarif_uri_of_odd_names(capsys):
    write(".hidden dir/a b.py", HOT)
    rc, doc = _sarif(capsys, "./.hidden dir/a b.py")
    uri = doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == ".hidden%20dir/a%20b.py"


def test_sarif_without_findings_is_valid(capsys):
    write("clean.py", CLEAN)
    rc, doc = _sarif(capsys, "clean.py")
    assert rc == 0 and doc["runs"][0]["results"] == [] and doc["runs"][0]["tool"]["driver"]["rules"] == []


# -- github -------------------------------------------------------------------------------------

def test_github_annotations(capsys):
    write("a.py", HOT)
    write("b.py", COLD)
    rc, out, _ = lint(capsys, "--format", "github", "--all", "./a.py", "b.py")
    assert rc == 1
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("::error file=a.py,line=8,col=15,endLine=8,endColumn=26,title=syncscan SYN101 (item)::")
    assert lines[1].startswith("::warning file=b.py,line=4,col=12,")
    assert "SYN101 [hot]" in lines[0]


def test_github_escaping():
    from syncscan.lint.report import github
    from syncscan.lint.rule import Finding

    f = Finding("dir,x/a:b.py", 3, 1, 3, 5, "SYN101", "item", "50% of\nsteps\r wait", "use a, b: c",
                context="hot")
    (line,) = github([f]).splitlines()
    assert line.startswith("::error file=dir%2Cx/a%3Ab.py,line=3,col=1,")
    data = line.split("::", 2)[2]
    assert data == "SYN101 [hot] 50%25 of%0Asteps%0D wait Rewrite: use a, b: c"


# -- fixes through the CLI ----------------------------------------------------------------------

def test_fix_applies_safe_fixes_of_shown_findings(capsys, sync_me_rule):
    p = write("m.py", FIXABLE)
    rc, out, _ = lint(capsys, "--fix", "m.py")
    assert rc == 1  # the unsafe one is left
    assert "Fixed 1 sync in 1 file." in out
    text = p.read_text()
    assert text.startswith("import torch\n")
    assert "a = torch.no_sync(x)" in text and "b = maybe_sync(x)" in text
    assert "return sync_me(x)" in text  # cold: not shown, not fixed
    rc, out, _ = lint(capsys, "--fix", "--unsafe-fixes", "m.py")
    assert rc == 0 and "b = torch.no_sync(x)" in p.read_text()
    rc, out, _ = lint(capsys, "--fix", "--all", "m.py")
    assert rc == 0 and "sync_me" not in p.read_text()
    assert p.read_text().count("import torch") == 1


def test_diff_prints_and_writes_nothing(capsys, sync_me_rule):
    p = write("m.py", FIXABLE)
    rc, out, err = lint(capsys, "--diff", "m.py")
    assert rc == 1
    assert out.startswith("--- a/m.py\n+++ b/m.py\n")
    assert "-    a = sync_me(x)\n+    a = torch.no_sync(x)\n" in out
    assert "+import torch\n" in out and "maybe_sync" not in "".join(
        ln for ln in out.splitlines(True) if ln.startswith(("+", "-")) and not ln.startswith(("+++", "---")))
    assert "Would fix 1 sync in 1 file." in err
    assert p.read_text() == FIXABLE
    rc, out, _ = lint(capsys, "--diff", "--unsafe-fixes", "m.py")
    assert rc == 1 and "+    b = torch.no_sync(x)" in out
    write("clean.py", CLEAN)
    assert lint(capsys, "--diff", "clean.py")[:2] == (0, "")


def test_fix_never_touches_a_file_that_does_not_parse(capsys, sync_me_rule):
    bad = "def forward(self, x):\n    a = sync_me(x)\n    return (\n"
    p = write("bad.py", bad)
    good = write("good.py", FIXABLE)
    rc, out, err = lint(capsys, "--fix", "bad.py", "good.py")
    assert rc == 2
    assert p.read_text() == bad
    assert "syncscan: error: bad.py: syntax error" in err
    assert "torch.no_sync" in good.read_text()  # the other file is still fixed


def test_fix_writes_atomically_and_keeps_the_mode(capsys, sync_me_rule):
    p = write("m.py", FIXABLE)
    os.chmod(p, 0o640)
    inode = p.stat().st_ino
    assert lint(capsys, "--fix", "m.py")[0] == 1
    assert stat.S_IMODE(p.stat().st_mode) == 0o640
    assert p.stat().st_ino != inode  # replaced by a rename, never half-written in place
    assert sorted(os.listdir(".")) == [".syncscan_cache", "m.py"]  # no temporary file left


def test_fix_through_a_symlink_writes_the_target(capsys, sync_me_rule):
    target = write("real/m.py", FIXABLE)
    os.symlink("real/m.py", "link.py")
    assert lint(capsys, "--fix", "link.py")[0] == 1
    assert os.path.islink("link.py") and "torch.no_sync" in target.read_text()


def test_fix_keeps_a_utf8_bom(capsys, sync_me_rule):
    p = Path("m.py")
    p.write_bytes(b"\xef\xbb\xbf" + FIXABLE.encode())
    lint(capsys, "--fix", "m.py")
    data = p.read_bytes()
    assert data.startswith(b"\xef\xbb\xbfimport torch\n") and b"torch.no_sync" in data


def test_fix_leaves_other_encodings_alone(capsys, sync_me_rule):
    src = "# -*- coding: latin-1 -*-\n# caf\xe9\n" + FIXABLE
    p = Path("m.py")
    p.write_bytes(src.encode("latin-1"))
    rc, _, err = lint(capsys, "--fix", "m.py")
    assert rc == 2 and "encoding" in err and p.read_bytes() == src.encode("latin-1")


def test_a_real_rule_fix_through_the_cli(capsys):
    """The first safe fix a landed rule documents (`Bad(..., fixed=...)`), end to end."""
    examples = [(r, b) for r in registry.all_rules() for b in r.bad if b.fixed and not b.unsafe]
    if not examples:
        pytest.skip("no rule documents a safe fix yet")
    rule, bad = examples[0]
    p = write("ex.py", textwrap.dedent(bad.code))
    rc, out, err = lint(capsys, "--fix", "--all", "--select", rule.code, "ex.py")
    assert rc in (0, 1) and not err
    assert p.read_text().strip() == textwrap.dedent(bad.fixed).strip()


# -- cache --------------------------------------------------------------------------------------

@pytest.fixture
def parse_count(monkeypatch):
    calls = []
    real = runner.lint_source

    def counting(path, *a, **k):
        calls.append(path)
        return real(path, *a, **k)

    monkeypatch.setattr(runner, "lint_source", counting)
    return calls


def test_cache_reuses_results_and_notices_edits(capsys, parse_count):
    write("a.py", HOT)
    b = write("b.py", COLD)
    first = lint(capsys, "--all", "a.py", "b.py")
    assert sorted(parse_count) == ["a.py", "b.py"]
    assert list(Path(".syncscan_cache").glob(f"{cache_mod.FORMAT}-*/files/*/*{cache_mod.SUFFIX}"))
    parse_count.clear()
    assert lint(capsys, "--all", "a.py", "b.py") == first  # same output, nothing parsed
    assert parse_count == []
    b.write_text(COLD + "\n\ndef more(t):\n    return torch.nonzero(t)\n")
    rc, out, _ = lint(capsys, "--all", "a.py", "b.py")
    assert parse_count == ["b.py"] and out.count("SYN301") == 2


def test_no_cache_writes_none(capsys, parse_count):
    write("a.py", HOT)
    lint(capsys, "--no-cache", "a.py")
    lint(capsys, "--no-cache", "a.py")
    assert parse_count == ["a.py", "a.py"]
    assert not Path(".syncscan_cache").exists()


# -- the installed commands ---------------------------------------------------------------------

def _console_script() -> str | None:
    exe = Path(sys.executable).with_name("syncscan")
    return str(exe) if exe.exists() else None


@pytest.mark.parametrize("how", ["console-script", "python-m"])
def test_console_script_and_python_m(tmp_path, how):
    (tmp_path / "a.py").write_text(HOT)
    if how == "console-script":
        exe = _console_script()
        if exe is None:
            pytest.skip("the syncscan console script is not installed beside this Python")
        cmd = [exe]
    else:
        cmd = [sys.executable, "-m", "syncscan"]
    r = subprocess.run(cmd + ["lint", "--no-cache", "a.py"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1 and "a.py:8:15: SYN101 [hot]" in r.stdout and "Traceback" not in r.stderr
    r = subprocess.run(cmd + ["lint", "--select", "NOPE"], cwd=tmp_path, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and r.stderr.startswith("syncscan: error:")


def test_lint_does_not_import_torch(tmp_path):
    """The pre-commit environment has no torch: linting must not need it."""
    (tmp_path / "a.py").write_text(HOT)
    code = ("import sys\nfrom syncscan.cli import main\nrc = main(['lint', '--no-cache', '--all', 'a.py'])\n"
            "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', rc)\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.stdout.strip().endswith("NO-TORCH 1"), r.stdout + r.stderr


def test_explicit_paths_with_no_files_lints_nothing(capsys):
    write("a.py", HOT)
    assert lint(capsys, "--explicit-paths") == (0, "No files to lint.\n", "")
    assert lint(capsys, "--explicit-paths", "--format", "json") == (0, "[]\n", "")
    assert lint(capsys, "--explicit-paths", "--fix")[0] == 0
    assert lint(capsys, "--explicit-paths", "a.py")[0] == 1
    assert lint(capsys)[0] == 1  # without it, no path means the current folder


# -- issue 14: ruff's conventions ----------------------------------------------------------------

def test_output_format_is_an_alias_of_format(capsys):
    write("a.py", HOT)
    assert lint(capsys, "--output-format", "json", "a.py")[1] == lint(capsys, "--format", "json", "a.py")[1]
    rc, _, err = lint(capsys, "--output-format", "xml", "a.py")
    assert rc == 2 and "invalid choice: 'xml'" in err


def test_gitlab_code_quality_report(capsys):
    write("a.py", HOT)
    write("pkg/b.py", COLD)
    rc, out, _ = lint(capsys, "--format", "gitlab", "--all", "./a.py", "pkg/b.py")
    assert rc == 1
    issues = json.loads(out)
    assert [(i["check_name"], i["severity"], i["location"]) for i in issues] == [
        ("SYN101", "major", {"path": "a.py", "lines": {"begin": 8, "end": 8}}),
        ("SYN301", "minor", {"path": "pkg/b.py", "lines": {"begin": 4, "end": 4}})]
    for i in issues:  # what GitLab requires of each issue
        assert i["description"].startswith(i["check_name"]) and i["type"] == "issue"
        assert isinstance(i["fingerprint"], str) and len(i["fingerprint"]) == 32
    assert len({i["fingerprint"] for i in issues}) == 2
    write("clean.py", CLEAN)
    assert lint(capsys, "--format", "gitlab", "clean.py")[:2] == (0, "[]\n")


def test_junit_report(capsys):
    import xml.etree.ElementTree as ET

    write("a.py", HOT)
    write("b.py", HOT.replace("print(loss.item())", "print(loss.item(), loss.tolist())"))
    rc, out, _ = lint(capsys, "--format", "junit", "a.py", "b.py")
    assert rc == 1
    root = ET.fromstring(out.split("\n", 1)[1])
    assert root.tag == "testsuites" and root.get("tests") == root.get("failures") == "3"
    suites = {s.get("name"): s for s in root}
    assert set(suites) == {"a.py", "b.py"} and suites["b.py"].get("failures") == "2"
    case = suites["a.py"].find("testcase")
    assert case.get("name") == "org.syncscan.SYN101" and case.get("line") == "8"
    assert case.find("failure").text.startswith("line 8, col 15, `loss.item()` syncs")
    write("clean.py", CLEAN)
    rc, out, _ = lint(capsys, "--format", "junit", "clean.py")
    root = ET.fromstring(out.split("\n", 1)[1])
    assert rc == 0 and root.get("failures") == "0" and root.find("testsuite/testcase").get("name") == "No syncs found"


def test_sarif_partial_fingerprints_follow_the_code_not_the_line_number(capsys):
    body = "        print(loss.item())\n"
    write("a.py", HOT + "\n\ndef step(model, x, opt):\n    model(x).sum().backward()\n    opt.step()\n    for _ in x:\n"
          + body + body)
    _, doc = _sarif(capsys, "a.py")
    before = [r["partialFingerprints"]["syncscanFingerprint/v1"] for r in doc["runs"][0]["results"]]
    assert len(before) == 3 and len(set(before)) == 3  # identical lines are numbered apart
    write("a.py", "# a comment\n\n" + Path("a.py").read_text())  # every line moves down
    _, doc = _sarif(capsys, "a.py")
    after = [(r["locations"][0]["physicalLocation"]["region"]["startLine"],
              r["partialFingerprints"]["syncscanFingerprint/v1"]) for r in doc["runs"][0]["results"]]
    assert [fp for _, fp in after] == before and after[0][0] == 10


def test_show_fixes_lists_what_was_fixed(capsys, sync_me_rule):
    write("m.py", FIXABLE)
    write("n.py", FIXABLE)
    rc, out, _ = lint(capsys, "--fix", "--show-fixes", "--unsafe-fixes", "m.py", "n.py")
    assert rc == 0
    assert "Fixed 4 syncs in 2 files:\n- m.py:\n    2 × SYN990 (sync-me)\n- n.py:\n    2 × SYN990 (sync-me)\n" in out
    write("m.py", FIXABLE)
    rc, out, err = lint(capsys, "--diff", "--show-fixes", "m.py")
    assert rc == 1 and err == "Would fix 1 sync in 1 file:\n- m.py:\n    1 × SYN990 (sync-me)\n"
    rc, _, err = lint(capsys, "--show-fixes", "m.py")
    assert rc == 2 and "--show-fixes needs --fix or --diff" in err


def test_progress_on_a_terminal_only(capsys, monkeypatch):
    """A long run on a terminal shows `Linting: done/total files` on stderr, erased at the end;
    with stderr not a terminal (here, captured) nothing is written there."""
    from syncscan.lint.progress import Progress

    for i in range(5):
        write(f"m{i}.py", HOT)
    rc, _, err = lint(capsys, "--no-cache", "-j", "1", ".")
    assert rc == 1 and err == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    ticks = iter(range(0, 1000, 2))  # every call of the clock: two seconds later
    monkeypatch.setattr(Progress, "on_terminal",
                        classmethod(lambda cls, stream, enabled=True: cls(term, clock=lambda: next(ticks))))
    rc, out, _ = lint(capsys, "--no-cache", "-j", "1", ".")
    assert rc == 1 and "Found 5 syncs" in out
    shown = term.getvalue()
    assert "\rLinting: 1/5 files" in shown and "\rLinting: 5/5 files" in shown
    assert shown.endswith("\r" + " " * len("Linting: 5/5 files") + "\r")  # erased


def test_progress_waits_and_is_throttled():
    from syncscan.lint.progress import Progress

    out = io.StringIO()
    now = [0.0]
    p = Progress(out, clock=lambda: now[0], delay=1.0, interval=0.5)
    p(1, 100)
    assert out.getvalue() == ""  # a short run prints nothing
    now[0] = 1.2
    p(2, 100)
    now[0] = 1.3
    p(3, 100)  # too soon
    now[0] = 1.3
    p(100, 100)  # the last one is always drawn
    assert out.getvalue() == "\rLinting: 2/100 files\rLinting: 100/100 files"
    assert Progress.on_terminal(out) is None
