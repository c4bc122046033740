"""`no_sync()`: make code fail when it makes the host wait for a CUDA GPU, naming the line.

Three layers, all active while a guard is:

1. `torch.cuda.set_sync_debug_mode("error")`: c10 raises at its copy-and-sync and
   stream-synchronize points (`.item()`, `nonzero`, boolean masks, blocking copies...).
2. A `TorchDispatchMode` that sees every aten op on its way to the kernel. It turns the bare
   debug-mode error into a `HostSyncError` that names the op and the caller's line, and it
   flags the ops the debug mode misses: `unique(dim=...)` (thrust waits inside) and
   `non_blocking=True` copies between the GPU and pageable host memory (they block anyway).
3. Patches of the explicit waits the debug mode misses or names badly:
   `torch.cuda.synchronize()`, `torch.accelerator.synchronize()`, `Event.synchronize()`,
   `Stream.synchronize()`, `torch.cuda.empty_cache()`.

The debug mode and the patches are process-wide; the dispatch mode and the guard stack are
per thread (the dispatch mode follows autograd into its worker threads). See docs/guard.md.
torch is imported only when a guard is entered, so `import syncscan` stays light.
"""

from __future__ import annotations

import contextlib
import functools
import linecache
import os
import sys
import threading
import warnings
from dataclasses import dataclass
from typing import Literal

from syncscan.catalog import RULE_NAMES, rule_for_op

__all__ = [
    "HostSyncError", "HostSyncWarning", "SyncEvent", "SyncGuardUnavailable",
    "SyncGuardUnavailableWarning", "NoSync", "AllowSync", "no_sync", "allow_sync",
    "unavailable_reason",
]

# c10's text, for both the "error" mode's RuntimeError and the "warn" mode's warning
SYNC_MESSAGE = "called a synchronizing CUDA operation"
_DEBUG_OFF, _DEBUG_ERROR = 0, 2


class HostSyncError(AssertionError, RuntimeError):
    """Raised where guarded code makes the host wait for the GPU.

    An AssertionError so that pytest and unittest report a failure (not an error); also a
    RuntimeError, the type torch's own debug mode raises, for code that already catches that.
    """

    def __init__(self, event: "SyncEvent"):
        super().__init__(str(event))
        self.event = event


class HostSyncWarning(UserWarning):
    """Issued for each sync under `no_sync(mode="warn")`."""


class SyncGuardUnavailable(RuntimeError):
    """no_sync() cannot check anything here (no CUDA GPU, or no torch)."""


class SyncGuardUnavailableWarning(RuntimeWarning):
    """no_sync(strict=False) ran its code unguarded."""


@dataclass
class SyncEvent:
    """One host-device sync: what synced, and the user's line that caused it."""

    what: str  # "aten::nonzero", "torch.cuda.synchronize()"
    rule: str | None = None  # lint rule code (syncscan.catalog)
    detail: str | None = None
    filename: str | None = None
    lineno: int | None = None
    function: str | None = None
    code: str | None = None
    in_backward: bool = False
    thread: str = ""

    @property
    def location(self) -> str:
        if self.filename is None:
            return "<unknown location>"
        return f"{_display_path(self.filename)}:{self.lineno}"

    def __str__(self) -> str:
        head = f"host waits for the GPU: {self.what}"
        if self.rule:
            head += f" [{self.rule} {RULE_NAMES.get(self.rule, '')}]".rstrip()
        if self.detail:
            head += f": {self.detail}"
        where = "in backward, called from" if self.in_backward else "at"
        lines = [head, f"  {where} {self.location}" + (f" in {self.function}" if self.function else "")]
        if self.code:
            lines.append(f"    {self.code}")
        if self.rule:
            lines.append(f"  (`syncscan rules {self.rule}` shows the sync-free rewrite; "
                         "wrap a known, accepted sync in syncscan.allow_sync())")
        return "\n".join(lines)


# ----------------------------------------------------------------------------- availability

def unavailable_reason() -> str | None:
    """Why no guard can run here, or None when torch sees a CUDA GPU."""
    try:
        import torch
    except ImportError as exc:
        return f"torch is not installed ({exc})"
    if getattr(torch.version, "cuda", None) is None:
        return f"torch {torch.__version__} is built without CUDA"
    if not torch.cuda.is_available():
        return f"torch.cuda.is_available() is False (torch {torch.__version__})"
    return None


def _under_pytest() -> bool:
    return "PYTEST_CURRENT_TEST" in os.environ and "pytest" in sys.modules


# Indirections so CPU tests can stand in for the CUDA-only calls.
def _get_debug_mode() -> int:
    import torch

    return torch.cuda.get_sync_debug_mode()


def _set_debug_mode(mode: int) -> None:
    import torch

    with warnings.catch_warnings():  # "a prototype feature...": docs/guard.md says what it misses
        warnings.filterwarnings("ignore", message="Synchronization debug mode is a prototype")
        torch.cuda.set_sync_debug_mode(mode)


@contextlib.contextmanager
def _debug_mode_off():
    previous = _get_debug_mode()
    _set_debug_mode(_DEBUG_OFF)
    try:
        yield
    finally:
        _set_debug_mode(previous)


# ----------------------------------------------------------------------------- locating the caller

_internal_cache: dict[str, bool] = {}


def _internal_dirs() -> tuple[str, ...]:
    dirs = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]  # syncscan/
    torch_file = getattr(sys.modules.get("torch"), "__file__", None)
    if torch_file:
        dirs.append(os.path.dirname(os.path.abspath(torch_file)))
    return tuple(d + os.sep for d in dirs)


def _is_internal(filename: str) -> bool:
    hit = _internal_cache.get(filename)
    if hit is None:
        path = os.path.abspath(filename)
        hit = (filename.startswith("<frozen") or path == os.path.abspath(contextlib.__file__)
               or path.startswith(_internal_dirs()))
        _internal_cache[filename] = hit
    return hit


def _user_frame(frame):
    """The innermost frame outside torch, syncscan and contextlib, or None."""
    while frame is not None and _is_internal(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _user_frame_in_traceback(tb):
    """The deepest frame of a traceback outside torch and syncscan."""
    found = None
    while tb is not None:
        if not _is_internal(tb.tb_frame.f_code.co_filename):
            found = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _trim_traceback(tb) -> None:
    """End a HostSyncError's traceback at the user's line: the frames below it (torch's
    dispatch, syncscan's own) say nothing the message does not. SYNCSCAN_DEBUG=1 keeps them."""
    if os.environ.get("SYNCSCAN_DEBUG"):
        return
    last_user = None
    while tb is not None:
        if not _is_internal(tb.tb_frame.f_code.co_filename):
            last_user = tb
        tb = tb.tb_next
    if last_user is not None:
        last_user.tb_next = None


def _display_path(filename: str) -> str:
    try:
        rel = os.path.relpath(filename)
    except ValueError:  # another drive (Windows)
        return filename
    return filename if rel.startswith(os.pardir) else rel


def _in_backward() -> bool:
    torch = sys.modules.get("torch")
    try:
        return torch is not None and torch._C._current_graph_task_id() != -1
    except AttributeError:
        return False


def _backward_node() -> str | None:
    """The autograd node running now ("IndexBackward0"), in backward; else None."""
    torch = sys.modules.get("torch")
    try:
        node = torch._C._current_autograd_node() if torch is not None else None
        return node.name() if node is not None else None
    except (AttributeError, RuntimeError):
        return None


def _make_event(what, rule, detail, owner: int | None) -> SyncEvent:
    """Describe a sync happening now, on this thread, on behalf of the guard's owner thread."""
    frame = _user_frame(sys._getframe(1))
    if frame is None and owner is not None and owner != threading.get_ident():
        # an autograd worker thread: the owner thread is blocked in `loss.backward()`
        frame = _user_frame(sys._current_frames().get(owner))
    event = SyncEvent(what=what, rule=rule, detail=detail, in_backward=_in_backward(),
                      thread=threading.current_thread().name)
    if event.in_backward:
        node = _backward_node()
        if node is not None:  # e.g. IndexBackward0: the forward op behind the sync
            event.what = f"{what} in {node}"
            event.rule = rule_for_op(node) or rule  # the forward op's rule: IndexBackward0 -> SYN302
    if frame is not None:
        _set_location(event, frame, frame.f_lineno)
    return event


def _set_location(event: SyncEvent, frame, lineno: int) -> None:
    event.filename = frame.f_code.co_filename
    event.lineno = lineno
    event.function = frame.f_code.co_name
    event.code = linecache.getline(event.filename, lineno).strip() or None


# ----------------------------------------------------------------------------- guard state

class _ThreadState(threading.local):
    def __init__(self):
        self.stack: list = []  # NoSync and AllowSync entries, innermost last
        self.mode = None  # the dispatch mode pushed by this thread's outermost guard


_tls = _ThreadState()
_lock = threading.RLock()
_active = 0  # guards entered, over all threads
_saved_debug_mode = _DEBUG_OFF  # the debug mode before the first guard
_patches: list[tuple[object, str, object, bool, object]] = []


def _apply_debug_mode(stack: list) -> None:
    """Set the process-wide debug mode for the innermost entry of this thread's stack."""
    with _lock:
        if stack and isinstance(stack[-1], NoSync):
            _set_debug_mode(_DEBUG_ERROR)
        else:
            _set_debug_mode(_saved_debug_mode)


def _current_guard() -> "NoSync | None":
    """The guard checking this thread now (None when none, or inside allow_sync())."""
    stack = _tls.stack
    if not stack:
        stack = _stack_from_dispatch_modes()
    if stack and isinstance(stack[-1], NoSync):
        return stack[-1]
    return None


def _stack_from_dispatch_modes() -> list:
    # An autograd worker thread inherits the owner thread's dispatch modes, not its _tls.
    try:
        from torch.utils._python_dispatch import _get_current_dispatch_mode_stack
    except ImportError:
        return []
    for mode in reversed(_get_current_dispatch_mode_stack()):
        if isinstance(mode, _mode_class()):
            return mode.stack
    return []


def _on_sync(guard: "NoSync", what: str, rule: str | None, detail: str | None, cause=None):
    """Record a sync; raise HostSyncError in "raise" mode, warn in "warn" mode."""
    __tracebackhide__ = True
    event = _make_event(what, rule, detail, guard._owner)
    guard.syncs.append(event)
    if guard.mode == "raise":
        raise HostSyncError(event) from cause
    warnings.warn_explicit(str(event), HostSyncWarning, event.filename or "<unknown>",
                           event.lineno or 0)


# ----------------------------------------------------------------------------- patches

def _patch_targets(torch) -> list[tuple[object, str, str, str]]:
    """(owner, attribute, what the user called, rule) for each explicit wait to patch."""
    targets = []
    # torch.cuda.synchronize() / empty_cache() call these at call time, so patching the
    # bindings also catches `from torch.cuda import synchronize` done before the guard.
    for owner, name, what, rule in (
        (torch._C, "_cuda_synchronize", "torch.cuda.synchronize()", "SYN501"),
        (torch._C, "_accelerator_synchronizeDevice", "torch.accelerator.synchronize()", "SYN501"),
        (torch._C, "_cuda_emptyCache", "torch.cuda.empty_cache()", "SYN503"),
        (torch.cuda.Event, "synchronize", "torch.cuda.Event.synchronize()", "SYN502"),
        (torch.cuda.Stream, "synchronize", "torch.cuda.Stream.synchronize()", "SYN502"),
    ):
        if hasattr(owner, name):
            targets.append((owner, name, what, rule))
    return targets


def _wrap_wait(original, what: str, rule: str):
    @functools.wraps(original)
    def patched(*args, **kwargs):
        __tracebackhide__ = True
        guard = _current_guard()
        if guard is None:
            return original(*args, **kwargs)
        _on_sync(guard, what, rule, None)
        with _debug_mode_off():  # "warn" mode: Stream.synchronize would trip the debug mode too
            return original(*args, **kwargs)

    patched.__syncscan_original__ = original  # type: ignore[attr-defined]
    return patched


def _install_patches() -> None:
    import torch

    for owner, name, what, rule in _patch_targets(torch):
        own = name in getattr(owner, "__dict__", {})
        original = getattr(owner, name)
        patched = _wrap_wait(original, what, rule)
        setattr(owner, name, patched)
        _patches.append((owner, name, original, own, patched))


def _remove_patches() -> None:
    while _patches:
        owner, name, original, own, patched = _patches.pop()
        if getattr(owner, name, None) is not patched:
            continue  # someone patched over us since; leave theirs in place
        if own or not isinstance(owner, type):
            setattr(owner, name, original)
        else:
            delattr(owner, name)


# ----------------------------------------------------------------------------- dispatch mode

_mode_cls = None
_op_names: dict = {}
_UNIQUE_DIM = ("aten::unique_dim", "aten::unique_dim_consecutive")


def _op_name(func) -> str:
    name = _op_names.get(func)
    if name is None:
        schema = getattr(func, "_schema", None)
        name = schema.name if schema is not None else str(func)
        _op_names[func] = name
    return name


def _is_pageable(t) -> bool:
    return t.device.type == "cpu" and not t.is_pinned()


def _missed_sync(func, args, kwargs):
    """(rule, detail) when this op waits for the GPU although the debug mode won't say so."""
    import torch

    name = _op_name(func)
    if name in _UNIQUE_DIM:
        x = args[0] if args else kwargs.get("self")
        if isinstance(x, torch.Tensor) and x.is_cuda:
            return "SYN305", "unique with dim= (thrust waits inside; the debug mode misses it)"
    elif name == "aten::_to_copy":
        src, device = args[0] if args else kwargs.get("self"), kwargs.get("device")
        if (kwargs.get("non_blocking") and device is not None and isinstance(src, torch.Tensor)
                and torch.device(device).type == "cuda" and _is_pageable(src)):
            return "SYN204", ("non_blocking=True copy from pageable host memory still blocks "
                              "the host; pin_memory() the source")
    elif name == "aten::copy_":
        dst = args[0] if args else kwargs.get("self")
        src = args[1] if len(args) > 1 else kwargs.get("src")
        non_blocking = args[2] if len(args) > 2 else kwargs.get("non_blocking", False)
        if non_blocking and isinstance(dst, torch.Tensor) and isinstance(src, torch.Tensor):
            if dst.is_cuda and _is_pageable(src):
                return "SYN204", ("non_blocking=True copy from pageable host memory still "
                                  "blocks the host; pin_memory() the source")
            if src.is_cuda and _is_pageable(dst):
                return "SYN201", ("non_blocking=True copy into pageable host memory blocks the "
                                  "host; copy into a pinned buffer")
    return None


def _copy_direction(name, args, kwargs) -> str | None:
    import torch

    if name not in ("aten::_to_copy", "aten::copy_"):
        return None
    if name == "aten::_to_copy":
        src, device = (args[0] if args else None), kwargs.get("device")
        dst_cuda = device is not None and torch.device(device).type == "cuda"
    else:
        dst, src = (args[0], args[1]) if len(args) > 1 else (None, None)
        dst_cuda = isinstance(dst, torch.Tensor) and dst.is_cuda
    if not isinstance(src, torch.Tensor):
        return None
    if src.is_cuda and not dst_cuda:
        return "DtoH"
    if not src.is_cuda and dst_cuda:
        return "HtoD"
    return None


def _dispatch(mode, func, args, kwargs):
    __tracebackhide__ = True
    stack = mode.stack
    guard = stack[-1] if stack else None
    if not isinstance(guard, NoSync):  # inside allow_sync(), or after the guard ended
        return func(*args, **kwargs)
    missed = _missed_sync(func, args, kwargs)
    if missed is not None:
        _on_sync(guard, _op_name(func), missed[0], missed[1])  # raises in "raise" mode
        with _debug_mode_off():
            return func(*args, **kwargs)
    try:
        return func(*args, **kwargs)
    except RuntimeError as exc:
        if isinstance(exc, HostSyncError) or SYNC_MESSAGE not in str(exc):
            raise
        name = _op_name(func)
        direction = _copy_direction(name, args, kwargs)
        detail = {"DtoH": "device-to-host copy", "HtoD": "blocking host-to-device copy"}.get(direction or "")
        _on_sync(guard, name, rule_for_op(name, direction), detail)
    # "warn" mode: the debug mode stopped the op before its wait; run it again with the check
    # off (aten ops check before they copy or wait, so the first attempt had no effect)
    with _debug_mode_off():
        return func(*args, **kwargs)


def _mode_class():
    global _mode_cls
    if _mode_cls is None:
        from torch.utils._python_dispatch import TorchDispatchMode

        class SyncCheckMode(TorchDispatchMode):
            """Names the aten op behind each sync; flags the ops the debug mode misses."""

            def __init__(self, stack: list):
                super().__init__()
                self.stack = stack  # the owner thread's guard stack, read from worker threads

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                __tracebackhide__ = True
                return _dispatch(self, func, args, kwargs or {})

        _mode_cls = SyncCheckMode
    return _mode_cls


# ----------------------------------------------------------------------------- public API

class NoSync:
    """Context manager / decorator: fail when the code inside makes the host wait for the GPU.

    mode="raise" (default) raises HostSyncError at the first sync; mode="warn" (or
    raise_=False) lets the code run, issues a HostSyncWarning per sync, and collects them in
    `.syncs`. Without a CUDA GPU: under pytest the test is skipped; elsewhere
    SyncGuardUnavailable is raised, unless strict=False (then a warning, and no checking).
    """

    def __init__(self, *, mode: str = "raise", raise_: bool | None = None, strict: bool = True):
        if raise_ is not None:
            mode = "raise" if raise_ else "warn"
        if mode not in ("raise", "warn"):
            raise ValueError(f"no_sync(mode=...) must be 'raise' or 'warn', not {mode!r}")
        self.mode = mode
        self.strict = strict
        self.syncs: list[SyncEvent] = []
        self.checking = False  # False when entered unguarded (strict=False without CUDA)
        self._entered = False
        self._owner: int | None = None
        self._skip_at_item = False

    @property
    def raise_(self) -> bool:
        return self.mode == "raise"

    def __repr__(self) -> str:
        return f"no_sync(mode={self.mode!r}, strict={self.strict}) with {len(self.syncs)} sync(s)"

    def __enter__(self) -> "NoSync":
        __tracebackhide__ = True  # pytest reports a skip at the user's `with` line
        if self._entered:
            raise RuntimeError("this no_sync() guard is already active; use a new one to nest")
        reason = unavailable_reason()
        if reason is not None:
            message = f"syncscan.no_sync needs a CUDA GPU: {reason}"
            if not self.strict:
                warnings.warn(f"{message}; the code runs unchecked (strict=False)",
                              SyncGuardUnavailableWarning, stacklevel=2)
                self._entered, self.checking = True, False
                return self
            if _under_pytest():
                import pytest

                if self._skip_at_item:  # a decorated test: report the test, not this wrapper
                    with contextlib.suppress(TypeError):  # (an older pytest lacks the option)
                        raise pytest.skip.Exception(message, _use_item_location=True)
                pytest.skip(message)
            raise SyncGuardUnavailable(f"{message} (no_sync(strict=False) runs the code "
                                       "unchecked with a warning instead)")
        self.syncs = []
        self._push()
        self._entered, self.checking = True, True
        return self

    def _push(self) -> None:
        global _active, _saved_debug_mode
        with _lock:
            if _active == 0:
                _saved_debug_mode = _get_debug_mode()
                _install_patches()
            _active += 1
        self._owner = threading.get_ident()
        stack = _tls.stack
        stack.append(self)
        try:
            if _tls.mode is None:
                mode = _mode_class()(stack)
                mode.__enter__()
                _tls.mode = mode
            _apply_debug_mode(stack)
        except BaseException:
            self._pop()
            raise

    def _pop(self) -> None:
        global _active
        stack = _tls.stack
        if self in stack:
            del stack[stack.index(self):]  # also drops allow_sync() entries left open inside
        if not stack and _tls.mode is not None:
            mode, _tls.mode = _tls.mode, None
            mode.__exit__(None, None, None)
        with _lock:
            _active -= 1
            if _active == 0:
                _set_debug_mode(_saved_debug_mode)
                _remove_patches()
            elif stack:
                _apply_debug_mode(stack)

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        __tracebackhide__ = True
        was_checking, self._entered, self.checking = self.checking, False, False
        if not was_checking:
            return False
        self._pop()
        if isinstance(exc, HostSyncError):
            if exc.event.filename is None:
                found = _user_frame_in_traceback(tb)
                if found is not None:
                    _set_location(exc.event, *found)
                    exc.args = (str(exc.event),)
            _trim_traceback(tb)
        elif (isinstance(exc, RuntimeError) and not isinstance(exc, HostSyncError)
              and SYNC_MESSAGE in str(exc)):
            # a debug-mode error raised outside any aten op (the dispatch mode never saw it)
            event = SyncEvent(what="a synchronizing CUDA call outside any aten op",
                              detail=f"{str(exc).splitlines()[0]} (e.g. torch.tensor(data, device='cuda'))",
                              thread=threading.current_thread().name)
            found = _user_frame_in_traceback(tb)
            if found is not None:
                _set_location(event, *found)
            self.syncs.append(event)
            _trim_traceback(tb)
            raise HostSyncError(event).with_traceback(tb) from exc
        return False

    def __call__(self, func):
        """Decorate: each call of func runs under a fresh guard with these options."""
        mode, strict = self.mode, self.strict

        @functools.wraps(func)
        def guarded(*args, **kwargs):
            __tracebackhide__ = True
            guard = NoSync(mode=mode, strict=strict)
            guard._skip_at_item = True
            with guard:
                return func(*args, **kwargs)

        return guarded


class AllowSync:
    """Inside no_sync(): let the code inside sync (a known, accepted sync). No-op outside."""

    def __init__(self):
        self._pushed = False

    def __enter__(self) -> "AllowSync":
        stack = _tls.stack
        self._pushed = bool(stack)
        if self._pushed:
            stack.append(self)
            _apply_debug_mode(stack)
        return self

    def __exit__(self, exc_type, exc, tb) -> Literal[False]:
        if self._pushed:
            stack = _tls.stack
            if self in stack:
                del stack[stack.index(self):]
            if stack:
                _apply_debug_mode(stack)
            self._pushed = False
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def allowed(*args, **kwargs):
            with AllowSync():
                return func(*args, **kwargs)

        return allowed


def no_sync(func=None, /, *, mode: str = "raise", raise_: bool | None = None, strict: bool = True):
    """Fail when the code inside makes the host wait for a CUDA GPU.

    `with no_sync(): ...`, `@no_sync`, `@no_sync(mode="warn")`,
    `with no_sync(raise_=False) as g: ...; g.syncs`.
    """
    guard = NoSync(mode=mode, raise_=raise_, strict=strict)
    if func is None:
        return guard
    if not callable(func):
        raise TypeError("no_sync() takes keyword options only; use no_sync(mode='warn')")
    return guard(func)


def allow_sync(func=None, /):
    """Inside no_sync(): permit the syncs of the code inside. `with allow_sync():` or `@allow_sync`."""
    if func is None:
        return AllowSync()
    return AllowSync()(func)
