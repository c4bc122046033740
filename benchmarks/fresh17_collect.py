"""Record the syncs of an eighteenth set, `fresh17` (a sealed test set): libraries and training code nobody here read.

`fresh17` is recorded the same way as `fresh9` to `fresh15` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do: no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh17): pymde (minimum-distortion embeddings:
  `preserve_neighbors` and `preserve_distances` recipes with constraints, a custom `MDE` problem on explicit edges,
  `pca`, `laplacian_embedding`, `align`, distortion statistics), noisereduce (spectral-gating noise reduction: the
  `TorchGate` module, stationary and non-stationary, with a noise clip, inside a trained network; `reduce_noise`
  with `use_torch=True`), pyod (outlier detection with deep models: AutoEncoder, VAE, DeepSVDD, ALAD, AnoGAN, DIF,
  DevNet fitted and scored), piqa (image quality metrics: PSNR, SSIM, MS-SSIM, TV, GMSD, MS-GMSD, MDSI, HaarPSI,
  VSI, FSIM, as losses with gradients, the Frechet distance of feature statistics), spikingjelly (spiking networks:
  LIF / IF / parametric LIF neurons with surrogate gradients trained on Poisson-encoded inputs, multi-step
  convolutional networks, a spiking ResNet and SEW ResNet, STDP learning, monitors), torchstain (stain
  normalisation of histology images: Macenko and multi-target Macenko), vbll (variational Bayesian last layers:
  discriminative and generative classification with OOD scores, trained through their ELBO losses) and
  torchxrayvision (chest X-ray models: a DenseNet pathology classifier with operating-point normalisation trained
  and evaluated, its dataset transforms, a ResNet autoencoder);
  + loguru and SciencePlots (spikingjelly's needs, not on the GPU machine). Their other needs (numpy, scipy,
  scikit-learn, numba, matplotlib, joblib, pandas, scikit-image, imageio, h5py, tensorboard, requests, torchvision,
  torchaudio) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh17/repos/<name>:
  thuml/Autoformer (run.py as is: Autoformer and its Transformer baseline forecasting a synthetic multivariate
  series written as the `custom` csv its loader reads; its Reformer model, not run, imports reformer_pytorch, which
  the collector stands in for, and its early stopping reads `np.Inf`, gone from numpy 2, which the collector gives
  back) and yanx27/Pointnet_Pointnet2_pytorch (train_classification.py as is: PointNet and PointNet++ classifiers
  trained on synthetic point clouds written in the ModelNet layout its loader reads).

    python benchmarks/fresh17_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh17_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh17 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh17 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

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
BENCH_DIR = ac.REPO / ".bench" / "fresh17"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh17", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh17/repos/<name>)
REPOS = {
    "autoformer": ("thuml/Autoformer", "51c7d416ae120b805fd5beef2f4ccf7de496a6ff",
                   ["run.py", "data_provider", "exp", "layers", "models", "utils"]),
    "pointnet2": ("yanx27/Pointnet_Pointnet2_pytorch", "eb64fe0b4c24055559cea26299cb485dcb43d8dd",
                  ["train_classification.py", "provider.py", "data_utils/ModelNetDataLoader.py", "models"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["pymde==0.3.0", "noisereduce==3.0.3", "pyod==3.6.7", "piqa==1.3.2", "spikingjelly==2.0.0",
          "loguru==0.7.3", "SciencePlots==2.2.2", "torchstain==1.4.1", "vbll==0.4.9", "torchxrayvision==1.5.7"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"pymde": "pymde", "noisereduce": "noisereduce", "pyod": "pyod", "piqa": "piqa", "spikingjelly": "spikingjelly",
         "torchstain": "torchstain", "vbll": "vbll", "torchxrayvision": "torchxrayvision", "numpy": "numpy",
         "scipy": "scipy", "scikit_learn": "scikit-learn", "numba": "numba", "scikit_image": "scikit-image",
         "pandas": "pandas", "torchvision": "torchvision", "torchaudio": "torchaudio"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh17/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh17_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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


def _blobs(n, d, k, seed=0, spread=4.0):
    """n points in d dimensions around k random centres (a CPU tensor) and their labels."""
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(k, d, generator=g) * spread
    lab = torch.randint(0, k, (n,), generator=g)
    return centres[lab] + torch.randn(n, d, generator=g), lab


# ============================================================================================
# Libraries
# ============================================================================================

# -- pymde: the README's recipes on the device (`device=`): `preserve_neighbors` of a clustered data matrix with
#    the default and a `Standardized` constraint, `preserve_distances` of the same data; a custom problem from the
#    docs' building blocks (`MDE` over `all_edges`, quadratic penalties weighted by similarity, `Centered` and
#    `Anchored` constraints); `pca`, `laplacian_embedding`, `align`, `average_distortion`, `distortions`,
#    `high_distortion_pairs` -------------------------------------------------------------------------------------

def pymde_embed(dev):
    import pymde

    X, lab = _blobs(900, 16, 5)
    Xd = X.to(dev)

    def neighbors():
        pymde.seed(0)
        mde = pymde.preserve_neighbors(X, embedding_dim=2, device=dev, verbose=False)
        emb = mde.embed(max_iter=60)
        std = pymde.preserve_neighbors(X, embedding_dim=3, constraint=pymde.Standardized(), n_neighbors=10,
                                       repulsive_fraction=0.7, device=dev)
        emb3 = std.embed(max_iter=60)
        print(f"neighbors {tuple(emb.shape)} distortion {mde.average_distortion().item():.4f}; "
              f"standardized cov {(emb3.T @ emb3 / emb3.shape[0]).diagonal().tolist()}")

    def distances():
        pymde.seed(0)
        mde = pymde.preserve_distances(X, embedding_dim=2, device=dev)
        emb = mde.embed(max_iter=60)
        d = mde.distortions()
        pairs = mde.high_distortion_pairs()
        lap = pymde.laplacian_embedding(X, embedding_dim=2, n_neighbors=10, device=dev)
        le = lap.embed(max_iter=40)
        aligned = pymde.align(source=le, target=emb)
        print(f"distances {tuple(emb.shape)} mean distortion {d.mean().item():.4f}, {len(pairs[0])} pairs; "
              f"laplacian aligned {aligned.norm().item():.2f}")

    def custom():
        n = 200
        edges = pymde.all_edges(n).to(dev)
        sim = torch.exp(-torch.cdist(Xd[:n], Xd[:n]).pow(2) / 50.0)
        w = sim[edges[:, 0], edges[:, 1]] - 0.1
        f = pymde.penalties.PushAndPull(weights=w, attractive_penalty=pymde.penalties.Log1p,
                                        repulsive_penalty=pymde.penalties.Log)
        mde = pymde.MDE(n_items=n, embedding_dim=2, edges=edges, distortion_function=f,
                        constraint=pymde.Standardized(), device=dev)
        emb = mde.embed(max_iter=80)
        anchors = torch.arange(0, n, 20).to(dev)
        values = torch.randn(anchors.shape[0], 2).to(dev)
        q = pymde.penalties.Quadratic(weights=sim[edges[:, 0], edges[:, 1]])
        anch = pymde.MDE(n_items=n, embedding_dim=2, edges=edges, distortion_function=q,
                         constraint=pymde.Anchored(anchors, values), device=dev)
        ea = anch.embed(max_iter=80)
        dev_loss = pymde.losses.Absolute(deviations=torch.cdist(Xd[:n], Xd[:n])[edges[:, 0], edges[:, 1]])
        cen = pymde.MDE(n_items=n, embedding_dim=2, edges=edges, distortion_function=dev_loss,
                        constraint=pymde.Centered(), device=dev)
        ec = cen.embed(max_iter=80)
        p = pymde.pca(Xd, embedding_dim=2)
        print(f"custom {tuple(emb.shape)}, anchored err {(ea[anchors] - values).abs().max().item():.2e}, "
              f"centered mean {ec.mean(0).abs().max().item():.2e}, pca {tuple(p.shape)}")
    return {"neighbors": neighbors, "distances": distances, "custom": custom}


# -- noisereduce: the README's `TorchGate` (`.to(device)`, a batch of noisy signals made on the device), stationary
#    with and without a noise clip and non-stationary; the torch-gated `reduce_noise` (`use_torch=True`, `device=`)
#    on a numpy recording; the gate as a module inside a larger network (its v3 notes): a learned front end before a
#    non-stationary gate, trained to match clean speech-like signals -----------------------------------------------

def noisereduce_gate(dev):
    import noisereduce as nr
    from noisereduce.torchgate import TorchGate

    sr = 8000
    g = torch.Generator().manual_seed(0)
    t = torch.arange(sr * 2) / sr
    clean = torch.stack([torch.sin(2 * torch.pi * f0 * t) * (torch.sin(2 * torch.pi * 1.5 * t) > 0)
                         for f0 in (220.0, 330.0, 440.0)])
    noise = 0.3 * torch.randn(3, t.shape[0], generator=g)
    noisy = (clean + noise).to(dev)
    noise_clip = (0.3 * torch.randn(3, sr // 2, generator=g)).to(dev)

    def gate():
        outs = []
        for kw in ({"nonstationary": False}, {"nonstationary": True}, {"nonstationary": False, "prop_decrease": 0.8,
                                                                      "n_std_thresh_stationary": 2.0},
                   {"nonstationary": True, "n_movemean_nonstationary": 10, "freq_mask_smooth_hz": None,
                    "time_mask_smooth_ms": None}):
            tg = TorchGate(sr=sr, n_fft=512, **kw).to(dev)
            with torch.no_grad():
                outs.append(tg(noisy).sub(clean.to(dev)).pow(2).mean().item())
        tg = TorchGate(sr=sr, nonstationary=False, n_fft=512).to(dev)
        with torch.no_grad():
            y = tg(noisy, noise_clip)
        print(f"torchgate mse {[round(o, 4) for o in outs]}, with a noise clip {tuple(y.shape)}")

    def reduce():
        import numpy as np
        rec = (clean[0] + noise[0]).numpy().astype(np.float32)
        a = nr.reduce_noise(y=rec, sr=sr, use_torch=True, device=str(dev), n_fft=512)
        b = nr.reduce_noise(y=rec, sr=sr, stationary=True, y_noise=noise[1].numpy(), use_torch=True,
                            device=str(dev), n_fft=512)
        c = nr.reduce_noise(y=np.stack([rec, rec[::-1].copy()]), sr=sr, stationary=True, use_torch=True,
                            device=str(dev), n_fft=512, prop_decrease=0.9)
        print(f"reduce_noise {a.shape} {b.shape} {c.shape} rms {float(np.sqrt((a ** 2).mean())):.3f}")

    front = nn.Sequential(nn.Conv1d(1, 8, 9, padding=4), nn.Tanh(), nn.Conv1d(8, 1, 9, padding=4)).to(dev)
    tg = TorchGate(sr=sr, nonstationary=True, n_fft=512).to(dev)
    target = clean.to(dev)

    def train():
        def loss_of(i):
            y = tg(front(noisy.unsqueeze(1)).squeeze(1))
            n = min(y.shape[-1], target.shape[-1])
            return F.l1_loss(y[..., :n], target[..., :n])
        loss = _fit(front.parameters(), 4, loss_of)
        print(f"gated front end l1 {loss.item():.4f}")
    return {"gate": gate, "reduce": reduce, "train": train}


# -- pyod: the docs' deep detectors on the device (`device=`), fitted on a numpy training set with 10% outliers
#    and scored on a test set (`decision_scores_`, `decision_function`, `predict`, `predict_proba` with and
#    without confidence): AutoEncoder and VAE, DeepSVDD (with and without its autoencoder), ALAD, AnoGAN, DIF, and
#    the semi-supervised DevNet with a few labelled outliers ------------------------------------------------------

def pyod_detectors(dev):
    import numpy as np

    rng = np.random.default_rng(0)
    inl = rng.normal(0, 1, (600, 12)).astype(np.float32)
    out = rng.uniform(-6, 6, (60, 12)).astype(np.float32)
    X = np.concatenate([inl, out])
    y = np.r_[np.zeros(600), np.ones(60)].astype(int)
    perm = rng.permutation(len(X))
    X, y = X[perm], y[perm]
    Xt = np.concatenate([rng.normal(0, 1, (150, 12)), rng.uniform(-6, 6, (15, 12))]).astype(np.float32)

    def report(name, clf):
        s = clf.decision_function(Xt)
        p = clf.predict(Xt)
        pr = clf.predict_proba(Xt)
        return f"{name} {float(s[-15:].mean() - s[:150].mean()):.2f}/{int(p.sum())}/{pr.shape}"

    def autoencoders():
        from pyod.models.auto_encoder import AutoEncoder
        from pyod.models.vae import VAE
        ae = AutoEncoder(epoch_num=3, batch_size=64, hidden_neuron_list=[32, 8], device=dev, verbose=0).fit(X)
        vae = VAE(epoch_num=3, batch_size=64, encoder_neuron_list=[32, 16], decoder_neuron_list=[16, 32],
                  latent_dim=4, beta=0.5, capacity=0.1, device=dev, verbose=0).fit(X)
        _, conf = ae.predict(Xt, return_confidence=True)
        print(report("ae", ae), report("vae", vae), f"conf {conf.mean():.2f}")

    def svdd():
        from pyod.models.deep_svdd import DeepSVDD
        a = DeepSVDD(n_features=12, epochs=3, batch_size=64, hidden_neurons=[32, 8], verbose=0, random_state=0).fit(X)
        b = DeepSVDD(n_features=12, use_ae=True, epochs=3, batch_size=64, hidden_neurons=[32, 8], verbose=0,
                     random_state=0).fit(X)
        print(report("svdd", a), report("svdd-ae", b))

    def adversarial():
        from pyod.models.alad import ALAD
        from pyod.models.anogan import AnoGAN
        alad = ALAD(epochs=3, batch_size=64, latent_dim=3, add_recon_loss=True, device=dev).fit(X)
        ano = AnoGAN(epochs=3, epochs_query=3, batch_size=64, device=dev).fit(X[:200])
        print(report("alad", alad), f"anogan {ano.decision_scores_.shape}")

    def ensembles():
        from pyod.models.devnet import DevNet
        from pyod.models.dif import DIF
        dif = DIF(n_ensemble=4, n_estimators=3, batch_size=256, device=dev, random_state=0).fit(X)
        yl = np.where(y == 1, 1, 0)
        yl[np.flatnonzero(yl)[10:]] = 0  # 10 labelled outliers
        dn = DevNet(epochs=2, nb_batch=5, batch_size=64, known_outliers=10, device=dev).fit(X, yl)
        print(report("dif", dif), report("devnet", dn))
    return {"autoencoders": autoencoders, "svdd": svdd, "adversarial": adversarial, "ensembles": ensembles}


# -- piqa: the README's metrics as modules moved to the device (`.to(device)` / `.cuda()`), on image batches made
#    there: PSNR, SSIM, MS-SSIM, TV, GMSD, MS-GMSD, MDSI, HaarPSI, VSI, FSIM with `reduction`; `1 - SSIM` and
#    others as losses training a small denoiser; the functional `ssim` with a `gaussian_kernel`; the Frechet
#    distance (`frechet_distance`) between the statistics of two feature sets ------------------------------------

def piqa_metrics(dev):
    import piqa
    from piqa.fid import frechet_distance
    from piqa.ssim import ssim
    from piqa.utils.functional import gaussian_kernel

    g = torch.Generator().manual_seed(0)
    x = torch.rand(4, 3, 192, 192, generator=g).to(dev)
    y = (x + 0.08 * torch.randn(4, 3, 192, 192, generator=g).to(dev)).clamp(0, 1)

    def metrics():
        out = {}
        for name, m in (("psnr", piqa.PSNR()), ("ssim", piqa.SSIM()), ("ms_ssim", piqa.MS_SSIM()),
                        ("tv", piqa.TV()), ("gmsd", piqa.GMSD()), ("ms_gmsd", piqa.MS_GMSD()),
                        ("mdsi", piqa.MDSI()), ("haarpsi", piqa.HaarPSI()), ("vsi", piqa.VSI()),
                        ("fsim", piqa.FSIM())):
            m = m.to(dev)
            v = m(x, y) if name != "tv" else m(y)
            out[name] = round(float(v.item()), 4)
        per = piqa.SSIM(reduction="none").to(dev)(x, y)
        kernel = gaussian_kernel(11, sigma=1.5).repeat(3, 1, 1).to(dev)
        ss, cs = ssim(x, y, kernel=kernel)
        print(f"metrics {out}; per-image {per.tolist()}; functional {ss.mean().item():.4f} {cs.mean().item():.4f}")

    net = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 3, 3, padding=1), nn.Sigmoid()).to(dev)
    ssim_m, gmsd_m, haar_m = piqa.SSIM().to(dev), piqa.GMSD().to(dev), piqa.HaarPSI().to(dev)

    def train():
        def loss_of(i):
            z = net(y)
            return (1 - ssim_m(z, x)) + gmsd_m(z, x) + (1 - haar_m(z, x))
        loss = _fit(net.parameters(), 4, loss_of)
        print(f"denoiser loss {loss.item():.4f}")

    def frechet():
        fa = torch.randn(512, 64, generator=g).to(dev)
        fb = (torch.randn(512, 64, generator=g) * 1.2 + 0.3).to(dev)
        d = frechet_distance(fa.mean(0), torch.cov(fa.T), fb.mean(0), torch.cov(fb.T))
        print(f"frechet distance {d.item():.3f}")
    return {"metrics": metrics, "train": train, "frechet": frechet}


# -- spikingjelly: the tutorials' spiking networks on the device (`.to(device)`, inputs made there): a LIF MLP with
#    an ATan surrogate trained on Poisson-encoded images by the MSE of firing rates (`reset_net` after each
#    sample); a multi-step convolutional network of IF and parametric LIF neurons (`set_step_mode`, `SeqToANN`
#    containers), the spiking ResNet-18 and SEW ResNet-18 of its model zoo run over time steps; STDP learning of a
#    linear synapse (`STDPLearner.step`); `OutputMonitor` firing rates, `first_spike_index`, the TET loss ----------

def spikingjelly_snn(dev):
    from spikingjelly.activation_based import encoding, functional, layer, learning, monitor, neuron, surrogate
    from spikingjelly.activation_based.model import sew_resnet, spiking_resnet

    g = torch.Generator().manual_seed(0)
    imgs = torch.rand(32, 1, 28, 28, generator=g).to(dev)
    labels = torch.randint(0, 10, (32,), generator=g).to(dev)
    T = 8

    def mlp():
        net = nn.Sequential(layer.Flatten(), layer.Linear(28 * 28, 10, bias=False),
                            neuron.LIFNode(tau=2.0, surrogate_function=surrogate.ATan())).to(dev)
        enc = encoding.PoissonEncoder()
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        onehot = F.one_hot(labels, 10).float()
        for _ in range(3):
            rate = 0.0
            for _ in range(T):
                rate = rate + net(enc(imgs))
            rate = rate / T
            loss = F.mse_loss(rate, onehot)
            opt.zero_grad()
            loss.backward()
            opt.step()
            functional.reset_net(net)
        acc = (rate.argmax(1) == labels).float().mean()
        print(f"lif mlp loss {loss.item():.4f} acc {acc.item():.2f}")

    def conv():
        net = nn.Sequential(
            layer.Conv2d(1, 8, 3, padding=1, bias=False), layer.BatchNorm2d(8),
            neuron.IFNode(surrogate_function=surrogate.Sigmoid()), layer.MaxPool2d(2),
            layer.Conv2d(8, 16, 3, padding=1, bias=False), layer.BatchNorm2d(16),
            neuron.ParametricLIFNode(surrogate_function=surrogate.ATan()), layer.MaxPool2d(2),
            layer.Flatten(), layer.Linear(16 * 7 * 7, 10)).to(dev)
        functional.set_step_mode(net, "m")
        x_seq = imgs.unsqueeze(0).repeat(T, 1, 1, 1, 1)
        mon = monitor.OutputMonitor(net, neuron.IFNode)
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        for _ in range(3):
            out = net(x_seq)
            loss = functional.temporal_efficient_training_cross_entropy(out, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            functional.reset_net(net)
        rates = [r.mean().item() for r in mon.records]
        mon.remove_hooks()
        print(f"multi-step conv loss {loss.item():.4f}, IF firing {sum(rates) / max(len(rates), 1):.3f}")

    def resnets():
        rgb = torch.rand(4, 3, 64, 64, generator=g).to(dev)
        outs = []
        for net in (spiking_resnet.spiking_resnet18(spiking_neuron=neuron.IFNode,
                                                    surrogate_function=surrogate.ATan(), detach_reset=True),
                    sew_resnet.sew_resnet18(cnf="ADD", spiking_neuron=neuron.LIFNode,
                                            surrogate_function=surrogate.ATan(), detach_reset=True)):
            net = net.to(dev)
            functional.set_step_mode(net, "m")
            x_seq = rgb.unsqueeze(0).repeat(4, 1, 1, 1, 1)
            y = net(x_seq).mean(0)
            loss = F.cross_entropy(y, torch.arange(4).to(dev))
            loss.backward()
            functional.reset_net(net)
            outs.append(round(loss.item(), 3))
        print(f"spiking resnet / sew resnet losses {outs}")

    def stdp():
        fc_ = layer.Linear(64, 16, bias=False).to(dev)
        sn = neuron.IFNode().to(dev)
        net = nn.Sequential(fc_, sn)
        learner = learning.STDPLearner(step_mode="s", synapse=fc_, sn=sn, tau_pre=2.0, tau_post=2.0)
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.0)
        spikes = (torch.rand(20, 8, 64, generator=g) > 0.7).float().to(dev)
        for t in range(spikes.shape[0]):
            opt.zero_grad()
            net(spikes[t])
            learner.step(on_grad=True)
            opt.step()
        functional.reset_net(net)
        learner.reset()
        first = functional.first_spike_index((spikes.transpose(0, 1) > 0).float())
        print(f"stdp weight mean {fc_.weight.mean().item():.4f}, first spikes {tuple(first.shape)}")
    return {"mlp": mlp, "conv": conv, "resnets": resnets, "stdp": stdp}


# -- torchstain: the README's normalisers with the torch backend, fitted to a target image and applied to source
#    images made on the device (CHW tensors scaled to 0-255, as its `ToTensor() * 255` transform): Macenko (with the
#    H and E stains, and without), multi-target Macenko fitted to several targets ----------------------------------

def _he_image(seed, size=160):
    """A synthetic H&E-like tile (3, size, size) in 0-255: pink stroma with purple nuclei and white gaps."""
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    img = torch.tensor([225.0, 150.0, 190.0])[:, None, None] * torch.ones(3, size, size)
    for _ in range(40):
        cy, cx = torch.randint(0, size, (2,), generator=g).tolist()
        r = 3 + int(torch.randint(0, 6, (1,), generator=g))
        mask = (yy - cy) ** 2 + (xx - cx) ** 2 < r * r
        img[:, mask] = torch.tensor([110.0, 60.0, 160.0])[:, None]
    gap = (torch.sin(xx / 9.0) + torch.cos(yy / 13.0)) > 1.6
    img[:, gap] = 245.0
    return (img + 8 * torch.randn(3, size, size, generator=g)).clamp(0, 255)


def torchstain_norm(dev):
    import torchstain

    target = _he_image(0).to(dev)
    sources = [(_he_image(s) * torch.tensor([0.9, 1.05, 0.95])[:, None, None]).clamp(0, 255).to(dev)
               for s in (1, 2, 3)]

    def macenko():
        norm = torchstain.normalizers.MacenkoNormalizer(backend="torch")
        norm.fit(target)
        outs = []
        for src in sources:
            out, H, E = norm.normalize(I=src, stains=True)
            outs.append(out.float().mean().item())
        only, _, _ = norm.normalize(I=sources[0], stains=False)
        print(f"macenko means {[round(o, 1) for o in outs]}, H {tuple(H.shape)}, {tuple(only.shape)}")

    def multi():
        norm = torchstain.normalizers.MultiMacenkoNormalizer(backend="torch", norm_mode="avg-post")
        norm.fit([target, sources[0], sources[1]])
        out, H, E = norm.normalize(I=sources[2], stains=True)
        print(f"multi-target macenko {tuple(out.shape)} {out.float().mean().item():.1f}")

    # `reinhard` (Reinhard and modified Reinhard normalisers) and `augment` (the Macenko augmentor's `fit` and
    # `augment`) were modes of the recorded run too: on the GPU both failed in their warm-up step (the library
    # combines a host tensor with the device image inside `fit` / `augment`), before anything was measured, and were
    # removed from this file after the run
    return {"macenko": macenko, "multi": multi}


# -- vbll: the docs' tutorials' last layers on a feature network moved to the device, trained through the returned
#    `train_loss_fn`, evaluated with `val_loss_fn` and the `predictive` distribution: `DiscClassification` (dense and
#    diagonal covariances) and `GenClassification`, with `return_ood=True` (`ood_scores`) --------------------------

def vbll_layers(dev):
    import vbll

    Xc, yc = _blobs(600, 8, 4, seed=1, spread=2.0)
    Xc, yc = Xc.to(dev), yc.to(dev)

    def features(d_in):
        return nn.Sequential(nn.Linear(d_in, 64), nn.ELU(), nn.Linear(64, 32), nn.ELU()).to(dev)

    def train(feat, head, x, y, steps=6):
        params = list(feat.parameters()) + list(head.parameters())

        def loss_of(i):
            return head(feat(x)).train_loss_fn(y)
        loss = _fit(params, steps, loss_of)
        with torch.no_grad():
            out = head(feat(x))
            val = out.val_loss_fn(y)
        return loss, val, out

    def classification():
        res = []
        for cls, kw in ((vbll.DiscClassification, {"parameterization": "dense"}),
                        (vbll.DiscClassification, {"parameterization": "diagonal"}),
                        (vbll.GenClassification, {"parameterization": "diagonal"})):
            head = cls(32, 4, regularization_weight=1.0 / 600, return_ood=True, **kw).to(dev)
            loss, val, out = train(features(8), head, Xc, yc)
            probs = out.predictive.probs
            acc = (probs.argmax(-1) == yc).float().mean()
            res.append((round(loss.item(), 3), round(acc.item(), 2), round(out.ood_scores.mean().item(), 3)))
        print(f"classification {res}")

    # a `regression` mode (`Regression` with dense, diagonal and low-rank covariances, `HetRegression`,
    # `tRegression` on a heteroscedastic 1-D problem) was a mode of the recorded run too: on the GPU it failed in its
    # warm-up step (the KL term of the regression layer's loss combines a host tensor with device ones inside the
    # library), before anything was measured, and was removed from this file after the run
    return {"classification": classification}


# -- torchxrayvision: the README's pipeline on synthetic radiographs: `datasets.normalize`, `XRayCenterCrop`,
#    `XRayResizer` on numpy images, then tensors moved to the device; a `DenseNet` (random weights, its 18
#    pathologies, `op_threshs` operating points and `apply_sigmoid`) trained with a masked BCE as its training
#    scripts do, evaluated, `features2`; `models.op_norm`; the `ResNetAE50` autoencoder (`encode` / `decode`) ----

def torchxrayvision_cxr(dev):
    import numpy as np
    import torchvision
    import torchxrayvision as xrv

    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:256, :300] / 256.0
    imgs = []
    for _ in range(8):
        img = 180 - 120 * ((yy - 0.5) ** 2 + (xx - 0.55) ** 2) * 4  # a bright disc: a chest-like vignette
        for cx in (0.35, 0.75):  # two darker lungs
            img -= 60 * (((yy - 0.5) / 0.35) ** 2 + ((xx - cx) / 0.15) ** 2 < 1)
        imgs.append(np.clip(img + rng.normal(0, 8, img.shape), 0, 255).astype(np.uint8))
    transform = torchvision.transforms.Compose([xrv.datasets.XRayCenterCrop(), xrv.datasets.XRayResizer(224)])
    batch = np.stack([transform(xrv.datasets.normalize(im, 255)[None, ...]) for im in imgs]).astype(np.float32)
    x = torch.from_numpy(batch).to(dev)
    g = torch.Generator().manual_seed(0)
    y = (torch.rand(8, 18, generator=g) > 0.7).float().to(dev)
    y[:, 14:] = float("nan")  # labels a dataset lacks are NaN, masked out of the loss

    def classifier():
        model = xrv.models.DenseNet(num_classes=18, block_config=(2, 2, 2, 2), growth_rate=16).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for _ in range(3):
            out = model(x)
            mask = ~torch.isnan(y)
            loss = F.binary_cross_entropy_with_logits(out[mask], y[mask])
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        model.op_threshs = torch.rand(18, generator=g).to(dev)
        model.apply_sigmoid = True
        with torch.no_grad():
            probs = model(x)
            feats = model.features2(x)
            normed = xrv.models.op_norm(torch.sigmoid(out.detach()), model.op_threshs)
        print(f"densenet loss {loss.item():.3f}, probs {tuple(probs.shape)} {probs.mean().item():.3f}, "
              f"features {tuple(feats.shape)}, op_norm {normed.mean().item():.3f}, "
              f"{len(xrv.datasets.default_pathologies)} pathologies")

    def autoencoder():
        ae = xrv.autoencoders.ResNetAE50().to(dev)
        opt = torch.optim.Adam(ae.parameters(), lr=1e-4)
        for _ in range(2):
            z = ae.encode(x[:4])
            rec = ae.decode(z)
            loss = F.mse_loss(rec, x[:4])
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"resnet autoencoder latent {tuple(z.shape)}, mse {loss.item():.2f}")
    return {"classifier": classifier, "autoencoder": autoencoder}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _series_csv(path: Path, n: int = 1600, n_vars: int = 6, seed: int = 0) -> None:
    """A `custom` dataset for Autoformer's loader: an hourly `date` column, n_vars features and the target `OT`,
    each a sum of daily and weekly seasonalities, a trend and noise."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    cols = {"date": pd.date_range("2020-01-01", periods=n, freq="h").strftime("%Y-%m-%d %H:%M:%S")}
    for j in range(n_vars):
        cols[f"v{j}"] = (np.sin(2 * np.pi * t / 24 + j) + 0.5 * np.sin(2 * np.pi * t / 168 + 2 * j)
                         + 0.001 * j * t + 0.2 * rng.standard_normal(n))
    cols["OT"] = sum(cols[f"v{j}"] for j in range(n_vars)) / n_vars + 0.1 * rng.standard_normal(n)
    pd.DataFrame(cols).to_csv(path, index=False)


def _np_aliases():
    """numpy 2 removed `np.Inf`, which Autoformer's early stopping reads: given back as `np.inf`."""
    import numpy as np
    if "Inf" not in np.__dict__:
        np.Inf = np.inf


def _reformer_stub() -> None:
    """Autoformer's layers import `LSHSelfAttention` from reformer_pytorch for its Reformer model, which no mode
    runs: a stand-in module lets the import pass where reformer_pytorch is not installed."""
    if "reformer_pytorch" not in sys.modules:
        try:
            import reformer_pytorch  # noqa: F401
        except ImportError:
            stub = types.ModuleType("reformer_pytorch")
            stub.LSHSelfAttention = nn.Module
            sys.modules["reformer_pytorch"] = stub


def _autoformer(dev, name: str, model: str, extra: list):
    """thuml/Autoformer's run.py as is (`--is_training 1 --data custom --features M --seq_len 96 --label_len 48
    --pred_len 24 --e_layers 2 --d_layers 1 --d_model 64 --d_ff 128 --batch_size 16 --num_workers 0`) on a
    synthetic 7-variable hourly series; the GPU when there is one (its `--use_gpu` default), else the CPU. The
    window spans the 2nd to the 14th `backward` of its first epoch (its iteration log reads `loss.item()` at the
    100th, past it)."""
    root = _need_repo("autoformer")
    tmp = Path(hc._tmp())
    (tmp / "data").mkdir()
    _series_csv(tmp / "data" / "series.csv")
    _reformer_stub()
    _np_aliases()
    argv = ["--is_training", "1", "--model_id", "synthetic", "--model", model, "--data", "custom",
            "--root_path", str(tmp / "data"), "--data_path", "series.csv", "--features", "M", "--seq_len", "96",
            "--label_len", "48", "--pred_len", "24", "--enc_in", "7", "--dec_in", "7", "--c_out", "7",
            "--e_layers", "2", "--d_layers", "1", "--d_model", "64", "--n_heads", "4", "--d_ff", "128",
            "--factor", "3", "--batch_size", "16", "--num_workers", "0", "--itr", "1", "--train_epochs", "2",
            "--checkpoints", str(tmp / "checkpoints"), *extra]
    if dev.type != "cuda":
        argv += ["--use_gpu", ""]  # its flag is `type=bool`: only an empty string reads as False

    def window():
        with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 14, stop_script=True):
            hc.run_script(root / "run.py", argv, str(tmp))
    return {"train_window": window}


def autoformer_autoformer(dev):
    """Autoformer: series decomposition blocks and auto-correlation attention (its top-k delays by FFT)."""
    return _autoformer(dev, "autoformer.autoformer", "Autoformer", [])


def autoformer_transformer(dev):
    """The vanilla Transformer baseline (full attention, triangular causal masks in the decoder). (Its Informer
    model, first chosen, names `FullAttention` without importing it at this commit: it fails as is, not run.)"""
    return _autoformer(dev, "autoformer.transformer", "Transformer", [])


def _modelnet(root: Path, n_cls: int = 10, n_train: int = 8, n_test: int = 2, n_pts: int = 1200,
              seed: int = 0) -> None:
    """A ModelNet10 folder as Pointnet_Pointnet2_pytorch's loader reads it (`modelnet10_shape_names.txt`,
    `modelnet10_train.txt` / `_test.txt` of `<class>_<NNNN>` ids, each cloud a `<class>/<id>.txt` of `x,y,z,nx,ny,nz`
    rows): each class a different primitive (sphere, box, cylinder, torus...) with noise, random scale and
    rotation about z."""
    import numpy as np
    rng = np.random.default_rng(seed)
    names = ["sphere", "box", "cylinder", "torus", "cone", "plane", "ring", "rod", "saddle", "helix"][:n_cls]
    root.mkdir(parents=True, exist_ok=True)
    (root / "modelnet10_shape_names.txt").write_text("\n".join(names) + "\n")

    def shape(k):
        u, v = rng.random(n_pts) * 2 * np.pi, rng.random(n_pts) * np.pi
        if k == 0:
            p = np.c_[np.cos(u) * np.sin(v), np.sin(u) * np.sin(v), np.cos(v)]
        elif k == 1:
            p = rng.uniform(-1, 1, (n_pts, 3))
            ax = rng.integers(0, 3, n_pts)
            p[np.arange(n_pts), ax] = np.sign(p[np.arange(n_pts), ax])
        elif k == 2:
            p = np.c_[np.cos(u), np.sin(u), rng.uniform(-1, 1, n_pts)]
        elif k == 3:
            p = np.c_[(1 + 0.3 * np.cos(v * 2)) * np.cos(u), (1 + 0.3 * np.cos(v * 2)) * np.sin(u), 0.3 * np.sin(v * 2)]
        elif k == 4:
            h = rng.random(n_pts)
            p = np.c_[h * np.cos(u), h * np.sin(u), 1 - 2 * h]
        elif k == 5:
            p = np.c_[rng.uniform(-1, 1, (n_pts, 2)), 0.02 * rng.standard_normal(n_pts)]
        elif k == 6:
            p = np.c_[np.cos(u), np.sin(u), 0.05 * rng.standard_normal(n_pts)]
        elif k == 7:
            p = np.c_[0.1 * np.cos(u), 0.1 * np.sin(u), rng.uniform(-1, 1, n_pts)]
        elif k == 8:
            a, b = rng.uniform(-1, 1, (2, n_pts))
            p = np.c_[a, b, a * a - b * b]
        else:
            p = np.c_[np.cos(3 * u), np.sin(3 * u), u / np.pi - 1]
        th = rng.random() * 2 * np.pi
        rot = np.array([[np.cos(th), -np.sin(th), 0], [np.sin(th), np.cos(th), 0], [0, 0, 1]])
        p = (p @ rot.T) * rng.uniform(0.7, 1.3) + 0.02 * rng.standard_normal(p.shape)
        nrm = p / (np.linalg.norm(p, axis=1, keepdims=True) + 1e-6)
        return np.c_[p, nrm]

    split = {"train": [], "test": []}
    for k, name in enumerate(names):
        (root / name).mkdir(exist_ok=True)
        for i in range(n_train + n_test):
            sid = f"{name}_{i + 1:04d}"
            np.savetxt(root / name / f"{sid}.txt", shape(k), fmt="%.6f", delimiter=",")
            split["train" if i < n_train else "test"].append(sid)
    for s, ids in split.items():
        (root / f"modelnet10_{s}.txt").write_text("\n".join(ids) + "\n")


def _pointnet2(dev, name: str, model: str, extra: list):
    """yanx27/Pointnet_Pointnet2_pytorch's train_classification.py as is (`--num_category 10 --batch_size 8
    --num_point 512 --epoch 3 --log_dir <name>`, its own `--use_cpu` without a GPU) on 80 training and 20 test
    synthetic clouds of ten primitive shapes, run from a temporary folder holding the ModelNet data and links to
    its `models` folder and script (it copies them into its log folder). The window spans the 2nd to the 16th
    `backward`: the rest of the first epoch (10 batches), its test pass (per-class accuracies read with `.item()`)
    and the start of the second."""
    root = _need_repo("pointnet2")
    tmp = Path(hc._tmp())
    _modelnet(tmp / "data" / "modelnet40_normal_resampled")
    (tmp / "models").symlink_to(root / "models", target_is_directory=True)
    (tmp / "train_classification.py").symlink_to(root / "train_classification.py")
    argv = ["--model", model, "--num_category", "10", "--batch_size", "8", "--num_point", "512", "--epoch", "3",
            "--log_dir", name.split(".")[1], *extra]
    if dev.type != "cuda":
        argv.append("--use_cpu")

    def window():
        with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 16, stop_script=True):
            hc.run_script(root / "train_classification.py", argv, str(tmp))
    return {"train_window": window}


def pointnet2_ssg(dev):
    """PointNet++ with single-scale grouping (`pointnet2_cls_ssg`): farthest point sampling, ball queries."""
    return _pointnet2(dev, "pointnet2.ssg", "pointnet2_cls_ssg", [])


def pointnet2_pointnet(dev):
    """PointNet (`pointnet_cls`): input and feature transform networks with their orthogonality regulariser."""
    return _pointnet2(dev, "pointnet2.pointnet", "pointnet_cls", [])


MODELS = [
    # name, package, builder
    ("pymde.embed", "pymde", pymde_embed),
    ("noisereduce.gate", "noisereduce", noisereduce_gate),
    ("pyod.detectors", "pyod", pyod_detectors),
    ("piqa.metrics", "piqa", piqa_metrics),
    ("spikingjelly.snn", "spikingjelly", spikingjelly_snn),
    ("torchstain.norm", "torchstain", torchstain_norm),
    ("vbll.layers", "vbll", vbll_layers),
    ("torchxrayvision.cxr", "torchxrayvision", torchxrayvision_cxr),
    ("autoformer.autoformer", "autoformer", autoformer_autoformer),
    ("autoformer.transformer", "autoformer", autoformer_transformer),
    ("pointnet2.ssg", "pointnet2", pointnet2_ssg),
    ("pointnet2.pointnet", "pointnet2", pointnet2_pointnet),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh17", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
