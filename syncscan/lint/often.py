"""How often a line runs (hotpath.py says how it is found): the three frequencies, and a line's
frequency and context from its function's frequency and its place in it. Apart from hotpath
(which needs ast and re): what the project's call graph and a lint served from the cache need of
it."""

from __future__ import annotations

STEP, EPOCH, ONCE = "step", "epoch", "once"
LOADER = "loader"  # a finding's place in code that only the DataLoader runs (lint/loader_code.py)
_RANK = {ONCE: 0, EPOCH: 1, STEP: 2}
CONTEXT = {STEP: "hot", EPOCH: "epoch", ONCE: "cold"}
CONTEXTS = ("hot", "epoch", "cold")

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


def by_class(name: str) -> bool:
    """A method name followed through the class of the instance it is called on (`obj.update(...)`
    with `obj = Meter()`): too generic to follow by name; not a dunder other than `__call__` (no one
    calls `obj.__init__()`, and a group per class for each would cost the call graph memory)."""
    return name in GENERIC_METHODS and (not name.startswith("__") or name == "__call__")


def frequency(fn_freq: str, local: str) -> str:
    """How often a line runs: its function's frequency scaled by the line's local place."""
    if not local or local == LOADER:
        return fn_freq
    if local == "step":
        return STEP
    if local == "data":
        return EPOCH if fn_freq == EPOCH else STEP
    if local == "epoch":
        return STEP if fn_freq == STEP else EPOCH
    if local == "export":
        return ONCE
    return EPOCH if fn_freq == STEP else fn_freq  # periodic


def dropped(finding) -> bool:
    """A settled finding in code that only the DataLoader runs and nothing else (cold): its tensors
    are the loader's host tensors, so it is a false flag (lint/loader_code.py)."""
    return finding.local == LOADER and finding.context == "cold"


def context_of(fn_freq: str, local: str) -> str:
    """"hot" / "epoch" / "cold" for a line of a function of frequency `fn_freq` at place `local`."""
    return CONTEXT[frequency(fn_freq, local)]
