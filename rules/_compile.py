"""What `torch.compile` makes of each rule's sync: the table behind the `compile` key of lint
findings in compiled code, and the map from the graph-break reasons torch logs back to rules.

Not a rule (the registry skips files starting with _). Kinds of effect:
- `graph-break`: dynamo cannot trace the host read; it ends the graph before it, runs it eagerly
  and resumes in a new graph (or, where it cannot resume, runs the whole function eagerly);
- `dynamic-shape`: the output's size depends on the data. By default a graph break ("Dynamic
  shape operator"); with `capture_dynamic_output_shape_ops` one graph with a data-dependent size,
  which still waits for the GPU and keeps CUDA graphs off;
- `cudagraph-skip`: traced into the graph, but `mode="reduce-overhead"` cannot use CUDA graphs for
  that graph (a CPU tensor in it, an eager fallback CUDA graphs cannot capture);
- `traced`: no graph break; what the compiled code does instead is in `why`;
- `unverified`: needs a GPU or a process group to check; not claimed either way.

tests/test_compile_effects.py checks the table on the installed torch (2.14 here, CPU): each
`probe` (the body of `def probe(x, i)`, x a float tensor of 64 values, i int64 in [0, 5)) is
compiled with dynamo and must break the graph exactly when its kind says so, and must not once
the dynamo config flag in `captured_by` is set. CUDA-graph reasons come from reading torch 2.14's
inductor (cudagraph_utils.py, lowering.py), not from a run: CUDA graphs need a GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

GRAPH_BREAK = "graph-break"
DYNAMIC_SHAPE = "dynamic-shape"
CUDAGRAPH_SKIP = "cudagraph-skip"
TRACED = "traced"
UNVERIFIED = "unverified"
KINDS = (GRAPH_BREAK, DYNAMIC_SHAPE, CUDAGRAPH_SKIP, TRACED, UNVERIFIED)
BREAKING = (GRAPH_BREAK, DYNAMIC_SHAPE)


@dataclass(frozen=True)
class Effect:
    kind: str
    why: str  # one line: what compile does with it
    options: tuple[str, ...] = ()  # compile-specific options, shown next to the sync-free rewrite
    cudagraphs: str | None = None  # why reduce-overhead gets no CUDA graph for the graph holding it
    captured_by: str | None = None  # the torch._dynamo.config flag that keeps it in the graph
    probe: str | None = None  # body of `def probe(x, i):` showing the effect (see the module doc)
    match: str | None = None  # regex on the finding's source text choosing this variant (None: any)
    when: str | None = None  # that variant in words, for the docs


# -- the options, in the words the findings show ----------------------------------------------
CAPTURE_SCALARS = ("`torch._dynamo.config.capture_scalar_outputs = True` keeps the read in the graph as a "
                   "symbolic number (a GPU still waits for it, and CUDA graphs stay off for that graph)")
CHECK = ("`torch._check(...)` on a captured number (`torch._check(n <= x.shape[0])`) tells the compiler "
         "the bounds it cannot prove where the number sizes a tensor")
CAPTURE_DYNAMIC = ("`torch._dynamo.config.capture_dynamic_output_shape_ops = True` keeps it in one graph with a "
                   "data-dependent size (a GPU still waits for the size, and CUDA graphs stay off for that graph)")
NONZERO_STATIC = ("`torch.nonzero_static(cond, size=k)` when a bound `k` is known: padded to a static shape "
                  "(`fill_value=`), no sync, no graph break, CUDA graphs work")
MARK_DYNAMIC = ("sizes that change from step to step recompile the graph after the break (then torch makes "
                "them dynamic); `torch._dynamo.mark_dynamic(t, dim)` marks an input dynamic from the start")
DEVICE_BRANCH = ("`torch.where(cond, a, b)` (or `torch.cond(pred, true_fn, false_fn)`) keeps both branches "
                 "in the graph")
CPU_TENSOR = ("a CPU tensor in the graph: CUDA graphs skip it (\"cpu device\"); keep the value on the GPU, "
              "or read it after the compiled region")
BOOL_INDEX_PUT = ("`index_put_` with a boolean mask and a tensor value is an eager fallback that CUDA graphs "
                  "cannot capture (a Python number or 0-dim value becomes `masked_fill` and is fine)")
INPUT_WRITE = ("in-place write into the input `{name}`: CUDA graphs skip a graph that mutates its inputs "
               "(\"mutated inputs\"); write into a copy, or return the new value")

_ITEM = Effect(GRAPH_BREAK, "a host read of a tensor value: dynamo ends the graph here and resumes in a new one",
               (CAPTURE_SCALARS, CHECK), captured_by="capture_scalar_outputs",
               probe="return x * x.sum().item()")
_SHAPE = (CAPTURE_DYNAMIC,)


def _dyn(probe: str, *extra: str) -> tuple[Effect, ...]:
    return (Effect(DYNAMIC_SHAPE, "its output size depends on the data: by default a graph break "
                                  "(\"Dynamic shape operator\")", (*extra, *_SHAPE),
                   captured_by="capture_dynamic_output_shape_ops", probe=probe),)


def _unverified(what: str) -> tuple[Effect, ...]:
    return (Effect(UNVERIFIED, f"not checked under torch.compile ({what})"),)


EFFECTS: dict[str, tuple[Effect, ...]] = {
    "SYN101": (_ITEM,),
    "SYN102": (Effect(GRAPH_BREAK, "`.tolist()` of a tensor: dynamo ends the graph here "
                                   "(\"Tensor.tolist() with non-integer tensor\")",
                      ("keep the values in a tensor inside the compiled code; convert after it",),
                      probe="return x + len(x.tolist())"),),
    "SYN103": (Effect(GRAPH_BREAK, "`math.*` of a tensor is a host read that dynamo cannot capture, even with "
                                   "capture_scalar_outputs", ("use the `torch.*` function on the tensor",),
                      probe="import math\nreturn x * math.sqrt(x.abs().sum())", match=r"^(math|numpy|np)\.",
                      when="`math.*` / `numpy.*` of a tensor"),
               Effect(GRAPH_BREAK, _ITEM.why, _ITEM.options, captured_by="capture_scalar_outputs",
                      probe="return x * float(x.sum())")),
    "SYN104": (Effect(GRAPH_BREAK, "a branch on a tensor value: dynamo ends the graph here "
                                   "(\"Data-dependent branching\"), whatever the config", (DEVICE_BRANCH,),
                      probe="if x.sum() > 0:\n    return x + 1\nreturn x - 1"),),
    "SYN105": (Effect(GRAPH_BREAK, "printing or formatting a tensor: dynamo ends the graph here (`print`, "
                                   "`str`, `repr`, logging), or runs the whole function eagerly",
                      ("log outside the compiled function, or keep the value and print it every N steps",),
                      probe="print(x)\nreturn x + 1"),),
    "SYN106": (Effect(GRAPH_BREAK, "`any` / `all` over tensors branch on their truth value "
                                   "(\"Data-dependent branching\")", (DEVICE_BRANCH,),
                      probe="return x + 1 if any(x > 3) else x", match=r"^(any|all)\(", when="`any` / `all`"),
               Effect(TRACED, "`max` / `min` of tensors and numbers are traced as tensor ops: no host read in "
                              "compiled code", probe="return x * max(x.sum(), x.mean())")),
    "SYN107": (Effect(GRAPH_BREAK, "`torch.equal` / `allclose` give a Python bool: dynamo ends the graph here "
                                   "(\"Data dependent operator\")",
                      ("compare on the device: `(a == b).all()`, `torch.isclose(a, b).all()`, and branch with "
                       "`torch.where`",), probe="return x + torch.equal(x, x * 1.0)"),),
    "SYN108": (Effect(GRAPH_BREAK, "a tensor used as a size is read on the host: a graph break, or (a slice "
                                   "bound) the whole function runs eagerly",
                      (CAPTURE_SCALARS, CHECK, MARK_DYNAMIC), captured_by="capture_scalar_outputs",
                      probe="return torch.zeros((x > 0).sum()) + 1"),),
    "SYN109": (Effect(GRAPH_BREAK, "a tensor in a `Scalar` argument (`alpha=`, `value=`) is read with `.item()`: "
                                   "dynamo ends the graph here (aten._local_scalar_dense)",
                      (CAPTURE_SCALARS,), captured_by="capture_scalar_outputs",
                      probe="return x.add(x, alpha=x.sum()) + 1"),),
    "SYN201": (Effect(CUDAGRAPH_SKIP, "the copy to the host is traced (no graph break), but it still waits for "
                                      "the GPU", ("move the host read after the compiled region",),
                      cudagraphs=CPU_TENSOR, probe="return x.cpu() + 1"),),
    "SYN202": (Effect(TRACED, "host data written in the code becomes a constant of the graph (no graph break)",
                      probe="return x + torch.tensor([1.0, 2.0]).sum()"),),
    "SYN203": (Effect(TRACED, "a tensor of 0-dim tensors is traced as a stack on the device: no host read in "
                              "compiled code", probe="return torch.tensor([x.sum(), x.mean()]) + 1"),),
    "SYN204": (Effect(CUDAGRAPH_SKIP, "the copy is traced (no graph break); the host tensor is an input of the "
                                      "graph", ("pass GPU tensors in: copy (`non_blocking=True`, pinned) before "
                                                "the compiled call",),
                      cudagraphs=CPU_TENSOR, probe="return x.to('cpu') + 1"),),
    "SYN205": _unverified("a DataLoader is built outside compiled code"),
    "SYN206": (Effect(TRACED, "a literal list index is a constant of the graph (no graph break)",
                      probe="return x[[1, 2, 3]] + 1", match=r"\[\s*\[", when="a literal list index"),
               Effect(CUDAGRAPH_SKIP, "traced (no graph break); the host index tensor is an input of the graph",
                      ("make the index on the GPU",), cudagraphs=CPU_TENSOR,
                      probe="return x[torch.tensor([1, 2, 3])] + 1")),
    "SYN207": (Effect(TRACED, "the value is written inside the graph (no graph break, no copy of the number)",
                      probe="x = x.clone()\nx[i[:2]] = 0.0\nreturn x * 2"),),
    "SYN208": (Effect(GRAPH_BREAK, "`ctc_loss` has no compiled form for its data-dependent sizes: a graph break "
                                   "(\"Dynamic shape operator\"), with or without capture_dynamic_output_shape_ops",
                      ("compile the model without the loss (`torch.compiler.disable` on the loss function)",),
                      probe="import torch.nn.functional as F\nlp = x.view(4, 4, 4).log_softmax(2)\n"
                            "return F.ctc_loss(lp, torch.randint(1, 4, (4, 2)), torch.full((4,), 4), "
                            "torch.full((4,), 2))"),),
    "SYN209": _unverified("a checkpoint is saved outside the compiled model"),
    "SYN301": _dyn("return torch.nonzero(x > 0).sum()", NONZERO_STATIC),
    "SYN302": _dyn("return x[x > 0].sum()",
                   "keep the full shape in the graph: `torch.where(m, x, 0)`, `x.masked_fill(~m, v)`"),
    "SYN303": (Effect(CUDAGRAPH_SKIP, "a boolean-mask write is traced (no graph break of its own; a value read "
                                      "through a mask breaks the graph at that read)",
                      ("`x.copy_(torch.where(m, t, x))` or `torch.where(m, t, x)`: no fallback, CUDA graphs work",),
                      cudagraphs=BOOL_INDEX_PUT, probe="x = x.clone()\nx[x > 0] = x.mean()\nreturn x"),),
    "SYN304": _dyn("return torch.masked_select(x, x > 0).sum()"),
    "SYN305": _dyn("return torch.unique(i).sum()"),
    "SYN306": _dyn("m = i[:16] > 0\nreturn torch.nn.functional.cross_entropy(x.view(16, 4)[m], i[:16][m] % 4)",
                   "`F.cross_entropy(logits, target.masked_fill(~m, -100), ignore_index=-100)` on the full "
                   "tensors: one graph, no sync"),
    "SYN307": _dyn("return torch.bincount(i, minlength=5).sum()",
                   "`torch.zeros(n).scatter_add_(0, i, torch.ones_like(i, dtype=torch.float))` with a known `n`: "
                   "a static shape (bincount breaks even with `minlength`)"),
    "SYN308": (Effect(TRACED, "compiled, the 0-dim fill value stays on the device: no host read",
                      probe="return x.masked_fill(x > 0, x.sum())"),),
    "SYN309": _dyn("import torchvision\nb = torch.rand(8, 4)\nb[:, 2:] += b[:, :2]\n"
                   "return torchvision.ops.nms(b, torch.rand(8), 0.5).sum() + x"),
    "SYN401": _dyn("return torch.repeat_interleave(x, i.abs()).sum()",
                   "`output_size=` (the total, when known) keeps a static shape: no sync, no graph break"),
    "SYN402": (Effect(GRAPH_BREAK, "`one_hot` without `num_classes` reads the largest label on the host: a graph "
                                   "break, whatever the config", ("pass `num_classes=`: traced, no sync",),
                      probe="return torch.nn.functional.one_hot(i).sum()"),),
    "SYN403": (Effect(TRACED, "traced (no graph break on torch 2.14)", probe="return torch.histc(x, bins=4)"),),
    "SYN404": (Effect(TRACED, "traced (no graph break on torch 2.14)",
                      probe="a = x.view(8, 8)\nreturn torch.linalg.cholesky(a @ a.T + 8 * torch.eye(8))"),),
    "SYN405": (Effect(TRACED, "traced (no graph break on torch 2.14)",
                      probe="return torch.distributions.Normal(x, x.abs() + 1).log_prob(x)"),),
    "SYN410": (Effect(TRACED, "traced (no graph break on torch 2.14)",
                      probe="a = x.view(8, 8)\nreturn torch.linalg.eigh(a @ a.T).eigenvalues"),),
    "SYN411": (Effect(TRACED, "traced (no graph break on torch 2.14)",
                      probe="return torch.quantile(x, x.abs().clamp(0, 1)[:2])"),),
    "SYN409": (Effect(TRACED, "traced (no graph break on torch 2.14)",
                      probe="return torch.normal(x, x.abs() + 1)"),),
    "SYN406": (Effect(GRAPH_BREAK, "the non-finite check branches on the norm (\"Data-dependent branching\")",
                      ("`error_if_nonfinite=False`, and check the returned norm on the device",),
                      probe="return torch.nn.utils.get_total_norm([x], error_if_nonfinite=True)"),),
    "SYN407": _unverified("grouped_mm needs a GPU"),
    "SYN412": _unverified("a TorchScript function called from compiled code"),
    "SYN601": _unverified("it runs in DataLoader workers, on the host, outside any compiled model"),
    "SYN408": _unverified("GradScaler.step on a CUDA optimizer needs a GPU (the step usually runs outside the compiled model)"),
    "SYN501": _unverified("needs a GPU"),
    "SYN502": _unverified("needs a GPU"),
    "SYN503": _unverified("needs a GPU"),
    "SYN504": _unverified("needs a process group"),
}


# rule groups about comments, not code (SYN9: suppression comments): nothing for torch.compile to trace
NOT_CODE = ("SYN9",)


def effect_for(code: str, text: str) -> Effect | None:
    """The entry of rule `code` for a finding whose source text is `text`: the first variant whose
    `match` finds the text, else the one without `match`."""
    variants = EFFECTS.get(code, ())
    for e in variants:
        if e.match is not None and re.search(e.match, text):
            return e
    return next((e for e in variants if e.match is None), None)


def variant_index(code: str, text: str) -> int | None:
    """Which variant of rule `code` the finding's text selects (an index into EFFECTS[code])."""
    e = effect_for(code, text)
    return None if e is None else EFFECTS[code].index(e)


# -- graph-break reasons torch logs -> the rule whose finding explains them ----------------------
# (checked against torch 2.14's messages; the aten op of a "Dynamic shape operator" break goes
# through syncscan.catalog's op table first)
BREAK_REASONS: tuple[tuple[str, str], ...] = (
    (r"Tensor\.item\(\)", "SYN101"),
    (r"Tensor\.tolist\(\)", "SYN102"),
    (r"Data-dependent branching|generic_jump", "SYN104"),
    (r"Failed to trace builtin operator|repr\(\) on tensor|logging\.Logger", "SYN105"),
    (r"Data dependent operator", "SYN107"),
    (r"one_hot", "SYN402"),
    (r"Could not guard on data-dependent expression", "SYN108"),
)
_ATEN_OP = re.compile(r"aten\.(\w+?)(?:\.\w+)?`?(?:'s|\b)")


def rule_for_reason(reason: str) -> str | None:
    """The rule a graph break's reason points to: by its aten op (`aten.nonzero.default`), else by
    the words torch uses for host reads."""
    from syncscan.catalog import rule_for_op

    m = _ATEN_OP.search(reason)
    if m:
        code = rule_for_op("aten::" + m.group(1))
        if code:
            return code
    for pattern, code in BREAK_REASONS:
        if re.search(pattern, reason):
            return code
    return None
