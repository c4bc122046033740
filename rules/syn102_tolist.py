import ast

from syncscan.lint.rule import Bad, Footprint, Good, Rule

from ._consumer import host_consumer, inherent_copy_advice
from ._util import isinstance_guard, lazy_message, method, not_a_device_tensor, short

# receivers that are numpy arrays or pandas objects by their name (both have `.tolist()` too)
_HOST_WORDS = ("np", "numpy", "array", "arr", "df", "series", "column", "pandas", "values")


def _host_by_name(recv: ast.AST) -> bool:
    name = recv.id if isinstance(recv, ast.Name) else recv.attr if isinstance(recv, ast.Attribute) else ""
    low = name.lower()
    return any(low == w or low.startswith(w + "_") or low.endswith("_" + w) for w in _HOST_WORDS)



def _host_guarded(ctx, recv) -> bool:
    """Under `if isinstance(v, np.ndarray):` (or another non-torch type): not a tensor."""
    t = isinstance_guard(ctx, recv)
    return t is not None and not t.startswith("torch")

class Tolist(Rule):
    code = "SYN102"
    name = "tolist"
    summary = "`.tolist()` on a tensor that may live on the GPU."
    why = ("`.tolist()` copies every element to the host as Python numbers: the CPU waits for all queued GPU "
           "work, then for the copy, and the GPU idles until the CPU launches new work.")
    rewrite = ("Keep the values on the device and index or compute with tensors; when the host really needs "
               "them (logging, decoding), copy once, late, for many steps: `x.to('cpu', non_blocking=True)` into "
               "pinned memory and an event to wait on before reading.")
    triggers = (".tolist(",)
    ops = ("aten::tolist",)
    rewrite_hint = "keep the tensor on the GPU; copy to the host rarely, in one batch"
    footprint = Footprint(ops=1)  # the values stay on the device: one op uses them there
    bad = (
        Bad("""
import torch
def forward(self, logits):
    ids = logits.argmax(-1).tolist()
    return ids
""", line=4),
        Bad("""
import torch
def decode(model, x: torch.Tensor):
    for row in x:
        out = model(row)
        print(out.topk(5).indices.tolist())
""", line=6),
        Bad("""
def train_step(batch, model):
    lengths = batch["mask"].sum(1).tolist()
    return [model(b) for b in batch["x"].split(lengths)]
""", line=3, suggests="keep the values in a tensor"),
        Bad("""
import torch
from scipy.sparse.csgraph import maximum_flow
def step(graph, caps: torch.Tensor):
    flow = maximum_flow(graph, caps.round().int().tolist())  # a host solver needs the values every step
    return flow.flow_value
""", line=5, suggests="`scipy.sparse.csgraph.maximum_flow` runs on the host"),
    )
    good = (
        Good("""
import numpy as np
def f(a):
    arr = np.asarray(a)
    return arr.tolist(), np.zeros(3).tolist()
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    return x.cpu().tolist()  # already on the host (SYN201 reports the copy)
"""),
        Good("""
def f(df, values_np):
    return df["a"].tolist() + values_np.tolist()
"""),
    )

    def visit_Call(self, node, ctx):
        recv = method(node, "tolist")
        if recv is None or node.args or node.keywords or not_a_device_tensor(ctx, recv) \
                or lazy_message(ctx, node) or _host_guarded(ctx, recv):
            return
        if ctx.kind(recv) is None:
            base = recv
            while isinstance(base, (ast.Subscript, ast.Attribute)) and not _host_by_name(base):
                base = base.value
            if _host_by_name(base) or ctx.qualname(recv) is not None:
                return
            if isinstance(recv, ast.Subscript) and isinstance(recv.slice, ast.Constant) \
                    and isinstance(recv.slice.value, str):
                return  # `c["bytes"].tolist()`: a column of a table or a dict of arrays, as often as a tensor
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `.tolist()` copies every element to the host, which "
                    "waits for all queued GPU work",
                    inherent_copy_advice(*consumer) if (consumer := host_consumer(ctx, node)) else
                    "keep the values in a tensor (index with it, compute on the device); if the host needs them, "
                    "copy once for many steps with `.to('cpu', non_blocking=True)` and read after an event")
