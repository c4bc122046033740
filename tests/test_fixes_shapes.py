"""Proof that the fixes of SYN301-SYN308 and SYN401-SYN406 keep results unchanged.

Each test fixes a small function through the real fixer (every rule loaded, as `syncscan lint
--fix` does), then runs the original and the fixed function on the same random CPU tensors
(hypothesis, with the edge cases: empty tensors, all- and none-selected masks, a single label) and
compares what they return and what they did to their inputs in place. Unsafe fixes are exercised
within the assumption each rule states (e.g. the mask has the tensor's shape). Every fix must also
be idempotent, leave no finding of its rule, and add no finding of any rule.
"""

from __future__ import annotations

import textwrap
from collections import Counter

import pytest

torch = pytest.importorskip("torch")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from syncscan.lint.engine import lint_source  # noqa: E402
from syncscan.lint.fixer import fix_text  # noqa: E402
from syncscan.lint.registry import all_rules  # noqa: E402

RULES = [r() for r in all_rules()]
MINE = ("SYN30", "SYN40", "SYN50")
EXAMPLES = settings(max_examples=30, deadline=None)


def _fix(src: str, unsafe: bool):
    return fix_text("snippet.py", src, RULES, (), unsafe, lambda f: True)


def _codes(src: str) -> Counter:
    res = lint_source("snippet.py", src, RULES)
    assert res.error is None, res.error
    return Counter(f.code for f in res.findings)


def _load(src: str, name: str) -> dict:
    ns: dict = {"__name__": name}
    exec(compile(src, f"{name}.py", "exec"), ns)
    return ns


class Fixed:
    """The original and the fixed version of a snippet, checked for the fixer's own promises.
    Built on first use, so a broken fix fails its own tests, not the collection of the file."""

    def __init__(self, src: str, codes: str, unsafe: bool = True, expect: tuple[str, ...] = ()):
        self.src = textwrap.dedent(src).lstrip("\n")
        self._args = (codes, unsafe, expect)
        self._built = False
        self._error = None

    def __getattr__(self, name):  # fixed / old / new, once built
        if name.startswith("_"):
            raise AttributeError(name)
        self._ensure()
        return self.__dict__[name]

    def _ensure(self):
        if not self._built:
            self._built = True
            try:
                self._build(*self._args)
            except AssertionError as e:
                self._error = e
        if self._error is not None:
            raise self._error

    def _build(self, codes, unsafe, expect):
        out = _fix(self.src, unsafe)
        assert out.error is None, out.error
        self.fixed = out.after
        before, after = _codes(self.src), _codes(self.fixed)
        for code in codes.split():
            assert any(f.code == code for f in out.applied), f"no {code} fix applied:\n{self.src}"
            assert after[code] == 0, f"{code} still reported after its fix:\n{self.fixed}"
        for text in expect:  # the rewrite has the intended form
            assert text in self.fixed, f"{text!r} not in\n{self.fixed}"
        assert _fix(self.fixed, unsafe).after == self.fixed, "fixing twice changed the code again"
        assert not (after - before), f"new findings {dict(after - before)} after the fix:\n{self.fixed}"
        self.old = _load(self.src, "original")
        self.new = _load(self.fixed, "fixed")

    def run(self, name: str, *args, exact: bool = True, grads: tuple = (), **tol):
        """Call both versions on copies of the arguments; compare the results, the arguments after
        the call (in-place effects) and, for the arguments listed in `grads`, their gradients."""
        self._ensure()
        a0 = [_copy(a, i in grads) for i, a in enumerate(args)]
        a1 = [_copy(a, i in grads) for i, a in enumerate(args)]
        r0 = self.old[name](*a0)
        r1 = self.new[name](*a1)
        _same(r1, r0, exact, **tol)
        for x1, x0 in zip(a1, a0):
            _same(x1, x0, exact, **tol)
        if grads and isinstance(r0, torch.Tensor) and r0.requires_grad:
            r0.sum().backward()
            r1.sum().backward()
            for i in grads:
                _same(a1[i].grad, a0[i].grad, exact, **tol)
        return r0, r1


def _copy(a, grad=False):
    if isinstance(a, torch.Tensor):
        c = a.clone()
        return c.requires_grad_() if grad else c
    return a


def _same(got, want, exact=True, **tol):
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, exact, **tol)
        return
    if not isinstance(want, torch.Tensor):
        assert got == want or (want != want and got != got)
        return
    assert isinstance(got, torch.Tensor) and got.shape == want.shape and got.dtype == want.dtype, (got, want)
    if exact:
        assert torch.equal(got.nan_to_num(7.25), want.nan_to_num(7.25)) and torch.equal(got.isnan(), want.isnan()), \
            (got, want)
    else:
        # the tolerance of the precision the result was computed in, when the code lowered it
        # (`F.binary_cross_entropy_with_logits(p64, t.float())` gives float32: summed in another
        # order, it differs in float32's last bits)
        lowered = TOL.get(want.dtype) if want.dtype in TOL and tol.get("rtol", 0) < TOL[want.dtype]["rtol"] else None
        torch.testing.assert_close(got, want, equal_nan=True, **(lowered or tol))


# -- inputs ---------------------------------------------------------------------------------------

shapes = st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple)
seeds = st.integers(0, 2 ** 31 - 1)
mask_kinds = st.sampled_from(["random", "none", "all"])


def gen(seed):
    return torch.Generator().manual_seed(seed)


def mask_of(shape, kind, g):
    if kind == "none":
        return torch.zeros(shape, dtype=torch.bool)
    if kind == "all":
        return torch.ones(shape, dtype=torch.bool)
    return torch.rand(shape, generator=g) > 0.5


# -- SYN301: nonzero + index assignment -> masked_fill_ --------------------------------------------

NONZERO = Fixed("""
    import torch
    import torch.nn as nn

    class Loss(nn.Module):
        def __init__(self, num_classes: int = 5, ignore_val: int = -1):
            super().__init__()
            self.num_classes = num_classes
            self.ignore_val = ignore_val

        def forward(self, pred, target):
            inds = torch.nonzero(target == self.num_classes - 1, as_tuple=True)
            target[inds] = self.ignore_val
            return pred.sum() + target.sum()

    def run(pred, target):
        return Loss()(pred, target)

    def inline(x: torch.Tensor, labels: torch.Tensor):
        x[torch.nonzero(labels > 0, as_tuple=True)] = 0.5
        return x

    def method_form(x: torch.Tensor):
        x[((x == 1) | (x == 3)).nonzero(as_tuple=True)] = -2
        return x

    def where_form(x: torch.Tensor, cond: torch.Tensor):
        idx = torch.where(cond)
        x[idx] = 7
        return x

    def whole_rows(attention_mask: torch.Tensor):
        attention_mask[torch.where(attention_mask.sum(-1) == attention_mask.shape[-1])] = False
        return attention_mask

    def numeric_cond(x: torch.Tensor, weights: torch.Tensor):
        inds = weights.nonzero(as_tuple=True)
        x[inds] = -3
        return x
""", "SYN301", expect=("x.masked_fill_(weights != 0, -3)",
                       "attention_mask.masked_fill_((attention_mask.sum(-1) == attention_mask.shape[-1]).unsqueeze(-1), False)",
                       "target.masked_fill_(target == self.num_classes - 1, self.ignore_val)",
                       "x.masked_fill_(labels > 0, 0.5)", "x.masked_fill_((x == 1) | (x == 3), -2)",
                       "x.masked_fill_(cond != 0, 7)"))


def test_nonzero_fix_of_the_fixture_form_is_safe():
    src = NONZERO.src
    safe = _fix(src, unsafe=False).after
    assert "target.masked_fill_(target == self.num_classes - 1, self.ignore_val)" in safe
    assert "x.masked_fill_((x == 1) | (x == 3), -2)" in safe
    assert "labels > 0, as_tuple=True" in safe  # another tensor's mask: only with --unsafe-fixes


@EXAMPLES
@given(shape=shapes, seed=seeds, dtype=st.sampled_from([torch.long, torch.float32, torch.int32]))
def test_nonzero_assign_becomes_masked_fill(shape, seed, dtype):
    g = gen(seed)
    target = torch.randint(-1, 6, shape, generator=g).to(dtype)
    NONZERO.run("run", torch.randn(shape, generator=g), target)
    NONZERO.run("method_form", target)
    labels = torch.randint(-1, 2, shape, generator=g)
    NONZERO.run("inline", target, labels)  # a float fill into an integer tensor truncates in both
    NONZERO.run("where_form", target, labels > 0)
    weights = torch.randn(shape, generator=g).masked_fill(labels > 0, 0.0)
    weights.view(-1)[:1] = float("nan")  # nonzero counts NaN as non-zero: so does `!= 0`
    NONZERO.run("numeric_cond", target, weights)
    rows = torch.rand(shape + (3,), generator=g) > 0.3
    NONZERO.run("whole_rows", rows)  # whole rows that are all True become False


def test_masks_of_another_shape_are_reported_not_rewritten():
    src = textwrap.dedent("""
        import torch
        def f(x: torch.Tensor, y: torch.Tensor, labels: torch.Tensor):
            x[torch.where(x.any(dim=1))] = 0.0
            keep = labels.sum(-1) > 0
            return y[keep].sum()
    """)
    assert _codes(src)["SYN301"] == 1 and _codes(src)["SYN302"] == 1
    assert not {f.code for f in _fix(src, unsafe=True).applied} & {"SYN301", "SYN302"}


# -- SYN305: unique used for its count -> sort and count; if -> torch.where -------------------------

UNIQUE = Fixed("""
    import torch
    import torch.nn.functional as F

    def fixture_form(x: torch.Tensor, target: torch.Tensor):
        unique_labels = torch.unique(target)
        loss = (x ** 2).mean()
        if unique_labels.numel() < 2:
            loss = 0. * loss
        return loss

    def with_else(x: torch.Tensor, t: torch.Tensor):
        n = len(torch.unique(t, sorted=False))
        scale = x.sum()
        if n >= 3:
            scale = scale * 2
        else:
            scale = scale - 1
        return scale

    def consecutive(x: torch.Tensor, t: torch.Tensor):
        out = torch.relu(x)
        if t.unique_consecutive().shape[0] == 1:
            out = out * 0
        return out

    def size_and_arithmetic(x: torch.Tensor, t: torch.Tensor):
        u = t.unique()
        loss = x.abs().sum()
        if u.size(0) > 2:
            loss = loss + 1
        return loss / u.numel()

    def early_return(x: torch.Tensor, t: torch.Tensor):
        labels = torch.unique(t)
        n = labels.numel()
        loss = (x - 1).pow(2).sum()
        if n < 2:
            return 0. * loss
        return loss

    def augmented(x: torch.Tensor, t: torch.Tensor):
        loss = x.sum()
        if len(t.unique()) <= 1:
            loss *= 0.5
        return loss

    def through_a_flag(x: torch.Tensor, lbl: torch.Tensor):
        labels = torch.unique(lbl)
        few = labels.numel() < 2
        loss = x.sum()
        if few:
            loss = loss * 0
        return loss
""", "SYN305", expect=("few = num_labels < 2", "loss = torch.where(few, loss * 0, loss)","torch.where(num_unique_labels < 2, 0. * loss, loss)",
                       "scale = torch.where(n >= 3, scale * 2, scale - 1)", "return torch.where(n < 2, 0. * loss, loss)",
                       "loss = torch.where(num_unique <= 1, loss * 0.5, loss)"))


values = st.lists(st.integers(-3, 3), min_size=0, max_size=12)


@EXAMPLES
@given(vals=values, seed=seeds, as_float=st.booleans(), nan=st.booleans())
def test_unique_count_becomes_sort_and_count(vals, seed, as_float, nan):
    t = torch.tensor(vals, dtype=torch.float32 if as_float else torch.long)
    if as_float and nan and len(vals) > 1:
        t[::2] = float("nan")  # unique counts each NaN once: so does sort-and-count
    t = t.reshape(1, -1) if len(vals) % 2 else t
    x = torch.randn(3, generator=gen(seed))
    for name in ("fixture_form", "with_else", "consecutive", "size_and_arithmetic", "early_return", "augmented",
                 "through_a_flag"):
        UNIQUE.run(name, x, t, grads=(0,))


@pytest.mark.parametrize("label", [0, 4])
def test_unique_one_label_only_zeroes_the_loss(label):
    r0, r1 = UNIQUE.run("fixture_form", torch.randn(5), torch.full((2, 3), label), grads=(0,))
    assert r1.item() == 0.0


# -- SYN306: masked cross-entropy -> ignore_index -----------------------------------------------------

MASKED_CE = Fixed("""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    def fixture_form(pred: torch.Tensor, target: torch.Tensor, ignore_val: int):
        mask = target != ignore_val
        pred = pred.permute(0, 2, 3, 1)
        return F.cross_entropy(pred[mask], target[mask])

    class WeightedSum(nn.Module):
        def __init__(self, w):
            super().__init__()
            self.criterion = nn.CrossEntropyLoss(weight=w, reduction="sum", ignore_index=-7)

        def forward(self, logits, labels, keep_mask):
            return self.criterion(logits[keep_mask], labels[keep_mask])

    def module(w, logits, labels, m):
        return WeightedSum(w)(logits, labels, m)

    def split(logits: torch.Tensor, labels: torch.Tensor, attention_mask: torch.Tensor, num_labels: int):
        loss_fct = nn.CrossEntropyLoss(label_smoothing=0.1)
        active_loss = attention_mask.view(-1) == 1
        active_logits = logits.view(-1, num_labels)[active_loss]
        active_labels = labels.view(-1)[active_loss]
        return loss_fct(active_logits, active_labels)

    def nll(logp: torch.Tensor, t: torch.Tensor, w: torch.Tensor):
        return F.nll_loss(logp[t != 0].float(), t[t != 0], weight=w, ignore_index=-1)

    def split_permuted(pred: torch.Tensor, target: torch.Tensor, ignore_val: int):
        mask = target != ignore_val
        pred = pred.permute(0, 2, 3, 1)
        target = target[mask]
        pred = pred[mask]
        return nn.CrossEntropyLoss()(pred, target)
""", "SYN306", expect=("F.cross_entropy(pred.movedim(-1, 1), target.masked_fill(~mask, -100), ignore_index=-100)",
                       "self.criterion(logits.movedim(-1, 1), labels.masked_fill(~keep_mask, -7))",
                       "loss_fct(logits.view(-1, num_labels), labels.view(-1).masked_fill(~active_loss, -100))",
                       "nn.CrossEntropyLoss()(pred.movedim(-1, 1), target.masked_fill(~mask, -100))"))

C = 4


@EXAMPLES
@given(seed=seeds, b=st.integers(0, 3), h=st.integers(1, 4), w=st.integers(1, 4), kind=mask_kinds)
def test_masked_cross_entropy_becomes_ignore_index(seed, b, h, w, kind):
    g = gen(seed)
    logits = torch.randn(b, C, h, w, generator=g)
    labels = torch.randint(-1, C, (b, h, w), generator=g)
    if kind == "none":
        labels.fill_(-1)  # everything masked out: nan (mean) in both
    elif kind == "all":
        labels.clamp_(min=0)
    MASKED_CE.run("fixture_form", logits, labels, -1, exact=False, grads=(0,), rtol=1e-5, atol=1e-6)
    MASKED_CE.run("split_permuted", logits, labels, -1, exact=False, grads=(0,), rtol=1e-5, atol=1e-6)

    flat = torch.randn(b, h, C, generator=g)
    t = torch.randint(0, C, (b, h), generator=g)
    t[..., :1] = -100  # already ignored by the original call's default ignore_index
    m = mask_of((b, h), kind, g)
    wts = torch.rand(C, generator=g) + 0.1
    MASKED_CE.run("module", wts, flat, t.masked_fill(t == -100, -7), m, exact=False, grads=(1,), rtol=1e-5,
                  atol=1e-5)
    MASKED_CE.run("split", flat, t, m.long(), C, exact=False, grads=(0,), rtol=1e-5, atol=1e-6)
    logp = torch.log_softmax(flat.double(), -1)
    MASKED_CE.run("nll", logp, torch.randint(-1, C, (b, h), generator=g), wts, exact=False, grads=(0,),
                  rtol=1e-5, atol=1e-6)


# -- masks through variables and into elementwise losses (issue 13) --------------------------------
# The two patterns that flow through variables, and the losses that a shape-keeping `torch.where`
# alone would change (BCE, focal): fixed per element with the same normalisation. Inputs: empty,
# batched, all / none selected, NaN (selected: NaN in both; masked out: equal values, and the
# gradients compared where the masked-out inputs are finite, as the fixes' assumption says), fp16.

FLOW = Fixed("""
    import torch
    import torch.nn.functional as F
    from torchvision.ops import sigmoid_focal_loss

    def split_reshape(flat: torch.Tensor, lbl: torch.Tensor, n: int):
        keep = lbl != -1
        picked = flat[keep]
        tgt = lbl[keep]
        return F.cross_entropy(picked.reshape(-1, n), tgt)

    def bce_mean(pred: torch.Tensor, tgt: torch.Tensor):
        m = tgt >= 0
        return F.binary_cross_entropy_with_logits(pred[m], tgt[m])

    def bce_split_sum(pred: torch.Tensor, tgt: torch.Tensor):
        m = tgt >= 0
        p = pred[m]
        t = tgt[m]
        return 2 * F.binary_cross_entropy_with_logits(p, t.float(), reduction="sum")

    def focal(pred: torch.Tensor, tgt: torch.Tensor, m: torch.Tensor):
        return sigmoid_focal_loss(pred[m], tgt[m], gamma=2.0, reduction="mean")

    def mse(a: torch.Tensor, b: torch.Tensor, m: torch.Tensor):
        return F.mse_loss(a[m], b[m], reduction="sum")

    def mean_through_variable(x: torch.Tensor, m: torch.Tensor):
        sel = x[m]
        return sel.mean()
""", "SYN302 SYN306", expect=(
    "F.cross_entropy(flat.reshape(-1, n), lbl.masked_fill(~keep, -100).reshape(-1), ignore_index=-100)",
    'torch.where(m, F.binary_cross_entropy_with_logits(pred, tgt, reduction="none"), 0).sum() / m.sum()',
    '2 * torch.where(m, F.binary_cross_entropy_with_logits(pred, tgt.float(), reduction="none"), 0).sum()',
    'torch.where(m, sigmoid_focal_loss(pred, tgt, gamma=2.0, reduction="none"), 0).sum() / m.sum()',
    "torch.where(m, x, 0).sum() / m.sum()"))

TOL = {torch.float16: dict(rtol=2e-2, atol=2e-2), torch.float32: dict(rtol=1e-4, atol=1e-5),
       torch.float64: dict(rtol=1e-9, atol=1e-10)}


def _nan_out(x, m, g):
    """x with NaN at one masked-out element (when there is one)."""
    out = x.clone()
    free = (~m).nonzero()
    if len(free):
        out[tuple(free[torch.randint(len(free), (1,), generator=g)][0])] = float("nan")
    return out


@EXAMPLES
@given(seed=seeds, b=st.integers(0, 3), h=st.integers(1, 4), kind=mask_kinds,
       dtype=st.sampled_from([torch.float32, torch.float64, torch.float16]), nan=st.sampled_from(["", "in", "out"]))
def test_masks_through_variables_and_elementwise_losses(seed, b, h, kind, dtype, nan):
    g = gen(seed)
    tol = TOL[dtype]
    m = mask_of((b, h), kind, g)
    grads = (0,) if nan != "out" else ()

    def spoil(x):  # NaN inside the selection (NaN in both results) or outside it (dropped in both)
        if nan == "in" and m.any():
            x = x.clone()
            x[tuple(m.nonzero()[0].tolist())] = float("nan")
        return _nan_out(x, m, g) if nan == "out" else x

    flat = spoil(torch.randn(b, h, C, generator=g).to(dtype)) if nan != "in" else \
        torch.randn(b, h, C, generator=g).to(dtype)
    lbl = torch.randint(0, C, (b, h), generator=g).masked_fill(~m, -1)
    FLOW.run("split_reshape", flat, lbl, C, exact=False, grads=grads, **tol)

    pred = spoil(torch.randn(b, h, generator=g).to(dtype))
    tgt = torch.rand(b, h, generator=g).to(dtype).masked_fill(~m, -1.0)
    FLOW.run("bce_mean", pred, tgt, exact=False, grads=grads, **tol)
    FLOW.run("bce_split_sum", pred, tgt, exact=False, grads=grads, **tol)
    FLOW.run("focal", pred, tgt.clamp(min=0), m, exact=False, grads=grads, **tol)
    FLOW.run("mse", pred, tgt, m, exact=False, grads=grads, **tol)
    FLOW.run("mean_through_variable", pred, m, exact=False, grads=grads, **tol)


def _fixed_and_findings(src):
    src = textwrap.dedent(src)
    out = _fix(src, unsafe=True)
    findings = lint_source("snippet.py", src, RULES).findings
    return out, findings


def test_a_mask_rebound_on_some_path_is_not_fixed():
    """The issue's breakage: `valid` rebound inside an `if` to indices; the finding stays, with a hint."""
    out, findings = _fixed_and_findings("""
        import torch
        import torch.nn.functional as F

        def loss(logits, targets, compact: bool):
            valid = targets != -100
            if compact:
                valid = torch.nonzero(valid).squeeze(1)
            return F.cross_entropy(logits[valid], targets[valid])
    """)
    assert not any(f.code == "SYN306" for f in out.applied)
    f = next(f for f in findings if f.code == "SYN306")
    assert f.fix is None and "rebound" not in f.suggestion and "different paths" in f.suggestion
    assert "indices, not a mask" in f.suggestion and "masked_fill" not in f.suggestion


def test_a_mask_of_another_kind_in_each_branch_is_not_fixed():
    out, findings = _fixed_and_findings("""
        import torch

        def loss(x, labels, by_row: bool):
            if by_row:
                m = labels.any(-1, keepdim=True)
            else:
                m = labels > 0
            return x[m].sum()
    """)
    assert not out.applied
    f = next(f for f in findings if f.code == "SYN302")
    assert f.fix is None and "different paths" in f.suggestion


def test_an_assignment_through_a_rebound_mask_is_not_fixed():
    out, findings = _fixed_and_findings("""
        import torch

        def forward(self, x: torch.Tensor, y: torch.Tensor, m: torch.Tensor, flag: bool):
            if flag:
                m = m.nonzero().squeeze(1)
            x[m] = y[m]
            return x
    """)
    assert not out.applied
    assert [f.fix for f in findings if f.code in ("SYN302", "SYN303")] == [None, None]


def test_unknown_consumer_gets_advice_without_a_snippet():
    _, findings = _fixed_and_findings("""
        import torch

        def step(feats, scores, head):
            keep = scores > 0.5
            return head(feats[keep])
    """)
    f = next(f for f in findings if f.code == "SYN302")
    assert f.fix is None and "torch.where(keep, feats, 0)" not in f.suggestion and "restructure" in f.suggestion


def test_bce_on_probabilities_is_not_rewritten():
    """binary_cross_entropy checks that every input is a probability: on the full tensor a masked-out
    NaN would raise (a device assert on a GPU), so only the advice is given."""
    out, findings = _fixed_and_findings("""
        import torch
        import torch.nn.functional as F

        def loss(prob: torch.Tensor, tgt: torch.Tensor, m: torch.Tensor):
            return F.binary_cross_entropy(prob[m], tgt[m])
    """)
    assert not out.applied
    f = next(f for f in findings if f.code == "SYN302")
    assert f.fix is None and "per_element" in f.suggestion and "masked_fill" not in f.suggestion


def test_per_element_losses_are_not_rewritten():
    """focal's default reduction is "none": its output has the selection's shape, so no rewrite."""
    out, findings = _fixed_and_findings("""
        import torch
        from torchvision.ops import sigmoid_focal_loss

        def loss(pred, tgt, m):
            return sigmoid_focal_loss(pred[m], tgt[m]).sum() / 4
    """)
    assert not out.applied
    assert all(f.fix is None for f in findings)


def test_the_reads_of_a_split_loss_point_at_its_fix():
    _, findings = _fixed_and_findings("""
        import torch
        import torch.nn.functional as F

        def loss(flat, lbl, n: int):
            keep = lbl != -1
            picked = flat[keep]
            tgt = lbl[keep]
            return F.cross_entropy(picked.reshape(-1, n), tgt)
    """)
    reads = [f for f in findings if f.code == "SYN302"]
    assert len(reads) == 2 and all("SYN306" in f.suggestion and "line 9" in f.suggestion for f in reads)
    ce = next(f for f in findings if f.code == "SYN306")
    assert sorted(ce.fix.covers) == sorted((f.line, f.column) for f in reads)


# -- SYN302: masked reductions over the full tensor -----------------------------------------------

MASKED_REDUCE = Fixed("""
    import torch

    def masked_mean(pred: torch.Tensor, target: torch.Tensor):
        valid = target != -1
        return pred[valid].mean()

    def masked_sum(x: torch.Tensor):
        return 2 * x[x > 0].sum()

    def functional_sum(loss: torch.Tensor, is_valid: torch.Tensor):
        return torch.sum(loss[is_valid]) / 8
""", "SYN302", expect=("torch.where(valid, pred, 0).sum() / valid.sum()", "2 * torch.where(x > 0, x, 0).sum()"))


@EXAMPLES
@given(shape=shapes, seed=seeds, kind=mask_kinds)
def test_masked_reductions_keep_the_full_shape(shape, seed, kind):
    g = gen(seed)
    x = torch.randn(shape, generator=g)
    target = torch.where(mask_of(shape, kind, g), torch.randint(0, 3, shape, generator=g), -1)
    MASKED_REDUCE.run("masked_mean", x, target, exact=False, grads=(0,), rtol=1e-5, atol=1e-6)
    MASKED_REDUCE.run("masked_sum", x, exact=False, grads=(0,), rtol=1e-5, atol=1e-5)
    MASKED_REDUCE.run("masked_sum", torch.randint(-5, 5, shape, generator=g))  # integers: exact
    MASKED_REDUCE.run("functional_sum", x, mask_of(shape, kind, g), exact=False, grads=(0,), rtol=1e-5, atol=1e-5)


# -- SYN303: masked assignment of a tensor -> copy_(where) ------------------------------------------

MASKED_ASSIGN = Fixed("""
    import torch

    def copy_through(x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor):
        x[mask] = y[mask]
        return x

    def fill_with_reduction(x: torch.Tensor):
        x[x < 0] = x.mean()
        return x
""", "SYN303", expect=("x.copy_(torch.where(mask, y, x))", "x.copy_(torch.where(x < 0, x.mean(), x))"))


@EXAMPLES
@given(shape=shapes, seed=seeds, kind=mask_kinds, dtype=st.sampled_from([torch.float32, torch.long]))
def test_masked_assign_becomes_where(shape, seed, kind, dtype):
    g = gen(seed)
    x = (torch.randn(shape, generator=g) * 4).to(dtype)
    y = (torch.randn(shape, generator=g) * 4).to(dtype)
    MASKED_ASSIGN.run("copy_through", x, y, mask_of(shape, kind, g))
    MASKED_ASSIGN.run("fill_with_reduction", x.float())


# -- SYN308: masked_fill with a tensor value -> where ------------------------------------------------

MASKED_FILL = Fixed("""
    import torch

    def out_of_place(scores: torch.Tensor, mask: torch.Tensor, v: torch.Tensor):
        neg = v.min()
        return scores.masked_fill(mask, neg)

    def in_place(x: torch.Tensor, mask: torch.Tensor, v: torch.Tensor):
        x.masked_fill_(mask, v.max())
        return x
""", "SYN308", unsafe=False, expect=("torch.where(mask, neg.to(scores.dtype), scores)",
                                     "x.copy_(torch.where(mask, v.max(), x))"))


@EXAMPLES
@given(shape=shapes, seed=seeds, kind=mask_kinds,
       dtypes=st.sampled_from([(torch.float32, torch.float64), (torch.float16, torch.float32),
                               (torch.long, torch.float32), (torch.float32, torch.long)]))
def test_masked_fill_with_a_tensor_becomes_where(shape, seed, kind, dtypes):
    g = gen(seed)
    x = (torch.randn(shape, generator=g) * 3).to(dtypes[0])
    v = (torch.randn(3, generator=g) * 3).to(dtypes[1])
    m = mask_of(shape, kind, g)
    MASKED_FILL.run("out_of_place", x, m, v)
    MASKED_FILL.run("in_place", x, m, v)
    if dtypes[0].is_floating_point and dtypes[1].is_floating_point:
        MASKED_FILL.run("out_of_place", x.float(), m, v.float(), grads=(0, 2))


# -- SYN401 / SYN402 / SYN403: the size argument --------------------------------------------------

SIZES = Fixed("""
    import torch
    import torch.nn.functional as F

    def repeat(x: torch.Tensor, lengths: torch.Tensor, total_length: int):
        return x.repeat_interleave(lengths, dim=0)

    def one_hot(target: torch.Tensor, num_classes: int):
        return F.one_hot(target).float()

    def hist(x: torch.Tensor):
        p = x.clamp(-1.0, 2.0)
        return torch.histc(p, bins=7)
""", "SYN401 SYN402 SYN403", expect=("output_size=total_length", "F.one_hot(target, num_classes=num_classes)",
                       "torch.histc(p, bins=7, min=-1.0, max=2.0)"))


@EXAMPLES
@given(n=st.integers(0, 5), seed=seeds, k=st.integers(1, 6))
def test_size_arguments_change_nothing_within_their_assumption(n, seed, k):
    g = gen(seed)
    x = torch.randn(n, 2, generator=g)
    lengths = torch.randint(0, 4, (n,), generator=g)
    SIZES.run("repeat", x, lengths, int(lengths.sum()))  # output_size is the total
    target = torch.randint(0, k, (n, 3), generator=g)
    if target.numel():
        target.view(-1)[0] = k - 1  # the labels reach K - 1: max + 1 == K
        SIZES.run("one_hot", target, k)
    data = torch.randn(n * 4 + 2, generator=g) * 3
    data[:2] = torch.tensor([-5.0, 5.0])  # the clamped data reaches both bounds
    SIZES.run("hist", data)


# -- SYN404: linalg -> the _ex variants (advice, no automatic fix: the rewrite it suggests, applied) --------

LINALG_SRC = textwrap.dedent("""
    import torch

    def solve(A: torch.Tensor, b: torch.Tensor):
        return torch.linalg.solve(A, b)

    def chol(cov: torch.Tensor):
        L = torch.linalg.cholesky(cov, upper=False)
        return L @ L.mT, cov.inverse(), torch.inverse(cov)

    def lu(A: torch.Tensor, B: torch.Tensor):
        LU, piv = torch.linalg.lu_factor(A)
        return torch.linalg.lu_solve(LU, piv, B), torch.linalg.lu_factor(A).pivots

    def ldl(A: torch.Tensor):
        LD, piv = torch.linalg.ldl_factor(A)
        return LD, piv, torch.linalg.ldl_factor(A)[0]
""")
LINALG_EXPECT = ("torch.linalg.solve_ex(A, b).result", "torch.linalg.cholesky_ex(cov, upper=False).L",
                 "torch.linalg.inv_ex(cov).inverse", "torch.linalg.lu_factor_ex(A)[:2]",
                 "torch.linalg.lu_factor_ex(A).pivots", "torch.linalg.ldl_factor_ex(A)[:2]",
                 "torch.linalg.ldl_factor_ex(A)[0]")


def _apply_suggestions(src: str, code: str) -> str:
    """`src` with each `code` finding's span replaced by the expression its suggestion starts with."""
    findings = [f for f in lint_source("snippet.py", src, RULES).findings if f.code == code]
    assert findings and all(f.fix is None for f in findings)  # advice only
    lines = src.splitlines(keepends=True)
    for f in sorted(findings, key=lambda f: (f.line, f.column), reverse=True):
        assert f.suggestion.startswith("`") and f.line == f.end_line, f.suggestion
        expr = f.suggestion[1:f.suggestion.index("`", 1)]
        text = lines[f.line - 1]
        lines[f.line - 1] = text[:f.column - 1] + expr + text[f.end_column - 1:]
    return "".join(lines)


LINALG_SUGGESTED = _apply_suggestions(LINALG_SRC, "SYN404")


def test_linalg_suggestions_spell_the_ex_variants():
    for text in LINALG_EXPECT:
        assert text in LINALG_SUGGESTED, f"{text!r} not in\n{LINALG_SUGGESTED}"
    assert _codes(LINALG_SUGGESTED)["SYN404"] == 0


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 4), batch=st.integers(0, 2), seed=seeds)
def test_linalg_ex_variants_give_the_same_results_on_valid_input(n, batch, seed):
    g = gen(seed)
    a = torch.randn(batch, n, n, generator=g, dtype=torch.float64)
    spd = a @ a.mT + n * torch.eye(n, dtype=torch.float64)  # positive definite: no error to raise
    b = torch.randn(batch, n, 2, generator=g, dtype=torch.float64)
    old, new = _load(LINALG_SRC, "original"), _load(LINALG_SUGGESTED, "suggested")
    for name, args in (("solve", (spd, b)), ("chol", (spd,)), ("lu", (spd, b)), ("ldl", (spd,))):
        _same(new[name](*args), old[name](*args))


def test_linalg_ex_variants_do_not_raise_where_the_checked_ones_do():
    """Why SYN404 has no automatic fix: on a singular matrix the checked call raises, the `_ex` one
    returns garbage (kornia's own tests rely on the error)."""
    old, new = _load(LINALG_SRC, "original"), _load(LINALG_SUGGESTED, "suggested")
    singular = torch.zeros(2, 2, dtype=torch.float64)
    with pytest.raises(RuntimeError):
        old["chol"](singular)
    new["chol"](singular)


# -- SYN405 / SYN406: argument checks ------------------------------------------------------------

CHECKS = Fixed("""
    import torch

    def log_prob(mu: torch.Tensor, log_sigma: torch.Tensor, x: torch.Tensor):
        dist = torch.distributions.Normal(mu, log_sigma.exp())
        return dist.log_prob(x)

    def clip(w: torch.Tensor, g: torch.Tensor):
        p = torch.nn.Parameter(w.clone())
        p.grad = g.clone()
        norm = torch.nn.utils.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)
        return norm, p.grad
""", "SYN405 SYN406", expect=("validate_args=False", "clip_grad_norm_([p], 1.0)"))


@EXAMPLES
@given(n=st.integers(0, 6), seed=seeds, scale=st.floats(0.01, 100))
def test_argument_checks_change_nothing_on_valid_arguments(n, seed, scale):
    g = gen(seed)
    CHECKS.run("log_prob", torch.randn(n, generator=g), torch.randn(n, generator=g), torch.randn(n, generator=g))
    CHECKS.run("clip", torch.randn(n, generator=g), torch.randn(n, generator=g) * scale)  # finite norms


# -- every Bad example with `fixed=` of these rules ----------------------------------------------------

FIXED_EXAMPLES = [(r, i, ex) for r in all_rules() if r.code.startswith(MINE) for i, ex in enumerate(r.bad)
                  if ex.fixed is not None]


@pytest.mark.parametrize("rule,i,ex", FIXED_EXAMPLES, ids=[f"{r.code}-bad{i}" for r, i, _ in FIXED_EXAMPLES])
def test_documented_fix_is_what_the_fixer_does(rule, i, ex):
    src = textwrap.dedent(ex.code)
    out = _fix(src, ex.unsafe)
    assert out.error is None, out.error
    assert out.after == textwrap.dedent(ex.fixed)
    assert any(f.code == rule.code for f in out.applied)
    if ex.unsafe:  # an unsafe fix needs --unsafe-fixes
        assert not any(f.code == rule.code for f in _fix(src, False).applied)
    assert _fix(out.after, ex.unsafe).after == out.after


def test_advice_sums_a_compared_mask_in_parentheses():
    # `scores > 0.5.sum()` would sum the threshold: the mask's sum needs its parentheses
    _, findings = _fixed_and_findings("""
        import torch

        def step(feats, scores, head):
            return head(feats[scores > 0.5])
    """)
    f = next(f for f in findings if f.code == "SYN302")
    assert "`(scores > 0.5).sum()`" in f.suggestion and "0.5.sum()" not in f.suggestion
