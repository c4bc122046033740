"""Record the syncs of a fifth held-out set, `fresh4`: libraries and training code nobody here has looked at.

`heldout`, `fresh`, `fresh2` and `fresh3` (benchmarks/heldout_collect.py, fresh_collect.py,
fresh2_collect.py, fresh3_collect.py) have all been scored, and fresh3 read, while the linter was
improved. `fresh4` is recorded the same way (same recorder, same windows inside a script's own loop; this
file only adds workloads and imports the machinery) in libraries outside the tuned set and the four
held-out sets and in two public training repositories that no set and no hand label uses. The workloads
were written from the libraries' documented public API (README / docs examples), on synthetic data with
random weights, before anyone ran the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh4): skorch (+ tabulate), poutyne,
  pytorch-optimizer, schedulefree, deepinv (+ natsort, einops), ema-pytorch, laplace-torch with its
  curvature backends (curvlinops-for-pytorch, backpack-for-pytorch, asdfghjkl, unfoldNd, einconv). Their
  other needs (scikit-learn, scipy, torchmetrics, lightning-utilities, matplotlib, tqdm, h5py, requests,
  opt-einsum, linear-operator) are on the GPU machine; requests and h5py (deepinv) travel in
  .whl/fresh4/if-missing, for a machine that lacks them.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh4/repos/<name>:
  karpathy/makemore (makemore.py, as is, on a synthetic names file: a transformer across its evaluation
  and a GRU across its sampling) and karpathy/ng-video-lecture (bigram.py and gpt.py, as they are, on a
  synthetic input.txt; gpt.py is the lecture's full-size model, so GPU only).

    python benchmarks/fresh4_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh4_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh4 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh4 [--linter REV]`.
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
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh4" / "repos", ac.REPO / ".whl" / "fresh4"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh4/repos/<name>)
REPOS = {
    "makemore": ("karpathy/makemore", "988aa59e4d8fefa526d06f3b453ad116258398d4", ["makemore.py"]),
    "ng-video-lecture": ("karpathy/ng-video-lecture", "52201428ed7b46804849dea0b3ccf0de9df1a5c3",
                         ["bigram.py", "gpt.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["skorch==1.4.0", "tabulate==0.9.0", "poutyne==1.19.0", "pytorch-optimizer==4.1.0", "schedulefree==1.4.1",
          "deepinv==0.5.0", "natsort==8.4.0", "einops==0.8.1", "ema-pytorch==0.8.3", "laplace-torch==0.3",
          "curvlinops-for-pytorch==3.0.1", "backpack-for-pytorch==1.7.1", "asdfghjkl==0.1a4", "unfoldNd==0.2.3",
          "einconv==0.1.0"]
# deepinv's own needs that the GPU machine may lack: carried in .whl/fresh4/if-missing, installed there
# only where `import requests, h5py` fails (so as not to shadow the image's own)
IF_MISSING = ["requests==2.34.2", "urllib3==2.8.0", "idna==3.20", "certifi==2026.10.19.post1",
              "charset-normalizer==3.5.3", "h5py==3.16.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"skorch": "skorch", "poutyne": "poutyne", "pytorch_optimizer": "pytorch-optimizer",
         "schedulefree": "schedulefree", "deepinv": "deepinv", "ema_pytorch": "ema-pytorch",
         "laplace_torch": "laplace-torch", "curvlinops_for_pytorch": "curvlinops-for-pytorch",
         "backpack_for_pytorch": "backpack-for-pytorch", "asdfghjkl": "asdfghjkl", "unfoldNd": "unfoldNd",
         "einconv": "einconv", "einops": "einops", "scikit_learn": "scikit-learn", "torchmetrics": "torchmetrics",
         "linear_operator": "linear-operator", "torchvision": "torchvision", "scipy": "scipy", "numpy": "numpy"}

_opt = ac._opt


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _blobs(n: int = 512, features: int = 20, classes: int = 3, seed: int = 0):
    """A synthetic classification set as float32 / int64 numpy arrays (what the scikit-learn-style
    trainers take): class means apart, Gaussian noise."""
    import numpy as np
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    X = rng.normal(size=(n, features)) + 1.5 * np.eye(classes, features)[y]
    return X.astype(np.float32), y.astype(np.int64)


def _mlp(inp: int = 20, out: int = 3, hidden: int = 32) -> nn.Module:
    return nn.Sequential(nn.Linear(inp, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, out))


# ============================================================================================
# Libraries
# ============================================================================================

# -- skorch: scikit-learn-style classifier and regressor fits with callbacks (README, tutorials) ----

def skorch_fit(dev):
    import numpy as np
    from skorch import NeuralNetClassifier, NeuralNetRegressor
    from skorch.callbacks import EarlyStopping, EpochScoring, GradientNormClipping, LRScheduler

    X, y = _blobs()

    class ClassifierModule(nn.Module):  # the README's module: returns probabilities
        def __init__(self, num_units=32, nonlin=nn.ReLU()):  # noqa: B008 (as the README writes it)
            super().__init__()
            self.dense0, self.nonlin, self.dropout = nn.Linear(20, num_units), nonlin, nn.Dropout(0.2)
            self.dense1, self.output = nn.Linear(num_units, 16), nn.Linear(16, 3)

        def forward(self, X):
            X = self.dropout(self.nonlin(self.dense0(X)))
            return F.softmax(self.output(F.relu(self.dense1(X))), dim=-1)

    net = NeuralNetClassifier(
        ClassifierModule, max_epochs=3, lr=0.1, batch_size=64, iterator_train__shuffle=True, device=dev.type,
        callbacks=[EpochScoring("accuracy", lower_is_better=False), EarlyStopping(patience=3),
                   LRScheduler(policy="StepLR", step_size=1), GradientNormClipping(gradient_clip_value=1.0)])
    reg = NeuralNetRegressor(_mlp(out=1), max_epochs=3, lr=0.01, optimizer=torch.optim.Adam, batch_size=64,
                             device=dev.type, callbacks=[EpochScoring("r2", lower_is_better=False)])
    target = (X[:, :1] * 2 - X[:, 1:2]).astype(np.float32)

    def classify():
        net.fit(X, y)

    def regress():
        reg.fit(X, target)

    def predict():
        net.predict_proba(X)
        net.predict(X)
        net.score(X, y)
        reg.predict(X)
    return {"classify": classify, "regress": regress, "predict": predict}


# -- poutyne: Keras-like Model.fit with metrics and callbacks, and an Experiment (README, docs) ----

def poutyne_fit(dev):
    import tempfile

    from poutyne import EarlyStopping, Experiment, Model, ReduceLROnPlateau

    X, y = _blobs()
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    model = Model(_mlp(), "sgd", "cross_entropy", batch_metrics=["accuracy"], epoch_metrics=["f1"], device=dev)
    train = torch.utils.data.TensorDataset(Xt[:384], yt[:384])
    valid = torch.utils.data.TensorDataset(Xt[384:], yt[384:])
    train_loader = torch.utils.data.DataLoader(train, batch_size=32, shuffle=True)
    valid_loader = torch.utils.data.DataLoader(valid, batch_size=32)
    folder = tempfile.mkdtemp(prefix="fresh4-poutyne-")

    def fit():
        model.fit(X[:384], y[:384], validation_data=(X[384:], y[384:]), epochs=2, batch_size=32,
                  callbacks=[EarlyStopping(monitor="val_loss", patience=2),
                             ReduceLROnPlateau(monitor="val_loss", patience=1)])

    def evaluate():
        model.evaluate(X[384:], y[384:], batch_size=64)
        model.predict(X[384:], batch_size=64)

    def experiment():  # the docs' Experiment: logging, checkpoints of the best epoch, then a test
        exp = Experiment(tempfile.mkdtemp(dir=folder), _mlp(), device=dev, optimizer="adam", task="classif")
        exp.train(train_loader, valid_loader, epochs=2)
        exp.test(valid_loader)
    return {"fit": fit, "evaluate": evaluate, "experiment": experiment}


# -- pytorch-optimizer: its optimisers, SAM, Lookahead, schedulers and losses (README) ------------

def pytorch_optimizer_zoo(dev):
    import pytorch_optimizer as po

    X, y = torch.randn(128, 20, device=dev), torch.randint(0, 3, (128,), device=dev)
    # every optimiser its registry lists that takes a model's parameters and nothing else (the README's
    # `load_optimizer(name)(model.parameters())`); the others are set up below as their docs say, or need
    # a whole model (LOMO, Adam-mini), a process group (DeMo, distributed Muon) or 2-D parameters only
    special = {"adahessian", "sophiah", "alig", "lbfgs", "muon", "adamuon", "muonclip", "normuon", "adago",
               "distributedmuon", "demo", "lomo", "adalomo", "adammini", "bsam", "ranger21", "spectralsphere"}
    names = [n for n in po.get_supported_optimizers() if n not in special]
    hessian = ["adahessian", "sophiah"]  # they read Hessian-vector products: backward with create_graph
    models = {n: _mlp().to(dev) for n in names + hessian}
    opts = {n: po.load_optimizer(n)(models[n].parameters(), lr=1e-3) for n in names + hessian}
    closure_models = {n: _mlp().to(dev) for n in ("alig", "lbfgs", "muon")}
    alig = po.load_optimizer("alig")(closure_models["alig"].parameters())
    lbfgs = po.load_optimizer("lbfgs")(closure_models["lbfgs"].parameters(), lr=1e-3)
    mm = closure_models["muon"]
    hidden = [mm[2].weight]  # Muon on the hidden matrices, AdamW on the rest (its README's groups)
    muon = po.Muon([dict(params=hidden, use_muon=True, lr=0.02, weight_decay=0.01),
                    dict(params=[p for p in mm.parameters() if p is not mm[2].weight], use_muon=False, lr=3e-4,
                         betas=(0.9, 0.95), weight_decay=0.01)])

    def train():
        for n, opt in opts.items():
            loss = F.cross_entropy(models[n](X), y)
            opt.zero_grad()
            loss.backward(create_graph=n in hessian)
            opt.step()
        alig.zero_grad()
        loss = F.cross_entropy(closure_models["alig"](X), y)
        loss.backward()
        alig.step(lambda: float(loss))  # AliG's README: the closure returns the loss value

        def lbfgs_closure():
            lbfgs.zero_grad()
            out = F.cross_entropy(closure_models["lbfgs"](X), y)
            out.backward()
            return out
        lbfgs.step(lbfgs_closure)
        muon.zero_grad()
        F.cross_entropy(mm(X), y).backward()
        muon.step()

    sam_model = _mlp().to(dev)
    sam = po.SAM(sam_model.parameters(), po.AdamP, lr=1e-3)
    r21_model = _mlp().to(dev)
    r21 = po.Ranger21(r21_model.parameters(), num_iterations=100, lr=1e-3)
    la_model = _mlp().to(dev)
    la = po.create_optimizer(la_model, "adamp", lr=1e-3, weight_decay=1e-3, use_lookahead=True)
    sched_model = _mlp().to(dev)
    sched_opt = po.load_optimizer("adamw")(sched_model.parameters(), lr=1e-3)
    sched = po.CosineAnnealingWarmupRestarts(sched_opt, first_cycle_steps=10, max_lr=1e-3, min_lr=1e-5,
                                             warmup_steps=2)

    def wrappers():
        loss = F.cross_entropy(sam_model(X), y)  # the README's two passes of SAM
        loss.backward()
        sam.first_step(zero_grad=True)
        F.cross_entropy(sam_model(X), y).backward()
        sam.second_step(zero_grad=True)
        for m, opt in ((r21_model, r21), (la_model, la), (sched_model, sched_opt)):
            opt.zero_grad()
            F.cross_entropy(m(X), y).backward()
            opt.step()
        sched.step()

    logits = torch.randn(4, 1, 16, 16, device=dev, requires_grad=True)
    masks = (torch.rand(4, 1, 16, 16, device=dev) > 0.5).float()
    class_logits = torch.randn(32, 5, device=dev, requires_grad=True)
    labels = torch.randint(0, 5, (32,), device=dev)
    losses = [(po.FocalLoss(), logits, masks), (po.BCEFocalLoss(), logits, masks), (po.SoftF1Loss(), logits, masks),
              (po.DiceLoss(mode="binary"), logits, masks), (po.JaccardLoss(mode="binary"), logits, masks),
              (po.TverskyLoss(), logits, masks), (po.FocalTverskyLoss(), logits, masks),
              (po.LovaszHingeLoss(), logits.squeeze(1), masks.squeeze(1)),
              (po.BiTemperedLogisticLoss(t1=0.8, t2=1.2), class_logits, labels),
              (po.LDAMLoss(num_class_list=[50, 20, 10, 5, 2]).to(dev), class_logits, labels),
              (po.DiceLoss(mode="multiclass"), class_logits[:, :, None], labels[:, None])]

    def loss_functions():
        sum(fn(pred, target) for fn, pred, target in losses).backward()
    return {"train": train, "wrappers": wrappers, "losses": loss_functions}


# -- schedulefree: schedule-free AdamW / SGD / RAdam and the wrapper, train and eval modes (README) --

def schedulefree_train(dev):
    import schedulefree

    X, y = torch.randn(256, 20, device=dev), torch.randint(0, 3, (256,), device=dev)
    models = {k: nn.Sequential(nn.Linear(20, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Linear(32, 3)).to(dev)
              for k in ("adamw", "sgd", "radam", "wrapper")}
    opts = {"adamw": schedulefree.AdamWScheduleFree(models["adamw"].parameters(), lr=1e-3, warmup_steps=4),
            "sgd": schedulefree.SGDScheduleFree(models["sgd"].parameters(), lr=1e-2, warmup_steps=4),
            "radam": schedulefree.RAdamScheduleFree(models["radam"].parameters(), lr=1e-3),
            "wrapper": schedulefree.ScheduleFreeWrapper(torch.optim.SGD(models["wrapper"].parameters(), lr=1e-2),
                                                        momentum=0.9, weight_decay_at_y=0.1)}
    closure_model = _mlp().to(dev)
    closure_opt = schedulefree.AdamWScheduleFreeClosure(closure_model.parameters(), lr=1e-3)

    def train():
        for k, m in models.items():
            m.train()
            opts[k].train()  # the optimiser's train mode goes with the model's
            for i in range(0, 256, 64):
                opts[k].zero_grad()
                F.cross_entropy(m(X[i:i + 64]), y[i:i + 64]).backward()
                opts[k].step()

        def closure():
            closure_opt.zero_grad()
            loss = F.cross_entropy(closure_model(X), y)
            loss.backward()
            return loss
        closure_opt.step(closure)

    def evaluate():  # eval mode: the averaged weights; BatchNorm statistics recomputed as the README says
        for k, m in models.items():
            m.train()
            opts[k].eval()
            with torch.no_grad():
                for i in range(0, 256, 64):
                    m(X[i:i + 64])
            m.eval()
            with torch.no_grad():
                (m(X).argmax(-1) == y).float().mean()
    return {"train": train, "evaluate": evaluate}


# -- deepinv: forward operators, model-based and plug-and-play solvers, a trained reconstructor ----

def deepinv_inverse(dev):
    import deepinv as dinv

    size = (3, 32, 32)
    x = torch.rand(4, *size, device=dev)
    physics = {
        "denoise": dinv.physics.Denoising(dinv.physics.GaussianNoise(sigma=0.1)),
        "inpaint": dinv.physics.Inpainting(img_size=size, mask=0.5, device=dev,
                                           noise_model=dinv.physics.GaussianNoise(sigma=0.05)),
        "blur": dinv.physics.BlurFFT(img_size=size, filter=dinv.physics.blur.gaussian_blur(sigma=(2, 2)), device=dev,
                                     noise_model=dinv.physics.GaussianNoise(sigma=0.05)),
        "cs": dinv.physics.CompressedSensing(m=600, img_size=size, device=dev),
        "downsample": dinv.physics.Downsampling(img_size=size, filter="gaussian", factor=2, device=dev),
        "demosaic": dinv.physics.Demosaicing(img_size=size, device=dev),
    }
    gray = torch.rand(4, 1, 32, 32, device=dev)
    mono = {  # operators of single-channel (or complex, as two channels) images
        "ct": dinv.physics.Tomography(angles=20, img_width=32, device=dev),
        "spc": dinv.physics.SinglePixelCamera(m=100, img_size=(1, 32, 32), device=dev),
    }
    mri = dinv.physics.MRI(mask=(torch.rand(32, 32, device=dev) > 0.6).float(), img_size=(2, 32, 32), device=dev)

    def operators():  # measurements, adjoints, pseudo-inverses, the operator norm by power iteration
        for p, img in [*((p, x) for p in physics.values()), *((p, gray) for p in mono.values()),
                       (mri, torch.rand(4, 2, 32, 32, device=dev))]:
            y = p(img)
            p.A_adjoint(y)
            p.A_dagger(y)
            p.compute_norm(torch.rand_like(img), max_iter=20, tol=1e-4)
            p.adjointness_test(torch.rand_like(img))

    l2 = dinv.optim.data_fidelity.L2()
    denoiser = dinv.models.DnCNN(in_channels=3, out_channels=3, depth=5, pretrained=None, device=dev)
    solvers = [dinv.optim.PGD(data_fidelity=l2, prior=dinv.optim.TVPrior(n_it_max=20), lambda_reg=0.05,
                              stepsize=0.5, max_iter=20, early_stop=True),
               dinv.optim.ADMM(data_fidelity=l2, prior=dinv.optim.TVPrior(n_it_max=20), lambda_reg=0.05,
                               stepsize=0.5, max_iter=10),
               dinv.optim.HQS(data_fidelity=l2, prior=dinv.optim.PnP(denoiser=denoiser), sigma_denoiser=0.05,
                              stepsize=1.0, max_iter=5),
               dinv.optim.FISTA(data_fidelity=l2, prior=dinv.optim.L1Prior(), lambda_reg=0.01, stepsize=0.5,
                                max_iter=20, early_stop=True)]

    def solve():
        y = physics["blur"](x)
        for solver in solvers:
            solver(y, physics["blur"], x_gt=x, compute_metrics=True)
        dinv.metric.PSNR()(physics["blur"].A_dagger(y), x)
        dinv.metric.SSIM()(physics["blur"].A_adjoint(y), x)

    classical = [dinv.models.TVDenoiser(n_it_max=50), dinv.models.TGVDenoiser(n_it_max=50),
                 dinv.models.MedianFilter()]
    score = dinv.optim.ScorePrior(denoiser=denoiser)
    samplers = [dinv.sampling.ULA(prior=score, data_fidelity=l2, step_size=0.1, sigma=0.05, max_iter=20,
                                  thinning=2),
                dinv.sampling.SKRock(prior=score, data_fidelity=l2, step_size=0.1, inner_iter=3, max_iter=10,
                                     thinning=2),
                dinv.sampling.DiffPIR(model=dinv.models.DRUNet(nc=(8, 16, 32, 64), nb=1, pretrained=None, device=dev),
                                      data_fidelity=l2, sigma=0.05, max_iter=10, device=dev)]

    def sample():  # classical denoisers, then posterior sampling (Langevin, SK-ROCK, DiffPIR) on a deblurring
        noisy = physics["denoise"](x)
        for d in classical:
            d(noisy, 0.1)
        y = physics["blur"](x)
        with torch.no_grad():
            for sampler in samplers:
                sampler(y, physics["blur"])

    model = dinv.models.UNet(in_channels=3, out_channels=3, scales=2).to(dev)
    loader = torch.utils.data.DataLoader(torch.rand(16, *size), batch_size=8)  # ground truths only: `x`
    losses = [dinv.loss.MCLoss(), dinv.loss.EILoss(transform=dinv.transform.Shift())]

    def train():  # the Trainer on measurements made online (self-supervised: MC + EI losses)
        trainer = dinv.Trainer(model, physics["inpaint"], torch.optim.Adam(model.parameters(), lr=1e-3), loader,
                               epochs=1, losses=losses, online_measurements=True, metrics=dinv.metric.PSNR(),
                               device=dev, save_path=None, show_progress_bar=False, verbose=True)
        trainer.train()
        dinv.test(model, loader, physics["inpaint"], metrics=[dinv.metric.PSNR(), dinv.metric.SSIM()],
                  online_measurements=True, device=dev, show_progress_bar=False)
    return {"operators": operators, "solve": solve, "sample": sample, "train": train}


# -- ema-pytorch: an EMA of a model's weights, post-hoc EMA synthesised after training (README) ----

def ema_train(dev):
    import tempfile

    from ema_pytorch import EMA, PostHocEMA

    net = _mlp().to(dev)
    opt = _opt(net)
    ema = EMA(net, beta=0.99, update_after_step=2, update_every=2)
    posthoc = PostHocEMA(net, sigma_rels=(0.05, 0.28), update_every=1, checkpoint_every_num_steps=2,
                         checkpoint_folder=tempfile.mkdtemp(prefix="fresh4-ema-"))
    X, y = torch.randn(64, 20, device=dev), torch.randint(0, 3, (64,), device=dev)

    def train():
        for _ in range(4):
            opt.zero_grad()
            F.cross_entropy(net(X), y).backward()
            opt.step()
            ema.update()
            posthoc.update()
        with torch.no_grad():
            ema(X)

    def synthesize():
        synthesized = posthoc.synthesize_ema_model(sigma_rel=0.15)
        with torch.no_grad():
            synthesized(X)
    return {"train": train, "synthesize": synthesize}


# -- laplace-torch: Laplace approximations fitted after training, marginal likelihood, predictives --

def laplace_bnn(dev):
    from laplace import Laplace, marglik_training
    from laplace.curvature import AsdlGGN, BackPackGGN

    X, y = _blobs(n=256)
    Xt, yt = torch.from_numpy(X).to(dev), torch.from_numpy(y).to(dev)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(Xt, yt), batch_size=64)
    clf = _mlp().to(dev)
    opt = _opt(clf)
    for _ in range(3):  # a briefly trained MAP network
        opt.zero_grad()
        F.cross_entropy(clf(Xt), yt).backward()
        opt.step()
    xr = torch.linspace(-3, 3, 128, device=dev)[:, None]
    yr = torch.sin(xr) + 0.1 * torch.randn_like(xr)
    reg_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xr, yr), batch_size=32)
    reg = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1)).to(dev)

    def classify():  # the README: last-layer KFAC, prior precision by marginal likelihood, probit predictive
        la = Laplace(clf, "classification", subset_of_weights="last_layer", hessian_structure="kron")
        la.fit(loader)
        la.optimize_prior_precision(method="marglik", pred_type="glm", link_approx="probit")
        la(Xt[:32], pred_type="glm", link_approx="probit")
        la(Xt[:32], pred_type="nn", link_approx="mc", n_samples=10)
        diag = Laplace(clf, "classification", subset_of_weights="all", hessian_structure="diag",
                       backend=BackPackGGN)
        diag.fit(loader)
        diag.optimize_prior_precision(method="gridsearch", val_loader=loader, pred_type="glm",
                                      link_approx="probit", n_steps=5)

    def regress():  # the README's regression: full GGN, prior precision and noise by gradient steps (the
        # full GGN of the default curvlinops backend builds its identity on the CPU: ASDL's instead)
        la = Laplace(reg, "regression", subset_of_weights="all", hessian_structure="full", backend=AsdlGGN)
        la.fit(reg_loader)
        log_prior = torch.ones(1, requires_grad=True, device=dev)
        log_sigma = torch.ones(1, requires_grad=True, device=dev)
        hyper = torch.optim.Adam([log_prior, log_sigma], lr=1e-1)
        for _ in range(5):
            hyper.zero_grad()
            neg_marglik = -la.log_marginal_likelihood(log_prior.exp(), log_sigma.exp())
            neg_marglik.backward()
            hyper.step()
        f_mu, f_var = la(xr)
        kron = Laplace(reg, "regression", subset_of_weights="all", hessian_structure="kron")
        kron.fit(reg_loader)
        kron.optimize_prior_precision(method="marglik", n_steps=5)
        kron(xr)

    def marglik():  # the docs' `marglik_training`: network and hyperparameters trained together
        net = _mlp().to(dev)
        marglik_training(net, loader, likelihood="classification", hessian_structure="kron", n_epochs=2,
                         n_hypersteps=2, marglik_frequency=1)
    return {"classify": classify, "regress": regress, "marglik": marglik}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _names(path: Path, n: int = 4000, seed: int = 0) -> None:
    """A synthetic names file for makemore: one lowercase 'name' of 3-10 letters a line."""
    import numpy as np
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    path.write_text("\n".join("".join(rng.choice(letters, rng.integers(3, 11))) for _ in range(n)) + "\n")


def _makemore(kind: str, mode: str, start: int, stop: int):
    """makemore.py as is, `--type kind`, on a synthetic names file, its data loaders in-process
    (`--num-workers 0`): the window spans backward calls start..stop of its endless loop (step s makes
    the (s+1)-th call): step 500 evaluates both splits and saves the model; step 400 prints samples."""
    def build(dev):
        script = _need_repo("makemore") / "makemore.py"
        cwd = Path(hc._tmp())
        _names(cwd / "names.txt")
        argv = ["-i", "names.txt", "-o", "out", "--type", kind, "--device", dev.type, "--num-workers", "0",
                "--max-steps", str(stop + 5)]

        def window():
            with hc.window_on(torch.Tensor, "backward", f"makemore.{kind}", mode, dev, start, stop,
                              stop_script=True):
                hc.run_script(script, argv, str(cwd))
        return {f"{mode}_window": window}
    return build


def _shakespeare_like(path: Path, n: int = 200_000, seed: int = 0) -> None:
    """A synthetic input.txt: random 'words' of letters and punctuation over 65 distinct characters."""
    import numpy as np
    rng = np.random.default_rng(seed)
    chars = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.,;:!?'-&$3 \n"))
    assert len(set(chars)) == 65
    path.write_text("".join(rng.choice(chars, n)))


def _lecture(script_name: str, gpu_only: bool):
    """ng-video-lecture's script as is (its own device: cuda where there is one) on a synthetic input.txt.
    `eval_window`: its first 402 `torch.randint` calls, one a batch: the 400 batches of the loss estimate
    at iteration 0 (`estimate_loss`, printed), then iteration 0's training step. bigram.py also has
    `generate_window`: its last 300 iterations and the 500 characters it then samples and decodes (the
    window closes as its last `print` is called, with the sample as its argument)."""
    def build(dev):
        if gpu_only and dev.type != "cuda":
            raise RuntimeError(f"{script_name} is the lecture's full-size model on its own cuda: GPU only")
        script = _need_repo("ng-video-lecture") / script_name
        cwd = Path(hc._tmp())
        _shakespeare_like(cwd / "input.txt")
        model = f"nglecture.{script_name.removesuffix('.py')}"

        def evaluate():
            with hc.window_on(torch, "randint", model, "eval", dev, 1, 402, stop_script=True):
                hc.run_script(script, [], str(cwd))

        def generate():  # between its 10th print (the loss at iteration 2700) and its 11th (the sample)
            with hc.window_on(builtins, "print", model, "generate", dev, 10, 11, stop_script=True):
                hc.run_script(script, [], str(cwd))
        return {"eval_window": evaluate} if gpu_only else {"eval_window": evaluate, "generate_window": generate}
    return build


MODELS = [
    # name, package, builder
    ("skorch.fit", "skorch", skorch_fit),
    ("poutyne.fit", "poutyne", poutyne_fit),
    ("pytorch_optimizer.zoo", "pytorch_optimizer", pytorch_optimizer_zoo),
    ("schedulefree.train", "schedulefree", schedulefree_train),
    ("deepinv.inverse", "deepinv", deepinv_inverse),
    ("ema.train", "ema_pytorch", ema_train),
    ("laplace.bnn", "laplace", laplace_bnn),
    ("makemore.transformer", "makemore", _makemore("transformer", "eval", 501, 502)),
    ("makemore.gru", "makemore", _makemore("gru", "sample", 401, 402)),
    ("nglecture.bigram", "ng-video-lecture", _lecture("bigram.py", gpu_only=False)),
    ("nglecture.gpt", "ng-video-lecture", _lecture("gpt.py", gpu_only=True)),
]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
        hc.download_wheels(IF_MISSING, WHEELS_DIR / "if-missing")
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh4", REPOS, DISTS, budget=220.0, per_model=60.0)


if __name__ == "__main__":
    sys.exit(main())
