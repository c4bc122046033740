"""The machinery behind rewrites that are right in context (issue 13): reaching definitions per
function (syncscan.lint.flow), fix groups applied all or nothing, the "removes k of n syncs on
this path" note (syncscan.lint.steppath), and rewritten lines wrapped to the project's line
length (syncscan.lint.wrap, `--line-length`)."""

from __future__ import annotations

import ast
import json
import textwrap

import pytest

from syncscan.cli import main
from syncscan.lint.engine import lint_source
from syncscan.lint.fixer import choose, fix_text
from syncscan.lint.flow import function_flow
from syncscan.lint.registry import all_rules
from syncscan.lint.rule import Edit, Finding, Fix
from syncscan.lint.wrap import line_length_for, split_line, wrap_changed

RULES = [r() for r in all_rules()]


def _flow(src: str):
    fn = ast.parse(textwrap.dedent(src)).body[0]
    return fn, function_flow(fn)


def _reads(fn, name):
    return [n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]


# -- reaching definitions ------------------------------------------------------------------------

def test_a_name_rebound_in_a_branch_reaches_with_both_values():
    fn, ff = _flow("""
        def f(logits, targets, compact):
            valid = targets != -100
            if compact:
                valid = torch.nonzero(valid).squeeze(1)
            return logits[valid]
    """)
    reads = sorted(_reads(fn, "valid"), key=lambda n: n.lineno)
    assert [b.line for b in ff.reaching(reads[0])] == [3]  # inside the if: the mask
    assert [b.line for b in ff.reaching(reads[1])] == [3, 5]  # after it: either
    assert ff.rebound_on_some_path(reads[1]) and ff.only_binding(reads[1]) is None
    assert ff.only_binding(reads[0]).value is not None


def test_loops_break_continue_else_and_try():
    fn, ff = _flow("""
        def f(xs):
            total = 0
            for x in xs:
                if x:
                    break
                total += x
            else:
                total = -1
            try:
                y = g(total)
            except ValueError:
                y = None
            return total, y
    """)
    total = max(_reads(fn, "total"), key=lambda n: n.lineno)
    assert sorted(b.how for b in ff.reaching(total)) == ["assign", "assign", "augassign"]
    y = max(_reads(fn, "y"), key=lambda n: n.lineno)
    assert len(ff.reaching(y)) == 2
    # the augmented assignment reads what the loop's head sees: the start and itself
    aug = next(n for n in ast.walk(fn) if isinstance(n, ast.AugAssign)).target
    assert sorted(b.how for b in ff.reaching(aug)) == ["assign", "augassign"]


def test_uses_of_a_binding_and_nested_scopes():
    fn, ff = _flow("""
        def f(x, m):
            sel = x[m]
            a = sel.sum()
            h = lambda: sel
            return a
    """)
    b = ff.binding_of(next(n for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id == "sel"
                           and isinstance(n.ctx, ast.Store)))
    assert [u.lineno for u in ff.uses(b)] == [4]  # the lambda's read is another scope's...
    assert not ff.all_uses_known("sel")  # ...so nothing may fold `sel` away


def test_memoised_on_the_node():
    fn = ast.parse("def f(a):\n    return a\n").body[0]
    assert function_flow(fn) is function_flow(fn)


# -- groups: all or nothing ------------------------------------------------------------------------

def _finding(line, group="", covers=(), edit=None, code="SYN101"):
    e = edit or Edit(line, 1, line, 2, "x")
    return Finding("m.py", line, 1, line, 2, code, "n", "m", fix=Fix("unsafe", (e,), group=group, covers=covers))


def test_a_group_is_applied_whole_or_not_at_all():
    a, b, c = _finding(1, "g"), _finding(2, "g"), _finding(3)
    assert choose([a, b, c], unsafe=True) == [a, b, c]
    assert choose([a, b, c], unsafe=True, selected=lambda f: f is not b) == [c]  # b not asked for: no a either
    assert choose([a, b, c], unsafe=False) == []


def test_the_same_edit_in_two_members_is_applied_once():
    e = Edit(5, 1, 5, 9, "new")
    a, b = _finding(5, "g", edit=e), _finding(5, "g", edit=e)
    assert choose([a, b], unsafe=True) == [a, b]
    ff = fix_text("m.py", "import torch\n", [], (), True, lambda f: True)
    assert ff.after == "import torch\n"


def test_accumulators_of_one_loop_come_together_or_not_at_all():
    src = textwrap.dedent("""
        import torch
        def train(model, loader, opt):
            total = 0.0
            seen = 0.0
            for x, y in loader:
                loss = model(x).mean()
                loss.backward()
                opt.step()
                total += loss.item()
                seen += loss.item() * 2
                seen = seen * 0.5
            return total, seen
    """)
    res = lint_source("m.py", src, RULES)
    items = [f for f in res.findings if f.code == "SYN101"]
    assert len(items) == 2 and all(f.fix is None for f in items)
    assert "together with line 11" in items[0].suggestion


def test_two_accumulators_are_one_group_and_fixing_counts_both():
    ex = next(b for b in next(r for r in all_rules() if r.code == "SYN101").bad if b.count == 2 and b.fixed)
    src = textwrap.dedent(ex.code)
    items = [f for f in lint_source("m.py", src, RULES).findings if f.code == "SYN101"]
    assert len({f.fix.group for f in items}) == 1 and items[0].fix.group
    ff = fix_text("m.py", src, RULES, (), True, lambda f: True)
    assert sum(f.code == "SYN101" for f in ff.applied) == 2
    only_one = fix_text("m.py", src, RULES, (), True, lambda f: f.line != items[1].line)
    assert only_one.after == src  # one of the two deselected: the wait stays, so nothing is fixed


# -- what a fix leaves on its step path -----------------------------------------------------------

LEFT = textwrap.dedent("""
    import torch
    def train(model, loader, opt):
        total = 0.0
        for x, y in loader:
            loss = model(x).mean()
            loss.backward()
            opt.step()
            total += loss.item()
            test_loss = loss.item() * 2
            print(test_loss)
        return total
""")


def test_a_fix_that_leaves_syncs_on_its_path_says_so(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.py").write_text(LEFT)
    rc = main(["lint", "--no-cache", "t.py"])
    out = capsys.readouterr().out
    assert rc == 1 and "note: this fix removes 1 of 2 syncs on this path; the host still waits at line 10 (SYN101)" \
        in out
    main(["lint", "--no-cache", "--format", "json", "t.py"])
    data = json.loads(capsys.readouterr().out)
    fixed = next(f for f in data if f["fix"])
    assert fixed["fix"]["path"]["removes"] == 1 and fixed["fix"]["path"]["of"] == 2
    assert fixed["fix"]["path"]["left"] == [[10, "SYN101"]]
    main(["lint", "--format", "json", "t.py"])  # fills the cache
    capsys.readouterr()
    main(["lint", "--format", "json", "t.py"])  # read from it: the note is kept
    cached = json.loads(capsys.readouterr().out)
    assert next(f for f in cached if f["fix"])["fix"]["path"] == fixed["fix"]["path"]


def test_a_fix_that_removes_every_sync_of_its_path_has_no_note():
    src = LEFT.replace("        test_loss = loss.item() * 2\n        print(test_loss)\n", "")
    res = lint_source("m.py", src, RULES)
    assert [f.extra.get("path") for f in res.findings if f.fix] == [None]


def test_a_split_loss_fix_removes_its_reads_too():
    ex = next(b for b in next(r for r in all_rules() if r.code == "SYN306").bad if "picked" in b.code)
    res = lint_source("m.py", textwrap.dedent(ex.code), RULES)
    assert len(res.findings) == 3 and all(f.extra.get("path") is None for f in res.findings)
    ff = fix_text("m.py", textwrap.dedent(ex.code), RULES, (), True, lambda f: True)
    assert len(ff.applied) == 3  # the loss and its two masked reads


# -- wrapping to the project's line length -------------------------------------------------------

def test_right_hand_split_like_black():
    line = '    return F.cross_entropy(logits.movedim(-1, 1), targets.masked_fill(~valid, -100), ignore_index=-100)'
    assert split_line(line, 88) == [
        "    return F.cross_entropy(",
        "        logits.movedim(-1, 1), targets.masked_fill(~valid, -100), ignore_index=-100",
        "    )"]
    assert split_line(line, 60) == [
        "    return F.cross_entropy(",
        "        logits.movedim(-1, 1),",
        "        targets.masked_fill(~valid, -100),",
        "        ignore_index=-100,",
        "    )"]
    # trailers are skipped for the split; a comment stays on the first line
    assert split_line("    return torch.where(m, some_long_function_name(a, b, reduction='none'), 0).sum() / m.sum()  # x",
                      70) == ["    return torch.where(  # x",
                              "        m, some_long_function_name(a, b, reduction='none'), 0",
                              "    ).sum() / m.sum()"]
    assert split_line('    x = "' + "a" * 100 + '"', 88) is None
    # an operator chain inside the brackets: one operand per line, the operator first (black's way)
    ssd = ('            "classification": (torch.where(foreground_idxs, cls_loss, 0).sum() + '
           'torch.where(background_idxs, cls_loss, 0).sum()) / N,')
    assert split_line(ssd, 88) == ['            "classification": (',
                                   "                torch.where(foreground_idxs, cls_loss, 0).sum()",
                                   "                + torch.where(background_idxs, cls_loss, 0).sum()",
                                   "            ) / N,"]


def test_a_long_continuation_line_gets_one_element_per_line():
    before = textwrap.dedent("""
        def f(device, dtype):
            return Beta(
                torch.tensor(0.0, device=device, dtype=dtype), torch.tensor(1.0, device=device, dtype=dtype)
            )
    """)
    after = before.replace("torch.tensor(0.0", "torch.full((), 0.0").replace(
        "torch.tensor(1.0, device=device, dtype=dtype)", "torch.full((), 1.0, device=device, dtype=dtype), "
        "validate_args=False")
    assert wrap_changed(before, after, 88) == textwrap.dedent("""
        def f(device, dtype):
            return Beta(
                torch.full((), 0.0, device=device, dtype=dtype),
                torch.full((), 1.0, device=device, dtype=dtype),
                validate_args=False,
            )
    """)
    # a lambda's commas are not the call's: such a line is split at its brackets instead
    lam = "    g(\n        key=lambda a, b: compare(a, b, first_long_argument_name, second_long_argument_name), x=1\n    )\n"
    wrapped = wrap_changed("", "def f():\n" + lam, 60)
    ast.parse(wrapped)
    assert "lambda a, b: compare(" in wrapped


def test_only_the_lines_a_fix_wrote_are_wrapped():
    before = "a = 1\nlong_untouched = f(" + "x, " * 40 + "y)\nz = 2\n"
    after = before.replace("z = 2", "z = g(" + ", ".join(f"arg{i}" for i in range(30)) + ")")
    out = wrap_changed(before, after, 88)
    assert out.splitlines()[1] == before.splitlines()[1]
    assert out.splitlines()[2] == "z = g(" and out.endswith(")\n") and max(map(len, out.splitlines()[2:])) <= 88
    ast.parse(out)


@pytest.mark.parametrize("config,expected", [
    ("[project]\nname = 'p'\n", 88),
    ("[tool.ruff]\nline-length = 120\n", 120),
    ("[tool.black]\nline-length = 100\n", 100),
    ("[tool.ruff]\nline-length = 99\n[tool.black]\nline-length = 79\n", 99),
])
def test_line_length_comes_from_the_nearest_config(tmp_path, config, expected):
    from syncscan.lint.wrap import _limit_in

    _limit_in.cache_clear()
    d = tmp_path / "proj" / "pkg"
    d.mkdir(parents=True)
    if config:
        (tmp_path / "proj" / "pyproject.toml").write_text(config)
    assert line_length_for(str(d / "m.py")) == expected


def test_ruff_toml(tmp_path):
    from syncscan.lint.wrap import _limit_in

    _limit_in.cache_clear()
    (tmp_path / "ruff.toml").write_text("line-length = 72\n")
    assert line_length_for(str(tmp_path / "m.py")) == 72


SPLIT = textwrap.dedent("""
    import torch.nn.functional as F
    def loss_fn(flat, lbl, n: int):
        keep = lbl != -1
        picked = flat[keep]
        tgt = lbl[keep]
        return F.cross_entropy(picked.reshape(-1, n), tgt)  # the loss
""")


def test_fix_wraps_to_the_configured_length_and_line_length_flag(tmp_path, monkeypatch, capsys):
    from syncscan.lint.wrap import _limit_in

    _limit_in.cache_clear()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.black]\nline-length = 79\n")
    (tmp_path / "m.py").write_text(SPLIT)
    assert main(["lint", "--no-cache", "--fix", "--unsafe-fixes", "m.py"]) == 0
    fixed = (tmp_path / "m.py").read_text()
    assert max(len(ln) for ln in fixed.splitlines()) <= 79
    assert "    return F.cross_entropy(  # the loss\n        flat.reshape(-1, n)," in fixed
    ast.parse(fixed)
    (tmp_path / "m.py").write_text(SPLIT)
    assert main(["lint", "--no-cache", "--fix", "--unsafe-fixes", "--line-length", "0", "m.py"]) == 0
    assert "    return F.cross_entropy(flat.reshape(-1, n), lbl.masked_fill(~keep, -100).reshape(-1), " \
           "ignore_index=-100)  # the loss" in (tmp_path / "m.py").read_text()
    capsys.readouterr()
    assert main(["lint", "--line-length", "80", "m.py"]) == 2  # only with --fix / --diff
    assert "--line-length" in capsys.readouterr().err
