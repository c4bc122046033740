import ast

from syncscan.lint.module import binding_key
from syncscan.lint.rule import Bad, Fix, Footprint, Good, Rule

from ._util import add_keyword, kwarg, short

SCALERS = ("GradScaler", "ShardedGradScaler")  # torch.amp / torch.cuda.amp / FSDP's, by class name
WRAPPERS = ("NativeScaler", "NativeScalerWithGradNormCount")  # timm's and its copies (MAE, DeiT, ConvNeXt, ...)
FUSABLE = frozenset({"torch.optim.Adam", "torch.optim.AdamW", "torch.optim.SGD", "torch.optim.adam.Adam",
                     "torch.optim.adamw.AdamW", "torch.optim.sgd.SGD"})


def _last_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _built(ctx, node: ast.AST) -> list[ast.AST]:
    """What `node` (a name or `self.<attr>`) is assigned anywhere in the file."""
    key = binding_key(node)
    return ctx.file.index.assigned(key) if key else []


def _class_of_call(ctx, v: ast.AST) -> str:
    """The class name a value is built with: `GradScaler` of `torch.amp.GradScaler("cuda")`."""
    if not isinstance(v, ast.Call):
        return ""
    q = ctx.call_name(v)
    return (q or _last_name(v.func)).rsplit(".", 1)[-1]


def _disabled(v: ast.AST) -> bool:
    """`GradScaler(enabled=False)`: the scaler does nothing."""
    e = kwarg(v, "enabled") if isinstance(v, ast.Call) else None
    return isinstance(e, ast.Constant) and e.value is False


def scaler_kind(ctx, recv: ast.AST, classes: tuple[str, ...]) -> bool | None:
    """True when `recv` is built as one of `classes` in this file (and not disabled), False when it is
    visibly built as something else or disabled, None when the file does not say."""
    values = _built(ctx, recv)
    if not values:
        return None
    if all(_class_of_call(ctx, v) in classes and not _disabled(v) for v in values):
        return True
    if all(_disabled(v) or isinstance(v, ast.Call) and _class_of_call(ctx, v) not in classes for v in values):
        return False
    return None


def optimizers_built(ctx, opt: ast.AST) -> list[ast.Call] | None:
    """The optimizer constructions `opt` is assigned in this file (`torch.optim.AdamW(...)`), or None
    when some assignment is not a visible `torch.optim` constructor (or there is none)."""
    values = _built(ctx, opt)
    out = []
    for v in values:
        q = ctx.call_name(v) if isinstance(v, ast.Call) else None
        if not q or not q.startswith("torch.optim.") or not q.rsplit(".", 1)[-1][:1].isupper():
            return None
        out.append(v)
    return out or None


def _fused(call: ast.Call) -> bool:
    f = kwarg(call, "fused")
    return isinstance(f, ast.Constant) and f.value is True


class GradScalerStep(Rule):
    code = "SYN408"
    name = "grad-scaler-step"
    summary = ("`GradScaler.step(optimizer)` (also through a wrapper such as timm's `NativeScaler`, or accelerate's "
               "fp16 optimizer) with an optimizer that is not fused.")
    why = ("To skip the update when the scaled gradients overflowed, `GradScaler.step` sums the per-device "
           "`found_inf` flags and reads them on the host (`.item()` in `_maybe_opt_step`): every training step "
           "waits there for the backward pass and the unscale to finish. A fused optimizer (`fused=True`) takes "
           "`found_inf` on the device instead: its kernel skips the update itself, and nothing is read on the host. "
           "At runtime this is an `aten::item` (`_local_scalar_dense`) inside torch/amp/grad_scaler.py, at the "
           "`scaler.step(...)` line.")
    rewrite = ("Build the optimizer with `fused=True` (`torch.optim.Adam`, `AdamW` or `SGD`, every parameter a "
               "floating-point CUDA tensor): GradScaler then hands `found_inf` and the scale to the fused kernel. Or "
               "train with `torch.autocast(dtype=torch.bfloat16)`, which needs no loss scaling and no GradScaler.")
    # its sync is the `.item()` inside GradScaler (aten::item: SYN101's op), at the `scaler.step(...)` line
    triggers = ("step(", "Scaler")
    ops = ()
    rewrite_hint = "build the optimizer with fused=True (Adam, AdamW, SGD), or train in bfloat16 without GradScaler"
    footprint = Footprint()  # the fused step reads found_inf on the device: nothing left on the host
    fix_safety = "unsafe"
    fix_assumption = ("every parameter the optimizer updates is a floating-point tensor on a CUDA device (fused "
                      "kernels take nothing else) and the optimizer is not `differentiable`; a fused SGD needs "
                      "torch 2.3 or later.")
    bad = (
        Bad("""
import torch
def train(model, loader):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
""", line=10, fixed="""
import torch
def train(model, loader):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
""", unsafe=True),
        Bad("""
class Trainer:
    def train_step(self, batch):
        loss = self.model(batch)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)  # the optimizer is built elsewhere: fused or not, this file does not say
        self.scaler.update()
""", line=6),
        Bad("""
from timm.utils import NativeScaler
def train_one_epoch(model, loader, optimizer):
    loss_scaler = NativeScaler()
    for x, y in loader:
        loss = model(x, y)
        loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
""", line=7),
        Bad("""
from accelerate import Accelerator
def main(model, loader, optimizer):
    accelerator = Accelerator(mixed_precision="fp16")
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    for batch in loader:
        accelerator.backward(model(batch).loss)
        optimizer.step()
        optimizer.zero_grad()
""", line=8),
    )
    good = (
        Good("""
import torch
def train(model, loader):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        scaler.scale(model(x, y)).backward()
        scaler.step(opt)  # fused: found_inf goes to the kernel, nothing is read on the host
        scaler.update()
"""),
        Good("""
import torch
def train(model, loader, opt, use_amp=False):
    scaler = torch.cuda.amp.GradScaler(enabled=False)
    for x, y in loader:
        scaler.scale(model(x, y)).backward()
        scaler.step(opt)
        scaler.update()
"""),
        Good("""
def train(model, loader, opt, scheduler):
    for x, y in loader:
        model(x, y).backward()
        opt.step()
        scheduler.step()
"""),
        Good("""
from accelerate import Accelerator
def main(model, loader, optimizer):
    accelerator = Accelerator(mixed_precision="bf16")  # bf16 needs no GradScaler
    for batch in loader:
        accelerator.backward(model(batch).loss)
        optimizer.step()
"""),
    )

    def visit_Call(self, node, ctx):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "step":
            if node.args and self._scaler_step(ctx, node, f.value):
                return
            if not node.args and _accelerate_fp16(ctx) and "optim" in _last_name(f.value).lower():
                self.report(ctx, node, f"`{short(ctx, node)}` syncs: with accelerate's fp16 mixed precision the "
                            "prepared optimizer steps through GradScaler, which reads `found_inf` on the host every "
                            "step", "`mixed_precision=\"bf16\"` (no loss scaling, no GradScaler), or a fused "
                            "optimizer (`fused=True`)")
            return
        if isinstance(f, (ast.Name, ast.Attribute)) and len(node.args) >= 2 and _wrapper_call(ctx, node):
            self._report(ctx, node, node.args[1], "the loss scaler wrapper calls `GradScaler.step(optimizer)`, which")

    def _scaler_step(self, ctx, node: ast.Call, recv: ast.AST) -> bool:
        kind = scaler_kind(ctx, recv, SCALERS)
        if kind is False or kind is None and "scaler" not in _last_name(recv).lower():
            return False
        self._report(ctx, node, node.args[0], "`GradScaler.step`")
        return True

    def _report(self, ctx, node: ast.Call, opt: ast.AST, what: str) -> None:
        built = optimizers_built(ctx, opt)
        if built is not None and all(_fused(c) for c in built):
            return
        fix = None
        if built is not None and len(built) == 1 and ctx.call_name(built[0]) in FUSABLE:
            c = built[0]
            if not any(k.arg is None or k.arg in ("fused", "foreach", "differentiable") for k in c.keywords):
                fix = Fix("unsafe", (add_keyword(ctx, c, "fused", "True"),),
                          message="build the optimizer with `fused=True`", assumption=self.fix_assumption)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: {what} reads the overflow flag `found_inf` on the host "
                    "every step (unless the optimizer is fused), which waits for the backward pass",
                    "build the optimizer with `fused=True` (Adam, AdamW, SGD): the fused kernel skips the update on "
                    "the device; or train in bfloat16 autocast, which needs no GradScaler", fix=fix)


def _wrapper_call(ctx, node: ast.Call) -> bool:
    """`loss_scaler(loss, optimizer, ...)`: a call of timm's `NativeScaler` (built so in this file, or named
    a scaler and handed an optimizer), whose class is not defined here (there its own `.step` is reported)."""
    if ctx.file.index.classes.keys() & set(WRAPPERS):
        return False
    kind = scaler_kind(ctx, node.func, WRAPPERS)
    if kind is None:
        kind = "scaler" in _last_name(node.func).lower() and "optim" in _last_name(node.args[1]).lower()
    return bool(kind)


def _accelerate_fp16(ctx) -> bool:
    """The file builds `Accelerator(mixed_precision="fp16")`: its prepared optimizers step through GradScaler."""
    return ctx.file.get(_fp16_accelerator)


def _fp16_accelerator(file) -> bool:
    if "fp16" not in file.source or "Accelerator" not in file.source:
        return False
    for n in ast.walk(file.tree):
        if isinstance(n, ast.Call) and _last_name(n.func) == "Accelerator":
            mp = kwarg(n, "mixed_precision")
            if isinstance(mp, ast.Constant) and mp.value == "fp16":
                return True
    return False
