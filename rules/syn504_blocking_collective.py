from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule

from ._util import is_literal_true, kwarg, short

PREFIXES = ("torch.distributed.", "torch.distributed.distributed_c10d.")
# always wait on the host: barrier synchronises the device (NCCL) or the process (gloo); the object
# collectives pickle, exchange sizes and read them with `.item()` / copy to the CPU
HOST_WAITING = {"barrier", "monitored_barrier", "all_gather_object", "gather_object", "broadcast_object_list",
                "scatter_object_list", "send_object_list", "recv_object_list"}


class BlockingCollective(Rule):
    code = "SYN504"
    name = "blocking-collective"
    summary = ("`torch.distributed` calls that make the host wait: `barrier()`, `monitored_barrier()` and the "
               "object collectives (`all_gather_object`, `broadcast_object_list`, ...).")
    why = ("`barrier()` blocks the host until every rank arrives and, with NCCL, until the device has finished "
           "(it synchronises the stream); the object collectives pickle Python objects, exchange their sizes and "
           "read them on the host (`.item()`, copies to the CPU). Tensor collectives on CUDA tensors (NCCL) are "
           "not flagged: without `async_op=True` they return once queued and only the current stream waits, and "
           "`work.wait()` also blocks the stream, not the host (PyTorch's distributed docs); with gloo they wait "
           "on the host for the other ranks, not for the GPU.")
    rewrite = ("Keep barriers and object collectives out of the step: exchange tensors (`all_reduce` on a CUDA "
               "tensor, `async_op=True` and `wait()` as late as possible) and read them every N steps.")
    triggers = ("barrier", "all_reduce", *TORCH_CODE)
    ops = ()
    host_functions = tuple(f"torch.distributed.{fn}" for fn in sorted(HOST_WAITING))
    rewrite_hint = "dist collectives with async_op=True; wait as late as possible"
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)  # an async collective: the communication stays
    bad = (
        Bad("""
import torch.distributed as dist
def train(model, loader, opt):
    for x, y in loader:
        model(x).sum().backward()
        opt.step()
        dist.barrier()
""", line=7),
        Bad("""
import torch.distributed as dist
def training_step(self, batch):
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, batch["ids"])
""", line=5),
        Bad("""
from torch.distributed import broadcast_object_list
def forward(self, x):
    objs = [x.shape]
    broadcast_object_list(objs, src=0)
""", line=5),
    )
    good = (
        Good("""
import torch.distributed as dist
def train_step(self, grads):
    work = dist.all_reduce(grads, async_op=True)
    work.wait()
    dist.all_reduce(grads)  # CUDA tensors: queued; the stream waits, not the host
"""),
        Good("""
import threading
b = threading.Barrier(2)
b.wait()
"""),
        Good("""
def barrier():
    pass
barrier()
"""),
        Good("""
import torch.distributed as dist
from torch.distributed.elastic.utils.store import barrier
def f(store, n, group):
    barrier(store, n)  # a store-based barrier between processes, not the GPU
    work = dist.barrier(group=group, async_op=True)
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if not q:
            return
        module, _, fn = q.rpartition(".")
        # torch.distributed's own functions only: elastic's store `barrier(store, ...)` waits for
        # other processes, not for the GPU
        if fn not in HOST_WAITING or module + "." not in PREFIXES:
            return
        if is_literal_true(kwarg(node, "async_op")):
            return  # returns a Work at once; its wait() is where it blocks
        what = "waits for every rank (and, with NCCL, for the device)" if "barrier" in fn else \
            "pickles objects and reads their sizes on the host"
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: it {what}",
                    "keep it out of the step; exchange tensors with (async) collectives and read them every N steps")
