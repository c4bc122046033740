"""torch.compile's view of a run: graph breaks, recompilations and CUDA-graph skips, each at the
user's `file:line`, from the raw records syncscan.runtime.compile_events collects.

Pure functions over those records (lists of dicts), and over lint findings for the join:
- a graph break's place is the line torch names ("Graph break in user code at FILE:LINE"), or,
  when that is library code (a break inside `torch.nn.utils`), the innermost user frame of its
  user stack, with the library line kept as `library_frame`;
- its reason is torch's own: the break type and its explanation ("Dynamic shape operator: Operator
  `aten.nonzero.default`'s output shape depends on input Tensor data."), and the rule it points to;
- `count` is how many times torch reported it: once per frame traced through it (a break inside a
  called function is met by the caller's frame and again by the callee's) and per recompilation;
- a recompilation is placed at the first line of the recompiled code (for a graph resumed after a
  break, the line it resumes at), with the guard that failed;
- a CUDA-graph skip is placed at the innermost user frame of the stack torch gives ("Found from").
"""

from __future__ import annotations

import re
from collections import Counter

from syncscan.schema import CompileFields, CompileLintHit, CudagraphSkip, GraphBreak, LintCompile, Recompilation
from syncscan.trace.attribution import Frame, is_user_frame

_HEADER = re.compile(r"Graph break in user code at (?P<file>.+?):(?P<line>\d+)\s*$", re.M)
# "Graph Break Reason:" (torch 2.14; "Reason:" in earlier releases), up to the stack torch prints after it
_REASON = re.compile(r"^(?:Graph Break )?Reason: (?P<reason>.*?)(?:\n\s*\n\s*(?:Stack variable source attribution|User "
                     r"code traceback)|\nUser code traceback|\Z)", re.S | re.M)
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')
_GENERIC = re.compile(r"^Encountered graph break when attempting to trace")
_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<func>\w+?)_at_(?P<line>\d+)$")
_SKIP_PREFIX = re.compile(r"^(?:skipping|disabling) cudagraphs (?:for backward )?due to ", re.I)
_FOUND_FROM = re.compile(r"\.?\s*Found from\s*:?", re.I)


def _frames(text: str) -> list[Frame]:
    return [Frame(m["file"], int(m["line"]), m["func"]) for m in _FRAME.finditer(text)]


def _user_stack(payload: str) -> list[Frame]:
    """The frames of the user stack torch prints with the break (outermost first): the section
    after "User code traceback:" (or the whole text before torch's own traceback, in older torch)."""
    start = payload.find("User code traceback:")
    text = payload[start:] if start >= 0 else payload
    end = text.find("Traceback (most recent call last)")
    return _frames(text if end < 0 else text[:end])


def reason_of(block: str) -> str:
    """torch's break type and explanation, on one line: "Dynamic shape operator: Operator
    `aten.nonzero.default`'s output shape depends on input Tensor data." (the generic "Encountered
    graph break when attempting to trace ..." header and the hints dropped)."""
    lines = [ln.strip() for ln in block.strip().splitlines() if ln.strip()]
    lines = [ln for ln in lines if not _GENERIC.match(ln)]
    if not lines:
        return block.strip()[:300]
    head = lines[0].rstrip(":")
    explanation = next((ln[len("Explanation:"):].strip() for ln in lines if ln.startswith("Explanation:")), "")
    return f"{head}: {explanation}" if explanation and explanation not in head else head


def parse_break(payload: str) -> dict | None:
    """One `dynamo_graph_break_reason` payload: {file, line, function, reason, library_frame}, or None
    when it names no place."""
    stack = _user_stack(payload)
    m = _HEADER.search(payload)
    where = Frame(m["file"], int(m["line"]), "") if m else (stack[-1] if stack else None)
    if where is None:
        return None
    r = _REASON.search(payload)
    if r:
        reason = reason_of(r["reason"])
    else:  # older torch: the exception's last line
        tail = [ln for ln in payload.strip().splitlines() if ln.strip()]
        reason = tail[-1].split(": ", 1)[-1].strip() if tail else "graph break"
    library = None
    if not is_user_frame(where):
        user = [f for f in stack if is_user_frame(f)]
        if user:
            library = f"{where.file}:{where.line}"
            where = user[-1]
    function = where.function or next((f.function for f in reversed(stack)
                                       if f.file == where.file and f.line == where.line), "")
    return {"file": where.file, "line": where.line, "function": _plain_function(function), "reason": reason,
            "library_frame": library}


def _plain_function(name: str) -> str:
    """`forward` for dynamo's `torch_dynamo_resume_in_forward_at_58` (the code after a break)."""
    m = _RESUME.match(name or "")
    return m["func"] if m else name


def graph_breaks(records: list[dict]) -> list[GraphBreak]:
    """The breaks of the run, one per (file, line, reason), most reported first:
    {file, line, function, reason, count, frames, rule, library_frame}."""
    from syncscan.rules._compile import rule_for_reason

    counts: Counter = Counter()
    first: dict[tuple, dict] = {}
    frames: dict[tuple, set] = {}
    for rec in records:
        if rec.get("kind") != "graph_break":
            continue
        b = parse_break(rec.get("payload") or "")
        if b is None:
            continue
        key = (b["file"], b["line"], b["reason"])
        counts[key] += 1
        first.setdefault(key, b)
        frames.setdefault(key, set()).add(rec.get("frame_id"))
    out: list[GraphBreak] = []
    for key, n in counts.items():
        b = first[key]
        out.append({"file": b["file"], "line": b["line"], "function": b["function"], "reason": b["reason"],
                    "count": n, "frames": len(frames[key] - {None}) or None, "rule": rule_for_reason(b["reason"]),
                    "library_frame": b["library_frame"], "lint": None})
    out.sort(key=lambda b: (-b["count"], b["file"], b["line"]))
    return out


def recompilations(records: list[dict]) -> list[Recompilation]:
    """Frames compiled again because a guard failed: {file, line, function, reason, count}, at the
    code's first line (for the graph resumed after a break: the line it resumes at)."""
    counts: Counter = Counter()
    first: dict[tuple, dict] = {}
    for rec in records:
        if rec.get("kind") != "frame" or not rec.get("recompile_reason"):
            continue
        reason = re.sub(r"^\d+/\d+: ", "", str(rec["recompile_reason"]).strip())  # "2/0: tensor ..." -> "tensor ..."
        # one entry per guard, whatever sizes it saw ("expected 55, actual 54" / "expected 461, actual 445")
        key = (rec.get("co_filename"), rec.get("co_firstlineno"), re.sub(r"\d+", "N", reason))
        counts[key] += 1
        first.setdefault(key, {**rec, "reason": reason})
    out: list[Recompilation] = []
    for key, n in counts.items():
        rec = first[key]
        m = _RESUME.match(rec.get("co_name") or "")
        out.append({"file": key[0], "line": key[1], "function": m["func"] if m else rec.get("co_name"),
                    "reason": rec["reason"], "count": n, "resumed_after_break": bool(m),
                    "explanation": _explain_recompile(rec["reason"], bool(m))})
    out.sort(key=lambda r: (-r["count"], str(r["file"]), r["line"] or 0))
    return out


def _explain_recompile(reason: str, resumed: bool) -> str | None:
    if "size mismatch" in reason and resumed:
        return ("a tensor handed across the graph break changed size (a data-dependent size): the graph after "
                "the break is compiled again, until torch marks the size dynamic; without the break (the "
                "sync-free rewrite) there is nothing to recompile")
    if "size mismatch" in reason:
        return ("an input's size changed: `torch._dynamo.mark_dynamic(t, dim)` (or `dynamic=True`) compiles "
                "for any size from the start")
    return None


def parse_cudagraph_skip(message: str) -> dict:
    """"skipping cudagraphs due to mutated inputs (1 instances). Found from : File ..., line 59 ..."
    -> {reason: "mutated inputs (1 instances)", file, line, function} (file None when torch gives
    no user frame)."""
    text = message.strip()
    head = _FOUND_FROM.split(text, maxsplit=1)[0].strip().rstrip(".")
    reason = _SKIP_PREFIX.sub("", head.splitlines()[0] if head else text)
    reason = _SKIP_PREFIX.sub("", reason)  # "skipping cudagraphs due to disabling cudagraphs due to ..."
    user = [f for f in _frames(text) if is_user_frame(f)]
    where = user[-1] if user else None
    return {"reason": reason.strip(), "file": where.file if where else None, "line": where.line if where else None,
            "function": _plain_function(where.function) if where else None}


def cudagraph_skips(records: list[dict]) -> list[CudagraphSkip]:
    """Graphs that mode="reduce-overhead" ran without CUDA graphs, one per (reason, place):
    {reason, file, line, function, count}."""
    counts: Counter = Counter()
    first: dict[tuple, dict] = {}
    messages = [r["message"] for r in records if r.get("kind") == "cudagraph_skip" and r.get("message")]
    logged = set(messages)
    # the same skip is also noted in the frame's compilation metrics: counted once
    messages += [r["cudagraph_skip_reason"] for r in records if r.get("kind") == "frame"
                 and r.get("cudagraph_skip_reason") and r["cudagraph_skip_reason"] not in logged]
    for msg in messages:
        s = parse_cudagraph_skip(msg)
        key = (s["reason"], s["file"], s["line"])
        counts[key] += 1
        first.setdefault(key, s)
    out: list[CudagraphSkip] = [{**first[k], "count": n, "lint": None} for k, n in counts.items()]  # type: ignore
    out.sort(key=lambda s: (-s["count"], s["reason"]))
    return out


def summarize(records: list[dict], measured: list[tuple[int, int]] | None = None) -> CompileFields:
    """The torch.compile part of a profile report: {compilations, compiled_in_measured_steps,
    graph_breaks, recompilations, cudagraph_skips}. `compilations`: how many times torch.compile
    compiled a frame (0: it never ran); `compiled_in_measured_steps`: the steps, among the
    `measured` [first, end) ranges, during which it compiled (their times include compiling)."""
    frames = [r for r in records if r.get("kind") == "frame"]
    steps = sorted({r["step"] for r in frames if isinstance(r.get("step"), int)
                    and any(a <= r["step"] < b for a, b in measured or ())})
    return {"compilations": len(frames), "compiled_in_measured_steps": steps,
            "graph_breaks": graph_breaks(records),
            "recompilations": recompilations(records),
            "cudagraph_skips": cudagraph_skips(records)}


def files_of(summary: CompileFields) -> list[str]:
    """The files the summary's entries point to (graph breaks, recompilations, CUDA-graph skips)."""
    entries: list = [*summary["graph_breaks"], *summary["recompilations"], *summary["cudagraph_skips"]]
    return list(dict.fromkeys(e["file"] for e in entries if e.get("file")))


def _seen_compiled(f) -> LintCompile:
    """A finding lint did not know to be compiled (it could not see which code torch.compile is
    given), on a line torch reported: its rule's effect, from the run."""
    from syncscan.lint.compiled import describe

    return describe(f.code, 0, None, {"path": "at run time (lint did not see the torch.compile call)", "line": "",
                                      "how": ""})


def with_lint(summary: CompileFields, findings) -> CompileFields:
    """Join with lint: a copy of `summary` whose graph breaks and CUDA-graph skips have `lint`, the
    findings in the statement of their line (the finding of the rule the reason names first), []
    when lint has none there; recompilations, whose line is where the recompiled code starts,
    have none."""
    from syncscan.join import same_file, statement_span

    def hits(e) -> list[CompileLintHit] | None:
        if not e.get("file") or not e.get("line"):
            return None
        scored = [(same_file(e["file"], f.path), f) for f in findings]
        best = max((sc for sc, _ in scored), default=0)
        in_file = [f for sc, f in scored if sc == best] if best else []
        if not in_file:
            return None
        a, b = statement_span(in_file[0].path, int(e["line"]))
        found = sorted((f for f in in_file if a <= f.line <= b or f.line <= a <= f.end_line),
                       key=lambda f: (f.code != e.get("rule"), f.line, f.column))
        return [{"path": f.path, "line": f.line, "code": f.code, "name": f.name, "suggestion": f.suggestion,
                 "compile": f.compile or _seen_compiled(f)} for f in found]

    return {**summary,
            "graph_breaks": [{**b, "lint": hits(b)} for b in summary["graph_breaks"]],
            "cudagraph_skips": [{**c, "lint": hits(c)} for c in summary["cudagraph_skips"]]}
