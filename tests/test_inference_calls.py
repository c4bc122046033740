"""What calls give across a class's bases and a folder's modules (issue 12, session 9): a base's method of another
module, a method of a base the linter does not read, the callers' calls back into the module they explain, callers
that agree where they say anything, and what only a tensor has (`backward`, `new_empty`)."""

import textwrap
from pathlib import Path

from test_interproc import kinds

from syncscan.lint.engine import lint_source
from syncscan.lint.registry import all_rules
from syncscan.lint.tensors import TENSOR

RULES = [r() for r in all_rules()]


def _package(tmp_path, files: dict) -> Path:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(textwrap.dedent(text))
    return pkg


def _findings(path: Path) -> list:
    r = lint_source(str(path), path.read_text(), RULES)
    assert r.error is None, r.error
    return [(f.line, f.code, f.confidence) for f in r.findings]


# -- what only a tensor has --------------------------------------------------------------------------
def test_a_value_whose_backward_is_called_is_a_tensor():
    # `f = self._closure(); f.backward()`: a loss (no Python number, list, array or nn.Module has `backward`)
    assert kinds("""
        import torch
        class M:
            def evaluate(self, x):
                f = self._closure()
                f.backward()
                probe(f)
                return float(f)
    """) == [[TENSOR]]
    assert ("SYN103", 9, "high") in _codes("""
        import torch
        class M:
            def evaluate(self, x):
                with torch.enable_grad():
                    f = self._closure()
                f.backward()
                self._set(x)
                return dict(f=float(f))
    """)


def _codes(src: str) -> list:
    r = lint_source("m.py", textwrap.dedent(src), RULES)
    assert r.error is None, r.error
    return [(f.code, f.line, f.confidence) for f in r.findings]


def test_a_new_tensor_of_an_unknown_value_is_a_tensor():
    # `obj.weight.new_empty(2)`: only a tensor has the `new_*` factories, whatever the walk knows of the receiver
    assert kinds("""
        def f(obj, n):
            probe(obj.weight.new_empty(2), obj.weight.new_zeros(n, 3), obj.weight.new_tensor([1.0]), obj.weight.new(2))
    """) == [[TENSOR, TENSOR, TENSOR, None]]


# -- a class's bases in other modules -------------------------------------------------------------------
BASE = """
import torch
class Base:
    def __init__(self, x):
        self._tab = x.new_empty(2)
    def intersections(self, z, d):
        self._tab[0] = z.dot(d)
        self._tab[1] = -z.dot(d)
        return self._tab.sort()[0]
"""


def test_a_method_of_a_base_of_another_module_of_the_folder_is_read(tmp_path):
    # `ta, tb = self.intersections(p, z)` in a subclass of `.base`'s `Base`: the base's method gives a 1-D
    # tensor, unpacked into two 0-dim ones, which builtin `min(..., key=torch.abs)` compares with Python
    pkg = _package(tmp_path, {"base.py": BASE, "exact.py": """
        import torch
        from .base import Base
        class Exact(Base):
            def solve(self, p: torch.Tensor, z: torch.Tensor):
                ta, tb = self.intersections(p, z)
                return min(ta, tb, key=torch.abs)
    """})
    got = _findings(pkg / "exact.py")
    assert (7, "SYN106", "high") in got
    # a method the class assigns itself (`self.intersections = fn`) is no longer the base's
    (pkg / "exact2.py").write_text(textwrap.dedent("""
        import torch
        from .base import Base
        class Exact(Base):
            def __init__(self, x, fn):
                super().__init__(x)
                self.intersections = fn
            def solve(self, p: torch.Tensor, z: torch.Tensor):
                ta, tb = self.intersections(p, z)
                return min(ta, tb, key=torch.abs)
    """))
    assert [c for c in _findings(pkg / "exact2.py") if c[1] == "SYN106"] == []


def test_a_method_of_a_base_the_walk_does_not_read_probably_gives_a_tensor(tmp_path):
    # `class FAB(Attack)` after `from ..attack import Attack` (another folder: not read): `self.get_logits(im)` of
    # a tensor is code the inference cannot see, handed a tensor where torch is the only array library (as `m.f(x)`)
    pkg = _package(tmp_path, {"attack.py": "class Attack:\n    pass\n", "attacks/__init__.py": "",
                              "attacks/fab.py": """
        import torch
        from ..attack import Attack
        class FAB(Attack):
            def diff(self, imgs: torch.Tensor, la: torch.Tensor):
                u = torch.arange(imgs.shape[0])
                y = self.get_logits(imgs.clone())
                return y[u, la]
            def local(self, imgs: torch.Tensor):
                return self.helper(imgs)[torch.arange(3)]
            def helper(self, x):
                return x.tolist()
    """})
    got = _findings(pkg / "attacks" / "fab.py")
    assert (8, "SYN206", "low") in got
    assert [c for c in got if c[0] == 10] == []  # the class's own method says what it gives: a list, no tensor
    # without a base from the tree (a class of no base, or of a library's), nothing is guessed
    src = (pkg / "attacks" / "fab.py").read_text().replace("class FAB(Attack):", "class FAB:")
    (pkg / "attacks" / "plain.py").write_text(src)
    assert [c for c in _findings(pkg / "attacks" / "plain.py") if c[0] == 8] == []


# -- the folder's callers ---------------------------------------------------------------------------------
def test_the_callers_calls_back_into_the_module_are_read_from_it(tmp_path):
    # `predicted = -evaluate(J, s)` in trf.py, `evaluate` imported from common.py, the module whose `update` the
    # callers explain: what common.py's own function returns (a tensor) is what trf.py passes to `update`
    pkg = _package(tmp_path, {"common.py": """
        import numpy as np
        import torch
        def evaluate(J, s):
            return 0.5 * J.mv(s).dot(s)
        def update(delta, predicted):
            if predicted > 0:
                return delta * 2
            return delta
    """, "trf.py": """
        import numpy as np
        import torch
        from .common import evaluate, update
        def trf(J0, s0, n):
            J, s = J0.cuda(), s0.cuda()
            scale = np.ones(3)
            d = 1.0
            for _ in range(n):
                predicted = -evaluate(J, s)
                d = update(d, predicted)
            return d
    """})
    # (numpy in trf.py: `evaluate(J, s)` is no guess of a tensor there; common.py's walk says what it gives)
    assert _findings(pkg / "common.py") == [(7, "SYN104", "low")]


def test_callers_that_agree_where_they_say_anything(tmp_path):
    # one caller passes a device tensor, another a value it does not show: probably a tensor; a caller that leaves
    # the parameter to its default says it holds that default there: nothing is known
    pkg = _package(tmp_path, {"search.py": """
        import torch
        def wolfe(fun, x, f, t=1.0):
            f = float(f)
            return fun(x, t), f
    """, "bfgs.py": """
        import torch
        from .search import wolfe
        def bfgs(fun, x0):
            x = x0.cuda()
            return wolfe(fun, x, (x * x).sum(), 0.5)
    """, "newton.py": """
        import torch
        from .search import wolfe
        def newton(fun, x0, f0):
            x = x0.cuda()
            return wolfe(fun, x, f0, 1.0)
    """})
    assert _findings(pkg / "search.py") == [(4, "SYN103", "low")]
    (pkg / "cg.py").write_text(textwrap.dedent("""
        import torch
        from .search import wolfe
        def cg(fun, x0, f):
            return wolfe(fun, x0.cuda(), f)
    """))
    src = (pkg / "search.py").read_text().replace("float(f)", "float(t)")
    (pkg / "search.py").write_text(src)
    from syncscan.lint import engine

    engine._CROSSFILE = None  # (a new process: the callers are memoised per process)
    assert _findings(pkg / "search.py") == []  # `t`: 0.5, 1.0, and the default


# -- indices --------------------------------------------------------------------------------------------
def test_an_index_the_function_compares_in_a_truth_test_is_probably_0_dim():
    # `if pre != label:` takes the truth value of a comparison of `label`: one element, so `fs[label]` (and
    # `A[k - 1, k - 1]` under `if k != 1:`) probably reads a 0-dim index on the host: low confidence
    got = _codes("""
        import torch
        def refine(fs: torch.Tensor, label: torch.Tensor, A: torch.Tensor, k: torch.Tensor):
            _, pre = torch.max(fs, dim=0)
            if pre != label:
                return pre
            if k != 1:
                return A[k - 1, k - 1]
            return fs[label]
    """)
    assert [c for c in got if c[0] == "SYN302"] == [("SYN302", 8, "low"), ("SYN302", 9, "low")]
    # a slice keeps the dim (`labels[i:i + 1]`: a 1-element 1-D index, a gather); two bindings say nothing
    got = _codes("""
        import torch
        def refine(fs: torch.Tensor, labels: torch.Tensor, i: int, t: torch.Tensor):
            label = labels[i:i + 1]
            _, pre = torch.max(fs, dim=0)
            if pre != label or t > 0:
                return pre
            t = t + 1
            return fs[label] + fs[t]
    """)
    assert [c for c in got if c[0] == "SYN302"] == []


def test_a_module_function_that_returns_a_host_list_indexes_on_the_host():
    # `x[pick(n, k)]` where every return of `pick` is `.tolist()` of an array: a Python list, copied to the device
    got = _codes("""
        import numpy as np
        import torch
        def pick(n, k):
            return np.random.choice(n, k).tolist()
        def draw(x: torch.Tensor, k: int):
            def local():
                return [0, 2]
            return x[pick(x.shape[0], k)], x[local()]
    """)
    assert [c for c in got if c[0] == "SYN206"] == [("SYN206", 9, "high"), ("SYN206", 9, "high")]
    got = _codes("""
        import torch
        def pick(x, k):
            return torch.randperm(x.shape[0], device=x.device)[:k]
        def draw(x: torch.Tensor, k: int):
            return x[pick(x, k)]
    """)
    assert [c for c in got if c[0] == "SYN206"] == []


def test_a_type_test_makes_a_bare_parameter_a_tensor_by_more_than_a_guess():
    # `torch.is_tensor(x) or isinstance(x, np.ndarray)`: a tensor on one path, so `float(x)` syncs there;
    # `x.detach() if torch.is_tensor(x) else x`: the body is written for a tensor
    src = """
import numpy as np
import torch

def to_array(output):
    if (torch.is_tensor(output) or isinstance(output, np.ndarray)) and len(output.shape) == 0:
        return [float(output)]
    return [float(output.detach() if torch.is_tensor(output) else output)]

def untested(value):
    return float(value)

def host_or_array(value):
    if isinstance(value, (int, float)) or isinstance(value, np.ndarray):
        return float(value)
"""
    got = [(f.code, f.line) for f in lint_source("m.py", src, [r() for r in all_rules()]).findings]
    assert got == [("SYN103", 7), ("SYN103", 8)]


def test_np_isscalar_narrows_a_tensor_or_number_parameter_to_a_host_number():
    # `prior: float | torch.Tensor` under `if np.isscalar(prior):` is a Python or numpy scalar: copying it to
    # the device is host data copied from pageable memory (SYN202), not a tensor handed on
    src = """
import numpy as np
import torch

class Prior:
    def set(self, prior: float | torch.Tensor) -> None:
        if np.isscalar(prior) and np.isreal(prior):
            self._prior = torch.as_tensor(prior, device=self._device)
        elif isinstance(prior, torch.Tensor):
            self._prior = torch.as_tensor(prior, device=self._device)
"""
    got = [(f.code, f.line) for f in lint_source("m.py", src, [r() for r in all_rules()]).findings]
    assert got == [("SYN202", 8)]


def test_star_imported_helpers_and_mask_attributes(tmp_path):
    # `from .utils import *` brings in `window_sum` as if imported by name (its module is read as text for the
    # names, and is a dependency of the file's cached result); `self.nonzero = self.w_sum > 1e-10` is the only
    # value the class stores there: a mask, so indexing with it is a boolean-mask read
    pkg = _package(tmp_path, {
        "utils.py": """
            import torch

            def window_sum(w, n):
                return torch.zeros(n, device=w.device) + w.sum()
        """,
        "stft.py": """
            import torch
            from .utils import *

            class STFT(torch.nn.Module):
                def forward(self, real: torch.Tensor, w: torch.Tensor, refresh=False):
                    if not hasattr(self, "w_sum") or refresh:
                        self.w_sum = window_sum(w, 10).flatten()
                        self.nonzero = self.w_sum > 1e-10
                    return real[:, self.nonzero] / self.w_sum[self.nonzero]
        """,
    })
    r = lint_source(str(pkg / "stft.py"), (pkg / "stft.py").read_text(), RULES)
    assert r.error is None, r.error
    assert [(f.line, f.code) for f in r.findings] == [(10, "SYN302"), (10, "SYN302")]
    assert str(pkg / "utils.py") in {d[0] for d in r.deps}


def test_star_import_passes_on_the_helper_modules_imports(tmp_path):
    # a script's `from utils import *` brings the helper's own `import torch` (and its `device`) with it: a file
    # that never imports torch itself still makes host tensors with `torch.zeros`, copied to `device` every step;
    # a name the file defines itself is not replaced by one of the helper's imports
    pkg = _package(tmp_path, {
        "utils.py": """
            import torch
            import torch.nn.functional as F
            device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        """,
        "model.py": """
            from torch import nn
            from .utils import *

            def F(x):
                return x

            class Loss(nn.Module):
                def forward(self, pred, n_priors: int):
                    true_locs = torch.zeros((pred.size(0), n_priors, 4), dtype=torch.float).to(device)
                    return F(true_locs)
        """,
    })
    r = lint_source(str(pkg / "model.py"), (pkg / "model.py").read_text(), RULES)
    assert r.error is None, r.error
    assert [(f.line, f.code) for f in r.findings] == [(10, "SYN204")]
    assert str(pkg / "utils.py") in {d[0] for d in r.deps}
    # without the star import, `torch` is nothing the linter knows: no finding
    bare = (pkg / "model.py").read_text().replace("from .utils import *", "")
    assert lint_source(str(pkg / "model2.py"), bare, RULES).findings == []
