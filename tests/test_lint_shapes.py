"""syncscan.lint.shapes: the rank of a tensor expression, only where the code makes it certain (a
0-dim index is read on the host; the indexing rules stay silent on anything unknown)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from syncscan.lint.engine import lint_source
from syncscan.lint.rule import Rule
from syncscan.lint.shapes import rank


class RankProbe(Rule):
    """Reports the rank of the argument of every `probe(e)` call."""

    code = "SYN991"
    name = "rank-probe"
    summary = "test rule"
    why = "test"
    rewrite = "test"

    def visit_Call(self, node, ctx):
        if isinstance(node.func, ast.Name) and node.func.id == "probe":
            self.report(ctx, node, repr(rank(ctx, node.args[0])))


def ranks(src: str) -> list[str]:
    res = lint_source("example.py", textwrap.dedent(src), [RankProbe()])
    assert res.error is None, res.error
    return [f.message for f in sorted(res.findings, key=lambda f: (f.line, f.column))]


@pytest.mark.parametrize("expr,want", [
    ("x.sum()", "0"), ("torch.argmax(x)", "0"), ("x.max()", "0"), ("x.norm()", "0"), ("x.norm(2)", "0"),
    ("torch.argmax(x.view(-1), dim=0)", "0"), ("x.flatten().max(0)[1]", "0"), ("x.flatten().max(0).indices", "0"),
    ("x.flatten().sum(0)", "0"), ("x.reshape(-1).argmax(dim=0, keepdim=True)", "1"),
    ("torch.tensor(3, device='cuda')", "0"), ("torch.tensor(len(x) - 1)", "0"), ("torch.arange(5)[2]", "0"),
    ("torch.zeros(4, 3)[0]", "1"), ("torch.zeros((4, 3))[:, None]", "3"), ("x.sum() > 0", "0"),
    ("~(x.sum() == 0)", "0"), ("x.mean() * 2 + 1", "0"), ("x.view(-1)[:3]", "1"),
    ("x.flatten().dot(idx.flatten())", "0"), ("x.view(-1) @ idx.view(-1)", "None"),
    # unknown: the rank of `x`, a dim along an unknown rank, keepdim, a tensor index, a list
    ("x", "None"), ("x.argmax(dim=1)", "None"), ("x.sum(0, True)", "None"), ("x[0]", "None"),
    ("x.view(-1)[idx]", "None"), ("torch.tensor(xs)", "None"), ("x.squeeze()", "None"),
    ("x.view(-1).max(0)", "None"), ("x.sum(dim=0)", "None"),
])
def test_rank_of_expressions(expr, want):
    src = f"""
    import torch
    def f(x: torch.Tensor, idx: torch.Tensor, xs: list):
        probe({expr})
    """
    assert ranks(src) == [want]


def test_rank_through_names_unpacking_and_module_functions():
    src = """
    import torch
    def _score(t: torch.Tensor, flat: bool) -> torch.Tensor:
        if flat:
            s = (t * 2).sum()
        else:
            s = _other(t)
        return s
    def _other(t):
        return t.mean()
    def _mixed(t, k):
        if k:
            return t.sum()
        return t
    def f(preds: torch.Tensor, t: torch.Tensor, k: bool):
        _, inv, counts = torch.unique(-preds, return_inverse=True, return_counts=True)
        groups = counts.cumsum(dim=0) - 1
        probe(groups[0])
        probe(inv)
        g = _score(t, k)
        probe(g == 0)
        probe(_mixed(t, k))
        i = (t == 3).nonzero(as_tuple=True)[0][0]
        probe(i + 1)
        if k:
            j = t.sum()
        else:
            j = t.sum(dim=1)
        probe(j)
        for s in torch.arange(10, device=t.device):
            probe(s)
        for n, s in enumerate(t.view(-1)):
            probe(s)
        for s in t:
            probe(s)
    """
    # `inv` has `preds`' rank (unknown); `_mixed` returns ranks that differ; `j` is bound both ways;
    # the rows of `t` have one dim less than `t`, which is unknown
    assert ranks(src) == ["0", "None", "0", "None", "0", "None", "0", "0", "None"]


def test_rank_of_list_elements_zip_and_reversed():
    # a list's elements have the rank they agree on (the literal's and every `.append`'s); `zip`,
    # `enumerate`, `reversed`, `list` hand them on; any other change to the list makes them unknown
    src = """
    import torch
    def f(x: torch.Tensor, k: int):
        idx = torch.arange(x.size(0), device=x.device).masked_select(torch.isnan(x))
        probe(idx)
        probe(x.nonzero())
        first = idx[0]
        prev = [first - 1]
        for i in reversed(idx[1:]):
            prev.append(i - 1)
        prev = reversed(prev)
        for a, b in zip(prev, idx):
            probe(a)
            probe(b)
        for n, (a, b) in enumerate(zip(idx, [x.sum(), x.max()])):
            probe(a)
            probe(b)
        grown = [first]
        grown.extend(idx)
        for g in grown:
            probe(g)
        mixed = [first]
        mixed.append(x)
        for m in list(mixed):
            probe(m)
        for n, b in zip(range(k), idx):
            probe(n)
    """
    assert ranks(src) == ["1", "2", "0", "0", "0", "0", "None", "None", "None"]


def test_index_rules_see_0_dim_elements_of_a_reversed_list():
    # the walk's kinds too: `reversed(xs)` of a list of tensors holds tensors, so the index is one
    from syncscan.lint.registry import all_rules

    src = textwrap.dedent("""
    import torch
    def fill(x: torch.Tensor):
        nan = torch.arange(x.size(0), device=x.device).masked_select(torch.isnan(x))
        after = [nan[-1] + 1]
        for i in reversed(nan[:-1]):
            after.append(i + 1)
        after = reversed(after)
        for i, j in zip(nan, after):
            x[i] = x[j]
        return x
    """)
    res = lint_source("example.py", src, [r() for r in all_rules()])
    got = {(f.code, f.line) for f in res.findings}
    assert ("SYN303", 10) in got and ("SYN302", 10) in got


def test_a_0_dim_index_into_a_value_of_unknown_kind_is_a_low_confidence_sync():
    from syncscan.lint.registry import all_rules

    src = textwrap.dedent("""
    import torch
    def pick(candidates, table: dict, scores: torch.Tensor):
        best = scores.argmax()
        a = candidates[best]
        k = int(best)
        b = candidates[k]
        return a, b
    """)
    res = lint_source("example.py", src, [r() for r in all_rules()])
    got = [(f.code, f.line, f.confidence) for f in res.findings if f.code == "SYN302"]
    assert got == [("SYN302", 5, "low")]


def test_rank_through_own_methods_self_attributes_and_loop_counters():
    # `self.nearest(...)` has the rank every `return` of the method agrees on; `self.seq` the rank every
    # store in the class agrees on, a tuple target from a method returning a tuple literal included;
    # a `for i in range(...)` counter (wrapped too) is a Python int, so `seq[i]` drops a dim
    src = """
    import torch
    from tqdm import tqdm
    class Sampler:
        def __init__(self, n):
            self.betas = torch.linspace(0.0, 1.0, n)
            self.rhos, self.seq = self.schedule(n)
            self.other = torch.zeros(n, n)

        def schedule(self, n):
            rhos = torch.tensor([1.0, 2.0])
            seq = torch.sqrt(torch.linspace(0, n, 10)).type(torch.int32)
            return rhos, seq

        def nearest(self, array, value):
            idx = torch.abs(array - value).argmin()
            return idx

        def reset(self, rows):
            self.other = rows

        def sample(self, x, step):
            for i in tqdm(range(len(self.seq))):
                probe(self.seq[i])
                t = self.nearest(self.betas, x)
                probe(t)
                probe(self.betas)
                probe(self.other)
            for j, s in enumerate(self.seq):
                probe(self.seq[j])
            probe(self.seq[step])
            for k in zip(range(3), self.seq):  # a tuple, not a counter
                probe(self.seq[k])
    """
    assert ranks(src) == ["0", "0", "1", "None", "0", "None", "None"]
