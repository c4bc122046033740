"""Hot and cold: a sync only hurts in the training or inference step.

Locally hot: a loop body that calls `.backward()` / `optimizer.step()` or iterates a DataLoader,
`forward` of a module, loss classes and functions, `training_step`-style methods, functions that
call `.backward()` themselves, and user patterns from config. Then hotness flows along calls:
a function of the linted tree called from anything hot is hot (resolved by name across files).
"""

from __future__ import annotations

import ast
import fnmatch
import re

HOT_FUNCTION_NAMES = frozenset({
    "forward", "training_step", "validation_step", "test_step", "predict_step", "train_step",
    "eval_step", "evaluation_step", "train_one_epoch", "train_epoch", "forward_train", "forward_test",
    "compute_loss", "loss_fn", "criterion", "_forward", "forward_features", "forward_head",
    "training_step_end", "validation_step_end", "shared_step", "_shared_step", "step_fn",
    "inference_step", "prediction_step", "compute_losses", "get_loss", "get_losses",
})
_LOSSY = re.compile(r"loss|criterion", re.I)
# method names too generic to follow from `obj.name(...)` to every method of that name
GENERIC_METHODS = frozenset({
    "step", "update", "append", "extend", "get", "items", "keys", "values", "add", "run", "set", "pop",
    "__call__", "__init__", "format", "join", "split", "copy", "clear", "write", "read", "close", "item",
    "to", "cuda", "cpu", "train", "eval", "zero_grad", "backward", "state_dict", "load_state_dict",
    "parameters", "named_parameters", "modules", "children", "apply", "log", "info", "debug", "warning",
    "sum", "mean", "view", "reshape", "size", "numel", "float", "long", "int", "half", "detach",
    "clone", "contiguous", "permute", "transpose", "squeeze", "unsqueeze", "flatten", "max", "min",
    "register_buffer", "register_parameter", "add_module", "setdefault", "sort", "index", "count",
})


def function_is_hot(name: str, class_name: str | None, extra_patterns: tuple[str, ...] = ()) -> bool:
    if name == "__init__":
        return False
    if name in HOT_FUNCTION_NAMES or _LOSSY.search(name):
        return True
    if class_name and _LOSSY.search(class_name) and not name.startswith("__"):
        return True
    qual = f"{class_name}.{name}" if class_name else name
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(qual, p) for p in extra_patterns)


def _is_step_call(node: ast.Call) -> bool:
    """`.backward()`, `optimizer.step()`, `scaler.step(opt)`, `opt.step()` ..."""
    f = node.func
    if not isinstance(f, ast.Attribute):
        return False
    if f.attr == "backward":
        return True
    if f.attr == "step":
        recv = f.value
        name = recv.id if isinstance(recv, ast.Name) else recv.attr if isinstance(recv, ast.Attribute) else ""
        name = name.lower()
        return "optim" in name or "opt" == name or name.startswith("opt") or "scaler" in name
    return f.attr in ("manual_backward",)


def body_calls_step(stmts: list[ast.stmt]) -> bool:
    """Whether these statements (not nested functions or classes) run a training step."""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.Call) and _is_step_call(n):
            return True
        stack.extend(ast.iter_child_nodes(n))
    return False


def resolve_hot(functions: dict[str, dict], seeds: list[tuple[str, bool]]) -> set[str]:
    """Function keys that are hot: locally hot ones, plus everything reachable by calls from
    them or from the seed calls made in hot loops. `functions[key]` has `name`, `method`, `hot`,
    `calls` (list of (callee name, via attribute))."""
    by_func: dict[str, list[str]] = {}
    by_method: dict[str, list[str]] = {}
    for key, f in functions.items():
        (by_method if f["method"] else by_func).setdefault(f["name"], []).append(key)

    def targets(name: str, via_attr: bool, self_call: bool) -> list[str]:
        if not via_attr:
            return by_func.get(name, [])
        if not self_call and name in GENERIC_METHODS:
            return []
        return by_method.get(name, []) + (by_func.get(name, []) if not self_call else [])

    hot = {k for k, f in functions.items() if f["hot"]}
    work = list(hot)
    for name, via in seeds:
        for t in targets(name, via != "", via == "self"):
            if t not in hot:
                hot.add(t)
                work.append(t)
    while work:
        key = work.pop()
        for name, via in functions[key]["calls"]:
            for t in targets(name, via != "", via == "self"):
                if t not in hot:
                    hot.add(t)
                    work.append(t)
    return hot
