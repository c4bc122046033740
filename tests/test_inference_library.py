"""Inference for held-out library code (session 6): keyword dicts that carry a device, host values
that come back to the device on some branch, host tensors through generators and unseen helpers."""

from test_interproc import kinds

from syncscan.lint.tensors import CPU, HOST, TENSOR, TENSORS


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


def test_unpacking_a_generator_gives_each_target_what_one_pass_makes():
    assert kinds("""
        import torch
        def f(kp1, kp2: torch.Tensor):
            a_host, b_host = kp1.detach().cpu(), kp2.cpu()
            x1, x2 = (torch.cat([kp, kp]) for kp in (a_host, b_host))
            y1, y2 = [kp.cuda() for kp in (a_host, b_host)]
            probe(x1, x2, y1, y2)
    """) == [[CPU, CPU, TENSOR, TENSOR]]


def test_a_helper_the_inference_cannot_see_handed_host_tensors_gives_a_host_tensor():
    # (probably: torch is the module's only array library; not with a device or a tensor that may be on one)
    assert kinds("""
        import torch
        from .conversions import to_homogeneous
        def f(kp: torch.Tensor, dev):
            h = kp.cpu()
            probe(to_homogeneous(h), to_homogeneous(h, 2.0), to_homogeneous(h, device=dev), to_homogeneous(h, kp))
            probe(norm(h), norm(kp))
            probe(_to_device(h, kp.device), move_to_gpu(h), _Model(h))  # movers, a class
    """) == [[CPU, CPU, None, TENSOR], [CPU, TENSOR], [None, None, None]]


def test_none_passed_where_a_tensor_may_go_is_no_tensor_on_a_call_with_host_data():
    assert kinds("""
        import torch
        from typing import Optional
        from .lm import refine
        def _fit(models, x, mask: Optional[torch.Tensor]):
            return refine(models, x, mask)
        def f(kp: torch.Tensor):
            h = kp.cpu()
            probe(_fit(h, h, None), _fit(h, h, kp))
    """) == [[CPU, TENSOR]]


def test_autograd_grad_gives_a_tuple_of_gradients_and_the_functional_transforms_pairs():
    assert kinds("""
        import torch
        from torch.autograd.functional import hvp
        from torch.nn.utils import parameters_to_vector
        def f(model, x):
            loss = model(x).sum()
            grads = torch.autograd.grad(loss, x, create_graph=True)
            (gx,) = torch.autograd.grad(loss, [x])
            out, prod = hvp(model, x, x)
            probe(grads, grads[0], gx, prod, parameters_to_vector(model.parameters()))
    """) == [[TENSORS, TENSOR, TENSOR, TENSOR, TENSOR]]


def test_getattr_with_a_literal_name_is_that_attribute():
    assert kinds("""
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("_on", torch.tensor(False, device="cuda"))
                self.n = 3
            def f(self, x: torch.Tensor):
                probe(getattr(self, "_on", False), getattr(self, "n", 0), getattr(x, "fake_mode", None))
    """) == [[TENSOR, HOST, None]]


def test_typing_cast_is_its_value_as_the_type_says():
    assert kinds("""
        import torch
        from typing import cast
        import typing
        def f(x, n, h):
            probe(cast(torch.Tensor, x), typing.cast(int, n), cast(torch.Tensor, torch.zeros(3)))
    """) == [[TENSOR, HOST, CPU]]


def test_a_local_function_over_the_host_tensors_of_the_function_around_returns_host_tensors():
    assert kinds("""
        import torch
        import numpy as np
        def check(model, labels):
            wh = torch.tensor(np.concatenate(labels)).float()
            def metric(k):
                r = wh[:, None] / k[None]
                return r.max(1)[0].mean(), r.sum()
            bpr, aat = metric(model.anchors.cpu())
            def scaled(k):
                return k * 2
            probe(bpr, aat, scaled(model.w))
    """) == [[CPU, CPU, None]]


def test_a_property_or_cached_property_of_the_class_is_the_tensor_its_getter_returns():
    assert kinds("""
        import torch
        from functools import cached_property
        class Sched:
            def __init__(self, n):
                self.sigmas = torch.linspace(1, 0, n, device="cuda")
                self.i = 0
            @property
            def ones(self):
                return torch.ones(3, device="cuda")
            @property
            def count(self):
                return len(self.sigmas)
            @cached_property
            def table(self):
                mapping = torch.zeros(8, dtype=torch.int)
                return mapping
            def step(self, x):
                probe(self.ones, self.count, self.table)
    """) == [[TENSOR, None, CPU]]  # (a property's host value is not taken: a tensor or a host tensor only)



def test_a_methods_local_function_over_its_host_tensors_returns_host_tensors():
    assert kinds("""
        import torch
        class Anchors:
            def check(self, sizes):
                wh = torch.tensor(sizes).float()
                def metric(k):
                    return (wh / k).max(), (wh * k).mean()
                bpr, aat = metric(self.anchors.cpu())
                probe(bpr, aat)
    """) == [[CPU, CPU]]
