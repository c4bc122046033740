"""Record the syncs of a thirty-fourth set, `fresh33` (a sealed test set): libraries and training code nobody here read.

`fresh33` is recorded the same way as `fresh9` to `fresh31` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set, the earlier sets
and the hand labels, and in two public training repositories that no set and no hand label uses. It is a sealed
test set: scored for totals only, its misses never listed. The workloads were written from the libraries'
documented public API (README / PyPI descriptions, the names, signatures and docstrings they export), on synthetic
data with random weights (pesto and silero-vad run the weights their wheels ship), before anyone ran the linter on
this code or read it for syncs. Every input is put on the device explicitly, as the libraries' docs do (`.to(dev)`,
`device=`; torchgan's `Trainer(..., device=)` moves each batch to the device it is given): no workload runs under a
default-device context.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh33), names m to z: nara_wpe (weighted
  prediction error dereverberation, its torch implementation `nara_wpe.torch_wpe`), pesto (pesto-pitch:
  self-supervised pitch estimation, its shipped checkpoints, batch, chunked and streaming), silero_vad (silero-vad:
  voice activity detection with its shipped model, speech timestamps, a streaming iterator, chunk collection), tabm
  (TabM: parameter-efficient ensembles of MLPs for tabular data), torchgan (GAN training with its `Trainer`, DCGAN
  and ACGAN models and its losses), torchnlp (pytorch-nlp: attention, locked and weight dropout, CNN encoder, text
  encoders, accuracy metrics) and torchsr (super-resolution networks: NinaSR, EDSR, CARN, RCAN, RDN, VDSR);
  + omegaconf and antlr4-python3-runtime (pesto's; the latter a source distribution only, built into a wheel by
  `prepare`), rtdl_num_embeddings (tabm's, not used). Their other needs (numpy, scipy, torchaudio, tqdm,
  torchvision, pillow) are on the GPU machine. ring-attention-pytorch (0.5.20) was left out after the first GPU
  call: its import ended the process (`SystemExit`) on the GPU machine; the replacements tried (torchlens,
  super-image, stribor) did not import or had an API we could not use in the time left.
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh33/repos/<name>:
  dome272/Diffusion-Models-pytorch (ddpm.py and ddpm_conditional.py as they are: a DDPM's UNet, unconditional and
  class-conditional with classifier-free guidance and an EMA copy, its image folder answered by synthetic images;
  both write to torch.utils.tensorboard's `SummaryWriter`, answered by a stub) and w86763777/pytorch-ddpm (main.py
  as is, `--train` with a smaller UNet: a DDPM on CIFAR-10 with warm-up, gradient clipping, an EMA copy and its
  sampler, on synthetic CIFAR-10 files; its `tensorboardX` import answered by a stub). A first choice,
  jalola/improved-wgan-pytorch, was left out after the CPU smoke run: its generator's `view` fails under the
  current torch (as is, outside the recorder too).

    python benchmarks/fresh33_collect.py prepare        # here, with network: wheels, repo and code copies
    python benchmarks/fresh33_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh33 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh33 --no-false-flags [--linter REV]` (totals only).
"""

from __future__ import annotations

import math
import os
import shutil
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
BENCH_DIR = ac.REPO / ".bench" / "fresh33"
REPOS_DIR, WHEELS_DIR, CODE_DIR = BENCH_DIR / "repos", ac.REPO / ".whl" / "fresh33", BENCH_DIR / "code"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh33/repos/<name>)
REPOS = {
    "diffmodels": ("dome272/Diffusion-Models-pytorch", "be352208d0576039fec061238c0e4385a562a2d4",
             ["ddpm.py", "ddpm_conditional.py", "modules.py", "utils.py"]),
    "cifarddpm": ("w86763777/pytorch-ddpm", "f804ccbd58a758b07f79a3b9ecdfb1beb67258f6",
                  ["main.py", "diffusion.py", "model.py", "score"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["nara_wpe==0.0.11", "pesto-pitch==2.0.1", "omegaconf==2.3.0",
          "silero-vad==6.2.3", "tabm==0.0.3", "rtdl_num_embeddings==0.0.12", "torchgan==0.1.0",
          "pytorch-nlp==0.5.0", "torchsr==1.0.4"]
# omegaconf's parser runtime ships as a source distribution only (pure Python): `prepare` builds its wheel here
SDIST_WHEELS = ["antlr4-python3-runtime==4.9.3"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"nara_wpe": "nara_wpe", "pesto": "pesto-pitch",
         "silero_vad": "silero-vad", "tabm": "tabm", "torchgan": "torchgan", "torchnlp": "pytorch-nlp",
         "torchsr": "torchsr", "omegaconf": "omegaconf", "rtdl_num_embeddings": "rtdl_num_embeddings",
         "numpy": "numpy", "einops": "einops", "torchvision": "torchvision", "torchaudio": "torchaudio"}
# the collector and the helpers it imports, copied by `prepare` into .bench/fresh33/code: the GPU machine runs
# another checkout, where the command copies them into benchmarks/
CODE = ["fresh33_collect.py", "accuracy_collect.py", "fresh_collect.py", "heldout_collect.py"]


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _voiced(seconds: float, sr: int, seed: int = 0, gaps: bool = True) -> torch.Tensor:
    """A harmonic tone (five partials) whose pitch glides around 150-250 Hz, switched on and off in bursts when
    `gaps`, with a little noise: a mono CPU signal of `seconds` at `sr`."""
    g = torch.Generator().manual_seed(seed)
    t = torch.arange(int(seconds * sr)) / sr
    f0 = 200.0 + 50.0 * torch.sin(2 * math.pi * (0.5 + 0.1 * seed) * t)
    phase = 2 * math.pi * torch.cumsum(f0, 0) / sr
    x = sum(torch.sin(k * phase) / k for k in range(1, 6))
    if gaps:
        x = x * (torch.sin(2 * math.pi * (0.9 + 0.1 * seed) * t) > -0.1).float()
    return (0.3 * x + 0.01 * torch.randn(t.shape, generator=g)).float()


# ============================================================================================
# Libraries
# ============================================================================================

# -- pesto (pesto-pitch): the README's Python API, `pesto.predict(x, sr, step_size=, reduction=, num_chunks=,
#    convert_to_freq=)` on batches and single signals, `load_model("mir-1k_g7", step_size=, sampling_rate=)` moved
#    to the device and called as `pesto_model(x, sr)`, the `convert_to_freq=` / `return_activations=` options, and
#    the streaming model (`streaming=True, max_batch_size=`) fed buffer after buffer ---------------------------------

def pesto_pitch(dev):
    import pesto
    from pesto import load_model

    def predict():
        x = torch.stack([_voiced(1.5, 16000, s) for s in range(3)]).to(dev)
        for reduction in ("alwa", "argmax"):
            for convert in (True, False):
                timesteps, pitch, confidence, activations = pesto.predict(x, 16000, step_size=10.0, reduction=reduction,
                                                                          convert_to_freq=convert)
                print(f"{reduction} freq={convert}: {tuple(pitch.shape)} {pitch.mean().item():.1f} "
                      f"conf {confidence.mean().item():.3f}")
        long = _voiced(5.0, 16000, 7).to(dev)
        timesteps, pitch, confidence, activations = pesto.predict(long, 16000, num_chunks=2)
        print(f"chunks: {tuple(pitch.shape)}")

    def model():
        pesto_model = load_model("mir-1k_g7", step_size=20.0).to(dev)
        for sr in (16000, 22050):
            for s in range(3):
                x = torch.stack([_voiced(1.0, sr, s), _voiced(1.0, sr, s + 3)]).to(dev)
                predictions, confidence, amplitude, activations = pesto_model(x, sr)
                f0, conf, amp = pesto_model(x, sr, convert_to_freq=True, return_activations=False)
                print(f"sr {sr}: {tuple(predictions.shape)} f0 {f0.median().item():.1f} voiced "
                      f"{(conf > 0.5).float().mean().item():.2f}")

    def streaming():
        pesto_model = load_model("mir-1k_g7", step_size=5.0, sampling_rate=48000, streaming=True,
                                 max_batch_size=4).to(dev)
        audio = torch.stack([_voiced(0.4, 48000, s, gaps=False) for s in range(3)]).to(dev)
        pitches = []
        for i in range(0, 40 * 240, 240):
            buffers = audio[:, i:i + 240]
            pitch, conf, amp = pesto_model(buffers, return_activations=False)
            pitches.append(pitch)
        print(f"streaming: {torch.stack(pitches).shape} {torch.stack(pitches)[-5:].mean().item():.1f}")

    return {"predict": predict, "model": model, "streaming": streaming}


# -- silero_vad (silero-vad): the README's `load_silero_vad()` (its shipped model, moved to the device) and
#    `get_speech_timestamps(wav, model, return_seconds=, sampling_rate=, threshold=, min_silence_duration_ms=,
#    max_speech_duration_s=, speech_pad_ms=)`; `VADIterator(model, sampling_rate=)` over 512-sample chunks;
#    `collect_chunks` / `drop_chunks`; `get_speech_timestamps_from_probs` on the model's per-chunk probabilities ----

def silero_vad_detect(dev):
    from silero_vad import (
        VADIterator,
        collect_chunks,
        drop_chunks,
        get_speech_timestamps,
        get_speech_timestamps_from_probs,
        load_silero_vad,
    )

    def wav(sr, seed, seconds=3.0):
        """A speech-like signal: a rich harmonic source (thirty partials, jittered pitch) in syllables of about
        a quarter second, with pauses, and a little noise."""
        g = torch.Generator().manual_seed(seed)
        t = torch.arange(int(seconds * sr)) / sr
        f0 = 130.0 + 40.0 * torch.sin(2 * math.pi * 3.0 * t) + 5.0 * torch.randn(len(t), generator=g).cumsum(0) / sr
        phase = 2 * math.pi * torch.cumsum(f0, 0) / sr
        x = sum(torch.sin(k * phase) * (1.0 / k) * (1 + 0.5 * torch.sin(2 * math.pi * 2.0 * k * t))
                for k in range(1, 31))
        syll = torch.sin(2 * math.pi * 4.0 * t).clamp(min=0) ** 0.5
        pause = (torch.sin(2 * math.pi * 0.6 * t + seed) > -0.3).float()
        return (0.2 * x * syll * pause + 0.005 * torch.randn(len(t), generator=g)).float().to(dev)

    def timestamps():
        model = load_silero_vad().to(dev)
        for sr in (16000, 8000):
            for seed in range(2):
                w = wav(sr, seed)
                ts = get_speech_timestamps(w, model, sampling_rate=sr, threshold=0.3)
                ts_s = get_speech_timestamps(w, model, sampling_rate=sr, return_seconds=True, threshold=0.4,
                                             min_silence_duration_ms=50, max_speech_duration_s=1.0, speech_pad_ms=10)
                print(f"sr {sr}: {len(ts)} segments, {ts_s[:2]}")

    def iterator():
        model = load_silero_vad().to(dev)
        vad_iterator = VADIterator(model, threshold=0.3, sampling_rate=16000)
        w = wav(16000, 2)
        events = []
        for i in range(0, len(w) - 512, 512):
            speech_dict = vad_iterator(w[i:i + 512], return_seconds=True)
            if speech_dict:
                events.append(speech_dict)
        vad_iterator.reset_states()
        print(f"iterator: {events[:4]}")

    def chunks():
        model = load_silero_vad().to(dev)
        w = wav(16000, 3)
        ts = get_speech_timestamps(w, model, sampling_rate=16000, threshold=0.3) or [{"start": 8000, "end": 24000}]
        speech = collect_chunks(ts, w)
        rest = drop_chunks(ts, w)
        ts_s = get_speech_timestamps(w, model, sampling_rate=16000, return_seconds=True, threshold=0.3) or [
            {"start": 0.5, "end": 1.5}]
        speech_s = collect_chunks(ts_s, w, seconds=True, sampling_rate=16000)
        print(f"chunks: {tuple(speech.shape)} {tuple(rest.shape)} {tuple(speech_s.shape)}")

    def from_probs():
        model = load_silero_vad().to(dev)
        w = wav(16000, 4)
        probs = []
        for i in range(0, len(w) - 512, 512):
            probs.append(model(w[i:i + 512], 16000))
        probs = torch.cat([p.flatten() for p in probs]).tolist()
        ts = get_speech_timestamps_from_probs(probs, sampling_rate=16000, return_seconds=True, threshold=0.3)
        print(f"from probs: {ts[:3]}")

    return {"timestamps": timestamps, "iterator": iterator, "chunks": chunks, "from_probs": from_probs}


# -- tabm: `TabM.make(n_num_features=, cat_cardinalities=, d_out=, ...)` (the docstring's recipe; `arch_type=` and
#    `k=` of the README), trained on numeric and categorical features with the loss over the k predictions, the
#    ensemble's mean prediction evaluated ----------------------------------------------------------------------

def tabm_train(dev):
    import tabm

    def task(kind, **kw):
        def run():
            g = torch.Generator().manual_seed(0)
            n = 768
            x_num = torch.randn(n, 8, generator=g)
            x_cat = torch.stack([torch.randint(0, 3, (n,), generator=g), torch.randint(0, 5, (n,), generator=g)], 1)
            score = x_num[:, 0] - 0.5 * x_num[:, 1] * x_num[:, 2] + 0.7 * (x_cat[:, 0] == 1) - 0.3 * x_cat[:, 1]
            x_num, x_cat = x_num.to(dev), x_cat.to(dev)
            if kind == "regression":
                y, d_out = score.to(dev), 1
            else:
                y, d_out = torch.bucketize(score, torch.tensor([-0.8, 0.4])).to(dev), 3
            torch.manual_seed(0)
            model = tabm.TabM.make(n_num_features=8, cat_cardinalities=[3, 5], d_out=d_out, **kw).to(dev)
            opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=3e-4)
            for epoch in range(3):  # noqa: B007
                for idx in torch.randperm(n, device=dev).split(128):
                    model.train()
                    out = model(x_num[idx], x_cat[idx])
                    k = out.shape[1]
                    if kind == "regression":
                        loss = F.mse_loss(out.squeeze(-1), y[idx].unsqueeze(1).expand(-1, k))
                    else:
                        loss = F.cross_entropy(out.flatten(0, 1), y[idx].repeat_interleave(k))
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
            model.eval()
            with torch.no_grad():
                out = model(x_num, x_cat)
            if kind == "regression":
                rmse = (out.squeeze(-1).mean(1) - y).pow(2).mean().sqrt().item()
                print(f"{kind} {kw}: loss {loss.item():.3f}, rmse {rmse:.3f}")
            else:
                acc = (out.softmax(-1).mean(1).argmax(-1) == y).float().mean().item()
                print(f"{kind} {kw}: loss {loss.item():.3f}, acc {acc:.3f}")
        return run

    return {"classification": task("classification"), "regression": task("regression"),
            "mini": task("classification", arch_type="tabm-mini", k=16),
            "packed": task("regression", arch_type="tabm-packed", k=8)}


# -- nara_wpe: `nara_wpe.torch_wpe.wpe_v6(Y, taps=, delay=, iterations=, psd_context=, statistics_mode=)` per
#    frequency bin (its docstring: "applicable in for-loops") and `wpe_v8(Y, ...)` over (F, D, T), on the STFT
#    (`torch.stft` on the device) of a synthetic reverberant multi-channel recording ---------------------------------

def _reverberant(channels=4, seconds=1.0, sr=8000, seed=0):
    """A voiced source convolved with a decaying random room response per channel (CPU, (channels, samples))."""
    g = torch.Generator().manual_seed(seed)
    s = _voiced(seconds, sr, seed)
    n_rir = int(0.25 * sr)
    decay = torch.exp(-torch.arange(n_rir) / (0.05 * sr))
    outs = []
    for c in range(channels):
        rir = torch.randn(n_rir, generator=g) * decay
        rir[int(0.002 * sr * (c + 1))] += 1.0
        outs.append(torch.from_numpy(__import__("numpy").convolve(s.numpy(), rir.numpy())[:len(s)]).float())
    return torch.stack(outs)


def nara_wpe_dereverb(dev):
    from nara_wpe.torch_wpe import wpe_v6, wpe_v8

    def stft(seed):
        y = _reverberant(seed=seed).to(dev)
        Y = torch.stft(y, 256, 64, window=torch.hann_window(256, device=dev), return_complex=True)  # (D, F, T)
        return Y.permute(1, 0, 2).contiguous()  # (F, D, T)

    def v6(statistics_mode, psd_context=0):
        def run():
            Y = stft(0)
            Z = torch.empty_like(Y)
            for f in range(Y.shape[0]):
                Z[f] = wpe_v6(Y[f], taps=8, delay=2, iterations=2, psd_context=psd_context,
                              statistics_mode=statistics_mode)
            print(f"v6 {statistics_mode}: {tuple(Z.shape)} {(Z.abs() ** 2).mean().item():.4f}")
        return run

    def v8():
        for seed, taps in ((1, 6), (2, 10)):
            Y = stft(seed)
            Z = wpe_v8(Y, taps=taps, delay=3, iterations=3)
            print(f"v8 taps {taps}: {tuple(Z.shape)} {(Z.abs() ** 2).mean().item():.4f}")

    return {"v6": v6("full"), "v6_valid": v6("valid"), "v8": v8}


# -- torchgan: the docs' recipe, a `Trainer(models, losses_list, device=, epochs=, sample_size=, checkpoints=,
#    recon=, log_dir=)` whose `models` maps "generator" / "discriminator" to `{"name": class, "args": {...},
#    "optimizer": {"name": torch.optim.Adam, "args": {...}}}`, called on a DataLoader; DCGAN with the minimax,
#    least-squares and Wasserstein (gradient penalty) losses, ACGAN with its labels (a conditional-GAN mode was cut
#    after the first GPU call: torchgan held 40% of the set's lines) ----------------------------------------------

class _make_grid_range:
    """torchvision's `make_grid` / `save_image` given the `range=` keyword they took before torchvision 0.15 (now
    `value_range=`), which torchgan's trainer passes when it saves its samples (seen in the CPU smoke run)."""

    def __enter__(self):
        import torchvision.utils as tu
        self.tu, self.orig = tu, (tu.make_grid, tu.save_image)

        def renamed(f):
            def g(*a, **k):
                if "range" in k:
                    k["value_range"] = k.pop("range")
                return f(*a, **k)
            return g
        tu.make_grid, tu.save_image = renamed(self.orig[0]), renamed(self.orig[1])
        return self

    def __exit__(self, *exc):
        self.tu.make_grid, self.tu.save_image = self.orig


def torchgan_train(dev):
    from torchgan import losses as L
    from torchgan import models as M
    from torchgan.trainer import Trainer

    def data():
        g = torch.Generator().manual_seed(0)
        n = 64
        yy, xx = torch.meshgrid(torch.linspace(-1, 1, 32), torch.linspace(-1, 1, 32), indexing="ij")
        labels = torch.randint(0, 4, (n,), generator=g)
        c = torch.rand(n, 2, generator=g) - 0.5
        r = 0.2 + 0.1 * labels.float()
        disc = ((yy[None] - c[:, :1, None]) ** 2 + (xx[None] - c[:, 1:, None]) ** 2 < r[:, None, None] ** 2).float()
        imgs = torch.stack([disc, disc * (labels[:, None, None] % 2), 1 - disc], 1) * 2 - 1
        ds = torch.utils.data.TensorDataset(imgs + 0.05 * torch.randn(imgs.shape, generator=g), labels)
        return torch.utils.data.DataLoader(ds, batch_size=16, shuffle=True)

    def run_gan(gen, disc, losses, gen_args=None, disc_args=None):
        def run():
            torch.manual_seed(0)
            tmp = hc._tmp()
            opt = {"name": torch.optim.Adam, "args": {"lr": 2e-4, "betas": (0.5, 0.999)}}
            network = {"generator": {"name": gen, "args": {"encoding_dims": 32, "out_size": 32, "step_channels": 16,
                                                           **(gen_args or {})}, "optimizer": opt},
                       "discriminator": {"name": disc, "args": {"in_size": 32, "step_channels": 16,
                                                                **(disc_args or {})}, "optimizer": opt}}
            trainer = Trainer(network, losses, device=dev, epochs=2, sample_size=8,
                              checkpoints=os.path.join(tmp, "gan"), recon=os.path.join(tmp, "images"),
                              log_dir=os.path.join(tmp, "logs"))
            with _make_grid_range():
                trainer(data())
            print(f"{gen.__name__}: {[type(x).__name__ for x in losses]} done")
        return run

    return {"minimax": run_gan(M.DCGANGenerator, M.DCGANDiscriminator,
                               [L.MinimaxGeneratorLoss(), L.MinimaxDiscriminatorLoss()]),
            "lsgan": run_gan(M.DCGANGenerator, M.DCGANDiscriminator,
                             [L.LeastSquaresGeneratorLoss(), L.LeastSquaresDiscriminatorLoss()]),
            "wgan_gp": run_gan(M.DCGANGenerator, M.DCGANDiscriminator,
                               [L.WassersteinGeneratorLoss(), L.WassersteinDiscriminatorLoss(),
                                L.WassersteinGradientPenalty()], disc_args={"batchnorm": False}),
            "acgan": run_gan(M.ACGANGenerator, M.ACGANDiscriminator,
                             [L.AuxiliaryClassifierGeneratorLoss(), L.AuxiliaryClassifierDiscriminatorLoss(),
                              L.MinimaxGeneratorLoss(), L.MinimaxDiscriminatorLoss()],
                             gen_args={"num_classes": 4}, disc_args={"num_classes": 4})}


# -- torchnlp (pytorch-nlp): the README's `WhitespaceEncoder(texts)` and `stack_and_pad_tensors`, with the layers of
#    `torchnlp.nn` (`CNNEncoder(embedding_dim, num_filters)`, `Attention(dimensions, attention_type=)`,
#    `LockedDropout(p)`, `WeightDropLSTM(..., weight_dropout=)`, `WeightDropGRU`) in small text models trained on the
#    device, and `torchnlp.metrics.get_accuracy` / `get_token_accuracy(targets, outputs, ignore_index=)` each step --

def _texts(n=96, seed=0):
    g = torch.Generator().manual_seed(seed)
    pos, neg, filler = ["good", "great", "fine", "nice"], ["bad", "poor", "awful", "sad"], ["the", "a", "film", "was",
                                                                                           "it", "and", "very", "so"]
    texts, labels = [], []
    for _ in range(n):
        y = int(torch.randint(0, 2, (1,), generator=g))
        words = [filler[int(i)] for i in torch.randint(0, len(filler), (int(torch.randint(4, 12, (1,), generator=g)),),
                                                       generator=g)]
        for _ in range(2):
            words.insert(int(torch.randint(0, len(words), (1,), generator=g)),
                         (pos if y else neg)[int(torch.randint(0, 4, (1,), generator=g))])
        texts.append(" ".join(words))
        labels.append(y)
    return texts, labels


def torchnlp_models(dev):
    from torchnlp.encoders.text import WhitespaceEncoder, stack_and_pad_tensors
    from torchnlp.metrics import get_accuracy, get_token_accuracy
    from torchnlp.nn import Attention, CNNEncoder, LockedDropout, WeightDropGRU, WeightDropLSTM

    texts, labels = _texts()
    encoder = WhitespaceEncoder(texts)
    batch = stack_and_pad_tensors([encoder.encode(t) for t in texts])
    tokens, lengths = batch.tensor.to(dev), batch.lengths.to(dev)
    y = torch.tensor(labels).to(dev)
    V = encoder.vocab_size

    def classifier():
        torch.manual_seed(0)
        emb = nn.Embedding(V, 32).to(dev)
        cnn = CNNEncoder(32, 16, ngram_filter_sizes=(2, 3), output_dim=2).to(dev)
        opt = torch.optim.Adam([*emb.parameters(), *cnn.parameters()], lr=3e-3)
        for step in range(10):  # noqa: B007
            logits = cnn(emb(tokens), mask=(tokens != encoder.padding_index).float())
            loss = F.cross_entropy(logits, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            acc, n_correct, n_total = get_accuracy(y, logits.argmax(-1))
        print(f"cnn: loss {loss.item():.3f} acc {acc:.2f} ({n_correct}/{n_total})")

    def attention(kind):
        def run():
            torch.manual_seed(0)
            emb = nn.Embedding(V, 32).to(dev)
            enc = nn.GRU(32, 32, batch_first=True).to(dev)
            dec = WeightDropGRU(32, 32, batch_first=True, weight_dropout=0.2).to(dev)
            attn = Attention(32, attention_type=kind).to(dev)
            drop = LockedDropout(0.2).to(dev)
            out_proj = nn.Linear(32, V).to(dev)
            params = [*emb.parameters(), *enc.parameters(), *dec.parameters(), *attn.parameters(),
                      *out_proj.parameters()]
            opt = torch.optim.Adam(params, lr=3e-3)
            tgt = tokens.flip(1)  # reverse the sequence: a copy task with attention
            for step in range(8):  # noqa: B007
                context, _ = enc(emb(tokens))
                h, _ = dec(drop(emb(tgt).transpose(0, 1)).transpose(0, 1))
                out, weights = attn(h.contiguous(), context.contiguous())
                logits = out_proj(out)
                loss = F.cross_entropy(logits.flatten(0, 1), tgt.flatten(), ignore_index=encoder.padding_index)
                opt.zero_grad()
                loss.backward()
                opt.step()
                acc, n_correct, n_total = get_token_accuracy(tgt, logits.argmax(-1),
                                                             ignore_index=encoder.padding_index)
            print(f"attention {kind}: loss {loss.item():.3f} token acc {acc:.2f}, weights {tuple(weights.shape)}")
        return run

    def lm():
        torch.manual_seed(0)
        emb = nn.Embedding(V, 32).to(dev)
        rnn = WeightDropLSTM(32, 64, weight_dropout=0.3).to(dev)
        drop = LockedDropout(0.3).to(dev)
        head = nn.Linear(64, V).to(dev)
        opt = torch.optim.SGD([*emb.parameters(), *rnn.parameters(), *head.parameters()], lr=0.5)
        seq = tokens.t()  # (T, B)
        for step in range(8):  # noqa: B007
            h, _ = rnn(drop(emb(seq[:-1])))
            logits = head(drop(h))
            loss = F.cross_entropy(logits.flatten(0, 1), seq[1:].flatten(), ignore_index=encoder.padding_index)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(rnn.parameters(), 0.25)
            opt.step()
            acc, n_correct, n_total = get_token_accuracy(seq[1:], logits.argmax(-1), ignore_index=encoder.padding_index)
        print(f"lm: loss {loss.item():.3f} token acc {acc:.2f}, lengths {lengths.float().mean().item():.1f}")

    return {"classifier": classifier, "attention_general": attention("general"), "attention_dot": attention("dot"),
            "lm": lm}


# -- torchsr: the README's models (`ninasr_b0`, `edsr_baseline`, `carn`, `rcan`, `vdsr`, `rdn`, each
#    `(scale=, pretrained=False)`: random weights) trained a few steps on synthetic high/low-resolution pairs with an
#    L1 loss and evaluated by PSNR -------------------------------------------------------------------------------

def torchsr_models(dev):
    from torchsr import models

    def pairs(seed, n=4, size=48, scale=2):
        g = torch.Generator().manual_seed(seed)
        yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij")
        freq = 2 + 6 * torch.rand(n, 3, 1, 1, generator=g)
        hr = 0.5 + 0.5 * torch.sin(2 * math.pi * freq * (xx + 0.5 * yy)) * torch.cos(2 * math.pi * freq * yy)
        lr = F.interpolate(hr, scale_factor=1 / scale, mode="bicubic", align_corners=False).clamp(0, 1)
        return lr.to(dev), hr.to(dev)

    def train(name, steps=6):
        def run():
            torch.manual_seed(0)
            model = getattr(models, name)(scale=2, pretrained=False).to(dev)
            opt = torch.optim.Adam(model.parameters(), lr=1e-4)
            for step in range(steps):
                lr, hr = pairs(step)
                sr = model(lr)
                loss = F.l1_loss(sr, hr)
                opt.zero_grad()
                loss.backward()
                opt.step()
            model.eval()
            with torch.no_grad():
                lr, hr = pairs(99)
                sr = model(lr).clamp(0, 1)
                psnr = -10 * torch.log10(F.mse_loss(sr, hr))
            print(f"{name}: loss {loss.item():.4f} psnr {psnr.item():.2f}")
        return run

    return {"ninasr": train("ninasr_b0"), "edsr": train("edsr_baseline"), "carn": train("carn"),
            "rcan": train("rcan", 3), "vdsr": train("vdsr"), "rdn": train("rdn", 3)}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def _image_folder(root: Path, n: int, classes: int, size: int = 64, seed: int = 0) -> None:
    """`n` synthetic PNG images (a coloured disc whose colour and size follow its class, on a gradient, with noise)
    in `classes` sub-folders of `root`: what torchvision's `ImageFolder` reads."""
    from PIL import Image
    g = torch.Generator().manual_seed(seed)
    yy, xx = torch.meshgrid(torch.linspace(0, 1, size), torch.linspace(0, 1, size), indexing="ij")
    for c in range(classes):
        (root / f"class{c}").mkdir(parents=True, exist_ok=True)
    for i in range(n):
        c = i % classes
        cy, cx = (0.25 + 0.5 * torch.rand(2, generator=g)).tolist()
        disc = (((yy - cy) ** 2 + (xx - cx) ** 2) < (0.1 + 0.03 * c) ** 2).float()
        colour = torch.tensor([(c * 0.37) % 1.0, (c * 0.61 + 0.2) % 1.0, (c * 0.83 + 0.4) % 1.0])
        img = (0.3 * torch.stack([xx, yy, 1 - xx]) * (1 - disc) + colour[:, None, None] * disc
               + 0.05 * torch.rand(3, size, size, generator=g)).clamp(0, 1)
        Image.fromarray((img.permute(1, 2, 0) * 255).byte().numpy()).save(root / f"class{c}" / f"{i:04d}.png")


class _tensorboard_stub:
    """torch.utils.tensorboard and tensorboardX (their `SummaryWriter`, which the scripts import and write to)
    answered by a stub whose methods do nothing: no event files, no package that the GPU machine lacks."""

    NAMES = ("torch.utils.tensorboard", "tensorboardX")

    def __enter__(self):
        class SummaryWriter:
            def __init__(self, *a, **k):
                pass

            def __getattr__(self, name):
                return lambda *a, **k: None

        self.saved = {n: sys.modules.get(n) for n in self.NAMES}
        for n in self.NAMES:
            stub = types.ModuleType(n)
            stub.SummaryWriter = SummaryWriter
            sys.modules[n] = stub
        return self

    def __exit__(self, *exc):
        for n, m in self.saved.items():
            if m is None:
                sys.modules.pop(n, None)
            else:
                sys.modules[n] = m


def _ddpm(dev, name: str, script: str, n: int, classes: int, stop: int):
    """dome272/Diffusion-Models-pytorch's `script` as is (its `launch()`: 64x64 images, AdamW, the UNet's noise
    prediction loss at random timesteps, `args.device = "cuda"`), run from a temporary folder (its models/,
    results/ and runs/ there), with the repository's root on the path for its `utils` and `modules`, and the image
    folder its `launch()` names (a Windows path) answered by `n` synthetic images in `classes` classes
    (`_image_folder`; torchvision's `ImageFolder` given that folder instead). The window spans the 2nd to the
    `stop`-th `backward`: training steps of the first epoch (the sampling at an epoch's end is not reached). In the
    CPU smoke run only, a copy of its files whose "cuda" strings read "cpu" runs instead, its window to the 3rd."""
    root = _need_repo("diffmodels")
    last = stop if dev.type == "cuda" else 3  # the CPU smoke run: a minute a step there
    tmp = Path(hc._tmp())
    folder = tmp / "images"
    _image_folder(folder, n, classes)

    def window():
        import matplotlib
        matplotlib.use("Agg")
        import torchvision.datasets as tvd
        orig = tvd.ImageFolder
        src = root
        if dev.type != "cuda":
            src = tmp / "cpu_copy"
            src.mkdir(exist_ok=True)
            for f in root.glob("*.py"):
                (src / f.name).write_text(f.read_text().replace('"cuda"', '"cpu"'))
        path = src / script
        tvd.ImageFolder = lambda _root, *a, **k: orig(str(folder), *a, **k)
        sys.path.insert(0, str(src))
        try:
            with _tensorboard_stub(), hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, last,
                                                   stop_script=True):
                hc.run_script(path, [], str(tmp))
        finally:
            tvd.ImageFolder = orig
            sys.path.remove(str(src))
            for m in ("utils", "modules"):
                sys.modules.pop(m, None)
    return {"train_window": window}


def ddpm_unconditional(dev):
    """ddpm.py (batch size 12): 120 images of one class; window 2nd to 8th `backward`."""
    return _ddpm(dev, "diffmodels.unconditional", "ddpm.py", 120, 1, 8)


def ddpm_conditional(dev):
    """ddpm_conditional.py (batch size 14, ten classes, labels dropped one step in ten for classifier-free
    guidance, an EMA copy stepped after each step): 140 images of ten classes; window 2nd to 8th `backward`."""
    return _ddpm(dev, "diffmodels.conditional", "ddpm_conditional.py", 140, 10, 8)


def _cifar(folder: Path, n_train: int = 320, n_test: int = 100, seed: int = 0) -> None:
    """Synthetic CIFAR-10 batch files in torchvision's layout (cifar-10-batches-py/data_batch_1..5, test_batch,
    batches.meta): uint8 images whose mean colour follows the label (as fresh24's)."""
    import pickle

    import numpy as np
    rng = np.random.default_rng(seed)
    d = folder / "cifar-10-batches-py"
    d.mkdir(parents=True)

    def batch(n):
        labels = rng.integers(0, 10, n)
        base = (labels[:, None] * 25).astype(np.int64)
        data = np.clip(base + rng.integers(-40, 40, (n, 3072)), 0, 255).astype(np.uint8)
        return {"data": data, "labels": labels.tolist()}
    for i in range(1, 6):
        with open(d / f"data_batch_{i}", "wb") as f:
            pickle.dump(batch(n_train // 5), f)
    with open(d / "test_batch", "wb") as f:
        pickle.dump(batch(n_test), f)
    with open(d / "batches.meta", "wb") as f:
        pickle.dump({"label_names": [f"class{i}" for i in range(10)]}, f)


class _no_md5:
    """torchvision's md5 checks of the synthetic CIFAR files, skipped (the script asks `download=True`)."""

    def __enter__(self):
        import torchvision.datasets.cifar as cifar
        self.cifar, self.orig = cifar, cifar.check_integrity
        cifar.check_integrity = lambda *a, **k: True

    def __exit__(self, *exc):
        self.cifar.check_integrity = self.orig


def _cifar_ddpm(dev, name: str, extra: list, stop: int):
    """w86763777/pytorch-ddpm's main.py as is (`--train`, its absl flags: a smaller UNet `--ch 64`, `--batch_size 16`,
    `--num_workers 0`, `--T 100` diffusion steps, `--sample_size 8 --sample_step 4`, `--save_step 4`; Adam with a
    warm-up schedule, gradient clipping, the EMA copy updated each step; `device = torch.device('cuda:0')` as it
    writes), run from a temporary folder holding 320 synthetic CIFAR-10 images in ./data (`_cifar`; torchvision's md5
    check skipped) and its log folder; `tensorboardX`'s `SummaryWriter` answered by a stub. The window spans the 2nd
    to the `stop`-th `backward`: training steps, the EMA sampler's reverse diffusion at every 4th step with its image
    grid saved, and the checkpoints. In the CPU smoke run only, a copy of its files whose "cuda:0" reads "cpu" runs
    instead, its window to the 3rd."""
    root = _need_repo("cifarddpm")
    last = stop if dev.type == "cuda" else 3
    tmp = Path(hc._tmp())
    _cifar(tmp / "data")
    argv = ["--train", "--ch", "64", "--batch_size", "16", "--num_workers", "0", "--T", "100", "--sample_size", "8",
            "--sample_step", "4", "--save_step", "4", "--total_steps", "40", "--logdir", str(tmp / "logs"), *extra]

    def window():
        from absl import app, flags, logging  # noqa: F401 (theirs defined before main.py's)
        before = set(flags.FLAGS)
        src = root
        if dev.type != "cuda":
            src = tmp / "cpu_copy"
            shutil.copytree(root, src, dirs_exist_ok=True)
            for f in src.glob("*.py"):
                f.write_text(f.read_text().replace("'cuda:0'", "'cpu'"))
        sys.path.insert(0, str(src))
        try:
            with _tensorboard_stub(), _no_md5(), hc.window_on(torch.Tensor, "backward", name, "train", dev, 2, last,
                                                              stop_script=True):
                hc.run_script(src / "main.py", argv, str(tmp))
        finally:
            sys.path.remove(str(src))
            for m in ("model", "diffusion", "score", "score.both", "score.fid", "score.inception",
                      "score.inception_score"):
                sys.modules.pop(m, None)
            flags.FLAGS.unparse_flags()
            for f in set(flags.FLAGS) - before:  # main.py's flags: the next run defines them again
                delattr(flags.FLAGS, f)
    return {"train_window": window}


def cifarddpm_eps(dev):
    """main.py's defaults (predicting the noise, `fixedlarge` variance); window 2nd to 11th `backward`."""
    return _cifar_ddpm(dev, "cifarddpm.eps", [], 11)


def cifarddpm_fixedsmall(dev):
    """main.py with `--var_type fixedsmall` (its `--mean_type` other than the default fails its own assertion, a
    missing comma in its list of types: seen in the CPU smoke run); window 2nd to 11th `backward`."""
    return _cifar_ddpm(dev, "cifarddpm.fixedsmall", ["--var_type", "fixedsmall"], 11)


MODELS = [
    # name, package, builder
    ("nara_wpe.dereverb", "nara_wpe", nara_wpe_dereverb),
    ("pesto.pitch", "pesto", pesto_pitch),
    ("silero_vad.detect", "silero_vad", silero_vad_detect),
    ("tabm.train", "tabm", tabm_train),
    ("torchgan.trainer", "torchgan", torchgan_train),
    ("torchnlp.models", "torchnlp", torchnlp_models),
    ("torchsr.models", "torchsr", torchsr_models),
    ("diffmodels.unconditional", "diffmodels", ddpm_unconditional),
    ("diffmodels.conditional", "diffmodels", ddpm_conditional),
    ("cifarddpm.eps", "cifarddpm", cifarddpm_eps),
    ("cifarddpm.fixedsmall", "cifarddpm", cifarddpm_fixedsmall),
]


def prepare() -> None:
    """The repositories' files and the wheels (fresh_collect's prepare), and the collector's code copied for the
    GPU machine."""
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)
    import subprocess
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
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh33", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
