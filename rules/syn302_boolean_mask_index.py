import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, TENSOR

from ._dataflow import assigned_value, flow_of, known_uses, only_reader, rebinding_hint
from ._indexing import (device_mask, made_bool, scalar_read_index, squeezed_count_index, torch_only_module,
                        truth_tested_index, visibly_mask, zero_dim_index)
from ._util import (alone_on_lines, atom, changed_between, delete_statement, elementwise_of, in_context, is_mask,
                    python_sequence, shape_changing_mask, short)

from .syn306_masked_cross_entropy import is_inline_masked_loss_arg, loss_of_read


class BooleanMaskIndex(Rule):
    code = "SYN302"
    name = "boolean-mask-index"
    summary = ("Reading a tensor through a boolean mask: `x[mask]`; or through a 0-dim tensor index "
               "(`x[t.argmax()]`).")
    why = ("Indexing with a boolean mask is `nonzero` in disguise: the number of selected elements sets "
           "the output size, so it is copied to the host first and the host waits for the GPU. A 0-dim "
           "integer or boolean tensor as an index is read on the host (torch calls `.item()` on it) to pick "
           "the element.")
    rewrite = ("Keep the full shape and zero out the rest: `torch.where(mask, x, 0)`; for a masked sum "
               "`torch.where(m, x, 0).sum()`, a masked mean `torch.where(m, x, 0).sum() / m.sum()`; for a "
               "masked cross-entropy, its `ignore_index` (SYN306 reports those reads).")
    fix_safety = "unsafe"
    fix_assumption = ("the mask has the tensor's shape (certain when it is elementwise in it, like `x > 0`); equal up "
                      "to float rounding, since the sum runs over more elements in another order (exact for integers); "
                      "for `.mean()` -> `torch.where(m, x, 0).sum() / m.sum()`, a floating `x` (nan for an empty mask "
                      "in both). A loss computed element by element (`F.binary_cross_entropy_with_logits`, "
                      "`sigmoid_focal_loss`, `F.mse_loss`, ...) over two reads through the same mask is computed on the "
                      "full tensors with `reduction=\"none\"` and the masked-out elements dropped before the same sum or "
                      "mean: the masked-out inputs are finite (a NaN there gives the same loss, but a NaN gradient for "
                      "that input, as `ignore_index` does for cross-entropy).")
    triggers = TORCH_CODE
    ops = ("aten::index",)
    rewrite_hint = "torch.where(m, x, 0); masked mean as (x * m).sum() / m.sum()"
    footprint = Footprint(ops=1)  # where / multiply by the mask / an ignore_index fill
    bad = (
        Bad("""
import torch
class GradCAMpp:
    def weights(self, eps=1e-8):
        self.hook_g: list[torch.Tensor]  # what the hooks store: a list of tensors
        grad_2 = [g.pow(2) for g in self.hook_g]
        nan_mask = [g2 > 0 for g2 in grad_2]
        for d, mask in zip(grad_2, nan_mask):
            d[mask].div_(eps)
""", line=9),
        Bad("""
import torch
def build_targets(t: torch.Tensor, g: float):
    gxy = t[:, 2:4]
    j, k = ((gxy % 1 < g) & (gxy > 1)).T  # the rows of a mask are masks
    j = torch.stack((torch.ones_like(j), j, k))  # and a stack of masks is one
    return t.repeat((3, 1, 1))[j]
""", line=7),
        Bad("""
import torch
def best_candidate(candidates, scores: torch.Tensor):
    best = scores.argmax()  # a 0-dim device tensor: a list or an array reads it on the host too
    return candidates[best]
""", line=5),
        Bad("""
import torch
def loss_fn(pred, target):
    valid = target != -1
    return pred[valid].mean()
""", line=5, fixed="""
import torch
def loss_fn(pred, target):
    valid = target != -1
    return torch.where(valid, pred, 0).sum() / valid.sum()
""", unsafe=True),
        Bad("""
def forward(self, x, mask):
    return x[mask]
""", line=3),
        Bad("""
import torch
import torch.nn.functional as F
def loss_fn(pred, target):
    m = target >= 0
    return F.binary_cross_entropy_with_logits(pred[m], target[m])
""", line=6, count=2, fixed="""
import torch
import torch.nn.functional as F
def loss_fn(pred, target):
    m = target >= 0
    return torch.where(m, F.binary_cross_entropy_with_logits(pred, target, reduction="none"), 0).sum() / m.sum()
""", unsafe=True),
        Bad("""
import torch
def loss_fn(err, valid):
    picked = err[valid]
    return picked.mean()
""", line=4, fixed="""
import torch
def loss_fn(err, valid):
    return torch.where(valid, err, 0).sum() / valid.sum()
""", unsafe=True),
        Bad("""
import torch
def f(x: torch.Tensor):
    return 2 * x[x > 0].sum()
""", line=4, fixed="""
import torch
def f(x: torch.Tensor):
    return 2 * torch.where(x > 0, x, 0).sum()
""", unsafe=True),
        Bad("""
import torch
def compute_loss(loss, is_valid):
    return torch.sum(loss[is_valid]) / 8
""", line=4, fixed="""
import torch
def compute_loss(loss, is_valid):
    return torch.where(is_valid, loss, 0).sum() / 8
""", unsafe=True),
        Bad("""
import torch
from torchvision.ops import boxes as box_ops
def postprocess(scores, boxes, threshold: float):
    out = []
    for s, b in zip(scores, box_ops.clip_boxes_to_image(boxes, (800, 800))):
        out.append({"scores": s[s > threshold], "boxes": b[s > threshold]})
    return out
""", line=7, count=2),
        Bad("""
import torch
def best_candidate(candidates: torch.Tensor, values: torch.Tensor):
    best = torch.argmax(values.view(-1), dim=0)  # a 0-dim index
    return candidates[best]
""", line=5, suggests="`candidates[best.view(1)].squeeze(0)`"),
        Bad("""
import torch
def first_group(x: torch.Tensor, table: torch.Tensor):
    _, counts = torch.unique(x, return_counts=True)
    groups = counts.cumsum(dim=0) - 1
    return table[groups[0]], table[groups]  # an element of a 1-D tensor is 0-dim; `groups` is a gather
""", line=6),
        Bad("""
import torch
def schedule(alphas: torch.Tensor, steps: int):
    out = []
    for t in torch.arange(steps, device=alphas.device).flip(0):  # the elements of a 1-D tensor: 0-dim
        out.append(alphas[t])
    return out
""", line=6),
        Bad("""
import torch
class Sampler:
    def __init__(self, n: int, device):
        self.alphas = torch.linspace(0.9, 0.1, n, device=device)
        self.timesteps = torch.arange(n, device=device).flip(0)
    def _alpha(self, t: int):  # private: the module's calls are its callers, and they hand it 0-dim tensors
        return self.alphas[t]
    def sample(self, x):
        for t in self.timesteps:
            x = x * self._alpha(t)
        return x
""", line=8),
        Bad("""
import numpy as np
import torch
def surface_distances(seg: torch.Tensor, dis):
    return dis[seg.bool()]  # a device mask: `dis` is a tensor too (numpy cannot take one)
""", line=5),
        Bad("""
import torch
class Sanitize:
    def transform(self, inpt, params: dict):
        return inpt[params["valid"]]  # a mask stored with the transform's parameters
""", line=5),
        Bad("""
import torch
def keep_best(loss, best, x, x_best):
    ind = (loss.cuda() > best).nonzero().squeeze()  # 0-dim when exactly one improved
    x_best[ind] = x[ind].clone()
""", line=5),
        Bad("""
import torch
def refine(fs: torch.Tensor, label: torch.Tensor):
    _, pre = torch.max(fs, dim=0)
    if pre != label:  # the truth value of a comparison: one element, so `label` is probably 0-dim
        return pre
    return fs[label]
""", line=7),
        Bad("""
import math
import torch
def delay_agg(values, corr, factor: int):
    top_k = int(factor * math.log(values.shape[-1]))
    mean_value = corr.mean(dim=1)
    index = torch.topk(mean_value.mean(dim=0), top_k, dim=-1)[1]
    weights = torch.stack([mean_value[:, index[i]] for i in range(top_k)], dim=-1)
    for i in range(top_k):  # `int(index[i])`: one element, so `index[i]` is probably 0-dim above too
        values = values + torch.roll(values, -int(index[i]), -1) * weights[:, i, None]
    return values
""", line=8),
        Bad("""
import torch
def project(x: torch.Tensor, radius: torch.Tensor):
    if (outside := x.norm(dim=1) > radius).any():  # bound by the walrus: a mask past it
        x = x.clone()
        x[outside] = x[outside] / x[outside].norm(dim=1, keepdim=True)
    return x
""", line=6, count=2),
        Bad("""
import torch
def viterbi(scores: torch.Tensor, back: torch.Tensor, pad: int):
    n = scores.shape[0] + pad
    path = torch.zeros(n, dtype=torch.long, device=scores.device)  # one dim: path[t] is a 0-dim tensor
    path[-1] = scores[-1].argmax()
    for t in range(n - 1, 0, -1):
        path[t - 1] = back[path[t], t]
    return path
""", line=8),
        Bad("""
import torch
def intervals(scores: torch.Tensor, confs: torch.Tensor, out: torch.Tensor):
    lo = (confs * scores.shape[0]).long() - 1
    for j in range(len(confs)):
        if lo[j] < 0:  # compared in a truth test: one element
            out[j] = -1.0
        else:
            out[j] = scores[lo[j]]  # so it indexes as a 0-dim tensor, read on the host
    return out
""", line=9),
    )
    good = (
        Good("""
import torch
def keep_best(loss, best, x, x_best):
    ind = (loss.cuda() > best).nonzero().squeeze(1)  # 1-D whatever the count: a gather
    x_best[ind] = x[ind].clone()
"""),
        Good("""
import numpy as np
import torch
def keep(scores, boxes, t):
    return boxes[scores > t]  # numpy arrays as often as tensors here
"""),
        Good("""
import torch
def f(x: torch.Tensor, idx: torch.Tensor):
    return x[idx]  # an index tensor (gather): the output size is known
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    return x[:, 0], x[..., 1:]
"""),
        Good("""
def f(d):
    return d["mask"]
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    x[x > 0] = 0.0  # assignment of a Python scalar is masked_fill: no sync
    return x
"""),
        Good("""
import torch
def pick(x: torch.Tensor, scores: torch.Tensor):
    i = scores.argmax(dim=1)  # one index per row (the rank of `scores` is unknown): a gather
    j = scores.argmax(dim=0, keepdim=True)
    k = scores.flatten().argsort()[:5]
    return x[i], x[j], x[k]
"""),
        Good("""
import torchvision
def forward(self, boxes, scores):
    keep = torchvision.ops.nms(boxes, scores, 0.5)  # indices, whatever the name says
    return boxes[keep]
"""),
        Good("""
import torch.nn.functional as F
def loss_fn(pred, target):
    m = target >= 0
    return F.cross_entropy(pred[m], target[m])  # one finding for the call: SYN306
"""),
        Good("""
import torch
def refine(fs: torch.Tensor, labels: torch.Tensor, i: int):
    label = labels[i:i + 1]  # a 1-element 1-D index: a gather on the device
    _, pre = torch.max(fs, dim=0)
    if pre != label:
        return pre
    return fs[label]
"""),
        Good("""
def expand(batch, size):
    for key in batch:  # a dict's keys: compared with strings, they are strings
        if key == "position_ids" and batch[key].ndim == 3:
            batch[key] = batch[key].repeat_interleave(size, dim=1)
        elif batch[key] is not None:
            batch[key] = batch[key].repeat_interleave(size, dim=0)
    return batch
"""),
    )

    def visit_Subscript(self, node, ctx):
        if not isinstance(node.ctx, ast.Load):
            return
        if self._zero_dim(node, ctx):
            return
        # an array of unknown kind in a module that uses no other array library: a tensor, when the mask
        # is visibly one (`boxes[score > t]`, `inpt[params["valid"]]`)
        unknown = ctx.kind(node.value) is None and torch_only_module(ctx)
        sl = node.slice
        masks = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if not unknown and not ctx.infer.is_any_tensor(node.value):
            # the mask decides, whatever the container: a boolean device tensor indexes a tensor (numpy
            # and lists cannot take one), so the host waits for the selected count either way
            if ctx.kind(node.value) is not None or not any(device_mask(ctx, m) for m in masks):
                return
            masks = [m for m in masks if device_mask(ctx, m)]
        for m in masks:
            if isinstance(m, (ast.Slice, ast.Constant)):
                continue
            if unknown or not ctx.infer.is_any_tensor(m) and not isinstance(m, ast.Compare):
                if not visibly_mask(ctx, m):
                    continue
            elif not (is_mask(ctx, m) or made_bool(ctx, m)):  # (`torch.stack((m1, m2))` of masks: made one)
                continue
            if ctx.kind(node.value) == "cpu_tensor" and ctx.kind(m) == "cpu_tensor":
                return  # both on the host: nothing to wait for
            if is_inline_masked_loss_arg(ctx, node):
                return  # SYN306 reports the loss call
            fix, new = (None, "")
            if m is sl:
                fix, new = _consumer_fix(ctx, node, m)
            if fix is None and not new:
                new = _restructure_hint(ctx, node, m)
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: a boolean-mask read sizes its output by the "
                        "number of selected elements, which the host must read from the GPU",
                        f"`{new}`" if fix else new, fix=fix)
            return

    def _zero_dim(self, node, ctx) -> bool:
        """`x[i]` with `i` a 0-dim device tensor: torch reads `i` on the host to pick the element."""
        # of unknown kind, the value is read through the index all the same (a tensor, a list or an array
        # calls `__index__` on it; only a dict, hashing it, would not): probably a sync
        k = ctx.kind(node.value)
        tensor = k in (TENSOR, CPU) or ctx.infer.is_any_tensor(node.value)
        unknown = k is None and not tensor
        if not tensor and not unknown:
            return False
        i = zero_dim_index(ctx, node.slice)
        maybe = tested = None
        if i is None:
            i = maybe = squeezed_count_index(ctx, node.slice)
        if i is None and tensor:
            i = tested = truth_tested_index(ctx, node.slice)
        read = None
        if i is None and tensor:
            i = tested = read = scalar_read_index(ctx, node.slice)
        if i is None or unknown and (ctx.kind(i) != TENSOR or python_sequence(ctx, node.value)):
            return False  # (a Python list's index: SYN108)
        if maybe is not None:
            self.report(ctx, node, f"`{short(ctx, node)}` syncs when `{short(ctx, i, 30)}` found one element: "
                        "`squeeze()` then makes it 0-dim, and indexing with a 0-dim tensor reads it on the host",
                        "keep the index 1-D (`.squeeze(1)`, or `.flatten()`): a gather on the device whatever the "
                        "count; better, keep a mask and select with `torch.where`", confidence="low")
            return True
        if is_mask(ctx, i) or made_bool(ctx, i) or ctx.infer.is_bool(i, by_name=False):
            hint = ("a 0-dim boolean keeps or drops the whole value: decide on the device with "
                    f"`torch.where({short(ctx, i, 30)}, {short(ctx, node.value, 30)}, <other>)`")
        elif i is node.slice:
            hint = (f"index with a 1-element tensor and drop that dim on the device: "
                    f"`{short(ctx, node.value, 30)}[{atom(ctx, i)}.view(1)].squeeze(0)` (a gather, no wait)")
        else:
            hint = (f"index with `{atom(ctx, i)}.view(1)` (a 1-element tensor: a gather on the device) and squeeze "
                    "that dim")
        what = "is a 0-dim tensor" if tested is None else \
            "is probably a 0-dim tensor (the function reads it as one number too)" if read is not None else \
            "is probably a 0-dim tensor (the function takes the truth value of a comparison of it)"
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `{short(ctx, i, 30)}` {what}, and indexing "
                    "with one reads it on the host (`.item()`) to pick the element", hint,
                    confidence="low" if unknown or tested is not None else None)
        return True


# -- where the masked values go, and the rewrite that keeps their meaning there ---------------------

# losses computed element by element, then averaged or summed: on the full tensors with
# reduction="none", the masked-out elements dropped with torch.where before the same reduction
ELEMENTWISE_LOSSES = {
    "torch.nn.functional.binary_cross_entropy": "mean",
    "torch.nn.functional.binary_cross_entropy_with_logits": "mean",
    "torch.nn.functional.mse_loss": "mean",
    "torch.nn.functional.l1_loss": "mean",
    "torch.nn.functional.smooth_l1_loss": "mean",
    "torch.nn.functional.huber_loss": "mean",
    "torchvision.ops.sigmoid_focal_loss": "none",
    "torchvision.ops.focal_loss.sigmoid_focal_loss": "none",
}
_ELEMENTWISE_KWARGS = frozenset({"beta", "delta", "alpha", "gamma"})  # scalars applied to every element
# checks its inputs are probabilities: on the full tensor a masked-out NaN or padding value raises
_CHECKED_INPUTS = frozenset({"torch.nn.functional.binary_cross_entropy"})
_FOCAL = ("torchvision.ops.sigmoid_focal_loss", "torchvision.ops.focal_loss.sigmoid_focal_loss")


def _value_flow(ctx, sub) -> tuple[ast.AST, ast.stmt | None]:
    """Where the value of the read `sub` is used: (the expression that holds it there, the
    statement `name = sub` that carried it, when it went through a variable read only there)."""
    stmt = ctx.parent(sub)
    if isinstance(stmt, ast.Assign) and stmt.value is sub and len(stmt.targets) == 1 \
            and isinstance(stmt.targets[0], ast.Name):
        fl = flow_of(ctx)
        uses = known_uses(ctx, stmt.targets[0]) or []
        if len(uses) == 1 and fl.only_binding(uses[0]) is fl.binding_of(stmt.targets[0]):
            return uses[0], stmt
    return sub, None


_SAME_VALUES = frozenset({"float", "double", "half", "bfloat16", "contiguous"})


def _up_same_values(ctx, e):
    """`e.float()` / `e.contiguous()` ...: the outermost such call around `e` (what a consumer sees)."""
    while True:
        p = ctx.parent(e)
        if isinstance(p, ast.Attribute) and p.value is e and p.attr in _SAME_VALUES:
            c = ctx.parent(p)
            if isinstance(c, ast.Call) and c.func is p and not c.args and not c.keywords:
                e = c
                continue
        return e


def _down_same_values(e) -> tuple[ast.AST, str]:
    """(`x`, `.float()`) for `x.float()`: the expression under same-value calls, their suffix."""
    suffix = ""
    while isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr in _SAME_VALUES \
            and not e.args and not e.keywords:
        suffix = f".{e.func.attr}()" + suffix
        e = e.func.value
    return e, suffix


def _movable(ctx, read_stmt, sub, use) -> bool:
    """The read `name = x[m]` can be folded into its one use: alone on its lines, and nothing it
    reads changes before the use."""
    return read_stmt is None or (alone_on_lines(ctx, read_stmt)
                                 and not changed_between(ctx, [sub.value, sub.slice], read_stmt, use))


def _consumer_fix(ctx, sub, m) -> tuple[Fix | None, str]:
    if (got := loss_of_read(ctx, sub)) is not None:
        return None, (f"the loss at line {got.call.lineno} takes this read: SYN306's fix there computes it on the "
                      "full tensors with `ignore_index` and removes this read")
    use, read_stmt = _value_flow(ctx, sub)
    hint = rebinding_hint(ctx, m)
    if hint:
        return None, f"no automatic fix: {hint}; make the mask one boolean tensor on every path first"
    if not _movable(ctx, read_stmt, sub, use):
        return None, ""
    r = _reduction_fix(ctx, sub, m, use, read_stmt)
    if r is not None:
        return r
    parent = ctx.parent(_up_same_values(ctx, use))
    if isinstance(parent, ast.keyword):
        parent = ctx.parent(parent)
    if isinstance(parent, ast.Call) and ctx.call_name(parent) in ELEMENTWISE_LOSSES \
            and ctx.call_name(parent) not in _CHECKED_INPUTS:
        return _elementwise_loss_fix(ctx, parent)
    return None, ""


def _restructure_hint(ctx, sub, m) -> str:
    """What to change when no rewrite is certain, without a snippet that could be wrong there."""
    use, _ = _value_flow(ctx, sub)
    parent = ctx.parent(_up_same_values(ctx, use))
    if isinstance(parent, ast.keyword):
        parent = ctx.parent(parent)
    q = ctx.call_name(parent) if isinstance(parent, ast.Call) else None
    mask = short(ctx, m, 30)
    # `(conf > t).sum()`, not `conf > t.sum()`
    atomic = isinstance(m, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
    summed = f"{mask}.sum()" if atomic else f"({mask}).sum()"
    if q in ELEMENTWISE_LOSSES:
        return (f"compute the loss per element on the full tensors (`reduction=\"none\"`), then drop the masked-out "
                f"elements before reducing: `torch.where({mask}, per_element, 0).sum()`, divided by `{summed}` for "
                "a mean (weights and pos_weight must then have the full shape)")
    return ("restructure so that the selected values are only reduced: keep the full shape up to the reduction and "
            f"drop the masked-out elements there (a sum: `torch.where({mask}, values, 0).sum()`; a mean: also divide "
            f"by `{summed}`); a loss: its `ignore_index` or `reduction=\"none\"` and the same; a variable number "
            "of rows that later code needs cannot be made sync-free, only moved out of the step")


def _loss_input(ctx, e) -> tuple[ast.Subscript, ast.stmt | None, str] | None:
    """`x[m]` as a loss argument, written there or read from `name = x[m]` (read only there), with
    the same-value calls after it (`.float()`)."""
    e, suffix = _down_same_values(e)
    if isinstance(e, ast.Subscript) and isinstance(e.ctx, ast.Load) and not isinstance(e.slice, (ast.Tuple, ast.Slice)):
        return e, None, suffix
    if isinstance(e, ast.Name) and only_reader(ctx, e):
        got = assigned_value(ctx, e)
        if got is not None:
            v, more = _down_same_values(got[0])
            if isinstance(v, ast.Subscript) and not isinstance(v.slice, (ast.Tuple, ast.Slice)):
                return v, got[1], more + suffix
    return None


def _elementwise_loss_fix(ctx, call) -> tuple[Fix | None, str]:
    """`loss(a[m], b[m])` (mean or sum) -> `torch.where(m, loss(a, b, reduction="none"), 0).sum()`
    (`/ m.sum()` for the mean): the same elements, the same normalisation."""
    q = ctx.call_name(call)
    default = ELEMENTWISE_LOSSES[q]
    extra_pos = call.args[2:]
    if (extra_pos and q not in _FOCAL) or len(extra_pos) > 2 or any(isinstance(a, ast.Starred) for a in call.args):
        return None, ""
    inputs = list(call.args[:2])
    red = None
    for k in call.keywords:
        if k.arg in ("input", "inputs", "target", "targets") and len(inputs) < 2:
            inputs.append(k.value)
        elif k.arg == "reduction":
            red = k.value
        elif k.arg not in _ELEMENTWISE_KWARGS:
            return None, ""  # weight / pos_weight / **kw: they broadcast against the masked shape
    if len(inputs) != 2:
        return None, ""
    how = default if red is None else red.value if isinstance(red, ast.Constant) else None
    if how not in ("mean", "sum"):
        return None, ("no automatic fix: the loss is kept per element (`reduction=\"none\"`), so what follows "
                      "depends on the selected elements' number; multiply by the mask where it is reduced")
    got = [_loss_input(ctx, e) for e in inputs]
    if None in got:
        return None, ""
    (sa, ra, xa), (sb, rb, xb) = got
    if ctx.text(sa.slice) != ctx.text(sb.slice) or shape_changing_mask(ctx, sa.slice) or (ra is not None and ra is rb):
        return None, ""
    m = sa.slice
    for s_, r_, _ in got:
        if not _movable(ctx, r_, s_, call) or rebinding_hint(ctx, s_.slice):
            return None, ""
    edits = [delete_statement(r_) for _, r_, _ in got if r_ is not None]
    kept = [atom(ctx, sa.value) + xa if xa else ctx.text(sa.value), atom(ctx, sb.value) + xb if xb else ctx.text(sb.value)]
    kept += [ctx.text(a) for a in extra_pos]
    kept += [f"{k.arg}={ctx.text(k.value)}" for k in call.keywords if k.arg in _ELEMENTWISE_KWARGS]
    per_element = f"{ctx.text(call.func)}({', '.join(kept)}, reduction=\"none\")"
    new = f"torch.where({ctx.text(m)}, {per_element}, 0).sum()"
    if how == "mean":
        new = in_context(ctx, call, f"{new} / {atom(ctx, m)}.sum()")
    edits.append(ctx.edit(call, new))
    covers = tuple(ctx.position(s_) for s_, _, _ in got)
    shape = "" if all(elementwise_of(ctx, m, s_.value) for s_, _, _ in got) else \
        f"`{short(ctx, m, 30)}` has the inputs' shape; "
    return Fix("unsafe", tuple(edits), message="the loss per element on the full tensors, the masked-out elements "
               "dropped before the " + how, imports=("torch",), covers=covers,
               group=f"SYN302@{call.lineno}:{call.col_offset}",
               assumption=shape + BooleanMaskIndex.fix_assumption), new


def _reduction_fix(ctx, sub, m, use=None, read_stmt=None) -> tuple[Fix, str] | None:
    """`x[m].sum()` / `x[m].mean()` / `torch.sum(x[m])` / `torch.mean(x[m])` over the full tensor
    (also when `x[m]` sits in a variable read only there)."""
    use = sub if use is None else use
    parent = ctx.parent(use)
    call, op = None, None
    if isinstance(parent, ast.Attribute) and parent.value is use and parent.attr in ("sum", "mean"):
        c = ctx.parent(parent)
        if isinstance(c, ast.Call) and c.func is parent and not c.args and not c.keywords:
            call, op = c, parent.attr
    elif isinstance(parent, ast.Call) and len(parent.args) == 1 and parent.args[0] is use and not parent.keywords \
            and ctx.call_name(parent) in ("torch.sum", "torch.mean"):
        call, op = parent, ctx.call_name(parent)[6:]
    if call is None or shape_changing_mask(ctx, m):
        return None
    kept = f"torch.where({ctx.text(m)}, {ctx.text(sub.value)}, 0).sum()"
    new = kept if op == "sum" else in_context(ctx, call, f"{kept} / {atom(ctx, m)}.sum()")
    shape = "" if elementwise_of(ctx, m, sub.value) else f"`{short(ctx, m, 30)}` has `{short(ctx, sub.value, 30)}`'s shape; "
    edits = ([delete_statement(read_stmt)] if read_stmt is not None else []) + [ctx.edit(call, new)]
    return Fix("unsafe", tuple(edits), message="reduce over the full tensor, the masked-out elements as 0",
               imports=("torch",), assumption=shape + BooleanMaskIndex.fix_assumption), new
