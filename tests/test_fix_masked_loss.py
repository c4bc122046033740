"""`syncscan lint --fix --unsafe-fixes` on the naive masked-loss fixture, as a user would run it.

The fixture's loss (fixtures/masked_loss_naive.py, an nn.Module like the seed article's) syncs
through nonzero + index assignment, unique + `if ....numel() < 2`, and a cross-entropy over
boolean-masked logits and targets. A copy is fixed by the CLI; the result must lint clean of hot
findings and compute the same loss, the same gradients and the same in-place change of `target`
as the original, on random inputs and on the edge cases (one label only, all background, nothing
left after masking, an empty batch).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
NAIVE = FIXTURES / "masked_loss_naive.py"


def syncscan(*args, cwd):
    return subprocess.run([sys.executable, "-m", "syncscan", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def fixed_copy(tmp_path_factory):
    if not NAIVE.exists():
        pytest.skip("fixtures/masked_loss_naive.py is not there")
    d = tmp_path_factory.mktemp("masked_loss")
    for f in ("masked_loss_naive.py", "_common.py"):
        shutil.copy(FIXTURES / f, d / f)
    r = syncscan("lint", "--fix", "--unsafe-fixes", "--no-cache", "masked_loss_naive.py", cwd=d)
    assert r.returncode in (0, 1), r.stderr
    assert "Fixed" in r.stdout, r.stdout + r.stderr
    return d / "masked_loss_naive.py"


@pytest.fixture(scope="module")
def losses(fixed_copy):
    return load(NAIVE, "masked_loss_naive_original").MaskedLoss, load(fixed_copy, "masked_loss_naive_fixed").MaskedLoss


def hot_findings(path: Path) -> list[dict]:
    r = syncscan("lint", "--format", "json", "--no-cache", "--exit-zero", path.name, cwd=path.parent)
    assert r.returncode == 0, r.stderr
    return [f for f in json.loads(r.stdout) if f["context"] == "hot"]


def test_the_naive_fixture_has_the_syncs_to_fix(tmp_path):
    shutil.copy(NAIVE, tmp_path / NAIVE.name)
    codes = {f["code"] for f in hot_findings(tmp_path / NAIVE.name)}
    assert {"SYN301", "SYN305", "SYN306"} <= codes


def test_the_fixed_fixture_has_no_hot_findings(fixed_copy):
    assert hot_findings(fixed_copy) == []


def test_the_fixed_loss_uses_the_sync_free_forms(fixed_copy):
    tree = ast.parse(fixed_copy.read_text())
    loss = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "MaskedLoss")
    src = ast.unparse(loss)
    called = {ast.unparse(c.func).rsplit(".", 1)[-1] for c in ast.walk(loss) if isinstance(c, ast.Call)}
    assert not called & {"nonzero", "unique", "unique_consecutive"}, called
    assert not [s for s in ast.walk(loss) if isinstance(s, ast.Subscript) and isinstance(s.slice, ast.Name)
                and s.slice.id in ("mask", "inds")], "a boolean-mask or index read is left"
    assert not [n for n in ast.walk(loss) if isinstance(n, ast.If)]
    assert "masked_fill_(" in src and ".sort().values" in src and "torch.where(" in src and "ignore_index=" in src
    assert 'record_function("loss")' in fixed_copy.read_text()
    # fixing again changes nothing
    before = fixed_copy.read_text()
    syncscan("lint", "--fix", "--unsafe-fixes", "--no-cache", fixed_copy.name, cwd=fixed_copy.parent)
    assert fixed_copy.read_text() == before


def compare(losses, pred, target):
    naive, fixed = losses
    p0, p1 = pred.clone().requires_grad_(), pred.clone().requires_grad_()
    t0, t1 = target.clone(), target.clone()
    l0 = naive()(p0, t0)
    l1 = fixed()(p1, t1)
    torch.testing.assert_close(l1, l0, equal_nan=True, rtol=1e-5, atol=1e-6)
    assert torch.equal(t1, t0), "the in-place change of target differs"
    if pred.numel():
        l0.backward()
        l1.backward()
        torch.testing.assert_close(p1.grad, p0.grad, equal_nan=True, rtol=1e-4, atol=1e-7)
    return l0, l1


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(1, 3), h=st.integers(1, 6), w=st.integers(1, 6),
       labels=st.lists(st.integers(-1, 9), min_size=1, max_size=5))
def test_fixed_loss_equals_the_naive_one(losses, seed, n, h, w, labels):
    g = torch.Generator().manual_seed(seed)
    pred = torch.randn(n, 10, h, w, generator=g)
    target = torch.tensor(labels)[torch.randint(0, len(labels), (n, h, w), generator=g)]
    compare(losses, pred, target)


@pytest.mark.parametrize("label", [0, 5, 8])
def test_one_label_only(losses, label):
    l0, l1 = compare(losses, torch.randn(2, 10, 4, 3), torch.full((2, 4, 3), label))
    assert l1.item() == 0.0


@pytest.mark.parametrize("fill", [9, -1])  # all background; all already ignored
def test_nothing_left_after_masking(losses, fill):
    l0, l1 = compare(losses, torch.randn(2, 10, 3, 3), torch.full((2, 3, 3), fill))
    assert l1.isnan()


def test_background_and_one_label(losses):
    target = torch.full((1, 4, 4), 9)
    target[0, 1] = 3  # labels left: {3, -1}: two, so the loss is kept
    l0, l1 = compare(losses, torch.randn(1, 10, 4, 4), target)
    assert l1.item() > 0


def test_empty_batch(losses):
    compare(losses, torch.randn(0, 10, 4, 4), torch.zeros(0, 4, 4, dtype=torch.long))
