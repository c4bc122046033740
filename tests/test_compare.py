"""`syncscan profile --compare FIXED.py`: the measured saving beside the predicted one."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from syncscan.present.profile_text import render_comparison
from syncscan.runtime.report import with_prediction

pytest.importorskip("torch")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_error_is_relative_to_the_measured_saving():
    c = with_prediction("fixed.py", {"original_ms_per_step": 7.0, "rewritten_ms_per_step": 6.0,
                                     "measured_saving_ms_per_step": 1.0, "runs": 3}, {"saving_ms_per_step": 1.25})
    assert c["prediction_error"] == pytest.approx(0.25)
    assert "against fixed.py" in render_comparison(c) and "predicted 1.250: +25%" in render_comparison(c)
    assert with_prediction("fixed.py", {"measured_saving_ms_per_step": 1.0}, None)["prediction_error"] is None


def test_a_saving_inside_the_run_to_run_spread_is_not_scored():
    c = with_prediction("fixed.py", {"original_ms_per_step": 5.08, "rewritten_ms_per_step": 5.23,
                                     "measured_saving_ms_per_step": -0.15, "runs": 3, "spread_ms": 0.9,
                                     "resolved": False}, {"saving_ms_per_step": 0.77})
    assert c["prediction_error"] is None
    assert "not resolved" in render_comparison(c) and "%" not in render_comparison(c)


def test_profile_compare_times_both_scripts_on_cpu(tmp_path):
    out = tmp_path / "r.json"
    p = subprocess.run([sys.executable, "-m", "syncscan", "profile", "--wait", "0", "--warmup", "1", "--steps", "2",
                        "--compare", str(FIXTURES / "masked_loss_fixed.py"), "--compare-runs", "1", "--output", str(out),
                        "--logdir", str(tmp_path / "run"), str(FIXTURES / "masked_loss_naive.py"), "--device", "cpu",
                        "--batch", "2", "--size", "32", "--steps", "20"], capture_output=True, text=True, timeout=600,
                       cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    c = json.loads(out.read_text())["comparison"]
    assert c["original_ms_per_step"] > 0 and c["rewritten_ms_per_step"] > 0
    assert c["measured_saving_ms_per_step"] == pytest.approx(c["original_ms_per_step"] - c["rewritten_ms_per_step"],
                                                             abs=1e-3)
    assert c["rewritten"].endswith("masked_loss_fixed.py")
    assert "measured against" in p.stdout


def test_compare_with_a_missing_script_is_a_usage_error(tmp_path):
    p = subprocess.run([sys.executable, "-m", "syncscan", "profile", "--compare", str(tmp_path / "nope.py"),
                        str(FIXTURES / "masked_loss_naive.py")], capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and p.stderr.strip().count("\n") == 0 and "--compare" in p.stderr
    assert "Traceback" not in p.stderr
