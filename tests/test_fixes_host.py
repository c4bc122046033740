"""Proof that the fixes of the host-sync rules (SYN1xx, SYN2xx) keep results unchanged.

Each fix is applied through the real fixer (`syncscan.lint.fixer.fix_text`, every rule loaded, every
finding selected) to a small function; the original and the fixed function then run on random CPU
tensors (hypothesis, with the edge cases: empty tensors, all-true / all-false conditions, one
element) and must give equal results and leave their inputs equal. For unsafe fixes the inputs stay
within the fix's stated assumption. Each fix must also be idempotent (a second run changes nothing)
and leave no finding of its rule and no new finding behind. The GPU side of the argument (why the
fixed code does not make the host wait) is in each rule's `why` and in shared/reference/sync-ops.md;
these tests check the part a CPU can: the values.
"""

from __future__ import annotations

import math
import textwrap
import warnings
from collections import Counter

import pytest

torch = pytest.importorskip("torch")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from syncscan.lint.engine import lint_source  # noqa: E402
from syncscan.lint.fixer import fix_text  # noqa: E402
from syncscan.lint.registry import all_rules  # noqa: E402

RULES = [r() for r in all_rules()]
MY_RULES = [r for r in all_rules() if r.code.startswith(("SYN1", "SYN2"))]
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# -- applying a fix and the properties every fix must have ----------------------------------------

def _findings(text: str) -> Counter:
    """Findings as (code, source line): line numbers move when a fix removes lines."""
    res = lint_source("snippet.py", text, RULES)
    assert res.error is None, res.error
    lines = text.splitlines()
    return Counter((f.code, lines[f.line - 1].strip()) for f in res.findings)


def apply_fix(src: str, code: str, unsafe: bool, allowed_new=()) -> str:
    """Fix `src` with the real fixer; check that the rule's fix was applied, that a second run changes
    nothing, that no finding of `code` is left and that the fix brought no new finding (other than
    `allowed_new` codes)."""
    src = textwrap.dedent(src)
    ff = fix_text("snippet.py", src, RULES, (), unsafe, lambda f: True)
    assert ff.error is None, ff.error
    assert any(f.code == code for f in ff.applied), f"no {code} fix applied:\n{src}"
    again = fix_text("snippet.py", ff.after, RULES, (), unsafe, lambda f: True)
    assert again.error is None and again.after == ff.after, f"not idempotent:\n{again.diff()}"
    before, after = _findings(src), _findings(ff.after)
    assert not [k for k in after if k[0] == code], f"{code} left after its fix: {after}"
    new = [k for k in after - before if k[0] not in allowed_new]
    assert not new, f"the fix brought new findings: {new}\n{ff.after}"
    if unsafe:  # an unsafe fix is not applied without --unsafe-fixes
        safe_only = fix_text("snippet.py", src, RULES, (), False, lambda f: True)
        assert not any(f.code == code for f in safe_only.applied)
    return ff.after


def load(text: str, name: str = "f"):
    ns: dict = {}
    exec(compile(text, "<snippet>", "exec"), ns)
    return ns[name]


def run(fn, *args):
    """(result, None) or (None, exception type): a fix may keep an error, never change it."""
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - the type is compared
        return None, type(e)


def same(a, b) -> bool:
    """Equal values, dtypes, shapes, devices and requires_grad, NaN equal to NaN, recursively."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        return (a.dtype == b.dtype and a.shape == b.shape and a.device == b.device
                and a.requires_grad == b.requires_grad and torch.equal(a.detach().nan_to_num(), b.detach().nan_to_num())
                and torch.equal(a.detach().isnan(), b.detach().isnan()))
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return type(a) is type(b) and a == b


def clone(args):
    return [a.clone() if isinstance(a, torch.Tensor) else clone(a) if isinstance(a, list) else a for a in args]


def check_equal(f0, f1, *args):
    """Run both on copies of the same inputs: equal results (or the same error), equal inputs after."""
    a0, a1 = clone(args), clone(args)
    (r0, e0), (r1, e1) = run(f0, *a0), run(f1, *a1)
    assert e0 == e1, (e0, e1)
    if e0 is None:
        assert same(r0, r1), (r0, r1)
    assert same(a0, a1), "the inputs were changed differently"


# -- random tensors ------------------------------------------------------------------------------

FLOATS = st.floats(-1e3, 1e3, allow_nan=False, width=32)
DTYPES = st.sampled_from([torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                          torch.bool])
FLOAT_DTYPES = st.sampled_from([torch.float32, torch.float64, torch.float16, torch.bfloat16])


@st.composite
def tensors(draw, dtype=FLOAT_DTYPES, max_len=6, shape=None):
    """1-D (or `shape`) tensors including empty and one-element ones, and all-equal values."""
    dt = draw(dtype) if isinstance(dtype, st.SearchStrategy) else dtype
    n = draw(st.integers(0, max_len)) if shape is None else math.prod(shape)
    kind = draw(st.sampled_from(["random", "zeros", "ones", "neg"]))
    vals = draw(st.lists(FLOATS, min_size=n, max_size=n)) if kind == "random" else \
        [0.0] * n if kind == "zeros" else [1.0] * n if kind == "ones" else [-1.0] * n
    t = torch.tensor(vals, dtype=torch.float64).to(dt)
    return t if shape is None else t.reshape(shape)


# -- every `fixed=` example of these rules is what the fixer writes -------------------------------

EXAMPLES = [(r, i, ex) for r in MY_RULES for i, ex in enumerate(r.bad) if ex.fixed is not None]


@pytest.mark.parametrize("rule,i,ex", EXAMPLES, ids=[f"{r.code}-bad{i}" for r, i, _ in EXAMPLES])
def test_fixed_examples(rule, i, ex):
    src = textwrap.dedent(ex.code)
    ff = fix_text("example.py", src, RULES, (), ex.unsafe, lambda f: f.code == rule.code)
    assert ff.error is None, ff.error
    assert ff.after == textwrap.dedent(ex.fixed), ff.diff()
    if ex.unsafe:
        assert fix_text("example.py", src, RULES, (), False, lambda f: f.code == rule.code).after == src
    assert rule.fix_safety != "none"


def test_every_fixing_rule_is_proven_here():
    """A rule of this group that offers a fix has a `fixed=` example and a test below."""
    proven = {"SYN101", "SYN104", "SYN109", "SYN202", "SYN203", "SYN204", "SYN205", "SYN207"}
    fixing = {r.code for r in MY_RULES if r.fix_safety != "none"}
    assert fixing == proven
    assert {r.code for r, _, _ in EXAMPLES} == proven


# -- SYN101: per-step `.item()` accumulation -> a device sum, read where it is used ---------------

SUM_SRC = """
def f(losses):
    total = 0.0
    log = []
    for i, loss in enumerate(losses):
        total += loss.item()
        if i % 2 == 0:
            log.append(f"{total:.3f}")
    return total, total / max(len(losses), 1), log
"""
SUM_FIXED = """
def f(losses):
    total = 0.0
    log = []
    for i, loss in enumerate(losses):
        total += loss.detach().double()
        if i % 2 == 0:
            log.append(f"{float(total):.3f}")
    return float(total), float(total) / max(len(losses), 1), log
"""
SCALED_SRC = """
def f(losses, sizes):
    running = 0.0
    for loss, n in zip(losses, sizes):
        running += loss.item() * n
        running = running if n else 0.0
    return running
"""
COUNT_SRC = """
def f(preds, labels):
    correct = 0
    for p, y in zip(preds, labels):
        correct += (p == y).sum().item()
    return correct, correct / max(len(preds), 1)
"""


def test_item_sum_fix_text():
    # the fix reads the device sum back with `float(total)` where the host needs it; SYN103 now sees
    # `loss` is a tensor (`loss.detach()`) and reports those deliberate, late reads
    assert apply_fix(SUM_SRC, "SYN101", unsafe=True, allowed_new=("SYN103",)) == textwrap.dedent(SUM_FIXED)


@FAST
@given(st.lists(tensors(dtype=DTYPES, shape=(1,)), max_size=8), st.booleans())
def test_item_sum_fix_is_bit_exact(losses, zero_dim):
    """Float64 device sums of the losses equal Python's float sums of `.item()` exactly (0 steps too)."""
    losses = [t.reshape(()) if zero_dim else t for t in losses]
    f0, f1 = load(textwrap.dedent(SUM_SRC)), load(apply_fix(SUM_SRC, "SYN101", unsafe=True, allowed_new=("SYN103",)))
    check_equal(f0, f1, losses)


def test_item_sum_fix_refuses_other_writes():
    # `running = running if n else 0.0` writes the name another way: no fix, only the report
    src = textwrap.dedent(SCALED_SRC)
    ff = fix_text("snippet.py", src, RULES, (), True, lambda f: True)
    assert ff.after == src and any(f.code == "SYN101" for f in lint_source("s.py", src, RULES).findings)


@FAST
@given(st.lists(st.tuples(tensors(dtype=st.sampled_from([torch.int64, torch.bool, torch.float32]), max_len=5),
                          st.integers(0, 3)), max_size=6))
def test_item_count_fix_keeps_ints(pairs):
    preds = [p for p, _ in pairs]
    labels = [(p.to(torch.int64) % 2).to(p.dtype) if k else p.clone() for p, k in pairs]
    f0, f1 = load(textwrap.dedent(COUNT_SRC)), load(apply_fix(COUNT_SRC, "SYN101", unsafe=True))
    check_equal(f0, f1, preds, labels)


# -- SYN104: `if cond: y = expr` -> `y = torch.where(cond, expr, y)` -------------------------------

WHERE_CASES = [
    ("x.sum() > 0", "y * 2"),
    ("x.isnan().any()", "torch.zeros_like(y)"),
    ("(x > 0).all()", "y.clamp(min=0) - 1"),
    ("x.abs().max() < 10", "y + x.mean()"),
    ("torch.isfinite(x).all()", "y.softmax(-1)"),
]


def _where_src(cond: str, expr: str) -> str:
    return f"""
import torch
def f(x: torch.Tensor, y: torch.Tensor):
    y = y + 0
    if {cond}:
        y = {expr}
    return y
"""


@pytest.mark.parametrize("cond,expr", WHERE_CASES)
def test_where_fix_text(cond, expr):
    fixed = apply_fix(_where_src(cond, expr), "SYN104", unsafe=True)
    assert f"y = torch.where({cond}, {expr}, y)" in fixed


@FAST
@given(st.sampled_from(WHERE_CASES), tensors(dtype=st.sampled_from([torch.float32, torch.float64])),
       tensors(dtype=st.just(torch.float32), shape=(3,)), st.booleans())
def test_where_fix_same_values_and_grads(case, x, y, nan):
    """Both branches, empty `x` (sum 0, all() true, max() an error in both), NaN conditions; the
    gradient reaching `y` is the same (the assumption: `expr` is finite)."""
    if nan and x.numel():
        x = x.clone()
        x[0] = float("nan")
    text = _where_src(*case)
    f0, f1 = load(textwrap.dedent(text)), load(apply_fix(text, "SYN104", unsafe=True))
    check_equal(f0, f1, x, y)
    r0, e0 = run(f0, x, y)
    if e0 is None and torch.isfinite(r0).all():
        y0, y1 = y.clone().requires_grad_(), y.clone().requires_grad_()
        out0, out1 = f0(x, y0), f1(x, y1)
        out1.sum().backward()
        if out0.requires_grad:
            out0.sum().backward()
            assert torch.equal(y0.grad, y1.grad)
        else:  # the taken branch did not use `y`: now a zero gradient instead of none (stated)
            assert not y1.grad.any()


def test_where_fix_not_offered_outside_its_shape():
    src = textwrap.dedent("""
    import torch
    def f(x: torch.Tensor, y: torch.Tensor, out: list):
        if x.sum() > 0:
            out.append(y)
        if x.sum() > 1:
            y = torch.rand_like(y)
        if x.sum() > 2:
            y = y * 2
        else:
            y = y * 3
        return y
    """)
    ff = fix_text("snippet.py", src, RULES, (), True, lambda f: True)
    assert not [f for f in ff.applied if f.code == "SYN104"], ff.diff()


# -- SYN202: a constant copied to the device -> filled there -------------------------------------

LITERALS = ["0.0", "-1", "2", "True", "False", "1e-6", "0.1", "-2.5", "float('inf')", "float('nan')", "math.pi",
            "1 / 3", "2**40"]
KWARGS = ["", ", dtype=torch.float16", ", dtype=torch.int32", ", dtype=torch.float64", ", dtype=torch.bool",
          ", requires_grad=True"]


def _const_src(value: str, kw: str) -> str:
    return f"""
import math
import torch
def f(x: torch.Tensor):
    a = torch.tensor({value}, device=x.device{kw})
    b = torch.as_tensor([{value}], device=x.device{kw if "requires_grad" not in kw else ""})
    c = x.new_tensor({value}{kw})
    return a, b, c
"""


@pytest.mark.parametrize("kw", KWARGS)
@pytest.mark.parametrize("value", LITERALS)
def test_constant_fill_fix(value, kw):
    src = _const_src(value, kw)
    fixed = apply_fix(src, "SYN202", unsafe=False)
    assert "torch.full((), " in fixed and "x.new_full((), " in fixed
    assert "torch.full((1,), " in fixed
    f0, f1 = load(textwrap.dedent(src)), load(fixed)
    for dt in (torch.float32, torch.int64, torch.bfloat16, torch.bool):
        check_equal(f0, f1, torch.zeros(2, dtype=dt))  # values, dtypes, requires_grad, or the same error


# -- SYN203: `torch.tensor([t0, t1])` of tensors -> `torch.stack([...]).detach()` -------------------

STACK_SRC = """
import torch
def f(a: torch.Tensor, b: torch.Tensor):
    return torch.tensor([a.sum(), b.amax()]{kw})
"""


@FAST
@given(tensors(dtype=DTYPES), tensors(dtype=DTYPES, max_len=4),
       st.sampled_from(["", ", dtype=torch.float64", ", device=a.device", ", dtype=torch.int32, device=b.device"]),
       st.booleans())
def test_stack_fix(a, b, kw, grad):
    """0-dim elements of any dtypes (the dtype is the same promotion), gradients dropped as before,
    `amax` of an empty tensor an error in both. (On a GPU the result now stays on the device: the
    stated assumption.)"""
    if grad and a.dtype.is_floating_point:
        a = a.clone().requires_grad_()
    src = STACK_SRC.format(kw=kw)
    f0, f1 = load(textwrap.dedent(src)), load(apply_fix(src, "SYN203", unsafe=True))
    # the stated exception: torch.tensor refuses floating elements with an integer dtype=, stack converts
    assume(run(f0, a, b)[1] is not TypeError)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.tensor warns when it reads a tensor that requires grad
        check_equal(f0, f1, a, b)


def test_stack_fix_keeps_an_explicit_host_result():
    src = textwrap.dedent(STACK_SRC.format(kw=", device='cpu'"))
    ff = fix_text("snippet.py", src, RULES, (), True, lambda f: True)
    assert ff.after == src and any(f.code == "SYN203" for f in lint_source("s.py", src, RULES).findings)


# -- SYN204 / SYN205: pinned batches and non-blocking copies -------------------------------------

LOADER_SRC = """
import torch
from torch.utils.data import DataLoader, TensorDataset
def f(xs, ys, device):
    loader = DataLoader(TensorDataset(xs, ys), batch_size=3)
    out = []
    for x, y in loader:
        x = x.to(device)
        out.append(x * 2 + y.to(device).unsqueeze(-1))
    return out
"""


@FAST
@given(st.integers(0, 7), st.integers(1, 3))
def test_pin_memory_and_non_blocking_fixes(n, width):
    """The safe fixes, in turn: `pin_memory=True` (SYN205), then `non_blocking=True` on the copies
    of the now pinned batches (SYN204). Batches and results are equal; on a CPU machine the copies
    are no-ops, which is all a CPU can check (the argument for the GPU is in SYN204's fix message: the
    copy is ordered on the stream before any use, and the pinned batch is not written to)."""
    xs = torch.arange(n * width, dtype=torch.float32).reshape(n, width)
    ys = torch.arange(n, dtype=torch.float32)
    src = textwrap.dedent(LOADER_SRC)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pin_memory without an accelerator warns and does nothing
        fixed = fix_text("snippet.py", src, RULES, (), False, lambda f: True)
        assert fixed.error is None
        assert {f.code for f in fixed.applied} == {"SYN204", "SYN205"}
        assert "pin_memory=torch.cuda.is_available()" in fixed.after and fixed.after.count("non_blocking=True") == 2
        assert fix_text("snippet.py", fixed.after, RULES, (), False, lambda f: True).after == fixed.after
        after = _findings(fixed.after)
        assert not [k for k in after if k[0] in ("SYN204", "SYN205")]
        assert not [k for k in after - _findings(src)]
        check_equal(load(src), load(fixed.after), xs, ys, "cpu")


def test_non_blocking_not_added_when_the_batch_is_written():
    src = textwrap.dedent("""
    import torch
    from torch.utils.data import DataLoader
    def f(ds, device):
        loader = DataLoader(ds, batch_size=3, pin_memory=True)
        out = []
        for x in loader:
            out.append(x.to(device))
            x.mul_(2)  # the pinned batch changes after the copy was queued: a race with non_blocking
        return out
    """)
    ff = fix_text("snippet.py", src, RULES, (), True, lambda f: True)
    assert "non_blocking=True" not in ff.after


# -- SYN207: a Python number written through an index tensor -> a 0-dim device value ---------------

INDEX_SRC = """
import torch
def f(x: torch.Tensor, scores: torch.Tensor):
    idx = scores.argsort()[:3]
    x[idx] = {v}
    x[idx, ...] = {v}
    return x
"""


@pytest.mark.parametrize("v", ["0", "-1", "1.5", "True", "-float('inf')", "300", "1e10", "0.1"])
def test_index_fill_fix_text(v):
    fixed = apply_fix(INDEX_SRC.format(v=v), "SYN207", unsafe=False)
    assert f"x[idx] = torch.full((), {v}, dtype=x.dtype, device=x.device)" in fixed


@FAST
@given(st.sampled_from(["0", "-1", "1.5", "True", "-float('inf')", "300", "1e10", "0.1"]), DTYPES,
       st.integers(0, 6), st.integers(1, 3), st.data())
def test_index_fill_fix_same_writes(v, dtype, n, cols, data):
    """Same value conversion into every dtype (including the overflow errors: 300 into an int8
    tensor), duplicate and negative indices, fewer rows than indices, in place on `x`."""
    x = torch.zeros(n, cols, dtype=dtype) if n else torch.zeros(0, cols, dtype=dtype)
    scores = torch.tensor(data.draw(st.lists(FLOATS, min_size=n, max_size=n)), dtype=torch.float32)
    src = INDEX_SRC.format(v=v)
    f0, f1 = load(textwrap.dedent(src)), load(apply_fix(src, "SYN207", unsafe=False))
    check_equal(f0, f1, x, scores)


@FAST
@given(st.sampled_from([torch.int8, torch.uint8, torch.float16, torch.int64]), st.lists(st.integers(-4, 3), max_size=6))
def test_index_fill_fix_any_index_shape(dtype, raw):
    """The index itself is untouched by the fix: negative, repeated, 2-D and out-of-range indices
    behave (or fail) as before."""
    src = """
import torch
def f(x: torch.Tensor, idx_src: torch.Tensor):
    idx = idx_src.long()
    x[idx] = 7
    return x
"""
    idx_src = torch.tensor(raw, dtype=torch.float32)
    if len(raw) % 2 == 0:
        idx_src = idx_src.reshape(-1, 2)  # a 2-D index (and (0, 2) when empty)
    x = torch.zeros(4, dtype=dtype)
    f0, f1 = load(textwrap.dedent(src)), load(apply_fix(src, "SYN207", unsafe=False))
    check_equal(f0, f1, x, idx_src)


# -- SYN109: a 0-dim tensor in a `Scalar` argument -> the arithmetic on the device ------------------

SCALAR_ARG_SRC = """
import torch
def f(d: torch.Tensor, m: torch.Tensor, u: torch.Tensor, v: torch.Tensor, w: torch.Tensor):
    a = w.sum()
    r = torch.addr(m, u, v, alpha=-a)
    q = torch.addmm(m, m, m, beta=1 - a, alpha=a)
    c = torch.addcmul(u, u, v, value=a)
    d.add_(u, alpha=a - 1)
    return r, q, c, d
"""


@FAST
@given(st.integers(0, 4), st.lists(FLOATS, min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_scalar_argument_fix_equal_up_to_rounding(n, ws, rnd):
    """The fused op scaled inside its kernel; the fix scales first: equal up to rounding (the fix's
    stated assumption), in float64, for finite values; the in-place `add_` writes the same values."""
    fixed = apply_fix(SCALAR_ARG_SRC, "SYN109", unsafe=True)
    assert "torch.outer(u, v)" in fixed and "d.add_(u * (a - 1))" in fixed
    f0, f1 = load(textwrap.dedent(SCALAR_ARG_SRC)), load(fixed)
    g = torch.Generator().manual_seed(rnd.randint(0, 2**31))
    m = torch.randn(n, n, generator=g, dtype=torch.float64)
    u, v, d = (torch.randn(n, generator=g, dtype=torch.float64) for _ in range(3))
    w = torch.tensor(ws, dtype=torch.float64) / 100
    d0, d1 = d.clone(), d.clone()
    r0, r1 = f0(d0, m, u, v, w), f1(d1, m, u, v, w)
    for x, y in zip(r0, r1):
        assert x.shape == y.shape and x.dtype == y.dtype and torch.allclose(x, y, rtol=1e-9, atol=1e-9)
    assert torch.allclose(d0, d1, rtol=1e-9, atol=1e-9)
