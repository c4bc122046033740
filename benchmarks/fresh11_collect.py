"""Record the syncs of a twelfth set, `fresh11` (a sealed test set): libraries and training code nobody here read.

`fresh11` is recorded the same way as `fresh9` and `fresh10` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery, fresh10's image and checkpoint helpers included) in
libraries outside the tuned set, the earlier sets and the hand labels, and in two public training repositories that
no set and no hand label uses. It is a sealed test set: scored for totals only, its misses never listed. The
workloads were written from the libraries' documented public API (README / docs examples, the names and signatures
they export), on synthetic data with random weights, before anyone ran the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh11): tensorly (CP / Tucker / tensor-train /
  tensor-ring / robust-PCA decompositions and tensor regression on the pytorch backend), tensorly-torch (`tltorch`:
  factorized linear, convolution and embedding layers, tensor regression / contraction layers, tensor lasso and
  dropout), kymatio (1-D, 2-D and 3-D scattering transforms, a hybrid scattering network trained), geotorch
  (manifold constraints on weights: orthogonal, low-rank, positive-definite, sphere, Grassmannian, an orthogonal
  RNN), lpips (the LPIPS perceptual distance as a training loss, spatial maps, its own 2AFC trainer), torch-kmeans
  (batched k-means, soft k-means in a trained encoder, constrained k-means), pytorch-ood (outlier-exposure and
  energy-regularised training, detectors fitted on data, OOD metrics) and torch-lr-finder (the learning-rate range
  test); + appdirs (kymatio's). Their other needs (numpy, scipy, torchvision, tqdm, tensorboard, pillow,
  typing_extensions, packaging) are on the GPU machine; matplotlib (torch-lr-finder imports it) and its needs are
  carried in .whl/fresh11/opt, installed there only if the machine lacks it.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh11/repos/<name>:
  weiaicunzai/pytorch-cifar100 (train.py as is, ResNet-18, SGD with warm-up and tensorboard logging, on synthetic
  CIFAR-100 files) and sgrvinod/a-PyTorch-Tutorial-to-Super-Resolution (train_srresnet.py and train_srgan.py as
  they are, on synthetic JPEGs in create_data_lists.py's layout).

    python benchmarks/fresh11_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh11_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh11 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh11 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import os
import pickle
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh10_collect as f10
import fresh_collect as fc
import heldout_collect as hc
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh11" / "repos", ac.REPO / ".whl" / "fresh11"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh11/repos/<name>)
REPOS = {
    "cifar100": ("weiaicunzai/pytorch-cifar100", "11d8418f415b261e4ae3cb1ffe20d06ec95b98e4",
                 ["train.py", "utils.py", "conf", "models/resnet.py"]),
    "superres": ("sgrvinod/a-PyTorch-Tutorial-to-Super-Resolution", "c30556bc79a9d43539f2d658722bcb7ff5011ddb",
                 ["train_srresnet.py", "train_srgan.py", "models.py", "datasets.py", "utils.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["tensorly==0.10.0", "tensorly-torch==0.5.0", "kymatio==0.3.0", "appdirs==1.4.4", "geotorch==0.4.0",
          "lpips==0.1.4", "torch-kmeans==0.2.0", "pytorch-ood==0.4.0", "torch-lr-finder==0.2.2"]
# installed on the GPU machine only where `import matplotlib` fails there
OPT_WHEELS = ["matplotlib==3.10.7", "contourpy==1.3.3", "cycler==0.12.1", "fonttools==4.60.1", "kiwisolver==1.4.9",
              "pyparsing==3.2.5", "python-dateutil==2.9.0.post0", "six==1.17.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"tensorly": "tensorly", "tensorly_torch": "tensorly-torch", "kymatio": "kymatio", "geotorch": "geotorch",
         "lpips": "lpips", "torch_kmeans": "torch-kmeans", "pytorch_ood": "pytorch-ood",
         "torch_lr_finder": "torch-lr-finder", "torchvision": "torchvision", "numpy": "numpy", "scipy": "scipy",
         "tensorboard": "tensorboard", "matplotlib": "matplotlib"}


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _data(dev, n=256, d=32, classes=10, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g).to(dev), torch.randint(0, classes, (n,), generator=g).to(dev)


def _fit(params, steps, loss_of, lr=1e-3):
    """A few Adam steps of `loss_of(i)`; the last loss."""
    opt = torch.optim.Adam(params, lr=lr)
    for i in range(steps):
        loss = loss_of(i)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss


# ============================================================================================
# Libraries
# ============================================================================================

# -- tensorly: the user guide's decompositions on the pytorch backend (CP-ALS, non-negative CP, power iteration,
#    Tucker / partial / non-negative Tucker, tensor train, tensor ring, robust PCA, PARAFAC2), tensor algebra and
#    tensor regression; randomised CP left out (its lstsq asks for a driver that cuda lacks) --------------------

def tensorly_decompositions(dev):
    import tensorly as tl
    from tensorly import decomposition as td
    from tensorly import metrics, tenalg
    from tensorly.regression import CPRegressor, TuckerRegressor

    tl.set_backend("pytorch")
    g = torch.Generator().manual_seed(0)
    factors = [torch.randn(s, 3, generator=g) for s in (12, 10, 8)]
    X = (tl.cp_to_tensor((torch.ones(3), factors)) + 0.01 * torch.randn(12, 10, 8, generator=g)).to(dev)

    def cp():
        cp = td.parafac(X, rank=3, n_iter_max=30, init="random", tol=1e-8, random_state=0)
        err = tl.norm(tl.cp_to_tensor(cp) - X) / tl.norm(X)
        td.parafac(X, rank=3, n_iter_max=10, init="svd", linesearch=True, normalize_factors=True)
        td.non_negative_parafac(tl.abs(X), rank=3, n_iter_max=15, init="random", random_state=0)
        td.non_negative_parafac_hals(tl.abs(X), rank=3, n_iter_max=10, init="random", random_state=0)
        td.parafac_power_iteration(X, 2, n_repeat=3, n_iteration=5)
        print(f"cp relative error {float(err):.4f}")

    def tucker():
        core, fs = td.tucker(X, rank=[3, 3, 3], n_iter_max=20, init="svd", tol=1e-8, random_state=0)
        tl.tucker_to_tensor((core, fs))
        td.partial_tucker(X, rank=[3, 3], modes=[0, 1], n_iter_max=10)
        td.non_negative_tucker(tl.abs(X), rank=[3, 3, 3], n_iter_max=10, random_state=0)
        tt = td.tensor_train(X, rank=[1, 3, 3, 1])
        tl.tt_to_tensor(tt)
        tr = td.tensor_ring(X, rank=[2, 3, 3, 2])
        tl.tr_to_tensor(tr)

    def rpca():  # a low-rank matrix with sparse corruptions; PARAFAC2 on slices of varying length
        low = torch.randn(40, 3, generator=g) @ torch.randn(3, 30, generator=g)
        sparse = (torch.rand(40, 30, generator=g) < 0.05).float() * 10
        D, E = td.robust_pca((low + sparse).to(dev), n_iter_max=30, reg_E=0.1)
        metrics.RMSE(D, low.to(dev))
        slices = [torch.randn(n, 8, generator=g).to(dev) for n in (10, 12, 9)]
        td.parafac2(slices, rank=2, n_iter_max=10, random_state=0)

    def algebra():
        A, B = torch.randn(6, 3, device=dev), torch.randn(5, 3, device=dev)
        tenalg.khatri_rao([A, B])
        tenalg.mode_dot(X, torch.randn(4, 10, device=dev), mode=1)
        tenalg.multi_mode_dot(X, [torch.randn(4, 12, device=dev), torch.randn(4, 8, device=dev)], modes=[0, 2])
        tl.fold(tl.unfold(X, 1), 1, X.shape)
        tenalg.svd_interface(tl.unfold(X, 0), n_eigenvecs=3)

    Xr = torch.randn(120, 6, 5, generator=g)
    W = torch.randn(6, 1, generator=g) @ torch.randn(1, 5, generator=g)
    yr = (Xr * W).sum((1, 2))
    Xr, yr = Xr.to(dev), yr.to(dev)

    def regression():
        for est in (CPRegressor(weight_rank=2, tol=1e-6, n_iter_max=15, reg_W=1, verbose=0),
                    TuckerRegressor(weight_ranks=[2, 2], tol=1e-6, n_iter_max=15, reg_W=1, verbose=0)):
            est.fit(Xr, yr)
            metrics.RMSE(yr, est.predict(Xr))
    return {"cp": cp, "tucker": tucker, "rpca": rpca, "algebra": algebra, "regression": regression}


# -- tltorch (tensorly-torch): the docs' factorized layers (CP / Tucker / block-TT linear layers, from_linear,
#    factorized convolutions, embeddings), TRL / TCL heads, tensor lasso and tensor dropout, FactorizedTensor -----

def tltorch_layers(dev):
    import tltorch

    x, y = _data(dev, 64, 64)
    img = torch.randn(16, 3, 16, 16, device=dev)
    yi = torch.randint(0, 10, (16,), device=dev)
    tokens = torch.randint(0, 512, (16, 12))  # host ids: the tensorized weight's __getitem__ unravels them in numpy

    def linear():  # a classifier on factorized linear layers of three factorizations, one made from a dense layer
        layers = [tltorch.FactorizedLinear((4, 4, 4), (4, 4, 2), factorization=f, rank=0.5).to(dev)
                  for f in ("cp", "tucker", "blocktt")]
        dense = nn.Linear(64, 32)
        layers.append(tltorch.FactorizedLinear.from_linear(dense, rank=0.5, factorization="tucker",
                                                           auto_tensorize=False, in_tensorized_features=(4, 4, 4),
                                                           out_tensorized_features=(4, 4, 2)).to(dev))
        head = nn.Linear(32, 10).to(dev)
        params = [p for m in (*layers, head) for p in m.parameters()]
        _fit(params, 3, lambda i: F.cross_entropy(head(F.relu(layers[i % 4](x))), y))

    def conv():  # factorized convolutions with a tensor lasso, a TCL and a TRL head; tensor dropout
        c1 = tltorch.FactorizedConv(3, 16, kernel_size=3, order=2, factorization="cp", rank=0.5, padding=1).to(dev)
        c2 = tltorch.FactorizedConv.from_conv(nn.Conv2d(16, 16, 3, padding=1), rank=0.5, factorization="tucker",
                                              decompose_weights=True).to(dev)
        tcl = tltorch.TCL(input_shape=(16, 8, 8), rank=(16, 4, 4)).to(dev)
        trl = tltorch.TRL(input_shape=(16, 4, 4), output_shape=(10,), rank=0.5).to(dev)
        lasso = tltorch.tensor_lasso(factorization="cp", penalty=0.01)
        lasso.apply(c1.weight)
        tltorch.tensor_dropout(trl.weight, p=0.3)
        params = [p for m in (c1, c2, tcl, trl) for p in m.parameters()]
        opt = torch.optim.Adam(params, lr=1e-3)
        for _ in range(3):
            h = F.max_pool2d(F.relu(c2(F.relu(c1(img)))), 2)
            out = trl(tcl(h))
            loss = F.cross_entropy(out, yi) + lasso.loss
            opt.zero_grad()
            loss.backward()
            opt.step()
            lasso.reset()
        trl.eval()
        with torch.no_grad():
            trl(torch.randn(4, 16, 4, 4, device=dev))

    def embedding():  # a factorized embedding bag-of-words model (host token ids, as its indexing needs on cuda);
        # FactorizedTensor creation and reconstruction
        emb = tltorch.FactorizedEmbedding(num_embeddings=512, embedding_dim=64, factorization="blocktt",
                                          rank=8).to(dev)
        head = nn.Linear(64, 2).to(dev)
        lab = torch.randint(0, 2, (16,), device=dev)
        _fit([*emb.parameters(), *head.parameters()], 3,
             lambda i: F.cross_entropy(head(emb(tokens.reshape(-1)).view(16, 12, 64).mean(1)), lab))
        for f in ("cp", "tucker", "tt"):
            t = tltorch.FactorizedTensor.new((8, 8, 8), rank=0.5, factorization=f, device=dev)
            t.normal_(0, 0.02)
            t.init_from_tensor(torch.randn(8, 8, 8, device=dev))
            t.to_tensor().norm()
    return {"linear": linear, "conv": conv, "embedding": embedding}


# -- kymatio: the docs' torch frontend: a hybrid Scattering2D + CNN trained on CIFAR-shaped images, Scattering1D
#    log-scattering audio features with a linear classifier, HarmonicScattering3D invariants ------------------

def _sph_harm():
    """scipy.special.sph_harm, which kymatio 0.3's 3-D frontend imports, was removed in scipy 1.17: it is given
    back in terms of its replacement sph_harm_y (order and degree, then the angles, swapped)."""
    import scipy.special as sp
    if not hasattr(sp, "sph_harm"):
        sp.sph_harm = lambda m, n, theta, phi: sp.sph_harm_y(n, m, phi, theta)


def kymatio_scattering(dev):
    _sph_harm()
    from kymatio.torch import HarmonicScattering3D, Scattering1D, Scattering2D

    s2 = Scattering2D(J=2, shape=(32, 32)).to(dev)
    net = nn.Sequential(nn.BatchNorm2d(3 * 81, eps=1e-5, affine=False), nn.Conv2d(3 * 81, 64, 3, padding=1),
                        nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)).to(dev)
    img = torch.rand(16, 3, 32, 32, device=dev)
    yi = torch.randint(0, 10, (16,), device=dev)

    def hybrid():  # the docs' CIFAR example, shrunk: scattering (no grad) then a trained CNN
        net.train()
        _fit(net.parameters(), 3, lambda i: F.cross_entropy(net(s2(img).view(16, 3 * 81, 8, 8)), yi))
        net.eval()
        with torch.no_grad():
            pred = net(s2(img).view(16, 3 * 81, 8, 8)).argmax(1)
        print(f"hybrid accuracy {(pred == yi).float().mean().item():.2f}")

    T = 2 ** 12
    s1 = Scattering1D(J=6, shape=T, Q=8).to(dev)
    meta = s1.meta()
    order1 = torch.as_tensor(meta["order"] == 1)
    wave = torch.randn(16, T, device=dev)
    ya = torch.randint(0, 4, (16,), device=dev)

    def audio():  # the docs' classification example: log-scattering, first and second order, a linear model
        Sx = s1(wave)
        Sx = Sx[:, 1:, :]
        Sx = torch.log(torch.abs(Sx) + 1e-6).mean(-1)
        mu, std = Sx.mean(0), Sx.std(0)
        lin = nn.Linear(Sx.shape[1], 4).to(dev)
        _fit(lin.parameters(), 3, lambda i: F.cross_entropy(lin((Sx - mu) / std), ya), lr=1e-2)
        s1(wave[:2])[:, order1.to(dev)]

    s3 = HarmonicScattering3D(J=2, shape=(32, 32, 32), L=2, sigma_0=1.0, integral_powers=[0.5, 1.0, 2.0]).to(dev)

    def harmonic():  # invariants of random "molecule" densities, as the docs' QM7 example
        pos = torch.rand(2, 5, 3, device=dev) * 24 + 4
        grid = torch.stack(torch.meshgrid(*(torch.arange(32.0, device=dev),) * 3, indexing="ij"), -1)
        dens = torch.exp(-((grid[None, None] - pos[:, :, None, None, None]) ** 2).sum(-1) / 2).sum(1)
        with torch.no_grad():
            s3(dens).sum().item()
    return {"hybrid": hybrid, "audio": audio, "harmonic": harmonic}


# -- geotorch: the README's constraints registered on layers and trained with plain optimisers; an RNN with an
#    orthogonal recurrent kernel (the docs' copying-task model) using the parametrization cache; sampling ------

def geotorch_constraints(dev):
    import geotorch
    import torch.nn.utils.parametrize as P

    x, y = _data(dev, 128, 32)

    def mlp():
        model = nn.Sequential(nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 32),
                              nn.Linear(32, 10)).to(dev)
        geotorch.orthogonal(model[0], "weight")
        geotorch.low_rank(model[2], "weight", rank=4)
        geotorch.positive_definite(model[4], "weight")
        geotorch.sphere(model[5], "bias")
        opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
        for _ in range(3):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

    class ExpRNNCell(nn.Module):
        def __init__(self, n_in, n_hid):
            super().__init__()
            self.recurrent_kernel = nn.Linear(n_hid, n_hid, bias=False)
            self.input_kernel = nn.Linear(n_in, n_hid)
            geotorch.orthogonal(self.recurrent_kernel, "weight")
            self.recurrent_kernel.weight = self.recurrent_kernel.parametrizations.weight[0].sample()

        def forward(self, inp, hid):
            return torch.tanh(self.input_kernel(inp) + self.recurrent_kernel(hid))

    def rnn():  # the copying task's loop: a cached parametrization over the sequence
        cell = ExpRNNCell(8, 32).to(dev)
        head = nn.Linear(32, 8).to(dev)
        seq = torch.randn(16, 20, 8, device=dev)
        target = torch.randint(0, 8, (16, 20), device=dev)
        opt = torch.optim.RMSprop([*cell.parameters(), *head.parameters()], lr=1e-3)
        for _ in range(2):
            h = torch.zeros(16, 32, device=dev)
            outs = []
            with P.cached():
                for t in range(seq.shape[1]):
                    h = cell(seq[:, t], h)
                    outs.append(head(h))
            loss = F.cross_entropy(torch.stack(outs, 1).reshape(-1, 8), target.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()

    def manifolds():  # the other constraints: registered, initialised by sampling, one step each
        specs = [(geotorch.grassmannian, {}), (geotorch.almost_orthogonal, {"lam": 0.5}),
                 (geotorch.fixed_rank, {"rank": 3}), (geotorch.invertible, {}), (geotorch.sln, {}),
                 (geotorch.positive_semidefinite_low_rank, {"rank": 3}), (geotorch.symmetric, {}),
                 (geotorch.skew, {})]
        for constraint, kw in specs:
            layer = nn.Linear(16, 16).to(dev)
            constraint(layer, "weight", **kw)
            m = layer.parametrizations.weight[0]
            if hasattr(m, "sample"):
                layer.weight = m.sample()
            opt = torch.optim.Adam(layer.parameters(), lr=1e-3)
            loss = layer(x[:, :16]).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return {"mlp": mlp, "rnn": rnn, "manifolds": manifolds}


# -- lpips: the README's perceptual distance as a training loss (AlexNet, with an L1 term), VGG and SqueezeNet
#    distances and spatial maps, its image helpers, and its own Trainer on 2AFC triplets (BAPPS's layout); the
#    backbones with random weights (pnet_rand: no torchvision download), the linear layers its own bundled ones -----

def lpips_perceptual(dev):
    import lpips

    alex = lpips.LPIPS(net="alex", pnet_rand=True, verbose=False).to(dev)
    vgg = lpips.LPIPS(net="vgg", pnet_rand=True, verbose=False).to(dev)
    sq = lpips.LPIPS(net="squeeze", pnet_rand=True, spatial=True, verbose=False).to(dev)
    ae = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.ReLU(), nn.ConvTranspose2d(16, 3, 4, 2, 1),
                       nn.Tanh()).to(dev)
    img = torch.rand(8, 3, 64, 64, device=dev) * 2 - 1

    def train():  # an autoencoder trained with L1 + LPIPS
        _fit(ae.parameters(), 3, lambda i: F.l1_loss(ae(img), img) + alex(ae(img), img).mean())

    def distance():
        with torch.no_grad():
            d = vgg(img[:4], img[4:])
            dmap = sq(img[:4], img[4:])
            d01 = alex(img[:4] * 0.5 + 0.5, img[4:] * 0.5 + 0.5, normalize=True)
        print(f"lpips vgg {d.mean().item():.3f}, map {tuple(dmap.shape)}, alex {d01.mean().item():.3f}")
        im = lpips.tensor2im(img[:1])
        lpips.im2tensor(im)
        lpips.psnr(im, lpips.tensor2im(img[1:2]))

    trainer = lpips.Trainer()
    trainer.initialize(model="lpips", net="alex", pnet_rand=True, use_gpu=dev.type == "cuda", is_train=True,
                       lr=1e-4, gpu_ids=[0])

    def trainer_2afc():  # the train.py loop: set_input, optimize_parameters, errors; then its test scoring
        for _ in range(2):
            data = {"ref": torch.rand(8, 3, 64, 64) * 2 - 1, "p0": torch.rand(8, 3, 64, 64) * 2 - 1,
                    "p1": torch.rand(8, 3, 64, 64) * 2 - 1, "judge": torch.rand(8, 1, 1, 1)}
            trainer.set_input(data)
            trainer.optimize_parameters()
            trainer.get_current_errors()
        trainer.update_learning_rate(10)
    return {"train": train, "distance": distance, "trainer": trainer_2afc}


# -- torch_kmeans: the README's batched k-means (per-instance k, cosine distance, fit / predict), soft k-means as
#    a differentiable layer in a trained encoder, constrained k-means with per-point weights ------------------

def kmeans_clustering(dev):
    from torch_kmeans import ConstrainedKMeans, CosineSimilarity, KMeans, SoftKMeans

    g = torch.Generator().manual_seed(0)
    centers = torch.randn(4, 5, 8, generator=g) * 4
    x = (centers[:, torch.randint(0, 5, (200,), generator=g)] + torch.randn(4, 200, 8, generator=g)).to(dev)

    def kmeans():
        model = KMeans(n_clusters=5, num_init=2, max_iter=30, verbose=False, seed=0)
        res = model(x)
        res.labels[0].bincount(minlength=5)
        model(x, k=torch.tensor([3, 4, 5, 6], device=dev))
        model.fit(x)
        model.predict(x)
        KMeans(n_clusters=5, distance=CosineSimilarity, init_method="k-means++", num_init=2, max_iter=30,
               verbose=False, seed=0)(x)

    enc = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to(dev)

    def soft():  # a deep-clustering step: soft assignments of encoded points, a compactness loss
        skm = SoftKMeans(n_clusters=5, max_iter=30, verbose=False, seed=0)

        def loss_of(i):
            res = skm(enc(x))
            return res.inertia.mean()
        _fit(enc.parameters(), 2, loss_of)

    def constrained():
        w = torch.rand(2, 60, generator=g).to(dev) * 0.01 + 0.005
        ckm = ConstrainedKMeans(n_clusters=3, num_init=1, max_iter=10, verbose=False, seed=0)
        ckm(x[:2, :60], weights=w)
    return {"kmeans": kmeans, "soft": soft, "constrained": constrained}


# -- pytorch_ood: the README's workflow: a WideResNet trained with outlier exposure and the energy-regularised
#    loss (OOD samples labelled < 0), detectors fitted on an in-distribution loader and scored into OODMetrics ---

def ood_detectors(dev):
    from pytorch_ood.detector import (
        ASH,
        ODIN,
        EnergyBased,
        Entropy,
        KLMatching,
        Mahalanobis,
        MaxLogit,
        MaxSoftmax,
        ReAct,
        ViM,
    )
    from pytorch_ood.loss import EnergyRegularizedLoss, OutlierExposureLoss
    from pytorch_ood.metrics import OODMetrics
    from pytorch_ood.model import WideResNet
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(0)
    model = WideResNet(num_classes=10, depth=10, widen_factor=2).to(dev)
    g = torch.Generator().manual_seed(0)
    xin, yin = torch.randn(128, 3, 32, 32, generator=g), torch.randint(0, 10, (128,), generator=g)
    xout = torch.rand(64, 3, 32, 32, generator=g) * 4 - 2
    train_loader = DataLoader(TensorDataset(torch.cat([xin, xout]), torch.cat([yin, -torch.ones(64).long()])),
                              batch_size=32, shuffle=True)
    fit_loader = DataLoader(TensorDataset(xin, yin), batch_size=32)
    test_loader = DataLoader(TensorDataset(torch.cat([xin[:64], xout[:32]]),
                                           torch.cat([yin[:64], -torch.ones(32).long()])), batch_size=32)

    def train():
        model.train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        for crit in (OutlierExposureLoss(alpha=0.5), EnergyRegularizedLoss(alpha=0.1)):
            for i, (xb, yb) in enumerate(train_loader):
                loss = crit(model(xb.to(dev)), yb.to(dev))
                opt.zero_grad()
                loss.backward()
                opt.step()
                if i == 2:
                    break

    def detect():
        model.eval()
        dets = [MaxSoftmax(model), EnergyBased(model), MaxLogit(model), Entropy(model),
                ODIN(model, eps=0.002, temperature=1000.0), Mahalanobis(model.features),
                KLMatching(model), ViM(model.features, d=16, w=model.fc.weight, b=model.fc.bias),
                ReAct(backbone=model.features, head=model.fc), ASH(backbone=model.feature_maps,
                                                                  head=lambda z: model.fc(z.mean((2, 3))))]
        for det in dets:
            if "device" in inspect.signature(det.fit).parameters:
                det.fit(fit_loader, device=dev)
            else:
                det.fit(fit_loader)
            metrics = OODMetrics()
            for xb, yb in test_loader:
                metrics.update(det(xb.to(dev)), yb.to(dev))
            metrics.compute()
    return {"train": train, "detect": detect}


# -- torch_lr_finder: the README's range test (exponential, then linear with a validation loader, gradient
#    accumulation, mixed precision with a GradScaler on cuda), its plot with the suggested rate, reset --------

def lr_finder_range_test(dev):
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from torch.utils.data import DataLoader, TensorDataset
    from torch_lr_finder import LRFinder

    g = torch.Generator().manual_seed(0)
    X, Y = torch.randn(512, 3, 16, 16, generator=g), torch.randint(0, 10, (512,), generator=g)
    train_loader = DataLoader(TensorDataset(X, Y), batch_size=32, shuffle=True)
    val_loader = DataLoader(TensorDataset(X[:64], Y[:64]), batch_size=32)

    def model_opt():
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(),
                              nn.Linear(256, 10)).to(dev)
        return model, torch.optim.SGD(model.parameters(), lr=1e-7, momentum=0.9, weight_decay=1e-2)

    def exp():
        model, opt = model_opt()
        finder = LRFinder(model, opt, nn.CrossEntropyLoss(), device=dev)
        finder.range_test(train_loader, end_lr=10, num_iter=20)
        fig, ax = plt.subplots()
        finder.plot(ax=ax, skip_start=2, skip_end=2)
        plt.close(fig)
        finder.reset()

    def validated():
        model, opt = model_opt()
        finder = LRFinder(model, opt, nn.CrossEntropyLoss(), device=dev)
        finder.range_test(train_loader, val_loader=val_loader, end_lr=1, num_iter=8, step_mode="linear")
        finder.reset()

    def accumulated():
        model, opt = model_opt()
        kw = {}
        if dev.type == "cuda":
            kw = {"amp_backend": "torch", "amp_config": {"device_type": "cuda", "dtype": torch.float16},
                  "grad_scaler": torch.amp.GradScaler("cuda")}
        finder = LRFinder(model, opt, nn.CrossEntropyLoss(), device=dev, **kw)
        finder.range_test(train_loader, end_lr=10, num_iter=10, accumulation_steps=2)
        finder.reset()
    return {"exp": exp, "validated": validated, "accumulated": accumulated}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

@contextlib.contextmanager
def _no_pretrained(name: str):
    """torchvision.models.<name> without ImageNet weights (no network on the GPU machine): `pretrained=True`
    becomes random weights."""
    import torchvision
    orig = getattr(torchvision.models, name)
    setattr(torchvision.models, name, lambda *a, pretrained=False, **kw: orig(weights=None))
    try:
        yield
    finally:
        setattr(torchvision.models, name, orig)


@contextlib.contextmanager
def _full_load():
    """torch.load reading pickled models (weights_only=False, the default before torch 2.6)."""
    orig = torch.load
    torch.load = lambda *a, **kw: orig(*a, **{"weights_only": False, **kw})
    try:
        yield
    finally:
        torch.load = orig


def _forget(root: Path) -> None:
    """The repository's modules (packages without an __init__ included) and its folder off sys.path: the next
    script's `models`, `utils` must not resolve to them."""
    for m, mod in list(sys.modules.items()):
        paths = getattr(mod, "__path__", None)  # a list, or a namespace package's _NamespacePath
        where = [getattr(mod, "__file__", None) or "",
                 *(paths if isinstance(paths, list) or type(paths).__name__ == "_NamespacePath" else ())]
        if any(str(w).startswith(str(root)) for w in where):
            del sys.modules[m]
    sys.path[:] = [p for p in sys.path if p != str(root)]


def _cifar100(root: Path, n_train: int, n_test: int) -> None:
    """cifar-100-python/{train,test,meta} in the python version's pickle layout, random images; torchvision's
    CIFAR100 told their md5 sums (its download then finds them verified)."""
    import numpy as np
    import torchvision
    rng = np.random.default_rng(0)
    folder = root / "data" / "cifar-100-python"
    folder.mkdir(parents=True, exist_ok=True)
    sums = {}
    for name, n in (("train", n_train), ("test", n_test)):
        entry = {"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
                 "fine_labels": rng.integers(0, 100, n).tolist(), "coarse_labels": rng.integers(0, 20, n).tolist()}
        (folder / name).write_bytes(pickle.dumps(entry))
    (folder / "meta").write_bytes(pickle.dumps({"fine_label_names": [f"c{i}" for i in range(100)],
                                                "coarse_label_names": [f"s{i}" for i in range(20)]}))
    for name in ("train", "test", "meta"):
        sums[name] = hashlib.md5((folder / name).read_bytes()).hexdigest()
    cls = torchvision.datasets.CIFAR100
    cls.train_list, cls.test_list = [["train", sums["train"]]], [["test", sums["test"]]]
    cls.meta = {**cls.meta, "md5": sums["meta"]}


def cifar100_train(dev):
    """train.py as is (`-net resnet18 -gpu -b 16`: ResNet-18, SGD with momentum, the warm-up scheduler for the first
    epoch, MultiStepLR, tensorboard scalars / histograms / graph, four loader workers) on 64 synthetic training and
    32 test images of CIFAR-100's python layout (four steps an epoch). The window spans the 2nd to the 7th
    `backward`: the rest of the first epoch (its per-step gradient-norm and loss logging), the epoch's histograms,
    eval_training on the test set, and two steps of the second epoch."""
    root = fc._on_path(_need_repo("cifar100"))
    tmp = Path(hc._tmp())
    _cifar100(tmp, 64, 32)
    argv = ["-net", "resnet18", "-b", "16"] + (["-gpu"] if dev.type == "cuda" else [])

    def window():
        try:
            with hc.window_on(torch.Tensor, "backward", "cifar100.train", "train", dev, 2, 7, stop_script=True):
                hc.run_script(root / "train.py", argv, str(tmp))
        finally:
            _forget(root)
    return {"train_window": window}


def _sr_data(folder: Path, n: int) -> None:
    """train_images.json in create_data_lists.py's layout: random JPEGs of at least the crop size."""
    paths = f10._images(folder / "train", n, size=128, seed=1)
    (folder / "train_images.json").write_text(json.dumps(paths))


def superres_srresnet(dev):
    """train_srresnet.py as is (SRResNet, 16 residual blocks, x4, MSE, Adam, batch 16, four loader workers, pinned
    memory) on 64 synthetic 128x128 JPEGs (four steps an epoch, its checkpoint saved after each; the data folder
    './' is the run's folder). The window spans the 2nd to the 8th `backward`: six training steps over an epoch's
    end."""
    root = fc._on_path(_need_repo("superres"))
    tmp = Path(hc._tmp())
    _sr_data(tmp, 64)

    def window():
        try:
            with hc.window_on(torch.Tensor, "backward", "superres.srresnet", "train", dev, 2, 8, stop_script=True):
                hc.run_script(root / "train_srresnet.py", [], str(tmp))
        finally:
            _forget(root)
    return {"train_window": window}


def superres_srgan(dev):
    """train_srgan.py as is (SRGAN: the generator initialised from an SRResNet checkpoint saved as
    train_srresnet.py saves it, the discriminator, the truncated VGG-19 content loss, adversarial losses, two Adam
    optimisers, batch 16) on the same synthetic data; VGG-19 built without ImageNet weights and torch.load with
    `weights_only=False` (the default before torch 2.6). Two `backward` calls a step: the window spans the 3rd to
    the 13th, five training steps."""
    root = fc._on_path(_need_repo("superres"))
    tmp = Path(hc._tmp())
    _sr_data(tmp, 64)
    import models as sr_models  # kept imported: the checkpoint's unpickling uses this module
    torch.save({"epoch": 0, "model": sr_models.SRResNet(), "optimizer": None}, tmp / "checkpoint_srresnet.pth.tar")

    def window():
        try:
            with _no_pretrained("vgg19"), _full_load(), hc.window_on(torch.Tensor, "backward", "superres.srgan",
                                                                     "train", dev, 3, 13, stop_script=True):
                hc.run_script(root / "train_srgan.py", [], str(tmp))
        finally:
            _forget(root)
    return {"train_window": window}


MODELS = [
    # name, package, builder
    ("tensorly.decompositions", "tensorly", tensorly_decompositions),
    ("tltorch.layers", "tltorch", tltorch_layers),
    ("kymatio.scattering", "kymatio", kymatio_scattering),
    ("geotorch.constraints", "geotorch", geotorch_constraints),
    ("lpips.perceptual", "lpips", lpips_perceptual),
    ("torch_kmeans.clustering", "torch_kmeans", kmeans_clustering),
    ("pytorch_ood.detectors", "pytorch_ood", ood_detectors),
    ("torch_lr_finder.range_test", "torch_lr_finder", lr_finder_range_test),
    ("cifar100.train", "cifar100", cifar100_train),
    ("superres.srresnet", "superres", superres_srresnet),
    ("superres.srgan", "superres", superres_srgan),
]


def prepare() -> None:
    """The repositories' files and the wheels (fresh_collect's prepare); matplotlib's into .whl/fresh11/opt."""
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
    hc.download_wheels(OPT_WHEELS, WHEELS_DIR / "opt")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        prepare()
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh11", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
