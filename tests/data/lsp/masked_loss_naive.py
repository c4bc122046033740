"""Semantic segmentation with a masked loss, written the way the seed article first wrote it.

The loss makes the host wait for the GPU several times per step:
`torch.nonzero` + index assignment to drop the background class, `torch.unique` to count the
labels and a Python `if` on its size, and a cross-entropy over boolean-masked logits and
targets (whose backward syncs once more). See masked_loss_fixed.py for the sync-free version.

    python fixtures/masked_loss_naive.py [--device cpu|cuda] [--steps N] [--batch B] [--size S]
"""

from __future__ import annotations

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.profiler import record_function

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _common, however we are run
import _common  # noqa: E402

NUM_CLASSES = 10
DEFAULTS = {"cuda": dict(steps=20, warmup=3, batch=32, size=256),
            "cpu": dict(steps=5, warmup=1, batch=4, size=64)}


class Net(nn.Module):
    """conv 3->10, `num_hidden` 3x3 convs 10->10, conv 10->num_classes; full resolution."""

    def __init__(self, num_hidden: int = 10, num_classes: int = NUM_CLASSES):
        super().__init__()
        self.in_conv = nn.Conv2d(3, 10, 3, padding="same")
        hidden = []
        for _ in range(num_hidden):
            hidden += [nn.Conv2d(10, 10, 3, padding="same"), nn.ReLU()]
        self.hidden = nn.Sequential(*hidden)
        self.out_conv = nn.Conv2d(10, num_classes, 3, padding="same")

    def forward(self, x):
        return self.out_conv(self.hidden(F.relu(self.in_conv(x))))


class MaskedLoss(nn.Module):
    """Cross-entropy over the non-background pixels; zero when fewer than two labels remain.

    Modifies `target` in place (the background becomes `ignore_val`), as the original did."""

    def __init__(self, num_classes: int = NUM_CLASSES, ignore_val: int = -1):
        super().__init__()
        self.num_classes = num_classes
        self.ignore_val = ignore_val

    def forward(self, pred, target):
        with record_function("loss"):
            # drop the background class (the last one)
            inds = torch.nonzero(target == self.num_classes - 1, as_tuple=True)
            target[inds] = self.ignore_val
            # the labels left, ignore_val included
            unique_labels = torch.unique(target)
            # cross-entropy over the valid pixels only
            mask = target != self.ignore_val
            pred = pred.permute(0, 2, 3, 1)
            loss = F.cross_entropy(pred[mask], target[mask])
            # require at least two labels
            if unique_labels.numel() < 2:
                loss = 0. * loss
            return loss


def make_step(device: torch.device, batch: int, size: int, seed: int = 0, **_):
    """Build model, loss and optimizer; return a callable that runs one training step on a
    fresh synthetic batch and returns the (detached) loss."""
    torch.manual_seed(seed)
    model = Net().to(device)
    loss_fn = MaskedLoss()
    optimizer = torch.optim.Adam(model.parameters())

    def step():
        images = _common.random_images(batch, size, device)
        target = _common.random_labels(batch, size, NUM_CLASSES, device)
        with record_function("forward"):
            pred = model(images)
        loss = loss_fn(pred, target)
        with record_function("backward"):
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
        with record_function("optimizer"):
            optimizer.step()
        return loss.detach()

    return step


def main(argv=None):
    args = _common.parse_args(__doc__.splitlines()[0], DEFAULTS, argv=argv)
    step = make_step(args.device, args.batch, args.size, seed=args.seed)
    for _ in range(args.warmup):
        step()
    timer = _common.Timer(args.device)
    for _ in range(args.steps):
        loss = step()
    seconds = timer.stop()
    _common.report("masked_loss_naive", args.device, args.steps, seconds, loss)


if __name__ == "__main__":
    main()
