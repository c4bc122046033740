import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR, TENSORS, Env

from ._util import element_kind_of, is_builtin, short, surely_tensor


def _surely_elements(ctx, comp) -> bool:
    """Each element the comprehension yields is a tensor beyond the engine's guesses."""
    inf = ctx.infer
    saved = inf.env
    inf.env = Env(saved)
    try:
        for g in comp.generators:
            inf.bind_loop_target(g.target, g.iter)
        return surely_tensor(ctx, comp.elt)
    finally:
        inf.env = saved


class BuiltinOnTensor(Rule):
    code = "SYN106"
    name = "builtin-on-tensor"
    summary = ("Python's builtin `max` / `min` / `any` / `all` on tensors: `max(a, t)`, `min(t)`, "
               "`any(t > 0)`, `all(x.isfinite() for x in xs)`.")
    why = ("The builtins compare and test with Python: `max(a, t)` evaluates `a < t` and takes its truth value, "
           "`any(t)` iterates the tensor and tests each element. Every truth value is a copy to the host that "
           "waits for all queued GPU work (one per element when iterating). Builtin `abs(t)` (it calls "
           "`t.abs()`) and `sum(list_of_tensors)` (tensor additions) do not sync and are not flagged.")
    rewrite = ("Use the tensor versions: `torch.maximum(a, t)` / `t.clamp(min=a)` for a Python `a`, `t.max()`, "
               "`t.any()`, `torch.stack(xs).isfinite().all()`, and keep the result as a tensor.")
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "use torch.maximum / torch.minimum instead of builtin max/min on tensors"
    footprint = Footprint(ops=1)  # torch.maximum / minimum
    bad = (
        Bad("""
import torch
def compute_loss(pred, target):
    err = (pred - target).abs().mean()
    return max(err, 1e-6)
""", line=5),
        Bad("""
def forward(self, x):
    if any(x.sum(1) > 0):
        return x
    return min(x.sum(0))
""", line=3, count=2),
        Bad("""
import torch
def step(model, batch, optimizer):
    loss = model(batch).mean()
    loss.backward()
    grads = [p.grad.norm() for p in model.parameters()]
    ok = all(g.isfinite() for g in torch.stack(grads))
    optimizer.step()
    return ok
""", line=7),
        Bad("""
def paste(mask, box, im_w):
    # type: (Tensor, Tensor, int) -> Tensor
    x_0 = max(box[0], 0)  # a TorchScript type comment says `box` is a tensor
    return mask[:, x_0:im_w]
""", line=4),
        Bad("""
def compute_loss(self, logits, matched_idxs):
    # type: (Tensor, list[Tensor]) -> Tensor
    losses = []
    for logits_i, matched_i in zip(logits, matched_idxs):  # zip: one element of each
        num_fg = (matched_i >= 0).sum()
        losses.append(logits_i.sum() / max(1, num_fg))
    return sum(losses)
""", line=7),
    )
    good = (
        Good("""
import torch
def forward(self, x, y):
    n = max(x.shape[0], y.size(0), 1)
    return abs(x) + sum([x, y]) * n
"""),
        Good("""
import torch
def forward(self, xs):
    biggest = max(xs, key=lambda t: t.numel())  # compares host values
    return biggest, any(t is None for t in [xs])
"""),
        Good("""
def f(values, flags):
    return max(values), all(flags), min(1, 2)
"""),
        Good("""
def crop(box, im_w):
    # type: (list[int], int) -> int
    return max(box[0], 0) + min(box[2], im_w)  # host ints by the type comment
"""),
    )

    def visit_Call(self, node, ctx):
        b = is_builtin(ctx, node.func, "max", "min", "any", "all")
        if b is None or not node.args or any(k.arg == "key" for k in node.keywords):
            return
        if len(node.args) == 1:
            a = node.args[0]
            k = ctx.kind(a)
            if isinstance(a, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
                k = TENSORS if element_kind_of(ctx, a) == TENSOR and _surely_elements(ctx, a) else None
            if k == TENSOR and not surely_tensor(ctx, a):
                return
            if k in (TENSOR, TENSORS):
                what = "iterates the tensor and tests every element" if k == TENSOR else \
                    "tests the truth value of every tensor" if b in ("any", "all") else "compares the tensors in Python"
                self._report(ctx, node, b, what, a, k)
        elif b in ("max", "min") and any(surely_tensor(ctx, a) for a in node.args):
            self._report(ctx, node, b, "compares with Python (`a < b`) and takes the truth value", None, TENSOR)

    def _report(self, ctx, node, b, what, arg, k):
        if b in ("max", "min") and len(node.args) == 2:
            fn = "maximum" if b == "max" else "minimum"
            x, y = node.args
            if ctx.is_tensor(x) and ctx.is_tensor(y):
                sug = f"`torch.{fn}({short(ctx, x, 30)}, {short(ctx, y, 30)})`"
            else:
                t, v = (x, y) if ctx.is_tensor(x) else (y, x)
                side = "min" if b == "max" else "max"
                sug = f"`{short(ctx, t, 30)}.clamp({side}={short(ctx, v, 30)})` (a tensor, no sync)"
        elif arg is not None and k == TENSOR:
            per_dim = {"max": "amax", "min": "amin"}.get(b, b)
            sug = f"`{short(ctx, arg, 40)}.{b}()` (over all elements; `.{per_dim}(dim=0)` over the first dim)"
        else:
            sug = f"`torch.stack(...).{b}()` keeps it on the device"
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: builtin `{b}` {what}, each a copy to the host that waits "
                    "for all queued GPU work", sug)
