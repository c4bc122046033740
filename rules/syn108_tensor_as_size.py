import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule

from ._util import is_builtin, kwarg, not_a_device_tensor, python_sequence, short, surely_tensor

# torch functions: which positional arguments (and keywords) are sizes or bounds; "*" = every
# positional argument (varargs sizes or one size sequence)
FUNCS = {
    "torch.arange": ("*", ("start", "end", "step")),
    "torch.range": ("*", ("start", "end", "step")),
    "torch.linspace": ((2,), ("steps",)),
    "torch.logspace": ((2,), ("steps",)),
    "torch.zeros": ("*", ("size",)), "torch.ones": ("*", ("size",)), "torch.empty": ("*", ("size",)),
    "torch.rand": ("*", ("size",)), "torch.randn": ("*", ("size",)),
    "torch.full": ((0, 1), ("size", "fill_value")),
    "torch.randint": ((0, 1, 2), ("low", "high", "size")),
    "torch.randperm": ((0,), ("n",)),
    "torch.eye": ((0, 1), ("n", "m")),
    "torch.narrow": ((2, 3), ("start", "length")),
    "torch.split": ((1,), ("split_size_or_sections",)),
    "torch.reshape": ((1,), ("shape",)),
    "torch.tile": ((1,), ("dims",)),
    "torch.topk": ((1,), ("k",)),
    "torch.kthvalue": ((1,), ("k",)),
    "torch.roll": ((1,), ("shifts",)),
    "torch.nn.functional.pad": ((1,), ("pad",)),
    "torch.nn.functional.interpolate": ((1,), ("size",)),
    "torch.fft.fftfreq": ((0, 1), ("n", "d")), "torch.fft.rfftfreq": ((0, 1), ("n", "d")),
    "torch.hann_window": ((0,), ("window_length",)), "torch.hamming_window": ((0,), ("window_length",)),
    "torch.blackman_window": ((0,), ("window_length",)), "torch.bartlett_window": ((0,), ("window_length",)),
    "torch.kaiser_window": ((0,), ("window_length",)),
    "torch.tril_indices": ((0, 1, 2), ("row", "col", "offset")), "torch.triu_indices": ((0, 1, 2), ("row", "col", "offset")),
    "torch.multinomial": ((1,), ("num_samples",)),
    "torch.chunk": ((1,), ("chunks",)),
}
# tensor methods: the same for `x.<method>(...)`
METHODS = {
    "view": ("*", ()), "reshape": ("*", ("shape",)), "expand": ("*", ("size",)), "repeat": ("*", ()),
    "new_zeros": ("*", ("size",)), "new_ones": ("*", ("size",)), "new_empty": ("*", ("size",)),
    "new_full": ((0, 1), ("size", "fill_value")),
    "narrow": ((1, 2), ("start", "length")), "split": ((0,), ("split_size",)), "unflatten": ((1,), ("sizes",)),
    "tile": ("*", ("dims",)), "topk": ((0,), ("k",)), "kthvalue": ((0,), ("k",)), "roll": ((0,), ("shifts",)),
    "unfold": ((1, 2), ("size", "step")), "chunk": ((0,), ("chunks",)), "multinomial": ((0,), ("num_samples",)),
}


def _size_tensor(ctx, e) -> bool:
    # a bare parameter of `forward(self, x, n)` is a tensor only by the engine's guess: as a size, an int
    return surely_tensor(ctx, e)


class TensorAsSize(Rule):
    code = "SYN108"
    name = "tensor-as-size"
    summary = ("A tensor that may live on the GPU used as a size, count or bound: `x[:n]`, `range(n)`, "
               "`torch.arange(n)`, `torch.zeros(n)`, `x.view(n, -1)`, `x.narrow(0, t, k)`, `x.split(sizes)`, "
               "`torch.full(shape, cuda_scalar)`; or as the index of a Python list (`names[t]`).")
    why = ("Sizes and bounds are host integers: PyTorch turns the tensor into one with `__index__` / `.item()`, "
           "copying it to the host, so the CPU waits for all queued GPU work. (A fill value such as "
           "`torch.full`'s is read on the host the same way.)")
    rewrite = ("Use host integers for sizes (`x.shape[0]`, a configured maximum) and keep data-dependent "
               "lengths as masks: `x * (torch.arange(L, device=x.device) < n)` instead of `x[:n]`; "
               "`torch.empty(shape, device=d).fill_(cuda_scalar)` / `cuda_scalar.expand(shape)` for a fill value.")
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "use host integers for sizes and bounds; fill_(cuda_scalar) instead of full(shape, t)"
    footprint = Footprint(ops=1)  # a host integer, or fill_ with the device scalar
    bad = (
        Bad("""
import torch
def denormalize(T, coords):
    return (0.5 * ((coords + 1.0) * T)).long()
def extract_patch(x, size):
    l = torch.rand(x.shape[0], 2, device=x.device) * 2 - 1
    start = denormalize(x.shape[-1], l)  # a tensor: what the helper gives for the tensor handed to it here
    return x[0, :, start[0, 1]:start[0, 1] + size]
def centre(T):
    return denormalize(T, 0.0)  # (called with numbers elsewhere: its parameter alone says nothing)
""", line=8, count=2),
        Bad("""
import torch
def forward(self, x, mask):
    n = mask.sum()
    return x[:n]
""", line=5),
        Bad("""
import torch
def forward(self, x, lengths):
    L = lengths.max()
    pos = torch.arange(L, device=x.device)
    for i in range(L):
        x = x + pos[i]
    return x.view(L, -1)
""", line=5, count=3),
        Bad("""
import torch
def compute_loss(x, scale):
    start = x.argmax()
    y = torch.narrow(x, 0, start, 4)
    return torch.full((4,), scale.sum(), device=x.device) + y
""", line=5, count=2),
        Bad("""
def forward(self, x, sizes):
    return x.split(sizes.sum(-1))
""", line=3),
        Bad("""
import torch
class Attention:
    @staticmethod
    def _global_indices(is_global):
        counts = is_global.long().sum(dim=1)  # `.long()`: only a tensor has it
        return counts.max(), counts
    def _gather(self, x, n_global):
        return x.new_zeros(x.shape[0], n_global)  # every caller passes a tensor
    def forward(self, x: torch.Tensor, is_global: torch.Tensor):
        n_global, counts = self._global_indices(is_global)
        return self._gather(x, n_global=n_global)
""", line=9),
        Bad("""
import torch
def other_label(n_classes: int, label: int, device):
    labels = list(range(n_classes))
    labels.remove(label)
    t = torch.randint(len(labels), (1,), device=device)  # one element, on the device
    return labels[t]  # a list's index is an int: `__index__` reads the tensor on the host
""", line=7),
        Bad("""
import torch
def keep_items(items, keep: torch.Tensor):
    if isinstance(items, list):
        return [items[i] for i in keep]  # iterating a tensor gives its elements as tensors
    return items[keep]
""", line=5),
        Bad("""
import torch
def wave_vectors(cell: torch.Tensor, ns: torch.Tensor):
    kx = ns[0] * torch.fft.fftfreq(ns[0], device=cell.device)  # `n` is a length, read on the host
    ky = torch.hann_window(ns[1], device=cell.device)
    return kx, ky
""", line=4, count=2),
    )
    good = (
        Good("""
import torch
def shrink(x: torch.Tensor, eps):
    e = eps if isinstance(eps, torch.Tensor) else x.new_full((1,), eps)  # a number on this side
    return x * e
"""),
        Good("""
import torch
def convert(img_batch: list[torch.Tensor]):  # annotated as a list where a tensor comes: its shape is host ints
    return torch.ones((img_batch.shape[0], 1), dtype=torch.int)
"""),
        Good("""
import torch
def forward(self, x):
    n = x.shape[0] // 2
    y = x[:n].view(n, -1).reshape(x.size(0) // 2, -1)
    return torch.arange(n, device=x.device), [i for i in range(x.size(1))], torch.zeros(n, 3)
"""),
        Good("""
import torch
def forward(self, x, idx, n, k):
    return x[idx], x[idx, 1:], x.view(torch.float32), x[:n].topk(k)  # indices, dtypes; n, k: int parameters
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    n = x.sum().cpu()
    return x[:n], torch.arange(n)  # a host tensor: nothing to wait for
"""),
        Good("""
import torch
def chunk(x: torch.Tensor, w: int):
    n = torch.div(x.size(1), w, rounding_mode="trunc")  # Python numbers in: a CPU tensor out
    return x.view(x.size(0), n, w)
"""),
        Good("""
import torch
from torch import nn
class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, 8, 4)
    def forward(self, x):
        h, height, width = self.patch_embed(x)  # a module's outputs: sizes as often as tensors
        return h.reshape(x.shape[0], height, width, -1)
"""),
        Good("""
import torch
def other_label(n_classes: int, label: int, scores: torch.Tensor):
    labels = list(range(n_classes))
    t = torch.randint(len(labels), (1,))  # made on the host: reading it waits for nothing
    return labels[t], labels[label], scores[scores.argmax()]  # (a tensor's 0-dim index: SYN302)
"""),
        Good("""
import torch
from . import backend as tl
def tensor_to_vec(tensor: torch.Tensor):  # `tl` is a module (its `reshape` takes the array first), not a tensor
    return tl.reshape(tensor, (-1,))
"""),
    )

    def visit_Subscript(self, node, ctx):
        # `l[t]` of a Python list (tuple, range, str): its index must be an int, which a tensor gives through
        # `__index__`, whatever its rank (one element, or it raises)
        sl = node.slice
        if not isinstance(sl, (ast.Slice, ast.Tuple, ast.Constant, ast.Starred)) and python_sequence(ctx, node.value) \
                and _size_tensor(ctx, sl):
            self._report(ctx, sl, "the index of a Python list")

    def visit_Slice(self, node, ctx):
        for b in (node.lower, node.upper, node.step):
            if b is not None and _size_tensor(ctx, b):
                self._report(ctx, b, "a slice bound")

    def visit_Call(self, node, ctx):
        b = is_builtin(ctx, node.func, "range")
        if b is not None:
            for a in node.args:
                if _size_tensor(ctx, a):
                    self._report(ctx, a, "`range()`")
            return
        q = ctx.call_name(node)
        if q is not None:
            spec = FUNCS.get(q)
            if spec is not None:
                self._check(ctx, node, node.args, spec, f"`{q}`")
            return
        f = node.func
        # (`self.expand(x)`: a layer; `tl.reshape(x, s)` with `from . import backend as tl`: a module's function)
        if isinstance(f, ast.Attribute) and f.attr in METHODS and not not_a_device_tensor(ctx, f.value) \
                and not (isinstance(f.value, ast.Name) and (f.value.id in ("self", "cls")
                                                            or f.value.id in ctx.file.imported_names)):
            self._check(ctx, node, node.args, METHODS[f.attr], f"`.{f.attr}()`")

    def _check(self, ctx, node, args, spec, what):
        positions, names = spec
        cands = []
        for i, a in enumerate(args):
            if isinstance(a, ast.Starred):
                break
            if positions == "*" or i in positions:
                cands.append(a)
        cands += [v for n in names if (v := kwarg(node, n)) is not None]
        for a in cands:
            for e in (a.elts if isinstance(a, (ast.Tuple, ast.List)) else [a]):
                if not isinstance(e, ast.Starred) and _size_tensor(ctx, e):
                    self._report(ctx, e, f"an argument of {what}")

    def _report(self, ctx, node, where):
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: a tensor used as {where} is read on the host "
                    "(`__index__`), which waits for all queued GPU work",
                    "use a host integer (a shape, a configured maximum) and keep data-dependent lengths as masks "
                    "(`torch.arange(L, device=d) < n`)")
