"""Record the syncs of a thirty-seventh set, `fresh36` (sealed): libraries and training code nobody here read.

`fresh36` is recorded the same way as `fresh9` to `fresh35` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; d2l's `Trainer(num_gpus=)` and `train_ch6(...,
device)`, cellpose's `device=`, fairlearn's `cuda=`, hippynn's `SetupParams(device=)` / `Database(device=)` choose
the device the library puts its tensors on): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh36), names a to l: cellpose (cell
  segmentation dynamics: flows from masks by diffusion, masks from flows by following them, flow-error filtering,
  its segmentation metrics), cockpit (cockpit-for-pytorch: training diagnostics, its `Cockpit` quantities on a
  BackPACK-extended model, economy / business / full configurations), d2l (Dive into Deep Learning's library:
  `train_ch6`, `Trainer` with `Classifier` models and an RNN language model with gradient clipping and `predict`,
  anchor boxes with `multibox_prior` / `multibox_target` / `multibox_detection`, attention and a Transformer
  encoder), dynamic_network_architectures (dynamic-network-architectures: nnU-Net's `PlainConvUNet` and
  `ResidualEncoderUNet` trained with deep supervision), fairlearn (`AdversarialFairnessClassifier` /
  `AdversarialFairnessRegressor` on its PyTorch backend) and hippynn (HIP-NN energy and force models through its
  graph API, a `Database` of arrays and `setup_and_train`); + their needs not on the GPU machine (backpack-for-pytorch,
  unfoldNd, einconv, json-tricks, setuptools (cockpit's `pkg_resources`), fastremap, fill-voids, segment-anything,
  roifile, natsort, tifffile, narwhals, ipython and the packages it imports, matplotlib-inline, seaborn).
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh36/repos/<name>:
  google-research/augmix (cifar.py as is: AugMix training with the Jensen-Shannon consistency loss, PIL
  augmentation chains on the host) and GMvandeVen/continual-learning (main.py as is: split-MNIST continual learning,
  EWC and experience replay), both on synthetic data (torchvision's `CIFAR10` / `MNIST` answered by `FakeData`).

    python benchmarks/fresh36_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh36_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh36 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh36 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh36"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh36", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh36/repos/<name>)
REPOS = {
    "augmix": ("google-research/augmix", "9b9824c7c19bf7e72df2d085d97b99b3bfb00ba4",
               ["cifar.py", "augmentations.py", "models", "third_party"]),
    "continual": ("GMvandeVen/continual-learning", "e6d795aa81b9cef742b8de76cb71222d4d1ce00b",
                  ["main.py", "utils.py", "train", "data", "eval", "models", "params", "visual"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["cellpose==4.2.1.1", "fastremap==1.21.0", "fill-voids==2.1.2", "segment-anything==1.0",
          "roifile==2026.2.10", "natsort==8.4.0", "tifffile==2026.3.3",
          "cockpit-for-pytorch==1.0.2", "backpack-for-pytorch==1.7.1", "unfoldNd==0.2.3", "einconv==0.1.0",
          "json-tricks==3.17.3", "setuptools==80.10.2", "seaborn==0.13.2",
          "d2l==1.0.3", "ipython==9.18.1", "ipython-pygments-lexers==1.1.1", "matplotlib-inline==0.2.2",
          "traitlets==5.16.1", "jedi==0.20.1", "parso==0.8.7", "pexpect==4.9.0", "ptyprocess==0.7.0",
          "prompt-toolkit==3.0.53", "wcwidth==0.9.4", "stack-data==0.6.3", "executing==2.3.0",
          "asttokens==3.0.2", "pure-eval==0.2.4", "decorator==5.3.1",
          "dynamic-network-architectures==0.4.4", "fairlearn==0.15.0", "narwhals==2.29.0", "hippynn==0.1.3"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"cellpose": "cellpose", "cockpit": "cockpit-for-pytorch", "cockpit_for_pytorch": "cockpit-for-pytorch",
         "d2l": "d2l",
         "dynamic_network_architectures": "dynamic-network-architectures", "fairlearn": "fairlearn",
         "hippynn": "hippynn", "backpack": "backpack-for-pytorch", "numpy": "numpy", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh36/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh36_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _gpu(dev) -> bool:
    return dev.type == "cuda"


# ============================================================================================
# Libraries
# ============================================================================================

def _discs(n, size=96, seed=0):
    """A label image (int32, 0 = background) of `n` non-touching-ish random discs."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:size, :size]
    masks = np.zeros((size, size), np.int32)
    for k in range(1, n + 1):
        cy, cx = rng.integers(10, size - 10, 2)
        r = rng.integers(5, 10)
        masks[((yy - cy) ** 2 + (xx - cx) ** 2 <= r * r) & (masks == 0)] = k
    return np.unique(masks, return_inverse=True)[1].reshape(masks.shape).astype(np.int32)  # labels 1..n, no gaps


# -- cellpose: the documented dynamics functions with `device=` (`dynamics.labels_to_flows`,
#    `dynamics.masks_to_flows_gpu` / `masks_to_flows_gpu_3d`, `dynamics.compute_masks`,
#    `dynamics.resize_and_compute_masks`, `dynamics.remove_bad_flow_masks`) and `metrics.average_precision`,
#    `metrics.aggregated_jaccard_index`, `metrics.boundary_scores`, on synthetic label images -----------------------

def cellpose_dynamics(dev):
    from cellpose import dynamics, metrics

    def flows():
        for seed in range(3):
            masks = _discs(8 + seed, seed=seed)
            out = dynamics.labels_to_flows([masks], device=dev)
            res = dynamics.masks_to_flows_gpu(masks, device=dev)
            mu = res[0] if isinstance(res, tuple) else res
            print(f"flows {seed}: {np.shape(out[0])} mu {np.shape(mu)}")
        vol = np.stack([_discs(5, 48, 7)] * 6)
        res = dynamics.masks_to_flows_gpu_3d(vol, device=dev)
        print(f"3d flows: {np.shape(res[0] if isinstance(res, tuple) else res)}")

    def segment(resize=False):
        def run():
            rng = np.random.default_rng(1)
            for seed in range(3):
                masks = _discs(10, seed=10 + seed)
                res = dynamics.masks_to_flows_gpu(masks, device=dev)
                dP = np.asarray(res[0] if isinstance(res, tuple) else res, dtype=np.float32)
                dP = dP * 5.0 + 0.2 * rng.standard_normal(dP.shape).astype(np.float32)
                cellprob = np.where(masks > 0, 3.0, -3.0).astype(np.float32) + rng.standard_normal(masks.shape)
                if resize:
                    pred = dynamics.resize_and_compute_masks(dP, cellprob.astype(np.float32), niter=100,
                                                             resize=(120, 120), device=dev)
                    pred = dynamics.resize_and_compute_masks(dP, cellprob.astype(np.float32), niter=100,
                                                             device=dev)
                else:
                    pred = dynamics.compute_masks(dP, cellprob.astype(np.float32), niter=150, device=dev)
                pred = pred[0] if isinstance(pred, tuple) else pred
                kept = dynamics.remove_bad_flow_masks(pred, dP, threshold=0.4, device=dev)
                ap, tp, fp, fn = metrics.average_precision([masks], [kept])
                aji = metrics.aggregated_jaccard_index([masks], [kept])
                print(f"segment {seed}: {int(kept.max())} masks ap {np.round(ap, 3).tolist()} aji {aji}")
            prec, rec, f1 = metrics.boundary_scores([masks], [kept], [1, 2])
            print(f"boundary f1 {np.round(f1, 3).tolist()}")
        return run

    return {"flows": flows, "segment": segment(), "segment_resize": segment(True)}


# -- cockpit (cockpit-for-pytorch): the README's loop: a model and loss extended by BackPACK (`extend`), a
#    `Cockpit(model.parameters(), quantities=configuration(...))`, and each step `with cockpit(global_step,
#    info={"batch_size", "individual_losses", "loss", "optimizer"})` around
#    `loss.backward(create_graph=cockpit.create_graph(global_step))`; `get_output()` after -----------------------------

def cockpit_models(dev):
    from backpack import extend
    from cockpit import Cockpit
    from cockpit.utils.configuration import configuration

    def train(label, conv=False, steps=6):
        def run():
            torch.manual_seed(0)
            g = torch.Generator().manual_seed(1)
            if conv:
                net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                                    nn.Linear(4 * 13 * 13, 10))
            else:
                net = nn.Sequential(nn.Flatten(), nn.Linear(784, 32), nn.ReLU(), nn.Linear(32, 10))
            model = extend(net.to(dev))
            loss_fn = extend(nn.CrossEntropyLoss(reduction="mean"))
            individual_loss_fn = nn.CrossEntropyLoss(reduction="none")
            opt = torch.optim.SGD(model.parameters(), lr=1e-2)
            cockpit = Cockpit(model.parameters(), quantities=configuration(label))
            for global_step in range(steps):
                inputs = torch.randn(32, 1, 28, 28, generator=g).to(dev)
                labels = torch.randint(0, 10, (32,), generator=g).to(dev)
                opt.zero_grad()
                outputs = model(inputs)
                loss = loss_fn(outputs, labels)
                losses = individual_loss_fn(outputs, labels)
                with cockpit(global_step, info={"batch_size": inputs.shape[0], "individual_losses": losses,
                                                "loss": loss, "optimizer": opt}):
                    loss.backward(create_graph=cockpit.create_graph(global_step))
                opt.step()
            out = cockpit.get_output()
            print(f"cockpit {label} conv={conv}: {sorted(out)[:6]} loss {loss.item():.4f}")
        return run

    return {"economy": train("economy"), "business": train("business"), "full": train("full"),
            "full_conv": train("full", conv=True)}


# -- d2l (Dive into Deep Learning): `train_ch6(net, train_iter, test_iter, num_epochs, lr, device)` on
#    `load_array` iterators; the class API: a `DataModule` with `get_tensorloader`, `Trainer(max_epochs=,
#    num_gpus=, gradient_clip_val=)` fitting `LeNet`, `SoftmaxRegression` and `RNNLM(RNN(...))`, then
#    `RNNLM.predict(prefix, num_preds, vocab, device)` with a `Vocab`; anchor boxes (`multibox_prior`,
#    `multibox_target`, `multibox_detection`, `box_iou`); `masked_softmax`, `MultiHeadAttention`,
#    `TransformerEncoder` with valid lengths, `bleu` -------------------------------------------------------------

def d2l_book(dev):
    from d2l import torch as d2l
    num_gpus = 1 if _gpu(dev) else 0

    class Images(d2l.DataModule):
        def __init__(self, n=384, batch_size=64):
            super().__init__()
            self.save_hyperparameters()
            g = torch.Generator().manual_seed(0)
            self.y = torch.randint(0, 10, (n,), generator=g)
            self.X = torch.randn(n, 1, 28, 28, generator=g) * 0.5 + self.y[:, None, None, None] / 10

        def get_dataloader(self, train):
            i = slice(0, 256) if train else slice(256, None)
            return self.get_tensorloader((self.X, self.y), train, i)

    def ch6():
        g = torch.Generator().manual_seed(0)
        y = torch.randint(0, 10, (384,), generator=g)
        X = torch.randn(384, 1, 28, 28, generator=g) * 0.5 + y[:, None, None, None] / 10
        train_iter = d2l.load_array((X[:256], y[:256]), 32)
        test_iter = d2l.load_array((X[256:], y[256:]), 64, is_train=False)
        net = nn.Sequential(nn.Conv2d(1, 6, kernel_size=5, padding=2), nn.Sigmoid(), nn.AvgPool2d(2, stride=2),
                            nn.Conv2d(6, 16, kernel_size=5), nn.Sigmoid(), nn.AvgPool2d(2, stride=2),
                            nn.Flatten(), nn.Linear(16 * 5 * 5, 120), nn.Sigmoid(), nn.Linear(120, 84),
                            nn.Sigmoid(), nn.Linear(84, 10))
        d2l.train_ch6(net, train_iter, test_iter, 2, 0.9, dev)
        print(f"ch6: test acc {d2l.evaluate_accuracy_gpu(net, test_iter, dev):.3f}")

    def trainer(kind):
        def run():
            torch.manual_seed(0)
            data = Images()
            if kind == "lenet":
                model = d2l.LeNet(lr=0.1)
                model.apply_init([next(iter(data.get_dataloader(True)))[0]], d2l.init_cnn)
            else:
                model = d2l.SoftmaxRegression(num_outputs=10, lr=0.1)
            t = d2l.Trainer(max_epochs=2, num_gpus=num_gpus)
            t.fit(model, data)
            print(f"trainer {kind}: done")
        return run

    def rnnlm():
        rng = np.random.default_rng(0)
        words = ["the", "time", "machine", "traveller", "said", "in", "a", "way", "of", "it"]
        text = " ".join(rng.choice(words, 600))
        vocab = d2l.Vocab(list(text))
        corpus = torch.tensor(vocab[list(text)])

        class Chars(d2l.DataModule):
            def __init__(self, batch_size=32, num_steps=16):
                super().__init__()
                self.save_hyperparameters()
                array = torch.stack([corpus[i:i + num_steps + 1] for i in range(len(corpus) - num_steps)])
                self.X, self.Y = array[:, :-1], array[:, 1:]
                self.num_train = len(self.X) * 3 // 4

            def get_dataloader(self, train):
                idx = slice(0, self.num_train) if train else slice(self.num_train, None)
                return self.get_tensorloader([self.X, self.Y], train, idx)

        torch.manual_seed(0)
        data = Chars()
        rnn = d2l.RNN(num_inputs=len(vocab), num_hiddens=32)
        model = d2l.RNNLM(rnn, vocab_size=len(vocab), lr=1)
        t = d2l.Trainer(max_epochs=1, gradient_clip_val=1, num_gpus=num_gpus)
        t.fit(model, data)
        for prefix in ("the ", "it "):
            print(f"rnnlm {prefix!r}: {model.predict(prefix, 10, vocab, dev)!r}")

    def anchors():
        torch.manual_seed(0)
        for h in (8, 12):
            X = torch.rand(1, 3, h, h).to(dev)
            anc = d2l.multibox_prior(X, sizes=[0.75, 0.5, 0.25], ratios=[1, 2, 0.5])
            ground_truth = torch.tensor([[[0, 0.1, 0.08, 0.52, 0.92], [1, 0.55, 0.2, 0.9, 0.88]]]).to(dev)
            bbox_offset, bbox_mask, cls_labels = d2l.multibox_target(anc, ground_truth)
            n = anc.shape[1]
            cls_probs = torch.softmax(torch.randn(1, 3, n), dim=1).to(dev)
            offset_preds = (0.1 * torch.randn(1, n * 4)).to(dev)
            output = d2l.multibox_detection(cls_probs, offset_preds, anc, nms_threshold=0.5)
            iou = d2l.box_iou(anc[0, :10], ground_truth[0, :, 1:])
            print(f"anchors {h}: {n} target {tuple(cls_labels.shape)} kept {(output[0, :, 0] != -1).sum().item()} "
                  f"iou {tuple(iou.shape)}")

    def attention():
        torch.manual_seed(0)
        print(d2l.masked_softmax(torch.rand(2, 2, 4).to(dev), torch.tensor([2, 3]).to(dev)).shape)
        print(d2l.masked_softmax(torch.rand(2, 2, 4).to(dev), torch.tensor([[1, 3], [2, 4]]).to(dev)).shape)
        mha = d2l.MultiHeadAttention(32, 4, 0.1).to(dev).eval()
        x, y = torch.ones(2, 4, 32).to(dev), torch.ones(2, 6, 32).to(dev)
        print(mha(x, y, y, torch.tensor([3, 2]).to(dev)).shape)
        enc = d2l.TransformerEncoder(200, 24, 48, 8, 2, 0.5).to(dev)
        opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
        for step in range(3):  # noqa: B007
            tokens = torch.randint(0, 200, (4, 20)).to(dev)
            out = enc(tokens, torch.tensor([20, 15, 10, 5]).to(dev))
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"encoder {tuple(out.shape)} bleu {d2l.bleu('go . now', 'go now .', k=2):.3f}")

    return {"ch6": ch6, "trainer_lenet": trainer("lenet"), "trainer_softmax": trainer("softmax"),
            "rnnlm": rnnlm, "anchors": anchors, "attention": attention}


# -- dynamic_network_architectures (dynamic-network-architectures): nnU-Net's `PlainConvUNet(input_channels=,
#    n_stages=, features_per_stage=, conv_op=, kernel_sizes=, strides=, n_conv_per_stage=, num_classes=,
#    n_conv_per_stage_decoder=, conv_bias=, norm_op=, norm_op_kwargs=, nonlin=, deep_supervision=)` and
#    `ResidualEncoderUNet(n_blocks_per_stage=...)`, 2D and 3D, trained a few steps with deep supervision ------------

def dna_unets(dev):
    from dynamic_network_architectures.architectures.unet import PlainConvUNet, ResidualEncoderUNet

    def train(kind, dim):
        def run():
            torch.manual_seed(0)
            conv, norm = (nn.Conv2d, nn.InstanceNorm2d) if dim == 2 else (nn.Conv3d, nn.InstanceNorm3d)
            common = dict(input_channels=1, n_stages=4, features_per_stage=(8, 16, 32, 64), conv_op=conv,
                          kernel_sizes=3, strides=(1, 2, 2, 2), num_classes=3, n_conv_per_stage_decoder=1,
                          conv_bias=True, norm_op=norm, norm_op_kwargs={"eps": 1e-5, "affine": True},
                          nonlin=nn.LeakyReLU, nonlin_kwargs={"inplace": True}, deep_supervision=True)
            if kind == "plain":
                model = PlainConvUNet(n_conv_per_stage=2, **common).to(dev)
            else:
                model = ResidualEncoderUNet(n_blocks_per_stage=(1, 1, 2, 2), **common).to(dev)
            opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.99, nesterov=True)
            shape = (2, 1, 64, 64) if dim == 2 else (2, 1, 32, 32, 32)
            for step in range(3):  # noqa: B007
                x = torch.randn(shape).to(dev)
                target = (x > 0.5).long().squeeze(1) + (x > 1.2).long().squeeze(1)
                outs = model(x)
                weights = [1 / 2 ** i for i in range(len(outs))]
                loss = 0
                for w, o in zip(weights, outs):
                    t = F.interpolate(target[:, None].float(), size=o.shape[2:], mode="nearest")[:, 0].long()
                    loss = loss + w * F.cross_entropy(o, t)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(f"unet {kind} {dim}d: {[tuple(o.shape) for o in outs][:2]} loss {loss.item():.4f}")
        return run

    return {"plain_2d": train("plain", 2), "residual_2d": train("residual", 2), "plain_3d": train("plain", 3)}


# -- fairlearn: `AdversarialFairnessClassifier(backend="torch", predictor_model=, adversary_model=,
#    constraints=, batch_size=, epochs=, random_state=, cuda=)` `.fit(X, y, sensitive_features=)` / `.predict`,
#    `partial_fit` in a loop, a `torch.nn.Module` predictor, and `AdversarialFairnessRegressor`; scored with
#    `fairlearn.metrics.MetricFrame` / `demographic_parity_difference` ---------------------------------------------

def fairlearn_adversarial(dev):
    from fairlearn.adversarial import AdversarialFairnessClassifier, AdversarialFairnessRegressor
    from fairlearn.metrics import demographic_parity_difference, equalized_odds_difference

    cuda = str(dev) if _gpu(dev) else None
    rng = np.random.default_rng(0)
    n = 768
    A = rng.integers(0, 2, n)
    X = rng.standard_normal((n, 6)) + A[:, None] * 0.8
    y = ((X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n)) > 0.6).astype(int)
    yr = X[:, 0] + 0.5 * X[:, 2] + 0.1 * rng.standard_normal(n)

    def classifier(constraints, module=False):
        def run():
            torch.manual_seed(0)
            pred = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid()) if module \
                else [16, "leaky_relu"]
            m = AdversarialFairnessClassifier(backend="torch", predictor_model=pred,
                                              adversary_model=[3, "leaky_relu"], constraints=constraints,
                                              batch_size=128, epochs=2, random_state=123, cuda=cuda)
            m.fit(X, y, sensitive_features=A)
            p = m.predict(X)
            print(f"{constraints} module={module}: acc {(p == y).mean():.3f} "
                  f"dpd {demographic_parity_difference(y, p, sensitive_features=A):.3f} "
                  f"eod {equalized_odds_difference(y, p, sensitive_features=A):.3f}")
        return run

    def partial():
        m = AdversarialFairnessClassifier(backend="torch", predictor_model=[8, "relu"], adversary_model=[3, "relu"],
                                          batch_size=64, random_state=1, cuda=cuda)
        for i in range(4):
            sl = slice(i * 192, (i + 1) * 192)
            m.partial_fit(X[sl], y[sl], sensitive_features=A[sl])
        print(f"partial: {np.asarray(m.predict(X[:8])).ravel().tolist()}")

    def regressor():
        m = AdversarialFairnessRegressor(backend="torch", predictor_model=[16, "leaky_relu"],
                                         adversary_model=[3, "leaky_relu"], batch_size=128, epochs=2,
                                         random_state=5, cuda=cuda)
        m.fit(X, yr, sensitive_features=A)
        p = m.predict(X)
        print(f"regressor: mse {np.mean((p.ravel() - yr) ** 2):.3f}")

    return {"demographic_parity": classifier("demographic_parity"),
            "equalized_odds": classifier("equalized_odds"),
            "module": classifier("demographic_parity", module=True), "partial_fit": partial, "regressor": regressor}


# -- hippynn: the barebones example's graph (`inputs.SpeciesNode`, `inputs.PositionsNode`, `networks.Hipnn`,
#    `targets.HEnergyNode`, `loss.MSELoss.of_node` / `MAELoss`, `experiment.assemble_for_training`), forces by
#    `physics.GradientNode`, a `databases.Database` of arrays (`device=`), `pretraining.set_e0_values` and
#    `experiment.setup_and_train(SetupParams(device=, max_epochs=, batch_size=, stopping_key=))` ---------------------

def _molecules(n=96, atoms=8, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.choice([1, 6, 7, 8], size=(n, atoms))
    Z[:, -1] = np.where(rng.random(n) < 0.3, 0, Z[:, -1])  # some padded atoms
    R = rng.standard_normal((n, atoms, 3)) * 1.6
    d = np.linalg.norm(R[:, :, None] - R[:, None], axis=-1) + np.eye(atoms)
    T = (np.exp(-d).sum((1, 2)) - Z.sum(1) * 0.1)[:, None]
    return {"Z": Z.astype(np.int64), "R": R.astype(np.float32), "T": T.astype(np.float32)}


def hippynn_models(dev):
    import hippynn
    from hippynn.experiment import SetupParams, setup_and_train
    from hippynn.graphs import inputs, loss, networks, physics, targets
    from hippynn.pretraining import set_e0_values

    def train(forces, tensor_order=False):
        def run():
            torch.manual_seed(0)
            params = {"possible_species": [0, 1, 6, 7, 8], "n_features": 16, "n_sensitivities": 12,
                      "dist_soft_min": 0.8, "dist_soft_max": 4.0, "dist_hard_max": 5.0,
                      "n_interaction_layers": 1, "n_atom_layers": 2}
            species = inputs.SpeciesNode(db_name="Z")
            positions = inputs.PositionsNode(db_name="R")
            if tensor_order:
                network = networks.HipnnQuad("hipnn_model", (species, positions), module_kwargs=params)
            else:
                network = networks.Hipnn("hipnn_model", (species, positions), module_kwargs=params)
            henergy = targets.HEnergyNode("HEnergy", network, db_name="T")
            mse = loss.MSELoss.of_node(henergy)
            validation = {"RMSE": mse ** (1 / 2), "MAE": loss.MAELoss.of_node(henergy), "MSE": mse}
            train_loss = mse
            arrays = _molecules()
            if forces:
                grad = physics.GradientNode("forces", (henergy, positions), sign=-1)
                grad.db_name = "F"
                arrays["F"] = (0.1 * np.random.default_rng(3).standard_normal(arrays["R"].shape)).astype(np.float32)
                fmse = loss.MSELoss.of_node(grad)
                validation["FMSE"] = fmse
                train_loss = mse + fmse
            training_modules, db_info = hippynn.experiment.assemble_for_training(train_loss, validation)
            tmp = hc._tmp()
            with hippynn.tools.active_directory(os.path.join(tmp, "net")):
                database = hippynn.databases.Database({k: torch.from_numpy(v) for k, v in arrays.items()},
                                                      seed=0, test_size=0.2, valid_size=0.2, quiet=True,
                                                      **db_info)
                set_e0_values(henergy, database, trainable_after=False)
                setup = SetupParams(stopping_key="MSE", batch_size=16, optimizer=torch.optim.Adam, max_epochs=2,
                                    learning_rate=1e-3, device=dev)
                setup_and_train(training_modules=training_modules, database=database, setup_params=setup)
            print(f"hippynn forces={forces} quad={tensor_order}: done")
        return run

    return {"energy": train(False), "energy_forces": train(True), "quad": train(False, tensor_order=True)}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

class _FakeLabelled(torch.utils.data.Dataset):
    """`FakeData` whose `target_transform` is applied to the integer label (FakeData applies it to a tensor and then
    calls `.item()`), with the labels also listed as `targets`, as torchvision's datasets have them."""

    def __init__(self, fake, target_transform):
        self.fake, self.target_transform = fake, target_transform
        self.targets = [int(fake[i][1]) for i in range(len(fake))]

    def __len__(self):
        return len(self.fake)

    def __getitem__(self, i):
        img, target = self.fake[i]
        return img, self.target_transform(target) if self.target_transform is not None else target


@contextlib.contextmanager
def _fake_dataset(name, n, shape, num_classes=10, labelled=False):
    """torchvision's dataset `name` answered by `FakeData` of its shape (no download, no files); with `labelled`,
    by `_FakeLabelled`."""
    import torchvision.datasets as dset
    saved = getattr(dset, name)

    def fake(root=None, train=True, download=False, transform=None, target_transform=None, **kw):
        if labelled:
            return _FakeLabelled(dset.FakeData(size=n if train else n // 4, image_size=shape, num_classes=num_classes,
                                               transform=transform, random_offset=0 if train else 1),
                                 target_transform)
        return dset.FakeData(size=n if train else n // 4, image_size=shape, num_classes=num_classes,
                             transform=transform, target_transform=target_transform, random_offset=0 if train else 1)
    setattr(dset, name, fake)
    try:
        yield
    finally:
        setattr(dset, name, saved)


def _augmix(dev, name, extra, stop):
    """google-research/augmix's cifar.py as is (AugMix augmentation chains on PIL images in the loader, SGD with a
    cosine schedule, `.cuda()` throughout, `float(loss)` for its moving average), with `--epochs 1`, a small
    batch, `--num-workers 0` and its snapshots in a temporary folder, on synthetic CIFAR-10 (torchvision's
    `CIFAR10` answered by `FakeData`). The window spans the 2nd to the `stop`-th `backward`. In the CPU smoke run
    only, the script's `.cuda()` maps to the CPU and the window closes at the 3rd."""
    root = _need_repo("augmix")
    last = stop if _gpu(dev) else 3
    tmp = Path(hc._tmp())
    argv = ["--epochs", "1", "--batch-size", "32", "--eval-batch-size", "64", "--num-workers", "0",
            "--print-freq", "2", "--save", str(tmp / "snapshots"), *extra]

    def window():
        sys.path.insert(0, str(root))
        try:
            with _fake_dataset("CIFAR10", 384, (3, 32, 32)), fc.cuda_on_cpu(dev), \
                    hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, last, stop_script=True):
                hc.run_script(root / "cifar.py", argv, str(tmp))
        finally:
            sys.path.remove(str(root))
            for m in list(sys.modules):
                if m in ("augmentations", "models", "third_party") or m.startswith(("models.", "third_party.")):
                    sys.modules.pop(m, None)
    return {"train_window": window}


def augmix_jsd(dev):
    """the AllConvNet with the Jensen-Shannon consistency loss (the default); window 2nd to 8th `backward`."""
    return _augmix(dev, "augmix.jsd", ["--model", "allconv"], 8)


def augmix_wrn(dev):
    """a WideResNet-16-2 without the JSD loss (`--no-jsd`), all operations (`--all-ops`); window 2nd to 8th."""
    return _augmix(dev, "augmix.wrn", ["--model", "wrn", "--layers", "16", "--no-jsd", "--all-ops"], 8)


def _continual(dev, name, extra, stop):
    """GMvandeVen/continual-learning's main.py as is (split MNIST in five contexts, an MLP classifier, its own
    training loop with per-context callbacks and evaluation), with `--iters 5 --batch 32 --no-save`, on synthetic
    MNIST (torchvision's `MNIST` answered by `FakeData`), its data folder in a temporary folder. The window spans
    the 2nd to the `stop`-th `backward`, across context boundaries. In the CPU smoke run only, `--no-gpus` is
    added and the window closes at the 3rd."""
    root = _need_repo("continual")
    last = stop if _gpu(dev) else 3
    tmp = Path(hc._tmp())
    argv = ["--experiment", "splitMNIST", "--iters", "5", "--batch", "32", "--no-save", "--fc-units", "64",
            "--data-dir", str(tmp / "datasets"), "--results-dir", str(tmp / "results"),
            "--plot-dir", str(tmp / "plots"), "--model-dir", str(tmp / "models"), *extra]
    if not _gpu(dev):
        argv.append("--no-gpus")

    def window():
        sys.path.insert(0, str(root))
        try:
            with _fake_dataset("MNIST", 300, (1, 28, 28), labelled=True), \
                    hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, last, stop_script=True):
                hc.run_script(root / "main.py", argv, str(tmp))
        finally:
            sys.path.remove(str(root))
            for m in list(sys.modules):
                if m in ("utils", "train", "data", "eval", "models", "params", "visual") or \
                        m.startswith(("train.", "data.", "eval.", "models.", "params.", "visual.")):
                    sys.modules.pop(m, None)
    return {"train_window": window}


def continual_ewc(dev):
    """task-incremental split MNIST with EWC (`--scenario task --ewc --fisher-n 32`); window 2nd to 16th."""
    return _continual(dev, "continual.ewc", ["--scenario", "task", "--ewc", "--fisher-n", "32"], 16)


def continual_replay(dev):
    """class-incremental split MNIST with experience replay (`--scenario class --replay buffer --budget 20`);
    window 2nd to 16th."""
    return _continual(dev, "continual.replay", ["--scenario", "class", "--replay", "buffer", "--budget", "20"], 16)


MODELS = [
    # name, package, builder
    ("cellpose.dynamics", "cellpose", cellpose_dynamics),
    ("cockpit.models", "cockpit", cockpit_models),
    ("d2l.book", "d2l", d2l_book),
    ("dynamic_network_architectures.unets", "dynamic_network_architectures", dna_unets),
    ("fairlearn.adversarial", "fairlearn", fairlearn_adversarial),
    ("hippynn.models", "hippynn", hippynn_models),
    ("augmix.jsd", "augmix", augmix_jsd),
    ("augmix.wrn", "augmix", augmix_wrn),
    ("continual.ewc", "continual", continual_ewc),
    ("continual.replay", "continual", continual_replay),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh36", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
