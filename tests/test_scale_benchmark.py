"""benchmarks/lint_scale.py's plumbing, on small generated files (its figures come from the full run)."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_scale_benchmark_smoke(tmp_path):
    out = tmp_path / "scale.json"
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "lint_scale.py"), "--smoke", "--base", "HEAD",
                        "--json", str(out)], capture_output=True, text=True, timeout=600, cwd=REPO, check=False)
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(out.read_text())
    for tree in ("baseline", "current"):
        assert res["memory"][tree]["rss_mib"] > 0 and res["memory"][tree]["s"] > 0
        assert res["repo"]["one"][tree]["s"] > 0 and res["repo"]["warm"][tree]["s"] > 0
        assert all(row[tree]["s_per_mb"] > 0 for row in res["big"].values())
    assert "| one-file lint, warm" in p.stdout
