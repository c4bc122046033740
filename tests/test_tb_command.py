"""`syncscan tb`: TensorBoard with the profiler plugin on a copy of a recorded trace run."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from syncscan.cli import main
from syncscan.commands import tb as tb_command

REPO = Path(__file__).resolve().parents[1]
RUN = "masked_loss_v0_b16_64px"


def _env(**extra) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    env.update(extra)
    return env


@pytest.fixture
def logdir(tmp_path, traces_dir) -> Path:
    """A temporary logdir holding a copy of one recorded run (the originals are read-only)."""
    src = traces_dir / RUN
    if not src.is_dir():
        pytest.skip(f"{src} is missing")
    dest = tmp_path / "runs" / RUN
    shutil.copytree(src, dest)
    for path in dest.iterdir():
        path.chmod(0o644)
    return tmp_path / "runs"


def _read_line(stream, timeout: float) -> str:
    box: list[str] = []
    reader = threading.Thread(target=lambda: box.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return box[0] if box else ""


def test_tb_serves_the_run_and_stops_on_ctrl_c(logdir, tmp_path):
    pytest.importorskip("tensorboard")
    pytest.importorskip("torch_tb_profiler")
    proc = subprocess.Popen([sys.executable, "-m", "syncscan", "tb", str(logdir)], cwd=tmp_path,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = _read_line(proc.stdout, 60)
        assert line.startswith("http://127.0.0.1:"), (line, proc.poll())
        base = line.strip().split("#")[0]
        deadline, runs = time.monotonic() + 60, {}
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(base + "data/plugin/pytorch_profiler/runs", timeout=5) as r:
                    runs = json.load(r)
            except OSError:
                pass
            if RUN in runs.get("runs", ()) and not runs.get("loading"):
                break
            time.sleep(0.5)
        assert runs.get("runs") == [RUN], runs
        # the plugin parsed it: the run's worker is listed for its Overview
        with urllib.request.urlopen(f"{base}data/plugin/pytorch_profiler/workers?run={RUN}&view=Overview",
                                    timeout=10) as r:
            assert json.load(r) == ["h100"]
        proc.send_signal(signal.SIGINT)
        started = time.monotonic()
        assert proc.wait(timeout=20) == 0, proc.stderr.read()
        assert time.monotonic() - started < 20
        assert "stopping TensorBoard" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_tb_stops_on_ctrl_c_where_sigint_came_in_ignored(logdir, tmp_path):
    # a shell starts background jobs (`syncscan tb runs &`) with SIGINT ignored; Python then installs no
    # KeyboardInterrupt handler of its own, and `kill -INT` must still stop the server
    pytest.importorskip("tensorboard")
    pytest.importorskip("torch_tb_profiler")
    proc = subprocess.Popen([sys.executable, "-m", "syncscan", "tb", str(logdir)], cwd=tmp_path, env=_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert _read_line(proc.stdout, 60).startswith("http://127.0.0.1:")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _blocked(tmp_path: Path, module: str) -> Path:
    """A folder that, first on PYTHONPATH, makes `import <module>` fail like a missing package."""
    fake = tmp_path / "blocked" / module
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f'raise ImportError("No module named {module!r}")\n')
    return fake.parent


@pytest.mark.parametrize("module,named", [("tensorboard", "TensorBoard is not installed"),
                                          ("torch_tb_profiler", "torch-tb-profiler")])
def test_tb_names_the_extra_when_a_package_is_missing(tmp_path, module, named):
    (tmp_path / "runs").mkdir()
    blocked = _blocked(tmp_path, module)
    out = subprocess.run([sys.executable, "-m", "syncscan", "tb", str(tmp_path / "runs")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env=_env(PYTHONPATH=os.pathsep.join([str(blocked), str(REPO)])))
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("syncscan: error: ") and named in lines[0], out.stderr
    assert "pip install 'syncscan[profile]'" in lines[0] and out.stdout == ""


def test_tb_missing_logdir_is_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["tb"]) == 2  # the default, ./syncscan-runs, does not exist here
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["syncscan: error: syncscan-runs: no such folder (`syncscan profile SCRIPT` writes its runs there)"]
    assert main(["tb", str(tmp_path / "nope")]) == 2
    assert capsys.readouterr().err.strip() == f"syncscan: error: {tmp_path / 'nope'}: no such folder"


def test_tb_bad_port(tmp_path, capsys):
    assert main(["tb", str(tmp_path), "--port", "70000"]) == 2
    assert "--port 70000: must be between 0" in capsys.readouterr().err


def test_compat_copy_mirrors_the_runs(logdir, tmp_path):
    traces = tb_command.find_traces(logdir)
    assert [t.parent.name for t in traces] == [RUN]
    dest = tmp_path / "compat"
    tb_command.compatible_copy(logdir, traces, dest)
    copy = dest / traces[0].relative_to(logdir)
    with gzip.open(copy, "rt") as f:
        trace = json.load(f)
    assert trace["syncscan_tbcompat"]["source"] == traces[0].name
    assert not any(ev.get("cat") == "cuda_runtime" for ev in trace["traceEvents"])
