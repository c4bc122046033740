import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, TENSOR

from ._util import device_kind, named_for_scheduler, not_a_device_tensor, short, surely_tensor

# Measured on an H100 (torch 2.11, benchmarks/op_sync.py, docs/data/op-sync-2026-11-26.txt): each of these reads
# the GPU on the host inside torch. `quantile` with a Python number, `cartesian_prod`, `coalesce`, `pad_sequence`,
# `masked_scatter_` and `ReduceLROnPlateau.step(float)` do not.
_QUANTILE = ("torch.quantile", "torch.nanquantile")
_PACK = ("torch.nn.utils.rnn.pack_padded_sequence",)
# unpacking a sequence packed unsorted reads the order back: `lengths[unsorted_indices.cpu()]` in torch's rnn.py
_UNPACK = "torch.nn.utils.rnn.pad_packed_sequence"
# (pack_padded_sequence: measured with enforce_sorted=False; sorted batches packed without a sync on the tuned set)
# the answer checked or sized on the host, whatever the arguments (the OpInfo sweep, benchmarks/opinfo_sync.py)
_ALWAYS = {
    "torch.cov": ("`cov` reads the weights' sum on the host to check the degrees of freedom",
                  "for unweighted rows: `xc = x - x.mean(1, keepdim=True)`, then `xc @ xc.mT / (n - 1)` (n known)"),
    "torch.corrcoef": ("`corrcoef` computes `cov`, which reads the weights' sum on the host",
                       "normalise `xc @ xc.mT` by the outer product of the rows' norms, on the device"),
    "torch.istft": ("`istft` checks on the host that the window's overlap-add envelope is non-zero",
                    "no sync-free variant: batch the signals into one call, outside the per-sample loop"),
    "torch.unravel_index": ("`unravel_index` checks on the host that the indices lie in the shape",
                            "`torch.div(i, w, rounding_mode='floor')` and `i % w` (per dimension)"),
    "torch.nn.functional.gaussian_nll_loss": ("`gaussian_nll_loss` checks on the host that no variance is "
                                              "negative (`torch.any(var < 0)`)",
                                              "`0.5 * (torch.log(var.clamp_min(eps)) + (input - target) ** 2 / "
                                              "var.clamp_min(eps))`, reduced as needed (no check)"),
}
_SPARSE = ("to_sparse", "to_sparse_csr", "to_sparse_csc", "to_sparse_coo", "to_sparse_bsr", "to_sparse_bsc")
# every qualified name this rule reads
_SPARSE_COO = ("torch.sparse_coo_tensor", "torch.sparse.FloatTensor")
_NAMES = frozenset({*_QUANTILE, *_PACK, _UNPACK, *_ALWAYS, *_SPARSE_COO, "torch.segment_reduce", "torch.combinations"})
# tensor methods this rule reads
_METHOD_NAMES = frozenset({"quantile", "nanquantile", "istft", *_SPARSE})


def _packs_unsorted(file) -> bool:
    """The module packs sequences with `enforce_sorted=False` (their PackedSequence carries `unsorted_indices`)."""
    return "enforce_sorted=False" in file.source


def _named_classes(file) -> frozenset[str]:
    """Which of the two classes this rule follows to their instances the file names at all."""
    return frozenset(c for c in ("ReduceLROnPlateau", "GaussianNLLLoss") if c in file.source)


class HostReadInTorchCall(Rule):
    code = "SYN411"
    name = "host-read-in-torch-call"
    summary = ("`torch.quantile` / `nanquantile` with a tensor `q`, `pack_padded_sequence(enforce_sorted=False)` "
               "and `pad_packed_sequence` of what it packed, "
               "`torch.combinations`, "
               "`torch.cov` / `corrcoef`, `istft`, `unravel_index`, `gaussian_nll_loss` (and `GaussianNLLLoss`), "
               "`segment_reduce(lengths=)`, `Tensor.to_sparse()`, `sparse_coo_tensor` of device indices without "
               "`size`, and `ReduceLROnPlateau.step(metric)` with a tensor metric.")
    why = ("Each reads device values on the host inside torch: `quantile` checks that a tensor `q` lies in [0, 1] "
           "(with a Python number the check is on the host value); `pack_padded_sequence(..., enforce_sorted=False)` "
           "sorts the host lengths and copies the order to the device from pageable memory, and `pad_packed_sequence` "
           "copies that order back to the host to reorder the lengths; `combinations` "
           "and `to_sparse` size their output from the data (a mask's count, the number of non-zeros), and "
           "`sparse_coo_tensor` without `size` takes it from the indices' maximum; "
           "`ReduceLROnPlateau.step` calls `float(metric)`.")
    rewrite = ("`torch.stack([torch.quantile(x, p) for p in (0.1, 0.9)])` (Python numbers); pack on the host in the "
               "DataLoader's `collate_fn` and move the `PackedSequence` with `.to(device, non_blocking=True)` from "
               "pinned memory, or run the RNN on the padded batch and mask the padded steps; "
               "`i, j = torch.triu_indices(n, n, 1, device=t.device)` then `torch.stack([t[i], t[j]], -1)` for "
               "`combinations`; `xc @ xc.mT / (n - 1)` for an unweighted `cov`; `torch.div(i, w, rounding_mode='floor')`, "
               "`i % w` for `unravel_index`; the Gaussian NLL written out with a clamped variance; `offsets=` for "
               "`segment_reduce`; build sparse tensors once, outside the step, and pass `sparse_coo_tensor` its "
               "`size`; hand `ReduceLROnPlateau.step` the "
               "host number the epoch's logging reads anyway.")
    fix_safety = "none"
    triggers = TORCH_CODE
    ops = ("aten::quantile", "aten::nanquantile", "aten::_pack_padded_sequence", "aten::combinations",
           "aten::to_sparse", "aten::_to_sparse", "aten::cov", "aten::corrcoef", "aten::istft", "aten::unravel_index",
           "aten::gaussian_nll_loss", "aten::segment_reduce", "aten::_segment_reduce", "aten::sparse_coo_tensor",
           "aten::_validate_sparse_coo_tensor_args")
    rewrite_hint = "Python-number quantiles; pack in collate_fn; triu_indices for combinations; sparse once"
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)  # the same work, without the read
    bad = (
        Bad("""
import torch
def select_rows(matrix, rows):
    idx = torch.stack([torch.arange(len(rows), device=matrix.device), rows], 0)
    eye = torch.sparse_coo_tensor(idx, torch.ones(len(rows)), size=(len(rows), matrix.shape[0]), device=matrix.device)
    return torch.sparse.mm(eye, matrix)
""", line=5),
        Bad("""
import torch
def orthogonalize(matrix, rows):
    idx = torch.stack([torch.arange(len(rows), device=matrix.device), rows], 0)
    sel = torch.sparse_coo_tensor(idx, torch.ones_like(rows), dtype=matrix.dtype, device=matrix.device)
    diag = torch.arange(matrix.shape[0])
    keep = torch.sparse_coo_tensor(torch.stack([diag] * 2, 0), torch.ones(matrix.shape[0]), size=matrix.shape,
                                   device=matrix.device)
    return torch.sparse.mm(keep, matrix) + torch.sparse.mm(sel, matrix)
""", line=5, count=2),
        Bad("""
import torch
def forward(self, scores):
    lo, hi = torch.quantile(scores, torch.tensor([0.05, 0.95], device=scores.device))
    return scores.clamp(lo, hi)
""", line=4),
        Bad("""
import torch
from torch.nn.utils.rnn import pack_padded_sequence
def forward(self, x: torch.Tensor, lengths):
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    return self.rnn(packed)
""", line=5),
        Bad("""
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
class Encoder(torch.nn.Module):
    def forward(self, x, lengths):
        packed = pack_padded_sequence(x, lengths, enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, out_lengths = pad_packed_sequence(out)  # the original order is read back to the host (line 8)
        return out
""", line=6, count=2),
        Bad("""
import torch
def forward(self, emb: torch.Tensor):
    pairs = torch.combinations(torch.arange(emb.size(0), device=emb.device))
    return emb[pairs[:, 0]] * emb[pairs[:, 1]]
""", line=4),
        Bad("""
import torch
def forward(self, adj: torch.Tensor, x):
    return torch.sparse.mm(adj.to_sparse(), x)
""", line=4),
        Bad("""
import torch
from torch.optim.lr_scheduler import ReduceLROnPlateau
scheduler = ReduceLROnPlateau(optimizer)
for epoch in range(10):
    val_loss = torch.stack([criterion(model(x), y) for x, y in val_loader]).mean()
    scheduler.step(val_loss)
""", line=7),
        Bad("""
import torch
def fit(model, loader, val_loader, criterion, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            criterion(model(x), y).backward()
            optimizer.step()
        val_loss = torch.stack([criterion(model(x), y) for x, y in val_loader]).mean()
        scheduler.step(val_loss)  # a tensor: the scheduler is a ReduceLROnPlateau, whatever was handed in
""", line=9),
        Bad("""
import torch
import torch.nn.functional as F
def loss(mu: torch.Tensor, var: torch.Tensor, y):
    whitened = torch.cov(mu.T)
    return F.gaussian_nll_loss(mu, y, var) + whitened.trace()
""", line=5, count=2),
        Bad("""
import torch
def forward(self, heat: torch.Tensor):
    return torch.unravel_index(heat.flatten(1).argmax(1), heat.shape[-2:])
""", line=4),
    )
    good = (
        Good("""
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
class Encoder(torch.nn.Module):
    def forward(self, x, lengths):  # the batch sorted by length in the collate_fn
        out, _ = self.rnn(pack_padded_sequence(x, lengths))
        out, _ = pad_packed_sequence(out)  # packed sorted: no order to read back
        return out
"""),
        Good("""
import torch
def orthogonalize(matrix, rows):
    idx = torch.stack([torch.arange(len(rows), device=matrix.device), rows], 0)
    sel = torch.sparse_coo_tensor(idx, torch.ones_like(rows), size=matrix.shape, device=matrix.device)
    return torch.sparse.mm(sel, matrix)
"""),
        Good("""
import torch
def fit(model, loader, criterion, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        for x, y in loader:
            criterion(model(x), y).backward()
            optimizer.step()
        scheduler.step(epoch)  # an int: any scheduler's epoch
"""),
        Good("""
import torch
import numpy as np
def forward(self, x: torch.Tensor, var: torch.Tensor, target):
    xc = x - x.mean(1, keepdim=True)
    nll = 0.5 * (torch.log(var.clamp_min(1e-6)) + (x - target) ** 2 / var.clamp_min(1e-6))
    return xc @ xc.mT / (x.size(1) - 1), nll.mean(), np.cov(np.ones((2, 3)))
"""),
        Good("""
import torch
def forward(self, scores):
    return torch.quantile(scores, 0.5), scores.quantile(0.9), torch.cartesian_prod(scores[:3], scores[:3])
"""),
        Good("""
import torch
from torch.optim.lr_scheduler import ReduceLROnPlateau
scheduler = ReduceLROnPlateau(optimizer)
for epoch in range(10):
    val_loss = sum(criterion(model(x), y).item() for x, y in val_loader)
    scheduler.step(val_loss)  # a Python number
"""),
        Good("""
import torch
w = torch.randn(4, 4)
s = w.to_sparse()  # a CPU tensor
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        f = node.func
        if q is None:
            attr = f.attr if f.__class__ is ast.Attribute else None  # type: ignore[union-attr]
            if attr in _METHOD_NAMES:
                self._method(node, ctx, attr)
            elif ctx.file.get(_named_classes):  # (most files name neither class: no instance lookups there)
                self._instance(node, ctx, attr)
            if attr == "step" and len(node.args) == 1 and not node.keywords:
                self._scheduler_metric(node, ctx)
            return
        if q not in _NAMES:  # (one set lookup for most calls: every rule's handler sees every call)
            return
        if q in _QUANTILE:
            qa = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "q"), None)
            x = node.args[0] if node.args else None
            if qa is None or x is None or not surely_tensor(ctx, qa) or not_a_device_tensor(ctx, x):
                return
            self._quantile(node, ctx, q)
        elif q in _PACK:
            x = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "input"), None)
            srt = next((k.value for k in node.keywords if k.arg == "enforce_sorted"), None)
            if len(node.args) > 3:
                srt = node.args[3]
            # (sorted batches, the default, pack without a copy: tacotron2's did not sync on the tuned set)
            if x is None or not (isinstance(srt, ast.Constant) and srt.value is False) or not_a_device_tensor(ctx, x):
                return
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: with `enforce_sorted=False` the sort order is made "
                        "on the host (the lengths must be there) and copied to the device from pageable memory",
                        "pack on the host in the DataLoader's `collate_fn` and move the `PackedSequence` with "
                        "`.to(device, non_blocking=True)` (pinned), or run the RNN on the padded batch and mask it")
        elif q == _UNPACK:
            x = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "sequence"), None)
            # (a sequence packed sorted, the default, has no order to read back)
            if x is None or not ctx.file.get(_packs_unsorted) or not_a_device_tensor(ctx, x):
                return
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: a sequence packed with `enforce_sorted=False` is "
                        "unpacked in its original order, `lengths[unsorted_indices.cpu()]`, a blocking copy of the "
                        "order to the host",
                        "keep the lengths from the packing on the host (the collate_fn's list) and do not read them "
                        "back: `x, _ = pad_packed_sequence(...)`, or sort the batch by length once in the collate_fn "
                        "and pack with `enforce_sorted=True`")
        elif q in _ALWAYS:
            x = node.args[0] if node.args else None
            if x is None or isinstance(x, ast.Starred) or not_a_device_tensor(ctx, x):
                return
            why, how = _ALWAYS[q]
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: {why}", how)
        elif q == "torch.segment_reduce" and any(k.arg == "lengths" for k in node.keywords):
            x = node.args[0] if node.args else None
            if x is None or not_a_device_tensor(ctx, x):
                return
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: with `lengths=` the segments are laid out on the "
                        "host", "pass `offsets=` computed on the device (`torch.cumsum` of the lengths, a leading 0)")
        elif q in _SPARSE_COO:
            self._sparse_coo(node, ctx)
        elif q == "torch.combinations":
            x = node.args[0] if node.args else None
            if x is None or not_a_device_tensor(ctx, x):
                return
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: the pairs are picked with a mask whose count sizes "
                        "the output, read on the host",
                        "with n = len(t) known on the host: `i, j = torch.triu_indices(n, n, 1, device=t.device)`, "
                        "then `torch.stack([t[i], t[j]], -1)`")

    def _sparse_coo(self, node, ctx) -> None:
        """`torch.sparse_coo_tensor(indices, values)` of device indices without `size` (the size is the indices'
        maximum, read on the host), with `check_invariants=True` (checked there), or of host indices built on the
        device (`device=`: a copy from pageable memory). Measured: docs/data/op-sync-2026-11-27.txt."""
        args = node.args
        kw = {k.arg: k.value for k in node.keywords}
        idx = args[0] if args else kw.get("indices")
        if idx is None or isinstance(idx, ast.Starred) or "values" not in kw and len(args) < 2:
            return
        sized = len(args) > 2 or kw.get("size") is not None
        checked = kw.get("check_invariants")
        on_device = ctx.kind(idx) == TENSOR and not not_a_device_tensor(ctx, idx)
        if on_device and isinstance(checked, ast.Constant) and checked.value is True:
            why, how = "`check_invariants=True` checks the indices against the size on the host", \
                "leave the check off in the step (check once, on a sample, in a test)"
        elif on_device and not sized:
            why, how = "without `size` the size is the indices' maximum, read on the host", \
                "pass `size=` (the dense shape, known on the host)"
        elif (d := kw.get("device")) is not None and device_kind(ctx, d) == "device" and (
                ctx.kind(idx) == CPU or ctx.kind(vals := args[1] if len(args) > 1 else kw.get("values")) == CPU
                and not isinstance(vals, ast.Starred)):
            what = "indices" if ctx.kind(idx) == CPU else "values"
            why, how = f"the host {what} are copied to the device from pageable memory", \
                f"build the {what} on the device (`torch.arange(n, device=...)`, `torch.ones(n, device=...)`), " \
                "or once, outside the step"
        else:
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: {why}", how)

    def _quantile(self, node, ctx, fn: str) -> None:
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `{fn.rsplit('.', 1)[-1]}` with a tensor `q` checks "
                    "on the host that it lies in [0, 1]",
                    "pass each quantile as a Python number and stack the results: "
                    "`torch.stack([torch.quantile(x, p) for p in (0.1, 0.9)])`")

    def _method(self, node, ctx, attr: str) -> None:
        """`x.quantile(q)`, `x.istft(...)`, `x.to_sparse()` on a tensor."""
        x = node.func.value
        if ctx.kind(x) != TENSOR:
            return
        if attr in ("quantile", "nanquantile"):
            qa = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "q"), None)
            if qa is not None and surely_tensor(ctx, qa) and surely_tensor(ctx, x):
                self._quantile(node, ctx, attr)
        elif attr == "istft":
            why, how = _ALWAYS["torch.istft"]
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: {why}", how)
        elif surely_tensor(ctx, x):
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: the number of non-zeros sizes the sparse tensor, read "
                        "on the host", "build the sparse tensor once, outside the step (or keep it dense)")

    def _scheduler_metric(self, node, ctx) -> None:
        """`scheduler.step(val_loss)` with a tensor, the scheduler's class out of sight (a parameter, an attribute):
        of torch's schedulers only `ReduceLROnPlateau.step` takes a metric (the others' optional `epoch` is an int),
        so a tensor handed to a `step` of something named for a scheduler is one (low confidence)."""
        recv = node.func.value
        if not named_for_scheduler(recv) or ctx.kind(recv) is not None or ctx._instance_class(recv) is not None \
                or not surely_tensor(ctx, node.args[0]):
            return  # (a class in sight: `_instance`'s)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: a scheduler's `step` handed a tensor is "
                    "`ReduceLROnPlateau.step`, which calls `float()` on the metric", "hand it the host number the "
                    "epoch's logging reads anyway (one read, not two), or read the metric only where the host needs "
                    "it", confidence="low")

    def _instance(self, node, ctx, attr: str | None) -> None:
        """`scheduler.step(val_loss)` on a `ReduceLROnPlateau`, `criterion(mu, y, var)` on a `GaussianNLLLoss`."""
        if attr == "step" and len(node.args) == 1 and not node.keywords \
                and ctx._instance_class(node.func.value) == "ReduceLROnPlateau" and surely_tensor(ctx, node.args[0]):
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: `ReduceLROnPlateau.step` calls `float()` on the "
                        "tensor metric", "hand it the host number the epoch's logging reads anyway (one read, "
                        "not two), or read the metric only where the host needs it")
        elif node.args and ctx._instance_class(node.func) == "GaussianNLLLoss" \
                and not not_a_device_tensor(ctx, node.args[0]):
            why, how = _ALWAYS["torch.nn.functional.gaussian_nll_loss"]
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: {why}", how)
