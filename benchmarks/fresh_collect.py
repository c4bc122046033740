"""Record the syncs of a second held-out set: libraries and training code nobody here has looked at.

The `heldout` set (benchmarks/heldout_collect.py) has been read while the linter was improved, so it
is no longer out of sample. This `fresh` set is recorded the same way (same recorder, same windows
inside a script's own loop; this file only adds workloads and imports the machinery) in libraries
outside both the tuning set and the `heldout` set, and in two public training repositories. The
workloads were written from the libraries' documented public API (README / tutorial examples), on
synthetic data with random weights, before anyone ran the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh): pyro-ppl (+ pyro-api,
  opt_einsum), torchsde (+ trampoline), torchcde, pytorch-metric-learning, pytorch-ignite,
  pytorch-crf, geomloss, torch-ema; scikit-learn (+ joblib, threadpoolctl) for pytorch-metric-learning's
  imports. torchdiffeq (under torchcde) is on the GPU machine already.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh/repos/<name>:
  karpathy/minGPT (projects/adder/adder.py, as is: it makes its own data), tkipf/pygcn
  (pygcn/train.py, as is, on a synthetic citation graph in cora's file format).

    python benchmarks/fresh_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh [--linter REV]`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import heldout_collect as hc
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
REPO = ac.REPO
BENCH = REPO / ".bench" / "fresh"
REPOS_DIR = BENCH / "repos"
WHEELS_DIR = REPO / ".whl" / "fresh"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh/repos/<name>)
REPOS = {
    "minGPT": ("karpathy/minGPT", "37baab71b9abea1b76ab957409a1cc2fbfba8a26", ["mingpt", "projects/adder"]),
    "pygcn": ("tkipf/pygcn", "1600b5b748b3976413d1e307540ccc62605b4d6d", ["pygcn"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["pyro-ppl==1.9.2", "pyro-api==0.1.2", "opt_einsum==3.4.0", "torchsde==0.2.6", "trampoline==0.1.2",
          "torchcde==0.2.5", "pytorch-metric-learning==2.9.0", "pytorch-ignite==0.5.5", "pytorch-crf==0.7.2",
          "geomloss==0.3.1", "torch-ema==0.3",
          # pytorch-metric-learning's samplers import scikit-learn (a binary wheel, built for numpy 2)
          "scikit-learn==1.9.1", "joblib==1.6.0", "threadpoolctl==3.8.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"pyro_ppl": "pyro-ppl", "torchsde": "torchsde", "torchcde": "torchcde",
         "pytorch_metric_learning": "pytorch-metric-learning", "pytorch_ignite": "pytorch-ignite",
         "pytorch_crf": "pytorch-crf", "geomloss": "geomloss", "torch_ema": "torch-ema",
         "torchdiffeq": "torchdiffeq", "scipy": "scipy", "numpy": "numpy"}

train_loop, infer_loop, _opt = ac.train_loop, ac.infer_loop, ac._opt


def _need_repo(name: str, repos_dir: Path = REPOS_DIR) -> Path:
    """A training repository's copy (under .bench/<set>/repos/), or one line saying how to make it."""
    root = repos_dir / name
    if not root.is_dir():
        bench = repos_dir.parent
        raise RuntimeError(f"{root} is missing: run `python benchmarks/{bench.name}_collect.py prepare` and carry "
                           f".bench/{bench.name}")
    return root


# ============================================================================================
# Libraries
# ============================================================================================

# -- pyro: SVI with an autoguide and a subsampled plate, an enumerated mixture, Predictive, NUTS ---

def pyro_svi(dev):
    import pyro
    import pyro.distributions as dist
    from pyro import poutine
    from pyro.infer import MCMC, NUTS, SVI, Predictive, Trace_ELBO, TraceEnum_ELBO, config_enumerate
    from pyro.infer.autoguide import AutoDelta, AutoNormal
    from pyro.optim import Adam

    pyro.enable_validation(True)
    pyro.clear_param_store()
    n = 200
    x = torch.randn(n, 3, device=dev)
    y = x @ torch.tensor([1.0, -2.0, 0.5], device=dev) + 0.1 * torch.randn(n, device=dev)
    zero, one = torch.tensor(0.0, device=dev), torch.tensor(1.0, device=dev)

    def regression(x, y=None, subsample=None):
        w = pyro.sample("w", dist.Normal(zero.expand(3), one.expand(3)).to_event(1))
        b = pyro.sample("b", dist.Normal(zero, one))
        sigma = pyro.sample("sigma", dist.HalfNormal(one))
        with pyro.plate("data", x.shape[0], subsample_size=subsample, device=dev) as idx:
            pyro.sample("obs", dist.Normal(x[idx] @ w + b, sigma), obs=None if y is None else y[idx])

    guide = AutoNormal(regression)
    svi = SVI(regression, guide, Adam({"lr": 0.02}), Trace_ELBO())

    K = 3
    data = torch.cat([torch.randn(40, device=dev) - 3, torch.randn(40, device=dev) + 3, torch.randn(40, device=dev)])

    @config_enumerate
    def gmm(data):
        weights = pyro.sample("weights", dist.Dirichlet(0.5 * torch.ones(K, device=dev)))
        scale = pyro.sample("scale", dist.LogNormal(zero, 2 * one))
        with pyro.plate("components", K):
            locs = pyro.sample("locs", dist.Normal(zero, 10 * one))
        with pyro.plate("data", len(data)):
            assignment = pyro.sample("assignment", dist.Categorical(weights))
            pyro.sample("obs", dist.Normal(locs[assignment], scale), obs=data)

    gmm_guide = AutoDelta(poutine.block(gmm, expose=["weights", "locs", "scale"]))
    gmm_svi = SVI(gmm, gmm_guide, Adam({"lr": 0.1}), TraceEnum_ELBO(max_plate_nesting=1))

    def svi_step():
        svi.step(x, y, subsample=64)

    def enum_step():
        gmm_svi.step(data)

    def predict():
        Predictive(regression, guide=guide, num_samples=20)(x)

    def nuts():
        mcmc = MCMC(NUTS(regression, max_tree_depth=4), num_samples=3, warmup_steps=3, disable_progbar=True)
        mcmc.run(x[:50], y[:50])
    return {"svi": svi_step, "enum": enum_step, "predict": predict, "nuts": nuts}


# -- torchsde: SDE solvers (README's general-noise SDE), adjoint training, adaptive stepping ------

def torchsde_sde(dev):
    import torchsde
    batch, state, bm = 16, 3, 2

    class General(nn.Module):
        noise_type, sde_type = "general", "ito"

        def __init__(self):
            super().__init__()
            self.mu, self.sigma = nn.Linear(state, state), nn.Linear(state, state * bm)

        def f(self, t, y):
            return self.mu(y)

        def g(self, t, y):
            return self.sigma(y).view(batch, state, bm)

    class Diagonal(nn.Module):
        noise_type = "diagonal"

        def __init__(self, sde_type):
            super().__init__()
            self.sde_type = sde_type
            self.mu = nn.Sequential(nn.Linear(state, 32), nn.Tanh(), nn.Linear(32, state))
            self.sigma = nn.Linear(state, state)

        def f(self, t, y):
            return self.mu(y)

        def g(self, t, y):
            return torch.sigmoid(self.sigma(y))

    general, ito, strat = General().to(dev), Diagonal("ito").to(dev), Diagonal("stratonovich").to(dev)
    y0 = torch.full((batch, state), 0.1, device=dev)
    ts = torch.linspace(0, 1, 11, device=dev)  # a multiple of dt, as the adjoint's reversible Heun wants
    target = torch.randn(11, batch, state, device=dev)

    def trainer(module, solve, **kw):
        opt = _opt(module)

        def step():
            ys = solve(module, y0, ts, **kw)
            loss = (ys - target).pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return step

    def infer():
        with torch.no_grad():
            torchsde.sdeint(ito, y0, ts, method="milstein", dt=0.05)
            torchsde.sdeint(ito, y0, ts, method="srk", dt=0.05)
            torchsde.sdeint(strat, y0, ts, method="midpoint", dt=0.05)
            torchsde.sdeint(ito, y0, ts, method="euler", dt=0.05, adaptive=True, rtol=1e-3, atol=1e-3)
            bm_ = torchsde.BrownianInterval(t0=0.0, t1=1.0, size=(batch, state), device=dev)
            torchsde.sdeint(ito, y0, ts, bm=bm_, method="euler", dt=0.05)
    return {"train_general": trainer(general, torchsde.sdeint, method="euler", dt=0.05),
            "train_adjoint": trainer(strat, torchsde.sdeint_adjoint, method="reversible_heun",
                                     adjoint_method="adjoint_reversible_heun", dt=0.05),
            "infer": infer}


# -- torchcde: neural CDE on irregular series (README example), interpolation coefficients --------

def torchcde_cde(dev):
    import torchcde
    batch, length, channels, hidden = 16, 12, 3, 8

    class Func(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(hidden, 32), nn.ReLU(), nn.Linear(32, hidden * channels))

        def forward(self, t, z):
            return self.net(z).tanh().view(z.size(0), hidden, channels)

    class CDE(nn.Module):
        def __init__(self):
            super().__init__()
            self.initial, self.func, self.readout = nn.Linear(channels, hidden), Func(), nn.Linear(hidden, 2)

        def forward(self, coeffs, adjoint=False):
            X = torchcde.CubicSpline(coeffs)
            z0 = self.initial(X.evaluate(X.interval[0]))
            zt = torchcde.cdeint(X=X, func=self.func, z0=z0, t=X.interval, adjoint=adjoint, method="rk4",
                                 options={"step_size": 0.5})
            return self.readout(zt[:, -1])

    t = torch.linspace(0, 1, length, device=dev)
    x = torch.stack([t.expand(batch, length), torch.randn(batch, length, device=dev).cumsum(1),
                     torch.randn(batch, length, device=dev)], dim=-1)
    x[:, 4:6, 1] = float("nan")  # missing observations, as the README's irregular data
    y = torch.randint(0, 2, (batch,), device=dev)
    model = CDE().to(dev)
    opt = _opt(model)

    def step(adjoint):
        def run():
            coeffs = torchcde.hermite_cubic_coefficients_with_backward_differences(x)
            loss = F.cross_entropy(model(coeffs, adjoint), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return run

    def interpolate():
        with torch.no_grad():
            for coeffs, cls in ((torchcde.natural_cubic_coeffs(x), torchcde.CubicSpline),
                                (torchcde.linear_interpolation_coeffs(x), torchcde.LinearInterpolation)):
                X = cls(coeffs)
                X.evaluate(0.5)
                X.derivative(t[3])
    return {"train": step(False), "train_adjoint": step(True), "interpolate": interpolate}


# -- pytorch-metric-learning: losses, miners, cross-batch memory, an EMA of the embedder --------

def pml_losses(dev):
    from pytorch_metric_learning import distances, losses, miners, reducers, samplers
    from torch_ema import ExponentialMovingAverage

    emb_dim, n_cls = 32, 8
    net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, emb_dim)).to(dev)
    ema = ExponentialMovingAverage(net.parameters(), decay=0.995)
    arcface = losses.ArcFaceLoss(num_classes=n_cls, embedding_size=emb_dim).to(dev)
    proxy = losses.ProxyAnchorLoss(num_classes=n_cls, embedding_size=emb_dim).to(dev)
    opt = torch.optim.Adam(list(net.parameters()) + list(arcface.parameters()) + list(proxy.parameters()), lr=1e-3)
    pairs = [
        (losses.TripletMarginLoss(margin=0.2, distance=distances.CosineSimilarity(),
                                  reducer=reducers.ThresholdReducer(low=0)),
         miners.TripletMarginMiner(margin=0.2, type_of_triplets="semihard")),
        (losses.MultiSimilarityLoss(), miners.MultiSimilarityMiner(epsilon=0.1)),
        (losses.ContrastiveLoss(), miners.PairMarginMiner(pos_margin=0.2, neg_margin=0.8)),
        (losses.CircleLoss(), miners.BatchHardMiner()),
        (losses.NTXentLoss(temperature=0.1), None),
        (losses.SupConLoss(), None),
        (arcface, None), (proxy, None),
    ]
    xbm = losses.CrossBatchMemory(losses.ContrastiveLoss(), emb_dim, memory_size=256,
                                  miner=miners.MultiSimilarityMiner())
    labels_all = torch.arange(n_cls).repeat_interleave(32)
    sampler = samplers.MPerClassSampler(labels_all, m=4, batch_size=32, length_before_new_iter=len(labels_all))
    data = torch.utils.data.TensorDataset(torch.randn(len(labels_all), 64), labels_all)
    loader = iter(torch.utils.data.DataLoader(data, batch_size=32, sampler=sampler))

    def train():
        xb, yb = next(loader)
        xb, yb = xb.to(dev), yb.to(dev)
        emb = net(xb)
        loss = 0
        for loss_fn, miner in pairs:
            loss = loss + (loss_fn(emb, yb, miner(emb, yb)) if miner is not None else loss_fn(emb, yb))
        loss = loss + xbm(emb, yb)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        ema.update()

    def infer():
        with torch.no_grad(), ema.average_parameters():
            emb = net(torch.randn(64, 64, device=dev))
            miners.BatchEasyHardMiner()(emb, torch.randint(0, n_cls, (64,), device=dev))
    return {"train": train, "infer": infer}


# -- pytorch-ignite: supervised trainer (AMP, running average), evaluator metrics, image metrics ----

def ignite_engine(dev):
    from ignite.engine import Engine, Events, create_supervised_evaluator, create_supervised_trainer
    from ignite.metrics import (
        PSNR,
        SSIM,
        Accuracy,
        ConfusionMatrix,
        Fbeta,
        IoU,
        Loss,
        Precision,
        Recall,
        RunningAverage,
        TopKCategoricalAccuracy,
        mIoU,
    )

    cuda = dev.type == "cuda"
    model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    trainer = create_supervised_trainer(model, opt, nn.CrossEntropyLoss(), device=dev,
                                        amp_mode="amp" if cuda else None, scaler=cuda, non_blocking=True)
    RunningAverage(output_transform=lambda loss: loss).attach(trainer, "loss")
    losses = []
    trainer.add_event_handler(Events.ITERATION_COMPLETED(every=2), lambda e: losses.append(e.state.metrics["loss"]))
    precision, recall = Precision(average=False), Recall(average=False)
    cm = ConfusionMatrix(num_classes=5)
    evaluator = create_supervised_evaluator(model, device=dev, metrics={
        "acc": Accuracy(), "loss": Loss(nn.CrossEntropyLoss()), "top2": TopKCategoricalAccuracy(k=2),
        "precision": precision, "recall": recall, "f1": Fbeta(1.0, precision=precision, recall=recall),
        "iou": IoU(cm), "miou": mIoU(ConfusionMatrix(num_classes=5))})
    data = torch.utils.data.TensorDataset(torch.randn(64, 20), torch.randint(0, 5, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16)

    def image_step(engine, batch):
        return batch
    images = Engine(image_step)
    PSNR(data_range=1.0, device=dev).attach(images, "psnr")
    SSIM(data_range=1.0, device=dev).attach(images, "ssim")
    pairs = []
    for _ in range(3):
        a = torch.rand(2, 3, 32, 32, device=dev)
        pairs.append((a, (a + 0.05 * torch.randn_like(a)).clamp(0, 1)))
    return {"train": lambda: trainer.run(loader, max_epochs=1),
            "eval": lambda: evaluator.run(loader),
            "eval_images": lambda: images.run(pairs)}


# -- pytorch-crf: BiLSTM-CRF tagger, log-likelihood with padding masks, Viterbi decoding ---------

def crf_tagger(dev):
    from torchcrf import CRF
    vocab, tags, batch, length = 100, 7, 16, 24

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, 32)
            self.lstm = nn.LSTM(32, 32, batch_first=True, bidirectional=True)
            self.proj = nn.Linear(64, tags)
            self.crf = CRF(tags, batch_first=True)

        def forward(self, tokens):
            return self.proj(self.lstm(self.emb(tokens))[0])

    model = Tagger().to(dev)
    opt = _opt(model)
    tokens = torch.randint(0, vocab, (batch, length), device=dev)
    gold = torch.randint(0, tags, (batch, length), device=dev)
    lengths = torch.randint(length // 2, length + 1, (batch,), device=dev)
    mask = torch.arange(length, device=dev)[None] < lengths[:, None]

    def train():
        model.train()
        loss = -model.crf(model(tokens), gold, mask=mask, reduction="mean")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def decode():
        model.eval()
        with torch.no_grad():
            model.crf.decode(model(tokens), mask=mask)
    return {"train": train, "decode": decode}


# -- geomloss: Sinkhorn / kernel / Hausdorff losses, a gradient flow, weighted batched clouds ------

def geomloss_flow(dev):
    from geomloss import SamplesLoss
    losses = [SamplesLoss("sinkhorn", p=2, blur=0.05, backend="tensorized"),
              SamplesLoss("sinkhorn", p=1, blur=0.1, debias=False, backend="tensorized"),
              SamplesLoss("energy", backend="tensorized"), SamplesLoss("gaussian", blur=0.5, backend="tensorized"),
              SamplesLoss("laplacian", blur=0.5, backend="tensorized")]
    g = torch.Generator().manual_seed(0)
    x0 = torch.randn(300, 2, generator=g).to(dev)
    y = (torch.randn(250, 2, generator=g) * 0.5 + 2).to(dev)
    a = torch.rand(4, 100, generator=g).to(dev)
    a = a / a.sum(1, keepdim=True)
    xb, yb = torch.randn(4, 100, 3, device=dev), torch.randn(4, 120, 3, device=dev)
    b = torch.full((4, 120), 1 / 120, device=dev)

    def flow():  # the documented gradient flow: x follows -grad of the loss
        x = x0.clone().requires_grad_(True)
        for loss_fn in losses:
            loss = loss_fn(x, y)
            [grad] = torch.autograd.grad(loss, [x])
            x.data -= 0.5 * grad * len(x)

    def weighted():
        with torch.no_grad():
            SamplesLoss("sinkhorn", p=2, blur=0.05, scaling=0.8, backend="tensorized")(a, xb, b, yb)
    return {"flow": flow, "weighted": weighted}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _on_path(folder: Path):
    """The repository's root on sys.path for the script's own imports (its README installs it)."""
    sys.path.insert(0, str(folder))
    return folder


def mingpt_adder(dev):
    """minGPT's projects/adder/adder.py as is (its Trainer: AdamW, clipping, callbacks, its own
    addition dataset, of 1-digit sums so that its evaluation is short). `train`: the window spans
    iterations 3 and 4; `eval`: iteration 0, whose callback evaluates the train and test splits (the
    script does so every 500 iterations)."""
    root = _on_path(_need_repo("minGPT"))
    cwd = hc._tmp()
    argv = ["--data.ndigit=1", "--trainer.max_iters=8", "--trainer.batch_size=32",
            "--trainer.num_workers=0", f"--trainer.device={dev.type}"]

    def window(mode, start, stop):
        def run():
            with hc.window_on(torch.Tensor, "backward", "mingpt.adder", mode, dev, start, stop, stop_script=True):
                hc.run_script(root / "projects" / "adder" / "adder.py", argv, cwd)
        return run
    return {"train_window": window("train", 3, 5), "eval_window": window("eval", 1, 2)}


def pygcn_train(dev):
    """pygcn's train.py as is (full-batch GCN on a sparse normalised adjacency, accuracy and loss
    printed every epoch) on a synthetic graph in cora's format, found where it looks: ../data/cora/."""
    import numpy as np
    root = _on_path(_need_repo("pygcn"))
    tmp = Path(hc._tmp())
    data, cwd = tmp / "data" / "cora", tmp / "run"
    data.mkdir(parents=True)
    cwd.mkdir()
    rng = np.random.default_rng(0)
    n, feats = 2708, 64  # its fixed splits index nodes up to 1500
    ids = rng.permutation(100000)[:n] + 1
    rows = [" ".join([str(i), *map(str, rng.integers(0, 2, feats)), f"class{rng.integers(0, 7)}"]) for i in ids]
    (data / "cora.content").write_text("\n".join(rows) + "\n")
    edges = rng.integers(0, n, (5000, 2))
    (data / "cora.cites").write_text("\n".join(f"{ids[a]} {ids[b]}" for a, b in edges) + "\n")
    argv = ["--epochs", "8", *(["--no-cuda"] if dev.type != "cuda" else [])]

    def train():
        with hc.window_on(torch.Tensor, "backward", "pygcn.train", "train", dev, start=3, stop=5, stop_script=True):
            hc.run_script(root / "pygcn" / "train.py", argv, str(cwd))
    return {"train_window": train}


MODELS = [
    # name, package, builder
    ("pyro.svi", "pyro", pyro_svi),
    ("torchsde.sde", "torchsde", torchsde_sde),
    ("torchcde.cde", "torchcde", torchcde_cde),
    ("pml.losses", "pytorch_metric_learning", pml_losses),
    ("ignite.engine", "ignite", ignite_engine),
    ("crf.tagger", "torchcrf", crf_tagger),
    ("geomloss.flow", "geomloss", geomloss_flow),
    ("mingpt.adder", "minGPT", mingpt_adder),
    ("pygcn.train", "pygcn", pygcn_train),
]


# -- shared by later collectors: repositories' scripts run as is on synthetic data, smoke-run on the CPU --

@contextlib.contextmanager
def fake_dataset(name, n, shape, num_classes=10):
    """torchvision's dataset `name` answered by `FakeData` of its shape (no download, no files)."""
    import torchvision.datasets as dset
    saved = getattr(dset, name)

    def fake(root=None, train=True, download=False, transform=None, target_transform=None, **kw):
        return dset.FakeData(size=n if train else n // 4, image_size=shape, num_classes=num_classes,
                             transform=transform, target_transform=target_transform, random_offset=0 if train else 1)
    setattr(dset, name, fake)
    try:
        yield
    finally:
        setattr(dset, name, saved)


class cuda_on_cpu:
    """The CPU smoke run only: the scripts put their tensors and modules on the GPU (`.to(device)` with their own
    device, `.cuda()`), which is mapped to the CPU there (on the GPU nothing is changed)."""

    def __init__(self, dev):
        self.on = dev.type != "cuda"

    @staticmethod
    def _cpu(a, k):
        def fix(v):
            if isinstance(v, str) and v.startswith("cuda") or isinstance(v, torch.device) and v.type == "cuda":
                return torch.device("cpu")
            return v
        return tuple(fix(v) for v in a), {key: fix(v) for key, v in k.items()}

    def __enter__(self):
        if self.on:
            self.t, self.m, self.c = torch.Tensor.to, nn.Module.to, torch.Tensor.cuda
            t, m, cpu = self.t, self.m, self._cpu

            def tensor_to(self, *a, **k):
                a, k = cpu(a, k)
                return t(self, *a, **k)

            def module_to(self, *a, **k):
                a, k = cpu(a, k)
                return m(self, *a, **k)

            def tensor_cuda(self, *a, **k):
                return self
            torch.Tensor.to, nn.Module.to, torch.Tensor.cuda = tensor_to, module_to, tensor_cuda
        return self

    def __exit__(self, *exc):
        if self.on:
            torch.Tensor.to, nn.Module.to, torch.Tensor.cuda = self.t, self.m, self.c


def prepare(repos: dict = REPOS, repos_dir: Path = REPOS_DIR, wheels: list = WHEELS,
            wheels_dir: Path = WHEELS_DIR) -> None:
    """Copy the training repositories at their commits into repos_dir and download the wheels."""
    from accuracy import copy_repo  # the scoring side's copier (a pinned commit, from the local mirror)
    for name, (github, commit, paths) in repos.items():
        print(f"{name}: {copy_repo(github, commit, paths, repos_dir / name)}")
    hc.download_wheels(wheels, wheels_dir)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        prepare()
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh", REPOS, DISTS, budget=240.0, per_model=60.0)


if __name__ == "__main__":
    sys.exit(main())
