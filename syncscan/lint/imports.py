"""A cheap per-module import map: resolve `T.nonzero`, `F.one_hot`, `nonzero` to `torch.nonzero`,
`torch.nn.functional.one_hot`, ... without LibCST's scope metadata (which is what makes
LibCST-based linters slow). Imports anywhere in the module count, in any function."""

from __future__ import annotations

import ast

from syncscan.lint.tree import statements

__all__ = ["dotted", "import_map", "qualify", "statements"]


def import_map(tree: ast.Module) -> dict[str, str]:
    """local name -> fully qualified dotted name, from every import statement in the module."""
    names: dict[str, str] = {}
    for node in statements(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:  # `import torch.nn.functional` binds `torch`
                    top = a.name.split(".")[0]
                    names.setdefault(top, top)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                if a.name != "*":
                    names[a.asname or a.name] = f"{node.module}.{a.name}"
            if any(a.name == "*" for a in node.names) and node.module.split(".")[0] == "torch":
                names.setdefault("__star_torch__", node.module)
    # a module bound to another name at the top (`ch = torch`, `LA = torch.linalg`): one more spelling of it
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id not in names:
            d = dotted(node.value)
            root = d.split(".", 1)[0] if d else None
            if root in names and names[root].split(".", 1)[0] in _MODULE_ROOTS and d.islower():
                names[node.targets[0].id] = names[root] + d[len(root):]
    # an optional import by a helper (`torch = try_import("torch")`, `np = importlib.import_module("numpy")`,
    # `torch, _ = optional_import("torch")`): the module named, under that name
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Call):
            t = node.targets[0]
            if isinstance(t, ast.Tuple) and t.elts:
                t = t.elts[0]
            module = _imported_by_call(node.value)
            if module is not None and isinstance(t, ast.Name) and t.id not in names:
                names[t.id] = module
    return names


def _imported_by_call(call: ast.Call) -> str | None:
    """The module a call of an import helper names: its first argument, a string naming torch, numpy or math (or a
    submodule), where the helper's name says it imports."""
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
    if "import" not in name.lower() or not call.args:
        return None
    a = call.args[0]
    if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
        return None
    return a.value if a.value.split(".", 1)[0] in _MODULE_ROOTS and a.value.replace(".", "").replace("_", "").isalnum() \
        else None


_MODULE_ROOTS = frozenset({"torch", "numpy", "math"})


def dotted(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


# torch re-exports under shorter names: normalise so rules match one spelling
_ALIASES = {
    "torch.functional.": "torch.",
    "torch._C._nn.": "torch.nn.functional.",
    "torch._C._linalg.": "torch.linalg.",
    "torch._VariableFunctions.": "torch.",
}
_ALIAS_PREFIXES = tuple(_ALIASES)


def qualify(node: ast.AST, imports: dict[str, str]) -> str | None:
    """The qualified name of a Name/Attribute chain through the module's imports, else None.

    Only names bound by an import resolve: a local variable called `torch` is taken at its word
    (that is what the code means in practice)."""
    parts = []
    while node.__class__ is ast.Attribute:  # (exact classes, as ast.parse builds them: asked of most calls)
        parts.append(node.attr)
        node = node.value
    if node.__class__ is not ast.Name:
        return None
    base = imports.get(node.id)  # most chains start at a local name: no string built for them
    if base is None:
        return None
    if parts:
        parts.append(base)
        q = ".".join(reversed(parts))
    else:
        q = base
    if q.startswith(_ALIAS_PREFIXES):  # rare: test all at once before trying them one by one
        for old, new in _ALIASES.items():
            if q.startswith(old):
                q = new + q[len(old):]
    return q
