import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, TENSOR, TENSORS

from ._dataflow import rebinding_hint
from ._indexing import bool_elsewhere, device_mask, made_bool, zero_dim_index
from ._util import (is_literal_true, is_mask, is_number_literal, kwarg, method, not_a_device_tensor,
                    shape_changing_mask, short)

REDUCTIONS = frozenset({"sum", "mean", "max", "min", "amax", "amin", "prod", "norm", "logsumexp", "std", "var"})


def _masks(ctx, sl) -> list:
    return [m for m in (sl.elts if isinstance(sl, ast.Tuple) else [sl])
            if not isinstance(m, (ast.Slice, ast.Constant))
            and (is_mask(ctx, m) or ctx.kind(m) == TENSOR and (bool_elsewhere(ctx, m) or made_bool(ctx, m)))]


def _mixed_mask(ctx, sl) -> list:
    """The masks of `x[valid, idx]`: a boolean mask and an index tensor in one index (whatever the value: eager's
    `masked_fill` shortcut takes a lone mask only); [] for any other index."""
    if not isinstance(sl, ast.Tuple):
        return []
    masks = _masks(ctx, sl)
    return masks if masks and any(e not in masks and not isinstance(e, (ast.Slice, ast.Constant))
                                  and ctx.kind(e) == TENSOR and not ctx.infer.is_bool(e) for e in sl.elts) else []


class BooleanMaskAssign(Rule):
    code = "SYN303"
    name = "boolean-mask-assign"
    summary = ("Writing through a boolean mask with a tensor value: `x[m] = t`, `x[m] += v`, "
               "`x.index_put_((m,), v)`; writing a host tensor through a GPU mask, and writing through a 0-dim "
               "tensor index (`x[t.sum() == 0] = 0`), whatever the value.")
    why = ("Writing through a boolean mask with a tensor value goes through `index_put_`, which turns the "
           "mask into indices with `nonzero`: their number is copied to the host first. (`x[m] = 0.` with "
           "a Python number does not sync: it becomes `masked_fill`. `x[m] += v` reads `x[m]` first, which "
           "syncs too.) A host tensor written through a GPU mask copies the mask to the host first. A 0-dim "
           "index (a boolean or an integer tensor) is read on the host (`.item()`) whatever the value.")
    rewrite = ("Keep the full shape: `x.copy_(torch.where(m, t, x))` (or `x = torch.where(m, t, x)` when "
               "nothing else holds `x`); a Python number as the value: `x.masked_fill_(m, v)`; "
               "`x += torch.where(m, v, 0)` for `x[m] += v`. Keep a written tensor and its masks on one device.")
    fix_safety = "unsafe"
    fix_assumption = ("the mask and the value have `x`'s shape (the mask is certain when it is elementwise in `x`, "
                      "like `x < 0`); `x[m] = y[m]` and `x[m] = <0-dim reduction>` become "
                      "`x.copy_(torch.where(m, y, x))`.")
    triggers = TORCH_CODE
    ops = ("aten::index_put", "aten::index_put_", "aten::_index_put_impl_")
    rewrite_hint = "torch.where(m, v, x) instead of x[m] = v"
    footprint = Footprint(ops=1)  # where(m, v, x)
    bad = (
        Bad("""
import torch
def factor_kkt(R, d):
    n_batch, n = d.size()
    eye = torch.eye(n).repeat(n_batch, 1, 1).type_as(R).bool()  # on R's device: a mask there
    T = R.clone()
    T[eye] += (1.0 / d).view(-1)
    return T
""", line=7),
        Bad("""
import torch
def forward(self, x, y, mask):
    x[mask] = y[mask]
    return x
""", line=4, fixed="""
import torch
def forward(self, x, y, mask):
    x.copy_(torch.where(mask, y, x))
    return x
""", unsafe=True),
        Bad("""
import torch
def forward(self, x):
    x[x < 0] = x.mean()
    return x
""", line=4, fixed="""
import torch
def forward(self, x):
    x.copy_(torch.where(x < 0, x.mean(), x))
    return x
""", unsafe=True),
        Bad("""
import torch
def forward(self, scores, valid):
    scores.index_put_((valid,), torch.zeros_like(scores)[valid])
    return scores
""", line=4),
        Bad("""
import torch
def forward(self, x, mask):
    x[mask] += 1.0
    return x
""", line=4),
        Bad("""
import torch
def forward(self, masks, scores):
    seg = torch.zeros(masks.shape[-2:]) - 1  # on the host
    for j in range(masks.shape[0]):
        seg[masks[j] > 0.5] = j
    return seg
""", line=6),
        Bad("""
import torch
class SpecAugment(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.embed = torch.nn.Parameter(torch.zeros(d))
    def forward(self, h, mask_time_indices=None):
        if mask_time_indices is not None:
            h[mask_time_indices] = self.embed.to(h.dtype)  # a mask, as the other branch shows
        else:
            mask_time_indices = torch.rand(h.shape[:2], device=h.device) < 0.1
            h[mask_time_indices] = self.embed.to(h.dtype)
        return h
""", line=9, count=2),
        Bad("""
import torch
def normalized(gain: torch.Tensor, ideal: torch.Tensor):
    score = gain.sum()
    total = ideal.sum()
    empty = total == 0  # a 0-dim mask
    score[empty] = 0
    score[~empty] /= total[~empty]
    return score
""", line=7, count=2),
        Bad("""
import torch
def _compute_mask(shape):
    mask = torch.full(shape, False)
    mask[:, :2] = True
    return mask
def forward(self, x):
    mask_indices = _compute_mask(x.shape[:2]).to(x.device)
    x[mask_indices] = x.mean()  # a boolean mask, as the helper returns
    return x
""", line=9, fixed="""
import torch
def _compute_mask(shape):
    mask = torch.full(shape, False)
    mask[:, :2] = True
    return mask
def forward(self, x):
    mask_indices = _compute_mask(x.shape[:2]).to(x.device)
    x.copy_(torch.where(mask_indices, x.mean(), x))  # a boolean mask, as the helper returns
    return x
""", unsafe=True),
        Bad("""
import torch
from . import internal
def slerp(q0, q1):
    q1, shape = internal.flatten(q1)  # of unknown kind: a device mask indexes only a tensor
    cos_omega = torch.sum(q0 * q1, dim=-1)
    q1[cos_omega < 0, :] *= -1
    return q1
"""),
        Bad("""
import torch
def assign(priority: torch.Tensor, cl_try: torch.Tensor, max_val: torch.Tensor):
    for i in range(8):
        idx = max_val.topk(dim=-1, k=3).indices
        valid = cl_try.gather(index=idx, dim=-1) >= 0
        priority[valid, idx] = 0  # a mask beside an index tensor: index_put_, even for a number
""", line=7),
        Bad("""
import functools
import torch
def _attack(model, inputs, labels):
    found = model(inputs).argmax(1) != labels
    return found, inputs.clone()
def attack(model, inputs: torch.Tensor, labels: torch.Tensor, restarts: int = 2):
    adv = inputs.clone()
    found = torch.zeros(len(inputs), dtype=torch.bool, device=inputs.device)
    run = functools.partial(_attack, model=model)  # calls of `run` are calls of `_attack`
    for _ in range(restarts):
        found_run, adv_run = run(inputs=inputs[~found], labels=labels[~found])
        adv[~found] = adv_run
    return adv
""", line=13),
    )
    good = (
        Good("""
import torch
def forward(self, x, mask):
    x[mask] = 0.0  # a mask of unknown rank: masked_fill (a 0-dim one is not told apart here)
    return x
"""),
        Good("""
import torch
def forward(self, h, keep_indices, v):
    h[keep_indices] = v  # indices, not a mask (the name says so, and nothing makes it a mask)
    return h
"""),
        Good("""
import torch
def forward(self, x, mask):
    x[mask] = 0.0  # a Python number: masked_fill, no sync
    x[x > 1] = -float("inf")
    return x
"""),
        Good("""
import torch
def forward(self, x, idx: torch.Tensor, v):
    x[idx] = v  # an index tensor, not a mask (SYN207's business when v is a number)
    return x
"""),
        Good("""
import numpy as np
def f(a, b):
    m = a > 0
    a[m] = b[m]  # numpy
    return a
"""),
        Good("""
import torch
x = torch.zeros(4)
m = x > 0
x[m] = torch.ones(4)[m]  # CPU tensors
"""),
    )

    def visit_Assign(self, node, ctx):
        for t in node.targets:
            if isinstance(t, ast.Subscript) and self._zero_dim(ctx, node, t, node.value):
                return
            if isinstance(t, ast.Subscript) and ctx.kind(t.value) == CPU:
                gpu = [m for m in _masks(ctx, t.slice) if ctx.kind(m) == TENSOR]
                if gpu:  # a host tensor written through a mask that may live on the GPU: whatever the value
                    self.report(ctx, node, f"`{short(ctx, node)}` syncs: writing into a host tensor through a GPU mask "
                                "copies the mask to the host first, which waits for all queued GPU work",
                                f"keep both on one device: make `{short(ctx, t.value, 30)}` on the mask's device, or "
                                "copy the masks to the host once, before the loop")
                    return
            # a device tensor as the value: x is one too unless known otherwise
            if isinstance(t, ast.Subscript) and ctx.kind(node.value) in (TENSOR, TENSORS) \
                    and ctx.kind(t.value) in (TENSOR, None):
                masks = _masks(ctx, t.slice)
                if masks:
                    fix, new = _where_fix(ctx, node, t, masks[0]) or (None, None)
                    self.report(ctx, node, f"`{short(ctx, node)}` syncs: assigning a tensor through a boolean mask "
                                "turns the mask into indices, whose number the host must read",
                                f"`{new}`" if fix else f"`{short(ctx, t.value, 30)} = torch.where({short(ctx, masks[0], 30)}, "
                                "<value of the full shape>, ...)`, or a Python number as the value", fix=fix)
                    return
            mixed = _mixed_mask(ctx, t.slice) if isinstance(t, ast.Subscript) and ctx.kind(t.value) == TENSOR else []
            if mixed:
                m = mixed[0]
                self.report(ctx, node, f"`{short(ctx, node)}` syncs: a boolean mask beside other index tensors makes "
                            "even a Python number's write an `index_put_` (not a `masked_fill`), which turns the mask "
                            "into indices whose number the host must read",
                            f"index with integers only: `{short(ctx, m, 30)}` as indices kept on the device "
                            f"(`{short(ctx, m, 30)}.nonzero()` once, outside the loop), or fold the mask into the "
                            "value with `torch.where`")
                return

    def visit_AugAssign(self, node, ctx):
        t = node.target
        if isinstance(t, ast.Subscript) and self._zero_dim(ctx, node, t, None):
            return
        # of unknown kind, the value is a tensor when a device mask made as one indexes it (`q1[cos < 0, :] *= -1`:
        # numpy arrays and lists cannot take a CUDA mask)
        if isinstance(t, ast.Subscript) and (ctx.kind(t.value) == TENSOR or ctx.kind(t.value) is None and any(
                device_mask(ctx, m) for m in (t.slice.elts if isinstance(t.slice, ast.Tuple) else [t.slice]))) \
                and _masks(ctx, t.slice):
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: it reads and writes through a boolean mask, each "
                        "turning the mask into indices whose number the host must read",
                        f"`{short(ctx, t.value, 30)} += torch.where({short(ctx, _masks(ctx, t.slice)[0], 30)}, "
                        f"{short(ctx, node.value, 30)}, 0)`")

    def _zero_dim(self, ctx, node, t, value) -> bool:
        """`x[m] = v` with `m` a 0-dim device tensor: torch reads `m` on the host (`.item()`) to pick
        the element, whatever `v` is. (An integer index written with a Python number is SYN207's.)"""
        if ctx.kind(t.value) not in (TENSOR, CPU) and not ctx.infer.is_any_tensor(t.value):
            return False
        i = zero_dim_index(ctx, t.slice)
        if i is None:
            return False
        boolean = is_mask(ctx, i) or made_bool(ctx, i) or ctx.infer.is_bool(i, by_name=False)
        if not boolean and value is not None and (is_number_literal(ctx, value) or ctx.kind(value) == "host"):
            return False
        x, m = short(ctx, t.value, 30), short(ctx, i, 30)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `{m}` is a 0-dim tensor, and writing through one reads it "
                    "on the host (`.item()`) to pick the element",
                    f"`{x}.masked_fill_({m}, v)` / `{x}.copy_(torch.where({m}, v, {x}))` keep a 0-dim boolean on the "
                    f"device (it broadcasts); an integer: `{x}[{m}.view(1)] = v`" if boolean or value is None else
                    f"write through a 1-element index on the device: `{x}[{m}.view(1)] = v`")
        return True

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q in ("torch.index_put", "torch.index_put_") and len(node.args) >= 2:
            x, idx = node.args[0], node.args[1]
        else:
            x = method(node, "index_put_", "index_put")
            if x is None or q is not None or not node.args:
                return
            idx = node.args[0]
        if not isinstance(idx, (ast.Tuple, ast.List)) or not_a_device_tensor(ctx, x):
            return
        if any(is_mask(ctx, e) for e in idx.elts):
            acc = " (accumulating)" if is_literal_true(kwarg(node, "accumulate")) else ""
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: index_put{acc} with a boolean mask turns it into "
                        "indices, whose number the host must read",
                        "`torch.where(mask, values_of_full_shape, x)` (accumulate: `x + torch.where(mask, v, 0)`)")


def _where_fix(ctx, assign, target, m) -> tuple[Fix, str] | None:
    """`x[m] = y[m]` / `x[m] = <0-dim reduction>` -> `x.copy_(torch.where(m, y, x))`."""
    if len(assign.targets) != 1 or target.slice is not m or shape_changing_mask(ctx, m):
        return None
    if rebinding_hint(ctx, m):
        return None  # a mask on one path, maybe indices on another: torch.where would be wrong there
    x = target.value
    root = x
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    v = assign.value
    if isinstance(v, ast.Subscript) and ctx.text(v.slice) == ctx.text(m) and ctx.kind(v.value) == TENSOR:
        value = ctx.text(v.value)
    elif isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in REDUCTIONS \
            and not v.args and not v.keywords and ctx.kind(v.func.value) == TENSOR:
        value = ctx.text(v)  # no dim: a 0-dim tensor
    else:
        return None
    new = f"{ctx.text(x)}.copy_(torch.where({ctx.text(m)}, {value}, {ctx.text(x)}))"
    return Fix("unsafe", (ctx.edit(assign, new),), message="write through `torch.where` over the full tensor, in "
               "place", assumption=BooleanMaskAssign.fix_assumption, imports=("torch",)), new
