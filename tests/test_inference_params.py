"""What the inference knows of a function's parameters and names from type tests, docstrings and
mixed annotations (issue 12): each snippet calls `probe(...)` and the test reads the kinds the lint
walk gives its arguments there (the probe of test_interproc.py)."""

import textwrap

from test_interproc import kinds

from syncscan.lint.docstrings import tensor_params
from syncscan.lint.engine import lint_source
from syncscan.lint.registry import all_rules
from syncscan.lint.tensors import CPU, HOST, OTHER, TENSOR, TENSORS


def findings(src: str) -> list:
    r = lint_source("m.py", textwrap.dedent(src), [R() for R in all_rules()])
    assert r.error is None, r.error
    return [(f.code, f.line, f.confidence) for f in r.findings]


# -- type tests ------------------------------------------------------------------------------------
def test_not_a_tensor_in_a_negated_type_test_and_a_tensor_past_one_that_raises():
    assert kinds("""
        import torch
        def f(x: torch.Tensor, y, z):
            if not torch.is_tensor(x):
                probe(x)
            if not isinstance(y, torch.Tensor):
                raise TypeError("y")
            probe(x, y, z)
            if not isinstance(z, torch.Tensor):
                probe(z)
            else:
                probe(z)
    """) == [[OTHER], [TENSOR, TENSOR, None], [OTHER], [TENSOR]]


def test_not_a_tensor_under_a_negated_or_of_type_tests():
    # `not (is_tensor(x) or isinstance(x, Op))`: x is neither where it holds; either where it does not
    assert kinds("""
        import torch
        class Op:
            pass
        def f(x: torch.Tensor, y):
            if not (torch.is_tensor(x) or isinstance(x, Op)):
                probe(x)
            else:
                probe(x)
            if not (isinstance(y, Op) or isinstance(y, torch.Tensor)):
                y = torch.tensor(y, device="cuda")
            probe(y)
    """) == [[OTHER], [TENSOR], [TENSOR]]


def test_an_and_or_or_is_the_tensor_one_of_its_operands_may_give():
    # `a and b` is `a` or `b`, as a branch would pick: a tensor on one path stays a tensor
    assert kinds("""
        import torch
        def f(mask: torch.Tensor, batch_first: bool, n: int):
            seen = not batch_first and mask[0].all()
            probe(seen, batch_first and n > 0, n or 1)
    """) == [[TENSOR, HOST, HOST]]
    assert ("SYN104", 6, "high") in findings("""
        import torch
        def validate(mask: torch.Tensor, batch_first: bool):
            no_empty = not batch_first and mask[0].all()
            no_empty_bf = batch_first and mask[:, 0].all()
            if not no_empty and not no_empty_bf:
                raise ValueError("mask of the first timestep must all be on")
    """)


def test_a_number_under_isinstance_of_number_types():
    assert kinds("""
        import numbers
        import torch
        def f(x: torch.Tensor, s):
            if isinstance(x, (int, float)):
                probe(x)
            if isinstance(s, numbers.Number) and s > 0:
                probe(s)
            probe(x)
    """) == [[HOST], [HOST], [TENSOR]]


def test_host_data_converted_under_a_negated_type_test_is_flagged():
    # `factor: float | Tensor`: where it is not a tensor, `torch.tensor(factor, device=...)` copies a number
    assert ("SYN202", 5, "high") in findings("""
        import torch
        def scale(image: torch.Tensor, factor: float | torch.Tensor):
            if not isinstance(factor, torch.Tensor):
                factor = torch.tensor(factor, device=image.device)
            return image * factor
    """)


# -- docstrings --------------------------------------------------------------------------------------
def test_docstring_declared_tensors():
    doc = """Evaluate.

        Args:
            coefficients: list of Tensor coefficients.
            t0: scalar float64 Tensor giving the start of the interval.
            x (Tensor): input.
            y (`torch.Tensor`, *optional*): more.
                z: Tensor in a continuation line says nothing.
            z (Tensor or float): mixed.
            w (torch.FloatTensor of shape `(batch, n)`): weights.
            n (int): a count.
            b: Tensors, a list of them.

        Returns:
            t: Tensor
    """
    params = {"coefficients", "t0", "t", "x", "y", "z", "w", "n", "b"}
    assert tensor_params(doc, params) == {"t0", "x", "y", "w"}
    numpy = """Do.

        Parameters
        ----------
        x : torch.Tensor
            the x
        y : array_like
        z : Tensor, optional

        Returns
        -------
        t : Tensor
    """
    assert tensor_params(numpy, params) == {"x", "z"}
    # `name: type` (no space before the colon) under a dashed heading, and a shape called on the type
    dashed = """Do.

        Arguments
        ---------
        x: torch.Tensor(shape=(n, k))
            the x
        y: Tuple(Tensor, Tensor)
        z: torch.Tensor, shape (n_anchors)
            the z
        n: int
    """
    assert tensor_params(dashed, params) == {"x", "z"}
    sphinx = ":param torch.Tensor x: the x\n:param y: the y\n:type y: torch.Tensor\n:type z: Tensor or None\n"
    assert tensor_params(sphinx, params) == {"x", "y"}


def test_a_parameter_its_docstring_declares_a_tensor_is_one():
    assert kinds("""
        def interp(coefficients, t0, t, eps=0.5, scale=None):
            '''Evaluate at `t`.

            Args:
                coefficients: list of Tensor coefficients.
                t0: scalar float64 Tensor giving the start of the interval.
                t (Tensor): the point.
                eps (Tensor): a default that is a number says otherwise.
                scale (Tensor, optional): a scale.
            '''
            probe(coefficients, t0, t, eps, scale)
    """) == [[None, TENSOR, TENSOR, HOST, TENSOR]]
    assert ("SYN104", 10, "high") in findings("""
        def interp(coefficients, t0, t1, t):
            '''Evaluate.

            Args:
                t0: scalar float64 Tensor giving the start of the interval.
                t1: scalar float64 Tensor giving the end of the interval.
                t: scalar float64 Tensor giving the desired interpolation point.
            '''
            assert (t0 <= t) & (t <= t1), "invalid interpolation"
            return (t - t0) / (t1 - t0)
    """)


# -- mixed annotations -------------------------------------------------------------------------------
def test_a_condition_on_a_parameter_annotated_int_or_tensor_is_a_low_confidence_finding():
    src = """
        from typing import Union
        import torch
        from torch import Tensor
        def compute(sum_obs: Tensor, num_obs: Union[int, Tensor], eps: Union[float, Tensor] = 1e-6) -> Tensor:
            if num_obs < 2:
                raise ValueError("Needs at least two samples")
            if eps > 1:
                raise ValueError("eps")
            return sum_obs / num_obs
    """
    got = findings(src)
    assert ("SYN104", 6, "low") in got
    assert not any(line == 8 for _, line, _ in got)  # a number by default: silent


def test_type_tests_in_an_and_chain_and_past_an_early_return():
    assert kinds("""
        from typing import List, Union
        import torch
        def f(thresholds: Union[int, torch.Tensor], imgs: Union[torch.Tensor, List[torch.Tensor]], d):
            if isinstance(thresholds, int) and probe(thresholds):
                pass
            if isinstance(imgs, torch.Tensor):
                return imgs
            probe(imgs, imgs[0])
            if isinstance(d, torch.dtype):
                probe(d)
    """) == [[HOST], [TENSORS, TENSOR], [OTHER]]


def test_a_condition_on_a_number_after_a_type_test_is_not_flagged():
    got = findings("""
        from typing import Union
        import torch
        def adjust(thresholds: Union[int, torch.Tensor], size: Union[int, torch.Tensor]):
            if isinstance(thresholds, int) and thresholds < 2:
                raise ValueError("thresholds")
            if isinstance(size, torch.Tensor):
                return (size - 1).clamp(min=1)
            return 1 if size == 1 else size - 1
    """)
    assert got == []


# -- record fields -----------------------------------------------------------------------------------
def test_record_fields_hold_what_the_module_puts_there():
    assert kinds("""
        import collections
        import dataclasses
        import torch
        State = collections.namedtuple("State", "y1, t0, t1, dt")
        @dataclasses.dataclass
        class Out:
            loss: torch.Tensor
            n: int
        class Solver:
            def before(self, t, y0):
                self.state = State(y0, t[0], t[0], None)
            def advance(self, next_t):
                probe(self.state.t1, self.state.t0)
                self.state = self.step(self.state)
            def step(self, state):
                y1, t0, _, dt = state
                dt = dt.clamp(0.1, 1.0)
                return State(y1, t0, t0 + dt, dt)
        def g(out: Out, s: State):
            probe(out.loss, out.n, s.t1, State(1, 2, 3, None).t1)
    """) == [[TENSOR, None], [TENSOR, HOST, TENSOR, HOST]]


def test_a_loop_condition_on_a_record_field_is_flagged():
    assert ("SYN104", 12, "high") in findings("""
        import collections
        import torch
        State = collections.namedtuple("State", "y1, t1")
        class Solver:
            def before(self, t, y0):
                self.state = State(y0, t[0])
            def step(self, state):
                y1, t1 = state
                return State(y1, t1 + torch.ones(1, device="cuda"))
            def advance(self, next_t):
                while next_t > self.state.t1:
                    self.state = self.step(self.state)
    """)



def test_a_record_returned_on_every_path_keeps_its_fields_and_a_recursive_call_passes_its_parameter_on():
    # `_tree` returns its base case's record or one it builds from its own recursion: what each field holds
    # comes from the constructions; `self._tree(x, depth - 1)` hands `x` on and says nothing about it
    src = """
        import collections
        import torch
        Info = collections.namedtuple("Info", ["weight", "turning", "diverging"])
        class Sampler:
            def _base(self, x):
                energy = (x * x).sum()
                return Info(energy, False, energy > 10.0)
            def _tree(self, x, depth):
                if depth == 0:
                    return self._base(x)
                half = self._tree(x, depth - 1)
                return Info(half.weight, half.turning, half.diverging)
            def _pick(self, x, flag):
                return self._base(x) if flag else Info(x.sum(), True, x.sum() > 1)
            def sample(self, x):
                x = x.cuda()
                for d in range(10):
                    if self._tree(x, d).diverging:
                        break
                    if self._pick(x, d).diverging:
                        break
    """
    got = findings(src)
    assert ("SYN104", 19, "high") in got and ("SYN104", 21, "high") in got


def test_a_recursive_call_with_a_rebound_parameter_is_still_a_caller():
    # `x` handed on unchanged says nothing; `x = [1, 2]` before the recursion hands on a host list
    src = """
        import torch
        class Walker:
            def _step(self, x, depth):
                probe(x)
                if depth > 0:
                    REBIND
                    self._step(x, depth - 1)
            def run(self, x):
                self._step(x.cuda(), 3)
    """
    assert kinds(src.replace("REBIND", "pass")) == [[TENSOR]]
    assert kinds(src.replace("REBIND", "x = [1, 2]")) == [[None]]

# -- fields read: `.device` with another tensor field, `.to(..., dtype=...)` -------------------------------
def test_a_name_read_for_its_device_and_dtype_is_a_tensor_name_of_the_module():
    # `_grid(t)` reads t.dtype and t.device: the module's other `t` parameters are probably tensors too
    assert findings("""
        import torch
        def _grid(func, y0, t):
            return torch.arange(0, 4, dtype=t.dtype, device=t.device)
        def _interp(t0, t1, y0, y1, t):
            if t == t1:
                return y1
            return y0
    """) == [("SYN104", 6, "low")]


def test_an_object_read_for_its_device_or_with_other_fields_is_not_a_tensor():
    # a context or a trainer: other fields (`ctx.inv_quad`), written fields, or only its device
    assert findings("""
        import torch
        def backward(ctx, grad):
            out = torch.zeros(3, dtype=ctx.dtype, device=ctx.device)
            if ctx.inv_quad:
                out = out + 1
            return out
        def evaluate(trainer, x):
            return x.to(trainer.device)
        def callback(trainer, ctx):
            if trainer == 0 or ctx == 1:
                print(trainer.iter_num)
    """) == []


def test_a_dtype_cast_of_an_unknown_value_is_probably_a_tensor():
    assert kinds("""
        import torch
        def f(x, y, model, device):
            a = x.to(device=device, dtype=y.dtype)
            b = x.to(torch.float64)
            c = x.to(device)
            d = x.to(dtype=torch.float32, device="cpu")
            probe(a, b, c, d)
    """) == [[TENSOR, TENSOR, None, CPU]]


def test_a_method_of_an_object_the_inference_cannot_see_handed_a_tensor_gives_a_probable_tensor():
    # `m.solve(radius)` / `m(p)` in a solver loop; scipy's result class does not make the function numpy's
    assert findings("""
        import torch
        from scipy.optimize import OptimizeResult
        def minimize(fun, x0, subproblem, radius=1.0):
            r = torch.as_tensor(radius, dtype=x0.dtype, device=x0.device)
            m = subproblem(x0.detach(), fun)
            p, hits = m.solve(r)
            reduction = m.fun - m(p)
            if reduction <= 0:
                return OptimizeResult(x=x0)
            items = []
            items.append(p)
            return OptimizeResult(x=p)
    """) == [("SYN202", 5, "high"), ("SYN104", 9, "low")]


def test_a_product_of_two_masks_is_a_mask():
    # `wrong * nonzero` of two boolean tensors is their `&`: reading through it sizes the output on the host
    assert findings("""
        import torch
        def cost(pred, labels, norm_r, c):
            wrong = pred.cuda() != labels.cuda()
            nonzero = norm_r.cuda() != 0
            scale = norm_r.cuda() * 2
            return c[wrong * nonzero], c[scale * nonzero]
    """) == [("SYN302", 7, "high")]


def test_a_while_test_reads_what_the_loop_body_leaves():
    # `actual = -1` before the loop, a tensor from the second test on
    assert findings("""
        import torch
        def solve(x0, n):
            x = x0.detach()
            actual = -1
            k = 0
            while actual <= 0 and k < n:
                actual = (x * 2).sum() - 1
                k += 1
            count = 0
            while count < n:
                count += 1
    """) == [("SYN104", 7, "high")]


# -- methods only a tensor has ---------------------------------------------------------------------
def test_a_name_used_with_a_tensor_only_method_is_a_tensor_and_with_dot_probably_one():
    # `reciprocal`, in-place arithmetic (`mul_`) and the fused ops (`addr`) are no number's, list's,
    # numpy array's or module's; `.dot` is an array's too: in a module whose only array library is
    # torch, probably a tensor
    assert kinds("""
        import torch
        def f(a, b, c, d):
            r = a.reciprocal()
            b.mul_(2)
            v = c.addr(d, d)
            probe(a, b, r, c)
        def g(y, s):
            probe(y, y.dot(s))
    """) == [[TENSOR, TENSOR, TENSOR, TENSOR], [TENSOR, TENSOR]]


def test_a_reciprocal_in_a_scalar_argument_and_a_condition_on_a_dot_product_are_flagged():
    assert findings("""
        import torch
        def update(s, y):
            rho_inv = y.dot(s)
            if rho_inv <= 1e-10:
                return None
            return apply(s, y, rho_inv)
        def apply(s, y, rho_inv):
            rho = rho_inv.reciprocal()
            return torch.addr(torch.eye(s.numel()), s, y, alpha=-rho)
    """) == [("SYN104", 5, "low"), ("SYN109", 10, "high")]


def test_a_probable_tensor_the_body_then_uses_as_only_a_tensor_is_surely_one():
    # `s = a.dot(b)` is probably a tensor (`.dot`: an array's method too); `s.sqrt()` then says it is one
    assert findings("""
        import torch
        def step(a, b, tol: float):
            s = a.dot(b)
            if s.sqrt() < tol:
                return None
            return s
    """) == [("SYN104", 5, "high")]


def test_an_operator_with_a_surely_tensor_side_is_surely_a_tensor():
    # `alpha = r.dot(r) / d.dot(b)`: `r` is surely a tensor (`r.sqrt()`), `d` only probably one (`.dot`);
    # the quotient is surely a tensor, so a condition on what is computed from it is high confidence
    assert findings("""
        import torch
        def solve(r, d, b, radius: float):
            r = r.sqrt()
            alpha = r.dot(r) / d.dot(b)
            if alpha.norm() >= radius:
                return None
            if d.dot(b) <= 0:
                return None
            return alpha
    """) == [("SYN104", 6, "high"), ("SYN104", 8, "low")]


# -- `int` annotations that callers contradict (session 8) ----------------------------------------
SAMPLER = """
    import torch
    class Sampler:
        def __init__(self, n: int):
            self.alphas = torch.linspace(0.9, 0.1, n, device="cuda")
            self.timesteps = torch.arange(n, device="cuda").flip(0)

        def {name}(self, t: int):
            a = self.alphas[t]
            if t > 0:
                a = a * 2
            return a

        def sample(self, x):
            for t in self.timesteps:
                x = x * self.{name}(t)
            return x
"""


def test_a_private_methods_int_parameter_takes_the_tensors_its_callers_pass():
    # `_alpha(self, t: int)` is called only from its module, and every call hands it an element of a 1-D device
    # tensor: the annotation is wrong at run time, `t` is probably a (0-dim: it stands for an int) tensor
    assert findings(SAMPLER.format(name="_alpha")) == [("SYN302", 9, "low"), ("SYN104", 10, "low")]


def test_a_public_methods_int_parameter_is_taken_at_its_word():
    # its users outside the module may hand it Python ints: the module's own calls do not say what they pass
    assert findings(SAMPLER.format(name="alpha")) == []


def test_a_private_functions_int_parameter_stays_a_number_when_a_caller_passes_one():
    assert findings("""
        import torch
        def _pick(table, i: int):
            return table[i]
        def f(x: torch.Tensor, n: int):
            return _pick(x, x.argmax()), _pick(x, n)
    """) == []


def test_a_python_lists_tensor_index_is_read_through_index_whatever_its_rank():
    # `labels[t]` of a list: `__index__` (SYN108, sure: a list takes only an int); a 0-dim index of a list is
    # that too, not SYN302's guess for a value of unknown kind; a host tensor's read waits for nothing
    assert findings("""
        import torch
        def pick(n: int, x: torch.Tensor, device):
            labels = list(range(n))
            names = ["a", "b"] if n else ("c", "d")
            t = torch.randint(n, (1,), device=device)
            h = torch.randint(n, (1,))
            return labels[t], names[x.cuda().argmax()], labels[h], labels[n]
    """) == [("SYN108", 8, "high"), ("SYN108", 8, "high")]


def test_a_property_is_what_its_method_returns():
    # `self.jac_mag` reads the property: a norm (a tensor); `self.size` a Python int
    assert findings("""
        import torch
        from torch.linalg import norm
        class Subproblem:
            def __init__(self, x, closure):
                self._g = closure(x)
                self._g_mag = None
            @property
            def jac_mag(self):
                if self._g_mag is None:
                    self._g_mag = norm(self._g)
                return self._g_mag
            @property
            def size(self):
                return 3
            def solve(self, tolerance: float):
                if self.jac_mag < tolerance:
                    return None
                if self.size < 2:
                    return None
                return tolerance
    """) == [("SYN104", 17, "high")]


def test_a_docstring_returns_section_that_declares_one_tensor():
    from syncscan.lint.docstrings import returns_tensor

    says = {
        "Compute.\n\n    Returns\n    -------\n    torch.Tensor(shape=(n_edges,))\n        Distances.\n": True,
        "Do.\n\n    Returns:\n        Tensor: the boxes\n": True,
        "Do.\n\n    Returns:\n        torch.Tensor of shape (B, N)\n": True,
        "Do.\n\n    Returns\n    -------\n    x : torch.Tensor\n        the x\n": True,
        "Do.\n\n    Returns:\n        `torch.FloatTensor`: the logits.\n\n    Raises:\n        ValueError: never\n": True,
        # a tuple, several entries, prose, an alternative: nothing
        "Do.\n\n    Returns:\n        Tuple[Tensor, Tensor]: a and b\n": False,
        "Do.\n\n    Returns:\n        boxes (Tensor): the boxes\n        scores (Tensor): the scores\n": False,
        "Do.\n\n    Returns:\n        the tensor of boxes\n": False,
        "Do.\n\n    Returns:\n        Tensor or None\n": False,
        "Do.\n\n    Returns:\n        [`BaseModelOutput`] or `tuple(torch.FloatTensor)`\n": False,
        "Do.\n\n    Args:\n        x (Tensor): the x\n": False,
    }
    assert {d: returns_tensor(d) for d in says} == says
