"""The fixture training scripts (fixtures/) and the workload benchmark, on the CPU.

Each script runs as a subprocess for 2 steps with small sizes (in parallel, to stay fast);
the naive and fixed masked losses must agree numerically; the naive files must keep the sync
patterns the linter is shown flagging and the other files must not contain them.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import math
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("torchvision")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"

SMALL = {
    "masked_loss_naive": ["--batch", "2", "--size", "32"],
    "masked_loss_fixed": ["--batch", "2", "--size", "32"],
    "encdec_serial": ["--batch", "2", "--size", "32", "--width", "4", "--depth", "5"],
    "encdec_piped": ["--batch", "2", "--size", "32", "--width", "4", "--depth", "5"],
    "augment_cpu": ["--batch", "2", "--size", "32", "--workers", "1"],
    "augment_gpu": ["--batch", "2", "--size", "32", "--workers", "0"],
    "augment_gpu_stream": ["--batch", "2", "--size", "32", "--workers", "0"],
    "classic_loop_naive": ["--batch", "8", "--size", "16", "--workers", "0", "--log-every", "1"],
    "classic_loop_fixed": ["--batch", "8", "--size", "16", "--workers", "0"],
}
SCRIPTS = sorted(SMALL)
NAIVE = {"masked_loss_naive", "classic_loop_naive"}


def fixture(name: str):
    if str(FIXTURES) not in sys.path:
        sys.path.insert(0, str(FIXTURES))
    return importlib.import_module(name)


def source_tree(name: str) -> ast.Module:
    return ast.parse((FIXTURES / f"{name}.py").read_text())


# ---------------------------------------------------------------------------- scripts run

@pytest.fixture(scope="module")
def script_runs():
    """Run every script for 2 steps on the CPU, a few at a time."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")

    def run(name):
        cmd = [sys.executable, str(FIXTURES / f"{name}.py"), "--device", "cpu", "--steps", "2",
               "--warmup", "0", *SMALL[name]]
        return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=180)

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(zip(SCRIPTS, pool.map(run, SCRIPTS)))


def final_loss(stdout: str) -> float:
    match = re.search(r"final loss ([-+.\w]+)", stdout)
    assert match, stdout
    return float(match.group(1))


def test_every_fixture_script_is_tested():
    found = {p.stem for p in FIXTURES.glob("*.py") if not p.name.startswith("_")}
    assert found == set(SMALL)


@pytest.mark.parametrize("name", SCRIPTS)
def test_script_runs_two_steps_on_cpu(script_runs, name):
    proc = script_runs[name]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"{name}: 2 steps on cpu" in proc.stdout
    assert "ms/step" in proc.stdout
    assert math.isfinite(final_loss(proc.stdout))


@pytest.mark.parametrize("name", ["encdec_piped", "augment_gpu_stream"])
def test_stream_variants_say_once_they_run_serially_on_cpu(script_runs, name):
    assert script_runs[name].stdout.count("no CUDA streams on cpu") == 1


@pytest.mark.parametrize("serial, piped", [("encdec_serial", "encdec_piped"),
                                           ("augment_gpu", "augment_gpu_stream")])
def test_stream_variant_trains_on_the_same_batches(script_runs, serial, piped):
    # same seed, same data, same order: the same loss (labels stay with their images)
    assert final_loss(script_runs[piped].stdout) == pytest.approx(
        final_loss(script_runs[serial].stdout), rel=1e-5)


def test_naive_classic_loop_logs_every_step(script_runs):
    assert script_runs["classic_loop_naive"].stdout.count("step ") >= 2


def test_bad_sizes_are_reported_without_traceback():
    proc = subprocess.run([sys.executable, str(FIXTURES / "encdec_serial.py"), "--device", "cpu",
                           "--size", "48", "--depth", "5"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode != 0
    assert "multiple of 2**depth" in proc.stderr and "Traceback" not in proc.stderr


# ---------------------------------------------------------------------------- structure

@pytest.mark.parametrize("name", SCRIPTS)
def test_script_shape(name):
    """main() under `if __name__ == "__main__":`, a make_step(), one optimizer.step() call."""
    tree = source_tree(name)
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"main", "make_step"} <= functions
    guards = [n for n in tree.body if isinstance(n, ast.If) and "__name__" in ast.unparse(n.test)]
    assert guards and "main()" in ast.unparse(guards[0])


@pytest.mark.parametrize("name", SCRIPTS)
def test_one_step_calls_optimizer_step_once(name):
    """syncscan profile ends a step at every optimizer.step(): exactly one per step."""
    from torch.optim.optimizer import register_optimizer_step_post_hook

    module = fixture(name)
    kwargs = dict(batch=2, size=32)
    if name.startswith("encdec"):
        kwargs.update(width=4, depth=5)
    if name.startswith(("augment", "classic")):
        kwargs.update(workers=0)
    step = module.make_step(torch.device("cpu"), **kwargs)
    calls = []
    handle = register_optimizer_step_post_hook(lambda opt, args, kw: calls.append(opt))
    try:
        loss = step()
        assert len(calls) == 1
        step()
        assert len(calls) == 2
    finally:
        handle.remove()
    assert isinstance(loss, torch.Tensor) and not loss.requires_grad


# ---------------------------------------------------------------------------- masked loss

def both_losses(pred, target):
    naive, fixed = fixture("masked_loss_naive"), fixture("masked_loss_fixed")
    p1 = pred.clone().requires_grad_()
    p2 = pred.clone().requires_grad_()
    t = target.clone()
    l1 = naive.MaskedLoss()(p1, t)  # modifies t in place, as the original did
    l2 = fixed.MaskedLoss()(p2, target)
    return (l1, p1), (l2, p2)


def assert_same_loss(pred, target):
    before = target.clone()
    (l1, p1), (l2, p2) = both_losses(pred, target)
    torch.testing.assert_close(l2, l1, equal_nan=True, rtol=1e-5, atol=1e-6)
    assert torch.equal(target, before), "the fixed loss must not modify its target"
    if target.numel():
        l1.backward()
        l2.backward()
        torch.testing.assert_close(p2.grad, p1.grad, rtol=1e-4, atol=1e-7)
    return l1


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 31 - 1), n=st.integers(1, 3), h=st.integers(1, 7),
       w=st.integers(1, 7), labels=st.lists(st.integers(-1, 9), min_size=1, max_size=5))
def test_fixed_masked_loss_equals_naive(seed, n, h, w, labels):
    gen = torch.Generator().manual_seed(seed)
    pred = torch.randn(n, 10, h, w, generator=gen)
    choice = torch.randint(0, len(labels), (n, h, w), generator=gen)
    target = torch.tensor(labels)[choice]
    assert_same_loss(pred, target)


@pytest.mark.parametrize("label", [0, 4, 8])
def test_one_label_only_gives_zero_loss(label):
    pred = torch.randn(2, 10, 5, 5)
    loss = assert_same_loss(pred, torch.full((2, 5, 5), label))
    assert loss.item() == 0.0


def test_two_labels_give_the_cross_entropy():
    pred = torch.randn(2, 10, 4, 4)
    target = torch.randint(0, 2, (2, 4, 4))
    target[0, 0, 0], target[0, 0, 1] = 0, 1
    loss = assert_same_loss(pred, target)
    expected = torch.nn.functional.cross_entropy(pred, target)
    torch.testing.assert_close(loss, expected)


@pytest.mark.parametrize("fill", [9, -1])  # all background; all already ignored
def test_nothing_left_after_masking(fill):
    # the mean over no pixels is nan in both (0. * nan stays nan), as in the original
    loss = assert_same_loss(torch.randn(2, 10, 3, 3), torch.full((2, 3, 3), fill))
    assert loss.isnan()


def test_only_background_and_one_label():
    target = torch.full((1, 4, 4), 9)
    target[0, 0] = 2  # labels left: {2, -1}: two values, so the loss is kept (as unique did)
    loss = assert_same_loss(torch.randn(1, 10, 4, 4), target)
    assert loss.item() > 0


def test_empty_batch():
    assert_same_loss(torch.randn(0, 10, 4, 4), torch.zeros(0, 4, 4, dtype=torch.long))


# ---------------------------------------------------------------------------- sync patterns

def calls(tree: ast.AST) -> list[ast.Call]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def call_name(call: ast.Call) -> str:
    return ast.unparse(call.func)


def method_calls(tree: ast.AST, attr: str) -> list[ast.Call]:
    return [c for c in calls(tree) if isinstance(c.func, ast.Attribute) and c.func.attr == attr]


def class_def(tree: ast.Module, name: str) -> ast.ClassDef:
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)


def function_def(tree: ast.AST, name: str) -> ast.FunctionDef:
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)


def test_naive_masked_loss_keeps_its_syncs():
    tree = source_tree("masked_loss_naive")
    loss = class_def(tree, "MaskedLoss")
    names = [call_name(c) for c in calls(loss)]
    assert "torch.nonzero" in names
    assert "torch.unique" in names
    # index assignment with the nonzero result
    assigns = [n for n in ast.walk(loss) if isinstance(n, ast.Assign)
               and isinstance(n.targets[0], ast.Subscript)]
    assert any(ast.unparse(a.targets[0].slice) == "inds" for a in assigns)
    # a Python `if` on the size of unique's result
    assert any(isinstance(n, ast.If) and "numel()" in ast.unparse(n.test) for n in ast.walk(loss))
    # cross-entropy over boolean-masked logits and targets
    ce = [c for c in calls(loss) if call_name(c).endswith("cross_entropy")]
    assert ce and all(isinstance(a, ast.Subscript) for a in ce[0].args[:2])
    assert not ce[0].keywords
    # the record_function scopes of the recorded traces
    scopes = {c.args[0].value for c in calls(tree) if call_name(c) == "record_function"}
    assert {"forward", "loss", "backward", "optimizer"} <= scopes


def test_fixed_masked_loss_uses_the_sync_free_forms():
    tree = source_tree("masked_loss_fixed")
    loss = class_def(tree, "MaskedLoss")
    names = {call_name(c) for c in calls(loss)}
    assert {"torch.where", "F.cross_entropy"} <= names
    assert method_calls(loss, "masked_fill") and method_calls(loss, "sort")
    ce = next(c for c in calls(loss) if call_name(c) == "F.cross_entropy")
    assert "ignore_index" in {k.arg for k in ce.keywords}
    assert not [n for n in ast.walk(loss) if isinstance(n, (ast.If, ast.IfExp))]
    scopes = {c.args[0].value for c in calls(tree) if call_name(c) == "record_function"}
    assert {"forward", "loss", "backward", "optimizer"} <= scopes


def test_naive_classic_loop_keeps_its_syncs():
    tree = source_tree("classic_loop_naive")
    assert method_calls(tree, "item")
    assert any(isinstance(c.func.value, ast.Call) and c.func.value.func.attr == "cpu"
               for c in method_calls(tree, "numpy"))
    loaders = [c for c in calls(tree) if call_name(c) == "DataLoader"]
    assert loaders and all("pin_memory" not in {k.arg for k in c.keywords} for c in loaders)
    step = function_def(tree, "step")
    to_calls = method_calls(step, "to")  # the batch copies
    assert to_calls and all("non_blocking" not in {k.arg for k in c.keywords} for c in to_calls)
    assert "torch.cuda.synchronize" in {call_name(c) for c in calls(step)}


def test_fixed_classic_loop_pins_and_copies_asynchronously():
    tree = source_tree("classic_loop_fixed")
    loader = next(c for c in calls(tree) if call_name(c) == "DataLoader")
    assert "pin_memory" in {k.arg for k in loader.keywords}
    to_calls = method_calls(function_def(tree, "step"), "to")  # the batch copies
    assert to_calls
    for call in to_calls:
        assert any(k.arg == "non_blocking" and ast.unparse(k.value) == "True"
                   for k in call.keywords), ast.unparse(call)
    assert method_calls(tree, "record")  # CUDA events, read after the loop


SYNC_METHODS = {"item", "tolist", "cpu", "numpy", "synchronize", "nonzero", "unique"}


@pytest.mark.parametrize("name", sorted(set(SCRIPTS) - NAIVE))
def test_other_scripts_have_no_host_reads(name):
    found = [ast.unparse(c) for c in calls(source_tree(name))
             if isinstance(c.func, ast.Attribute) and c.func.attr in SYNC_METHODS]
    assert not found


# ---------------------------------------------------------------------------- gpu_augment

def test_gpu_augment_geometry_and_blur():
    import torchvision.transforms.v2.functional as TF

    augment = fixture("augment_gpu").gpu_augment
    images = torch.randint(0, 256, (3, 3, 24, 24), dtype=torch.uint8)
    plain = dict(scale=(1, 1), ratio=(1, 1), max_degrees=0, sampling_ratio=1)

    def up_to_flip(out, ref):
        return torch.minimum((out - ref).abs().amax((1, 2, 3)),
                             (out - ref.flip(-1)).abs().amax((1, 2, 3))).max().item()

    # full box, no rotation, (almost) no blur: the image itself, normalised
    out = augment(images, 24, sigma=(1e-3, 1e-3), **plain)
    assert up_to_flip(out, (images.float() / 255 - 0.5) / 0.25) < 1e-5
    # the per-image blur is torchvision's gaussian blur
    out = augment(images, 24, sigma=(1.5, 1.5), **plain)
    ref = (TF.gaussian_blur(images.float() / 255, [9, 9], [1.5, 1.5]) - 0.5) / 0.25
    assert up_to_flip(out, ref) < 1e-4
    assert augment(images, 16).shape == (3, 3, 16, 16)


# ---------------------------------------------------------------------------- benchmark

def load_benchmark():
    spec = importlib.util.spec_from_file_location("bench_workloads",
                                                  REPO / "benchmarks" / "workloads.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_benchmark_cpu_smoke(capsys, tmp_path):
    bench = load_benchmark()
    out = tmp_path / "smoke.json"
    assert bench.main(["--cpu-smoke", "--json", str(out)]) == 0
    assert "4/4 workloads" in capsys.readouterr().out
    import json

    data = json.loads(out.read_text())
    variants = {(r["workload"], v) for r in data["results"] for v in r["variants"]}
    assert len(variants) == 9


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU path")
def test_benchmark_without_cuda_times_nothing(capsys):
    assert load_benchmark().main([]) == 0
    assert "no CUDA GPU available, nothing timed" in capsys.readouterr().out


def test_benchmark_statistics_and_table():
    bench = load_benchmark()
    stats = bench.summarize([4.0, 2.0, 3.0, 10.0, 1.0])
    assert stats["median_ms"] == 3.0 and stats["min_ms"] == 1.0 and stats["max_ms"] == 10.0
    assert (stats["q1_ms"], stats["q3_ms"]) == (2.0, 4.0)
    assert stats["steps_per_s"] == pytest.approx(1000 / 3)
    row = dict(stats, speedup=1.5, syncs_per_step=0)
    table = bench.markdown_table([
        dict(workload="w", config="c", variants={"a": dict(row, speedup=1.0, syncs_per_step=6),
                                                 "b": row}),
        dict(workload="w", config="d", skipped="time budget"),
    ])
    assert "| w | c | b | 3.00 | 1.00-10.00 | 2.00-4.00 | 333.3 | x1.50 (+50.0%) | 0 |" in table
    assert "not measured: time budget" in table


def test_benchmark_gpu_cases_cover_the_brief():
    bench = load_benchmark()
    configs = {(c.workload, c.config.split(",")[0], c.params["size"]) for c in
               bench.gpu_cases(quick=False)}
    assert {("masked_loss", "batch 32", 256), ("masked_loss", "batch 256", 256),
            ("masked_loss", "batch 16", 64), ("encdec", "batch 8", 256),
            ("encdec", "batch 16", 256), ("encdec", "batch 32", 256),
            ("augment", "batch 32", 256), ("augment", "batch 64", 256)} <= configs
    assert {c.workload for c in bench.gpu_cases(quick=True)} == set(bench.WORKLOADS)


def test_benchmark_breakdown_parts_run_on_cpu():
    bench = load_benchmark()
    tiny = dict(masked=((2, 16, 1),),
                encoder=dict(width=2, depth=3, size=16, batches=(2,), steps=1),
                augment=dict(size=16, crop=12, batches=(2,), steps=1))
    rows = bench.breakdown(torch.device("cpu"), quick=True, sizes=tiny)
    assert [(r["part"], r["variant"]) for r in rows] == [
        ("masked loss fwd+bwd", "naive"), ("masked loss fwd+bwd", "fixed"),
        ("frozen encoder fwd", "encoder"), ("gpu_augment", "augment")]
    assert all(r["median_ms"] > 0 for r in rows)
    assert "| gpu_augment | batch 2, 16->12 | augment |" in bench.breakdown_table(rows)
