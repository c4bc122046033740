from syncscan.lint.rule import Bad, Footprint, Good, Rule

FUNCS = {"torch.cuda.synchronize", "torch.accelerator.synchronize", "torch.xpu.synchronize", "torch.mps.synchronize"}


class CudaSynchronize(Rule):
    code = "SYN501"
    name = "cuda-synchronize"
    summary = "`torch.cuda.synchronize()` (and `torch.accelerator.synchronize()`)."
    why = ("An explicit wait: the host blocks until every queued kernel on the device has finished, and the "
           "GPU then idles until the host queues more work. The sync debug mode does not report it.")
    rewrite = ("Order work on the GPU instead (`stream.wait_stream(other)`, `event.wait(stream)`); to time steps, "
               "record CUDA events and read `elapsed_time` once at the end. Outside the step (setup, final "
               "timing) it is harmless.")
    triggers = ("synchronize",)
    ops = ()
    runtime_calls = ("cudaDeviceSynchronize",)
    rewrite_hint = "order work on the GPU with event.wait(stream) / stream.wait_stream(other), not synchronize()"
    footprint = Footprint()  # order with events and wait_stream; time with events
    bad = (
        Bad("""
import torch
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
""", line=8),
        Bad("""
from torch.cuda import synchronize
def forward(self, x):
    synchronize(x.device)
    return x
""", line=4),
        Bad("""
import torch
def train_step(self, batch):
    torch.accelerator.synchronize()
""", line=4),
    )
    good = (
        Good("""
import torch
def train(stream, other):
    stream.wait_stream(other)
"""),
        Good("""
import threading
lock = threading.Lock()
def synchronize():
    pass
synchronize()
"""),
        Good("""
import torch
def f(ev):
    ev.record()
"""),
    )

    def visit_Call(self, node, ctx):
        if ctx.call_name(node) in FUNCS:
            self.report(ctx, node, "`torch.cuda.synchronize()` syncs: the host waits for every queued kernel",
                        "order work with `stream.wait_stream` / `event.wait`; time with CUDA events read at the end")
