"""Record the syncs of a nineteenth set, `fresh18` (a sealed test set): libraries and training code nobody here read.

`fresh18` is recorded the same way as `fresh9` to `fresh17` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do: no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh18): adversarial-robustness-toolbox
  (`art`: evasion attacks on a `PyTorchClassifier` with `device_type="gpu"` -- FGSM, PGD, Carlini-Wagner L2,
  DeepFool, AutoPGD -- adversarial training, gradients, empirical robustness), deepctr-torch
  (click-through-rate models with `device=`: DeepFM, xDeepFM, NFM, PNN, AFM, DCN, DCN-Mix, AutoInt, FiBiNET, a
  Wide & Deep regression, DIN on behaviour sequences, compiled and fitted with validation, AUC and log-loss,
  predicted), fastmri (MRI
  reconstruction: k-space transforms and undersampling masks, a U-Net trained with the SSIM loss on zero-filled
  images, an end-to-end VarNet with sensitivity maps trained on multi-coil k-space), gcastle (`castle`: causal
  discovery with gradient-based learners on `device_type="gpu"` -- GraN-DAG, DAG-GNN, GAE, MCSL, GOLEM -- on
  simulated SEMs, scored with `MetricsDAG`), cliffordlayers (Clifford-algebra
  convolutions, Fourier layers and normalisations; 2-D ResNet and FNO-style Clifford networks and a 3-D Clifford
  FNO trained on synthetic multivector fields), labml-nn (paper implementations: a DDPM with its U-Net, capsule
  routing with the margin loss, rotary / ALiBi / relative attention in a transformer encoder, a switch
  feed-forward, GAT layers, samplers, PPO losses, Wasserstein GAN losses with the gradient penalty, evidential
  losses, HyperLSTM, its RAdam / AdaBelief / Noam / Sophia optimisers; + labml 0.4.168, its need: its attention
  calls `tracker.debug`, which labml 0.5 removed), deepecho (sequential
  synthetic data: the PAR model and the basic GAN fitted on a multi-entity time-series frame with `cuda=`, then
  sampled) and deel-torchlip (`deel`: 1-Lipschitz networks -- spectral and Frobenius layers, GroupSort, L2-norm
  pooling -- trained with the HKR, KR and hinge losses, their Lipschitz constants estimated, exported to vanilla
  layers);
  + tensorboard_logger (SupContrast's logger, not on the GPU machine; its generated protobuf code needs the
  pure-Python protobuf implementation, which this file selects before anything imports protobuf). Their other
  needs (numpy, scipy, scikit-learn, pandas, matplotlib, networkx, tqdm, requests, pyyaml, h5py, scikit-image,
  pillow, einops, torchvision) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh18/repos/<name>:
  HobbitLong/SupContrast (main_supcon.py as is: SupCon and SimCLR pre-training of a ResNet-18 on synthetic
  images written as the class folders its `--dataset path` loader reads) and explainingai-code/DDPM-Pytorch
  (tools/train_ddpm.py and tools/sample_ddpm.py as is, run as its README's `python -m tools....`, on synthetic
  digits written in the png folder layout its dataset reads, with a config file of the script's own keys).

    python benchmarks/fresh18_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh18_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh18 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh18 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import os
import shutil
import sys
import warnings
from pathlib import Path

# tensorboard_logger (SupContrast's) ships protobuf code generated for protobuf 3: only the pure-Python
# implementation still loads it, and the choice is made when protobuf is first imported
os.environ.setdefault("PROTOCOL_BUFFERS_PYTHON_IMPLEMENTATION", "python")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh_collect as fc
import heldout_collect as hc
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
BENCH_DIR = ac.REPO / ".bench" / "fresh18"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh18", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh18/repos/<name>)
REPOS = {
    "supcontrast": ("HobbitLong/SupContrast", "66a8fe53880d6a1084b2e4e0db0a019024d6d41a",
                    ["main_supcon.py", "util.py", "losses.py", "networks"]),
    "ddpm": ("explainingai-code/DDPM-Pytorch", "b524321c101af13f28a5d1f4fbcca1a847c19924",
             ["tools", "models", "scheduler", "dataset", "config"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["adversarial-robustness-toolbox==1.20.1", "deepctr-torch==0.3.0", "fastmri==0.3.0", "gcastle==1.0.4",
          "cliffordlayers==0.1.1", "labml-nn==0.5.1", "labml==0.4.168", "deepecho==0.8.1", "deel-torchlip==1.0.5",
          "tensorboard_logger==0.1.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"adversarial_robustness_toolbox": "adversarial-robustness-toolbox", "deepctr_torch": "deepctr-torch",
         "fastmri": "fastmri", "gcastle": "gcastle", "cliffordlayers": "cliffordlayers", "labml_nn": "labml-nn",
         "deepecho": "deepecho", "deel_torchlip": "deel-torchlip", "numpy": "numpy", "scipy": "scipy",
         "scikit_learn": "scikit-learn", "pandas": "pandas", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh18/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh18_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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


def _digits(n, size=28, seed=0):
    """n synthetic 1 x size x size "digits" in [0, 1] (a CPU tensor: strokes of ten class-specific shapes with
    random shifts and noise) and their labels."""
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
    lab = torch.randint(0, 10, (n,), generator=g)
    imgs = torch.zeros(n, 1, size, size)
    for i in range(n):
        k = int(lab[i])
        dx, dy = (torch.rand(2, generator=g) - 0.5) * 0.3
        x, y = xx - dx, yy - dy
        r = (x ** 2 + y ** 2).sqrt()
        ang = torch.atan2(y, x)
        shape = (r - 0.35 - 0.12 * torch.cos((k + 1) * ang)).abs() < 0.09
        if k % 2:
            shape |= (x - 0.1 * (k - 5) * y).abs() < 0.07
        imgs[i, 0] = shape.float()
    return (imgs + 0.1 * torch.rand(n, 1, size, size, generator=g)).clamp(0, 1), lab


# ============================================================================================
# Libraries
# ============================================================================================

# -- adversarial-robustness-toolbox (art): the README's flow -- a PyTorch CNN wrapped in `PyTorchClassifier`
#    (`device_type="gpu"`, clip values, its loss and optimiser), `fit` on numpy digits, `predict`; evasion attacks
#    `generate`d against it (FastGradientMethod, ProjectedGradientDescent, BasicIterativeMethod, CarliniL2Method,
#    DeepFool, AutoProjectedGradientDescent); `loss_gradient` / `class_gradient`;
#    adversarial training (`AdversarialTrainer` with FGSM, `AdversarialTrainerMadryPGD`); `empirical_robustness`,
#    `clever_u` ---------------------------------------------------------------------------------------------------

def art_attacks(dev):
    import numpy as np
    from art.estimators.classification import PyTorchClassifier

    x, y = _digits(256)
    x_np, y_np = x.numpy().astype(np.float32), y.numpy()
    x_test = x_np[:32]
    dtype = "gpu" if dev.type == "cuda" else "cpu"

    def classifier():
        model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                              nn.Linear(16 * 7 * 7, 10))
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        return PyTorchClassifier(model=model, loss=nn.CrossEntropyLoss(), optimizer=opt, input_shape=(1, 28, 28),
                                 nb_classes=10, clip_values=(0.0, 1.0), device_type=dtype)

    clf = classifier()
    clf.fit(x_np, y_np, batch_size=64, nb_epochs=1)

    def train():
        c = classifier()
        c.fit(x_np, np.eye(10)[y_np].astype(np.float32), batch_size=64, nb_epochs=2)
        pred = c.predict(x_test)
        grads = c.loss_gradient(x_test[:8], np.eye(10)[y_np[:8]].astype(np.float32))
        cg = c.class_gradient(x_test[:4], label=int(y_np[0]))
        print(f"classifier acc {float((pred.argmax(1) == y_np[:32]).mean()):.2f}, loss grad {grads.shape}, "
              f"class grad {cg.shape}")

    def gradient():
        from art.attacks.evasion import BasicIterativeMethod, FastGradientMethod, ProjectedGradientDescent
        out = {}
        for name, atk in (("fgsm", FastGradientMethod(estimator=clf, eps=0.1)),
                          ("fgsm-l2", FastGradientMethod(estimator=clf, norm=2, eps=1.0, targeted=False)),
                          ("pgd", ProjectedGradientDescent(estimator=clf, eps=0.1, eps_step=0.02, max_iter=10,
                                                           verbose=False)),
                          ("bim", BasicIterativeMethod(estimator=clf, eps=0.1, eps_step=0.02, max_iter=5,
                                                       verbose=False))):
            adv = atk.generate(x=x_test)
            out[name] = round(float((clf.predict(adv).argmax(1) == y_np[:32]).mean()), 2)
        print(f"accuracy under attack {out}")

    def optimisation():
        from art.attacks.evasion import AutoProjectedGradientDescent, CarliniL2Method, DeepFool
        xs = x_test[:8]
        cw = CarliniL2Method(classifier=clf, confidence=0.0, max_iter=4, binary_search_steps=2, batch_size=8,
                             verbose=False).generate(x=xs)
        df = DeepFool(classifier=clf, max_iter=4, batch_size=8, verbose=False).generate(x=xs)
        apgd = AutoProjectedGradientDescent(estimator=clf, eps=0.1, eps_step=0.02, max_iter=4, nb_random_init=1,
                                            batch_size=8, verbose=False).generate(x=xs)
        print(f"cw l2 {float(np.abs(cw - xs).mean()):.4f}, deepfool {float(np.abs(df - xs).mean()):.4f}, "
              f"apgd {float(np.abs(apgd - xs).max()):.3f}")

    def defences():
        from art.attacks.evasion import FastGradientMethod, ProjectedGradientDescent
        from art.defences.trainer import AdversarialTrainer, AdversarialTrainerMadryPGD
        from art.metrics import clever_u, empirical_robustness
        c = classifier()
        AdversarialTrainer(c, attacks=FastGradientMethod(estimator=c, eps=0.1), ratio=0.5).fit(
            x_np[:96], y_np[:96], nb_epochs=1, batch_size=32)
        c2 = classifier()
        AdversarialTrainerMadryPGD(c2, nb_epochs=1, batch_size=32, eps=0.1, eps_step=0.02, max_iter=3).fit(
            x_np[:96], y_np[:96])
        er = empirical_robustness(clf, x_test[:8], "fgsm", attack_params={"eps": 0.1})
        cl = clever_u(clf, x_test[0], nb_batches=2, batch_size=4, radius=0.3, norm=2, pool_factor=2, verbose=False)
        pgd = ProjectedGradientDescent(estimator=c2, eps=0.1, eps_step=0.02, max_iter=5, verbose=False)
        acc = float((c2.predict(pgd.generate(x=x_test[:16])).argmax(1) == y_np[:16]).mean())
        print(f"adversarially trained pgd acc {acc:.2f}, empirical robustness {er:.3f}, clever {cl:.3f}")
    # a `blackbox` mode (the decision-based HopSkipJump, first BoundaryAttack) was left out before the GPU run: both
    # hand the classifier float64 arrays that its float32 network rejects, on the CPU already
    return {"train": train, "gradient": gradient, "optimisation": optimisation, "defences": defences}


# -- deepctr-torch: the README's CTR recipe with `device=` -- sparse and dense feature columns (`SparseFeat`,
#    `DenseFeat`, `get_feature_names`), models `compile`d with an optimiser name, a loss and metrics
#    (`binary_crossentropy`, `auc`), `fit` with a validation split, `predict`: DeepFM, xDeepFM, NFM, PNN, AFM, DCN
#    (vector and matrix), DCN-Mix, AutoInt, FiBiNET; DIN on behaviour sequences (`VarLenSparseFeat`); Wide & Deep on
#    a regression task (`mse`) -------------------------------------------------------------------------------------

def deepctr_ctr(dev):
    import numpy as np
    import pandas as pd
    from deepctr_torch.inputs import DenseFeat, SparseFeat, VarLenSparseFeat, get_feature_names

    rng = np.random.default_rng(0)
    n = 1024
    sparse = [f"C{i}" for i in range(6)]
    dense = [f"I{i}" for i in range(4)]
    data = pd.DataFrame({**{c: rng.integers(0, 20 + 5 * i, n) for i, c in enumerate(sparse)},
                         **{c: rng.random(n).astype(np.float32) for c in dense}})
    logit = 0.8 * (data["C0"] % 3 == 0) + data["I0"] - 0.5 * data["I1"] + 0.3 * (data["C2"] > 10)
    data["label"] = (rng.random(n) < 1 / (1 + np.exp(-(logit - 0.8)))).astype(np.float32)
    cols = ([SparseFeat(c, vocabulary_size=int(data[c].max()) + 1, embedding_dim=8) for c in sparse]
            + [DenseFeat(c, 1) for c in dense])
    names = get_feature_names(cols + cols)
    inputs = {k: data[k].values for k in names}
    device = f"cuda:{dev.index or 0}" if dev.type == "cuda" else "cpu"

    def fit(model, x=inputs, y=data["label"].values, loss="binary_crossentropy",
            metrics=("binary_crossentropy", "auc")):
        model.compile("adam", loss, metrics=list(metrics))
        hist = model.fit(x, y, batch_size=256, epochs=2, verbose=0, validation_split=0.2)
        pred = model.predict(x, batch_size=512)
        return hist, pred

    def fm_family():
        from deepctr_torch.models import AFM, NFM, PNN, DeepFM, xDeepFM
        res = {}
        for name, cls, kw in (("deepfm", DeepFM, {}), ("xdeepfm", xDeepFM, {"cin_layer_size": (32, 32)}),
                              ("nfm", NFM, {}), ("pnn", PNN, {}), ("afm", AFM, {})):
            if cls is PNN:
                model = cls(cols, task="binary", device=device, **kw)
            elif cls is AFM:
                sparse_cols = [c for c in cols if isinstance(c, SparseFeat)]
                model = cls(sparse_cols, sparse_cols, task="binary", device=device)
            else:
                model = cls(cols, cols, task="binary", l2_reg_embedding=1e-5, device=device, **kw)
            hist, pred = fit(model)
            res[name] = round(float(hist.history["val_auc"][-1]), 3) if "val_auc" in hist.history else pred.shape
        print(f"fm family {res}")

    def cross():
        from deepctr_torch.models import DCN, AutoInt, DCNMix, FiBiNET
        res = {}
        for name, model in (("dcn", DCN(cols, cols, cross_num=2, task="binary", device=device)),
                            ("dcn-matrix", DCN(cols, cols, cross_num=2, cross_parameterization="matrix",
                                               task="binary", device=device)),
                            ("dcnmix", DCNMix(cols, cols, cross_num=2, task="binary", device=device)),
                            ("autoint", AutoInt(cols, cols, att_layer_num=2, task="binary", device=device)),
                            ("fibinet", FiBiNET(cols, cols, task="binary", device=device))):
            hist, pred = fit(model)
            res[name] = round(float(pred.mean()), 3)
        print(f"cross models mean ctr {res}")

    def regression():
        from deepctr_torch.models import WDL
        model = WDL(cols, cols, task="regression", device=device)
        hist, pred = fit(model, y=(data["I0"] * 3 + data["C1"] * 0.1).values.astype(np.float32), loss="mse",
                         metrics=("mse",))
        print(f"wide & deep regression {pred.shape}, val mse {hist.history.get('val_mse', ['-'])[-1]}")

    def behaviour():
        from deepctr_torch.models import DIN
        m, seq = 512, 10
        item = rng.integers(1, 50, m)
        cate = item % 7 + 1
        hist_item = rng.integers(0, 50, (m, seq))
        lengths = rng.integers(1, seq + 1, m)
        hist_item[np.arange(seq)[None, :] >= lengths[:, None]] = 0
        hist_cate = np.where(hist_item > 0, hist_item % 7 + 1, 0)
        feats = [SparseFeat("user", 64, embedding_dim=8), SparseFeat("gender", 2, embedding_dim=8),
                 SparseFeat("item_id", 51, embedding_dim=8), SparseFeat("cate_id", 8, embedding_dim=8),
                 DenseFeat("pay_score", 1),
                 VarLenSparseFeat(SparseFeat("hist_item_id", 51, embedding_dim=8, embedding_name="item_id"),
                                  maxlen=seq, length_name="seq_length"),
                 VarLenSparseFeat(SparseFeat("hist_cate_id", 8, embedding_dim=8, embedding_name="cate_id"),
                                  maxlen=seq, length_name="seq_length")]
        x = {"user": rng.integers(0, 64, m), "gender": rng.integers(0, 2, m), "item_id": item, "cate_id": cate,
             "pay_score": rng.random(m).astype(np.float32), "hist_item_id": hist_item, "hist_cate_id": hist_cate,
             "seq_length": lengths}
        y = ((hist_item == item[:, None]).any(1) | (rng.random(m) < 0.1)).astype(np.float32)
        model = DIN(feats, ["item_id", "cate_id"], device=device, att_weight_normalization=True)
        hist, pred = fit(model, x={k: x[k] for k in get_feature_names(feats)}, y=y)
        print(f"din {pred.shape} mean {float(pred.mean()):.3f}")
    return {"fm_family": fm_family, "cross": cross, "regression": regression, "behaviour": behaviour}


# -- fastmri: the README's building blocks -- multi-coil k-space made from synthetic phantoms and coil
#    sensitivities, `to_tensor`, `RandomMaskFunc` / `EquiSpacedMaskFunc` undersampling (`apply_mask`) and the
#    `UnetDataTransform` / `VarNetDataTransform` on the CPU as its data loaders do, batches moved to the device;
#    `ifft2c`, `complex_abs`, `rss`, `center_crop`, `normalize_instance`; a `Unet` trained on zero-filled images with
#    `SSIMLoss` (its `data_range` a device tensor); the end-to-end `VarNet` (sensitivity-map network, cascades)
#    trained and evaluated ---------------------------------------------------------------------------------------

def _kspace(n_slices, coils=4, size=64, seed=0):
    """(slices, coils, size, size) complex64 k-space of synthetic ellipse phantoms seen through smooth coil
    sensitivities, and the root-sum-of-squares targets (slices, size, size), as numpy arrays."""
    import numpy as np
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[-1:1:size * 1j, -1:1:size * 1j]
    ks, targets = [], []
    for _ in range(n_slices):
        img = np.zeros((size, size))
        for _ in range(5):
            cx, cy, a, b = rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5), rng.uniform(0.1, 0.5), rng.uniform(0.1, 0.5)
            img += rng.uniform(0.2, 1.0) * ((((xx - cx) / a) ** 2 + ((yy - cy) / b) ** 2) < 1)
        phase = np.exp(1j * rng.uniform(-0.3, 0.3) * (xx + yy))
        sens = np.stack([np.exp(-((xx - np.cos(t)) ** 2 + (yy - np.sin(t)) ** 2)) * np.exp(1j * t)
                         for t in np.linspace(0, 2 * np.pi, coils, endpoint=False)])
        coil_imgs = sens * img * phase
        k = np.fft.fftshift(np.fft.fft2(np.fft.ifftshift(coil_imgs, axes=(-2, -1)), norm="ortho"), axes=(-2, -1))
        ks.append(k.astype(np.complex64))
        targets.append(np.sqrt((np.abs(coil_imgs) ** 2).sum(0)).astype(np.float32))
    return np.stack(ks), np.stack(targets)


def fastmri_recon(dev):
    import fastmri
    import fastmri.models
    from fastmri.data import transforms as T
    from fastmri.data.subsample import EquiSpacedMaskFunc, RandomMaskFunc

    kspace, targets = _kspace(8)
    mask_func = RandomMaskFunc(center_fractions=[0.08], accelerations=[4])

    def unet_batch():
        tf = T.UnetDataTransform("multicoil", mask_func=mask_func)
        samples = [tf(kspace[i], None, targets[i], {"max": float(targets[i].max())}, "synthetic", i)
                   for i in range(len(kspace))]
        img = torch.stack([s.image for s in samples]).unsqueeze(1).to(dev)
        tgt = torch.stack([s.target for s in samples]).unsqueeze(1).to(dev)
        maxval = torch.tensor([s.max_value for s in samples]).to(dev)
        return img, tgt, maxval

    def transforms():
        k = T.to_tensor(kspace[0])
        masked, mask, n_low = T.apply_mask(k, EquiSpacedMaskFunc(center_fractions=[0.08], accelerations=[4]), seed=0)
        masked = masked.to(dev)
        image = fastmri.ifft2c(masked)
        rss = fastmri.rss(fastmri.complex_abs(image), dim=0)
        crop = T.center_crop(rss, (48, 48))
        normed, mean, std = T.normalize_instance(crop, eps=1e-11)
        full = fastmri.rss_complex(fastmri.ifft2c(T.to_tensor(kspace[0]).to(dev)), dim=0)
        err = (T.center_crop(full, (48, 48)) - crop).abs().mean()
        print(f"zero-filled {tuple(crop.shape)}, low frequencies {n_low}, mean {mean.item():.3f} std {std.item():.3f}, "
              f"error {err.item():.4f}, sampled lines {int(mask.sum())}")

    img, tgt, maxval = unet_batch()
    unet = fastmri.models.Unet(in_chans=1, out_chans=1, chans=16, num_pool_layers=3).to(dev)
    ssim = fastmri.SSIMLoss().to(dev)

    def unet_train():
        def loss_of(i):
            out = unet(img)
            return ssim(out, tgt, data_range=maxval) + F.l1_loss(out, tgt)
        loss = _fit(unet.parameters(), 3, loss_of)
        unet.eval()
        with torch.no_grad():
            val = 1 - ssim(unet(img), tgt, data_range=maxval)
        unet.train()
        print(f"unet loss {loss.item():.4f}, ssim {val.item():.3f}")

    varnet = fastmri.models.VarNet(num_cascades=2, sens_chans=4, sens_pools=2, chans=8, pools=2).to(dev)
    vtf = T.VarNetDataTransform(mask_func=mask_func)

    def varnet_train():
        # the acquired columns and the reconstruction size, as its h5 files' attrs give them
        attrs = {"padding_left": 0, "padding_right": kspace.shape[-1], "recon_size": (*kspace.shape[-2:], 1)}
        samples = [vtf(kspace[i], None, targets[i], {**attrs, "max": float(targets[i].max())}, "synthetic", i)
                   for i in range(4)]
        mk = torch.stack([s.masked_kspace for s in samples]).to(dev)
        mask = torch.stack([s.mask for s in samples]).to(dev)
        tgt = torch.stack([s.target for s in samples]).to(dev)
        maxv = torch.tensor([s.max_value for s in samples]).to(dev)
        n_low = samples[0].num_low_frequencies

        def loss_of(i):
            out = varnet(mk, mask, n_low)
            out = T.center_crop(out, tgt.shape[-2:])
            return ssim(out.unsqueeze(1), tgt.unsqueeze(1), data_range=maxv)
        loss = _fit(varnet.parameters(), 2, loss_of)
        varnet.eval()
        with torch.no_grad():
            rec = varnet(mk, mask)
        varnet.train()
        print(f"varnet loss {loss.item():.4f}, reconstruction {tuple(rec.shape)} max {rec.max().item():.3f}")
    return {"transforms": transforms, "unet": unet_train, "varnet": varnet_train}


# -- gcastle (castle): the README's flow -- a random DAG (`DAG.erdos_renyi`), nonlinear data simulated from it
#    (`IIDSimulation`, MLP and quadratic SEMs; a linear Gaussian one for GOLEM), gradient-based learners run on the
#    GPU (`device_type="gpu"`) with small iteration counts: DAG-GNN, GAE, MCSL, GOLEM, GraN-DAG; `learn`,
#    `causal_matrix`, `MetricsDAG(...).metrics` ---------------------------------------------------------------------

def gcastle_discovery(dev):
    os.environ.setdefault("CASTLE_BACKEND", "pytorch")
    import castle.algorithms  # noqa: F401
    from castle.datasets import DAG, IIDSimulation
    from castle.metrics import MetricsDAG

    # importing its algorithms sets torch's default dtype to float64, which its learners rely on: they run under it,
    # and the workloads after this one get float32 back. GraN-DAG on the GPU sets the default tensor type to a CUDA
    # one itself and leaves it so (the first GPU run's later workloads failed on it): it is put back to the CPU's
    # float32 after every learner, and GraN-DAG runs last
    castle_dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)

    d = 6
    true_dag = DAG.erdos_renyi(n_nodes=d, n_edges=7, weight_range=(0.5, 2.0), seed=1)
    mlp = IIDSimulation(W=true_dag, n=600, method="nonlinear", sem_type="mlp")
    quad = IIDSimulation(W=true_dag, n=600, method="nonlinear", sem_type="quadratic")
    lin = IIDSimulation(W=true_dag, n=600, method="linear", sem_type="gauss")
    dtype = "gpu" if dev.type == "cuda" else "cpu"

    def score(model, X):
        torch.set_default_dtype(castle_dtype)
        try:
            model.learn(X)
        finally:
            with warnings.catch_warnings():  # deprecated, but the one call that undoes what GraN-DAG set
                warnings.simplefilter("ignore")
                torch.set_default_tensor_type(torch.FloatTensor)
            torch.set_default_dtype(torch.float32)
            assert torch.empty(0).device.type == "cpu" and torch.empty(0).dtype == torch.float32
        m = MetricsDAG(model.causal_matrix, (true_dag != 0).astype(int)).metrics
        return {k: m[k] for k in ("shd", "F1")}

    def grandag():
        from castle.algorithms import GraNDAG
        print("gran-dag", score(GraNDAG(input_dim=d, hidden_num=1, hidden_dim=8, batch_size=64, iterations=150,
                                        device_type=dtype, random_seed=0), mlp.X))

    def dag_gnn():
        from castle.algorithms import DAG_GNN
        print("dag-gnn", score(DAG_GNN(epochs=4, k_max_iter=2, batch_size=100, encoder_hidden=16, decoder_hidden=16,
                                       device_type=dtype), mlp.X))

    def gae():
        from castle.algorithms import GAE
        print("gae", score(GAE(input_dim=1, hidden_layers=1, hidden_dim=8, epochs=1, update_freq=10, init_iter=1,
                               device_type=dtype), quad.X))

    def mcsl():
        from castle.algorithms import MCSL
        print("mcsl", score(MCSL(model_type="nn", hidden_dim=8, num_hidden_layers=2, max_iter=2, iter_step=20,
                                 init_iter=1, device_type=dtype), quad.X))

    def golem():
        from castle.algorithms import GOLEM
        print("golem", score(GOLEM(num_iter=400, checkpoint_iter=200, device_type=dtype), lin.X))

    # a `notears_mlp` mode (`NotearsNonlinear`: its L-BFGS-B steps in scipy, each evaluation on the device) was left
    # out before the GPU run: under the recorder's line tracer it took over a minute on the CPU for one outer step
    return {"dag_gnn": dag_gnn, "gae": gae, "mcsl": mcsl, "golem": golem, "grandag": grandag}


# -- cliffordlayers: the docs' layers and models on multivector fields (`(batch, channels, *grid, blades)`) made
#    on the device: a 2-D Clifford ResNet (`CliffordNet2d` with `CliffordBasicBlock2d`, rotational convolutions of
#    the quaternion signature, group normalisation) and a 2-D Clifford FNO (`CliffordFourierBasicBlock2d`) trained
#    one step ahead on a synthetic advected scalar and vector field; a 3-D Clifford FNO (`CliffordNet3d`);
#    `CliffordLinear`, `CliffordConv1d`, `CliffordSpectralConv2d`, Clifford batch and group norms, and the complex
#    ones ---------------------------------------------------------------------------------------------------------

def cliffordlayers_nets(dev):
    from cliffordlayers.models.models_2d import CliffordBasicBlock2d, CliffordFourierBasicBlock2d, CliffordNet2d
    from cliffordlayers.models.models_3d import CliffordFourierBasicBlock3d, CliffordNet3d

    g = torch.Generator().manual_seed(0)
    t = torch.linspace(0, 2 * torch.pi, 33)[:-1]
    yy, xx = torch.meshgrid(t, t, indexing="ij")
    frames = []
    for s in range(6):  # a scalar density and a 2-D velocity field drifting in time, as multivectors
        rho = torch.sin(xx - 0.3 * s) * torch.cos(yy + 0.2 * s)
        vel = torch.stack([torch.cos(yy - 0.3 * s), torch.sin(xx + 0.2 * s)], -1)
        frames.append(torch.cat([rho[..., None], vel, torch.zeros(32, 32, 1)], -1))
    seq = torch.stack(frames)  # (time, 32, 32, 4)
    batch = torch.stack([seq.roll(int(k), 2) + 0.05 * torch.randn(seq.shape, generator=g) for k in range(4)])
    x = batch[:, :4].to(dev)  # (batch, 4 time steps, 32, 32, 4 blades)
    y = batch[:, 4:5].to(dev)
    xv, yv = x[..., :3], y[..., :3]  # the networks' fields: a scalar and a vector (no bivector part)

    def resnet():
        net = CliffordNet2d(g=[-1, -1], block=CliffordBasicBlock2d, num_blocks=[1, 1], in_channels=4, out_channels=1,
                            hidden_channels=8, activation=F.gelu, rotation=True, norm=True, num_groups=1).to(dev)
        loss = _fit(net.parameters(), 3, lambda i: F.mse_loss(net(xv), yv))
        print(f"clifford resnet 2d loss {loss.item():.4f}")

    def fno():
        net = CliffordNet2d(g=[1, 1], block=CliffordFourierBasicBlock2d, num_blocks=[1, 1], in_channels=4,
                            out_channels=1, hidden_channels=8, activation=F.gelu, rotation=False, norm=False).to(dev)
        loss = _fit(net.parameters(), 3, lambda i: F.mse_loss(net(xv), yv))
        print(f"clifford fno 2d loss {loss.item():.4f}")

    def fno3d():
        vol = torch.randn(2, 2, 16, 16, 16, 6, generator=g).to(dev)  # two vector fields and a bivector one
        net = CliffordNet3d(g=[1, 1, 1], block=CliffordFourierBasicBlock3d, num_blocks=[1, 1], in_channels=2,
                            out_channels=1, hidden_channels=4, activation=F.gelu, norm=False).to(dev)
        loss = _fit(net.parameters(), 2, lambda i: net(vol).pow(2).mean())
        print(f"clifford fno 3d loss {loss.item():.4f}")

    def layers():
        from cliffordlayers.nn.modules.batchnorm import CliffordBatchNorm2d, ComplexBatchNorm1d
        from cliffordlayers.nn.modules.cliffordconv import CliffordConv1d, CliffordConv2d
        from cliffordlayers.nn.modules.cliffordfourier import CliffordSpectralConv2d
        from cliffordlayers.nn.modules.cliffordlinear import CliffordLinear
        from cliffordlayers.nn.modules.groupnorm import CliffordGroupNorm2d, ComplexGroupNorm1d
        lin = CliffordLinear([1, 1], 4, 8).to(dev)
        conv1 = CliffordConv1d([1], 3, 5, kernel_size=3, padding=1).to(dev)
        conv2 = CliffordConv2d([1, 1], 4, 4, kernel_size=3, padding=1).to(dev)
        spec = CliffordSpectralConv2d([1, 1], 4, 4, modes1=8, modes2=8).to(dev)
        bn = CliffordBatchNorm2d([1, 1], channels=4).to(dev)
        gn = CliffordGroupNorm2d([1, 1], num_groups=2, channels=4).to(dev)
        cbn = ComplexBatchNorm1d(channels=6).to(dev)
        cgn = ComplexGroupNorm1d(num_groups=2, channels=6).to(dev)
        v = torch.randn(8, 4, 4, generator=g).to(dev)
        sig = torch.randn(4, 3, 40, 2, generator=g).to(dev)
        z = torch.randn(8, 6, 20, dtype=torch.complex64, generator=g).to(dev)
        outs = [lin(v), conv1(sig), conv2(x), spec(x), bn(x), gn(x), cbn(z), cgn(z)]
        loss = sum(o.abs().mean() for o in outs)
        loss.backward()
        print(f"layers {[tuple(o.shape) for o in outs]} sum {loss.item():.3f}")
    return {"resnet": resnet, "fno": fno, "fno3d": fno3d, "layers": layers}


# -- labml-nn: its annotated implementations used as modules on the device -- a DDPM (`DenoiseDiffusion` with its
#    `UNet`, `device=`) trained and sampled a few steps; capsule routing (`Squash`, `Router`, `MarginLoss`) on
#    primary capsules from a conv net; a transformer encoder (`TransformerLayer`, `Encoder`) with rotary, ALiBi and
#    relative multi-head attention, a switch feed-forward, MLM masking, temperature / top-k / nucleus samplers;
#    GAT and GATv2 layers on a random graph; PPO's clipped losses with its numpy GAE; Wasserstein GAN losses with the
#    gradient penalty; evidential losses; a HyperLSTM; its RAdam / AdaBelief / Noam / Sophia optimisers ------------

def labml_nn_models(dev):
    g = torch.Generator().manual_seed(0)
    imgs, labels = _digits(32, size=32, seed=3)
    imgs, labels = (imgs * 2 - 1).to(dev), labels.to(dev)

    def diffusion():
        from labml_nn.diffusion.ddpm import DenoiseDiffusion
        from labml_nn.diffusion.ddpm.unet import UNet
        from labml_nn.optimizers.radam import RAdam
        eps = UNet(image_channels=1, n_channels=32, ch_mults=(1, 2), is_attn=(False, True), n_blocks=1).to(dev)
        ddpm = DenoiseDiffusion(eps_model=eps, n_steps=100, device=dev)
        opt = RAdam(eps.parameters(), lr=2e-4)
        for _ in range(3):
            loss = ddpm.loss(imgs[:16])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            xt = torch.randn(4, 1, 32, 32).to(dev)
            for t_ in reversed(range(95, 100)):
                xt = ddpm.p_sample(xt, xt.new_full((4,), t_, dtype=torch.long))
        print(f"ddpm loss {loss.item():.4f}, sample {tuple(xt.shape)} std {xt.std().item():.3f}")

    def capsules():
        from labml_nn.capsule_networks import MarginLoss, Router, Squash
        from labml_nn.optimizers.ada_belief import AdaBelief
        conv = nn.Sequential(nn.Conv2d(1, 32, 9), nn.ReLU(), nn.Conv2d(32, 8 * 8, 9, stride=2)).to(dev)
        squash, router = Squash(), Router(in_caps=8 * 6 * 6, out_caps=10, in_d=8, out_d=16, iterations=3).to(dev)
        margin = MarginLoss(n_labels=10)
        params = list(conv.parameters()) + list(router.parameters())
        opt = AdaBelief(params, lr=1e-3)
        for _ in range(3):
            u = conv(imgs[:, :, 2:30, 2:30])
            caps = squash(u.view(u.shape[0], 8, 8 * 6 * 6).permute(0, 2, 1))
            v = router(caps)
            loss = margin(v, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
        acc = (v.norm(dim=-1).argmax(1) == labels).float().mean()
        print(f"capsule margin loss {loss.item():.4f}, acc {acc.item():.2f}")

    def transformer():
        from labml_nn.optimizers.noam import Noam
        from labml_nn.sampling.nucleus import NucleusSampler
        from labml_nn.sampling.temperature import TemperatureSampler
        from labml_nn.sampling.top_k import TopKSampler
        from labml_nn.transformers.alibi import AlibiMultiHeadAttention
        from labml_nn.transformers.feed_forward import FeedForward
        from labml_nn.transformers.mlm import MLM
        from labml_nn.transformers.models import Encoder, TransformerLayer
        from labml_nn.transformers.rope import RotaryPEMultiHeadAttention
        from labml_nn.transformers.switch import SwitchFeedForward, SwitchTransformer, SwitchTransformerLayer
        from labml_nn.transformers.xl.relative_mha import RelativeMultiHeadAttention
        n_tokens, d = 40, 64
        tokens = torch.randint(3, n_tokens, (24, 8), generator=g).to(dev)  # (seq, batch), its layout
        emb, head = nn.Embedding(n_tokens, d).to(dev), nn.Linear(d, n_tokens).to(dev)
        mlm = MLM(padding_token=0, mask_token=1, no_mask_tokens=[2], n_tokens=n_tokens)
        res = {}
        for name, attn in (("rope", RotaryPEMultiHeadAttention(4, d, rope_percentage=0.5, dropout_prob=0.0)),
                           ("alibi", AlibiMultiHeadAttention(4, d, dropout_prob=0.0)),
                           ("relative", RelativeMultiHeadAttention(4, d, dropout_prob=0.0))):
            if name == "alibi":  # its switch transformer: routed experts, counts and route probabilities returned
                ff = SwitchFeedForward(capacity_factor=1.25, drop_tokens=True, is_scale_prob=True, n_experts=4,
                                       expert=FeedForward(d, 128, dropout=0.0), d_model=d)
                enc = SwitchTransformer(SwitchTransformerLayer(d_model=d, attn=attn, feed_forward=ff,
                                                               dropout_prob=0.0), 2).to(dev)
            else:
                ff = FeedForward(d, 128, dropout=0.0, activation=nn.GELU(), is_gated=True)
                enc = Encoder(TransformerLayer(d_model=d, self_attn=attn, feed_forward=ff, dropout_prob=0.0),
                              2).to(dev)
            params = list(enc.parameters()) + list(emb.parameters()) + list(head.parameters())
            opt = Noam(params, lr=1.0, warmup=10, d_model=d)
            for _ in range(2):
                x, y = mlm(tokens)
                mask = torch.ones(x.shape[0], x.shape[0], 1, dtype=torch.bool).to(dev)
                if name == "alibi":
                    mask = torch.tril(mask.squeeze(-1)).unsqueeze(-1)
                out = enc(emb(x), mask)
                balance = 0.0
                if isinstance(out, tuple):  # the switch transformer's load-balancing loss, as its experiment adds
                    out, counts, route_prob, _, _ = out  # per layer and expert
                    total = counts.sum(dim=-1, keepdim=True)
                    balance = 4 * ((counts / total) * (route_prob / total)).sum()
                logits = head(out)
                loss = F.cross_entropy(logits.view(-1, n_tokens), y.view(-1), ignore_index=0) + 0.01 * balance
                opt.zero_grad()
                loss.backward()
                opt.step()
            res[name] = round(loss.item(), 3)
        last = logits[-1].detach()
        picks = [s(last) for s in (TemperatureSampler(0.8), TopKSampler(5, TemperatureSampler(1.0)),
                                   NucleusSampler(0.9, TemperatureSampler(1.0)))]
        print(f"encoder losses {res}, samples {[tuple(p.shape) for p in picks]}")

    def graphs():
        from labml_nn.graphs.gat import GraphAttentionLayer
        from labml_nn.graphs.gatv2 import GraphAttentionV2Layer
        n = 120
        feats = torch.randn(n, 16, generator=g).to(dev)
        adj = (torch.rand(n, n, generator=g) < 0.05)
        adj = (adj | adj.T | torch.eye(n, dtype=torch.bool)).unsqueeze(-1).to(dev)
        y = torch.randint(0, 4, (n,), generator=g).to(dev)
        res = []
        for layer_cls in (GraphAttentionLayer, GraphAttentionV2Layer):
            l1 = layer_cls(16, 32, n_heads=4, is_concat=True, dropout=0.1).to(dev)
            l2 = layer_cls(32, 4, n_heads=1, is_concat=False, dropout=0.1).to(dev)
            gat = nn.ModuleList([l1, l2])
            loss = _fit(gat.parameters(), 3, lambda i, m=gat: F.cross_entropy(m[1](F.elu(m[0](feats, adj)), adj), y),
                        lr=5e-3)
            res.append(round(loss.item(), 3))
        print(f"gat / gatv2 losses {res}")

    def rl_gan():
        import numpy as np
        from labml_nn.gan.wasserstein import DiscriminatorLoss, GeneratorLoss
        from labml_nn.gan.wasserstein.gradient_penalty import GradientPenalty
        from labml_nn.rl.ppo import ClippedPPOLoss, ClippedValueFunctionLoss
        from labml_nn.rl.ppo.gae import GAE
        workers, steps = 4, 32
        policy = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 5)).to(dev)
        value = nn.Sequential(nn.Linear(8, 64), nn.Tanh(), nn.Linear(64, 1)).to(dev)
        obs = torch.randn(workers * steps, 8, generator=g).to(dev)
        with torch.no_grad():
            dist = torch.distributions.Categorical(logits=policy(obs))
            actions = dist.sample()
            old_logp, old_v = dist.log_prob(actions), value(obs).squeeze(-1)
        rewards = np.random.default_rng(0).normal(size=(workers, steps)).astype(np.float32)
        done = np.zeros((workers, steps), dtype=bool)
        done[:, -1] = True
        v_np = np.concatenate([old_v.cpu().numpy().reshape(workers, steps), np.zeros((workers, 1), np.float32)], 1)
        adv = torch.from_numpy(GAE(workers, steps, 0.99, 0.95)(done, rewards, v_np)).reshape(-1).to(dev)
        ret = old_v + adv
        ppo, vloss = ClippedPPOLoss(), ClippedValueFunctionLoss()
        params = list(policy.parameters()) + list(value.parameters())

        def loss_of(i):
            d_ = torch.distributions.Categorical(logits=policy(obs))
            return (ppo(d_.log_prob(actions), old_logp, (adv - adv.mean()) / (adv.std() + 1e-8), 0.2)
                    + 0.5 * vloss(value(obs).squeeze(-1), old_v, ret, 0.2) - 0.01 * d_.entropy().mean())
        ppo_loss = _fit(params, 3, loss_of, lr=3e-4)
        gen = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32 * 32), nn.Tanh()).to(dev)
        critic = nn.Sequential(nn.Flatten(), nn.Linear(32 * 32, 64), nn.LeakyReLU(0.2), nn.Linear(64, 1)).to(dev)
        d_loss_fn, g_loss_fn, gp = DiscriminatorLoss(), GeneratorLoss(), GradientPenalty()
        opt_d = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
        opt_g = torch.optim.Adam(gen.parameters(), lr=1e-4, betas=(0.5, 0.9))
        for _ in range(3):
            real = imgs.view(imgs.shape[0], -1).requires_grad_()
            fake = gen(torch.randn(imgs.shape[0], 16).to(dev))
            f_real, f_fake = critic(real), critic(fake.detach())
            dl = sum(d_loss_fn(f_real, f_fake)) + 10.0 * gp(real, f_real)
            opt_d.zero_grad()
            dl.backward()
            opt_d.step()
            gl = g_loss_fn(critic(gen(torch.randn(imgs.shape[0], 16).to(dev))))
            opt_g.zero_grad()
            gl.backward()
            opt_g.step()
        print(f"ppo loss {ppo_loss.item():.4f}, wgan-gp critic {dl.item():.3f} generator {gl.item():.3f}")

    def uncertainty():
        from labml_nn.hypernetworks.hyper_lstm import HyperLSTM
        from labml_nn.optimizers.sophia import Sophia
        from labml_nn.uncertainty.evidence import CrossEntropyBayesRisk, KLDivergenceLoss, MaximumLikelihoodLoss
        net = nn.Sequential(nn.Flatten(), nn.Linear(32 * 32, 64), nn.ReLU(), nn.Linear(64, 10), nn.Softplus()).to(dev)
        target = F.one_hot(labels, 10).float()
        ml, ce, kl = MaximumLikelihoodLoss(), CrossEntropyBayesRisk(), KLDivergenceLoss()
        loss = _fit(net.parameters(), 3, lambda i: ml(net(imgs), target).mean() + ce(net(imgs), target).mean()
                    + 0.1 * kl(net(imgs), target).mean())
        evidence = net(imgs)
        strength = (evidence + 1).sum(-1)
        uncert = (10 / strength).mean()
        lstm = HyperLSTM(input_size=8, hidden_size=32, hyper_size=16, n_z=4, n_layers=1).to(dev)
        proj = nn.Linear(32, 8).to(dev)
        seq = torch.randn(8, 6, 8, generator=g).to(dev)
        opt = Sophia(list(lstm.parameters()) + list(proj.parameters()), lr=1e-3, rho=0.03)
        for step in range(3):
            out, _ = lstm(seq)
            l2 = F.mse_loss(proj(out[:-1]), seq[1:])
            opt.zero_grad()
            l2.backward()
            opt.step()
            if step == 1:
                out, _ = lstm(seq)
                samp = torch.distributions.Normal(proj(out[:-1]), 1.0).sample()
                opt.zero_grad()
                F.mse_loss(proj(out[:-1]), samp).backward()
                opt.update_hessian(n_tokens_training_batch=seq.shape[0] * seq.shape[1])
        print(f"evidential loss {loss.item():.4f} uncertainty {uncert.item():.3f}; hyper-lstm loss {l2.item():.4f}")
    return {"diffusion": diffusion, "capsules": capsules, "transformer": transformer, "graphs": graphs,
            "rl_gan": rl_gan, "uncertainty": uncertainty}


# -- deepecho: the README's sequential synthesis with `cuda=` -- the PAR model fitted on a multi-entity
#    time-series frame (an entity column, a categorical context column, a datetime sequence index, continuous and
#    categorical values), then `sample`d for new entities and for given contexts; the basic GAN (`BasicGANModel`)
#    fitted and sampled the same way ----------------------------------------------------------------------------

def deepecho_sequences(dev):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    rows = []
    for e in range(24):
        region = ["north", "south", "east"][e % 3]
        length = int(rng.integers(8, 16))
        start = pd.Timestamp("2024-01-01") + pd.Timedelta(days=int(rng.integers(0, 30)))
        level = rng.uniform(5, 15)
        for t in range(length):
            rows.append({"store": e, "region": region, "date": start + pd.Timedelta(days=t),
                         "sales": level + 3 * np.sin(t / 2) + rng.normal(0, 0.5),
                         "visits": level * 10 + rng.normal(0, 3), "promo": ["none", "tv", "web"][(t + e) % 3]})
    df = pd.DataFrame(rows)
    cuda = dev.type == "cuda"

    def par():
        from deepecho import PARModel
        model = PARModel(epochs=5, sample_size=2, cuda=cuda, verbose=False)
        model.fit(data=df, entity_columns=["store"], context_columns=["region"],
                  data_types={"region": "categorical", "sales": "continuous", "visits": "continuous",
                              "promo": "categorical", "date": "datetime"}, sequence_index="date")
        new = model.sample(num_entities=4)
        ctx = pd.DataFrame({"store": [100, 101], "region": ["north", "east"]})
        cond = model.sample(context=ctx, sequence_length=6)
        print(f"par sampled {len(new)} rows, {new['store'].nunique()} entities; conditioned {cond.shape}")

    def gan():
        from deepecho import BasicGANModel
        model = BasicGANModel(epochs=4, latent_size=8, hidden_size=16, cuda=cuda, verbose=False)
        model.fit(data=df.drop(columns=["date"]), entity_columns=["store"], context_columns=["region"],
                  data_types={"region": "categorical", "sales": "continuous", "visits": "continuous",
                              "promo": "categorical"})
        new = model.sample(num_entities=4)
        print(f"basic gan sampled {new.shape}")
    return {"par": par, "gan": gan}


# -- deel-torchlip (deel): the docs' 1-Lipschitz networks moved to the device -- `torchlip.Sequential` of
#    `SpectralConv2d`, `GroupSort2`, `ScaledL2NormPool2d`, `SpectralLinear` and `FrobeniusLinear`, trained on digits
#    with `HKRMulticlassLoss` (and `KRMulticlassLoss` / `HingeMulticlassLoss` reported), a binary one with `HKRLoss`;
#    `evaluate_lip_const`, `vanilla_export` and the exported network's agreement ----------------------------------

def torchlip_lipschitz(dev):
    from deel import torchlip
    from deel.torchlip.utils import evaluate_lip_const

    x, y = _digits(128, seed=5)
    x, y = x.to(dev), y.to(dev)

    def net(n_out):
        return torchlip.Sequential(
            torchlip.SpectralConv2d(1, 8, 3, padding=1), torchlip.GroupSort2(), torchlip.ScaledL2NormPool2d(2),
            torchlip.SpectralConv2d(8, 16, 3, padding=1), torchlip.GroupSort2(), torchlip.ScaledL2NormPool2d(2),
            nn.Flatten(), torchlip.SpectralLinear(16 * 7 * 7, 32), torchlip.GroupSort2(),
            torchlip.FrobeniusLinear(32, n_out)).to(dev)

    def multiclass():
        model = net(10)
        hkr = torchlip.HKRMulticlassLoss(alpha=0.9, min_margin=0.25)
        kr, hinge = torchlip.KRMulticlassLoss(), torchlip.HingeMulticlassLoss(min_margin=0.25)
        onehot = F.one_hot(y, 10).float()
        loss = _fit(model.parameters(), 3, lambda i: hkr(model(x), onehot))
        model.eval()
        with torch.no_grad():
            out = model(x)
            rep = (kr(out, onehot).item(), hinge(out, onehot).item())
            acc = (out.argmax(1) == y).float().mean()
        lip = evaluate_lip_const(model, x[:16], eps=1e-3)
        vanilla = model.vanilla_export().to(dev)
        with torch.no_grad():
            same = (vanilla(x) - out).abs().max()
        print(f"hkr loss {loss.item():.4f}, kr/hinge {rep}, acc {acc.item():.2f}, lip {lip:.3f}, "
              f"vanilla diff {same.item():.2e}")

    def binary():
        model = net(1)
        yb = torch.where(y < 5, 1.0, -1.0).unsqueeze(1)
        hkr = torchlip.HKRLoss(alpha=0.9, min_margin=0.5)
        loss = _fit(model.parameters(), 3, lambda i: hkr(model(x), yb))
        with torch.no_grad():
            acc = ((model(x) > 0).float() * 2 - 1 == yb).float().mean()
        print(f"binary hkr {loss.item():.4f} acc {acc.item():.2f}")
    return {"multiclass": multiclass, "binary": binary}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _image_folder(root: Path, n_cls: int = 4, per_cls: int = 40, size: int = 32, seed: int = 0) -> None:
    """An ImageFolder tree (`root/<class>/<i>.png`) of RGB size x size images: each class a coloured shape
    (disc, square, ring, stripes) on a noisy background, at random places."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:size, :size]
    for k in range(n_cls):
        (root / f"class{k}").mkdir(parents=True, exist_ok=True)
        for i in range(per_cls):
            cx, cy, r = rng.integers(8, size - 8), rng.integers(8, size - 8), rng.integers(4, 8)
            masks = [(xx - cx) ** 2 + (yy - cy) ** 2 < r * r, (abs(xx - cx) < r) & (abs(yy - cy) < r),
                     abs(np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2) - r) < 1.5, (xx + yy) % 8 < 3]
            img = rng.integers(0, 80, (size, size, 3))
            img[masks[k % 4]] = (np.array([200, 60, 60]) * (k + 1) // 2) % 255 + rng.integers(0, 40, 3)
            Image.fromarray(img.astype(np.uint8)).save(root / f"class{k}" / f"{i}.png")


def _supcon(dev, name: str, extra: list):
    """HobbitLong/SupContrast's main_supcon.py as is (`--dataset path --model resnet18 --size 32 --batch_size 16
    --num_workers 0 --epochs 2`, the GPU when there is one, as it decides) on 160 synthetic 32 x 32 images of four
    classes written as the class folders its `path` loader (`ImageFolder`) reads, from a temporary folder (it
    writes its `save/` tree there). Its `TwoCropTransform` augmentations run on the CPU. The window spans the 2nd
    to the 14th `backward`: the rest of the first epoch (10 steps), its tensorboard logging, the start of the
    second."""
    root = _need_repo("supcontrast")
    tmp = Path(hc._tmp())
    _image_folder(tmp / "data")
    argv = ["--dataset", "path", "--data_folder", str(tmp / "data"), "--mean", "(0.3, 0.3, 0.3)",
            "--std", "(0.25, 0.25, 0.25)", "--size", "32", "--model", "resnet18", "--batch_size", "16",
            "--num_workers", "0", "--epochs", "2", "--print_freq", "4", "--learning_rate", "0.05", *extra]

    def window():
        with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 14, stop_script=True):
            hc.run_script(root / "main_supcon.py", argv, str(tmp))
    return {"train_window": window}


def supcontrast_supcon(dev):
    """Supervised contrastive pre-training (`--method SupCon`, labels in the loss), cosine schedule with warm-up."""
    return _supcon(dev, "supcontrast.supcon", ["--method", "SupCon", "--cosine", "--warm"])


def supcontrast_simclr(dev):
    """SimCLR (`--method SimCLR`: the same loss without labels), step decay."""
    return _supcon(dev, "supcontrast.simclr", ["--method", "SimCLR", "--temp", "0.5"])


def _ddpm_data(root: Path, n: int = 208) -> None:
    """Its dataset's layout: `root/<digit>/<i>.png` grayscale 28 x 28 images (synthetic digits)."""
    import numpy as np
    from PIL import Image
    imgs, labels = _digits(n, seed=7)
    for i in range(n):
        d = root / str(int(labels[i]))
        d.mkdir(parents=True, exist_ok=True)
        Image.fromarray((imgs[i, 0].numpy() * 255).astype(np.uint8)).save(d / f"{i}.png")


def ddpm_train_sample(dev):
    """explainingai-code/DDPM-Pytorch's tools/train_ddpm.py and tools/sample_ddpm.py as is, run from the
    repository's root as its README does (`python -m tools.train_ddpm --config ...`), with a config of its own keys
    (its default's model and 1000-step linear schedule; `batch_size` 16, `num_samples` 16, its `task_name` folder in a
    temporary one, the images under it) on 208 synthetic digits written as `<digit>/<i>.png`; the GPU when there is
    one, as it decides. `train`: the window spans the 2nd to the 16th `backward` (the first epoch's 13 steps end,
    its mean loss and checkpoint, the start of the second). `sample`: the script loads that checkpoint and runs its
    reverse process; the window spans the 2nd to the 12th `sample_prev_timestep` (each step's x0 saved as a png)."""
    import yaml
    root = fc._on_path(_need_repo("ddpm"))
    tmp = Path(hc._tmp())
    _ddpm_data(tmp / "data" / "train" / "images")
    config = {"dataset_params": {"im_path": str(tmp / "data" / "train" / "images")},
              "diffusion_params": {"num_timesteps": 1000, "beta_start": 0.0001, "beta_end": 0.02},
              "model_params": {"im_channels": 1, "im_size": 28, "down_channels": [32, 64, 128, 256],
                               "mid_channels": [256, 256, 128], "down_sample": [True, True, False],
                               "time_emb_dim": 128, "num_down_layers": 2, "num_mid_layers": 2, "num_up_layers": 2,
                               "num_heads": 4},
              "train_params": {"task_name": str(tmp / "default"), "batch_size": 16, "num_epochs": 2,
                               "num_samples": 16, "num_grid_rows": 4, "lr": 0.0001, "ckpt_name": "ddpm_ckpt.pth"}}
    cfg = tmp / "config.yaml"
    cfg.write_text(yaml.safe_dump(config))
    argv = ["--config", str(cfg)]

    def forget():
        for m in list(sys.modules):
            if (getattr(sys.modules[m], "__file__", None) or "").startswith(str(root)):
                del sys.modules[m]

    def train():
        with hc.window_on(torch.Tensor, "backward", "ddpm.train_sample", "train", dev, 2, 16, stop_script=True):
            hc.run_script(root / "tools" / "train_ddpm.py", argv, str(root))

    def sample():
        from scheduler.linear_noise_scheduler import LinearNoiseScheduler  # the class the script will import
        try:
            with hc.window_on(LinearNoiseScheduler, "sample_prev_timestep", "ddpm.train_sample", "sample", dev, 2,
                              12, stop_script=True):
                hc.run_script(root / "tools" / "sample_ddpm.py", argv, str(root))
        finally:
            forget()
    return {"train_window": train, "sample_window": sample}


MODELS = [
    # name, package, builder
    ("art.attacks", "art", art_attacks),
    ("deepctr.ctr", "deepctr_torch", deepctr_ctr),
    ("fastmri.recon", "fastmri", fastmri_recon),
    ("gcastle.discovery", "castle", gcastle_discovery),
    ("cliffordlayers.nets", "cliffordlayers", cliffordlayers_nets),
    ("labml_nn.models", "labml_nn", labml_nn_models),
    ("deepecho.sequences", "deepecho", deepecho_sequences),
    ("torchlip.lipschitz", "deel", torchlip_lipschitz),
    ("supcontrast.supcon", "supcontrast", supcontrast_supcon),
    ("supcontrast.simclr", "supcontrast", supcontrast_simclr),
    ("ddpm.train_sample", "ddpm", ddpm_train_sample),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh18", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
