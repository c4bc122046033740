"""Record the syncs of a twenty-seventh set, `fresh26` (sealed test set): libraries and training code nobody here read.

`fresh26` is recorded the same way as `fresh9` to `fresh25` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in a public training repository that no set and no hand label uses. It is a sealed test
set: scored for totals only, its misses never listed. The workloads were written from the libraries' documented
public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic data with
random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the device
explicitly, as the libraries' docs do (`.to(dev)`, `device=`; bayesian-changepoint's likelihoods (`device=`) and
autofrk's `AutoFRK(device=)` / `MRTS(device=)` build their tensors on the device they are given): no workload runs
under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh26), all names a to l: adv_lib (adv-lib:
  adversarial attacks, minimal-norm, budget and sparse), autoFRK (autofrk: automatic fixed rank kriging),
  bayesian_changepoint_detection (bayesian-changepoint: online and offline Bayesian changepoint detection),
  coral_pytorch (coral-pytorch: CORAL and CORN ordinal regression), dlordinal (deep ordinal classification:
  soft-label and ordinal losses, output layers) and ivon (ivon-opt: the IVON variational optimiser); + colorlog
  (autofrk's) and deprecated (dlordinal's). adv-lib imports visdom (a plotting server's client, not on the GPU
  machine and never used here): a stand-in module is put in its place when it is missing. Their other needs (numpy,
  scipy, pandas, scikit-learn, scikit-image, torchvision, tqdm, pillow, wrapt) are on the GPU machine. Two more
  libraries were left out: bbobtorch (BBOB benchmark functions) after the CPU smoke run (it calls `torch.qr`,
  removed from torch), and loss_landscapes (loss-landscapes: loss surfaces in parameter subspaces) after both its
  modes failed in their warm-up on the GPU ("Expected all tensors to be on the same device" inside the library).
- The training repository at a pinned commit, copied by `prepare` into .bench/fresh26/repos/<name>:
  kamenbliznashki/normalizing_flows (maf.py as is: a MAF, a RealNVP and a MADE mixture of Gaussians on its own
  synthetic TOY density). Its bnaf.py (`ReduceLROnPlateau(verbose=)`, gone from torch) and maf.py's MOONS dataset
  failed in the CPU smoke run and were left out; no second repository was added for want of time.

    python benchmarks/fresh26_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh26_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh26 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh26 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh26"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh26", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh26/repos/<name>)
REPOS = {
    "normalizing_flows": ("kamenbliznashki/normalizing_flows", "97a73a01bcee3ac8015dfeeb3cffb035ec39a1f2",
                          ["maf.py", "data.py", "datasets"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["adv-lib==0.2.8", "autofrk==1.2.3", "colorlog==6.12.0", "bayesian-changepoint==1.2.1",
          "coral-pytorch==1.4.0", "dlordinal==2.7.0", "deprecated==1.3.1", "ivon-opt==0.1.3"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set; WHEEL_OF there maps autoFRK, bayesian_changepoint_detection and ivon to
# their wheels)
DISTS = {"adv_lib": "adv-lib", "autofrk": "autofrk", "bayesian_changepoint": "bayesian-changepoint",
         "coral_pytorch": "coral-pytorch", "dlordinal": "dlordinal", "ivon_opt": "ivon-opt", "numpy": "numpy",
         "scipy": "scipy", "torchvision": "torchvision", "scikit_learn": "scikit-learn"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh26/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh26_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _classes(n, d=20, k=4, seed=0):
    """n points of k Gaussian classes in d dimensions (CPU tensors): features, labels."""
    g = torch.Generator().manual_seed(seed)
    centres = 2.0 * torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    return centres[y] + torch.randn(n, d, generator=g), y


def _ordinal(n, d=12, k=5, seed=0):
    """n points with ordinal labels 0..k-1 (a noisy projection cut into k bins; CPU tensors): features, labels."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    w = torch.randn(d, generator=g)
    s = x @ w / math.sqrt(d) + 0.3 * torch.randn(n, generator=g)
    edges = torch.quantile(s, torch.linspace(0, 1, k + 1)[1:-1])
    return x, torch.bucketize(s, edges)


def _train(model, x, y, steps=30, lr=1e-2, loss_fn=F.cross_entropy):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for _ in range(steps):
        loss = loss_fn(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


# ============================================================================================
# Libraries
# ============================================================================================

# -- adv_lib (adv-lib): the README's attacks as functions, `attack(model=, inputs=, labels=, ...)`, on a small CNN
#    trained for a few steps on synthetic 3x16x16 images in [0, 1] (labels from the image's colour balance):
#    minimal-norm L2 attacks (DDN, FMN, ALMA, C&W L2, DeepFool, SuperDeepFool, trust region), budget attacks (APGD
#    in Linf and L2, targeted APGD, PGD Linf, FAB, C&W Linf) and sparse attacks (FMN L0 / L1, VFGA, FGA, sigma-zero,
#    PDGD, PDPGD) ---------------------------------------------------------------------------------------------------

def adv_lib_attacks(dev):
    try:
        import visdom  # noqa: F401
    except ImportError:  # only its callback type is imported by the attacks; never used here
        stub = types.ModuleType("visdom")
        stub.Visdom = type("Visdom", (), {"__init__": lambda self, *a, **k: None})
        sys.modules["visdom"] = stub
    from adv_lib import attacks as A

    def setup(seed=0, n=24):
        g = torch.Generator().manual_seed(seed)
        imgs = torch.rand(256, 3, 16, 16, generator=g)
        imgs[:, 0] *= torch.rand(256, 1, 1, generator=g) * 1.5
        lab = ((imgs[:, 0].mean((1, 2)) > imgs[:, 1].mean((1, 2))).long()
               + 2 * (imgs[:, 2, :8].mean((1, 2)) > 0.5).long())
        imgs, lab = imgs.clamp(0, 1).to(dev), lab.to(dev)
        torch.manual_seed(seed)
        model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                              nn.Linear(64, 4)).to(dev)
        _train(model, imgs, lab, steps=40)
        model.eval()
        for p in model.parameters():
            p.requires_grad_(False)
        return model, imgs[:n].clone(), lab[:n].clone()

    def report(name, model, x, adv, y):
        with torch.no_grad():
            ok = (model(adv).argmax(1) != y).float().mean().item()
            l2 = (adv - x).flatten(1).norm(dim=1).mean().item()
        print(f"{name}: success {ok:.2f}, mean L2 {l2:.3f}")

    def minimal():
        model, x, y = setup(0)
        for name, fn in [("ddn", lambda: A.ddn(model, x, y, steps=30)),
                         ("fmn_l2", lambda: A.fmn(model, x, y, norm=2, steps=20)),
                         ("alma_l2", lambda: A.alma(model, x, y, distance="l2", num_steps=40)),
                         ("cw_l2", lambda: A.carlini_wagner_l2(model, x, y, binary_search_steps=3, max_iterations=30)),
                         ("df", lambda: A.df(model, x, y, steps=20)),
                         ("sdf", lambda: A.sdf(model, x, y, steps=10, df_steps=10)),
                         ("tr", lambda: A.tr(model, x, y, iter=20))]:
            report(name, model, x, fn(), y)

    def budget():
        model, x, y = setup(1)
        for name, fn in [("apgd_linf", lambda: A.apgd(model, x, y, eps=8 / 255, norm=float("inf"), n_iter=20)),
                         ("apgd_l2", lambda: A.apgd(model, x, y, eps=0.5, norm=2, n_iter=20, loss_function="ce")),
                         ("apgd_t", lambda: A.apgd_targeted(model, x, y, eps=8 / 255, norm=float("inf"), n_iter=10,
                                                            num_targets=2)),
                         ("pgd_linf", lambda: A.pgd_linf(model, x, y, ε=8 / 255, steps=20)),
                         ("fab_linf", lambda: A.fab(model, x, y, norm=float("inf"), n_iter=20)),
                         ("cw_linf", lambda: A.carlini_wagner_linf(model, x, y, max_iterations=30))]:
            report(name, model, x, fn(), y)

    def sparse():
        model, x, y = setup(2, n=16)
        for name, fn in [("fmn_l0", lambda: A.fmn(model, x, y, norm=0, steps=20)),
                         ("fmn_l1", lambda: A.fmn(model, x, y, norm=1, steps=20)),
                         ("vfga", lambda: A.vfga(model, x, y, targeted=False, max_iter=20)),
                         ("fga", lambda: A.fga(model, x, y, targeted=False, max_iter=20)),
                         ("sigma_zero", lambda: A.sigma_zero(model, x, y, num_steps=30)),
                         ("pdgd", lambda: A.pdgd(model, x, y, num_steps=30)),
                         ("pdpgd_l1", lambda: A.pdpgd(model, x, y, norm=1, num_steps=30))]:
            report(name, model, x, fn(), y)
    return {"minimal": minimal, "budget": budget, "sparse": sparse}


# -- autoFRK (autofrk): the documented `AutoFRK(dtype=, device=)`, fitted by calling it on an (n, T) data matrix
#    and (n, d) locations (`method="fast"` and `"EM"`), then `predict`
#    at new locations with and without standard errors; and `MRTS` basis functions at knots -------------------------

def autofrk_krige(dev):
    from autoFRK import MRTS, AutoFRK

    def field(n=300, t=3, seed=0):
        g = torch.Generator().manual_seed(seed)
        loc = torch.rand(n, 2, generator=g, dtype=torch.float64)
        base = torch.sin(6 * loc[:, 0]) * torch.cos(4 * loc[:, 1])
        data = torch.stack([base * (1 + 0.2 * i) + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)
                            for i in range(t)], 1)
        new = torch.rand(80, 2, generator=g, dtype=torch.float64)
        return data.to(dev), loc.to(dev), new.to(dev)

    def fast():
        data, loc, new = field()
        model = AutoFRK(dtype=torch.float64, device=dev)
        obj = model(data, loc, maxK=40, method="fast")
        pred = model.predict(newloc=new)
        pred_se = model.predict(newloc=new, se_report=True)
        print(f"fast: {sorted(obj)[:6]}, pred {sorted(pred)}, se {sorted(pred_se)}")

    def em():
        data, loc, new = field(seed=1)
        model = AutoFRK(dtype=torch.float64, device=dev)
        obj = model(data, loc, maxK=30, method="EM", maxit=20, finescale=False)
        pred = model.predict(newloc=new, se_report=True)
        print(f"em: {sorted(obj)[:6]}, pred {sorted(pred)}")

    def basis():
        g = torch.Generator().manual_seed(2)
        knots = torch.rand(150, 2, generator=g, dtype=torch.float64).to(dev)
        x = torch.rand(60, 2, generator=g, dtype=torch.float64).to(dev)
        mrts = MRTS(dtype=torch.float64, device=dev) if "dtype" in MRTS.__init__.__code__.co_varnames else MRTS()
        out = mrts(knots, k=12, x=x, dtype=torch.float64, device=dev)
        print(f"mrts: {type(out).__name__}")
    return {"fast": fast, "em": em, "basis": basis}


# -- bayesian_changepoint_detection (bayesian-changepoint): the README's online detector
#    (`online_changepoint_detection(data, partial(constant_hazard, lam), StudentT(..., device=))`,
#    `get_map_changepoints`, `changepoint_probabilities`, `viterbi_changepoints`, `segment_statistics`), the streaming
#    `OnlineChangepointDetector` with `max_run_length`, multivariate data (`MultivariateT(dims=, device=)`), count
#    data (`Poisson`), and the offline detector (`offline_changepoint_detection` with offline likelihoods) ----------

def changepoint_detect(dev):
    from functools import partial

    import bayesian_changepoint_detection as bcd
    from bayesian_changepoint_detection import offline_likelihoods as off
    from bayesian_changepoint_detection import online_likelihoods as onl

    def series(seed=0, d=None):
        g = torch.Generator().manual_seed(seed)
        shape = (50,) if d is None else (50, d)
        return torch.cat([torch.randn(shape, generator=g), torch.randn(shape, generator=g) + 3,
                          torch.randn(shape, generator=g)]).to(dev)

    def online():
        data = series(0)
        hazard = partial(bcd.constant_hazard, 250)
        R, maps = bcd.online_changepoint_detection(data, hazard, bcd.StudentT(alpha=0.1, beta=0.01, kappa=1, mu=0,
                                                                               device=dev))
        starts = bcd.get_map_changepoints(R, min_separation=10)
        probs = bcd.changepoint_probabilities(R, lag=10)
        runs, vstarts = bcd.viterbi_changepoints(data, hazard, bcd.StudentT(0.1, 0.01, 1, 0, device=dev))
        stats = bcd.segment_statistics(data, starts)
        det = bcd.OnlineChangepointDetector(hazard, bcd.StudentT(alpha=0.1, beta=0.01, kappa=1, mu=0, device=dev),
                                            max_run_length=60)
        found = []
        for x in data:
            det.update(x)
            if det.t > 10 and det.changepoint_probability(lag=10) > 0.5:
                found.append(det.t - 10)
        print(f"online: {starts.tolist()}, {int((probs[1:] > 0.5).sum())} probable, viterbi {vstarts.tolist()}, "
              f"means {[round(m, 2) for m in stats.means.tolist()]}, streaming {found[:5]}")

    def multivariate():
        data = series(1, d=3)
        hazard = partial(bcd.negative_binomial_hazard, 5, 0.05) if hasattr(bcd, "negative_binomial_hazard") else \
            partial(bcd.constant_hazard, 100)
        R, _ = bcd.online_changepoint_detection(data, hazard, bcd.MultivariateT(dims=3, device=dev))
        print(f"multivariate: {bcd.get_map_changepoints(R, min_separation=10).tolist()}")
        g = torch.Generator().manual_seed(3)
        counts = torch.cat([torch.poisson(torch.full((60,), 2.0), generator=g),
                            torch.poisson(torch.full((60,), 9.0), generator=g)]).to(dev)
        R2, _ = bcd.online_changepoint_detection(counts, partial(bcd.constant_hazard, 100), onl.Poisson(device=dev))
        print(f"poisson: {bcd.get_map_changepoints(R2, min_separation=10).tolist()}")

    def offline():
        data = series(2)
        prior = partial(bcd.const_prior, p=1 / (len(data) + 1))
        Q, P, Pcp = bcd.offline_changepoint_detection(data, prior, off.StudentT(device=dev))
        probs = torch.exp(Pcp).sum(0)
        mv = series(4, d=2)
        Q2, P2, Pcp2 = bcd.offline_changepoint_detection(mv, partial(bcd.geometric_prior, p=0.02),
                                                         off.FullCovarianceLikelihood(device=dev))
        print(f"offline: {torch.where(probs > 0.5)[0].tolist()}, full covariance "
              f"{torch.where(torch.exp(Pcp2).sum(0) > 0.5)[0].tolist()}")
    return {"online": online, "multivariate": multivariate, "offline": offline}


# -- coral_pytorch (coral-pytorch): the docs' CORAL recipe (`CoralLayer(size_in=, num_classes=)`, labels to levels
#    by `levels_from_labelbatch(labels, num_classes=)`, `coral_loss(logits, levels)` / `CoralLoss`, predictions by
#    `proba_to_label(torch.sigmoid(logits))`) and CORN (`corn_loss(logits, y, num_classes=)` / `CornLoss`,
#    `corn_label_from_logits`), each training an MLP on ordinal labels ----------------------------------------------

def coral_ordinal(dev):
    from coral_pytorch.dataset import corn_label_from_logits, levels_from_labelbatch, proba_to_label
    from coral_pytorch.layers import CoralLayer
    from coral_pytorch.losses import CoralLoss, CornLoss, coral_loss, corn_loss

    k = 5

    def coral():
        x, y = _ordinal(400, k=k, seed=1)
        x, y = x.to(dev), y.to(dev)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), CoralLayer(size_in=32, num_classes=k)).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        crit = CoralLoss()
        for step in range(30):
            for i in range(0, 400, 100):
                xb, yb = x[i:i + 100], y[i:i + 100]
                levels = levels_from_labelbatch(yb, num_classes=k).to(dev)
                logits = model(xb)
                loss = coral_loss(logits, levels) if step % 2 else crit(logits, levels)
                opt.zero_grad()
                loss.backward()
                opt.step()
        pred = proba_to_label(torch.sigmoid(model(x)))
        print(f"coral: mae {(pred - y).abs().float().mean().item():.3f}")

    def corn():
        x, y = _ordinal(400, k=k, seed=2)
        x, y = x.to(dev), y.to(dev)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, k - 1)).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        crit = CornLoss(num_classes=k)
        for step in range(30):
            for i in range(0, 400, 100):
                xb, yb = x[i:i + 100], y[i:i + 100]
                logits = model(xb)
                loss = corn_loss(logits, yb, num_classes=k) if step % 2 else crit(logits, yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
        pred = corn_label_from_logits(model(x))
        print(f"corn: mae {(pred - y).abs().float().mean().item():.3f}")
    return {"coral": coral, "corn": corn}


# -- dlordinal: the README's and docs' ordinal losses (soft-label losses wrapping a `CrossEntropyLoss`,
#    `base_loss=` / `num_classes=`: triangular, beta, binomial, Poisson, exponential, geometric, general triangular;
#    ordinal losses: CDW-CE, MCE, MCE+WK, WK, EMD, CORN, SLACE, SORD, ordinal ECOC distance), each moved to the device
#    and training an MLP for a few steps; and its output layers (`CLM`, `StickBreakingLayer`,
#    `PoissonLayer`, `BinomialLayer`) ---------------------------------------------------------

def dlordinal_losses(dev):
    import numpy as np
    from dlordinal import losses as L

    k = 5

    def fit(loss, x, y, head=None, steps=12, out=k):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), head if head is not None else nn.Linear(32, out)).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        for _ in range(steps):
            val = loss(model(x), y)
            opt.zero_grad()
            val.backward()
            opt.step()
        return model, val.item()

    def soft_labels():
        x, y = _ordinal(256, k=k, seed=3)
        x, y = x.to(dev), y.to(dev)
        ce = nn.CrossEntropyLoss()
        res = {}
        for name, loss in [("triangular", L.TriangularCrossEntropyLoss(num_classes=k)),
                           ("beta", L.BetaCrossEntropyLoss(num_classes=k)),
                           ("binomial", L.BinomialCrossEntropyLoss(num_classes=k)),
                           ("poisson", L.PoissonCrossEntropyLoss(num_classes=k)),
                           ("exponential", L.ExponentialCrossEntropyLoss(num_classes=k)),
                           ("geometric", L.GeometricCrossEntropyLoss(num_classes=k)),
                           ("general_triangular", L.GeneralTriangularCrossEntropyLoss(
                               num_classes=k, alphas=np.full(2 * k, 0.05))),
                           ("wrapped_triangular", L.TriangularLoss(base_loss=ce, num_classes=k))]:
            res[name] = round(fit(loss.to(dev), x, y)[1], 3)
        print(f"soft labels: {res}")

    def ordinal():
        x, y = _ordinal(256, k=k, seed=4)
        x, y = x.to(dev), y.to(dev)
        res = {}
        for name, loss, out in [("cdw", L.CDWCELoss(num_classes=k), k),
                                ("mce", L.MCELoss(num_classes=k, use_logits=True), k),
                                ("mcewk", L.MCEAndWKLoss(num_classes=k, use_logits=True), k),
                                ("wk", L.WKLoss(num_classes=k, use_logits=True), k),
                                ("emd", L.EMDLoss(num_classes=k), k),
                                ("corn", L.CORNLoss(num_classes=k), k - 1),
                                ("slace", L.SLACELoss(alpha=1.0, num_classes=k), k),
                                ("sord", L.SORDLoss(alpha=1.0, num_classes=k, train_targets=y), k),
                                ("ecoc", L.OrdinalECOCDistanceLoss(num_classes=k), k - 1)]:
            res[name] = round(fit(loss.to(dev), x, y, out=out)[1], 3)
        print(f"ordinal: {res}")

    def layers():
        from dlordinal.output_layers import CLM, BinomialLayer, PoissonLayer, StickBreakingLayer
        x, y = _ordinal(256, k=k, seed=5)
        x, y = x.to(dev), y.to(dev)
        nll = lambda p, t: F.nll_loss(torch.log(p.clamp_min(1e-8)), t)  # noqa: E731
        res = {}
        for name, head, loss in [
                ("clm_logit", nn.Sequential(nn.Linear(32, 1), CLM(num_classes=k, link_function="logit")), nll),
                ("clm_probit", nn.Sequential(nn.Linear(32, 1), CLM(num_classes=k, link_function="probit")), nll),
                ("clm_cloglog", nn.Sequential(nn.Linear(32, 1), CLM(num_classes=k, link_function="cloglog")), nll),
                ("stick", StickBreakingLayer(32, k), F.cross_entropy),
                ("poisson", PoissonLayer(in_features=32, num_classes=k), F.cross_entropy),
                ("binomial", BinomialLayer(in_features=32, num_classes=k), F.cross_entropy)]:
            model, val = fit(loss, x, y, head=head)
            res[name] = round(val, 3)
        print(f"layers: {res}")
    return {"soft_labels": soft_labels, "ordinal": ordinal, "layers": layers}


# -- ivon (ivon-opt): the README's training loop (`ivon.IVON(model.parameters(), lr=, ess=)`, `with
#    optimizer.sampled_params(train=True)` around each forward / backward, `optimizer.step()`), posterior averaging
#    at test time over `sampled_params()`, for a classifier (one and two training samples) and a regressor (with
#    `mc_samples=`, `clip_radius=`, `hess_init=`) ----------------------------------------------------------------------

def ivon_train(dev):
    import ivon

    def classify():
        x, y = _classes(512, d=16, k=4, seed=6)
        x, y = x.to(dev), y.to(dev)
        for train_samples in (1, 2):
            torch.manual_seed(0)
            model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).to(dev)
            opt = ivon.IVON(model.parameters(), lr=0.1, ess=len(x))
            for _ in range(4):
                for i in range(0, 512, 64):
                    xb, yb = x[i:i + 64], y[i:i + 64]
                    for _ in range(train_samples):
                        with opt.sampled_params(train=True):
                            opt.zero_grad()
                            loss = F.cross_entropy(model(xb), yb)
                            loss.backward()
                    opt.step()
            probs = []
            for _ in range(8):
                with opt.sampled_params():
                    probs.append(F.softmax(model(x), 1))
            prob = torch.stack(probs).mean(0)
            print(f"ivon classify ({train_samples}): acc {(prob.argmax(1) == y).float().mean().item():.3f}")

    def regress():
        g = torch.Generator().manual_seed(7)
        x = torch.rand(256, 1, generator=g) * 6 - 3
        y = torch.sin(x) + 0.1 * torch.randn(256, 1, generator=g)
        x, y = x.to(dev), y.to(dev)
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1)).to(dev)
        opt = ivon.IVON(model.parameters(), lr=0.05, ess=256, mc_samples=2, hess_init=0.5, clip_radius=1e3,
                        weight_decay=1e-4)
        for _ in range(60):
            for _ in range(2):
                with opt.sampled_params(train=True):
                    opt.zero_grad()
                    loss = F.mse_loss(model(x), y)
                    loss.backward()
            opt.step()
        grid = torch.linspace(-5, 5, 50, device=dev)[:, None]
        preds = []
        for _ in range(10):
            with opt.sampled_params():
                preds.append(model(grid))
        spread = torch.stack(preds).std(0)
        print(f"ivon regress: loss {loss.item():.4f}, spread in/out {spread[20:30].mean().item():.3f}/"
              f"{spread[:5].mean().item():.3f}")
    return {"classify": classify, "regress": regress}


# ============================================================================================
# Training repository, its own scripts on their own synthetic data
# ============================================================================================

def _flows(dev, name: str, script: str, argv: list, stop: int):
    """kamenbliznashki/normalizing_flows' scripts as they are (the GPU when there is one, as they decide), run from a
    temporary folder (their results/ there) with the repository's root on the path for its `data` and `datasets`.
    The window spans the 2nd to the `stop`-th `backward`: training steps."""
    root = _need_repo("normalizing_flows")
    tmp = hc._tmp()
    argv = [*argv, "--output_dir", os.path.join(tmp, "results")]

    def window():
        sys.path.insert(0, str(root))
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, stop, stop_script=True):
                hc.run_script(root / script, argv, tmp)
        finally:
            sys.path.remove(str(root))
            for m in [m for m in sys.modules if m.split(".")[0] in ("data", "datasets")]:
                del sys.modules[m]
    return {"train_window": window}


def flows_maf(dev):
    """maf.py: a MAF (`--model maf --n_blocks 5`) on its synthetic TOY density (`--dataset TOY`, batch 100,
    `--log_interval 5`, `--no_cuda` on the CPU); window 2nd to 12th `backward`."""
    extra = [] if dev.type == "cuda" else ["--no_cuda"]
    return _flows(dev, "normalizing_flows.maf", "maf.py", ["--train", "--dataset", "TOY", "--model", "maf",
                                                          "--n_blocks", "5", "--n_epochs", "1", "--log_interval", "5",
                                                          *extra], 12)


def flows_realnvp(dev):
    """maf.py: a RealNVP (`--model realnvp --n_blocks 4`) on its synthetic TOY density (its MOONS dataset fails to
    construct as the script calls it); window 2nd to 12th `backward`."""
    extra = [] if dev.type == "cuda" else ["--no_cuda"]
    return _flows(dev, "normalizing_flows.realnvp", "maf.py", ["--train", "--dataset", "TOY", "--model", "realnvp",
                                                              "--n_blocks", "4", "--n_epochs", "1", "--log_interval",
                                                              "5", *extra], 12)


def flows_mademog(dev):
    """maf.py: a MADE mixture of Gaussians (`--model mademog --n_components 5`) on its synthetic TOY density with
    the variable order flipped (`--flip_toy_var_order`); window 2nd to 12th `backward`."""
    extra = [] if dev.type == "cuda" else ["--no_cuda"]
    return _flows(dev, "normalizing_flows.mademog", "maf.py", ["--train", "--dataset", "TOY", "--model", "mademog",
                                                              "--n_components", "5", "--flip_toy_var_order",
                                                              "--n_epochs", "1", "--log_interval", "5", *extra], 12)


MODELS = [
    # name, package, builder
    ("adv_lib.attacks", "adv_lib", adv_lib_attacks),
    ("autoFRK.krige", "autoFRK", autofrk_krige),
    ("bayesian_changepoint_detection.detect", "bayesian_changepoint_detection", changepoint_detect),
    ("coral_pytorch.ordinal", "coral_pytorch", coral_ordinal),
    ("dlordinal.losses", "dlordinal", dlordinal_losses),
    ("ivon.train", "ivon", ivon_train),
    ("normalizing_flows.maf", "normalizing_flows", flows_maf),
    ("normalizing_flows.realnvp", "normalizing_flows", flows_realnvp),
    ("normalizing_flows.mademog", "normalizing_flows", flows_mademog),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh26", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
