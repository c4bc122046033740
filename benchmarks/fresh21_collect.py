"""Record the syncs of a twenty-second set, `fresh21` (a sealed test set): libraries and training code nobody here read.

`fresh21` is recorded the same way as `fresh9` to `fresh19` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; mmengine's `Runner` puts the model on the GPU
when there is one and its data preprocessor moves each batch to the model's device; rising's loader takes
`device=`; TRAK's `TRAKer` takes `device=`): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh21): mmengine (OpenMMLab's training engine:
  `Runner` with hooks, optimizer wrappers, schedules and metrics; data preprocessors, `InstanceData`), torchpme
  (torch-pme: long-range electrostatics of atomistic systems, Ewald / PME / P3M with their tuning, forces, a short
  MD run), rtdl_num_embeddings (rtdl-num-embeddings: piecewise-linear and periodic embeddings of numerical
  features for tabular networks), torch_kf (torch-kf: batched Kalman filtering and smoothing, multi-object
  tracking), performer_pytorch (performer-pytorch: FAVOR+ linear attention, language model, encoder,
  encoder-decoder), trak (traker, a source distribution built into a wheel by `prepare`: data attribution with
  TRAK), sinabs (spiking neural networks: surrogate-gradient training, ANN conversion, leaky neurons through time)
  and rising (GPU augmentation of 3-D medical volumes in its data loader);
  + addict, yapf, platformdirs, termcolor (mmengine's), local-attention, axial-positional-embedding
  (performer-pytorch's), nir, nirtorch, pbr (sinabs', which it imports). Their other needs (numpy, scipy,
  scikit-learn, networkx, tqdm, matplotlib, rich, pyyaml, opencv, einops, h5py, threadpoolctl, lightning-utilities,
  tensorboard) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh21/repos/<name>:
  pranz24/pytorch-soft-actor-critic (main.py as is, soft actor-critic with Gaussian and deterministic policies, on a
  synthetic continuous-control task given to it as the `gym` module it imports: its MuJoCo tasks need the old gym
  and mujoco-py) and weihua916/powerful-gnns (main.py as is, GIN graph classification on a synthetic set of trees
  with and without triangles, written in its dataset layout).

    python benchmarks/fresh21_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh21_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh21 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh21 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import os
import shutil
import subprocess
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
BENCH_DIR = ac.REPO / ".bench" / "fresh21"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh21", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh21/repos/<name>)
REPOS = {
    "sac": ("pranz24/pytorch-soft-actor-critic", "c1805660b3961694be54079a355155a5cad492f5",
            ["main.py", "sac.py", "model.py", "replay_memory.py", "utils.py"]),
    "gin": ("weihua916/powerful-gnns", "9a2ce8ac3e99278307093a464a95caf0fb04b602",
            ["main.py", "util.py", "models/graphcnn.py", "models/mlp.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["mmengine==0.10.7", "addict==2.4.0", "yapf==0.43.0", "platformdirs==4.14.8", "termcolor==3.3.0",
          "torch-pme==0.5.0", "rtdl-num-embeddings==0.0.12", "torch-kf==0.4.3", "performer-pytorch==1.1.4",
          "local-attention==1.9.0", "axial-positional-embedding==0.3.12", "sinabs==3.1.3", "nir==1.0.8",
          "nirtorch==2.6", "pbr==7.1.3", "rising==0.3.0"]
# published as source distributions only, built into wheels by `prepare` (traker: TRAK's data attribution)
SDISTS = ["traker==0.3.2"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"mmengine": "mmengine", "torch_pme": "torch-pme", "rtdl_num_embeddings": "rtdl-num-embeddings",
         "torch_kf": "torch-kf", "performer_pytorch": "performer-pytorch", "traker": "traker", "sinabs": "sinabs",
         "rising": "rising", "local_attention": "local-attention", "nir": "nir", "nirtorch": "nirtorch",
         "numpy": "numpy", "scipy": "scipy", "scikit_learn": "scikit-learn", "networkx": "networkx",
         "tensorboard": "tensorboard", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh21/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh21_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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


# ============================================================================================
# Libraries
# ============================================================================================

# -- mmengine: the docs' "15 minutes" recipe, a `BaseModel` (its `data_preprocessor` moves each batch to the
#    model's device; the `Runner` puts the model on the GPU when there is one) trained by `Runner.train()` with
#    an `OptimWrapper` (gradient clipping, accumulation), a warm-up and multi-step schedule, `EMAHook`,
#    `CheckpointHook(save_best=)`, `EarlyStoppingHook`, `LoggerHook`, validated by a `BaseMetric`; then
#    `Runner.test()`; by hand: `ImgDataPreprocessor` (normalisation, batch stacking), `OptimWrapper.update_params`,
#    `InstanceData` results filtered by score masks and concatenated, `Evaluator` over `BaseDataElement`s -----

def _blobs(n, seed=0, size=16, k=4):
    """n 3-channel images of k classes (a bright blob in one of k quadrants, plus noise), uint8 CPU tensors."""
    g = torch.Generator().manual_seed(seed)
    lab = torch.randint(0, k, (n,), generator=g)
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    cy = torch.tensor([4.0, 4.0, 11.0, 11.0])[lab % 4].view(n, 1, 1)
    cx = torch.tensor([4.0, 11.0, 4.0, 11.0])[lab % 4].view(n, 1, 1)
    blob = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 8.0)
    img = blob.unsqueeze(1).repeat(1, 3, 1, 1) * 180 + 40 * torch.rand(n, 3, size, size, generator=g)
    return img.clamp(0, 255).to(torch.uint8), lab


def mmengine_runner(dev):
    from mmengine.evaluator import BaseMetric, Evaluator
    from mmengine.model import BaseModel, ImgDataPreprocessor
    from mmengine.optim import OptimWrapper
    from mmengine.runner import Runner
    from mmengine.structures import BaseDataElement, InstanceData

    imgs, labels = _blobs(480)

    class Blobs(torch.utils.data.Dataset):
        def __init__(self, lo, hi):
            self.lo, self.hi = lo, hi

        def __len__(self):
            return self.hi - self.lo

        def __getitem__(self, i):
            return {"inputs": imgs[self.lo + i], "data_samples": labels[self.lo + i]}

    class Net(BaseModel):
        def __init__(self):
            super().__init__(data_preprocessor=dict(type="ImgDataPreprocessor", mean=[127.5] * 3, std=[64.0] * 3))
            self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                      nn.Flatten(), nn.Linear(32, 4))

        def forward(self, inputs, data_samples=None, mode="tensor"):
            logits = self.body(inputs)
            if mode == "loss":
                return {"loss": F.cross_entropy(logits, data_samples)}
            if mode == "predict":
                return logits, data_samples
            return logits

    class Accuracy(BaseMetric):
        default_prefix = "blobs"

        def process(self, data_batch, data_samples):
            logits, gt = data_samples
            self.results.append({"correct": (logits.argmax(1) == gt).sum().cpu(), "n": len(gt)})

        def compute_metrics(self, results):
            return {"acc": float(sum(r["correct"] for r in results)) / sum(r["n"] for r in results)}

    def loader(lo, hi, shuffle):
        return dict(dataset=Blobs(lo, hi), sampler=dict(type="DefaultSampler", shuffle=shuffle), batch_size=32,
                    collate_fn=dict(type="default_collate"), num_workers=0)

    def runner():
        work = hc._tmp()
        r = Runner(model=Net(), work_dir=work, experiment_name=os.path.basename(work),
                   train_dataloader=loader(0, 384, True), val_dataloader=loader(384, 480, False),
                   test_dataloader=loader(384, 480, False),
                   optim_wrapper=dict(optimizer=dict(type="SGD", lr=0.05, momentum=0.9),
                                      clip_grad=dict(max_norm=5.0), accumulative_counts=2),
                   param_scheduler=[dict(type="LinearLR", start_factor=0.1, by_epoch=False, begin=0, end=10),
                                    dict(type="MultiStepLR", by_epoch=True, milestones=[2], gamma=0.5)],
                   train_cfg=dict(by_epoch=True, max_epochs=3, val_interval=1), val_cfg=dict(), test_cfg=dict(),
                   val_evaluator=dict(type=Accuracy), test_evaluator=dict(type=Accuracy),
                   default_hooks=dict(logger=dict(type="LoggerHook", interval=4),
                                      checkpoint=dict(type="CheckpointHook", interval=1, save_best="blobs/acc",
                                                      rule="greater", max_keep_ckpts=1)),
                   custom_hooks=[dict(type="EMAHook", momentum=0.01),
                                 dict(type="EarlyStoppingHook", monitor="blobs/acc", patience=3)],
                   env_cfg=dict(cudnn_benchmark=False), randomness=dict(seed=0), launcher="none")
        r.train()
        metrics = r.test()
        print(f"runner test {metrics}")

    def manual():
        pre = ImgDataPreprocessor(mean=[127.5] * 3, std=[64.0] * 3).to(dev)
        net = Net().to(dev)
        wrapper = OptimWrapper(torch.optim.AdamW(net.parameters(), lr=3e-3), clip_grad=dict(max_norm=2.0))
        for _step in range(12):
            idx = torch.randint(0, 384, (32,))
            batch = pre({"inputs": [imgs[i] for i in idx], "data_samples": labels[idx].to(dev)}, training=True)
            loss = F.cross_entropy(net.body(batch["inputs"]), batch["data_samples"])
            wrapper.update_params(loss)
        with torch.no_grad():
            batch = pre({"inputs": [imgs[i] for i in range(384, 480)]}, training=False)
            probs = net.body(batch["inputs"]).softmax(1)
        res = InstanceData(scores=probs.max(1).values, labels=probs.argmax(1),
                           boxes=torch.rand(len(probs), 4, device=dev) * 16)
        keep = res[res.scores > 0.3]
        top = res[res.scores.topk(10).indices]
        both = InstanceData.cat([keep, top])
        samples = []
        for i in range(len(probs)):
            s = BaseDataElement(metainfo={"idx": i})
            s.pred, s.gt = probs[i:i + 1], labels[384 + i:385 + i].to(dev)
            samples.append(s)

        class Top1(BaseMetric):
            def process(self, data_batch, data_samples):
                for s in data_samples:
                    self.results.append(int(s["pred"].argmax(1).item() == s["gt"].item()))

            def compute_metrics(self, results):
                return {"top1": sum(results) / len(results)}
        ev = Evaluator(Top1())
        ev.process(data_samples=samples)
        print(f"manual kept {len(keep)}, top {len(top)}, cat {len(both)}, {ev.evaluate(len(samples))}")
    return {"runner": runner, "manual": manual}


# -- torch_pme (torch-pme): the docs' recipe on a periodic rock-salt crystal with thermal noise, made on the
#    device: a half neighbour list within a cutoff (brute force, ours), `tuning.tune_ewald` / `tune_pme` /
#    `tune_p3m` for the smearing and grid, `EwaldCalculator`, `PMECalculator` and `P3MCalculator` with a
#    `CoulombPotential` (energies, forces by autograd, a short velocity-Verlet run with the neighbour list rebuilt
#    each step), an `InversePowerLawPotential`, and per-species charges and an energy scale fitted to reference
#    energies ------------------------------------------------------------------------------------------------------

def _rocksalt(dev, reps=3, a=5.64, noise=0.1, seed=0):
    """A periodic NaCl supercell of reps^3 conventional cells on the device: positions (N, 3), charges (N, 1) of
    +-1, species (N,), the cubic cell (3, 3); atoms displaced by Gaussian noise."""
    g = torch.Generator().manual_seed(seed)
    base = torch.tensor([[0, 0, 0], [0, .5, .5], [.5, 0, .5], [.5, .5, 0]], dtype=torch.float64)
    axis = torch.arange(reps, dtype=torch.float64)
    grid = torch.stack(torch.meshgrid(axis, axis, axis, indexing="ij"), -1).view(-1, 1, 3)
    na = (grid + base).view(-1, 3)
    cl = (grid + base + torch.tensor([.5, 0, 0], dtype=torch.float64)).view(-1, 3) % reps
    pos = torch.cat([na, cl]) * a + noise * torch.randn(2 * len(na), 3, generator=g, dtype=torch.float64)
    species = torch.cat([torch.zeros(len(na), dtype=torch.long), torch.ones(len(cl), dtype=torch.long)])
    charges = torch.where(species == 0, 1.0, -1.0).to(torch.float64).unsqueeze(1)
    cell = torch.eye(3, dtype=torch.float64) * a * reps
    return pos.to(dev), charges.to(dev), species.to(dev), cell.to(dev)


def _half_neighbours(pos, cell, cutoff):
    """i < j pairs within cutoff under the minimum image of a cubic cell (brute force, on pos's device)."""
    n = len(pos)
    i, j = torch.triu_indices(n, n, 1, device=pos.device)
    d = pos[j] - pos[i]
    box = torch.diagonal(cell)
    d = d - box * torch.round(d / box)
    r = d.norm(dim=1)
    keep = r < cutoff
    return torch.stack([i[keep], j[keep]], 1), r[keep]


def torchpme_electrostatics(dev):
    import torchpme
    from torchpme.tuning import tune_ewald, tune_p3m, tune_pme

    cutoff = 6.0

    def system(seed=0, noise=0.1):
        pos, q, species, cell = _rocksalt(dev, noise=noise, seed=seed)
        nl, dist = _half_neighbours(pos, cell, cutoff)
        return pos, q, species, cell, nl, dist

    def calculators():
        pos, q, _, cell, nl, dist = system()
        smearing, ewald_params, _ = tune_ewald(q, cell, pos, cutoff, nl, dist, accuracy=1e-3)
        ewald = torchpme.EwaldCalculator(torchpme.CoulombPotential(smearing=smearing), **ewald_params)
        ewald = ewald.to(dev, torch.float64)
        smearing_p, pme_params, _ = tune_pme(q, cell, pos, cutoff, nl, dist, accuracy=1e-3)
        pot = torchpme.CoulombPotential(smearing=smearing_p)
        pme = torchpme.PMECalculator(pot, **pme_params).to(dev, torch.float64)
        smearing_3, p3m_params, _ = tune_p3m(q, cell, pos, cutoff, nl, dist, accuracy=1e-3)
        p3m = torchpme.P3MCalculator(torchpme.CoulombPotential(smearing=smearing_3), **p3m_params)
        p3m = p3m.to(dev, torch.float64)
        out = {}
        for name, calc in (("ewald", ewald), ("pme", pme), ("p3m", p3m)):
            p = pos.clone().requires_grad_(True)
            d = (p[nl[:, 1]] - p[nl[:, 0]])
            box = torch.diagonal(cell)
            d = d - box * torch.round(d / box).detach()
            potential = calc(q, cell, p, nl, d.norm(dim=1))
            energy = (q * potential).sum()
            forces = -torch.autograd.grad(energy, p)[0]
            out[name] = (round(energy.item(), 4), round(forces.abs().max().item(), 4))
        ipl = torchpme.PMECalculator(torchpme.InversePowerLawPotential(exponent=6, smearing=smearing_p),
                                     **pme_params).to(dev, torch.float64)
        disp = (q.abs() * ipl(q.abs(), cell, pos, nl, dist)).sum()
        print(f"energies/forces {out}, r^-6 {disp.item():.4f}, params ewald {ewald_params} pme {pme_params}")

    def dynamics():
        pos, q, species, cell, nl, dist = system(noise=0.05)
        smearing, params, _ = tune_pme(q, cell, pos, cutoff, nl, dist, accuracy=1e-3)
        calc = torchpme.PMECalculator(torchpme.CoulombPotential(smearing=smearing), **params).to(dev, torch.float64)
        mass = torch.where(species == 0, 23.0, 35.45).to(torch.float64).unsqueeze(1)
        vel = torch.zeros_like(pos)
        dt, box = 0.5, torch.diagonal(cell)

        def forces(p):
            p = p.detach().requires_grad_(True)
            nl, _ = _half_neighbours(p.detach(), cell, cutoff)
            d = p[nl[:, 1]] - p[nl[:, 0]]
            d = d - box * torch.round(d / box).detach()
            e = (q * calc(q, cell, p, nl, d.norm(dim=1))).sum()
            return e.detach(), -torch.autograd.grad(e, p)[0]
        e, f = forces(pos)
        energies = []
        for _step in range(5):
            vel = vel + 0.5 * dt * f / mass
            pos = (pos + dt * vel) % box
            e, f = forces(pos)
            vel = vel + 0.5 * dt * f / mass
            kin = 0.5 * (mass * vel ** 2).sum()
            energies.append(e + kin)
        drift = (torch.stack(energies) - energies[0]).abs().max()
        print(f"md total energy drift {drift.item():.3e}")

    def fit_charges():
        systems = [system(seed=s, noise=0.15) for s in range(4)]
        pos, q, _, cell, nl, dist = systems[0]
        smearing, params, _ = tune_pme(q, cell, pos, cutoff, nl, dist, accuracy=1e-3)
        calc = torchpme.PMECalculator(torchpme.CoulombPotential(smearing=smearing), **params).to(dev, torch.float64)
        scale = torch.tensor(0.5, dtype=torch.float64, device=dev, requires_grad=True)
        ref_calc = torchpme.PMECalculator(torchpme.CoulombPotential(smearing=smearing), **params).to(dev, torch.float64)
        with torch.no_grad():
            refs = [(0.8 * q * ref_calc(0.8 * q, cell, p, nl, d)).sum() for p, q, _, cell, nl, d in systems]
        species_q = torch.tensor([0.3, -0.3], dtype=torch.float64, device=dev, requires_grad=True)
        opt = torch.optim.Adam([species_q, scale], lr=0.02)
        for _it in range(10):
            loss = 0
            for (p, _, sp, cell, nl, d), ref in zip(systems, refs):
                qq = species_q[sp].unsqueeze(1)
                loss = loss + (scale * (qq * calc(qq, cell, p, nl, d)).sum() - ref) ** 2
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"fitted charges {species_q.detach().tolist()}, scale {scale.item():.3f}, loss {loss.item():.4e}")
    return {"calculators": calculators, "dynamics": dynamics, "fit_charges": fit_charges}


# -- rtdl_num_embeddings (rtdl-num-embeddings): the README's recipes for numerical features of tabular data on a
#    synthetic regression / classification table on the device: `compute_bins` by quantiles and by decision
#    trees (with the targets), `PiecewiseLinearEncoding` into an MLP, `PiecewiseLinearEmbeddings` (versions A and
#    B), `PeriodicEmbeddings` (full and lite), `LinearReLUEmbeddings`, each into a small MLP trained by
#    minibatches with early stopping on a validation split ---------------------------------------------------------

def rtdl_tabular(dev):
    from rtdl_num_embeddings import (
        LinearReLUEmbeddings,
        PeriodicEmbeddings,
        PiecewiseLinearEmbeddings,
        PiecewiseLinearEncoding,
        compute_bins,
    )

    g = torch.Generator().manual_seed(0)
    n, d = 3000, 8
    x = torch.randn(n, d, generator=g)
    x[:, 3] = x[:, 3].exp()  # a skewed feature
    y_reg = torch.sin(2 * x[:, 0]) + (x[:, 1] > 0.5).float() * x[:, 2] + 0.3 * torch.log1p(x[:, 3]) \
        + 0.1 * torch.randn(n, generator=g)
    y_cls = (y_reg > y_reg.median()).long()
    x, y_reg, y_cls = x.to(dev), y_reg.to(dev), y_cls.to(dev)
    tr, va, te = slice(0, 2000), slice(2000, 2500), slice(2500, n)
    mu, sd = x[tr].mean(0), x[tr].std(0)
    xn = (x - mu) / sd

    def train(embed, flat_dim, y, classes=None, epochs=6):
        out = classes or 1
        model = nn.Sequential(embed, nn.Flatten(), nn.Linear(flat_dim, 128), nn.ReLU(), nn.Dropout(0.1),
                              nn.Linear(128, out)).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)

        def loss_fn(pred, t):
            return F.cross_entropy(pred, t) if classes else F.mse_loss(pred.squeeze(-1), t)
        best, best_state, bad = float("inf"), None, 0
        for _epoch in range(epochs):
            model.train()
            for idx in torch.randperm(2000, device=dev).split(128):
                loss = loss_fn(model(xn[idx]), y[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
            model.eval()
            with torch.no_grad():
                val = loss_fn(model(xn[va]), y[va]).item()
            if val < best:
                best, best_state, bad = val, {k: v.clone() for k, v in model.state_dict().items()}, 0
            else:
                bad += 1
                if bad >= 2:
                    break
        model.load_state_dict(best_state)
        with torch.no_grad():
            pred = model(xn[te])
            score = (pred.argmax(1) == y[te]).float().mean() if classes else F.mse_loss(pred.squeeze(-1), y[te])
        return round(score.item(), 4)

    def piecewise():
        bins_q = compute_bins(xn[tr], n_bins=16)
        bins_t = compute_bins(xn[tr], n_bins=16, y=y_reg[tr], regression=True,
                              tree_kwargs={"min_samples_leaf": 32, "min_impurity_decrease": 1e-4})
        bins_c = compute_bins(xn[tr], n_bins=16, y=y_cls[tr], regression=False,
                              tree_kwargs={"min_samples_leaf": 32})
        enc = PiecewiseLinearEncoding(bins_q)
        res = {"ple": train(enc, sum(len(b) - 1 for b in bins_q), y_reg),
               "ple_tree": train(PiecewiseLinearEmbeddings(bins_t, 16, activation=False, version="A"), d * 16, y_reg),
               "ple_b_cls": train(PiecewiseLinearEmbeddings(bins_c, 16, activation=True, version="B"), d * 16,
                                  y_cls, classes=2)}
        print(f"piecewise {res}, bins {[len(b) for b in bins_t]}")

    def periodic():
        res = {"periodic": train(PeriodicEmbeddings(d, 16, lite=False), d * 16, y_reg),
               "periodic_lite": train(PeriodicEmbeddings(d, 16, n_frequencies=24, lite=True), d * 16, y_cls, classes=2),
               "linear_relu": train(LinearReLUEmbeddings(d, 16), d * 16, y_reg)}
        print(f"periodic {res}")
    return {"piecewise": piecewise, "periodic": periodic}


# -- torch_kf (torch-kf): the README's batched use, many independent tracks on the device: constant-velocity and
#    constant-acceleration filters from `ckf.constant_kalman_filter`, `filter(..., return_all=True)` over
#    measurements with missed detections (NaN), `rts_smooth`; a tracking loop by hand (`predict`, `project`,
#    gating by `mahalanobis_squared`, nearest-measurement association, `update`, track birth and death). (A third
#    mode, noise variances learnt by the innovations' `log_likelihood` through `constant_kalman_filter` with device
#    tensors as its stds, failed on the GPU: the function builds its matrices on the host; it was removed) ---------

def _tracks(dev, n=400, T=60, dim=2, seed=0, miss=0.1, std=0.5):
    """n noisy 2-D trajectories of T steps (smoothly turning velocities), measures (T, n, dim, 1) with NaN for
    missed detections, and the true positions (T, n, dim)."""
    g = torch.Generator().manual_seed(seed)
    pos = torch.rand(n, dim, generator=g) * 100
    vel = torch.randn(n, dim, generator=g)
    truth = []
    for _t in range(T):
        vel = vel + 0.1 * torch.randn(n, dim, generator=g)
        pos = pos + vel
        truth.append(pos.clone())
    truth = torch.stack(truth)
    meas = truth + std * torch.randn(truth.shape, generator=g)
    meas[torch.rand(T, n, generator=g) < miss] = float("nan")
    return meas.unsqueeze(-1).to(dev), truth.to(dev)


def torchkf_tracking(dev):
    from torch_kf import GaussianState
    from torch_kf.ckf import constant_kalman_filter

    def batch_filter():
        meas, truth = _tracks(dev)
        res = {}
        for order in (1, 2):
            kf = constant_kalman_filter(0.5, 0.1, dim=2, order=order).to(dev)
            dim_x = kf.process_matrix.shape[0]
            first = torch.nan_to_num(meas[0])
            mean = torch.zeros(first.shape[0], dim_x, 1, device=dev)
            mean[:, :2] = first
            cov = kf.process_noise.expand(first.shape[0], dim_x, dim_x) * 100 + torch.eye(dim_x, device=dev)
            states = kf.filter(GaussianState(mean, cov), meas, update_first=True, return_all=True)
            smooth = kf.rts_smooth(states)
            err_f = (states.mean[:, :, :2, 0] - truth).norm(dim=-1).mean()
            err_s = (smooth.mean[:, :, :2, 0] - truth).norm(dim=-1).mean()
            res[order] = (round(err_f.item(), 3), round(err_s.item(), 3))
        steady = kf.steady_state_covariance(10)
        print(f"filter/smoother errors {res}, steady-state trace {steady.diagonal().sum().item():.3f}")

    def tracking():
        meas, truth = _tracks(dev, n=120, T=40, miss=0.15)
        kf = constant_kalman_filter(0.5, 0.1, dim=2, order=1).to(dev)
        dim_x = kf.process_matrix.shape[0]
        tracks = None
        alive = []
        for t in range(meas.shape[0]):
            z = meas[t]
            z = z[~torch.isnan(z).any(dim=1).squeeze(-1)]
            if tracks is None:
                mean = torch.zeros(len(z), dim_x, 1, device=dev)
                mean[:, :2] = z
                tracks = GaussianState(mean, torch.eye(dim_x, device=dev).expand(len(z), dim_x, dim_x) * 10)
                misses = torch.zeros(len(z), dtype=torch.long, device=dev)
                continue
            tracks = kf.predict(tracks)
            proj = kf.project(tracks)
            pairs = GaussianState(proj.mean[:, None], proj.covariance[:, None],
                                  None if proj.precision is None else proj.precision[:, None])
            d2 = pairs.mahalanobis_squared(z[None])  # (tracks, measures)
            best = d2.min(1) if d2.shape[1] else None
            if best is not None:
                gated = best.values < 9.21
                matched = z[best.indices]
                updated = kf.update(tracks, matched, projection=proj)
                tracks = GaussianState(torch.where(gated[:, None, None], updated.mean, tracks.mean),
                                       torch.where(gated[:, None, None], updated.covariance, tracks.covariance))
                misses = torch.where(gated, 0, misses + 1)
                used = torch.zeros(len(z), dtype=torch.bool, device=dev)
                used[best.indices[gated]] = True
                fresh = z[~used]
            else:
                misses = misses + 1
                fresh = z[:0]
            keep = misses < 3
            tracks = GaussianState(tracks.mean[keep], tracks.covariance[keep])
            misses = misses[keep]
            if len(fresh):
                mean = torch.zeros(len(fresh), dim_x, 1, device=dev)
                mean[:, :2] = fresh
                tracks = GaussianState(torch.cat([tracks.mean, mean]),
                                       torch.cat([tracks.covariance,
                                                  torch.eye(dim_x, device=dev).expand(len(fresh), dim_x, dim_x) * 10]))
                misses = torch.cat([misses, torch.zeros(len(fresh), dtype=torch.long, device=dev)])
            alive.append(len(tracks.mean))
        print(f"tracks alive per step (last 5) {alive[-5:]}")

    return {"batch_filter": batch_filter, "tracking": tracking}


# -- performer_pytorch (performer-pytorch): the README's `PerformerLM` (FAVOR+ attention, feature redraws, rotary
#    positions, reversible layers, chunked feed-forward, local-attention heads) trained as a causal language model
#    by its `AutoregressiveWrapper` and sampled with `generate` (top-k, an end token); a non-causal encoder with a
#    mask classifying sequences; `PerformerEncDec` trained to reverse sequences; `SelfAttention` / `FastAttention`
#    (generalized kernels) as layers, `ProjectionUpdater` redraws by hand ------------------------------------------

def performer_attention(dev):
    from performer_pytorch import AutoregressiveWrapper, FastAttention, PerformerEncDec, PerformerLM, SelfAttention

    g = torch.Generator().manual_seed(0)
    vocab = 64

    def copy_task(n, L):
        """sequences of a random motif repeated: the model learns to continue it (tokens 2..vocab-1, 1 = end)."""
        motif = torch.randint(2, vocab, (n, 8), generator=g)
        return motif.repeat(1, L // 8 + 1)[:, :L]

    def lm():
        model = PerformerLM(num_tokens=vocab, max_seq_len=128, dim=64, depth=2, heads=4, causal=True,
                            nb_features=32, feature_redraw_interval=4, local_attn_heads=1, local_window_size=32,
                            ff_chunks=2, reversible=True, rotary_position_emb=True)
        wrapper = AutoregressiveWrapper(model).to(dev)
        data = copy_task(64, 129).to(dev)
        loss = _fit(wrapper.parameters(), 6, lambda i: wrapper(data[(i * 16) % 64:(i * 16) % 64 + 16]), lr=3e-3)
        wrapper.eval()
        start = data[:4, :16]
        out = wrapper.generate(start, 12, eos_token=1, temperature=1.0, filter_thres=0.9)
        print(f"lm loss {loss.item():.3f}, generated {tuple(out.shape)}")

    def classifier():
        enc = PerformerLM(num_tokens=vocab, max_seq_len=96, dim=64, depth=2, heads=4, causal=False,
                          generalized_attention=True, nb_features=32, use_scalenorm=True, emb_dropout=0.1)
        head = nn.Linear(vocab, 2)
        enc, head = enc.to(dev), head.to(dev)
        x = torch.randint(2, vocab, (128, 96), generator=g)
        lengths = torch.randint(40, 97, (128,), generator=g)
        mask = torch.arange(96)[None] < lengths[:, None]
        y = ((x * mask).eq(7).sum(1) > 0).long()
        x, mask, y = (x * mask).to(dev), mask.to(dev), y.to(dev)

        def loss_of(i):
            sl = slice((i * 32) % 128, (i * 32) % 128 + 32)
            logits = enc(x[sl], mask=mask[sl])
            pooled = (logits * mask[sl, :, None]).sum(1) / mask[sl].sum(1, keepdim=True)
            return F.cross_entropy(head(pooled), y[sl])
        loss = _fit(list(enc.parameters()) + list(head.parameters()), 8, loss_of, lr=2e-3)
        enc.fix_projection_matrices_()
        print(f"classifier loss {loss.item():.3f}")

    def enc_dec():
        model = PerformerEncDec(dim=64, enc_num_tokens=vocab, enc_depth=1, enc_heads=4, enc_max_seq_len=32,
                                dec_num_tokens=vocab, dec_depth=1, dec_heads=4, dec_max_seq_len=33,
                                enc_nb_features=32, dec_nb_features=32).to(dev)
        src = torch.randint(2, vocab, (64, 32), generator=g)
        tgt = torch.cat([torch.ones(64, 1, dtype=torch.long), src.flip(1)], 1)
        src, tgt = src.to(dev), tgt.to(dev)
        src_mask = torch.ones_like(src).bool()
        def loss_of(i):
            sl = slice((i % 4) * 16, (i % 4 + 1) * 16)
            return model(src[sl], tgt[sl], enc_mask=src_mask[sl])
        loss = _fit(model.parameters(), 5, loss_of, lr=3e-3)
        model.eval()
        out = model.generate(src[:4], torch.ones(4, 1, dtype=torch.long, device=dev), seq_len=8, eos_token=0)
        print(f"enc-dec loss {loss.item():.3f}, generated {tuple(out.shape)}")

    def layers():
        attn = SelfAttention(dim=64, heads=4, causal=False, nb_features=32, feature_redraw_interval=2).to(dev)
        fast = FastAttention(dim_heads=16, nb_features=32, causal=True, generalized_attention=True).to(dev)
        x = torch.randn(8, 100, 64, generator=g).to(dev)
        proj = nn.Linear(64, 1).to(dev)

        def loss_of(i):
            q, k, v = torch.randn(3, 8, 4, 100, 16, device=dev).unbind(0)
            return proj(attn(x)).pow(2).mean() + fast(q, k, v).pow(2).mean() * 0
        loss = _fit(list(attn.parameters()) + list(proj.parameters()), 5, loss_of)
        with torch.no_grad():
            q, k, v = torch.randn(3, 8, 4, 100, 16, device=dev).unbind(0)
            out = fast(q, k, v)
            fast.redraw_projection_matrix(dev)
        print(f"attention layers loss {loss.item():.4f}, fast {tuple(out.shape)}")
    return {"lm": lm, "classifier": classifier, "enc_dec": enc_dec, "layers": layers}


# -- trak (traker): the README's `TRAKer` recipe for data attribution on an image classifier trained here (two
#    checkpoints along its training): `load_checkpoint`, `featurize` of the train set by batches on the device,
#    `finalize_features`, `start_scoring_checkpoint`, `score` of target examples, `finalize_scores`; the projector
#    a `BasicProjector` on the device (the CUDA one needs the compiled fast_jl); then the scores' top proponents ----

def trak_attribution(dev):
    from trak import TRAKer
    from trak.projectors import BasicProjector, ProjectionType

    x, t = _blobs(384, seed=3)
    x = (x.float() / 255 - 0.5) / 0.25
    train_x, train_t, tgt_x, tgt_t = x[:320], t[:320], x[320:352], t[320:352]

    def net():
        return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1),
                             nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(), nn.Linear(64, 4)).to(dev)

    def checkpoints():
        model, ckpts = net(), []
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        for _epoch in range(2):
            for idx in torch.randperm(320).split(64):
                loss = F.cross_entropy(model(train_x[idx].to(dev)), train_t[idx].to(dev))
                opt.zero_grad()
                loss.backward()
                opt.step()
            ckpts.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        return model.eval(), ckpts

    def attribute():
        model, ckpts = checkpoints()
        n_params = sum(p.numel() for p in model.parameters())
        projector = BasicProjector(grad_dim=n_params, proj_dim=256, seed=0, proj_type=ProjectionType.rademacher,
                                   device=dev)
        traker = TRAKer(model=model, task="image_classification", train_set_size=320, save_dir=hc._tmp(),
                        device=dev, projector=projector, proj_dim=256, use_half_precision=False)
        for mid, ckpt in enumerate(ckpts):
            traker.load_checkpoint(ckpt, model_id=mid)
            for b in range(0, 320, 64):
                traker.featurize(batch=[train_x[b:b + 64].to(dev), train_t[b:b + 64].to(dev)], num_samples=64)
        traker.finalize_features()
        for mid, ckpt in enumerate(ckpts):
            traker.start_scoring_checkpoint(exp_name="targets", checkpoint=ckpt, model_id=mid, num_targets=32)
            traker.score(batch=[tgt_x.to(dev), tgt_t.to(dev)], num_samples=32)
        scores = torch.as_tensor(traker.finalize_scores(exp_name="targets"))
        top = scores.topk(5, dim=0).indices
        same = (train_t[top.cpu()] == tgt_t[None]).float().mean()
        print(f"scores {tuple(scores.shape)}, top-5 proponents with the target's label {same.item():.2f}")
    return {"attribute": attribute}


# -- sinabs: the docs' spiking CNN trained through time (`IAFSqueeze` layers between convolutions, surrogate
#    gradients, `reset_states`, a synaptic-operations penalty from `SNNAnalyzer`'s statistics); an ANN converted
#    by `from_model` after `normalize_weights`, its spiking copy run and compared; a `LIF` (synaptic current, recorded
#    states) / `ExpLeak` network on (batch, time, channels) inputs. (A fourth mode, the network exported to NIR
#    (`to_nir`) and read back, failed on the GPU: NIR's nodes take numpy arrays; it was removed) -------------------

def _events(n, T, seed=0, size=16):
    """n event-camera-like clips (n, T, 2, size, size) of a bar moving left or right (label 0/1), CPU tensors."""
    g = torch.Generator().manual_seed(seed)
    lab = torch.randint(0, 2, (n,), generator=g)
    out = torch.zeros(n, T, 2, size, size)
    start = torch.randint(2, size - 2, (n,), generator=g)
    for i in range(n):
        for t in range(T):
            col = (start[i] + (t if lab[i] else -t)) % size
            out[i, t, int(lab[i]), :, col] = 1.0
    out = out + (torch.rand(out.shape, generator=g) < 0.02).float()
    return out.clamp(0, 1), lab


def sinabs_snn(dev):
    import sinabs
    import sinabs.layers as sl
    from sinabs.activation import MultiSpike, SingleExponential

    T, B = 10, 16
    x, y = _events(96, T)

    def bptt():
        net = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1, bias=False), sl.IAFSqueeze(batch_size=B),
                            nn.AvgPool2d(2), nn.Conv2d(8, 16, 3, padding=1, bias=False), sl.IAFSqueeze(batch_size=B),
                            nn.AvgPool2d(2), nn.Flatten(), nn.Linear(16 * 16, 2, bias=False),
                            sl.IAFSqueeze(batch_size=B, spike_fn=MultiSpike,
                                          surrogate_grad_fn=SingleExponential())).to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=2e-3)
        for _epoch in range(2):
            for b in range(0, 96, B):
                xb = x[b:b + B].to(dev).flatten(0, 1)
                yb = y[b:b + B].to(dev)
                sinabs.reset_states(net)
                analyzer = sinabs.SNNAnalyzer(net)
                out = net(xb).view(B, T, 2).sum(1)
                stats = analyzer.get_model_statistics(average=True)
                loss = F.cross_entropy(out, yb) + 1e-6 * stats["synops"]
                opt.zero_grad()
                loss.backward()
                opt.step()
            layer_stats = analyzer.get_layer_statistics(average=True)
        firing = {k: round(float(v["firing_rate"]), 3) for k, v in layer_stats["spiking"].items()}
        print(f"bptt loss {loss.item():.3f}, synops {float(stats['synops']):.1f}, firing {firing}")

    def convert():
        ann = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2), nn.Conv2d(8, 16, 3, padding=1),
                            nn.ReLU(), nn.AvgPool2d(2), nn.Flatten(), nn.Linear(256, 2)).to(dev)
        frames = x.sum(1).to(dev)
        loss = _fit(ann.parameters(), 20, lambda i: F.cross_entropy(ann(frames), y.to(dev)), lr=3e-3)
        sinabs.utils.normalize_weights(ann, frames[:32], output_layers=["1", "4"], param_layers=["0", "3", "7"])
        snn = sinabs.from_model(ann, input_shape=(2, 16, 16), batch_size=8, add_spiking_output=True).to(dev)
        analyzer = sinabs.SNNAnalyzer(snn.spiking_model)
        clip = x[:8].to(dev).flatten(0, 1)
        snn.reset_states()
        with torch.no_grad():
            out = snn(clip).view(8, T, 2).sum(1)
            agree = (out.argmax(1) == ann(frames[:8]).argmax(1)).float().mean()
        synops = analyzer.get_model_statistics()["synops"]
        print(f"ann loss {loss.item():.3f}, snn agreement {agree.item():.2f}, synops {float(synops):.0f}")

    def recurrent():
        seq = x.flatten(3).mean(-1)  # (n, T, 2): event rates per polarity
        seq = torch.cat([seq, x[:, :, :, :, :8].flatten(3).mean(-1)], -1).to(dev)  # (n, T, 4), left half too
        net = nn.Sequential(nn.Linear(4, 32), sl.LIF(tau_mem=10.0, tau_syn=5.0, record_states=True),
                            nn.Linear(32, 2), sl.ExpLeak(tau_mem=5.0)).to(dev)
        yy = y.to(dev)

        def loss_of(i):
            sinabs.reset_states(net)
            out = net(seq)
            return F.cross_entropy(out[:, -1], yy)
        loss = _fit(net.parameters(), 8, loss_of, lr=5e-3)
        v = net[1].recordings["v_mem"]
        print(f"recurrent loss {loss.item():.3f}, v_mem {tuple(v.shape)}")

    return {"bptt": bptt, "convert": convert, "recurrent": recurrent}


# -- rising: the README's GPU augmentation of 3-D medical volumes: a `rising.loading.DataLoader` with
#    `gpu_transforms` and `device=` (batches moved, then augmented there): `Rotate`, `Scale`, `Translate` with
#    random parameters (`UniformParameter`, `NormalParameter`), `Mirror`, `GaussianNoise`, `GammaCorrection`,
#    `NormZeroMeanUnitStd`, `RandomCrop`, `OneHot` and `SegToBox` on the labels, `DropoutCompose`; a small 3-D
#    segmentation network trained on the augmented batches (Dice + cross-entropy) -----------------------------

def _volumes(n, size=24, seed=0):
    """n (1, size, size, size) volumes with one or two bright ellipsoids and their integer masks (0 background,
    1 and 2 the objects), as a list of sample dicts of CPU tensors."""
    g = torch.Generator().manual_seed(seed)
    zz, yy, xx = torch.meshgrid(*[torch.arange(size).float()] * 3, indexing="ij")
    out = []
    for i in range(n):
        seg = torch.zeros(size, size, size, dtype=torch.long)
        img = 0.2 * torch.randn(size, size, size, generator=g)
        for k in (1, 2):
            c = torch.randint(6, size - 6, (3,), generator=g).float()
            r = torch.rand(3, generator=g) * 3 + 3
            inside = ((zz - c[0]) / r[0]) ** 2 + ((yy - c[1]) / r[1]) ** 2 + ((xx - c[2]) / r[2]) ** 2 <= 1
            seg[inside] = k
            img = img + inside.float() * (0.8 + 0.4 * k)
        out.append({"data": img.unsqueeze(0), "seg": seg.unsqueeze(0).float(), "label": torch.tensor(i % 2)})
    return out


def rising_augment(dev):
    from rising.loading import DataLoader
    from rising.random import DiscreteParameter, NormalParameter, UniformParameter
    from rising.transforms import (
        Compose,
        DropoutCompose,
        GammaCorrection,
        GaussianNoise,
        Mirror,
        NormZeroMeanUnitStd,
        OneHot,
        RandomCrop,
        Rotate,
        Scale,
        SegToBox,
        ToDtype,
        Translate,
    )

    data = _volumes(48)

    def spatial():
        return [Rotate(UniformParameter(-20.0, 20.0), degree=True, keys=("data", "seg"), interpolation_mode="nearest"),
                Scale(UniformParameter(0.85, 1.15), keys=("data", "seg"), interpolation_mode="nearest"),
                Translate(NormalParameter(0.0, 1.5), keys=("data", "seg"), interpolation_mode="nearest"),
                Mirror(dims=DiscreteParameter([0, 1, 2]), keys=("data", "seg"))]

    def augment():
        trafos = Compose(*spatial(), GaussianNoise(0.0, 0.05), GammaCorrection(UniformParameter(0.8, 1.2)),
                         NormZeroMeanUnitStd(), RandomCrop(16, keys=("data", "seg")))
        dl = DataLoader(data, batch_size=8, shuffle=True, gpu_transforms=trafos, device=dev)
        stats = []
        for batch in dl:
            stats.append((batch["data"].mean(), (batch["seg"] > 0).float().mean()))
        boxes = SegToBox(keys={"seg": "boxes"})
        with torch.no_grad():
            b = boxes(seg=(data[0]["seg"] == 1).long().to(dev)[0])
        print(f"{len(stats)} augmented batches, fg fraction {torch.stack([s[1] for s in stats]).mean().item():.3f}, "
              f"box {type(b['boxes'])}")

    def train():
        trafos = DropoutCompose(*spatial(), dropout=0.3)
        post = Compose(GaussianNoise(0.0, 0.05), NormZeroMeanUnitStd(), ToDtype(torch.long, keys=("seg",)),
                       OneHot(num_classes=3, keys=("seg",)))
        dl = DataLoader(data, batch_size=8, shuffle=True, gpu_transforms=Compose(trafos, post), device=dev)
        net = nn.Sequential(nn.Conv3d(1, 8, 3, padding=1), nn.InstanceNorm3d(8), nn.ReLU(),
                            nn.Conv3d(8, 8, 3, padding=1), nn.ReLU(), nn.Conv3d(8, 3, 1)).to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=3e-3)
        for _epoch in range(2):
            for batch in dl:
                logits = net(batch["data"])
                target = batch["seg"].float()
                probs = logits.softmax(1)
                inter = (probs * target).sum((2, 3, 4))
                dice = 1 - (2 * inter + 1) / (probs.sum((2, 3, 4)) + target.sum((2, 3, 4)) + 1)
                loss = dice[:, 1:].mean() + F.cross_entropy(logits, target.argmax(1))
                opt.zero_grad()
                loss.backward()
                opt.step()
        print(f"segmentation loss {loss.item():.3f}")
    return {"augment": augment, "train": train}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

class _Box:
    """The few members of a gym `Box` space that the SAC script reads: shape, high, low, seed, sample."""

    def __init__(self, low, high):
        import numpy as np
        self.low, self.high = np.asarray(low, dtype=np.float32), np.asarray(high, dtype=np.float32)
        self.shape = self.low.shape
        self._rng = np.random.RandomState(0)

    def seed(self, s):
        import numpy as np
        self._rng = np.random.RandomState(s)

    def sample(self):
        return self._rng.uniform(self.low, self.high).astype("float32")


class _ReacherEnv:
    """A synthetic continuous-control task in the old gym API (reset -> obs; step -> obs, reward, done, info):
    a 2-D point mass pushed by a bounded force towards a random goal; episodes end after `_max_episode_steps`
    or on reaching it."""

    def __init__(self, max_steps=8):
        import numpy as np
        self._np, self._max_episode_steps = np, max_steps
        self.observation_space = _Box(-np.ones(6) * 10, np.ones(6) * 10)
        self.action_space = _Box(-np.ones(2), np.ones(2))
        self._rng = np.random.RandomState(0)

    def seed(self, s):
        self._rng = self._np.random.RandomState(s)

    def _obs(self):
        return self._np.concatenate([self.pos, self.vel, self.goal - self.pos]).astype("float32")

    def reset(self):
        self.pos, self.vel = self._rng.uniform(-1, 1, 2), self._np.zeros(2)
        self.goal, self.t = self._rng.uniform(-1, 1, 2), 0
        return self._obs()

    def step(self, action):
        a = self._np.clip(action, -1, 1)
        self.vel = 0.9 * self.vel + 0.1 * a
        self.pos = self.pos + 0.1 * self.vel
        self.t += 1
        dist = float(self._np.linalg.norm(self.goal - self.pos))
        done = self.t >= self._max_episode_steps or dist < 0.05
        return self._obs(), -dist - 0.01 * float((a ** 2).sum()), done, {}

    def close(self):
        pass


def _gym_module():
    """A stand-in `gym` module whose `make` returns the synthetic task (the SAC script's MuJoCo tasks need the
    old gym and mujoco-py, which do not install on Python 3.12)."""
    mod = types.ModuleType("gym")
    mod.make = lambda name, **kw: _ReacherEnv()
    return mod


def _sac(dev, name: str, extra: list, stop: int):
    """pranz24/pytorch-soft-actor-critic's main.py as is (`--env-name PointReacher-v0 --batch_size 32
    --start_steps 100 --hidden_size 64 --replay_size 10000`, `--cuda` with a GPU), on the synthetic task above in
    episodes of 8 steps: random actions for 100 steps, then the policy's; an update of critic and policy per
    step once 32 transitions are stored; every 10th episode, 10 evaluation episodes. The window spans the 2nd to
    the `stop`-th `backward`: the updates of about 5 to 12 episodes, the first evaluation included."""
    root = _need_repo("sac")
    tmp = hc._tmp()
    argv = ["--env-name", "PointReacher-v0", "--batch_size", "32", "--start_steps", "100", "--hidden_size", "64",
            "--replay_size", "10000", "--num_steps", "2000", *extra]
    if dev.type == "cuda":
        argv.append("--cuda")

    def window():
        saved = sys.modules.get("gym")
        sys.modules["gym"] = _gym_module()
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, stop, stop_script=True):
                hc.run_script(root / "main.py", argv, tmp)
        finally:
            if saved is None:
                sys.modules.pop("gym", None)
            else:
                sys.modules["gym"] = saved
    return {"train_window": window}


def sac_gaussian(dev):
    """The Gaussian policy with automatic entropy tuning (`--automatic_entropy_tuning True`): three backward
    passes an update (critic, policy, temperature); the window is the 2nd to the 150th."""
    return _sac(dev, "sac.gaussian", ["--automatic_entropy_tuning", "True"], 150)


def sac_deterministic(dev):
    """The deterministic policy (`--policy Deterministic`, no entropy term): two backward passes an update; the
    window is the 2nd to the 110th."""
    return _sac(dev, "sac.deterministic", ["--policy", "Deterministic"], 110)


def _graph_dataset(root: Path, name: str, n: int = 160, seed: int = 0) -> None:
    """A graph classification set in the layout of powerful-gnns' dataset folder (`dataset/NAME/NAME.txt`: the
    number of graphs; per graph `n_nodes label`, then per node `tag n_neighbours neighbours...`): class 0 random
    trees, class 1 trees with extra edges closing triangles; 10 to 24 nodes, 3 node tags."""
    import numpy as np
    rng = np.random.default_rng(seed)
    lines = [str(n)]
    for gi in range(n):
        label = gi % 2
        k = int(rng.integers(10, 25))
        adj = [set() for _ in range(k)]
        for v in range(1, k):
            u = int(rng.integers(0, v))
            adj[u].add(v)
            adj[v].add(u)
        if label:
            for _ in range(int(rng.integers(2, 5))):
                v = int(rng.integers(0, k))
                nb = sorted(adj[v])
                if len(nb) >= 2:
                    a, b = rng.choice(nb, 2, replace=False)
                    adj[int(a)].add(int(b))
                    adj[int(b)].add(int(a))
        lines.append(f"{k} {label}")
        for v in range(k):
            lines.append(" ".join(str(w) for w in [int(rng.integers(0, 3)), len(adj[v]), *sorted(adj[v])]))
    (root / "dataset" / name).mkdir(parents=True)
    (root / "dataset" / name / f"{name}.txt").write_text("\n".join(lines) + "\n")


def _gin(dev, name: str, extra: list):
    """weihua916/powerful-gnns' main.py as is (`--dataset SYN --epochs 3 --iters_per_epoch 20`, the GPU picked by
    the script when there is one, as `cuda:0`), run from a temporary folder holding the synthetic set above; the
    repository's root on the path for its `util` and `models`, and its `models` folder for the `mlp` that
    graphcnn.py imports from the path it appends ("models/", as run from the root). The window spans the 2nd to
    the 30th `backward`: the rest of the first epoch, its train and test accuracy passes, and the start of the
    second."""
    root = _need_repo("gin")
    tmp = Path(hc._tmp())
    _graph_dataset(tmp, "SYN")
    argv = ["--dataset", "SYN", "--epochs", "3", "--iters_per_epoch", "20", "--hidden_dim", "32", *extra]

    def window():
        sys.path.insert(0, str(root / "models"))  # its graphcnn.py appends "models/" (run from the root) for `mlp`
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 30, stop_script=True):
                hc.run_script(root / "main.py", argv, str(tmp))
        finally:
            sys.path.remove(str(root / "models"))
            for m in [m for m in sys.modules if m in ("models", "mlp") or m.startswith("models.")]:
                del sys.modules[m]
    return {"train_window": window}


def gin_sum(dev):
    """GIN with sum aggregation and pooling and a learnt epsilon (`--learn_eps`): its default."""
    return _gin(dev, "gin.sum", ["--learn_eps"])


def gin_average(dev):
    """GIN with max neighbour pooling and average graph pooling, node degrees as tags (`--neighbor_pooling_type
    max --graph_pooling_type average --degree_as_tag`)."""
    return _gin(dev, "gin.average", ["--neighbor_pooling_type", "max", "--graph_pooling_type", "average",
                                     "--degree_as_tag"])


MODELS = [
    # name, package, builder
    ("mmengine.runner", "mmengine", mmengine_runner),
    ("torchpme.electrostatics", "torchpme", torchpme_electrostatics),
    ("rtdl_num_embeddings.tabular", "rtdl_num_embeddings", rtdl_tabular),
    ("torch_kf.tracking", "torch_kf", torchkf_tracking),
    ("performer_pytorch.attention", "performer_pytorch", performer_attention),
    ("trak.attribution", "trak", trak_attribution),
    ("sinabs.snn", "sinabs", sinabs_snn),
    ("rising.augment", "rising", rising_augment),
    ("sac.gaussian", "sac", sac_gaussian),
    ("sac.deterministic", "sac", sac_deterministic),
    ("gin.sum", "gin", gin_sum),
    ("gin.average", "gin", gin_average),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh21", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
