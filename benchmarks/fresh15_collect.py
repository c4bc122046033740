"""Record the syncs of a sixteenth set, `fresh15` (a sealed test set): libraries and training code nobody here read.

`fresh15` is recorded the same way as `fresh9` to `fresh14` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do: no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh15): pomegranate (probabilistic models:
  general mixture models of several distributions, k-means, dense and sparse HMMs), diffsort (differentiable sorting
  networks: odd-even and bitonic networks under six relaxations, relaxed permutation matrices, ranking supervision
  of a CNN through them), torch_ppr (graphs: PageRank and personalised PageRank by power iteration, batched, on edge
  lists and sparse adjacency matrices), facenet_pytorch (face detection with MTCNN's bundled weights and face
  recognition with an InceptionResnetV1 trained by its `training.pass_epoch`), reformer_pytorch (LSH attention
  language models: ReformerLM trained and sampled through its TrainingWrapper, an encoder-decoder, local attention
  heads, product-key memory, axial positions, the Recorder and Autopadder), mpc (differentiable model predictive
  control: box-constrained LQR on linear dynamics, iLQR on a nonlinear module, imitation learning through the
  controller; a source distribution only, its wheel built by `prepare`), sb3_contrib (reinforcement learning: TQC,
  CrossQ, QR-DQN, TRPO, ARS, RecurrentPPO and MaskablePPO on gymnasium's classic-control tasks) and openunmix (music
  source separation: OpenUnmix models, the Separator with multichannel Wiener filtering, a training step on
  magnitude spectrograms);
  + apricot-select (pomegranate's; built from its sdist), torch-max-mem and more-itertools (torch_ppr's),
  local-attention, product-key-memory and axial-positional-embedding (reformer_pytorch's; the last two built from
  their sdists), stable-baselines3, gymnasium and Farama-Notifications (sb3_contrib's). Their other needs (numpy,
  scipy, numba, scikit-learn, networkx, einops, torchvision, torchaudio, pillow, tqdm, pandas, matplotlib,
  cloudpickle) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh15/repos/<name>:
  dragen1860/MAML-Pytorch (omniglot_train.py as is: MAML on synthetic Omniglot characters written as the
  `omniglot.npy` cache its loader reads; numpy 2 lacks `np.int` and `np.float`, which it reads: the collector gives
  them back) and rosinality/glow-pytorch (train.py as is: Glow trained by maximum likelihood on a folder of
  synthetic images).

    python benchmarks/fresh15_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh15_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh15 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh15 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh15"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh15", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh15/repos/<name>)
REPOS = {
    "maml": ("dragen1860/MAML-Pytorch", "98a00d41724c133bd29619a2fb2cc46dd128a368",
             ["omniglot_train.py", "omniglotNShot.py", "omniglot.py", "meta.py", "learner.py"]),
    "glow": ("rosinality/glow-pytorch", "97081ff115a694cf04aeedbd58447f33d242c879", ["train.py", "model.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["pomegranate==1.1.2", "diffsort==0.2.0", "torch-ppr==0.0.8", "torch-max-mem==0.1.6", "more-itertools==11.2.1",
          "facenet-pytorch==2.6.0", "reformer-pytorch==1.4.4", "local-attention==1.4.3", "sb3-contrib==2.9.2",
          "stable-baselines3==2.9.2", "gymnasium==1.2.2", "Farama-Notifications==0.0.4", "openunmix==1.3.0"]
# published as source distributions only: their pure-Python wheels are built here (`pip wheel --no-deps`)
SDISTS = ["mpc==0.0.6", "product-key-memory==0.1.10", "axial-positional-embedding==0.2.1", "apricot-select==0.6.1"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"pomegranate": "pomegranate", "diffsort": "diffsort", "torch_ppr": "torch-ppr",
         "facenet_pytorch": "facenet-pytorch", "reformer_pytorch": "reformer-pytorch", "mpc": "mpc",
         "sb3_contrib": "sb3-contrib", "openunmix": "openunmix", "stable_baselines3": "stable-baselines3",
         "gymnasium": "gymnasium", "local_attention": "local-attention", "product_key_memory": "product-key-memory",
         "axial_positional_embedding": "axial-positional-embedding", "apricot_select": "apricot-select",
         "torch_max_mem": "torch-max-mem", "numpy": "numpy", "scipy": "scipy", "numba": "numba",
         "scikit_learn": "scikit-learn", "torchvision": "torchvision", "torchaudio": "torchaudio",
         "einops": "einops", "pandas": "pandas"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh15/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh15_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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

# -- pomegranate: the docs' models as torch modules moved to the device, fitted on device tensors: general mixture
#    models of normals, exponentials and gammas (fit, predict, predict_proba, log_probability, sample, summarize /
#    from_summaries), k-means; dense and sparse HMMs with normal and categorical emissions (fit, predict,
#    forward_backward, log_probability) ----------------------------------------------------------------------------

def pomegranate_models(dev):
    from pomegranate.distributions import Categorical, Exponential, Gamma, Normal
    from pomegranate.gmm import GeneralMixtureModel
    from pomegranate.hmm import DenseHMM, SparseHMM
    from pomegranate.kmeans import KMeans

    g = torch.Generator().manual_seed(0)
    centres = torch.tensor([[-3.0, 0.0, 1.0], [2.0, 2.0, -1.0], [0.0, -3.0, 3.0]])
    lab = torch.randint(0, 3, (1500,), generator=g)
    X = (centres[lab] + torch.randn(1500, 3, generator=g)).to(dev)
    Xpos = (X.abs() + 0.1)

    def mixtures():
        gmm = GeneralMixtureModel([Normal(), Normal(), Normal()], max_iter=15, verbose=False).to(dev)
        gmm.fit(X)
        y = gmm.predict(X)
        p = gmm.predict_proba(X)
        ll = gmm.log_probability(X)
        cov = GeneralMixtureModel([Normal(covariance_type="full"), Normal(covariance_type="full")],
                                  max_iter=10).to(dev).fit(X)
        exp = GeneralMixtureModel([Exponential(), Gamma()], max_iter=10).to(dev).fit(Xpos)
        batched = GeneralMixtureModel([Normal(), Normal(), Normal()], max_iter=5).to(dev)
        batched.fit(X[:100])  # initialise, then out of core: summaries of batches, one update
        for chunk in X.split(500):
            batched.summarize(chunk)
        batched.from_summaries()
        km = KMeans(k=3, max_iter=10).to(dev).fit(X)
        print(f"gmm labels {torch.bincount(y, minlength=3).tolist()} p {tuple(p.shape)} ll {ll.mean().item():.2f}; "
              f"full {cov.log_probability(X).mean().item():.2f}; "
              f"exp/gamma {exp.log_probability(Xpos).mean().item():.2f}; "
              f"kmeans {torch.bincount(km.predict(X), minlength=3).tolist()}")

    T = 40
    seqs = torch.randn(24, T, 2, generator=g)
    seqs[:, T // 2:] += 3.0
    seqs = seqs.to(dev)
    cats = torch.randint(0, 4, (24, T, 1), generator=g).to(dev)

    def hmms():
        d1, d2 = Normal(), Normal()
        dense = DenseHMM([d1, d2], edges=[[0.9, 0.1], [0.1, 0.9]], starts=[0.5, 0.5], max_iter=10).to(dev)
        dense.fit(seqs)
        path = dense.predict(seqs)
        fb = dense.forward_backward(seqs)
        lp = dense.log_probability(seqs)
        a = Categorical(torch.tensor([[0.4, 0.3, 0.2, 0.1]], device=dev))
        b = Categorical(torch.tensor([[0.1, 0.2, 0.3, 0.4]], device=dev))
        sparse = SparseHMM([a, b], edges=[(a, a, 0.8), (a, b, 0.2), (b, b, 0.7), (b, a, 0.3)],
                           starts=[0.6, 0.4], max_iter=8).to(dev)
        sparse.fit(cats)
        pp = sparse.predict_proba(cats)
        print(f"dense hmm path {tuple(path.shape)} switch {path[:, T // 2:].float().mean().item():.2f} "
              f"fb {len(fb)} lp {lp.mean().item():.2f}; sparse {tuple(pp.shape)} "
              f"{sparse.log_probability(cats).mean().item():.2f}")

    # a `graphical` mode (a Markov chain and a Bayesian network learned by Chow-Liu from correlated categorical data)
    # was a mode of the recorded run too: on the GPU it failed in its warm-up step (the Markov chain's summaries add a
    # host tensor to a device one inside the library), before anything was measured, and was removed from this file
    # after the run
    return {"mixtures": mixtures, "hmms": hmms}


# -- diffsort: the README's differentiable sorting networks (`DiffSortNet`, odd-even and bitonic, on the device by
#    `device=`) under each documented relaxation (cauchy, reciprocal, optimal, logistic, logistic with ART, gaussian):
#    sorted vectors and their relaxed permutation matrices; the paper's ranking supervision: a CNN scores sets of
#    synthetic images, trained with the BCE between the relaxed permutation and the true one; `functional.sort` ------

def diffsort_ranking(dev):
    from diffsort import DiffSortNet
    from diffsort import functional as dfn

    g = torch.Generator().manual_seed(0)
    vectors = torch.randn(64, 16, generator=g).to(dev)

    def sort():
        out = []
        for kind, size in (("odd_even", 16), ("bitonic", 16), ("bitonic", 13)):
            for dist in ("cauchy", "reciprocal", "optimal", "logistic", "logistic_phi", "gaussian"):
                sorter = DiffSortNet(kind, size, device=dev, steepness=10.0, distribution=dist)
                s, perm = sorter(vectors[:, :size])
                out.append((perm @ vectors[:, :size].unsqueeze(-1)).squeeze(-1).sub(s).abs().max().item())
        print(f"relaxed sorts, max |P x - sorted|: {max(out):.3f} over {len(out)}")

    n_sets, n_items = 32, 8
    values = torch.rand(n_sets, n_items, generator=g)
    imgs = values[..., None, None, None] * torch.ones(1, 1, 1, 16, 16) + 0.1 * torch.randn(
        n_sets, n_items, 1, 16, 16, generator=g)
    imgs, values = imgs.to(dev), values.to(dev)
    true_perm = F.one_hot(torch.argsort(values, dim=-1), n_items).transpose(-2, -1).float()
    net = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                        nn.Linear(8, 1)).to(dev)
    sorter = DiffSortNet("bitonic", n_items, device=dev, steepness=20.0, distribution="cauchy")

    def rank():
        def loss_of(i):
            scores = net(imgs.flatten(0, 1)).view(n_sets, n_items)
            _, perm = sorter(scores)
            return F.binary_cross_entropy(perm.clamp(0, 1), true_perm)
        loss = _fit(net.parameters(), 4, loss_of)
        with torch.no_grad():
            scores = net(imgs.flatten(0, 1)).view(n_sets, n_items)
            acc = (torch.argsort(scores, -1) == torch.argsort(values, -1)).all(-1).float().mean()
        print(f"ranking loss {loss.item():.3f}, exact-order accuracy {acc.item():.2f}")

    def functional():
        from diffsort import networks
        net_ = networks.get_sorting_network("bitonic", 16, dev)
        x = vectors.clone().requires_grad_()
        s, perm = dfn.sort(net_, x, steepness=10.0)
        s.sum().backward()
        print(f"functional sort {tuple(s.shape)} {tuple(perm.shape)} grad {x.grad.abs().sum().item():.3f}")
    return {"sort": sort, "rank": rank, "functional": functional}


# -- torch_ppr: the README's `page_rank` and `personalized_page_rank` of a random graph's edge list, on the
#    device (`device=`), with identity loops, a start vector, batches of source nodes; the same from a sparse
#    adjacency matrix built by its utils; PageRank scores used to weight a node-classification loss ---------------

def torch_ppr_pagerank(dev):
    import torch_ppr
    from torch_ppr import utils as pu

    g = torch.Generator().manual_seed(0)
    n_nodes, n_edges = 2000, 12000
    src = torch.randint(0, n_nodes, (n_edges,), generator=g)
    dst = (src + torch.randint(1, 50, (n_edges,), generator=g)) % n_nodes  # local, so the graph is connected-ish
    edge_index = torch.stack([torch.cat([src, dst]), torch.cat([dst, src])]).to(dev)
    indices = torch.arange(0, 64).to(dev)

    def pagerank():
        pr = torch_ppr.page_rank(edge_index=edge_index, device=dev)
        pr_id = torch_ppr.page_rank(edge_index=edge_index, add_identity=True, alpha=0.15, epsilon=1e-6, device=dev)
        ppr = torch_ppr.personalized_page_rank(edge_index=edge_index, indices=indices, device=dev, batch_size=16)
        ppr_all = torch_ppr.personalized_page_rank(edge_index=edge_index, indices=indices[:8], device=dev)
        print(f"pr sum {pr.sum().item():.3f} top {pr.topk(3).indices.tolist()} id {pr_id.max().item():.4f}; "
              f"ppr {tuple(ppr.shape)} {tuple(ppr_all.shape)} self {ppr.diagonal().mean().item():.3f}")

    def adjacency():
        counts = pu.edge_index_to_sparse_matrix(edge_index=edge_index, num_nodes=n_nodes)
        adj = pu.prepare_page_rank_adjacency(edge_index=edge_index, num_nodes=n_nodes).to(dev)
        x0 = pu.prepare_x0(indices=indices[:4], n=n_nodes).to(dev)
        x = pu.power_iteration(adj=adj, x0=x0, alpha=0.1, max_iter=200, use_tqdm=False, epsilon=1e-5)
        pr = torch_ppr.page_rank(adj=adj, device=dev)
        print(f"power iteration {tuple(x.shape)} {x.sum(0).tolist()}; pr {pr.sum().item():.3f}; "
              f"{counts._nnz()} entries")

    feats = torch.randn(n_nodes, 16, generator=g).to(dev)
    labels = torch.randint(0, 4, (n_nodes,), generator=g).to(dev)
    net = nn.Linear(16, 4).to(dev)

    def weighted():
        w = torch_ppr.page_rank(edge_index=edge_index, device=dev) * n_nodes
        loss = _fit(net.parameters(), 3, lambda i: (F.cross_entropy(net(feats), labels, reduction="none") * w).mean())
        print(f"pagerank-weighted loss {loss.item():.3f}")
    return {"pagerank": pagerank, "adjacency": adjacency, "weighted": weighted}


# -- facenet_pytorch: the README's MTCNN with its bundled P/R/O-Net weights on a batch of synthetic frames (as
#    numpy arrays, the docs' input), `detect` with landmarks, cropped faces returned and saved, `keep_all`, low
#    thresholds so that candidate boxes pass every stage; InceptionResnetV1 (random weights) classifying the crops;
#    its fine-tuning example: `training.pass_epoch` with `BatchTimer` and `accuracy` metrics, a scheduler,
#    `fixed_image_standardization` ----------------------------------------------------------------------------

def facenet_faces(dev):
    import numpy as np
    from facenet_pytorch import MTCNN, InceptionResnetV1, fixed_image_standardization, training

    rng = np.random.default_rng(0)
    frames = []
    for _ in range(4):
        img = rng.integers(0, 60, (240, 320, 3)).astype(np.uint8)
        for _ in range(3):  # bright ellipses with two dark spots: blobs the detector can score
            cy, cx, r = rng.integers(60, 180), rng.integers(60, 260), rng.integers(25, 50)
            yy, xx = np.ogrid[:240, :320]
            img[((yy - cy) / (1.3 * r)) ** 2 + ((xx - cx) / r) ** 2 < 1] = (200, 170, 150)
            for dx in (-r // 3, r // 3):
                img[(yy - cy + r // 4) ** 2 + (xx - cx - dx) ** 2 < (r // 6) ** 2] = (30, 30, 30)
        frames.append(img)
    batch = np.stack(frames)
    tmp = Path(hc._tmp())
    mtcnn = MTCNN(image_size=96, margin=8, keep_all=True, thresholds=[0.2, 0.2, 0.2], min_face_size=20, device=dev)
    one = MTCNN(image_size=96, thresholds=[0.2, 0.2, 0.2], select_largest=False, post_process=True, device=dev)
    resnet = InceptionResnetV1(classify=True, num_classes=8, device=dev).eval()

    def detect():
        boxes, probs, points = mtcnn.detect(batch, landmarks=True)
        faces = mtcnn(batch)
        single = one(list(batch), save_path=[str(tmp / f"face{i}.png") for i in range(len(batch))])
        crops = [f for f in single if f is not None]
        n_faces = [0 if b is None else len(b) for b in boxes]
        with torch.no_grad():
            logits = resnet(torch.stack(crops).to(dev)) if crops else None
        print(f"faces per frame {n_faces}, crops {[None if f is None else tuple(f.shape) for f in faces]}, "
              f"single {len(crops)}, logits {None if logits is None else tuple(logits.shape)}")

    from torch.utils.data import DataLoader, TensorDataset
    g = torch.Generator().manual_seed(0)
    imgs = torch.randint(0, 256, (96, 3, 96, 96), generator=g).float()
    ys = torch.randint(0, 8, (96,), generator=g)
    loader = DataLoader(TensorDataset(fixed_image_standardization(imgs), ys), batch_size=16, shuffle=True)
    model = InceptionResnetV1(classify=True, num_classes=8, device=dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.MultiStepLR(opt, [5, 10])
    metrics = {"fps": training.BatchTimer(), "acc": training.accuracy}

    def finetune():
        model.train()
        loss, m = training.pass_epoch(model, nn.CrossEntropyLoss(), loader, opt, sched, batch_metrics=metrics,
                                      show_running=True, device=dev)
        model.eval()
        vloss, vm = training.pass_epoch(model, nn.CrossEntropyLoss(), loader, batch_metrics=metrics,
                                        show_running=False, device=dev)
        print(f"\nfinetune loss {float(loss):.3f} val {float(vloss):.3f} acc {float(vm['acc']):.2f}")
    return {"detect": detect, "finetune": finetune}


# -- reformer_pytorch: the README's ReformerLM (LSH attention, reversible layers, chunked feed-forward) wrapped in
#    TrainingWrapper: trained on synthetic token sequences with `return_loss=True`, sampled with `generate` (top-k
#    filtering, an end token); a variant with local attention heads, product-key memory, axial positional
#    embeddings, tied weights and scale norm, trained; the encoder-decoder trained and generating; the Recorder's
#    attention maps, the Autopadder on odd lengths, LSHSelfAttention alone --------------------------------------

def reformer_lm(dev):
    from reformer_pytorch import Autopadder, LSHSelfAttention, Recorder, ReformerEncDec, ReformerLM
    from reformer_pytorch.generative_tools import TrainingWrapper

    g = torch.Generator().manual_seed(0)
    seq = 256
    period = torch.randint(2, 40, (16, 1), generator=g)
    toks = ((torch.arange(seq + 1) // period + torch.arange(16).unsqueeze(1)) % 200 + 2).to(dev)  # patterned text

    lm = TrainingWrapper(ReformerLM(num_tokens=256, dim=128, depth=2, max_seq_len=seq, heads=4, bucket_size=32,
                                    n_hashes=2, causal=True, ff_chunks=4, lsh_dropout=0.1)).to(dev)
    fancy = TrainingWrapper(ReformerLM(num_tokens=256, dim=128, depth=2, max_seq_len=seq, heads=4, bucket_size=32,
                                       n_hashes=2, causal=True, n_local_attn_heads=2, pkm_layers=(1,), pkm_num_keys=32,
                                       axial_position_emb=True, axial_position_shape=(16, 16), weight_tie=True,
                                       use_scale_norm=True)).to(dev)

    def train_lm():
        loss = _fit(lm.parameters(), 3, lambda i: lm(toks[:, :seq], return_loss=True))
        lm.eval()
        with torch.no_grad():
            out = lm.generate(toks[:2, :16], 48, temperature=0.8, filter_thres=0.9, eos_token=1)
        lm.train()
        # local attention heads need whole windows: this variant is trained on full-length sequences only
        loss2 = _fit(fancy.parameters(), 3, lambda i: fancy(toks[:, :seq + 1], return_loss=True))
        print(f"plain: loss {loss.item():.3f}, generated {tuple(out.shape)}; local+pkm+axial: loss {loss2.item():.3f}")

    encdec = ReformerEncDec(dim=128, enc_num_tokens=256, enc_depth=2, enc_max_seq_len=128, dec_num_tokens=256,
                            dec_depth=2, dec_max_seq_len=128, bucket_size=16, heads=4).to(dev)
    src = toks[:8, :128]
    tgt = torch.flip(src, dims=[1])

    def encoder_decoder():
        loss = _fit(encdec.parameters(), 3, lambda i: encdec(src, tgt, return_loss=True))
        encdec.eval()
        with torch.no_grad():
            out = encdec.generate(src[:2], torch.full((2, 1), 2, dtype=torch.long, device=dev), 32, eos_token=1)
        encdec.train()
        print(f"enc-dec loss {loss.item():.3f}, generated {tuple(out.shape)}")

    plain = ReformerLM(num_tokens=256, dim=64, depth=2, max_seq_len=seq, heads=2, bucket_size=16, causal=False)
    rec = Recorder(plain).to(dev)
    pad = Autopadder(ReformerLM(num_tokens=256, dim=64, depth=1, max_seq_len=seq, heads=2, bucket_size=16)).to(dev)
    attn = LSHSelfAttention(dim=64, heads=4, bucket_size=16, n_hashes=4, causal=False).to(dev)
    x = torch.randn(4, 128, 64, generator=g).to(dev)

    def inspect():
        with torch.no_grad():
            rec(toks[:2, :seq])
            maps = rec.recordings[0]
            rec.clear()
            odd = pad(toks[:3, :197])
            y = attn(x)
        print(f"recorded {len(maps)} attention maps, autopadded {tuple(odd.shape)}, lsh {tuple(y.shape)}")
    return {"train": train_lm, "encdec": encoder_decoder, "inspect": inspect}


# -- mpc: the README's box-constrained LQR (`MPC` of `QuadCost` and `LinDx` on a batch of initial states), its
#    warm start (`u_init`), an unconstrained one-iteration LQR; iLQR on a nonlinear pendulum-like dynamics module
#    (gradients by auto-diff); imitation learning: the dynamics matrix learned by backpropagating through the
#    controller --------------------------------------------------------------------------------------------------

def mpc_control(dev):
    from mpc import mpc as M

    g = torch.Generator().manual_seed(0)
    n_batch, n_state, n_ctrl, T = 16, 4, 2, 15
    n_sc = n_state + n_ctrl
    C = torch.eye(n_sc).unsqueeze(0).unsqueeze(0).repeat(T, n_batch, 1, 1).to(dev)
    c = (torch.randn(T, n_batch, n_sc, generator=g) * 0.1).to(dev)
    A = torch.eye(n_state) + 0.1 * torch.randn(n_state, n_state, generator=g)
    Bm = torch.randn(n_state, n_ctrl, generator=g) * 0.2
    F_true = torch.cat([A, Bm], 1).unsqueeze(0).unsqueeze(0).repeat(T, n_batch, 1, 1).to(dev)
    x_init = torch.randn(n_batch, n_state, generator=g).to(dev)
    u_lower = -torch.ones(T, n_batch, n_ctrl, device=dev)
    u_upper = torch.ones(T, n_batch, n_ctrl, device=dev)

    def lqr():
        ctrl = M.MPC(n_state, n_ctrl, T, u_lower=u_lower, u_upper=u_upper, lqr_iter=20, exit_unconverged=False,
                     verbose=0, backprop=False)
        x, u, cost = ctrl(x_init, M.QuadCost(C, c), M.LinDx(F_true))
        warm = M.MPC(n_state, n_ctrl, T, u_lower=u_lower, u_upper=u_upper, u_init=u, lqr_iter=5,
                     exit_unconverged=False, backprop=False)
        x2, u2, cost2 = warm(x_init, M.QuadCost(C, c), M.LinDx(F_true))
        free = M.MPC(n_state, n_ctrl, T, lqr_iter=1, exit_unconverged=False, backprop=False)
        x3, u3, cost3 = free(x_init, M.QuadCost(C, c), M.LinDx(F_true))
        print(f"lqr cost {cost.mean().item():.3f}, |u| max {u.abs().max().item():.2f}; warm start "
              f"{cost2.mean().item():.3f}; unconstrained {cost3.mean().item():.3f}")

    class Pendulum(nn.Module):
        """x = (cos th, sin th, th_dot), u = torque: a nonlinear dynamics module, dx/dt by Euler steps."""

        def __init__(self, dt=0.05):
            super().__init__()
            self.params = nn.Parameter(torch.tensor([10.0, 1.0, 1.0]))
            self.dt = dt

        def forward(self, x, u):
            g_, m, l_ = torch.unbind(self.params)
            cos, sin, dth = torch.unbind(x, 1)
            th = torch.atan2(sin, cos)
            ddth = -3 * g_ / (2 * l_) * torch.sin(th + torch.pi) + 3.0 / (m * l_ ** 2) * u.squeeze(1)
            dth = dth + self.dt * ddth
            th = th + self.dt * dth
            return torch.stack([torch.cos(th), torch.sin(th), dth], 1)

    pend = Pendulum().to(dev)
    Tp, nb = 20, 8
    goal_w = torch.tensor([1.0, 1.0, 0.1, 0.001], device=dev)
    goal = torch.tensor([1.0, 0.0, 0.0, 0.0], device=dev)
    Cp = torch.diag(goal_w).unsqueeze(0).unsqueeze(0).repeat(Tp, nb, 1, 1)
    cp = (-goal_w * goal).unsqueeze(0).unsqueeze(0).repeat(Tp, nb, 1)
    th0 = (torch.rand(nb, generator=g) * 2 - 1).to(dev) * torch.pi
    xp0 = torch.stack([torch.cos(th0), torch.sin(th0), torch.zeros_like(th0)], 1)

    def ilqr():
        ctrl = M.MPC(3, 1, Tp, u_lower=-2 * torch.ones(Tp, nb, 1, device=dev),
                     u_upper=2 * torch.ones(Tp, nb, 1, device=dev), lqr_iter=15, exit_unconverged=False,
                     grad_method=M.GradMethods.AUTO_DIFF, linesearch_decay=0.2, max_linesearch_iter=5, eps=1e-2)
        x, u, cost = ctrl(xp0, M.QuadCost(Cp, cp), pend)
        print(f"pendulum ilqr cost {cost.mean().item():.3f}, final cos {x[-1, :, 0].mean().item():.3f}")

    with torch.no_grad():
        ref = M.MPC(n_state, n_ctrl, T, u_lower=u_lower, u_upper=u_upper, lqr_iter=20, exit_unconverged=False,
                    backprop=False)
        _, u_star, _ = ref(x_init, M.QuadCost(C, c), M.LinDx(F_true))
    F_hat = (F_true[:1, :1] + 0.1 * torch.randn(1, 1, n_state, n_sc, generator=g).to(dev)).requires_grad_()

    def imitate():
        def loss_of(i):
            ctrl = M.MPC(n_state, n_ctrl, T, u_lower=u_lower, u_upper=u_upper, lqr_iter=10, exit_unconverged=False)
            _, u, _ = ctrl(x_init, M.QuadCost(C, c), M.LinDx(F_hat.expand(T, n_batch, -1, -1)))
            return (u - u_star).pow(2).mean()
        loss = _fit([F_hat], 3, loss_of, lr=1e-2)
        print(f"imitation loss {loss.item():.4f}")
    return {"lqr": lqr, "ilqr": ilqr, "imitate": imitate}


# -- sb3_contrib: the README's algorithms on gymnasium's classic-control tasks, on the device (`device=`): TQC and
#    CrossQ on Pendulum, QR-DQN on CartPole, TRPO (its conjugate-gradient step and line search) and ARS, RecurrentPPO
#    with an LSTM policy and MaskablePPO on its own invalid-action environment with `get_action_masks`; each learns a
#    few hundred steps, then `predict` (with LSTM states / masks) and `evaluate_policy` ----------------------------

def sb3_contrib_agents(dev):
    import gymnasium as gym
    from sb3_contrib import ARS, QRDQN, TQC, TRPO, CrossQ, MaskablePPO, RecurrentPPO
    from sb3_contrib.common.envs import InvalidActionEnvDiscrete
    from sb3_contrib.common.maskable.evaluation import evaluate_policy as masked_evaluate
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.evaluation import evaluate_policy

    def off_policy():
        tqc = TQC("MlpPolicy", "Pendulum-v1", learning_starts=64, batch_size=64, buffer_size=2000,
                  top_quantiles_to_drop_per_net=2,
                  policy_kwargs={"n_critics": 2, "n_quantiles": 10, "net_arch": [64, 64]}, device=dev, seed=0)
        tqc.learn(total_timesteps=160)
        cq = CrossQ("MlpPolicy", "Pendulum-v1", learning_starts=64, batch_size=64, buffer_size=2000,
                    policy_kwargs={"net_arch": {"pi": [64, 64], "qf": [128, 128]}}, device=dev, seed=0)
        cq.learn(total_timesteps=160)
        qr = QRDQN("MlpPolicy", "CartPole-v1", learning_starts=64, batch_size=32, buffer_size=2000,
                   target_update_interval=50, train_freq=4, exploration_fraction=0.5,
                   policy_kwargs={"n_quantiles": 25, "net_arch": [64]}, device=dev, seed=0)
        qr.learn(total_timesteps=240)
        mean, std = evaluate_policy(tqc, tqc.get_env(), n_eval_episodes=1)
        obs = qr.get_env().reset()
        act, _ = qr.predict(obs, deterministic=True)
        print(f"tqc eval {mean:.1f}, crossq, qrdqn action {act.tolist()}")

    def on_policy():
        trpo = TRPO("MlpPolicy", "CartPole-v1", n_steps=128, batch_size=64, n_critic_updates=3, cg_max_steps=5,
                    policy_kwargs={"net_arch": [32, 32]}, device=dev, seed=0)
        trpo.learn(total_timesteps=256)
        ars = ARS("LinearPolicy", "Pendulum-v1", n_delta=4, n_top=2, n_eval_episodes=1, device=dev, seed=0)
        ars.learn(total_timesteps=1200)
        rppo = RecurrentPPO("MlpLstmPolicy", "CartPole-v1", n_steps=64, batch_size=32, n_epochs=2,
                            policy_kwargs={"lstm_hidden_size": 32, "net_arch": [32]}, device=dev, seed=0)
        rppo.learn(total_timesteps=128)
        env = rppo.get_env()
        obs = env.reset()
        state, start = None, [True]
        for _ in range(20):
            act, state = rppo.predict(obs, state=state, episode_start=start, deterministic=True)
            obs, _, done, _ = env.step(act)
            start = done
        print(f"trpo, ars, recurrent ppo lstm state {tuple(state[0].shape)}")

    def masked():
        env = InvalidActionEnvDiscrete(dim=20, n_invalid_actions=10)
        model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=2, gamma=0.4, device=dev, seed=0)
        model.learn(total_timesteps=128)
        mean, _ = masked_evaluate(model, env, n_eval_episodes=2, warn=False)
        obs, _ = env.reset()
        act, _ = model.predict(obs, action_masks=get_action_masks(env))
        print(f"maskable ppo eval {mean:.2f}, action {int(act)} {gym.__version__}")
    return {"off_policy": off_policy, "on_policy": on_policy, "masked": masked}


# -- openunmix: the README's separation of a stereo mixture by OpenUnmix target models (random weights, smaller
#    than the released ones) in a `Separator` with multichannel Wiener filtering (iterations, residual, soft masks),
#    `to_dict`; `make_filterbanks` and `ComplexNorm`; `wiener` on its own; a training step as its train.py does
#    (spectrogram encoder, MSE on magnitudes, `EarlyStopping`, `AverageMeter`), `bandwidth_to_max_bin` ------------

def openunmix_separation(dev):
    from openunmix import utils as uu
    from openunmix.filtering import wiener
    from openunmix.model import ComplexNorm, OpenUnmix, Separator
    from openunmix.transforms import make_filterbanks

    rate, n_fft, n_hop = 16000.0, 1024, 256
    nb_bins = n_fft // 2 + 1
    max_bin = int(uu.bandwidth_to_max_bin(rate, n_fft, 6000))
    g = torch.Generator().manual_seed(0)
    t = torch.arange(int(rate * 2)) / rate
    voice = torch.sin(2 * torch.pi * 220 * t) * (torch.sin(2 * torch.pi * 2 * t) > 0)
    drums = torch.randn(t.shape[0], generator=g) * (torch.sin(2 * torch.pi * 4 * t) > 0.9)
    sources = torch.stack([voice, drums])  # (source, time)
    mix = (sources.unsqueeze(1) * torch.tensor([[0.7], [0.4]]).unsqueeze(0)).sum(0)  # stereo, (2, time)
    audio = torch.stack([mix, mix.flip(-1)]).to(dev)  # (batch, channel, time)
    targets = {name: OpenUnmix(nb_bins=nb_bins, nb_channels=2, hidden_size=64, max_bin=max_bin).to(dev).eval()
               for name in ("vocals", "drums")}

    def separate():
        outs = []
        for kw in ({"niter": 1}, {"niter": 2, "residual": True}, {"niter": 0, "softmask": True}):
            sep = Separator(targets, sample_rate=rate, n_fft=n_fft, n_hop=n_hop, nb_channels=2, wiener_win_len=40,
                            **kw).to(dev)
            with torch.no_grad():
                est = sep(audio)
            d = sep.to_dict(est, aggregate_dict={"accompaniment": ["drums"]} if "residual" not in kw else None)
            outs.append((tuple(est.shape), sorted(d)))
        stft, istft = make_filterbanks(n_fft=n_fft, n_hop=n_hop, center=True, sample_rate=rate, method="torch")
        stft, istft = stft.to(dev), istft.to(dev)
        X = stft(audio)  # (batch, channel, bins, frames, 2)
        mag = ComplexNorm(mono=False)(X)
        V = torch.stack([mag * 0.6, mag * 0.4], -1).permute(0, 3, 2, 1, 4)[0]  # (frames, bins, channels, sources)
        Y = wiener(V, X[0].permute(2, 1, 0, 3), iterations=2, residual=True)
        print(f"separations {outs}, wiener {tuple(Y.shape)}, istft {tuple(istft(X, length=audio.shape[-1]).shape)}")

    model = OpenUnmix(nb_bins=nb_bins, nb_channels=2, hidden_size=64, max_bin=max_bin).to(dev)
    stft, _ = make_filterbanks(n_fft=n_fft, n_hop=n_hop, center=True, sample_rate=rate, method="torch")
    encoder = nn.Sequential(stft, ComplexNorm(mono=False)).to(dev)
    voc = torch.stack([sources[0] * 0.7, sources[0] * 0.7]).unsqueeze(0).repeat(2, 1, 1).to(dev)
    stopper = uu.EarlyStopping(patience=2)
    meter = uu.AverageMeter()

    def train():
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for _ in range(3):
            X, Y = encoder(audio), encoder(voc)
            Y_hat = model(X)
            loss = F.mse_loss(Y_hat, Y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            meter.update(loss.item(), Y.size(1))
            stop = stopper.step(meter.avg)
        print(f"openunmix train loss {meter.avg:.4f}, stop {stop}")
    return {"separate": separate, "train": train}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _np_aliases():
    """numpy 2 removed `np.int` and `np.float`, which the MAML repository's loader reads: given back as the builtins."""
    import numpy as np
    if "int" not in np.__dict__:
        np.int = int
    if "float" not in np.__dict__:
        np.float = float


def _omniglot(root: Path, n_cls: int = 1224, seed: int = 0) -> None:
    """The `omniglot.npy` cache that MAML-Pytorch's OmniglotNShot loads when present (classes x 20 drawings x 1 x 28
    x 28, in [0, 1]): each class a random stroke template, its drawings shifted and noisy copies. The first 1200
    classes train, the rest test."""
    import numpy as np
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    tmpl = (rng.random((n_cls, 1, 1, 28, 28)) > 0.85).astype(np.float32)
    tmpl = np.clip(tmpl + np.roll(tmpl, 1, -1) + np.roll(tmpl, 1, -2), 0, 1)
    shifts = rng.integers(-2, 3, (20, 2))
    x = np.concatenate([np.roll(tmpl, tuple(s), axis=(-2, -1)) for s in shifts], axis=1)
    x = np.clip(x + rng.normal(0, 0.1, x.shape).astype(np.float32), 0, 1)
    np.save(root / "omniglot.npy", x.astype(np.float32))


def _maml(dev, name: str, extra: list):
    """dragen1860/MAML-Pytorch's omniglot_train.py as is (`--epoch 20 --task_num 4 --update_step 3
    --update_step_test 5`, the cache in a temporary folder) on 1224 synthetic classes. The script asks for cuda (GPU
    only). The window spans the 2nd to the 40th `torch.autograd.grad`: the rest of the first meta-batch's inner loops,
    its meta-update (`backward`, the step), and the test pass that follows it at step 0 (fine-tuning one task at a
    time, accuracies read with `.item()`)."""
    root = _need_repo("maml")
    tmp = Path(hc._tmp())
    _omniglot(tmp / "omniglot")
    _np_aliases()
    argv = ["--epoch", "20", "--task_num", "4", "--update_step", "3", "--update_step_test", "5", *extra]

    def window():
        with hc.window_on(torch.autograd, "grad", name, "train", dev, 2, 40, stop_script=True):
            hc.run_script(root / "omniglot_train.py", argv, str(tmp))
    return {"train_window": window}


def maml_5way(dev):
    """5-way 1-shot, 15 queries a class (the script's defaults)."""
    return _maml(dev, "maml.5way", [])


def maml_20way(dev):
    """20-way 5-shot with 5 queries a class."""
    return _maml(dev, "maml.20way", ["--n_way", "20", "--k_spt", "5", "--k_qry", "5"])


def _images(root: Path, n: int = 96, size: int = 40, seed: int = 0) -> None:
    """An ImageFolder of `n` synthetic RGB images (smooth colour gradients with a few discs) in one class folder."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(seed)
    d = root / "class0"
    d.mkdir(parents=True, exist_ok=True)
    yy, xx = np.mgrid[:size, :size] / size
    for i in range(n):
        c0, c1 = rng.random(3), rng.random(3)
        img = (c0 * (1 - xx[..., None]) + c1 * yy[..., None]) / 2
        for _ in range(3):
            cy, cx, r = rng.random(3) * [1, 1, 0.3]
            img[(yy - cy) ** 2 + (xx - cx) ** 2 < r ** 2] = rng.random(3)
        Image.fromarray((img * 255).clip(0, 255).astype(np.uint8)).save(d / f"{i:03d}.png")


def _glow(dev, name: str, extra: list):
    """rosinality/glow-pytorch's train.py as is (`--batch 16 --n_flow 8 --n_block 3 --img_size 32`, its sample and
    checkpoint folders in a temporary folder) on 96 synthetic 40x40 images: the data-dependent ActNorm
    initialisation at the first iteration, then a training step each. The window spans the 2nd to the 12th
    `backward` (the script's first sample is written at step 100, past it)."""
    root = _need_repo("glow")
    tmp = Path(hc._tmp())
    _images(tmp / "images")
    (tmp / "sample").mkdir()
    (tmp / "checkpoint").mkdir()
    argv = ["--batch", "16", "--iter", "200", "--n_flow", "8", "--n_block", "3", "--img_size", "32", *extra,
            str(tmp / "images")]

    def window():
        with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 12, stop_script=True):
            hc.run_script(root / "train.py", argv, str(tmp))
    return {"train_window": window}


def glow_additive(dev):
    """Additive coupling with LU-decomposed invertible 1x1 convolutions (the defaults)."""
    return _glow(dev, "glow.additive", [])


def glow_affine(dev):
    """Affine coupling (`--affine`), LU-decomposed convolutions. (Its plain 1x1 convolutions, `--no_lu`, call
    `torch.qr`, removed from torch: not run.)"""
    return _glow(dev, "glow.affine", ["--affine"])


MODELS = [
    # name, package, builder
    ("pomegranate.models", "pomegranate", pomegranate_models),
    ("diffsort.ranking", "diffsort", diffsort_ranking),
    ("torch_ppr.pagerank", "torch_ppr", torch_ppr_pagerank),
    ("facenet_pytorch.faces", "facenet_pytorch", facenet_faces),
    ("reformer_pytorch.lm", "reformer_pytorch", reformer_lm),
    ("mpc.control", "mpc", mpc_control),
    ("sb3_contrib.agents", "sb3_contrib", sb3_contrib_agents),
    ("openunmix.separation", "openunmix", openunmix_separation),
    ("maml.5way", "maml", maml_5way),
    ("maml.20way", "maml", maml_20way),
    ("glow.additive", "glow", glow_additive),
    ("glow.affine", "glow", glow_affine),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh15", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
