"""Record the syncs of a fifteenth set, `fresh14` (a sealed test set): libraries and training code nobody here read.

`fresh14` is recorded the same way as `fresh9` to `fresh13` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh14): tntorch (tensor networks: TT, CP and
  Tucker decompositions, arithmetic and rounding, completion by optimisation and ALS, TT matrices), FrEIA
  (invertible networks: SequenceINN and GraphINN of coupling blocks, conditional INNs, Haar / i-RevNet
  downsampling, ActNorm, i-ResNet layers, sampling in reverse; a source distribution only, its wheel built by
  `prepare`), pytorch_kinematics (robot kinematics: URDF chains and trees, batched forward kinematics,
  damped-least-squares inverse kinematics with retries and joint limits, rotation and transform algebra, a reaching
  policy trained through FK), zennit (attribution: LRP composites and canonizers on VGG and ResNet, SmoothGrad,
  Integrated Gradients, Occlusion, heatmaps, a training step through attributions), ptwt (wavelets: 1d / 2d / 3d
  fast wavelet transforms and their separable and sparse-matrix forms, stationary and continuous transforms,
  wavelet packets, a learned wavelet-threshold denoiser), nngeometry (Fisher information matrices in KFAC, EKFAC,
  diagonal, dense, block-diagonal, low-rank and implicit form, natural-gradient steps, an EWC penalty, NTK Gram
  matrices, Jacobians, Hessians), qpth (differentiable batched QPs: OptNet layers trained end to end, a projection
  onto the simplex; a source distribution only, built by `prepare`) and torchiva (blind source separation on the
  GPU: AuxIVA-IP, ILRMA, AuxIVA-IP2, T-ISS with dereverberation, FIVE, WPE, mask-based MVDR, MWF and GEV
  beamformers, a neural source model trained through T-ISS; a source distribution only, built by `prepare`);
  + arm-pytorch-utilities, pytorch-seed and lxml (pytorch_kinematics's), PyWavelets (ptwt's), click (zennit's),
  PyYAML (torchiva's and pytorch_kinematics's), seaborn (the VAE repository's). Their other needs (numpy, scipy,
  sympy, torchvision, torchaudio, matplotlib, pandas, pillow, tqdm) are on the GPU machine. qpth imports cvxpy for
  its alternative solver, which is not used: the collector gives it an empty `cvxpy` module.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh14/repos/<name>:
  timbmg/VAE-CVAE-MNIST (train.py as is: a VAE and a conditional VAE on synthetic MNIST idx files) and
  kevinzakka/recurrent-visual-attention (main.py as is: the recurrent attention model trained with REINFORCE on
  synthetic MNIST, its trainer's validation, scheduler and checkpoints; its unused `tensorboard_logger` import is
  given a stand-in module).

    python benchmarks/fresh14_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh14_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh14 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh14 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import os
import shutil
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
BENCH_DIR = ac.REPO / ".bench" / "fresh14"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh14", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh14/repos/<name>)
REPOS = {
    "vae": ("timbmg/VAE-CVAE-MNIST", "4f1b22367a5c5cff88bf97ce78219132aa9fd977", ["train.py", "models.py", "utils.py"]),
    "ram": ("kevinzakka/recurrent-visual-attention", "a38ac8958ebf1c61a10c4d5320f1e31d3d0b73dd",
            ["main.py", "config.py", "data_loader.py", "model.py", "modules.py", "trainer.py", "utils.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["tntorch==1.1.2", "pytorch-kinematics==0.10.0", "arm-pytorch-utilities==0.5.0", "pytorch-seed==0.2.0",
          "lxml==6.0.2", "zennit==0.5.1", "click==8.1.8", "ptwt==1.0.1", "PyWavelets==1.8.0", "nngeometry==0.4",
          "PyYAML==6.0.2", "seaborn==0.13.2"]
# published as source distributions only: their pure-Python wheels are built here (`pip wheel --no-deps`)
SDISTS = ["FrEIA==0.2", "qpth==0.0.18", "torchiva==0.1.1"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set; FrEIA's wheel is built as freia-0.2)
DISTS = {"tntorch": "tntorch", "freia": "FrEIA", "pytorch_kinematics": "pytorch-kinematics", "zennit": "zennit",
         "ptwt": "ptwt",
         "nngeometry": "nngeometry", "qpth": "qpth", "torchiva": "torchiva", "pywavelets": "PyWavelets",
         "numpy": "numpy", "scipy": "scipy", "sympy": "sympy", "torchvision": "torchvision",
         "torchaudio": "torchaudio", "matplotlib": "matplotlib", "pandas": "pandas", "seaborn": "seaborn"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh14/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh14_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


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

# -- tntorch: the docs' decompositions of a full tensor (TT-SVD, CP by ALS, Tucker, an eps-truncated TT) with
#    their errors, arithmetic, rounding, dot products, moments and indexing (slices, fancy indices); completion of a
#    tensor from samples by `tn.optimize` (gradient descent on TT cores) and by ALS; a TT matrix of a weight and a
#    TT-parametrised linear layer trained --------------------------------------------------------------------------

def tntorch_tensors(dev):
    import tntorch as tn

    g = torch.Generator().manual_seed(0)
    axes = [torch.linspace(-1, 1, 16) for _ in range(4)]
    X = torch.stack(torch.meshgrid(*axes, indexing="ij"))
    full = (torch.sin(X[0] + 2 * X[1]) * torch.exp(-X[2] ** 2) + X[3] * X[0]).to(dev)

    idx = torch.randint(0, 16, (64, 4), generator=g)  # indices on the host, as the docs' numpy ones

    def on_device(fn):
        """Several of this version's routines (CP-ALS, slicing, ALS completion, a TT matrix's trace) make their
        working tensors on the default device: the steps run with `dev` as the default device, as a user on the GPU
        must (the data and tensors are also placed explicitly)."""
        def run():
            with torch.device(dev):
                fn()
        return run

    def decompose():
        t_tt = tn.Tensor(full, ranks_tt=5)
        t_cp = tn.Tensor(full, ranks_cp=6, max_iter=10)
        t_tk = tn.Tensor(full, ranks_tucker=4)
        t_eps = tn.Tensor(full, eps=1e-3)
        errs = [tn.relative_error(full, t) for t in (t_tt, t_cp, t_tk, t_eps)]
        s = tn.round_tt(t_tt + t_tk, eps=1e-6)
        p = t_tt * t_eps
        stats = [tn.dot(t_tt, t_tk), tn.norm(p), tn.mean(s), tn.var(t_tt), tn.r_squared(full, t_tt)]
        sl = t_tt[0, :, 3, :].torch()
        pts = t_tt[idx].torch()
        marg = tn.sum(t_tt, dim=0).torch()
        print(f"ranks tt {t_tt.ranks_tt.tolist()} eps {t_eps.ranks_tt.tolist()} errors "
              f"{[round(float(e), 4) for e in errs]} stats {[round(float(v), 3) for v in stats]} "
              f"{tuple(sl.shape)} {tuple(pts.shape)} {tuple(marg.shape)} coefs {s.numcoef()}")

    shape = [12] * 4
    P = torch.stack([torch.randint(0, 12, (1500,), generator=g) for _ in range(4)], 1)  # sample indices, host
    gt = tn.rand(shape, ranks_tt=3, device=dev)
    y = gt[P].torch()

    def completion():
        t = tn.rand(shape, ranks_tt=3, requires_grad=True, device=dev)

        def loss(t):
            return torch.norm(t[P].torch() - y) / torch.norm(y)
        tn.optimize(t, loss, max_iter=40, verbose=False)
        als = tn.als_completion(P, y, ranks_tt=3, shape=shape, niter=3, verbose=False)
        print(f"completion: gd {float(tn.relative_error(gt, t)):.3f}, als {float(tn.relative_error(gt, als)):.3f}")

    W = torch.randn(64, 64, generator=g).to(dev)
    target = torch.randn(256, 64, generator=g).to(dev)
    inp = torch.randn(256, 64, generator=g).to(dev)

    def tt_matrix():
        tm = tn.TTMatrix(W, ranks=[4, 4], input_dims=[4, 4, 4], output_dims=[4, 4, 4])
        dense = tm.torch()
        tr = tm.trace()
        core = tn.rand([8, 8, 8, 8], ranks_tt=4, requires_grad=True, device=dev)

        def loss_of(i):
            return F.mse_loss(inp @ core.torch().reshape(64, 64), target)
        loss = _fit(core.cores, 3, loss_of, lr=1e-2)
        print(f"ttmatrix err {float((dense - W).norm() / W.norm()):.3f} trace {float(tr):.2f} "
              f"tt layer loss {loss.item():.3f}")
    # its cross-approximation (`tn.cross`, then Sobol indices of the result) was a mode of the recorded run too: on
    # the GPU it failed in its warm-up step (a device tensor turned into a numpy array inside the library), before
    # anything was measured, and was removed from this file after the run
    return {"decompose": on_device(decompose), "completion": on_device(completion), "ttmatrix": on_device(tt_matrix)}


# -- FrEIA: the quickstart's SequenceINN of AllInOneBlocks trained by maximum likelihood on two moons and sampled in
#    reverse; the other coupling blocks (GLOW, RealNVP, NICE, GIN, one-sided affine) with random permutations,
#    ActNorm, learned scaling and Householder permutations; a GraphINN over images (Haar and i-RevNet downsampling,
#    convolutional GLOW couplings, flatten, split / concat); a conditional INN (ConditionNode); an i-ResNet layer
#    with its Lipschitz correction and fixed-point inverse -------------------------------------------------------------

def freia_flows(dev):
    import FrEIA.framework as Ff
    import FrEIA.modules as Fm

    def subnet_fc(c_in, c_out):
        return nn.Sequential(nn.Linear(c_in, 64), nn.ReLU(), nn.Linear(64, c_out))

    def subnet_conv(c_in, c_out):
        return nn.Sequential(nn.Conv2d(c_in, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, c_out, 3, padding=1))

    g = torch.Generator().manual_seed(0)
    th = torch.rand(512, generator=g) * torch.pi
    lab = torch.randint(0, 2, (512,), generator=g)
    moons = torch.stack([torch.cos(th) + lab * (1 - 2 * torch.cos(th)),
                         torch.sin(th) * (1 - 2 * lab) + 0.5 * lab], 1)
    moons = (moons + 0.05 * torch.randn(512, 2, generator=g)).to(dev)

    def nll(z, log_jac_det):
        return (0.5 * torch.sum(z.reshape(z.shape[0], -1) ** 2, 1) - log_jac_det).mean() / z[0].numel()

    inn = Ff.SequenceINN(2)
    for _ in range(6):
        inn.append(Fm.AllInOneBlock, subnet_constructor=subnet_fc, permute_soft=True)
    inn = inn.to(dev)
    mixed = Ff.SequenceINN(2)
    mixed.append(Fm.ActNorm)
    for block in (Fm.GLOWCouplingBlock, Fm.RNVPCouplingBlock, Fm.NICECouplingBlock, Fm.GINCouplingBlock,
                  Fm.AffineCouplingOneSided):
        mixed.append(block, subnet_constructor=subnet_fc)
        mixed.append(Fm.PermuteRandom)
    mixed.append(Fm.LearnedElementwiseScaling)
    mixed.append(Fm.HouseholderPerm, n_reflections=2)
    mixed = mixed.to(dev)

    def moons_fit():
        for name, net in (("all-in-one", inn), ("mixed", mixed)):
            loss = _fit(net.parameters(), 3, lambda i, net=net: nll(*net(moons[i * 128:(i + 1) * 128])))
            with torch.no_grad():
                x, _ = net(torch.randn(256, 2, device=dev), rev=True)
            print(f"{name}: nll {loss.item():.3f}, samples in [{x.min().item():.2f}, {x.max().item():.2f}]")

    imgs = torch.rand(16, 3, 16, 16, generator=g).to(dev)
    nodes = [Ff.InputNode(3, 16, 16, name="input")]
    nodes.append(Ff.Node(nodes[-1], Fm.HaarDownsampling, {}, name="haar"))
    for k in range(2):
        nodes.append(Ff.Node(nodes[-1], Fm.GLOWCouplingBlock, {"subnet_constructor": subnet_conv, "clamp": 1.5}))
        nodes.append(Ff.Node(nodes[-1], Fm.PermuteRandom, {"seed": k}))
    nodes.append(Ff.Node(nodes[-1], Fm.IRevNetDownsampling, {}, name="irevnet"))
    split = Ff.Node(nodes[-1], Fm.Split, {"section_sizes": [24, 24], "dim": 0}, name="split")
    nodes.append(split)
    conv_branch = Ff.Node((split, 0), Fm.AllInOneBlock, {"subnet_constructor": subnet_conv})
    flat_a = Ff.Node(conv_branch, Fm.Flatten, {})
    flat_b = Ff.Node((split, 1), Fm.Flatten, {})
    concat = Ff.Node([(flat_a, 0), (flat_b, 0)], Fm.Concat, {"dim": 0})
    fc_block = Ff.Node(concat, Fm.RNVPCouplingBlock, {"subnet_constructor": subnet_fc})
    graph = Ff.GraphINN(nodes + [conv_branch, flat_a, flat_b, concat, fc_block, Ff.OutputNode(fc_block)]).to(dev)

    def image_graph():
        loss = _fit(graph.parameters(), 3, lambda i: nll(*graph(imgs)))
        with torch.no_grad():
            z, _ = graph(imgs)
            rec, _ = graph(z, rev=True)
        print(f"graph nll {loss.item():.3f}, reconstruction error {(rec[0] - imgs).abs().max().item():.2e}")

    cond = Ff.ConditionNode(10)
    c_nodes = [Ff.InputNode(2, name="x")]
    for _ in range(4):
        c_nodes.append(Ff.Node(c_nodes[-1], Fm.GLOWCouplingBlock, {"subnet_constructor": subnet_fc, "clamp": 2.0},
                               conditions=cond))
        c_nodes.append(Ff.Node(c_nodes[-1], Fm.PermuteRandom, {}))
    cinn = Ff.GraphINN(c_nodes + [cond, Ff.OutputNode(c_nodes[-1])]).to(dev)
    onehot = F.one_hot(lab.to(dev) * 5 + torch.randint(0, 5, (512,), generator=g).to(dev), 10).float()
    ires = Ff.SequenceINN(2)
    ires.append(Fm.IResNetLayer, internal_size=32, n_internal_layers=2, jacobian_iterations=8,
                fixed_point_iterations=20, lipschitz_iterations=5)
    ires = ires.to(dev)

    def conditional():
        loss = _fit(cinn.parameters(), 3, lambda i: nll(*cinn(moons[:256], c=[onehot[:256]])))
        opt = torch.optim.Adam(ires.parameters(), lr=1e-3)
        for i in range(2):
            l2 = nll(*ires(moons[i * 64:(i + 1) * 64]))
            opt.zero_grad()
            l2.backward()
            opt.step()
            for m in ires.modules():
                if isinstance(m, Fm.IResNetLayer):
                    m.lipschitz_correction()
        with torch.no_grad():
            x, _ = cinn(torch.randn(64, 2, device=dev), c=[onehot[:64]], rev=True)
        z, _ = ires(moons[:64])  # outside no_grad: its log-determinant estimate needs autograd
        back, _ = ires(z.detach(), rev=True)
        print(f"cinn nll {loss.item():.3f} samples {tuple(x.shape)}; iresnet nll {l2.item():.3f} "
              f"inverse error {(back - moons[:64]).abs().max().item():.2e}")
    return {"moons": moons_fit, "graph": image_graph, "conditional": conditional}


# -- pytorch_kinematics: the README's robot loading from URDF (a 7-DOF arm in the KUKA layout, a two-finger hand
#    whose tree is not a chain), batched forward kinematics on the device in float64 (end effector and every link,
#    by list or dict of joint values, the compile-friendly tensor form), damped-least-squares IK (PseudoInverseIK
#    with retries, joint limits and early stopping, its SVD variant, a line search), the transforms (Transform3d
#    compose / inverse / points, rotation conversions, so3 exp / log, random rotations); a reaching policy trained
#    through FK ------------------------------------------------------------------------------------------------------

_ARM_URDF = """<?xml version="1.0"?>
<robot name="arm7">
  <link name="base"/>
{links}
</robot>
"""


def _arm_urdf(n=7):
    """A 7-DOF serial arm in the layout of a KUKA iiwa (alternating z / y axes, link offsets along z), with joint
    limits; links link_1 .. link_7, the end effector `ee` fixed to the last."""
    body, parent = [], "base"
    axes = ["0 0 1", "0 1 0", "0 0 1", "0 -1 0", "0 0 1", "0 1 0", "0 0 1"]
    for i in range(1, n + 1):
        body.append(f'  <link name="link_{i}"><inertial><mass value="1"/>'
                    f'<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>')
        body.append(f'  <joint name="joint_{i}" type="revolute"><parent link="{parent}"/><child link="link_{i}"/>'
                    f'<origin xyz="0 0 {0.15 if i == 1 else 0.2}" rpy="0 0 0"/><axis xyz="{axes[i - 1]}"/>'
                    f'<limit lower="-2.9" upper="2.9" effort="100" velocity="1.5"/></joint>')
        parent = f"link_{i}"
    body.append('  <link name="ee"/>')
    body.append(f'  <joint name="ee_fixed" type="fixed"><parent link="{parent}"/><child link="ee"/>'
                '<origin xyz="0 0 0.1" rpy="0 0 0"/></joint>')
    return _ARM_URDF.format(links="\n".join(body))


def _hand_urdf():
    """A palm with two two-joint fingers and a prismatic wrist: a tree, not a chain."""
    body = ['  <link name="palm"/>', '  <joint name="wrist" type="prismatic"><parent link="base"/>'
            '<child link="palm"/><origin xyz="0 0 0.1"/><axis xyz="0 0 1"/>'
            '<limit lower="0" upper="0.2" effort="10" velocity="1"/></joint>']
    for side, y in (("left", 0.03), ("right", -0.03)):
        parent = "palm"
        for k in (1, 2):
            body.append(f'  <link name="{side}_{k}"/>')
            body.append(f'  <joint name="{side}_joint_{k}" type="revolute"><parent link="{parent}"/>'
                        f'<child link="{side}_{k}"/><origin xyz="0 {y if k == 1 else 0} 0.05" rpy="0 0 0"/>'
                        f'<axis xyz="1 0 0"/><limit lower="-1.5" upper="1.5" effort="1" velocity="1"/></joint>')
            parent = f"{side}_{k}"
        body.append(f'  <link name="{side}_tip"/>')
        body.append(f'  <joint name="{side}_tip_fixed" type="fixed"><parent link="{parent}"/>'
                    f'<child link="{side}_tip"/><origin xyz="0 0 0.04"/></joint>')
    return _ARM_URDF.format(links="\n".join(body))


def pytorch_kinematics_robot(dev):
    import pytorch_kinematics as pk

    dtype = torch.float64
    chain = pk.build_serial_chain_from_urdf(_arm_urdf().encode(), "ee").to(dtype=dtype, device=dev)
    hand = pk.build_chain_from_urdf(_hand_urdf().encode()).to(dtype=dtype, device=dev)
    n_dof = len(chain.get_joint_parameter_names())
    g = torch.Generator().manual_seed(0)
    th = (torch.rand(512, n_dof, generator=g, dtype=dtype) * 2 - 1).to(dev)

    def forward():
        tg = chain.forward_kinematics(th)
        m = tg.get_matrix()
        pos, rot = m[:, :3, 3], pk.matrix_to_quaternion(m[:, :3, :3])
        links = chain.forward_kinematics(th[:8], end_only=False)
        one = chain.forward_kinematics([0.0, -0.7, 0.0, 1.5, 0.0, 0.7, 0.0])
        allf = chain.forward_kinematics_tensor(th[:64])
        hand_th = {name: torch.rand(32, generator=g, dtype=dtype).to(dev) * (0.2 if name == "wrist" else 1.0)
                   for name in hand.get_joint_parameter_names()}
        fingers = hand.forward_kinematics(hand_th)
        tips = fingers["left_tip"].get_matrix()[:, :3, 3] - fingers["right_tip"].get_matrix()[:, :3, 3]
        print(f"fk {tuple(pos.shape)} {tuple(rot.shape)}, {len(links)} links, one {tuple(one.get_matrix().shape)}, "
              f"tensor {tuple(allf.shape)}, finger gap {tips.norm(dim=-1).mean().item():.3f}; "
              f"limits {len(chain.get_joint_limits()[0])}")

    lim = torch.tensor(chain.get_joint_limits(), dtype=dtype, device=dev)
    goal_q = (torch.rand(6, n_dof, generator=g, dtype=dtype) * 2 - 1).to(dev)
    goal_tf = chain.forward_kinematics(goal_q)
    rob_tf = pk.Transform3d(pos=torch.tensor([0.0, 0.0, 0.0], device=dev),
                            rot=torch.tensor([0.0, 0.0, 0.0], device=dev), dtype=dtype, device=dev)
    goal_in_rob = rob_tf.inverse().compose(goal_tf)

    def inverse():
        ik = pk.PseudoInverseIK(chain, max_iterations=30, num_retries=8, joint_limits=lim.T,
                                early_stopping_any_converged=True, early_stopping_no_improvement="all",
                                debug=False, lr=0.2)
        sol = ik.solve(goal_in_rob)
        ik_svd = pk.PseudoInverseIKWithSVD(chain, max_iterations=20, num_retries=4, joint_limits=lim.T, lr=0.5,
                                           line_search=pk.BacktrackingLineSearch(max_lr=1.0))
        sol2 = ik_svd.solve(goal_in_rob)
        print(f"ik solutions {tuple(sol.solutions.shape)} converged {sol.converged.float().mean().item():.2f} "
              f"pos err {sol.err_pos.min().item():.4f}; svd converged {sol2.converged.float().mean().item():.2f}")

    def transforms():
        R = pk.random_rotations(256, dtype=dtype, device=dev)
        q = pk.matrix_to_quaternion(R)
        aa = pk.quaternion_to_axis_angle(q)
        back = pk.quaternion_to_matrix(pk.axis_angle_to_quaternion(aa))
        e = pk.matrix_to_euler_angles(R, "XYZ")
        log = pk.so3_log_map(R)
        exp = pk.so3_exp_map(log)
        ang = pk.so3_relative_angle(R, exp)
        six = pk.rotation_6d_to_matrix(pk.matrix_to_rotation_6d(R))
        tf = pk.Transform3d(rot=q[:16], pos=torch.rand(16, 3, dtype=dtype, device=dev), dtype=dtype, device=dev)
        pts = tf.transform_points(torch.rand(16, 100, 3, dtype=dtype, device=dev))
        tf2 = tf.compose(tf.inverse()).translate(0.1, 0.0, 0.0).rotate_axis_angle(30.0, axis="Z")
        dist = pk.quaternion_angular_distance(q[:128], q[128:])
        print(f"rotations: round trip {(back - R).abs().max().item():.1e}, euler {tuple(e.shape)}, so3 angle "
              f"{ang.max().item():.1e}, 6d {(six - R).abs().max().item():.1e}, points {tuple(pts.shape)}, "
              f"{tuple(tf2.get_matrix().shape)}, distance {dist.mean().item():.3f}")

    policy = nn.Sequential(nn.Linear(3, 64), nn.Tanh(), nn.Linear(64, n_dof)).to(dev, dtype)
    targets = chain.forward_kinematics(goal_q.repeat(8, 1)).get_matrix()[:, :3, 3]

    def reach():
        def loss_of(i):
            q = 2.9 * torch.tanh(policy(targets))
            return (chain.forward_kinematics(q).get_matrix()[:, :3, 3] - targets).pow(2).sum(-1).mean()
        loss = _fit(policy.parameters(), 4, loss_of)
        print(f"reaching loss {loss.item():.4f}")
    # a `jacobian` mode (gradients through FK, `jacobian` at the end effector and at offset locations) was a mode of
    # the recorded run too: on the GPU it failed in its warm-up step (the offset locations' transform is built with a
    # host tensor inside the library), before anything was measured, and was removed from this file after the run
    return {"forward": forward, "inverse": inverse, "transforms": transforms, "reach": reach}


# -- zennit: the README's LRP of a VGG with batch norm (EpsilonGammaBox with SequentialMergeBatchNorm, the Gradient
#    attributor, one-hot output attributions), every named composite of COMPOSITES on it, a ResNet with its
#    canonizer, LayerMap / NameMap composites of explicit rules; SmoothGrad, Integrated Gradients and Occlusion;
#    heatmaps through `imgify` / `imsave`; a training step that backpropagates through an attribution
#    (`create_graph=True`) ---------------------------------------------------------------------------------------------

def zennit_attribution(dev):
    from torchvision.models import resnet18, vgg11_bn
    from zennit.attribution import Gradient, IntegratedGradients, Occlusion, SmoothGrad
    from zennit.canonizers import SequentialMergeBatchNorm
    from zennit.composites import COMPOSITES, EpsilonGammaBox, EpsilonPlusFlat, LayerMapComposite, NameMapComposite
    from zennit.image import imgify, imsave
    from zennit.rules import Epsilon, Flat, Gamma, Pass, ZPlus
    from zennit.torchvision import ResNetCanonizer, VGGCanonizer
    from zennit.types import Activation, Convolution, Linear

    g = torch.Generator().manual_seed(0)
    data = torch.randn(4, 3, 64, 64, generator=g).to(dev)
    target = torch.eye(10, device=dev)[[0, 3, 5, 7]]
    vgg = vgg11_bn(num_classes=10).to(dev).eval()
    resnet = resnet18(num_classes=10).to(dev).eval()
    tmp = Path(hc._tmp())

    def lrp():
        composite = EpsilonGammaBox(low=-3.0, high=3.0, canonizers=[SequentialMergeBatchNorm()])
        with Gradient(model=vgg, composite=composite) as attributor:
            out, relevance = attributor(data, target)
        heat = relevance.sum(1)
        img = imgify(heat[0].cpu(), symmetric=True, cmap="coldnhot")  # the image helpers take host arrays
        imsave(str(tmp / "grid.png"), relevance.cpu(), grid=True, symmetric=True)
        sums = {}
        for name, cls in COMPOSITES.items():
            if name == "epsilon_gamma_box":
                continue
            with Gradient(model=vgg, composite=cls(canonizers=[VGGCanonizer()])) as attributor:
                _, rel = attributor(data, target)
            sums[name] = float(rel.sum())
        print(f"vgg relevance {float(relevance.sum()):.3f} image {img.size}, composites "
              f"{ {k: round(v, 3) for k, v in sums.items()} }")

    def resnet_rules():
        with Gradient(model=resnet, composite=EpsilonPlusFlat(canonizers=[ResNetCanonizer()])) as attributor:
            out, rel = attributor(data, lambda o: o * (o == o.max(1, keepdim=True)[0]))
        layer_map = LayerMapComposite([(Activation, Pass()), (Convolution, ZPlus()), (Linear, Epsilon(1e-6))])
        with Gradient(model=resnet, composite=layer_map) as attributor:
            _, rel2 = attributor(data, target)
        name_map = NameMapComposite([(["conv1"], Flat()), (["layer1.0.conv1", "layer1.0.conv2"], Gamma(0.25)),
                                     (["fc"], Epsilon())], canonizers=[ResNetCanonizer()])
        with Gradient(model=resnet, composite=name_map) as attributor:
            _, rel3 = attributor(data, target)
        print(f"resnet relevance {float(rel.sum()):.3f} {float(rel2.abs().sum()):.3f} {float(rel3.abs().sum()):.3f}")

    def other_attributors():
        with SmoothGrad(model=vgg, noise_level=0.1, n_iter=6) as attributor:
            _, sg = attributor(data, target)
        with IntegratedGradients(model=resnet, n_iter=6) as attributor:
            _, ig = attributor(data, target)
        with Occlusion(model=vgg, window=16, stride=16) as attributor:
            _, occ = attributor(data, target)
        imgify(occ.sum(1).cpu(), grid=(1, 4), symmetric=True)
        print(f"smoothgrad {float(sg.abs().mean()):.4f} ig {float(ig.abs().mean()):.4f} "
              f"occlusion {float(occ.abs().mean()):.4f}")

    small = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(4), nn.Flatten(),
                          nn.Linear(128, 10)).to(dev)

    def attribution_training():
        opt = torch.optim.Adam(small.parameters(), lr=1e-3)
        labels = target.argmax(1)
        for _ in range(2):
            with Gradient(model=small, composite=EpsilonPlusFlat(), create_graph=True) as attributor:
                out, rel = attributor(data, target)
            loss = F.cross_entropy(out, labels) + 0.1 * rel[:, :, :8].abs().mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"attribution-regularised loss {loss.item():.3f}")
    return {"lrp": lrp, "resnet": resnet_rules, "attributors": other_attributors, "train": attribution_training}


# -- ptwt: the README's 1d fast wavelet transform and its inverse under several boundary modes, the 2d / 3d
#    transforms and their separable (fs-) forms; the sparse-matrix transforms with boundary filters (1d, 2d
#    separable and not, 3d); the stationary and continuous transforms; 1d and 2d wavelet packets (node access,
#    reconstruction); a learned soft-threshold wavelet denoiser trained through wavedec / waverec -----------------

def ptwt_wavelets(dev):
    import numpy as np
    import ptwt
    import pywt

    g = torch.Generator().manual_seed(0)
    t = torch.linspace(0, 1, 512)
    clean = torch.stack([torch.sin(2 * torch.pi * f * t) * (t > 0.3) for f in (5, 13, 29, 41)])
    sig = (clean + 0.2 * torch.randn(4, 512, generator=g)).to(dev)
    clean = clean.to(dev)
    img = torch.rand(4, 64, 64, generator=g).to(dev)
    vol = torch.rand(2, 16, 32, 32, generator=g).to(dev)

    def transforms():
        errs = []
        for wav, mode in (("db4", "reflect"), ("haar", "zero"), ("sym5", "symmetric"), ("db2", "periodic"),
                          ("coif1", "constant")):
            coeffs = ptwt.wavedec(sig, pywt.Wavelet(wav), mode=mode, level=3)
            errs.append((ptwt.waverec(coeffs, wav)[..., :512] - sig).abs().max())
        c2 = ptwt.wavedec2(img, "haar", level=2, mode="constant")
        r2 = ptwt.waverec2(c2, "haar")
        c2b = ptwt.wavedec2(img, "db3", level=2, mode="reflect")
        ptwt.waverec2(c2b, "db3")
        fs2 = ptwt.fswaverec2(ptwt.fswavedec2(img, "db2", level=2), "db2")
        c3 = ptwt.wavedec3(vol, "haar", level=2)
        r3 = ptwt.waverec3(c3, "haar")
        fs3 = ptwt.fswaverec3(ptwt.fswavedec3(vol, "db2", level=1), "db2")
        swt = ptwt.swt(sig, "db2", level=2)
        isw = ptwt.iswt(swt, "db2")
        print(f"1d errors {[round(float(e), 6) for e in errs]} 2d {float((r2 - img).abs().max()):.1e} "
              f"fs2 {tuple(fs2.shape)} 3d {float((r3 - vol).abs().max()):.1e} fs3 {tuple(fs3.shape)} "
              f"swt {float((isw - sig).abs().max()):.1e}")

    def matrix():
        dec = ptwt.MatrixWavedec("db2", level=3)
        rec = ptwt.MatrixWaverec("db2")
        r1 = rec(dec(sig))
        dec2 = ptwt.MatrixWavedec2("haar", level=2, separable=False)
        rec2 = ptwt.MatrixWaverec2("haar", separable=False)
        r2 = rec2(dec2(img))
        dec2s = ptwt.MatrixWavedec2("db2", level=2)
        ptwt.MatrixWaverec2("db2")(dec2s(img))
        dec3 = ptwt.MatrixWavedec3("haar", level=1)
        r3 = ptwt.MatrixWaverec3("haar")(dec3(vol))
        print(f"matrix errors 1d {float((r1 - sig).abs().max()):.1e} 2d {float((r2 - img).abs().max()):.1e} "
              f"3d {float((r3 - vol).abs().max()):.1e}")

    def packets():
        wp = ptwt.WaveletPacket(sig, "db4", mode="reflect", maxlevel=3)
        leaves = [wp[node] for node in wp.get_level(3)]  # every leaf: reconstruction starts from them all
        wp["aaa"] = torch.zeros_like(wp["aaa"])
        wp.reconstruct()
        wp2 = ptwt.WaveletPacket2D(img, "db2", mode="reflect", maxlevel=2)
        quads = [wp2[a + b] for a in "ahvd" for b in "ahvd"]
        wp2.reconstruct()
        rec_err = (wp[""][..., :512] - sig).abs().max()
        scales = np.arange(1, 33)
        cw, freqs = ptwt.cwt(sig, scales, "mexh", sampling_period=1 / 512)
        cw2, _ = ptwt.cwt(sig, scales, pywt.ContinuousWavelet("shan1-1"), sampling_period=1 / 512)
        print(f"packets {[tuple(x.shape) for x in leaves]} {[tuple(x.shape) for x in quads]} "
              f"rec {float(rec_err):.1e}; cwt {tuple(cw.shape)} "
              f"{tuple(cw2.shape)} freqs {freqs[:2]}")

    class Denoiser(nn.Module):
        def __init__(self, wavelet="db4", level=4):
            super().__init__()
            self.wavelet, self.level = wavelet, level
            self.thresholds = nn.Parameter(torch.full((level,), 0.1))

        def forward(self, x):
            coeffs = ptwt.wavedec(x, self.wavelet, mode="reflect", level=self.level)
            shrunk = [coeffs[0]] + [torch.sign(c) * F.relu(c.abs() - th.abs())
                                    for c, th in zip(coeffs[1:], self.thresholds)]
            return ptwt.waverec(shrunk, self.wavelet)[..., :x.shape[-1]]

    den = Denoiser().to(dev)

    def denoise():
        loss = _fit(den.parameters(), 4, lambda i: F.mse_loss(den(sig), clean), lr=1e-2)
        print(f"denoiser mse {loss.item():.4f}, thresholds {[round(v, 3) for v in den.thresholds.tolist()]}")
    return {"transforms": transforms, "matrix": matrix, "packets": packets, "denoise": denoise}


# -- nngeometry: the README's Fisher information matrices (FIM) of a classifier in every representation (KFAC,
#    EKFAC with its diagonal update, diagonal, dense, block-diagonal, low-rank, implicit) and their operations
#    (vTMv, mv, trace, frobenius norm, solve); KFAC natural-gradient steps; training with an EWC penalty of a
#    diagonal FIM; FIM_MonteCarlo on a CNN; the NTK Gram matrix, the per-example Jacobian and a Hessian --------------

def nngeometry_fisher(dev):
    from nngeometry.gram import GramMatrix
    from nngeometry.hessian import Hessian
    from nngeometry.jacobian import Jacobian
    from nngeometry.metrics import FIM, FIM_MonteCarlo
    from nngeometry.object import (
        PMatBlockDiag,
        PMatDense,
        PMatDiag,
        PMatEKFAC,
        PMatImplicit,
        PMatKFAC,
        PMatLowRank,
        PVector,
    )
    from torch.utils.data import DataLoader, TensorDataset

    g = torch.Generator().manual_seed(0)
    centres = torch.randn(5, 12, generator=g) * 2
    y = torch.randint(0, 5, (256,), generator=g)
    x = (centres[y] + torch.randn(256, 12, generator=g)).to(dev)
    y = y.to(dev)
    loader = DataLoader(TensorDataset(x, y), batch_size=64)
    small_loader = DataLoader(TensorDataset(x[:32], y[:32]), batch_size=16)
    mlp = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 5)).to(dev)

    def representations():
        v = PVector.from_model(mlp)
        out = {}
        for rep in (PMatKFAC, PMatEKFAC, PMatDiag, PMatDense, PMatBlockDiag, PMatLowRank, PMatImplicit):
            Fm = FIM(model=mlp, loader=loader, representation=rep, device=dev)
            vals = [Fm.vTMv(v)]
            if rep is not PMatImplicit:
                vals += [Fm.trace()]
            if rep in (PMatKFAC, PMatDiag, PMatDense, PMatBlockDiag):
                vals += [Fm.frobenius_norm(), Fm.mv(v).norm()]
            if rep is PMatEKFAC:
                Fm.update_diag(loader)
            out[rep.__name__] = [round(float(a), 3) for a in vals]
        print(f"fisher {out}")

    def natural_gradient():
        opt_lr = 0.05
        for i, (xb, yb) in enumerate(loader):
            Fk = FIM(model=mlp, loader=small_loader, representation=PMatKFAC, device=dev)
            loss = F.cross_entropy(mlp(xb), yb)
            mlp.zero_grad()
            loss.backward()
            grad = PVector.from_model_grad(mlp)
            step = Fk.solvePVec(grad, regul=1e-3)
            (PVector.from_model(mlp).detach() - opt_lr * step).copy_to_model(mlp)
            if i == 1:
                break
        print(f"natural-gradient loss {loss.item():.3f}")

    def ewc():
        F_ewc = FIM(model=mlp, loader=loader, representation=PMatDiag, device=dev)
        w_a = PVector.from_model(mlp).clone().detach()
        opt = torch.optim.SGD(mlp.parameters(), lr=0.05)
        for xb, yb in loader:
            w = PVector.from_model(mlp)
            loss = F.cross_entropy(mlp(xb), (yb + 1) % 5) + 10.0 * F_ewc.vTMv(w - w_a)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"ewc loss {loss.item():.3f}")

    cnn = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU(),
                        nn.Flatten(), nn.Linear(4 * 8 * 8, 5)).to(dev)
    imgs = torch.randn(64, 1, 8, 8, generator=g).to(dev)
    img_loader = DataLoader(TensorDataset(imgs, y[:64]), batch_size=32)

    def kernels():
        Fmc = FIM_MonteCarlo(model=cnn, loader=img_loader, representation=PMatKFAC, trials=2, device=dev)
        Fe = FIM(model=cnn, loader=img_loader, representation=PMatEKFAC, device=dev)
        v = PVector.from_model(cnn)
        gram = GramMatrix(model=mlp, loader=small_loader)
        jac = Jacobian(model=mlp, loader=small_loader)
        hess = Hessian(model=mlp, loader=small_loader, representation=PMatDense,
                       function=lambda out, yb: F.cross_entropy(out, yb))
        print(f"mc kfac vTMv {float(Fmc.vTMv(v)):.3f} ekfac {float(Fe.vTMv(v)):.3f} gram "
              f"{tuple(gram.to_torch().shape)} jacobian {tuple(jac.to_torch().shape)} hessian trace "
              f"{float(hess.trace()):.3f}")
    return {"fisher": representations, "natural": natural_gradient, "ewc": ewc, "kernels": kernels}


# -- qpth: the README's OptNet layer (QPFunction of a learned positive-definite Q, inequality constraints G z <= h
#    with h = G z0 + s0, no equality constraints) between two linear layers, trained end to end on synthetic
#    classes; a batch of Euclidean projections onto the probability simplex (an equality constraint and z >= 0) with
#    gradients through the solution, a second configuration of the solver's iterations ------------------------------

def _cvxpy_stub():
    """qpth imports cvxpy for its alternative (CPU, one problem at a time) solver, which is not used here: an
    empty module so that the import succeeds without it."""
    if "cvxpy" not in sys.modules:
        sys.modules["cvxpy"] = types.ModuleType("cvxpy")


def qpth_optnet(dev):
    _cvxpy_stub()
    from qpth.qp import QPFunction, QPSolvers

    class OptNet(nn.Module):
        def __init__(self, n_in, n_cls, nz=12, nineq=8, eps=1e-4):
            super().__init__()
            self.fc_in = nn.Linear(n_in, nz)
            self.fc_out = nn.Linear(nz, n_cls)
            self.L = nn.Parameter(torch.tril(torch.rand(nz, nz)))
            self.G = nn.Parameter(torch.empty(nineq, nz).uniform_(-1, 1))
            self.z0 = nn.Parameter(torch.zeros(nz))
            self.s0 = nn.Parameter(torch.ones(nineq))
            self.eps = eps

        def forward(self, x):
            nb = x.shape[0]
            p = -self.fc_in(x)
            L = torch.tril(self.L)
            Q = L @ L.t() + self.eps * torch.eye(L.shape[0], device=x.device)
            Q = Q.unsqueeze(0).expand(nb, -1, -1)
            G = self.G.unsqueeze(0).expand(nb, -1, -1)
            h = (self.G @ self.z0 + self.s0).unsqueeze(0).expand(nb, -1)
            e = torch.Tensor().to(x.device)
            z = QPFunction(verbose=-1, solver=QPSolvers.PDIPM_BATCHED)(Q, p, G, h, e, e)
            return self.fc_out(z)

    g = torch.Generator().manual_seed(0)
    centres = torch.randn(4, 16, generator=g) * 2
    y = torch.randint(0, 4, (96,), generator=g)
    x = (centres[y] + torch.randn(96, 16, generator=g)).to(dev)
    y = y.to(dev)
    net = OptNet(16, 4).to(dev)

    def train():
        loss = _fit(net.parameters(), 3, lambda i: F.cross_entropy(net(x[i * 32:(i + 1) * 32]), y[i * 32:(i + 1) * 32]))
        with torch.no_grad():
            acc = (net(x).argmax(1) == y).float().mean()
        print(f"optnet loss {loss.item():.3f} acc {acc.item():.2f}")

    n, nb = 10, 32
    scores = torch.randn(nb, n, generator=g).to(dev).requires_grad_()
    target = F.one_hot(torch.randint(0, n, (nb,), generator=g), n).float().to(dev)

    def simplex():
        Q = torch.eye(n, device=dev).unsqueeze(0).expand(nb, -1, -1)
        G = -torch.eye(n, device=dev)
        h = torch.zeros(n, device=dev)
        A = torch.ones(1, n, device=dev)
        b = torch.ones(1, device=dev)
        z = QPFunction(verbose=-1)(Q, -scores, G, h, A, b)
        loss = F.mse_loss(z, target)
        loss.backward()
        z2 = QPFunction(verbose=-1, eps=1e-8, maxIter=30, notImprovedLim=5, check_Q_spd=False)(
            2 * Q, -scores.detach(), G, h, A, b)
        print(f"simplex projection loss {loss.item():.4f}, sums {z.sum(1).mean().item():.3f}, "
              f"sparsity {(z2 < 1e-4).float().mean().item():.2f}, grad {scores.grad.norm().item():.3f}")
    return {"train": train, "simplex": simplex}


# -- torchiva: synthetic multichannel mixtures (sources convolved with random room responses by `fftconvolve`) in
#    the STFT domain (`STFT`, its inverse): AuxIVA-IP with Laplace, Gauss and NMF (ILRMA) source models, OverIVA
#    (fewer sources than channels), AuxIVA-IP2 on two channels, T-ISS joint dereverberation and separation, FIVE
#    extraction, WPE dereverberation; projection back, minimum distortion, `select_most_energetic`; MVDR, MWF and
#    GEV beamformers driven by BLSTM / GLU mask networks, and T-ISS with a neural (GLU) source model trained through
#    the separation with demixing-matrix checkpointing, as its training example does -----------------------------

def _si_sdr(est, ref, eps=1e-8):
    ref = ref - ref.mean(-1, keepdim=True)
    est = est - est.mean(-1, keepdim=True)
    proj = (est * ref).sum(-1, keepdim=True) * ref / (ref.pow(2).sum(-1, keepdim=True) + eps)
    return 10 * torch.log10(proj.pow(2).sum(-1) / ((est - proj).pow(2).sum(-1) + eps) + eps)


def torchiva_separation(dev):
    import torchiva as ti

    g = torch.Generator().manual_seed(0)
    n_src, n_chan, n_samples = 2, 3, 8000
    t = torch.arange(n_samples) / 8000.0
    s1 = torch.sin(2 * torch.pi * 330 * t) * torch.rand(n_samples, generator=g).gt(0.3).float()
    s2 = torch.randn(n_samples, generator=g) * (torch.sin(2 * torch.pi * 3 * t) > 0).float()
    sources = torch.stack([s1, s2]).unsqueeze(0).repeat(2, 1, 1).to(dev)  # (batch, n_src, time)
    rirs = (torch.randn(2, n_chan, n_src, 64, generator=g) * torch.exp(-torch.arange(64) / 8.0)).to(dev)
    mix = ti.fftconvolve(sources.unsqueeze(1), rirs, mode="full")[..., :n_samples].sum(2)  # (batch, chan, time)
    stft = ti.STFT(256, hop_length=64).to(dev)
    X = stft(mix)  # (batch, chan, freq, frames)

    def blind():
        outs = {}
        # n_src given: this version's forward fails on its documented default (None, for n_chan)
        for name, sep in (("laplace", ti.AuxIVA_IP(n_iter=10, n_src=n_chan)),
                          ("gauss", ti.AuxIVA_IP(n_iter=10, n_src=n_chan, model=ti.GaussModel())),
                          ("ilrma", ti.AuxIVA_IP(n_iter=10, n_src=n_chan, model=ti.NMFModel(n_basis=4))),
                          ("overiva", ti.AuxIVA_IP(n_iter=10, n_src=n_src))):
            Y = sep.to(dev)(X)
            outs[name] = tuple(Y.shape)
        Y2 = ti.AuxIVA_IP2(n_iter=10).to(dev)(X[:, :2])
        y = stft.inv(Y2)
        sel = ti.select_most_energetic(y, num=1)
        print(f"auxiva {outs}, ip2 {tuple(y.shape)}, most energetic {tuple(sel.shape)}")

    def dereverb():
        tiss = ti.T_ISS(n_iter=10, n_taps=3, n_delay=1, proj_back_mic=None).to(dev)
        Y = tiss(X)
        pb = ti.projection_back(Y, X[:, 0])
        md = ti.minimum_distortion(Y, X[:, 0], p=1.0, q=2.0, max_iter=5)
        over = ti.T_ISS(n_iter=8, n_src=2).to(dev)(X)
        five = ti.FIVE(n_iter=8, n_power_iter=3).to(dev)(X)
        wpe = ti.WPE(n_iter=2, n_delay=2, n_taps=4).to(dev)(X)
        y = stft.inv(over)
        sdr = _si_sdr(y[..., :n_samples], sources[..., :y.shape[-1]])
        print(f"t-iss {tuple(Y.shape)} pb {tuple(pb.shape)} md {tuple(md.shape)} five {tuple(five.shape)} "
              f"wpe {tuple(wpe.shape)} si-sdr {sdr.mean().item():.2f}")

    n_freq = stft.n_freq

    class Masks(nn.Module):
        """The beamformers' mask model: given one spectrogram, the target's mask (a BLSTM's) and the noise's."""

        def __init__(self, n_masks=2):
            super().__init__()
            self.net = ti.models.BLSTMMask(n_freq, 64, n_hidden=64)
            self.n_masks = n_masks

        def forward(self, spec):
            m = self.net(spec)
            return torch.stack([m, *[(1 - m) / (self.n_masks - 1)] * (self.n_masks - 1)], dim=-3)

    two, three = Masks().to(dev), Masks(3).to(dev)
    glu = ti.models.GLUMask(n_freq, 32, dropout_p=0.1).to(dev)

    def beamformers():
        outs = []
        for bf in (ti.MVDRBeamformer(two), ti.MVDRBeamformer(two, mvdr_type="scm"),
                   ti.MVDRBeamformer(two, n_power_iter=5), ti.MVDRBeamformer(three), ti.MWFBeamformer(two),
                   ti.GEVBeamformer(two)):
            outs.append(tuple(bf.to(dev)(X).shape))
        print(f"beamformers {outs}")

    tiss_nn = ti.T_ISS(n_iter=5, n_taps=2, n_delay=1, n_src=n_src, model=glu, use_dmc=True).to(dev)

    def train():
        def loss_of(i):
            y = stft.inv(tiss_nn(X))[..., :n_samples]
            ref = sources[..., :y.shape[-1]]
            # the sources' order is unknown: the better of the two assignments, per mixture
            a = _si_sdr(y, ref).mean(-1)
            b = _si_sdr(y.flip(1), ref).mean(-1)
            return -torch.maximum(a, b).mean()
        loss = _fit(glu.parameters(), 2, loss_of)
        print(f"neural t-iss si-sdr {-loss.item():.2f} dB")
    return {"blind": blind, "dereverb": dereverb, "beamformers": beamformers, "train": train}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _forget(root: Path) -> None:
    """The repository's modules and its folder off sys.path: the next script's `utils`, `model` must not resolve to
    them."""
    for m, mod in list(sys.modules.items()):
        where = getattr(mod, "__file__", None) or ""
        if str(where).startswith(str(root)):
            del sys.modules[m]
    sys.path[:] = [p for p in sys.path if p != str(root)]


def _mnist(root: Path, n_train: int, n_test: int, seed: int = 0) -> None:
    """torchvision's MNIST layout (MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte, big-endian idx files),
    so that `MNIST(root, download=True)` finds its files and reads them: each digit a noisy blurred template."""
    import numpy as np
    rng = np.random.default_rng(seed)
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    templates = (rng.random((10, 28, 28)) > 0.75).astype(np.float32)
    for _ in range(2):  # a little smoothing: strokes rather than salt
        templates = (templates + np.roll(templates, 1, 1) + np.roll(templates, 1, 2)) / 3
    for split, n in (("train", n_train), ("t10k", n_test)):
        labels = rng.integers(0, 10, n).astype(np.uint8)
        imgs = np.clip(templates[labels] * 255 + rng.normal(0, 30, (n, 28, 28)), 0, 255).astype(np.uint8)
        (raw / f"{split}-images-idx3-ubyte").write_bytes(
            np.array([2051, n, 28, 28], dtype=">i4").tobytes() + imgs.tobytes())
        (raw / f"{split}-labels-idx1-ubyte").write_bytes(np.array([2049, n], dtype=">i4").tobytes() + labels.tobytes())


def _vae(dev, name: str, extra: list):
    """timbmg/VAE-CVAE-MNIST's train.py as is (`--epochs 2 --batch_size 64`, figures under a temporary folder) on
    384 synthetic MNIST digits, six steps an epoch: the loss printed and a figure of ten decoded samples at each
    epoch's first and last step, the latent codes of every example gathered with `.item()`, a seaborn plot of them
    at the epoch's end. The window spans the 2nd to the 10th `backward`: the rest of the first epoch, its figures
    and latent plot, and four steps of the second."""
    root = _need_repo("vae")
    tmp = Path(hc._tmp())
    _mnist(tmp / "data", 384, 64)
    argv = ["--epochs", "2", "--batch_size", "64", "--fig_root", str(tmp / "figs"), *extra]

    def window():
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 10, stop_script=True):
                hc.run_script(root / "train.py", argv, str(tmp))
        finally:
            _forget(root)
    return {"train_window": window}


def vae_vae(dev):
    """The plain VAE (784-256-2-256-784, BCE + KL)."""
    return _vae(dev, "vae.vae", [])


def vae_cvae(dev):
    """The conditional VAE (`--conditional`: one-hot labels concatenated to encoder and decoder inputs, the
    figures' samples conditioned on the ten digits)."""
    return _vae(dev, "vae.cvae", ["--conditional"])


def _tensorboard_logger():
    """The trainer imports tensorboard_logger's `configure` and `log_value`, used only with `--use_tensorboard
    True` (not given): a stand-in module holding the two names."""
    mod = types.ModuleType("tensorboard_logger")
    mod.configure = lambda *a, **kw: None
    mod.log_value = lambda *a, **kw: None
    return mod


def _ram(dev, name: str, extra: list):
    """kevinzakka/recurrent-visual-attention's main.py as is (`--epochs 3 --batch_size 32`, the data, checkpoint,
    log and plot folders in a temporary folder; one loader worker and pinned memory, as it sets on the GPU) on 400
    synthetic MNIST digits (360 to train, 40 to validate): twelve steps an epoch, the glimpses of each epoch's first
    batch pickled, a validation pass, the ReduceLROnPlateau step and the checkpoints. The window spans the 2nd to the
    16th `backward`: the rest of the first epoch, its validation and checkpoint, three steps of the second."""
    root = _need_repo("ram")
    tmp = Path(hc._tmp())
    _mnist(tmp / "data", 400, 40)
    argv = ["--epochs", "3", "--batch_size", "32", "--data_dir", str(tmp / "data"), "--ckpt_dir", str(tmp / "ckpt"),
            "--logs_dir", str(tmp / "logs") + "/", "--use_gpu", str(dev.type == "cuda"), *extra]

    def window():
        saved = sys.modules.get("tensorboard_logger")
        sys.modules["tensorboard_logger"] = _tensorboard_logger()
        try:
            with hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, 16, stop_script=True):
                hc.run_script(root / "main.py", argv, str(tmp))
        finally:
            if saved is None:
                sys.modules.pop("tensorboard_logger", None)
            else:
                sys.modules["tensorboard_logger"] = saved
            _forget(root)
    return {"train_window": window}


def ram_ram(dev):
    """The paper's model: six glimpses of one 8x8 patch, Gaussian location policy, baseline, hybrid loss."""
    return _ram(dev, "ram.ram", [])


def ram_multiscale(dev):
    """Four glimpses of three patches at scales 1, 2 and 4 (`--num_patches 3 --glimpse_scale 2`), validation
    averaged over three Monte-Carlo replicas of each image (`--M 3`)."""
    return _ram(dev, "ram.multiscale", ["--num_glimpses", "4", "--num_patches", "3", "--glimpse_scale", "2",
                                        "--M", "3"])


MODELS = [
    # name, package, builder
    ("tntorch.tensors", "tntorch", tntorch_tensors),
    ("freia.flows", "FrEIA", freia_flows),
    ("pytorch_kinematics.robot", "pytorch_kinematics", pytorch_kinematics_robot),
    ("zennit.attribution", "zennit", zennit_attribution),
    ("ptwt.wavelets", "ptwt", ptwt_wavelets),
    ("nngeometry.fisher", "nngeometry", nngeometry_fisher),
    ("qpth.optnet", "qpth", qpth_optnet),
    ("torchiva.separation", "torchiva", torchiva_separation),
    ("vae.vae", "vae", vae_vae),
    ("vae.cvae", "vae", vae_cvae),
    ("ram.ram", "ram", ram_ram),
    ("ram.multiscale", "ram", ram_multiscale),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh14", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
