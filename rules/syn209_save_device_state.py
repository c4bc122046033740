import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.tensors import MODULE, OPTIMIZER, TENSOR, TENSORS

from ._util import assigned_values, last_assign, named_for_scheduler, short

SAVERS = {"torch.save", "torch.serialization.save"}


def _device_state(ctx, e: ast.AST, depth: int = 0) -> str | None:
    """"high" when `e` visibly holds device tensors (a module, its or an optimizer's `state_dict()`, a
    device tensor, a dict or list holding one), "low" for the `state_dict()` of something unknown
    (a model, nearly always); None otherwise."""
    if depth > 3:
        return None
    k = ctx.kind(e)
    if k in (TENSOR, TENSORS, MODULE):
        return "high"
    if isinstance(e, ast.Call) and len(e.args) == 1 and not e.keywords \
            and ctx.qualname(e.func) in ("copy.deepcopy", "copy.copy"):
        return _device_state(ctx, e.args[0], depth + 1)  # `deepcopy(self.state_dict())`: the same tensors' copies
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "state_dict" and not e.args:
        rk = ctx.kind(e.func.value)
        if rk is None and named_for_scheduler(e.func.value):
            return None  # an LR scheduler's state: Python numbers
        return "high" if rk in (MODULE, OPTIMIZER) else "low" if rk is None else None
    if isinstance(e, ast.Dict):
        parts = [v for v in e.values if v is not None]
    elif isinstance(e, (ast.List, ast.Tuple)):
        parts = list(e.elts)
    elif isinstance(e, ast.Name):
        a = last_assign(ctx, e.id, e)
        got = _passed_state(ctx, e.id) if a is None else _device_state(ctx, a.value, depth + 1)
        if got is None and a is None:
            # bound on several paths (`state = m.state_dict()`, then `if with_opt: state = {"model": state, ...}`):
            # state when every binding of the function is
            each = [_device_state(ctx, v, depth + 1) for v in assigned_values(ctx, e.id)]
            got = None if not each or None in each else "high" if all(g == "high" for g in each) else "low"
        if got is None and a is not None and _empty_display(a.value):
            # `data = {}` ... `data["model"] = self.model.state_dict()`: what is written into it before the save
            filled = [_device_state(ctx, v, depth + 1) for v in _written_into(ctx, e.id, a, e)]
            got = "high" if "high" in filled else "low" if "low" in filled else None
        if got is None and k is None and e.id in ctx.file.get(_used_as_module):
            return "low"  # a model of unknown class (`model = checkpoint["model"]`): the file trains it
        return got
    else:
        return None
    got = [_device_state(ctx, v, depth + 1) for v in parts]
    return "high" if "high" in got else "low" if "low" in got else None


def _empty_display(v: ast.AST) -> bool:
    return isinstance(v, ast.Dict) and not v.keys or isinstance(v, ast.List) and not v.elts or \
        isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("dict", "list") and not v.args \
        and not v.keywords


def _written_into(ctx, name: str, start: ast.AST, use: ast.AST) -> list[ast.AST]:
    """The values the function writes into the container `name` between its binding `start` and `use`:
    `name[key] = v`, `name.append(v)`."""
    fn = ctx.function
    if fn is None:
        return []
    lo, hi = (start.lineno, start.col_offset), (use.lineno, use.col_offset)
    out = []
    for n in ctx.file.src.own_nodes(fn):
        if not (lo < (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)) < hi):
            continue
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Subscript) \
                and isinstance(n.targets[0].value, ast.Name) and n.targets[0].value.id == name:
            out.append(n.value)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "append" \
                and len(n.args) == 1 and isinstance(n.func.value, ast.Name) and n.func.value.id == name:
            out.append(n.args[0])
    return out


_MODULE_ONLY = frozenset({"parameters", "named_parameters", "modules", "named_modules", "children", "train", "eval"})


def _used_as_module(file) -> frozenset[str]:
    """The names the file asks for what only a model has (`model.parameters()`, `model.train()`). Once per file."""
    return frozenset(n.func.value.id for n in ast.walk(file.tree) if n.__class__ is ast.Call
                     and n.func.__class__ is ast.Attribute and n.func.attr in _MODULE_ONLY
                     and n.func.value.__class__ is ast.Name)


def _passed_state(ctx, name: str) -> str | None:
    """"low" when `name` is a parameter of the module function or method `ctx` walks (`def save_checkpoint(state,
    ...)`), never rebound, and every call of that function in the module (a method's: through `self` or an instance)
    hands it a display holding a `state_dict()` (of a model, not a scheduler) or a module's state:
    `save_checkpoint({"state_dict": model.state_dict(), ...}, ...)`."""
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    index = ctx.file.index
    cls = index.class_of(fn)
    if index.funcs.get(fn.name) is fn:
        key = ("n", fn.name)
    elif index.is_method(fn, cls) and not fn.decorator_list:
        key = ("s", fn.name)  # `self.save_checkpoint({...}, is_best)`: a method the class calls through `self`
    else:
        return None
    a = fn.args
    params = [p.arg for p in a.posonlyargs + a.args][1 if key[0] == "s" else 0:]
    if name not in params and name not in {p.arg for p in a.kwonlyargs}:
        return None
    calls = index.calls().get(key, [])
    if key[0] == "s":  # also `trainer.save_checkpoint(...)` on an instance
        if index.escaped(("i", fn.name)):
            return None
        calls = calls + index.calls().get(("i", fn.name), [])
    if not calls or index.escaped(key):
        return None
    pos = params.index(name) if name in params else None
    for call, _, _ in calls:
        arg = next((k.value for k in call.keywords if k.arg == name), None)
        if arg is None and pos is not None and pos < len(call.args) \
                and not any(isinstance(x, ast.Starred) for x in call.args[:pos + 1]):
            arg = call.args[pos]
        if arg is None or not _holds_state(arg):
            return None
    return "low"


def _holds_state(e: ast.AST) -> bool:
    """A display (dict, list, tuple) holding a `.state_dict()` of something not named for a scheduler, by its form."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "state_dict" and not e.args:
        return not named_for_scheduler(e.func.value)
    if isinstance(e, ast.Dict):
        return any(v is not None and _holds_state(v) for v in e.values)
    if isinstance(e, (ast.List, ast.Tuple)):
        return any(_holds_state(v) for v in e.elts)
    return False


class SaveDeviceState(Rule):
    code = "SYN209"
    name = "save-device-state"
    summary = "`torch.save(...)` of a model, an optimizer's state or tensors that live on the GPU."
    why = ("Serialising a tensor copies it to the host first: `torch.save` makes one blocking device-to-host copy "
           "per tensor of the checkpoint, each waiting for all queued GPU work, and then writes the file while the "
           "GPU has nothing queued. A checkpoint in the step loop costs the whole model's size in copies each time.")
    rewrite = ("Save less often (every N steps or epochs, or only the best model), outside the step. To overlap a "
               "save with training, copy the state into pinned host buffers with `non_blocking=True`, record an "
               "event, and write the file from a thread after `event.synchronize()` there; or use "
               "`torch.distributed.checkpoint.async_save`.")
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "save every N steps, or copy to pinned buffers and write from a thread"
    footprint = Footprint()  # no save in the step
    bad = (
        Bad("""
import torch
class Checkpointer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
    def save(self, path):
        data = {}
        data["model"] = self.model.state_dict()  # filled after it was made
        data["optimizer"] = self.optimizer.state_dict()
        torch.save(data, path)
""", line=11),
        Bad("""
import torch
def train(model, loader, opt, path):
    model.cuda()
    for step, (x, y) in enumerate(loader):
        loss = model(x.cuda()).sum()
        loss.backward()
        opt.step()
        torch.save(model.state_dict(), path)
""", line=9),
        Bad("""
import torch
def save_checkpoint(model: torch.nn.Module, optimizer: torch.optim.Optimizer, step: int, path: str):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
    torch.save(checkpoint, path)
""", line=5),
        Bad("""
import torch
def keep(best: torch.Tensor, path):
    torch.save(best.cuda(), path)
""", line=4),
        Bad("""
import torch
def save_checkpoint(state, filename):
    torch.save(state, filename)  # every call here hands it a model's state_dict()
def train(model, loader, opt):
    for epoch in range(10):
        for x, y in loader:
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()
        save_checkpoint({"epoch": epoch, "state_dict": model.state_dict()}, "last.pt")
""", line=4),
        Bad("""
import torch
from models import SRResNet
def main(checkpoint, loader, device):
    if checkpoint is None:
        model = SRResNet()
    else:
        model = torch.load(checkpoint)["model"]
    model = model.to(device)
    for epoch in range(10):
        model.train()
        for lr_imgs, hr_imgs in loader:
            model(lr_imgs.to(device)).sum().backward()
        torch.save({"epoch": epoch, "model": model}, "checkpoint.pth.tar")  # the whole model, its weights on the GPU
""", line=14),
        Bad("""
import os
from copy import deepcopy
import torch
class BaseAE(torch.nn.Module):
    def save(self, dir_path: str):
        model_dict = {"model_state_dict": deepcopy(self.state_dict())}  # a copy of the same device tensors
        torch.save(model_dict, os.path.join(dir_path, "model.pt"))
""", line=8),
        Bad("""
import torch
class Trainer:
    def train(self, loader):
        for epoch in range(10):
            self.train_one_epoch(loader)
            self.save_checkpoint({"epoch": epoch, "model_state": self.model.state_dict()}, is_best=False)
    def save_checkpoint(self, state, is_best):
        torch.save(state, self.ckpt_path)  # every call through `self` hands it a model's state_dict()
""", line=9),
        Bad("""
import torch
def save_model(file, model, opt, with_opt=True):
    state = model.state_dict()
    if with_opt:
        state = {"model": state, "opt": opt.state_dict()}
    torch.save(state, file)  # a model's state on either path
""", line=7),
    )
    good = (
        Good("""
import torch
def save_args(args, path):
    torch.save({"args": vars(args), "vocab": args.vocab}, path)
"""),
        Good("""
import torch
class Exporter:
    def export(self, model):
        self.write({"epoch": 3, "model_state": model.state_dict()})
        self.write({"vocab": self.vocab})  # one call hands it host data
    def write(self, state):
        torch.save(state, self.path)
"""),
        Good("""
import torch
def save_model(file, model, meta=None):
    state = model.state_dict()
    if meta is not None:
        state = meta  # host data on this path
    torch.save(state, file)
"""),
        Good("""
import torch
def save_host_copy(model, path):
    state = {k: v for k, v in model.state_dict().items()}  # (still device tensors, but not seen: silent)
    torch.save(state, path)
"""),
        Good("""
import torch
def save_schedule(lr_scheduler, path):
    torch.save(lr_scheduler.state_dict(), path)  # an LR scheduler's state holds numbers
"""),
        Good("""
import numpy as np
def save(arr, path):
    np.save(path, arr)
"""),
    )

    def visit_Call(self, node, ctx):
        if ctx.call_name(node) not in SAVERS or not node.args:
            return
        how = _device_state(ctx, node.args[0])
        if how is None:
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: serialising copies each device tensor to the host "
                    "with a blocking copy", "save every N steps or epochs (or only the best), outside the step; "
                    "to overlap it, copy to pinned buffers with `non_blocking=True` and write from a thread",
                    confidence="low" if how == "low" else None)
