"""benchmarks/lint_ab.py: two versions of the linter timed side by side (here on the fixtures)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def test_lint_ab_times_a_git_revision_against_the_tree(tmp_path):
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True).returncode:
        pytest.skip("not a git checkout")
    out = tmp_path / "ab.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "lint_ab.py"), "--smoke", "--baseline", "HEAD",
                        "--json", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    res = json.loads(out.read_text())
    assert res["baseline"]["findings"] > 0 and res["candidate"]["findings"] > 0
    assert res["baseline"]["s"] > 0 and res["ratio"]["time"] > 0
    assert "candidate / baseline" in p.stdout
