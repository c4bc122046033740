import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule

from ._util import is_builtin, lazy_message, short, surely_tensor

BUILTINS = ("int", "float", "bool", "complex")
# math functions that read their argument as a Python number (`__float__` / `__index__` / `__floor__`)
MATH_FUNCS = frozenset({
    "sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "pow", "floor", "ceil", "isnan", "isinf",
    "isfinite", "isclose", "fabs", "sin", "cos", "tan", "atan", "atan2", "tanh", "erf", "prod", "fsum", "hypot",
    "copysign", "degrees", "radians", "fmod", "modf", "frexp", "ldexp", "gcd", "lcm", "factorial", "comb", "perm",
})


# numpy functions that look at an object without reading its values
_NP_METADATA = frozenset({"isscalar", "ndim", "shape", "size", "iterable", "result_type", "dtype", "can_cast"})


class ScalarConversion(Rule):
    code = "SYN103"
    name = "scalar-conversion"
    summary = ("`int(t)`, `float(t)`, `bool(t)`, `complex(t)`, `math.*(t)`, `numpy.*(t)` and `operator.index(t)` "
               "on a tensor that may live on the GPU.")
    why = ("Turning a tensor into a Python number calls `.item()` underneath: the value is copied to the host, so "
           "the CPU waits for every kernel queued before it. `math.sqrt(t)` or `np.float32(t)` do the same through "
           "`__float__` / `__array__` (a CUDA tensor cannot become a numpy array at all without `.cpu()`).")
    rewrite = ("Stay in torch: `t.sqrt()`, `t.floor()`, `torch.isnan(t)`, `t.to(torch.int64)`, and decide on the "
               "device with `torch.where`; convert once, late, where the host really needs the number.")
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "keep it a tensor: compare and combine on the GPU instead of int()/float()/bool()"
    footprint = Footprint(ops=1)  # compare and combine on the device
    bad = (
        Bad("""
import torch
from torch import nn
class VAE(nn.Module):
    def loss_function(self, x, recon):
        self.mse = torch.nn.functional.mse_loss(recon, x)
        return self.mse
    def latest_losses(self):
        return {"mse": self.mse}
def train(model, loader, opt):
    losses = {}
    for x in loader:
        loss = model.loss_function(x, model(x))
        loss.backward()
        opt.step()
        latest = model.latest_losses()  # what the classes with this method return: a dict of tensors
        for key in latest:
            losses[key] = losses.get(key, 0) + float(latest[key])
""", line=18),
        Bad("""
import torch
class OptimWrapper:
    def __init__(self, optimizer, clip_type="norm"):
        self.optimizer = optimizer
        if clip_type == "norm":
            self.clip_func = torch.nn.utils.clip_grad_norm_  # a torch function kept on the instance
        else:
            self.clip_func = torch.nn.utils.clip_grad_value_
    def clip(self, params, log):
        grad = self.clip_func(params, max_norm=1.0)
        if grad is not None:
            log(float(grad))  # low confidence: the norm on one path, None on the other
""", line=13),
        Bad("""
import torch
def forward(self, x):
    n = int(x.sum())
    return x[:, :3] * n
""", line=4),
        Bad("""
import torch
class LineSearchLBFGS(torch.optim.Optimizer):
    @torch.no_grad()
    def step(self, closure):
        orig_loss = closure()  # the optimizer's closure returns the loss tensor
        loss = float(orig_loss)
        return orig_loss, loss
""", line=7),
        Bad("""
import math
import torch
def compute_loss(pred, target):
    loss = (pred - target).pow(2).mean()
    if math.isnan(loss):
        raise ValueError("nan")
    return loss
""", line=6),
        Bad("""
import numpy as np
import torch
def forward(self, x: torch.Tensor):
    return np.float32(x.mean()) * 2
""", line=5),
        Bad("""
import operator
def forward(self, x, k):
    return x[: operator.index(k.max())]
""", line=4),
        Bad("""
def compute_loss(pred, target):
    loss = (pred - target).abs().mean()
    return {"loss": float(loss), "ok": bool(loss < 10)}
""", line=4, count=2),
        Bad("""
def paste(mask, box, im_h):
    # type: (Tensor, Tensor, int) -> Tensor
    w = int(box[2] - box[0] + 1)  # a TorchScript type comment says `box` is a tensor
    return mask[:im_h, :w]
""", line=4),
        Bad("""
import torch
def scale_of(sizes):
    return sizes.float().mean()
def f(x):
    return x * float(scale_of(x.new_ones(3)))  # a helper of this module that returns a tensor
""", line=6),
        Bad("""
from abc import abstractmethod
from typing import Dict
from torch import Tensor
class Metric:
    @abstractmethod
    def _compute(self) -> Dict[str, Tensor]:
        \"\"\"The results, by name (each subclass computes them).\"\"\"
    def compute(self) -> Dict[str, float]:
        return {key: float(value) for key, value in self._compute().items()}
""", line=10),
        Bad("""
import torch
def solve(X, opt, steps):
    percents = []
    for _ in range(steps):
        norm_X = X.norm(p="fro")
        try:
            percent = 100 * opt.state["d"].norm() / norm_X
        except KeyError:
            percent = 0.0  # the handler's fallback does not undo the body's tensor
        percents.append(float(percent))
    return percents
""", line=11),
    )
    good = (
        Good("""
import torch
from torch import nn
class Counter(nn.Module):
    def stats(self):
        return {"n": 3}
def report(model, loader, opt):
    for x in loader:
        model(x).sum().backward()
        opt.step()
        s = model.stats()
        print(float(s["n"]))  # what the class's method returns: Python numbers
"""),
        Good("""
import numpy as np
import numpy.typing as npt
import torch
class Discrete:
    def _to_numpy_int(self, samples) -> npt.NDArray:
        if isinstance(samples, torch.Tensor):
            samples = samples.cpu().numpy()
        return samples.astype(int)
    def __init__(self, samples: torch.Tensor):
        self.samples = self._to_numpy_int(samples)
        self.counts = np.bincount(self.samples)  # a numpy array, as the helper's annotation says
"""),
        Good("""
import math
import torch
def forward(self, x):
    n = int(x.shape[0])
    d = float(x.size(-1))
    return x * math.sqrt(d) / n
"""),
        Good("""
import torch
def f(a: int, s: str):
    return int(a), float(s), bool(len(s)), int(torch.cuda.device_count())
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    c = x.cpu()
    return float(c.sum()), int(x.numel()), int(x.item())  # host tensor / host numbers (SYN101 has the .item())
"""),
        Good("""
import numpy as np
def f(a):
    return np.mean(a), int(np.argmax(a))
"""),
        Good("""
def expand(mask, padding):
    # type: (Tensor, int) -> Tensor
    return mask, int(padding * 2)  # `padding` is an int by the type comment
"""),
        Good("""
import torch
def count(x):
    return x.shape[0] + 1
def f(x: torch.Tensor):
    return int(count(x))  # the helper returns a host number
"""),
    )

    def visit_Call(self, node, ctx):
        if not node.args:
            return
        arg = node.args[0]
        b = is_builtin(ctx, node.func, *BUILTINS)
        if b is not None:
            if len(node.args) == 1 and not node.keywords and surely_tensor(ctx, arg) and not lazy_message(ctx, node):
                self._report(ctx, node, arg, f"`{b}()`", _suggest(ctx, b, arg))
            return
        q = ctx.call_name(node)
        if q is None:
            return
        if q.startswith("math.") and q[5:] in MATH_FUNCS:
            hit = next((a for a in node.args if surely_tensor(ctx, a)), None)
            if hit is not None and not lazy_message(ctx, node):
                self._report(ctx, node, hit, f"`{q}()`", f"`torch.{q[5:]}` / the tensor method keeps it on the device"
                             if q[5:] in ("sqrt", "exp", "log", "log2", "log10", "log1p", "expm1", "floor", "ceil",
                                          "isnan", "isinf", "isfinite", "sin", "cos", "tan", "tanh", "erf", "atan2",
                                          "hypot", "copysign", "fmod", "frexp", "ldexp", "gcd", "lcm", "pow")
                             else "compute it with torch on the device")
        elif q == "operator.index":
            if surely_tensor(ctx, arg) and not lazy_message(ctx, node):
                self._report(ctx, node, arg, "`operator.index()`", "use a host integer (a size, `x.shape[i]`) instead")
        elif q.startswith(("numpy.", "np.")) and q.rsplit(".", 1)[-1] not in _NP_METADATA:
            hit = next((a for a in node.args if surely_tensor(ctx, a)), None)
            if hit is not None and not lazy_message(ctx, node):
                self._report(ctx, node, hit, f"`{q}()`", "compute it with torch on the device; convert to numpy once, "
                             "late, after an explicit `.cpu()`")

    def _report(self, ctx, node, arg, what, suggestion):
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: {what} reads the tensor `{short(ctx, arg, 30)}` as a host "
                    "value, which waits for all queued GPU work", suggestion)


def _suggest(ctx, b: str, arg: ast.AST) -> str:
    t = short(ctx, arg, 40)
    if b == "bool":
        return f"keep `{t}` as a tensor and branch on the device with `torch.where`"
    if b == "int":
        return f"keep it on the device (`{t}.long()`), or use a host integer (a size) where one is needed"
    return f"keep it on the device (`{t}` is already a tensor); read it once, late, where the host needs it"
