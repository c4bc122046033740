"""Record the syncs of a twenty-eighth set, `fresh27` (a sealed test set): libraries and training code nobody here read.

`fresh27` is recorded the same way as `fresh9` to `fresh25` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; minibatch-kmeans' `MiniBatchKMeans(device=)`,
torch-tps' `ThinPlateSpline(device=)` and tgmm's `GaussianMixture(device=)` build their tensors on the device they
are given): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh27), all of them pure Python, names m to z:
  minibatch_kmeans (minibatch-kmeans: Sculley's mini-batch k-means on tensors), ncg_optimizer (ncg-optimizer:
  linear and nonlinear conjugate-gradient optimizers with Armijo / strong-Wolfe line searches), tgmm (Gaussian,
  Student-t and von Mises-Fisher mixtures by EM, their model selection and clustering metrics), interpol
  (torch-interpol: high-order spline interpolation, `grid_pull` / `grid_push` / `grid_grad` / `spline_coeff_nd` /
  `resize`), torch_cubic_spline_grids (torch-cubic-spline-grids: learnable B-spline and Catmull-Rom grids),
  torch_dxdt (torch-dxdt: differentiable numerical derivatives of noisy series), torch_incremental_pca
  (torch-incremental-pca) and torch_tps (torch-tps: thin-plate / polyharmonic splines). Their needs (numpy, scipy,
  scikit-learn, matplotlib, seaborn, tqdm, einops, typing-extensions, torchvision) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh27/repos/<name>:
  xternalz/WideResNet-pytorch (train.py as is: a WideResNet on CIFAR-10, `tensorboard_logger` answered by a stub
  since `--tensorboard` is off; GPU only, it puts its model on cuda unconditionally) and
  meliketoy/wide-resnet.pytorch (main.py as is: its WideResNet on CIFAR-10 by its config.py), both on synthetic
  images in CIFAR-10's python layout. A first choice, clovaai/CutMix-PyTorch, was left out after the CPU smoke run:
  its `accuracy` calls `view` on a non-contiguous tensor, which fails under the current torch.

    python benchmarks/fresh27_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh27_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh27 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh27 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh27"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh27", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh27/repos/<name>)
REPOS = {
    "wideresnet": ("xternalz/WideResNet-pytorch", "1171f93d5a9ae28eb5e603e5e7545f488d0df6ab",
                   ["train.py", "wideresnet.py"]),
    "wide_resnet": ("meliketoy/wide-resnet.pytorch", "292b3ede0651e349dd566f9c23408aa572f1bd92",
                    ["main.py", "config.py", "networks"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["minibatch-kmeans==0.1.2", "ncg-optimizer==0.2.2", "tgmm==0.4.3", "torch-interpol==0.3.0",
          "torch-cubic-spline-grids==0.6.0", "torch-dxdt==0.1.1", "torch-incremental-pca==0.1.0", "torch-tps==1.2.2"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"minibatch_kmeans": "minibatch-kmeans", "ncg_optimizer": "ncg-optimizer", "tgmm": "tgmm",
         "torch_interpol": "torch-interpol", "torch_cubic_spline_grids": "torch-cubic-spline-grids",
         "torch_dxdt": "torch-dxdt", "torch_incremental_pca": "torch-incremental-pca", "torch_tps": "torch-tps",
         "numpy": "numpy", "scipy": "scipy", "scikit_learn": "scikit-learn", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh27/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh27_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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

# -- minibatch_kmeans (minibatch-kmeans): the README's recipes on the device, `MiniBatchKMeans(n_clusters=,
#    device=, random_state=)`: `fit(X, batch_size=, max_iter=)` then `predict`, `fit_predict`, streaming
#    `partial_fit` over batches, and `save` / `load(..., device=)` -----------------------------------------------

def kmeans_cluster(dev):
    from minibatch_kmeans import MiniBatchKMeans

    def fit():
        x, _ = _classes(4000, d=8, k=6, seed=1)
        x = x.to(dev)
        for k in (4, 6, 10):
            km = MiniBatchKMeans(n_clusters=k, device=dev, random_state=torch.Generator().manual_seed(k))
            km.fit(x, batch_size=256, max_iter=20)
            labels = km.predict(x)
            both = km.fit_predict(x, batch_size=512)
            print(f"kmeans {k}: {torch.bincount(labels, minlength=k).tolist()}, {both.shape}, "
                  f"{km.cluster_centers.shape}")

    def stream():
        x, _ = _classes(3000, d=5, k=4, seed=2)
        x = x.to(dev)
        km = MiniBatchKMeans(n_clusters=4, device=dev)
        for _ in range(2):
            for batch in x.split(200):
                km.partial_fit(batch)
        path = os.path.join(hc._tmp(), "kmeans.pt")
        km.save(path)
        km2 = MiniBatchKMeans.load(path, device=dev)
        same = torch.equal(km.predict(x), km2.predict(x))
        print(f"stream: centres {km.cluster_centers.sum().item():.3f}, reloaded same {same}")
    return {"fit": fit, "stream": stream}


# -- ncg_optimizer (ncg-optimizer): the README's closures with `optim.BASIC(params, method=, line_search=, c1=,
#    lr=)` for a small classifier, the FR, PRP, HS, CD, DY, LS, HZ and HS-DY methods with the Armijo line search (two
#    more modes, `optim.LCG` on a least-squares problem and the strong-Wolfe line search, were left out after the
#    CPU smoke run: our closures, as the README writes them, failed there) ------------------------------------------

def ncg_train(dev):
    import ncg_optimizer as optim

    def nonlinear(methods, search):
        def run():
            x, y = _classes(256, d=10, k=3, seed=4)
            x, y = x.to(dev), y.to(dev)
            res = {}
            for m in methods:
                torch.manual_seed(0)
                model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3)).to(dev)
                kw = dict(c1=1e-4, lr=0.2, max_ls=25) if search == "Strong_Wolfe" else dict(c1=1e-4, lr=0.2)
                if search == "Strong_Wolfe":
                    kw["c2"] = 0.5
                optimizer = optim.BASIC(model.parameters(), method=m, line_search=search, **kw)

                def closure(optimizer=optimizer, model=model):  # called as closure() by the optimizer
                    optimizer.zero_grad()
                    loss = F.cross_entropy(model(x), y)
                    loss.backward()
                    return loss
                for _ in range(6):
                    loss = optimizer.step(closure)
                res[m] = round(float(loss), 4)
            print(f"{search}: {res}")
        return run
    return {"armijo_a": nonlinear(["FR", "PRP", "HS", "CD"], "Armijo"),
            "armijo_b": nonlinear(["DY", "LS", "HZ", "HS-DY"], "Armijo")}


# -- tgmm: the README's quick start on the device (`GaussianMixture(n_components=, covariance_type=, device=,
#    random_state=)`, `fit`, `predict`, `predict_proba`, `score_samples`, `converged_`, `n_iter_`), its covariance
#    types and EM variants (`algorithm='cem'|'sem'`), model selection by `bic` / `aic`, `sample`, and
#    `partial_fit` on streamed batches after a `fit` on the first --------------------------------------------------

def tgmm_mixture(dev):
    from tgmm import GaussianMixture

    def data(seed=42):
        g = torch.Generator().manual_seed(seed)
        parts = [torch.randn(300, 2, generator=g) @ torch.tensor([[1.0, 0.5], [0.0, 0.8]]),
                 torch.randn(300, 2, generator=g) * 0.7 + torch.tensor([3.0, 3.0]),
                 torch.randn(200, 2, generator=g) * torch.tensor([0.5, 1.4]) + torch.tensor([-2.0, 2.0])]
        return torch.cat(parts).to(dev)

    def covariances():
        x = data()
        for cov in ("full", "diag", "spherical", "tied_full"):
            gmm = GaussianMixture(n_components=3, covariance_type=cov, random_state=42, device=dev)
            gmm.fit(x)
            labels = gmm.predict(x)
            proba = gmm.predict_proba(x)
            ll = gmm.score_samples(x)
            print(f"{cov}: converged {gmm.converged_}, iters {gmm.n_iter_}, {labels.shape}, "
                  f"{proba.shape}, ll {float(ll.mean()):.3f}")

    def select():
        x = data(7)
        scores = {}
        for k in (1, 2, 3, 4):
            gmm = GaussianMixture(n_components=k, random_state=0, max_iter=60, device=dev)
            gmm.fit(x)
            scores[k] = (round(float(gmm.bic(x)), 1), round(float(gmm.aic(x)), 1))
        for alg in ("cem", "sem"):
            gmm = GaussianMixture(n_components=3, algorithm=alg, random_state=1, max_iter=40, device=dev)
            gmm.fit(x)
            scores[alg] = gmm.n_iter_
        s = gmm.sample(100)
        print(f"select: {scores}, sample {type(s).__name__}")

    def stream():
        x = data(3)
        gmm = GaussianMixture(n_components=3, random_state=2, device=dev)
        batches = x[torch.randperm(len(x), device=dev)].split(100)
        gmm.fit(batches[0])
        for batch in batches[1:]:
            gmm.partial_fit(batch)
        print(f"partial_fit ll {float(gmm.score_samples(x).mean()):.3f}")
    return {"covariances": covariances, "select": select, "stream": stream}


# -- interpol (torch-interpol): its quick doc's `grid_pull`, `grid_push`, `grid_grad`, `spline_coeff_nd` and
#    `resize`, at several interpolation orders and bounds: an image registered to a shifted copy by gradient
#    descent on a displacement field sampled with `grid_pull`, splatting with `grid_push`, and resizing ---------------

def interpol_spline(dev):
    import interpol

    h, w = 48, 56

    def image(seed=0):
        g = torch.Generator().manual_seed(seed)
        yy, xx = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                                indexing="ij")
        img = torch.sin(xx / 5) * torch.cos(yy / 7) + 0.05 * torch.randn(h, w, generator=g)
        return img.to(dev)

    def identity():
        yy, xx = torch.meshgrid(torch.arange(h, dtype=torch.float32, device=dev),
                                torch.arange(w, dtype=torch.float32, device=dev), indexing="ij")
        return torch.stack([yy, xx], -1)

    def register():
        src, tgt = image(0), image(0).roll((2, -3), (0, 1))
        disp = torch.zeros(h, w, 2, device=dev, requires_grad=True)
        opt = torch.optim.Adam([disp], lr=0.2)
        for order in (1, 3):
            for _ in range(10):
                out = interpol.grid_pull(src, identity() + disp, interpolation=order, bound="dct2",
                                         extrapolate=True)
                loss = (out - tgt).square().mean() + 0.01 * disp.diff(dim=0).square().mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(f"register order {order}: loss {loss.item():.4f}")

    def ops():
        img = image(1)
        grid = identity() + 0.5 * torch.randn(h, w, 2, device=dev)
        for order, bound in ((0, "replicate"), (1, "zero"), (2, "dft"), (3, "dct2"), (5, "dst2")):
            try:
                coeff = interpol.spline_coeff_nd(img, interpolation=order, bound=bound, dim=2)
                pulled = interpol.grid_pull(coeff, grid, interpolation=order, bound=bound, prefilter=False)
                pushed = interpol.grid_push(img, grid, shape=[h, w], interpolation=order, bound=bound)
                grad = interpol.grid_grad(img, grid, interpolation=order, bound=bound, prefilter=True)
            except NotImplementedError:
                print(f"order {order} {bound}: not implemented")
                continue
            print(f"order {order} {bound}: {pulled.float().mean().item():.4f} {pushed.float().sum().item():.2f} "
                  f"{grad.float().abs().mean().item():.4f}")
        for factor in (0.5, 2.0):
            out = interpol.resize(img, factor=factor, interpolation=3, prefilter=True)
            print(f"resize {factor}: {tuple(out.shape)}")
    return {"register": register, "ops": ops}


# -- torch_cubic_spline_grids (torch-cubic-spline-grids): the README's optimisation of a grid's values so that
#    its interpolants model a function (`CubicBSplineGrid1d/2d/3d`, `CubicCatmullRomGrid1d/2d(resolution=,
#    n_channels=)`, called on coordinates in [0, 1]), the grids moved to the device -------------------------------

def spline_grids(dev):
    import torch_cubic_spline_grids as tcs

    def fit(cls, resolution, n_dims, n_channels, target, steps=40):
        torch.manual_seed(0)
        grid = cls(resolution=resolution, n_channels=n_channels).to(dev)
        opt = torch.optim.Adam(grid.parameters(), lr=0.05)
        for _ in range(steps):
            coords = torch.rand(256, n_dims, device=dev) if n_dims > 1 else torch.rand(256, device=dev)
            pred = grid(coords)
            loss = (pred.squeeze() - target(coords).squeeze()).square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss.item()

    def one_d():
        res = {}
        for cls in (tcs.CubicBSplineGrid1d, tcs.CubicCatmullRomGrid1d):
            res[cls.__name__] = round(fit(cls, 8, 1, 1, lambda c: torch.sin(2 * math.pi * c)), 4)
        print(f"1d: {res}")

    def multi_d():
        res = {}
        res["b2"] = fit(tcs.CubicBSplineGrid2d, (6, 5), 2, 1,
                        lambda c: torch.sin(3 * c[:, 0]) * torch.cos(2 * c[:, 1]))
        res["cr2"] = fit(tcs.CubicCatmullRomGrid2d, (6, 6), 2, 2,
                         lambda c: torch.stack([c[:, 0] * c[:, 1], c[:, 0] - c[:, 1]], -1))
        res["b3"] = fit(tcs.CubicBSplineGrid3d, (4, 4, 4), 3, 1, lambda c: c.square().sum(-1), steps=25)
        print(f"nd: { {k: round(v, 4) for k, v in res.items()} }")
    return {"one_d": one_d, "multi_d": multi_d}


# -- torch_dxdt (torch-dxdt): the README's `dxdt(x, t, kind=, ...)` and its classes (`FiniteDifference`,
#    `SavitzkyGolay`, `Spectral`, `Spline`, `Kernel`, `Kalman`, `Whittaker` with `.d(x, t)`), on noisy series on the
#    device, and a derivative-matching loss backpropagated to fit a sinusoid's frequency ---------------------------

def dxdt_derivs(dev):
    import torch_dxdt

    def methods():
        t = torch.linspace(0, 2 * math.pi, 200, device=dev)
        x = torch.sin(t) + 0.05 * torch.randn(200, device=dev)
        specs = [("finite_difference", dict(k=1)), ("finite_difference", dict(k=2)),
                 ("savitzky_golay", dict(window_length=11, polyorder=3)), ("spectral", {}),
                 ("spline", dict(s=0.1)), ("kernel", dict(sigma=1.0, lmbd=0.1)), ("kalman", dict(alpha=0.1)),
                 ("whittaker", dict(lmbda=10.0))]
        for kind, kw in specs:
            try:
                dx = torch_dxdt.dxdt(x, t, kind=kind, **kw)
            except TypeError as e:
                print(f"{kind}: {e}")
                continue
            print(f"{kind}: err {(dx - torch.cos(t)).abs()[10:-10].mean().item():.4f}")
        sg = torch_dxdt.SavitzkyGolay(window_length=11, polyorder=3)
        batch = torch.sin(t[None] * torch.arange(1, 5, device=dev)[:, None]) + 0.02 * torch.randn(4, 200, device=dev)
        print(f"batched {tuple(sg.d(batch, t).shape)}")

    def fit():
        t = torch.linspace(0, 4, 160, device=dev)
        target = torch_dxdt.dxdt(torch.sin(1.7 * t) + 0.02 * torch.randn(160, device=dev), t,
                                 kind="savitzky_golay", window_length=9, polyorder=2)
        freq = torch.tensor(1.2, device=dev, requires_grad=True)
        opt = torch.optim.Adam([freq], lr=0.05)
        fd = torch_dxdt.FiniteDifference(k=1)
        for _ in range(30):
            dx = fd.d(torch.sin(freq * t), t)
            loss = (dx - target)[5:-5].square().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"fitted frequency {freq.item():.3f}")
    return {"methods": methods, "fit": fit}


# -- torch_incremental_pca (torch-incremental-pca): the README's `IncrementalPCA(n_components=, batch_size=)`
#    `fit` on a device tensor, streaming `partial_fit`, `transform`, and the Gram-mode backend (`gram=True`) -------

def ipca_fit(dev):
    from torch_incremental_pca import IncrementalPCA

    def data(n=3000, d=64, seed=0):
        g = torch.Generator().manual_seed(seed)
        basis = torch.randn(8, d, generator=g)
        return (torch.randn(n, 8, generator=g) * torch.arange(8, 0, -1) @ basis
                + 0.1 * torch.randn(n, d, generator=g)).to(dev)

    def fit():
        x = data()
        for gram in (False, True):
            pca = IncrementalPCA(n_components=8, batch_size=500, gram=gram)
            pca.fit(x)
            z = pca.transform(x[:100])
            print(f"gram {gram}: {tuple(pca.components_.shape)}, z {z.abs().mean().item():.3f}")
        auto = IncrementalPCA()
        auto.fit(x[:1000])
        print(f"auto: {auto.n_components_}, batch {auto.batch_size_}")

    def stream():
        x = data(2400, 48, seed=1)
        pca = IncrementalPCA(n_components=6)
        for batch in x.split(300):
            pca.partial_fit(batch)
        z = pca.transform(x)
        print(f"stream: {z.var(0)[:3].tolist()}")
    return {"fit": fit, "stream": stream}


# -- torch_tps (torch-tps): the README's `ThinPlateSpline(alpha=, device=)`, `fit(X, Y)` and `transform(X)`, in
#    1, 2 and 3 input dimensions with several outputs and regularisations, and an image warped by a spline fit to
#    moved control points (the README's image-warping example) ----------------------------------------------------

def tps_spline(dev):
    from torch_tps import ThinPlateSpline

    def fit():
        g = torch.Generator().manual_seed(0)
        for d_in, d_out, alpha in ((1, 1, 0.0), (2, 2, 0.1), (3, 2, 0.5)):
            x = torch.randn(300, d_in, generator=g).to(dev)
            y = torch.cat([torch.sin(x.sum(1, keepdim=True))] * d_out, 1)
            tps = ThinPlateSpline(alpha=alpha, device=dev)
            tps.fit(x, y)
            out = tps.transform(torch.randn(1000, d_in, generator=g).to(dev))
            print(f"tps {d_in}->{d_out} alpha {alpha}: {tuple(out.shape)}, fit err "
                  f"{(tps.transform(x) - y).abs().mean().item():.4f}")

    def warp():
        h, w = 64, 64
        img = torch.rand(1, 1, h, w, device=dev)
        src = torch.tensor([[0.2, 0.2], [0.2, 0.8], [0.8, 0.2], [0.8, 0.8], [0.5, 0.5]], device=dev)
        dst = src + 0.05 * torch.randn(5, 2, device=dev)
        tps = ThinPlateSpline(alpha=0.0, device=dev)
        tps.fit(dst, src)
        yy, xx = torch.meshgrid(torch.linspace(0, 1, h, device=dev), torch.linspace(0, 1, w, device=dev),
                                indexing="ij")
        coords = tps.transform(torch.stack([yy.flatten(), xx.flatten()], 1)).reshape(h, w, 2)
        out = F.grid_sample(img, (coords.flip(-1) * 2 - 1)[None], align_corners=True)
        print(f"warp {out.mean().item():.4f}")
    return {"fit": fit, "warp": warp}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _cifar10(root: Path, n_train: int, n_test: int, seed: int = 0) -> dict:
    """cifar-10-batches-py/{data_batch_1..5,test_batch,batches.meta} in the python version's pickle layout,
    random images; their md5 sums (torchvision's CIFAR10 is told them, so its download finds them verified)."""
    import hashlib
    import pickle

    import numpy as np
    rng = np.random.default_rng(seed)
    folder = root / "data" / "cifar-10-batches-py"
    folder.mkdir(parents=True, exist_ok=True)
    names = [(f"data_batch_{i}", n_train // 5) for i in range(1, 6)] + [("test_batch", n_test)]
    for name, n in names:
        labels = rng.integers(0, 10, n)
        data = np.clip(labels[:, None] * 25 + rng.integers(-40, 40, (n, 3072)), 0, 255).astype(np.uint8)
        (folder / name).write_bytes(pickle.dumps({"data": data, "labels": labels.tolist()}))
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": [f"c{i}" for i in range(10)]}))
    return {name: hashlib.md5((folder / name).read_bytes()).hexdigest() for name in
            [n for n, _ in names] + ["batches.meta"]}


def _cifar_script(dev, name: str, repo: str, script: str, argv: list, stop: int, n_train: int = 160,
                  n_test: int = 64, sub: str = "run", cuda_only: bool = True):
    """A repository's training script as is on synthetic CIFAR-10 (`_cifar10` under a temporary folder's data/,
    the script run from that folder or, with `sub`, from a subfolder of it, for a script that reads '../data');
    torchvision's CIFAR10 is told the files' md5 sums. The window spans the 2nd to the `stop`-th `backward`."""
    root = _need_repo(repo)
    tmp = Path(hc._tmp())
    sums = _cifar10(tmp, n_train, n_test)
    if sub:
        (tmp / sub).mkdir()

    def window():
        if cuda_only and dev.type != "cuda":
            raise RuntimeError(f"{repo}'s {script} runs on cuda only")
        import types

        import torchvision
        stub = types.ModuleType("tensorboard_logger")  # train.py imports it; `--tensorboard` stays off
        stub.configure = stub.log_value = lambda *a, **k: None
        saved_mod = sys.modules.get("tensorboard_logger")
        sys.modules["tensorboard_logger"] = stub
        cls = torchvision.datasets.CIFAR10
        saved = cls.train_list, cls.test_list, cls.meta
        cls.train_list = [[f"data_batch_{i}", sums[f"data_batch_{i}"]] for i in range(1, 6)]
        cls.test_list = [["test_batch", sums["test_batch"]]]
        cls.meta = {**cls.meta, "md5": sums["batches.meta"]}
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, stop, stop_script=True):
                hc.run_script(root / script, argv, str(tmp / sub) if sub else str(tmp))
        finally:
            cls.train_list, cls.test_list, cls.meta = saved
            if saved_mod is None:
                sys.modules.pop("tensorboard_logger", None)
            else:
                sys.modules["tensorboard_logger"] = saved_mod
    return {"train_window": window}


def wideresnet_train(dev):
    """xternalz/WideResNet-pytorch's train.py (`--layers 16 --widen-factor 2 -b 32 --epochs 3 --print-freq 2`: a
    WRN-16-2, SGD with Nesterov momentum, a cosine schedule, reflect-padded crops and flips, its AverageMeter
    logs, the validation pass and a checkpoint per epoch) on 160 synthetic training images (five steps an epoch);
    window 2nd to 9th `backward`, the first epoch's validation pass and checkpoint included."""
    return _cifar_script(dev, "wideresnet.train", "wideresnet", "train.py",
                         ["--layers", "16", "--widen-factor", "2", "-b", "32", "--epochs", "3", "--print-freq", "2",
                          "--name", "wrn"], 9)


def wide_resnet_train(dev):
    """meliketoy/wide-resnet.pytorch's main.py (`--net_type wide-resnet --depth 10 --widen_factor 2 --dropout 0.3
    --dataset cifar10`, its config.py's batch size 128, SGD and its step learning-rate schedule: a WRN-10-2 in
    DataParallel on the GPU, the script's own choice by `torch.cuda.is_available()`), run from the temporary
    folder (it reads './data' and saves './checkpoint') on 160 synthetic training images (two steps an epoch);
    window 2nd to 7th `backward`: three epochs' training steps, their test passes, accuracy and checkpoints."""
    return _cifar_script(dev, "wide_resnet.train", "wide_resnet", "main.py",
                         ["--net_type", "wide-resnet", "--depth", "10", "--widen_factor", "2", "--dropout", "0.3",
                          "--dataset", "cifar10"], 7, sub="", cuda_only=False)


MODELS = [
    # name, package, builder
    ("minibatch_kmeans.cluster", "minibatch_kmeans", kmeans_cluster),
    ("ncg_optimizer.train", "ncg_optimizer", ncg_train),
    ("tgmm.mixture", "tgmm", tgmm_mixture),
    ("interpol.spline", "interpol", interpol_spline),
    ("torch_cubic_spline_grids.fit", "torch_cubic_spline_grids", spline_grids),
    ("torch_dxdt.derivs", "torch_dxdt", dxdt_derivs),
    ("torch_incremental_pca.fit", "torch_incremental_pca", ipca_fit),
    ("torch_tps.spline", "torch_tps", tps_spline),
    ("wideresnet.train", "wideresnet", wideresnet_train),
    ("wide_resnet.train", "wide_resnet", wide_resnet_train),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh27", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
