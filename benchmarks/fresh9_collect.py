"""Record the syncs of a tenth set, `fresh9` (a sealed test set): libraries and training code nobody here read.

`fresh9` is recorded the same way as `fresh6` and `fresh8` (same recorder, same windows inside a script's own
loop; this file only adds workloads and imports the machinery) in libraries outside the tuned set and the earlier
sets and in two public training repositories that no set and no hand label uses. It is a sealed test set: scored
for totals only, its misses never listed. The workloads were written from the libraries' documented public API
(README / docs examples, the names and signatures they export), on synthetic data with random weights, before
anyone ran the linter on this code or read it for syncs.

- Libraries carried as wheels (`prepare` downloads them into .whl/fresh9): open_clip_torch (OpenCLIP: CLIP and
  CoCa models with random weights, its losses, zero-shot classifier, caption generation, and its own training
  script `open_clip_train.main` on a synthetic CSV dataset; + ftfy, wcwidth, webdataset, braceexpand),
  fair-esm (ESM-2 protein language model with random weights: representations, contacts, masked-LM training),
  speechbrain (the `Brain` training loop with a CTC recipe, its data pipeline, augmentations, losses and metric
  stats; + hyperpyyaml, ruamel.yaml), torchbearer (its `Trial` loop with metrics and callbacks), torchani
  (2.2.4: an ANI potential built from its AEV computer, trained on a synthetic dataset through torchani.data),
  rotary-embedding-torch and perceiver-pytorch (small models trained with them). Their other needs (timm, regex,
  huggingface-hub, safetensors, sentencepiece, joblib, einops, h5py, tqdm, numpy, scipy, torchvision,
  torchaudio, pillow) are on the GPU machine. torchani 2.2.4 imports `pkg_resources` (the image's setuptools
  has it) and `importlib_metadata` and `lark` (carried).
- Training repositories at pinned commits, copied by `prepare` into .bench/fresh9/repos/<name>:
  yunjey/stargan (main.py / solver.py as they are, on a synthetic CelebA attribute file and image) and
  facebookresearch/dino (main_dino.py as is, with a world size of 1, on a synthetic ImageFolder; GPU only).

    python benchmarks/fresh9_collect.py prepare        # here, with network: wheels and repo copies
    python benchmarks/fresh9_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model and prints a summary table last. `--device cpu` is the
smoke mode a test runs; then `python benchmarks/accuracy.py merge --set fresh9 DIR/sync_raw.json` and
`python benchmarks/accuracy.py --set fresh9 [--linter REV]`.
"""

from __future__ import annotations

import builtins
import os
import runpy
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_collect as ac  # the recorder: imported before any library (it patches torch.cuda)
import fresh_collect as fc
import heldout_collect as hc
import torch
import torch.nn.functional as F
from torch import nn

ac.DRIVER_FILES.add(os.path.abspath(__file__))
REPOS_DIR, WHEELS_DIR = ac.REPO / ".bench" / "fresh9" / "repos", ac.REPO / ".whl" / "fresh9"

# Training repositories: name -> (GitHub owner/name, commit, paths copied into .bench/fresh9/repos/<name>)
REPOS = {
    "stargan": ("yunjey/stargan", "94dd002e93a2863d9b987a937b85925b80f7a19f",
                ["main.py", "solver.py", "model.py", "data_loader.py", "logger.py"]),
    "dino": ("facebookresearch/dino", "7c446df5b9f45747937fb0d72314eb9f7b66930a",
             ["main_dino.py", "utils.py", "vision_transformer.py"]),
}
for _name in REPOS:
    ac.EXTRA_ROOTS[str(REPOS_DIR / _name) + os.sep] = _name

# Wheels carried to the GPU machine (not in its image), exact versions, their own needs included.
WHEELS = ["open_clip_torch==3.3.0", "ftfy==6.3.1", "wcwidth==0.2.13", "webdataset==1.0.2", "braceexpand==0.1.7",
          "fair-esm==2.0.0", "speechbrain==1.1.2", "hyperpyyaml==1.2.3", "ruamel.yaml==0.18.16",
          "torchbearer==0.5.5", "torchani==2.2.4", "lark-parser==0.12.0", "importlib-metadata==8.7.0",
          "rotary-embedding-torch==0.9.1", "perceiver-pytorch==0.11.0"]
# version keys recorded in the metadata: the wheel's name -> its distribution (accuracy.py fetches the
# same wheels by these keys to score the set)
DISTS = {"open_clip_torch": "open_clip_torch", "fair_esm": "fair-esm", "speechbrain": "speechbrain",
         "torchbearer": "torchbearer", "torchani": "torchani", "rotary_embedding_torch": "rotary-embedding-torch",
         "perceiver_pytorch": "perceiver-pytorch", "webdataset": "webdataset", "timm": "timm",
         "torchvision": "torchvision", "torchaudio": "torchaudio", "einops": "einops", "numpy": "numpy",
         "scipy": "scipy", "h5py": "h5py"}


def _need_repo(name: str) -> Path:
    return fc._need_repo(name, REPOS_DIR)


def _blobs(n: int, dev, features: int = 20, classes: int = 5, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=g)
    x = torch.randn(n, features, generator=g) + 1.5 * torch.eye(classes, features)[y]
    return x.to(dev), y.to(dev)


def _images(folder: Path, n: int, size: int = 64, seed: int = 0) -> list:
    """n random RGB JPEG files in folder; their names."""
    import numpy as np
    from PIL import Image
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    names = []
    for i in range(n):
        name = f"img{i:04d}.jpg"
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(folder / name)
        names.append(name)
    return names


# ============================================================================================
# Libraries
# ============================================================================================

# -- open_clip: CLIP (ViT-B-32) and CoCa with random weights: the README's zero-shot use, ClipLoss / SigLipLoss /
#    CoCaLoss training steps, zero-shot classifier, caption generation; its training script on a CSV ------------

def open_clip_models(dev):
    import math

    import open_clip
    from open_clip.loss import SigLipLoss
    from PIL import Image

    model, _, preprocess = open_clip.create_model_and_transforms("ViT-B-32", pretrained=None)
    model = model.to(dev)
    tokenizer = open_clip.get_tokenizer("ViT-B-32")
    captions = ["a diagram", "a dog", "a cat", "a photo of a red square", "two birds", "a car on a road",
                "a bowl of soup", "a mountain"]
    text = tokenizer(captions).to(dev)
    g = torch.Generator().manual_seed(0)
    images = torch.randn(8, 3, 224, 224, generator=g).to(dev)
    amp = torch.autocast(dev.type, dtype=torch.bfloat16, enabled=dev.type == "cuda")

    def contrastive():  # a training step under ClipLoss and one under SigLipLoss (with a learned bias)
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5, weight_decay=0.1)
        clip_loss = open_clip.ClipLoss()
        siglip_loss = SigLipLoss()
        bias = torch.full((), -10.0, device=dev, requires_grad=True)
        for loss_kind in ("clip", "siglip"):
            with amp:
                image_features, text_features, logit_scale = model(images, text)
                if loss_kind == "clip":
                    loss = clip_loss(image_features, text_features, logit_scale)
                else:
                    loss = siglip_loss(image_features, text_features, logit_scale, bias)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                model.logit_scale.clamp_(0, math.log(100))

    def zeroshot():  # the README's example, and build_zero_shot_classifier with its templates
        model.eval()
        image = preprocess(Image.new("RGB", (256, 200), (200, 30, 30))).unsqueeze(0).to(dev)
        with torch.no_grad(), amp:
            image_features = model.encode_image(image)
            text_features = model.encode_text(text)
            image_features /= image_features.norm(dim=-1, keepdim=True)
            text_features /= text_features.norm(dim=-1, keepdim=True)
            (100.0 * image_features @ text_features.T).softmax(dim=-1)
            classifier = open_clip.build_zero_shot_classifier(
                model, tokenizer=tokenizer, classnames=open_clip.IMAGENET_CLASSNAMES[:20],
                templates=open_clip.SIMPLE_IMAGENET_TEMPLATES, num_classes_per_batch=8, device=dev, use_tqdm=False)
            feats = F.normalize(model.encode_image(images), dim=-1)
            (100.0 * feats @ classifier).topk(5, dim=-1)

    coca = open_clip.create_model("coca_ViT-B-32", pretrained=None).to(dev)
    coca_text = open_clip.get_tokenizer("coca_ViT-B-32")(captions[:4]).to(dev)

    def coca_caption():  # CoCaLoss training steps (its generation needs an older transformers than the image's)
        coca.train()
        opt = torch.optim.AdamW(coca.parameters(), lr=1e-5)
        loss_fn = open_clip.CoCaLoss(caption_loss_weight=2.0, clip_loss_weight=1.0)
        with amp:
            out = coca(images[:4], coca_text)
            loss = sum(loss_fn(**out))  # its contrastive and caption terms
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"contrastive": contrastive, "zeroshot": zeroshot, "coca_caption": coca_caption}


def open_clip_train_script(dev):
    """open_clip_train.main as the README runs it (`python -m open_clip_train.main ...`), on a synthetic CSV
    dataset (8 captioned JPEGs, --dataset-type csv) with a validation CSV, RN50 from random weights, mixed
    precision, gradient clipping and gradient accumulation, a log line every step, validation each epoch. The
    window spans the 2nd to the 3rd call of its `train_one_epoch`: the second epoch's training (4 steps) and the
    evaluation after it."""
    import csv
    tmp = Path(hc._tmp())
    names = _images(tmp / "img", 24, size=96)
    words = ["red", "green", "blue", "square", "circle", "dog", "cat", "tree"]
    for split, rows in (("train", names[:16]), ("val", names[16:])):
        with open(tmp / f"{split}.csv", "w", newline="") as f:
            w = csv.writer(f, delimiter="\t")
            w.writerow(["filepath", "title"])
            for i, n in enumerate(rows):
                w.writerow([str(tmp / "img" / n), f"a {words[i % 8]} {words[(i * 3) % 8]}"])
    argv = ["--train-data", str(tmp / "train.csv"), "--val-data", str(tmp / "val.csv"), "--dataset-type", "csv",
            "--csv-separator", "\t", "--csv-img-key", "filepath", "--csv-caption-key", "title", "--model", "RN50",
            "--batch-size", "2", "--accum-freq", "2", "--epochs", "3", "--workers", "0", "--lr", "1e-4",
            "--warmup", "2", "--grad-clip-norm", "1.0", "--log-every-n-steps", "1", "--logs", str(tmp / "logs"),
            "--name", "run", "--report-to", "", "--save-frequency", "0", "--zeroshot-frequency", "0",
            "--val-frequency", "1", "--seed", "0"]
    if dev.type == "cuda":
        argv += ["--precision", "amp_bf16"]
    else:
        argv += ["--device", "cpu"]

    def window():
        import open_clip_train.train as oct_train
        saved_argv = sys.argv
        sys.argv = ["open_clip_train.main", *argv]
        try:
            with hc.window_on(oct_train, "train_one_epoch", "open_clip.train", "train", dev, 2, 3, stop_script=True):
                try:
                    runpy.run_module("open_clip_train.main", run_name="__main__")
                except hc._StopScript:
                    pass
        finally:
            sys.argv = saved_argv
    return {"train_window": window}


# -- esm: ESM-2 (6 layers, random weights): the README's representations and contacts, masked-LM training, masked
#    marginals for variants ---------------------------------------------------------------------------------------

def esm_protein(dev):
    import esm

    alphabet = esm.Alphabet.from_architecture("ESM-1b")
    model = esm.ESM2(num_layers=6, embed_dim=320, attention_heads=20, alphabet=alphabet, token_dropout=True).to(dev)
    batch_converter = alphabet.get_batch_converter()
    data = [("protein1", "MKTVRQERLKSIVRILERSKEPVSGAQLAEELSVSRQVIVQDIAYLRSLGYNIVATPRGYVLAGG"),
            ("protein2", "KALTARQQEVFDLIRDHISQTGMPPTRAEIAQRLGFRSPNAAEEHLKALARKGVIEIVSGASRGIRLLQEE"),
            ("protein2 with mask", "KALTARQQEVFDLIRD<mask>ISQTGMPPTRAEIAQRLGFRSPNAAEEHLKALARKGVIEIVSGASRGIRLLQEE"),
            ("protein3", "K A <mask> I S Q")]
    _, _, batch_tokens = batch_converter(data)
    batch_tokens = batch_tokens.to(dev)

    def represent():  # the README: representations of layer 6, contacts, per-sequence means, predict_contacts
        model.eval()
        with torch.no_grad():
            results = model(batch_tokens, repr_layers=[6], return_contacts=True)
            token_representations = results["representations"][6]
            batch_lens = (batch_tokens != alphabet.padding_idx).sum(1)
            [token_representations[i, 1:n - 1].mean(0) for i, n in enumerate(batch_lens.tolist())]
            model.predict_contacts(batch_tokens)
            model(batch_tokens, repr_layers=[0, 3, 6], need_head_weights=True)

    def mlm_train():  # 15% of residues masked, cross-entropy on the logits at masked positions
        model.train()
        opt = torch.optim.Adam(model.parameters(), lr=1e-4)
        for _ in range(2):
            special = (batch_tokens == alphabet.padding_idx) | (batch_tokens == alphabet.cls_idx) | (
                batch_tokens == alphabet.eos_idx)
            mask = (torch.rand(batch_tokens.shape, device=dev) < 0.15) & ~special
            inp = batch_tokens.masked_fill(mask, alphabet.mask_idx)
            logits = model(inp)["logits"]
            loss = F.cross_entropy(logits[mask], batch_tokens[mask]) if mask.any() else logits.sum() * 0
            opt.zero_grad()
            loss.backward()
            opt.step()

    def variants():  # masked marginals (the variant-prediction example): each position masked in turn
        model.eval()
        _, _, toks = batch_converter([("wt", data[0][1][:24])])
        toks = toks.to(dev)
        with torch.no_grad():
            all_probs = []
            for i in range(1, toks.size(1) - 1):
                masked = toks.clone()
                masked[0, i] = alphabet.mask_idx
                all_probs.append(torch.log_softmax(model(masked)["logits"], dim=-1)[:, i])
            probs = torch.cat(all_probs, dim=0)
            wt, mt = alphabet.get_idx("A"), alphabet.get_idx("V")
            probs[:, mt] - probs[:, wt]
    return {"represent": represent, "mlm_train": mlm_train, "variants": variants}


# -- speechbrain: the Brain class as its template trains a CTC model (DynamicItemDataset, PaddedBatch, Fbank,
#    InputNormalization, augmentation, CTC loss, greedy decoding, ErrorRateStats, NewBob annealing, checkpoints),
#    and metric stats ---------------------------------------------------------------------------------------------

def speechbrain_recipes(dev):
    import speechbrain as sb
    from speechbrain.augment.augmenter import Augmenter
    from speechbrain.augment.time_domain import DropChunk, DropFreq
    from speechbrain.dataio.dataset import DynamicItemDataset
    from speechbrain.decoders import ctc_greedy_decode
    from speechbrain.lobes.features import Fbank
    from speechbrain.nnet.activations import Softmax
    from speechbrain.nnet.linear import Linear
    from speechbrain.nnet.RNN import LSTM
    from speechbrain.nnet.schedulers import NewBobScheduler
    from speechbrain.processing.features import InputNormalization
    from speechbrain.utils.checkpoints import Checkpointer
    from speechbrain.utils.metric_stats import ErrorRateStats

    vocab = 12
    g = torch.Generator().manual_seed(0)

    def make_set(n, seed):
        gg = torch.Generator().manual_seed(seed)
        return {f"utt{seed}_{i}": {"length": int(torch.randint(4000, 8000, (1,), generator=gg)),
                                   "words": torch.randint(1, vocab, (int(torch.randint(3, 8, (1,), generator=gg)),),
                                                          generator=gg).tolist()} for i in range(n)}

    def pipeline(data):
        ds = DynamicItemDataset(data)

        def sig(length):
            return torch.randn(length, generator=g)

        def tokens(words):
            return torch.LongTensor(words)
        ds.add_dynamic_item(sig, takes=["length"], provides="sig")
        ds.add_dynamic_item(tokens, takes=["words"], provides="tokens")
        ds.set_output_keys(["id", "sig", "tokens"])
        return ds

    train_set, valid_set = pipeline(make_set(16, 1)), pipeline(make_set(8, 2))
    tmp = hc._tmp()

    class ASR(sb.Brain):
        def compute_forward(self, batch, stage):
            batch = batch.to(self.device)
            wavs, wav_lens = batch.sig
            if stage == sb.Stage.TRAIN:
                wavs, wav_lens = self.hparams.augment(wavs, wav_lens)
            feats = self.modules.compute_features(wavs)
            feats = self.modules.normalize(feats, wav_lens)
            x, _ = self.modules.enc(feats)
            return self.hparams.log_softmax(self.modules.out(x)), wav_lens

        def compute_objectives(self, predictions, batch, stage):
            p_ctc, wav_lens = predictions
            tokens, token_lens = batch.tokens
            loss = sb.nnet.losses.ctc_loss(p_ctc, tokens, wav_lens, token_lens, blank_index=0)
            if stage != sb.Stage.TRAIN:
                hyps = ctc_greedy_decode(p_ctc, wav_lens, blank_id=0)
                self.wer_metric.append(batch.id, hyps, tokens, target_len=token_lens)
            return loss

        def on_stage_start(self, stage, epoch=None):
            if stage != sb.Stage.TRAIN:
                self.wer_metric = ErrorRateStats()

        def on_stage_end(self, stage, stage_loss, epoch=None):
            if stage == sb.Stage.VALID:
                wer = self.wer_metric.summarize("error_rate")
                old_lr, new_lr = self.hparams.lr_annealing(wer)
                sb.nnet.schedulers.update_learning_rate(self.optimizer, new_lr)
                self.checkpointer.save_and_keep_only(meta={"WER": wer, "loss": stage_loss}, min_keys=["WER"])

    def make_brain():
        modules = {"compute_features": Fbank(n_mels=40), "normalize": InputNormalization(norm_type="global"),
                   "enc": LSTM(hidden_size=64, input_shape=[None, None, 40], num_layers=2, bidirectional=True),
                   "out": Linear(input_size=128, n_neurons=vocab)}
        hparams = {"log_softmax": Softmax(apply_log=True),
                   "augment": Augmenter(parallel_augment=False, concat_original=False, min_augmentations=1,
                                        max_augmentations=2, shuffle_augmentations=True,
                                        augmentations=[DropChunk(drop_length_low=100, drop_length_high=400,
                                                                 drop_count_low=1, drop_count_high=3),
                                                       DropFreq(drop_freq_count_low=1, drop_freq_count_high=3)]),
                   "lr_annealing": NewBobScheduler(initial_value=1.0, improvement_threshold=0.0025,
                                                   annealing_factor=0.8, patient=0)}
        brain = ASR(modules, opt_class=lambda p: torch.optim.Adadelta(p, lr=1.0), hparams=hparams,
                    run_opts={"device": str(dev), "max_grad_norm": 5.0, "noprogressbar": True},
                    checkpointer=Checkpointer(tmp, recoverables={"model": nn.ModuleDict(modules)}))
        return brain

    def fit():  # two epochs with validation, then evaluate on the validation set (ErrorRateStats, checkpoints)
        brain = make_brain()
        brain.fit(range(2), train_set, valid_set, train_loader_kwargs={"batch_size": 4},
                  valid_loader_kwargs={"batch_size": 4})
        brain.evaluate(valid_set, min_key="WER", test_loader_kwargs={"batch_size": 4})

    def metrics():  # EER / minDCF on scores, binary and classification stats, MetricStats over a loss
        from speechbrain.utils.metric_stats import EER, BinaryMetricStats, ClassificationStats, MetricStats, minDCF
        pos = torch.randn(200, device=dev) + 1.0
        neg = torch.randn(500, device=dev)
        EER(pos, neg)
        minDCF(pos, neg)
        bms = BinaryMetricStats()
        bms.append([f"p{i}" for i in range(200)], pos, torch.ones(200, device=dev))
        bms.append([f"n{i}" for i in range(500)], neg, torch.zeros(500, device=dev))
        bms.summarize(threshold=None)
        ms = MetricStats(metric=lambda p, t: sb.nnet.losses.l1_loss(p, t, reduction="batch"))
        ms.append(["a", "b"], torch.randn(2, 10, device=dev), torch.randn(2, 10, device=dev))
        ms.summarize()
        cs = ClassificationStats()
        cs.append(["a", "b", "c"], torch.tensor([1, 2, 0], device=dev), torch.tensor([1, 0, 0], device=dev))
        cs.summarize()
    return {"fit": fit, "metrics": metrics}


# -- torchbearer: Trial with metrics and callbacks (its README and docs examples): fit / evaluate / predict,
#    gradient clipping, LR schedulers, early stopping, mixup, label smoothing, a VAE with its variational module --

def torchbearer_trials(dev):
    import torchbearer
    from torchbearer import Trial, callbacks

    X, y = _blobs(512, torch.device("cpu"), classes=10)
    Xv, yv = _blobs(128, torch.device("cpu"), classes=10, seed=1)
    tmp = hc._tmp()

    def loader(x, t, shuffle=False):
        return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, t), batch_size=64, shuffle=shuffle)

    def net():
        return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 10))

    def fit():  # metrics and callbacks on a classifier; evaluate on the test generator, predict
        model = net()
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        cbs = [callbacks.GradientNormClipping(5.0), callbacks.StepLR(step_size=1, gamma=0.5),
               callbacks.EarlyStopping(monitor="val_loss", patience=2), callbacks.TerminateOnNaN(),
               callbacks.CSVLogger(os.path.join(tmp, "log.csv")), callbacks.L2WeightDecay(1e-4),
               callbacks.Best(os.path.join(tmp, "best.pt"), monitor="val_acc", mode="max")]
        trial = Trial(model, opt, nn.CrossEntropyLoss(), metrics=["acc", "loss", "top_5_acc", "lr", "epoch"],
                      callbacks=cbs, verbose=0).to(dev)
        trial.with_generators(train_generator=loader(X, y, True), val_generator=loader(Xv, yv),
                              test_generator=loader(Xv, yv))
        trial.run(epochs=2)
        trial.evaluate(data_key=torchbearer.TEST_DATA)
        trial.predict(data_key=torchbearer.TEST_DATA)

    def regularisers():  # mixup with its loss, label smoothing, cutout / random erase / CutMix on images
        model = net()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        trial = Trial(model, opt, callbacks.Mixup.mixup_loss, metrics=["loss"],
                      callbacks=[callbacks.Mixup(), callbacks.MultiStepLR(milestones=[1])],
                      verbose=0).to(dev)
        trial.with_generators(train_generator=loader(X, y, True), train_steps=4).run(epochs=2)
        model = net()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        trial = Trial(model, opt, nn.CrossEntropyLoss(), metrics=["acc"],
                      callbacks=[callbacks.LabelSmoothingRegularisation(epsilon=0.1, classes=10)],
                      verbose=0).to(dev)
        trial.with_train_data(X, y, batch_size=64, steps=4).run(epochs=1)
        conv = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                             nn.Linear(8, 10))
        imgs, labels = torch.randn(128, 3, 16, 16), torch.randint(0, 10, (128,))
        trial = Trial(conv, torch.optim.Adam(conv.parameters(), lr=1e-3), nn.CrossEntropyLoss(),
                      metrics=["acc"], callbacks=[callbacks.Cutout(1, 4), callbacks.RandomErase(1, 4),
                                                  callbacks.CutMix(1.0, classes=10)], verbose=0).to(dev)
        trial.with_train_generator(loader(imgs, labels, True)).run(epochs=1)

    def regression():  # a regression trial: mse / mae metrics, value clipping, cosine annealing, checkpointers
        model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 1))
        target = X[:, :1] * 0.5 - X[:, 1:2]
        trial = Trial(model, torch.optim.Adam(model.parameters(), lr=1e-3), nn.MSELoss(),
                      metrics=["mse", "loss"],
                      callbacks=[callbacks.GradientClipping(1.0), callbacks.CosineAnnealingLR(T_max=4),
                                 callbacks.MostRecent(os.path.join(tmp, "last.pt")),
                                 callbacks.Interval(os.path.join(tmp, "every.pt"), period=1)], verbose=0).to(dev)
        trial.with_generators(train_generator=loader(X, target, True), val_generator=loader(X[:128], target[:128]))
        trial.run(epochs=2)
        trial.evaluate(data_key=torchbearer.VALIDATION_DATA)
    return {"fit": fit, "regularisers": regularisers, "regression": regression}


# -- torchani (2.2.4): an ANI potential from its tutorial ("Train Your Own Neural Network Potential"): an
#    AEVComputer, an ANIModel of per-element networks, torchani.data on a synthetic HDF5 dataset (self energies
#    subtracted, species to indices, shuffle, split, collate, cache), energies and forces ----------------------

def torchani_potential(dev):
    import h5py
    import numpy as np
    import torchani

    species_order = ["H", "C", "N", "O"]
    Rcr, Rca = 5.2, 3.5
    EtaR = torch.tensor([16.0], device=dev)
    ShfR = torch.linspace(0.9, 5.2, 16, device=dev)
    EtaA = torch.tensor([8.0], device=dev)
    Zeta = torch.tensor([32.0], device=dev)
    ShfA = torch.linspace(0.9, 3.5, 4, device=dev)
    ShfZ = torch.linspace(0.19, 2.95, 8, device=dev)
    aev_computer = torchani.AEVComputer(Rcr, Rca, EtaR, ShfR, EtaA, Zeta, ShfA, ShfZ, len(species_order))
    aev_dim = aev_computer.aev_length

    def atomic():
        return nn.Sequential(nn.Linear(aev_dim, 64), nn.CELU(0.1), nn.Linear(64, 32), nn.CELU(0.1), nn.Linear(32, 1))
    nnp = torchani.ANIModel([atomic() for _ in species_order])
    model = torchani.nn.Sequential(aev_computer, nnp).to(dev)
    energy_shifter = torchani.utils.EnergyShifter(None)

    # a synthetic dataset in the ANI HDF5 layout: groups of conformations of one molecule each
    rng = np.random.default_rng(0)
    path = os.path.join(hc._tmp(), "ani.h5")
    with h5py.File(path, "w") as f:
        for m, formula in enumerate(["CH4", "H2O", "NH3", "CH3OH", "HCN", "C2H6"]):
            symbols = []
            for ch, k in zip(formula, formula[1:] + "1"):
                if ch.isalpha():
                    symbols += [ch] * (int(k) if k.isdigit() else 1)
            n = len(symbols)
            grp = f.create_group(f"gdb/mol{m}")
            grp.create_dataset("species", data=np.array([s.encode() for s in symbols]))
            grp.create_dataset("coordinates", data=rng.normal(0, 0.8, (20, n, 3)).astype(np.float32))
            grp.create_dataset("energies", data=(-40.0 * n + rng.normal(0, 0.01, 20)))

    def train():  # the tutorial's data pipeline and a training epoch on energies, with forces
        training, validation = torchani.data.load(path).subtract_self_energies(energy_shifter, species_order) \
            .species_to_indices(species_order).shuffle().split(0.8, None)
        training, validation = training.collate(16).cache(), validation.collate(16).cache()
        opt = torch.optim.AdamW(nnp.parameters(), lr=1e-3)
        mse = nn.MSELoss(reduction="none")
        for properties in training:
            species = properties["species"].to(dev)
            coordinates = properties["coordinates"].to(dev).float().requires_grad_(True)
            true_energies = properties["energies"].to(dev).float()
            num_atoms = (species >= 0).sum(dim=1, dtype=true_energies.dtype)
            _, predicted = model((species, coordinates))
            forces = -torch.autograd.grad(predicted.sum(), coordinates, create_graph=True)[0]
            loss = (mse(predicted, true_energies) / num_atoms.sqrt()).mean() + 1e-3 * forces.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        total_mse, count = 0.0, 0
        with torch.no_grad():
            for properties in validation:
                species = properties["species"].to(dev)
                coordinates = properties["coordinates"].to(dev).float()
                true_energies = properties["energies"].to(dev).float()
                _, predicted = model((species, coordinates))
                total_mse += mse(predicted, true_energies).sum()
                count += predicted.shape[0]
        torchani.units.hartree2kcalmol(torch.sqrt(total_mse / count))

    return {"train": train}


# -- rotary_embedding_torch: attention with rotary embeddings (plain, xpos, interpolated, axial) trained a step --

def rotary_attention(dev):
    from rotary_embedding_torch import RotaryEmbedding, apply_rotary_emb

    def step(rot, xpos=False):
        q = torch.randn(2, 4, 64, 32, device=dev, requires_grad=True)
        k = torch.randn(2, 4, 64, 32, device=dev, requires_grad=True)
        if xpos:
            q2, k2 = rot.rotate_queries_and_keys(q, k)
        else:
            q2, k2 = rot.rotate_queries_or_keys(q), rot.rotate_queries_or_keys(k)
        F.scaled_dot_product_attention(q2, k2, q).sum().backward()

    def train():  # the README's uses: plain, learned frequencies, xpos, interpolated, a kv cache offset, axial
        step(RotaryEmbedding(dim=32).to(dev))
        step(RotaryEmbedding(dim=16, learned_freq=True).to(dev))
        step(RotaryEmbedding(dim=32, use_xpos=True).to(dev), xpos=True)
        step(RotaryEmbedding(dim=32, interpolate_factor=2.0).to(dev))
        rot = RotaryEmbedding(dim=32).to(dev)
        q = torch.randn(1, 4, 1, 32, device=dev)
        k = torch.randn(1, 4, 65, 32, device=dev)
        rot.rotate_queries_with_cached_keys(q, k)
        pos = RotaryEmbedding(dim=16, freqs_for="pixel", max_freq=256).to(dev)
        freqs = pos.get_axial_freqs(8, 8)
        apply_rotary_emb(freqs, torch.randn(2, 8, 8, 64, device=dev))
    return {"train": train}


# -- perceiver_pytorch: Perceiver and PerceiverIO (README), a classifier step with a mask, a decoder's queries ---

def perceiver_models(dev):
    from perceiver_pytorch import Perceiver, PerceiverIO

    model = Perceiver(input_channels=3, input_axis=2, num_freq_bands=6, max_freq=10.0, depth=2, num_latents=64,
                      latent_dim=128, cross_heads=1, latent_heads=4, cross_dim_head=32, latent_dim_head=32,
                      num_classes=10, attn_dropout=0.0, ff_dropout=0.0, weight_tie_layers=False,
                      fourier_encode_data=True, self_per_cross_attn=1).to(dev)
    io = PerceiverIO(dim=32, queries_dim=16, logits_dim=20, depth=2, num_latents=32, latent_dim=64,
                     cross_heads=1, latent_heads=4, cross_dim_head=32, latent_dim_head=32, weight_tie_layers=False,
                     seq_dropout_prob=0.2).to(dev)

    def train():
        opt = torch.optim.Adam([*model.parameters(), *io.parameters()], lr=1e-4)
        img = torch.randn(4, 16, 16, 3, device=dev)
        y = torch.randint(0, 10, (4,), device=dev)
        mask = torch.ones(4, 16 * 16, dtype=torch.bool, device=dev)
        loss = F.cross_entropy(model(img), y) + F.cross_entropy(model(img, mask=mask), y)
        seq = torch.randn(4, 48, 32, device=dev)
        seq_mask = torch.arange(48, device=dev)[None] < torch.tensor([48, 40, 30, 20], device=dev)[:, None]
        queries = torch.randn(4, 24, 16, device=dev)
        logits = io(seq, mask=seq_mask, queries=queries)
        loss = loss + F.cross_entropy(logits.reshape(-1, 20), torch.randint(0, 20, (4 * 24,), device=dev))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {"train": train}


# ============================================================================================
# Training repositories, their own scripts on synthetic data
# ============================================================================================

def stargan_train(dev):
    """main.py as is (`--dataset CelebA`) on a synthetic list_attr_celeba.txt (the five selected attributes, 2080
    entries: its loader keeps the first 1999 of the shuffled list for testing) naming one 64x64 JPEG; G and D with
    fewer residual blocks, image size 64, batch 8, D updated every iteration and G every 2nd, a log line every 2
    iterations, samples every 4th, the linear learning-rate decay from the start, no TensorBoard. The window spans
    the 3rd to the 13th `backward`: about seven iterations of the first epoch."""
    root = fc._on_path(_need_repo("stargan"))
    tmp = Path(hc._tmp())
    (tmp / "images").mkdir()
    _images(tmp / "images", 1, size=128)
    attrs = ["Black_Hair", "Blond_Hair", "Brown_Hair", "Male", "Young"]
    lines = ["2080", " ".join(attrs)]
    for i in range(2080):
        vals = ["1" if (i >> b) & 1 else "-1" for b in range(5)]
        lines.append(" ".join(["img0000.jpg", *vals]))
    (tmp / "attr.txt").write_text("\n".join(lines) + "\n")
    argv = ["--dataset", "CelebA", "--celeba_image_dir", str(tmp / "images"), "--attr_path", str(tmp / "attr.txt"),
            "--image_size", "64", "--celeba_crop_size", "128", "--batch_size", "8", "--g_repeat_num", "2",
            "--d_repeat_num", "4", "--n_critic", "2", "--num_iters", "100", "--num_iters_decay", "100",
            "--log_step", "2", "--sample_step", "4", "--model_save_step", "1000", "--lr_update_step", "3",
            "--num_workers", "0", "--use_tensorboard", "False", "--log_dir", str(tmp / "logs"),
            "--model_save_dir", str(tmp / "models"), "--sample_dir", str(tmp / "samples"),
            "--result_dir", str(tmp / "results")]

    def window():
        with hc.window_on(torch.Tensor, "backward", "stargan.train", "train", dev, 3, 13, stop_script=True):
            hc.run_script(root / "main.py", argv, str(tmp))
    return {"train_window": window}


def dino_train(dev):
    """main_dino.py as is with a world size of 1 (its init_distributed_mode's one-GPU branch: NCCL, rank 0) on a
    synthetic ImageFolder (64 JPEGs of 96x96 in two classes): ViT-tiny/16, an output dimension of 4096, two local
    crops, batch 8, fp16 with its gradient scaler, gradient clipping, the last layer frozen in the first epoch.
    The window spans the 2nd to the 6th `backward`: training steps of the first epoch. It refuses to run without a
    GPU. Its `--arch` choices call torch.hub.list (the network), which lists nothing while it runs. Its `print`
    override (setup_for_distributed) and the process group are undone afterwards."""
    import torch.distributed as dist
    root = fc._on_path(_need_repo("dino"))
    tmp = Path(hc._tmp())
    for c in ("a", "b"):
        _images(tmp / "data" / c, 32, size=96, seed=ord(c))
    (tmp / "out").mkdir()
    argv = ["--arch", "vit_tiny", "--patch_size", "16", "--out_dim", "4096", "--local_crops_number", "2",
            "--batch_size_per_gpu", "8", "--epochs", "2", "--warmup_epochs", "1", "--num_workers", "0",
            "--use_fp16", "True", "--data_path", str(tmp / "data"), "--output_dir", str(tmp / "out"),
            "--saveckp_freq", "100"]

    def window():
        saved_print, saved_list = builtins.print, torch.hub.list
        torch.hub.list = lambda *a, **kw: []  # its --arch choices list xcit's hub models (no network there)
        try:
            with hc.window_on(torch.Tensor, "backward", "dino.train", "train", dev, 2, 6, stop_script=True):
                hc.run_script(root / "main_dino.py", argv, str(tmp))
        finally:
            builtins.print, torch.hub.list = saved_print, saved_list
            if dist.is_available() and dist.is_initialized():
                dist.destroy_process_group()
    return {"train_window": window}


MODELS = [
    # name, package, builder
    ("open_clip.models", "open_clip", open_clip_models),
    ("open_clip.train", "open_clip_train", open_clip_train_script),
    ("esm.protein", "esm", esm_protein),
    ("speechbrain.recipes", "speechbrain", speechbrain_recipes),
    ("torchbearer.trials", "torchbearer", torchbearer_trials),
    ("torchani.potential", "torchani", torchani_potential),
    ("rotary.attention", "rotary_embedding_torch", rotary_attention),
    ("perceiver.models", "perceiver_pytorch", perceiver_models),
    ("stargan.train", "stargan", stargan_train),
    ("dino.train", "dino", dino_train),
]


def prepare() -> None:
    """The repositories' files and the wheels (fresh_collect's prepare)."""
    fc.prepare(REPOS, REPOS_DIR, WHEELS, WHEELS_DIR)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["prepare"]:
        prepare()
        return 0
    return hc.collect(argv, __doc__.splitlines()[0], MODELS, "fresh9", REPOS, DISTS, budget=300.0, per_model=90.0)


if __name__ == "__main__":
    sys.exit(main())
