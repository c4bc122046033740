import ast
import textwrap

from syncscan.lint.imports import qualify
from syncscan.lint.masks import mask_expr
from syncscan.lint.rule import Bad, Footprint, Good, Rule

from ._util import short

# `torch.jit.script` as a decorator or a call, however imported
_SCRIPT = frozenset({"torch.jit.script", "torch.jit._script.script"})


def _scripted(file) -> dict[str, ast.FunctionDef]:
    """name -> the module function TorchScript compiles: decorated `@torch.jit.script`, or bound at module level
    to `torch.jit.script(f)` of one (`fast = torch.jit.script(slow)`: calls of `fast`). Once per file."""
    out: dict[str, ast.FunctionDef] = {}
    if "jit" not in file.source:
        return out
    funcs = file.index.funcs
    for s in file.tree.body:
        if isinstance(s, ast.FunctionDef) and any(qualify(d, file.imports) in _SCRIPT for d in s.decorator_list):
            out[s.name] = s
        elif isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) \
                and isinstance(s.value, ast.Call) and qualify(s.value.func, file.imports) in _SCRIPT \
                and len(s.value.args) == 1 and isinstance(s.value.args[0], ast.Name) \
                and isinstance(funcs.get(s.value.args[0].id), ast.FunctionDef):
            out[s.targets[0].id] = funcs[s.value.args[0].id]
    return out


def _scripted_methods(file) -> dict[str, dict[str, ast.FunctionDef]]:
    """class name -> {method name -> the method TorchScript compiles}: `@staticmethod` over `@torch.jit.script`
    (`self._calculate_shift(c, old)` runs it with no Python frame, as a scripted function). Once per file."""
    out: dict[str, dict[str, ast.FunctionDef]] = {}
    if "jit" not in file.source:
        return out
    for cls in file.index.classes.values():
        for s in cls.body:
            if isinstance(s, ast.FunctionDef) and any(qualify(d, file.imports) in _SCRIPT for d in s.decorator_list):
                out.setdefault(cls.name, {})[s.name] = s
    return out


_SAYS_SCRIPT = ("jit.script", "import script")


def _script_bases(file) -> frozenset[str]:
    """The base classes of the file's classes that it imports from modules of the tree whose text says
    `jit.script`: their scripted methods run in `self.m(...)` here. Once per file."""
    mods = file.modules
    if mods is None or not file.imported_names:
        return frozenset()
    bases = frozenset(b.id for c in file.index.classes.values() for b in c.bases
                      if isinstance(b, ast.Name) and b.id in file.imported_names)
    return mods.imported_from_saying(file, _SAYS_SCRIPT, names=bases) if bases else frozenset()


def _callable_here(file) -> frozenset[str]:
    """The names whose calls this rule reads in the file: its scripted functions, and the names it calls that it
    imports from modules of the tree whose text says `jit.script` (each module read once). Once per file."""
    mods = file.modules
    imported = mods.imported_from_saying(file, _SAYS_SCRIPT) if mods is not None and file.imported_names \
        else frozenset()
    return frozenset(file.get(_scripted)) | imported


# (module file, its text's hash, function name and line) -> the syncs in that scripted function's own code, for
# the process: a module's scripted helpers are called from many files
_ELSEWHERE: dict[tuple, list] = {}


def _inner_syncs(file, fn: ast.FunctionDef) -> list:
    """The findings of the other rules in `fn`'s own code (a function of `file`), linted alone with the module's
    imports (a scripted function is typed throughout: its annotations say what it holds), at their lines in the
    module: (line, code, message, suggestion, confidence)."""
    from syncscan.lint.engine import lint_source
    from syncscan.lint.registry import all_rules

    lines = file.source.splitlines()
    imports = ["\n".join(lines[s.lineno - 1:s.end_lineno]) for s in file.tree.body
               if isinstance(s, (ast.Import, ast.ImportFrom)) and s.col_offset == 0]
    head = "\n".join(imports)
    src = head + "\n" + textwrap.dedent("\n".join(lines[fn.lineno - 1:fn.end_lineno])) + "\n"
    shift = fn.lineno - (head.count("\n") + 2)  # the mini-module's `def` line -> fn.lineno
    rules = [r() for r in all_rules() if r.code not in (TorchScriptCall.code, "SYN901")]
    res = lint_source("-", src, rules)
    if res.error:
        return []
    found = [(f.line + shift, f.code, f.message, f.suggestion, f.confidence)
             for f in res.findings if f.line + shift > fn.lineno]
    seen = {line for line, *_ in found}
    found += [w for w in _scripted_mask_writes(fn) if w[0] not in seen]
    return sorted(found)


def _scripted_mask_writes(fn: ast.FunctionDef) -> list:
    """`x[m] = 0` with a mask `m`, in a scripted function: eager PyTorch makes it a `masked_fill` (no sync), but
    TorchScript compiles it to `index_put_`, whose mask becomes indices through `nonzero` (SYN303's sync)."""
    masks: set[str] = set()
    out = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and mask_expr(node.value, masks):
            masks.add(node.targets[0].id)
    for node in ast.walk(fn):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Constant) \
                or isinstance(node.value.value, bool) or not isinstance(node.value.value, (int, float)):
            continue
        for t in node.targets:
            parts = t.slice.elts if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Tuple) else \
                [t.slice] if isinstance(t, ast.Subscript) else []
            if any(mask_expr(p, masks) for p in parts):
                out.append((node.lineno, "SYN303", f"`{ast.unparse(node)}` syncs: TorchScript writes a number through "
                            "a boolean mask with `index_put_`, which turns the mask into indices (`nonzero`) whose "
                            "number the host reads",
                            f"`{ast.unparse(t.value)}.masked_fill_(mask, value)`: no indices, no host read", None))
                break
    return out


def _method_syncs(ctx, node: ast.Call) -> tuple[str, str, list] | None:
    """(method name, where, its syncs) for `self.m(...)` / `cls.m(...)` / `Cls.m(...)` running a scripted method of
    the class around (or of the named class of the module), its bases of the module included, or of a base
    imported from another module of its folder; None where `m` is not one."""
    f = node.func
    if not isinstance(f.value, ast.Name):
        return None
    file = ctx.file
    if f.value.id in ("self", "cls"):
        cls = ctx.class_stack[-1] if ctx.class_stack else None
    else:
        cls = file.index.classes.get(f.value.id)
    if cls is None:
        return None
    here = file.index.method(cls, f.attr)
    if here is not None:
        fn = file.get(_scripted_methods).get(here[1].name, {}).get(f.attr)
        if fn is None or fn is not here[0] or ctx.function is fn:
            return None
        return f.attr, "", _local_syncs(ctx, fn)
    mods = file.modules
    if mods is None or not file.get(_script_bases):
        return None
    memo = file.state(_method_syncs, dict)  # (class, method) -> (where, syncs) of a base's method elsewhere
    key = (cls.name, f.attr)
    if key not in memo:
        got = mods.base_method_def(file, cls, f.attr)
        memo[key] = None
        if got is not None:
            target, fn = got
            ekey = (target.path, hash(target.source), fn.name, fn.lineno)
            if ekey not in _ELSEWHERE:
                scripted = any(fn is m for ms in target.get(_scripted_methods).values() for m in ms.values())
                _ELSEWHERE[ekey] = _inner_syncs(target, fn) if scripted else []
            memo[key] = (f" of {target.path.rsplit('/', 1)[-1]}", _ELSEWHERE[ekey])
    got = memo[key]
    return (f.attr, got[0], got[1]) if got is not None else None


def _local_syncs(ctx, fn: ast.FunctionDef) -> list:
    memo = ctx.file.state(_local_syncs, dict)  # id(function) -> its syncs
    if id(fn) not in memo:
        memo[id(fn)] = _inner_syncs(ctx.file, fn)
    return memo[id(fn)]


def _imported_syncs(ctx, name: str) -> tuple[str, list] | None:
    """(module file, its syncs) of a scripted function `name` imported from another module of the tree (one of
    `_callable_here`'s: its module says `jit.script`)."""
    mods = ctx.file.modules
    got = mods.function_def(ctx.file, name) if mods is not None else None
    if got is None:
        return None
    target, fn = got
    key = (target.path, hash(target.source), fn.name, fn.lineno)
    if key not in _ELSEWHERE:
        scripted = target.get(_scripted)
        _ELSEWHERE[key] = _inner_syncs(target, fn) if scripted.get(fn.name) is fn else []
    return target.path, _ELSEWHERE[key]


class TorchScriptCall(Rule):
    code = "SYN412"
    name = "torchscript-call"
    summary = ("A call of a TorchScript function (`@torch.jit.script`, `fast = torch.jit.script(f)`, a scripted "
               "static method through `self.m(...)`) whose own code syncs: `.item()`, `int(t)`, `if t > 0:`, "
               "`nonzero`, a boolean-mask read inside it, or `x[m] = 0` (eager makes that a `masked_fill`; "
               "TorchScript compiles it to `index_put_`, which syncs).")
    why = ("TorchScript runs the function with no Python frame of its own: a host read inside it holds the host at "
           "the Python line that called it, and that is where `set_sync_debug_mode` and the profiler's stacks "
           "show the wait. The finding inside the function says which read it is.")
    rewrite = ("Remove the read inside the scripted function (the finding at its line gives the sync-free form: "
               "a device-side `torch.where`, a mask instead of `nonzero`, a value kept as a tensor); when the "
               "host must have the value, return the tensor and read it once, late, where the host needs it.")
    triggers = ("jit",)
    ops = ()  # its syncs show under the op that syncs inside (`aten::item` is SYN101's)
    rewrite_hint = "remove the host read inside the scripted function"
    footprint = Footprint(keeps_gpu_work=True, keeps_host_time=True)  # the same scripted work, without the read
    bad = (
        Bad("""
import torch

@torch.jit.script
def _auroc(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    n_pos = int(labels.sum())
    return scores[labels.bool()].sum() / n_pos

def binary_auroc(scores, labels):
    return _auroc(scores, labels)  # the host waits here: TorchScript keeps no frame of `_auroc`
""", line=10),
        Bad("""
import torch
from torch import Tensor

def _slow_count(x: Tensor) -> int:
    return int(torch.nonzero(x > 0).shape[0])

_count = torch.jit.script(_slow_count)

def update(x):
    return _count(x)
""", line=11),
        Bad("""
import torch
from torch import Tensor

class KMeans:
    @staticmethod
    @torch.jit.script
    def _shift(centers: Tensor, old: Tensor) -> Tensor:
        d = torch.norm(centers - old, dim=-1)
        d[d == float("inf")] = 0  # TorchScript: index_put_ with a mask, not masked_fill
        return d.mean(-1)

    def step(self, centers, old):
        return self._shift(centers, old)
""", line=14),
    )
    good = (
        Good("""
import torch

@torch.jit.script
def _auroc(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    w = labels.float()
    return (scores * w).sum() / w.sum().clamp_min(1)  # no host read inside

def binary_auroc(scores, labels):
    return _auroc(scores, labels)
"""),
        Good("""
import torch

def _plain(x: torch.Tensor) -> int:
    return int(x.sum())  # plain Python: its own line is where the wait shows (SYN103 there)

def update(x):
    return _plain(x)
"""),
        Good("""
import torch
from torch import Tensor

class KMeans:
    @staticmethod
    @torch.jit.script
    def _shift(centers: Tensor, old: Tensor) -> Tensor:
        d = torch.norm(centers - old, dim=-1)
        return d.masked_fill(d == float("inf"), 0).mean(-1)

    def step(self, centers, old):
        return self._shift(centers, old)
"""),
    )

    @staticmethod
    def applies(file) -> bool:
        return bool(file.get(_callable_here)) or bool(file.get(_scripted_methods)) or bool(file.get(_script_bases))

    def visit_Call(self, node, ctx):
        f = node.func
        if f.__class__ is ast.Attribute:
            got = _method_syncs(ctx, node)
            if got is not None and got[2]:
                self._say(ctx, node, *got)
            return
        if f.__class__ is not ast.Name or f.id not in ctx.file.get(_callable_here):
            return
        where = ""
        fn = ctx.file.get(_scripted).get(f.id)
        if fn is not None:
            if ctx.function is fn:
                return
            inner = _local_syncs(ctx, fn)
        else:  # imported (`from .jit_utils import _count`)
            memo = ctx.file.state(_imported_syncs, dict)
            got = memo[f.id] if f.id in memo else memo.setdefault(f.id, _imported_syncs(ctx, f.id))
            if got is None:
                return
            where = f" of {got[0].rsplit('/', 1)[-1]}"
            inner = got[1]
        if inner:
            self._say(ctx, node, f.id, where, inner)

    def _say(self, ctx, node, name: str, where: str, inner: list) -> None:
        line, code, message, suggestion, confidence = inner[0]
        more = f" (and {len(inner) - 1} more)" if len(inner) > 1 else ""
        reason = message.split(" syncs: ", 1)[-1]
        self.report(ctx, node, f"`{short(ctx, node)}` syncs: the TorchScript function `{name}` reads the GPU on the "
                    f"host inside ({code} at line {line}{where}: {reason}){more}; TorchScript keeps no Python frame of it, so "
                    "the host waits at this call",
                    f"remove the read inside `{name}` (line {line}{where}): {suggestion}" if suggestion else
                    f"remove the read inside `{name}` (line {line}{where})",
                    confidence="low" if all(c == "low" for *_, c in inner) else None)
