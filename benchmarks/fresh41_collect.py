"""Record the syncs of a forty-second set, `fresh41` (a sealed test set): libraries and training code nobody here read.

`fresh41` is recorded the same way as `fresh9` to `fresh39` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions and docs' examples, the names, signatures and docstrings they
export), on synthetic data with random weights, before anyone ran the linter on this code or read it for syncs.
Every input is put on the device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; torchsparsegradutils'
`rand_sparse(device=)`, score_models' `ScoreModel(device=)`, sahi's `AutoDetectionModel.from_pretrained(device=)`,
torch_geometric_signed_directed's `link_class_split(device=)`; onnx2torch's converted modules, supar's structures
and models, smalldiffusion's and quanto's models take tensors and modules moved to the device): no workload runs
under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh41), names m to z: onnx2torch (ONNX graphs
  converted to PyTorch modules: detection post-processing, shape arithmetic, resizing, other operators, a CNN
  trained), optimum-quanto (quantisation of weights and activations: int8 / float8 weights, calibration, freezing,
  quantisation-aware fine-tuning), sahi (sliced inference around a torchvision detector: slicing, standard and
  sliced predictions, NMS / greedy NMM post-processing, COCO annotations), score_models (score-based generative
  models: VE / VP SDEs, training by `fit`, Euler-Maruyama sampling, ODE likelihoods, an energy model),
  smalldiffusion (diffusion training loop, schedules and its sampler), supar (structured distributions over trees
  and chains: TreeCRFs, MatrixTree, linear-chain and constituency CRFs, MST decoding, mean-field / loopy-BP modules,
  biaffine / CRF / VI dependency parsers' losses and tree decoding, parsing metrics), torch_geometric_signed_directed
  (signed and directed graph networks: SSBM / DSBM graphs, link and node splits, SGCN, SDGNN, SNEA, MagNet, DiGCN,
  DIGRAC, MSGNN, SSSNET, DGCN, its Laplacians and adjacencies) and torchsparsegradutils (sparse solves with sparse
  gradients: CG, BiCGSTAB, MINRES, LSMR, triangular solves, least squares, statistical tests, block-diagonal
  utilities); + torch-ema (score_models'), nltk and dill (supar's), fire, termcolor and shapely (sahi's) and
  tensorboardX (imbalanced-semi-self's). Their other needs (numpy, scipy, onnx, accelerate, einops, h5py,
  networkx, scikit-learn, torch-geometric, opencv, safetensors, torchvision, gpytorch, tabulate) are on the GPU
  machine.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh41/repos/<name>:
  YyzHarry/imbalanced-semi-self (train.py as is: long-tailed CIFAR-10 with LDAM loss and class re-weighting,
  CIFAR-10 answered by synthetic images) and wjmaddox/swa_gaussian (experiments/train/run_swag.py as is: SGD then
  SWAG collection, sampling, BN update and evaluation, CIFAR-10 answered by synthetic images).

    python benchmarks/fresh41_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh41_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh41 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh41 --no-false-flags [--linter REV]` (totals only).
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
BENCH_DIR = ac.REPO / ".bench" / "fresh41"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh41", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh41/repos/<name>)
REPOS = {
    "imbalanced": ("YyzHarry/imbalanced-semi-self", "b91ad29fd8805ddf0a146f735905b0c869e68ae4",
                   ["train.py", "utils.py", "losses.py", "dataset", "models"]),
    "swag": ("wjmaddox/swa_gaussian", "61a918fa1c3e732dd19fc278ad3a5969f24d5a72",
             ["experiments/train/run_swag.py", "swag"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["onnx2torch==1.5.15", "optimum-quanto==0.2.7", "sahi==0.12.8", "fire==0.7.1", "termcolor==3.3.0",
          "shapely==2.2.0", "score-models==0.5.11", "torch-ema==0.3", "smalldiffusion==0.5.0", "supar==1.1.4",
          "nltk==3.10.4", "dill==0.4.1", "torch-geometric-signed-directed==1.2.0", "torchsparsegradutils==0.2.7",
          "tensorboardX==2.6.5"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"onnx2torch": "onnx2torch", "optimum_quanto": "optimum-quanto", "sahi": "sahi",
         "score_models": "score-models", "smalldiffusion": "smalldiffusion",
         "supar": "supar", "torch_geometric_signed_directed": "torch-geometric-signed-directed",
         "torchsparsegradutils": "torchsparsegradutils", "numpy": "numpy", "scipy": "scipy", "onnx": "onnx",
         "torchvision": "torchvision", "torch_geometric": "torch-geometric", "accelerate": "accelerate"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh41/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh41_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


# ============================================================================================
# Libraries
# ============================================================================================

# -- onnx2torch: `onnx2torch.convert(model_proto)` (its README) of ONNX graphs built with onnx's own helpers
#    (`onnx.helper.make_node` / `make_graph` / `make_model`, opset 17), the converted `GraphModule` moved to the
#    device: detection post-processing (`NonMaxSuppression`, `TopK`, `Gather`, `ReduceMax`, `ArgMax`), shape
#    arithmetic (`Shape`, `Range`, `ConstantOfShape`, `Expand`, `Reshape` / `Slice` of computed shapes, `NonZero`,
#    `Where`, `CumSum`, `Clip`, `Pad`), resizing (`Resize` to computed sizes and by scales, `Tile`, `Split`,
#    `DepthToSpace`), other operators (`TopK`, `CumSum`, `GatherElements`, `GatherND`, `ScatterND`, `Einsum`,
#    `LayerNormalization`, `Squeeze` / `Unsqueeze` with axes inputs) and a small CNN (`Conv`, `BatchNormalization`,
#    `MaxPool`, `GlobalAveragePool`, `Gemm`) trained a few steps --------------------------------------------------

def onnx2torch_graphs(dev):
    from onnx import TensorProto, helper, numpy_helper
    from onnx2torch import convert

    def init(name, arr):
        return numpy_helper.from_array(np.asarray(arr), name)

    def model(nodes, inputs, outputs, inits):
        g = helper.make_graph(nodes, "g", inputs, outputs, inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        return convert(m).to(dev)

    def vi(name, dtype, shape):
        return helper.make_tensor_value_info(name, dtype, shape)

    def detect():
        n_box, n_cls = 200, 4
        nodes = [
            helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_thr"], ["sel"],
                             center_point_box=0),
            helper.make_node("Gather", ["sel", "col2"], ["box_idx"], axis=1),
            helper.make_node("Squeeze", ["boxes", "zero"], ["boxes2d"]),
            helper.make_node("Gather", ["boxes2d", "box_idx"], ["kept"], axis=0),
            helper.make_node("ReduceMax", ["scores"], ["best"], axes=[1], keepdims=0),
            helper.make_node("TopK", ["best", "k"], ["top_s", "top_i"], axis=1),
            helper.make_node("ArgMax", ["scores"], ["cls"], axis=1, keepdims=0),
        ]
        m = model(nodes, [vi("boxes", TensorProto.FLOAT, [1, n_box, 4]),
                          vi("scores", TensorProto.FLOAT, [1, n_cls, n_box])],
                  [vi("kept", TensorProto.FLOAT, None), vi("top_s", TensorProto.FLOAT, None),
                   vi("top_i", TensorProto.INT64, None), vi("cls", TensorProto.INT64, None)],
                  [init("max_out", np.array([20], np.int64)), init("iou", np.array([0.5], np.float32)),
                   init("score_thr", np.array([0.3], np.float32)), init("col2", np.array(2, np.int64)),
                   init("zero", np.array([0], np.int64)), init("k", np.array([10], np.int64))])
        for step in range(4):
            g = torch.Generator().manual_seed(step)
            xy = torch.rand(1, n_box, 2, generator=g) * 80
            wh = torch.rand(1, n_box, 2, generator=g) * 30 + 5
            boxes = torch.cat([xy, xy + wh], -1).to(dev)
            scores = torch.rand(1, n_cls, n_box, generator=g).to(dev)
            outs = m(boxes, scores)
            flat = [o for t in outs for o in (t if isinstance(t, (tuple, list)) else [t])]
            print(f"detect {step}: kept {tuple(flat[0].shape)}, {[tuple(o.shape) for o in flat]}, "
                  f"{flat[0].sum().item():.1f}")

    def shapes():
        nodes = [
            helper.make_node("Shape", ["x"], ["shp"]),
            helper.make_node("Gather", ["shp", "one"], ["n"], axis=0),
            helper.make_node("Range", ["zero_s", "n", "one_s"], ["ramp"]),
            helper.make_node("Cast", ["ramp"], ["rampf"], to=TensorProto.FLOAT),
            helper.make_node("ConstantOfShape", ["shp"], ["ones"], value=helper.make_tensor("v", TensorProto.FLOAT,
                                                                                            [1], [1.0])),
            helper.make_node("Add", ["x", "ones"], ["x1"]),
            helper.make_node("Mul", ["x1", "rampf"], ["x2"]),
            helper.make_node("Div", ["n", "two"], ["half"]),
            helper.make_node("Unsqueeze", ["half", "zero"], ["half1"]),
            helper.make_node("Slice", ["x2", "zero", "half1", "one"], ["left"]),
            helper.make_node("Greater", ["left", "thr"], ["mask"]),
            helper.make_node("Where", ["mask", "left", "negone"], ["w"]),
            helper.make_node("NonZero", ["mask"], ["nz"]),
            helper.make_node("CumSum", ["w", "one_s"], ["cs"]),
            helper.make_node("Clip", ["cs", "lo", "hi"], ["clipped"]),
            helper.make_node("Pad", ["clipped", "pads"], ["padded"], mode="constant"),
            helper.make_node("Shape", ["padded"], ["ushp"]),
            helper.make_node("Reshape", ["padded", "flat"], ["flatv"]),
            helper.make_node("Expand", ["rampf", "shp"], ["exp"]),
        ]
        m = model(nodes, [vi("x", TensorProto.FLOAT, [2, None])],
                  [vi("flatv", TensorProto.FLOAT, None), vi("nz", TensorProto.INT64, None),
                   vi("ushp", TensorProto.INT64, None), vi("exp", TensorProto.FLOAT, None)],
                  [init("one", np.array([1], np.int64)), init("zero_s", np.array(0, np.int64)),
                   init("one_s", np.array(1, np.int64)), init("two", np.array([2], np.int64)),
                   init("zero", np.array([0], np.int64)), init("thr", np.array(3.0, np.float32)),
                   init("negone", np.array(-1.0, np.float32)), init("lo", np.array(-5.0, np.float32)),
                   init("hi", np.array(50.0, np.float32)), init("pads", np.array([0, 2, 0, 2], np.int64)),
                   init("flat", np.array([-1], np.int64))])
        for step, width in enumerate((16, 24, 32, 40)):
            x = torch.randn(2, width, generator=torch.Generator().manual_seed(step)).to(dev)
            flatv, nz, ushp, exp = m(x)
            print(f"shapes {width}: {tuple(flatv.shape)}, nonzero {tuple(nz.shape)}, {ushp.tolist()}, "
                  f"{exp.sum().item():.1f}")

    def resize():
        nodes = [
            helper.make_node("Shape", ["img"], ["shp"]),
            helper.make_node("Slice", ["shp", "two", "four"], ["hw"]),
            helper.make_node("Mul", ["hw", "two"], ["hw2"]),
            helper.make_node("Slice", ["shp", "zero", "two"], ["nc"]),
            helper.make_node("Concat", ["nc", "hw2"], ["sizes"], axis=0),
            helper.make_node("Resize", ["img", "", "", "sizes"], ["up_nn"], mode="nearest"),
            helper.make_node("Resize", ["img", "", "scales"], ["up_lin"], mode="linear"),
            helper.make_node("Resize", ["img", "", "scales"], ["up_cub"], mode="cubic"),
            helper.make_node("Add", ["up_nn", "up_lin"], ["s1"]),
            helper.make_node("Add", ["s1", "up_cub"], ["s2"]),
            helper.make_node("Tile", ["img", "reps"], ["tiled"]),
            helper.make_node("ReduceMean", ["tiled"], ["tm"], axes=[2, 3], keepdims=1),
            helper.make_node("Sub", ["s2", "tm"], ["out"]),
            helper.make_node("Split", ["out", "split"], ["a", "b"], axis=1),
            helper.make_node("Concat", ["b", "a"], ["sw"], axis=1),
            helper.make_node("DepthToSpace", ["sw"], ["d2s"], blocksize=2, mode="CRD"),
        ]
        m = model(nodes, [vi("img", TensorProto.FLOAT, [None, 4, None, None])], [vi("d2s", TensorProto.FLOAT, None)],
                  [init("two", np.array([2], np.int64)), init("four", np.array([4], np.int64)),
                   init("zero", np.array([0], np.int64)), init("scales", np.array([1, 1, 2, 2], np.float32)),
                   init("reps", np.array([1, 1, 2, 2], np.int64)), init("split", np.array([2, 2], np.int64))])
        for hw in (8, 12, 16):
            out = m(torch.randn(2, 4, hw, hw).to(dev))
            print(f"resize {hw}: {tuple(out.shape)}, {out.abs().mean().item():.3f}")

    def cnn():
        rng = np.random.default_rng(0)
        w = lambda *s: (rng.standard_normal(s) * 0.1).astype(np.float32)  # noqa: E731
        nodes = [
            helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
            helper.make_node("BatchNormalization", ["c1", "g1", "be1", "m1", "v1"], ["n1"]),
            helper.make_node("Relu", ["n1"], ["r1"]),
            helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
            helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c2"], ["r2"]),
            helper.make_node("GlobalAveragePool", ["r2"], ["gap"]),
            helper.make_node("Flatten", ["gap"], ["f"]),
            helper.make_node("Gemm", ["f", "wf", "bf"], ["logits"], transB=1),
        ]
        m = model(nodes, [vi("x", TensorProto.FLOAT, [None, 3, 16, 16])], [vi("logits", TensorProto.FLOAT, None)],
                  [init("w1", w(8, 3, 3, 3)), init("b1", w(8)), init("g1", np.ones(8, np.float32)),
                   init("be1", np.zeros(8, np.float32)), init("m1", np.zeros(8, np.float32)),
                   init("v1", np.ones(8, np.float32)), init("w2", w(16, 8, 3, 3)), init("b2", w(16)),
                   init("wf", w(5, 16)), init("bf", w(5))])
        m.train()
        opt = torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)
        for step in range(5):
            x = torch.randn(16, 3, 16, 16).to(dev)
            y = torch.randint(0, 5, (16,)).to(dev)
            loss = F.cross_entropy(m(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"cnn {step}: loss {loss.item():.3f}")

    def ops():
        nodes = [
            helper.make_node("ReduceSum", ["x", "axes1"], ["rs"], keepdims=1),
            helper.make_node("TopK", ["x", "k"], ["tv", "ti"], axis=1, largest=1),
            helper.make_node("CumSum", ["ti", "one_ax"], ["oh"]),
            helper.make_node("GatherElements", ["x", "ti"], ["ge"], axis=1),
            helper.make_node("Sum", ["x", "x", "x"], ["se"]),
            helper.make_node("Unsqueeze", ["x", "axes1"], ["xu"]),
            helper.make_node("Squeeze", ["xu", "axes1"], ["xs"]),
            helper.make_node("Split", ["xs", "split"], ["s1", "s2"], axis=1),
            helper.make_node("Einsum", ["s1", "s2"], ["ein"], equation="bi,bj->bij"),
            helper.make_node("LayerNormalization", ["x", "lnw", "lnb"], ["ln"], axis=-1),
            helper.make_node("Softmax", ["ln"], ["sm"], axis=-1),
            helper.make_node("GatherND", ["sm", "ndidx"], ["gnd"]),
            helper.make_node("ScatterND", ["sm", "ndidx", "gnd"], ["snd"]),
            helper.make_node("Mod", ["ti", "three"], ["mod"]),
            helper.make_node("Equal", ["mod", "zero_i"], ["eq"]),
            helper.make_node("Not", ["eq"], ["neq"]),
            helper.make_node("Cast", ["neq"], ["neqf"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["tv", "neqf"], ["masked"]),
            helper.make_node("ReduceMax", ["masked"], ["mx"], axes=[1], keepdims=0),
            helper.make_node("Min", ["mx", "cap"], ["mn"]),
            helper.make_node("Erf", ["mn"], ["erf"]),
            helper.make_node("IsNaN", ["erf"], ["nan"]),
        ]
        m = model(nodes, [vi("x", TensorProto.FLOAT, [4, 16])],
                  [vi("rs", TensorProto.FLOAT, None), vi("oh", TensorProto.INT64, None),
                   vi("se", TensorProto.FLOAT, None), vi("ein", TensorProto.FLOAT, None),
                   vi("snd", TensorProto.FLOAT, None), vi("nan", TensorProto.BOOL, None)],
                  [init("axes1", np.array([1], np.int64)), init("k", np.array([5], np.int64)),
                   init("one_ax", np.array(1, np.int64)),
                   init("split", np.array([8, 8], np.int64)), init("lnw", np.ones(16, np.float32)),
                   init("lnb", np.zeros(16, np.float32)), init("ndidx", np.array([[0, 1], [2, 3]], np.int64)),
                   init("three", np.array(3, np.int64)), init("zero_i", np.array(0, np.int64)),
                   init("cap", np.array(2.0, np.float32))])
        for step in range(3):
            outs = m(torch.randn(4, 16).to(dev))
            print(f"ops {step}: {[tuple(o.shape) for o in outs]}, {outs[0].sum().item():.3f}")

    return {"detect": detect, "shapes": shapes, "resize": resize, "ops": ops, "cnn": cnn}


# -- optimum-quanto: the README's `quantize(model, weights=qint8, activations=qint8)`, calibration under
#    `Calibration(momentum=)`, `freeze(model)`, float8 weights (`qfloat8`), `quantization_map`, and
#    quantisation-aware fine-tuning of a quantised MLP / CNN before freezing --------------------------------------

def quanto_quantize(dev):
    from optimum.quanto import Calibration, freeze, qfloat8, qint8, quantization_map, quantize

    def mlp():
        return nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.LayerNorm(64), nn.Linear(64, 64), nn.ReLU(),
                             nn.Linear(64, 10)).to(dev)

    def data(n=64, seed=0):
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(n, 32, generator=g)
        return x.to(dev), (x[:, :10].argmax(1)).to(dev)

    def weights_only(wq):
        def run():
            m = mlp()
            x, y = data()
            ref = m(x)
            quantize(m, weights=wq)
            freeze(m)
            for step in range(3):
                out = m(data(seed=step + 1)[0])
                print(f"weights {wq}: err {(m(x) - ref).abs().max().item():.4f}, out {out.mean().item():.4f}")
            print(sorted(quantization_map(m))[:3])
        return run

    def calibrate():
        m = mlp()
        quantize(m, weights=qint8, activations=qint8)
        with Calibration(momentum=0.9):
            for step in range(4):
                m(data(seed=10 + step)[0])
        freeze(m)
        x, y = data(seed=20)
        print(f"calibrated: acc {(m(x).argmax(1) == y).float().mean().item():.3f}")

    def qat():
        m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4)).to(dev)
        quantize(m, weights=qint8)
        opt = torch.optim.Adam(m.parameters(), lr=1e-3)
        for step in range(5):
            x = torch.randn(8, 3, 16, 16).to(dev)
            y = torch.randint(0, 4, (8,)).to(dev)
            loss = F.cross_entropy(m(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"qat {step}: {loss.item():.3f}")
        freeze(m)

    return {"int8_weights": weights_only(qint8), "float8_weights": weights_only(qfloat8), "calibrate": calibrate,
            "qat": qat}


# -- sahi: the docs' `AutoDetectionModel.from_pretrained(model_type='torchvision', model=, device=,
#    confidence_threshold=)` around a torchvision detector with random weights (Faster R-CNN with a MobileNet-v3
#    backbone), `get_prediction` and `get_sliced_prediction(image, model, slice_height=, slice_width=,
#    overlap_*_ratio=, postprocess_type='GREEDYNMM' / 'NMS', postprocess_match_metric='IOS' / 'IOU')` on
#    synthetic images, the results' `object_prediction_list` and `to_coco_annotations()` ---------------------------

def sahi_slices(dev):
    import torchvision
    from sahi import AutoDetectionModel
    from sahi.predict import get_prediction, get_sliced_prediction

    def image(seed, h=256, w=384):
        rng = np.random.default_rng(seed)
        img = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
        for _ in range(6):  # a few bright rectangles
            y, x = rng.integers(0, h - 40), rng.integers(0, w - 40)
            img[y:y + rng.integers(16, 40), x:x + rng.integers(16, 40)] = rng.integers(0, 256, 3)
        return img

    def detector(kind):
        torch.manual_seed(0)
        net = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None, num_classes=5, box_score_thresh=0.0, box_detections_per_img=50)
        return AutoDetectionModel.from_pretrained(model_type="torchvision", model=net.eval(), device=str(dev),
                                                  confidence_threshold=0.05,
                                                  category_mapping={str(i): f"c{i}" for i in range(5)})

    def sliced(postprocess, metric):
        def run():
            det = detector("frcnn")
            for step in range(2):
                res = get_sliced_prediction(image(step), det, slice_height=128, slice_width=128,
                                            overlap_height_ratio=0.2, overlap_width_ratio=0.2,
                                            postprocess_type=postprocess, postprocess_match_metric=metric,
                                            postprocess_match_threshold=0.5, verbose=0)
                ann = res.to_coco_annotations()
                print(f"{postprocess}/{metric} {step}: {len(res.object_prediction_list)} predictions, {len(ann)}")
        return run

    def standard():
        det = detector("frcnn")
        for step in range(3):
            res = get_prediction(image(10 + step), det)
            print(f"standard {step}: {len(res.object_prediction_list)}")

    return {"greedynmm_ios": sliced("GREEDYNMM", "IOS"), "nms_iou": sliced("NMS", "IOU"), "standard": standard}


# -- score_models: the README's `ScoreModel(model=MLP / NCSNpp, sigma_min=, sigma_max= | beta_min=, beta_max=,
#    device=)`, `fit(dataset, epochs=, batch_size=, learning_rate=)`, `sample(shape=, steps=)` (Euler-Maruyama)
#    and `log_likelihood(x, ode_steps=)`; an `EnergyModel` on the same data ----------------------------------------

def score_models_sde(dev):
    from score_models import MLP, EnergyModel, NCSNpp, ScoreModel

    class Points(torch.utils.data.Dataset):
        def __init__(self, n=256, seed=0):
            g = torch.Generator().manual_seed(seed)
            c = torch.tensor([[2.0, 0.0], [-2.0, 0.0], [0.0, 2.0]])
            self.x = (c[torch.randint(0, 3, (n,), generator=g)] + 0.3 * torch.randn(n, 2, generator=g)).to(dev)

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            return self.x[i]

    class Images(torch.utils.data.Dataset):
        def __init__(self, n=32):
            self.x = torch.rand(n, 1, 16, 16).to(dev) * 2 - 1

        def __len__(self):
            return len(self.x)

        def __getitem__(self, i):
            return self.x[i]

    def vesde():
        net = MLP(dimensions=2, units=64, layers=2)
        model = ScoreModel(model=net, sigma_min=1e-2, sigma_max=10.0, device=dev)
        losses = model.fit(Points(), epochs=3, batch_size=64, learning_rate=1e-3, ema_decay=0.99)
        x = model.sample(shape=[64, 2], steps=20)
        ll = model.log_likelihood(Points(8, seed=1).x, ode_steps=10)
        print(f"vesde: loss {losses[-1]:.3f}, samples {x.std().item():.3f}, ll {ll.mean().item():.3f}")

    def vpsde():
        net = MLP(dimensions=2, units=64, layers=2)
        model = ScoreModel(model=net, beta_min=0.1, beta_max=20.0, device=dev)
        losses = model.fit(Points(seed=2), epochs=3, batch_size=64, learning_rate=1e-3, ema_decay=0.99)
        x = model.sample(shape=[64, 2], steps=20)
        print(f"vpsde: loss {losses[-1]:.3f}, samples {x.mean().item():.3f}")

    def ncsnpp():
        net = NCSNpp(channels=1, dimensions=2, nf=16, ch_mult=(1, 2), num_res_blocks=1, attention=False)
        model = ScoreModel(model=net, sigma_min=1e-2, sigma_max=20.0, device=dev)
        losses = model.fit(Images(), epochs=2, batch_size=8, learning_rate=1e-4)
        x = model.sample(shape=[4, 1, 16, 16], steps=10)
        print(f"ncsnpp: loss {losses[-1]:.3f}, samples {x.abs().mean().item():.3f}")

    def energy():
        net = MLP(dimensions=2, units=64, layers=2, nn_is_energy=True)
        model = EnergyModel(model=net, sigma_min=1e-2, sigma_max=10.0, device=dev)
        losses = model.fit(Points(seed=3), epochs=2, batch_size=64, learning_rate=1e-3)
        x = model.sample(shape=[32, 2], steps=10)
        print(f"energy: loss {losses[-1]:.3f}, samples {x.std().item():.3f}")

    return {"vesde": vesde, "vpsde": vpsde, "ncsnpp": ncsnpp, "energy": energy}


# -- smalldiffusion: the README's recipe (`Swissroll`, a `DataLoader`, `TimeInputMLP`, `ScheduleLogLinear`,
#    `training_loop(loader, model, schedule, epochs=)` iterated for its losses, `samples(model,
#    schedule.sample_sigmas(20), gam=)`), other schedules (DDPM, cosine, sigmoid, flow; `sample_batch`), the
#    `IdealDenoiser` of a dataset, and a small `DiT` on images with `PredV`; an `Accelerator` on the device ------

def smalldiffusion_sample(dev):
    import smalldiffusion as sd
    from accelerate import Accelerator
    from torch.utils.data import DataLoader

    def acc():
        return Accelerator(cpu=dev.type != "cuda")

    def swissroll():
        loader = DataLoader(sd.Swissroll(np.pi / 2, 5 * np.pi, 100), batch_size=256)
        model = sd.TimeInputMLP(hidden_dims=(16, 64, 64, 16)).to(dev)
        schedule = sd.ScheduleLogLinear(N=200, sigma_min=0.005, sigma_max=10)
        losses = []
        for ns in sd.training_loop(loader, model, schedule, accelerator=acc(), epochs=30, lr=1e-3):
            losses.append(ns.loss.item())
        *xt, x0 = sd.samples(model, schedule.sample_sigmas(20), gam=2, batchsize=128, accelerator=acc())
        print(f"swissroll: loss {losses[-1]:.3f}, {len(xt)} steps, x0 {x0.std().item():.3f}")

    def schedules():
        loader = DataLoader(sd.Swissroll(np.pi / 2, 5 * np.pi, 100), batch_size=256)
        for name, schedule in (("ddpm", sd.ScheduleDDPM(N=200)), ("cosine", sd.ScheduleCosine(N=200)),
                               ("sigmoid", sd.ScheduleSigmoid(N=200))):
            model = sd.TimeInputMLP(hidden_dims=(16, 64, 16)).to(dev)
            for _ in sd.training_loop(loader, model, schedule, accelerator=acc(), epochs=5):
                pass
            sig = schedule.sample_batch(torch.zeros(8, 2).to(dev))
            for gam, mu in ((1.0, 0.0), (2.0, 0.5)):
                *_, x0 = sd.samples(model, schedule.sample_sigmas(10), gam=gam, mu=mu, batchsize=64,
                                    accelerator=acc())
                print(f"{name} gam {gam} mu {mu}: {x0.abs().mean().item():.3f}, sigma {sig.mean().item():.3f}")

    def ideal():
        ds = sd.Swissroll(np.pi / 2, 5 * np.pi, 100)
        model = sd.IdealDenoiser(ds).to(dev)
        schedule = sd.ScheduleLogLinear(N=200, sigma_min=0.01, sigma_max=10)
        *_, x0 = sd.samples(model, schedule.sample_sigmas(15), gam=1, batchsize=64, accelerator=acc())
        print(f"ideal: {x0.std().item():.3f}")

    def dit():
        x = (torch.rand(64, 1, 8, 8) * 2 - 1)
        loader = DataLoader(x, batch_size=16)
        model = sd.PredV(sd.DiT)(in_dim=8, channels=1, patch_size=2, depth=2, head_dim=16, num_heads=2).to(dev)
        schedule = sd.ScheduleCosine(N=100)
        for ns in sd.training_loop(loader, model, schedule, accelerator=acc(), epochs=2, lr=1e-3):
            last = ns.loss.item()
        *_, x0 = sd.samples(model, schedule.sample_sigmas(8), gam=1.5, batchsize=4, accelerator=acc())
        print(f"dit: loss {last:.3f}, {tuple(x0.shape)}")

    return {"swissroll": swissroll, "schedules": schedules, "ideal": ideal, "dit": dit}


# -- supar: its structured distributions on random scores on the device, as their docstrings show
#    (`DependencyCRF`, `MatrixTree`, `Dependency2oCRF`, `LinearChainCRF`, `ConstituencyCRF` with `lens`:
#    `log_prob`, `marginals`, `argmax`, `kmax`, `entropy`, `max`, `kl`, `cross_entropy`), `supar.structs.fn.mst` and
#    the `DependencyMFVI` / `DependencyLBP` modules, `AttachmentMetric` / `SpanMetric`, a biaffine arc scorer trained
#    against random gold trees ---------------------------------------------------------------------------------

def supar_structs(dev):
    from supar import ConstituencyCRF, Dependency2oCRF, DependencyCRF, LinearChainCRF, MatrixTree
    from supar.structs import DependencyLBP, DependencyMFVI
    from supar.structs.fn import mst
    from supar.utils.metric import AttachmentMetric, SpanMetric

    def gold_trees(lens, seq_len, seed):
        g = torch.Generator().manual_seed(seed)
        arcs = torch.zeros(len(lens), seq_len, dtype=torch.long)
        for b, n in enumerate(lens.tolist()):
            for i in range(1, n + 1):  # a random projective tree: each word's head is an earlier word (or the root)
                arcs[b, i] = torch.randint(0, i, (1,), generator=g).item()
        return arcs

    def dependency():
        bs, seq_len = 4, 10
        lens = torch.tensor([9, 7, 5, 8])
        arcs = gold_trees(lens, seq_len, 0).to(dev)
        lens = lens.to(dev)
        for cls in (DependencyCRF, MatrixTree):
            scores = torch.randn(bs, seq_len, seq_len).to(dev).requires_grad_()
            opt = torch.optim.Adam([scores], lr=0.1)
            for step in range(4):
                s = cls(scores, lens)
                loss = -s.log_prob(arcs).sum() / lens.sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
                s = cls(scores.detach(), lens)
                metric = AttachmentMetric()
                pred = s.argmax
                mask = torch.arange(seq_len).to(dev).le(lens.unsqueeze(1))
                mask[:, 0] = False
                metric(pred, pred, arcs, arcs, mask)
                print(f"{cls.__name__} {step}: {loss.item():.3f}, UAS {metric.uas:.3f}, "
                      f"entropy {s.entropy.mean().item():.3f}, max {s.max.mean().item():.3f}")
            s2 = cls(torch.randn(bs, seq_len, seq_len).to(dev), lens)
            print(f"kl {s.kl(s2).mean().item():.3f}, marginals {s.marginals.sum().item():.1f}")
            if cls is DependencyCRF:
                print(f"kmax {tuple(s.kmax(3).shape)}")
        s2o = Dependency2oCRF((torch.randn(bs, seq_len, seq_len).to(dev),
                               torch.randn(bs, seq_len, seq_len, seq_len).to(dev)), lens)
        print(f"2o: {s2o.log_partition.mean().item():.3f}, {tuple(s2o.argmax.shape)}")

    def chains():
        bs, seq_len, n_tags = 4, 12, 5
        lens = torch.tensor([12, 9, 6, 11]).to(dev)
        tags = torch.randint(0, n_tags, (bs, seq_len)).to(dev)
        emit = torch.randn(bs, seq_len, n_tags).to(dev).requires_grad_()
        trans = torch.randn(n_tags + 1, n_tags + 1).to(dev).requires_grad_()
        opt = torch.optim.Adam([emit, trans], lr=0.1)
        for step in range(4):
            s = LinearChainCRF(emit, trans, lens)
            loss = -s.log_prob(tags).sum() / lens.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"chain {step}: {loss.item():.3f}, {tuple(s.argmax.shape)}, topk {tuple(s.topk(2).shape)}")
        metric = SpanMetric()
        for step in range(3):
            clens = torch.tensor([8, 6, 7]).to(dev)
            scores = torch.randn(3, 9, 9).to(dev)
            c = ConstituencyCRF(scores, clens)
            chart = c.argmax
            spans = [[(i, j, "X") for i, j in sent] for sent in chart]
            metric(spans, spans)
            print(f"constituency {step}: {c.log_partition.mean().item():.3f}, F {metric.uf:.3f}, "
                  f"{c.marginals.sum().item():.2f}")

    def decode():
        bs, seq_len, d = 6, 12, 32
        lens = torch.tensor([11, 8, 10, 6, 11, 9])
        arcs = gold_trees(lens, seq_len, 3).to(dev)
        lens = lens.to(dev)
        words = torch.randn(bs, seq_len, d).to(dev)
        dep, head = nn.Linear(d, d).to(dev), nn.Linear(d, d).to(dev)
        opt = torch.optim.Adam([*dep.parameters(), *head.parameters()], lr=1e-2)
        mask = torch.arange(seq_len).to(dev).le(lens.unsqueeze(1))
        mask[:, 0] = False
        mfvi, lbp = DependencyMFVI(max_iter=3), DependencyLBP(max_iter=3)
        for step in range(5):
            s_arc = dep(words) @ head(words).transpose(1, 2)
            loss = -DependencyCRF(s_arc, lens).log_prob(arcs).sum() / lens.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                pred = mst(s_arc, mask)
                metric = AttachmentMetric()
                metric(pred, pred, arcs, arcs, mask)
                s_sib = torch.randn(bs, seq_len, seq_len, seq_len).to(dev)
                m1 = mfvi([s_arc, s_sib], mask)
                m2 = lbp([s_arc, s_sib], mask)
            print(f"decode {step}: {loss.item():.3f}, UAS {metric.uas:.3f}, mfvi {m1[1].sum().item():.2f}, "
                  f"lbp {m2[1].sum().item():.2f}")

    def parsers():
        from supar.models import BiaffineDependencyModel, CRFDependencyModel, VIDependencyModel
        bs, seq_len, n_words, n_rels, n_tags = 6, 12, 200, 8, 10
        lens = torch.tensor([11, 8, 10, 6, 11, 9])
        arcs = gold_trees(lens, seq_len, 4).to(dev)
        rels = torch.randint(0, n_rels, (bs, seq_len)).to(dev)
        pos = torch.arange(seq_len).unsqueeze(0)
        words = torch.where(pos.le(lens.unsqueeze(1)), torch.randint(2, n_words, (bs, seq_len)),
                            torch.zeros(bs, seq_len, dtype=torch.long)).to(dev)
        tags = torch.randint(1, n_tags, (bs, seq_len)).to(dev) * words.ne(0)
        mask = words.ne(0)
        mask[:, 0] = False
        kw = dict(n_words=n_words, n_rels=n_rels, n_tags=n_tags, feat=["tag"], n_embed=32, n_pretrained=32,
                  n_feat_embed=16, n_lstm_hidden=32, n_lstm_layers=1, n_arc_mlp=32, n_rel_mlp=16, embed_dropout=0.1,
                  encoder_dropout=0.1, mlp_dropout=0.1)
        for cls in (BiaffineDependencyModel, CRFDependencyModel, VIDependencyModel):
            model = cls(**kw, tree=True, proj=False).to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=2e-3)
            for step in range(3):
                model.train()
                scores = model(words, [tags])
                if cls is VIDependencyModel:
                    loss, _ = model.loss(*scores, arcs, rels, mask)
                    s_arc, s_rel = scores[0], scores[2]
                else:
                    s_arc, s_rel = scores
                    loss = model.loss(s_arc, s_rel, arcs, rels, mask)
                    loss = loss[0] if isinstance(loss, tuple) else loss
                opt.zero_grad()
                loss.backward()
                opt.step()
                model.eval()
                with torch.no_grad():
                    scores = model(words, [tags])
                    s_arc, s_rel = (scores[0], scores[2]) if cls is VIDependencyModel else scores
                    metric = AttachmentMetric()
                    for proj in (False, True):
                        arc_preds, rel_preds = model.decode(s_arc, s_rel, mask, tree=True, proj=proj)
                        metric(arc_preds, rel_preds, arcs, rels, mask)
                print(f"{cls.__name__} {step}: {loss.item():.3f}, UAS {metric.uas:.3f} LAS {metric.las:.3f}")

    def vi():
        from supar.structs import ConstituencyLBP, ConstituencyMFVI, SemanticDependencyLBP, SemanticDependencyMFVI
        bs, seq_len = 4, 10
        lens = torch.tensor([9, 7, 8, 5]).to(dev)
        mask = torch.arange(seq_len).to(dev).le(lens.unsqueeze(1))
        mask[:, 0] = False
        mask2 = mask.unsqueeze(1) & mask.unsqueeze(2)
        for step in range(3):
            s_edge = torch.randn(bs, seq_len, seq_len).to(dev).requires_grad_()
            s_sib = torch.randn(bs, seq_len, seq_len, seq_len).to(dev)
            s_cop = torch.randn(bs, seq_len, seq_len, seq_len).to(dev)
            s_grd = torch.randn(bs, seq_len, seq_len, seq_len).to(dev)
            gold = torch.randint(0, 2, (bs, seq_len, seq_len)).to(dev) * mask2
            for vcls in (SemanticDependencyMFVI, SemanticDependencyLBP):
                loss, marg = vcls(max_iter=3)([s_edge, s_sib, s_cop, s_grd], mask2, gold)
                loss.backward()
                print(f"{vcls.__name__} {step}: {loss.item():.3f}, {marg.sum().item():.2f}")
            span_mask = mask2.triu(1)
            s_span = torch.randn(bs, seq_len, seq_len).to(dev)
            s_pair = torch.randn(bs, seq_len, seq_len, seq_len).to(dev)
            charts = torch.randint(0, 2, (bs, seq_len, seq_len)).to(dev).bool() & span_mask
            for ccls in (ConstituencyMFVI, ConstituencyLBP):
                loss, marg = ccls(max_iter=3)([s_span, s_pair], span_mask, charts)
                print(f"{ccls.__name__} {step}: {loss.item():.3f}, {marg.sum().item():.2f}")

    return {"dependency": dependency, "chains": chains, "decode": decode, "parsers": parsers, "vi": vi}


# -- torch_geometric_signed_directed: its docs' examples on its synthetic generators: a signed SBM (`SSBM`) as
#    `SignedData`, `link_class_split(task='sign', device=)`, `SGCN` / `SDGNN` / `SNEA` trained by their `loss()`
#    with `link_sign_prediction_logistic_function` on the embeddings; a directed SBM (`DSBM`) as `DirectedData`,
#    `node_class_split`, `MagNet_node_classification` and `DiGCN_node_classification` (`get_appr_directed_adj`)
#    trained a few epochs; `DIGRAC_node_clustering` with `Prob_Imbalance_Loss`, `in_out_degree` features;
#    `MagNet_link_prediction` on a direction split; `MSGNN_node_classification` and `SSSNET_node_clustering` on a
#    signed SBM; its operators (`extract_network`, magnetic and magnetic signed Laplacians, second-order and fast
#    approximate PageRank adjacencies, `directed_features_in_out`, `create_spectral_features`) and `DGCN` ----------

def tgsd_graphs(dev):
    import torch_geometric_signed_directed as T
    from torch_geometric_signed_directed.data import DirectedData, SignedData
    from torch_geometric_signed_directed.utils import (
        in_out_degree,
        link_class_split,
        link_sign_prediction_logistic_function,
        node_class_split,
    )

    def signed(cls, **kw):
        def run():
            np.random.seed(0)
            torch.manual_seed(0)
            (a_p, a_n), labels = T.SSBM(n=200, k=3, pin=0.1, etain=0.1)
            data = SignedData(A=(a_p - a_n).tocoo())
            link_data = link_class_split(data, prob_val=0.1, prob_test=0.1, task="sign", maintain_connect=False,
                                         device=dev)
            split = link_data[0]
            edge_index = split["train"]["edges"]
            edge_sign = split["train"]["label"] * 2 - 1
            edge_index_s = torch.cat([edge_index, edge_sign.unsqueeze(-1)], dim=-1).to(dev)
            model = cls(data.num_nodes, edge_index_s, 16, 16, **kw).to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
            for epoch in range(5):
                model.train()
                opt.zero_grad()
                loss = model.loss()
                loss.backward()
                opt.step()
                print(f"{cls.__name__} {epoch}: {loss.item():.4f}")
            model.eval()
            with torch.no_grad():
                z = model()
            emb = z.cpu().numpy()
            train_x = split["train"]["edges"].cpu().numpy()
            test_x = split["test"]["edges"].cpu().numpy()
            res = link_sign_prediction_logistic_function(emb, train_x, split["train"]["label"].cpu().numpy(),
                                                         test_x, split["test"]["label"].cpu().numpy())
            print(f"{cls.__name__}: acc {res[0]:.3f}, auc {res[-1]:.3f}")
        return run

    def directed(kind):
        def run():
            np.random.seed(1)
            torch.manual_seed(1)
            n, k = 240, 3
            f = np.array([[0.5, 0.8, 0.2], [0.2, 0.5, 0.8], [0.8, 0.2, 0.5]])
            a, labels = T.DSBM(N=n, K=k, p=0.05, F=f)
            a = a.tocoo()
            edge_index = torch.tensor(np.vstack([a.row, a.col]), dtype=torch.long)
            edge_weight = torch.tensor(a.data, dtype=torch.float)
            data = DirectedData(edge_index=edge_index, edge_weight=edge_weight, y=torch.tensor(labels).long())
            data = node_class_split(data, train_size_per_class=20, val_size_per_class=10, test_size_per_class=30,
                                    seed_size_per_class=5)
            data.x = in_out_degree(data.edge_index, size=n)
            data = data.to(dev)
            train_mask = data.train_mask[:, 0]
            test_mask = data.test_mask[:, 0]
            if kind == "magnet":
                model = T.MagNet_node_classification(num_features=2, hidden=8, label_dim=k, K=1, layer=2,
                                                     q=0.25).to(dev)
                fwd = lambda: model(data.x, data.x, data.edge_index, data.edge_weight)  # noqa: E731
            elif kind == "digcn":
                ei, ew = T.get_appr_directed_adj(0.1, data.edge_index, n, data.x.dtype, data.edge_weight)
                model = T.DiGCN_node_classification(num_features=2, hidden=8, label_dim=k).to(dev)
                fwd = lambda: model(data.x, ei, ew)  # noqa: E731
            else:
                model = T.DIGRAC_node_clustering(num_features=2, hidden=8, nclass=k, fill_value=0.5,
                                                 dropout=0.5, hop=2).to(dev)
                loss_fn = T.Prob_Imbalance_Loss(F=k)
                fwd = lambda: model(data.edge_index, data.edge_weight, data.x)  # noqa: E731
            opt = torch.optim.Adam(model.parameters(), lr=0.01)
            for epoch in range(5):
                model.train()
                opt.zero_grad()
                out = fwd()
                if kind == "digrac":
                    loss = loss_fn(out[1], torch.sparse_coo_tensor(data.edge_index, data.edge_weight, (n, n)), k,
                                   "vol_sum", "std")
                else:
                    loss = F.nll_loss(out[train_mask], data.y[train_mask])
                loss.backward()
                opt.step()
                model.eval()
                with torch.no_grad():
                    pred = fwd()
                    pred = (pred[1] if kind == "digrac" else pred).argmax(dim=1)
                acc = (pred[test_mask] == data.y[test_mask]).float().mean().item()
                print(f"{kind} {epoch}: loss {loss.item():.4f}, acc {acc:.3f}")
        return run

    def magnet_link():
        np.random.seed(2)
        torch.manual_seed(2)
        n = 200
        f = np.array([[0.5, 0.8], [0.2, 0.5]])
        a, _ = T.DSBM(N=n, K=2, p=0.06, F=f)
        a = a.tocoo()
        data = DirectedData(edge_index=torch.tensor(np.vstack([a.row, a.col]), dtype=torch.long),
                            edge_weight=torch.tensor(a.data, dtype=torch.float))
        link_data = link_class_split(data, prob_val=0.15, prob_test=0.05, task="direction", device=dev)
        model = T.MagNet_link_prediction(q=0.25, K=1, num_features=2, hidden=16, label_dim=2).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        split = link_data[0]
        edge_index, edge_weight = split["graph"], split["weights"]
        x = in_out_degree(edge_index, size=n).to(dev)
        for epoch in range(5):
            q, y = split["train"]["edges"], split["train"]["label"]
            out = model(x, x.clone(), edge_index=edge_index, query_edges=q, edge_weight=edge_weight)
            loss = F.nll_loss(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                qt, yt = split["test"]["edges"], split["test"]["label"]
                acc = (model(x, x.clone(), edge_index=edge_index, query_edges=qt,
                             edge_weight=edge_weight).argmax(1) == yt).float().mean().item()
            print(f"magnet link {epoch}: {loss.item():.4f}, acc {acc:.3f}")

    def signed_nodes(kind):
        def run():
            np.random.seed(3)
            torch.manual_seed(3)
            (a_p, a_n), labels = T.SSBM(n=300, k=3, pin=0.08, etain=0.1, size_ratio=1)
            data = SignedData(A=(a_p - a_n).tocoo(), y=torch.tensor(labels).long())
            data = node_class_split(data, train_size_per_class=20, val_size_per_class=10, test_size_per_class=30,
                                    seed_size_per_class=5)
            data.separate_positive_negative()
            data = data.to(dev)
            n, k = data.num_nodes, 3
            x = in_out_degree(data.edge_index, size=n, signed=True, edge_weight=data.edge_weight).to(dev)
            train_mask = data.train_mask[:, 0]
            if kind == "msgnn":
                model = T.MSGNN_node_classification(num_features=x.shape[1], hidden=8, label_dim=k, K=1,
                                                    q=0.25).to(dev)
                fwd = lambda: model(x, x, data.edge_index, data.edge_weight)  # noqa: E731
            else:
                model = T.SSSNET_node_clustering(nfeat=x.shape[1], hidden=8, nclass=k, dropout=0.5, hop=2,
                                                 fill_value=0.5, directed=True).to(dev)
                fwd = lambda: model(data.edge_index_p, data.edge_weight_p, data.edge_index_n,  # noqa: E731
                                    data.edge_weight_n, x)
            opt = torch.optim.Adam(model.parameters(), lr=0.01)
            for epoch in range(5):
                out = fwd()
                logp = out[0] if isinstance(out, tuple) else out
                loss = F.nll_loss(logp[train_mask], data.y[train_mask])
                opt.zero_grad()
                loss.backward()
                opt.step()
                print(f"{kind} {epoch}: {loss.item():.4f}")
        return run

    def operators():
        np.random.seed(4)
        torch.manual_seed(4)
        n = 200
        f = np.array([[0.5, 0.7], [0.3, 0.5]])
        a, labels = T.DSBM(N=n, K=2, p=0.06, F=f)
        a, labels = T.extract_network(a.tocsr(), labels, lowest_degree=2)
        a = a.tocoo()
        n = a.shape[0]
        ei = torch.tensor(np.vstack([a.row, a.col]), dtype=torch.long).to(dev)
        ew = torch.tensor(a.data, dtype=torch.float).to(dev)
        for q in (0.1, 0.25):
            lap = T.get_magnetic_Laplacian(ei, ew, normalization="sym", num_nodes=n, q=q, return_lambda_max=True)
            sl = T.get_magnetic_signed_Laplacian(ei, ew * torch.where(torch.rand(len(ew)).to(dev) < 0.3, -1.0, 1.0),
                                                 normalization="sym", num_nodes=n, q=q, return_lambda_max=True)
            e2, w2 = T.get_second_directed_adj(ei, n, torch.float, ew)
            e3, w3 = T.cal_fast_appr(0.1, ei, n, torch.float, ew)
            feats = T.directed_features_in_out(ei, n, ew, device=dev)
            pos, neg = ei[:, ::2], ei[:, 1::2]
            spec = T.create_spectral_features(pos, neg, n, 8)
            print(f"operators {q}: lambda {float(lap[-1]):.3f} {float(sl[-1]):.3f}, second {w2.sum().item():.2f}, "
                  f"appr {w3.sum().item():.2f}, {len(feats)}, spectral {tuple(spec.shape)}")
        x = in_out_degree(ei, size=n).to(dev)
        y = torch.tensor(labels).long().to(dev)
        model = T.DGCN_node_classification(num_features=2, hidden=8, label_dim=2).to(dev)
        und, e_in, w_in, e_out, w_out = T.directed_features_in_out(ei, n, ew, device=dev)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        for epoch in range(4):
            out = model(x, und, e_in, e_out, w_in, w_out)
            loss = F.nll_loss(out, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            print(f"dgcn {epoch}: {loss.item():.4f}")

    return {"sgcn": signed(T.SGCN, layer_num=2, lamb=5), "sdgnn": signed(T.SDGNN, layer_num=2),
            "operators": operators,
            "snea": signed(T.SNEA, layer_num=2), "magnet": directed("magnet"), "digcn": directed("digcn"),
            "digrac": directed("digrac"), "magnet_link": magnet_link, "msgnn": signed_nodes("msgnn"),
            "sssnet": signed_nodes("sssnet")}


# -- torchsparsegradutils: its documented solvers on random sparse systems made on the device (`rand_sparse(...,
#    well_conditioned=True, device=)`, COO and CSR): `sparse_generic_solve` with `linear_cg` / `bicgstab` / `minres`
#    and gradients to A and B, `sparse_solve`, `linear_cg(..., return_info=True)`, `bicgstab(settings=)`, `minres`
#    with shifts, `lsmr`, `sparse_triangular_solve`, `sparse_generic_lstsq`, `sparse_mm`, `sparse_logsumexp`,
#    `gather_mm` / `segment_mm`, and its statistical tests (`mean_hotelling_t2_test`, `cov_nagao_test`) ------------

def tsgu_solve(dev):
    import torchsparsegradutils as tsgu
    from torchsparsegradutils import utils as U

    def spd(n, nnz, seed, layout=torch.sparse_coo):
        torch.manual_seed(seed)
        off = U.rand_sparse((n, n), nnz, layout=torch.sparse_coo, device=dev).coalesce()
        off = (off + off.t()).coalesce() * 0.5  # symmetric, made diagonally dominant: positive definite
        diag = torch.sparse.sum(off.abs(), 1).to_dense() + 1.0
        idx = torch.arange(n).to(dev)
        a = (off + torch.sparse_coo_tensor(torch.stack([idx, idx]), diag, (n, n))).coalesce()
        return a.to_sparse_csr() if layout == torch.sparse_csr else a

    def generic():
        n = 300
        for name, solve in (("cg", U.linear_cg), ("bicgstab", U.bicgstab), ("minres", U.minres)):
            for layout in (torch.sparse_coo, torch.sparse_csr):
                a = spd(n, 1500, 0, layout)
                vals = a.values().clone().requires_grad_() if layout == torch.sparse_coo else None
                b = torch.randn(n, 2).to(dev).requires_grad_()
                if vals is not None:
                    a = torch.sparse_coo_tensor(a.indices(), vals, a.shape).coalesce()
                x = tsgu.sparse_generic_solve(a, b, solve=solve)
                loss = (x ** 2).sum()
                loss.backward()
                print(f"{name} {layout}: {loss.item():.4f}, grad b {b.grad.norm().item():.4f}")

    def krylov():
        n = 400
        a = spd(n, 2400, 1)
        rhs = torch.randn(n, 3).to(dev)
        for step in range(3):
            x, info = U.linear_cg(a, rhs, tolerance=1e-6, max_iter=200, return_info=True)
            xb = U.bicgstab(a, rhs[:, 0], settings=U.BICGSTABSettings(abstol=1e-8, reltol=1e-6))
            xm = U.minres(a, rhs, shifts=torch.tensor([0.0, 0.5]).to(dev))
            rect = U.rand_sparse((n + 100, n), 3000, device=dev)
            xl, it = U.lsmr(rect, torch.randn(n + 100).to(dev), maxiter=100)
            print(f"krylov {step}: cg {(a @ x - rhs).norm().item():.2e}, bicg {(a @ xb - rhs[:, 0]).norm().item():.2e}"
                  f", minres {tuple(xm.shape)}, lsmr {it} {xl.norm().item():.3f}")
            rhs = rhs + 0.1 * torch.randn(n, 3).to(dev)

    def tri_lstsq():
        n = 200
        for step, upper in enumerate((True, False)):
            torch.manual_seed(step)
            t = U.rand_sparse_tri((n, n), 1200, upper=upper, device=dev, well_conditioned=True)
            b = torch.randn(n, 4).to(dev).requires_grad_()
            x = tsgu.sparse_triangular_solve(t, b, upper=upper)
            xt = tsgu.sparse_triangular_solve(t, b, upper=upper, transpose=True)
            (x.sum() + xt.sum()).backward()
            tall = U.rand_sparse((n + 80, n), 2000, device=dev)
            ls = tsgu.sparse_generic_lstsq(tall, torch.randn(n + 80, 1).to(dev))
            m = tsgu.sparse_mm(tall, torch.randn(n, 5).to(dev))
            lse = tsgu.sparse_logsumexp(tall, dim=1)
            gm = tsgu.gather_mm(torch.randn(50, 8).to(dev), torch.randn(4, 8, 6).to(dev),
                                torch.randint(0, 4, (50,)).to(dev))
            sm = tsgu.segment_mm(torch.randn(30, 8).to(dev), torch.randn(3, 8, 6).to(dev),
                                 torch.tensor([10, 15, 5]).to(dev))
            print(f"tri {upper}: {x.norm().item():.3f} {b.grad.norm().item():.3f}, lstsq {ls.norm().item():.3f}, "
                  f"mm {m.shape}, lse {lse.to_dense().mean().item():.3f}, {gm.shape}, {sm.shape}")

    def stats():
        p, n = 5, 400
        for step in range(3):
            x = torch.randn(n, p).to(dev) + 0.05 * step
            mean, cov = x.mean(0), torch.cov(x.t())
            t2 = U.mean_hotelling_t2_test(mean[None], torch.zeros(1, p).to(dev), cov[None], n)
            nag = U.cov_nagao_test(cov[None], torch.eye(p).to(dev)[None], n)
            print(f"stats {step}: t2 {t2[0]} {t2[1]} {t2[2]}, nagao {nag[0]} {nag[1]} {nag[2]}")

    def blocks():
        for step in range(3):
            mats = [U.rand_sparse((20 + 10 * i, 20 + 10 * i), 80 + 20 * i, device=dev, well_conditioned=True)
                    for i in range(3)]
            bd = U.sparse_block_diag(*mats)
            parts = U.sparse_block_diag_split(bd, *[tuple(m.shape) for m in mats])
            csr = [U.convert_coo_to_csr(m) for m in mats[:1] * 3]
            stacked = U.stack_csr(csr)
            eye = U.sparse_eye((3, 30, 30), layout=torch.sparse_csr, values_dtype=torch.float32, device=dev)
            x = tsgu.sparse_mm(bd, torch.randn(bd.shape[1], 2).to(dev))
            rows, cols, perm = U.convert_coo_to_csr_indices_values(mats[0].coalesce().indices(), mats[0].shape[0])
            print(f"blocks {step}: {tuple(bd.shape)}, {[tuple(p.shape) for p in parts]}, {tuple(stacked.shape)}, "
                  f"{tuple(eye.shape)}, {x.norm().item():.3f}, {tuple(rows.shape)}")

    return {"generic": generic, "krylov": krylov, "tri_lstsq": tri_lstsq, "stats": stats, "blocks": blocks}


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


def _accuracy_shim(root: Path) -> None:
    """imbalanced-semi-self's `utils.accuracy` flattens a row slice of its transposed `correct` matrix with `.view(-1)`,
    which torch has refused since 1.x for a non-contiguous slice (on the GPU too); its module is imported from the
    repository's root first and `accuracy` answered by the same arithmetic with `.reshape(-1)` (so that train.py's
    `from utils import *` finds it)."""
    _forget({"utils"})
    sys.path.insert(0, str(root))
    try:
        import utils
    finally:
        sys.path.remove(str(root))

    def accuracy(output, target, topk=(1,)):
        with torch.no_grad():
            maxk = max(topk)
            batch_size = target.size(0)
            _, pred = output.topk(maxk, 1, True, True)
            pred = pred.t()
            correct = pred.eq(target.view(1, -1).expand_as(pred))
            return [correct[:k].reshape(-1).float().sum(0, keepdim=True).mul_(100.0 / batch_size) for k in topk]
    utils.accuracy = accuracy


def _forget(names):
    for m in [m for m in sys.modules if m.split(".")[0] in names]:
        del sys.modules[m]


def imbalanced_train(dev):
    """YyzHarry/imbalanced-semi-self's train.py as is (its README's long-tailed CIFAR-10 baseline: `ImbalanceCIFAR10`
    with an exponential imbalance, its `resnet32`, `--loss_type LDAM --train_rule Reweight`: class-balanced weights
    from the class counts, its `LDAMLoss`, top-1 / top-5 accuracy per step, the per-class accuracy of its `validate`
    from a confusion matrix, tensorboardX scalars and checkpoints), CIFAR-10 answered by 1000 + 200 synthetic
    images (`_synthetic_cifar10`), `--gpu 0`, run from a temporary folder. The window spans the 2nd to the 12th
    `backward`: training steps, the first epoch's end (its validation pass, logging, checkpoint) and the next
    epoch's re-weighting. Its `utils.accuracy` is answered by `_accuracy_shim` (`.reshape` for its `.view`)."""
    root = _need_repo("imbalanced")
    tmp = hc._tmp()
    argv = ["--dataset", "cifar10", "--data_path", os.path.join(tmp, "data"), "--arch", "resnet32",
            "--loss_type", "LDAM", "--train_rule", "Reweight", "--imb_type", "exp", "--imb_factor", "0.1",
            "--gpu", "0", "--workers", "0", "--epochs", "3", "--batch-size", "64", "--lr", "0.05",
            "--print-freq", "2", "--root_log", os.path.join(tmp, "log"), "--root_model", os.path.join(tmp, "ckpt"),
            "--seed", "0"]

    def window():
        _forget({"utils", "models", "dataset", "losses"})
        _accuracy_shim(root)
        try:
            with _synthetic_cifar10(1000, 200), fc.cuda_on_cpu(dev), _cuda_available_on_cpu(dev), \
                    hc.window_on(torch.Tensor, "backward", "imbalanced.train", "train", dev, 2, 12,
                                 stop_script=True):
                hc.run_script(root / "train.py", argv, tmp)
        finally:
            _forget({"utils", "models", "dataset", "losses"})
    return {"train_window": window}


def swag_train(dev):
    """wjmaddox/swa_gaussian's experiments/train/run_swag.py as is (the README's SWAG command: `--swa --cov_mat`,
    `PreResNet8`, SGD with its schedule, SWAG collection from epoch 1 with `collect_model`, `sample(0.0)`,
    `bn_update` and evaluation each epoch, checkpoints), CIFAR-10 (`--use_test`) answered by 384 + 128 synthetic
    images, run from a temporary folder with the repository's root on the path (its `swag` package). The window
    spans the 2nd to the 16th `backward`: training steps and two epochs' ends (SWAG's moments, its sampling,
    the BN update and both evaluations)."""
    root = _need_repo("swag")
    tmp = hc._tmp()
    argv = ["--dir", os.path.join(tmp, "out"), "--dataset", "CIFAR10", "--data_path", os.path.join(tmp, "data"),
            "--model", "PreResNet8", "--epochs", "4", "--batch_size", "64", "--num_workers", "0", "--lr_init",
            "0.05", "--wd", "3e-4", "--swa", "--swa_start", "1", "--swa_lr", "0.01", "--cov_mat", "--use_test",
            "--eval_freq", "1", "--save_freq", "2", "--max_num_models", "5"]

    def window():
        _forget({"swag"})
        _gpytorch_lazy_names()
        sys.path.insert(0, str(root))
        try:
            with _synthetic_cifar10(384, 128), fc.cuda_on_cpu(dev), _cuda_available_on_cpu(dev), \
                    hc.window_on(torch.Tensor, "backward", "swag.train", "train", dev, 2, 16, stop_script=True):
                hc.run_script(root / "experiments" / "train" / "run_swag.py", argv, tmp)
        finally:
            sys.path.remove(str(root))
            _forget({"swag"})
    return {"train_window": window}


def _gpytorch_lazy_names() -> None:
    """swa_gaussian's `swag.posteriors.swag` imports `RootLazyTensor`, `DiagLazyTensor` and `AddedDiagLazyTensor` from
    `gpytorch.lazy` (used only by its `compute_logprob`, which the script does not call); gpytorch 1.9 renamed them
    to linear_operator's `RootLinearOperator`, `DiagLinearOperator` and `AddedDiagLinearOperator`: under a newer
    gpytorch those names are given as aliases so that the package imports."""
    import gpytorch.lazy as lazy
    from linear_operator import operators as ops
    for old, new in (("RootLazyTensor", "RootLinearOperator"), ("DiagLazyTensor", "DiagLinearOperator"),
                     ("AddedDiagLazyTensor", "AddedDiagLinearOperator")):
        if not hasattr(lazy, old):
            setattr(lazy, old, getattr(ops, new))


MODELS = [
    # name, package, builder
    ("onnx2torch.graphs", "onnx2torch", onnx2torch_graphs),
    ("quanto.quantize", "optimum", quanto_quantize),
    ("sahi.slices", "sahi", sahi_slices),
    ("score_models.sde", "score_models", score_models_sde),
    ("smalldiffusion.sample", "smalldiffusion", smalldiffusion_sample),
    ("supar.structs", "supar", supar_structs),
    ("tgsd.graphs", "torch_geometric_signed_directed", tgsd_graphs),
    ("tsgu.solve", "torchsparsegradutils", tsgu_solve),
    ("imbalanced.train", "imbalanced", imbalanced_train),
    ("swag.train", "swag", swag_train),
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh41", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
