"""Record the syncs of a third held-out set, `fresh2`: libraries and training code nobody here has looked at.

`heldout` and `fresh` (benchmarks/heldout_collect.py, benchmarks/fresh_collect.py) have both been read
while the linter was improved, so neither is out of sample any more. `fresh2` is recorded the same way
(same recorder, same windows inside a script's own loop; this file only adds workloads and imports the
machinery) in libraries outside the tuned, `heldout` and `fresh` sets and in two public training
repositories. The workloads were written from the libraries' documented public API (README / tutorial
examples), on synthetic data with random weights, before anyone ran the linter on this code or read it
for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh2): stable-baselines3 (+ gymnasium
  0.29.1, farama-notifications), zuko, piq, torch-optimizer (+ pytorch-ranger), torchode (+ torchtyping,
  typeguard 2), geoopt, pytorch-msssim; tyro 0.5 (+ docstring-parser, shtab) for cleanrl's command line.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh2/repos/<name>:
  vwxyzjn/cleanrl (cleanrl/ppo.py on CartPole-v1 and cleanrl/sac_continuous_action.py on Pendulum-v1, as
  they are), eriklindernoren/PyTorch-GAN (implementations/wgan_gp and acgan, as they are, on a synthetic
  MNIST in torchvision's raw file format, found where they look: ../../data/mnist).

    python benchmarks/fresh2_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh2_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh2 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh2 [--linter REV]`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh_collect as fc
import heldout_collect as hc
import torch
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh2" / "repos", ac.REPO / ".whl" / "fresh2"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh2/repos/<name>)
REPOS = {
    "cleanrl": ("vwxyzjn/cleanrl", "fe8d8a03c41a7ef5b523e2e354bd01c363e786bb",
                ["cleanrl/ppo.py", "cleanrl/sac_continuous_action.py", "cleanrl_utils/__init__.py",
                 "cleanrl_utils/buffers.py"]),
    "PyTorch-GAN": ("eriklindernoren/PyTorch-GAN", "36d3c77e5ff20ebe0aeefd322326a134a279b93e",
                    ["implementations/wgan_gp/wgan_gp.py", "implementations/acgan/acgan.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included
# (cloudpickle, sympy, scipy, rich, tensorboard are there already).
WHEELS = ["stable-baselines3==2.9.2", "gymnasium==0.29.1", "farama-notifications==0.0.6", "zuko==1.6.0",
          "piq==0.8.0", "torch-optimizer==0.3.0", "pytorch-ranger==0.1.1", "torchode==1.0.1", "torchtyping==0.1.5",
          "typeguard==2.13.3", "geoopt==0.5.1", "pytorch-msssim==1.0.0",
          # cleanrl's scripts parse their command line with tyro (0.5: no typeguard 4, which torchtyping can't take)
          "tyro==0.5.10", "docstring-parser==0.18.0", "shtab==1.13.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"stable_baselines3": "stable-baselines3", "gymnasium": "gymnasium", "zuko": "zuko", "piq": "piq",
         "torch_optimizer": "torch-optimizer", "pytorch_ranger": "pytorch-ranger", "torchode": "torchode",
         "geoopt": "geoopt", "pytorch_msssim": "pytorch-msssim", "tyro": "tyro", "scipy": "scipy", "numpy": "numpy"}

_opt = ac._opt


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _fit(model, loss_of):
    """One optimiser step of `model` on the loss `loss_of()` returns: a step function."""
    opt = _opt(model)

    def step():
        loss = loss_of()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


# ============================================================================================
# Libraries
# ============================================================================================

# -- stable-baselines3: the README's agents on classic-control tasks, learn() and evaluation -------

def sb3_on_policy(dev):
    from stable_baselines3 import A2C, PPO
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.evaluation import evaluate_policy

    ppo = PPO("MlpPolicy", make_vec_env("CartPole-v1", n_envs=4, seed=0), n_steps=32, batch_size=64, n_epochs=2,
              device=dev, seed=0)
    a2c = A2C("MlpPolicy", make_vec_env("CartPole-v1", n_envs=4, seed=0), n_steps=8, device=dev, seed=0)
    return {"ppo": lambda: ppo.learn(128), "a2c": lambda: a2c.learn(64),
            "evaluate": lambda: evaluate_policy(ppo, ppo.get_env(), n_eval_episodes=2, deterministic=True)}


def sb3_off_policy(dev):
    from stable_baselines3 import DQN, SAC, TD3
    from stable_baselines3.common.noise import NormalActionNoise

    dqn = DQN("MlpPolicy", "CartPole-v1", learning_starts=16, buffer_size=1000, batch_size=32, train_freq=4,
              target_update_interval=32, device=dev, seed=0)
    off = dict(learning_starts=24, buffer_size=1000, batch_size=32, device=dev, seed=0)
    sac = SAC("MlpPolicy", "Pendulum-v1", **off)  # entropy coefficient learnt ("auto")
    td3 = TD3("MlpPolicy", "Pendulum-v1", action_noise=NormalActionNoise(torch.zeros(1).numpy(),
                                                                          0.1 * torch.ones(1).numpy()), **off)
    return {"dqn": lambda: dqn.learn(64), "sac": lambda: sac.learn(48), "td3": lambda: td3.learn(48)}


# -- zuko: conditional flows trained by maximum likelihood (README), sampling, a continuous flow -----

def zuko_flows(dev):
    import zuko
    features, context, n = 3, 5, 256
    x, c = torch.randn(n, features, device=dev), torch.randn(n, context, device=dev)
    flows = {"nsf": zuko.flows.NSF(features, context, transforms=3, hidden_features=[64, 64]),
             "maf": zuko.flows.MAF(features, context, transforms=3, hidden_features=[64, 64]),
             "naf": zuko.flows.NAF(features, context, transforms=2, hidden_features=[64, 64]),
             "sospf": zuko.flows.SOSPF(features, context, transforms=2, hidden_features=[64, 64])}
    flows = {k: f.to(dev) for k, f in flows.items()}
    steps = [_fit(f, lambda f=f: -f(c).log_prob(x).mean()) for f in flows.values()]
    # a continuous flow: its log-density integrates the divergence along an adaptive ODE solve
    cnf = zuko.flows.CNF(features, context, hidden_features=[64, 64]).to(dev)
    unconditional = zuko.flows.NSF(features, transforms=2, hidden_features=[32, 32]).to(dev)

    def train():
        for step in steps:
            step()

    def sample():
        with torch.no_grad():
            for f in (*flows.values(), cnf):
                f(c[:4]).sample((4,))
            flows["nsf"](c[:16]).rsample_and_log_prob((4,))
            unconditional().sample((64,))
    return {"train": train, "train_cnf": _fit(cnf, lambda: -cnf(c[:64]).log_prob(x[:64]).mean()), "sample": sample}


# -- piq: image-quality losses on a small restoration net (README), full-reference and feature metrics

def piq_metrics(dev):
    import piq
    x = torch.rand(2, 3, 192, 192, device=dev)  # MS-SSIM's five scales want > 160 pixels
    y = (x + 0.1 * torch.randn_like(x)).clamp(0, 1)
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1)).to(dev)
    losses = [piq.SSIMLoss(data_range=1.0), piq.MultiScaleSSIMLoss(data_range=1.0),
              piq.InformationWeightedSSIMLoss(data_range=1.0), piq.VIFLoss(data_range=1.0),
              piq.GMSDLoss(data_range=1.0), piq.MultiScaleGMSDLoss(data_range=1.0), piq.HaarPSILoss(data_range=1.0),
              piq.MDSILoss(data_range=1.0), piq.FSIMLoss(data_range=1.0), piq.VSILoss(data_range=1.0),
              piq.SRSIMLoss(data_range=1.0), piq.DSSLoss(data_range=1.0)]
    tv = piq.TVLoss()
    losses = [fn.to(dev) for fn in losses]  # (modules: filters some of them hold go where the images are)

    def loss():
        out = torch.sigmoid(net(y))
        return sum(fn(out, x) for fn in losses) + 0.01 * tv(out)

    def metrics():
        with torch.no_grad():
            piq.psnr(x, y, data_range=1.0)
            piq.ssim(x, y, data_range=1.0)
            piq.multi_scale_ssim(x, y, data_range=1.0)
            piq.vif_p(x, y, data_range=1.0)
            piq.fsim(x, y, data_range=1.0)
            piq.gmsd(x, y, data_range=1.0)
            piq.haarpsi(x, y, data_range=1.0)
            piq.mdsi(x, y, data_range=1.0)
            piq.total_variation(x)

    fx, fy = torch.randn(200, 32, device=dev), torch.randn(220, 32, device=dev) + 0.2

    def features():  # distribution metrics on precomputed features, as the README computes FID
        with torch.no_grad():
            piq.FID()(fx, fy)
            piq.KID()(fx, fy)
            piq.PR()(fx, fy)
    return {"train": _fit(net, loss), "metrics": metrics, "features": features}


# -- torch-optimizer: its optimisers (README: drop-in torch.optim replacements) on a small regression

def torch_optimizer_zoo(dev):
    import torch_optimizer as optim
    x, y = torch.randn(64, 16, device=dev), torch.randn(64, 1, device=dev)

    def mlp():
        return nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 1)).to(dev)

    makers = [lambda p: optim.A2GradExp(p), lambda p: optim.A2GradInc(p), lambda p: optim.A2GradUni(p),
              lambda p: optim.AccSGD(p), lambda p: optim.AdaBelief(p), lambda p: optim.AdaBound(p),
              lambda p: optim.AdaMod(p), lambda p: optim.Adafactor(p), lambda p: optim.AdamP(p),
              lambda p: optim.AggMo(p), lambda p: optim.Apollo(p), lambda p: optim.DiffGrad(p),
              lambda p: optim.Lamb(p), lambda p: optim.MADGRAD(p), lambda p: optim.NovoGrad(p),
              lambda p: optim.PID(p), lambda p: optim.QHAdam(p), lambda p: optim.QHM(p), lambda p: optim.Ranger(p),
              lambda p: optim.RangerQH(p), lambda p: optim.RangerVA(p), lambda p: optim.SGDP(p),
              lambda p: optim.SGDW(p), lambda p: optim.SWATS(p), lambda p: optim.Shampoo(p),
              lambda p: optim.Yogi(p), lambda p: optim.Lookahead(optim.Yogi(p), k=2, alpha=0.5)]
    runs = []
    for make in makers:
        model = mlp()
        runs.append((model, make(model.parameters()), False))
    hessian = mlp()  # AdaHessian wants the graph kept for its Hutchinson estimate
    runs.append((hessian, optim.Adahessian(hessian.parameters()), True))

    def train():
        for model, opt, create_graph in runs:
            loss = nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward(create_graph=create_graph)
            opt.step()
    return {"train": train}


# -- torchode: batched neural-ODE solves with per-sample evaluation times (README), step control ---

def torchode_ivp(dev):
    import torchode as to
    batch, dim, points = 16, 4, 10

    class Field(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(dim, 32), nn.Tanh(), nn.Linear(32, dim))

        def forward(self, t, y):
            return self.net(y)

    field = Field().to(dev)
    y0 = torch.randn(batch, dim, device=dev)
    t_eval = torch.linspace(0, 1, points, device=dev).expand(batch, points) * torch.rand(batch, 1, device=dev).add(0.5)
    target = torch.randn(batch, points, dim, device=dev)
    term = to.ODETerm(field)
    solvers = [to.AutoDiffAdjoint(to.Dopri5(term=term), to.IntegralController(atol=1e-6, rtol=1e-3, term=term)),
               to.AutoDiffAdjoint(to.Tsit5(term=term), to.PIDController(atol=1e-6, rtol=1e-3, pcoeff=0.2,
                                                                        icoeff=0.5, dcoeff=0.0, term=term))]

    def loss():
        problem = to.InitialValueProblem(y0=y0, t_eval=t_eval)
        return sum((s.solve(problem).ys - target).pow(2).mean() for s in solvers)

    def infer():
        with torch.no_grad():
            heun = to.AutoDiffAdjoint(to.Heun(term=term), to.IntegralController(atol=1e-4, rtol=1e-3, term=term))
            sol = heun.solve(to.InitialValueProblem(y0=y0, t_eval=t_eval))
            sol.stats["n_steps"].max()
    return {"train": _fit(field, loss), "infer": infer}


# -- geoopt: Riemannian optimisation (Poincare embeddings, an orthogonal layer) and manifold MCMC ----

def geoopt_manifolds(dev):
    import geoopt
    ball = geoopt.PoincareBall(c=1.0)
    nodes, dim = 100, 8
    emb = geoopt.ManifoldParameter(ball.expmap0(1e-2 * torch.randn(nodes, dim, device=dev)), manifold=ball)
    emb_opt = geoopt.optim.RiemannianAdam([emb], lr=1e-2, stabilize=10)
    pos = torch.randint(0, nodes, (256, 2), device=dev)
    neg = torch.randint(0, nodes, (256, 10), device=dev)

    def poincare():  # the Poincare-embedding loss: a softmax over one positive and sampled negatives
        d_pos = ball.dist(emb[pos[:, 0]], emb[pos[:, 1]])
        d_neg = ball.dist(emb[pos[:, :1]], emb[neg])
        loss = -torch.log_softmax(-torch.cat([d_pos[:, None], d_neg], 1), 1)[:, 0].mean()
        emb_opt.zero_grad()
        loss.backward()
        emb_opt.step()

    stiefel = geoopt.EuclideanStiefel()
    w = geoopt.ManifoldParameter(stiefel.projx(torch.randn(32, 16, device=dev)), manifold=stiefel)
    w_opt = geoopt.optim.RiemannianSGD([w], lr=1e-2, momentum=0.9, stabilize=5)
    x = torch.randn(128, 32, device=dev)
    y = torch.randn(128, 16, device=dev)

    def orthogonal():
        loss = (x @ w - y).pow(2).mean()
        w_opt.zero_grad()
        loss.backward()
        w_opt.step()

    exact = geoopt.PoincareBallExact()  # the samplers want a manifold with a reversible retraction
    mu = exact.expmap0(0.3 * torch.randn(2, device=dev))
    point = geoopt.ManifoldParameter(exact.expmap0(0.3 * torch.randn(2, device=dev)), manifold=exact)
    sampler = geoopt.samplers.RHMC([point], epsilon=0.05, n_steps=5)

    def sample():  # a wrapped-Gaussian-like density around mu on the hyperbolic plane
        for _ in range(5):
            sampler.step(lambda: -0.5 * exact.dist(mu, point) ** 2)
    return {"poincare": poincare, "orthogonal": orthogonal, "sample": sample}


# -- pytorch-msssim: SSIM / MS-SSIM as a training loss and as metrics (README) ----------------------

def msssim_loss(dev):
    from pytorch_msssim import MS_SSIM, SSIM, ms_ssim, ssim
    x = torch.rand(4, 3, 192, 192, device=dev)
    noisy = (x + 0.1 * torch.randn_like(x)).clamp(0, 1)
    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1)).to(dev)
    ms, ss = MS_SSIM(data_range=1, size_average=True, channel=3), SSIM(data_range=1, size_average=True, channel=3)

    def loss():
        out = torch.sigmoid(net(noisy))
        return (1 - ms(out, x)) + (1 - ss(out, x))

    def metrics():
        with torch.no_grad():
            ssim(x * 255, noisy * 255, data_range=255, size_average=False)
            ms_ssim(x * 255, noisy * 255, data_range=255, size_average=False)
    return {"train": _fit(net, loss), "metrics": metrics}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _cleanrl(model: str, script: str, argv: list, start: int, stop: int):
    def build(dev):
        root = fc._on_path(_need_repo("cleanrl"))  # `from cleanrl_utils.buffers import ...` from its root
        args = [*argv, "--total-timesteps", "100000", *(["--no-cuda"] if dev.type != "cuda" else [])]

        def train():
            saved = sys.modules.get("tyro")
            sys.modules["tyro"] = _tyro_shim()
            try:
                with hc.window_on(torch.Tensor, "backward", model, "train", dev, start, stop,
                                  stop_script=True):
                    hc.run_script(root / "cleanrl" / f"{script}.py", args, hc._tmp())
            finally:
                if saved is None:
                    sys.modules.pop("tyro", None)
                else:
                    sys.modules["tyro"] = saved
        return {"train_window": train}
    return build


def _tyro_shim():
    """`tyro.cli(Args)` for cleanrl's flags: tyro 0.5 (the last that takes typeguard 2, which torchtyping
    needs) breaks on Python 3.12's argparse, so the scripts get their dataclass from this instead:
    `--kebab-case value`, `--flag` / `--no-flag` for booleans; the scripts themselves are unchanged."""
    import dataclasses
    import types

    def cli(cls):
        fields = {f.name: f for f in dataclasses.fields(cls)}
        values, argv, i = {}, sys.argv[1:], 0
        while i < len(argv):
            name = argv[i].lstrip("-").replace("-", "_")
            if name.startswith("no_") and name[3:] in fields:
                values[name[3:]], i = False, i + 1
                continue
            f = fields[name]
            if f.type in (bool, "bool"):
                values[name], i = True, i + 1
                continue
            kind = f.type if callable(f.type) else {"int": int, "float": float, "str": str}.get(f.type, str)
            values[name], i = kind(argv[i + 1]), i + 2
        return cls(**values)

    return types.SimpleNamespace(cli=cli)


# ppo.py: 32 steps x 4 CartPoles a rollout, 2 epochs x 4 minibatches of updates (8 backward calls an
# iteration): the window is a whole iteration's cycle (updates, logging, the next rollout, its updates).
cleanrl_ppo = _cleanrl("cleanrl.ppo", "ppo", ["--num-steps", "32", "--update-epochs", "2"], 5, 13)
# sac_continuous_action.py on Pendulum-v1: learning starts at step 90; the window spans steps ~98-101,
# where it logs (every 100 steps)
cleanrl_sac = _cleanrl("cleanrl.sac", "sac_continuous_action", ["--env-id", "Pendulum-v1", "--learning-starts", "90",
                                                 "--batch-size", "64"], 25, 37)


def _mnist(root: Path, n: int = 640) -> None:
    """A synthetic MNIST in torchvision's raw (idx) format under root/MNIST/raw: random digits."""
    import numpy as np
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for split, m in (("train", n), ("t10k", 64)):
        (raw / f"{split}-images-idx3-ubyte").write_bytes(
            np.array([2051, m, 28, 28], ">i4").tobytes() + rng.integers(0, 256, (m, 28, 28), dtype=np.uint8).tobytes())
        (raw / f"{split}-labels-idx1-ubyte").write_bytes(
            np.array([2049, m], ">i4").tobytes() + rng.integers(0, 10, m, dtype=np.uint8).tobytes())


def _gan(name: str, start: int, stop: int):
    """PyTorch-GAN's implementations/<name>/<name>.py as is (its DataLoader in-process: --n_cpu 0)."""
    def build(dev):
        script = _need_repo("PyTorch-GAN") / "implementations" / name / f"{name}.py"
        tmp = Path(hc._tmp())
        _mnist(tmp / "data" / "mnist")  # the scripts read ../../data/mnist
        cwd = tmp / "implementations" / name
        cwd.mkdir(parents=True)

        def train():
            with hc.window_on(torch.Tensor, "backward", f"gan.{name}", "train", dev, start, stop, stop_script=True):
                hc.run_script(script, ["--n_epochs", "2", "--batch_size", "64", "--n_cpu", "0"], str(cwd))
        return {"train_window": train}
    return build


MODELS = [
    # name, package, builder
    ("sb3.on_policy", "stable_baselines3", sb3_on_policy),
    ("sb3.off_policy", "stable_baselines3", sb3_off_policy),
    ("zuko.flows", "zuko", zuko_flows),
    ("piq.metrics", "piq", piq_metrics),
    ("torch_optimizer.zoo", "torch_optimizer", torch_optimizer_zoo),
    ("torchode.ivp", "torchode", torchode_ivp),
    ("geoopt.manifolds", "geoopt", geoopt_manifolds),
    ("msssim.loss", "pytorch_msssim", msssim_loss),
    # wgan_gp: the critic's backward every batch, the generator's every 5th: batches 2-8
    ("gan.wgan_gp", "PyTorch-GAN", _gan("wgan_gp", 3, 10)),
    # acgan: the generator's and the discriminator's backward every batch: batches 3-4
    ("gan.acgan", "PyTorch-GAN", _gan("acgan", 5, 9)),
    ("cleanrl.ppo", "cleanrl", cleanrl_ppo),
    ("cleanrl.sac", "cleanrl", cleanrl_sac),
]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh2", REPOS, DISTS, budget=220.0, per_model=60.0)


if __name__ == "__main__":
    sys.exit(main())
