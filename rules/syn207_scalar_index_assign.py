import ast

from syncscan.lint.rule import Bad, Fix, Good, Rule
from syncscan.lint.tensors import HOST, TENSOR

from ._util import guessed_param, is_index_valued, is_mask, is_number_literal, kwarg, last_assign, short


def _tensor_indices(ctx, sl) -> list:
    out = []
    for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]):
        if isinstance(e, (ast.Slice, ast.Starred)) or not ctx.is_tensor(e) or guessed_param(ctx, e):
            continue
        if is_mask(ctx, e) or ctx.infer.is_bool(e) or _made_bool(ctx, e, 0):
            return []  # a boolean mask with a number: a sync-free masked_fill
        out.append(e)
    return out


_KEEPS_DTYPE = frozenset({"expand", "expand_as", "view", "reshape", "unsqueeze", "squeeze", "clone", "detach",
                          "contiguous", "cuda", "flatten", "repeat", "permute", "transpose", "t"})


def _made_bool(ctx, e, depth: int) -> bool:
    """Visibly boolean from where it was made: `torch.tensor(m, dtype=torch.bool)`, `.bool()`, a
    comparison, through views and copies (`m[:, None].expand(...)`) and names."""
    if depth > 5:
        return False
    if isinstance(e, ast.Compare) or (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Invert)):
        return True
    if isinstance(e, ast.Subscript):
        return _made_bool(ctx, e.value, depth + 1)
    if isinstance(e, ast.Name):
        a = last_assign(ctx, e.id, e)
        return a is not None and _made_bool(ctx, a.value, depth + 1)
    if isinstance(e, ast.Call):
        dt = kwarg(e, "dtype")
        if dt is not None:
            return ctx.qualname(dt) == "torch.bool"
        f = e.func
        if isinstance(f, ast.Attribute) and ctx.call_name(e) is None:
            if f.attr == "bool" or (f.attr in ("to", "type") and e.args and ctx.qualname(e.args[0]) == "torch.bool"):
                return True
            if f.attr in _KEEPS_DTYPE or f.attr == "to":
                return _made_bool(ctx, f.value, depth + 1)
    return False


class ScalarIndexAssign(Rule):
    code = "SYN207"
    name = "scalar-index-assign"
    summary = "`x[idx] = v`: a Python number written through an integer index tensor that may live on the GPU."
    why = ("With an index tensor, `x[idx] = 0.` is `index_put_` with a tensor value, so PyTorch first wraps the "
           "Python number in a host tensor and copies it to the device: a blocking copy that waits for all queued "
           "GPU work. (With a boolean mask instead of indices the same line is a sync-free `masked_fill`.)")
    rewrite = ("Give it a value already on the device: `x[idx] = torch.full((), v, dtype=x.dtype, "
               "device=x.device)` (a fill kernel, no copy), or `x.index_fill_(0, idx, v)` for a 1-D int64 "
               "index along dim 0.")
    fix_safety = "safe"
    fix_assumption = ("the index is an integer tensor (not a boolean mask, for which the original is already "
                      "sync-free) and `v` is a Python number; certain when the index visibly holds indices "
                      "(`argmax`, `topk(...).indices`, `nonzero`, `arange`, ...) and `v` is spelled out.")
    triggers = ("[",)
    bad = (
        Bad("""
import torch
def forward(self, x, scores):
    idx = scores.argmax(dim=1)
    x[idx] = 0.0
    return x
""", line=5, fixed="""
import torch
def forward(self, x, scores):
    idx = scores.argmax(dim=1)
    x[idx] = torch.full((), 0.0, dtype=x.dtype, device=x.device)
    return x
"""),
        Bad("""
import torch
class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(10, 3))
    def forward(self, logits):
        top = logits.topk(5).indices
        self.seen[top, 0] = -1
        return logits
""", line=9, fixed="""
import torch
class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("seen", torch.zeros(10, 3))
    def forward(self, logits):
        top = logits.topk(5).indices
        self.seen[top, 0] = torch.full((), -1, dtype=self.seen.dtype, device=self.seen.device)
        return logits
"""),
        Bad("""
import torch
class Loss(torch.nn.Module):
    def __init__(self, ignore_index: int = -100):
        super().__init__()
        self.ignore_index = ignore_index
    def forward(self, target, scores):
        drop = scores.argsort()[:2]
        target[drop] = self.ignore_index
        return target
""", line=9, fixed="""
import torch
class Loss(torch.nn.Module):
    def __init__(self, ignore_index: int = -100):
        super().__init__()
        self.ignore_index = ignore_index
    def forward(self, target, scores):
        drop = scores.argsort()[:2]
        target[drop] = torch.full((), self.ignore_index, dtype=target.dtype, device=target.device)
        return target
""", unsafe=True),
    )
    good = (
        Good("""
import torch
def forward(self, x, mask):
    x[mask] = 0.0  # a boolean mask: masked_fill, no sync
    x[x > 1] = 1.0
    return x
"""),
        Good("""
import torch
def forward(self, x, i):
    x[i] = 0.0  # `i`: a parameter, an int as often as not
    x[0, 2:] = 1.0
    return x
"""),
        Good("""
import torch
def forward(self, x, y):
    idx = y.argmax()
    x[idx] = y.max()  # a tensor value (already on the device): no copy
    x[idx] += 1.0
    return x
"""),
    )

    def visit_Assign(self, node, ctx):
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Subscript):
            return
        t = node.targets[0]
        v = node.value
        literal = is_number_literal(ctx, v)
        if not literal and ctx.kind(v) != HOST or isinstance(v, (ast.Constant, ast.JoinedStr)) and not literal:
            return
        if ctx.kind(t.value) != TENSOR:
            return
        idx = _tensor_indices(ctx, t.slice)
        if not idx:
            return
        fix = _full_fix(ctx, node, t, v, literal and all(is_index_valued(ctx, i) for i in idx))
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: writing a Python number through an index tensor copies "
                    "the number to the device first, a blocking copy that waits for all queued GPU work",
                    fix.message if fix else "write a value already on the device: `torch.full((), v, dtype=x.dtype, "
                    "device=x.device)`", fix=fix)


def _full_fix(ctx, node, t, v, safe: bool) -> Fix | None:
    base = t.value
    b = base
    while isinstance(b, ast.Attribute):
        b = b.value
    if not isinstance(b, ast.Name):
        return None  # `x` is evaluated twice more: only plain names and attributes
    x = ctx.text(base)
    new = f"torch.full((), {ctx.text(v)}, dtype={x}.dtype, device={x}.device)"
    if "\n" in new:
        return None
    return Fix("safe" if safe else "unsafe", (ctx.edit(v, new),),
               message=f"`{short(ctx, t)} = {new}`: the value is filled on the device (same value and dtype "
                       "conversion), no copy",
               assumption="" if safe else ScalarIndexAssign.fix_assumption, imports=("torch",))
