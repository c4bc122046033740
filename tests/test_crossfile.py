"""Kinds across the modules of one tree (syncscan/lint/crossfile.py): what a function or class
imported from another module of the linted tree gives, and the cache's respect for those files."""

from __future__ import annotations

import ast
import gc
import json
import textwrap
from pathlib import Path

from syncscan.lint.engine import lint_source
from syncscan.lint.registry import all_rules

RULES = [r() for r in all_rules()]

MISC = """
import torch
def error_ratio(err, tol):
    return torch.max(err.abs() / tol)
def count(x):
    return x.shape[0]
"""
SOLVER = """
from .misc import error_ratio, count
from pkg import misc
from .models import Net
def step(err, tol, x):
    r = error_ratio(err, tol)
    if r < 1:
        pass
    if count(x) > 1:
        pass
    if misc.error_ratio(err, tol) <= 1:
        pass
    net = Net()
    if net(x).sum() > 0:
        pass
"""
MODELS = """
import torch
class Net(torch.nn.Module):
    def forward(self, x):
        return x
"""


def make(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "misc.py").write_text(textwrap.dedent(MISC))
    (pkg / "models.py").write_text(textwrap.dedent(MODELS))
    (pkg / "solver.py").write_text(textwrap.dedent(SOLVER))
    return pkg


def test_returns_of_functions_and_classes_of_other_modules(tmp_path):
    pkg = make(tmp_path)
    path = str(pkg / "solver.py")
    src = (pkg / "solver.py").read_text()
    r = lint_source(path, src, RULES, cross_file=True)
    assert [(f.line, f.code) for f in r.findings] == [(7, "SYN104"), (11, "SYN104"), (14, "SYN104")]
    assert {Path(d[0]).name for d in r.deps} == {"misc.py", "models.py"}
    alone = lint_source(path, src, RULES, cross_file=False)
    # without cross_file, a function of the tree's modules (`misc.error_ratio`, `error_ratio` imported by
    # name) is read there; a class (`Net`) is not
    assert [(f.line, f.code) for f in alone.findings] == [(7, "SYN104"), (11, "SYN104")]
    assert {Path(d[0]).name for d in alone.deps} == {"misc.py"}


def test_without_cross_file_a_call_through_a_module_of_the_tree_reads_its_returns(tmp_path):
    pkg = make(tmp_path)
    src = ("import torch\nfrom . import misc\n"
           "def step(e, x):\n    e, x = e.cuda(), x.cuda()\n"
           "    if misc.error_ratio(e, 1.0) <= 1:\n        pass\n"  # a tensor, read in misc.py: high confidence
           "    if misc.count(x) > 1:\n        pass\n"  # a shape: silent (the guess alone said a tensor)
           "    if misc.unknown(x) > 1:\n        pass\n"  # not there: the guess, low confidence
           "    log = misc.get_logger(__name__)\n")  # literals only: not read
    (pkg / "user.py").write_text(src)
    r = lint_source(str(pkg / "user.py"), src, RULES)
    assert [(f.line, f.code, f.confidence) for f in r.findings] == [(5, "SYN104", "high"), (9, "SYN104", "low")]
    assert {Path(d[0]).name for d in r.deps} == {"misc.py"}


def test_a_script_imports_its_neighbour(tmp_path):
    (tmp_path / "utils.py").write_text(textwrap.dedent(MISC))
    (tmp_path / "train.py").write_text("from utils import error_ratio\n"
                                       "def f(e, t):\n    if error_ratio(e, t) < 1:\n        pass\n")
    r = lint_source(str(tmp_path / "train.py"), (tmp_path / "train.py").read_text(), RULES, cross_file=True)
    assert [(f.line, f.code) for f in r.findings] == [(3, "SYN104")]


def test_a_namespace_package_without_init_reads_its_modules(tmp_path):
    # an installed package with no `__init__.py` (PEP 420, pytorch_tabnet): `from pkg.utils import f` in
    # `.../pkg/model.py` is read in `.../pkg/utils.py`
    pkg = tmp_path / "site" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "utils.py").write_text("import torch\ndef make_matrix(groups, n):\n    return torch.eye(n)\n")
    src = ("import torch\nfrom pkg.utils import make_matrix\n"
           "class M:\n    def setup(self, device):\n"
           "        self.m = make_matrix(self.groups, self.n)\n"
           "        return self.m.to(device)\n")  # a host tensor made there: a blocking copy
    (pkg / "model.py").write_text(src)
    r = lint_source(str(pkg / "model.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(6, "SYN204")]
    assert {Path(d[0]).name for d in r.deps} == {"utils.py"}


def test_a_package_named_with_a_librarys_prefix_is_of_the_tree(tmp_path):
    # `torchfoo` is no `torch`: in `.../torchfoo/model.py`, `from torchfoo.utils import make` is the tree's own
    pkg = tmp_path / "torchfoo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "utils.py").write_text("import torch\ndef make(n):\n    return torch.eye(n)\n")
    src = "from torchfoo.utils import make\ndef setup(n, device):\n    return make(n).to(device)\n"
    (pkg / "model.py").write_text(src)
    r = lint_source(str(pkg / "model.py"), src, RULES)
    assert [(f.line, f.code, f.confidence) for f in r.findings] == [(3, "SYN204", "high")]
    assert {Path(d[0]).name for d in r.deps} == {"utils.py"}


def test_a_method_of_an_instance_of_a_neighbours_class_is_read_there(tmp_path):
    # `corpus = Corpus()` of a class a script imports from its neighbour: `corpus.get_data(path, n)` gives what
    # the method returns there (a host tensor), even at module level, where a script's training loop is
    (tmp_path / "data_utils.py").write_text(
        "import torch\nclass Corpus:\n    def get_data(self, path, n):\n"
        "        ids = torch.LongTensor(n)\n        return ids.view(4, -1)\n"
        "    def name(self, k):\n        return str(k)\n")
    src = ("import torch\nfrom data_utils import Corpus\ncorpus = Corpus()\n"
           "ids = corpus.get_data('train.txt', 20)\n"
           "for i in range(10):\n    x = ids[:, i].to('cuda')\n")
    (tmp_path / "main.py").write_text(src)
    r = lint_source(str(tmp_path / "main.py"), src, RULES)
    assert [(f.line, f.code, f.confidence) for f in r.findings] == [(6, "SYN204", "high")]
    assert {Path(d[0]).name for d in r.deps} == {"data_utils.py"}


def test_a_neighbours_method_handed_a_model_and_a_loader_gives_a_tensor_where_they_are(tmp_path):
    # `ev.accuracy(model, loader)` of `ev = Evaluator()` from a neighbour: the method returns a tensor computed from
    # the model's outputs (on the model's device), so testing it is a sync (handed no tensor, model or loader, such
    # a method's tensor would say less than where the object was made, and stays unknown)
    (tmp_path / "evaluator.py").write_text(
        "import torch\nclass Evaluator:\n    def accuracy(self, model, loader):\n        correct = 0\n"
        "        for x, y in loader:\n            correct += (model(x).argmax(-1) == y).sum()\n"
        "        return correct / len(loader.dataset)\n")
    src = ("import torch\nfrom evaluator import Evaluator\n"
           "def gate(model: torch.nn.Module, loader: torch.utils.data.DataLoader):\n"
           "    ev = Evaluator()\n    if ev.accuracy(model, loader) > 0.9:\n        return model\n")
    (tmp_path / "main.py").write_text(src)
    r = lint_source(str(tmp_path / "main.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(5, "SYN104")]
    assert {Path(d[0]).name for d in r.deps} == {"evaluator.py"}


def test_a_method_of_an_object_built_on_a_device_through_a_module_alias_gives_a_tensor_there(tmp_path):
    # `mde = problem.MDE(..., device=device)` (a class of a module of the tree, named through the module), then
    # `mde.distances(...)`, a method its docstring says returns a tensor: made on a device, the object computes
    # there, so testing the result is a sync; handed no device, the same method's tensor says nothing of where
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "problem.py").write_text(textwrap.dedent("""
        import torch
        from pkg.util import norm_rows
        class MDE:
            def __init__(self, n, device=None):
                self.x = torch.randn(n, 2, device=device)
            def distances(self, X=None):
                \"\"\"Distances.

                Returns
                -------
                torch.Tensor(shape=(n_edges,))
                    the distances
                \"\"\"
                if X is None:
                    X = self.x
                return norm_rows(X)
    """))
    (pkg / "util.py").write_text("def norm_rows(x):\n    return (x * x).sum(1)\n")
    src = textwrap.dedent("""
        from pkg import problem
        def fit(n, device):
            mde = problem.MDE(n, device=device)
            if (mde.distances() == 0).any():
                return None
            cpu = problem.MDE(n)
            if (cpu.distances() == 0).any():
                return None
            return mde
    """)
    (pkg / "recipes.py").write_text(src)
    r = lint_source(str(pkg / "recipes.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(5, "SYN104")]


def test_an_annotated_helper_handed_only_python_values_is_read_for_where_it_builds(tmp_path):
    # `haar_kernel(size) -> Tensor` of a neighbour, handed a Python int: the annotation says a tensor, not where;
    # the helper builds it with host factories, so `.to(x.device)` of it is a blocking host-to-device copy. Handed
    # a tensor (which may carry a device in), the annotation alone answers, as before
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text(textwrap.dedent("""
        import torch
        from torch import Tensor
        def haar_kernel(size: int) -> Tensor:
            return torch.outer(torch.ones(size) / size, torch.tensor([1.0, -1.0]).repeat_interleave(size // 2))
        def like(x: Tensor) -> Tensor:
            return torch.ones_like(x)
    """))
    src = textwrap.dedent("""
        import torch
        from .kernels import haar_kernel, like
        def haarpsi(x: torch.Tensor, size: int):
            kernel = haar_kernel(size).to(x.device)
            other = like(x).to(x.device)
            return kernel, other
    """)
    (pkg / "metric.py").write_text(src)
    r = lint_source(str(pkg / "metric.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(5, "SYN204")]


def test_an_override_of_a_base_class_hook_takes_the_batch_its_base_loop_hands_it(tmp_path):
    # a detector's `training_forward(self, batch_data)` is never called in its own module: the base class of a
    # neighbouring module runs `for batch_data in train_loader: self.training_forward(batch_data)`, so the
    # override's `.to(self.device)` of it is a blocking copy of a DataLoader batch
    pkg = tmp_path / "models"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "base_dl.py").write_text(textwrap.dedent("""
        import torch
        class BaseDetector:
            def fit(self, X):
                loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X), batch_size=32)
                for batch_data in loader:
                    self.training_forward(batch_data)
            def training_forward(self, batch_data):
                raise NotImplementedError
    """))
    src = textwrap.dedent("""
        from .base_dl import BaseDetector
        class AutoEncoder(BaseDetector):
            def training_forward(self, batch_data):
                x = batch_data
                x = x.to(self.device)
                loss = self.criterion(self.model(x), x)
                loss.backward()
    """)
    (pkg / "auto_encoder.py").write_text(src)
    r = lint_source(str(pkg / "auto_encoder.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(6, "SYN204")]
    assert "base class's loop" in r.findings[0].message


def test_a_cached_result_holds_only_while_the_modules_it_read_are_unchanged(tmp_path):
    from syncscan.lint.runner import _deps_fresh

    pkg = make(tmp_path)
    r = lint_source(str(pkg / "solver.py"), (pkg / "solver.py").read_text(), RULES, cross_file=True)
    cached = json.loads(json.dumps(r.to_cache()))
    assert _deps_fresh(cached)
    (pkg / "misc.py").write_text(textwrap.dedent(MISC).replace("torch.max(err.abs() / tol)", "float(tol)") + "\n")
    assert not _deps_fresh(cached)


def test_a_device_cpu_default_holds_only_where_calls_leave_it_out(tmp_path):
    (tmp_path / "grid.py").write_text(textwrap.dedent("""
        import torch
        def make_grid(n, device="cpu"):
            return torch.arange(n, device=device)
    """))
    (tmp_path / "use.py").write_text(textwrap.dedent("""
        from grid import make_grid
        def f(x, n):
            a = make_grid(n).to(x.device)  # made on the host, then copied
            b = make_grid(n, device=x.device).to(x.device)  # already there
            return a, b
    """))
    r = lint_source(str(tmp_path / "use.py"), (tmp_path / "use.py").read_text(), RULES, cross_file=True)
    assert [(f.line, f.code) for f in r.findings] == [(4, "SYN204")]
    local = textwrap.dedent("""
        import torch
        class Crit:
            def __init__(self, ids, device="cpu"):
                self.ids = torch.tensor(ids, device=device)  # callers elsewhere may pass a GPU: a copy
        def helper(n, device="cpu"):
            return torch.zeros(n, device=device).sum().item()  # every call here leaves it out: on the host
        def run():
            return helper(3)
    """)
    found = lint_source("m.py", local, RULES).findings
    assert [(f.line, f.code) for f in found] == [(5, "SYN202")]


def test_constants_of_other_modules_and_class_attributes(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "tab.py").write_text(textwrap.dedent("""
        import collections
        import torch
        Tableau = collections.namedtuple("Tableau", "alpha beta")
        TAB = Tableau(alpha=torch.tensor([0.5, 1.0]), beta=torch.tensor([1.0]))
    """))
    (pkg / "solver.py").write_text(textwrap.dedent("""
        import torch
        from .tab import TAB, Tableau
        class Solver:
            tableau = TAB
            eps = 1e-6
            def setup(self, y0):
                self.tableau = Tableau(alpha=self.tableau.alpha.to(device=y0.device), beta=self.tableau.beta)
                if self.eps > 0:
                    pass
    """))
    r = lint_source(str(pkg / "solver.py"), (pkg / "solver.py").read_text(), RULES, cross_file=True)
    assert [(f.line, f.code) for f in r.findings] == [(8, "SYN204")]


def test_a_plain_import_is_a_module_not_a_name_of_the_package(tmp_path):
    # `import torch` / `import numpy as np` in a package: not looked up in the package's own __init__
    pkg = make(tmp_path)
    (pkg / "__init__.py").write_text("VERSION = 1\n")
    (pkg / "user.py").write_text("import torch\nimport numpy as np\nfrom .misc import error_ratio\n"
                                 "def f(e, t):\n    a = np.zeros(3)\n    if error_ratio(e, t) < 1:\n"
                                 "        return torch.ones(1), a\n")
    r = lint_source(str(pkg / "user.py"), (pkg / "user.py").read_text(), RULES, cross_file=True)
    assert [(f.line, f.code) for f in r.findings] == [(6, "SYN104")]
    assert {Path(d[0]).name for d in r.deps} == {"misc.py"}


def test_answers_do_not_depend_on_what_the_process_linted_before(tmp_path):
    from syncscan.lint import engine

    pkg = make(tmp_path)
    for i in range(8):  # another file that reads more modules than one file may
        (pkg / f"m{i}.py").write_text(f"import torch\ndef g{i}(x):\n    return x.sum()\n")
    (pkg / "other.py").write_text("".join(f"from .m{i} import g{i}\n" for i in range(8)) + "def h(x):\n"
                                  + "".join(f"    if g{i}(x) > 0:\n        pass\n" for i in range(8)))
    solver = str(pkg / "solver.py")
    engine._CROSSFILE = None
    fresh = lint_source(solver, (pkg / "solver.py").read_text(), RULES, cross_file=True)
    engine._CROSSFILE = None
    lint_source(str(pkg / "other.py"), (pkg / "other.py").read_text(), RULES, cross_file=True)
    after = lint_source(solver, (pkg / "solver.py").read_text(), RULES, cross_file=True)
    assert after.findings == fresh.findings and after.deps == fresh.deps
    assert engine.crossfile()._facts == {}  # no parsed module held once a file's lint ends


def test_a_closed_file_is_freed_without_the_cyclic_collector():
    # the modules read for other files' kinds are dropped after each file: their trees must go at once
    import weakref

    from syncscan.lint.walk import file_facts

    src = textwrap.dedent(MISC) + "def use(err, tol):\n    return count(error_ratio(err, tol))\n"
    facts = file_facts("m.py", src, ast.parse(src))
    facts.kinds.returned(facts.index.funcs["use"], None, 0)
    tree = weakref.ref(facts.tree)
    enabled = gc.isenabled()
    gc.disable()
    try:
        facts.close()
        del facts
        assert tree() is None
    finally:
        if enabled:
            gc.enable()


def test_a_linted_files_tree_is_freed_without_the_cyclic_collector(monkeypatch):
    # no cycle outlives a file's lint (memoised flows, recursive closures): the collector has nothing to walk
    import weakref

    from syncscan.lint import engine

    src = textwrap.dedent("""
        import torch
        import torch.distributed as dist

        def train(model, loader, opt):
            for x, y in loader:
                loss = model(x)[y > 0].sum()
                loss.backward()
                opt.step()
                if dist.get_rank() == 0:
                    print(loss.item())
                keep = torch.nonzero(y)
                n = int(keep.sum())
                z = torch.zeros(n, device="cuda")
    """)
    trees = []
    real = engine.parse
    monkeypatch.setattr(engine, "parse", lambda path, text: trees.append(weakref.ref(t := real(path, text))) or t)
    enabled = gc.isenabled()
    gc.disable()
    try:
        result = lint_source("train.py", src, RULES)
        assert {f.code for f in result.findings} >= {"SYN101", "SYN301"} and len(trees) == 1
        assert trees[0]() is None
    finally:
        if enabled:
            gc.enable()


def test_parameters_take_what_the_folders_other_modules_pass(tmp_path):
    # `update(delta, actual, predicted)` called from trf.py with device tensors (a multi-line import):
    # probably tensors here too (a library's users may call it with numbers: low confidence)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    common = textwrap.dedent("""
        import torch
        def update(delta, actual, predicted):
            if predicted > 0:
                return delta * 2
            return delta
        def unused(x):
            if x > 0:
                return 1
    """)
    (pkg / "common.py").write_text(common)
    (pkg / "trf.py").write_text(textwrap.dedent("""
        import torch
        from .common import (
            update,
        )
        def trf(x0, n):
            x = x0.cuda()
            d = 1.0
            for _ in range(n):
                d = update(d, (x * x).sum(), (x + 1).sum())
            return d
    """))
    r = lint_source(str(pkg / "common.py"), common, RULES)
    assert [(f.line, f.code, f.confidence) for f in r.findings] == [(4, "SYN104", "low")]
    assert {Path(d[0]).name for d in r.deps} == {"trf.py"}
    # a caller that passes a number: the callers disagree, nothing is known
    (pkg / "other.py").write_text("import torch\nfrom pkg.common import update\ndef g():\n    return update(1, 2, 3)\n")
    from syncscan.lint import engine

    engine._CROSSFILE = None  # (a new process: the memo of the other modules is per process)
    r = lint_source(str(pkg / "common.py"), common, RULES)
    assert [(f.line, f.code) for f in r.findings] == []


def test_a_return_annotation_answers_without_reading_the_function(tmp_path, monkeypatch):
    # `-> bool` says what the call gives: the module's summary answers, and no walk of the function runs (its
    # body, which a walk would read as a tensor, is not looked at); an unannotated function is still walked
    from syncscan.lint import engine, interproc
    from syncscan.lint.crossfile import CrossFile

    (tmp_path / "util.py").write_text(
        "import torch\ndef is_tracing(x) -> bool:\n    return x.any()\n"
        "def peak(x):\n    return x.max()\n")
    src = ("import torch\nfrom util import is_tracing, peak\n"
           "def f(x: torch.Tensor):\n    if is_tracing(x):\n        pass\n    if peak(x) > 0:\n        pass\n")
    (tmp_path / "main.py").write_text(src)
    walked = []
    real = interproc.KindFacts.returned

    def returned(self, fn, owner, level=interproc.TOP):
        walked.append(fn.name)
        return real(self, fn, owner, level)

    monkeypatch.setattr(interproc.KindFacts, "returned", returned)
    monkeypatch.setattr(engine, "_CROSSFILE", CrossFile())
    r = lint_source(str(tmp_path / "main.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(6, "SYN104")]
    assert "is_tracing" not in walked and "peak" in walked


def test_a_method_asked_again_is_answered_without_parsing_its_module_again(tmp_path, monkeypatch):
    # the method's parameters and annotation are kept for the process: other files that call it cost no parse
    from syncscan.lint import engine
    from syncscan.lint.crossfile import CrossFile

    (tmp_path / "data_utils.py").write_text(
        "import torch\nclass Corpus:\n    def get_data(self, path, n):\n"
        "        ids = torch.LongTensor(n)\n        return ids.view(4, -1)\n")
    cf = CrossFile()
    parsed = []
    real = cf.facts

    def facts(path):
        if path not in cf._facts:
            parsed.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(cf, "facts", facts)
    monkeypatch.setattr(engine, "_CROSSFILE", cf)
    for i in range(3):
        src = (f"import torch\nfrom data_utils import Corpus\ncorpus = Corpus()\nids = corpus.get_data('t', 20)\n"
               f"for k in range({i + 2}):\n    x = ids[:, k].to('cuda')\n")
        (tmp_path / f"main{i}.py").write_text(src)
        r = lint_source(str(tmp_path / f"main{i}.py"), src, RULES)
        assert [(f.line, f.code) for f in r.findings] == [(6, "SYN204")]
    assert parsed == ["data_utils.py"]


def test_a_large_file_reads_no_module_that_would_raise_the_memory_peak(tmp_path, monkeypatch):
    # a module is read only while the linted file and it stay under MAX_TOTAL bytes together
    from syncscan.lint import crossfile, engine

    (tmp_path / "misc.py").write_text("import torch\ndef ratio(e):\n    return torch.max(e)\n")
    src = "import torch\nfrom misc import ratio\ndef f(e):\n    if ratio(e) < 1:\n        pass\n"
    (tmp_path / "main.py").write_text(src)
    monkeypatch.setattr(engine, "_CROSSFILE", crossfile.CrossFile())
    r = lint_source(str(tmp_path / "main.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(4, "SYN104")]
    monkeypatch.setattr(engine, "_CROSSFILE", crossfile.CrossFile())
    monkeypatch.setattr(crossfile, "MAX_TOTAL", len(src) + 10)
    r = lint_source(str(tmp_path / "main.py"), src, RULES)
    assert r.findings == [] and r.deps == []


SCHEDULER = """
    import torch
    from .base import SchedulerBase
    class {cls}(SchedulerBase):
        def __init__(self, n):
            self.alphas = torch.linspace(0.9, 0.1, n)

        def step(
            self,
            out: torch.Tensor,
            t: {ann},  # (a comment: not read)
            x: torch.Tensor,
        ):
            if t > 0:
                x = x + out
            return x * self.alphas[t]
"""


def test_a_methods_int_parameter_takes_what_the_folders_same_methods_declare(tmp_path):
    # `step(self, out, t: int, x)` beside two modules whose `step` takes `t: int | torch.Tensor` at the same
    # place: those classes are used in place of one another, so this one is handed tensors too (probably:
    # its annotation says otherwise), 0-dim ones where it says a number
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text("class SchedulerBase:\n    pass\n")
    (pkg / "euler.py").write_text(textwrap.dedent(SCHEDULER.format(cls="Euler", ann="float | torch.Tensor")))
    src = textwrap.dedent(SCHEDULER.format(cls="DDPM", ann="int"))
    (pkg / "ddpm.py").write_text(src)
    from syncscan.lint import engine

    engine._CROSSFILE = None
    r = lint_source(str(pkg / "ddpm.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == []  # one module only: no interface yet
    (pkg / "heun.py").write_text(textwrap.dedent(SCHEDULER.format(cls="Heun", ann="Union[int, torch.FloatTensor]")))
    engine._CROSSFILE = None
    r = lint_source(str(pkg / "ddpm.py"), src, RULES)
    assert [(f.line, f.code, f.confidence) for f in r.findings] == [(14, "SYN104", "low"), (16, "SYN302", "low")]
    assert {Path(d[0]).name for d in r.deps} == {"euler.py", "heun.py", "base.py"}  # (base.py: its attributes)
    # the same name at another place of the signature, or in a method of another name, is another parameter
    (pkg / "heun.py").write_text(textwrap.dedent(SCHEDULER.format(cls="Heun", ann="int | torch.Tensor")).replace(
        "def step(", "def advance("))
    (pkg / "euler.py").write_text(textwrap.dedent(SCHEDULER.format(cls="Euler", ann="torch.Tensor")).replace(
        "out: torch.Tensor,", "out: torch.Tensor, n: int,"))
    engine._CROSSFILE = None
    r = lint_source(str(pkg / "ddpm.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == []


def test_the_parameters_a_module_annotates_as_tensors_are_read_from_its_text():
    from syncscan.lint.crossfile import _annotated_tensors

    text = textwrap.dedent('''
        def top(x: torch.Tensor):  # a function, not a method
            pass
        class A:
            def step(self, out: "torch.Tensor", t: Union[int, torch.Tensor] = None,
                     sizes: Tuple[int, int] = (1, 2), *, mask: Optional[torch.BoolTensor] = None) -> Tensor:
                pass
            async def run(self, n: int, ids: list[LongTensor]):
                pass
            def noted(self, a: int, b: Tensor,  # (b: not a tensor, c) -> still read
                      c: "Tensor" = None):
                pass
    ''')
    assert _annotated_tensors(text, "step") == {"0/out", "1/t", "4/mask"}
    assert _annotated_tensors(text, "run") == {"1/ids"}
    assert _annotated_tensors(text, "noted") == {"1/b", "2/c"}
    assert _annotated_tensors(text, "top") == set()  # a function, not a method
    assert _annotated_tensors(text, "ste") == set()  # (a name's prefix is not the name)


def test_a_class_reads_what_its_base_of_another_module_sets(tmp_path):
    # `class CG(Base)` after `from .base import Base`: `self.jac_mag` (a property there) and `self.scale` (set in
    # its `__init__` there) are what base.py makes them
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text(textwrap.dedent("""
        import torch
        class Base:
            def __init__(self, g):
                self._g = g
                self.scale = torch.ones(3, device="cuda")
                self.steps = 0
            @property
            def jac_mag(self):
                return torch.linalg.norm(self._g)
    """))
    src = textwrap.dedent("""
        from .base import Base
        class CG(Base):
            def solve(self, tolerance: float):
                if self.jac_mag < tolerance or self.steps > 10:
                    return None
                if self.scale[0] > 0:
                    return 1
                return 0
    """)
    (pkg / "cg.py").write_text(src)
    r = lint_source(str(pkg / "cg.py"), src, RULES)
    assert [(f.line, f.code, f.confidence) for f in r.findings] == [(5, "SYN104", "high"), (7, "SYN104", "high")]
    assert {Path(d[0]).name for d in r.deps} == {"base.py"}


def test_a_device_annotation_is_walked_not_answered_from_the_summary(tmp_path, monkeypatch):
    # `-> Tuple[torch.device, torch.dtype]` says a device but not which: as for the file's own functions
    # (KindFacts.returned), the walk tells the CPU device, so the copy to it is a copy to the host
    from syncscan.lint import engine
    from syncscan.lint.crossfile import CrossFile

    (tmp_path / "helpers.py").write_text(
        "import torch\nfrom typing import Tuple\n"
        "def settings_device(params) -> Tuple[torch.device, torch.dtype]:\n"
        "    return torch.device('cpu'), torch.float32\n")
    src = ("import torch\nfrom helpers import settings_device\n"
           "def f(x: torch.Tensor, p):\n    dev, dt = settings_device(p)\n    return x.cuda().to(device=dev)\n")
    (tmp_path / "main.py").write_text(src)
    monkeypatch.setattr(engine, "_CROSSFILE", CrossFile())
    r = lint_source(str(tmp_path / "main.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(5, "SYN201")]


INTERP = """
def lerp(t0, y0, t1, y1, t):
    assert t0 <= t <= t1
    return y0 + (t - t0) / (t1 - t0) * (y1 - y0)
def ratio(err):
    if err > 1:
        return 0.5
    return 2.0
"""


def test_a_module_called_through_its_name_takes_what_the_folder_passes_even_without_torch_words(
        tmp_path, capsys, monkeypatch):
    # `from . import interp` then `interp.lerp(t0=ts[0], ...)` with device tensors: `lerp`'s parameters are
    # probably tensors, and interp.py is linted though it never says `torch` (the runner's prefilter). What the
    # caller itself only supposes (`err` from an unknown library's call) is not passed on.
    from syncscan.cli import main
    from syncscan.lint import engine

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "interp.py").write_text(textwrap.dedent(INTERP))
    (pkg / "solver.py").write_text(textwrap.dedent("""
        import torch
        import somelib
        from . import interp
        def integrate(ts, y0):
            ts = ts.cuda()
            y = interp.lerp(t0=ts[0], y0=y0, t1=ts[-1], y1=y0, t=ts[1])
            err = somelib.estimate(ts)
            return y * interp.ratio(err)
    """))
    monkeypatch.chdir(tmp_path)
    engine._CROSSFILE = None
    main(["lint", "--no-cache", "--all", "--format", "json", "--exit-zero", "pkg/interp.py"])
    got = [(f["line"], f["code"], f["confidence"]) for f in json.loads(capsys.readouterr().out)]
    assert got == [(3, "SYN104", "low")]
    # handed around as a value (`f = interp.lerp`): its callers are not all known, nothing is said
    (pkg / "other.py").write_text("from . import interp\nF = interp.lerp\n")
    engine._CROSSFILE = None
    main(["lint", "--no-cache", "--all", "--format", "json", "--exit-zero", "pkg/interp.py"])
    assert json.loads(capsys.readouterr().out) == []


def test_no_second_module_is_parsed_beside_one_whose_walk_is_under_way(tmp_path):
    # the memory budget (MAX_FILES parsed modules held): while a caller's module is pinned (its walk under way),
    # a nested read of another module answers nothing rather than holding two trees
    from syncscan.lint.crossfile import MAX_FILES, CrossFile

    pkg = make(tmp_path)
    cf = CrossFile()
    first = cf.facts(str(pkg / "misc.py"))
    assert first is not None and MAX_FILES == 1
    cf._pinned.add(str(pkg / "misc.py"))
    assert cf.facts(str(pkg / "models.py")) is None
    cf._pinned.clear()
    assert cf.facts(str(pkg / "models.py")) is not None


def test_an_answer_computed_across_a_refused_read_is_not_kept_for_the_process(tmp_path):
    # While a caller's module is pinned (its walk under way) no second module is parsed: what is computed then
    # is that file's answer only. Kept for the process, the next file linted by the same worker would get it
    # whatever its own reads, so findings would depend on which files a worker linted before.
    from syncscan.lint.crossfile import CrossFile

    held, asked = tmp_path / "held.py", tmp_path / "asked.py"
    held.write_text("def g(x):\n    return x\n")
    asked.write_text("import torch\n\ndef f(x):\n    return torch.zeros(3)\n")
    cf = CrossFile()
    cf._pinned.add(str(held))
    assert cf.facts(str(held)) is not None
    assert cf.summary(str(asked)) is None and cf.refused == 1  # refused while `held` is pinned
    cf._pinned.clear()
    cf.release()
    got = cf.summary(str(asked))
    assert got is not None and "f" in got.funcs


LAYER = """
import torch
class Layer(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.mask = torch.nn.Parameter(torch.ones(n, n)).requires_grad_(False)
        self.register_buffer("grid", torch.linspace(-1, 1, n))
        self.scale = torch.nn.Parameter(torch.ones(n))
"""
NETWORK = """
import torch
class Network(torch.nn.Module):
    def __init__(self, layers):
        super().__init__()
        self.layers = torch.nn.ModuleList(layers)
        self.scale = 1.0
    def prune(self, l, i, j):
        mask = self.layers[l].mask
        if mask[i, j] == 0:
            return None
        if self.layers[l].scale[i] > 0:
            return None
        return self.config.mask if self.config.mask else None
"""


def test_an_attribute_the_folders_classes_keep_a_tensor_under_is_probably_that_tensor(tmp_path):
    pkg = tmp_path / "kanlike"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "layer.py").write_text(textwrap.dedent(LAYER))
    (pkg / "network.py").write_text(textwrap.dedent(NETWORK))
    path = str(pkg / "network.py")
    r = lint_source(path, (pkg / "network.py").read_text(), RULES, cross_file=True)
    # `self.layers[l].mask`: an item of a container the instance holds, and the folder keeps `mask` only as a
    # tensor; `scale` is also a Python number in the folder (withdrawn); `self.config.mask` is not a held item
    assert [(f.line, f.code, f.confidence) for f in r.findings] == [(10, "SYN104", "low")]
    assert {Path(d[0]).name for d in r.deps} == {"layer.py"}


def test_a_module_that_reaches_torch_through_its_own_package_is_torch_only(tmp_path):
    pkg = tmp_path / "torchlib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("import torch\n")
    (pkg / "util.py").write_text("import torch\ndef dot(a, b):\n    return (a * b).sum()\n")
    src = textwrap.dedent('''
        """Tree search over torch tensors."""
        from .util import dot
        def is_turning(left, right, r):
            angle = left.dot(r)
            return angle <= 0 or right.dot(r) <= 0
    ''')
    (pkg / "search.py").write_text(src)
    r = lint_source(str(pkg / "search.py"), src, RULES, cross_file=True)
    # (an array of unknown origin in a module whose only array library is torch: probably a tensor)
    assert [(f.line, f.code, f.confidence) for f in r.findings] == [(6, "SYN104", "low")]
    plain = src.replace("torch tensors", "arrays")
    r = lint_source(str(pkg / "search.py"), plain, RULES, cross_file=True)
    assert r.findings == []


PRUNER_FUNCTIONS = """
import torch
from typing import Sequence
def prune_out_channels(layer: torch.nn.Module, idxs: Sequence[int]):
    return layer
def prune_in_channels(layer: torch.nn.Module, idxs: list):
    return layer
"""
IMPORTANCE = """
import torch
class MagnitudeImportance:
    @torch.no_grad()
    def __call__(self, group):
        out = []
        for dep, idxs in group:
            w = dep.layer.weight.data[idxs]
            out.append(w.abs().sum(1)[order])
        return out
"""


def _pruner_package(root: Path, functional: str) -> Path:
    pkg = root / "prunelib"
    (pkg / "algorithms").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "functional.py").write_text(textwrap.dedent(functional))
    (pkg / "algorithms" / "__init__.py").write_text("")
    path = pkg / "algorithms" / "importance.py"
    path.write_text(textwrap.dedent(IMPORTANCE))
    return path


def test_a_name_the_packages_signatures_annotate_as_a_list_is_probably_one(tmp_path):
    path = _pruner_package(tmp_path / "a", PRUNER_FUNCTIONS)
    r = lint_source(str(path), path.read_text(), RULES)
    # `idxs` comes from iterating an object nothing describes, but the package above annotates every parameter of
    # that name as a sequence: a host list, reported with low confidence; `order` is never annotated
    assert [(f.line, f.code, f.confidence) for f in r.findings] == [(8, "SYN206", "low")]
    # one signature that annotates it as a tensor, or a single sequence annotation, says nothing for certain
    path = _pruner_package(tmp_path / "b", PRUNER_FUNCTIONS + "def mask(idxs: torch.Tensor):\n    pass\n")
    assert lint_source(str(path), path.read_text(), RULES).findings == []
    path = _pruner_package(tmp_path / "c", PRUNER_FUNCTIONS.replace("idxs: list", "idxs"))
    assert lint_source(str(path), path.read_text(), RULES).findings == []


JIT_UTILS = """
import torch
from torch.jit import script

@script
def _count_jit(x: torch.Tensor) -> int:
    return int((x > 0).sum())

@torch.jit.script
def _scale_jit(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0

def plain(x: torch.Tensor) -> int:
    return int((x > 0).sum())
"""


def test_a_scripted_function_of_another_module_syncs_at_its_call(tmp_path):
    pkg = tmp_path / "metricslib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "jit_utils.py").write_text(textwrap.dedent(JIT_UTILS))
    src = "import torch\nfrom .jit_utils import _count_jit, _scale_jit, plain\n\ndef update(x):\n" \
          "    return _count_jit(x) + plain(x), _scale_jit(x)\n"
    (pkg / "use.py").write_text(src)
    r = lint_source(str(pkg / "use.py"), src, RULES)
    # TorchScript keeps no frame of `_count_jit`: its `int()` waits at the call; `plain`'s own line shows its wait
    # (SYN103 there), and `_scale_jit` reads nothing on the host
    assert [(f.line, f.code) for f in r.findings] == [(5, "SYN412")]
    assert "line 7 of jit_utils.py" in r.findings[0].message
    assert {Path(d[0]).name for d in r.deps} == {"jit_utils.py"}


KMEANS_BASE = """
import torch
from torch import Tensor

class KMeans:
    @staticmethod
    @torch.jit.script
    def _shift(centers: Tensor, old: Tensor) -> Tensor:
        d = torch.norm(centers - old, dim=-1)
        d[d == float("inf")] = 0
        return d.mean(-1)

    @staticmethod
    def _plain(centers: Tensor, old: Tensor) -> Tensor:
        d = torch.norm(centers - old, dim=-1)
        d[d == float("inf")] = 0
        return d.mean(-1)
"""


def test_a_scripted_method_of_a_base_in_another_module_syncs_at_self_calls(tmp_path):
    """`self._shift(...)` in a subclass runs the base's `@staticmethod @torch.jit.script` method of its folder's
    module: its mask write (eager's `masked_fill`, TorchScript's `index_put_`) waits at the call. The same code in
    a plain static method does not sync."""
    pkg = tmp_path / "clustering"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "kmeans.py").write_text(textwrap.dedent(KMEANS_BASE))
    src = "import torch\nfrom .kmeans import KMeans\n\nclass SoftKMeans(KMeans):\n    def step(self, c, old):\n" \
          "        return self._shift(c, old) + self._plain(c, old)\n"
    (pkg / "soft.py").write_text(src)
    r = lint_source(str(pkg / "soft.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(6, "SYN412")]
    assert "line 10 of kmeans.py" in r.findings[0].message and "`self._shift(c, old)`" in r.findings[0].message
    assert {Path(d[0]).name for d in r.deps} == {"kmeans.py"}


LOWRANK = """
import torch

class LowRank(torch.nn.Module):
    def __init__(self, rank):
        super().__init__()
        self.rank = rank

    def in_manifold_singular_values(self, S, eps=1e-5):
        if S.size(-1) <= self.rank:
            return True
        return (S[..., self.rank:].abs().max(dim=-1).values < eps).all()
"""


def test_super_calls_give_what_the_base_method_returns(tmp_path):
    """`if not super().m(S, eps):` reads what the base's `m` returns: `True` on one path and a 0-dim tensor on the
    other, so the condition syncs. The base is in another module of the folder (read where it is handed a
    tensor), and in the same module."""
    pkg = tmp_path / "manifolds"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "lowrank.py").write_text(textwrap.dedent(LOWRANK))
    sub = "class FixedRank(LowRank):\n    def in_manifold_singular_values(self, S: torch.Tensor, eps=1e-5):\n" \
          "        if not super().in_manifold_singular_values(S, eps):\n            return False\n" \
          "        return True\n"
    src = "import torch\nfrom .lowrank import LowRank\n\n" + sub
    (pkg / "fixedrank.py").write_text(src)
    r = lint_source(str(pkg / "fixedrank.py"), src, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(6, "SYN104")]
    same = textwrap.dedent(LOWRANK) + "\n" + sub
    r = lint_source(str(tmp_path / "one.py"), same, RULES)
    assert [(f.line, f.code) for f in r.findings] == [(same.splitlines().index(
        "        if not super().in_manifold_singular_values(S, eps):") + 1, "SYN104")]


MASK_UTILS = """
import torch

def first_nonzero(x, dim=-1):
    nonz = x > 0
    return ((nonz.cumsum(dim) == 1) & nonz).max(dim)

def is_unknown(labels):
    return labels < 0

def scale(x):
    return x * 2
"""


def test_masks_returned_by_helpers_of_another_module(tmp_path):
    """`unknown = is_unknown(y)` and `valid, first = first_nonzero(x)` (re-exported by the package's `__init__`
    with `from .utils import *`) are masks: reading through them is a boolean-mask index; `scale(x)` is not."""
    pkg = tmp_path / "kmeanslib"
    (pkg / "utils").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "utils" / "__init__.py").write_text("from .utils import *\n")
    (pkg / "utils" / "utils.py").write_text(textwrap.dedent(MASK_UTILS))
    src = textwrap.dedent("""
        import torch
        from .utils import first_nonzero, is_unknown, scale

        def assign(x: torch.Tensor, y: torch.Tensor, idx: torch.Tensor):
            unknown = is_unknown(y)
            valid, first = first_nonzero(x)
            a = x[unknown]
            b = first[valid]
            c = x[scale(idx)]
            return a, b, c
        """)
    (pkg / "assign.py").write_text(src)
    r = lint_source(str(pkg / "assign.py"), src, RULES)
    lines = src.splitlines()
    assert sorted((f.line, f.code) for f in r.findings) == [
        (lines.index("    a = x[unknown]") + 1, "SYN302"), (lines.index("    b = first[valid]") + 1, "SYN302")]


def test_returned_masks_by_position():
    import ast

    from syncscan.lint.masks import returned_masks
    from syncscan.lint.tree import SourceTree

    src = textwrap.dedent(MASK_UTILS) + "\ndef both(x):\n    if x is None:\n        return None\n    return x > 0\n"
    tree = ast.parse(src)
    st = SourceTree("m.py", src, tree)
    got = {fn.name: returned_masks(st, fn) for fn in tree.body if isinstance(fn, ast.FunctionDef)}
    assert got == {"first_nonzero": (True, False), "is_unknown": True, "scale": False, "both": False}


def test_masks_of_calls_of_calls_and_of_subscripts_do_not_break_the_lint():
    """`m = make()(x)`, `m = fns[0](x)`: the callee is not a name; the question of masks has no answer there
    (it once raised AttributeError on transformers' `getattr(self, name)(x)`)."""
    src = textwrap.dedent("""
        import torch

        def f(x: torch.Tensor, make, fns):
            a = make()(x)
            b = fns[0](x)
            c = getattr(torch, "sigmoid")(x)
            return x[a], x[b], x[c]
        """)
    r = lint_source("example.py", src, RULES)
    assert r.error is None


def test_star_imports_through_a_package_init_of_the_folder_above(tmp_path):
    """`from utils import *` in `examples/train.py` that puts the folder above on its path
    (`sys.path.append(... '..')`): `utils/__init__.py` star-imports `utils/torch.py`, which imports torch and numpy
    and aliases `LongTensor = torch.LongTensor`; all of them reach the script through the two star imports."""
    (tmp_path / "utils").mkdir()
    (tmp_path / "examples").mkdir()
    (tmp_path / "utils" / "__init__.py").write_text("from utils.torch import *\n")
    (tmp_path / "utils" / "torch.py").write_text(textwrap.dedent("""
        import torch
        import numpy as np

        LongTensor = torch.LongTensor
        zeros = torch.zeros
        """))
    src = textwrap.dedent("""
        import os
        import sys
        sys.path.append(os.path.abspath(os.path.join(os.path.dirname(__file__), '..')))
        from utils import *

        def update(batch, device, model, opt):
            perm = np.arange(len(batch))
            perm = LongTensor(perm).to(device)
            states = torch.from_numpy(np.stack(batch)).to(device)
            model(states[perm]).sum().backward()
            opt.step()
            torch.cuda.empty_cache()
        """)
    (tmp_path / "examples" / "train.py").write_text(src)
    r = lint_source(str(tmp_path / "examples" / "train.py"), src, RULES)
    lines = src.splitlines()
    assert sorted((f.line, f.code) for f in r.findings) == [
        (lines.index("    perm = LongTensor(perm).to(device)") + 1, "SYN204"),
        (lines.index("    states = torch.from_numpy(np.stack(batch)).to(device)") + 1, "SYN204"),
        (lines.index("    torch.cuda.empty_cache()") + 1, "SYN503")]
    # without the folder above on the script's path the package is not found: only the conventional names
    # (`torch`, `np`) are taken for what the star import brought
    src2 = src.replace("sys.path.append(os.path.abspath(os.path.join(os.path.dirname(__file__), '..')))\n", "")
    (tmp_path / "examples" / "train2.py").write_text(src2)
    r2 = lint_source(str(tmp_path / "examples" / "train2.py"), src2, RULES)
    lines2 = src2.splitlines()
    assert sorted((f.line, f.code) for f in r2.findings) == [
        (lines2.index("    states = torch.from_numpy(np.stack(batch)).to(device)") + 1, "SYN204"),
        (lines2.index("    torch.cuda.empty_cache()") + 1, "SYN503")]


def test_attribute_of_an_instance_of_a_class_of_a_folder_beside(tmp_path):
    """`dataset = Cifar(...)` of `from data.cifar import Cifar` (a folder of modules beside the script, no
    `__init__.py`): `dataset.train` is the DataLoader the class's `__init__` keeps there, so a batch drawn from it and
    copied without `non_blocking` is a blocking copy; `dataset.size` is a number."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "cifar.py").write_text(textwrap.dedent("""
        import torch
        from torch.utils.data import DataLoader

        class Cifar:
            def __init__(self, train_set, batch_size):
                self.train = DataLoader(train_set, batch_size=batch_size, shuffle=True)
                self.size = 10
        """))
    src = textwrap.dedent("""
        import torch
        from data.cifar import Cifar

        def main(train_set, model, opt, device):
            dataset = Cifar(train_set, 128)
            for batch in dataset.train:
                inputs, targets = (b.to(device) for b in batch)
                model(inputs).sum().backward()
                opt.step()
                print(dataset.size)
        """)
    (tmp_path / "train.py").write_text(src)
    r = lint_source(str(tmp_path / "train.py"), src, RULES)
    lines = src.splitlines()
    assert sorted((f.line, f.code) for f in r.findings) == [
        (lines.index("        inputs, targets = (b.to(device) for b in batch)") + 1, "SYN204")]


def test_attributes_of_an_instance_of_a_class_of_another_module_fed_by_calls(tmp_path):
    """`loss_meter = RunningAverageMeter()` of `from utils import RunningAverageMeter`: `loss_meter.update(loss)` hands
    a tensor to the parameter that reaches `self.val` and `self.avg` there, so formatting them syncs; `n_meter` is
    handed Python ints, so its `avg` is a host value."""
    (tmp_path / "utils.py").write_text(textwrap.dedent("""
        class RunningAverageMeter:
            def __init__(self, momentum=0.99):
                self.momentum = momentum
                self.val = None
                self.avg = 0

            def update(self, val):
                if self.val is None:
                    self.avg = val
                else:
                    self.avg = self.avg * self.momentum + val * (1 - self.momentum)
                self.val = val
        """))
    src = textwrap.dedent("""
        import torch
        from utils import RunningAverageMeter

        def train(model, loader, opt):
            loss_meter = RunningAverageMeter()
            n_meter = RunningAverageMeter()
            for x in loader:
                loss = model(x).sum()
                loss.backward()
                opt.step()
                loss_meter.update(loss)
                n_meter.update(x.shape[0])
                print("Loss {:.4f}".format(loss_meter.avg))
                print("n {:.1f}".format(n_meter.avg))
        """)
    (tmp_path / "train.py").write_text(src)
    r = lint_source(str(tmp_path / "train.py"), src, RULES)
    lines = src.splitlines()
    assert sorted((f.line, f.code) for f in r.findings) == [
        (lines.index('        print("Loss {:.4f}".format(loss_meter.avg))') + 1, "SYN105")]


def test_a_host_placeholder_attribute_of_a_base_class_that_a_method_fills_with_a_tensor(tmp_path):
    """`self.support_labels = torch.tensor(())` in the base's `__init__` is a placeholder: `store` replaces it with
    the tensor it is handed, so the subclass of another module reads a tensor that may be on the GPU."""
    (tmp_path / "base.py").write_text(textwrap.dedent("""
        import torch
        from torch import Tensor, nn

        class FewShot(nn.Module):
            def __init__(self, backbone):
                super().__init__()
                self.backbone = backbone
                self.support_labels = torch.tensor(())

            def store(self, images: Tensor, labels: Tensor):
                self.support_labels = labels
        """))
    src = textwrap.dedent("""
        import torch
        from torch import Tensor
        from base import FewShot

        class Prototypes(FewShot):
            def forward(self, query: Tensor):
                n_classes = self.support_labels.unique().size(0)
                return self.backbone(query)[:, :n_classes]
        """)
    (tmp_path / "proto.py").write_text(src)
    r = lint_source(str(tmp_path / "proto.py"), src, RULES)
    lines = src.splitlines()
    assert [(f.line, f.code) for f in r.findings] == [
        (lines.index("        n_classes = self.support_labels.unique().size(0)") + 1, "SYN305")]


def test_the_default_lint_reads_what_other_modules_of_the_tree_define(tmp_path):
    """Since session 25 a lint reads the classes and constants of the tree's other modules by default (the CLI, the
    language server and pre-commit alike): `net = Net()` of models.py is an nn.Module there, so `net(x)` is a tensor."""
    pkg = make(tmp_path)
    path = str(pkg / "solver.py")
    r = lint_source(path, (pkg / "solver.py").read_text(), RULES)
    assert [(f.line, f.code) for f in r.findings] == [(7, "SYN104"), (11, "SYN104"), (14, "SYN104")]


def _many_modules(pkg: Path, kind: str) -> None:
    """Seven modules, each defining one class (`kind` "class") or one host constant (`kind` "value")."""
    for i in range(7):
        (pkg / f"m{i}.py").write_text(f"class S{i}:\n    pass\n" if kind == "class" else f"K{i} = {i}.5\n")


def test_a_table_of_imported_names_does_not_use_up_the_reads_the_functions_calls_need(tmp_path):
    """`SOLVERS = dict(a=Dopri5, ...)` at module level (torchdiffeq's odeint.py) asked about seven modules before
    a function's call of a helper of misc.py was read: the helper's answer was refused and its tuple taken for
    probable tensors. A class is known from the module's text without a parse, and values have a budget of their
    own."""
    for kind, names in (("class", "S"), ("value", "K")):
        root = tmp_path / kind
        pkg = root / "pkg"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        _many_modules(pkg, kind)
        (pkg / "misc.py").write_text("import torch\ndef check(t):\n    flipped = False\n"
                                     "    if len(t) > 1:\n        flipped = True\n    return t, flipped\n")
        src = "".join(f"from .m{i} import {names}{i}\n" for i in range(7)) + \
            "from .misc import check\n" + \
            f"TABLE = ({', '.join(f'{names}{i}' for i in range(7))})\n" + \
            "def solve(t):\n    t, flipped = check(t)\n    if flipped:\n        t = -t\n    return t\n"
        (pkg / "odeint.py").write_text(src)
        r = lint_source(str(pkg / "odeint.py"), src, RULES, cross_file=True)
        assert r.findings == [], kind
        assert "misc.py" in {Path(d[0]).name for d in r.deps}, kind


def test_an_attribute_an_nn_module_of_another_module_computes_in_forward(tmp_path):
    """`model = Golem(...)` of a module class of the tree, then `model(X)` and `model.score` (gcastle's GOLEM): the
    attribute is what the class's `forward` assigns, a tensor, with the classes of other modules read as well."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "models.py").write_text(textwrap.dedent("""
        import torch
        from torch import nn
        class Golem(nn.Module):
            def __init__(self, d):
                super().__init__()
                self.w = nn.Parameter(torch.zeros(d, d))
            def forward(self, x):
                self.score = (x @ self.w).pow(2).sum()
                return x
        """))
    src = textwrap.dedent("""
        import logging
        from .models import Golem
        def fit(X, n):
            model = Golem(3)
            for i in range(n):
                model(X)
                score = model.score
                logging.info("score={:.3f}".format(score))
        """)
    (pkg / "fit.py").write_text(src)
    r = lint_source(str(pkg / "fit.py"), src, RULES, cross_file=True)
    assert [(f.line, f.code) for f in r.findings] == [(src.splitlines().index(
        '        logging.info("score={:.3f}".format(score))') + 1, "SYN105")]


def test_a_value_another_module_assigns_from_python_literals_is_not_parsed_for(tmp_path, monkeypatch):
    """`EPS = 1e-6` / `NAMES = {...}` in another module: not a torch value, known from the text without a parse; a
    value made by a call over several lines (`TAB = Tableau(` ...) is read as before."""
    from syncscan.lint import crossfile

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "consts.py").write_text("EPS = 1e-6\nNAMES = {'a': 1}\n")
    (pkg / "tab.py").write_text("import torch\nimport collections\nTableau = collections.namedtuple('Tableau', 'a b')\n"
                                "TAB = Tableau(\n    a=torch.tensor([0.5]),\n    b=torch.tensor([1.0]),\n)\n")
    src = textwrap.dedent("""
        import torch
        from .consts import EPS, NAMES
        from .tab import TAB
        def f(y):
            a = TAB.a.to(y.device)
            if EPS > 0:
                pass
            for k in NAMES:
                pass
            return y * EPS, a
        """)
    (pkg / "use.py").write_text(src)
    parsed = []
    real = crossfile.CrossFile.facts
    monkeypatch.setattr(crossfile.CrossFile, "facts",
                        lambda self, path: parsed.append(Path(path).name) or real(self, path))
    r = lint_source(str(pkg / "use.py"), src, RULES, cross_file=True)
    assert [(f.line, f.code) for f in r.findings] == [(6, "SYN204")]
    assert "consts.py" not in parsed and "tab.py" in parsed
