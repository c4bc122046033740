"""TensorBoard's profiler plugin reads syncscan's compatible trace copies completely.

Starts a real TensorBoard (with torch-tb-profiler) on 127.0.0.1 and a free port, with one run
holding the recorded H100 trace as torch wrote it and one holding syncscan's compatible copy,
and asks the plugin's data API about both. The raw trace is the control: the plugin shows no
device time for it, so the test proves that the copy is what fixes the views.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request

import pytest

from syncscan.runtime.tbcompat import make_compatible

RUN = "masked_loss_v0_b16_64px"
API = "/data/plugin/pytorch_profiler"
START_TIMEOUT_S = 45

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("tensorboard") is None or importlib.util.find_spec("torch_tb_profiler") is None,
    reason="tensorboard and torch-tb-profiler are not installed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(base: str, path: str, **params):
    url = f"{base}{API}{path}"
    if params:
        url += "?" + urllib.parse.urlencode(params)
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


@pytest.fixture
def tensorboard(tmp_path, traces_dir):
    """A TensorBoard serving runs `raw` and `compatible`; yields its base URL. Always stopped."""
    src = next((traces_dir / RUN).glob("*.pt.trace.json.gz"))
    logdir = tmp_path / "logdir"
    (logdir / "raw").mkdir(parents=True)
    shutil.copy(src, logdir / "raw" / src.name)
    make_compatible(src, logdir / "compatible" / src.name)
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--host", "127.0.0.1",
         "--port", str(port), "--reload_interval", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"tensorboard exited with {proc.returncode}: {proc.stderr.read()[-2000:]}")
            try:
                runs = _get(base, "/runs")
                if sorted(runs.get("runs", [])) == ["compatible", "raw"] and not runs.get("loading"):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"tensorboard did not list both runs within {START_TIMEOUT_S} s")
            time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _device_time(base: str, run: str) -> tuple[float, dict]:
    (worker,) = _get(base, "/workers", run=run, view="Overview")
    span = _get(base, "/spans", run=run, worker=worker)[0]
    pie = _get(base, "/operation", run=run, worker=worker, span=span, group_by="Operation")
    total = pie.get("device_total_time")
    device = sum(row[1] for row in total["rows"]) if total else 0.0
    overview = _get(base, "/overview", run=run, worker=worker, span=span)
    return device, overview


def test_compatible_copy_has_device_time_and_raw_trace_does_not(tensorboard):
    fixed_device, fixed_overview = _device_time(tensorboard, "compatible")
    raw_device, raw_overview = _device_time(tensorboard, "raw")
    # the control: the plugin cannot link torch 2.x's kernels to ops
    assert raw_device == 0
    # the copy: every op that launched a kernel has device time (several ms over 3 steps)
    assert fixed_device > 1000.0  # microseconds
    # the same three ProfilerStep windows in both
    assert len(fixed_overview["steps"]["rows"]) == len(raw_overview["steps"]["rows"]) == 3
    # the Overview's breakdown gains the "Runtime" share only with the copy
    fixed_parts = {c["name"]: c["value"] for c in fixed_overview["performance"][0]["children"]}
    raw_parts = {c["name"]: c["value"] for c in raw_overview["performance"][0]["children"]}
    assert fixed_parts["Runtime"] > 0
    assert raw_parts["Runtime"] == 0
    assert "Operator" in _get(tensorboard, "/views", run="compatible")


def test_two_stream_trace_keeps_its_three_steps(traces_dir):
    """ProfilerStep#N projected on each GPU stream must not count as extra steps."""
    import gzip
    import logging

    from torch_tb_profiler.profiler.data import RunProfileData

    from syncscan.runtime.tbcompat import convert

    src = next((traces_dir / "encdec_piped_b16").glob("*.pt.trace.json.gz"))
    logging.getLogger("torch_tb_profiler").setLevel(logging.ERROR)

    def steps(fix: bool) -> int:
        trace = json.loads(gzip.decompress(src.read_bytes()))
        if fix:
            convert(trace)
        return len(RunProfileData.from_json("h100", "1", trace).steps_names)

    assert steps(fix=False) > 3  # the control: the plugin's own reading
    assert steps(fix=True) == 3
