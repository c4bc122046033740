import ast

from syncscan.lint.rule import TORCH_CODE, Bad, Fix, Footprint, Good, Rule
from syncscan.lint.tensors import CPU, HOST

from ._util import add_keyword, kwarg, short

NOT_DISTRIBUTIONS = {"Distribution", "ExponentialFamily", "Independent"}  # Independent checks nothing itself
NOT_MODULES = ("transforms", "constraints", "constraint_registry", "kl", "utils")


def _disabled_in_module(ctx) -> bool:
    """`Distribution.set_default_validate_args(False)` anywhere in the module turns validation off."""
    return ctx.file.get(_validation_off)


def _validation_off(file) -> bool:
    return "set_default_validate_args" in file.source and any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "set_default_validate_args"
        and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value is False
        for n in ast.walk(file.tree))


def distribution_class(q: str | None) -> bool:
    if not q or not q.startswith("torch.distributions."):
        return False
    parts = q.split(".")
    last = parts[-1]
    if not last[:1].isupper() or last.endswith("Transform") or last in NOT_DISTRIBUTIONS:
        return False
    return len(parts) == 3 or (len(parts) == 4 and parts[2] not in NOT_MODULES)


class DistributionValidateArgs(Rule):
    code = "SYN405"
    name = "distribution-validate-args"
    summary = "A `torch.distributions` distribution built from tensors without `validate_args=False`."
    why = ("Argument validation (on by default unless Python runs with -O) checks each parameter's constraint "
           "with a Python `if` on a tensor, and `log_prob` checks the sample the same way: each check reads "
           "the GPU's answer on the host.")
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
    )
    good = (
        Good("""
import torch
def forward(self, mu, sigma):
    return torch.distributions.Normal(mu, sigma, validate_args=False).rsample()
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
    )

    def visit_Call(self, node, ctx):
        if not distribution_class(ctx.call_name(node)):
            return
        v = kwarg(node, "validate_args")
        if v is not None and not (isinstance(v, ast.Constant) and v.value in (True, None)):
            return  # False, or decided elsewhere
        if any(k.arg is None for k in node.keywords) or _disabled_in_module(ctx):
            return
        values = list(node.args) + [k.value for k in node.keywords if k.arg != "validate_args"]
        if values and all(ctx.kind(a) in (HOST, CPU) for a in values):
            return
        edit = ctx.edit(v, "False") if v is not None else add_keyword(ctx, node, "validate_args", "False")
        fix = Fix("unsafe", (edit,), message="pass `validate_args=False`", assumption=self.fix_assumption)
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: argument validation checks tensor values on the host "
                    "(and so does `log_prob` on its samples)", "pass `validate_args=False`", fix=fix)
