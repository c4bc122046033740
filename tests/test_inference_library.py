"""Inference for held-out library code (session 6): keyword dicts that carry a device, host values
that come back to the device on some branch, host tensors through generators and unseen helpers."""

from test_interproc import kinds

from syncscan.lint.tensors import CPU, TENSOR


def test_a_dict_of_keywords_that_carries_a_device_makes_on_that_device():
    assert kinds("""
        import torch
        def f(X, n):
            tkwargs = {"dtype": X.dtype, "device": X.device}
            hkwargs = {"dtype": X.dtype}
            probe(torch.zeros(n, **tkwargs), torch.zeros(n, **hkwargs), torch.ones(n, **dict(device=X.device)))
            tkwargs = {}
            probe(torch.zeros(n, **tkwargs))
    """) == [[TENSOR, CPU, CPU], [CPU]]


def test_kwargs_that_callers_fill_with_a_device():
    assert kinds("""
        import torch
        def make(n, **kwargs):
            probe(torch.zeros(n, **kwargs))
        def use(x):
            return make(3), make(4, device=x.device)
        def make_h(n, **kwargs):
            probe(torch.zeros(n, **kwargs))
        def use_h(x, **kw):
            return make_h(3, dtype=x.dtype), make_h(3, **kw)
    """) == [[TENSOR], [CPU]]
