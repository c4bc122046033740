"""Hot, epoch and cold: how often a line runs, since a sync only hurts in the step.

Each line gets a frequency: `step` (it runs every training or inference step: hot), `epoch` (it
is reached from the step's code but runs once per epoch or every N steps: per-epoch evaluation,
checkpoints, logging under `if step % N == 0:`), or `once` (set-up, tests, one-off code: cold).

A function's frequency comes from what it is (roots) and from where it is called (the call graph
of every linted file, names resolved across files):

- roots: `forward` of a module, loss classes and functions, `training_step`-style methods, a
  function that runs a training step itself (`.backward()`, `optimizer.step()` outside any loop;
  not in a test), and the user's `hot-functions` patterns run every step; `train_one_epoch`-style
  and `validation_step`-style functions once per epoch;
- a call site's own place in its function (`local`) scales the caller's frequency: inside a loop
  that runs a training step or iterates a DataLoader (`step`, `data`), in the body of an outer loop
  around such a loop (`epoch`), under a periodic test in a step (`if it % N == 0:`: `periodic`).

A finding's context is the frequency of its function scaled by its own `local` the same way.
"""

from __future__ import annotations

import ast
import fnmatch
import re

# (what moved to often.py, still importable from here)
from syncscan.lint.often import _RANK, EPOCH, ONCE, STEP, frequency
from syncscan.lint.often import LOADER as LOADER
from syncscan.lint.often import dropped as dropped
from syncscan.lint.often import CONTEXT as CONTEXT
from syncscan.lint.often import CONTEXTS as CONTEXTS
from syncscan.lint.often import GENERIC_METHODS as GENERIC_METHODS
from syncscan.lint.often import context_of as context_of

# functions that run every step (module forward, losses, the step methods of trainers / Lightning)
STEP_FUNCTION_NAMES = frozenset({
    "forward", "training_step", "predict_step", "train_step", "forward_train", "forward_test",
    "compute_loss", "loss_fn", "criterion", "_forward", "forward_features", "forward_head",
    "training_step_end", "shared_step", "_shared_step", "step_fn", "inference_step", "prediction_step",
    "compute_losses", "get_loss", "get_losses",
})
# functions that run once per epoch (their step loops run every step)
EPOCH_FUNCTION_NAMES = frozenset({
    "train_one_epoch", "train_epoch", "validation_step", "test_step", "eval_step", "evaluation_step",
    "validation_step_end", "validate_one_epoch", "evaluate_one_epoch", "on_train_epoch_end",
    "on_validation_epoch_end", "validation_epoch_end", "training_epoch_end", "test_epoch_end",
})
# of them, the ones that train: their loop over the data is the training step, whatever it calls to step
# (`loss_scaler(loss, optimizer)`, a wrapper around `.backward()` the loop does not show)
TRAIN_EPOCH_NAMES = frozenset({"train_one_epoch", "train_epoch"})
HOT_FUNCTION_NAMES = STEP_FUNCTION_NAMES | EPOCH_FUNCTION_NAMES  # (the names that make a function a root)
_LOSSY = re.compile(r"loss|criterion", re.I)
_TEST_FILE = re.compile(r"(?:^|[/\\])(?:tests?[/\\]|test_[^/\\]*\.py$|[^/\\]*_test\.py$|conftest\.py$)")


def is_test(path: str, name: str | None = None) -> bool:
    """A test file (`tests/...`, `test_*.py`, `*_test.py`, `conftest.py`) or a test function."""
    return bool(_TEST_FILE.search(path)) or (name is not None and name.startswith("test"))


def function_root(name: str, class_name: str | None, extra_patterns: tuple[str, ...] = (),
                  steps_itself: bool = False, test: bool = False) -> str:
    """The frequency a function has by itself: STEP, EPOCH, or "" (only what its callers give)."""
    if name == "__init__":
        return ""
    qual = f"{class_name}.{name}" if class_name else name
    if any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(qual, p) for p in extra_patterns):
        return STEP
    if test:
        return ""
    if name in EPOCH_FUNCTION_NAMES:
        return EPOCH
    if name in STEP_FUNCTION_NAMES or _LOSSY.search(name) or steps_itself:
        return STEP
    if class_name and _LOSSY.search(class_name) and (not name.startswith("__") or name == "__call__"):
        return STEP  # (a loss object's `__call__` computes the loss, as a module's forward)
    return ""


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
    stack: list[ast.AST] = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(n, ast.Call) and _is_step_call(n):
            return True
        stack.extend(ast.iter_child_nodes(n))
    return False


# -- a line's local place, and frequencies ------------------------------------------------------
# `local`: "" (the function's own level), "step" (in a loop that runs a training step), "data" (in
# a loop over a DataLoader that runs no training step: evaluation, inference), "epoch" (in an outer
# loop around a step loop, outside it), "periodic" (under `if it % N == 0:` and the like), "export"
# (under `if torch.jit.is_tracing():` / `torch.onnx.is_in_onnx_export()`: only while exporting, once),
# "loader" (a function that only the DataLoader's loading runs: as "", and dropped when that is cold).

def enter_loop(local: str, kind: str) -> str:
    """The local place inside a loop of `kind` ("step", "data", "epoch", "") entered at `local`."""
    if not kind or local in ("step", "export"):
        return local
    if kind == "step":
        return "step"
    if kind == "data":
        return "epoch" if local in ("epoch", "periodic") else "data"
    return "epoch" if local in ("", "periodic") else local  # an epoch loop


def enter_periodic(local: str) -> str:
    """The local place under a periodic test (`if step % log_every == 0:`)."""
    if local == "export":
        return local
    return "epoch" if local in ("step", "data", "epoch") else "periodic"


_PERIODIC_WORDS = re.compile(r"(?:^|_)(?:every|interval|freq|frequency|period|log|logging|eval|save|ckpt|"
                             r"checkpoint|print|display|vis|visuali[sz]e|plot|sample|epoch)(?:$|_)", re.I)


def is_periodic(test: ast.AST) -> bool:
    """A test that holds only every N steps: `it % N == 0`, `not step % N`, `(i + 1) % N == 0`, or a
    flag / counter named for it (`if step % args.log_every == 0 and rank == 0:`, `if should_log:`,
    `if epoch_end:`)."""
    if isinstance(test, ast.BoolOp):
        return isinstance(test.op, ast.And) and any(is_periodic(v) for v in test.values)
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        o = test.operand
        return isinstance(o, ast.BinOp) and isinstance(o.op, ast.Mod)
    if isinstance(test, ast.Compare):
        return any(isinstance(x, ast.BinOp) and isinstance(x.op, ast.Mod) for x in (test.left, *test.comparators))
    if isinstance(test, ast.Name):
        return bool(_PERIODIC_WORDS.search(test.id)) and not test.id.startswith("is_train")
    if isinstance(test, ast.Attribute):
        return bool(_PERIODIC_WORDS.search(test.attr))
    return False


def frequencies(functions: dict[str, dict], max_rounds: int = 8) -> dict[str, str]:
    """Function key -> STEP / EPOCH / ONCE, from each function's root (`hot`: STEP, EPOCH or "") and its
    callers: `functions[key]` has `name`, `method`, `hot` and `calls` ((callee name, via, local place)
    per call; via: "" for `name(...)`, "self" / "attr" for `self.name(...)` / `x.name(...)`, "cls" for `x.name(...)` with `x` an
    instance of class `C` (`name` is then "C.name"), "def" for a
    function defined in the caller, named by its key, "wraps" for a decorator of the caller: the
    functions defined in the decorator run with the caller). A callee runs as often as its most
    frequent call site. (A data loop's frequency falls when its function's rises from once to epoch,
    so this is iterated to a fixed point, a few rounds at most.)"""
    by_func: dict[str, list[str]] = {}
    by_method: dict[str, list[str]] = {}
    nested_in: dict[str, list[str]] = {}  # function name -> the functions defined in functions of that name
    for key, f in functions.items():
        qual = key.rsplit("::", 1)[-1]
        if ".<locals>." in qual:  # (called by its name only from inside its function: see "def")
            nested_in.setdefault(qual.split(".<locals>.", 1)[0].rsplit(".", 1)[-1], []).append(key)
        else:
            (by_method if f["method"] else by_func).setdefault(f["name"], []).append(key)

    def targets(caller: str, name: str, via: str) -> list[str]:
        if via == "def":  # a function defined inside the caller: that one, by its key
            return [name] if name in functions else []
        if via == "wraps":  # the caller is decorated with `name`: the wrappers `name` defines
            return nested_in.get(name, [])
        if not via:  # a module's function, or one defined in the caller or beside it (in the same function)
            path, _, qual = caller.rpartition("::")
            local = [k for k in {f"{path}::{functions[caller]['name']}.<locals>.{name}",
                                 f"{path}::{qual.rsplit('.<locals>.', 1)[0].rsplit('.', 1)[-1]}.<locals>.{name}"}
                     if k in functions and ".<locals>." in k]
            return by_func.get(name, []) + local
        if via == "cls":  # `obj.update(...)`, `obj` an instance of `C`: `name` is "C.update"
            meth = name.rpartition(".")[2]
            return [k for k in by_method.get(meth, []) if ("." + k.rpartition("::")[2]).endswith("." + name)]
        if via != "self" and name in GENERIC_METHODS:
            return []
        return by_method.get(name, []) + (by_func.get(name, []) if via != "self" else [])

    edges: list[tuple[str, str, str]] = []  # (caller, callee, local)
    for key, f in functions.items():
        for call in f["calls"]:
            name, via, local = call if len(call) == 3 else (*call, "")
            for t in targets(key, name, via):
                if t != key:
                    edges.append((key, t, local))
    roots = {k: (f["hot"] if isinstance(f["hot"], str) else STEP if f["hot"] else "") or ONCE
             for k, f in functions.items()}
    freq = dict(roots)
    for _ in range(max_rounds):
        new = dict(roots)
        for caller, callee, local in edges:
            got = frequency(freq[caller], local)
            if _RANK[got] > _RANK[new[callee]]:
                new[callee] = got
        # what callers give flows on: repeat until callees of callees settle
        if new == freq:
            break
        freq = new
    return freq
