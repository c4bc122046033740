"""Record the syncs of a forty-fourth set, `fresh43` (a sealed test set): libraries and training code nobody here read.

`fresh43` is recorded the same way as `fresh9` to `fresh41` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions and docs' examples, the names, signatures and docstrings they
export), on synthetic data with random weights, before anyone ran the linter on this code or read it for syncs.
Every input is put on the device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; torchrl's
`LazyTensorStorage(device=)` and tensordicts moved with `.to(dev)`; xgrammar's token bitmask
moved to the logits' device as its docs show; mlm-pytorch's, tab-transformer-pytorch's, pytorch-warmup's and
torchsampler's models and batches moved with `.to(dev)`): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh43), names m to z: mlm-pytorch (masked
  language modelling's masking and loss around a transformer), pytorch-warmup (learning-rate warm-up schedules
  around training steps), tab-transformer-pytorch (TabTransformer and FT-Transformer trained on mixed
  categorical / continuous tables), torchrl (reinforcement learning's data side: replay buffers with slice
  sampling, GAE / TD(lambda) estimators and its functional estimators), torchsampler (an imbalanced-data
  sampler feeding a training loop) and xgrammar
  (grammar-constrained decoding: JSON, JSON-schema, EBNF and regex grammars, token bitmasks applied to logits on
  the device); + tensordict, pyvers, hoptorch and orjson (torchrl's), apache-tvm-ffi, pydantic, pydantic-core,
  annotated-types and typing-inspection (xgrammar's), discrete-continuous-embed-readout, hyper-connections,
  x-mlps-pytorch, einx, frozendict, torch-einops-utils and beartype (tab-transformer-pytorch's). Their other
  needs (numpy, pandas, cloudpickle, einops, transformers, triton, torchvision) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh43/repos/<name>:
  omegafragger/DDU (train.py as is: a spectrally normalised ResNet-18 on CIFAR-10, CIFAR-10 answered by
  synthetic images) and TimDettmers/sparse_learning (mnist_cifar/main.py as is: sparse momentum training of a
  VGG on CIFAR-10 with its `Masking` pruning / regrowth at each epoch's end, CIFAR-10 answered by synthetic
  images).

    python benchmarks/fresh43_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh43_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh43 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh43 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh43"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh43", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh43/repos/<name>)
REPOS = {
    "ddu": ("omegafragger/DDU", "f597744c65df4ff51615ace5e86e82ffefe1cd0f",
            ["train.py", "evaluate.py", "data", "net", "utils", "metrics"]),
    "sparse": ("TimDettmers/sparse_learning", "e19ff16c475462d50ad247ec2927113617662a4e",
               ["mnist_cifar/main.py", "mnist_cifar/extensions.py", "sparselearning"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["mlm-pytorch==0.1.0", "pytorch-warmup==0.2.0", "tab-transformer-pytorch==0.6.1",
          "discrete-continuous-embed-readout", "hyper-connections", "x-mlps-pytorch", "einx", "frozendict",
          "torch-einops-utils", "beartype", "torchrl==0.14.1", "tensordict==0.14.3", "pyvers==0.2.3",
          "hoptorch==0.1.4", "orjson", "torchsampler==0.1.2", "xgrammar==0.2.9", "apache-tvm-ffi", "pydantic",
          "pydantic-core", "annotated-types", "typing-inspection"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"mlm_pytorch": "mlm-pytorch", "pytorch_warmup": "pytorch-warmup",
         "tab_transformer_pytorch": "tab-transformer-pytorch", "torchrl": "torchrl", "tensordict": "tensordict",
         "torchsampler": "torchsampler", "xgrammar": "xgrammar", "numpy": "numpy", "pandas": "pandas",
         "torchvision": "torchvision", "transformers": "transformers"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh43/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh43_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


# ============================================================================================
# Libraries
# ============================================================================================

# -- mlm-pytorch: its README's `MLM(transformer, mask_token_id=, pad_token_id=, mask_prob=, replace_prob=,
#    mask_ignore_token_ids=)` wrapped around a token transformer (an embedding, `nn.TransformerEncoder` and a
#    linear head here), the loss of a batch of token ids trained a few steps; several masking settings ----------

def mlm_train(dev):
    from mlm_pytorch import MLM

    class Tokens(nn.Module):
        def __init__(self, num_tokens=500, dim=64):
            super().__init__()
            self.emb = nn.Embedding(num_tokens, dim)
            self.pos = nn.Parameter(torch.randn(128, dim) * 0.02)
            layer = nn.TransformerEncoderLayer(dim, 4, 128, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2)
            self.head = nn.Linear(dim, num_tokens)

        def forward(self, x, **kwargs):
            h = self.emb(x) + self.pos[: x.shape[1]]
            return self.head(self.enc(h))

    def run(mask_prob, replace_prob, random_token_prob=0.0, ignore=(), pad_tail=False):
        def go():
            trainer = MLM(Tokens().to(dev), mask_token_id=2, pad_token_id=0, mask_prob=mask_prob,
                          replace_prob=replace_prob, random_token_prob=random_token_prob, num_tokens=500,
                          mask_ignore_token_ids=list(ignore)).to(dev)
            opt = torch.optim.Adam(trainer.parameters(), lr=3e-4)
            for step in range(4):
                g = torch.Generator().manual_seed(step)
                data = torch.randint(3, 500, (8, 96), generator=g)
                if pad_tail:
                    data[:, 80:] = 0
                data[:, 0] = 1
                loss = trainer(data.to(dev))
                opt.zero_grad()
                loss.backward()
                opt.step()
                print(f"mlm {mask_prob}/{replace_prob} {step}: {loss.item():.3f}")
        return go

    return {"default": run(0.15, 0.9), "random_tokens": run(0.25, 0.8, random_token_prob=0.1),
            "ignore_ids": run(0.15, 0.9, ignore=(1,), pad_tail=True)}


# -- pytorch-warmup: its README's loop, an optimizer and a PyTorch LR scheduler stepped inside
#    `warmup_scheduler.dampening()`, with `UntunedLinearWarmup`, `UntunedExponentialWarmup`, `LinearWarmup(
#    warmup_period=)`, `ExponentialWarmup(warmup_period=)` and `RAdamWarmup`, training a small MLP on the device --

def warmup_train(dev):
    import pytorch_warmup as warmup

    def run(make):
        def go():
            torch.manual_seed(0)
            model = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3)).to(dev)
            opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.999), weight_decay=0.01)
            steps = 12
            sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps)
            ws = make(opt)
            for step in range(steps):
                x = torch.randn(32, 20).to(dev)
                y = torch.randint(0, 3, (32,)).to(dev)
                loss = F.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
                with ws.dampening():
                    sched.step()
                if step % 4 == 0:
                    print(f"{type(ws).__name__} {step}: lr {opt.param_groups[0]['lr']:.2e} loss {loss.item():.3f}")
        return go

    return {"untuned_linear": run(warmup.UntunedLinearWarmup),
            "untuned_exponential": run(warmup.UntunedExponentialWarmup),
            "linear": run(lambda o: warmup.LinearWarmup(o, warmup_period=5)),
            "exponential": run(lambda o: warmup.ExponentialWarmup(o, warmup_period=4)),
            "radam": run(warmup.RAdamWarmup)}


# -- tab-transformer-pytorch: its README's `TabTransformer(categories=, num_continuous=, dim=, dim_out=, depth=,
#    heads=, attn_dropout=, ff_dropout=, mlp_hidden_mults=, mlp_act=, continuous_mean_std=)` and
#    `FTTransformer(...)` on a synthetic table (categorical ids and continuous columns), trained a few steps as a
#    classifier and a regressor, then evaluated ---------------------------------------------------------------------

def tab_transformer_train(dev):
    from tab_transformer_pytorch import FTTransformer, TabTransformer
    cats = (10, 5, 6, 5, 8)

    def table(n, seed):
        g = torch.Generator().manual_seed(seed)
        x_categ = torch.stack([torch.randint(0, c, (n,), generator=g) for c in cats], 1)
        x_cont = torch.randn(n, 10, generator=g)
        y = (x_cont[:, 0] + x_categ[:, 0].float() / 5 > 1).long()
        return x_categ.to(dev), x_cont.to(dev), y.to(dev)

    def run(kind, dim_out):
        def go():
            torch.manual_seed(0)
            if kind == "tab":
                model = TabTransformer(categories=cats, num_continuous=10, dim=32, dim_out=dim_out, depth=2,
                                       heads=4, attn_dropout=0.1, ff_dropout=0.1, mlp_hidden_mults=(4, 2),
                                       mlp_act=nn.ReLU(), continuous_mean_std=torch.randn(10, 2).abs().to(dev))
            else:
                model = FTTransformer(categories=cats, num_continuous=10, dim=32, dim_out=dim_out, depth=2,
                                      heads=4, attn_dropout=0.1, ff_dropout=0.1)
            model = model.to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            for step in range(4):
                xc, xn, y = table(64, step)
                out = model(xc, xn)
                loss = F.cross_entropy(out, y) if dim_out > 1 else F.mse_loss(out.squeeze(-1), y.float())
                opt.zero_grad()
                loss.backward()
                opt.step()
                print(f"{kind} {dim_out} {step}: {loss.item():.3f}")
            model.eval()
            with torch.no_grad():
                xc, xn, y = table(128, 99)
                out = model(xc, xn)
                print(f"{kind} eval: {out.float().mean().item():.3f}")
        return go

    return {"tab_classify": run("tab", 2), "tab_regress": run("tab", 1), "ft_classify": run("ft", 2),
            "ft_regress": run("ft", 1)}


# -- torchsampler: its README's `DataLoader(dataset, sampler=ImbalancedDatasetSampler(dataset), ...)` with the
#    labels given as a list (`labels=`), read by `callback_get_label=`, and with `num_samples=`; each batch moved to
#    the device and a classifier trained -------------------------------------------------------------------------

def torchsampler_train(dev):
    from torch.utils.data import DataLoader, TensorDataset
    from torchsampler import ImbalancedDatasetSampler

    g = torch.Generator().manual_seed(0)
    x = torch.randn(400, 16, generator=g)
    y = torch.cat([torch.zeros(340, dtype=torch.long), torch.ones(50, dtype=torch.long),
                   torch.full((10,), 2, dtype=torch.long)])
    ds = TensorDataset(x, y)

    def run(kind):
        def go():
            if kind == "labels":
                sampler = ImbalancedDatasetSampler(ds, labels=y.tolist())
            elif kind == "callback":
                sampler = ImbalancedDatasetSampler(ds, callback_get_label=lambda d: d.tensors[1].tolist())
            else:
                sampler = ImbalancedDatasetSampler(ds, labels=y.tolist(), num_samples=128)
            loader = DataLoader(ds, sampler=sampler, batch_size=32)
            model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 3)).to(dev)
            opt = torch.optim.SGD(model.parameters(), lr=0.1)
            for step, (xb, yb) in enumerate(loader):
                xb, yb = xb.to(dev), yb.to(dev)
                loss = F.cross_entropy(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()
                if step % 4 == 0:
                    print(f"sampler {kind} {step}: {loss.item():.3f}, {torch.bincount(yb, minlength=3).tolist()}")
                if step >= 8:
                    break
        return go

    return {"labels": run("labels"), "callback": run("callback"), "num_samples": run("num_samples")}


# -- torchrl: its docs' pieces for the data side of reinforcement learning: `ReplayBuffer` over
#    `LazyTensorStorage(device=)` with a `SliceSampler(num_slices=, traj_key=)` sampling trajectory slices,
#    `GAE` and `TDLambdaEstimator` around a `ValueOperator` on rollouts with episode ends, and its functional
#    estimators (`generalized_advantage_estimate`, `vec_td_lambda_return_estimate`, `td0_return_estimate`). (Its
#    environments, collector and PPO / SAC losses were cut before the recording, so that torchrl stays under 40%
#    of the set's sites; its prioritized samplers need a compiled extension built for another torch.)

def torchrl_rl(dev):
    from tensordict import TensorDict
    from torchrl.data import LazyTensorStorage, ReplayBuffer, SliceSampler
    from torchrl.modules import MLP, ValueOperator
    from torchrl.objectives.value import GAE, TDLambdaEstimator
    from torchrl.objectives.value.functional import (
        generalized_advantage_estimate,
        td0_return_estimate,
        vec_td_lambda_return_estimate,
    )

    def slices():
        rb = ReplayBuffer(storage=LazyTensorStorage(400, device=dev), sampler=SliceSampler(
            num_slices=4, traj_key="episode", strict_length=False), batch_size=40)
        eps = torch.arange(8).repeat_interleave(40)
        data = TensorDict({"obs": torch.randn(320, 3), "episode": eps}, batch_size=[320]).to(dev)
        rb.extend(data)
        for step in range(3):
            s = rb.sample()
            print(f"slices {step}: {s.batch_size}, episodes {s['episode'].unique().numel()}")

    def estimators():
        critic = ValueOperator(MLP(in_features=4, out_features=1, num_cells=[32]).to(dev), in_keys=["observation"])
        for step in range(3):
            T = 30
            g = torch.Generator().manual_seed(step)
            done = torch.zeros(2, T, 1, dtype=torch.bool)
            done[:, -1] = True
            done[0, 10] = True
            td = TensorDict({"observation": torch.randn(2, T, 4, generator=g),
                             ("next", "observation"): torch.randn(2, T, 4, generator=g),
                             ("next", "reward"): torch.randn(2, T, 1, generator=g),
                             ("next", "done"): done, ("next", "terminated"): done.clone()},
                            batch_size=[2, T]).to(dev)
            TDLambdaEstimator(gamma=0.98, lmbda=0.9, value_network=critic)(td)
            GAE(gamma=0.98, lmbda=0.9, value_network=critic)(td)
            v = td["state_value"].detach()
            nv = critic(td["next"].clone())["state_value"].detach()
            r, d = td["next", "reward"], td["next", "done"]
            a, tgt = generalized_advantage_estimate(0.99, 0.95, v, nv, r, d, d)
            ret = vec_td_lambda_return_estimate(0.99, 0.9, nv, r, d, d)
            t0 = td0_return_estimate(0.99, nv, r, d)
            print(f"estimators {step}: {td['advantage'].mean().item():.3f}, {a.mean().item():.3f}, "
                  f"{ret.mean().item():.3f}, {t0.mean().item():.3f}")

    return {"slices": slices, "estimators": estimators}


# -- xgrammar: its docs' decoding loop: `TokenizerInfo(encoded_vocab, vocab_type=VocabType.RAW, stop_token_ids=)`,
#    `GrammarCompiler(...).compile_builtin_json_grammar()` / `compile_json_schema()` / `compile_grammar(ebnf)` /
#    `compile_regex()`, a `GrammarMatcher`, `allocate_token_bitmask`, `fill_next_token_bitmask`, the bitmask moved
#    to the logits' device and `apply_token_bitmask_inplace(logits, bitmask)`, the next token chosen on the device
#    and `accept_token`; batched logits with `indices=`. The logits come from a small random language model -------

def xgrammar_decode(dev):
    import json

    import xgrammar as xgr

    chars = [chr(c) for c in range(32, 127)]
    extra = ['{"', '":', '",', '"}', 'true', 'false', 'null', 'name', 'age', '  ', '\n', 'ab', 'cd', '12', '00']
    vocab = ["<s>", "</s>"] + chars + extra
    info = xgr.TokenizerInfo(vocab, vocab_type=xgr.VocabType.RAW, vocab_size=len(vocab), stop_token_ids=[1])
    compiler = xgr.GrammarCompiler(info)
    V = len(vocab)
    torch.manual_seed(0)
    lm = nn.Sequential(nn.Embedding(V, 32), nn.Linear(32, V)).to(dev)

    def decode(compiled, n_steps=24, greedy=False):
        matcher = xgr.GrammarMatcher(compiled)
        bitmask = xgr.allocate_token_bitmask(1, info.vocab_size)
        tok, out = 0, []
        for _ in range(n_steps):
            with torch.no_grad():
                logits = lm(torch.tensor([tok]).to(dev)).float()
            matcher.fill_next_token_bitmask(bitmask)
            xgr.apply_token_bitmask_inplace(logits, bitmask.to(logits.device))
            if greedy:
                nxt = torch.argmax(logits, -1)
            else:
                nxt = torch.multinomial(torch.softmax(logits / 0.7, -1), 1)[0]
            tok = int(nxt.item())
            if not matcher.accept_token(tok):
                break
            out.append(vocab[tok])
            if matcher.is_terminated():
                break
        return "".join(out)

    def run(make, greedy=False):
        def go():
            compiled = make()
            for step in range(3):
                print(f"decoded {step}: {decode(compiled, greedy=greedy)!r}")
        return go

    schema = json.dumps({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                         "required": ["name", "age"]})
    ebnf = 'root ::= "(" expr ")"\nexpr ::= term (("+" | "-") term)*\nterm ::= [0-9]+ | "(" expr ")"'

    def batched():
        compiled = compiler.compile_regex(r"[a-d]{3,8}")
        matchers = [xgr.GrammarMatcher(compiled) for _ in range(4)]
        bitmask = xgr.allocate_token_bitmask(4, info.vocab_size)
        toks = torch.zeros(4, dtype=torch.long).to(dev)
        for step in range(6):
            with torch.no_grad():
                logits = lm(toks).float()
            if all(m.is_terminated() for m in matchers):
                break
            for i, m in enumerate(matchers):
                m.fill_next_token_bitmask(bitmask, i)
            xgr.apply_token_bitmask_inplace(logits, bitmask.to(logits.device), indices=[0, 1, 2, 3])
            toks = torch.argmax(logits, -1)
            for m, t in zip(matchers, toks.tolist()):
                if not m.is_terminated():
                    m.accept_token(t)
            print(f"batched {step}: {toks.tolist()}")

    return {"json": run(compiler.compile_builtin_json_grammar),
            "json_schema": run(lambda: compiler.compile_json_schema(schema)),
            "ebnf": run(lambda: compiler.compile_grammar(ebnf), greedy=True),
            "regex": run(lambda: compiler.compile_regex(r"[a-z]{2,6}-[0-9]{2}")),
            "batched": batched}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

class _SyntheticCIFAR10(torch.utils.data.Dataset):
    """torchvision's CIFAR10 answered by random uint8 images of its shape (no download, no files): `data`,
    `targets`, `train`, the transforms, (PIL image, target) items; and the older attribute names
    (`train_data` / `train_labels`, `test_data` / `test_labels`) of torchvision's older API."""
    n_train, n_test = 512, 128

    def __init__(self, root=None, train=True, transform=None, target_transform=None, download=False):
        n = self.n_train if train else self.n_test
        rng = np.random.default_rng(0 if train else 1)
        self.data = rng.integers(0, 256, (n, 32, 32, 3), dtype=np.uint8)
        self.targets = rng.integers(0, 10, n).tolist()
        self.train, self.transform, self.target_transform = train, transform, target_transform
        self.classes = [str(i) for i in range(10)]

    train_data = property(lambda self: self.data)
    test_data = property(lambda self: self.data)
    train_labels = property(lambda self: self.targets)
    test_labels = property(lambda self: self.targets)

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        from PIL import Image
        img, target = Image.fromarray(self.data[i]), self.targets[i]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


@contextlib.contextmanager
def _synthetic_cifar10(n_train=512, n_test=128):
    import torchvision.datasets as dset
    saved = dset.CIFAR10
    cls = type("CIFAR10", (_SyntheticCIFAR10,), {"n_train": n_train, "n_test": n_test})
    dset.CIFAR10 = cls
    try:
        yield
    finally:
        dset.CIFAR10 = saved


class _SyntheticSVHN(torch.utils.data.Dataset):
    """torchvision's SVHN answered by random uint8 images of its shape (no download, no files): `data` (N, 3, 32,
    32), `labels`, the split, (PIL image, target) items."""

    def __init__(self, root=None, split="train", transform=None, target_transform=None, download=False):
        n = 256 if split == "test" else 512
        rng = np.random.default_rng(2 if split == "test" else 3)
        self.data = rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)
        self.labels = rng.integers(0, 10, n)
        self.split, self.transform, self.target_transform = split, transform, target_transform

    def __len__(self):
        return len(self.data)

    def __getitem__(self, i):
        from PIL import Image
        img, target = Image.fromarray(np.transpose(self.data[i], (1, 2, 0))), int(self.labels[i])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


@contextlib.contextmanager
def _synthetic_svhn():
    import torchvision.datasets as dset
    saved = dset.SVHN
    dset.SVHN = _SyntheticSVHN
    try:
        yield
    finally:
        dset.SVHN = saved


class _cuda_available_on_cpu:
    """The CPU smoke run only: a script that asks `torch.cuda.is_available()` (answered True when the repository's
    own code asks, as on the GPU; the recorder's and torch's own checks still see the CPU), reads
    `torch.cuda.memory_allocated()`, seeds CUDA or sets the device is answered as on the GPU,
    `torch.cuda.FloatTensor` is the CPU's, a module's `.cuda()` is the module itself, a tensor's `.cuda()` /
    `.to('cuda')` mapped to the CPU by `cuda_on_cpu` (on the GPU nothing is changed)."""

    NAMES = ("is_available", "memory_allocated", "manual_seed", "device_count", "set_device", "FloatTensor")

    def __init__(self, dev):
        self.on = dev.type != "cuda"

    def __enter__(self):
        if self.on:
            self.saved = {n: getattr(torch.cuda, n) for n in self.NAMES}, nn.Module.cuda
            repos = str(REPOS_DIR)
            torch.cuda.is_available = lambda: sys._getframe(1).f_code.co_filename.startswith(repos)
            torch.cuda.memory_allocated = lambda *a, **k: 0
            torch.cuda.manual_seed = lambda *a, **k: None
            torch.cuda.device_count = lambda: 1
            torch.cuda.set_device = lambda *a, **k: None
            torch.cuda.FloatTensor = torch.FloatTensor
            nn.Module.cuda = lambda self, *a, **k: self
        return self

    def __exit__(self, *exc):
        if self.on:
            names, nn.Module.cuda = self.saved
            for n, v in names.items():
                setattr(torch.cuda, n, v)


@contextlib.contextmanager
def _loading_in_process():
    """The scripts' DataLoaders load in the process (`num_workers=0`): their worker processes would have to pickle
    the synthetic dataset class and the scripts' lambda transforms, which the recorder's process cannot do under
    every start method; the batches are the same."""
    from torch.utils.data import DataLoader
    saved = DataLoader.__init__

    def init(self, *a, **k):
        k["num_workers"] = 0
        k.pop("prefetch_factor", None)
        k.pop("persistent_workers", None)
        saved(self, *a, **k)
    DataLoader.__init__ = init
    try:
        yield
    finally:
        DataLoader.__init__ = saved


def _forget(names):
    for m in [m for m in sys.modules if m.split(".")[0] in names]:
        del sys.modules[m]


def ddu_train(dev):
    """omegafragger/DDU's train.py as is (its README's training command for a spectrally normalised ResNet-18 with
    its modifications: `--model resnet18 -sn -mod --coeff 3.0`, SGD with its MultiStepLR schedule, the loss
    `.item()` per step, tensorboard scalars and checkpoints at the end), CIFAR-10 answered by 512 + 128 synthetic
    images (`_synthetic_cifar10`), run from a temporary folder. The window spans the 2nd to the 12th `backward`:
    training steps and the first epoch's end (its logging and the scheduler step)."""
    root = _need_repo("ddu")
    tmp = hc._tmp()
    argv = ["--seed", "1", "--dataset", "cifar10", "--dataset-root", os.path.join(tmp, "data"), "--model",
            "resnet18", "-sn", "-mod", "--coeff", "3.0", "-b", "64", "-e", "3", "--lr", "0.05",
            "--save-path", tmp + os.sep, "--save-interval", "2"]

    def window():
        _forget({"utils", "net", "data", "metrics"})
        sys.path.insert(0, str(root))
        try:
            with _synthetic_cifar10(512, 128), _loading_in_process(), fc.cuda_on_cpu(dev), \
                    _cuda_available_on_cpu(dev), \
                    hc.window_on(torch.Tensor, "backward", "ddu.train", "train", dev, 2, 12, stop_script=True):
                hc.run_script(root / "train.py", argv, tmp)
        finally:
            sys.path.remove(str(root))
            _forget({"utils", "net", "data", "metrics"})

    def evaluate():
        """evaluate.py as is (the README's evaluation of a deterministic model with its GMM density: `--model
        vgg16 -sn -mod --coeff 3.0 --model-type gmm`, CIFAR-10 in-distribution and SVHN out-of-distribution):
        test accuracy and confusion matrix, ECE, temperature scaling (LBFGS on the validation split), the GMM fit
        on the training embeddings and its log-densities, AUROC / AUPRC of the softmax entropy and of the GMM; the
        checkpoint it loads is a randomly initialised model of its own `vgg16` saved where it looks, CIFAR-10 and
        SVHN answered by synthetic images (512 + 128 and 256). The whole script is measured."""
        _forget({"utils", "net", "data", "metrics"})
        sys.path.insert(0, str(root))
        eval_tmp = hc._tmp()
        try:
            from net.vgg import vgg16
            from utils.eval_utils import model_load_name
            torch.manual_seed(0)
            net = vgg16(spectral_normalization=True, mod=True, coeff=3.0, num_classes=10, temp=1.0)
            os.makedirs(os.path.join(eval_tmp, "Run1"), exist_ok=True)
            name = model_load_name("vgg16", True, True, 3.0, 1, 0) + "_350.model"
            torch.save(nn.DataParallel(net).state_dict(), os.path.join(eval_tmp, "Run1", name))
            _forget({"utils", "net", "data", "metrics"})
            argv = ["--seed", "1", "--dataset", "cifar10", "--ood_dataset", "svhn", "--model", "vgg16", "-sn",
                    "-mod", "--coeff", "3.0", "--model-type", "gmm", "--runs", "1", "-b", "64", "--load-path",
                    eval_tmp]
            with _synthetic_cifar10(512, 128), _synthetic_svhn(), _loading_in_process(), fc.cuda_on_cpu(dev), \
                    _cuda_available_on_cpu(dev), hc.measuring("ddu.train", "evaluate", dev):
                hc.run_script(root / "evaluate.py", argv, eval_tmp)
        finally:
            sys.path.remove(str(root))
            _forget({"utils", "net", "data", "metrics"})
    return {"train_window": window, "evaluate": evaluate}


def sparse_train(dev):
    """TimDettmers/sparse_learning's mnist_cifar/main.py as is (its README's sparse momentum command on CIFAR-10:
    `--data cifar --model vgg-c --density 0.05`, SGD with its StepLR, the `Masking` optimizer wrapper with magnitude
    pruning, momentum growth and momentum redistribution, its validation pass, checkpoint and the mask's pruning
    and regrowth at each epoch's end), CIFAR-10 answered by 640 + 128 synthetic images, run from a temporary
    folder with the repository's root on the path (its `sparselearning` package). The window spans the 2nd to
    the 14th `backward`: training steps and the first epoch's end (validation, `at_end_of_epoch`)."""
    root = _need_repo("sparse")
    tmp = hc._tmp()
    argv = ["--data", "cifar", "--model", "vgg-c", "--density", "0.05", "--epochs", "3", "--batch-size", "64",
            "--test-batch-size", "64", "--lr", "0.05", "--log-interval", "2", "--max-threads", "2",
            "--valid_split", "0.1", "--save-model", os.path.join(tmp, "model.pt")]

    def window():
        _forget({"sparselearning", "extensions"})
        sys.path.insert(0, str(root))
        sys.path.insert(0, str(root / "mnist_cifar"))
        try:
            with _synthetic_cifar10(640, 128), _loading_in_process(), fc.cuda_on_cpu(dev), \
                    _cuda_available_on_cpu(dev), \
                    hc.window_on(torch.Tensor, "backward", "sparse.train", "train", dev, 2, 14, stop_script=True):
                hc.run_script(root / "mnist_cifar" / "main.py", argv, tmp)
        finally:
            sys.path.remove(str(root / "mnist_cifar"))
            sys.path.remove(str(root))
            _forget({"sparselearning", "extensions"})
    return {"train_window": window}


MODELS = [
    # name, package, builder
    ("mlm_pytorch.train", "mlm_pytorch", mlm_train),
    ("pytorch_warmup.train", "pytorch_warmup", warmup_train),
    ("tab_transformer.train", "tab_transformer_pytorch", tab_transformer_train),
    ("torchrl.rl", "torchrl", torchrl_rl),
    ("torchsampler.train", "torchsampler", torchsampler_train),
    ("xgrammar.decode", "xgrammar", xgrammar_decode),
    ("ddu.train", "ddu", ddu_train),
    ("sparse.train", "sparse", sparse_train),
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
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh43", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
