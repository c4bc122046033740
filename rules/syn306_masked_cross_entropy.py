"""SYN306: cross-entropy over boolean-masked logits and targets.

One finding per sync site: when the masked reads are arguments of the loss call itself
(`F.cross_entropy(logits[m], target[m])`), this rule reports the call and SYN302 stays silent on
those reads; when they were made in earlier statements (`a = logits[m]`), SYN302 reports each of
those statements (they are where the host waits) and this rule reports the loss call, where the
`ignore_index` rewrite goes (its fix also removes the reads).
"""

import ast
from dataclasses import dataclass

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule

from ._dataflow import assigned_value, known_uses, only_reader, rebinding_hint
from ._util import (add_keyword, alone_on_lines, atom, changed_between, delete_statement, flow, is_index_valued,
                    is_mask, kwarg, last_assign, negated, not_a_device_tensor, shape_changing_mask, short)

LOSS_FUNCS = {"torch.nn.functional.cross_entropy", "torch.nn.functional.nll_loss"}
LOSS_CLASSES = {"torch.nn.CrossEntropyLoss", "torch.nn.NLLLoss", "torch.nn.modules.loss.CrossEntropyLoss",
                "torch.nn.modules.loss.NLLLoss"}
# methods that keep a tensor's shape and values' meaning: `logits[m].float()` is `logits.float()[m]`
SAME_SHAPE = frozenset({"float", "double", "half", "bfloat16", "contiguous", "long", "int"})
DEFAULT_IGNORE = "-100"  # PyTorch's own default: what the original call already ignored


@dataclass
class Masked:
    base: ast.AST  # the full tensor
    mask: ast.AST
    methods: tuple  # calls applied after the masking, as source suffixes in order (`.float()`, `.reshape(-1, n)`)
    read: ast.Assign | None  # the earlier `name = base[mask]` statement, when split
    arg: ast.AST  # the argument as written in the call
    sub: ast.Subscript | None = None  # the masked read itself


@dataclass
class LossCall:
    call: ast.Call
    functional: bool
    ctor: ast.Call | None  # the module's construction (None: functional)
    logits: Masked | None
    target: Masked | None


def _minus_one(node) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
        and node.operand.value == 1 and not isinstance(node.operand.value, bool)


def _size_expr(e) -> bool:
    """A class count as code writes it: `n`, `self.num_classes`, `10`, `x.shape[-1]`, `x.size(-1)`."""
    if isinstance(e, (ast.Name, ast.Attribute, ast.Constant)):
        return True
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Attribute) and e.value.attr == "shape":
        return True
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "size" \
        and len(e.args) == 1 and not e.keywords


def _tail(e) -> str | None:
    """The suffix a call adds when it may follow a masked read of a loss's input (the read is
    `(K, ...)`): a same-shape method, `.view(-1, n)` / `.reshape(-1, n)` (no-ops on `(K, n)` logits),
    `.view(-1)` / `.reshape(-1)` / `.flatten()` (no-ops on `(K,)` targets); else None."""
    if not (isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute)) or e.keywords \
            or any(isinstance(a, ast.Starred) for a in e.args):
        return None
    a, args = e.func.attr, e.args
    if a in SAME_SHAPE and not args:
        return f".{a}()"
    if a in ("view", "reshape") and 1 <= len(args) <= 2 and _minus_one(args[0]) \
            and (len(args) == 1 or _size_expr(args[1])):
        return None if len(args) == 2 and _minus_one(args[1]) else a
    if a == "flatten" and not args:
        return a
    return None


def _peel(e, ctx=None):
    """(the expression under the tail calls, their suffixes in order)."""
    methods = []
    while (t := _tail(e)) is not None:
        methods.append(t if t.startswith(".") else f".{t}({', '.join(ctx.text(x) for x in e.args)})" if ctx else t)
        e = e.func.value
    return e, tuple(reversed(methods))


def _masked_read(ctx, e) -> tuple | None:
    if isinstance(e, ast.Subscript) and isinstance(e.ctx, ast.Load) and not isinstance(e.slice, (ast.Tuple, ast.Slice)) \
            and is_mask(ctx, e.slice) and not not_a_device_tensor(ctx, e.value):
        return e.value, e.slice
    return None


def masked(ctx, arg, call) -> Masked | None:
    e, methods = _peel(arg, ctx)
    hit = _masked_read(ctx, e)
    if hit is not None:
        return Masked(hit[0], hit[1], methods, None, arg, e)
    if isinstance(e, ast.Name):
        # `picked = flat[keep]` ... `loss(picked.reshape(-1, n), ...)`: the one value the name holds here
        got = assigned_value(ctx, e)
        if got is not None:
            inner, more = _peel(got[0], ctx)
            hit = _masked_read(ctx, inner)
            if hit is not None:
                return Masked(hit[0], hit[1], more + methods, got[1], arg, inner)
    return None


def _class_ctor(ctx, attr: str) -> ast.Call | None:
    """The loss module `self.<attr>` holds: every assignment to it in the class builds the same one."""
    if not ctx.class_stack:
        return None
    cls = ctx.class_stack[-1]
    found = [v for v, _ in ctx.file.index.self_assigns(cls).get(attr, ())]
    if found and all(isinstance(v, ast.Call) and ctx.call_name(v) in LOSS_CLASSES for v in found) \
            and len({ast.dump(v) for v in found}) == 1:
        return found[0]
    return None


def _module_assigns(file) -> dict[str, list[ast.expr]]:
    assigns: dict[str, list[ast.expr]] = {}
    for n in file.tree.body:
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            assigns.setdefault(n.targets[0].id, []).append(n.value)
    return assigns


def _module_ctor(ctx, name: str) -> ast.Call | None:
    # module-level `name = value` assignments, indexed once per file (a scan per call is quadratic
    # in the size of a big module)
    found = ctx.file.get(_module_assigns).get(name, [])
    if len(found) == 1 and isinstance(found[0], ast.Call) and ctx.call_name(found[0]) in LOSS_CLASSES:
        return found[0]
    return None


def _may_name_loss_class(file) -> bool:
    """The file's text names a loss class (`CrossEntropyLoss`, `NLLLoss`; non-ASCII text may spell one
    in other letters): without, no name of it holds a loss module, and the def-use search for what a
    called name holds (`last_assign`, on most calls of two names) is skipped."""
    src = file.source
    return not src.isascii() or any(c.rsplit(".", 1)[1] in src for c in LOSS_CLASSES)


def _maybe_masked(e) -> bool:
    """Cheap syntactic pre-check: `x[...]`, a name, or those followed by `.float()`-like calls."""
    e, _ = _peel(e)
    return isinstance(e, (ast.Subscript, ast.Name))


def loss_call(ctx, call: ast.Call) -> LossCall | None:
    """A cross-entropy / NLL loss call, with its masked inputs (None when not masked)."""
    inp = call.args[0] if call.args else kwarg(call, "input")
    tgt = call.args[1] if len(call.args) > 1 else kwarg(call, "target")
    if inp is None or tgt is None or not _maybe_masked(inp) or not _maybe_masked(tgt):
        return None
    f = call.func
    functional, ctor = False, None
    if ctx.call_name(call) in LOSS_FUNCS:
        functional = True
    elif isinstance(f, ast.Call) and ctx.call_name(f) in LOSS_CLASSES:
        ctor = f
    elif isinstance(f, ast.Name) and ctx.file.get(_may_name_loss_class):
        a = last_assign(ctx, f.id, call)
        if a is not None:
            if isinstance(a.value, ast.Call) and ctx.call_name(a.value) in LOSS_CLASSES:
                ctor = a.value
        elif ctx.function is not None and f.id not in _local_names(ctx):
            ctor = _module_ctor(ctx, f.id)
    elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self":
        ctor = _class_ctor(ctx, f.attr)
    if not functional and ctor is None:
        return None
    return LossCall(call, functional, ctor, masked(ctx, inp, call), masked(ctx, tgt, call))


def _local_names(ctx) -> set:
    return set(flow(ctx).stores)


def masked_loss(ctx, call: ast.Call) -> LossCall | None:
    """The loss call when both its inputs are read through the same boolean mask."""
    lc = loss_call(ctx, call)
    if lc is None or lc.logits is None or lc.target is None:
        return None
    if ctx.text(lc.logits.mask) != ctx.text(lc.target.mask):
        return None
    return lc


def is_inline_masked_loss_arg(ctx, sub: ast.Subscript) -> bool:
    """`sub` is one of the masked reads written inside a masked loss call (SYN306 reports them)."""
    e = sub
    parent = ctx.parent(e)
    while isinstance(parent, ast.Attribute) and parent.value is e:
        call = ctx.parent(parent)
        if not (isinstance(call, ast.Call) and call.func is parent and _tail(call) is not None):
            return False
        e, parent = call, ctx.parent(call)
    if isinstance(parent, ast.keyword):
        parent = ctx.parent(parent)
    if not isinstance(parent, ast.Call) or e is parent.func:
        return False
    lc = masked_loss(ctx, parent)
    return lc is not None and (lc.logits.arg is e or lc.target.arg is e)


def _literal(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool)


def _simple(node) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) or _literal(node)


def _reduction_ok(node) -> bool:
    return node is None or isinstance(node, ast.Constant) and node.value in ("mean", "sum")


def _is_2d(ctx, e, at) -> bool:
    """Visibly `(N, C)`: `x.view(-1, C)`, `x.reshape(-1, C)`, `x.flatten(0, -2)`, or a name holding one."""
    if isinstance(e, ast.Name):
        a = last_assign(ctx, e.id, at)
        return a is not None and _is_2d(ctx, a.value, a)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute):
        m, args = e.func.attr, e.args
        if m in ("view", "reshape") and len(args) == 2 and not e.keywords and _literal(args[0]) \
                and ctx.text(args[0]).replace(" ", "") == "-1":
            return True
        if m == "flatten" and [ctx.text(a).replace(" ", "") for a in args] == ["0", "-2"]:
            return True
    return False


def _describe(ctx):
    def describe(value):
        if is_index_valued(ctx, value):
            return "indices, not a mask"
        return None
    return describe


def _flat_suffix(m: str) -> bool:
    return m.startswith((".view(", ".reshape(", ".flatten("))


def fix_for(ctx, lc: LossCall) -> tuple[Fix | None, str]:
    """(the fix, the rewritten call) or (None, why there is none: "" when the call's form has no
    rewrite, a hint when the code around it makes the rewrite a guess)."""
    call = lc.call
    lg, tg = lc.logits, lc.target
    # never on a guess: the mask (and what it is made of) must be one value on every path here
    for m in (lg, tg):
        hint = rebinding_hint(ctx, m.mask, _describe(ctx))
        if hint:
            return None, (f"no automatic fix: {hint}; make `{short(ctx, m.mask, 30)}` one boolean mask of the "
                          "target's shape on every path, then compute the loss on the full tensors with `ignore_index`")
    if any(k.arg is None for k in call.keywords) or shape_changing_mask(ctx, lc.target.mask):
        return None, ""
    # what follows the masked reads: logits `(K, C)`, possibly `.view(-1, C)`-ed (then the full
    # logits are flattened the same way and so is the target); targets `(K,)`
    flat = [m for m in lg.methods if _flat_suffix(m)]
    if len(flat) > 1 or (flat and not flat[0].count(",")) or (flat and flat[0] != lg.methods[-1]):
        return None, "no automatic fix: the masked logits are reshaped in a way the rewrite cannot follow"
    if any(_flat_suffix(m) and m.count(",") for m in tg.methods):
        return None, "no automatic fix: the masked targets are reshaped in a way the rewrite cannot follow"
    if lc.functional:
        if len(call.args) > 3 or kwarg(call, "size_average") is not None or kwarg(call, "reduce") is not None \
                or not _reduction_ok(kwarg(call, "reduction")):
            return None, ""
        ign_node = kwarg(call, "ignore_index")
        if ign_node is not None and not _simple(ign_node):
            return None, ""
        ign = ctx.text(ign_node) if ign_node is not None else DEFAULT_IGNORE
        func = ctx.text(call.func)
    else:
        ctor = lc.ctor
        if len(ctor.args) > 1 or any(k.arg is None for k in ctor.keywords) or kwarg(ctor, "size_average") is not None \
                or kwarg(ctor, "reduce") is not None or not _reduction_ok(kwarg(ctor, "reduction")) \
                or len(call.args) != 2 or call.keywords:
            return None, ""
        ign_node = kwarg(ctor, "ignore_index")
        if ign_node is None:
            ign = DEFAULT_IGNORE
        elif _literal(ign_node) or (call.func is ctor and _simple(ign_node)):
            ign = ctx.text(ign_node)
        elif _simple(call.func):
            ign = f"{ctx.text(call.func)}.ignore_index"
        else:
            return None, ""
        func = ctx.text(call.func)
    edits = []
    if lg.read is not None and tg.read is not None and lg.read is tg.read:
        return None, ""
    for m in (lg, tg):
        if m.read is None:
            continue
        name = _peel(m.arg)[0]
        # the read's value goes to this call only, and nothing it reads changes before the call
        if not only_reader(ctx, name) or not alone_on_lines(ctx, m.read) \
                or changed_between(ctx, [m.base, m.mask], m.read, call):
            return None, ""
        edits.append(delete_statement(m.read))
    logits = atom(ctx, lg.base) + "".join(lg.methods)
    if not flat and not _is_2d(ctx, lg.base, lg.read or call):
        logits += ".movedim(-1, 1)"
    target = atom(ctx, tg.base) + "".join(m for m in tg.methods if not _flat_suffix(m)) \
        + f".masked_fill({negated(ctx, tg.mask)}, {ign})" + (".reshape(-1)" if flat else "")
    # edit the two arguments in place (the call's layout and comments stay), add ignore_index
    edits += [ctx.edit(lg.arg, logits), ctx.edit(tg.arg, target)]
    if lc.functional and kwarg(call, "ignore_index") is None:
        edits.append(add_keyword(ctx, call, "ignore_index", ign))
    rest = [ctx.text(a) for a in call.args[2:]]
    rest += [f"{k.arg}={ctx.text(k.value)}" for k in call.keywords if k.arg not in ("input", "target")]
    if lc.functional and kwarg(call, "ignore_index") is None:
        rest.append(f"ignore_index={ign}")
    new = f"{func}({', '.join([logits, target] + rest)})"
    # the split reads are SYN302 findings of their own: this fix removes their syncs too
    covers = tuple(ctx.position(m.sub) for m in (lg, tg) if m.read is not None and m.sub is not None)
    return Fix("unsafe", tuple(edits), message="the loss on the full tensors, the skipped targets set to its "
               "ignore_index" + ("; the masked reads removed" if lg.read or tg.read else ""),
               assumption=MaskedCrossEntropy.fix_assumption, covers=covers,
               group=f"SYN306@{call.lineno}:{call.col_offset}" if covers else ""), new


def loss_of_read(ctx, sub: ast.Subscript) -> LossCall | None:
    """The masked loss call that takes the value of `name = sub` (a split masked read) as one of
    its inputs, when that is the one place the value goes."""
    e, stmt = sub, ctx.parent(sub)
    while isinstance(stmt, ast.Attribute) and stmt.value is e and isinstance(ctx.parent(stmt), ast.Call) \
            and _tail(ctx.parent(stmt)) is not None:
        e = ctx.parent(stmt)
        stmt = ctx.parent(e)
    if not (isinstance(stmt, ast.Assign) and stmt.value is e and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)):
        return None
    uses = known_uses(ctx, stmt.targets[0])
    if uses is None or len(uses) != 1:
        return None
    arg = uses[0]
    parent = ctx.parent(arg)
    while isinstance(parent, ast.Attribute) and parent.value is arg and isinstance(ctx.parent(parent), ast.Call) \
            and _tail(ctx.parent(parent)) is not None:
        arg = ctx.parent(parent)
        parent = ctx.parent(arg)
    if isinstance(parent, ast.keyword):
        parent = ctx.parent(parent)
    if not isinstance(parent, ast.Call):
        return None
    lc = masked_loss(ctx, parent)
    if lc is None or not any(m.read is stmt for m in (lc.logits, lc.target)):
        return None
    return lc


class MaskedCrossEntropy(Rule):
    code = "SYN306"
    name = "masked-cross-entropy"
    summary = ("Cross-entropy or NLL loss over boolean-masked logits and targets: "
               "`F.cross_entropy(logits[m], target[m])`, `nn.CrossEntropyLoss()(...)`, `self.criterion(...)`.")
    why = ("Each boolean-mask read sizes its output by the number of selected elements, which the host "
           "must read from the GPU (twice here, and the backward of the read scatters through the mask "
           "again). The loss can skip elements by itself. One finding per sync site: reads written inside "
           "the call are reported here only (not also as SYN302); reads made in earlier statements stay "
           "SYN302 findings on their own lines, and this rule reports the call, where the rewrite goes.")
    rewrite = ("Compute the loss on the full tensors and mark the skipped targets with the loss's "
               "`ignore_index`: `F.cross_entropy(logits.movedim(-1, 1), target.masked_fill(~m, -100), "
               "ignore_index=-100)`; mean, sum and class weights give the same result (PyTorch divides by "
               "the weights of the targets it does not ignore), and all-masked gives nan (mean) or 0 (sum) "
               "in both.")
    fix_safety = "unsafe"
    fix_assumption = ("the mask has the target's shape, that is the logits' shape without the class dimension, "
                      "which comes last in the masked logits (with `.view(-1, n)` after the read, `n` is that class "
                      "count, and the full logits and targets are flattened alike); the targets are class indices. The "
                      "skipped targets get the ignore_index the call already had (-100 by default), so no real class "
                      "is lost; equal up to float rounding (the sum runs in another order). Skipped logits are finite "
                      "(a NaN there leaves the loss alone but gives its row a NaN gradient).")
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "cross_entropy(..., ignore_index=-1) with masked targets set to -1, no boolean masks"
    footprint = Footprint(ops=2)  # the ignore_index fill and its mask
    bad = (
        Bad("""
import torch.nn.functional as F
def compute_loss(pred, target):
    mask = target != -1
    return F.cross_entropy(pred[mask], target[mask])
""", line=5, fixed="""
import torch.nn.functional as F
def compute_loss(pred, target):
    mask = target != -1
    return F.cross_entropy(pred.movedim(-1, 1), target.masked_fill(~mask, -100), ignore_index=-100)
""", unsafe=True),
        Bad("""
import torch
from torch.nn import CrossEntropyLoss
def forward(self, logits, labels, attention_mask):
    loss_fct = CrossEntropyLoss()
    active_loss = attention_mask.view(-1) == 1
    active_logits = logits.view(-1, self.num_labels)[active_loss]
    active_labels = labels.view(-1)[active_loss]
    return loss_fct(active_logits, active_labels)
""", line=9, fixed="""
import torch
from torch.nn import CrossEntropyLoss
def forward(self, logits, labels, attention_mask):
    loss_fct = CrossEntropyLoss()
    active_loss = attention_mask.view(-1) == 1
    return loss_fct(logits.view(-1, self.num_labels), labels.view(-1).masked_fill(~active_loss, -100))
""", unsafe=True),
        Bad("""
import torch.nn as nn
class Seg(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterion = nn.CrossEntropyLoss(ignore_index=255, reduction="sum")

    def forward(self, x, y):
        valid = y >= 0
        x = x.permute(0, 2, 3, 1)
        return self.criterion(x[valid], y[valid])
""", line=11, fixed="""
import torch.nn as nn
class Seg(nn.Module):
    def __init__(self):
        super().__init__()
        self.criterion = nn.CrossEntropyLoss(ignore_index=255, reduction="sum")

    def forward(self, x, y):
        valid = y >= 0
        x = x.permute(0, 2, 3, 1)
        return self.criterion(x.movedim(-1, 1), y.masked_fill(~valid, 255))
""", unsafe=True),
        Bad("""
import torch
import torch.nn.functional as F
def loss_fn(logp, t, w):
    return F.nll_loss(logp[t != 0].float(), t[t != 0], weight=w, ignore_index=-1)
""", line=5, fixed="""
import torch
import torch.nn.functional as F
def loss_fn(logp, t, w):
    return F.nll_loss(logp.float().movedim(-1, 1), t.masked_fill(t == 0, -1), weight=w, ignore_index=-1)
""", unsafe=True),
        Bad("""
import torch.nn.functional as F
def loss_fn(pred, target, mask):
    return F.cross_entropy(pred[mask], target[mask], reduction="none")  # no fix: the shapes differ
""", line=4),
        Bad("""
import torch.nn.functional as F
def loss_fn(flat, lbl, n: int):
    keep = lbl != -1
    picked = flat[keep]
    tgt = lbl[keep]
    return F.cross_entropy(picked.reshape(-1, n), tgt)
""", line=7, count=1, fixed="""
import torch.nn.functional as F
def loss_fn(flat, lbl, n: int):
    keep = lbl != -1
    return F.cross_entropy(flat.reshape(-1, n), lbl.masked_fill(~keep, -100).reshape(-1), ignore_index=-100)
""", unsafe=True),
        Bad("""
import torch
import torch.nn.functional as F
def loss_fn(logits, targets, compact: bool):
    valid = targets != -100
    if compact:
        valid = torch.nonzero(valid).squeeze(1)  # indices on this path: no fix, a hint
    return F.cross_entropy(logits[valid], targets[valid])
""", line=8),
    )
    good = (
        Good("""
import torch.nn.functional as F
def loss_fn(pred, target):
    return F.cross_entropy(pred, target, ignore_index=-1)
"""),
        Good("""
import torch.nn.functional as F
def loss_fn(pred, target, idx: "Tensor"):
    return F.cross_entropy(pred[idx], target[idx])  # an index tensor, not a mask: no sync
"""),
        Good("""
import torch.nn.functional as F
def loss_fn(pred, target):
    return F.mse_loss(pred[target > 0], target[target > 0])  # not cross-entropy: SYN302's business
"""),
        Good("""
import torch
def loss_fn(crit, pred, target, mask):
    return crit(pred[mask], target[mask])  # unknown loss: SYN302 reports the reads
"""),
    )

    def visit_Call(self, node, ctx):
        lc = masked_loss(ctx, node)
        if lc is None:
            return
        inline = lc.logits.read is None and lc.target.read is None
        where = "" if inline else " (masked in earlier statements)"
        fix, new = fix_for(ctx, lc)
        suggestion = f"`{new}`" if fix else new or (
            "compute the loss on the full tensors with `ignore_index`: "
            f"`target.masked_fill(~{short(ctx, lc.target.mask, 30)}, -100)` and `ignore_index=-100` "
            "(with `reduction='none'`, multiply by the mask instead)")
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: a loss over boolean-masked logits and targets{where}; "
                    "each mask read sizes its output on the host", suggestion, fix=fix)
