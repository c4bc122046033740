import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, TENSOR, TENSORS

from ._consumer import chain_top
from ._dataflow import flow_of, rebinding_hint
from ._util import (alone_on_lines, atom, changed_between, delete_statement, elementwise_of, is_host_value,
                    is_literal_true, kwarg, last_assign, last_dim_reduced, method, not_a_device_tensor, reads_of,
                    reductions_in, short)

FUNCS = ("torch.nonzero", "torch.argwhere", "torch.where")


class Nonzero(Rule):
    code = "SYN301"
    name = "nonzero"
    summary = "`torch.nonzero`, `Tensor.nonzero`, `torch.argwhere` and one-argument `torch.where`."
    why = ("The size of the result depends on the data, so PyTorch must copy the count of non-zero "
           "elements to the host before it can allocate the output: the host waits for the GPU.")
    rewrite = ("Use the mask directly: `x.masked_fill(cond, v)` or 3-argument `torch.where(cond, a, b)` "
               "for assignments, `torch.count_nonzero` for counts, `torch.nonzero_static(m, size=k)` "
               "when an upper bound is known (where the code goes on with the variable-size selection, as NMS does, "
               "that or one sync per step is the choice: a shape-keeping rewrite changes the meaning).")
    fix_safety = "unsafe"
    fix_assumption = ("`cond` has `x`'s shape (or, with a reduction over the last dimension, `x`'s shape without it) "
                      "and `v` is a scalar, when `inds = torch.nonzero(cond, as_tuple=True); x[inds] = v` becomes "
                      "`x.masked_fill_(cond, v)`. When `cond` is visibly elementwise in `x` (`x == k`, "
                      "`(x > a) | (x < b)`) and `v` a Python number, that is certain and the fix is safe (`--fix`).")
    triggers = ("nonzero", *TORCH_CODE)
    ops = ("aten::nonzero", "aten::nonzero_numpy", "aten::argwhere", "aten::where")
    rewrite_hint = "3-argument torch.where(m, a, b), torch.count_nonzero, or torch.nonzero_static(m, size=k)"
    footprint = Footprint(ops=1)  # masked_fill / 3-argument where, no compaction
    bad = (
        Bad("""
import torch
inds = torch.nonzero(target == 9, as_tuple=True)
""", line=3),
        Bad("""
import torch as T
def forward(self, x):
    return (x > 0).nonzero()
""", line=4, suggests="replace the indices with the mask itself"),
        Bad("""
import torch
def detections(x, box, conf_thres: float):
    i, j = (x[:, 5:] > conf_thres).nonzero(as_tuple=False).T
    return torch.cat((box[i], x[i, 5 + j, None], j[:, None].float()), 1)  # a variable number of rows
""", line=4, suggests="`torch.nonzero_static(cond, size=k)` with a known bound `k`"),
        Bad("""
from torch import where
idx = where(mask)
""", line=3),
        Bad("""
import torch
pos = torch.argwhere(labels > 0)
""", line=3),
        Bad("""
import torch
class MaskedLoss(torch.nn.Module):
    def __init__(self, num_classes: int = 10, ignore_val: int = -1):
        super().__init__()
        self.num_classes, self.ignore_val = num_classes, ignore_val

    def forward(self, pred, target):
        inds = torch.nonzero(target == self.num_classes - 1, as_tuple=True)
        target[inds] = self.ignore_val
        return pred, target
""", line=9, fixed="""
import torch
class MaskedLoss(torch.nn.Module):
    def __init__(self, num_classes: int = 10, ignore_val: int = -1):
        super().__init__()
        self.num_classes, self.ignore_val = num_classes, ignore_val

    def forward(self, pred, target):
        target.masked_fill_(target == self.num_classes - 1, self.ignore_val)
        return pred, target
"""),
        Bad("""
import torch
def forward(self, x, labels):
    x[torch.nonzero(labels > 0, as_tuple=True)] = 0.0
    return x
""", line=4, fixed="""
import torch
def forward(self, x, labels):
    x.masked_fill_(labels > 0, 0.0)
    return x
""", unsafe=True),
        Bad("""
import torch
def forward(self, x):
    x[((x == 1) | (x == 2)).nonzero(as_tuple=True)] = -1
    return x
""", line=4, fixed="""
import torch
def forward(self, x):
    x.masked_fill_((x == 1) | (x == 2), -1)
    return x
"""),
        Bad("""
import torch
def forward(self, x, labels):
    idx = torch.where(labels)
    x[idx] = float("-inf")
    return x
""", line=4, fixed="""
import torch
def forward(self, x, labels):
    x.masked_fill_(labels != 0, float("-inf"))
    return x
""", unsafe=True),
        Bad("""
import torch
def forward(self, attention_mask):
    attention_mask[torch.where(attention_mask.sum(-1) == attention_mask.shape[-1])] = False
    return attention_mask
""", line=4, fixed="""
import torch
def forward(self, attention_mask):
    attention_mask.masked_fill_((attention_mask.sum(-1) == attention_mask.shape[-1]).unsqueeze(-1), False)
    return attention_mask
"""),
        Bad("""
import torch
def forward(self, x):
    x[torch.where(x.any(dim=1))] = 0.0  # rows of another shape: reported, not rewritten
    return x
""", line=4),
    )
    good = (
        Good("""
import torch
y = torch.where(cond, a, b)
"""),
        Good("""
import torch
n = torch.count_nonzero(mask)
"""),
        Good("""
import numpy as np
idx = np.nonzero(arr)
idx2 = arr.nonzero()
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    x[x > 0] = 0.0  # the mask itself: masked_fill, no sync
    return x
"""),
        Good("""
import torch
cpu = torch.zeros(3)
idx = cpu.nonzero()  # a CPU tensor: nothing to wait for
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q in FUNCS:
            if q == "torch.where" and (len(node.args) + len(node.keywords) != 1):
                return
            what = "one-argument torch.where" if q == "torch.where" else q
            if node.args and ctx.kind(node.args[0]) == CPU:
                return
            self._report(ctx, node, what)
            return
        recv = method(node, "nonzero", "argwhere")
        if recv is not None and ctx.qualname(recv) is None and not not_a_device_tensor(ctx, recv):
            if ctx.kind(recv) is None and not ctx.infer.is_bool(recv):
                # unknown receiver: numpy arrays have .nonzero() too; flag only what looks like a tensor mask
                if not isinstance(recv, (ast.Compare, ast.BinOp, ast.UnaryOp)):
                    return
            self._report(ctx, node, f"Tensor.{node.func.attr}")

    def _report(self, ctx, node, what):
        tup = is_literal_true(kwarg(node, "as_tuple"))
        fix, new = _masked_fill_fix(ctx, node) or (None, None)
        gather = None if fix else _variable_gather(ctx, node)
        self.report(ctx, node, f"{what} syncs: its output size depends on the data, so the host waits for the GPU",
                    f"`{new}`" if fix else
                    f"the indices select a variable number of elements (`{short(ctx, gather, 30)}`) that the next "
                    "lines work on (NMS-like): a shape-keeping `torch.where` / `masked_fill` would change what they compute; "
                    "use `torch.nonzero_static(cond, size=k)` with a known bound `k` (padded with `fill_value`: mask "
                    "the padding), or accept this one sync per step" if gather is not None else
                    "replace the indices with the mask itself: `x.masked_fill(cond, v)` / `torch.where(cond, a, b)`"
                    + ("" if tup else "; `torch.count_nonzero(cond)` if only the count is used"), fix=fix)


def _variable_gather(ctx, call) -> ast.AST | None:
    """A read indexed by the result (`box[i]` after `i, j = m.nonzero().T`, or `x[m.nonzero()]`): the code goes
    on with a variable-size selection, which no shape-keeping rewrite preserves. The indexing read, else None."""
    top = chain_top(ctx, call)
    p = ctx.parent(top)
    if isinstance(p, ast.Tuple):
        p = ctx.parent(p)
    if isinstance(p, ast.Subscript) and isinstance(p.ctx, ast.Load) and p.value is not top:
        return p
    if not (isinstance(p, ast.Assign) and p.value is top and len(p.targets) == 1):
        return None
    fl = flow_of(ctx)
    for store in ast.walk(p.targets[0]):
        b = fl.binding_of(store) if isinstance(store, ast.Name) else None
        for use in fl.uses(b) if b is not None else ():
            u = ctx.parent(use)
            if isinstance(u, ast.Tuple):
                u = ctx.parent(u)
            if isinstance(u, ast.Subscript) and isinstance(u.ctx, ast.Load) and u.value is not use \
                    and ctx.kind(u.value) != CPU:
                return u
    return None


def _tuple_indices_of(ctx, call) -> ast.AST | None:
    """The condition of `torch.nonzero(cond, as_tuple=True)`, `cond.nonzero(as_tuple=True)` or
    `torch.where(cond)`: index tuples that address exactly the True elements of `cond`."""
    q = ctx.call_name(call)
    if q == "torch.where" and len(call.args) == 1 and not call.keywords:
        return call.args[0]
    if q == "torch.nonzero" and len(call.args) == 1 and len(call.keywords) == 1 \
            and is_literal_true(kwarg(call, "as_tuple")):
        return call.args[0]
    recv = method(call, "nonzero")
    if recv is not None and q is None and not call.args and len(call.keywords) == 1 \
            and is_literal_true(kwarg(call, "as_tuple")):
        return recv
    return None


def _fill_value_ok(ctx, v) -> bool | None:
    """True: a Python number; None: a plain name or attribute of unknown kind (assumed a scalar)."""
    if is_host_value(ctx, v):
        return True
    if isinstance(v, (ast.Name, ast.Attribute)) and ctx.kind(v) not in (TENSOR, TENSORS, CPU):
        return None
    return False


def _simple_target(node) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _masked_fill_fix(ctx, call) -> tuple[Fix, str] | None:
    """`x[inds] = v` with `inds` the True positions of `cond` is `x.masked_fill_(cond, v)`."""
    cond = _tuple_indices_of(ctx, call)
    if cond is None or rebinding_hint(ctx, cond):
        return None
    parent = ctx.parent(call)
    edits = []
    if isinstance(parent, ast.Subscript) and parent.slice is call and isinstance(parent.ctx, ast.Store):
        assign = ctx.parent(parent)
        target = parent
    elif isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name) \
            and parent.value is call:
        name = parent.targets[0].id
        uses = reads_of(ctx, name, parent)
        if len(uses) != 1:
            return None
        target = ctx.parent(uses[0])
        if not (isinstance(target, ast.Subscript) and target.slice is uses[0] and isinstance(target.ctx, ast.Store)):
            return None
        assign = ctx.parent(target)
        if not isinstance(assign, ast.Assign) or last_assign(ctx, name, uses[0]) is not parent \
                or not alone_on_lines(ctx, parent) \
                or changed_between(ctx, [cond, target.value], parent, assign):
            return None
        edits.append(delete_statement(parent))
    else:
        return None
    if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and assign.targets[0] is target) \
            or not _simple_target(target.value):
        return None
    v = assign.value
    v_ok = _fill_value_ok(ctx, v)
    if v_ok is False:
        return None
    x = ctx.text(target.value)
    # nonzero takes any dtype, masked_fill_ only booleans: `!= 0` unless the mask is visibly boolean
    mask = ctx.text(cond) if ctx.infer.is_bool(cond, by_name=False) else f"{atom(ctx, cond)} != 0"
    if last_dim_reduced(ctx, cond, target.value):
        # x[inds] with inds over all but the last dimension sets whole rows: the mask, one dim more
        mask = f"({mask}).unsqueeze(-1)"
        shape_known = True
    elif reductions_in(ctx, cond):
        return None  # a mask of another shape than x's: masked_fill_ would broadcast it differently
    else:
        shape_known = elementwise_of(ctx, cond, target.value)
    new = f"{x}.masked_fill_({mask}, {ctx.text(v)})"
    edits.append(ctx.edit(assign, new))
    safe = v_ok is True and shape_known
    return Fix("safe" if safe else "unsafe", tuple(edits), message="fill through the mask itself, in place, instead of "
               "its indices", assumption="" if safe else Nonzero.fix_assumption), new
