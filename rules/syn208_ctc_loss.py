import ast

from syncscan.lint.module import binding_key
from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.tree import statements

from ._util import not_a_device_tensor, short

FUNCS = ("torch.nn.functional.ctc_loss", "torch.ctc_loss")
MODULE = "torch.nn.CTCLoss"


def _ctc_modules(ctx) -> set[str]:
    """Names and `self.` attributes the file binds to `nn.CTCLoss(...)` (one walk per file)."""
    return ctx.file.get(_ctc_bound)


def _ctc_bound(file) -> set[str]:
    found: set[str] = set()
    for n in (statements(file.tree) if "CTCLoss" in file.source else ()):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and file.call_name(n.value) == MODULE:
            for t in n.targets:
                k = binding_key(t)
                if k is not None:
                    found.add(k)
    return found


class CtcLoss(Rule):
    code = "SYN208"
    name = "ctc-loss"
    summary = ("`F.ctc_loss(...)`, `torch.ctc_loss(...)` and calls of an `nn.CTCLoss()` on log-probabilities that "
               "may live on the GPU.")
    why = ("CTC sizes its work from the input and target lengths on the host. On CUDA it copies length tensors to "
           "the host (which waits for all queued GPU work), and its own kernel then copies the lengths and the "
           "per-sample target offsets back to the device with blocking copies, each waiting for the stream: "
           "several waits per call (8 per call measured on an H100 with CUDA lengths). cuDNN's variant reads the "
           "lengths on the host too, to check them.")
    rewrite = ("No argument makes the eager call sync-free. Call it once per batch, never per sample. To remove "
               "the waits, capture the step in a CUDA graph with cuDNN's CTC (blank 0, float32 log-probabilities, "
               "1-D concatenated int32 targets, int32 length tensors on the GPU): under capture it checks the "
               "lengths on the device instead of the host.")
    triggers = TORCH_CODE
    ops = ("aten::ctc_loss", "aten::_ctc_loss", "aten::_use_cudnn_ctc_loss", "aten::_cudnn_ctc_loss")
    rewrite_hint = ("call CTC once per batch; only a CUDA graph with cuDNN's CTC (int32 lengths on "
                    "the GPU) avoids its waits")
    # the same CTC without the host waits (under a CUDA graph): its work stays
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)
    bad = (
        Bad("""
import torch.nn.functional as F
def compute_loss(logits, labels, input_lengths, target_lengths):
    log_probs = logits.log_softmax(-1).transpose(0, 1)
    return F.ctc_loss(log_probs, labels, input_lengths, target_lengths, blank=0, zero_infinity=True)
""", line=5),
        Bad("""
import torch
class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ctc = torch.nn.CTCLoss(zero_infinity=True)
    def forward(self, log_probs, targets, in_len, tgt_len):
        return self.ctc(log_probs, targets, in_len, tgt_len)
""", line=8),
    )
    good = (
        Good("""
import torch
import torch.nn.functional as F
def check():
    lp = torch.randn(50, 2, 20).log_softmax(2)  # on the host: nothing to wait for
    return F.ctc_loss(lp, torch.randint(1, 20, (2, 10)), [50, 50], [10, 10])
"""),
        Good("""
import torch
def forward(self, log_probs, targets):
    return torch.nn.functional.nll_loss(log_probs, targets)
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        if q not in FUNCS:
            f = node.func
            key = f.id if isinstance(f, ast.Name) else ("self." + f.attr if isinstance(f, ast.Attribute)
                                                        and isinstance(f.value, ast.Name) and f.value.id == "self"
                                                        else None)
            if q is not None or key is None or key not in _ctc_modules(ctx):
                return
        if not node.args or not_a_device_tensor(ctx, node.args[0]):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: CTC reads the input and target lengths on the host and "
                    "copies them (and the target offsets) with blocking copies, each waiting for all queued GPU work",
                    "call it once per batch; only a CUDA graph with cuDNN's CTC (blank 0, float32, int32 targets and "
                    "lengths on the GPU) avoids the waits")
