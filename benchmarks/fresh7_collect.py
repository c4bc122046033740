"""Record the syncs of an eighth set, `fresh7` (a development set): libraries and training code nobody here read.

`fresh7` is recorded the same way as `fresh6` (benchmarks/fresh6_collect.py: same recorder, same windows inside a
script's own loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set and
the seven earlier sets and in two public training repositories that no set and no hand label uses, to be read as a
development set once recorded. The workloads were written from the libraries' documented public API (README /
docs examples, the names and signatures they export), on synthetic data with random weights, before anyone ran
the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh7; normflows ships only an sdist, so its
  wheel is built here): pykan (`kan`: KANs fitted with its LBFGS / Adam loop, grid refinement,
  symbolic regression), torchensemble (ensembles trained by its own `fit` loops), normflows (normalizing flows:
  forward / reverse KL, Glow, residual flows), k-diffusion (`k_diffusion`: the Karras denoiser's loss, EMA, its
  samplers; + dctorch, torchsde, clean-fid, clip-anytorch, jsonmerge and their small needs, imported by its
  package), lion-pytorch, adan-pytorch and madgrad (optimizers), blitz-bayesian-pytorch (`blitz`: Bayesian
  layers, ELBO sampling), vit-pytorch (ViT variants trained in a loop written here, NaViT, the DINO and
  distillation wrappers) and info-nce-pytorch (`info_nce`). Their other needs (numpy, scipy, scikit-learn,
  sympy, matplotlib, pandas, tqdm, einops, scikit-image, torchvision) are on the GPU machine; a few that may be
  missing or too old there (setuptools' pkg_resources, jsonschema, einops >= 0.8.2) travel in
  .whl/fresh7/if-missing and are installed only where missing.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh7/repos/<name>:
  kuangliu/pytorch-cifar (main.py as is on synthetic CIFAR-10 batch files; its progress bar's `stty size` is
  answered with a fixed terminal size, as there is no terminal) and sthalles/SimCLR (run.py as is on synthetic
  CIFAR-10 files, fp32 and `--fp16-precision`). torchvision's md5 checks of the synthetic files are skipped.

    python benchmarks/fresh7_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh7_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh7 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh7 [--linter REV]`.
"""

from __future__ import annotations

import builtins
import io
import os
import subprocess
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
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh7" / "repos", ac.REPO / ".whl" / "fresh7"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh7/repos/<name>)
REPOS = {
    "pytorch-cifar": ("kuangliu/pytorch-cifar", "49b7aa97b0c12fe0d4054e670403a16b6b834ddd",
                      ["main.py", "utils.py", "models"]),
    "SimCLR": ("sthalles/SimCLR", "1848fc934ad844ae630e6c452300433fe99acfd9",
               ["run.py", "simclr.py", "utils.py", "data_aug", "models", "exceptions"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["pykan==0.2.8", "torchensemble==0.2.0", "k-diffusion==0.1.1.post1", "dctorch==0.1.2", "torchsde==0.2.6",
          "trampoline==0.1.2", "clean-fid==0.1.35", "clip-anytorch==2.6.0", "ftfy==6.3.1", "wcwidth==0.9.4",
          "jsonmerge==1.9.2", "lion-pytorch==0.2.5", "adan-pytorch==0.1.0", "madgrad==1.2",
          "blitz-bayesian-pytorch==0.2.8", "vit-pytorch==1.26.11", "info-nce-pytorch==0.1.4"]
SDISTS = ["normflows==1.7.3"]  # no wheel on the index: built here (`pip wheel`), a pure-Python wheel
# installed on the GPU machine only where its own is missing or too old
IF_MISSING = ["setuptools==80.10.2", "jsonschema==4.25.1", "jsonschema-specifications==2025.9.1",
              "referencing==0.37.0", "rpds-py==0.30.0", "einops==0.8.2"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"pykan": "pykan", "torchensemble": "torchensemble", "normflows": "normflows", "k_diffusion": "k-diffusion",
         "lion_pytorch": "lion-pytorch", "adan_pytorch": "adan-pytorch", "madgrad": "madgrad",
         "blitz_bayesian_pytorch": "blitz-bayesian-pytorch", "vit_pytorch": "vit-pytorch",
         "info_nce_pytorch": "info-nce-pytorch", "torchsde": "torchsde", "dctorch": "dctorch",
         "einops": "einops", "torchvision": "torchvision", "numpy": "numpy", "scipy": "scipy",
         "scikit_learn": "scikit-learn", "sympy": "sympy"}


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def prepare() -> None:
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(WHEELS_DIR), *SDISTS],
                   check=True)
    hc.download_wheels(IF_MISSING, WHEELS_DIR / "if-missing")


def _classes(n: int, dim: int, k: int, dev, seed: int = 0):
    """`n` points in `dim` dimensions around `k` centres, and their labels."""
    g = torch.Generator().manual_seed(seed)
    centres = 2.0 * torch.randn(k, dim, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    return (centres[y] + torch.randn(n, dim, generator=g)).to(dev), y.to(dev)


def _images(n: int, size: int, dev, channels: int = 3, k: int = 10, seed: int = 0):
    """Images whose mean colour follows the label."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, k, (n,), generator=g)
    x = 0.3 * torch.randn(n, channels, size, size, generator=g) + (y.float() / k - 0.5)[:, None, None, None]
    return x.to(dev), y.to(dev)


# ============================================================================================
# Libraries
# ============================================================================================

# -- pykan: KANs fitted with `fit` (its LBFGS and Adam loops, grid updates, regularisation), refined,
#    made symbolic (hellokan and the docs' examples) ------------------------------------------------------

def pykan_fit(dev):
    from kan import KAN, create_dataset

    ckpt = Path(hc._tmp())

    def f(x):
        return torch.exp(torch.sin(torch.pi * x[:, [0]]) + x[:, [1]] ** 2)

    dataset = create_dataset(f, n_var=2, train_num=500, test_num=100, device=dev)

    def regression():  # hellokan: fit with sparsity, refine the grid (grid extension), fit again, attributions
        # (`prune` left out: after so few steps the first GPU recording's pruned every node of a layer, and the
        # pruned model's forward pass failed)
        model = KAN(width=[2, 5, 1], grid=3, k=3, seed=1, device=dev, ckpt_path=str(ckpt / "reg"))
        model(dataset["train_input"])
        model.fit(dataset, opt="LBFGS", steps=5, lamb=0.001)
        model = model.refine(6)
        model.fit(dataset, opt="LBFGS", steps=3)
        model.attribute()
        model.node_attribute()

    def symbolic():  # fix a function, suggest, then auto_symbolic and the formula
        model = KAN(width=[2, 3, 1], grid=5, k=3, seed=1, device=dev, ckpt_path=str(ckpt / "sym"))
        model.fit(dataset, opt="LBFGS", steps=3)
        model.fix_symbolic(0, 0, 0, "sin")
        model.suggest_symbolic(0, 1, 0)
        model.auto_symbolic(lib=["x", "x^2", "exp", "sin", "tanh"])
        model.fit(dataset, opt="LBFGS", steps=2)
        model.symbolic_formula()

    X, y = _classes(600, 2, 3, dev)
    cls = {"train_input": X[:400], "train_label": y[:400], "test_input": X[400:], "test_label": y[400:]}

    def classification():  # the docs' classification example: Adam, mini-batches, accuracy metrics
        model = KAN(width=[2, 4, 3], grid=5, k=3, seed=0, device=dev, ckpt_path=str(ckpt / "cls"))

        def train_acc():
            return torch.mean((torch.argmax(model(cls["train_input"]), dim=1) == cls["train_label"]).float())

        def test_acc():
            return torch.mean((torch.argmax(model(cls["test_input"]), dim=1) == cls["test_label"]).float())
        model.fit(cls, opt="Adam", steps=15, lr=0.01, batch=128, loss_fn=torch.nn.CrossEntropyLoss(),
                  metrics=(train_acc, test_acc))
        model.speed()
        model(cls["test_input"])
    return {"regression": regression, "symbolic": symbolic, "classification": classification}


# -- torchensemble: ensembles trained and evaluated by their own loops (its docs' quick start and API) -------

def torchensemble_fit(dev):
    import torchensemble as te
    from torch.utils.data import DataLoader, TensorDataset

    X, y = _classes(1536, 20, 4, "cpu")
    train = DataLoader(TensorDataset(X[:1024], y[:1024]), batch_size=128, shuffle=True)
    test = DataLoader(TensorDataset(X[1024:], y[1024:]), batch_size=256)
    X01 = torch.sigmoid(X)  # adversarial training asks for inputs in [0, 1]
    train01 = DataLoader(TensorDataset(X01[:1024], y[:1024]), batch_size=128, shuffle=True)
    test01 = DataLoader(TensorDataset(X01[1024:], y[1024:]), batch_size=256)
    yr = X[:, :3].sum(1, keepdim=True) + 0.1 * torch.randn(1536, 1)
    rtrain = DataLoader(TensorDataset(X[:1024], yr[:1024]), batch_size=128, shuffle=True)
    rtest = DataLoader(TensorDataset(X[1024:], yr[1024:]), batch_size=256)
    cuda = dev.type == "cuda"
    save = hc._tmp()

    class MLP(nn.Module):
        def __init__(self, out=4):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, out))

        def forward(self, x):
            return self.net(x)

    def setup(model, criterion=None, scheduler=True):
        model.set_criterion(criterion or nn.CrossEntropyLoss())
        model.set_optimizer("Adam", lr=1e-3, weight_decay=5e-4)
        if scheduler:
            model.set_scheduler("CosineAnnealingLR", T_max=2)
        return model

    def parallel():  # voting, bagging, fusion and adversarial training; evaluate and predict
        for cls in (te.VotingClassifier, te.BaggingClassifier, te.FusionClassifier):
            model = setup(cls(estimator=MLP, n_estimators=3, cuda=cuda))
            model.fit(train, epochs=2, log_interval=4, test_loader=test, save_model=True, save_dir=save)
            model.evaluate(test)
            model.predict(X[1024:1100])
        model = setup(te.AdversarialTrainingClassifier(estimator=MLP, n_estimators=2, cuda=cuda))
        model.fit(train01, epochs=1, epsilon=0.05, log_interval=4, test_loader=test01, save_model=False)
        model.evaluate(test01)

    def sequential():  # gradient boosting, soft gradient boosting, snapshot ensembles, fast geometric
        for cls in (te.GradientBoostingClassifier, te.SoftGradientBoostingClassifier):
            model = setup(cls(estimator=MLP, n_estimators=2, shrinkage_rate=0.5, cuda=cuda))
            model.fit(train, epochs=2, log_interval=4, test_loader=test, save_model=False)
            model.evaluate(test)
        model = setup(te.SnapshotEnsembleClassifier(estimator=MLP, n_estimators=2, cuda=cuda), scheduler=False)
        model.fit(train, epochs=2, log_interval=4, test_loader=test, save_model=False)
        model.evaluate(test)
        model = setup(te.FastGeometricClassifier(estimator=MLP, n_estimators=2, cuda=cuda), scheduler=False)
        model.fit(train, cycle=2, epochs=2, log_interval=4, test_loader=test, save_model=False)
        model.evaluate(test)

    def regressors():  # regressors: voting, gradient boosting, bagging with MSE
        for cls in (te.VotingRegressor, te.GradientBoostingRegressor, te.BaggingRegressor):
            model = setup(cls(estimator=MLP, n_estimators=2, estimator_args={"out": 1}, cuda=cuda), nn.MSELoss())
            model.fit(rtrain, epochs=2, log_interval=4, test_loader=rtest, save_model=False)
            model.evaluate(rtest)
            model.predict(X[1024:1100])
    return {"parallel": parallel, "sequential": sequential, "regressors": regressors}


# -- normflows: 2D flows trained by forward and reverse KL, a class-conditional Glow, residual flows
#    (its README and examples) -------------------------------------------------------------------------

def normflows_flows(dev):
    import normflows as nf

    def realnvp():  # the README's Real NVP on two moons: forward KL, then samples and log-densities on a grid
        base = nf.distributions.base.DiagGaussian(2)
        flows = []
        for _ in range(8):
            flows += [nf.flows.AffineCouplingBlock(nf.nets.MLP([1, 64, 64, 2], init_zeros=True)),
                      nf.flows.Permute(2, mode="swap")]
        model = nf.NormalizingFlow(base, flows).to(dev)
        target = nf.distributions.TwoMoons()
        opt = torch.optim.Adam(model.parameters(), lr=5e-4, weight_decay=1e-5)
        for _ in range(6):
            opt.zero_grad()
            x = target.sample(256).to(dev)
            loss = model.forward_kld(x)
            if ~(torch.isnan(loss) | torch.isinf(loss)):
                loss.backward()
                opt.step()
        with torch.no_grad():
            grid = torch.stack(torch.meshgrid(torch.linspace(-3, 3, 50), torch.linspace(-3, 3, 50),
                                              indexing="ij"), -1).reshape(-1, 2).to(dev)
            model.log_prob(grid)
            model.sample(256)

    def splines():  # neural spline flows (autoregressive and coupled), a masked affine autoregressive flow
        for make in (lambda: nf.flows.AutoregressiveRationalQuadraticSpline(2, 1, 32),
                     lambda: nf.flows.CoupledRationalQuadraticSpline(2, 1, 32),
                     lambda: nf.flows.MaskedAffineAutoregressive(2, 32, num_blocks=1)):
            flows = []
            for _ in range(3):
                flows += [make(), nf.flows.LULinearPermute(2)]
            model = nf.NormalizingFlow(nf.distributions.DiagGaussian(2, trainable=False), flows).to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            target = nf.distributions.TwoMoons()
            for _ in range(4):
                opt.zero_grad()
                loss = model.forward_kld(target.sample(256).to(dev))
                loss.backward()
                opt.step()
            model.eval()
            with torch.no_grad():
                model.sample(128)
            model.train()

    def reverse():  # planar and radial flows fitted to an unnormalised target by reverse KL and alpha divergence
        for make in (lambda: nf.flows.Planar((2,), act="leaky_relu"), lambda: nf.flows.Radial((2,))):
            target = nf.distributions.TwoModes(2, 0.1)
            model = nf.NormalizingFlow(nf.distributions.DiagGaussian(2), [make() for _ in range(8)], p=target)
            model = model.to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            for i in range(6):
                opt.zero_grad()
                loss = model.reverse_kld(128, beta=min(1.0, 0.01 + i / 5)) if i % 2 else model.reverse_alpha_div(128)
                if ~(torch.isnan(loss) | torch.isinf(loss)):
                    loss.backward()
                    opt.step()

    def glow():  # the README's class-conditional multiscale Glow on small images; bits per dimension
        L, K, channels, hidden = 2, 2, 3, 32
        input_shape = (3, 16, 16)
        n_classes = 4
        q0, merges, flows = [], [], []
        for i in range(L):
            flows_ = [nf.flows.GlowBlock(channels * 2 ** (L + 1 - i), hidden, split_mode="channel", scale=True)
                      for _ in range(K)]
            flows_ += [nf.flows.Squeeze()]
            flows += [flows_]
            if i > 0:
                merges += [nf.flows.Merge()]
                latent_shape = (input_shape[0] * 2 ** (L - i), input_shape[1] // 2 ** (L - i),
                                input_shape[2] // 2 ** (L - i))
            else:
                latent_shape = (input_shape[0] * 2 ** (L + 1), input_shape[1] // 2 ** L, input_shape[2] // 2 ** L)
            q0 += [nf.distributions.ClassCondDiagGaussian(latent_shape, n_classes)]
        model = nf.MultiscaleFlow(q0, flows, merges).to(dev)
        opt = torch.optim.Adamax(model.parameters(), lr=1e-3, weight_decay=1e-5)
        x, y = _images(64, 16, dev, k=n_classes)
        x = (x.clamp(-1, 1) + 1) * 127.5
        x = (x + torch.rand_like(x)) / 256.0
        for i in range(3):
            opt.zero_grad()
            loss = model.forward_kld(x[i * 16:(i + 1) * 16], y[i * 16:(i + 1) * 16])
            if ~(torch.isnan(loss) | torch.isinf(loss)):
                loss.backward()
                opt.step()
        with torch.no_grad():
            model.sample(8, y=torch.arange(n_classes, device=dev).repeat(2))
            nf.utils.bitsPerDim(model, x[48:], y[48:])

    def residual():  # residual flows with Lipschitz MLPs, the Lipschitz constraint enforced after each step
        flows = []
        for _ in range(4):
            flows += [nf.flows.Residual(nf.nets.LipschitzMLP([2, 32, 32, 2], init_zeros=True),
                                        reduce_memory=True), nf.flows.ActNorm(2)]
        model = nf.NormalizingFlow(nf.distributions.DiagGaussian(2), flows).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        target = nf.distributions.TwoMoons()
        for _ in range(4):
            opt.zero_grad()
            loss = model.forward_kld(target.sample(256).to(dev))
            if ~(torch.isnan(loss) | torch.isinf(loss)):
                loss.backward()
                opt.step()
            nf.utils.update_lipschitz(model, 5)
        with torch.no_grad():
            model.sample(64)
    return {"realnvp": realnvp, "splines": splines, "reverse": reverse, "glow": glow, "residual": residual}


# -- k-diffusion: the Karras denoiser trained on its loss with EMA warm-up, and its samplers (README, train.py) -

def kdiffusion_denoise(dev):
    import k_diffusion as K

    inner = K.models.ImageDenoiserModelV1(c_in=3, feats_in=32, depths=[1, 1], channels=[32, 64],
                                          self_attn_depths=[False, True]).to(dev)
    model = K.Denoiser(inner, sigma_data=0.5)
    model_ema = K.Denoiser(K.models.ImageDenoiserModelV1(c_in=3, feats_in=32, depths=[1, 1], channels=[32, 64],
                                                         self_attn_depths=[False, True]), sigma_data=0.5).to(dev)
    model_ema.load_state_dict(model.state_dict())
    opt = torch.optim.AdamW(inner.parameters(), lr=2e-4, betas=(0.95, 0.999), eps=1e-6, weight_decay=1e-3)
    ema_sched = K.utils.EMAWarmup(power=0.6667, max_value=0.9999)
    x, _ = _images(64, 16, dev)

    def train():  # train.py's step: sample sigmas, the denoiser's loss, EMA with warm-up
        for i, density in enumerate((lambda s: K.utils.rand_log_normal(s, loc=-1.2, scale=1.2, device=dev),
                                     lambda s: K.utils.rand_log_logistic(s, loc=-1.2, scale=1.2, min_value=1e-2,
                                                                         max_value=80.0, device=dev),
                                     lambda s: K.utils.rand_v_diffusion(s, sigma_data=0.5, min_value=1e-2,
                                                                        max_value=80.0, device=dev))):
            batch = x[i * 16:(i + 1) * 16]
            noise = torch.randn_like(batch)
            sigma = density([batch.shape[0]])
            losses = model.loss(batch, noise, sigma)
            loss = losses.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            K.utils.ema_update(model, model_ema, ema_sched.get_value())
            ema_sched.step()

    sigma_min, sigma_max = 0.01, 80.0

    def samplers():  # each sampler of the README on the EMA model, Karras and other noise schedules
        with torch.no_grad():
            sigmas = K.sampling.get_sigmas_karras(8, sigma_min, sigma_max, rho=7.0, device=dev)
            x_T = torch.randn(4, 3, 16, 16, device=dev) * sigma_max
            for sampler in (K.sampling.sample_euler, K.sampling.sample_euler_ancestral, K.sampling.sample_heun,
                            K.sampling.sample_dpm_2, K.sampling.sample_dpm_2_ancestral, K.sampling.sample_lms,
                            K.sampling.sample_dpmpp_2s_ancestral, K.sampling.sample_dpmpp_sde,
                            K.sampling.sample_dpmpp_2m, K.sampling.sample_dpmpp_2m_sde,
                            K.sampling.sample_dpmpp_3m_sde):
                sampler(model_ema, x_T, sigmas, disable=True)
            K.sampling.sample_euler(model_ema, x_T, sigmas, s_churn=1.0, disable=True)
            for sigmas in (K.sampling.get_sigmas_exponential(8, sigma_min, sigma_max, device=dev),
                           K.sampling.get_sigmas_polyexponential(8, sigma_min, sigma_max, rho=1.0, device=dev),
                           K.sampling.get_sigmas_vp(8, device=dev)):
                K.sampling.sample_dpmpp_2m(model_ema, torch.randn_like(x_T) * sigmas[0], sigmas, disable=True)
            K.sampling.sample_dpm_fast(model_ema, x_T, sigma_min, sigma_max, 8, disable=True)
            K.sampling.sample_dpm_adaptive(model_ema, x_T, sigma_min, sigma_max, rtol=0.1, atol=0.05, disable=True)

    def likelihood():  # the model's log-likelihood of a batch (an ODE solve)
        with torch.no_grad():
            K.sampling.log_likelihood(model_ema, x[:4], sigma_min, sigma_max, atol=1e-2, rtol=1e-2)
    return {"train": train, "samplers": samplers, "likelihood": likelihood}


# -- lion-pytorch, adan-pytorch, madgrad: their optimizers training a small classifier (READMEs) ------------

def optimizers_train(dev):
    from adan_pytorch import Adan
    from lion_pytorch import Lion
    from madgrad import MADGRAD, MirrorMADGRAD

    X, y = _images(256, 16, dev)

    def net():
        return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(),
                             nn.Linear(256, 10)).to(dev)

    makers = {"lion": lambda p: Lion(p, lr=1e-4, weight_decay=1e-2),
              "lion_decoupled": lambda p: Lion(p, lr=1e-4, weight_decay=1e-2, decoupled_weight_decay=True),
              "adan": lambda p: Adan(p, lr=1e-3, betas=(0.02, 0.08, 0.01), weight_decay=0.02),
              "madgrad": lambda p: MADGRAD(p, lr=1e-3, momentum=0.9),
              "madgrad_decay": lambda p: MADGRAD(p, lr=1e-3, weight_decay=1e-4, decouple_decay=True),
              "mirror_madgrad": lambda p: MirrorMADGRAD(p, lr=1e-3, weight_decay=1e-4)}
    if dev.type == "cuda":
        makers["lion_triton"] = lambda p: Lion(p, lr=1e-4, weight_decay=1e-2, use_triton=True)

    def train():
        for make in makers.values():
            model = net()
            opt = make(model.parameters())
            for i in range(4):
                loss = F.cross_entropy(model(X[i * 64:(i + 1) * 64]), y[i * 64:(i + 1) * 64])
                loss.backward()
                opt.step()
                opt.zero_grad()
    return {"train": train}


# -- blitz-bayesian-pytorch: Bayesian layers trained on the ELBO (its README's regression and docs) ----------

def blitz_bayesian(dev):
    from blitz.losses import kl_divergence_from_nn
    from blitz.modules import BayesianConv2d, BayesianEmbedding, BayesianGRU, BayesianLinear, BayesianLSTM
    from blitz.utils import variational_estimator

    @variational_estimator
    class BayesianRegressor(nn.Module):
        def __init__(self, input_dim, output_dim):
            super().__init__()
            self.blinear1 = BayesianLinear(input_dim, 128)
            self.blinear2 = BayesianLinear(128, output_dim)

        def forward(self, x):
            return self.blinear2(F.relu(self.blinear1(x)))

    X = torch.randn(512, 13, device=dev)
    yr = X[:, :4].sum(1, keepdim=True) + 0.1 * torch.randn(512, 1, device=dev)

    def regression():  # the README's loop (sample_elbo) and its confidence-interval evaluation
        reg = BayesianRegressor(13, 1).to(dev)
        opt = torch.optim.Adam(reg.parameters(), lr=0.01)
        criterion = nn.MSELoss()
        for i in range(4):
            opt.zero_grad()
            loss = reg.sample_elbo(inputs=X[i * 128:(i + 1) * 128], labels=yr[i * 128:(i + 1) * 128],
                                   criterion=criterion, sample_nbr=3, complexity_cost_weight=1 / 512)
            loss.backward()
            opt.step()
        preds = torch.stack([reg(X[:128]) for _ in range(20)])
        means, stds = preds.mean(axis=0), preds.std(axis=0)
        ci_upper, ci_lower = means + 2 * stds, means - 2 * stds
        ((ci_lower <= yr[:128]) * (ci_upper >= yr[:128])).float().mean()
        reg.nn_kl_divergence()
        kl_divergence_from_nn(reg)

    @variational_estimator
    class BayesianCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = BayesianConv2d(3, 6, (5, 5))
            self.conv2 = BayesianConv2d(6, 16, (5, 5))
            self.fc1 = BayesianLinear(16 * 8 * 8, 64)
            self.fc2 = BayesianLinear(64, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            return self.fc2(F.relu(self.fc1(x.flatten(1))))

    images, labels = _images(256, 16, dev)

    def classifier():  # the docs' Bayesian CNN: ELBO with cross-entropy, frozen (deterministic) prediction, MFVI
        cnn = BayesianCNN().to(dev)
        opt = torch.optim.Adam(cnn.parameters(), lr=1e-3)
        for i in range(4):
            opt.zero_grad()
            loss = cnn.sample_elbo(inputs=images[i * 64:(i + 1) * 64], labels=labels[i * 64:(i + 1) * 64],
                                   criterion=nn.CrossEntropyLoss(), sample_nbr=2, complexity_cost_weight=1 / 256)
            loss.backward()
            opt.step()
        with torch.no_grad():
            cnn.freeze_()
            cnn(images[:64]).argmax(1)
            cnn.unfreeze_()
            cnn.mfvi_forward(images[:64], sample_nbr=4)

    @variational_estimator
    class BayesianSeq(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = BayesianEmbedding(50, 16)
            self.lstm = BayesianLSTM(16, 32)
            self.gru = BayesianGRU(32, 32)
            self.out = nn.Linear(32, 1)

        def forward(self, tokens):
            h, _ = self.lstm(self.emb(tokens))
            h, _ = self.gru(h)
            return self.out(h[:, -1, :])

    tokens = torch.randint(0, 50, (128, 12), device=dev)
    yt = (tokens[:, :3].float().mean(1, keepdim=True) / 50.0)

    def recurrent():  # Bayesian embedding, LSTM and GRU (the docs' layers) trained on the ELBO
        seq = BayesianSeq().to(dev)
        opt = torch.optim.Adam(seq.parameters(), lr=1e-3)
        for i in range(3):
            opt.zero_grad()
            loss = seq.sample_elbo(inputs=tokens[i * 32:(i + 1) * 32], labels=yt[i * 32:(i + 1) * 32],
                                   criterion=nn.MSELoss(), sample_nbr=2, complexity_cost_weight=1 / 128)
            loss.backward()
            opt.step()
    return {"regression": regression, "classifier": classifier, "recurrent": recurrent}


# -- vit-pytorch (+ info-nce-pytorch): ViT variants trained in a loop written here, its DINO and distillation
#    wrappers (README), a contrastive objective with InfoNCE (its README) -----------------------------------------

def vit_train(dev):
    from info_nce import InfoNCE
    from vit_pytorch import SimpleViT, ViT
    from vit_pytorch.ats_vit import ViT as ATSViT
    from vit_pytorch.cait import CaiT
    from vit_pytorch.cct import CCT
    from vit_pytorch.cross_vit import CrossViT
    from vit_pytorch.cvt import CvT
    from vit_pytorch.deepvit import DeepViT
    from vit_pytorch.distill import DistillableViT, DistillWrapper
    from vit_pytorch.levit import LeViT
    from vit_pytorch.na_vit import NaViT
    from vit_pytorch.pit import PiT
    from vit_pytorch.t2t import T2TViT
    from vit_pytorch.vit_for_small_dataset import ViT as SmallViT

    x, y = _images(64, 32, dev)
    kw = {"image_size": 32, "patch_size": 8, "num_classes": 10, "dim": 64, "depth": 2, "heads": 4, "mlp_dim": 128}
    models = {
        "vit": ViT(**kw, dropout=0.1, emb_dropout=0.1),
        "simple_vit": SimpleViT(**kw),
        "ats_vit": ATSViT(**{**kw, "depth": 3}, max_tokens_per_depth=(12, 8, 4)),
        "cait": CaiT(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, cls_depth=1, heads=4,
                     mlp_dim=128, dropout=0.1, emb_dropout=0.1, layer_dropout=0.05),
        "cct": CCT(img_size=(32, 32), embedding_dim=64, n_conv_layers=1, kernel_size=3, stride=1, padding=1,
                   pooling_kernel_size=3, pooling_stride=2, pooling_padding=1, num_layers=2, num_heads=4,
                   mlp_ratio=2.0, num_classes=10, positional_embedding="learnable"),
        "cross_vit": CrossViT(image_size=32, num_classes=10, depth=1, sm_dim=32, sm_patch_size=8, sm_enc_depth=1,
                              sm_enc_heads=2, sm_enc_mlp_dim=64, lg_dim=64, lg_patch_size=16, lg_enc_depth=1,
                              lg_enc_heads=2, lg_enc_mlp_dim=128, cross_attn_depth=1, cross_attn_heads=2),
        "cvt": CvT(num_classes=10),
        "deepvit": DeepViT(**kw),
        "levit": LeViT(image_size=32, num_classes=10, stages=2, dim=(32, 64), depth=1, heads=(2, 4),
                       mlp_mult=2),
        "pit": PiT(image_size=32, patch_size=4, dim=64, num_classes=10, depth=(1, 1), heads=4, mlp_dim=128),
        "t2t": T2TViT(dim=64, image_size=32, depth=2, heads=4, mlp_dim=128, num_classes=10,
                      t2t_layers=((3, 2), (3, 2))),
        "small_dataset": SmallViT(**kw),
    }
    models = {k: m.to(dev) for k, m in models.items()}
    opts = {k: torch.optim.AdamW(m.parameters(), lr=3e-4) for k, m in models.items()}

    def classifiers():  # a step of each variant
        for k, m in models.items():
            for i in range(2):
                loss = F.cross_entropy(m(x[i * 32:(i + 1) * 32]), y[i * 32:(i + 1) * 32])
                opts[k].zero_grad()
                loss.backward()
                opts[k].step()
        models["ats_vit"].eval()
        with torch.no_grad():
            models["ats_vit"](x[:8])
        models["ats_vit"].train()

    navit = NaViT(image_size=32, patch_size=8, num_classes=10, dim=64, depth=2, heads=4, mlp_dim=128,
                  token_dropout_prob=0.1).to(dev)
    nopt = torch.optim.AdamW(navit.parameters(), lr=3e-4)

    def native_resolution():  # NaViT on lists of images of several sizes, packed into sequences
        for _ in range(2):
            batch = [[torch.randn(3, 32, 32, device=dev), torch.randn(3, 16, 24, device=dev)],
                     [torch.randn(3, 24, 16, device=dev)], [torch.randn(3, 32, 16, device=dev)]]
            loss = F.cross_entropy(navit(batch), torch.randint(0, 10, (4,), device=dev))
            nopt.zero_grad()
            loss.backward()
            nopt.step()
        with torch.no_grad():
            navit([torch.randn(3, 32, 32, device=dev), torch.randn(3, 16, 16, device=dev)], group_images=True,
                  group_max_seq_len=16)

    teacher = SimpleViT(**kw).to(dev).eval()
    student = DistillableViT(**kw).to(dev)
    distiller = DistillWrapper(student=student, teacher=teacher, temperature=3, alpha=0.5, hard=False).to(dev)
    ssl = {"distill": distiller}  # MAE, SimMIM and MPP of this version fail on its ViT (2-D position
    # embeddings): left out
    sopts = {k: torch.optim.AdamW(m.parameters(), lr=3e-4) for k, m in ssl.items()}

    def distillation():  # the distillation wrapper's loss (a student ViT with a distillation token)
        for k, m in ssl.items():
            for i in range(2):
                batch = x[i * 32:(i + 1) * 32]
                loss = m(batch, y[i * 32:(i + 1) * 32])
                sopts[k].zero_grad()
                loss.backward()
                sopts[k].step()

    from vit_pytorch import Dino
    dino_vit = ViT(**kw).to(dev)
    learner = Dino(dino_vit, image_size=32, hidden_layer="to_latent", projection_hidden_size=64,
                   projection_layers=2, num_classes_K=256, student_temp=0.9, teacher_temp=0.04,
                   local_upper_crop_scale=0.4, global_lower_crop_scale=0.5, moving_average_decay=0.9,
                   center_moving_average_decay=0.9).to(dev)
    dopt = torch.optim.Adam(learner.parameters(), lr=3e-4)
    info_unpaired, info_paired = InfoNCE(), InfoNCE(negative_mode="paired")
    cvit = SimpleViT(**{**kw, "num_classes": 32}).to(dev)
    copt = torch.optim.Adam(cvit.parameters(), lr=3e-4)

    def contrastive():  # DINO (teacher update each step), then InfoNCE on two noisy views, unpaired and paired
        for _ in range(2):
            loss = learner(x[:16])
            dopt.zero_grad()
            loss.backward()
            dopt.step()
            learner.update_moving_average()
        for i in range(2):
            batch = x[i * 16:(i + 1) * 16]
            q, p = cvit(batch + 0.1 * torch.randn_like(batch)), cvit(batch + 0.1 * torch.randn_like(batch))
            negatives = cvit(x[32:48])
            loss = info_unpaired(q, p) + info_unpaired(q, p, negatives) + \
                info_paired(q, p, negatives[None].expand(16, 16, 32))
            copt.zero_grad()
            loss.backward()
            copt.step()
    return {"classifiers": classifiers, "native_resolution": native_resolution, "distillation": distillation,
            "contrastive": contrastive}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

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


class _no_md5:
    """torchvision's md5 checks of the synthetic CIFAR files, skipped."""

    def __enter__(self):
        import torchvision.datasets.cifar as cifar
        self.cifar, self.orig = cifar, cifar.check_integrity
        cifar.check_integrity = lambda *a, **k: True

    def __exit__(self, *exc):
        self.cifar.check_integrity = self.orig


def pytorch_cifar_main(dev):
    """main.py as is (SimpleDLA in DataParallel, SGD with momentum, cosine annealing, a checkpoint when the
    test accuracy improves) on synthetic CIFAR-10 files (5000 training images: 40 batches of 128; 1000 test
    images: 10 of 100). Its prints: the two setup lines, then per epoch `Epoch: N` and `Saving..` when the
    accuracy improves (its progress bar writes to stdout itself). The window spans prints 3..5: the whole first
    epoch (training, test, checkpoint). utils.py asks `stty size` at import: answered 24 rows, 80 columns."""
    root = _need_repo("pytorch-cifar")
    cwd = Path(hc._tmp())
    _cifar(cwd / "data")

    def window():
        orig = os.popen

        def popen(cmd, *a, **k):
            return io.StringIO("24 80\n") if cmd == "stty size" else orig(cmd, *a, **k)
        os.popen = popen
        try:
            with _no_md5(), hc.window_on(builtins, "print", "pytorch_cifar.dla", "train", dev, 3, 5,
                                         stop_script=True):
                hc.run_script(root / "main.py", ["--lr", "0.05"], str(cwd))
        finally:
            os.popen = orig
    return {"train_window": window}


def _simclr(mode: str, extra: list):
    """run.py as is (a torchvision ResNet-18 with SimCLR's projection head, its InfoNCE loss, Adam, cosine
    annealing, TensorBoard logging every 5 steps here) on synthetic CIFAR-10 files (5000 images, batches of 128:
    39 steps an epoch). It prints nothing per step, so the window counts optimizer.zero_grad calls: calls 3..13,
    steps 2 to 11 (the logging steps 5 and 10 among them)."""
    def build(dev):
        root = _need_repo("SimCLR")
        cwd = Path(hc._tmp())
        _cifar(cwd / "datasets")
        args = ["-data", str(cwd / "datasets"), "-dataset-name", "cifar10", "--epochs", "1", "-b", "128",
                "-j", "2", "--log-every-n-steps", "5", *extra]
        if dev.type != "cuda":
            args.append("--disable-cuda")

        def window():
            with _no_md5(), hc.window_on(torch.optim.Optimizer, "zero_grad", "simclr." + mode, mode, dev, 3, 13,
                                         stop_script=True):
                hc.run_script(root / "run.py", args, str(cwd))
        return {f"{mode}_window": window}
    return build


MODELS = [
    # name, package, builder
    ("kan.fit", "kan", pykan_fit),
    ("torchensemble.fit", "torchensemble", torchensemble_fit),
    ("normflows.flows", "normflows", normflows_flows),
    ("k_diffusion.denoise", "k_diffusion", kdiffusion_denoise),
    ("optimizers.train", "lion_pytorch", optimizers_train),
    ("blitz.bayesian", "blitz", blitz_bayesian),
    ("vit_pytorch.train", "vit_pytorch", vit_train),
    ("pytorch_cifar.dla", "pytorch-cifar", pytorch_cifar_main),
    ("simclr.fp32", "SimCLR", _simclr("fp32", [])),
    ("simclr.fp16", "SimCLR", _simclr("fp16", ["--fp16-precision"])),
]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        prepare()
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh7", REPOS, DISTS, budget=400.0, per_model=150.0)


if __name__ == "__main__":
    sys.exit(main())
