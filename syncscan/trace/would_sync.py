"""Ops in a CPU-only trace that would make the host wait on a GPU.

With no GPU activity recorded there is nothing to measure, but the op names still say where a
CUDA run would sync (catalog.OP_TO_RULE). Some ops sync only with certain arguments; for those
the trace must show it: an `Input type` with a boolean mask, or the op's CPU implementation
calling one of the ops that always sync (a boolean `x[m]` calls aten::nonzero, a tensor-valued
masked_fill calls aten::item). Without that evidence they are not listed: `x[m] = 0.` and
three-argument `torch.where` do not sync and must not be flagged.
"""

from __future__ import annotations

from dataclasses import dataclass

from syncscan.catalog import OP_TO_RULE
from syncscan.trace.attribution import Attribution, Attributor, rule_for
from syncscan.trace.model import Trace
from syncscan.trace.steps import StepWindow, WindowIndex

# ops that sync on CUDA whatever their arguments: each occurrence is one sync
ALWAYS = {"aten::nonzero", "aten::_local_scalar_dense", "aten::_unique2", "aten::_unique",
          "aten::unique_dim", "aten::unique_consecutive", "aten::unique_dim_consecutive",
          "aten::masked_select", "aten::equal", "aten::is_nonzero", "aten::bincount",
          "aten::linalg_cholesky", "aten::linalg_inv", "aten::linalg_solve",
          "aten::linalg_lu_factor", "aten::linalg_ldl_factor"}
# ops that sync only with some arguments: listed when Input type shows a boolean mask
BOOL_MASK_OPS = {"aten::index", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_"}
# On the CPU, many ops read wrapped Python scalars with .item() (`x[m] = 0.` does), and the
# optimizers keep their step counters on the CPU: neither syncs on a GPU. A CPU item() is only
# evidence when the user-level op around it is one that syncs through item() on CUDA.
ITEM_OPS = {"aten::item", "aten::_local_scalar_dense"}
ITEM_SYNC_OUTER = {op for op in OP_TO_RULE if op not in {
    "aten::index", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_", "aten::where",
    "aten::nonzero", "aten::nonzero_numpy", "aten::argwhere"}}
# Inside `optimizer.step()` (torch's `Optimizer.step#<Class>.step` scope) scalar reads are the
# optimizer reading its step counters, which live on the CPU unless capturable/fused: no sync.
OPTIMIZER_SCOPE = "Optimizer.step#"
SCALAR_READ_OPS = ITEM_OPS | {"aten::is_nonzero"}


@dataclass
class WouldSync:
    tid: object
    start: float
    window: int
    att: Attribution
    rule: str | None
    site: dict | None = None  # the exact call site recorded at run time, when matched


def _by_input_type(trace: Trace, tid, ext: int, name: str) -> bool:
    types = trace.input_types.get((tid, ext))
    if not types:
        return False
    if name in BOOL_MASK_OPS:
        return any(t == "bool" for t in types[1:])
    if name == "aten::where":  # one argument: the nonzero form
        return len(types) == 1
    return False


def find_would_sync(trace: Trace, wins: list[StepWindow], attributor: Attributor) -> list[WouldSync]:
    """One entry per op that would sync, innermost evidence only (index > nonzero counts once)."""
    index = WindowIndex(wins)
    names = trace.names
    always_ids = {i for i, n in enumerate(names.names) if n in ALWAYS}
    typed_ids = {i for i, n in enumerate(names.names) if n in BOOL_MASK_OPS or n == "aten::where"}
    out: list[WouldSync] = []
    for tid, ops in trace.ops.items():
        ops._finalize()
        hits: list[int] = []
        for i in range(len(ops)):
            nid = ops.names[i]
            if nid in always_ids or (nid in typed_ids and _by_input_type(trace, tid, ops.ext[i], names[nid])):
                if index.find(ops.starts[i]) >= 0:
                    hits.append(i)
        hit_set = set(hits)
        # keep the innermost: an op with a hit below it (aten::index over aten::nonzero) is the
        # same sync; walk each hit's ancestors and drop those
        covered: set[int] = set()
        for i in hits:
            p = ops.parent[i]
            while p >= 0:
                if p in hit_set:
                    covered.add(p)
                p = ops.parent[p]
        for i in hits:
            if i in covered:
                continue
            name = names[ops.names[i]]
            if name in ITEM_OPS and names[ops.names[ops.outermost_of(i)]] not in ITEM_SYNC_OUTER:
                continue
            t = (ops.starts[i] + ops.ends[i]) / 2
            if name in SCALAR_READ_OPS and any(
                    sc.startswith(OPTIMIZER_SCOPE) for sc in attributor.scopes_at(tid, t)):
                continue
            att = attributor.attribute(tid, t, op_index=i)
            out.append(WouldSync(tid, ops.starts[i], index.find(ops.starts[i]), att, None))
    attributor.resolve_backward([w.att for w in out])
    for w in out:
        w.rule = rule_for(w.att)
    out.sort(key=lambda w: w.start)
    return out
