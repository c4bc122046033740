import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR

from ._util import kwarg, short, surely_tensor

# Arguments typed `Scalar` (a Python number) in every overload of the op (torch's schemas:
# benchmarks/scalar_args_sync.py lists them and checks each on a GPU): a tensor handed there is
# turned into a number with `.item()`. Arguments with a `Tensor` overload (`lerp`'s weight,
# `clamp`'s bounds, `fill_`'s value, `add`'s other) take a device tensor as it is.
# name -> ((position or None, keyword), ...); the positions of torch.* functions count the input.
_SCALE = (None, "alpha")
_GEMM = ((None, "beta"), (None, "alpha"))
_VALUE = ((None, "value"),)
FUNCS = {
    **{f"torch.{n}": (_SCALE,) for n in ("add", "sub", "subtract", "rsub", "index_add")},
    **{f"torch.{n}": _GEMM for n in ("addmm", "addmv", "addr", "addbmm", "baddbmm")},
    "torch.addcmul": _VALUE, "torch.addcdiv": _VALUE,
    "torch.renorm": ((1, "p"), (3, "maxnorm")),
    "torch.full_like": ((1, "fill_value"),),
    "torch.nn.functional.leaky_relu": ((1, "negative_slope"),),
    "torch.nn.functional.leaky_relu_": ((1, "negative_slope"),),
    "torch.nn.functional.elu": ((1, "alpha"),), "torch.nn.functional.elu_": ((1, "alpha"),),
    "torch.nn.functional.softplus": ((1, "beta"), (2, "threshold")),
    "torch.nn.functional.hardtanh": ((1, "min_val"), (2, "max_val")),
    "torch.nn.functional.hardtanh_": ((1, "min_val"), (2, "max_val")),
    "torch.nn.functional.threshold": ((1, "threshold"), (2, "value")),
    "torch.nn.functional.threshold_": ((1, "threshold"), (2, "value")),
    # (their Tensor overloads read a device start / end on the host too: torch's OpInfo sweep,
    # benchmarks/opinfo_sync.py, "linspace.tensor_overload")
    "torch.linspace": ((0, "start"), (1, "end")), "torch.logspace": ((0, "start"), (1, "end")),
}
# the rewrite where "multiply by it" does not fit
_SUGGEST = {
    "linspace": "scale a device-free grid on the device: `start + (end - start) * torch.linspace(0, 1, steps, "
                "device=dev)`",
    "logspace": "scale a device-free grid on the device: `base ** (start + (end - start) * torch.linspace(0, 1, "
                "steps, device=dev))`",
}
# tensor methods: the same for `x.<method>(...)` (positions after the receiver)
METHODS = {
    **{n: (_SCALE,) for n in ("add", "add_", "sub", "sub_", "subtract", "subtract_", "index_add", "index_add_")},
    **{n + s: _GEMM for n in ("addmm", "addmv", "addr", "addbmm", "baddbmm") for s in ("", "_")},
    **{n + s: _VALUE for n in ("addcmul", "addcdiv") for s in ("", "_")},
    "renorm": ((0, "p"), (2, "maxnorm")), "renorm_": ((0, "p"), (2, "maxnorm")),
}
# the product each fused op adds to its input: (a, b) -> source
_PRODUCT = {
    "addmm": "{a} @ {b}", "addmv": "{a} @ {b}", "baddbmm": "{a} @ {b}", "addbmm": "({a} @ {b}).sum(0)",
    "addr": "torch.outer({a}, {b})", "addcmul": "{a} * {b}", "addcdiv": "{a} / {b}",
}
# where the tensor that `alpha=` scales sits: torch.<op>(input, other) / x.<op>(other) ...
_SCALED = {"add": 1, "sub": 1, "subtract": 1, "index_add": 3}
_TIGHT = (ast.Name, ast.Attribute, ast.Call, ast.Subscript)
_PRODUCTS = (ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.MatMult)


def _factor(ctx, e: ast.AST, first: bool) -> str:
    """`e`'s source as a factor of a product: parenthesised unless it binds at least as tightly (a
    product on the left: `a * b * y` keeps the order of evaluation)."""
    t = ctx.text(e)
    if isinstance(e, _TIGHT) or isinstance(e, ast.Constant) and isinstance(e.value, (int, float)) \
            and not isinstance(e.value, bool) and e.value >= 0 or \
            first and isinstance(e, ast.BinOp) and isinstance(e.op, _PRODUCTS) or \
            isinstance(e, ast.BinOp) and isinstance(e.op, ast.Pow) or \
            isinstance(e, ast.UnaryOp) and not isinstance(e.op, ast.Not):  # `y * -a`: unary minus binds tighter
        return t
    return f"({t})"


def _scaled(ctx, coef: ast.AST, term: str) -> tuple[str, str]:
    """(`+` or `-`, `coef * term`): `-rho` as a coefficient subtracts `rho * term`."""
    if isinstance(coef, ast.UnaryOp) and isinstance(coef.op, ast.USub):
        return "-", f"{_factor(ctx, coef.operand, True)} * {term}"
    return "+", f"{_factor(ctx, coef, True)} * {term}"


class TensorAsScalarArgument(Rule):
    code = "SYN109"
    name = "tensor-as-scalar-argument"
    summary = ("A tensor that may live on the GPU passed where torch takes a Python number (`Scalar`): `alpha=` / "
               "`beta=` of `add`, `sub`, `addmm`, `addmv`, `addr`, `addbmm`, `baddbmm`, `index_add`; `value=` of "
               "`addcmul` / `addcdiv`; `F.leaky_relu`'s slope, `F.elu`'s alpha, `F.hardtanh`'s bounds ...")
    why = ("Those arguments are `Scalar` in every overload of the op, so Python's argument parser turns the "
           "0-dim tensor into a number with `.item()`: a copy to the host that waits for all queued GPU work, on "
           "every call. (`lerp`'s weight, `clamp`'s bounds, `fill_`'s value and `add`'s second operand have a "
           "`Tensor` overload and take a device tensor as it is: measured on an H100, "
           "docs/data/scalar-args-sync-2026-11-26.json.)")
    rewrite = ("Keep the coefficient on the device and do the arithmetic with tensors: `d.add_(y * a)` for "
               "`d.add_(y, alpha=a)`, `M - rho * torch.outer(s, y)` for `torch.addr(M, s, y, alpha=-rho)`, "
               "`b * C + a * (A @ B)` for `torch.addmm(C, A, B, beta=b, alpha=a)`, `x + v * t1 * t2` for "
               "`torch.addcmul(x, t1, t2, value=v)`.")
    fix_safety = "unsafe"
    fix_assumption = ("the product is rounded once more (the fused op scales inside its kernel), and `beta=0` no "
                      "longer drops NaN/inf of the input: equal up to rounding for finite values.")
    triggers = TORCH_CODE
    ops = ()  # the read is `.item()`'s (aten::item / aten::_local_scalar_dense, SYN101's), before the op runs
    rewrite_hint = "multiply by the 0-dim tensor on the device: d.add_(y * a), not d.add_(y, alpha=a)"
    footprint = Footprint(ops=1)  # the separate multiply
    bad = (
        Bad("""
import torch
def forward(self, x: torch.Tensor):
    lo, hi = x.amin(), x.amax()
    return torch.linspace(lo, hi, 16, device=x.device)
""", line=5),
        Bad("""
import torch
def two_loop(d, ys, ss, rho):
    for i in range(len(ys)):
        a = ss[i].dot(d) * rho[i]
        d.add_(ys[i], alpha=-a)
    return d
""", line=6, fixed="""
import torch
def two_loop(d, ys, ss, rho):
    for i in range(len(ys)):
        a = ss[i].dot(d) * rho[i]
        d.add_(ys[i] * -a)
    return d
""", unsafe=True),
        Bad("""
import torch
def update(H, I, s, y):
    rho = y.dot(s).reciprocal()
    R = torch.addr(I, s, y, alpha=-rho)
    return R @ H @ R.t() + rho * torch.outer(s, s)
""", line=5, fixed="""
import torch
def update(H, I, s, y):
    rho = y.dot(s).reciprocal()
    R = I - rho * torch.outer(s, y)
    return R @ H @ R.t() + rho * torch.outer(s, s)
""", unsafe=True),
        Bad("""
import torch
class Optimizer:
    def __init__(self, x, size):
        self.alpha = x.new_empty(size)
    def step(self, d, y, i, beta):
        d.add_(y, alpha=self.alpha[i] - beta)
""", line=7, fixed="""
import torch
class Optimizer:
    def __init__(self, x, size):
        self.alpha = x.new_empty(size)
    def step(self, d, y, i, beta):
        d.add_(y * (self.alpha[i] - beta))
""", unsafe=True),
        Bad("""
import torch
def blend(c, a, b):
    w = torch.sigmoid(c.mean())
    return torch.addmm(c, a, b, beta=1 - w, alpha=w)
""", line=5, fixed="""
import torch
def blend(c, a, b):
    w = torch.sigmoid(c.mean())
    return (1 - w) * c + w * (a @ b)
""", unsafe=True),
        Bad("""
import torch
def ema(avg, x, decay: torch.Tensor):
    return avg.addcmul_(x, x, value=1 - decay)
""", line=4, fixed="""
import torch
def ema(avg, x, decay: torch.Tensor):
    return avg.add_((1 - decay) * (x * x))
""", unsafe=True),
        Bad("""
import torch
import torch.nn.functional as F
def forward(self, x):
    slope = torch.sigmoid(self.slope_logit)
    return F.leaky_relu(x, slope) + F.hardtanh(x, max_val=x.abs().max())
""", line=6, count=2),
        Bad("""
import torch
def step(p, grad, lr: torch.Tensor):
    torch.addr(p, grad, grad, alpha=lr, out=p)  # no fix: `out=`
""", line=4),
        Bad("""
import torch
def two_loop(state, flat_grad: torch.Tensor, old_dirs: list[torch.Tensor], old_stps: list[torch.Tensor], ro):
    al = state["al"]
    q = flat_grad.neg()
    for i in range(len(old_dirs) - 1, -1, -1):
        al[i] = old_stps[i].dot(q) * ro[i]  # a tensor written into `al`: read back as one
        q.add_(old_dirs[i], alpha=-al[i])
    return q
""", line=8),
        Bad("""
import torch
from .utils import to_vec
def finite_difference(problem, vector, r):
    eps = r / to_vec(vector).norm()  # a norm: a tensor (probably: `to_vec` is not seen)
    for p, v in zip(problem.trainable_parameters(), vector):
        p.data.add_(v.data, alpha=eps)  # `p` is not seen either, but only a tensor takes `add_(..., alpha=)`
    return eps
""", line=7),
    )
    good = (
        Good("""
import torch
def step(p, grad, lr: float):
    p.add_(grad, alpha=-lr)  # a Python number
"""),
        Good("""
import torch
def step(params, grads, group):
    for p, g in zip(params, grads):
        p.data.add_(g, alpha=-group["lr"])  # unknown: a hyperparameter, a number as a rule
"""),
        Good("""
import torch
def step(p, state, grad):
    if "exp_avg" not in state:
        state["exp_avg"] = torch.zeros_like(p)
    state["exp_avg"].mul_(0.9).add_(grad, alpha=0.1)
    p.add_(state["exp_avg"], alpha=-state["lr"])  # another key than the tensor written: a number as often
"""),
        Good("""
import torch
def blend(a, b, w: torch.Tensor):
    return torch.lerp(a, b, w)  # lerp has a Tensor overload for its weight
"""),
        Good("""
import torch
def clip(x, lo: torch.Tensor, hi: torch.Tensor):
    return torch.clamp(x, min=lo, max=hi).add(lo)  # Tensor overloads
"""),
        Good("""
import torch
def forward(self, x, alpha):
    return x.add(self.bias, alpha=alpha)  # a bare parameter: a float as often
"""),
        Good("""
import torch
def update(m: torch.Tensor, g: torch.Tensor):
    t = torch.tensor(0.9)  # a CPU tensor: read without a sync
    return m.mul_(t).add_(g, alpha=1 - t)
"""),
        Good("""
class Accumulator:
    def add(self, x, alpha=1.0):
        return x
def run(acc, x):
    return acc.add(x, alpha=x.sum())  # not a tensor method
"""),
    )

    def visit_Call(self, node, ctx):
        q = ctx.call_name(node)
        spec, op = None, None
        if q is not None and q in FUNCS:
            spec, op = FUNCS[q], q.rsplit(".", 1)[-1]
        elif q is None or not q.startswith("torch."):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr in METHODS:
                rk = ctx.kind(f.value)
                # (a receiver of unknown kind handed the op's own keyword, `p.data.add_(v, alpha=eps)`: only a
                # tensor has that signature)
                if rk == TENSOR or rk is None and any(k.arg == name for _, name in METHODS[f.attr]
                                                      for k in node.keywords):
                    spec, op = METHODS[f.attr], f.attr
        if spec is None or any(k.arg is None for k in node.keywords):
            return
        found = []
        for position, name in spec:
            e = kwarg(node, name)
            if e is None and position is not None and position < len(node.args):
                e = node.args[position]
                if any(isinstance(a, ast.Starred) for a in node.args[:position + 1]):
                    e = None
            if e is not None and not isinstance(e, ast.Constant) and ctx.kind(e) == TENSOR and surely_tensor(ctx, e):
                found.append((name, e))
        if not found:
            return
        fix = self._fix(ctx, node, q, op)
        names = ", ".join(f"`{n}=`" for n, _ in found)
        self.report(ctx, found[0][1], f"`{short(ctx, node)}` syncs: {names} takes a Python number, so the tensor "
                    "is read on the host with `.item()`", _SUGGEST.get(op, "keep the coefficient on the device: "
                    "multiply by it (`d.add_(y * a)`, `M + a * torch.outer(u, v)`)"), fix=fix)

    def _fix(self, ctx, node, q, op) -> Fix | None:
        if kwarg(node, "out") is not None or any(isinstance(a, ast.Starred) for a in node.args):
            return None
        method = q is None or not q.startswith("torch.")
        base = op.rstrip("_")
        inplace = method and op.endswith("_")
        args = ([node.func.value] if method else []) + list(node.args)
        kws = {k.arg: k.value for k in node.keywords}
        if base in _SCALED:
            text = self._scaled_arg(ctx, node, args, kws, base, method)
        elif base in _PRODUCT:
            text = self._fused(ctx, args, kws, base, inplace)
        else:
            return None
        if text is None:
            return None
        return Fix("unsafe", (ctx.edit(node, text),), message="multiply by the tensor on the device",
                   assumption=self.fix_assumption, imports=("torch",) if "torch." in text else ())

    def _scaled_arg(self, ctx, node, args, kws, base, method) -> str | None:
        """`x.add_(y, alpha=a)` -> `x.add_(y * a)`: the scaled operand multiplied by the coefficient."""
        alpha = kws.get("alpha")
        at = _SCALED[base]
        if alpha is None or len(args) <= at or set(kws) - {"alpha"}:
            return None
        parts = [ctx.text(a) for a in args[1 if method else 0:]]
        parts[at - (1 if method else 0)] = f"{_factor(ctx, args[at], True)} * {_factor(ctx, alpha, False)}"
        head = ctx.text(node.func)
        return f"{head}({', '.join(parts)})"

    def _fused(self, ctx, args, kws, base, inplace) -> str | None:
        """`torch.addr(M, u, v, beta=b, alpha=a)` -> `b * M + a * torch.outer(u, v)`."""
        if len(args) != 3 or set(kws) - {"beta", "alpha", "value"}:
            return None
        m, a, b = args
        coef = kws.get("value" if base in ("addcmul", "addcdiv") else "alpha")
        beta = kws.get("beta")
        if inplace and beta is not None:
            return None
        prod = _PRODUCT[base].format(a=_factor(ctx, a, True), b=_factor(ctx, b, False))
        if coef is None:
            sign, term = "+", prod
        else:
            sign, term = _scaled(ctx, coef, prod if base in ("addr", "addbmm") else f"({prod})")
        if inplace:
            return f"{ctx.text(m)}.{'sub_' if sign == '-' else 'add_'}({term})"
        left = ctx.text(m) if beta is None else f"{_factor(ctx, beta, True)} * {_factor(ctx, m, False)}"
        return f"{left} {sign} {term}"
