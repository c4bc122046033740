"""Record the lines that really synchronise in code the linter's rules were never tuned on.

The held-out counterpart of `benchmarks/accuracy_collect.py` (same recorder, same stack walk, same
line tracer; this file only adds the workloads): libraries outside the tuning set (transformers,
torchvision, timm, torchaudio, accelerate and the repository's fixtures were the tuning set) and
public training repositories, run on synthetic data with random weights and no internet.

- Libraries installed on the GPU machine: torchdiffeq, torch_geometric, gpytorch (+ linear_operator),
  botorch, e3nn, torchmetrics, pytorch_lightning, peft, sentence_transformers.
- Libraries carried as wheels (`prepare` downloads them into .whl/heldout): kornia, monai, diffusers,
  segmentation_models_pytorch, and YOLOX's needs (loguru, pycocotools).
- Training repositories at pinned commits, copied by `prepare` into .bench/heldout/repos/<name>:
  karpathy/nanoGPT (its train.py, as is), pytorch/examples (word_language_model, dcgan,
  imagenet: the scripts as they are), Megvii-BaseDetection/YOLOX (its Trainer's iteration).
  A script runs with its own command line on synthetic data files; its measured window opens at
  the N-th call of a function the loop calls every step (`Tensor.backward`) and closes two steps
  later, after which the script is stopped.

Sites inside a tuned library reached from here (transformers under peft, torchvision under
segmentation_models_pytorch) are recorded too; `benchmarks/accuracy.py --set heldout` reports them
apart and leaves them out of the held-out recall.

    python benchmarks/heldout_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/heldout_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs (the op recorder then warns for a few ops as the debug mode would).
"""

from __future__ import annotations

import contextlib
import datetime
import os
import pickle
import runpy
import shutil
import subprocess
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

# the recorder patches torch.cuda.synchronize & co. when imported: import it before any library
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac
import torch
import torch.nn.functional as F
from torch import nn

THIS = os.path.abspath(__file__)
ac.DRIVER_FILES.add(THIS)
REPO = ac.REPO
DATE = datetime.date.today().isoformat()  # the day it ran
BENCH = REPO / ".bench" / "heldout"
REPOS_DIR = BENCH / "repos"
WHEELS_DIR = REPO / ".whl" / "heldout"

# Training repositories: package name -> (GitHub owner/name, commit, paths copied into .bench)
REPOS = {
    "nanoGPT": ("karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291",
                ["train.py", "model.py", "configurator.py"]),
    "pytorch_examples": ("pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8",
                         ["word_language_model/main.py", "word_language_model/data.py",
                          "word_language_model/model.py", "dcgan/main.py", "imagenet/main.py"]),
    "YOLOX": ("Megvii-BaseDetection/YOLOX", "6ddff4824372906469a7fae2dc3206c7aa4bbaee", ["yolox"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions; their own needs included.
WHEELS = ["kornia==0.9.0", "kornia_rs==0.2.0", "monai==1.6.1", "diffusers==0.42.1", "importlib_metadata==8.7.0",
          "segmentation_models_pytorch==0.6.0", "loguru==0.7.3", "pycocotools==2.0.11"]
# version keys recorded in the metadata: the import name -> distribution name
DISTS = {"torchdiffeq": "torchdiffeq", "torch_geometric": "torch-geometric", "gpytorch": "gpytorch",
         "linear_operator": "linear-operator", "botorch": "botorch", "e3nn": "e3nn", "torchmetrics": "torchmetrics",
         "pytorch_lightning": "pytorch-lightning", "lightning_utilities": "lightning-utilities", "peft": "peft",
         "sentence_transformers": "sentence-transformers", "kornia": "kornia", "monai": "monai",
         "diffusers": "diffusers", "segmentation_models_pytorch": "segmentation-models-pytorch",
         "transformers": "transformers", "torchvision": "torchvision", "timm": "timm", "scipy": "scipy",
         "numpy": "numpy", "accelerate": "accelerate"}

measuring = ac.measuring
train_loop, infer_loop, _opt = ac.train_loop, ac.infer_loop, ac._opt


# ============================================================================================
# Windows inside code that runs its own loop
# ============================================================================================

class _StopScript(Exception):
    """Raised by a window's closing call: the script has run its measured steps."""


@contextlib.contextmanager
def window_on(owner, attr: str, model: str, mode: str, dev, start: int, stop: int, stop_script: bool = False):
    """Patch `owner.attr` so that its `start`-th call opens the measured window and its `stop`-th call
    closes it (before the call runs): the window spans (stop - start) / calls-per-step whole steps of
    a loop we do not own. With `stop_script`, the closing call raises _StopScript to end the loop."""
    orig = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
    state: dict[str, Any] = {"n": 0, "done": False, "inside": False}

    def _patched(*a, **kw):  # named as the recorder's hooks: never a site itself
        if state["inside"]:  # the same call dispatched again (the op recorder's mode re-enters it)
            return orig(*a, **kw)
        state["n"] += 1
        if state["n"] == start:
            state["m"] = measuring(model, mode, dev)
            state["m"].__enter__()
        elif state["n"] == stop and "m" in state:
            state.pop("m").__exit__(None, None, None)
            state["done"] = True
            if stop_script:
                raise _StopScript
        state["inside"] = True
        try:
            return orig(*a, **kw)
        finally:
            state["inside"] = False
    setattr(owner, attr, _patched)
    try:
        yield state
    finally:
        setattr(owner, attr, orig)
        if "m" in state:
            state.pop("m").__exit__(None, None, None)
    if not state["done"]:
        raise RuntimeError(f"the measured window did not close ({state['n']} calls of {attr}, needed {stop})")


def run_script(path: Path, argv: list, cwd: str) -> None:
    """Run a repository's script as `python path argv...` from `cwd`, in this process (so the recorder
    sees it), until it ends or a window stops it; then forget the modules it imported from its folder."""
    folder = str(path.parent)
    saved_argv, saved_cwd, saved_path, saved_modules = sys.argv, os.getcwd(), list(sys.path), set(sys.modules)
    sys.argv = [str(path), *argv]
    sys.path.insert(0, folder)
    os.chdir(cwd)
    try:
        runpy.run_path(str(path), run_name="__main__")
    except _StopScript:
        pass
    except SystemExit as e:
        if e.code not in (None, 0):
            raise RuntimeError(f"{path.name} exited with {e.code}") from None
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        os.chdir(saved_cwd)
        for m in set(sys.modules) - saved_modules:  # its `model`, `data` must not shadow the next script's
            if (getattr(sys.modules[m], "__file__", None) or "").startswith(folder):
                del sys.modules[m]


def _need_repo(name: str) -> Path:
    root = REPOS_DIR / name
    if not root.is_dir():
        raise RuntimeError(f"{root} is missing: run `python benchmarks/heldout_collect.py prepare` and carry "
                           f".bench/heldout")
    return root


def _tmp() -> str:
    return tempfile.mkdtemp(prefix="heldout-")


# ============================================================================================
# Libraries
# ============================================================================================

# -- torchdiffeq: adaptive-step ODE solvers (step-size control, event finding) -------------------

def torchdiffeq_ode(dev):
    import torchdiffeq

    class ODEFunc(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 2))

        def forward(self, t, y):
            return self.net(y ** 3)

    func = ODEFunc().to(dev)
    opt = _opt(func)
    y0 = torch.tensor([[2.0, 0.0], [1.0, 0.5]], device=dev)
    t = torch.linspace(0.0, 1.0, 8, device=dev)
    target = torch.randn(8, 2, 2, device=dev)

    def train(solve, **kw):
        def step():
            pred = solve(func, y0, t, rtol=1e-5, atol=1e-6, **kw)
            loss = (pred - target).abs().mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return step

    def infer_methods():
        with torch.no_grad():
            for method in ("bosh3", "adaptive_heun", "dopri8", "rk4", "implicit_adams"):
                kw = {"options": {"step_size": 0.1}} if method in ("rk4", "implicit_adams") else {}
                torchdiffeq.odeint(func, y0, t, method=method, rtol=1e-4, atol=1e-5, **kw)

    def event():
        with torch.no_grad():
            torchdiffeq.odeint_event(func, y0, torch.tensor(0.0, device=dev),
                                     event_fn=lambda tt, y: y[..., 0].prod() - 0.1, method="dopri5",
                                     rtol=1e-4, atol=1e-5)

    return {"train": train(torchdiffeq.odeint, method="dopri5"),
            "train_adjoint": train(torchdiffeq.odeint_adjoint, method="dopri5"),
            "infer": infer_methods, "event": event}


# -- torch_geometric: message passing, pooling, sampling -------------------------------------------

def _graph(dev, n=120, e=480, feat=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, feat, generator=g)
    ei = torch.randint(0, n, (2, e), generator=g)
    return x.to(dev), ei.to(dev)


def pyg_node(dev):
    from torch_geometric.nn import GATConv, GCNConv, SAGEConv, TransformerConv
    from torch_geometric.utils import dropout_edge

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = GCNConv(16, 32), GATConv(32, 8, heads=4)
            self.c3, self.c4 = SAGEConv(32, 32), TransformerConv(32, 4, heads=2, concat=False)

        def forward(self, x, ei):
            ei, _ = dropout_edge(ei, p=0.1, training=self.training)
            x = self.c1(x, ei).relu()
            x = self.c2(x, ei).relu()
            x = self.c3(x, ei).relu()
            return self.c4(x, ei)

    x, ei = _graph(dev)
    y = torch.randint(0, 4, (x.size(0),), device=dev)
    model = Net().to(dev)
    return {"train": train_loop(model, lambda: (x, ei), lambda out: F.cross_entropy(out, y)),
            "infer": infer_loop(model, lambda: (x, ei))}


def pyg_graph(dev):
    from torch_geometric.data import Batch, Data
    from torch_geometric.nn import GINConv, SAGPooling, TopKPooling, global_add_pool, global_max_pool
    from torch_geometric.utils import to_dense_batch

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = GINConv(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 32)))
            self.p1 = TopKPooling(32, ratio=0.5)
            self.c2 = GINConv(nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 32)))
            self.p2 = SAGPooling(32, ratio=0.5)
            self.head = nn.Linear(64 + 32, 3)

        def forward(self, x, ei, batch):
            x = self.c1(x, ei).relu()
            x, ei, _, batch, _, _ = self.p1(x, ei, batch=batch)
            x = self.c2(x, ei).relu()
            x, ei, _, batch, _, _ = self.p2(x, ei, batch=batch)
            dense, _ = to_dense_batch(x, batch)
            return self.head(torch.cat([global_add_pool(x, batch), global_max_pool(x, batch),
                                        dense.mean(1)], 1))

    graphs = []
    for i in range(6):
        x, ei = _graph(dev, n=20 + 4 * i, e=60 + 10 * i, seed=i)
        graphs.append(Data(x=x, edge_index=ei))
    model = Net().to(dev)
    y = torch.randint(0, 3, (len(graphs),), device=dev)

    def inputs():
        b = Batch.from_data_list(graphs)
        return b.x, b.edge_index, b.batch
    return {"train": train_loop(model, inputs, lambda out: F.cross_entropy(out, y)),
            "infer": infer_loop(model, inputs)}


def pyg_link(dev):
    from torch_geometric.nn import GAE, GCNConv
    from torch_geometric.utils import coalesce, k_hop_subgraph, negative_sampling, subgraph, to_undirected

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1, self.c2 = GCNConv(16, 32), GCNConv(32, 16)

        def forward(self, x, ei):
            return self.c2(self.c1(x, ei).relu(), ei)

    x, ei = _graph(dev)
    model = GAE(Encoder()).to(dev)
    opt = _opt(model)

    def train():
        model.train()
        und = to_undirected(ei)
        z = model.encode(x, und)
        neg = negative_sampling(und, num_nodes=x.size(0))
        loss = model.recon_loss(z, und, neg)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def ops():
        c = coalesce(ei, num_nodes=x.size(0))
        subgraph(torch.arange(0, 60, device=dev), c, num_nodes=x.size(0))
        k_hop_subgraph(0, 2, c, num_nodes=x.size(0))
    return {"train": train, "ops": ops}


# -- gpytorch / linear_operator: CG and Lanczos, variational GPs ----------------------------------

def gpytorch_gp(dev):
    import gpytorch

    class ExactGP(gpytorch.models.ExactGP):
        def __init__(self, x, y, lik):
            super().__init__(x, y, lik)
            self.mean = gpytorch.means.ConstantMean()
            self.covar = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel())

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean(x), self.covar(x))

    class SVGP(gpytorch.models.ApproximateGP):
        def __init__(self, inducing):
            vd = gpytorch.variational.CholeskyVariationalDistribution(inducing.size(0))
            vs = gpytorch.variational.VariationalStrategy(self, inducing, vd, learn_inducing_locations=True)
            super().__init__(vs)
            self.mean = gpytorch.means.ConstantMean()
            self.covar = gpytorch.kernels.ScaleKernel(gpytorch.kernels.MaternKernel(nu=2.5))

        def forward(self, x):
            return gpytorch.distributions.MultivariateNormal(self.mean(x), self.covar(x))

    n = 600
    x = torch.rand(n, 2, device=dev)
    y = torch.sin(6 * x[:, 0]) + 0.1 * torch.randn(n, device=dev)
    test_x = torch.rand(50, 2, device=dev)
    lik = gpytorch.likelihoods.GaussianLikelihood().to(dev)
    exact = ExactGP(x, y, lik).to(dev)
    mll = gpytorch.mlls.ExactMarginalLogLikelihood(lik, exact)
    opt = torch.optim.Adam(exact.parameters(), lr=0.05)
    svgp = SVGP(torch.rand(32, 2, device=dev)).to(dev)
    slik = gpytorch.likelihoods.GaussianLikelihood().to(dev)
    elbo = gpytorch.mlls.VariationalELBO(slik, svgp, num_data=n)
    sopt = torch.optim.Adam(list(svgp.parameters()) + list(slik.parameters()), lr=0.05)

    def train_cg():  # beyond max_cholesky_size: conjugate gradients and Lanczos, as for large data
        exact.train()
        lik.train()
        with gpytorch.settings.max_cholesky_size(100), gpytorch.settings.cg_tolerance(0.1):
            loss = -mll(exact(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

    def infer_fast():
        exact.eval()
        lik.eval()
        with torch.no_grad(), gpytorch.settings.fast_pred_var(), gpytorch.settings.max_cholesky_size(100):
            pred = lik(exact(test_x))
            pred.confidence_region()

    def train_svgp():
        svgp.train()
        slik.train()
        idx = torch.randperm(n, device=dev)[:128]
        loss = -elbo(svgp(x[idx]), y[idx])
        sopt.zero_grad(set_to_none=True)
        loss.backward()
        sopt.step()
    return {"train_cg": train_cg, "infer": infer_fast, "train_svgp": train_svgp}


# -- botorch: fitting a GP and optimising an acquisition function --------------------------------

def botorch_bo(dev):
    from botorch.acquisition import qLogExpectedImprovement
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.optim import optimize_acqf
    from gpytorch.mlls import ExactMarginalLogLikelihood
    kw = {"device": dev, "dtype": torch.double}
    X = torch.rand(16, 3, **kw)
    Y = (X.sin().sum(-1, keepdim=True) + 0.05 * torch.randn(16, 1, **kw))
    bounds = torch.stack([torch.zeros(3, **kw), torch.ones(3, **kw)])
    state = {}

    def fit():
        model = SingleTaskGP(X, Y)
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model),
                         optimizer_kwargs={"options": {"maxiter": 8}})
        state["model"] = model

    def acquire():
        acqf = qLogExpectedImprovement(state["model"], best_f=Y.max())
        optimize_acqf(acqf, bounds=bounds, q=2, num_restarts=2, raw_samples=16, options={"maxiter": 8})
    return {"fit": fit, "acquire": acquire}


# -- e3nn: equivariant convolution on a point cloud ------------------------------------------------

def e3nn_conv(dev):
    from e3nn import o3
    from e3nn.math import soft_one_hot_linspace
    from e3nn.nn import FullyConnectedNet, Gate

    irreps_sh = o3.Irreps.spherical_harmonics(2)

    class Conv(nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = Gate("8x0e", [torch.relu], "4x0e", [torch.sigmoid], "4x1o")
            self.tp = o3.FullyConnectedTensorProduct("8x0e", irreps_sh, self.gate.irreps_in, shared_weights=False)
            self.radial = FullyConnectedNet([10, 16, self.tp.weight_numel], torch.relu)
            self.out = o3.Linear(self.gate.irreps_out, "1x0e")

        def forward(self, feats, pos, src, dst):
            vec = pos[dst] - pos[src]
            sh = o3.spherical_harmonics(irreps_sh, vec, normalize=True, normalization="component")
            emb = soft_one_hot_linspace(vec.norm(dim=1), 0.0, 1.5, 10, basis="smooth_finite", cutoff=True)
            msg = self.tp(feats[src], sh, self.radial(emb))
            agg = torch.zeros(feats.size(0), msg.size(1), device=msg.device).index_add_(0, dst, msg)
            return self.out(self.gate(agg)).sum()

    pos = torch.randn(64, 3, device=dev)
    feats = torch.randn(64, 8, device=dev)
    src, dst = torch.randint(0, 64, (2, 512), device=dev)
    model = Conv().to(dev)
    return {"train": train_loop(model, lambda: (feats, pos, src, dst), lambda out: out ** 2),
            "infer": infer_loop(model, lambda: (feats, pos, src, dst))}


# -- torchmetrics: per-step update + compute, as a validation loop runs them ---------------------

def torchmetrics_metrics(dev):
    import torchmetrics as tm
    import torchmetrics.segmentation
    from torchmetrics import classification as C
    from torchmetrics import regression as R

    cls = tm.MetricCollection([
        C.MulticlassAccuracy(5), C.MulticlassF1Score(5, average="macro"), C.MulticlassAUROC(5),
        C.MulticlassAveragePrecision(5), C.MulticlassConfusionMatrix(5), C.MulticlassCalibrationError(5),
        C.MulticlassJaccardIndex(5)]).to(dev)
    bin_ = tm.MetricCollection([C.BinaryAUROC(), C.BinaryPrecisionRecallCurve(thresholds=None),
                                C.BinaryStatScores(), C.MultilabelAveragePrecision(4)]).to(dev)
    reg = tm.MetricCollection([R.MeanSquaredError(), R.PearsonCorrCoef(), R.SpearmanCorrCoef(),
                               R.R2Score(), R.MeanAbsolutePercentageError()]).to(dev)
    img = tm.MetricCollection([tm.image.PeakSignalNoiseRatio(data_range=1.0),
                               tm.image.StructuralSimilarityIndexMeasure(data_range=1.0)]).to(dev)
    ret = tm.MetricCollection([tm.retrieval.RetrievalMRR(), tm.retrieval.RetrievalNormalizedDCG()]).to(dev)
    seg = tm.segmentation.MeanIoU(num_classes=4, input_format="index").to(dev)

    def step():
        logits = torch.randn(32, 5, device=dev)
        target = torch.randint(0, 5, (32,), device=dev)
        cls.update(logits.softmax(-1), target)
        cls.compute()
        cls.reset()
        p = torch.rand(32, device=dev)
        t = torch.randint(0, 2, (32,), device=dev)
        for name, m in bin_.items():
            if name.startswith("Multilabel"):
                m.update(torch.rand(8, 4, device=dev), torch.randint(0, 2, (8, 4), device=dev))
            else:
                m.update(p, t)
        bin_.compute()
        bin_.reset()
        a = torch.randn(32, device=dev)
        reg.update(a + 0.1 * torch.randn(32, device=dev), a)
        reg.compute()
        reg.reset()
        x = torch.rand(2, 3, 32, 32, device=dev)
        img.update(x, (x + 0.05 * torch.randn_like(x)).clamp(0, 1))
        img.compute()
        img.reset()
        ret.update(torch.rand(24, device=dev), torch.randint(0, 2, (24,), device=dev),
                   indexes=torch.arange(4, device=dev).repeat_interleave(6))
        ret.compute()
        ret.reset()
        seg.update(torch.randint(0, 4, (2, 16, 16), device=dev), torch.randint(0, 4, (2, 16, 16), device=dev))
        seg.compute()
        seg.reset()
    return {"eval": step}


# -- pytorch_lightning: Trainer.fit, its loop, logging and mixed precision ------------------------

def lightning_fit(dev):
    import pytorch_lightning as pl
    import torchmetrics as tm
    from pytorch_lightning.loggers import CSVLogger

    class Module(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
            self.acc = tm.classification.MulticlassAccuracy(4)

        def training_step(self, batch, batch_idx):
            x, y = batch
            logits = self.net(x)
            loss = F.cross_entropy(logits, y)
            self.acc(logits, y)
            self.log("train_loss", loss, prog_bar=True)
            self.log("train_acc", self.acc, on_step=True, on_epoch=True)
            return loss

        def configure_optimizers(self):
            opt = torch.optim.AdamW(self.parameters(), lr=1e-3)
            return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, 2)}

    data = torch.utils.data.TensorDataset(torch.randn(256, 32), torch.randint(0, 4, (256,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16, shuffle=True)
    window = {}

    class Window(pl.Callback):
        def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
            if trainer.global_step == 2:
                window["m"] = measuring("lightning.fit", "train", dev)
                window["m"].__enter__()
            elif trainer.global_step == 4 and "m" in window:
                window.pop("m").__exit__(None, None, None)
                window["done"] = True

    def fit():
        trainer = pl.Trainer(
            max_steps=5, accelerator="gpu" if dev.type == "cuda" else "cpu", devices=1,
            precision="16-mixed" if dev.type == "cuda" else "32-true", gradient_clip_val=1.0,
            logger=CSVLogger(_tmp()), log_every_n_steps=2, enable_checkpointing=False,
            enable_model_summary=False, callbacks=[Window()], default_root_dir=_tmp())
        trainer.fit(Module(), loader)
        if "m" in window:
            window.pop("m").__exit__(None, None, None)
        if not window.get("done"):
            raise RuntimeError("the measured window did not close")
    return {"train_window": fit}


# -- peft: LoRA and AdaLoRA (its rank allocator reads scores every step) -------------------------

def _gpt2(dev):
    import transformers
    config = transformers.GPT2Config(vocab_size=512, n_layer=2, n_embd=64, n_head=4, n_positions=64)
    return transformers.GPT2LMHeadModel(config).to(dev)


def peft_lora(dev):
    import peft

    def batch():
        ids, mask = ac._tokens(dev, 4, 32, 512, pad_last=5)
        return {"input_ids": ids, "attention_mask": mask, "labels": ids.masked_fill(mask == 0, -100)}

    lora = peft.get_peft_model(_gpt2(dev), peft.LoraConfig(r=4, lora_alpha=8, target_modules=["c_attn"],
                                                           lora_dropout=0.1, fan_in_fan_out=True))
    ada = peft.get_peft_model(_gpt2(dev), peft.AdaLoraConfig(
        init_r=6, target_r=2, tinit=1, tfinal=1, deltaT=1, total_step=8, target_modules=["c_attn"],
        fan_in_fan_out=True))
    opt = _opt(ada)
    state = {"step": 0}

    def ada_step():
        ada.train()
        loss = ada(**batch()).loss
        loss.backward()
        opt.step()
        state["step"] += 1
        ada.base_model.update_and_allocate(state["step"])
        opt.zero_grad(set_to_none=True)
    return {"train": train_loop(lora, batch), "train_adalora": ada_step}


# -- sentence_transformers: losses on embeddings, encode, search ---------------------------------

_WORDS = ["the", "a", "of", "and", "to", "in", "is", "was", "for", "on", "with", "as", "by", "at", "from", "this", "that", "it", "be", "are", "model", "data", "train", "loss", "graph", "image", "text", "audio", "point", "cloud", "network", "layer", "batch", "step", "epoch", "value", "tensor", "device", "host", "gpu", "cpu", "wait", "sync", "fast", "slow", "small", "large", "new", "old", "first", "last", "good", "bad", "red", "blue", "green"]


def sentence_transformers_model(dev):
    import transformers
    from sentence_transformers import SentenceTransformer, losses, util
    folder = _tmp()
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *_WORDS]
    Path(folder, "vocab.txt").write_text("\n".join(vocab) + "\n")
    transformers.BertTokenizerFast(vocab_file=os.path.join(folder, "vocab.txt")).save_pretrained(folder)
    transformers.BertModel(transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        max_position_embeddings=64)).save_pretrained(folder)
    model = SentenceTransformer(folder, device=str(dev))
    g = torch.Generator().manual_seed(0)

    def sentences(n):
        return [" ".join(_WORDS[int(i)] for i in torch.randint(0, len(_WORDS), (int(k),), generator=g))
                for k in torch.randint(3, 12, (n,), generator=g)]

    def feats(texts):
        f = model.tokenize(texts)
        return {k: v.to(dev) if isinstance(v, torch.Tensor) else v for k, v in f.items()}
    loss_fns = [losses.MultipleNegativesRankingLoss(model), losses.CoSENTLoss(model),
                losses.OnlineContrastiveLoss(model), losses.BatchHardTripletLoss(model),
                losses.BatchAllTripletLoss(model)]
    opt = _opt(model)

    def train():
        model.train()
        a, b = feats(sentences(8)), feats(sentences(8))
        pair_labels = torch.randint(0, 2, (8,), device=dev).float()
        total = loss_fns[0]([a, b], None) + loss_fns[1]([a, b], pair_labels) + loss_fns[2]([a, b], pair_labels)
        classes = torch.randint(0, 3, (8,), device=dev)
        total = total + loss_fns[3]([a], classes) + loss_fns[4]([a], classes)
        opt.zero_grad(set_to_none=True)
        total.backward()
        opt.step()

    corpus = sentences(40)

    def encode_search():
        model.eval()
        emb = model.encode(corpus, batch_size=16, convert_to_tensor=True)
        q = model.encode(sentences(4), batch_size=4, convert_to_tensor=True)
        util.semantic_search(q, emb, top_k=5)
        util.paraphrase_mining_embeddings(emb, top_k=3)
        util.community_detection(emb, threshold=0.5, min_community_size=2)
    return {"train": train, "infer": encode_search}


# -- kornia: GPU augmentation with boxes and masks, robust geometry, losses ----------------------

def kornia_augment(dev):
    import kornia.augmentation as K

    aug = K.AugmentationSequential(
        K.RandomResizedCrop((64, 64), scale=(0.5, 1.0)), K.RandomHorizontalFlip(),
        K.ColorJiggle(0.2, 0.2, 0.2, 0.1, p=0.8), K.RandomAffine(15, translate=(0.1, 0.1), p=0.5),
        K.RandomGaussianBlur((3, 3), (0.1, 1.0), p=0.5), K.RandomErasing(p=0.5),
        data_keys=["input", "bbox_xyxy", "mask"]).to(dev)
    mix = K.RandomMixUpV2(p=1.0)
    cut = K.RandomCutMixV2(p=1.0)

    def step():
        img = torch.rand(4, 3, 80, 80, device=dev)
        boxes = torch.tensor([[[8.0, 8.0, 40.0, 40.0], [20.0, 30.0, 70.0, 60.0]]], device=dev).repeat(4, 1, 1)
        mask = (torch.rand(4, 1, 80, 80, device=dev) > 0.5).float()
        aug(img, boxes, mask)
        labels = torch.randint(0, 5, (4,), device=dev)
        mix(img, labels)
        cut(img, labels)
    return {"augment": step}


def kornia_geometry(dev):
    import kornia
    import kornia.feature as KF
    import kornia.geometry as KG

    def match():
        pts1 = torch.rand(1, 60, 2, device=dev) * 100
        H = torch.tensor([[[1.0, 0.05, 3.0], [0.02, 1.0, -2.0], [0.0, 0.0, 1.0]]], device=dev)
        pts2 = KG.transform_points(H, pts1) + 0.3 * torch.randn_like(pts1)
        pts2[:, :12] = torch.rand(1, 12, 2, device=dev) * 100  # outliers
        KG.find_homography_dlt(pts1, pts2)
        ransac = KG.RANSAC("homography", inl_th=2.0, max_iter=5, batch_size=64)
        ransac(pts1[0], pts2[0])
        d1, d2 = torch.randn(60, 32, device=dev), torch.randn(50, 32, device=dev)
        KF.match_mnn(d1, d2)
        KF.match_smnn(d1, d2, 0.95)
        KF.match_snn(d1, d2, 0.9)

    pred = nn.Conv2d(3, 4, 3, padding=1).to(dev)
    opt = _opt(pred)

    def losses():
        img = torch.rand(2, 3, 32, 32, device=dev)
        target = torch.randint(0, 4, (2, 32, 32), device=dev)
        out = pred(img)
        loss = (kornia.losses.focal_loss(out, target, alpha=0.25, reduction="mean")
                + kornia.losses.dice_loss(out, target)
                + kornia.losses.ssim_loss(out[:, :3].sigmoid(), img, 5)
                + kornia.losses.total_variation(out).mean() * 1e-3)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        kornia.metrics.mean_iou(out.argmax(1), target, 4)
    return {"match": match, "train": losses}


# -- monai: 3D segmentation losses, metrics, sliding-window inference, GPU transforms --------------

def monai_seg(dev):
    from monai.inferers import sliding_window_inference
    from monai.losses import DiceCELoss, DiceFocalLoss, GeneralizedDiceLoss, TverskyLoss
    from monai.metrics import DiceMetric, HausdorffDistanceMetric, MeanIoU
    from monai.networks.nets import UNet

    model = UNet(spatial_dims=3, in_channels=1, out_channels=3, channels=(8, 16, 32), strides=(2, 2),
                 num_res_units=1).to(dev)
    losses = [DiceCELoss(to_onehot_y=True, softmax=True), DiceFocalLoss(to_onehot_y=True, softmax=True),
              GeneralizedDiceLoss(to_onehot_y=True, softmax=True), TverskyLoss(to_onehot_y=True, softmax=True)]
    opt = _opt(model)
    dice, hd, iou = DiceMetric(include_background=False), HausdorffDistanceMetric(percentile=95), MeanIoU()

    def batch():
        return (torch.randn(2, 1, 32, 32, 32, device=dev), torch.randint(0, 3, (2, 1, 32, 32, 32), device=dev))

    def train():
        model.train()
        x, y = batch()
        out = model(x)
        loss = sum(fn(out, y) for fn in losses)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def evaluate():
        model.eval()
        x, y = batch()
        with torch.no_grad():
            out = sliding_window_inference(x, (16, 16, 16), 4, model, overlap=0.25)
        pred = F.one_hot(out.argmax(1), 3).movedim(-1, 1)
        onehot = F.one_hot(y[:, 0], 3).movedim(-1, 1)
        for m in (dice, hd, iou):
            m(pred, onehot)
            m.aggregate()
            m.reset()
    return {"train": train, "infer": evaluate}


def monai_transforms(dev):
    from monai import transforms as T
    keys = ["image", "label"]
    pipeline = T.Compose([
        T.ScaleIntensityRanged("image", a_min=-1.0, a_max=1.0, b_min=0.0, b_max=1.0, clip=True),
        T.RandCropByPosNegLabeld(keys, label_key="label", spatial_size=(16, 16, 16), pos=1, neg=1, num_samples=2),
        T.RandFlipd(keys, prob=0.5, spatial_axis=0), T.RandRotate90d(keys, prob=0.5),
        T.RandGaussianNoised("image", prob=0.5), T.RandAffined(keys, prob=0.5, rotate_range=0.2, mode=("bilinear", "nearest")),
    ])

    def step():
        sample = {"image": torch.randn(1, 32, 32, 32, device=dev),
                  "label": (torch.rand(1, 32, 32, 32, device=dev) > 0.8).float()}
        pipeline(sample)
    return {"augment": step}


# -- diffusers: DDPM training step (noise, min-SNR weights, EMA), scheduler sampling loops --------

def diffusers_unet(dev):
    from diffusers import DDIMScheduler, DDPMScheduler, DPMSolverMultistepScheduler, EulerDiscreteScheduler, UNet2DModel
    from diffusers.training_utils import EMAModel, compute_snr

    unet = UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
                       block_out_channels=(32, 64), down_block_types=("DownBlock2D", "AttnDownBlock2D"),
                       up_block_types=("AttnUpBlock2D", "UpBlock2D"), norm_num_groups=8).to(dev)
    ema = EMAModel(unet.parameters(), decay=0.999)
    noise_sched = DDPMScheduler(num_train_timesteps=100)
    opt = _opt(unet)

    def train():
        unet.train()
        clean = torch.randn(4, 3, 16, 16, device=dev)
        noise = torch.randn_like(clean)
        t = torch.randint(0, noise_sched.config.num_train_timesteps, (4,), device=dev)
        noisy = noise_sched.add_noise(clean, noise, t)
        pred = unet(noisy, t).sample
        snr = compute_snr(noise_sched, t)
        weights = torch.stack([snr, 5 * torch.ones_like(t)], dim=1).min(dim=1)[0] / snr
        loss = (F.mse_loss(pred, noise, reduction="none").mean(dim=(1, 2, 3)) * weights).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        ema.step(unet.parameters())

    scheds = [DDPMScheduler(num_train_timesteps=100), DDIMScheduler(num_train_timesteps=100),
              DPMSolverMultistepScheduler(num_train_timesteps=100), EulerDiscreteScheduler(num_train_timesteps=100)]

    def sample():
        unet.eval()
        with torch.no_grad():
            for sched in scheds:
                sched.set_timesteps(3, device=dev)
                x = torch.randn(2, 3, 16, 16, device=dev) * sched.init_noise_sigma
                for t in sched.timesteps:
                    inp = sched.scale_model_input(x, t)
                    x = sched.step(unet(inp, t).sample, t, x).prev_sample
    return {"train": train, "sample": sample}


def diffusers_pipeline(dev):
    from diffusers import DDPMPipeline, DDPMScheduler, UNet2DModel
    unet = UNet2DModel(sample_size=16, in_channels=3, out_channels=3, layers_per_block=1,
                       block_out_channels=(32, 64), down_block_types=("DownBlock2D", "DownBlock2D"),
                       up_block_types=("UpBlock2D", "UpBlock2D"), norm_num_groups=8)
    pipe = DDPMPipeline(unet=unet, scheduler=DDPMScheduler(num_train_timesteps=100)).to(dev)
    pipe.set_progress_bar_config(disable=True)

    def sample():
        pipe(batch_size=2, num_inference_steps=4, output_type="np")
    return {"sample": sample}


# -- segmentation_models_pytorch: its losses and metrics on a U-Net ------------------------------

def smp_unet(dev):
    import segmentation_models_pytorch as smp
    model = smp.Unet("resnet18", encoder_weights=None, classes=3, encoder_depth=3,
                     decoder_channels=(64, 32, 16)).to(dev)
    losses = [smp.losses.DiceLoss("multiclass"), smp.losses.FocalLoss("multiclass"),
              smp.losses.LovaszLoss("multiclass"), smp.losses.JaccardLoss("multiclass"),
              smp.losses.TverskyLoss("multiclass"), smp.losses.SoftCrossEntropyLoss(smooth_factor=0.1)]
    opt = _opt(model)

    def train():
        model.train()
        x = torch.randn(2, 3, 64, 64, device=dev)
        y = torch.randint(0, 3, (2, 64, 64), device=dev)
        out = model(x)
        loss = sum(fn(out, y) for fn in losses)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        tp, fp, fn_, tn = smp.metrics.get_stats(out.argmax(1), y, mode="multiclass", num_classes=3)
        smp.metrics.iou_score(tp, fp, fn_, tn, reduction="micro")
        smp.metrics.f1_score(tp, fp, fn_, tn, reduction="macro")
    return {"train": train}


# ============================================================================================
# Training repositories, their own code on synthetic data
# ============================================================================================

def nanogpt_train(dev):
    """nanoGPT's train.py as is (fp16 with its GradScaler, gradient accumulation 2, clipping, logging
    every step), on a synthetic token file; the window spans iterations 3 and 4."""
    import numpy as np
    _need_repo("nanoGPT")
    cwd = _tmp()
    shutil.copy(REPOS_DIR / "nanoGPT" / "configurator.py", cwd)
    data = Path(cwd, "data", "synth")
    data.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for split in ("train", "val"):
        rng.integers(0, 256, 20000, dtype=np.uint16).tofile(data / f"{split}.bin")
    with open(data / "meta.pkl", "wb") as fh:
        pickle.dump({"vocab_size": 256}, fh)
    cuda = dev.type == "cuda"
    argv = ["--dataset=synth", f"--device={dev.type}", f"--dtype={'float16' if cuda else 'float32'}",
            "--compile=False", "--n_layer=2", "--n_head=4", "--n_embd=64", "--block_size=64", "--batch_size=8",
            "--gradient_accumulation_steps=2", "--max_iters=8", "--eval_interval=1000", "--eval_iters=2",
            "--log_interval=1", f"--out_dir={cwd}/out", "--warmup_iters=2", "--lr_decay_iters=8"]

    def train():
        with window_on(torch.Tensor, "backward", "nanogpt.train", "train", dev, start=5, stop=9, stop_script=True):
            run_script(REPOS_DIR / "nanoGPT" / "train.py", argv, cwd)
    return {"train_window": train}


def examples_word_language_model(dev):
    """pytorch/examples word_language_model/main.py (LSTM and Transformer) on a synthetic corpus."""
    _need_repo("pytorch_examples")
    cwd = _tmp()
    g = torch.Generator().manual_seed(0)
    for split, n in (("train", 300), ("valid", 40), ("test", 40)):
        lines = [" ".join(_WORDS[int(i)] for i in torch.randint(0, len(_WORDS), (12,), generator=g)) for _ in range(n)]
        Path(cwd, f"{split}.txt").write_text("\n".join(lines) + "\n")
    accel = ["--accel"] if dev.type == "cuda" else []

    def run(model):
        argv = ["--data", cwd, "--model", model, "--emsize", "32", "--nhid", "32", "--nlayers", "2", "--epochs", "1",
                "--batch_size", "8", "--bptt", "16", "--log-interval", "2", "--save", f"{cwd}/{model}.pt", *accel]
        mode = "train_" + model.lower()

        def train():
            with window_on(torch.Tensor, "backward", "examples.word_language_model", mode, dev, start=3, stop=5,
                           stop_script=True):
                run_script(REPOS_DIR / "pytorch_examples" / "word_language_model" / "main.py", argv, cwd)
        return train
    return {"train_lstm_window": run("LSTM"), "train_transformer_window": run("Transformer")}


def examples_dcgan(dev):
    """pytorch/examples dcgan/main.py on its own `--dataset fake` (three backward calls per iteration)."""
    _need_repo("pytorch_examples")
    cwd = _tmp()
    argv = ["--dataset", "fake", "--batchSize", "8", "--imageSize", "64", "--ngf", "16", "--ndf", "16", "--nz", "32",
            "--niter", "1", "--workers", "0", "--outf", cwd, "--manualSeed", "1",
            *(["--accel"] if dev.type == "cuda" else [])]

    def train():
        with window_on(torch.Tensor, "backward", "examples.dcgan", "train", dev, start=7, stop=13, stop_script=True):
            run_script(REPOS_DIR / "pytorch_examples" / "dcgan" / "main.py", argv, cwd)
    return {"train_window": train}


def examples_imagenet(dev):
    """pytorch/examples imagenet/main.py with its own `--dummy` data (resnet18, SGD, meters)."""
    _need_repo("pytorch_examples")
    cwd = _tmp()
    argv = ["--dummy", "-a", "resnet18", "-b", "8", "-j", "0", "-p", "2", "--epochs", "1",
            *(["--gpu", "0"] if dev.type == "cuda" else ["--no-accel"])]

    def train():
        with window_on(torch.Tensor, "backward", "examples.imagenet", "train", dev, start=3, stop=5, stop_script=True):
            run_script(REPOS_DIR / "pytorch_examples" / "imagenet" / "main.py", argv, cwd)
    return {"train_window": train}


def yolox_trainer(dev):
    """YOLOX's Trainer iteration as is (`before_iter`, `train_one_iter`: forward with SimOTA label
    assignment, GradScaler, EMA, LR schedule, meters; `after_iter`: its logging every 2 iterations),
    with a synthetic prefetcher in place of the COCO loader."""
    _need_repo("YOLOX")
    sys.path.insert(0, str(REPOS_DIR / "YOLOX"))
    from yolox.core.trainer import Trainer
    from yolox.exp import Exp
    from yolox.utils import ModelEMA

    exp = Exp()
    exp.depth, exp.width, exp.num_classes = 0.33, 0.25, 5
    exp.input_size = exp.test_size = (128, 128)
    exp.print_interval, exp.output_dir = 2, _tmp()
    args = types.SimpleNamespace(fp16=dev.type == "cuda", experiment_name="heldout", logger="none")
    trainer = Trainer(exp, args)
    trainer.device = str(dev)
    model = exp.get_model().to(dev)
    trainer.model = model
    trainer.optimizer = exp.get_optimizer(4)
    trainer.max_iter, trainer.epoch, trainer.start_epoch = 100, 0, 0
    trainer.lr_scheduler = exp.get_lr_scheduler(exp.basic_lr_per_img * 4, trainer.max_iter)
    trainer.ema_model = ModelEMA(model, 0.9998)
    trainer.use_model_ema = True

    class Prefetcher:
        def next(self):
            imgs = torch.rand(4, 3, 128, 128, device=dev)
            targets = torch.zeros(4, 20, 5, device=dev)
            for i in range(4):
                k = 2 + i
                targets[i, :k, 0] = torch.randint(0, 5, (k,), device=dev).float()
                targets[i, :k, 1:3] = torch.rand(k, 2, device=dev) * 80 + 24
                targets[i, :k, 3:5] = torch.rand(k, 2, device=dev) * 30 + 10
            return imgs, targets
    trainer.prefetcher = Prefetcher()
    state = {"iter": 0}

    def step():  # one pass of Trainer.train_in_iter's loop body
        trainer.iter = state["iter"]
        trainer.before_iter()
        trainer.train_one_iter()
        trainer.after_iter()
        state["iter"] += 1
    return {"train": step}


MODELS = [
    # name, package, builder
    ("torchdiffeq.ode", "torchdiffeq", torchdiffeq_ode),
    ("pyg.node", "torch_geometric", pyg_node),
    ("pyg.graph", "torch_geometric", pyg_graph),
    ("pyg.link", "torch_geometric", pyg_link),
    ("gpytorch.gp", "gpytorch", gpytorch_gp),
    ("botorch.bo", "botorch", botorch_bo),
    ("e3nn.conv", "e3nn", e3nn_conv),
    ("torchmetrics.metrics", "torchmetrics", torchmetrics_metrics),
    ("lightning.fit", "pytorch_lightning", lightning_fit),
    ("peft.lora", "peft", peft_lora),
    ("st.model", "sentence_transformers", sentence_transformers_model),
    ("kornia.augment", "kornia", kornia_augment),
    ("kornia.geometry", "kornia", kornia_geometry),
    ("monai.seg", "monai", monai_seg),
    ("monai.transforms", "monai", monai_transforms),
    ("diffusers.unet", "diffusers", diffusers_unet),
    ("diffusers.pipeline", "diffusers", diffusers_pipeline),
    ("smp.unet", "segmentation_models_pytorch", smp_unet),
    ("nanogpt.train", "nanoGPT", nanogpt_train),
    ("examples.word_language_model", "pytorch_examples", examples_word_language_model),
    ("examples.dcgan", "pytorch_examples", examples_dcgan),
    ("examples.imagenet", "pytorch_examples", examples_imagenet),
    ("yolox.trainer", "YOLOX", yolox_trainer),
]


# ============================================================================================
# prepare: wheels and repository copies (here, with network)
# ============================================================================================

def _mirror(owner_name: str) -> Path | None:
    for base in (Path("/work/.mirror"),):
        d = base / owner_name.replace("/", "+") / "repo"
        if d.is_dir():
            return d
    return None


def copy_repo(name: str, dest_root: Path = REPOS_DIR) -> Path:
    """Copy a pinned repository's needed paths into dest_root/name, from a local mirror (a bare git
    directory under /work/.mirror) or, failing that, a clone from GitHub."""
    owner_name, commit, paths = REPOS[name]
    dest = dest_root / name
    if dest.is_dir():
        return dest
    git_dir = _mirror(owner_name)
    tmp_clone = None
    if git_dir is None:
        tmp_clone = Path(tempfile.mkdtemp(prefix="heldout-clone-"))
        subprocess.run(["git", "clone", "--quiet", "--filter=blob:none", "--no-checkout",
                        f"https://github.com/{owner_name}.git", str(tmp_clone)], check=True, timeout=600)
        git_dir = tmp_clone / ".git"
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit, *paths],
                             check=True, capture_output=True, timeout=600).stdout
    subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
    os.replace(tmp, dest)
    if tmp_clone is not None:
        shutil.rmtree(tmp_clone, ignore_errors=True)
    return dest


def download_wheels(wheels: list, dest: Path) -> None:
    """`pip download` the exact `wheels` (no dependencies) for the GPU machine's Python 3.12 into dest."""
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version",
           "3.12", "--implementation", "cp", "--platform", "manylinux_2_28_x86_64", "--platform",
           "manylinux_2_27_x86_64", "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64",
           "--platform", "manylinux1_x86_64", "-d", str(dest), *wheels]
    subprocess.run(cmd, check=True)
    print(f"wheels in {dest}: " + ", ".join(sorted(p.name for p in dest.glob("*.whl"))))


def prepare() -> None:
    for name in REPOS:
        print(f"{name}: {copy_repo(name)}")
    download_wheels(WHEELS, WHEELS_DIR)


# ============================================================================================

def summary(out_dir: str) -> None:
    """The last lines printed: per model, its runs' status and sync counts."""
    import json
    raw = json.loads(Path(out_dir, "sync_raw.json").read_text())
    sites_by_model: dict = {}
    for s in raw["sites"]:
        for k in s["models"]:
            sites_by_model.setdefault(k.split("/")[0], set()).add((s["path"], s["line"]))
    print(f"\n{'model':32s} {'mode':14s} {'status':8s} {'syncs':>6s} {'sites':>6s} {'s':>6s}")
    for r in raw["models"]:
        print(f"{r['model']:32s} {r.get('mode', '-'):14s} {r['status'][:8]:8s} {r.get('syncs', '-')!s:>6s} "
              f"{len(sites_by_model.get(r['model'], ())):>6d} {r.get('seconds', 0):>6}")


def collect(argv: list, description: str, models: list, set_name: str, repos: dict, dists: dict,
            budget: float, per_model: float) -> int:
    """Record `models` as the command line `argv` says, into the sync_raw.json of the held-out set
    `set_name` (its training repositories and their commits named in the metadata); print the table."""
    args = ac.arg_parser(description, budget=budget, per_model=per_model).parse_args(argv)
    meta = {"versions": ac.versions((), dists), "date": DATE, "set": set_name,
            "repos": {name: {"github": r[0], "commit": r[1]} for name, r in repos.items()}}
    ac.run(models, args, meta)
    summary(args.out)
    return 0


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        prepare()
        return 0
    return collect(argv, __doc__.splitlines()[0], MODELS, "heldout", REPOS, DISTS, budget=200.0, per_model=40.0)


if __name__ == "__main__":
    sys.exit(main())
