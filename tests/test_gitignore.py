"""Folders are walked as git sees them: `.gitignore` files (nested, with negation) and
`.git/info/exclude` keep files out, as in ruff; `--no-respect-gitignore` (or
`respect-gitignore = false`) lets them in; files named on the command line are linted anyway."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from syncscan.cli import main

SYNC = "import torch\n\ndef forward(self, x):\n    return torch.nonzero(x)\n"  # one hot SYN301


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def write(name: str, text: str = SYNC) -> None:
    p = Path(name)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def linted(capsys, *argv) -> list[str]:
    rc = main(["lint", "--no-cache", "--format", "json", *argv])
    out, err = capsys.readouterr()
    assert rc in (0, 1) and not err, err
    return sorted({f["path"] for f in json.loads(out)})


TREE = {
    ".gitignore": "build_out/\n*_gen.py\n!keep_gen.py\n/top_only.py\n# a comment\n\\#odd.py\n",
    "sub/.gitignore": "local.py\n!important_gen.py\n",
    ".git/info/exclude": "scratch.py\n",
}
FILES = ["a.py", "a_gen.py", "keep_gen.py", "top_only.py", "#odd.py", "scratch.py", "build_out/b.py",
         "sub/top_only.py", "sub/local.py", "sub/important_gen.py", "sub/other_gen.py", "sub/deep/local.py",
         "sub/deep/ok.py"]
KEPT = ["a.py", "keep_gen.py", "sub/deep/ok.py", "sub/important_gen.py", "sub/top_only.py"]


def make_tree():
    Path(".git/info").mkdir(parents=True)
    for name, text in TREE.items():
        write(name, text)
    for name in FILES:
        write(name)


def test_gitignore_nested_negated_anchored_and_info_exclude(capsys):
    make_tree()
    assert linted(capsys, ".") == KEPT
    assert linted(capsys, "sub") == ["sub/deep/ok.py", "sub/important_gen.py", "sub/top_only.py"]


def test_the_walk_matches_git_itself(capsys, tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q"], check=True, capture_output=True)
    for name, text in TREE.items():
        write(name, text)
    for name in FILES:
        write(name)
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], check=True,
                            capture_output=True, text=True).stdout.split("\n")
    assert linted(capsys, ".") == sorted(p.strip('"') for p in listed if p.endswith(".py")) == KEPT


def test_no_respect_gitignore_lints_everything(capsys):
    make_tree()
    assert linted(capsys, "--no-respect-gitignore", ".") == sorted(FILES)
    write("pyproject.toml", "[tool.syncscan]\nrespect-gitignore = false\n")
    assert linted(capsys, ".") == sorted(FILES)


def test_named_files_and_folders_are_linted_even_if_ignored(capsys):
    make_tree()
    assert linted(capsys, "a_gen.py", "sub/local.py") == ["a_gen.py", "sub/local.py"]
    assert linted(capsys, "build_out") == ["build_out/b.py"]


def test_outside_a_repository_gitignore_is_not_read(capsys):
    write(".gitignore", "*_gen.py\n")
    write("a.py")
    write("a_gen.py")
    assert linted(capsys, ".") == ["a.py", "a_gen.py"]


def test_a_nested_repository_has_its_own_rules(capsys):
    Path(".git").mkdir()
    write(".gitignore", "*_gen.py\n")
    Path("vendor/.git").mkdir(parents=True)
    write("vendor/.gitignore", "skip.py\n")
    for name in ("a_gen.py", "vendor/a_gen.py", "vendor/skip.py", "vendor/ok.py"):
        write(name)
    assert linted(capsys, ".") == ["vendor/a_gen.py", "vendor/ok.py"]


def test_an_unreadable_or_odd_gitignore_does_not_fail_the_run(capsys):
    Path(".git").mkdir()
    Path(".gitignore").write_bytes(b"caf\xe9.py\n[\n**/x\n!\n")
    write("a.py")
    assert linted(capsys, ".") == ["a.py"]


def test_discovery_benchmark_smoke(tmp_path):
    """benchmarks/discovery_speed.py's plumbing on a tiny tree (its figures: docs/lint-speed.md)."""
    import sys

    repo = Path(__file__).resolve().parents[1]
    if not (repo / ".git").exists() or shutil.which("git") is None:
        pytest.skip("needs a git checkout (the benchmark compares with a commit)")
    out = tmp_path / "d.json"
    p = subprocess.run([sys.executable, str(repo / "benchmarks" / "discovery_speed.py"), "--smoke", "--baseline",
                        "HEAD", "--json", str(out)], capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    data = json.loads(out.read_text())
    assert data["files_found"]["this commit"] < data["files_found"]["no-gitignore"]  # ignored files left out
    assert data["median_s"]["this commit"] > 0 and "ratio this/baseline" in p.stdout
