"""Record the syncs of a thirty-sixth set, `fresh35` (a sealed test set): libraries and training code nobody here read.

`fresh35` is recorded the same way as `fresh9` to `fresh33` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; pytorch-forecasting's and pytorch-tabular's
Lightning trainers are given `accelerator=` (their predictions scored by a metric are made on the CPU, as the
tutorial does), quantus' metrics `device=`, and each moves its batches to the device it is given; pgmpy's PyTorch
backend is set with `config.set_backend("torch", device=)`, its documented switch, and set back to NumPy after each
mode): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh35), names m to z: pgmpy (probabilistic
  graphical models on its PyTorch backend: exact inference, belief propagation, sampling, parameter learning, Markov
  networks), pygad (genetic algorithms; its `torchga` module evolving PyTorch models' weights), pytorch_forecasting
  (pytorch-forecasting: `TimeSeriesDataSet`, Temporal Fusion Transformer, N-BEATS and DeepAR trained with
  Lightning, predicted), pytorch_tabular (pytorch-tabular: `TabularModel` with category embedding, GANDALF and DANet
  configs, fitted, evaluated, predicted), quantus (explanation quality metrics: faithfulness, robustness,
  randomisation, complexity, localisation, with a gradient saliency of our own as the explanation function), shap
  (DeepExplainer and GradientExplainer of PyTorch models, on a layer too), se3_transformer_pytorch
  (se3-transformer-pytorch: SE(3)-equivariant attention on point clouds and molecules, trained a few steps) and
  tslearn (its PyTorch soft-DTW loss and its DTW metrics on PyTorch tensors, `be="pytorch"`); + scikit-base
  (pytorch-forecasting's, pytorch-tabular's and pgmpy's), omegaconf (pytorch-tabular's), slicer (shap's) and
  cachetools (quantus'). Their other needs (numpy,
  scipy, pandas, scikit-learn, lightning, torchmetrics, networkx, statsmodels, opt_einsum, huggingface_hub, numba,
  opencv, scikit-image, matplotlib, cloudpickle, einops, filelock, rich, tqdm) are on the GPU machine. pygod (its
  detectors need pyg-lib or torch-sparse for neighbour sampling) and pytorchltr (its SVMRank loader calls the
  removed `csr_matrix.A`) were left out after their CPU smoke runs and replaced by pgmpy and pygad; skada (deep
  domain adaptation through skorch) failed in every mode's warm-up on the GPU (scikit-learn's `check_array` given a
  CUDA tensor) and was replaced by se3-transformer-pytorch, and pgmpy's `likelihood_weighted_sample` (a CUDA tensor
  to NumPy) was cut from its sampling mode.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh35/repos/<name>:
  yaodongyu/TRADES (train_trades_cifar10.py as is: TRADES adversarial training of a WideResNet-34-10, its PGD
  inner maximisation and its natural-accuracy evaluations) and wgrathwohl/JEM (train_wrn_ebm.py as is: a joint
  energy-based model on a WideResNet, SGLD sampling from a replay buffer, joint and class-conditional),
  both on synthetic CIFAR-10 (torchvision's `CIFAR10` answered by `FakeData`).

    python benchmarks/fresh35_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh35_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh35 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh35 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import math
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
BENCH_DIR = ac.REPO / ".bench" / "fresh35"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh35", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh35/repos/<name>)
REPOS = {
    "trades": ("yaodongyu/TRADES", "6e8e11b7c281371c2f027ffadfbaea80361f09de",
               ["train_trades_cifar10.py", "trades.py", "models"]),
    "jem": ("wgrathwohl/JEM", "3d01161547109b464eee87304f07b2dac8519d03",
            ["train_wrn_ebm.py", "wideresnet.py", "norms.py", "utils.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["pgmpy==1.1.2", "pygad==3.9.2", "pytorch-forecasting==1.8.0", "scikit-base==1.0.2",
          "pytorch-tabular==1.2.0", "omegaconf==2.4.0", "quantus==0.6.0", "cachetools==8.0.2", "shap==0.51.0",
          "slicer==0.0.8", "se3-transformer-pytorch==0.9.0", "tslearn==0.10.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"pgmpy": "pgmpy", "pygad": "pygad", "pytorch_forecasting": "pytorch-forecasting",
         "pytorch_tabular": "pytorch-tabular", "quantus": "quantus", "shap": "shap",
         "se3_transformer_pytorch": "se3-transformer-pytorch", "tslearn": "tslearn",
         "skbase": "scikit-base", "omegaconf": "omegaconf", "numpy": "numpy",
         "lightning": "lightning", "torch_geometric": "torch-geometric", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh35/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh35_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _gpu(dev) -> bool:
    return dev.type == "cuda"


# ============================================================================================
# Libraries
# ============================================================================================

# -- pgmpy: its PyTorch backend (`config.set_backend("torch", device=)`, the docs' "GPU" recipe: factors and CPDs
#    held as tensors on that device), the student network of its tutorials built from `TabularCPD`s in a
#    `DiscreteBayesianNetwork`, exact inference (`VariableElimination.query` / `map_query`, `BeliefPropagation`
#    calibrated, queried, `map_query`), sampling (`BayesianModelSampling.forward_sample`,
#    `likelihood_weighted_sample`, `rejection_sample`, `GibbsSampling.sample`), parameter learning (`fit` with
#    `DiscreteMLE()` / `DiscreteBayesianEstimator(prior_type="BDeu")`, then `predict`) and a `DiscreteMarkovNetwork`
#    of `DiscreteFactor`s -----------------------------------------------------------------------------------------

def pgmpy_models(dev):
    from pgmpy import config
    from pgmpy.factors.discrete import DiscreteFactor, TabularCPD
    from pgmpy.inference import BeliefPropagation, VariableElimination
    from pgmpy.models import DiscreteBayesianNetwork, DiscreteMarkovNetwork
    from pgmpy.parameter_estimator import DiscreteBayesianEstimator, DiscreteMLE
    from pgmpy.sampling import BayesianModelSampling, GibbsSampling

    def student():
        model = DiscreteBayesianNetwork([("D", "G"), ("I", "G"), ("G", "L"), ("I", "S")])
        cpds = [TabularCPD("D", 2, [[0.6], [0.4]]), TabularCPD("I", 2, [[0.7], [0.3]]),
                TabularCPD("G", 3, [[0.3, 0.05, 0.9, 0.5], [0.4, 0.25, 0.08, 0.3], [0.3, 0.7, 0.02, 0.2]],
                           evidence=["I", "D"], evidence_card=[2, 2]),
                TabularCPD("L", 2, [[0.1, 0.4, 0.99], [0.9, 0.6, 0.01]], evidence=["G"], evidence_card=[3]),
                TabularCPD("S", 2, [[0.95, 0.2], [0.05, 0.8]], evidence=["I"], evidence_card=[2])]
        model.add_cpds(*cpds)
        assert model.check_model()
        return model

    def backend(fn):
        def run():
            config.set_backend("torch", device=str(dev))
            config.set_show_progress(False)
            try:
                fn()
            finally:
                config.set_backend("numpy")
        return run

    def exact():
        model = student()
        infer = VariableElimination(model)
        for ev in ({}, {"L": 1}, {"D": 0, "S": 1}, {"G": 2}):
            q = infer.query(["I"], evidence=ev)
            j = infer.query(["G", "S"], evidence={k: v for k, v in ev.items() if k not in ("G", "S")}, joint=True)
            m = infer.map_query(["G"], evidence={k: v for k, v in ev.items() if k != "G"})
            print(f"ve {ev}: P(I) {q.values.tolist()} joint {tuple(j.values.shape)} map {m}")

    def belief():
        model = student()
        bp = BeliefPropagation(model)
        bp.calibrate()
        for ev in ({}, {"L": 0}, {"S": 1, "D": 1}):
            q = bp.query(["G"], evidence=ev)
            m = bp.map_query([v for v in ("I", "D") if v not in ev], evidence=ev)
            print(f"bp {ev}: P(G) {q.values.tolist()} map {m}")
        print(f"max-calibrated: {len(bp.get_cliques())} cliques")

    def sampling():
        model = student()
        s = BayesianModelSampling(model)
        fw = s.forward_sample(size=500, seed=0, show_progress=False)
        rj = s.rejection_sample(evidence=[("S", 1)], size=200, seed=2, show_progress=False)
        gibbs = GibbsSampling(model).sample(size=100, seed=3)
        print(f"samples: {fw.mean().round(2).tolist()} {rj['I'].mean():.2f} {gibbs.mean().round(2).tolist()}")

    def learning():
        truth = student()
        data = BayesianModelSampling(truth).forward_sample(size=800, seed=4, show_progress=False)
        for est in (DiscreteMLE(), DiscreteBayesianEstimator(prior_type="BDeu", equivalent_sample_size=5)):
            model = DiscreteBayesianNetwork(truth.edges())
            model = model.fit(data, estimator=est)
            pred = model.predict(data.drop(columns=["L"]).head(40))
            ve = VariableElimination(model).query(["L"], evidence={"I": 1})
            print(f"{type(est).__name__}: G|I,D {model.get_cpds('G').values.reshape(3, -1)[:, 0].tolist()} "
                  f"pred L {pred['L'].mean():.2f} P(L|I=1) {ve.values.tolist()}")

    def markov():
        mn = DiscreteMarkovNetwork([("A", "B"), ("B", "C"), ("C", "D"), ("D", "A")])
        rng = np.random.default_rng(0)
        for a, b in mn.edges():
            mn.add_factors(DiscreteFactor([a, b], [2, 2], rng.uniform(0.5, 2.0, 4)))
        bp = BeliefPropagation(mn)
        for ev in ({}, {"A": 1}, {"B": 0, "D": 1}):
            q = bp.query(["C"], evidence=ev)
            m = bp.map_query(["A", "C"] if "A" not in ev else ["C"], evidence=ev)
            print(f"markov {ev}: {q.values.tolist()} {m} Z {mn.get_partition_function():.3f}")

    return {"exact": backend(exact), "belief": backend(belief), "sampling": backend(sampling),
            "learning": backend(learning), "markov": backend(markov)}


# -- pygad: its `pygad.torchga` recipe (docs' "Train PyTorch models using PyGAD"): `TorchGA(model=,
#    num_solutions=)` and its `population_weights` as the initial population of `pygad.GA(num_generations=,
#    num_parents_mating=, initial_population=, fitness_func=, on_generation=, parent_selection_type=,
#    crossover_type=, mutation_type=, mutation_percent_genes=, keep_elitism=)`, a fitness computed by
#    `torchga.predict(model=, solution=, data=)` on inputs on the device, `best_solution()`, and the best weights
#    loaded back through `torchga.model_weights_as_dict` --------------------------------------------------------

def pygad_torchga(dev):
    import pygad
    from pygad import torchga

    def task(kind, generations=6, **ga_kw):
        def run():
            torch.manual_seed(0)
            g = torch.Generator().manual_seed(1)
            if kind == "regression":
                model = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1)).to(dev)
                x = torch.randn(64, 3, generator=g).to(dev)
                y = (x @ torch.tensor([[0.5], [-1.0], [2.0]]).to(dev)) + 0.3
                loss_fn = nn.L1Loss()
            elif kind == "classification":
                model = nn.Sequential(nn.Linear(4, 12), nn.ReLU(), nn.Linear(12, 3), nn.Softmax(dim=1)).to(dev)
                x = torch.randn(90, 4, generator=g).to(dev)
                y = (x[:, 0] > 0).long() + (x[:, 1] > 0.5).long()
                y = F.one_hot(y, 3).float().to(dev)
                loss_fn = nn.BCELoss()
            else:  # a small CNN classifier
                model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(2), nn.Flatten(),
                                      nn.Linear(16, 2), nn.Softmax(dim=1)).to(dev)
                x = torch.randn(32, 1, 8, 8, generator=g)
                lab = (x[:, 0, :4].mean((1, 2)) > x[:, 0, 4:].mean((1, 2))).long()
                x, y = x.to(dev), lab.to(dev)
                loss_fn = nn.CrossEntropyLoss()

            def fitness_func(ga_instance, solution, sol_idx):
                predictions = torchga.predict(model=model, solution=solution, data=x)
                err = loss_fn(predictions, y).detach().cpu().numpy() + 0.00000001
                return 1.0 / err

            history = []

            def on_generation(ga_instance):
                history.append(ga_instance.best_solution()[1])

            torch_ga = torchga.TorchGA(model=model, num_solutions=10)
            ga = pygad.GA(num_generations=generations, num_parents_mating=5,
                          initial_population=torch_ga.population_weights, fitness_func=fitness_func,
                          on_generation=on_generation, suppress_warnings=True, random_seed=0, **ga_kw)
            ga.run()
            solution, fitness, idx = ga.best_solution()
            model.load_state_dict(torchga.model_weights_as_dict(model=model, weights_vector=solution))
            with torch.no_grad():
                out = model(x)
            print(f"{kind} {ga_kw}: fitness {fitness:.3f} history {len(history)} out {tuple(out.shape)}")
        return run

    return {"regression": task("regression"),
            "classification": task("classification", parent_selection_type="tournament", crossover_type="uniform",
                                   mutation_percent_genes=20),
            "cnn": task("cnn", keep_elitism=2, crossover_type="two_points", mutation_type="swap"),
            "regression_adaptive": task("regression", mutation_type="adaptive", mutation_percent_genes=(30, 10),
                                        parent_selection_type="rank")}


# -- pytorch_forecasting: the README / tutorial recipe: a `TimeSeriesDataSet(data, time_idx=, target=, group_ids=,
#    max_encoder_length=, max_prediction_length=, static_categoricals=, time_varying_known_reals=,
#    time_varying_unknown_reals=, target_normalizer=)`, its `from_dataset` validation set and `to_dataloader`,
#    models built by `Model.from_dataset(...)` (TemporalFusionTransformer with QuantileLoss, NBeats, DeepAR
#    with NormalDistributionLoss), fitted by a Lightning `Trainer(accelerator=, devices=1, max_epochs=,
#    limit_train_batches=, gradient_clip_val=)`, then `predict(..., mode=, return_y=, trainer_kwargs=)` and the
#    metrics on the predictions ------------------------------------------------------------------------------

def forecasting_models(dev):
    import lightning.pytorch as pl
    import pandas as pd
    from pytorch_forecasting import (
        MAE,
        SMAPE,
        DeepAR,
        GroupNormalizer,
        NBeats,
        QuantileLoss,
        TemporalFusionTransformer,
        TimeSeriesDataSet,
    )
    from pytorch_forecasting.metrics import NormalDistributionLoss

    accel = "gpu" if _gpu(dev) else "cpu"
    rng = np.random.default_rng(0)
    rows = []
    for gi in range(6):
        level, season = 10 + 3 * gi, rng.uniform(1, 3)
        for t in range(120):
            rows.append({"series": f"s{gi}", "kind": f"k{gi % 2}", "time_idx": t,
                         "month": float(t % 12), "value": level + season * math.sin(2 * math.pi * t / 12)
                         + 0.05 * t + rng.normal(0, 0.3)})
    data = pd.DataFrame(rows)
    cutoff = 100

    def datasets(enc=24, pred=6, **kw):
        training = TimeSeriesDataSet(data[data.time_idx <= cutoff], time_idx="time_idx", target="value",
                                     group_ids=["series"], max_encoder_length=enc, max_prediction_length=pred, **kw)
        validation = TimeSeriesDataSet.from_dataset(training, data, min_prediction_idx=cutoff + 1)
        return training, validation

    def fit(model, training, validation, batches=3):
        train_dl = training.to_dataloader(train=True, batch_size=32, num_workers=0)
        val_dl = validation.to_dataloader(train=False, batch_size=32, num_workers=0)
        trainer = pl.Trainer(accelerator=accel, devices=1, max_epochs=1, limit_train_batches=batches,
                             limit_val_batches=1,
                             gradient_clip_val=0.1, enable_checkpointing=False, logger=False,
                             enable_progress_bar=False, enable_model_summary=False)
        trainer.fit(model, train_dataloaders=train_dl, val_dataloaders=val_dl)
        return val_dl

    def tft():
        training, validation = datasets(static_categoricals=["kind"], time_varying_known_reals=["time_idx", "month"],
                                        time_varying_unknown_reals=["value"],
                                        target_normalizer=GroupNormalizer(groups=["series"]))
        model = TemporalFusionTransformer.from_dataset(training, learning_rate=0.03, hidden_size=16,
                                                       attention_head_size=2, dropout=0.1, hidden_continuous_size=8,
                                                       loss=QuantileLoss(), log_interval=-1)
        val_dl = fit(model, training, validation)
        raw = model.predict(val_dl, mode="raw", return_x=True, trainer_kwargs=dict(accelerator=accel, logger=False))
        pred = model.predict(val_dl, return_y=True, trainer_kwargs=dict(accelerator="cpu", logger=False))
        print(f"tft: mae {MAE()(pred.output, pred.y).item():.3f} raw {tuple(raw.output.prediction.shape)}")

    def nbeats():
        training, validation = datasets(time_varying_unknown_reals=["value"])
        model = NBeats.from_dataset(training, learning_rate=3e-3, widths=[32, 64], backcast_loss_ratio=0.1,
                                    log_interval=-1)
        val_dl = fit(model, training, validation)
        out = model.predict(val_dl, trainer_kwargs=dict(accelerator=accel, logger=False))
        pred = model.predict(val_dl, return_y=True, trainer_kwargs=dict(accelerator="cpu", logger=False))
        print(f"nbeats: {tuple(out.shape)} smape {SMAPE()(pred.output, pred.y).item():.3f}")

    def deepar():
        training, validation = datasets(time_varying_unknown_reals=["value"], time_varying_known_reals=["time_idx"],
                                        target_normalizer=GroupNormalizer(groups=["series"]))
        model = DeepAR.from_dataset(training, learning_rate=3e-3, hidden_size=16, rnn_layers=2,
                                    loss=NormalDistributionLoss(), log_interval=-1)
        val_dl = fit(model, training, validation)
        out = model.predict(val_dl, mode="quantiles", n_samples=50, trainer_kwargs=dict(accelerator=accel,
                                                                                         logger=False))
        pred = model.predict(val_dl, mode="prediction", return_y=True, n_samples=50,
                             trainer_kwargs=dict(accelerator="cpu", logger=False))
        print(f"deepar: {tuple(out.shape)} mae {MAE()(pred.output, pred.y).item():.3f}")

    return {"tft": tft, "nbeats": nbeats, "deepar": deepar}


# -- pytorch_tabular: the README's `TabularModel(data_config=DataConfig(target=, continuous_cols=,
#    categorical_cols=), model_config=..., optimizer_config=OptimizerConfig(), trainer_config=TrainerConfig(
#    batch_size=, max_epochs=, accelerator=))`, `.fit(train=, validation=)`, `.evaluate(test)`, `.predict(test)`;
#    the model configs CategoryEmbeddingModelConfig, GANDALFConfig, DANetConfig ----------------------------------------

def tabular_models(dev):
    import pandas as pd
    from pytorch_tabular import TabularModel
    from pytorch_tabular.config import DataConfig, OptimizerConfig, TrainerConfig
    from pytorch_tabular.models import CategoryEmbeddingModelConfig, DANetConfig, GANDALFConfig

    rng = np.random.default_rng(0)
    n = 640
    df = pd.DataFrame({f"num{i}": rng.normal(size=n) for i in range(6)})
    df["cat0"] = rng.choice(["a", "b", "c"], n)
    df["cat1"] = rng.choice(["x", "y", "z", "w"], n)
    score = df.num0 - 0.5 * df.num1 * df.num2 + (df.cat0 == "a") * 0.8 - 0.3 * (df.cat1 == "w")
    df["label"] = pd.cut(score, [-np.inf, -0.5, 0.5, np.inf], labels=False).astype(int)
    df["target"] = score + rng.normal(0, 0.1, n)
    train, val, test = df.iloc[:448], df.iloc[448:544], df.iloc[544:]
    accel = "gpu" if _gpu(dev) else "cpu"

    def run_model(cfg_cls, task, **kw):
        def run():
            data_config = DataConfig(target=["label" if task == "classification" else "target"],
                                     continuous_cols=[f"num{i}" for i in range(6)], categorical_cols=["cat0", "cat1"])
            trainer_config = TrainerConfig(batch_size=128, max_epochs=1, accelerator=accel, devices=1,
                                           checkpoints=None, load_best=False, progress_bar="none",
                                           early_stopping=None)
            model_config = cfg_cls(task=task, learning_rate=1e-3, **kw)
            model = TabularModel(data_config=data_config, model_config=model_config,
                                 optimizer_config=OptimizerConfig(), trainer_config=trainer_config, verbose=False,
                                 suppress_lightning_logger=True)
            model.fit(train=train.drop(columns=["target" if task == "classification" else "label"]),
                      validation=val)
            result = model.evaluate(test, verbose=False)
            pred = model.predict(test)
            print(f"{cfg_cls.__name__} {task}: {result[0]} {pred.shape}")
        return run

    return {"category_embedding": run_model(CategoryEmbeddingModelConfig, "classification", layers="32-16"),
            "gandalf": run_model(GANDALFConfig, "regression", gflu_stages=3),
            "danet": run_model(DANetConfig, "classification", n_layers=4, abstlay_dim_1=16, abstlay_dim_2=32)}


# -- quantus: the README's metrics called `metric(model=, x_batch=, y_batch=, a_batch=, explain_func=,
#    device=)` on NumPy batches with a PyTorch classifier on the device; explanations from a custom `explain_func`
#    (the docs allow any callable `(model, inputs, targets, **kwargs)`): plain gradient saliency of our own ---------

class _SmallCNN(nn.Module):
    def __init__(self, channels=1, classes=4):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(x.flatten(1))


def _blobs(n, seed=0, size=16, classes=4):
    """`n` one-channel images, each a bright square in the quadrant its class names, on noise (NumPy)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 0.2, (n, 1, size, size)).astype(np.float32)
    y = rng.integers(0, classes, n)
    for i, c in enumerate(y):
        r, col = (c // 2) * size // 2 + 2, (c % 2) * size // 2 + 2
        x[i, 0, r:r + 4, col:col + 4] += 1.5
    return x, y


def _trained_cnn(dev, steps=40):
    torch.manual_seed(0)
    model = _SmallCNN().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    x, y = _blobs(256, 1)
    xt, yt = torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)
    for _ in range(steps):
        loss = F.cross_entropy(model(xt), yt)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def quantus_metrics(dev):
    import quantus

    def saliency(model, inputs, targets, **kwargs):
        device = kwargs.get("device", dev)
        x = torch.as_tensor(inputs, dtype=torch.float32).to(device).requires_grad_(True)
        t = torch.as_tensor(targets).to(device)
        out = model(x)
        grad, = torch.autograd.grad(out.gather(1, t.view(-1, 1)).sum(), x)
        return grad.abs().sum(1, keepdim=True).detach().cpu().numpy()

    model = _trained_cnn(dev)
    x, y = _blobs(16, 2)
    a = saliency(model, x, y)
    s = np.zeros_like(x)
    for i, c in enumerate(y):
        r, col = (c // 2) * 8 + 2, (c % 2) * 8 + 2
        s[i, 0, r:r + 4, col:col + 4] = 1
    device = str(dev)

    def metric(cls, with_explain=False, with_s=False, **kw):
        def run():
            m = cls(disable_warnings=True, **kw)
            extra = {"explain_func": saliency} if with_explain else {}
            if with_s:
                extra["s_batch"] = s
            scores = m(model=model, x_batch=x, y_batch=y, a_batch=a, device=device, **extra)
            if isinstance(scores, dict):
                scores = [np.nanmean(np.asarray(v, dtype=float)) for v in scores.values()]
            print(f"{cls.__name__}: {np.nanmean(np.asarray(scores, dtype=float)):.4f}")
        return run

    return {"faithfulness_correlation": metric(quantus.FaithfulnessCorrelation, nr_runs=8, subset_size=16),
            "pixel_flipping": metric(quantus.PixelFlipping, features_in_step=32),
            "monotonicity_correlation": metric(quantus.MonotonicityCorrelation, nr_samples=2, features_in_step=64),
            "max_sensitivity": metric(quantus.MaxSensitivity, True, nr_samples=4, lower_bound=0.1),
            "local_lipschitz": metric(quantus.LocalLipschitzEstimate, True, nr_samples=4),
            "random_logit": metric(quantus.RandomLogit, True, num_classes=4),
            "randomisation": metric(quantus.MPRT, True),
            "complexity": metric(quantus.Sparseness),
            "pointing_game": metric(quantus.PointingGame, with_s=True),
            "roar_region": metric(quantus.RegionPerturbation, patch_size=4, regions_evaluation=6)}


# -- shap: the docs' `shap.DeepExplainer(model, background)` / `shap.GradientExplainer(model, background,
#    local_smoothing=)` on PyTorch models with background and inputs on the device, `.shap_values(x,
#    ranked_outputs=, nsamples=)`, and GradientExplainer on an intermediate layer `(model, layer)` ------------------

def shap_explain(dev):
    import shap

    model = _trained_cnn(dev)
    xb, _ = _blobs(48, 3)
    xe, _ = _blobs(3, 4)
    background, inputs = torch.from_numpy(xb).to(dev), torch.from_numpy(xe).to(dev)
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 3)).to(dev).eval()
    tb, te = torch.randn(64, 10).to(dev), torch.randn(8, 10).to(dev)

    def deep():
        e = shap.DeepExplainer(model, background)
        values = e.shap_values(inputs, check_additivity=False)
        e2 = shap.DeepExplainer(mlp, tb)
        v2 = e2.shap_values(te, check_additivity=False)
        v3, idx = e2.shap_values(te, ranked_outputs=2, check_additivity=False)
        print(f"deep: {np.asarray(values).shape} {np.asarray(v2).shape} {idx.shape}")

    def gradient():
        for smoothing in (0.0, 0.1):
            e = shap.GradientExplainer(model, background, local_smoothing=smoothing)
            values = e.shap_values(inputs, nsamples=12)
            v2, idx = e.shap_values(inputs, nsamples=8, ranked_outputs=2)
            print(f"gradient {smoothing}: {np.asarray(values).shape} {idx.shape}")
        e = shap.GradientExplainer(mlp, tb)
        values, var = e.shap_values(te[:4], nsamples=12, return_variances=True)
        print(f"gradient mlp: {np.asarray(values).shape}")

    def layer():
        e = shap.GradientExplainer((model, model.conv2), background)
        values = e.shap_values(inputs[:2], nsamples=8)
        print(f"layer: {np.asarray(values).shape}")

    return {"deep": deep, "gradient": gradient, "layer": layer}


# -- se3_transformer_pytorch (se3-transformer-pytorch): the README's `SE3Transformer(dim=, heads=, depth=,
#    dim_head=, num_degrees=, valid_radius=)` on features, coordinates and a mask; the molecule example (atom
#    `num_tokens=`, bond `num_edge_tokens=` / `edge_dim=`, `attend_sparse_neighbors=True` with an `adj_mat`,
#    `num_adj_degrees=`, `reduce_dim_out=True`); coordinate denoising with `return_type=1`; `num_neighbors=` nearest
#    neighbours with `use_egnn=True` (`return_type=0`), and `linear_proj_keys=`; each trained a few steps
#    on random point clouds on the device ----------------------------------------------------------------------

def se3_models(dev):
    from se3_transformer_pytorch import SE3Transformer

    def train(kind, steps=3):
        def run():
            torch.manual_seed(0)
            g = torch.Generator().manual_seed(1)
            b, n = 2, 24
            coors = (torch.randn(b, n, 3, generator=g) * 3).to(dev)
            mask = torch.ones(b, n, dtype=torch.bool).to(dev)
            mask[1, -4:] = False
            if kind == "basic":
                model = SE3Transformer(dim=16, heads=2, depth=1, dim_head=8, num_degrees=2, valid_radius=10).to(dev)
                feats = torch.randn(b, n, 16, generator=g).to(dev)
                kw = {}
            elif kind == "molecule":
                model = SE3Transformer(num_tokens=10, dim=16, num_edge_tokens=4, edge_dim=4, depth=1, heads=2,
                                       dim_head=8, input_degrees=1, num_degrees=2, output_degrees=1,
                                       reduce_dim_out=True, attend_sparse_neighbors=True, num_neighbors=0,
                                       num_adj_degrees=2, adj_dim=4).to(dev)
                feats = torch.randint(0, 10, (b, n), generator=g).to(dev)
                i = torch.arange(n)
                adj_mat = ((i[:, None] >= (i[None, :] - 1)) & (i[:, None] <= (i[None, :] + 1))).to(dev)
                kw = {"adj_mat": adj_mat, "edges": torch.randint(0, 4, (b, n, n), generator=g).to(dev)}
            elif kind == "denoise":
                model = SE3Transformer(num_tokens=10, dim=16, depth=1, heads=2, dim_head=8, input_degrees=1,
                                       num_degrees=2, output_degrees=2, num_neighbors=8, reduce_dim_out=True,
                                       linear_proj_keys=True).to(dev)
                feats = torch.randint(0, 10, (b, n), generator=g).to(dev)
                kw = {"return_type": 1}
            else:  # egnn
                model = SE3Transformer(dim=16, depth=1, heads=2, dim_head=8, num_degrees=2, num_neighbors=6,
                                       use_egnn=True, rotary_position=False).to(dev)
                feats = torch.randn(b, n, 16, generator=g).to(dev)
                kw = {"return_type": 0}
            opt = torch.optim.Adam(model.parameters(), lr=1e-3)
            for step in range(steps):  # noqa: B007
                noised = coors + 0.1 * torch.randn_like(coors) if kind == "denoise" else coors
                out = model(feats, noised, mask, **kw)
                if kind == "denoise":
                    loss = F.mse_loss(noised + out, coors)
                else:
                    loss = out.pow(2).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(f"se3 {kind}: out {tuple(out.shape)} loss {loss.item():.4f}")
        return run

    return {"basic": train("basic"), "molecule": train("molecule"), "denoise": train("denoise"),
            "egnn": train("egnn")}


# -- tslearn: `SoftDTWLossPyTorch(gamma=, normalize=, dist_func=)` as the loss of a PyTorch forecaster (the docs'
#    example), and the metrics on PyTorch tensors with `be="pytorch"`: `soft_dtw`, `soft_dtw_alignment`, `dtw`,
#    `dtw_path`, `cdist_soft_dtw`, `cdist_dtw`, `lb_keogh`, `gak` --------------------------------------------------

def tslearn_dtw(dev):
    from tslearn import metrics as M

    def series(n, length, seed=0):
        g = torch.Generator().manual_seed(seed)
        t = torch.linspace(0, 4 * math.pi, length)
        phase = torch.rand(n, 1, generator=g) * 2 * math.pi
        return (torch.sin(t + phase) + 0.1 * torch.randn(n, length, generator=g)).unsqueeze(-1)

    def loss(gamma, normalize, custom=False):
        def run():
            torch.manual_seed(0)
            data = series(64, 40).to(dev)
            x_in, target = data[:, :25, 0], data[:, 25:]
            net = nn.Sequential(nn.Linear(25, 64), nn.ReLU(), nn.Linear(64, 15)).to(dev)
            opt = torch.optim.Adam(net.parameters(), lr=1e-3)
            dist = (lambda a, b: (a.unsqueeze(-2) - b.unsqueeze(-3)).abs().sum(-1)) if custom else None
            loss_fn = M.SoftDTWLossPyTorch(gamma=gamma, normalize=normalize, dist_func=dist)
            for step in range(4):  # noqa: B007
                pred = net(x_in).unsqueeze(-1)
                loss = loss_fn(pred, target).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(f"softdtw loss gamma={gamma} normalize={normalize}: {loss.item():.4f}")
        return run

    def metrics():
        a, b = series(3, 12, 1).to(dev), series(3, 10, 2).to(dev)
        for i in range(2):
            sd = M.soft_dtw(a[i], b[i], gamma=0.5, be="pytorch")
            path, d = M.dtw_path(a[i], b[i], be="pytorch")
            d2 = M.dtw(a[i], b[i], global_constraint="sakoe_chiba", sakoe_chiba_radius=5, be="pytorch")
            align, sim = M.soft_dtw_alignment(a[i], b[i], gamma=0.5, be="pytorch")
            print(f"pair {i}: soft {float(sd):.3f} dtw {float(d):.3f}/{float(d2):.3f} path {len(path)}")
        cs = M.cdist_soft_dtw(a, b, gamma=0.5, be="pytorch")
        cd = M.cdist_dtw(a, b, be="pytorch")
        print(f"cdist: {tuple(np.shape(cs))} {tuple(np.shape(cd))}")

    return {"loss_gamma1": loss(1.0, False), "loss_normalized": loss(0.1, True), "metrics": metrics}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _trades(dev, name, extra, stop):
    """yaodongyu/TRADES's train_trades_cifar10.py as is (its WideResNet-34-10, SGD, TRADES loss with a 10-step PGD
    inner maximisation at its defaults, `device = torch.device("cuda")`), with `--batch-size`, `--test-batch-size`
    and `--log-interval` given, on synthetic CIFAR-10 (torchvision's `CIFAR10` answered by `FakeData`), from a
    temporary folder (its model folder there). The window spans the 2nd to the `stop`-th `backward`: adversarial
    training steps of the first epoch with their loss prints. In the CPU smoke run only, the script's `.cuda()` and
    device map to the CPU and the window closes at the 3rd."""
    root = _need_repo("trades")
    last = stop if _gpu(dev) else 3
    tmp = Path(hc._tmp())
    (tmp / "run").mkdir()
    argv = ["--model-dir", str(tmp / "models"), *extra]

    def window():
        sys.path.insert(0, str(root))
        try:
            with fc.fake_dataset("CIFAR10", 512, (3, 32, 32)), fc.cuda_on_cpu(dev), \
                    hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, last, stop_script=True):
                hc.run_script(root / "train_trades_cifar10.py", argv, str(tmp / "run"))
        finally:
            sys.path.remove(str(root))
            for m in ("trades", "models", "models.wideresnet", "models.resnet", "models.small_cnn",
                      "models.net_mnist", "models.wideresnet_update"):
                sys.modules.pop(m, None)
    return {"train_window": window}


def trades_bs32(dev):
    """batch size 32, a loss print every 2nd step; window 2nd to 7th `backward`."""
    return _trades(dev, "trades.bs32", ["--batch-size", "32", "--test-batch-size", "64", "--log-interval", "2"], 7)


def _jem(dev, name, extra, stop):
    """wgrathwohl/JEM's train_wrn_ebm.py as is (a WideResNet energy model, `--depth 10 --width 2` for the time,
    Adam, SGLD sampling of `--n_steps 10` from a replay buffer of `--buffer_size 200` with re-initialisation, the
    classifier's cross-entropy, its prints every `--print_every 2` iterations, `device = t.device('cuda')`), on
    synthetic CIFAR-10 (torchvision's `CIFAR10` answered by `FakeData`, `--n_valid 64`), from a temporary folder.
    The window spans the 2nd to the `stop`-th `backward`. In the CPU smoke run only, its device maps to the CPU
    and the window closes at the 3rd."""
    root = _need_repo("jem")
    last = stop if _gpu(dev) else 3
    tmp = Path(hc._tmp())
    argv = ["--data_root", str(tmp / "data"), "--save_dir", str(tmp / "exp"), "--depth", "10", "--width", "2",
            "--batch_size", "32", "--n_steps", "10", "--buffer_size", "200", "--n_valid", "64", "--print_every", "2",
            "--n_epochs", "2", "--warmup_iters", "4", "--ckpt_every", "100", *extra]

    def window():
        sys.path.insert(0, str(root))
        try:
            with fc.fake_dataset("CIFAR10", 512, (3, 32, 32)), fc.cuda_on_cpu(dev), \
                    hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, last, stop_script=True):
                hc.run_script(root / "train_wrn_ebm.py", argv, str(tmp))
        finally:
            sys.path.remove(str(root))
            for m in ("utils", "wideresnet", "norms"):
                sys.modules.pop(m, None)
    return {"train_window": window}


def jem_joint(dev):
    """the joint model (p(x) and p(y|x)); window 2nd to 8th `backward`."""
    return _jem(dev, "jem.joint", [], 8)


def jem_classcond(dev):
    """class-conditional SGLD samples (`--class_cond_p_x_sample`) with p(x, y) weighted in (`--p_x_y_weight 1`);
    window 2nd to 8th `backward`."""
    return _jem(dev, "jem.classcond", ["--class_cond_p_x_sample", "--p_x_y_weight", "1"], 8)


MODELS = [
    # name, package, builder
    ("pgmpy.models", "pgmpy", pgmpy_models),
    ("pygad.torchga", "pygad", pygad_torchga),
    ("quantus.metrics", "quantus", quantus_metrics),
    ("shap.explain", "shap", shap_explain),
    ("se3_transformer_pytorch.models", "se3_transformer_pytorch", se3_models),
    ("tslearn.dtw", "tslearn", tslearn_dtw),
    ("pytorch_tabular.models", "pytorch_tabular", tabular_models),
    ("pytorch_forecasting.models", "pytorch_forecasting", forecasting_models),
    ("trades.bs32", "trades", trades_bs32),
    ("jem.joint", "jem", jem_joint),
    ("jem.classcond", "jem", jem_classcond),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh35", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
