"""`syncscan lint`'s command line read without argparse (cli.quick_args) gives exactly what
argparse gives, or declines (then argparse reads it); and a warm one-file lint imports none of
the modules that make start-up slow."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from syncscan.cli import _Recorder, build_parser, quick_args
from syncscan.lint import command


def argparse_reads(argv: list[str]):
    """(vars of the namespace, the extra arguments), or "error" when argparse exits."""
    try:
        ns, extra = build_parser(argv[0]).parse_known_args(argv)
    except SystemExit:
        return "error"
    return vars(ns), extra


def check_same(argv: list[str]) -> bool:
    """Whether quick_args read `argv` (else it declined); when it did, argparse reads it the same."""
    quick = quick_args(argv)
    if quick is None:
        return False
    assert argparse_reads(argv) == (vars(quick), []), argv
    return True


def options() -> list[str]:
    rec = _Recorder()
    command.add_arguments(rec)
    return sorted(rec.options)


@pytest.mark.parametrize("argv", [
    ["lint"], ["lint", "a.py"], ["lint", "-q", "a.py"], ["lint", "a.py", "-q"], ["lint", "a.py", "b.py", "--all"],
    ["lint", "--format", "json", "x.py"], ["lint", "--format=sarif", "x.py"], ["lint", "--output-format", "github"],
    ["lint", "--select", "syn1, SYN2", "--ignore", "SYN201", "--extend-select=SYN9", "d"],
    ["lint", "-j", "2", "--no-cache", "--no-show-source", "--statistics", "."],
    ["lint", "--no-respect-gitignore", "--exit-zero", "--explicit-paths", "a.py"],
    ["lint", "--fix", "--unsafe-fixes", "--line-length", "100", "--show-fixes", "a.py"],
    ["lint", "--config", "p/pyproject.toml", "--costs", "r.json", "--stdin-filename", "x.py", "a b.py", "c=d.py"],
])
def test_plain_lines_are_read_as_argparse_reads_them(argv):
    assert check_same(argv)


@pytest.mark.parametrize("argv", [
    ["lint", "--help"], ["lint", "-h"], ["lint", "--fo", "json"],  # an abbreviation
    ["lint", "-qj2", "a.py"], ["lint", "--format", "xml"], ["lint", "--jobs", "two"], ["lint", "--jobs"],
    ["lint", "--jobs", "-1"], ["lint", "a.py", "-q", "b.py"],  # a second run of paths: argparse leaves it over
    ["lint", "-"], ["lint", "--", "a.py"], ["lint", "--all=yes"], ["lint", "--version"], ["lint", "--nope"],
    ["--version"], ["rules"], ["profile", "x.py"], [],
])
def test_anything_else_goes_to_argparse(argv):
    assert quick_args(argv) is None


TOKENS = st.one_of(
    st.sampled_from(options()),
    st.sampled_from(["a.py", "dir", "-", "--", "", "a b.py", "x=y", "-x", "-1", "2", "0", "json", "xml", "SYN1",
                     "syn1,SYN2", "--fo", "--al", "-qj2", "-h", "--format=json", "--all=1", "--jobs=3",
                     "--select=", "-j2"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(TOKENS, max_size=7))
def test_any_line_is_read_as_argparse_reads_it_or_left_to_it(tokens):
    check_same(["lint", *tokens])


@pytest.mark.parametrize("options", [[], ["--ignore", "SYN201", "--format", "github"]])
def test_a_warm_one_file_lint_imports_nothing_slow(tmp_path, options):
    """The modules a warm one-file lint must not import (each costs milliseconds of start-up;
    docs/lint-speed.md): checked in a fresh interpreter, against what the interpreter itself
    loads at start-up."""
    # (a project that lists syncscan among its tools: its pyproject.toml is not parsed, having no table of ours)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n[project.optional-dependencies]\n"
                                             "dev = ['syncscan', 'pytest']\n")
    (tmp_path / "helper.py").write_text("import torch\n\n\ndef helper(x):\n    return x.sum().item()\n")
    (tmp_path / "train.py").write_text("from helper import helper\n\n\ndef train(loader, opt):\n"
                                       "    for x in loader:\n        helper(x)\n        opt.step()\n")
    slow = ["argparse", "ast", "dataclasses", "fnmatch", "hashlib", "inspect", "pathlib", "re", "syncscan.lint.rule",
            "tokenize", "tomllib", "typing", "urllib.parse", "json"]
    probe = textwrap.dedent(f"""
        import sys
        before = set(sys.modules)
        from syncscan.cli import main
        rc = main(["lint", "-q", *{options!r}, "helper.py"])
        print(rc, sorted(m for m in {slow!r} if m in sys.modules and m not in before))
    """)
    env = {k: v for k, v in os.environ.items() if k != "SYNCSCAN_DEBUG"}
    time.sleep(2.1)  # the files' stats settle (cache.SETTLE_NS): the second run reads neither of them
    runs = [subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, env=env,
                           timeout=120, check=False) for _ in range(2)]  # the first fills the cache
    out = runs[1].stdout.splitlines()
    assert runs[1].returncode == 0 and out[-1] == "1 []", runs[1].stdout + runs[1].stderr
    assert "SYN101" in runs[1].stdout and ("[hot]" in runs[1].stdout or options)  # hot: train.py calls it
