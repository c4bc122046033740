"""Record the syncs of a thirty-eighth set, `fresh37` (a sealed test set): libraries and training code nobody here read.

`fresh37` is recorded the same way as `fresh9` to `fresh35` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; pytorch-mppi's controllers and mbrl's
optimizers and models are given `device=`, nbeats-pytorch's `NBeatsNet(device=)`, tez's `TezConfig(device=)`):
no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh37), names m to z: mbrl (mbrl-lib:
  model-based RL, PETS on its continuous cart-pole with a Gaussian MLP ensemble, CEM / MPPI / iCEM trajectory
  optimisers, its model trainer with early stopping), pytorch_mppi (pytorch-mppi: MPPI, SMPPI and KMPPI controllers
  on toy systems), tez (a simple PyTorch trainer: `Tez(model).fit` with early stopping, `predict`), tltorch
  (tensorly-torch: factorized layers and tensors, TRL / TCL, tensor dropout and lasso; run, not counted: its syncs
  are all in tensorly, a library of an earlier set) and torchtune (its PPO / DPO utilities and losses and chunked
  cross-entropy fine-tuning on a tiny random Llama-3); + arm-pytorch-utilities and pytorch-seed (pytorch-mppi's),
  hydra-core, omegaconf, antlr4-python3-runtime (4.9.3, built here from its source distribution), gymnasium 0.26.3,
  gymnasium-notices and termcolor (mbrl's), loguru (tez's), tensorly (tltorch's), torchao 0.10.0, torchdata 0.11.0,
  datasets, dill and multiprocess (torchtune's). Their other needs (numpy, scipy, pandas, scikit-learn, accelerate,
  tokenizers, huggingface_hub, tiktoken, sentencepiece, pyarrow, xxhash, matplotlib, imageio, tensorboard, tqdm,
  cloudpickle, h5py, scikit-image) are on the GPU machine.
- Training repository at a pinned commit, copied by `prepare` into .bench/fresh37/repos/u2net: xuebinqin/U-2-Net
  (u2net_train.py as is: U^2-Net salient object detection with its deep-supervision BCE losses printed each step)
  on synthetic DUTS-TR images and masks written under its `train_data/` folder.
- Written and smoke-run on the CPU but not in the recording (UNRECORDED below; the device time allowed no third GPU
  call): nbeats_pytorch (nbeats-pytorch: N-BEATS with its Keras-like `compile` / `fit` / `predict`), torchao
  (quantisation, SmoothQuant, autoquant, its primitives, low-bit optimizers, float8 training), torchtune's generation
  modes, and yjn870/SRCNN-pytorch (train.py as is on synthetic h5 patch files in its format).

    python benchmarks/fresh37_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh37_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh37 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh37 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh37"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh37", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh37/repos/<name>)
REPOS = {
    "u2net": ("xuebinqin/U-2-Net", "ac7e1c817ecab7c7dff5ce6b1abba61cd213ff29",
              ["u2net_train.py", "data_loader.py", "model"]),
    "srcnn": ("yjn870/SRCNN-pytorch", "064dbaac09859f5fa1b35608ab90145e2d60828b",
              ["train.py", "models.py", "datasets.py", "utils.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
# (antlr4-python3-runtime 4.9.3 has no wheel on the index: `prepare` builds one from its source distribution)
WHEELS = ["mbrl==0.2.0", "hydra-core==1.3.2", "omegaconf==2.3.0", "gymnasium==0.26.3", "gymnasium-notices==0.0.1",
          "termcolor==3.3.0", "nbeats-pytorch==1.8.0", "pytorch-mppi==0.9.1", "arm-pytorch-utilities==0.5.0",
          "pytorch-seed==0.2.0", "tez==0.7.2", "loguru==0.7.3", "tensorly-torch==0.5.0", "tensorly==0.10.0",
          "torchtune==0.6.1", "torchao==0.10.0",
          "torchdata==0.11.0", "datasets==5.2.0", "dill==0.4.1", "multiprocess==0.70.19"]
SDISTS = ["antlr4-python3-runtime==4.9.3"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"mbrl": "mbrl", "nbeats_pytorch": "nbeats-pytorch", "pytorch_mppi": "pytorch-mppi", "tez": "tez",
         "tltorch": "tensorly-torch", "torchao": "torchao", "torchtune": "torchtune", "hydra": "hydra-core",
         "omegaconf": "omegaconf", "gymnasium": "gymnasium", "tensorly": "tensorly", "numpy": "numpy",
         "accelerate": "accelerate", "torchvision": "torchvision"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh37/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh37_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _gpu(dev) -> bool:
    return dev.type == "cuda"


# ============================================================================================
# Libraries
# ============================================================================================

# -- pytorch_mppi (pytorch-mppi): the README's `MPPI(dynamics, running_cost, nx, noise_sigma, num_samples=,
#    horizon=, lambda_=, device=, u_min=, u_max=)` with a `terminal_state_cost`, `command(state)` in a control loop
#    on a simulated system, `rollout_samples=` for stochastic dynamics, `sample_null_action=`, `get_rollouts`,
#    `change_horizon`, `reset`; the smoothing variants `SMPPI(w_action_seq_cost=, delta_t=, action_min=,
#    action_max=)` and `KMPPI(kernel=RBFKernel(sigma=), num_support_pts=)`, as the README shows ------------------

def mppi_control(dev):
    from pytorch_mppi import KMPPI, MPPI, SMPPI
    from pytorch_mppi.mppi import RBFKernel

    dtype = torch.double
    goal = torch.tensor([2.0, -1.0], dtype=dtype, device=dev)

    def dynamics(state, action):  # a 2-D point mass: state (x, y, vx, vy), action (ax, ay)
        pos, vel = state[..., :2], state[..., 2:]
        vel = 0.9 * vel + 0.1 * action
        return torch.cat([pos + 0.1 * vel, vel], dim=-1)

    def noisy_dynamics(state, action):
        nxt = dynamics(state, action)
        return nxt + 0.01 * torch.randn_like(nxt)

    def running_cost(state, action):
        return ((state[..., :2] - goal) ** 2).sum(-1) + 0.01 * (action ** 2).sum(-1)

    def terminal_cost(states, actions):
        return 10 * ((states[..., -1, :2] - goal) ** 2).sum(-1)

    def pendulum(state, action):  # the pendulum of the README's example: (theta, theta_dot), torque
        th, thdot = state[:, 0:1], state[:, 1:2]
        u = torch.clamp(action, -2, 2)
        newthdot = thdot + (-3 * 10 / 2 * torch.sin(th + math.pi) + 3.0 * u) * 0.05
        newthdot = torch.clamp(newthdot, -8, 8)
        return torch.cat((th + newthdot * 0.05, newthdot), dim=1)

    def pendulum_cost(state, action):
        th, thdot = state[:, 0], state[:, 1]
        return (((th + math.pi) % (2 * math.pi)) - math.pi) ** 2 + 0.1 * thdot ** 2 + 0.001 * action[:, 0] ** 2

    def loop(ctrl, steps, dyn=dynamics, x0=None):
        state = torch.zeros(4, dtype=dtype, device=dev) if x0 is None else x0
        total = 0.0
        for _t in range(steps):
            action = ctrl.command(state)
            state = dyn(state.unsqueeze(0), action.unsqueeze(0)).squeeze(0)
            total += float(running_cost(state, action)) if dyn is dynamics else 0.0
        return state, total

    def basic():
        ctrl = MPPI(dynamics, running_cost, 4, torch.diag(torch.tensor([0.5, 0.5], dtype=dtype, device=dev)),
                    num_samples=256, horizon=15, lambda_=1e-2, device=dev, terminal_state_cost=terminal_cost,
                    u_min=torch.tensor([-1.0, -1.0], dtype=dtype, device=dev),
                    u_max=torch.tensor([1.0, 1.0], dtype=dtype, device=dev))
        state, total = loop(ctrl, 12)
        rollouts = ctrl.get_rollouts(state, num_rollouts=3)
        ctrl.change_horizon(10)
        state, total2 = loop(ctrl, 5, x0=state)
        ctrl.reset()
        print(f"mppi: {state.tolist()} cost {total:.2f} {total2:.2f} rollouts {tuple(rollouts.shape)}")

    def stochastic():
        ctrl = MPPI(noisy_dynamics, running_cost, 4,
                    torch.diag(torch.tensor([0.3, 0.3], dtype=dtype, device=dev)), num_samples=128, horizon=12,
                    lambda_=1.0, device=dev, rollout_samples=4, rollout_var_cost=0.1, sample_null_action=True,
                    noise_mu=torch.zeros(2, dtype=dtype, device=dev))
        state, total = loop(ctrl, 10, dyn=noisy_dynamics)
        print(f"mppi stochastic: {state.tolist()}")

    def pend():
        ctrl = MPPI(pendulum, pendulum_cost, 2, torch.tensor(1.0, dtype=dtype, device=dev), num_samples=500,
                    horizon=15, lambda_=1.0, device=dev, u_min=torch.tensor(-2.0, dtype=dtype, device=dev),
                    u_max=torch.tensor(2.0, dtype=dtype, device=dev))
        state = torch.tensor([math.pi / 2, 0.0], dtype=dtype, device=dev)
        for _t in range(12):
            action = ctrl.command(state)
            state = pendulum(state.view(1, -1), action.view(1, -1)).view(-1)
        print(f"pendulum: {state.tolist()} U {tuple(ctrl.get_action_sequence().shape)}")

    def smoothed(kind):
        def run():
            kw = dict(num_samples=200, horizon=16, lambda_=1e-2, device=dev, terminal_state_cost=terminal_cost)
            sigma = torch.diag(torch.tensor([0.4, 0.4], dtype=dtype, device=dev))
            if kind == "smppi":
                ctrl = SMPPI(dynamics, running_cost, 4, sigma, w_action_seq_cost=10.0, delta_t=0.1,
                             u_min=torch.tensor([-0.5, -0.5], dtype=dtype, device=dev),
                             u_max=torch.tensor([0.5, 0.5], dtype=dtype, device=dev),
                             action_min=torch.tensor([-1.0, -1.0], dtype=dtype, device=dev),
                             action_max=torch.tensor([1.0, 1.0], dtype=dtype, device=dev), **kw)
            else:
                ctrl = KMPPI(dynamics, running_cost, 4, sigma, kernel=RBFKernel(sigma=2), num_support_pts=5,
                             u_min=torch.tensor([-1.0, -1.0], dtype=dtype, device=dev),
                             u_max=torch.tensor([1.0, 1.0], dtype=dtype, device=dev), **kw)
            state, total = loop(ctrl, 10)
            print(f"{kind}: {state.tolist()} cost {total:.2f}")
        return run

    return {"basic": basic, "stochastic": stochastic, "pendulum": pend, "smppi": smoothed("smppi"),
            "kmppi": smoothed("kmppi")}


# -- mbrl (mbrl-lib): the PETS example of its docs: its continuous cart-pole environment, a `GaussianMLP` ensemble
#    wrapped by `common_util.create_one_dim_tr_model(cfg, obs_shape, act_shape)`, `ModelEnv(env, model,
#    termination_fn, reward_fn, generator=)`, a replay buffer filled by `rollout_agent_trajectories` with a
#    `RandomAgent`, `create_trajectory_optim_agent_for_model` with a CEM optimiser config, the model trained by
#    `ModelTrainer.train(dataset_train, dataset_val=, num_epochs=, patience=)` on `get_basic_buffer_iterators`,
#    then `step_env_and_add_to_buffer` with the agent (CEM, MPPI and iCEM optimiser configs); and the optimisers
#    `CEMOptimizer`, `MPPIOptimizer`, `ICEMOptimizer` on a trajectory objective of our own --------------------------

def mbrl_models(dev):
    import mbrl.env.cartpole_continuous as cartpole_env
    import mbrl.env.reward_fns as reward_fns
    import mbrl.env.termination_fns as termination_fns
    import mbrl.models as models
    import mbrl.planning as planning
    import mbrl.util.common as common_util
    import omegaconf

    device = str(dev)

    def pets(optimizer_cfg, ensemble_size=4, steps=4, propagation="fixed_model"):
        def run():
            seed = 0
            env = cartpole_env.CartPoleEnv()
            env.seed(seed) if hasattr(env, "seed") else None
            rng = np.random.default_rng(seed=0)
            generator = torch.Generator(device=dev)
            generator.manual_seed(seed)
            obs_shape, act_shape = env.observation_space.shape, env.action_space.shape
            cfg = omegaconf.OmegaConf.create({
                "dynamics_model": {"_target_": "mbrl.models.GaussianMLP", "_recursive_": False, "device": device,
                                   "num_layers": 3,
                                   "ensemble_size": ensemble_size, "hid_size": 64, "in_size": "???",
                                   "out_size": "???", "deterministic": False, "propagation_method": propagation,
                                   "activation_fn_cfg": {"_target_": "torch.nn.LeakyReLU", "negative_slope": 0.01}},
                "algorithm": {"learned_rewards": False, "target_is_delta": True, "normalize": True},
                "overrides": {"trial_length": 40, "num_steps": 100, "model_batch_size": 32,
                              "validation_ratio": 0.1}})
            dynamics_model = common_util.create_one_dim_tr_model(cfg, obs_shape, act_shape)
            model_env = models.ModelEnv(env, dynamics_model, termination_fns.cartpole, reward_fns.cartpole,
                                        generator=generator)
            replay_buffer = common_util.create_replay_buffer(cfg, obs_shape, act_shape, rng=rng)
            common_util.rollout_agent_trajectories(env, 60, planning.RandomAgent(env), {}, replay_buffer=replay_buffer)
            agent_cfg = omegaconf.OmegaConf.create({
                "_target_": "mbrl.planning.TrajectoryOptimizerAgent", "_recursive_": False, "planning_horizon": 10,
                "replan_freq": 1,
                "verbose": False, "action_lb": "???", "action_ub": "???", "optimizer_cfg": optimizer_cfg})
            agent = planning.create_trajectory_optim_agent_for_model(model_env, agent_cfg, num_particles=8)
            trainer = models.ModelTrainer(dynamics_model, optim_lr=1e-3, weight_decay=5e-5)
            train_losses, val_scores = [], []

            def train_callback(_model, _total_calls, _epoch, tr_loss, val_score, _best_val):
                train_losses.append(tr_loss)
                val_scores.append(val_score.mean().item())

            obs, _ = env.reset()
            agent.reset()
            total_reward = 0.0
            for step in range(steps):
                if step % 2 == 0:
                    dynamics_model.update_normalizer(replay_buffer.get_all())
                    dataset_train, dataset_val = common_util.get_basic_buffer_iterators(
                        replay_buffer, batch_size=32, val_ratio=0.1, ensemble_size=ensemble_size,
                        shuffle_each_epoch=True, bootstrap_permutes=False)
                    trainer.train(dataset_train, dataset_val=dataset_val, num_epochs=3, patience=2,
                                  callback=train_callback, silent=True)
                obs, reward, terminated, truncated, _ = common_util.step_env_and_add_to_buffer(
                    env, obs, agent, {}, replay_buffer)
                total_reward += reward
                if terminated:
                    obs, _ = env.reset()
                    agent.reset()
            print(f"pets {optimizer_cfg['_target_']}: reward {total_reward:.2f} losses {len(train_losses)} "
                  f"val {val_scores[-1]:.4f}")
        return run

    cem = {"_target_": "mbrl.planning.CEMOptimizer", "num_iterations": 3, "elite_ratio": 0.1, "population_size": 100,
           "alpha": 0.1, "device": device, "lower_bound": "???", "upper_bound": "???", "return_mean_elites": True,
           "clipped_normal": False}
    mppi_cfg = {"_target_": "mbrl.planning.MPPIOptimizer", "num_iterations": 3, "population_size": 100,
                "gamma": 10.0, "sigma": 1.0, "beta": 0.7, "device": device, "lower_bound": "???",
                "upper_bound": "???"}
    icem = {"_target_": "mbrl.planning.ICEMOptimizer", "num_iterations": 3, "elite_ratio": 0.1,
            "population_size": 100, "population_decay_factor": 1.25, "colored_noise_exponent": 2.0,
            "keep_elite_frac": 0.1, "alpha": 0.1, "device": device, "lower_bound": "???", "upper_bound": "???",
            "return_mean_elites": True, "population_size_module": None}

    def optimizers():
        horizon, act_dim = 8, 2
        lb, ub = [[-1.0] * act_dim] * horizon, [[1.0] * act_dim] * horizon
        target = torch.linspace(-0.5, 0.5, horizon * act_dim, device=dev).view(horizon, act_dim)

        def obj(x):  # population x horizon x act_dim -> values to maximise
            return -((x - target) ** 2).sum(dim=(1, 2))

        opts = [planning.CEMOptimizer(5, 0.1, 200, lb, ub, 0.1, dev, return_mean_elites=True),
                planning.CEMOptimizer(5, 0.2, 100, lb, ub, 0.2, dev, clipped_normal=True),
                planning.MPPIOptimizer(5, 200, 10.0, 0.5, 0.6, lb, ub, dev),
                planning.ICEMOptimizer(5, 0.1, 200, 1.3, 2.0, lb, ub, 0.2, 0.1, dev)]
        for opt in opts:
            trace = []
            best = opt.optimize(obj, x0=torch.zeros(horizon, act_dim, device=dev),
                                callback=lambda pop, vals, i: trace.append(float(vals.max())))  # noqa: B023
            print(f"{type(opt).__name__}: err {float(((best - target) ** 2).sum()):.4f} trace {len(trace)}")

    return {"pets_cem": pets(cem), "pets_mppi": pets(mppi_cfg, steps=3),
            "pets_icem_expectation": pets(icem, steps=3, propagation="expectation"), "optimizers": optimizers}


# -- nbeats_pytorch (nbeats-pytorch): the README's `NBeatsNet(device=, backcast_length=, forecast_length=,
#    stack_types=, nb_blocks_per_stack=, thetas_dim=, share_weights_in_stack=, hidden_layer_units=)`, `compile(loss=,
#    optimizer=)`, `fit(x_train, y_train, validation_data=, epochs=, batch_size=)`, `predict(x)` and
#    `predict(x, return_backcast=True)`, `get_generic_and_interpretable_outputs()`; generic, trend + seasonality
#    (interpretable) and mixed stacks -----------------------------------------------------------------------------

def nbeats_models(dev):
    from nbeats_pytorch.model import NBeatsNet

    def series(n, back, fore, seed=0):
        rng = np.random.default_rng(seed)
        t = np.arange(back + fore)
        phase = rng.uniform(0, 2 * np.pi, (n, 1))
        trend = rng.uniform(-0.02, 0.02, (n, 1))
        x = np.sin(2 * np.pi * t / 12 + phase) + trend * t + 0.1 * rng.normal(size=(n, back + fore))
        return x[:, :back, None].astype(np.float32), x[:, back:, None].astype(np.float32)

    def task(stacks, thetas, loss, optimizer="adam", back=24, fore=6, share=False, **kw):
        def run():
            torch.manual_seed(0)
            x, y = series(600, back, fore)
            c = len(x) // 5
            net = NBeatsNet(device=dev, backcast_length=back, forecast_length=fore, stack_types=stacks,
                            nb_blocks_per_stack=2, thetas_dim=thetas, share_weights_in_stack=share,
                            hidden_layer_units=64, **kw)
            net.compile(loss=loss, optimizer=optimizer)
            # the validation targets given on the device (its validation loss compares them with a forecast on the
            # device as they are: NumPy targets there were a device mismatch in the first GPU call)
            net.fit(x[c:], y[c:], validation_data=(x[:c], torch.from_numpy(y[:c]).to(dev)), epochs=3, batch_size=64)
            forecast = net.predict(x[:c])
            backcast = net.predict(x[:c], return_backcast=True)
            extra = ""
            if NBeatsNet.TREND_BLOCK in stacks:
                parts = net.get_generic_and_interpretable_outputs()
                extra = f" parts {len(parts)}"
            print(f"nbeats {stacks} {loss}: forecast {forecast.shape} backcast {backcast.shape} "
                  f"mae {np.abs(forecast - y[:c]).mean():.4f}{extra}")
        return run

    return {"generic_mae": task((NBeatsNet.GENERIC_BLOCK, NBeatsNet.GENERIC_BLOCK), (4, 4), "mae", share=True),
            "interpretable_mse": task((NBeatsNet.TREND_BLOCK, NBeatsNet.SEASONALITY_BLOCK), (3, 8), "mse"),
            "mixed_mae": task((NBeatsNet.TREND_BLOCK, NBeatsNet.SEASONALITY_BLOCK, NBeatsNet.GENERIC_BLOCK),
                              (2, 6, 8), "mae", nb_harmonics=3)}


# -- tez: its trainer as its README / examples use it: an `nn.Module` whose `forward(**batch, targets=)` returns
#    (outputs, loss, metrics) and whose `optimizer_scheduler()` returns the optimizer and scheduler, wrapped as
#    `Tez(model)`, fitted by `fit(train_dataset, valid_dataset=, config=TezConfig(device=, training_batch_size=,
#    validation_batch_size=, epochs=, step_scheduler_after=, step_scheduler_metric=), callbacks=[EarlyStopping(
#    monitor=, model_path=, patience=, mode=)])`, then `predict(test_dataset)`: an image classifier, a tabular
#    regressor and a text classifier on synthetic data -----------------------------------------------------------

class _DictData(torch.utils.data.Dataset):
    def __init__(self, **arrays):
        self.arrays = arrays

    def __len__(self):
        return len(next(iter(self.arrays.values())))

    def __getitem__(self, i):
        return {k: v[i] for k, v in self.arrays.items()}


def tez_models(dev):
    if not hasattr(np, "Inf"):  # tez 0.7.2 predates NumPy 2, which removed the `np.Inf` alias
        np.Inf = np.inf
    from tez import Tez, TezConfig
    from tez.callbacks import EarlyStopping

    class ImageNet(nn.Module):
        def __init__(self, classes=4):
            super().__init__()
            self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                                     nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                                     nn.Flatten(), nn.Linear(16, classes))

        def monitor_metrics(self, outputs, targets):
            acc = (outputs.argmax(1) == targets).float().mean()
            return {"accuracy": acc}

        def optimizer_scheduler(self):
            opt = torch.optim.Adam(self.parameters(), lr=3e-3)
            sch = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1, mode="min")
            return opt, sch

        def forward(self, image, targets=None):
            outputs = self.net(image)
            if targets is not None:
                loss = F.cross_entropy(outputs, targets)
                return outputs, loss, self.monitor_metrics(outputs, targets)
            return outputs, 0, {}

    class Regressor(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 1))

        def monitor_metrics(self, outputs, targets):
            rmse = torch.sqrt(F.mse_loss(outputs.view(-1), targets.view(-1)))
            mae = (outputs.view(-1) - targets.view(-1)).abs().mean()
            return {"rmse": rmse, "mae": mae}

        def optimizer_scheduler(self):
            opt = torch.optim.AdamW(self.parameters(), lr=1e-2)
            sch = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.7)
            return opt, sch

        def forward(self, features, targets=None):
            outputs = self.net(features)
            if targets is not None:
                loss = F.mse_loss(outputs.view(-1), targets.view(-1))
                return outputs, loss, self.monitor_metrics(outputs, targets)
            return outputs, 0, {}

    class TextNet(nn.Module):
        def __init__(self, vocab=200, classes=3):
            super().__init__()
            self.emb = nn.Embedding(vocab, 32, padding_idx=0)
            self.rnn = nn.GRU(32, 32, batch_first=True)
            self.out = nn.Linear(32, classes)

        def monitor_metrics(self, outputs, targets):
            return {"accuracy": (outputs.argmax(1) == targets).float().mean()}

        def optimizer_scheduler(self):
            opt = torch.optim.Adam(self.parameters(), lr=2e-3)
            sch = torch.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.9 ** e)
            return opt, sch

        def forward(self, ids, mask, targets=None):
            h, _ = self.rnn(self.emb(ids))
            pooled = (h * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
            outputs = self.out(pooled)
            if targets is not None:
                loss = F.cross_entropy(outputs, targets)
                return outputs, loss, self.monitor_metrics(outputs, targets)
            return outputs, 0, {}

    def data(kind, n, seed):
        g = torch.Generator().manual_seed(seed)
        if kind == "image":
            targets = torch.randint(0, 4, (n,), generator=g)
            image = torch.randn(n, 3, 16, 16, generator=g) + targets.view(-1, 1, 1, 1) * 0.3
            return {"image": image, "targets": targets}
        if kind == "tabular":
            features = torch.randn(n, 12, generator=g)
            return {"features": features, "targets": features[:, :3].sum(1) + 0.1 * torch.randn(n, generator=g)}
        ids = torch.randint(1, 200, (n, 20), generator=g)
        lengths = torch.randint(5, 21, (n,), generator=g)
        mask = (torch.arange(20)[None, :] < lengths[:, None]).float()
        ids = ids * mask.long()
        return {"ids": ids, "mask": mask, "targets": (ids[:, 0] % 3)}

    def task(kind, model_cls, metric, epochs=4, **cfg):
        def run():
            torch.manual_seed(0)
            tmp = Path(hc._tmp())
            train, valid = _DictData(**data(kind, 256, 0)), _DictData(**data(kind, 64, 1))
            test = _DictData(**{k: v for k, v in data(kind, 48, 2).items() if k != "targets"})
            model = Tez(model_cls())
            config = TezConfig(device=str(dev), training_batch_size=32, validation_batch_size=32, test_batch_size=16,
                               epochs=epochs, num_jobs=0, pin_memory=False, **cfg)
            es = EarlyStopping(monitor=metric, model_path=str(tmp / "model.bin"), patience=2,
                               mode="min" if "loss" in metric or metric in ("valid_rmse",) else "max",
                               save_weights_only=True)
            model.fit(train, valid_dataset=valid, config=config, callbacks=[es])
            preds = [p for p in model.predict(test)]
            print(f"tez {kind}: {len(preds)} prediction batches, first {tuple(np.shape(preds[0]))}")
        return run

    return {"image": task("image", ImageNet, "valid_loss", step_scheduler_after="epoch",
                          step_scheduler_metric="valid_loss"),
            "tabular": task("tabular", Regressor, "valid_rmse", step_scheduler_after="epoch"),
            "text": task("text", TextNet, "valid_accuracy", step_scheduler_after="batch", clip_grad_norm=1.0)}


# -- tltorch (tensorly-torch): its docs' factorized layers: `FactorizedLinear.from_linear(linear, rank=,
#    factorization=, implementation=, in_tensorized_features=, out_tensorized_features=)` (CP, Tucker, block-TT;
#    reconstructed and factorized implementations) and `FactorizedConv.from_conv(conv, rank=, factorization=,
#    decompose_weights=True)`, `FactorizedLinear(in_tensorized_features, out_tensorized_features, factorization=,
#    rank=, device=)`, `TRL(input_shape, output_shape, rank=, factorization=)` and `TCL`,
#    `FactorizedTensor.new(shape, rank=, factorization=, device=)` initialised and turned back into tensors,
#    `tensor_dropout(...)` and `tensor_lasso(factorization=, penalty=)` applied to a TRL's weight; each trained a
#    few steps on the device ----------------------------------------------------------------------------------------

def tltorch_models(dev):
    import tltorch

    def data(n=128, d=64, classes=5, seed=0):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(n, d, generator=g)
        y = (x[:, :classes] * 2).argmax(1)
        return x.to(dev), y.to(dev)

    def train(model, x, y, steps=4, extra_loss=None):
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        for step in range(steps):  # noqa: B007
            loss = F.cross_entropy(model(x), y)
            if extra_loss is not None:
                loss = loss + extra_loss()
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss.item()

    def linear():
        x, y = data()
        for fact, impl in (("cp", "reconstructed"), ("tucker", "factorized"), ("blocktt", "reconstructed"),
                           ("cp", "factorized")):
            dense = nn.Linear(64, 64).to(dev)
            flin = tltorch.FactorizedLinear.from_linear(
                dense, rank=0.5, factorization=fact, implementation=impl, auto_tensorize=False,
                in_tensorized_features=(4, 4, 4), out_tensorized_features=(4, 4, 4),
                decomposition_kwargs={"n_iter_max": 20} if fact != "blocktt" else {})
            model = nn.Sequential(flin, nn.ReLU(), nn.Linear(64, 5)).to(dev)
            err = (flin(x) - dense(x)).norm() / dense(x).norm()
            print(f"linear {fact}/{impl}: rel err {err.item():.3f} loss {train(model, x, y):.4f}")
        new = tltorch.FactorizedLinear((4, 4, 4), (2, 4, 4), factorization="tucker", rank=0.3, device=dev)
        print(f"new linear: {tuple(new(x).shape)}")

    def conv():
        g = torch.Generator().manual_seed(1)
        x = torch.randn(16, 3, 16, 16, generator=g).to(dev)
        y = torch.randint(0, 5, (16,), generator=g).to(dev)
        for fact in ("cp", "tucker", "tt"):
            conv = nn.Conv2d(3, 16, 3, padding=1).to(dev)
            fconv = tltorch.FactorizedConv.from_conv(conv, rank=0.5, factorization=fact, decompose_weights=True)
            model = nn.Sequential(fconv, nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 5)).to(dev)
            print(f"conv {fact}: {tuple(fconv(x).shape)} loss {train(model, x, y):.4f}")

    def regression_layers():
        g = torch.Generator().manual_seed(2)
        x = torch.randn(32, 4, 6, 6, generator=g).to(dev)
        y = torch.randint(0, 5, (32,), generator=g).to(dev)
        for fact in ("cp", "tucker", "tt"):
            trl = tltorch.TRL((4, 6, 6), (5,), rank=0.5, factorization=fact).to(dev)
            print(f"trl {fact}: loss {train(trl, x, y):.4f}")
        tcl = nn.Sequential(tltorch.TCL((4, 6, 6), (3, 4, 4)), nn.Flatten(), nn.Linear(48, 5)).to(dev)
        print(f"tcl: loss {train(tcl, x, y):.4f}")

    def regularised():
        g = torch.Generator().manual_seed(3)
        x = torch.randn(32, 4, 6, 6, generator=g).to(dev)
        y = torch.randint(0, 5, (32,), generator=g).to(dev)
        trl = tltorch.TRL((4, 6, 6), (5,), rank="same", factorization="cp").to(dev)
        lasso = tltorch.tensor_lasso(factorization="cp", penalty=0.01)
        lasso.apply(trl.weight)

        def lasso_loss():
            value = lasso.loss
            lasso.res = 0
            return value
        print(f"lasso: loss {train(trl, x, y, steps=5, extra_loss=lasso_loss):.4f}")
        trl2 = tltorch.TRL((4, 6, 6), (5,), rank=0.5, factorization="tucker").to(dev)
        trl2.weight = tltorch.tensor_dropout(trl2.weight, p=0.3)
        print(f"dropout: loss {train(trl2, x, y, steps=5):.4f}")
        for fact in ("CP", "Tucker", "TT"):
            t = tltorch.FactorizedTensor.new((8, 6, 5), rank=0.5, factorization=fact, device=dev)
            t.normal_(0, 0.02)
            full = t.to_tensor()
            print(f"tensor {fact}: {tuple(full.shape)} norm {full.norm().item():.4f} slice {tuple(t[1].shape)}")

    return {"linear": linear, "conv": conv, "regression_layers": regression_layers, "regularised": regularised}


# -- torchao: its README's `quantize_(model, config)` with `int8_weight_only()`, `int4_weight_only(group_size=)`,
#    `float8_weight_only()`, `int8_dynamic_activation_int8_weight()` and `float8_dynamic_activation_float8_weight()`
#    on a bf16 MLP on the device, run a few times; SmoothQuant (`swap_linear_with_smooth_fq_linear`, calibration
#    batches, `smooth_fq_linear_to_inference`); `autoquant(model, manual=True)` then `finalize_autoquant()`; the
#    quantisation primitives (`choose_qparams_affine`, `quantize_affine`, `dequantize_affine`, `compute_error`); its
#    low-bit optimizers (`AdamW8bit`, `AdamW4bit`, `AdamWFp8`) and float8 training
#    (`float8.convert_to_float8_training`), each a few steps; the float8 and int4 paths on the GPU only ------------

def torchao_models(dev):
    import torchao
    from torchao import quantization as Q

    def mlp(dtype=torch.bfloat16, width=256):
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width),
                             nn.GELU(), nn.Linear(width, 64)).to(device=dev, dtype=dtype).eval()

    def inputs(n=32, width=256, dtype=torch.bfloat16, seed=0):
        g = torch.Generator().manual_seed(seed)
        return torch.randn(n, width, generator=g).to(device=dev, dtype=dtype)

    def weight_only():
        configs = [("int8", lambda: Q.int8_weight_only())]
        if _gpu(dev):
            configs += [("int4", lambda: Q.int4_weight_only(group_size=64)),
                        ("float8", lambda: Q.float8_weight_only())]
        for name, make in configs:
            ref = mlp()
            model = mlp()
            Q.quantize_(model, make())
            with torch.no_grad():
                for step in range(3):
                    x = inputs(seed=step)
                    err = Q.compute_error(ref(x), model(x))
            print(f"weight-only {name}: sqnr {float(err):.2f}")

    def dynamic():
        configs = [("int8", lambda: Q.int8_dynamic_activation_int8_weight())]
        if _gpu(dev):
            configs += [("float8", lambda: Q.float8_dynamic_activation_float8_weight())]
        for name, make in configs:
            ref, model = mlp(), mlp()
            Q.quantize_(model, make())
            with torch.no_grad():
                for step in range(3):
                    x = inputs(seed=step)
                    err = Q.compute_error(ref(x), model(x))
            print(f"dynamic {name}: sqnr {float(err):.2f}")

    def smoothquant():
        ref, model = mlp(torch.float32), mlp(torch.float32)
        Q.swap_linear_with_smooth_fq_linear(model, alpha=0.5)
        with torch.no_grad():
            for step in range(4):  # calibration
                model(inputs(dtype=torch.float32, seed=step))
            Q.smooth_fq_linear_to_inference(model)
            for step in range(2):
                x = inputs(dtype=torch.float32, seed=10 + step)
                err = Q.compute_error(ref(x), model(x))
        print(f"smoothquant: sqnr {float(err):.2f}")

    def autoquant():
        model = mlp()
        model = torchao.autoquant(model, manual=True)
        with torch.no_grad():
            for step in range(2):
                model(inputs(seed=step))
            model.finalize_autoquant()
            out = model(inputs(seed=5))
        print(f"autoquant: {tuple(out.shape)}")

    def primitives():
        g = torch.Generator().manual_seed(3)
        for _step in range(3):
            w = torch.randn(128, 256, generator=g).to(dev)
            for mapping, dtype, qmin, qmax in ((Q.MappingType.SYMMETRIC, torch.int8, -128, 127),
                                               (Q.MappingType.ASYMMETRIC, torch.uint8, 0, 255)):
                scale, zero_point = Q.choose_qparams_affine(w, mapping, (1, 32), dtype, quant_min=qmin,
                                                            quant_max=qmax)
                q = Q.quantize_affine(w, (1, 32), scale, zero_point, dtype, quant_min=qmin, quant_max=qmax)
                back = Q.dequantize_affine(q, (1, 32), scale, zero_point, dtype, quant_min=qmin, quant_max=qmax)
                print(f"primitives {mapping}: sqnr {float(Q.compute_error(w, back)):.2f}")

    def optimizers():
        from torchao.optim import AdamW4bit, AdamW8bit, AdamWFp8
        opts = [AdamW8bit, AdamW4bit] + ([AdamWFp8] if _gpu(dev) else [])
        g = torch.Generator().manual_seed(4)
        x = torch.randn(256, 256, generator=g).to(dev)
        y = torch.randint(0, 64, (256,), generator=g).to(dev)
        for opt_cls in opts:
            model = mlp(torch.float32).train()
            opt = opt_cls(model.parameters(), lr=1e-3)
            for step in range(4):  # noqa: B007
                loss = F.cross_entropy(model(x), y)
                opt.zero_grad()
                loss.backward()
                opt.step()
            print(f"{opt_cls.__name__}: loss {loss.item():.4f}")

    def float8_training():
        from torchao.float8 import convert_to_float8_training
        model = mlp(torch.bfloat16).train()
        convert_to_float8_training(model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        g = torch.Generator().manual_seed(5)
        for step in range(4):  # noqa: B007
            x = torch.randn(64, 256, generator=g).to(device=dev, dtype=torch.bfloat16)
            loss = model(x).float().pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"float8 training: loss {loss.item():.4f}")

    modes = {"weight_only": weight_only, "dynamic": dynamic, "smoothquant": smoothquant, "primitives": primitives}
    if _gpu(dev):  # autoquant benchmarks CUDA kernels; float8 matmuls need a GPU; the low-bit optimizers'
        # compiled steps failed on the CPU here (torch 2.14)
        modes.update({"optimizers": optimizers, "autoquant": autoquant, "float8_training": float8_training})
    return modes


# -- torchtune: a tiny Llama-3 decoder from its builder `llama3(vocab_size=, num_layers=, num_heads=, num_kv_heads=,
#    embed_dim=, max_seq_len=)` with random weights on the device, `generation.generate(model, prompt,
#    max_generated_tokens=, pad_id=, temperature=, top_k=, stop_tokens=, rng=)` with and without KV caches
#    (`setup_caches(batch_size=, dtype=)`, `reset_caches()`), left-padded prompts; the RLHF utilities of its PPO
#    recipe (`truncate_sequence_at_first_stop_token`, `get_reward_penalty_mask`, `logits_to_logprobs`,
#    `get_rewards_ppo`, `estimate_advantages`, `whiten`, `masked_mean`) and losses (`PPOLoss`, `DPOLoss`), and
#    `CEWithChunkedOutputLoss` with `set_num_output_chunks` in a few fine-tuning steps ----------------------------

def torchtune_models(dev):
    from torchtune import generation, rlhf
    from torchtune.models.llama3 import llama3
    from torchtune.modules.loss import CEWithChunkedOutputLoss
    from torchtune.rlhf.loss import DPOLoss, PPOLoss

    vocab, pad, eos = 128, 0, 2

    def tiny():
        torch.manual_seed(0)
        model = llama3(vocab_size=vocab, num_layers=2, num_heads=4, num_kv_heads=2, embed_dim=64, max_seq_len=128)
        return model.to(dev).eval()

    def prompts(b=3, length=10, seed=0):
        g = torch.Generator().manual_seed(seed)
        p = torch.randint(3, vocab, (b, length), generator=g)
        p[1, :3] = pad  # left padding
        p[2, :5] = pad
        return p.to(dev)

    def generate(**kw):
        def run():
            model = tiny()
            rng = torch.Generator(device=dev).manual_seed(1)
            with torch.no_grad():
                for step in range(3):
                    toks, logits = generation.generate(model, prompts(seed=step), max_generated_tokens=12,
                                                       pad_id=pad, rng=rng, **kw)
                    print(f"generate {kw}: {tuple(toks.shape)} {tuple(logits.shape)}")
        return run

    def generate_cached():
        torch.manual_seed(0)
        model = llama3(vocab_size=vocab, num_layers=2, num_heads=4, num_kv_heads=2, embed_dim=64, max_seq_len=128)
        model.setup_caches(batch_size=3, dtype=torch.float32)  # its KV caches are buffers: moved with the model
        model = model.to(dev).eval()
        rng = torch.Generator(device=dev).manual_seed(1)
        with torch.no_grad():
            for step in range(3):
                toks, _ = generation.generate(model, prompts(seed=step), max_generated_tokens=10, pad_id=pad,
                                              temperature=0.8, top_k=10, stop_tokens=[eos, 5], rng=rng)
                model.reset_caches()
                print(f"cached generate {step}: {tuple(toks.shape)}")

    def generate_single():
        model = tiny()
        rng = torch.Generator(device=dev).manual_seed(1)
        with torch.no_grad():
            for step in range(2):
                single, _ = generation.generate(model, prompts(seed=step)[0], max_generated_tokens=6, pad_id=pad,
                                                rng=rng, stop_tokens=[eos])
                nxt = generation.sample(torch.randn(1, vocab, device=dev), temperature=0.5, top_k=8)
                print(f"single: {tuple(single.shape)} sample {nxt.tolist()}")

    def ppo_utils():
        model = tiny()
        value_head = nn.Linear(vocab, 1).to(dev)
        ppo_loss = PPOLoss(epsilon=0.2, value_clip_range=0.2, value_coeff=0.1)
        rng = torch.Generator(device=dev).manual_seed(2)
        stop = torch.tensor([eos, 3], device=dev)
        for step in range(3):
            query = prompts(seed=step)
            with torch.no_grad():
                toks, logits = generation.generate(model, query, max_generated_tokens=12, pad_id=pad,
                                                   temperature=1.0, top_k=None, rng=rng)
            responses = toks[:, query.shape[1]:].clone()
            padding_masks, responses = rlhf.truncate_sequence_at_first_stop_token(responses, stop, pad)
            logprobs = rlhf.logits_to_logprobs(logits, responses, 1.0)
            ref_logprobs = logprobs + 0.01 * torch.randn_like(logprobs)
            seq_lens = (~padding_masks).sum(-1) - 1
            seq_lens = seq_lens.clamp(min=0)
            scores = torch.randn(responses.shape[0], device=dev)
            penalty = rlhf.get_reward_penalty_mask(padding_masks, seq_lens, penalise_no_eos=True,
                                                   min_response_length=3)
            scores = torch.where(penalty, torch.full_like(scores, -3.0), scores)
            values = value_head(logits).squeeze(-1)
            rewards, kl, kl_rewards = rlhf.get_rewards_ppo(scores, logprobs, ref_logprobs, 0.05, seq_lens)
            masks = ~padding_masks
            advantages, returns = rlhf.estimate_advantages(values.detach(), rewards, 1.0, 0.95, masks=masks)
            white = rlhf.whiten(advantages, mask=masks)
            pi_logprobs = logprobs + 0.02 * torch.randn_like(logprobs)
            loss, policy_loss, value_loss, ratios, clipfrac = ppo_loss(
                logprobs, pi_logprobs, advantages, values.detach(), values, returns,
                padding_masks=masks, value_padding_masks=masks)
            loss.backward()
            print(f"ppo {step}: loss {loss.item():.4f} kl {rlhf.masked_mean(kl, masks).item():.4f} "
                  f"white {white.std().item():.3f} lens {seq_lens.tolist()}")

    def dpo():
        loss_fn = DPOLoss(beta=0.1, label_smoothing=0.0)
        g = torch.Generator().manual_seed(3)
        policy = tiny().train()
        opt = torch.optim.AdamW(policy.parameters(), lr=1e-4)
        for step in range(3):
            seq = torch.randint(3, vocab, (4, 16), generator=g).to(dev)
            labels = seq.clone()
            labels[:, :6] = -100
            logits = policy(seq)
            lp = rlhf.get_batch_log_probs(logits[:, :-1], labels[:, 1:], return_average_logprobs=False)
            chosen, rejected = lp[:2], lp[2:]
            ref_c, ref_r = chosen.detach() - 0.1, rejected.detach() + 0.1
            loss, chosen_rewards, rejected_rewards = loss_fn(chosen, rejected, ref_c, ref_r)
            loss = loss.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            acc = (chosen_rewards > rejected_rewards).float().mean()
            print(f"dpo {step}: loss {loss.item():.4f} acc {acc.item():.2f}")

    def finetune():
        model = tiny().train()
        loss_fn = CEWithChunkedOutputLoss(num_output_chunks=4)
        model.set_num_output_chunks(loss_fn.num_output_chunks)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
        g = torch.Generator().manual_seed(4)
        for step in range(4):
            tokens = torch.randint(3, vocab, (4, 24), generator=g).to(dev)
            labels = torch.cat([tokens[:, 1:], torch.full((4, 1), -100, device=dev)], dim=1)
            labels[:, :5] = -100
            logits = model(tokens)
            loss = loss_fn(logits, labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"finetune {step}: loss {loss.item():.4f}")

    modes = {"ppo_utils": ppo_utils, "dpo": dpo, "finetune": finetune}
    if os.environ.get("FRESH37_UNRECORDED"):  # written after the first GPU call, never recorded (see UNRECORDED)
        modes.update({"generate_sampling": generate(temperature=1.0, top_k=None),
                      "generate_top_k": generate(temperature=0.7, top_k=20),
                      "generate_stop_tokens": generate(temperature=0.9, top_k=5, stop_tokens=[eos, 3, 4]),
                      "generate_cached": generate_cached, "generate_single": generate_single})
    return modes


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

class _cuda_on_cpu:
    """The CPU smoke run only: the scripts put their tensors and modules on the GPU (`.to(device)` with their own
    device, `.cuda()`), which is mapped to the CPU there (on the GPU nothing is changed)."""

    def __init__(self, dev):
        self.on = dev.type != "cuda"

    @staticmethod
    def _cpu(a, k):
        def fix(v):
            if isinstance(v, str) and v.startswith("cuda") or isinstance(v, torch.device) and v.type == "cuda":
                return torch.device("cpu")
            return v
        return tuple(fix(v) for v in a), {key: fix(v) for key, v in k.items()}

    def __enter__(self):
        if self.on:
            self.t, self.m, self.c = torch.Tensor.to, nn.Module.to, torch.Tensor.cuda
            self.mc, self.avail = nn.Module.cuda, torch.cuda.is_available
            t, m, cpu = self.t, self.m, self._cpu

            def tensor_to(self, *a, **k):
                a, k = cpu(a, k)
                return t(self, *a, **k)

            def module_to(self, *a, **k):
                a, k = cpu(a, k)
                return m(self, *a, **k)

            def tensor_cuda(self, *a, **k):
                return self

            def module_cuda(self, *a, **k):
                return self
            torch.Tensor.to, nn.Module.to, torch.Tensor.cuda = tensor_to, module_to, tensor_cuda
            nn.Module.cuda, torch.cuda.is_available = module_cuda, lambda: False
        return self

    def __exit__(self, *exc):
        if self.on:
            torch.Tensor.to, nn.Module.to, torch.Tensor.cuda = self.t, self.m, self.c
            nn.Module.cuda, torch.cuda.is_available = self.mc, self.avail


def _u2net(dev, name, stop):
    """xuebinqin/U-2-Net's u2net_train.py as is (U^2-Net, Adam, its seven-output BCE loss printed each step, batch 12,
    `torch.cuda.is_available()` deciding the device), from a temporary folder holding synthetic DUTS-TR images and
    masks where the script looks for them (`train_data/DUTS/DUTS-TR/DUTS-TR/im_aug/*.jpg`, `gt_aug/*.png`: 36
    random 320x320 images with an ellipse mask each). The window spans the 2nd to the `stop`-th `backward`. In the
    CPU smoke run only, the window closes at the 3rd."""
    root = _need_repo("u2net")
    last = stop if _gpu(dev) else 3
    tmp = Path(hc._tmp())
    from PIL import Image
    im_dir = tmp / "train_data" / "DUTS" / "DUTS-TR" / "DUTS-TR" / "im_aug"
    gt_dir = tmp / "train_data" / "DUTS" / "DUTS-TR" / "DUTS-TR" / "gt_aug"
    im_dir.mkdir(parents=True)
    gt_dir.mkdir(parents=True)
    (tmp / "saved_models" / "u2net").mkdir(parents=True)
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[:320, :320]
    for i in range(36):
        cx, cy, rx, ry = rng.uniform(100, 220), rng.uniform(100, 220), rng.uniform(30, 90), rng.uniform(30, 90)
        mask = (((xx - cx) / rx) ** 2 + ((yy - cy) / ry) ** 2 <= 1).astype(np.uint8) * 255
        img = rng.integers(0, 120, (320, 320, 3), dtype=np.uint8)
        img[mask > 0] += np.array([100, 60, 20], dtype=np.uint8)
        Image.fromarray(img).save(im_dir / f"img_{i:03d}.jpg")
        Image.fromarray(mask).save(gt_dir / f"img_{i:03d}.png")

    def window():
        try:
            with _cuda_on_cpu(dev), \
                    hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, last, stop_script=True):
                hc.run_script(root / "u2net_train.py", [], str(tmp))
        finally:
            for m in ("model", "model.u2net", "data_loader"):
                sys.modules.pop(m, None)
    return {"train_window": window}


def u2net_train(dev):
    """the script's defaults (U2NET, batch 12); window 2nd to 6th `backward`."""
    return _u2net(dev, "u2net.train", 6)


def _srcnn(dev, name, extra, stop):
    """yjn870/SRCNN-pytorch's train.py as is (SRCNN, Adam with its per-layer learning rates, MSE, `loss.item()` into
    an AverageMeter each step, an epoch of PSNR evaluation (`calc_psnr`) with best-epoch selection, a checkpoint
    per epoch, `device = cuda:0 if available`), on synthetic h5 files in its format (`lr` / `hr` 33x33 patches for
    training, whole 48x48 images keyed "0".. for evaluation), `--num-workers 0`, from a temporary folder. The
    window spans the 2nd to the `stop`-th `backward`, across epoch ends (their evaluations). In the CPU smoke run
    only, the window closes at the 5th."""
    import h5py
    root = _need_repo("srcnn")
    last = stop if _gpu(dev) else 5
    tmp = Path(hc._tmp())
    rng = np.random.default_rng(0)

    def image(h, w):
        yy, xx = np.mgrid[:h, :w]
        return (127 + 60 * np.sin(xx / rng.uniform(2, 6)) * np.cos(yy / rng.uniform(2, 6))
                + rng.normal(0, 10, (h, w))).clip(0, 255).astype(np.float32)

    with h5py.File(tmp / "train.h5", "w") as f:
        hr = np.stack([image(33, 33) for _ in range(64)])
        lr = np.stack([np.clip(h + rng.normal(0, 15, h.shape), 0, 255).astype(np.float32) for h in hr])
        f.create_dataset("lr", data=lr)
        f.create_dataset("hr", data=hr)
    with h5py.File(tmp / "eval.h5", "w") as f:
        lr_group, hr_group = f.create_group("lr"), f.create_group("hr")
        for i in range(4):
            h = image(48, 48)
            hr_group.create_dataset(str(i), data=h)
            lr_group.create_dataset(str(i), data=np.clip(h + rng.normal(0, 15, h.shape), 0, 255).astype(np.float32))
    argv = ["--train-file", str(tmp / "train.h5"), "--eval-file", str(tmp / "eval.h5"), "--outputs-dir",
            str(tmp / "out"), "--num-workers", "0", "--num-epochs", "50", *extra]

    def window():
        # its own datasets.py, not Hugging Face `datasets` (imported by torchtune earlier in the same run)
        shadowed = {m: sys.modules.pop(m) for m in list(sys.modules) if m == "datasets" or m.startswith("datasets.")}
        try:
            with _cuda_on_cpu(dev), \
                    hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, last, stop_script=True):
                hc.run_script(root / "train.py", argv, str(tmp))
        finally:
            for m in ("models", "datasets", "utils"):
                sys.modules.pop(m, None)
            sys.modules.update(shadowed)
    return {"train_window": window}


def srcnn_bs16(dev):
    """batch size 16 (four steps an epoch); window 2nd to 14th `backward` (three epoch ends)."""
    return _srcnn(dev, "srcnn.bs16", ["--batch-size", "16"], 14)


MODELS = [
    # name, package, builder: the workloads the merged GPU recording holds (two calls; see docs/accuracy.md)
    ("pytorch_mppi.control", "pytorch_mppi", mppi_control),
    ("mbrl.pets", "mbrl", mbrl_models),
    ("tez.trainer", "tez", tez_models),
    ("tltorch.layers", "tltorch", tltorch_models),
    ("torchtune.llm", "torchtune", torchtune_models),
    ("u2net.train", "u2net", u2net_train),
]
# Written and smoke-run on the CPU but not in the recording (the device time allowed no third call): nbeats-pytorch
# failed in both GPU calls (its validation loss and then its `fit` mixing CUDA tensors with NumPy), torchao's first
# four modes ran in the second call but the call was stopped in its low-bit optimizers' compilation before its
# results were written, SRCNN's script failed in the first call (its datasets.py shadowed by Hugging Face
# `datasets`; fixed since) and torchtune's generation modes failed in the first (its KV caches; split and fixed
# since). `--only` with these names runs them (`FRESH37_UNRECORDED=1` adds torchtune's generation modes).
UNRECORDED = [
    ("nbeats_pytorch.models", "nbeats_pytorch", nbeats_models),
    ("torchao.quant", "torchao", torchao_models),
    ("srcnn.bs16", "srcnn", srcnn_bs16),
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
    models = MODELS + UNRECORDED if os.environ.get("FRESH37_UNRECORDED") else MODELS
    return hc.collect(argv, __doc__.splitlines()[0], models, "fresh37", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
