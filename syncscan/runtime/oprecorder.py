"""Exact source lines of the ops that would sync on a GPU, in a run without one.

On CUDA the sync debug mode tells syncscan where each sync happens (sitehook.SiteRecorder). A
run without a GPU never syncs, so there the detailed pass records, with a dispatch mode, the
call site of each op that would make the host wait on a GPU: the same ops the CPU trace's
analysis lists (syncscan.trace.would_sync), named as the trace names them, so that each recorded
site is matched to the trace's op by its name and its order in the step.

Left out as the trace's analysis leaves them out: scalar reads inside `torch.optim` (an
optimizer reading its step counters, which stay on the CPU), and index ops without a boolean
mask.
"""

from __future__ import annotations

import os
import sys
from types import FrameType

from syncscan.runtime.sitehook import _library_dirs, site_record, user_frame

# ops that sync on CUDA whatever their arguments (syncscan.trace.would_sync.ALWAYS), as the
# dispatcher names them, plus the scalar reads (item(), bool(t), float(t) all reach this one)
ALWAYS = {"aten::nonzero", "aten::_local_scalar_dense", "aten::_unique2", "aten::_unique", "aten::unique_dim",
          "aten::unique_consecutive", "aten::unique_dim_consecutive", "aten::masked_select", "aten::equal",
          "aten::is_nonzero", "aten::bincount", "aten::linalg_cholesky_ex", "aten::linalg_inv_ex",
          "aten::linalg_solve_ex", "aten::linalg_lu_factor_ex", "aten::linalg_ldl_factor_ex", "aten::argwhere"}
BOOL_MASK_OPS = {"aten::index", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_"}
SCALAR_READS = {"aten::_local_scalar_dense", "aten::is_nonzero"}
_OPTIM = os.sep + os.path.join("torch", "optim") + os.sep
# torch's Python between a dispatch mode and the code that ran the op
_PLUMBING = tuple(os.sep + os.path.join("torch", *p.split("/")) for p in (
    "_dynamo/eval_frame.py", "_compile.py", "utils/_python_dispatch.py", "_ops.py", "overrides.py"))


def _has_bool_index(args) -> bool:
    import torch

    indices = args[1] if len(args) > 1 else ()
    return isinstance(indices, (list, tuple)) and any(
        isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in indices)


def _in_optimizer(frame) -> bool:
    while frame is not None:
        if _OPTIM in frame.f_code.co_filename:
            return True
        frame = frame.f_back
    return False


class OpRecorder:
    """Collects one site per op that would sync on a GPU while installed (the main thread's ops);
    `step_of()` tells which profiler step is on."""

    def __init__(self, step_of):
        self.step_of = step_of
        self.sites: list[dict] = []
        self._order: dict = {}
        self._mode = None
        self._internal: tuple[str, ...] = ()

    def install(self) -> None:
        from torch.utils._python_dispatch import TorchDispatchMode

        recorder = self

        class WouldSyncRecorder(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                recorder._seen(func, args)
                return func(*args, **(kwargs or {}))

        self._internal = _library_dirs()
        self._mode = WouldSyncRecorder()
        self._mode.__enter__()

    def uninstall(self) -> None:
        if self._mode is not None:
            self._mode.__exit__(None, None, None)
            self._mode = None

    def _seen(self, func, args) -> None:
        schema = getattr(func, "_schema", None)
        name = schema.name if schema is not None else ""
        if name in BOOL_MASK_OPS:
            if not _has_bool_index(args):
                return
        elif name not in ALWAYS:
            return
        caller: FrameType | None = sys._getframe(2)  # past __torch_dispatch__
        while caller is not None and caller.f_code.co_filename.endswith(_PLUMBING):
            caller = caller.f_back
        if name in SCALAR_READS and _in_optimizer(caller):
            return
        step = self.step_of()
        order = self._order.get(step, 0)
        self._order[step] = order + 1
        site = site_record(name, user_frame(caller, self._internal), caller, step, order, self._internal)
        site["exact_op"] = True  # named by the dispatcher, not guessed from Python's instruction
        self.sites.append(site)
