"""Record the syncs of a twenty-first set, `fresh20` (a sealed test set): libraries and training code nobody here read.

`fresh20` is recorded the same way as `fresh9` to `fresh19` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`): no workload runs under a default-device
context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh20): alias_free_torch (anti-aliased
  activations and resampling: `Activation1d` / `Activation2d` in a small vocoder-like and image network, the up-
  and down-samplers, low-pass filters), azula (diffusion models: `KarrasDenoiser` / `SimpleDenoiser` on its U-Net and
  DiT backbones under VP, VE, cosine and rectified schedules, trained with `loss`, its samplers, and its guidance
  for inverse problems: DPS, RePaint, MMPS), cuequivariance_torch (equivariant operations on irreps, pure-PyTorch
  paths: spherical harmonics, fully connected and channel-wise tensor products, equivariant linear layers, MACE's
  symmetric contraction, rotations) with cuequivariance (its irreps and descriptors), curated_transformers
  (transformer encoders and causal language models with `device=`: BERT, RoBERTa, ALBERT, Llama, GPT-NeoX, Falcon,
  MPT, trained and decoded with key/value caches), delu (deep-learning utilities: `iter_batches`, `NLinear`,
  `EarlyStopping`, `Timer`, `delu.cat`, `delu.to`), fvcore (FAIR's shared code: focal, GIoU and smooth-L1 losses,
  `FlopCountAnalysis` / `ActivationCountAnalysis`, `precise_bn`, `Checkpointer` / `PeriodicCheckpointer`, param
  schedulers, `HistoryBuffer`), hypll (hyperbolic deep learning: Poincaré-ball CNNs and MLPs, hyperbolic
  embeddings, Riemannian optimisers) and loralib (LoRA: `Linear`, `MergedLinear`, `Embedding`, `Conv2d`,
  `mark_only_lora_as_trainable`, `lora_state_dict`);
  + catalogue (curated_transformers'), curated-tokenizers (compiled, its import), yacs and termcolor (fvcore's),
  and, built into wheels by `prepare` from their source distributions, fvcore and iopath. Their other needs
  (numpy, scipy, networkx, sympy, opt-einsum, einops, huggingface-hub, tokenizers, regex, requests, tabulate,
  portalocker, pyyaml, pillow, tqdm, torchvision, torchdiffeq, matplotlib, scikit-learn, tensorboard) are on the GPU
  machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh20/repos/<name>:
  facebookresearch/dlrm (dlrm_s_pytorch.py as is, its README's random-data benchmark on the GPU: the dot
  interaction, and the concatenation interaction with quotient-remainder embeddings; torch took away the
  profiler's `use_cuda` argument, which the collector gives back) and EmilienDupont/augmented-neural-odes
  (main_experiment_img.py as is, which takes the GPU when there is one, on synthetic digits written as the MNIST
  files its loader reads: augmented and plain convolutional neural ODEs).

    python benchmarks/fresh20_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh20_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh20 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh20 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh20"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh20", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh20/repos/<name>)
REPOS = {
    "dlrm": ("facebookresearch/dlrm", "090956ee2319ddd349a42232958aefccfe3f7b0a",
             ["dlrm_s_pytorch.py", "dlrm_data_pytorch.py", "data_utils.py", "data_loader_terabyte.py",
              "extend_distributed.py", "mlperf_logger.py", "optim/rwsadagrad.py", "tricks/md_embedding_bag.py",
              "tricks/qr_embedding_bag.py"]),
    "anode": ("EmilienDupont/augmented-neural-odes", "88d9865fa863069fa65e538ee11eebea934dbbe4",
              ["main_experiment_img.py", "anode/__init__.py", "anode/conv_models.py", "anode/discrete_models.py",
               "anode/models.py", "anode/training.py", "experiments/__init__.py", "experiments/dataloaders.py",
               "experiments/experiments.py", "experiments/experiments_img.py", "viz/__init__.py", "viz/gifs.py",
               "viz/plots.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["alias-free-torch==0.0.6", "azula==0.11.1", "cuequivariance==0.13.0", "cuequivariance-torch==0.13.0",
          "curated-transformers==2.0.1", "curated-tokenizers==2.0.1", "catalogue==2.0.10", "delu==0.0.26",
          "hypll==0.1.1", "loralib==0.1.2", "yacs==0.1.8", "termcolor==3.3.0"]
# needs published as source distributions only, built into wheels by `prepare` (fvcore and its iopath)
SDISTS = ["fvcore==0.1.5.post20221221", "iopath==0.1.10"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"alias_free_torch": "alias-free-torch", "azula": "azula", "cuequivariance": "cuequivariance",
         "cuequivariance_torch": "cuequivariance-torch", "curated_transformers": "curated-transformers",
         "delu": "delu", "fvcore": "fvcore", "iopath": "iopath", "hypll": "hypll", "loralib": "loralib",
         "numpy": "numpy", "scipy": "scipy", "scikit_learn": "scikit-learn", "torchvision": "torchvision",
         "torchdiffeq": "torchdiffeq", "huggingface_hub": "huggingface-hub"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh20/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh20_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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


def _shapes(n, size=16, seed=0):
    """n grey images of a bright disc or square at a random place and size on a dark background (a CPU tensor)."""
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(size), torch.arange(size), indexing="ij")
    out = torch.zeros(n, 1, size, size)
    for i in range(n):
        cy, cx = torch.randint(4, size - 4, (2,), generator=g).tolist()
        r = int(torch.randint(2, 5, (1,), generator=g))
        if i % 2:
            out[i, 0] = (((yy - cy) ** 2 + (xx - cx) ** 2) <= r * r).float()
        else:
            out[i, 0] = (((yy - cy).abs() <= r) & ((xx - cx).abs() <= r)).float()
    return (out + 0.1 * torch.rand(n, 1, size, size, generator=g)).clamp(0, 1)


# ============================================================================================
# Libraries
# ============================================================================================
# -- alias_free_torch: the README's anti-aliased activation `Activation1d(activation=...)` (up-sample, act,
#    low-pass, down-sample), as BigVGAN's AMP blocks use it, in a small 1-D network moved to the device and trained
#    to reproduce a harmonic distortion of tones; `UpSample1d` / `DownSample1d` round trips and `LowPassFilter1d`;
#    `Activation2d` in a small image denoiser, `UpSample2d` / `DownSample2d` ---------------------------------------

def alias_free_layers(dev):
    from alias_free_torch import (
        Activation1d,
        Activation2d,
        DownSample1d,
        DownSample2d,
        LowPassFilter1d,
        UpSample1d,
        UpSample2d,
    )

    g = torch.Generator().manual_seed(0)
    sr, n = 8000, 2048
    t = torch.arange(n) / sr
    f0 = 80 + 400 * torch.rand(8, 1, generator=g)
    clean = 0.8 * torch.sin(2 * torch.pi * f0 * t)
    x = clean.unsqueeze(1).to(dev)
    y = torch.tanh(3 * clean).unsqueeze(1).to(dev)

    class AMPBlock(nn.Module):
        def __init__(self, ch, dilation):
            super().__init__()
            self.act1 = Activation1d(activation=nn.SiLU())
            self.conv1 = nn.Conv1d(ch, ch, 7, padding=3 * dilation, dilation=dilation)
            self.act2 = Activation1d(activation=nn.SiLU())
            self.conv2 = nn.Conv1d(ch, ch, 7, padding=3)

        def forward(self, h):
            return h + self.conv2(self.act2(self.conv1(self.act1(h))))

    def waveform():
        net = nn.Sequential(nn.Conv1d(1, 16, 7, padding=3), AMPBlock(16, 1), AMPBlock(16, 3),
                            nn.Conv1d(16, 1, 7, padding=3)).to(dev)
        loss = _fit(net.parameters(), 6, lambda i: F.l1_loss(net(x), y))
        up, down = UpSample1d(2).to(dev), DownSample1d(2).to(dev)
        lp = LowPassFilter1d(cutoff=0.25, half_width=0.1).to(dev)
        with torch.no_grad():
            round_trip = down(up(x))
            smooth = lp(x)
        err = (round_trip - x)[..., 64:-64].abs().max()
        print(f"amp loss {loss.item():.4f}, up/down error {err.item():.4f}, low-passed {tuple(smooth.shape)}")

    def image():
        imgs = _shapes(64, size=32).to(dev)
        noisy = imgs + 0.2 * torch.randn(imgs.shape, generator=g).to(dev)
        net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), Activation2d(nn.GELU()), nn.Conv2d(16, 16, 3, padding=1),
                            Activation2d(nn.GELU()), nn.Conv2d(16, 1, 3, padding=1)).to(dev)
        loss = _fit(net.parameters(), 5, lambda i: F.mse_loss(net(noisy[16 * (i % 4): 16 * (i % 4 + 1)]),
                                                                imgs[16 * (i % 4): 16 * (i % 4 + 1)]))
        with torch.no_grad():
            up = UpSample2d(2).to(dev)(imgs[:4])
            back = DownSample2d(2).to(dev)(up)
        print(f"2-d denoiser loss {loss.item():.4f}, up {tuple(up.shape)}, back {tuple(back.shape)}")
    return {"waveform": waveform, "image": image}


# -- azula: the README's recipe, a denoiser (`KarrasDenoiser`, `SimpleDenoiser`) around a time-conditioned backbone
#    (our `b(x_t, t)` wrapper around azula's own `UNet` and `DiT` with a `SineEncoding` of t), trained with
#    `denoiser.loss(x, t)` for t drawn on the device under VP, cosine, VE and rectified schedules, on synthetic shapes
#    moved to the device and on 2-D point clouds; `sampler.init(shape, device=)` and its reverse process for DDPM,
#    DDIM, Euler, Heun, predictor-corrector, Ito and Adams-Bashforth samplers; guidance for inverse problems: DPS
#    (a blur operator), RePaint (a mask), MMPS (diagonal and diagonal-plus-low-rank covariances), DiffPIR, TMPD,
#    JFPS (a full prior covariance), PGDM, TDS (a twist); its `cg` and `gmres` solvers -----------------------------

def azula_diffusion(dev):
    from azula.denoise import KarrasDenoiser, SimpleDenoiser
    from azula.guidance import (
        DiffPIRDenoiser,
        DPSSampler,
        JFPSDenoiser,
        MMPSDenoiser,
        PGDMSampler,
        RePaintSampler,
        TDSSampler,
        TMPDenoiser,
    )
    from azula.linalg.covariance import DiagonalCovariance, DPLRCovariance, FullCovariance, IsotropicCovariance
    from azula.linalg.solve import cg, gmres
    from azula.nn.dit import DiT
    from azula.nn.layers import SineEncoding
    from azula.nn.unet import UNet
    from azula.noise import CosineSchedule, RectifiedSchedule, VESchedule, VPSchedule
    from azula.sample import (
        DDIMSampler,
        DDPMSampler,
        EulerSampler,
        HeunSampler,
        ItoSampler,
        PCSampler,
        REABSampler,
        vABSampler,
        xEABSampler,
        zABSampler,
        zEABSampler,
    )

    g = torch.Generator().manual_seed(0)

    class Backbone(nn.Module):
        """b(x_t, t): the README's custom network, here azula's U-Net / DiT modulated by a sine encoding of t."""

        def __init__(self, net, features=32):
            super().__init__()
            self.enc, self.net = SineEncoding(features), net

        def forward(self, x_t, t):
            return self.net(x_t, self.enc(t))

    class PointNet(nn.Module):
        def __init__(self, d, features=32):
            super().__init__()
            self.enc = SineEncoding(features)
            self.net = nn.Sequential(nn.Linear(d + features, 128), nn.SiLU(), nn.Linear(128, 128), nn.SiLU(),
                                     nn.Linear(128, d))

        def forward(self, x_t, t):
            e = self.enc(t)
            if e.dim() == 1:
                e = e.expand(x_t.shape[0], -1)
            return self.net(torch.cat([x_t, e], -1))

    images = (_shapes(256) * 2 - 1).to(dev)

    def train(denoiser, data, steps, batch=32):
        opt = torch.optim.Adam(denoiser.parameters(), lr=1e-3)
        for i in range(steps):
            x = data[(i * batch) % len(data):][:batch]
            t = torch.rand((x.shape[0],), device=dev)
            loss = denoiser.loss(x, t)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss

    def unet():
        res = {}
        for name, schedule in (("vp", VPSchedule()), ("cosine", CosineSchedule())):
            net = UNet(1, 1, hid_channels=(16, 32), hid_blocks=(1, 1), mod_features=32)
            denoiser = KarrasDenoiser(Backbone(net), schedule).to(dev)
            loss = train(denoiser, images, 6)
            denoiser.eval()
            with torch.no_grad():
                outs = {}
                for sname, cls in (("ddpm", DDPMSampler), ("ddim", DDIMSampler), ("heun", HeunSampler)):
                    sampler = cls(denoiser, steps=8, silent=True)
                    x1 = sampler.init((4, 1, 16, 16), device=dev)
                    outs[sname] = round(sampler(x1).std().item(), 3)
            res[name] = (round(loss.item(), 4), outs)
        print(f"unet denoisers {res}")

    def dit():
        seq = images.flatten(2).transpose(1, 2)  # (B, 256, 1) pixels as a sequence
        net = DiT(1, 1, mod_features=32, hid_channels=32, hid_blocks=2, attention_heads=2)
        denoiser = SimpleDenoiser(Backbone(net), RectifiedSchedule()).to(dev)
        loss = train(denoiser, seq, 5, batch=16)
        denoiser.eval()
        with torch.no_grad():
            sampler = EulerSampler(denoiser, steps=6, silent=True)
            x0 = sampler(sampler.init((2, 256, 1), device=dev))
        print(f"dit loss {loss.item():.4f}, sample {tuple(x0.shape)}")

    def points():
        theta = torch.rand(2048, generator=g) * 2 * torch.pi
        ring = torch.stack([theta.cos(), theta.sin()], -1) * (1 + 0.05 * torch.randn(2048, 1, generator=g))
        data = ring.to(dev)
        res = {}
        for name, schedule in (("ve", VESchedule(sigma_max=10.0)), ("vp", VPSchedule())):
            denoiser = KarrasDenoiser(PointNet(2), schedule).to(dev)
            loss = train(denoiser, data, 40, batch=256)
            denoiser.eval()
            with torch.no_grad():
                samples = {}
                for sname, sampler in (("pc", PCSampler(denoiser, corrections=1, steps=16, silent=True)),
                                       ("zab", zABSampler(denoiser, order=2, steps=16, silent=True)),
                                       ("zeab", zEABSampler(denoiser, order=2, steps=16, silent=True)),
                                       ("xeab", xEABSampler(denoiser, order=3, steps=16, silent=True)),
                                       ("vab", vABSampler(denoiser, order=2, steps=16, silent=True)),
                                       ("reab", REABSampler(denoiser, order=2, steps=16, silent=True)),
                                       ("ito", ItoSampler(denoiser, eta=0.5, steps=16, silent=True))):
                    x0 = sampler(sampler.init((256, 2), device=dev))
                    samples[sname] = round(x0.norm(dim=-1).mean().item(), 3)
            res[name] = (round(loss.item(), 4), samples)
        print(f"point denoisers {res}")

    def guidance():
        net = UNet(1, 1, hid_channels=(16, 32), hid_blocks=(1, 1), mod_features=32)
        denoiser = KarrasDenoiser(Backbone(net), VPSchedule()).to(dev)
        train(denoiser, images, 4)
        denoiser.eval()
        x = images[:2]
        kernel = torch.ones(1, 1, 3, 3, device=dev) / 9

        def blur(v):
            return F.conv2d(v, kernel, padding=1)
        y = blur(x) + 0.05 * torch.randn(x.shape, generator=g).to(dev)
        dps = DPSSampler(denoiser, y=y, A=blur, zeta=1.0, steps=6, silent=True)
        x_dps = dps(dps.init((2, 1, 16, 16), device=dev))
        mask = torch.rand(x.shape, generator=g).to(dev) < 0.5
        with torch.no_grad():
            rp = RePaintSampler(denoiser, y=x * mask, mask=mask, iterations=2, steps=6, silent=True)
            x_rp = rp(rp.init((2, 1, 16, 16), device=dev))
        d = 8
        vec = PointNet(d)
        vden = KarrasDenoiser(vec, VPSchedule()).to(dev)
        vdata = torch.randn(512, d, generator=g).to(dev) @ torch.randn(d, d, generator=g).to(dev) * 0.3
        train(vden, vdata, 10, batch=128)
        vden.eval()
        A_mat = torch.randn(4, d, generator=g).to(dev)

        def A(v):
            return v @ A_mat.T
        yv = A(vdata[:16]) + 0.1 * torch.randn(16, 4, generator=g).to(dev)
        mmps = MMPSDenoiser(vden, y=yv, A=A, cov_y=DiagonalCovariance(torch.full((4,), 0.01, device=dev)),
                            iterations=2)
        sampler = DDIMSampler(mmps, steps=6, silent=True)
        x_mmps = sampler(sampler.init((16, d), device=dev))
        print(f"dps error {F.mse_loss(x_dps, x).item():.3f}, repaint error {F.mse_loss(x_rp, x).item():.3f}, "
              f"mmps residual {F.mse_loss(A(x_mmps), yv).item():.3f}")
    def inverse():
        d = 8
        mix = torch.randn(d, d, generator=g).to(dev) * 0.3
        data = torch.randn(1024, d, generator=g).to(dev) @ mix
        den = KarrasDenoiser(PointNet(d), VPSchedule()).to(dev)
        train(den, data, 20, batch=128)
        den.eval()
        A_mat = torch.randn(4, d, generator=g).to(dev)
        A_pinv = torch.linalg.pinv(A_mat)

        def A(v):
            return v @ A_mat.T

        def A_inv(v):
            return v @ A_pinv.T
        y = A(data[:16]) + 0.1 * torch.randn(16, 4, generator=g).to(dev)
        cov = torch.cov(data.T)
        evals, evecs = torch.linalg.eigh(cov)
        res = {}
        for name, guided in (
                ("diffpir", DiffPIRDenoiser(den, y=y, A=A, var_y=0.01, solver="cg", iterations=2)),
                ("tmpd", TMPDenoiser(den, y=y, A=A, var_y=0.01)),
                ("jfps", JFPSDenoiser(den, y=y, A=A, cov_y=IsotropicCovariance(0.01),
                                      cov_x=FullCovariance(evecs, evals), solver="cg", iterations=2)),
                ("mmps_dplr", MMPSDenoiser(den, y=y, A=A, cov_y=DPLRCovariance(
                    torch.full((4,), 0.01, device=dev), 0.05 * torch.randn(4, 2, generator=g).to(dev)),
                    solver="cg", iterations=2))):
            sampler = DDIMSampler(guided, steps=6, silent=True)
            x = sampler(sampler.init((16, d), device=dev))
            res[name] = round(F.mse_loss(A(x), y).item(), 3)
        pgdm = PGDMSampler(den, y=y, A=A, A_inv=A_inv, steps=6, silent=True)
        res["pgdm"] = round(F.mse_loss(A(pgdm(pgdm.init((16, d), device=dev))), y).item(), 3)
        tds = TDSSampler(den, twist=lambda x, t: -((A(x) - y) ** 2).sum(-1) / 2.0, steps=6, silent=True)
        res["tds"] = round(F.mse_loss(A(tds(tds.init((16, d), device=dev))), y).item(), 3)
        spd = cov + 0.1 * torch.eye(d, device=dev)
        b = torch.randn(16, d, generator=g).to(dev)
        x_cg = cg(lambda v: v @ spd.T, b, iterations=d)
        x_gm = gmres(lambda v: v @ spd.T, b, iterations=d)
        print(f"inverse problems {res}, cg residual {(x_cg @ spd.T - b).norm().item():.4f}, "
              f"gmres residual {(x_gm @ spd.T - b).norm().item():.4f}")
    return {"unet": unet, "dit": dit, "points": points, "guidance": guidance, "inverse": inverse}


# -- cuequivariance_torch: its documented modules on `cue.Irreps("O3", ...)` with `device=` and the pure-PyTorch
#    `method="naive"`: a MACE-like interatomic potential on random molecules made on the device (edges within a
#    cutoff, `SphericalHarmonics` of the edge vectors, a `ChannelWiseTensorProduct` with per-edge weights from a
#    radial network and scatter to the receivers through `indices_1` / `indices_out`, equivariant `Linear`
#    layers, a `SymmetricContraction` per species, an energy read out) trained on energies and forces from
#    autograd; a `FullyConnectedTensorProduct`; `Rotation` with `vector_to_euler_angles` checked for
#    equivariance; `SegmentedPolynomial` of cuequivariance's descriptors (a fully connected tensor product with
#    trained weights, spherical harmonics), `Inversion`, `TransposeIrrepsLayout` ----------------------------------

def cuequivariance_mace(dev):
    import cuequivariance as cue
    import cuequivariance_torch as cuet

    g = torch.Generator().manual_seed(0)
    n_mol, n_atoms, n_species, cutoff = 8, 12, 3, 2.0
    pos = (torch.randn(n_mol, n_atoms, 3, generator=g) * 1.2).reshape(-1, 3).to(dev)
    species = torch.randint(0, n_species, (n_mol * n_atoms,), generator=g).to(dev)
    mol = torch.arange(n_mol).repeat_interleave(n_atoms).to(dev)
    irreps_sh = cue.Irreps("O3", "0e + 1o + 2e")
    irreps_h = cue.Irreps("O3", "16x0e")
    irreps_mid = cue.Irreps("O3", "16x0e + 16x1o + 16x2e")

    def edges(p):
        d = torch.cdist(p, p)
        same = mol[:, None] == mol[None, :]
        src, dst = ((d < cutoff) & same & ~torch.eye(len(p), dtype=torch.bool, device=dev)).nonzero(as_tuple=True)
        return src, dst

    def target_energy(p):
        src, dst = edges(p)
        r = (p[src] - p[dst]).norm(dim=-1)
        e = torch.zeros(n_mol, device=dev).index_add_(0, mol[src], (r - 1.1) ** 2 - 0.3)
        return e

    class Mace(nn.Module):
        def __init__(self):
            super().__init__()
            kw = {"layout": cue.mul_ir, "device": dev, "method": "naive"}
            self.embed = nn.Embedding(n_species, 16)
            self.sh = cuet.SphericalHarmonics([0, 1, 2], normalize=True, device=dev, method="naive")
            self.tp = cuet.ChannelWiseTensorProduct(irreps_h, irreps_sh, filter_irreps_out=irreps_mid,
                                                    shared_weights=False, internal_weights=False, **kw)
            self.radial = nn.Sequential(nn.Linear(8, 32), nn.SiLU(), nn.Linear(32, self.tp.weight_numel))
            self.lin = cuet.Linear(self.tp.irreps_out, irreps_mid, **kw)
            self.sc = cuet.SymmetricContraction(irreps_mid, irreps_h, contraction_degree=3, num_elements=n_species,
                                                layout=cue.mul_ir, device=dev, method="naive")
            self.readout = cuet.Linear(irreps_h, cue.Irreps("O3", "1x0e"), **kw)

        def forward(self, p):
            src, dst = edges(p)
            vec = p[dst] - p[src]
            r = vec.norm(dim=-1, keepdim=True)
            rbf = torch.sin(torch.arange(1, 9, device=dev) * torch.pi * r / cutoff) / r
            h = self.embed(species)
            m = self.tp(h, self.sh(vec), self.radial(rbf), indices_1=src, indices_out=dst, size_out=len(p))
            h2 = self.sc(self.lin(m), species)
            e_atom = self.readout(h2 + h).squeeze(-1)
            return torch.zeros(n_mol, device=dev).index_add_(0, mol, e_atom)

    def potential():
        model = Mace().to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for _ in range(4):
            p = (pos + 0.05 * torch.randn(pos.shape, device=dev)).requires_grad_(True)
            e = model(p)
            f = -torch.autograd.grad(e.sum(), p, create_graph=True)[0]
            p_ref = p.detach().requires_grad_(True)
            e_ref = target_energy(p_ref)
            f_ref = -torch.autograd.grad(e_ref.sum(), p_ref)[0]
            loss = F.mse_loss(e, e_ref.detach()) + 10 * F.mse_loss(f, f_ref)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"mace-like loss {loss.item():.4f}, energies {tuple(e.shape)}")

    def products():
        irreps_a = cue.Irreps("O3", "8x0e + 8x1o")
        fc = cuet.FullyConnectedTensorProduct(irreps_a, irreps_sh, irreps_a, layout=cue.mul_ir, device=dev,
                                              method="naive")
        lin = cuet.Linear(irreps_a, irreps_a, layout=cue.mul_ir, device=dev, method="naive")
        x = torch.randn(256, irreps_a.dim, generator=g).to(dev)
        vec = torch.randn(256, 3, generator=g).to(dev)
        sh = cuet.SphericalHarmonics([0, 1, 2], normalize=True, device=dev, method="naive")(vec)
        y = _fit(list(fc.parameters()) + list(lin.parameters()), 3,
                 lambda i: (lin(fc(x, sh)) - x).pow(2).mean())
        rot = cuet.Rotation(irreps_a, layout=cue.mul_ir, device=dev, method="naive")
        beta, alpha = cuet.vector_to_euler_angles(torch.randn(256, 3, generator=g).to(dev))
        gamma = torch.rand(256, generator=g).to(dev) * 2 * torch.pi
        with torch.no_grad():
            xr = rot(gamma, beta, alpha, x)
            norms = (x[:, 8:].reshape(256, 8, 3).norm(dim=-1), xr[:, 8:].reshape(256, 8, 3).norm(dim=-1))
        print(f"tensor products loss {y.item():.4f}, rotation keeps vector norms: "
              f"{torch.allclose(*norms, atol=1e-4)}")
    def polynomials():
        irreps_a = cue.Irreps("O3", "8x0e + 8x1o")
        desc = cue.descriptors.fully_connected_tensor_product(irreps_a, irreps_sh, irreps_a)
        poly = cuet.SegmentedPolynomial(desc.polynomial, method="naive").to(dev)
        sh_poly = cuet.SegmentedPolynomial(cue.descriptors.spherical_harmonics(cue.SO3(1), [0, 1, 2]).polynomial,
                                           method="naive").to(dev)
        w = nn.Parameter(torch.randn(1, desc.inputs[0].dim, generator=g).to(dev) * 0.1)
        x = torch.randn(128, irreps_a.dim, generator=g).to(dev)
        vec = F.normalize(torch.randn(128, 3, generator=g).to(dev), dim=-1)
        target = torch.randn(128, irreps_a.dim, generator=g).to(dev)
        loss = _fit([w], 4, lambda i: F.mse_loss(poly([w, x, sh_poly([vec])[0]])[0], target), lr=1e-2)
        inv = cuet.Inversion(irreps_a, layout=cue.mul_ir, device=dev, method="naive")
        to_ir_mul = cuet.TransposeIrrepsLayout(irreps_a, source=cue.mul_ir, target=cue.ir_mul, device=dev,
                                               use_fallback=True)
        with torch.no_grad():
            flipped = inv(x)
            odd_flips = torch.allclose(flipped[:, 8:], -x[:, 8:])
            transposed = to_ir_mul(x)
        print(f"segmented polynomial loss {loss.item():.4f}, inversion flips the odd part {odd_flips}, "
              f"ir_mul {tuple(transposed.shape)}")
    return {"potential": potential, "products": products, "polynomials": polynomials}


# -- curated_transformers: its models built from their configs with `device=` (float32, small widths) and random
#    weights: `BERTEncoder`, `RoBERTaEncoder`, `ALBERTEncoder` on padded piece ids with an `AttentionMask`, a masked
#    language-model head of ours trained on `last_hidden_layer_state`; `LlamaCausalLM`, `GPTNeoXCausalLM`,
#    `FalconCausalLM`, `MPTCausalLM` trained on a synthetic token stream (next-piece cross-entropy on `logits`),
#    then decoded greedily piece by piece with `store_cache=True`, the returned key/value `cache` and positions;
#    each model is also moved with `.to(dev)` (its `device=` leaves some of its tensors on the CPU) -------------

def curated_transformers_models(dev):
    from curated_transformers.layers import AttentionMask
    from curated_transformers.models import (
        ALBERTConfig,
        ALBERTEncoder,
        BERTConfig,
        BERTEncoder,
        FalconCausalLM,
        FalconConfig,
        GPTNeoXCausalLM,
        GPTNeoXConfig,
        LlamaCausalLM,
        LlamaConfig,
        MPTCausalLM,
        MPTConfig,
        RoBERTaConfig,
        RoBERTaEncoder,
    )

    g = torch.Generator().manual_seed(0)
    vocab, B, L = 96, 8, 32
    lengths = torch.randint(L // 2, L + 1, (B,), generator=g)
    pattern = torch.randint(4, vocab, (12,), generator=g)
    stream = pattern.repeat(B * (L + 1) // 12 + 2)[: B * (L + 1)].view(B, L + 1)
    stream = torch.where(torch.rand(stream.shape, generator=g) < 0.1,
                         torch.randint(4, vocab, stream.shape, generator=g), stream)
    ids = stream[:, :L].to(dev)
    mask = (torch.arange(L)[None, :] < lengths[:, None]).to(dev)
    small = {"hidden_width": 64, "n_hidden_layers": 2, "n_pieces": vocab}

    def encoders():
        res = {}
        for name, model in (
                ("bert", BERTEncoder(BERTConfig(embedding_width=64, intermediate_width=128, n_attention_heads=4,
                                                n_positions=64, **small), device=dev)),
                ("roberta", RoBERTaEncoder(RoBERTaConfig(embedding_width=64, intermediate_width=128,
                                                         n_attention_heads=4, n_positions=66, **small), device=dev)),
                ("albert", ALBERTEncoder(ALBERTConfig(embedding_width=32, intermediate_width=128, n_attention_heads=4,
                                                      n_positions=64, **small), device=dev))):
            model, head = model.to(dev), nn.Linear(64, vocab).to(dev)
            masked = (torch.rand(ids.shape, generator=g).to(dev) < 0.15) & mask
            inp = ids.masked_fill(masked, 3)

            def loss_of(i, model=model, head=head, masked=masked, inp=inp):
                out = model(inp, AttentionMask(mask))
                logits = head(out.last_hidden_layer_state)
                return F.cross_entropy(logits[masked], ids[masked])
            loss = _fit(list(model.parameters()) + list(head.parameters()), 3, loss_of)
            model.eval()
            with torch.no_grad():
                out = model(ids, AttentionMask(mask))
            res[name] = (round(loss.item(), 3), len(out.all_hidden_layer_states))
        print(f"encoders {res}")

    def decoders():
        target = stream[:, 1:].to(dev)
        full = AttentionMask(torch.ones(B, L, dtype=torch.bool, device=dev))
        res = {}
        for name, model in (
                ("llama", LlamaCausalLM(LlamaConfig(dtype=torch.float32, intermediate_width=128, n_query_heads=4,
                                                    n_key_value_heads=2, rotary_embedding_fraction=0.5, **small),
                                        device=dev)),
                ("gpt_neox", GPTNeoXCausalLM(GPTNeoXConfig(dtype=torch.float32, intermediate_width=128,
                                                           n_attention_heads=4, n_positions=128, **small),
                                             device=dev)),
                ("falcon", FalconCausalLM(FalconConfig(dtype=torch.float32, n_query_heads=4, n_key_value_heads=1,
                                                       **small), device=dev)),
                ("mpt", MPTCausalLM(MPTConfig(dtype=torch.float32, n_attention_heads=4, model_max_length=128,
                                              **small), device=dev))):
            model = model.to(dev)

            def loss_of(i, model=model):
                return F.cross_entropy(model(ids, full).logits.reshape(-1, vocab), target.reshape(-1))
            loss = _fit(model.parameters(), 4, loss_of)
            model.eval()
            prompt = ids[:2, :8]
            with torch.no_grad():
                out = model(prompt, AttentionMask(torch.ones_like(prompt, dtype=torch.bool)), store_cache=True)
                cache, tokens = out.cache, [out.logits[:, -1].argmax(-1)]
                for k in range(8):
                    step = tokens[-1][:, None]
                    seen = AttentionMask(torch.ones(2, 9 + k, dtype=torch.bool, device=dev))
                    pos = torch.full((2, 1), 8 + k, device=dev)
                    out = model(step, seen, cache=cache, positions=pos, store_cache=True)
                    cache = out.cache
                    tokens.append(out.logits[:, -1].argmax(-1))
                gen = torch.stack(tokens, 1)
            res[name] = (round(loss.item(), 3), gen[0].tolist())
        print(f"decoders {res}")
    return {"encoders": encoders, "decoders": decoders}


# -- delu: its documented tools on a tabular regression moved to the device: `delu.random.seed`, `delu.nn.NLinear`
#    (a separate embedding per numerical feature) and `delu.nn.Lambda`, batches from `delu.iter_batches` (shuffled
#    with a device generator), evaluation in batches joined by `delu.cat` (tensors and tuples of them),
#    `delu.tools.EarlyStopping` on the validation score, `delu.tools.Timer`, `delu.to` of a checkpoint dict --------

def delu_tabular(dev):
    import delu

    delu.random.seed(0)
    g = torch.Generator().manual_seed(0)
    n, d = 3000, 8
    X = torch.randn(n, d, generator=g)
    Y = (X[:, 0] * X[:, 1] + torch.sin(2 * X[:, 2]) + 0.5 * X[:, 3] ** 2 + 0.1 * torch.randn(n, generator=g))
    X, Y = X.to(dev), Y.to(dev)
    idx = {"train": torch.arange(0, 2000, device=dev), "val": torch.arange(2000, 2500, device=dev),
           "test": torch.arange(2500, n, device=dev)}

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = delu.nn.NLinear(d, 1, 16)
            self.body = nn.Sequential(delu.nn.Lambda(torch.flatten, start_dim=1), nn.ReLU(), nn.Linear(d * 16, 64),
                                      nn.ReLU(), nn.Linear(64, 1))

        def forward(self, x):
            return self.body(self.embed(x.unsqueeze(-1))).squeeze(-1)

    def training():
        model = Model().to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
        early = delu.tools.EarlyStopping(3, mode="max")
        timer = delu.tools.Timer()
        timer.run()
        gen = torch.Generator(device=dev).manual_seed(0)

        @torch.no_grad()
        def evaluate(part):
            model.eval()
            pred = delu.cat([model(X[b]) for b in delu.iter_batches(idx[part], 256)])
            return -F.mse_loss(pred, Y[idx[part]]).item()
        scores = []
        for _ in range(6):
            model.train()
            for batch in delu.iter_batches(idx["train"], 128, shuffle=True, generator=gen):
                loss = F.mse_loss(model(X[batch]), Y[batch])
                opt.zero_grad()
                loss.backward()
                opt.step()
            score = evaluate("val")
            scores.append(round(score, 3))
            early.update(score)
            if early.should_stop():
                break
        timer.pause()
        pairs = delu.cat([(model(X[b]), Y[b]) for b in delu.iter_batches(idx["test"], 200)])
        ckpt = delu.to({"model": model.state_dict(), "scores": scores}, device="cpu")
        print(f"val scores {scores}, test mse {F.mse_loss(*pairs).item():.3f}, checkpoint on "
              f"{next(iter(ckpt['model'].values())).device}, {timer}")
    return {"training": training}


# -- fvcore: FAIR's shared detection / training code on a toy one-stage detector moved to the device: a dense head
#    trained on synthetic boxes with `sigmoid_focal_loss_jit` (classification), `giou_loss` and `smooth_l1_loss`
#    (boxes), a `CosineParamScheduler` setting the learning rate, `HistoryBuffer` of the losses,
#    `Checkpointer` / `PeriodicCheckpointer` saving and loading; `FlopCountAnalysis` (`total`, `by_module`,
#    `by_operator`, `flop_count_table`) and `ActivationCountAnalysis` of a network on device inputs,
#    `parameter_count`; `precise_bn.update_bn_stats` over a loader of device batches ----------------------------

def fvcore_detection(dev):
    from fvcore.common.checkpoint import Checkpointer, PeriodicCheckpointer
    from fvcore.common.history_buffer import HistoryBuffer
    from fvcore.common.param_scheduler import CosineParamScheduler
    from fvcore.nn import (
        ActivationCountAnalysis,
        FlopCountAnalysis,
        flop_count_table,
        giou_loss,
        parameter_count,
        sigmoid_focal_loss_jit,
        smooth_l1_loss,
    )
    from fvcore.nn.precise_bn import update_bn_stats

    g = torch.Generator().manual_seed(0)
    n_img, size, grid, k = 96, 32, 8, 3
    imgs = torch.zeros(n_img, 1, size, size)
    boxes = torch.zeros(n_img, 4)
    labels = torch.randint(0, k, (n_img,), generator=g)
    for i in range(n_img):
        w, h = torch.randint(6, 14, (2,), generator=g).tolist()
        x0 = torch.randint(0, size - w, (1,), generator=g).item()
        y0 = torch.randint(0, size - h, (1,), generator=g).item()
        imgs[i, 0, y0:y0 + h, x0:x0 + w] = 1.0 + labels[i].item()
        boxes[i] = torch.tensor([x0, y0, x0 + w, y0 + h], dtype=torch.float)
    imgs = imgs + 0.1 * torch.randn(imgs.shape, generator=g)
    cells = (torch.arange(grid) + 0.5) * size / grid
    cy, cx = torch.meshgrid(cells, cells, indexing="ij")
    anchors = torch.stack([cx - 5, cy - 5, cx + 5, cy + 5], -1).reshape(-1, 4).to(dev)

    class Detector(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2))
            self.cls = nn.Conv2d(32, k, 3, padding=1)
            self.box = nn.Conv2d(32, 4, 3, padding=1)

        def forward(self, x):
            f = self.body(x)
            return self.cls(f).flatten(2).transpose(1, 2), self.box(f).flatten(2).transpose(1, 2)

    def targets(b, lab):
        ctr = (b[:, None, :2] + b[:, None, 2:]) / 2
        a_ctr = (anchors[None, :, :2] + anchors[None, :, 2:]) / 2
        pos = (a_ctr - ctr).abs().amax(-1) < size / grid  # anchors near the box centre
        cls_t = torch.zeros(len(b), len(anchors), k, device=dev)
        cls_t[pos] = F.one_hot(lab, k).float().repeat_interleave(pos.sum(1), 0)
        return pos, cls_t

    def training():
        model = Detector().to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        sched = CosineParamScheduler(0.05, 0.001)
        hist = HistoryBuffer()
        tmp = hc._tmp()
        ckpt = Checkpointer(model, tmp, optimizer=opt)
        periodic = PeriodicCheckpointer(ckpt, period=4, max_iter=12)
        for it in range(12):
            for group in opt.param_groups:
                group["lr"] = sched(it / 12)
            sl = slice(8 * (it % 12), 8 * (it % 12 + 1))
            x, b, lab = imgs[sl].to(dev), boxes[sl].to(dev), labels[sl].to(dev)
            logits, deltas = model(x)
            pos, cls_t = targets(b, lab)
            l_cls = (sigmoid_focal_loss_jit(logits, cls_t, alpha=0.25, gamma=2.0, reduction="sum")
                     / pos.sum().clamp(min=1))
            pred = anchors[None] + deltas
            gt = b[:, None, :].expand_as(pred)
            l_box = giou_loss(pred[pos], gt[pos], reduction="mean") + smooth_l1_loss(pred[pos], gt[pos], beta=0.1,
                                                                                     reduction="mean") / size
            loss = l_cls + l_box
            opt.zero_grad()
            loss.backward()
            opt.step()
            hist.update(loss.item(), it)
            periodic.step(it)
        ckpt.save("final")
        ckpt.resume_or_load(os.path.join(tmp, "final.pth"), resume=True)
        print(f"detector loss median {hist.median(4):.3f}, global avg {hist.global_avg():.3f}, "
              f"checkpoints {sorted(os.listdir(tmp))}")

    def analysis():
        model = Detector().to(dev)
        x = imgs[:4].to(dev)
        flops = FlopCountAnalysis(model, x)
        total, by_mod, by_op = flops.total(), flops.by_module(), flops.by_operator()
        acts = ActivationCountAnalysis(model, x).total()
        table = flop_count_table(flops, max_depth=2)
        params = parameter_count(model)[""]
        loader = [imgs[i:i + 16].to(dev) for i in range(0, n_img, 16)]
        update_bn_stats(model, loader, num_iters=len(loader))
        print(f"flops {total}, modules {len(by_mod)}, operators {dict(by_op)}, activations {acts}, params {params}, "
              f"table {len(table.splitlines())} lines, bn mean {model.body[1].running_mean.mean().item():.3f}")
    return {"training": training, "analysis": analysis}


# -- hypll: its tutorials on the device: a Poincaré-ball CNN (`HConvolution2d`, `HBatchNorm2d`, `HReLU`,
#    `HMaxPool2d`, `HFlatten`, `HLinear`, learnable `Curvature`) fed `manifold.expmap(TangentTensor(...))` of image
#    batches, trained with `RiemannianAdam`; a hyperbolic MLP classifier; hyperbolic embeddings of a tree
#    (`HEmbedding`, `manifold.dist`, `RiemannianSGD`), distances of parents and children; the ball's operations
#    (Mobius addition, log map, parallel transport, inner products, midpoints, Frechet means and variances,
#    `cdist`, `cat`), `ChangeManifold`, `TangentSequential`, `HBatchNorm` and `HAvgPool2d` with midpoints, and a
#    hyperbolic k-means --------------------------------------------------------------------------------------------

def hypll_networks(dev):
    import hypll.nn as hnn
    from hypll.manifolds.poincare_ball import Curvature, PoincareBall
    from hypll.optim import RiemannianAdam, RiemannianSGD
    from hypll.tensors import ManifoldTensor, TangentTensor

    g = torch.Generator().manual_seed(0)
    manifold = PoincareBall(c=Curvature(requires_grad=True))
    imgs = _shapes(192, size=16, seed=1)
    lab = torch.arange(192) % 2  # discs and squares

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = hnn.HConvolution2d(in_channels=1, out_channels=8, kernel_size=3, manifold=manifold, padding=1)
            self.bn1 = hnn.HBatchNorm2d(features=8, manifold=manifold)
            self.relu = hnn.HReLU(manifold=manifold)
            self.pool = hnn.HMaxPool2d(kernel_size=2, manifold=manifold, stride=2)
            self.conv2 = hnn.HConvolution2d(in_channels=8, out_channels=8, kernel_size=3, manifold=manifold, padding=1)
            self.flat = hnn.HFlatten()
            self.fc = hnn.HLinear(in_features=8 * 4 * 4, out_features=2, manifold=manifold)

        def forward(self, x):
            x = self.pool(self.relu(self.bn1(self.conv1(x))))
            x = self.pool(self.relu(self.conv2(x)))
            return self.fc(self.flat(x))

    def cnn():
        net = Net().to(dev)
        opt = RiemannianAdam(net.parameters(), lr=1e-3)
        for i in range(6):
            x, y = imgs[32 * i: 32 * (i + 1)].to(dev), lab[32 * i: 32 * (i + 1)].to(dev)
            tangents = TangentTensor(data=x, man_dim=1, manifold=manifold)
            out = net(manifold.expmap(tangents))
            loss = F.cross_entropy(out.tensor, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"poincare cnn loss {loss.item():.3f}, curvature {manifold.c().item():.3f}")

    def mlp():
        x = torch.randn(512, 6, generator=g)
        y = ((x[:, 0] * x[:, 1] > 0).long() + (x[:, 2] > 1).long()).clamp(max=1)
        x, y = x.to(dev), y.to(dev)
        net = nn.Sequential(hnn.HLinear(6, 32, manifold=manifold), hnn.HReLU(manifold=manifold),
                            hnn.HLinear(32, 2, manifold=manifold)).to(dev)
        opt = RiemannianAdam(net.parameters(), lr=1e-2)
        for i in range(8):
            xb = manifold.expmap(TangentTensor(data=x[64 * i: 64 * (i + 1)], man_dim=1, manifold=manifold))
            loss = F.cross_entropy(net(xb).tensor, y[64 * i: 64 * (i + 1)])
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            acc = (net(manifold.expmap(TangentTensor(data=x, man_dim=1, manifold=manifold))).tensor.argmax(1) == y)
        print(f"hyperbolic mlp loss {loss.item():.3f}, accuracy {acc.float().mean().item():.2f}")

    def embeddings():
        ball = PoincareBall(c=Curvature(1.0))
        n_nodes = 63  # a binary tree of depth 5
        parent = torch.tensor([(i - 1) // 2 for i in range(1, n_nodes)])
        child = torch.arange(1, n_nodes)
        emb = hnn.HEmbedding(n_nodes, 2, manifold=ball).to(dev)
        opt = RiemannianSGD(emb.parameters(), lr=0.3)
        pos_u, pos_v = parent.to(dev), child.to(dev)
        for _ in range(20):
            neg = torch.randint(0, n_nodes, (len(child), 5), generator=g).to(dev)
            u = emb(pos_u)
            d_pos = ball.dist(u, emb(pos_v))
            d_neg = ball.dist(emb(pos_u[:, None].expand_as(neg)), emb(neg))
            logits = torch.cat([-d_pos[:, None], -d_neg], 1)
            loss = F.cross_entropy(logits, torch.zeros(len(child), dtype=torch.long, device=dev))
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            root_dist = ball.dist(emb(torch.zeros(1, dtype=torch.long, device=dev)),
                                  emb(torch.arange(n_nodes, device=dev)))
        print(f"tree embedding loss {loss.item():.3f}, mean distance from the root {root_dist.mean().item():.3f}")
    def geometry():
        ball = PoincareBall(c=Curvature(1.0))
        other = PoincareBall(c=Curvature(0.5))
        pts = [ball.expmap(TangentTensor(data=0.5 * torch.randn(64, 4, generator=g).to(dev), man_dim=1,
                                         manifold=ball)) for _ in range(3)]
        a, b, c = pts
        s = ball.mobius_add(a, b)
        v = ball.logmap(a, b)
        moved = ball.transp(v, c)
        ip = ball.inner(v, v)
        mid = ball.midpoint(a)
        fm = ball.frechet_mean(a)
        var = ball.frechet_variance(a, mu=fm, batch_dim=0)
        x3 = ball.expmap(TangentTensor(data=0.5 * torch.randn(2, 16, 4, generator=g).to(dev), man_dim=2,
                                       manifold=ball))
        dists = ball.cdist(x3, x3)
        both = ball.cat([a, b], dim=0)
        changed = hnn.ChangeManifold(other)(a)
        mlp = hnn.TangentSequential(nn.Sequential(nn.Linear(4, 8), nn.Tanh()), manifold=ball).to(dev)
        out = mlp(a)
        bn = hnn.HBatchNorm(features=4, manifold=ball, use_midpoint=True).to(dev)
        normed = bn(a)
        def on_ball(t):
            return ManifoldTensor(data=t, manifold=ball, man_dim=1)
        centres = both.tensor[:4]
        for _ in range(3):  # hyperbolic k-means: nearest centre, Frechet means of the clusters
            assign = torch.stack([ball.dist(both, on_ball(centres[k:k + 1])) for k in range(4)], 1).argmin(1)
            centres = torch.cat([ball.frechet_mean(on_ball(both.tensor[assign == k]), keepdim=True).tensor
                                 if (assign == k).any() else centres[k:k + 1] for k in range(4)])
        imgs = _shapes(16, size=12, seed=3).to(dev)
        x = ball.expmap(TangentTensor(data=imgs, man_dim=1, manifold=ball))
        pooled = hnn.HAvgPool2d(kernel_size=2, manifold=ball, use_midpoint=True)(x)
        print(f"mobius sum {tuple(s.tensor.shape)}, transported {tuple(moved.tensor.shape)}, inner "
              f"{ip.mean().item():.3f}, midpoint {tuple(mid.tensor.shape)}, frechet mean {tuple(fm.tensor.shape)}, "
              f"variance {var.mean().item():.3f}, cdist {tuple(dists.shape)}, changed {tuple(changed.tensor.shape)}, "
              f"tangent mlp {tuple(out.tensor.shape)}, batch norm {tuple(normed.tensor.shape)}, "
              f"k-means sizes {torch.bincount(assign, minlength=4).tolist()}, pooled {tuple(pooled.tensor.shape)}")
    return {"cnn": cnn, "mlp": mlp, "embeddings": embeddings, "geometry": geometry}


# -- loralib: the README's recipe on the device: a small transformer whose projections are `lora.Linear` and
#    `lora.MergedLinear` (q and v adapted, `enable_lora=[True, False, True]`), a `lora.Embedding` and a
#    `lora.Conv2d` patch embedding; pre-trained on a task, then `mark_only_lora_as_trainable` and fine-tuned on a
#    shifted task; `model.eval()` merges the low-rank weights, `model.train()` unmerges them; `lora_state_dict`
#    saved alone and loaded with `strict=False` --------------------------------------------------------------------

def loralib_finetune(dev):
    import loralib as lora

    g = torch.Generator().manual_seed(0)
    vocab, d, L = 64, 64, 16

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = lora.MergedLinear(d, 3 * d, r=4, lora_alpha=8, enable_lora=[True, False, True])
            self.proj = lora.Linear(d, d, r=4, lora_alpha=8)
            self.ff = nn.Sequential(lora.Linear(d, 2 * d, r=4), nn.GELU(), nn.Linear(2 * d, d))
            self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)

        def forward(self, x):
            q, k, v = self.qkv(self.n1(x)).chunk(3, -1)
            a = F.scaled_dot_product_attention(q.unflatten(-1, (4, 16)).transpose(1, 2),
                                               k.unflatten(-1, (4, 16)).transpose(1, 2),
                                               v.unflatten(-1, (4, 16)).transpose(1, 2), is_causal=True)
            x = x + self.proj(a.transpose(1, 2).flatten(2))
            return x + self.ff(self.n2(x))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = lora.Embedding(vocab, d, r=4)
            self.blocks = nn.Sequential(Block(), Block())
            self.head = nn.Linear(d, vocab)

        def forward(self, ids):
            return self.head(self.blocks(self.emb(ids)))

    def make(shift):
        base = torch.randint(0, vocab, (128, 1), generator=g)
        seq = (base + shift * torch.arange(L + 1)) % vocab
        return seq[:, :-1].to(dev), seq[:, 1:].to(dev)

    def language_model():
        model = LM().to(dev)
        x, y = make(1)
        _fit(model.parameters(), 6, lambda i: F.cross_entropy(model(x).reshape(-1, vocab), y.reshape(-1)), lr=3e-3)
        lora.mark_only_lora_as_trainable(model)
        x2, y2 = make(3)
        trainable = [p for p in model.parameters() if p.requires_grad]
        loss = _fit(trainable, 6, lambda i: F.cross_entropy(model(x2).reshape(-1, vocab), y2.reshape(-1)), lr=3e-3)
        model.eval()
        with torch.no_grad():
            acc = (model(x2).argmax(-1) == y2).float().mean()
        model.train()
        tmp = hc._tmp()
        torch.save(lora.lora_state_dict(model), os.path.join(tmp, "lora.pt"))
        fresh = LM().to(dev)
        missing = fresh.load_state_dict(torch.load(os.path.join(tmp, "lora.pt"), map_location=dev), strict=False)
        print(f"lora fine-tune loss {loss.item():.3f}, accuracy {acc.item():.2f}, trainable {len(trainable)}, "
              f"missing after the lora-only load {len(missing.missing_keys)}")

    def conv():
        imgs = _shapes(128, size=16).to(dev)
        lab = (torch.arange(128) % 2).to(dev)
        model = nn.Sequential(lora.Conv2d(1, 16, kernel_size=4, stride=4, r=2, lora_alpha=4), nn.GELU(),
                              nn.Flatten(), lora.Linear(16 * 16, 2, r=2)).to(dev)
        lora.mark_only_lora_as_trainable(model, bias="lora_only")
        loss = _fit([p for p in model.parameters() if p.requires_grad], 6,
                    lambda i: F.cross_entropy(model(imgs[32 * (i % 4): 32 * (i % 4 + 1)]),
                                              lab[32 * (i % 4): 32 * (i % 4 + 1)]), lr=1e-2)
        model.eval()
        with torch.no_grad():
            acc = (model(imgs).argmax(1) == lab).float().mean()
        print(f"lora conv loss {loss.item():.3f}, merged accuracy {acc.item():.2f}")
    return {"language_model": language_model, "conv": conv}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _profile_use_cuda(profile):
    """torch took away the `use_cuda` argument of `torch.autograd.profiler.profile`, which DLRM's training loop
    passes (with profiling off, as here): given back as the `use_device` it became, for the run."""
    import inspect
    if "use_cuda" in inspect.signature(profile.__init__).parameters:
        return profile

    class ProfileUseCuda(profile):
        def __init__(self, *args, use_cuda=False, **kwargs):
            if use_cuda:
                kwargs.setdefault("use_device", "cuda")
            super().__init__(*args, **kwargs)
    return ProfileUseCuda


def _dlrm(dev, name: str, extra: list):
    """facebookresearch/dlrm's dlrm_s_pytorch.py as is, its README's benchmark on randomly generated data
    (`--data-generation=random --loss-function=bce --round-targets=True --use-gpu`, `--mini-batch-size=128
    --num-batches=80 --print-freq=10 --test-freq=20 --test-mini-batch-size=256`, 8 tables of 2000 rows, bottom MLP
    13-64-16, top MLP 64-32-1), run from a temporary folder. The window spans the 2nd to the 45th `backward`:
    training steps, their loss and accuracy prints, and the test passes at steps 20 and 40 (AUC among them)."""
    root = _need_repo("dlrm")
    tmp = hc._tmp()
    argv = ["--arch-sparse-feature-size=16", "--arch-mlp-bot=13-64-16", "--arch-mlp-top=64-32-1",
            "--arch-embedding-size=" + "-".join(["2000"] * 8), "--data-generation=random", "--loss-function=bce",
            "--round-targets=True", "--learning-rate=0.1", "--mini-batch-size=128", "--num-batches=80",
            "--num-indices-per-lookup=4", "--print-freq=10", "--test-freq=20", "--test-mini-batch-size=256",
            "--nepochs=1", *extra]
    if dev.type == "cuda":
        argv.append("--use-gpu")

    def window():
        profile = torch.autograd.profiler.profile
        torch.autograd.profiler.profile = _profile_use_cuda(profile)
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 45, stop_script=True):
                hc.run_script(root / "dlrm_s_pytorch.py", argv, tmp)
        finally:
            torch.autograd.profiler.profile = profile
    return {"train_window": window}


def dlrm_dot(dev):
    """DLRM with its default dot-product feature interaction."""
    return _dlrm(dev, "dlrm.dot", [])


def dlrm_qr(dev):
    """DLRM with the concatenation interaction (`--arch-interaction-op=cat`, the top MLP's input widened to 144)
    and quotient-remainder embeddings (`--qr-flag --qr-threshold=100 --qr-collisions=4`)."""
    return _dlrm(dev, "dlrm.qr", ["--arch-interaction-op=cat", "--arch-mlp-top=144-32-1", "--qr-flag",
                                  "--qr-threshold=100", "--qr-collisions=4"])


def _digits_mnist(root: Path, n_train: int = 640, n_test: int = 160, seed: int = 0) -> None:
    """Synthetic 28 x 28 digits written as the four MNIST idx files torchvision's `MNIST` reads from
    `<root>/MNIST/raw` (a bar, ring or cross per class pattern at a random place, with noise)."""
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


def _anode(dev, name: str, model: dict):
    """EmilienDupont/augmented-neural-odes's main_experiment_img.py as is (the GPU when there is one, as it
    decides), its README's command `python main_experiment_img.py config.json` with a config of its own keys
    (the MNIST dataset, one repetition, batch 32, two epochs), on 640 synthetic digits written as the MNIST files
    its loader reads from `../../mnist_data`; run from a folder two levels below them. The window spans the 2nd to
    the 30th `backward`: convolutional neural-ODE steps (adaptive dopri5 solves, adjoint backward passes, its
    NFE bookkeeping and prints) through the end of the first epoch."""
    import json
    root = _need_repo("anode")
    tmp = Path(hc._tmp())
    _digits_mnist(tmp / "mnist_data")
    run_dir = tmp / "a" / "b"
    run_dir.mkdir(parents=True)
    cfg = {"id": name.split(".")[1], "num_reps": 1, "dataset": "mnist",
           "model_configs": [{"time_dependent": True, "lr": 1e-3, "non_linearity": "relu", "weight_decay": 0.0,
                              "validation": False, **model}],
           "training_config": {"batch_size": 32, "record_freq": 5, "print_freq": 5, "epochs": 2}}
    (run_dir / "config.json").write_text(json.dumps(cfg))

    def window():
        with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 30, stop_script=True):
            hc.run_script(root / "main_experiment_img.py", ["config.json"], str(run_dir))
    return {"train_window": window}


def anode_augmented(dev):
    """An augmented convolutional neural ODE (`"type": "anode"`, 16 filters, 2 augmented channels)."""
    return _anode(dev, "anode.augmented", {"type": "anode", "num_filters": 16, "augment_dim": 2})


def anode_plain(dev):
    """A plain convolutional neural ODE (`"type": "odenet"`, 24 filters). (Its `"validation": true` path fails as
    is: the validation loss reads a `Trainer._loss` the trainer does not have.)"""
    return _anode(dev, "anode.plain", {"type": "odenet", "num_filters": 24})


MODELS = [
    # name, package, builder
    ("alias_free_torch.layers", "alias_free_torch", alias_free_layers),
    ("azula.diffusion", "azula", azula_diffusion),
    ("cuequivariance_torch.mace", "cuequivariance_torch", cuequivariance_mace),
    ("curated_transformers.models", "curated_transformers", curated_transformers_models),
    ("delu.tabular", "delu", delu_tabular),
    ("fvcore.detection", "fvcore", fvcore_detection),
    ("hypll.networks", "hypll", hypll_networks),
    ("loralib.finetune", "loralib", loralib_finetune),
    ("dlrm.dot", "dlrm", dlrm_dot),
    ("dlrm.qr", "dlrm", dlrm_qr),
    ("anode.augmented", "anode", anode_augmented),
    ("anode.plain", "anode", anode_plain),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh20", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
