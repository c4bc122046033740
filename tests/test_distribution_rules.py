"""SYN405 (distribution validation) and SYN409 (torch.normal's std check) beyond their examples:
subclasses whose bases come from elsewhere, validation flags handed on by position, guards, and
tracing-only branches."""

from __future__ import annotations

import textwrap

from syncscan.lint.engine import lint_source
from syncscan.lint.registry import all_rules

RULES = {r.code: r for r in all_rules()}


def lint(code: str, src: str):
    res = lint_source("m.py", textwrap.dedent(src), [RULES[code]()])
    assert res.error is None, res.error
    return [(f.line, f.confidence) for f in res.findings if f.code == code]


def test_subclass_of_an_imported_base_with_arg_constraints_validates_in_super_init():
    src = """
        import torch
        from .base import TorchDistribution
        from . import constraints
        class Spike(TorchDistribution):
            arg_constraints = {"v": constraints.dependent, "log_density": constraints.real}
            def __init__(self, v, log_density, validate_args=None):
                super().__init__(v.shape, (), validate_args)
        class Point(TorchDistribution):
            arg_constraints = {"v": constraints.dependent}  # nothing that can be checked
            def __init__(self, v, validate_args=None):
                super().__init__(v.shape, (), validate_args)
    """
    assert lint("SYN405", src) == [(8, "high")]


def test_validate_sample_is_silent_where_a_flag_of_its_own_or_a_method_of_its_own_decides():
    src = """
        import torch
        class A(torch.distributions.Normal):
            def log_prob(self, value):
                if self._validate_args:
                    pass
                else:
                    self._validate_sample(value)  # validation off here
                return value
        class B(torch.distributions.Normal):
            def _validate_sample(self, value):
                return None
            def log_prob(self, value):
                self._validate_sample(value)
                return value
        class C(torch.distributions.Normal):
            def cdf(self, value):
                if not torch._C._get_tracing_state():
                    if self._validate_args:
                        self._validate_sample(value)
                return value
    """
    assert lint("SYN405", src) == [(20, "high")]


def test_log_prob_of_a_distribution_built_from_host_numbers_needs_a_device_value():
    src = """
        import torch
        from torch.distributions import Normal
        def nll(x: torch.Tensor, y):
            prior = Normal(0.0, 1.0)
            a = prior.log_prob(y)      # y: not known to be on the device
            return prior.log_prob(x)   # x: a tensor
    """
    assert lint("SYN405", src) == [(7, "high")]


def test_torch_normal_in_a_tracing_only_branch_is_export_time():
    src = """
        import torch
        def draw(m: torch.Tensor, s: torch.Tensor):
            if torch._C._get_tracing_state():
                return torch.normal(m, s)
            return torch.normal(m, s, generator=None)
    """
    res = lint_source("m.py", textwrap.dedent(src), [RULES["SYN409"]()])
    assert [(f.line, f.local, f.fix is None) for f in res.findings] == [(5, "export", True), (6, "", True)]


def test_syn409_rewrites_draw_the_same_shape_and_dtype_and_keep_the_gradient_at_zero():
    """The fixes change the random stream, nothing else visible: the result's shape, dtype and
    (absent) gradient flow are torch.normal's / sample()'s."""
    import pytest

    torch = pytest.importorskip("torch")
    from syncscan.lint.fixer import fix_text

    src = textwrap.dedent("""
        import torch
        from torch.distributions import Normal, LogNormal
        def a(x: torch.Tensor):
            return torch.normal(mean=torch.zeros_like(x), std=x.abs() + 1e-3)
        def b(mu: torch.Tensor):
            return torch.normal(mu, mu.abs() * 0.1 + 0.5)
        def c(mu: torch.Tensor, log_std: torch.Tensor):
            d = LogNormal(mu, log_std.exp(), validate_args=False)
            return d.sample((3,))
    """)
    out = fix_text("snippet.py", src, [RULES["SYN409"]()], (), True, lambda f: True)
    assert out.error is None and out.after.count("randn_like") == 2 and ".rsample((3,)).detach()" in out.after
    before: dict = {}
    after: dict = {}
    exec(compile(src, "before.py", "exec"), before)
    exec(compile(out.after, "after.py", "exec"), after)
    x = torch.randn(2, 5, dtype=torch.float64, requires_grad=True)
    s = torch.randn(2, 5, dtype=torch.float64, requires_grad=True)
    for name, args in (("a", (x,)), ("b", (x,)), ("c", (x, s))):
        want, got = before[name](*args), after[name](*args)
        assert got.shape == want.shape and got.dtype == want.dtype, name
        if want.requires_grad:  # torch.normal's gradient is zero: the rewrite passes none back
            want.sum().backward()
            assert not x.grad.any()
        assert not got.requires_grad, name
