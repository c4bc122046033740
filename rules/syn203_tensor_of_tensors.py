import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR, TENSORS

from ._util import atom, device_kind, element_kind_of, kwarg, narrowed_to_host, short, surely_tensor

FUNCS = ("torch.tensor", "torch.as_tensor")


class TensorOfTensors(Rule):
    code = "SYN203"
    name = "tensor-of-tensors"
    summary = ("`torch.tensor([t0, t1, ...])` / `torch.as_tensor(...)` of tensors that may live on the GPU "
               "(a list, a comprehension, or a name holding a list of tensors).")
    why = ("`torch.tensor` reads a list element by element as Python numbers: each GPU tensor in it is an "
           "`.item()`, a copy to the host that waits for all queued GPU work (2 syncs measured for two "
           "elements), and the result is built on the host.")
    rewrite = ("`torch.stack([t0, t1])` builds it on the device (no sync); add `.detach()` when the result must "
               "not carry gradients (as `torch.tensor`'s did not), and `.to(dtype)` for a `dtype=`.")
    fix_safety = "unsafe"
    fix_assumption = ("`torch.tensor([a, b])` becomes `torch.stack([a, b]).detach()`: `.detach()` because "
                      "`torch.tensor` drops the graph too, and the dtype is the same promotion of the elements' "
                      "dtypes; with `dtype=t` each element is converted first (`a.to(t)`), with `device=d` the result "
                      "is moved (`.to(device=d)`; no fix for an explicit CPU device). Assumes every element is a 0-dim "
                      "tensor (a one-element 1-D tensor would make a column) and all live on one device; without "
                      "`device=` the result now stays on that device, where `torch.tensor` built it on the CPU; where "
                      "`torch.tensor` raises (floating elements with an integer or bool `dtype=`) the fix converts.")
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "torch.stack([t0, t1]) instead of torch.tensor([t0, t1])"
    footprint = Footprint(ops=1)  # torch.stack
    bad = (
        Bad("""
import torch
def compute_loss(pred, target):
    l1 = (pred - target).abs().mean()
    l2 = (pred - target).pow(2).mean()
    losses = torch.tensor([l1, l2])
    return losses
""", line=6, fixed="""
import torch
def compute_loss(pred, target):
    l1 = (pred - target).abs().mean()
    l2 = (pred - target).pow(2).mean()
    losses = torch.stack([l1, l2]).detach()
    return losses
""", unsafe=True),
        Bad("""
import torch
def forward(self, x, y):
    s = torch.tensor((x.sum(), y.sum()), dtype=torch.float32, device=x.device)
    return s
""", line=4, fixed="""
import torch
def forward(self, x, y):
    s = torch.stack((x.sum().to(torch.float32), y.sum().to(torch.float32))).detach().to(device=x.device)
    return s
""", unsafe=True),
        Bad("""
import torch
def forward(self, feats):
    norms = torch.as_tensor([f.norm() for f in feats.unbind(0)])
    return norms
""", line=4),
    )
    good = (
        Good("""
import torch
def forward(self, x):
    return torch.stack([x.sum(), x.mean()]), torch.tensor([1.0, 2.0], device=x.device)
"""),
        Good("""
import torch
def f(a: torch.Tensor):
    c = a.cpu()
    return torch.tensor([c[0], c[1]])  # host tensors: no GPU to wait for
"""),
        Good("""
import torch
def forward(self, x):
    return torch.tensor([v.item() for v in x])  # SYN101 reports the .item()
"""),
    )

    def visit_Call(self, node, ctx):
        if ctx.call_name(node) not in FUNCS or not node.args:
            return
        data = node.args[0]
        if isinstance(data, (ast.List, ast.Tuple)):
            if not _has_tensor(ctx, data):
                return
        elif isinstance(data, (ast.ListComp, ast.GeneratorExp)):
            if element_kind_of(ctx, data) != TENSOR:
                return
        elif ctx.kind(data) != TENSORS or narrowed_to_host(ctx, data):
            return
        fix = _stack_fix(ctx, node, data)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: each tensor in the list is read as a Python number "
                    "(an `.item()` each), which waits for all queued GPU work",
                    fix.message if fix else "`torch.stack([...])` builds it on the device (`.detach()` to drop "
                    "gradients as `torch.tensor` did)", fix=fix)


def _has_tensor(ctx, data) -> bool:
    """A tensor (not just by the engine's guess) somewhere in a (nested) list literal."""
    for e in data.elts:
        if isinstance(e, (ast.List, ast.Tuple)):
            if _has_tensor(ctx, e):
                return True
        elif surely_tensor(ctx, e):
            return True
    return False


def _stack_fix(ctx, node: ast.Call, data: ast.AST) -> Fix | None:
    if not isinstance(data, (ast.List, ast.Tuple)) or len(node.args) != 1 or not data.elts:
        return None
    if any(isinstance(e, ast.Starred) or not surely_tensor(ctx, e) for e in data.elts):
        return None
    if any(k.arg not in ("dtype", "device") for k in node.keywords):
        return None
    dev, dt = kwarg(node, "device"), kwarg(node, "dtype")
    if dev is not None and device_kind(ctx, dev) == "cpu":
        return None  # the values are wanted on the host: that copy stays
    if dt is not None:  # each element straight to the dtype, as torch.tensor converts each value
        elts = ", ".join(f"{atom(ctx, e)}.to({ctx.text(dt)})" for e in data.elts)
        seq = f"[{elts}]" if isinstance(data, ast.List) else f"({elts}{',' if len(data.elts) == 1 else ''})"
    else:
        seq = ctx.text(data)
    new = f"torch.stack({seq}).detach()" + (f".to(device={ctx.text(dev)})" if dev is not None else "")
    return Fix("unsafe", (ctx.edit(node, new),), message=f"`{new}`: built on the device",
               assumption=TensorOfTensors.fix_assumption, imports=("torch",))
