"""Record the syncs of a sixth held-out set, `fresh5`: libraries and training code nobody here has looked at.

`heldout`, `fresh`, `fresh2`, `fresh3` and `fresh4` (benchmarks/heldout_collect.py, fresh_collect.py,
fresh2_collect.py, fresh3_collect.py, fresh4_collect.py) have all been scored, and fresh4 is being made a
development set. `fresh5` is recorded the same way (same recorder, same windows inside a script's own loop;
this file only adds workloads and imports the machinery) in libraries outside the tuned set and the five
held-out sets and in two public training repositories that no set and no hand label uses. The workloads
were written from the libraries' documented public API (README / docs examples), on synthetic data with
random weights, before anyone ran the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh5): torcheval (metrics), torchsurv
  (survival losses and metrics; + pydantic and its needs), skrl (reinforcement learning; + gymnasium,
  farama-notifications), torch-audiomentations (+ julius, torch-pitch-shift, primePy), auraloss (audio
  losses), torchkbnufft (non-uniform FFTs, MRI), entmax (sparse attention and losses), prodigyopt (a
  learning-rate-free optimiser), deepxde (physics-informed networks; + scikit-optimize, pyaml). Their other
  needs (numpy, scipy, scikit-learn, matplotlib, torchmetrics, torchaudio, tensorboard, tqdm, pandas) are on
  the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh5/repos/<name>:
  Diego999/pyGAT (train.py as is, on synthetic Cora-shaped files: the dense GAT and, `--sparse`, SpGAT) and
  karpathy/pytorch-made (run.py as is, on a synthetic binarized_mnist.npz: one mask, and four masks
  resampled every step with two samples at test time). run.py moves everything with `.cuda()`: GPU only.

    python benchmarks/fresh5_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh5_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh5 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh5 [--linter REV]`.
"""

from __future__ import annotations

import builtins
import os
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
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh5" / "repos", ac.REPO / ".whl" / "fresh5"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh5/repos/<name>)
REPOS = {
    "pyGAT": ("Diego999/pyGAT", "3664f2dc90cbf971564c0bf186dc794f12446d0c",
              ["train.py", "models.py", "layers.py", "utils.py"]),
    "pytorch-made": ("karpathy/pytorch-made", "81886ccc8270cdf3a2b32cbbca5c7feab422f907", ["made.py", "run.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["torcheval==0.0.7", "torchsurv==0.2.0", "pydantic==2.14.4", "pydantic-core==2.50.5",
          "annotated-types==0.8.0", "typing-inspection==0.4.5", "skrl==2.1.1", "gymnasium==1.4.0",
          "farama-notifications==0.0.6", "torch-audiomentations==0.12.0", "julius==0.2.8", "torch-pitch-shift==1.2.5",
          "primePy==1.3", "auraloss==0.4.0", "torchkbnufft==1.5.2", "entmax==1.3", "prodigyopt==1.1.2",
          "deepxde==1.15.0", "scikit-optimize==0.10.2", "pyaml==26.7.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"torcheval": "torcheval", "torchsurv": "torchsurv", "skrl": "skrl", "gymnasium": "gymnasium",
         "torch_audiomentations": "torch-audiomentations", "julius": "julius", "torch_pitch_shift": "torch-pitch-shift",
         "auraloss": "auraloss", "torchkbnufft": "torchkbnufft", "entmax": "entmax", "prodigyopt": "prodigyopt",
         "deepxde": "deepxde", "pydantic": "pydantic", "torchmetrics": "torchmetrics", "torchaudio": "torchaudio",
         "scikit_learn": "scikit-learn", "scipy": "scipy", "numpy": "numpy"}


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _mlp(inp: int = 20, out: int = 5, hidden: int = 64) -> nn.Module:
    return nn.Sequential(nn.Linear(inp, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, out))


# ============================================================================================
# Libraries
# ============================================================================================

# -- torcheval: class metrics updated every step and computed every epoch, functional metrics (README) --

def torcheval_metrics(dev):
    import torcheval.metrics as M
    import torcheval.metrics.functional as MF
    from torcheval.metrics.toolkit import clone_metrics, reset_metrics, sync_and_compute

    classes = 5
    X, y = torch.randn(512, 20, device=dev), torch.randint(0, classes, (512,), device=dev)
    target = X[:, :1] * 2 - X[:, 1:2]
    net, head, reg = _mlp(out=classes).to(dev), nn.Linear(20, 1).to(dev), nn.Linear(20, 1).to(dev)
    opt = torch.optim.Adam([*net.parameters(), *head.parameters(), *reg.parameters()], lr=1e-3)
    multiclass = {"acc": M.MulticlassAccuracy(device=dev),
                  "f1": M.MulticlassF1Score(num_classes=classes, average="macro", device=dev),
                  "precision": M.MulticlassPrecision(num_classes=classes, average="macro", device=dev),
                  "recall": M.MulticlassRecall(num_classes=classes, average="weighted", device=dev),
                  "auroc": M.MulticlassAUROC(num_classes=classes, device=dev),
                  "auprc": M.MulticlassAUPRC(num_classes=classes, device=dev),
                  "confusion": M.MulticlassConfusionMatrix(num_classes=classes, device=dev)}
    binary = {"acc": M.BinaryAccuracy(device=dev), "auroc": M.BinaryAUROC(device=dev),
              "auprc": M.BinaryAUPRC(device=dev), "f1": M.BinaryF1Score(device=dev),
              "ne": M.BinaryNormalizedEntropy(device=dev), "pr": M.BinaryPrecisionRecallCurve(device=dev),
              "binned": M.BinaryBinnedAUROC(threshold=10, device=dev)}
    regression = {"mse": M.MeanSquaredError(device=dev), "r2": M.R2Score(device=dev)}
    loss_mean, throughput = M.Mean(device=dev), M.Throughput(device=dev)

    def train():  # two epochs: metrics updated every step, computed and reset every epoch
        import time
        for _ in range(2):
            for i in range(0, 512, 64):
                t0 = time.perf_counter()
                xb, yb, tb = X[i:i + 64], y[i:i + 64], target[i:i + 64]
                logits, bin_logit, pred = net(xb), head(xb).squeeze(-1), reg(xb)
                loss = (F.cross_entropy(logits, yb) + F.binary_cross_entropy_with_logits(bin_logit, (yb == 0).float())
                        + F.mse_loss(pred, tb))
                opt.zero_grad()
                loss.backward()
                opt.step()
                with torch.no_grad():
                    for m in multiclass.values():
                        m.update(logits, yb)
                    for m in binary.values():
                        m.update(torch.sigmoid(bin_logit), (yb == 0).float())
                    for m in regression.values():
                        m.update(pred, tb)
                    loss_mean.update(loss.detach())
                throughput.update(len(xb), time.perf_counter() - t0)
            results = {k: sync_and_compute(m) for k, m in multiclass.items()}
            results.update({"bin_" + k: m.compute() for k, m in binary.items()})
            results.update({k: m.compute() for k, m in regression.items()})
            results["loss"], results["throughput"] = loss_mean.compute(), throughput.compute()
            reset_metrics([*multiclass.values(), *binary.values(), *regression.values(), loss_mean])
        clone_metrics(list(regression.values()))

    vocab = 50
    tokens = torch.randint(0, vocab, (8, 32), device=dev)
    lm = nn.Sequential(nn.Embedding(vocab, 32), nn.Linear(32, vocab)).to(dev)
    images = torch.rand(8, 3, 32, 32, device=dev)
    scores, labels = torch.rand(16, 10, device=dev), torch.randint(0, 10, (16,), device=dev)

    def evaluate():  # language-model perplexity, ranking and image metrics; the functional forms on a batch
        with torch.no_grad():
            ppl = M.Perplexity(device=dev)
            for _ in range(3):
                ppl.update(lm(tokens[:, :-1]), tokens[:, 1:])
            ppl.compute()
            for m in (M.HitRate(k=3, device=dev), M.ReciprocalRank(device=dev)):
                m.update(scores, labels)
                m.compute()
            psnr = M.PeakSignalNoiseRatio(device=dev)
            psnr.update((images + 0.05 * torch.randn_like(images)).clamp(0, 1), images)
            psnr.compute()
            ml = M.MultilabelAccuracy(criteria="hamming", device=dev)
            ml.update(torch.rand(16, 4, device=dev), torch.randint(0, 2, (16, 4), device=dev))
            ml.compute()
            logits = net(X[:64])
            MF.multiclass_accuracy(logits, y[:64], average="macro", num_classes=classes)
            MF.multiclass_f1_score(logits, y[:64], num_classes=classes, average="micro")
            MF.multiclass_auroc(logits, y[:64], num_classes=classes)
            MF.binary_auroc(torch.sigmoid(logits[:, 0]), (y[:64] == 0).float())
            MF.binary_accuracy(torch.sigmoid(logits[:, 0]), (y[:64] == 0).float(), threshold=0.5)
            MF.mean_squared_error(reg(X[:64]), target[:64])
            MF.r2_score(reg(X[:64]), target[:64])
            MF.perplexity(lm(tokens[:, :-1]), tokens[:, 1:])
    return {"train": train, "evaluate": evaluate}


# -- torchsurv: Cox and Weibull models trained with its losses, then its metrics (README) -----------

def torchsurv_survival(dev):
    from torchsurv.loss.cox import neg_partial_log_likelihood
    from torchsurv.loss.weibull import log_hazard, neg_log_likelihood_weibull, survival_function_weibull
    from torchsurv.metrics.auc import Auc
    from torchsurv.metrics.brier_score import BrierScore
    from torchsurv.metrics.cindex import ConcordanceIndex
    from torchsurv.stats.kaplan_meier import KaplanMeierEstimator

    n = 256
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 16, generator=g)
    event = torch.randint(0, 2, (n,), generator=g, dtype=torch.bool)
    time = torch.randint(1, 100, (n,), generator=g).float()
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, event, time), batch_size=64, shuffle=True)
    cox = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 1)).to(dev)
    weibull = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 2)).to(dev)
    opt = torch.optim.Adam([*cox.parameters(), *weibull.parameters()], lr=1e-3)
    xd, ed, td = x.to(dev), event.to(dev), time.to(dev)

    def train():  # the README's pseudo training loop, for both models
        for _ in range(2):
            for xb, eb, tb in loader:
                xb, eb, tb = xb.to(dev), eb.to(dev), tb.to(dev)
                loss = neg_partial_log_likelihood(cox(xb), eb, tb) + neg_log_likelihood_weibull(weibull(xb), eb, tb)
                opt.zero_grad()
                loss.backward()
                opt.step()

    def evaluate():  # concordance of both models and the Weibull model's survival curves, on the model's device
        with torch.no_grad():
            ConcordanceIndex()(cox(xd), ed, td)
            log_params = weibull(xd)
            ConcordanceIndex()(log_hazard(log_params, td), ed, td)
            survival_function_weibull(log_params, td)

    def inference():  # the README's AUC at a time and Brier score, the concordance's confidence interval,
        # p-value and comparison of two models, a Kaplan-Meier estimate: on host copies (the first recordings
        # found that the AUC builds a host tensor inside, and a statistic goes through numpy, on cuda inputs)
        with torch.no_grad():
            log_hz, log_params = cox(xd).cpu(), weibull(xd).cpu()
            Auc()(log_hz, event, time, new_time=50)
            Auc()(log_hazard(log_params, torch.tensor(50.0)), event, time, new_time=torch.tensor(50.0))
            brier = BrierScore()
            brier(survival_function_weibull(log_params, time), event, time)
            brier.integral()
            cindex = ConcordanceIndex()
            cindex(log_hz, event, time)
            cindex.confidence_interval()
            cindex.p_value(method="noether", alternative="two_sided")
            cindex_w = ConcordanceIndex()
            cindex_w(log_hazard(log_params, time), event, time)
            cindex.compare(cindex_w)
            km = KaplanMeierEstimator()
            km(event, time)
            km.predict(time[:10])
    return {"train": train, "evaluate": evaluate, "inference": inference}


# -- skrl: PPO, SAC (Pendulum) and DQN (CartPole) through its trainer, as its gymnasium examples ----

def skrl_agents(dev):
    import tempfile

    import gymnasium as gym
    from skrl.agents.torch.dqn import DQN, DQN_CFG
    from skrl.agents.torch.ppo import PPO, PPO_CFG
    from skrl.agents.torch.sac import SAC, SAC_CFG
    from skrl.envs.wrappers.torch import wrap_env
    from skrl.memories.torch import RandomMemory
    from skrl.models.torch import DeterministicMixin, GaussianMixin, Model
    from skrl.resources.preprocessors.torch import RunningStandardScaler
    from skrl.resources.schedulers.torch import KLAdaptiveLR
    from skrl.trainers.torch import SequentialTrainer
    from skrl.utils import set_seed

    set_seed(42)
    folder = tempfile.mkdtemp(prefix="fresh5-skrl-")

    class Policy(GaussianMixin, Model):
        def __init__(self, observation_space, state_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, state_space=state_space,
                           action_space=action_space, device=device)
            GaussianMixin.__init__(self, clip_actions=False, clip_log_std=True, min_log_std=-20, max_log_std=2,
                                   reduction="sum")
            self.net = nn.Sequential(nn.Linear(self.num_observations, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                     nn.Linear(64, self.num_actions), nn.Tanh())
            self.log_std_parameter = nn.Parameter(torch.zeros(self.num_actions))

        def compute(self, inputs, role):
            return 2.0 * self.net(inputs["observations"]), {"log_std": self.log_std_parameter}

    class Value(DeterministicMixin, Model):
        def __init__(self, observation_space, state_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, state_space=state_space,
                           action_space=action_space, device=device)
            DeterministicMixin.__init__(self)
            self.net = nn.Sequential(nn.Linear(self.num_observations, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                                     nn.Linear(64, 1))

        def compute(self, inputs, role):
            return self.net(inputs["observations"]), {}

    class Critic(DeterministicMixin, Model):  # Q(s, a)
        def __init__(self, observation_space, state_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, state_space=state_space,
                           action_space=action_space, device=device)
            DeterministicMixin.__init__(self)
            self.net = nn.Sequential(nn.Linear(self.num_observations + self.num_actions, 64), nn.ReLU(),
                                     nn.Linear(64, 1))

        def compute(self, inputs, role):
            return self.net(torch.cat([inputs["observations"], inputs["taken_actions"]], dim=1)), {}

    class QNetwork(DeterministicMixin, Model):  # Q(s, .) of discrete actions
        def __init__(self, observation_space, state_space, action_space, device):
            Model.__init__(self, observation_space=observation_space, state_space=state_space,
                           action_space=action_space, device=device)
            DeterministicMixin.__init__(self)
            self.net = nn.Sequential(nn.Linear(self.num_observations, 64), nn.ReLU(), nn.Linear(64, self.num_actions))

        def compute(self, inputs, role):
            return self.net(inputs["observations"]), {}

    def _experiment(cfg, name):
        cfg.experiment.directory = os.path.join(folder, name)
        cfg.experiment.write_interval = 100
        cfg.experiment.checkpoint_interval = 400

    def ppo():  # the Pendulum example, four synchronous environments, shorter rollouts
        env = wrap_env(gym.make_vec("Pendulum-v1", num_envs=4, vectorization_mode="sync"))
        device = env.device
        memory = RandomMemory(memory_size=64, num_envs=env.num_envs, device=device)
        models = {"policy": Policy(env.observation_space, env.state_space, env.action_space, device),
                  "value": Value(env.observation_space, env.state_space, env.action_space, device)}
        cfg = PPO_CFG()
        cfg.rollouts, cfg.learning_epochs, cfg.mini_batches = 64, 4, 4
        cfg.discount_factor, cfg.gae_lambda, cfg.learning_rate = 0.9, 0.95, 1e-3
        cfg.learning_rate_scheduler = KLAdaptiveLR
        cfg.learning_rate_scheduler_kwargs = {"kl_threshold": 0.008}
        cfg.grad_norm_clip, cfg.ratio_clip, cfg.value_clip = 0.5, 0.2, 0.2
        cfg.entropy_loss_scale, cfg.value_loss_scale, cfg.kl_threshold = 0.0, 0.5, 0
        cfg.observation_preprocessor = RunningStandardScaler
        cfg.observation_preprocessor_kwargs = {"size": env.observation_space, "device": device}
        cfg.value_preprocessor = RunningStandardScaler
        cfg.value_preprocessor_kwargs = {"size": 1, "device": device}
        _experiment(cfg, "ppo")
        agent = PPO(models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
                    state_space=env.state_space, action_space=env.action_space, device=device)
        SequentialTrainer(cfg={"timesteps": 400, "headless": True}, env=env, agents=agent).train()
        SequentialTrainer(cfg={"timesteps": 50, "headless": True}, env=env, agents=agent).eval()
        env.close()

    def sac():  # the Pendulum SAC example: a replay memory, two critics and their targets, learned entropy
        env = wrap_env(gym.make("Pendulum-v1"))
        device = env.device
        memory = RandomMemory(memory_size=5000, num_envs=env.num_envs, device=device)
        spaces = (env.observation_space, env.state_space, env.action_space, device)
        models = {"policy": Policy(*spaces), "critic_1": Critic(*spaces), "critic_2": Critic(*spaces),
                  "target_critic_1": Critic(*spaces), "target_critic_2": Critic(*spaces)}
        cfg = SAC_CFG()
        cfg.batch_size, cfg.learning_starts, cfg.discount_factor = 64, 100, 0.98
        cfg.learn_entropy = True
        _experiment(cfg, "sac")
        agent = SAC(models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
                    state_space=env.state_space, action_space=env.action_space, device=device)
        SequentialTrainer(cfg={"timesteps": 300, "headless": True}, env=env, agents=agent).train()
        env.close()

    def dqn():  # the CartPole DQN example: epsilon-greedy exploration on a schedule, a target network
        import math
        env = wrap_env(gym.make("CartPole-v1"))
        device = env.device
        memory = RandomMemory(memory_size=5000, num_envs=env.num_envs, device=device, replacement=False)
        spaces = (env.observation_space, env.state_space, env.action_space, device)
        models = {"q_network": QNetwork(*spaces), "target_q_network": QNetwork(*spaces)}
        cfg = DQN_CFG()
        cfg.learning_starts = 100
        cfg.exploration_scheduler = lambda timestep, timesteps: max(math.exp(-10 * timestep / timesteps), 0.05)
        _experiment(cfg, "dqn")
        agent = DQN(models=models, memory=memory, cfg=cfg, observation_space=env.observation_space,
                    state_space=env.state_space, action_space=env.action_space, device=device)
        SequentialTrainer(cfg={"timesteps": 300, "headless": True}, env=env, agents=agent).train()
        env.close()
    return {"ppo": ppo, "sac": sac, "dqn": dqn}


# -- torch-audiomentations: GPU augmentation chains on batches of audio (README) -------------------

def audiomentations_augment(dev):
    from torch_audiomentations import (
        AddColoredNoise,
        BandPassFilter,
        BandStopFilter,
        Compose,
        Gain,
        HighPassFilter,
        LowPassFilter,
        OneOf,
        PeakNormalization,
        PitchShift,
        PolarityInversion,
        Shift,
        SomeOf,
        TimeInversion,
    )

    sr = 16000
    audio = torch.rand(8, 1, sr, device=dev) - 0.5
    chain = Compose(transforms=[Gain(min_gain_in_db=-15.0, max_gain_in_db=5.0, p=0.5), PolarityInversion(p=0.5),
                                AddColoredNoise(p=0.5), Shift(p=0.5), HighPassFilter(p=0.5), LowPassFilter(p=0.5),
                                PeakNormalization(p=0.5)], output_type="dict")
    some = SomeOf((1, 3), [BandPassFilter(p=1.0), BandStopFilter(p=1.0), TimeInversion(p=1.0)], output_type="dict")
    one = OneOf([Gain(p=1.0, mode="per_channel"), AddColoredNoise(p=1.0, mode="per_batch")], output_type="dict")
    pitch = PitchShift(sample_rate=sr, p=1.0, output_type="dict")
    net = nn.Sequential(nn.Conv1d(1, 8, 64, stride=16), nn.ReLU(), nn.AdaptiveAvgPool1d(1), nn.Flatten(),
                        nn.Linear(8, 4)).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    labels = torch.randint(0, 4, (8,), device=dev)

    def train():  # a classifier trained on freshly augmented batches
        for _ in range(4):
            x = chain(audio, sample_rate=sr).samples
            x = some(x, sample_rate=sr).samples
            x = one(x, sample_rate=sr).samples
            loss = F.cross_entropy(net(x), labels)
            opt.zero_grad()
            loss.backward()
            opt.step()

    def pitch_shift():
        pitch(audio[:2, :, :4000], sample_rate=sr)
    return {"train": train, "pitch": pitch_shift}


# -- auraloss: time- and frequency-domain audio losses training a small network (README) ----------

def auraloss_losses(dev):
    import auraloss

    sr = 16000
    clean = torch.rand(4, 1, 8192, device=dev) - 0.5
    noisy = clean + 0.05 * torch.randn_like(clean)
    stereo = torch.rand(4, 2, 8192, device=dev) - 0.5
    net = nn.Sequential(nn.Conv1d(1, 16, 33, padding=16), nn.Tanh(), nn.Conv1d(16, 1, 33, padding=16)).to(dev)
    stereo_net = nn.Conv1d(2, 2, 33, padding=16).to(dev)
    opt = torch.optim.Adam([*net.parameters(), *stereo_net.parameters()], lr=1e-3)
    time_losses = [auraloss.time.ESRLoss(), auraloss.time.DCLoss(), auraloss.time.LogCoshLoss(),
                   auraloss.time.SNRLoss(), auraloss.time.SISDRLoss(), auraloss.time.SDSDRLoss()]
    freq_losses = [auraloss.freq.STFTLoss(), auraloss.freq.MultiResolutionSTFTLoss(),
                   auraloss.freq.MultiResolutionSTFTLoss(fft_sizes=[256, 512, 1024], hop_sizes=[64, 128, 256],
                                                         win_lengths=[256, 512, 1024], w_sc=0.0, w_phs=0.1),
                   auraloss.freq.RandomResolutionSTFTLoss(resolutions=2, max_fft_size=4096)]
    freq_losses = [fn.to(dev) for fn in freq_losses]
    stereo_loss = auraloss.freq.SumAndDifferenceSTFTLoss(fft_sizes=[256, 512], hop_sizes=[64, 128],
                                                         win_lengths=[256, 512]).to(dev)
    fir = auraloss.perceptual.FIRFilter(filter_type="aw", fs=sr).to(dev)

    def train():  # a denoiser trained on the sum of the losses
        for _ in range(3):
            out = net(noisy)
            loss = sum(fn(out, clean) for fn in time_losses + freq_losses)
            loss = loss + stereo_loss(stereo_net(stereo), stereo)
            a, b = fir(out, clean)
            loss = loss + F.mse_loss(a, b)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return {"train": train}


# -- torchkbnufft: forward / adjoint NUFFTs, SENSE, sparse matrices, Toeplitz, a reconstruction -----

def kbnufft_mri(dev):
    import numpy as np
    import torchkbnufft as tkbn

    im_size = (64, 64)
    spokes, klength = 32, 128
    angles = np.linspace(0, np.pi, spokes, endpoint=False)
    line = np.linspace(-np.pi, np.pi, klength)
    ktraj = torch.tensor(np.concatenate([np.stack((line * np.cos(a), line * np.sin(a))) for a in angles], axis=1),
                         dtype=torch.float, device=dev)  # (2, spokes * klength): a radial trajectory
    image = torch.rand(1, 1, *im_size, device=dev).to(torch.complex64)
    smaps = (torch.rand(1, 4, *im_size, device=dev) + 1j * torch.rand(1, 4, *im_size, device=dev)).to(image)
    nufft_ob = tkbn.KbNufft(im_size=im_size).to(dev)
    adjnufft_ob = tkbn.KbNufftAdjoint(im_size=im_size).to(dev)
    toep_ob = tkbn.ToepNufft().to(dev)

    def transforms():  # the README's examples in turn, then density compensation
        kdata = nufft_ob(image, ktraj)
        adjnufft_ob(kdata, ktraj)
        sense = nufft_ob(image, ktraj, smaps=smaps)
        adjnufft_ob(sense, ktraj, smaps=smaps)
        interp_mats = tkbn.calc_tensor_spmatrix(ktraj, im_size=im_size)
        adjnufft_ob(kdata, ktraj, interp_mats)
        nufft_ob(image, ktraj, interp_mats)
        kernel = tkbn.calc_toeplitz_kernel(ktraj, im_size)
        toep_ob(image, kernel)
        toep_ob(image, tkbn.calc_toeplitz_kernel(ktraj, im_size), smaps=smaps)
        dcomp = tkbn.calc_density_compensation_function(ktraj=ktraj, im_size=im_size)
        adjnufft_ob(kdata * dcomp, ktraj)

    kernel = tkbn.calc_toeplitz_kernel(ktraj, im_size)
    measured = nufft_ob(image, ktraj, smaps=smaps)
    refine = nn.Sequential(nn.Conv2d(2, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 2, 3, padding=1)).to(dev)
    opt = torch.optim.Adam(refine.parameters(), lr=1e-3)

    def reconstruct():  # gradient steps on ||A x - y||^2 with the Toeplitz normal operator, then an unrolled
        # network trained through the NUFFT (its operators are autograd functions)
        rhs = adjnufft_ob(measured, ktraj, smaps=smaps)
        x = torch.zeros_like(rhs)
        for _ in range(8):
            grad = toep_ob(x, kernel, smaps=smaps) - rhs
            x = x - 1e-4 * grad
        for _ in range(3):
            z = torch.view_as_real(x.detach().squeeze(1)).permute(0, 3, 1, 2)
            z = z + refine(z)
            est = torch.view_as_complex(z.permute(0, 2, 3, 1).contiguous()).unsqueeze(1)
            loss = (nufft_ob(est, ktraj, smaps=smaps) - measured).abs().pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return {"transforms": transforms, "reconstruct": reconstruct}


# -- entmax: sparse attention and sparse output layers trained with entmax losses (README) ---------

def entmax_sparse(dev):
    from entmax import Entmax15Loss, EntmaxBisect, EntmaxBisectLoss, SparsemaxLoss, entmax15, entmax_bisect, sparsemax

    class SparseAttention(nn.Module):
        def __init__(self, d=32, heads=4, classes=6):
            super().__init__()
            self.qkv, self.heads, self.out = nn.Linear(d, 3 * d), heads, nn.Linear(d, classes)
            self.alpha = nn.Parameter(torch.tensor(1.33))  # the README's learned alpha

        def forward(self, x, mapping):
            b, t, d = x.shape
            q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
            scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
            if mapping == "bisect":
                p = entmax_bisect(scores, self.alpha, dim=-1)
            else:
                p = {"sparsemax": sparsemax, "entmax15": entmax15}[mapping](scores, dim=-1)
            return self.out((p @ v).transpose(1, 2).reshape(b, t, d).mean(1))

    model = SparseAttention().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 12, 32, device=dev), torch.randint(0, 6, (16,), device=dev)
    losses = {"sparsemax": SparsemaxLoss(), "entmax15": Entmax15Loss(), "bisect": EntmaxBisectLoss(alpha=1.5)}

    def train():  # each mapping with its matching loss
        for mapping, loss_fn in losses.items():
            for _ in range(2):
                loss = loss_fn(model(x, mapping), y).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()

    def predict():  # sparse probabilities and their support, module forms of the mappings
        with torch.no_grad():
            logits = model(x, "entmax15")
            for p in (sparsemax(logits, dim=-1), entmax15(logits, dim=-1), EntmaxBisect(alpha=1.2)(logits)):
                (p > 0).sum(-1).float().mean()
                p.argmax(-1)
    return {"train": train, "predict": predict}


# -- prodigyopt: the Prodigy optimiser with cosine annealing, bias correction, safeguarded warm-up --

def prodigy_train(dev):
    from prodigyopt import Prodigy

    X, y = torch.randn(256, 3, 16, 16, device=dev), torch.randint(0, 10, (256,), device=dev)

    def cnn():
        return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                             nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                             nn.Linear(32, 10)).to(dev)
    steps = 8
    runs = []
    for kw in ({"weight_decay": 0.01}, {"slice_p": 11, "decouple": False, "weight_decay": 1e-3},
               {"safeguard_warmup": True, "use_bias_correction": True, "weight_decay": 0.01, "betas": (0.9, 0.99)}):
        net = cnn()
        opt = Prodigy(net.parameters(), lr=1.0, **kw)
        runs.append((net, opt, torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)))

    def train():  # the README: lr=1, no warm-up, cosine annealing over the steps; d tracked as it suggests
        for net, opt, sched in runs:
            for i in range(steps):
                xb, yb = X[(i * 32) % 256:(i * 32) % 256 + 32], y[(i * 32) % 256:(i * 32) % 256 + 32]
                loss = F.cross_entropy(net(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                opt.param_groups[0]["d"] * opt.param_groups[0]["lr"]
    return {"train": train}


# -- deepxde: physics-informed networks on the PyTorch backend (its Poisson and Burgers examples) --

def deepxde_pinn(dev):
    os.environ.setdefault("DDE_BACKEND", "pytorch")
    import deepxde as dde
    import numpy as np

    dde.config.set_random_seed(0)

    def poisson():  # -u'' = pi^2 sin(pi x) on [-1, 1], u(+-1) = 0: Adam, then L-BFGS
        geom = dde.geometry.Interval(-1, 1)

        def pde(x, y):
            return -dde.grad.hessian(y, x) - np.pi ** 2 * torch.sin(np.pi * x)

        def solution(x):
            return np.sin(np.pi * x)
        bc = dde.icbc.DirichletBC(geom, solution, lambda _, on_boundary: on_boundary)
        data = dde.data.PDE(geom, pde, bc, 16, 2, solution=solution, num_test=100)
        net = dde.nn.FNN([1] + [32] * 3 + [1], "tanh", "Glorot uniform")
        model = dde.Model(data, net)
        model.compile("adam", lr=1e-3, metrics=["l2 relative error"])
        model.train(iterations=300, display_every=100)
        dde.optimizers.config.set_LBFGS_options(maxiter=30)
        model.compile("L-BFGS", metrics=["l2 relative error"])
        model.train(display_every=10)
        model.predict(geom.uniform_points(50))

    def burgers():  # Burgers' equation with residual-based adaptive refinement, as the docs' RAR example
        geom = dde.geometry.Interval(-1, 1)
        geomtime = dde.geometry.GeometryXTime(geom, dde.geometry.TimeDomain(0, 0.99))

        def pde(x, y):
            dy_x = dde.grad.jacobian(y, x, i=0, j=0)
            dy_t = dde.grad.jacobian(y, x, i=0, j=1)
            dy_xx = dde.grad.hessian(y, x, i=0, j=0)
            return dy_t + y * dy_x - 0.01 / np.pi * dy_xx
        bc = dde.icbc.DirichletBC(geomtime, lambda x: 0, lambda _, on_boundary: on_boundary)
        ic = dde.icbc.IC(geomtime, lambda x: -np.sin(np.pi * x[:, 0:1]), lambda _, on_initial: on_initial)
        data = dde.data.TimePDE(geomtime, pde, [bc, ic], num_domain=500, num_boundary=40, num_initial=80)
        net = dde.nn.FNN([2] + [20] * 3 + [1], "tanh", "Glorot normal")
        model = dde.Model(data, net)
        model.compile("adam", lr=1e-3)
        model.train(iterations=200, display_every=100,
                    callbacks=[dde.callbacks.PDEPointResampler(period=50)])
        X = geomtime.random_points(1000)
        err = np.abs(model.predict(X, operator=pde))
        x_id = np.argmax(err)
        data.add_anchors(X[x_id])
        early = dde.callbacks.EarlyStopping(min_delta=1e-4, patience=200)
        model.compile("adam", lr=1e-3)
        model.train(iterations=100, disregard_previous_best=True, callbacks=[early], display_every=50)
    return {"poisson": poisson, "burgers": burgers}


# ============================================================================================
# Training repositories, their own scripts on synthetic (or shipped) data
# ============================================================================================

def _cora(folder: Path, nodes: int = 2708, features: int = 500, classes: int = 7, edges: int = 5429,
          seed: int = 0) -> None:
    """Synthetic Cora-shaped files for pyGAT's loader (the snapshot here lacks the real cora.content):
    `cora.content` lines `<paper id> <0/1 word features> <class name>`, `cora.cites` lines `<cited> <citing>`;
    the words and the citations mostly follow the class."""
    import numpy as np
    rng = np.random.default_rng(seed)
    ids = rng.choice(np.arange(1000, 10_000_000), nodes, replace=False)
    label = rng.integers(0, classes, nodes)
    words = (rng.random((nodes, features)) < 0.01) | (
        (rng.random((nodes, features)) < 0.08) & (np.arange(features)[None] % classes == label[:, None]))
    folder.mkdir(parents=True)
    with open(folder / "cora.content", "w") as f:
        for i in range(nodes):
            f.write(f"{ids[i]}\t" + "\t".join("1" if w else "0" for w in words[i]) + f"\tClass_{label[i]}\n")
    by_class = [np.flatnonzero(label == c) for c in range(classes)]
    with open(folder / "cora.cites", "w") as f:
        for _ in range(edges):
            a = rng.integers(nodes)
            b = rng.choice(by_class[label[a]]) if rng.random() < 0.8 else rng.integers(nodes)
            f.write(f"{ids[a]}\t{ids[b]}\n")


def _gat(sparse: bool):
    """pyGAT's train.py as is (`--sparse`: SpGAT) on synthetic Cora-shaped files, 10 epochs, from a scratch
    folder (it saves a checkpoint an epoch there). The window spans its prints 2..15: epoch 0's
    checkpoint, epochs 1..9 (training, validation, the printed losses), the reload of the best epoch and the
    test set's results (evaluated as the arguments of the 15th print, before it is called)."""
    def build(dev):
        root = _need_repo("pyGAT")
        cwd = Path(hc._tmp())
        _cora(cwd / "data" / "cora")
        argv = ["--epochs", "10", "--patience", "100"] + (["--sparse"] if sparse else [])
        if dev.type != "cuda":
            argv.append("--no-cuda")
        model = "pygat." + ("sparse" if sparse else "dense")

        def window():
            with hc.window_on(builtins, "print", model, "train", dev, 2, 15, stop_script=True):
                hc.run_script(root / "train.py", argv, str(cwd))
        return {"train_window": window}
    return build


def _binarized_mnist(path: Path, n_train: int = 3000, n_valid: int = 500, seed: int = 0) -> None:
    """A synthetic binarized_mnist.npz: 0/1 float32 'images' of 784 pixels, blobs of ink on a blank page."""
    import numpy as np
    rng = np.random.default_rng(seed)

    def images(n):
        centres = rng.uniform(0.2, 0.8, size=(n, 2, 1, 1))
        yy, xx = np.mgrid[0:28, 0:28] / 27.0
        dist = (yy[None, None] - centres[:, :1]) ** 2 + (xx[None, None] - centres[:, 1:]) ** 2
        p = np.exp(-dist[:, 0] / 0.02)
        return (rng.random((n, 28, 28)) < p).reshape(n, 784).astype(np.float32)
    np.savez(path, train_data=images(n_train), valid_data=images(n_valid), test_data=images(n_valid))


def _made(mode: str, extra: list):
    """pytorch-made's run.py as is on a synthetic binarized_mnist.npz (30 batches of 100 to train on). Its
    prints are: the data path, the parameter count, then per epoch `epoch N`, the test and train losses.
    The window spans its prints 6..12: epochs 1 and 2 (the learning-rate step, five test batches, a whole
    training epoch). run.py calls `.cuda()` itself: GPU only."""
    def build(dev):
        if dev.type != "cuda":
            raise RuntimeError("pytorch-made's run.py moves its data and model with .cuda(): GPU only")
        root = _need_repo("pytorch-made")
        cwd = Path(hc._tmp())
        _binarized_mnist(cwd / "binarized_mnist.npz")

        def window():
            with hc.window_on(builtins, "print", "made." + mode, mode, dev, 6, 12, stop_script=True):
                hc.run_script(root / "run.py", ["-d", "binarized_mnist.npz", *extra], str(cwd))
        return {f"{mode}_window": window}
    return build


MODELS = [
    # name, package, builder
    ("torcheval.metrics", "torcheval", torcheval_metrics),
    ("torchsurv.survival", "torchsurv", torchsurv_survival),
    ("skrl.agents", "skrl", skrl_agents),
    ("audiomentations.augment", "torch_audiomentations", audiomentations_augment),
    ("auraloss.losses", "auraloss", auraloss_losses),
    ("kbnufft.mri", "torchkbnufft", kbnufft_mri),
    ("entmax.sparse", "entmax", entmax_sparse),
    ("prodigy.train", "prodigyopt", prodigy_train),
    ("pygat.dense", "pyGAT", _gat(sparse=False)),
    ("pygat.sparse", "pyGAT", _gat(sparse=True)),
    ("made.one_mask", "pytorch-made", _made("one_mask", [])),
    ("made.masks", "pytorch-made", _made("masks", ["-q", "500,500", "-n", "4", "-r", "1", "-s", "2"])),
    # last: the PyTorch backend of deepxde may make the GPU torch's default device
    ("deepxde.pinn", "deepxde", deepxde_pinn),
]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh5", REPOS, DISTS, budget=300.0, per_model=60.0)


if __name__ == "__main__":
    sys.exit(main())
