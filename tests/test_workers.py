"""Worker processes (workers.py): they die with their parent, and work is handed out in bounded batches."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from syncscan.lint import workers

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from lint_speed import _tree  # noqa: E402 - the process tree, read from /proc


def _children(pid: int) -> list[int]:
    return _tree(pid)[1:]  # (its descendants: the workers)


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper is dead)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2:].split()[0] != b"Z"


def _busy_tree(d, files=24, functions=300):
    d.mkdir()
    body = "".join(f"def f{i}(x, y):\n    z = torch.nonzero(x > {i})\n    if y.sum() > {i}:\n"
                   f"        return z.tolist()\n    return x.max().item()\n\n\n" for i in range(functions))
    for n in range(files):
        (d / f"m{n}.py").write_text("import torch\n\n\n" + body)


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads the process tree from /proc")
def test_kill_9_of_the_parent_leaves_no_worker(tmp_path):
    _busy_tree(tmp_path / "src")
    proc = subprocess.Popen([sys.executable, "-m", "syncscan", "lint", "--no-cache", "-j", "2", "src"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        kids: list[int] = []
        while time.monotonic() < deadline and len(kids) < 2:
            if proc.poll() is not None:
                pytest.fail("the lint ended before its workers could be seen")
            time.sleep(0.05)
            kids = _children(proc.pid)
        assert len(kids) >= 2, "no workers started"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(k) for k in kids):
            time.sleep(0.05)
        assert not any(_alive(k) for k in kids)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_batches_put_big_items_first_and_keep_every_worker_busy():
    sizes = {f"f{i}": s for i, s in enumerate([10, 500_000, 30, 20, 70_000, 5, 5, 5])}
    groups = workers.batches(list(sizes), sizes.get, jobs=2)
    assert groups[0] == ["f1"]  # the biggest alone, first
    assert sorted(x for g in groups for x in g) == sorted(sizes)
    assert len(groups) >= 2
    assert max(len(g) for g in workers.batches([f"x{i}" for i in range(1000)], lambda _: 1, jobs=2)) <= 32


def _square(x):
    return x * x


def test_run_yields_every_item_with_bounded_batches():
    groups = [[i, i + 100] for i in range(20)]
    assert sorted(workers.run(_square, groups, 2)) == sorted(x * x for g in groups for x in g)
