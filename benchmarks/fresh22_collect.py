"""Record the syncs of a twenty-third set, `fresh22` (a sealed test set): libraries and training code nobody here read.

`fresh22` is recorded the same way as `fresh9` to `fresh21` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; bindsnet's networks are moved by
`network.to(dev)` and its encoders and models take `device=`; cheetah's elements and beams take `device=`): no
workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh22): bindsnet (spiking neural networks
  trained by spike-timing-dependent plasticity: Diehl & Cook's network, reward-modulated STDP, Poisson encoding and
  label assignment, plots), cheetah (cheetah-accelerator: differentiable beam dynamics, magnet tuning by gradient
  descent, particle tracking with screens, apertures and space charge), cleverhans (its PyTorch Carlini-Wagner L2
  attack), flowtorch (normalizing flows: an affine autoregressive flow fitted by maximum likelihood),
  hessian_eigenthings (hessian-eigenthings: Lanczos, deflated power iteration, Hutchinson / Hutch++ traces and
  spectral densities of Hessian, GGN and empirical Fisher operators), kmeans_gpu (kmeans-gpu: batched k-means as
  a module, euclidean and cosine, sub-sampled, differentiable), chop (chop-pytorch: constrained optimisation,
  full-gradient projected gradient and Frank-Wolfe on batches of problems, adversarial perturbations, stochastic
  projected-gradient and three-composite training under constraints) and ksddescent (Kernel Stein
  Discrepancy descent by gradient steps);
  + ale-py, gymnasium, farama-notifications, tensorboardX (bindsnet's imports), easydict (cleverhans').
  Their other needs (numpy, scipy, scikit-learn, scikit-image, pandas, matplotlib, opencv, tqdm, opt-einsum,
  cloudpickle) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh22/repos/<name>:
  davda54/sam (example/train.py as is: a Wide-ResNet trained with sharpness-aware minimisation on synthetic
  CIFAR-10 files) and Khrylx/PyTorch-RL (examples/trpo_gym.py, ppo_gym.py and a2c_gym.py as they are, on a
  synthetic continuous-control task given to them as the `gym` module they import).

    python benchmarks/fresh22_collect.py prepare        # here, with network: wheels, repos and code copies
    python benchmarks/fresh22_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh22 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh22 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh22"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh22", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh22/repos/<name>)
REPOS = {
    "sam": ("davda54/sam", "3c3afdbd71cff2462ec91c734b3d1170bd0f3707", ["sam.py", "example"]),
    "pytorch_rl": ("Khrylx/PyTorch-RL", "72069237b4d86bcb9675b899ea94228019a4f003",
                   ["examples/trpo_gym.py", "examples/ppo_gym.py", "examples/a2c_gym.py", "core", "models",
                    "utils"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["bindsnet==0.3.4", "ale-py==0.12.1", "gymnasium==1.4.0", "farama-notifications==0.0.6",
          "tensorboardX==2.6.4", "cheetah-accelerator==0.8.4", "cleverhans==4.0.0", "easydict==1.13",
          "flowtorch==0.8", "hessian-eigenthings==1.0.0a5", "kmeans-gpu==0.0.5", "chop-pytorch==0.0.3.1",
          "ksddescent==0.3"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"bindsnet": "bindsnet", "cheetah_accelerator": "cheetah-accelerator", "cleverhans": "cleverhans",
         "flowtorch": "flowtorch", "hessian_eigenthings": "hessian-eigenthings", "kmeans_gpu": "kmeans-gpu",
         "chop_pytorch": "chop-pytorch", "ksddescent": "ksddescent", "numpy": "numpy", "scipy": "scipy",
         "scikit_learn": "scikit-learn", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh22/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh22_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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


def _bars(n, side=8, k=4, seed=0):
    """n (side, side) images in [0, 1] of k classes (a bright horizontal or vertical bar in one of two places,
    plus noise) and their labels, CPU tensors."""
    g = torch.Generator().manual_seed(seed)
    lab = torch.randint(0, k, (n,), generator=g)
    img = 0.15 * torch.rand(n, side, side, generator=g)
    for i in range(n):
        c = int(lab[i])
        pos = 1 + (c // 2) * (side // 2)
        if c % 2 == 0:
            img[i, pos:pos + 2, :] += 0.8
        else:
            img[i, :, pos:pos + 2] += 0.8
    return img.clamp(0, 1), lab


# ============================================================================================
# Libraries
# ============================================================================================

# -- bindsnet: the README's recipe and its MNIST example on synthetic 8x8 bar images: Diehl & Cook's network
#    (`models.DiehlAndCook2015`) moved to the device, images Poisson-encoded (`encoding.poisson` with `device=`),
#    `network.run` with STDP, `Monitor`s of the excitatory spikes, `evaluation.assign_labels`, `all_activity`,
#    `proportion_weighting`; a network built by hand (`Input`, `LIFNodes`, a `Connection` with reward-modulated
#    `MSTDP`); a `Conv2dConnection` to `DiehlAndCookNodes` and the MNIST example's plots (`plot_input`,
#    `plot_spikes`, `plot_voltages`, `plot_conv2d_weights`, `plot_weights` of `get_square_weights`,
#    `plot_assignments`, `plot_performance`). (A `hand_built` mode, a `PostPre` network fed by the other encoders,
#    failed on the GPU in its warm-up: `encoding.rank_order` given a device datum and `device=` mixes a host tensor
#    with it; it was removed) -----------------------------------------------------------------------------------

def bindsnet_stdp(dev):
    from bindsnet.encoding import poisson
    from bindsnet.evaluation import all_activity, assign_labels, proportion_weighting
    from bindsnet.learning import MSTDP, PostPre
    from bindsnet.models import DiehlAndCook2015
    from bindsnet.network import Network
    from bindsnet.network.monitors import Monitor
    from bindsnet.network.nodes import Input, LIFNodes
    from bindsnet.network.topology import Connection

    imgs, labels = _bars(48)
    T = 60

    def diehl_cook():
        net = DiehlAndCook2015(n_inpt=64, n_neurons=36, exc=22.5, inh=17.5, dt=1.0, norm=64 * 0.1,
                               theta_plus=0.05, inpt_shape=(1, 8, 8))
        net.to(dev)
        spikes_mon = Monitor(net.layers["Ae"], state_vars=["s"], time=T, device=dev)
        volt_mon = Monitor(net.layers["Ae"], state_vars=["v"], time=T, device=dev)
        net.add_monitor(spikes_mon, name="Ae_spikes")
        net.add_monitor(volt_mon, name="Ae_voltages")
        n = 24
        record = torch.zeros(n, T, 36, device=dev)
        for i in range(n):
            enc = poisson(datum=imgs[i].to(dev) * 64.0, time=T, dt=1.0, device=dev)
            net.run(inputs={"X": enc.view(T, 1, 1, 8, 8)}, time=T, input_time_dim=1)
            record[i] = spikes_mon.get("s").squeeze()
            net.reset_state_variables()
        lab = labels[:n].to(dev)
        assignments, proportions, rates = assign_labels(record, lab, 4)
        pred_all = all_activity(record, assignments, 4)
        pred_prop = proportion_weighting(record, assignments, proportions, 4)
        acc = (pred_all == lab).float().mean()
        print(f"diehl-cook acc(all) {acc.item():.2f}, acc(prop) {(pred_prop == lab).float().mean().item():.2f}, "
              f"rates {tuple(rates.shape)}, v {tuple(volt_mon.get('v').shape)}")

    def reward():
        net = Network(dt=1.0)
        inp = Input(n=64, traces=True)
        out = LIFNodes(n=4, traces=True)
        conn = Connection(source=inp, target=out, w=0.5 * torch.rand(64, 4), update_rule=MSTDP, nu=1e-2,
                          wmin=0.0, wmax=1.0)
        net.add_layer(inp, name="in")
        net.add_layer(out, name="out")
        net.add_connection(conn, source="in", target="out")
        mon = Monitor(out, state_vars=["s"], time=T, device=dev)
        net.add_monitor(mon, name="out")
        net.to(dev)
        hits = []
        for i in range(10):
            enc = poisson(datum=imgs[i].flatten().to(dev) * 64.0, time=T, dt=1.0, device=dev)
            net.run(inputs={"in": enc}, time=T, reward=0.0)
            counts = mon.get("s").sum((0, 1)).view(-1)
            choice = counts.argmax()
            r = 1.0 if int(choice) == int(labels[i]) else -0.5
            net.reset_state_variables()
            net.run(inputs={"in": enc}, time=T, reward=r)
            net.reset_state_variables()
            hits.append(r > 0)
        print(f"reward-modulated hits {sum(hits)}/10, w {conn.w.sum().item():.2f}")

    def conv_plots():
        import matplotlib.pyplot as plt
        from bindsnet.analysis.plotting import (
            plot_assignments,
            plot_conv2d_weights,
            plot_input,
            plot_performance,
            plot_spikes,
            plot_voltages,
            plot_weights,
        )
        from bindsnet.network.nodes import DiehlAndCookNodes
        from bindsnet.network.topology import Conv2dConnection
        from bindsnet.utils import get_square_assignments, get_square_weights
        net = Network(dt=1.0)
        inp = Input(shape=(1, 8, 8), traces=True)
        out = DiehlAndCookNodes(shape=(4, 6, 6), traces=True, theta_plus=0.05)
        conv = Conv2dConnection(source=inp, target=out, kernel_size=3, stride=1, update_rule=PostPre,
                                nu=(1e-4, 1e-2), wmin=0.0, wmax=1.0, norm=0.4 * 9)
        net.add_layer(inp, name="X")
        net.add_layer(out, name="Y")
        net.add_connection(conv, source="X", target="Y")
        spikes = {k: Monitor(net.layers[k], state_vars=["s"], time=T, device=dev) for k in ("X", "Y")}
        volts = Monitor(net.layers["Y"], state_vars=["v"], time=T, device=dev)
        for k, m in spikes.items():
            net.add_monitor(m, name=f"{k}_spikes")
        net.add_monitor(volts, name="Y_voltages")
        net.to(dev)
        dense = DiehlAndCook2015(n_inpt=64, n_neurons=16, inpt_shape=(1, 8, 8))
        dense.to(dev)
        assignments = torch.randint(0, 4, (16,), device=dev)
        perf = {"all": [], "proportion": []}
        inpt_axes = inpt_ims = spike_ims = spike_axes = volt_ims = volt_axes = None
        weights_im = assigns_im = perf_ax = conv_im = None
        for i in range(6):  # as the MNIST example: the figures made once, then updated at each sample
            image = imgs[i].to(dev)
            enc = poisson(datum=image * 64.0, time=T, dt=1.0, device=dev)
            net.run(inputs={"X": enc.view(T, 1, 1, 8, 8)}, time=T)
            perf["all"].append(float(i))
            perf["proportion"].append(float(i) / 2)
            inpt = enc.view(T, 64).sum(0).view(8, 8)
            square_weights = get_square_weights(dense.connections[("X", "Ae")].feature_index["weight"].value
                                                .view(64, 16), 4, 8)
            spikes_ = {k: m.get("s").view(T, -1) for k, m in spikes.items()}
            inpt_axes, inpt_ims = plot_input(image, inpt, label=labels[i], axes=inpt_axes, ims=inpt_ims)
            spike_ims, spike_axes = plot_spikes(spikes_, ims=spike_ims, axes=spike_axes)
            volt_ims, volt_axes = plot_voltages({"Y": volts.get("v").view(T, -1)}, ims=volt_ims, axes=volt_axes,
                                                plot_type="line")
            conv_im = plot_conv2d_weights(conv.w, im=conv_im)
            weights_im = plot_weights(square_weights, im=weights_im)
            assigns_im = plot_assignments(get_square_assignments(assignments, 4), im=assigns_im)
            perf_ax = plot_performance(perf, x_scale=1, ax=perf_ax)
            net.reset_state_variables()
        plt.close("all")
        print(f"conv spikes {spikes['Y'].get('s').sum().item():.0f}, w {conv.w.mean().item():.3f}")
    return {"diehl_cook": diehl_cook, "reward": reward, "conv_plots": conv_plots}


# -- cheetah (cheetah-accelerator): the README's lattice (drifts, quadrupoles, correctors, a screen) built on the
#    device (`device=`), `ParameterBeam.from_parameters` / `ParticleBeam.from_twiss` on the device: quadrupole
#    strengths tuned by Adam for a small round beam on the screen; particles tracked through a lattice with a
#    dipole, a sextupole, an aperture and an active screen (its `reading`, the beam's emittances); a batch of
#    magnet settings tracked at once and the best picked; a space-charge kick. (An `analysis` mode, beam attributes
#    along the segment, sub-cells, reversed segments, histogram and KDE screens and `plot_overview`, failed on the
#    GPU in its warm-up: the histogram screen's `torch.histogramdd` has no CUDA kernel; it was removed) ----------

def cheetah_beam(dev):
    import cheetah

    dt = torch.float32

    def t(v):
        return torch.tensor(v, device=dev, dtype=dt)

    def lattice(k1s, screen_active=False, extra=()):
        return cheetah.Segment(elements=[
            cheetah.Drift(length=t(0.175), device=dev),
            cheetah.Quadrupole(length=t(0.122), k1=k1s[0], name="Q1", device=dev),
            cheetah.Drift(length=t(0.428), device=dev),
            cheetah.Quadrupole(length=t(0.122), k1=k1s[1], name="Q2", device=dev),
            cheetah.Drift(length=t(0.204), device=dev),
            cheetah.VerticalCorrector(length=t(0.02), angle=t(1e-4), name="CV", device=dev),
            cheetah.Drift(length=t(0.204), device=dev),
            cheetah.Quadrupole(length=t(0.122), k1=k1s[2], name="Q3", device=dev),
            cheetah.Drift(length=t(0.179), device=dev),
            cheetah.HorizontalCorrector(length=t(0.02), angle=t(-1e-4), name="CH", device=dev),
            *extra,
            cheetah.Drift(length=t(0.45), device=dev),
            cheetah.Screen(resolution=(128, 96), pixel_size=t([3e-5, 3e-5]), is_active=screen_active,
                           name="SCR", device=dev),
        ])

    def beam():
        return cheetah.ParameterBeam.from_parameters(sigma_x=t(1.75e-4), sigma_y=t(1.75e-4), sigma_px=t(2e-7),
                                                     sigma_py=t(2e-7), energy=t(107e6), device=dev)

    def tune():
        k1 = nn.Parameter(torch.tensor([5.0, -10.0, 3.0], device=dev))
        incoming = beam()

        def loss_of(i):
            seg = lattice(k1)
            out = seg.track(incoming)
            return out.sigma_x ** 2 * 1e8 + out.sigma_y ** 2 * 1e8 + (out.mu_x ** 2 + out.mu_y ** 2) * 1e8
        loss = _fit([k1], 20, loss_of, lr=0.2)
        print(f"tuned k1 {k1.detach().cpu().tolist()}, loss {loss.item():.4f}")

    def particles():
        incoming = cheetah.ParticleBeam.from_twiss(num_particles=20000, beta_x=t(3.14), beta_y=t(42.0),
                                                   emittance_x=t(1e-9), emittance_y=t(1e-9), energy=t(107e6),
                                                   device=dev)
        extra = [cheetah.Dipole(length=t(0.2), angle=t(0.01), device=dev),
                 cheetah.Sextupole(length=t(0.1), k2=t(50.0), device=dev),
                 cheetah.Aperture(x_max=t(2e-3), y_max=t(2e-3), shape="elliptical", device=dev),
                 cheetah.BPM(is_active=True, name="BPM1", device=dev)]
        seg = lattice([t(4.0), t(-8.0), t(2.0)], screen_active=True, extra=extra)
        out = seg.track(incoming)
        img = seg.SCR.reading
        print(f"particles out sigma_x {out.sigma_x.item():.3e}, emittance_x {out.emittance_x.item():.3e}, "
              f"screen {tuple(img.shape)} sum {img.sum().item():.1f}, bpm {seg.BPM1.reading.tolist()}")

    def batched():
        n = 64
        g = torch.Generator().manual_seed(1)
        k = (torch.rand(n, 3, generator=g) * torch.tensor([20.0, 30.0, 20.0]) - torch.tensor([0.0, 30.0, 0.0]))
        k = k.to(dev)
        seg = lattice([k[:, 0], k[:, 1], k[:, 2]])
        out = seg.track(beam())
        size = out.sigma_x * out.sigma_y
        best = size.argmin()
        print(f"batched best k1 {k[best].tolist()}, beam size {size[best].item():.3e}")

    def space_charge():
        incoming = cheetah.ParticleBeam.from_parameters(num_particles=10000, sigma_x=t(1e-4), sigma_y=t(1e-4),
                                                        sigma_tau=t(1e-4), total_charge=t(1e-9),
                                                        energy=t(10e6), device=dev)
        seg = cheetah.Segment(elements=[
            cheetah.Drift(length=t(0.25), device=dev),
            cheetah.SpaceChargeKick(effect_length=t(0.5), grid_shape=(16, 16, 16), device=dev),
            cheetah.Drift(length=t(0.25), device=dev),
        ])
        out = seg.track(incoming)
        print(f"space charge sigma_x {incoming.sigma_x.item():.3e} -> {out.sigma_x.item():.3e}")
    return {"tune": tune, "particles": particles, "batched": batched, "space_charge": space_charge}


# -- cleverhans: its PyTorch tutorial (a CNN trained on the device, clean and adversarial accuracy) on synthetic
#    16x16 bar images: `carlini_wagner_l2`, untargeted and targeted. (Four more modes, `fast_gradient_method` and
#    `projected_gradient_descent`, `spsa` and `hop_skip_jump_attack`, `sparse_l1_descent`, adversarial training with
#    PGD, failed on the GPU in their warm-up: the attacks' input checks read device tensors through numpy; they were
#    removed) -------------------------------------------------------------------------------------------------------

def cleverhans_attacks(dev):
    from cleverhans.torch.attacks.carlini_wagner_l2 import carlini_wagner_l2

    imgs, labels = _bars(256, side=16)
    x_all, y_all = imgs.unsqueeze(1).to(dev), labels.to(dev)

    def cnn():
        return nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                             nn.Linear(32, 4)).to(dev)

    net = cnn()
    _fit(net.parameters(), 30, lambda i: F.cross_entropy(net(x_all[(i % 8) * 32:(i % 8 + 1) * 32]),
                                                         y_all[(i % 8) * 32:(i % 8 + 1) * 32]), lr=3e-3)
    net.eval()
    x, y = x_all[:32], y_all[:32]

    def acc(xa):
        with torch.no_grad():
            return (net(xa).argmax(1) == y[:len(xa)]).float().mean().item()

    def cw():
        x_cw = carlini_wagner_l2(net, x[:16], n_classes=4, lr=0.01, binary_search_steps=3, max_iterations=40)
        x_cwt = carlini_wagner_l2(net, x[:8], n_classes=4, y=(y[:8] + 1) % 4, targeted=True,
                                  binary_search_steps=2, max_iterations=30)
        print(f"cw {acc(x_cw):.2f}, targeted cw l2 {(x_cwt - x[:8]).flatten(1).norm(dim=1).mean().item():.3f}")

    return {"cw": cw}


# -- flowtorch: the docs' "start" recipe (a lazily built `Flow` of `AffineAutoregressive` bijectors on a
#    `DenseAutoregressive` parameter network over a base distribution on the device, fitted to samples of a target
#    by maximum likelihood), sampled. (Two more modes, `SplineAutoregressive` and `Compose` with `Permute` on a
#    two-moons set, and a flow fitted to Neal's funnel by reverse KL with elementwise bijectors on a one-dimensional
#    base, failed on the GPU in their warm-up: the `Permute` bijector, given a host permutation tensor here, indexes
#    device tensors with it; they were removed) --------------------------------------------------------------------

def flowtorch_flows(dev):
    import flowtorch.bijectors as bij
    import flowtorch.distributions as dist
    import flowtorch.parameters as params
    D = torch.distributions

    def base(d):
        return D.Independent(D.Normal(torch.zeros(d, device=dev), torch.ones(d, device=dev)), 1)

    def affine():
        target = D.Independent(D.Normal(torch.zeros(2, device=dev) + 5, torch.ones(2, device=dev) * 0.5), 1)
        flow = dist.Flow(base(2), bij.AffineAutoregressive(params.DenseAutoregressive(hidden_dims=(32,))))
        flow = flow.to(dev)
        y = target.sample((256,))
        flow.log_prob(y)
        loss = _fit(flow.parameters(), 40, lambda i: -flow.log_prob(target.sample((256,))).mean(), lr=5e-3)
        s = flow.sample((512,))
        print(f"affine loss {loss.item():.3f}, sample mean {s.mean(0).tolist()}")
    return {"affine": affine}


# -- hessian_eigenthings (hessian-eigenthings): the README's recipe on an MLP classifier trained on the device
#    (its data a list of device batches): `HessianOperator` with `supervised_loss` and `lanczos` (top-k,
#    smallest), `deflated_power_iteration`, `power_iteration_one`, `trace` (Hutch++ and Hutchinson) and
#    `spectral_density`; `GGNOperator`, `EmpiricalFisherOperator`; a `param_filter`; the top eigenvalue tracked
#    during training (sharpness) -------------------------------------------------------------------------------

def hessian_eigenthings_curvature(dev):
    import hessian_eigenthings as he

    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 10, generator=g)
    w = torch.randn(10, 3, generator=g)
    y = (x @ w + 0.3 * torch.randn(256, 3, generator=g)).argmax(1)
    x, y = x.to(dev), y.to(dev)
    data = [(x[i:i + 64], y[i:i + 64]) for i in range(0, 256, 64)]

    def mlp():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3)).to(dev)

    model = mlp()
    _fit(model.parameters(), 40, lambda i: F.cross_entropy(model(data[i % 4][0]), data[i % 4][1]), lr=1e-2)
    loss_fn = he.supervised_loss(F.cross_entropy)

    def eigen():
        H = he.HessianOperator(model, data, loss_fn)
        top = he.lanczos(H, k=5, seed=0)
        low = he.lanczos(H, k=3, which="SA", seed=1)
        defl = he.deflated_power_iteration(H, k=3, max_iter=30, seed=0)
        lam, vec, res, it, conv = he.power_iteration_one(H, max_iter=30, momentum=0.1, seed=0)
        print(f"lanczos {top.eigenvalues.tolist()}, smallest {low.eigenvalues.tolist()}, deflated "
              f"{defl.eigenvalues.tolist()}, power {lam:.4f} ({it} its, {bool(conv)})")

    def traces():
        H = he.HessianOperator(model, data, loss_fn, num_batches=2)
        t1 = he.trace(H, num_matvecs=30, seed=0)
        t2 = he.trace(H, num_matvecs=20, method="hutchinson", distribution="gaussian", seed=0)
        t3 = he.hutch_plus_plus(H, num_matvecs=30, seed=1)
        dens = he.spectral_density(H, num_runs=3, lanczos_steps=15, num_grid_points=500, seed=0)
        print(f"trace {t1.estimate:.3f}+-{t1.stderr:.3f}, hutchinson {t2.estimate:.3f}, hutch++ {t3.estimate:.3f}, "
              f"density peak {dens.grid[dens.density.argmax()].item():.3f}")

    def ggn_fisher():
        G = he.GGNOperator(model, data, he.supervised_forward, he.supervised_loss_of_output(F.cross_entropy))
        top = he.lanczos(G, k=4, seed=0)
        Fi = he.EmpiricalFisherOperator(model, data[:2], he.supervised_per_sample_loss(F.cross_entropy))
        tf = he.trace(Fi, num_matvecs=15, seed=0)
        last = he.HessianOperator(model, data, loss_fn, param_filter=he.match_names("4.*"))
        tl = he.lanczos(last, k=2, seed=0)
        print(f"ggn {top.eigenvalues.tolist()}, fisher trace {tf.estimate:.3f}, last layer {tl.eigenvalues.tolist()}")

    def sharpness():
        net = mlp()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        sharp = []
        for step in range(12):
            xb, yb = data[step % 4]
            loss = F.cross_entropy(net(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 4 == 3:
                H = he.HessianOperator(net, data[:2], loss_fn)
                sharp.append(he.lanczos(H, k=1, max_iter=10, seed=step).eigenvalues[0])
        print(f"sharpness {torch.stack(sharp).tolist()}")
    return {"eigen": eigen, "traces": traces, "ggn_fisher": ggn_fisher, "sharpness": sharpness}


# -- kmeans_gpu (kmeans-gpu): the README's demo (a batch of point clouds with per-point features, clustered by the
#    `KMeans` module, features aggregated to the centroids) on the device; cosine distance with sub-sampling;
#    differentiable k-means inside a small network trained end to end --------------------------------------------

def kmeans_gpu_cluster(dev):
    from kmeans_gpu import KMeans

    def clouds(b, n, k=6, seed=0):
        g = torch.Generator().manual_seed(seed)
        centres = torch.randn(b, k, 3, generator=g) * 3
        idx = torch.randint(0, k, (b, n), generator=g)
        pts = torch.gather(centres, 1, idx.unsqueeze(-1).expand(b, n, 3)) + 0.3 * torch.randn(b, n, 3, generator=g)
        return pts.to(dev), torch.randn(b, 32, n, generator=g).to(dev)

    def euclidean():
        pts, feats = clouds(16, 512)
        km = KMeans(n_clusters=6, max_iter=50, tolerance=1e-4, distance="euclidean", sub_sampling=None,
                    max_neighbors=15)
        for _ in range(3):
            centroids, agg = km(pts, feats)
        print(f"euclidean centroids {tuple(centroids.shape)}, features {tuple(agg.shape)}")

    def cosine():
        pts, feats = clouds(8, 1024, seed=1)
        km = KMeans(n_clusters=10, max_iter=30, tolerance=1e-3, distance="cosine", sub_sampling=256,
                    max_neighbors=8)
        for _ in range(3):
            centroids, agg = km(pts, feats)
        print(f"cosine centroids {tuple(centroids.shape)}, features {agg.norm().item():.2f}")

    def differentiable():
        pts, feats = clouds(8, 256, seed=2)
        enc = nn.Conv1d(32, 16, 1).to(dev)
        head = nn.Linear(16 * 6, 1).to(dev)
        km = KMeans(n_clusters=6, max_iter=20, tolerance=1e-4, distance="euclidean", differentiable=True)
        target = pts.norm(dim=-1).mean(1, keepdim=True)

        def loss_of(i):
            centroids, agg = km(pts, enc(feats))
            return F.mse_loss(head(agg.flatten(1)), target) + 1e-3 * centroids.pow(2).mean()
        loss = _fit(list(enc.parameters()) + list(head.parameters()), 6, loss_of, lr=1e-2)
        print(f"differentiable k-means loss {loss.item():.4f}")
    return {"euclidean": euclidean, "cosine": cosine, "differentiable": differentiable}


# -- chop (chop-pytorch): its examples: batches of sparse least-squares problems on the device solved by the
#    full-gradient methods (`optim.minimize_pgd` with backtracking and a fixed step, `minimize_frank_wolfe`) over
#    `constraints.L1Ball` / `L2Ball` / `Box` / `Simplex` / `NuclearNormBall`; adversarial examples by
#    `Adversary(...).perturb` with PGD, Frank-Wolfe and Madry's PGD on `LinfBall` / `L2Ball` / `L1Ball`; an MLP
#    trained under constraints by the stochastic optimizers `PGD`, `PGDMadry` and `S3CM` (an `L1` penalty's prox and
#    an `L2Ball`'s) -------------------------------------------------------------------------------------------------

def chop_constrained(dev):
    from chop import Adversary, constraints, optim, penalties, stochastic, utils

    g = torch.Generator().manual_seed(4)
    batch, n, d = 16, 64, 20
    A = torch.randn(batch, n, d, generator=g).to(dev)
    x_true = (torch.randn(batch, d, generator=g) * (torch.rand(batch, d, generator=g) > 0.7)).to(dev)
    b = torch.einsum("bnd,bd->bn", A, x_true) + 0.05 * torch.randn(batch, n, generator=g).to(dev)

    @utils.closure
    def lsq(x):
        return ((torch.einsum("bnd,bd->bn", A, x) - b) ** 2).sum(-1) / n

    def sol(r):
        return getattr(r, "x", r)

    def full_gradient():
        x0 = torch.zeros(batch, d, device=dev)
        l1, l2, simplex = constraints.L1Ball(3.0), constraints.L2Ball(2.0), constraints.Simplex(1.0)
        pgd = sol(optim.minimize_pgd(lsq, x0, l1.prox, step="backtracking", max_iter=40))
        fw = sol(optim.minimize_frank_wolfe(lsq, x0, l1.lmo, step="sublinear", max_iter=40))
        fw2 = sol(optim.minimize_frank_wolfe(lsq, x0, simplex.lmo, step=0.1, max_iter=40))
        pgd2 = sol(optim.minimize_pgd(lsq, x0, l2.prox, step=0.05, max_iter=40))
        box = sol(optim.minimize_pgd(lsq, x0, constraints.Box(-1.0, 1.0).prox, step="backtracking", max_iter=40))
        err = {k: round((v - x_true).norm().item(), 3) for k, v in
               {"pgd": pgd, "fw": fw, "fw_simplex": fw2, "pgd_l2": pgd2, "pgd_box": box}.items()}
        M = torch.randn(batch, 8, 8, generator=g).to(dev)

        @utils.closure
        def low_rank(X):
            return ((X - M) ** 2).flatten(1).sum(-1)
        nuc = constraints.NuclearNormBall(4.0)
        lr_sol = sol(optim.minimize_frank_wolfe(low_rank, torch.zeros_like(M), nuc.lmo, max_iter=20))
        print(f"chop full-gradient errors {err}, nuclear {torch.linalg.matrix_norm(lr_sol, 'nuc').mean().item():.3f}")

    imgs, labels = _bars(128, side=16, seed=5)
    x_all, y_all = imgs.unsqueeze(1).to(dev), labels.to(dev)

    def cnn():
        torch.manual_seed(0)
        return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(8 * 64, 32), nn.ReLU(), nn.Linear(32, 4)).to(dev)

    def adversary():
        net = cnn()
        _fit(net.parameters(), 20, lambda i: F.cross_entropy(net(x_all[(i % 4) * 32:(i % 4 + 1) * 32]),
                                                             y_all[(i % 4) * 32:(i % 4 + 1) * 32]), lr=3e-3)
        net.eval()
        x, y = x_all[:32], y_all[:32]
        crit = nn.CrossEntropyLoss(reduction="none")
        linf, l2, l1 = constraints.LinfBall(0.1), constraints.L2Ball(1.0), constraints.L1Ball(5.0)
        out = {}
        for name, method, kw in (("pgd_linf", optim.minimize_pgd, dict(prox=linf.prox)),
                                 ("pgd_l2", optim.minimize_pgd, dict(prox=l2.prox)),
                                 ("fw_l1", optim.minimize_frank_wolfe, dict(lmo=l1.lmo)),
                                 ("madry", optim.minimize_pgd_madry, dict(prox=linf.prox, lmo=linf.lmo,
                                                                        step=0.025))):
            loss, delta = Adversary(method).perturb(x[:16], y[:16], net, crit, max_iter=8, **kw)
            with torch.no_grad():
                out[name] = round((net(x[:16] + delta).argmax(1) == y[:16]).float().mean().item(), 3)
        print(f"chop adversarial accuracy {out}")

    def stochastic_training():
        out = {}
        for name in ("pgd", "pgd_madry", "s3cm"):
            torch.manual_seed(0)
            net = nn.Sequential(nn.Flatten(), nn.Linear(256, 64), nn.ReLU(), nn.Linear(64, 4)).to(dev)
            if name == "pgd":
                opt = stochastic.PGD(net.parameters(), constraints.L2Ball(5.0), lr=0.05)
            elif name == "pgd_madry":
                opt = stochastic.PGDMadry(net.parameters(), constraints.LinfBall(0.5), lr=0.01)
            else:
                opt = stochastic.S3CM(net.parameters(), prox1=penalties.L1(1e-3).prox,
                                      prox2=constraints.L2Ball(5.0).prox, lr=0.05)
            for i in range(10):
                xb, yb = x_all[(i % 4) * 32:(i % 4 + 1) * 32], y_all[(i % 4) * 32:(i % 4 + 1) * 32]
                loss = F.cross_entropy(net(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
            out[name] = round(loss.item(), 3)
        print(f"chop constrained training {out}")
    return {"full_gradient": full_gradient, "adversary": adversary, "stochastic": stochastic_training}


# -- ksddescent: particles moved to a target given by its score on the device by `ksdd_gradient`, with a Gaussian
#    and an IMQ kernel, on a correlated Gaussian and a Gaussian mixture. (Two more modes, the README's `ksdd_lbfgs`,
#    and `svgd` with `mmd_lbfgs`, failed on the GPU in their warm-up: the L-BFGS routines hand the particles to
#    scipy as numpy arrays without moving them to the host; they were removed) -----------------------------------

def ksddescent_sampling(dev):
    from ksddescent import ksdd_gradient

    prec = torch.tensor([[2.0, 0.8], [0.8, 1.0]], device=dev)
    mus = torch.tensor([[-2.0, 0.0], [2.0, 0.0]], device=dev)

    def gauss_score(x):
        return -x @ prec

    def mixture_score(x):  # an equal mixture of two unit Gaussians: sum_k w_k(x) (mu_k - x)
        w = torch.softmax(-0.5 * ((x[:, None, :] - mus[None]) ** 2).sum(-1), 1)
        return (w[:, :, None] * (mus[None] - x[:, None, :])).sum(1)

    def x0(n=100, seed=0):
        g = torch.Generator().manual_seed(seed)
        return (torch.rand(n, 2, generator=g) * 2 - 1).to(dev)

    def gradient():
        xg = ksdd_gradient(x0(), gauss_score, step=0.1, kernel="gaussian", max_iter=60, bw=1.0)
        xc = ksdd_gradient(x0(seed=2), mixture_score, step=0.05, kernel="imq", max_iter=40, bw=0.5, beta=0.3)
        out = xg[0] if isinstance(xg, tuple) else xg
        imq = xc[0] if isinstance(xc, tuple) else xc
        print(f"ksdd gradient var {out.var(0).tolist()}, imq max {imq.abs().max().item():.3f}")
    return {"gradient": gradient}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _cifar(folder: Path, n_train: int = 1000, n_test: int = 256, seed: int = 0) -> None:
    """Synthetic CIFAR-10 batch files in torchvision's layout (cifar-10-batches-py/data_batch_1..5, test_batch,
    batches.meta): uint8 images whose mean colour follows the label (as fresh7's)."""
    import pickle

    import numpy as np
    rng = np.random.default_rng(seed)
    d = folder / "cifar-10-batches-py"
    d.mkdir(parents=True)

    def batch(n):
        labels = rng.integers(0, 10, n)
        base = (labels[:, None] * 25).astype(np.int64)
        data = np.clip(base + rng.integers(-40, 40, (n, 3072)), 0, 255).astype(np.uint8)
        return {"data": data, "labels": labels.tolist()}
    for i in range(1, 6):
        with open(d / f"data_batch_{i}", "wb") as f:
            pickle.dump(batch(n_train // 5), f)
    with open(d / "test_batch", "wb") as f:
        pickle.dump(batch(n_test), f)
    with open(d / "batches.meta", "wb") as f:
        pickle.dump({"label_names": [f"class{i}" for i in range(10)]}, f)


class _no_md5:
    """torchvision's md5 checks of the synthetic CIFAR files, skipped."""

    def __enter__(self):
        import torchvision.datasets.cifar as cifar
        self.cifar, self.orig = cifar, cifar.check_integrity
        cifar.check_integrity = lambda *a, **k: True

    def __exit__(self, *exc):
        self.cifar.check_integrity = self.orig


def _sam(dev, name: str, extra: list, stop: int):
    """davda54/sam's example/train.py as is (`--threads 0 --epochs 2 --batch_size 64`, a Wide-ResNet, SAM over
    SGD, the GPU picked by the script when there is one), run from a temporary folder holding synthetic CIFAR-10
    files in ./data and ./cifar (its two roots: the training set's statistics are read from the second); the
    repository's root on the path for the `sam` module the script imports from ".." (as run from example/). Two
    backward passes a step; the window spans the 3rd to the `stop`-th `backward`."""
    root = _need_repo("sam")
    tmp = Path(hc._tmp())
    _cifar(tmp / "data")
    _cifar(tmp / "cifar")
    argv = ["--threads", "0", "--epochs", "2", "--batch_size", "64", *extra]

    def window():
        sys.path.insert(0, str(root))
        try:
            with _no_md5(), hc.window_on(torch.Tensor, "backward", name, "train", dev, 3, stop, stop_script=True):
                hc.run_script(root / "example" / "train.py", argv, str(tmp))
        finally:
            sys.path.remove(str(root))
            sys.modules.pop("sam", None)
    return {"train_window": window}


def sam_adaptive(dev):
    """Adaptive SAM (its default, `--rho 2`) on a WRN-10-2 (`--depth 10 --width_factor 2`) with label smoothing
    0.1: the window is the 3rd to the 50th backward (the first epoch's 16 steps of two passes, its evaluation, and
    the second epoch's start)."""
    return _sam(dev, "sam.adaptive", ["--depth", "10", "--width_factor", "2"], 50)


def sam_narrow(dev):
    """A deeper, narrower WRN-16-1 with no label smoothing (`--label_smoothing 0.0`), `--rho 1`, `--learning_rate
    0.05` (its dropout stays 0: the network's in-place ReLU after a dropout fails the second backward pass): the
    window is the 3rd to the 50th backward."""
    return _sam(dev, "sam.narrow", ["--depth", "16", "--width_factor", "1", "--label_smoothing", "0.0", "--rho",
                                    "1", "--learning_rate", "0.05"], 50)


class _Box:
    """The few members of a gym `Box` space that the scripts read: shape, high, low."""

    def __init__(self, low, high):
        import numpy as np
        self.low, self.high = np.asarray(low, dtype=np.float32), np.asarray(high, dtype=np.float32)
        self.shape = self.low.shape


class _ReacherEnv:
    """A synthetic continuous-control task in the old gym API (reset -> obs; step -> obs, reward, done, info):
    a 2-D point mass pushed by a bounded force towards a random goal; episodes end after 25 steps or on
    reaching it."""

    def __init__(self, max_steps=25):
        import numpy as np
        self._np, self._max_episode_steps = np, max_steps
        self.observation_space = _Box(-np.ones(6) * 10, np.ones(6) * 10)
        self.action_space = _Box(-np.ones(2), np.ones(2))
        self._rng = np.random.RandomState(0)

    def seed(self, s):
        self._rng = self._np.random.RandomState(s)

    def _obs(self):
        return self._np.concatenate([self.pos, self.vel, self.goal - self.pos])

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

    def render(self):
        pass

    def close(self):
        pass


def _gym_module():
    """A stand-in `gym` module whose `make` returns the synthetic task (the scripts' MuJoCo tasks need the old
    gym and mujoco-py, which do not install on Python 3.12)."""
    mod = types.ModuleType("gym")
    mod.make = lambda name, **kw: _ReacherEnv()
    return mod


def _rl(dev, name: str, script: str, extra: list, stop: int):
    """Khrylx/PyTorch-RL's examples/<script> as is (`--env-name PointReacher-v0 --num-threads 1
    --min-batch-size 500 --eval-batch-size 100 --max-iter-num 20`; the GPU picked by the script when there is one),
    on the synthetic task above: per iteration, samples collected with the policy on the CPU, an update on the
    device, an evaluation. Its `utils`, `models` and `core` packages are imported from the repository's root (the
    script appends it to the path); they are forgotten afterwards, and torch's default dtype, which the script sets
    to float64, is put back. The window spans the 2nd to the `stop`-th `backward`."""
    root = _need_repo("pytorch_rl")
    tmp = hc._tmp()
    argv = ["--env-name", "PointReacher-v0", "--num-threads", "1", "--min-batch-size", "500",
            "--eval-batch-size", "100", "--max-iter-num", "20", *extra]

    def window():
        saved = sys.modules.get("gym")
        sys.modules["gym"] = _gym_module()
        dtype = torch.get_default_dtype()
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, stop, stop_script=True):
                hc.run_script(root / "examples" / script, argv, tmp)
        finally:
            torch.set_default_dtype(dtype)
            if saved is None:
                sys.modules.pop("gym", None)
            else:
                sys.modules["gym"] = saved
            for m in [m for m in sys.modules if m.split(".")[0] in ("utils", "models", "core")
                      and (getattr(sys.modules[m], "__file__", None) or "").startswith(str(root))]:
                del sys.modules[m]
    return {"train_window": window}


def rl_trpo(dev):
    """TRPO (trpo_gym.py): the value function fitted by L-BFGS (one backward an evaluation), the policy by a
    conjugate-gradient natural step and a line search; the window is the 2nd to the 60th backward."""
    return _rl(dev, "rl.trpo", "trpo_gym.py", [], 60)


def rl_ppo(dev):
    """PPO (ppo_gym.py): clipped surrogate and value losses by minibatches of 64 over 10 epochs (two backward
    passes a minibatch, 160 an iteration); the window is the 2nd to the 200th backward (the first update, the
    next samples and evaluation, the second update's start)."""
    return _rl(dev, "rl.ppo", "ppo_gym.py", [], 200)


def rl_a2c(dev):
    """A2C (a2c_gym.py): one value and one policy step an iteration; the window is the 2nd to the 16th
    backward."""
    return _rl(dev, "rl.a2c", "a2c_gym.py", [], 16)


MODELS = [
    # name, package, builder
    ("bindsnet.stdp", "bindsnet", bindsnet_stdp),
    ("cheetah.beam", "cheetah", cheetah_beam),
    ("cleverhans.attacks", "cleverhans", cleverhans_attacks),
    ("flowtorch.flows", "flowtorch", flowtorch_flows),
    ("hessian_eigenthings.curvature", "hessian_eigenthings", hessian_eigenthings_curvature),
    ("kmeans_gpu.cluster", "kmeans_gpu", kmeans_gpu_cluster),
    ("chop.constrained", "chop", chop_constrained),
    ("ksddescent.sampling", "ksddescent", ksddescent_sampling),
    ("sam.adaptive", "sam", sam_adaptive),
    ("sam.narrow", "sam", sam_narrow),
    ("rl.trpo", "pytorch_rl", rl_trpo),
    ("rl.ppo", "pytorch_rl", rl_ppo),
    ("rl.a2c", "pytorch_rl", rl_a2c),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh22", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
