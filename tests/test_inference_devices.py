"""Devices that flow through calls (session 8): the CPU device a function returns (alone or in a tuple), one
handed to a parameter, the device of the tensors a helper is handed (else the CPU), and calls through a name
bound to one of several module functions."""

from test_interproc import kinds

from syncscan.lint.tensors import CPU, TENSOR

_EXTRACT = """
import torch
from typing import Any, List, Tuple
def extract(values: List[Any]) -> Tuple[torch.device, torch.dtype]:
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    if not tensors:
        return torch.empty(0).device, torch.get_default_dtype()
    return tensors[0].device, tensors[0].dtype
"""


def test_a_function_that_returns_the_cpu_device_on_every_path():
    assert kinds("""
        import torch
        def host_device(flag):
            if flag:
                return torch.device("cpu")
            return torch.zeros(1).device  # a host tensor's device
        def device_and_dtype():
            return "cpu", torch.float32
        def either(x: torch.Tensor, flag):
            return x.device if flag else torch.device("cpu")
        def f(x: torch.Tensor, n: int):
            d = host_device(n)
            dev, dt = device_and_dtype()
            probe(torch.zeros(n, device=d), x.to(dev), torch.ones(n, device=host_device(1)), x.to(d, dt))
            probe(torch.zeros(n, device=either(x, n)))
    """) == [[CPU, CPU, CPU, CPU], [TENSOR]]


def test_the_device_of_the_tensors_a_helper_is_handed_else_the_cpu():
    # `extract` gives the device of the first tensor among its values, else the CPU (annotated, read from its walk)
    assert kinds(_EXTRACT + """
def f(x: torch.Tensor, n: int, scale: float):
    dev, dtype = extract([n, scale, None])  # no tensor: the CPU
    probe(torch.zeros(n, device=dev), (x * 2).to(device=dev, dtype=dtype))
def g(x: torch.Tensor, n: int):
    dev, dtype = extract([x, n])  # the device of `x`
    probe(torch.zeros(n, device=dev))
def h(x: torch.Tensor, n, other):
    dev, dtype = extract([other, n])  # `other` is not known: nor is the device
    probe(torch.zeros(n, device=dev))
""") == [[CPU, CPU], [TENSOR], [TENSOR]]


def test_a_host_tensor_handed_to_such_a_helper_gives_the_cpu():
    assert kinds(_EXTRACT + """
def f(x: torch.Tensor, n: int):
    dev, _ = extract([x.cpu()])
    probe(torch.zeros(n, device=dev))
""") == [[CPU]]


def test_the_cpu_device_handed_to_a_parameter():
    assert kinds("""
        import torch
        def make(n, device):
            return torch.zeros(n, device=device)
        def f(x: torch.Tensor, n: int):
            host = torch.device("cpu")
            probe(make(n, host), make(n, x.device), make(n, torch.empty(0).device), make(n, device="cpu"))
    """) == [[CPU, TENSOR, CPU, CPU]]


def test_the_device_of_a_probable_host_tensor_is_not_taken_for_the_cpu():
    # `to_homogeneous(h)` of a host tensor is a host tensor only by a guess (`_host_call`): its device is not sure
    assert kinds("""
        import torch
        from .conversions import to_homogeneous
        def f(kp: torch.Tensor, n: int):
            guess = to_homogeneous(kp.cpu())
            d = guess.device
            probe(torch.zeros(n, device=d), torch.zeros(n, device=kp.cpu().device))
    """) == [[TENSOR, CPU]]


def test_a_call_through_a_name_bound_to_module_functions():
    assert kinds("""
        import torch
        def _top(X, scores, k=4):
            idx = torch.randperm(X.shape[0], device=X.device)[:k]
            return X[idx], scores[idx]
        def _first(X, scores, k=4):
            return X[:k], scores[:k]
        def pick(X, n, largest, **options):
            if largest:
                select = _top
            else:
                select = _first
            H = torch.rand(n, 3)
            a, b = select(X=H, scores=torch.rand(n), **options)
            probe(a, b)
        def other(X, select, n):
            probe(select(torch.rand(n), torch.rand(n), **X))  # a parameter: whatever the caller hands in
    """) == [[CPU, CPU], [None]]


def test_a_device_parameter_every_call_hands_the_cpu_device():
    # (annotated `torch.device`: the annotation says a device, the module's calls which one)
    assert kinds("""
        import torch
        def _draw(n, device: torch.device):
            drawn = torch.rand(n).cuda().floor()
            probe(drawn.to(device=device), torch.zeros(n, device=device))
        def _mixed(n, device):
            probe(torch.zeros(n, device=device))
        def f(x: torch.Tensor, n: int):
            dev = torch.empty(0).device
            _draw(n, dev)
            _mixed(n, dev)
            _mixed(n, x.device)
        def g(n: int):
            _draw(n, torch.device("cpu"))
    """) == [[CPU, CPU], [TENSOR]]


def test_the_default_tensor_type_is_the_host_unless_the_module_sets_a_cuda_one():
    # `.type(torch.Tensor)` converts to the default tensor type: the host's, unless the module sets a CUDA one
    # (in a function as much as at import: from then on the process's factories make on the GPU)
    assert kinds("""
        import torch
        def f(a, n):
            probe(torch.as_tensor(a).type(torch.Tensor), torch.zeros(n).type(torch.FloatTensor))
    """) == [[CPU, CPU]]
    assert kinds("""
        import torch
        def learn(gpu):
            if gpu:
                torch.set_default_tensor_type("torch.cuda.FloatTensor")
        def f(a, n):
            probe(torch.as_tensor(a).type(torch.Tensor), torch.zeros(n).type(torch.FloatTensor))
    """) == [[TENSOR, CPU]]


def test_a_class_attribute_made_from_another_keeps_its_device():
    # `self.acp = torch.cumprod(1 - self.betas)` of a host `self.betas`: a host tensor too (SYN201's Trajectory
    # example covers the other half: one method's `.cpu()` copy beside a tensor elsewhere is not surely host)
    assert kinds("""
        import torch
        class Schedule:
            def __init__(self, n):
                self.betas = torch.linspace(0, 1, n)
                self.acp = torch.cumprod(1 - self.betas, 0)
            def f(self):
                probe(self.acp)
    """) == [[CPU]]
