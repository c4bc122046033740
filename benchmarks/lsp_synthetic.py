"""A synthetic PyTorch repository for the language server's latency benchmark: packages of model,
loss, data and training modules that import and call each other across files, written from a
fixed seed so that every run lints the same code.

Each module holds what real training code holds: `nn.Module` classes with `__init__` and
`forward`, loss functions (some with the syncs the rules flag: `.item()`, boolean masks,
`nonzero`, `unique`), helpers called from other files, data loaders, and training loops that call
into the other modules every step. `big_module(n_lines)` writes one module of about `n_lines`
lines from the same pieces (the file being edited in the benchmark).
"""

from __future__ import annotations

import random
from pathlib import Path

_MODEL = '''
class {cls}(nn.Module):
    """Block {i} of the {pkg} stack."""

    def __init__(self, dim={dim}, hidden={hidden}, classes={classes}):
        super().__init__()
        self.proj = nn.Linear(dim, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.drop = nn.Dropout(0.{drop})
        self.head = nn.Linear(hidden, classes)
        self.register_buffer("scale", torch.ones(hidden))
        self.steps = 0

    def forward(self, x, mask=None):
        h = self.proj(x)
        h = self.norm(h) * self.scale
        h = F.gelu(h)
        if mask is not None:
            h = h.masked_fill(~mask[..., None], 0.0)
        h = self.drop(h)
        h = {helper}(h)
        out = self.head(h)
        self.steps += 1
        return out

    def extra_repr(self):
        return f"dim={{self.proj.in_features}}, hidden={{self.proj.out_features}}"
'''

_LOSS = '''

def {name}(logits, target, ignore_index={ignore}):
    """Cross-entropy of block {i}, with the background class dropped."""
    valid = target != ignore_index
    {body}
    return loss


def {name}_weights(target, classes={classes}):
    counts = torch.bincount(target.flatten(), minlength=classes).float()
    weights = counts.sum() / (counts + 1.0)
    return weights / weights.mean()
'''

_LOSS_BODIES = [
    "loss = F.cross_entropy(logits[valid], target[valid])",
    "loss = F.cross_entropy(logits, target.masked_fill(~valid, -100), ignore_index=-100)",
    "idx = torch.nonzero(valid, as_tuple=True)\n    loss = F.cross_entropy(logits[idx], target[idx])",
    "n = valid.sum().item()\n    loss = F.cross_entropy(logits, target, reduction='sum') / max(n, 1)",
    ("labels = torch.unique(target)\n    loss = F.cross_entropy(logits, target)\n    if labels.numel() < 2:\n"
     "        loss = loss * 0.0"),
]

_HELPER = '''

def {name}(x, eps={eps}):
    """Normalise the last dimension (helper {i})."""
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    y = (x - mean) / torch.sqrt(var + eps)
    return {inner}
'''

_DATA = '''

class {cls}(torch.utils.data.Dataset):
    def __init__(self, n={n}, dim={dim}, classes={classes}, seed={seed}):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, dim, generator=g)
        self.y = torch.randint(0, classes, (n,), generator=g)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return self.x[i], self.y[i]


def {loader}(batch_size={batch}, workers={workers}):
    return DataLoader({cls}(), batch_size=batch_size, shuffle=True, num_workers=workers{pin})
'''

_TRAIN = '''

def {name}(model, loader, optimizer, device="cuda", epochs={epochs}):
    """Training loop {i}: calls the models, losses and helpers of other modules every step."""
    model.to(device)
    history = []
    for epoch in range(epochs):
        total = 0.0
        for step, (x, y) in enumerate(loader):
            x = x.to(device{nb})
            y = y.to(device{nb})
            logits = model(x)
            loss = {loss}(logits, y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            total += {acc}
            if step % 100 == 0:
                print(f"epoch {{epoch}} step {{step}}: {{total / (step + 1):.4f}}")
        history.append(total)
    torch.save(model.state_dict(), "checkpoint_{i}.pt")
    return history
'''

_EVAL = '''

@torch.no_grad()
def {name}(model, loader, device="cuda"):
    model.eval()
    correct, seen = 0, 0
    for x, y in loader:
        pred = model(x.to(device)).argmax(dim=-1)
        correct += (pred == y.to(device)).sum().item()
        seen += y.numel()
    model.train()
    return correct / max(seen, 1)
'''


def _header(rng: random.Random, pkg: str, mod: int, n_mods: int) -> tuple[list[str], list[str]]:
    """A module's docstring and imports (torch, and a helper of two sibling modules)."""
    out = [f'"""Synthetic module {pkg}.mod{mod} (generated for the latency benchmark)."""', "",
           "import torch", "import torch.nn as nn", "import torch.nn.functional as F",
           "from torch.utils.data import DataLoader"]
    imported = []
    for o in rng.sample(range(n_mods), k=min(2, n_mods)):
        if o != mod:
            name = f"norm_{pkg}_{o}_0"
            out.append(f"from {pkg}.mod{o} import {name}")
            imported.append(name)
    return out + [""], imported


def _pieces(rng: random.Random, pkg: str, mod: int, first: int, count: int, imported: list[str],
            defined: list[str]) -> list[str]:
    """`count` blocks drawn from the templates, numbered from `first`; `defined` collects the
    helpers and losses written so far (later blocks call them)."""
    out = []
    for k in range(first, first + count):
        kind = "helper" if k == 0 else rng.choice(("model", "loss", "helper", "helper", "data", "train", "eval"))
        tag = f"{pkg}_{mod}_{k}"
        helpers = [d for d in defined if d.startswith("norm_")] + imported
        losses = [d for d in defined if d.startswith("loss_")]
        if kind == "helper":
            inner = f"{rng.choice(imported)}(y)" if imported and rng.random() < 0.5 else "y"
            out.append(_HELPER.format(name=f"norm_{tag}", i=tag, eps=rng.choice(("1e-5", "1e-6")), inner=inner))
            defined.append(f"norm_{tag}")
        elif kind == "model":
            out.append(_MODEL.format(cls=f"Block{tag.title().replace('_', '')}", i=tag, pkg=pkg,
                                     dim=rng.choice((64, 128, 256)), hidden=rng.choice((128, 256, 512)),
                                     classes=rng.choice((10, 21, 100)), drop=rng.randint(0, 3),
                                     helper=rng.choice(helpers)))
        elif kind == "loss":
            out.append(_LOSS.format(name=f"loss_{tag}", i=tag, ignore=rng.choice((0, -1, 255)),
                                    classes=rng.choice((10, 21, 100)), body=rng.choice(_LOSS_BODIES)))
            defined.append(f"loss_{tag}")
        elif kind == "data":
            out.append(_DATA.format(cls=f"Data{tag.title().replace('_', '')}", loader=f"loader_{tag}",
                                    n=rng.choice((1024, 4096)), dim=rng.choice((64, 128, 256)),
                                    classes=rng.choice((10, 21)), seed=rng.randint(0, 999),
                                    batch=rng.choice((32, 64)), workers=rng.choice((0, 2, 4)),
                                    pin=rng.choice(("", ", pin_memory=True"))))
        elif kind == "train":
            out.append(_TRAIN.format(name=f"train_{tag}", i=tag, epochs=rng.randint(1, 5),
                                     nb=rng.choice(("", ", non_blocking=True")),
                                     loss=rng.choice(["F.cross_entropy", *losses]),
                                     acc=rng.choice(("loss.item()", "loss.detach()", "float(loss)"))))
        else:
            out.append(_EVAL.format(name=f"evaluate_{tag}"))
    return out


def make_repo(root: Path, n_files: int, seed: int = 0, pieces: int = 4) -> list[Path]:
    """Write `n_files` modules under `root` (packages of 50 modules) and a pyproject.toml with a
    [tool.syncscan] table; return the module paths."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text('[project]\nname = "synthetic"\n\n[tool.syncscan]\nselect = ["SYN"]\n')
    paths = []
    per_pkg = 50
    for start in range(0, n_files, per_pkg):
        pkg = f"pkg{start // per_pkg}"
        d = root / pkg
        d.mkdir(exist_ok=True)
        (d / "__init__.py").write_text("")
        n_mods = min(per_pkg, n_files - start)
        for m in range(n_mods):
            head, imported = _header(rng, pkg, m, n_mods)
            p = d / f"mod{m}.py"
            p.write_text("\n".join(head + _pieces(rng, pkg, m, 0, pieces, imported, [])) + "\n")
            paths.append(p)
    return paths


def big_module(n_lines: int, seed: int = 1, pkg: str = "pkg0", mod: int = 9999) -> str:
    """One module of about `n_lines` lines from the same templates, importing `pkg`'s modules."""
    rng = random.Random(seed)
    head, imported = _header(rng, pkg, mod, 50)
    blocks: list[str] = []
    defined: list[str] = []
    while sum(b.count("\n") + 1 for b in head + blocks) < n_lines:
        blocks += _pieces(rng, pkg, mod, len(blocks), 1, imported, defined)
    return "\n".join(head + blocks) + "\n"
