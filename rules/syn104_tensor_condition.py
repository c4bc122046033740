import ast
import re

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, TENSOR, Env
from syncscan.lint.tree import param_defaults

from ._util import (alone_on_lines, dominates, flow, indent_of, is_number_literal, pos, ruled_out_tensor, short,
                    surely_tensor)

# pure tensor operations (no in-place change, no randomness, no host copy): evaluating one of them
# when the `if` would not have run changes nothing but time
PURE = frozenset({
    "abs", "neg", "negative", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt", "square",
    "sin", "cos", "tan", "tanh", "sigmoid", "relu", "gelu", "silu", "softplus", "softmax", "log_softmax", "clamp",
    "clip", "clamp_min", "clamp_max", "minimum", "maximum", "fmin", "fmax", "where", "add", "sub", "subtract", "mul",
    "multiply", "div", "divide", "true_divide", "floor_divide", "remainder", "fmod", "pow", "reciprocal", "sign",
    "floor", "ceil", "round", "trunc", "frac", "sum", "mean", "prod", "amax", "amin", "norm", "std", "var",
    "logsumexp", "cumsum", "all", "any", "isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not",
    "logical_xor", "eq", "ne", "lt", "le", "gt", "ge", "zeros_like", "ones_like", "full_like", "float", "double",
    "half", "bfloat16", "long", "int", "bool", "type_as", "detach", "clone", "contiguous", "view", "view_as",
    "reshape", "reshape_as", "flatten", "squeeze", "unsqueeze", "permute", "transpose", "t", "expand", "expand_as",
    "matmul", "mm", "bmm", "dot", "einsum", "cat", "stack", "lerp", "addcmul", "addcdiv", "nan_to_num",
    "masked_fill", "new_zeros", "new_ones", "new_full", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "cross_entropy", "nll_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits", "normalize",
    "zeros", "ones", "full", "hardtanh", "leaky_relu", "elu", "mish", "erf", "atan2", "hypot", "outer",
    "max", "min",  # without a dim (see _pure): values, not (values, indices)
})

_TEST_WORD = {ast.If: "if", ast.While: "while", ast.Assert: "assert", ast.IfExp: "a conditional expression"}


def _leaves(e: ast.AST) -> list:
    """The parts of a tested expression whose truth value Python takes here. The operands of `and` /
    `or` other than the last, and the operand of `not`, are taken where their BoolOp / UnaryOp is
    visited, so that each is reported once."""
    if isinstance(e, ast.BoolOp):
        return _leaves(e.values[-1])
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
        return []
    if isinstance(e, ast.NamedExpr):
        return _leaves(e.value)
    return [e]


_ID_WORD = re.compile(r"(?:^|_)(?:id|ids|idx|index|token|label|value|val|class|num)$")


def _numeric_member(ctx, e: ast.AST) -> bool:
    """What a tensor can contain: a number (`0 in labels`), a tensor, or a host value named like one
    (`pad_token_id in input_ids`); not a string or a dict key (`"loss" in outputs`, `k in batch`)."""
    if is_number_literal(ctx, e) or ctx.kind(e) in (TENSOR, CPU):
        return True
    if isinstance(e, ast.Name) and isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        a = ctx.function.args
        params = a.posonlyargs + a.args
        defaults = param_defaults(a)
        p = next((p for p in params + a.kwonlyargs if p.arg == e.id), None)
        if p is not None and (isinstance(p.annotation, ast.Name) and p.annotation.id in ("int", "float")
                              or p.annotation is None and e.id in defaults and is_number_literal(ctx, defaults[e.id])):
            return True  # `blank: int = 0`
    name = e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else ""
    return bool(_ID_WORD.search(name.lower()))


def _is_tensor_truth(ctx, e: ast.AST) -> bool:
    if isinstance(e, ast.Compare):
        if any(isinstance(c, ast.Constant) and c.value is None for c in (e.left, *e.comparators)):
            return False
        if len(e.ops) == 1 and isinstance(e.ops[0], (ast.Eq, ast.NotEq)) and (
                _shape_like(ctx, e.left) or _shape_like(ctx, e.comparators[0])):
            return False  # a shape check (`x.shape != target_shape`): the other side is a shape too
        if len(e.ops) == 1 and isinstance(e.ops[0], (ast.In, ast.NotIn)):
            # `v in t` is `(t == v).any()` read on the host; `key in batch` (a dict) is not
            return _numeric_member(ctx, e.left) and surely_tensor(ctx, e.comparators[0])
        if len(e.ops) == 1 and isinstance(e.ops[0], (ast.Eq, ast.NotEq)):
            # `list(x.size()) == [b, n]`: lists compare element by element, each `==` taken as a bool
            sides = (e.left, e.comparators[0])
            if any(isinstance(x, (ast.List, ast.Tuple)) for x in sides):  # (a tensor == a list: False, no read)
                return not any(ctx.kind(x) in (TENSOR, CPU) for x in sides) and any(
                    isinstance(x, (ast.List, ast.Tuple)) and any(
                        not isinstance(y, ast.Starred) and surely_tensor(ctx, y) for y in x.elts) for x in sides)
    # not `if use_cache:` (a flag, whatever the engine guessed for a forward's parameter), nor a name
    # holding `k if exact else torch.ceil(h)`
    return surely_tensor(ctx, e)


class TensorCondition(Rule):
    code = "SYN104"
    name = "tensor-condition"
    summary = ("A tensor used as a condition: `if`, `while`, `assert`, `and` / `or` / `not`, a conditional "
               "expression or a comprehension's `if` (`if x.sum() > 0:`, `while err > tol:`).")
    why = ("Python needs a real `True` / `False`, so the tensor's value is copied to the host (`bool(t)` calls "
           "`.item()`): the CPU waits for every kernel queued before it, and the GPU idles until the CPU queues "
           "more. Shapes, `is None`, `len(x)` and `numel()` are host values and are not flagged, nor is `key in batch`: "
           "membership is flagged for a number or a tensor looked up in a tensor (`0 in labels`).")
    rewrite = ("Decide on the device: `y = torch.where(cond, a, y)` instead of `if cond: y = a`; "
               "`torch._assert_async(cond)` instead of `assert cond`; check a convergence condition every N "
               "iterations instead of every one. A branch that only raises or prints is a check: "
               "`torch._assert_async`, or check every N steps; one that skips the rest of the step (`return`) "
               "needs one fused read, or a masked update as GradScaler's `found_inf`.")
    fix_safety = "unsafe"
    fix_assumption = ("`if cond: y = expr` (no else) becomes `y = torch.where(cond, expr, y)`: `expr` is now computed "
                      "even when `cond` is false, which assumes it has no side effects and cannot fail (only pure "
                      "torch operations are accepted); `cond` has one element; `expr` and `y` are tensors (or "
                      "numbers) of the same dtype whose shapes broadcast to `y`'s; the branch not taken is finite "
                      "where gradients flow (`torch.where` passes zero gradient to it, but 0 * inf is nan); when "
                      "`expr` does not use `y`, `y` now gets a zero gradient where before it got none.")
    triggers = TORCH_CODE
    ops = ("aten::is_nonzero",)
    rewrite_hint = "branch on the GPU with torch.where, or check with torch._assert_async(cond)"
    footprint = Footprint(ops=2, backward_nodes=1)  # the comparison and torch.where; where's backward
    bad = (
        Bad("""
import torch
def solve(step, x: torch.Tensor, iters: int):
    best = {"resids": None, "x": None}  # slots, filled with tensors below
    for _ in range(iters):
        resids = (step(x) - x).norm(dim=-1)
        if best["resids"] is None:
            best["resids"] = resids
            best["x"] = x.clone()
    if best["resids"].max() > 1.0:
        print("not converged")
    return best["x"]
""", line=10),
        Bad("""
import numpy as np
import torch
def initial_step(func, t0, y0, rtol, atol, norm):
    scale = atol + torch.abs(y0) * rtol
    d0 = norm(y0 / scale)  # a function handed in, applied to a tensor: probably a tensor (low confidence)
    if d0 < 1e-5:  # (numpy is imported, but this function does not use it)
        return torch.full_like(t0, 1e-6)
    return 0.01 * d0
def grid(n):
    return np.linspace(0, 1, n)
""", line=7),
        Bad("""
from . import backend as T
def fit(tensor, rank, n_iter_max=100, tol=1e-8):
    errors = []
    norm_tensor = T.norm(tensor, 2)  # a namespace of the backend the user picks (torch, numpy, jax):
    weights = T.ones(rank)  # it is called with numpy's functions, `T.ones(rank)`, `T.sqrt(v)`
    for it in range(n_iter_max):
        err = T.sqrt(T.abs(norm_tensor ** 2 - T.norm(weights, 2) ** 2)) / norm_tensor
        errors.append(err)
        if err < tol:  # torch's CUDA tensor for a PyTorch user (low confidence: the backend is not said)
            break
    return weights, errors
""", line=10),
        Bad("""
import torch
class Standardize(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("trained", torch.tensor(False))  # moves with the module: on the GPU
    def forward(self, y):
        if self.training:
            self.trained = torch.tensor(True)  # a host tensor, until the module moves again
        return y
    def untransform(self, y):
        if not self.trained:
            raise RuntimeError("call forward first")
        return y
""", line=12),
        Bad("""
import torch
def forward(self, x: torch.Tensor, valid=None):
    if valid is None:
        sentinel = (x == -1).all(dim=-1)
        if sentinel.any():  # valid is None here: torch.where(c, ~sentinel, valid) would raise, no fix
            valid = ~sentinel
    return x, valid
""", line=6, suggests="torch.where"),
        Bad("""
import torch
class Solver:
    def __init__(self, y0: torch.Tensor):
        self.t = torch.zeros((), device=y0.device)
        self.errors = []
    def done(self):
        if self.t < 0:  # (a read of its own)
            return True
        return self.t >= 1.0  # True on one path, a tensor on the other
    def run(self, dt):
        while not self.done():
            self.errors.append(self.t * dt)
            self.t = self.t + dt
        return self.errors[-1] > 0.1  # (no condition here)
    def converged(self):
        return bool(self.errors) and self.errors[-1] < 1e-6
    def report(self):
        if self.errors[-1] > 1.0:  # the list holds tensors: its last item is one
            print("large")
""", line=8, count=3),
        Bad("""
import torch
def attention(scores: torch.Tensor, mask: torch.Tensor):
    torch._assert(mask.any(), "an empty mask")  # `assert mask.any()` inside torch
    return scores.masked_fill(~mask, -1e9)
""", line=4, suggests="torch._assert_async("),
        Bad("""
import torch
def spline(inputs, left=0.0, right=1.0):
    if torch.min(inputs) < left or torch.max(inputs) > right:
        raise ValueError("input outside the domain")
    return inputs * 2
""", line=4, count=2, suggests="an error check, not a branch to compute: `torch._assert_async("),
        Bad("""
import torch
def mel(y: torch.Tensor):
    if torch.min(y) < -1.0:
        print("min value is ", torch.min(y))
    return y.abs()
""", line=4, suggests="the branch only reports (a diagnostic): drop it, or check it every N steps"),
        Bad("""
import torch
def optimize(self, params, opt):
    if any(not torch.isfinite(p.grad).all() for p in params):
        self.loss_scale /= 2
        return
    opt.step()
""", line=4, suggests="`torch.where` cannot express that; make it one read"),
        Bad("""
import torch
def compute_loss(pred, target):
    loss = (pred - target).abs().mean()
    if loss.isnan():
        loss = torch.zeros_like(loss)
    return loss
""", line=5, fixed="""
import torch
def compute_loss(pred, target):
    loss = (pred - target).abs().mean()
    loss = torch.where(loss.isnan(), torch.zeros_like(loss), loss)
    return loss
""", unsafe=True),
        Bad("""
import torch
def forward(self, x, scale):
    y = x * 2
    if x.sum() > 0:
        y = y * scale
    return y
""", line=5, fixed="""
import torch
def forward(self, x, scale):
    y = x * 2
    y = torch.where(x.sum() > 0, y * scale, y)
    return y
""", unsafe=True),
        Bad("""
import torch
def forward(self, x):
    while x.abs().max() > 1:
        x = x / 2
    assert (x >= -1).all(), "out of range"
    return x
""", line=4, count=2),
        Bad("""
import torch
def forward(self, x, mask):
    y = x if mask.any() else torch.zeros_like(x)
    ok = mask is not None and not mask.all()
    return [t for t in y.unbind(0) if t.sum() > 0], ok
""", line=4, count=3),
        Bad("""
import torch
def loss_fn(logits, labels: torch.Tensor, blank: int = 0):
    if 0 in labels or blank in labels:
        return logits.sum() * 0
    return logits.mean()
""", line=4, count=2),
        Bad("""
import torch
def forward(self, x, y):
    y = x.abs()
    if y.max() > 1 and (x < 0).any():  # two tensors, one sync each
        print("big")
    return x
""", line=5, count=2),
        Bad("""
import torch
def all_true(mask: torch.BoolTensor) -> torch.BoolTensor:
    return mask.sum() == mask.numel()
class Search:
    @staticmethod
    def _unfinished(scores: torch.Tensor, done: torch.Tensor):
        return torch.any(scores > 0) & ~torch.all(done)
    def run(self, scores, done, mask):
        finished = not self._unfinished(scores, done)  # what the helpers return: tensors
        if finished or all_true(mask):
            return None
        return scores
""", line=10, count=2),
        Bad("""
import torch
def giou(boxes1, boxes2):
    if not (boxes1[:, 2:] >= boxes1[:, :2]).all():  # the body passes boxes1 to torch: a tensor
        raise ValueError("bad boxes")
    return torch.min(boxes1[:, None, :2], boxes2[:, :2])
""", line=4),
        Bad("""
import torch
class Attention:
    def _scores(self, q, k, n_global):
        s = torch.bmm(q, k)
        assert list(s.size()) == [q.size(0), n_global]  # lists compare element by element
        return s.view(q.size(0), n_global)
    def forward(self, q: torch.Tensor, k: torch.Tensor, is_global: torch.Tensor):
        return self._scores(q, k, n_global=is_global.sum(1).max())  # every caller passes a tensor
""", line=6),
        Bad("""
def segment(labels, probs, k):
    m = labels == k
    area = m.sum()
    exists = area > 0 and (probs[k] > 0.5).sum() > 0  # `and` gives its last operand: a tensor
    if exists:
        return m
    return None
def run(probs):
    labels = probs.softmax(0).argmax(0)
    return segment(labels, probs, 1)
""", line=5, count=2),
        Bad("""
class Search:
    def fill_value(self, config: "GenerationConfig"):
        pad = config.pad_token_tensor  # an attribute named for the tensor it holds
        return pad or -1
""", line=5),
        Bad("""
import torch
class EarlyStopping:
    def __init__(self, patience=7):
        self.patience, self.counter, self.best = patience, 0, None
    def __call__(self, val_loss):
        if self.best is None or val_loss < self.best:  # a tensor: what the loop hands it
            self.best, self.counter = val_loss, 0
        else:
            self.counter += 1
        return self.counter >= self.patience
def fit(model, loader, criterion, epochs):
    stopper = EarlyStopping()
    for epoch in range(epochs):
        val_loss = torch.stack([criterion(model(x), y) for x, y in loader]).mean()
        if stopper(val_loss):
            break
""", line=7),
        Bad("""
import torch
class BrownianTree:
    @staticmethod
    def sort(a, b):
        return (a, b, 1) if a < b else (b, a, -1)  # tensors: what the sampler hands its tree
    def __call__(self, t0, t1):
        t0, t1, sign = self.sort(t0, t1)
        return torch.randn(()) * (t1 - t0).sqrt() * sign
class NoiseSampler:
    def __init__(self, sigmas):
        self.tree = BrownianTree()  # calling the attribute runs the tree's `__call__`
        self.sigmas = sigmas
    def __call__(self, i):
        return self.tree(self.sigmas[i].log(), self.sigmas[i + 1].log())
def sample(x, sigmas: torch.Tensor):
    noise = NoiseSampler(sigmas)
    for i in range(len(sigmas) - 1):
        x = x + noise(i)
    return x
""", line=6),
        Bad("""
import torch
class Solution:
    def __init__(self, m, device="cpu"):
        self.remaining = torch.ones(m, dtype=torch.bool, device=device)
    def keep(self, mask):
        self.remaining = self.remaining & mask
def solve(q, step, iters):
    sol = Solution(q.shape[0], device=q.device)
    for _ in range(iters):
        if not sol.remaining.any():  # what the class makes it: a tensor, on the solver's device
            break
        q, done = step(q)
        sol.keep(~done)
    return q
""", line=11),
        Bad("""
import torch
class Evaluator:
    def __init__(self, model):
        self.model = model
    def accuracy(self, loader):
        correct = 0
        for x, y in loader:
            correct += (self.model(x).argmax(-1) == y).sum()
        return correct / len(loader.dataset)
def select(models, loader, best: Evaluator):
    for model in models:
        ev = Evaluator(model)
        if ev.accuracy(loader) > 0.9:  # a method of the module's class, on its instance
            return model
    score = best.accuracy(loader)  # a parameter annotated with the class
    return None if score < 0.5 else best
""", line=14, count=2),
        Bad("""
import torch
class Evaluator:
    def accuracy(self, model, loader):
        correct = 0
        for x, y in loader:
            correct += (model(x).argmax(-1) == y).sum()
        return correct / len(loader.dataset)
class Trainer:
    def __init__(self, model):
        self.model = model
        self.evaluator = Evaluator()
        self.best = 0.0
    def validate(self, loader):
        acc = self.evaluator.accuracy(self.model, loader)  # the method of the instance the class holds
        if acc > self.best:
            self.best = acc
""", line=16),
        Bad("""
import torch
def train(model, loader, opt, loss_fn, max_norm=1.0):
    for x, y in loader:
        loss_fn(model(x), y).backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)  # the total norm: a tensor
        if grad_norm > 10 * max_norm:
            opt.zero_grad()
            continue
        opt.step()
""", line=7),
        Bad("""
import torch
from scipy_bridge import solve
def distances(x):
    \"\"\"Pairwise distances.

    Returns:
        Tensor: the distances, one per pair
    \"\"\"
    return solve(x)
def fit(x):
    if (distances(x) == 0).any():  # what the body does not show, the docstring declares
        x = x + 1e-3
    return x
""", line=12),
        Bad("""
import torch
from torch import nn
class EmpiricalNormalization(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.register_buffer("_std", torch.ones(shape))
class RewardNormalization(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.emp_norm = EmpiricalNormalization(shape)
    def forward(self, rew: torch.Tensor) -> torch.Tensor:
        if self.emp_norm._std > 0:  # a buffer of the submodule: a tensor on the model's device
            return rew / self.emp_norm._std
        return rew
""", line=13),
        Bad("""
import numpy as np
import torch
def fit(w: torch.Tensor, epochs: int, h_tol: float):
    h = np.inf  # a Python float, as float("inf") is
    for epoch in range(epochs):
        if epoch % 2:
            h = torch.trace(w * w)
        if h <= h_tol:  # a tensor on one path: the comparison syncs there
            break
""", line=9),
        Bad("""
import torch
class KMeans(torch.nn.Module):
    def summarize(self, X):
        if self.frozen:
            return 0  # an early exit's number; a tensor on the main path
        return torch.cdist(X, self.centroids).min(dim=1).values.sum()
    def fit(self, X, tol):
        d_current = None
        for i in range(100):
            d_previous, d_current = d_current, self.summarize(X)
            if i > 0 and d_previous - d_current < tol:
                break
""", line=12),
        Bad("""
import torch
def lm_step(f, h, u, g, fun, p):
    rho_denom = torch.matmul(h, u * h - g)
    rho_nom = torch.matmul(f, f) - torch.matmul(fun(p + h), fun(p + h))
    rho = rho_nom / rho_denom if rho_denom > 0 else torch.inf if rho_nom > 0 else -torch.inf
    if rho > 0:  # a tensor on the main path; the written-out infinities are the fallback
        p = p + h
    return p
""", line=6, count=3),
        Bad("""
import torch
from torch import nn
class Aperture(nn.Module):
    def __init__(self, x_max=None, device=None):
        super().__init__()
        self.register_buffer_or_parameter("x_max", x_max if x_max is not None else torch.tensor(1.0, device=device))
    def register_buffer_or_parameter(self, name, value):
        self.register_buffer(name, value)
    def track(self, x):
        assert (self.x_max >= 0).all()  # the class's own wrapper of register_buffer: a tensor attribute
        return x.clamp(max=self.x_max)
""", line=11),
    )
    good = (
        Good("""
import torch
def forward(self, input_ids: torch.Tensor, past_key_values=None):
    past_key_values_length = 0 if past_key_values is None else past_key_values.get_seq_length()
    if past_key_values_length == 0:  # an int fallback beside a cache's length: a count, not a tensor's fallback
        return input_ids
    return input_ids[:, past_key_values_length:]
"""),
        Good("""
from typing import Optional, Tuple, Union
from torch import Tensor
def forward(self, input, state_init: Optional[Union[Tensor, Tuple[Tensor, Tensor]]] = None):
    h_0s, c_0s = state_init or (None, None)  # a tuple on the calls that unpack it: no guess that it is a tensor
    return h_0s
"""),
        Good("""
import math
import torch
def kaiser_sinc_filter1d(cutoff, half_width, kernel_size):
    half_size = kernel_size // 2
    attenuation = 2.285 * (half_size - 1) * math.pi * 4 * half_width + 7.95
    if attenuation > 50.0:  # Python numbers: a window builder takes its size as one, not a tensor
        beta = 0.1102 * (attenuation - 8.7)
    else:
        beta = 0.0
    window = torch.kaiser_window(kernel_size, beta=beta, periodic=False)
    return 2 * cutoff * window
"""),
        Good("""
import torch
from . import constants
def convert(extra_config, base_prediction: torch.Tensor):
    extra_config[constants.BASE_PREDICTION] = base_prediction.float()
    if extra_config[constants.POST_TRANSFORM] == constants.SIGMOID:  # another key than the tensor's: a string
        return torch.sigmoid
    return None
"""),
        Good("""
import torch
def default(val, d):
    return val if val is not None else d
class ResidualVQ(torch.nn.Module):
    def forward(self, x, beam_size=None):
        beam_size = default(beam_size, self.beam_size)  # an option handed on, not a tensor to seed the helper with
        if beam_size:
            return self.search(x, beam_size)
        return x
"""),
        Good("""
import torch
def clip(grads: list[torch.Tensor], max_norm: torch.Tensor | float):
    if isinstance(max_norm, torch.Tensor) or max_norm != 1.0:  # compared only when it is a Python number
        torch._foreach_mul_(grads, max_norm)
    if not isinstance(max_norm, torch.Tensor) and max_norm > 10:
        print("large")
    if not torch.is_tensor(max_norm) and max_norm == 2:  # the same with torch.is_tensor
        print("two")
"""),
        Good("""
import torch
def expects_grad(t: torch.Tensor) -> bool:
    return t.requires_grad and (t.is_leaf or t.retains_grad)  # tensor flags, host values
def accumulate(t, g):
    if expects_grad(t):
        t.grad = g
"""),
        Good("""
import numpy as np
import torch
def initial_step(func, t0, y0, rtol, atol, norm):
    scale = atol + torch.abs(y0) * rtol
    d0 = norm(y0 / scale)  # with numpy used here, `norm` may well give an array or a float: no guess
    if d0 < 1e-5:
        return np.float64(1e-6)
    return 0.01 * d0
"""),
        Good("""
import torch
def forward(self, x, mask=None):
    if mask is None:
        mask = torch.ones_like(x)
    if len(x) and x.shape[0] > 1 and x.numel() >= 2 and x.dim() == 2:
        x = x * mask
    return x
"""),
        Good("""
import torch
class Sampler(torch.nn.Module):
    def forward(self, posterior):
        target_shape = self.collapsed_shape(posterior)
        if self.base is None or self.base.shape != target_shape:  # shapes compared: host values
            self.base = torch.randn(target_shape[1:].numel(), device=self.device)
        return self.base

    def log_prob(self, value):
        mean, covar = self.loc, self.covariance
        diff = value - mean
        if diff.shape[:-1] != covar.batch_shape or diff.size() == torch.Size([1]):
            diff = diff.expand(covar.shape[:-1])
        return diff
"""),
        Good("""
import torch
def forward(self, x, use_cache=None, output_attentions=None):
    if use_cache or output_attentions:  # flags with a default, not tensors
        return x
    if self.training and x.requires_grad and x.is_cuda:
        return x * 2
    return x
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    c = x.cpu()
    if c.sum() > 0:  # a host tensor: nothing to wait for
        return 1
    return [v for v in c if v > 0]
"""),
        Good("""
import torch
def f(x):
    if torch.is_tensor(x) and torch.is_floating_point(x) and not torch.jit.is_scripting():
        return x
    return None
"""),
        Good("""
import torch
def compute_loss(outputs, batch, weights):
    if "loss" not in outputs:  # dict membership, not a tensor's
        raise ValueError("no loss")
    kept = {k: v for k, v in outputs.items() if "aux" not in k}
    for key, w in weights.items():
        if key in batch:
            kept[key] = kept[key] * w
    return kept
"""),
        Good("""
import enum
import torch
class Fmt(enum.Enum):
    XYXY = 1
def convert(boxes: torch.Tensor):
    if boxes.format == Fmt.XYXY or boxes.dtype == torch.float16:  # no tensor equals an enum member
        return boxes
    return boxes.flip(-1)
"""),
        Good("""
def prepare(config: "Config", transform):
    if config.return_tensor or transform.to_tensor:  # flags and converters, not tensors
        return 1
    return 0
"""),
    )

    def visit_If(self, node, ctx):
        self._tested(ctx, node.test, "if", node)

    def visit_While(self, node, ctx):
        self._tested(ctx, node.test, "while", node)

    def visit_Assert(self, node, ctx):
        self._tested(ctx, node.test, "assert", node)

    def visit_IfExp(self, node, ctx):
        self._tested(ctx, node.test, "a conditional expression", node)

    def visit_Expr(self, node, ctx):
        # `torch._assert(cond, msg)` runs `assert cond, msg` (torch/__init__.py): the same host read (a statement of
        # its own: it returns None)
        v = node.value
        if v.__class__ is ast.Call and v.args and v.func.__class__ is ast.Attribute and v.func.attr == "_assert" \
                and ctx.call_name(v) == "torch._assert":
            self._tested(ctx, v.args[0], "`torch._assert`", ast.Assert(test=v.args[0]))

    def visit_BoolOp(self, node, ctx):
        word = "and" if isinstance(node.op, ast.And) else "or"
        for v in node.values[:-1]:
            self._tested(ctx, v, f"`{word}`", node)

    def visit_UnaryOp(self, node, ctx):
        if isinstance(node.op, ast.Not):
            self._tested(ctx, node.operand, "`not`", node)

    def _comprehension(self, node, ctx):
        if not any(g.ifs for g in node.generators):
            return
        inf = ctx.infer
        saved = inf.env
        inf.env = Env(saved)  # the walk binds the targets after this visit: bind them here for the ifs
        try:
            for g in node.generators:
                inf.bind_loop_target(g.target, g.iter)
                for cond in g.ifs:
                    self._tested(ctx, cond, "a comprehension's `if`", node)
        finally:
            inf.env = saved

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    def _tested(self, ctx, expr, where, owner):
        for leaf in _leaves(expr):
            if not _is_tensor_truth(ctx, leaf) or ruled_out_tensor(ctx, leaf):
                continue
            fix = _where_fix(ctx, owner, leaf) if isinstance(owner, ast.If) else None
            branch = _branch_advice(ctx, leaf)
            if fix is not None:
                suggestion = fix.message
            elif branch:
                suggestion = branch
            elif isinstance(owner, ast.Assert):
                suggestion = f"`torch._assert_async({short(ctx, leaf, 50)})` checks it on the device"
            elif isinstance(owner, ast.While):
                suggestion = "test the condition every N iterations, or run a fixed number of iterations"
            else:
                suggestion = ("decide on the device: `torch.where(cond, a, b)` computes both branches and picks "
                              "per element")
            self.report(ctx, leaf, f"`{short(ctx, leaf)}` syncs: {where} needs its truth value on the host, which "
                        "waits for all queued GPU work", suggestion, fix=fix)


# -- branches that only report, or leave: an error check or a skipped step, not a value to compute --

_REPORTERS = ("print", "warn", "warning", "log", "info", "debug", "error", "exception", "critical", "write")


def _reports(ctx, s: ast.stmt) -> bool:
    """`print(...)`, `warnings.warn(...)`, `logger.info(...)`, `pass`: only says something."""
    if isinstance(s, ast.Pass):
        return True
    if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call):
        f = s.value.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        return name.startswith(_REPORTERS)
    return False


def _checks(ctx, s: ast.stmt) -> bool:
    return isinstance(s, (ast.Raise, ast.Assert))


def _branch_advice(ctx, leaf: ast.AST) -> str:
    """The advice for an `if` on a tensor whose body is no computation: it only reports (a diagnostic
    print), raises (an error check) or leaves (an early return: the rest of the step is skipped).
    `torch.where` expresses none of these. "" for other branches."""
    n = leaf
    while n is not None and not isinstance(n, ast.stmt):
        n = ctx.parent(n)
    if not isinstance(n, ast.If) or n.orelse or not any(x is leaf for x in ast.walk(n.test)):
        return ""
    body = n.body
    several = isinstance(n.test, ast.BoolOp) or any(isinstance(x, (ast.GeneratorExp, ast.ListComp))
                                                    for x in ast.walk(n.test))
    fuse = (" (compute the whole test as one tensor first: `|` / `&` for `or` / `and`, `torch.stack([...]).any()` "
            "for a test per tensor)" if several else "")
    if all(_reports(ctx, s) or _checks(ctx, s) for s in body) and any(_checks(ctx, s) for s in body):
        return ("an error check, not a branch to compute: `torch._assert_async(torch.logical_not(cond))` checks it "
                f"on the device without a host wait{fuse}; or check it every N steps, or drop it")
    if all(_reports(ctx, s) for s in body):
        return ("the branch only reports (a diagnostic): drop it, or check it every N steps (`if step % N == 0:`); "
                "`torch._assert_async(torch.logical_not(cond))` if it must never happen")
    last = body[-1]
    # a bare `return` / `continue` skips the rest (`if time_next == 0: return mean` is a value: torch.where)
    if (isinstance(last, (ast.Continue, ast.Break)) or isinstance(last, ast.Return) and last.value is None) and not any(
            isinstance(x, (ast.If, ast.For, ast.While)) for s in body for x in ast.walk(s)):
        return ("the branch leaves (the rest, e.g. the optimizer step, is skipped): `torch.where` cannot express "
                "that; make it one read, fusing the checks into one tensor (`torch.stack([...]).all()`, "
                "`torch.isfinite(torch.cat([g.flatten() for g in grads])).all()`), or skip on the device as "
                "GradScaler does with `found_inf` (a masked update, no read)")
    return ""


# -- fix: `if cond: y = expr` -> `y = torch.where(cond, expr, y)` --------------------------------

def _pure(ctx, e: ast.AST) -> bool:
    if isinstance(e, ast.Constant):
        return isinstance(e.value, (int, float, bool)) or e.value is None
    if isinstance(e, ast.Name):
        return True
    if isinstance(e, ast.Attribute):
        return _pure(ctx, e.value)
    if isinstance(e, ast.BinOp):
        return _pure(ctx, e.left) and _pure(ctx, e.right)
    if isinstance(e, ast.UnaryOp):
        return not isinstance(e.op, ast.Not) and _pure(ctx, e.operand)
    if isinstance(e, ast.Compare):
        return len(e.ops) == 1 and not isinstance(e.ops[0], (ast.Is, ast.IsNot, ast.In, ast.NotIn)) \
            and _pure(ctx, e.left) and _pure(ctx, e.comparators[0])
    if isinstance(e, (ast.Tuple, ast.List)):
        return all(_pure(ctx, x) for x in e.elts)
    if isinstance(e, ast.Subscript):
        return _pure(ctx, e.value) and _host_index(ctx, e.slice)
    if isinstance(e, ast.Call):
        if not all(_pure(ctx, a) for a in e.args) or not all(k.arg and _pure(ctx, k.value) for k in e.keywords):
            return False
        if any(k.arg in ("out", "device", "generator") for k in e.keywords):
            return False
        q = ctx.call_name(e)
        name = (q or "").rpartition(".")[2] if q else getattr(e.func, "attr", "")
        dim_arg = q is not None and len(e.args) > 1 and ctx.kind(e.args[1]) not in (TENSOR, CPU)
        if name in ("max", "min") and (e.keywords or (q is None and e.args) or dim_arg):
            return False  # `x.max(dim)` gives (values, indices)
        if q is not None:
            head, _, last = q.rpartition(".")
            return head in ("torch", "torch.nn.functional", "torch.special", "torch.linalg") and last in PURE
        f = e.func
        return isinstance(f, ast.Attribute) and f.attr in PURE and ctx.kind(f.value) in (TENSOR, CPU) \
            and _pure(ctx, f.value)
    return False


def _host_index(ctx, s: ast.AST) -> bool:
    """An index made of literals, slices of literals and host values (no tensor index, which could sync)."""
    if isinstance(s, ast.Tuple):
        return all(_host_index(ctx, x) for x in s.elts)
    if isinstance(s, ast.Slice):
        return all(x is None or _host_index(ctx, x) for x in (s.lower, s.upper, s.step))
    if isinstance(s, ast.Constant):
        return isinstance(s.value, int) or s.value is None or s.value is Ellipsis
    if isinstance(s, ast.UnaryOp) and isinstance(s.op, ast.USub):
        return _host_index(ctx, s.operand)
    from syncscan.lint.tensors import HOST

    return ctx.kind(s) == HOST


def _bound_before(ctx, name: str, node: ast.If) -> bool:
    for s in flow(ctx).stores.get(name, ()):
        if pos(s) >= pos(node):
            break
        if isinstance(s, ast.arg):
            return True
        st = ctx.parent(s)
        while st is not None and not isinstance(st, ast.stmt):
            st = ctx.parent(st)
        if st is not None and dominates(ctx, st, node):
            return True
    return False


_SHAPE_CALLS = frozenset({"torch.broadcast_shapes", "torch.Size"})


def _shape_like(ctx, e: ast.AST, depth: int = 0) -> bool:
    """A size, not a tensor: `x.shape`, `d.batch_shape`, `x.size()`, `x.shape[:-1]`, a name holding one."""
    from ._dataflow import assigned_value

    if isinstance(e, ast.Subscript):
        return _shape_like(ctx, e.value, depth)
    if isinstance(e, ast.Attribute):
        return e.attr.endswith("shape")
    if isinstance(e, ast.Call):
        return ctx.call_name(e) in _SHAPE_CALLS or (isinstance(e.func, ast.Attribute) and e.func.attr == "size"
                                                   and ctx.call_name(e) is None)
    if isinstance(e, ast.Name) and depth < 3:
        got = assigned_value(ctx, e)
        return got is not None and _shape_like(ctx, got[0], depth + 1)
    return False


def _compares_shapes(ctx, cond: ast.AST) -> bool:
    return isinstance(cond, ast.Compare) and any(_shape_like(ctx, x) for x in (cond.left, *cond.comparators))


def _none_test(test: ast.AST, name: str, op) -> bool:
    """`test` is (or, through `and`, implies) `name is None` (op ast.Is) / `name is not None` (ast.IsNot)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_none_test(v, name, op) for v in test.values)
    return isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], op) \
        and isinstance(test.left, ast.Name) and test.left.id == name \
        and isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None


def _maybe_none(ctx, name: str, node: ast.If) -> bool:
    """`name` may be None where `node` runs: a binding of None reaches it, or it sits where a test
    said `name is None` (`if patch_valid is None and ...: if cond: patch_valid = ...`)."""
    from ._dataflow import flow_of

    for b in flow_of(ctx).before(node, name) or ():
        if isinstance(b.value, ast.Constant) and b.value.value is None:
            return True
    child, n = node, ctx.parent(node)
    while n is not None and not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        if isinstance(n, ast.If):
            if any(child is s for s in n.body) and _none_test(n.test, name, ast.Is):
                return True
            if any(child is s for s in n.orelse) and _none_test(n.test, name, ast.IsNot):
                return True
        child, n = n, ctx.parent(n)
    # a default of None on the parameter that nothing before rebinds
    func = ctx.function
    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        d = param_defaults(func.args).get(name)
        bs = flow_of(ctx).before(node, name) or ()
        if isinstance(d, ast.Constant) and d.value is None and any(b.how == "param" for b in bs):
            return True
    return False


def _where_fix(ctx, node: ast.If, cond: ast.AST) -> Fix | None:
    if node.test is not cond or node.orelse or len(node.body) != 1:
        return None
    a = node.body[0]
    if not (isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)):
        return None
    y = a.targets[0].id
    if not ctx.infer.is_bool(cond, by_name=False) or isinstance(cond, ast.Compare) and len(cond.ops) != 1:
        return None
    if not (_pure(ctx, cond) and _pure(ctx, a.value)):
        return None
    if not surely_tensor(ctx, cond) or _compares_shapes(ctx, cond):
        return None  # a tensor only by a guess (`if shape != dist.batch_shape: dist = dist.expand(shape)`)
    if ctx.kind(a.value) not in (TENSOR, CPU) and ctx.kind(ast.Name(y)) not in (TENSOR, CPU):
        return None
    if not _bound_before(ctx, y, node) or not alone_on_lines(ctx, node) or "#" in ctx.text(node):
        return None
    if _maybe_none(ctx, y, node):
        return None  # `torch.where(c, a, y)` needs y to be a tensor on every path here
    line = ctx.lines[node.lineno - 1]
    if not line[len(indent_of(ctx, node)):].startswith("if"):  # an `elif`
        return None
    new = f"{y} = torch.where({ctx.text(cond)}, {ctx.text(a.value)}, {y})"
    if "\n" in new:
        return None
    return Fix("unsafe", (ctx.edit(node, new),), message=f"`{new}`: choose on the device",
               assumption=TensorCondition.fix_assumption, imports=("torch",))
