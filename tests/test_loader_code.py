"""Code only the DataLoader runs (syncscan/lint/loader_code.py): a Dataset's `__getitem__`, what it
calls, the collate function. Its tensors are host tensors, so its findings are dropped, unless the
same code also runs in the step (then it keeps its context)."""

from __future__ import annotations

import ast
import json
import textwrap

from syncscan.cli import main
from syncscan.lint.engine import lint_source, settle_context
from syncscan.lint.imports import import_map
from syncscan.lint.loader_code import loader_functions
from syncscan.lint.registry import all_rules

RULES = [r() for r in all_rules()]

DATASET = """
import torch
from torch.utils.data import Dataset, DataLoader


class Prep:
    def __call__(self, img, target):
        keep = target["boxes"][:, 0] > 0
        return img, target["boxes"][keep]           # loader


def shared(x):
    return x[x > 0].tolist()


def only_loader(x):
    return x[x > 0]                                 # loader


class Coco(Dataset):
    def __init__(self, boxes):
        self.prep = Prep()
        self.boxes = boxes  # read from disk: where it lives, the linter cannot see

    def __getitem__(self, i):
        x = torch.randn(4)
        only_loader(x)
        return self.prep(x, {"boxes": self.boxes[i]}), shared(x)


def collate(batch):
    xs = torch.stack([b[0] for b in batch])
    return xs[xs > 0]                               # loader


def train(model, opt):
    loader = DataLoader(Coco(torch.load("boxes.pt")), collate_fn=collate)
    for x in loader:
        x = x.cuda()
        loss = model(x)
        loss.backward()
        opt.step()
        shared(x)
"""


def _findings(files: dict[str, str]):
    results = [lint_source(p, textwrap.dedent(s), RULES) for p, s in files.items()]
    for r in results:
        assert r.error is None, r.error
    settle_context(results)
    return {(r.path, f.line) for r in results for f in r.findings}


def _lines(src: str, mark: str) -> set[int]:
    return {i for i, line in enumerate(textwrap.dedent(src).splitlines(), 1) if line.rstrip().endswith(mark)}


def test_loader_only_code_is_found_from_the_dataset_and_the_collate_fn():
    tree = ast.parse(textwrap.dedent(DATASET))
    keys = loader_functions(tree, "d.py", import_map(tree))
    assert keys == {"d.py::Coco.__getitem__", "d.py::Prep.__call__", "d.py::only_loader", "d.py::collate"}


def test_findings_in_loader_code_are_dropped_and_shared_code_keeps_its_own():
    found = _findings({"d.py": DATASET})
    assert not {("d.py", n) for n in _lines(DATASET, "# loader")} & found
    shared = next(i for i, line in enumerate(textwrap.dedent(DATASET).splitlines(), 1) if "x[x > 0].tolist()" in line)
    assert ("d.py", shared) in found  # called from the step too


def test_the_same_code_without_a_dataset_keeps_its_findings():
    plain = DATASET.replace("(Dataset)", "").replace("collate_fn=collate", "fn=collate")
    dropped = _findings({"d.py": plain}) - _findings({"d.py": DATASET})
    lines = [textwrap.dedent(plain).splitlines()[n - 1] for _, n in dropped]
    assert any('target["boxes"][keep]' in t for t in lines) and any("xs[xs > 0]" in t for t in lines), lines


def test_a_collate_class_named_for_it_and_handed_over_in_another_file():
    data = """
        import torch
        class PadCollate:
            def __call__(self, batch):
                lens = torch.stack([b.shape[0] for b in batch])
                return lens[lens > 0]
    """
    assert not _findings({"data.py": data, "train.py": "from data import PadCollate\nloader = PadCollate()\n"})


def test_loader_code_that_the_step_of_another_file_calls_is_kept(tmp_path, capsys):
    data = textwrap.dedent("""
        import torch
        from torch.utils.data import Dataset

        def boxes_of(x: torch.Tensor):
            return x[x > 0]

        class D(Dataset):
            def __getitem__(self, i):
                return boxes_of(torch.randn(4))
    """)
    train = textwrap.dedent("""
        from data import boxes_of

        def fit(model, loader, opt):
            for x in loader:
                loss = model(boxes_of(x.cuda())).sum()
                loss.backward()
                opt.step()
    """)
    (tmp_path / "data.py").write_text(data)
    (tmp_path / "train.py").write_text(train)
    (tmp_path / "pyproject.toml").write_text("")
    for named in (["data.py"], ["data.py", "train.py"]):  # whatever files are named: the project decides
        capsys.readouterr()
        code = main(["lint", "--all", "--no-cache", "--format", "json", *[str(tmp_path / n) for n in named]])
        assert code == 1
        got = [(f["path"].rsplit("/", 1)[-1], f["line"], f["context"]) for f in json.loads(capsys.readouterr().out)]
        assert ("data.py", 6, "hot") in got, got
    (tmp_path / "train.py").write_text("")  # now only the loader runs it
    assert main(["lint", "--all", "--no-cache", str(tmp_path / "data.py")]) == 0


def test_a_per_step_rule_in_the_dataset_keeps_its_finding(tmp_path, capsys):
    (tmp_path / "aug.py").write_text(textwrap.dedent("""
        import torchvision.transforms.functional as TF
        from torch.utils.data import DataLoader, Dataset

        class Augmented(Dataset):
            def __getitem__(self, i):
                return TF.rotate(self.images[i], 15.0)

        def train(model, images, device):
            for x in DataLoader(Augmented(images), batch_size=32):
                model(x.to(device)).sum().backward()
    """))
    main(["lint", "--no-cache", "--format", "json", str(tmp_path / "aug.py")])
    assert any(f["code"] == "SYN601" and f["context"] == "hot" for f in json.loads(capsys.readouterr().out))
