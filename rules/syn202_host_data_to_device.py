import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import NDARRAY, TENSOR, TENSORS

from ._indexing import torch_only_module
from ._util import (device_kind, element_kind_of, guessed_param, hidden_keywords, is_number_literal, kwarg, last_assign,
                    method, narrowed_to_host, not_a_device_tensor, short, surely_tensor, tensor_type_device)

FUNCS = ("torch.tensor", "torch.as_tensor")


def has_tensor_elements(ctx, data: ast.AST) -> bool:
    """Data made of tensors that may live on the GPU (SYN203's business, not host data)."""
    if isinstance(data, (ast.List, ast.Tuple)):  # as SYN203 decides: tensors not known only by a guess
        return any(has_tensor_elements(ctx, e) if isinstance(e, (ast.List, ast.Tuple)) else surely_tensor(ctx, e)
                   for e in data.elts)
    if isinstance(data, (ast.ListComp, ast.GeneratorExp)):
        # (over a parameter the engine only guesses is a tensor, `for s in spatial_shapes_list`: host data)
        return element_kind_of(ctx, data) in (TENSOR, TENSORS) and not all(
            guessed_param(ctx, _root(g.iter)) for g in data.generators)
    if ctx.kind(data) == TENSORS:
        return not narrowed_to_host(ctx, data)
    return ctx.kind(data) == TENSOR


def _root(e: ast.AST) -> ast.AST:
    while isinstance(e, (ast.Attribute, ast.Subscript)):
        e = e.value
    return e


def _empty(data: ast.AST) -> bool:
    return isinstance(data, (ast.List, ast.Tuple)) and not data.elts


def _any_value_param(ctx, data: ast.AST) -> bool:
    """A parameter annotated `Any` (a converter's input, a tensor as often as not: `as_tensor` then copies
    nothing)."""
    func = ctx.function
    if not isinstance(data, ast.Name) or func is None or isinstance(func, ast.Lambda) or ctx.kind(data) is not None:
        return False
    a = func.args
    p = next((p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg == data.id), None)
    ann = p.annotation if p is not None else None
    return ann is not None and (getattr(ann, "id", None) or getattr(ann, "attr", None)) == "Any"


class HostDataToDevice(Rule):
    code = "SYN202"
    name = "host-data-to-device"
    summary = ("Host data copied to the GPU as it is made: `torch.tensor(data, device=cuda)`, "
               "`torch.as_tensor(data, device=x.device)`, `x.new_tensor(data)`, a legacy CUDA tensor type made "
               "from an array or a list (`torch.cuda.FloatTensor(np.random.normal(...))`).")
    why = ("The data sits in ordinary (pageable) host memory, so the copy to the device is synchronous: the CPU "
           "waits until the stream has run everything queued before it, then for the copy. In a step this is a "
           "sync every step, often for a constant.")
    rewrite = ("Build it once outside the hot path (in `__init__`, as a buffer: `self.register_buffer('w', "
               "torch.tensor(data))`), or `pin_memory()` it and copy with `.to(dev, non_blocking=True)`; for a "
               "constant, `torch.full((), v, device=dev)` fills on the device without a copy.")
    fix_safety = "safe"
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "build the tensor once outside the step, or pin_memory() then .to(dev, non_blocking=True)"
    footprint = Footprint(ops=1, keeps_gpu_work=True)  # a pinned non_blocking copy: the copy stays
    bad = (
        Bad("""
import torch
from .utility import get_device
def ensemble_error(forwarders, observations, target):
    # a helper named for the device it gives
    td_sum = torch.tensor(0.0, device=get_device(observations))
    for f in forwarders:
        td_sum = td_sum + f(observations, target)
    return td_sum
""", line=6, fixed="""
import torch
from .utility import get_device
def ensemble_error(forwarders, observations, target):
    # a helper named for the device it gives
    td_sum = torch.full((), 0.0, device=get_device(observations))
    for f in forwarders:
        td_sum = td_sum + f(observations, target)
    return td_sum
"""),
        Bad("""
from typing import Sequence
import torch
def filter_tensor(filter_seq: Sequence[float], device: torch.device, dtype: torch.dtype) -> torch.Tensor:
    return torch.as_tensor(data=filter_seq, dtype=dtype, device=device).unsqueeze(0)
""", line=5),
        Bad("""
import torch
def compute_loss(pred, target):
    zero = torch.tensor(0.0, device=pred.device)
    return torch.maximum((pred - target).mean(), zero)
""", line=4, fixed="""
import torch
def compute_loss(pred, target):
    zero = torch.full((), 0.0, device=pred.device)
    return torch.maximum((pred - target).mean(), zero)
"""),
        Bad("""
import torch
def forward(self, x):
    w = torch.tensor([0.2, 0.3, 0.5], device="cuda")
    eps = x.new_tensor(1e-6)
    return x * w + eps
""", line=4, count=2, fixed="""
import torch
def forward(self, x):
    w = torch.tensor([0.2, 0.3, 0.5], device="cuda")
    eps = x.new_full((), 1e-6)
    return x * w + eps
"""),
        Bad("""
import numpy as np
import torch
def train_step(batch, device):
    weights = torch.as_tensor(np.asarray(batch["w"]), device=device)
    ids = torch.tensor(batch["ids"], dtype=torch.long, device=device)
    return weights, ids
""", line=5, count=2),
        Bad("""
import torch
def forward(self, reference_points, spatial_shapes_list=None):
    norm = torch.tensor([[s[1], s[0]] for s in spatial_shapes_list], device=reference_points.device)
    return reference_points / norm
""", line=4),
        Bad("""
import numpy as np
import torch
Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
def train_step(generator, batch_size):
    z = Tensor(np.random.normal(0, 1, (batch_size, 64)))  # a legacy CUDA tensor type made from numpy
    ones = Tensor(batch_size, 1).fill_(1.0)  # sizes: allocated on the device, nothing copied
    return generator(z), ones
""", line=6),
        Bad("""
import torch
def acquisition(X, weights):
    tkwargs = {"dtype": X.dtype, "device": X.device}  # a dict of keywords that carries a device
    w = torch.tensor(weights, **tkwargs)
    return X @ w
""", line=5),
        Bad("""
import numpy as np
import torch
from typing import Any
def convert(data, dtype=None, device=None):
    def _convert(t: Any, **kwargs: Any) -> Any:
        if not isinstance(t, torch.Tensor):
            t = torch.as_tensor(t, **kwargs)  # not a tensor here: host data, to where the callers say
        return t
    if isinstance(data, np.ndarray):
        return _convert(data, dtype=dtype, device=device)
    return _convert(data)
""", line=8),
        Bad("""
import torch
def unit_box(scale, **tensor_args):  # the keywords a factory is handed: a device and a dtype, as a rule
    return torch.tensor([0.0, 0.0, 1.0, 1.0], **tensor_args) * scale
""", line=4),
        Bad("""
import numpy as np
import torch
class Sampler:
    def __init__(self, data):
        self.data = torch.as_tensor(data)
    def sample(self, n):
        idx = np.random.choice(len(self.data), n)
        return self.data[torch.as_tensor(idx)]  # made where the default tensor type puts it: the GPU, probably
def learn(x, gpu, steps):
    if gpu:
        torch.set_default_tensor_type("torch.cuda.FloatTensor")  # factories make on the GPU from here on
    s = Sampler(x)
    for _ in range(steps):
        s.sample(64)
""", line=6, count=2),
        Bad("""
import torch
def build(dims):
    with torch.device("cuda"):
        return torch.tensor(dims)  # made on the GPU: a copy from pageable memory
""", line=5),
    )
    good = (
        Good("""
import torch
def unit_box(scale, dtype):
    kw = dict(dtype=dtype)  # keywords built in sight, with no device: made on the host
    return torch.tensor([0.0, 0.0, 1.0, 1.0], **kw) * scale
"""),
        Good("""
import numpy as np
import torch
def train_step(n):
    return torch.FloatTensor(np.ones(n)), torch.cuda.FloatTensor(n, 3)  # a host tensor; sizes
"""),
        Good("""
import torch
def acquisition(X, weights, **kw):
    tkwargs = {"dtype": X.dtype}  # no device: made on the host
    opts = {**kw, "device": X.device}  # keys it does not show (non_blocking?)
    return X @ torch.tensor(weights, **tkwargs), torch.tensor(weights, **opts)
"""),
        Good("""
import torch
from typing import Any
class Cache:
    def reset(self, device):
        self.keys = torch.tensor([], device=device)  # empty: nothing to copy
    @staticmethod
    def wrap(data: Any, device=None):
        return torch.as_tensor(data, device=device)  # a tensor as often as not: no copy then
"""),
        Good("""
import torch
class M(torch.nn.Module):
    def forward(self, x):
        return x * torch.full((), 0.5, device=x.device) + torch.tensor(2.0)  # the second: on the host
"""),
        Good("""
import torch
def forward(self, x):
    return torch.as_tensor(x, device=x.device), torch.tensor([1, 2], device="cpu")
"""),
        Good("""
import torch
def forward(self, a, b):
    return torch.tensor([a.sum(), b.sum()], device=a.device)  # tensors: SYN203
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q in FUNCS:
            data = node.args[0] if node.args else kwarg(node, "data")  # (`torch.as_tensor(data=seq, ...)`)
            if data is None or isinstance(data, ast.Starred):
                return
            passed = hidden_keywords(ctx, node)
            if passed and not _factory_keywords(ctx, node):
                return
            dev = ctx.infer.call_device(node)
            if dev is None and q == "torch.as_tensor" and len(node.args) > 2:
                dev = node.args[2]
            # (no `device=`: made where factories make by default, the GPU under `with torch.device("cuda"):`, or
            # probably in a module that sets a CUDA default device or tensor type)
            default = None if passed or dev is not None else _default_device(ctx)
            if not passed and default is None and device_kind(ctx, dev) != "device":
                return
            if has_tensor_elements(ctx, data) or _empty(data) \
                    or q == "torch.as_tensor" and _any_value_param(ctx, data) and not narrowed_to_host(ctx, data):
                return  # tensors (SYN203); nothing to copy; probably a tensor already
            if passed or default == "probable":  # (no rewrite to offer: the device is the callers' or the default's)
                self._report(ctx, node, q, None, confidence="low")
                return
            if default is not None:
                self._report(ctx, node, q, None)
                return
            fix = _full_fix(ctx, node, data, f"torch.full(({'1,' if isinstance(data, ast.List) else ''}), ") \
                if node.args else None
            self._report(ctx, node, q, fix)
            return
        if _legacy_device_copy(ctx, node):
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: a `torch.cuda` tensor type made from host data "
                        "copies it to the device from pageable memory, which waits for the stream",
                        "make it on the device (`torch.randn(shape, device=dev)`, `torch.ones(...)`, "
                        "`torch.randint(...)`), or build it once outside the step")
            return
        recv = method(node, "new_tensor")
        if recv is None or q is not None or not node.args or not_a_device_tensor(ctx, recv):
            return
        if hidden_keywords(ctx, node) or device_kind(ctx, ctx.infer.call_device(node)) == "cpu":
            return
        data = node.args[0]
        if has_tensor_elements(ctx, data):
            return
        shape = "(1,)" if isinstance(data, ast.List) else "()"
        fix = _full_fix(ctx, node, data, f"{ctx.text(recv)}.new_full({shape}, ") \
            if isinstance(recv, (ast.Name, ast.Attribute)) else None
        self._report(ctx, node, "Tensor.new_tensor", fix)

    def _report(self, ctx, node, what, fix, confidence=None):
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: {what} copies host data to the device from pageable "
                    "memory, which waits for the stream",
                    fix.message if fix else "build it once outside the hot path (a buffer made in `__init__`), or "
                    "`pin_memory()` it and copy with `.to(dev, non_blocking=True)`", fix=fix, confidence=confidence)


def _default_device(ctx) -> str | None:
    """Where a factory given no device makes: "device" under `with torch.device(<not the CPU>):`, "probable" in a
    module that sets a CUDA default device or tensor type, else None (the host)."""
    inf = ctx.infer
    if inf.default_device is not None:
        return "device" if inf.cpu_device(inf.default_device) is False else None
    return "probable" if inf.module_default_device else None


def _factory_keywords(ctx, node: ast.Call) -> bool:
    """`torch.tensor(data, **factory_kwargs)` with keywords the function was handed (a parameter, its `**kwargs`,
    an attribute): what a factory's keywords are passed around for is a device and a dtype, so probably a copy to
    the device. Not a dict the code builds in sight (its keys are there to read), nor beside an explicit `device=`,
    nor where numpy is another array library of the module."""
    if kwarg(node, "device") is not None or not torch_only_module(ctx):
        return False
    for k in node.keywords:
        if k.arg is not None:
            continue
        v = k.value
        if not isinstance(v, (ast.Name, ast.Attribute)) or ctx.kind(v) is not None:
            return False
        a = last_assign(ctx, v.id, node) if isinstance(v, ast.Name) else None
        if a is not None and isinstance(a.value, (ast.Dict, ast.Call)):
            return False  # (`opts = {**kw, "dtype": t}`, `dict(dtype=t)`, `kw = build()`: not handed in)
    return True


def _legacy_device_copy(ctx, node: ast.Call) -> bool:
    """`torch.cuda.FloatTensor(np.random.normal(...))`, `Tensor([1, 2])` with `Tensor` holding a CUDA
    tensor type: host data (an array, a list) copied to the device. Sizes (`Tensor(n, 1)`) allocate there."""
    if len(node.args) != 1 or node.keywords or tensor_type_device(ctx, node.func) != "device":
        return False
    data = node.args[0]
    if isinstance(data, (ast.List, ast.Tuple, ast.ListComp)):
        return not _empty(data) and not has_tensor_elements(ctx, data)
    return ctx.kind(data) == NDARRAY


def _full_fix(ctx, node: ast.Call, data: ast.AST, head: str) -> Fix | None:
    """A constant (or a one-element list of one): `torch.full((), v, ...)` / `x.new_full((), v)`, same
    value, dtype (both infer it from the Python value, or take `dtype=`), device and requires_grad."""
    value = data.elts[0] if isinstance(data, ast.List) and len(data.elts) == 1 else data
    if not is_number_literal(ctx, value) or len(node.args) != 1:
        return None
    allowed = ("device", "dtype") if ctx.call_name(node) == "torch.as_tensor" else \
        ("device", "dtype", "requires_grad", "pin_memory")
    if any(k.arg not in allowed for k in node.keywords):
        return None  # as_tensor takes no requires_grad: keep its error
    kws = "".join(f", {k.arg}={ctx.text(k.value)}" for k in node.keywords)
    new = f"{head}{ctx.text(value)}{kws})"
    if "\n" in new:
        return None
    return Fix("safe", (ctx.edit(node, new),), message=f"`{new}`: fill on the device, no copy",
               imports=("torch",) if new.startswith("torch.") else ())
