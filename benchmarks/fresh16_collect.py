"""Record the syncs of a seventeenth set, `fresh16` (a sealed test set): libraries and training code nobody here read.

`fresh16` is recorded the same way as `fresh9` to `fresh15` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do: no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh16): cebra (neural-data embeddings:
  CEBRA's scikit-learn estimator trained behaviour-, time- and label-contrastively, hybrid and multi-session, its
  InfoNCE and consistency metrics, a k-NN decoder on the embedding), ctgan (synthetic tabular data: CTGAN and TVAE
  fitted on a mixed continuous / categorical table and sampled, conditionally too), d3rlpy (offline and online
  reinforcement learning: CQL, IQL, TD3+BC, AWAC and BC on a synthetic continuous-control dataset, DQN, double DQN,
  discrete CQL, BCQ and SAC on a discrete one, with its evaluators; DQN and SAC trained online on gymnasium's
  classic-control tasks), foolbox (adversarial robustness: gradient attacks (FGSM, PGD, BIM, DDN, targeted PGD) and
  minimisation attacks (DeepFool, Carlini-Wagner, EAD, noise, salt-and-pepper, boundary) on a small CNN),
  hummingbird (hummingbird-ml: scikit-learn trees, forests, boosting, isolation forests, linear models, an MLP and
  pipelines compiled to tensor programs (GEMM, tree traversal, perfect tree traversal, TorchScript) and run on the
  device), torchdrift (drift detection: kernel MMD detectors with three kernels, a PCA reducer with a KS detector,
  fitted on a feature extractor's outputs and monitoring corrupted batches), libauc (AUC optimisation: AUC-M,
  compositional AUC, AP and partial-AUC losses with PESG, PDSCA, SOAP and SOPA-s, a DualSampler, its metrics) and
  kmeans_pytorch (k-means with euclidean and cosine distances, prediction, colour quantisation of images);
  + literate-dataclasses (cebra's), rdt and Faker (ctgan's), gym, gym-notices, gymnasium, Farama-Notifications,
  structlog, dataclasses-json and marshmallow (d3rlpy's), eagerpy (foolbox's tensor layer, which its attacks' syncs
  run through: counted with it), GitPython, gitdb and smmap (foolbox's), onnxconverter-common and dill
  (hummingbird's), tensorboardX (the flows repository's). Their other needs (numpy, scipy, scikit-learn, pandas, h5py,
  click, colorama, typing-inspect, onnx, protobuf, psutil, torchvision, torch_geometric, matplotlib, pillow, tqdm)
  are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh16/repos/<name>:
  ikostrikov/pytorch-flows (main.py as is: MAF and Glow-style flows trained by maximum likelihood on its own
  synthetic two-moons data) and LeeJunHyun/Image_Segmentation (main.py as is: U-Net and attention U-Net trained
  for skin-lesion segmentation on a synthetic ISIC-style image folder, with its per-epoch validation).

    python benchmarks/fresh16_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh16_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh16 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh16 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh16"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh16", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh16/repos/<name>)
REPOS = {
    "flows": ("ikostrikov/pytorch-flows", "bf12ed91b86867b38d74982f5e2d44c248604df9",
              ["main.py", "flows.py", "utils.py", "datasets"]),
    "unet": ("LeeJunHyun/Image_Segmentation", "5e9da9395c52b119d55dfc6532c34ac0e88f446e",
             ["main.py", "solver.py", "network.py", "data_loader.py", "evaluation.py", "misc.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["cebra==0.6.1", "literate-dataclasses==0.0.6", "ctgan==0.12.1", "rdt==2.0.0", "Faker==40.63.0",
          "d3rlpy==2.8.1", "gym-notices==0.1.0", "gymnasium==1.0.0", "Farama-Notifications==0.0.4",
          "structlog==26.1.0", "dataclasses-json==0.6.7", "marshmallow==3.26.2", "foolbox==3.3.4", "eagerpy==0.30.0",
          "GitPython==3.2.1", "gitdb==4.0.12", "smmap==5.0.3", "hummingbird-ml==0.4.12",
          "onnxconverter-common==1.16.0", "dill==0.4.1", "torchdrift==0.1.0.post1", "libauc==1.4.0",
          "kmeans-pytorch==0.3", "tensorboardX==2.6.5"]
# published as source distributions only: their pure-Python wheels are built here (`pip wheel --no-deps`)
SDISTS = ["gym==0.26.2"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"cebra": "cebra", "ctgan": "ctgan", "d3rlpy": "d3rlpy", "foolbox": "foolbox",
         "hummingbird_ml": "hummingbird-ml",
         "torchdrift": "torchdrift", "libauc": "libauc", "kmeans_pytorch": "kmeans-pytorch", "rdt": "rdt",
         "gym": "gym", "gymnasium": "gymnasium", "eagerpy": "eagerpy", "onnxconverter_common": "onnxconverter-common",
         "tensorboardX": "tensorboardX", "numpy": "numpy", "scipy": "scipy", "scikit_learn": "scikit-learn",
         "pandas": "pandas", "onnx": "onnx", "torchvision": "torchvision", "torch_geometric": "torch-geometric"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh16/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh16_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _cnn(n_out: int, width: int = 16) -> nn.Module:
    """A small random-weight CNN for 3x32x32 images."""
    return nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(width, 2 * width, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(),
                         nn.Linear(32 * width, 64), nn.ReLU(), nn.Linear(64, n_out))


def _patterns(n: int, n_cls: int, seed: int = 0):
    """Synthetic 3x32x32 images in [0, 1]: each class a colour and stripe orientation, with noise; and the labels."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, n_cls, (n,), generator=g)
    yy, xx = torch.meshgrid(torch.arange(32.0), torch.arange(32.0), indexing="ij")
    angle = y.float() * torch.pi / n_cls
    stripes = torch.sin((xx * torch.cos(angle)[:, None, None] + yy * torch.sin(angle)[:, None, None]) * 0.6)
    colour = torch.stack([(y % 3 == k).float() for k in range(3)], 1)[..., None, None]
    x = 0.5 + 0.25 * stripes[:, None] * (0.5 + colour) + 0.1 * torch.randn(n, 3, 32, 32, generator=g)
    return x.clamp(0, 1), y


# ============================================================================================
# Libraries
# ============================================================================================

# -- cebra: the docs' scikit-learn estimator `CEBRA` on synthetic place-cell recordings of a rat on a linear track
#    (numpy arrays in, `device=`): behaviour-contrastive with the position (`conditional="time_delta"`), time-
#    contrastive with a learned temperature, discrete labels (running direction), hybrid, multi-session; `transform`,
#    the InfoNCE loss and consistency metrics, a `KNNDecoder` on the embedding -----------------------------------

def cebra_embeddings(dev):
    import numpy as np
    from cebra import CEBRA, KNNDecoder
    from cebra.integrations.sklearn import metrics as cm

    rng = np.random.default_rng(0)
    device = "cuda" if dev.type == "cuda" else "cpu"

    def session(T, n_neurons, seed):
        r = np.random.default_rng(seed)
        t = np.arange(T) / 50.0
        pos = (np.sin(t * 0.5) + 1) / 2
        direction = (np.cos(t * 0.5) > 0).astype(np.int64)
        centres = r.random(n_neurons)
        rates = np.exp(-((pos[:, None] - centres[None]) ** 2) / 0.01) * (1 + 0.5 * direction[:, None])
        neural = (rates + 0.2 * r.standard_normal(rates.shape)).astype(np.float32)
        return neural, pos.astype(np.float32)[:, None], direction

    neural, pos, direction = session(2000, 40, 0)
    neural2, pos2, _ = session(1600, 30, 1)
    split = 1600

    def behaviour():
        model = CEBRA(model_architecture="offset10-model", batch_size=256, learning_rate=3e-4, temperature=1,
                      output_dimension=3, max_iterations=20, distance="cosine", conditional="time_delta",
                      device=device, verbose=False, time_offsets=10)
        model.fit(neural[:split], pos[:split])
        train_emb = model.transform(neural[:split])
        test_emb = model.transform(neural[split:])
        loss = cm.infonce_loss(model, neural[split:], pos[split:], num_batches=5)
        dec = KNNDecoder(n_neighbors=5, metric="cosine").fit(train_emb, pos[:split, 0])
        score = dec.score(test_emb, pos[split:, 0])
        print(f"behaviour emb {train_emb.shape} infonce {loss:.3f} knn r2 {score:.3f}")

    def time_and_labels():
        tc = CEBRA(model_architecture="offset10-model", batch_size=256, temperature_mode="auto", min_temperature=0.1,
                   output_dimension=8, max_iterations=15, conditional="time", device=device, time_offsets=10)
        tc.fit(neural)
        disc = CEBRA(model_architecture="offset10-model", batch_size=256, output_dimension=4, max_iterations=15,
                     conditional="time_delta", device=device, time_offsets=10)
        disc.fit(neural, direction)
        hybrid = CEBRA(model_architecture="offset10-model", batch_size=256, output_dimension=6, max_iterations=15,
                       conditional="time_delta", hybrid=True, device=device, time_offsets=10)
        hybrid.fit(neural, pos)
        embs = [m.transform(neural) for m in (tc, disc, hybrid)]
        print(f"time {embs[0].shape} discrete {embs[1].shape} hybrid {embs[2].shape} "
              f"loss {cm.infonce_loss(disc, neural, direction, num_batches=3):.3f}")

    def multisession():
        model = CEBRA(model_architecture="offset10-model", batch_size=256, output_dimension=3, max_iterations=20,
                      conditional="time_delta", device=device, time_offsets=10)
        model.fit([neural, neural2], [pos, pos2])
        embs = [model.transform(neural, session_id=0), model.transform(neural2, session_id=1)]
        scores, pairs, ids = cm.consistency_score(embeddings=embs, labels=[pos[:, 0], pos2[:, 0]],
                                                  dataset_ids=["rat1", "rat2"], between="datasets")
        runs = [CEBRA(model_architecture="offset10-model", batch_size=256, output_dimension=3, max_iterations=10,
                      device=device, time_offsets=10).fit(neural).transform(neural) for _ in range(2)]
        rscores, _, _ = cm.consistency_score(embeddings=runs, between="runs")
        print(f"multisession {[e.shape for e in embs]} consistency {np.round(scores, 3).tolist()} "
              f"runs {np.round(rscores, 3).tolist()} {rng.random():.2f}")
    return {"behaviour": behaviour, "time_labels": time_and_labels, "multisession": multisession}


# -- ctgan: the README's `CTGAN` and `TVAE` on a mixed table (two continuous columns, one multi-modal, and three
#    discrete ones) as a pandas DataFrame, on the GPU through `enable_gpu`: `fit` with the discrete columns named,
#    `sample`, conditional `sample`, `set_device`, save and load -----------------------------------------------

def ctgan_synthesis(dev):
    import numpy as np
    import pandas as pd
    from ctgan import CTGAN, TVAE

    rng = np.random.default_rng(0)
    n = 1500
    edu = rng.choice(["school", "bachelor", "master", "phd"], n, p=[0.4, 0.35, 0.2, 0.05])
    city = rng.choice(["a", "b", "c", "d", "e"], n)
    age = np.where(rng.random(n) < 0.5, rng.normal(28, 4, n), rng.normal(55, 6, n))
    income = np.exp(rng.normal(10 + 0.3 * (edu == "phd") + 0.2 * (edu == "master"), 0.4))
    data = pd.DataFrame({"age": age, "income": income, "education": edu, "city": city,
                         "label": (income > np.median(income)).astype(int)})
    discrete = ["education", "city", "label"]
    gpu = dev.type == "cuda"
    tmp = Path(hc._tmp())

    def gan():
        model = CTGAN(epochs=2, batch_size=300, pac=10, generator_dim=(128, 128), discriminator_dim=(128, 128),
                      enable_gpu=gpu, verbose=True)
        model.fit(data, discrete)
        s = model.sample(400)
        c = model.sample(200, condition_column="education", condition_value="phd")
        model.set_device(torch.device(dev))
        model.save(str(tmp / "ctgan.pkl"))
        again = CTGAN.load(str(tmp / "ctgan.pkl"))
        print(f"ctgan {s.shape} phd share {(c['education'] == 'phd').mean():.2f} reloaded {again.sample(50).shape}")

    def vae():
        model = TVAE(epochs=3, batch_size=300, compress_dims=(64, 64), decompress_dims=(64, 64), enable_gpu=gpu,
                     verbose=True)
        model.fit(data, discrete)
        s = model.sample(500)
        print(f"tvae {s.shape} mean age {s['age'].mean():.1f} cities {sorted(s['city'].unique())}")
    return {"gan": gan, "vae": vae}


# -- d3rlpy: the docs' algorithms built from their configs on the device (`create(device=...)`): offline on an
#    `MDPDataset` of synthetic continuous-control episodes (CQL, IQL, TD3+BC, AWAC, BC) and of discrete-action ones
#    (DQN, double DQN, discrete CQL, BCQ and SAC) with `fit`, its evaluators (TD error, initial-state value, average
#    value, action match / difference, soft OPC), `predict`, `predict_value`, `sample_action`; online `fit_online`
#    of DQN on CartPole and SAC on Pendulum with a replay buffer, an explorer and the environment evaluator -------

def d3rlpy_rl(dev):
    import d3rlpy
    import gymnasium as gym
    import numpy as np
    from d3rlpy import metrics as dm

    device = "cuda:0" if dev.type == "cuda" else "cpu:0"
    rng = np.random.default_rng(0)
    n_ep, T = 30, 50
    N = n_ep * T
    obs = rng.standard_normal((N, 6)).astype(np.float32)
    act_c = np.tanh(obs[:, :2] * 0.8 + 0.1 * rng.standard_normal((N, 2))).astype(np.float32)
    rew = (-np.square(obs[:, :2] - act_c).sum(1) + 0.1 * rng.standard_normal(N)).astype(np.float32)
    terminals = np.zeros(N, dtype=np.float32)
    terminals[T - 1::T] = 1.0
    continuous = d3rlpy.dataset.MDPDataset(observations=obs, actions=act_c, rewards=rew, terminals=terminals)
    act_d = (obs[:, 0] > 0).astype(np.int64) + 2 * (obs[:, 1] > 0).astype(np.int64)
    discrete = d3rlpy.dataset.MDPDataset(observations=obs, actions=act_d, rewards=rew, terminals=terminals,
                                         action_size=4)
    noop = d3rlpy.logging.NoopAdapterFactory()

    def fit(algo, dataset, evaluators, steps=20):
        return algo.fit(dataset, n_steps=steps, n_steps_per_epoch=10, evaluators=evaluators, show_progress=False,
                        logger_adapter=noop)

    def offline_continuous():
        evs = {"td": dm.TDErrorEvaluator(episodes=continuous.episodes[:3]),
               "init": dm.InitialStateValueEstimationEvaluator(episodes=continuous.episodes[:3]),
               "avg": dm.AverageValueEstimationEvaluator(episodes=continuous.episodes[:3]),
               "diff": dm.ContinuousActionDiffEvaluator(episodes=continuous.episodes[:3]),
               "opc": dm.SoftOPCEvaluator(return_threshold=-5.0, episodes=continuous.episodes[:3])}
        out = []
        for cfg in (d3rlpy.algos.CQLConfig(batch_size=64, n_action_samples=4),
                    d3rlpy.algos.IQLConfig(batch_size=64), d3rlpy.algos.TD3PlusBCConfig(batch_size=64),
                    d3rlpy.algos.AWACConfig(batch_size=64, n_action_samples=4)):
            algo = cfg.create(device=device)
            hist = fit(algo, continuous, evs)
            out.append(round(hist[-1][1]["td"], 3))
        bc = d3rlpy.algos.BCConfig(batch_size=64).create(device=device)
        fit(bc, continuous, {"diff": evs["diff"]})
        a = algo.predict(obs[:16])
        v = algo.predict_value(obs[:16], a)
        s = algo.sample_action(obs[:16])
        print(f"offline continuous td errors {out}, action {a.shape} value {v.mean():.3f} sampled {s.shape}, "
              f"bc {bc.predict(obs[:4]).shape}")

    def offline_discrete():
        evs = {"td": dm.TDErrorEvaluator(episodes=discrete.episodes[:3]),
               "match": dm.DiscreteActionMatchEvaluator(episodes=discrete.episodes[:3]),
               "init": dm.InitialStateValueEstimationEvaluator(episodes=discrete.episodes[:3])}
        out = []
        for cfg in (d3rlpy.algos.DQNConfig(batch_size=64), d3rlpy.algos.DoubleDQNConfig(batch_size=64),
                    d3rlpy.algos.DiscreteCQLConfig(batch_size=64), d3rlpy.algos.DiscreteBCQConfig(batch_size=64),
                    d3rlpy.algos.DiscreteSACConfig(batch_size=64)):
            algo = cfg.create(device=device)
            hist = fit(algo, discrete, evs)
            out.append(round(hist[-1][1]["match"], 3))
        print(f"offline discrete action match {out}, greedy {algo.predict(obs[:8]).tolist()}")

    def online():
        env, eval_env = gym.make("CartPole-v1"), gym.make("CartPole-v1")
        dqn = d3rlpy.algos.DQNConfig(batch_size=32, learning_rate=1e-3, target_update_interval=50).create(
            device=device)
        buffer = d3rlpy.dataset.create_fifo_replay_buffer(limit=5000, env=env)
        explorer = d3rlpy.algos.LinearDecayEpsilonGreedy(start_epsilon=1.0, end_epsilon=0.1, duration=200)
        dqn.fit_online(env, buffer, explorer, n_steps=160, n_steps_per_epoch=80, update_start_step=48,
                       eval_env=eval_env, show_progress=False, logger_adapter=noop)
        penv = gym.make("Pendulum-v1")
        sac = d3rlpy.algos.SACConfig(batch_size=32).create(device=device)
        pbuf = d3rlpy.dataset.create_fifo_replay_buffer(limit=5000, env=penv)
        sac.fit_online(penv, pbuf, n_steps=100, n_steps_per_epoch=50, update_start_step=48, show_progress=False,
                       logger_adapter=noop)
        ret = dm.EnvironmentEvaluator(eval_env, n_trials=1)(dqn, dataset=None)
        print(f"online dqn return {ret:.1f}, sac buffer {pbuf.transition_count}")
    return {"continuous": offline_continuous, "discrete": offline_discrete, "online": online}


# -- foolbox: the README's `PyTorchModel` (bounds, preprocessing with mean / std, `device=`) around a small CNN
#    trained briefly on synthetic patterned images; `utils.accuracy`; gradient attacks (FGSM, L-inf and L2 PGD, BIM,
#    DDN, a targeted PGD through `TargetedMisclassification`) over a list of epsilons, the robust accuracy from the
#    success mask; minimisation attacks (DeepFool, Carlini-Wagner, EAD, additive noise, salt-and-pepper, boundary
#    attack started from a blended-noise one) ----------------------------------------------------------------------

def foolbox_attacks(dev):
    import foolbox as fb

    x, y = _patterns(256, 10)
    x, y = x.to(dev), y.to(dev)
    net = _cnn(10).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    for _ in range(30):
        loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    net.eval()
    fmodel = fb.PyTorchModel(net, bounds=(0, 1), device=dev,
                             preprocessing=dict(mean=[0.5, 0.5, 0.5], std=[0.25, 0.25, 0.25], axis=-3))
    images, labels = x[:32], y[:32]
    epsilons = [0.0, 0.01, 0.03]

    def gradient():
        clean = fb.utils.accuracy(fmodel, images, labels)
        robust = {}
        for name, attack in (("fgsm", fb.attacks.FGSM()), ("linf_pgd", fb.attacks.LinfPGD(steps=5)),
                             ("l2_pgd", fb.attacks.L2PGD(steps=5)),
                             ("bim", fb.attacks.LinfBasicIterativeAttack(steps=5))):
            raw, clipped, success = attack(fmodel, images, labels, epsilons=epsilons)
            robust[name] = (1 - success.float().mean(axis=-1)).tolist()
        ddn = fb.attacks.DDNAttack(steps=5)
        _, adv, ok = ddn(fmodel, images, labels, epsilons=None)
        target = fb.criteria.TargetedMisclassification((labels + 1) % 10)
        _, _, hit = fb.attacks.LinfPGD(steps=5)(fmodel, images, target, epsilons=0.1)
        print(f"clean {clean:.2f} robust {robust} ddn {ok.float().mean().item():.2f} "
              f"|d| {(adv - images).flatten(1).norm(dim=1).mean().item():.3f} targeted {hit.float().mean().item():.2f}")

    def minimisation():
        found = {}
        for name, attack in (("deepfool", fb.attacks.L2DeepFoolAttack(steps=5)),
                             ("cw", fb.attacks.L2CarliniWagnerAttack(binary_search_steps=2, steps=10)),
                             ("ead", fb.attacks.EADAttack(binary_search_steps=2, steps=10)),
                             ("noise", fb.attacks.L2AdditiveGaussianNoiseAttack()),
                             ("salt", fb.attacks.SaltAndPepperNoiseAttack(steps=20)),
                             ("boundary", fb.attacks.BoundaryAttack(steps=15,
                                                                    init_attack=fb.attacks.LinearSearchBlendedUniformNoiseAttack(
                                                                        steps=20)))):
            eps = 3.0 if name == "noise" else None
            _, adv, success = attack(fmodel, images[:16], labels[:16], epsilons=eps)
            found[name] = round(success.float().mean().item(), 2)
        print(f"minimisation attacks success {found}")
    return {"gradient": gradient, "minimisation": minimisation}


# -- hummingbird (hummingbird-ml): the README's `convert` of scikit-learn models to PyTorch and `.to(device)`:
#    random forests, extra trees, gradient boosting, histogram boosting and a decision tree regressor under each
#    tree strategy (`extra_config` GEMM, tree traversal, perfect tree traversal), an isolation forest; linear models
#    (logistic regression and a linear SVM behind scalers in pipelines, SGD), an MLP, a scaler alone; the TorchScript
#    backend; `predict`, `predict_proba`, `score_samples`, `transform` on numpy inputs and on device tensors -------

def hummingbird_models(dev):
    import numpy as np
    from hummingbird.ml import constants, convert
    from sklearn.datasets import make_classification, make_regression
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        GradientBoostingClassifier,
        HistGradientBoostingClassifier,
        IsolationForest,
        RandomForestClassifier,
    )
    from sklearn.linear_model import LogisticRegression, SGDClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import MinMaxScaler, StandardScaler
    from sklearn.svm import LinearSVC
    from sklearn.tree import DecisionTreeRegressor

    X, y = make_classification(n_samples=3000, n_features=16, n_informative=8, n_classes=3, random_state=0)
    X = X.astype(np.float32)
    Xr, yr = make_regression(n_samples=2000, n_features=10, random_state=0)
    Xr = Xr.astype(np.float32)
    Xt = torch.from_numpy(X).to(dev)
    trees = [RandomForestClassifier(n_estimators=20, max_depth=7, random_state=0).fit(X, y),
             ExtraTreesClassifier(n_estimators=20, max_depth=6, random_state=0).fit(X, y),
             GradientBoostingClassifier(n_estimators=10, max_depth=3, random_state=0).fit(X, y),
             HistGradientBoostingClassifier(max_iter=10, random_state=0).fit(X, y)]
    reg = DecisionTreeRegressor(max_depth=8, random_state=0).fit(Xr, yr)
    iso = IsolationForest(n_estimators=20, random_state=0).fit(X)

    def tree_models():
        agree = []
        for impl in ("gemm", "tree_trav", "perf_tree_trav"):
            for skl in trees:
                hb = convert(skl, "pytorch", extra_config={constants.TREE_IMPLEMENTATION: impl}).to(dev)
                p = hb.predict_proba(X)
                agree.append(float((hb.predict(X) == skl.predict(X)).mean()))
            hr = convert(reg, "pytorch", extra_config={constants.TREE_IMPLEMENTATION: impl}).to(dev)
            err = np.abs(hr.predict(Xr) - reg.predict(Xr)).max()
        hi = convert(iso, "pytorch").to(dev)
        scores = hi.score_samples(X)
        out = hi.predict(Xt)
        print(f"tree agreement {min(agree):.3f}, proba {p.shape}, regression err {err:.2e}, "
              f"isolation {scores.shape} outliers {(out == -1).sum()}")

    linear = [make_pipeline(StandardScaler(), LogisticRegression(max_iter=300)).fit(X, y),
              make_pipeline(MinMaxScaler(), LinearSVC(max_iter=2000)).fit(X, y),
              SGDClassifier(loss="log_loss", random_state=0).fit(X, y),
              MLPClassifier(hidden_layer_sizes=(32,), max_iter=50, random_state=0).fit(X, y)]

    def linear_models():
        agree = []
        for skl in linear:
            hb = convert(skl, "pytorch", device=dev)
            agree.append(float((hb.predict(Xt) == skl.predict(X)).mean()))
            if hasattr(skl, "predict_proba"):
                d = hb.predict_proba(X)
        hs = convert(StandardScaler().fit(X), "pytorch").to(dev)
        z = hs.transform(Xt)
        print(f"linear agreement {agree}, proba {d.shape}, scaled {z.shape}")

    def torchscript():
        hb = convert(trees[0], "torch.jit", X[:256], device=dev)
        hb2 = convert(linear[0], "torch.jit", X[:256]).to(dev)
        print(f"torchscript {hb.predict_proba(X[:256]).shape} {hb2.predict(X[:256])[:5].tolist()}")
    return {"trees": tree_models, "linear": linear_models, "torchscript": torchscript}


# -- torchdrift: the README's drift detection: a feature extractor (a random-weight CNN trunk, on the device) and
#    `KernelMMDDriftDetector`s with Gaussian, exponential and rational-quadratic kernels fitted through
#    `utils.fit(dataloader, extractor, detector, device=...)`, scores and `compute_p_value` on clean and corrupted
#    batches (`data.functional` gaussian blur, noise); a `PCAReducer` chained with a `KSDriftDetector`; a monitoring
#    loop over a stream of batches ------------------------------------------------------------------------------

def torchdrift_detect(dev):
    import torchdrift
    from torch.utils.data import DataLoader, TensorDataset
    from torchdrift.data import functional as tdf

    x, y = _patterns(512, 6)
    loader = DataLoader(TensorDataset(x, y), batch_size=64, shuffle=True)
    extractor = nn.Sequential(*list(_cnn(16).children())[:-2]).to(dev).eval()  # the trunk: 64 features
    test = x[:64].to(dev)
    blurred = tdf.gaussian_blur(test, severity=3)
    noisy = tdf.gaussian_noise(test, severity=4)

    def mmd():
        out = []
        for kernel in (torchdrift.detectors.mmd.GaussianKernel(), torchdrift.detectors.mmd.ExpKernel(),
                       torchdrift.detectors.mmd.RationalQuadraticKernel()):
            det = torchdrift.detectors.KernelMMDDriftDetector(kernel=kernel)
            torchdrift.utils.fit(loader, extractor, det, num_batches=4, device=dev)
            model = nn.Sequential(extractor, det)
            with torch.no_grad():
                scores = [model(b).item() for b in (test, blurred, noisy)]
                p = det.compute_p_value(extractor(blurred))
            out.append((round(scores[0], 4), round(scores[1], 4), round(float(p), 3)))
        print(f"mmd (clean, blurred score, p) {out}")

    def ks():
        reducer = torchdrift.reducers.PCAReducer(n_components=4)
        det = torchdrift.detectors.KSDriftDetector()
        torchdrift.utils.fit(loader, extractor, [reducer, det], num_batches=4, device=dev)
        model = nn.Sequential(extractor, reducer, det)
        alarms = 0
        with torch.no_grad():
            for i, (xb, _) in enumerate(loader):  # a stream of batches, corrupted from the fourth on
                xb = xb.to(dev)
                if i >= 3:
                    xb = tdf.shot_noise(xb, severity=5)
                score = model(xb)
                p = det.compute_p_value(reducer(extractor(xb)))
                if p < 0.01:
                    alarms += 1
        print(f"ks monitor: {alarms} alarms, last score {score.item():.3f}")
    return {"mmd": mmd, "ks": ks}


# -- libauc: the docs' AUC optimisation of an imbalanced binary task (10% positives) on a small CNN: `AUCMLoss`
#    with `PESG` (and its `update_regularizer`), `CompositionalAUCLoss` with `PDSCA`, `APLoss` with `SOAP` over
#    indexed batches, `pAUC_CVaR_Loss` / `pAUC_DRO_Loss` with `SOPAs`, batches drawn by `DualSampler`; evaluation
#    with `auc_roc_score`, `auc_prc_score` and `pauc_roc_score` -------------------------------------------------

def libauc_auc(dev):
    import numpy as np
    from libauc import losses as L
    from libauc import optimizers as O
    from libauc.metrics import auc_prc_score, auc_roc_score, pauc_roc_score
    from libauc.sampler import DualSampler
    from torch.utils.data import DataLoader, Dataset

    x, cls = _patterns(640, 10, seed=1)
    y = (cls == 0).float()  # one class of ten: about 10% positives

    class Indexed(Dataset):
        """(image, label, index), as the docs' datasets return for the losses that keep per-sample state."""

        def __len__(self):
            return len(y)

        def __getitem__(self, i):
            return x[i], y[i], i

    ds = Indexed()
    n_pos = int(y.sum())

    def evaluate(net):
        net.eval()
        with torch.no_grad():
            pred = torch.sigmoid(net(x.to(dev))).squeeze(1).cpu().numpy()
        net.train()
        t = y.numpy()
        return auc_roc_score(t, pred), auc_prc_score(t, pred), pauc_roc_score(t, pred, max_fpr=0.3)

    def aucm():
        torch.manual_seed(0)
        net = _cnn(1).to(dev)
        loss_fn = L.AUCMLoss(device=dev)
        opt = O.PESG(net.parameters(), loss_fn=loss_fn, lr=0.05, momentum=0.9, margin=1.0, epoch_decay=0.003,
                     weight_decay=1e-4, device=dev)
        loader = DataLoader(ds, batch_size=64, sampler=DualSampler(ds, 64, labels=y.numpy(), sampling_rate=0.5))
        for epoch in range(2):
            if epoch == 1:
                opt.update_regularizer(decay_factor=10)
            for xb, yb, _ in loader:
                xb, yb = xb.to(dev), yb.to(dev)
                loss = loss_fn(torch.sigmoid(net(xb)), yb.unsqueeze(1))
                opt.zero_grad()
                loss.backward()
                opt.step()
        net2 = _cnn(1).to(dev)
        closs = L.CompositionalAUCLoss(device=dev)
        opt2 = O.PDSCA(net2.parameters(), loss_fn=closs, lr=0.05, beta1=0.9, beta2=0.9, epoch_decay=0.003,
                       weight_decay=1e-4, device=dev)
        for xb, yb, _ in loader:
            xb, yb = xb.to(dev), yb.to(dev)
            loss = closs(torch.sigmoid(net2(xb)), yb.unsqueeze(1))
            opt2.zero_grad()
            loss.backward()
            opt2.step()
        print(f"aucm roc/prc/pauc {np.round(evaluate(net), 3).tolist()}, compositional {loss.item():.3f}")

    def ranking():
        torch.manual_seed(0)
        loader = DataLoader(ds, batch_size=64, sampler=DualSampler(ds, 64, labels=y.numpy(), sampling_rate=0.5))
        results = []
        for make_loss, make_opt in (
                (lambda: L.APLoss(data_len=len(ds), margin=0.8, gamma=0.9, device=dev),
                 lambda p, lf: O.SOAP(p, lr=1e-3, mode="adam", weight_decay=1e-4, device=dev)),
                (lambda: L.pAUC_CVaR_Loss(data_len=len(ds), pos_len=n_pos, beta=0.2, device=dev),
                 lambda p, lf: O.SOPAs(p, lr=1e-3, mode="adam", weight_decay=1e-4, device=dev)),
                (lambda: L.pAUC_DRO_Loss(data_len=len(ds), gamma=0.9, Lambda=1.0, device=dev),
                 lambda p, lf: O.SOPAs(p, lr=1e-3, mode="adam", weight_decay=1e-4, device=dev))):
            net = _cnn(1).to(dev)
            loss_fn = make_loss()
            opt = make_opt(net.parameters(), loss_fn)
            for xb, yb, idx in loader:
                xb, yb, idx = xb.to(dev), yb.to(dev), idx.to(dev)
                loss = loss_fn(torch.sigmoid(net(xb)), yb.unsqueeze(1), idx)
                opt.zero_grad()
                loss.backward()
                opt.step()
            results.append(round(evaluate(net)[0], 3))
        print(f"ap / pauc-cvar / pauc-dro roc {results}")
    return {"aucm": aucm, "ranking": ranking}


# -- kmeans_pytorch: the README's `kmeans` (euclidean and cosine, `tol`, `device=`) and `kmeans_predict` on
#    Gaussian blobs; colour quantisation: k-means of the pixels of synthetic images, the palette applied to other
#    images by `kmeans_predict`, a small CNN trained to predict each image's dominant palette entry -----------------

def kmeans_pytorch_cluster(dev):
    import numpy as np
    from kmeans_pytorch import kmeans, kmeans_predict

    g = torch.Generator().manual_seed(0)
    centres = torch.randn(6, 8, generator=g) * 4
    lab = torch.randint(0, 6, (3000,), generator=g)
    blobs = centres[lab] + torch.randn(3000, 8, generator=g)
    new = (centres[torch.randint(0, 6, (500,), generator=g)] + torch.randn(500, 8, generator=g)).to(dev)

    def cluster():
        np.random.seed(0)  # its initial centres are drawn with numpy
        ids, c = kmeans(X=blobs, num_clusters=6, distance="euclidean", device=dev)
        ids_cos, c_cos = kmeans(X=blobs.to(dev), num_clusters=6, distance="cosine", tol=1e-3, device=dev)
        pred = kmeans_predict(new, c, "euclidean", device=dev)
        pred_cos = kmeans_predict(new, c_cos, distance="cosine", device=dev)
        print(f"clusters {torch.bincount(ids, minlength=6).tolist()} cosine {torch.bincount(ids_cos).tolist()} "
              f"predicted {torch.bincount(pred, minlength=6).tolist()} {tuple(pred_cos.shape)}")

    x, _ = _patterns(96, 5, seed=2)
    x = x.to(dev)
    pixels = x[:32].permute(0, 2, 3, 1).reshape(-1, 3)[::4]  # 8192 RGB values
    net = _cnn(8).to(dev)

    def quantise():
        np.random.seed(0)
        _, palette = kmeans(X=pixels, num_clusters=8, distance="euclidean", tol=1e-3, device=dev)
        ids = kmeans_predict(x.permute(0, 2, 3, 1).reshape(-1, 3), palette, "euclidean", device=dev).to(dev)
        quant = palette.to(dev)[ids].view(x.shape[0], 32, 32, 3).permute(0, 3, 1, 2)
        dominant = ids.view(x.shape[0], -1).mode(dim=1).values
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        for _ in range(5):
            loss = F.cross_entropy(net(quant), dominant)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"quantised {tuple(quant.shape)} error {(quant - x).abs().mean().item():.3f} loss {loss.item():.3f}")
    return {"cluster": cluster, "quantise": quantise}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _flows(dev, name: str, extra: list):
    """ikostrikov/pytorch-flows's main.py as is (`--dataset MOONS`: its own synthetic two-moons data from
    scikit-learn, 24000 training points; `--epochs 2 --batch-size 100 --num-blocks 5`, tensorboardX logs in a
    temporary folder). The window spans the 2nd to the 30th `backward`: training steps, each logged with `.item()`."""
    root = _need_repo("flows")
    tmp = hc._tmp()
    argv = ["--dataset", "MOONS", "--epochs", "2", "--batch-size", "100", "--num-blocks", "5", *extra]
    if dev.type != "cuda":
        argv.append("--no-cuda")

    def window():
        with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 30, stop_script=True):
            hc.run_script(root / "main.py", argv, tmp)
    return {"train_window": window}


def flows_maf(dev):
    """Masked autoregressive flow (MADE blocks with batch-norm flows and reversals, the default)."""
    return _flows(dev, "flows.maf", ["--flow", "maf"])


def flows_glow(dev):
    """Glow-style flow: batch-norm flows, LU-decomposed invertible linear maps, coupling layers."""
    return _flows(dev, "flows.glow", ["--flow", "glow"])


def _lesions(root: Path, split: str, n: int, seed: int) -> None:
    """An ISIC-style split as its loader reads it: `<split>/ISIC_<id>.jpg` RGB images (skin-coloured with a darker
    irregular blob) and `<split>_GT/ISIC_<id>_segmentation.png` binary masks of the blob."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(seed)
    (root / split).mkdir(parents=True, exist_ok=True)
    (root / f"{split}_GT").mkdir(parents=True, exist_ok=True)
    yy, xx = np.mgrid[:288, :288] / 288
    for i in range(n):
        cy, cx = rng.uniform(0.3, 0.7, 2)
        r = rng.uniform(0.12, 0.25)
        theta = np.arctan2(yy - cy, xx - cx)
        mask = (yy - cy) ** 2 + (xx - cx) ** 2 < (r * (1 + 0.2 * np.sin(3 * theta + rng.uniform(0, 6)))) ** 2
        img = np.stack([np.full_like(yy, c) for c in rng.uniform([0.75, 0.55, 0.45], [0.95, 0.7, 0.6])], -1)
        img[mask] *= rng.uniform(0.3, 0.6)
        img = np.clip(img + rng.normal(0, 0.04, img.shape), 0, 1)
        Image.fromarray((img * 255).astype(np.uint8)).save(root / split / f"ISIC_{seed:02d}{i:05d}.jpg")
        Image.fromarray(mask.astype(np.uint8) * 255).save(
            root / f"{split}_GT" / f"ISIC_{seed:02d}{i:05d}_segmentation.png")


def _unet(dev, name: str, extra: list):
    """LeeJunHyun/Image_Segmentation's main.py as is (`--batch_size 4 --num_workers 0`, the model, result and
    data folders in a temporary folder; it draws its own epochs, learning rate and augmentation) on 8 synthetic
    training and 4 validation images: the window spans the 2nd to the 12th `backward`, five epochs of two steps each
    with the per-step metrics, and the validation pass after each epoch (metrics read with `float`, the best model
    saved)."""
    root = _need_repo("unet")
    tmp = Path(hc._tmp())
    _lesions(tmp / "data", "train", 8, 1)
    _lesions(tmp / "data", "valid", 4, 2)
    _lesions(tmp / "data", "test", 2, 3)
    argv = ["--batch_size", "4", "--num_workers", "0", "--model_path", str(tmp / "models"),
            "--result_path", str(tmp / "result"), "--train_path", str(tmp / "data" / "train") + "/",
            "--valid_path", str(tmp / "data" / "valid") + "/", "--test_path", str(tmp / "data" / "test") + "/",
            *extra]

    def window():
        with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 12, stop_script=True):
            hc.run_script(root / "main.py", argv, str(tmp))
    return {"train_window": window}


def unet_unet(dev):
    """The plain U-Net (`--model_type U_Net`)."""
    return _unet(dev, "unet.unet", ["--model_type", "U_Net"])


def unet_attention(dev):
    """The attention U-Net (`--model_type AttU_Net`)."""
    return _unet(dev, "unet.attention", ["--model_type", "AttU_Net"])


MODELS = [
    # name, package, builder
    ("cebra.embeddings", "cebra", cebra_embeddings),
    ("ctgan.synthesis", "ctgan", ctgan_synthesis),
    ("d3rlpy.rl", "d3rlpy", d3rlpy_rl),
    ("foolbox.attacks", "foolbox", foolbox_attacks),
    ("hummingbird.models", "hummingbird", hummingbird_models),
    ("torchdrift.detect", "torchdrift", torchdrift_detect),
    ("libauc.auc", "libauc", libauc_auc),
    ("kmeans_pytorch.cluster", "kmeans_pytorch", kmeans_pytorch_cluster),
    ("flows.maf", "flows", flows_maf),
    ("flows.glow", "flows", flows_glow),
    ("unet.unet", "unet", unet_unet),
    ("unet.attention", "unet", unet_attention),
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
    print(f"wheels in {WHEELS_DIR}: " + ", ".join(sorted(p.name for p in WHEELS_DIR.glob("*.whl"))))
    print(f"code in {CODE_DIR}: " + ", ".join(sorted(p.name for p in CODE_DIR.glob("*.py"))))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        prepare()
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh16", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
