"""Record the syncs of a twentieth set, `fresh19` (a sealed test set): libraries and training code nobody here read.

`fresh19` is recorded the same way as `fresh9` to `fresh17` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; for the trainers that take numpy arrays or CPU
loaders, the library's own device argument): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh19): torch_rechub (recommender systems:
  DeepFM, DCN, WideDeep, DIN, MMOE, ESMM and the two-tower DSSM trained by its CTR, multi-task and matching
  trainers), pythae (variational autoencoders: VAE, beta-VAE, IWAE, WAE-MMD, VQ-VAE, RHVAE, VAMP fitted by its
  `TrainingPipeline`, their samplers), tensordict (nested tensor containers: rollouts indexed, masked, stacked,
  memory-mapped; a tensorclass; a TensorDict policy trained PPO-style), rsl_rl (rsl-rl-lib: on-policy RL for
  robotics, its `OnPolicyRunner` with PPO and random network distillation on a vectorised task of ours),
  pytorch_pfn_extras (training utilities: `ExtensionsManager` with reporting extensions, the engine's trainer and
  evaluator, lazy modules), torch_stoi (speech intelligibility: STOI / ESTOI as a loss), mambapy (selective state
  spaces: Mamba, the bidirectional VMamba, the Jamba mixture of experts) and torchtuples (numpy-fed training of
  MLPs and tuple-input networks, pycox's training layer);
  + pydantic, pydantic-core, annotated-types, typing-inspection, cloudpickle (pythae's), pyvers (tensordict's),
  GitPython, gitdb, smmap (rsl_rl's), pystoi (torch_stoi's), and pyhocon (graphSAGE's config; a source
  distribution, built into a wheel by `prepare`). Their other needs (numpy, scipy, scikit-learn, pandas, tqdm,
  imageio, matplotlib, tensorboard, onnx, torchaudio, torchvision) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh19/repos/<name>:
  Thinklab-SJTU/Crossformer (main_crossformer.py as is, as its README runs custom data, on a synthetic hourly
  multivariate series written as the csv it reads; its early stopping reads `np.Inf`, gone from numpy 2, which the
  collector gives back) and twjiang/graphSAGE-pytorch (src/main.py as is, supervised and unsupervised GraphSAGE on
  a synthetic citation graph written in Cora's layout, its config pointing at it; its neighbour sampling calls
  `random.sample` on sets, which Python 3.11 took away and the collector gives back as 3.10 did it).

    python benchmarks/fresh19_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh19_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh19 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh19 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import os
import random
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
BENCH_DIR = ac.REPO / ".bench" / "fresh19"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh19", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh19/repos/<name>)
REPOS = {
    "crossformer": ("Thinklab-SJTU/Crossformer", "c10c8eadb153d1dd9798250967747ca3ebb81383",
                    ["main_crossformer.py", "cross_exp/__init__.py", "cross_exp/exp_basic.py",
                     "cross_exp/exp_crossformer.py", "cross_models/attn.py", "cross_models/cross_decoder.py",
                     "cross_models/cross_embed.py", "cross_models/cross_encoder.py", "cross_models/cross_former.py",
                     "data/__init__.py", "data/data_loader.py", "utils/__init__.py", "utils/metrics.py",
                     "utils/tools.py"]),
    "graphsage": ("twjiang/graphSAGE-pytorch", "e9a05cafec31b51a23679dbe7fa2baeea95ee35d",
                  ["src/main.py", "src/dataCenter.py", "src/models.py", "src/utils.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["torch_rechub==0.9.0", "pythae==0.1.2", "pydantic==2.14.4", "pydantic_core==2.50.5",
          "annotated-types==0.8.0", "typing-inspection==0.4.5", "cloudpickle==3.1.3", "tensordict==0.15.3",
          "pyvers==0.2.3", "rsl-rl-lib==5.5.1", "GitPython==3.2.1", "gitdb==4.0.12", "smmap==5.0.3",
          "pytorch-pfn-extras==0.9.0", "torch-stoi==0.2.3", "pystoi==0.4.1", "mambapy==1.2.0", "torchtuples==0.2.2"]
# needs published as source distributions only, built into wheels by `prepare` (pyhocon: graphSAGE's config)
SDISTS = ["pyhocon==0.3.63"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"torch_rechub": "torch-rechub", "pythae": "pythae", "tensordict": "tensordict", "rsl_rl_lib": "rsl-rl-lib",
         "pytorch_pfn_extras": "pytorch-pfn-extras", "torch_stoi": "torch-stoi", "mambapy": "mambapy",
         "torchtuples": "torchtuples", "pystoi": "pystoi", "pyhocon": "pyhocon", "numpy": "numpy", "scipy": "scipy",
         "scikit_learn": "scikit-learn", "pandas": "pandas", "pydantic": "pydantic", "torchvision": "torchvision",
         "torchaudio": "torchaudio"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh19/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh19_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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

# -- torch_rechub: the README's recipes on a synthetic click log with `device=`: ranking models (DeepFM, DCN,
#    WideDeep, DIN with a behaviour sequence) trained by `CTRTrainer` from `DataGenerator` loaders, `evaluate`
#    (AUC), `predict`; multi-task models (MMOE, ESMM) by `MTLTrainer`; the two-tower DSSM trained point-wise by
#    `MatchTrainer` from `MatchDataGenerator`, `inference_embedding` of users and items, top-k recall -----------

def rechub_recsys(dev):
    import numpy as np
    from torch_rechub.basic.features import DenseFeature, SequenceFeature, SparseFeature
    from torch_rechub.models.matching import DSSM
    from torch_rechub.models.multi_task import ESMM, MMOE
    from torch_rechub.models.ranking import DCN, DIN, DeepFM, WideDeep
    from torch_rechub.trainers import CTRTrainer, MatchTrainer, MTLTrainer
    from torch_rechub.utils.data import DataGenerator, MatchDataGenerator

    rng = np.random.default_rng(0)
    n, n_items, n_users, hist_len = 2400, 60, 120, 8
    vocab = {"user_id": n_users, "item_id": n_items, "cate": 12, "city": 20, "device": 4}
    x = {"user_id": rng.integers(1, n_users, n), "item_id": rng.integers(1, n_items, n),
         "cate": rng.integers(1, 12, n), "city": rng.integers(1, 20, n), "device": rng.integers(1, 4, n)}
    x.update({f"d{j}": rng.random(n).astype(np.float32) for j in range(3)})
    x["hist_item_id"] = rng.integers(0, n_items, (n, hist_len))
    logit = 1.5 * (x["item_id"] % 7 == x["user_id"] % 7) + 2 * x["d0"] - 1.2 + 0.8 * (x["cate"] < 4)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(np.float32)
    y2 = np.stack([y, (rng.random(n) < 0.5 * y + 0.1).astype(np.float32)], 1)
    sparse = [SparseFeature(k, vocab_size=v, embed_dim=8) for k, v in vocab.items()]
    dense = [DenseFeature(f"d{j}") for j in range(3)]
    tmp = hc._tmp()
    x_flat = {k: v for k, v in x.items() if k != "hist_item_id"}

    def ranking():
        tr, va, te = DataGenerator(x_flat, y).generate_dataloader(split_ratio=[0.7, 0.1], batch_size=256)
        models = {"deepfm": DeepFM(deep_features=dense + sparse, fm_features=sparse,
                                   mlp_params={"dims": [64, 32], "dropout": 0.2, "activation": "relu"}),
                  "dcn": DCN(features=dense + sparse, n_cross_layers=2, mlp_params={"dims": [64, 32]}),
                  "widedeep": WideDeep(wide_features=dense, deep_features=sparse,
                                       mlp_params={"dims": [64, 32], "dropout": 0.2, "activation": "relu"})}
        res = {}
        for name, model in models.items():
            trainer = CTRTrainer(model, optimizer_params={"lr": 1e-3, "weight_decay": 1e-5}, n_epoch=2,
                                 earlystop_patience=2, device=str(dev), model_path=tmp)
            trainer.fit(tr, va)
            auc = trainer.evaluate(trainer.model, te)
            preds = trainer.predict(trainer.model, te)
            res[name] = (round(float(auc), 3), len(preds))
        print(f"ranking {res}")

    def din():
        hist = [SequenceFeature("hist_item_id", vocab_size=n_items, embed_dim=8, pooling="concat",
                                shared_with="item_id")]
        target = [SparseFeature("item_id", vocab_size=n_items, embed_dim=8)]
        feats = [f for f in sparse if f.name != "item_id"]
        model = DIN(features=feats, history_features=hist, target_features=target,
                    mlp_params={"dims": [64, 32]}, attention_mlp_params={"dims": [32, 16]})
        tr, va, te = DataGenerator(x, y).generate_dataloader(split_ratio=[0.7, 0.1], batch_size=256)
        trainer = CTRTrainer(model, n_epoch=2, earlystop_patience=2, device=str(dev), model_path=tmp)
        trainer.fit(tr, va)
        print(f"din auc {trainer.evaluate(trainer.model, te):.3f}")

    def multitask():
        tr, va, te = DataGenerator(x_flat, y2).generate_dataloader(split_ratio=[0.7, 0.1], batch_size=256)
        mmoe = MMOE(dense + sparse, ["classification", "classification"], 4, expert_params={"dims": [32, 16]},
                    tower_params_list=[{"dims": [16, 8]}, {"dims": [16, 8]}])
        t1 = MTLTrainer(mmoe, task_types=["classification", "classification"], n_epoch=2, earlystop_patience=2,
                        device=str(dev), model_path=tmp)
        t1.fit(tr, va)
        users = [f for f in sparse if f.name in ("user_id", "city", "device")]
        items = [f for f in sparse if f.name in ("item_id", "cate")]
        esmm = ESMM(users, items, cvr_params={"dims": [32, 16]}, ctr_params={"dims": [32, 16]})
        t2 = MTLTrainer(esmm, task_types=["classification", "classification"], n_epoch=2, earlystop_patience=2,
                        adaptive_params={"method": "uwl"}, device=str(dev), model_path=tmp)
        t2.fit(tr, va)
        print(f"mmoe {t1.evaluate(t1.model, te)}, esmm {t2.evaluate(t2.model, te)}")

    def matching():
        user_feats = [SparseFeature(k, vocab_size=vocab[k], embed_dim=16) for k in ("user_id", "city", "device")]
        user_feats.append(SequenceFeature("hist_item_id", vocab_size=n_items, embed_dim=16, pooling="mean",
                                          shared_with="item_id"))
        item_feats = [SparseFeature(k, vocab_size=vocab[k], embed_dim=16) for k in ("item_id", "cate")]
        model = DSSM(user_feats, item_feats, temperature=0.05, user_params={"dims": [64, 32], "activation": "prelu"},
                     item_params={"dims": [64, 32], "activation": "prelu"})
        item_cate = rng.integers(1, 12, n_items)
        xm = dict(x)
        xm["cate"] = item_cate[x["item_id"]]
        test_user = {k: xm[k][:200] for k in ("user_id", "city", "device", "hist_item_id")}
        all_item = {"item_id": np.arange(1, n_items), "cate": item_cate[1:]}
        train_dl, test_dl, item_dl = MatchDataGenerator(xm, y).generate_dataloader(test_user, all_item,
                                                                                    batch_size=256, num_workers=0)
        trainer = MatchTrainer(model, mode=0, n_epoch=2, device=str(dev), model_path=tmp)
        trainer.fit(train_dl)
        u = trainer.inference_embedding(model=model, mode="user", data_loader=test_dl, model_path=tmp)
        it = trainer.inference_embedding(model=model, mode="item", data_loader=item_dl, model_path=tmp)
        top = (u @ it.T).topk(10, dim=1).indices
        print(f"dssm users {tuple(u.shape)} items {tuple(it.shape)}, top-10 {tuple(top.shape)}")
    return {"ranking": ranking, "din": din, "multitask": multitask, "matching": matching}


# -- pythae: the README's `TrainingPipeline` (a `BaseTrainerConfig`; the trainer takes the GPU when there is one,
#    `no_cuda` on the CPU) fitting VAE, beta-VAE, IWAE, WAE-MMD, VQ-VAE, RHVAE and VAMP models (their default
#    networks for a given `input_dim`) on synthetic 1 x 16 x 16 shapes; then on the device: `reconstruct`,
#    `embed`, `interpolate`, `predict`, `get_nll`; the samplers (`NormalSampler`, `GaussianMixtureSampler`
#    fitted on the training data, `RHVAESampler`, `VAMPSampler`) ------------------------------------------------

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


def pythae_vae(dev):
    from pythae import models as pm
    from pythae import samplers as ps
    from pythae.pipelines import TrainingPipeline
    from pythae.trainers import BaseTrainerConfig

    data = _shapes(320)
    train, val = data[:256], data[256:]
    tmp = hc._tmp()

    def fit(model, epochs=2):
        cfg = BaseTrainerConfig(output_dir=tmp, learning_rate=1e-3, per_device_train_batch_size=64,
                                per_device_eval_batch_size=64, num_epochs=epochs, no_cuda=dev.type != "cuda")
        TrainingPipeline(training_config=cfg, model=model)(train_data=train, eval_data=val)
        return model.to(dev).eval()

    x = val[:16].to(dev)

    def vaes():
        res = {}
        for name, model in (("vae", pm.VAE(pm.VAEConfig(input_dim=(1, 16, 16), latent_dim=4))),
                            ("beta", pm.BetaVAE(pm.BetaVAEConfig(input_dim=(1, 16, 16), latent_dim=4, beta=2.0))),
                            ("iwae", pm.IWAE(pm.IWAEConfig(input_dim=(1, 16, 16), latent_dim=4, number_samples=3))),
                            ("wae", pm.WAE_MMD(pm.WAE_MMD_Config(input_dim=(1, 16, 16), latent_dim=4,
                                                                 kernel_choice="imq", reg_weight=3.0)))):
            m = fit(model)
            with torch.no_grad():
                rec = m.reconstruct(x)
                z = m.embed(x)
                path = m.interpolate(x[:4], x[4:8], granularity=5)
            res[name] = (round(F.mse_loss(rec, x).item(), 4), tuple(z.shape), tuple(path.shape))
            if name == "vae":
                nll = m.get_nll(x, n_samples=20, batch_size=10)
                normal = ps.NormalSampler(model=m).sample(num_samples=16)
                gmm = ps.GaussianMixtureSampler(model=m, sampler_config=ps.GaussianMixtureSamplerConfig(n_components=4))
                gmm.fit(train)
                gen = gmm.sample(num_samples=16)
                res["vae"] += (round(float(nll), 2), tuple(normal.shape), tuple(gen.shape))
        print(f"vaes {res}")

    def vqvae():
        m = fit(pm.VQVAE(pm.VQVAEConfig(input_dim=(1, 16, 16), latent_dim=4, num_embeddings=32, use_ema=True)))
        with torch.no_grad():
            out = m(dict(data=x))
            rec = m.reconstruct(x)
        print(f"vqvae loss {out.loss.item():.4f}, reconstruction {F.mse_loss(rec, x).item():.4f}")

    def riemannian():
        m = fit(pm.RHVAE(pm.RHVAEConfig(input_dim=(1, 16, 16), latent_dim=2, n_lf=2, eps_lf=0.01, beta_zero=0.3,
                                         temperature=1.5, regularization=0.001)))
        gen = ps.RHVAESampler(model=m, sampler_config=ps.RHVAESamplerConfig(n_lf=2, mcmc_steps_nbr=20)).sample(8)
        vamp = fit(pm.VAMP(pm.VAMPConfig(input_dim=(1, 16, 16), latent_dim=4, number_components=10)))
        gen2 = ps.VAMPSampler(model=vamp).sample(num_samples=8)
        with torch.no_grad():
            pred = vamp.predict(x)
        print(f"rhvae samples {tuple(gen.shape)}, vamp samples {tuple(gen2.shape)}, predict {sorted(pred.keys())}")
    return {"vaes": vaes, "vqvae": vqvae, "riemannian": riemannian}


# -- tensordict: the README's and tutorials' use with `device=` / `.to(dev)`: a batch of rollouts as a nested
#    `TensorDict` made on the device, indexing, masking (`td[mask]`), `split`, `unbind`, `stack`/`cat`,
#    `apply`, `update`, `where`, `flatten_keys`, comparisons reduced by `all()`/`any()`, `memmap` and `load_memmap`,
#    `pad_sequence`; a `@tensorclass` dataset; a `TensorDictSequential` policy (`TensorDictModule`,
#    `NormalParamExtractor`, `ProbabilisticTensorDictModule` with a `TanhNormal`-like normal, log-probs) and a
#    critic trained by a clipped PPO-style loss over minibatches drawn from the TensorDict -------------------

def tensordict_rollouts(dev):
    from tensordict import TensorDict, lazy_stack, load_memmap, pad_sequence, tensorclass
    from tensordict.nn import (
        NormalParamExtractor,
        ProbabilisticTensorDictModule,
        ProbabilisticTensorDictSequential,
        TensorDictModule,
        TensorDictSequential,
    )

    g = torch.Generator().manual_seed(0)
    n_env, T, obs_dim, act_dim = 16, 32, 8, 2

    def rollout():
        td = TensorDict({"obs": torch.randn(n_env, T, obs_dim, generator=g),
                         "action": torch.randn(n_env, T, act_dim, generator=g),
                         "next": {"obs": torch.randn(n_env, T, obs_dim, generator=g),
                                  "reward": torch.randn(n_env, T, 1, generator=g),
                                  "done": torch.rand(n_env, T, 1, generator=g) < 0.05}},
                        batch_size=[n_env, T])
        return td.to(dev)

    def containers():
        td = rollout()
        done = td["next", "done"].squeeze(-1)
        finished = td[done]
        first, second = td.split([16, 16], dim=1)
        steps = td.unbind(1)
        back = torch.stack(steps, 1)
        same = (back == td).all()
        cat = torch.cat([first, second], dim=1)
        td2 = td.apply(lambda x: x * 2 if x.dtype.is_floating_point else x)
        td2.update({"value": torch.zeros(n_env, T, 1, device=dev)})
        flat = td2.flatten_keys(".")
        clipped = td.where(td["next", "reward"] > 0, td.clone().apply(torch.zeros_like))
        any_pos = (td["next", "reward"] > 2).any()
        lazy = lazy_stack([td[0], td[1]], 0)
        print(f"{finished.batch_size} finished steps, split {first.shape}/{second.shape}, unbind {len(steps)}, "
              f"restacked equal {bool(same)}, cat {tuple(cat.batch_size)}, flat keys {len(flat.keys())}, "
              f"where {tuple(clipped.batch_size)}, any {bool(any_pos)}, lazy {tuple(lazy.batch_size)}")

    def storage():
        tmp = hc._tmp()
        td = rollout()
        td.memmap(tmp)
        back = load_memmap(tmp).to(dev)
        eq = (back == td).all()
        episodes = [td[i, : int(n)] for i, n in enumerate(torch.randint(5, T, (4,), generator=g).tolist())]
        padded = pad_sequence(episodes, return_mask=True)
        mean_r = td["next", "reward"].mean()
        d = td.to_dict()
        td3 = TensorDict.from_dict(d, device=dev)
        print(f"memmap round trip {bool(eq)}, padded {tuple(padded.batch_size)}, mean reward {mean_r.item():.3f}, "
              f"from_dict {tuple(td3.batch_size)}")

    @tensorclass
    class Transition:
        obs: torch.Tensor
        action: torch.Tensor
        reward: torch.Tensor

    def dataset():
        data = Transition(obs=torch.randn(512, obs_dim, generator=g), action=torch.randn(512, act_dim, generator=g),
                          reward=torch.randn(512, 1, generator=g), batch_size=[512]).to(dev)
        best = data[data.reward.squeeze(-1) > 1.0]
        chunks = [c.reward.sum() for c in data.split(128)]
        stacked = torch.stack([data[:4], data[4:8]])
        print(f"tensorclass {data.batch_size}, best {best.batch_size}, chunk sums {torch.stack(chunks).tolist()}, "
              f"stacked {stacked.batch_size}")

    actor_net = nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 2 * act_dim), NormalParamExtractor())
    policy = ProbabilisticTensorDictSequential(
        TensorDictModule(actor_net, in_keys=["obs"], out_keys=["loc", "scale"]),
        ProbabilisticTensorDictModule(in_keys=["loc", "scale"], out_keys=["action"],
                                      distribution_class=torch.distributions.Normal, return_log_prob=True)).to(dev)
    critic = TensorDictModule(nn.Sequential(nn.Linear(obs_dim, 64), nn.Tanh(), nn.Linear(64, 1)),
                              in_keys=["obs"], out_keys=["value"]).to(dev)
    model = TensorDictSequential(policy, critic)

    def ppo():
        opt = torch.optim.Adam(list(policy.parameters()) + list(critic.parameters()), lr=3e-4)
        td = rollout().reshape(-1)
        with torch.no_grad():
            model(td)
            td["old_log_prob"] = td["action_log_prob"] if "action_log_prob" in td.keys() else td["sample_log_prob"]
            td["advantage"] = td["next", "reward"] - td["value"]
        losses = []
        for _ in range(3):
            for idx in torch.randperm(td.shape[0], device=dev).split(128):
                mb = td[idx].clone()
                dist = policy.get_dist(mb)
                lp = dist.log_prob(mb["action"]).sum(-1, keepdim=True)
                ratio = (lp - mb["old_log_prob"].sum(-1, keepdim=True) if mb["old_log_prob"].dim() > 1
                         else lp - mb["old_log_prob"]).exp()
                adv = mb["advantage"]
                pg = -torch.min(ratio * adv, ratio.clamp(0.8, 1.2) * adv).mean()
                vl = F.mse_loss(critic(mb)["value"], mb["next", "reward"])
                loss = pg + 0.5 * vl
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.detach())
        print(f"ppo losses {torch.stack(losses)[-3:].tolist()}")
    return {"containers": containers, "storage": storage, "dataset": dataset, "ppo": ppo}


# -- rsl_rl (rsl-rl-lib): the documented `OnPolicyRunner(env, train_cfg, log_dir, device=...)` on a `VecEnv` of
#    our own, made on the device: 256 point masses pushed towards random goals, observations as a TensorDict
#    with `policy` and `privileged` groups, time-outs in `extras`, a `log` entry; PPO with MLP actor and critic
#    (`GaussianDistribution`, adaptive learning-rate schedule, clipped value loss), then with random network
#    distillation (`rnd_cfg`) and the fixed schedule; `get_inference_policy` rolled out; `save` / `load` -------

class _PointMassEnv:
    """A vectorised 2-D point-mass task on the device: the state is position and velocity, the action a force,
    the reward the negative distance to a per-environment goal; episodes time out after `max_episode_length`."""

    def __init__(self, num_envs, dev, max_episode_length=40):
        from tensordict import TensorDict
        self._td = TensorDict
        self.num_envs, self.num_actions, self.device = num_envs, 2, dev
        self.max_episode_length, self.cfg = max_episode_length, {"name": "point_mass"}
        self.step_dt, self.unwrapped = 0.1, self  # RND scales its reward weight by the wrapped task's step
        self.episode_length_buf = torch.zeros(num_envs, dtype=torch.long, device=dev)
        self.pos = torch.zeros(num_envs, 2, device=dev)
        self.vel = torch.zeros(num_envs, 2, device=dev)
        self.goal = torch.rand(num_envs, 2, device=dev) * 4 - 2

    def get_observations(self):
        base = torch.cat([self.pos, self.vel, self.goal - self.pos], -1)
        return self._td({"policy": base, "privileged": torch.cat([base, self.goal], -1)},
                        batch_size=[self.num_envs], device=self.device)

    def step(self, actions):
        self.vel = 0.9 * self.vel + 0.1 * actions.clamp(-1, 1)
        self.pos = self.pos + 0.1 * self.vel
        dist = (self.goal - self.pos).norm(dim=-1)
        reward = -dist - 0.01 * actions.pow(2).sum(-1)
        self.episode_length_buf += 1
        time_out = self.episode_length_buf >= self.max_episode_length
        reached = dist < 0.1
        done = time_out | reached
        reset = done.nonzero().squeeze(-1)
        self.pos[reset] = 0.0
        self.vel[reset] = 0.0
        self.goal[reset] = torch.rand(len(reset), 2, device=self.device) * 4 - 2
        self.episode_length_buf[reset] = 0
        extras = {"time_outs": time_out, "log": {"/distance": dist.mean()}}
        return self.get_observations(), reward, done.long(), extras


def rsl_rl_ppo(dev):
    from rsl_rl.runners import OnPolicyRunner

    def cfg(**alg):
        return {"num_steps_per_env": 16, "save_interval": 50, "logger": "tensorboard",
                "obs_groups": {"actor": ["policy"], "critic": ["policy", "privileged"]},
                "algorithm": {"class_name": "PPO", "learning_rate": 1e-3, "num_learning_epochs": 3,
                              "num_mini_batches": 4, "schedule": "adaptive", "value_loss_coef": 1.0,
                              "clip_param": 0.2, "use_clipped_value_loss": True, "desired_kl": 0.01,
                              "entropy_coef": 0.005, "gamma": 0.99, "lam": 0.95, "max_grad_norm": 1.0, **alg},
                "actor": {"class_name": "MLPModel", "hidden_dims": [64, 64], "activation": "elu",
                          "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 1.0}},
                "critic": {"class_name": "MLPModel", "hidden_dims": [64, 64], "activation": "elu"}}

    def ppo():
        env = _PointMassEnv(256, dev)
        log_dir = hc._tmp()
        runner = OnPolicyRunner(env, cfg(), log_dir=log_dir, device=str(dev))
        runner.learn(num_learning_iterations=3, init_at_random_ep_len=True)
        policy = runner.get_inference_policy(device=str(dev))
        obs = env.get_observations()
        total = torch.zeros(env.num_envs, device=dev)
        with torch.inference_mode():
            for _ in range(20):
                obs, rew, done, _ = env.step(policy(obs))
                total += rew
        path = os.path.join(log_dir, "model.pt")
        runner.save(path)
        runner.load(path)
        print(f"ppo return {total.mean().item():.2f}")

    def rnd():
        env = _PointMassEnv(128, dev)
        c = cfg(schedule="fixed", rnd_cfg={"weight": 0.5, "weight_schedule": None, "reward_normalization": True,
                                           "learning_rate": 1e-3, "num_outputs": 4, "predictor_hidden_dims": [32],
                                           "target_hidden_dims": [32]})
        c["obs_groups"]["rnd_state"] = ["policy"]
        runner = OnPolicyRunner(env, c, log_dir=hc._tmp(), device=str(dev))
        runner.learn(num_learning_iterations=3)
        print(f"rnd iterations {runner.current_learning_iteration + 1}")
    return {"ppo": ppo, "rnd": rnd}


# -- pytorch_pfn_extras: the README's manual loop under an `ExtensionsManager` (`run_iteration`, `ppe.to`,
#    `reporting.report` of device tensors, `LogReport`, `PrintReport`, `ParameterStatistics`, `observe_lr`,
#    `MicroAverage`, `FailOnNonNumber`, an `Evaluator` extension with its `eval_func`, `MinValue` / `MaxValue`,
#    `snapshot`); the engine API (`create_trainer` / `create_evaluator` with `device=`, `AccuracyMetric`,
#    `LRScheduler`), lazy modules (`nn.LazyLinear`, `nn.LazyConv2d`), `nn.ExtendedSequential.repeat`,
#    `nn.Ensure` ------------------------------------------------------------------------------------------------

def _patterns(n, seed=0, size=16, k=4):
    """n 1-channel images of k classes (stripes of k orientations / frequencies plus noise), CPU tensors."""
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.arange(size).float(), torch.arange(size).float(), indexing="ij")
    lab = torch.randint(0, k, (n,), generator=g)
    base = torch.stack([torch.sin(xx * (1 + c) * 0.6) if c % 2 else torch.sin(yy * (1 + c) * 0.5) for c in range(k)])
    return (base[lab] + 0.5 * torch.randn(n, size, size, generator=g)).unsqueeze(1), lab


def ppe_training(dev):
    import pytorch_pfn_extras as ppe
    from pytorch_pfn_extras.training import extensions as E

    x, t = _patterns(640)
    ds = torch.utils.data.TensorDataset(x[:512], t[:512])
    train_loader = torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True)
    val_loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x[512:], t[512:]), batch_size=64)

    def net():
        return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                             nn.Linear(8 * 8 * 8, 32), nn.ReLU(), nn.Linear(32, 4))

    def manager():
        model = ppe.to(net(), dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

        def eval_func(xb, tb):
            xb, tb = xb.to(dev), tb.to(dev)
            out = model(xb)
            ppe.reporting.report({"val/loss": F.cross_entropy(out, tb),
                                  "val/accuracy": (out.argmax(1) == tb).float().mean()})

        exts = [E.LogReport(trigger=(1, "epoch")), E.observe_lr(optimizer=opt),
                E.ParameterStatistics(model, prefix="model"), E.FailOnNonNumber(),
                E.MicroAverage("train/correct", "train/total", "train/accuracy"),
                E.Evaluator(val_loader, model, eval_func=eval_func),
                E.MinValue("val/loss", trigger=(1, "epoch")), E.MaxValue("val/accuracy", trigger=(1, "epoch")),
                E.PrintReport(["epoch", "iteration", "train/loss", "train/accuracy", "val/loss", "val/accuracy", "lr"]),
                E.snapshot(filename="snap_iter_{.iteration}")]
        mgr = ppe.training.ExtensionsManager(model, opt, 3, iters_per_epoch=len(train_loader), extensions=exts,
                                             out_dir=hc._tmp())
        while not mgr.stop_trigger:
            for xb, tb in train_loader:
                with mgr.run_iteration():
                    xb, tb = xb.to(dev), tb.to(dev)
                    out = model(xb)
                    loss = F.cross_entropy(out, tb)
                    ppe.reporting.report({"train/loss": loss, "train/correct": (out.argmax(1) == tb).sum(),
                                          "train/total": tb.shape[0]})
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
        print(f"manager iterations {mgr.iteration}, epochs {mgr.epoch}")

    class WithLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net()

        def forward(self, x, t):
            out = self.net(x)
            return {"out": out, "pred": out.argmax(1), "loss": F.cross_entropy(out, t)}

    def engine():
        model = ppe.to(WithLoss(), dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        evaluator = ppe.engine.create_evaluator(model, device=dev,
                                                metrics=[ppe.training.metrics.AccuracyMetric("t", "pred")])
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        trainer = ppe.engine.create_trainer(model, opt, 3, device=dev, evaluator=evaluator, out_dir=hc._tmp(),
                                            extensions=[E.LogReport(), E.LRScheduler(sched, trigger=(1, "epoch")),
                                                        E.observe_lr(optimizer=opt)])
        def as_dict(batch):
            return {"x": torch.stack([b[0] for b in batch]), "t": torch.stack([b[1] for b in batch])}
        trainer.run(torch.utils.data.DataLoader(ds, batch_size=64, shuffle=True, collate_fn=as_dict),
                    torch.utils.data.DataLoader(val_loader.dataset, batch_size=64, collate_fn=as_dict))
        print(f"engine epochs {trainer.epoch}, log {len(trainer.manager.observation)} observations")

    def lazy():
        model = ppe.nn.ExtendedSequential(ppe.nn.LazyConv2d(None, 8, 3, padding=1), nn.ReLU(), nn.Flatten(),
                                          ppe.nn.LazyLinear(None, 32), nn.ReLU(), ppe.nn.LazyLinear(None, 4))
        model = ppe.to(model, dev)
        model(x[:2].to(dev))
        head = ppe.nn.ExtendedSequential(nn.Linear(4, 4), nn.ReLU()).repeat(3).to(dev)
        check = ppe.nn.Ensure(shape=(None, 4), dtype=torch.float32)
        opt = torch.optim.Adam(list(model.parameters()) + list(head.parameters()), lr=1e-3)

        def loss_of(i):
            xb, tb = x[64 * i: 64 * (i + 1)].to(dev), t[64 * i: 64 * (i + 1)].to(dev)
            return F.cross_entropy(check(head(model(xb))), tb)
        loss = None
        for i in range(4):
            loss = loss_of(i)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"lazy model loss {loss.item():.3f}")
    return {"manager": manager, "engine": engine, "lazy": lazy}


# -- torch_stoi: the README's `NegSTOILoss` moved to the device on speech-like signals made there (voiced
#    harmonic bursts with pauses, plus noise): STOI and extended STOI, with and without its VAD, at 16 kHz and at
#    8 kHz (resampled to its 10 kHz), shapes (time,), (batch, time) and (batch, n_src, time); compared with
#    pystoi on one pair (the README's advice for evaluation); a small masking denoiser trained on the loss ----

def _speechlike(n, sr, seconds=1.0, seed=0):
    """n speech-like signals (CPU): harmonic stacks with a wandering pitch, switched on and off every ~150 ms."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(int(sr * seconds)) / sr
    out = []
    for _ in range(n):
        f0 = 110 + 80 * torch.rand(1, generator=g) + 20 * torch.sin(2 * torch.pi * 3 * t)
        phase = 2 * torch.pi * torch.cumsum(f0 / sr, 0)
        voiced = sum(torch.sin(k * phase) / k for k in range(1, 6))
        gate = (torch.sin(2 * torch.pi * (3 + torch.rand(1, generator=g)) * t) > -0.3).float()
        out.append(voiced * gate)
    return torch.stack(out)


def stoi_loss(dev):
    import numpy as np
    from pystoi import stoi as np_stoi
    from torch_stoi import NegSTOILoss

    g = torch.Generator().manual_seed(1)
    clean16 = _speechlike(6, 16000).to(dev)
    noisy16 = clean16 + 0.4 * torch.randn(clean16.shape, generator=g).to(dev)
    clean8 = _speechlike(4, 8000, seed=2).to(dev)
    noisy8 = clean8 + 0.3 * torch.randn(clean8.shape, generator=g).to(dev)

    def metric():
        res = {}
        for name, kw in (("stoi", {}), ("estoi", {"extended": True}), ("novad", {"use_vad": False}),
                         ("estoi_novad", {"extended": True, "use_vad": False})):
            loss = NegSTOILoss(sample_rate=16000, **kw).to(dev)
            with torch.no_grad():
                res[name] = [round(v, 3) for v in (-loss(noisy16, clean16)).tolist()]
        loss8 = NegSTOILoss(sample_rate=8000).to(dev)
        with torch.no_grad():
            one = loss8(noisy8[0], clean8[0])
            multi = loss8(noisy8.view(2, 2, -1), clean8.view(2, 2, -1))
        ref = np_stoi(clean16[0].cpu().numpy(), noisy16[0].cpu().numpy(), 16000)
        print(f"stoi {res}; 8 kHz one {one.tolist()} multi {tuple(multi.shape)}; pystoi {float(np.round(ref, 3))}")

    net = nn.Sequential(nn.Conv1d(1, 16, 63, padding=31), nn.ReLU(), nn.Conv1d(16, 1, 63, padding=31),
                        nn.Sigmoid()).to(dev)
    loss_func = NegSTOILoss(sample_rate=16000, extended=True).to(dev)

    def train():
        def loss_of(i):
            mask = net(noisy16.unsqueeze(1)).squeeze(1)
            return loss_func(mask * noisy16, clean16).mean()
        loss = _fit(net.parameters(), 5, loss_of)
        print(f"denoiser -ESTOI {loss.item():.3f}")
    return {"metric": metric, "train": train}


# -- mambapy: the README's `Mamba(MambaConfig(...))` moved to the device: a selective-state-space sequence
#    model trained to predict a noisy sum of sines (parallel scan, `pscan=True`, and the sequential path), then
#    run token by token with `step` and its caches; the bidirectional `VMamba` of `mambapy.vim` on patch
#    sequences; `JambaLM` (Mamba and attention layers with a sparse mixture of experts) trained as a small
#    language model on a synthetic token stream, with its `load_balancing_loss`, and decoded with `step` ----------

def mambapy_ssm(dev):
    from mambapy.jamba import JambaLM, JambaLMConfig, load_balancing_loss
    from mambapy.mamba import Mamba, MambaConfig
    from mambapy.vim import MambaConfig as VimConfig
    from mambapy.vim import VMamba

    g = torch.Generator().manual_seed(0)
    B, L, D = 8, 64, 16
    t = torch.arange(L + 1).float()
    freqs = torch.rand(B, 1, D, generator=g) * 0.5
    series = (torch.sin(t[None, :, None] * freqs + torch.rand(B, 1, D, generator=g) * 6)
              + 0.05 * torch.randn(B, L + 1, D, generator=g)).to(dev)

    def mamba():
        res = {}
        for scan in (True, False):
            model = Mamba(MambaConfig(d_model=D, n_layers=2, pscan=scan)).to(dev)
            head = nn.Linear(D, D).to(dev)
            loss = _fit(list(model.parameters()) + list(head.parameters()), 3,
                        lambda i, model=model, head=head: F.mse_loss(head(model(series[:, :-1])), series[:, 1:]))
            res["pscan" if scan else "sequential"] = round(loss.item(), 4)
        caches = [(None, torch.zeros(B, model.config.d_inner, model.config.d_conv - 1, device=dev))
                  for _ in range(model.config.n_layers)]
        outs = []
        with torch.no_grad():
            for k in range(16):
                y, caches = model.step(series[:, k], caches)
                outs.append(y)
        print(f"mamba losses {res}, stepped {tuple(torch.stack(outs, 1).shape)}")

    def vim():
        imgs = torch.rand(4, 3, 32, 32, generator=g).to(dev)
        patches = imgs.unfold(2, 8, 8).unfold(3, 8, 8).permute(0, 2, 3, 1, 4, 5).reshape(4, 16, 3 * 64)
        embed = nn.Linear(3 * 64, 32).to(dev)
        model = VMamba(VimConfig(d_model=32, n_layers=2, bidirectional=True)).to(dev)
        cls = nn.Linear(32, 3).to(dev)
        labels = torch.tensor([0, 1, 2, 1], device=dev)
        loss = _fit(list(embed.parameters()) + list(model.parameters()) + list(cls.parameters()), 3,
                    lambda i: F.cross_entropy(cls(model(embed(patches)).mean(1)), labels))
        print(f"vmamba loss {loss.item():.3f}")

    def jamba():
        vocab = 64
        cfg = JambaLMConfig(d_model=32, n_layers=4, mlp_size=64, num_attention_heads=4, num_key_value_heads=2,
                            num_experts=4, num_experts_per_tok=2, attn_layer_offset=1, attn_layer_period=2,
                            expert_layer_offset=1, expert_layer_period=2, vocab_size=vocab)
        model = JambaLM(cfg).to(dev)
        pattern = torch.randint(1, vocab, (16,), generator=g)
        stream = pattern.repeat(40)[: 8 * 33].view(8, 33)
        stream = torch.where(torch.rand(stream.shape, generator=g) < 0.1, torch.randint(1, vocab, stream.shape,
                                                                                       generator=g), stream).to(dev)

        def loss_of(i):
            out = model(stream[:, :-1])
            logits, router = out if isinstance(out, tuple) else (out, None)
            loss = F.cross_entropy(logits.reshape(-1, vocab), stream[:, 1:].reshape(-1))
            if router is not None:
                loss = loss + 0.01 * load_balancing_loss(router, cfg.num_experts, cfg.num_experts_per_tok)
            return loss
        loss = _fit(model.parameters(), 3, loss_of)
        print(f"jamba loss {loss.item():.3f}")
    return {"mamba": mamba, "vim": vim, "jamba": jamba}


# -- torchtuples: the README's `Model(net, loss, optimizer, device=...)` fitted on numpy arrays (it moves the
#    batches to the device): an `MLPVanilla` regression with `EarlyStopping`, `ClipGradNorm` and a cosine
#    schedule, a `metrics` dict, `lr_finder`, `predict` of device tensors and numpy, `score_in_batches`; tuple
#    inputs (`tuplefy`) into a `MixedInputMLP` with entity embeddings for categorical columns and a two-headed
#    loss; `fit_dataloader` with `make_dataloader` ---------------------------------------------------------------

def torchtuples_models(dev):
    import numpy as np
    import torchtuples as tt

    rng = np.random.default_rng(0)
    n = 1500
    x_num = rng.standard_normal((n, 6)).astype(np.float32)
    x_cat = np.stack([rng.integers(0, 10, n), rng.integers(0, 4, n)], 1).astype(np.int64)
    y = (np.sin(x_num[:, :1] * 2) + x_num[:, 1:2] ** 2 + 0.3 * (x_cat[:, :1] % 3)
         + 0.1 * rng.standard_normal((n, 1))).astype(np.float32)
    tr, va = slice(0, 1200), slice(1200, n)

    def mae(pred, target):
        return (pred - target).abs().mean()

    def regression():
        net = tt.practical.MLPVanilla(6, [64, 64], 1, batch_norm=True, dropout=0.1)
        model = tt.Model(net, nn.MSELoss(), tt.optim.Adam(0.01), device=dev)
        finder = model.lr_finder(x_num[tr], y[tr], batch_size=128, tolerance=10)
        model.optimizer.set_lr(min(finder.get_best_lr(), 0.05))
        log = model.fit(x_num[tr], y[tr], batch_size=128, epochs=4, verbose=False, metrics={"mae": mae},
                        callbacks=[tt.callbacks.EarlyStopping(patience=3), tt.callbacks.ClipGradNorm(net, 1.0),
                                   tt.callbacks.LRCosineAnnealing()],
                        val_data=(x_num[va], y[va]))
        pred = model.predict(torch.from_numpy(x_num[va]).to(dev))
        pred_np = model.predict(x_num[va], numpy=True)
        score = model.score_in_batches(x_num[va], y[va])
        print(f"regression log {log.to_pandas().iloc[-1].round(3).to_dict()}, predict {tuple(pred.shape)} "
              f"{pred_np.shape}, score {score}")

    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = tt.practical.MixedInputMLP(6, num_embeddings=[10, 4], embedding_dims=[4, 2],
                                                   num_nodes=[64, 32], out_features=3, dropout=0.1)

        def forward(self, x_n, x_c):
            out = self.body(x_n, x_c)
            return out[:, :1], out[:, 1:]

    def two_head_loss(reg, cls, y_reg, y_cls):
        return F.mse_loss(reg, y_reg) + F.cross_entropy(cls, y_cls)

    def tuples():
        y_cls = (y[:, 0] > np.median(y)).astype(np.int64)
        inp = tt.tuplefy(x_num, x_cat)
        tgt = tt.tuplefy(y, y_cls)
        model = tt.Model(TwoHeads(), two_head_loss, tt.optim.AdamW(lr=5e-3, decoupled_weight_decay=1e-4), device=dev)
        log = model.fit(inp.iloc[tr], tgt.iloc[tr], batch_size=128, epochs=3, verbose=False,
                        val_data=(inp.iloc[va], tgt.iloc[va]))
        reg, cls = model.predict(inp.iloc[va].to_tensor().to_device(dev))
        acc = (cls.argmax(1).cpu().numpy() == y_cls[va]).mean()
        dl = tt.make_dataloader(tt.tuplefy(inp.iloc[tr], tgt.iloc[tr]).to_tensor(), batch_size=128, shuffle=True)
        log2 = model.fit_dataloader(dl, epochs=2, verbose=False)
        print(f"two heads val loss {log.to_pandas().val_loss.iloc[-1]:.3f}, acc {acc:.2f}, "
              f"dataloader loss {log2.to_pandas().train_loss.iloc[-1]:.3f}")
    return {"regression": regression, "tuples": tuples}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _series_csv(path: Path, n: int = 1000, n_vars: int = 7, seed: int = 0) -> None:
    """A dataset as Crossformer's README asks of custom data: a csv whose first column is the date and the others
    the series to forecast; here n hourly steps of n_vars series, each a mix of daily and weekly cycles with its
    own phase, a slow trend, and noise, the last a lagged blend of the others."""
    import numpy as np
    import pandas as pd
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    cols = {"date": pd.date_range("2021-03-01", periods=n, freq="h").strftime("%Y-%m-%d %H:%M:%S")}
    for j in range(n_vars - 1):
        cols[f"s{j}"] = (np.sin(2 * np.pi * t / 24 + 0.7 * j) + 0.4 * np.sin(2 * np.pi * t / 168 + j)
                         + 0.0005 * (j + 1) * t + 0.15 * rng.standard_normal(n))
    mix = sum(cols[f"s{j}"] for j in range(n_vars - 1)) / (n_vars - 1)
    cols["target"] = np.roll(mix, 3) + 0.1 * rng.standard_normal(n)
    pd.DataFrame(cols).to_csv(path, index=False)


def _np_aliases():
    """numpy 2 removed `np.Inf`, which Crossformer's early stopping reads: given back as `np.inf`."""
    import numpy as np
    if "Inf" not in np.__dict__:
        np.Inf = np.inf


def _crossformer(dev, name: str, extra: list):
    """Thinklab-SJTU/Crossformer's main_crossformer.py as is, as its README runs custom data (`--data Synthetic
    --data_path series.csv --data_dim 7 --in_len 96 --out_len 24 --seg_len 6`, here with `--d_model 64 --d_ff
    128 --n_heads 4 --e_layers 2 --batch_size 16 --train_epochs 2`), the GPU by its `--use_gpu` default; on a
    synthetic hourly 7-variable series of 1000 steps. The window spans the 2nd to the 45th `backward`: the rest of
    the first epoch (37 steps), its validation and test passes, early stopping's checkpoint, and the start of the
    second."""
    root = _need_repo("crossformer")
    tmp = Path(hc._tmp())
    (tmp / "datasets").mkdir()
    _series_csv(tmp / "datasets" / "series.csv")
    _np_aliases()
    argv = ["--data", "Synthetic", "--root_path", str(tmp / "datasets"), "--data_path", "series.csv",
            "--data_dim", "7", "--in_len", "96", "--out_len", "24", "--seg_len", "6", "--d_model", "64",
            "--d_ff", "128", "--n_heads", "4", "--e_layers", "2", "--batch_size", "16", "--train_epochs", "2",
            "--checkpoints", str(tmp / "checkpoints"), *extra]
    if dev.type != "cuda":
        argv += ["--use_gpu", ""]  # its flag is `type=bool`: only an empty string reads as False

    def window():
        with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 45, stop_script=True):
            hc.run_script(root / "main_crossformer.py", argv, str(tmp))
    return {"train_window": window}


def crossformer_tsa(dev):
    """Crossformer: dimension-segment-wise embedding, two-stage attention (cross-time, then cross-dimension
    through routers) and a hierarchical encoder-decoder."""
    return _crossformer(dev, "crossformer.tsa", [])


def crossformer_baseline(dev):
    """The same with `--baseline`: the mean of the input window added to the forecast, and a larger router count
    and merge window (`--factor 5 --win_size 4`)."""
    return _crossformer(dev, "crossformer.baseline", ["--baseline", "--factor", "5", "--win_size", "4"])


def _cora_like(root: Path, n: int = 600, n_feat: int = 200, n_cls: int = 5, seed: int = 0) -> None:
    """A Cora-shaped citation graph for graphSAGE-pytorch's loader: `cora.content` (`<paper id> <binary bag of
    words> <label>` per line) and `cora.cites` (`<cited> <citing>`): n papers in n_cls topics, each topic with
    its own frequent words, links mostly within a topic, every paper cited or citing at least once."""
    import numpy as np
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_cls, n)
    topic_words = rng.random((n_cls, n_feat)) < 0.08
    words = (rng.random((n, n_feat)) < 0.02) | (topic_words[labels] & (rng.random((n, n_feat)) < 0.5))
    ids = rng.choice(10 ** 6, n, replace=False)
    names = [f"Topic_{c}" for c in range(n_cls)]
    root.mkdir(parents=True)
    with open(root / "cora.content", "w") as f:
        for i in range(n):
            f.write(f"{ids[i]}\t" + "\t".join(str(int(w)) for w in words[i]) + f"\t{names[labels[i]]}\n")
    with open(root / "cora.cites", "w") as f:
        for i in range(n):
            for _ in range(int(rng.integers(1, 4))):
                same = np.flatnonzero(labels == labels[i]) if rng.random() < 0.85 else np.arange(n)
                j = int(rng.choice(same[same != i]))
                f.write(f"{ids[j]}\t{ids[i]}\n")


def _sample_of_sets(sample):
    """Python 3.11 took away `random.sample` of a set, which graphSAGE-pytorch's neighbour sampling does (it was
    written for 3.6): given back as 3.10 did it, with a deprecation, by sampling the set's elements as a tuple."""
    def sample_of_sets(population, k, **kw):
        if isinstance(population, (set, frozenset)):
            population = tuple(population)
        return sample(population, k, **kw)
    return sample_of_sets


def _graphsage(dev, name: str, extra: list, start: int, stop: int):
    """twjiang/graphSAGE-pytorch's src/main.py as is (`--dataSet cora --b_sz 20 --epochs 4`, `--cuda` with a
    GPU; its README runs it as `python -m src.main` from the repository's root, which is put on the path), on a
    600-paper synthetic citation graph in Cora's layout, its config (pyhocon) pointing at it; run from a
    temporary folder holding the `models` folder it saves to."""
    root = _need_repo("graphsage")
    tmp = Path(hc._tmp())
    _cora_like(tmp / "cora")
    (tmp / "models").mkdir()
    (tmp / "experiments.conf").write_text(
        'file_path {\n\tcora_content = "%s"\n\tcora_cite = "%s"\n}\nsetting {\n\tnum_layers = 2\n'
        '\thidden_emb_size = 64\n}\n' % (tmp / "cora" / "cora.content", tmp / "cora" / "cora.cites"))
    argv = ["--dataSet", "cora", "--b_sz", "20", "--epochs", "4", "--config", str(tmp / "experiments.conf"),
            "--name", name.split(".")[1], *extra]
    if dev.type == "cuda":
        argv.append("--cuda")

    def window():
        sys.path.insert(0, str(root))
        sample = random.sample
        random.sample = _sample_of_sets(sample)
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, start, stop, stop_script=True):
                hc.run_script(root / "src" / "main.py", argv, str(tmp))
        finally:
            random.sample = sample
            sys.path.remove(str(root))
            for m in [m for m in sys.modules if m == "src" or m.startswith("src.")]:
                del sys.modules[m]
    return {"train_window": window}


def graphsage_sup(dev):
    """Supervised GraphSAGE with the mean aggregator (`--learn_method sup --agg_func MEAN`): 15 batches of 20
    training nodes an epoch, each a neighbour-sampling forward of two layers, then the validation F1 (and the
    test F1 and a checkpoint when it improves). The window spans the 2nd to the 22nd `backward`: the rest of the
    first epoch, its evaluation, and the start of the second."""
    return _graphsage(dev, "graphsage.sup", ["--learn_method", "sup", "--agg_func", "MEAN"], 2, 22)


def graphsage_unsup(dev):
    """Unsupervised GraphSAGE, the README's command (`--learn_method unsup`, the `normal` unsupervised loss of
    random-walk positives and sampled negatives), GCN-style aggregation (`--gcn`); after its second epoch a
    classifier is trained on the frozen embeddings. The window spans the 2nd to the 40th `backward`: the rest of
    the two unsupervised epochs and the start of the classifier's training."""
    return _graphsage(dev, "graphsage.unsup", ["--learn_method", "unsup", "--gcn"], 2, 40)


MODELS = [
    # name, package, builder
    ("torch_rechub.recsys", "torch_rechub", rechub_recsys),
    ("pythae.vae", "pythae", pythae_vae),
    ("tensordict.rollouts", "tensordict", tensordict_rollouts),
    ("rsl_rl.ppo", "rsl_rl", rsl_rl_ppo),
    ("pytorch_pfn_extras.training", "pytorch_pfn_extras", ppe_training),
    ("torch_stoi.loss", "torch_stoi", stoi_loss),
    ("mambapy.ssm", "mambapy", mambapy_ssm),
    ("torchtuples.models", "torchtuples", torchtuples_models),
    ("crossformer.tsa", "crossformer", crossformer_tsa),
    ("crossformer.baseline", "crossformer", crossformer_baseline),
    ("graphsage.sup", "graphsage", graphsage_sup),
    ("graphsage.unsup", "graphsage", graphsage_unsup),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh19", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
