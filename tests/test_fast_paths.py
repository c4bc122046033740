"""The fast paths of the lint (session 9's speed pass) against the slow definitions they replace: each
must give the same answer, including on the texts and trees where the fast path has to step aside."""

from __future__ import annotations

import ast

from syncscan.lint import loader_code
from syncscan.lint.tree import LEAF_TYPES, SourceTree, children, split_lines_no_ff, walk

SAMPLE = '''
import torch

class Net(torch.nn.Module):
    def forward(self, x, mask=None):
        def inner(y):
            return y + 1
        class Local:
            pass
        try:
            out = [inner(v) for v in x if v is not None]
        except ValueError as e:
            out = lambda z: z  # noqa
        match x:
            case [a, b]:
                def in_case():
                    return a
        return {k: v for k, v in zip(out, x)} if mask else (yield out)
'''


def test_child_lists_and_walks_match_ast():
    tree = ast.parse(SAMPLE)
    full = list(ast.walk(tree))
    assert list(walk(tree, lean=False)) == full
    assert list(walk(tree)) == [n for n in full if not isinstance(n, LEAF_TYPES)]
    for node in full:
        kids = list(ast.iter_child_nodes(node))
        assert children(node, lean=False) == kids
        assert children(node) == [c for c in kids if not isinstance(c, LEAF_TYPES)]
    # a node built by hand without every field: the generic listing
    hand = ast.Call(func=ast.Name(id="f", ctx=ast.Load()))
    assert children(hand) == [hand.func]


def test_own_nodes_leave_out_nested_definitions_only():
    tree = ast.parse(SAMPLE)
    src = SourceTree("<sample>", SAMPLE, tree)
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")

    def slow(f):  # the definition: depth first, not into defs or classes (lambdas are walked)
        out, todo = [], list(f.body)
        while todo:
            n = todo.pop()
            out.append(n)
            todo += [c for c in ast.iter_child_nodes(n) if not isinstance(c, LEAF_TYPES)
                     and not isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
        return out

    got = src.own_nodes(fn)
    assert got == slow(fn)
    in_case = next(n for n in ast.walk(fn) if isinstance(n, ast.FunctionDef) and n.name == "in_case")
    assert not {id(n) for n in ast.walk(in_case)} & {id(n) for n in got}  # (a def under a statement: left out)
    assert any(isinstance(n, ast.Lambda) for n in got)


def test_parents_match_a_full_walk():
    tree = ast.parse(SAMPLE)
    src = SourceTree("<sample>", SAMPLE, tree)
    for p in ast.walk(tree):
        for c in children(p):
            assert src.parent(c) is p


def test_split_lines_as_ast_counts_them_with_other_breaks():
    # str.splitlines also ends a line at \v, \f, \x1c-\x1e, \x85, \u2028, \u2029: ast does not
    for text in ["", "a", "a\n", "a\r\nb\rc\n\nd", "x = 1\f\ny = 2\n", "a\x0bb\n", "s = '\x1c'\n",
                 "t = '\u2028'\nu = 1", "\r", "a\r", "# é\n"]:
        assert split_lines_no_ff(text) == ast._splitlines_no_ff(text), repr(text)  # type: ignore[attr-defined]


def test_loader_words_in_non_ascii_text():
    regex = loader_code._MAY_LOAD
    texts = ["# é\nclass A(Dataset): pass\n", "# é\nx = 1\n", "# é\nclass A(Dataſet): pass\n",  # ſ is an s to re.I
             "# é\nfrom torch.utils.data import DataLoader\n", "# ı\nCOLLATE = 1\n", "\u212a = 'é'\n"]
    for text in texts:
        assert loader_code._may_load(text) == (regex.search(text) is not None), text
    assert loader_code._may_load("# é\nclass A(Dataſet): pass\n")
