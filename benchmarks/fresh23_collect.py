"""Record the syncs of a twenty-fourth set, `fresh23` (a sealed test set): libraries and training code nobody here read.

`fresh23` is recorded the same way as `fresh9` to `fresh21` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; PyHessian's `hessian(..., cuda=)` moves the
model's batches to the GPU; pytorch-accelerated's `Trainer` and PINA's `Trainer(accelerator=)` put the model and
each batch on the device they are given): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh23): pyhessian (PyHessian: the top
  eigenvalues of a network's Hessian by power iteration and its trace by Hutchinson's method, from one batch or a
  loader), pytorch_accelerated (pytorch-accelerated: a `Trainer` over accelerate with callbacks, schedules,
  gradient accumulation and clipping, early stopping, best-model saving and EMA), torchimize (Gauss-Newton,
  Levenberg-Marquardt and gradient descent for non-linear least squares, and its `GNA` optimizer), torchseg
  (segmentation networks on timm encoders and the segmentation losses: Dice, Jaccard, Focal, Lovasz, Tversky, MCC,
  soft BCE and soft cross-entropy), torch_pca (torch-pca: a differentiable sklearn-like PCA in a training loop),
  torchlaplace (Neural Laplace: `laplace_reconstruct` of trajectories from a learnt Laplace representation, and its
  inverse Laplace transform algorithms) and pina (pina-mathlab: physics-informed networks and neural operators
  trained by its lightning `Trainer`);
  + timm (torchseg's encoders), lightning (PINA's), docutils (torchimize's), six (ffjord's). An eighth library,
  stochman (Riemannian geometry of random manifolds, built from its sdist), and the modes below that failed on the
  GPU were removed after the GPU run (docs/accuracy.md says why). Their other needs (numpy, scipy, scikit-learn,
  networkx, matplotlib, tqdm, accelerate, torchmetrics, lightning-utilities, torch_geometric, einops, pyyaml,
  huggingface-hub, safetensors, torchdiffeq, tensorboard, torchvision) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh23/repos/<name>:
  rtqichen/ffjord (train_toy.py as is: continuous normalising flows on 2-D toy densities, which it samples itself,
  with exact and Hutchinson divergences and kinetic / Jacobian regularisers) and nadavbh12/VQ-VAE (main.py as is,
  its VQ-VAE on synthetic digits written as the MNIST files torchvision's loader reads, and on synthetic pictures
  in the folder layout of its `custom` dataset).

    python benchmarks/fresh23_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh23_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh23 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh23 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

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
BENCH_DIR = ac.REPO / ".bench" / "fresh23"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh23", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh23/repos/<name>)
REPOS = {
    "ffjord": ("rtqichen/ffjord", "994864ad0517db3549717c25170f9b71e96788b1",
               ["train_toy.py", "train_misc.py", "lib", "diagnostics/viz_toy.py"]),
    "vqvae": ("nadavbh12/VQ-VAE", "a360e77d43ec43dd5a989f057cbf8e0843bb9b1f",
              ["main.py", "vq_vae/__init__.py", "vq_vae/auto_encoder.py", "vq_vae/nearest_embed.py",
               "vq_vae/util.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["PyHessian==0.1", "pytorch-accelerated==0.1.61", "torchimize==0.0.16", "docutils==0.23",
          "torchseg==0.0.1a4", "timm==1.0.31", "torch-pca==1.1.0", "torchlaplace==0.0.4",
          "pina-mathlab==0.3.2.post2610", "lightning==2.6.6", "six==1.17.0"]
# published as source distributions only, built into wheels by `prepare` (none left: stochman, the one this set had,
# was removed with its workload after it failed on the GPU)
SDISTS: list = []
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"PyHessian": "pyhessian", "pytorch_accelerated": "pytorch-accelerated", "torchimize": "torchimize",
         "torchseg": "torchseg", "torch_pca": "torch-pca", "torchlaplace": "torchlaplace",
         "pina_mathlab": "pina-mathlab", "timm": "timm", "lightning": "lightning",
         "accelerate": "accelerate", "torchdiffeq": "torchdiffeq", "numpy": "numpy", "scipy": "scipy",
         "scikit_learn": "scikit-learn", "networkx": "networkx", "torch_geometric": "torch-geometric",
         "tensorboard": "tensorboard", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh23/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh23_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _fit(params, steps, loss_of, lr=1e-3):
    """A few Adam steps of `loss_of(i)`; the last loss."""
    opt = torch.optim.Adam(params, lr=lr)
    for i in range(steps):
        loss = loss_of(i)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss


def _classes(n, d=20, k=4, seed=0):
    """n points of k Gaussian classes in d dimensions (CPU tensors): features, labels."""
    g = torch.Generator().manual_seed(seed)
    centres = 2.0 * torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    return centres[y] + torch.randn(n, d, generator=g), y


# ============================================================================================
# Libraries
# ============================================================================================

# -- pyhessian (PyHessian): the README's recipe, a trained network's Hessian through `hessian(model, criterion,
#    data=(inputs, targets), cuda=)`: the top eigenvalues by power iteration (`eigenvalues(top_n=)`), the trace by
#    Hutchinson's method (`trace`); the same from a `dataloader=` of several batches; and a sharpness curve, the top
#    eigenvalue read every few steps of a CNN's training. (Its `density`, stochastic Lanczos quadrature, calls
#    `torch.eig`, which torch has removed: left out after the CPU smoke run) -------------------------------------

def pyhessian_spectrum(dev):
    from pyhessian import hessian

    x, y = _classes(768, d=20, k=4)
    cuda = dev.type == "cuda"
    crit = nn.CrossEntropyLoss()

    def mlp():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(20, 64), nn.Tanh(), nn.Linear(64, 64), nn.Tanh(), nn.Linear(64, 4)).to(dev)

    def trained():
        model = mlp()
        xd, yd = x[:512].to(dev), y[:512].to(dev)
        _fit(model.parameters(), 40, lambda i: crit(model(xd), yd), lr=3e-3)
        return model.eval()

    def batch():
        model = trained()
        h = hessian(model, crit, data=(x[:256].to(dev), y[:256].to(dev)), cuda=cuda)
        top, vecs = h.eigenvalues(maxIter=30, tol=1e-3, top_n=3)
        trace = h.trace(maxIter=30, tol=1e-3)
        print(f"top {[round(float(e), 3) for e in top]}, trace {float(sum(trace) / len(trace)):.3f}, "
              f"{len(vecs)} vectors")

    def loader():
        model = trained()
        dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x[:384], y[:384]), batch_size=128)
        h = hessian(model, crit, dataloader=dl, cuda=cuda)
        top, _ = h.eigenvalues(maxIter=12, tol=1e-2, top_n=2)
        trace = h.trace(maxIter=12, tol=1e-2)
        print(f"loader top {[round(float(e), 3) for e in top]}, trace {float(sum(trace) / len(trace)):.3f}")

    def sharpness():
        g = torch.Generator().manual_seed(1)
        imgs = torch.randn(256, 1, 12, 12, generator=g)
        lab = (imgs[:, 0, :6].mean((1, 2)) > imgs[:, 0, 6:].mean((1, 2))).long()
        imgs, lab = imgs.to(dev), lab.to(dev)
        torch.manual_seed(0)
        cnn = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(),
                            nn.Linear(8 * 36, 2)).to(dev)
        opt = torch.optim.SGD(cnn.parameters(), lr=0.1)
        curve = []
        for step in range(16):
            loss = crit(cnn(imgs), lab)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 5 == 0:
                h = hessian(cnn, crit, data=(imgs[:128], lab[:128]), cuda=cuda)
                top, _ = h.eigenvalues(maxIter=10, tol=1e-2)
                curve.append(top[0])
        print(f"sharpness {[round(float(c), 3) for c in curve]}, loss {loss.item():.3f}")
    return {"batch": batch, "loader": loader, "sharpness": sharpness}


# -- pytorch_accelerated (pytorch-accelerated): the docs' `Trainer(model, loss_func, optimizer, callbacks=)` and
#    `trainer.train(train_dataset=, eval_dataset=, num_epochs=, per_device_batch_size=, create_scheduler_fn=)`:
#    a classifier with the default callbacks plus an accuracy callback of our own (`on_eval_step_end` /
#    `on_eval_epoch_end`, `run_history.update_metric`), `EarlyStoppingCallback`, `SaveBestModelCallback`, a cosine
#    schedule with warm-up; a `Trainer` subclass whose `calculate_train_batch_loss` is a two-headed regression
#    loss, with gradient accumulation and clipping and `ModelEmaCallback`, then `trainer.evaluate` ------------------

def accelerated_trainer(dev):
    from pytorch_accelerated import Trainer
    from pytorch_accelerated.callbacks import (
        EarlyStoppingCallback,
        ModelEmaCallback,
        SaveBestModelCallback,
        TrainerCallback,
        get_default_callbacks,
    )
    from pytorch_accelerated.schedulers import CosineLrScheduler

    x, y = _classes(1200, d=16, k=3, seed=2)
    train_ds = torch.utils.data.TensorDataset(x[:960], y[:960])
    eval_ds = torch.utils.data.TensorDataset(x[960:], y[960:])

    class AccuracyCallback(TrainerCallback):
        def on_eval_epoch_start(self, trainer, **kwargs):
            self.correct, self.seen = 0, 0

        def on_eval_step_end(self, trainer, batch, batch_output, **kwargs):
            preds = batch_output["model_outputs"].argmax(-1)
            self.correct += (preds == batch[1]).sum()
            self.seen += len(batch[1])

        def on_eval_epoch_end(self, trainer, **kwargs):
            trainer.run_history.update_metric("accuracy", (self.correct / self.seen).item())

    def classify():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 3))
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
        work = hc._tmp()
        trainer = Trainer(model, loss_func=nn.CrossEntropyLoss(), optimizer=opt,
                          callbacks=(*get_default_callbacks(progress_bar=False), AccuracyCallback(),
                                     EarlyStoppingCallback(early_stopping_patience=2),
                                     SaveBestModelCallback(save_path=os.path.join(work, "best.pt"),
                                                           watch_metric="accuracy", greater_is_better=True)))
        trainer.train(train_dataset=train_ds, eval_dataset=eval_ds, num_epochs=3, per_device_batch_size=64,
                      create_scheduler_fn=CosineLrScheduler.create_scheduler_fn(num_warmup_epochs=1,
                                                                                warmup_starting_lr=1e-4))
        print(f"accuracy {trainer.run_history.get_metric_values('accuracy')}")

    class TwoHeadTrainer(Trainer):
        def calculate_train_batch_loss(self, batch):
            xb, yb = batch
            out = self.model(xb)
            target = F.one_hot(yb, 3).float()
            loss = F.mse_loss(out[:, :3], target) + 0.1 * F.smooth_l1_loss(out[:, 3], xb.norm(dim=1))
            return {"loss": loss, "model_outputs": out, "batch_size": xb.size(0)}

        def calculate_eval_batch_loss(self, batch):
            with torch.no_grad():
                xb, yb = batch
                out = self.model(xb)
                loss = F.mse_loss(out[:, :3], F.one_hot(yb, 3).float())
            return {"loss": loss, "model_outputs": out[:, :3], "batch_size": xb.size(0)}

    def custom():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 64), nn.GELU(), nn.Linear(64, 4))
        work = hc._tmp()
        trainer = TwoHeadTrainer(model, loss_func=None, optimizer=torch.optim.SGD(model.parameters(), lr=0.05,
                                                                                    momentum=0.9),
                                 callbacks=(*get_default_callbacks(progress_bar=False), AccuracyCallback(),
                                            ModelEmaCallback(decay=0.9, save_path=os.path.join(work, "ema.pt"),
                                                             watch_metric="ema_model_eval_loss_epoch")))
        trainer.train(train_dataset=train_ds, eval_dataset=eval_ds, num_epochs=2, per_device_batch_size=32,
                      gradient_accumulation_steps=2, gradient_clip_value=1.0)
        metrics = trainer.evaluate(eval_ds, per_device_batch_size=128)
        print(f"custom eval {metrics}")
    return {"classify": classify, "custom": custom}


# -- torchimize: the README's fitting of non-linear least-squares problems on the device: a damped oscillation
#    plus exponential decay fitted by `lsq_lma` (Levenberg and Marquardt damping), `lsq_gna` and
#    `gradient_descent`, with and without a Jacobian function; a small network fitted by its `GNA` optimizer. (A mode
#    fitting many Gaussian peaks at once by the `*_parallel` functions failed on the GPU in its measured call:
#    `lsq_gna_parallel`'s least-squares step met a rank-deficient batch; it was removed) ---------------------------

def torchimize_fit(dev):
    from torchimize.functions import gradient_descent, lsq_gna, lsq_lma
    from torchimize.optimizer import GNA

    g = torch.Generator().manual_seed(0)
    t = torch.linspace(0, 6, 240, dtype=torch.float64).to(dev)
    p_true = torch.tensor([1.5, 0.4, 0.8, 2.2, 0.3], dtype=torch.float64)

    def model(p, t):
        return p[0] * torch.exp(-p[1] * t) * torch.cos(p[3] * t) + p[2] * torch.exp(-p[4] * t)

    y = (model(p_true, t.cpu()) + 0.02 * torch.randn(240, generator=g, dtype=torch.float64)).to(dev)

    def residuals(p, t, y):
        return model(p, t) - y

    def jac(p, t, y):
        e1, e4 = torch.exp(-p[1] * t), torch.exp(-p[4] * t)
        c, s = torch.cos(p[3] * t), torch.sin(p[3] * t)
        return torch.stack([e1 * c, -p[0] * t * e1 * c, e4, -p[0] * t * e1 * s, -p[2] * t * e4], -1)

    def single():
        p0 = torch.tensor([1.0, 0.2, 0.5, 2.0, 0.5], dtype=torch.float64, device=dev)
        res = {}
        for name, fit in (("lev", lambda: lsq_lma(p0, residuals, jac, args=(t, y), max_iter=60)),
                          ("marq", lambda: lsq_lma(p0, residuals, jac, args=(t, y), meth="marq", max_iter=60)),
                          ("lev_autograd", lambda: lsq_lma(p0, residuals, args=(t, y), max_iter=30)),
                          ("gna", lambda: lsq_gna(p0, residuals, jac, args=(t, y), l=0.5, max_iter=60)),
                          ("gd", lambda: gradient_descent(p0, residuals, jac, args=(t, y), l=2e-3, max_iter=100))):
            steps = fit()
            p = steps[-1]
            res[name] = (len(steps), round((residuals(p, t, y) ** 2).sum().item(), 5))
        print(f"single fits {res}")

    def optimizer():
        torch.manual_seed(0)
        xin = torch.linspace(-2, 2, 200, device=dev).unsqueeze(1)
        target = torch.sin(2 * xin) + 0.3 * xin
        net = nn.Sequential(nn.Linear(1, 12), nn.Tanh(), nn.Linear(12, 1)).to(dev)
        opt = GNA(net.parameters(), lr=0.5, model=net)
        for _step in range(8):
            def closure():
                opt.zero_grad()
                loss = F.mse_loss(net(xin), target)
                loss.backward()
                return loss
            loss = opt.step(xin, closure)
        print(f"GNA loss {float(loss):.4f}")
    return {"single": single, "optimizer": optimizer}


# -- torchseg: the README's segmentation networks on timm encoders (random weights, `encoder_weights=None`)
#    trained a few steps on synthetic shapes on the device with its losses: a multi-class `Unet` (Dice, Focal and
#    soft cross-entropy; Jaccard and Lovasz read in evaluation), a binary `FPN` (Dice from logits, soft BCE, Lovasz
#    hinge, Jaccard, MCC) and a multi-label `Linknet` (Tversky, Focal, Dice with an ignored index); DeepLabV3+,
#    PSPNet, MAnet and Unet++ with an auxiliary classification head (`aux_params`), Dice on chosen classes in
#    log form and a normalised, thresholded Focal loss, both with an ignored label ------------------------------

def _shapes(n, size=64, seed=0):
    """n RGB images with a disc (class 1) and a square (class 2) at random places, their masks (0 background),
    CPU tensors."""
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    imgs, masks = [], []
    for _ in range(n):
        m = torch.zeros(size, size, dtype=torch.long)
        cy, cx = (torch.rand(2, generator=g) * (size - 24) + 12).tolist()
        r = float(torch.rand(1, generator=g) * 6 + 5)
        m[((yy - cy) ** 2 + (xx - cx) ** 2) <= r * r] = 1
        sy, sx = (torch.rand(2, generator=g) * (size - 20) + 4).tolist()
        m[int(sy):int(sy) + 12, int(sx):int(sx) + 12] = 2
        img = torch.stack([(m == 1).float(), (m == 2).float(), 0.5 * torch.ones(size, size)]) * 0.8
        imgs.append(img + 0.2 * torch.randn(3, size, size, generator=g))
        masks.append(m)
    return torch.stack(imgs), torch.stack(masks)


def torchseg_losses(dev):
    import torchseg
    from torchseg.losses import (
        DiceLoss,
        FocalLoss,
        JaccardLoss,
        LovaszLoss,
        MCCLoss,
        SoftBCEWithLogitsLoss,
        SoftCrossEntropyLoss,
        TverskyLoss,
    )

    imgs, masks = _shapes(48)
    imgs, masks = imgs.to(dev), masks.to(dev)

    def batches(steps, bs=8):
        for i in range(steps):
            j = (i * bs) % 40
            yield imgs[j:j + bs], masks[j:j + bs]

    def multiclass():
        torch.manual_seed(0)
        net = torchseg.Unet("resnet18", encoder_weights=None, classes=3, decoder_channels=(64, 32, 16, 16, 8)).to(dev)
        dice, focal = DiceLoss("multiclass"), FocalLoss("multiclass", gamma=2.0)
        sce = SoftCrossEntropyLoss(smooth_factor=0.1)
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        for xb, mb in batches(6):
            logits = net(xb)
            loss = dice(logits, mb) + focal(logits, mb) + sce(logits, mb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            logits = net(imgs[40:])
            jac = JaccardLoss("multiclass")(logits, masks[40:])
            lov = LovaszLoss("multiclass", per_image=True)(logits, masks[40:])
        print(f"multiclass loss {loss.item():.3f}, jaccard {jac.item():.3f}, lovasz {lov.item():.3f}")

    def binary():
        torch.manual_seed(0)
        net = torchseg.FPN("resnet18", encoder_weights=None, classes=1).to(dev)
        losses = [DiceLoss("binary", from_logits=True), SoftBCEWithLogitsLoss(smooth_factor=0.05),
                  LovaszLoss("binary"), JaccardLoss("binary"), MCCLoss()]
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        for xb, mb in batches(6):
            logits = net(xb)
            target = (mb == 1).float().unsqueeze(1)
            parts = [fn(logits, target) if not isinstance(fn, MCCLoss) else fn(logits.sigmoid(), target)
                     for fn in losses]
            loss = sum(parts)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"binary losses {[round(p.item(), 3) for p in parts]}")

    def multilabel():
        torch.manual_seed(0)
        net = torchseg.Linknet("resnet18", encoder_weights=None, classes=2).to(dev)
        tversky = TverskyLoss("multilabel", alpha=0.3, beta=0.7)
        focal = FocalLoss("multilabel", alpha=0.25)
        dice = DiceLoss("multilabel", ignore_index=-1, smooth=1.0)
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        for xb, mb in batches(6):
            target = torch.stack([(mb == 1), (mb > 0)], 1).float()
            target[:, :, :2] = -1  # an unlabelled border
            logits = net(xb)
            loss = tversky(logits, target.clamp(min=0)) + focal(logits, target.clamp(min=0)) + dice(logits, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"multilabel loss {loss.item():.3f}")
    def heads():
        torch.manual_seed(0)
        res = {}
        labels = (masks == 1).flatten(1).any(1).long()
        for arch in (torchseg.DeepLabV3Plus, torchseg.PSPNet, torchseg.MAnet, torchseg.UnetPlusPlus):
            net = arch("resnet18", encoder_weights=None, classes=3, aux_params=dict(classes=2, dropout=0.2)).to(dev)
            dice = DiceLoss("multiclass", classes=[1, 2], log_loss=True, ignore_index=255)
            focal = FocalLoss("multiclass", ignore_index=255, normalized=True, reduced_threshold=0.5)
            opt = torch.optim.Adam(net.parameters(), lr=1e-3)
            for j in range(0, 24, 8):
                target = masks[j:j + 8].clone()
                target[:, :, -3:] = 255
                logits, cls = net(imgs[j:j + 8])
                loss = dice(logits, target) + focal(logits, target) + F.cross_entropy(cls, labels[j:j + 8])
                opt.zero_grad()
                loss.backward()
                opt.step()
            res[arch.__name__] = round(loss.item(), 3)
        print(f"decoders with a classification head {res}")
    return {"multiclass": multiclass, "binary": binary, "multilabel": multilabel, "heads": heads}


# -- torch_pca (torch-pca): the README's differentiable PCA inside a network's training loop on the device (fitted
#    under no_grad, and `fit_transform(determinist=False)` with the full solver). (A mode of its sklearn-like API,
#    the three solvers, variance-ratio and MLE components, whitening, covariance, precision and scores, failed on the
#    GPU in its warm-up: `get_covariance` adds a host identity matrix to device tensors; it was removed) -----------

def torchpca_fit(dev):
    from torch_pca import PCA

    g = torch.Generator().manual_seed(0)
    basis = torch.randn(6, 48, generator=g)
    x = (torch.randn(1500, 6, generator=g) * torch.tensor([5.0, 4, 3, 2, 1, 0.5])) @ basis \
        + 0.1 * torch.randn(1500, 48, generator=g)
    x = x.to(dev)
    train = x[:1200]

    def train_loop():
        torch.manual_seed(0)
        labels = (train[:, 0] > 0).long()
        net = nn.Sequential(nn.Linear(48, 32), nn.ReLU(), nn.Linear(32, 16)).to(dev)
        head = nn.Linear(4, 2).to(dev)
        opt = torch.optim.Adam([*net.parameters(), *head.parameters()], lr=1e-3)
        pca = PCA(n_components=4)
        full = PCA(n_components=4, svd_solver="full")
        for step in range(10):
            idx = torch.randint(0, 1200, (256,), device=dev)
            out = net(train[idx])
            if step % 2 == 0:
                with torch.no_grad():
                    pca.fit(out)
                z = pca.transform(out)
            else:
                z = full.fit_transform(out, determinist=False)
            loss = F.cross_entropy(head(z), labels[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"pca-in-the-loop loss {loss.item():.3f}")
    return {"train": train_loop}


# -- torchlaplace (Neural Laplace): the README's `laplace_reconstruct(laplace_rep_func, p, t, recon_dim=,
#    ilt_algorithm=)` with its demo's Laplace representation network (a stereographic projection of s and the
#    latent p in, angles out) behind a GRU encoder, trained on synthetic damped oscillations and evaluated by
#    extrapolation, for the Fourier, de Hoog and CME algorithms; and the inverse Laplace transform
#    classes (`Fourier`, `DeHoog`, `CME`, `FixedTablot`, `Euler`, `Gaver`) applied to known transforms -------------

class _LaplaceRep(nn.Module):
    """The demo's representation: [stereographic s (2 * s_dim), p] -> (theta, phi) angles on the sphere."""

    def __init__(self, s_dim, output_dim, latent_dim, hidden=48):
        super().__init__()
        self.s_dim, self.output_dim, self.latent_dim = s_dim, output_dim, latent_dim
        self.net = nn.Sequential(nn.Linear(s_dim * 2 + latent_dim, hidden), nn.Tanh(), nn.Linear(hidden, hidden),
                                 nn.Tanh(), nn.Linear(hidden, s_dim * 2 * output_dim))
        self.phi_scale = torch.pi

    def forward(self, i):
        out = self.net(i.view(-1, self.s_dim * 2 + self.latent_dim)).view(-1, 2 * self.output_dim, self.s_dim)
        theta = torch.tanh(out[:, :self.output_dim, :]) * torch.pi
        phi = torch.tanh(out[:, self.output_dim:, :]) * self.phi_scale / 2.0 - torch.pi / 2.0 + self.phi_scale / 2.0
        return theta, phi


def torchlaplace_reconstruct(dev):
    from torchlaplace import laplace_reconstruct
    from torchlaplace.inverse_laplace import CME, DeHoog, Euler, FixedTablot, Fourier, Gaver

    g = torch.Generator().manual_seed(0)
    n, T = 96, 60
    t = torch.linspace(0.01, 6, T)
    w = 1 + torch.rand(n, 1, generator=g) * 2
    d = 0.1 + torch.rand(n, 1, generator=g) * 0.3
    traj = (torch.exp(-d * t) * torch.cos(w * t)).unsqueeze(-1)
    traj = (traj + 0.01 * torch.randn(traj.shape, generator=g)).to(dev)
    t = t.to(dev)
    split = 40
    latent, s_terms = 4, 33

    def neural(alg):
        def run():
            torch.manual_seed(0)
            enc = nn.GRU(1, 24, batch_first=True).to(dev)
            to_p = nn.Linear(24, latent).to(dev)
            rep = _LaplaceRep(s_terms, 1, latent).to(dev)
            params = [*enc.parameters(), *to_p.parameters(), *rep.parameters()]
            opt = torch.optim.Adam(params, lr=3e-3)
            for _epoch in range(2):
                for b in torch.randperm(n, device=dev).split(32):
                    _, h = enc(traj[b, :split])
                    p = to_p(h[-1])
                    pred = laplace_reconstruct(rep, p, t[:split], recon_dim=1, ilt_algorithm=alg,
                                               ilt_reconstruction_terms=s_terms)
                    loss = F.mse_loss(pred, traj[b, :split])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            with torch.no_grad():
                _, h = enc(traj[:, :split])
                pred = laplace_reconstruct(rep, to_p(h[-1]), t[split:], recon_dim=1, ilt_algorithm=alg,
                                           ilt_reconstruction_terms=s_terms)
                extrap = F.mse_loss(pred, traj[:, split:])
            print(f"{alg}: train {loss.item():.4f}, extrapolation {extrap.item():.4f}")
        return run

    def transforms():
        ti = torch.linspace(0.1, 5, 50, device=dev)
        known = {"exp": (lambda s: 1 / (s + 1), torch.exp(-ti)),
                 "sin": (lambda s: 2 / (s ** 2 + 4), torch.sin(2 * ti)),
                 "step_ramp": (lambda s: 1 / s ** 2, ti)}
        errs = {}
        for name, ilt in (("fourier", Fourier()), ("dehoog", DeHoog()), ("cme", CME()),
                          ("fixed_tablot", FixedTablot()), ("euler", Euler()), ("gaver", Gaver(16))):
            errs[name] = {k: round((ilt(fs, ti) - f).abs().max().item(), 4) for k, (fs, f) in known.items()}
        print(f"inverse transforms {errs}")
    return {"fourier": neural("fourier"), "dehoog": neural("dehoog"), "cme": neural("cme"), "transforms": transforms}


# -- pina (pina-mathlab): the tutorials' physics-informed networks trained by PINA's lightning `Trainer`
#    (`accelerator=` the device): the zoo's `Poisson2DSquareProblem` discretised (`discretise_domain`, random and
#    latin hypercube) and solved by `PINN` with a `FeedForward` network, a train / validation split and
#    `MetricTracker`, then `trainer.test()`; the same problem by its self-adaptive, competitive, gradient-enhanced
#    and residual-based-attention PINN solvers; a `SupervisedProblem` (a neural operator's input / output pairs
#    made here) learnt by `SupervisedSolver` with a `DeepONet`; the zoo's Burgers problem by `CausalPINN`, and its
#    advection problem by a `PINN` on a `KolmogorovArnoldNetwork` with `R3Refinement` resampling its collocation
#    points ---------------------------------------------------------------------------------------------------------

def pina_pinn(dev):
    import pina.solver as solvers
    from pina import Trainer
    from pina.callback import MetricTracker
    from pina.model import DeepONet, FeedForward
    from pina.problem.zoo import Poisson2DSquareProblem, SupervisedProblem

    accel = "gpu" if dev.type == "cuda" else "cpu"

    def trainer_for(solver, epochs, **kw):
        return Trainer(solver, max_epochs=epochs, accelerator=accel, devices=1, logger=False,
                       enable_model_summary=False, enable_progress_bar=False, enable_checkpointing=False,
                       default_root_dir=hc._tmp(), **kw)

    def poisson_problem():
        problem = Poisson2DSquareProblem()
        problem.discretise_domain(n=300, mode="random", domains="D")
        problem.discretise_domain(n=80, mode="latin", domains="boundary")
        return problem

    def pinn():
        torch.manual_seed(0)
        problem = poisson_problem()
        model = FeedForward(input_dimensions=2, output_dimensions=1, inner_size=32, n_layers=2)
        solver = solvers.PINN(problem, model)
        trainer = trainer_for(solver, 20, train_size=0.8, val_size=0.1, test_size=0.1,
                              callbacks=[MetricTracker()])
        trainer.train()
        test = trainer.test()
        print(f"pinn test {test}, logged {sorted(trainer.logged_metrics)}")

    def variants():
        res = {}
        for name in ("SelfAdaptivePINN", "CompetitivePINN", "GradientPINN", "RBAPINN"):
            torch.manual_seed(0)
            problem = poisson_problem()
            model = FeedForward(input_dimensions=2, output_dimensions=1, inner_size=24, n_layers=2)
            solver = getattr(solvers, name)(problem, model)
            trainer = trainer_for(solver, 8)
            trainer.train()
            res[name] = {k: round(float(v), 4) for k, v in trainer.logged_metrics.items()}
        print(f"variants {res}")

    def operator():
        torch.manual_seed(0)
        g = torch.Generator().manual_seed(3)
        # u(x) = a sin(k x): inputs (a, k, x), output u; branch reads (a, k), trunk reads x
        a = torch.rand(2000, 1, generator=g) + 0.5
        k = torch.rand(2000, 1, generator=g) * 3 + 1
        xx = torch.rand(2000, 1, generator=g) * 3
        inp, out = torch.cat([a, k, xx], 1), a * torch.sin(k * xx)
        problem = SupervisedProblem(input_=inp.to(dev), output_=out.to(dev))
        branch = FeedForward(input_dimensions=2, output_dimensions=16, inner_size=32, n_layers=2)
        trunk = FeedForward(input_dimensions=1, output_dimensions=16, inner_size=32, n_layers=2)
        model = DeepONet(branch_net=branch, trunk_net=trunk, input_indeces_branch_net=[0, 1],
                         input_indeces_trunk_net=[2])
        solver = solvers.SupervisedSolver(problem, model, use_lt=False)
        trainer = trainer_for(solver, 5, batch_size=128, train_size=0.9, val_size=0.1)
        trainer.train()
        print(f"deeponet {dict((k, round(float(v), 4)) for k, v in trainer.logged_metrics.items())}")
    def time_dependent():
        from pina.callback import R3Refinement
        from pina.model import KolmogorovArnoldNetwork
        from pina.problem.zoo import AdvectionProblem, BurgersProblem
        torch.manual_seed(0)
        burgers = BurgersProblem()
        burgers.discretise_domain(n=400, mode="random", domains="D")
        burgers.discretise_domain(n=60, mode="grid", domains=["t0", "boundary"])
        model = FeedForward(input_dimensions=2, output_dimensions=1, inner_size=24, n_layers=3)
        causal = solvers.CausalPINN(burgers, model, eps=10, n_steps=8, regularized_conditions=["D"])
        trainer = trainer_for(causal, 8)
        trainer.train()
        adv = AdvectionProblem()
        adv.discretise_domain(n=300, mode="latin", domains="D")
        adv.discretise_domain(n=50, mode="random", domains="t0")
        kan = KolmogorovArnoldNetwork([2, 8, 1], n_knots=6)
        trainer2 = trainer_for(solvers.PINN(adv, kan), 8, callbacks=[R3Refinement(sample_every=3)])
        trainer2.train()
        print(f"burgers {dict((k, round(float(v), 4)) for k, v in trainer.logged_metrics.items())}, advection-kan "
              f"{dict((k, round(float(v), 4)) for k, v in trainer2.logged_metrics.items())}")
    return {"pinn": pinn, "variants": variants, "operator": operator, "time_dependent": time_dependent}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _ffjord(dev, name: str, extra: list):
    """rtqichen/ffjord's train_toy.py as is (the GPU when there is one, as it decides: `cuda:0`), on a 2-D toy
    density that it samples itself (`--dims 32-32 --batch_size 200 --test_batch_size 500 --val_freq 4
    --viz_freq 8 --log_freq 2 --atol 1e-3 --rtol 1e-3`, results under a temporary folder), run from that folder
    with the repository's root on the path for its `lib`, `train_misc` and `diagnostics`. The window spans the
    2nd to the 10th `backward`: training steps (loss, NFE and time meters, log lines), two test passes with a
    checkpoint, and one plot of the learnt density and its samples."""
    root = _need_repo("ffjord")
    tmp = hc._tmp()
    argv = ["--dims", "32-32", "--batch_size", "200", "--test_batch_size", "500", "--niters", "1000",
            "--val_freq", "4", "--viz_freq", "8", "--log_freq", "2", "--atol", "1e-3", "--rtol", "1e-3",
            "--save", os.path.join(tmp, "experiments"), *extra]

    def window():
        sys.path.insert(0, str(root))
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 10, stop_script=True):
                hc.run_script(root / "train_toy.py", argv, tmp)
        finally:
            sys.path.remove(str(root))
            for m in [m for m in sys.modules if m.split(".")[0] in ("lib", "train_misc", "diagnostics")]:
                del sys.modules[m]
    return {"train_window": window}


def ffjord_exact(dev):
    """The 8-Gaussians density with the exact (brute-force) divergence and the adaptive dopri5 solver (its
    defaults: concat-squash layers, tanh, a learnt end time)."""
    return _ffjord(dev, "ffjord.exact", ["--data", "8gaussians"])


def ffjord_regularized(dev):
    """The pinwheel density with Hutchinson's divergence estimate on Rademacher noise, the fixed-step rk4
    solver, and kinetic-energy and Jacobian Frobenius regularisers (`--divergence_fn approximate --rademacher
    True --solver rk4 --step_size 0.05 --l2int 0.01 --JFrobint 0.01`)."""
    return _ffjord(dev, "ffjord.regularized", ["--data", "pinwheel", "--divergence_fn", "approximate",
                                               "--rademacher", "True", "--solver", "rk4", "--step_size", "0.05",
                                               "--l2int", "0.01", "--JFrobint", "0.01"])


def _digits_mnist(root: Path, n_train: int = 640, n_test: int = 192, seed: int = 0) -> None:
    """Synthetic 28 x 28 digits written as the four MNIST idx files torchvision's `MNIST` reads from
    `<root>/MNIST/raw` (a ring or a cross per class, its size by class, at a random place, with noise)."""
    import numpy as np
    rng = np.random.default_rng(seed)
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    yy, xx = np.mgrid[:28, :28]
    for split, n in (("train", n_train), ("t10k", n_test)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        imgs = np.zeros((n, 28, 28), np.float32)
        for i, c in enumerate(labels):
            cy, cx = rng.integers(9, 19, 2)
            r = 3 + c % 5
            if c < 5:
                imgs[i] = np.abs(np.hypot(yy - cy, xx - cx) - r) < 1.2
            else:
                imgs[i] = ((np.abs(yy - cy) < 1.5) & (np.abs(xx - cx) <= r)) | ((np.abs(xx - cx) < 1.5)
                                                                                 & (np.abs(yy - cy) <= r))
        imgs = np.clip(imgs * 230 + rng.normal(0, 12, imgs.shape), 0, 255).astype(np.uint8)
        with open(raw / f"{split}-images-idx3-ubyte", "wb") as f:
            f.write(np.array([2051, n, 28, 28], ">i4").tobytes() + imgs.tobytes())
        with open(raw / f"{split}-labels-idx1-ubyte", "wb") as f:
            f.write(np.array([2049, n], ">i4").tobytes() + labels.tobytes())


def _shapes_folder(root: Path, n_train: int = 96, n_test: int = 32, size: int = 64, seed: int = 0) -> None:
    """Synthetic RGB pictures (a coloured disc and square on a noisy background) written as PNG files in the
    `train/<class>/` and `val/<class>/` layout torchvision's `ImageFolder` reads (two classes)."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:size, :size]
    for split, n in (("train", n_train), ("val", n_test)):
        for i in range(n):
            folder = root / split / ("discs" if i % 2 else "squares")
            folder.mkdir(parents=True, exist_ok=True)
            img = rng.normal(60, 20, (size, size, 3))
            cy, cx = rng.integers(12, size - 12, 2)
            r = rng.integers(5, 11)
            img[(yy - cy) ** 2 + (xx - cx) ** 2 <= r * r] = rng.integers(120, 255, 3)
            sy, sx = rng.integers(2, size - 14, 2)
            img[sy:sy + 12, sx:sx + 12] = rng.integers(120, 255, 3)
            Image.fromarray(np.clip(img, 0, 255).astype(np.uint8)).save(folder / f"{i:03d}.png")


def _vqvae(dev, name: str, extra: list, stop: int, data):
    """nadavbh12/VQ-VAE's main.py as is (`--model vqvae --epochs 2`, the GPU when there is one, as it decides;
    its loaders take 8 workers and pinned memory then), on synthetic data written in the layout its dataset
    reads from `--data-dir`, results under a temporary folder. The window spans the 2nd to the `stop`-th
    `backward`: the first epoch's remaining steps (its per-batch loss reads and log lines), the epoch's end
    (reconstructions saved, TensorBoard images and the dictionary's histogram), the test pass with a checkpoint,
    and the second epoch's start."""
    root = _need_repo("vqvae")
    tmp = Path(hc._tmp())
    data(tmp / "data")
    argv = ["--model", "vqvae", "--epochs", "2", "--data-dir", str(tmp / "data"), "--results-dir",
            str(tmp / "results"), "--save-name", "run", *extra]

    def window():
        with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, stop, stop_script=True):
            hc.run_script(root / "main.py", argv, str(tmp))
    return {"train_window": window}


def vqvae_mnist(dev):
    """Its MNIST recipe (`--dataset mnist --batch-size 64 --log-interval 4 -k 10 --hidden 64`, the script's MNIST
    defaults named, since the end of its epoch reads `args.k`) on 640 + 192 synthetic digits written as the MNIST
    idx files torchvision's `MNIST` reads; window 2nd to 16th `backward` (10 steps an epoch)."""
    return _vqvae(dev, "vqvae.mnist", ["--dataset", "mnist", "--batch-size", "64", "--log-interval", "4", "-k", "10",
                                       "--hidden", "64"], 16, lambda d: _digits_mnist(d / "mnist"))


def vqvae_custom(dev):
    """Its own-images recipe (`--dataset custom --dataset_dir_name shapes --batch-size 16 --log-interval 2 -k 64
    --hidden 32`: 3-channel images resized and cropped to 256, an `ImageFolder`) on 96 + 32 synthetic PNG pictures;
    window 2nd to 10th `backward` (6 steps an epoch)."""
    return _vqvae(dev, "vqvae.custom", ["--dataset", "custom", "--dataset_dir_name", "shapes", "--batch-size", "16",
                                        "--log-interval", "2", "-k", "64", "--hidden", "32"], 10,
                  lambda d: _shapes_folder(d / "shapes"))


MODELS = [
    # name, package, builder
    ("pyhessian.spectrum", "pyhessian", pyhessian_spectrum),
    ("pytorch_accelerated.trainer", "pytorch_accelerated", accelerated_trainer),
    ("torchimize.fit", "torchimize", torchimize_fit),
    ("torchseg.losses", "torchseg", torchseg_losses),
    ("torch_pca.fit", "torch_pca", torchpca_fit),
    ("torchlaplace.reconstruct", "torchlaplace", torchlaplace_reconstruct),
    ("pina.pinn", "pina", pina_pinn),
    ("ffjord.exact", "ffjord", ffjord_exact),
    ("ffjord.regularized", "ffjord", ffjord_regularized),
    ("vqvae.mnist", "vqvae", vqvae_mnist),
    ("vqvae.custom", "vqvae", vqvae_custom),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh23", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
