import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, HOST, NDARRAY, TENSOR
from syncscan.lint.tree import param_defaults

from ._distributions import (
    NO_CONSTRAINTS,
    annotated_distribution,
    property_distribution,
    returned_distribution,
    stored_distribution,
    built,
    class_facts,
    disabled_in_module,
    distribution_class,
    enclosing_class,
    inherits_torch_init,
    torch_distribution,
    validation_on,
)
from ._util import add_keyword, kwarg, last_unpack, short

# libraries whose distributions also have `log_prob` and `sample` (not torch's: they do not validate on the host)
_OTHER_PROBABILITY = frozenset({"tensorflow", "tensorflow_probability", "jax", "numpyro", "distrax", "scipy"})
# methods that check the value they are handed against the support when validation is on
CHECKED_SAMPLE = ("log_prob", "cdf")


_NOT_DISTRIBUTION_BASES = ("object", "abc.ABC", "typing.Generic", "typing.Protocol", "torch.nn.Module",
                           "torch.nn.modules.module.Module")


def _may_be_distribution(ctx, base: ast.AST) -> bool:
    """A base class a distribution may come from (not `object`, `ABC`, `Generic[T]`, `nn.Module`)."""
    if isinstance(base, ast.Subscript):
        base = base.value
    q = ctx.qualname(base) or (base.id if isinstance(base, ast.Name) else None)
    return q not in _NOT_DISTRIBUTION_BASES


def _known_kind(ctx, node):
    """The kind of `node`, read only to stay silent: a probable answer does not lower the finding's
    confidence."""
    before = ctx.infer.probable
    k = ctx.kind(node)
    ctx.infer.probable = before
    return k


def _guards_off(ctx, node) -> bool:
    """A condition around `node` in its function, other than `if self._validate_args:`, reads a
    validation flag (`if validate and ...`, the `else` of `if self._validate_args`): it may be off."""
    child, p = node, ctx.parent(node)
    while p is not None and p is not ctx.function:
        if isinstance(p, (ast.If, ast.IfExp)) and child is not p.test:
            reads = [n for n in ast.walk(p.test) if "validat" in (n.id if isinstance(n, ast.Name) else
                                                                   n.attr if isinstance(n, ast.Attribute) else "")]
            if reads:
                ops = p.test.values if isinstance(p.test, ast.BoolOp) and isinstance(p.test.op, ast.And) else [p.test]
                positive = any(isinstance(o, ast.Attribute) and o.attr == "_validate_args" and
                               isinstance(o.value, ast.Name) and o.value.id == "self" for o in ops)
                in_body = child in (p.body if isinstance(p.body, list) else [p.body])
                if not (positive and in_body and len(reads) == 1):
                    return True
        child, p = p, ctx.parent(p)
    return False


class DistributionValidateArgs(Rule):
    code = "SYN405"
    name = "distribution-validate-args"
    summary = ("A `torch.distributions` distribution built from tensors without `validate_args=False` (also "
               "`super().__init__` of a distribution subclass, its `self._validate_sample(value)`, and `log_prob` "
               "on a distribution the function built, a function of the module returns, or the class keeps in an "
               "attribute).")
    why = ("Argument validation (on by default unless Python runs with -O) checks each parameter's constraint "
           "with a Python `if` on a tensor, and `log_prob` checks the sample the same way: each check reads "
           "the GPU's answer on the host. A subclass pays the same in `super().__init__(..., validate_args=...)` "
           "(`Distribution.__init__` checks `arg_constraints`) and in `self._validate_sample(value)`.")
    rewrite = ("`validate_args=False` on the constructor, or `torch.distributions.Distribution."
               "set_default_validate_args(False)` once at start-up (which silences this rule for the module).")
    fix_safety = "unsafe"
    fix_assumption = "the arguments (and samples passed to `log_prob`) are valid: no error is raised for invalid ones."
    triggers = TORCH_CODE
    ops = ()
    rewrite_hint = "construct distributions with validate_args=False in the training step"
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)  # the same distribution, unchecked
    bad = (
        Bad("""
import torch
def forward(self, x):
    mu, sigma = self.head(x).chunk(2, dim=-1)
    dist = torch.distributions.Normal(mu, sigma.exp())
    return dist.rsample()
""", line=5, fixed="""
import torch
def forward(self, x):
    mu, sigma = self.head(x).chunk(2, dim=-1)
    dist = torch.distributions.Normal(mu, sigma.exp(), validate_args=False)
    return dist.rsample()
""", unsafe=True),
        Bad("""
from torch.distributions import Categorical
def compute_loss(logits, actions):
    return -Categorical(logits=logits, validate_args=True).log_prob(actions).mean()
""", line=4, fixed="""
from torch.distributions import Categorical
def compute_loss(logits, actions):
    return -Categorical(logits=logits, validate_args=False).log_prob(actions).mean()
""", unsafe=True),
        Bad("""
import torch.distributions as D
def forward(self, loc, scale_tril):
    return D.multivariate_normal.MultivariateNormal(loc, scale_tril=scale_tril)
""", line=4),
        Bad("""
import torch
from torch.distributions import Distribution, constraints
class Spike(Distribution):
    arg_constraints = {"log_density": constraints.real}
    def __init__(self, v, log_density, validate_args=None):
        self.v, self.log_density = v, log_density
        super().__init__(v.shape, validate_args=validate_args)  # None: validation on
""", line=8),
        Bad("""
import torch
class LogNormal(torch.distributions.LogNormal):
    def __init__(self, loc, scale, validate_args=None):
        super(torch.distributions.LogNormal, self).__init__(
            torch.distributions.Normal(loc, scale, validate_args=False),
            torch.distributions.transforms.ExpTransform(), validate_args=validate_args)
""", line=5),
        Bad("""
import torch
class Geometric(torch.distributions.Geometric):
    def log_prob(self, value):
        if self._validate_args:  # on by default
            self._validate_sample(value)
        return (-value - 1) * torch.nn.functional.softplus(self.logits) + self.logits
""", line=6),
        Bad("""
import torch
class Normal(torch.distributions.Normal):  # torch's __init__ builds it
    def nll(self, x):
        return -self.log_prob(x).sum()
def forward(self, x):
    mu, log_sigma = self.head(x).chunk(2, dim=-1)
    return Normal(mu, log_sigma.exp()).rsample()
""", line=8, fixed="""
import torch
class Normal(torch.distributions.Normal):  # torch's __init__ builds it
    def nll(self, x):
        return -self.log_prob(x).sum()
def forward(self, x):
    mu, log_sigma = self.head(x).chunk(2, dim=-1)
    return Normal(mu, log_sigma.exp(), validate_args=False).rsample()
""", unsafe=True),
        Bad("""
import torch
class Clamped(torch.distributions.Normal):
    def log_prob(self, value):
        return super().log_prob(value.clamp(-10, 10))  # torch's log_prob validates the sample
""", line=5),
        Bad("""
import torch
from torch.distributions import Normal
def loss(self, x, target):
    mu, log_sigma = self.head(x).chunk(2, dim=-1)
    dist = Normal(mu, log_sigma.exp())
    return -dist.log_prob(target).mean()
""", line=6, count=2),
        Bad("""
import torch
from torch.distributions import Normal
class DiagGaussian:
    def __init__(self):
        self.distribution = None
    def proba_distribution(self, mean: torch.Tensor, log_std: torch.Tensor):
        self.distribution = Normal(mean, log_std.exp())
        return self
    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.distribution.log_prob(actions).sum(dim=-1)  # the sample is checked on the host
""", line=8, count=2),
        Bad("""
import torch
class GaussianPrior:
    def __init__(self, dist=None):
        if dist is None:
            self.dist = torch.distributions.Normal(0.0, 1.0)  # Python numbers: checked on the host
        else:
            self.dist = dist
    def log_prior(self, w):
        return self.dist.log_prob(w).sum()  # (low confidence: a store the linter cannot read)
""", line=10),
        Bad("""
import torch
from torch.distributions import Categorical
class Actor(torch.nn.Module):
    def _distribution(self, obs):
        return Categorical(logits=self.logits_net(obs))
    def forward(self, obs: torch.Tensor, act: torch.Tensor):
        pi = self._distribution(obs)
        return pi, pi.log_prob(act)  # the action is checked against the support on the host
""", line=6, count=2),
        Bad("""
import torch
class Agent:
    def act(self, obs):
        dist = self.policy(obs)  # a distribution the linter does not see built
        action = dist.rsample()
        return action, dist.log_prob(action)  # sampled and scored: torch's, validating by default
""", line=7),
        Bad("""
import torch
class PPO:
    def update(self, states, actions, advs):
        distribs, vs_pred = self.model(states)  # a policy head returning (distribution, value)
        entropy = distribs.entropy()
        log_probs = distribs.log_prob(actions)  # torch's distributions check the action on the host
        return -(log_probs * advs).mean() - 0.01 * entropy.mean() + vs_pred.pow(2).mean()
""", line=7),
        Bad("""
import torch
from torch import distributions
class Base(torch.nn.Module):
    def get_distribution(self, dp):
        raise NotImplementedError
    def log_likelihood(self, x, params):
        conditional = self.get_distribution(params)  # every subclass of the module returns a Normal
        return conditional.log_prob(x)
class Gauss(Base):
    def get_distribution(self, dp):
        return distributions.Normal(dp[0], dp[1])
""", line=9, count=2),
        Bad("""
import torch
import torch.distributions as D
class Flow(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("base_mean", torch.zeros(n))
        self.register_buffer("base_var", torch.ones(n))
    @property
    def base_dist(self):
        return D.Normal(self.base_mean, self.base_var)
    def log_prob(self, x):
        u, log_det = self.net(x)
        return (self.base_dist.log_prob(u) + log_det).sum(1)  # a property building a validating Normal
""", line=11, count=2),
        Bad("""
import torch
from torch.distributions import Categorical
class MaskedCategorical(Categorical):
    def __init__(self, probs=None, logits=None, validate_args=None, masks=None):
        self.masks = masks
        super().__init__(probs, logits, validate_args)
    def apply_masking(self, masks):
        logits = torch.where(masks, self.logits, torch.full_like(self.logits, -1e8))
        super().__init__(logits=logits, validate_args=self._validate_args)  # as it was built: on by default
class MaskedDistribution:
    def proba_distribution(self, action_logits: torch.Tensor):
        self.distribution = MaskedCategorical(logits=action_logits)
        return self
    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.distribution.log_prob(actions)  # a subclass taking torch's default: validating
""", line=7, count=3),
        Bad("""
import torch
def anneal(energy, base: torch.distributions.Distribution, x: torch.Tensor, betas):
    log_w = torch.zeros(x.shape[0], device=x.device)
    for b0, b1 in zip(betas[:-1], betas[1:]):
        log_w += (b1 - b0) * (-energy(x) - base.log_prob(x))  # declared a torch distribution: validating
    return log_w
""", line=6),
        Bad("""
import torch
from torch.distributions import Distribution
class NCELoss(torch.nn.Module):
    def __init__(self, noise: Distribution | None = None):
        super().__init__()
        self.noise = noise
    def _default_noise(self, x) -> Distribution:
        return self.make(x)
    def forward(self, energy, x):
        noise = self.noise if self.noise is not None else self._default_noise(x)
        y = noise.sample((x.shape[0],)).to(x.device)
        return (noise.log_prob(x) - noise.log_prob(y)).mean()  # declared distributions on both sides
""", line=13, count=2),
    )
    good = (
        Good("""
import torch
class Agent:
    def act(self, obs, target):
        out = self.policy(obs)
        return out.log_prob(target)  # never sampled from here: nothing says it is a torch distribution
"""),
        Good("""
import torch
def score(base: "torch.distributions.Distribution", x: torch.Tensor):
    base = base.expand(x.shape[:1])  # rebound: what it holds now is not what the annotation declares
    return base.log_prob(x.cpu())
"""),
        Good("""
import torch
def score(flow: torch.nn.Module, x: torch.Tensor):
    return flow.log_prob(x)  # declared a module, not a distribution
"""),
        Good("""
import torch
torch.distributions.Distribution.set_default_validate_args(False)
class Agent:
    def act(self, obs):
        dist = self.policy(obs)
        action = dist.rsample()
        return action, dist.log_prob(action)  # validation is off for the process
"""),
        Good("""
import torch
from torch.distributions import Categorical
class Actor(torch.nn.Module):
    def _distribution(self, obs):
        return Categorical(logits=self.logits_net(obs), validate_args=False)
    def forward(self, obs: torch.Tensor, act: torch.Tensor):
        pi = self._distribution(obs)
        return pi, pi.log_prob(act)
"""),
        Good("""
import torch
def forward(self, mu, sigma):
    return torch.distributions.Normal(mu, sigma, validate_args=False).rsample()
"""),
        Good("""
import torch
import torch.distributions as D
class Flow(torch.nn.Module):
    @property
    def base_dist(self):
        return D.Normal(self.base_mean, self.base_var, validate_args=False)
    def log_prob(self, x):
        u, log_det = self.net(x)
        return (self.base_dist.log_prob(u) + log_det).sum(1)
"""),
        Good("""
import torch
from torch.distributions import Normal
class DiagGaussian:
    def proba_distribution(self, mean: torch.Tensor, log_std: torch.Tensor):
        self.distribution = Normal(mean, log_std.exp(), validate_args=False)
        return self
    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.distribution.log_prob(actions).sum(dim=-1)
"""),
        Good("""
import torch
class Policy:
    def __init__(self, head):
        self.dist = head.distribution()  # not a torch.distributions constructor: not known to validate
    def nll(self, a: torch.Tensor):
        return -self.dist.log_prob(a)
"""),
        Good("""
import torch
from torch.distributions import Distribution, Normal
Distribution.set_default_validate_args(False)
def forward(self, mu, sigma):
    return Normal(mu, sigma).rsample()
"""),
        Good("""
import torch
prior = torch.distributions.Normal(0.0, 1.0)  # Python numbers: checked on the host
t = torch.distributions.transforms.AffineTransform(0.0, 2.0)
"""),
        Good("""
import torch
def forward(self, base):
    return torch.distributions.Independent(base, 1)
"""),
        Good("""
import torch
from torch.distributions import Categorical
class MaskedCategorical(Categorical):
    def __init__(self, logits, masks, validate_args=False):
        super().__init__(logits=logits.masked_fill(~masks, -1e8), validate_args=validate_args)
    def apply_masking(self, masks):
        super().__init__(logits=self.logits.masked_fill(~masks, -1e8), validate_args=self._validate_args)
class MaskedDistribution:
    def proba_distribution(self, action_logits: torch.Tensor, masks: torch.Tensor):
        self.distribution = MaskedCategorical(action_logits, masks)  # built unchecked by default
        return self
    def log_prob(self, actions: torch.Tensor) -> torch.Tensor:
        return self.distribution.log_prob(actions)
"""),
        Good("""
import torch
class Prior(torch.distributions.Normal):
    def __init__(self, loc, scale, validate_args=False):  # off unless a caller turns it on
        super().__init__(loc, scale, validate_args=validate_args)
"""),
        Good("""
import torch
class Wrapped(torch.distributions.Distribution):  # no arg_constraints: nothing to check
    def __init__(self, base):
        self.base = base
        super().__init__(base.batch_shape, base.event_shape)
"""),
        Good("""
import torch
class Folded(torch.distributions.TransformedDistribution):
    arg_constraints = {"scale": torch.distributions.constraints.positive}
    def __init__(self, base, validate_args=None):
        super().__init__(base, torch.distributions.transforms.AbsTransform(), validate_args=False)
    def log_prob(self, value):
        if self.validate_samples and self._validate_args:  # a flag of the class's own decides
            self._validate_sample(value)
        return self.base_dist.log_prob(value)
"""),
        Good("""
import torch
from torch.distributions import Normal
def loss(self, x, target):
    mu, log_sigma = self.head(x).chunk(2, dim=-1)
    dist = Normal(mu, log_sigma.exp(), validate_args=False)
    return -dist.log_prob(target).mean()
"""),
        Good("""
import torch
class Unchecked(torch.distributions.Normal):
    def __init__(self, loc, scale):
        super().__init__(loc, scale, validate_args=False)
def forward(self, x):
    return Unchecked(x, x.exp()).rsample()
"""),
        Good("""
import torch
class Smoothed(torch.distributions.Normal):
    def log_prob(self, value):
        if self.validate_samples:  # a flag of the class's own decides
            return super().log_prob(value)
        return super().log_prob(float(value))  # a Python number: checked on the host
"""),
        Good("""
import torch
class Distribution:  # the root class: its super() is object
    @property
    def arg_constraints(self):
        raise NotImplementedError
    def __init__(self, batch_shape=torch.Size(), validate_args=None):
        super().__init__()
"""),
    )

    def visit_Call(self, node, ctx):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("__init__", "_validate_sample", *CHECKED_SAMPLE):
            if f.attr == "__init__":
                self._base_init(node, ctx)
            elif f.attr == "_validate_sample":
                self._validate_sample(node, ctx)
            elif f.attr in CHECKED_SAMPLE:
                self._checked_sample(node, ctx)
            return
        if not distribution_class(ctx.call_name(node)):
            local = ctx.file.index.class_built(node)  # a subclass of the module taking torch's __init__
            if local is None or not inherits_torch_init(ctx, ctx.file.index.classes[local]):
                return
        v = kwarg(node, "validate_args")
        on = validation_on(ctx, v)
        if not on or any(k.arg is None for k in node.keywords) or disabled_in_module(ctx):
            return  # off, or decided elsewhere
        values = list(node.args) + [k.value for k in node.keywords if k.arg != "validate_args"]
        if values and all(ctx.kind(a) in (HOST, CPU) for a in values):
            return
        fix = None
        if v is None or isinstance(v, ast.Constant):  # (not a parameter the caller decides)
            edit = ctx.edit(v, "False") if v is not None else add_keyword(ctx, node, "validate_args", "False")
            fix = Fix("unsafe", (edit,), message="pass `validate_args=False`", assumption=self.fix_assumption)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: argument validation checks tensor values on the host "
                    "(and so does `log_prob` on its samples)", "pass `validate_args=False`", fix=fix)

    def _base_init(self, node, ctx):
        """`super().__init__(...)` in a distribution class, or `Normal.__init__(self, ...)`:
        `Distribution.__init__` checks every parameter of `arg_constraints` when validation is on."""
        recv = node.func.value
        args = list(node.args)
        confident = True
        if isinstance(recv, ast.Call) and isinstance(recv.func, ast.Name) and recv.func.id == "super" \
                and "super" not in ctx.imports:
            cls = enclosing_class(ctx)
            if cls is None:
                return
            torch_base, checks = class_facts(ctx, cls)
            if torch_base is None and not any(_may_be_distribution(ctx, b) for b in cls.bases):
                return  # super() is object (or a mixin): `Distribution` itself defines arg_constraints
            if recv.args:  # super(torch.distributions.LogNormal, self): the class named checks its own
                torch_base = torch_distribution(ctx.qualname(recv.args[0])) or torch_base
            if checks is None:  # the torch class's own arg_constraints, if it has any
                checks = torch_base is not None and torch_base not in NO_CONSTRAINTS
                own = False
            else:
                own = True
                # arg_constraints in a class whose bases come from elsewhere: a torch distribution
                # (its `__init__` takes validate_args) only probably
                confident = torch_base is not None or kwarg(node, "validate_args") is not None or any(
                    isinstance(a, ast.Name) and "validat" in a.id for a in args)
            if not checks:
                return
        elif distribution_class(ctx.qualname(recv)) and torch_distribution(ctx.qualname(recv)) not in NO_CONSTRAINTS \
                and args and isinstance(args[0], ast.Name) and args[0].id == "self":
            args, own = args[1:], False
        else:
            return
        v = kwarg(node, "validate_args") or next(
            (a for a in args if isinstance(a, ast.Name) and "validat" in a.id), None)  # handed on by position
        if any(k.arg is None for k in node.keywords) or (v is None and any(
                isinstance(a, ast.Constant) and a.value is False for a in args)):
            return  # **kwargs, or a positional False (validate_args in its place)
        if not validation_on(ctx, v) or disabled_in_module(ctx):
            return
        values = args + [k.value for k in node.keywords if k.arg != "validate_args"]
        if not own and values and all(_known_kind(ctx, a) in (HOST, CPU) for a in values):
            return  # the parameters handed on are Python numbers or host tensors
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `Distribution.__init__` validates the parameters "
                    "(`arg_constraints`) on the host", "pass `validate_args=False`, or turn validation off once "
                    "with `torch.distributions.Distribution.set_default_validate_args(False)`",
                    confidence=None if confident else "low")

    def _validate_sample(self, node, ctx):
        """`self._validate_sample(value)` in a distribution class: the support check reads the GPU."""
        if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "self"):
            return
        cls = enclosing_class(ctx)
        if cls is None or ctx.file.index.method(cls, "_validate_sample") is not None:
            return  # the class's own method of that name
        if _guards_off(ctx, node) or disabled_in_module(ctx):
            return
        value = node.args[0] if node.args else kwarg(node, "value")
        if value is not None and _known_kind(ctx, value) in (HOST, CPU, NDARRAY):
            return
        torch_base, checks = class_facts(ctx, cls)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: the support check reads the sample's values on the host "
                    "(validation is on by default)", "construct the distribution with `validate_args=False`, or "
                    "turn validation off once with `Distribution.set_default_validate_args(False)`",
                    confidence=None if torch_base is not None or checks is not None else "low")

    def _super_sample(self, node, ctx):
        """`super().log_prob(value)` in a distribution class: torch's `log_prob` checks the sample when the
        instance validates (on unless it was built with `validate_args=False`, which this code cannot see)."""
        cls = enclosing_class(ctx)
        if cls is None or _guards_off(ctx, node) or disabled_in_module(ctx):
            return
        torch_base, _ = class_facts(ctx, cls)
        if torch_base is None and not any((ctx.qualname(b) or getattr(b, "id", "")).endswith("Distribution")
                                          for b in cls.bases):
            return  # nothing says super() is a distribution
        init = ctx.file.index.method(cls, "__init__")
        if init is not None:
            default = param_defaults(init[0].args).get("validate_args")
            if isinstance(default, ast.Constant) and default.value is False:
                return  # the class builds its instances unchecked unless a caller asks
        value = node.args[0] if node.args else kwarg(node, "value")
        if value is None or _known_kind(ctx, value) in (HOST, CPU, NDARRAY):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: the base class's `{node.func.attr}` checks the value "
                    "against the support on the host when the distribution validates (the default)",
                    "construct the distribution with `validate_args=False`, or turn validation off once with "
                    "`Distribution.set_default_validate_args(False)`",
                    confidence=None if torch_base is not None else "low")

    def _checked_sample(self, node, ctx):
        """`d.log_prob(x)` where the function built `d` with validation on: `x` is checked on the host.
        (Built on the same line, the construction's finding already stands there.)"""
        if isinstance(node.func.value, ast.Call) and isinstance(node.func.value.func, ast.Name) \
                and node.func.value.func.id == "super" and "super" not in ctx.imports:
            self._super_sample(node, ctx)
            return
        call = built(ctx, node.func.value, node)
        if call is not None and ctx.callee(call) is not None:
            self._returned_sample(node, ctx, call)
            return
        if call is None:
            recv = node.func.value
            unpacked = last_unpack(ctx, recv.id, node) if isinstance(recv, ast.Name) else None
            if unpacked is not None and isinstance(unpacked.value, ast.Call):
                # `distribs, values = self.model(states)` ... `distribs.entropy()`, `distribs.log_prob(a)`
                self._opaque_sample(node, ctx, unpacked.value)
                return
            if not self._attribute_sample(node, ctx) and annotated_distribution(ctx, node.func.value, node) \
                    and not disabled_in_module(ctx) and not _guards_off(ctx, node):
                self._declared_sample(node, ctx)
            return
        if call.lineno == node.lineno:
            return
        if not distribution_class(ctx.call_name(call)) and self._opaque_sample(node, ctx, call):
            return
        made: ast.Call | None = call
        if torch_distribution(ctx.call_name(call)) == "Independent" and call.args:
            made = built(ctx, call.args[0], call)  # Independent hands the value to its base
        if made is None:
            return
        if not distribution_class(ctx.call_name(made)) or any(k.arg is None for k in made.keywords):
            return
        if not validation_on(ctx, kwarg(made, "validate_args")) or disabled_in_module(ctx):
            return
        value = node.args[0] if node.args else kwarg(node, "value")
        if value is None:
            return
        k = ctx.kind(value)
        if k != TENSOR and (k is not None or not any(
                ctx.kind(a) == TENSOR for a in [*made.args, *(kw.value for kw in made.keywords)])):
            return  # a host value, or unknown and the parameters say nothing of the device
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `{node.func.attr}` validates the value against the "
                    f"support on the host (the distribution of line {made.lineno} validates)",
                    "construct the distribution with `validate_args=False`")

    def _opaque_sample(self, node, ctx, call: ast.Call) -> bool:
        """`dist = self.policy(obs)` ... `dist.log_prob(dist.rsample())` (or a part of what the call returns:
        `dist, value = self.model(obs)`): a value the code cannot see made, that it samples from (`.sample()`,
        `.rsample()`, or asks `.entropy()` of) and asks `log_prob` of, in a module that imports torch and no
        other probability library, is a torch distribution, and torch's validate their samples by default: probably
        a check on the host (low confidence: whoever built it may have passed `validate_args=False`)."""
        recv = node.func.value
        heads = ctx.file.index.imported_heads()
        if not isinstance(recv, ast.Name) or ctx.function is None or ctx.call_name(call) is not None \
                or "torch" not in heads or heads & _OTHER_PROBABILITY or disabled_in_module(ctx):
            return False
        if _known_kind(ctx, call) not in (None, TENSOR):
            return False  # (a module's call is a tensor by a guess only: a tensor has no `log_prob`)
        samples = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                      and n.func.attr in ("sample", "rsample", "sample_n", "entropy")
                      and isinstance(n.func.value, ast.Name) and n.func.value.id == recv.id
                      for n in ast.walk(ctx.function))
        value = node.args[0] if node.args else kwarg(node, "value")
        if not samples or value is None or _known_kind(ctx, value) in (HOST, CPU, NDARRAY):
            return False
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `{node.func.attr}` of a distribution (`{recv.id}` is "
                    f"sampled from and scored: torch's distributions validate by default) checks the value against "
                    "the support on the host", "construct the distribution with `validate_args=False` (or "
                    "`torch.distributions.Distribution.set_default_validate_args(False)` once)", confidence="low")
        return True

    def _attribute_sample(self, node, ctx):
        """`self.dist.log_prob(x)` where the class stores a distribution in `self.dist` (`self.dist =
        Normal(mu, std)` in another method) or defines `dist` as a property returning one: `log_prob` checks
        the sample on the host. With validation on it
        raises for anything but a tensor, so `x` is one; only its device is not known here."""
        made = stored_distribution(ctx, node.func.value)
        if made is None:
            prop = property_distribution(ctx, node.func.value)
            made = (prop, True) if prop is not None else None
        if made is not None:
            self._sample_of(node, ctx, f"`{short(ctx, node.func.value, 30)}` is the distribution of line "
                            f"{made[0].lineno}", made[1])
        return made is not None

    def _declared_sample(self, node, ctx):
        """`base.log_prob(x)` where `base` is declared a torch distribution (`base: torch.distributions.Distribution`,
        or a helper's `-> Distribution`): torch's validate the value by default (low confidence: whoever built it may
        have passed `validate_args=False`)."""
        value = node.args[0] if node.args else kwarg(node, "value")
        if value is None or isinstance(value, ast.Starred) or _known_kind(ctx, value) in (HOST, CPU, NDARRAY):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `{node.func.attr}` of a value declared a torch distribution "
                    "checks it against the support on the host (validation is on by default)",
                    "construct the distribution with `validate_args=False` (or "
                    "`torch.distributions.Distribution.set_default_validate_args(False)` once)", confidence="low")

    def _returned_sample(self, node, ctx, call):
        """`pi = self._distribution(obs)` ... `pi.log_prob(act)`, where every `return` of the module's own
        `_distribution` hands back a distribution built with validation on: `log_prob` checks the sample."""
        made = returned_distribution(ctx, call)
        if made is not None:
            self._sample_of(node, ctx, f"`{short(ctx, call, 30)}` returns the distribution of line {made.lineno}",
                            True)

    def _sample_of(self, node, ctx, where: str, sure: bool):
        """Report `log_prob(value)` / `cdf(value)` of a distribution built elsewhere with validation on (`where`
        says where): high confidence when the construction is certain and the value a tensor."""
        if disabled_in_module(ctx):
            return
        value = node.args[0] if node.args else kwarg(node, "value")
        if value is None or isinstance(value, ast.Starred):
            return
        k = _known_kind(ctx, value)
        if k in (HOST, CPU, NDARRAY):
            return
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: `{node.func.attr}` validates the value against the "
                    f"support on the host ({where}, built with validation on)",
                    "construct the distribution with `validate_args=False`",
                    confidence=None if sure and k == TENSOR else "low")
