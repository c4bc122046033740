import ast

from syncscan.lint.rule import Bad, Footprint, Good, Rule

from ._util import last_assign, short

# what makes a CUDA event or stream
EVENT_OR_STREAM = {"torch.cuda.Event", "torch.cuda.Stream", "torch.cuda.current_stream", "torch.cuda.default_stream",
                   "torch.cuda.ExternalStream", "torch.Event", "torch.Stream", "torch.cuda.streams.Event",
                   "torch.cuda.streams.Stream", "torch.accelerator.current_stream", "torch.xpu.Event",
                   "torch.xpu.Stream", "torch.xpu.current_stream"}
UNBOUND = {"torch.cuda.Event.synchronize", "torch.cuda.Stream.synchronize", "torch.Event.synchronize",
           "torch.Stream.synchronize"}


def _made_as_event_or_stream(ctx, node, at) -> bool:
    if isinstance(node, ast.Call):
        return ctx.call_name(node) in EVENT_OR_STREAM
    if isinstance(node, ast.Name):
        a = last_assign(ctx, node.id, at)
        if a is not None:
            return _made_as_event_or_stream(ctx, a.value, a)
        # bound on several paths (`done = torch.cuda.Event()` if on CUDA, else `done = None`): an event or stream
        # wherever it is not None, as every binding in the function says
        values = [n.value for n in ast.walk(ctx.function) if isinstance(n, ast.Assign) and len(n.targets) == 1
                  and isinstance(n.targets[0], ast.Name) and n.targets[0].id == node.id] \
            if isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef)) else []
        made = [isinstance(v, ast.Call) and ctx.call_name(v) in EVENT_OR_STREAM for v in values]
        return any(made) and all(m or isinstance(v, ast.Constant) and v.value is None for v, m in zip(values, made))
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self" \
            and ctx.class_stack:
        for n in ast.walk(ctx.class_stack[-1]):
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == node.attr
                                                 and isinstance(t.value, ast.Name) and t.value.id == "self"
                                                 for t in n.targets):
                if isinstance(n.value, ast.Call) and ctx.call_name(n.value) in EVENT_OR_STREAM:
                    return True
    return False


def _named_like(node) -> bool:
    """`end_event`, `self.copy_stream`, `events[i]`: named for an event or a stream."""
    if isinstance(node, ast.Subscript):
        node = node.value
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    name = name.lower()
    return "event" in name or "stream" in name


class EventOrStreamSynchronize(Rule):
    code = "SYN502"
    name = "event-or-stream-synchronize"
    summary = ("`event.synchronize()`, `stream.synchronize()`, `torch.cuda.current_stream().synchronize()` on a "
               "CUDA event or stream.")
    why = ("The host blocks until the event's recorded work (or everything queued on the stream) has finished; "
           "the GPU then idles until the host queues more.")
    rewrite = ("Make the GPU wait instead of the host: `event.wait(stream)` / `stream.wait_event(event)` / "
               "`stream.wait_stream(other)`; for timing, read `start.elapsed_time(end)` once at the end.")
    triggers = ("synchronize",)
    ops = ()
    runtime_calls = ("cudaEventSynchronize", "cudaStreamSynchronize")
    rewrite_hint = "event.wait(stream) / stream.wait_stream(other) instead of a host-side synchronize"
    footprint = Footprint()  # event.wait / wait_stream on the device
    bad = (
        Bad("""
import torch
def train_step(self, batch):
    done = torch.cuda.Event()
    done.record()
    done.synchronize()
""", line=6),
        Bad("""
import torch
def solve(x, steps, device):
    for _ in range(steps):
        x = x * 0.5
        if device.type == "cuda":
            done = torch.cuda.Event()
            done.record(torch.cuda.current_stream(device))
        else:
            done = None
        if done is not None:
            done.synchronize()  # an event wherever it is not None
    return x
""", line=12),
        Bad("""
import torch
def forward(self, x):
    torch.cuda.current_stream().synchronize()
    return x
""", line=4),
        Bad("""
import torch
class Prefetcher:
    def __init__(self):
        self.copy_stream = torch.cuda.Stream()

    def next(self):
        self.copy_stream.synchronize()
""", line=8),
        Bad("""
def step(self, end_event):
    end_event.synchronize()
""", line=3),
    )
    good = (
        Good("""
import torch
def f(stream, ev):
    stream.wait_event(ev)
    ev.wait(stream)
"""),
        Good("""
import threading
def f(barrier, work):
    barrier.synchronize()
    work.synchronize()
"""),
        Good("""
import torch
torch.cuda.synchronize()  # SYN501
"""),
    )

    def visit_Call(self, node, ctx):
        f = node.func
        if ctx.call_name(node) in UNBOUND:
            self._report(ctx, node)
            return
        if not (isinstance(f, ast.Attribute) and f.attr == "synchronize" and not node.args and not node.keywords):
            return
        recv = f.value
        if ctx.qualname(recv) is not None:
            return  # torch.cuda.synchronize (SYN501) and other module functions
        if _made_as_event_or_stream(ctx, recv, node) or _named_like(recv):
            self._report(ctx, node)

    def _report(self, ctx, node):
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: the host blocks until the recorded GPU work has finished",
                    "`event.wait(stream)` / `stream.wait_event(event)` make the GPU wait instead of the host")
