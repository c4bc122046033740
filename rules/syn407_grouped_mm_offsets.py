import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule

from ._util import kwarg, last_assign, not_a_device_tensor, short

FUNCS = ("torch.nn.functional.grouped_mm", "torch._grouped_mm")


def _bf16(ctx, e, depth: int = 0) -> bool:
    """Visibly a bfloat16 tensor: `.bfloat16()`, `.to(torch.bfloat16)`, `dtype=torch.bfloat16`, or a name
    last assigned one."""
    if depth > 4:
        return False
    if isinstance(e, ast.Name):
        a = last_assign(ctx, e.id, e)
        return a is not None and _bf16(ctx, a.value, depth + 1)
    if not isinstance(e, ast.Call):
        return False
    dt = kwarg(e, "dtype")
    if dt is not None:
        return ctx.qualname(dt) == "torch.bfloat16"
    f = e.func
    if isinstance(f, ast.Attribute) and ctx.call_name(e) is None:
        if f.attr == "bfloat16":
            return True
        if f.attr in ("to", "type") and e.args:
            return ctx.qualname(e.args[0]) == "torch.bfloat16" or (
                f.attr == "to" and len(e.args) > 1 and ctx.qualname(e.args[1]) == "torch.bfloat16")
        if f.attr in ("contiguous", "view", "reshape", "transpose", "permute", "t", "mT", "clone", "detach"):
            return _bf16(ctx, f.value, depth + 1)
    return False


class GroupedMmOffsets(Rule):
    code = "SYN407"
    name = "grouped-mm-offsets"
    summary = ("`F.grouped_mm(a, b, offs=offs)` / `torch._grouped_mm(a, b, offs)` (mixture-of-experts layers) "
               "with operands not visibly in bfloat16.")
    why = ("Only bfloat16 operands and output on an sm90 / sm100 GPU (H100, B200) take the grouped kernel that "
           "reads `offs` on the device. Any other dtype (float32, float16) takes a fallback that loops over the "
           "groups on the host: it copies `offs` to the host (`offs.cpu()`), which waits for all queued GPU "
           "work, at every call (torch 2.11).")
    rewrite = ("Run the grouped matmul in bfloat16: `F.grouped_mm(a.to(torch.bfloat16), b.to(torch.bfloat16), "
               "offs=offs)` (keep the expert weights in bfloat16, cast the result back if needed); without "
               "`offs`, 3-D by 3-D operands of equal group sizes are a plain batched matmul (`torch.bmm`).")
    triggers = TORCH_CODE
    ops = ("aten::_grouped_mm",)
    rewrite_hint = "run the grouped matmul in bfloat16: F.grouped_mm(a.bfloat16(), b.bfloat16(), offs=offs)"
    # two casts to bfloat16, then the same grouped matmul without the wait
    footprint = Footprint(ops=2, keeps_gpu_work=True, keeps_host_time=True)
    bad = (
        Bad("""
import torch
def experts(self, x, offs):
    return torch.nn.functional.grouped_mm(x.to(self.w.dtype), self.w, offs=offs)
""", line=4),
        Bad("""
import torch
def forward(self, x, w, counts):
    offs = torch.cumsum(counts, 0, dtype=torch.int32)
    return torch._grouped_mm(x, w, offs)
""", line=5),
    )
    good = (
        Good("""
import torch
import torch.nn.functional as F
def forward(self, x, w, offs):
    a = x.to(torch.bfloat16)
    return F.grouped_mm(a, w.bfloat16(), offs=offs)  # the kernel that reads offs on the device
"""),
        Good("""
import torch
def forward(self, x, w):
    return torch._grouped_mm(x, w)  # 3-D by 3-D without offsets: a batched matmul
"""),
    )

    def visit_Call(self, node, ctx):
        if ctx.call_name(node) not in FUNCS or len(node.args) < 2:
            return
        offs = kwarg(node, "offs")
        if offs is None and len(node.args) > 2:
            offs = node.args[2]
        if offs is None or isinstance(offs, ast.Constant) or not_a_device_tensor(ctx, offs):
            return
        out = kwarg(node, "out_dtype")
        if _bf16(ctx, node.args[0]) and _bf16(ctx, node.args[1]) and \
                (out is None or ctx.qualname(out) == "torch.bfloat16"):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: unless both operands are bfloat16 (on an H100 / B200), "
                    "the grouped matmul takes a fallback that copies `offs` to the host, which waits for all queued "
                    "GPU work",
                    "cast the operands to bfloat16 (`a.to(torch.bfloat16)`, expert weights kept in bfloat16): that "
                    "kernel reads `offs` on the device")
