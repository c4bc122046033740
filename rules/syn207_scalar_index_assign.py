import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.shapes import python_int
from syncscan.lint.tensors import HOST, TENSOR

from ._indexing import made_bool
from ._util import (
    guessed_param,
    is_index_valued,
    is_mask,
    is_number_literal,
    last_assign,
    made_on_device,
    short,
    surely_tensor,
)


def _tensor_indices(ctx, sl) -> list:
    out = []
    for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]):
        if isinstance(e, (ast.Slice, ast.Starred)) or not ctx.is_tensor(e) or guessed_param(ctx, e):
            continue
        if (is_mask(ctx, e) or ctx.infer.is_bool(e) or made_bool(ctx, e)) and not is_index_valued(ctx, e):
            return []  # a boolean mask with a number: a sync-free masked_fill (not `pos_idx = positive[perm]`)
        out.append(e)
    return out


class ScalarIndexAssign(Rule):
    code = "SYN207"
    name = "scalar-index-assign"
    summary = ("`x[idx] = v`: a Python number written through an integer index tensor that may live on the GPU, "
               "or into one element (`x[i, 0] = v`) of a tensor made on the GPU.")
    why = ("With an index tensor, `x[idx] = 0.` is `index_put_` with a tensor value, so PyTorch first wraps the "
           "Python number in a host tensor and copies it to the device: a blocking copy that waits for all queued "
           "GPU work. Writing one element (`x[i, j] = n`, all indices integers) copies the number the same way "
           "(measured on an H100; with a slice, `x[i, :n] = 1`, it does not). (With a boolean mask instead of "
           "indices the write is a sync-free `masked_fill`.)")
    rewrite = ("Give it a value already on the device: `x[idx] = torch.full((), v, dtype=x.dtype, "
               "device=x.device)` (a fill kernel, no copy), or `x.index_fill_(0, idx, v)` for a 1-D int64 "
               "index along dim 0; for one element, `x[i, j].fill_(v)`; for many, build them on the host and "
               "copy once.")
    fix_safety = "safe"
    fix_assumption = ("the index is an integer tensor (not a boolean mask, for which the original is already "
                      "sync-free) and `v` is a Python number; certain when the index visibly holds indices "
                      "(`argmax`, `topk(...).indices`, `nonzero`, `arange`, ...) and `v` is spelled out.")
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "assign a CUDA 0-dim tensor, or use index_fill_"
    footprint = Footprint(ops=1)  # index_fill_ / a 0-dim device value
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
        Bad("""
import torch
def forward(self, matched):
    positive = torch.where(matched >= 1)[0]  # indices, whatever the name says
    pos_idx = positive[torch.randperm(positive.numel(), device=positive.device)[:4]]
    mask = torch.zeros_like(matched, dtype=torch.uint8)
    mask[pos_idx] = 1
    return mask
""", line=7, fixed="""
import torch
def forward(self, matched):
    positive = torch.where(matched >= 1)[0]  # indices, whatever the name says
    pos_idx = positive[torch.randperm(positive.numel(), device=positive.device)[:4]]
    mask = torch.zeros_like(matched, dtype=torch.uint8)
    mask[pos_idx] = torch.full((), 1, dtype=mask.dtype, device=mask.device)
    return mask
"""),
        Bad("""
import torch
def forward(self, logits):
    idx = logits.argsort(dim=-1)
    idx[0] = -1  # one element of a tensor computed on the GPU
    return idx
""", line=5, fixed="""
import torch
def forward(self, logits):
    idx = logits.argsort(dim=-1)
    idx[0].fill_(-1)  # one element of a tensor computed on the GPU
    return idx
"""),
        Bad("""
import torch
def forward(self, feats, device):
    shapes = torch.empty((len(feats), 2), dtype=torch.long, device=device)
    for level, f in enumerate(feats):
        shapes[level, 0] = f.shape[-2]
    return shapes
""", line=6, fixed="""
import torch
def forward(self, feats, device):
    shapes = torch.empty((len(feats), 2), dtype=torch.long, device=device)
    for level, f in enumerate(feats):
        shapes[level, 0].fill_(f.shape[-2])
    return shapes
"""),
        Bad("""
import torch
def hardest(mat, anchor_idx, other_idx):
    mask = torch.ones_like(mat) * float("inf")
    mask[anchor_idx, other_idx] = 1  # ints or index tensors: the number is copied either way
    return (mat * mask).min(dim=1)
""", line=5),
        Bad("""
import torch
class Anchored:
    def __init__(self, anchors, values):
        \"\"\"Fix some rows.

        Arguments
        ---------
        anchors: torch.Tensor, shape (n_anchors)
            the index of each anchored row
        values: torch.Tensor, shape (n_anchors, dim)
            the value each anchored row is fixed to
        \"\"\"
        self.anchors = anchors
        self.values = values
    def project_onto_tangent_space(self, Z: torch.Tensor):
        Z[self.anchors, :] = 0.0  # the docstring says `anchors` is a tensor
        return Z
""", line=17),
        Bad("""
import torch
class Net(torch.nn.Module):
    def forward(self, x, c):
        return self.rnn(x + c)
class Sampler:
    def __init__(self, dims, device):
        self.model = Net().to(device)
    def _sample_state(self, x):
        for key, props in self.data_map.items():
            mu_idx, sigma_idx = props["indices"]
            x[0, 0, sigma_idx] = 0.0  # the callers hand a tensor: one element, a copy of the number
        return x
    def sample(self, context, steps):
        x = torch.zeros(1, 1, self.dims, device=context.device)
        for _ in range(steps):
            x = self._sample_state(self.model(x, context)[-1:])
        return x
""", line=12),
    )
    good = (
        Good("""
import torch
def _compute_mask(shape):
    mask = torch.full(shape, False)
    mask[:, :2] = True
    return mask
def forward(self, x):
    mask_indices = _compute_mask(x.shape[:2]).to(x.device)
    x[mask_indices] = 0  # a boolean mask (what the helper returns): masked_fill, no sync
    return x
"""),
        Good("""
import torch
def forward(self, x, n: int, rows: list):
    m = torch.zeros(4, 8, dtype=torch.bool, device=x.device)
    m[0, :n] = True  # a slice: filled on the device, no copy
    m[rows] = True  # a list index (SYN206's business when it syncs), not one element
    h = torch.zeros(4, 2)
    h[0, 1] = n  # a host tensor
    return m, h
"""),
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
    idx = y.argmax(dim=1)
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
        if isinstance(t.slice, ast.Tuple) and any(is_mask(ctx, e) for e in t.slice.elts):
            return  # a mask beside index tensors: SYN303's (the mask's count is the sync)
        idx = _tensor_indices(ctx, t.slice)
        if not idx:
            on_device = made_on_device(ctx, t.value) or _computed_on_device(ctx, t.value) \
                or _handed_tensor(ctx, t.value)
            if _one_element(ctx, t.slice) and on_device:
                self._element(ctx, node, t, v)
            elif on_device and _unknown_indices(ctx, t.slice):
                # `mask[rows, cols] = 1`: ints (one element) or index tensors, a copy of the number either way
                self.report(ctx, node, f"`{short(ctx, node)}` syncs: writing a Python number through integer "
                            "indices copies the number to the device first, a blocking copy that waits for all "
                            "queued GPU work", "write a value already on the device: `torch.full((), v, "
                            "dtype=x.dtype, device=x.device)`", fix=_full_fix(ctx, node, t, v, False),
                            confidence="low")
            return
        fix = _full_fix(ctx, node, t, v, literal and all(is_index_valued(ctx, i) for i in idx))
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: writing a Python number through an index tensor copies "
                    "the number to the device first, a blocking copy that waits for all queued GPU work",
                    fix.message if fix else "write a value already on the device: `torch.full((), v, dtype=x.dtype, "
                    "device=x.device)`", fix=fix)


    def _element(self, ctx, node, t, v):
        new = f"{ctx.text(t)}.fill_({ctx.text(v)})"
        fix = None if "\n" in new else Fix(
            "safe", (ctx.edit(node, new),), message=f"`{new}`: the element is filled on the device, no copy")
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: writing one element of a GPU tensor with a Python number "
                    "copies the number from the host with a blocking copy, which waits for all queued GPU work",
                    fix.message if fix else "`x[i, j].fill_(v)` fills on the device; or build the values on the host "
                    "and copy them once", fix=fix)


def _unknown_indices(ctx, sl) -> bool:
    """Two or more plain indices of unknown kind (`x[rows, cols]`), or integer literals beside them
    (`x[0, 0, k]`): integers or index tensors as often as not, and rarely all boolean masks (one mask,
    `x[m] = 0`, is a common sync-free masked_fill; beside other indices a mask is indexed, not filled)."""
    if not isinstance(sl, ast.Tuple) or len(sl.elts) < 2:
        return False
    return all(_int_literal(e) or isinstance(e, (ast.Name, ast.Attribute, ast.Subscript))
               and ctx.kind(e) in (None, TENSOR)
               and not (is_mask(ctx, e) or ctx.infer.is_bool(e) or made_bool(ctx, e)) for e in sl.elts) \
        and any(not _int_literal(e) and ctx.kind(e) is None for e in sl.elts)


def _int_literal(e) -> bool:
    return isinstance(e, ast.Constant) and type(e.value) is int


def _handed_tensor(ctx, e) -> bool:
    """A parameter known to be a tensor (from its annotation or its callers, not guessed) and never rebound,
    which the function writes into: a tensor of the step, where its device is unknown."""
    return isinstance(e, ast.Name) and ctx.infer.env.is_sure(e.id) and ctx.kind(e) == TENSOR \
        and last_assign(ctx, e.id, e) is None


def _one_element(ctx, sl) -> bool:
    """An index of Python integers only (`x[i, 0]`): the destination is one element. (With a slice,
    `x[i, :n] = 1`, the number is not copied: no wait.)"""
    return all(_int_valued(ctx, e, 0) for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]))


def _int_valued(ctx, e, depth: int) -> bool:
    """Visibly a Python int (not a list, which would make `x[l].fill_(v)` fill a copy): a literal, `len()`,
    `int()`, arithmetic of those, a `range()` / `enumerate()` counter, a name last assigned one."""
    return python_int(ctx, e, depth, lambda n, d: _int_name(ctx, n, d))


def _int_name(ctx, e: ast.Name, depth: int) -> bool:
    a = last_assign(ctx, e.id, e)
    if a is not None:
        return _int_valued(ctx, a.value, depth + 1)
    n = ctx.parent(e)  # (the loop around): `for i in range(n)`, `for i, x in enumerate(xs)`
    while n is not None and not isinstance(n, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        n = ctx.parent(n)
    while isinstance(n, ast.For):
        it, t = n.iter, n.target
        fname = it.func.id if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) else ""
        if isinstance(t, ast.Name) and t.id == e.id:
            return fname == "range"
        if fname == "enumerate" and isinstance(t, ast.Tuple) and t.elts and isinstance(t.elts[0], ast.Name) \
                and t.elts[0].id == e.id:
            return True
        n = ctx.parent(n)
        while n is not None and not isinstance(n, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            n = ctx.parent(n)
    return False


def _computed_on_device(ctx, e) -> bool:
    """A name last assigned a computation on device tensors (`idx = scores.argsort()`), not a parameter or
    something read off one."""
    if not isinstance(e, ast.Name) or guessed_param(ctx, e):
        return False
    a = last_assign(ctx, e.id, e)
    return a is not None and isinstance(a.value, (ast.Call, ast.BinOp, ast.Subscript)) and surely_tensor(ctx, e)


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
