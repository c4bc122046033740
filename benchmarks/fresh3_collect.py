"""Record the syncs of a fourth held-out set, `fresh3`: libraries and training code nobody here has looked at.

`heldout`, `fresh` and `fresh2` (benchmarks/heldout_collect.py, fresh_collect.py, fresh2_collect.py) have
all been scored while the linter was improved. `fresh3` is recorded the same way (same recorder, same
windows inside a script's own loop; this file only adds workloads and imports the machinery) in libraries
outside the tuned set and the three held-out sets and in two public training repositories that no set and
no hand label uses. The workloads were written from the libraries' documented public API (README / docs
examples), on synthetic data with random weights, before anyone ran the linter on this code or read it
for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh3): captum, opacus,
  pytorch-minimize (torchmin), torchattacks, vector-quantize-pytorch and x-transformers (+ einx,
  frozendict, loguru, torch-einops-utils, einops 0.8.1), pytorch-tabnet, torchquad (+ autoray). Their other
  needs (scikit-learn, scipy, matplotlib, tqdm, opt-einsum, sympy) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh3/repos/<name>:
  yunjey/pytorch-tutorial (tutorials/02-intermediate/language_model on a synthetic text file and
  tutorials/03-advanced/variational_autoencoder on a synthetic MNIST, as they are), cloneofsimo/minDiffusion
  (superminddpm.py, as is, on a synthetic MNIST; it runs on its own `cuda:0`, so not in the CPU smoke mode).

    python benchmarks/fresh3_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh3_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh3 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh3 [--linter REV]`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh2_collect as f2
import fresh_collect as fc
import heldout_collect as hc
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh3" / "repos", ac.REPO / ".whl" / "fresh3"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh3/repos/<name>)
REPOS = {
    "pytorch-tutorial": ("yunjey/pytorch-tutorial", "0500d3df5a2a8080ccfccbc00aca0eacc21818db",
                         ["tutorials/02-intermediate/language_model/main.py",
                          "tutorials/02-intermediate/language_model/data_utils.py",
                          "tutorials/03-advanced/variational_autoencoder/main.py"]),
    "minDiffusion": ("cloneofsimo/minDiffusion", "00a3c8066d25a34d3d472ef6c87c7b6b238ea444", ["superminddpm.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["captum==0.9.0", "opacus==1.6.0", "pytorch-minimize==0.1.0", "torchattacks==3.5.1",
          "vector-quantize-pytorch==1.32.0", "x-transformers==2.31.10", "einx==0.4.3", "frozendict==2.5.1",
          "loguru==0.7.3", "torch-einops-utils==0.2.0", "pytorch-tabnet==4.1.0", "torchquad==0.6.0",
          "autoray==0.11.0",
          # torch-einops-utils wants einops >= 0.8.1: carried so as not to depend on the image's
          "einops==0.8.1"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"captum": "captum", "opacus": "opacus", "pytorch_minimize": "pytorch-minimize",
         "torchattacks": "torchattacks", "vector_quantize_pytorch": "vector-quantize-pytorch",
         "x_transformers": "x-transformers", "torch_einops_utils": "torch-einops-utils", "einx": "einx",
         "pytorch_tabnet": "pytorch-tabnet", "torchquad": "torchquad", "einops": "einops",
         "scikit_learn": "scikit-learn", "torchvision": "torchvision", "scipy": "scipy", "numpy": "numpy"}

_opt = ac._opt


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


class _SmallCNN(nn.Module):
    """A CIFAR-sized classifier; every activation its own module (DeepLift and guided backprop want that)."""

    def __init__(self, classes: int = 10, norm=None):
        super().__init__()
        self.conv1, self.relu1 = nn.Conv2d(3, 16, 3, padding=1), nn.ReLU()
        self.norm1 = norm(16) if norm else nn.Identity()
        self.pool = nn.MaxPool2d(2)
        self.conv2, self.relu2 = nn.Conv2d(16, 32, 3, padding=1), nn.ReLU()
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = self.pool(self.norm1(self.relu1(self.conv1(x))))
        return self.fc(self.gap(self.relu2(self.conv2(x))).flatten(1))


# ============================================================================================
# Libraries
# ============================================================================================

# -- captum: gradient, layer and perturbation attributions of an image classifier (README, tutorials)

def captum_attr(dev):
    from captum.attr import (
        DeepLift,
        FeatureAblation,
        GradientShap,
        GuidedBackprop,
        IntegratedGradients,
        KernelShap,
        LayerAttribution,
        LayerConductance,
        LayerGradCam,
        NoiseTunnel,
        Occlusion,
        Saliency,
        ShapleyValueSampling,
    )
    from captum.metrics import infidelity, sensitivity_max

    net = _SmallCNN().to(dev).eval()
    x = torch.rand(4, 3, 32, 32, device=dev)
    target = torch.randint(0, 10, (4,), device=dev)
    # 16 superpixels of 8x8, shared by the channels: the features the perturbation methods switch off
    mask = (torch.arange(4, device=dev).repeat_interleave(8)[:, None] * 4
            + torch.arange(4, device=dev).repeat_interleave(8)[None, :]).expand(1, 3, 32, 32).contiguous()

    def gradients():
        IntegratedGradients(net).attribute(x, baselines=x * 0, target=target, n_steps=16, internal_batch_size=32,
                                           return_convergence_delta=True)
        Saliency(net).attribute(x, target=target, abs=True)
        DeepLift(net).attribute(x, baselines=x * 0, target=target)
        GradientShap(net).attribute(x, baselines=0.1 * torch.randn(8, 3, 32, 32, device=dev), n_samples=8,
                                    stdevs=0.1, target=target)
        NoiseTunnel(IntegratedGradients(net)).attribute(x, nt_type="smoothgrad_sq", nt_samples=4, target=target,
                                                        n_steps=8)
        GuidedBackprop(net).attribute(x, target=target)
        cam = LayerGradCam(net, net.conv2).attribute(x, target=target)
        LayerAttribution.interpolate(cam, (32, 32))
        LayerConductance(net, net.conv1).attribute(x, target=target, n_steps=8)

    def perturbations():
        Occlusion(net).attribute(x, target=target, sliding_window_shapes=(3, 8, 8), strides=(3, 8, 8), baselines=0)
        FeatureAblation(net).attribute(x, target=target, feature_mask=mask)
        ShapleyValueSampling(net).attribute(x, target=target, feature_mask=mask, n_samples=2)
        KernelShap(net).attribute(x[:1], target=target[:1], feature_mask=mask, n_samples=32)

    def metrics():  # the robustness metrics of an explanation (captum.metrics)
        saliency = Saliency(net)
        attr = saliency.attribute(x, target=target)

        def perturb(inputs):
            noise = 0.01 * torch.randn_like(inputs)
            return noise, inputs - noise
        infidelity(net, perturb, x, attr, target=target)
        sensitivity_max(saliency.attribute, x, target=target, n_perturb_samples=4)
    return {"gradients": gradients, "perturbations": perturbations, "metrics": metrics}


# -- opacus: DP-SGD through PrivacyEngine (README), the privacy accountants, virtual batches ------

def opacus_dp(dev):
    from opacus import PrivacyEngine
    from opacus.layers import DPLSTM
    from opacus.utils.batch_memory_manager import BatchMemoryManager

    images = torch.utils.data.TensorDataset(torch.rand(256, 3, 32, 32), torch.randint(0, 10, (256,)))
    cnn = _SmallCNN(norm=lambda c: nn.GroupNorm(4, c)).to(dev)  # no BatchNorm under DP-SGD
    engine = PrivacyEngine(accountant="rdp")
    cnn, cnn_opt, cnn_loader = engine.make_private(
        module=cnn, optimizer=torch.optim.SGD(cnn.parameters(), lr=0.05, momentum=0.9),
        data_loader=torch.utils.data.DataLoader(images, batch_size=64), noise_multiplier=1.1, max_grad_norm=1.0)

    class Tagger(nn.Module):  # a text classifier with opacus's own LSTM (per-sample gradients)
        def __init__(self):
            super().__init__()
            self.emb, self.lstm, self.out = nn.Embedding(100, 16), DPLSTM(16, 32, batch_first=True), nn.Linear(32, 2)

        def forward(self, tokens):
            return self.out(self.lstm(self.emb(tokens))[0][:, -1])

    texts = torch.utils.data.TensorDataset(torch.randint(0, 100, (256, 12)), torch.randint(0, 2, (256,)))
    engine2 = PrivacyEngine(accountant="prv")
    tagger = Tagger().to(dev)
    # the noise that reaches a target epsilon over the planned epochs
    tagger, tag_opt, tag_loader = engine2.make_private_with_epsilon(
        module=tagger, optimizer=torch.optim.Adam(tagger.parameters(), lr=1e-3),
        data_loader=torch.utils.data.DataLoader(texts, batch_size=64), target_epsilon=5.0, target_delta=1e-5,
        epochs=2, max_grad_norm=1.0)

    def epoch(model, opt, loader, physical):
        model.train()
        with BatchMemoryManager(data_loader=loader, max_physical_batch_size=physical, optimizer=opt) as batches:
            for xb, yb in batches:
                xb, yb = xb.to(dev), yb.to(dev)
                loss = F.cross_entropy(model(xb), yb)
                opt.zero_grad()
                loss.backward()
                opt.step()

    def train():
        epoch(cnn, cnn_opt, cnn_loader, 32)

    def train_lstm():
        epoch(tagger, tag_opt, tag_loader, 64)

    def account():
        engine.get_epsilon(delta=1e-5)
        engine2.get_epsilon(delta=1e-5)
    return {"train": train, "train_lstm": train_lstm, "account": account}


# -- pytorch-minimize: scipy-style minimize() on the GPU (README), its Minimizer, least squares ----

def torchmin_solvers(dev):
    from torchmin import Minimizer, least_squares, minimize

    def rosen(x):
        return torch.sum(100 * (x[..., 1:] - x[..., :-1] ** 2) ** 2 + (1 - x[..., :-1]) ** 2)

    x0 = torch.randn(16, device=dev)
    methods = ["bfgs", "l-bfgs", "cg", "newton-cg", "newton-exact", "trust-ncg", "trust-exact"]
    A = torch.randn(64, 16, device=dev)

    def convex(w):  # dogleg wants a positive-definite Hessian
        return F.softplus(A @ w).sum() + 0.5 * w.pow(2).sum()

    def solve():
        for method in methods:
            minimize(rosen, x0, method=method, max_iter=20)
        minimize(convex, x0, method="dogleg", max_iter=20)

    t = torch.linspace(0, 1, 50, device=dev)
    obs = 2.0 * torch.exp(-1.3 * t) + 0.01 * torch.randn(50, device=dev)

    def residuals(p):
        return p[0] * torch.exp(-p[1] * t) - obs

    X, y = torch.randn(256, 8, device=dev), torch.randint(0, 2, (256,), device=dev).float()
    model = nn.Linear(8, 1).to(dev)
    opt = Minimizer(model.parameters(), method="l-bfgs", max_iter=20)

    def closure():  # the README's closure: no backward, the Minimizer differentiates it
        opt.zero_grad()
        return F.binary_cross_entropy_with_logits(model(X).squeeze(1), y)

    def fit():
        least_squares(residuals, torch.tensor([1.0, 1.0], device=dev), max_nfev=20)
        opt.step(closure)
    return {"solve": solve, "fit": fit}


# -- torchattacks: adversarial attacks on a classifier (README), robust accuracy over a loader ----

def torchattacks_zoo(dev):
    import torchattacks as ta

    model = _SmallCNN().to(dev).eval()
    images, labels = torch.rand(8, 3, 32, 32, device=dev), torch.randint(0, 10, (8,), device=dev)
    eps = 8 / 255
    attacks = [ta.FGSM(model, eps=eps), ta.PGD(model, eps=eps, alpha=2 / 255, steps=5, random_start=True),
               ta.PGDL2(model, eps=0.5, alpha=0.1, steps=5), ta.BIM(model, eps=eps, steps=5),
               ta.MIFGSM(model, eps=eps, steps=5), ta.TPGD(model, eps=eps, steps=5),
               ta.EOTPGD(model, eps=eps, steps=3, eot_iter=2), ta.RFGSM(model, eps=eps, steps=3),
               ta.FFGSM(model, eps=eps), ta.DIFGSM(model, eps=eps, steps=3), ta.VMIFGSM(model, eps=eps, steps=3),
               ta.Jitter(model, eps=eps, steps=3), ta.CW(model, c=1, kappa=0, steps=10, lr=0.01),
               ta.DeepFool(model, steps=5, overshoot=0.02), ta.SparseFool(model, steps=2),
               ta.APGD(model, eps=eps, steps=5), ta.APGDT(model, eps=eps, steps=5, n_classes=10),
               ta.FAB(model, eps=eps, steps=5, n_classes=10), ta.Square(model, eps=eps, n_queries=20),
               ta.EADL1(model, max_iterations=10, binary_search_steps=2)]
    targeted = ta.PGD(model, eps=eps, alpha=2 / 255, steps=5)
    targeted.set_mode_targeted_random()
    normalized = ta.PGD(model, eps=eps, alpha=2 / 255, steps=5)
    normalized.set_normalization_used(mean=[0.49, 0.48, 0.45], std=[0.25, 0.24, 0.26])
    auto = ta.AutoAttack(model, norm="Linf", eps=eps, version="standard", n_classes=10, seed=0)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.rand(32, 3, 32, 32),
                                                                        torch.randint(0, 10, (32,))), batch_size=16)

    def attack():
        for atk in (*attacks, targeted, normalized):
            atk(images, labels)

    def evaluate():  # the README's robust accuracy over a data loader
        ta.PGD(model, eps=eps, alpha=2 / 255, steps=3).save(loader, save_path=None, verbose=True)
        ta.MultiAttack([ta.FGSM(model, eps=eps), ta.PGD(model, eps=eps, steps=3)])(images, labels)
    return {"attack": attack, "evaluate": evaluate, "autoattack": lambda: auto(images[:4], labels[:4])}


# -- vector-quantize-pytorch: a VQ autoencoder with each quantizer of the README -----------------

def vq_autoencoder(dev):
    from vector_quantize_pytorch import (
        FSQ,
        LFQ,
        GroupedResidualVQ,
        ResidualFSQ,
        ResidualVQ,
        SimVQ,
        VectorQuantize,
    )

    dim = 32
    image = {  # quantizers that take the encoder's feature map as is
        "vq": VectorQuantize(dim=dim, codebook_size=128, decay=0.8, commitment_weight=1.0, kmeans_init=True,
                             kmeans_iters=5, threshold_ema_dead_code=2, accept_image_fmap=True),
        "cosine": VectorQuantize(dim=dim, codebook_size=128, codebook_dim=8, use_cosine_sim=True,
                                 orthogonal_reg_weight=10, orthogonal_reg_max_codes=64, rotation_trick=True,
                                 accept_image_fmap=True),
        "heads": VectorQuantize(dim=dim, codebook_dim=8, heads=4, separate_codebook_per_head=True,
                                codebook_size=64, accept_image_fmap=True),
        "lfq": LFQ(codebook_size=2 ** 8, dim=dim, entropy_loss_weight=0.1, diversity_gamma=1.0),
    }
    sequence = {  # (batch, positions, dim)
        "residual": ResidualVQ(dim=dim, num_quantizers=4, codebook_size=64, kmeans_init=True, kmeans_iters=5,
                               stochastic_sample_codes=True, sample_codebook_temp=0.1, shared_codebook=True),
        "grouped": GroupedResidualVQ(dim=dim, num_quantizers=2, groups=2, codebook_size=64),
        "fsq": FSQ(levels=[8, 5, 5, 5], dim=dim),
        "residual_fsq": ResidualFSQ(dim=dim, levels=[8, 5, 5, 3], num_quantizers=3),
        "simvq": SimVQ(dim=dim, codebook_size=128, rotation_trick=True),
    }
    models = {}
    for name, q in {**image, **sequence}.items():
        enc = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, dim, 4, 2, 1))
        dec = nn.Sequential(nn.ConvTranspose2d(dim, 16, 4, 2, 1), nn.ReLU(), nn.ConvTranspose2d(16, 3, 4, 2, 1))
        models[name] = nn.ModuleDict({"enc": enc, "q": q, "dec": dec}).to(dev)
    opts = {name: _opt(m) for name, m in models.items()}
    x = torch.rand(8, 3, 32, 32, device=dev)

    def run(name, m):
        z = m["enc"](x)
        if name in sequence:
            b, c, h, w = z.shape
            out = m["q"](z.flatten(2).transpose(1, 2))
            quantized = out[0].transpose(1, 2).reshape(b, c, h, w)
        else:
            out = m["q"](z)
            quantized = out[0]
        aux = [o.sum() for o in out[2:] if torch.is_tensor(o) and o.is_floating_point()]
        return F.mse_loss(m["dec"](quantized), x) + sum(aux), out[1]

    def train():
        for name, m in models.items():
            m.train()
            loss, _ = run(name, m)
            opts[name].zero_grad(set_to_none=True)
            loss.backward()
            opts[name].step()

    def encode():  # codes and back (README: indices_to_codes / get_output_from_indices)
        with torch.no_grad():
            for name, m in models.items():
                m.eval()
                _, indices = run(name, m)
                if name in ("fsq", "lfq"):
                    m["q"].indices_to_codes(indices)
                elif name in ("residual", "residual_fsq"):
                    m["q"].get_output_from_indices(indices)
    return {"train": train, "encode": encode}


# -- x-transformers: GPT-like, encoder-decoder and Transformer-XL training and sampling (README) ----

def xtransformers_lm(dev):
    from x_transformers import (
        AutoregressiveWrapper,
        Decoder,
        TransformerWrapper,
        XLAutoregressiveWrapper,
        XTransformer,
    )

    vocab, length = 256, 64
    gpt = AutoregressiveWrapper(TransformerWrapper(num_tokens=vocab, max_seq_len=length, attn_layers=Decoder(
        dim=64, depth=2, heads=4, rotary_pos_emb=True))).to(dev)
    seq2seq = XTransformer(dim=64, enc_num_tokens=vocab, enc_depth=2, enc_heads=4, enc_max_seq_len=length,
                           dec_num_tokens=vocab, dec_depth=2, dec_heads=4, dec_max_seq_len=length,
                           tie_token_emb=True).to(dev)
    xl = XLAutoregressiveWrapper(TransformerWrapper(num_tokens=vocab, max_seq_len=32, max_mem_len=64,
                                                    attn_layers=Decoder(dim=64, depth=2, heads=4,
                                                                        rel_pos_bias=True))).to(dev)
    models = [gpt, seq2seq, xl]
    opt = torch.optim.AdamW([p for m in models for p in m.parameters()], lr=1e-4)
    seq = torch.randint(0, vocab, (8, length + 1), device=dev)
    src, tgt = torch.randint(0, vocab, (8, 32), device=dev), torch.randint(0, vocab, (8, 32), device=dev)
    src_mask = torch.ones_like(src).bool()

    def train():
        for m in models:
            m.train()
        loss = gpt(seq) + seq2seq(src, tgt, mask=src_mask) + xl(seq)  # xl: 65 tokens in segments of 32
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def generate():
        prompt = seq[:2, :4]
        gpt.generate(prompt, 24)
        gpt.generate(prompt, 24, temperature=0.7, eos_token=5)
        seq2seq.generate(src[:2], prompt[:, :1], 16, mask=src_mask[:2])
        xl.generate(seq[:1, :40], 24)
    return {"train": train, "generate": generate}


# -- pytorch-tabnet: the scikit-learn-style classifier, regressor and self-supervised pretraining --

def tabnet_fit(dev):
    import numpy as np
    from pytorch_tabnet.pretraining import TabNetPretrainer
    from pytorch_tabnet.tab_model import TabNetClassifier, TabNetRegressor

    rng = np.random.default_rng(0)
    X, Xv = rng.normal(size=(512, 12)).astype(np.float32), rng.normal(size=(128, 12)).astype(np.float32)
    y, yv = rng.integers(0, 3, 512), rng.integers(0, 3, 128)
    kw = dict(n_d=8, n_a=8, n_steps=3, device_name=dev.type, seed=0, verbose=1)
    fit_kw = dict(max_epochs=2, patience=5, batch_size=128, virtual_batch_size=64, num_workers=0)
    clf = TabNetClassifier(**kw)

    def classify():
        clf.fit(X, y, eval_set=[(Xv, yv)], eval_metric=["accuracy", "logloss"], **fit_kw)

    def regress():
        TabNetRegressor(**kw).fit(X, y.reshape(-1, 1).astype(np.float32), eval_set=[(Xv, yv.reshape(-1, 1))],
                                  eval_metric=["rmse", "mae"], **fit_kw)

    def pretrain():
        pre = TabNetPretrainer(**kw)
        pre.fit(X, eval_set=[Xv], pretraining_ratio=0.8, **fit_kw)
        TabNetClassifier(**kw).fit(X, y, eval_set=[(Xv, yv)], from_unsupervised=pre, **fit_kw)

    def predict():
        clf.predict_proba(Xv)
        clf.predict(Xv)
        clf.explain(Xv)
    return {"classify": classify, "regress": regress, "pretrain": pretrain, "predict": predict}


# -- torchquad: deterministic and Monte Carlo quadrature, VEGAS, gradients through an integral ----

def torchquad_integrate(dev):
    from torchquad import VEGAS, Boole, GaussLegendre, MonteCarlo, Simpson, Trapezoid, set_up_backend

    domain = torch.tensor([[0.0, 1.0], [-1.0, 1.0]], device=dev)

    def f(x):  # the README's integrand
        return torch.sin(x[:, 0]) + torch.exp(x[:, 1])

    def on_device(step):
        """The README's `set_up_backend("torch")` makes CUDA torch's default device (where there is one) for
        the integrators' own grids; the default is put back after each step, for the workloads that follow."""
        def run():
            set_up_backend("torch", data_type="float32")
            try:
                step()
            finally:
                torch.set_default_device(None)
                torch.set_default_tensor_type(torch.FloatTensor)
            if torch.empty(0).device.type != "cpu":
                raise RuntimeError("torch's default device was not put back")
        return run

    def integrate():
        for integrator, n in ((Trapezoid(), 1001), (Simpson(), 1001), (Boole(), 1089), (GaussLegendre(), 1024),
                              (MonteCarlo(), 10000)):
            integrator.integrate(f, dim=2, N=n, integration_domain=domain)
        VEGAS().integrate(f, dim=2, N=5000, integration_domain=domain, max_iterations=5, seed=0)

    scale = torch.tensor(1.5, device=dev, requires_grad=True)
    bounds = torch.tensor([[0.0, 1.0], [-1.0, 1.0]], device=dev, requires_grad=True)

    def gradient():  # gradients with respect to a parameter of the integrand and to the domain
        value = Simpson().integrate(lambda x: torch.sin(scale * x[:, 0]) * torch.exp(x[:, 1]), dim=2, N=441,
                                    integration_domain=bounds)
        value.backward()
    return {"integrate": on_device(integrate), "gradient": on_device(gradient)}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _tutorial_lm(dev):
    """pytorch-tutorial's language model (an LSTM over a word corpus, truncated backprop through time, then
    1000 words sampled one by one) on a synthetic data/train.txt of 20 rows of ~120 words: 4 steps an epoch.
    `train`: backward calls 4-5 (the second is the first step of epoch 2, which prints loss and perplexity);
    `sample`: its first 110 sampled words (a window on `torch.multinomial`, once a word)."""
    import numpy as np
    script = _need_repo("pytorch-tutorial") / "tutorials" / "02-intermediate" / "language_model" / "main.py"
    cwd = Path(hc._tmp())
    (cwd / "data").mkdir()
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    (cwd / "data" / "train.txt").write_text("\n".join(" ".join(rng.choice(words, 24)) for _ in range(102)) + "\n")

    def train():
        with hc.window_on(torch.Tensor, "backward", "tutorial.lm", "train", dev, 4, 6, stop_script=True):
            hc.run_script(script, [], str(cwd))

    def sample():
        with hc.window_on(torch, "multinomial", "tutorial.lm", "sample", dev, 1, 111, stop_script=True):
            hc.run_script(script, [], str(cwd))
    return {"train_window": train, "sample_window": sample}


def _tutorial_vae(dev):
    """pytorch-tutorial's VAE on a synthetic MNIST where it looks (../../data), 10 batches of 128 an epoch:
    the window spans batches 9-11 (the 10th prints its losses, the epoch's end saves samples and
    reconstructions)."""
    script = _need_repo("pytorch-tutorial") / "tutorials" / "03-advanced" / "variational_autoencoder" / "main.py"
    tmp = Path(hc._tmp())
    f2._mnist(tmp / "data", n=1280)
    cwd = tmp / "tutorials" / "vae"
    cwd.mkdir(parents=True)

    def train():
        with hc.window_on(torch.Tensor, "backward", "tutorial.vae", "train", dev, 9, 12, stop_script=True):
            hc.run_script(script, [], str(cwd))
    return {"train_window": train}


def _ddpm(dev):
    """minDiffusion's superminddpm.py as is (DDPM on MNIST, its own `cuda:0`, 20 loader workers) on a
    synthetic MNIST under ./data: 5 batches an epoch; the window spans batches 4-6, across the end of the
    first epoch, where it samples 16 images over its 1000 steps and saves them and the model."""
    if dev.type != "cuda":
        raise RuntimeError("superminddpm.py runs on its own cuda:0: GPU only")
    script = _need_repo("minDiffusion") / "superminddpm.py"
    cwd = Path(hc._tmp())
    f2._mnist(cwd / "data")
    (cwd / "contents").mkdir()

    def train():
        with hc.window_on(torch.Tensor, "backward", "mindiffusion.ddpm", "train", dev, 4, 7, stop_script=True):
            hc.run_script(script, [], str(cwd))
    return {"train_window": train}


MODELS = [
    # name, package, builder
    ("captum.attr", "captum", captum_attr),
    ("opacus.dp", "opacus", opacus_dp),
    ("torchmin.solvers", "torchmin", torchmin_solvers),
    ("torchattacks.zoo", "torchattacks", torchattacks_zoo),
    ("vq.autoencoder", "vector_quantize_pytorch", vq_autoencoder),
    ("xtransformers.lm", "x_transformers", xtransformers_lm),
    ("tabnet.fit", "pytorch_tabnet", tabnet_fit),
    ("torchquad.integrate", "torchquad", torchquad_integrate),
    ("tutorial.lm", "pytorch-tutorial", _tutorial_lm),
    ("tutorial.vae", "pytorch-tutorial", _tutorial_vae),
    ("mindiffusion.ddpm", "minDiffusion", _ddpm),
]


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh3", REPOS, DISTS, budget=220.0, per_model=60.0)


if __name__ == "__main__":
    sys.exit(main())
