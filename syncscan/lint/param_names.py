"""The parameter names a module uses for tensors, for a probable kind of the same name elsewhere in it.

A module names its values consistently: if `_step(t0, dt)` annotates `t0` as a tensor or uses it as
only a tensor can be used (`t0.unsqueeze(0)`), `_interp(t0, t1, t)` with no annotation probably takes a
tensor `t0` too. The kind is only probable (a low-confidence finding, not in the default output), and
any sign that the name holds a host value somewhere in the module (an `int` / `float` / `bool` / `str`
annotation, a Python number as its default) withdraws it.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from syncscan.lint.tensors import HOST, TENSOR, annotation_kind
from syncscan.lint.tree import param_defaults

if TYPE_CHECKING:
    from syncscan.lint.facts import FileFacts


def tensor_param_names(file: FileFacts) -> frozenset[str]:
    """Names that some function of the module takes as a tensor and none as a host value (memoise
    with `file.get`)."""
    kinds = file.kinds
    tensor: set[str] = set()
    host: set[str] = set()
    for fn in file.index.functions:
        a = fn.args
        params = a.posonlyargs + a.args + a.kwonlyargs
        defaults = param_defaults(a)
        used = False
        for p in params:
            if p.arg in ("self", "cls"):
                continue
            k = annotation_kind(p.annotation, file.imports)[0] if p.annotation is not None else None
            d = defaults.get(p.arg)
            if k == HOST or isinstance(d, ast.Constant) and d.value is not None:
                host.add(p.arg)
            elif k == TENSOR:
                tensor.add(p.arg)
            elif p.annotation is None:
                if not used:
                    kinds.note_usage(fn)
                    used = True
                if id(p) in kinds.param_usage:
                    tensor.add(p.arg)
    return frozenset(tensor - host)
