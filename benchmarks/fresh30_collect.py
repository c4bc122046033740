"""Record the syncs of a thirty-first set, `fresh30` (a sealed test set): libraries and training code nobody here read.

`fresh30` is recorded the same way as `fresh9` to `fresh29` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; dxtb's `Calculator(..., device=, dtype=)` and
dhg's `Hypergraph(..., device=)` / `Graph(..., device=)` / `BiGraph(..., device=)` build their tensors on the
device they are given): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh30), names a to l: dhg (DeepHypergraph:
  hypergraph and graph structures, their neural networks, evaluators and random generators), dxtb (fully
  differentiable extended tight-binding: energies, forces, charges and other properties by self-consistent
  field; + tad-dftd4, tad-multicharge, tad-mctc 0.7.0 and tad-dftd3 0.6.0, the versions it pins, and pydantic,
  tomli, tomli-w), fft_conv_pytorch (fft-conv-pytorch: convolutions computed through the FFT), focal_frequency_loss
  (focal-frequency-loss: a frequency-domain image reconstruction loss), funsor (functional tensors for probabilistic
  programming, torch backend; + pyro-ppl, pyro-api, makefun, multipledispatch, opt_einsum), gateloop_transformer
  (gateloop-transformer: a transformer of gated linear recurrences by associative scan), iTransformer (itransformer:
  inverted transformers for multivariate forecasting; + hyper-connections, rotary-embedding-torch,
  torch-einops-utils, beartype, einops) and linformer (self-attention of linear complexity); + scikit-learn,
  threadpoolctl, joblib, cloudpickle, narwhals, optuna and colorlog (dhg's). Their other needs (numpy, scipy, h5py,
  matplotlib, requests, tqdm, pillow, torchvision) are on the GPU machine.
- Two training repositories at pinned commits, copied by `prepare` into .bench/fresh30/repos/<name>:
  martinarjovsky/WassersteinGAN (main.py as is: a DCGAN critic and generator trained by weight clipping, on
  synthetic CIFAR-10 images) and Zeleni9/pytorch-wgan (main.py as is: its WGAN-GP, WGAN-CP and DCGAN models on
  synthetic CIFAR-10 images; `tensorflow`, which its logger imports, answered by a stub).

    python benchmarks/fresh30_collect.py prepare        # here, with network: wheels, repos and code copies
    python benchmarks/fresh30_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh30 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh30 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import os
import shutil
import sys
import types
from collections import OrderedDict
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh_collect as fc
import heldout_collect as hc
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
BENCH_DIR = ac.REPO / ".bench" / "fresh30"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh30", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh30/repos/<name>)
REPOS = {
    "wgan": ("martinarjovsky/WassersteinGAN", "f7a01e82007ea408647c451b9e1c8f1932a3db67", ["main.py", "models"]),
    "pwgan": ("Zeleni9/pytorch-wgan", "7f5b52d638746c8b2abdd65dc26319f1de3be8cf", ["main.py", "models", "utils"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["dhg==0.9.7", "scikit-learn==1.9.1", "threadpoolctl==3.8.0", "joblib==1.6.0", "cloudpickle==3.1.3",
          "narwhals==2.29.0", "optuna==5.0.0", "colorlog==6.12.0", "dxtb==0.4.0", "tad-dftd4==0.8.0", "tad-multicharge==0.5.0",  # noqa: E501
          "tad-mctc==0.7.0", "tad-dftd3==0.6.0", "pydantic==2.14.4", "pydantic-core==2.50.5", "annotated-types==0.8.0",
          "typing-inspection==0.4.5", "tomli==2.5.0", "tomli-w==1.2.0", "fft-conv-pytorch==1.2.0",
          "focal-frequency-loss==0.3.0", "funsor==0.4.8", "pyro-ppl==1.9.2", "pyro-api==0.1.2", "makefun==1.16.0",
          "multipledispatch==1.0.0", "opt-einsum==3.4.0", "gateloop-transformer==0.2.5", "itransformer==0.8.1",
          "hyper-connections==0.4.11", "rotary-embedding-torch==0.9.1", "torch-einops-utils==0.2.0",
          "beartype==0.23.1", "einops==0.8.2", "linformer==0.2.3"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"dhg": "dhg", "dxtb": "dxtb", "fft_conv_pytorch": "fft-conv-pytorch",
         "focal_frequency_loss": "focal-frequency-loss", "funsor": "funsor",
         "gateloop_transformer": "gateloop-transformer", "itransformer": "itransformer", "linformer": "linformer",
         "tad_mctc": "tad-mctc", "tad_dftd3": "tad-dftd3", "tad_dftd4": "tad-dftd4", "pyro": "pyro-ppl",
         "sklearn": "scikit-learn", "numpy": "numpy", "scipy": "scipy", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh30/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh30_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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

# -- dhg (DeepHypergraph): the README's recipe on the device: a `Hypergraph` (from `dhg.random.hypergraph_Gnm`'s
#    edge list, from features by `from_feature_kNN`, from a `Graph` by `from_graph_kHop`) moved `.to(dev)`,
#    vertex classification by `HGNN`, `HGNNP`, `HNHN`, `UniGCN`, `UniGAT` scored by
#    `HypergraphVertexClassificationEvaluator`; graph models (`GCN`, `GAT`, `GraphSAGE`, `GIN`) scored by
#    `GraphVertexClassificationEvaluator`; the structures' Laplacians, degrees, smoothing and dropping; and
#    `LightGCN` on a `BiGraph` scored by `UserItemRecommenderEvaluator` -----------------------------------------

def dhg_hypergraphs(dev):
    import dhg  # noqa: I001
    from dhg.metrics import (GraphVertexClassificationEvaluator, HypergraphVertexClassificationEvaluator,
                             UserItemRecommenderEvaluator)
    from dhg.models import GAT, GCN, GIN, HGNN, HGNNP, HNHN, GraphSAGE, LightGCN, UniGAT, UniGCN

    def data(n=200, d=16, k=4, seed=0):
        x, y = _classes(n, d, k, seed)
        g = torch.Generator().manual_seed(seed)
        perm = torch.randperm(n, generator=g)
        train, test = torch.zeros(n, dtype=torch.bool), torch.zeros(n, dtype=torch.bool)
        train[perm[: n // 2]], test[perm[n // 2:]] = True, True
        return x.to(dev), y.to(dev), train.to(dev), test.to(dev)

    def fit(net, x, y, train, test, struct, evaluator, steps=15):
        net = net.to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=0.01, weight_decay=5e-4)
        res = None
        for _ in range(steps):
            net.train()
            opt.zero_grad()
            out = net(x, struct)
            loss = F.cross_entropy(out[train], y[train])
            loss.backward()
            opt.step()
            net.eval()
            with torch.no_grad():
                out = net(x, struct)
            res = evaluator.validate(y[test], out[test])
        with torch.no_grad():
            final = evaluator.test(y[test], net(x, struct)[test])
        return round(float(res), 4), {k: (round(float(v), 4) if not torch.is_tensor(v) or v.numel() == 1 else
                                          tuple(v.shape)) for k, v in final.items()}

    def hypergraph():
        dhg.random.set_seed(0)
        x, y, train, test = data()
        hg = dhg.random.hypergraph_Gnm(200, 300).to(dev)
        ev = HypergraphVertexClassificationEvaluator(["accuracy", "f1_score", {"f1_score": {"average": "micro"}}])
        res = {}
        for name, net in (("hgnn", HGNN(16, 32, 4)), ("hgnnp", HGNNP(16, 32, 4)), ("hnhn", HNHN(16, 32, 4)),
                          ("unigcn", UniGCN(16, 32, 4)), ("unigat", UniGAT(16, 8, 4, num_heads=4))):
            torch.manual_seed(0)
            res[name] = fit(net, x, y, train, test, hg, ev)
        print(f"hypergraph: {res}")

    def graph():
        dhg.random.set_seed(1)
        x, y, train, test = data(seed=1)
        g = dhg.random.graph_Gnm(200, 800).to(dev)
        ev = GraphVertexClassificationEvaluator(["accuracy", "f1_score", {"f1_score": {"average": "micro"}}])
        res = {}
        for name, net in (("gcn", GCN(16, 32, 4)), ("gat", GAT(16, 8, 4, num_heads=4)),
                          ("sage", GraphSAGE(16, 32, 4)), ("gin", GIN(16, 32, 4, num_layers=2))):
            torch.manual_seed(0)
            try:
                res[name] = fit(net, x, y, train, test, g, ev)
            except TypeError as e:  # a model whose signature differs from the others': printed
                res[name] = f"TypeError: {e}"
        print(f"graph: {res}")

    def structures():
        dhg.random.set_seed(2)
        x, y, train, test = data(seed=2)
        knn = dhg.Hypergraph.from_feature_kNN(x, k=5, device=dev)
        g = dhg.Graph(200, dhg.random.graph_Gnm(200, 600).e[0], device=dev)
        khop = dhg.Hypergraph.from_graph_kHop(g, k=2, device=dev)
        hg = dhg.Hypergraph(200, dhg.random.hypergraph_Gnm(200, 150).e[0], device=dev)
        hg.add_hyperedges_from_feature_kNN(x, k=3, group_name="knn")
        hg.add_hyperedges_from_graph(g, group_name="graph")
        res = {"knn": knn.num_e, "khop": khop.num_e, "groups": hg.group_names, "num_e": hg.num_e}
        for name, h in (("knn", knn), ("khop", khop), ("hg", hg)):
            lap = h.L_HGNN
            res[name + "/lap"] = round(float(torch.sparse.sum(lap)), 3)
            res[name + "/deg"] = (round(float(h.D_v.values().sum()), 2), round(float(h.D_e.values().sum()), 2))
            res[name + "/smooth"] = round(float(h.smoothing_with_HGNN(x).norm()), 3)
            res[name + "/v2e"] = tuple(h.v2e(x, aggr="mean").shape)
            dropped = h.drop_hyperedges(0.2)
            res[name + "/drop"] = dropped.num_e
        sub = hg.subgraph(list(range(0, 200, 2)))
        res["sub"] = (sub.num_v, sub.num_e)
        res["nbr"] = len(hg.nbr_v(0)) if hg.num_e else 0
        ev = HypergraphVertexClassificationEvaluator(["accuracy"])
        torch.manual_seed(0)
        res["fit_knn"] = fit(HGNNP(16, 32, 4), x, y, train, test, knn, ev, steps=10)
        res["fit_khop"] = fit(HGNN(16, 32, 4), x, y, train, test, khop, ev, steps=10)
        print(f"structures: {res}")

    def recommender():
        dhg.random.set_seed(3)
        g = torch.Generator().manual_seed(3)
        n_u, n_i = 60, 80
        pairs = torch.unique(torch.stack([torch.randint(0, n_u, (600,), generator=g),
                                          torch.randint(0, n_i, (600,), generator=g)], 1), dim=0)
        bg = dhg.BiGraph(n_u, n_i, pairs.tolist(), device=dev)
        truth = torch.zeros(n_u, n_i)
        truth[pairs[:, 0], pairs[:, 1]] = 1.0
        truth = truth.to(dev)
        torch.manual_seed(0)
        net = LightGCN(n_u, n_i, 32).to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=0.01)
        ev = UserItemRecommenderEvaluator([{"ndcg": {"k": 10}}, {"recall": {"k": 10}}, {"precision": {"k": 10}}])
        for _ in range(12):
            u_emb, i_emb = net(bg)
            users = torch.randint(0, n_u, (128,), device=dev)
            pos = torch.multinomial(truth[users] + 1e-6, 1).squeeze(1)
            neg = torch.randint(0, n_i, (128,), device=dev)
            s_pos = (u_emb[users] * i_emb[pos]).sum(-1)
            s_neg = (u_emb[users] * i_emb[neg]).sum(-1)
            loss = -F.logsigmoid(s_pos - s_neg).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            u_emb, i_emb = net(bg)
            scores = u_emb @ i_emb.t()
        for start in range(0, n_u, 20):
            ev.validate_add_batch(truth[start:start + 20], scores[start:start + 20])
        val = ev.validate_epoch_res()
        for start in range(0, n_u, 20):
            ev.test_add_batch(truth[start:start + 20], scores[start:start + 20])
        print(f"recommender: loss {loss.item():.4f}, val {float(val):.4f}, test {ev.test_epoch_res()}")
    return {"hypergraph": hypergraph, "graph": graph, "structures": structures, "recommender": recommender}


# -- dxtb: the README's `Calculator(numbers, dxtb.GFN1_XTB, device=, dtype=)` on molecules built on the device:
#    `get_energy`, `get_forces` (positions requiring grad), charges, dipole, bond orders, orbital energies and
#    the SCF iteration count, for single molecules and a batch packed with `tad_mctc.batch.pack`, GFN1 and GFN2
#    parametrisations, and a few steps of a geometry relaxation along the forces ---------------------------------

def dxtb_tb(dev):
    import dxtb
    from tad_mctc.batch import pack

    # the device as the tensors report it (`cuda:0`, not `cuda`): the calculator checks that its tensors' devices
    # equal the one it is given
    dev = torch.empty(0, device=dev).device
    dd = {"device": dev, "dtype": torch.float64}
    # water, ammonia, methane and a lithium hydride molecule (atomic numbers, positions in bohr)
    mols = {
        "h2o": ([8, 1, 1], [[0.0, 0.0, -0.7], [0.0, 1.43, 0.45], [0.0, -1.43, 0.45]]),
        "nh3": ([7, 1, 1, 1], [[0.0, 0.0, 0.3], [0.0, 1.77, -0.4], [1.53, -0.89, -0.4], [-1.53, -0.89, -0.4]]),
        "ch4": ([6, 1, 1, 1, 1], [[0.0, 0.0, 0.0], [1.19, 1.19, 1.19], [-1.19, -1.19, 1.19], [-1.19, 1.19, -1.19],
                                  [1.19, -1.19, -1.19]]),
        "lih": ([3, 1], [[0.0, 0.0, 0.0], [0.0, 0.0, 3.0]]),
    }

    def mol(name):
        numbers, positions = mols[name]
        return torch.tensor(numbers, device=dev), torch.tensor(positions, **dd)

    def guarded(res, key, call):
        try:
            val = call()
            res[key] = round(float(val.sum()), 5) if torch.is_tensor(val) else val
        except Exception as e:  # noqa: BLE001 - a property this version or parametrisation lacks: printed
            res[key] = f"{type(e).__name__}"

    def single():
        res = {}
        for name in mols:
            numbers, positions = mol(name)
            calc = dxtb.Calculator(numbers, dxtb.GFN1_XTB, **dd)
            res[name] = round(float(calc.get_energy(positions)), 6)
            guarded(res, name + "/iter", lambda calc=calc: calc.get_iterations())
            guarded(res, name + "/charges", lambda calc=calc, p=positions: calc.get_charges(p).abs())
            guarded(res, name + "/mo", lambda calc=calc, p=positions: calc.get_mo_energies(p))
            guarded(res, name + "/bo", lambda calc=calc, p=positions: calc.get_bond_orders(p))
        print(f"single: {res}")

    def forces():
        res = {}
        for name in ("h2o", "nh3"):
            numbers, positions = mol(name)
            calc = dxtb.Calculator(numbers, dxtb.GFN1_XTB, **dd)
            pos = positions.clone().requires_grad_(True)
            f = calc.get_forces(pos)
            res[name] = round(float(f.norm()), 6)
            guarded(res, name + "/dipole", lambda calc=calc, p=positions: calc.get_dipole(p))
        numbers, positions = mol("h2o")
        try:
            calc2 = dxtb.Calculator(numbers, dxtb.GFN2_XTB, **dd)
            res["gfn2"] = round(float(calc2.get_energy(positions)), 6)
        except Exception as e:  # noqa: BLE001 - GFN2 not implemented in this version: printed
            res["gfn2"] = type(e).__name__
        print(f"forces: {res}")

    def batch():
        names = ("h2o", "nh3")
        numbers = pack([mol(n)[0] for n in names])
        positions = pack([mol(n)[1] for n in names])
        calc = dxtb.Calculator(numbers, dxtb.GFN1_XTB, opts={"batch_mode": 1}, **dd)
        e = calc.get_energy(positions)
        res = {"energies": [round(v, 6) for v in e.tolist()]}
        guarded(res, "charges", lambda: calc.get_charges(positions).abs())
        print(f"batch: {res}")

    def relax():
        numbers, positions = mol("h2o")
        positions = positions + 0.1 * torch.randn(positions.shape, generator=torch.Generator().manual_seed(0),
                                                  dtype=torch.float64).to(dev)
        pos = positions.clone().requires_grad_(True)
        opt = torch.optim.SGD([pos], lr=0.3)
        calc = dxtb.Calculator(numbers, dxtb.GFN1_XTB, **dd)
        for _ in range(4):
            opt.zero_grad()
            energy = calc.get_energy(pos)
            energy.backward()
            opt.step()
            calc.reset()
        print(f"relax: energy {energy.item():.6f}, max grad {pos.grad.abs().max().item():.2e}")
    return {"single": single, "forces": forces, "batch": batch, "relax": relax}


# -- fft-conv-pytorch: the README's `fft_conv(signal, kernel, bias=, padding=, stride=, dilation=, groups=)` against
#    the direct convolution for 1-, 2- and 3-D signals, and networks of `FFTConv1d` / `FFTConv2d` / `FFTConv3d`
#    layers trained a few steps -----------------------------------------------------------------------------------

def fftconv_nets(dev):
    from fft_conv_pytorch import FFTConv1d, FFTConv2d, FFTConv3d, fft_conv

    def functional():
        g = torch.Generator().manual_seed(0)
        res = {}
        for ndim, conv in ((1, F.conv1d), (2, F.conv2d), (3, F.conv3d)):
            size = (2, 4) + (24,) * ndim if ndim < 3 else (2, 4) + (12,) * ndim
            sig = torch.randn(size, generator=g).to(dev)
            for padding, stride, dilation, groups in ((0, 1, 1, 1), (2, 2, 1, 2), (1, 1, 2, 4)):
                ker = torch.randn((8, 4 // groups) + (5,) * ndim, generator=g).to(dev)
                bias = torch.randn(8, generator=g).to(dev)
                out = fft_conv(sig, ker, bias=bias, padding=padding, stride=stride, dilation=dilation, groups=groups)
                ref = conv(sig, ker, bias=bias, padding=padding, stride=stride, dilation=dilation, groups=groups)
                res[f"{ndim}d/{padding}{stride}{dilation}{groups}"] = round(float((out - ref).abs().max()), 5)
        print(f"functional: {res}")

    def train():
        x, y = _classes(64, d=8 * 32, k=3, seed=1)
        x2 = x.view(64, 8, 32).to(dev)
        y = y.to(dev)
        res = {}
        torch.manual_seed(0)
        net1 = nn.Sequential(FFTConv1d(8, 16, 7, padding=3), nn.ReLU(), FFTConv1d(16, 16, 5, padding=2, stride=2),
                             nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(), nn.Linear(16, 3)).to(dev)
        img = x.view(64, 1, 16, 16).to(dev)
        net2 = nn.Sequential(FFTConv2d(1, 8, 5, padding=2), nn.ReLU(), FFTConv2d(8, 8, 3, padding="same"),
                             nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3)).to(dev)
        vol = F.interpolate(img, size=(8, 8)).unsqueeze(1).expand(-1, 1, 4, -1, -1).contiguous()
        net3 = nn.Sequential(FFTConv3d(1, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool3d(1), nn.Flatten(),
                             nn.Linear(4, 3)).to(dev)
        for name, net, inp in (("1d", net1, x2), ("2d", net2, img), ("3d", net3, vol)):
            opt = torch.optim.Adam(net.parameters(), lr=3e-3)
            for _ in range(8):
                loss = F.cross_entropy(net(inp), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            res[name] = round(loss.item(), 4)
        print(f"train: {res}")
    return {"functional": functional, "train": train}


# -- focal-frequency-loss: the README's `FocalFrequencyLoss(loss_weight=, alpha=)`, `ffl(fake, real)` added to a
#    pixel loss while training a small convolutional autoencoder on synthetic images, with its options
#    (`patch_factor`, `ave_spectrum`, `log_matrix`, `batch_matrix`) and a given spectrum weight `matrix` ------------

def ffl_autoencoder(dev):
    from focal_frequency_loss import FocalFrequencyLoss

    def images(n=16, seed=0):
        g = torch.Generator().manual_seed(seed)
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, 32), torch.linspace(-1, 1, 32), indexing="ij")
        freq = torch.randint(1, 6, (n, 3, 1, 1), generator=g).float()
        return (torch.sin(freq * 3.14 * xx) * torch.cos(freq * 3.14 * yy) +
                0.1 * torch.randn(n, 3, 32, 32, generator=g)).to(dev)

    def ae():
        return nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU(), nn.Conv2d(16, 32, 3, 2, 1), nn.ReLU(),
                             nn.ConvTranspose2d(32, 16, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(16, 3, 4, 2, 1)).to(dev)

    def train():
        x = images()
        res = {}
        for name, kw in (("plain", {}), ("patch", {"patch_factor": 2}), ("ave", {"ave_spectrum": True}),
                         ("log", {"log_matrix": True}), ("batch", {"batch_matrix": True}),
                         ("alpha", {"alpha": 2.0, "loss_weight": 0.5})):
            torch.manual_seed(0)
            net = ae()
            ffl = FocalFrequencyLoss(**kw)
            opt = torch.optim.Adam(net.parameters(), lr=2e-3)
            for _ in range(6):
                out = net(x)
                loss = F.mse_loss(out, x) + ffl(out, x)
                opt.zero_grad()
                loss.backward()
                opt.step()
            res[name] = round(loss.item(), 5)
        print(f"train: {res}")

    def matrix():
        x = images(seed=1)
        torch.manual_seed(1)
        net = ae()
        ffl = FocalFrequencyLoss()
        weight = torch.rand(16, 1, 3, 32, 32, device=dev)
        with torch.no_grad():
            out = net(x)
        print(f"matrix: {ffl(out, x, matrix=weight).item():.5f}, {ffl(out, x).item():.5f}")
    return {"train": train, "matrix": matrix}


# -- funsor: the docs' `funsor.set_backend("torch")`, `funsor.Tensor(data, OrderedDict(i=Bint[n]))` of device
#    tensors, reductions (`reduce(ops.logaddexp, ...)`), substitution, `sum_product.sequential_sum_product` of an
#    HMM's transitions, `funsor.sum_product.sum_product` of factors, Gaussians (`Gaussian(mean=, precision=,
#    inputs=)`) joined and integrated, and `funsor.torch.distributions` of device parameters, with a parameter
#    fitted by autograd through the marginal likelihood ------------------------------------------------------------

def funsor_factors(dev):
    import funsor
    funsor.set_backend("torch")
    import funsor.ops as ops
    from funsor import Bint, Real, Reals, Tensor, Variable
    from funsor.sum_product import sequential_sum_product, sum_product

    def hmm():
        g = torch.Generator().manual_seed(0)
        T, S = 30, 4
        trans_logits = torch.randn(S, S, generator=g).to(dev).requires_grad_(True)
        emit = torch.randn(T, S, generator=g).to(dev)
        opt = torch.optim.Adam([trans_logits], lr=0.05)
        for _ in range(6):
            trans = Tensor(trans_logits.log_softmax(-1), OrderedDict(prev=Bint[S], curr=Bint[S]))
            obs = Tensor(emit, OrderedDict(time=Bint[T], curr=Bint[S]))
            factor = trans + obs
            time = Variable("time", Bint[T])
            chain = sequential_sum_product(ops.logaddexp, ops.add, factor, time, {"prev": "curr"})
            logz = chain.reduce(ops.logaddexp)
            loss = -logz.data
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"hmm: log Z {logz.data.item():.4f}")

    def factors():
        g = torch.Generator().manual_seed(1)
        fs = [Tensor(torch.randn(3, 4, generator=g).to(dev), OrderedDict(a=Bint[3], b=Bint[4])),
              Tensor(torch.randn(4, 5, generator=g).to(dev), OrderedDict(b=Bint[4], c=Bint[5])),
              Tensor(torch.randn(5, 3, generator=g).to(dev), OrderedDict(c=Bint[5], a=Bint[3]))]
        z = sum_product(ops.logaddexp, ops.add, fs, eliminate=frozenset({"a", "b", "c"}), plates=frozenset())
        x = fs[0](a=1)
        y = fs[1].reduce(ops.max, "c")
        am = fs[1].reduce(ops.logaddexp, "b")
        print(f"factors: {z.data.item():.4f}, {tuple(x.data.shape)}, {tuple(y.data.shape)}, "
              f"{tuple(am.data.shape)}")

    def gaussians():
        from funsor.gaussian import Gaussian
        g = torch.Generator().manual_seed(2)
        res = {}
        a = torch.randn(3, 3, generator=g)
        prec = (a @ a.T + 3 * torch.eye(3)).to(dev)
        mean = torch.randn(3, generator=g).to(dev)
        gx = Gaussian(mean=mean, precision=prec, inputs=OrderedDict(x=Reals[3]))
        res["norm"] = round(float(gx.reduce(ops.logaddexp, "x").data), 4)
        pt = gx(x=torch.zeros(3, device=dev))
        res["at0"] = round(float(pt.data), 4)
        batch = Gaussian(mean=mean.expand(4, 3), precision=prec.expand(4, 3, 3),
                         inputs=OrderedDict(i=Bint[4], x=Reals[3]))
        res["batch"] = round(float(batch.reduce(ops.logaddexp).data), 4)
        joint = gx + Gaussian(mean=torch.zeros(3, device=dev), precision=torch.eye(3, device=dev),
                              inputs=OrderedDict(x=Reals[3]))
        res["joint"] = round(float(joint.reduce(ops.logaddexp, "x").data), 4)
        print(f"gaussians: {res}")

    def distributions():
        import funsor.torch.distributions as fd
        g = torch.Generator().manual_seed(3)
        data = (2.0 + 0.5 * torch.randn(100, generator=g)).to(dev)
        loc = torch.zeros((), device=dev, requires_grad=True)
        log_scale = torch.zeros((), device=dev, requires_grad=True)
        opt = torch.optim.Adam([loc, log_scale], lr=0.1)
        obs = Tensor(data, OrderedDict(n=Bint[100]))
        for _ in range(10):
            d = fd.Normal(loc, log_scale.exp(), value=obs)
            ll = d.reduce(ops.add, "n")
            loss = -ll.data
            opt.zero_grad()
            loss.backward()
            opt.step()
        try:
            cat = fd.Categorical(probs=torch.softmax(torch.randn(4, generator=g), 0).to(dev), value="z")
            margin = round(float(cat.reduce(ops.logaddexp, "z").data), 4)
        except RuntimeError as e:  # a device mismatch inside the library: printed
            margin = f"RuntimeError: {str(e)[:60]}"
        print(f"distributions: loc {loc.item():.3f}, scale {log_scale.exp().item():.3f}, "
              f"categorical {margin}, real {Real}")
    return {"hmm": hmm, "factors": factors, "gaussians": gaussians, "distributions": distributions}


# -- gateloop-transformer: the README's `Transformer(num_tokens=, dim=, depth=, ...)` language model trained with
#    `return_loss=True` on synthetic token sequences, in its variants (`use_gate_looped_attn=False`,
#    `data_dependent_rel_pos=True`, the complex and state-transition ablations), and `SimpleGateLoopLayer` ----------

def gateloop_lm(dev):
    from gateloop_transformer import SimpleGateLoopLayer, Transformer

    def tokens(n=8, t=64, seed=0):
        g = torch.Generator().manual_seed(seed)
        base = torch.randint(0, 64, (n, 1), generator=g)
        return ((base + torch.arange(t)[None] * torch.randint(1, 4, (n, 1), generator=g)) % 64).to(dev)

    def train():
        seq = tokens()
        res = {}
        for name, kw in (("gateloop", {}), ("attn", {"use_gate_looped_attn": False}),
                         ("relpos", {"data_dependent_rel_pos": True}), ("nocomplex", {"ablate_complex": True}),
                         ("nostate", {"ablate_state_transition": True})):
            torch.manual_seed(0)
            net = Transformer(num_tokens=64, dim=64, depth=2, dim_head=16, heads=4, **kw).to(dev)
            opt = torch.optim.Adam(net.parameters(), lr=1e-3)
            for _ in range(5):
                loss = net(seq, return_loss=True)
                opt.zero_grad()
                loss.backward()
                opt.step()
            res[name] = round(loss.item(), 4)
        print(f"train: {res}")

    def layer():
        torch.manual_seed(1)
        lay = SimpleGateLoopLayer(dim=32).to(dev)
        x = torch.randn(4, 128, 32, device=dev)
        out = lay(x)
        print(f"layer: {tuple(out.shape)}, {out.norm().item():.4f}")
    return {"train": train, "layer": layer}


# -- iTransformer: the README's `iTransformer(num_variates=, lookback_len=, dim=, depth=, heads=, dim_head=,
#    pred_length=(...), use_reversible_instance_norm=)` trained on synthetic multivariate series by the loss it
#    returns given `targets`, `iTransformer2D` and `iTransformerFFT` the same way, and `RevIN` ----------------------

def itransformer_forecast(dev):
    from iTransformer import RevIN, iTransformer, iTransformer2D, iTransformerFFT

    def series(n=16, v=7, t=96 + 24, seed=0):
        g = torch.Generator().manual_seed(seed)
        time = torch.arange(t).float()
        freq = torch.rand(n, v, 1, generator=g) * 0.3 + 0.05
        phase = torch.rand(n, v, 1, generator=g) * 6.28
        x = torch.sin(freq * time + phase) + 0.1 * torch.randn(n, v, t, generator=g)
        x = x.transpose(1, 2).contiguous().to(dev)  # (batch, time, variates)
        return x[:, :96], x[:, 96:]

    def fit(net, x, y, lengths, steps=5):
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        targets = tuple(y[:, :k] for k in lengths)
        for _ in range(steps):
            loss = net(x, targets=targets if len(targets) > 1 else targets[0])
            opt.zero_grad()
            loss.backward()
            opt.step()
        net.eval()
        with torch.no_grad():
            preds = net(x)
        net.train()
        return round(loss.item(), 4), sorted(preds) if isinstance(preds, dict) else type(preds).__name__

    def train():
        x, y = series()
        res = {}
        for name, cls, kw in (("plain", iTransformer, {}), ("revin", iTransformer, {"use_reversible_instance_norm": True}),  # noqa: E501
                              ("tokens", iTransformer, {"num_tokens_per_variate": 2}),
                              ("fft", iTransformerFFT, {})):
            torch.manual_seed(0)
            try:
                net = cls(num_variates=7, lookback_len=96, dim=64, depth=2, heads=4, dim_head=16,
                          pred_length=(12, 24), flash_attn=False, **kw).to(dev)
                res[name] = fit(net, x, y, (12, 24))
            except TypeError as e:  # a variant whose signature differs: printed
                res[name] = f"TypeError: {e}"
        print(f"train: {res}")

    def two_d():
        x, y = series(seed=1)
        torch.manual_seed(1)
        try:
            net = iTransformer2D(num_variates=7, lookback_len=96, num_time_tokens=16, dim=64, depth=2, heads=4,
                                 dim_head=16, pred_length=(24,), flash_attn=False).to(dev)
            res = fit(net, x, y, (24,))
        except TypeError as e:
            res = f"TypeError: {e}"
        norm = RevIN(7).to(dev)
        normed, reverse = norm(x.transpose(1, 2))
        back = reverse(normed)
        print(f"2d: {res}, revin {float((back - x.transpose(1, 2)).abs().max()):.2e}")
    return {"train": train, "two_d": two_d}


# -- linformer: the README's `LinformerLM(num_tokens=, dim=, seq_len=, depth=, heads=, k=, one_kv_head=,
#    share_kv=, reversible=)` trained as a language model on synthetic sequences, `Linformer` encoders and a
#    `LinformerSelfAttention` with and without a context ------------------------------------------------------------

def linformer_lm(dev):
    from linformer import Linformer, LinformerLM, LinformerSelfAttention

    def train():
        g = torch.Generator().manual_seed(0)
        seq = torch.randint(0, 100, (8, 129), generator=g).to(dev)
        res = {}
        for name, kw in (("plain", {}), ("one_kv", {"one_kv_head": True}), ("share", {"share_kv": True}),
                         ("rev", {"reversible": True})):
            torch.manual_seed(0)
            net = LinformerLM(num_tokens=100, dim=64, seq_len=128, depth=2, heads=4, k=32, **kw).to(dev)
            opt = torch.optim.Adam(net.parameters(), lr=1e-3)
            for _ in range(5):
                logits = net(seq[:, :-1])
                loss = F.cross_entropy(logits.reshape(-1, 100), seq[:, 1:].reshape(-1))
                opt.zero_grad()
                loss.backward()
                opt.step()
            res[name] = round(loss.item(), 4)
        print(f"train: {res}")

    def encoder():
        torch.manual_seed(1)
        x, y = _classes(32 * 64, d=32, k=2, seed=1)
        x = x.view(32, 64, 32).to(dev)
        y = y.view(32, 64)[:, 0].to(dev)
        enc = Linformer(dim=32, seq_len=64, depth=2, heads=4, k=16).to(dev)
        head = nn.Linear(32, 2).to(dev)
        opt = torch.optim.Adam(list(enc.parameters()) + list(head.parameters()), lr=1e-3)
        for _ in range(6):
            loss = F.cross_entropy(head(enc(x).mean(1)), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        attn = LinformerSelfAttention(dim=32, seq_len=64, heads=4, k=16).to(dev)
        ctx = torch.randn(32, 64, 32, device=dev)
        print(f"encoder: {loss.item():.4f}, self {attn(x).norm().item():.3f}, context {attn(x, context=ctx).norm().item():.3f}")  # noqa: E501
    return {"train": train, "encoder": encoder}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

@contextlib.contextmanager
def _fake_cifar(n=2048):
    """torchvision's `CIFAR10` answered by `FakeData` of CIFAR-10's shape (no download, no files)."""
    import torchvision.datasets as dset
    saved = dset.CIFAR10

    def fake(root=None, train=True, download=False, transform=None, target_transform=None, **kw):
        return dset.FakeData(size=n if train else n // 4, image_size=(3, 32, 32), num_classes=10,
                             transform=transform, target_transform=target_transform, random_offset=0 if train else 1)
    dset.CIFAR10 = fake
    try:
        yield
    finally:
        dset.CIFAR10 = saved


def wgan_clip(dev):
    """martinarjovsky/WassersteinGAN's main.py as is (`--dataset cifar10 --imageSize 32 --batchSize 64 --workers 0
    --niter 1`, `--cuda` on the GPU): its DCGAN critic trained with weight clipping against its DCGAN generator, on
    synthetic CIFAR-10 (torchvision's `CIFAR10` answered by `FakeData`), from a copy of the repository
    (`transforms.Scale`, the old name of `Resize` that its data pipeline calls and torchvision dropped, is restored as
    that alias where absent, and so is the data-loader iterator's `.next()`, the old name of `__next__` that its
    loop calls). The window
    spans the 2nd to the 205th `backward` (the first generator iteration's 100 critic steps, two `backward` each,
    the generator's step, its console line and the next iteration's first critic steps)."""
    root = _need_repo("wgan")

    def window():
        exp = root / "samples"
        exp.mkdir(exist_ok=True)
        args = ["--dataset", "cifar10", "--dataroot", str(root / "data"), "--imageSize", "32", "--batchSize", "64",
                "--workers", "0", "--niter", "1", "--experiment", str(exp)]
        if dev.type == "cuda":
            args.append("--cuda")
        import torchvision.transforms as transforms
        from torch.utils.data.dataloader import _BaseDataLoaderIter
        alias = not hasattr(transforms, "Scale")
        if alias:  # `Scale`, the old name of `Resize` its data pipeline calls, is gone from torchvision
            transforms.Scale = transforms.Resize
        next_alias = not hasattr(_BaseDataLoaderIter, "next")
        if next_alias:  # the iterator's `.next()`, which its loop calls, is gone from torch
            _BaseDataLoaderIter.next = _BaseDataLoaderIter.__next__
        try:
            with _fake_cifar(16384), hc.window_on(torch.Tensor, "backward", "wgan.clip", "train", dev, 2, 205,
                                             stop_script=True):
                hc.run_script(root / "main.py", args, str(root))
        finally:
            if alias:
                del transforms.Scale
            if next_alias:
                del _BaseDataLoaderIter.next
    return {"train_window": window}


class _tensorflow_stub:
    """`tensorflow` (its `tf.summary` writer, which pytorch-wgan's logger uses) answered by a stub whose calls do
    nothing, so that the script needs no tensorflow and writes no event files."""

    def __enter__(self):
        class _Writer:
            def flush(self):
                pass

            @contextlib.contextmanager
            def as_default(self):
                yield self

        stub = types.ModuleType("tensorflow")
        stub.__spec__ = importlib.machinery.ModuleSpec("tensorflow", None)  # for libraries that look it up
        stub.summary = types.SimpleNamespace(create_file_writer=lambda *a, **k: _Writer(),
                                             scalar=lambda *a, **k: None, image=lambda *a, **k: None,
                                             histogram=lambda *a, **k: None)
        self.saved = sys.modules.get("tensorflow")
        sys.modules["tensorflow"] = stub
        return self

    def __exit__(self, *exc):
        if self.saved is None:
            sys.modules.pop("tensorflow", None)
        else:
            sys.modules["tensorflow"] = self.saved


def pwgan_models(dev):
    """Zeleni9/pytorch-wgan's main.py as is (`--model WGAN-GP|WGAN-CP|DCGAN --dataset cifar --batch_size 64
    --generator_iters 40 --epochs 4`, `--cuda True` on the GPU) on synthetic CIFAR-10 (torchvision's `CIFAR10` as
    `FakeData`), from a copy of the repository (its logger's `tensorflow` answered by a stub; it saves its models
    and sample images into the copy). Its main.py compares `args.is_train`, which its `check_args` has already
    turned into a boolean, with the string 'True', so that training never starts: the copy's `parse_args` is
    wrapped to hand the string back. The window spans the 2nd to the 40th `backward` of each model's loop
    (critic and generator steps, their console lines, the first saving of samples and logs)."""
    root = _need_repo("pwgan")

    def run(model):
        def window():
            args = ["--model", model, "--dataroot", str(root / "data"), "--dataset", "cifar", "--batch_size", "64",
                    "--generator_iters", "40", "--epochs", "4", "--cuda", "True" if dev.type == "cuda" else "False"]
            saved = [k for k in sys.modules if k == "models" or k.startswith("models.") or k == "utils"
                     or k.startswith("utils.")]
            stash = {k: sys.modules.pop(k) for k in saved}
            sys.path.insert(0, str(root))
            try:
                import utils.config as config  # the copy's own
                parse = config.parse_args

                def parse_args():  # its main.py compares the converted boolean with the string 'True'
                    args = parse()
                    args.is_train = "True" if args.is_train else "False"
                    return args
                config.parse_args = parse_args
                with _tensorflow_stub(), _fake_cifar(1024), hc.window_on(torch.Tensor, "backward", "pwgan.models",
                                                                         model, dev, 2, 40, stop_script=True):
                    hc.run_script(root / "main.py", args, str(root))
            finally:
                sys.path.remove(str(root))
                for k in [k for k in sys.modules if k == "models" or k.startswith("models.") or k == "utils"
                          or k.startswith("utils.")]:
                    sys.modules.pop(k, None)
                sys.modules.update(stash)
        return window
    return {"wgan_gp": run("WGAN-GP"), "wgan_cp": run("WGAN-CP"), "dcgan": run("DCGAN")}


MODELS = [
    # name, package, builder
    ("dhg.hypergraphs", "dhg", dhg_hypergraphs),
    ("dxtb.tb", "dxtb", dxtb_tb),
    ("fft_conv_pytorch.nets", "fft_conv_pytorch", fftconv_nets),
    ("focal_frequency_loss.ae", "focal_frequency_loss", ffl_autoencoder),
    ("funsor.factors", "funsor", funsor_factors),
    ("gateloop_transformer.lm", "gateloop_transformer", gateloop_lm),
    ("iTransformer.forecast", "iTransformer", itransformer_forecast),
    ("linformer.lm", "linformer", linformer_lm),
    ("wgan.clip", "wgan", wgan_clip),
    ("pwgan.models", "pwgan", pwgan_models),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh30", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
