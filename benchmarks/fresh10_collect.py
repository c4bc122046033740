"""Record the syncs of an eleventh set, `fresh10` (a sealed test set): libraries and training code nobody here read.

`fresh10` is recorded the same way as `fresh6`, `fresh8` and `fresh9` (same recorder, same windows inside a script's
own loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set and the
earlier sets and in two public training repositories that no set and no hand label uses. It is a sealed test set:
scored for totals only, its misses never listed. The workloads were written from the libraries' documented public
API (README / docs examples, the names and signatures they export), on synthetic data with random weights, before
anyone ran the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh10; encodec's, pfrl's, dadaptation's and
  gym's are built from their source distributions): pypose (Lie groups, Levenberg-Marquardt and Gauss-Newton
  optimisers, IMU preintegration, filters, LQR, ICP, EPnP, splines; robotics / 3-D), encodec (the EnCodec neural
  audio codec with random weights: training steps with its quantizer and STFT discriminator, encode / decode,
  compression), bayesian-torch (Bayesian layers, dnn_to_bnn, Monte-Carlo prediction, uncertainty metrics),
  torch-struct (structured distributions: linear-chain, semi-Markov and dependency CRFs, alignment, CKY),
  pfrl (deep RL agents on gym's classic-control environments; + gym, gym-notices), mixture-of-experts (a gated
  MoE layer and its hierarchical form) and dadaptation (D-Adaptation optimisers). Their other needs (numpy, scipy,
  einops, torchvision, torchaudio, scikit-learn, tensorboard, pillow, filelock, cloudpickle, packaging) are on the
  GPU machine. numpy 2 lacks `np.bool8`, which gym 0.26's environment checker names: it is set to `np.bool_`.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh10/repos/<name>:
  sgrvinod/a-PyTorch-Tutorial-to-Object-Detection (train.py and eval.py as they are, SSD300, on synthetic
  files in create_data_lists.py's layout) and rosinality/vq-vae-2-pytorch (train_vqvae.py as is, on a synthetic
  ImageFolder; GPU only).

    python benchmarks/fresh10_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh10_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh10 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh10 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import json
import os
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
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh10" / "repos", ac.REPO / ".whl" / "fresh10"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh10/repos/<name>)
REPOS = {
    "ssd": ("sgrvinod/a-PyTorch-Tutorial-to-Object-Detection", "5d5b75968c3cf1ffd2718bf828a7560b7ee8e8b5",
            ["train.py", "eval.py", "model.py", "datasets.py", "utils.py"]),
    "vqvae2": ("rosinality/vq-vae-2-pytorch", "ef5f67c46f93624163776caec9e0d95063910eca",
               ["train_vqvae.py", "vqvae.py", "scheduler.py", "distributed"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["pypose==0.9.5", "bayesian-torch==0.5.0", "torch-struct==0.5", "mixture-of-experts==0.2.3",
          "gym-notices==0.1.0"]
# published as source distributions only: their pure-Python wheels are built here (`pip wheel --no-deps`)
SDISTS = ["encodec==0.1.1", "pfrl==0.4.0", "dadaptation==3.2", "gym==0.26.2"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"pypose": "pypose", "encodec": "encodec", "bayesian_torch": "bayesian-torch", "torch_struct": "torch-struct",
         "pfrl": "pfrl", "mixture_of_experts": "mixture-of-experts", "dadaptation": "dadaptation", "gym": "gym",
         "torchvision": "torchvision", "torchaudio": "torchaudio", "einops": "einops", "numpy": "numpy",
         "scipy": "scipy", "scikit_learn": "scikit-learn"}


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _images(folder: Path, n: int, size: int = 64, seed: int = 0) -> list:
    """n random RGB JPEG files in folder; their paths."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        p = folder / f"img{i:04d}.jpg"
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(p)
        paths.append(str(p))
    return paths


# ============================================================================================
# Libraries
# ============================================================================================

# -- pypose: the docs' examples: LieTensor algebra, LM / GN on a pose-inversion and a pose-graph model (solvers,
#    kernels, corrector, strategies, StopOnPlateau), IMU preintegration, EKF / UKF / PF on a nonlinear system,
#    LQR on an LTI system, ICP, EPnP, reprojection, splines, knn ---------------------------------------------------

def pypose_robotics(dev):
    import pypose as pp

    class PoseInv(nn.Module):  # the docs' LM example
        def __init__(self, *dim):
            super().__init__()
            self.pose = pp.Parameter(pp.randn_SE3(*dim))

        def forward(self, input):
            return (self.pose @ input).Log().tensor()

    class PoseGraph(nn.Module):  # a pose graph: edges (i, j) with measured relative poses
        def __init__(self, nodes):
            super().__init__()
            self.nodes = pp.Parameter(nodes)

        def forward(self, edges, poses):
            node1 = self.nodes[edges[..., 0]]
            node2 = self.nodes[edges[..., 1]]
            error = poses.Inv() @ node1.Inv() @ node2
            return error.Log().tensor()

    def lie():  # the LieTensor basics
        x = pp.randn_SE3(8, device=dev)
        y = pp.randn_se3(8, device=dev, requires_grad=True)
        z = (x @ y.Exp()).Log()
        p = torch.randn(8, 3, device=dev)
        q = x.Act(p) + x.Inv().Act(p)
        r = pp.randn_SO3(8, device=dev)
        e = r.euler() + r.matrix().sum(-1) + pp.mat2SO3(r.matrix()).Log().tensor()
        s = pp.randn_Sim3(4, device=dev).Log().Exp()
        (z.tensor().sum() + q.sum() + e.sum() + s.tensor().sum() + x.Adj(y).sum()).backward()
        pp.module.GeodesicLoss()(pp.randn_SO3(8, device=dev), r)

    def lm():  # LM with the solvers, kernels, corrector and strategies, then GN, stopped by StopOnPlateau
        input = pp.randn_SE3(2, 2, device=dev)
        for solver, strategy, kernel, corrector in (
                (pp.optim.solver.Cholesky(), pp.optim.strategy.Adaptive(damping=1e-6), None, None),
                (pp.optim.solver.LSTSQ(), pp.optim.strategy.TrustRegion(radius=1e4), pp.optim.kernel.Huber(),
                 None),
                (pp.optim.solver.PINV(), pp.optim.strategy.Constant(damping=1e-4), pp.optim.kernel.Cauchy(),
                 pp.optim.corrector.FastTriggs(pp.optim.kernel.Cauchy()))):
            model = PoseInv(2, 2).to(dev)
            kw = {"kernel": kernel} if kernel is not None else {}
            if corrector is not None:
                kw["corrector"] = corrector
            optimizer = pp.optim.LM(model, solver=solver, strategy=strategy, **kw)
            scheduler = pp.optim.scheduler.StopOnPlateau(optimizer, steps=6, patience=3, decreasing=1e-3,
                                                         verbose=False)
            scheduler.optimize(input=input)
        model = PoseInv(2, 2).to(dev)
        optimizer = pp.optim.GN(model, solver=pp.optim.solver.LSTSQ())
        for _ in range(4):
            loss = optimizer.step(input)
            if loss < 1e-15:
                break
        # a pose graph of 12 nodes on a loop, odometry and loop-closure edges, weights
        n = 12
        gt = pp.randn_SE3(n, sigma=0.5, device=dev)
        edges = torch.tensor([[i, (i + 1) % n] for i in range(n)] + [[0, 6], [3, 9]], device=dev)
        poses = gt[edges[:, 0]].Inv() @ gt[edges[:, 1]]
        graph = PoseGraph(gt * pp.randn_SE3(n, sigma=0.1, device=dev)).to(dev)
        weight = torch.eye(6, device=dev).expand(edges.shape[0], 6, 6)
        optimizer = pp.optim.LM(graph, solver=pp.optim.solver.Cholesky(),
                                strategy=pp.optim.strategy.TrustRegion(radius=1e4), weight=weight)
        scheduler = pp.optim.scheduler.StopOnPlateau(optimizer, steps=5, patience=2, decreasing=1e-6)
        while scheduler.continual():
            loss = optimizer.step(input=(edges, poses), weight=weight)
            scheduler.step(loss)

    def imu():  # the IMU preintegrator streaming windows of 3 samples (its cumulative product fails on longer
        # windows in this version), with covariance propagation, then with given rotations and reset
        integrator = pp.module.IMUPreintegrator(reset=False, prop_cov=True).to(dev)
        B, T = 2, 3
        for _ in range(6):
            dt = torch.full((B, T, 1), 0.005, device=dev)
            gyro = torch.randn(B, T, 3, device=dev) * 0.1
            acc = torch.randn(B, T, 3, device=dev) + torch.tensor([0.0, 0.0, 9.81], device=dev)
            states = integrator(dt, gyro, acc)
        resetting = pp.module.IMUPreintegrator(reset=True, prop_cov=True).to(dev)
        states2 = resetting(dt, gyro, acc, rot=pp.randn_SO3(B, T, device=dev))
        (states["pos"].sum() + states2["cov"].sum()).item()

    class NLS(pp.module.NLS):  # the docs' nonlinear system for the filters
        def state_transition(self, state, input, t=None):
            return state.cos() + input

        def observation(self, state, input, t=None):
            return state.sin() + input

    def filters():  # EKF, UKF and PF steps (the docs' examples), a short tracking loop each
        model = NLS().to(dev)
        for filt in (pp.module.EKF(model), pp.module.UKF(model), pp.module.PF(model, particles=200)):
            x = torch.randn(2, device=dev)
            P = torch.eye(2, device=dev)
            Q = torch.eye(2, device=dev) * 0.01
            R = torch.eye(2, device=dev) * 0.01
            est = torch.zeros(2, device=dev)
            for t in range(4):
                u = torch.randn(2, device=dev) * 0.1
                x = model.state_transition(x, u) + 0.1 * torch.randn(2, device=dev)
                y = model.observation(x, u) + 0.1 * torch.randn(2, device=dev)
                est, P = filt(est, y, u, P, Q, R)

    def control():  # LQR on an LTI system (the docs' example)
        n_batch, T, n_state, n_ctrl = 2, 5, 4, 3
        n_sc = n_state + n_ctrl
        Q = torch.randn(n_batch, T, n_sc, n_sc, device=dev)
        Q = Q.mT @ Q + 0.1 * torch.eye(n_sc, device=dev)
        p = torch.randn(n_batch, T, n_sc, device=dev)
        A = torch.tensor([[1.0, 1.0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 1.0], [0, 0, 0, 1.0]], device=dev)
        A = A.expand(n_batch, n_state, n_state)
        B = torch.randn(n_batch, n_state, n_ctrl, device=dev)
        C = torch.eye(n_state, device=dev).repeat(n_batch, 1, 1)
        D = torch.zeros(n_batch, n_state, n_ctrl, device=dev)
        x_init = torch.randn(n_batch, n_state, device=dev)
        lti = pp.module.LTI(A, B, C, D).to(dev)
        lqr = pp.module.LQR(lti, Q, p, T).to(dev)
        x, u, cost = lqr(x_init)
        cost.sum().item()

    def geometry():  # ICP, EPnP, reprojection, knn, svdtf, splines, trajectory metrics
        source = torch.randn(2, 200, 3, device=dev)
        tf = pp.randn_SE3(2, sigma=0.1, device=dev)
        target = tf.unsqueeze(-2).Act(source)
        pp.module.ICP()(source, target)
        f, H, W = 100.0, 120, 160
        intrinsics = torch.tensor([[f, 0, W / 2], [0, f, H / 2], [0, 0, 1.0]], device=dev).expand(2, 3, 3)
        points = torch.randn(2, 30, 3, device=dev) * 0.5 + torch.tensor([0, 0, 5.0], device=dev)
        pose = pp.randn_SE3(2, sigma=0.1, device=dev)
        pixels = pp.point2pixel(points, intrinsics, pose)
        est = pp.module.EPnP()(points, pixels, intrinsics)
        pp.reprojerr(points, pixels, intrinsics, est, reduction="norm")
        pp.knn(source, target, k=3)
        pp.svdtf(source, target)
        waypoints = pp.randn_SE3(2, 6, sigma=0.3, device=dev)
        pp.chspline(torch.randn(2, 6, 3, device=dev), interval=0.2)
        pp.bspline(waypoints, interval=0.2)
        stamps = torch.arange(20, device=dev, dtype=torch.float64) * 0.1
        traj = pp.randn_SE3(20, sigma=0.1, device=dev, dtype=torch.float64)
        noisy = traj * pp.randn_SE3(20, sigma=0.01, device=dev, dtype=torch.float64)
        pp.metric.ape(stamps, traj, stamps, noisy, etype="translation")  # (align=True mixes in a host tensor)
        pp.metric.rpe(stamps, traj, stamps, noisy, etype="rotation")
    return {"lie": lie, "lm": lm, "imu": imu, "filters": filters, "control": control, "geometry": geometry}


# -- encodec: the 24 kHz and 48 kHz EnCodec models with random weights: the README's encode / decode, bandwidths,
#    training steps (reconstruction + commitment, its MS-STFT discriminator), compress ---------------------------

def encodec_codec(dev):
    from encodec import EncodecModel
    from encodec.compress import compress
    from encodec.msstftd import MultiScaleSTFTDiscriminator

    model = EncodecModel.encodec_model_24khz(pretrained=False).to(dev)
    model48 = EncodecModel.encodec_model_48khz(pretrained=False).to(dev)
    disc = MultiScaleSTFTDiscriminator(filters=16).to(dev)
    g = torch.Generator().manual_seed(0)
    wav = (0.1 * torch.randn(2, 1, 24000, generator=g)).to(dev)
    wav48 = (0.1 * torch.randn(1, 2, 48000, generator=g)).to(dev)

    def codec():  # the README: set a bandwidth, encode, concatenate the codes, decode; both models
        model.eval()
        model48.eval()
        with torch.no_grad():
            for bw in (1.5, 6.0, 24.0):
                model.set_target_bandwidth(bw)
                frames = model.encode(wav)
                torch.cat([encoded[0] for encoded in frames], dim=-1)
                model.decode(frames)
            model48.set_target_bandwidth(12.0)
            frames = model48.encode(wav48)
            model48.decode(frames)

    opt = torch.optim.Adam(model.parameters(), lr=3e-4)
    dopt = torch.optim.Adam(disc.parameters(), lr=3e-4)

    def train():  # reconstruction + quantizer losses, then the discriminator's hinge and feature-matching losses
        model.train()
        model.set_target_bandwidth(6.0)
        for _ in range(2):
            emb = model.encoder(wav)
            qres = model.quantizer(emb, model.frame_rate, model.bandwidth)
            out = model.decoder(qres.quantized)[..., :wav.shape[-1]]
            logits_real, fmap_real = disc(wav)
            logits_fake, fmap_fake = disc(out)
            adv = sum(F.relu(1 - l).mean() for l in logits_fake) / len(logits_fake)
            feat = sum(F.l1_loss(a, b.detach()) for fa, fb in zip(fmap_fake, fmap_real) for a, b in zip(fa, fb))
            loss = F.l1_loss(out, wav) + qres.penalty.mean() + 0.1 * adv + 0.1 * feat
            opt.zero_grad()
            loss.backward()
            opt.step()
            logits_real, _ = disc(wav)
            logits_fake, _ = disc(out.detach())
            dloss = sum(F.relu(1 - r).mean() + F.relu(1 + f).mean() for r, f in zip(logits_real, logits_fake))
            dopt.zero_grad()
            dloss.backward()
            dopt.step()
        with torch.no_grad():
            model(wav)  # the model's own forward (encode + decode)

    def compression():  # encodec.compress without the language model
        model.eval()
        model.set_target_bandwidth(3.0)
        model.name = "encodec_24khz"  # compress names the model in its header; pretrained=False leaves it unset
        compress(model, wav[0, :, :6000])  # (decompress rebuilds the named model with its pretrained weights)
    return {"codec": codec, "train": train, "compression": compression}


# -- bayesian_torch: the README's dnn_to_bnn on a CNN (Reparameterization and Flipout), ELBO training, Monte-Carlo
#    prediction with predictive entropy / mutual information, its layers used directly (LSTM, conv), AvU loss -----

def bayesian_models(dev):
    from bayesian_torch.layers import Conv2dFlipout, LinearReparameterization, LSTMReparameterization
    from bayesian_torch.models.dnn_to_bnn import dnn_to_bnn, get_kl_loss
    from bayesian_torch.utils.avuc_loss import AvULoss
    from bayesian_torch.utils.util import mutual_information, predictive_entropy

    def cnn():
        return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1),
                             nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(), nn.Linear(32 * 16, 64), nn.ReLU(),
                             nn.Linear(64, 10))
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 3, 16, 16, generator=g).to(dev)
    y = torch.randint(0, 10, (32,), generator=g).to(dev)

    prior = {"prior_mu": 0.0, "prior_sigma": 1.0, "posterior_mu_init": 0.0, "posterior_rho_init": -3.0,
             "type": "Reparameterization", "moped_enable": False, "moped_delta": 0.5}
    models = {}
    for kind in ("Reparameterization", "Flipout"):
        m = cnn()
        dnn_to_bnn(m, {**prior, "type": kind})
        models[kind] = m.to(dev)
    moped = cnn().to(dev)
    dnn_to_bnn(moped, {**prior, "moped_enable": True})
    models["moped"] = moped.to(dev)

    def train():  # the README's training step, per model
        for m in models.values():
            m.train()
            opt = torch.optim.Adam(m.parameters(), lr=1e-3)
            for _ in range(2):
                out = m(x)
                kl = get_kl_loss(m)
                loss = F.cross_entropy(out, y) + kl / x.shape[0]
                opt.zero_grad()
                loss.backward()
                opt.step()

    avu = AvULoss()

    def predict():  # Monte-Carlo prediction, the README's accuracy, entropy / mutual information, the AvU loss
        m = models["Reparameterization"]
        m.eval()
        with torch.no_grad():
            probs = torch.stack([F.softmax(m(x), dim=-1) for _ in range(8)])
        pred_mean = probs.mean(dim=0)
        y_pred = torch.argmax(pred_mean, axis=-1)
        (y_pred.cpu().numpy() == y.cpu().numpy()).mean()
        predictive_entropy(probs.cpu().numpy())
        mutual_information(probs.cpu().numpy())
        m.train()
        logits = m(x)
        loss = F.cross_entropy(logits, y) + 3.0 * avu(logits, y, optimal_uncertainty_threshold=0.5, type=0)
        loss.backward()

    lstm = LSTMReparameterization(in_features=8, out_features=16).to(dev)
    head = LinearReparameterization(in_features=16, out_features=1).to(dev)
    conv = Conv2dFlipout(in_channels=3, out_channels=4, kernel_size=3).to(dev)

    def layers():  # its layers directly: each returns its output and its KL term
        seq = torch.randn(4, 12, 8, device=dev)
        res = lstm(seq)  # (output, (h, c), kl)
        out, kl1 = res[0], res[-1]
        pred, kl2 = head(out[:, -1])
        c, kl3 = conv(x[:4])
        (pred.pow(2).mean() + c.mean() + (kl1 + kl2 + kl3) / 4).backward()
    return {"train": train, "predict": predict, "layers": layers}


# -- torch_struct: the README's structured distributions: a linear-chain CRF tagger trained by log-likelihood,
#    its argmax / marginals / entropy / samples / top-k, semi-Markov and dependency CRFs, CKY (AlignmentCRF needs
#    genbmm, a compiled extension: left out) --------------------------------------------------------------------

def struct_models(dev):
    import torch_struct as ts

    B, N, C = 4, 12, 5
    g = torch.Generator().manual_seed(0)
    lengths = torch.tensor([12, 10, 7, 12]).to(dev)
    emb = nn.Embedding(50, 32).to(dev)
    proj = nn.Linear(32, C * C).to(dev)
    words = torch.randint(0, 50, (B, N + 1), generator=g).to(dev)
    tags = torch.randint(0, C, (B, N + 1), generator=g).to(dev)

    def crf():  # a tagger: log_potentials from a network, the gold sequence's log-probability, then decoding
        opt = torch.optim.Adam([*emb.parameters(), *proj.parameters()], lr=1e-2)
        log_pot = proj(emb(words[:, 1:])).view(B, N, C, C)
        dist = ts.LinearChainCRF(log_pot, lengths=lengths + 1)
        gold = ts.LinearChainCRF.struct.to_parts(tags, C, lengths=lengths + 1).type_as(log_pot)
        loss = -dist.log_prob(gold).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        dist = ts.LinearChainCRF(proj(emb(words[:, 1:])).view(B, N, C, C).detach(), lengths=lengths + 1)
        best = dist.argmax
        ts.LinearChainCRF.struct.from_parts(best)
        dist.marginals
        dist.entropy
        dist.partition
        dist.topk(3)
        dist.sample((2,))

    def semimarkov():  # segments of up to K words
        K = 3
        log_pot = torch.randn(B, N, K, C, C, device=dev, requires_grad=True)
        dist = ts.SemiMarkovCRF(log_pot, lengths=lengths + 1)
        (dist.partition.sum() + dist.entropy.sum()).backward()
        dist.argmax
        dist.marginals

    def dependency():  # projective and non-projective dependency trees, a tree CRF (CKY)
        arcs = torch.randn(B, N, N, device=dev, requires_grad=True)
        dep = ts.DependencyCRF(arcs, lengths=lengths)
        (dep.partition.sum() - dep.entropy.sum()).backward()
        dep.argmax
        nonproj = ts.NonProjectiveDependencyCRF(torch.randn(B, N, N, device=dev), lengths=lengths)
        nonproj.marginals
        nonproj.partition
        spans = torch.randn(B, N, N, 3, device=dev, requires_grad=True)
        tree = ts.TreeCRF(spans, lengths=lengths)
        tree.partition.sum().backward()
        tree.argmax
    return {"crf": crf, "semimarkov": semimarkov, "dependency": dependency}


# -- pfrl: the README's quickstart agent loop (act / observe) on gym's classic-control tasks: DoubleDQN on
#    CartPole, PPO on CartPole, SAC on Pendulum (its squashed Gaussian policy), categorical DQN, statistics -------

def _bool8():
    import numpy as np
    if not hasattr(np, "bool8"):  # gym 0.26's environment checker names np.bool8, gone from numpy 2
        np.bool8 = np.bool_


def pfrl_agents(dev):
    _bool8()
    import gym
    import numpy as np
    import pfrl
    from torch import distributions

    gpu = 0 if dev.type == "cuda" else -1
    phi = lambda x: x.astype(np.float32, copy=False)  # noqa: E731

    def run(agent, env, steps, seed=0):  # the README's loop, with gym 0.26's reset / step
        obs, _ = env.reset(seed=seed)
        for _ in range(steps):
            action = agent.act(obs)
            obs, reward, terminated, truncated, _ = env.step(action)
            reset = terminated or truncated
            agent.observe(obs, reward, terminated, reset)
            if reset:
                obs, _ = env.reset()
        agent.get_statistics()

    cart = gym.make("CartPole-v1")
    obs_size, n_actions = cart.observation_space.low.size, cart.action_space.n

    def dqn():
        q_func = nn.Sequential(nn.Linear(obs_size, 64), nn.ReLU(), nn.Linear(64, n_actions),
                               pfrl.q_functions.DiscreteActionValueHead())
        opt = torch.optim.Adam(q_func.parameters(), eps=1e-2)
        explorer = pfrl.explorers.ConstantEpsilonGreedy(epsilon=0.3, random_action_func=cart.action_space.sample)
        agent = pfrl.agents.DoubleDQN(q_func, opt, pfrl.replay_buffers.ReplayBuffer(capacity=10 ** 4), 0.9,
                                      explorer, replay_start_size=32, update_interval=1, target_update_interval=20,
                                      minibatch_size=32, phi=phi, gpu=gpu)
        run(agent, cart, 80)
        with agent.eval_mode():
            run(agent, cart, 10)

    def categorical():  # categorical DQN with a prioritized replay buffer
        q_func = pfrl.q_functions.DistributionalFCStateQFunctionWithDiscreteAction(
            obs_size, n_actions, n_atoms=21, v_min=-10, v_max=10, n_hidden_channels=32, n_hidden_layers=1)
        opt = torch.optim.Adam(q_func.parameters(), lr=1e-3)
        explorer = pfrl.explorers.LinearDecayEpsilonGreedy(1.0, 0.1, 50, cart.action_space.sample)
        rbuf = pfrl.replay_buffers.PrioritizedReplayBuffer(capacity=10 ** 4, alpha=0.6, beta0=0.4, num_steps=3)
        agent = pfrl.agents.CategoricalDoubleDQN(q_func, opt, rbuf, 0.99, explorer, replay_start_size=32,
                                                 update_interval=1, target_update_interval=20, minibatch_size=32,
                                                 phi=phi, gpu=gpu)
        run(agent, cart, 80)

    def ppo():
        model = nn.Sequential(nn.Linear(obs_size, 64), nn.Tanh(),
                              pfrl.nn.Branched(nn.Sequential(nn.Linear(64, n_actions),
                                                             pfrl.policies.SoftmaxCategoricalHead()),
                                               nn.Linear(64, 1)))
        opt = torch.optim.Adam(model.parameters(), lr=3e-4, eps=1e-5)
        agent = pfrl.agents.PPO(model, opt, gpu=gpu, phi=phi, update_interval=64, minibatch_size=16, epochs=2,
                                clip_eps_vf=None, entropy_coef=0.01, standardize_advantages=True)
        run(agent, cart, 130)

    pend = gym.make("Pendulum-v1")
    o_size, a_size = pend.observation_space.low.size, pend.action_space.low.size

    def squashed_diagonal_gaussian_head(x):  # the SAC example's policy head
        mean, log_scale = torch.chunk(x, 2, dim=1)
        log_scale = torch.clamp(log_scale, -20.0, 2.0)
        var = torch.exp(log_scale * 2)
        base = distributions.Independent(distributions.Normal(loc=mean, scale=torch.sqrt(var)), 1)
        return distributions.transformed_distribution.TransformedDistribution(
            base, [distributions.transforms.TanhTransform(cache_size=1)])

    def sac():
        policy = nn.Sequential(nn.Linear(o_size, 64), nn.ReLU(), nn.Linear(64, a_size * 2),
                               pfrl.nn.lmbda.Lambda(squashed_diagonal_gaussian_head))

        def q():
            return nn.Sequential(pfrl.nn.ConcatObsAndAction(), nn.Linear(o_size + a_size, 64), nn.ReLU(),
                                 nn.Linear(64, 1))
        q1, q2 = q(), q()
        agent = pfrl.agents.SoftActorCritic(
            policy, q1, q2, torch.optim.Adam(policy.parameters(), lr=3e-4), torch.optim.Adam(q1.parameters(), lr=3e-4),
            torch.optim.Adam(q2.parameters(), lr=3e-4), pfrl.replay_buffers.ReplayBuffer(10 ** 4), 0.99,
            replay_start_size=32, gpu=gpu, minibatch_size=32, phi=phi,
            burnin_action_func=lambda: np.random.uniform(pend.action_space.low, pend.action_space.high).astype(
                np.float32),
            entropy_target=-a_size, temperature_optimizer_lr=3e-4)
        run(agent, pend, 60)
    return {"dqn": dqn, "categorical": categorical, "ppo": ppo, "sac": sac}


# -- mixture_of_experts: the README's MoE and HeirarchicalMoE layers in a small model trained with their
#    auxiliary loss, and in evaluation ----------------------------------------------------------------------------

def moe_models(dev):
    from mixture_of_experts import HeirarchicalMoE, MoE

    moe = MoE(dim=64, num_experts=8, hidden_dim=128, activation=nn.LeakyReLU, second_policy_train="random",
              second_policy_eval="random", second_threshold_train=0.2, second_threshold_eval=0.2,
              capacity_factor_train=1.25, capacity_factor_eval=2.0, loss_coef=1e-2).to(dev)
    hmoe = HeirarchicalMoE(dim=64, num_experts=(4, 4)).to(dev)
    head = nn.Linear(64, 10).to(dev)
    opt = torch.optim.Adam([*moe.parameters(), *hmoe.parameters(), *head.parameters()], lr=1e-3)
    x = torch.randn(4, 256, 64, device=dev)
    y = torch.randint(0, 10, (4, 256), device=dev)

    def train():
        moe.train()
        hmoe.train()
        out, aux = moe(x)
        out2, aux2 = hmoe(out)
        loss = F.cross_entropy(head(out2).reshape(-1, 10), y.reshape(-1)) + aux + aux2
        opt.zero_grad()
        loss.backward()
        opt.step()

    def infer():
        moe.eval()
        hmoe.eval()
        with torch.no_grad():
            hmoe(moe(x)[0])
    return {"train": train, "infer": infer}


# -- dadaptation: the README's D-Adaptation optimisers (lr=1.0) on a small classifier ----------------------------

def dadapt_optimisers(dev):
    import dadaptation

    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 20, generator=g).to(dev)
    y = torch.randint(0, 5, (256,), generator=g).to(dev)

    def train():
        for name, kw in (("DAdaptAdam", {"decouple": True, "weight_decay": 1e-4}), ("DAdaptSGD", {"momentum": 0.9}),
                         ("DAdaptAdaGrad", {}), ("DAdaptLion", {}), ("DAdaptAdan", {})):
            torch.manual_seed(0)
            model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(dev)
            opt = getattr(dadaptation, name)(model.parameters(), lr=1.0, **kw)
            for i in range(3):
                loss = F.cross_entropy(model(x[i * 64:(i + 1) * 64]), y[i * 64:(i + 1) * 64])
                opt.zero_grad()
                loss.backward()
                opt.step()
    return {"train": train}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _ssd_data(folder: Path, n_train: int, n_test: int) -> None:
    """TRAIN_/TEST_images.json and _objects.json in create_data_lists.py's layout, and random JPEGs with 1 to 3
    boxes of VOC labels each."""
    import random
    rnd = random.Random(0)
    for split, n in (("TRAIN", n_train), ("TEST", n_test)):
        paths = _images(folder / split.lower(), n, size=160, seed=len(split))
        objects = []
        for _ in paths:
            k = rnd.randint(1, 3)
            boxes = []
            for _ in range(k):
                x0, y0 = rnd.randint(0, 90), rnd.randint(0, 90)
                boxes.append([x0, y0, x0 + rnd.randint(20, 69), y0 + rnd.randint(20, 69)])
            objects.append({"boxes": boxes, "labels": [rnd.randint(1, 20) for _ in range(k)],
                            "difficulties": [int(rnd.random() < 0.2) for _ in range(k)]})
        (folder / f"{split}_images.json").write_text(json.dumps(paths))
        (folder / f"{split}_objects.json").write_text(json.dumps(objects))
    (folder / "label_map.json").write_text("{}")


class _NoPretrained:
    """torchvision.models.vgg16 without ImageNet weights (no network on the GPU machine): `pretrained=True`
    becomes random weights."""

    def __enter__(self):
        import torchvision
        self.tv, self.orig = torchvision.models, torchvision.models.vgg16
        self.tv.vgg16 = lambda *a, pretrained=False, **kw: self.orig(weights=None)
        return self

    def __exit__(self, *exc):
        self.tv.vgg16 = self.orig


def ssd_train(dev):
    """train.py as is (SSD300, MultiBoxLoss, SGD, batch 8, 4 loader workers) on 64 synthetic training images
    (its data folder './' is the run's folder); the VGG-16 base built without ImageNet weights. The window spans
    the 2nd to the 8th `backward`: six training steps of the first epoch."""
    root = fc._on_path(_need_repo("ssd"))
    tmp = Path(hc._tmp())
    _ssd_data(tmp, 64, 8)

    def window():
        with _NoPretrained(), hc.window_on(torch.Tensor, "backward", "ssd.train", "train", dev, 2, 8,
                                           stop_script=True):
            hc.run_script(root / "train.py", [], str(tmp))
    return {"train_window": window}


def ssd_eval(dev):
    """eval.py as is (batches of 64, detect_objects at min_score 0.01, NMS at 0.45, top 200) on 128 synthetic test
    images, with a checkpoint of an SSD300 of random weights saved as train.py's save_checkpoint saves it. Its
    classifier heads' background bias is raised by 6 so that random weights leave a few candidate boxes per class
    rather than all 8732; torch.load reads the pickled model (weights_only=False, the default before torch 2.6).
    The window spans the 1st to the 2nd `detect_objects`: the first batch's detection (after its forward) and the
    second batch's loading and forward. Its calculate_mAP, after the loop, is left out: it indexes a host tensor with cuda indices
    (`torch.LongTensor(range(n))[true_class_images == this_image]`), which torch 2 refuses."""
    root = fc._on_path(_need_repo("ssd"))
    tmp = Path(hc._tmp())
    _ssd_data(tmp, 0, 128)
    with _NoPretrained():
        import model as ssd_model  # kept imported: the checkpoint's unpickling and the window use this module
        net = ssd_model.SSD300(n_classes=21)
    with torch.no_grad():
        for name, mod in net.pred_convs.named_children():
            if name.startswith("cl_"):
                mod.bias.view(-1, 21)[:, 0] += 6.0
    torch.save({"epoch": 0, "model": net, "optimizer": None}, tmp / "checkpoint_ssd300.pth.tar")

    def window():
        orig = torch.load
        torch.load = lambda *a, **kw: orig(*a, **{"weights_only": False, **kw})
        try:
            with hc.window_on(ssd_model.SSD300, "detect_objects", "ssd.eval", "infer", dev, 1, 2, stop_script=True):
                hc.run_script(root / "eval.py", [], str(tmp))
        finally:
            torch.load = orig
            for m in ("model", "utils"):
                if (getattr(sys.modules.get(m), "__file__", None) or "").startswith(str(root)):
                    del sys.modules[m]
    return {"infer_window": window}


def vqvae2_train(dev):
    """train_vqvae.py as is (VQ-VAE-2, Adam, the cycle scheduler, batch 128, 2 loader workers) on a synthetic
    ImageFolder (256 JPEGs of 64x64 in two classes: two steps an epoch, a checkpoint saved after each),
    `--size 64 --epoch 100 --sched cycle` (fewer epochs leave the cycle's warm-up phase no step). Its sample grid calls
    torchvision's save_image with `range=`, renamed `value_range` since torchvision 0.10: the old name is mapped.
    The window spans the 2nd to the 7th `backward`: five training steps of the first epoch. GPU only."""
    root = fc._on_path(_need_repo("vqvae2"))
    tmp = Path(hc._tmp())
    for c in ("a", "b"):
        _images(tmp / "data" / c, 128, size=64, seed=ord(c))
    (tmp / "sample").mkdir()
    (tmp / "checkpoint").mkdir()
    argv = ["--size", "64", "--epoch", "100", "--sched", "cycle", str(tmp / "data")]

    def window():
        if dev.type != "cuda":
            raise RuntimeError("train_vqvae.py runs on cuda only")
        import torchvision.utils as tvu
        orig = tvu.save_image

        def save_image(*a, range=None, **kw):
            return orig(*a, value_range=range, **kw)
        tvu.save_image = save_image
        try:
            with hc.window_on(torch.Tensor, "backward", "vqvae2.train", "train", dev, 2, 7, stop_script=True):
                hc.run_script(root / "train_vqvae.py", argv, str(tmp))
        finally:
            tvu.save_image = orig
    return {"train_window": window}


MODELS = [
    # name, package, builder
    ("pypose.robotics", "pypose", pypose_robotics),
    ("encodec.codec", "encodec", encodec_codec),
    ("bayesian_torch.models", "bayesian_torch", bayesian_models),
    ("torch_struct.models", "torch_struct", struct_models),
    ("pfrl.agents", "pfrl", pfrl_agents),
    ("moe.layers", "mixture_of_experts", moe_models),
    ("dadaptation.optimisers", "dadaptation", dadapt_optimisers),
    ("ssd.train", "ssd", ssd_train),
    ("ssd.eval", "ssd", ssd_eval),
    ("vqvae2.train", "vqvae2", vqvae2_train),
]


def prepare() -> None:
    """The repositories' files and the wheels (fresh_collect's prepare); the source-only ones built here."""
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
    missing = [s for s in SDISTS if not list(WHEELS_DIR.glob(s.split("==")[0].replace("-", "_") + "-"
                                                               + s.split("==")[1] + "-*.whl"))]
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(WHEELS_DIR), *missing],
                       check=True)
    print(f"wheels in {WHEELS_DIR}: " + ", ".join(sorted(p.name for p in WHEELS_DIR.glob("*.whl"))))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        prepare()
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh10", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
