import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.shapes import rank
from syncscan.lint.tensors import CPU, CPUS, HOST, NDARRAY, TENSOR, TENSORS

from ._indexing import annotated_int_list, array_indexed, torch_only_module
from ._util import _SCOPES, element_kind_of, last_assign, short


def _host_list(ctx, e: ast.AST) -> bool:
    if isinstance(e, ast.List):
        return bool(e.elts) and all(not isinstance(x, (ast.Starred, ast.Slice)) and ctx.kind(x) not in (TENSOR, TENSORS)
                                    for x in e.elts)
    if isinstance(e, ast.ListComp):
        return element_kind_of(ctx, e) not in (TENSOR, TENSORS)
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):  # `[int(b / n * i) for i in range(n)] + [-1]`
        return _host_list(ctx, e.left) and _host_list(ctx, e.right)
    # a list made on the host by a builtin: `list(set(range(d)) - set(skip))`, `sorted(dims)`, `range(n)`
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id in _LIST_MAKERS \
            and e.func.id not in ctx.imports and ctx.kind(e.func) is None and len(e.args) >= 1 and not e.keywords[1:]:
        return e.func.id == "range" or ctx.kind(e.args[0]) not in (TENSOR, CPU, TENSORS, CPUS, NDARRAY) \
            and not isinstance(e.args[0], ast.Starred)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "tolist" and not e.args \
            and ctx.kind(e.func.value) in (TENSOR, CPU, NDARRAY) and (rank(ctx, e.func.value) or 0) >= 1:
        return True  # `top_x.tolist()` of a 1-D (or more) tensor or array: a list (of a 0-dim one, a number)
    return isinstance(e, ast.Call) and _returns_host_list(ctx, e)


def _int_items_tested(ctx, e: ast.Name) -> bool:
    """`e` inside the body of `if isinstance(e[0], int):` (or of `all(isinstance(i, int) for i in e)`): the code has
    just made sure it is a sequence of Python ints."""
    child, node = e, ctx.parent(e)
    while node is not None and not isinstance(node, _SCOPES):
        if isinstance(node, ast.If) and child in node.body and _tests_int_items(node.test, e.id):
            return True
        child, node = node, ctx.parent(node)
    return False


def _tests_int_items(test: ast.AST, name: str) -> bool:
    for t in (test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]):
        if isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "all" and len(t.args) == 1 \
                and isinstance(t.args[0], ast.GeneratorExp) and len(t.args[0].generators) == 1:
            gen = t.args[0].generators[0]
            if isinstance(gen.iter, ast.Name) and gen.iter.id == name and isinstance(gen.target, ast.Name) \
                    and _isinstance_int(t.args[0].elt, lambda a: isinstance(a, ast.Name) and a.id == gen.target.id):
                return True
        elif _isinstance_int(t, lambda a: isinstance(a, ast.Subscript) and isinstance(a.value, ast.Name)
                             and a.value.id == name and isinstance(a.slice, ast.Constant)):
            return True
    return False


def _isinstance_int(t: ast.AST, subject) -> bool:
    """`isinstance(<subject>, int)`."""
    return isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == "isinstance" \
        and len(t.args) == 2 and subject(t.args[0]) and isinstance(t.args[1], ast.Name) and t.args[1].id == "int"


def _returns_host_list(ctx, call: ast.Call) -> bool:
    """A call of a function of the module (or one defined in the function around) whose every `return` gives a
    list of an array's or a display's numbers: `.tolist()` (`np.random.choice(n, k).tolist()`) or a display of
    constants (`[0, 2]`)."""
    if ctx.kind(call) != HOST:
        return False
    target = ctx.callee(call)
    if target is None:
        return False
    rets = [n.value for n in ctx.file.src.own_nodes(target[0]) if isinstance(n, ast.Return)]
    return bool(rets) and all(
        isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "tolist" and not v.args
        or isinstance(v, ast.List) and v.elts and all(isinstance(x, ast.Constant) for x in v.elts) for v in rets)


_LIST_MAKERS = frozenset({"list", "sorted", "range"})


def _host_index(ctx, e: ast.AST) -> str | None:
    """What kind of host index `e` is: a Python list, a CPU tensor, a numpy array; None if none."""
    if _host_list(ctx, e):
        return "a Python list"
    k = ctx.kind(e)
    if k == CPU:
        return "a CPU tensor"
    if k == CPUS:
        return "CPU index tensors"  # `x[idx]` with `idx = (batch_idx, src_idx)` made on the host
    if k == NDARRAY:
        return "a numpy array"
    if k in (HOST, None) and isinstance(e, ast.Name):
        a = last_assign(ctx, e.id, e)
        if a is not None and _host_list(ctx, a.value) or annotated_int_list(ctx, e) or _int_items_tested(ctx, e):
            return "a Python list"
    if k in (HOST, None) and _list_attribute(ctx, e):
        return "a Python list"
    return None


# torch functions making a CPU tensor unless handed `device=`
_CPU_MAKERS = frozenset({"torch.randperm", "torch.arange", "torch.randint", "torch.tensor", "torch.as_tensor",
                         "torch.from_numpy", "torch.LongTensor"})


def _torch_made_index(ctx, node: ast.Subscript) -> bool:
    """A part of the index is a CPU tensor torch makes right there (`x[torch.randperm(x.shape[0])]`,
    `scores[torch.arange(n), y]`): shuffling or gathering rows of a tensor whose device the linter does not
    know. A numpy array is not indexed with torch's tensors, so the receiver is a tensor, probably on the device
    the step runs on (low confidence)."""
    sl = node.slice
    return any(isinstance(e, ast.Call) and ctx.call_name(e) in _CPU_MAKERS and ctx.kind(e) == CPU
               for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]))


def _host_tuple(ctx, e: ast.AST) -> bool:
    """A tuple display of host values (`(i, i + 2)`), or a name last bound to one, as one element of a subscript's
    index: torch reads a sequence there as an index tensor it makes on the host (at the top level, `x[(i, j)]` is
    `x[i, j]`: no copy)."""
    if isinstance(e, ast.Name) and ctx.kind(e) == HOST:  # `pair = (o, o + 2)` ... `x[:, pair]`
        a = last_assign(ctx, e.id, e)
        e = a.value if a is not None else e
    if isinstance(e, ast.Attribute) and ctx.kind(e) in (HOST, None):  # `self.pair = (0, 2)` in `__init__`
        return _list_attribute(ctx, e, tuples=True)
    return isinstance(e, ast.Tuple) and bool(e.elts) and all(
        not isinstance(x, (ast.Starred, ast.Slice)) and not (isinstance(x, ast.Constant) and x.value in (None, ...))
        and ctx.kind(x) not in (TENSOR, TENSORS, CPU, CPUS, NDARRAY) for x in e.elts)


def _host_batch(ctx, e: ast.AST) -> bool:
    """A part of a DataLoader batch (or a tensor derived from one on the host: `label.clone()`) that nothing has
    moved to the device yet: the loader's collate made it in host memory."""
    from .syn204_unpinned_copy_to_device import batch_binding, host_root

    root, _ = host_root(e)
    if not isinstance(root, ast.Name):
        return False
    loader = batch_binding(ctx, root)
    return loader is not None and not isinstance(loader, ast.arg)


def _named_sequence(ctx, e: ast.AST) -> bool:
    """A name of unknown kind that the package's signatures annotate as a Python sequence wherever they annotate
    it (`idxs: Sequence[int]`): probably that list (`CrossFile.annotated_sequence`)."""
    return isinstance(e, ast.Name) and ctx.file.modules is not None and ctx.kind(e) is None \
        and e.id not in ctx.imports and ctx.file.modules.annotated_sequence(ctx.file, e.id)


def _list_attribute(ctx, e: ast.AST, tuples: bool = False) -> bool:
    """`self._diag_ix` where every store of it in the class is a list or range made on the host
    (`self._diag_ix = range(features)` in `__init__`); `tuples`: a tuple of them (`self.pair = (0, 2)`), for
    an element of an index (at its top level a tuple is the index itself)."""
    from syncscan.lint.shapes import attr_stores

    if not (isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == "self") \
            or ctx.function is None:
        return False
    cls = ctx.file.index.class_of(ctx.function)
    stores = attr_stores(ctx, cls).get(e.attr) if cls is not None else None
    if tuples:
        return bool(stores) and all(at is None and _literal_tuple(v) for v, _, at in stores)
    return bool(stores) and all(at is None and isinstance(v, (ast.List, ast.ListComp, ast.Call, ast.BinOp))
                                and _literal_list(v) for v, _, at in stores)


def _literal_tuple(v: ast.AST) -> bool:
    """A tuple of int constants (`(0, 2)`), or `tuple(...)` of a literal list or range."""
    if isinstance(v, ast.Tuple):
        return bool(v.elts) and all(isinstance(x, ast.Constant) and type(x.value) is int for x in v.elts)
    return isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id == "tuple" and len(v.args) == 1 \
        and not v.keywords and _literal_list(v.args[0])


def _literal_list(v: ast.AST) -> bool:
    """A list or range whose making reads no tensor, judged from its text alone (the store is in another method):
    a display of constants, `range(...)` / `list(range(...))` of names and numbers."""
    if isinstance(v, ast.List):
        return bool(v.elts) and all(isinstance(x, ast.Constant) and type(x.value) is int for x in v.elts)
    if isinstance(v, ast.BinOp) and isinstance(v.op, ast.Add):
        return _literal_list(v.left) and _literal_list(v.right)
    if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and not v.keywords:
        if v.func.id == "range":
            return all(isinstance(a, (ast.Constant, ast.Name, ast.BinOp, ast.Attribute)) for a in v.args)
        if v.func.id == "list" and len(v.args) == 1:
            return _literal_list(v.args[0])
    return False


class HostIndex(Rule):
    code = "SYN206"
    name = "host-index"
    summary = ("Indexing a tensor that may live on the GPU with a host index: a Python list (`x[[1, 2, 3]]`), "
               "a CPU index tensor (`x[idx_cpu]`, `x[torch.arange(n)]`), a numpy array; reading or writing.")
    why = ("Advanced indexing needs the index on the tensor's device, so PyTorch first copies the host index "
           "there: a blocking copy from pageable memory that waits for all queued GPU work.")
    rewrite = ("Make the index on the device once, outside the step (`torch.arange(n, device=x.device)`, a "
               "buffer registered in `__init__`), or use a slice for a contiguous range (`x[1:4]`, a view). "
               "Indices that must come from the host (a Hungarian matcher's `linear_sum_assignment`) are copied "
               "once where they are made (`torch.as_tensor(i, device=dev)`), not at every use.")
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "keep index tensors on the device; index_select with a CUDA index"
    footprint = Footprint(ops=1, keeps_gpu_work=True)  # a device index: the gather stays
    bad = (
        Bad("""
import numpy as np
import torch
def augment(batch_x, model):
    shuffled = batch_x[torch.randperm(batch_x.shape[0])]  # rows of a tensor of unknown device: probably the GPU
    return model(batch_x) - model(shuffled)
""", line=5),
        Bad("""
import torch
def extract(x: torch.Tensor, indeces, rows):
    if isinstance(indeces[0], int):  # the code made sure: a list of Python ints
        x = x[..., indeces]
    if all(isinstance(i, int) for i in rows):
        x = x[rows]
    return x
""", line=5, count=2),
        Bad("""
import torch
def forward(self, x):
    return x[[0, 2, 5]]
""", line=4),
        Bad("""
import torch
def check(X: torch.Tensor, ignore_dims: list):
    check_dims = list(set(range(X.shape[-1])) - set(ignore_dims))  # a Python list
    return X[..., check_dims], X[:, range(2)], X[sorted(ignore_dims)]
""", line=5, count=3),
        Bad("""
import torch
class MixtureHead(torch.nn.Module):
    def __init__(self, features):
        super().__init__()
        self._diag_ix = range(features)  # a range: a host index
    def forward(self, precision_factors, diagonal):
        precision_factors[..., self._diag_ix, self._diag_ix] = diagonal
        return precision_factors
""", line=8),
        Bad("""
import torch
def grid_from_samples(x, n):
    x_pos = torch.sort(x, dim=0)[0]
    ids = [int(x.shape[0] / n * i) for i in range(n)] + [-1]  # a Python list
    return x_pos[ids, :]
""", line=6),
        Bad("""
import torch
def forward(self, x):
    perm = torch.randperm(x.shape[0])
    x[:, perm] = 0.0
    return x[perm]
""", line=5, count=2),
        Bad("""
import numpy as np
import torch
def forward(self, x):
    keep = [0, 1, 3]
    sel = np.array([1, 2])
    return x[:, keep], x[sel]
""", line=7, count=2),
        Bad("""
import torch
from scipy.optimize import linear_sum_assignment
class Matcher(torch.nn.Module):
    def forward(self, cost):
        pairs = [linear_sum_assignment(c) for c in cost.cpu()]
        return [(torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64)) for i, j in pairs]
class Loss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.matcher = Matcher()
    def _src_idx(self, indices):
        batch = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
        return batch, torch.cat([src for (src, _) in indices])
    def forward(self, pred_boxes, targets, cost):
        indices = self.matcher(cost)  # CPU index tensors (scipy's assignment)
        target_boxes = torch.cat([t["boxes"][j] for t, (_, j) in zip(targets, indices)])
        return (pred_boxes[self._src_idx(indices)] - target_boxes).abs().sum()
""", line=17, count=2),
        Bad("""
import torch
from torchvision.ops import boxes as box_ops
def channels(image: torch.Tensor, order: list[int]):
    corners = box_ops.box_convert(image, "xyxy", "cxcywh")  # what it returns is not known here
    return image[:, order], corners[:, [0, 2]]
""", line=6, count=2),
        Bad("""
import torch
from scipy.optimize import linear_sum_assignment
class HungarianMatcher(torch.nn.Module):
    def forward(self, cost):
        pairs = [linear_sum_assignment(c) for c in cost.cpu()]
        return [(torch.as_tensor(i, dtype=torch.int64), torch.as_tensor(j, dtype=torch.int64)) for i, j in pairs]
class SetLoss(torch.nn.Module):
    def __init__(self, matcher):
        super().__init__()
        self.matcher = matcher
    def loss_labels(self, logits, targets, indices):  # called through `loss_map`, with the matcher's indices
        return torch.cat([t["labels"][j] for t, (_, j) in zip(targets, indices)])
    def get_loss(self, name, logits, targets, indices):
        loss_map = {"labels": self.loss_labels}
        return loss_map[name](logits, targets, indices)
    def forward(self, logits, targets, cost):
        indices = self.matcher(cost)
        return self.get_loss("labels", logits, targets, indices)
def build_criterion():
    matcher = HungarianMatcher()
    return SetLoss(matcher=matcher)
""", line=13),
        Bad("""
import torch
def orientations(coeffs: torch.Tensor, o: int):
    pair = (o, o + 2)
    return coeffs[:, (o, o + 2)].abs(), coeffs[..., pair]  # a tuple inside the index: a sequence of indices
""", line=5, count=2),
        Bad("""
import torch
def prune_out_channels(layer, keep: list | None = None):
    if keep is not None:
        layer.weight.data = layer.weight.data[keep]  # a layer's weight, whatever `layer` is; a list
""", line=5),
        Bad("""
import numpy as np
import torch
def pick(n, k):
    return np.random.choice(n, k).tolist()
def draw(x: torch.Tensor, k: int):
    return x[pick(x.shape[0], k)]  # every return of `pick` is a Python list
""", line=7),
        Bad("""
import torch
class Pair(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.pair = (0, 2)  # a tuple of ints kept on the module
    def forward(self, x: torch.Tensor):
        return x[..., self.pair, :]  # inside the index: a sequence of indices, made into a tensor on the host
""", line=8),
        Bad("""
import torch
def lower(h22: torch.Tensor, n: int):
    L = torch.zeros((h22.shape[0], n, n), device=h22.device)
    indices = torch.tril_indices(row=n, col=n, offset=-1)  # given no device: made on the host
    L[:, indices[0], indices[1]] = h22
    return L
""", line=6),
        Bad("""
import torch
def moe(x: torch.Tensor, expert_mask: torch.Tensor, experts):
    out = torch.zeros_like(x)
    for e, expert in enumerate(experts):
        idx, top_x = torch.where(expert_mask[e])
        top_x_list = top_x.tolist()  # a 1-D tensor's list: indexing with it copies it back to the device
        out.index_add_(0, top_x, expert(x[None, top_x_list]))
    return out
""", line=8),
        Bad("""
from typing import List, Optional
import numpy as np
import torch
def to_tensor(x, dtype=None) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x
    return torch.from_numpy(np.array(x)).type(dtype)
class Dice(torch.nn.Module):
    def __init__(self, classes: Optional[List[int]] = None):
        super().__init__()
        if classes is not None:
            classes = to_tensor(classes, dtype=torch.long)  # a list handed in: a host tensor comes back
        self.classes = classes
    def forward(self, y_pred, y_true):
        loss = (y_pred - y_true).abs().mean(0)
        if self.classes is not None:
            loss = loss[self.classes]
        return loss.mean()
""", line=18),
    )
    good = (
        Good("""
import numpy as np
import torch
def augment(batch_x, model):
    shuffled = batch_x[torch.randperm(batch_x.shape[0], device=batch_x.device)]  # made on the tensor's device
    return model(batch_x) - model(shuffled)
"""),
        Good("""
import torch
def extract(x: torch.Tensor, indeces):
    if isinstance(indeces[0], int):
        return x.narrow(-1, indeces[0], 1)  # a number, not a list index
    return x[..., indeces]  # (not tested: what the caller hands in)
"""),
        Good("""
import torch
class Corner(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.at = (0, 2)
    def forward(self, x: torch.Tensor):
        return x[self.at]  # the whole index: `x[0, 2]`, basic indexing
"""),
        Good("""
import torch
def corners(x: torch.Tensor, i: int):
    pair = (i, i + 1)
    return x[(i, 0)], x[pair], x[i, 1:3]  # a tuple at the top level is the index itself: basic indexing
"""),
        Good("""
import torch
def train(model, loader, opt, device):
    for x, label in loader:
        target = label[torch.randperm(label.size(0))]  # a batch, still on the host: indexed there
        model(x.to(device), target.to(device)).backward()
        opt.step()
"""),
        Good("""
import torch
def check(X: torch.Tensor, skip: list):
    cpu = torch.zeros(4, 3)
    return cpu[:, list(range(2))], X[..., 1:], X[[]]  # a host tensor; a slice; no list
"""),
        Good("""
import torch
from scipy.optimize import linear_sum_assignment
class HungarianMatcher(torch.nn.Module):
    def forward(self, cost):
        pairs = [linear_sum_assignment(c) for c in cost.cpu()]
        dev = cost.device  # the indices copied to the device once, where they are made
        return [(torch.as_tensor(i, device=dev), torch.as_tensor(j, device=dev)) for i, j in pairs]
class SetLoss(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.matcher = HungarianMatcher()
    def forward(self, logits, targets, cost):
        indices = self.matcher(cost)
        return torch.cat([t["labels"][j] for t, (_, j) in zip(targets, indices)])
"""),
        Good("""
import numpy as np
def corners(boxes):
    b = np.asarray(boxes)
    return b[:, [0, 2]], lookup(b)[:, [1, 3]]  # numpy arrays (the module uses numpy)
"""),
        Good("""
import torch
def forward(self, x, idx):
    perm = torch.randperm(x.shape[0], device=x.device)
    return x[perm], x[idx], x[0, 1:3], x[..., None]
"""),
        Good("""
import torch
def f(rows):
    table = torch.zeros(10, 3)  # a CPU tensor indexed on the host
    return table[[0, 1]], table[torch.arange(2)], rows[[0, 1]]
"""),
        Good("""
import torch
def forward(self, x):
    idx = torch.tensor([0, 2], device=x.device)  # on the device (SYN202 reports its copy)
    return x[idx], x[x.argsort()[:2]]
"""),
        Good("""
import torch
def pick(x, k):
    return torch.randperm(x.shape[0], device=x.device)[:k]
def draw(x: torch.Tensor, k: int):
    return x[pick(x, k)]
"""),
    )

    def visit_For(self, node, ctx):
        from .syn204_unpinned_copy_to_device import note_loader_loop

        note_loader_loop(ctx, node)

    visit_AsyncFor = visit_For

    def visit_Subscript(self, node, ctx):
        k = ctx.kind(node.value)
        made_here = k is None and _torch_made_index(ctx, node)
        if k != TENSOR and not made_here and not (k is None and array_indexed(node) and torch_only_module(ctx)):
            return  # (`a[:, [0, 2]]` of an unknown `a` in a module using no other array library: a tensor)
        sl = node.slice
        for e in (sl.elts if isinstance(sl, ast.Tuple) else [sl]):
            what = _host_index(ctx, e)
            if what is None and e is not sl and _host_tuple(ctx, e):
                what = "a Python tuple"  # `x[:, (i, i + 2)]`: a sequence inside the index is an advanced index
            probable = what is None and _named_sequence(ctx, e)
            if probable:
                what = "a Python list"
            if what is not None:
                if k == TENSOR and _host_batch(ctx, node.value):
                    return  # a DataLoader batch not yet moved: indexed on the host
                verb = "writing through" if isinstance(node.ctx, ast.Store) else "indexing with"
                made = ("copy the indices to the device once, where they are made (`torch.as_tensor(i, device=dev)`"
                        " in a matcher), not at every use") if "CPU" in what else \
                    ("make the index on the device once, outside the step (e.g. `torch.arange(n, device=x.device)` "
                     "or a buffer), or use a slice for a contiguous range")
                self.report(ctx, node, f"`{short(ctx, node)}` syncs: {verb} {what} copies the index to the device "
                            "first, a blocking copy that waits for all queued GPU work", made,
                            confidence="low" if probable or made_here else None)
                return
