import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import TENSOR

from ._distributions import built, conditional_made, normal_family, stored_normal
from ._util import elementwise_of, end_pos, is_host_value, kwarg, short, source_between, surely_tensor

# `torch.zeros_like(x)` and the like have x's shape (and, with nothing but x, its dtype and device)
_LIKE = ("torch.zeros_like", "torch.ones_like", "torch.full_like", "torch.empty_like", "torch.rand_like",
         "torch.randn_like")


def _shape_base(ctx, e: ast.AST) -> ast.AST:
    """The expression whose shape `e` visibly has: x for `torch.zeros_like(x)`, else `e` itself."""
    while isinstance(e, ast.Call) and ctx.call_name(e) in _LIKE and e.args:
        e = e.args[0]
    return e


_PRODUCT = (ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.MatMult)


def _operand(ctx, e: ast.AST, ops: tuple) -> str:
    """`e`'s source as an operand of an operator of the precedence of `ops` (parenthesised unless
    it binds at least as tightly)."""
    t = ctx.text(e)
    if isinstance(e, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.UnaryOp)) or \
            isinstance(e, ast.Constant) and not isinstance(e.value, complex) or \
            isinstance(e, ast.BinOp) and isinstance(e.op, ops):
        return t
    return f"({t})"


def _same_shape(ctx, mean: ast.AST, std: ast.AST) -> bool:
    """`mean` and `std` visibly have one shape (torch.normal broadcasts them: only then is the result
    mean's shape): the same tensor under `*_like`, or one computed elementwise from the other."""
    a, b = _shape_base(ctx, mean), _shape_base(ctx, std)
    if ctx.text(a) == ctx.text(b) and isinstance(a, (ast.Name, ast.Attribute)):
        return True
    return elementwise_of(ctx, std, a) or elementwise_of(ctx, mean, b)


class NormalTensorStd(Rule):
    code = "SYN409"
    name = "normal-tensor-std"
    summary = ("`torch.normal(mean, std)` with a tensor `std`, and `.sample()` of a `Normal` / `LogNormal` / "
               "`HalfNormal` built from tensors (it calls that).")
    why = ("With a tensor `std`, `torch.normal` checks `std >= 0` on the host before drawing: the minimum of "
           "`std` is read back from the GPU (two syncs, measured). `Normal(loc, scale).sample()` draws with "
           "`torch.normal(loc, scale)`, so it pays the same check; `rsample()` draws standard noise instead.")
    rewrite = ("`mean + std * torch.randn_like(mean)` (where `mean` has the result's shape; `.detach()` it to keep "
               "torch.normal's zero gradient), and `d.rsample()` under `torch.no_grad()` (or `d.rsample().detach()`) "
               "for `d.sample()`: the same distribution, no check.")
    fix_safety = "unsafe"
    fix_assumption = ("`std` is never negative (no error is raised for a negative one any more) and the program does "
                      "not depend on the exact random numbers drawn (another random stream).")
    triggers = TORCH_CODE
    ops = ("aten::normal",)
    rewrite_hint = "mean + std * torch.randn_like(mean); d.rsample() under no_grad for d.sample()"
    footprint = Footprint(ops=3)  # randn_like, a multiply and an add in place of the one normal kernel
    bad = (
        Bad("""
import torch
from torch.distributions import Normal
def step(x_t, x_hat, sigma_s, tau):
    def proposal(x):  # a helper that builds the distribution
        return Normal(loc=x, scale=sigma_s * torch.sqrt(1 - tau), validate_args=False)
    q = proposal(x_hat)
    return q.sample()
""", line=8),
        Bad("""
import torch
def forward(self, x):
    mu, log_sigma = self.head(x).chunk(2, dim=-1)
    sigma = log_sigma.exp()
    return torch.normal(mu, sigma)
""", line=6),
        Bad("""
import torch
def jitter(x: torch.Tensor):
    return torch.normal(mean=torch.zeros_like(x), std=x.abs() + 1e-3)  # std: x's shape
""", line=4, fixed="""
import torch
def jitter(x: torch.Tensor):
    return (torch.zeros_like(x) + (x.abs() + 1e-3) * torch.randn_like(x)).detach()  # std: x's shape
""", unsafe=True),
        Bad("""
import torch
def add_noise(x: torch.Tensor, std: torch.Tensor):
    return torch.normal(x, std)  # no fix: std may broadcast x to a larger shape
""", line=4),
        Bad("""
import torch
def forward(self, x):
    mu = self.mu(x)
    return torch.normal(mu, mu.abs() * 0.1)
""", line=5, fixed="""
import torch
def forward(self, x):
    mu = self.mu(x)
    return (mu + mu.abs() * 0.1 * torch.randn_like(mu)).detach()
""", unsafe=True),
        Bad("""
import torch
from torch.distributions import Normal
def act(self, obs: torch.Tensor):
    mu, log_std = self.actor(obs).chunk(2, dim=-1)
    dist = Normal(mu, log_std.exp(), validate_args=False)
    return dist.sample()
""", line=7, fixed="""
import torch
from torch.distributions import Normal
def act(self, obs: torch.Tensor):
    mu, log_std = self.actor(obs).chunk(2, dim=-1)
    dist = Normal(mu, log_std.exp(), validate_args=False)
    return dist.rsample().detach()
""", unsafe=True),
        Bad("""
import torch.distributions as D
def forward(self, x):
    z = D.LogNormal(x.mean(-1), x.std(-1), validate_args=False).sample((4,))
    noise = D.Independent(D.HalfNormal(x.abs(), validate_args=False), 1)
    return z, noise.sample()
""", line=4, count=2),
        Bad("""
import torch
def forward(self, x):
    return torch.normal(0.0, self.scale(x))  # std is the tensor here
""", line=4),
        Bad("""
import torch
from torch import nn
from torch.distributions import Normal
class GaussianDistribution(nn.Module):
    def __init__(self, output_dim: int):
        super().__init__()
        self.std_param = nn.Parameter(torch.ones(output_dim))
        self._distribution = None
    def update(self, mlp_output: torch.Tensor) -> None:
        self._distribution = Normal(mlp_output, self.std_param.clamp(1e-6, 1.0), validate_args=False)
    def sample(self) -> torch.Tensor:
        return self._distribution.sample()  # built in `update` from tensors: probably, a check of the scale
""", line=13, fixed="""
import torch
from torch import nn
from torch.distributions import Normal
class GaussianDistribution(nn.Module):
    def __init__(self, output_dim: int):
        super().__init__()
        self.std_param = nn.Parameter(torch.ones(output_dim))
        self._distribution = None
    def update(self, mlp_output: torch.Tensor) -> None:
        self._distribution = Normal(mlp_output, self.std_param.clamp(1e-6, 1.0), validate_args=False)
    def sample(self) -> torch.Tensor:
        return self._distribution.rsample().detach()  # built in `update` from tensors: probably, a check of the scale
""", unsafe=True),
        Bad("""
import torch
class NCE(torch.nn.Module):
    def __init__(self, noise=None):
        super().__init__()
        self.noise = noise
    def _default_noise(self, x):
        loc = torch.zeros(x.shape[1:], device=x.device)
        return torch.distributions.Independent(torch.distributions.Normal(loc, torch.ones_like(loc)), 1)
    def forward(self, energy, x):
        noise = self.noise if self.noise is not None else self._default_noise(x)
        y = noise.sample((x.shape[0],))  # the default: a Normal with a device scale
        return energy(x) - energy(y)
""", line=12),
    )
    good = (
        Good("""
import torch
from torch.distributions import Normal
class Prior:
    def __init__(self):
        self.dist = Normal(0.0, 1.0)  # Python numbers: host tensors, nothing to wait for
    def draw(self, n: int):
        return self.dist.sample((n,))
"""),
        Good("""
import torch
def forward(self, x):
    return torch.normal(x, 0.1)  # a Python std: checked on the host without reading the GPU
"""),
        Good("""
import torch
def noise(shape, device):
    return torch.normal(0.0, 1.0, size=shape, device=device)
"""),
        Good("""
import torch
from torch.distributions import Normal
def act(self, obs):
    mu, std = self.actor(obs)
    return Normal(mu, std, validate_args=False).rsample()
"""),
        Good("""
import torch
prior = torch.distributions.Normal(0.0, 1.0)
z = prior.sample((16,))  # Python parameters: host tensors
"""),
        Good("""
import torch
def forward(self, x, std):
    return torch.normal(x, std)  # std: a float as often as a tensor
"""),
    )

    def visit_Call(self, node, ctx):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "sample":
            self._sample(node, ctx)
            return
        if ctx.call_name(node) != "torch.normal":
            return
        if any(k.arg is None for k in node.keywords) or kwarg(node, "size") is not None or len(node.args) > 2:
            return  # the float overload (a size), or arguments not seen
        mean = node.args[0] if node.args else kwarg(node, "mean")
        std = node.args[1] if len(node.args) > 1 else kwarg(node, "std")
        if mean is None or std is None:
            return
        k = ctx.kind(std)
        if k == TENSOR and not surely_tensor(ctx, std):
            return  # a parameter taken for a tensor by a guess: a float std as often
        if k != TENSOR:
            # torch.normal(0.0, s) without a size: s can only be a tensor (two numbers need a size)
            if k is not None or not is_host_value(ctx, mean) or isinstance(std, ast.Constant):
                return
            ctx.infer.probable = True  # a tensor, of a device not known
        fix = None
        if ctx.kind(mean) == TENSOR and _same_shape(ctx, mean, std) and kwarg(node, "out") is None \
                and kwarg(node, "generator") is None:
            base = _shape_base(ctx, mean)
            m, sd = _operand(ctx, mean, (ast.Add, ast.Sub, *_PRODUCT)), _operand(ctx, std, _PRODUCT)
            text = f"({m} + {sd} * torch.randn_like({ctx.text(base)})).detach()"
            fix = Fix("unsafe", (ctx.edit(node, text),), message="draw standard noise and scale it",
                      assumption=self.fix_assumption, imports=("torch",))
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: with a tensor `std`, torch.normal checks `std >= 0` "
                    "on the host", "`mean + std * torch.randn_like(mean)` (the result's shape; `.detach()` keeps "
                    "torch.normal's zero gradient)", fix=fix)

    def _sample(self, node, ctx):
        made = built(ctx, node.func.value, node)
        stored = made is None and (made := stored_normal(ctx, node.func.value)
                                   or conditional_made(ctx, node.func.value, node)) is not None
        normal = normal_family(ctx, made) if made is not None else None
        if normal is None or any(k.arg is None for k in normal.keywords):
            return
        params = [*normal.args, *(k.value for k in normal.keywords if k.arg != "validate_args")]
        # broadcast_all puts Python numbers on the device of the tensor parameters: one device
        # tensor among them makes the scale a device tensor
        if stored:  # built in another method, from its names: computed parameters, probably tensors
            if all(isinstance(p, (ast.Constant, ast.UnaryOp)) for p in params):
                return
        elif not any(ctx.kind(p) == TENSOR for p in params):
            return
        rest = source_between(ctx, end_pos(node.func), end_pos(node))
        edit = ctx.edit(node, f"{ctx.text(node.func.value)}.rsample{rest}.detach()")
        fix = Fix("unsafe", (edit,), message="`rsample()` without the gradient: standard noise, scaled",
                  assumption=self.fix_assumption)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `sample()` of a {ctx.text(normal.func).rsplit('.')[-1]} "
                    "draws with `torch.normal(loc, scale)`, which checks `scale >= 0` on the host",
                    "`rsample()` under `torch.no_grad()` (or `.rsample().detach()`)", fix=fix,
                    confidence="low" if stored else None)

