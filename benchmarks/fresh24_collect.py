"""Record the syncs of a twenty-fifth set, `fresh24` (a sealed test set): libraries and training code nobody here read.

`fresh24` is recorded the same way as `fresh9` to `fresh23` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in a public training repository that no set and no hand label uses. It is a sealed test
set: scored for totals only, its misses never listed. The workloads were written from the libraries' documented
public API (README / docs examples, the names, signatures and docstrings they export), on synthetic data with
random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the device
explicitly, as the libraries' docs do (`.to(dev)`, `device=`; ebmkit's `Trainer(device=)`, fastai's
`DataLoaders(device=)` and gpyconform's `GPRICPWrapper(device=)` move the model and each batch to the device they
are given): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh24): ebmkit (import name `ebm`: energy-based
  models, their MCMC samplers, training losses and evaluation), easyfsl (few-shot classification: episodic
  training, transductive and fine-tuning methods), fastai (its `Learner` on tabular and image data, with metrics
  and callbacks), glasflow (RealNVP and neural-spline coupling flows), gradoptorch (conjugate gradients and Newton's
  method with line searches), gpyconform (conformal prediction intervals for GP regression) and
  imbalanced_losses (imbalanced-losses: focal losses and ranking surrogates for AP, recall at a quantile and
  partial AUC);
  + fastcore, fasttransform, fastprogress (1.0.3: later ones import fasthtml), fastdownload, plum-dispatch and
  beartype (fastai's), gpytorch and linear-operator (gpyconform's: the GPU image's gpytorch is older), thop
  (SimCLR's). Their other needs (numpy, scipy, scikit-learn, pandas, matplotlib, pillow, torchvision, jaxtyping,
  tqdm) are on the GPU machine. gradoptorch's BFGS, ebmkit's two-sample test and the other calls that failed on
  the GPU in a first call were left out or given device inputs (docs/accuracy.md says which).
- Training repository at a pinned commit, copied by `prepare` into .bench/fresh24/repos/<name>:
  leftthomas/SimCLR (main.py as is: SimCLR pre-training of a ResNet-50 with the NT-Xent loss and a weighted kNN
  test, on synthetic CIFAR-10 files).

    python benchmarks/fresh24_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh24_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh24 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh24 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import math
import os
import shutil
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
BENCH_DIR = ac.REPO / ".bench" / "fresh24"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh24", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh24/repos/<name>)
REPOS = {
    "simclr": ("leftthomas/SimCLR", "cee178b6cab1efab67f8b527a0cff91c9e793f5c", ["main.py", "model.py", "utils.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["ebmkit==0.16.0", "easyfsl==1.5.0", "fastai==2.8.12", "fastcore==2.2.41", "fasttransform==0.0.5",
          "fastprogress==1.0.3", "fastdownload==0.0.8", "plum-dispatch==2.9.0", "beartype==0.23.1",
          "glasflow==0.4.1", "gradoptorch==0.1.1", "gpyconform==0.2.0.post1", "gpytorch==1.15.1",
          "linear-operator==0.6.1", "imbalanced-losses==0.6.0", "thop==0.1.1.post2209072238"]
SDISTS: list = []
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"ebmkit": "ebmkit", "easyfsl": "easyfsl", "fastai": "fastai", "fastcore": "fastcore",
         "glasflow": "glasflow", "gradoptorch": "gradoptorch", "gpyconform": "gpyconform",
         "imbalanced_losses": "imbalanced-losses", "gpytorch": "gpytorch", "linear_operator": "linear-operator",
         "jaxtyping": "jaxtyping", "numpy": "numpy", "scipy": "scipy", "scikit_learn": "scikit-learn",
         "pandas": "pandas", "torchvision": "torchvision", "thop": "thop"}
CODE = ["fresh24_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _classes(n, d=20, k=4, seed=0):
    """n points of k Gaussian classes in d dimensions (CPU tensors): features, labels."""
    g = torch.Generator().manual_seed(seed)
    centres = 2.0 * torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    return centres[y] + torch.randn(n, d, generator=g), y


def _moons(n, seed=0):
    """Two interleaved half-circles with noise (CPU tensor, (n, 2))."""
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(n, generator=g) * math.pi
    lab = torch.randint(0, 2, (n,), generator=g)
    x = torch.stack([torch.cos(t) + lab * 1.0 - 0.5 * lab, torch.sin(t) * (1 - 2 * lab) + 0.25 * lab], 1)
    return x + 0.08 * torch.randn(n, 2, generator=g), lab


def _images(n, k=10, side=28, ch=3, seed=0):
    """n synthetic images (k classes: a bright square whose place and colour follow the class), CPU tensors."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, k, (n,), generator=g)
    x = 0.3 * torch.randn(n, ch, side, side, generator=g)
    for i in range(n):
        c = int(y[i])
        r, q = 2 + (c % 4) * 5, 2 + (c // 4) * 7
        x[i, c % ch, r:r + 8, q:q + 8] += 2.0
    return x, y


# ============================================================================================
# Libraries
# ============================================================================================

# -- ebmkit (import name `ebm`): the README's energy-based models: an `MLPEnergy` trained by `ebm.Trainer(device=)`
#    with persistent contrastive divergence (Langevin negatives from a `ReplayBuffer`), EMA and clipping, then
#    sampled; the MCMC samplers (`MALA`, `AdaptiveMALA`, `HMC`, `NUTS`, `ParallelTempering`, `SVGD`) on closed-form
#    targets with the diagnostics of `ebm.eval`; the MCMC-free losses (denoising and sliced score matching, energy
#    discrepancy, noise-contrastive estimation); exact-likelihood flows and AIS; a Bernoulli RBM by Gibbs; the
#    evaluation metrics (calibration, OOD AUROC, FID-style distance, precision / recall) -------------------------

def ebmkit_models(dev):
    import ebm
    import ebm.eval as ev

    x, _ = _moons(2048)
    xd = x.to(dev)

    def cd_train():
        torch.manual_seed(0)
        energy = ebm.nets.MLPEnergy(dim=2, hidden=(64, 64))
        sampler = ebm.LangevinDynamics(step_size=1e-2, steps=20)
        loss_fn = ebm.ContrastiveDivergence(sampler, buffer=ebm.ReplayBuffer(2048, (2,)))
        trainer = ebm.Trainer(energy, loss_fn, lr=1e-3, device=dev, ema_decay=0.99, grad_clip_norm=1.0)
        hist = trainer.fit(xd, steps=30, batch_size=128, verbose=False)
        samples = sampler.sample(energy, torch.randn(500, 2, device=dev), steps=40)
        print(f"cd: last {hist[-1]}, mmd {ev.mmd(samples, xd[:500]):.4f}")

    def samplers():
        torch.manual_seed(0)
        target = ebm.nets.GaussianMixtureEnergy(torch.tensor([[-2.0, 0.0], [2.0, 0.0]], device=dev), std=0.7).to(dev)
        funnel = ebm.nets.FunnelEnergy(dim=3).to(dev)
        res = {}
        for name, s, e, d in (("mala", ebm.MALA(step_size=0.05, steps=60), target, 2),
                              ("amala", ebm.AdaptiveMALA(step_size=0.1, steps=60, warmup=40), target, 2),
                              ("hmc", ebm.HMC(step_size=0.1, leapfrog_steps=5, steps=30), funnel, 3),
                              ("nuts", ebm.NUTS(step_size=0.1, steps=20, warmup=20, max_depth=5), funnel, 3),
                              ("pt", ebm.ParallelTempering(ebm.MALA(step_size=0.05, steps=1),
                                                           temperatures=(1.0, 2.0, 4.0), steps=30), target, 2),
                              ("svgd", ebm.SVGD(step_size=0.3, steps=60), target, 2)):
            x0 = torch.randn(128, d, device=dev)
            traj = s.sample(e, x0, return_trajectory=True) if name in ("mala", "hmc") else None
            out = s.sample(e, x0)
            res[name] = round(float(e(out).mean()), 3)
            if traj is not None:
                res[name + "_ess"] = ev.effective_sample_size(traj).mean().item()
                res[name + "_rhat"] = ev.split_rhat(traj).max().item()
            res[name + "_ksd"] = round(ev.kernel_stein_discrepancy(e, out[:64]), 4)
        print(f"samplers {res}")

    def score_losses():
        res = {}
        for name, loss_fn in (("dsm", ebm.DenoisingScoreMatching(sigma=0.1)),
                              ("ssm", ebm.SlicedScoreMatching(n_projections=2)),
                              ("ed", ebm.EnergyDiscrepancy(sigma=0.5, m_particles=4)),
                              ("nce", ebm.NoiseContrastiveEstimation(noise_ratio=2))):
            torch.manual_seed(0)
            energy = ebm.nets.MLPEnergy(dim=2, hidden=(64, 64))
            trainer = ebm.Trainer(energy, loss_fn, lr=1e-3, device=dev)
            hist = trainer.fit(xd, steps=25, batch_size=128, verbose=False)
            res[name] = hist[-1]
        print(f"score losses {res}")

    def flows():
        res = {}
        for name, flow in (("affine", ebm.nets.AffineCouplingFlow(2, n_layers=4, hidden=32)),
                           ("spline", ebm.nets.NeuralSplineCouplingFlow(2, n_layers=3, hidden=32, num_bins=6))):
            torch.manual_seed(0)
            flow = flow.to(dev)
            opt = torch.optim.Adam(flow.parameters(), lr=2e-3)
            for _ in range(25):
                xb = xd[torch.randint(0, len(xd), (128,), device=dev)]
                loss = flow(xb).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            res[name] = round(loss.item(), 4)
        energy = ebm.nets.MLPEnergy(dim=2, hidden=(32, 32)).to(dev)
        base = torch.distributions.Independent(torch.distributions.Normal(torch.zeros(2, device=dev),
                                                                          torch.ones(2, device=dev)), 1)
        ais = ebm.ais_log_z(energy, (2,), base=base, n_temps=60, n_chains=32)
        print(f"flows {res}, ais {ais}")

    def rbm():
        torch.manual_seed(0)
        g = torch.Generator().manual_seed(1)
        bars = torch.zeros(512, 16)
        for i in range(512):
            r = int(torch.randint(0, 4, (1,), generator=g))
            bars[i].view(4, 4)[r] = 1.0
        bars = bars.to(dev)
        model = ebm.nets.RBM(16, 8)
        loss_fn = ebm.ContrastiveDivergence(ebm.GibbsSampler(steps=1))
        trainer = ebm.Trainer(model, loss_fn, lr=5e-3, device=dev)
        hist = trainer.fit(bars, steps=30, batch_size=64, verbose=False)
        gwg = ebm.GibbsWithGradients(steps=20).sample(model, torch.bernoulli(torch.full((64, 16), 0.5, device=dev)))
        print(f"rbm {hist[-1]}, gwg mean {gwg.mean().item():.3f}")

    def metrics():
        torch.manual_seed(0)
        feats, lab = _classes(600, d=8, k=3)
        feats, lab = feats.to(dev), lab.to(dev)
        clf = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 3)).to(dev)
        opt = torch.optim.Adam(clf.parameters(), lr=1e-2)
        for _ in range(20):
            loss = F.cross_entropy(clf(feats), lab)
            opt.zero_grad()
            loss.backward()
            opt.step()
        logits = clf(feats).detach()
        t = ev.temperature_scale(logits, lab, max_iter=30)
        ece = ev.expected_calibration_error(torch.softmax(logits / t, -1), lab)
        energy = ebm.nets.MLPEnergy(dim=2, hidden=(32, 32)).to(dev)
        auroc = ev.ood_auroc(energy, xd[:256], 4 * torch.randn(256, 2, device=dev))
        gen = xd[:400] + 0.1 * torch.randn(400, 2, device=dev)
        fd = ev.frechet_distance(xd[400:800], gen)
        pr = ev.precision_recall(xd[400:800], gen, k=3)
        print(f"ece {ece:.4f}, auroc {auroc:.3f}, fd {fd:.4f}, pr {pr}")
    return {"cd_train": cd_train, "samplers": samplers, "score_losses": score_losses, "flows": flows, "rbm": rbm,
            "metrics": metrics}


# -- easyfsl: the notebooks' few-shot classification: episodic training of `PrototypicalNetworks` on tasks drawn
#    from a `WrapFewShotDataset` (by hand: its `TaskSampler` no longer builds under torch 2.x), then
#    `evaluate(model, tasks, device=)`; the transductive and fine-tuning methods (SimpleShot, BD-CSPN, TIM, PT-MAP,
#    LaplacianShot, Transductive Fine-Tuning, Fine-Tune, Matching Networks) evaluated on test tasks with the same
#    backbone --------------------------------------------------------------------------------------------------------

def easyfsl_fewshot(dev):
    from easyfsl.datasets import WrapFewShotDataset
    from easyfsl.methods import (
        BDCSPN,
        PTMAP,
        TIM,
        Finetune,
        LaplacianShot,
        MatchingNetworks,
        PrototypicalNetworks,
        SimpleShot,
        TransductiveFinetuning,
    )
    from easyfsl.utils import evaluate

    class Images(torch.utils.data.Dataset):
        def __init__(self, n, seed):
            self.x, self.y = _images(n, k=10, side=28, ch=3, seed=seed)

        def __len__(self):
            return len(self.y)

        def __getitem__(self, i):
            return self.x[i], int(self.y[i])

    train_set = WrapFewShotDataset(Images(400, 0))
    test_set = WrapFewShotDataset(Images(300, 1))

    def loader(ds, n_tasks, n_way=5, n_shot=5, n_query=5, seed=0):
        """Few-shot tasks in the shape `TaskSampler.episodic_collate_fn` gives (support images, support labels,
        query images, query labels, class ids): its sampler calls `Sampler.__init__(data_source=None)`, which torch
        no longer takes, so the tasks are drawn here the same way (n_way classes, n_shot + n_query items each)."""
        g = torch.Generator().manual_seed(seed)
        labels = torch.tensor(ds.get_labels())
        tasks = []
        for _ in range(n_tasks):
            classes = torch.randperm(int(labels.max()) + 1, generator=g)[:n_way].tolist()
            si, sl, qi, ql = [], [], [], []
            for j, c in enumerate(classes):
                idx = (labels == c).nonzero().flatten()
                idx = idx[torch.randperm(len(idx), generator=g)[:n_shot + n_query]].tolist()
                items = [ds[i][0] for i in idx]
                si += items[:n_shot]
                qi += items[n_shot:]
                sl += [j] * n_shot
                ql += [j] * n_query
            tasks.append((torch.stack(si), torch.tensor(sl), torch.stack(qi), torch.tensor(ql), classes))
        return tasks

    def backbone():
        torch.manual_seed(0)
        return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3,
                             padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten()).to(dev)

    trained = {}

    def episodic():
        model = PrototypicalNetworks(backbone()).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for si, sl, qi, ql, _ in loader(train_set, 12):
            model.process_support_set(si.to(dev), sl.to(dev))
            loss = F.cross_entropy(model(qi.to(dev)), ql.to(dev))
            opt.zero_grad()
            loss.backward()
            opt.step()
        acc = evaluate(model, loader(test_set, 6), device=str(dev), use_tqdm=False)
        trained["bb"] = model.backbone
        print(f"protonet accuracy {acc:.3f}")

    def transductive():
        bb = trained.get("bb") or backbone()
        res = {}
        for name, model in (("simpleshot", SimpleShot(bb)), ("bdcspn", BDCSPN(bb)),
                            ("tim", TIM(bb, fine_tuning_steps=10)), ("ptmap", PTMAP(bb, fine_tuning_steps=5)),
                            ("laplacian", LaplacianShot(bb, inference_steps=10)),
                            ("tft", TransductiveFinetuning(bb, fine_tuning_steps=5)),
                            ("finetune", Finetune(bb, fine_tuning_steps=10)),
                            ("matching", MatchingNetworks(bb, feature_dimension=32))):
            model = model.to(dev)
            res[name] = round(evaluate(model, loader(test_set, 3), device=str(dev), use_tqdm=False), 3)
        print(f"transductive {res}")
    return {"episodic": episodic, "transductive": transductive}


# -- fastai: its tutorials' `Learner` on the device (`DataLoaders(device=)`): a tabular classifier
#    (`TabularDataLoaders.from_df` with Categorify / FillMissing / Normalize, `tabular_learner`, accuracy, ROC AUC,
#    F1 and Matthews metrics, `fit_one_cycle`, `get_preds`, `validate`) and a regression (rmse, R2, `fit_flat_cos`,
#    `EarlyStoppingCallback`, `SaveModelCallback`); an image classifier from a folder of synthetic PNGs
#    (`ImageDataLoaders.from_folder`, an `xresnet18` of random weights, `MixUp`, label smoothing, gradient clipping,
#    `lr_find`, `ClassificationInterpretation`) ----------------------------------------------------------------

def fastai_learners(dev):
    import numpy as np
    import pandas as pd

    def frame(n, seed=0):
        rng = np.random.default_rng(seed)
        df = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n), "c": rng.uniform(size=n),
                           "cat1": rng.choice(["x", "y", "z"], n), "cat2": rng.choice(["p", "q"], n)})
        df.loc[rng.choice(n, n // 20, replace=False), "b"] = np.nan
        df["y"] = ((df.a + (df.cat1 == "x") * 1.5 - df.c) > 0).map({True: "pos", False: "neg"})
        df["t"] = df.a * 2 - df.c + (df.cat2 == "p") + rng.normal(scale=0.1, size=n)
        return df

    def tabular():
        from fastai.tabular.all import (
            AccumMetric,
            Categorify,
            CategoryBlock,
            F1Score,
            FillMissing,
            MatthewsCorrCoef,
            Normalize,
            RocAucBinary,
            TabularDataLoaders,
            accuracy,
            tabular_learner,
        )
        torch.manual_seed(0)
        df = frame(1200)
        dls = TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, Normalize], cat_names=["cat1", "cat2"],
                                         cont_names=["a", "b", "c"], y_names="y", y_block=CategoryBlock(),
                                         valid_idx=list(range(1000, 1200)), bs=64, device=dev)
        learn = tabular_learner(dls, layers=[64, 32], metrics=[accuracy, RocAucBinary(), F1Score(),
                                                               MatthewsCorrCoef()])
        del AccumMetric
        with learn.no_bar():
            learn.fit_one_cycle(2, 1e-2)
            preds, targs = learn.get_preds()
            print(f"tabular {learn.validate()}, preds {tuple(preds.shape)}")

    def regression():
        from fastai.tabular.all import (
            Categorify,
            EarlyStoppingCallback,
            FillMissing,
            Normalize,
            R2Score,
            SaveModelCallback,
            TabularDataLoaders,
            rmse,
            tabular_learner,
        )
        torch.manual_seed(0)
        df = frame(1000, seed=1)
        dls = TabularDataLoaders.from_df(df, procs=[Categorify, FillMissing, Normalize], cat_names=["cat1", "cat2"],
                                         cont_names=["a", "b", "c"], y_names="t", valid_idx=list(range(800, 1000)),
                                         bs=64, device=dev)
        learn = tabular_learner(dls, layers=[32], metrics=[rmse, R2Score()], path=hc._tmp())
        with learn.no_bar():
            learn.fit_flat_cos(3, 1e-2, cbs=[EarlyStoppingCallback(patience=1), SaveModelCallback(fname="best")])
            print(f"regression {learn.validate()}")

    def vision():
        from fastai.vision.all import (
            ClassificationInterpretation,
            GradientClip,
            ImageDataLoaders,
            LabelSmoothingCrossEntropyFlat,
            Learner,
            MixUp,
            Resize,
            accuracy,
            error_rate,
            xresnet18,
        )
        from PIL import Image
        torch.manual_seed(0)
        root = Path(hc._tmp())
        x, y = _images(160, k=3, side=32, ch=3, seed=2)
        for i in range(160):
            folder = root / ("valid" if i >= 128 else "train") / f"c{int(y[i])}"
            folder.mkdir(parents=True, exist_ok=True)
            arr = ((x[i].clamp(-1, 3) + 1) * 60).byte().permute(1, 2, 0).numpy()
            Image.fromarray(arr).save(folder / f"{i:03d}.png")
        dls = ImageDataLoaders.from_folder(root, train="train", valid="valid", item_tfms=Resize(32), bs=16,
                                           device=dev, num_workers=0)
        learn = Learner(dls, xresnet18(n_out=3, c_in=3), loss_func=LabelSmoothingCrossEntropyFlat(),
                        metrics=[accuracy, error_rate], cbs=[MixUp(0.4), GradientClip(1.0)], path=root)
        with learn.no_bar():
            learn.lr_find(num_it=8, show_plot=False)
            learn.fit_one_cycle(2, 1e-3)
            interp = ClassificationInterpretation.from_learner(learn)
            print(f"vision {learn.validate()}, confusion {interp.confusion_matrix().tolist()}")
    return {"tabular": tabular, "regression": regression, "vision": vision}


# -- glasflow: the README's `RealNVP(n_inputs=, n_transforms=, n_neurons=, batch_norm_between_transforms=True)`
#    and its `CouplingNSF` trained by the examples' loop (`-flow.log_prob(x).mean()`), conditional on a context,
#    then `sample`, `sample_and_log_prob` and `forward_and_log_prob` ----------------------------------------------

def glasflow_flows(dev):
    from glasflow import CouplingNSF, RealNVP

    x, lab = _moons(2048, seed=3)
    xd, cd = x.to(dev), lab.float().unsqueeze(1).to(dev)

    def train(flow, cond, steps=20):
        flow = flow.to(dev)
        opt = torch.optim.Adam(flow.parameters(), lr=2e-3)
        for _ in range(steps):
            idx = torch.randint(0, len(xd), (256,), device=dev)
            flow.train()
            loss = -flow.log_prob(xd[idx], conditional=cd[idx] if cond else None).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        flow.eval()
        with torch.no_grad():
            val = -flow.log_prob(xd[:512], conditional=cd[:512] if cond else None).mean().item()
        return flow, val

    def realnvp():
        torch.manual_seed(0)
        flow, val = train(RealNVP(n_inputs=2, n_transforms=4, n_neurons=32, batch_norm_between_transforms=True),
                          False)
        with torch.no_grad():
            s = flow.sample(500)
            s2, lp = flow.sample_and_log_prob(200)
            z, ld = flow.forward_and_log_prob(xd[:200])
        print(f"realnvp nll {val:.3f}, sample mean {s.mean(0).tolist()}, lp {lp.mean().item():.3f}")

    def nsf():
        torch.manual_seed(0)
        flow, val = train(CouplingNSF(n_inputs=2, n_transforms=3, n_neurons=32, num_bins=6), False)
        with torch.no_grad():
            s = flow.sample(300)
        print(f"nsf nll {val:.3f}, sample std {s.std(0).tolist()}")

    def conditional():
        torch.manual_seed(0)
        flow, val = train(RealNVP(n_inputs=2, n_transforms=3, n_conditional_inputs=1, n_neurons=32), True)
        with torch.no_grad():
            s = flow.sample(200, conditional=torch.ones(200, 1, device=dev))
        print(f"conditional nll {val:.3f}, sample mean {s.mean(0).tolist()}")
    return {"realnvp": realnvp, "nsf": nsf, "conditional": conditional}


# -- gradoptorch: the README's two interfaces: `optimizer(f, x_guess, opt_method=, ls_method=)` on a Rosenbrock
#    function and a logistic regression's loss on the device, for each method and line search; and
#    `optimize_module(model, loss_fn, opt_method=, ls_method=)` fitting a small network ------------------------------

def gradoptorch_fit(dev):
    from gradoptorch import optimize_module, optimizer

    def rosen(x):
        return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()

    feats, lab = _classes(400, d=6, k=2, seed=4)
    fd, ld = feats.to(dev), lab.float().to(dev)

    def logistic(w):
        return F.binary_cross_entropy_with_logits(fd @ w[:-1] + w[-1], ld) + 1e-3 * (w ** 2).sum()

    def functional():
        res = {}
        for m, ls in (("grad_exact", "back_tracking"), ("conj_grad_fr", "quad_search"),
                      ("conj_grad_pr", "back_tracking"), ("conj_grad_pr", "constant")):
            if True:
                x0 = torch.tensor([-1.2, 1.0, -0.5, 0.8], device=dev)
                xo, hist = optimizer(rosen, x0, opt_method=m, ls_method=ls)
                res[f"{m}/{ls}"] = round(float(rosen(xo)), 5)
        print(f"rosenbrock {res}")

    def newton():
        res = {}
        for ls in ("back_tracking", "quad_search"):
            xo, hist = optimizer(logistic, torch.zeros(7, device=dev), opt_method="newton_exact", ls_method=ls)
            res[ls] = round(float(logistic(xo)), 5)
        xo, hist = optimizer(logistic, torch.zeros(7, device=dev), opt_method="conj_grad_fr", ls_method="back_tracking")
        res["cg"] = round(float(logistic(xo)), 5)
        print(f"logistic {res}")

    def module():
        res = {}
        xs = torch.linspace(-2, 2, 100, device=dev).unsqueeze(1)
        ys = torch.sin(2 * xs) + 0.05 * torch.randn_like(xs)
        for m, ls in (("conj_grad_pr", "back_tracking"),):
            torch.manual_seed(0)
            model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1)).to(dev)
            optimize_module(model, lambda mod: F.mse_loss(mod(xs), ys), opt_method=m, ls_method=ls)
            res[m] = round(F.mse_loss(model(xs), ys).item(), 5)
        print(f"module {res}")
    return {"functional": functional, "newton": newton, "module": module}


# -- gpyconform: conformal prediction intervals for GP regression: the docs' `ExactGPCP` subclass (transductive,
#    symmetric and asymmetric) with hyperparameters fitted by the GPyTorch loop, its `PredictionIntervals`
#    (`pis(conf)`, `pis.evaluate(conf, y=)`); and `GPRICPWrapper(model, cal_inputs, cal_targets, device=)`
#    (inductive) around an exact GP, `predict(test_inputs, confs=)` ----------------------------------------------

def gpyconform_intervals(dev):
    import gpyconform
    import gpytorch

    g = torch.Generator().manual_seed(5)
    x = torch.rand(260, 2, generator=g)
    y = torch.sin(4 * x[:, 0]) + x[:, 1] ** 2 + 0.1 * torch.randn(260, generator=g)
    x, y = x.to(dev), y.to(dev)
    tr, cal, te = slice(0, 120), slice(120, 200), slice(200, 260)

    class GPCP(gpyconform.ExactGPCP):
        def __init__(self, train_x, train_y, likelihood, cpmode="symmetric"):
            super().__init__(train_x, train_y, likelihood, cpmode=cpmode)
            self.mean_module = gpytorch.means.ZeroMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        def forward(self, xx):
            return gpytorch.distributions.MultivariateNormal(self.mean_module(xx), self.covar_module(xx))

    def fit(model, lik, steps=30):
        model.train()
        lik.train()
        opt = torch.optim.Adam(model.parameters(), lr=0.1)
        mll = gpytorch.mlls.ExactMarginalLogLikelihood(lik, model)
        for _ in range(steps):
            loss = -mll(model(*model.train_inputs), model.train_targets)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        lik.eval()

    def transductive():
        torch.manual_seed(0)
        lik = gpytorch.likelihoods.GaussianLikelihood().to(dev)
        model = GPCP(x[tr], y[tr], lik).to(dev)
        fit(model, lik)
        res = {}
        for mode in ("symmetric", "asymmetric"):
            model.cpmode = mode
            with torch.no_grad():
                pis = model(x[te], confs=[0.8, 0.9, 0.95])
            res[mode] = pis.evaluate(0.9, y=y[te])
            res[mode + "_w"] = pis(0.95)[:3].tolist()
        print(f"transductive {res}")

    def inductive():
        torch.manual_seed(0)
        lik = gpytorch.likelihoods.GaussianLikelihood().to(dev)
        model = GPCP(x[tr], y[tr], lik, cpmode=None).to(dev)
        fit(model, lik)
        res = {}
        for mode in ("symmetric", "asymmetric"):
            icp = gpyconform.GPRICPWrapper(model, x[cal], y[cal], cpmode=mode, device=dev).calibrate(gamma=2.0)
            pis = icp.predict(x[te], confs=[0.9, 0.95])
            res[mode] = pis.evaluate(0.9, y=y[te])
            res[mode + "_b"] = icp.predict(x[te], confs=[0.9], batch_size=16).evaluate(0.9, y=y[te])
        print(f"inductive {res}")
    return {"transductive": transductive, "inductive": inductive}


# -- imbalanced_losses (imbalanced-losses): the README's losses in a training loop on imbalanced synthetic data:
#    `SigmoidFocalLoss`, `SoftmaxFocalLoss` (per-class alpha, `mean_positive` with a background class, label
#    smoothing, an ignored index, on (N, C) and (N, C, H, W) logits), the ranking surrogates `SmoothAPLoss`,
#    `RecallAtQuantileLoss` and `PAUCAtBudgetLoss` (binary and multi-class, with their memory queue and
#    `return_per_class=True`), and `LossWarmupWrapper` driven by its epoch and batch hooks ------------------------

def imbalanced_losses_train(dev):
    from imbalanced_losses import (
        LossWarmupWrapper,
        PAUCAtBudgetLoss,
        RecallAtQuantileLoss,
        SigmoidFocalLoss,
        SmoothAPLoss,
        SoftmaxFocalLoss,
    )

    g = torch.Generator().manual_seed(6)
    feats = torch.randn(4000, 12, generator=g)
    score = feats[:, 0] + 0.5 * feats[:, 1]
    ybin = (score > 2.0).long()                                      # about 3% positives
    ymc = torch.bucketize(score, torch.tensor([-0.5, 1.0, 2.2]))     # 4 skewed classes
    fd, ybd, ymd = feats.to(dev), ybin.to(dev), ymc.to(dev)

    def net(out):
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, out)).to(dev)

    def loop(model, loss_of, steps=20, bs=256):
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
        for i in range(steps):
            idx = torch.randint(0, len(fd), (bs,), device=dev)
            loss = loss_of(model(fd[idx]), idx, i)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss.item()

    def focal():
        res = {}
        sfl = SigmoidFocalLoss(alpha=0.25, gamma=2.0)
        res["sigmoid"] = loop(net(1), lambda o, idx, i: sfl(o, ybd[idx].float().unsqueeze(1)))
        sm = SoftmaxFocalLoss(gamma=2.0, alpha=torch.tensor([0.25, 0.5, 0.75, 1.0], device=dev),
                              reduction="mean_positive", background_class=0)
        res["softmax_pos"] = loop(net(4), lambda o, idx, i: sm(o, ymd[idx]))
        ls = SoftmaxFocalLoss(gamma=1.5, label_smoothing=0.1, ignore_index=-100)

        def masked(o, idx, i):
            t = ymd[idx].clone()
            t[::7] = -100
            return ls(o, t)
        res["smoothing"] = loop(net(4), masked)
        seg = nn.Conv2d(3, 4, 3, padding=1).to(dev)
        img = torch.randn(8, 3, 16, 16, device=dev)
        tgt = (img[:, 0] > 1.0).long() + (img[:, 1] > 1.2).long()
        tgt[:, :2] = -100
        opt = torch.optim.SGD(seg.parameters(), lr=0.1)
        for _ in range(10):
            loss = SoftmaxFocalLoss(gamma=2.0, reduction="mean_positive")(seg(img), tgt)
            opt.zero_grad()
            loss.backward()
            opt.step()
        res["spatial"] = loss.item()
        print(f"focal {res}")

    def ranking():
        res = {}
        ap1 = SmoothAPLoss(num_classes=1, queue_size=512)
        res["ap_bin"] = loop(net(1), lambda o, idx, i: ap1(o, ybd[idx]))
        ap4 = SmoothAPLoss(num_classes=4, queue_size=1024, temperature=0.01)
        res["ap_mc"] = loop(net(4), lambda o, idx, i: ap4(o, ymd[idx]))
        rq = RecallAtQuantileLoss(num_classes=4, quantile=0.05, queue_size=1024)
        res["recall_q"] = loop(net(4), lambda o, idx, i: rq(o, ymd[idx]))
        pa = PAUCAtBudgetLoss(num_classes=4, alpha=0.0, beta=0.05, queue_size=1024)
        res["pauc"] = loop(net(4), lambda o, idx, i: pa(o, ymd[idx]))
        pb = PAUCAtBudgetLoss(num_classes=1, alpha=0.0, beta=0.02, queue_size=512, surrogate="pairwise")
        res["pauc_bin"] = loop(net(1), lambda o, idx, i: pb(o, ybd[idx]))
        model = net(4)
        with torch.no_grad():
            loss, per_class, valid = ap4(model(fd[:512]), ymd[:512], return_per_class=True)
        res["per_class"] = {c: round(float(per_class[c]), 4) for c in valid.nonzero(as_tuple=True)[0].tolist()}
        print(f"ranking {res}")

    def warmup():
        model = net(4)
        loss_fn = LossWarmupWrapper(warmup_loss=nn.CrossEntropyLoss(), main_loss=SmoothAPLoss(num_classes=4,
                                    queue_size=512), warmup_epochs=1, blend_epochs=1, temp_start=0.5, temp_end=0.01,
                                    temp_decay_steps=50)
        opt = torch.optim.Adam(model.parameters(), lr=3e-3)
        step, log = 0, []
        for epoch in range(4):
            loss_fn.on_train_epoch_start(epoch)
            for _ in range(6):
                loss_fn.on_train_batch_start(step)
                idx = torch.randint(0, len(fd), (256,), device=dev)
                loss = loss_fn(model(fd[idx]), ymd[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                step += 1
            log.append((round(loss.item(), 4), loss_fn.main_weight, loss_fn.current_temperature))
        print(f"warmup {log}")
    return {"focal": focal, "ranking": ranking, "warmup": warmup}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _cifar(folder: Path, n_train: int = 640, n_test: int = 200, seed: int = 0) -> None:
    """Synthetic CIFAR-10 batch files in torchvision's layout (cifar-10-batches-py/data_batch_1..5, test_batch,
    batches.meta): uint8 images whose mean colour follows the label (as fresh22's)."""
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
    """torchvision's md5 checks of the synthetic CIFAR files, skipped (the script asks `download=True`)."""

    def __enter__(self):
        import torchvision.datasets.cifar as cifar
        self.cifar, self.orig = cifar, cifar.check_integrity
        cifar.check_integrity = lambda *a, **k: True

    def __exit__(self, *exc):
        self.cifar.check_integrity = self.orig


class _cuda_on_cpu:
    """The CPU smoke run only: the script's unconditional `.cuda()` calls leave tensors and modules where they are
    (on the GPU nothing is changed)."""

    def __init__(self, dev):
        self.on = dev.type != "cuda"

    def __enter__(self):
        if self.on:
            self.t, self.m = torch.Tensor.cuda, nn.Module.cuda
            torch.Tensor.cuda = lambda self, *a, **k: self
            nn.Module.cuda = lambda self, *a, **k: self

    def __exit__(self, *exc):
        if self.on:
            torch.Tensor.cuda, nn.Module.cuda = self.t, self.m


def _simclr(dev, name: str, extra: list, stop: int):
    """leftthomas/SimCLR's main.py as is (`--epochs 2`, its ResNet-50 encoder and projection head, NT-Xent loss,
    the weighted kNN test on a feature bank; its loaders take 16 workers and pinned memory; thop's FLOP count at
    the start), run from a temporary folder holding synthetic CIFAR-10 files in ./data. The window spans the 2nd
    to the `stop`-th `backward`: the first epoch's remaining steps (its per-step loss reads), its kNN test pass,
    the statistics written with pandas and a checkpoint, and the second epoch's start."""
    root = _need_repo("simclr")
    tmp = Path(hc._tmp())
    _cifar(tmp / "data")
    argv = ["--epochs", "2", *extra]

    def window():
        sys.path.insert(0, str(root))
        try:
            with _no_md5(), _cuda_on_cpu(dev), hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, stop,
                                                            stop_script=True):
                hc.run_script(root / "main.py", argv, str(tmp))
        finally:
            sys.path.remove(str(root))
            for m in ("utils", "model"):
                sys.modules.pop(m, None)
    return {"train_window": window}


def simclr_default(dev):
    """Its recipe at a smaller batch (`--batch_size 64 --k 200`, feature dimension 128, temperature 0.5): 10 steps
    an epoch on 640 pictures; window 2nd to 14th `backward`."""
    return _simclr(dev, "simclr.default", ["--batch_size", "64"], 14)


def simclr_sharp(dev):
    """A sharper temperature and a smaller head and neighbourhood (`--temperature 0.1 --feature_dim 64 --k 20
    --batch_size 32`): 20 steps an epoch; window 2nd to 24th `backward`."""
    return _simclr(dev, "simclr.sharp", ["--temperature", "0.1", "--feature_dim", "64", "--k", "20",
                                         "--batch_size", "32"], 24)


MODELS = [
    # name, package, builder
    ("ebmkit.models", "ebm", ebmkit_models),
    ("easyfsl.fewshot", "easyfsl", easyfsl_fewshot),
    ("fastai.learners", "fastai", fastai_learners),
    ("glasflow.flows", "glasflow", glasflow_flows),
    ("gradoptorch.fit", "gradoptorch", gradoptorch_fit),
    ("gpyconform.intervals", "gpyconform", gpyconform_intervals),
    ("imbalanced_losses.train", "imbalanced_losses", imbalanced_losses_train),
    ("simclr.default", "simclr", simclr_default),
    ("simclr.sharp", "simclr", simclr_sharp),
]


def prepare() -> None:
    """The repositories' files and the wheels (fresh_collect's prepare), the source-only ones built here, and the
    collector's code copied for the GPU machine."""
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
    missing = [s for s in SDISTS if not list(WHEELS_DIR.glob(s.split("==")[0].lower().replace("-", "_") + "-"
                                                               + s.split("==")[1] + "-*.whl"))]
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(WHEELS_DIR), *missing],
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh24", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
