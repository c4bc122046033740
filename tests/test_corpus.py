"""The linter on real code: every .py file of the installed torch and torchvision and of the
standard library lints with no internal error and no traceback (files that cannot be parsed get
one line each), and the engine's fast paths give exactly what the `ast` functions they replace
give. benchmarks/lint_corpus.py reports the same corpus in detail (findings per rule, samples).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

from syncscan.lint import cache as cache_mod
from syncscan.lint import hotpath
from syncscan.lint.engine import FileResult, LintContext, lint_source
from syncscan.lint.imports import import_map
from syncscan.lint.tree import LEAF_TYPES as _LEAF_TYPES
from syncscan.lint.tree import children as _children
from syncscan.lint.tree import segment as _segment
from syncscan.lint.tree import split_lines_no_ff as _split_lines_no_ff
from syncscan.lint.tree import statements
from syncscan.lint.tree import walk as _walk
from syncscan.lint.registry import all_rules
from syncscan.lint.rule import Bad, Good, Rule

STDLIB = Path(sysconfig.get_paths()["stdlib"])


def _installed(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)  # finds the folder without importing the package
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _lint_cli(path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    # --no-cache: a cold run, nothing read from or written to a cache
    return subprocess.run([sys.executable, "-m", "syncscan", "lint", "--all", "--format", "json", "--no-cache",
                           "--exit-zero", str(path)], capture_output=True, text=True, cwd=tmp_path, timeout=900)


def _check_clean(proc: subprocess.CompletedProcess, root: Path) -> list:
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert "internal error" not in proc.stderr, "\n".join(
        ln for ln in proc.stderr.splitlines() if "internal error" in ln)
    assert proc.returncode in (0, 2), (proc.returncode, proc.stderr[-2000:])
    for line in proc.stderr.splitlines():  # only one-line errors that name a file of the tree
        assert line.startswith(f"syncscan: error: {root}"), line
    findings = json.loads(proc.stdout)
    assert isinstance(findings, list)
    return findings


@pytest.mark.slow
@pytest.mark.parametrize("package", ["torch", "torchvision"])
def test_installed_package_lints_without_crash(package, tmp_path):
    root = _installed(package)
    if root is None:
        pytest.skip(f"{package} is not installed")
    findings = _check_clean(_lint_cli(root, tmp_path), root)
    assert all(f["path"].startswith(str(root)) for f in findings)


@pytest.mark.slow
def test_stdlib_lints_without_crash(tmp_path):
    proc = _lint_cli(STDLIB, tmp_path)
    _check_clean(proc, STDLIB)
    # the stdlib's test data holds files Python 3 cannot parse: each is one line, and a run with
    # such files exits 2
    if "syntax error" in proc.stderr:
        assert proc.returncode == 2


# -- bad input: one line naming the file, the others still linted, exit 2 ---------------------------

GOOD = """
import torch
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        print(loss.item())
"""


def test_bad_files_get_one_line_each_and_the_rest_is_linted(tmp_path):
    d = tmp_path / "proj"
    d.mkdir()
    (d / "good.py").write_text(GOOD)
    (d / "syntax.py").write_text("import torch\ndef f(:\n")
    (d / "nul.py").write_bytes(b"import torch\x00\n")
    (d / "latin.py").write_bytes(b"import torch\nx = '\xff\xfe'\n")
    (d / "deep.py").write_text("import torch\nx = " + "-" * 100_000 + "torch.ones(1)\n")
    (d / "chain.py").write_text("import torch\nx = torch" + ".a" * 200_000 + "\n")
    (d / "nested.py").write_text("import torch\nx = " + "(" * 300 + "1" + ")" * 300 + "\n")
    (d / "dir.py").mkdir()
    (d / "loop.py").symlink_to(d / "loop.py")
    proc = subprocess.run([sys.executable, "-m", "syncscan", "lint", "--no-cache", "--format", "json", str(d)],
                          capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    for name in ("syntax.py", "nul.py", "latin.py", "deep.py", "chain.py", "nested.py", "loop.py"):
        hits = [ln for ln in lines if f"{d / name}:" in ln]
        assert len(hits) == 1 and hits[0].startswith("syncscan: error: "), (name, lines)
    found = json.loads(proc.stdout)
    assert [(Path(f["path"]).name, f["code"]) for f in found] == [("good.py", "SYN101")]


class _Crashes(Rule):
    code = "SYN999"
    name = "crashes"
    summary = why = rewrite = "test only"
    bad = (Bad("x.item()"),)
    good = (Good("pass"),)

    def visit_Call(self, node, ctx):
        raise IndexError("a bug in a rule")


def test_a_crashing_rule_is_one_line_for_its_file_and_the_other_rules_still_run():
    item = next(r for r in all_rules() if r.code == "SYN101")
    res = lint_source("crash.py", textwrap.dedent(GOOD), [_Crashes(), item()])
    assert res.error is not None and "\n" not in res.error
    assert res.error.startswith("internal error in rule SYN999 at line ") and "IndexError" in res.error
    assert [f.code for f in res.findings] == ["SYN101"]


def test_a_worker_that_dies_costs_only_its_file(tmp_path, monkeypatch):
    """A worker process killed mid-run (out of memory, a crash in C): the other files are still
    linted, and the one that killed it is named."""
    if not hasattr(os, "fork"):
        pytest.skip("needs fork (the workers inherit this test's patch)")
    from syncscan.lint import runner
    from syncscan.lint.config import Config

    parent = os.getpid()
    real = runner.lint_source

    def dies_on_killer(path, text, rules, hot=()):
        if path.endswith("killer.py") and os.getpid() != parent:
            os._exit(9)
        return real(path, text, rules, hot)

    monkeypatch.setattr(runner, "lint_source", dies_on_killer)
    body = textwrap.dedent(GOOD) + "\n".join(f"y{i} = {i}" for i in range(6000)) + "\n"
    for i in range(6):
        (tmp_path / f"f{i}.py").write_text(body)
    (tmp_path / "killer.py").write_text(body)
    run = runner.lint_paths([str(tmp_path)], Config(), use_cache=False, jobs=2)
    assert [p for p, _ in run.errors] == [str(tmp_path / "killer.py")]
    assert "internal error" in run.errors[0][1]
    assert sorted(Path(f.path).name for f in run.findings) == sorted(f"f{i}.py" for i in range(6))


# -- the fast paths are exact ----------------------------------------------------------------------

def _sample_files() -> list[Path]:
    """A spread of real modules: every 25th stdlib file, plus torch's if installed."""
    files = sorted(p for p in STDLIB.rglob("*.py") if "site-packages" not in p.parts)[::25]
    torch_dir = _installed("torch")
    if torch_dir is not None:
        files += sorted(torch_dir.rglob("*.py"))[::60]
    return files


EDGE_CASES = [
    "x = 1\r\ny = 'é' + f(a,\r\n  b)\r\n",
    "a = 1\rb = 2\r",
    "\x0cdef f():\n    return 1\n\x0c\nz = g(1)  # form feed above\n",
    "s = 'ünï' ; t = s[1:2] + \"\\u2028\"\nu = {**d, 'k': v}\ndef f(*, a, b=1): pass\n",
    "match x:\n    case [1, *rest] if rest: import a as b\n    case {'k': v, **kw}: pass\n    case P(x=1): pass\n",
    "try:\n    import a\nexcept* E as e:\n    import b as a\nelse:\n    from c import d as a\n",
    "async def f():\n    async with a as b:\n        async for x in y:\n            await z(x)\n",
    "class C:\n    def f(self):\n        self.register_buffer('b', t)\n        self.b = 1\n",
]


def _texts():
    for p in _sample_files():
        try:
            yield str(p), p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    for i, t in enumerate(EDGE_CASES):
        yield f"edge{i}", t


def test_tree_walks_match_ast():
    n = 0
    for name, src in _texts():
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError):
            continue
        full = list(ast.walk(tree))
        assert [id(x) for x in _walk(tree, lean=False)] == [id(x) for x in full], name
        assert [id(x) for x in _walk(tree)] == [id(x) for x in full if not isinstance(x, _LEAF_TYPES)], name
        assert [id(x) for x in statements(tree)] == [
            id(x) for x in full if isinstance(x, (ast.Module, ast.stmt, ast.excepthandler, ast.match_case))], name
        for node in full:
            assert [id(c) for c in _children(node, lean=False)] == [id(c) for c in ast.iter_child_nodes(node)]
        n += len(full)
    assert n > 10_000


def test_import_map_matches_a_full_walk():
    def slow(tree):  # the definition: every import statement, in ast.walk order
        names = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        names[a.asname] = a.name
                    else:
                        names.setdefault(a.name.split(".")[0], a.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if a.name != "*":
                        names[a.asname or a.name] = f"{node.module}.{a.name}"
                if any(a.name == "*" for a in node.names) and node.module.split(".")[0] == "torch":
                    names.setdefault("__star_torch__", node.module)
        for node in tree.body:  # and a module bound to another name at the top (`ch = torch`, `aten = torch.ops.aten`)
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                    and node.targets[0].id not in names and isinstance(node.value, (ast.Name, ast.Attribute)):
                parts, v = [], node.value
                while isinstance(v, ast.Attribute):
                    parts.insert(0, v.attr)
                    v = v.value
                if isinstance(v, ast.Name) and v.id in names and names[v.id].split(".")[0] in ("torch", "numpy", "math") \
                        and ".".join([v.id, *parts]).islower():
                    names[node.targets[0].id] = ".".join([names[v.id], *parts])
        return names

    for name, src in _texts():
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError):
            continue
        assert import_map(tree) == slow(tree), name


def test_source_segments_match_ast():
    for name, src in _texts():
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError):
            continue
        lines = _split_lines_no_ff(src)
        assert lines == ast._splitlines_no_ff(src), name
        exprs = [n for n in ast.walk(tree) if isinstance(n, (ast.expr, ast.stmt))]
        for node in exprs[:: max(1, len(exprs) // 8)]:  # get_source_segment re-splits the file each call
            assert _segment(lines, node) == ast.get_source_segment(src, node), (name, node.lineno)


def test_step_detection_matches_hotpath():
    """The engine's memoised `body_calls_step` (each statement looked at once per file) against
    hotpath's own, for every function and loop body."""
    for name, src in _texts():
        try:
            tree = ast.parse(src)
        except (SyntaxError, ValueError):
            continue
        ctx = LintContext(name, src, tree, [])
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.For, ast.AsyncFor, ast.While)):
                assert ctx._calls_step(node.body) == hotpath.body_calls_step(node.body), (name, node.lineno)


def test_cached_results_round_trip():
    rules = [r() for r in all_rules()]
    for name, src in list(_texts())[::4]:
        res = lint_source(name, src, rules)
        back = FileResult.from_cache(name, json.loads(json.dumps(res.to_cache())))
        assert back.functions == res.functions, name
        assert [f.cache_json() for f in back.findings] == [f.cache_json() for f in res.findings], name
        assert (back.error, back.skipped) == (res.error, res.skipped)


# -- the cache: warm runs give what cold runs give; an edited file is always linted again ----------

def _project(tmp_path: Path) -> Path:
    d = tmp_path / "proj"
    d.mkdir()
    (d / "train.py").write_text(GOOD)
    (d / "plain.py").write_text("x = 1\n")  # no trigger word: never parsed
    (d / "bad.py").write_text("import torch\ndef f(:\n")
    (d / "pyproject.toml").write_text(f'[tool.syncscan]\ncache-dir = "{(tmp_path / "cache").as_posix()}"\n')
    return d


def _run(d: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "syncscan", "lint", "--all", *extra, str(d)], capture_output=True,
                          text=True, cwd=d, timeout=120)


def test_warm_runs_report_what_cold_runs_report(tmp_path):
    d = _project(tmp_path)
    for fmt in (["--format", "json"], ["--format", "text"]):
        cold = _run(d, "--no-cache", *fmt)
        first, warm = _run(d, *fmt), _run(d, *fmt)
        assert cold.returncode == first.returncode == warm.returncode == 2
        assert cold.stdout == first.stdout == warm.stdout and cold.stderr == first.stderr == warm.stderr
        assert "loss.item()" in warm.stdout  # the text format shows the source line from a cached result
    assert list((tmp_path / "cache").glob(f"{cache_mod.FORMAT}-*/files/*/*{cache_mod.SUFFIX}"))


def test_stat_shortcut_never_trusts_a_changed_file(tmp_path, monkeypatch):
    from syncscan.lint import cache as cache_mod, files as files_mod, runner
    from syncscan.lint.config import load

    d = _project(tmp_path)
    cfg = load(None, str(d))
    reads = []
    real_read = files_mod.read
    monkeypatch.setattr(files_mod, "read", lambda p, *a: reads.append(Path(p).name) or real_read(p, *a))

    def lint():
        reads.clear()
        run = runner.lint_paths([str(d)], cfg, jobs=1)
        return sorted((Path(f.path).name, f.line, f.code) for f in run.findings), sorted(reads)

    # files written just now are not trusted by their stat (they could change again within the
    # same timestamp tick): every run reads and hashes them
    first = lint()
    assert first[0] == [("train.py", 8, "SYN101")] and first[1] == ["bad.py", "plain.py", "train.py"]
    assert lint() == first
    # once settled, an unchanged file is not read at all
    monkeypatch.setattr(cache_mod, "SETTLE_NS", -10**18)
    lint()  # records the now-trusted stats
    settled = lint()
    assert settled == (first[0], [])  # nothing read: bad.py's parse error is cached like any result
    errs = runner.lint_paths([str(d)], cfg, jobs=1).errors
    assert [(Path(p).name, m) for p, m in errs] == [("bad.py", "syntax error at line 2: invalid syntax")]
    # same size, same mtime, new content: ctime moved, so it is read, hashed and linted again
    p = d / "train.py"
    st = p.stat()
    p.write_text(GOOD.replace("print(loss.item())", "print(loss.tolist())").replace("x, y", "x,y").replace("loss = ", "loss= "))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert p.stat().st_size == st.st_size and p.stat().st_mtime_ns == st.st_mtime_ns
    assert lint() == ([("train.py", 8, "SYN102")], ["train.py"])
