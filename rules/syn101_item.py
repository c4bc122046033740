from syncscan.lint.rule import Bad, Good, Rule

from ._util import method, not_a_device_tensor, short


class Item(Rule):
    code = "SYN101"
    name = "item"
    summary = "`.item()` on a tensor that may live on the GPU."
    why = ("`.item()` copies one value to the host, so the CPU waits until every kernel queued before it "
           "has run; the GPU then idles until the CPU launches new work. Once per step (loss logging) "
           "this is the most common sync in training loops.")
    rewrite = ("Keep the value on the device: accumulate detached tensors (`total += loss.detach()`) and "
               "read them once every N steps or at the end; use 3-argument `torch.where` instead of a "
               "Python branch on the value.")
    bad = (
        Bad("""
import torch
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        print(loss.item())
""", line=8),
        Bad("""
def forward(self, x):
    return x.max().item()
""", line=3),
    )
    good = (
        Good("""
import numpy as np
a = np.zeros(3)
v = a.sum().item()
"""),
        Good("""
import torch
t = torch.tensor([1.0, 2.0])
v = t.sum().item()  # a CPU tensor: no GPU to wait for
"""),
        Good("""
d = {"a": 1}
for k, v in d.items():
    pass
"""),
    )

    def visit_Call(self, node, ctx):
        recv = method(node, "item")
        if recv is None or node.args or not_a_device_tensor(ctx, recv):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `.item()` copies a value to the host, which waits "
                    "for all queued GPU work",
                    "keep it on the device (e.g. accumulate `.detach()`ed tensors) and read it once every N steps")
