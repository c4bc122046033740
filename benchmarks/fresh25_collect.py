"""Record the syncs of a twenty-sixth set, `fresh25` (a sealed test set): libraries and training code nobody here read.

`fresh25` is recorded the same way as `fresh9` to `fresh23` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; otorchmizer's `Space(device=)`,
nessai-torch's `Sampler(device=)`, petls-pytorch's `Rips(device=)` / `Alpha(device=)` and oflibpytorch's
`Flow(..., device=)` build their tensors on the device they are given): no workload runs under a default-device
context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh25): otorchmizer (97 population-based
  metaheuristics with PyTorch populations: swarm, evolutionary, science-inspired and population families),
  nessai_torch (nessai-torch: nested sampling with normalising-flow proposals, in pure PyTorch), pcn_torch
  (pcn-torch: predictive coding networks trained by local inference and learning loops), oflibpytorch (optical
  flow fields, differentiable warping), petls_pytorch (petls-pytorch: persistent topological Laplacians of Rips and
  Alpha complexes, their spectra, Betti numbers and harmonic features), torchist (NumPy-style histograms in
  PyTorch), torchbnn (Bayesian layers and their KL loss) and mirtorch (MIRTorch: linear maps, proximal operators and
  iterative solvers for image reconstruction); + dill (otorchmizer's), glasflow (nessai-torch's flows), gudhi
  (petls-pytorch's complexes), torchkbnufft, finufft and PyWavelets (MIRTorch's). Their other needs (numpy, scipy,
  matplotlib, tqdm, h5py, rich, opencv, pandas, scikit-learn, einops, torchdiffeq, torchvision) are on the GPU
  machine. A ninth library, pysdtw (soft-DTW losses), and two modes of oflibpytorch were removed after failing in
  their warm-up on the GPU (docs/accuracy.md says why).
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh25/repos/<name>:
  YuliaRubanova/latent_ode (run_models.py as is on its own synthetic periodic time series: a latent ODE with an
  ODE-RNN encoder in interpolation, and one with an RNN encoder in extrapolation) and tonyduan/diffusion
  (examples/ex_mnist.py and ex_mnist_simple.py as they are, a score-matching and a simple diffusion model on a
  U-Net, with the MNIST download answered by synthetic digits). A first choice, chrischute/real-nvp, was left out
  after the CPU smoke run: its coupling layers' `view` fails under the current torch.

    python benchmarks/fresh25_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh25_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh25 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh25 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import math
import os
import shutil
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
BENCH_DIR = ac.REPO / ".bench" / "fresh25"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh25", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh25/repos/<name>)
REPOS = {
    "latent_ode": ("YuliaRubanova/latent_ode", "c0682d4f52b806fb88d965755892eadd9783f936",
                   ["run_models.py", "generate_timeseries.py", "mujoco_physics.py", "physionet.py",
                    "person_activity.py", "lib"]),
    "diffusion": ("tonyduan/diffusion", "fcc0ed829baf29e1493b460b073e735a848c08ea",
                  ["examples/ex_mnist.py", "examples/ex_mnist_simple.py", "src"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["otorchmizer==3.0.0", "dill==0.4.1", "nessai-torch==0.1.0", "glasflow==0.4.1", "pcn-torch==1.1.0",
          "oflibpytorch==2.1.1", "petls-pytorch==1.2.0", "gudhi==3.13.0", "torchist==1.0.1", "torchbnn==1.2",
          "mirtorch==0.4.0", "torchkbnufft==1.5.1", "finufft==2.5.1", "PyWavelets==1.10.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"otorchmizer": "otorchmizer", "nessai_torch": "nessai-torch", "pcn_torch": "pcn-torch",
         "oflibpytorch": "oflibpytorch", "petls_pytorch": "petls-pytorch", "torchist": "torchist",
         "torchbnn": "torchbnn", "mirtorch": "mirtorch", "glasflow": "glasflow", "gudhi": "gudhi",
         "torchkbnufft": "torchkbnufft", "numpy": "numpy", "scipy": "scipy",
         "torchdiffeq": "torchdiffeq", "torchvision": "torchvision", "scikit_learn": "scikit-learn"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh25/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh25_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _classes(n, d=20, k=4, seed=0):
    """n points of k Gaussian classes in d dimensions (CPU tensors): features, labels."""
    g = torch.Generator().manual_seed(seed)
    centres = 2.0 * torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    return centres[y] + torch.randn(n, d, generator=g), y


# ============================================================================================
# Libraries
# ============================================================================================

# -- otorchmizer: the README's recipe, `Space(n_agents=, n_variables=, lower_bound=, upper_bound=, device=)`,
#    `space.build()`, `Otorchmizer(space, optimizer, objective).start(n_iterations=)`, then `space.best_position` /
#    `space.best_fitness`, with scalar objectives (sphere, Rastrigin, Rosenbrock, Ackley) of one candidate, for
#    algorithms of four of its families: swarm (PSO, firefly, whale, bat, cuckoo search), evolutionary (genetic
#    algorithm, differential evolution, harmony search, evolution strategies), science (simulated annealing,
#    gravitational search, multi-verse, equilibrium optimizer) and population (grey wolf, Harris hawks, Aquila) ------

def otorchmizer_search(dev):
    from otorchmizer import Otorchmizer
    from otorchmizer.core import Space

    def sphere(x):
        return x.square().sum()

    def rastrigin(x):
        return 10 * x.numel() + (x.square() - 10 * torch.cos(2 * math.pi * x)).sum()

    def rosenbrock(x):
        v = x.flatten()
        return (100 * (v[1:] - v[:-1].square()).square() + (1 - v[:-1]).square()).sum()

    def ackley(x):
        v = x.flatten()
        return (-20 * torch.exp(-0.2 * torch.sqrt(v.square().mean())) - torch.exp(torch.cos(2 * math.pi * v).mean())
                + 20 + math.e)

    objectives = {"sphere": sphere, "rastrigin": rastrigin, "rosenbrock": rosenbrock, "ackley": ackley}

    def family(module, names, iters=25):
        def run():
            import importlib
            mod = importlib.import_module(f"otorchmizer.optimizers.{module}")
            res = {}
            for i, name in enumerate(names):
                for oname, obj in objectives.items():
                    torch.manual_seed(i)
                    space = Space(n_agents=16, n_variables=5, lower_bound=-5, upper_bound=5, device=str(dev))
                    space.build()
                    model = Otorchmizer(space, getattr(mod, name)(), obj)
                    model.start(n_iterations=iters)
                    res[f"{name}/{oname}"] = round(space.best_fitness.item(), 3)
            print(f"{module}: {res}")
        return run

    return {"swarm": family("swarm", ["PSO", "FA", "WOA", "BA", "CS"]),
            "evolutionary": family("evolutionary", ["GA", "DE", "HS", "ES"]),
            "science": family("science", ["SA", "GSA", "MVO", "EO"]),
            "population": family("population", ["GWO", "HHO", "AO"])}


# -- nessai_torch (nessai-torch): the README's `Sampler(log_likelihood=, prior_transform=, dims=, device=)` and
#    `sampler.run()`, with a vectorised log-likelihood and prior transform: a correlated 2-D Gaussian, few live points
#    and a short prior-sampling phase so that the flow proposal is trained and used (a second mode, a 3-D bimodal
#    mixture, was left out after the CPU smoke run: too slow for the GPU call) ----------------------------------------

def nessai_sample(dev):
    from nessai_torch.sampler import Sampler

    def gaussian():
        cov = torch.tensor([[1.0, 0.6], [0.6, 1.0]], device=dev)
        prec = torch.linalg.inv(cov)

        def log_likelihood(x):
            return -0.5 * torch.einsum("ni,ij,nj->n", x, prec, x)

        def prior_transform(u):
            return 10 * u - 5

        torch.manual_seed(0)
        sampler = Sampler(log_likelihood=log_likelihood, prior_transform=prior_transform, dims=2, nlive=50,
                          tolerance=2.0, sample_prior_iterations=60, outdir=hc._tmp(), save=False, plot_pool=False,
                          plot_trace=False, plot_insertion_indices=False, plot_state=False, device=str(dev), seed=1)
        sampler.run()
        print(f"gaussian: {sorted(k for k in vars(sampler) if not k.startswith('_'))[:12]}")

    return {"gaussian": gaussian}


# -- pcn_torch (pcn-torch): the README's quickstart, `PredictiveCodingNetwork(dims=, activation=, output_dim=,
#    mode=)` moved to the device, `train_pcn(model, loader, TrainConfig(...))` and `test_pcn`, on batches already on
#    the device; a classification network (with a callback of ours, `TrainCallback`, an energy-based early stop and
#    a learning-rate schedule), a regression network, and the energies of a trained network by `compute_energy` /
#    `compute_energy_per_layer` ----------------------------------------------------------------------------------------

def pcn_train(dev):
    from pcn_torch import (
        PredictiveCodingNetwork,
        TrainCallback,
        TrainConfig,
        test_pcn,
        train_pcn,
    )

    def loader(x, y, bs=32):
        return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x.to(dev), y.to(dev)), batch_size=bs)

    class Count(TrainCallback):
        def __init__(self):
            self.calls = 0

        def __getattr__(self, name):  # every hook the trainer calls: counted
            if name.startswith("on_"):
                def hook(*a, **k):
                    self.calls += 1
                return hook
            raise AttributeError(name)

    def classify():
        x, y = _classes(320, d=32, k=10, seed=3)
        torch.manual_seed(0)
        model = PredictiveCodingNetwork(dims=[32, 64, 32], activation="relu", output_dim=10,
                                        mode="classification").to(dev)
        cb = Count()
        config = TrainConfig(task="classification", T_infer=20, T_infer_test=40, lr_infer=0.05, lr_learn=0.005,
                             num_epochs=3, early_stop_threshold=1e-4, lr_learn_steps=[(0, 1, 0.01)], callback=cb)
        history = train_pcn(model, loader(x[:256], y[:256]), config)
        results = test_pcn(model, loader(x[256:], y[256:]), config)
        print(f"classify: {results}, {cb.calls} callback calls, {type(history).__name__}")

    def regress():
        g = torch.Generator().manual_seed(4)
        x = torch.randn(256, 16, generator=g)
        y = torch.stack([x[:, :4].sum(1), (x[:, 4:8] ** 2).mean(1)], 1)
        torch.manual_seed(0)
        model = PredictiveCodingNetwork(dims=[16, 48, 24], activation="tanh", output_dim=2,
                                        mode="regression").to(dev)
        config = TrainConfig(task="regression", T_infer=15, lr_infer=0.05, lr_learn=0.002, num_epochs=2,
                             use_mixed_precision=False)
        history = train_pcn(model, loader(x[:192], y[:192]), config)
        results = test_pcn(model, loader(x[192:], y[192:]), config)
        print(f"regress: {results}, {type(history).__name__}")

    def energies():
        from pcn_torch import compute_energy, compute_energy_per_layer
        x, y = _classes(128, d=24, k=4, seed=5)
        torch.manual_seed(0)
        model = PredictiveCodingNetwork(dims=[24, 32, 16], activation="sigmoid", output_dim=4,
                                        mode="classification").to(dev)
        config = TrainConfig(task="classification", T_infer=10, num_epochs=1, use_mixed_precision=False)
        train_pcn(model, loader(x, y), config)
        errs = getattr(model, "errors", None)
        if callable(errs):
            errs = None
        if errs is None:
            for name in ("compute_errors", "get_errors"):
                if hasattr(model, name):
                    try:
                        errs = getattr(model, name)(x.to(dev), F.one_hot(y, 4).float().to(dev))
                    except TypeError:
                        errs = getattr(model, name)(x.to(dev))
                    break
        if errs is not None:
            print(f"energy {float(compute_energy(errs)):.4f}, per layer {compute_energy_per_layer(errs)}")
        results = test_pcn(model, loader(x, y), config)
        print(f"energies: {results}")
    return {"classify": classify, "regress": regress, "energies": energies}


# -- oflibpytorch: the README's and user guide's flow fields on the device (`Flow.from_transforms(transforms, shape,
#    ref, device=)`, `Flow(vectors, ref, mask, device=)`): a flow field learnt by gradient descent through `apply`
#    (with its valid area) so as to register two images. Two more modes (warping images with valid areas, tracking
#    points, padding, resizing and visualising; combining, inverting and switching flows, the functional API) were
#    removed after failing in their warm-up on the GPU: the library converts device tensors to numpy there ---------

def oflib_flow(dev):
    import oflibpytorch as of

    h, w = 64, 80

    def image(seed=0, c=3):
        g = torch.Generator().manual_seed(seed)
        yy, xx = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                                indexing="ij")
        img = torch.sin(xx / 6) * torch.cos(yy / 9) + 0.1 * torch.randn(h, w, generator=g)
        return img.expand(c, h, w).clone().to(dev)

    def learn():
        src = image(3, c=1)[None]
        true = of.Flow.from_transforms([["translation", 2.5, -1.5], ["rotation", 40, 32, 3]], (h, w), "t", device=dev)
        tgt = true.apply(src).detach()
        vecs = torch.zeros(1, 2, h, w, device=dev, requires_grad=True)
        opt = torch.optim.Adam([vecs], lr=0.1)
        for _ in range(30):
            flow = of.Flow(vecs, "t", device=dev)
            out, valid = flow.apply(src, return_valid_area=True)
            loss = ((out - tgt).square() * valid[:, None]).mean() + 0.05 * (vecs.diff(dim=-1).square().mean()
                                                                           + vecs.diff(dim=-2).square().mean())
            opt.zero_grad()
            loss.backward()
            opt.step()
        epe = (of.Flow(vecs.detach(), "t", device=dev).vecs - true.vecs).norm(dim=1).mean()
        print(f"learnt flow: loss {loss.item():.4f}, epe {epe.item():.3f}")
    return {"learn": learn}


# -- petls_pytorch (petls-pytorch): the README's quick start with `device=`: an `Alpha` complex of points on a
#    torus (`topology_summary`, `positive_spectrum`, `spectra`, `persistence_intervals`, `harmonic_features`,
#    `harmonic_participation`) and a `Rips` complex of a noisy circle and of two clusters (persistent spectra over a
#    filtration, `persistent_betti`, `nonzero_spectra`, `eigenvalues_summarize`) ------------------------------------

def petls_spectra(dev):
    import numpy as np
    import petls_pytorch

    def torus(n=120, seed=0):
        rng = np.random.default_rng(seed)
        u, v = rng.uniform(0, 2 * np.pi, n), rng.uniform(0, 2 * np.pi, n)
        return np.stack([(2 + 0.7 * np.cos(v)) * np.cos(u), (2 + 0.7 * np.cos(v)) * np.sin(u), 0.7 * np.sin(v)], 1)

    def circle(n=40, seed=1):
        rng = np.random.default_rng(seed)
        t = rng.uniform(0, 2 * np.pi, n)
        return np.stack([np.cos(t), np.sin(t)], 1) + 0.05 * rng.normal(size=(n, 2))

    def alpha():
        cx = petls_pytorch.Alpha(points=torus(), max_dim=2, max_alpha_square=1.0, device=dev, dtype=torch.float64)
        for scale in (0.1, 0.3):
            summary = cx.topology_summary(dimensions=(0, 1), a=scale, b=scale)
            modes = cx.positive_spectrum(dim=1, a=scale, positive_modes=6)
            print(f"alpha {scale}: {type(summary).__name__}, {type(modes).__name__}")
        spectrum = cx.spectra(dim=1, a=0.3, b=0.3)
        intervals = cx.persistence_intervals(dim=1)
        features = cx.harmonic_features(dim=1, a=0.3)
        part = cx.harmonic_participation(dim=1, a=0.3)
        print(f"alpha spectrum {len(spectrum)}, intervals {len(intervals)}, features {sorted(features)[:4]}, "
              f"participation {type(part).__name__}")

    def rips():
        cx = petls_pytorch.Rips(points=circle(), max_dim=2, threshold=1.2, device=dev, dtype=torch.float64)
        res = []
        for a, b in ((0.2, 0.2), (0.3, 0.5), (0.5, 0.9)):
            ev = cx.spectra(dim=1, a=a, b=b)
            ev = ev[0] if isinstance(ev, (list, tuple)) and ev and not isinstance(ev[0], float) else ev
            res.append(cx.eigenvalues_summarize(ev))
        betti = [cx.persistent_betti(1, a, b) for a, b in ((0.3, 0.5), (0.5, 1.0))]
        nz = cx.nonzero_spectra(dim=0, a=0.3, b=0.4)
        print(f"rips summaries {res}, betti {betti}, nonzero {len(nz)}")
        rng = np.random.default_rng(3)
        pts = np.concatenate([rng.normal(0, 0.2, (20, 2)), rng.normal(3, 0.2, (20, 2))])
        cx2 = petls_pytorch.Rips(points=pts, max_dim=1, threshold=4.0, device=dev, dtype=torch.float64)
        summary = cx2.topology_summary(dimensions=(0,), a=0.5, b=0.5)
        print(f"two clusters: {summary if not hasattr(summary, 'keys') else sorted(summary)}, "
              f"intervals {cx2.persistence_intervals(dim=0)[:3].tolist()}")
    return {"alpha": alpha, "rips": rips}


# -- torchist: the README's `histogramdd(x, bins=, low=, upp=)` on device tensors, and the rest of its exported API
#    (`histogram`, `histogram_edges`, `histogramdd` with `edges=`, `weights=`, `bound=` and `sparse=`,
#    `ravel_multi_index` / `unravel_index`): histograms of a network's activations and weights, read at every step of
#    its training (bounds from the data or given), a histogram-matching loss on soft assignments, and sparse
#    histograms of high-dimensional codes --------------------------------------------------------------------------

def torchist_hist(dev):
    import torchist

    def monitor():
        x, y = _classes(512, d=6, k=3, seed=8)
        x, y = x.to(dev), y.to(dev)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 3)).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        edges = [torch.linspace(-1, 1, 9, device=dev), torch.linspace(-1, 1, 5, device=dev)]
        stats = []
        for _ in range(12):
            h = model[1](model[0](x))
            loss = F.cross_entropy(model[2](h), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                act = torchist.histogram(h, bins=20, low=-1.0, upp=1.0)
                free = torchist.histogram(model[0].weight.flatten(), bins=16)
                e = torchist.histogram_edges(model[2].weight.flatten(), bins=8)
                joint = torchist.histogramdd(h[:, :3], bins=6, low=-1.0, upp=1.0)
                data = torchist.histogramdd(x[:, :2], bins=[10, 12])
                given = torchist.histogramdd(h[:, :2], edges=edges, bound=True)
                weighted = torchist.histogramdd(x[:, :2], bins=8, low=-6.0, upp=6.0,
                                                weights=F.softmax(model(x), -1)[:, 0])
                stats.append((act.argmax().item(), free.sum().item(), joint.count_nonzero().item(),
                              given.sum().item(), round(weighted.sum().item(), 2), data.max().item()))
        print(f"torchist monitor: {stats[-1]}, edges {e.tolist()[:3]}")

    def sparse():
        g = torch.Generator().manual_seed(9)
        codes = (torch.randn(4096, 6, generator=g) * 2).to(dev)
        hist = torchist.histogramdd(codes, bins=16, low=-8.0, upp=8.0, sparse=True)
        dense = torchist.histogramdd(codes[:, :3], bins=16, low=-8.0, upp=8.0)
        idx = torch.randint(0, 16, (1000, 4), generator=g).to(dev)
        flat = torchist.ravel_multi_index(idx, (16, 16, 16, 16))
        back = torchist.unravel_index(flat, (16, 16, 16, 16))
        print(f"sparse nnz {hist._nnz() if hist.is_sparse else hist.count_nonzero().item()}, dense "
              f"{dense.sum().item()}, roundtrip {torch.equal(back, idx)}")
        # matching a target histogram with a learnt location / scale (the histogram of soft-clamped samples)
        target = torchist.histogram(torch.randn(4096, generator=g).to(dev) * 0.5 + 1.0, bins=30, low=-3.0, upp=3.0)
        target = target / target.sum()
        mu = torch.zeros((), device=dev, requires_grad=True)
        opt = torch.optim.Adam([mu], lr=0.05)
        for _ in range(15):
            z = torch.randn(4096, device=dev) + mu
            centres = torch.linspace(-3, 3, 30, device=dev)
            soft = torch.softmax(-(z[:, None] - centres) ** 2 / 0.05, -1).mean(0)
            loss = (soft - target).abs().sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            counts = torchist.histogram(z.detach(), bins=30, low=-3.0, upp=3.0)
        print(f"histogram matching: mu {mu.item():.3f}, counts {counts.sum().item()}")
    return {"monitor": monitor, "sparse": sparse}


# -- torchbnn: the package's demos on the device: a Bayesian MLP (`BayesLinear(prior_mu=, prior_sigma=, ...)`)
#    classifying Gaussian classes with cross-entropy plus `BKLLoss(reduction=, last_layer_only=)`, its predictive
#    spread from repeated forward passes, and `torchbnn.utils.freeze` / `unfreeze`; a Bayesian CNN
#    (`BayesConv2d`, `BayesBatchNorm2d`) on synthetic images --------------------------------------------------------

def torchbnn_bayes(dev):
    import torchbnn as bnn
    from torchbnn.utils import freeze, unfreeze

    def mlp():
        x, y = _classes(300, d=8, k=3, seed=6)
        x, y = x.to(dev), y.to(dev)
        torch.manual_seed(0)
        model = nn.Sequential(bnn.BayesLinear(prior_mu=0, prior_sigma=0.1, in_features=8, out_features=64),
                              nn.ReLU(), bnn.BayesLinear(prior_mu=0, prior_sigma=0.1, in_features=64,
                                                         out_features=3)).to(dev)
        ce, kl = nn.CrossEntropyLoss(), bnn.BKLLoss(reduction="mean", last_layer_only=False)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        for _ in range(40):
            pre = model(x)
            cost = ce(pre, y) + 0.01 * kl(model)
            opt.zero_grad()
            cost.backward()
            opt.step()
        probs = torch.stack([model(x).softmax(-1) for _ in range(10)])
        freeze(model)
        a, b = model(x), model(x)
        unfreeze(model)
        print(f"bnn mlp cost {cost.item():.3f}, spread {probs.std(0).mean().item():.4f}, "
              f"frozen same {torch.equal(a, b)}, kl last {bnn.BKLLoss(last_layer_only=True)(model).item():.3f}")

    def cnn():
        g = torch.Generator().manual_seed(7)
        imgs = torch.randn(96, 1, 16, 16, generator=g)
        lab = (imgs[:, 0, :8].mean((1, 2)) > imgs[:, 0, 8:].mean((1, 2))).long()
        imgs, lab = imgs.to(dev), lab.to(dev)
        torch.manual_seed(0)
        model = nn.Sequential(bnn.BayesConv2d(prior_mu=0, prior_sigma=0.1, in_channels=1, out_channels=8,
                                              kernel_size=3, padding=1),
                              bnn.BayesBatchNorm2d(prior_mu=0, prior_sigma=0.1, num_features=8), nn.ReLU(),
                              nn.AdaptiveAvgPool2d(4), nn.Flatten(),
                              bnn.BayesLinear(prior_mu=0, prior_sigma=0.1, in_features=128, out_features=2)).to(dev)
        kl = bnn.BKLLoss(reduction="sum")
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        for _ in range(20):
            cost = F.cross_entropy(model(imgs), lab) + 1e-4 * kl(model)
            opt.zero_grad()
            cost.backward()
            opt.step()
        model.eval()
        print(f"bnn cnn cost {cost.item():.3f}")
    return {"mlp": mlp, "cnn": cnn}


# -- mirtorch (MIRTorch): the docs' MRI reconstruction recipes on the device: a Cartesian SENSE operator
#    (`Sense(smaps, masks)`) of a synthetic phantom, reconstructed by conjugate gradients on its normal operator
#    (`CG(A.H * A, ...)`, with `return_info=`); its Lipschitz constant by `power_iter`, then `FISTA` and `POGM`
#    with an `L1Regularizer` (`compile=False`), and a centred FFT (`FFTCn`) ---------------------------------------

def mirtorch_recon(dev):
    from mirtorch.alg import CG, FISTA, POGM, power_iter
    from mirtorch.linear import FFTCn, Sense
    from mirtorch.prox import L1Regularizer

    n, ncoil = 64, 4

    def problem(seed=0):
        g = torch.Generator().manual_seed(seed)
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, n), torch.linspace(-1, 1, n), indexing="ij")
        img = ((xx ** 2 / 0.6 + yy ** 2 / 0.8) < 0.7).float() + 0.5 * ((xx - 0.2) ** 2 + yy ** 2 < 0.05).float()
        x = img.to(torch.complex64)[None, None].to(dev)
        phases = [torch.exp(1j * (c * xx + (ncoil - c) * yy)) for c in range(ncoil)]
        smaps = torch.stack([torch.exp(-((xx - math.cos(c)) ** 2 + (yy - math.sin(c)) ** 2)) * p
                             for c, p in enumerate(phases)])[None].to(torch.complex64).to(dev)
        mask = (torch.rand(1, n, n, generator=g) < 0.4).float()
        mask[:, :, n // 2 - 6:n // 2 + 6] = 1
        A = Sense(smaps, mask.to(dev))
        y = A * x
        return A, x, y + 0.01 * torch.randn_like(y)

    def cg():
        A, x, y = problem()
        for it in (10, 20):
            solver = CG(A.H * A, max_iter=it, tol=1e-4)
            out = solver.run(torch.zeros_like(x), A.H * y)
            out = out[0] if isinstance(out, tuple) else out
            print(f"cg {it}: err {((out - x).abs().norm() / x.abs().norm()).item():.4f}")
        res = CG(A.H * A, max_iter=15, tol=1e-4).run(torch.zeros_like(x), A.H * y, return_info=True)
        print(f"cg info {type(res).__name__}")

    def proximal():
        A, x, y = problem(1)
        normal = A.H * A
        L = power_iter(normal, torch.randn_like(x), max_iter=30)
        L = L[-1] if isinstance(L, (tuple, list)) else L
        L = float(L.abs().max()) if torch.is_tensor(L) else float(L)

        def f_grad(v):
            return A.H * (A * v - y)
        prox = L1Regularizer(1e-3)
        for cls in (FISTA, POGM):
            solver = cls(f_grad, L, prox, max_iter=25, restart=True, compile=False)
            out = solver.run(torch.zeros_like(x))
            out = out[0] if isinstance(out, tuple) else out
            print(f"{cls.__name__}: err {((out - x).abs().norm() / x.abs().norm()).item():.4f}")
        res = FISTA(f_grad, L, prox, max_iter=10, compile=False, rtol=1e-4).run(torch.zeros_like(x),
                                                                                  return_info=True)
        F2 = FFTCn([1, 1, n, n], [1, 1, n, n], dims=(2, 3))
        k = F2 * x
        back = F2.H * k
        print(f"fista info {type(res).__name__}, fft roundtrip {(back - x).abs().max().item():.2e}")
    return {"cg": cg, "proximal": proximal}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _latent_ode(dev, name: str, extra: list, stop: int):
    """YuliaRubanova/latent_ode's run_models.py as is (the GPU when there is one, as it decides: `cuda:0`) on its own
    synthetic periodic time series (`--dataset periodic -n 200 -b 50 --niters 30`, noisy sinusoids it generates),
    run from a temporary folder (its experiments/, logs/ and results/ there) with the repository's root on the path
    for its `lib`, `generate_timeseries` and `mujoco_physics`. The window spans the 2nd to the `stop`-th
    `backward`: training steps and, at each epoch's end (4 steps), the test pass over all batches with its loss,
    likelihood, KL and MSE log lines and a checkpoint."""
    root = _need_repo("latent_ode")
    tmp = hc._tmp()
    argv = ["--dataset", "periodic", "-n", "200", "-b", "50", "--niters", "30", "-s", "50", "--noise-weight",
            "0.01", "--save", os.path.join(tmp, "experiments"), *extra]

    def window():
        sys.path.insert(0, str(root))
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, stop, stop_script=True):
                hc.run_script(root / "run_models.py", argv, tmp)
        finally:
            sys.path.remove(str(root))
            for m in [m for m in sys.modules if m.split(".")[0] in ("lib", "generate_timeseries", "mujoco_physics",
                                                                    "physionet", "person_activity")]:
                del sys.modules[m]
    return {"train_window": window}


def latent_ode_interp(dev):
    """The README's latent ODE (`--latent-ode -l 6 --rec-dims 20 -u 50 -g 50`, an ODE-RNN encoder, interpolation);
    window 2nd to 10th `backward`."""
    return _latent_ode(dev, "latent_ode.interp", ["--latent-ode", "-l", "6", "--rec-dims", "20", "-u", "50", "-g",
                                                  "50"], 10)


def latent_ode_extrap(dev):
    """The README's latent ODE in extrapolation (`--latent-ode --extrap --z0-encoder rnn -l 8 -u 50 -g 50`: the
    second half of each series predicted from the first, an RNN encoder; the ODE-RNN baseline's extrapolation
    raises "not implemented"); window 2nd to 10th `backward`."""
    return _latent_ode(dev, "latent_ode.extrap", ["--latent-ode", "--extrap", "--z0-encoder", "rnn", "-l", "8", "-u",
                                                  "50", "-g", "50"], 10)


class _synthetic_openml:
    """scikit-learn's `fetch_openml("mnist_784", ...)`, which the scripts call to download MNIST, answered with
    synthetic digits: (n, 784) pixel values in 0-255 (a ring or a cross per class, its size by class, at a random
    place, with noise) and their labels as strings, as `return_X_y=True, as_frame=False` gives them."""

    def __init__(self, n: int = 1024, seed: int = 0):
        self.n, self.seed = n, seed

    def __enter__(self):
        import numpy as np
        import sklearn.datasets
        rng = np.random.default_rng(self.seed)
        yy, xx = np.mgrid[:28, :28]
        labels = rng.integers(0, 10, self.n)
        imgs = np.zeros((self.n, 28, 28))
        for i, c in enumerate(labels):
            cy, cx = rng.integers(9, 19, 2)
            r = 3 + c % 5
            if c < 5:
                imgs[i] = np.abs(np.hypot(yy - cy, xx - cx) - r) < 1.2
            else:
                imgs[i] = ((np.abs(yy - cy) < 1.5) & (np.abs(xx - cx) <= r)) | ((np.abs(xx - cx) < 1.5)
                                                                                 & (np.abs(yy - cy) <= r))
        x = np.clip(imgs * 230 + rng.normal(0, 12, imgs.shape), 0, 255).reshape(self.n, 784)
        y = labels.astype(str).astype(object)
        self.mod, self.orig = sklearn.datasets, sklearn.datasets.fetch_openml
        sklearn.datasets.fetch_openml = lambda *a, **k: (x, y)

    def __exit__(self, *exc):
        self.mod.fetch_openml = self.orig


def _diffusion(dev, name: str, script: str, extra: list, stop: int):
    """tonyduan/diffusion's MNIST example scripts as they are (`--device` the device, `--iterations 50`), run from
    a temporary folder, with the repository's root on the path for its `src` package and MNIST's download answered
    by synthetic digits (`_synthetic_openml`). The window spans the 2nd to the `stop`-th `backward`: training steps
    of its U-Net (noise levels drawn, the weighted denoising loss, Adam and a cosine schedule)."""
    root = _need_repo("diffusion")
    tmp = hc._tmp()
    argv = ["--iterations", "50", "--device", dev.type, *extra]

    def window():
        sys.path.insert(0, str(root))
        try:
            with _synthetic_openml(), hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, stop,
                                                   stop_script=True):
                hc.run_script(root / "examples" / script, argv, tmp)
        finally:
            sys.path.remove(str(root))
            for m in [m for m in sys.modules if m.split(".")[0] == "src"]:
                del sys.modules[m]
    return {"train_window": window}


def diffusion_score(dev):
    """examples/ex_mnist.py: its score-matching model (EDM-style preconditioning, sigma from 0.002 to 80) on a
    U-Net (`--batch-size 32`); window 2nd to 8th `backward`."""
    return _diffusion(dev, "diffusion.score", "ex_mnist.py", ["--batch-size", "32"], 8)


def diffusion_simple(dev):
    """examples/ex_mnist_simple.py: its simple discrete-time diffusion model (`--batch-size 32`); window 2nd to 8th
    `backward`."""
    return _diffusion(dev, "diffusion.simple", "ex_mnist_simple.py", ["--batch-size", "32"], 8)


MODELS = [
    # name, package, builder
    ("otorchmizer.search", "otorchmizer", otorchmizer_search),
    ("nessai_torch.sample", "nessai_torch", nessai_sample),
    ("pcn_torch.train", "pcn_torch", pcn_train),
    ("oflibpytorch.flow", "oflibpytorch", oflib_flow),
    ("petls_pytorch.spectra", "petls_pytorch", petls_spectra),
    ("torchist.hist", "torchist", torchist_hist),
    ("torchbnn.bayes", "torchbnn", torchbnn_bayes),
    ("mirtorch.recon", "mirtorch", mirtorch_recon),
    ("latent_ode.interp", "latent_ode", latent_ode_interp),
    ("latent_ode.extrap", "latent_ode", latent_ode_extrap),
    ("diffusion.score", "diffusion", diffusion_score),
    ("diffusion.simple", "diffusion", diffusion_simple),
]


def prepare() -> None:
    """The repositories' files and the wheels (fresh_collect's prepare), and the collector's code copied for the
    GPU machine."""
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
    CODE_DIR.mkdir(parents=True, exist_ok=True)
    for name in CODE:
        shutil.copy2(Path(__file__).parent / name, CODE_DIR / name)
    print(f"code in {CODE_DIR}: " + ", ".join(sorted(p.name for p in CODE_DIR.glob("*.py"))))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        prepare()
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh25", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
