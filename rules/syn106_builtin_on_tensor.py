import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR, TENSORS, Env

from ._util import assigned_values, element_kind_of, is_builtin, kwarg, short, surely_tensor


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

_LIST_SEARCHES = frozenset({"remove", "index", "count"})


def _a_list(ctx, recv: ast.AST) -> bool:
    """`recv` is a name every assignment of which in the function is a list (a display, a comprehension,
    `list(...)`)."""
    if not isinstance(recv, ast.Name) or ctx.function is None:
        return False
    values = assigned_values(ctx, recv.id)
    return bool(values) and all(isinstance(v, (ast.List, ast.ListComp)) or isinstance(v, ast.Call) and
                                isinstance(v.func, ast.Name) and v.func.id == "list" for v in values)


def _holds_a_tensor(ctx, e: ast.AST) -> bool:
    """`e` is a name every binding of which in the function is a list or tuple display holding a tensor beside
    other values (`bracket = [t_prev, t]`, `bracket = [0, t]` in a line search, `t` a tensor): `max(bracket)`
    compares a tensor with the others."""
    if not isinstance(e, ast.Name) or ctx.function is None:
        return False
    values = assigned_values(ctx, e.id)
    return bool(values) and all(isinstance(v, (ast.List, ast.Tuple)) and not any(
        isinstance(x, ast.Starred) for x in v.elts) and any(surely_tensor(ctx, x) for x in v.elts) for v in values) \
        and any(len(v.elts) > 1 for v in values)


class BuiltinOnTensor(Rule):
    code = "SYN106"
    name = "builtin-on-tensor"
    summary = ("Python's builtin `max` / `min` / `any` / `all` on tensors: `max(a, t)`, `min(t)`, "
               "`any(t > 0)`, `all(x.isfinite() for x in xs)`, `min(a, b, key=torch.abs)`; and a list searched "
               "for a tensor: `classes.remove(t)`, `classes.index(t)`.")
    why = ("The builtins compare and test with Python: `max(a, t)` evaluates `a < t` and takes its truth value, "
           "`any(t)` iterates the tensor and tests each element. Every truth value is a copy to the host that "
           "waits for all queued GPU work (one per element when iterating). A list's `remove` / `index` / `count` "
           "compare each item with `==` and take its truth value too. Builtin `abs(t)` (it calls "
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
class Adafactor(torch.optim.Optimizer):
    def _rms(self, t: torch.Tensor) -> float:
        return t.norm(2) / (t.numel() ** 0.5)  # `-> float` is a wish: the body returns a tensor
    def _scale(self, update, group):
        return max(1.0, self._rms(update) / group["clip_threshold"])
""", line=7),
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
        Bad("""
import torch
def random_target(labels, n_classes):
    out = torch.zeros_like(labels)
    for i in range(labels.shape[0]):
        choices = list(range(n_classes))
        choices.remove(labels[i])  # `c == labels[i]` read on the host for every item until a match
        out[i] = choices[0]
    return out
""", line=7),
        Bad("""
import torch
def step_length(ta, tb):
    ta, tb = ta.cuda(), tb.cuda()
    return min(ta, tb, key=torch.abs)  # compares the keys with Python
""", line=5),
        Bad("""
import torch
def zoom(d, t_prev):
    t = torch.linalg.vector_norm(d)
    bracket = [t_prev, t]  # a line search's interval: a Python number and a tensor
    return 0.1 * (max(bracket) - min(bracket))
""", line=6, count=2),
    )
    good = (
        Good("""
import torch
class Trainer:
    def train(self, model):
        # a list of loaders under a loader's name: each `loader` is a loader, not a batch
        batches = min([len(loader) - loader.drop_last for loader in self.train_dataloader])
        for i in range(batches):
            model.step(i)
"""),
        Good("""
def width(lo: float, hi: float):
    bracket = [lo, hi]  # Python numbers: compared on the host, no tensor
    return max(bracket) - min(bracket)
"""),
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
import torch
def drop(labels, pending: set):
    t = labels.cuda()[0]
    pending.remove(t)  # a set hashes the tensor object: nothing is read
    names = ["a", "b"]
    names.remove("a")
    return pending
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
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in _LIST_SEARCHES and len(node.args) == 1 and not node.keywords:
            self._list_search(node, ctx)
            return
        b = is_builtin(ctx, node.func, "max", "min", "any", "all")
        key = kwarg(node, "key")
        if key is not None and b in ("max", "min") and len(node.args) > 1 \
                and (ctx.qualname(key) or "").startswith("torch.") and any(surely_tensor(ctx, a) for a in node.args):
            self._report(ctx, node, b, "compares the keys with Python (`key(a) < key(b)`) and takes the truth value",
                         None, TENSOR)
            return
        if b is None or not node.args or key is not None:
            return
        if len(node.args) == 1:
            a = node.args[0]
            k = ctx.kind(a)
            if isinstance(a, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
                k = TENSORS if element_kind_of(ctx, a) == TENSOR and _surely_elements(ctx, a) else None
            if k == TENSOR and not surely_tensor(ctx, a):
                return
            if k is None and b in ("max", "min") and _holds_a_tensor(ctx, a):
                self._report(ctx, node, b, "compares the list's items in Python, tensors among them", a, TENSORS)
                return
            if k in (TENSOR, TENSORS):
                what = "iterates the tensor and tests every element" if k == TENSOR else \
                    "tests the truth value of every tensor" if b in ("any", "all") else "compares the tensors in Python"
                self._report(ctx, node, b, what, a, k)
        elif b in ("max", "min") and any(surely_tensor(ctx, a) for a in node.args):
            self._report(ctx, node, b, "compares with Python (`a < b`) and takes the truth value", None, TENSOR)

    def _list_search(self, node, ctx):
        """`items.remove(t)` / `.index(t)` / `.count(t)` on a list the function builds (`list(range(n))`, a
        display, a comprehension): each item is compared with the tensor and the answer read on the host."""
        recv, arg = node.func.value, node.args[0]
        if not surely_tensor(ctx, arg) or not _a_list(ctx, recv):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: the list compares each item with the tensor "
                    f"`{short(ctx, arg, 30)}` (`item == t`) and reads the answer on the host, once per item until a "
                    "match", "search on the device: `(torch.tensor(items, device=t.device) == t).nonzero()`, or "
                    "keep the items as a mask (`allowed = torch.ones(n, dtype=torch.bool, device=t.device); "
                    "allowed[t] = False`)")

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
