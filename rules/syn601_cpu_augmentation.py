import ast

from syncscan.lint.imports import qualify
from syncscan.lint.rule import Bad, Footprint, Good, Rule

from ._util import is_dataloader_call, kwarg, moves_to_device, short

# torchvision transforms that resample or filter every pixel of every image (rotation, warps,
# blur, colour-space conversion, policy augmentations built from them, JPEG round trips): the
# per-sample work that makes DataLoader workers fall behind a GPU. Crops, flips, resizes and
# ToTensor are left out: they are cheap, or part of any pipeline (the image must be decoded and
# sized somewhere).
HEAVY_TRANSFORMS = frozenset({
    "RandomRotation", "RandomAffine", "RandomPerspective", "ElasticTransform", "GaussianBlur", "ColorJitter",
    "AutoAugment", "RandAugment", "TrivialAugmentWide", "AugMix", "RandomPhotometricDistort", "JPEG",
})
HEAVY_FUNCTIONS = frozenset({"rotate", "affine", "perspective", "elastic_transform", "gaussian_blur", "adjust_hue",
                             "elastic", "jpeg"})
# transforms that hold others: what they hold runs per sample too
CONTAINERS = frozenset({"Compose", "RandomApply", "RandomChoice", "RandomOrder"})
DATASET_BASES = ("torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset", "torchvision.datasets.")
TRANSFORM_KEYWORDS = ("transform", "transforms")
MAX_DEPTH = 4


def _transform_name(ctx, call: ast.AST) -> str | None:
    """`RandomRotation` for a call of torchvision's transforms (v1 or v2), else None."""
    if not isinstance(call, ast.Call):
        return None
    q = ctx.call_name(call) or ""
    if not q.startswith("torchvision.transforms."):
        return None
    return q.rsplit(".", 1)[1]


def _single_binding(ctx, node: ast.AST) -> ast.AST | None:
    """The one value a name (or `self.attr`) is bound to in the file; None when it is bound
    more than once or not at all (then what it holds cannot be told)."""
    key = node.id if isinstance(node, ast.Name) else (
        "self." + node.attr if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        and node.value.id == "self" else None)
    values = ctx.file.index.assigned(key) if key else []
    return values[0] if len(values) == 1 else None


def heavy_in(ctx, expr: ast.AST | None, depth: int = 0) -> list[ast.Call]:
    """The heavy transforms a transform expression builds: itself, what a Compose (RandomApply,
    ...) holds, through names bound once in the file."""
    if expr is None or depth > MAX_DEPTH:
        return []
    if isinstance(expr, (ast.Name, ast.Attribute)):
        return heavy_in(ctx, _single_binding(ctx, expr), depth + 1)
    if isinstance(expr, (ast.List, ast.Tuple)):
        return [h for e in expr.elts for h in heavy_in(ctx, e, depth + 1)]
    name = _transform_name(ctx, expr)
    if name in HEAVY_TRANSFORMS:
        return [expr]
    if name in CONTAINERS and expr.args:
        return heavy_in(ctx, expr.args[0], depth + 1)
    return []


def _class_of(ctx, call: ast.Call) -> ast.ClassDef | None:
    """The Dataset subclass defined in this file that `call` instantiates."""
    if not isinstance(call.func, ast.Name):
        return None
    for node in ctx.tree.body:
        if isinstance(node, ast.ClassDef) and node.name == call.func.id:
            if any((qualify(b, ctx.imports) or "").startswith(DATASET_BASES) for b in node.bases):
                return node
    return None


def _getitem_heavy(ctx, cls: ast.ClassDef) -> list[ast.Call]:
    """Heavy transforms called in the class's `__getitem__`: torchvision's functional forms
    (`TF.rotate(img, a)`), a transform made there and called (`T.GaussianBlur(9)(img)`), or
    `self.aug(img)` where `self.aug` is bound once, to a heavy pipeline."""
    out: list[ast.Call] = []
    for fn in cls.body:
        if not (isinstance(fn, ast.FunctionDef) and fn.name == "__getitem__"):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, ast.Call):
                continue
            q = ctx.call_name(node) or ""
            if q.startswith("torchvision.transforms.") and ".functional." in q \
                    and q.rsplit(".", 1)[1] in HEAVY_FUNCTIONS:
                out.append(node)
            elif isinstance(node.func, ast.Call) and heavy_in(ctx, node.func):
                out.append(node)
            elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name) \
                    and node.func.value.id == "self" and heavy_in(ctx, node.func):
                out.append(node)
    return out


class CpuAugmentation(Rule):
    code = "SYN601"
    name = "cpu-augmentation"
    summary = ("Heavy per-sample augmentation on the CPU (torchvision's rotations, affine and perspective "
               "warps, blurs, colour jitter, AutoAugment-style policies) in a Dataset whose DataLoader feeds "
               "the GPU: as the dataset's `transform`, or called in its `__getitem__`.")
    why = ("Every image is resampled or filtered one at a time in the DataLoader's workers (or, with "
           "`num_workers=0`, in the training loop itself). A GPU trains on a batch in milliseconds; when the "
           "workers need longer to make one, the step waits for data and the GPU idles: the input pipeline "
           "sets the pace, and removing host-device syncs gains nothing until it is faster.")
    rewrite = ("Keep decoding, cropping and resizing in the workers; copy the batch to the GPU and augment it "
               "there, the whole batch at once with a random parameter per image (`F.affine_grid` + "
               "`F.grid_sample`, `torchvision.ops.roi_align`, a grouped `conv2d` blur, or "
               "`kornia.augmentation`), on a CUDA stream of its own so that it overlaps training "
               "(see fixtures/augment_gpu_stream.py). `syncscan profile` measures whether the loader sets the "
               "pace, and predicts what moving the augmentation saves.")
    fix_safety = "none"
    triggers = ("DataLoader",)
    ops = ()
    rewrite_hint = "augment whole batches on the GPU, on a CUDA stream of their own"
    footprint = Footprint()  # no sync: the input pipeline's own model prices it (syncscan profile)
    per_step = True  # runs for every sample of every step, in the workers, wherever it is written
    bad = (
        Bad("""
import torch
import torchvision.transforms.v2 as T
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

augment = T.Compose([T.RandomResizedCrop(224), T.RandomRotation(30), T.GaussianBlur(9)])
loader = DataLoader(ImageFolder("data", transform=augment), batch_size=64, num_workers=8)
for images, labels in loader:
    loss = model(images.cuda()).sum()
""", line=7, count=2),
        Bad("""
import torch
import torchvision.transforms.functional as TF
from torch.utils.data import DataLoader, Dataset

class Augmented(Dataset):
    def __init__(self, images):
        self.images = images
    def __len__(self):
        return len(self.images)
    def __getitem__(self, i):
        return TF.rotate(self.images[i], 15.0)

def train(model, images, device):
    for x in DataLoader(Augmented(images), batch_size=32):
        model(x.to(device)).sum().backward()
""", line=12),
        Bad("""
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

class Pairs(Dataset):
    def __init__(self, images):
        self.images = images
        self.jitter = transforms.ColorJitter(0.4, 0.4, 0.4, 0.1)
    def __getitem__(self, i):
        return self.jitter(self.images[i])

loader = DataLoader(Pairs(data), batch_size=32, pin_memory=True)
for x in loader:
    model(x.to("cuda"))
""", line=10),
    )
    good = (
        Good("""
import torchvision.transforms.v2 as T
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

# cheap per-sample work only: decoding, a crop and a flip
loader = DataLoader(ImageFolder("data", transform=T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(),
                                                               T.ToTensor()])), batch_size=64)
for images, labels in loader:
    model(images.cuda())
"""),
        Good("""
import torchvision.transforms.v2 as T
from torch.utils.data import DataLoader
from torchvision.datasets import ImageFolder

# this file never copies to a GPU: a CPU training run
loader = DataLoader(ImageFolder("data", transform=T.RandomRotation(30)), batch_size=64)
for images, labels in loader:
    model(images)
"""),
        Good("""
import torchvision.transforms.v2 as T
from torch.utils.data import DataLoader

def make(dataset_cls, augment):
    # what the transform is, is decided by the caller: cannot tell
    return DataLoader(dataset_cls("data", transform=augment), batch_size=64)

for x in make(Images, T.RandomRotation(30)):
    model(x.cuda())
"""),
        Good("""
import torch
import torchvision.transforms.v2 as T
from torch.utils.data import DataLoader

blur = T.GaussianBlur(9)
for images in DataLoader(dataset, batch_size=64, pin_memory=True):
    images = blur(images.cuda(non_blocking=True))  # on the GPU, the whole batch
"""),
    )

    def visit_Call(self, node, ctx):
        if not is_dataloader_call(ctx, node) or not moves_to_device(ctx):
            return
        dataset = node.args[0] if node.args else kwarg(node, "dataset")
        if isinstance(dataset, (ast.Name, ast.Attribute)):
            dataset = _single_binding(ctx, dataset)
        if not isinstance(dataset, ast.Call):
            return
        found = [h for k in TRANSFORM_KEYWORDS for h in heavy_in(ctx, kwarg(dataset, k))]
        cls = _class_of(ctx, dataset)
        if cls is not None:
            found += _getitem_heavy(ctx, cls)
        reported = ctx.file.state(self, set)
        for h in found:
            if id(h) in reported:
                continue
            reported.add(id(h))
            self.report(ctx, h, f"`{short(ctx, h)}` runs on the CPU for every sample the DataLoader "
                        f"`{short(ctx, node, 40)}` loads, and its batches go to the GPU: when the workers fall "
                        "behind, each step waits for data",
                        "augment whole batches on the GPU, on a CUDA stream of their own (`syncscan profile` "
                        "says whether the loader sets the pace, and what this saves)")
