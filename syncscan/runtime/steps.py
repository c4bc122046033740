"""Where a training step ends, found without changing the script.

- `OptimizerBoundary`: after each `optimizer.step()` (torch's global optimizer post-hook). With
  several optimizers (a GAN), only the first one to step marks the boundary, so one iteration
  stays one step.
- `FunctionBoundary` (`--step-on NAME`): after each call of a named function or method.
  Objects in already-imported modules are patched at once; a function defined by the script
  itself does not exist yet, so a profile hook (`sys.setprofile`) watches calls until the first
  call of a matching code object, patches the function where it lives, and removes itself.

Explicit `syncscan.step()` calls need no hook: see `Session.boundary`.
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
import weakref

from syncscan.errors import UserError

# The wrappers that end a step run inside the user's call stack. They are compiled under a
# "<...>" file name so that trace analysis, which takes the innermost Python frame outside
# libraries as the user's line, skips them the way it skips other generated code.
_WRAPPER_SOURCE = """
def make(inner, before, after):
    def step_boundary(*args, **kwargs):
        before()
        try:
            result = inner(*args, **kwargs)
        except BaseException:
            after(False)
            raise
        after(True)
        return result
    return step_boundary
"""
_namespace: dict = {}
exec(compile(_WRAPPER_SOURCE, "<syncscan step boundary>", "exec"), _namespace)


def _wrapper(inner, before, after):
    """`inner` wrapped: before() ahead of each call, after(returned_normally) once it is done."""
    return functools.wraps(inner)(_namespace["make"](inner, before, after))


def _nothing() -> None:
    return None


class OptimizerBoundary:
    """Each `optimizer.step()` of the lead optimizer ends a step.

    torch runs the global post-hooks inside the optimizer's own `Optimizer.step#...`
    record_function, and a profiler that starts or stops in there leaves that scope straddling
    two profiler states (torch warns, and crashes when a second profiler starts in a scope the
    first one saw open). So at its first step the lead optimizer's `step` attribute is wrapped
    (on the instance: it also covers an LR scheduler's wrapper); from then on the hook only flags
    the step and the wrapper ends it once `step()` has returned. Calls that bypass the attribute
    (a `step` bound before the wrap) are still counted, from inside the hook.
    """

    def __init__(self, on_boundary):
        self.on_boundary = on_boundary
        self.enabled = True
        self._lead = None
        self._handle = None
        self._local = threading.local()
        self._wrapped: list = []  # (weakref to optimizer, instance attribute it replaced or None)

    def install(self) -> None:
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self._handle = register_optimizer_step_post_hook(self._hook)

    def remove(self) -> None:
        if self._handle is not None:
            self._handle.remove()
            self._handle = None
        for ref, previous in self._wrapped:
            optimizer = ref()
            if optimizer is None:
                continue
            if previous is None:
                optimizer.__dict__.pop("step", None)
            else:
                optimizer.step = previous
        self._wrapped.clear()

    def _hook(self, optimizer, args, kwargs) -> None:
        if not self.enabled:
            return
        lead = self._lead() if self._lead is not None else None
        if lead is None:  # first optimizer to step (or the previous lead was freed)
            self._lead = weakref.ref(optimizer)
            lead = optimizer
        if optimizer is not lead:
            return
        if getattr(self._local, "inside", False):
            self._local.pending = True  # the wrapper ends the step once step() returns
            return
        self._wrap(optimizer)
        self.on_boundary("optimizer")

    def _wrap(self, optimizer) -> None:
        if any(ref() is optimizer for ref, _ in self._wrapped):
            return
        previous = optimizer.__dict__.get("step")
        local = self._local

        def before():
            local.inside, local.pending = True, False

        def after(returned: bool):
            local.inside = False
            if returned and local.pending:
                local.pending = False
                if self.enabled:
                    self.on_boundary("optimizer")

        step = _wrapper(optimizer.step, before, after)
        try:
            optimizer.step = step
        except AttributeError:  # a class with __slots__: stay with the hook alone
            return
        self._wrapped.append((weakref.ref(optimizer), previous))


def _qualname(frame) -> str:
    code = frame.f_code
    qual = getattr(code, "co_qualname", None)  # Python 3.11+
    if qual:
        return qual
    owner = frame.f_locals.get("self", frame.f_locals.get("cls"))
    if owner is not None and code.co_argcount:
        cls = owner if isinstance(owner, type) else type(owner)
        return f"{cls.__name__}.{code.co_name}"
    return code.co_name


class FunctionBoundary:
    """End a step after each call of `spec` ("func", "module.func", "Class.method",
    "pkg.module.Class.method"); `main_module` is the name the script would have if imported."""

    @staticmethod
    def check(spec: str) -> None:
        if not spec or any(not part.isidentifier() for part in spec.split(".")):
            raise UserError(f"--step-on {spec!r}: expected a dotted name such as train_step, "
                            "Trainer.train_step or mypkg.train.step")

    def __init__(self, spec: str, main_module: str | None, on_boundary):
        self.check(spec)
        self.spec = spec
        self.main_module = main_module
        self.on_boundary = on_boundary
        self.calls = 0
        self.patched_at: str | None = None
        self._leaf = spec.rsplit(".", 1)[-1]
        self._restore: list = []
        self._pending = None
        self._target_code = None
        self._hooked = False
        self._thread: threading.Thread | None = None

    # ---------------------------------------------------------------- install / remove

    def install(self) -> None:
        if not self._patch_imported():
            self._thread = threading.current_thread()
            sys.setprofile(self._profile)
            self._hooked = True

    def remove(self) -> None:
        if self._hooked and threading.current_thread() is self._thread:
            sys.setprofile(None)
        self._hooked = False
        for owner, name, original in reversed(self._restore):
            if isinstance(owner, dict):
                owner[name] = original
            else:
                setattr(owner, name, original)
        self._restore.clear()

    def _patch_imported(self) -> bool:
        """Patch at once when the name lives in a module that is already imported."""
        parts = self.spec.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = sys.modules.get(".".join(parts[:i]))
            if module is None or ".".join(parts[:i]) == "__main__":
                continue
            owner = module
            try:
                for name in parts[i:-1]:
                    owner = getattr(owner, name)
            except AttributeError:
                return False
            return self._patch(owner, parts[-1], None)
        return False

    # ---------------------------------------------------------------- the profile hook

    def _matches(self, frame) -> bool:
        qual = _qualname(frame)
        if qual == self.spec:
            return True
        if "<locals>" in qual or not self.spec.endswith("." + qual):
            return False
        module = self.spec[: -len(qual) - 1]
        name = frame.f_globals.get("__name__")
        return module == name or (name == "__main__" and module == self.main_module)

    def _profile(self, frame, event, arg):
        if event == "call":
            if self._pending is None and frame.f_code.co_name == self._leaf and (
                    frame.f_code is self._target_code or self._matches(frame)):
                self._pending = frame
                if self._target_code is None:
                    self._target_code = frame.f_code
                    self._patch_from_frame(frame)
        elif event == "return" and frame is self._pending:
            self._pending = None
            if self.patched_at is not None:  # later calls go through the patch
                sys.setprofile(None)
                self._hooked = False
            self._ended()

    def _patch_from_frame(self, frame) -> None:
        qual = _qualname(frame).split(".")
        if "<locals>" in qual:
            return  # a nested function cannot be reached: stay on the profile hook
        globals_ = frame.f_globals
        if len(qual) == 1:
            self._patch(globals_, qual[0], frame.f_code)
            return
        owner = globals_.get(qual[0])
        try:
            for name in qual[1:-1]:
                owner = getattr(owner, name)
        except AttributeError:
            return
        if owner is not None:
            self._patch(owner, qual[-1], frame.f_code)

    # ---------------------------------------------------------------- patching

    def _patch(self, owner, name: str, code) -> bool:
        is_dict = isinstance(owner, dict)
        raw = owner.get(name) if is_dict else (
            owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None))
        if raw is None:
            return False
        kind = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
        func = raw.__func__ if kind else raw
        if not callable(func) or (code is not None and getattr(func, "__code__", None) is not code):
            return False
        if inspect.isgeneratorfunction(func) or inspect.iscoroutinefunction(func):
            raise UserError(f"--step-on {self.spec}: a generator or coroutine does not end a step "
                            "when called; name the function that runs one step")

        def after(returned: bool):
            if returned:
                self._ended()

        step_boundary = _wrapper(func, _nothing, after)
        wrapped = kind(step_boundary) if kind else step_boundary
        if is_dict:
            owner[name] = wrapped
        else:
            setattr(owner, name, wrapped)
        self._restore.append((owner, name, raw))
        where = owner.get("__name__", "?") if is_dict else getattr(owner, "__name__", "?")
        self.patched_at = f"{where}.{name}"
        return True

    def _ended(self) -> None:
        self.calls += 1
        self.on_boundary("step-on")
