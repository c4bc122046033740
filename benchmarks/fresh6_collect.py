"""Record the syncs of a seventh set, `fresh6` (a development set): libraries and training code nobody here read.

`fresh5` (benchmarks/fresh5_collect.py) is the sealed test set; `fresh6` is recorded the same way (same recorder,
same windows inside a script's own loop; this file only adds workloads and imports the machinery) in libraries
outside the tuned set and the six earlier sets and in two public training repositories that no set and no hand
label uses, to be read as a development set once recorded. The workloads were written from the libraries'
documented public API (README / docs examples, the names and signatures they export), on synthetic data with
random weights, before anyone ran the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh6): flow_matching (continuous, discrete
  and Riemannian flow matching), torchcfm (conditional flow matching with optimal-transport couplings; + POT),
  torchjd (Jacobian descent for multi-objective training; + quadprog, qpsolvers), lightly (self-supervised
  learning; its declared hydra-core is not imported by the modules used), fast-pytorch-kmeans (k-means on the GPU),
  torchkge (knowledge-graph embeddings), roma (rotation representations and registration), nnAudio
  (spectrograms as layers), cooper (constrained optimisation; cooper-optim). Their other needs (numpy, scipy,
  pandas, tqdm, psutil, torchvision, torchdiffeq, pytorch_lightning, lightning_utilities, scikit-learn) are on
  the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh6/repos/<name>:
  rasbt/LLMs-from-scratch (ch05 gpt_train.py as is on a synthetic the-verdict.txt, with a byte-level stand-in
  for tiktoken's GPT-2 encoding, whose files cannot be fetched there) and akamaster/pytorch_resnet_cifar10
  (trainer.py as is on synthetic CIFAR-10 batch files; torchvision's md5 check of them is skipped).
  trainer.py moves everything with `.cuda()`: GPU only.

    python benchmarks/fresh6_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh6_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh6 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh6 [--linter REV]`.
"""

from __future__ import annotations

import builtins
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh_collect as fc
import heldout_collect as hc
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh6" / "repos", ac.REPO / ".whl" / "fresh6"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh6/repos/<name>)
REPOS = {
    "LLMs-from-scratch": ("rasbt/LLMs-from-scratch", "28c65cdfbc3338e2e040016eea4b7fdf556e4d57",
                          ["ch05/01_main-chapter-code/gpt_train.py", "ch05/01_main-chapter-code/previous_chapters.py"]),
    "pytorch_resnet_cifar10": ("akamaster/pytorch_resnet_cifar10", "d5489e8995e81e91ce6b1d69dcc98ad579b0b153",
                               ["trainer.py", "resnet.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["flow_matching==1.0.10", "torchcfm==1.0.7", "POT==0.9.7.post1", "torchjd==0.18.0", "quadprog==0.1.14",
          "qpsolvers==4.13.0", "lightly==1.6.0", "fast-pytorch-kmeans==0.2.2", "torchkge==0.17.7", "roma==1.8.0",
          "nnAudio==0.3.4", "cooper-optim==1.0.1"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"flow_matching": "flow_matching", "torchcfm": "torchcfm", "pot": "POT", "torchjd": "torchjd",
         "lightly": "lightly", "fast_pytorch_kmeans": "fast-pytorch-kmeans", "torchkge": "torchkge", "roma": "roma",
         "nnaudio": "nnAudio", "cooper_optim": "cooper-optim", "torchvision": "torchvision",
         "torchdiffeq": "torchdiffeq", "pytorch_lightning": "pytorch_lightning", "numpy": "numpy", "scipy": "scipy",
         "pandas": "pandas"}


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _mlp(inp: int = 20, out: int = 5, hidden: int = 64) -> nn.Module:
    return nn.Sequential(nn.Linear(inp, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, out))


def _two_moons(n: int, dev, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(n, generator=g) * torch.pi
    upper = torch.rand(n, generator=g) < 0.5
    x = torch.where(upper, torch.cos(t), 1 - torch.cos(t))
    y = torch.where(upper, torch.sin(t), 0.5 - torch.sin(t))
    return (torch.stack([x, y], 1) + 0.05 * torch.randn(n, 2, generator=g)).to(dev)


# ============================================================================================
# Libraries
# ============================================================================================

# -- flow_matching: continuous, discrete and Riemannian flow matching, training and sampling (README, docs) ---

def flow_matching_flows(dev):
    from flow_matching.loss import MixturePathGeneralizedKL
    from flow_matching.path import AffineProbPath, GeodesicProbPath, MixtureDiscreteProbPath
    from flow_matching.path.scheduler import CondOTScheduler, CosineScheduler, PolynomialConvexScheduler
    from flow_matching.solver import MixtureDiscreteEulerSolver, ODESolver, RiemannianODESolver
    from flow_matching.utils import ModelWrapper
    from flow_matching.utils.manifolds import Sphere

    class VelocityMLP(nn.Module):
        def __init__(self, dim=2, hidden=128):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(dim + 1, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                     nn.Linear(hidden, dim))

        def forward(self, x, t):
            t = t.reshape(-1, 1).expand(x.shape[0], 1)
            return self.net(torch.cat([x, t], dim=-1))

    class Wrapped(ModelWrapper):
        def forward(self, x, t, **extras):
            return self.model(x, t)

    data = _two_moons(2048, dev)
    vf = VelocityMLP().to(dev)
    opt = torch.optim.Adam(vf.parameters(), lr=1e-3)
    paths = [AffineProbPath(scheduler=CondOTScheduler()), AffineProbPath(scheduler=CosineScheduler())]

    def continuous():  # the README's training loop on both schedulers, then sampling and likelihoods
        for path in paths:
            for i in range(6):
                x_1 = data[(i * 256) % 2048:(i * 256) % 2048 + 256]
                x_0 = torch.randn_like(x_1)
                t = torch.rand(x_1.shape[0], device=dev)
                sample = path.sample(t=t, x_0=x_0, x_1=x_1)
                loss = torch.pow(vf(sample.x_t, sample.t) - sample.dx_t, 2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        solver = ODESolver(velocity_model=Wrapped(vf))
        T = torch.linspace(0, 1, 10, device=dev)
        solver.sample(time_grid=T, x_init=torch.randn(256, 2, device=dev), method="midpoint", step_size=0.05,
                      return_intermediates=True)
        solver.sample(x_init=torch.randn(256, 2, device=dev), method="dopri5", step_size=None,
                      time_grid=torch.tensor([0.0, 1.0], device=dev))

        def log_p0(x):
            return torch.distributions.Independent(torch.distributions.Normal(torch.zeros(2, device=dev),
                                                                              torch.ones(2, device=dev)), 1).log_prob(x)
        solver.compute_likelihood(x_1=data[:128], log_p0=log_p0, step_size=0.05, method="midpoint",
                                  exact_divergence=True, time_grid=torch.tensor([1.0, 0.0], device=dev))
        solver.compute_likelihood(x_1=data[:128], log_p0=log_p0, step_size=0.05, method="midpoint",
                                  exact_divergence=False, time_grid=torch.tensor([1.0, 0.0], device=dev))
        x = paths[0].sample(t=torch.rand(64, device=dev), x_0=torch.randn(64, 2, device=dev), x_1=data[:64])
        v = vf(x.x_t, x.t)
        paths[0].velocity_to_target(v, x.x_t, x.t[:, None])
        paths[0].velocity_to_epsilon(v, x.x_t, x.t[:, None])

    vocab, length, mask = 16, 12, 16  # a masked source: token `mask` outside the data's vocabulary

    class Denoiser(nn.Module):
        def __init__(self, hidden=128):
            super().__init__()
            self.emb, self.t = nn.Embedding(vocab + 1, hidden), nn.Linear(1, hidden)
            self.net = nn.Sequential(nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, vocab + 1))

        def forward(self, x, t):
            return self.net(self.emb(x) + self.t(t.reshape(-1, 1, 1).expand(x.shape[0], 1, 1)))

    class Probs(ModelWrapper):
        def forward(self, x, t, **extras):
            return torch.softmax(self.model(x, t), dim=-1)

    tokens = (torch.arange(length, device=dev)[None] + torch.randint(0, vocab, (512, 1), device=dev)) % vocab
    denoiser = Denoiser().to(dev)
    dopt = torch.optim.Adam(denoiser.parameters(), lr=1e-3)
    dpath = MixtureDiscreteProbPath(scheduler=PolynomialConvexScheduler(n=2.0))
    loss_fn = MixturePathGeneralizedKL(path=dpath)

    def discrete():  # discrete flow matching from a masked source, then the Euler solver's samples
        for i in range(6):
            x_1 = tokens[(i * 64) % 512:(i * 64) % 512 + 64]
            x_0 = torch.full_like(x_1, mask)
            t = torch.rand(x_1.shape[0], device=dev) * (1 - 1e-3)
            sample = dpath.sample(t=t, x_0=x_0, x_1=x_1)
            loss = loss_fn(logits=denoiser(sample.x_t, sample.t), x_1=x_1, x_t=sample.x_t, t=sample.t)
            dopt.zero_grad()
            loss.backward()
            dopt.step()
        solver = MixtureDiscreteEulerSolver(model=Probs(denoiser), path=dpath, vocabulary_size=vocab + 1)
        solver.sample(x_init=torch.full((32, length), mask, device=dev), step_size=0.05,
                      time_grid=torch.tensor([0.0, 1.0 - 1e-3], device=dev), return_intermediates=True)

    sphere = Sphere()
    svf = VelocityMLP(dim=3).to(dev)
    sopt = torch.optim.Adam(svf.parameters(), lr=1e-3)
    gpath = GeodesicProbPath(scheduler=CondOTScheduler(), manifold=sphere)

    def riemannian():  # flow matching on the sphere along geodesics, then the projected Riemannian solver
        north = F.normalize(torch.tensor([0.0, 0.0, 1.0], device=dev) + 0.3 * torch.randn(512, 3, device=dev), dim=-1)
        for i in range(6):
            x_1 = north[(i * 64) % 512:(i * 64) % 512 + 64]
            x_0 = F.normalize(torch.randn_like(x_1), dim=-1)
            t = torch.rand(x_1.shape[0], device=dev)
            sample = gpath.sample(t=t, x_0=x_0, x_1=x_1)
            loss = torch.pow(svf(sample.x_t, sample.t) - sample.dx_t, 2).mean()
            sopt.zero_grad()
            loss.backward()
            sopt.step()
        solver = RiemannianODESolver(manifold=sphere, velocity_model=Wrapped(svf))
        solver.sample(x_init=F.normalize(torch.randn(128, 3, device=dev), dim=-1), step_size=0.05, method="midpoint",
                      projx=True, proju=True, time_grid=torch.linspace(0, 1, 5, device=dev), return_intermediates=True)
    return {"continuous": continuous, "discrete": discrete, "riemannian": riemannian}


# -- torchcfm: conditional flow matching with independent, optimal-transport and Schrodinger-bridge couplings
#    (README and its 2D examples; sampling by torchdiffeq, as its notebooks' alternative to torchdyn) ----------

def torchcfm_flows(dev):
    from torchcfm.conditional_flow_matching import (
        ConditionalFlowMatcher,
        ExactOptimalTransportConditionalFlowMatcher,
        SchrodingerBridgeConditionalFlowMatcher,
        TargetConditionalFlowMatcher,
        VariancePreservingConditionalFlowMatcher,
    )
    from torchcfm.models import MLP
    from torchcfm.optimal_transport import OTPlanSampler
    from torchdiffeq import odeint

    data = _two_moons(1024, dev)
    matchers = {"cfm": ConditionalFlowMatcher(sigma=0.0),
                "ot": ExactOptimalTransportConditionalFlowMatcher(sigma=0.1),
                "target": TargetConditionalFlowMatcher(sigma=0.0),
                "vp": VariancePreservingConditionalFlowMatcher(sigma=0.1),
                "sb": SchrodingerBridgeConditionalFlowMatcher(sigma=0.5, ot_method="exact")}
    models = {k: MLP(dim=2, time_varying=True, w=64).to(dev) for k in matchers}
    opts = {k: torch.optim.Adam(m.parameters(), lr=1e-3) for k, m in models.items()}
    score = MLP(dim=2, time_varying=True, w=64).to(dev)
    sopt = torch.optim.Adam(score.parameters(), lr=1e-3)

    def train():  # each matcher's training loop; the Schrodinger bridge also learns the score (its README)
        for name, fm in matchers.items():
            model, opt = models[name], opts[name]
            for i in range(4):
                x1 = data[(i * 128) % 1024:(i * 128) % 1024 + 128]
                x0 = torch.randn_like(x1)
                if name == "sb":
                    t, xt, ut, eps = fm.sample_location_and_conditional_flow(x0, x1, return_noise=True)
                    lambda_t = fm.compute_lambda(t)
                    st = score(torch.cat([xt, t[:, None]], dim=-1))
                    score_loss = torch.mean((lambda_t[:, None] * st + eps) ** 2)
                    sopt.zero_grad()
                    score_loss.backward()
                    sopt.step()
                else:
                    t, xt, ut = fm.sample_location_and_conditional_flow(x0, x1)
                vt = model(torch.cat([xt, t[:, None]], dim=-1))
                loss = torch.mean((vt - ut) ** 2)
                opt.zero_grad()
                loss.backward()
                opt.step()

    labels = (data[:, 1] > 0.25).long()
    cond = MLP(dim=2, out_dim=2, time_varying=True, w=64).to(dev)
    cond_in = nn.Linear(4, 3).to(dev)
    copt = torch.optim.Adam([*cond.parameters(), *cond_in.parameters()], lr=1e-3)

    def guided():  # class-conditional OT-CFM: couplings within labels, then plans sampled directly
        fm = matchers["ot"]
        for i in range(4):
            x1, y1 = data[(i * 128) % 1024:(i * 128) % 1024 + 128], labels[(i * 128) % 1024:(i * 128) % 1024 + 128]
            x0 = torch.randn_like(x1)
            t, xt, ut, _, y1 = fm.guided_sample_location_and_conditional_flow(x0, x1, y0=None, y1=y1)
            inp = cond_in(torch.cat([xt, t[:, None], y1[:, None].float()], dim=-1))
            loss = torch.mean((cond(inp) - ut) ** 2)
            copt.zero_grad()
            loss.backward()
            copt.step()
        OTPlanSampler(method="exact").sample_plan(torch.randn(64, 2, device=dev), data[:64])
        for method in ("sinkhorn", "unbalanced", "partial"):  # on host copies: the first recording found one of
            # these turning a cuda tensor into numpy
            sampler = OTPlanSampler(method=method, reg=0.5, normalize_cost=True)
            sampler.sample_plan(torch.randn(64, 2), data[:64].cpu())
        traj = torch.stack([torch.randn(32, 2), data[:32].cpu(), data[32:64].cpu()])  # host: it stacks with numpy
        OTPlanSampler(method="exact").sample_trajectory(traj)

    def sample():  # integrate each learned field from noise (torchdiffeq, as the README's alternative)
        with torch.no_grad():
            for model in models.values():
                def f(t, x, model=model):
                    return model(torch.cat([x, t.expand(x.shape[0], 1)], dim=-1))
                odeint(f, torch.randn(256, 2, device=dev), torch.linspace(0, 1, 20, device=dev), method="dopri5",
                       atol=1e-4, rtol=1e-4)
    return {"train": train, "guided": guided, "sample": sample}


# -- torchjd: scalarization, Jacobian descent with aggregators (mtl_backward, jac_to_grad), instance-wise risk
#    minimization and the autogram engine (README, docs examples) -------------------------------------------

def torchjd_multi(dev):
    from torchjd import aggregation as A
    from torchjd import scalarization as S
    from torchjd.autogram import Engine
    from torchjd.autojac import backward, jac_to_grad, mtl_backward

    inputs, t1, t2 = (torch.randn(8, 16, 10, device=dev), torch.randn(8, 16, 1, device=dev),
                      torch.randn(8, 16, 1, device=dev))

    def modules():
        shared = nn.Sequential(nn.Linear(10, 5), nn.ReLU(), nn.Linear(5, 3), nn.ReLU()).to(dev)
        return shared, nn.Linear(3, 1).to(dev), nn.Linear(3, 1).to(dev)

    def scalarization():  # the README's loop with each scalarizer
        for scal in (S.GeometricMean(), S.Mean(), S.Sum(), S.Random(), S.DWA(), S.UW(2), S.IMTLL(2), S.FAMO(2),
                     S.STCH(mu=1.0), S.PBI(theta=5.0, weights=torch.tensor([0.5, 0.5], device=dev)),
                     S.Constant(torch.tensor([1.0, 2.0], device=dev))):
            shared, h1, h2 = modules()
            scal = scal.to(dev)  # the learned scalarizers (UW, IMTLL, FAMO) hold parameters
            params = [*shared.parameters(), *h1.parameters(), *h2.parameters(), *scal.parameters()]
            opt = torch.optim.SGD(params, lr=0.1)
            for x, y1, y2 in zip(inputs[:3], t1, t2):
                features = shared(x)
                loss = scal(torch.stack([F.mse_loss(h1(features), y1), F.mse_loss(h2(features), y2)]))
                loss.backward()
                opt.step()
                opt.zero_grad()

    aggregators = [A.UPGrad(), A.MGDA(), A.DualProj(), A.PCGrad(), A.IMTLG(), A.AlignedMTL(), A.GradDrop(),
                   A.ConFIG(), A.Mean(), A.Sum(), A.Random(), A.GradVac(), A.PCD(), A.FairGrad(alpha=1.0),
                   A.ExcessMTL(), A.Constant(torch.tensor([1.0, 1.0], device=dev))]

    def jacobian_descent():  # the README's multi-task loop with each aggregator
        for agg in aggregators:
            shared, h1, h2 = modules()
            opt = torch.optim.SGD([*shared.parameters(), *h1.parameters(), *h2.parameters()], lr=0.1)
            for x, y1, y2 in zip(inputs[:3], t1, t2):
                features = shared(x)
                mtl_backward([F.mse_loss(h1(features), y1), F.mse_loss(h2(features), y2)], features=features)
                jac_to_grad(shared.parameters(), agg)
                opt.step()
                opt.zero_grad()

    def instance_wise():  # instance-wise risk minimization: one loss per example, with autojac and with autogram
        model = nn.Sequential(nn.Linear(10, 8), nn.ReLU(), nn.Linear(8, 1)).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in zip(inputs[:3], t1):
            losses = F.mse_loss(model(x), y, reduction="none").squeeze(-1)
            backward(losses)
            jac_to_grad(model.parameters(), A.UPGrad())
            opt.step()
            opt.zero_grad()
        engine = Engine(model, batch_dim=0)
        weighting = A.UPGradWeighting()
        for x, y in zip(inputs[3:6], t1[3:6]):
            losses = F.mse_loss(model(x), y, reduction="none").squeeze(-1)
            gramian = engine.compute_gramian(losses)
            losses.backward(weighting(gramian))
            opt.step()
            opt.zero_grad()
    return {"scalarization": scalarization, "jacobian_descent": jacobian_descent, "instance_wise": instance_wise}


# -- lightly: SimCLR, MoCo, BYOL, DINO, SwAV, Barlow Twins, VICReg, NNCLR training steps (its examples) ----

def lightly_ssl(dev):
    import copy

    import numpy as np
    import torchvision
    from lightly.loss import (
        BarlowTwinsLoss,
        DCLLoss,
        DINOLoss,
        NegativeCosineSimilarity,
        NTXentLoss,
        SwaVLoss,
        VICRegLoss,
    )
    from lightly.models.modules import (
        BarlowTwinsProjectionHead,
        BYOLPredictionHead,
        BYOLProjectionHead,
        DINOProjectionHead,
        MoCoProjectionHead,
        NNCLRPredictionHead,
        NNCLRProjectionHead,
        NNMemoryBankModule,
        SimCLRProjectionHead,
        SwaVProjectionHead,
        SwaVPrototypes,
    )
    from lightly.models.utils import batch_shuffle, batch_unshuffle, deactivate_requires_grad, update_momentum
    from lightly.transforms import SimCLRTransform
    from lightly.utils.scheduler import cosine_schedule
    from PIL import Image

    rng = np.random.default_rng(0)
    images = [Image.fromarray(rng.integers(0, 256, (32, 32, 3), dtype=np.uint8)) for _ in range(128)]
    transform = SimCLRTransform(input_size=32, gaussian_blur=0.0)

    class Views(torch.utils.data.Dataset):
        def __len__(self):
            return len(images)

        def __getitem__(self, i):
            return transform(images[i]), i % 10

    loader = torch.utils.data.DataLoader(Views(), batch_size=32, shuffle=True, drop_last=True)

    def backbone():
        net = torchvision.models.resnet18()
        net.fc = nn.Identity()
        return net.to(dev)

    steps = 3

    def batches():
        for i, ((x0, x1), _) in enumerate(loader):
            if i == steps:
                return
            yield x0.to(dev), x1.to(dev)

    def simclr():  # SimCLR with NT-Xent, then DCL, then MoCo (a momentum encoder and a memory bank)
        net, head = backbone(), SimCLRProjectionHead(512, 512, 128).to(dev)
        opt = torch.optim.SGD([*net.parameters(), *head.parameters()], lr=0.06)
        for crit in (NTXentLoss(), DCLLoss()):
            for x0, x1 in batches():
                loss = crit(head(net(x0)), head(net(x1)))
                loss.backward()
                opt.step()
                opt.zero_grad()
        mhead = MoCoProjectionHead(512, 512, 128).to(dev)
        key_net, key_head = copy.deepcopy(net), copy.deepcopy(mhead)
        deactivate_requires_grad(key_net)
        deactivate_requires_grad(key_head)
        crit = NTXentLoss(memory_bank_size=(4096, 128))
        opt = torch.optim.SGD([*net.parameters(), *mhead.parameters()], lr=0.06)
        for epoch in range(2):
            momentum = cosine_schedule(epoch, 2, 0.996, 1)
            for x_query, x_key in batches():
                update_momentum(net, key_net, m=momentum)
                update_momentum(mhead, key_head, m=momentum)
                query = mhead(net(x_query))
                x_key, shuffle = batch_shuffle(x_key)
                key = batch_unshuffle(key_head(key_net(x_key)).detach(), shuffle)
                loss = crit(query, key)
                loss.backward()
                opt.step()
                opt.zero_grad()

    def byol():  # BYOL: predictor, momentum target, symmetric negative cosine similarity
        net = backbone()
        proj, pred = BYOLProjectionHead(512, 1024, 256).to(dev), BYOLPredictionHead(256, 1024, 256).to(dev)
        t_net, t_proj = copy.deepcopy(net), copy.deepcopy(proj)
        deactivate_requires_grad(t_net)
        deactivate_requires_grad(t_proj)
        crit = NegativeCosineSimilarity()
        opt = torch.optim.SGD([*net.parameters(), *proj.parameters(), *pred.parameters()], lr=0.06)
        for epoch in range(2):
            m = cosine_schedule(epoch, 2, 0.996, 1)
            for x0, x1 in batches():
                update_momentum(net, t_net, m=m)
                update_momentum(proj, t_proj, m=m)
                p0, p1 = pred(proj(net(x0))), pred(proj(net(x1)))
                z0, z1 = t_proj(t_net(x0)).detach(), t_proj(t_net(x1)).detach()
                loss = 0.5 * (crit(p0, z1) + crit(p1, z0))
                loss.backward()
                opt.step()
                opt.zero_grad()

    def dino():  # DINO: teacher centring and temperature warm-up, last layer frozen for the first epoch
        net, head = backbone(), DINOProjectionHead(512, 512, 64, 2048, freeze_last_layer=1).to(dev)
        t_head = DINOProjectionHead(512, 512, 64, 2048).to(dev)  # the head's weight norm cannot be deep-copied
        t_net, _ = copy.deepcopy(net), t_head.load_state_dict(head.state_dict())
        deactivate_requires_grad(t_net)
        deactivate_requires_grad(t_head)
        crit = DINOLoss(output_dim=2048, warmup_teacher_temp_epochs=5).to(dev)  # its centre is a buffer
        opt = torch.optim.Adam([*net.parameters(), *head.parameters()], lr=1e-3)
        for epoch in range(2):
            m = cosine_schedule(epoch, 2, 0.996, 1)
            for x0, x1 in batches():
                update_momentum(net, t_net, m=m)
                update_momentum(head, t_head, m=m)
                teacher_out = [t_head(t_net(x)) for x in (x0, x1)]
                student_out = [head(net(x)) for x in (x0, x1)]
                loss = crit(teacher_out, student_out, epoch=epoch)
                loss.backward()
                head.cancel_last_layer_gradients(current_epoch=epoch)
                opt.step()
                opt.zero_grad()

    def swav_barlow_vicreg_nnclr():  # SwAV (Sinkhorn-Knopp), Barlow Twins, VICReg and NNCLR's nearest neighbours
        net = backbone()
        proj, protos = SwaVProjectionHead(512, 512, 128).to(dev), SwaVPrototypes(128, n_prototypes=64).to(dev)
        opt = torch.optim.Adam([*net.parameters(), *proj.parameters(), *protos.parameters()], lr=1e-3)
        crit = SwaVLoss()
        for x0, x1 in batches():
            protos.normalize()
            outs = [protos(F.normalize(proj(net(x)), dim=1)) for x in (x0, x1)]
            loss = crit(outs, [])
            loss.backward()
            opt.step()
            opt.zero_grad()
        for head, crit in ((BarlowTwinsProjectionHead(512, 512, 512), BarlowTwinsLoss()),
                           (BarlowTwinsProjectionHead(512, 512, 512), VICRegLoss())):
            head = head.to(dev)
            opt = torch.optim.SGD([*net.parameters(), *head.parameters()], lr=0.06)
            for x0, x1 in batches():
                loss = crit(head(net(x0)), head(net(x1)))
                loss.backward()
                opt.step()
                opt.zero_grad()
        proj, pred = NNCLRProjectionHead(512, 512, 128).to(dev), NNCLRPredictionHead(128, 512, 128).to(dev)
        bank = NNMemoryBankModule(size=(1024, 128)).to(dev)
        crit = NTXentLoss()
        opt = torch.optim.SGD([*net.parameters(), *proj.parameters(), *pred.parameters()], lr=0.06)
        for x0, x1 in batches():
            z0, z1 = proj(net(x0)), proj(net(x1))
            p0, p1 = pred(z0), pred(z1)
            z0 = bank(z0.detach(), update=False)
            z1 = bank(z1.detach(), update=True)
            loss = 0.5 * (crit(z0, p1) + crit(z1, p0))
            loss.backward()
            opt.step()
            opt.zero_grad()
    return {"simclr_moco": simclr, "byol": byol, "dino": dino, "swav_barlow_vicreg_nnclr": swav_barlow_vicreg_nnclr}


# -- fast-pytorch-kmeans: KMeans and MultiKMeans (README), as DeepCluster-style pseudo-labels each epoch -----

def kmeans_cluster(dev):
    from fast_pytorch_kmeans import KMeans, MultiKMeans

    X = torch.randn(4096, 32, device=dev) + 3 * torch.randn(16, 32, device=dev).repeat_interleave(256, 0)
    net = _mlp(inp=32, out=16, hidden=64).to(dev)
    encoder = nn.Sequential(*list(net)[:-1])
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)

    def fit():  # the README's calls: euclidean and cosine, k-means++ initialisation, mini-batches, several at once
        KMeans(n_clusters=16, mode="euclidean", verbose=0).fit_predict(X)
        km = KMeans(n_clusters=16, mode="cosine", verbose=0, init_method="kmeans++")
        km.fit_predict(X)
        km.predict(X[:512])
        KMeans(n_clusters=16, mode="euclidean", minibatch=512, max_iter=20).fit_predict(X)
        MultiKMeans(n_clusters=8, mode="euclidean", verbose=0).fit_predict(X[:2048].reshape(4, 512, 32))

    def deepcluster():  # each epoch: cluster the current features, then train on the pseudo-labels
        for _ in range(3):
            with torch.no_grad():
                feats = encoder(X)
            labels = KMeans(n_clusters=16, mode="euclidean", max_iter=30).fit_predict(feats)
            for i in range(0, 4096, 1024):
                loss = F.cross_entropy(net(X[i:i + 1024]), labels[i:i + 1024])
                opt.zero_grad()
                loss.backward()
                opt.step()
    return {"fit": fit, "deepcluster": deepcluster}


# -- torchkge: knowledge-graph embeddings trained with negative sampling, then link prediction and triplet
#    classification (its docs' training and evaluation examples) ---------------------------------------------

def torchkge_kg(dev):
    import numpy as np
    import pandas as pd
    from torchkge.data_structures import KnowledgeGraph
    from torchkge.evaluation import LinkPredictionEvaluator, TripletClassificationEvaluator
    from torchkge.models import ComplExModel, DistMultModel, TransEModel, TransHModel
    from torchkge.sampling import BernoulliNegativeSampler, UniformNegativeSampler
    from torchkge.utils import BinaryCrossEntropyLoss, DataLoader, LogisticLoss, MarginLoss

    rng = np.random.default_rng(0)
    n_ent, n_rel, n = 300, 8, 4000
    heads = rng.integers(0, n_ent, n)
    rels = rng.integers(0, n_rel, n)
    tails = (heads * (rels + 3) + rng.integers(0, 5, n)) % n_ent
    df = pd.DataFrame({"from": [f"e{h}" for h in heads], "rel": [f"r{r}" for r in rels],
                       "to": [f"e{t}" for t in tails]}).drop_duplicates()
    kg = KnowledgeGraph(df=df)
    kg_train, kg_val, kg_test = kg.split_kg(sizes=(len(df) - 600, 300, 300))
    use_cuda = "all" if dev.type == "cuda" else None

    def transe():  # the docs' TransE loop: Bernoulli corruption, margin loss, normalised embeddings each epoch
        model, crit = TransEModel(32, kg.n_ent, kg.n_rel, dissimilarity_type="L2"), MarginLoss(0.5)
        model.to(dev)
        crit.to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
        sampler = BernoulliNegativeSampler(kg_train)
        loader = DataLoader(kg_train, batch_size=512)  # batches corrupted on the host, then moved: the first
        # recording found the Bernoulli sampler indexing host tensors with the batch's
        for _ in range(2):
            running = 0.0
            for batch in loader:
                h, t, r = batch[0], batch[1], batch[2]
                n_h, n_t = sampler.corrupt_batch(h, t, r)
                h, t, r, n_h, n_t = h.to(dev), t.to(dev), r.to(dev), n_h.to(dev), n_t.to(dev)
                opt.zero_grad()
                pos, neg = model(h, t, r, n_h, n_t)
                loss = crit(pos, neg)
                loss.backward()
                opt.step()
                running += loss.item()
            model.normalize_parameters()
        ev = LinkPredictionEvaluator(model, kg_test)
        ev.evaluate(b_size=64, verbose=False)
        ev.mean_rank()
        ev.hit_at_k(10)
        ev.mrr()
        model.cpu()  # the second recording found its Bernoulli sampler indexing host tensors with cuda ones
        tc = TripletClassificationEvaluator(model, kg_val, kg_test)
        tc.evaluate(b_size=128)
        tc.accuracy(b_size=128)

    def others():  # DistMult and ComplEx with logistic / binary cross-entropy losses, TransH with the margin
        # loss, uniform corruption
        for model, crit in ((DistMultModel(32, kg.n_ent, kg.n_rel), LogisticLoss()),
                            (ComplExModel(16, kg.n_ent, kg.n_rel), BinaryCrossEntropyLoss()),
                            (TransHModel(32, kg.n_ent, kg.n_rel), MarginLoss(0.5))):
            model.to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            sampler = UniformNegativeSampler(kg_train)
            for batch in DataLoader(kg_train, batch_size=512, use_cuda=use_cuda):
                h, t, r = batch[0], batch[1], batch[2]
                n_h, n_t = sampler.corrupt_batch(h, t, r)
                pos, neg = model(h, t, r, n_h, n_t)
                loss = crit(pos, neg)
                opt.zero_grad()
                loss.backward()
                opt.step()
            ev = LinkPredictionEvaluator(model, kg_test)
            ev.evaluate(b_size=64, verbose=False)
            ev.hit_at_k(3)
    return {"transe": transe, "others": others}


# -- roma: rotation regression through several representations, registration, interpolation (README, docs) --

def roma_rotations(dev):
    import roma

    x = torch.randn(256, 16, device=dev)
    target = roma.random_rotmat(256, device=dev)
    heads = {"procrustes": nn.Linear(16, 9), "gramschmidt": nn.Linear(16, 6), "symmatrix": nn.Linear(16, 10),
             "rotvec": nn.Linear(16, 3), "quat": nn.Linear(16, 4)}
    heads = {k: v.to(dev) for k, v in heads.items()}
    opt = torch.optim.Adam([p for h in heads.values() for p in h.parameters()], lr=1e-3)

    def to_rotmat(name, out):
        if name == "procrustes":
            return roma.special_procrustes(out.reshape(-1, 3, 3))
        if name == "gramschmidt":
            return roma.special_gramschmidt(out.reshape(-1, 3, 2))
        if name == "symmatrix":
            return roma.unitquat_to_rotmat(roma.symmatrixvec_to_unitquat(out))
        if name == "rotvec":
            return roma.rotvec_to_rotmat(out)
        return roma.unitquat_to_rotmat(roma.quat_normalize(out))

    def train():  # each representation trained on the geodesic distance to the targets
        for _ in range(4):
            loss = sum(roma.rotmat_geodesic_distance(to_rotmat(k, h(x)), target).mean() for k, h in heads.items())
            opt.zero_grad()
            loss.backward()
            opt.step()

    def geometry():  # conversions, compositions, interpolation, registration, rigid transforms, checks
        with torch.no_grad():
            R = to_rotmat("procrustes", heads["procrustes"](x))
            q = roma.rotmat_to_unitquat(R)
            rv = roma.rotmat_to_rotvec(R)
            roma.rotvec_to_unitquat(rv)
            roma.unitquat_to_rotvec(q)
            roma.rotmat_to_euler("xyz", R)
            roma.euler_to_rotmat("xyz", torch.randn(256, 3, device=dev))
            roma.quat_composition([q, roma.quat_inverse(q)])
            roma.rotmat_composition([R, roma.rotmat_inverse(R)])
            roma.unitquat_slerp(q[:8], roma.random_unitquat(8, device=dev), torch.linspace(0, 1, 5, device=dev))
            roma.rotvec_slerp(rv[:8], roma.random_rotvec(8, device=dev), torch.linspace(0, 1, 5, device=dev))
            roma.unitquat_geodesic_distance(q, roma.rotmat_to_unitquat(target))
            pts = torch.randn(256, 50, 3, device=dev)
            moved = roma.quat_action(q[:, None], pts, is_normalized=True) + torch.randn(256, 1, 3, device=dev)
            Rr, t = roma.rigid_points_registration(pts, moved)
            roma.rigid_points_registration(pts, moved, weights=torch.rand(256, 50, device=dev), compute_scaling=True)
            roma.rigid_points_registration_unitquat(pts, moved)
            T = roma.Rigid(Rr, t)
            (T @ T.inverse()).apply(pts[:, 0])
            roma.Rotation(R).normalize()
            roma.RigidUnitQuat(q, t).to_homogeneous()
            roma.is_rotation_matrix(R[0], epsilon=1e-5)
            roma.is_orthonormal_matrix(R[0], epsilon=1e-5)
    return {"train": train, "geometry": geometry}


# -- nnAudio: spectrogram layers (trainable STFT / mel / gammatone kernels, CQT, VQT, MFCC), iSTFT, Griffin-Lim
#    (README: layers used as the first layers of a network) --------------------------------------------------

def nnaudio_features(dev):
    from nnAudio import features

    sr = 16000
    audio = torch.randn(4, sr, device=dev) * 0.1
    labels = torch.randint(0, 4, (4,), device=dev)
    stft = features.STFT(n_fft=512, hop_length=128, sr=sr, output_format="Magnitude", trainable=True,
                         verbose=False).to(dev)
    mel = features.MelSpectrogram(sr=sr, n_fft=512, n_mels=64, hop_length=128, trainable_mel=True,
                                  trainable_STFT=True, verbose=False).to(dev)
    gamma = features.Gammatonegram(sr=sr, n_fft=512, n_bins=64, hop_length=128, trainable_bins=True,
                                   verbose=False).to(dev)
    fronts = {"stft": stft, "mel": mel, "gamma": gamma}
    heads = {k: nn.Sequential(nn.Flatten(1), nn.LazyLinear(4)).to(dev) for k in fronts}
    for k, front in fronts.items():
        heads[k](front(audio[:1]))  # materialise the lazy layer
    opt = torch.optim.Adam([p for m in [*fronts.values(), *heads.values()] for p in m.parameters()], lr=1e-4)

    def train():  # classifiers trained through trainable front ends
        for _ in range(3):
            loss = sum(F.cross_entropy(heads[k](torch.log1p(front(audio))), labels) for k, front in fronts.items())
            opt.zero_grad()
            loss.backward()
            opt.step()

    cqt1992 = features.CQT1992v2(sr=sr, hop_length=256, n_bins=60, verbose=False).to(dev)
    cqt2010 = features.CQT2010v2(sr=sr, hop_length=256, n_bins=60, verbose=False).to(dev)
    vqt = features.VQT(sr=sr, hop_length=256, n_bins=60, gamma=5, verbose=False).to(dev)
    mfcc = features.MFCC(sr=sr, n_mfcc=20, n_fft=512, hop_length=128, verbose=False).to(dev)
    complex_stft = features.STFT(n_fft=512, hop_length=128, sr=sr, output_format="Complex", iSTFT=True,
                                 verbose=False).to(dev)
    istft = features.iSTFT(n_fft=512, hop_length=128, sr=sr, verbose=False).to(dev)

    def analyse():  # the fixed transforms and the inversions (Griffin_Lim calls torch.istft on a real
        # tensor, which torch 2 refuses: left out)
        with torch.no_grad():
            cqt1992(audio)
            cqt2010(audio)
            vqt(audio)
            mfcc(audio)
            spec = complex_stft(audio)
            complex_stft.inverse(spec, onesided=True, length=sr)
            istft(spec, onesided=True, length=sr)
    return {"train": train, "analyse": analyse}


# -- cooper: constrained training through its CMP, constraints and constrained optimizers (README, docs) ------

def cooper_constrained(dev):
    import cooper
    from cooper.optim import (
        AlternatingDualPrimalOptimizer,
        AlternatingPrimalDualOptimizer,
        ExtrapolationConstrainedOptimizer,
        ExtraSGD,
        SimultaneousOptimizer,
        nuPI,
    )
    from cooper.penalty_coefficients import DensePenaltyCoefficient

    X = torch.randn(1024, 20, device=dev)
    group = (X[:, 0] > 0).long()
    y = ((X[:, 1] + 0.5 * X[:, 0]) > 0).long()

    class FairCMP(cooper.ConstrainedMinimizationProblem):
        """Cross-entropy under a bound on the norm of the weights (inequality) and equal positive rates in two
        groups (one equality constraint per group, observed through an indexed multiplier)."""

        def __init__(self, formulation=cooper.formulations.Lagrangian):
            super().__init__()
            kw = {}
            if formulation is cooper.formulations.AugmentedLagrangian:
                kw = {"penalty_coefficient": DensePenaltyCoefficient(init=torch.tensor(1.0, device=dev))}
            self.norm = cooper.Constraint(constraint_type=cooper.ConstraintType.INEQUALITY,
                                          formulation_type=formulation,
                                          multiplier=cooper.multipliers.DenseMultiplier(num_constraints=1, device=dev),
                                          **kw)
            if formulation is cooper.formulations.AugmentedLagrangian:
                kw = {"penalty_coefficient": DensePenaltyCoefficient(init=torch.ones(2, device=dev))}
            multiplier = cooper.multipliers.IndexedMultiplier(num_constraints=2, device=dev)
            self.rate = cooper.Constraint(constraint_type=cooper.ConstraintType.EQUALITY, formulation_type=formulation,
                                          multiplier=multiplier, **kw)

        def compute_cmp_state(self, model, inputs, targets, groups):
            logits = model(inputs)
            loss = F.cross_entropy(logits, targets)
            norm = sum(p.pow(2).sum() for p in model.parameters())
            pos = torch.softmax(logits, -1)[:, 1]
            overall = pos.mean()
            idx = torch.tensor([0, 1], device=inputs.device)
            rates = torch.stack([(pos * (groups == g)).sum() / (groups == g).sum().clamp(min=1) for g in (0, 1)])
            observed = {self.norm: cooper.ConstraintState(violation=(norm - 50.0).reshape(1)),
                        self.rate: cooper.ConstraintState(violation=rates - overall, constraint_features=idx)}
            return cooper.CMPState(loss=loss, observed_constraints=observed)

    def run(make_optimizer, formulation=cooper.formulations.Lagrangian, epochs=2, primal=torch.optim.Adam):
        model = _mlp(out=2).to(dev)
        cmp = FairCMP(formulation)
        cooper_opt = make_optimizer(cmp, primal(model.parameters(), lr=1e-3))
        for _ in range(epochs):
            for i in range(0, 1024, 256):
                kw = {"model": model, "inputs": X[i:i + 256], "targets": y[i:i + 256], "groups": group[i:i + 256]}
                roll_out = cooper_opt.roll(compute_cmp_state_kwargs=kw)
                roll_out.loss  # noqa: B018 (read as a training loop logs it)
                roll_out.cmp_state.observed_constraints  # noqa: B018
        return cmp

    def lagrangian():  # simultaneous gradient descent-ascent (the README), then the alternating updates
        run(lambda cmp, p: SimultaneousOptimizer(cmp=cmp, primal_optimizers=p,
                                                 dual_optimizers=torch.optim.SGD(cmp.dual_parameters(), lr=1e-2,
                                                                                 maximize=True)))
        run(lambda cmp, p: AlternatingPrimalDualOptimizer(cmp=cmp, primal_optimizers=p,
                                                          dual_optimizers=torch.optim.SGD(cmp.dual_parameters(),
                                                                                          lr=1e-2, maximize=True)))
        run(lambda cmp, p: AlternatingDualPrimalOptimizer(cmp=cmp, primal_optimizers=p,
                                                          dual_optimizers=torch.optim.SGD(cmp.dual_parameters(),
                                                                                          lr=1e-2, maximize=True)))

    def augmented():  # the augmented Lagrangian (alternating, penalty coefficients), the nuPI dual optimizer
        run(lambda cmp, p: AlternatingPrimalDualOptimizer(cmp=cmp, primal_optimizers=p,
                                                          dual_optimizers=torch.optim.SGD(cmp.dual_parameters(),
                                                                                          lr=1e-2, maximize=True)),
            formulation=cooper.formulations.AugmentedLagrangian)
        run(lambda cmp, p: SimultaneousOptimizer(cmp=cmp, primal_optimizers=p,
                                                 dual_optimizers=nuPI(cmp.dual_parameters(), lr=1e-2, Kp=1.0, Ki=1.0,
                                                                      maximize=True)))

    def extragradient():  # extra-gradient on both players
        run(lambda cmp, p: ExtrapolationConstrainedOptimizer(cmp=cmp, primal_optimizers=p,
                                                             dual_optimizers=ExtraSGD(cmp.dual_parameters(), lr=1e-2,
                                                                                      maximize=True)),
            primal=ExtraSGD)
    return {"lagrangian": lagrangian, "augmented": augmented, "extragradient": extragradient}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _byte_encoding():
    """A byte-level stand-in for tiktoken's GPT-2 encoding, whose files cannot be fetched on the GPU machine:
    one token per byte (ids < 256, inside the script's 50257-token vocabulary) and GPT-2's end-of-text token."""
    import tiktoken
    return tiktoken.Encoding(name="gpt2-bytes", pat_str=r"""'s|'t|'re|'ve|'m|'ll|'d| ?\w+| ?\d+| ?[^\s\w]+|\s+""",
                             mergeable_ranks={bytes([i]): i for i in range(256)},
                             special_tokens={"<|endoftext|>": 50256})


def _verdict(path: Path, chars: int = 20_000, seed: int = 0) -> None:
    """A synthetic the-verdict.txt (the script downloads the short story when it is missing): sentences of
    common words, about as long as the story."""
    import random
    rng = random.Random(seed)
    words = ("the of and to in a he was that his it had I with as for at on her him be not by but my this "
             "which said from have all picture Gisburn Stroud painted one so who were an would been she there "
             "little more up no out if what when could into them only then than now about Jack wife").split()
    out = []
    while sum(len(s) for s in out) < chars:
        out.append(" ".join(rng.choice(words) for _ in range(rng.randint(5, 18))).capitalize() + ". ")
    path.write_text("".join(out))


def llms_gpt_train(dev):
    """ch05's gpt_train.py as is (the 124M-parameter GPT, context 256, batch 2, AdamW; an evaluation of one batch
    of each split every 5 steps, a 50-token sample after each epoch) on a synthetic the-verdict.txt. Its prints
    are one per evaluation and one sample per epoch (about 35 steps, 7 evaluations): the window spans prints
    2..10, steps 5 to about 40, the first epoch's sample included."""
    root = _need_repo("LLMs-from-scratch") / "ch05" / "01_main-chapter-code"
    cwd = Path(hc._tmp())
    _verdict(cwd / "the-verdict.txt")

    def window():
        import tiktoken
        enc = _byte_encoding()
        orig = tiktoken.get_encoding
        tiktoken.get_encoding = lambda name: enc if name == "gpt2" else orig(name)
        try:
            with hc.window_on(builtins, "print", "gpt_train.124m", "train", dev, 2, 10, stop_script=True):
                hc.run_script(root / "gpt_train.py", [], str(cwd))
        finally:
            tiktoken.get_encoding = orig
    return {"train_window": window}


def _cifar(folder: Path, n_train: int = 5000, n_test: int = 1000, seed: int = 0) -> None:
    """Synthetic CIFAR-10 batch files in torchvision's layout (cifar-10-batches-py/data_batch_1..5, test_batch,
    batches.meta): uint8 images whose mean colour follows the label."""
    import pickle

    import numpy as np
    rng = np.random.default_rng(seed)
    d = folder / "cifar-10-batches-py"
    d.mkdir(parents=True)

    def batch(n):
        labels = rng.integers(0, 10, n)
        base = (labels[:, None] * 25).astype(np.int64)
        data = np.clip(base + rng.integers(-40, 40, (n, 3072)), 0, 255).astype(np.uint8)
        return {"data": data, "labels": labels.tolist()}
    for i in range(1, 6):
        with open(d / f"data_batch_{i}", "wb") as f:
            pickle.dump(batch(n_train // 5), f)
    with open(d / "test_batch", "wb") as f:
        pickle.dump(batch(n_test), f)
    with open(d / "batches.meta", "wb") as f:
        pickle.dump({"label_names": [f"class{i}" for i in range(10)]}, f)


def _resnet_cifar(mode: str, extra: list):
    """trainer.py as is (a CIFAR ResNet in DataParallel, SGD with momentum, MultiStepLR, checkpoints) on synthetic
    CIFAR-10 files (5000 training images: 40 batches of 128; 1000 test images), printing every 10 batches. Its
    prints: the model names, then per epoch `current lr`, 4 training lines, 8 test batches' first line and the
    precision. The window spans prints 2..9: the whole first epoch (training, scheduler step, validation,
    checkpoint). torchvision's md5 check of the synthetic files is skipped. trainer.py calls `.cuda()`: GPU only."""
    def build(dev):
        if dev.type != "cuda":
            raise RuntimeError("pytorch_resnet_cifar10's trainer.py moves its data and model with .cuda(): GPU only")
        root = _need_repo("pytorch_resnet_cifar10")
        cwd = Path(hc._tmp())
        _cifar(cwd / "data")

        def window():
            import torchvision.datasets.cifar as cifar
            orig = cifar.check_integrity
            cifar.check_integrity = lambda *a, **k: True  # the files' and the metadata's md5 checks
            try:
                with hc.window_on(builtins, "print", "resnet_cifar." + mode, mode, dev, 2, 9, stop_script=True):
                    hc.run_script(root / "trainer.py", ["--epochs", "3", "-p", "10", "-j", "2", *extra], str(cwd))
            finally:
                cifar.check_integrity = orig
        return {f"{mode}_window": window}
    return build


MODELS = [
    # name, package, builder
    ("flow_matching.flows", "flow_matching", flow_matching_flows),
    ("torchcfm.flows", "torchcfm", torchcfm_flows),
    ("torchjd.multi", "torchjd", torchjd_multi),
    ("lightly.ssl", "lightly", lightly_ssl),
    ("kmeans.cluster", "fast_pytorch_kmeans", kmeans_cluster),
    ("torchkge.kg", "torchkge", torchkge_kg),
    ("roma.rotations", "roma", roma_rotations),
    ("nnaudio.features", "nnAudio", nnaudio_features),
    ("cooper.constrained", "cooper", cooper_constrained),
    ("gpt_train.124m", "LLMs-from-scratch", llms_gpt_train),
    ("resnet_cifar.resnet20", "pytorch_resnet_cifar10", _resnet_cifar("resnet20", ["-a", "resnet20"])),
    ("resnet_cifar.half", "pytorch_resnet_cifar10", _resnet_cifar("half", ["-a", "resnet32", "--half"])),
]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh6", REPOS, DISTS, budget=300.0, per_model=60.0)


if __name__ == "__main__":
    sys.exit(main())
