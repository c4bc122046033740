from syncscan.lint.rule import Bad, Footprint, Good, Rule

FUNCS = {"torch.cuda.empty_cache", "torch.cuda.memory.empty_cache", "torch.accelerator.memory.empty_cache",
         "torch.xpu.empty_cache", "torch.mps.empty_cache"}


class EmptyCache(Rule):
    code = "SYN503"
    name = "empty-cache"
    summary = "`torch.cuda.empty_cache()`."
    why = ("Returning cached blocks to the driver (`cudaFree`) synchronises the device: the host waits for all "
           "queued work, and the next allocations pay `cudaMalloc` again. The sync debug mode does not see it. "
           "Once at setup or between phases it costs little; in the step it costs every step.")
    rewrite = ("Do not call it in the step. For fragmentation, set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`; "
               "to free memory between phases, call it once there.")
    triggers = ("empty_cache",)
    ops = ()
    rewrite_hint = "do not call torch.cuda.empty_cache() in the step"
    footprint = Footprint()  # no call in the step
    bad = (
        Bad("""
import torch
def train(model, loader, opt):
    for x, y in loader:
        model(x).sum().backward()
        opt.step()
        torch.cuda.empty_cache()
""", line=7),
        Bad("""
from torch.cuda import empty_cache
def forward(self, x):
    empty_cache()
    return x
""", line=4),
        Bad("""
import torch
def evaluate(model):
    torch.cuda.empty_cache()  # cold: shown with --all
""", line=4),
        Bad("""
from utils import *  # a script's helpers, which import torch: `torch` comes with them
def train(model, loader, opt):
    for x, y in loader:
        model(x).sum().backward()
        opt.step()
        torch.cuda.empty_cache()
""", line=7),
    )
    good = (
        Good("""
import torch
def f():
    torch.cuda.memory_allocated()
"""),
        Good("""
import gc
def f(cache):
    cache.empty_cache()  # not torch's
    gc.collect()
"""),
        Good("""
import torch
torch.cuda.reset_peak_memory_stats()
"""),
        Good("""
from utils import *
def release(torch):  # a parameter called torch: not the module a star import may bring
    torch.cuda.empty_cache()
"""),
    )

    def visit_Call(self, node, ctx):
        if ctx.call_name(node) in FUNCS:
            self.report(ctx, node, "`torch.cuda.empty_cache()` syncs: freeing the cached blocks waits for the device",
                        "do not call it in the step (set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` against "
                        "fragmentation)")
