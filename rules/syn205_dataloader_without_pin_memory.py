from syncscan.lint.rule import Bad, Fix, Footprint, Good, Rule

from ._util import add_keyword, dataloader_pinned, has_arg, is_dataloader_call, moves_to_device, short


class DataloaderWithoutPinMemory(Rule):
    code = "SYN205"
    name = "dataloader-without-pin-memory"
    summary = "`DataLoader(...)` without `pin_memory=True` in a file that copies to the GPU."
    why = ("Batches in pageable host memory make every copy to the GPU synchronous, even with "
           "`non_blocking=True`: the CPU waits for the stream before it can queue the next step. Pinned "
           "batches can be copied asynchronously.")
    rewrite = ("`DataLoader(..., pin_memory=True)` (or `pin_memory=torch.cuda.is_available()` in code that also "
               "runs without a GPU: pinning there only warns), then `batch.to(device, non_blocking=True)` "
               "(SYN204). Pinned memory is page-locked host RAM: with very large batches and many workers, watch "
               "the host's memory.")
    fix_safety = "safe"
    triggers = ("DataLoader",)
    ops = ()
    rewrite_hint = "DataLoader(..., pin_memory=True) and .to(dev, non_blocking=True)"
    # pinned batches copied with non_blocking=True: the copy stays (SYN204's)
    footprint = Footprint(ops=1, keeps_gpu_work=True)
    bad = (
        Bad("""
import torch
from torch.utils.data import DataLoader
def main(ds, model, device):
    loader = DataLoader(ds, batch_size=64, shuffle=True)
    for x, y in loader:
        model(x.to(device)).sum().backward()
""", line=5, fixed="""
import torch
from torch.utils.data import DataLoader
def main(ds, model, device):
    loader = DataLoader(ds, batch_size=64, shuffle=True, pin_memory=torch.cuda.is_available())
    for x, y in loader:
        model(x.to(device)).sum().backward()
"""),
        Bad("""
import torch.utils.data as tud
def build(ds):
    return tud.DataLoader(
        ds,
        batch_size=8,
        num_workers=4,
    )
def run(model, ds):
    for b in build(ds):
        model(b.cuda())
""", line=4, fixed="""
import torch.utils.data as tud
import torch

def build(ds):
    return tud.DataLoader(
        ds,
        batch_size=8,
        num_workers=4,
        pin_memory=torch.cuda.is_available(),
    )
def run(model, ds):
    for b in build(ds):
        model(b.cuda())
"""),
        Bad("""
from torch.utils.data import DataLoader
val = DataLoader(ds, batch_size=1)
for x in val:
    print(model(x.to("cuda")))
""", line=3),
    )
    good = (
        Good("""
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=64, pin_memory=True)
for x in loader:
    model(x.cuda())
"""),
        Good("""
from torch.utils.data import DataLoader
loader = DataLoader(ds, batch_size=64)  # this file never copies to a GPU
for x in loader:
    model(x)
"""),
        Good("""
from torch.utils.data import DataLoader
def make(ds, args, **kw):
    a = DataLoader(ds, pin_memory=args.pin_memory)  # decided elsewhere
    b = DataLoader(ds, **kw)
    return a, b, [x.to("cuda") for x in a]
"""),
    )

    def visit_Call(self, node, ctx):
        if not is_dataloader_call(ctx, node) or has_arg(node, "pin_memory", 7):
            return
        if dataloader_pinned(node) is not False or not moves_to_device(ctx):
            return
        # not `True`: code that also runs on a machine without a GPU would warn there (an error under
        # `-W error`, as in pyro's own tests); this pins exactly where there is a GPU to copy to
        fix = Fix("safe", (add_keyword(ctx, node, "pin_memory", "torch.cuda.is_available()"),),
                  message="add `pin_memory=torch.cuda.is_available()`: on a GPU machine the batches land in pinned "
                          "memory (same values), so copies to the GPU can be asynchronous; without a GPU nothing "
                          "changes", imports=("torch",))
        self.report(ctx, node, f"`{short(ctx, node)}` without `pin_memory=True`: its batches are in pageable memory, "
                    "so every copy of them to the GPU blocks the host", fix.message, fix=fix)
