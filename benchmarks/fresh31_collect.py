"""Record the syncs of a thirty-second set, `fresh31` (a sealed test set): libraries and training code nobody here read.

`fresh31` is recorded the same way as `fresh9` to `fresh29` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; tyxe's `fit(..., device=)` moves each batch
to the device it is given): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh31), names m to z: mdmm (the modified
  differential method of multipliers: equality, inequality and bound constraints on a loss), pydssp (DSSP secondary
  structure assignment and backbone hydrogen-bond maps in PyTorch), routing_transformer (routing-transformer:
  k-means routed sparse attention, language model, encoder-decoder, autoregressive generation), soft_moe_pytorch
  (soft-moe-pytorch: soft mixture of experts, with dynamic slots), st_moe_pytorch (st-moe-pytorch: top-n routed
  sparse mixture of experts with capacity, balance and router z losses), torch_runstats (torch-runstats: running
  statistics over batches, by index, with scatter reductions), torchdeq (deep equilibrium models: fixed-point
  solvers, implicit and phantom gradients, normalisation, Jacobian regularisation) and tyxe (Bayesian neural
  networks on Pyro: variational and MCMC inference over a PyTorch network); + pyro-ppl 1.8.6 and pyro-api (tyxe's:
  it calls `pyro.util.deep_getattr`, gone from pyro-ppl 1.9),
  local-attention, hyper-connections, torch-einops-utils, mixture-of-experts and product-key-memory
  (routing-transformer's), CoLT5-attention and beartype
  (st-moe-pytorch's). Their other needs (numpy, einops, opt_einsum, tqdm, packaging, torchvision) are on the GPU
  machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh31/repos/<name>:
  emited/VariationalRecurrentNeuralNetwork (train.py as is: a variational RNN on MNIST rows, MNIST's download
  answered by synthetic digits) and kimhc6028/relational-networks (main.py as is: a relation network and its
  CNN-MLP baseline on Sort-of-CLEVR, made by the repository's own generator script at a smaller size; it imports
  torch.utils.tensorboard's `SummaryWriter`, answered by a stub).

    python benchmarks/fresh31_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh31_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh31 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh31 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh31"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh31", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh31/repos/<name>)
REPOS = {
    "vrnn": ("emited/VariationalRecurrentNeuralNetwork", "0f23c87d11597ecf50ecbbf1dd37429861fd7aca", ["train.py", "model.py"]),  # noqa: E501
    "relnet": ("kimhc6028/relational-networks", "9c340d50636c022a7b81f5d10ec1590a2eb09b25",
               ["main.py", "model.py", "sort_of_clevr_generator.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["mdmm==0.1.3", "pydssp==0.9.1", "routing-transformer==1.6.1", "local-attention==1.11.2",
          "mixture-of-experts==0.2.3", "product-key-memory==0.3.0", "soft-moe-pytorch==0.1.9",
          "st-moe-pytorch==0.1.8", "CoLT5-attention==0.11.2", "beartype==0.23.1", "torch-runstats==0.2.0",
          "torchdeq==0.1.0", "tyxe==0.0.2", "pyro-ppl==1.8.6", "pyro-api==0.1.2", "hyper-connections==0.4.11",
          "torch-einops-utils==0.2.0", "netcal==1.4.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"mdmm": "mdmm", "netcal": "netcal", "pydssp": "pydssp", "routing_transformer": "routing-transformer",
         "soft_moe_pytorch": "soft-moe-pytorch", "st_moe_pytorch": "st-moe-pytorch",
         "torch_runstats": "torch-runstats", "torchdeq": "torchdeq", "tyxe": "tyxe", "pyro": "pyro-ppl",
         "local_attention": "local-attention", "mixture_of_experts": "mixture-of-experts",
         "product_key_memory": "product-key-memory", "colt5_attention": "CoLT5-attention", "numpy": "numpy",
         "einops": "einops", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh31/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh31_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _classes(n, d=16, k=4, seed=0):
    """n points of k Gaussian classes in d dimensions (CPU tensors): features, labels."""
    g = torch.Generator().manual_seed(seed)
    centres = 2.0 * torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    return centres[y] + torch.randn(n, d, generator=g), y


# ============================================================================================
# Libraries
# ============================================================================================

# -- torchdeq: the README's recipe, `get_deq(...)` (`f_solver=`, `f_max_iter=`, `b_solver=`, `core=`, `ift=`) and
#    `z_out, info = deq(func, z_init)` on a layer whose function is a contraction, with `apply_norm` / `reset_norm`,
#    `fp_correction` over the returned states and `jac_reg`; the solvers by `get_solver(key)`
#    (`solver(func, x0, max_iter=, tol=, stop_mode=)`), `power_method` and `mixed_init` ------------------------------

def torchdeq_deq(dev):
    import torchdeq
    from torchdeq import apply_norm, fp_correction, get_deq, get_solver, jac_reg, mixed_init, power_method, reset_norm

    class DEQLayer(nn.Module):
        def __init__(self, d=32, d_in=16, **deq_kw):
            super().__init__()
            self.inj = nn.Linear(d_in, d)
            self.f = nn.Linear(d, d)
            self.out = nn.Linear(d, 4)
            self.deq = get_deq(**deq_kw)
            self.d = d

        def forward(self, x):
            u = self.inj(x)

            def func(z, *args, **kwargs):
                return torch.tanh(self.f(z) + u)
            z0 = torch.zeros(x.shape[0], self.d, device=x.device)
            z_out, info = self.deq(func, z0)
            return [self.out(z) for z in z_out], info, func, z_out

    def solvers():
        torch.manual_seed(0)
        W = 0.5 * torch.randn(64, 64, device=dev) / math.sqrt(64)
        b = torch.randn(8, 64, device=dev)

        def func(z, *args, **kwargs):
            return torch.tanh(z @ W.T + b)
        for key in ("anderson", "broyden", "fixed_point_iter", "simple_fixed_point_iter"):
            solver = get_solver(key)
            for stop_mode in ("abs", "rel"):
                z, traj, info = solver(func, torch.zeros(8, 64, device=dev), max_iter=30, tol=1e-5,
                                       stop_mode=stop_mode)
                print(f"{key}/{stop_mode}: nstep {info['nstep'].float().mean().item():.1f}, "
                      f"residual {(func(z) - z).norm().item():.2e}")
        z0 = mixed_init((8, 64), device=dev)
        print(f"mixed init {z0.shape}")

    def train(core, **kw):
        def run():
            x, y = _classes(128, seed=1)
            x, y = x.to(dev), y.to(dev)
            torch.manual_seed(0)
            model = DEQLayer(core=core, **kw).to(dev)
            apply_norm(model, "weight_norm")
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            for step in range(12):  # noqa: B007
                reset_norm(model)
                logits, info, func, z_out = model(x)
                loss, losses = fp_correction(nn.CrossEntropyLoss(), (logits, [y] * len(logits)),
                                             return_loss_values=True)
                z = z_out[-1].detach().requires_grad_()
                jr = jac_reg(func(z), z)
                (loss + 0.1 * jr).backward()
                opt.step()
                opt.zero_grad()
            acc = (logits[-1].argmax(-1) == y).float().mean().item()
            print(f"{core}: loss {loss.item():.3f}, acc {acc:.2f}, abs {info['abs_lowest'].mean().item():.2e}, "
                  f"losses {[round(v, 3) for v in losses]}")
            model.eval()
            with torch.no_grad():
                logits, info, func, z_out = model(x)
            print(f"{core} eval: nstep {info['nstep'].float().mean().item():.1f}, "
                  f"sradius {info.get('sradius', torch.zeros(1)).float().mean().item():.3f}")
        return run

    def spectral():
        torch.manual_seed(0)
        model = DEQLayer(f_solver="anderson", f_max_iter=20).to(dev)
        x = torch.randn(16, 16, device=dev)
        u = model.inj(x)
        z = torch.zeros(16, 32, device=dev).requires_grad_()
        f0 = torch.tanh(model.f(z) + u)
        _, sradius = power_method(f0, z, n_iters=50)
        print(f"power method sradius {sradius.mean().item():.3f}")
        deq = get_deq(f_solver="broyden", f_max_iter=25)
        z_out, info = deq(lambda zz: torch.tanh(model.f(zz) + u), torch.zeros(16, 32, device=dev),
                          sradius_mode=True)
        print(f"sradius mode {info['sradius'].mean().item():.3f}, {torchdeq.__name__}")

    return {"solvers": solvers,
            "indexing": train("indexing", f_solver="anderson", f_max_iter=25, b_max_iter=15, n_states=2),
            "sliced": train("sliced", f_solver="fixed_point_iter", f_max_iter=20, n_states=2),
            "ift": train("indexing", ift=True, f_solver="broyden", b_solver="broyden", f_max_iter=20,
                         b_max_iter=20),
            "spectral": spectral}


# -- netcal: the docs' calibration recipe, `TemperatureScaling` / `LogisticCalibration` / `BetaCalibration`
#    (`method=` 'momentum', 'variational' or 'mcmc', `momentum_epochs=`, `vi_epochs=`, `mcmc_steps=`, `detection=`,
#    `use_cuda=` the device) fitted with `fit(X, y, tensorboard=False)` on synthetic over-confident softmax outputs
#    and box confidences, then `transform(X, num_samples=)`; it imports torch.utils.tensorboard's `SummaryWriter`,
#    answered by a stub (`_tensorboard_stub`, below) since `tensorboard=False` never writes -------------------------

def _overconfident(n=512, k=5, seed=0):
    """Softmax outputs (n, k) of an over-confident classifier and their labels (NumPy)."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, k, (n,), generator=g)
    logits = torch.randn(n, k, generator=g) + 1.5 * F.one_hot(y, k) * (torch.rand(n, 1, generator=g) > 0.3)
    return torch.softmax(3.0 * logits, -1).numpy(), y.numpy()


def netcal_calibrate(dev):
    use_cuda = str(dev) if dev.type == "cuda" else False

    def fit(cls_name, method, detection=False, **kw):
        def run():
            with _tensorboard_stub():
                import netcal.scaling as scaling
            cls = getattr(scaling, cls_name)
            if detection:
                X, y = _overconfident(seed=1)
                g = torch.Generator().manual_seed(1)
                conf = X.max(-1)
                cx = torch.rand(len(conf), generator=g).numpy()
                Xd, yd = np.stack([conf, cx], -1), (X.argmax(-1) == y).astype(np.int64)
                cal = cls(method=method, detection=True, use_cuda=use_cuda, **kw)
                cal.fit(Xd, yd, tensorboard=False)
                out = cal.transform(Xd) if method == "momentum" else cal.transform(Xd, num_samples=20)
            else:
                X, y = _overconfident()
                cal = cls(method=method, use_cuda=use_cuda, **kw)
                cal.fit(X, y, tensorboard=False)
                out = cal.transform(X) if method == "momentum" else cal.transform(X, num_samples=20)
            print(f"{cls_name}/{method} detection={detection}: {np.asarray(out).shape}")
        return run

    import numpy as np
    return {"temperature": fit("TemperatureScaling", "momentum", detection=True, momentum_epochs=60),
            "temperature_vi": fit("TemperatureScaling", "variational", vi_epochs=40),
            "logistic_vi": fit("LogisticCalibration", "variational", vi_epochs=40),
            "logistic_detection": fit("LogisticCalibration", "momentum", detection=True, momentum_epochs=60),
            "beta_vi": fit("BetaCalibration", "variational", detection=True, vi_epochs=40),
            "temperature_mcmc": fit("TemperatureScaling", "mcmc", mcmc_steps=10, mcmc_warmup_steps=5)}


# -- pydssp: the README's `pydssp.get_hbond_map(coord)` and `pydssp.assign(coord, out_type=)` on backbone coordinates
#    (N, CA, C, O per residue, `(batch, L, 4, 3)` tensors on the device) of synthetic helices and strands, with noise,
#    each output type; and `read_pdbtext` of a PDB text written from them -----------------------------------------

def _backbone(L, kind, seed=0, noise=0.1):
    """Approximate backbone atoms (L, 4, 3) of an alpha helix or a beta strand (CPU)."""
    g = torch.Generator().manual_seed(seed)
    i = torch.arange(L, dtype=torch.float32)
    if kind == "helix":
        rise, twist, r = 1.5, math.radians(100.0), 2.3
        ca = torch.stack([r * torch.cos(twist * i), r * torch.sin(twist * i), rise * i], -1)
    else:
        ca = torch.stack([3.3 * i, 0.9 * (-1) ** i, torch.zeros(L)], -1)
    offs = torch.tensor([[-1.2, 0.6, -0.5], [0.0, 0.0, 0.0], [1.2, 0.5, 0.4], [1.5, 1.6, 0.9]])
    coord = ca[:, None, :] + offs[None]
    return coord + noise * torch.randn(coord.shape, generator=g)


def pydssp_assign(dev):
    import pydssp

    def assign():
        for noise in (0.05, 0.3):
            coords = torch.stack([_backbone(48, "helix", s, noise) for s in range(3)]
                                 + [_backbone(48, "strand", s, noise) for s in range(3)]).to(dev)
            hb = pydssp.get_hbond_map(coords)
            print(f"hbond map {tuple(hb.shape)} sum {hb.sum().item():.1f}")
            for out_type in ("c3", "index", "onehot"):
                ss = pydssp.assign(coords, out_type=out_type)
                print(f"{out_type}: {type(ss).__name__} {getattr(ss, 'shape', None)}")

    def single():
        for L, kind in ((30, "helix"), (40, "strand"), (64, "helix")):
            coord = _backbone(L, kind, L).to(dev)
            hb = pydssp.get_hbond_map(coord)
            ss = pydssp.assign(coord, out_type="c3")
            print(f"{kind} {L}: {''.join(ss) if not torch.is_tensor(ss) else ss.shape}, hbonds {hb.sum().item():.1f}")
            mask = torch.ones(L, device=dev)
            mask[::5] = 0
            ss = pydssp.assign(coord, donor_mask=mask, out_type="index")
            print(f"masked: {ss[:10]}")

    def pdb():
        coord = _backbone(24, "helix", 3)
        names = ("N", "CA", "C", "O")
        lines = []
        k = 1
        for r in range(coord.shape[0]):
            for a in range(4):
                x, y, z = coord[r, a].tolist()
                lines.append(f"ATOM  {k:5d}  {names[a]:<3s} ALA A{r + 1:4d}    {x:8.3f}{y:8.3f}{z:8.3f}  1.00  0.00"
                             f"           {names[a][0]}")
                k += 1
        parsed = pydssp.read_pdbtext("\n".join(lines) + "\nEND\n")
        t = torch.as_tensor(parsed, dtype=torch.float32).to(dev)
        for _ in range(3):
            ss = pydssp.assign(t, out_type="c3")
        print(f"pdb {tuple(t.shape)}: {ss}")

    return {"assign": assign, "single": single, "pdb": pdb}


# -- routing_transformer (routing-transformer): the README's `RoutingTransformerLM(num_tokens=, dim=, depth=,
#    max_seq_len=, heads=, window_size=, causal=, ...)` in an `AutoregressiveWrapper`, trained with
#    `loss, aux_loss = model(x, return_loss=True)` (the k-means updated on backward), then `generate(...)`; a
#    mixture-of-experts / product-key-memory variant; and `RoutingTransformerEncDec` trained and generating -------

def routing_lm(dev):
    from routing_transformer import AutoregressiveWrapper, RoutingTransformerEncDec, RoutingTransformerLM

    def lm(**kw):
        def run():
            torch.manual_seed(0)
            model = AutoregressiveWrapper(RoutingTransformerLM(num_tokens=64, dim=64, depth=2, max_seq_len=128,
                                                               heads=4, window_size=16, causal=True, **kw)).to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=3e-4)
            x = torch.randint(0, 64, (4, 129), device=dev)
            for _ in range(6):
                res = model(x, return_loss=True)
                loss = res[0] + res[1] if isinstance(res, tuple) else res
                loss.backward()
                opt.step()
                opt.zero_grad()
            model.eval()
            start = torch.randint(0, 64, (2, 8), device=dev)
            out = model.generate(start, 24, eos_token=5)
            print(f"lm {kw}: loss {loss.item():.3f}, generated {tuple(out.shape)}")
        return run

    def encdec():
        torch.manual_seed(0)
        model = RoutingTransformerEncDec(dim=64, enc_num_tokens=64, enc_depth=2, enc_heads=4, enc_max_seq_len=64,
                                         enc_window_size=16, dec_num_tokens=64, dec_depth=2, dec_heads=4,
                                         dec_max_seq_len=64, dec_window_size=16).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=3e-4)
        src = torch.randint(0, 64, (2, 64), device=dev)
        tgt = torch.randint(0, 64, (2, 65), device=dev)
        for _ in range(5):
            res = model(src, tgt, return_loss=True)
            loss = res[0] + res[1] if isinstance(res, tuple) else res
            loss.backward()
            opt.step()
            opt.zero_grad()
        model.eval()
        out = model.generate(src, torch.zeros(2, 1, dtype=torch.long, device=dev), 16, eos_token=3)
        print(f"encdec loss {loss.item():.3f}, generated {tuple(out.shape)}")

    return {"lm": lm(), "moe_pkm": lm(moe_layers=(2,), pkm_layers=(1,), n_local_attn_heads=2), "encdec": encdec}


# -- st_moe_pytorch (st-moe-pytorch): the README's `MoE(dim=, num_experts=, gating_top_n=, threshold_train=,
#    threshold_eval=, capacity_factor_train=, capacity_factor_eval=, balance_loss_coef=, router_z_loss_coef=)` with
#    `out, total_aux_loss, balance_loss, router_z_loss = moe(x)`, trained a few steps and evaluated, top-2 and top-3,
#    and inside a `SparseMoEBlock(moe, add_ff_before=, add_ff_after=)` ---------------------------------------------

def st_moe(dev):
    from st_moe_pytorch import MoE, SparseMoEBlock

    def run_moe(block, **kw):
        def run():
            torch.manual_seed(0)
            moe = MoE(dim=64, num_experts=8, threshold_train=0.2, threshold_eval=0.2, capacity_factor_train=1.25,
                      capacity_factor_eval=2.0, balance_loss_coef=1e-2, router_z_loss_coef=1e-3, **kw)
            model = (SparseMoEBlock(moe, add_ff_before=True, add_ff_after=True) if block else moe).to(dev)
            head = nn.Linear(64, 1).to(dev)
            opt = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=1e-3)
            x = torch.randn(4, 128, 64, device=dev)
            y = x.mean(-1, keepdim=True)
            for _ in range(8):
                out, total_aux_loss, balance_loss, router_z_loss = model(x)
                loss = F.mse_loss(head(out), y) + total_aux_loss
                loss.backward()
                opt.step()
                opt.zero_grad()
            model.eval()
            with torch.no_grad():
                out, total_aux_loss, balance_loss, router_z_loss = model(x)
            print(f"moe {kw} block={block}: loss {loss.item():.4f}, balance {balance_loss.item():.4f}, "
                  f"z {router_z_loss.item():.4f}")
        return run

    return {"top2": run_moe(False, gating_top_n=2), "top3": run_moe(False, gating_top_n=3),
            "block": run_moe(True, gating_top_n=2)}


# -- soft_moe_pytorch (soft-moe-pytorch): the README's `SoftMoE(dim=, seq_len=, num_experts=)` and
#    `DynamicSlotsSoftMoE(dim=, num_experts=, geglu=)` (with a padding mask) trained a few steps on a token regression
#    task and evaluated -----------------------------------------------------------------------------------------

def soft_moe(dev):
    from soft_moe_pytorch import DynamicSlotsSoftMoE, SoftMoE

    def train(dynamic):
        def run():
            torch.manual_seed(0)
            moe = (DynamicSlotsSoftMoE(dim=64, num_experts=4, geglu=True) if dynamic
                   else SoftMoE(dim=64, seq_len=128, num_experts=8)).to(dev)
            opt = torch.optim.Adam(moe.parameters(), lr=1e-3)
            x = torch.randn(4, 128, 64, device=dev)
            mask = torch.ones(4, 128, dtype=torch.bool, device=dev)
            mask[:, 100:] = False
            for _ in range(8):
                out = moe(x, mask=mask) if dynamic else moe(x)
                loss = F.mse_loss(out, x.flip(-1))
                loss.backward()
                opt.step()
                opt.zero_grad()
            moe.eval()
            with torch.no_grad():
                out = moe(x, mask=mask) if dynamic else moe(x)
            print(f"soft moe dynamic={dynamic}: loss {loss.item():.4f}, out {tuple(out.shape)}")
        return run

    return {"soft": train(False), "dynamic": train(True)}


# -- mdmm: the README's recipe, constraints on a network's loss terms (`EqConstraint(fn, value)`,
#    `MaxConstraint(fn, max)`, `MinConstraint`, `BoundConstraintHard`), `MDMM([...])`, `make_optimizer(params, lr=)`,
#    and `mdmm_return = mdmm_module(loss)` with `mdmm_return.value.backward()` --------------------------------------

def mdmm_constrained(dev):
    import mdmm

    def task(kind):
        def run():
            x, y = _classes(256, seed=2)
            x, y = x.to(dev), y.to(dev)
            torch.manual_seed(0)
            model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4)).to(dev)
            if kind == "eq":
                cons = [mdmm.EqConstraint(lambda: model[0].weight.norm(), 4.0)]
            elif kind == "ineq":
                cons = [mdmm.MaxConstraint(lambda: model[2].weight.abs().mean(), 0.05),
                        mdmm.MinConstraint(lambda: model[0].bias.mean(), 0.1)]
            else:
                cons = [mdmm.BoundConstraintHard(lambda: model[2].bias.sum(), -0.5, 0.5),
                        mdmm.MaxConstraintHard(lambda: model[0].weight.pow(2).mean(), 0.02)]
            mdmm_module = mdmm.MDMM(cons).to(dev)
            opt = mdmm_module.make_optimizer(model.parameters(), lr=2e-3)
            for _ in range(20):
                loss = F.cross_entropy(model(x), y)
                mdmm_return = mdmm_module(loss)
                opt.zero_grad()
                mdmm_return.value.backward()
                opt.step()
            print(f"mdmm {kind}: loss {loss.item():.3f}, value {mdmm_return.value.item():.3f}, "
                  f"fn {[round(float(f), 3) for f in mdmm_return.fn_values]}")
        return run

    return {"eq": task("eq"), "ineq": task("ineq"), "hard": task("hard")}


# -- torch_runstats (torch-runstats): the README's `RunningStats(dim=, reduction=, reduce_dims=, ignore_nan=)`,
#    `accumulate_batch(batch, accumulate_by=)` over batches of samples grouped by index, `current_result()`,
#    `batch_result`, `n`, `reset()`; and the `scatter` / `scatter_mean` / `scatter_std` functions ---------------------

def runstats_stats(dev):
    from torch_runstats import Reduction, RunningStats
    from torch_runstats.scatter import scatter, scatter_mean, scatter_std

    def running():
        torch.manual_seed(0)
        for red in (Reduction.MEAN, Reduction.RMS):
            for by in (False, True):
                rs = RunningStats(dim=(3,), reduction=red)
                rs = rs.to(dev) or rs
                for step in range(6):
                    batch = torch.randn(32, 3, device=dev) + step
                    idx = torch.randint(0, 4, (32,), device=dev) if by else None
                    rs.accumulate_batch(batch, accumulate_by=idx)
                res = rs.current_result()
                res = res if torch.is_tensor(res) else torch.stack(list(res))
                print(f"{red} by={by}: {tuple(res.shape)} n {rs.n.sum().item()} {res.float().mean().item():.3f}")
                rs.reset()

    def reduce_dims():
        torch.manual_seed(1)
        rs = RunningStats(dim=(4, 5), reduction=Reduction.MEAN, reduce_dims=(1,), ignore_nan=True)
        rs = rs.to(dev) or rs
        for step in range(6):  # noqa: B007
            batch = torch.randn(16, 4, 5, device=dev)
            batch[batch > 2.0] = float("nan")
            rs.accumulate_batch(batch, accumulate_by=torch.randint(0, 3, (16,), device=dev))
        print(f"reduce_dims {rs.current_result().nan_to_num().sum().item():.3f}")

    def scatters():
        torch.manual_seed(2)
        src = torch.randn(200, 8, device=dev)
        index = torch.randint(0, 10, (200,), device=dev)
        for fn in (scatter, scatter_mean, scatter_std):
            out = fn(src, index, dim=0)
            print(f"{fn.__name__}: {tuple(out.shape)} {out.sum().item():.3f}")
        out = scatter(src, index, dim=0, dim_size=12, reduce="sum")
        print(f"dim_size {tuple(out.shape)}")

    return {"running": running, "reduce_dims": reduce_dims, "scatter": scatters}


# -- tyxe: the README's recipe, `VariationalBNN(net, prior, likelihood, guide)` with `priors.IIDPrior(dist.Normal(...))`
#    (its parameters on the device), `likelihoods.HomoskedasticGaussian(n, scale=)` / `likelihoods.Categorical(n)`,
#    `likelihoods.Bernoulli(n, event_dim=)`, `partial(guides.AutoNormal, init_scale=)`, `fit(loader,
#    pyro.optim.Adam(...), num_epochs, device=)`, `predict(x, num_predictions=)` and `evaluate(x, y, num_predictions=)`,
#    under `tyxe.poutine.local_reparameterization()` and `flipout()` too; and `MCMC_BNN` with an HMC kernel -------

def tyxe_bnn(dev):
    from functools import partial

    import pyro
    import pyro.distributions as dist
    import tyxe

    def prior():
        return tyxe.priors.IIDPrior(dist.Normal(torch.tensor(0.0, device=dev), torch.tensor(1.0, device=dev)))

    def loader(x, y, bs):
        return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=bs, shuffle=True)

    def regression():
        pyro.clear_param_store()
        torch.manual_seed(0)
        x = torch.linspace(-2, 2, 128).unsqueeze(-1)
        y = torch.sin(3 * x) + 0.1 * torch.randn_like(x)
        net = nn.Sequential(nn.Linear(1, 32), nn.Tanh(), nn.Linear(32, 1)).to(dev)
        lik = tyxe.likelihoods.HomoskedasticGaussian(len(x), scale=0.1)
        bnn = tyxe.VariationalBNN(net, prior(), lik, partial(tyxe.guides.AutoNormal, init_scale=0.01))
        elbos = []
        bnn.fit(loader(x, y, 32), pyro.optim.Adam({"lr": 1e-2}), 4, device=dev,
                callback=lambda b, i, e: elbos.append(e))
        xt, yt = x.to(dev), y.to(dev)
        m, sd = bnn.predict(xt, num_predictions=8)
        err, ll = bnn.evaluate(xt, yt, num_predictions=8)
        print(f"regression: elbo {elbos[-1]:.1f}, sd {sd.mean().item():.3f}, err {float(err):.3f}, ll {float(ll):.1f}")

    def classification():
        pyro.clear_param_store()
        x, y = _classes(256, seed=3)
        net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)).to(dev)
        lik = tyxe.likelihoods.Categorical(len(x))
        bnn = tyxe.VariationalBNN(net, prior(), lik, partial(tyxe.guides.AutoNormal, init_scale=0.01))
        bnn.fit(loader(x, y, 64), pyro.optim.Adam({"lr": 1e-2}), 3, device=dev, num_particles=2)
        xt, yt = x.to(dev), y.to(dev)
        probs = bnn.predict(xt, num_predictions=8)
        err, ll = bnn.evaluate(xt, yt, num_predictions=8)
        print(f"classification: {tuple(probs.shape)}, err {float(err):.3f}, ll {float(ll):.1f}")

    def binary(handler):
        def run():
            pyro.clear_param_store()
            x, y = _classes(256, k=2, seed=4)
            net = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(dev)
            lik = tyxe.likelihoods.Bernoulli(len(x), event_dim=1)
            bnn = tyxe.VariationalBNN(net, prior(), lik, partial(tyxe.guides.AutoNormal, init_scale=0.01))
            yf = y.float().unsqueeze(-1)
            with getattr(tyxe.poutine, handler)():
                bnn.fit(loader(x, yf, 64), pyro.optim.Adam({"lr": 1e-2}), 3, device=dev)
                err, ll = bnn.evaluate(x.to(dev), yf.to(dev), num_predictions=8)
            print(f"bernoulli {handler}: err {float(err):.3f}, ll {float(ll):.1f}")
        return run

    def mcmc():
        pyro.clear_param_store()
        torch.manual_seed(0)
        x = torch.linspace(-2, 2, 64).unsqueeze(-1)
        y = torch.sin(3 * x) + 0.1 * torch.randn_like(x)
        net = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1)).to(dev)
        lik = tyxe.likelihoods.HomoskedasticGaussian(len(x), scale=0.1)
        bnn = tyxe.MCMC_BNN(net, prior(), lik, partial(pyro.infer.mcmc.HMC, step_size=1e-3, num_steps=5))
        bnn.fit(loader(x, y, 64), 12, device=dev, warmup_steps=4, disable_progbar=True)
        m, sd = bnn.predict(x.to(dev), num_predictions=6)
        print(f"mcmc: sd {sd.mean().item():.3f}")

    return {"regression": regression, "classification": classification,
            "local_reparam": binary("local_reparameterization"), "flipout": binary("flipout"), "mcmc": mcmc}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

class _synthetic_mnist:
    """torchvision's `datasets.MNIST(...)`, which train.py builds (with `download=True`) for its loaders, answered by
    synthetic digits: `n` images (a ring or a cross per class, its size by class, at a random place, with noise) as
    (1, 28, 28) tensors in [0, 1], what `transforms.ToTensor()` gives, and their labels."""

    def __init__(self, n_train: int = 64, n_test: int = 16, seed: int = 0):
        self.sizes, self.seed = {True: n_train, False: n_test}, seed

    def __enter__(self):
        import torchvision.datasets

        sizes, seed = self.sizes, self.seed

        class MNIST(torch.utils.data.Dataset):
            def __init__(self, root, train=True, download=False, transform=None, target_transform=None):
                n = sizes[bool(train)]
                g = torch.Generator().manual_seed(seed + int(train))
                yy, xx = torch.meshgrid(torch.arange(28.0), torch.arange(28.0), indexing="ij")
                self.targets = torch.randint(0, 10, (n,), generator=g)
                imgs = []
                for c in self.targets.tolist():
                    cy, cx = torch.randint(9, 19, (2,), generator=g).tolist()
                    r = 3 + c % 5
                    if c < 5:
                        img = ((torch.hypot(yy - cy, xx - cx) - r).abs() < 1.2).float()
                    else:
                        img = ((((yy - cy).abs() < 1.5) & ((xx - cx).abs() <= r))
                               | (((xx - cx).abs() < 1.5) & ((yy - cy).abs() <= r))).float()
                    imgs.append((0.9 * img + 0.05 * torch.rand(28, 28, generator=g)).clamp(0, 1))
                self.data = torch.stack(imgs)[:, None]

            def __len__(self):
                return len(self.targets)

            def __getitem__(self, i):
                return self.data[i], int(self.targets[i])

        self.mod, self.orig = torchvision.datasets, torchvision.datasets.MNIST
        torchvision.datasets.MNIST = MNIST
        return self

    def __exit__(self, *exc):
        self.mod.MNIST = self.orig


def vrnn_train(dev):
    """emited/VariationalRecurrentNeuralNetwork's train.py as is (its VRNN, x_dim 28, h_dim 100, z_dim 16, batch size
    8, Adam, gradient clipping; on the GPU when there is one, as it decides), run from a temporary folder (its
    saves/ there; matplotlib without a display), with the repository's root on the path for its `model`, and
    MNIST answered by 64 training and 16 test synthetic digits (`_synthetic_mnist`). The window spans the 2nd to the
    20th `backward`: the training steps of two epochs and part of a third, each epoch's first batch printed with a
    sample drawn and shown, each epoch's test pass over its loader and the checkpoint saved."""
    root = _need_repo("vrnn")
    tmp = hc._tmp()
    os.makedirs(os.path.join(tmp, "saves"), exist_ok=True)

    def window():
        import matplotlib
        matplotlib.use("Agg")
        sys.path.insert(0, str(root))
        try:
            with _synthetic_mnist(), hc.window_on(torch.Tensor, "backward", "vrnn.train", "train", dev, 2, 20,
                                                  stop_script=True):
                hc.run_script(root / "train.py", [], tmp)
        finally:
            sys.path.remove(str(root))
            sys.modules.pop("model", None)
    return {"train_window": window}


class _tensorboard_stub:
    """torch.utils.tensorboard (its `SummaryWriter`, which main.py imports and writes to) answered by a stub whose
    methods do nothing, so that the script needs no tensorboard package nor writes event files."""

    def __enter__(self):
        class SummaryWriter:
            def __init__(self, *a, **k):
                pass

            def __getattr__(self, name):
                return lambda *a, **k: None

        stub = types.ModuleType("torch.utils.tensorboard")
        stub.SummaryWriter = SummaryWriter
        self.saved = sys.modules.get("torch.utils.tensorboard")
        sys.modules["torch.utils.tensorboard"] = stub
        return self

    def __exit__(self, *exc):
        if self.saved is None:
            sys.modules.pop("torch.utils.tensorboard", None)
        else:
            sys.modules["torch.utils.tensorboard"] = self.saved


def _relnet(dev, name: str, extra: list, stop: int):
    """kimhc6028/relational-networks' main.py as is (`--epochs 3 --batch-size 32`; on the GPU when there is one, as
    it decides), on Sort-of-CLEVR made by the repository's own sort_of_clevr_generator.py (OpenCV drawings) with 32
    training and 16 test images instead of 9800 and 200 (its two size constants changed in a copy run in the
    temporary folder), run from a temporary folder (its data/, model/ and log csv there), with the repository's
    root on the path for its `model`. The window spans the 2nd to the `stop`-th `backward`: training steps on
    ternary, binary and unary questions with their accuracies and losses, and at the epoch's end the test pass
    and the checkpoint."""
    root = _need_repo("relnet")
    tmp = hc._tmp()

    def window():
        import runpy
        src = (root / "sort_of_clevr_generator.py").read_text()
        src = src.replace("train_size = 9800", "train_size = 32").replace("test_size = 200", "test_size = 16")
        gen = Path(tmp) / "sort_of_clevr_generator_small.py"
        gen.write_text(src)
        saved_argv, saved_cwd = sys.argv, os.getcwd()
        sys.argv = [str(gen)]
        os.chdir(tmp)
        try:
            runpy.run_path(str(gen), run_name="__main__")
        finally:
            sys.argv = saved_argv
            os.chdir(saved_cwd)
        sys.path.insert(0, str(root))
        try:
            with _tensorboard_stub(), hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, stop,
                                                   stop_script=True):
                hc.run_script(root / "main.py", ["--epochs", "3", "--batch-size", "32", *extra], tmp)
        finally:
            sys.path.remove(str(root))
            sys.modules.pop("model", None)
    return {"train_window": window}


def relnet_rn(dev):
    """main.py's relation network (`--model RN`, binary relations); window 2nd to 40th `backward`."""
    return _relnet(dev, "relnet.rn", ["--model", "RN"], 40)


def relnet_cnn_mlp(dev):
    """main.py's CNN-MLP baseline (`--model CNN_MLP`); window 2nd to 40th `backward`."""
    return _relnet(dev, "relnet.cnn_mlp", ["--model", "CNN_MLP"], 40)


MODELS = [
    # name, package, builder
    ("mdmm.constrained", "mdmm", mdmm_constrained),
    ("netcal.calibrate", "netcal", netcal_calibrate),
    ("pydssp.assign", "pydssp", pydssp_assign),
    ("routing_transformer.lm", "routing_transformer", routing_lm),
    ("soft_moe_pytorch.train", "soft_moe_pytorch", soft_moe),
    ("st_moe_pytorch.moe", "st_moe_pytorch", st_moe),
    ("torch_runstats.stats", "torch_runstats", runstats_stats),
    ("torchdeq.deq", "torchdeq", torchdeq_deq),
    ("tyxe.bnn", "tyxe", tyxe_bnn),
    ("vrnn.train", "vrnn", vrnn_train),
    ("relnet.rn", "relnet", relnet_rn),
    ("relnet.cnn_mlp", "relnet", relnet_cnn_mlp),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh31", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
