"""Code that runs only while the DataLoader loads a batch: a Dataset's `__getitem__` and what it
calls, and the collate function. Its tensors are made from files, numpy arrays and Python
values in the loader's worker processes, on the host: indexing them with a mask, writing into
them, `.tolist()` of them syncs nothing. Findings there are false flags unless the same code
also runs in the step, so the engine marks them (`LOADER`) and they are dropped once the
project's call graph says the code is cold (callgraph.settle).

Found in one file, from what the file shows:
- roots: `__getitem__`, `__getitems__`, `__iter__` and `__next__` of a dataset class (a base
  named `...Dataset`, or from `torch.utils.data` or a `datasets` module, or another dataset class
  of the file), what the file hands a DataLoader as `collate_fn=` or `worker_init_fn=`, a
  function named `collate_fn` / `..._collate_fn` and the `__call__` of a class named for collating
  (`...Collate`, `...Collator`, `...Collater`): DataLoader's own word for what it calls;
- then every function or method of the file that only loader code calls: `name(...)`,
  `self.name(...)`, and `self.attr(...)` where `self.attr = SomeClass(...)` (its `__call__`).
A function that other code of the file calls too is not loader code.
"""

from __future__ import annotations

import ast
import re

from syncscan.lint.hotpath import LOADER
from syncscan.lint.imports import dotted
_ROOT_METHODS = frozenset({"__getitem__", "__getitems__", "__iter__", "__next__"})
_LOADER_KEYWORDS = frozenset({"collate_fn", "worker_init_fn"})
_Def = ast.FunctionDef | ast.AsyncFunctionDef
_MAY_LOAD = re.compile(r"Dataset|datasets|torch\.utils\.data|collat|worker_init_fn", re.I)
_FOLDS_TO_ASCII = ("\u0130", "\u0131", "\u017f", "\u212a")  # İ ı ſ K (Kelvin): what re.I matches to [a-z]
_MAY_LOAD_WORDS = ("dataset", "torch.utils.data", "collat", "worker_init_fn")  # (lower case; "datasets" has "dataset")


def _may_load(source: str) -> bool:
    """`_MAY_LOAD.search(source)`: an ASCII text lower-cased once and searched for each word (a
    case-blind regex tries every position: 2% of a lint)."""
    # (re.I also folds four non-ASCII letters onto ASCII ones, `ſ` onto `s`; and of the others, no lower case
    # is ASCII: without those four, the lower-cased text has the words exactly where the regex finds them)
    if not source.isascii() and any(c in source for c in _FOLDS_TO_ASCII):
        return _MAY_LOAD.search(source) is not None
    low = source.lower()
    return any(w in low for w in _MAY_LOAD_WORDS)


def _is_dataset_base(base: ast.expr, imports: dict[str, str], datasets: set[str]) -> bool:
    name = dotted(base.value if isinstance(base, ast.Subscript) else base)  # `Dataset[T]`
    if name is None:
        return False
    head, _, rest = name.partition(".")
    full = imports.get(head, head) + ("." + rest if rest else "")
    last = full.rpartition(".")[2]
    return (last.endswith("Dataset") or name in datasets or full.startswith("torch.utils.data.")
            or ".datasets." in f".{full}")


def mark(findings: list, tree: ast.Module, path: str, imports: dict[str, str], source: str) -> None:
    """Give the findings that stand in loader code (or in a function defined in it) the place `LOADER`."""
    if not findings or not _may_load(source):  # (most files: no walk at all)
        return
    keys = loader_functions(tree, path, imports, source)
    if not keys:
        return
    for f in findings:
        fn = f.function
        if f.local == "step":  # (a per-step rule: SYN601's augmentation runs in the loader by definition)
            continue
        if fn in keys or ".<locals>." in fn and fn.partition(".<locals>.")[0] in keys:
            f.local = LOADER


def loader_functions(tree: ast.Module, path: str, imports: dict[str, str], source: str | None = None) -> frozenset[str]:
    """The keys (`path::Class.method`, `path::function`) of the functions of `tree` that run only
    in loader code (see the module's doc). Empty for most files: a cheap first test looks for a
    dataset class or a `collate_fn=`."""
    classes: dict[str, ast.ClassDef] = {}
    functions: dict[str, _Def] = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            classes[node.name] = node
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions[node.name] = node
    datasets: set[str] = set()
    for name, c in classes.items():  # (in source order: a base is defined before its subclasses)
        if any(_is_dataset_base(b, imports, datasets) for b in c.bases):
            datasets.add(name)
    # (two walks of the whole tree: only where the text names a loader keyword at all)
    spelled = source is None or any(k in source for k in _LOADER_KEYWORDS)
    handed = _handed_to_loader(tree, classes, functions) if spelled else set()
    handed |= {n for n in functions if n.endswith("collate_fn")}
    handed |= {n for n in classes if "collat" in n.lower()}
    if not datasets and not handed:
        return frozenset()

    def key(cls: str | None, name: str) -> str:
        return f"{path}::{cls}.{name}" if cls else f"{path}::{name}"

    methods: dict[str, dict[str, str]] = {}  # class -> method name -> key (its bases' in the file too)
    for name, c in classes.items():
        own = {m.name: key(name, m.name) for m in c.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
        for b in c.bases:
            bn = dotted(b)
            if bn in methods:
                own = {**methods[bn], **own}
        methods[name] = own
    callers: dict[str, set[str]] = {}  # function key -> the keys of the file's functions that call it
    defs: list[tuple[str | None, _Def]] = [(None, f) for f in functions.values()]
    defs += [(n, m) for n, c in classes.items() for m in c.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    attrs = {n: _attribute_classes(c, classes) for n, c in classes.items()}
    for cls, d in defs:
        me = key(cls, d.name)
        for callee in _callees(d, cls, functions, classes, methods, attrs.get(cls or "", {}), key):
            if callee != me:
                callers.setdefault(callee, set()).add(me)
    roots = {methods[n][m] for n in datasets for m in _ROOT_METHODS if m in methods[n]}
    roots |= {key(None, f) if f in functions else methods[f].get("__call__", "") for f in handed}
    roots.discard("")
    loader = set(roots)
    changed = True
    while changed:  # a function is loader code when every caller it has in the file is
        changed = False
        for f, by in callers.items():
            if f not in loader and by <= loader:
                loader.add(f)
                changed = True
    return frozenset(loader)


def _handed_to_loader(tree: ast.Module, classes: dict, functions: dict) -> set[str]:
    """The file's functions and classes given to a DataLoader: `collate_fn=collate`,
    `collate_fn=Collater(...)`, or a name bound to such a call in the same function."""
    out: set[str] = set()
    bound: dict[str, str] = {}  # name -> the class of the file it was last bound to an instance of
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in classes:
                bound[node.targets[0].id] = v.func.id
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            if kw.arg not in _LOADER_KEYWORDS:
                continue
            v = kw.value
            if isinstance(v, ast.Call):
                v = v.func
            if isinstance(v, ast.Name):
                if v.id in functions or v.id in classes:
                    out.add(v.id)
                elif v.id in bound:
                    out.add(bound[v.id])
    return out


def _attribute_classes(c: ast.ClassDef, classes: dict) -> dict[str, str]:
    """`self.attr = SomeClass(...)` anywhere in the class: attr -> SomeClass (a class of the file)."""
    out = {}
    for node in ast.walk(c):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            f = node.value.func
            if isinstance(f, ast.Name) and f.id in classes:
                for t in node.targets:
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                        out[t.attr] = f.id
    return out


def _callees(d: _Def, cls: str | None, functions: dict, classes: dict, methods: dict, attrs: dict, key) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(d):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name):
            if f.id in functions:
                out.add(key(None, f.id))
            elif f.id in classes:  # an instance is made: its __init__ runs
                init = methods[f.id].get("__init__")
                if init:
                    out.add(init)
        elif isinstance(f, ast.Call) and isinstance(f.func, ast.Name) and f.func.id in classes:
            call = methods[f.func.id].get("__call__")  # `SomeClass(...)(x)`
            if call:
                out.add(call)
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" and cls:
            m = methods[cls].get(f.attr)
            if m:
                out.add(m)
            elif f.attr in attrs:
                call = methods[attrs[f.attr]].get("__call__")
                if call:
                    out.add(call)
    return out
