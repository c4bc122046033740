"""Attributes of one instance of a class of the module, from the calls made on it (syncscan/lint/instances.py),
and running totals of tensors kept in attributes (walk._running_totals): the AverageMeter of training scripts."""

import textwrap

from syncscan.lint.engine import lint_source
from syncscan.lint.registry import all_rules

RULES = [r() for r in all_rules()]

METER = """
import torch


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.val = 0
        self.avg = 0
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def summary(self):
        return "{} {:.3f}".format(self.name, self.avg)


def train(loader, model, criterion, optimizer):
    losses = AverageMeter("Loss")
    top1 = AverageMeter("Acc@1")
    for images, target in loader:
        output = model(images)
        loss = criterion(output, target)
        acc1 = (output.argmax(1) == target).float().mean() * 100
        losses.update(loss.item(), images.size(0))
        top1.update(acc1, images.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"loss {losses.avg:.4f} acc {top1.avg:.2f}")
"""


def _found(src):
    r = lint_source("train.py", textwrap.dedent(src), RULES)
    assert r.error is None
    return [(f.line, f.code, f.message.split(" syncs")[0]) for f in r.findings]


def test_an_instance_fed_tensors_holds_tensors_and_one_fed_numbers_does_not():
    got = _found(METER)
    lines = textwrap.dedent(METER).splitlines()
    printed = lines.index('        print(f"loss {losses.avg:.4f} acc {top1.avg:.2f}")') + 1
    summary = lines.index('        return "{} {:.3f}".format(self.name, self.avg)') + 1
    assert (printed, "SYN105", "`top1.avg` in an f-string") in got
    assert not any(line == printed and "losses" in what for line, _, what in got)  # `loss.item()`: numbers
    # the class's own formatting of its total: `update` is handed a tensor by one caller
    assert any(line == summary and code == "SYN105" for line, code, _ in got)


def test_a_total_of_numbers_stays_a_number():
    """`self.length += x.shape[-2]`: a parameter that is a tensor, but what is added is an int."""
    src = METER.replace("self.sum += val * n", "self.sum += val.shape[0] * n").replace(
        "top1.update(acc1, images.size(0))", "top1.update(images, 1)")
    got = _found(src)
    assert not any(code in ("SYN105", "SYN104") for _, code, _ in got), got
