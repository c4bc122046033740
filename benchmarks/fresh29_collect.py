"""Record the syncs of a thirtieth set, `fresh29` (a sealed test set): libraries and training code nobody here read.

`fresh29` is recorded the same way as `fresh9` to `fresh27` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in a public training repository that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; pyqtorch's `zero_state(..., device=)`,
tad-dftd3's `Reference(device=)`, torchrir's `Room.shoebox(..., device=)` and torchsvm's `cvksvm(..., device=)`
build their tensors on the device they are given): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh29), names m to z: pyqtorch (a
  differentiable state-vector simulator for quantum machine learning), pytorch3dunet (pytorch-3dunet: 2-D / 3-D
  U-Nets, their segmentation losses and evaluation metrics), scoringrules (scoring rules for probabilistic
  forecasts, with a torch backend), tad_dftd3 (tad-dftd3: the DFT-D3 dispersion model, energies, forces and
  intermediates; + tad-mctc), torchcvnn (complex-valued layers, activations, normalisations, transformers),
  torchdistill (knowledge-distillation losses over forward hooks), torchrir (room impulse responses by the image
  source method, static and dynamic scenes, convolution) and torchsvm (kernel SVM and other large-margin solvers
  along a lambda path with cross-validation, Platt scaling); + scikit-image, lazy_loader, imageio, tifffile and
  PyYAML (pytorch3dunet's), opt_einsum (tad-mctc's). Their other needs (numpy, scipy, h5py, networkx, requests,
  tqdm, pillow, torchvision) are on the GPU machine.
- One training repository at a pinned commit, copied by `prepare` into .bench/fresh29/repos/<name>:
  gordicaleksa/pytorch-GAT (training_script_cora.py as is: a GAT on the Cora graph the repository ships; it imports
  torch.utils.tensorboard's `SummaryWriter`, answered by a stub, `_tensorboard_stub`). A second one,
  nadavbh12/VQ-VAE (main.py: a VQ-VAE and a convolutional VAE on synthetic CIFAR-10), was recorded on the GPU and then
  removed, with its data, on finding that `fresh23` already uses it (the name check had missed it); there was no GPU
  call left to record a replacement. Left out before any run: bearpaw/pytorch-classification (`cuda(async=True)`, a
  syntax error in Python 3), kekmodel/FixMatch-pytorch and YU1ut/MixMatch-pytorch (their loops call the data-loader
  iterator's `.next()`, gone from the current torch), zfjsail/gae-pytorch (CPU only) and ermongroup/ncsn
  (`yaml.load` without a loader).

    python benchmarks/fresh29_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh29_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh29 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh29 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import math
import os
import shutil
import sys
import types
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh_collect as fc
import heldout_collect as hc
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
BENCH_DIR = ac.REPO / ".bench" / "fresh29"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh29", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh29/repos/<name>)
REPOS = {
    "gat": ("gordicaleksa/pytorch-GAT", "39c8f0ee634477033e8b1a6e9a6da3c7ed71bbd1",
            ["training_script_cora.py", "models/definitions", "utils", "data/cora"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["pyqtorch==1.7.8", "pytorch3dunet==1.9.6", "scikit-image==0.26.0", "lazy-loader==0.6", "imageio==2.38.1",
          "tifffile==2026.3.3", "PyYAML==6.0.4", "scoringrules==0.11.0", "tad-dftd3==0.7.0", "tad-mctc==0.8.0",
          "opt-einsum==3.4.0", "torchcvnn==0.10.0", "torchdistill==1.1.5", "torchrir==3.0.1", "torchsvm==3.0.2"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"pyqtorch": "pyqtorch", "pytorch3dunet": "pytorch3dunet", "scoringrules": "scoringrules",
         "tad_dftd3": "tad-dftd3", "tad_mctc": "tad-mctc", "torchcvnn": "torchcvnn", "torchdistill": "torchdistill",
         "torchrir": "torchrir", "torchsvm": "torchsvm", "skimage": "scikit-image", "numpy": "numpy",
         "scipy": "scipy", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh29/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh29_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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

# -- pyqtorch: the docs' circuits of primitives (`RX(target, param_name)`, `CNOT(control, target)`, ...) in a
#    `QuantumCircuit(n_qubits, operations)` moved to the device, states from `zero_state` / `random_state(...,
#    device=)`, `run`, `sample(..., n_shots=)` and `expectation(circuit, state, values, observable, diff_mode=)`: a
#    variational circuit trained to minimise an `Observable`'s expectation (autodiff, adjoint and GPSR
#    differentiation), sampling and state overlaps, and a `HamiltonianEvolution` of a parametrised generator ---------

def pyqtorch_circuits(dev):
    import pyqtorch as pyq

    n = 4

    def ansatz(layers=2):
        ops, names = [], []
        for layer in range(layers):
            for q in range(n):
                for gate in (pyq.RX, pyq.RY):
                    name = f"{gate.__name__.lower()}_{layer}_{q}"
                    ops.append(gate(q, name))
                    names.append(name)
            for q in range(n - 1):
                ops.append(pyq.CNOT(q, q + 1))
        return pyq.QuantumCircuit(n, ops).to(dev), names

    def observable():
        return pyq.Observable(pyq.Add([pyq.Z(q) for q in range(n)] + [pyq.X(0)])).to(dev)

    def vqe(diff_mode, steps):
        def run():
            torch.manual_seed(0)
            circ, names = ansatz()
            obs = observable()
            values = {k: torch.rand(1, device=dev, requires_grad=True) for k in names}
            opt = torch.optim.Adam(values.values(), lr=0.1)
            state = pyq.zero_state(n, device=dev)
            for _ in range(steps):
                opt.zero_grad()
                energy = pyq.expectation(circ, state, values, obs, diff_mode=diff_mode)
                energy.sum().backward()
                opt.step()
            print(f"vqe {diff_mode}: energy {energy.sum().item():.4f}")
        return run

    def sampling():
        torch.manual_seed(1)
        circ, names = ansatz(1)
        values = {k: torch.rand(3, device=dev) for k in names}  # a batch of three parameter sets
        state = pyq.zero_state(n, batch_size=3, device=dev)
        out = pyq.run(circ, state, values)
        shots = pyq.sample(circ, state, values, n_shots=200)
        other = pyq.random_state(n, batch_size=3, device=dev)
        uni = pyq.uniform_state(n, batch_size=3, device=dev)
        print(f"sample: {[sorted(c.items())[:2] for c in shots]}, normalised {pyq.is_normalized(out)}, "
              f"overlap {pyq.overlap(out, other).tolist()}, inner {pyq.inner_prod(out, uni).abs().tolist()}")
        toffoli = pyq.QuantumCircuit(3, [pyq.H(0), pyq.H(1), pyq.Toffoli((0, 1), 2), pyq.SWAP(0, 2), pyq.CZ(1, 2),
                                         pyq.S(0), pyq.T(1), pyq.PHASE(2, "p"), pyq.CRX(0, 1, "c")]).to(dev)
        v = {"p": torch.tensor([0.3], device=dev), "c": torch.tensor([0.7], device=dev)}
        res = pyq.run(toffoli, pyq.zero_state(3, device=dev), v)
        print(f"toffoli circuit norm {pyq.is_normalized(res)}, "
              f"{pyq.sample(toffoli, pyq.zero_state(3, device=dev), v, n_shots=100)}")

    def evolution():
        torch.manual_seed(2)
        gen = pyq.Add([pyq.Scale(pyq.Z(0), "g0"), pyq.Scale(pyq.X(1), "g1"), pyq.Scale(pyq.Y(2), "g2")])
        hevo = pyq.HamiltonianEvolution(gen, "t", qubit_support=(0, 1, 2))
        circ = pyq.QuantumCircuit(3, [pyq.H(0), pyq.H(1), hevo]).to(dev)
        obs = pyq.Observable(pyq.Add([pyq.Z(0), pyq.Z(1), pyq.Z(2)])).to(dev)
        vals = {k: torch.rand(1, device=dev, requires_grad=True) for k in ("g0", "g1", "g2", "t")}
        opt = torch.optim.Adam(vals.values(), lr=0.05)
        state = pyq.zero_state(3, device=dev)
        for _ in range(12):
            opt.zero_grad()
            e = pyq.expectation(circ, state, vals, obs)
            e.sum().backward()
            opt.step()
        print(f"evolution energy {e.sum().item():.4f}")

    def noisy():
        from pyqtorch.noise import DigitalNoiseProtocol, DigitalNoiseType, ReadoutNoise
        from pyqtorch.utils import DropoutMode
        torch.manual_seed(3)
        res = {}
        for kind in (DigitalNoiseType.BITFLIP, DigitalNoiseType.DEPOLARIZING, DigitalNoiseType.AMPLITUDE_DAMPING):
            proto = DigitalNoiseProtocol(kind, error_probability=0.1)
            circ = pyq.QuantumCircuit(2, [pyq.RX(0, "a", noise=proto), pyq.CNOT(0, 1), pyq.RY(1, "b", noise=proto)],
                                      readout_noise=ReadoutNoise(2, error_probability=0.05, seed=0)).to(dev)
            vals = {"a": torch.tensor([0.4], device=dev), "b": torch.tensor([1.1], device=dev)}
            state = pyq.zero_state(2, device=dev)
            rho = pyq.run(circ, state, vals)
            res[kind.value] = (tuple(rho.shape), pyq.sample(circ, state, vals, n_shots=100))
        for mode in (DropoutMode.ROTATIONAL, DropoutMode.ENTANGLING, DropoutMode.CANONICAL_FWD):
            circ, names = ansatz(1)
            drop = pyq.DropoutQuantumCircuit(n, list(circ.operations), dropout_mode=mode, dropout_prob=0.3).to(dev)
            values = {k: torch.rand(1, device=dev, requires_grad=True) for k in names}
            opt = torch.optim.Adam(values.values(), lr=0.1)
            for _ in range(4):
                opt.zero_grad()
                e = pyq.expectation(drop, pyq.zero_state(n, device=dev), values, observable())
                e.sum().backward()
                opt.step()
            res[mode.value] = round(e.sum().item(), 4)
        print(f"noisy: {res}")

    # `sampling` and `noisy` were removed after failing in their warm-up on the GPU (a device mismatch inside the
    # library: "Expected all tensors to be on the same device"); kept here, not run
    del sampling, noisy
    return {"vqe_ad": vqe(pyq.DiffMode.AD, 15), "vqe_adjoint": vqe(pyq.DiffMode.ADJOINT, 8),
            "vqe_gpsr": vqe(pyq.DiffMode.GPSR, 4), "evolution": evolution}


# -- pytorch3dunet (pytorch-3dunet): the README's models (`UNet3D`, `ResidualUNet3D`, `UNet2D`,
#    `ResidualUNet2D`) with random weights on the device, trained a few steps on synthetic volumes with its losses
#    (`DiceLoss`, `BCEDiceLoss`, `GeneralizedDiceLoss`, `WeightedCrossEntropyLoss`, `WeightedSmoothL1Loss`,
#    `get_loss_criterion(config)`) and evaluated with its metrics (`MeanIoU`, `DiceCoefficient`, `PSNR`, `MSE`,
#    `AdaptedRandError`, `get_evaluation_metric(config)`) ------------------------------------------------------

def unet3d_seg(dev):
    from pytorch3dunet.unet3d import losses, metrics, model

    def blobs(n, shape, channels=2, seed=0):
        g = torch.Generator().manual_seed(seed)
        grids = torch.meshgrid(*[torch.linspace(-1, 1, s) for s in shape], indexing="ij")
        masks = []
        for _ in range(n):
            c = torch.rand(len(shape), generator=g) - 0.5
            r = sum((gr - ci) ** 2 for gr, ci in zip(grids, c))
            masks.append((r < 0.25).float())
        m = torch.stack(masks)[:, None]
        img = m + 0.3 * torch.randn(m.shape, generator=g)
        target = torch.cat([1 - m, m], 1) if channels == 2 else m
        return img.to(dev), target.to(dev), m.long()[:, 0].to(dev)

    def fit(net, loss_fn, x, y, steps=6, labels=None):
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        net.train()
        for _ in range(steps):
            out = net(x)
            loss = loss_fn(out, labels if labels is not None else y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        return loss

    def three_d():
        torch.manual_seed(0)
        x, y, lab = blobs(2, (16, 32, 32))
        res = {}
        for cls in (model.UNet3D, model.ResidualUNet3D):
            net = cls(in_channels=1, out_channels=2, f_maps=8, num_levels=3, final_sigmoid=False,
                      is_segmentation=True).to(dev)
            for name, loss_fn in (("dice", losses.DiceLoss(normalization="softmax")),
                                  ("gdl", losses.GeneralizedDiceLoss(normalization="softmax")),
                                  ("bcedice", losses.BCEDiceLoss(alpha=0.5))):
                res[f"{cls.__name__}/{name}"] = round(fit(net, loss_fn, x, y).item(), 4)
            res[f"{cls.__name__}/wce"] = round(fit(net, losses.WeightedCrossEntropyLoss(), x, y, labels=lab).item(), 4)
            with torch.no_grad():
                out = net(x)
            for metric in (metrics.MeanIoU(), metrics.DiceCoefficient()):
                res[f"{cls.__name__}/{type(metric).__name__}"] = round(float(metric(out, y)), 4)
        print(f"3d: {res}")

    def two_d():
        torch.manual_seed(1)
        x, y, lab = blobs(4, (48, 48), seed=1)
        res = {}
        for cls in (model.UNet2D, model.ResidualUNet2D):
            net = cls(in_channels=1, out_channels=2, f_maps=8, num_levels=3, final_sigmoid=False).to(dev)
            crit = losses.get_loss_criterion({"loss": {"name": "DiceLoss", "normalization": "softmax"},
                                              "device": dev})
            res[cls.__name__] = round(fit(net, crit, x, y, steps=8).item(), 4)
            with torch.no_grad():
                out = net(x)
            ev = metrics.get_evaluation_metric({"eval_metric": {"name": "DiceCoefficient"}, "device": dev})
            res[cls.__name__ + "/eval"] = round(float(ev(out, y)), 4)
            res[cls.__name__ + "/dice"] = round(float(metrics.DiceCoefficient()(out, y)), 4)
        print(f"2d: {res}")

    def regression():
        torch.manual_seed(2)
        x, _, _ = blobs(3, (32, 32), seed=2)
        target = torch.tanh(2 * x)
        net = model.UNet2D(in_channels=1, out_channels=1, f_maps=8, num_levels=3, is_segmentation=False).to(dev)
        res = {}
        for name, loss_fn in (("smoothl1", losses.WeightedSmoothL1Loss(threshold=0.1, initial_weight=2.0)),
                              ("mse", losses.MSELoss())):
            res[name] = round(fit(net, loss_fn, x, target, steps=8).item(), 4)
        with torch.no_grad():
            out = net(x)
        res["psnr"] = round(float(metrics.PSNR()(out, target)), 3)
        res["mse"] = round(float(metrics.MSE()(out, target)), 4)
        print(f"regression: {res}")

    def instances():
        torch.manual_seed(4)
        _, _, lab = blobs(2, (16, 32, 32), seed=4)
        target = lab[:, None].long() * torch.arange(1, 3, device=dev).view(2, 1, 1, 1, 1)[:1]
        pred = (lab[:, None].float() + 0.2 * torch.rand(lab[:, None].shape, device=dev))
        res = {}
        for metric in (metrics.AveragePrecision(), metrics.BlobsAveragePrecision(thresholds=[0.4, 0.6]),
                       metrics.Accuracy(0.5)):
            try:
                res[type(metric).__name__] = round(float(metric(pred, target)), 4)
            except Exception as e:  # noqa: BLE001 - a metric whose input convention differs: printed
                res[type(metric).__name__] = type(e).__name__
        print(f"instances: {res}")
    return {"three_d": three_d, "two_d": two_d, "regression": regression, "instances": instances}


def _guarded(calls):
    """Each (name, score) call's mean, or the name of the error it raises (a score the torch backend cannot compute
    on the device's tensors is printed, the others still run)."""
    res = {}
    for name, call in calls:
        try:
            res[name] = round(float(call().mean()), 4)
        except (RuntimeError, TypeError, ValueError, NotImplementedError) as e:
            res[name] = type(e).__name__
    return res


# -- scoringrules: the README's `crps_ensemble(obs, fct)` and its exported scores with `backend="torch"` on device
#    tensors: ensemble CRPS with its estimators, threshold-, outcome-weighted and vertically re-scaled CRPS, the
#    closed-form CRPS and log scores of parametric forecasts, the energy, variogram and Dawid-Sebastiani scores of
#    multivariate ensembles, Brier / RPS / log scores of probability forecasts, and a network trained to output
#    an ensemble by minimising its CRPS, and a Gaussian forecaster by minimising `crps_normal` --------------------

def scoringrules_scores(dev):
    import scoringrules as sr

    def ensembles():
        g = torch.Generator().manual_seed(0)
        obs = torch.randn(500, generator=g).to(dev)
        fct = (obs[:, None] + 0.3 * torch.randn(500, 21, generator=g).to(dev)).contiguous()
        alpha = torch.linspace(0.05, 0.95, 19, device=dev)
        q = obs[:, None] + 0.3 * torch.special.ndtri(alpha)[None]
        calls = [(est, lambda est=est: sr.crps_ensemble(obs, fct, estimator=est, backend="torch"))
                 for est in ("qd", "nrg", "fair", "pwm", "int")]
        calls += [("tw", lambda: sr.twcrps_ensemble(obs, fct, a=0.5, backend="torch")),
                  ("ow", lambda: sr.owcrps_ensemble(obs, fct, a=-0.5, backend="torch")),
                  ("vr", lambda: sr.vrcrps_ensemble(obs, fct, b=1.0, backend="torch")),
                  ("logs", lambda: sr.logs_ensemble(obs, fct, backend="torch")),
                  ("clogs", lambda: sr.clogs_ensemble(obs, fct, a=-1.0, backend="torch")),
                  ("gks", lambda: sr.gksuv_ensemble(obs, fct, backend="torch")),
                  ("dss", lambda: sr.dssuv_ensemble(obs, fct, backend="torch")),
                  ("ess", lambda: sr.error_spread_score(obs, fct, backend="torch")),
                  ("quantile", lambda: sr.crps_quantile(obs, q, alpha, backend="torch"))]
        print(f"ensembles: {_guarded(calls)}")

    def parametric():
        g = torch.Generator().manual_seed(1)
        obs = torch.randn(300, generator=g).abs().to(dev) + 0.1
        mu, sigma = torch.zeros(300, device=dev), torch.ones(300, device=dev)
        res = {}
        for name, fn, args in (("normal", sr.crps_normal, (mu, sigma)), ("logistic", sr.crps_logistic, (mu, sigma)),
                               ("laplace", sr.crps_laplace, (mu, sigma)), ("t", sr.crps_t, (5.0 + mu, mu, sigma)),
                               ("exponential", sr.crps_exponential, (sigma,)),
                               ("gamma", sr.crps_gamma, (2.0 + mu, sigma)),
                               ("lognormal", sr.crps_lognormal, (mu, sigma)),
                               ("tnormal", sr.crps_tnormal, (mu, sigma, -1.0, 3.0)),
                               ("gev", sr.crps_gev, (0.1 + mu, mu, sigma)),
                               ("mixnorm", sr.crps_mixnorm, (torch.stack([mu - 1, mu + 1], -1),
                                                             torch.stack([sigma, sigma], -1))),
                               ("logs_normal", sr.logs_normal, (mu, sigma)),
                               ("logs_t", sr.logs_t, (5.0 + mu, mu, sigma)),
                               ("logs_gamma", sr.logs_gamma, (2.0 + mu, sigma))):
            try:
                res[name] = round(float(fn(obs, *args, backend="torch").mean()), 4)
            except Exception as e:  # noqa: BLE001 - a distribution the torch backend lacks
                res[name] = type(e).__name__
        counts = torch.poisson(torch.full((200,), 3.0, device=dev))
        res["poisson"] = round(float(sr.crps_poisson(counts, torch.full_like(counts, 3.0), backend="torch").mean()), 4)
        print(f"parametric: {res}")

    def multivariate():
        g = torch.Generator().manual_seed(2)
        obs = torch.randn(100, 5, generator=g).to(dev)
        fct = obs[:, None, :] + 0.5 * torch.randn(100, 30, 5, generator=g).to(dev)
        p = torch.rand(200, generator=g).to(dev)
        y = (torch.rand(200, generator=g).to(dev) < p).float()
        probs = torch.softmax(torch.randn(200, 4, generator=g), -1).to(dev)
        onehot = F.one_hot(torch.randint(0, 4, (200,), generator=g), 4).float().to(dev)
        calls = [("es", lambda: sr.es_ensemble(obs, fct, backend="torch")),
                 ("vs", lambda: sr.vs_ensemble(obs, fct, backend="torch")),
                 ("dss", lambda: sr.dssmv_ensemble(obs, fct, backend="torch")),
                 ("twes", lambda: sr.twes_ensemble(obs, fct, lambda x: torch.clamp(x, min=0.0), backend="torch")),
                 ("owes", lambda: sr.owes_ensemble(obs, fct, lambda x: (x.sum(-1) > 0).float() + 0.5,
                                                   backend="torch")),
                 ("brier", lambda: sr.brier_score(y, p, backend="torch")),
                 ("log", lambda: sr.log_score(y, p.clamp(0.01, 0.99), backend="torch")),
                 ("rps", lambda: sr.rps_score(onehot, probs, onehot=True, backend="torch")),
                 ("rls", lambda: sr.rls_score(onehot, probs, onehot=True, backend="torch"))]
        print(f"multivariate: {_guarded(calls)}")

    def train():
        x, _ = _classes(512, d=6, k=3, seed=3)
        x = x.to(dev)
        y = x[:, 0] * 0.5 + torch.sin(x[:, 1]) + 0.2 * torch.randn(512, device=dev)
        torch.manual_seed(0)
        net = nn.Sequential(nn.Linear(6, 64), nn.ReLU(), nn.Linear(64, 16)).to(dev)
        gauss = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 2)).to(dev)
        opt = torch.optim.Adam(list(net.parameters()) + list(gauss.parameters()), lr=5e-3)
        for _ in range(20):
            ens = net(x)
            ens_loss = sr.crps_ensemble(y, ens, estimator="fair", backend="torch").mean()
            mu, log_s = gauss(x).unbind(-1)
            g_loss = sr.crps_normal(y, mu, log_s.exp(), backend="torch").mean()
            opt.zero_grad()
            (ens_loss + g_loss).backward()
            opt.step()
        print(f"train: ensemble crps {ens_loss.item():.4f}, gaussian crps {g_loss.item():.4f}")
    return {"ensembles": ensembles, "parametric": parametric, "multivariate": multivariate, "train": train}


# -- tad_dftd3 (tad-dftd3): the README's examples on the device: `dftd3(numbers, positions, param)` for one
#    molecule and for a batch packed by `tad_mctc.batch.pack`, the intermediates (`Reference(device=)`,
#    `COV_D3` / `VDW_PAIRWISE` / `R4R2`, `cn_d3`, `weight_references`, `atomic_c6`, `dispersion`), forces by
#    autograd, and a few steps of a geometry relaxation along those forces ------------------------------------------

def dftd3_disp(dev):
    import tad_dftd3 as d3
    import tad_mctc as mctc

    dd = {"device": dev, "dtype": torch.float64}
    thiophene = "C C C C N C S H H H H H".split()
    pos1 = [[-2.56745685564671, -0.02509985979910, 0.0], [-1.39177582455797, +2.27696188880014, 0.0],
            [+1.27784995624894, +2.45107479759386, 0.0], [+2.62801937615793, +0.25927727028120, 0.0],
            [+1.41097033661123, -1.99890996077412, 0.0], [-1.17186102298849, -2.34220576284180, 0.0],
            [-2.39505990368378, -5.22635838332362, 0.0], [+2.41961980455457, -3.62158019253045, 0.0],
            [-2.51744374846065, +3.98181713686746, 0.0], [+2.24269048384775, +4.24389473203647, 0.0],
            [+4.66488984573956, +0.17907568006409, 0.0], [-4.60044244782237, -0.17794734637413, 0.0]]

    def param():
        return {"a1": torch.tensor(0.49484001, **dd), "s8": torch.tensor(0.78981345, **dd),
                "a2": torch.tensor(5.73083694, **dd)}

    def cluster(n, seed):
        g = torch.Generator().manual_seed(seed)
        symbols = [["C", "H", "O", "N"][i % 4] for i in range(n)]
        pts = torch.randn(n, 3, generator=g, dtype=torch.float64) * 2.5
        return mctc.convert.symbol_to_number(symbols=symbols).to(dev), pts.to(dev)

    def single():
        numbers = mctc.convert.symbol_to_number(symbols=thiophene).to(dev)
        positions = torch.tensor(pos1, **dd)
        for _ in range(3):
            energy = d3.dftd3(numbers, positions, param())
        print(f"single: {energy.sum().item():.8f}")
        nb, pb = zip(*(cluster(n, s) for n, s in ((8, 1), (14, 2), (20, 3))))
        numbers = mctc.batch.pack(list(nb) + [mctc.convert.symbol_to_number(symbols=thiophene).to(dev)])
        positions = mctc.batch.pack(list(pb) + [torch.tensor(pos1, **dd)])
        e = d3.dftd3(numbers, positions, param())
        print(f"batch: {e.sum(-1).tolist()}")

    def intermediates():
        nb, pb = zip(*(cluster(n, s) for n, s in ((10, 4), (16, 5))))
        numbers, positions = mctc.batch.pack(nb), mctc.batch.pack(pb)
        ref = d3.reference.Reference(**dd)
        rvdw = mctc.data.VDW_PAIRWISE(**dd)[numbers.unsqueeze(-1), numbers.unsqueeze(-2)]
        r4r2 = d3.data.R4R2(**dd)[numbers]
        cn = mctc.ncoord.cn_d3(numbers, positions, counting_function=mctc.ncoord.exp_count)
        weights = d3.model.weight_references(numbers, cn, ref, d3.model.gaussian_weight)
        c6 = d3.model.atomic_c6(numbers, weights, ref)
        energy = d3.disp.dispersion(numbers, positions, param(), c6, rvdw, r4r2, d3.disp.rational_damping)
        print(f"intermediates: {energy.sum(-1).tolist()}, cn {cn.sum().item():.3f}")

    def relax():
        numbers, positions = cluster(16, 6)
        positions = positions.clone().requires_grad_(True)
        opt = torch.optim.SGD([positions], lr=50.0)
        for _ in range(8):
            energy = d3.dftd3(numbers, positions, param()).sum()
            (grad,) = torch.autograd.grad(energy, positions)
            with torch.no_grad():
                positions.grad = grad
            opt.step()
        forces = -grad
        print(f"relax: energy {energy.item():.6f}, max force {forces.abs().max().item():.2e}")
    return {"single": single, "intermediates": intermediates, "relax": relax}


# -- torchcvnn: complex-valued networks from its exported layers on the device (complex `nn.Conv2d` /
#    `nn.Linear` weights, `torchcvnn.nn.BatchNorm2d`, `MaxPool2d`, `AdaptiveAvgPool2d`, `Dropout`, the activations
#    `modReLU`, `Cardioid`, `zReLU`, `CReLU`, `zAbsReLU`, `Mod`), a classifier of synthetic complex images trained
#    by cross-entropy on magnitudes; a complex `TransformerEncoder` (with `LayerNorm` / `RMSNorm`) regressing a
#    complex sequence with `ComplexMSELoss`; and the ViT builder `vit_t` with a patch embedder of ours -------------

def torchcvnn_nets(dev):
    import torchcvnn.nn as c_nn
    from torchcvnn.models import vit_t

    cdt = torch.complex64

    def images(n=64, seed=0):
        g = torch.Generator().manual_seed(seed)
        y = torch.randint(0, 3, (n,), generator=g)
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, 16), torch.linspace(-1, 1, 16), indexing="ij")
        phase = torch.stack([torch.exp(1j * (k + 1) * 3 * (xx + yy)) for k in range(3)])[y]
        z = phase + 0.3 * torch.complex(torch.randn(n, 16, 16, generator=g), torch.randn(n, 16, 16, generator=g))
        return z[:, None].to(cdt).to(dev), y.to(dev)

    def classify():
        x, y = images()
        res = {}
        for act in (c_nn.modReLU, c_nn.Cardioid, c_nn.zReLU, c_nn.CReLU, c_nn.zAbsReLU):
            torch.manual_seed(0)
            net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1, dtype=cdt), c_nn.BatchNorm2d(8), act(),
                                c_nn.MaxPool2d(2), nn.Conv2d(8, 8, 3, padding=1, dtype=cdt), act(),
                                c_nn.AdaptiveAvgPool2d(1), nn.Flatten(), c_nn.Dropout(0.1),
                                nn.Linear(8, 3, dtype=cdt), c_nn.Mod()).to(dev)
            opt = torch.optim.Adam(net.parameters(), lr=5e-3)
            for _ in range(6):
                loss = F.cross_entropy(net(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            net.eval()
            with torch.no_grad():
                res[act.__name__] = round((net(x).argmax(-1) == y).float().mean().item(), 3)
        print(f"classify: {res}")

    def sequence():
        g = torch.Generator().manual_seed(1)
        t = torch.linspace(0, 1, 24)
        freqs = torch.rand(32, 1, generator=g) * 6
        z = torch.exp(2j * math.pi * freqs * t)[..., None].repeat(1, 1, 16).to(cdt).to(dev)
        target = (z * torch.exp(torch.tensor(0.5j))).to(dev)
        res = {}
        for act, norm in ((c_nn.CReLU, c_nn.LayerNorm), (c_nn.modReLU, c_nn.RMSNorm)):
            torch.manual_seed(0)
            layer = c_nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0,
                                                 activation=act, batch_first=True, device=dev)
            enc = c_nn.TransformerEncoder(layer, num_layers=2, norm=norm(16, device=dev)).to(dev)
            lossf = c_nn.ComplexMSELoss()
            opt = torch.optim.Adam(enc.parameters(), lr=3e-3)
            for _ in range(6):
                loss = lossf(enc(z), target)
                opt.zero_grad()
                loss.backward()
                opt.step()
            res[f"{act.__name__}/{norm.__name__}"] = round(loss.item(), 4)
        bn = c_nn.BatchNorm1d(16, device=dev)
        out = bn(z.reshape(-1, 16))
        print(f"sequence: {res}, bn1d {out.abs().mean().item():.4f}")

    def vit():
        x, y = images(16, seed=2)

        class Patches(nn.Module):
            def __init__(self):
                super().__init__()
                self.proj = nn.Conv2d(1, 192, 4, stride=4, dtype=cdt)

            def forward(self, v):
                return self.proj(v).flatten(2).transpose(1, 2)

        torch.manual_seed(0)
        model = vit_t(Patches().to(dev), device=dev)
        head = nn.Linear(192, 3, dtype=cdt).to(dev)
        opt = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-3)
        for _ in range(3):
            feats = model(x)
            logits = head(feats.mean(1) if feats.dim() == 3 else feats).abs()
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"vit_t: loss {loss.item():.4f}")
    # `vit` was removed after failing in its warm-up on the GPU (its input on the device, a weight on the CPU);
    # kept here, not run
    del vit
    return {"classify": classify, "sequence": sequence}


# -- torchdistill: its `ForwardHookManager(device)` (the docstring's example) on a teacher and a student network,
#    their io dicts fed to the middle-level losses it registers, in a distillation loop per loss: `KDLoss`,
#    `LogitStdKDLoss`, `DISTLoss`, `SKDInstanceLoss`, `PKTLoss` on logits / penultimate features, `RKDLoss`,
#    `SPKDLoss` on feature maps, `ATLoss` and `FSPLoss` on teacher-student block pairs ---------------------------

def torchdistill_kd(dev):
    from torchdistill.core.forward_hook import ForwardHookManager
    from torchdistill.losses import mid_level as ml

    class Net(nn.Module):
        def __init__(self, width):
            super().__init__()
            self.layer1 = nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU())
            self.layer2 = nn.Sequential(nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width), nn.ReLU())
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.fc = nn.Linear(width, 10)

        def forward(self, x):
            return self.fc(self.pool(self.layer2(self.layer1(x))).flatten(1))

    def images(n=64, seed=0):
        g = torch.Generator().manual_seed(seed)
        y = torch.randint(0, 10, (n,), generator=g)
        x = torch.randn(n, 3, 16, 16, generator=g) + y[:, None, None, None] / 5
        return x.to(dev), y.to(dev)

    def distil(specs, steps=5):
        def run():
            x, y = images()
            res = {}
            for name, make, paths in specs:
                torch.manual_seed(0)
                teacher, student = Net(16).to(dev).eval(), Net(16).to(dev)
                t_hooks, s_hooks = ForwardHookManager(dev), ForwardHookManager(dev)
                for p in paths:
                    t_hooks.add_hook(teacher, p, requires_input=True, requires_output=True)
                    s_hooks.add_hook(student, p, requires_input=True, requires_output=True)
                crit = make()
                opt = torch.optim.SGD(student.parameters(), lr=0.05, momentum=0.9)
                for _ in range(steps):
                    with torch.no_grad():
                        teacher(x)
                    student(x)
                    t_io, s_io = t_hooks.pop_io_dict(), s_hooks.pop_io_dict()
                    loss = crit(s_io, t_io, y)
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                res[name] = round(float(loss), 4)
            print(f"distil: {res}")
        return run

    logits = [("kd", lambda: ml.KDLoss("fc", "output", "fc", "output", temperature=4.0, alpha=0.5), ["fc"]),
              ("logit_std_kd", lambda: ml.LogitStdKDLoss("fc", "output", "fc", "output", temperature=2.0, alpha=0.5),
               ["fc"]),
              ("dist", lambda: ml.DISTLoss("fc", "output", "fc", "output", beta=1.0, gamma=1.0, tau=1.0), ["fc"]),
              ("skd_instance", lambda: ml.SKDInstanceLoss("fc", "output", "fc", "output"), ["fc"]),
              ("pkt", lambda: ml.PKTLoss("fc", "input", "fc", "input"), ["fc"])]
    features = [("rkd", lambda: ml.RKDLoss("pool", "pool", dist_factor=1.0, angle_factor=2.0, reduction="mean"),
                 ["pool"]),
                ("spkd", lambda: ml.SPKDLoss("layer2", "layer2", reduction="batchmean"), ["layer2"]),
                ("at", lambda: ml.ATLoss({"p1": {"student": {"path": "layer1", "io": "output"},
                                                 "teacher": {"path": "layer1", "io": "output"}, "weight": 1},
                                          "p2": {"student": {"path": "layer2", "io": "output"},
                                                 "teacher": {"path": "layer2", "io": "output"}, "weight": 1}},
                                         mode="code"), ["layer1", "layer2"]),
                ("fsp", lambda: ml.FSPLoss({"pair1": {"teacher_first": {"io": "input", "path": "layer2"},
                                                      "teacher_second": {"io": "output", "path": "layer2"},
                                                      "student_first": {"io": "input", "path": "layer2"},
                                                      "student_second": {"io": "output", "path": "layer2"},
                                                      "weight": 1}}), ["layer2"])]
    return {"logits": distil(logits), "features": distil(features)}


# -- torchrir: the README's scenes on the device (`Room.shoebox(size, fs=, beta= | t60=, device=)`,
#    `Source.from_positions`, `MicrophoneArray.from_positions` with its array factories `binaural_array`,
#    `circular_array`, `linear_array`, `eigenmike_em32`, directivities), `simulate(scene, SimulationConfig(...))`
#    for several image orders, horizons and a diffuse tail, `convolve_rir`; a dynamic scene along
#    `linear_trajectory` with a `FrameSchedule` and `DynamicConvolver`; and a source position fitted by gradient
#    descent through `simulate` to a target RIR ---------------------------------------------------------------------

def torchrir_sim(dev):
    from torchrir import DynamicScene, MicrophoneArray, Room, Source, StaticScene
    from torchrir.config import SimulationConfig
    from torchrir.geometry import binaural_array, circular_array, eigenmike_em32, linear_array, linear_trajectory
    from torchrir.signal import DynamicConvolver, FrameSchedule, convolve_rir
    from torchrir.sim import simulate

    fs = 8000

    def static():
        res = {}
        room = Room.shoebox([6.0, 4.0, 3.0], fs=fs, beta=[0.9] * 6, device=dev)
        src = Source.from_positions([[1.0, 2.0, 1.5], [4.5, 1.0, 1.2]], device=dev)
        for name, mics in (("binaural", binaural_array([3.0, 2.0, 1.5], device=dev)),
                           ("circular", circular_array([3.0, 2.5, 1.5], num=6, radius=0.1, device=dev)),
                           ("linear", linear_array([3.0, 1.5, 1.5], num=4, spacing=0.05, device=dev)),
                           ("em32", eigenmike_em32([3.2, 2.0, 1.5], device=dev))):
            scene = StaticScene(room=room, sources=src, mics=MicrophoneArray.from_positions(mics, device=dev))
            for order in (2, 6):
                rirs = simulate(scene, SimulationConfig(max_order=order, tmax=0.1)).rirs
                res[f"{name}/{order}"] = tuple(rirs.shape)
        dry = torch.randn(2, fs // 2, device=dev)
        wet = convolve_rir(dry, rirs)
        sab = Room.shoebox([5.0, 5.0, 3.0], fs=fs, t60=0.4, device=dev)
        card = StaticScene(room=sab, sources=Source.from_positions([[1.0, 1.0, 1.5]], orientation=[0.5, 0.0],
                                                                  directivity="cardioid", device=dev),
                           mics=MicrophoneArray.from_positions([[3.5, 3.0, 1.5]], orientation=[3.5, 0.0],
                                                               directivity="hypercardioid", device=dev))
        tail = simulate(card, SimulationConfig(max_order=4, tmax=0.3, tdiff=0.05)).rirs
        print(f"static: {res}, wet {tuple(wet.shape)}, tail energy {tail.square().sum().item():.4f}")

    def dynamic():
        room = Room.shoebox([6.0, 4.0, 3.0], fs=fs, beta=[0.85] * 6, device=dev)
        mics = MicrophoneArray.from_positions([[3.0, 2.0, 1.5], [3.1, 2.0, 1.5]], device=dev)
        src = Source.from_positions([[1.0, 2.0, 1.5]], device=dev)
        schedule = FrameSchedule.from_samples([0, 1000, 2000, 3000])
        progress = schedule.normalized_progress(stop_sample=4000, dtype=torch.float32, device=dev)
        start, end = torch.tensor([[1.0, 2.0, 1.5]], device=dev), torch.tensor([[4.0, 3.0, 1.5]], device=dev)
        src_traj = linear_trajectory(start, end, progress=progress)
        mic_traj = mics.positions.unsqueeze(0).expand(len(schedule.starts), -1, -1).clone()
        scene = DynamicScene(room=room, sources=src, mics=mics, src_traj=src_traj, mic_traj=mic_traj,
                             schedule=schedule)
        result = simulate(scene, SimulationConfig(max_order=4, tmax=0.15))
        signal = torch.randn(1, 4000, device=dev)
        out = {}
        for n in (4000, 3500):
            out[n] = tuple(DynamicConvolver(time_reference="emission").convolve(signal[:, :n], result).shape)
        print(f"dynamic: rirs {tuple(result.rirs.shape)}, {out}")

    def fit():
        room = Room.shoebox([5.0, 4.0, 3.0], fs=fs, beta=[0.8] * 6, device=dev)
        mics = MicrophoneArray.from_positions(circular_array([2.5, 2.0, 1.5], num=4, radius=0.2, device=dev),
                                              device=dev)
        cfg = SimulationConfig(max_order=3, tmax=0.05)
        target = simulate(StaticScene(room=room, sources=Source.from_positions([[1.2, 1.1, 1.4]], device=dev),
                                      mics=mics), cfg).rirs
        pos = torch.tensor([[1.5, 1.5, 1.5]], device=dev, requires_grad=True)
        opt = torch.optim.Adam([pos], lr=0.02)
        for _ in range(6):
            rirs = simulate(StaticScene(room=room, sources=Source(positions=pos), mics=mics), cfg).rirs
            loss = (rirs.abs().cumsum(-1) - target.abs().cumsum(-1)).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"fit: loss {loss.item():.5f}, position {pos.detach().tolist()}")
    def options():
        from torchrir.config import RIRHighPassConfig
        from torchrir.io import build_result_metadata
        res = {}
        room = Room.shoebox([4.0, 3.5, 2.8], fs=fs, beta=[0.7, 0.8, 0.9, 0.75, 0.6, 0.85], device=dev)
        scene = StaticScene(room=room, sources=Source.from_positions([[1.0, 1.2, 1.4], [3.0, 2.5, 1.0]], device=dev),
                            mics=MicrophoneArray.from_positions(linear_array([2.0, 1.75, 1.4], num=3, spacing=0.1,
                                                                             device=dev), device=dev))
        for family, phase in (("butter", "zero_phase"), ("cheby1", "causal"), ("bessel", "zero_phase")):
            cfg = SimulationConfig(max_order=3, tmax=0.08, high_pass=RIRHighPassConfig(cutoff_hz=40.0,
                                                                                          filter_family=family,
                                                                                          phase=phase))
            res[family] = round(simulate(scene, cfg).rirs.abs().sum().item(), 4)
        result = simulate(scene, SimulationConfig(nb_img=(3, 3, 2), nsample=600))
        meta = build_result_metadata(result)
        flat = Room.shoebox([5.0, 4.0], fs=fs, beta=[0.9] * 4, device=dev)
        scene2 = StaticScene(room=flat, sources=Source.from_positions([[1.0, 1.0], [4.0, 3.0]], device=dev),
                             mics=MicrophoneArray.from_positions([[2.5, 2.0], [2.6, 2.1]], device=dev))
        r2 = simulate(scene2, SimulationConfig(max_order=8, tmax=0.1, tdiff=0.06, seed=1)).rirs
        print(f"options: {res}, nb_img {tuple(result.rirs.shape)}, metadata {sorted(meta)[:5]}, 2d {tuple(r2.shape)}")
    return {"static": static, "dynamic": dynamic, "fit": fit, "options": options}


# -- torchsvm: the README's recipe on the device: `data_gen`, `standardize`, `sigest`, `rbf_kernel` / `kernelMult`,
#    `cvksvm(Kmat=, y=, nlam=, ulam=, nfolds=, eps=, maxit=, gamma=, is_exact=, device=)`, `fit()`, `cv(pred, y)`
#    and the test error of the best lambda; the other large-margin solvers it exports with the same signature
#    (`cvklogit`, `cvkdwd`, `cvksqsvm`, `cvkhuber`), and `PlattScalerTorch` on the decision values ------------------

def torchsvm_fit(dev):
    from torchsvm.cvksvm import cvksvm
    from torchsvm.functions import data_gen, kernelMult, rbf_kernel, sigest, standardize

    def data(n=400):
        torch.manual_seed(42)
        x, y, _ = data_gen(n, 3, 6, 3, 3, 2.0, 3, 42)
        xt, yt, _ = data_gen(n // 4, 3, 6, 3, 3, 2.0, 3, 43)
        x, xt = standardize(x), standardize(xt)
        sig = sigest(x)
        return x, y, xt, yt, sig

    def svm():
        x, y, xt, yt, sig = data()
        kmat = rbf_kernel(x, sig).double()
        nlam = 6
        ulam = torch.logspace(2, -2, steps=nlam)
        model = cvksvm(Kmat=kmat, y=y, nlam=nlam, ulam=ulam, nfolds=4, eps=1e-5, maxit=150, gamma=1e-8, is_exact=0,
                       device=str(dev))
        model.fit()
        cv_mis = model.cv(model.pred, y)
        best = int(torch.as_tensor(cv_mis).argmin())
        alpmat = model.alpmat.to("cpu")
        knew = kernelMult(xt, x, sig).double()
        dec = torch.mv(knew, alpmat[1:, best].double()) + alpmat[0, best]
        err = (torch.sign(dec) != yt.double()).double().mean().item()
        print(f"svm: best lambda {best}, test error {err:.3f}")
        from torchsvm.platt import PlattScalerTorch
        train_dec = torch.mv(kmat, alpmat[1:, best].double()) + alpmat[0, best]
        platt = PlattScalerTorch(device=str(dev))
        try:
            platt.fit(train_dec.to(dev), y.to(dev))
            probs = platt.predict_proba(dec.to(dev)) if hasattr(platt, "predict_proba") else platt(dec.to(dev))
            print(f"platt: {type(probs).__name__}")
        except (TypeError, AttributeError) as e:
            print(f"platt: {e}")

    def others():
        import torchsvm.cvkdwd
        import torchsvm.cvkhuber
        import torchsvm.cvklogit
        import torchsvm.cvksqsvm
        x, y, _, _, sig = data(240)
        kmat = rbf_kernel(x, sig).double()
        nlam = 5
        ulam = torch.logspace(1, -2, steps=nlam)
        foldid = torch.arange(len(y)) % 3 + 1
        res = {}
        for name, fn, pre in (("logit", torchsvm.cvklogit.cvklogit, ()), ("dwd", torchsvm.cvkdwd.cvkdwd, ()),
                              ("sqsvm", torchsvm.cvksqsvm.cvksqsvm, ()), ("huber", torchsvm.cvkhuber.cvkhuber, (0.5,))):
            model = fn(*pre, Kmat=kmat, y=y, nlam=nlam, ulam=ulam, foldid=foldid, nfolds=3, eps=1e-5, maxit=100,
                       gamma=1e-8, device=str(dev))
            model.fit()
            res[name] = tuple(model.alpmat.shape)
        print(f"others: {res}")
    def nystrom():
        from torchsvm.cvknyssvm import cvknyssvm
        x, y, xt, _, sig = data(200)
        ulam = torch.logspace(1, -2, steps=4)
        foldid = torch.arange(len(y)) % 3 + 1
        nys = cvknyssvm(Xmat=x, X_test=xt, y=y, nlam=4, ulam=ulam, foldid=foldid, nfolds=3, eps=1e-5, maxit=100,
                        gamma=1e-8, num_landmarks=64, k=32, device=str(dev))
        nys.fit()
        print(f"nystrom: {tuple(nys.alpmat.shape) if hasattr(nys, 'alpmat') else type(nys).__name__}")
    return {"svm": svm, "others": others, "nystrom": nystrom}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

class _tensorboard_stub:
    """torch.utils.tensorboard (its `SummaryWriter`, which both scripts import and write to) answered by a stub
    whose methods do nothing, so that neither script needs the tensorboard package nor writes event files."""

    def __enter__(self):
        class SummaryWriter:
            def __init__(self, *a, **k):
                pass

            def __getattr__(self, name):
                return lambda *a, **k: None

        stub = types.ModuleType("torch.utils.tensorboard")
        stub.SummaryWriter = SummaryWriter
        self.saved = sys.modules.get("torch.utils.tensorboard")
        sys.modules["torch.utils.tensorboard"] = stub
        return self

    def __exit__(self, *exc):
        if self.saved is None:
            sys.modules.pop("torch.utils.tensorboard", None)
        else:
            sys.modules["torch.utils.tensorboard"] = self.saved


def gat_cora(dev):
    """gordicaleksa/pytorch-GAT's training_script_cora.py as is (`--num_of_epochs 60 --should_test
    --console_log_freq 5 --checkpoint_freq 10`: its GAT, implementation 3, on the Cora graph it ships in data/cora,
    on the GPU when there is one, as the script decides), from a copy of the repository (it saves checkpoints under
    models/; `igraph`, which its plotting module imports, is answered by an empty module when absent, and GitPython's
    `git.Repo(...).head.object.hexsha`, which its checkpoints record, by a stub giving the pinned commit;
    `numpy.row_stack`, an alias of `vstack` that its data loading calls and numpy 2.5 dropped, is restored as that
    alias where absent). The
    window spans the 2nd to the 40th `backward`: training epochs, each with its validation pass,
    accuracy, early-stopping bookkeeping, console logs and checkpoints."""
    root = _need_repo("gat")

    def window():
        (root / "models" / "checkpoints").mkdir(parents=True, exist_ok=True)
        (root / "models" / "binaries").mkdir(parents=True, exist_ok=True)
        saved = sys.modules.get("igraph"), sys.modules.get("git")
        if saved[0] is None:  # imported by its utils/visualizations.py only for plots, which stay off
            sys.modules["igraph"] = types.ModuleType("igraph")
        gitstub = types.ModuleType("git")  # GitPython: its checkpoints record the code's commit hash
        gitstub.Repo = lambda *a, **k: types.SimpleNamespace(
            head=types.SimpleNamespace(object=types.SimpleNamespace(hexsha=REPOS["gat"][1])))
        sys.modules["git"] = gitstub
        import numpy as np
        alias = not hasattr(np, "row_stack")
        if alias:  # `row_stack`, the alias of `vstack` its data loading calls, is gone from numpy 2.5
            np.row_stack = np.vstack
        try:
            with _tensorboard_stub(), hc.window_on(torch.Tensor, "backward", "gat.cora", "train", dev, 2, 40,
                                                   stop_script=True):
                hc.run_script(root / "training_script_cora.py",
                              ["--num_of_epochs", "60", "--should_test", "--console_log_freq", "5",
                               "--checkpoint_freq", "10"], str(root))
        finally:
            if alias:
                del np.row_stack
            for name, mod in zip(("igraph", "git"), saved):
                if mod is None:
                    sys.modules.pop(name, None)
                else:
                    sys.modules[name] = mod
    return {"train_window": window}


MODELS = [
    # name, package, builder
    ("pyqtorch.circuits", "pyqtorch", pyqtorch_circuits),
    ("pytorch3dunet.seg", "pytorch3dunet", unet3d_seg),
    ("scoringrules.scores", "scoringrules", scoringrules_scores),
    ("tad_dftd3.disp", "tad_dftd3", dftd3_disp),
    ("torchcvnn.nets", "torchcvnn", torchcvnn_nets),
    ("torchdistill.kd", "torchdistill", torchdistill_kd),
    ("torchrir.sim", "torchrir", torchrir_sim),
    ("torchsvm.fit", "torchsvm", torchsvm_fit),
    ("gat.cora", "gat", gat_cora),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh29", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
