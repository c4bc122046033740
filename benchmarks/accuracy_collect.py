"""Record the source lines that really make the host wait for the GPU, in real model code.

The reference of record for `benchmarks/accuracy.py` (the linter's recall and false flags).
Runs on a CUDA machine: every model is built from a small config with random weights (nothing
is downloaded), fed synthetic inputs, and run in training (forward + loss + backward + optimizer
step) and inference (`eval()` + `no_grad()`, and `generate(do_sample=True)` for generative
models). After one warm-up call, one more call runs with

- `torch.cuda.set_sync_debug_mode("warn")` and a `warnings.showwarning` hook that walks the
  Python stack AT the time of the warning, from the innermost frame outwards, to the first frame
  whose file is neither torch's own package nor the standard library: that frame is the site
  (transformers / torchvision / timm / torchaudio are the "user" code here);
- a TorchFunctionMode that only passes calls through, so the walk can name the torch function
  the site called (`func` in the mode's frame);
- wrappers around the syncs the debug mode misses (`torch.cuda.synchronize`,
  `Event.synchronize`, `empty_cache`), recorded the same way;
- a line tracer (sys.settrace) that records every line executed outside torch and the standard
  library, so the false flags can be counted over code that ran.

    python benchmarks/accuracy_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model (a time-out still leaves the models done) and prints
a summary. `--device cpu` only checks that the workloads run (the debug mode needs CUDA).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import signal
import sys
import sysconfig
import time
import traceback
import warnings
from pathlib import Path

import torch

# Wrap the syncs the debug mode misses before any model code imports them by name.
_ORIG = {"torch.cuda.synchronize": torch.cuda.synchronize,
         "torch.cuda.empty_cache": torch.cuda.empty_cache,
         "torch.cuda.Event.synchronize": torch.cuda.Event.synchronize}

REPO = Path(__file__).resolve().parents[1]
THIS = os.path.abspath(__file__)
TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
# our own frames that sit between a site and the sync: never a site themselves
HOOK_FUNCS = {"_showwarning", "__torch_function__", "_record", "_patched", "_walk"}
_STDLIB = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")})
_SITE_DIRS = sorted({os.path.abspath(p) + os.sep for p in sys.path
                     if p.rstrip("/").endswith(("site-packages", "dist-packages"))}, key=len, reverse=True)
DATE = "2026-11-22"
# numeric libraries that may sit between model code and torch (np.asarray(t) -> Tensor.__array__):
# walked through like the standard library, so the site is the model line that called them
PASS_THROUGH = {"numpy", "scipy"}


def classify(filename: str):
    """(kind, package, relative path) of a code object's file. kind: self | torch | stdlib | user."""
    if filename.startswith("<"):  # <frozen os>, <string>: generated or frozen code
        return "stdlib", "stdlib", filename
    fn = os.path.abspath(filename)
    if fn == THIS:
        return "self", "driver", "benchmarks/accuracy_collect.py"
    if fn.startswith(TORCH_DIR) or "/torchgen/" in fn or "/functorch/" in fn:
        return "torch", "torch", "torch/" + fn[len(TORCH_DIR):]
    for d in _SITE_DIRS:
        if fn.startswith(d):
            rel = fn[len(d):]
            pkg = rel.split(os.sep)[0].removesuffix(".py")
            if pkg in PASS_THROUGH:  # library code between the caller and torch: not a site
                return "stdlib", pkg, rel
            return "user", pkg, rel
    if fn.startswith(str(REPO) + os.sep):
        return "user", "repo", os.path.relpath(fn, REPO)
    if fn.startswith(_STDLIB) or fn.startswith("<"):
        return "stdlib", "stdlib", fn
    return "user", "other", fn


_CLS: dict = {}


def _cls(filename):
    r = _CLS.get(filename)
    if r is None:
        r = _CLS[filename] = classify(filename)
    return r


def _op_name(func) -> str:
    """A readable name of the torch function a site called: Tensor.item, torch.nonzero, ..."""
    mod = getattr(func, "__module__", None) or ""
    name = getattr(func, "__name__", None) or repr(func)
    qn = getattr(func, "__qualname__", None) or ""
    if qn.startswith(("TensorBase.", "Tensor.")) or mod == "torch._tensor":
        return "Tensor." + name
    if mod in ("torch", "torch.functional") or mod.startswith("torch._C._VariableFunctions"):
        return "torch." + name
    if mod in ("torch._C._nn", "torch.nn.functional"):
        return "torch.nn.functional." + name
    if mod in ("torch._C._linalg", "torch.linalg"):
        return "torch.linalg." + name
    return f"{mod}.{name}" if mod else name


class Recorder:
    def __init__(self):
        self.active = False
        self.model = self.mode = None
        self.sites: dict = {}  # (rel, line) -> aggregate
        self.executed: dict = {}  # rel -> set of lines
        self.current_events = 0
        self.current_backward = 0
        self.current_driver = 0
        self.unattributed = 0
        self._local = {}

    # -- the stack walk ------------------------------------------------------------------
    def _walk(self, frame, kind: str, op: str | None = None):
        torch_frames, chain = [], []
        site = None
        f = frame
        while f is not None:
            code = f.f_code
            k, pkg, rel = _cls(code.co_filename)
            if k == "self" and code.co_name in HOOK_FUNCS:
                if code.co_name == "__torch_function__" and op is None:
                    func = f.f_locals.get("func")
                    if func is not None:
                        op = _op_name(func)
            elif k in ("torch", "stdlib"):
                if site is None and k == "torch":
                    torch_frames.append(f"{rel}:{f.f_lineno}:{code.co_name}")
            elif site is None:
                site = (pkg, rel, f.f_lineno, code.co_name, code.co_filename)
            elif len(chain) < 4:
                chain.append(f"{rel}:{f.f_lineno}:{code.co_name}")
            else:
                break
            f = f.f_back
        self.current_events += 1
        if site is None:
            self.unattributed += 1
            return
        pkg, rel, line, func_name, filename = site
        # torch frames nearest the site first: the torch function the site called
        torch_frames.reverse()
        backward = any(t.startswith(("torch/autograd/", "torch/_tensor.py")) and
                       t.endswith((":backward", ":_engine_run_backward")) for t in torch_frames)
        if pkg == "driver":
            self.current_driver += 1
        if backward:
            self.current_backward += 1
        key = (rel, line)
        s = self.sites.get(key)
        if s is None:
            import linecache
            s = self.sites[key] = {
                "package": pkg, "path": rel, "line": line, "function": func_name,
                "source": linecache.getline(filename, line).strip(), "count": 0,
                "models": {}, "modes": [], "ops": {}, "kinds": [], "torch_frames": torch_frames[:6],
                "callers": chain, "backward": backward}
        s["count"] += 1
        tag = f"{self.model}/{self.mode}"
        s["models"][tag] = s["models"].get(tag, 0) + 1
        if self.mode not in s["modes"]:
            s["modes"].append(self.mode)
        if kind not in s["kinds"]:
            s["kinds"].append(kind)
        opk = op or "?"
        s["ops"][opk] = s["ops"].get(opk, 0) + 1

    # -- hooks -----------------------------------------------------------------------------
    def _showwarning(self, message, category, filename, lineno, file=None, line=None):
        if self.active and "synchroniz" in str(message):
            self._walk(sys._getframe(1), "debug_mode")
            return
        _orig_showwarning(message, category, filename, lineno, file, line)

    def _trace(self, frame, event, arg):
        k, pkg, rel = _cls(frame.f_code.co_filename)
        if k != "user":
            return None
        local = self._local.get(rel)
        if local is None:
            lines = self.executed.setdefault(rel, set())
            add = lines.add

            def local(frame, event, arg, add=add):
                if event == "line":
                    add(frame.f_lineno)
                return local
            self._local[rel] = local
        return local


REC = Recorder()
_orig_showwarning = warnings.showwarning


def _make_patch(name, orig):
    def _patched(*a, **kw):
        if REC.active:
            REC._walk(sys._getframe(1), "patched", op=name)
        return orig(*a, **kw)
    _patched.__name__ = getattr(orig, "__name__", name)
    return _patched


torch.cuda.synchronize = _make_patch("torch.cuda.synchronize", _ORIG["torch.cuda.synchronize"])
torch.cuda.empty_cache = _make_patch("torch.cuda.empty_cache", _ORIG["torch.cuda.empty_cache"])
torch.cuda.Event.synchronize = _make_patch("torch.cuda.Event.synchronize", _ORIG["torch.cuda.Event.synchronize"])

from torch.overrides import TorchFunctionMode  # noqa: E402


class _OpNamer(TorchFunctionMode):
    """Passes every call through; its frame on the stack names the torch function a site called."""

    simulate = False  # --device cpu: warn as the debug mode would for a few ops (tests the recording path)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.simulate and _op_name(func) in _SIMULATED:
            warnings.warn("called a synchronizing CUDA operation (simulated on CPU)")
        return out


_SIMULATED = {"Tensor.item", "Tensor.tolist", "torch.nonzero", "Tensor.nonzero", "Tensor.cpu", "torch.unique"}


def device_sync():
    if torch.cuda.is_available():
        _ORIG["torch.cuda.synchronize"]()


class measuring:
    def __init__(self, model, mode, device):
        self.model, self.mode, self.device = model, mode, device

    def __enter__(self):
        REC.model, REC.mode = self.model, self.mode
        REC.current_events = REC.current_backward = REC.current_driver = 0
        device_sync()
        warnings.filterwarnings("always", message=".*synchroniz.*")
        warnings.showwarning = REC._showwarning
        self.namer = _OpNamer()
        self.namer.simulate = self.device.type != "cuda"
        self.namer.__enter__()
        REC.active = True
        if self.device.type == "cuda":
            torch.cuda.set_sync_debug_mode("warn")
        sys.settrace(REC._trace)
        return self

    def __exit__(self, *exc):
        sys.settrace(None)
        if self.device.type == "cuda":
            torch.cuda.set_sync_debug_mode("default")
        REC.active = False
        self.namer.__exit__(*exc)
        warnings.showwarning = _orig_showwarning
        device_sync()
        return False


# ============================================================================================
# Workloads. Each builder returns {mode: callable}; a callable runs one step.
# ============================================================================================

def _opt(model):
    return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)


def train_loop(model, inputs, loss_of=lambda out: out.loss):
    opt = _opt(model)

    def step():
        model.train()
        out = model(**inputs()) if callable(inputs) else model(*inputs)
        loss = loss_of(out)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def infer_loop(model, inputs):
    def step():
        model.eval()
        with torch.no_grad():
            model(**inputs())
    return step


def generate_loop(model, inputs, **kw):
    def step():
        model.eval()
        with torch.no_grad():
            model.generate(**inputs(), do_sample=True, max_new_tokens=8, **kw)
    return step


def hf_modes(model, train_inputs, infer_inputs, gen_inputs=None, gen_kw=None):
    modes = {"train": train_loop(model, train_inputs), "infer": infer_loop(model, infer_inputs)}
    if gen_inputs is not None:
        modes["generate"] = generate_loop(model, gen_inputs, **(gen_kw or {}))
    return modes


def _tokens(dev, b, t, vocab, pad_last=0):
    ids = torch.randint(3, vocab, (b, t), device=dev)
    mask = torch.ones(b, t, dtype=torch.long, device=dev)
    if pad_last:
        mask[-1, -pad_last:] = 0  # one padded row, a slice assign (no sync)
    return ids, mask


def causal_lm(cls_name, cfg_name, vocab=512, **cfg):
    def build(dev):
        import transformers
        config = getattr(transformers, cfg_name)(vocab_size=vocab, **cfg)
        model = getattr(transformers, cls_name)(config).to(dev)
        pad = config.pad_token_id if config.pad_token_id is not None else 0
        model.generation_config.pad_token_id = pad

        def train_in():
            ids, mask = _tokens(dev, 4, 32, vocab, pad_last=5)
            labels = ids.masked_fill(mask == 0, -100)
            return dict(input_ids=ids, attention_mask=mask, labels=labels)

        def infer_in():
            ids, mask = _tokens(dev, 4, 32, vocab, pad_last=5)
            return dict(input_ids=ids, attention_mask=mask)

        def gen_in():
            ids, mask = _tokens(dev, 2, 8, vocab)
            return dict(input_ids=ids, attention_mask=mask)
        return hf_modes(model, train_in, infer_in, gen_in)
    return build


def moe_lm(cls_name, cfg_name, vocab=512, **cfg):
    def build(dev):
        import transformers
        config = getattr(transformers, cfg_name)(vocab_size=vocab, output_router_logits=True, **cfg)
        model = getattr(transformers, cls_name)(config).to(dev)
        model.generation_config.pad_token_id = 0

        def train_in():
            ids, mask = _tokens(dev, 4, 32, vocab, pad_last=5)
            return dict(input_ids=ids, attention_mask=mask, labels=ids.masked_fill(mask == 0, -100))

        def infer_in():
            ids, mask = _tokens(dev, 4, 32, vocab, pad_last=5)
            return dict(input_ids=ids, attention_mask=mask)

        def gen_in():
            ids, mask = _tokens(dev, 2, 8, vocab)
            return dict(input_ids=ids, attention_mask=mask)
        return hf_modes(model, train_in, infer_in, gen_in, {"output_router_logits": False})
    return build


def seq2seq(cls_name, cfg_name, vocab=512, **cfg):
    def build(dev):
        import transformers
        config = getattr(transformers, cfg_name)(vocab_size=vocab, **cfg)
        model = getattr(transformers, cls_name)(config).to(dev)
        model.generation_config.pad_token_id = config.pad_token_id or 0
        model.generation_config.decoder_start_token_id = config.decoder_start_token_id or 0

        def train_in():
            ids, mask = _tokens(dev, 4, 24, vocab, pad_last=4)
            labels = torch.randint(3, vocab, (4, 12), device=dev)
            labels[-1, -3:] = -100
            return dict(input_ids=ids, attention_mask=mask, labels=labels)

        def infer_in():
            ids, mask = _tokens(dev, 4, 24, vocab, pad_last=4)
            dec = torch.randint(3, vocab, (4, 12), device=dev)
            return dict(input_ids=ids, attention_mask=mask, decoder_input_ids=dec)

        def gen_in():
            ids, mask = _tokens(dev, 2, 16, vocab)
            return dict(input_ids=ids, attention_mask=mask)
        return hf_modes(model, train_in, infer_in, gen_in)
    return build


def switch_transformers(dev):
    import transformers
    config = transformers.SwitchTransformersConfig(
        vocab_size=512, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
        num_sparse_encoder_layers=2, num_sparse_decoder_layers=2, num_heads=4, num_experts=4,
        expert_capacity=16, router_ignore_padding_tokens=True, decoder_start_token_id=0)
    model = transformers.SwitchTransformersForConditionalGeneration(config).to(dev)
    model.generation_config.pad_token_id = 0
    model.generation_config.decoder_start_token_id = 0

    def train_in():
        ids, mask = _tokens(dev, 4, 24, 512, pad_last=4)
        labels = torch.randint(3, 512, (4, 12), device=dev)
        labels[-1, -3:] = -100
        return dict(input_ids=ids, attention_mask=mask, labels=labels, output_router_logits=True)

    def infer_in():
        ids, mask = _tokens(dev, 4, 24, 512, pad_last=4)
        return dict(input_ids=ids, attention_mask=mask,
                    decoder_input_ids=torch.randint(3, 512, (4, 12), device=dev))

    def gen_in():
        ids, mask = _tokens(dev, 2, 16, 512)
        return dict(input_ids=ids, attention_mask=mask)
    return hf_modes(model, train_in, infer_in, gen_in)


def bert_mlm(dev):
    import transformers
    config = transformers.BertConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=128)
    model = transformers.BertForMaskedLM(config).to(dev)

    def train_in():
        ids, mask = _tokens(dev, 4, 32, 512, pad_last=6)
        pick = torch.rand(4, 32, device=dev) < 0.15
        labels = torch.where(pick & (mask == 1), ids, torch.full_like(ids, -100))
        return dict(input_ids=ids, attention_mask=mask, labels=labels)

    def infer_in():
        ids, mask = _tokens(dev, 4, 32, 512, pad_last=6)
        return dict(input_ids=ids, attention_mask=mask)
    return hf_modes(model, train_in, infer_in)


def whisper(dev):
    import transformers
    config = transformers.WhisperConfig(
        vocab_size=600, num_mel_bins=80, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, d_model=64,
        max_source_positions=50, max_target_positions=64, decoder_start_token_id=1, pad_token_id=0,
        bos_token_id=1, eos_token_id=2, begin_suppress_tokens=None)
    model = transformers.WhisperForConditionalGeneration(config).to(dev)
    gc = model.generation_config
    gc.pad_token_id, gc.decoder_start_token_id, gc.eos_token_id = 0, 1, 2

    def feats(b):
        return torch.randn(b, 80, 100, device=dev)

    def train_in():
        labels = torch.randint(3, 600, (4, 16), device=dev)
        labels[-1, -4:] = -100
        return dict(input_features=feats(4), labels=labels)

    def infer_in():
        return dict(input_features=feats(4), decoder_input_ids=torch.randint(3, 600, (4, 16), device=dev))

    def gen_in():
        return dict(input_features=feats(2))
    return hf_modes(model, train_in, infer_in, gen_in)


def clip(dev):
    import transformers
    config = transformers.CLIPConfig(
        text_config=dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, max_position_embeddings=32, eos_token_id=2),
        vision_config=dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                           num_attention_heads=4, image_size=64, patch_size=16),
        projection_dim=32)
    model = transformers.CLIPModel(config).to(dev)

    def inputs():
        ids = torch.randint(3, 512, (4, 16), device=dev)
        ids[:, -1] = 2
        return dict(input_ids=ids, pixel_values=torch.randn(4, 3, 64, 64, device=dev))
    return hf_modes(model, lambda: {**inputs(), "return_loss": True}, inputs)


def vit(dev):
    import transformers
    config = transformers.ViTConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                    intermediate_size=128, image_size=64, patch_size=16, num_labels=10)
    model = transformers.ViTForImageClassification(config).to(dev)

    def infer_in():
        return dict(pixel_values=torch.randn(4, 3, 64, 64, device=dev))
    return hf_modes(model, lambda: {**infer_in(), "labels": torch.randint(0, 10, (4,), device=dev)}, infer_in)


def wav2vec2_ctc(dev):
    import transformers
    config = transformers.Wav2Vec2Config(
        vocab_size=32, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4, mask_time_prob=0.1, mask_time_length=2, pad_token_id=0,
        ctc_loss_reduction="mean")
    model = transformers.Wav2Vec2ForCTC(config).to(dev)

    def infer_in():
        x = torch.randn(4, 4000, device=dev)
        mask = torch.ones(4, 4000, dtype=torch.long, device=dev)
        mask[-1, -1000:] = 0
        return dict(input_values=x, attention_mask=mask)

    def train_in():
        labels = torch.randint(1, 32, (4, 20), device=dev)
        labels[-1, -6:] = -100
        return dict(**infer_in(), labels=labels)
    return hf_modes(model, train_in, infer_in)


def _small_resnet_backbone(out_features=("stage2", "stage3", "stage4")):
    import transformers
    return transformers.ResNetConfig(embedding_size=16, hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1],
                                     layer_type="basic", out_features=list(out_features))


def _det_labels(dev, b, n_classes, with_masks=None):
    labels = []
    for i in range(b):
        k = 3 + i  # different object counts per image
        cxcy = torch.rand(k, 2, device=dev) * 0.6 + 0.2
        wh = torch.rand(k, 2, device=dev) * 0.2 + 0.05
        d = {"class_labels": torch.randint(0, n_classes, (k,), device=dev), "boxes": torch.cat([cxcy, wh], 1)}
        if with_masks:
            d["masks"] = (torch.rand(k, *with_masks, device=dev) > 0.5).float()
        labels.append(d)
    return labels


def hf_detr(cls_name, cfg_name, post=True, **cfg):
    def build(dev):
        import transformers
        config = getattr(transformers, cfg_name)(
            backbone_config=_small_resnet_backbone(("stage4",) if cfg.pop("single_level", False)
                                                   else ("stage2", "stage3", "stage4")),
            num_labels=5, **cfg)
        model = getattr(transformers, cls_name)(config).to(dev)
        processor = None
        if post:
            try:
                from transformers import AutoImageProcessor  # noqa: F401
                proc_cls = getattr(transformers, cls_name.replace("ForObjectDetection", "ImageProcessor"), None)
                processor = proc_cls() if proc_cls is not None else None
            except Exception:
                processor = None

        def pix(b):
            return dict(pixel_values=torch.randn(b, 3, 128, 128, device=dev),
                        pixel_mask=torch.ones(b, 128, 128, dtype=torch.long, device=dev))

        def train_in():
            return dict(**pix(2), labels=_det_labels(dev, 2, 5))

        modes = {"train": train_loop(model, train_in)}

        def infer():
            model.eval()
            with torch.no_grad():
                out = model(**pix(2))
                if processor is not None:
                    processor.post_process_object_detection(
                        out, threshold=0.0, target_sizes=torch.tensor([[128, 128], [128, 128]], device=dev))
        modes["infer"] = infer
        return modes
    return build


def mask2former(dev):
    import transformers
    backbone = transformers.SwinConfig(image_size=128, patch_size=4, embed_dim=16, depths=[1, 1, 1, 1],
                                       num_heads=[1, 2, 2, 4], window_size=4,
                                       out_features=["stage1", "stage2", "stage3", "stage4"])
    config = transformers.Mask2FormerConfig(
        backbone_config=backbone, feature_size=32, mask_feature_size=32, hidden_dim=32,
        encoder_feedforward_dim=64, encoder_layers=1, decoder_layers=3, num_attention_heads=2,
        dim_feedforward=64, num_queries=10, num_labels=5, train_num_points=256)
    model = transformers.Mask2FormerForUniversalSegmentation(config).to(dev)
    processor = transformers.Mask2FormerImageProcessor() if hasattr(transformers, "Mask2FormerImageProcessor") else None

    def pix():
        return dict(pixel_values=torch.randn(2, 3, 128, 128, device=dev),
                    pixel_mask=torch.ones(2, 128, 128, dtype=torch.long, device=dev))

    def train_in():
        labels = _det_labels(dev, 2, 5, with_masks=(128, 128))
        return dict(**pix(), mask_labels=[d["masks"] for d in labels],
                    class_labels=[d["class_labels"] for d in labels])

    def infer():
        model.eval()
        with torch.no_grad():
            out = model(**pix())
            if processor is not None:
                processor.post_process_semantic_segmentation(out, target_sizes=[(128, 128)] * 2)
                processor.post_process_instance_segmentation(out, threshold=0.0, target_sizes=[(128, 128)] * 2)
                processor.post_process_panoptic_segmentation(out, threshold=0.0, target_sizes=[(128, 128)] * 2)
    return {"train": train_loop(model, train_in), "infer": infer}


# -- torchvision -------------------------------------------------------------------------------

def tv_detection(name, masks=False, keypoints=False, **kw):
    def build(dev):
        import torchvision
        ctor = getattr(torchvision.models.detection, name)
        model = ctor(weights=None, weights_backbone=None, num_classes=5, **kw).to(dev)
        size = 256

        def images():
            return [torch.rand(3, size, size + 32 * i, device=dev) for i in range(2)]

        def targets():
            out = []
            for i in range(2):
                k = 3 + i
                xy = torch.rand(k, 2, device=dev) * (size / 2)
                wh = torch.rand(k, 2, device=dev) * (size / 3) + 8
                t = {"boxes": torch.cat([xy, xy + wh], 1), "labels": torch.randint(1, 5, (k,), device=dev)}
                if masks:
                    t["masks"] = (torch.rand(k, size, size + 32 * i, device=dev) > 0.5).to(torch.uint8)
                if keypoints:
                    kp = torch.rand(k, 17, 3, device=dev) * (size / 2)
                    kp[..., 2] = 1
                    t["keypoints"] = kp
                out.append(t)
            return out
        opt = _opt(model)

        def train():
            model.train()
            losses = model(images(), targets())
            loss = sum(losses.values())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        def infer():
            model.eval()
            with torch.no_grad():
                model(images())
        return {"train": train, "infer": infer}
    return build


def tv_segmentation(name, **kw):
    def build(dev):
        import torch.nn.functional as F
        import torchvision
        model = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None,
                                                               num_classes=5, **kw).to(dev)

        def loss_of(out):
            target = torch.randint(0, 5, (2, 128, 128), device=dev)
            return sum(F.cross_entropy(v, target, ignore_index=255) for v in out.values())
        x = lambda: torch.randn(2, 3, 128, 128, device=dev)  # noqa: E731

        def infer():
            model.eval()
            with torch.no_grad():
                model(x())
        opt = _opt(model)

        def train():
            model.train()
            loss = loss_of(model(x()))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return {"train": train, "infer": infer}
    return build


def tv_classifier(module, name, shape, **kw):
    def build(dev):
        import torch.nn.functional as F
        import torchvision
        mod = torchvision.models if module is None else getattr(torchvision.models, module)
        model = getattr(mod, name)(weights=None, num_classes=10, **kw).to(dev)
        opt = _opt(model)

        def train():
            model.train()
            out = model(torch.randn(*shape, device=dev))
            loss = F.cross_entropy(out, torch.randint(0, 10, (shape[0],), device=dev))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        def infer():
            model.eval()
            with torch.no_grad():
                model(torch.randn(*shape, device=dev))
        return {"train": train, "infer": infer}
    return build


def tv_raft(dev):
    import torchvision
    model = torchvision.models.optical_flow.raft_small(weights=None).to(dev)
    opt = _opt(model)

    def imgs():
        return torch.rand(2, 3, 128, 128, device=dev), torch.rand(2, 3, 128, 128, device=dev)

    def train():
        model.train()
        flows = model(*imgs(), num_flow_updates=4)
        loss = sum((f - 1).abs().mean() for f in flows)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def infer():
        model.eval()
        with torch.no_grad():
            model(*imgs(), num_flow_updates=4)
    return {"train": train, "infer": infer}


# -- timm --------------------------------------------------------------------------------------

def timm_model(name, size=64, **kw):
    def build(dev):
        import timm
        from timm.data import Mixup
        from timm.loss import SoftTargetCrossEntropy
        model = timm.create_model(name, pretrained=False, num_classes=10, **kw).to(dev)
        mixup = Mixup(mixup_alpha=0.8, cutmix_alpha=1.0, num_classes=10, label_smoothing=0.1)
        crit = SoftTargetCrossEntropy()
        opt = _opt(model)

        def train():
            model.train()
            x = torch.randn(4, 3, size, size, device=dev)
            y = torch.randint(0, 10, (4,), device=dev)
            x, y = mixup(x, y)
            loss = crit(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        def infer():
            model.eval()
            with torch.no_grad():
                model(torch.randn(4, 3, size, size, device=dev))
        return {"train": train, "infer": infer}
    return build


# -- torchaudio --------------------------------------------------------------------------------

def ta_wav2vec2(ctor_name, **kw):
    def build(dev):
        import torch.nn.functional as F
        import torchaudio
        model = getattr(torchaudio.models, ctor_name)(aux_num_out=32, **kw).to(dev)
        opt = _opt(model)

        def batch():
            x = torch.randn(4, 8000, device=dev)
            lengths = torch.tensor([8000, 8000, 7000, 6000], device=dev)
            return x, lengths

        def train():
            model.train()
            x, lengths = batch()
            logits, out_len = model(x, lengths)
            targets = torch.randint(1, 32, (4, 10), device=dev)
            loss = F.ctc_loss(logits.log_softmax(-1).transpose(0, 1), targets, out_len,
                              torch.full((4,), 10, device=dev))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        def infer():
            model.eval()
            with torch.no_grad():
                model(*batch())
        return {"train": train, "infer": infer}
    return build


def ta_conformer(dev):
    import torchaudio
    model = torchaudio.models.Conformer(input_dim=80, num_heads=4, ffn_dim=128, num_layers=2,
                                        depthwise_conv_kernel_size=31).to(dev)
    opt = _opt(model)

    def batch():
        lengths = torch.tensor([100, 90, 80, 70], device=dev)
        return torch.randn(4, 100, 80, device=dev), lengths

    def train():
        model.train()
        out, _ = model(*batch())
        loss = out.pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def infer():
        model.eval()
        with torch.no_grad():
            model(*batch())
    return {"train": train, "infer": infer}


def ta_emformer_rnnt(dev):
    import torchaudio
    model = torchaudio.models.emformer_rnnt_model(
        input_dim=80, encoding_dim=64, num_symbols=32, segment_length=4, right_context_length=1,
        time_reduction_input_dim=64, time_reduction_stride=4, transformer_num_heads=4,
        transformer_ffn_dim=128, transformer_num_layers=2, transformer_dropout=0.1,
        transformer_activation="gelu", transformer_left_context_length=8,
        transformer_max_memory_size=0, transformer_weight_init_scale_strategy="depthwise",
        transformer_tanh_on_mem=True, symbol_embedding_dim=32, num_lstm_layers=1,
        lstm_layer_norm=True, lstm_layer_norm_epsilon=1e-5, lstm_dropout=0.1).to(dev)
    opt = _opt(model)

    def batch():
        src = torch.randn(4, 64, 80, device=dev)
        src_len = torch.tensor([64, 60, 56, 52], device=dev)
        tgt = torch.randint(1, 32, (4, 6), device=dev)
        tgt_len = torch.tensor([6, 6, 5, 4], device=dev)
        return src, src_len, tgt, tgt_len

    def train():
        model.train()
        out, _, _, _ = model(*batch())
        loss = out.float().pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def infer():
        model.eval()
        with torch.no_grad():
            model(*batch())
    return {"train": train, "infer": infer}


def ta_tacotron2(dev):
    import torch.nn.functional as F
    import torchaudio
    model = torchaudio.models.Tacotron2(n_symbol=40, n_mels=40, encoder_embedding_dim=64,
                                        encoder_n_convolution=2, decoder_rnn_dim=64, attention_rnn_dim=64,
                                        attention_hidden_dim=32, prenet_dim=32, postnet_embedding_dim=32,
                                        postnet_n_convolution=2, decoder_max_step=20).to(dev)
    opt = _opt(model)

    def train():
        model.train()
        tokens = torch.randint(1, 40, (2, 12), device=dev)
        token_len = torch.tensor([12, 10], device=dev)
        mel = torch.randn(2, 40, 30, device=dev)
        mel_len = torch.tensor([30, 26], device=dev)
        mel_out, mel_post, gate, _ = model(tokens, token_len, mel, mel_len)
        loss = F.mse_loss(mel_post, mel) + gate.pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def infer():
        model.eval()
        with torch.no_grad():
            model.infer(torch.randint(1, 40, (2, 12), device=dev), torch.tensor([12, 10], device=dev))
    return {"train": train, "infer": infer}


def ta_convtasnet(dev):
    import torchaudio
    model = torchaudio.models.ConvTasNet(num_sources=2, enc_num_feats=64, msk_num_feats=32,
                                         msk_num_hidden_feats=64, msk_num_layers=2, msk_num_stacks=1).to(dev)
    opt = _opt(model)

    def train():
        model.train()
        out = model(torch.randn(2, 1, 4000, device=dev))
        loss = out.pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def infer():
        model.eval()
        with torch.no_grad():
            model(torch.randn(2, 1, 4000, device=dev))
    return {"train": train, "infer": infer}


# -- the repo's fixtures -----------------------------------------------------------------------

def fixture(name, **kw):
    def build(dev):
        import importlib
        sys.path.insert(0, str(REPO / "fixtures"))
        mod = importlib.import_module(name)
        return {"train": mod.make_step(dev, **kw)}
    return build


MODELS = [
    # name, package, builder
    ("fixtures.masked_loss_naive", "repo", fixture("masked_loss_naive", batch=4, size=64)),
    ("fixtures.classic_loop_naive", "repo", fixture("classic_loop_naive", batch=32, size=32, workers=0)),
    ("fixtures.masked_loss_fixed", "repo", fixture("masked_loss_fixed", batch=4, size=64)),
    ("fixtures.classic_loop_fixed", "repo", fixture("classic_loop_fixed", batch=32, size=32, workers=0)),
    ("fixtures.augment_gpu", "repo", fixture("augment_gpu", batch=8, size=64, crop=48, workers=0)),
    ("fixtures.encdec_piped", "repo", fixture("encdec_piped", batch=4, size=64, width=8, depth=3)),
    ("tv.fasterrcnn_resnet50_fpn", "torchvision", tv_detection("fasterrcnn_resnet50_fpn", min_size=256, max_size=320)),
    ("hf.detr", "transformers", hf_detr("DetrForObjectDetection", "DetrConfig", d_model=64, encoder_layers=1,
                                        decoder_layers=2, encoder_ffn_dim=128, decoder_ffn_dim=128,
                                        encoder_attention_heads=4, decoder_attention_heads=4,
                                        num_queries=20, auxiliary_loss=True, single_level=True)),
    ("hf.mask2former", "transformers", mask2former),
    ("hf.switch_transformers", "transformers", switch_transformers),
    ("hf.whisper", "transformers", whisper),
    ("hf.gpt2", "transformers", causal_lm("GPT2LMHeadModel", "GPT2Config", n_layer=2, n_embd=64, n_head=4,
                                          n_positions=128)),
    ("hf.clip", "transformers", clip),
    ("hf.deformable_detr", "transformers", hf_detr(
        "DeformableDetrForObjectDetection", "DeformableDetrConfig", d_model=64, encoder_layers=1,
        decoder_layers=2, encoder_ffn_dim=128, decoder_ffn_dim=128, encoder_attention_heads=4,
        decoder_attention_heads=4, num_queries=20, num_feature_levels=4, two_stage=True,
        with_box_refine=True, two_stage_num_proposals=20, auxiliary_loss=True,
        disable_custom_kernels=True)),  # the hub kernel needs the internet; the torch path is the default elsewhere
    ("hf.conditional_detr", "transformers", hf_detr(
        "ConditionalDetrForObjectDetection", "ConditionalDetrConfig", d_model=64, encoder_layers=1,
        decoder_layers=2, encoder_ffn_dim=128, decoder_ffn_dim=128, encoder_attention_heads=4,
        decoder_attention_heads=4, num_queries=20, auxiliary_loss=True, single_level=True)),
    ("hf.rt_detr", "transformers", hf_detr(
        "RTDetrForObjectDetection", "RTDetrConfig", post=True, encoder_hidden_dim=64,
        encoder_in_channels=[32, 64, 128], encoder_ffn_dim=128, encoder_attention_heads=4, d_model=64,
        decoder_in_channels=[64, 64, 64], decoder_ffn_dim=128, decoder_layers=2, decoder_attention_heads=4,
        num_queries=20, num_denoising=10)),
    ("hf.mixtral", "transformers", moe_lm("MixtralForCausalLM", "MixtralConfig", hidden_size=64,
                                          intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                          num_key_value_heads=2, num_local_experts=4, num_experts_per_tok=2)),
    ("hf.qwen3_moe", "transformers", moe_lm("Qwen3MoeForCausalLM", "Qwen3MoeConfig", hidden_size=64,
                                            intermediate_size=128, moe_intermediate_size=64,
                                            num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                            head_dim=16, num_experts=4, num_experts_per_tok=2,
                                            decoder_sparse_step=1)),
    ("hf.llama", "transformers", causal_lm("LlamaForCausalLM", "LlamaConfig", hidden_size=64,
                                           intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                                           num_key_value_heads=2, pad_token_id=0)),
    ("hf.t5", "transformers", seq2seq("T5ForConditionalGeneration", "T5Config", d_model=64, d_kv=16, d_ff=128,
                                      num_layers=2, num_decoder_layers=2, num_heads=4, decoder_start_token_id=0)),
    ("hf.bert_mlm", "transformers", bert_mlm),
    ("hf.wav2vec2_ctc", "transformers", wav2vec2_ctc),
    ("hf.vit", "transformers", vit),
    ("tv.maskrcnn_resnet50_fpn", "torchvision", tv_detection("maskrcnn_resnet50_fpn", masks=True,
                                                             min_size=256, max_size=320)),
    ("tv.keypointrcnn_resnet50_fpn", "torchvision", tv_detection("keypointrcnn_resnet50_fpn", keypoints=True,
                                                                 min_size=256, max_size=320)),
    ("tv.retinanet_resnet50_fpn", "torchvision", tv_detection("retinanet_resnet50_fpn", min_size=256, max_size=320)),
    ("tv.fcos_resnet50_fpn", "torchvision", tv_detection("fcos_resnet50_fpn", min_size=256, max_size=320)),
    ("tv.ssdlite320_mobilenet_v3_large", "torchvision", tv_detection("ssdlite320_mobilenet_v3_large")),
    ("tv.deeplabv3_resnet50", "torchvision", tv_segmentation("deeplabv3_resnet50", aux_loss=True)),
    ("tv.fcn_resnet50", "torchvision", tv_segmentation("fcn_resnet50")),
    ("tv.lraspp_mobilenet_v3_large", "torchvision", tv_segmentation("lraspp_mobilenet_v3_large")),
    ("tv.r3d_18", "torchvision", tv_classifier("video", "r3d_18", (2, 3, 8, 64, 64))),
    ("tv.s3d", "torchvision", tv_classifier("video", "s3d", (2, 3, 16, 64, 64))),
    ("tv.mvit_v2_s", "torchvision", tv_classifier("video", "mvit_v2_s", (1, 3, 16, 224, 224))),
    ("tv.swin3d_t", "torchvision", tv_classifier("video", "swin3d_t", (1, 3, 8, 64, 64))),
    ("tv.vit_b_16", "torchvision", tv_classifier(None, "vit_b_16", (2, 3, 224, 224))),
    ("tv.swin_v2_t", "torchvision", tv_classifier(None, "swin_v2_t", (2, 3, 64, 64))),
    ("tv.efficientnet_b0", "torchvision", tv_classifier(None, "efficientnet_b0", (2, 3, 64, 64))),
    ("tv.raft_small", "torchvision", tv_raft),
    ("timm.vit_small_patch16_224", "timm", timm_model("vit_small_patch16_224", size=224)),
    ("timm.swin_tiny_patch4_window7_224", "timm", timm_model("swin_tiny_patch4_window7_224", size=224)),
    ("timm.convnext_tiny", "timm", timm_model("convnext_tiny", drop_path_rate=0.1)),
    ("timm.efficientnet_b0", "timm", timm_model("efficientnet_b0", drop_path_rate=0.1)),
    ("timm.resnet50", "timm", timm_model("resnet50")),
    ("timm.beit_base_patch16_224", "timm", timm_model("beit_base_patch16_224", size=224)),
    ("ta.wav2vec2_base", "torchaudio", ta_wav2vec2("wav2vec2_base")),
    ("ta.hubert_base", "torchaudio", ta_wav2vec2("hubert_base")),
    ("ta.conformer", "torchaudio", ta_conformer),
    ("ta.emformer_rnnt", "torchaudio", ta_emformer_rnnt),
    ("ta.tacotron2", "torchaudio", ta_tacotron2),
    ("ta.convtasnet", "torchaudio", ta_convtasnet),
]


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout("per-model time limit")


def versions():
    out = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda}
    for mod in ("transformers", "torchvision", "torchaudio", "timm", "scipy", "numpy"):
        try:
            out[mod] = __import__(mod).__version__
        except Exception as e:  # absent or broken: say so
            out[mod] = f"unavailable ({type(e).__name__})"
    return out


def write(out_dir, meta, results):
    sites = []
    for s in REC.sites.values():
        sites.append(dict(s))
    executed = {rel: sorted(lines) for rel, lines in REC.executed.items()}
    data = {"meta": meta, "models": results, "sites": sites, "executed": executed,
            "unattributed": REC.unattributed}
    tmp = os.path.join(out_dir, "sync_raw.json.tmp")
    with open(tmp, "w") as fh:
        json.dump(data, fh)
    os.replace(tmp, os.path.join(out_dir, "sync_raw.json"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--only", default="")
    ap.add_argument("--skip", default="")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--budget", type=float, default=500.0, help="stop starting models after this many seconds")
    ap.add_argument("--per-model", type=float, default=60.0)
    args = ap.parse_args(argv)
    dev = torch.device(args.device)
    os.makedirs(args.out, exist_ok=True)
    only = {s for s in args.only.split(",") if s}
    skip = {s for s in args.skip.split(",") if s}
    meta = {"versions": versions(), "date": DATE,
            "device": torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu",
            "started": datetime.datetime.now().isoformat(timespec="seconds")}
    print(json.dumps(meta), flush=True)
    t_start = time.time()
    results = []
    signal.signal(signal.SIGALRM, _alarm)
    for name, package, build in MODELS:
        if (only and name not in only) or name in skip:
            continue
        if time.time() - t_start > args.budget:
            results.append({"model": name, "package": package, "status": "skipped (budget)"})
            continue
        t0 = time.time()
        signal.alarm(int(args.per_model))
        try:
            torch.manual_seed(0)
            modes = build(dev)
            for mode, step in modes.items():
                r = {"model": name, "package": package, "mode": mode}
                t1 = time.time()
                try:
                    step()  # warm-up: one-off setup syncs are not what we measure
                    with measuring(name, mode, dev):
                        step()
                    r.update(status="ok", syncs=REC.current_events, driver=REC.current_driver,
                             backward=REC.current_backward)
                except _Timeout:
                    raise
                except Exception as e:
                    r.update(status="error", error=f"{type(e).__name__}: {e}"[:400],
                             where=traceback.format_exc(limit=-3)[-800:])
                r["seconds"] = round(time.time() - t1, 2)
                results.append(r)
                print(f"{name:40s} {mode:9s} {r['status']:6s} syncs={r.get('syncs', '-')!s:5s} "
                      f"{r['seconds']:6.2f}s {r.get('error', '')[:150]}", flush=True)
        except BaseException as e:  # build failure or time-out: record, keep going
            if isinstance(e, KeyboardInterrupt):
                raise
            results.append({"model": name, "package": package, "status": "error",
                            "error": f"{type(e).__name__}: {e}"[:400],
                            "where": traceback.format_exc(limit=-3)[-800:]})
            print(f"{name:40s} FAILED {type(e).__name__}: {str(e)[:200]}", flush=True)
        finally:
            signal.alarm(0)
            sys.settrace(None)
            REC.active = False
            if dev.type == "cuda":
                torch.cuda.set_sync_debug_mode("default")
                _ORIG["torch.cuda.empty_cache"]()
        print(f"  [{name}: {time.time() - t0:.1f}s, total {time.time() - t_start:.0f}s]", flush=True)
        write(args.out, meta, results)
    write(args.out, meta, results)
    by_pkg: dict = {}
    for s in REC.sites.values():
        by_pkg[s["package"]] = by_pkg.get(s["package"], 0) + 1
    ok = sum(r.get("status") == "ok" for r in results)
    print(f"done in {time.time() - t_start:.0f}s: {ok}/{len(results)} runs ok, {len(REC.sites)} distinct sites "
          f"{by_pkg}, {REC.unattributed} unattributed", flush=True)


if __name__ == "__main__":
    main()
