"""Record the syncs of a forty-first set, `fresh42` (a sealed test set): libraries and training code nobody here read.

`fresh42` is recorded the same way as `fresh9` to `fresh41` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions and docs' examples, the names, signatures and docstrings they
export), on synthetic data with random weights, before anyone ran the linter on this code or read it for syncs.
Every input is put on the device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; bert-score's
`score(device=)` / `BERTScorer(device=)`, ColorVideoVDP's `cvvdp(device=)`, engression's `engression(device=)`,
fastglmpca's `poisson(device=)`; FastICA, kornia's matchers and the optimisers take tensors and modules moved to the
device): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh42, and builds a wheel from each source
  distribution named in SDISTS), names a to l: bert-score (BERTScore: tokenisation, greedy matching of contextual
  embeddings, idf weights, several references; on a small randomly initialised BERT saved to a folder),
  cvvdp (ColorVideoVDP: a perceptual image / video quality metric on images, its display models and its loss),
  engression (distributional regression by the energy score: fits, validation-based stopping, predictions,
  quantiles, samples, generalised engression of discrete responses), fastica-torch (FastICA: parallel and deflation
  extraction, contrast functions, whitening solvers), fastglmpca (Poisson GLM-PCA of count matrices by
  alternating Poisson regression: adaptive backtracking or fixed steps, SVD or random starts, projections),
  kornia-moons (conversions between kornia's local affine frames and matches and OpenCV's keypoints and matches,
  OpenCV detectors as kornia modules, drawing), came-pytorch (the
  CAME optimiser) and dog-optimizer (DoG / L-DoG and polynomial-decay iterate averaging); + ffmpeg-python and
  future (ColorVideoVDP's), kornia and kornia-rs (kornia-moons'). Their other needs (numpy, scipy,
  pandas, matplotlib, einops, transformers, opencv, imageio, huggingface-hub, tqdm, torchvision) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh42/repos/<name>:
  AberHu/Knowledge-Distillation-Zoo (train_base.py as is: a CIFAR ResNet-20 in DataParallel, top-1 / top-5 with
  `.item()`, its logging and checkpoints) and icpm/pytorch-cifar10 (main.py as is: its Solver training a
  WideResNet-28 with Adam, accuracy counted on the host with `.cpu().numpy()`), each on CIFAR-10 answered by
  torchvision's FakeData.

    python benchmarks/fresh42_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh42_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh42 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh42 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

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
BENCH_DIR = ac.REPO / ".bench" / "fresh42"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh42", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh42/repos/<name>)
REPOS = {
    "kdzoo": ("AberHu/Knowledge-Distillation-Zoo", "65470c846c1300d555815da26999cbe2b51fc815",
              ["train_base.py", "utils.py", "network.py"]),
    "cifar10solver": ("icpm/pytorch-cifar10", "1e49822683bf0800a3f4f7f0df778cb5ba6a87fe",
                      ["main.py", "misc.py", "models"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["bert-score==0.3.13", "cvvdp==0.5.7", "ffmpeg-python==0.2.0", "future==1.0.0", "engression==1.1.0",
          "fastica-torch==0.1.1", "fastglmpca==0.1.2", "kornia-moons==0.3.0", "kornia==0.9.0",
          "kornia-rs==0.2.0", "came-pytorch==0.1.3"]
# (no wheel on the index: `prepare` builds their pure-Python wheels from the source distributions)
SDISTS = ["dog-optimizer==1.0.3"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"bert_score": "bert-score", "cvvdp": "cvvdp", "engression": "engression", "fastica_torch": "fastica-torch",
         "fastglmpca": "fastglmpca", "kornia_moons": "kornia-moons", "came_pytorch": "came-pytorch",
         "dog_optimizer": "dog-optimizer", "kornia": "kornia", "transformers": "transformers", "numpy": "numpy",
         "scipy": "scipy", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh42/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh42_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


# ============================================================================================
# Libraries
# ============================================================================================

# -- bert-score: the README's `score(cands, refs, model_type=, num_layers=)` and `BERTScorer` on a small randomly
#    initialised BERT saved with its WordPiece vocabulary to a folder (the model_type a path, `num_layers` given as
#    the docs ask for models outside their table): plain and idf-weighted scores, several references per candidate,
#    all layers, a scorer reused over batches ---------------------------------------------------------------------

_WORDS = ("the a cat dog sat on mat ran fast slow big small red blue green house tree car road river sky sun moon "
          "is was and or but with from under over near far quick brown fox jumps lazy bird sings loud quiet").split()


def _tiny_bert() -> str:
    from transformers import BertConfig, BertModel, BertTokenizer
    path = os.path.join(hc._tmp(), "tiny-bert")
    os.makedirs(path)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(set(_WORDS)) + list("abcdefghijklmnopqrstuvwxyz")
    Path(path, "vocab.txt").write_text("\n".join(vocab) + "\n")
    BertTokenizer(os.path.join(path, "vocab.txt"), model_max_length=128).save_pretrained(path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=64, num_hidden_layers=3, num_attention_heads=4,
                     intermediate_size=128, max_position_embeddings=128)
    BertModel(cfg).save_pretrained(path)
    return path


def _sentences(seed, n):
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(_WORDS, int(rng.integers(4, 14)))) for _ in range(n)]


def bertscore_metric(dev):
    import bert_score
    from bert_score import BERTScorer

    path = _tiny_bert()

    def plain():
        for step in range(3):
            cands, refs = _sentences(step, 24), _sentences(step + 10, 24)
            P, R, F1 = bert_score.score(cands, refs, model_type=path, num_layers=2, batch_size=8, device=dev)
            print(f"bert-score plain {step}: F1 {F1.mean().item():.4f}")

    def idf_multi():
        refs_pool = _sentences(99, 40)
        for step in range(2):
            cands = _sentences(step + 20, 16)
            refs = [[r, refs_pool[(i + 7) % 40]] for i, r in enumerate(_sentences(step + 30, 16))]
            P, R, F1 = bert_score.score(cands, refs, model_type=path, num_layers=3, idf=True, batch_size=4,
                                        device=dev)
            print(f"bert-score idf, two references {step}: F1 {F1.mean().item():.4f}")

    def scorer():
        sc = BERTScorer(model_type=path, num_layers=2, idf=True, idf_sents=_sentences(5, 50), batch_size=8,
                        device=dev)
        for step in range(3):
            P, R, F1 = sc.score(_sentences(step + 40, 20), _sentences(step + 50, 20))
            print(f"scorer {step}: P {P.mean().item():.4f} R {R.mean().item():.4f}")
        every = BERTScorer(model_type=path, num_layers=2, all_layers=True, batch_size=8, device=dev)
        P, R, F1 = every.score(_sentences(60, 12), _sentences(61, 12))
        print(f"all layers: {tuple(F1.shape)}")
        import matplotlib
        matplotlib.use("Agg")
        sc.plot_example(_sentences(70, 1)[0], _sentences(71, 1)[0], fname=os.path.join(hc._tmp(), "sim.png"))

    return {"plain": plain, "idf_multi": idf_multi, "scorer": scorer}


# -- cvvdp (ColorVideoVDP): the README's Python interface, `pycvvdp.cvvdp(display_name=, device=)` and
#    `predict(test, ref, dim_order=)` on images (tensors on the device), and its differentiable `loss` in a few steps
#    of an image reconstruction (its examples' use); a short video with a heat map was recorded in the first GPU
#    call and cut before the second, to keep cvvdp under 40% of the set's counted lines ---------------------------

def _cvvdp_pair(seed, shape, noise):
    g = torch.Generator().manual_seed(seed)
    ref = torch.rand(shape, generator=g)
    ref = F.avg_pool2d(ref.movedim(-1, -3).reshape(-1, 3, *shape[-3:-1]), 5, 1, 2).reshape(*shape[:-1], 3) \
        if len(shape) == 4 else ref
    test = (ref + noise * torch.randn(shape, generator=g)).clamp(0, 1)
    return test, ref


def cvvdp_quality(dev):
    import pycvvdp

    def images():
        metric = pycvvdp.cvvdp(display_name="standard_fhd", device=dev)
        for step, noise in enumerate((0.02, 0.08, 0.2)):
            test, ref = _cvvdp_pair(step, (96, 128, 3), noise)
            jod, stats = metric.predict(test.to(dev), ref.to(dev), dim_order="HWC")
            print(f"cvvdp image {step}: JOD {float(jod):.3f}")

    def loss():
        metric = pycvvdp.cvvdp(display_name="standard_fhd", device=dev)
        _, ref = _cvvdp_pair(4, (64, 64, 3), 0.0)
        ref = ref.to(dev)
        x = torch.full_like(ref, 0.5).requires_grad_(True)
        opt = torch.optim.Adam([x], lr=0.05)
        for _ in range(4):
            opt.zero_grad()
            out = metric.loss(x.clamp(0, 1), ref, dim_order="HWC") + F.l1_loss(x, ref)
            out.backward()
            opt.step()
        print(f"cvvdp loss: {float(out):.4f}")

    return {"images": images, "loss": loss}


# -- engression: the README's `engression(x, y, lr=, num_epochs=, batch_size=, device=)` on its
#    `preanm_simulator` data, `summary`, `eval_loss`, `predict` (mean, median, quantiles), `sample`; validation
#    data choosing the iterations; generalised engression of multiclass and ordinal responses ------------------

def engression_regression(dev):
    from engression import engression
    from engression.data.simulator import preanm_simulator

    def continuous():
        x, y = preanm_simulator("square", n=1000, x_lower=0, x_upper=2, noise_std=1, train=True, device=dev)
        x_eval, y_med, y_mean = preanm_simulator("square", n=300, x_lower=0, x_upper=4, noise_std=1, train=False,
                                                 device=dev)
        fit = engression(x, y, lr=0.01, num_epochs=20, batch_size=500, device=dev)
        fit.summary()
        print("L2", fit.eval_loss(x_eval, y_mean, loss_type="l2"), "cor", fit.eval_loss(x_eval, y_mean,
                                                                                        loss_type="cor"))
        fit.predict(x_eval, target="mean")
        fit.predict(x_eval, target="median")
        q = fit.predict(x_eval, target=[0.025, 0.5, 0.975])
        s = fit.sample(x_eval, sample_size=50)
        print(f"engression continuous: quantiles {type(q).__name__}, samples {type(s).__name__}")

    def validation():
        x, y = preanm_simulator("cubic", n=800, x_lower=0, x_upper=2, noise_std=0.5, train=True, device=dev)
        xv, yv = preanm_simulator("cubic", n=300, x_lower=0, x_upper=2, noise_std=0.5, train=True, device=dev)
        fit = engression(x, y, x_val=xv, y_val=yv, lr=0.01, num_epochs=30, batch_size=400, device=dev)
        fit.summary()
        print("engression validation:", fit.eval_loss(xv, yv, loss_type="energy"))

    def discrete():
        g = torch.Generator().manual_seed(0)
        x = torch.randn(600, 3, generator=g)
        cls = (x[:, 0] + 0.5 * torch.randn(600, generator=g) > 0).long() + (x[:, 1] > 0.5).long()
        y = F.one_hot(cls, 3).float()
        fit = engression(x.to(dev), y.to(dev), data_type="multiclass", num_epochs=10, batch_size=300, device=dev)
        p = fit.predict(x[:200].to(dev), target="mean")
        lev = (x[:, :1] * 1.5 + 3).round().clamp(1, 5)
        fit2 = engression(x.to(dev), lev.to(dev), data_type="ordinal:5", num_epochs=10, batch_size=300, device=dev)
        d = fit2.sample(x[:100].to(dev), sample_size=20)
        print(f"engression discrete: {type(p).__name__}, {type(d).__name__}")

    return {"continuous": continuous, "validation": validation, "discrete": discrete}


# -- fastica-torch: the README's `FastICA(n_components=, algorithm=, whiten=, fun=, max_iter=, tol=,
#    whiten_solver=, random_state=)` on mixed signals on the device: fit_transform, transform, inverse_transform,
#    parallel and deflation extraction, logcosh / exp / cube contrasts --------------------------------------------

def _mixed(seed, n=4000, k=4, d=6):
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 8, n)
    s = torch.stack([torch.sin(2 * t), torch.sign(torch.sin(3 * t)), (t * 1.7) % 2 - 1,
                     torch.rand(n, generator=g) - 0.5][:k], 1)
    return s @ torch.randn(k, d, generator=g)


def fastica_unmix(dev):
    from fastica_torch import FastICA

    def run(**kw):
        def go():
            for step in range(3):
                X = _mixed(step).to(dev)
                ica = FastICA(random_state=step, **kw)
                S = ica.fit_transform(X)
                S_new = ica.transform(X[:500])
                back = ica.inverse_transform(S)
                print(f"fastica {kw} {step}: {tuple(S.shape)} {tuple(S_new.shape)}, iterations {ica.n_iter_}, "
                      f"error {(back - X).abs().mean().item():.2e}")
        return go

    return {"parallel": run(n_components=4, fun="logcosh", max_iter=200, tol=1e-4),
            "deflation": run(n_components=3, algorithm="deflation", fun="exp", max_iter=100, tol=1e-4),
            "cube_eigh": run(n_components=4, fun="cube", whiten="arbitrary-variance", whiten_solver="eigh",
                             max_iter=150, tol=1e-5)}


# -- fastglmpca: the README's `fastglmpca.poisson(X, n_pcs=, max_iter=, tol=, device=, return_model=, ...)` on
#    Poisson counts on the device (alternating Poisson regression with its adaptive, backtracking step size, or a
#    fixed one), `model.U` and `model.project(Y)` of new counts; SVD and random initialisation, with and without the
#    size factors and intercepts --------------------------------------------------------------------------------

def _counts(seed, n=300, p=120, k=4):
    g = torch.Generator().manual_seed(seed)
    rate = torch.exp(0.6 * torch.randn(n, k, generator=g) @ torch.randn(k, p, generator=g) + 0.5)
    return torch.poisson(rate, generator=g)


def glmpca_poisson(dev):
    import fastglmpca

    def run(**kw):
        def go():
            for step in range(2):
                X = _counts(step).to(dev)
                model = fastglmpca.poisson(X, device=dev, progress_bar=False, seed=step, return_model=True, **kw)
                Y = model.project(_counts(step + 5, n=60).to(dev))
                print(f"glmpca {kw} {step}: U {tuple(model.U.shape)}, projected {tuple(Y.shape)}")
        return go

    def sparse():
        import scipy.sparse as sp
        for step in range(2):
            X = sp.csr_matrix(_counts(step + 10).numpy())
            model = fastglmpca.poisson(X, n_pcs=4, max_iter=25, device=dev, progress_bar=False, seed=step,
                                       return_model=True)
            U = fastglmpca.poisson(X, n_pcs=3, max_iter=15, device=dev, progress_bar=False, seed=step)
            print(f"glmpca sparse {step}: {tuple(model.U.shape)}, {type(U).__name__}")

    return {"adaptive": run(n_pcs=5, max_iter=40, tol=1e-4),
            "fixed_random": run(n_pcs=4, max_iter=30, init="random", adaptive_lr=False, learning_rate=0.3,
                                num_ccd_iter=2),
            "plain": run(n_pcs=3, max_iter=20, col_size_factor=False, row_intercept=False, slowing_loglik=False,
                         batch_size_rows=128, batch_size_cols=64),
            "sparse": sparse}


# -- kornia-moons: its README's keypoint and match conversions (OpenCV SIFT / ORB keypoints <-> LAFs on the device,
#    kornia's `match_snn` on device descriptors <-> `cv2.DMatch`), OpenCV detectors as kornia modules on a device
#    image, and `draw_LAF_matches` (Agg) -------------------------------------------------------------------------

def _scene(seed, h=240, w=320):
    import cv2
    rng = np.random.default_rng(seed)
    img = np.full((h, w, 3), 255, np.uint8)
    for _ in range(40):
        c = tuple(int(v) for v in rng.integers(0, 255, 3))
        p = (int(rng.integers(0, w)), int(rng.integers(0, h)))
        if rng.random() < 0.5:
            cv2.circle(img, p, int(rng.integers(5, 30)), c, -1)
        else:
            cv2.rectangle(img, p, (p[0] + int(rng.integers(10, 50)), p[1] + int(rng.integers(10, 50))), c, -1)
    return img


def moons_features(dev):
    import cv2
    import kornia
    import matplotlib
    matplotlib.use("Agg")
    import kornia_moons.feature as KMF
    from kornia_moons.viz import draw_LAF_matches

    def sift_matches():
        det = cv2.SIFT_create(150)
        Hgt = np.array([[0.9, 0.1, 10], [-0.1, 0.9, 10], [0, 0, 1]])
        for step in range(3):
            img1 = _scene(step)
            img2 = cv2.warpPerspective(img1, Hgt, img1.shape[:2][::-1], borderValue=(255, 255, 255))
            kps1, d1 = det.detectAndCompute(img1, None)
            kps2, d2 = det.detectAndCompute(img2, None)
            lafs1 = KMF.laf_from_opencv_SIFT_kpts(kps1, device=dev)
            lafs2 = KMF.laf_from_opencv_SIFT_kpts(kps2, device=dev)
            dists, idxs = kornia.feature.match_snn(torch.from_numpy(d1).float().to(dev),
                                                   torch.from_numpy(d2).float().to(dev), 0.95)
            H, mask = cv2.findHomography(
                kornia.feature.get_laf_center(lafs1[:, idxs[:, 0]]).cpu().numpy().reshape(-1, 2),
                kornia.feature.get_laf_center(lafs2[:, idxs[:, 1]]).cpu().numpy().reshape(-1, 2),
                cv2.USAC_MAGSAC, 0.5)
            back = KMF.opencv_SIFT_kpts_from_laf(lafs1)
            cvm = KMF.cv2_matches_from_kornia(dists, idxs)
            d_back, i_back = KMF.kornia_matches_from_cv2(cvm, device=dev)
            if step == 0 and H is not None:
                draw_LAF_matches(lafs1, lafs2, idxs, img1, img2, mask,
                                 draw_dict={"inlier_color": (0.2, 1, 0.2), "tentative_color": (0.8, 0.8, 0),
                                            "feature_color": None, "vertical": False}, H=H)
            print(f"moons sift {step}: {len(back)} keypoints back, {len(cvm)} matches, {tuple(i_back.shape)}")

    def orb_roundtrip():
        det = cv2.ORB_create(300)
        for step in range(3):
            img = _scene(step + 10)
            kps, descs = det.detectAndCompute(img, None)
            lafs = KMF.laf_from_opencv_ORB_kpts(kps, device=dev)
            lafs = kornia.feature.scale_laf(lafs, 1.2)
            back = KMF.opencv_ORB_kpts_from_laf(lafs)
            print(f"moons orb {step}: {len(kps)} -> {len(back)}")

    def detector_modules():
        det = KMF.OpenCVDetectorKornia(cv2.SIFT_create(200)).to(dev)
        feat = KMF.OpenCVFeatureKornia(cv2.SIFT_create(200)).to(dev)
        for step in range(3):
            timg = kornia.image_to_tensor(_scene(step + 20), False).float().div(255).to(dev)
            gray = kornia.color.rgb_to_grayscale(timg)
            lafs, resp = det(gray)
            lafs2, resp2, descs = feat(gray)
            print(f"moons detector {step}: {tuple(lafs.shape)}, {tuple(descs.shape)}")

    def viz():
        import matplotlib.pyplot as plt
        from kornia_moons.viz import draw_point_matches, visualize_LAF
        det = cv2.SIFT_create(80)
        for step in range(2):
            img = _scene(step + 30)
            kps, descs = det.detectAndCompute(img, None)
            lafs = KMF.laf_from_opencv_SIFT_kpts(kps, device=dev)
            timg = kornia.image_to_tensor(img, False).float().div(255).to(dev)
            visualize_LAF(timg, lafs, 0)
            pts = kornia.feature.get_laf_center(lafs)[0]
            draw_point_matches(pts, pts + 2.0, img, img, draw_dict={"inlier_color": (0.2, 1, 0.2),
                                                                  "tentative_color": (0.8, 0.8, 0), "vertical": True})
            plt.close("all")
            print(f"moons viz {step}: {len(kps)} keypoints")

    return {"sift_matches": sift_matches, "orb_roundtrip": orb_roundtrip, "detector_modules": detector_modules,
            "viz": viz}


# -- came-pytorch and dog-optimizer: their READMEs' optimisers (`CAME(params, lr=, weight_decay=, betas=, eps=)`,
#    `DoG(params)`, `LDoG(params, reps_rel=)`, `PolynomialDecayAverager(model)` stepped after each optimiser step)
#    training a small convolutional classifier and a small transformer on synthetic batches ----------------------

class _SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(3, 16, 3, padding=1), nn.Conv2d(16, 32, 3, padding=1)
        self.bn = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.bn(self.c2(x))), 2)
        return self.fc(x.flatten(1))


def _tiny_lm():
    layer = nn.TransformerEncoderLayer(32, 4, 64, batch_first=True)
    return nn.ModuleDict({"emb": nn.Embedding(50, 32), "enc": nn.TransformerEncoder(layer, 2),
                          "out": nn.Linear(32, 50)})


def _train(model, opt, dev, kind, steps, after=None):
    g = torch.Generator().manual_seed(0)
    for _ in range(steps):
        opt.zero_grad()
        if kind == "cnn":
            x, y = torch.randn(32, 3, 32, 32, generator=g).to(dev), torch.randint(0, 10, (32,), generator=g).to(dev)
            loss = F.cross_entropy(model(x), y)
        else:
            tok = torch.randint(0, 50, (16, 24), generator=g).to(dev)
            h = model["enc"](model["emb"](tok[:, :-1]))
            loss = F.cross_entropy(model["out"](h).flatten(0, 1), tok[:, 1:].flatten())
        loss.backward()
        opt.step()
        if after is not None:
            after()
    return loss


def came_optimise(dev):
    from came_pytorch import CAME

    def cnn():
        model = _SmallCNN().to(dev)
        opt = CAME(model.parameters(), lr=2e-4, weight_decay=1e-2, betas=(0.9, 0.999, 0.9999), eps=(1e-30, 1e-16))
        print("came cnn:", float(_train(model, opt, dev, "cnn", 6)))

    def lm():
        model = _tiny_lm().to(dev)
        opt = CAME(model.parameters(), lr=1e-3, weight_decay=0.0)
        print("came lm:", float(_train(model, opt, dev, "lm", 6)))

    return {"cnn": cnn, "lm": lm}


def dog_optimise(dev):
    from dog import DoG, LDoG, PolynomialDecayAverager

    def dog_avg():
        model = _SmallCNN().to(dev)
        opt = DoG(model.parameters(), reps_rel=1e-4)
        avg = PolynomialDecayAverager(model)
        loss = _train(model, opt, dev, "cnn", 6, after=avg.step)
        with torch.no_grad():
            out = avg.averaged_model(torch.randn(8, 3, 32, 32).to(dev))
        print("dog:", float(loss), tuple(out.shape))

    def ldog():
        model = _tiny_lm().to(dev)
        opt = LDoG(model.parameters(), reps_rel=1e-6, weight_decay=1e-4)
        print("ldog:", float(_train(model, opt, dev, "lm", 6)))

    return {"dog_avg": dog_avg, "ldog": ldog}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def kdzoo_train(dev):
    """AberHu/Knowledge-Distillation-Zoo's train_base.py as is (`--data_name cifar10 --net_name resnet20`: its CIFAR
    ResNet-20 in DataParallel, `.cuda()` on the GPU only (`--cuda 0` on the CPU), SGD with Nesterov momentum, top-1 /
    top-5 accuracy with `.item()`, its logging and checkpoints), two epochs of batch 64, run from a temporary folder,
    CIFAR-10 answered by torchvision's FakeData. The window spans the 2nd to the 14th `backward`: training steps
    and the epoch's end (the test pass, the checkpoint)."""
    root = _need_repo("kdzoo")
    tmp = hc._tmp()
    argv = ["--data_name", "cifar10", "--net_name", "resnet20", "--epochs", "2", "--batch_size", "64",
            "--print_freq", "5", "--save_root", os.path.join(tmp, "results"), "--img_root",
            os.path.join(tmp, "data"), "--cuda", "1" if dev.type == "cuda" else "0"]

    def window():
        _accuracy_shim(root)
        try:
            with fc.fake_dataset("CIFAR10", 640, (3, 32, 32)), \
                    hc.window_on(torch.Tensor, "backward", "kdzoo.train", "train", dev, 2, 14, stop_script=True):
                hc.run_script(root / "train_base.py", argv, tmp)
        finally:
            sys.modules.pop("utils", None)
    return {"train_window": window}


def _accuracy_shim(root: Path) -> None:
    """The Knowledge-Distillation-Zoo's `utils.accuracy` flattens a transposed top-k mask with `.view(-1)`, which
    PyTorch refuses for a non-contiguous tensor; it is answered by the same top-k count with `.reshape(-1)` (the
    repository's `utils` imported from its folder first, so that train_base.py's `from utils import ...` finds it;
    the count itself is then not the repository's line), as fresh40 did for the RAdam script."""
    sys.modules.pop("utils", None)
    sys.path.insert(0, str(root))
    try:
        import utils
    finally:
        sys.path.remove(str(root))

    def accuracy(output, target, topk=(1,)):
        maxk = max(topk)
        batch_size = target.size(0)
        _, pred = output.topk(maxk, 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.reshape(1, -1).expand_as(pred))
        return [correct[:k].reshape(-1).float().sum(0).mul_(100.0 / batch_size) for k in topk]
    utils.accuracy = accuracy


def cifar10solver_train(dev):
    """icpm/pytorch-cifar10's main.py as is (its Solver: a WideResNet-28 with Adam and MultiStepLR, loss `.item()`
    and accuracy counted on the host with `.cpu().numpy()` every step, its progress bar, a test pass per epoch),
    two epochs of batch 64, run from a temporary folder, CIFAR-10 answered by torchvision's FakeData (`--cuda`
    defaults to `torch.cuda.is_available()`). The window spans the 2nd to the 14th `backward`: training steps and the
    epoch's end (the test pass)."""
    root = _need_repo("cifar10solver")
    tmp = hc._tmp()
    argv = ["--epoch", "2", "--trainBatchSize", "64", "--testBatchSize", "100", "--lr", "0.001"]

    def window():
        with fc.fake_dataset("CIFAR10", 640, (3, 32, 32)), \
                hc.window_on(torch.Tensor, "backward", "cifar10solver.train", "train", dev, 2, 14, stop_script=True):
            hc.run_script(root / "main.py", argv, tmp)
    return {"train_window": window}


MODELS = [
    # name, package, builder
    ("bertscore.metric", "bert_score", bertscore_metric),
    ("cvvdp.quality", "pycvvdp", cvvdp_quality),
    ("engression.regression", "engression", engression_regression),
    ("fastica.unmix", "fastica_torch", fastica_unmix),
    ("glmpca.poisson", "fastglmpca", glmpca_poisson),
    ("moons.features", "kornia_moons", moons_features),
    ("came.optimise", "came_pytorch", came_optimise),
    ("dog.optimise", "dog", dog_optimise),
    ("kdzoo.train", "kdzoo", kdzoo_train),
    ("cifar10solver.train", "cifar10solver", cifar10solver_train),
]


def prepare() -> None:
    """The repositories' files and the wheels (fresh_collect's prepare), a wheel built from each source
    distribution named in SDISTS, and the collector's code copied for the GPU machine."""
    import subprocess
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
    for spec in SDISTS:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", spec, "-w", str(WHEELS_DIR)],
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
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh42", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
