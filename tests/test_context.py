"""Hot, epoch and cold (syncscan/lint/hotpath.py): how often a line runs decides its context. Each
snippet marks its lines with `# hot`, `# epoch` or `# cold`; every finding on a marked line must
have that context, and every marked line must have a finding."""

from __future__ import annotations

import textwrap

import pytest

from syncscan.lint.engine import lint_source, settle_context
from syncscan.lint.hotpath import frequency, is_periodic
from syncscan.lint.registry import all_rules

RULES = [r() for r in all_rules()]


def contexts(files: dict[str, str]) -> dict[tuple[str, int], set[str]]:
    results = [lint_source(p, textwrap.dedent(s), RULES) for p, s in files.items()]
    for r in results:
        assert r.error is None, r.error
    settle_context(results)
    out: dict[tuple[str, int], set[str]] = {}
    for r in results:
        for f in r.findings:
            out.setdefault((r.path, f.line), set()).add(f.context)
    return out


def expected(files: dict[str, str]) -> dict[tuple[str, int], set[str]]:
    out = {}
    for p, s in files.items():
        for i, line in enumerate(textwrap.dedent(s).splitlines(), 1):
            for c in ("hot", "epoch", "cold"):
                if line.rstrip().endswith(f"# {c}"):
                    out[(p, i)] = {c}
    return out


def check(files: dict[str, str]) -> None:
    assert contexts(files) == expected(files)


def test_epoch_loop_periodic_logging_and_evaluation():
    check({"train.py": """
        import torch
        def evaluate(model, val_loader):
            correct = 0
            for x, y in val_loader:
                correct += (model(x).argmax(1) == y).sum().item()  # epoch
            return correct
        def main(model, loader, val_loader, opt):
            for epoch in range(10):
                for step, (x, y) in enumerate(loader):
                    loss = model(x, y)
                    loss.backward()
                    opt.step()
                    print(loss.item())  # hot
                    if step % 100 == 0:
                        print(loss.item())  # epoch
                acc = evaluate(model, val_loader)
                print(acc, loss.item())  # epoch
            print(loss.item())  # cold
    """})


def test_inference_loop_of_a_script_is_hot():
    check({"infer.py": """
        import torch
        def run(model, loader):
            preds = []
            for x in loader:
                preds.append(model(x).argmax().item())  # hot
            return torch.tensor(preds, device="cuda").sum().item()  # cold
    """})


def test_a_test_that_calls_backward_is_not_hot():
    check({"tests/test_grad.py": """
        import torch
        def test_grad():
            x = torch.randn(3, device="cuda", requires_grad=True)
            (x * 2).sum().backward()
            assert x.grad.sum().item() == 6  # cold
    """})


def test_a_step_function_called_from_the_loop_of_another_file():
    check({"step.py": """
        def train_step(model, batch, opt):
            loss = model(batch)
            loss.backward()
            opt.step()
            return loss.item()  # hot
        def log_images(model, batch):
            return model(batch).max().item()  # epoch
    """, "loop.py": """
        from step import train_step, log_images
        def fit(model, batches, opt):
            for i, batch in enumerate(batches):
                loss = train_step(model, batch, opt)
                if i % 50 == 0:
                    log_images(model, batch)
    """})


def test_train_one_epoch_runs_its_loop_every_step_and_the_rest_once_per_epoch():
    check({"engine.py": """
        import torch
        def train_one_epoch(model, loader, opt):
            for x, y in loader:
                loss = model(x, y)
                loss.backward()
                opt.step()
                total = loss.item()  # hot
            return torch.stack([loss]).mean().item()  # epoch
    """})


def test_frequency_table():
    assert frequency("once", "step") == "step" and frequency("once", "data") == "step"
    assert frequency("epoch", "data") == "epoch" and frequency("epoch", "step") == "step"
    assert frequency("step", "periodic") == "epoch" and frequency("once", "periodic") == "once"
    assert frequency("once", "epoch") == "epoch" and frequency("step", "") == "step"


@pytest.mark.parametrize("test,periodic", [
    ("it % 10 == 0", True), ("not step % args.log_every", True), ("(i + 1) % n == 0 and rank == 0", True),
    ("should_log", True), ("x > 0", False), ("is_training", False), ("step == 0", False),
])
def test_periodic_tests(test, periodic):
    import ast

    assert is_periodic(ast.parse(test, mode="eval").body) is periodic


def test_text_json_and_sarif_carry_the_epoch_context(tmp_path):
    import json
    import subprocess
    import sys

    (tmp_path / "train.py").write_text(textwrap.dedent("""
        def main(model, loader, opt):
            for epoch in range(3):
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    opt.step()
                print(loss.item())
    """))

    def lint(*args):
        return subprocess.run([sys.executable, "-m", "syncscan", "lint", "--no-cache", *args, str(tmp_path)],
                              capture_output=True, text=True, cwd=tmp_path, timeout=120)

    default = lint()
    assert default.returncode == 0 and "1 more in per-epoch code" in default.stdout
    text = lint("--all")
    assert text.returncode == 1 and "SYN101 [epoch]" in text.stdout
    data = json.loads(lint("--all", "--format", "json").stdout)
    assert [(f["code"], f["context"]) for f in data] == [("SYN101", "epoch")]
    sarif = json.loads(lint("--all", "--format", "sarif").stdout)
    assert sarif["runs"][0]["results"][0]["properties"]["context"] == "epoch"
    assert "[epoch]" in lint("--all", "--format", "github").stdout


def test_closures_and_decorator_wrappers_run_with_their_function():
    check({"rope.py": """
        import torch
        def dynamic_update(forward):
            def wrapper(self, x):
                if x.unsqueeze(0).sum().item() > 0:  # hot
                    x = x + 1
                return forward(self, x)
            return wrapper
        class Rope(torch.nn.Module):
            @dynamic_update
            def forward(self, x):
                def inner(v):
                    return v.sum().item()  # hot
                return inner(x)
        def setup():
            def unused_helper(v):
                return v.sum().item()  # cold
            return unused_helper
    """, "other.py": """
        def forward(self, x):
            def unused_helper(v):
                return v
            return unused_helper(x)
    """})


def test_a_local_function_called_from_the_step_loop():
    check({"loop.py": """
        def train(model, loader, opt):
            def peak(x):
                return model(x).max().item()  # hot
            def report(loss):
                return loss.item()  # cold
            for x in loader:
                model(x).sum().backward()
                opt.step()
                peak(x)
            report(model(x))
    """})


def test_the_data_loop_of_a_training_epoch_is_its_step_loop_whatever_wraps_the_loader():
    check({"engine.py": """
        import torch
        def train_one_epoch(model, data_loader, optimizer, loss_scaler, metric_logger, device):
            for it, (samples, _) in enumerate(metric_logger.log_every(data_loader, 20)):
                samples = samples.to(device)  # hot
                loss = model(samples)
                loss_value = loss.item()  # hot
                loss_scaler(loss, optimizer)  # hot
        def validation_step(model, data_loader, metric_logger, device):
            for samples, _ in metric_logger.log_every(data_loader, 10):
                samples = samples.to(device)  # epoch
    """})


def test_a_loop_that_draws_its_batch_is_the_step_around_its_phases():
    check({"loop.py": """
        import torch
        def training_loop(loader, phases, device):
            it = iter(loader)
            while True:
                img, c = next(it)
                img = img.to(device)  # hot
                for phase in phases:
                    phase.loss(img).backward()
                    phase.opt.step()
    """})


def test_a_loop_beside_the_epochs_of_an_iteration_runs_every_step():
    """PPO-style: each pass of the outer loop collects a rollout (a loop of environment steps), then
    trains for some epochs over it; the rollout loop runs as often as steps. Code of the outer loop's
    own body still runs once per pass; in a plain epoch loop a loop beside the step loop stays epoch."""
    check({"ppo.py": """
        import torch
        def main(agent, envs, opt, device, n_iter, n_steps, k, obs):
            for it in range(n_iter):
                for step in range(n_steps):
                    action = agent(obs)
                    obs, reward = envs.step(action.cpu().numpy())  # hot
                    obs = torch.tensor(obs).to(device)  # hot
                for epoch in range(k):
                    for mb in range(4):
                        loss = agent(obs).mean()
                        loss.backward()
                        opt.step()
                print(loss.item())  # epoch
        def fit(model, loader, opt, params):
            for epoch in range(10):
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    opt.step()
                for p in params:
                    print(p.norm().item())  # epoch
        def fit_micro(model, loader, opt, params):
            for epoch in range(10):
                for x, y in loader:  # a data loop whose micro-batches step: still one epoch's steps
                    for xm in x.chunk(4):
                        model(xm, y).backward()
                        opt.step()
                for p in params:
                    print(p.norm().item())  # epoch
    """})


def test_a_generic_method_of_an_instance_the_step_loop_calls():
    """`metric_logger.update(...)` in the step loop: `update` is too generic a name to follow, but the
    file builds `metric_logger` from one class, so that class's `update` runs every step."""
    check({
        "misc.py": """
            class MetricLogger:
                def update(self, **kwargs):
                    for k, v in kwargs.items():
                        print(k, v.item())  # hot
            class Meter:
                def update(self, v):
                    print(v.item())  # cold
        """,
        "train.py": """
            import misc
            def main(model, loader, opt):
                metric_logger = misc.MetricLogger()
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    opt.step()
                    metric_logger.update(loss=loss)
        """})


def test_a_function_called_through_a_local_variable_runs_where_it_is_called():
    """`spline_fn = rational_spline` ... `spline_fn(x)` in code a forward reaches: the function the
    variable holds runs every step too (as does any function the variable may hold)."""
    check({"flows.py": """
        import torch
        def transform(x, tails=None):
            if tails is None:
                spline_fn = rational_spline
            else:
                spline_fn = unconstrained_spline
            return spline_fn(x)
        def rational_spline(x):
            if torch.min(x) < 0:  # hot
                x = x.clamp(0)
            return x
        def unconstrained_spline(x):
            print(x.sum().item())  # hot
            return x
        def unused(x):
            print(x.sum().item())  # cold
        class Flow(torch.nn.Module):
            def forward(self, x):
                return transform(x)
    """})


def test_the_call_of_a_loss_object_runs_every_step():
    """`compute_loss = ComputeLoss(model)` ... `compute_loss(pred, targets)`: a loss class's `__call__`
    computes the loss as a module's forward does."""
    check({"loss.py": """
        import torch
        class ComputeLoss:
            def __init__(self, model):
                torch.cuda.synchronize()  # cold
            def __call__(self, pred, targets):
                loss = (pred - targets).abs().mean()
                print(loss.item())  # hot
                return loss
    """})


def test_a_callable_object_made_in_the_step_is_called_there():
    """`return _Wrapped(model, table)` in code that runs every step, handed on and called: the class's
    `__call__` runs every step (an object of a callable class is made to be called)."""
    check({"respace.py": """
        import torch
        class Spaced:
            def training_losses(self, model, x, t):
                return self.inner_losses(self._wrap(model), x, t)
            def inner_losses(self, model, x, t):
                return model(x, t).mean()
            def _wrap(self, model):
                return _Wrapped(model, [0, 10, 20])
        class _Wrapped:
            def __init__(self, model, table):
                self.model, self.table = model, table
            def __call__(self, x, ts):
                m = torch.tensor(self.table, device=ts.device)  # hot
                return self.model(x, m[ts])
        class Unused:
            def __call__(self, ts):
                return torch.tensor([1, 2], device=ts.device)  # cold
    """})
