"""Record the syncs of a forty-first set, `fresh40` (a sealed test set): libraries and training code nobody here read.

`fresh40` is recorded the same way as `fresh9` to `fresh39` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions and docs' examples and tutorials, the names, signatures and
docstrings they export), on synthetic data with random weights, before anyone ran the linter on this code or read it
for syncs. Every input is put on the device explicitly, as the libraries' docs do (`.to(dev)`, `device=`;
harmony's `harmonize(use_gpu=)`, Lightning's `Trainer(accelerator=, devices=)` for lightning-uq-box and
finetuning-scheduler, whose batches the trainer moves): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh40, and builds a wheel from each source
  distribution named in SDISTS), names a to l: harmony-pytorch (Harmony: single-cell data integration by
  iterative soft clustering and linear correction), hf-deepali (deepali: image and point-set registration:
  spatial transforms optimised against image losses, multi-resolution pyramids), landmarker (anatomical
  landmark localisation: heatmap generators, networks, decoders, losses, metrics, conformal regressors),
  lightning-uq-box (uncertainty quantification on Lightning: MC dropout, SWAG, deep evidential regression,
  temperature scaling and RAPS) and finetuning-scheduler (Lightning's scheduled fine-tuning); + dacite,
  deprecation, ruamel.yaml (deepali's), monai and pydicom (landmarker's), laplace-torch, asdfghjkl, einconv,
  curvlinops-for-pytorch, backpack-for-pytorch, unfoldNd, uncertainty-toolbox, torchseg, ema-pytorch, kornia and
  kornia-rs (lightning-uq-box's), easydict (CIFAR-ZOO's) and progress (the RAdam script's). Their other needs
  (numpy, scipy, pandas, scikit-learn, networkx, matplotlib, lightning, torchmetrics, gpytorch, timm, einops,
  opencv, tensorboard, torchvision) are on the GPU machine.
- MODELS are exactly what the second GPU call recorded (the merged recording is that call's runs that ran): GRAFX
  (audio processing graphs: `GRAFX` graphs, `compute_render_order`, `prepare_render`, `render_grafx` of its
  processors), written and recorded in the first call, held no site of its own there, and failed in the second
  (its render metadata on the device); it was dropped, with lightning-uq-box's conformal quantile regression and
  Laplace modes (a device mismatch inside `ConformalQR.adjust_model_logits` and inside curvlinops).
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh40/repos/<name>:
  BIGBALLON/CIFAR-ZOO (train.py as is with its cutout + mixup PreResNet-20 config) and LiyuanLucasLiu/RAdam
  (cifar_imagenet/cifar.py as is with its RAdam optimiser), each on CIFAR-10 answered by torchvision's FakeData.

    python benchmarks/fresh40_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh40_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh40 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh40 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import contextlib
import math
import os
import shutil
import sys
import warnings
from functools import partial
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh_collect as fc
import heldout_collect as hc
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
BENCH_DIR = ac.REPO / ".bench" / "fresh40"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh40", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh40/repos/<name>)
REPOS = {
    "cifarzoo": ("BIGBALLON/CIFAR-ZOO", "02753840c43a1929fba93092963919011969f8c2",
                 ["train.py", "utils.py", "models", "experiments/cutout+mixup/preresnet20"]),
    "radam": ("LiyuanLucasLiu/RAdam", "d9fd30a337894c4003768561d45e8730dbd41333",
              ["cifar_imagenet/cifar.py", "cifar_imagenet/models", "cifar_imagenet/utils"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["harmony-pytorch==0.1.8", "hf-deepali==0.6.5", "dacite==1.9.2", "deprecation==2.1.0",
          "ruamel.yaml==0.18.16", "landmarker==0.4.1",
          "monai==1.6.1", "pydicom==3.0.2", "lightning-uq-box==0.2.0", "laplace-torch==0.3",
          "curvlinops-for-pytorch==3.0.1", "backpack-for-pytorch==1.7.1", "unfoldNd==0.2.3",
          "uncertainty-toolbox==0.1.1", "torchseg==0.0.1a4", "ema-pytorch==0.8.3", "kornia==0.9.0",
          "kornia-rs==0.2.0", "finetuning-scheduler==2.14.1", "easydict==1.13",
          "asdfghjkl==0.1a4", "einconv==0.1.0"]
# (no wheel on the index: `prepare` builds their pure-Python wheels from the source distributions)
SDISTS = ["progress==1.6.1"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"harmony_pytorch": "harmony-pytorch", "hf_deepali": "hf-deepali", "landmarker": "landmarker",
         "lightning_uq_box": "lightning-uq-box", "finetuning_scheduler": "finetuning-scheduler", "monai": "monai",
         "laplace_torch": "laplace-torch", "lightning": "lightning", "numpy": "numpy", "scipy": "scipy",
         "torchvision": "torchvision", "torchaudio": "torchaudio"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh40/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh40_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _trainer(dev, tmp, **kw):
    """A quiet Lightning trainer on the recording device (the libraries' tutorials: `Trainer(accelerator=,
    max_epochs=, enable_checkpointing=False, enable_progress_bar=False, default_root_dir=)`)."""
    from lightning import Trainer
    kw.setdefault("enable_checkpointing", False)
    return Trainer(accelerator="gpu" if dev.type == "cuda" else "cpu", devices=1, enable_progress_bar=False,
                   enable_model_summary=False, logger=False, default_root_dir=tmp, num_sanity_val_steps=0, **kw)


# ============================================================================================
# Libraries
# ============================================================================================

# -- harmony-pytorch: the README's `harmonize(X, df_metadata, batch_key=...)` on an embedding with batch effects
#    (numpy, as documented) and `use_gpu=True` on the GPU: the fast and the original correction, one and two batch
#    keys, discounting `tau`, a few Harmony iterations each -----------------------------------------------------

def harmony_integrate(dev):
    import pandas as pd
    from harmony import harmonize

    def data(seed, n=1200, d=20, k=4):
        rng = np.random.default_rng(seed)
        types = rng.integers(0, k, n)
        batch = rng.integers(0, 3, n)
        lab = rng.integers(0, 2, n)
        centres = rng.normal(0, 4, (k, d))
        shifts = rng.normal(0, 2, (3, d))
        x = centres[types] + shifts[batch] + 0.5 * lab[:, None] + rng.normal(0, 1, (n, d))
        df = pd.DataFrame({"Channel": [f"b{b}" for b in batch], "Lab": [f"l{v}" for v in lab],
                           "cell_type": types})
        return x.astype(np.float32), df

    gpu = dev.type == "cuda"

    def run(key, **kw):
        def go():
            x, df = data(len(str(key)) + len(kw))
            z = harmonize(x, df, batch_key=key, use_gpu=gpu, n_jobs=1, verbose=False, random_state=0, **kw)
            spread = np.std([z[(df.Channel == c).to_numpy()].mean() for c in df.Channel.unique()])
            print(f"harmony {key} {kw}: {z.shape}, batch spread {spread:.3f}")
        return go

    return {"fast": run("Channel", n_clusters=12, max_iter_harmony=4),
            "original": run("Channel", n_clusters=12, max_iter_harmony=3, correction_method="original",
                            theta=1.0, sigma=0.2),
            "two_keys": run(["Channel", "Lab"], n_clusters=10, max_iter_harmony=3, tau=5,
                            block_proportion=0.1)}


# -- hf-deepali: the pairwise-registration tutorial's steps on synthetic images made on the device
#    (`U.circle_image`, `U.cshape_image`, `Grid`, `Image(...).pyramid(levels)`): a rotation by grid search and by
#    Adam (`spatial.EulerRotation`, `ImageTransformer`), free-form deformations (`FreeFormDeformation`,
#    `StationaryVelocityFreeFormDeformation` with its `inverse()`) in a multi-resolution loop with the tutorial's
#    similarity and regularisation terms (MSE, LCC, NMI; bending, diffusion, curvature), an affine transform
#    composed with an FFD (`SequentialTransform`) and landmarks mapped by `PointSetTransformer` ------------------

def deepali_register(dev):
    import deepali.core.functional as U
    import deepali.spatial as spatial
    from deepali.core import Grid
    from deepali.data import Image
    from deepali.losses import functional as L

    size = 48

    def pair(kind="ring"):
        grid = Grid(size=(size, size))
        if kind == "ring":
            target = U.cshape_image(grid, radius=16, sigma=1.5, dtype=torch.float, device=dev)
            source = U.circle_image(grid, radius=16, sigma=1.5, dtype=torch.float, device=dev)
        else:
            source = U.cshape_image(grid, radius=15, sigma=1.5, dtype=torch.float, device=dev)
            rot = spatial.EulerRotation(grid, params=False).to(dev)
            rot.angles_(torch.tensor([[0.5]], device=dev))
            target = spatial.ImageTransformer(rot)(source)
        return grid, target, source

    def rotation():
        grid, target, source = pair("rot")
        rot = spatial.EulerRotation(grid, params=False).to(dev)
        transformer = spatial.ImageTransformer(rot)
        best, best_loss = torch.tensor(0.0, device=dev), torch.tensor(math.inf, device=dev)
        for angle in torch.linspace(-90.0, 90.0, 12, device=dev):
            rot.angles_(angle.deg2rad().reshape(1, 1))
            loss = L.mse_loss(transformer(source), target)
            if loss.lt(best_loss):
                best, best_loss = angle, loss
        rot = spatial.EulerRotation(grid).to(dev)
        transformer = spatial.ImageTransformer(rot)
        opt = torch.optim.Adam(transformer.parameters(), lr=1e-2)
        for _ in range(6):
            loss = L.ncc_loss(transformer(source), target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"rotation: grid best {best.item():.1f} deg, Adam {rot.angles().rad2deg().item():.2f} deg, "
              f"loss {loss.item():.4f}")

    def loss_fn(sim, w_bending=0.0, w_diffusion=0.0, w_curvature=0.0):
        def loss(warped, target, transform):
            terms = {"sim": sim(warped, target)}
            total = terms["sim"]
            v_or_u = getattr(transform, "v", getattr(transform, "u", None))
            if w_bending > 0:
                terms["be"] = (L.bspline_bending_loss(transform.params)
                               if isinstance(transform, spatial.BSplineTransform) else L.bending_loss(v_or_u))
                total = terms["be"].mul(w_bending).add(total)
            if w_diffusion > 0:
                terms["diff"] = L.diffusion_loss(v_or_u)
                total = terms["diff"].mul(w_diffusion).add(total)
            if w_curvature > 0:
                terms["curv"] = L.curvature_loss(v_or_u)
                total = terms["curv"].mul(w_curvature).add(total)
            return {"loss": total, **terms}
        return loss

    def multires(target, source, grid, transform, fn, levels=2, steps=4):
        tp = Image(target[0], grid).pyramid(levels)
        sp = Image(source[0], grid).pyramid(levels)
        model = (spatial.new_spatial_transform(transform[0], tp[levels - 1].grid(), **transform[1])
                 if isinstance(transform[0], str) else transform[0](tp[levels - 1].grid(), **transform[1]))
        model = model.to(dev).train()
        log = {}
        for level in reversed(range(levels)):
            model.grid_(tp[level].grid())
            t_batch, s_batch = tp[level].batch().tensor(), sp[level].batch().tensor()
            transformer = spatial.ImageTransformer(model)
            opt = torch.optim.Adam(model.parameters(), lr=1e-2)
            for _ in range(steps):
                loss = fn(transformer(s_batch), t_batch, model)
                log = {k: v.item() for k, v in loss.items()}
                opt.zero_grad()
                loss["loss"].backward()
                opt.step()
        return model.eval(), log

    def ffd():
        grid, target, source = pair()
        for name, sim, kw in (("FFD", L.mse_loss, {"w_bending": 1e-3}),
                              ("FFD", partial(L.lcc_loss, kernel_size=5), {"w_curvature": 1e-3})):
            model, log = multires(target, source, grid, (name, {"stride": 4}), loss_fn(sim, **kw))
            with torch.inference_mode():
                warped = spatial.ImageTransformer(model)(source)
                g = U.grid_image(grid, num=1, stride=8, inverted=True, device=dev)
                deformed = spatial.ImageTransformer(model, grid, padding="zeros")(g)
            print(f"ffd: {log}, warped {warped.mean().item():.3f}, grid {deformed.mean().item():.3f}")

    def svffd():
        grid, target, source = pair()
        model, log = multires(target, source, grid, (spatial.StationaryVelocityFreeFormDeformation, {"stride": 4}),
                              loss_fn(partial(L.nmi_loss, num_bins=32), w_diffusion=1e-3))
        with torch.inference_mode():
            inverse = model.inverse()
            back = spatial.ImageTransformer(inverse, grid)(target)
            fwd = spatial.ImageTransformer(model, grid)(source)
        print(f"svffd: {log}, inverse {tuple(back.shape)} {back.mean().item():.4f}, "
              f"dice {L.dice_loss(fwd, target.view_as(fwd)).item():.3f}")

    def affine_points():
        grid, target, source = pair("rot")
        affine = spatial.AffineTransform(grid).to(dev)
        deform = spatial.FreeFormDeformation(grid, stride=8).to(dev)
        model = spatial.SequentialTransform(affine, deform).to(dev)
        transformer = spatial.ImageTransformer(model)
        opt = torch.optim.Adam(model.parameters(), lr=5e-3)
        for _ in range(5):
            warped = transformer(source)
            loss = L.mse_loss(warped, target) + 1e-3 * L.bending_loss(deform.u) if hasattr(deform, "u") else \
                L.mse_loss(warped, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        points = (torch.rand(1, 16, 2, device=dev) * 2 - 1) * 0.8
        moved = spatial.PointSetTransformer(model)(points)
        print(f"affine+ffd: loss {loss.item():.4f}, points moved {(moved - points).norm(dim=-1).mean().item():.4f}")

    def dense():
        grid, target, source = pair()
        rigid = spatial.RigidTransform(grid).to(dev)
        with torch.no_grad():
            pre = spatial.ImageTransformer(rigid)(source)
        for cls, kw, reg in ((spatial.DisplacementFieldTransform, {"stride": 2},
                              lambda t: L.total_variation_loss(t.u) + L.elasticity_loss(t.u, poissons_ratio=0.3,
                                                                                        shear_modulus=1.0)),
                             (spatial.FreeFormDeformation, {"stride": 4}, lambda t: L.bspline_bending_loss(t.params))):
            model = cls(grid, **kw).to(dev).train()
            transformer = spatial.ImageTransformer(model)
            opt = torch.optim.Adam(model.parameters(), lr=1e-2)
            for _ in range(4):
                warped = transformer(pre)
                loss = L.mi_loss(warped, target, num_bins=32) + 1e-3 * reg(model)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(f"dense {cls.__name__}: loss {loss.item():.4f}, ssd {L.ssd_loss(warped, target).item():.4f}")

    return {"rotation": rotation, "ffd": ffd, "svffd": svffd, "affine_points": affine_points, "dense": dense}


# -- landmarker: the ISBI2015 example's loop on synthetic images with bright blobs at the landmarks (`.to(device)`):
#    `GaussianHeatmapGenerator(learnable=True)`, `OriginalSpatialConfigurationNet` / `Hourglass`, its losses
#    (`GaussianHeatmapL2Loss`, `AdaptiveWingLoss`, `NLLLoss`, `StarLoss`), `heatmap_to_coord` with several
#    methods, `point_error` and `sdr`, the `AdalossScheduler`; multi-instance decoding
#    (`heatmap_to_multiple_coord`); conformal regressors fitted and evaluated on predictions --------------------

def landmarker_heatmaps(dev):
    from landmarker.heatmap.decoder import (
        coord_local_weighted,
        coord_weighted_spatial_mean,
        heatmap_to_coord,
        heatmap_to_coord_cov,
        heatmap_to_coord_enlarge,
        heatmap_to_multiple_coord,
    )
    from landmarker.heatmap.generator import GaussianHeatmapGenerator
    from landmarker.losses import AdaptiveWingLoss, GaussianHeatmapL2Loss, NLLLoss, StarLoss
    from landmarker.metrics import point_error, sdr
    from landmarker.models import Hourglass, OriginalSpatialConfigurationNet
    from landmarker.schedulers import AdalossScheduler

    size, nl = 64, 4

    def batch(step, bs=4):
        g = torch.Generator().manual_seed(step)
        lm = 8 + torch.rand(bs, nl, 2, generator=g) * (size - 16)
        yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
        img = torch.zeros(bs, 1, size, size)
        for b in range(bs):
            for k in range(nl):
                img[b, 0] += torch.exp(-((yy - lm[b, k, 0]) ** 2 + (xx - lm[b, k, 1]) ** 2) / (2 * (1.5 + k) ** 2))
        img += 0.05 * torch.randn(img.shape, generator=g)
        return img.to(dev), lm.to(dev)

    def evaluate(out, lm, methods):
        dim_orig = torch.tensor([[size, size]] * lm.shape[0], device=dev)
        spacing = torch.ones(lm.shape[0], 2, device=dev)
        padding = torch.zeros(lm.shape[0], 2, device=dev)
        res = {}
        for m in methods:
            pred = heatmap_to_coord(out, method=m) if isinstance(m, str) else m(out)
            res[m] = point_error(lm, pred, (size, size), dim_orig, spacing, padding, reduction="mean")
        pred = heatmap_to_coord(out, method=methods[0]) if isinstance(methods[0], str) else methods[0](out)
        s = sdr([2.0, 4.0, 8.0], true_landmarks=lm, pred_landmarks=pred, dim=(size, size), dim_orig=dim_orig.int(),
                pixel_spacing=spacing, padding=padding)
        return {str(k)[:40]: float(v) for k, v in res.items()}, s

    def scn():
        torch.manual_seed(0)
        gen = GaussianHeatmapGenerator(nb_landmarks=nl, sigmas=3, gamma=100, heatmap_size=(size, size),
                                       learnable=True).to(dev)
        model = OriginalSpatialConfigurationNet(in_channels=1, out_channels=nl, la_channels=16, sp_channels=16,
                                                sp_downsample=4).to(dev)
        opt = torch.optim.SGD([{"params": model.parameters(), "weight_decay": 1e-3}, {"params": gen.sigmas},
                               {"params": gen.rotation}], lr=1e-4, momentum=0.99, nesterov=True)
        crit = GaussianHeatmapL2Loss(alpha=5)
        sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=1)
        for step in range(4):
            img, lm = batch(step)
            model.train()
            heat = gen(lm)
            out = model(img)
            loss = crit(out, gen.sigmas, heat)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 10000.0)
            opt.step()
            sched.step(loss.item())
        model.eval()
        with torch.no_grad():
            img, lm = batch(99)
            out = model(img)
        print(f"scn: loss {loss.item():.3f}", *evaluate(out, lm, ["local_soft_argmax", "argmax", "soft_argmax"]))

    def hourglass():
        torch.manual_seed(1)
        gen = GaussianHeatmapGenerator(nb_landmarks=nl, sigmas=4.0, heatmap_size=(size, size)).to(dev)
        model = Hourglass(spatial_dims=2, in_channels=1, out_channels=nl, channels=[8, 16, 32]).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        ada = AdalossScheduler(nb_landmarks=nl, rho=0.9, window=2)
        wing, nll, star = AdaptiveWingLoss(), NLLLoss(), StarLoss()
        losses = []
        for step in range(4):
            img, lm = batch(step + 10)
            heat = gen(lm)
            out = model(img)
            loss = wing(out, heat) + 0.1 * nll(out, heat)
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses.append(loss.detach().repeat(nl))
            if len(losses) >= 2:
                ada(torch.stack(losses[-2:]).mean(0).cpu(), gen.sigmas)
        with torch.no_grad():
            img, lm = batch(98)
            out = model(img)
            mu, cov = heatmap_to_coord_cov(out, method="soft_argmax", require_grad=False)
            st = star(mu, cov, lm)
        print(f"hourglass: loss {loss.item():.3f}, star {st.item():.3f}, cov {cov.shape}",
              *evaluate(out, lm, [partial(coord_weighted_spatial_mean, activation="softmax"),
                                  partial(coord_local_weighted, window=7)]))

    def decode():
        gen = GaussianHeatmapGenerator(nb_landmarks=1, sigmas=2.0, heatmap_size=(size, size)).to(dev)
        _, lm = batch(5, bs=3)
        heat = torch.stack([gen(lm[:, k:k + 1]) for k in range(nl)], 0).sum(0).clamp(max=1.0)
        coords, scores = heatmap_to_multiple_coord(heat, window=5, threshold=0.5, method="argmax")
        coords2, _ = heatmap_to_multiple_coord(heat, window=9, threshold=0.3, method="argmax")
        found = [len(c) for b in coords for c in b]
        print(f"multi-instance: found {found}, {sum(len(c) for b in coords2 for c in b)} with a wider window")

    def conformal():
        from landmarker.uncertainty import (
            ConformalRegressorBonferroni,
            ConformalRegressorMahalanobis,
            ConformalRegressorMaxNonconformity,
            MultivariateNormalRegressor,
        )
        gen = GaussianHeatmapGenerator(nb_landmarks=nl, sigmas=3.0, heatmap_size=(size, size)).to(dev)
        img, lm = batch(7, bs=16)
        noisy = gen(lm + torch.randn_like(lm) * 1.5)
        pred, cov = heatmap_to_coord_cov(noisy, method="soft_argmax", require_grad=False)
        pred, cov, lm = pred.cpu(), cov.cpu(), lm.cpu()  # the regressors take host tensors, as in its examples
        cal, test = slice(0, 10), slice(10, 16)
        for cls in (ConformalRegressorMahalanobis, ConformalRegressorMaxNonconformity, ConformalRegressorBonferroni,
                    MultivariateNormalRegressor):
            reg = cls(spatial_dims=2, nb_landmarks=nl)
            spread = cov if cls in (ConformalRegressorMahalanobis, MultivariateNormalRegressor) else \
                cov.diagonal(dim1=-2, dim2=-1).sqrt()
            reg.fit(pred[cal], spread[cal], lm[cal])
            out = reg.evaluate(pred[test], spread[test], lm[test], confidence=0.9)
            print(f"{cls.__name__}: {out if not isinstance(out, dict) else sorted(out)[:4]}")

    def laplacian():
        from landmarker.heatmap.generator import LaplacianHeatmapGenerator
        from landmarker.losses import EuclideanDistanceVarianceReg, GeneralizedNormalHeatmapLoss
        from landmarker.models import CoordConvLayer
        torch.manual_seed(2)
        gen = LaplacianHeatmapGenerator(nb_landmarks=nl, sigmas=3.0, gamma=50, heatmap_size=(size, size)).to(dev)
        model = nn.Sequential(CoordConvLayer(spatial_dims=2, in_channels=1, out_channels=16),
                              nn.Conv2d(16, nl, 3, padding=1)).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        gnl, reg = GeneralizedNormalHeatmapLoss(alpha=3.0), EuclideanDistanceVarianceReg()
        for step in range(4):
            img, lm = batch(step + 20)
            out = model(img)
            mu, cov = heatmap_to_coord_cov(out, method="soft_argmax", require_grad=True)
            loss = gnl(out, cov, gen(lm)) + 1e-3 * reg(mu, cov, lm)
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            big = heatmap_to_coord_enlarge(out.detach(), method="argmax", enlarge_factor=2)
        print(f"laplacian: loss {loss.item():.3f}, enlarged {tuple(big.shape)}")

    return {"scn": scn, "hourglass": hourglass, "decode": decode, "conformal": conformal, "laplacian": laplacian}


# -- lightning-uq-box: its regression and classification tutorials on its toy datamodules
#    (`ToyHeteroscedasticDatamodule`, `TwoMoonsDataModule`) with its `MLP`, each fitted a few epochs by a Lightning
#    `Trainer` on the device: MC dropout with its `NLL`, SWAG on a fitted deterministic model, deep evidential
#    regression, an MC-dropout classifier and a classifier calibrated by `TempScaling` and `RAPS`; `trainer.test`
#    and `predict_step` on test inputs moved to the module's device (its `ConformalQR` and `LaplaceRegression`
#    modes were dropped after the second GPU call: a device mismatch inside each) --------------------------------

def uqbox_regression(dev):
    import lightning_uq_box.uq_methods as U
    from lightning_uq_box.datamodules import ToyHeteroscedasticDatamodule
    from lightning_uq_box.models import MLP

    tmp = hc._tmp()

    def mc_dropout():
        dm = ToyHeteroscedasticDatamodule(n_points=300, batch_size=64)
        net = MLP(n_inputs=1, n_hidden=[32, 32], n_outputs=2, dropout_p=0.1, activation_fn=nn.Tanh())
        model = U.MCDropoutRegression(model=net, num_mc_samples=8, loss_fn=U.NLL(), burnin_epochs=1,
                                      optimizer=partial(torch.optim.Adam, lr=1e-2))
        trainer = _trainer(dev, tmp, max_epochs=3)
        trainer.fit(model, dm)
        trainer.test(model, dm, verbose=False)
        preds = model.predict_step(dm.X_test.to(model.device))
        print(f"mc dropout: {sorted(preds)}")

    def swag_der():
        dm = ToyHeteroscedasticDatamodule(n_points=300, batch_size=64)
        net = MLP(n_inputs=1, n_hidden=[32, 32], n_outputs=1, activation_fn=nn.Tanh())
        det = U.DeterministicRegression(model=net, optimizer=partial(torch.optim.Adam, lr=1e-2),
                                        loss_fn=nn.MSELoss())
        _trainer(dev, tmp, max_epochs=2).fit(det, dm)
        swag = U.SWAGRegression(model=det.model, max_swag_snapshots=4, snapshot_freq=1, num_mc_samples=5,
                                swag_lr=1e-3, loss_fn=nn.MSELoss())
        trainer = _trainer(dev, tmp, max_epochs=2)
        trainer.fit(swag, dm)
        trainer.test(swag, dm, verbose=False)
        der = U.DER(model=MLP(n_inputs=1, n_hidden=[32], n_outputs=4, activation_fn=nn.Tanh()),
                    optimizer=partial(torch.optim.Adam, lr=1e-2))
        _trainer(dev, tmp, max_epochs=2).fit(der, dm)
        preds = der.predict_step(dm.X_test.to(der.device))
        print(f"swag + der: {sorted(preds)}")

    return {"mc_dropout": mc_dropout, "swag_der": swag_der}


def uqbox_classification(dev):
    import lightning_uq_box.uq_methods as U
    from lightning_uq_box.datamodules import TwoMoonsDataModule
    from lightning_uq_box.models import MLP

    tmp = hc._tmp()

    def calibrate():
        dm = TwoMoonsDataModule(batch_size=128)
        net = MLP(n_inputs=2, n_hidden=[32, 32], n_outputs=2, dropout_p=0.2, activation_fn=nn.ReLU())
        det = U.DeterministicClassification(model=net, optimizer=partial(torch.optim.Adam, lr=1e-2),
                                            loss_fn=nn.CrossEntropyLoss())
        _trainer(dev, tmp, max_epochs=2).fit(det, dm)
        for cls, kw in ((U.TempScaling, {"max_iter": 10}), (U.RAPS, {"max_iter": 10, "alpha": 0.1, "kreg": 1,
                                                                   "lamda_param": 0.01})):
            post = cls(det.model, **kw)
            trainer = _trainer(dev, tmp, max_epochs=1)
            trainer.fit(post, train_dataloaders=dm.val_dataloader())
            trainer.test(post, dm.test_dataloader(), verbose=False)
            preds = post.predict_step(dm.X_test.to(post.device))
            print(f"{cls.__name__}: {sorted(preds)}")

    def mc_dropout():
        dm = TwoMoonsDataModule(batch_size=128)
        net = MLP(n_inputs=2, n_hidden=[32, 32], n_outputs=2, dropout_p=0.2, activation_fn=nn.ReLU())
        model = U.MCDropoutClassification(model=net, num_mc_samples=8, loss_fn=nn.CrossEntropyLoss(),
                                          optimizer=partial(torch.optim.Adam, lr=1e-2))
        trainer = _trainer(dev, tmp, max_epochs=2)
        trainer.fit(model, dm)
        trainer.test(model, dm.test_dataloader(), verbose=False)
        preds = model.predict_step(dm.test_grid_points.to(model.device))
        print(f"mc dropout classification: {sorted(preds)}")

    return {"calibrate": calibrate, "mc_dropout": mc_dropout}


# -- finetuning-scheduler: `Trainer(callbacks=[FinetuningScheduler(...)])` on a small LightningModule (a backbone
#    of named blocks and a head, logging `val_loss`), an explicit schedule as a dict (params per phase,
#    `max_transition_epoch`, epoch-driven transitions) and the implicit default schedule driven by
#    `FTSEarlyStopping` / `FTSCheckpoint`, with a `StepLR` reinitialised per phase ---------------------------------

def fts_schedules(dev):
    import lightning as L
    from finetuning_scheduler import FinetuningScheduler, FTSCheckpoint, FTSEarlyStopping
    from torch.utils.data import DataLoader, TensorDataset

    tmp = hc._tmp()
    g = torch.Generator().manual_seed(0)
    x = torch.randn(512, 16, generator=g)
    y = (x[:, :4].sum(1) > 0).long()
    train = DataLoader(TensorDataset(x[:384], y[:384]), batch_size=64, shuffle=True)
    val = DataLoader(TensorDataset(x[384:], y[384:]), batch_size=64)

    class Net(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.block1 = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
            self.block2 = nn.Sequential(nn.Linear(32, 32), nn.ReLU())
            self.head = nn.Linear(32, 2)

        def forward(self, x):
            return self.head(self.block2(self.block1(x)))

        def training_step(self, batch, _):
            xb, yb = batch
            loss = F.cross_entropy(self(xb), yb)
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch, _):
            xb, yb = batch
            logits = self(xb)
            self.log("val_loss", F.cross_entropy(logits, yb), prog_bar=False)
            self.log("val_acc", (logits.argmax(1) == yb).float().mean())

        def configure_optimizers(self):
            opt = torch.optim.AdamW(filter(lambda p: p.requires_grad, self.parameters()), lr=1e-2)
            return {"optimizer": opt, "lr_scheduler": {"scheduler": torch.optim.lr_scheduler.StepLR(opt, 2)}}

    def explicit():
        sched = {0: {"params": ["head.weight", "head.bias"], "max_transition_epoch": 1},
                 1: {"params": ["block2.0.weight", "block2.0.bias"], "max_transition_epoch": 2},
                 2: {"params": ["block1.0.weight", "block1.0.bias"], "lr": 5e-3, "max_transition_epoch": 3}}
        fts = FinetuningScheduler(ft_schedule=sched, epoch_transitions_only=True, log_dir=tmp)
        trainer = _trainer(dev, tmp, max_epochs=4, callbacks=[fts, FTSCheckpoint(monitor="val_loss", dirpath=tmp)],
                           enable_checkpointing=True)
        trainer.fit(Net(), train, val)
        print(f"explicit: depth {fts.curr_depth}, epochs {trainer.current_epoch}")

    def implicit():
        fts = FinetuningScheduler(log_dir=tmp, restore_best=True,
                                  reinit_lr_cfg={"lr_scheduler_init": {
                                      "class_path": "torch.optim.lr_scheduler.StepLR",
                                      "init_args": {"step_size": 1, "gamma": 0.7}}})
        trainer = _trainer(dev, tmp, max_epochs=5, enable_checkpointing=True,
                           callbacks=[fts, FTSEarlyStopping(monitor="val_loss", patience=1, min_delta=0.5),
                                      FTSCheckpoint(monitor="val_loss", save_top_k=1, dirpath=tmp)])
        trainer.fit(Net(), train, val)
        print(f"implicit: depth {fts.curr_depth}, epochs {trainer.current_epoch}")

    return {"explicit": explicit, "implicit": implicit}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

@contextlib.contextmanager
def _yaml_default_loader():
    """CIFAR-ZOO's train.py reads its config with `yaml.load(f)` (PyYAML < 6, where the loader was optional); under
    PyYAML 6 that call is answered with the full loader the old default was."""
    import yaml
    orig = yaml.load

    def load(stream, Loader=None):
        return orig(stream, Loader=Loader or yaml.FullLoader)
    yaml.load = load
    try:
        yield
    finally:
        yaml.load = orig


def cifarzoo_train(dev):
    """BIGBALLON/CIFAR-ZOO's train.py as is (`--work-path` holding its config: PreResNet-20 with cutout and mixup
    from experiments/cutout+mixup/preresnet20, two epochs, batch 64, evaluated every epoch, no workers,
    `use_gpu` on the GPU only: DataParallel there), CIFAR-10 answered by torchvision's FakeData. The window spans
    the 2nd to the 14th `backward`: training steps (mixup, accuracy counts with `.item()`) and the epoch's end
    (its logging, test pass and checkpoint)."""
    import yaml
    root = _need_repo("cifarzoo")
    tmp = hc._tmp()
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    cfg = yaml.safe_load((root / "experiments" / "cutout+mixup" / "preresnet20" / "config.yaml").read_text())
    cfg.update(data_path=os.path.join(tmp, "data"), ckpt_path=work, epochs=2, batch_size=64, test_batch=100,
               eval_freq=1, workers=0, use_gpu=dev.type == "cuda")
    Path(work, "config.yaml").write_text(yaml.safe_dump(cfg))

    def window():
        with fc.fake_dataset("CIFAR10", 640, (3, 32, 32)), _yaml_default_loader(), \
                hc.window_on(torch.Tensor, "backward", "cifarzoo.train", "train", dev, 2, 14, stop_script=True):
            hc.run_script(root / "train.py", ["--work-path", work], str(root))
    return {"train_window": window}


def radam_train(dev):
    """LiyuanLucasLiu/RAdam's cifar_imagenet/cifar.py as is (`--arch resnet --depth 20 --optimizer radam`: its
    CIFAR ResNet-20 in DataParallel `.cuda()`, its RAdam, top-1 / top-5 accuracy with `.item()`, its progress bar
    and logger, checkpoints), two epochs of batch 64, no workers, run from a temporary folder, CIFAR-10 answered by
    torchvision's FakeData. The window spans the 2nd to the 14th `backward`: training steps and the epoch's end
    (the test pass, the logger, the checkpoint)."""
    root = _need_repo("radam")
    tmp = hc._tmp()
    argv = ["--arch", "resnet", "--depth", "20", "--optimizer", "radam", "--lr", "0.003", "--epochs", "2",
            "--train-batch", "64", "--test-batch", "100", "-j", "0", "--manualSeed", "1", "--schedule", "1",
            "-c", os.path.join(tmp, "checkpoint")]

    def window():
        _accuracy_shim(root / "cifar_imagenet")
        try:
            with cuda_env(dev), fc.fake_dataset("CIFAR10", 640, (3, 32, 32)), \
                    hc.window_on(torch.Tensor, "backward", "radam.train", "train", dev, 2, 14, stop_script=True):
                hc.run_script(root / "cifar_imagenet" / "cifar.py", argv, tmp)
        finally:
            for m in [m for m in sys.modules if m.split(".")[0] in ("utils", "progress")]:
                del sys.modules[m]
    return {"train_window": window}


def _accuracy_shim(root: Path) -> None:
    """The RAdam script's `utils.accuracy` flattens a transposed top-k mask with `.view(-1)`, which PyTorch >= 1.x
    refuses for a non-contiguous tensor; it is answered by the same top-k count with `.reshape(-1)` (the
    repository's `utils` package imported from its folder first, so that cifar.py's `from utils import ...` finds
    it; the count itself is then not the repository's line)."""
    for m in [m for m in sys.modules if m.split(".")[0] in ("utils", "progress")]:
        del sys.modules[m]
    sys.path.insert(0, str(root))
    try:
        import utils
        import utils.eval
    finally:
        sys.path.remove(str(root))

    def accuracy(output, target, topk=(1,)):
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.reshape(1, -1).expand_as(pred))
        return [correct[:k].reshape(-1).float().sum(0).mul_(100.0 / batch_size) for k in topk]
    utils.accuracy = utils.eval.accuracy = accuracy


class cuda_env(fc.cuda_on_cpu):
    """fresh_collect's `cuda_on_cpu` (the CPU smoke run only)."""


MODELS = [
    # name, package, builder
    ("harmony.integrate", "harmony", harmony_integrate),
    ("deepali.register", "deepali", deepali_register),
    ("landmarker.heatmaps", "landmarker", landmarker_heatmaps),
    ("uqbox.regression", "lightning_uq_box", uqbox_regression),
    ("uqbox.classification", "lightning_uq_box", uqbox_classification),
    ("fts.schedules", "finetuning_scheduler", fts_schedules),
    ("cifarzoo.train", "cifarzoo", cifarzoo_train),
    ("radam.train", "radam", radam_train),
]


def prepare() -> None:
    """The repositories' files and the wheels (fresh_collect's prepare), a wheel built from each source
    distribution named in SDISTS, and the collector's code copied for the GPU machine."""
    import subprocess
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
    for spec in SDISTS:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", spec, "-w", str(WHEELS_DIR)],
                       check=True)
    CODE_DIR.mkdir(parents=True, exist_ok=True)
    for name in CODE:
        shutil.copy2(Path(__file__).parent / name, CODE_DIR / name)
    print(f"code in {CODE_DIR}: " + ", ".join(sorted(p.name for p in CODE_DIR.glob("*.py"))))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        prepare()
        return 0
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh40", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
