import ast
import re

from syncscan.lint.imports import dotted
from syncscan.lint.tree import param_defaults
from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, LOADER, OTHER, TENSOR

from ._host_copy import (_MODELISH, blocking_copy, cache_undone, caches_itself, class_attribute_copy,
                         drawn_from_host_object, made_from_host_values, mover_param, named_mover, zero_size)
from ._util import (_last_store, add_keyword, device_kind, end_pos, flow, hidden_keywords, is_literal_true, kwarg,
                    last_assign, loader_pinned, made_on_device, pos, short, statement_of, tensor_type_device, to_target)



def _load_target(ctx, node: ast.Call):
    """The device `torch.load(f, map_location=...)` restores a checkpoint's tensors to, when it names one."""
    if ctx.call_name(node) not in ("torch.load", "torch.serialization.load"):
        return None
    where = kwarg(node, "map_location") or (node.args[1] if len(node.args) > 1 else None)
    return where if where is not None and device_kind(ctx, where) == "device" else None


def _targets(t: ast.AST):
    if isinstance(t, ast.Name):
        yield t
    elif isinstance(t, (ast.Tuple, ast.List)):
        for e in t.elts:
            yield from _targets(e.value if isinstance(e, ast.Starred) else e)


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Subscript, ast.Attribute)):
        node = node.value
    return node


# tensor methods whose result stays where the tensor is (views, dtype changes, copies on the same device); those
# in _HOST_COPIES make a new tensor, in pageable memory whatever the loader pinned
_HOST_COPIES = frozenset({"clone", "contiguous", "float", "double", "half", "long", "int", "bool", "bfloat16"})
_SAME_PLACE = _HOST_COPIES | {"view", "reshape", "unsqueeze", "squeeze", "flatten", "permute", "transpose", "detach"}


def host_root(node: ast.AST) -> tuple[ast.AST, bool]:
    """The value `node` reads or derives on the same device (`batch["x"]`, `label.clone()`, `x[0].float()`), and
    whether a method on the way made a new tensor (in pageable memory)."""
    copied = False
    while True:
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _SAME_PLACE and not node.keywords \
                and (not node.args or node.func.attr not in _HOST_COPIES):
            copied = copied or node.func.attr in _HOST_COPIES
            node = node.func.value
        else:
            return node, copied


def _pinned_cpu(ctx, recv: ast.AST) -> bool:
    """`x.pin_memory()`, or a name last assigned one (or a factory with `pin_memory=True`)."""
    v = recv
    if isinstance(recv, ast.Name):
        a = last_assign(ctx, recv.id, recv)
        v = a.value if a is not None else recv
    if isinstance(v, ast.Call):
        if isinstance(v.func, ast.Attribute) and v.func.attr == "pin_memory":
            return True
        return is_literal_true(kwarg(v, "pin_memory"))
    return False


class UnpinnedCopyToDevice(Rule):
    code = "SYN204"
    name = "unpinned-copy-to-device"
    summary = ("A host tensor (a DataLoader batch, a CPU tensor, a tensor a helper made from Python numbers) copied "
               "to the GPU with `.to(device)` / `.cuda()` / `.type_as(gpu_tensor)` / `.type(torch.cuda.FloatTensor)` "
               "without `non_blocking=True`, or with `non_blocking=True` from memory that is not pinned; or written "
               "into a tensor made on the GPU (`gain[2:6] = torch.tensor(shape)`); or a checkpoint loaded with "
               "`torch.load(f, map_location=device)`. With low confidence, `.to(device)` of data whose place the "
               "linter cannot tell (an environment's observations, a storage read back): a copy when it is on the host.")
    why = ("A blocking host-to-device copy makes the CPU wait until the stream has run everything queued before "
           "it and the copy is done, so the CPU cannot queue the next step's work while the GPU computes. From "
           "pageable (not pinned) memory even `non_blocking=True` blocks: the driver stages the data "
           "synchronously (and the sync debug mode does not report it).")
    rewrite = ("`DataLoader(..., pin_memory=True)` and `batch.to(device, non_blocking=True)`; for other host "
               "tensors, `t.pin_memory().to(device, non_blocking=True)`, or build them on the device; load "
               "checkpoints once, before the loop.")
    fix_safety = "safe"
    triggers = (".to(", *TORCH_CODE)  # `batch.to(device)` in a helper file that names nothing else
    ops = ()
    copy_directions = ("HtoD",)
    rewrite_hint = "pin the host tensor (pin_memory()) and copy with .to(dev, non_blocking=True)"
    footprint = Footprint(ops=1, keeps_gpu_work=True)  # a pinned non_blocking copy: the copy stays
    bad = (
        Bad("""
import torch
def main(dataset, model, opt, device):
    for batch in dataset.train:  # a training step's loop: what it iterates is a loader, probably
        inputs, targets = (b.to(device) for b in batch)
        model(inputs).sum().backward()
        opt.step()
""", line=5),
        Bad("""
import torch
def expand_param(param, n: int) -> torch.Tensor:
    if isinstance(param, (int, float)):
        return torch.tensor([param] * n).float()  # a number: made on the host
    if not torch.is_tensor(param):
        param = torch.tensor(param)
    else:
        param = param.clone()
    return param
def scale_matrix(scale, n, device):
    return expand_param(scale, n).to(device=device)  # low confidence: a device tensor handed in moves nothing
""", line=12),
        Bad("""
import torch
class Sampler:
    def __init__(self, steps: int = 64, device: torch.device | None = None):
        self.steps = steps
        self.device = device  # None unless a caller gives one
    @property
    def timesteps(self):
        return torch.linspace(1, 0, self.steps + 1, device=self.device)  # the default device: the host
    def __call__(self, x):
        return self.timesteps.to(device=x.device)  # low confidence: a caller may have given a device
""", line=11),
        Bad("""
import torch
class GraphNet(torch.nn.Module):
    def pool(self, idx, n):
        elem = torch.ones(idx.shape[1])
        adj = torch.sparse.FloatTensor(idx, elem, torch.Size([n, n]))  # the legacy constructor: a host tensor
        return adj.to(self.device)
""", line=7),
        Bad("""
from collections.abc import Mapping, Sequence
import torch
class Preprocessor(torch.nn.Module):
    def __init__(self, non_blocking=False):
        super().__init__()
        self._non_blocking = non_blocking
    def cast_data(self, data):  # walks a nested batch down to its tensors, whatever its name says
        if isinstance(data, Mapping):
            return {key: self.cast_data(data[key]) for key in data}
        elif isinstance(data, Sequence):
            return type(data)(self.cast_data(sample) for sample in data)
        elif isinstance(data, torch.Tensor):
            return data.to(self.device, non_blocking=self._non_blocking)  # blocking unless built otherwise
        return data
""", line=14),
        Bad("""
import torch
def orthogonal_chunk(cols, device=None):
    block = torch.randn((cols, cols), device=device)
    q, r = torch.linalg.qr(block.cpu(), mode="reduced")
    q, r = map(lambda t: t.to(device), (q, r))  # each of the host pair
    return q.t()
""", line=6, count=1),
        Bad("""
import numpy as np
import torch
class Executor(torch.nn.Module):
    def forward(self, *inputs):
        outputs = []
        for i in range(len(inputs)):
            x = inputs[i]
            if isinstance(x, np.ndarray):
                x = torch.from_numpy(x)  # on the host on this path
            if x.dtype == torch.float64:
                x = x.float()
            outputs.append(x.to(self.device))
        return outputs
""", line=13),
        Bad("""
import torch
import tqdm
def fit(dl: torch.utils.data.DataLoader, feature_extractor, num_batches, device):
    outputs = []
    for i, b in tqdm.tqdm(zip(range(num_batches), dl), total=num_batches):  # a loader zipped with a counter
        outputs.append(feature_extractor(b.to(device)))
    return torch.cat(outputs)
""", line=7),
        Bad("""
import torch
class Mahalanobis:
    def __init__(self, device="cuda"):
        self.device = device
    def fit_features(self, z, y):
        z = z.detach().to(self.device)  # what the users hand in: a host tensor is a blocking copy (low confidence)
        return z.mean(0), y
""", line=7),
        Bad("""
import torch
def separate(X, n_src, n_iter):
    W = X.new_zeros(X.shape[:-2] + (n_src, X.shape[-2]))  # where X is
    W[:] = torch.eye(n_src, X.shape[-2])  # a host identity copied in, each call
    return W
""", line=5),
        Bad("""
import torch
def run_graph(x_or_z, c=None):
    if torch.is_tensor(x_or_z):
        x_or_z = x_or_z,  # a tuple of tensors from here on, whatever was handed in
    log_jac = torch.zeros(x_or_z[0].shape[0]).to(x_or_z[0])
    return log_jac
""", line=6),
        Bad("""
import torch
def grid(n: int, loc):
    return torch.linspace(0, 1, n).to(device=loc)  # the keyword says a device, whatever the name
""", line=4),
        Bad("""
import torch
def apply_to_tensors(obj, fn):
    if isinstance(obj, (list, tuple)):
        return type(obj)(apply_to_tensors(o, fn) for o in obj)
    return fn(obj)
def move_to_device(batch, device):
    return apply_to_tensors(batch, lambda t: t.to(device))  # each tensor of the batch it moves
""", line=8),
        Bad("""
import torch
def train(model, loader, opt, device):
    for x, label in loader:
        target = label[torch.randperm(label.size(0))].clone()  # derived from the batch, still on the host
        model(x.to(device), target.to(device)).backward()
        opt.step()
""", line=6, count=2),
        Bad("""
import torch
@torch.no_grad()
def extract_features(data_loader, model, device):
    for batch in data_loader:
        x, y = batch  # unpacked from the loader's batch: host tensors
        x = x.to(device)
        model(x)
""", line=7),
        Bad("""
import torch
from torch.utils.data import DataLoader
def train(model, dataset, opt, device):
    loader = DataLoader(dataset, batch_size=32, pin_memory=True)
    for x, y in loader:
        x = x.to(device)
        y = y.to(device)
        model(x, y).backward()
        opt.step()
""", line=7, count=2, fixed="""
import torch
from torch.utils.data import DataLoader
def train(model, dataset, opt, device):
    loader = DataLoader(dataset, batch_size=32, pin_memory=True)
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        y = y.to(device, non_blocking=True)
        model(x, y).backward()
        opt.step()
"""),
        Bad("""
import numpy as np
import torch
def forward(self, x):
    w = torch.from_numpy(np.ones(3)).to(x.device, non_blocking=True)
    return x * w
""", line=5),
        Bad("""
import torch
def train(model, train_loader, opt):
    for step, batch in enumerate(train_loader):
        batch = {k: v.cuda() for k, v in batch.items()}
        model(**batch).loss.backward()
        opt.step()
""", line=5),
        Bad("""
import torch
def train(model, loader, opt):
    it = iter(loader)
    images, labels = next(it)
    images = images.cuda()
    return model(images)
""", line=6),
        Bad("""
import torch
class Embed(torch.nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.table = torch.zeros(n, d)  # a plain attribute: it stays on the host
    def forward(self, x):
        return x + self.table.type_as(x)
""", line=8),
        Bad("""
import torch
def ramp(logits, n: int):
    return torch.linspace(0, 1, n).type_as(logits)  # `type_as` takes a tensor: on the GPU, where there is one
""", line=4),
        Bad("""
import torch
from .grids import make_grid
def forward(self, feats):
    b, _, h, w = feats.shape
    return make_grid(b, h, w).to(feats.device)  # made on the host from Python numbers
""", line=6),
        Bad("""
import torch
from .solvers import solve
def refine(points):
    origin = points.device
    host = solve(points).detach().cpu()  # only a tensor has `detach`: a host tensor
    host = torch.linalg.eigh(host @ host.T).eigenvectors
    return host.to(origin)  # `origin` holds `points.device`: back to the GPU, blocking
""", line=8),
        Bad("""
import torch
def _top(X, scores, k=4):
    idx = torch.randperm(X.shape[0], device=X.device)[:k]  # on X's device
    return X[idx], scores[idx]
def _first(X, scores, k=4):
    return X[:k], scores[:k]
def initial_points(bounds, n, largest, **options):
    if largest:
        pick = _top
    else:
        pick = _first
    X = torch.rand(n, bounds.shape[-1])  # drawn on the host
    points, _ = pick(X=X, scores=torch.rand(n), **options)  # either function gives host tensors for them
    return points.to(device=bounds.device)
""", line=15),
        Bad("""
import torch
class Evaluator:
    def __init__(self, n):
        self.ranks = torch.empty(n).long()
    def evaluate(self, model, batches):
        self.ranks = self.ranks.cuda()
        for i, (h, t) in enumerate(batches):
            self.ranks[i] = model(h, t).argmax()
        self.ranks = self.ranks.cpu()  # back on the host: the next call copies it again
        return self.ranks
""", line=7),
        Bad("""
class Triples:
    def __init__(self, kg, use_cuda=False):
        self.heads = kg.head_idx
        if use_cuda:
            self.heads = self.heads.cuda()  # bound just above: each instance copies
""", line=6),
        Bad("""
import torch
def train(model, loader, opt, device):
    for images, _ in loader:
        images = torch.cat(images, dim=0)  # two views of each image, joined on the host
        images = images.to(device)
        model(images).sum().backward()
        opt.step()
""", line=6),
        Bad("""
import torch
class SmoothNoise:
    def __init__(self, std=0.3):
        self.std = std
        self._distrib = torch.distributions.Normal(0, self.std)
    def __call__(self, x):
        noise = self._distrib.sample(x.size()).to(device=x.device)  # drawn on the host, then copied
        return x + noise
""", line=8),
        Bad("""
def copy_data_to_device(data, device, *args, **kwargs):
    if isinstance(data, (list, tuple)):
        return type(data)(copy_data_to_device(e, device, *args, **kwargs) for e in data)
    return data.to(device, *args, **kwargs)  # blocking unless a caller passes non_blocking=True
""", line=5),
        Bad("""
import torch
def rope_frequencies(dim, base=10000.0, device=None):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2) / dim))  # made on the host
    return inv_freq.to(device)  # a copy for callers that pass a device (low confidence: None moves nothing)
""", line=5),
        Bad("""
def send_to_device(batch, device, non_blocking=False):
    return batch.to(device, non_blocking=non_blocking)
""", line=3),
        Bad("""
from typing import Any
from torch import Tensor, device
def batch_to_device(batch: dict[str, Any], target_device: device) -> dict[str, Any]:
    for key in batch:
        if isinstance(batch[key], Tensor):
            batch[key] = batch[key].to(target_device)  # a tokenizer's or a collate's host tensors
    return batch
""", line=7),
        Bad("""
import torch
def pad(batch: torch.Tensor, n: int):
    return torch.nn.functional.pad(batch, (0, n))
def send_to_device(batch, device, non_blocking=False):  # `batch` is only probably a tensor here
    return batch.to(device, non_blocking=non_blocking)
""", line=6),
        Bad("""
import torch
from torch.utils.data import DataLoader
Tensor = torch.cuda.FloatTensor if torch.cuda.is_available() else torch.FloatTensor
def train(model, dataset, opt):
    for imgs, _ in DataLoader(dataset, batch_size=8):
        real = imgs.type(Tensor)  # a legacy CUDA tensor type: a blocking copy to the GPU
        model(real).mean().backward()
        opt.step()
""", line=7),
        Bad("""
import torch
from torch.utils.data import DataLoader
def train(model, dataset, opt, device):
    for batch in DataLoader(dataset, batch_size=8):
        images, masks = batch["image"], batch["mask"]  # parts of the batch are the batch's host tensors
        images = images.to(device=device, dtype=torch.float32)
        model(images, masks).backward()
        opt.step()
""", line=7),
        Bad("""
from tqdm import tqdm
def train(model, train_loader, opt, device):
    pbar = enumerate(train_loader)
    pbar = tqdm(pbar, total=len(train_loader))  # wrapped again: still the loader's batches
    for i, (imgs, targets) in pbar:
        targets = [{k: v.to(device) for k, v in t.items()} for t in targets]
        model(imgs, targets).backward()
        opt.step()
""", line=7),
        Bad("""
import torch
def compute_loss(preds, targets, device):
    gain = torch.ones(7, device=device)
    for p in preds:
        gain[2:6] = torch.tensor(p.shape)[[3, 2, 3, 2]]  # a host tensor written into a device tensor
        targets = targets * gain
    return targets
""", line=6),
        Bad("""
import torch
def scores(X, table):
    tkwargs = dict(device=X.device, dtype=X.dtype)
    host = torch.as_tensor(table)
    return X * host.to(**tkwargs)  # the keywords carry X's device
""", line=6),
        Bad("""
import torch
def tridiag_to_diag(t_mat):
    orig_device = t_mat.device
    if t_mat.size(-1) < 32:
        retr = torch.linalg.eigh(t_mat.cpu())  # small: on the host
    else:
        retr = torch.linalg.eigh(t_mat)
    evals, evecs = retr
    evals = evals.masked_fill_(evals < 0, 1)
    return evals.to(orig_device), evecs.to(orig_device)  # back from the host on the first path
""", line=11, count=2),
        Bad("""
import torch
class Solver:
    mid: torch.Tensor  # each subclass's body sets it: a tensor made when the class is defined
    def __init__(self, y0):
        self.mid = self.mid.to(device=y0.device, dtype=y0.dtype)  # every solver copies it again
class Dopri5(Solver):
    mid = torch.tensor([0.1, 0.2, 0.7], dtype=torch.float64)
""", line=6),
        Bad("""
import torch
from torch.quasirandom import SobolEngine
def sobol_samples(d: int, n: int, device=None, dtype=None, seed: int = 0):
    engine = SobolEngine(d, scramble=True, seed=seed)  # built from Python values: on the host
    samples = engine.draw(n, dtype=dtype)
    return samples.to(device=device)
""", line=7),
        Bad("""
import torch
class Trainer:
    def fit(self, train_loader):
        for X, y in train_loader:
            self._train_batch(X, y)
    def _train_batch(self, X, y):
        X = X.to(self.device).float()  # every call of it hands in the loader's batch
        self.network(X, y).backward()
""", line=8),
        Bad("""
import torch
class Attack:
    def __init__(self):
        self.norm = None
    def set_norm(self, mean, std):
        self.norm = {}
        self.norm["mean"] = torch.tensor(mean).reshape(1, -1, 1, 1)  # host tensors, kept in a dict
        self.norm["std"] = torch.tensor(std).reshape(1, -1, 1, 1)
    def normalize(self, x):
        return (x - self.norm["mean"].to(x.device)) / self.norm["std"].to(x.device)
""", line=11, count=2),
        Bad("""
import torch
from data_utils import Corpus
device = torch.device("cuda")
corpus = Corpus()
ids = corpus.get_data("train.txt", 20)  # an object built from Python values gives host data
for i in range(0, ids.size(1) - 30, 30):
    inputs = ids[:, i:i + 30].to(device)  # a part of it: still on the host
"""),
        Bad("""
import torch
from torch.utils.data import DataLoader
class InfiniteLoader:  # a wrapper whose every return hands on a batch of its loader
    def __init__(self, dataset, **kwargs):
        self.data_iter = iter(DataLoader(dataset, **kwargs))
    def next(self):
        return next(self.data_iter)
loader = InfiniteLoader(dataset, batch_size=32)
for step in range(1000):
    batch = loader.next()
    batch = [t.to("cuda") for t in batch]
"""),
        Bad("""
class BatchIter:
    def __next__(self):
        i = self.current
        h = self.heads[i * self.bs:(i + 1) * self.bs]
        return h.cuda()  # `.cuda()` is written for host data: low confidence where the source is unknown
"""),
        Bad("""
import torch
from utils import device  # a helper module's device (`torch.device("cuda" if ... else "cpu")`)
def loss(pred, n_priors: int):
    true_locs = torch.zeros((pred.size(0), n_priors, 4), dtype=torch.float).to(device)
    return true_locs
""", line=5),
        Bad("""
import torch
import tqdm
class CTRTrainer:
    def train_one_epoch(self, data_loader: torch.utils.data.DataLoader):
        tk0 = tqdm.tqdm(data_loader, desc="train")  # a progress bar over the loader yields its batches
        for i, (x_dict, y) in enumerate(tk0):
            x_dict = {k: v.to(self.device) for k, v in x_dict.items()}  # a batch's dict of host tensors
            y = y.to(self.device).float()
            loss = self.criterion(self.model(x_dict), y)
            loss.backward()
""", line=8, count=2),
        Bad("""
import numpy as np
import torch
def run(function, inputs, device):
    for i in range(len(inputs)):
        if type(inputs[i]) is np.ndarray:
            inputs[i] = torch.from_numpy(inputs[i])  # a host tensor written into the slot
        inputs[i] = inputs[i].to(device)  # read back under the same key: a host tensor, probably
    return function(*inputs)
""", line=8),
        Bad("""
import torch
class NoiseSchedule:  # a plain object: nothing moves its tensors with a model
    def __init__(self, steps):
        self.betas = torch.linspace(1e-4, 0.02, steps)
        self.alpha_bar = torch.cumprod(1.0 - self.betas, dim=0)  # made from a host tensor: on the host too
    def add_noise(self, x, noise, t):
        a = self.alpha_bar.to(x.device)[t]  # copied to the device on every call
        return a.sqrt() * x + (1 - a).sqrt() * noise
""", line=8),
        Bad("""
import torch
def to_tensor(rows, n, device):
    X = []
    for r in rows:
        x = torch.zeros(n)
        x[0] = r
        X.append(x)  # a list of host tensors
    return torch.stack(X, dim=0).to(device)  # stacked on the host, then a blocking copy
""", line=9),
        Bad("""
from torch.utils.data import DataLoader
from tqdm import tqdm
def fit(model, ds, device, epochs):
    train_loader = DataLoader(dataset=ds, batch_size=32, pin_memory=True)
    for epoch in range(epochs):
        with tqdm(enumerate(train_loader)) as t:  # the bar enters as itself: it yields the batches
            for _, (x_train, y_train) in t:
                loss = model(x_train.to(device).float(), y_train.to(device).float())
                loss.backward()
""", line=9, count=2),
        Bad("""
from torch.utils.data import DataLoader
class Attack:
    def generate(self, dataset):
        loader = DataLoader(dataset, batch_size=self.batch_size)
        for batch_id, batch_all in enumerate(loader):
            if self.masked:
                batch, labels, mask = batch_all[0], batch_all[1], batch_all[2]
            else:
                batch, labels, mask = batch_all[0], batch_all[1], None
            self._generate_batch(x=batch, targets=labels)  # parts of the batch, on every path
    def _generate_batch(self, x, targets):
        inputs = x.to(self.device)
        return self.step(inputs, targets.to(self.device))
""", line=13, count=2),
        Bad("""
from torch.utils.data import DataLoader
def sample_data(dataset, batch_size):  # an endless stream of the loader's batches
    loader = iter(DataLoader(dataset, shuffle=True, batch_size=batch_size))
    while True:
        try:
            yield next(loader)
        except StopIteration:
            loader = iter(DataLoader(dataset, shuffle=True, batch_size=batch_size))
            yield next(loader)
def cycle(dl):
    while True:
        yield from dl
def train(model, ds, device, steps):
    stream = iter(sample_data(ds, 16))
    extra = cycle(DataLoader(ds, batch_size=16))
    for _ in range(steps):
        image, _ = next(stream)
        loss = model(image.to(device), next(extra).to(device))
        loss.backward()
""", line=19, count=2),
        Bad("""
import torch
def restore(model, path, device):
    model.load_state_dict(torch.load(path, map_location=device, weights_only=True))  # each tensor copied in turn
""", line=4),
        Bad("""
import torch
def make_batch(arrs):
    return {"x": torch.tensor(arrs[0]), "y": torch.tensor(arrs[1])}  # a dict of host tensors
def step(model, arrs, device):
    batch = make_batch(arrs)
    batch = {k: v.to(device) for k, v in batch.items()}
    return model(**batch)
""", line=7),
        Bad("""
import torch
class DevNet:
    def training_forward(self, batch, net, criterion):
        batch_x, batch_y = batch  # the parts of what the training loop hands in
        batch_x = batch_x.float().to(self.device)
        batch_y = batch_y.to(self.device)
        return criterion(batch_y, net(batch_x))
""", line=6, count=2),
        Bad("""
import torch
class Triplets:
    def training_forward(self, batch_x, net, criterion):
        anchor, pos = batch_x[:, 0], batch_x[:, 1]  # parts of what the loop hands in
        shuffled = batch_x[torch.randperm(batch_x.shape[0])]
        anchor = anchor.float().to(self.device)
        pos = pos.long().to(self.device)
        return criterion(net(anchor), net(pos), net(shuffled.float().to(self.device)))
""", line=7, count=3),
        Bad("""
import torch
class Tableau:
    def __init__(self, c, b):
        self.c = c
        self.b = b
    @classmethod
    def from_lists(cls, c, b):
        return cls(c=torch.tensor(c, dtype=torch.float64), b=torch.tensor(b))  # built on the host
    def to(self, device, dtype):
        return Tableau(c=self.c.to(device, dtype), b=self.b.to(device, dtype))  # copied at every solve
""", line=11, count=2),
        Bad("""
import torch
class RunningStats:
    def __init__(self, n):
        self.acc = torch.zeros(n)  # made on the host
    def write(self, out: torch.Tensor):
        out.copy_(self.acc)  # into a tensor that may be on the GPU: a blocking copy
""", line=7),
        Bad("""
import torch
from torch.utils.data import DataLoader
def standardize(x):
    return (x - x.mean(dim=0, keepdim=True)) / (x.std(dim=0, keepdim=True) + 1e-8)
def fit(model, dataset, device, normalize=True):
    for samples, _ in DataLoader(dataset, batch_size=32, pin_memory=True):
        if normalize:
            samples = standardize(samples)  # computed where the batch is: a new host tensor, pageable
        model(samples.to(device))
""", line=10),
        Bad("""
import torch
class Runner:
    def __init__(self, env, alg, device="cuda"):
        self.env, self.alg, self.device = env, alg, device
    def learn(self, steps):
        obs = self.env.reset()
        for _ in range(steps):
            actions = self.alg.act(obs)
            obs, rewards, dones = self.env.step(actions)
            obs, rewards = obs.to(self.device), rewards.to(self.device)  # low confidence: host data, unless on the device
""", line=11, count=2),
        Bad("""
import torch
def load_factors(storage, device):
    lambdas = storage["lambda"].to(dtype=torch.float64, device=device)  # low confidence: a storage read back
    return lambdas / storage["count"].to(device=device)
""", line=4, count=2),
    )
    good = (
        Good("""
import copy
import torch
def setup(model, storage, device):
    ema = copy.deepcopy(model).to(device)  # a module made from a module: its parameters move, once
    head = storage["head"].to(device, non_blocking=True)  # the author chose: pinned or not, it is theirs to say
    return ema, head
def merge(model, pixels, prompt):
    feats = model.vision(pixels)
    embeds = model.embed(prompt)
    return feats.to(embeds.device) + embeds  # lined up with another tensor (a model split over devices)
"""),
        Good("""
import torch
from torch.utils.data import DataLoader
def prepare(x, device):
    return x.to(device, non_blocking=True).float()  # the helper moves the batch itself
def fit(model, dataset, device):
    for samples, _ in DataLoader(dataset, batch_size=32, pin_memory=True):
        samples = prepare(samples, device)
        model(samples.to(device))  # already there: nothing to copy
"""),
        Good("""
import torch
class CliffordNorm(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("running_cov", torch.zeros(2, 2, n))
        self.reset_parameters()
    def reset_parameters(self):
        self.running_cov.copy_(torch.eye(2, 2).unsqueeze(-1))  # at construction, before the module moves
"""),
        Good("""
import torch
def train(stream, model, opt, device, nb):
    pbar = enumerate(stream)
    for i, (imgs, targets) in pbar:  # a name the code assigns: what its value says (pairs of a count and a batch)
        ni = i + nb
        if ni <= 100:
            opt.param_groups[0]["lr"] = 0.1
        model(imgs).sum().backward()
        opt.step()
"""),
        Good("""
from accelerate import Accelerator
from torch.utils.data import DataLoader
def cycle(dl):
    while True:
        for data in dl:
            yield data
class Trainer:
    def __init__(self, model, ds):
        self.accelerator = Accelerator()
        dl = DataLoader(ds, batch_size=8, pin_memory=True)
        dl = self.accelerator.prepare(dl)  # the prepared loader puts each batch on the device
        self.dl = cycle(dl)
        self.model = model
    def train(self, device, steps):
        for _ in range(steps):
            data = next(self.dl).to(device)  # already there: no copy
            self.model(data).backward()
"""),
        Good("""
import torch
def restore(path):
    return torch.load(path, map_location="cpu")  # kept on the host
"""),
        Good("""
import torch
def setup_filter(f, gain=1, device=torch.device("cpu")):
    f = f * gain
    return f.to(device=device)  # to the CPU unless a caller says otherwise
"""),
        Good("""
import torch
class Head(torch.nn.Module):
    def __init__(self, device):
        super().__init__()
        self.device = device
    def project(self, h):
        return h.to(self.device)  # a module's method: its inputs are activations, already on a device
    def _stage(self, z):
        return z.to(self.device)  # private: its callers are here, and say what they hand it
"""),
        Good("""
import torch
def ramp(n: int):
    base = torch.arange(n)
    return torch.linspace(0, 1, n).type_as(base)  # both on the host: no copy
"""),
        Good("""
import torch
def setup(net, loader):
    net.cuda()  # a module: used as one (`net.eval()`, `net(x)`) in this file
    net.eval()
    return [net(x) for x in loader]
"""),
        Good("""
import torch
class Trainer:
    def fit(self, train_loader):
        for X, y in train_loader:
            self._step(X)
    def warmup(self, n):
        self._step(torch.randn(n, 8, device="cuda"))  # not a batch: the helper's input may be on the device
    def _step(self, X):
        return self.network(X.to(self.device)).sum()
"""),
        Good("""
import torch
class Attack:
    def set_norm(self, mean, device):
        self.norm = {}
        self.norm["mean"] = torch.tensor(mean, device=device)  # made on the device
    def load(self, stats):
        self.cache = {}
        self.cache.update(stats)  # entries of unknown kind
        self.cache["n"] = torch.tensor(1.0)
    def normalize(self, x):
        return (x - self.norm["mean"].to(x.device)) * self.cache["n"].to(x.device)
"""),
        Good("""
import torch
def draws(model, mu, n, device):
    d = torch.distributions.Normal(mu, 1.0)  # from a tensor: where `mu` is
    net = Sampler(8)
    return d.sample((n,)).to(device), net.generate(n).to(device)  # (a model may have moved since)
"""),
        Good("""
import torch
class Solver:
    mid: torch.Tensor
    def __init__(self, y0, mid):
        self.mid = mid  # the instance's own (where it lives is the caller's)
        self.mid = self.mid.to(y0.device)
    def step(self, y):
        self.mid = self.mid.to(y.device)  # moved once, then kept
        return y * self.mid
"""),
        Good("""
import torch
def tridiag_to_diag(t_mat, small):
    orig_device = t_mat.device
    retr = torch.linalg.eigh(t_mat.cpu()) if small else torch.linalg.eigh(t_mat)
    evals = retr.eigenvalues.to(torch.float64)  # a dtype change: no copy
    if not torch.isfinite(evals).all():
        evals = torch.zeros_like(t_mat[..., 0])
    else:
        evals = torch.ones_like(t_mat[..., 0])  # made where t_mat is, on both paths
    return evals.to(orig_device)
"""),
        Good("""
import torch
class StopOnEos:
    def __init__(self, eos):
        self.eos = torch.tensor(eos)
    def __call__(self, ids):
        self.eos = self.eos.to(ids.device)  # moved once, then kept on the device
        return torch.isin(ids[:, -1], self.eos), torch.empty(0).to(ids.device)  # nothing to copy
"""),
        Good("""
import torch
def compute_loss(preds, device):
    gain = torch.ones(7, device=device)
    gain[2] = torch.tensor(3.0)  # 0-dim: a number, not a copy of an array
    out = torch.zeros(4)
    out[1:3] = torch.tensor([1, 2])  # host into host
    return gain, out
"""),
        Good("""
def send_to_device(batch, device, non_blocking=True):
    return batch.to(device, non_blocking=non_blocking)
"""),
        Good("""
import torch
from torch.utils.data import DataLoader
def train(model, ds, opt, device):
    loader = DataLoader(ds, pin_memory=True)
    for x, y in loader:
        x = x.to(device, non_blocking=True)
        model(x, y.to(device, non_blocking=True)).backward()
        opt.step()
"""),
        Good("""
import torch
def forward(self, x):
    w = torch.ones(3).pin_memory().to(x.device, non_blocking=True)
    return x.to(torch.float16) * w.to(x.dtype)
"""),
        Good("""
import torch
def train(model, loader, opt, device):
    model.to(device)
    for x, y in loader:
        out = model(x)  # the model moves it, or x is already on the device
        out.to("cpu", non_blocking=True)
        opt.step()
"""),
    )

    def visit_For(self, node, ctx):
        note_loader_loop(ctx, node)

    visit_AsyncFor = visit_For

    def visit_Return(self, node, ctx):
        fn = ctx.function
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return
        v = node.value
        funcs = _batch_funcs(ctx)
        # (a returned name holds a batch only once the walk has seen one drawn in this file)
        cheap_no = v is None or v.__class__ is ast.Name and not _batches(ctx)
        src = None if cheap_no else _returned_batch(ctx, v)
        # every `return` must hand on a batch: one that does not rules the function out for good
        if src is None:
            funcs[id(fn)] = None  # type: ignore[assignment]
        elif funcs.get(id(fn), src) is not None:
            funcs[id(fn)] = src
            _any_batch_func(ctx)[0] = True

    def _copy_into(self, node, ctx) -> None:
        """`dst.copy_(src)` of a host tensor into a tensor that may be on the GPU: the same blocking copy from pageable
        memory as `src.to(device)` (unless `non_blocking=` is passed: the caller's choice)."""
        if kwarg(node, "non_blocking") is not None:
            return
        fn = ctx.function
        if fn is not None and not isinstance(fn, ast.Lambda) and ("init" in fn.name or "reset" in fn.name):
            return  # (`reset_parameters` of a module: run at construction, before the module moves to the GPU)
        dst, src = node.func.value, node.args[0]
        inf = ctx.infer
        was, inf.probable = inf.probable, False
        try:
            kinds = ctx.kind(dst), ctx.kind(src)
            probable = inf.probable
        finally:
            inf.probable = was
        if kinds != (TENSOR, CPU) or zero_size(ctx, src):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: copying a host tensor into a tensor that may be on the GPU "
                    "is a blocking copy from pageable memory, which waits for all queued GPU work",
                    f"make `{short(ctx, src, 30)}` on the device, or pin it (`.pin_memory()`) and pass "
                    "`non_blocking=True`", confidence="low" if probable else None)

    def _load(self, node, ctx) -> None:
        where = _load_target(ctx, node)
        if where is None:
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: a checkpoint loaded with `map_location={short(ctx, where, 30)}` "
                    "is read into pageable host memory and each tensor copied to the device, a blocking copy that "
                    "waits for all queued GPU work",
                    "load it once, before the loop (`map_location='cpu'`, then `load_state_dict` or one "
                    "`.to(device, non_blocking=True)` from pinned memory); never inside the step")

    def visit_Assign(self, node, ctx):
        v = node.value
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
            self._write_into(ctx, node, node.targets[0])
        src = None
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "next" and v.args:
            src = _loader_of_iterator(ctx, v.args[0])
        elif isinstance(v, ast.Call) and _any_batch_func(ctx)[0]:  # (most files hand on no batch from a helper)
            src = _batch_source_call(ctx, v)
        if src is not None:
            batches = _batches(ctx)
            for t in node.targets:
                for n in _targets(t):
                    batches[id(n)] = src

    def visit_Call(self, node, ctx):
        f = node.func
        if f.__class__ is ast.Attribute and f.attr == "load" or f.__class__ is ast.Name and f.id == "load":
            self._load(node, ctx)
        if isinstance(f, ast.Attribute) and f.attr == "copy_" and len(node.args) == 1:
            self._copy_into(node, ctx)
            return
        if not isinstance(f, ast.Attribute) or f.attr not in ("to", "cuda", "type_as", "type"):
            return
        if f.attr == "type_as":
            self._type_as(node, ctx)
            return
        if f.attr == "type" and (len(node.args) != 1 or tensor_type_device(ctx, node.args[0]) != "device"):
            return  # `.type(torch.cuda.FloatTensor)` / `.type(Tensor)` of a name holding one: a copy to the GPU
        if f.attr == "to":
            if ctx.call_name(node) is not None:
                return
            target = to_target(ctx, node)
            where = device_kind(ctx, target)
            # `x.to(device=where)`: the keyword says a device whatever the name (`loc`, `d`), unless it is the CPU
            if where != "device" and not (where is None and target is not None and target is kwarg(node, "device")
                                          and ctx.infer.cpu_device(target) is not True):
                return
        recv = f.value
        klass = class_attribute_copy(ctx, recv) if ctx.kind(recv) != CPU else None
        undone = None
        if zero_size(ctx, recv) or klass is None and caches_itself(ctx, node) \
                and (undone := cache_undone(ctx, node)) is None:
            return  # nothing to copy; a copy made once and kept
        partly = mover = False
        src = _source(ctx, recv)
        if src is None:
            maker = made_from_host_values(ctx, recv)
            if maker is not None:
                src = f"a host tensor (`{maker}(...)` made it from Python values)", None, None
            elif (drawn := drawn_from_host_object(ctx, recv)) is not None:
                partly = True  # (low confidence: what a method gives is only probably where its object was made)
                src = f"a host tensor (`{drawn}(...)` of an object built from Python values)", None, None
            elif mover_param(ctx, recv, node):
                src = "what this helper moves (host data, a batch, when called with it)", None, None
                mover = True
                partly = not named_mover(ctx)
            elif undone is not None and undone[0] == "moved back":
                src = (f"the attribute (moved back to the host at line {undone[1].lineno}, so every call copies it "
                       "again)", None, None)
            elif klass is not None:  # `self.mid = self.mid.to(device)` in `__init__`: from the class, each time
                partly = not klass[1]
                src = (f"the class attribute `{klass[0]}` (made with the class, on the host; every instance copies "
                       "it)", None, None)
            elif ctx.kind(recv) in (TENSOR, None) and ctx.infer.partly_host(recv):
                # `r = eigh(t.cpu()) if small else eigh(t)` ... `r.to(orig_device)`: a copy back on that path
                partly = True
                src = ("a tensor that is on the host on some path here (moved there by a branch)" if not (
                    isinstance(recv, ast.Call) and ctx.call_name(recv) is None and isinstance(recv.func, ast.Name))
                    else f"what `{recv.func.id}` returns (a host tensor on some of its paths)"), None, None
            elif f.attr == "to" and _handed_data(ctx, recv, target):
                partly = True  # (low confidence: a GPU tensor handed in makes it a no-op)
                src = "what the callers hand this public method (a host tensor, when they pass one)", None, None
            elif f.attr == "cuda" and not node.args and _unplaced(ctx, recv if undone is None else undone[1].value):
                # `.cuda()` is written for host data (of a device tensor it does nothing): of a value the
                # inference cannot place, probably a copy from the host
                partly = True
                src = "a value on the host, probably (`.cuda()` of data the linter cannot place)", None, None
            elif f.attr == "to" and _the_device(ctx, target) and _unplaced_data(ctx, recv, node) \
                    and not _cpu_default(ctx, target):
                # `.to(device)` is written to move data there: of data the inference cannot place (an
                # environment's observations, a storage's entries, a sampler's draw), a copy from the host when it
                # is there, a no-op when it is already on the device (low confidence)
                partly = True
                src = "data the linter cannot place (when it is on the host)", None, None
            else:
                return
        what, loader, pinned = src
        conf = "low" if partly or f.attr == "to" and _none_default_target(ctx, node) else None
        nb = kwarg(node, "non_blocking")
        if is_literal_true(nb):
            if pinned is False:
                self.report(ctx, node, f"`{short(ctx, node)}` blocks: `non_blocking=True` from {what} that is not in "
                            "pinned memory still waits for the copy (and the sync debug mode does not see it)",
                            "pin the source: `DataLoader(..., pin_memory=True)` or `.pin_memory()` first")
            return
        if hidden_keywords(ctx, node):
            if not mover:
                return
            conf = "low"  # (`data.to(device, **kwargs)` in `copy_data_to_device`: blocking unless a caller passes
            # `non_blocking=True` through the keywords)
        fix = None
        if loader is not None and pinned is True and nb is None and len(node.args) <= 1:
            fix = _non_blocking_fix(ctx, node, recv)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: a blocking copy of {what} to the device waits for all "
                    "queued GPU work",
                    fix.message if fix else "`.to(device, non_blocking=True)`" + (
                        "" if pinned else " from pinned memory (`DataLoader(..., pin_memory=True)` / `.pin_memory()`)"),
                    fix=fix, confidence=conf)


    def _write_into(self, ctx, node, t):
        """`gain[2:6] = torch.tensor(shape)[[3, 2, 3, 2]]` into a tensor made on the device: the host tensor
        (visibly in pageable memory, not 0-dim) is copied into it, a blocking copy."""
        from syncscan.lint.shapes import rank

        v = node.value
        if ctx.kind(v) != CPU or not _pageable(ctx, v, 0) or rank(ctx, v) == 0 or zero_size(ctx, v):
            return
        visibly = made_on_device(ctx, t.value)
        if not visibly:
            # `W = X.new_zeros(...)` then `W[:] = torch.eye(n)`: a tensor where X is, surely a tensor but of a place
            # the inference does not see (low confidence)
            # (a local the function made as a tensor, not a parameter: lists of arrays and dicts documented as
            # tensors are written the same way)
            a = last_assign(ctx, t.value.id, t) if isinstance(t.value, ast.Name) else None
            if a is None or not isinstance(a.value, ast.Call):
                return
            ctx.infer.probable = False
            if ctx.kind(a.value) != TENSOR or ctx.infer.probable:
                return
        where = "made on the device" if visibly else f"on the device of `{short(ctx, t.value, 30)}`"
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: writing a host tensor into a tensor {where} "
                    "copies it from pageable memory, a blocking copy that waits for all queued GPU work",
                    "build the values on the device (or once, outside the step), or copy them with "
                    "`.pin_memory().to(dev, non_blocking=True)` first", confidence=None if visibly else "low")

    def _type_as(self, node, ctx):
        """`cpu_t.type_as(t)`: converts to `t`'s dtype and device, a blocking copy when `t` is on the GPU."""
        recv = node.func.value
        if ctx.call_name(node) is not None or len(node.args) != 1 or ctx.kind(recv) != CPU or zero_size(ctx, recv):
            return
        # `type_as` takes a tensor: one of unknown place is where `.to(device)` of an unknown device is (on the GPU
        # when there is one), said with low confidence; a host tensor or a Python value is no copy
        other = ctx.kind(node.args[0])
        if other != TENSOR and (other is not None or isinstance(node.args[0], (ast.Constant, ast.Starred))):
            return
        held = ctx.text(recv).startswith("self.")
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `type_as` copies a host tensor to the device of "
                    f"`{short(ctx, node.args[0], 30)}`, a blocking copy that waits for all queued GPU work",
                    "register it as a buffer in `__init__` (`self.register_buffer(name, t, persistent=False)`): it "
                    "then moves with the module, once" if held else
                    "make it on the device (`device=`), or `.pin_memory().to(t.device, non_blocking=True)`",
                    confidence="low" if other is None else None)


def _loader_of_iterator(ctx, it: ast.AST) -> ast.AST | None:
    """`next(iter(loader))`, `next(loader_iter)` with `loader_iter = iter(loader)`: the loader."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "iter" and it.args:
        inner = it.args[0]
        return inner if ctx.kind(inner) == LOADER or _loaderish(inner) else None
    if isinstance(it, ast.Name):
        a = last_assign(ctx, it.id, it)
        if a is not None and isinstance(a.value, ast.Call) and a.value.args:
            # `it = iter(loader)`, `batches = itertools.cycle(loader)`, `batches = forever(loader)`
            inner = a.value.args[0]
            if ctx.kind(inner) == LOADER or _loaderish(inner):
                return inner
        if ctx.kind(it) == LOADER or _loaderish(it):
            return it
    if isinstance(it, ast.Attribute) and (ctx.kind(it) == LOADER or _loaderish(it)):
        return it  # `next(self.data_iter)` with `self.data_iter = iter(self.train_loader)`
    return None


def _batch_funcs(ctx) -> dict[int, ast.AST]:
    """id(function or method of the module) -> the loader its batch comes from: every `return` of it hands
    on a batch (`return next(self.data_iter)`), gathered as the walk goes (per file)."""
    return ctx.file.state(_batch_funcs, dict)


def _any_batch_func(ctx) -> list[bool]:
    """[whether some function of the file seen so far hands on a batch] (per file)."""
    return ctx.file.state(_any_batch_func, lambda: [False])


def _returned_batch(ctx, value: ast.AST | None) -> ast.AST | None:
    """The loader a returned value is a batch of: `next(<iterator of a loader>)`, a name bound to a batch."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "next" and value.args:
        return _loader_of_iterator(ctx, value.args[0])
    if isinstance(value, ast.Name):
        src = batch_binding(ctx, value)
        return src if src is not None and not isinstance(src, ast.arg) else None
    return None


def _batch_source_call(ctx, v: ast.AST) -> ast.AST | None:
    """The loader of `batch = batch_loader.next()` / `batch = get_batch()`: a call of a method of a class of the
    module (on an instance the file makes of it) or of a module function, every `return` of which hands on a
    batch (an infinite-loader wrapper, a prefetcher)."""
    if not isinstance(v, ast.Call):
        return None
    f, index, fn = v.func, ctx.file.index, None
    if isinstance(f, ast.Name) and f.id not in ctx.imports:
        fn = index.funcs.get(f.id)
    elif isinstance(f, ast.Attribute):
        name = ctx._instance_class(f.value)
        cls = index.classes.get(name) if name else None
        found = index.method(cls, f.attr) if cls is not None else None
        fn = found[0] if found is not None else None
    return _batch_funcs(ctx).get(id(fn)) if fn is not None else None


def _loaderish(node) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    low = name.lower()
    return "loader" in low or low in ("batches", "train_dl", "val_dl", "dl", "train_iter", "data_iter")


def note_loader_loop(ctx, node) -> None:
    """Record the targets of `for batch in loader:` as the loader's batches (per file; each rule that asks
    `batch_binding` notes its loops itself, so it does not depend on another rule having run)."""
    seen = ctx.file.state(note_loader_loop, set)
    if id(node) in seen:
        return
    seen.add(id(node))
    if ctx.infer.iter_kind(node.iter)[1] or _wrapped_loader(ctx, node.iter, node):
        batches = _batches(ctx)
        for t in _targets(node.target):
            batches[id(t)] = node.iter


def _batches(ctx) -> dict[int, ast.AST]:
    """id(name bound to a batch) -> the loader it comes from, gathered as the walk goes (per file)."""
    return ctx.file.state(_batches, dict)


def _wrapped_loader(ctx, it: ast.AST, loop: ast.AST) -> bool:
    """`pbar = enumerate(loader)`, then maybe `pbar = tqdm(pbar, ...)`, then `for ... in pbar`: every
    binding of the name before the loop wraps a loader or the name itself, and one wraps a loader."""
    if not isinstance(it, ast.Name):
        return False
    found = False
    p = pos(loop)
    for s in flow(ctx).stores.get(it.id, ()):
        if pos(s) >= p:
            break
        a = ctx.parent(s)
        if not (isinstance(a, ast.Assign) and len(a.targets) == 1 and a.targets[0] is s):
            return False
        v = a.value
        if isinstance(v, ast.Call) and v.args and isinstance(v.args[0], ast.Name) and v.args[0].id == it.id:
            continue  # re-wrapped: `pbar = tqdm(pbar, total=n)`
        if not ctx.infer.iter_kind(v)[1]:
            return False
        found = True
    return found


def batch_binding(ctx, name: ast.Name, depth: int = 0, copies: list | None = None):
    """The loader a name's value comes from, when its last binding before here is a loader loop's
    target or `= next(iter(loader))`, or an assignment of a part of such a value
    (`images, masks = batch["image"], batch["mask"]`) or of a tensor derived from one on the host
    (`c_org = label_org.clone()`: then True is appended to `copies`)."""
    batches = _batches(ctx)
    if depth > 3:
        return None
    last = None
    p = pos(name)
    for s in flow(ctx).stores.get(name.id, ()):
        if pos(s) >= p:
            break
        st = statement_of(ctx, s)
        # a loop target binds before its body; an assignment's target only once the statement has run
        # (and a parameter of the function on entry)
        if isinstance(st, (ast.For, ast.AsyncFor)) or isinstance(s, ast.arg) \
                or (st is not None and end_pos(st) <= p):
            last = s
    if last is None:
        return None
    if id(last) in batches:
        return batches[id(last)]
    if isinstance(last, ast.arg):
        return last if _handed_batch(ctx, last) else None
    part = _assigned_part(ctx, last)
    if part is not None and part is not name:
        root, copied = host_root(part)
        if isinstance(root, ast.Call):  # `samples = standardize(samples)`: a helper computing on the host batch
            root, copied = _host_helper_input(ctx, root), True
        if isinstance(root, ast.Name):  # `x = batch`, `x = batch["x"]`, `x = batch[i:j]`, `x = batch.x`
            loader = batch_binding(ctx, root, depth + 1, copies)
            if loader is not None and copied and copies is not None:
                copies.append(True)
            return loader
    return None


def _host_helper_input(ctx, call: ast.Call) -> ast.Name | None:
    """The name `call` hands first, where `call` is of a function of the linted tree (this module's, or one it
    imports from the tree) that never names a device: no `.to(` / `.cuda(` / `.pin_memory(`, no `device=`. What
    it returns of a host batch is computed where the batch is, on the host (`_standardize(samples)`)."""
    f = call.func
    if not isinstance(f, ast.Name) or not call.args or not isinstance(call.args[0], ast.Name):
        return None
    local = f.id not in ctx.imports and f.id in ctx.file.index.funcs
    imported = not local and f.id in ctx.file.imported_names and ctx.file.modules is not None
    # (the kind before another module is parsed for the definition)
    if not (local or imported) or ctx.kind(call) not in (TENSOR, CPU):
        return None
    if local:
        fn = ctx.file.index.funcs[f.id]
    else:
        found = ctx.file.modules.function_def(ctx.file, f.id)
        fn = found[1] if found is not None else None
    if fn is None:
        return None
    memo = ctx.file.state(_names_no_device, dict)  # id(function) -> whether it names no device
    if id(fn) not in memo:
        memo[id(fn)] = _names_no_device(fn)
    return call.args[0] if memo[id(fn)] else None


_PLAIN_BUILTINS = frozenset({"len", "int", "float", "bool", "min", "max", "abs", "sum", "range", "isinstance",
                             "tuple", "list", "zip", "enumerate", "round", "pow"})


def _names_no_device(fn: ast.AST) -> bool:
    """`fn` never moves or places a tensor: no `.to(`, `.cuda(`, `.pin_memory(`, no `device=`, no call of another
    function by a bare name (a helper of its own may move it), and it returns a value."""
    returns = False
    for n in ast.walk(fn):
        if isinstance(n, ast.Return) and n.value is not None:
            returns = True
        elif isinstance(n, ast.Call) and (isinstance(n.func, ast.Attribute) and n.func.attr in ("to", "cuda",
                                                                                               "pin_memory")
                                          or isinstance(n.func, ast.Name) and n.func.id not in _PLAIN_BUILTINS
                                          or any(k.arg == "device" for k in n.keywords)):
            return False
    return returns


_JOINS = frozenset({"torch.cat", "torch.concat", "torch.concatenate", "torch.stack", "torch.hstack", "torch.vstack"})


def _joined_batch(ctx, recv):
    """`images = torch.cat(images, dim=0)` of a DataLoader batch (two views of each image, a list of
    tensors): the loader, when `recv` is a name last assigned such a join; else None."""
    if not isinstance(recv, ast.Name):
        return None
    a = last_assign(ctx, recv.id, recv)
    v = a.value if a is not None else None
    if not (isinstance(v, ast.Call) and v.args and ctx.call_name(v) in _JOINS):
        return None
    parts = v.args[0]
    root = _root(parts.elts[0] if isinstance(parts, (ast.List, ast.Tuple)) and parts.elts else parts)
    if not isinstance(root, ast.Name):
        return None
    loader = batch_binding(ctx, root)
    return None if loader is None or isinstance(loader, ast.arg) else loader


def _handed_batch(ctx, param: ast.arg) -> bool:
    """`def _train_batch(self, X, y)` where every call of it in the module is `self._train_batch(X, y)` in a
    loop over a DataLoader (`for X, y in train_loader:`): its parameter holds the loader's batch."""
    func = ctx.function
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = func.args
    if not any(p is param for p in a.posonlyargs + a.args + a.kwonlyargs):
        return False  # (a lambda's or a nested function's)
    return param.arg in ctx.file.kinds.batch_params(func, ctx.file.index.class_of(func))


def _assigned_part(ctx, target: ast.Name) -> ast.AST | None:
    """The value a name gets from a plain assignment: `x = v`, the matching element of
    `a, b = v1, v2`, or the name unpacked (`x, y = batch`: a part of `batch`)."""
    a = ctx.parent(target)
    if isinstance(a, ast.Assign) and len(a.targets) == 1 and a.targets[0] is target:
        return a.value
    stmt = ctx.parent(a) if isinstance(a, ast.Tuple) else None
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is a:
        if isinstance(stmt.value, ast.Tuple) and len(stmt.value.elts) == len(a.elts):
            return stmt.value.elts[next(i for i, e in enumerate(a.elts) if e is target)]
        if isinstance(stmt.value, ast.Name) and not any(isinstance(e, ast.Starred) for e in a.elts):
            return stmt.value
    return None


def _none_default_target(ctx, call: ast.Call) -> bool:
    """`x.to(device)` where `device` is a parameter of the function defaulting to None (`def rope_init(config,
    device=None)`): `.to(None)` moves nothing, so the copy happens only for callers that pass a device."""
    t = to_target(ctx, call)
    fn = ctx.function
    if not isinstance(t, ast.Name) or fn is None or isinstance(fn, ast.Lambda):
        return False
    d = param_defaults(fn.args).get(t.id)
    return isinstance(d, ast.Constant) and d.value is None and _is_param(ctx, t.id)


def _unplaced(ctx, recv) -> bool:
    """Of unknown kind, and not a module by how the file uses it: not called (`net(x)`, `self.encoder(x)`) and not
    asked for `.parameters()`, `.eval()`, `.state_dict()` and the like anywhere in the file."""
    if ctx.kind(recv) is not None or isinstance(recv, ast.Name) and _is_param(ctx, recv.id):
        return False  # (a parameter: what callers hand in, `mover_param`'s question)
    key = dotted(recv)
    return key is not None and key not in ctx.file.get(_module_like)


# words of a name (beside _MODELISH, found anywhere in it) that say it holds a training object rather than data
_OBJECT_WORDS = frozenset({"metric", "metrics", "loss", "losses", "solver", "func", "fn", "policy", "actor", "critic",
                           "likelihood"})
_CALLABLE_WORDS = frozenset({"func", "fn"})  # (what `self.init_fn(shape)` gives is data, not the function)
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


def _unplaced_data(ctx, recv: ast.AST, call: ast.Call) -> bool:
    """`obs.to(self.device)`, `storage[key].to(device=device)`, `prior_sample(n, 2).float().to(device)`: data of
    unknown kind, through indexing and device-keeping casts, named like no module or training object and not
    used as a module in the file, copied without `non_blocking` (a caller's `non_blocking` is their choice)."""
    if ctx.kind(recv) is not None or any(k.arg == "non_blocking" or k.arg is None for k in call.keywords) \
            or not ctx.file.get(_imports_torch):
        return False  # (in a file that imports nothing of torch, `.to()` is some other library's method)
    node = recv
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _SAME_PLACE:
            node = node.func.value
        else:
            break
    called = isinstance(node, ast.Call)
    if called:  # what a function gives: data unless its name says a class or a module
        if node.func.__class__ not in (ast.Name, ast.Attribute) or _called_class(node.func) or any(
                _modelish(a) for a in (*node.args, *(k.value for k in node.keywords))):
            return False  # (`deepcopy(model)`, `convert_sync_batchnorm(model)`: a module made from a module)
        if _drawn_from_placed(ctx, node.func):
            return False
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id in ("self", "cls", "super") and not parts:
        return False
    parts.append(node.id)
    if not _bound(ctx, node.id):
        return False  # (a name neither bound here nor imported: a star import's or a builtin, of unknown kind)
    if node.id in ("self", "cls") and not called:
        return False  # the object's own state: where it lives is what its constructor's callers gave
    if not called and parts == [node.id] and _is_param(ctx, node.id) and _activation_param(ctx):
        return False  # a module's input (activations, already on a device) or a private helper's (its callers say)
    if any(_modelish_name(p) for p in parts) \
            or any(w.lower() in _OBJECT_WORDS and not (called and w.lower() in _CALLABLE_WORDS)
                   for p in parts for w in _WORD.findall(p)):
        return False
    key = dotted(recv)
    return key is None or key not in ctx.file.get(_module_like)


def _the_device(ctx, target: ast.AST | None) -> bool:
    """`device`, `self.device`, `"cuda"`, `torch.device(...)`: the device the code runs on, where data is sent;
    not `t.device` or a tensor (`x.to(y.device)`, `x.to(y)`: lining one tensor up with another, most often between
    devices of a model split over several, or on the one they share)."""
    if isinstance(target, ast.Attribute):
        return isinstance(target.value, ast.Name) and target.value.id == "self" and "dev" in target.attr.lower()
    if isinstance(target, ast.Name):
        return "dev" in target.id.lower() or ctx.kind(target) == OTHER
    return isinstance(target, (ast.Constant, ast.Call, ast.JoinedStr))


def _drawn_from_placed(ctx, func: ast.AST) -> bool:
    """`d.sample((n,))` of `d = Normal(mu, 1.0)`: what a local object gives is where the tensors it was built from
    are (`mu`, not known to be on the host)."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return False
    a = last_assign(ctx, func.value.id, func)
    return a is not None and isinstance(a.value, ast.Call) and any(
        ctx.kind(x) in (None, TENSOR) and not isinstance(x, ast.Constant) for x in a.value.args)


def _activation_param(ctx) -> bool:
    fn = ctx.function
    if fn is None or isinstance(fn, ast.Lambda):
        return False
    if fn.name.startswith("_") and not fn.name.startswith("__") or fn.name in ("forward", "__call__"):
        return True
    cls = ctx.file.index.class_of(fn)
    return cls is not None and ctx.file.is_module_class(cls)


def _bound(ctx, name: str) -> bool:
    """`name` is a parameter or a local of the function, imported, or bound at the module's top level."""
    return _is_param(ctx, name) or bool(flow(ctx).stores.get(name)) or name in ctx.file.imports \
        or name in ctx.file.get(_top_level_names) or name in ("self", "cls")


def _top_level_names(file) -> frozenset[str]:
    out = set()
    for st in file.tree.body:
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(st.name)
        elif isinstance(st, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.With)):
            out |= {n.id for n in ast.walk(st) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return frozenset(out)


def _cpu_default(ctx, target: ast.AST | None) -> bool:
    """`device` a parameter defaulting to the CPU (`device=torch.device("cpu")`): moved nowhere unless a caller says."""
    fn = ctx.function
    if not isinstance(target, ast.Name) or fn is None or isinstance(fn, ast.Lambda):
        return False
    d0 = param_defaults(fn.args).get(target.id)
    return d0 is not None and ctx.infer.cpu_device(d0) is True


def _modelish(e: ast.AST) -> bool:
    key = dotted(e)
    return key is not None and _modelish_name(key)


def _modelish_name(name: str) -> bool:
    return any(w in name.lower() for w in _MODELISH)


def _imports_torch(file) -> bool:
    """The file imports something of torch (once per file)."""
    return any(q.split(".")[0] == "torch" for q in file.imports.values())


def _called_class(func: ast.AST) -> bool:
    name = func.id if isinstance(func, ast.Name) else func.attr
    return name[:1].isupper() or name in ("getattr", "super", "type", "iter", "next")


def _handed_data(ctx, recv: ast.AST, target: ast.AST | None) -> bool:
    """`images.clone().detach().to(self.device)` of a parameter of a public method of a class that is not an
    nn.Module (an attack, a detector's `fit`, a trainer's `set_input`) or of a public function: the library moves
    what its users hand it to the device it was told, whatever it was; a host tensor is a blocking copy."""
    root = _data_root(recv, parts=False)
    fn = ctx.function
    # (a part of a parameter, moved to the library's own device: `batch_y.to(self.device)` after `x, y = batch`)
    derived = isinstance(root, ast.Name) and not _is_param(ctx, root.id) and isinstance(target, ast.Attribute) \
        and _from_param(ctx, root)
    if not isinstance(root, ast.Name) or not (_is_param(ctx, root.id) or derived) or fn is None \
            or isinstance(fn, ast.Lambda) \
            or fn.name.startswith("_") or fn.name in ("forward", "__call__") or ctx.kind(root) not in (None, TENSOR):
        return False
    if not (isinstance(target, ast.Name) and target.id in ("device", "dev") or isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name) and target.value.id == "self" and "device" in target.attr):
        return False
    if _cpu_default(ctx, target):
        return False  # (`setup_filter(f, device=torch.device("cpu"))`: moved nowhere unless a caller says)
    attr = ctx.parent(recv)
    if not isinstance(attr, ast.Attribute) or not blocking_copy(ctx, ctx.parent(attr), fn.args):
        return False  # (`non_blocking=True`, or the caller's choice)
    cls = ctx.file.index.class_of(fn)
    return cls is None or not ctx.file.is_module_class(cls)


_CASTS = _HOST_COPIES | {"detach"}  # (methods that keep the device, without views: a part is still the whole's data)


def _data_root(e: ast.AST, parts: bool = True) -> ast.AST:
    """What `e` reads, through casts and copies that keep the device (`x.float().clone()`) and, with `parts`, through
    indexing (`batch[:, 0]`, `batch[perm]`): `host_root` without attributes and views."""
    while True:
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and not e.args and e.func.attr in _CASTS:
            e = e.func.value
        elif parts and isinstance(e, ast.Subscript):
            e = e.value
        else:
            return e


def _from_param(ctx, name: ast.Name, depth: int = 0) -> bool:
    """`name` holds a part of a parameter where it is read: `batch_x, batch_y = batch`, `anchor, pos = batch[:, 0],
    batch[:, 1]`, `x1 = batch[perm]` (a row, a part, a cast of what the caller hands in)."""
    s = _last_store(ctx, name.id, name)
    if s is None or depth > 3:
        return False
    p = ctx.parent(s)
    value = None
    if isinstance(p, ast.Assign) and len(p.targets) == 1 and p.targets[0] is s:
        value = p.value
    elif isinstance(p, (ast.Tuple, ast.List)) and isinstance(a := ctx.parent(p), ast.Assign) and len(a.targets) == 1 \
            and a.targets[0] is p and not any(isinstance(t, ast.Starred) for t in p.elts):
        i = next(k for k, t in enumerate(p.elts) if t is s)
        value = a.value.elts[i] if isinstance(a.value, (ast.Tuple, ast.List)) and len(a.value.elts) == len(p.elts) \
            else a.value
    root = _data_root(value) if value is not None else None
    if not isinstance(root, ast.Name):
        return False
    return _is_param(ctx, root.id) and _last_store(ctx, root.id, root) is None or _from_param(ctx, root, depth + 1) \
        or root.id == name.id and _is_param(ctx, root.id)


def _is_param(ctx, name: str) -> bool:
    fn = ctx.function
    if fn is None or isinstance(fn, ast.Lambda):
        return False
    a = fn.args
    return any(p.arg == name for p in a.posonlyargs + a.args + a.kwonlyargs)


def _module_like(file) -> frozenset[str]:
    """Names and attribute chains the file uses as modules (once per file)."""
    out = set()
    for n in ast.walk(file.tree):
        if n.__class__ is ast.Call:
            f = n.func
            if f.__class__ is ast.Attribute and f.attr in _MODULE_METHODS:
                key = dotted(f.value)
            else:
                key = dotted(f)
            if key is not None:
                out.add(key)
    return frozenset(out)


_MODULE_METHODS = frozenset({"parameters", "named_parameters", "eval", "train", "state_dict", "load_state_dict",
                             "modules", "children", "named_modules", "apply", "zero_grad", "forward"})


def _prepared_loaders(file) -> frozenset[str]:
    """The names of loaders handed to or bound from accelerate's `prepare` in this module (`dl =
    self.accelerator.prepare(dl)`), and of what is bound from a call handed one (`self.dl = cycle(dl)`): their
    batches are placed on the device by the prepared loader. Once per file."""
    if ".prepare(" not in file.source or not any(v.split(".")[0] == "accelerate" for v in file.imports.values()):
        return frozenset()

    def name(e) -> str | None:
        return e.id if isinstance(e, ast.Name) else e.attr if isinstance(e, ast.Attribute) else None

    calls = [n for n in ast.walk(file.tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)]
    out = set()
    for n in calls:
        if isinstance(n.value.func, ast.Attribute) and n.value.func.attr == "prepare":
            for x in [*n.targets, *n.value.args]:
                out.update(name(e) for e in (x.elts if isinstance(x, (ast.Tuple, ast.List)) else [x]))
    out.update(name(n.targets[0]) for n in calls if len(n.targets) == 1 and n.value.args
               and isinstance(n.value.args[0], ast.Name) and n.value.args[0].id in out)
    out.discard(None)
    return frozenset(out)  # type: ignore[arg-type]


def _prepared(ctx, loader) -> bool:
    """The batch's loader is one accelerate prepared (it yields device tensors), by its name."""
    names = ctx.file.get(_prepared_loaders)
    return bool(names) and isinstance(loader, (ast.Name, ast.Attribute)) \
        and (loader.id if isinstance(loader, ast.Name) else loader.attr) in names


def _source(ctx, recv):
    """(what, loader expression or None, pinned: True / False / None) for a host tensor, else None."""
    if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Attribute) and recv.func.attr == "pin_memory":
        return "a pinned host tensor", None, True
    root, copied = host_root(recv)
    copies: list = []
    if isinstance(root, ast.Name):
        loader = batch_binding(ctx, root, copies=copies)
        if loader is None:
            plain = _root(recv)  # (`_comprehension_batch` follows only subscripts and attributes)
            loader = _comprehension_batch(ctx, recv, plain) if isinstance(plain, ast.Name) else None
        if isinstance(loader, ast.arg):  # handed in by every call of this function
            name = ctx.function.name
            local = ctx.file.index.calls().get(("s", name)) or ctx.file.index.calls().get(("n", name))
            return (f"a DataLoader batch (every call of `{name}` here hands one in)" if local else
                    f"a DataLoader batch (the base class's loop hands one to `{name}`)"), None, None
        if loader is not None and not isinstance(loader, ast.arg) and _prepared(ctx, loader):
            return None  # accelerate's prepared loader has put the batch on the device already
        if loader is not None:
            if id(loader) in ctx.infer.step_iters and not _loaderish(loader) and ctx.kind(loader) is None:
                ctx.infer.probable = True  # (a training loop's iterable of unknown kind: batches, probably)
            return "a DataLoader batch", loader, False if copied or copies else loader_pinned(ctx, loader)
        joined = _joined_batch(ctx, recv)
        if joined is not None:  # (a new tensor: pageable, whatever the loader pinned)
            return "a DataLoader batch joined on the host", joined, False
    elif isinstance(root, ast.Call):
        loader = _returned_batch(ctx, root)  # `next(dl).to(device)`: a batch drawn in place
        if loader is not None and not _prepared(ctx, loader):
            return "a DataLoader batch", loader, False if copied else loader_pinned(ctx, loader)
    if ctx.kind(recv) == CPU:
        return "a host tensor", None, True if _pinned_cpu(ctx, recv) else (False if _pageable(ctx, recv, 0) else None)
    return None


_VIEWS = frozenset({"view", "reshape", "expand", "expand_as", "unsqueeze", "squeeze", "flatten", "permute",
                    "transpose", "t", "contiguous", "float", "long", "int", "half", "double", "bool", "clone",
                    "repeat", "detach", "type_as", "to"})


def _pageable(ctx, e, depth: int) -> bool:
    """Visibly made in ordinary host memory: a torch factory without `pin_memory=True`
    (`torch.tensor(...)`, `torch.from_numpy(a)`, `torch.arange(n)`), `.cpu()`, or views / dtype
    changes of those."""
    from syncscan.lint.tensors import FACTORIES

    if depth > 5:
        return False
    if isinstance(e, ast.Name):
        a = last_assign(ctx, e.id, e)
        return a is not None and _pageable(ctx, a.value, depth + 1)
    if isinstance(e, ast.Subscript):
        return _pageable(ctx, e.value, depth + 1)
    if not isinstance(e, ast.Call):
        return False
    q = ctx.call_name(e)
    if q in FACTORIES:
        return not is_literal_true(kwarg(e, "pin_memory"))
    f = e.func
    if q is None and isinstance(f, ast.Attribute):
        if f.attr == "cpu":
            return True
        if f.attr in _VIEWS and not (f.attr == "to" and is_literal_true(kwarg(e, "non_blocking"))):
            return _pageable(ctx, f.value, depth + 1)
    return False


def _comprehension_batch(ctx, recv, root: ast.Name):
    """`{k: v.to(dev) for k, v in batch.items()}` with `batch` a DataLoader batch, also nested:
    `[{k: v.to(dev) for k, v in t.items()} for t in targets]` with `targets` one."""
    n = ctx.parent(recv)
    while n is not None and not isinstance(n, ast.stmt):
        if isinstance(n, (ast.DictComp, ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            for g in n.generators:
                if any(t.id == root.id for t in _targets(g.target)):
                    it = g.iter
                    if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) \
                            and it.func.attr in ("items", "values") and not it.args:
                        it = it.func.value
                    base = _root(it)
                    if not isinstance(base, ast.Name):
                        return None
                    return _comprehension_batch(ctx, n, base) or batch_binding(ctx, base)
        n = ctx.parent(n)
    return None


def _mentions_streams(file) -> bool:
    return "stream" in file.source.lower()


def _non_blocking_fix(ctx, call: ast.Call, recv) -> Fix | None:
    """Safe when nothing can touch the pinned source before the copy has run: no CUDA streams in the
    file (a blocking copy also ordered the copy before work on other streams), and the batch is not
    changed in place after the copy."""
    # (once per file: lowering the whole source per call is quadratic in a big module)
    if ctx.file.get(_mentions_streams):
        return None
    root = _root(recv)
    if not isinstance(root, ast.Name):
        return None
    here = end_pos(call)
    if any(p >= here and d.split(".")[0] == root.id for p, d in flow(ctx).changes):
        return None
    edit = add_keyword(ctx, call, "non_blocking", "True")
    return Fix("safe", (edit,), message="add `non_blocking=True`: the batch is pinned (`pin_memory=True`), so the copy "
               "runs on the stream without stopping the host; work queued after it on the same stream sees the data")
