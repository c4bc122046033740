import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Edit, Fix, Footprint, Good, Rule

from ._util import is_literal_true, short

FUNCS = {"torch.nn.utils.clip_grad_norm_": 3, "torch.nn.utils.clip_grad.clip_grad_norm_": 3,
         "torch.nn.utils.clip_grad_norm": 3, "torch.nn.utils.clip_grad.clip_grad_norm": 3,
         "torch.nn.utils.get_total_norm": 2, "torch.nn.utils.clip_grad.get_total_norm": 2}


class ClipGradNormErrorIfNonfinite(Rule):
    code = "SYN406"
    name = "clip-grad-norm-error-if-nonfinite"
    summary = "`clip_grad_norm_(..., error_if_nonfinite=True)` (and `get_total_norm`)."
    why = ("To raise on a nan or inf total norm, the norm is tested with a Python `if` on the host, which waits "
           "for the GPU to finish the backward pass. The default (`False`) clips on the device without reading it.")
    rewrite = ("Leave `error_if_nonfinite` at its default `False`; if non-finite gradients must be caught, check "
               "the returned norm every N steps, or `torch._assert_async(norm.isfinite())`.")
    fix_safety = "unsafe"
    fix_assumption = "you do not rely on the error: with a non-finite norm the gradients are scaled by nan/inf instead."
    triggers = TORCH_CODE
    ops = ("aten::clip_grad_norm_",)
    rewrite_hint = "leave clip_grad_norm_(error_if_nonfinite=False), the default"
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)  # the same clipping, unchecked
    bad = (
        Bad("""
import torch
def train(model, loader, opt):
    for x, y in loader:
        model(x).sum().backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=True)
        opt.step()
""", line=6, fixed="""
import torch
def train(model, loader, opt):
    for x, y in loader:
        model(x).sum().backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
""", unsafe=True),
        Bad("""
from torch.nn.utils import clip_grad_norm_
def training_step(self, batch):
    return clip_grad_norm_(self.parameters(), 1.0, 2.0, True)
""", line=4, fixed="""
from torch.nn.utils import clip_grad_norm_
def training_step(self, batch):
    return clip_grad_norm_(self.parameters(), 1.0, 2.0, False)
""", unsafe=True),
        Bad("""
import torch
def step(self, grads):
    return torch.nn.utils.get_total_norm(grads, error_if_nonfinite=True, foreach=True)
""", line=4),
    )
    good = (
        Good("""
import torch
def train(model, opt):
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
"""),
        Good("""
import torch
def train(model, opt):
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, error_if_nonfinite=False)
"""),
        Good("""
def train(accelerator, model):
    accelerator.clip_grad_norm_(model.parameters(), 1.0)
"""),
    )

    def visit_Call(self, node, ctx):
        pos = FUNCS.get(ctx.call_name(node))
        if pos is None:
            return
        if len(node.args) > pos:
            flag, edit = node.args[pos], None
            if is_literal_true(flag):
                edit = ctx.edit(flag, "False")
        else:
            kw = next((k for k in node.keywords if k.arg == "error_if_nonfinite"), None)
            if kw is None or not is_literal_true(kw.value):
                return
            flag = kw.value
            items = list(node.args) + list(node.keywords)
            i = items.index(kw)
            if i == 0:
                return
            prev = items[i - 1]
            prev_end = prev.value if isinstance(prev, ast.keyword) else prev
            line, col = ctx.position(prev_end, end=True)
            el, ec = ctx.position(kw.value, end=True)
            edit = Edit(line, col, el, ec, "")
        if not is_literal_true(flag):
            return
        fix = Fix("unsafe", (edit,), message="leave `error_if_nonfinite` at its default False",
                  assumption=self.fix_assumption)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `error_if_nonfinite=True` tests the norm on the host",
                    "drop `error_if_nonfinite=True` (check the returned norm every N steps instead)", fix=fix)
