"""Record the source lines that really make the host wait for the GPU, in real model code.

The reference of record for `benchmarks/accuracy.py` (the linter's recall and false flags).
Runs on a CUDA machine: every model is built from a small config with random weights (nothing
is downloaded), fed synthetic inputs, and run in training (forward + loss + backward + optimizer
step) and inference (`eval()` + `no_grad()`, and `generate(do_sample=True)` for generative
models). After one warm-up call, one more call runs with

- `torch.cuda.set_sync_debug_mode("warn")` and a hook on `warnings._showwarnmsg` that walks the
  Python stack AT the time of the warning, from the innermost frame outwards, to the first frame
  whose file is neither torch's own package nor the standard library: that frame is the site
  (transformers / torchvision / timm / torchaudio are the "user" code here);
- a TorchFunctionMode that only passes calls through, so the walk can name the torch function
  the site called (`func` in the mode's frame) and describe what made it sync (the kind and
  device of a subscript's index, of the data given to torch.tensor, of a copy's source);
- custom ops (torch.ops.*, e.g. torchvision's nms) run once under "error" mode, because c10
  prints their debug-mode warning instead of raising a Python warning;
- wrappers around the syncs the debug mode misses (`torch.cuda.synchronize`,
  `Event.synchronize`, `empty_cache`), recorded the same way;
- a line tracer (sys.settrace) that records every line executed outside torch and the standard
  library, so the false flags can be counted over code that ran.

transformers' Trainer runs its own loop: a callback opens the measured window after two warm-up
steps and closes it two steps later.

    python benchmarks/accuracy_collect.py --out DIR [--only NAME,...] [--skip NAME,...]
           [--device cuda|cpu] [--budget SECONDS] [--per-model SECONDS]

Writes DIR/sync_raw.json after every model (a time-out still leaves the models done) and prints
a summary. `--device cpu` checks that the workloads run (the debug mode needs CUDA); there the
op recorder warns for a few ops (item, tolist, nonzero, cpu, unique) as the debug mode would, so
the recording path can be tested without a GPU.
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
HOOK_FUNCS = {"_showwarnmsg", "__torch_function__", "_custom_op", "_patched", "_walk"}
_STDLIB = tuple({os.path.abspath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")})
# package roots: site-packages, and PYTHONPATH entries (wheels carried to the GPU machine and
# installed with `pip install --target DIR`, then put on PYTHONPATH)
_SITE_DIRS = sorted({os.path.abspath(p) + os.sep for p in sys.path
                     if p.rstrip("/").endswith(("site-packages", "dist-packages"))} |
                    {os.path.abspath(p) + os.sep for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                     if p and os.path.isdir(p) and not os.path.abspath(p).startswith(str(REPO))},
                    key=len, reverse=True)
# harness files (this one, and collectors that import it): their frames are the "driver"
DRIVER_FILES = {THIS}
# folders that hold fetched training repos, {abs folder + sep: package}: a repo's lines are user code,
# named "<package>/<path in the repo>" like a library's
EXTRA_ROOTS: dict = {}
DATE = "2026-11-22"
# numeric libraries that may sit between model code and torch (np.asarray(t) -> Tensor.__array__):
# walked through like the standard library, so the site is the model line that called them
PASS_THROUGH = {"numpy", "scipy"}


def classify(filename: str):
    """(kind, package, relative path) of a code object's file. kind: self | torch | stdlib | user."""
    if filename.startswith("<"):  # <frozen os>, <string>: generated or frozen code
        return "stdlib", "stdlib", filename
    fn = os.path.abspath(filename)
    if fn in DRIVER_FILES:
        return "self", "driver", os.path.relpath(fn, REPO)
    if fn.startswith(TORCH_DIR) or "/torchgen/" in fn or "/functorch/" in fn:
        return "torch", "torch", "torch/" + fn[len(TORCH_DIR):]
    for d, pkg in EXTRA_ROOTS.items():
        if fn.startswith(d):
            return "user", pkg, pkg + "/" + fn[len(d):]
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


def _kind(x) -> str:
    if isinstance(x, torch.Tensor):
        dt = "bool" if x.dtype in (torch.bool, torch.uint8) else ("int" if not x.is_floating_point() else "float")
        where = x.device.type if x.device.type != "cpu" else ("cpu-pinned" if x.is_pinned() else "cpu")
        return f"{dt} {where} tensor" + ("" if x.dim() else " 0-dim")
    if isinstance(x, (list, tuple)):
        inner = {_kind(e) for e in x[:8]}
        return f"{type(x).__name__} of " + "/".join(sorted(inner)) if inner else type(x).__name__
    if isinstance(x, slice):
        return "slice" + (" with tensor bound" if any(isinstance(b, torch.Tensor)
                                                      for b in (x.start, x.stop, x.step)) else "")
    if x is None or x is Ellipsis:
        return "None" if x is None else "..."
    return type(x).__name__


def _describe(op: str, args, kwargs) -> str:
    """What made the call sync, from its arguments: the index of a subscript, the data given to
    torch.tensor, the direction of a copy. Only read when a sync is recorded."""
    try:
        if op in ("Tensor.__getitem__", "Tensor.__setitem__") and len(args) >= 2:
            idx = args[1] if isinstance(args[1], tuple) else (args[1],)
            parts = [_kind(i) for i in idx
                     if not (isinstance(i, int) or i is None or i is Ellipsis or _kind(i) == "slice")]
            d = "index: " + (", ".join(parts) or "basic")
            if op == "Tensor.__setitem__" and len(args) >= 3:
                d += "; value: " + _kind(args[2])
            return d
        if op in ("torch.tensor", "torch.as_tensor", "Tensor.new_tensor") and args:
            data = args[1] if op == "Tensor.new_tensor" and len(args) > 1 else args[0]
            return "data: " + _kind(data)
        if op in ("Tensor.to", "Tensor.cuda", "Tensor.cpu", "Tensor.copy_") and args:
            src = args[1] if op == "Tensor.copy_" and len(args) > 1 else args[0]
            return "from " + _kind(src) + (" non_blocking" if kwargs.get("non_blocking") else "")
        if op == "Tensor.masked_fill" and len(args) >= 3:
            return "value: " + _kind(args[2])
    except Exception as e:  # never let the description break a run
        return f"? ({type(e).__name__})"
    return ""


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
        detail = ""
        f = frame
        while f is not None:
            code = f.f_code
            k, pkg, rel = _cls(code.co_filename)
            if k == "self" and code.co_name in HOOK_FUNCS:
                if code.co_name == "__torch_function__" and op is None:
                    func = f.f_locals.get("func")
                    if func is not None:
                        op = _op_name(func)
                        detail = _describe(op, f.f_locals.get("args") or (), f.f_locals.get("kwargs") or {})
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
        opk = (op or "?") + (f" [{detail}]" if detail else "")
        s["ops"][opk] = s["ops"].get(opk, 0) + 1

    # -- hooks -----------------------------------------------------------------------------
    def _showwarnmsg(self, msg):
        """The warnings module's last step, before a warning is shown or, inside a library's
        `catch_warnings(record=True)`, appended to its list. Hooking `showwarning` instead would
        lose the syncs such a library records (botorch's fit and optimize_acqf do) and see them
        again where it re-emits them, on its own line. Sync warnings are recorded and consumed."""
        if self.active and "synchroniz" in str(msg.message):
            self._walk(sys._getframe(1), "debug_mode")
            return
        _orig_showwarnmsg(msg)

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
_orig_showwarnmsg = warnings._showwarnmsg  # type: ignore[attr-defined]


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

    cuda = False
    simulate = False  # --device cpu: warn as the debug mode would for a few ops (tests the recording path)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.cuda and isinstance(func, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
            return self._custom_op(func, args, kwargs)
        out = func(*args, **kwargs)
        if self.simulate and _op_name(func) in _SIMULATED:
            warnings.warn("called a synchronizing CUDA operation (simulated on CPU)")
        return out

    def _custom_op(self, func, args, kwargs):
        """torch.ops.* (torchvision's nms, ...): their debug-mode warning is printed by c10, not raised
        as a Python warning, so run them once in "error" mode: an error means the op synchronises.
        They are pure functions, so running again after the error changes nothing."""
        REC.active = False  # switching modes is not a site
        torch.cuda.set_sync_debug_mode("error")
        REC.active = True
        try:
            return func(*args, **kwargs)
        except RuntimeError as e:
            if "synchroniz" not in str(e):
                raise
            REC._walk(sys._getframe(0), "debug_mode_error")
            REC.active = False
            torch.cuda.set_sync_debug_mode("default")
            REC.active = True
            return func(*args, **kwargs)
        finally:
            REC.active = False
            torch.cuda.set_sync_debug_mode("warn")
            REC.active = True


_SIMULATED = {"Tensor.item", "Tensor.tolist", "torch.nonzero", "Tensor.nonzero", "Tensor.cpu", "torch.unique"}


def device_sync():
    if torch.cuda.is_available():
        _ORIG["torch.cuda.synchronize"]()


class measuring:
    open = None  # the window now open: closed by `run` if a model fails or times out inside it

    def __init__(self, model, mode, device):
        self.model, self.mode, self.device = model, mode, device

    def __enter__(self):
        measuring.open = self
        REC.model, REC.mode = self.model, self.mode
        REC.current_events = REC.current_backward = REC.current_driver = 0
        device_sync()
        warnings.filterwarnings("always", message=".*synchroniz.*")
        warnings._showwarnmsg = REC._showwarnmsg  # type: ignore[attr-defined]
        self.namer = _OpNamer()
        self.namer.simulate = self.device.type != "cuda"
        self.namer.cuda = self.device.type == "cuda"
        self.namer.__enter__()
        REC.active = True
        if self.device.type == "cuda":
            torch.cuda.set_sync_debug_mode("warn")
        sys.settrace(REC._trace)
        f = sys._getframe(1)
        while f is not None:  # frames already running (a window opened from a callback) trace too
            if _cls(f.f_code.co_filename)[0] == "user":
                f.f_trace = REC._trace(f, "call", None)
            f = f.f_back
        return self

    def __exit__(self, *exc):
        if measuring.open is not self:
            return False
        measuring.open = None
        sys.settrace(None)
        if self.device.type == "cuda":
            torch.cuda.set_sync_debug_mode("default")
        REC.active = False
        self.namer.__exit__(*exc)
        warnings._showwarnmsg = _orig_showwarnmsg  # type: ignore[attr-defined]
        device_sync()
        return False


# ============================================================================================
# Workloads. Each builder returns {mode: callable}; a callable runs one step.
# ============================================================================================

def _opt(model):
    return torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)


def _call(model, args):
    """The model on `inputs()`: a dict as keyword arguments, a tuple as positional ones, else one argument."""
    if isinstance(args, dict):
        return model(**args)
    return model(*args) if isinstance(args, tuple) else model(args)


def train_loop(model, inputs, loss_of=lambda out: out.loss):
    opt = _opt(model)

    def step():
        model.train()
        out = _call(model, inputs())
        loss = loss_of(out)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def infer_loop(model, inputs):
    def step():
        model.eval()
        with torch.no_grad():
            _call(model, inputs())
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
        kw = {k: v for k, v in cfg.items() if k != "single_level"}
        config = getattr(transformers, cfg_name)(
            backbone_config=_small_resnet_backbone(("stage4",) if cfg.get("single_level")
                                                   else ("stage2", "stage3", "stage4")),
            num_labels=5, **kw)
        model = getattr(transformers, cls_name)(config).to(dev)
        processor = None
        if post:
            proc_cls = getattr(transformers, cls_name.replace("ForObjectDetection", "ImageProcessor"), None)
            processor = proc_cls() if proc_cls is not None else None

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
        return {"train": train_loop(model, x, loss_of), "infer": infer_loop(model, x)}
    return build


def tv_classifier(module, name, shape, **kw):
    def build(dev):
        import torch.nn.functional as F
        import torchvision
        mod = torchvision.models if module is None else getattr(torchvision.models, module)
        model = getattr(mod, name)(weights=None, num_classes=10, **kw).to(dev)
        x = lambda: torch.randn(*shape, device=dev)  # noqa: E731
        loss_of = lambda out: F.cross_entropy(out, torch.randint(0, 10, (shape[0],), device=dev))  # noqa: E731
        return {"train": train_loop(model, x, loss_of), "infer": infer_loop(model, x)}
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
    model = torchaudio.models.Tacotron2(n_symbol=40, n_mels=40, symbol_embedding_dim=64, encoder_embedding_dim=64,
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


def ta_simple(ctor, shape, **kw):
    def build(dev):
        import torchaudio
        model = getattr(torchaudio.models, ctor)(**kw).to(dev)
        x = lambda: torch.randn(*shape, device=dev)  # noqa: E731
        return {"train": train_loop(model, x, lambda out: out.float().pow(2).mean()), "infer": infer_loop(model, x)}
    return build


def ta_wavernn(dev):
    import torchaudio
    model = torchaudio.models.WaveRNN(upsample_scales=[5, 5, 8], n_classes=256, hop_length=200, n_res_block=2,
                                      n_rnn=64, n_fc=64, n_freq=40, n_hidden=32, n_output=32).to(dev)
    opt = _opt(model)

    def train():
        model.train()
        wave = torch.randn(2, 1, 200 * 6, device=dev)
        spec = torch.randn(2, 1, 40, 10, device=dev)
        out = model(wave, spec)
        loss = out.pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    def infer():
        model.eval()
        with torch.no_grad():
            model.infer(torch.randn(1, 40, 6, device=dev), torch.tensor([6], device=dev))
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


# -- library helpers called by user code: ops, augmentation, training utilities ------------------

def calls(*fns):
    """One step = every call in turn; a call that fails (an API absent in this version) is reported
    once and skipped, so the others still run."""
    failed = {}

    def step():
        for fn in fns:
            if fn.__name__ in failed:
                continue
            try:
                fn()
            except Exception as e:
                failed[fn.__name__] = f"{type(e).__name__}: {e}"[:200]
                print(f"    call {fn.__name__} failed: {failed[fn.__name__]}", flush=True)
    return step


def _boxes(dev, n, size=64.0):
    xy = torch.rand(n, 2, device=dev) * (size / 2)
    return torch.cat([xy, xy + torch.rand(n, 2, device=dev) * (size / 2) + 1], 1)


def tv_ops(dev):
    from torchvision import ops
    b, s_, i_ = _boxes(dev, 200), torch.rand(200, device=dev), torch.randint(0, 3, (200,), device=dev)
    feats = torch.randn(2, 8, 32, 32, device=dev)
    rois = [_boxes(dev, 10, 32.0), _boxes(dev, 12, 32.0)]
    logits, tgt = torch.randn(64, 5, device=dev), (torch.rand(64, 5, device=dev) > 0.8).float()
    masks = torch.rand(6, 64, 64, device=dev) > 0.7
    drop, sd = ops.DropBlock2d(0.2, 3), ops.StochasticDepth(0.2, "row")
    msroi = ops.MultiScaleRoIAlign(["a", "b"], 7, 2)
    offset = torch.zeros(2, 18, 32, 32, device=dev)
    weight = torch.randn(4, 8, 3, 3, device=dev)

    def nms(): ops.nms(b, s_, 0.5)
    def batched_nms(): ops.batched_nms(b, s_, i_, 0.5)
    def box_ious(): ops.box_iou(b, b); ops.generalized_box_iou(b, b); ops.complete_box_iou(b, b); ops.distance_box_iou(b, b)
    def box_losses():
        ops.generalized_box_iou_loss(b, b + 1, reduction="mean"); ops.complete_box_iou_loss(b, b + 1, reduction="mean")
        ops.distance_box_iou_loss(b, b + 1, reduction="mean")
    def focal(): ops.sigmoid_focal_loss(logits, tgt, reduction="mean")
    def small_boxes(): ops.remove_small_boxes(b, 2.0); ops.clip_boxes_to_image(b, (48, 48)); ops.box_convert(b, "xyxy", "cxcywh")
    def masks_to_boxes(): ops.masks_to_boxes(masks)
    def roi(): ops.roi_align(feats, rois, 7, 0.5); ops.roi_pool(feats, rois, 7, 0.5); ops.ps_roi_align(feats, rois, 2, 0.5)
    def multiscale(): msroi({"a": feats, "b": feats[:, :, ::2, ::2]}, rois, [(64, 64), (64, 64)])
    def deform(): ops.deform_conv2d(feats, offset, weight, padding=1)
    def dropblock(): drop.train(); drop(feats); sd.train(); sd(feats)
    return {"ops": calls(nms, batched_nms, box_ious, box_losses, focal, small_boxes, masks_to_boxes, roi,
                         multiscale, deform, dropblock)}


def tv_transforms_v2(dev):
    from torchvision import tv_tensors
    from torchvision.transforms import v2
    tf = v2.Compose([v2.RandomResizedCrop(96, antialias=True), v2.RandomHorizontalFlip(), v2.RandomRotation(15),
                     v2.RandomAffine(10, translate=(0.1, 0.1)), v2.ColorJitter(0.4, 0.4, 0.4, 0.1),
                     v2.GaussianBlur(5), v2.RandomErasing(), v2.ClampBoundingBoxes(), v2.SanitizeBoundingBoxes()])
    tf_batch = v2.Compose([v2.RandomPhotometricDistort(p=1.0), v2.RandomZoomOut(p=1.0), v2.RandomIoUCrop(),
                           v2.Resize((96, 96), antialias=True), v2.SanitizeBoundingBoxes()])
    cutmix_mixup = v2.RandomChoice([v2.CutMix(num_classes=10), v2.MixUp(num_classes=10)])
    norm = v2.Normalize([0.5] * 3, [0.25] * 3)

    def sample():
        img = tv_tensors.Image(torch.rand(3, 128, 128, device=dev))
        boxes = tv_tensors.BoundingBoxes(_boxes(dev, 6, 128.0), format="XYXY", canvas_size=(128, 128))
        return img, {"boxes": boxes, "labels": torch.randint(0, 5, (6,), device=dev)}

    def detection_aug(): tf(*sample())
    def ssd_aug(): tf_batch(*sample())
    def batch_aug():
        x = norm(torch.rand(8, 3, 64, 64, device=dev))
        cutmix_mixup(x, torch.randint(0, 10, (8,), device=dev))
    return {"augment": calls(detection_aug, ssd_aug, batch_aug)}


def timm_train_utils(dev):
    import timm
    from timm.loss import (AsymmetricLossMultiLabel, BinaryCrossEntropy, JsdCrossEntropy,
                           LabelSmoothingCrossEntropy)
    from timm.utils import ModelEmaV3, NativeScaler, accuracy
    model = timm.create_model("resnet18", pretrained=False, num_classes=10).to(dev)
    ema = ModelEmaV3(model, decay=0.99)
    scaler = NativeScaler()
    opt = _opt(model)
    ls, bce, jsd, asl = LabelSmoothingCrossEntropy(0.1), BinaryCrossEntropy(smoothing=0.1), \
        JsdCrossEntropy(num_splits=2), AsymmetricLossMultiLabel()
    n = [0]

    def train():
        model.train()
        x, y = torch.randn(8, 3, 64, 64, device=dev), torch.randint(0, 10, (8,), device=dev)
        with torch.autocast("cuda" if dev.type == "cuda" else "cpu", dtype=torch.float16 if dev.type == "cuda"
                            else torch.bfloat16):
            out = model(x)
            loss = ls(out, y) + bce(out, y) + jsd(out, y) + asl(out, torch.nn.functional.one_hot(y, 10))
        opt.zero_grad(set_to_none=True)
        scaler(loss, opt, clip_grad=1.0, parameters=model.parameters())
        n[0] += 1
        ema.update(model, step=n[0])
        accuracy(out, y, topk=(1, 5))
    return {"train": train}


def ta_transforms(dev):
    import torchaudio
    import torchaudio.functional as AF
    T = torchaudio.transforms
    wav, noise = torch.randn(2, 16000, device=dev), torch.randn(2, 16000, device=dev)
    mel_t = T.MelSpectrogram(16000, n_fft=400, n_mels=40).to(dev)
    mfcc_t = T.MFCC(16000, n_mfcc=13, melkwargs={"n_fft": 400, "n_mels": 40}).to(dev)
    spec_c = T.Spectrogram(n_fft=400, power=None).to(dev)
    stretch = T.TimeStretch(n_freq=201).to(dev)
    fm, tm = T.FrequencyMasking(8), T.TimeMasking(10)
    resample = T.Resample(16000, 8000).to(dev)
    db = T.AmplitudeToDB()
    fade, vol = T.Fade(1000, 1000), T.Vol(0.5)
    a, b = torch.tensor([1.0, -0.5], device=dev), torch.tensor([0.5, 0.5], device=dev)

    def mel(): db(mel_t(wav)); mfcc_t(wav)
    def masking(): m = mel_t(wav); fm(m); tm(m); AF.mask_along_axis_iid(m.unsqueeze(0), 10, 0.0, 3)
    def stretch_(): stretch(spec_c(wav), 1.2)
    def resample_(): resample(wav)
    def noise_(): AF.add_noise(wav, noise, torch.tensor([10.0, 5.0], device=dev))
    def filt(): AF.lfilter(wav[:, :2000], a, b); fade(wav); vol(wav)
    def spec_aug():
        aug = T.SpecAugment(n_time_masks=2, time_mask_param=10, n_freq_masks=2, freq_mask_param=8)
        aug(mel_t(wav))
    return {"augment": calls(mel, masking, stretch_, resample_, noise_, filt, spec_aug)}


def longformer(dev):
    import transformers
    config = transformers.LongformerConfig(vocab_size=512, hidden_size=64, num_hidden_layers=2,
                                           num_attention_heads=4, intermediate_size=128, attention_window=8,
                                           max_position_embeddings=130, pad_token_id=1)
    model = transformers.LongformerForMaskedLM(config).to(dev)

    def infer_in():
        ids, mask = _tokens(dev, 2, 64, 512, pad_last=10)
        g = torch.zeros_like(ids)
        g[:, 0] = 1
        return dict(input_ids=ids, attention_mask=mask, global_attention_mask=g)
    return hf_modes(model, lambda: {**infer_in(), "labels": torch.randint(3, 512, (2, 64), device=dev)}, infer_in)


def videomae_pretrain(dev):
    import transformers
    config = transformers.VideoMAEConfig(image_size=32, patch_size=8, num_frames=4, tubelet_size=2,
                                         hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                         intermediate_size=128, decoder_hidden_size=32, decoder_num_hidden_layers=1,
                                         decoder_num_attention_heads=2, decoder_intermediate_size=64)
    model = transformers.VideoMAEForPreTraining(config).to(dev)
    n_tokens = (4 // 2) * (32 // 8) ** 2

    def inputs():
        # the same number of masked tokens in every sample, as VideoMAE requires
        noise = torch.rand(2, n_tokens, device=dev)
        bool_masked_pos = noise.argsort(1).argsort(1) < n_tokens * 3 // 4
        return dict(pixel_values=torch.randn(2, 4, 3, 32, 32, device=dev), bool_masked_pos=bool_masked_pos)
    return hf_modes(model, inputs, inputs)


def vitmae_pretrain(dev):
    import transformers
    config = transformers.ViTMAEConfig(image_size=32, patch_size=8, hidden_size=64, num_hidden_layers=2,
                                       num_attention_heads=4, intermediate_size=128, decoder_hidden_size=32,
                                       decoder_num_hidden_layers=1, decoder_num_attention_heads=2,
                                       decoder_intermediate_size=64)
    model = transformers.ViTMAEForPreTraining(config).to(dev)

    def inputs():
        return dict(pixel_values=torch.randn(4, 3, 32, 32, device=dev))
    return hf_modes(model, inputs, inputs)


def wav2vec2_pretrain(dev):
    import transformers
    from transformers.models.wav2vec2.modeling_wav2vec2 import _compute_mask_indices, _sample_negative_indices
    config = transformers.Wav2Vec2Config(
        vocab_size=32, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
        conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
        num_conv_pos_embedding_groups=4, mask_time_prob=0.2, mask_time_length=2, num_negatives=10,
        codevector_dim=32, proj_codevector_dim=32, num_codevectors_per_group=16, num_codevector_groups=2)
    model = transformers.Wav2Vec2ForPreTraining(config).to(dev)

    def inputs():
        x = torch.randn(2, 4000, device=dev)
        seq = model._get_feat_extract_output_lengths(4000)
        mask = _compute_mask_indices((2, int(seq)), 0.2, 2, min_masks=2)
        neg = _sample_negative_indices((2, int(seq)), 10, mask)
        return dict(input_values=x, mask_time_indices=torch.tensor(mask, device=dev),
                    sampled_negative_indices=torch.tensor(neg, device=dev))
    return hf_modes(model, inputs, inputs)


def segformer(dev):
    import transformers
    config = transformers.SegformerConfig(num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1], hidden_sizes=[16, 32],
                                          patch_sizes=[7, 3], strides=[4, 2], num_attention_heads=[1, 2],
                                          mlp_ratios=[2, 2], decoder_hidden_size=32, num_labels=5)
    model = transformers.SegformerForSemanticSegmentation(config).to(dev)

    def inputs():
        return dict(pixel_values=torch.randn(2, 3, 64, 64, device=dev))

    def train_in():
        labels = torch.randint(0, 5, (2, 64, 64), device=dev)
        labels[:, :4] = 255
        return dict(**inputs(), labels=labels)
    return hf_modes(model, train_in, inputs)


def gpt2_generate_variants(dev):
    import transformers
    config = transformers.GPT2Config(vocab_size=512, n_layer=2, n_embd=64, n_head=4, n_positions=128,
                                     bos_token_id=1, eos_token_id=2, pad_token_id=0)
    model = transformers.GPT2LMHeadModel(config).to(dev).eval()
    model.generation_config.pad_token_id = 0

    def ids():
        i, m = _tokens(dev, 2, 8, 512)
        return dict(input_ids=i, attention_mask=m)

    def beam():
        with torch.no_grad():
            model.generate(**ids(), num_beams=3, max_new_tokens=8, early_stopping=True)

    def sample_filters():
        with torch.no_grad():
            model.generate(**ids(), do_sample=True, top_k=20, top_p=0.9, temperature=0.7, repetition_penalty=1.2,
                           no_repeat_ngram_size=2, max_new_tokens=8, eos_token_id=[2, 3])
    return {"generate_beam": beam, "generate_filters": sample_filters}


def deepseek_v3(dev):
    return moe_lm("DeepseekV3ForCausalLM", "DeepseekV3Config", hidden_size=64, intermediate_size=128,
                  moe_intermediate_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4,
                  n_shared_experts=1, n_routed_experts=8, n_group=2, topk_group=1, num_experts_per_tok=2,
                  first_k_dense_replace=1, kv_lora_rank=16, q_lora_rank=32, qk_rope_head_dim=8, v_head_dim=16,
                  qk_nope_head_dim=8, pad_token_id=0)(dev)


def hf_trainer(dev):
    """transformers' Trainer, the loop most users run: the measured window spans two whole loop
    iterations (batch fetch, training step, loss bookkeeping, clipping, optimizer, a logging step)."""
    import tempfile

    import transformers
    config = transformers.GPT2Config(vocab_size=512, n_layer=2, n_embd=64, n_head=4, n_positions=64)
    model = transformers.GPT2LMHeadModel(config)
    data = []
    for i in range(64):
        ids = torch.randint(3, 512, (32,))
        data.append({"input_ids": ids, "attention_mask": torch.ones(32, dtype=torch.long), "labels": ids.clone()})
    out_dir = tempfile.mkdtemp()
    window = {}

    class Window(transformers.TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            if state.global_step == 2:
                window["m"] = measuring("hf.trainer", "train", dev)
                window["m"].__enter__()
            elif state.global_step == 4 and "m" in window:
                window.pop("m").__exit__(None, None, None)
                window["done"] = True

    def train():
        args = transformers.TrainingArguments(
            output_dir=out_dir, max_steps=5, per_device_train_batch_size=4, logging_steps=3, save_strategy="no",
            report_to=[], max_grad_norm=1.0, use_cpu=dev.type != "cuda", disable_tqdm=True)
        trainer = transformers.Trainer(model=model, args=args, train_dataset=data, callbacks=[Window()])
        trainer.train()
        if "m" in window:
            window.pop("m").__exit__(None, None, None)
        if not window.get("done"):
            raise RuntimeError("the measured window did not close")
    return {"train_window": train}


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
    ("tv.s3d", "torchvision", tv_classifier("video", "s3d", (1, 3, 16, 224, 224))),
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
    ("tv.ops", "torchvision", tv_ops),
    ("tv.transforms_v2", "torchvision", tv_transforms_v2),
    ("timm.train_utils", "timm", timm_train_utils),
    ("ta.transforms", "torchaudio", ta_transforms),
    ("hf.longformer", "transformers", longformer),
    ("hf.videomae_pretrain", "transformers", videomae_pretrain),
    ("hf.vitmae_pretrain", "transformers", vitmae_pretrain),
    ("hf.wav2vec2_pretrain", "transformers", wav2vec2_pretrain),
    ("hf.segformer", "transformers", segformer),
    ("hf.gpt2_generate_variants", "transformers", gpt2_generate_variants),
    ("hf.deepseek_v3", "transformers", deepseek_v3),
    ("hf.trainer", "transformers", hf_trainer),
    ("hf.bart", "transformers", seq2seq("BartForConditionalGeneration", "BartConfig", d_model=64, encoder_layers=2,
                                        decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                                        encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=64)),
    ("tv.mc3_18", "torchvision", tv_classifier("video", "mc3_18", (2, 3, 8, 64, 64))),
    ("tv.maxvit_t", "torchvision", tv_classifier(None, "maxvit_t", (2, 3, 224, 224))),
    ("tv.fasterrcnn_mobilenet_v3_large_fpn", "torchvision", tv_detection("fasterrcnn_mobilenet_v3_large_fpn",
                                                                         min_size=256, max_size=320)),
    ("tv.maskrcnn_resnet50_fpn_v2", "torchvision", tv_detection("maskrcnn_resnet50_fpn_v2", masks=True,
                                                                min_size=256, max_size=320)),
    ("tv.ssd300_vgg16", "torchvision", tv_detection("ssd300_vgg16")),
    ("timm.levit_128s", "timm", timm_model("levit_128s", size=224)),
    ("timm.eva02_tiny_patch14_224", "timm", timm_model("eva02_tiny_patch14_224", size=224)),
    ("timm.swinv2_tiny_window8_256", "timm", timm_model("swinv2_tiny_window8_256", size=256)),
    ("timm.mobilevit_xs", "timm", timm_model("mobilevit_xs", size=256)),
    ("timm.xcit_nano_12_p16_224", "timm", timm_model("xcit_nano_12_p16_224", size=224)),
    ("timm.coatnet_0_rw_224", "timm", timm_model("coatnet_0_rw_224", size=224)),
    ("ta.wavernn", "torchaudio", ta_wavernn),
    ("ta.deepspeech", "torchaudio", ta_simple("DeepSpeech", (2, 1, 50, 40), n_feature=40, n_hidden=64, n_class=30)),
    ("ta.wav2letter", "torchaudio", ta_simple("Wav2Letter", (2, 40, 100), num_classes=30, input_type="mfcc",
                                              num_features=40)),
]


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout("per-model time limit")


VERSION_MODULES = ("transformers", "torchvision", "torchaudio", "timm", "accelerate", "scipy", "numpy")


def versions(modules=VERSION_MODULES, dists: dict | None = None):
    """Versions of python, torch and `modules` (their `__version__`), and of `dists`
    ({key: distribution name}, read from the installed metadata without importing them)."""
    from importlib import metadata
    out = {"python": sys.version.split()[0], "torch": torch.__version__, "cuda": torch.version.cuda}
    for mod in modules:
        try:
            out[mod] = __import__(mod).__version__
        except Exception as e:  # absent or broken: say so
            out[mod] = f"unavailable ({type(e).__name__})"
    for key, dist in (dists or {}).items():
        try:
            out[key] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[key] = "unavailable (not installed)"
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


def arg_parser(description: str, budget: float = 500.0, per_model: float = 60.0) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--only", default="")
    ap.add_argument("--skip", default="")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--budget", type=float, default=budget, help="stop starting models after this many seconds")
    ap.add_argument("--per-model", type=float, default=per_model)
    return ap


def main(argv=None):
    args = arg_parser(__doc__.splitlines()[0]).parse_args(argv)
    run(MODELS, args, {"versions": versions(), "date": DATE})


def run(models, args, meta: dict):
    """Build and measure each (name, package, builder) of `models`, each under a time limit, writing
    args.out/sync_raw.json after every model. `meta` (versions, date, ...) is written with it."""
    dev = torch.device(args.device)
    os.makedirs(args.out, exist_ok=True)
    only = {s for s in args.only.split(",") if s}
    skip = {s for s in args.skip.split(",") if s}
    meta = {**meta, "device": torch.cuda.get_device_name(0) if dev.type == "cuda" else "cpu",
            "started": datetime.datetime.now().isoformat(timespec="seconds")}
    print(json.dumps(meta), flush=True)
    t_start = time.time()
    results = []
    signal.signal(signal.SIGALRM, _alarm)
    for name, package, build in models:
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
                    if mode.endswith("_window"):  # opens and closes its own measured window
                        step()
                        r["mode"] = mode = mode.removesuffix("_window")
                    else:
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
            if measuring.open is not None:  # a window opened inside a step that failed
                measuring.open.__exit__(None, None, None)
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
