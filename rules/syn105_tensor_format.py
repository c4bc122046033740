import ast
import re

from syncscan.lint.rule import TORCH_CODE, Bad, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR, TENSORS

from ._dataflow import flow_of
from ._util import is_builtin, lazy_message, short, statement_of, surely_tensor

# `debug` is left out: it formats only when debugging, not in a run that is being made fast
LOG_METHODS = frozenset({"info", "warning", "warn", "error", "critical", "exception", "log"})
_LOGGER_WORDS = ("log", "logger", "logging", "_logger", "LOGGER", "LOG", "_log")


def _is_logger(ctx, recv: ast.AST) -> bool:
    q = ctx.qualname(recv)
    if q in ("logging", "loguru.logger"):
        return True
    name = recv.id if isinstance(recv, ast.Name) else recv.attr if isinstance(recv, ast.Attribute) else ""
    low = name.lower()
    return low in ("log", "logger", "logging", "_logger", "_log", "lgr") or low.endswith("_logger")


class TensorFormat(Rule):
    code = "SYN105"
    name = "tensor-format"
    summary = ("Formatting a tensor that may live on the GPU as text: `print(t)`, `str(t)`, `repr(t)`, an "
               "f-string `{t}`, `'%s' % t`, `'{}'.format(t)`, `logger.info('%s', t)`, "
               "`fmt.format(**self.__dict__)` of an instance holding a tensor.")
    why = ("Text needs the values on the host: formatting copies the tensor (every element, for `print(t)` "
           "one copy per element: 134 syncs measured for 64 elements), and each copy waits for all queued GPU "
           "work. A logging call formats only when its level is enabled, then it syncs the same way.")
    rewrite = ("Log rarely, and after one batched copy: keep detached values (`loss.detach()`) in a list or a "
               "running sum on the device and print them every N steps with one `torch.stack(vals).tolist()`; "
               "format shapes and dtypes (host values) freely.")
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "format tensors rarely, after one batched copy to the host"
    footprint = Footprint()  # format rarely: nothing per step
    bad = (
        Bad("""
import torch
def train(model, loader, opt):
    for x, y in loader:
        loss = model(x).sum()
        loss.backward()
        opt.step()
        print("loss", loss)
""", line=8),
        Bad("""
import torch
def forward(self, x):
    y = x.softmax(-1)
    msg = f"max prob {y.max():.3f}"
    return y, msg
""", line=5),
        Bad("""
import logging
logger = logging.getLogger(__name__)
def compute_loss(pred, target):
    loss = (pred - target).pow(2).mean()
    logger.info("loss %s", loss)
    return loss
""", line=6),
        Bad("""
def train_epoch(model, loader, opt, criterion, epoch):
    for batch_idx, (x, y) in enumerate(loader):
        loss = criterion(model(x), y)
        loss.backward()
        opt.step()
        if batch_idx % 10 == 0:
            msg = (
                "Epoch: {:03d} | Batch: {:03d}"
                " | Loss: {:.5f}"
            )
            print(msg.format(epoch, batch_idx, loss))  # the template is a string: `loss` is formatted
""", line=12),
        Bad("""
def forward(self, x):
    s = str(x.mean()) + repr(x.abs()) + "%.2f" % x.std() + "{}".format(x.max())
    return s
""", line=3, count=4),
        Bad("""
import torch
class Meter:
    def __init__(self, name, fmt=':f'):
        self.name, self.fmt = name, fmt
        self.val = 0
    def update(self, val):
        self.val = val
    def __str__(self):
        fmtstr = '{name} {val' + self.fmt + '}'
        return fmtstr.format(**self.__dict__)  # `val` holds the accuracy tensor of `top1`
def train(model, loader, opt):
    top1 = Meter('Acc@1')
    data_time = Meter('Data')
    for x, y in loader:
        acc = (model(x).argmax(1) == y).float().mean()
        top1.update(acc)
        data_time.update(0.1)
        print(top1)
""", line=11),
        Bad("""
import torch
def train(model, loader, opt, pbar, device):
    mloss = torch.zeros(3, device=device)
    for i, (x, y) in enumerate(loader):
        losses = model(x, y)
        losses.sum().backward()
        opt.step()
        mloss = (mloss * i + losses.detach()) / (i + 1)
        pbar.set_description(("%10s" + "%10.4g" * 3) % (f"{i}", *mloss))  # each element formatted on the host
""", line=10),
        Bad("""
import torch
from einops import repeat
from torch import nn
from tqdm import tqdm
class Schedule(nn.Module):
    def forward(self, num_steps: int, device):
        raise NotImplementedError()
class LinearSchedule(Schedule):
    def forward(self, num_steps: int, device):
        return torch.linspace(1.0, 0.0, num_steps, device=device)
class Sampler(nn.Module):
    def __init__(self, net: nn.Module, schedule: Schedule = LinearSchedule()):  # the default's forward runs
        super().__init__()
        self.net = net
        self.schedule = schedule
    @torch.no_grad()
    def forward(self, x: torch.Tensor, num_steps: int):
        sigmas = repeat(self.schedule(num_steps + 1, device=x.device), "i -> i b", b=x.shape[0])
        bar = tqdm(range(num_steps))
        for i in bar:
            x = self.net(x, sigmas[i])
            bar.set_description(f"noise={sigmas[i + 1, 0]:.2f}")
        return x
""", line=23),
    )
    good = (
        Good("""
import torch
def log(x: torch.Tensor):
    metrics = {"mean": x.mean(), "std": x.std()}
    for k in metrics:  # a dict's keys: strings
        print(f"{k}")
"""),
        Good("""
import torch
def forward(self, x):
    print(f"shape {x.shape} dtype {x.dtype} on {x.device}", x.size(0), str(x.dim()))
    return x
"""),
        Good("""
import torch
def forward(self, x):
    if x.dim() != 4:
        raise ValueError(f"expected 4-D input, got {x}")  # only formatted on the error path
    return x
"""),
        Good("""
import torch
def f(x: torch.Tensor):
    c = x.cpu()
    print(c, f"{c.sum()}")  # a host tensor
"""),
        Good("""
def f(step, lr):
    print(f"step {step} lr {lr:.3e}", "%d" % step)
"""),
        Good("""
import torch
class Meter:
    def __init__(self, name):
        self.name, self.count, self.val = name, 0, 0
    def update(self, val):
        self.val = val
        self.count += 1
    def summary(self):
        lines = ['{name}', 'steps: {count}']
        return '\\n'.join(lines).format(**self.__dict__)  # names no tensor field
def train(model, loader):
    meters = {'loss': Meter('loss')}
    for x, y in loader:
        meters['loss'].update(model(x).sum())
    print(meters['loss'].summary())
"""),
    )

    def visit_Call(self, node, ctx):
        f = node.func
        b = is_builtin(ctx, f, "print", "str", "repr", "format", "ascii")
        if b is not None:
            args = node.args if b == "print" else node.args[:1]
            for a in args:
                if isinstance(a, ast.Starred):
                    continue
                if surely_tensor(ctx, a):
                    self._report(ctx, node, a, f"`{b}()`")
            return
        if not isinstance(f, ast.Attribute):
            return
        if f.attr in ("format", "format_map"):
            self._instance_fields(ctx, node)
        if f.attr == "format" and (isinstance(f.value, ast.Constant) and isinstance(f.value.value, str)
                                   or isinstance(f.value, ast.Name) and _format_fields(ctx, f.value, node)[1]):
            # (a literal, or a name every binding of which here is one: `msg = "Loss: {:.5f}"` ... `msg.format(loss)`)
            for a in list(node.args) + [k.value for k in node.keywords]:
                if surely_tensor(ctx, a):
                    self._report(ctx, node, a, "`str.format`")
        elif f.attr in LOG_METHODS and _is_logger(ctx, f.value) and len(node.args) > 1:
            for a in node.args[1:] if f.attr != "log" else node.args[2:]:
                if surely_tensor(ctx, a):
                    self._report(ctx, node, a, f"`{short(ctx, f, 30)}` (when the level is enabled)")
        elif f.attr == "set_postfix":  # tqdm formats every value with str()
            for a in list(node.args) + [k.value for k in node.keywords if k.arg]:
                if surely_tensor(ctx, a):
                    self._report(ctx, node, a, "tqdm's `set_postfix`")

    def visit_FormattedValue(self, node, ctx):
        if surely_tensor(ctx, node.value) and not _on_error_path(ctx, node):
            self.report(ctx, node.value, f"`{short(ctx, node.value)}` in an f-string syncs: formatting copies the "
                        "tensor to the host, which waits for all queued GPU work", _SUGGEST)

    def visit_BinOp(self, node, ctx):
        if not (isinstance(node.op, ast.Mod) and _text(node.left)):
            return
        r = node.right
        for a in (r.elts if isinstance(r, ast.Tuple) else [r]):
            # (`"%g %g" % (*losses.values(),)`, `"%g" * 3 % (*mloss,)`: each unpacked tensor or element of a
            # tensor is formatted)
            hit = ctx.kind(a.value) == TENSORS or surely_tensor(ctx, a.value) if isinstance(a, ast.Starred) \
                else surely_tensor(ctx, a)
            if hit and not _on_error_path(ctx, node):
                self._report(ctx, node, a, "`%`-formatting")

    def _instance_fields(self, ctx, node):
        """`fmt.format(**self.__dict__)`, `fmt.format_map(vars(self))`: every attribute of the instance is
        offered to the format string; those it names are formatted. Flagged when some attribute of the class
        holds a tensor: at full confidence when the format string's text names it, of low confidence when the
        text is not known, not at all when the text is known and names none."""
        spread = [k.value for k in node.keywords if k.arg is None] if node.func.attr == "format" else node.args[:1]
        if not any(_instance_dict(v) for v in spread) or _on_error_path(ctx, node):
            return
        tensors = sorted(a for a, k in ctx.infer.env.self_attrs.items() if k == TENSOR)
        if not tensors:
            return
        named, complete = _format_fields(ctx, node.func.value, node)
        hit = [a for a in tensors if a in named]
        if complete and not hit:
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: formatting the instance's attributes copies the tensor "
                    f"`self.{(hit or tensors)[0]}` to the host as text, which waits for all queued GPU work", _SUGGEST,
                    confidence=None if hit else "low")

    def _report(self, ctx, node, arg, what):
        if _on_error_path(ctx, node):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: {what} copies the tensor `{short(ctx, arg, 30)}` to the "
                    "host as text, which waits for all queued GPU work", _SUGGEST)


_SUGGEST = ("format host values (`x.shape`, `x.dtype`); log the tensor rarely, after one batched copy "
            "(`torch.stack(vals).tolist()` every N steps)")


def _instance_dict(e: ast.AST) -> bool:
    """`self.__dict__` or `vars(self)`."""
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and e.func.id == "vars" and len(e.args) == 1:
        e = e.args[0]
    elif isinstance(e, ast.Attribute) and e.attr == "__dict__":
        e = e.value
    else:
        return False
    return isinstance(e, ast.Name) and e.id == "self"


_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)")


def _format_fields(ctx, fmt: ast.AST, at: ast.AST, depth: int = 0) -> tuple[set[str], bool]:
    """(the field names a format string's text names, whether the whole text is known): from a literal,
    literals joined with `+` (`'{name} {val' + self.fmt + '}'`: its names, not complete) or `sep.join`, or
    a name every assignment reaching here gives such a value."""
    if isinstance(fmt, ast.Constant) and isinstance(fmt.value, str):
        return set(_FIELD.findall(fmt.value)), True
    parts: list[ast.AST] = []
    if isinstance(fmt, ast.BinOp) and isinstance(fmt.op, ast.Add):
        parts = [fmt.left, fmt.right]
    elif isinstance(fmt, (ast.List, ast.Tuple)):
        parts = fmt.elts
    elif isinstance(fmt, ast.Call) and isinstance(fmt.func, ast.Attribute) and fmt.func.attr == "join" \
            and len(fmt.args) == 1 and not fmt.keywords:
        parts = [fmt.func.value, fmt.args[0]]  # `"\n".join(lines)` of a list of literals
    if parts:
        names, complete = set(), True
        for part in parts:
            n, c = _format_fields(ctx, part, at, depth)
            names |= n
            complete = complete and c
        return names, complete
    if isinstance(fmt, ast.Name) and depth < 3:
        bindings = flow_of(ctx).before(statement_of(ctx, at), fmt.id)
        if bindings and all(b.how == "assign" and b.value is not None for b in bindings):
            names, complete = set(), True
            for b in bindings:
                n, c = _format_fields(ctx, b.value, at, depth + 1)
                names |= n
                complete = complete and c
            return names, complete
    return set(), False


def _on_error_path(ctx, node) -> bool:
    """Inside a `raise` statement, an `assert`'s message or a lazy check message: formatted only when
    failing."""
    if lazy_message(ctx, node):
        return True
    st = statement_of(ctx, node)
    if isinstance(st, ast.Raise):
        return True
    if isinstance(st, ast.Assert) and st.msg is not None:
        n = node
        while n is not None and n is not st:
            if n is st.msg:
                return True
            n = ctx.parent(n)
    return False


def _text(e: ast.AST) -> bool:
    """A string built of literals: `"%g"`, `"%11s" * 2 + "%11.4g" * 5`, an f-string."""
    if isinstance(e, ast.Constant):
        return isinstance(e.value, str)
    if isinstance(e, ast.JoinedStr):
        return True
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add):
        return _text(e.left) and _text(e.right)
    if isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult):
        return _text(e.left) or _text(e.right)
    return False
