"""Exact source lines of host syncs, from torch's sync debug mode.

`torch.cuda.set_sync_debug_mode("warn")` issues a warning each time c10 makes the host wait
(copies to the host, `nonzero`, boolean masks, stream syncs). The warning itself points into
torch or at a C call, so the hook walks the Python stack up to the first frame outside torch and
syncscan: that is the user's line, even for `x[m]` or `if t:` which have no Python call of
their own in a trace. Warnings raised in backward are replayed by autograd in the thread that
called `backward()`, so they land on that line. No site ever points into syncscan's own files.

The site's `op` is the aten op being run, read off the instruction the innermost Python frame
(user code or torch's Python code) is executing when the warning arrives (see `op_at`); None
where the instruction does not tell (a call of an unknown function, `loss.backward()`).
"""

from __future__ import annotations

import dis
import functools
import linecache
import os
import re
import sys
import threading
import time
import warnings

# c10's text for the "warn" mode (torch 2.0 to 2.14)
SYNC_WARNING = re.compile(r"called a synchronizing CUDA operation")

_OWN_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../syncscan
# the warnings module's Python half, between the C warning and the hook (3.14: _py_warnings)
_WARNINGS_FILES = ("warnings.py", "_py_warnings.py")


def _own_dirs() -> tuple[str, ...]:
    """syncscan's package folder, as imported and with links resolved."""
    return tuple({_OWN_DIR + os.sep, os.path.realpath(_OWN_DIR) + os.sep})


def _library_dirs() -> tuple[str, ...]:
    dirs = list(_own_dirs())
    for name in ("torch", "torchvision", "torchaudio"):
        file = getattr(sys.modules.get(name), "__file__", None)
        if file:
            dirs.append(os.path.dirname(os.path.abspath(file)) + os.sep)
    stdlib = os.path.dirname(os.path.abspath(warnings.__file__)) + os.sep
    dirs.extend(stdlib + f for f in _WARNINGS_FILES)
    return tuple(dirs)


def _is_internal(filename: str, internal: tuple[str, ...]) -> bool:
    if filename.startswith("<"):
        return True
    path = os.path.abspath(filename)
    return path.startswith(internal) or os.path.realpath(path).startswith(internal)


def user_frame(frame, internal: tuple[str, ...] | None = None):
    """The first frame, walking outwards, whose file is not torch's, syncscan's or `warnings`."""
    internal = internal or _library_dirs()
    while frame is not None:
        if not _is_internal(frame.f_code.co_filename, internal):
            return frame
        frame = frame.f_back
    return None


# -- the op being run ------------------------------------------------------------------------

# callee name -> the aten op torch records for it (checked on torch 2.14's CPU traces: the
# op, or the op the call goes through, is in the chain of the sync it causes)
CALL_OPS = {
    "item": "aten::item", "float": "aten::item", "int": "aten::item", "complex": "aten::item",
    "bool": "aten::is_nonzero", "is_nonzero": "aten::is_nonzero",
    "nonzero": "aten::nonzero", "argwhere": "aten::argwhere", "where": "aten::where",
    "_unique2": "aten::_unique2", "_unique": "aten::_unique", "unique_dim": "aten::unique_dim",
    "unique_consecutive": "aten::unique_consecutive", "masked_select": "aten::masked_select",
    "bincount": "aten::bincount", "equal": "aten::equal", "allclose": "aten::allclose",
    "repeat_interleave": "aten::repeat_interleave", "masked_fill": "aten::masked_fill",
    "masked_fill_": "aten::masked_fill_", "index_put": "aten::index_put",
    "index_put_": "aten::index_put_", "one_hot": "aten::one_hot",
    # copies: Tensor.cpu/cuda/tolist go through Tensor.to
    "to": "aten::to", "cpu": "aten::to", "cuda": "aten::to", "tolist": "aten::to", "copy_": "aten::copy_",
}
_CALLS = {"CALL", "CALL_KW", "PRECALL", "CALL_FUNCTION_EX"}
_LOADS = {"LOAD_ATTR", "LOAD_METHOD", "LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF",
          "LOAD_CLASSDEREF", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_SUPER_ATTR"}


@functools.lru_cache(maxsize=512)
def _instructions(code) -> tuple[list, dict]:
    ins = list(dis.get_instructions(code))
    return ins, {x.offset: k for k, x in enumerate(ins)}


def _callee(ins: list, k: int) -> str | None:
    """The name called by the call instruction ins[k]: the load that starts where the call
    does and ends last before it (`x.y.nonzero(...)` -> nonzero); None for anything else
    (`f(a)(b)`, or Python < 3.11, whose instructions carry no columns)."""
    pos = getattr(ins[k], "positions", None)
    if pos is None or pos.lineno is None:
        return None
    best = None
    for x in ins[:k]:
        p = x.positions
        if p is None or (p.lineno, p.col_offset) != (pos.lineno, pos.col_offset):
            continue
        if (p.end_lineno, p.end_col_offset) >= (pos.end_lineno, pos.end_col_offset):
            continue
        if x.opname == "KW_NAMES":  # shares the callee's position
            continue
        if best is None or (p.end_lineno, p.end_col_offset) >= (best.positions.end_lineno,
                                                                   best.positions.end_col_offset):
            best = x
    if best is None or best.opname not in _LOADS or not isinstance(best.argval, str):
        return None
    return best.argval


def op_at(frame) -> str | None:
    """The aten op that the frame's current instruction runs, where the instruction tells:
    `x[m]` -> aten::index, `x[m] = v` -> aten::index_put_, `if t:` / `not t` ->
    aten::is_nonzero, a call of a name in CALL_OPS (`t.item()`, `float(t)`, `m.nonzero()`)."""
    try:
        ins, at = _instructions(frame.f_code)
    except (TypeError, ValueError):
        return None
    k = at.get(frame.f_lasti)
    if k is None:
        return None
    op = ins[k].opname
    if op == "BINARY_SUBSCR" or (op == "BINARY_OP" and ins[k].argrepr == "[]"):
        return "aten::index"
    if op == "STORE_SUBSCR":
        return "aten::index_put_"
    if op in ("TO_BOOL", "UNARY_NOT") or (op.startswith(("POP_JUMP_", "JUMP_IF_")) and "NONE" not in op):
        return "aten::is_nonzero"
    if op in _CALLS:
        return CALL_OPS.get(_callee(ins, k) or "")
    return None


def op_frame(frame, warnings_files: tuple[str, ...]):
    """The innermost frame that is not the warnings module's: the one whose instruction ran
    the op that synced (None when that is syncscan's own code)."""
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(warnings_files):
        frame = frame.f_back
    if frame is not None and _is_internal(frame.f_code.co_filename, _own_dirs()) \
            and not frame.f_code.co_filename.startswith("<"):
        return None
    return frame


# -- the call chain --------------------------------------------------------------------------

MAX_CHAIN = 8
_SITE_PACKAGES = (os.sep + "site-packages" + os.sep, os.sep + "dist-packages" + os.sep)


def _stdlib_dir() -> str:
    return os.path.dirname(os.path.abspath(os.__file__)) + os.sep


def is_library_file(filename: str, internal: tuple[str, ...]) -> bool:
    """torch's and syncscan's files (`internal`), installed packages and the standard library:
    not the user's own code, though a wrapper library's line is still worth showing."""
    if _is_internal(filename, internal):
        return True
    path = os.path.abspath(filename)
    return any(d in path for d in _SITE_PACKAGES) or path.startswith(_stdlib_dir())


def call_chain(frame, internal: tuple[str, ...], limit: int = MAX_CHAIN) -> list[dict]:
    """The Python call chain of a sync, outermost first, as schema.CallFrame records: from the
    frame that ran the op (often torch's own Python: GradScaler.step, clip_grad_norm_) out to
    the first frame of the user's own code, through any wrapper library (timm, Lightning)
    between them. syncscan's frames and generated code are left out."""
    own = _own_dirs()
    out: list[dict] = []
    while frame is not None and len(out) < limit:
        filename = frame.f_code.co_filename
        if not filename.startswith("<") and not _is_internal(filename, own):
            library = is_library_file(filename, internal)
            out.append({"file": display_path(filename), "line": frame.f_lineno,
                        "function": getattr(frame.f_code, "co_qualname", frame.f_code.co_name),
                        "library": library})
            if not library:
                break
        frame = frame.f_back
    out.reverse()
    return out


def site_record(op, frame, chain_from, step, order: int, internal: tuple[str, ...]) -> dict:
    """One recorded sync: its op, the user's line (`frame`: the first frame outside torch and
    syncscan) and the call chain from the frame that ran the op (`chain_from`)."""
    site = {"op": op, "file": None, "line": None, "function": None, "step": step, "order": order,
            "time_ns": time.time_ns(), "thread": threading.current_thread().name}
    if frame is not None:
        site.update(file=display_path(frame.f_code.co_filename), line=frame.f_lineno,
                    function=getattr(frame.f_code, "co_qualname", frame.f_code.co_name),
                    code=linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip() or None)
    if chain_from is not None:
        chain = call_chain(chain_from, internal)
        if len(chain) > 1:  # more than the user's line alone
            site["frames"] = chain
    return site


def display_path(filename: str) -> str:
    """Relative to the current folder when under it (as the user typed it), else absolute."""
    path = os.path.abspath(filename)
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


class SiteRecorder:
    """Collects one site per sync warning while installed; `step_of()` tells which step is on."""

    def __init__(self, step_of):
        self.step_of = step_of
        self.sites: list[dict] = []
        self._order: dict[int, int] = {}
        self._previous = None
        self._filters = None
        self._internal: tuple[str, ...] = ()
        self._skip: tuple[str, ...] = ()

    def install(self) -> None:
        self._internal = _library_dirs()
        stdlib = os.path.dirname(os.path.abspath(warnings.__file__)) + os.sep
        self._skip = tuple(stdlib + f for f in _WARNINGS_FILES)
        self._previous = warnings.showwarning
        self._filters = warnings.filters[:]
        # "always": the default filter would show a warning once per location only
        warnings.filterwarnings("always", message=SYNC_WARNING.pattern)
        warnings.showwarning = self._showwarning

    def uninstall(self) -> None:
        if self._previous is not None:
            warnings.showwarning = self._previous
            warnings.filters[:] = self._filters  # type: ignore[index]
            # invalidates the per-module "once" caches, as warnings.filterwarnings itself does
            getattr(warnings, "_filters_mutated", lambda: None)()
            self._previous = None

    def _showwarning(self, message, category, filename, lineno, file=None, line=None):
        if not SYNC_WARNING.search(str(message)):
            previous = self._previous or warnings.showwarning
            return previous(message, category, filename, lineno, file, line)
        caller = sys._getframe(1)
        frame = user_frame(caller, self._internal)
        inner = op_frame(caller, self._skip)
        step = self.step_of()
        order = self._order.get(step, 0)
        self._order[step] = order + 1
        site = site_record(op_at(inner) if inner is not None else None, frame, inner, step, order,
                           self._internal)
        if frame is None and filename and not _is_internal(filename, _own_dirs()):
            site.update(file=filename, line=lineno)  # no frame outside torch: torch's own location
        self.sites.append(site)
        return None
