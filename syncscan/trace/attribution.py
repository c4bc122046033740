"""Who caused a host event: its aten ops, record_function scope, Python code and lint rule.

All lookups are "innermost interval on the same thread containing time t" over the sorted,
parent-linked columns of model.HostIntervals. A backward op runs on the autograd thread with no
scope and no Python stack; it is mapped to the forward op that created its autograd node
through the `Sequence number` both carry, and takes that op's scope and Python code.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from syncscan import catalog
from syncscan.trace.model import HostIntervals, Trace

EVALUATE_PREFIX = "autograd::engine::evaluate_function: "
_BACKWARD_NODE = re.compile(r"Backward\d*$")
_FRAME = re.compile(r"^(?P<file>.*)\((?P<line>\d+)\): (?P<func>.*)$")

# Python frames that are not the user's code (Kineto strips site-packages/ and sys.path
# folders from paths). syncscan's own frames (its runner around the script during `syncscan
# profile`) are absolute when it is installed in place: matched by its subpackages anywhere,
# and by where this copy is installed.
_LIBRARY_FILE = re.compile(
    r"^(torch|torchvision|torchaudio|syncscan|triton|functorch|transformers|accelerate|lightning|"
    r"pytorch_lightning|numpy|tqdm)/"
    r"|(^|/)syncscan/((runtime|trace|lint|rules|commands|present)/[^/]+|[a-z_]+)\.py$|(^|/)bin/syncscan$"
    r"|/(site-packages|dist-packages)/|/lib/python3[.\d]*/|^<")
_OWN_DIRS = tuple({d + os.sep for d in (os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                        os.path.dirname(os.path.dirname(os.path.realpath(__file__))))})


@dataclass
class Frame:
    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} in {self.function}"


@dataclass
class Attribution:
    """Where a host event comes from. `chain` is outermost first, wrappers removed."""

    chain: list[str] = field(default_factory=list)
    scope: str | None = None
    frames: list[Frame] = field(default_factory=list)  # user frames, outermost first
    backward_node: str | None = None
    forward_op: str | None = None
    # where the forward op (or the op itself) ran: used for Python and scope lookups
    tid: object = None
    t: float = 0.0
    # (Sequence number, start) of the backward node, until resolve_backward maps it
    bw_key: tuple | None = field(default=None, repr=False)
    # the op instance behind outer_op: its thread and index in trace.ops[op_tid] (-1: no op)
    op_tid: object = None
    outer_index: int = -1

    @property
    def op(self) -> str | None:
        return self.chain[-1] if self.chain else None

    @property
    def outer_op(self) -> str | None:
        return self.chain[0] if self.chain else None

    @property
    def phase(self) -> str:
        return "backward" if self.backward_node else "forward"

    @property
    def frame(self) -> Frame | None:
        return self.frames[-1] if self.frames else None


def parse_frame(name: str) -> Frame | None:
    m = _FRAME.match(name)
    if not m:
        return None
    return Frame(m["file"], int(m["line"]), m["func"])


def is_user_frame(fr: Frame) -> bool:
    return not _LIBRARY_FILE.search(fr.file) and not fr.file.startswith(_OWN_DIRS)


def _node_key(name: str) -> str:
    """IndexPutBackward0 / aten::index_put_ -> 'indexput': to match a node with its forward op."""
    name = _BACKWARD_NODE.sub("", name.split("::")[-1])
    return name.replace("_", "").lower()


class Attributor:
    """Answers attribution questions about one trace, caching per-thread indexes."""

    def __init__(self, trace: Trace):
        self.trace = trace
        self.names = trace.names
        self._seq_index: dict[int, list[tuple[object, int]]] | None = None
        self._seq_wanted: set[int] = set()

    # -- raw chains ---------------------------------------------------------------------------
    def op_chain(self, tid, t: float) -> tuple[HostIntervals | None, list[int]]:
        ops = self.trace.ops.get(tid)
        if ops is None:
            return None, []
        return ops, ops.chain(t)

    def scope_at(self, tid, t: float) -> str | None:
        iv = self.trace.scopes.get(tid)
        if iv is None:
            return None
        c = iv.chain(t)
        return self.names[iv.names[c[0]]] if c else None

    def scopes_at(self, tid, t: float) -> list[str]:
        """All record_function scopes containing t on the thread, innermost first."""
        iv = self.trace.scopes.get(tid)
        if iv is None:
            return []
        return [self.names[iv.names[i]] for i in iv.chain(t)]

    def user_frames(self, tid, t: float, limit: int = 8) -> list[Frame]:
        """User-code Python frames containing t on the thread, outermost first."""
        iv = self.trace.frames.get(tid)
        if iv is None:
            return []
        out = []
        for i in iv.chain(t):
            fr = parse_frame(self.names[iv.names[i]])
            if fr is not None and is_user_frame(fr):
                out.append(fr)
        out.reverse()
        return out[-limit:]

    def is_profiler_call(self, tid, t: float) -> bool:
        """True when the Python stack at t runs inside torch.profiler's own code (its stop sync)."""
        iv = self.trace.frames.get(tid)
        if iv is None:
            return False
        for i in iv.chain(t):
            name = self.names[iv.names[i]]
            if name.startswith(("torch/profiler/", "torch/autograd/profiler.py")):
                return True
        return False

    # -- the full attribution -----------------------------------------------------------------
    def attribute(self, tid, t: float, op_index: int | None = None) -> Attribution:
        """Attribution of time t on a thread; with op_index, of that op (its own chain)."""
        att = Attribution(tid=tid, t=t, op_tid=tid)
        if op_index is None:
            found, idx = self.op_chain(tid, t)
            if found is None:  # no op recorded on this thread
                att.scope = self.scope_at(tid, t)
                att.frames = self.user_frames(tid, t)
                return att
            ops = found
        else:
            ops = self.trace.ops[tid]
            idx = [op_index]
            while ops.parent[idx[-1]] >= 0:
                idx.append(ops.parent[idx[-1]])
        names = self.names
        node_i = -1
        for i in reversed(idx):  # outermost first
            name = names[ops.names[i]]
            if name.startswith(EVALUATE_PREFIX):
                node = name[len(EVALUATE_PREFIX):]
                if att.backward_node is None:
                    att.backward_node, node_i = node, i
                continue
            if att.backward_node is None and _BACKWARD_NODE.search(name) and "::" not in name:
                att.backward_node, node_i = name, i
            if not att.chain:
                att.outer_index = i
            att.chain.append(name)
        if att.backward_node is not None:
            seq = ops.seq[node_i]
            if seq >= 0:
                self._seq_wanted.add(seq)
            att.bw_key = (seq, ops.starts[node_i])  # resolved in resolve_backward()
        else:
            att.scope = self.scope_at(tid, t)
            att.frames = self.user_frames(tid, t)
        return att

    def resolve_backward(self, atts: list[Attribution]) -> None:
        """Map backward attributions to their forward op (one pass over all ops, for all of them)."""
        pending = [a for a in atts if a.backward_node is not None and a.bw_key is not None]
        if not pending:
            return
        index = self._seq_lookup()
        for a in pending:
            seq, bw_start = a.bw_key or (-1, 0.0)
            best = self._forward_for(index.get(seq, ()), a.backward_node or "", bw_start)
            if best is None:
                continue
            tid, i = best
            ops = self.trace.ops[tid]
            a.forward_op = self.names[ops.names[i]]
            t = (ops.starts[i] + ops.ends[i]) / 2
            a.scope = self.scope_at(tid, t)
            a.frames = self.user_frames(tid, t)
            a.tid, a.t = tid, t

    def _seq_lookup(self) -> dict[int, list[tuple[object, int]]]:
        wanted = self._seq_wanted
        index: dict[int, list[tuple[object, int]]] = {}
        names = self.names
        for tid, ops in self.trace.ops.items():
            ops._finalize()
            seqs = ops.seq
            for i in range(len(seqs)):
                s = seqs[i]
                if s in wanted:
                    name = names[ops.names[i]]
                    if name.startswith(EVALUATE_PREFIX) or ("::" not in name and _BACKWARD_NODE.search(name)):
                        continue
                    index.setdefault(s, []).append((tid, i))
        return index

    def _forward_for(self, cands, node: str, bw_start: float):
        """The op that created the node: same Sequence number, before the backward, name-matched.

        Every op run before the node is created reads the same number, so several ops share it;
        the one whose name matches the node (IndexBackward0 <- aten::index) wins, else the last
        outermost one (the creator is the last op to see the number).
        """
        ops_of = self.trace.ops
        before = [(tid, i) for tid, i in cands if ops_of[tid].starts[i] < bw_start]
        if not before:
            return None
        key = _node_key(node)
        before.sort(key=lambda c: ops_of[c[0]].starts[c[1]])
        matching = [c for c in before if _node_key(self.names[ops_of[c[0]].names[c[1]]]) == key]
        if matching:
            return matching[-1]
        outer = [c for c in before if ops_of[c[0]].parent[c[1]] < 0]
        return (outer or before)[-1]


def rule_for(att: Attribution, copy_direction: str | None = None, calls: list[str] | None = None) -> str | None:
    """The lint rule for an event: the first op from the outermost in (then the forward op) with one."""
    if att.backward_node:  # in backward, the forward op decides (IndexBackward0's index_put is a mask read)
        for name in (att.forward_op, att.backward_node):
            code = catalog.rule_for_op(name) if name else None
            if code:
                return code
    for name in [*att.chain, att.forward_op] if att.forward_op else att.chain:
        code = catalog.rule_for_op(name, copy_direction)
        if code:
            return code
    if not att.chain and calls:
        for call in calls:
            code = catalog.rule_for_op(None, runtime_call=base_call(call))
            if code:
                return code
    return None


def base_call(name: str) -> str:
    """cudaStreamSynchronize_ptsz / cuMemcpyDtoH_v2 -> the plain API name."""
    return re.sub(r"(_v\d+|_ptsz|_ptds)+$", "", name)
