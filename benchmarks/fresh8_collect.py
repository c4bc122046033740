"""Record the syncs of a ninth set, `fresh8` (a development set): libraries and training code nobody here read.

`fresh5` (benchmarks/fresh5_collect.py) is the sealed test set; `fresh8` is recorded the same way as `fresh6`
(same recorder, same windows inside a script's own loop; this file only adds workloads and imports the machinery)
in libraries outside the tuned set and the earlier sets and in two public training repositories that no set and
no hand label uses, to be read as a development set once recorded. The workloads were written from the
libraries' documented public API (README / docs examples, the names and signatures they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh8): torchtnt (pytorch/tnt's training
  framework: AutoUnit, fit / train / evaluate / predict, callbacks, loggers), torch-pruning (DepGraph structural
  pruning: pruners, importances, sparse training), segment-anything (SAM with random weights: the predictor and
  the automatic mask generator), torchcam (class activation maps and their metrics), sbi (simulation-based
  inference: NPE, NLE, NRE, FMPE, SBC; + nflows, zuko, skorch: nflows is an sdist, so `prepare` builds its
  wheel), torch-uncertainty (its layers, losses, post-processing and metrics, without its Lightning routines).
  torchtnt 0.2.4 imports pkg_resources: a setuptools that has it travels in .whl/fresh8/if-missing, installed
  only where `import pkg_resources` fails. Their other needs (numpy, scipy, matplotlib, scikit-learn, tqdm,
  tensorboard, tabulate, pyre-extensions, einops, seaborn, torchmetrics, lightning, timm, huggingface-hub,
  opencv, h5py, torchvision) are on the GPU machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh8/repos/<name>:
  locuslab/TCN (adding_problem/add_test.py and copy_memory/copymem_test.py as they are: both make their own
  synthetic data; GPU only unless `--cuda` is passed, which turns CUDA off) and
  sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning (train.py as is on synthetic HDF5 / JSON files in
  create_input_files.py's layout, a randomly initialised ResNet-101 encoder, four training steps; + nltk, which
  it imports for its BLEU score).

    python benchmarks/fresh8_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh8_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh8 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh8 [--linter REV]`.
"""

from __future__ import annotations

import builtins
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
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh8" / "repos", ac.REPO / ".whl" / "fresh8"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh8/repos/<name>)
REPOS = {
    "TCN": ("locuslab/TCN", "2f8c2b817050206397458dfd1f5a25ce8a32fe65",
            ["TCN/__init__.py", "TCN/tcn.py", "TCN/adding_problem/add_test.py", "TCN/adding_problem/model.py",
             "TCN/adding_problem/utils.py", "TCN/copy_memory/copymem_test.py", "TCN/copy_memory/model.py",
             "TCN/copy_memory/utils.py"]),
    "Image-Captioning": ("sgrvinod/a-PyTorch-Tutorial-to-Image-Captioning", "cc9c7e2f4017938d414178d3781fed8dbe442852",
                         ["train.py", "models.py", "datasets.py", "utils.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["torchtnt==0.2.4", "torch-pruning==1.6.1", "segment-anything==1.0", "torchcam==0.5.0", "sbi==0.27.0",
          "zuko==1.6.0", "skorch==1.4.0", "torch-uncertainty==0.13.0", "nltk==3.10.4"]
SDISTS = ["nflows==0.14"]  # no wheel published: `prepare` builds one (pure Python)
# torchtnt's needs that the GPU machine may lack: carried in .whl/fresh8/if-missing, installed there only where
# `import pkg_resources` fails (so as not to shadow the image's own setuptools)
IF_MISSING = ["setuptools==80.9.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"torchtnt": "torchtnt", "torch_pruning": "torch-pruning", "segment_anything": "segment-anything",
         "torchcam": "torchcam", "sbi": "sbi", "nflows": "nflows", "zuko": "zuko", "skorch": "skorch",
         "torch_uncertainty": "torch-uncertainty", "nltk": "nltk", "torchmetrics": "torchmetrics",
         "torchvision": "torchvision", "numpy": "numpy", "scipy": "scipy", "h5py": "h5py"}


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _blobs(n: int, dev, features: int = 20, classes: int = 5, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    x = torch.randn(n, features, generator=g) + 1.5 * torch.eye(classes, features)[y]
    return x.to(dev), y.to(dev)


def _loader(x, y, batch_size=64, shuffle=False):
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size, shuffle=shuffle)


def _resnet18(dev, classes=10):
    from torchvision.models import resnet18
    return resnet18(weights=None, num_classes=classes).to(dev)


# ============================================================================================
# Libraries
# ============================================================================================

# -- torchtnt: AutoUnit training with its options and callbacks, a hand-written TrainUnit / EvalUnit, predict
#    (the docs' "AutoUnit" and "Units" pages, the callbacks and loggers they list) ---------------------------

def torchtnt_loops(dev):
    from torchtnt.framework import EvalUnit, TrainUnit, evaluate, fit, predict, train
    from torchtnt.framework.auto_unit import AutoPredictUnit, AutoUnit, SWAParams
    from torchtnt.framework.callbacks import (
        EarlyStopping,
        GarbageCollector,
        IterationTimeLogger,
        Lambda,
        LearningRateMonitor,
        TensorBoardParameterMonitor,
        ThroughputLogger,
        TrainProgressMonitor,
    )
    from torchtnt.utils import EarlyStopChecker
    from torchtnt.utils.loggers import InMemoryLogger, TensorBoardLogger

    X, y = _blobs(1024, torch.device("cpu"))  # host data: the units move batches to the device
    Xv, yv = _blobs(256, torch.device("cpu"), seed=1)
    train_dl, eval_dl = _loader(X, y, 64, shuffle=True), _loader(Xv, yv, 64)
    tb_dir = hc._tmp()

    class Classifier(AutoUnit):
        def __init__(self, **kw):
            super().__init__(**kw)
            self.logger = InMemoryLogger()
            self.eval_loss = torch.tensor(float("inf"))

        def compute_loss(self, state, data):
            x, t = data
            out = self.module(x)
            return F.cross_entropy(out, t), out

        def configure_optimizers_and_lr_scheduler(self, module):
            opt = torch.optim.SGD(module.parameters(), lr=0.05, momentum=0.9)
            return opt, torch.optim.lr_scheduler.StepLR(opt, step_size=4, gamma=0.5)

        def on_train_step_end(self, state, data, step, results):
            self.logger.log("train_loss", results.loss, step)

        def on_eval_step_end(self, state, data, step, loss, outputs):
            self.eval_loss = loss

    def auto_fit():  # fit with evaluation each epoch, clipping, bf16 autocast on the GPU, the listed callbacks
        mem = InMemoryLogger()
        tb = TensorBoardLogger(os.path.join(tb_dir, "fit"))
        unit = Classifier(module=nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)), device=dev,
                          precision="bf16" if dev.type == "cuda" else None, clip_grad_norm=1.0,
                          step_lr_interval="step")
        callbacks = [LearningRateMonitor(mem, logging_interval="step"), IterationTimeLogger(mem, log_every_n_steps=2),
                     ThroughputLogger(mem, {"samples": 64}, log_every_n_steps=2), TrainProgressMonitor(mem),
                     TensorBoardParameterMonitor(tb), GarbageCollector(step_interval=8),
                     EarlyStopping("eval_loss", EarlyStopChecker(mode="min", patience=3), interval="epoch"),
                     Lambda(on_train_step_end=lambda state, unit: None)]
        fit(unit, train_dl, eval_dl, max_epochs=2, callbacks=callbacks)
        evaluate(unit, eval_dl)
        tb.close()

    def accumulate_swa():  # gradient accumulation, value clipping and an EMA of the weights (SWAParams)
        unit = Classifier(module=nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)), device=dev,
                          gradient_accumulation_steps=2, clip_grad_value=0.5,
                          swa_params=SWAParams(warmup_steps_or_epochs=1, step_or_epoch_update_freq=1,
                                               averaging_method="ema", ema_decay=0.9))
        train(unit, train_dl, max_epochs=2)
        predict(AutoPredictUnit(module=unit.module, device=dev), torch.utils.data.DataLoader(Xv, batch_size=64))

    class Manual(TrainUnit, EvalUnit):  # the docs' hand-written unit: its own step, accuracy and logging
        def __init__(self):
            super().__init__()
            self.module = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(dev)
            self.optimizer = torch.optim.Adam(self.module.parameters(), lr=1e-3)
            self.tb = TensorBoardLogger(os.path.join(tb_dir, "manual"))
            self.correct, self.seen = torch.zeros((), device=dev), 0

        def train_step(self, state, data):
            x, t = (d.to(dev) for d in data)
            loss = F.cross_entropy(self.module(x), t)
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            self.tb.log("loss", loss, self.train_progress.num_steps_completed)
            return loss

        def eval_step(self, state, data):
            x, t = (d.to(dev) for d in data)
            out = self.module(x)
            self.correct += (out.argmax(-1) == t).sum()
            self.seen += t.numel()
            return out

        def on_eval_end(self, state):
            self.tb.log("accuracy", self.correct / self.seen, self.train_progress.num_steps_completed)

    def manual():
        unit = Manual()
        fit(unit, train_dl, eval_dl, max_epochs=1, evaluate_every_n_steps=8)
        unit.tb.close()
    return {"auto_fit": auto_fit, "accumulate_swa": accumulate_swa, "manual": manual}


# -- torch_pruning: DepGraph pruning of a ResNet-18 with the README's pruners and importances, sparse training,
#    interactive and isomorphic global pruning, low-level groups (README, its wiki) -------------------------

def torch_pruning_prune(dev):
    import torch_pruning as tp

    x = torch.randn(16, 3, 64, 64, device=dev)
    t = torch.randint(0, 10, (16,), device=dev)
    example = torch.randn(1, 3, 64, 64, device=dev)

    def finetune(model, steps=2):
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        for _ in range(steps):
            loss = F.cross_entropy(model(x), t)
            opt.zero_grad()
            loss.backward()
            opt.step()

    def magnitude():  # BasePruner with group magnitude, LAMP, FPGM and random importances, then fine-tuning
        for imp in (tp.importance.GroupMagnitudeImportance(p=2), tp.importance.LAMPImportance(p=2),
                    tp.importance.FPGMImportance(), tp.importance.RandomImportance()):
            model = _resnet18(dev)
            pruner = tp.pruner.BasePruner(model, example, importance=imp, pruning_ratio=0.5,
                                          ignored_layers=[model.fc], round_to=8)
            base = tp.utils.count_ops_and_params(model, example)
            pruner.step()
            after = tp.utils.count_ops_and_params(model, example)
            assert after[1] < base[1]
            finetune(model)

    def gradient_based():  # Taylor and Hessian importances from gradients of a batch (the wiki's recipe)
        model = _resnet18(dev)
        imp = tp.importance.GroupTaylorImportance()
        pruner = tp.pruner.BasePruner(model, example, importance=imp, pruning_ratio=0.3, ignored_layers=[model.fc])
        F.cross_entropy(model(x), t).backward()
        pruner.step()
        finetune(model)
        model = _resnet18(dev)
        imp = tp.importance.GroupHessianImportance()
        pruner = tp.pruner.BasePruner(model, example, importance=imp, pruning_ratio=0.3, ignored_layers=[model.fc])
        imp.zero_grad()
        for i in range(4):
            model.zero_grad()
            F.cross_entropy(model(x[i:i + 1]), t[i:i + 1]).backward()
            imp.accumulate_grad(model)
        pruner.step()

    def sparse_training():  # the README's sparse training: update_regularizer, regularize after backward
        for cls, imp in ((tp.pruner.GroupNormPruner, tp.importance.GroupMagnitudeImportance(p=2)),
                         (tp.pruner.BNScalePruner, tp.importance.BNScaleImportance()),
                         (tp.pruner.GrowingRegPruner, tp.importance.GroupMagnitudeImportance(p=2))):
            model = _resnet18(dev)
            pruner = cls(model, example, importance=imp, pruning_ratio=0.5, ignored_layers=[model.fc])
            opt = torch.optim.SGD(model.parameters(), lr=0.01)
            for _ in range(2):
                model.train()
                pruner.update_regularizer()
                for i in range(2):
                    opt.zero_grad()
                    F.cross_entropy(model(x[i * 8:(i + 1) * 8]), t[i * 8:(i + 1) * 8]).backward()
                    pruner.regularize(model)
                    opt.step()
            pruner.step()

    def interactive():  # iterative interactive pruning with global and isomorphic ranking; a ratio dict
        model = _resnet18(dev)
        pruner = tp.pruner.BasePruner(model, example, importance=tp.importance.GroupMagnitudeImportance(p=2),
                                      pruning_ratio=0.5, iterative_steps=3, global_pruning=True, isomorphic=True,
                                      ignored_layers=[model.fc])
        for _ in range(3):
            for group in pruner.step(interactive=True):
                dep, idxs = group[0]
                group.prune()
            tp.utils.count_ops_and_params(model, example)
            finetune(model, 1)
        model = _resnet18(dev)
        pruner = tp.pruner.BasePruner(model, example, importance=tp.importance.GroupMagnitudeImportance(p=1),
                                      global_pruning=True, pruning_ratio=0.5,
                                      pruning_ratio_dict={(model.layer1, model.layer2): 0.4, model.layer3: 0.2},
                                      ignored_layers=[model.fc])
        pruner.step()

    def depgraph():  # the low-level API: a dependency graph, one group by index, every group scanned
        model = _resnet18(dev).eval()
        DG = tp.DependencyGraph().build_dependency(model, example_inputs=example)
        group = DG.get_pruning_group(model.conv1, tp.prune_conv_out_channels, idxs=[2, 6, 9])
        if DG.check_pruning_group(group):
            group.prune()
        for group in DG.get_all_groups(ignored_layers=[model.conv1, model.fc],
                                       root_module_types=[nn.Conv2d, nn.Linear]):
            group.prune(idxs=[0, 1])
        model(example)
    return {"magnitude": magnitude, "gradient_based": gradient_based, "sparse_training": sparse_training,
            "interactive": interactive, "depgraph": depgraph}


# -- segment_anything: SAM (ViT-B, random weights) through SamPredictor and SamAutomaticMaskGenerator, batched
#    prompts through Sam.forward (README, its notebooks) ------------------------------------------------------

def sam_masks(dev):
    import numpy as np
    from segment_anything import SamAutomaticMaskGenerator, SamPredictor, sam_model_registry

    sam = sam_model_registry["vit_b"](checkpoint=None).to(dev).eval()
    rng = np.random.default_rng(0)
    image = (rng.random((240, 320, 3)) * 255).astype(np.uint8)
    image[60:180, 80:240] = [200, 40, 40]  # a block to segment
    predictor = SamPredictor(sam)

    def predict():  # the predictor notebook: points, boxes, multimask output, a mask input, batched boxes
        predictor.set_image(image)
        masks, scores, logits = predictor.predict(point_coords=np.array([[160, 120]]), point_labels=np.array([1]),
                                                  multimask_output=True)
        predictor.predict(point_coords=np.array([[160, 120], [20, 20]]), point_labels=np.array([1, 0]),
                          mask_input=logits[np.argmax(scores), None, :, :], multimask_output=False)
        predictor.predict(box=np.array([80, 60, 240, 180]), multimask_output=False)
        boxes = torch.tensor([[80, 60, 240, 180], [10, 10, 100, 100], [200, 100, 310, 230]], device=dev)
        transformed = predictor.transform.apply_boxes_torch(boxes, image.shape[:2])
        predictor.predict_torch(point_coords=None, point_labels=None, boxes=transformed, multimask_output=False)
        predictor.get_image_embedding()
        predictor.reset_image()

    def batched():  # the notebook's batched input to Sam.forward: two images with boxes and points
        from segment_anything.utils.transforms import ResizeLongestSide
        resize = ResizeLongestSide(sam.image_encoder.img_size)

        def prepare(img):
            return torch.as_tensor(resize.apply_image(img), device=dev).permute(2, 0, 1).contiguous()
        boxes = torch.tensor([[80, 60, 240, 180], [10, 10, 100, 100]], device=dev)
        batched_input = [
            {"image": prepare(image), "boxes": resize.apply_boxes_torch(boxes, image.shape[:2]),
             "original_size": image.shape[:2]},
            {"image": prepare(image[:, ::-1].copy()),
             "point_coords": resize.apply_coords_torch(torch.tensor([[[160, 120]]], device=dev), image.shape[:2]),
             "point_labels": torch.tensor([[1]], device=dev), "original_size": image.shape[:2]},
        ]
        with torch.no_grad():
            sam(batched_input, multimask_output=False)

    def automatic():  # the automatic mask generator with crops, small-region removal and RLE output; the
        # thresholds are 0 so that random weights still leave masks to post-process
        gen = SamAutomaticMaskGenerator(sam, points_per_side=8, points_per_batch=32, pred_iou_thresh=0.0,
                                        stability_score_thresh=0.0, crop_n_layers=1, crop_n_points_downscale_factor=2,
                                        min_mask_region_area=20)
        gen.generate(image)
        SamAutomaticMaskGenerator(sam, points_per_side=6, pred_iou_thresh=0.0, stability_score_thresh=0.0,
                                  output_mode="uncompressed_rle").generate(image)
    return {"predict": predict, "batched": batched, "automatic": automatic}


# -- torchcam: each CAM method on a ResNet-18 (random weights), fused multi-layer maps, the faithfulness
#    metrics and explain() (README, docs) ---------------------------------------------------------------------

def torchcam_maps(dev):
    from torchcam import methods as M
    from torchcam.metrics import ClassificationMetric, DeletionInsertionMetric

    model = _resnet18(dev, classes=20).eval()
    x = torch.randn(2, 3, 160, 160, device=dev)

    def gradient_free():  # CAM, Score-CAM, SS-CAM, IS-CAM
        for cls, kw in ((M.CAM, {}), (M.ScoreCAM, {"batch_size": 64}), (M.SSCAM, {"batch_size": 64, "num_samples": 2}),
                        (M.ISCAM, {"batch_size": 64, "num_samples": 2})):
            with cls(model, target_layer="layer4", **kw) as extractor:
                with torch.no_grad():
                    out = model(x)
                extractor([3, 7], out)

    def gradient():  # Grad-CAM, Grad-CAM++, Smooth Grad-CAM++, XGrad-CAM, Layer-CAM, Finer-CAM, RefineCAM, fused
        for cls, kw in ((M.GradCAM, {}), (M.GradCAMpp, {}), (M.SmoothGradCAMpp, {"num_samples": 2}),
                        (M.XGradCAM, {}), (M.LayerCAM, {}), (M.FinerCAM, {})):
            with cls(model, **kw) as extractor:
                out = model(x)
                extractor([3, 7], out)
        with M.LayerCAM(model, target_layer=["layer2", "layer3", "layer4"]) as extractor:
            out = model(x)
            cams = extractor([3, 7], out)
            M.LayerCAM.fuse_cams(cams)
        with M.RefineCAM(model, target_layer=["layer3", "layer4"]) as extractor:
            out = model(x)
            extractor([3, 7], out)

    def metrics():  # average drop / increase in confidence, deletion and insertion, and explain()
        from torchcam.explain import explain
        with M.GradCAM(model, "layer4") as extractor:
            metric = ClassificationMetric(extractor, partial_softmax)
            metric.update(x, class_idx=[3, 7])
            metric.summary()
            di = DeletionInsertionMetric(extractor, partial_softmax, steps=8, batch_size=16)
            di.update(x, class_idx=[3, 7])
            di.summary()
        explain(model, x[:1], class_names=[f"c{i}" for i in range(20)])

    def partial_softmax(logits):
        return logits.softmax(-1)
    return {"gradient_free": gradient_free, "gradient": gradient, "metrics": metrics}


# -- sbi: neural posterior, likelihood and ratio estimation on a Gaussian simulator, sequential rounds, flow
#    matching, simulation-based calibration (README, its tutorials) ------------------------------------------

def sbi_inference(dev):
    from sbi.diagnostics import check_sbc, run_sbc
    from sbi.inference import FMPE, NLE, NPE, NRE
    from sbi.utils import BoxUniform

    d = dev.type
    prior = BoxUniform(low=-2 * torch.ones(3, device=dev), high=2 * torch.ones(3, device=dev), device=d)

    def simulator(theta):
        return theta + 0.1 * torch.randn_like(theta) + 0.05 * theta ** 2

    theta = prior.sample((1000,))
    x = simulator(theta)
    x_o = torch.tensor([[0.5, -0.3, 1.0]], device=dev)

    def npe():  # NPE with MAF, NSF and MDN density estimators; sampling, log-probs, MAP; two sequential rounds
        for estimator in ("maf", "nsf", "mdn"):
            inference = NPE(prior=prior, density_estimator=estimator, device=d, show_progress_bars=False)
            inference.append_simulations(theta, x).train(max_num_epochs=3, training_batch_size=100)
            posterior = inference.build_posterior()
            samples = posterior.sample((200,), x=x_o, show_progress_bars=False)
            posterior.log_prob(samples, x=x_o)
        posterior.set_default_x(x_o).map(num_iter=20, num_init_samples=50, show_progress_bars=False)
        inference = NPE(prior=prior, device=d, show_progress_bars=False)
        proposal = prior
        for _ in range(2):
            th = proposal.sample((300,))
            inference.append_simulations(th, simulator(th), proposal=proposal).train(max_num_epochs=2)
            proposal = inference.build_posterior().set_default_x(x_o)

    def nle_nre():  # likelihood and ratio estimators, sampled by vectorised slice sampling
        mcmc = {"num_chains": 4, "thin": 1, "warmup_steps": 3, "init_strategy": "proposal"}
        for cls in (NLE, NRE):
            inference = cls(prior=prior, device=d, show_progress_bars=False)
            inference.append_simulations(theta, x).train(max_num_epochs=3, training_batch_size=100)
            posterior = inference.build_posterior(mcmc_method="slice_np_vectorized", mcmc_parameters=mcmc)
            posterior.sample((8,), x=x_o, show_progress_bars=False)

    def fmpe_sbc():  # flow-matching posterior estimation, then simulation-based calibration of an NPE posterior
        inference = FMPE(prior=prior, device=d, show_progress_bars=False)
        inference.append_simulations(theta, x).train(max_num_epochs=3, training_batch_size=100)
        inference.build_posterior().sample((100,), x=x_o, show_progress_bars=False)
        inference = NPE(prior=prior, device=d, show_progress_bars=False)
        inference.append_simulations(theta, x).train(max_num_epochs=3, training_batch_size=100)
        posterior = inference.build_posterior()
        thetas = prior.sample((20,))
        ranks, dap = run_sbc(thetas, simulator(thetas), posterior, num_posterior_samples=50, num_workers=1,
                             show_progress_bar=False)
        check_sbc(ranks, thetas, dap, num_posterior_samples=50)
    return {"npe": npe, "nle_nre": nle_nre, "fmpe_sbc": fmpe_sbc}


# -- torch_uncertainty: packed, batch and Bayesian layers trained with its losses, evidential and beta-NLL
#    regression, post-hoc calibration and conformal prediction, its metrics (README, tutorials) --------------

def torch_uncertainty_methods(dev):
    from torch_uncertainty import losses as L
    from torch_uncertainty import metrics as Me
    from torch_uncertainty import post_processing as P
    from torch_uncertainty.layers import BatchLinear, BayesLinear, PackedLinear

    X, y = _blobs(1024, dev)
    Xc, yc = _blobs(512, dev, seed=2)
    calib = _loader(Xc, yc, 128)
    E = 4

    def ensembles():  # packed-ensembles and BatchEnsemble MLPs, trained on their stacked estimators' outputs
        packed = nn.Sequential(PackedLinear(20, 64, alpha=2, num_estimators=E, first=True), nn.ReLU(),
                               PackedLinear(64, 5, alpha=2, num_estimators=E, last=True)).to(dev)
        batch = nn.Sequential(BatchLinear(20, 64, num_estimators=E), nn.ReLU(),
                              BatchLinear(64, 5, num_estimators=E)).to(dev)
        for model, repeat in ((packed, False), (batch, True)):
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            for i in range(0, 512, 128):
                xb, yb = X[i:i + 128], y[i:i + 128]
                out = model(xb.repeat(E, 1) if repeat else xb)
                loss = F.cross_entropy(out, yb.repeat(E))
                opt.zero_grad()
                loss.backward()
                opt.step()

    def bayes_losses():  # a Bayesian MLP under the ELBO; focal, confidence-penalty, conflictual, evidential losses
        bnn = nn.Sequential(BayesLinear(20, 64), nn.ReLU(), BayesLinear(64, 5)).to(dev)
        elbo = L.ELBOLoss(bnn, nn.CrossEntropyLoss(), kl_weight=1 / 1024, num_samples=3)
        opt = torch.optim.Adam(bnn.parameters(), lr=1e-3)
        for i in range(0, 512, 128):
            loss = elbo(X[i:i + 128], y[i:i + 128])
            opt.zero_grad()
            loss.backward()
            opt.step()
        net = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 5)).to(dev)
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        dec = L.DECLoss(reg_weight=1e-2)
        for loss_fn in (L.FocalLoss(gamma=2.0), L.ConfidencePenaltyLoss(reg_weight=0.1), L.ConflictualLoss(0.1),
                        L.CrossEntropyMaxSupLoss() if hasattr(L, "CrossEntropyMaxSupLoss") else None):
            if loss_fn is None:
                continue
            loss = loss_fn(net(X[:128]), y[:128])
            opt.zero_grad()
            loss.backward()
            opt.step()
        for epoch in range(2):
            loss = dec(F.softplus(net(X[:128])), y[:128], current_epoch=epoch)
            opt.zero_grad()
            loss.backward()
            opt.step()
        reg = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 2)).to(dev)
        ropt = torch.optim.Adam(reg.parameters(), lr=1e-3)
        target = X[:, :1] * 0.5 + X[:, 1:2]
        for i in range(0, 512, 128):
            out = reg(X[i:i + 128])
            loss = L.BetaNLL(beta=0.5)(out[:, :1], target[i:i + 128], F.softplus(out[:, 1:]) + 1e-4)
            loss = loss + L.PinballLoss(quantile=0.9)(out[:, :1], target[i:i + 128])
            ropt.zero_grad()
            loss.backward()
            ropt.step()

    clf = nn.Sequential(nn.Unflatten(1, (5, 2, 2)), nn.Conv2d(5, 16, 1), nn.BatchNorm2d(16), nn.ReLU(), nn.Flatten(),
                        nn.Linear(64, 5)).to(dev)  # BatchNorm2d: what MCBatchNorm converts
    copt = torch.optim.Adam(clf.parameters(), lr=1e-2)
    for i in range(0, 1024, 128):
        copt.zero_grad()
        F.cross_entropy(clf(X[i:i + 128]), y[i:i + 128]).backward()
        copt.step()
    clf.eval()

    def post_processing():  # temperature / vector scaling, histogram binning, conformal sets, MC batch norm
        for scaler in (P.TemperatureScaler(model=clf, device=dev), P.VectorScaler(num_classes=5, model=clf, device=dev),
                       P.HistogramBinningScaler(model=clf, device=dev)):
            scaler.fit(calib, progress=False)
            scaler(X[:256])
        for conformal in (P.ConformalClsAPS(alpha=0.1, model=clf, device=dev),
                          P.ConformalClsRAPS(alpha=0.1, model=clf, device=dev),
                          P.ConformalClsTHR(alpha=0.1, model=clf, device=dev)):
            conformal.fit(calib)
            conformal(X[:256])
        mcbn = P.MCBatchNorm(model=clf, num_estimators=4, mc_batch_size=64, device=dev)
        mcbn.fit(_loader(X[:512], y[:512], 64))
        mcbn(X[:64])

    def metrics():  # calibration, proper scores, selective classification, OOD and diversity metrics
        ms = [Me.CalibrationError(task="multiclass", num_classes=5), Me.AdaptiveCalibrationError(task="multiclass",
              num_classes=5), Me.BrierScore(num_classes=5), Me.CategoricalNLL(), Me.AURC(), Me.AUGRC(),
              Me.CovAt5Risk(), Me.RiskAt80Cov()]
        ms = [m.to(dev) for m in ms]
        ood, div = Me.FPR95(pos_label=1).to(dev), [Me.Disagreement().to(dev), Me.MutualInformation().to(dev),
                                                   Me.Entropy().to(dev), Me.VariationRatio().to(dev)]
        with torch.no_grad():
            for i in range(0, 1024, 256):
                probs = clf(X[i:i + 256]).softmax(-1)
                for m in ms:
                    m.update(probs, y[i:i + 256])
                ood.update(probs.max(-1).values, (torch.arange(256, device=dev) % 2))
                stacked = torch.stack([probs, probs.roll(1, -1), probs.flip(-1)], dim=1)
                for m in div:
                    m.update(stacked)
        for m in [*ms, ood, *div]:
            m.compute()
            m.reset()
    return {"ensembles": ensembles, "bayes_losses": bayes_losses, "post_processing": post_processing,
            "metrics": metrics}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _tcn(script: str, mode: str, argv: list, start: int, stop: int):
    """TCN's task scripts as they are (each makes its own synthetic data): `add_test.py` prints its arguments,
    "Producing data...", a line every --log-interval batches and the test loss each epoch; `copymem_test.py`
    likewise. The window spans prints start..stop: the rest of the first epoch after its first log line, the
    evaluation, and the second epoch's first batches. They call `.cuda()` unless `--cuda` (which turns it off)."""
    def build(dev):
        root = fc._on_path(_need_repo("TCN"))
        cwd = hc._tmp()
        extra = ["--cuda"] if dev.type != "cuda" else []

        def window():
            with hc.window_on(builtins, "print", "tcn." + mode, mode, dev, start, stop, stop_script=True):
                hc.run_script(root / "TCN" / script, [*argv, *extra], cwd)
        return {f"{mode}_window": window}
    return build


def _caption_data(folder: Path, word_map: dict, n_train: int = 40, n_val: int = 8, cpi: int = 5, seed: int = 0):
    """Synthetic files in create_input_files.py's layout: {split}_IMAGES_{name}.hdf5 (uint8 3x256x256 images,
    attribute captions_per_image), {split}_CAPTIONS_{name}.json (encoded captions padded to 52 tokens),
    {split}_CAPLENS_{name}.json and WORDMAP_{name}.json."""
    import json

    import h5py
    import numpy as np
    rng = np.random.default_rng(seed)
    name = "coco_5_cap_per_img_5_min_word_freq"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"WORDMAP_{name}.json").write_text(json.dumps(word_map))
    words = [i for w, i in word_map.items() if not w.startswith("<")]
    for split, n in (("TRAIN", n_train), ("VAL", n_val)):
        with h5py.File(folder / f"{split}_IMAGES_{name}.hdf5", "w") as h:
            h.attrs["captions_per_image"] = cpi
            h.create_dataset("images", data=rng.integers(0, 256, (n, 3, 256, 256), dtype=np.uint8))
        caps, lens = [], []
        for _ in range(n * cpi):
            k = int(rng.integers(5, 20))
            enc = [word_map["<start>"], *rng.choice(words, k).tolist(), word_map["<end>"]]
            caps.append(enc + [word_map["<pad>"]] * (52 - len(enc)))
            lens.append(k + 2)
        (folder / f"{split}_CAPTIONS_{name}.json").write_text(json.dumps(caps))
        (folder / f"{split}_CAPLENS_{name}.json").write_text(json.dumps(lens))


def caption_train(dev):
    """train.py as is (a ResNet-101 encoder, an attention LSTM decoder, Adam, gradient clipping, top-5 accuracy,
    validation with BLEU-4, checkpoints) on synthetic files: 200 training captions (7 batches of up to 32) and
    40 validation captions. Its data folder, a constant in train.py, is redirected to them (os.path.join's first
    argument); the encoder's ResNet-101 is built without its ImageNet weights (no download); its
    `scores, _ = pack_padded_sequence(...)` unpacks the two fields of torch < 1.1's PackedSequence, so
    pack_padded_sequence returns those two (data, batch_sizes) while it runs; utils.py imports
    scipy.misc's imread / imresize, gone from scipy, so a stand-in module holds the two names (only
    create_input_files.py uses them). The window spans the 2nd to the 6th `backward` (one a batch): four training
    steps of the first epoch. Its validation is left out: it indexes the host tensor of all captions with the
    decoder's sort indices, on the GPU, which torch 2 refuses (`allcaps[sort_ind]`)."""
    root = _need_repo("Image-Captioning")
    tmp = Path(hc._tmp())
    vocab = ["<pad>", "<start>", "<end>", "<unk>"] + [f"w{i}" for i in range(120)]
    word_map = {w: i for i, w in enumerate(vocab)}
    _caption_data(tmp / "data", word_map)
    cwd = tmp / "run"
    cwd.mkdir()

    def window():
        import torchvision
        from torch.nn.utils import rnn
        orig_join, orig_resnet, orig_pack = os.path.join, torchvision.models.resnet101, rnn.pack_padded_sequence

        def join(a, *p):
            return orig_join(str(tmp / "data") if a == "/media/ssd/caption data" else a, *p)

        def resnet101(pretrained=False, **kw):
            return orig_resnet(weights=None, **kw)

        def _patched(*a, **kw):  # named as the recorder's hooks: never a site itself (train.py's line is)
            return tuple(orig_pack(*a, **kw))[:2]  # train.py unpacks two fields (data, batch_sizes)
        misc = types.ModuleType("scipy.misc")
        misc.imread = misc.imresize = None
        saved = {k: sys.modules.pop(k) for k in ("scipy.misc", "datasets", "models", "utils") if k in sys.modules}
        sys.modules["scipy.misc"] = misc
        os.path.join, torchvision.models.resnet101, rnn.pack_padded_sequence = join, resnet101, _patched
        try:
            with hc.window_on(torch.Tensor, "backward", "caption.train", "train", dev, 2, 6, stop_script=True):
                hc.run_script(root / "train.py", [], str(cwd))
        finally:
            os.path.join, torchvision.models.resnet101, rnn.pack_padded_sequence = orig_join, orig_resnet, orig_pack
            for k in ("scipy.misc", "datasets", "models", "utils"):
                sys.modules.pop(k, None)
            sys.modules.update(saved)
    return {"train_window": window}


MODELS = [
    # name, package, builder
    ("torchtnt.loops", "torchtnt", torchtnt_loops),
    ("torch_pruning.prune", "torch_pruning", torch_pruning_prune),
    ("sam.masks", "segment_anything", sam_masks),
    ("torchcam.maps", "torchcam", torchcam_maps),
    ("sbi.inference", "sbi", sbi_inference),
    ("torch_uncertainty.methods", "torch_uncertainty", torch_uncertainty_methods),
    ("tcn.adding", "TCN", _tcn("adding_problem/add_test.py", "adding",
                               ["--epochs", "2", "--seq_len", "200", "--batch_size", "1024", "--log-interval", "20"],
                               3, 6)),
    ("tcn.copymem", "TCN", _tcn("copy_memory/copymem_test.py", "copymem",
                                ["--epochs", "2", "--blank_len", "200", "--batch_size", "256", "--log-interval",
                                 "10"], 3, 7)),
    ("caption.train", "Image-Captioning", caption_train),
]


def prepare() -> None:
    """The repositories' files and the wheels (fresh_collect's prepare), nflows' wheel built from its sdist, and
    the if-missing setuptools."""
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-binary", ":all:", "-w",
                    str(WHEELS_DIR), *SDISTS], check=True)
    hc.download_wheels(IF_MISSING, WHEELS_DIR / "if-missing")


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        prepare()
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh8", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
