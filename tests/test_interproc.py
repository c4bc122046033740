"""The tensor inference across the functions of one module (syncscan/lint/interproc.py) and the
inference details the host-read rules rely on: each snippet calls `probe(...)`, and the test reads
the kinds the lint walk gives its arguments there."""

import textwrap

import pytest

from syncscan.lint.engine import lint_source
from syncscan.lint.rule import Rule
from syncscan.lint.tensors import CPU, HOST, NDARRAY, OTHER, TENSOR, TENSORS


class _Probe(Rule):
    code = "SYN999"
    name = "probe"
    summary = why = rewrite = "test probe"
    triggers = ("probe",)
    bad = good = ()
    seen: list = []

    def visit_Call(self, node, ctx):
        if getattr(node.func, "id", None) == "probe":
            type(self).seen.append([ctx.kind(a) for a in node.args])


def kinds(src: str) -> list:
    _Probe.seen = []
    r = lint_source("m.py", textwrap.dedent(src), [_Probe()])
    assert r.error is None, r.error
    return _Probe.seen


def test_type_comment_types_parameters_and_return():
    assert kinds("""
        def paste(mask, box, im_h):
            # type: (Tensor, Tensor, int) -> Tensor
            probe(box, box[2] - box[0], im_h)
            return mask
        def f(a, b):
            probe(paste(a, b, 3))
    """) == [[TENSOR, TENSOR, HOST], [TENSOR]]


def test_returns_of_module_functions_methods_and_local_functions():
    assert kinds("""
        import torch
        def all_true(m: torch.Tensor):
            return m.sum() == m.numel()
        class S:
            @staticmethod
            def _done(a: torch.Tensor):
                return torch.any(a) & ~torch.all(a)
            def size_of(self, a: torch.Tensor):
                return a.shape[0]
            def run(self, a, m):
                def to_t(v, device=None):
                    if v is None:
                        return v
                    if isinstance(v, torch.Tensor):
                        return v.to(device)
                    return torch.tensor(v, device=device)
                probe(all_true(m), self._done(a), self.size_of(a), to_t(3))
    """) == [[TENSOR, TENSOR, HOST, TENSOR]]


def test_tuple_returns_bind_each_position():
    assert kinds("""
        import torch
        class A:
            def split(self, x: torch.Tensor):
                return x.sum(1).max(), x.shape[0]
            def forward(self, x: torch.Tensor):
                n, b = self.split(x)
                probe(n, b)
    """) == [[TENSOR, HOST]]


def test_parameters_from_every_caller():
    out = kinds("""
        import torch
        class A:
            def _gather(self, x, n, k, flag=None):
                probe(x, n, k, flag)
            def forward(self, x: torch.Tensor, m: torch.Tensor):
                self._gather(x, m.sum(), 4)
                self._gather(x, n=m.max(), k=2)
    """)
    assert out == [[TENSOR, TENSOR, HOST, None]]


def test_parameters_not_learnt_from_mixed_callers_or_escaping_functions():
    out = kinds("""
        import torch
        def h(x):
            probe(x)
        def g(x):
            probe(x)
        def f(t: torch.Tensor):
            h(t)
            h(3)
            g(t)
            callbacks = [g]
    """)
    assert out == [[None], [None]]


def test_callers_of_callers_reach_two_levels():
    # the middle function's parameter comes from its caller; the leaf's from the middle one
    assert kinds("""
        import torch
        def leaf(v):
            probe(v)
        def middle(u):
            leaf(u.cpu())
            leaf(u.cpu())
        def top(t: torch.Tensor):
            middle(t)
    """) == [[CPU]]


def test_body_use_makes_a_tensor():
    assert kinds("""
        import torch
        def f(is_global, boxes, other, cfg):
            n = is_global.long().sum(dim=1)
            probe(is_global, boxes, other, n)
            return torch.min(boxes[:, None, :2], other[:, :2]), cfg.view
    """) == [[TENSOR, TENSOR, TENSOR, TENSOR]]


def test_body_use_follows_a_slice_back_and_skips_dict_entries():
    assert kinds("""
        from torchvision.ops.boxes import box_iou
        def f(make, kwargs):
            b = make()
            probe(b, kwargs)
            b = b[b.sum(-1) > 0]
            return box_iou(b, b), box_iou(kwargs["boxes"], b)
    """) == [[TENSOR, None]]


def test_zip_isinstance_and_host_unpacking():
    assert kinds("""
        import torch
        def f(logits, matched, size):
            # type: (Tensor, list[Tensor], tuple[int, int]) -> Tensor
            for lg, m in zip(logits, matched):
                probe(lg, m)
            h, w = size
            probe(h, w)
        def g(x):
            if isinstance(x, torch.Tensor):
                probe(x)
            probe(x)
    """) == [[TENSOR, TENSOR], [HOST, HOST], [TENSOR], [None]]


def test_torch_ops_on_python_numbers_give_cpu_tensors():
    assert kinds("""
        import torch
        def f(x: torch.Tensor, w: int):
            probe(torch.div(x.size(1), w, rounding_mode="trunc"), torch.div(x, w),
                  torch.tril_indices(w, w, device=x.device))
    """) == [[CPU, TENSOR, TENSOR]]


def test_module_outputs_enums_and_containers():
    assert kinds("""
        import enum
        import torch
        class Fmt(enum.Enum):
            XYXY = 1
        def f(boxes: torch.Tensor, out: torch.Tensor):
            probe(boxes.format == Fmt.XYXY, boxes.dtype == torch.float16, out.items(), out.get("x"),
                  boxes.sum() > 0 and boxes.max() > 1, getattr_cfg.pad_token_tensor, getattr_cfg.to_tensor)
    """) == [[HOST, HOST, None, None, TENSOR, TENSOR, None]]


@pytest.mark.parametrize("src", [
    # recursion, mutual recursion, a long chain of helpers, a method calling itself through self
    """
    def a(x):
        return a(x) if x else b(x)
    def b(x):
        return a(x)
    def run(t):
        probe(a(t))
    """,
    "\n".join([f"def f{i}(x):\n    return f{i + 1}(x.unsqueeze(0))" for i in range(40)]
              + ["def f40(x):\n    return x", "def run(t):\n    probe(f0(t))"]),
    """
    class A:
        def m(self, x):
            return self.m(x) + self.n(x)
        def n(self, x):
            return self.m(x)
        def forward(self, x):
            probe(self.m(x))
    """,
])
def test_recursion_and_long_chains_end(src):
    assert len(kinds(src)) == 1


# -- branches (issue 12): what either path leaves --------------------------------------------------

def test_a_branch_binding_a_host_value_keeps_the_tensor_kind_of_the_other():
    assert kinds("""
        import torch
        def f(x: torch.Tensor, on_cpu: bool):
            if on_cpu:
                n = 0
            else:
                n = x.sum()
            probe(n)
            m = x.max() if on_cpu else 1
            probe(m)
    """) == [[TENSOR], [TENSOR]]


def test_a_host_fallback_does_not_make_a_value_a_host_tensor():
    assert kinds("""
        import torch
        def f(p, x):
            y = x if len(p) else torch.empty(0)
            probe(y)
            if len(p):
                z = x
            else:
                z = torch.empty(0)
            probe(z)
    """) == [[None], [None]]


def test_a_branch_that_returns_leaves_nothing_and_loops_may_not_run():
    assert kinds("""
        import torch
        def f(x: torch.Tensor, flag: bool):
            n = 1
            if flag:
                n = x.sum()
                return n
            probe(n)
            best = 0.0
            for i in range(3):
                best = x.max()
            probe(best)
    """) == [[HOST], [TENSOR]]


def test_branches_eager_pytorch_never_takes_leave_nothing():
    assert kinds("""
        import torch
        def f(image: torch.Tensor):
            if torch.jit.is_scripting():
                shape = torch.tensor(image.shape[-2:])
            else:
                shape = image.shape[-2:]
            probe(shape)
            if not torch.compiler.is_compiling():
                n = image.shape[0]
            else:
                n = image.sum()
            probe(n)
    """) == [[HOST], [HOST]]


# -- collections, probable tensors, type tests (issue 12) ------------------------------------------

def test_dicts_and_lists_of_tensors():
    assert kinds("""
        import torch
        import torch.nn.functional as F
        def f(a: torch.Tensor, b: torch.Tensor):
            losses = {"ce": F.cross_entropy(a, b), "l1": (a - b).abs().mean()}
            probe(losses["ce"], sum(losses.values()))
            parts = []
            parts.append(a.sum())
            probe(sum(parts))
            d = {}
            d["x"] = a.max()
            for k, v in d.items():
                probe(k, v)
            mixed = []
            mixed.append(a.sum())
            mixed.append(3)
            probe(mixed)
    """) == [[TENSOR, TENSOR], [TENSOR], [HOST, TENSOR], [None]]


def test_a_part_named_for_a_loss_is_not_a_guess():
    from syncscan.lint.registry import all_rules

    src = textwrap.dedent("""
        def train(model, loader, opt):
            for batch in loader:
                loss, parts = model(batch)
                if loss > 0:
                    print("positive")
                if parts:
                    print("parts")
                loss.backward()
                opt.step()
    """)
    r = lint_source("t.py", src, [x() for x in all_rules()])
    assert [(f.line, f.code) for f in r.findings] == [(5, "SYN104")]


def test_reductions_of_library_results_are_probably_tensors():
    from syncscan.lint.registry import all_rules

    src = textwrap.dedent("""
        import torch
        from torch_geometric.utils import degree
        def f(index):
            deg = degree(index)
            n = int(deg.max())
            return torch.zeros(n, device=index.device)
    """)
    found = lint_source("t.py", src, [x() for x in all_rules()]).findings
    assert [(f.line, f.code, f.confidence) for f in found] == [(6, "SYN103", "low")]
    used = src.replace("deg = degree(index)", "deg = degree(np.asarray(index))")
    with_numpy = lint_source("t.py", "import numpy as np\n" + used, [x() for x in all_rules()]).findings
    assert with_numpy == []  # numpy in the function: `deg` may be an array
    imported = lint_source("t.py", "import numpy as np\n" + src, [x() for x in all_rules()]).findings
    assert [(f.line, f.code, f.confidence) for f in imported] == [(7, "SYN103", "low")]  # imported, not used here


def test_uses_under_a_type_test_say_nothing_of_the_name():
    assert kinds("""
        import numpy as np
        def f(image, x):
            if hasattr(image, "cpu"):
                image = image.cpu().numpy()
            else:
                probe(image)
            probe(image)
            if isinstance(x, torch.Tensor):
                pass
            else:
                probe(x)
        import torch
    """) == [[OTHER], [None], [OTHER]]


def test_array_methods_make_a_parameter_probably_a_tensor_in_a_torch_only_module():
    from syncscan.lint.registry import all_rules

    src = textwrap.dedent("""
        import torch
        def num_nodes(index, n=None):
            if index.max() >= 10:
                return int(index.max()) + 1
            return n
        def guarded(x):
            if torch.jit.is_tracing() and isinstance(x, torch.Tensor):
                x = x.item()
            return x > 0
    """)
    found = lint_source("t.py", src, [x() for x in all_rules()]).findings
    assert [(f.line, f.code, f.confidence) for f in found] == [(4, "SYN104", "low"), (5, "SYN103", "low"), (9, "SYN101", "high")]
    assert found[-1].local == "export"  # (cold: only while tracing)


def test_attributes_assigned_from_parameters_take_what_the_constructions_pass():
    assert kinds("""
        import torch
        class Solver:
            def __init__(self, t0: torch.Tensor, t1, rtol, mode):
                self.t0 = t0
                self.t1 = t1
                self.rtol = rtol
                self.mode = mode
            def step(self):
                probe(self.t0, self.t1, self.rtol, self.mode)
        def make(x, mode):
            y = x.unsqueeze(0)
            return Solver(y, y.sum(), 1e-3, mode)
    """) == [[TENSOR, TENSOR, HOST, None]]


def test_named_tuples_of_tensors():
    assert kinds("""
        import collections
        import torch
        State = collections.namedtuple("State", "y t0 t1")
        def f(y: torch.Tensor, t: torch.Tensor):
            s = State(y, t[0], t[1])
            probe(s.t1)
            y1, t0, t1 = s
            probe(t1)
            h = State(y, 0, 1)
            probe(h.t1)
    """) == [[TENSOR], [TENSOR], [HOST]]  # (what this construction put there)


def test_a_name_holding_torch_or_numpy():
    assert kinds("""
        import numpy as np
        import torch
        def f(seg):
            lib = torch if isinstance(seg, torch.Tensor) else np
            probe(lib.any(seg))
            xp = np
            probe(xp.any(seg))
    """) == [[TENSOR], [NDARRAY]]


def test_a_name_handed_to_a_function_that_uses_it_as_a_tensor_is_one():
    assert kinds("""
        import torch
        def _check(name, t):
            assert t.ndimension() == 1, name
        def _asserted(t):
            assert isinstance(t, torch.Tensor) and t.dim() == 1
        def _maybe(v):
            return isinstance(v, torch.Tensor) and v.numel() == 1
        class Solver:
            def _grid(self, t):
                return t.unsqueeze(0)
            def run(self, t, u, w):
                self._grid(t)
                _asserted(u)
                _maybe(w)
                probe(t, u, w)
        def _edges(data, key):
            return data[key].size()  # (data may hold tensors: it is not one)
        def odeint(t, s, d, *rest):
            _check("t", t)
            _check(t=s, name="s")
            _check("r", rest[0])
            _edges(d, "x")
            probe(t, s, d, rest)
    """) == [[TENSOR, TENSOR, None], [TENSOR, TENSOR, None, None]]


def test_attributes_of_the_module_own_base_classes_are_inherited():
    assert kinds("""
        import torch
        class Base:
            def __init__(self, y0):
                self.t1 = torch.zeros((), device=y0.device)
                self.n = 0
        class Child(Base):
            def __init__(self, y0):
                super().__init__(y0)
                self.n = 1.0
            def advance(self):
                probe(self.t1, self.n)
        class Loop(Loop):  # a base naming the class itself reads nothing
            def go(self):
                probe(self.t1)
    """) == [[TENSOR, HOST], [None]]


def test_a_buffer_stays_a_tensor_whatever_host_tensor_a_method_assigns():
    assert kinds("""
        import torch
        class Standardize(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("trained", torch.tensor(False))
            def forward(self, y):
                if self.training:
                    self.trained = torch.tensor(True)
                return y
            def untransform(self, y):
                probe(self.trained)
    """) == [[TENSOR]]


def test_a_parameter_name_the_module_takes_as_a_tensor_is_probably_one():
    from syncscan.lint.engine import lint_source as run
    from syncscan.lint.registry import all_rules

    src = textwrap.dedent("""
        import torch
        def _step(y0, t0, dt):
            return y0 + t0.unsqueeze(0) * dt
        def _interp(t0, t1, y0, y1, t):
            if t == t0:
                return y0
            return y1
        def _count(n, t0=0.0):  # another function's number default for `t0` withdraws the name
            return n
        def _count2(length, t1):
            if t1 > 0:
                return length
        class Logger:
            def __init__(self, t0=None):
                self.t0 = t0  # a probable kind is not carried to other methods as a known one
            def dump(self):
                if self.t0 != 0:
                    return 1
    """)
    found = [(f.line, f.confidence) for f in run("m.py", src, [r() for r in all_rules()]).findings if f.code == "SYN104"]
    assert found == []  # `t0` is withdrawn by `_count`'s default; `t1` is taken as a tensor nowhere
    src2 = src.replace("def _count(n, t0=0.0)", "def _count(n, t9=0.0)")
    found = [(f.line, f.confidence) for f in run("m.py", src2, [r() for r in all_rules()]).findings if f.code == "SYN104"]
    assert found == [(6, "low")]


def _kinds_at(path: str, src: str) -> list:
    _Probe.seen = []
    r = lint_source(path, textwrap.dedent(src), [_Probe()])
    assert r.error is None, r.error
    return _Probe.seen


def test_a_function_of_another_module_of_the_tree_called_through_the_module_is_as_by_name():
    src = """
        import logging
        import torch
        import lib.misc as lib_misc
        import pkg.misc as m2
        from . import misc
        from pkg import misc as m3
        from .misc import is_nan
        def f(x):
            y = x.cuda()
            probe(misc.is_nan(y), m2.is_nan(y), m3.is_nan(y), is_nan(y))
            probe(misc.Config(y), misc.is_nan(3), logging.getLogger(y), lib_misc.is_nan(y))
            misc = [1]
            probe(misc.count(y))
    """
    # `pkg` is a folder the file is in: a module of the tree; `lib` is not (a library); a class, a
    # host argument or a local variable that hides the module name say nothing
    assert _kinds_at("/src/pkg/sub/m.py", src) == [[TENSOR] * 4, [None] * 4, [None]]
    # outside `pkg`, only the relative imports are known to be of the tree
    assert _kinds_at("/src/other/m.py", src) == [[TENSOR, None, None, TENSOR], [None] * 4, [None]]


class _ProbableProbe(_Probe):
    code = "SYN998"

    def visit_Call(self, node, ctx):
        if getattr(node.func, "id", None) == "probe":
            out = []
            for a in node.args:
                ctx.infer.probable = False
                k = ctx.kind(a)
                out.append((k, ctx.infer.probable))
            type(self).seen.append(out)


def test_method_parameters_from_calls_through_instances_of_the_module_classes():
    src = """
        import time
        import torch
        from collections import defaultdict
        class Meter:
            def update(self, val, n=1):
                probe(val, n)
                self.val = val
            def show(self):
                probe(self.val)
        class Loss:
            def add(self, v):
                probe(v)
        def train(loader, model, meter_arg):
            top1 = Meter()
            losses = {"ce": Loss(), "l1": Loss()}
            by_name = defaultdict(Loss)
            end = time.time()
            for x, y in loader:
                out = model(x.cuda())
                top1.update(out.sum(), x.size(0))
                top1.update(time.time() - end, 1)
                losses["ce"].add(out.mean())
                by_name["l1"].add(out.max())
                meter_arg.update(3)  # a parameter: not known to be a Meter
    """
    _ProbableProbe.seen = []
    r = lint_source("m.py", textwrap.dedent(src), [_ProbableProbe()])
    assert r.error is None
    # `val`: a tensor from one instance call, a host value from another: probably a tensor; `n`: host
    # values from both; `v`: tensors through a dict of instances and a defaultdict of them
    assert _ProbableProbe.seen == [[(TENSOR, True), (HOST, False)], [(TENSOR, False)], [(TENSOR, False)]]


def test_a_method_read_as_a_value_takes_nothing_from_instance_calls():
    assert kinds("""
        class Meter:
            def update(self, val):
                probe(val)
        def train(model, x, register):
            m = Meter()
            m.update(model(x.cuda()))
            register(m.update)
    """) == [[None]]


def test_a_list_filled_with_tensors_in_a_loop_and_all_any_results():
    assert kinds("""
        import torch
        def accuracy(output, topk=(1,)):
            res = []
            for k in topk:
                res.append(output[:k].float().sum())
            probe(res, all(t > 0 for t in res), any([output.cuda().sum() > 0]))
            return res
        def train(x):
            acc1, acc5 = accuracy(x.cuda(), (1, 5))
            probe(acc1)
    """) == [[TENSORS, HOST, HOST], [TENSOR]]


def test_a_function_imported_by_name_from_a_module_of_the_tree_is_read_there(tmp_path):
    # `from .integrator import verlet`: what `verlet` returns in its own file, as for `integrator.verlet(...)`;
    # handed only host tensors, the guess that it computes on the host (`_host_call`) stands
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "integrator.py").write_text(textwrap.dedent("""
        import torch
        def verlet(z, potential_fn):
            energy = potential_fn(z)
            return z, energy.detach()
        def normalize(x):
            t = torch.eye(3, device="cuda")
            return x @ t
    """))
    src = """
        import torch
        from .integrator import verlet, normalize
        def f(z, potential_fn, kp):
            z_new, energy = verlet(z, potential_fn)
            probe(energy, normalize(kp.detach().cpu()), normalize(kp.detach()))
    """
    assert _kinds_at(str(pkg / "nuts.py"), src) == [[TENSOR, CPU, TENSOR]]


def test_a_method_that_several_classes_of_the_module_share_gets_what_their_instances_are_handed():
    # `hess = L_BFGS(x) if limited else BFGS(x)`: both take `update` from their base, so `hess.update(s, y)`
    # hands it device tensors whichever was built; `y.dot(s)` of them is a 0-dim device tensor
    from syncscan.lint.engine import lint_source as run
    from syncscan.lint.registry import all_rules
    src = textwrap.dedent("""
        import torch
        class Base:
            def update(self, s, y):
                rho_inv = y.dot(s)
                if rho_inv <= 1e-10:
                    return
        class A(Base):
            pass
        class B(Base):
            pass
        def core(limited):
            x = torch.zeros(3, device="cuda")
            if limited:
                hess = A()
            else:
                hess = B()
            hess.update(x.sub(1), x.add(1))
    """)
    found = [(f.line, f.code, f.confidence) for f in run("m.py", src, [r() for r in all_rules()]).findings]
    assert found == [(6, "SYN104", "high")]
    # a class that overrides it: which method runs depends on the path, so the call says nothing; `y.dot(s)`
    # of unknowns, where torch is the only array library, is only probably a tensor
    overridden = src.replace("class B(Base):\n    pass", "class B(Base):\n    def update(self, s, y):\n        pass")
    assert overridden != src
    found = [(f.line, f.code, f.confidence) for f in run("m.py", overridden, [r() for r in all_rules()]).findings]
    assert found == [(6, "SYN104", "low")]


def test_a_tensor_from_some_callers_and_an_unknown_from_others_where_the_function_computes_with_it():
    # session 11: k-diffusion's `get_ancestral_step(sigmas[i], ...)` beside `get_ancestral_step(sigma_fn(t), ...)`
    out = kinds("""
        import torch
        def step(sigma_from, sigma_to):
            probe(sigma_from, sigma_to, sigma_to ** 2 - sigma_from ** 2)
        def default(val, d):
            probe(val)
            return val if val is not None else d
        def flagged(freeze):
            probe(freeze, freeze * 2)
            if not freeze:
                return 1
        def sample(sigmas: torch.Tensor, sigma_fn, t):
            step(sigmas[0], sigmas[1])
            step(sigma_fn(t), sigma_fn(t + 1))
            default(sigmas[0], 1)
            default(sigma_fn(t), 1)
            flagged(sigmas[0])
            flagged(sigma_fn(t))
    """)
    # computed with: probably a tensor; only handed on, or tested for truth: says nothing
    assert out == [[TENSOR, TENSOR, TENSOR], [None], [None, None]]


def test_a_host_tensor_of_one_or_more_dimensions_computes_only_with_host_values():
    out = kinds("""
        import torch
        def f(n, lo, hi, scale):
            ramp = torch.linspace(0, 1, n)
            probe(ramp * (lo - hi), (hi + ramp * lo) ** 2, torch.tensor(2.0) * scale, scale * torch.arange(n))
    """)
    # (a 0-dim host tensor times a device tensor is a device tensor: unknown stays unknown)
    assert out == [[CPU, CPU, None, CPU]]


def test_a_modules_parameters_and_buffers_are_tensors():
    out = kinds("""
        def f(model, modules: dict, counts: dict):
            for name, p in model.named_parameters():
                probe(p, name)
            for b in model.buffers():
                probe(b)
            for k in counts.keys():
                probe(k)
    """)
    assert out == [[TENSOR, HOST], [TENSOR], [None]]
