"""Record the syncs of a thirty-third set, `fresh32` (a sealed test set): libraries and training code nobody here read.

`fresh32` is recorded the same way as `fresh9` to `fresh31` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; ksom's `SOM(..., device=)`, lsuv's
`lsuv_with_singlebatch(..., device=)`, betty's `ImplicitProblem(..., device=)`, learnergy's `use_gpu=`,
kronfluence's `Analyzer(cpu=)` and LTNtorch's `ltn.device` choose the device the library puts its tensors on): no
workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh32), names a to l: betty (betty-ml:
  multilevel optimisation and meta-learning, hypergradients by DARTS, Neumann series and conjugate gradient),
  kronfluence (influence functions with EKFAC / KFAC / diagonal / identity factors; + einconv), ksom (self-organising
  maps: SOM, WSOM, MCWSOM), learnergy (energy-based models: Bernoulli, Gaussian and dropout RBMs, deep belief
  networks), lovely_tensors (lovely-tensors: tensor summaries and statistics; + lovely-numpy, fastcore), lsuv
  (layer-sequential unit-variance initialisation) and ltn (LTNtorch: logic tensor networks). Their other needs
  (numpy, scipy, matplotlib, tqdm, accelerate, safetensors, einops, opt_einsum, torchmetrics, scikit-image, pillow,
  torchvision) are on the GPU machine. An eighth library, dagma (DAG structure learning, its nonlinear
  `DagmaMLP` / `DagmaNonlinear`), was removed after failing in its GPU warm-up (its model keeps an identity matrix
  that `.to(device)` does not move: `h_func` mixes cuda:0 and cpu); the device time allowed no call to record a
  replacement.
- Two training repositories at pinned commits, copied by `prepare` into .bench/fresh32/repos/<name>:
  TeaPearce/Conditional_Diffusion_MNIST (script.py as is: a classifier-free guided conditional DDPM on a context
  U-Net, with its guided sampling, on synthetic MNIST) and w86763777/pytorch-ddpm (main.py as is with its CIFAR-10
  flag file: DDPM training with EMA, warm-up and gradient clipping, and its periodic sampling, on synthetic CIFAR-10;
  + tensorboardX, carried). Both run on their own `cuda:0`; the CPU smoke run maps that device to the CPU.

    python benchmarks/fresh32_collect.py prepare        # here, with network: wheels, repos and code copies
    python benchmarks/fresh32_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh32 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh32 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh_collect as fc
import heldout_collect as hc
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
BENCH_DIR = ac.REPO / ".bench" / "fresh32"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh32", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh32/repos/<name>)
REPOS = {
    "cddpm": ("TeaPearce/Conditional_Diffusion_MNIST", "657b49854bbf844caa5580177243ae607c79339f", ["script.py"]),
    "ddpm": ("w86763777/pytorch-ddpm", "f804ccbd58a758b07f79a3b9ecdfb1beb67258f6",
             ["main.py", "diffusion.py", "model.py", "config", "score"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["betty-ml==0.1.1", "kronfluence==1.0.1", "einconv==0.1.0",
          "ksom==0.10.0", "learnergy==2.0.2", "lovely-tensors==0.1.22", "lovely-numpy==0.2.24", "fastcore==2.2.41",
          "lsuv==0.3.0", "LTNtorch==1.0.2", "tensorboardX==2.6.4"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"betty": "betty-ml", "kronfluence": "kronfluence", "ksom": "ksom",
         "learnergy": "learnergy", "lovely_tensors": "lovely-tensors", "lsuv": "lsuv", "ltn": "LTNtorch",
         "lovely_numpy": "lovely-numpy", "einconv": "einconv", "accelerate": "accelerate",
         "numpy": "numpy", "scipy": "scipy", "torchvision": "torchvision", "tensorboardX": "tensorboardX"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh32/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh32_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _classes(n, d=20, k=4, seed=0):
    """n points of k Gaussian classes in d dimensions (CPU tensors): features, labels."""
    g = torch.Generator().manual_seed(seed)
    centres = 2.0 * torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    return centres[y] + torch.randn(n, d, generator=g), y


def _mlp(d_in, d_out, hidden=32):
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, d_out))


# ============================================================================================
# Libraries
# ============================================================================================

# -- betty (betty-ml): the README's recipe, each level an `ImplicitProblem` (`name=`, `module=`, `optimizer=`,
#    `train_data_loader=`, `config=Config(type=..., unroll_steps=...)`, `device=`) with its `training_step`, the levels
#    tied by an `Engine(problems=, dependencies={'u2l': ..., 'l2u': ...}, config=EngineConfig(train_iters=,
#    valid_step=))` and `engine.run()`: data reweighting (a meta-network weighting each example's loss, on noisy
#    labels) and hyperparameter optimisation (a learnable weight decay), by DARTS, Neumann-series and
#    conjugate-gradient hypergradients, and a global validation in an `Engine` subclass ---------------------------

def betty_mlo(dev):
    from betty.configs import Config, EngineConfig
    from betty.engine import Engine
    from betty.problems import ImplicitProblem

    def loaders(seed=0):
        x, y = _classes(512, d=16, k=4, seed=seed)
        g = torch.Generator().manual_seed(seed)
        noisy = torch.where(torch.rand(512, generator=g) < 0.3, torch.randint(0, 4, (512,), generator=g), y)
        xm, ym = _classes(128, d=16, k=4, seed=seed)  # the clean meta set, same class centres
        train = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, noisy), batch_size=64, shuffle=True)
        meta = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xm, ym), batch_size=64, shuffle=True)
        return train, meta

    def reweight(hg_type):
        def run():
            torch.manual_seed(0)
            train, meta = loaders()

            class Inner(ImplicitProblem):
                def training_step(self, batch):
                    x, y = batch[0].to(dev), batch[1].to(dev)
                    loss = F.cross_entropy(self.module(x), y, reduction="none")
                    w = self.reweight(loss.detach().unsqueeze(1))
                    return (w.squeeze(1) * loss).mean()

            class Outer(ImplicitProblem):
                def training_step(self, batch):
                    x, y = batch[0].to(dev), batch[1].to(dev)
                    return F.cross_entropy(self.inner(x), y)

            class ReweightEngine(Engine):
                @torch.no_grad()
                def validation(self):
                    x, y = _classes(256, d=16, k=4, seed=0)
                    x, y = x.to(dev), y.to(dev)
                    acc = (self.inner(x).argmax(1) == y).float().mean()
                    return {"acc": acc.item()}

            net = _mlp(16, 4).to(dev)
            wnet = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid()).to(dev)
            inner = Inner(name="inner", module=net, optimizer=torch.optim.SGD(net.parameters(), lr=0.1),
                          train_data_loader=train, config=Config(type=hg_type, unroll_steps=1), device=dev)
            outer = Outer(name="reweight", module=wnet, optimizer=torch.optim.Adam(wnet.parameters(), lr=1e-3),
                          train_data_loader=meta, config=Config(type=hg_type, unroll_steps=1, log_step=5), device=dev)
            engine = ReweightEngine(problems=[inner, outer], dependencies={"u2l": {outer: [inner]},
                                                                          "l2u": {inner: [outer]}},
                                    config=EngineConfig(train_iters=12, valid_step=6))
            engine.run()
            print(f"reweight/{hg_type}: done")
        return run

    def hpo():
        torch.manual_seed(1)
        train, meta = loaders(seed=1)

        class WeightDecay(nn.Module):
            def __init__(self):
                super().__init__()
                self.log_wd = nn.Parameter(torch.tensor(-4.0))

            def forward(self):
                return self.log_wd.exp()

        class Classifier(ImplicitProblem):
            def training_step(self, batch):
                x, y = batch[0].to(dev), batch[1].to(dev)
                loss = F.cross_entropy(self.module(x), y)
                wd = self.hpo()
                return loss + wd * sum(p.norm().pow(2) for p in self.module.parameters())

        class HPO(ImplicitProblem):
            def training_step(self, batch):
                x, y = batch[0].to(dev), batch[1].to(dev)
                return F.cross_entropy(self.classifier(x), y)

        net, wd = _mlp(16, 4).to(dev), WeightDecay().to(dev)
        cls = Classifier(name="classifier", module=net, optimizer=torch.optim.SGD(net.parameters(), lr=0.1),
                         train_data_loader=train, config=Config(type="cg", cg_iterations=3, unroll_steps=2),
                         device=dev)
        hp = HPO(name="hpo", module=wd, optimizer=torch.optim.Adam(wd.parameters(), lr=1e-2),
                 train_data_loader=meta, config=Config(type="cg", cg_iterations=3), device=dev)
        engine = Engine(problems=[cls, hp], dependencies={"u2l": {hp: [cls]}, "l2u": {cls: [hp]}},
                        config=EngineConfig(train_iters=12))
        engine.run()
        print(f"hpo: weight decay {wd().item():.5f}")
    return {"darts": reweight("darts"), "neumann": reweight("neumann"), "hpo_cg": hpo}


# -- kronfluence: the README's recipe, a `Task` (`compute_train_loss(batch, model, sample)` sampling labels from
#    the model's outputs for the true Fisher, `compute_measurement(batch, model)` the margin of its technical
#    documentation), `prepare_model(model, task)`, `Analyzer(analysis_name=, model=, task=, cpu=, output_dir=,
#    disable_tqdm=)`, `fit_all_factors(factors_name=, dataset=, per_device_batch_size=,
#    factor_args=FactorArguments(strategy=...))` for the four strategies, and `compute_pairwise_scores` /
#    `compute_self_scores` with `load_pairwise_scores` / `load_self_scores`, on a small classifier trained on the
#    device first ------------------------------------------------------------------------------------------------

def kronfluence_influence(dev):
    from kronfluence import Analyzer, FactorArguments, ScoreArguments, Task, prepare_model

    class ClassificationTask(Task):
        def compute_train_loss(self, batch, model, sample=False):
            x, y = batch
            logits = model(x)
            if not sample:
                return F.cross_entropy(logits, y, reduction="sum")
            with torch.no_grad():
                sampled = torch.multinomial(F.softmax(logits.detach(), dim=-1), num_samples=1).flatten()
            return F.cross_entropy(logits, sampled, reduction="sum")

        def compute_measurement(self, batch, model):
            x, y = batch
            logits = model(x)
            bindex = torch.arange(logits.shape[0], device=logits.device)
            right = logits[bindex, y]
            cloned = logits.clone()
            cloned[bindex, y] = float("-inf")
            return -(right - cloned.logsumexp(dim=-1)).sum()

    def setup(seed=0):
        torch.manual_seed(seed)
        x, y = _classes(256, d=16, k=4, seed=seed)
        xq, yq = _classes(32, d=16, k=4, seed=seed)
        model = _mlp(16, 4).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        xd, yd = x.to(dev), y.to(dev)
        for _ in range(20):
            loss = F.cross_entropy(model(xd), yd)
            opt.zero_grad()
            loss.backward()
            opt.step()
        model.eval()
        task = ClassificationTask()
        model = prepare_model(model=model, task=task)
        out = tempfile.mkdtemp(prefix="fresh32-kron-")
        analyzer = Analyzer(analysis_name="blobs", model=model, task=task, cpu=dev.type != "cuda", output_dir=out,
                            disable_tqdm=True, disable_model_save=True)
        return analyzer, torch.utils.data.TensorDataset(x, y), torch.utils.data.TensorDataset(xq, yq), out

    def factors():
        analyzer, train, query, out = setup()
        res = {}
        try:
            for strategy in ("identity", "diagonal", "kfac", "ekfac"):
                analyzer.fit_all_factors(factors_name=strategy, dataset=train, per_device_batch_size=64,
                                         factor_args=FactorArguments(strategy=strategy), overwrite_output_dir=True)
                analyzer.compute_pairwise_scores(scores_name=f"pair_{strategy}", factors_name=strategy,
                                                 query_dataset=query, train_dataset=train,
                                                 per_device_query_batch_size=16, per_device_train_batch_size=64,
                                                 overwrite_output_dir=True)
                scores = analyzer.load_pairwise_scores(scores_name=f"pair_{strategy}")["all_modules"]
                res[strategy] = (tuple(scores.shape), round(float(scores.abs().mean()), 4))
        finally:
            shutil.rmtree(out, ignore_errors=True)
        print(f"factors: {res}")

    def scores():
        analyzer, train, query, out = setup(seed=1)
        try:
            analyzer.fit_all_factors(factors_name="ekfac", dataset=train, per_device_batch_size=64,
                                     overwrite_output_dir=True)
            analyzer.compute_self_scores(scores_name="self", factors_name="ekfac", train_dataset=train,
                                         per_device_train_batch_size=64, overwrite_output_dir=True)
            self_scores = analyzer.load_self_scores(scores_name="self")["all_modules"]
            analyzer.compute_pairwise_scores(scores_name="damped", factors_name="ekfac", query_dataset=query,
                                             train_dataset=train, per_device_query_batch_size=16,
                                             per_device_train_batch_size=64,
                                             score_args=ScoreArguments(damping_factor=1e-3,
                                                                       compute_per_module_scores=True),
                                             overwrite_output_dir=True)
            pair = analyzer.load_pairwise_scores(scores_name="damped")
            top = self_scores.topk(5).indices.tolist()
        finally:
            shutil.rmtree(out, ignore_errors=True)
        print(f"scores: self {tuple(self_scores.shape)} top {top}, modules {sorted(pair)}")
    return {"factors": factors, "scores": scores}


# -- ksom: the README's `SOM(xs, ys, dim, sample_init=, dist=, alpha_init=, alpha_drate=, neighborhood_fct=,
#    neighborhood_init=, neighborhood_drate=, device=)` fed shuffled batches by `add(batch)`, with the distances and
#    neighbourhood functions it exports, and `WSOM` / `MCWSOM` trained with an optimizer by `add(batch, optimizer)`,
#    on synthetic colour pixels and clustered features on the device --------------------------------------------

def ksom_maps(dev):
    from ksom import SOM, cosine_distance, euclidean_distance, nb_gaussian, nb_linear, nb_ricker
    from ksom.ksom import MCWSOM, WSOM

    def som():
        g = torch.Generator().manual_seed(0)
        x = torch.rand(4000, 3, generator=g).to(dev)
        res = {}
        for name, dist, nb in (("gauss_cos", cosine_distance, nb_gaussian), ("lin_euc", euclidean_distance, nb_linear),
                               ("ricker_euc", euclidean_distance, nb_ricker)):
            perm = torch.randperm(x.size(0), device=dev)
            samples = x[perm[:36]]
            smodel = SOM(6, 6, 3, sample_init=samples, dist=dist, alpha_init=0.01, alpha_drate=1e-7,
                         neighborhood_fct=nb, neighborhood_init=6, neighborhood_drate=0.0001, device=dev)
            for i in range(8):
                idx = perm[i * 500:(i + 1) * 500]
                d, count = smodel.add(x[idx])
            res[name] = (round(float(d), 4), int(count))
        print(f"som: {res}")

    def weighted():
        x, _ = _classes(2000, d=12, k=5, seed=2)
        x = x.to(dev)
        res = {}
        for name, cls, kw in (("wsom", WSOM, {}), ("mcwsom", MCWSOM, {"n_channels": 3, "channel_sim_loss_coef": 0.5})):
            torch.manual_seed(0)
            perm = torch.randperm(x.size(0), device=dev)
            smodel = cls(5, 5, 12, sample_init=x[perm[:25]], dist=cosine_distance, alpha_init=1e-2, alpha_drate=5e-8,
                         sparcity_coeff=1e-2, device=dev, **kw)
            optimizer = torch.optim.Adam(smodel.parameters(), lr=1e-2)
            smodel.train()
            for i in range(6):
                out = smodel.add(x[perm[i * 250:(i + 1) * 250]], optimizer)
            res[name] = tuple(round(float(v), 4) for v in out)
        print(f"weighted: {res}")
    return {"som": som, "weighted": weighted}


# -- learnergy: the README's models, `RBM(n_visible=, n_hidden=, steps=, learning_rate=, momentum=, decay=,
#    temperature=, use_gpu=)` and its Gaussian and dropout variants, `fit(dataset, batch_size=, epochs=)` on a
#    dataset of (sample, label) pairs and `reconstruct(dataset)`, and a `DBN(model=, n_visible=, n_hidden=, ...)`
#    stacked and fitted the same way, on synthetic binary and real-valued patterns ---------------------------------

def learnergy_ebm(dev):
    from learnergy.models.bernoulli import RBM, DropoutRBM
    from learnergy.models.deep import DBN
    from learnergy.models.gaussian import GaussianRBM

    gpu = dev.type == "cuda"

    def data(binary=True, n=512, d=64, seed=0):
        g = torch.Generator().manual_seed(seed)
        protos = (torch.rand(4, d, generator=g) > 0.5).float()
        y = torch.randint(0, 4, (n,), generator=g)
        x = protos[y]
        flip = torch.rand(n, d, generator=g) < 0.1
        x = torch.where(flip, 1 - x, x)
        if not binary:
            x = x + 0.2 * torch.randn(n, d, generator=g)
        return torch.utils.data.TensorDataset(x, y)

    def rbms():
        train = data()
        res = {}
        for name, model in (("rbm", RBM(n_visible=64, n_hidden=32, steps=1, learning_rate=0.1, momentum=0.5,
                                        decay=0, temperature=1, use_gpu=gpu)),
                            ("cd3", RBM(n_visible=64, n_hidden=32, steps=3, learning_rate=0.05, use_gpu=gpu)),
                            ("dropout", DropoutRBM(n_visible=64, n_hidden=32, steps=1, learning_rate=0.1,
                                                   dropout=0.5, use_gpu=gpu))):
            mse, pl = model.fit(train, batch_size=128, epochs=2)
            rec_mse, probs = model.reconstruct(train)
            res[name] = (round(float(mse), 4), round(float(pl), 4), round(float(rec_mse), 4), tuple(probs.shape))
        print(f"rbms: {res}")

    def gaussian():
        train = data(binary=False, seed=1)
        model = GaussianRBM(n_visible=64, n_hidden=32, steps=1, learning_rate=0.01, use_gpu=gpu)
        mse, pl = model.fit(train, batch_size=128, epochs=2)
        rec_mse, _ = model.reconstruct(train)
        dbn = DBN(model=("gaussian", "bernoulli"), n_visible=64, n_hidden=(32, 16), steps=(1, 1),
                  learning_rate=(0.01, 0.1), momentum=(0, 0), decay=(0, 0), temperature=(1, 1), use_gpu=gpu)
        dmse, dpl = dbn.fit(train, batch_size=128, epochs=(1, 1))
        drec, _ = dbn.reconstruct(train)
        print(f"gaussian: {float(mse):.4f} {float(pl):.4f} rec {float(rec_mse):.4f}; dbn {[round(float(v), 4) for v in dmse]} "  # noqa: E501
              f"rec {float(drec):.4f}")
    return {"rbms": rbms, "gaussian": gaussian}


# -- lovely-tensors: the README's `lovely(t)` summaries and `monkey_patch()` (a tensor's repr, `.v`, `.p`,
#    `.deeper`), `chans` and `rgb` images of activations, on model weights, activations and gradients inside a few
#    training steps and on tensors of the usual dtypes with non-finite values, all on the device -----------------

def lovely_summaries(dev):
    import lovely_tensors as lt

    def train():
        torch.manual_seed(0)
        x, y = _classes(256, d=16, k=4)
        x, y = x.to(dev), y.to(dev)
        net = _mlp(16, 4).to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=1e-2)
        lines = []
        for _ in range(4):
            loss = F.cross_entropy(net(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            for p in net.parameters():
                lines.append(lt.lovely(p.grad))
            lines.append(lt.lovely(net[0](x)))
        print(f"train: {len(lines)} summaries; {lines[-1]}")

    def tensors():
        lt.monkey_patch()
        g = torch.Generator().manual_seed(1)
        base = torch.randn(3, 32, 32, generator=g)
        ts = {"f32": base.to(dev), "f16": base.half().to(dev), "i64": torch.randint(0, 9, (50,), generator=g).to(dev),
              "bool": (base > 0).to(dev), "scalar": torch.tensor(3.5).to(dev)}
        bad = base.clone()
        bad[0, 0, :4] = torch.tensor([float("nan"), float("inf"), -float("inf"), 0.0])
        ts["nonfinite"] = bad.to(dev)
        out = {k: repr(t) for k, t in ts.items()}
        out["deeper"] = repr(ts["f32"].deeper)
        out["v"] = repr(ts["f32"].v)[:40]
        img = (base * 0.5 + 0.5).to(dev)
        rgb = lt.rgb(img)
        chans = lt.chans(torch.randn(8, 16, 16, generator=g).to(dev))
        print(f"tensors: {len(out)} reprs, rgb {type(rgb).__name__}, chans {type(chans).__name__}")
    return {"train": train, "tensors": tensors}


# -- lsuv: the README's `lsuv_with_singlebatch(model, batch, device=)` and `lsuv_with_dataloader(model, dataloader,
#    device=)` (`needed_std=`, `std_tol=`, `max_attempts=`, `do_orthonorm=`) on a MLP, a small CNN and a transformer
#    encoder with `nn.MultiheadAttention`, each then trained a few steps on the device ------------------------------

def lsuv_init(dev):
    from lsuv import lsuv_with_dataloader, lsuv_with_singlebatch

    def fit(model, x, y, steps=5):
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        for _ in range(steps):
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return round(loss.item(), 4)

    def mlp_cnn():
        torch.manual_seed(0)
        x, y = _classes(256, d=64, k=4)
        x, y = x.to(dev), y.to(dev)
        mlp = nn.Sequential(nn.Linear(64, 128), nn.Tanh(), nn.Linear(128, 128), nn.Tanh(), nn.Linear(128, 4)).to(dev)
        mlp = lsuv_with_singlebatch(mlp, x, device=dev, verbose=False)
        res = {"mlp": fit(mlp, x, y)}
        imgs = x.view(256, 1, 8, 8)
        cnn = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                            nn.Flatten(), nn.Linear(32 * 64, 4)).to(dev)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(imgs, y), batch_size=64)
        cnn = lsuv_with_dataloader(cnn, loader, get_input=lambda b: b[0], device=dev, needed_std=1.0, std_tol=0.05,
                                   max_attempts=20, verbose=False)
        res["cnn"] = fit(cnn, imgs, y)
        print(f"mlp_cnn: {res}")

    def attention():
        torch.manual_seed(1)

        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Linear(8, 32)
                self.attn = nn.MultiheadAttention(32, 4, batch_first=True)
                self.ff = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 32))
                self.head = nn.Linear(32, 4)

            def forward(self, x):
                h = self.emb(x)
                h = h + self.attn(h, h, h, need_weights=False)[0]
                h = h + self.ff(h)
                return self.head(h.mean(1))

        x, y = _classes(128 * 10, d=8, k=4, seed=1)
        x, y = x.view(128, 10, 8).to(dev), y.view(128, 10)[:, 0].to(dev)
        enc = Encoder().to(dev)
        enc = lsuv_with_singlebatch(enc, x, device=dev, do_orthonorm=False, verbose=False)
        print(f"attention: {fit(enc, x, y)}")
    return {"mlp_cnn": mlp_cnn, "attention": attention}


# -- LTNtorch: the tutorials' recipe with `ltn.device` set to the device: `ltn.Predicate(model)`,
#    `ltn.Variable(name, tensor)`, `ltn.Constant(tensor)`, connectives (`NotStandard`, `AndProd`,
#    `ImpliesReichenbach`) and quantifiers (`AggregPMeanError` for all, `AggregPMean` for exists) aggregated by
#    `SatAgg`, `ltn.diag` for labelled examples: binary classification, multi-class classification with label
#    constants and a clustering knowledge base, trained by `1 - sat` ----------------------------------------------

def ltn_logic(dev):
    import ltn

    ltn.device = dev
    Not = ltn.Connective(ltn.fuzzy_ops.NotStandard())
    And = ltn.Connective(ltn.fuzzy_ops.AndProd())
    Implies = ltn.Connective(ltn.fuzzy_ops.ImpliesReichenbach())
    Forall = ltn.Quantifier(ltn.fuzzy_ops.AggregPMeanError(p=2), quantifier="f")
    Exists = ltn.Quantifier(ltn.fuzzy_ops.AggregPMean(p=6), quantifier="e")
    SatAgg = ltn.fuzzy_ops.SatAgg()

    class Logits(nn.Module):
        def __init__(self, d, k):
            super().__init__()
            self.net = _mlp(d, k)

        def forward(self, x, label):
            return (torch.softmax(self.net(x), dim=-1) * label).sum(dim=1)

    class Binary(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.net = _mlp(d, 1)

        def forward(self, x):
            return torch.sigmoid(self.net(x)).squeeze(-1)

    def binary():
        torch.manual_seed(0)
        x, y = _classes(200, d=2, k=2)
        x, y = x.to(dev), y.to(dev)
        A = ltn.Predicate(Binary(2).to(dev))
        opt = torch.optim.Adam(A.parameters(), lr=1e-3)
        for _ in range(15):
            x_A = ltn.Variable("x_A", x[y == 0])
            x_B = ltn.Variable("x_B", x[y == 1])
            sat = SatAgg(Forall(x_A, A(x_A)), Forall(x_B, Not(A(x_B))))
            loss = 1.0 - sat
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"binary: sat {sat.item():.4f}")

    def multiclass():
        torch.manual_seed(1)
        x, y = _classes(300, d=4, k=3, seed=1)
        x, y = x.to(dev), y.to(dev)
        P = ltn.Predicate(Logits(4, 3).to(dev))
        labels = [ltn.Constant(torch.eye(3)[i].to(dev)) for i in range(3)]
        opt = torch.optim.Adam(P.parameters(), lr=1e-3)
        for _ in range(15):
            xs = [ltn.Variable(f"x_{i}", x[y == i]) for i in range(3)]
            sat = SatAgg(*[Forall(xs[i], P(xs[i], labels[i])) for i in range(3)])
            opt.zero_grad()
            (1.0 - sat).backward()
            opt.step()
        x_v, l_v = ltn.Variable("x", x), ltn.Variable("l", F.one_hot(y, 3).float())
        diag_sat = Forall(ltn.diag(x_v, l_v), P(x_v, l_v)).value
        print(f"multiclass: sat {sat.item():.4f}, diag {diag_sat.item():.4f}")

    def clustering():
        torch.manual_seed(2)
        x, _ = _classes(120, d=2, k=3, seed=2)
        x = x.to(dev)
        C = ltn.Predicate(Logits(2, 3).to(dev))
        cl = ltn.Variable("cluster", torch.eye(3).to(dev))
        opt = torch.optim.Adam(C.parameters(), lr=1e-3)
        close = ltn.Predicate(func=lambda a, b: torch.exp(-0.5 * torch.norm(a - b, dim=1)))
        for _ in range(10):
            xv, yv = ltn.Variable("x", x), ltn.Variable("y", x)
            sat = SatAgg(Forall(xv, Exists(cl, C(xv, cl))),
                         Forall(cl, Exists(xv, C(xv, cl))),
                         Forall([cl, xv, yv], Implies(close(xv, yv), Implies(C(xv, cl), C(yv, cl)))),
                         Forall([cl, xv], Implies(And(C(xv, cl), C(xv, cl)), C(xv, cl))))
            opt.zero_grad()
            (1.0 - sat).backward()
            opt.step()
        print(f"clustering: sat {sat.item():.4f}")
    return {"binary": binary, "multiclass": multiclass, "clustering": clustering}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

class _cuda_on_cpu:
    """The CPU smoke run only: both scripts put their tensors and modules on their own `cuda:0` (`.to(device)`),
    which is mapped to the CPU there (on the GPU nothing is changed)."""

    def __init__(self, dev):
        self.on = dev.type != "cuda"

    @staticmethod
    def _cpu(a, k):
        def fix(v):
            if isinstance(v, str) and v.startswith("cuda") or isinstance(v, torch.device) and v.type == "cuda":
                return torch.device("cpu")
            return v
        return tuple(fix(v) for v in a), {key: fix(v) for key, v in k.items()}

    def __enter__(self):
        if self.on:
            self.t, self.m = torch.Tensor.to, nn.Module.to
            t, m, cpu = self.t, self.m, self._cpu

            def tensor_to(self, *a, **k):
                a, k = cpu(a, k)
                return t(self, *a, **k)

            def module_to(self, *a, **k):
                a, k = cpu(a, k)
                return m(self, *a, **k)
            torch.Tensor.to, nn.Module.to = tensor_to, module_to
        return self

    def __exit__(self, *exc):
        if self.on:
            torch.Tensor.to, nn.Module.to = self.t, self.m


@contextlib.contextmanager
def _window_until(model, mode, dev, start, stop_owner, stop_attr):
    """The measured window opens at the `start`-th `Tensor.backward` and closes when `stop_owner.stop_attr` is first
    called (before the call runs), which ends the script."""
    orig_b, orig_s = torch.Tensor.backward, getattr(stop_owner, stop_attr)
    state = {"n": 0, "done": False, "inside": False}

    def _patched(*a, **kw):  # named as the recorder's hooks: never a site itself
        if state["inside"]:
            return orig_b(*a, **kw)
        state["n"] += 1
        if state["n"] == start:
            state["m"] = hc.measuring(model, mode, dev)
            state["m"].__enter__()
        state["inside"] = True
        try:
            return orig_b(*a, **kw)
        finally:
            state["inside"] = False

    def _patched_stop(*a, **kw):
        if "m" in state:
            state.pop("m").__exit__(None, None, None)
            state["done"] = True
            raise hc._StopScript
        return orig_s(*a, **kw)
    _patched_stop.__name__ = "_patched"
    torch.Tensor.backward = _patched
    setattr(stop_owner, stop_attr, _patched_stop)
    try:
        yield state
    finally:
        torch.Tensor.backward = orig_b
        setattr(stop_owner, stop_attr, orig_s)
        if "m" in state:
            state.pop("m").__exit__(None, None, None)
    if not state["done"]:
        raise RuntimeError(f"the measured window did not close ({state['n']} backward calls)")


def cddpm_mnist(dev):
    """TeaPearce/Conditional_Diffusion_MNIST's script.py as is (its hard-coded recipe: 20 epochs at batch 256, a
    context U-Net of 128 features, 400 diffusion steps, classifier-free guidance weights 0, 0.5 and 2, its own
    `cuda:0`), on synthetic MNIST (torchvision's `MNIST` answered by 1024 `FakeData` digits: 4 steps an epoch), from
    a temporary folder. The window spans the 2nd `backward` to the first saving of its animated GIF: the rest of the
    first epoch (its per-step loss reads), the guided sampling of 40 digits (400 steps) and the grid of generated
    and real digits picked by class."""
    root = _need_repo("cddpm")

    def window():
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.animation as animation
        tmp = Path(tempfile.mkdtemp(prefix="fresh32-cddpm-"))
        (tmp / "data" / "diffusion_outputs10").mkdir(parents=True)
        with fc.fake_dataset("MNIST", 1024, (1, 28, 28)), _cuda_on_cpu(dev), \
                _window_until("cddpm.mnist", "train", dev, 2, animation.Animation, "save"):
            hc.run_script(root / "script.py", [], str(tmp))
    return {"train_window": window}


def ddpm_cifar(dev):
    """w86763777/pytorch-ddpm's main.py as is with its CIFAR-10 flag file (`--flagfile config/CIFAR10.txt`, a
    smaller U-Net and schedule for the time: `--ch 64 --T 250 --batch_size 32 --num_workers 0 --sample_step 10
    --save_step 0 --total_steps 40`, `--logdir` a temporary folder; its own `cuda:0`), on synthetic CIFAR-10
    (torchvision's `CIFAR10` answered by `FakeData`), tensorboardX carried. The window spans the 2nd to the 13th
    `backward`: training steps with warm-up, gradient clipping and the EMA update, and the sampling of 64 images at
    step 10 written to its log. The CPU smoke run takes `--T 10 --ch 32`."""
    root = _need_repo("ddpm")

    def window():
        tmp = Path(tempfile.mkdtemp(prefix="fresh32-ddpm-"))
        args = ["--flagfile", str(root / "config" / "CIFAR10.txt"), "--ch", "64", "--T", "250", "--batch_size", "32",
                "--num_workers", "0", "--sample_step", "10", "--save_step", "0", "--total_steps", "40",
                "--logdir", str(tmp / "logs")]
        if dev.type != "cuda":  # the CPU smoke run: a shorter schedule and a narrower U-Net, for the time
            args += ["--T", "10", "--ch", "32"]
        with fc.fake_dataset("CIFAR10", 2048, (3, 32, 32)), _cuda_on_cpu(dev), \
                hc.window_on(torch.Tensor, "backward", "ddpm.cifar", "train", dev, 2, 13, stop_script=True):
            hc.run_script(root / "main.py", args, str(tmp))
    return {"train_window": window}


MODELS = [
    # name, package, builder
    ("betty.mlo", "betty", betty_mlo),
    ("kronfluence.influence", "kronfluence", kronfluence_influence),
    ("ksom.maps", "ksom", ksom_maps),
    ("learnergy.ebm", "learnergy", learnergy_ebm),
    ("lovely_tensors.summaries", "lovely_tensors", lovely_summaries),
    ("lsuv.init", "lsuv", lsuv_init),
    ("ltn.logic", "ltn", ltn_logic),
    ("cddpm.mnist", "cddpm", cddpm_mnist),
    ("ddpm.cifar", "ddpm", ddpm_cifar),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh32", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
