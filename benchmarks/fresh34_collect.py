"""Record the syncs of a thirty-fifth set, `fresh34` (a sealed test set): libraries and training code nobody here read.

`fresh34` is recorded the same way as `fresh9` to `fresh33` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / docs examples, the names, signatures and docstrings they export), on synthetic
data with random weights, before anyone ran the linter on this code or read it for syncs. Every input is put on the
device explicitly, as the libraries' docs do (`.to(dev)`, `device=`; anomalib's `Engine(accelerator=, devices=1)`,
lhotse's `FbankConfig(device=)`, fairscale's `OffloadModel(device=)` and litgpt's `set_kv_cache(device=)` choose
the device the library puts its tensors on): no workload runs under a default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh34), names a to l: anomalib (anomaly
  detection: PatchCore, DFM, DFKDE fitted and tested by its `Engine` on a synthetic image folder; + kornia,
  kornia_rs, FrEIA built from its source distribution, jsonargparse, docstring_parser, typeshed_client, omegaconf,
  rich_argparse, platformdirs; its `imagecodecs` import is answered by a stub), compressed_tensors
  (compressed-tensors: quantization schemes applied to a model, calibrated, fake-quantized and compressed; +
  pydantic, pydantic_core, annotated_types, typing_inspection, loguru), fairscale (AdaScale, OffloadModel, OSS;
  built from its source distribution), lhotse (speech data: on-device feature extraction, SpecAugment, its samplers
  and datasets; + cytoolz, intervaltree, audioread, soundfile, cffi, pycparser) and litgpt (LLM training, LoRA,
  batched and speculative sampling; + jsonargparse). Their other needs (numpy, scipy, lightning, timm,
  torchmetrics, transformers, scikit-learn, scikit-image, opencv, pandas, matplotlib, torchvision, torchaudio,
  huggingface_hub, tokenizers, safetensors) are on the GPU machine. A sixth library, cvxpylayers (differentiable
  convex optimisation layers), was removed after all its modes failed in their GPU warm-up (it hands the device
  tensors to numpy: "can't convert cuda:0 device type tensor to numpy"); the device time allowed no call to record
  a replacement.
- Two training repositories at pinned commits, copied by `prepare` into .bench/fresh34/repos/<name>:
  hysts/pytorch_image_classification (train.py as is with its CIFAR ResNet config, on synthetic CIFAR-10; + yacs,
  thop, termcolor, fvcore and iopath built from their source distributions) and LMescheder/GAN_stability (train.py
  as is with a small CIFAR-10 config written by the collector, on synthetic CIFAR-10; its `yaml.load` called without
  a Loader, which PyYAML 6 refuses, is given the full loader). Both run on their own `cuda` / `cuda:0`; the CPU
  smoke run passes their own CPU switches.

    python benchmarks/fresh34_collect.py prepare        # here, with network: wheels, repos and code copies
    python benchmarks/fresh34_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh34 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh34 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
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
BENCH_DIR = ac.REPO / ".bench" / "fresh34"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh34", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh34/repos/<name>)
REPOS = {
    "imgcls": ("hysts/pytorch_image_classification", "993089a3a08b1955914641fa6e88b5ecbbf638af",
               ["train.py", "configs", "pytorch_image_classification"]),
    "ganstab": ("LMescheder/GAN_stability", "c1f64c9efeac371453065e5ce71860f4c2b97357",
                ["train.py", "configs", "gan_training"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["anomalib==2.7.0", "kornia==0.9.0", "kornia_rs==0.2.0", "jsonargparse==4.41.0", "docstring_parser==0.18.0",
          "typeshed_client==2.15.0", "omegaconf==2.4.0", "rich-argparse==1.8.0", "platformdirs==4.14.8",
          "compressed-tensors==0.20.0", "pydantic==2.14.4", "pydantic_core==2.50.5", "annotated-types==0.8.0",
          "typing-inspection==0.4.5", "loguru==0.7.3",
          "lhotse==1.33.0", "cytoolz==1.2.0", "intervaltree==3.2.1", "audioread==3.1.0", "soundfile==0.14.0",
          "cffi==2.1.1", "pycparser==3.12",
          "litgpt==0.5.13",
          "yacs==0.1.8", "thop==0.1.1.post2209072238", "termcolor==3.3.0"]
# published as source distributions only: built into wheels by `prepare`
SDIST_WHEELS = ["FrEIA==0.2", "fairscale==0.4.13", "fvcore==0.1.5.post20221221", "iopath==0.1.10"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"anomalib": "anomalib", "compressed_tensors": "compressed-tensors", "fairscale": "fairscale",
         "lhotse": "lhotse", "litgpt": "litgpt", "kornia": "kornia", "lightning": "lightning", "timm": "timm",
         "transformers": "transformers", "numpy": "numpy", "scipy": "scipy", "torchvision": "torchvision",
         "fvcore": "fvcore", "yacs": "yacs"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh34/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh34_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _classes(n, d=20, k=4, seed=0):
    """n points of k Gaussian classes in d dimensions (CPU tensors): features, labels."""
    g = torch.Generator().manual_seed(seed)
    centres = 2.0 * torch.randn(k, d, generator=g)
    y = torch.randint(0, k, (n,), generator=g)
    return centres[y] + torch.randn(n, d, generator=g), y


def _mlp(d_in, d_out, hidden=32):
    return nn.Sequential(nn.Linear(d_in, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, d_out))


# ============================================================================================
# Libraries
# ============================================================================================

# -- anomalib: the README's recipe, a `Folder` datamodule (`name=`, `root=`, `normal_dir=`, `abnormal_dir=`,
#    `mask_dir=`, batch sizes) over a synthetic image folder (smooth textures; the abnormal ones with a bright
#    blob, and its mask), an `Engine(accelerator=, devices=1, max_epochs=1)` and `engine.fit(model=, datamodule=)`,
#    `engine.test(...)` and `engine.predict(...)`, for PatchCore (coreset subsampling), DFM and DFKDE on a randomly
#    initialised ResNet-18 (`pre_trained=False`; no visualiser; PaDiM cut after the first GPU call, for the 40% cap)
#    ----------------------------------------------------------------------------------------------------------------

def _anomaly_folder(seed=0, n_train=12, n_test=4, size=64):
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(seed)
    root = Path(tempfile.mkdtemp(prefix="fresh34-anomalib-"))
    for sub in ("good", "bad", "mask"):
        (root / sub).mkdir()
    yy, xx = np.mgrid[0:size, 0:size]

    def texture():
        f = rng.uniform(0.05, 0.2, 2)
        base = 0.5 + 0.25 * np.sin(f[0] * xx + rng.uniform(0, 6)) * np.cos(f[1] * yy)
        img = base[..., None] + 0.05 * rng.standard_normal((size, size, 3))
        return np.clip(img, 0, 1)
    for i in range(n_train + n_test):
        Image.fromarray((texture() * 255).astype("uint8")).save(root / "good" / f"{i:03d}.png")
    for i in range(n_test):
        img, mask = texture(), np.zeros((size, size), dtype="uint8")
        cx, cy, r = rng.integers(12, size - 12, 2).tolist() + [int(rng.integers(4, 9))]
        blob = (xx - cx) ** 2 + (yy - cy) ** 2 < r * r
        img[blob] = [1.0, 0.2, 0.1]
        mask[blob] = 255
        Image.fromarray((img * 255).astype("uint8")).save(root / "bad" / f"{i:03d}.png")
        Image.fromarray(mask).save(root / "mask" / f"{i:03d}.png")
    return root


def anomalib_detect(dev):
    sys.modules.setdefault("imagecodecs", types.ModuleType("imagecodecs"))  # not carried (26 MB); not used here
    from anomalib.data import Folder
    from anomalib.engine import Engine
    from anomalib.models import Dfkde, Dfm, Patchcore

    def run_model(name, make):
        def run():
            torch.manual_seed(0)
            root = _anomaly_folder()
            try:
                dm = Folder(name="synthetic", root=root, normal_dir="good", abnormal_dir="bad", mask_dir="mask",
                            train_batch_size=4, eval_batch_size=4, num_workers=0, seed=0)
                engine = Engine(accelerator="gpu" if dev.type == "cuda" else "cpu", devices=1, max_epochs=1,
                                logger=False, default_root_dir=root / "results", enable_progress_bar=False,
                                enable_model_summary=False)
                model = make()
                engine.fit(model=model, datamodule=dm)
                res = engine.test(model=model, datamodule=dm, verbose=False)
                preds = engine.predict(model=model, datamodule=dm)
                n = sum(len(p.pred_score) for p in preds)
            finally:
                shutil.rmtree(root, ignore_errors=True)
            print(f"{name}: test {sorted(res[0]) if res else res}, {n} predictions")
        return run
    return {
        "patchcore": run_model("patchcore", lambda: Patchcore(backbone="resnet18", pre_trained=False,
                                                              coreset_sampling_ratio=0.02, num_neighbors=3,
                                                              visualizer=False)),
        "dfm": run_model("dfm", lambda: Dfm(backbone="resnet18", pre_trained=False, score_type="fre",
                                            visualizer=False)),
        "dfkde": run_model("dfkde", lambda: Dfkde(backbone="resnet18", pre_trained=False, n_pca_components=8,
                                                  visualizer=False)),
    }


# -- compressed-tensors: its README's quantization lifecycle, a `QuantizationConfig(config_groups={...:
#    QuantizationScheme(targets=['Linear'], weights=QuantizationArgs(...), input_activations=...)})` and the preset
#    schemes (`preset_name_to_scheme`: W8A8, W4A16, FP8_DYNAMIC) applied by `apply_quantization_config`, the
#    observed ranges turned into scales by `calculate_qparams` and the quantized forward run on the device; the
#    functional `quantize` / `dequantize` / `fake_quantize`; `ModelCompressor.from_pretrained_model` and
#    `compress_model` / `decompress_model` of the quantized model ------------------------------------------------

def compressed_tensors_quant(dev):
    from compressed_tensors import ModelCompressor
    from compressed_tensors.quantization import (
        QuantizationArgs,
        QuantizationConfig,
        QuantizationScheme,
        QuantizationStatus,
        apply_quantization_config,
        dequantize,
        fake_quantize,
        preset_name_to_scheme,
        quantize,
    )
    from compressed_tensors.quantization.utils import calculate_qparams

    def model():
        torch.manual_seed(0)
        return nn.Sequential(nn.Linear(128, 256), nn.GELU(), nn.Linear(256, 256), nn.GELU(),
                             nn.Linear(256, 128)).to(dev)

    def calibrate(m, x):
        """the observed weight ranges (per output channel or tensor, as the scheme asks) -> scale / zero point"""
        for mod in m.modules():
            scheme = getattr(mod, "quantization_scheme", None)
            if scheme is None or scheme.weights is None:
                continue
            args = scheme.weights
            w = mod.weight.detach()
            if args.strategy == "channel":
                lo, hi = w.amin(dim=1, keepdim=True), w.amax(dim=1, keepdim=True)
            elif args.strategy == "group":
                g = w.reshape(w.shape[0], -1, args.group_size)
                lo, hi = g.amin(dim=2), g.amax(dim=2)
            else:
                lo, hi = w.amin().reshape(1), w.amax().reshape(1)
            scale, zp = calculate_qparams(lo, hi, args)
            mod.weight_scale.data.copy_(scale.reshape(mod.weight_scale.shape))
            mod.weight_zero_point.data.copy_(zp.reshape(mod.weight_zero_point.shape))
        return m(x)

    def schemes():
        x = torch.randn(32, 128).to(dev)
        res = {}
        for name, scheme in {
            "int8_channel": QuantizationScheme(targets=["Linear"], weights=QuantizationArgs(
                num_bits=8, type="int", symmetric=True, strategy="channel")),
            "int4_group": QuantizationScheme(targets=["Linear"], weights=QuantizationArgs(
                num_bits=4, type="int", symmetric=True, strategy="group", group_size=32)),
            "w8a8_dynamic": QuantizationScheme(targets=["Linear"], weights=QuantizationArgs(
                num_bits=8, type="int", symmetric=True, strategy="channel"), input_activations=QuantizationArgs(
                num_bits=8, type="int", symmetric=True, strategy="token", dynamic=True)),
        }.items():
            m = model()
            ref = m(x)
            cfg = QuantizationConfig(config_groups={"group_0": scheme}, ignore=[])
            apply_quantization_config(m, cfg)
            out = calibrate(m, x)
            for _ in range(3):
                out = m(x)
            res[name] = round((out - ref).abs().mean().item(), 5)
        print(f"schemes: {res}")

    def presets():
        x = torch.randn(16, 128).to(dev)
        res = {}
        for preset in ("W8A8", "W4A16", "FP8_DYNAMIC"):
            m = model()
            ref = m(x)
            cfg = QuantizationConfig(config_groups={"group_0": preset_name_to_scheme(preset, ["Linear"])})
            apply_quantization_config(m, cfg)
            calibrate(m, x)
            out = m(x)
            res[preset] = round((out - ref).abs().max().item(), 5)
        print(f"presets: {res}")

    def functional():
        w = torch.randn(128, 64).to(dev)
        res = {}
        for bits, strategy in ((8, "tensor"), (8, "channel"), (4, "channel")):
            args = QuantizationArgs(num_bits=bits, type="int", symmetric=True, strategy=strategy)
            if strategy == "channel":
                lo, hi = w.amin(dim=1, keepdim=True), w.amax(dim=1, keepdim=True)
            else:
                lo, hi = w.amin().reshape(1), w.amax().reshape(1)
            scale, zp = calculate_qparams(lo, hi, args)
            q = quantize(w, scale, zp, args)
            dq = dequantize(q, scale, zp, args)
            fq = fake_quantize(w, scale, zp, args)
            res[f"{bits}/{strategy}"] = (round((dq - w).abs().mean().item(), 5), bool(torch.allclose(dq, fq)))
        print(f"functional: {res}")

    def compress():
        x = torch.randn(8, 128).to(dev)
        res = {}
        for preset in ("W8A16", "W4A16"):
            m = model()
            cfg = QuantizationConfig(config_groups={"group_0": preset_name_to_scheme(preset, ["Linear"])})
            apply_quantization_config(m, cfg)
            calibrate(m, x)
            ref = m(x)
            compressor = ModelCompressor.from_pretrained_model(m)
            compressor.compress_model(m)
            names = sorted({k.rsplit(".", 1)[-1] for k in m.state_dict()})
            compressor.decompress_model(m)
            res[preset] = (names, round((m(x) - ref).abs().max().item(), 5),
                           str(getattr(m[0], "quantization_status", QuantizationStatus.FROZEN)))
        print(f"compress: {res}")
    return {"schemes": schemes, "presets": presets, "functional": functional, "compress": compress}


# -- fairscale: the docs' single-GPU tools: `AdaScale(optimizer, num_gradients_to_accumulate=)` with its `gain()`
#    and a `LambdaLR` over its scale-invariant steps; `OffloadModel(model=nn.Sequential, device=, offload_device=,
#    num_slices=, checkpoint_activation=, num_microbatches=)` trained (on the GPU only: it asks for CUDA); `OSS` with
#    `ShardedDataParallel` in a one-rank process group, with its gradient clipping and consolidated state dict (a
#    one-rank `FullyShardedDataParallel` with `checkpoint_wrapper` layers was removed after failing in its GPU
#    warm-up: a flattened parameter's storage out of bounds) ----------------------------------------------------

_PORTS = iter(range(29500 + os.getpid() % 1000, 65000))


@contextlib.contextmanager
def _one_rank_group(dev):
    """a process group of one rank (NCCL on the GPU, gloo on the CPU), ended after the mode: the training scripts
    run later in this process must not find one"""
    import torch.distributed as dist
    if dev.type == "cuda":
        torch.cuda.set_device(dev.index or 0)
    dist.init_process_group("nccl" if dev.type == "cuda" else "gloo", init_method=f"tcp://127.0.0.1:{next(_PORTS)}",
                            rank=0, world_size=1)
    try:
        yield
    finally:
        dist.destroy_process_group()


def fairscale_tools(dev):
    from fairscale.experimental.nn.offload import OffloadModel
    from fairscale.nn.data_parallel import ShardedDataParallel
    from fairscale.optim import OSS, AdaScale

    def adascale():
        torch.manual_seed(0)
        x, y = _classes(256, d=16, k=4)
        x, y = x.to(dev), y.to(dev)
        model = _mlp(16, 4, 64).to(dev)
        optim = AdaScale(torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9), num_gradients_to_accumulate=2)
        sched = torch.optim.lr_scheduler.LambdaLR(optim, lambda step: 0.95 ** step)
        gains = []
        step = 0
        while step < 6:
            for i in range(2):
                xb, yb = x[i * 64:(i + 1) * 64], y[i * 64:(i + 1) * 64]
                F.cross_entropy(model(xb), yb).backward()
            gains.append(round(float(optim.gain()), 4))
            optim.step()
            optim.zero_grad()
            sched.step()
            step += 1
        print(f"adascale: gains {gains}, lr {optim.param_groups[0]['lr']:.4f}")

    def offload():
        torch.manual_seed(1)
        x, y = _classes(128, d=32, k=4, seed=1)
        model = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 128),
                              nn.ReLU(), nn.Linear(128, 4))
        om = OffloadModel(model=model, device=dev, offload_device=torch.device("cpu"), num_slices=3,
                          checkpoint_activation=True, num_microbatches=1)
        opt = torch.optim.SGD(om.parameters(), lr=0.05)
        for i in range(4):
            xb, yb = x[i * 32:(i + 1) * 32].to(dev), y[i * 32:(i + 1) * 32].to(dev)
            loss = F.cross_entropy(om(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        print(f"offload: loss {loss.item():.4f}")

    def oss():
        with _one_rank_group(dev):
            run_oss()

    def run_oss():
        torch.manual_seed(3)
        x, y = _classes(128, d=16, k=4, seed=3)
        x, y = x.to(dev), y.to(dev)
        model = _mlp(16, 4, 64).to(dev)
        optim = OSS(model.parameters(), optim=torch.optim.SGD, lr=0.05, momentum=0.9)
        sdp = ShardedDataParallel(model, optim)
        for _ in range(4):
            loss = F.cross_entropy(sdp(x), y)
            optim.zero_grad()
            loss.backward()
            norm = optim.clip_grad_norm(1.0)
            optim.step()
        optim.consolidate_state_dict()
        print(f"oss: loss {loss.item():.4f}, norm {float(norm):.4f}, {len(optim.state_dict()['state'])} states")
    modes = {"adascale": adascale, "oss": oss}
    if dev.type == "cuda":  # OffloadModel asks for CUDA
        modes.update(offload=offload)
    return modes


# -- lhotse: on-device feature extraction (`Fbank(FbankConfig(device=))`, `Mfcc`, `Spectrogram` and their
#    `extract_batch`), `SpecAugment` on feature batches, and the data pipeline of its docs: a `CutSet` of recordings
#    written to disk, a `DynamicBucketingSampler`, `K2SpeechRecognitionDataset` with
#    `OnTheFlyFeatures(Fbank(FbankConfig(device=)))` and `SpecAugment`, its batches moved to the device and fed to
#    a small CTC model; the same from features stored by `compute_and_store_features(Mfcc(MfccConfig(device=)))`
#    of the cuts and their `perturb_speed` copies, read by `PrecomputedFeatures` with a `SimpleCutSampler`
#    (`RandomizedSmoothing` left out: its own tensors stay on the CPU, it failed in the GPU warm-up) ------------

def _waves(n, sr=16000, seed=0):
    import math
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(n):
        dur = 0.6 + 0.8 * torch.rand(1, generator=g).item()
        t = torch.arange(int(sr * dur)) / sr
        f0 = 120 + 200 * torch.rand(1, generator=g).item()
        w = 0.3 * torch.sin(2 * math.pi * f0 * t) * (1 + 0.5 * torch.sin(2 * math.pi * 3 * t))
        out.append(w + 0.02 * torch.randn(t.shape, generator=g))
    return out


def lhotse_speech(dev):
    from lhotse import (
        CutSet,
        Fbank,
        FbankConfig,
        Mfcc,
        MfccConfig,
        Recording,
        RecordingSet,
        Spectrogram,
        SpectrogramConfig,
        SupervisionSegment,
        SupervisionSet,
    )
    from lhotse.dataset import (
        DynamicBucketingSampler,
        K2SpeechRecognitionDataset,
        OnTheFlyFeatures,
        PrecomputedFeatures,
        SimpleCutSampler,
        SpecAugment,
    )

    def features():
        waves = [w.to(dev) for w in _waves(6)]
        res = {}
        for name, ex in (("fbank", Fbank(FbankConfig(device=dev))), ("mfcc", Mfcc(MfccConfig(device=dev))),
                         ("spectrogram", Spectrogram(SpectrogramConfig(device=dev)))):
            feats = ex.extract_batch(waves, sampling_rate=16000)
            single = ex.extract(waves[0], sampling_rate=16000)
            res[name] = (len(feats), tuple(feats[0].shape), ex.feature_dim(16000), tuple(single.shape))
        print(f"features: {res}")

    def augment():
        torch.manual_seed(1)
        waves = [w.to(dev) for w in _waves(4, seed=1)]
        feats = Fbank(FbankConfig(device=dev)).extract_batch(waves, sampling_rate=16000)
        T = max(f.shape[0] for f in feats)
        batch = torch.stack([F.pad(f, (0, 0, 0, T - f.shape[0])) for f in feats])
        sups = torch.tensor([[i, 0, f.shape[0]] for i, f in enumerate(feats)], dtype=torch.int32)
        spec = SpecAugment(time_warp_factor=20, num_feature_masks=2, features_mask_size=10, num_frame_masks=4,
                           frames_mask_size=20, p=1.0)
        out = []
        for _ in range(3):
            a = spec(batch.clone(), supervision_segments=sups)
            out.append(round(a.mean().item(), 4))
        print(f"augment: {out}")

    vocab = "abcdefgh"

    def cutset(tmp, n=24, seed=2):
        import soundfile as sf
        recs, sups = [], []
        g = torch.Generator().manual_seed(seed)
        for i, w in enumerate(_waves(n, seed=seed)):
            p = tmp / f"utt{i:03d}.wav"
            sf.write(str(p), w.numpy(), 16000)
            rec = Recording.from_file(str(p), recording_id=f"utt{i:03d}")
            recs.append(rec)
            text = "".join(vocab[j] for j in torch.randint(0, 8, (5,), generator=g).tolist())
            sups.append(SupervisionSegment(id=f"sup{i:03d}", recording_id=rec.id, start=0.0,
                                           duration=rec.duration, text=text))
        return CutSet.from_manifests(recordings=RecordingSet.from_recordings(recs),
                                     supervisions=SupervisionSet.from_segments(sups)).trim_to_supervisions()

    def ctc_steps(loader, n_feat, steps=5):
        model = nn.Sequential(nn.Linear(n_feat, 64), nn.ReLU(), nn.Linear(64, len(vocab) + 1)).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        done = 0
        for batch in loader:
            feats = batch["inputs"].to(dev)
            sup = batch["supervisions"]
            lens = sup["num_frames"].to(dev)
            targets = [torch.tensor([vocab.index(c) + 1 for c in t]) for t in sup["text"]]
            tgt = torch.cat(targets).to(dev)
            tgt_lens = torch.tensor([len(t) for t in targets]).to(dev)
            logp = model(feats).log_softmax(-1).transpose(0, 1)
            loss = F.ctc_loss(logp, tgt, lens, tgt_lens, zero_infinity=True)
            opt.zero_grad()
            loss.backward()
            opt.step()
            done += 1
            if done == steps:
                break
        return done, loss

    def pipeline():
        tmp = Path(tempfile.mkdtemp(prefix="fresh34-lhotse-"))
        try:
            cuts = cutset(tmp)
            ds = K2SpeechRecognitionDataset(input_strategy=OnTheFlyFeatures(Fbank(FbankConfig(device=dev))),
                                            input_transforms=[SpecAugment(num_frame_masks=2, frames_mask_size=10)],
                                            return_cuts=True)
            sampler = DynamicBucketingSampler(cuts, max_duration=6.0, shuffle=True, num_buckets=2, seed=0)
            loader = torch.utils.data.DataLoader(ds, sampler=sampler, batch_size=None, num_workers=0)
            steps, loss = ctc_steps(loader, 80)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"pipeline: {steps} batches, loss {loss.item():.4f}")

    def precomputed():
        tmp = Path(tempfile.mkdtemp(prefix="fresh34-lhotse-"))
        try:
            cuts = cutset(tmp, n=16, seed=3)
            cuts = (cuts + cuts.perturb_speed(1.1)).compute_and_store_features(
                extractor=Mfcc(MfccConfig(device=dev)), storage_path=str(tmp / "feats"), num_jobs=1,
                progress_bar=False)
            ds = K2SpeechRecognitionDataset(input_strategy=PrecomputedFeatures(),
                                            input_transforms=[SpecAugment(num_frame_masks=2, frames_mask_size=10,
                                                                          features_mask_size=4)])
            sampler = SimpleCutSampler(cuts, max_duration=5.0, shuffle=True, seed=0)
            loader = torch.utils.data.DataLoader(ds, sampler=sampler, batch_size=None, num_workers=0)
            steps, loss = ctc_steps(loader, cuts[0].num_features)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print(f"precomputed: {steps} batches, loss {loss.item():.4f}")
    return {"features": features, "augment": augment, "pipeline": pipeline, "precomputed": precomputed}


# -- litgpt: `Config.from_name(...)` (pythia-14m; a two-layer tiny-llama with `n_query_groups`), `GPT(config)` on the
#    device, trained a few steps with `chunked_cross_entropy`; `generate(model, prompt, max_returned_tokens,
#    temperature=, top_k=, top_p=, eos_id=)` after `set_kv_cache(batch_size=, device=)`; the LoRA `GPT` of
#    `litgpt.lora` (`lora_r`, `lora_query`, ...) with `mark_only_lora_as_trainable` and `merge_lora_weights`;
#    `batched_generate_fn(model, prompts, ..., sample_args=[...], stop_tokens=)` with a sampler per row, and the
#    speculative decoding script's `generate(draft_model, target_model, prompt, ..., speculative_k=)` ---------------

def litgpt_llm(dev):
    from litgpt import GPT, Config
    from litgpt.generate.base import generate
    from litgpt.utils import chunked_cross_entropy

    def train(model, steps=4, T=64, seed=0):
        g = torch.Generator().manual_seed(seed)
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=3e-4)
        V = model.config.padded_vocab_size
        for _ in range(steps):
            ids = torch.randint(0, min(V, 512), (4, T + 1), generator=g).to(dev)
            logits = model(ids[:, :-1])
            loss = chunked_cross_entropy(logits, ids[:, 1:], chunk_size=0)
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss

    def sample(model, eos_id, **kw):
        model.eval()
        model.max_seq_length = 96
        model.set_kv_cache(batch_size=1, device=dev)
        prompt = torch.tensor([3, 17, 42, 5, 9]).to(dev)
        out = []
        for temperature, top_k, top_p in ((0.8, 50, 1.0), (1.0, None, 0.9), (0.0, None, 1.0)):
            y = generate(model, prompt, max_returned_tokens=40, temperature=temperature, top_k=top_k, top_p=top_p,
                         eos_id=eos_id)
            out.append(y.size(0))
        model.clear_kv_cache()
        return out

    def pythia():
        torch.manual_seed(0)
        model = GPT(Config.from_name("pythia-14m")).to(dev)
        loss = train(model)
        print(f"pythia: loss {loss.item():.3f}, lengths {sample(model, eos_id=7)}")

    def llama():
        torch.manual_seed(1)
        cfg = Config.from_name("tiny-llama-1.1b", n_layer=2, n_embd=128, n_head=4, n_query_groups=2,
                               intermediate_size=256, vocab_size=1024, padded_vocab_size=1024, block_size=256)
        model = GPT(cfg).to(dev)
        loss = train(model, seed=1)
        print(f"llama: loss {loss.item():.3f}, lengths {sample(model, eos_id=11)}")

    def lora():
        from litgpt.lora import GPT as LoRAGPT
        from litgpt.lora import Config as LoRAConfig
        from litgpt.lora import mark_only_lora_as_trainable, merge_lora_weights
        torch.manual_seed(2)
        cfg = LoRAConfig.from_name("pythia-14m", lora_r=8, lora_alpha=16, lora_dropout=0.05, lora_query=True,
                                   lora_value=True, lora_projection=True)
        model = LoRAGPT(cfg).to(dev)
        mark_only_lora_as_trainable(model)
        loss = train(model, seed=2)
        merge_lora_weights(model)
        print(f"lora: loss {loss.item():.3f}, lengths {sample(model, eos_id=0)}")
    def batched():
        from litgpt.generate.base import batched_generate_fn
        torch.manual_seed(3)
        model = GPT(Config.from_name("pythia-14m")).to(dev)
        train(model, seed=3)
        model.eval()
        model.max_seq_length = 64
        model.set_kv_cache(batch_size=4, device=dev)
        prompts = torch.randint(0, 512, (4, 6)).to(dev)
        args = [{"temperature": 0.7, "top_k": 20}, {"temperature": 1.0, "top_p": 0.8}, {"temperature": 0.0},
                {"temperature": 0.9, "top_k": 5, "top_p": 0.95}]
        lengths = [0] * 4
        for step in batched_generate_fn(model, prompts, max_returned_tokens=30, sample_args=args,
                                        stop_tokens=([7], [11, 12]), include_prompt=False, include_eos=True):
            for i, tok in enumerate(step):
                lengths[i] += tok is not None
        model.clear_kv_cache()
        print(f"batched: lengths {lengths}")

    def speculative():
        from litgpt.generate.speculative_decoding import generate as speculative_generate
        torch.manual_seed(4)
        target = GPT(Config.from_name("pythia-14m")).to(dev)
        draft = GPT(Config.from_name("pythia-14m", n_layer=2)).to(dev)
        train(target, seed=4)
        train(draft, seed=4)
        out = []
        for model in (draft, target):
            model.eval()
            model.max_seq_length = 64
            model.set_kv_cache(batch_size=1, device=dev)
        prompt = torch.tensor([3, 17, 42, 5, 9]).to(dev)
        for k, temperature in ((3, 0.8), (5, 0.0)):
            toks = list(speculative_generate(draft, target, prompt, max_returned_tokens=40, temperature=temperature,
                                             top_k=50, stop_tokens=([7],), speculative_k=k))
            out.append(len(toks))
            for model in (draft, target):
                model.clear_kv_cache()
                model.set_kv_cache(batch_size=1, device=dev)
        print(f"speculative: {out}")
    return {"pythia": pythia, "llama": llama, "lora": lora, "batched": batched, "speculative": speculative}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

@contextlib.contextmanager
def _fake_dataset(name, n, shape, num_classes=10):
    """torchvision's dataset `name` answered by `FakeData` of its shape (no download, no files)."""
    import torchvision.datasets as dset
    saved = getattr(dset, name)

    def fake(root=None, train=True, transform=None, target_transform=None, download=False, **kw):
        return dset.FakeData(size=n if train else n // 4, image_size=shape, num_classes=num_classes,
                             transform=transform, target_transform=target_transform, random_offset=0 if train else 1)
    setattr(dset, name, fake)
    try:
        yield
    finally:
        setattr(dset, name, saved)


@contextlib.contextmanager
def _yaml_full_loader():
    """GAN_stability's `yaml.load(f)` names no Loader, which PyYAML 6 refuses: the full loader is given."""
    import yaml
    saved = yaml.load

    def load(stream, Loader=None):
        return saved(stream, Loader=Loader or yaml.FullLoader)
    yaml.load = load
    try:
        yield
    finally:
        yaml.load = saved


def imgcls_cifar(dev):
    """hysts/pytorch_image_classification's train.py as is with its `configs/cifar/resnet.yaml` (options: a
    ResNet-20 for the time, batch 32, three epochs, no apex, no tensorboard, no loader workers, a log every 2 steps;
    mixup with label smoothing, and CutMix, as two more modes; its RICAP fails as is, on `np.int`), on synthetic
    CIFAR-10 (torchvision's `CIFAR10` answered by 256 training and 64 test `FakeData` images: 8 steps an epoch), its
    own `cuda` device (the CPU smoke run: its own CPU fallback). The window spans the 2nd to the 14th `backward`: the
    rest of the first epoch with its per-step loss and accuracy reads, its validation, and the start of the
    second."""
    root = _need_repo("imgcls")

    def mode(extra):
        def window():
            tmp = Path(tempfile.mkdtemp(prefix="fresh34-imgcls-"))
            args = ["--config", str(root / "configs" / "cifar" / "resnet.yaml"),
                    "model.resnet.depth", "20", "train.batch_size", "32", "validation.batch_size", "64",
                    "scheduler.epochs", "3", "scheduler.milestones", "[2]", "train.use_apex", "False",
                    "train.use_tensorboard", "False", "train.dataloader.num_workers", "0",
                    "validation.dataloader.num_workers", "0", "train.log_period", "2", "train.output_dir",
                    str(tmp / "exp"), "dataset.dataset_dir", str(tmp / "data"), *extra]
            if dev.type != "cuda":
                args += ["device", "cpu"]
            with _fake_dataset("CIFAR10", 256, (3, 32, 32)), \
                    hc.window_on(torch.Tensor, "backward", "imgcls.cifar", "train", dev, 2, 14, stop_script=True):
                hc.run_script(root / "train.py", args, str(tmp))
        return window
    return {"train_window": mode([]),
            "mixup_window": mode(["augmentation.use_mixup", "True", "augmentation.use_label_smoothing", "True"]),
            "cutmix_window": mode(["augmentation.use_cutmix", "True"])}


_GANSTAB_CONFIG = """\
data:
  type: cifar10
  train_dir: {tmp}/data
  test_dir: {tmp}/data
  img_size: 32
  nlabels: 10
generator:
  name: resnet2
  kwargs:
    nfilter: 16
    embed_size: 64
discriminator:
  name: resnet2
  kwargs:
    nfilter: 16
    embed_size: 64
z_dist:
  type: gauss
  dim: 64
training:
  out_dir: {tmp}/out
  gan_type: {gan_type}
  reg_type: {reg_type}
  reg_param: 10.
  batch_size: 16
  nworkers: 0
  monitoring: none
  sample_every: 4
  sample_nlabels: 4
  optimizer: {optimizer}
  lr_g: 0.0001
  lr_d: 0.0001
"""


def ganstab_cifar(dev):
    """LMescheder/GAN_stability's train.py as is with a CIFAR-10 config written here (inheriting its
    `configs/default.yaml`: 32x32 `resnet2` networks of 16 filters, batch 16, no loader workers, samples every 4
    iterations for 4 labels, the model average kept; the standard GAN with its R1 penalty on real data and RMSprop,
    and WGAN-GP with Adam, two modes), on synthetic CIFAR-10 (torchvision's `CIFAR10` answered by 512 `FakeData`
    images), its own `cuda:0` (the CPU smoke run: its `--no-cuda`); `yaml.load` given the full loader. The window
    spans the 2nd to the 16th `backward` of its endless loop and then ends it: discriminator steps with their
    regulariser, generator steps, the model average, its loss reads and the class-conditional samples."""
    root = _need_repo("ganstab")

    def mode(gan_type, reg_type, optimizer):
        def window():
            tmp = Path(tempfile.mkdtemp(prefix="fresh34-ganstab-"))
            cfg = tmp / "cifar.yaml"
            cfg.write_text(_GANSTAB_CONFIG.format(tmp=tmp, gan_type=gan_type, reg_type=reg_type,
                                                  optimizer=optimizer))
            shutil.copytree(root / "configs", tmp / "configs")
            args = [str(cfg)] + (["--no-cuda"] if dev.type != "cuda" else [])
            with _fake_dataset("CIFAR10", 512, (3, 32, 32)), _yaml_full_loader(), \
                    hc.window_on(torch.Tensor, "backward", "ganstab.cifar", "train", dev, 2, 16, stop_script=True):
                hc.run_script(root / "train.py", args, str(tmp))
        return window
    return {"r1_window": mode("standard", "real", "rmsprop"), "wgangp_window": mode("wgan", "wgangp", "adam")}


MODELS = [
    # name, package, builder
    ("anomalib.detect", "anomalib", anomalib_detect),
    ("compressed_tensors.quant", "compressed_tensors", compressed_tensors_quant),
    ("fairscale.tools", "fairscale", fairscale_tools),
    ("lhotse.speech", "lhotse", lhotse_speech),
    ("litgpt.llm", "litgpt", litgpt_llm),
    ("imgcls.cifar", "imgcls", imgcls_cifar),
    ("ganstab.cifar", "ganstab", ganstab_cifar),
]


def prepare() -> None:
    """The repositories' files and the wheels (fresh_collect's prepare), the source-only ones built into wheels,
    and the collector's code copied for the GPU machine."""
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(WHEELS_DIR), *SDIST_WHEELS],
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh34", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
