"""What removing the syncs would save, per site and in all: questions put to the replay.

For each sync site, two questions, answered at the host speed of the step time to predict (the
bare pass's in `syncscan profile`, the trace's own in `syncscan analyze`):

- *syncs*: the site's waits removed, everything else as recorded. What the syncs themselves
  cost, in whichever regime the step is: GPU idle after them when the GPU sets the pace, host
  time when the host does, and the overlap lost in between.
- *rewrite*: the site's syncing op instances replaced by the rule's rewrite (the footprint each
  rule declares, catalog.footprint_for): their host time becomes its ops at this trace's median
  op cost and its backward nodes at the median node cost; their GPU work goes unless the rewrite
  keeps it.
  For pageable copies of batches from a multi-process DataLoader (SYN204), the rewrite
  (pin_memory=True) also moves receiving the batch to the pin-memory thread: the loader's
  `__next__` on the main thread becomes a queue get. For a boolean-mask read that feeds
  cross-entropy on channels-first data, the rewrite also replaces the gathered loss's
  single-block NLL kernels (see PERMUTES below).

And both for all sites at once. Sites are not additive (two syncs in a row share one drain).

**The input pipeline** (`loader`, a syncscan.trace.loader.LoaderModel). A step that waits for its
next batch cannot be made faster by the host or the GPU: the wait just grows. So each fetch of
a worker-fed DataLoader is replayed as taking a ready batch (the trace's fastest fetch, scaled
with the host) plus the measured wait for data (held as is: it is not host work the profiler
slowed). The host speed is calibrated with those waits in; then the waits are dropped to ask
what the host and GPU need per step (`compute_ms`), and every question is answered without
them. Their answers go through the loader: a step takes max(compute, loader period), where the
period is the step itself when the loader sets the pace (it waits for INPUT_BOUND_SHARE of it
or more) and the loader's measured capacity otherwise. A saving the loader would absorb is not
promised: it is reported beside (`unbounded_saving_*_ms`).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Optional

from syncscan.catalog import footprint_for
from syncscan.trace.attribution import EVALUATE_PREFIX
from syncscan.trace.loader import LoaderModel, fetch_spans, loader_period, paced, receive_us
from syncscan.trace.model import Trace
from syncscan.trace.opcost import instance_key
from syncscan.trace.replay import (
    LOADER_NEXT,
    MAX_ITEMS,
    MAX_ITEMS_PER_SITE_REPLAY,
    MAX_STEPS,
    Replacement,
    Timeline,
    calibrate,
)
from syncscan.trace.steps import StepWindow
from syncscan.units import US_PER_MS, ms_from_us

# A boolean-mask read that feeds cross-entropy on channels-first data (`x.permute(0, 2, 3, 1)[m]`,
# SYN306's pattern) makes the loss gather a 2-D tensor, whose NLL reduction runs in ONE thread
# block (ATen's nll_loss_forward_reduce_cuda_kernel_2d, and its backward): slow on millions of
# pixels. The rewrite's cross-entropy with ignore_index on the N-D tensor runs the spatial NLL
# kernels instead, which cost about one log-softmax pass. Without a permute before the read, the
# rewrite's input is 2-D too and keeps the same kernel: nothing is modelled.
PERMUTES = {"aten::permute", "aten::movedim", "aten::moveaxis", "aten::transpose", "aten::swapaxes"}
CROSS_ENTROPY = {"aten::cross_entropy_loss", "aten::nll_loss_nd", "aten::nll_loss"}
MASK_READS = {"aten::index"}
# step-level figures in the report keep 4 decimals (0.1 µs)
STEP_DIGITS = 4
NEIGHBOURS = 3  # top-level ops looked at on each side of a masked read
# a replay that misses the trace's own step time by more than this is flagged
FIT_TOLERANCE = 0.1


def _is_pageable_upload(ev) -> bool:
    return ev.kind is not None and ev.kind.direction == "HtoD" and ev.kind.src == "Pageable"


def _loader_fetches(trace: Trace, wins: list[StepWindow]) -> list[tuple]:
    """(tid, start, end) of the multi-process DataLoader's batch fetches in the windows."""
    out = []
    lo, hi = wins[0].start, wins[-1].end
    for tid, iv in trace.scopes.items():
        for i in range(len(iv)):
            if lo <= iv.starts[i] < hi and trace.names[iv.names[i]] == LOADER_NEXT:
                out.append((tid, iv.starts[i], iv.ends[i]))
    return out


class _Questions:
    """Builds the skips and replacements for sites of one timeline."""

    def __init__(self, trace: Trace, tl: Timeline, wins: list[StepWindow], loader: Optional[LoaderModel] = None):
        self.trace, self.tl = trace, tl
        self.index = {id(ev): i for i, ev in enumerate(tl.events) if ev is not None}
        self.fetches = _loader_fetches(trace, wins)
        self.loader = loader
        self.wins = wins
        self._tops: dict = {}
        self._nodes: dict | None = None

    def skip(self, events) -> frozenset:
        return frozenset(self.index[id(ev)] for ev in events if id(ev) in self.index)

    def data(self, *, pinned: bool = False, hold: bool = True) -> tuple[Replacement, ...]:
        """The input pipeline in the replay (see the module docstring): each worker-fed fetch
        becomes taking a ready batch (a queue get when `pinned`: the pin-memory thread received
        it), plus the wait for data when `hold`. () without a loader model."""
        if self.loader is None:
            return ()
        spans = [f for f in fetch_spans(self.trace, self.wins) if f.multiprocess]
        wait = self.loader.wait_ms * US_PER_MS * len(self.wins) if hold else 0.0
        if not spans:  # no fetch in the trace to hold at: the wait goes at the start of each step
            return tuple(Replacement(None, w.start, w.start, 0.0, True, hold=wait / len(self.wins))
                         for w in self.wins) if wait else ()
        waited = self.loader.trace_waits_ms
        if pinned:
            receive = [self.tl.op_cost] * len(spans)
        elif waited is not None and len(waited) >= len(spans):
            # the run measured what each traced fetch waited: the rest was receiving the batch
            receive = [max(0.0, f.duration - w * US_PER_MS) for f, w in zip(spans, waited)]
        else:
            receive = [receive_us(spans) or 0.0] * len(spans)
        return tuple(Replacement(f.tid, f.start, f.end, r, True, hold=wait / len(spans))
                     for f, r in zip(spans, receive))

    @staticmethod
    def pins(events) -> bool:
        """The rewrite of these events pins the loader's batches (SYN204 on a pageable upload)."""
        return any(ev.rule == "SYN204" and _is_pageable_upload(ev) for ev in events)

    def replacements(self, events) -> list[Replacement]:
        tl, out, seen = self.tl, [], set()
        loader = False
        waits: dict[tuple, float] = {}
        for ev in events:
            key = instance_key(ev)
            waits[key] = waits.get(key, 0.0) + (ev.end - ev.start)
        for ev in events:
            cost = footprint_for(ev.rule)
            if cost is None:
                continue
            key = instance_key(ev)
            if key in seen:
                continue
            seen.add(key)
            ops, nodes, keep_gpu, keep_host = cost
            if ev.att is not None and ev.att.backward_node:
                ops = nodes = 0  # counted with the forward op
            if key[1] < 0:
                tid, start, end = ev.tid, ev.start, ev.end
            else:
                iv = self.trace.ops[key[0]]
                tid, start, end = key[0], iv.starts[key[1]], iv.ends[key[1]]
            host = ops * tl.op_cost + nodes * tl.node_cost
            if keep_host:
                host += max(0.0, end - start - waits[key])
            out.append(Replacement(tid, start, end, host, keep_gpu))
            loader = loader or (ev.rule == "SYN204" and _is_pageable_upload(ev))
            if ev.rule == "SYN302" and key[1] >= 0 and not (ev.att and ev.att.backward_node):
                out += self._gathered_loss(key, seen)
        if loader and self.loader is None:  # with a loader model, data(pinned=True) says it
            out += [Replacement(tid, s, e, tl.op_cost, True) for tid, s, e in self.fetches]
        return out

    # -- the gathered cross-entropy (see PERMUTES above) -------------------------------------
    def _top_level(self, tid) -> list[int]:
        tops = self._tops.get(tid)
        if tops is None:
            iv = self.trace.ops[tid]
            iv._finalize()
            tops = self._tops[tid] = [i for i in range(len(iv)) if iv.parent[i] < 0]
        return tops

    def _gathered_loss(self, key: tuple, seen: set) -> list[Replacement]:
        tid, i = key
        iv, names = self.trace.ops[tid], self.trace.names
        tops = self._top_level(tid)
        p = bisect_left(tops, i)
        if p >= len(tops) or tops[p] != i:
            return []

        def neighbour(step: int, wanted: set) -> int | None:
            q = p
            for _ in range(NEIGHBOURS):
                q += step
                if not 0 <= q < len(tops):
                    return None
                name = names[iv.names[tops[q]]]
                if name in wanted:
                    return tops[q]
                if name not in MASK_READS:
                    return None
            return None

        loss = neighbour(1, CROSS_ENTROPY)
        if loss is None or ("loss", tid, loss) in seen or neighbour(-1, PERMUTES) is None:
            return []
        seen.add(("loss", tid, loss))
        nll = lsm = None
        for j in range(loss, len(iv)):
            if iv.starts[j] >= iv.ends[loss]:
                break
            name = names[iv.names[j]]
            if name == "aten::nll_loss_forward" and nll is None:
                nll = j
            elif name == "aten::_log_softmax" and lsm is None:
                lsm = j
        if nll is None:
            return []
        tl = self.tl
        pass_cost = tl.gpu_time(tid, iv.starts[lsm], iv.ends[lsm]) if lsm is not None else 0.0
        # the NLL keeps its host time; its GPU work becomes one log-softmax pass (forward), one
        # log-softmax backward pass (backward)
        out = [Replacement(tid, iv.starts[nll], iv.ends[nll], iv.ends[nll] - iv.starts[nll],
                           gpu_cost=pass_cost)]
        grad = self._backward_nodes(iv.seq[lsm], "LogSoftmaxBackward0") if lsm is not None else []
        back_cost = self._node_gpu(*grad[0]) if grad else pass_cost
        for btid, b in self._backward_nodes(iv.seq[nll], "NllLossBackward0"):
            bv = self.trace.ops[btid]
            out.append(Replacement(btid, bv.starts[b], bv.ends[b], bv.ends[b] - bv.starts[b], gpu_cost=back_cost))
        return out

    def _node_gpu(self, tid, j: int) -> float:
        iv = self.trace.ops[tid]
        return self.tl.gpu_time(tid, iv.starts[j], iv.ends[j])

    def _backward_nodes(self, seq: int, node: str) -> list[tuple]:
        """(tid, index) of the backward node `node` created with Sequence number `seq`."""
        if seq is None or seq < 0:
            return []
        if self._nodes is None:
            self._nodes = {}
            lo, hi = self.tl.t0, self.tl.t1
            for tid, iv in self.trace.ops.items():
                for j in range(len(iv)):
                    if lo <= iv.starts[j] < hi and iv.seq[j] >= 0:
                        name = self.trace.names[iv.names[j]]
                        if name.startswith(EVALUATE_PREFIX):
                            self._nodes.setdefault((iv.seq[j], name[len(EVALUATE_PREFIX):]), []).append((tid, j))
        return self._nodes.get((seq, node), [])


def estimate(trace: Trace, wins: list[StepWindow], events: list, site_events: list[list],
             *, target_ms: float | None = None, loader: Optional[LoaderModel] = None) -> dict | None:
    """The replay's answers (see the module docstring); None without GPU activity, without
    syncs (unless a loader model asks what host and GPU need), or when the trace is too large."""
    if not events and loader is None:
        return None
    wins = wins[:MAX_STEPS]
    tl = Timeline.build(trace, wins, events)
    if tl is None or not len(tl):
        return None
    if len(tl) > MAX_ITEMS:
        return {"method": "replay", "skipped": f"{len(tl)} launches and syncs: too many to replay"}
    q = _Questions(trace, tl, wins, loader)
    fit = tl.step_time(1.0)
    waits = q.data()
    if target_ms:
        scale, exact = calibrate(tl, target_ms * US_PER_MS, replace=waits)
    else:
        scale, exact = 1.0, True
    base = tl.step_time(scale, replace=waits) if (target_ms or waits) else fit
    compute = tl.step_time(scale, replace=q.data(hold=False)) if loader is not None else None
    bound, period = False, None
    if loader is not None and compute is not None:
        bound, period_ms = loader_period(base / US_PER_MS, compute / US_PER_MS, loader.capacity_ms)
        period = None if period_ms is None else period_ms * US_PER_MS
    ref = base if compute is None else paced(compute, period)

    def step_after(group: list) -> tuple[float, float]:
        """(step time without the group's syncs, with their rewrites), as the loader lets it be."""
        skip = q.skip(group)
        without = tl.step_time(scale, skip=skip, replace=q.data(hold=False))
        reps = tuple(q.replacements(group)) + q.data(pinned=q.pins(group), hold=False)
        rewritten = tl.step_time(scale, skip=skip, replace=reps) if reps else without
        return without, rewritten

    all_events = [ev for group in site_events for ev in group]
    without, rewritten = step_after(all_events)
    sites = None
    if len(tl) <= MAX_ITEMS_PER_SITE_REPLAY:
        sites = []
        for group in site_events:
            w, r = step_after(group)
            sites.append({"saving_syncs_ms": ms_from_us(ref - paced(w, period), STEP_DIGITS),
                          "saving_rewrite_ms": ms_from_us(ref - paced(r, period), STEP_DIGITS)})
    uploads = [ev for ev in all_events if q.pins([ev])]
    pin_saving = None
    if uploads:
        pin_saving = ms_from_us(ref - paced(step_after(uploads)[1], period), STEP_DIGITS)
    notes = []
    fit_error = (fit - tl.trace_step_us) / tl.trace_step_us if tl.trace_step_us > 0 else None
    if fit_error is not None and abs(fit_error) > FIT_TOLERANCE:
        notes.append(f"The replay of the trace as recorded takes {fit / US_PER_MS:.3f} ms/step against "
                     f"{tl.trace_step_us / US_PER_MS:.3f} ms in the trace ({fit_error:+.0%}): its "
                     "answers are rough here (several launching threads, or host work the trace "
                     "does not show).")
    if target_ms and not exact:
        notes.append(f"No host speed makes the replay take {target_ms:.3f} ms/step (the nearest is "
                     f"{base / US_PER_MS:.3f} ms at {scale:.2f}x the traced host time): the GPU work "
                     "itself was slower or faster in the trace than in that run.")
    if bound and compute is not None and period is not None:
        notes.append(f"The input pipeline sets the pace: with data at hand, host and GPU would need "
                     f"{compute / US_PER_MS:.3f} ms/step, but a batch comes every {period / US_PER_MS:.3f} ms "
                     "(syncscan profile's input_pipeline says why): savings below that are absorbed.")
    return {
        "method": "replay",
        "trace_ms_per_step": ms_from_us(tl.trace_step_us, STEP_DIGITS),
        "replay_ms_per_step": ms_from_us(fit, STEP_DIGITS),
        "fit_error": None if fit_error is None else round(fit_error, 4),
        "target_ms_per_step": target_ms,
        "host_scale": round(scale, 4),
        "calibrated": bool(target_ms) and exact,
        "step_ms": ms_from_us(base, STEP_DIGITS),
        "without_syncs_ms": ms_from_us(paced(without, period), STEP_DIGITS),
        "with_rewrites_ms": ms_from_us(paced(rewritten, period), STEP_DIGITS),
        "saving_syncs_ms": ms_from_us(ref - paced(without, period), STEP_DIGITS),
        "saving_rewrites_ms": ms_from_us(ref - paced(rewritten, period), STEP_DIGITS),
        "launch_latency_us": round(tl.launch_latency, 2),
        "op_host_us": round(tl.op_cost, 2),
        "node_host_us": round(tl.node_cost, 2),
        "items": len(tl),
        "steps_replayed": tl.n_steps,
        "loader_source": loader.source if loader is not None else None,
        "loader_wait_ms": round(loader.wait_ms, STEP_DIGITS) if loader is not None else None,
        "compute_ms": ms_from_us(compute, STEP_DIGITS),
        "loader_period_ms": ms_from_us(period, STEP_DIGITS),
        "input_bound": bound,
        "unbounded_saving_syncs_ms": ms_from_us(compute - without, STEP_DIGITS) if compute is not None else None,
        "unbounded_saving_rewrites_ms": ms_from_us(compute - rewritten, STEP_DIGITS) if compute is not None else None,
        "saving_pin_memory_ms": pin_saving,
        "sites": sites,
        "notes": notes,
    }
