"""The second held-out set, `fresh` (benchmarks/fresh_collect.py, benchmarks/accuracy.py --set fresh).

The collector's CPU smoke mode on one of its libraries, and what scoring adds for the set: its own
libraries and repositories are counted (a library of another set reached from them is listed apart),
and a library whose wheel has another name than its package is fetched by the wheel's name.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
COLLECT = ROOT / "benchmarks" / "fresh_collect.py"


@pytest.fixture(scope="module")
def accuracy():
    return load_benchmark("accuracy")


def test_collector_records_a_fresh_library_on_the_cpu(tmp_path):
    """pytorch-crf's tagger: both modes run; its Viterbi decoding turns tensors into Python lists, and
    the site is torchcrf's own line, named under its package (not the wheel's name, pytorch_crf)."""
    pytest.importorskip("torchcrf")
    cmd = [sys.executable, str(COLLECT), "--device", "cpu", "--only", "crf.tagger", "--out", str(tmp_path)]
    r = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    raw = json.loads((tmp_path / "sync_raw.json").read_text())
    assert [(x["mode"], x["status"]) for x in raw["models"]] == [("train", "ok"), ("decode", "ok")], raw["models"]
    meta = raw["meta"]
    assert meta["set"] == "fresh" and meta["versions"]["pytorch_crf"][0].isdigit()
    assert set(meta["repos"]) == {"minGPT", "pygcn"} and all(len(x["commit"]) == 40 for x in meta["repos"].values())
    crf = [s for s in raw["sites"] if s["package"] == "torchcrf"]
    assert crf and all(s["path"].startswith("torchcrf/") for s in crf), raw["sites"]
    assert "decode" in {m for s in crf for m in s["modes"]}
    assert r.stdout.strip().splitlines()[-1].split()[:3] == ["crf.tagger", "decode", "ok"]


def _site(pkg, path, line, source):
    return {"package": pkg, "path": path, "line": line, "function": "f", "source": source, "count": 1,
            "models": {"x.m/train": 1}, "modes": ["train"], "ops": {"Tensor.item": 1}, "kinds": ["debug_mode"],
            "torch_frames": [], "callers": [], "backward": False}


def test_fresh_counts_its_own_libraries_and_fetches_them_by_wheel(accuracy, tmp_path, monkeypatch):
    """torchcrf ships in the pytorch_crf wheel: its version is recorded under the wheel's name and its
    source is unpacked from that wheel. torchdiffeq (a `heldout` library, under torchcde) is not counted."""
    monkeypatch.setattr(accuracy, "CACHE", tmp_path / "cache")
    wheels = tmp_path / "cache" / "wheels"
    wheels.mkdir(parents=True)
    with zipfile.ZipFile(wheels / "pytorch_crf-0.7.2-py3-none-any.whl", "w") as z:
        z.writestr("torchcrf/__init__.py", "def decode(x):\n    return x.argmax(-1).tolist()\n")
        z.writestr("pytorch_crf-0.7.2.dist-info/METADATA", "Name: pytorch-crf\n")
    with zipfile.ZipFile(wheels / "torchdiffeq-0.2.5-py3-none-any.whl", "w") as z:
        z.writestr("torchdiffeq/__init__.py", "def f(t):\n    return t.tolist()\n")
    meta = {"set": "fresh", "versions": {"python": "3.12.3", "torch": "2.11.0", "pytorch_crf": "0.7.2",
                                         "torchdiffeq": "0.2.5"}, "device": "NVIDIA H100", "date": "2026-11-26"}
    data = {"meta": meta, "runs": [{"model": "x.m", "mode": "train", "status": "ok"}],
            "sites": [_site("torchcrf", "torchcrf/__init__.py", 2, "return x.argmax(-1).tolist()"),
                      _site("torchdiffeq", "torchdiffeq/__init__.py", 2, "return t.tolist()")],
            "executed": {}}
    counted = accuracy.counted_packages(data)
    assert {"torchcrf", "pyro", "ignite", "other"} <= counted and not counted & {"torchdiffeq", "kornia", "timm"}
    roots = accuracy.ensure_sources(meta, quiet=True, packages=accuracy.SET_PACKAGES["fresh"] + ("torchdiffeq",))
    assert (roots["torchcrf"] / "torchcrf" / "__init__.py").is_file()
    res = accuracy.measure(data, roots, false_flags=False)
    assert [(r["site"]["package"], r["found"]) for r in res["rows"]] == [("torchcrf", True)]
    assert [s["package"] for s in res["apart"]] == ["torchdiffeq"]
    assert "pytorch_crf 0.7.2" in accuracy.report(res, data)


def test_fresh_is_a_set_of_the_command_line(accuracy, tmp_path):
    """`merge --set fresh` writes where `--set fresh` reads; a missing data file is one line, exit 2."""
    assert accuracy.SETS["fresh"] == ROOT / "benchmarks" / "data" / "fresh" / "sync_sites.json"
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "accuracy.py"), "--set", "fresh", "--data",
                        str(tmp_path / "absent.json")], capture_output=True, text=True, check=False, timeout=120)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "absent.json" in r.stderr, r.stderr


def test_fresh_reference_data_is_complete(accuracy):
    """Once the GPU recording is merged (`accuracy.py merge --set fresh`): every workload ran on an
    NVIDIA GPU, and no library of the tuned or the first held-out set is counted."""
    path = accuracy.SETS["fresh"]
    if not path.is_file():
        pytest.skip(f"{path} not recorded yet (benchmarks/fresh_collect.py on the GPU machine, then merge)")
    data = json.loads(path.read_text())
    meta = data["meta"]
    assert meta["set"] == "fresh" and meta["device"].startswith("NVIDIA")
    assert all(r["status"] == "ok" for r in data["runs"]), [r for r in data["runs"] if r["status"] != "ok"]
    # the collector's workloads, read from its source (importing it would install the recorder's patches here)
    tree = ast.parse(COLLECT.read_text())
    models = next(n.value for n in tree.body if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name)
                  and n.targets[0].id == "MODELS")
    assert {r["model"] for r in data["runs"]} == {ast.literal_eval(t.elts[0]) for t in models.elts}
    counted = accuracy.counted_packages(data)
    assert not counted & (set(accuracy.PACKAGES) | set(accuracy.HELDOUT_PACKAGES))
