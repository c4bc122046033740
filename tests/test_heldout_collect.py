"""The held-out collector's recording path on the CPU (benchmarks/heldout_collect.py).

The GPU run records syncs with the CUDA debug mode; on a CPU the recorder warns for a few ops
(item, tolist, nonzero, cpu, unique) as the debug mode would, so these tests check what the
held-out set adds to the tuned set's recorder: sites attributed inside a library that is not the
tuned set's, windows opened and closed inside a script's own loop, and the script stopped after.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COLLECT = ROOT / "benchmarks" / "heldout_collect.py"


def test_library_sites_are_attributed_to_the_library(tmp_path):
    """torchdiffeq's adaptive solver converts its step grid with `.tolist()` every solve: the site is
    torchdiffeq's own line, named relative to its package root, and all four modes run."""
    pytest.importorskip("torchdiffeq")
    r = subprocess.run([sys.executable, str(COLLECT), "--device", "cpu", "--only", "torchdiffeq.ode",
                        "--out", str(tmp_path)], check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    raw = json.loads((tmp_path / "sync_raw.json").read_text())
    assert [x["status"] for x in raw["models"]] == ["ok"] * 4, raw["models"]
    assert raw["meta"]["set"] == "heldout" and raw["meta"]["versions"]["torchdiffeq"][0].isdigit()
    assert raw["meta"]["repos"]["nanoGPT"]["commit"]
    sites = [s for s in raw["sites"] if s["package"] == "torchdiffeq"]
    tolist = [s for s in sites if "Tensor.tolist" in s["ops"]]
    assert tolist and all(s["path"].startswith("torchdiffeq/_impl/") for s in tolist), sites
    assert {"train", "train_adjoint"} <= {m for s in tolist for m in s["modes"]}
    assert any(p.startswith("torchdiffeq/") for p in raw["executed"])
    # the table printed last names every run
    assert r.stdout.strip().splitlines()[-1].split()[:3] == ["torchdiffeq.ode", "event", "ok"]


DRIVER = """
import json, sys
from pathlib import Path
sys.path.insert(0, {bench!r})
import heldout_collect as hc
import accuracy_collect as ac
import torch

repo = Path({repo!r})
ac.EXTRA_ROOTS[str(repo) + "/"] = "toyrepo"
dev = torch.device("cpu")
with hc.window_on(torch.Tensor, "backward", "toy.train", "train", dev, start=3, stop=5, stop_script=True) as state:
    hc.run_script(repo / "train.py", ["--steps", "8"], {cwd!r})
assert "toyhelper" not in sys.modules, "the script's own modules are forgotten"
Path({out!r}).write_text(json.dumps({{"sites": list(ac.REC.sites.values()), "calls": state["n"],
                                      "executed": {{k: sorted(v) for k, v in ac.REC.executed.items()}}}}))
"""

SCRIPT = """
import argparse
import torch
from toyhelper import loss_of

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int)
args = p.parse_args()
w = torch.zeros(3, requires_grad=True)
setup = w.detach().sum().item()            # once, before the loop: not in the window
for step in range(args.steps):
    loss = loss_of(w, step)
    loss.backward()
    value = loss.item()                    # every step
open("finished.txt", "w").write("the loop ran to the end")
"""

HELPER = """
import warnings

import torch


def loss_of(w, step):
    with warnings.catch_warnings(record=True) as caught:  # a library recording warnings, as botorch does
        warnings.simplefilter("always")
        idx = torch.nonzero(w.detach() >= 0)   # every step, in a helper module of the repository
    for c in caught:
        warnings.warn_explicit(str(c.message), c.category, c.filename, c.lineno)  # and re-emitting them
    return (w * (step + 1)).sum() + 0 * idx.numel()
"""


def test_window_inside_a_scripts_own_loop(tmp_path):
    """A script is run as is: the window opens at the 3rd `backward()` and closes at the 5th, so exactly
    two steps' syncs are recorded (the `.item()` after backward of steps 3-4, the helper's nonzero of
    steps 4-5), none of the setup; the script is stopped there and its helper module is forgotten.
    The helper's sync is recorded on its own line although the helper records warnings itself, and
    not again where it re-emits them."""
    pytest.importorskip("torch")
    repo = tmp_path / "toyrepo"
    repo.mkdir()
    (repo / "train.py").write_text(textwrap.dedent(SCRIPT))
    (repo / "toyhelper.py").write_text(textwrap.dedent(HELPER))
    cwd = tmp_path / "run"
    cwd.mkdir()
    out = tmp_path / "out.json"
    code = DRIVER.format(bench=str(ROOT / "benchmarks"), repo=str(repo), cwd=str(cwd), out=str(out))
    r = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    res = json.loads(out.read_text())
    assert res["calls"] == 5
    assert not (cwd / "finished.txt").exists(), "the script must stop when the window closes"
    by_src = {s["source"]: s for s in res["sites"]}
    assert set(by_src) == {"value = loss.item()                    # every step",
                           "idx = torch.nonzero(w.detach() >= 0)   # every step, in a helper module of the repository"}
    item = by_src["value = loss.item()                    # every step"]
    assert item["package"] == "toyrepo" and item["path"] == "toyrepo/train.py" and item["count"] == 2
    assert item["models"] == {"toy.train/train": 2}
    helper = by_src["idx = torch.nonzero(w.detach() >= 0)   # every step, in a helper module of the repository"]
    assert helper["path"] == "toyrepo/toyhelper.py" and helper["count"] == 2
    assert 14 in res["executed"]["toyrepo/train.py"]  # the loop body ran inside the window


def test_window_that_never_closes_is_an_error(tmp_path):
    """A loop shorter than the window is a failed measurement, not a silently partial one."""
    pytest.importorskip("torch")
    code = f"""
import sys
sys.path.insert(0, {str(ROOT / "benchmarks")!r})
import heldout_collect as hc
import accuracy_collect as ac
import torch
w = torch.zeros(2, requires_grad=True)
try:
    with hc.window_on(torch.Tensor, "backward", "m", "train", torch.device("cpu"), start=2, stop=9):
        for _ in range(3):
            (w * 2).sum().backward()
except RuntimeError as e:
    assert "did not close" in str(e), e
    assert ac.measuring.open is None and torch.Tensor.backward.__name__ == "backward"
    print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
