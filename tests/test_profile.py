"""`syncscan profile` end to end on the CPU: small training scripts written by the tests, run
in-process through the CLI (as the console script would), plus a few real subprocesses for what
only a process shows (standard output, the exit status, the script's traceback)."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from syncscan.cli import main  # noqa: E402
from syncscan.commands.profile import EXIT_SYNC_FOUND  # noqa: E402
from syncscan.trace import load_trace  # noqa: E402
from syncscan.trace.marks import META_KEY, StepMarks  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FAST = ["--steps", "2", "--warmup", "1", "--wait", "0"]  # 9 steps: bare 0-2, light 3-5, detail 6-8
NEEDED = 9

# A training step that would sync five times on a GPU: nonzero, unique, a boolean-mask read and
# its backward, and .item(). `--probe FILE` makes it record what it saw when it started.
TRAIN = """
import json, sys
import torch

if "--probe" in sys.argv:
    with open(sys.argv[sys.argv.index("--probe") + 1], "w") as f:
        json.dump({"argv": sys.argv, "name": __name__, "path0": sys.path[0], "file": __file__}, f)
iters = int(sys.argv[sys.argv.index("--iters") + 1]) if "--iters" in sys.argv else 100
torch.manual_seed(0)
model = torch.nn.Linear(8, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(iters):
    y = model(torch.randn(16, 8))
    m = y > 0
    idx = torch.nonzero(m)
    u = torch.unique(idx[:, 1])
    loss = y[m].sum() + u.numel()
    opt.zero_grad()
    loss.backward()
    opt.step()
    value = loss.item()
"""


def write(path: Path, source: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return path


def profile(tmp_path, *args, capsys=None):
    """Run `syncscan profile --output report.json --logdir run ARGS` in-process; return
    (exit status, report dict or None, stdout, stderr)."""
    out = tmp_path / "out.json"
    if out.exists():
        out.unlink()
    rc = main(["profile", "--output", str(out), "--logdir", str(tmp_path / "run"), *args])
    report = json.loads(out.read_text()) if out.exists() else None
    captured = capsys.readouterr() if capsys else None
    return rc, report, captured.out if captured else "", captured.err if captured else ""


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


# ------------------------------------------------------------------------ the main path

def test_cpu_run_reports_no_gpu_and_the_ops_that_would_sync(tmp_path, capsys):
    script = write(tmp_path / "train.py", TRAIN)
    rc, report, out, _ = profile(tmp_path, *FAST, str(script), capsys=capsys)
    assert rc == 0
    assert "no GPU activity was recorded" in out
    assert report["gpu_activity"] is False
    assert report["outcome"]["status"] == "stopped" and report["outcome"]["steps"] == NEEDED
    would = {s["op"]: s for s in report["would_sync"]}
    for op, rule in [("aten::nonzero", "SYN301"), ("aten::_unique2", "SYN305"),
                     ("aten::_local_scalar_dense", "SYN101")]:
        assert op in would, sorted(would)
        assert any(s["rule"] == rule for s in report["would_sync"] if s["op"] == op)
    # attribution from the detailed pass (Python stacks): the script's own file
    assert any(s.get("attributed_by") == "detail" and s["file"].endswith("train.py")
               for s in report["would_sync"])
    for name in ("aten::nonzero", "aten::_unique2"):
        assert name in out
    # every pass measured its 2 steps
    for name in ("bare", "light", "detail"):
        assert report["passes"][name]["state"] == "complete"
        assert report["passes"][name]["steps"] == 2
        assert report["perturbation"][f"{name}_ms_per_step"] > 0
    assert report["perturbation"]["clock"] == "host"
    # the light pass gives the timing, two ProfilerStep windows
    assert report["timing_from"] == "light" and len(report["steps"]) == 2
    assert report["sync_summary"]["any"] is True
    assert f"tensorboard --logdir {tmp_path / 'run'}" in out and "syncscan tb" in out


def test_run_folder_layout_and_json_keys(tmp_path, capsys):
    script = write(tmp_path / "train.py", TRAIN)
    rc, report, _, _ = profile(tmp_path, *FAST, str(script), capsys=capsys)
    assert rc == 0
    run = tmp_path / "run"
    assert json.loads((run / "report.json").read_text())["outcome"] == report["outcome"]
    # TensorBoard's layout: <run>/<pass>/<worker>.<digits>.pt.trace.json.gz
    pattern = re.compile(r"^(.*?)(\.\d+)?\.pt\.trace\.json(?:\.gz)?$")  # torch_tb_profiler's
    for name in ("light", "detail"):
        (tb,) = (run / name).iterdir()
        assert pattern.match(tb.name) and tb.name.endswith(".pt.trace.json.gz")
        assert report["passes"][name]["tensorboard_trace"] == str(tb)
        raw = run / "traces" / f"{name}.trace.json.gz"
        assert report["passes"][name]["trace"] == str(raw) and raw.is_file()
        assert not pattern.match(raw.name)  # TensorBoard must not show the raw copy as a run
        import gzip
        assert "syncscan_tbcompat" in json.loads(gzip.decompress(tb.read_bytes()))
    for key in ("steps", "syncs", "would_sync", "streams", "overlap", "memcpy", "perturbation",
                "schedule", "outcome", "passes", "sync_summary", "tensorboard", "source_sites"):
        assert key in report, key
    p = report["perturbation"]
    assert set(p) >= {"bare_ms_per_step", "light_ms_per_step", "detail_ms_per_step",
                      "light_vs_bare", "detail_vs_bare"}
    windows = report["schedule"]["windows"]
    assert windows["bare"] == {"warmup_start": 0, "first": 1, "last": 2}
    assert windows["detail"] == {"warmup_start": 6, "first": 7, "last": 8}


def test_no_tensorboard_copy_writes_torchs_trace_only(tmp_path, capsys):
    script = write(tmp_path / "train.py", TRAIN)
    rc, report, out, _ = profile(tmp_path, *FAST, "--passes", "light", "--no-tensorboard-copy",
                                 str(script), capsys=capsys)
    assert rc == 0
    assert not (tmp_path / "run" / "traces").exists()
    (tb,) = (tmp_path / "run" / "light").iterdir()
    import gzip
    assert "syncscan_tbcompat" not in json.loads(gzip.decompress(tb.read_bytes()))
    assert "0 device time" in out


def test_format_json_prints_the_report_alone(tmp_path, capsys):
    script = write(tmp_path / "train.py", "print('hello from the script')\n" + TRAIN)
    rc = main(["profile", "--format", "json", "--logdir", str(tmp_path / "run"), *FAST,
               "--passes", "light", str(script)])
    out, err = capsys.readouterr()
    assert rc == 0
    assert json.loads(out)["script"] == str(script)
    assert "hello from the script" in err


# ------------------------------------------------------------------------ running the script

def test_argv_main_and_sys_path_as_python_would(tmp_path, capsys):
    script = write(tmp_path / "sub" / "train.py", TRAIN)
    probe = tmp_path / "probe.json"
    saved_argv, saved_path0 = sys.argv[:], sys.path[0]
    # the script's own --steps and --warmup must reach it, not syncscan
    rc, report, _, _ = profile(tmp_path, *FAST, str(script), "--lr", "0.1", "--steps", "5",
                               "--probe", str(probe), capsys=capsys)
    assert rc == 0
    seen = json.loads(probe.read_text())
    assert seen["argv"] == [str(script), "--lr", "0.1", "--steps", "5", "--probe", str(probe)]
    assert seen["name"] == "__main__"
    assert seen["path0"] == str(script.parent.resolve())
    assert report["argv"] == ["--lr", "0.1", "--steps", "5", "--probe", str(probe)]
    assert sys.argv == saved_argv and sys.path[0] == saved_path0  # put back afterwards


def test_dash_m_runs_a_module(tmp_path, capsys):
    write(tmp_path / "mypkg" / "__init__.py", "")
    write(tmp_path / "mypkg" / "train.py", TRAIN)
    probe = tmp_path / "probe.json"
    rc, report, _, _ = profile(tmp_path, *FAST, "-m", "mypkg.train", "--lr", "0.1", "--probe", str(probe),
                               capsys=capsys)
    assert rc == 0, report
    seen = json.loads(probe.read_text())
    assert seen["name"] == "__main__"
    assert seen["argv"][0].endswith(os.path.join("mypkg", "train.py"))
    assert seen["argv"][1:] == ["--lr", "0.1", "--probe", str(probe)]
    assert seen["path0"] == str(tmp_path)
    assert report["outcome"]["steps"] == NEEDED
    sys.modules.pop("mypkg", None)


def test_step_on_a_function_and_a_method(tmp_path, capsys):
    source = """
    import torch
    class Trainer:
        def __init__(self):
            self.w = torch.zeros(4)
        def train_step(self):
            self.w += 1
            torch.nonzero(self.w > 2)
    def run_batch(t):
        t.train_step()
    t = Trainer()
    for _ in range(40):   # no optimizer: only --step-on marks steps
        run_batch(t)
    """
    script = write(tmp_path / "loop.py", source)
    for spec in ("run_batch", "Trainer.train_step", "loop.Trainer.train_step"):
        rc, report, _, _ = profile(tmp_path, *FAST, "--step-on", spec, str(script), capsys=capsys)
        assert rc == 0
        assert report["outcome"]["steps"] == NEEDED, spec
        assert report["outcome"]["status"] == "stopped"
        assert report["schedule"]["boundaries_seen"] == {"step-on": NEEDED}
        assert report["schedule"]["step_boundary"] == spec


def test_step_on_a_name_never_called(tmp_path, capsys):
    script = write(tmp_path / "train.py", TRAIN.replace("range(iters)", "range(3)"))
    rc, report, out, _ = profile(tmp_path, *FAST, "--step-on", "nowhere", str(script), capsys=capsys)
    assert rc == 0
    assert report["outcome"]["steps"] == 0
    assert "nowhere was never called" in out


def test_explicit_syncscan_step_takes_over_without_double_counting(tmp_path, capsys):
    source = TRAIN.replace("    value = loss.item()", "    value = loss.item()\n    syncscan.step()")
    script = write(tmp_path / "train.py", "import syncscan\n" + source)
    rc, report, _, _ = profile(tmp_path, *FAST, str(script), capsys=capsys)
    assert rc == 0
    # the first optimizer step counted once; then syncscan.step() alone
    assert report["outcome"]["steps"] == NEEDED
    assert report["schedule"]["boundaries_seen"] == {"optimizer": 1, "explicit": NEEDED - 1}


def test_explicit_syncscan_step_without_optimizer(tmp_path, capsys):
    source = """
    import syncscan, torch
    x = torch.arange(10.0)
    for _ in range(50):
        torch.nonzero(x > 3)
        syncscan.step()
    """
    script = write(tmp_path / "loop.py", source)
    rc, report, _, _ = profile(tmp_path, *FAST, str(script), capsys=capsys)
    assert rc == 0
    assert report["outcome"]["steps"] == NEEDED
    assert any(s["op"] == "aten::nonzero" for s in report["would_sync"])


def test_run_to_end_lets_the_script_finish(tmp_path, capsys):
    script = write(tmp_path / "train.py", TRAIN)
    rc, report, _, _ = profile(tmp_path, *FAST, "--run-to-end", str(script), "--iters", "12", capsys=capsys)
    assert rc == 0
    assert report["outcome"]["status"] == "finished" and report["outcome"]["steps"] == 12


# ------------------------------------------------------------------------ how a script ends

def test_fewer_steps_than_asked(tmp_path, capsys):
    script = write(tmp_path / "train.py", TRAIN)
    rc, report, out, _ = profile(tmp_path, *FAST, str(script), "--iters", "5", capsys=capsys)
    assert rc == 0
    assert report["outcome"]["complete"] is False
    assert f"finished after 5 steps, fewer than the {NEEDED} the schedule needs" in out
    # the light pass ended halfway: what it captured is still analysed
    assert report["passes"]["light"]["state"] == "partial"
    assert report["passes"]["detail"]["state"] == "not reached"
    assert report["passes"]["bare"]["state"] == "complete"


def test_sys_exit_code_passes_through(tmp_path, capsys):
    script = write(tmp_path / "train.py", TRAIN + "    if i == 4:\n        sys.exit(3)\n")
    rc, report, out, _ = profile(tmp_path, *FAST, str(script), capsys=capsys)
    assert rc == 3
    assert report["outcome"]["status"] == "exit" and report["outcome"]["exit_code"] == 3
    assert "called sys.exit(3) after 5 steps" in out


def test_keyboard_interrupt_exits_130(tmp_path, capsys):
    script = write(tmp_path / "train.py", TRAIN + "    if i == 4:\n        raise KeyboardInterrupt\n")
    rc, report, out, _ = profile(tmp_path, *FAST, str(script), capsys=capsys)
    assert rc == 130
    assert report["outcome"]["status"] == "interrupted"
    assert "interrupted after 5 steps" in out


def test_script_exception_exits_1_with_the_scripts_traceback(tmp_path):
    script = write(tmp_path / "train.py", TRAIN + "    if i == 4:\n        raise ValueError('bad batch')\n")
    proc = subprocess.run([sys.executable, "-m", "syncscan", "profile", *FAST, "--logdir", "run",
                           str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=240,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1, proc.stderr
    assert "Traceback (most recent call last):" in proc.stderr
    assert f'File "{script}", line' in proc.stderr
    assert "ValueError: bad batch" in proc.stderr
    # the script's traceback, not ours
    assert "syncscan/runtime" not in proc.stderr and "runpy" not in proc.stderr
    assert "the script raised ValueError after 5 steps" in proc.stdout
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["outcome"]["exit_code"] == 1
    assert report["passes"]["light"]["state"] == "partial"


def test_dataloader_workers_are_shut_down_when_the_script_is_stopped(tmp_path, capsys):
    source = """
    import torch
    from torch.utils.data import DataLoader, TensorDataset
    ds = TensorDataset(torch.randn(256, 8), torch.randint(0, 4, (256,)))
    loader = DataLoader(ds, batch_size=16, num_workers=2)
    model = torch.nn.Linear(8, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    while True:
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
    """
    script = write(tmp_path / "loader.py", source)
    before = {p.pid for p in multiprocessing.active_children()}
    rc, report, _, _ = profile(tmp_path, "--steps", "1", "--warmup", "0", "--wait", "0", "--passes",
                               "light", str(script), capsys=capsys)
    assert rc == 0 and report["outcome"]["status"] == "stopped"
    left = [p for p in multiprocessing.active_children() if p.pid not in before]
    assert left == []


# ------------------------------------------------------------------------ options

def test_fail_on_sync(tmp_path, capsys):
    syncing = write(tmp_path / "train.py", TRAIN)
    rc, report, _, _ = profile(tmp_path, *FAST, "--fail-on-sync", str(syncing), capsys=capsys)
    assert rc == EXIT_SYNC_FOUND and report["fail_on_sync"] is True
    clean = write(tmp_path / "clean.py", """
    import torch
    model = torch.nn.Linear(8, 4)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(40):
        loss = model(torch.randn(16, 8)).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    """)
    rc, report, _, _ = profile(tmp_path, *FAST, "--fail-on-sync", str(clean), capsys=capsys)
    assert rc == 0, report["would_sync"]


def test_quick_runs_the_detailed_pass_only(tmp_path, capsys):
    script = write(tmp_path / "train.py", TRAIN)
    rc, report, _, _ = profile(tmp_path, "--quick", "--steps", "2", "--warmup", "0", "--wait", "0",
                               str(script), capsys=capsys)
    assert rc == 0
    assert report["schedule"]["passes"] == ["detail"]
    assert report["timing_from"] == "detail" and report["attribution_from"] == "detail"
    assert report["perturbation"]["bare_ms_per_step"] is None
    assert report["outcome"]["steps"] == 2


def test_light_pass_option_is_recorded_in_the_report(tmp_path, capsys):
    script = write(tmp_path / "train.py", TRAIN)
    rc, report, _, _ = profile(tmp_path, "--passes", "bare,light", "--light-pass", "full", "--steps", "2",
                               "--warmup", "0", "--wait", "0", str(script), capsys=capsys)
    assert rc == 0 and report["perturbation"]["light_pass"] == "full"
    assert report["perturbation"]["light_ms_per_step"] is not None
    rc, report, _, _ = profile(tmp_path, "--passes", "light", "--steps", "2", "--warmup", "0", "--wait", "0",
                               str(script), capsys=capsys)
    assert rc == 0 and report["perturbation"]["light_pass"] == "cuda"  # the default
    # without CUDA every recipe records CPU ops: there is nothing else to record
    assert report["perturbation"]["light_activities"] == ["CPU"] and report["light_ops"] is None
    # the step marks are in the trace's metadata (a CUDA-only trace finds its steps by them)
    trace = load_trace(report["passes"]["light"]["trace"])
    marks = StepMarks.from_meta(trace.meta[META_KEY])
    assert marks is not None and len(marks) == 3 and marks.first_step == report["steps"][0]["number"]
    assert all(b <= a for b, a in zip(marks.before, marks.after)) and marks.tid == threading.get_native_id()
    with pytest.raises(SystemExit) as exc:  # argparse's usage error
        main(["profile", "--light-pass", "heavy", str(script)])
    assert exc.value.code == 2 and "invalid choice: 'heavy'" in capsys.readouterr().err


@pytest.mark.parametrize("args, message", [
    ([], "no script given"),
    (["--passes", ","], "name at least one pass"),
    (["--passes", "light,heavy"], "unknown pass heavy"),
    (["--steps", "0"], "--steps must be at least 1"),
    (["--step-on", "not a name"], "expected a dotted name"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path, capsys, args, message):
    script = write(tmp_path / "train.py", TRAIN)
    rc = main(["profile", *args, *([str(script)] if args else [])])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and err.count("\n") == 1


def test_missing_script_and_module(tmp_path, capsys):
    assert main(["profile", "nothere.py"]) == 2
    assert "nothere.py: no such file" in capsys.readouterr().err
    assert main(["profile", "-m", "no_such_module_xyz"]) == 2
    assert "no module named 'no_such_module_xyz'" in capsys.readouterr().err


# ------------------------------------------------------------------------ issue 14: how a script ends

def _profile_process(tmp_path, script, *args):
    return subprocess.run([sys.executable, "-m", "syncscan", "profile", *FAST, "--logdir", "run", *args,
                           str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=240,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)


def test_os_exit_after_the_light_pass_is_reported(tmp_path):
    """os._exit ends a process without a word: syncscan reports what it measured, says so, and
    then ends with the status the script asked for."""
    script = write(tmp_path / "train.py", TRAIN + "    if i == 6:\n        import os\n        os._exit(0)\n")
    proc = _profile_process(tmp_path, script)
    assert proc.returncode == 0, proc.stderr
    assert "called os._exit(0) after 7 steps, fewer than the 9 the schedule needs" in proc.stdout
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["outcome"]["status"] == "os_exit" and report["passes"]["light"]["state"] == "complete"
    assert report["would_sync"]  # the light pass was analysed
    proc = _profile_process(tmp_path, write(tmp_path / "t2.py", TRAIN.replace("value = loss.item()",
                                                                              "value = loss.item(); os._exit(5)")
                                            .replace("import json, sys", "import json, os, sys")))
    assert proc.returncode == 5 and "called os._exit(5) after 1 step" in proc.stdout


def test_os_exit_in_a_thread_is_a_clear_error(tmp_path):
    script = write(tmp_path / "train.py", TRAIN + "    if i == 4:\n        import os, threading\n"
                   "        t = threading.Thread(target=os._exit, args=(0,))\n        t.start()\n        t.join()\n")
    proc = _profile_process(tmp_path, script)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == ("syncscan: error: the script called os._exit(0) outside its "
                                                   "main thread: the process ends now, without syncscan's report")


def test_fail_on_sync_exit_status_differs_from_the_scripts_own(tmp_path, capsys):
    """A script's own sys.exit(3) was indistinguishable from --fail-on-sync's 3."""
    assert EXIT_SYNC_FOUND not in (0, 1, 2, 3, 130)
    script = write(tmp_path / "train.py", TRAIN)
    rc, _, _, err = profile(tmp_path, *FAST, "--fail-on-sync", str(script), capsys=capsys)
    assert rc == EXIT_SYNC_FOUND
    assert f"syncscan: --fail-on-sync: 5 sync site(s) in the profiled steps (exit {EXIT_SYNC_FOUND})" in err
    exits = write(tmp_path / "exits.py", TRAIN + "    if i == 7:\n        sys.exit(3)\n")
    rc, _, _, err = profile(tmp_path, *FAST, "--fail-on-sync", str(exits), capsys=capsys)
    assert rc == 3 and "--fail-on-sync" not in err  # the script's own status wins, and is its own
