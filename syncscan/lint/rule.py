"""What a rule is: a class with its documentation, its examples (which are also its tests), and
visitor methods over `ast` nodes that report findings through the lint context.

Modelled on Fixit 2 (examples are tests and docs) and ruff (what / why / example / use instead /
fix safety). A rule subscribes to node types by defining `visit_<NodeType>(self, node, ctx)`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from syncscan.lint.finding import Edit as Edit  # (defined there, imported from here by the rules)
from syncscan.lint.finding import Finding as Finding
from syncscan.lint.finding import Fix


FIX_SAFETIES = ("none", "safe", "unsafe")
# prefilter words that show torch code or a training step (for `Rule.triggers`: rules that fire
# only on values known to be tensors can fire in any file holding one of these)
TORCH_CODE = ("torch", "ensor", "forward", "backward", "loss", "cuda", "DataLoader", "step(")  # "ensor": [Tt]ensor


@dataclass(frozen=True)
class Bad:
    """An example the rule must flag: exactly `count` findings of the rule, the first at `line`
    (1-based within the snippet). `fixed`, when given, is the snippet after the rule's fix."""

    code: str
    line: int | None = None
    count: int = 1
    fixed: str | None = None
    unsafe: bool = False  # the fix in `fixed` needs --unsafe-fixes
    suggests: str | None = None  # text the first finding's suggestion must contain (the advice fits this code)


@dataclass(frozen=True)
class Good:
    """An example the rule must not flag."""

    code: str


@dataclass(frozen=True)
class Footprint:
    """What a rule's rewrite still runs, per instance of the op that synced: the replay's model of
    the rewrite (syncscan.trace.estimate). `ops`: forward ops that launch GPU work (each at the
    trace's median op cost); `backward_nodes`: backward nodes (at the median node cost);
    `keeps_gpu_work`: the synced op's GPU work stays (a pinned copy is still a copy);
    `keeps_host_time`: its host time stays, less its waits (the same op without the sync)."""

    ops: int = 0
    backward_nodes: int = 0
    keeps_gpu_work: bool = False
    keeps_host_time: bool = False


class Rule:
    """Base class of every rule. Subclasses set the documentation attributes and visitor methods."""

    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case
    summary: ClassVar[str]  # what it flags, one line
    why: ClassVar[str]  # why it makes the host wait
    rewrite: ClassVar[str]  # the sync-free way, in general
    fix_safety: ClassVar[str] = "none"  # the strongest fix it offers: none / safe / unsafe
    fix_assumption: ClassVar[str] = ""  # what an unsafe fix assumes
    bad: ClassVar[tuple[Bad, ...]] = ()
    good: ClassVar[tuple[Good, ...]] = ()
    # prefilter: words of which at least one appears in any file where this rule can fire (a file
    # with no rule's words is not parsed: syncscan.lint.registry.trigger_words); each rule's bad
    # examples must contain one (tests/test_catalog.py)
    triggers: ClassVar[tuple[str, ...]] = ()
    # -- the runtime side: syncscan/catalog_data.py is generated from these (syncscan.lint.catalog_gen)
    # profiler op names whose syncs this rule explains (each op belongs to one rule); () when the
    # rule's syncs show under another rule's ops (int(t) runs aten::item, SYN101's)
    ops: ClassVar[tuple[str, ...] | None] = None
    copy_directions: ClassVar[tuple[str, ...]] = ()  # "DtoH"/"HtoD": a sync inside a copy op of that direction
    runtime_calls: ClassVar[tuple[str, ...]] = ()  # CUDA calls made outside any op (cudaDeviceSynchronize)
    # torch's Python functions whose calls hold the host until other processes arrive
    # (torch.distributed.barrier): timed from the Python stacks of a multi-rank run's traces
    host_functions: ClassVar[tuple[str, ...]] = ()
    rewrite_hint: ClassVar[str] = ""  # the rewrite in one line, shown beside each runtime site
    footprint: ClassVar[Footprint | None] = None  # what the rewrite still runs, for the replay
    # findings run every step wherever they are written (per-sample work in a Dataset): shown as hot
    per_step: ClassVar[bool] = False
    # `applies(file) -> bool`, asked once per file (a FileFacts): False when the file holds nothing the rule reads,
    # so its handlers are left out of that file's walk (a rule that looks at every call but fires on few files)
    applies: ClassVar[Callable[[object], bool] | None] = None

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "code" in cls.__dict__:
            assert cls.fix_safety in FIX_SAFETIES, cls
            cls.handlers = {n[6:]: getattr(cls, n) for n in dir(cls) if n.startswith("visit_")}

    def report(self, ctx, node: ast.AST, message: str, suggestion: str = "", fix: Fix | None = None,
               end_node: ast.AST | None = None, confidence: str | None = None) -> None:
        ctx.report(self, node, message, suggestion, fix, end_node, confidence)
