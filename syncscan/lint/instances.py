"""What an attribute of one instance of a class of the module holds, from the calls made on that instance.

`top1 = AverageMeter()`, `top1.update(acc1[0], n)`, then `f"{top1.avg:.2f}"`: `avg` is computed from `sum`, which
`update` adds `val * n` to, and this instance's `update` is handed a tensor, so `top1.avg` is a tensor. Another
instance of the same class, `losses.update(loss.item(), n)`, holds Python numbers: the answer is per instance, not
per class (the class-level kinds, FileFacts.class_attrs, merge both callers into a tensor).
"""

from __future__ import annotations

import ast

from syncscan.lint.tree import FUNCS, FunctionNode


def _self_attr(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return node.attr
    return None


def attribute_feeds(src, cls: ast.ClassDef) -> dict[str, frozenset[tuple[str, str, bool]]]:
    """attr -> the (method, parameter, as is) triples whose values reach `self.<attr>`: assigned as they are
    (`self.val = val`: True), or added to it or computed from them (`self.sum += val * n`), directly or through
    another attribute (`self.avg = self.sum / self.count`). `src` is the file's tree facts (`own_nodes`). Per
    class: FileFacts.per."""
    direct: dict[str, set[tuple[str, str, bool]]] = {}
    via: dict[str, set[str]] = {}  # attr -> the attributes its values are computed from
    for m in cls.body:
        if not isinstance(m, FUNCS):
            continue
        params = {p.arg for p in m.args.posonlyargs + m.args.args + m.args.kwonlyargs}
        for n in src.own_nodes(m):
            if n.__class__ is ast.Assign and len(n.targets) == 1:
                target, value = n.targets[0], n.value
            elif n.__class__ is ast.AugAssign:
                target, value = n.target, n.value
            else:
                continue
            attr = _self_attr(target)
            if attr is None:
                continue
            as_is = n.__class__ is ast.Assign and isinstance(value, ast.Name)
            for x in ast.walk(value):
                if isinstance(x, ast.Name) and x.id in params and x.id != "self":
                    direct.setdefault(attr, set()).add((m.name, x.id, as_is))
                elif (a := _self_attr(x)) is not None and a != attr:
                    via.setdefault(attr, set()).add(a)
    out = {a: set(v) for a, v in direct.items()}
    for _ in range(3):  # (attributes of attributes: a few rounds reach every chain an accumulator has)
        for attr, sources in via.items():
            for s in sources:
                if s in direct:
                    out.setdefault(attr, set()).update((m, p, False) for m, p, _ in out.get(s, ()))
    return {a: frozenset(v) for a, v in out.items()}


def positional_params(cls_method: FunctionNode) -> tuple[str, ...]:
    """A method's positional parameters, `self` left out."""
    a = cls_method.args
    return tuple(p.arg for p in a.posonlyargs + a.args)[1:]


def handed_to(params: tuple[str, ...], call: ast.Call, param: str) -> ast.AST | None:
    """The argument `call` hands `param` of a method whose positional parameters (`self` left out) are `params`."""
    kw = next((k.value for k in call.keywords if k.arg == param), None)
    if kw is not None:
        return kw
    if param in params:
        i = params.index(param)
        if i < len(call.args) and not any(isinstance(x, ast.Starred) for x in call.args[:i + 1]):
            return call.args[i]
    return None
