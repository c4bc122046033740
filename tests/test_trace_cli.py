"""`python -m syncscan analyze ...` as a user runs it: exit codes, one-line errors, JSON keys."""

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
needs_traces = pytest.mark.skipif(not TRACES.is_dir(), reason=f"recorded traces not found at {TRACES}")

REPORT_KEYS = {"steps", "syncs", "streams", "overlap", "memcpy", "trace", "device", "gpu_bound",
               "total_gpu_idle_from_syncs_ms", "estimated_saving", "notes", "schema_version"}
STEP_KEYS = {"name", "duration_ms", "gpu_busy_ms", "gpu_utilization", "syncs"}
SITE_KEYS = {"op", "outer_op", "scope", "file", "line", "function", "count", "per_step",
             "cpu_blocked_ms", "gpu_idle_ms", "rule"}


def syncscan(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "syncscan", "analyze", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def _assert_one_line_error(p):
    assert p.returncode == 2, p
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("syncscan: error: "), p.stderr
    assert "Traceback" not in p.stderr


@needs_traces
def test_json_report_of_a_run_folder():
    p = syncscan(TRACES / "masked_loss_v0_b16_64px", "--format", "json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert REPORT_KEYS <= set(r)
    assert all(STEP_KEYS <= set(s) for s in r["steps"])
    assert r["syncs"] and all(SITE_KEYS <= set(s) for s in r["syncs"])
    assert [s["syncs"] for s in r["steps"]] == [6, 6, 6]


@needs_traces
def test_text_report_says_gpu_bound_and_the_caveat():
    p = syncscan(TRACES / "masked_loss_v0_b32_256px")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "GPU-bound" in out
    assert "not what a sync costs" in out
    assert "aten::nonzero in aten::nonzero_numpy" in out and "SYN301" in out
    assert "seed_masked_loss.py:44 ignore_background" in out


@needs_traces
def test_output_file_and_all_traces_of_a_folder(tmp_path):
    out = tmp_path / "r.json"
    p = syncscan(TRACES / "plain", "--all", "--format", "json", "--output", out)
    assert p.returncode == 0 and p.stdout == ""
    reports = json.loads(out.read_text())["reports"]
    assert sorted(Path(r["trace"]).name for r in reports) == ["aug_gpu_b32.json.gz", "aug_piped_b32.json.gz"]


@needs_traces
def test_cpu_only_text_says_no_gpu_activity(tmp_path):
    # the recorded trace with its GPU rows removed: what a CPU-only run of the same code records
    with gzip.open(next((TRACES / "masked_loss_v0_b16_64px").glob("*.gz")), "rt") as f:
        doc = json.load(f)
    doc["traceEvents"] = [e for e in doc["traceEvents"]
                          if e.get("cat") not in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_sync",
                                                  "cuda_runtime", "cuda_driver", "gpu_user_annotation", "ac2g")]
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps(doc))
    p = syncscan(path)
    assert p.returncode == 0, p.stderr
    assert "No GPU activity was recorded" in p.stdout
    assert "Would sync on a GPU" in p.stdout
    r = json.loads(syncscan(path, "--format", "json").stdout)
    assert r["gpu_activity"] is False and r["syncs"] == []
    # the op tree shows nonzero under the boolean reads (forward and backward) and under
    # nonzero_numpy, item under unique; the index-assign's sync is its pageable value upload,
    # which a trace without copies cannot show
    got = {s["outer_op"]: s["per_step"] for s in r["would_sync"]}
    assert got == {"aten::nonzero_numpy": [1, 1, 1], "aten::_unique2": [1, 1, 1],
                   "aten::index": [2, 2, 2], "IndexBackward0": [1, 1, 1]}
    assert all(s["scope"] == "loss" for s in r["would_sync"])


def test_missing_file(tmp_path):
    _assert_one_line_error(syncscan(tmp_path / "nope.json"))


def test_folder_without_traces(tmp_path):
    p = syncscan(tmp_path)
    _assert_one_line_error(p)
    assert "no torch.profiler trace" in p.stderr


def test_not_json(tmp_path):
    path = tmp_path / "t.json"
    path.write_text("hello, world\n")
    _assert_one_line_error(syncscan(path))


def test_json_that_is_not_a_trace(tmp_path):
    for i, text in enumerate(['{"a": 1}', "[1, 2, 3]", "[]", '{"traceEvents": [{"name": "x"}]}', '"s"']):
        path = tmp_path / f"t{i}.json"
        path.write_text(text)
        p = syncscan(path)
        _assert_one_line_error(p)
        assert "not" in p.stderr


def test_truncated_gzip(tmp_path):
    full = gzip.compress(json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": i,
                                                      "dur": 1, "pid": 1, "tid": 1} for i in range(5000)]}).encode())
    path = tmp_path / "t.pt.trace.json.gz"
    path.write_bytes(full[: len(full) // 2])
    p = syncscan(path)
    _assert_one_line_error(p)
    assert "truncated gzip" in p.stderr


def test_truncated_json(tmp_path):
    text = json.dumps({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": i, "dur": 1}
                                       for i in range(100)]})
    path = tmp_path / "t.json"
    path.write_text(text[: len(text) - 40])
    p = syncscan(path)
    _assert_one_line_error(p)
    assert "truncated" in p.stderr


def test_bad_format_choice_is_a_usage_error(tmp_path):
    p = syncscan(tmp_path / "x.json", "--format", "xml")
    assert p.returncode == 2 and "Traceback" not in p.stderr
