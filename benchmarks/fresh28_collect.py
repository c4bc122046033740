"""Record the syncs of a twenty-ninth set, `fresh28` (a sealed test set): libraries and training code nobody here read.

`fresh28` is recorded the same way as `fresh9` to `fresh27` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; deepod's detectors and deeptime's `VAMPNet` /
`TAE` take `device=`; fdtd's grids live on the
device of the backend chosen by its documented `fdtd.set_backend("torch.cuda.float32")`): no workload runs under a
default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh28), names a to l: deepod (DeepOD: deep
  tabular anomaly detectors), cola (cola-ml, CoLA: compositional linear operators and iterative linear algebra),
  fdtd (a 3D electromagnetic FDTD simulator with a PyTorch backend), audio_diffusion_pytorch
  (audio-diffusion-pytorch: 1-D U-Net diffusion models, upsampler and vocoder), dasp_pytorch (dasp-pytorch:
  differentiable audio signal processors) and deeptime (VAMPNets, a time-lagged autoencoder and their scores); +
  a_unet (audio-diffusion-pytorch's U-Net), cola_plum_dispatch, beartype and optree (CoLA's dispatch and pytrees),
  fire and termcolor (efficient_densenet's command line). Their other needs (numpy, scipy, scikit-learn, pandas,
  matplotlib, tqdm, einops, threadpoolctl, torchaudio, torchvision) are on the GPU machine. Two more libraries were
  removed after the GPU calls: evox (EvoX: its algorithms mix host and device tensors unless torch's default device
  is set, which these workloads never do) and lassonet (its regularisation path outran the per-workload limit on the
  GPU); and five modes: deepod's time-series detectors (`np.NAN`, gone from numpy 2), deeptime's `TVAE` (no
  `device=`), cola's `solve` / `inv` and its matrix functions (device mismatches inside the library in their GPU
  warm-up) and, for time, lassonet's cross-validation (docs/accuracy.md says more).
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh28/repos/<name>:
  gpleiss/efficient_densenet_pytorch (demo.py as is: a DenseNet-BC on CIFAR-10, memory-efficient and naive) and
  tysam-code/hlb-CIFAR10 (main.py as is: its speed-run ResNet-like net on CIFAR-10, GPU only), both on synthetic
  images in CIFAR-10's python layout. First choices left out before any workload was written, on reading what
  running them needs: kekmodel/FixMatch-pytorch (its loader's `.next()` is gone from the current torch),
  bearpaw/pytorch-classification, andreasveit/densenet-pytorch and peterliht/knowledge-distillation-pytorch
  (`.cuda(async=True)`, a syntax error since Python 3.7), KellerJordan/cifar10-airbench (max-autotune compilation).

    python benchmarks/fresh28_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh28_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh28 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh28 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import inspect
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
BENCH_DIR = ac.REPO / ".bench" / "fresh28"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh28", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh28/repos/<name>)
REPOS = {
    "efficient_densenet": ("gpleiss/efficient_densenet_pytorch", "d2d0629dae2912ec4f0444fab5e3df4c375c44fd",
                           ["demo.py", "models"]),
    "hlb_cifar10": ("tysam-code/hlb-CIFAR10", "993965202fc4dc05b699a39db33c00f1c7f647fd", ["main.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["deepod==0.4.1", "cola-ml==0.0.7", "cola-plum-dispatch==0.1.4", "beartype==0.23.1",
          "fdtd==0.3.5", "audio-diffusion-pytorch==0.1.3", "a-unet==0.0.16", "dasp-pytorch==0.0.1",
          "deeptime==0.4.5", "fire==0.7.1", "termcolor==3.3.0", "optree==0.20.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"deepod": "deepod", "cola_ml": "cola-ml", "fdtd": "fdtd",
         "audio_diffusion_pytorch": "audio-diffusion-pytorch", "a_unet": "a-unet",
         "dasp_pytorch": "dasp-pytorch", "deeptime": "deeptime", "numpy": "numpy", "scipy": "scipy",
         "scikit_learn": "scikit-learn", "torchaudio": "torchaudio", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh28/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh28_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _classes(n, d=20, k=4, seed=0):
    """n points of k Gaussian classes in d dimensions (CPU tensors): features, labels."""
    g = torch.Generator().manual_seed(seed)
    centres = 2.0 * torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    return centres[y] + torch.randn(n, d, generator=g), y


def _kwargs(cls, **kw):
    """The keyword arguments among `kw` that `cls`'s signature names (the detectors' signatures differ)."""
    names = inspect.signature(cls.__init__).parameters
    return {k: v for k, v in kw.items() if k in names}


def _guarded(modes: dict) -> dict:
    """Each mode run with gradients enabled and torch's own default dtype (float32), the caller's restored after: a
    library that leaves grad mode off or changes the default dtype (seen in the CPU smoke run) must not change the
    next workload."""
    def wrap(fn):
        def run():
            dtype = torch.get_default_dtype()
            torch.set_default_dtype(torch.float32)
            try:
                with torch.enable_grad():
                    fn()
            finally:
                torch.set_default_dtype(dtype)
        return run
    return {k: wrap(v) for k, v in modes.items()}


# ============================================================================================
# Libraries
# ============================================================================================

# -- deepod (DeepOD): the README's detectors, `Detector(..., device=)`, `fit(X_train)` (or `fit(X, y=semi_y)` for
#    the weakly-supervised ones) and `decision_function(X_test)`, with `tabular_metrics`, on synthetic tabular data
#    with planted anomalies ---------------------------------------------------------------------------------------

def deepod_detect(dev):
    import numpy as np

    def tabular(n=400, d=12, seed=0):
        rng = np.random.default_rng(seed)
        x = rng.standard_normal((n, d)).astype(np.float32)
        y = np.zeros(n, dtype=int)
        idx = rng.choice(n, n // 20, replace=False)
        x[idx] += rng.choice([-4.0, 4.0], (len(idx), d)).astype(np.float32) * (rng.random((len(idx), d)) < 0.3)
        y[idx] = 1
        return x, y

    def run_tab(names, weak=False):
        def run():
            from deepod.metrics import tabular_metrics
            from deepod.models import tabular as T
            x, y = tabular()
            res = {}
            for name in names:
                cls = getattr(T, name)
                clf = cls(**_kwargs(cls, epochs=1, batch_size=64, device=str(dev), verbose=0, random_state=0,
                                    n_ensemble=4, n_estimators=4))
                if weak:
                    semi = np.where((y == 1) & (np.arange(len(y)) % 3 == 0), 1, 0)
                    clf.fit(x[:300], y=semi[:300])
                else:
                    clf.fit(x[:300], y=None)
                scores = clf.decision_function(x[300:])
                res[name] = tuple(round(float(v), 3) for v in tabular_metrics(y[300:], scores))
            print(f"tabular: {res}")
        return run

    return _guarded({"unsup_a": run_tab(["DeepSVDD", "RCA", "RDP", "ICL"]),
            "unsup_b": run_tab(["NeuTraL", "GOAD", "SLAD", "DeepIsolationForest"]),
            "weak": run_tab(["DevNet", "DeepSAD", "PReNet", "FeaWAD", "RoSAS"], weak=True)})


# -- cola (cola-ml): the README's linear operators on device tensors (`cola.ops.Dense`, the `cola.SelfAdjoint` /
#    `cola.PSD` annotations) and its linear algebra with named algorithms: `eig` / `eigmax` by Lanczos, `Eigh`,
#    Arnoldi and power iteration; and a GP's marginal likelihood fitted by gradient descent through `solve` (CG,
#    Cholesky) and `logdet`. (Its `solve` / `inv` by CG, GMRES, Cholesky on dense and Kronecker operators, and
#    `trace` / `diag` by Hutchinson, `logdet` by Lanczos, `sqrt`, `exp`, failed in their GPU warm-up: removed) -----

def cola_linalg(dev):
    import cola

    def spd(n, seed=0):
        g = torch.Generator().manual_seed(seed)
        a = torch.randn(n, n, generator=g) / math.sqrt(n)
        return (a @ a.T + 0.5 * torch.eye(n)).to(dev)

    def eigen():
        A = cola.SelfAdjoint(cola.ops.Dense(spd(80, 3)))
        for name, alg in (("lanczos", cola.Lanczos(max_iters=40)), ("eigh", cola.Eigh())):
            vals, vecs = cola.eig(A, k=5, which="LM", alg=alg)
            print(f"eig {name}: {torch.as_tensor(vals).real[:3].tolist()}")
        N = cola.ops.Dense(torch.randn(80, 80, device=dev) / 9)
        vals, _ = cola.eig(N, k=4, which="LM", alg=cola.Arnoldi(max_iters=20))
        print(f"arnoldi: {len(vals)}, eigmax {float(cola.eigmax(A, alg=cola.PowerIteration(max_iter=60))):.3f}")

    def gp():
        g = torch.Generator().manual_seed(6)
        x = torch.linspace(-3, 3, 100).unsqueeze(1)
        y = (torch.sin(2 * x[:, 0]) + 0.1 * torch.randn(100, generator=g)).to(dev)
        x = x.to(dev)
        log_ls = torch.zeros((), device=dev, requires_grad=True)
        log_noise = torch.tensor(-1.0, device=dev, requires_grad=True)
        opt = torch.optim.Adam([log_ls, log_noise], lr=0.05)
        for step in range(12):
            k = torch.exp(-0.5 * torch.cdist(x, x).square() / log_ls.exp().square())
            K = cola.PSD(cola.ops.Dense(k + log_noise.exp() * torch.eye(len(x), device=dev)))
            alg = cola.CG(tol=1e-5, max_iters=200) if step % 2 else cola.Cholesky()
            alpha = cola.solve(K, y, alg=alg)
            nll = 0.5 * (y @ alpha) + 0.5 * cola.logdet(K, cola.Cholesky(), cola.Exact())
            opt.zero_grad()
            nll.backward()
            opt.step()
        print(f"gp: nll {nll.item():.3f}, lengthscale {log_ls.exp().item():.3f}, noise {log_noise.exp().item():.4f}")
    return _guarded({"eigen": eigen, "gp": gp})


# -- fdtd: the README's grid on the torch backend of the device (`fdtd.set_backend("torch.cuda.float32")`, the
#    numpy backend restored after): a 2-D grid with PML boundaries, an `Object` of higher permittivity, a
#    `LineSource` and `PointSource` (continuous and pulsed), `LineDetector` / `BlockDetector` read after
#    `grid.run(total_time=)`; a 3-D grid with a `PlaneSource`, an `AbsorbingObject`, periodic boundaries ----------

def fdtd_simulate(dev):
    import fdtd

    backend = "torch.cuda.float32" if dev.type == "cuda" else "torch.float32"

    def with_backend(fn):
        def run():  # the backend's global state (and torch's grad mode and default dtype) restored after
            grad, dtype = torch.is_grad_enabled(), torch.get_default_dtype()
            fdtd.set_backend(backend)
            try:
                fn()
            finally:
                fdtd.set_backend("numpy")
                torch.set_grad_enabled(grad)
                torch.set_default_dtype(dtype)
        return run

    def two_d():
        grid = fdtd.Grid(shape=(25e-6, 15e-6, 1), grid_spacing=155e-9, permittivity=1.0)
        grid[0:10, :, :] = fdtd.PML(name="pml_xlow")
        grid[-10:, :, :] = fdtd.PML(name="pml_xhigh")
        grid[:, 0:10, :] = fdtd.PML(name="pml_ylow")
        grid[:, -10:, :] = fdtd.PML(name="pml_yhigh")
        grid[7.5e-6:8.0e-6, 11.8e-6:13.0e-6, 0] = fdtd.LineSource(period=1550e-9 / (3e8), name="linesource")
        grid[60, 30, 0] = fdtd.PointSource(period=20, name="pointsource", pulse=True, cycle=3, hanning_dt=4.0)
        grid[11:32, 30:84, 0] = fdtd.Object(permittivity=1.7 ** 2, name="object")
        grid[12e-6, :, 0] = fdtd.LineDetector(name="detector")
        grid.run(total_time=120, progress_bar=False)
        e = grid.detector.detector_values()["E"] if hasattr(grid.detector, "detector_values") else grid.detector.E
        print(f"2d: {grid}, detector {len(e)} steps, E max {float(torch.as_tensor(grid.E).abs().max()):.4f}")

    def three_d():
        grid = fdtd.Grid(shape=(40, 40, 30), grid_spacing=100e-9)
        grid[0, :, :] = fdtd.PeriodicBoundary(name="xbounds")
        grid[:, 0, :] = fdtd.PeriodicBoundary(name="ybounds")
        grid[:, :, 0:6] = fdtd.PML(name="pml_zlow")
        grid[:, :, -6:] = fdtd.PML(name="pml_zhigh")
        grid[:, :, 8] = fdtd.PlaneSource(period=30, name="plane", polarization="x")
        grid[10:30, 10:30, 14:18] = fdtd.AbsorbingObject(permittivity=2.5, conductivity=1e6, name="absorber")
        grid[:, 20, 22] = fdtd.LineDetector(name="line")
        grid.run(total_time=60, progress_bar=False)
        print(f"3d: E energy {float((torch.as_tensor(grid.E) ** 2).sum()):.4e}, "
              f"H {float(torch.as_tensor(grid.H).abs().max()):.4e}")
    return _guarded({"two_d": with_backend(two_d), "three_d": with_backend(three_d)})


# -- audio_diffusion_pytorch (audio-diffusion-pytorch): the README's `DiffusionModel(net_t=UNetV0, ...,
#    diffusion_t=VDiffusion, sampler_t=VSampler)` moved to the device, trained a few steps (`loss = model(audio)`)
#    and sampled (`model.sample(noise, num_steps=)`); the `DiffusionUpsampler` and `DiffusionVocoder` recipes -----

def audio_diffusion(dev):
    from audio_diffusion_pytorch import (
        DiffusionModel,
        DiffusionUpsampler,
        DiffusionVocoder,
        UNetV0,
        VDiffusion,
        VSampler,
    )

    unet = dict(channels=[8, 16, 32], factors=[1, 4, 4], items=[1, 1, 1], attentions=[0, 0, 1], attention_heads=2,
                attention_features=16)

    def audio(batch=2, length=2 ** 12, channels=1, seed=0):
        g = torch.Generator().manual_seed(seed)
        t = torch.arange(length) / 8000
        f = 200 + 400 * torch.rand(batch, channels, 1, generator=g)
        return (torch.sin(2 * math.pi * f * t) + 0.05 * torch.randn(batch, channels, length, generator=g)).to(dev)

    def train(model, make, steps=6):
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
        for _ in range(steps):
            loss = make()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss.item()

    def unconditional():
        torch.manual_seed(0)
        model = DiffusionModel(net_t=UNetV0, in_channels=1, diffusion_t=VDiffusion, sampler_t=VSampler,
                               **unet).to(dev)
        x = audio()
        loss = train(model, lambda: model(x))
        noise = torch.randn(1, 1, 2 ** 12, device=dev)
        sample = model.sample(noise, num_steps=10)
        print(f"unconditional: loss {loss:.4f}, sample {tuple(sample.shape)} {sample.abs().mean().item():.3f}")

    def upsampler():
        torch.manual_seed(0)
        model = DiffusionUpsampler(net_t=UNetV0, upsample_factor=4, in_channels=1, **unet).to(dev)
        x = audio(seed=1)
        loss = train(model, lambda: model(x))
        low = x[:, :, ::4]
        up = model.sample(low, num_steps=8)
        print(f"upsampler: loss {loss:.4f}, {tuple(low.shape)} -> {tuple(up.shape)}")

    def vocoder():
        torch.manual_seed(0)
        model = DiffusionVocoder(net_t=UNetV0, mel_channels=32, mel_n_fft=256, mel_sample_rate=16000, in_channels=1,
                                 channels=[32, 32, 32], factors=[1, 2, 2], items=[1, 1, 1]).to(dev)
        x = audio(seed=2)
        loss = train(model, lambda: model(x), steps=4)
        spec = model.to_spectrogram(x) if hasattr(model, "to_spectrogram") else None
        if spec is not None:
            wave = model.sample(spec, num_steps=6)
            print(f"vocoder: loss {loss:.4f}, mel {tuple(spec.shape)} -> {tuple(wave.shape)}")
        else:
            print(f"vocoder: loss {loss:.4f}")
    return _guarded({"unconditional": unconditional, "upsampler": upsampler, "vocoder": vocoder})


# -- dasp_pytorch (dasp-pytorch): the README's quickstart (a distortion's drive estimated by gradient descent through
#    `dasp_pytorch.functional.distortion`), and the same for the functional `gain` and `stereo_widener` /
#    `stereo_panner`; the processor modules (`ParametricEQ`, `Compressor`, `Gain`) with `process_normalized(x,
#    params)` trained by a small parameter estimator --------------------------------------------------------------

def dasp_fx(dev):
    import dasp_pytorch
    from dasp_pytorch import functional as dfx

    sr = 16000

    def audio(batch=2, channels=1, length=8192, seed=0):
        g = torch.Generator().manual_seed(seed)
        t = torch.arange(length) / sr
        x = sum(torch.sin(2 * math.pi * f * t) / (i + 1) for i, f in enumerate((110, 220, 440, 880)))
        env = torch.exp(-t * 3)
        return (0.5 * x * env + 0.02 * torch.randn(batch, channels, length, generator=g)).to(dev)

    def fit(fn, params, target, steps=25, lr=0.05):
        opt = torch.optim.Adam(params, lr=lr)
        for _ in range(steps):
            loss = F.mse_loss(fn(), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss.item()

    def estimate():
        x = audio()
        y = dfx.distortion(x, sr, torch.tensor([16.0, 16.0], device=dev))
        drive = nn.Parameter(torch.zeros(2, device=dev))
        loss = fit(lambda: dfx.distortion(x, sr, drive), [drive], y, lr=0.5)
        gain_db = nn.Parameter(torch.zeros(2, device=dev))
        loss2 = fit(lambda: dfx.gain(x, sr, gain_db), [gain_db], dfx.gain(x, sr, torch.full((2,), -6.0, device=dev)),
                    lr=0.5)
        print(f"estimate: drive {drive.tolist()}, loss {loss:.4f}; gain {gain_db.tolist()}, {loss2:.4f}")

    def eq_dynamics():
        x = audio(seed=1)
        res = {}
        for cls in (dasp_pytorch.ParametricEQ, dasp_pytorch.Compressor, dasp_pytorch.Gain):
            proc = cls(**_kwargs(cls, sample_rate=sr))
            n = getattr(proc, "num_params", None) or len(proc.param_ranges)
            target = proc.process_normalized(x, torch.rand(2, n, device=dev))
            est = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, n), nn.Sigmoid()).to(dev)
            feats = F.avg_pool1d(target.abs(), target.shape[-1] // 64)[:, 0, :64]
            def apply(proc=proc, est=est, feats=feats):
                return proc.process_normalized(x, est(feats))
            res[cls.__name__] = round(fit(apply, est.parameters(), target, steps=10, lr=1e-2), 5)
        print(f"eq/dynamics: {res}")

    def stereo():
        x = audio(seed=2)  # mono: panned to stereo, then widened

        def chain(pan, width):
            return dfx.stereo_widener(dfx.stereo_panner(x, sr, pan).squeeze(2), sr, width)
        pan = nn.Parameter(torch.full((2,), 0.5, device=dev))
        width = nn.Parameter(torch.full((2, 1), 0.5, device=dev))
        target = chain(torch.tensor([0.3, 0.7], device=dev), torch.tensor([[0.8], [0.2]], device=dev))
        loss = fit(lambda: chain(pan, width), [pan, width], target, steps=15)
        print(f"stereo pan {pan.tolist()} width {width.tolist()} {loss:.5f}")
    return _guarded({"estimate": estimate, "eq_dynamics": eq_dynamics, "stereo": stereo})


# -- deeptime: its deep decompositions on a synthetic metastable trajectory: `VAMPNet(lobe=, device=, ...)`
#    `fit(loader, n_epochs=, validation_loader=)` on a `TrajectoryDataset(lagtime, data)`, `fetch_model()`,
#    `transform`; the functional `vamp_score` (VAMP1, VAMP2, VAMPE), `koopman_matrix`, `covariances`; the `TAE`
#    time-lagged autoencoder with `device=` -----------------------------------------------------------------------

def deeptime_deep(dev):
    import numpy as np
    from deeptime.util.data import TrajectoryDataset

    def trajectory(n=3000, seed=0):
        rng = np.random.default_rng(seed)
        state, xs = 0, []
        centres = np.array([[-2.0, 0.0, 0.5], [2.0, 0.5, -0.5], [0.0, 2.5, 0.0]])
        for _ in range(n):
            if rng.random() < 0.01:
                state = rng.integers(0, 3)
            xs.append(centres[state] + 0.4 * rng.standard_normal(3))
        return np.asarray(xs, dtype=np.float32)

    def loaders(lag=5):
        data = trajectory()
        ds = TrajectoryDataset(lag, data)
        n_val = len(ds) // 5
        train, val = torch.utils.data.random_split(ds, [len(ds) - n_val, n_val],
                                                   generator=torch.Generator().manual_seed(0))
        return (data, torch.utils.data.DataLoader(train, batch_size=256, shuffle=True),
                torch.utils.data.DataLoader(val, batch_size=len(val)))

    def vampnet():
        from deeptime.decomposition.deep import VAMPNet
        data, train, val = loaders()
        res = {}
        for method in ("VAMP2", "VAMP1", "VAMPE"):
            torch.manual_seed(0)
            lobe = nn.Sequential(nn.Linear(3, 32), nn.ELU(), nn.Linear(32, 3), nn.Softmax(dim=1)).to(dev)
            net = VAMPNet(lobe=lobe, learning_rate=5e-3, device=dev, score_method=method)
            net.fit(train, n_epochs=3, validation_loader=val)
            model = net.fetch_model()
            proj = model.transform(data)
            res[method] = (np.asarray(proj).shape, round(float(np.asarray(proj).std()), 3))
        print(f"vampnet: {res}")

    def scores():
        from deeptime.decomposition.deep import covariances, koopman_matrix, vamp_score, vampnet_loss
        data = torch.as_tensor(trajectory(2000, 1)).to(dev)
        feats = torch.softmax(nn.Linear(3, 4).to(dev)(data), dim=1)
        x, y = feats[:-5], feats[5:]
        out = {}
        for method in ("VAMP1", "VAMP2", "VAMPE"):
            for mode in ("trunc", "regularize"):
                out[f"{method}/{mode}"] = round(float(vamp_score(x, y, method=method, mode=mode)), 4)
        k = koopman_matrix(x, y)
        c00, c0t, ctt = covariances(x, y, remove_mean=True)
        loss = vampnet_loss(x, y, method="VAMP2")
        print(f"scores: {out}, koopman {tuple(k.shape)}, c00 {float(c00.trace()):.3f}, loss {float(loss):.3f}")

    def autoencoders():
        from deeptime.decomposition.deep import TAE
        data, train, val = loaders(lag=3)
        torch.manual_seed(0)
        enc = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 1)).to(dev)
        dec = nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, 3)).to(dev)
        tae = TAE(enc, dec, learning_rate=1e-3, device=dev)
        tae.fit(train, n_epochs=3, validation_loader=val)
        z = tae.fetch_model().transform(data)
        print(f"tae {np.asarray(z).shape}")
    return _guarded({"vampnet": vampnet, "scores": scores, "autoencoders": autoencoders})


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _cifar10(root: Path, n_train: int, n_test: int, seed: int = 0) -> dict:
    """cifar-10-batches-py/{data_batch_1..5,test_batch,batches.meta} under root, in the python version's pickle
    layout, random images; their md5 sums (torchvision's CIFAR10 is told them, so its download finds them
    verified)."""
    import hashlib
    import pickle

    import numpy as np
    rng = np.random.default_rng(seed)
    folder = root / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    names = [(f"data_batch_{i}", n_train // 5) for i in range(1, 6)] + [("test_batch", n_test)]
    for name, n in names:
        labels = rng.integers(0, 10, n)
        data = np.clip(labels[:, None] * 25 + rng.integers(-40, 40, (n, 3072)), 0, 255).astype(np.uint8)
        (folder / name).write_bytes(pickle.dumps({"data": data, "labels": labels.tolist()}))
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": [f"c{i}" for i in range(10)]}))
    return {name: hashlib.md5((folder / name).read_bytes()).hexdigest() for name in
            [n for n, _ in names] + ["batches.meta"]}


def _cifar_script(dev, name: str, repo: str, script: str, argv: list, stop: int, data_dir: str, n_train: int,
                  n_test: int, cuda_only: bool = False):
    """A repository's training script as is on synthetic CIFAR-10 (`_cifar10` under a temporary folder's
    `data_dir`), run from that folder; torchvision's CIFAR10 is told the files' md5 sums. The window spans the 2nd
    to the `stop`-th `backward`."""
    root = _need_repo(repo)
    tmp = Path(hc._tmp())
    sums = _cifar10(tmp / data_dir, n_train, n_test)

    def window():
        if cuda_only and dev.type != "cuda":
            raise RuntimeError(f"{repo}'s {script} runs on cuda only")
        import torchvision
        cls = torchvision.datasets.CIFAR10
        saved = cls.train_list, cls.test_list, cls.meta
        cls.train_list = [[f"data_batch_{i}", sums[f"data_batch_{i}"]] for i in range(1, 6)]
        cls.test_list = [["test_batch", sums["test_batch"]]]
        cls.meta = {**cls.meta, "md5": sums["batches.meta"]}
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, stop, stop_script=True):
                hc.run_script(root / script, [a.replace("{tmp}", str(tmp)) for a in argv], str(tmp))
        finally:
            cls.train_list, cls.test_list, cls.meta = saved
    return {"train_window": window}


def densenet_efficient(dev):
    """gpleiss/efficient_densenet_pytorch's demo.py by its `fire` command line (`--depth 40 --efficient True
    --n_epochs 3 --batch_size 32 --valid_size 32`: a DenseNet-BC 40 with checkpointed, memory-efficient dense
    layers, SGD with Nesterov momentum, a step schedule, its meters, validation and a checkpoint per epoch; the GPU
    when there is one, as the script decides) on 160 synthetic training images (four steps an epoch); window 2nd to
    9th `backward`, the first epoch's validation pass included."""
    return _cifar_script(dev, "efficient_densenet.efficient", "efficient_densenet", "demo.py",
                         ["--data", "{tmp}/data", "--save", "{tmp}/save", "--depth", "40", "--efficient", "True",
                          "--n_epochs", "3", "--batch_size", "32", "--valid_size", "32", "--seed", "0"], 9,
                         "data", 160, 64)


def densenet_naive(dev):
    """The same demo.py with its naive DenseNet (`--efficient False --depth 28`); window 2nd to 9th `backward`."""
    return _cifar_script(dev, "efficient_densenet.naive", "efficient_densenet", "demo.py",
                         ["--data", "{tmp}/data", "--save", "{tmp}/save", "--depth", "28", "--efficient", "False",
                          "--n_epochs", "3", "--batch_size", "32", "--valid_size", "32", "--seed", "1"], 9,
                         "data", 160, 64)


def hlb_train(dev):
    """tysam-code/hlb-CIFAR10's main.py as is (no arguments: its hyperparameters in the file, batch size 1024, the
    whole data set on the GPU in half precision, whitening conv initialised from the data, two SGD optimisers with
    one-cycle schedules, cutmix and its evaluation passes; GPU only: its device is 'cuda') on 8192 synthetic
    training and 2500 test images in './cifar10/' (about seven steps an epoch: with four, its EMA net was still
    unmade when its third epoch's evaluation called it); window 2nd to 10th `backward`, the first epoch's evaluation
    included."""
    return _cifar_script(dev, "hlb_cifar10.train", "hlb_cifar10", "main.py", [], 10, "cifar10", 8192, 2500,
                         cuda_only=True)


MODELS = [
    # name, package, builder (the slowest last: the budget stops starting workloads, not running ones)
    ("efficient_densenet.efficient", "efficient_densenet", densenet_efficient),
    ("efficient_densenet.naive", "efficient_densenet", densenet_naive),
    ("hlb_cifar10.train", "hlb_cifar10", hlb_train),
    ("dasp_pytorch.fx", "dasp_pytorch", dasp_fx),
    ("deeptime.deep", "deeptime", deeptime_deep),
    ("cola.linalg", "cola", cola_linalg),
    ("fdtd.simulate", "fdtd", fdtd_simulate),
    ("audio_diffusion_pytorch.diffuse", "audio_diffusion_pytorch", audio_diffusion),
    ("deepod.detect", "deepod", deepod_detect),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh28", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
