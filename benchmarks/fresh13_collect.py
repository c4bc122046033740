"""Record the syncs of a fourteenth set, `fresh13` (a sealed test set): libraries and training code nobody here read.

`fresh13` is recorded the same way as `fresh9` to `fresh12` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names and signatures they export), on synthetic data with random
weights, before anyone ran the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh13): asteroid-filterbanks (audio
  filterbanks: free, analytic, parametrised sinc, STFT, gammatone encoders / decoders, complex transforms,
  Griffin-Lim and MISI phase recovery), egnn-pytorch (E(n)-equivariant graph networks: layers with edges, a full
  network with tokens, nearest neighbours, masks and adjacency degrees), torchfm (click-through and recommender
  models: FM, FFM, DeepFM, xDeepFM, AutoInt, DCN, NFM, PNN, Wide&Deep, AFN, NCF; published as a source
  distribution only, its wheel built by `prepare`), pytorch-tcn (temporal convolutional networks: causal TCNs with
  skip connections, gating, embeddings, streaming inference), torch-ac (A2C and PPO actor-critic algorithms over
  parallel environments, feed-forward and recurrent models), neurodiffeq (physics-informed networks for ODEs and
  PDEs: Solver1D, systems, Solver2D, IBVP1D; a source distribution only, built by `prepare`), baal (Bayesian
  active learning: MC dropout, ModelWrapper, ActiveLearningDataset, the loop and its heuristics) and brevitas
  (quantisation-aware training and post-training quantisation); + structlog (baal's), dependencies and unfoldNd
  (brevitas's), dill, ordered-set and seaborn (neurodiffeq's), gymnasium, farama-notifications and cloudpickle (torch-ac
  imports gymnasium), einops (egnn's) and plyfile (pointnet's dataset module imports it). Their other needs
  (numpy, scipy, scikit-learn, matplotlib, pandas, torchmetrics, tqdm, requests, tensorboard, sympy) are on the
  GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh13/repos/<name>:
  fxia22/pointnet.pytorch (utils/train_classification.py and utils/train_segmentation.py as they are, PointNet on
  synthetic ShapeNet-layout point clouds) and sfujim/TD3 (main.py as is, TD3 and DDPG on Pendulum through a
  shim giving gymnasium's environment the old gym interface the script calls).

    python benchmarks/fresh13_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh13_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh13 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh13 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import json
import os
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
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh13" / "repos", ac.REPO / ".whl" / "fresh13"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh13/repos/<name>)
REPOS = {
    "pointnet": ("fxia22/pointnet.pytorch", "bafbf401e0af19be3262e448c59313fd2be0e421", ["pointnet", "utils", "misc"]),
    "td3": ("sfujim/TD3", "34770ccdcb51df6f6c7d85c1ba7e40d71b940d16",
            ["main.py", "TD3.py", "DDPG.py", "OurDDPG.py", "utils.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["asteroid-filterbanks==0.4.0", "egnn-pytorch==0.2.8", "einops==0.8.2", "pytorch-tcn==1.2.3",
          "torch-ac==1.4.0", "gymnasium==1.4.0", "farama-notifications==0.0.6", "cloudpickle==3.1.3",
          "baal==2.1.0", "structlog==22.3.0", "brevitas==0.13.4", "dependencies==2.0.1", "unfoldNd==0.2.3",
          "dill==0.4.1", "ordered-set==4.1.0", "seaborn==0.13.2", "plyfile==1.1.3"]
# published as source distributions only: their pure-Python wheels are built here (`pip wheel --no-deps`)
SDISTS = ["torchfm==0.7.0", "neurodiffeq==0.7.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"asteroid_filterbanks": "asteroid-filterbanks", "egnn_pytorch": "egnn-pytorch", "torchfm": "torchfm",
         "pytorch_tcn": "pytorch-tcn", "torch_ac": "torch-ac", "neurodiffeq": "neurodiffeq", "baal": "baal",
         "brevitas": "brevitas", "gymnasium": "gymnasium", "numpy": "numpy", "scipy": "scipy",
         "scikit_learn": "scikit-learn", "torchmetrics": "torchmetrics", "matplotlib": "matplotlib",
         "einops": "einops", "plyfile": "plyfile"}


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

# -- asteroid_filterbanks: the docs' encoder / decoder pairs (`make_enc_dec` of the free, analytic, parametrised
#    sinc and STFT families, a pseudo-inverse decoder), a small mask-based separator trained end to end with a
#    negative SI-SDR loss; the complex transforms (mag, angle, magreim, masks, from_magphase); gammatone, sinc and
#    torch-STFT filterbanks; Griffin-Lim and MISI phase recovery ----------------------------------------------------

def _si_sdr(est, ref, eps=1e-8):
    ref = ref - ref.mean(-1, keepdim=True)
    est = est - est.mean(-1, keepdim=True)
    proj = (est * ref).sum(-1, keepdim=True) * ref / (ref.pow(2).sum(-1, keepdim=True) + eps)
    noise = est - proj
    return 10 * torch.log10(proj.pow(2).sum(-1) / (noise.pow(2).sum(-1) + eps) + eps)


def _np_float():
    """numpy 2 removed `np.float` and `np.math`, which asteroid_filterbanks' gammatone filterbank reads: given back
    as float and the math module."""
    import math

    import numpy as np
    if "float" not in np.__dict__:
        np.float = float
    if "math" not in np.__dict__:
        np.math = math


def asteroid_filterbanks_separation(dev):
    from asteroid_filterbanks import (
        STFTFB,
        Decoder,
        Encoder,
        MultiphaseGammatoneFB,
        ParamSincFB,
        TorchSTFTFB,
        griffin_lim,
        make_enc_dec,
        misi,
    )
    from asteroid_filterbanks import transforms as T

    _np_float()
    g = torch.Generator().manual_seed(0)
    t = torch.arange(8000) / 8000.0
    s1 = torch.sin(2 * torch.pi * 440 * t) * (1 + 0.3 * torch.randn(4, 1, 8000, generator=g))
    s2 = torch.sign(torch.sin(2 * torch.pi * 97 * t)) * 0.5 + 0.1 * torch.randn(4, 1, 8000, generator=g)
    sources = torch.cat([s1, s2], 1).to(dev)  # (batch, 2 sources, time)
    mixture = sources.sum(1, keepdim=True)

    class Separator(nn.Module):
        def __init__(self, fb_name, **kw):
            super().__init__()
            self.enc, self.dec = make_enc_dec(fb_name, n_filters=64, kernel_size=32, stride=16, **kw)
            n = self.enc.n_feats_out
            self.masker = nn.Sequential(nn.Conv1d(n, 128, 3, padding=1), nn.ReLU(), nn.Conv1d(128, 2 * n, 1))

        def forward(self, wav):
            tf = self.enc(wav)
            tf = tf.reshape(tf.shape[0], tf.shape[-2], tf.shape[-1])  # (batch, feats, frames)
            masks = torch.sigmoid(self.masker(tf)).view(tf.shape[0], 2, tf.shape[-2], tf.shape[-1])
            out = self.dec(tf.unsqueeze(1) * masks)  # (batch, 2 sources, time)
            return F.pad(out, (0, max(0, wav.shape[-1] - out.shape[-1])))[..., :wav.shape[-1]]

    models = [Separator("free").to(dev), Separator("analytic_free").to(dev),
              Separator("param_sinc", sample_rate=8000.0).to(dev)]

    def train():
        for m in models:
            loss = _fit(m.parameters(), 2, lambda i, m=m: -_si_sdr(m(mixture), sources).mean())
            print(f"{type(m.enc.filterbank).__name__} SI-SDR {-loss.item():.2f} dB")

    stft_enc, istft_dec = make_enc_dec("stft", n_filters=256, kernel_size=256, stride=64, who_is_pinv="decoder")
    stft_enc, istft_dec = stft_enc.to(dev), istft_dec.to(dev)
    # MelGramFB is left out: it builds its mel matrix with librosa, which the GPU machine lacks
    gamma = Encoder(MultiphaseGammatoneFB(64, 128, sample_rate=8000.0, stride=64)).to(dev)
    torch_stft = Encoder(TorchSTFTFB(256, 256, stride=64)).to(dev)
    torch_istft = Decoder(TorchSTFTFB(256, 256, stride=64)).to(dev)
    stft_fb = Encoder(STFTFB(128, 128, stride=32)).to(dev)
    sinc = Encoder(ParamSincFB(40, 101, stride=10)).to(dev)

    def transforms():
        with torch.no_grad():
            spec = stft_enc(mixture)
            mag = T.mag(spec)
            phase = T.angle(spec)
            re, im = T.reim(spec)
            T.magreim(spec)
            T.apply_mag_mask(spec, torch.rand_like(mag))
            T.apply_real_mask(spec, torch.rand_like(spec))
            T.apply_complex_mask(spec, spec)
            rebuilt = T.from_magphase(mag, phase)
            wav = istft_dec(rebuilt)
            T.to_torch_complex(spec)
            T.mul_c(spec, spec)
            gamma(mixture)
            stft_fb(mixture)
            sinc(mixture)
            torch_istft(torch_stft(mixture))
            err = (wav[..., :mixture.shape[-1]] - mixture).abs().max()
        print(f"STFT round trip error {err.item():.2e}, |re|+|im| {float(re.abs().mean() + im.abs().mean()):.3f}")

    def phase_recovery():
        with torch.no_grad():
            mag = T.mag(stft_enc(mixture))
            est = griffin_lim(mag, stft_enc, istft_dec=istft_dec, n_iter=8)
            src_mags = T.mag(stft_enc(sources))
            seps = misi(mixture, src_mags, stft_enc, istft_dec=istft_dec, n_iter=4)
        print(f"griffin-lim {tuple(est.shape)}, misi {tuple(seps.shape)}")
    return {"train": train, "transforms": transforms, "phase": phase_recovery}


# -- egnn_pytorch: the README's EGNN layers (with and without edge features, nearest neighbours, normalised
#    coordinates) trained to denoise synthetic molecules; its EGNN_Network over tokens with positions, masks and
#    adjacency degrees (sparse neighbours from an adjacency matrix) ------------------------------------------------

def egnn_equivariant(dev):
    from egnn_pytorch import EGNN, EGNN_Network

    g = torch.Generator().manual_seed(0)
    b, n = 4, 24
    coors = torch.randn(b, n, 3, generator=g).to(dev)
    noisy = coors + 0.1 * torch.randn(b, n, 3, generator=g).to(dev)
    feats = torch.randn(b, n, 16, generator=g).to(dev)
    edges = torch.randn(b, n, n, 4, generator=g).to(dev)
    mask = torch.ones(b, n, dtype=torch.bool)
    mask[1, 20:] = False
    mask[3, 16:] = False
    mask = mask.to(dev)

    layers = nn.ModuleList([EGNN(dim=16), EGNN(dim=16, edge_dim=4, norm_coors=True),
                            EGNN(dim=16, num_nearest_neighbors=8, coor_weights_clamp_value=2.0)]).to(dev)

    def layer_train():
        def loss_of(i):
            f, c = feats, noisy
            f, c = layers[0](f, c, mask=mask)
            f, c = layers[1](f, c, edges, mask=mask)
            f, c = layers[2](f, c, mask=mask)
            return ((c - coors) ** 2).sum(-1)[mask].mean()
        loss = _fit(layers.parameters(), 2, loss_of)
        print(f"egnn denoising loss {loss.item():.4f}")

    net = EGNN_Network(num_tokens=21, num_positions=n, dim=32, depth=3, num_nearest_neighbors=8,
                       coor_weights_clamp_value=2.0).to(dev)
    tokens = torch.randint(0, 21, (b, n), generator=g).to(dev)
    adj = torch.zeros(n, n, dtype=torch.bool)
    idx = torch.arange(n - 1)
    adj[idx, idx + 1] = True
    adj[idx + 1, idx] = True
    adj_mat = adj.unsqueeze(0).expand(b, -1, -1).to(dev)
    sparse = EGNN_Network(num_tokens=21, dim=32, depth=2, num_adj_degrees=3, adj_dim=8,
                          only_sparse_neighbors=True).to(dev)

    def network():
        def loss_of(i):
            f, c = net(tokens, noisy, mask=mask)
            f2, c2 = sparse(tokens, noisy, adj_mat=adj_mat, mask=mask)
            return ((c - coors) ** 2).sum(-1)[mask].mean() + ((c2 - coors) ** 2).sum(-1)[mask].mean()
        loss = _fit([*net.parameters(), *sparse.parameters()], 2, loss_of)
        print(f"egnn network loss {loss.item():.4f}")
    return {"layers": layer_train, "network": network}


# -- torchfm: the README's models on click-through data (categorical fields), trained with BCE and evaluated with
#    ROC AUC as its examples/main.py does (predictions and targets gathered into lists); NCF on user / item fields --

def torchfm_ctr(dev):
    from sklearn.metrics import roc_auc_score
    from torch.utils.data import DataLoader, TensorDataset
    from torchfm.model.afi import AutomaticFeatureInteractionModel
    from torchfm.model.afm import AttentionalFactorizationMachineModel
    from torchfm.model.afn import AdaptiveFactorizationNetwork
    from torchfm.model.dcn import DeepCrossNetworkModel
    from torchfm.model.dfm import DeepFactorizationMachineModel
    from torchfm.model.ffm import FieldAwareFactorizationMachineModel
    from torchfm.model.fm import FactorizationMachineModel
    from torchfm.model.fnfm import FieldAwareNeuralFactorizationMachineModel
    from torchfm.model.fnn import FactorizationSupportedNeuralNetworkModel
    from torchfm.model.lr import LogisticRegressionModel
    from torchfm.model.ncf import NeuralCollaborativeFiltering
    from torchfm.model.nfm import NeuralFactorizationMachineModel
    from torchfm.model.pnn import ProductNeuralNetworkModel
    from torchfm.model.wd import WideAndDeepModel
    from torchfm.model.xdfm import ExtremeDeepFactorizationMachineModel

    field_dims = [50, 30, 12, 7]
    g = torch.Generator().manual_seed(0)
    fields = torch.stack([torch.randint(0, d, (1024,), generator=g) for d in field_dims], 1)
    target = ((fields[:, 0] % 3 == 0) ^ (fields[:, 2] > 6)).float()
    train_loader = DataLoader(TensorDataset(fields[:768], target[:768]), batch_size=256, shuffle=True)
    test_loader = DataLoader(TensorDataset(fields[768:], target[768:]), batch_size=256)
    fd = field_dims
    builders = [lambda: LogisticRegressionModel(fd), lambda: FactorizationMachineModel(fd, 16),
                lambda: FieldAwareFactorizationMachineModel(fd, 8),
                lambda: FactorizationSupportedNeuralNetworkModel(fd, 16, (32, 16), 0.2),
                lambda: WideAndDeepModel(fd, 16, (32, 16), 0.2),
                lambda: AttentionalFactorizationMachineModel(fd, 16, 16, (0.2, 0.2)),
                lambda: NeuralFactorizationMachineModel(fd, 16, (32,), (0.2, 0.2)),
                lambda: FieldAwareNeuralFactorizationMachineModel(fd, 8, (32,), (0.2, 0.2)),
                lambda: ProductNeuralNetworkModel(fd, 16, (32,), 0.2, method="inner"),
                lambda: ProductNeuralNetworkModel(fd, 16, (32,), 0.2, method="outer"),
                lambda: DeepCrossNetworkModel(fd, 16, 3, (32, 16), 0.2),
                lambda: ExtremeDeepFactorizationMachineModel(fd, 16, (32, 16), 0.2, (16, 16), split_half=False),
                lambda: DeepFactorizationMachineModel(fd, 16, (32, 16), 0.2),
                lambda: AdaptiveFactorizationNetwork(fd, 16, 32, (32, 16), (0.2, 0.2, 0.2)),
                lambda: AutomaticFeatureInteractionModel(fd, 16, 16, 2, 2, (32,), (0.2, 0.2, 0.2)),
                lambda: NeuralCollaborativeFiltering(fd[:2], user_field_idx=[0], item_field_idx=[1], embed_dim=16,
                                                     mlp_dims=(32, 16), dropout=0.2)]
    models = [b().to(dev) for b in builders]

    def run_epoch(model, loader, optimizer, criterion):  # examples/main.py's train()
        model.train()
        total, n = 0.0, 0
        for x, y in loader:
            x, y = x.to(dev), y.to(dev)
            if isinstance(model, NeuralCollaborativeFiltering):
                x = x[:, :2]
            pred = model(x)
            loss = criterion(pred, y.float())
            model.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            n += 1
        return total / n

    def auc(model, loader):  # examples/main.py's test()
        model.eval()
        targets, predicts = [], []
        with torch.no_grad():
            for x, y in loader:
                x, y = x.to(dev), y.to(dev)
                if isinstance(model, NeuralCollaborativeFiltering):
                    x = x[:, :2]
                p = model(x)
                targets.extend(y.tolist())
                predicts.extend(p.tolist())
        return roc_auc_score(targets, predicts)

    def train():
        criterion = nn.BCELoss()
        for model in models:
            optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-6)
            loss = run_epoch(model, train_loader, optimizer, criterion)
            print(f"{type(model).__name__}: loss {loss:.4f} auc {auc(model, test_loader):.3f}")
    return {"train": train}


# -- pytorch_tcn: the README's TCN (causal, weight norm, NLC input) trained as a forecaster; variants with skip
#    connections, batch / layer norm, gated activations, a global embedding (conditioning), an output projection
#    and activation; streaming inference block by block (`reset_buffers`, `inference=True`); the causal
#    TemporalConv1d / TemporalConvTranspose1d layers -----------------------------------------------------------------

def pytorch_tcn_forecast(dev):
    from pytorch_tcn import TCN, TemporalConv1d, TemporalConvTranspose1d

    g = torch.Generator().manual_seed(0)
    t = torch.arange(256).float()
    series = torch.stack([torch.sin(t / 8), torch.cos(t / 13), torch.sin(t / 5) * torch.cos(t / 21)], -1)
    x = (series.unsqueeze(0) + 0.05 * torch.randn(16, 256, 3, generator=g)).to(dev)  # (N, L, C)
    y = x[:, 1:, :1]
    x = x[:, :-1]
    cond = torch.randn(16, 8, generator=g).to(dev)

    plain = TCN(3, [16, 16, 16], kernel_size=3, dropout=0.1, causal=True, input_shape="NLC",
                output_projection=1).to(dev)
    skip = TCN(3, [16, 32, 32, 16], kernel_size=4, dilation_reset=4, use_norm="batch_norm",
               use_skip_connections=True, input_shape="NLC", output_projection=1).to(dev)
    gated = TCN(3, [16, 16], kernel_size=3, use_norm="layer_norm", use_gate=True, activation="gelu",
                embedding_shapes=[(8,)], input_shape="NLC", output_projection=1, output_activation="tanh").to(dev)

    def train():
        for name, model, kw in (("plain", plain, {}), ("skip", skip, {}), ("gated", gated, {"embeddings": [cond]})):
            loss = _fit(model.parameters(), 3, lambda i, m=model, kw=kw: F.mse_loss(m(x, **kw), y))
            print(f"tcn {name} mse {loss.item():.4f}")

    def streaming():  # the README's blockwise processing of one sequence (batch 1), equal to the whole pass
        plain.eval()
        with torch.no_grad():
            seq = x[:1]
            full = plain(seq)
            plain.reset_buffers()
            outs = [plain(seq[:, i:i + 16], inference=True) for i in range(0, seq.shape[1] - 15, 16)]
            stream = torch.cat(outs, 1)
            err = (stream - full[:, :stream.shape[1]]).abs().max()
        plain.train()
        print(f"streaming error {err.item():.2e}")

    conv = TemporalConv1d(3, 8, kernel_size=5, dilation=2, causal=True).to(dev)
    conv_t = TemporalConvTranspose1d(8, 3, kernel_size=4, stride=2).to(dev)

    def layers():
        xc = x.transpose(1, 2)
        loss = _fit([*conv.parameters(), *conv_t.parameters()], 2,
                    lambda i: conv_t(conv(xc)).pow(2).mean())
        print(f"temporal conv loss {loss.item():.4f}")
    return {"train": train, "streaming": streaming, "layers": layers}


# -- torch_ac: the README's components: A2CAlgo and PPOAlgo over a list of gymnasium environments (CartPole),
#    a feed-forward ACModel and a recurrent one (memory, recurrence), `collect_experiences` then
#    `update_parameters`, as rl-starter-files' train loop; the default observation preprocessing ---------------------

def torch_ac_actor_critic(dev):
    import gymnasium as gym
    import torch_ac
    from torch.distributions.categorical import Categorical

    class ACModel(nn.Module, torch_ac.ACModel):
        def __init__(self, obs_dim, n_actions):
            super().__init__()
            self.actor = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, n_actions))
            self.critic = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 1))

        def forward(self, obs):
            return Categorical(logits=self.actor(obs)), self.critic(obs).squeeze(1)

    class RecurrentACModel(nn.Module, torch_ac.RecurrentACModel):
        def __init__(self, obs_dim, n_actions):
            super().__init__()
            self.embed = nn.Linear(obs_dim, 32)
            self.cell = nn.LSTMCell(32, 32)
            self.actor = nn.Linear(32, n_actions)
            self.critic = nn.Linear(32, 1)

        @property
        def memory_size(self):
            return 64

        def forward(self, obs, memory):
            h, c = memory[:, :32], memory[:, 32:]
            h, c = self.cell(torch.tanh(self.embed(obs)), (h, c))
            return Categorical(logits=self.actor(h)), self.critic(h).squeeze(1), torch.cat([h, c], 1)

    def preprocess(obss, device=None):  # the README's hook: observations to one tensor on the device
        import numpy as np
        return torch.tensor(np.array(obss), dtype=torch.float, device=device)

    def envs(n, seed):
        out = []
        for i in range(n):
            e = gym.make("CartPole-v1")
            e.reset(seed=seed + i)
            out.append(e)
        return out

    model = ACModel(4, 2).to(dev)
    rec = RecurrentACModel(4, 2).to(dev)
    algos = {
        "a2c": torch_ac.A2CAlgo(envs(4, 0), model, dev, num_frames_per_proc=16, lr=7e-4, recurrence=1,
                                preprocess_obss=preprocess),
        "ppo": torch_ac.PPOAlgo(envs(4, 10), model, dev, num_frames_per_proc=32, lr=1e-3, recurrence=1,
                                epochs=2, batch_size=64, preprocess_obss=preprocess),
        "ppo_rec": torch_ac.PPOAlgo(envs(4, 20), rec, dev, num_frames_per_proc=32, lr=1e-3, recurrence=4,
                                    epochs=2, batch_size=64, preprocess_obss=preprocess),
    }

    def step(name):
        def run():
            algo = algos[name]
            for _ in range(2):
                exps, logs1 = algo.collect_experiences()
                logs2 = algo.update_parameters(exps)
            logs = {**logs1, **logs2}
            print(f"{name}: frames {logs['num_frames']} return {sum(logs['return_per_episode'] or [0]):.1f} "
                  f"entropy {logs['entropy']:.3f} value loss {logs['value_loss']:.3f} grad {logs['grad_norm']:.3f}")
        return run
    return {name: step(name) for name in algos}


# -- neurodiffeq: the docs' solvers: Solver1D on an initial-value problem (exponential decay, with a metric and
#    its solution evaluated), a system (harmonic oscillator with two networks), a boundary-value problem;
#    Solver2D on Laplace's equation with Dirichlet conditions, the heat equation as an IBVP1D; residuals ----------

def neurodiffeq_pinn(dev):
    from neurodiffeq import diff
    from neurodiffeq.conditions import IBVP1D, IVP, DirichletBVP, DirichletBVP2D
    from neurodiffeq.generators import Generator1D, Generator2D
    from neurodiffeq.networks import FCNN
    from neurodiffeq.solvers import Solver1D, Solver2D
    from neurodiffeq.utils import set_tensor_type

    def on_device(fn):  # the docs' device switch (it sets torch's default tensor type), undone afterwards
        def run():
            set_tensor_type(device=str(dev))
            try:
                fn()
            finally:
                set_tensor_type(device="cpu")
        return run

    def ode():
        solver = Solver1D(lambda u, t: [diff(u, t) + u], [IVP(t_0=0.0, u_0=1.0)], t_min=0.0, t_max=2.0,
                          train_generator=Generator1D(64, 0.0, 2.0, method="equally-spaced-noisy"),
                          valid_generator=Generator1D(64, 0.0, 2.0, method="equally-spaced"),
                          nets=[FCNN(hidden_units=(32, 32))],
                          metrics={"err": lambda u, t: (u - torch.exp(-t)).abs().mean()})
        solver.fit(max_epochs=15, tqdm_file=None)
        sol = solver.get_solution()
        ts = torch.linspace(0, 2, 50)
        u = sol(ts, to_numpy=True)
        res = solver.get_residuals(ts.reshape(-1, 1), to_numpy=True)
        print(f"ode u(2)={u[-1]:.3f} residual {abs(res).mean():.3f} "
              f"val loss {solver.metrics_history['valid_loss'][-1]:.4f}")

    def system():
        oscillator = lambda x, y, t: [diff(x, t) - y, diff(y, t) + x]  # noqa: E731
        solver = Solver1D(oscillator, [IVP(0.0, 1.0), IVP(0.0, 0.0)], t_min=0.0, t_max=3.0,
                          nets=[FCNN(hidden_units=(32,)), FCNN(hidden_units=(32,))],
                          train_generator=Generator1D(64, 0.0, 3.0))
        solver.fit(max_epochs=10, tqdm_file=None)
        x, y = solver.get_solution()(torch.linspace(0, 3, 20), to_numpy=True)
        bvp = Solver1D(lambda u, t: [diff(u, t, order=2) + u], [DirichletBVP(0.0, 0.0, 1.5, 1.0)],
                       t_min=0.0, t_max=1.5, train_generator=Generator1D(64, 0.0, 1.5))
        bvp.fit(max_epochs=10, tqdm_file=None)
        print(f"oscillator x(3)={x[-1]:.3f} y(3)={y[-1]:.3f}")

    def pde():
        laplace = Solver2D(lambda u, x, y: [diff(u, x, order=2) + diff(u, y, order=2)],
                           [DirichletBVP2D(x_min=0, x_min_val=lambda y: torch.sin(torch.pi * y), x_max=1,
                                           x_max_val=lambda y: 0 * y, y_min=0, y_min_val=lambda x: 0 * x,
                                           y_max=1, y_max_val=lambda x: 0 * x)],
                           xy_min=(0, 0), xy_max=(1, 1), train_generator=Generator2D((16, 16)),
                           valid_generator=Generator2D((16, 16), method="equally-spaced"),
                           nets=[FCNN(n_input_units=2, hidden_units=(32, 32))])
        laplace.fit(max_epochs=8, tqdm_file=None)
        heat = Solver2D(lambda u, x, t: [diff(u, t) - 0.1 * diff(u, x, order=2)],
                        [IBVP1D(x_min=0, x_max=1, t_min=0, t_min_val=lambda x: torch.sin(torch.pi * x),
                                x_min_val=lambda t: 0 * t, x_max_val=lambda t: 0 * t)],
                        xy_min=(0, 0), xy_max=(1, 1), train_generator=Generator2D((16, 16)),
                        nets=[FCNN(n_input_units=2, hidden_units=(32, 32))])
        heat.fit(max_epochs=8, tqdm_file=None)
        xs, ys = torch.meshgrid(torch.linspace(0, 1, 10), torch.linspace(0, 1, 10), indexing="ij")
        u = laplace.get_solution()(xs.flatten(), ys.flatten(), to_numpy=True)
        print(f"laplace mean {u.mean():.3f}, heat train loss {heat.metrics_history['train_loss'][-1]:.4f}")
    return {"ode": on_device(ode), "system": on_device(system), "pde": on_device(pde)}


# -- baal: the docs' active-learning recipe: MC dropout (`patch_module`, MCDropoutConnectModule), a ModelWrapper
#    with TrainingArgs, an ActiveLearningDataset labelled at random, train / test on it, Monte-Carlo predictions
#    on the pool, the ActiveLearningLoop's step with BALD, and the heuristics (Entropy, Margin, Variance,
#    Certainty, BatchBALD) on those predictions -----------------------------------------------------------------------

def baal_active(dev):
    from baal.active import ActiveLearningDataset, ActiveLearningLoop
    from baal.active.heuristics import BALD, BatchBALD, Certainty, Entropy, Margin, Variance
    from baal.bayesian import MCDropoutConnectModule
    from baal.bayesian.dropout import patch_module
    from baal.modelwrapper import ModelWrapper, TrainingArgs
    from torch.utils.data import TensorDataset

    g = torch.Generator().manual_seed(0)
    centres = torch.randn(4, 20, generator=g) * 3
    y = torch.randint(0, 4, (600,), generator=g)
    x = centres[y] + torch.randn(600, 20, generator=g)
    train_set, test_set = TensorDataset(x[:500], y[:500]), TensorDataset(x[500:], y[500:])
    cuda = dev.type == "cuda"

    def wrapper(model):
        model = model.to(dev)
        args = TrainingArgs(optimizer=torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9), batch_size=32,
                            epoch=1, use_cuda=cuda, workers=0, criterion=nn.CrossEntropyLoss())
        return ModelWrapper(model, args)

    mlp = patch_module(nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.5), nn.Linear(64, 4)))
    dropconnect = MCDropoutConnectModule(nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4)),
                                         layers=["Linear"], weight_dropout=0.3)

    def loop():
        al = ActiveLearningDataset(train_set)
        al.label_randomly(40)
        w = wrapper(mlp)
        active_loop = ActiveLearningLoop(al, w.predict_on_dataset, heuristic=BALD(), query_size=20,
                                         iterations=8, verbose=False)
        for _ in range(2):
            w.train_on_dataset(al)
            w.test_on_dataset(test_set)
            active_loop.step()
        print(f"labelled {al.n_labelled}, pool {al.n_unlabelled}, metrics {sorted(w.get_metrics())[:4]}")

    def heuristics():
        w = wrapper(dropconnect)
        al = ActiveLearningDataset(train_set)
        al.label_randomly(60)
        w.train_on_dataset(al)
        probs = w.predict_on_dataset(al.pool, iterations=6, verbose=False)
        probs = torch.softmax(torch.from_numpy(probs), 1).numpy()
        ranks = [h(probs)[:5] for h in (BALD(), Entropy(), Margin(), Variance(), Certainty())]
        batch = BatchBALD(num_samples=5, num_draw=100)(probs[:60])
        with torch.no_grad():
            w.predict_on_batch(x[:16].to(dev), iterations=4)
        print(f"top BALD {list(ranks[0])}, batchbald {list(batch[:5])}")
    return {"loop": loop, "heuristics": heuristics}


# -- brevitas: the README's quantised LeNet (QuantIdentity input, 4-bit QuantConv2d / QuantLinear weights,
#    QuantReLU activations, quant tensors passed between layers) trained with QAT; a recurrent and an embedding
#    layer (QuantLSTM, QuantEmbedding); the docs' post-training flow on a float CNN: preprocess_for_quantize,
#    quantize, calibration_mode over a calibration loader, bias_correction_mode, then evaluation ------------------

def brevitas_quant(dev):
    import brevitas.nn as qnn
    from brevitas.graph.calibrate import bias_correction_mode, calibration_mode
    from brevitas.graph.quantize import preprocess_for_quantize, quantize
    from brevitas.quant import Int8Bias

    class QuantLeNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.quant_inp = qnn.QuantIdentity(bit_width=8, return_quant_tensor=True)
            self.conv1 = qnn.QuantConv2d(3, 6, 5, bias=True, weight_bit_width=4, bias_quant=Int8Bias)
            self.relu1 = qnn.QuantReLU(bit_width=4, return_quant_tensor=True)
            self.conv2 = qnn.QuantConv2d(6, 16, 5, bias=True, weight_bit_width=4, bias_quant=Int8Bias)
            self.relu2 = qnn.QuantReLU(bit_width=4, return_quant_tensor=True)
            self.fc1 = qnn.QuantLinear(16 * 5 * 5, 120, bias=True, weight_bit_width=4, bias_quant=Int8Bias)
            self.relu3 = qnn.QuantReLU(bit_width=4, return_quant_tensor=True)
            self.fc2 = qnn.QuantLinear(120, 10, bias=True, weight_bit_width=4, bias_quant=Int8Bias)

        def forward(self, x):
            out = self.quant_inp(x)
            out = F.max_pool2d(self.relu1(self.conv1(out)), 2)
            out = F.max_pool2d(self.relu2(self.conv2(out)), 2)
            out = out.reshape(out.shape[0], -1)
            out = self.relu3(self.fc1(out))
            return self.fc2(out)

    g = torch.Generator().manual_seed(0)
    imgs = torch.randn(64, 3, 32, 32, generator=g).to(dev)
    labels = torch.randint(0, 10, (64,), generator=g).to(dev)
    lenet = QuantLeNet().to(dev)

    def qat():
        loss = _fit(lenet.parameters(), 3, lambda i: F.cross_entropy(lenet(imgs[i * 16:(i + 1) * 16]),
                                                                     labels[i * 16:(i + 1) * 16]))
        lenet.eval()
        with torch.no_grad():
            acc = (lenet(imgs).argmax(1) == labels).float().mean()
        lenet.train()
        print(f"QAT loss {loss.item():.3f} accuracy {acc.item():.2f}")

    lstm = qnn.QuantLSTM(input_size=8, hidden_size=16, batch_first=True).to(dev)
    emb = qnn.QuantEmbedding(50, 8).to(dev)
    head = qnn.QuantLinear(16, 2, bias=True, weight_bit_width=8).to(dev)
    toks = torch.randint(0, 50, (8, 12), generator=g).to(dev)
    tgt = torch.randint(0, 2, (8,), generator=g).to(dev)

    def recurrent():
        def loss_of(i):
            out = lstm(emb(toks))
            out = out[0] if isinstance(out, tuple) else out
            return F.cross_entropy(head(out[:, -1]), tgt)
        loss = _fit([*lstm.parameters(), *emb.parameters(), *head.parameters()], 2, loss_of)
        print(f"quant lstm loss {loss.item():.3f}")

    def ptq():
        float_model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                                    nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                                    nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10)).to(dev).eval()
        model = preprocess_for_quantize(float_model)
        model = quantize(model).to(dev)
        model.eval()
        with torch.no_grad():
            with calibration_mode(model):
                for i in range(0, 64, 16):
                    model(imgs[i:i + 16])
            with bias_correction_mode(model):
                for i in range(0, 64, 16):
                    model(imgs[i:i + 16])
            out = model(imgs)
            ref = float_model(imgs)
        out = out.value if hasattr(out, "value") else out
        print(f"PTQ max error {(out - ref).abs().max().item():.3f}")
    return {"qat": qat, "recurrent": recurrent, "ptq": ptq}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _forget(root: Path) -> None:
    """The repository's modules (packages without an __init__ included) and its folder off sys.path: the next
    script's `utils`, `pointnet` must not resolve to them."""
    for m, mod in list(sys.modules.items()):
        paths = getattr(mod, "__path__", None)  # a list, or a namespace package's _NamespacePath
        where = [getattr(mod, "__file__", None) or "",
                 *(paths if isinstance(paths, list) or type(paths).__name__ == "_NamespacePath" else ())]
        if any(str(w).startswith(str(root)) for w in where):
            del sys.modules[m]
    sys.path[:] = [p for p in sys.path if p != str(root)]


# ShapeNet part-segmentation categories (name, synset) and their part counts in the repository's
# misc/num_seg_classes.txt
_SHAPENET = [("Airplane", "02691156", 4), ("Bag", "02773838", 2), ("Cap", "02954340", 2), ("Car", "02958343", 4),
             ("Chair", "03001627", 4)]


def _shapenet(root: Path, per_class: dict, n_points: int = 600, seed: int = 0) -> None:
    """shapenetcore_partanno_segmentation_benchmark_v0's layout: synsetoffset2category.txt, <synset>/points/*.pts
    (x y z per line), <synset>/points_label/*.seg (part label from 1 per line) and
    train_test_split/shuffled_{train,test}_file_list.json; each shape a noisy blob of its class's parts."""
    import numpy as np
    rng = np.random.default_rng(seed)
    (root / "train_test_split").mkdir(parents=True, exist_ok=True)
    (root / "synsetoffset2category.txt").write_text("".join(f"{n}\t{s}\n" for n, s, _ in _SHAPENET))
    lists = {"train": [], "test": []}
    for c, (name, synset, parts) in enumerate(_SHAPENET):
        (root / synset / "points").mkdir(parents=True, exist_ok=True)
        (root / synset / "points_label").mkdir(parents=True, exist_ok=True)
        centres = rng.normal(0, 1, (parts, 3)) * (1 + c * 0.3)
        for split, n in per_class.items():
            for k in range(n.get(name, 0) if isinstance(n, dict) else n):
                uid = f"{split}{c}{k:04d}"
                lab = rng.integers(0, parts, n_points)
                pts = centres[lab] + 0.2 * rng.normal(size=(n_points, 3))
                np.savetxt(root / synset / "points" / f"{uid}.pts", pts, fmt="%.5f")
                np.savetxt(root / synset / "points_label" / f"{uid}.seg", lab + 1, fmt="%d")
                lists[split].append(f"shape_data/{synset}/{uid}")
    for split, files in lists.items():
        (root / "train_test_split" / f"shuffled_{split}_file_list.json").write_text(json.dumps(files))


def _pointnet(dev, name: str, script: str, extra: list, per_class: dict, start: int, stop: int):
    """pointnet.pytorch's utils/<script> as is on synthetic point clouds in ShapeNet's part-segmentation layout.
    The repository's root goes on sys.path (its README installs the `pointnet` package). GPU only: the scripts
    put the model and batches on cuda unconditionally."""
    root = _need_repo("pointnet")
    tmp = Path(hc._tmp())
    data = tmp / "shapenet"
    _shapenet(data, per_class)
    argv = ["--dataset", str(data), "--batchSize", "32", "--workers", "2", "--outf", str(tmp / "out"), *extra]

    def window():
        if dev.type != "cuda":
            raise RuntimeError("pointnet's scripts run on cuda only")
        fc._on_path(root)
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, start, stop, stop_script=True):
                hc.run_script(root / "utils" / script, argv, str(tmp))
        finally:
            _forget(root)
    return {"train_window": window}


def pointnet_cls(dev):
    """utils/train_classification.py (`--dataset_type shapenet --feature_transform --nepoch 3 --num_points 1024`:
    PointNetCls with the input and feature transforms and their regulariser, Adam, StepLR, NLL loss, two loader
    workers) on five categories, 130 training and 40 test shapes (five steps an epoch, a test batch at each
    epoch's first step, a checkpoint after each epoch): the window spans the 2nd to the 11th `backward`: the rest of
    the first epoch, its checkpoint, the second epoch with its test batch and checkpoint."""
    return _pointnet(dev, "pointnet.cls", "train_classification.py",
                     ["--dataset_type", "shapenet", "--feature_transform", "--nepoch", "3", "--num_points", "1024"],
                     {"train": 26, "test": 8}, 2, 11)


def pointnet_seg(dev):
    """utils/train_segmentation.py (`--class_choice Chair --feature_transform --nepoch 3`: PointNetDenseCls over
    2500 resampled points a shape, four parts, per-point NLL) on 64 training and 32 test chairs (two steps an
    epoch, a test batch at each epoch's first step): the window spans the 2nd to the 5th `backward`: the rest of the
    first epoch, its checkpoint, the second epoch with its test batch and checkpoint."""
    return _pointnet(dev, "pointnet.seg", "train_segmentation.py",
                     ["--class_choice", "Chair", "--feature_transform", "--nepoch", "3"],
                     {"train": {"Chair": 64}, "test": {"Chair": 32}}, 2, 5)


def _old_gym():
    """A `gym` module with the interface main.py calls (gym < 0.26: `env.seed`, `reset()` returning the
    observation, `step()` returning four values, `_max_episode_steps`) over gymnasium's environments."""
    import gymnasium

    class Env:
        def __init__(self, name):
            self.env = gymnasium.make(name)
            self.observation_space, self.action_space = self.env.observation_space, self.env.action_space
            self._max_episode_steps = self.env.spec.max_episode_steps
            self._seed = None

        def seed(self, seed):
            self._seed = seed

        def reset(self):
            obs, _ = self.env.reset(seed=self._seed)
            self._seed = None
            return obs

        def step(self, action):
            obs, reward, terminated, truncated, info = self.env.step(action)
            return obs, reward, terminated or truncated, info

    mod = types.ModuleType("gym")
    mod.make = Env
    return mod


def _td3(dev, name: str, policy: str):
    """sfujim/TD3's main.py as is (`--env Pendulum-v1 --start_timesteps 256 --eval_freq 280`; batch 256, its
    replay buffer on the host, actions through `select_action`), gymnasium's Pendulum behind the old gym interface
    the script calls. Ten evaluation episodes run first; after 256 random steps training starts at every step; the
    window spans the 2nd to the 80th `backward`: steps with exploration noise, the replay buffer's samples, target
    updates and the evaluation at step 280 (ten episodes of `select_action`) and its results file."""
    root = _need_repo("td3")
    tmp = Path(hc._tmp())
    argv = ["--policy", policy, "--env", "Pendulum-v1", "--seed", "0", "--start_timesteps", "256",
            "--eval_freq", "280", "--max_timesteps", "2000", "--batch_size", "256"]

    def window():
        saved = sys.modules.get("gym")
        sys.modules["gym"] = _old_gym()
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 80, stop_script=True):
                hc.run_script(root / "main.py", argv, str(tmp))
        finally:
            if saved is None:
                sys.modules.pop("gym", None)
            else:
                sys.modules["gym"] = saved
            _forget(root)
    return {"train_window": window}


def td3_td3(dev):
    """TD3 (twin critics, delayed actor updates every second step, target policy smoothing)."""
    return _td3(dev, "td3.td3", "TD3")


def td3_ddpg(dev):
    """DDPG as the repository re-implements it (DDPG.py: the paper's network sizes and learning rates)."""
    return _td3(dev, "td3.ddpg", "DDPG")


MODELS = [
    # name, package, builder
    ("asteroid_filterbanks.separation", "asteroid_filterbanks", asteroid_filterbanks_separation),
    ("egnn_pytorch.equivariant", "egnn_pytorch", egnn_equivariant),
    ("torchfm.ctr", "torchfm", torchfm_ctr),
    ("pytorch_tcn.forecast", "pytorch_tcn", pytorch_tcn_forecast),
    ("torch_ac.actor_critic", "torch_ac", torch_ac_actor_critic),
    ("neurodiffeq.pinn", "neurodiffeq", neurodiffeq_pinn),
    ("baal.active", "baal", baal_active),
    ("brevitas.quant", "brevitas", brevitas_quant),
    ("pointnet.cls", "pointnet", pointnet_cls),
    ("pointnet.seg", "pointnet", pointnet_seg),
    ("td3.td3", "td3", td3_td3),
    ("td3.ddpg", "td3", td3_ddpg),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh13", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
