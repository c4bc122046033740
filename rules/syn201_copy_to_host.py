import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, TENSOR

from ._consumer import host_consumer, inherent_copy_advice
from ._util import (device_kind, is_literal_true, kwarg, looks_like_model, method, not_a_device_tensor, short,
                    surely_tensor, to_target)

# legacy CPU tensor types: `.type(torch.FloatTensor)` copies to the host
_CPU_TYPES = frozenset({"FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
                        "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"})


# loggers that take a value to the host: method -> (position of the value, its keyword)
_LOGGED = {"add_scalar": (1, "scalar_value"), "add_scalars": (1, "tag_scalar_dict"), "add_histogram": (1, "values"),
           # (TensorBoard's image, video, audio and embedding writers take the tensor to numpy: `.cpu()` of it)
           "add_image": (1, "img_tensor"), "add_images": (1, "img_tensor"), "add_video": (1, "vid_tensor"),
           "add_audio": (1, "snd_tensor"), "add_embedding": (0, "mat"),
           "log": (0, "data"), "log_metric": (1, "value")}


def _may_be_device_tensor(ctx, recv) -> bool:
    """Known to be a tensor that may be on the GPU, or unknown and not named like a model."""
    k = ctx.kind(recv)
    if k == TENSOR:
        return True
    if k is not None or not_a_device_tensor(ctx, recv):
        return False
    return not looks_like_model(recv) and ctx.qualname(recv) is None


class CopyToHost(Rule):
    code = "SYN201"
    name = "copy-to-host"
    summary = ("A blocking copy from the GPU to the host: `.cpu()` (`.cpu().numpy()` counts once), `.to('cpu')`, "
               "`.to(torch.device('cpu'))`, `.numpy(force=True)`, `.type(torch.LongTensor)`, or a tensor handed to a "
               "metrics logger that reads it on the host (`writer.add_scalar(tag, loss)`, `writer.add_image(tag, grid)`, "
               "`wandb.log({...})`, "
               "`mlflow.log_metric`).")
    why = ("A device-to-host copy into ordinary (pageable) memory is synchronous: the CPU waits until every "
           "kernel queued before it has run and the copy is done, and the GPU then idles until the CPU queues "
           "new work.")
    rewrite = ("Copy less often and without blocking: keep results on the device across steps, then copy once "
               "with `.to('cpu', non_blocking=True)` (into pinned memory) and wait on an event just before the "
               "host reads the values; `.type(torch.long)` / `.long()` change the dtype on the device. Where host code "
               "needs the values every step (an environment's `step`, a scipy solver, a C extension), the copy "
               "per step is inherent unless that code moves to the GPU: make it one copy (stack the values) and "
               "start it early with `.to('cpu', non_blocking=True)`, overlapped with GPU work.")
    triggers = (".cpu(", ".numpy(", ".add_scalar", ".add_histogram(", ".add_image", ".add_video(", ".add_audio(",
                ".add_embedding(", "wandb.log(", "log_metric(", *TORCH_CODE)
    ops = ()
    copy_directions = ("DtoH",)
    rewrite_hint = "copy with .to('cpu', non_blocking=True) into pinned memory and wait on an event before reading"
    footprint = Footprint(ops=1)  # the value stays on the device: the op that used the host copy
    bad = (
        Bad("""
import torch
def first_widths(bins: list[torch.Tensor]):  # an annotation that says tensors: no guess about what comes
    out = torch.zeros(len(bins))
    for i, edges in enumerate(bins):
        out[i] = edges.diff()[0]
    return out
""", line=6),
        Bad("""
import torch
class PiecewiseLinear(torch.nn.Module):
    def __init__(self, bins: list[torch.Tensor]):  # a list of tensors, wherever the caller made them
        super().__init__()
        self.register_buffer("weight", torch.zeros(len(bins), 8))  # on the host until the module moves
        for i, edges in enumerate(bins):
            w = 1.0 / edges.diff()
            self.weight[i, : len(edges) - 1] = w  # a device tensor written into it: copied to the host
""", line=9),
        Bad("""
import torch
def pairwise_distance(a, b, device=torch.device("cpu")):
    a, b = a.to(device), b.to(device)  # the CPU: the loop below passes no device
    return ((a[:, None] - b[None]) ** 2).sum(-1)
def pairwise_cosine(a, b, device=torch.device("cpu")):
    return a.to(device) @ b.to(device).T
def kmeans(x, k, metric="euclidean", device=torch.device("cpu")):
    if metric == "euclidean":
        distance = pairwise_distance  # a local name for one of the module's functions, then called
    else:
        distance = pairwise_cosine
    x = x.float().to(device)
    centers = x[:k]
    for _ in range(10):
        centers = x[distance(x, centers).argmin(0)]
    return centers
""", line=4, count=4),
        Bad("""
import torch
def train(model, loader, opt):
    for x, y in loader:
        out = model(x)
        out.sum().backward()
        opt.step()
        preds = out.argmax(1).cpu().numpy()
""", line=8, suggests="keep it on the device"),
        Bad("""
import torch
from torch.utils.tensorboard import SummaryWriter
def train(model, loader, opt, criterion):
    writer = SummaryWriter()
    for step, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
        writer.add_scalar("loss", loss, global_step=step)
""", line=10),
        Bad("""
import torch
from torchvision.utils import make_grid
def write_images(recon: torch.Tensor, writer, step):
    grid = make_grid(recon.mul(0.5).add(0.5)[:6])
    writer.add_image("reconstructed", grid, step)  # make_np: a blocking .cpu() of the grid
""", line=6),
        Bad("""
def log_parameters(writer, model, step):
    for name, p in model.named_parameters():
        writer.add_histogram(f"params/{name}", p, global_step=step)  # every parameter copied to the host
""", line=4),
        Bad("""
import torch
import wandb
def train(model, loader, opt):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        wandb.log({"loss": loss, "lr": opt.param_groups[0]["lr"]})
""", line=9),
        Bad("""
import torch
def rollout(envs, policy, obs, steps):
    for _ in range(steps):
        action = policy(torch.as_tensor(obs, device="cuda")).argmax(1)
        obs, reward, done, trunc, info = envs.step(action.cpu().numpy())  # the environment runs on the host
""", line=6, suggests="`envs.step` runs on the host and needs these values every step"),
        Bad("""
import torch
from scipy.optimize import linear_sum_assignment
def match(outputs, sizes):
    cost = torch.cdist(outputs["a"], outputs["b"])
    cost = cost.view(len(sizes), -1, sum(sizes)).cpu()  # the solver below needs it on the host
    return [linear_sum_assignment(c[i]) for i, c in enumerate(cost.split(sizes, -1))]
""", line=6, suggests="one copy per step is inherent"),
        Bad("""
import numpy as np
import torch
def accuracy(real_aux, fake_aux, gt):
    pred = np.concatenate([real_aux.data.cpu().numpy(), fake_aux.data.cpu().numpy()], axis=0)
    return np.mean(np.argmax(pred, axis=1) == gt)
""", line=5, count=2, suggests="do it with torch ops on the device"),
        Bad("""
import torch
def forward(self, x):
    a = x.to("cpu")
    b = x.to(torch.device("cpu"))
    c = x.type(torch.LongTensor)
    return a, b, c, x.detach().numpy(force=True)
""", line=4, count=4),
        Bad("""
def compute_loss(pred, target):
    return pred.sum().to(device="cpu")
""", line=3),
        Bad("""
import torch
def forward(self, x):
    counts = torch.zeros(4, dtype=torch.long)  # on the host
    for i in range(4):
        counts[i] = (x == i).sum()  # a device tensor written into it: copied to the host
    return counts
""", line=6),
        Bad("""
import torch
from typing import Any, List, Tuple
def _device_dtype(values: List[Any]) -> Tuple[torch.device, torch.dtype]:
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    if not tensors:
        return torch.empty(0).device, torch.get_default_dtype()  # the CPU (the default device)
    return tensors[0].device, tensors[0].dtype
def forward(self, x):
    dev, dtype = _device_dtype([0.5, (1.0, 2.0)])  # handed no tensor: the CPU device
    return (x * 2).to(device=dev, dtype=dtype)
""", line=11),
        Bad("""
import torch
from .metric import Metric
class Accuracy(Metric):
    def __init__(self, device=torch.device("cpu")):
        super().__init__(device=device)  # the base keeps it as `self._device`: the CPU unless told otherwise
    def update(self, y_pred, y):
        self._num_correct += torch.sum(y_pred.argmax(1) == y).to(self._device)
""", line=8),
        Bad("""
import torch
def accuracy(output, target, topk=(1,)):
    _, pred = output.topk(max(topk), 1)
    correct = pred.eq(target.view(-1, 1))
    res = []
    for k in topk:
        res.append(correct[:, :k].float().sum() * 100.0 / target.size(0))
    return res  # a list of tensors
def log_step(writer, logits, labels, step):
    top1, top5 = accuracy(logits, labels, topk=(1, 5))
    writer.add_scalar("acc/top1", top1, step)
""", line=12),
        Bad("""
import torch
class Trajectory:
    def __init__(self, stamps, poses):
        self.poses = poses.to(torch.float64)
        self.stamps = stamps.to(poses.device)  # kept where the poses are: no copy to the host
    def __getitem__(self, i):
        return Trajectory(self.stamps[i], self.poses[i])
    def cuda(self):
        self.poses = self.poses.cuda()
        return self
    def cpu(self):  # moved to the host only when asked: the attribute is not surely a host tensor
        self.poses = self.poses.cpu()
        return self
""", line=13, count=1),
    )
    good = (
        Good("""
import numpy as np
def log_blank(writer, step):
    img = np.zeros((3, 8, 8))
    writer.add_image("blank", img, step)  # a numpy array: nothing to copy
"""),
        Good("""
import logging
import torch
def train(model, loader, opt, sched, writer, log):
    for step, (x, y) in enumerate(loader):
        loss = model(x, y)
        loss.backward()
        opt.step()
        writer.add_scalar("lr", sched.get_last_lr()[0], step)  # a Python float
        log.log(logging.INFO, "step %d", step)  # not wandb's
"""),
        Good("""
import torch
from typing import Any, List, Tuple
def _device_dtype(values: List[Any]) -> Tuple[torch.device, torch.dtype]:
    tensors = [v for v in values if isinstance(v, torch.Tensor)]
    if not tensors:
        return torch.empty(0).device, torch.get_default_dtype()
    return tensors[0].device, tensors[0].dtype
def forward(self, x, scale: torch.Tensor):
    dev, dtype = _device_dtype([scale, 0.5])  # the device of `scale`: not known here
    out_dtype = torch.promote_types(x.dtype, dtype)  # a dtype, not a host tensor
    return (x * scale).to(device=dev, dtype=dtype), x.to(out_dtype)
"""),
        Good("""
import torch
from .metric import Metric
class Accuracy(Metric):
    def __init__(self, device=torch.device("cpu")):
        super().__init__()
        self._device = device  # kept here: where the caller says
    def update(self, y_pred, y):
        self._num_correct += torch.sum(y_pred.argmax(1) == y).to(self._device)
"""),
        Good("""
import torch
def forward(self, x):
    a = x.to("cpu", non_blocking=True)  # into pinned memory: the host does not wait here
    return a, x.type(torch.long), x.long()
"""),
        Good("""
import torch
def f(model, x: torch.Tensor):
    model.cpu()
    self_net = model.to("cpu")
    c = x.to("cpu", non_blocking=True)
    return c.numpy(), c.cpu(), self_net
"""),
        Good("""
import numpy as np
def f(a, df):
    return np.asarray(a).copy(), df.to_numpy()
"""),
        Good("""
import torch
def forward(self, x):
    counts = torch.zeros(4, dtype=torch.long, device=x.device)
    for i in range(4):
        counts[i] = (x == i).sum()  # device to device
    return counts
"""),
    )

    def visit_Assign(self, node, ctx):
        """`host[i] = device_tensor`: the value is copied into host memory, a blocking copy."""
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Subscript):
            return
        t = node.targets[0]
        if ctx.kind(t.value) == CPU and surely_tensor(ctx, node.value):
            self.report(ctx, node, f"`{short(ctx, node)}` syncs: writing a device tensor into a host tensor copies it "
                        "to the host, a blocking copy that waits for all queued GPU work",
                        "make the destination on the device (`device=x.device`) and copy it to the host once, at the "
                        "end (`.cpu()`)")

    def visit_Call(self, node, ctx):
        f = node.func
        if not isinstance(f, ast.Attribute):
            return
        attr = f.attr
        recv = f.value
        if attr in _LOGGED:
            self._logged(ctx, node)
        elif attr == "cpu":
            if node.args or not _may_be_device_tensor(ctx, recv):
                return
            nxt = ctx.parent(node)
            then_numpy = isinstance(nxt, ast.Attribute) and nxt.attr == "numpy"
            self._report(ctx, node, "`.cpu()`" + (" (then `.numpy()`)" if then_numpy else ""))
        elif attr == "to":
            if ctx.call_name(node) is not None or is_literal_true(kwarg(node, "non_blocking")) or len(node.args) > 2:
                return
            if device_kind(ctx, to_target(ctx, node)) == "cpu" and _may_be_device_tensor(ctx, recv):
                self._report(ctx, node, "`.to('cpu')`")
        elif attr == "numpy":
            if is_literal_true(kwarg(node, "force")) and method(recv, "cpu") is None \
                    and _may_be_device_tensor(ctx, recv):
                self._report(ctx, node, "`.numpy(force=True)`")
        elif attr == "type" and len(node.args) == 1 and not node.keywords:
            a = node.args[0]
            q = ctx.qualname(a) or (a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else "")
            if q.startswith("torch.") and q.count(".") == 1 and q[6:] in _CPU_TYPES \
                    and _may_be_device_tensor(ctx, recv):
                self._report(ctx, node, f"`.type({short(ctx, a, 30)})`")

    def _logged(self, ctx, node):
        """`writer.add_scalar("loss", loss, step)`, `wandb.log({"loss": loss})`, `mlflow.log_metric("loss", loss)`:
        the logger takes the value to the host (`.cpu()` / `.item()`) where it is called."""
        attr = node.func.attr
        if attr == "log" and ctx.call_name(node) != "wandb.log" or attr == "log_metric" \
                and ctx.call_name(node) != "mlflow.log_metric":
            return
        pos, kw = _LOGGED[attr]
        v = node.args[pos] if len(node.args) > pos else kwarg(node, kw)
        if isinstance(v, ast.Dict):  # `add_scalars(tag, {"train": a, "val": b})`, `wandb.log({...})`
            v = next((x for x in v.values if surely_tensor(ctx, x)), None)
        if v is None or not surely_tensor(ctx, v):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: the logger copies the tensor `{short(ctx, v, 30)}` to the "
                    "host, a blocking copy that waits for all queued GPU work",
                    "log every N steps, or keep a running sum on the device and log `.item()` of it once per "
                    "interval; several values: one `torch.stack([...]).tolist()`")

    def _report(self, ctx, node, what):
        consumer = host_consumer(ctx, node)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: {what} is a blocking copy to the host, which waits for "
                    "all queued GPU work",
                    inherent_copy_advice(*consumer) if consumer else
                    "keep it on the device; if the host needs it, copy once for many steps with "
                    "`.to('cpu', non_blocking=True)` and read it after an event (`.long()` etc. for a dtype change)")
